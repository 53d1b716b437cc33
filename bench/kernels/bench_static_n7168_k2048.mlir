// Benchmark kernel: a static-shape G = 8, N = 7168, K = 2048 segment_matmul
// (config chosen by ggemm-select-config), the short-K prefill shape.
func.func @bench_static_n7168_k2048(%x: memref<?x2048xbf16>, %w: memref<8x7168x2048xbf16>,
                                    %indptr: memref<9xi32>, %y: memref<?x7168xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x2048xbf16>, memref<8x7168x2048xbf16>)
      segments(%indptr : memref<9xi32>) outs(%y : memref<?x7168xbf16>)
  return
}
