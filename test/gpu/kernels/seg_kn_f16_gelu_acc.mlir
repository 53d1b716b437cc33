// segment_matmul, weights [G, K, N], fp16 -> f16, gelu, accumulate into y.
func.func @seg_kn_f16_gelu_acc(%x: memref<?x?xf16>, %w: memref<?x?x?xf16>,
                               %indptr: memref<?xi32>, %y: memref<?x?xf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xf16>, memref<?x?x?xf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xf16>)
      {weight_layout = #ggemm.weight_layout<kn>,
       epilogue = #ggemm.epilogue<activation = gelu, accumulate = true>}
  return
}
