// segment_matmul_k bf16 -> bf16 (f32 sum, rounded once), dw [G, N, K];
// every size dynamic.
func.func @kragged_nk_bf16_bf16(%dy: memref<?x?xbf16>, %x: memref<?x?xbf16>,
                                %indptr: memref<?xi32>, %dw: memref<?x?x?xbf16>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x?xbf16>, memref<?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%dw : memref<?x?x?xbf16>)
  return
}
