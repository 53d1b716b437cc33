// A 128-column FP8 K-ragged tile reads its per-column scale factors (one
// per accumulator register, 64 per consumer thread) before the wgmma's
// wait, so that the promotion after it is the fused multiply-adds alone
// (NOTES v15: 5-6 % on the H100 against the loads after the wait). The
// 128x192 tile keeps them after the wait (96 would not fit beside the
// partial and the sum).
// RUN: gemm-opt %s --ggemm-to-ptx="chip=sm_90a" | FileCheck %s

// CHECK: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// CHECK: wgmma.wait_group.sync.aligned \090;
// CHECK-NOT: ld.shared
// CHECK-NOT: mul.rn.f32
// CHECK: fma.rn.f32
func.func @wgrad_fp8_128(%dy: memref<4096x?xf8E4M3FN>, %x: memref<7168x?xf8E4M3FN>,
                         %indptr: memref<9xi32>,
                         %dys: memref<4096x?xf32, strided<[1, ?]>>,
                         %xs: memref<7168x?xf32, strided<[1, ?]>>,
                         %dw: memref<8x4096x7168xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<4096x?xf8E4M3FN>, memref<7168x?xf8E4M3FN>)
      segments(%indptr : memref<9xi32>)
      scales(%dys, %xs : memref<4096x?xf32, strided<[1, ?]>>, memref<7168x?xf32, strided<[1, ?]>>)
      outs(%dw : memref<8x4096x7168xf32>)
      {transposed, config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128, stages = 6, raster = along_m>}
  return
}
