// FP8 K-ragged weight gradients accumulated into an f32 dw [G, N, K] (dw[g] += ...), i64 offsets; every size dynamic.
func.func @kragged_fp8_nk_f32_acc(%dy: memref<?x?xf8E4M3FN>, %x: memref<?x?xf8E4M3FN>,
    %indptr: memref<?xi64>,
    %dys: memref<?x?xf32, strided<[1, ?]>>, %xs: memref<?x?xf32, strided<[1, ?]>>,
    %dw: memref<?x?x?xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x?xf8E4M3FN>, memref<?x?xf8E4M3FN>)
      segments(%indptr : memref<?xi64>)
      scales(%dys, %xs : memref<?x?xf32, strided<[1, ?]>>, memref<?x?xf32, strided<[1, ?]>>)
      outs(%dw : memref<?x?x?xf32>) {transposed, accumulate}
  return
}
