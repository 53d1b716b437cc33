// K-ragged weight gradients (ggemm.segment_matmul_k) end to end: the CPU
// pipeline lowers them to the LLVM dialect (test/Execution/kragged_* run
// them); the PTX pipeline writes the warp-specialised kernel, whose
// consumers zero the K rows past a segment's end in shared memory (16-byte
// stores), fence them to the async proxy and meet at named barrier 1 before
// the wgmma reads them; the manifest names the op's tensors, dw's
// descriptor among them (the staged epilogue of ggemm-tma-store, whose
// TMA stores write dw as one [G * R, C] matrix).
// RUN: gemm-opt %s --ggemm-to-cpu | FileCheck %s --check-prefix=CPU
// RUN: gemm-opt %s --ggemm-to-ptx="chip=sm_90a" | FileCheck %s --check-prefix=PTX

// CPU-LABEL: llvm.func @wgrad(
// CPU-NOT: {{(ggemm|scf|memref|affine|arith|math|cf|func)\.}}
// CPU-NOT: unrealized_conversion_cast

// PTX: wgrad_kernel = {
// PTX-SAME: tensor = "dy"
// PTX-SAME: tensor = "x"
// PTX-SAME: tensor = "dw"
// PTX-SAME: {box = [32, 64], dtype = "f32", kind = "tma_descriptor", name = "y_desc", oob_fill = "zero", rank = 2 : i64, swizzle = "128B", tensor = "dw"}
// PTX-SAME: accumulate = true
// PTX-SAME: op = "segment_matmul_k", out_dtype = "f32", transposed = false, weight_layout = "nk"
// PTX: st.shared.v4.b32
// PTX: fence.proxy.async.shared::cta;
// PTX: bar.sync \091, 256;
// PTX: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// PTX: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
func.func @wgrad(%dy: memref<?x4096xbf16>, %x: memref<?x7168xbf16>,
                 %indptr: memref<9xi32>, %dw: memref<8x4096x7168xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x4096xbf16>, memref<?x7168xbf16>)
      segments(%indptr : memref<9xi32>) outs(%dw : memref<8x4096x7168xf32>)
      {accumulate}
  return
}
