func.func @batched_nk_bf16(%x: memref<?x?x?xbf16>, %w: memref<?x?x?xbf16>,
                           %y: memref<?x?x?xbf16>) {
  ggemm.batched_matmul ins(%x, %w : memref<?x?x?xbf16>, memref<?x?x?xbf16>)
      outs(%y : memref<?x?x?xbf16>)
  return
}
