// GPU-check kernel: ping-pong consumers on 128x128 tiles (each warpgroup two
// m64 row blocks), along m, with bias, gelu and a per-row scale.
func.func @seg_nk_bf16_pingpong_m128_bias_gelu_rs(%x: memref<?x?xbf16>,
    %w: memref<?x?x?xbf16>, %indptr: memref<?xi32>, %bias: memref<?x?xf32>,
    %rs: memref<?xf32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) bias(%bias : memref<?x?xf32>)
      row_scale(%rs : memref<?xf32>) outs(%y : memref<?x?xbf16>)
      {epilogue = #ggemm.epilogue<activation = gelu>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64,
                                   stages = 6, raster = along_m, pingpong = true>}
  return
}
