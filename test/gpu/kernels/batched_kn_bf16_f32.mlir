func.func @batched_kn_bf16_f32(%x: memref<?x?x?xbf16>, %w: memref<?x?x?xbf16>,
                               %y: memref<?x?x?xf32>) {
  ggemm.batched_matmul ins(%x, %w : memref<?x?x?xbf16>, memref<?x?x?xbf16>)
      outs(%y : memref<?x?x?xf32>) {weight_layout = #ggemm.weight_layout<kn>}
  return
}
