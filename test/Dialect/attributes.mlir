// Round trip of every ggemm attribute and type; parameters
// equal to their default are elided when printed.
// RUN: gemm-opt %s | gemm-opt | FileCheck %s
// RUN: gemm-opt %s --mlir-print-op-generic | gemm-opt | FileCheck %s

// CHECK-LABEL: func.func @weight_layout()
// CHECK-SAME: kn = #ggemm.weight_layout<kn>
// CHECK-SAME: nk = #ggemm.weight_layout<nk>
func.func @weight_layout() attributes {
    nk = #ggemm.weight_layout<nk>, kn = #ggemm.weight_layout<kn>} {
  return
}

// CHECK-LABEL: func.func @row_mapping()
// CHECK-SAME: masked = #ggemm.row_mapping<masked>
// CHECK-SAME: segment = #ggemm.row_mapping<segment>
// CHECK-SAME: uniform = #ggemm.row_mapping<uniform>
func.func @row_mapping() attributes {
    segment = #ggemm.row_mapping<segment>, masked = #ggemm.row_mapping<masked>,
    uniform = #ggemm.row_mapping<uniform>} {
  return
}

// CHECK-LABEL: func.func @epilogue()
// CHECK-SAME: all_defaults = #ggemm.epilogue<>
// CHECK-SAME: empty = #ggemm.epilogue<>
// CHECK-SAME: gelu_acc = #ggemm.epilogue<activation = gelu, accumulate = true>
// CHECK-SAME: only_acc = #ggemm.epilogue<accumulate = true>
// CHECK-SAME: relu = #ggemm.epilogue<activation = relu>
// CHECK-SAME: reordered = #ggemm.epilogue<activation = silu, accumulate = true>
// CHECK-SAME: silu = #ggemm.epilogue<activation = silu>
func.func @epilogue() attributes {
    empty = #ggemm.epilogue<>,
    all_defaults = #ggemm.epilogue<activation = none, accumulate = false>,
    relu = #ggemm.epilogue<activation = relu>,
    gelu_acc = #ggemm.epilogue<activation = gelu, accumulate = true>,
    silu = #ggemm.epilogue<activation = silu, accumulate = false>,
    only_acc = #ggemm.epilogue<accumulate = true>,
    reordered = #ggemm.epilogue<accumulate = true, activation = silu>} {
  return
}

// `0x0` is the tensor-wise block and `1x0` the per-row one; both print with
// their keyword.
// CHECK-LABEL: func.func @scale_block()
// CHECK-SAME: act = #ggemm.scale_block<1x128>
// CHECK-SAME: narrow = #ggemm.scale_block<1x32>
// CHECK-SAME: per_row = #ggemm.scale_block<per_row>
// CHECK-SAME: per_row_dims = #ggemm.scale_block<per_row>
// CHECK-SAME: tensor = #ggemm.scale_block<tensor>
// CHECK-SAME: tensor_dims = #ggemm.scale_block<tensor>
// CHECK-SAME: weight = #ggemm.scale_block<128x128>
func.func @scale_block() attributes {
    tensor = #ggemm.scale_block<tensor>, tensor_dims = #ggemm.scale_block<0x0>,
    per_row = #ggemm.scale_block<per_row>, per_row_dims = #ggemm.scale_block<1x0>,
    act = #ggemm.scale_block<1x128>, weight = #ggemm.scale_block<128x128>,
    narrow = #ggemm.scale_block<1x32>} {
  return
}

// CHECK-LABEL: func.func @tile_config()
// CHECK-SAME: all = #ggemm.tile_config<block_m = 64, block_n = 256, block_k = 128, stages = 2, consumer_warpgroups = 1, cluster_m = 2, cluster_n = 4, raster = along_m, swizzle = 8, swizzle_min_tiles = 3>
// CHECK-SAME: defaults = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>
// CHECK-SAME: minimal = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>
// CHECK-SAME: narrow = #ggemm.tile_config<block_m = 256, block_n = 8, block_k = 16, stages = 1>
// CHECK-SAME: pairs = #ggemm.tile_config<block_m = 16, block_n = 64, block_k = 128, consumer_warpgroups = 1, swap_ab = true, promote_pairs = true>
// CHECK-SAME: split = #ggemm.tile_config<block_m = 8, block_n = 64, block_k = 128, stages = 8, consumer_warpgroups = 1, swap_ab = true, split_k = 8>
// CHECK-SAME: swap = #ggemm.tile_config<block_m = 16, block_n = 128, block_k = 64, consumer_warpgroups = 1, swap_ab = true>
// CHECK-SAME: tail = #ggemm.tile_config<block_m = 192, block_n = 128, block_k = 128, consumer_warpgroups = 3, split_k = 2, split_k_tail = true>
// CHECK-SAME: wide = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 256, stages = 8, cluster_n = 2>
func.func @tile_config() attributes {
    minimal = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
    defaults = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, stages = 4,
                                  consumer_warpgroups = 2, swap_ab = false, cluster_m = 1,
                                  cluster_n = 1, raster = along_n, pingpong = false, swizzle = 1,
                                  swizzle_min_tiles = 0, promote_pairs = false>,
    all = #ggemm.tile_config<block_m = 64, block_n = 256, block_k = 128, stages = 2,
                             consumer_warpgroups = 1, swap_ab = false, cluster_m = 2,
                             cluster_n = 4, raster = along_m, pingpong = false, swizzle = 8,
                             swizzle_min_tiles = 3>,
    narrow = #ggemm.tile_config<block_m = 256, block_n = 8, block_k = 16, stages = 1>,
    wide = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 256, stages = 8,
                              cluster_n = 2>,
    swap = #ggemm.tile_config<block_m = 16, block_n = 128, block_k = 64,
                              consumer_warpgroups = 1, swap_ab = true>,
    pairs = #ggemm.tile_config<block_m = 16, block_n = 64, block_k = 128,
                               consumer_warpgroups = 1, swap_ab = true, promote_pairs = true>,
    split = #ggemm.tile_config<block_m = 8, block_n = 64, block_k = 128, stages = 8,
                               consumer_warpgroups = 1, swap_ab = true, split_k = 8>,
    tail = #ggemm.tile_config<block_m = 192, block_n = 128, block_k = 128,
                              consumer_warpgroups = 3, split_k = 2, split_k_tail = true>} {
  return
}

// Buffers in any order, stages padded to 1024 bytes, any number of tile
// buffers; the store staging of a staged epilogue and the split-K buffer
// are printed only when there is one, split_k_barriers only when the
// buffer overlays the ring (split_k_tail).
// CHECK-LABEL: func.func @ring_layout()
// CHECK-SAME: b_first = #ggemm.ring_layout<stages = 2, offsets = [65536, 0], stage_bytes = [8192, 32768], barrier_offset = 81920, smem_bytes = 81952>
// CHECK-SAME: ring = #ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 16384], barrier_offset = 131072, smem_bytes = 131136>
// CHECK-SAME: split = #ggemm.ring_layout<stages = 8, offsets = [0, 8192, 73728, 74752], stage_bytes = [1024, 8192, 128, 128], barrier_offset = 75776, smem_bytes = 90256, split_k_offset = 75904, split_k_bytes = 14352>
// CHECK-SAME: split_tail = #ggemm.ring_layout<stages = 4, offsets = [0, 98304], stage_bytes = [24576, 16384], barrier_offset = 163840, smem_bytes = 163936, split_k_offset = 0, split_k_bytes = 98304, split_k_barriers = 163904>
// CHECK-SAME: staged = #ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 32768], barrier_offset = 196608, smem_bytes = 230400, staging_offset = 197632, staging_bytes = 32768>
// CHECK-SAME: three = #ggemm.ring_layout<stages = 1, offsets = [0, 1024, 2048], stage_bytes = [1024, 1024, 1024], barrier_offset = 3072, smem_bytes = 3088>
func.func @ring_layout() attributes {
    staged = #ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 32768],
                                barrier_offset = 196608, smem_bytes = 230400,
                                staging_offset = 197632, staging_bytes = 32768>,
    ring = #ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 16384],
                              barrier_offset = 131072, smem_bytes = 131136>,
    b_first = #ggemm.ring_layout<stages = 2, offsets = [65536, 0], stage_bytes = [8192, 32768],
                                 barrier_offset = 81920, smem_bytes = 81952>,
    three = #ggemm.ring_layout<stages = 1, offsets = [0, 1024, 2048],
                               stage_bytes = [1024, 1024, 1024], barrier_offset = 3072,
                               smem_bytes = 3088>,
    split = #ggemm.ring_layout<stages = 8, offsets = [0, 8192, 73728, 74752],
                               stage_bytes = [1024, 8192, 128, 128], barrier_offset = 75776,
                               smem_bytes = 90256, split_k_offset = 75904,
                               split_k_bytes = 14352>,
    split_tail = #ggemm.ring_layout<stages = 4, offsets = [0, 98304],
                                    stage_bytes = [24576, 16384], barrier_offset = 163840,
                                    smem_bytes = 163936, split_k_offset = 0,
                                    split_k_bytes = 98304, split_k_barriers = 163904>} {
  return
}

// CHECK-LABEL: func.func @grid_policy()
// CHECK-SAME: persistent = #ggemm.grid_policy<persistent>, tiles = #ggemm.grid_policy<tiles>
func.func @grid_policy() attributes {persistent = #ggemm.grid_policy<persistent>,
                                     tiles = #ggemm.grid_policy<tiles>} {
  return
}

// CHECK-LABEL: func.func @accumulator(
// CHECK-SAME: %{{.*}}: !ggemm.accumulator<128x128xf32>, %{{.*}}: !ggemm.accumulator<64x256xf32>, %{{.*}}: !ggemm.accumulator<1x8xf32>)
func.func @accumulator(%a: !ggemm.accumulator<128x128xf32>, %b: !ggemm.accumulator<64x256xf32>,
                       %c: !ggemm.accumulator<1x8xf32>) {
  return
}

// CHECK-LABEL: func.func @tile_types(
// CHECK-SAME: %{{.*}}: !ggemm.tile<128x64xbf16>, %{{.*}}: !ggemm.tile<256x64xf16, mn_major>, %{{.*}}: !ggemm.tile<64x128xf8E4M3FN>, %{{.*}}: !ggemm.schedule, %{{.*}}: !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xf16, mn_major>>)
func.func @tile_types(%a: !ggemm.tile<128x64xbf16>, %b: !ggemm.tile<256x64xf16, mn_major>,
                      %c: !ggemm.tile<64x128xf8E4M3FN, k_major>, %s: !ggemm.schedule,
                      %r: !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xf16, mn_major>>) {
  return
}

// The staged epilogue's boxes (ggemm-tma-store).
// CHECK-LABEL: func.func @store_staging()
// CHECK-SAME: bf16 = #ggemm.store_staging<rows = 64, cols = 64, buffers = 2>
// CHECK-SAME: f32 = #ggemm.store_staging<rows = 64, cols = 32, buffers = 1>
func.func @store_staging() attributes {
    bf16 = #ggemm.store_staging<rows = 64, cols = 64, buffers = 2>,
    f32 = #ggemm.store_staging<rows = 64, cols = 32, buffers = 1>} {
  return
}
