// segment_matmul with a 64x64 tile, one consumer warpgroup, relu, f32 out,
// raster along m.
func.func @seg_nk_bf16_m64_relu(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                                %indptr: memref<?xi32>, %y: memref<?x?xf32>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xf32>)
      {epilogue = #ggemm.epilogue<activation = relu>,
       config = #ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64,
                                   stages = 4, consumer_warpgroups = 1,
                                   raster = along_m>}
  return
}
