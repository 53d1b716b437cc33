// GPU-check kernel: ping-pong consumers (two warpgroups on alternate 64x256
// tiles, the turns passed by named barriers), along m, staged epilogue.
func.func @seg_nk_bf16_pingpong(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                                %indptr: memref<?xi32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xbf16>)
      {config = #ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64,
                                   stages = 4, raster = along_m, pingpong = true>}
  return
}
