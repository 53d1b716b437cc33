// segment_matmul_k bf16 -> f32, dw [G, N, K], accumulate (dw[g] += ...; an
// empty segment leaves dw[g] unchanged); every size dynamic.
func.func @kragged_nk_bf16_f32_acc(%dy: memref<?x?xbf16>, %x: memref<?x?xbf16>,
                                   %indptr: memref<?xi32>, %dw: memref<?x?x?xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x?xbf16>, memref<?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%dw : memref<?x?x?xf32>) {accumulate}
  return
}
