// Benchmark kernel: the static-shape MoE up-projection of
// examples/segment_matmul_bf16.mlir (G = 8, N = 4096, K = 7168, config
// chosen by ggemm-select-config), for the shapes of that size.
func.func @bench_static_n4096_k7168(%x: memref<?x7168xbf16>, %w: memref<8x4096x7168xbf16>,
                                    %indptr: memref<9xi32>, %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
      segments(%indptr : memref<9xi32>) outs(%y : memref<?x4096xbf16>)
  return
}
