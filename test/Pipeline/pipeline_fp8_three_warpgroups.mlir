// FP8 with 1x128 / 128x128 block scales on large groups, end to end:
// ggemm-select-config gives the 6.3 MFLOP of a 128x192 K block as 192x128
// over three consumer warpgroups (1.02-1.15x 128x192 on an H100,
// bench/NOTES.md v18), so that one warpgroup promotes while the other two
// issue wgmma. The kernel has 512 threads; the producer gives its registers
// down to 32 and each consumer takes 160 (128 x (32 + 3 x 160) = 65536, the
// SM's), enough for the K block's product and the sum (2 x 64
// f32 per thread) without spills; the staged epilogue has a box per
// consumer warpgroup behind the 4-stage ring.
// RUN: rm -rf %t && gemm-opt %s --ggemm-to-ptx="chip=sm_90a variants=false bundle-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/fp8_three_kernel.ptx
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/fp8_three_kernel.json
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t/fp8_three_kernel.ptx -o %t/three.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: gemm-opt %s -ggemm-select-config -ggemm-tile -ggemm-persistent-schedule -ggemm-warp-specialize | FileCheck %s --check-prefix=ROLES

// ROLES-LABEL: func.func @fp8_three(
// ROLES: ggemm.warp_specialize producer registers(32) {
// ROLES: } consumers(3) registers(160) {

// PTX: .entry fp8_three_kernel(
// PTX: .maxntid 512, 1, 1
// PTX: setmaxnreg.dec.sync.aligned.u32 32;
// PTX: setmaxnreg.inc.sync.aligned.u32 160;
// PTX: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// PTX-NOT: wgmma.mma_async.sync.aligned.m64n192k32
// PTX: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// JSON: "block": [
// JSON-NEXT: 512,
// JSON: "block_m": 192,
// JSON-NEXT: "block_n": 128,
// JSON-NEXT: "consumer_warpgroups": 3,
// JSON-NEXT: "stages": 4,
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
func.func @fp8_three(%x: memref<?x7168xf8E4M3FN>, %w: memref<?x4096x7168xf8E4M3FN>,
                     %p: memref<?xi32>, %xs: memref<?x56xf32, strided<[1, ?]>>,
                     %ws: memref<?x32x56xf32>, %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xf8E4M3FN>, memref<?x4096x7168xf8E4M3FN>)
      segments(%p : memref<?xi32>)
      scales(%xs, %ws : memref<?x56xf32, strided<[1, ?]>>, memref<?x32x56xf32>)
      outs(%y : memref<?x4096xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}
