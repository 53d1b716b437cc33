// FP8 K-ragged weight gradients, dw [G, N, K] bf16 (the f32 sum rounded once); every size dynamic.
func.func @kragged_fp8_nk_bf16(%dy: memref<?x?xf8E4M3FN>, %x: memref<?x?xf8E4M3FN>,
    %indptr: memref<?xi32>,
    %dys: memref<?x?xf32, strided<[1, ?]>>, %xs: memref<?x?xf32, strided<[1, ?]>>,
    %dw: memref<?x?x?xbf16>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x?xf8E4M3FN>, memref<?x?xf8E4M3FN>)
      segments(%indptr : memref<?xi32>)
      scales(%dys, %xs : memref<?x?xf32, strided<[1, ?]>>, memref<?x?xf32, strided<[1, ?]>>)
      outs(%dw : memref<?x?x?xbf16>) {transposed}
  return
}
