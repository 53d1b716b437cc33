// The CPU reference runs FP8 K-ragged weight gradients of either FP8 type;
// the GPU back end builds e4m3 ones only (the runtime launches f8e4m3
// segment_matmul_k kernels), and says so at compile time rather than
// leaving a bundle the runtime would refuse.
// RUN: gemm-opt %s --ggemm-to-cpu -o /dev/null
// RUN: not gemm-opt %s --ggemm-to-ptx="chip=sm_90a" -o /dev/null 2>&1 | FileCheck %s

// CHECK: error: 'ggemm.launch' op expects e4m3 operands in an FP8 K-ragged kernel (the runtime launches f8e4m3 segment_matmul_k kernels only), got 'f8E5M2'
func.func @wgrad_e5m2(%dy: memref<256x?xf8E5M2>, %x: memref<512x?xf8E5M2>,
                      %indptr: memref<5xi32>,
                      %dys: memref<256x?xf32, strided<[1, ?]>>,
                      %xs: memref<512x?xf32, strided<[1, ?]>>,
                      %dw: memref<4x256x512xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<256x?xf8E5M2>, memref<512x?xf8E5M2>)
      segments(%indptr : memref<5xi32>)
      scales(%dys, %xs : memref<256x?xf32, strided<[1, ?]>>, memref<512x?xf32, strided<[1, ?]>>)
      outs(%dw : memref<4x256x512xf32>) {transposed}
  return
}
