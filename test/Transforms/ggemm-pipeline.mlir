// ggemm-pipeline: every tile_mma gets a shared-memory plan: the A ring at 0,
// the B ring after it, then one full and one empty 8-byte mbarrier per stage;
// smem_bytes is where the mbarriers end. The tile_mma verifier already
// rejects rings over the 227 KB budget, so the config's stage count is kept.
// RUN: gemm-opt %s -split-input-file -ggemm-pipeline | FileCheck %s

// 128x128x64 bf16, 4 stages: 16 KB per operand tile.
// CHECK-LABEL: func.func @bf16_128x128(
// CHECK: ggemm.tile_mma
// CHECK-SAME: pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384, a_offset = 0, b_offset = 65536, barrier_offset = 131072, smem_bytes = 131136>
func.func @bf16_128x128(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>, %i: index) {
  %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      group(%i) row(%i) col(%i)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
       weight_layout = #ggemm.weight_layout<nk>}
      -> !ggemm.accumulator<128x128xf32>
  return
}

// -----

// Unequal A and B tiles, 3 stages, one consumer warpgroup.
// CHECK-LABEL: func.func @bf16_64x256(
// CHECK: pipeline = #ggemm.pipeline<stages = 3, a_stage_bytes = 8192, b_stage_bytes = 32768, a_offset = 0, b_offset = 24576, barrier_offset = 122880, smem_bytes = 122928>
func.func @bf16_64x256(%x: memref<?x256xf16>, %w: memref<4x256x256xf16>, %i: index) {
  %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xf16>, memref<4x256x256xf16>)
      group(%i) row(%i) col(%i)
      {config = #ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64, stages = 3,
                                   consumer_warpgroups = 1>,
       weight_layout = #ggemm.weight_layout<kn>}
      -> !ggemm.accumulator<64x256xf32>
  return
}

// -----

// The largest ring of 128x256 bf16 tiles that fits 227 KB is kept whole:
// 4 x 48 KB + 64 bytes of mbarriers.
// CHECK-LABEL: func.func @near_budget(
// CHECK: pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 32768, a_offset = 0, b_offset = 65536, barrier_offset = 196608, smem_bytes = 196672>
func.func @near_budget(%x: memref<?x256xbf16>, %w: memref<4x256x256xbf16>, %i: index) {
  %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x256x256xbf16>)
      group(%i) row(%i) col(%i)
      {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, stages = 4>,
       weight_layout = #ggemm.weight_layout<nk>}
      -> !ggemm.accumulator<128x256xf32>
  return
}

// -----

// FP8 tiles are 128 elements (128 bytes) deep; 8 stages of a narrow B.
// CHECK-LABEL: func.func @fp8_deep(
// CHECK: pipeline = #ggemm.pipeline<stages = 6, a_stage_bytes = 16384, b_stage_bytes = 16384, a_offset = 0, b_offset = 98304, barrier_offset = 196608, smem_bytes = 196704>
// CHECK: pipeline = #ggemm.pipeline<stages = 8, a_stage_bytes = 16384, b_stage_bytes = 1024, a_offset = 0, b_offset = 131072, barrier_offset = 139264, smem_bytes = 139392>
func.func @fp8_deep(%x: memref<?x512xf8E4M3FN>, %w: memref<4x128x512xf8E4M3FN>, %i: index) {
  %acc = ggemm.tile_mma ins(%x, %w : memref<?x512xf8E4M3FN>, memref<4x128x512xf8E4M3FN>)
      group(%i) row(%i) col(%i)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128, stages = 6>,
       weight_layout = #ggemm.weight_layout<nk>}
      -> !ggemm.accumulator<128x128xf32>
  %acc2 = ggemm.tile_mma ins(%x, %w : memref<?x512xf8E4M3FN>, memref<4x128x512xf8E4M3FN>)
      group(%i) row(%i) col(%i)
      {config = #ggemm.tile_config<block_m = 128, block_n = 8, block_k = 128, stages = 8>,
       weight_layout = #ggemm.weight_layout<nk>}
      -> !ggemm.accumulator<128x8xf32>
  return
}

// -----

// A plan that is already there is kept.
// CHECK-LABEL: func.func @planned(
// CHECK: pipeline = #ggemm.pipeline<stages = 2, a_stage_bytes = 16384, b_stage_bytes = 16384, a_offset = 32768, b_offset = 0, barrier_offset = 65536, smem_bytes = 65568>
func.func @planned(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>, %i: index) {
  %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      group(%i) row(%i) col(%i)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
       weight_layout = #ggemm.weight_layout<nk>,
       pipeline = #ggemm.pipeline<stages = 2, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                  a_offset = 32768, b_offset = 0, barrier_offset = 65536,
                                  smem_bytes = 65568>}
      -> !ggemm.accumulator<128x128xf32>
  return
}

// -----

// Inside a tile loop, as ggemm-tile leaves it.
// CHECK-LABEL: func.func @in_tile_loop(
// CHECK: ggemm.foreach_tile uniform
// CHECK: ggemm.tile_mma
// CHECK-SAME: pipeline = #ggemm.pipeline<stages = 2, a_stage_bytes = 16384, b_stage_bytes = 8192, a_offset = 0, b_offset = 32768, barrier_offset = 49152, smem_bytes = 49184>
// CHECK: ggemm.tile_store
func.func @in_tile_loop(%x: memref<?x256xbf16>, %w: memref<4x64x256xbf16>,
                        %y: memref<?x64xbf16>, %n: index) {
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 64, block_k = 64, stages = 2>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x64x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 64, block_k = 64, stages = 2>,
         weight_layout = #ggemm.weight_layout<nk>}
        -> !ggemm.accumulator<128x64xf32>
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x64xf32>, memref<?x64xbf16>
  }
  return
}
