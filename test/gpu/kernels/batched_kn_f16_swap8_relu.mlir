// Swap-AB batched_matmul, fp16 weights [B, K, N], relu, 8-row token tiles.
func.func @batched_kn_f16_swap8_relu(%x: memref<?x?x?xf16>, %w: memref<?x?x?xf16>,
                                     %y: memref<?x?x?xf16>) {
  ggemm.batched_matmul ins(%x, %w : memref<?x?x?xf16>, memref<?x?x?xf16>)
      outs(%y : memref<?x?x?xf16>) {weight_layout = #ggemm.weight_layout<kn>,
       epilogue = #ggemm.epilogue<activation = relu>,
       config = #ggemm.tile_config<block_m = 8, block_n = 64, block_k = 64,
                                   stages = 6, consumer_warpgroups = 1, swap_ab = true>}
  return
}
