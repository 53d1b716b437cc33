// GPU-check kernel: ping-pong consumers on masked groups, [K, N] weights,
// 64x128 tiles, f32 output accumulated into y, gelu.
func.func @masked_kn_f16_pingpong_f32_gelu_acc(%x: memref<?x?x?xf16>,
    %w: memref<?x?x?xf16>, %counts: memref<?xi32>, %y: memref<?x?x?xf32>) {
  ggemm.masked_matmul ins(%x, %w : memref<?x?x?xf16>, memref<?x?x?xf16>)
      masked_m(%counts : memref<?xi32>) outs(%y : memref<?x?x?xf32>)
      {weight_layout = #ggemm.weight_layout<kn>,
       epilogue = #ggemm.epilogue<activation = gelu, accumulate = true>,
       config = #ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64,
                                   stages = 6, pingpong = true>}
  return
}
