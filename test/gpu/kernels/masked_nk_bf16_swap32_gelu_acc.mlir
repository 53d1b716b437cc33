// Swap-AB masked_matmul, 32-row token tiles, gelu, accumulate into y.
func.func @masked_nk_bf16_swap32_gelu_acc(%x: memref<?x?x?xbf16>, %w: memref<?x?x?xbf16>,
                                          %m: memref<?xi32>, %y: memref<?x?x?xbf16>) {
  ggemm.masked_matmul ins(%x, %w : memref<?x?x?xbf16>, memref<?x?x?xbf16>)
      masked_m(%m : memref<?xi32>) outs(%y : memref<?x?x?xbf16>)
      {epilogue = #ggemm.epilogue<activation = gelu, accumulate = true>,
       config = #ggemm.tile_config<block_m = 32, block_n = 128, block_k = 64,
                                   stages = 6, consumer_warpgroups = 2, swap_ab = true>}
  return
}
