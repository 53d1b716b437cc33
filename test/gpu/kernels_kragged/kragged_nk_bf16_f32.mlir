// segment_matmul_k (weight gradients): dw[g] = dy[seg]ᵀ · x[seg], bf16 -> f32,
// dw [G, N, K]; every size dynamic. The main kernel: DeepGEMM's k-grouped
// shapes in check_kragged.py and its benchmark.
func.func @kragged_nk_bf16_f32(%dy: memref<?x?xbf16>, %x: memref<?x?xbf16>,
                               %indptr: memref<?xi32>, %dw: memref<?x?x?xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x?xbf16>, memref<?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%dw : memref<?x?x?xf32>)
  return
}
