// segment_matmul with bias, silu and per-row (routing) scale.
func.func @seg_nk_bf16_bias_silu_rs(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
    %indptr: memref<?xi32>, %bias: memref<?x?xf32>, %rs: memref<?xf32>,
    %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) bias(%bias : memref<?x?xf32>)
      row_scale(%rs : memref<?xf32>) outs(%y : memref<?x?xbf16>)
      {epilogue = #ggemm.epilogue<activation = silu>}
  return
}
