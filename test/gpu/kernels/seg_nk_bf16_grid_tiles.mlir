// segment_matmul as seg_nk_bf16, scheduled one CTA per tile
// (ggemm-persistent-schedule grid=tiles): the runtime launches the
// host-side tile bound and the CTAs past the real tile count exit.
// ggemm-to-ptx-options: grid=tiles
func.func @seg_nk_bf16_grid_tiles(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                                  %indptr: memref<?xi32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xbf16>)
  return
}
