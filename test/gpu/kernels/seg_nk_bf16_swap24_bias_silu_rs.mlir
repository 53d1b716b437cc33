// Swap-AB segment_matmul (24-row token tiles, 128 weight rows in wgmma's M
// over two consumer warpgroups) with bias, silu and a per-row scale.
func.func @seg_nk_bf16_swap24_bias_silu_rs(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
    %indptr: memref<?xi32>, %bias: memref<?x?xf32>, %rs: memref<?xf32>,
    %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) bias(%bias : memref<?x?xf32>)
      row_scale(%rs : memref<?xf32>) outs(%y : memref<?x?xbf16>)
      {epilogue = #ggemm.epilogue<activation = silu>,
       config = #ggemm.tile_config<block_m = 24, block_n = 128, block_k = 64,
                                   stages = 6, consumer_warpgroups = 2, swap_ab = true>}
  return
}
