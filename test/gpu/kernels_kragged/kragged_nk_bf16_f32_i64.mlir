// segment_matmul_k bf16 -> f32, dw [G, N, K], i64 segment offsets; every
// size dynamic.
func.func @kragged_nk_bf16_f32_i64(%dy: memref<?x?xbf16>, %x: memref<?x?xbf16>,
                                   %indptr: memref<?xi64>, %dw: memref<?x?x?xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x?xbf16>, memref<?x?xbf16>)
      segments(%indptr : memref<?xi64>) outs(%dw : memref<?x?x?xf32>)
  return
}
