// ggemm-select-config: a config the user wrote is kept; otherwise the
// heuristics (TileConfigHeuristics.cpp) pick one from N, K, the element type,
// the expected rows per group and the SM count.
// RUN: gemm-opt %s -split-input-file -ggemm-select-config | FileCheck %s
// RUN: gemm-opt %s -split-input-file -ggemm-select-config="num-sms=78 expected-rows=16" | FileCheck %s --check-prefix=SMALL
// RUN: gemm-opt %s -split-input-file -ggemm-select-config="expected-rows=512" | FileCheck %s --check-prefix=ROWS512
// RUN: not gemm-opt %s -ggemm-select-config=num-sms=0 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-SMS
// RUN: not gemm-opt %s -ggemm-select-config=expected-rows=-5 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-ROWS

// BAD-SMS: error: ggemm-select-config: expects num-sms >= 1 and expected-rows >= 0, got num-sms = 0, expected-rows = 0
// BAD-ROWS: error: ggemm-select-config: expects num-sms >= 1 and expected-rows >= 0, got num-sms = 132, expected-rows = -5

// A user config wins, even one the heuristics would never pick.
// CHECK-LABEL: func.func @user_config(
// CHECK: {config = #ggemm.tile_config<block_m = 64, block_n = 24, block_k = 64, stages = 1, consumer_warpgroups = 1, raster = along_m>}
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
// (measured faster for 128-row tiles). With 16 expected rows per
// group the tile becomes swap-AB: 24 token rows (16 + 30 %, rounded up to a
// multiple of 8) in wgmma's N, 128 weight rows in its M.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK: {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m>}
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
// CHECK: {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m>}
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
// elements, one scale block), at most 128 columns (the accumulator and the
// K block's product both live in registers), 6 stages of 2 x 16 KB tiles
// plus their scales.
// CHECK-LABEL: func.func @fp8(
// CHECK: config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128, stages = 6, raster = along_m>
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

// A seg_indptr of dynamic size gives an unknown group count, not a wrapped
// one (its size minus one used to overflow): with 512 rows per group
// expected, one group's 4 x 16 tiles of 128x256 already take a wave, so
// the narrower 128x128 tiles (8 x 32 of them, still one wave) win.
// CHECK-LABEL: func.func @dynamic_groups(
// CHECK: {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m>}
// ROWS512-LABEL: func.func @dynamic_groups(
// ROWS512: {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, stages = 6, raster = along_m>}
func.func @dynamic_groups(%x: memref<?x7168xbf16>, %w: memref<?x4096x7168xbf16>,
                          %indptr: memref<?xi32>, %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<?x4096x7168xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x4096xbf16>)
  return
}
