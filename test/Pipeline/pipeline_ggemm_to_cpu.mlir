// End to end on the CPU side: problem op -> LLVM dialect that mlir-runner
// can run (test/Execution runs it). Nothing but the llvm dialect may be
// left: dynamic 3-D operands collapse through affine.apply (lower-affine),
// bf16/f16 convert with fpext/fptrunc, erf and exp become libm calls.
// RUN: gemm-opt %s --split-input-file --ggemm-to-cpu | FileCheck %s

// CHECK-NOT: {{(ggemm|scf|memref|affine|arith|math|cf|func)\.}}
// CHECK-NOT: unrealized_conversion_cast
// CHECK-LABEL: llvm.func @segment_gelu(
// CHECK: llvm.fpext %{{.+}} : bf16 to f32
// CHECK: llvm.call @erff(
// CHECK: llvm.fptrunc %{{.+}} : f32 to bf16
// CHECK-NOT: {{(ggemm|scf|memref|affine|arith|math|cf|func)\.}}
// CHECK-NOT: unrealized_conversion_cast
func.func @segment_gelu(%x: memref<?x128xbf16>, %w: memref<4x64x128xbf16>,
    %indptr: memref<5xi64>, %bias: memref<4x64xf32>, %y: memref<?x64xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x128xbf16>, memref<4x64x128xbf16>)
      segments(%indptr : memref<5xi64>) bias(%bias : memref<4x64xf32>)
      outs(%y : memref<?x64xbf16>)
      {epilogue = #ggemm.epilogue<activation = gelu>,
       config = #ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, stages = 2, consumer_warpgroups = 1>}
  return
}

// -----

// CHECK-NOT: {{(ggemm|scf|memref|affine|arith|math|cf|func)\.}}
// CHECK-NOT: unrealized_conversion_cast
// CHECK-LABEL: llvm.func @masked_dynamic_silu(
// CHECK: llvm.fpext %{{.+}} : f16 to f32
// CHECK: llvm.call @expf(
// CHECK: llvm.fptrunc %{{.+}} : f32 to f16
// CHECK-NOT: {{(ggemm|scf|memref|affine|arith|math|cf|func)\.}}
// CHECK-NOT: unrealized_conversion_cast
func.func @masked_dynamic_silu(%x: memref<?x?x128xf16>, %w: memref<?x128x64xf16>,
    %counts: memref<?xi32>, %y: memref<?x?x64xf16>) {
  ggemm.masked_matmul ins(%x, %w : memref<?x?x128xf16>, memref<?x128x64xf16>)
      masked_m(%counts : memref<?xi32>) outs(%y : memref<?x?x64xf16>)
      {weight_layout = #ggemm.weight_layout<kn>,
       epilogue = #ggemm.epilogue<activation = silu>}
  return
}
