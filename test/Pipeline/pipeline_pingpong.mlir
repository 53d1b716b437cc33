// Ping-pong consumers end to end (#ggemm.tile_config<..., pingpong = true>):
// two consumer warpgroups take alternate 64x256 tiles of a CTA, so that one
// warpgroup's epilogue (registers -> shared memory -> TMA store) runs while
// the other's main loop has the tensor cores. Each warpgroup's turn is a
// named barrier over both warpgroups (bar.sync at 5 + w by the waiting
// warpgroup, bar.arrive there by the other); a stage is free after one
// warpgroup's 128 releases; each warpgroup has its own store boxes (two
// per warpgroup behind the 4-stage ring of 40 KB stages).
// RUN: rm -rf %t && gemm-opt %s --ggemm-to-ptx="chip=sm_90a variants=false bundle-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/pingpong_kernel.ptx
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/pingpong_kernel.json
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t/pingpong_kernel.ptx -o %t/pingpong.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: gemm-opt %s -ggemm-select-config -ggemm-tile -ggemm-persistent-schedule -ggemm-warp-specialize -ggemm-tma-store -ggemm-stage-ring | FileCheck %s --check-prefix=ROLES
// RUN: gemm-opt %s --ggemm-to-cpu -o /dev/null

// ROLES-LABEL: func.func @pingpong(
// ROLES: ggemm.create_ring release_count(128) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 32768], stage_bytes = [8192, 32768], barrier_offset = 163840, smem_bytes = 197632, staging_offset = 164864, staging_bytes = 32768>)
// ROLES: } consumers(2) pingpong registers(232) {
// ROLES: ggemm.turn_wait
// ROLES: ggemm.turn_pass
// ROLES: ggemm.store_tile %{{.+}} {staging = #ggemm.store_staging<rows = 64, cols = 64, buffers = 2>} : !ggemm.accumulator<64x256xf32>

// PTX: .entry pingpong_kernel(
// PTX: .maxntid 384, 1, 1
// PTX: setmaxnreg.dec.sync.aligned.u32 40;
// PTX: setmaxnreg.inc.sync.aligned.u32 232;
// PTX: bar.sync {{.+}}, 256;
// PTX: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// PTX: bar.arrive {{.+}}, {{.+}};
// PTX: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// JSON: "block": [
// JSON-NEXT: 384,
// JSON: "tile": {
// JSON-NEXT: "block_k": 64,
// JSON-NEXT: "block_m": 64,
// JSON-NEXT: "block_n": 256,
// JSON-NEXT: "consumer_warpgroups": 2,
// JSON-NEXT: "pingpong": true,
// JSON-NEXT: "stages": 4,
// Two registers of the loop state spill (8 bytes; the cooperative 128x256
// kernel spills none).
// PTXAS: {{[0-8]}} bytes spill stores
func.func @pingpong(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                    %indptr: memref<?xi32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xbf16>)
      {config = #ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64,
                                   stages = 4, raster = along_m, pingpong = true>}
  return
}
