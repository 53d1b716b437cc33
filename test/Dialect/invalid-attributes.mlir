// Every diagnostic of the ggemm attribute and type parsers and verifiers
// (lib/Dialect/GGemm/IR/GGemmAttrs.cpp, GGemmDialect.cpp).
// RUN: gemm-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// #ggemm.scale_block
//===----------------------------------------------------------------------===//

// expected-error @+1 {{expected `tensor`, `per_row` or `RxC`}}
func.func @scale_block_keyword() attributes {a = #ggemm.scale_block<per_token>} {
  return
}

// -----

// expected-error @+1 {{expected `tensor`, `per_row` or `RxC`, got 3 dimensions}}
func.func @scale_block_rank() attributes {a = #ggemm.scale_block<1x128x4>} {
  return
}

// -----

// expected-error @+1 {{expected `tensor`, `per_row` or `RxC`, got 1 dimensions}}
func.func @scale_block_one_dim() attributes {a = #ggemm.scale_block<128>} {
  return
}

// -----

// expected-error @+1 {{expected static shape}}
func.func @scale_block_dynamic() attributes {a = #ggemm.scale_block<1x?>} {
  return
}

// -----

// expected-error @+1 {{expects `tensor`, `per_row` or a positive RxC block, got rows = 0, cols = 128}}
func.func @scale_block_zero_rows() attributes {a = #ggemm.scale_block<0x128>} {
  return
}

// -----

// expected-error @+1 {{expects `tensor`, `per_row` or a positive RxC block, got rows = 128, cols = 0}}
func.func @scale_block_zero_cols() attributes {a = #ggemm.scale_block<128x0>} {
  return
}

// -----

// expected-error @+1 {{expects the K extent of a scale block (100) to be a multiple of 32 (one FP8 wgmma k-step)}}
func.func @scale_block_k_step() attributes {a = #ggemm.scale_block<1x100>} {
  return
}

//===----------------------------------------------------------------------===//
// #ggemm.tile_config
//===----------------------------------------------------------------------===//

// -----

// expected-error @+2 {{struct is missing required parameter: block_k}}
func.func @tile_config_missing() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 128>} {
  return
}

// -----

// expected-error @+2 {{expects 1 or 2 consumer warpgroups, got 3}}
func.func @tile_config_warpgroups() attributes {
    a = #ggemm.tile_config<block_m = 192, block_n = 128, block_k = 64, consumer_warpgroups = 3>} {
  return
}

// -----

// expected-error @+2 {{expects 1 or 2 consumer warpgroups, got 0}}
func.func @tile_config_no_warpgroups() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, consumer_warpgroups = 0>} {
  return
}

// -----

// Two consumer warpgroups need 64 rows each.
// expected-error @+2 {{expects block_m to be a multiple of 128 (64 rows per consumer warpgroup) and at most 256, got 64}}
func.func @tile_config_block_m_warpgroups() attributes {
    a = #ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64>} {
  return
}

// -----

// expected-error @+2 {{expects block_m to be a multiple of 64 (64 rows per consumer warpgroup) and at most 256, got 320}}
func.func @tile_config_block_m_large() attributes {
    a = #ggemm.tile_config<block_m = 320, block_n = 128, block_k = 64, consumer_warpgroups = 1>} {
  return
}

// -----

// expected-error @+2 {{expects block_n in [8, 256] and a multiple of 8 (a wgmma N), got 100}}
func.func @tile_config_block_n() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 100, block_k = 64>} {
  return
}

// -----

// expected-error @+2 {{expects block_n in [8, 256] and a multiple of 8 (a wgmma N), got 264}}
func.func @tile_config_block_n_large() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 264, block_k = 64>} {
  return
}

// -----

// With swap-AB the weight rows fill wgmma's M.
// expected-error @+2 {{expects block_n to be a multiple of 128 with swap_ab (weights fill wgmma's M), got 64}}
func.func @tile_config_swap_block_n() attributes {
    a = #ggemm.tile_config<block_m = 32, block_n = 64, block_k = 64, swap_ab = true>} {
  return
}

// -----

// expected-error @+2 {{expects block_m in [8, 256] and a multiple of 8 with swap_ab (tokens fill wgmma's N), got 4}}
func.func @tile_config_swap_block_m() attributes {
    a = #ggemm.tile_config<block_m = 4, block_n = 64, block_k = 64, consumer_warpgroups = 1,
                           swap_ab = true>} {
  return
}

// -----

// expected-error @+2 {{expects block_k to be a positive multiple of 16 and at most 256, got 24}}
func.func @tile_config_block_k() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 24>} {
  return
}

// -----

// expected-error @+2 {{expects block_k to be a positive multiple of 16 and at most 256, got 512}}
func.func @tile_config_block_k_large() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 512>} {
  return
}

// -----

// expected-error @+2 {{expects 1 to 8 pipeline stages, got 0}}
func.func @tile_config_no_stages() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, stages = 0>} {
  return
}

// -----

// expected-error @+2 {{expects 1 to 8 pipeline stages, got 9}}
func.func @tile_config_stages() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, stages = 9>} {
  return
}

// -----

// expected-error @+2 {{expects cluster dimensions in {1, 2, 4} with at most 8 CTAs, got 3x1}}
func.func @tile_config_cluster_dim() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, cluster_m = 3>} {
  return
}

// -----

// expected-error @+2 {{expects cluster dimensions in {1, 2, 4} with at most 8 CTAs, got 4x4}}
func.func @tile_config_cluster_size() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, cluster_m = 4,
                           cluster_n = 4>} {
  return
}

// -----

// expected-error @+3 {{expected one of [along_n, along_m] for order in which tile ids walk the (m, n) tile grid of a group, got: snake}}
// expected-error @+2 {{failed to parse GGemm_TileConfigAttr parameter 'raster' which is to be a `::mlir::ggemm::RasterOrder`}}
func.func @tile_config_raster() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, raster = snake>} {
  return
}

//===----------------------------------------------------------------------===//
// #ggemm.epilogue, #ggemm.weight_layout, #ggemm.row_mapping
//===----------------------------------------------------------------------===//

// -----

// expected-error @+2 {{expected one of [none, relu, gelu, silu] for epilogue activation, got: tanh}}
// expected-error @+1 {{failed to parse GGemm_EpilogueAttr parameter 'activation' which is to be a `::mlir::ggemm::Activation`}}
func.func @epilogue_activation() attributes {a = #ggemm.epilogue<activation = tanh>} {
  return
}

// -----

// expected-error @+1 {{duplicate or unknown struct parameter name: scale}}
func.func @epilogue_parameter() attributes {a = #ggemm.epilogue<scale = true>} {
  return
}

// -----

// expected-error @+2 {{expected ::mlir::ggemm::WeightLayout to be one of: nk, kn}}
// expected-error @+1 {{failed to parse GGemm_WeightLayoutAttr parameter 'value' which is to be a `::mlir::ggemm::WeightLayout`}}
func.func @weight_layout() attributes {a = #ggemm.weight_layout<mn>} {
  return
}

// -----

// expected-error @+2 {{expected ::mlir::ggemm::RowMapping to be one of: segment, masked, uniform}}
// expected-error @+1 {{failed to parse GGemm_RowMappingAttr parameter 'value' which is to be a `::mlir::ggemm::RowMapping`}}
func.func @row_mapping() attributes {a = #ggemm.row_mapping<ragged>} {
  return
}

//===----------------------------------------------------------------------===//
// #ggemm.pipeline
//===----------------------------------------------------------------------===//

// -----

// expected-error @+2 {{expects 1 to 8 stages, got 9}}
func.func @pipeline_stages() attributes {
    a = #ggemm.pipeline<stages = 9, a_stage_bytes = 1024, b_stage_bytes = 1024, a_offset = 0,
                        b_offset = 9216, barrier_offset = 18432, smem_bytes = 18576>} {
  return
}

// -----

// expected-error @+2 {{expects positive stage sizes, got 0 (A) and 1024 (B)}}
func.func @pipeline_stage_size() attributes {
    a = #ggemm.pipeline<stages = 1, a_stage_bytes = 0, b_stage_bytes = 1024, a_offset = 0,
                        b_offset = 0, barrier_offset = 1024, smem_bytes = 1040>} {
  return
}

// -----

// expected-error @+2 {{expects non-negative offsets, got a_offset = -1024, b_offset = 0, barrier_offset = 1024}}
func.func @pipeline_negative_offset() attributes {
    a = #ggemm.pipeline<stages = 1, a_stage_bytes = 1024, b_stage_bytes = 1024,
                        a_offset = -1024, b_offset = 0, barrier_offset = 1024,
                        smem_bytes = 1040>} {
  return
}

// -----

// expected-error @+2 {{expects 1024-byte aligned stage sizes and offsets (128-byte swizzle), got 1536}}
func.func @pipeline_alignment() attributes {
    a = #ggemm.pipeline<stages = 1, a_stage_bytes = 1536, b_stage_bytes = 1024, a_offset = 0,
                        b_offset = 2048, barrier_offset = 3072, smem_bytes = 3088>} {
  return
}

// -----

// expected-error @+2 {{expects 8-byte aligned mbarriers, got offset 2052}}
func.func @pipeline_barrier_alignment() attributes {
    a = #ggemm.pipeline<stages = 1, a_stage_bytes = 1024, b_stage_bytes = 1024, a_offset = 0,
                        b_offset = 1024, barrier_offset = 2052, smem_bytes = 2068>} {
  return
}

// -----

// expected-error @+2 {{expects at most 232448 bytes of shared memory per CTA, got 233472}}
func.func @pipeline_budget() attributes {
    a = #ggemm.pipeline<stages = 7, a_stage_bytes = 16384, b_stage_bytes = 16384, a_offset = 0,
                        b_offset = 114688, barrier_offset = 229376, smem_bytes = 233472>} {
  return
}

// -----

// expected-error @+2 {{expects the mbarriers (4 stages of 16 bytes at offset 131072) to end within smem_bytes (131072)}}
func.func @pipeline_smem_bytes() attributes {
    a = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384, a_offset = 0,
                        b_offset = 65536, barrier_offset = 131072, smem_bytes = 131072>} {
  return
}

// -----

// The A ring placed last must end within smem_bytes too.
// expected-error @+2 {{expects the A ring (2 stages of 4096 bytes at offset 16384) to end within smem_bytes (16416)}}
func.func @pipeline_a_ring_end() attributes {
    a = #ggemm.pipeline<stages = 2, a_stage_bytes = 4096, b_stage_bytes = 4096,
                        a_offset = 16384, b_offset = 0, barrier_offset = 8192,
                        smem_bytes = 16416>} {
  return
}

// -----

// A stage size that would overflow a 64-bit end offset.
// expected-error @+2 {{expects the B ring (2 stages of 4611686018427387904 bytes at offset 2048) to end within smem_bytes (4096)}}
func.func @pipeline_overflow() attributes {
    a = #ggemm.pipeline<stages = 2, a_stage_bytes = 1024, b_stage_bytes = 4611686018427387904,
                        a_offset = 0, b_offset = 2048, barrier_offset = 3072, smem_bytes = 4096>} {
  return
}

// -----

// expected-error @+2 {{expects the A ring [0, 65536) not to overlap the B ring [32768, 98304)}}
func.func @pipeline_overlap_ab() attributes {
    a = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384, a_offset = 0,
                        b_offset = 32768, barrier_offset = 131072, smem_bytes = 131136>} {
  return
}

// -----

// The B ring first, running into the A ring.
// expected-error @+2 {{expects the A ring [1024, 9216) not to overlap the B ring [0, 8192)}}
func.func @pipeline_overlap_ba() attributes {
    a = #ggemm.pipeline<stages = 2, a_stage_bytes = 4096, b_stage_bytes = 4096, a_offset = 1024,
                        b_offset = 0, barrier_offset = 16384, smem_bytes = 16416>} {
  return
}

// -----

// expected-error @+2 {{expects the A ring [8192, 16384) not to overlap the mbarriers [8192, 8224)}}
func.func @pipeline_overlap_barriers_a() attributes {
    a = #ggemm.pipeline<stages = 2, a_stage_bytes = 4096, b_stage_bytes = 4096, a_offset = 8192,
                        b_offset = 0, barrier_offset = 8192, smem_bytes = 16416>} {
  return
}

// -----

// expected-error @+2 {{expects the B ring [8192, 16384) not to overlap the mbarriers [16376, 16408)}}
func.func @pipeline_overlap_barriers_b() attributes {
    a = #ggemm.pipeline<stages = 2, a_stage_bytes = 4096, b_stage_bytes = 4096, a_offset = 0,
                        b_offset = 8192, barrier_offset = 16376, smem_bytes = 16416>} {
  return
}

//===----------------------------------------------------------------------===//
// !ggemm.accumulator
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{expects a rank-2 accumulator, got rank 3}}
func.func @accumulator_rank(%a: !ggemm.accumulator<2x64x64xf32>) {
  return
}

// -----

// expected-error @+1 {{expects a static, positive accumulator shape}}
func.func @accumulator_empty(%a: !ggemm.accumulator<0x64xf32>) {
  return
}

// -----

// expected-error @+1 {{expects an f32 accumulator, got 'f16'}}
func.func @accumulator_f16(%a: !ggemm.accumulator<64x64xf16>) {
  return
}

// -----

// expected-error @+1 {{expected static shape}}
func.func @accumulator_dynamic(%a: !ggemm.accumulator<?x64xf32>) {
  return
}
