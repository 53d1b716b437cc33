// K-ragged weight gradients of bf16 dy and x given transposed (dy [N, T],
// x [K, T], k_major tiles, no scales), dw [G, N, K] f32; every size
// dynamic. Its K blocks are 64-token aligned and masked at both ends of a
// segment (a TMA box may not start at an unaligned token).
func.func @kragged_t_nk_bf16_f32(%dy: memref<?x?xbf16>, %x: memref<?x?xbf16>,
                                 %indptr: memref<?xi32>, %dw: memref<?x?x?xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x?xbf16>, memref<?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%dw : memref<?x?x?xf32>)
      {transposed}
  return
}
