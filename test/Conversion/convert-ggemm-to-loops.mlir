// RUN: gemm-opt %s -split-input-file -verify-diagnostics -convert-ggemm-to-loops | FileCheck %s
// RUN: gemm-opt %s -split-input-file -verify-diagnostics -convert-ggemm-to-loops=num-ctas=5 | FileCheck %s --check-prefix=CTAS5
// RUN: not gemm-opt %s -split-input-file -convert-ggemm-to-loops=num-ctas=0 2>&1 | FileCheck %s --check-prefix=ZERO

// The structure of the CPU reference: a persistent loop over a simulated
// grid of CTAs, the shared tile schedule read from seg_indptr, an f32
// accumulator filled with masked loads, a masked epilogue store.

// ZERO: error: 'ggemm.foreach_tile' op expects num-ctas to be positive, got 0

// CHECK-LABEL: func.func @segment_persistent(
// CHECK-SAME: %[[X:.+]]: memref<?x256xbf16>, %[[W:.+]]: memref<4x128x256xbf16>, %[[ROWS:.+]]: memref<5xi32>, %[[IDX:.+]]: memref<4xi32>, %[[BIAS:.+]]: memref<4x128xf32>, %[[Y:.+]]: memref<?x128xbf16>)
// The accumulator lives outside the tile loops.
// CHECK-NEXT: %[[ACC:.+]] = memref.alloca() : memref<64x64xf32>
// CHECK-NOT: ggemm.
// CHECK: %[[NUM_CTAS:.+]] = arith.constant 3 : index
// CHECK: scf.for %[[CTA:[a-z0-9_]+]] = %{{.+}} to %[[NUM_CTAS]] step
// Each CTA counts the tiles from seg_indptr, as on the GPU.
// CHECK: %[[TOTAL:.+]] = scf.for
// CHECK: memref.load %[[ROWS]]
// CHECK: arith.index_cast %{{.+}} : i32 to index
// CHECK: scf.yield
// CHECK: scf.for %[[TILE:[a-z0-9_]+]] = %[[CTA]] to %[[TOTAL]] step %[[NUM_CTAS]] {
// TileSchedule::mapTile: find the group holding the tile id.
// CHECK: %[[FOUND:.+]]:3 = scf.for
// CHECK: arith.cmpi ule, %{{.+}}, %[[TILE]]
// CHECK: arith.cmpi ult, %[[TILE]],
// tile_mma: the weight of the group, then i, j, k-blocks and k.
// CHECK: %[[NUM_ROWS:.+]] = memref.dim %[[X]], %{{.+}} : memref<?x256xbf16>
// CHECK: %[[K:.+]] = memref.dim %[[X]], %{{.+}} : memref<?x256xbf16>
// CHECK: %[[N:.+]] = memref.dim %[[W]], %{{.+}} : memref<4x128x256xbf16>
// CHECK: %[[WIDX_I32:.+]] = memref.load %[[IDX]][%[[FOUND]]#0]
// CHECK: %[[WIDX:.+]] = arith.index_cast %[[WIDX_I32]] : i32 to index
// CHECK: scf.for %[[I:[a-z0-9_]+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[R:.+]] = arith.addi %{{.+}}, %[[I]]
// CHECK: %[[ROW_OK:.+]] = arith.cmpi ult, %[[R]], %[[NUM_ROWS]]
// CHECK: scf.for %[[J:[a-z0-9_]+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[C:.+]] = arith.addi %{{.+}}, %[[J]]
// CHECK: %[[COL_OK:.+]] = arith.cmpi ult, %[[C]], %[[N]]
// CHECK: %[[IN_TILE:.+]] = arith.andi %[[ROW_OK]], %[[COL_OK]]
// CHECK: %[[SUM:.+]] = scf.for %{{.+}} iter_args(%{{.+}}) -> (f32) {
// CHECK: scf.for %[[KK:[a-z0-9_]+]] = {{.+}} -> (f32) {
// CHECK: %[[KI:.+]] = arith.addi %{{.+}}, %[[KK]]
// CHECK: %[[K_OK:.+]] = arith.cmpi ult, %[[KI]], %[[K]]
// CHECK: %[[VALID:.+]] = arith.andi %[[IN_TILE]], %[[K_OK]]
// CHECK: scf.if %[[VALID]] -> (f32) {
// CHECK: %[[A:.+]] = memref.load %[[X]][%[[R]], %[[KI]]]
// CHECK: %[[AF:.+]] = arith.extf %[[A]] : bf16 to f32
// CHECK: %[[B:.+]] = memref.load %[[W]][%[[WIDX]], %[[C]], %[[KI]]]
// CHECK: %[[BF:.+]] = arith.extf %[[B]] : bf16 to f32
// CHECK: arith.mulf %[[AF]], %[[BF]] : f32
// CHECK: } else {
// CHECK: memref.store %[[SUM]], %[[ACC]][%[[I]], %[[J]]]
// tile_store: rows [row, min(row + 64, row_end)), cols [col, min(col + 64, N)).
// CHECK: %[[YN:.+]] = memref.dim %[[Y]]
// CHECK: %[[BIAS_W_I32:.+]] = memref.load %[[IDX]][%[[FOUND]]#0]
// CHECK: %[[BIAS_W:.+]] = arith.index_cast %[[BIAS_W_I32]] : i32 to index
// CHECK: %[[ROW_LIMIT:.+]] = arith.minsi
// CHECK: %[[COL_LIMIT:.+]] = arith.minsi %{{.+}}, %[[YN]]
// CHECK: scf.for %[[YR:[a-z0-9_]+]] = %{{.+}} to %[[ROW_LIMIT]] step
// CHECK: scf.for %[[YC:[a-z0-9_]+]] = %{{.+}} to %[[COL_LIMIT]] step
// CHECK: %[[V:.+]] = memref.load %[[ACC]]
// CHECK: %[[BV:.+]] = memref.load %[[BIAS]][%[[BIAS_W]], %[[YC]]]
// CHECK: %[[VB:.+]] = arith.addf %[[V]], %[[BV]]
// CHECK: math.erf
// CHECK: %[[OUT:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK: memref.store %[[OUT]], %[[Y]][%[[YR]], %[[YC]]]
// CHECK-NOT: ggemm.
// CHECK: return

// CTAS5-LABEL: func.func @segment_persistent(
// CTAS5: %[[NUM_CTAS:.+]] = arith.constant 5 : index
// CTAS5: scf.for %[[CTA:[a-z0-9_]+]] = %{{.+}} to %[[NUM_CTAS]] step
// CTAS5: scf.for %{{.+}} = %[[CTA]] to %{{.+}} step %[[NUM_CTAS]] {
func.func @segment_persistent(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %rows: memref<5xi32>, %idx: memref<4xi32>, %bias: memref<4x128xf32>,
    %y: memref<?x128xbf16>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %m = memref.dim %x, %c0 : memref<?x256xbf16>
  ggemm.foreach_tile segment rows(%rows : memref<5xi32>) groups(%c4)
      rows_per_group(%c0) num_rows(%m) num_cols(%c128)
      config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, stages = 2, consumer_warpgroups = 1>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        weight_indices(%idx : memref<4xi32>) group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, stages = 2, consumer_warpgroups = 1>,
         weight_layout = #ggemm.weight_layout<nk>}
        -> !ggemm.accumulator<64x64xf32>
    ggemm.tile_store %acc to %y weight_indices(%idx : memref<4xi32>)
        bias(%bias : memref<4x128xf32>) group(%g) row(%row) row_end(%row_end)
        col(%col) {epilogue = #ggemm.epilogue<activation = gelu>}
        : !ggemm.accumulator<64x64xf32>, memref<?x128xbf16>
  }
  return
}

// -----

// Masked rows: counts (i64) clamped to [0, rows_per_group]; an N-major
// (kn) weight; row_scale, silu and accumulate into an f32 output.

// CHECK-LABEL: func.func @masked_kn(
// CHECK-SAME: %[[X:.+]]: memref<256x256xf16>, %[[W:.+]]: memref<4x256x128xf16>, %[[COUNTS:.+]]: memref<4xi64>, %[[RS:.+]]: memref<256xf32>, %[[Y:.+]]: memref<256x128xf32>)
// CHECK: %[[ACC:.+]] = memref.alloca() : memref<64x64xf32>
// CHECK: %[[C64:.+]] = arith.constant 64 : index
// CHECK: scf.for
// CHECK: %[[COUNT_I64:.+]] = memref.load %[[COUNTS]]
// CHECK: %[[COUNT:.+]] = arith.index_cast %[[COUNT_I64]] : i64 to index
// CHECK: %[[NON_NEG:.+]] = arith.maxsi %[[COUNT]], %{{.+}} : index
// CHECK: arith.minsi %[[NON_NEG]], %[[C64]] : index
// CHECK: %[[FOUND:.+]]:3 = scf.for
// CHECK: scf.if %{{.+}} -> (f32) {
// CHECK: memref.load %[[X]]
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: memref.load %[[W]][%[[FOUND]]#0, %{{.+}}, %{{.+}}] : memref<4x256x128xf16>
// CHECK: scf.for %[[YR:[a-z0-9_]+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[SCALE:.+]] = memref.load %[[RS]][%[[YR]]]
// CHECK: scf.for %[[YC:[a-z0-9_]+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[V:.+]] = memref.load %[[ACC]]
// CHECK: %[[OLD:.+]] = memref.load %[[Y]][%[[YR]], %[[YC]]]
// CHECK: math.exp
// CHECK: %[[SILU:.+]] = arith.divf %[[V]], %{{.+}} : f32
// CHECK: %[[SCALED:.+]] = arith.mulf %[[SILU]], %[[SCALE]] : f32
// CHECK: %[[SUM:.+]] = arith.addf %[[SCALED]], %[[OLD]] : f32
// CHECK-NOT: arith.truncf
// CHECK: memref.store %[[SUM]], %[[Y]][%[[YR]], %[[YC]]]
func.func @masked_kn(%x: memref<256x256xf16>, %w: memref<4x256x128xf16>,
    %counts: memref<4xi64>, %rs: memref<256xf32>, %y: memref<256x128xf32>) {
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  ggemm.foreach_tile masked rows(%counts : memref<4xi64>) groups(%c4)
      rows_per_group(%c64) num_rows(%c256) num_cols(%c128)
      config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, stages = 2, consumer_warpgroups = 1, raster = along_m>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<256x256xf16>, memref<4x256x128xf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, stages = 2, consumer_warpgroups = 1, raster = along_m>,
         weight_layout = #ggemm.weight_layout<kn>}
        -> !ggemm.accumulator<64x64xf32>
    ggemm.tile_store %acc to %y row_scale(%rs : memref<256xf32>) group(%g)
        row(%row) row_end(%row_end) col(%col)
        {epilogue = #ggemm.epilogue<activation = silu, accumulate = true>}
        : !ggemm.accumulator<64x64xf32>, memref<256x128xf32>
  }
  return
}

// -----

// Uniform rows without `persistent`: one tile id per CTA, the group is
// tile id / tiles per group (no loads), and other ops of the body are copied.

// CHECK-LABEL: func.func @uniform_one_tile_per_cta(
// CHECK-SAME: %[[X:.+]]: memref<?x128xbf16>, %[[W:.+]]: memref<2x64x128xbf16>, %[[Y:.+]]: memref<?x64xf16>, %[[LIMIT:.+]]: index)
// CHECK: %[[C2:.+]] = arith.constant 2 : index
// CHECK-NOT: memref.load
// CHECK: %[[TOTAL:.+]] = arith.muli %[[C2]], %{{.+}} : index
// CHECK-NOT: scf.for
// CHECK: scf.for %[[TILE:[a-z0-9_]+]] = %{{.+}} to %[[TOTAL]] step %{{.+}} {
// CHECK: %[[GROUP:.+]] = arith.divui %[[TILE]], %{{.+}} : index
// CHECK: memref.load %[[W]][%[[GROUP]], %{{.+}}, %{{.+}}]
// CHECK: %[[END:.+]] = arith.minui %{{.+}}, %[[LIMIT]] : index
// CHECK: arith.minsi %{{.+}}, %[[END]] : index
// CHECK: arith.maximumf
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @uniform_one_tile_per_cta(%x: memref<?x128xbf16>,
    %w: memref<2x64x128xbf16>, %y: memref<?x64xf16>, %limit: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  %m = memref.dim %x, %c0 : memref<?x128xbf16>
  ggemm.foreach_tile uniform groups(%c2) rows_per_group(%c100)
      num_rows(%m) num_cols(%c64)
      config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, stages = 2, consumer_warpgroups = 1>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x128xbf16>, memref<2x64x128xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, stages = 2, consumer_warpgroups = 1>,
         weight_layout = #ggemm.weight_layout<nk>}
        -> !ggemm.accumulator<64x64xf32>
    %end = arith.minui %row_end, %limit : index
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%end) col(%col)
        {epilogue = #ggemm.epilogue<activation = relu>}
        : !ggemm.accumulator<64x64xf32>, memref<?x64xf16>
  }
  return
}

// -----

// Diagnostics.

func.func @fp8(%x: memref<?x256xf8E4M3FN>, %w: memref<2x128x256xf8E4M3FN>,
    %rows: memref<3xi32>, %y: memref<?x128xbf16>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %m = memref.dim %x, %c0 : memref<?x256xf8E4M3FN>
  ggemm.foreach_tile segment rows(%rows : memref<3xi32>) groups(%c2)
      rows_per_group(%c0) num_rows(%m) num_cols(%c128)
      config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 128, stages = 2, consumer_warpgroups = 1>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    // expected-error @+1 {{'ggemm.tile_mma' op expects bf16 or f16 operands for the CPU back end, got 'f8E4M3FN' (FP8 scale promotion is not implemented)}}
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xf8E4M3FN>, memref<2x128x256xf8E4M3FN>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 64, block_n = 64, block_k = 128, stages = 2, consumer_warpgroups = 1>,
         weight_layout = #ggemm.weight_layout<nk>}
        -> !ggemm.accumulator<64x64xf32>
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<64x64xf32>, memref<?x128xbf16>
  }
  return
}

// -----

func.func @foreign_accumulator(%acc: !ggemm.accumulator<64x64xf32>,
    %rows: memref<3xi32>, %y: memref<?x128xbf16>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %m = memref.dim %y, %c0 : memref<?x128xbf16>
  ggemm.foreach_tile segment rows(%rows : memref<3xi32>) groups(%c2)
      rows_per_group(%c0) num_rows(%m) num_cols(%c128)
      config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, stages = 2, consumer_warpgroups = 1>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    // expected-error @+1 {{'ggemm.tile_store' op expects its accumulator to come from a ggemm.tile_mma of the same tile loop}}
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<64x64xf32>, memref<?x128xbf16>
  }
  return
}

// -----

func.func @accumulator_escapes(%x: memref<?x256xbf16>, %w: memref<2x128x256xbf16>,
    %rows: memref<3xi32>, %y: memref<?x128xbf16>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %m = memref.dim %x, %c0 : memref<?x256xbf16>
  ggemm.foreach_tile segment rows(%rows : memref<3xi32>) groups(%c2)
      rows_per_group(%c0) num_rows(%m) num_cols(%c128)
      config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, stages = 2, consumer_warpgroups = 1>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<2x128x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, stages = 2, consumer_warpgroups = 1>,
         weight_layout = #ggemm.weight_layout<nk>}
        -> !ggemm.accumulator<64x64xf32>
    // expected-error @+1 {{'builtin.unrealized_conversion_cast' op expects no accumulator operands or results: the CPU back end passes accumulators only from ggemm.tile_mma to ggemm.tile_store}}
    %cast = builtin.unrealized_conversion_cast %acc : !ggemm.accumulator<64x64xf32> to i64
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<64x64xf32>, memref<?x128xbf16>
  }
  return
}

// -----

func.func @nested_tile_op(%x: memref<?x256xbf16>, %w: memref<2x128x256xbf16>,
    %rows: memref<3xi32>, %y: memref<?x128xbf16>, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %m = memref.dim %x, %c0 : memref<?x256xbf16>
  ggemm.foreach_tile segment rows(%rows : memref<3xi32>) groups(%c2)
      rows_per_group(%c0) num_rows(%m) num_cols(%c128)
      config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, stages = 2, consumer_warpgroups = 1>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    scf.if %flag {
      // expected-error @+1 {{'ggemm.tile_mma' op is not supported inside a tile loop by the CPU back end (expected ggemm.tile_mma and ggemm.tile_store directly in the body)}}
      %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<2x128x256xbf16>)
          group(%g) row(%row) col(%col)
          {config = #ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, stages = 2, consumer_warpgroups = 1>,
           weight_layout = #ggemm.weight_layout<nk>}
          -> !ggemm.accumulator<64x64xf32>
      ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
          : !ggemm.accumulator<64x64xf32>, memref<?x128xbf16>
    }
  }
  return
}

// -----

func.func @outside_tile_loop(%x: memref<?x256xbf16>, %w: memref<2x128x256xbf16>,
    %g: index, %row: index, %col: index) {
  // expected-error @+1 {{'ggemm.tile_mma' op expects to be in the body of a ggemm.foreach_tile}}
  %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<2x128x256xbf16>)
      group(%g) row(%row) col(%col)
      {config = #ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, stages = 2, consumer_warpgroups = 1>,
       weight_layout = #ggemm.weight_layout<nk>}
      -> !ggemm.accumulator<64x64xf32>
  return
}
