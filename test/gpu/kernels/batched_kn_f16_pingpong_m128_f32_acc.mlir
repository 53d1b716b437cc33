// GPU-check kernel: ping-pong consumers on 128x128 tiles of a batched
// matmul, [K, N] weights, f32 output accumulated into y.
func.func @batched_kn_f16_pingpong_m128_f32_acc(%x: memref<?x?x?xf16>,
    %w: memref<?x?x?xf16>, %y: memref<?x?x?xf32>) {
  ggemm.batched_matmul ins(%x, %w : memref<?x?x?xf16>, memref<?x?x?xf16>)
      outs(%y : memref<?x?x?xf32>)
      {weight_layout = #ggemm.weight_layout<kn>,
       epilogue = #ggemm.epilogue<accumulate = true>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64,
                                   stages = 6, pingpong = true>}
  return
}
