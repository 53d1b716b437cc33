// K-ragged weight gradients (ggemm.segment_matmul_k) end to end: the CPU
// pipeline lowers them to the LLVM dialect (test/Execution/kragged_* run
// them); the PTX pipeline stops at ggemm-warp-specialize, which says the
// GPU lowering is not written yet, naming the op.
// RUN: gemm-opt %s --ggemm-to-cpu | FileCheck %s --check-prefix=CPU
// RUN: not gemm-opt %s --ggemm-to-ptx="chip=sm_90a" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTX

// CPU-LABEL: llvm.func @wgrad(
// CPU-NOT: {{(ggemm|scf|memref|affine|arith|math|cf|func)\.}}
// CPU-NOT: unrealized_conversion_cast

// PTX: error: 'ggemm.segment_bounds' op belongs to a K-ragged tile program (ggemm.segment_matmul_k), which is not lowered to the GPU yet; run it with ggemm-to-cpu
func.func @wgrad(%dy: memref<?x4096xbf16>, %x: memref<?x7168xbf16>,
                 %indptr: memref<9xi32>, %dw: memref<8x4096x7168xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x4096xbf16>, memref<?x7168xbf16>)
      segments(%indptr : memref<9xi32>) outs(%dw : memref<8x4096x7168xf32>)
      {accumulate}
  return
}
