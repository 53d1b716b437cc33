// A Mixture-of-Experts layer's grouped GEMM: 8 experts, tokens routed into
// ragged row segments (seg_indptr lives on the device), bf16 in, bf16 out.
//
//   gemm-opt examples/segment_matmul_bf16.mlir \
//     --ggemm-to-ptx="chip=sm_90a bundle-dir=out"
//
// writes out/moe_up_kernel.{ptx,json}: the kernel and its launch manifest.
func.func @moe_up(%x: memref<?x7168xbf16>, %w: memref<8x4096x7168xbf16>,
                  %seg_indptr: memref<9xi32>, %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
      segments(%seg_indptr : memref<9xi32>)
      outs(%y : memref<?x4096xbf16>)
  return
}
