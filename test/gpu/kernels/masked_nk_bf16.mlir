func.func @masked_nk_bf16(%x: memref<?x?x?xbf16>, %w: memref<?x?x?xbf16>,
                          %m: memref<?xi32>, %y: memref<?x?x?xbf16>) {
  ggemm.masked_matmul ins(%x, %w : memref<?x?x?xbf16>, memref<?x?x?xbf16>)
      masked_m(%m : memref<?xi32>) outs(%y : memref<?x?x?xbf16>)
  return
}
