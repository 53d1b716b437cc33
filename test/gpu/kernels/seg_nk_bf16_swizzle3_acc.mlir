// GPU-check kernel: segments with 128x128 tiles walked along m in bands of
// 3 column tiles (swizzle = 3): with random N the last band is often
// narrower; accumulating into y, so a tile mapped twice adds twice.
func.func @seg_nk_bf16_swizzle3_acc(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                                    %indptr: memref<?xi32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xbf16>)
      {epilogue = #ggemm.epilogue<accumulate = true>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64,
                                   stages = 4, raster = along_m, swizzle = 3>}
  return
}
