// FP8 K-ragged weight gradients, DeepGEMM's k_grouped_fp8_gemm_nt_contiguous layout: dy [N, T] and x [K, T] e4m3 with 1x128 scales along the tokens (MN-major), dw [G, N, K] f32; every size dynamic.
func.func @kragged_fp8_nk_f32(%dy: memref<?x?xf8E4M3FN>, %x: memref<?x?xf8E4M3FN>,
    %indptr: memref<?xi32>,
    %dys: memref<?x?xf32, strided<[1, ?]>>, %xs: memref<?x?xf32, strided<[1, ?]>>,
    %dw: memref<?x?x?xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x?xf8E4M3FN>, memref<?x?xf8E4M3FN>)
      segments(%indptr : memref<?xi32>)
      scales(%dys, %xs : memref<?x?xf32, strided<[1, ?]>>, memref<?x?xf32, strided<[1, ?]>>)
      outs(%dw : memref<?x?x?xf32>) {transposed}
  return
}
