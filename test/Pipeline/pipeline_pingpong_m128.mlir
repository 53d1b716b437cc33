// Ping-pong consumers on 128x128 tiles end to end: each warpgroup holds two
// m64 row blocks of its tile, so every K step issues two m64n128k16 wgmmas
// into the two blocks' registers from the two 64-row halves of the A slot
// (descriptors 8 KB apart: 64 rows of 128 bytes), and the store goes out a
// block at a time. Six 32 KB stages fit beside the two warpgroups' store
// boxes; no spills.
// RUN: rm -rf %t && gemm-opt %s --ggemm-to-ptx="chip=sm_90a variants=false bundle-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/pingpong_m128_kernel.ptx
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/pingpong_m128_kernel.json
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t/pingpong_m128_kernel.ptx -o %t/m128.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: gemm-opt %s -ggemm-select-config -ggemm-tile -ggemm-persistent-schedule -ggemm-warp-specialize -ggemm-tma-store -ggemm-stage-ring | FileCheck %s --check-prefix=ROLES
// RUN: gemm-opt %s --ggemm-to-cpu -o /dev/null

// ROLES-LABEL: func.func @pingpong_m128(
// ROLES: ggemm.create_ring release_count(128) layout(#ggemm.ring_layout<stages = 6,
// ROLES-SAME: stage_bytes = [16384, 16384]
// ROLES: } consumers(2) pingpong registers(232) {
// ROLES: ggemm.mma %{{.+}} : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<128x128xf32>
// ROLES: ggemm.store_tile %{{.+}} {staging = #ggemm.store_staging<rows = 64, cols = 64, buffers = 2>} : !ggemm.accumulator<128x128xf32>

// PTX: .entry pingpong_m128_kernel(
// The second block's A descriptor is the first's address + 512 (8 KB >> 4):
// 0x4000004000010200 = 128-byte swizzle, 1024-byte stride, 16-byte leading
// offset, address field 0x200.
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {[[B0:%r[0-9]+]], {{.*}}}, {{%rd[0-9]+}}, [[B:%rd[0-9]+]],
// PTX: add.s64 [[A1:%rd[0-9]+]], {{%rd[0-9]+}}, 4611686293305360896;
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {[[B1:%r[0-9]+]], {{.*}}}, [[A1]], [[B]],
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {[[B0]],
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {[[B1]],
// PTX: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// JSON: "tile": {
// JSON-NEXT: "block_k": 64,
// JSON-NEXT: "block_m": 128,
// JSON-NEXT: "block_n": 128,
// JSON-NEXT: "consumer_warpgroups": 2,
// JSON-NEXT: "pingpong": true,
// JSON-NEXT: "stages": 6,
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
func.func @pingpong_m128(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                         %indptr: memref<?xi32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xbf16>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64,
                                   stages = 6, raster = along_m, pingpong = true>}
  return
}
