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

// expected-error @+2 {{expects 1 to 3 consumer warpgroups, got 4}}
func.func @tile_config_warpgroups() attributes {
    a = #ggemm.tile_config<block_m = 256, block_n = 128, block_k = 64, consumer_warpgroups = 4>} {
  return
}

// -----

// Three consumer warpgroups own 192 rows: a 256-row tile does not split.
// expected-error @+2 {{expects block_m to be a multiple of 192 (64 rows per consumer warpgroup) and at most 256, got 256}}
func.func @tile_config_three_warpgroups() attributes {
    a = #ggemm.tile_config<block_m = 256, block_n = 128, block_k = 64, consumer_warpgroups = 3>} {
  return
}

// -----

// expected-error @+2 {{expects 1 to 3 consumer warpgroups, got 0}}
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

// expected-error @+2 {{expects split_k in [1, 8] (the CTAs of a portable cluster that share a tile's K blocks), got 9}}
func.func @tile_config_split_k_range() attributes {
    a = #ggemm.tile_config<block_m = 8, block_n = 64, block_k = 128, consumer_warpgroups = 1,
                           swap_ab = true, split_k = 9>} {
  return
}

// -----

// expected-error @+2 {{expects split_k = 1 with cluster_m, cluster_n > 1 or pingpong (a split-K cluster's CTAs all compute one tile), got split_k = 2}}
func.func @tile_config_split_k_cluster() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, cluster_m = 2,
                           split_k = 2>} {
  return
}

// -----

// expected-error @+2 {{expects split_k > 1 with split_k_tail (the CTAs that split each tile of the last wave), got split_k = 1}}
func.func @tile_config_split_k_tail_alone() attributes {
    a = #ggemm.tile_config<block_m = 192, block_n = 128, block_k = 128, consumer_warpgroups = 3,
                           split_k_tail = true>} {
  return
}

// -----

// expected-error @+2 {{expects split_k = 1 with cluster_m, cluster_n > 1 or pingpong (a split-K cluster's CTAs all compute one tile), got split_k = 4}}
func.func @tile_config_split_k_pingpong() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, pingpong = true,
                           split_k = 4>} {
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

// expected-error @+2 {{expected one of [none, relu, gelu, silu, swiglu] for epilogue activation, got: tanh}}
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

// expected-error @+1 {{expects gate_up_block only with activation = swiglu (it orders a gated weight's rows), got activation = silu}}
func.func @gate_up_block_not_gated() attributes {a = #ggemm.epilogue<activation = silu, gate_up_block = 64>} {
  return
}

// -----

// expected-error @+1 {{expects gate_up_block to be 0 or a positive multiple of 8 of at most 128 (a tile of 2 x gate_up_block <= 256 weight rows), got -8}}
func.func @gate_up_block_negative() attributes {a = #ggemm.epilogue<activation = swiglu, gate_up_block = -8>} {
  return
}

// -----

// expected-error @+1 {{expects gate_up_block to be 0 or a positive multiple of 8 of at most 128 (a tile of 2 x gate_up_block <= 256 weight rows), got 12}}
func.func @gate_up_block_fragment() attributes {a = #ggemm.epilogue<activation = swiglu, gate_up_block = 12>} {
  return
}

// -----

// expected-error @+1 {{expects gate_up_block to be 0 or a positive multiple of 8 of at most 128 (a tile of 2 x gate_up_block <= 256 weight rows), got 136}}
func.func @gate_up_block_too_wide() attributes {a = #ggemm.epilogue<activation = swiglu, gate_up_block = 136>} {
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
// #ggemm.ring_layout
//===----------------------------------------------------------------------===//

// -----

// expected-error @+2 {{expects 1 to 8 stages, got 9}}
func.func @ring_stages() attributes {
    a = #ggemm.ring_layout<stages = 9, offsets = [0, 9216], stage_bytes = [1024, 1024], barrier_offset = 18432, smem_bytes = 18576>} {
  return
}

// -----

// expected-error @+2 {{expects one offset and one stage size per buffer, got 2 offsets and 1 stage sizes}}
func.func @ring_counts() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 1024], stage_bytes = [1024], barrier_offset = 2048, smem_bytes = 2064>} {
  return
}

// -----

// expected-error @+2 {{expects positive stage sizes and non-negative offsets, got 0 bytes at offset 0}}
func.func @ring_stage_size() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 0], stage_bytes = [0, 1024], barrier_offset = 1024, smem_bytes = 1040>} {
  return
}

// -----

// expected-error @+2 {{expects a 1024-byte aligned staging_offset and a positive multiple of 1024 staging_bytes, got 8192 bytes at offset 2112}}
func.func @ring_staging_alignment() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 1024], stage_bytes = [1024, 1024], barrier_offset = 2048, smem_bytes = 10304, staging_offset = 2112, staging_bytes = 8192>} {
  return
}

// -----

// expected-error @+2 {{expects the store staging (1 stages of 8192 bytes at offset 3072) to end within smem_bytes (8192)}}
func.func @ring_staging_end() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 1024], stage_bytes = [1024, 1024], barrier_offset = 2048, smem_bytes = 8192, staging_offset = 3072, staging_bytes = 8192>} {
  return
}

// -----

// expected-error @+2 {{expects buffer 1 [1024, 2048) not to overlap the store staging [1024, 9216)}}
func.func @ring_staging_overlap() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 1024], stage_bytes = [1024, 1024], barrier_offset = 10240, smem_bytes = 10256, staging_offset = 1024, staging_bytes = 8192>} {
  return
}

// -----

// The staging fields come before the split-K ones.
// expected-error @+2 {{expected '>' or split_k_barriers after split_k_bytes}}
func.func @ring_split_k_order() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 1024], stage_bytes = [1024, 1024], barrier_offset = 2048, smem_bytes = 16384, split_k_offset = 2064, split_k_bytes = 2064, staging_offset = 5120, staging_bytes = 8192>} {
  return
}

// -----

// expected-error @+2 {{expects a 16-byte aligned split_k_offset and a multiple of 16 split_k_bytes above 16, got 2064 bytes at offset 2056}}
func.func @ring_split_k_align() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 1024], stage_bytes = [1024, 1024], barrier_offset = 2048, smem_bytes = 8192, split_k_offset = 2056, split_k_bytes = 2064>} {
  return
}

// -----

// expected-error @+2 {{expects a 16-byte aligned split_k_offset and a multiple of 16 split_k_bytes above 16, got 16 bytes at offset 2064}}
func.func @ring_split_k_no_slot() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 1024], stage_bytes = [1024, 1024], barrier_offset = 2048, smem_bytes = 8192, split_k_offset = 2064, split_k_bytes = 16>} {
  return
}

// -----

// expected-error @+2 {{expects the split-K buffer (1 stages of 2064 bytes at offset 2064) to end within smem_bytes (4096)}}
func.func @ring_split_k_end() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 1024], stage_bytes = [1024, 1024], barrier_offset = 2048, smem_bytes = 4096, split_k_offset = 2064, split_k_bytes = 2064>} {
  return
}

// -----

// expected-error @+2 {{expects buffer 1 [1024, 2048) not to overlap the split-K buffer [1024, 3088)}}
func.func @ring_split_k_overlap() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 1024], stage_bytes = [1024, 1024], barrier_offset = 4096, smem_bytes = 8192, split_k_offset = 1024, split_k_bytes = 2064>} {
  return
}

// -----

// Overlaying the ring (split_k_barriers), the buffer must lie within the
// ring's tile buffers, and the mbarriers outside everything.
// expected-error @+2 {{expects the split-K buffer [1024, 3072) to lie within the ring's tile buffers [0, 2048) it overlays (split_k_barriers set)}}
func.func @ring_split_k_overlay_outside() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 1024], stage_bytes = [1024, 1024], barrier_offset = 2048, smem_bytes = 8192, split_k_offset = 1024, split_k_bytes = 2048, split_k_barriers = 4096>} {
  return
}

// -----

// expected-error @+2 {{expects the mbarriers [2048, 2064) not to overlap the split-K mbarriers [2048, 2080)}}
func.func @ring_split_k_overlay_barriers() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 1024], stage_bytes = [1024, 1024], barrier_offset = 2048, smem_bytes = 8192, split_k_offset = 0, split_k_bytes = 2048, split_k_barriers = 2048>} {
  return
}

// -----

// Nothing follows split_k_barriers.
// expected-error @+2 {{expected '>' after split_k_barriers}}
func.func @ring_split_k_overlay_trailing() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 1024], stage_bytes = [1024, 1024], barrier_offset = 2048, smem_bytes = 8192, split_k_offset = 0, split_k_bytes = 2048, split_k_barriers = 4096, staging_offset = 5120, staging_bytes = 1024>} {
  return
}

// -----

// expected-error @+2 {{expects a non-negative, 8-byte aligned split_k_barriers, got 4100}}
func.func @ring_split_k_overlay_align() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 1024], stage_bytes = [1024, 1024], barrier_offset = 2048, smem_bytes = 8192, split_k_offset = 0, split_k_bytes = 2048, split_k_barriers = 4100>} {
  return
}

//===----------------------------------------------------------------------===//
// #ggemm.store_staging
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{expects rows = 64 (a consumer warpgroup's rows), got 128}}
func.func @staging_rows() attributes {a = #ggemm.store_staging<rows = 128, cols = 64, buffers = 2>} {
  return
}

// -----

// expected-error @+1 {{expects cols to be 32, 64 or 128 (one 128-byte swizzle row of f32, bf16/f16 or 8-bit elements), got 48}}
func.func @staging_cols() attributes {a = #ggemm.store_staging<rows = 64, cols = 48, buffers = 2>} {
  return
}

// -----

// expected-error @+1 {{expects 1 to 4 buffers, got 0}}
func.func @staging_buffers() attributes {a = #ggemm.store_staging<rows = 64, cols = 64, buffers = 0>} {
  return
}

// -----

// expected-error @+2 {{expects positive stage sizes and non-negative offsets, got 1024 bytes at offset -1024}}
func.func @ring_negative_offset() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [-1024, 0], stage_bytes = [1024, 1024], barrier_offset = 1024, smem_bytes = 1040>} {
  return
}

// -----

// expected-error @+2 {{expects 128-byte aligned stage sizes and offsets (TMA destinations), got 1600 bytes at offset 0}}
func.func @ring_alignment() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 2048], stage_bytes = [1600, 1024], barrier_offset = 3072, smem_bytes = 3088>} {
  return
}

// -----

// expected-error @+2 {{expects a non-negative, 8-byte aligned mbarrier offset, got 2052}}
func.func @ring_barrier_alignment() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 1024], stage_bytes = [1024, 1024], barrier_offset = 2052, smem_bytes = 2068>} {
  return
}

// -----

// expected-error @+2 {{expects at most 232448 bytes of shared memory per CTA, got 233472}}
func.func @ring_budget() attributes {
    a = #ggemm.ring_layout<stages = 7, offsets = [0, 114688], stage_bytes = [16384, 16384], barrier_offset = 229376, smem_bytes = 233472>} {
  return
}

// -----

// expected-error @+2 {{expects the mbarriers (4 stages of 16 bytes at offset 131072) to end within smem_bytes (131072)}}
func.func @ring_smem_bytes() attributes {
    a = #ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 16384], barrier_offset = 131072, smem_bytes = 131072>} {
  return
}

// -----

// expected-error @+2 {{expects buffer 0 (2 stages of 4096 bytes at offset 16384) to end within smem_bytes (16416)}}
func.func @ring_buffer_end() attributes {
    a = #ggemm.ring_layout<stages = 2, offsets = [16384, 8192], stage_bytes = [4096, 4096], barrier_offset = 0, smem_bytes = 16416>} {
  return
}

// -----

// expected-error @+2 {{expects buffer 1 (2 stages of 4611686018427387904 bytes at offset 2048) to end within smem_bytes (4096)}}
func.func @ring_overflow() attributes {
    a = #ggemm.ring_layout<stages = 2, offsets = [0, 2048], stage_bytes = [1024, 4611686018427387904], barrier_offset = 4064, smem_bytes = 4096>} {
  return
}

// -----

// expected-error @+2 {{expects buffer 0 [0, 65536) not to overlap buffer 1 [32768, 98304)}}
func.func @ring_overlap() attributes {
    a = #ggemm.ring_layout<stages = 4, offsets = [0, 32768], stage_bytes = [16384, 16384], barrier_offset = 131072, smem_bytes = 131136>} {
  return
}

// -----

// expected-error @+2 {{expects buffer 0 [1024, 9216) not to overlap buffer 1 [0, 8192)}}
func.func @ring_overlap_reversed() attributes {
    a = #ggemm.ring_layout<stages = 2, offsets = [1024, 0], stage_bytes = [4096, 4096], barrier_offset = 16384, smem_bytes = 16416>} {
  return
}

// -----

// expected-error @+2 {{expects buffer 0 [8192, 16384) not to overlap the mbarriers [8192, 8224)}}
func.func @ring_overlap_barriers() attributes {
    a = #ggemm.ring_layout<stages = 2, offsets = [8192, 0], stage_bytes = [4096, 4096], barrier_offset = 8192, smem_bytes = 16416>} {
  return
}

// -----

// expected-error @+2 {{expects buffer 2 [8192, 12288) not to overlap the mbarriers [10240, 10256)}}
func.func @ring_overlap_third_buffer() attributes {
    a = #ggemm.ring_layout<stages = 1, offsets = [0, 4096, 8192], stage_bytes = [4096, 4096, 4096], barrier_offset = 10240, smem_bytes = 12288>} {
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

// expected-error @+1 {{expects an f32 or (INT8 products) i32 accumulator, got 'f16'}}
func.func @accumulator_f16(%a: !ggemm.accumulator<64x64xf16>) {
  return
}

// -----

// expected-error @+1 {{expected static shape}}
func.func @accumulator_dynamic(%a: !ggemm.accumulator<?x64xf32>) {
  return
}

// -----

// Ping-pong: two warpgroups on alternate tiles.
// expected-error @+2 {{expects 2 consumer warpgroups with pingpong (they take alternate tiles), got 1}}
func.func @tile_config_pingpong_one_warpgroup() attributes {
    a = #ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64, consumer_warpgroups = 1, pingpong = true>} {
  return
}

// -----

// Each ping-pong warpgroup computes a whole tile of one or two m64 blocks.
// expected-error @+2 {{expects block_m = 64 or 128 with pingpong (each consumer warpgroup computes a whole tile, one or two m64 row blocks), got 192}}
func.func @tile_config_pingpong_rows() attributes {
    a = #ggemm.tile_config<block_m = 192, block_n = 128, block_k = 64, pingpong = true>} {
  return
}

// -----

// Ping-pong consumers take one K block per step.
// expected-error @+2 {{expects promote_pairs without pingpong (the ping-pong consumers take one K block per step)}}
func.func @tile_config_pingpong_pairs() attributes {
    a = #ggemm.tile_config<block_m = 64, block_n = 128, block_k = 128, pingpong = true, promote_pairs = true>} {
  return
}

// -----

// expected-error @+2 {{expects no swap_ab with pingpong}}
func.func @tile_config_pingpong_swap() attributes {
    a = #ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, swap_ab = true, pingpong = true>} {
  return
}

// -----

// expected-error @+2 {{expects block_n in [8, 256] and a multiple of 8 (a wgmma N), got 260}}
func.func @tile_config_pingpong_cols() attributes {
    a = #ggemm.tile_config<block_m = 64, block_n = 260, block_k = 64, pingpong = true>} {
  return
}

// -----

// expected-error @+2 {{expects swizzle in [1, 64] (tiles per raster band), got 0}}
func.func @tile_config_swizzle_zero() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m, swizzle = 0>} {
  return
}

// -----

// expected-error @+2 {{expects swizzle in [1, 64] (tiles per raster band), got 65}}
func.func @tile_config_swizzle_wide() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, swizzle = 65>} {
  return
}

// -----

// expected-error @+2 {{expects swizzle > 1 with swizzle_min_tiles (it says which groups are walked in bands), got swizzle = 1}}
func.func @tile_config_swizzle_min_without_bands() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, swizzle_min_tiles = 48>} {
  return
}

// -----

// expected-error @+2 {{expects swizzle_min_tiles in [0, 2^20], got -1}}
func.func @tile_config_swizzle_min_negative() attributes {
    a = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, swizzle = 4, swizzle_min_tiles = -1>} {
  return
}
