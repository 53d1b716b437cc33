// FP8 K-ragged weight gradients (ggemm.segment_matmul_k {transposed}, e4m3
// dy [N, T] and x [K, T] with 1x128 scales along the tokens) end to end: the
// CPU pipeline lowers them to the LLVM dialect (test/Execution/kragged_fp8_*
// run them); the PTX pipeline writes the warp-specialised kernel with
// 128x192 tiles (select-config's FP8 width): K-major e4m3 wgmma, the
// consumers mask the first and last 128-token block of a segment bytewise
// in the ring slots (ld/and/st.shared.v4, after which they fence to the
// async proxy and meet at named barrier 1), and each block's product is
// promoted with one scale per row of dy and one per row of x. The manifest
// names dy, x and their scales, each scale tensor behind a TMA descriptor
// of block + 4 f32.
// RUN: gemm-opt %s --ggemm-to-cpu | FileCheck %s --check-prefix=CPU
// RUN: gemm-opt %s --ggemm-to-ptx="chip=sm_90a" | FileCheck %s --check-prefix=PTX

// CPU-LABEL: llvm.func @wgrad_fp8(
// CPU-NOT: {{(ggemm|scf|memref|affine|arith|math|cf|func)\.}}
// CPU-NOT: unrealized_conversion_cast

// PTX: wgrad_fp8_kernel = {
// PTX-SAME: {box = [128, 128], dtype = "f8e4m3", kind = "tma_descriptor", name = "a_desc", oob_fill = "zero", rank = 2 : i64, swizzle = "128B", tensor = "dy"}
// PTX-SAME: {box = [128, 192], dtype = "f8e4m3", kind = "tma_descriptor", name = "b_desc", oob_fill = "zero", rank = 2 : i64, swizzle = "128B", tensor = "x"}
// PTX-SAME: {box = [132, 1], dtype = "f32", kind = "tma_descriptor", name = "a_scale_desc", oob_fill = "zero", rank = 2 : i64, swizzle = "none", tensor = "dy_scale"}
// PTX-SAME: {box = [196, 1], dtype = "f32", kind = "tma_descriptor", name = "b_scale_desc", oob_fill = "zero", rank = 2 : i64, swizzle = "none", tensor = "x_scale"}
// PTX-SAME: a_dtype = "f8e4m3"
// PTX-SAME: op = "segment_matmul_k", out_dtype = "f32", transposed = true, w_scale_block = "1x128", weight_layout = "nk", x_scale_block = "1x128"
// PTX-SAME: block_k = 128 : i64, block_m = 128 : i64, block_n = 192 : i64
// PTX: .visible .entry wgrad_fp8_kernel(
// PTX: fence.proxy.async.shared::cta;\0A\09bar.sync \091, 256;
// PTX: wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3
// PTX: fma.rn.f32
// The mask (its blocks placed after the loop's): a 16-byte chunk read,
// masked bytewise, written back.
// PTX: ld.shared.v4.b32
// PTX-SAME: \0A\09and.b32
// PTX-SAME: \0A\09and.b32
// PTX-SAME: \0A\09and.b32
// PTX-SAME: \0A\09and.b32
// PTX-SAME: \0A\09st.shared.v4.b32
func.func @wgrad_fp8(%dy: memref<4096x?xf8E4M3FN>, %x: memref<7168x?xf8E4M3FN>,
                     %indptr: memref<9xi32>,
                     %dys: memref<4096x?xf32, strided<[1, ?]>>,
                     %xs: memref<7168x?xf32, strided<[1, ?]>>,
                     %dw: memref<8x4096x7168xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<4096x?xf8E4M3FN>, memref<7168x?xf8E4M3FN>)
      segments(%indptr : memref<9xi32>)
      scales(%dys, %xs : memref<4096x?xf32, strided<[1, ?]>>, memref<7168x?xf32, strided<[1, ?]>>)
      outs(%dw : memref<8x4096x7168xf32>) {transposed}
  return
}
