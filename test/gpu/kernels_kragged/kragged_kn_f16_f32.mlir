// segment_matmul_k f16 -> f32 with dw [G, K, N] (weight_layout kn:
// dw[g] = x[seg]ᵀ · dy[seg]); every size dynamic.
func.func @kragged_kn_f16_f32(%dy: memref<?x?xf16>, %x: memref<?x?xf16>,
                              %indptr: memref<?xi32>, %dw: memref<?x?x?xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x?xf16>, memref<?x?xf16>)
      segments(%indptr : memref<?xi32>) outs(%dw : memref<?x?x?xf32>)
      {weight_layout = #ggemm.weight_layout<kn>}
  return
}
