// Swap-AB segment_matmul with 64-row token tiles (mid-size groups), i64
// seg_indptr.
func.func @seg_nk_bf16_swap64_i64(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                                  %indptr: memref<?xi64>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi64>) outs(%y : memref<?x?xbf16>)
      {config = #ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64,
                                   stages = 6, consumer_warpgroups = 2, swap_ab = true>}
  return
}
