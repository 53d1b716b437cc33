// segment_matmul, weights [Gw, K, N], weight_indices, i64 seg_indptr.
func.func @seg_kn_bf16_idx(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                           %indptr: memref<?xi64>, %idx: memref<?xi32>,
                           %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi64>) weight_indices(%idx : memref<?xi32>)
      outs(%y : memref<?x?xbf16>) {weight_layout = #ggemm.weight_layout<kn>}
  return
}
