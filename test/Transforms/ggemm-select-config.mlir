// ggemm-select-config: a config the user wrote is kept; otherwise the
// heuristics (TileConfigHeuristics.cpp) pick one from N, K, the element type,
// the expected rows per group and the SM count. With variants=true an op
// whose rows per group are unknown gets one function clone per tile variant
// and a dispatch rule in the module attribute ggemm.dispatch (VAR).
// RUN: gemm-opt %s -split-input-file -ggemm-select-config | FileCheck %s
// RUN: gemm-opt %s -split-input-file -ggemm-select-config="num-sms=78 expected-rows=16" | FileCheck %s --check-prefix=SMALL
// RUN: gemm-opt %s -split-input-file -ggemm-select-config="expected-rows=512" | FileCheck %s --check-prefix=ROWS512
// RUN: gemm-opt %s -split-input-file -ggemm-select-config="variants=true" | FileCheck %s --check-prefix=VAR
// RUN: gemm-opt %s -split-input-file -ggemm-select-config="variants=true expected-rows=512" | FileCheck %s --check-prefix=ROWS512
// RUN: not gemm-opt %s -ggemm-select-config=num-sms=0 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-SMS
// RUN: not gemm-opt %s -ggemm-select-config=expected-rows=-5 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-ROWS

// BAD-SMS: error: ggemm-select-config: expects num-sms >= 1 and expected-rows >= 0, got num-sms = 0, expected-rows = 0
// BAD-ROWS: error: ggemm-select-config: expects num-sms >= 1 and expected-rows >= 0, got num-sms = 132, expected-rows = -5

// A user config wins, even one the heuristics would never pick.
// CHECK-LABEL: func.func @user_config(
// CHECK: {config = #ggemm.tile_config<block_m = 64, block_n = 24, block_k = 64, stages = 1, consumer_warpgroups = 1, raster = along_m>}
// VAR-NOT: ggemm.dispatch
// VAR-LABEL: func.func @user_config(
// VAR: {config = #ggemm.tile_config<block_m = 64, block_n = 24, block_k = 64, stages = 1, consumer_warpgroups = 1, raster = along_m>}
// SMALL-LABEL: func.func @user_config(
// SMALL: {config = #ggemm.tile_config<block_m = 64, block_n = 24, block_k = 64, stages = 1, consumer_warpgroups = 1, raster = along_m>}
func.func @user_config(%x: memref<?x7168xbf16>, %w: memref<8x4096x7168xbf16>,
                       %indptr: memref<9xi32>, %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
      segments(%indptr : memref<9xi32>) outs(%y : memref<?x4096xbf16>)
      {config = #ggemm.tile_config<block_m = 64, block_n = 24, block_k = 64, stages = 1,
                                   consumer_warpgroups = 1, raster = along_m>}
  return
}

// -----

// Unknown rows per group: many rows are assumed, so the most efficient tile,
// 128x256 with 2 consumer warpgroups, and the deepest ring that fits 227 KB
// (4 stages of 48 KB, the default, not printed), walking tiles along m
// (measured faster for 128-row tiles), in bands of 4 column tiles for the
// groups of at least 48 row tiles (6144 rows; measured faster there and
// slower on smaller groups, NOTES v20). With 16 expected rows per
// group the tile becomes swap-AB: 24 token rows (16 + 30 %, rounded up to a
// multiple of 8) in wgmma's N, 128 weight rows in its M.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK: {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m, swizzle = 4, swizzle_min_tiles = 48>}
// With variants: the function is cloned once per distinct tile over the
// rows-per-group buckets (swap-AB with 24, 48 and 88 token rows up to 16,
// 32 and 64 rows per group, 128x256 above), each clone's op with its
// config, and the original is gone; the host launches dynamic_rows_v0 for
// at most 16 rows per group, ..., dynamic_rows_v3 above 64.
// VAR: module attributes {ggemm.dispatch = {dynamic_rows = {bounds = [16, 32, 64], rule = "rows_per_group", variants = ["dynamic_rows_v0", "dynamic_rows_v1", "dynamic_rows_v2", "dynamic_rows_v3"]}}}
// VAR-NOT: func.func @dynamic_rows(
// VAR-LABEL: func.func @dynamic_rows_v0(
// VAR-SAME: %[[X:.+]]: memref<?x7168xbf16>, %[[W:.+]]: memref<8x4096x7168xbf16>, %[[P:.+]]: memref<9xi32>, %[[Y:.+]]: memref<?x4096xbf16>)
// VAR: ggemm.segment_matmul ins(%[[X]], %[[W]] : {{.*}}) segments(%[[P]] : {{.*}}) outs(%[[Y]] : {{.*}}) {config = #ggemm.tile_config<block_m = 24, block_n = 128, block_k = 64, stages = 6, swap_ab = true>}
// VAR-LABEL: func.func @dynamic_rows_v3(
// VAR: {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m, swizzle = 4, swizzle_min_tiles = 48>}
// SMALL-LABEL: func.func @dynamic_rows(
// SMALL: {config = #ggemm.tile_config<block_m = 24, block_n = 128, block_k = 64, stages = 6, swap_ab = true>}
func.func @dynamic_rows(%x: memref<?x7168xbf16>, %w: memref<8x4096x7168xbf16>,
                        %indptr: memref<9xi32>, %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
      segments(%indptr : memref<9xi32>) outs(%y : memref<?x4096xbf16>)
  return
}

// -----

// 256 static rows over 8 segments: 32 rows per group on average, so swap-AB
// with token tiles of 32 + 30 % rounded up to 48, 128 weight rows in
// wgmma's M.
// CHECK-LABEL: func.func @static_rows(
// CHECK: {config = #ggemm.tile_config<block_m = 48, block_n = 128, block_k = 64, stages = 6, swap_ab = true>}
// Known rows per group: one config, variants or not.
// VAR-NOT: ggemm.dispatch
// VAR-LABEL: func.func @static_rows(
// VAR: {config = #ggemm.tile_config<block_m = 48, block_n = 128, block_k = 64, stages = 6, swap_ab = true>}
func.func @static_rows(%x: memref<256x7168xbf16>, %w: memref<8x4096x7168xbf16>,
                       %indptr: memref<9xi32>, %y: memref<256x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<256x7168xbf16>, memref<8x4096x7168xbf16>)
      segments(%indptr : memref<9xi32>) outs(%y : memref<256x4096xbf16>)
  return
}

// -----

// Masked decode: Mmax = 32 rows per group, so swap-AB with 32-row token
// tiles (no group has more); N = 200 stored N-major; K = 256 is only 4 K
// blocks, so no more than 4 stages.
// CHECK-LABEL: func.func @masked_kn(
// CHECK: {config = #ggemm.tile_config<block_m = 32, block_n = 128, block_k = 64, swap_ab = true>, weight_layout = #ggemm.weight_layout<kn>}
// With variants, Mmax = 32 bounds the valid rows: a 24-row swap-AB tile up
// to 16 rows per group, the 32-row one above.
// VAR: module attributes {ggemm.dispatch = {masked_kn = {bounds = [16], rule = "rows_per_group", variants = ["masked_kn_v0", "masked_kn_v1"]}}}
// VAR-LABEL: func.func @masked_kn_v0(
// VAR: {config = #ggemm.tile_config<block_m = 24, block_n = 128, block_k = 64, swap_ab = true>, weight_layout = #ggemm.weight_layout<kn>}
// VAR-LABEL: func.func @masked_kn_v1(
// VAR: {config = #ggemm.tile_config<block_m = 32, block_n = 128, block_k = 64, swap_ab = true>, weight_layout = #ggemm.weight_layout<kn>}
func.func @masked_kn(%x: memref<4x32x256xf16>, %w: memref<4x256x200xf16>,
                     %counts: memref<4xi32>, %y: memref<4x32x200xf16>) {
  ggemm.masked_matmul ins(%x, %w : memref<4x32x256xf16>, memref<4x256x200xf16>)
      masked_m(%counts : memref<4xi32>) outs(%y : memref<4x32x200xf16>)
      {weight_layout = #ggemm.weight_layout<kn>}
  return
}

// -----

// N = 384 on 66 batches of 128 rows: 256-wide tiles make exactly one wave
// of 132 tiles where 128-wide ones would leave the second wave half empty.
// CHECK-LABEL: func.func @wide_n(
// CHECK: {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m, swizzle = 4, swizzle_min_tiles = 48>}
func.func @wide_n(%x: memref<66x128x256xbf16>, %w: memref<66x384x256xbf16>,
                  %y: memref<66x128x384xbf16>) {
  ggemm.batched_matmul ins(%x, %w : memref<66x128x256xbf16>, memref<66x384x256xbf16>)
      outs(%y : memref<66x128x384xbf16>)
  return
}

// -----

// Batched rows are known from the shape (expected-rows does not apply);
// K = 64 is a single K block: 2 stages.
// CHECK-LABEL: func.func @small_k(
// CHECK: {config = #ggemm.tile_config<block_m = 128, block_n = 64, block_k = 64, stages = 2, raster = along_m>}
// SMALL-LABEL: func.func @small_k(
// SMALL: {config = #ggemm.tile_config<block_m = 128, block_n = 64, block_k = 64, stages = 2, raster = along_m>}
func.func @small_k(%x: memref<4x100x64xbf16>, %w: memref<4x64x64xbf16>,
                   %y: memref<4x100x64xf32>) {
  ggemm.batched_matmul ins(%x, %w : memref<4x100x64xbf16>, memref<4x64x64xbf16>)
      outs(%y : memref<4x100x64xf32>)
  return
}

// -----

// FP8 with block scales: block_k = 128 (one 128-byte swizzle row of 1-byte
// elements, one scale block), at most 192 columns (the accumulator and the
// K block's product both live in registers: 2 x 96 per thread); on large
// groups the 128x192 tile's work as 192x128 over three consumer warpgroups
// (2 x 64 registers each), 4 stages of 24 + 16 KB tiles plus their scales
// (the default, not printed), walked along n (the default).
// CHECK-LABEL: func.func @fp8(
// CHECK: config = #ggemm.tile_config<block_m = 192, block_n = 128, block_k = 128, consumer_warpgroups = 3>
func.func @fp8(%x: memref<?x7168xf8E4M3FN>, %w: memref<8x4096x7168xf8E4M3FN>,
               %indptr: memref<9xi32>, %xs: memref<?x56xf32>, %ws: memref<8x32x56xf32>,
               %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xf8E4M3FN>, memref<8x4096x7168xf8E4M3FN>)
      segments(%indptr : memref<9xi32>) scales(%xs, %ws : memref<?x56xf32>, memref<8x32x56xf32>)
      outs(%y : memref<?x4096xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

// The same tiles where a group's weights reach 32 MiB (7168 x 16384 bytes,
// 112 MiB): bands of 4 row tiles, so that a wave of CTAs does not read the
// whole weight matrix (bench/NOTES.md v38).
// CHECK-LABEL: func.func @fp8_large_weights(
// CHECK: config = #ggemm.tile_config<block_m = 192, block_n = 128, block_k = 128, consumer_warpgroups = 3, swizzle = 4>
func.func @fp8_large_weights(%x: memref<?x16384xf8E4M3FN>, %w: memref<1x7168x16384xf8E4M3FN>,
               %indptr: memref<2xi32>, %xs: memref<?x128xf32>, %ws: memref<1x56x128xf32>,
               %y: memref<?x7168xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x16384xf8E4M3FN>, memref<1x7168x16384xf8E4M3FN>)
      segments(%indptr : memref<2xi32>) scales(%xs, %ws : memref<?x128xf32>, memref<1x56x128xf32>)
      outs(%y : memref<?x7168xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

// N = 1024: 6 tiles of 192 columns pad 128 of them; 8 of 128 cost less.
// CHECK-LABEL: func.func @fp8_narrow(
// CHECK: config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128, stages = 6, raster = along_m>
func.func @fp8_narrow(%x: memref<?x1024xf8E4M3FN>, %w: memref<8x1024x1024xf8E4M3FN>,
                      %indptr: memref<9xi32>, %xs: memref<?x8xf32>, %ws: memref<8x8x8xf32>,
                      %y: memref<?x1024xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x1024xf8E4M3FN>, memref<8x1024x1024xf8E4M3FN>)
      segments(%indptr : memref<9xi32>) scales(%xs, %ws : memref<?x8xf32>, memref<8x8x8xf32>)
      outs(%y : memref<?x1024xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

// FP8 with per-row (or tensor-wise) scales has no promotion: the bf16
// path's 128x256 tile, K blocks of 128.
// CHECK-LABEL: func.func @fp8_per_row(
// CHECK: config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 128, raster = along_m>
func.func @fp8_per_row(%x: memref<?x7168xf8E4M3FN>, %w: memref<8x4096x7168xf8E4M3FN>,
                       %indptr: memref<9xi32>, %xs: memref<?xf32>, %ws: memref<8x4096xf32>,
                       %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xf8E4M3FN>, memref<8x4096x7168xf8E4M3FN>)
      segments(%indptr : memref<9xi32>) scales(%xs, %ws : memref<?xf32>, memref<8x4096xf32>)
      outs(%y : memref<?x4096xbf16>)
      {x_scale_block = #ggemm.scale_block<per_row>, w_scale_block = #ggemm.scale_block<per_row>}
  return
}

// -----

// FP8 decode, one group of 16 tokens: swap-AB, 64 weight rows on one
// consumer warpgroup (twice the CTAs of 128), and two K blocks per wgmma
// wait (promote_pairs: up to 1.16x on such tiles, bench/NOTES.md v23).
// Its 33 tiles split their 56 K blocks over clusters of 3 CTAs (split_k):
// 4 would fill all 132 SMs, but 33 clusters of 4 do not fit 8 GPCs of 16
// SMs (bench/NOTES.md v35).
// With 512 rows expected, 128x64 tiles, also narrow enough for pairs.
// CHECK-LABEL: func.func @fp8_decode(
// CHECK: config = #ggemm.tile_config<block_m = 16, block_n = 64, block_k = 128, stages = 8, consumer_warpgroups = 1, swap_ab = true, promote_pairs = true, split_k = 3>
// ROWS512-LABEL: func.func @fp8_decode(
// ROWS512: config = #ggemm.tile_config<block_m = 128, block_n = 64, block_k = 128, stages = 8, raster = along_m, promote_pairs = true>
func.func @fp8_decode(%x: memref<16x7168xf8E4M3FN>, %w: memref<1x2112x7168xf8E4M3FN>,
                      %indptr: memref<2xi32>, %xs: memref<16x56xf32>, %ws: memref<1x17x56xf32>,
                      %y: memref<16x2112xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<16x7168xf8E4M3FN>, memref<1x2112x7168xf8E4M3FN>)
      segments(%indptr : memref<2xi32>) scales(%xs, %ws : memref<16x56xf32>, memref<1x17x56xf32>)
      outs(%y : memref<16x2112xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

// FP8 decode, one group of 64 tokens at N = 2112: 64x16 tiles on one
// consumer warpgroup, 132 CTAs where the swap-AB tile of 64 weight rows
// makes 33 (1.23-1.33x on an H100, bench/NOTES.md v25), with pairs. With
// 512 rows expected, 128x64 tiles as above.
// CHECK-LABEL: func.func @fp8_decode_64_rows(
// CHECK: config = #ggemm.tile_config<block_m = 64, block_n = 16, block_k = 128, stages = 8, consumer_warpgroups = 1, promote_pairs = true>
// ROWS512-LABEL: func.func @fp8_decode_64_rows(
// ROWS512: config = #ggemm.tile_config<block_m = 128, block_n = 64, block_k = 128, stages = 8, raster = along_m, promote_pairs = true>
func.func @fp8_decode_64_rows(%x: memref<64x7168xf8E4M3FN>, %w: memref<1x2112x7168xf8E4M3FN>,
                              %indptr: memref<2xi32>, %xs: memref<64x56xf32>, %ws: memref<1x17x56xf32>,
                              %y: memref<64x2112xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<64x7168xf8E4M3FN>, memref<1x2112x7168xf8E4M3FN>)
      segments(%indptr : memref<2xi32>) scales(%xs, %ws : memref<64x56xf32>, memref<1x17x56xf32>)
      outs(%y : memref<64x2112xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

// FP8 decode at N = 576: 9 tiles of 64 weight rows, each split over a
// cluster of 8 CTAs (7 K blocks each), the most a portable cluster takes.
// Short K (4 blocks) is not split: each CTA keeps at least 4 K blocks.
// CHECK-LABEL: func.func @fp8_split_k(
// CHECK: config = #ggemm.tile_config<block_m = 8, block_n = 64, block_k = 128, stages = 8, consumer_warpgroups = 1, swap_ab = true, promote_pairs = true, split_k = 8>
// CHECK-LABEL: func.func @fp8_short_k(
// CHECK: config = #ggemm.tile_config<block_m = 8, block_n = 64, block_k = 128, consumer_warpgroups = 1, swap_ab = true, promote_pairs = true>
func.func @fp8_split_k(%x: memref<1x7168xf8E4M3FN>, %w: memref<1x576x7168xf8E4M3FN>,
                       %indptr: memref<2xi32>, %xs: memref<1x56xf32>, %ws: memref<1x5x56xf32>,
                       %y: memref<1x576xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<1x7168xf8E4M3FN>, memref<1x576x7168xf8E4M3FN>)
      segments(%indptr : memref<2xi32>) scales(%xs, %ws : memref<1x56xf32>, memref<1x5x56xf32>)
      outs(%y : memref<1x576xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}
func.func @fp8_short_k(%x: memref<1x512xf8E4M3FN>, %w: memref<1x576x512xf8E4M3FN>,
                       %indptr: memref<2xi32>, %xs: memref<1x4xf32>, %ws: memref<1x5x4xf32>,
                       %y: memref<1x576xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<1x512xf8E4M3FN>, memref<1x576x512xf8E4M3FN>)
      segments(%indptr : memref<2xi32>) scales(%xs, %ws : memref<1x4xf32>, memref<1x5x4xf32>)
      outs(%y : memref<1x576xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

// FP8, one group of 128 tokens at N = 24576: 128 tiles of 128x192 fill one
// wave of 132 SMs; as 192x128 over three consumer warpgroups they would be
// 192 tiles, two waves, so the tile stays 128x192 on two.
// CHECK-LABEL: func.func @fp8_one_wave(
// CHECK: config = #ggemm.tile_config<block_m = 128, block_n = 192, block_k = 128, stages = 5, raster = along_m>
func.func @fp8_one_wave(%x: memref<128x1536xf8E4M3FN>, %w: memref<1x24576x1536xf8E4M3FN>,
                        %indptr: memref<2xi32>, %xs: memref<128x12xf32>, %ws: memref<1x192x12xf32>,
                        %y: memref<128x24576xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<128x1536xf8E4M3FN>, memref<1x24576x1536xf8E4M3FN>)
      segments(%indptr : memref<2xi32>) scales(%xs, %ws : memref<128x12xf32>, memref<1x192x12xf32>)
      outs(%y : memref<128x24576xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

// A seg_indptr of dynamic size gives an unknown group count, not a wrapped
// one (its size minus one used to overflow). Without a group count the wave
// model has nothing to count, so even with 512 rows per group expected the
// widest tile wins (it once counted one group and picked 128x128).
// CHECK-LABEL: func.func @dynamic_groups(
// CHECK: {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m, swizzle = 4, swizzle_min_tiles = 48>}
// ROWS512-LABEL: func.func @dynamic_groups(
// ROWS512: {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m, swizzle = 4, swizzle_min_tiles = 48>}
// With variants: swap-AB up to 64 rows per group (24, 48 and 88 token
// rows), 128x256 above.
// VAR: module attributes {ggemm.dispatch = {dynamic_groups = {bounds = [16, 32, 64], rule = "rows_per_group", variants = ["dynamic_groups_v0", "dynamic_groups_v1", "dynamic_groups_v2", "dynamic_groups_v3"]}}}
// VAR-LABEL: func.func @dynamic_groups_v0(
// VAR: block_m = 24, block_n = 128, block_k = 64, stages = 6, swap_ab = true
// VAR-LABEL: func.func @dynamic_groups_v1(
// VAR: block_m = 48, block_n = 128, block_k = 64, stages = 6, swap_ab = true
// VAR-LABEL: func.func @dynamic_groups_v2(
// VAR: block_m = 88, block_n = 128, block_k = 64, stages = 6, swap_ab = true
// VAR-LABEL: func.func @dynamic_groups_v3(
// VAR: block_m = 128, block_n = 256
func.func @dynamic_groups(%x: memref<?x7168xbf16>, %w: memref<?x4096x7168xbf16>,
                          %indptr: memref<?xi32>, %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<?x4096x7168xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x4096xbf16>)
  return
}

// -----

// Masked decode with a dynamic Mmax: the valid rows are unknown. Without
// variants one config for many rows; with them swap-AB tiles serve up to
// 64 rows per group.
// CHECK-LABEL: func.func @masked_decode(
// CHECK: {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m, swizzle = 4, swizzle_min_tiles = 48>}
// VAR: module attributes {ggemm.dispatch = {masked_decode = {bounds = [16, 32, 64], rule = "rows_per_group", variants = ["masked_decode_v0", "masked_decode_v1", "masked_decode_v2", "masked_decode_v3"]}}}
// VAR-LABEL: func.func @masked_decode_v0(
// VAR: ggemm.masked_matmul {{.*}} {config = #ggemm.tile_config<block_m = 24, block_n = 128, block_k = 64, stages = 6, swap_ab = true>}
// VAR-LABEL: func.func @masked_decode_v3(
// VAR: ggemm.masked_matmul {{.*}} {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m, swizzle = 4, swizzle_min_tiles = 48>}
func.func @masked_decode(%x: memref<32x?x7168xbf16>, %w: memref<32x4096x7168xbf16>,
                         %counts: memref<32xi32>, %y: memref<32x?x4096xbf16>) {
  ggemm.masked_matmul ins(%x, %w : memref<32x?x7168xbf16>, memref<32x4096x7168xbf16>)
      masked_m(%counts : memref<32xi32>) outs(%y : memref<32x?x4096xbf16>)
  return
}

// -----

// The op's expected_m is the rows per group: one config, chosen for 16 rows
// (swap-AB, 24 token rows), with or without variants, and it wins over the
// pass's expected-rows (ROWS512 would pick 128-row tiles).
// CHECK-LABEL: func.func @masked_expected_m(
// CHECK: block_m = 24, block_n = 128, block_k = 64, stages = 6, swap_ab = true
// VAR-NOT: ggemm.dispatch
// VAR-LABEL: func.func @masked_expected_m(
// VAR: block_m = 24, block_n = 128, block_k = 64, stages = 6, swap_ab = true
// ROWS512-LABEL: func.func @masked_expected_m(
// ROWS512: block_m = 24, block_n = 128, block_k = 64, stages = 6, swap_ab = true
func.func @masked_expected_m(%x: memref<32x4096x7168xbf16>, %w: memref<32x4096x7168xbf16>,
                             %counts: memref<32xi32>, %y: memref<32x4096x4096xbf16>) {
  ggemm.masked_matmul ins(%x, %w : memref<32x4096x7168xbf16>, memref<32x4096x7168xbf16>)
      masked_m(%counts : memref<32xi32>) outs(%y : memref<32x4096x4096xbf16>)
      {expected_m = 16}
  return
}

// -----

// expected_m = 512 on a segment op wins over expected-rows=16 (SMALL, which
// alone gives 64x128 tiles).
// SMALL-LABEL: func.func @segment_expected_m(
// SMALL: block_m = 128, block_n = 256
// VAR-LABEL: func.func @segment_expected_m(
// VAR: block_m = 128, block_n = 256
func.func @segment_expected_m(%x: memref<?x7168xbf16>, %w: memref<8x4096x7168xbf16>,
                              %indptr: memref<9xi32>, %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
      segments(%indptr : memref<9xi32>) outs(%y : memref<?x4096xbf16>) {expected_m = 512}
  return
}

// -----

// A dynamic batch M: swap-AB with 24, 48 and 88 token rows up to 16, 32
// and 64 rows, then 128x64 up to 256 (4 batches of N = 384: the wave model
// prefers narrow tiles) and 128x128 above.
// VAR: module attributes {ggemm.dispatch = {batched_dynamic = {bounds = [16, 32, 64, 256], rule = "rows_per_group", variants = ["batched_dynamic_v0", "batched_dynamic_v1", "batched_dynamic_v2", "batched_dynamic_v3", "batched_dynamic_v4"]}}}
// VAR-LABEL: func.func @batched_dynamic_v0(
// VAR: block_m = 24, block_n = 128, block_k = 64, swap_ab = true
// VAR-LABEL: func.func @batched_dynamic_v3(
// VAR: block_m = 128, block_n = 64
// VAR-LABEL: func.func @batched_dynamic_v4(
// VAR: block_m = 128, block_n = 128
func.func @batched_dynamic(%x: memref<4x?x256xbf16>, %w: memref<4x384x256xbf16>,
                           %y: memref<4x?x384xbf16>) {
  ggemm.batched_matmul ins(%x, %w : memref<4x?x256xbf16>, memref<4x384x256xbf16>)
      outs(%y : memref<4x?x384xbf16>)
  return
}

// -----

// Functions the clones cannot replace keep one config per op: one with two
// problem ops (its variants would multiply), and one that is called (the
// caller could not choose). A clone whose name is taken is renamed.
// VAR: module attributes {ggemm.dispatch = {taken = {bounds = [16, 32, 64], rule = "rows_per_group", variants = ["taken_v0_0", "taken_v1", "taken_v2", "taken_v3"]}}}
// VAR-LABEL: func.func @taken_v0_0(
// VAR: block_m = 24, block_n = 128
// VAR-LABEL: func.func @taken_v3(
// VAR: block_m = 128, block_n = 256
// VAR-LABEL: func.func private @taken_v0()
// VAR-LABEL: func.func @two_ops(
// VAR: block_m = 128, block_n = 256
// VAR: block_m = 128, block_n = 256
// VAR-LABEL: func.func @called(
// VAR: block_m = 128, block_n = 256
// VAR-LABEL: func.func @caller(
// VAR: call @called(
func.func @taken(%x: memref<?x7168xbf16>, %w: memref<8x4096x7168xbf16>,
                 %indptr: memref<9xi32>, %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
      segments(%indptr : memref<9xi32>) outs(%y : memref<?x4096xbf16>)
  return
}
func.func private @taken_v0()
func.func @two_ops(%x: memref<?x7168xbf16>, %w: memref<8x4096x7168xbf16>,
                   %indptr: memref<9xi32>, %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
      segments(%indptr : memref<9xi32>) outs(%y : memref<?x4096xbf16>)
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
      segments(%indptr : memref<9xi32>) outs(%y : memref<?x4096xbf16>)
  return
}
func.func @called(%x: memref<?x7168xbf16>, %w: memref<8x4096x7168xbf16>,
                  %indptr: memref<9xi32>, %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
      segments(%indptr : memref<9xi32>) outs(%y : memref<?x4096xbf16>)
  return
}
func.func @caller(%x: memref<?x7168xbf16>, %w: memref<8x4096x7168xbf16>,
                  %indptr: memref<9xi32>, %y: memref<?x4096xbf16>) {
  func.call @called(%x, %w, %indptr, %y)
      : (memref<?x7168xbf16>, memref<8x4096x7168xbf16>, memref<9xi32>, memref<?x4096xbf16>) -> ()
  return
}

// -----

// K-ragged (segment_matmul_k): the output per group is fixed (N x K of
// dw), the rows per group are the reduction. chooseKRaggedTileConfig never
// swaps AB (small outputs take the unswapped tile for many rows), and the
// pass's expected-rows, a hint of tokens per group, does not change it.
// Its tiles keep the plain raster (no swizzle: not measured for K-ragged).
// CHECK-LABEL: func.func @k_ragged(
// CHECK: ggemm.segment_matmul_k {{.+}} {accumulate, config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m>}
// CHECK: ggemm.segment_matmul_k {{.+}} {config = #ggemm.tile_config<block_m = 128, block_n = 64, block_k = 64, stages = 6, raster = along_m>}
// SMALL-LABEL: func.func @k_ragged(
// SMALL: ggemm.segment_matmul_k {{.+}} {accumulate, config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m>}
// SMALL: ggemm.segment_matmul_k {{.+}} {config = #ggemm.tile_config<block_m = 128, block_n = 64, block_k = 64, stages = 6, raster = along_m>}
func.func @k_ragged(%dy: memref<?x4096xbf16>, %x: memref<?x7168xbf16>, %indptr: memref<9xi32>,
                    %dw: memref<8x4096x7168xf32>, %dys: memref<?x32xbf16>, %xs: memref<?x64xbf16>,
                    %dws: memref<8x32x64xbf16>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x4096xbf16>, memref<?x7168xbf16>)
      segments(%indptr : memref<9xi32>) outs(%dw : memref<8x4096x7168xf32>) {accumulate}
  ggemm.segment_matmul_k ins(%dys, %xs : memref<?x32xbf16>, memref<?x64xbf16>)
      segments(%indptr : memref<9xi32>) outs(%dws : memref<8x32x64xbf16>)
  return
}

// -----

// A gated (swiglu) or gathered program has no swapped form: few rows per
// group get a 64-row tile on one consumer warpgroup, not swap-AB.
// CHECK-LABEL: func.func @gated_small_groups
// CHECK: ggemm.segment_matmul
// CHECK-SAME: config = #ggemm.tile_config<block_m = 64, block_n = {{[0-9]+}}, block_k = 64, stages = {{[0-9]+}}, consumer_warpgroups = 1, raster = along_m>
func.func @gated_small_groups(%x: memref<?x2048xbf16>, %w: memref<128x1536x2048xbf16>,
                              %indptr: memref<129xi32>, %ri: memref<?xi32>,
                              %y: memref<?x768xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x2048xbf16>, memref<128x1536x2048xbf16>)
      segments(%indptr : memref<129xi32>) row_indices(%ri : memref<?xi32>)
      outs(%y : memref<?x768xbf16>)
      {epilogue = #ggemm.epilogue<activation = swiglu>, expected_m = 16}
  return
}

// -----

// Interleaved gate/up blocks of 64 rows: every tile is one block, block_n =
// 128, whatever N says; block_m follows the rows as usual (128 for unknown
// rows, 64 on one warpgroup for small groups), so the variants differ in
// block_m only.
// CHECK-LABEL: func.func @interleaved_gate_up
// CHECK: config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, stages = 6, raster = along_m>
// SMALL-LABEL: func.func @interleaved_gate_up
// SMALL: config = #ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64, stages = 6, consumer_warpgroups = 1, raster = along_m>
// VAR: module attributes {ggemm.dispatch = {interleaved_gate_up = {bounds = [64], rule = "rows_per_group", variants = ["interleaved_gate_up_v0", "interleaved_gate_up_v1"]}}}
// VAR-LABEL: func.func @interleaved_gate_up_v0(
// VAR: config = #ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64, stages = 6, consumer_warpgroups = 1, raster = along_m>
// VAR-LABEL: func.func @interleaved_gate_up_v1(
// VAR: config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, stages = 6, raster = along_m>
func.func @interleaved_gate_up(%x: memref<?x7168xbf16>, %w: memref<256x4096x7168xbf16>,
                               %indptr: memref<257xi32>, %ri: memref<?xi32>,
                               %y: memref<?x2048xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<256x4096x7168xbf16>)
      segments(%indptr : memref<257xi32>) row_indices(%ri : memref<?xi32>)
      outs(%y : memref<?x2048xbf16>)
      {epilogue = #ggemm.epilogue<activation = swiglu, gate_up_block = 64>}
  return
}
