// segment_matmul, weights [G, N, K], bf16 -> bf16, i32 seg_indptr.
func.func @seg_nk_bf16(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                       %indptr: memref<?xi32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xbf16>)
  return
}
