// segment_matmul, fp16 in, f32 out, weight_indices.
func.func @seg_nk_f16_f32_idx(%x: memref<?x?xf16>, %w: memref<?x?x?xf16>,
                              %indptr: memref<?xi32>, %idx: memref<?xi32>,
                              %y: memref<?x?xf32>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xf16>, memref<?x?x?xf16>)
      segments(%indptr : memref<?xi32>) weight_indices(%idx : memref<?xi32>)
      outs(%y : memref<?x?xf32>)
  return
}
