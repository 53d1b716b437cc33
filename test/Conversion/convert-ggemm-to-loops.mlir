// convert-ggemm-to-loops: a scheduled launch runs on the CPU as written: a
// loop over simulated CTAs, the shared tile schedule read from seg_indptr,
// tiles copied into buffers with TMA's zero fill, mma as f32 loops into an
// accumulator buffer updated in place, a masked epilogue store.
// RUN: gemm-opt %s -split-input-file -verify-diagnostics -convert-ggemm-to-loops | FileCheck %s
// RUN: gemm-opt %s -split-input-file -verify-diagnostics -convert-ggemm-to-loops=num-ctas=5 | FileCheck %s --check-prefix=CTAS5
// RUN: not gemm-opt %s -split-input-file -convert-ggemm-to-loops=num-ctas=0 2>&1 | FileCheck %s --check-prefix=ZERO

// ZERO: error: convert-ggemm-to-loops: expects num-ctas to be positive, got 0

// CHECK-LABEL: func.func @segment_persistent(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x256xbf16>, %[[W:[a-z0-9]+]]: memref<4x128x256xbf16>, %[[ROWS:[a-z0-9]+]]: memref<5xi32>, %[[IDX:[a-z0-9]+]]: memref<4xi32>, %[[BIAS:[a-z0-9]+]]: memref<4x128xf32>, %[[Y:[a-z0-9]+]]: memref<?x128xbf16>)
// The map_tile walk's cursor (group, its first tile), at 0; the
// accumulator and the two tile buffers: all outside every loop.
// CHECK-NEXT: %[[CURSOR:.+]] = memref.alloca() : memref<2xindex>
// CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[S0:.+]] = arith.constant 0 : index
// CHECK-NEXT: memref.store %[[C0]], %[[CURSOR]][%[[S0]]] : memref<2xindex>
// CHECK-NEXT: %[[S1:.+]] = arith.constant 1 : index
// CHECK-NEXT: memref.store %[[C0]], %[[CURSOR]][%[[S1]]] : memref<2xindex>
// CHECK-NEXT: %[[ACC:.+]] = memref.alloca() : memref<64x64xf32>
// CHECK-NEXT: %[[ABUF:.+]] = memref.alloca() : memref<64x64xbf16>
// CHECK-NEXT: %[[BBUF:.+]] = memref.alloca() : memref<64x64xbf16>
// CHECK-NOT: ggemm.
// CHECK: %[[NUM_ROWS:.+]] = memref.dim %[[X]]
// CHECK: %[[NUM_CTAS:.+]] = arith.constant 3 : index
// CHECK: scf.for %[[CTA:[a-z0-9_]+]] = %{{.+}} to %[[NUM_CTAS]] step
// Each CTA counts the tiles from seg_indptr, as on the GPU (tile_count):
// offsets clamped into [0, num_rows], carried from group to group; a group
// whose weight index is not below 4 counts no tiles.
// CHECK: %[[S0:.+]] = memref.load %[[ROWS]]
// CHECK: %[[TOTAL:.+]]:2 = scf.for {{.+}} iter_args(%{{.+}} = %{{.+}}, %[[START:.+]] = %{{.+}}) -> (index, index) {
// CHECK: %[[NEXT:.+]] = memref.load %[[ROWS]]
// CHECK: %[[NEXT_I:.+]] = arith.index_cast %[[NEXT]] : i32 to index
// CHECK: %[[LO:.+]] = arith.maxsi %[[NEXT_I]], %{{.+}} : index
// CHECK: %[[CLAMPED:.+]] = arith.minsi %[[LO]], %[[NUM_ROWS]] : index
// CHECK: %[[END:.+]] = arith.maxsi %[[CLAMPED]], %[[START]] : index
// CHECK: arith.subi %[[END]], %[[START]] : index
// CHECK: %[[WL:.+]] = memref.load %[[IDX]]
// CHECK: %[[WI:.+]] = arith.index_cast %[[WL]] : i32 to index
// CHECK: %[[VALID:.+]] = arith.cmpi ult, %[[WI]], %{{.+}} : index
// CHECK: arith.select %[[VALID]]
// CHECK: scf.yield %{{.+}}, %[[CLAMPED]] : index, index
// The grid-stride loop of the launch body.
// CHECK: scf.for %[[TILE:[a-z0-9_]+]] = %[[CTA]] to %[[TOTAL]]#0 step %[[NUM_CTAS]] {
// map_tile: walk from the cursor (from group 0 when the tile id lies
// before its group) while the tile id lies past the group's tiles and a
// group follows; the cursor stays at the tile's group.
// CHECK: %[[CG:.+]] = memref.load %[[CURSOR]]
// CHECK: %[[CF:.+]] = memref.load %[[CURSOR]]
// CHECK: %[[BEHIND:.+]] = arith.cmpi ult, %[[TILE]], %[[CF]] : index
// CHECK: arith.select %[[BEHIND]], %{{.+}}, %[[CG]] : index
// CHECK: %[[FOUND:.+]]:4 = scf.while
// CHECK: arith.cmpi uge, %[[TILE]], %{{.+}} : index
// CHECK: scf.condition
// CHECK: memref.store %[[FOUND]]#0, %[[CURSOR]]
// CHECK: memref.store %[[FOUND]]#1, %[[CURSOR]]
// weight_index.
// CHECK: %[[WIDX_I32:.+]] = memref.load %[[IDX]][%[[FOUND]]#0]
// CHECK: %[[WIDX:.+]] = arith.index_cast %[[WIDX_I32]] : i32 to index
// zero_accumulator.
// CHECK: memref.store %{{.+}}, %[[ACC]][
// The K loop carries the accumulator buffer.
// CHECK: %[[KACC:.+]] = scf.for %[[KB:[a-z0-9_]+]] = {{.+}} iter_args(%[[A:.+]] = %[[ACC]]) -> (memref<64x64xf32>) {
// CHECK: %[[K:.+]] = arith.muli %[[KB]],
// load_tile of A: zero past num_rows and K.
// CHECK: %[[R:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// CHECK: %[[KI:.+]] = arith.addi %[[K]], %{{.+}} : index
// CHECK: %[[NR:.+]] = memref.dim %[[X]], %{{.+}} : memref<?x256xbf16>
// CHECK: arith.cmpi ult, %[[R]], %[[NR]] : index
// CHECK: scf.if %{{.+}} -> (bf16) {
// CHECK: memref.load %[[X]][%[[R]], %[[KI]]] : memref<?x256xbf16>
// CHECK: memref.store %{{.+}}, %[[ABUF]][
// load_tile of B at the group's weight.
// CHECK: memref.load %[[W]][%[[WIDX]], %{{.+}}, %{{.+}}] : memref<4x128x256xbf16>
// CHECK: memref.store %{{.+}}, %[[BBUF]][
// mma: acc[i, j] += sum_k a[i, k] * b[j, k], in place.
// CHECK: %[[OLD:.+]] = memref.load %[[A]][%[[I:.+]], %[[J:.+]]] : memref<64x64xf32>
// CHECK: scf.for {{.+}} iter_args(%{{.+}} = %[[OLD]]) -> (f32) {
// CHECK: memref.load %[[ABUF]][%[[I]], %{{.+}}]
// CHECK: memref.load %[[BBUF]][%[[J]], %{{.+}}]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: memref.store %{{.+}}, %[[A]][%[[I]], %[[J]]] : memref<64x64xf32>
// CHECK: scf.yield %[[A]] : memref<64x64xf32>
// store_tile: rows [row, min(row + 64, row_end)), cols [col, min(col + 64, N)).
// CHECK: %[[YN:.+]] = memref.dim %[[Y]]
// CHECK: %[[ROW_LIMIT:.+]] = arith.minsi
// CHECK: %[[COL_LIMIT:.+]] = arith.minsi %{{.+}}, %[[YN]]
// CHECK: scf.for %[[YR:[a-z0-9_]+]] = %{{.+}} to %[[ROW_LIMIT]] step
// CHECK: scf.for %[[YC:[a-z0-9_]+]] = %{{.+}} to %[[COL_LIMIT]] step
// CHECK: %[[V:.+]] = memref.load %[[KACC]]
// CHECK: %[[BV:.+]] = memref.load %[[BIAS]][%[[WIDX]], %[[YC]]]
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
func.func @segment_persistent(%arg0: memref<?x256xbf16>, %arg1: memref<4x128x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<4xi32>, %arg4: memref<4x128xf32>, %arg5: memref<?x128xbf16>) {
  %c4 = arith.constant 4 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x256xbf16>
  %c128 = arith.constant 128 : index
  %c4_1 = arith.constant 4 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<5xi32>) weights(%arg3 : memref<4xi32>) num_weights(%c4_1) groups(%c4) rows_per_group(%c0) num_rows(%dim) num_cols(%c128) config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, stages = 2, consumer_warpgroups = 1>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.tile_count %0
    scf.for %arg6 = %cta to %1 step %num_ctas {
      %group, %row, %row_end, %col = ggemm.map_tile %0[%arg6]
      %2 = ggemm.weight_index %arg3[%group] : memref<4xi32>
      %c4_2 = arith.constant 4 : index
      %c0_3 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %3 = ggemm.zero_accumulator : !ggemm.accumulator<64x64xf32>
      %4 = scf.for %arg7 = %c0_3 to %c4_2 step %c1 iter_args(%arg8 = %3) -> (!ggemm.accumulator<64x64xf32>) {
        %5 = arith.muli %arg7, %c64 : index
        %6 = ggemm.load_tile %arg0[%row, %5] : memref<?x256xbf16> -> !ggemm.tile<64x64xbf16>
        %7 = ggemm.load_tile %arg1[%2, %col, %5] : memref<4x128x256xbf16> -> !ggemm.tile<64x64xbf16>
        %8 = ggemm.mma %6, %7, %arg8 : !ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16> -> !ggemm.accumulator<64x64xf32>
        scf.yield %8 : !ggemm.accumulator<64x64xf32>
      }
      ggemm.store_tile %4 to %arg5 row(%row) row_end(%row_end) col(%col) bias(%arg4[%2] : memref<4x128xf32>) {epilogue = #ggemm.epilogue<activation = gelu>} : !ggemm.accumulator<64x64xf32>, memref<?x128xbf16>
    }
  }
  return
}

// -----

// One CTA per tile: the grid is the host-side tile bound (rows / block_m +
// groups) x column tiles, not the real tile count, so CTAs past it run and
// find no tile.
// CHECK-LABEL: func.func @grid_tiles(
// CHECK-SAME: %[[M:[a-z0-9]+]]: index, %[[N:[a-z0-9]+]]: index, %[[G:[a-z0-9]+]]: index
// CHECK: %[[RT:.+]] = arith.divui %{{.+}}, %{{.+}} : index
// CHECK: %[[RTG:.+]] = arith.addi %[[RT]], %[[G]] : index
// CHECK: %[[BOUND:.+]] = arith.muli %[[RTG]], %{{.+}} : index
// CHECK: scf.for %[[CTA:[a-z0-9_]+]] = %{{.+}} to %[[BOUND]] step
// CHECK: %[[TOTAL:.+]]:2 = scf.for
// CHECK: %[[HAS:.+]] = arith.cmpi ult, %[[CTA]], %[[TOTAL]]#0 : index
// CHECK: scf.if %[[HAS]] {
func.func @grid_tiles(%m: index, %n: index, %groups: index, %rows: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %sched = ggemm.tile_schedule segment rows(%rows : memref<?xi64>) groups(%groups)
      rows_per_group(%c0) num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, consumer_warpgroups = 1>)
  ggemm.launch %sched grid(tiles) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    %has = arith.cmpi ult, %cta, %total : index
    scf.if %has {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%cta]
    }
  }
  return
}

// -----

// Bands of 2 column tiles along m for the groups of at least 3 row tiles:
// a branch on the group's row tiles between the banded walk (band width
// clamped to the column tiles left) and the plain one.
// CHECK-LABEL: func.func @swizzle_bands(
// CHECK: %[[C3:.+]] = arith.constant 3 : index
// CHECK: %[[BIG:.+]] = arith.cmpi uge, %[[ROWTILES:.+]], %[[C3]] : index
// CHECK: %[[TILE:.+]]:2 = scf.if %[[BIG]] -> (index, index) {
// CHECK:   %[[C2:.+]] = arith.constant 2 : index
// CHECK:   %[[BANDIDS:.+]] = arith.muli %[[ROWTILES]], %[[C2]] : index
// CHECK:   arith.divui %{{.+}}, %[[BANDIDS]] : index
// CHECK:   arith.minui %[[C2]], %{{.+}} : index
// CHECK: } else {
// CHECK:   %[[ACROSS:.+]] = arith.divui %{{.+}}, %[[ROWTILES]] : index
// CHECK:   %[[WALK:.+]] = arith.remui %{{.+}}, %[[ROWTILES]] : index
// CHECK:   scf.yield %[[WALK]], %[[ACROSS]] : index, index
// CHECK: }
func.func @swizzle_bands(%n: index, %rows: index, %groups: index) {
  %sched = ggemm.tile_schedule uniform groups(%groups) rows_per_group(%rows)
      num_rows(%rows) num_cols(%n)
      config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, consumer_warpgroups = 1,
                                raster = along_m, swizzle = 2, swizzle_min_tiles = 3>)
  ggemm.launch %sched grid(tiles) {
  ^bb0(%cta: index, %num_ctas: index):
    %g, %row, %row_end, %col = ggemm.map_tile %sched[%cta]
  }
  return
}

// -----

// An mn_major tile reads the source transposed: tile[r, c] = w[g, k + c, col + r].
// CHECK-LABEL: func.func @mn_major(
// CHECK-SAME: %[[W:[a-z0-9]+]]: memref<4x256x128xf16>
// CHECK: scf.for %[[R:[a-z0-9_]+]] = %{{.+}} to %c128{{(_[0-9]+)?}} step
// CHECK: scf.for %[[C:[a-z0-9_]+]] = %{{.+}} to %c64{{(_[0-9]+)?}} step
// CHECK-DAG: %[[KR:.+]] = arith.addi %{{.+}}, %[[C]] : index
// CHECK-DAG: %[[NC:.+]] = arith.addi %{{.+}}, %[[R]] : index
// CHECK: memref.load %[[W]][%{{.+}}, %[[KR]], %[[NC]]] : memref<4x256x128xf16>
// CHECK: memref.store %{{.+}}, %{{.+}}[%[[R]], %[[C]]] : memref<128x64xf16>
func.func @mn_major(%w: memref<4x256x128xf16>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64, consumer_warpgroups = 1>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %t = ggemm.load_tile %w[%cta, %cta, %num_ctas]
        : memref<4x256x128xf16> -> !ggemm.tile<128x64xf16, mn_major>
  }
  return
}

// -----

// Tile loops must be scheduled first.
func.func @unscheduled(%n: index) {
  // expected-error @+1 {{'ggemm.foreach_tile' op is an unscheduled tile loop: run ggemm-persistent-schedule before convert-ggemm-to-loops}}
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
  }
  return
}

// -----

// Warp roles and the ring have no CPU counterpart.
func.func @warp_roles(%n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.create_ring' op is GPU-only (warp roles and the stage ring have no CPU counterpart): run convert-ggemm-to-loops before ggemm-warp-specialize}}
    %ring = ggemm.create_ring release_count(256) : !ggemm.ring<!ggemm.tile<128x64xbf16>>
  }
  return
}

// -----

// Accumulators are updated in place: a value used twice would see the
// update.
func.func @acc_used_twice(%y: memref<?x128xf32>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.zero_accumulator' op expects each accumulator value to be used once: the CPU back end updates accumulators in place}}
    %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
    ggemm.store_tile %zero to %y row(%n) row_end(%n) col(%n)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xf32>
    ggemm.store_tile %zero to %y row(%n) row_end(%n) col(%n)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xf32>
  }
  return
}

// -----

func.func @outside_launch() {
  // expected-error @+1 {{'ggemm.zero_accumulator' op expects to be in the body of a ggemm.launch}}
  %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
  return
}

// -----

// K-ragged: segment_bounds reads seg_indptr[g] and [g + 1] and clamps them
// as the tile schedule clamps segments; a load with k_end reads zero at K
// coordinates at or past it, on top of TMA's zero fill.
// CHECK-LABEL: func.func @k_ragged(
// CHECK-SAME: %[[DY:[a-z0-9]+]]: memref<?x128xbf16>, %[[X:[a-z0-9]+]]: memref<?x256xbf16>, %[[P:[a-z0-9]+]]: memref<5xi64>, %[[DW:[a-z0-9]+]]: memref<512x256xf32>, %[[T:[a-z0-9]+]]: index)
// CHECK: %[[B0:.+]] = memref.load %[[P]][%[[G:.+]]] : memref<5xi64>
// CHECK: %[[B1:.+]] = arith.index_cast %[[B0]] : i64 to index
// CHECK: %[[B2:.+]] = arith.maxsi %[[B1]], %{{.+}} : index
// CHECK: %[[BEGIN:.+]] = arith.minsi %[[B2]], %[[T]] : index
// CHECK: %[[G1:.+]] = arith.addi %[[G]], %{{.+}} : index
// CHECK: %[[E0:.+]] = memref.load %[[P]][%[[G1]]] : memref<5xi64>
// CHECK: %[[E1:.+]] = arith.index_cast %[[E0]] : i64 to index
// CHECK: %[[E2:.+]] = arith.maxsi %[[E1]], %{{.+}} : index
// CHECK: %[[E3:.+]] = arith.minsi %[[E2]], %[[T]] : index
// CHECK: %[[E4:.+]] = arith.maxsi %[[E3]], %[[BEGIN]] : index
// CHECK: %[[LEN:.+]] = arith.subi %[[E4]], %[[BEGIN]] : index
// CHECK: %[[END:.+]] = arith.addi %[[BEGIN]], %[[LEN]] : index
// The A tile (mn_major): K runs along dy's rows, masked at the end.
// CHECK: %[[KI:.+]] = arith.addi %[[BEGIN]], %{{.+}} : index
// CHECK: %[[IN_SEG:.+]] = arith.cmpi ult, %[[KI]], %[[END]] : index
// CHECK: %[[IN_DIM:.+]] = arith.cmpi ult, %[[KI]], %{{.+}} : index
// CHECK: arith.andi %[[IN_SEG]], %[[IN_DIM]] : i1
// CHECK: memref.load %[[DY]][%[[KI]], %{{.+}}] : memref<?x128xbf16>
// The B tile, masked the same way.
// CHECK: %[[KJ:.+]] = arith.addi %[[BEGIN]], %{{.+}} : index
// CHECK: arith.cmpi ult, %[[KJ]], %[[END]] : index
// CHECK: memref.load %[[X]][%[[KJ]], %{{.+}}] : memref<?x256xbf16>
func.func @k_ragged(%dy: memref<?x128xbf16>, %x: memref<?x256xbf16>,
                    %indptr: memref<5xi64>, %dw: memref<512x256xf32>, %t: index) {
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %sched = ggemm.tile_schedule uniform groups(%c4) rows_per_group(%c128)
      num_rows(%c512) num_cols(%c256)
      config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, consumer_warpgroups = 1>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    scf.for %i = %cta to %total step %num_ctas {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%i]
      %begin, %end = ggemm.segment_bounds %indptr[%g] num_rows(%t) : memref<5xi64>
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<64x64xf32>
      %acc = scf.for %kb = %c0 to %c1 step %c1 iter_args(%a = %zero)
          -> (!ggemm.accumulator<64x64xf32>) {
        %ta = ggemm.load_tile %dy[%begin, %row] k_end(%end)
            : memref<?x128xbf16> -> !ggemm.tile<64x64xbf16, mn_major>
        %tb = ggemm.load_tile %x[%begin, %col] k_end(%end)
            : memref<?x256xbf16> -> !ggemm.tile<64x64xbf16, mn_major>
        %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<64x64xbf16, mn_major>,
            !ggemm.tile<64x64xbf16, mn_major> -> !ggemm.accumulator<64x64xf32>
        scf.yield %next : !ggemm.accumulator<64x64xf32>
      }
      ggemm.store_tile %acc to %dw row(%row) row_end(%row_end) col(%col)
          : !ggemm.accumulator<64x64xf32>, memref<512x256xf32>
    }
  }
  return
}

// -----

// ggemm.sort_by_expert: a stable counting sort over E + 2 buckets (ids
// below 0, the experts, ids from E on): count, scan, seg_indptr from the
// bucket starts, then each pair placed in order at its bucket's cursor.
// CHECK-LABEL: func.func @sort_by_expert(
// CHECK-SAME: %[[IDS:.+]]: memref<?xi64>, %[[INDPTR:.+]]: memref<5xi32>, %[[ROWS:.+]]: memref<?xi32>, %[[PAIRS:.+]]: memref<?xi32>)
// CHECK: %[[COUNTS:.+]] = memref.alloca() : memref<6xindex>
// CHECK: scf.for
// CHECK: scf.for %[[P:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[ID:.+]] = memref.load %[[IDS]][%[[P]]] : memref<?xi64>
// CHECK: arith.index_cast %[[ID]] : i64 to index
// CHECK: arith.cmpi slt
// CHECK: arith.cmpi sge
// CHECK: memref.store %{{.+}}, %[[COUNTS]]
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.for %[[E:.+]] = %{{.+}} to %c5
// CHECK: memref.store %{{.+}}, %[[INDPTR]][%[[E]]] : memref<5xi32>
// CHECK: scf.for %[[Q:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[SLOT:.+]] = memref.load %[[COUNTS]]
// CHECK: arith.divui %[[Q]], %c3
// CHECK: memref.store %{{.+}}, %[[ROWS]][%[[SLOT]]]
// CHECK: memref.store %{{.+}}, %[[PAIRS]][%[[SLOT]]]
// CHECK-NOT: ggemm.sort_by_expert
func.func @sort_by_expert(%ids: memref<?xi64>, %indptr: memref<5xi32>,
                          %rows: memref<?xi32>, %pairs: memref<?xi32>) {
  ggemm.sort_by_expert ins(%ids : memref<?xi64>)
      outs(%indptr, %rows, %pairs : memref<5xi32>, memref<?xi32>, memref<?xi32>)
      {topk = 3}
  return
}

// -----

// ggemm.quantize: one loop nest per scale block (here 1x128 over the
// MN-major scales the FP8 GEMMs read): the block's absolute maximum, the
// 1e-4 floor, the scale (amax times 1/448 in f32, as torch computes
// amax / 448 on the GPU) stored, then each element scaled by
// (1 / amax) * 448 and encoded to e4m3 with integer arithmetic (clamped to
// +-448 first; LLVM has no FP8 type for arith.truncf to lower to).
// CHECK-LABEL: func.func @quantize_per_token(
// CHECK-SAME: %[[X:.+]]: memref<?x256xbf16>, %[[Q:.+]]: memref<?x256xf8E4M3FN>, %[[S:.+]]: memref<?x2xf32, strided<[1, ?]>>)
// CHECK: %[[ROWS:.+]] = memref.dim %[[X]], %c0
// CHECK: scf.for %[[RB:.+]] = %{{.+}} to %{{.+}} step
// CHECK: scf.for %[[CB:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[AMAX:.+]] = scf.for {{.+}} iter_args
// CHECK: scf.for {{.+}} iter_args
// CHECK: memref.load %[[X]]
// CHECK: arith.maximumf
// CHECK: %[[FLOORED:.+]] = arith.maximumf %[[AMAX]], %{{.+}} : f32
// CHECK: %[[SCALE:.+]] = arith.mulf %[[FLOORED]], %{{.+}} : f32
// CHECK: %[[RECIP:.+]] = arith.divf %{{.+}}, %[[FLOORED]] : f32
// CHECK: %[[FACTOR:.+]] = arith.mulf %[[RECIP]], %{{.+}} : f32
// CHECK: memref.store %[[SCALE]], %[[S]][%[[RB]], %[[CB]]] : memref<?x2xf32, strided<[1, ?]>>
// CHECK: arith.mulf %{{.+}}, %[[FACTOR]] : f32
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf olt
// CHECK: arith.bitcast %{{.+}} : f32 to i32
// CHECK: arith.fptoui
// CHECK: arith.trunci %{{.+}} : i32 to i8
// CHECK: %[[BYTE:.+]] = arith.bitcast %{{.+}} : i8 to f8E4M3FN
// CHECK: memref.store %[[BYTE]], %[[Q]]
// CHECK-NOT: ggemm.quantize
func.func @quantize_per_token(%x: memref<?x256xbf16>, %q: memref<?x256xf8E4M3FN>,
                              %s: memref<?x2xf32, strided<[1, ?]>>) {
  ggemm.quantize ins(%x : memref<?x256xbf16>)
      outs(%q, %s : memref<?x256xf8E4M3FN>, memref<?x2xf32, strided<[1, ?]>>)
  return
}

// -----

// 128x128 blocks of a 3D weight: a loop over the weights around the
// blocks; a block's rows end at min(start + 128, rows).
// CHECK-LABEL: func.func @quantize_per_block(
// CHECK: scf.for %[[G:.+]] = %{{.+}} to %{{.+}} step
// CHECK: scf.for %[[RB:.+]] = %{{.+}} to %{{.+}} step
// CHECK: scf.for %[[CB:.+]] = %{{.+}} to %{{.+}} step
// CHECK: arith.minui
// CHECK: memref.store %{{.+}}, %{{.+}}[%[[G]], %[[RB]], %[[CB]]] : memref<4x3x2xf32>
// CHECK-NOT: ggemm.quantize
func.func @quantize_per_block(%w: memref<4x300x256xf16>, %q: memref<4x300x256xf8E4M3FN>,
                              %s: memref<4x3x2xf32>) {
  ggemm.quantize ins(%w : memref<4x300x256xf16>)
      outs(%q, %s : memref<4x300x256xf8E4M3FN>, memref<4x3x2xf32>)
      {scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

// A split-K launch (split_k = 2): the grid is whole clusters (4 of the
// 5 CTAs), a buffer of rank 1's partial sums per round (ceil(tiles /
// clusters) rounds) lives for the launch, and each cluster's CTAs run from
// rank 1 to rank 0 (cta = iv - iv mod 2 + (1 - iv mod 2)). split_k_sum:
// rank 0 adds rank 1's partial of the round to its accumulator in place,
// rank 1 copies its own into the buffer.
// CTAS5-LABEL: func.func @split_k(
// CTAS5: %[[ROUNDS:.+]] = arith.ceildivui %{{.+}}, %{{.+}} : index
// CTAS5: %[[N:.+]] = arith.muli %{{.+}}, %[[ROUNDS]] : index
// CTAS5: %[[PARTIALS:.+]] = memref.alloc(%[[N]]) : memref<?x64x64xf32>
// CTAS5: scf.for %[[IV:.+]] = %{{.+}} to %c4 step %{{.+}} {
// CTAS5: %[[RANK:.+]] = arith.remui %[[IV]], %{{.+}} : index
// CTAS5: %[[FLIP:.+]] = arith.subi %{{.+}}, %[[RANK]] : index
// CTAS5-NEXT: %[[BASE:.+]] = arith.subi %[[IV]], %[[RANK]] : index
// CTAS5-NEXT: %{{.+}} = arith.addi %[[BASE]], %[[FLIP]] : index
// CTAS5: scf.if %{{.+}} {
// CTAS5: memref.load %[[PARTIALS]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<?x64x64xf32>
// CTAS5: arith.addf
// CTAS5: } else {
// CTAS5: memref.store %{{.+}}, %[[PARTIALS]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<?x64x64xf32>
// CTAS5: memref.dealloc %[[PARTIALS]] : memref<?x64x64xf32>
func.func @split_k(%arg0: memref<?x512xbf16>, %arg1: memref<1x128x512xbf16>, %arg2: memref<2xi32>, %arg3: memref<?x128xbf16>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x512xbf16>
  %c128 = arith.constant 128 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<2xi32>) groups(%c1) rows_per_group(%c0) num_rows(%dim) num_cols(%c128) config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, consumer_warpgroups = 1, split_k = 2>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.tile_count %0
    %c2 = arith.constant 2 : index
    %2 = arith.divui %cta, %c2 : index
    %3 = arith.remui %cta, %c2 : index
    %4 = arith.divui %num_ctas, %c2 : index
    scf.for %arg4 = %2 to %1 step %4 {
      %group, %row, %row_end, %col = ggemm.map_tile %0[%arg4]
      %c8 = arith.constant 8 : index
      %c64 = arith.constant 64 : index
      %c0_1 = arith.constant 0 : index
      %c1_2 = arith.constant 1 : index
      %5 = ggemm.zero_accumulator : !ggemm.accumulator<64x64xf32>
      %c2_3 = arith.constant 2 : index
      %6 = arith.muli %3, %c8 : index
      %7 = arith.divui %6, %c2_3 : index
      %c1_4 = arith.constant 1 : index
      %8 = arith.addi %3, %c1_4 : index
      %9 = arith.muli %8, %c8 : index
      %10 = arith.divui %9, %c2_3 : index
      %11 = scf.for %arg5 = %7 to %10 step %c1_2 iter_args(%arg6 = %5) -> (!ggemm.accumulator<64x64xf32>) {
        %18 = arith.muli %arg5, %c64 : index
        %19 = ggemm.load_tile %arg0[%row, %18] : memref<?x512xbf16> -> !ggemm.tile<64x64xbf16>
        %20 = ggemm.load_tile %arg1[%group, %col, %18] : memref<1x128x512xbf16> -> !ggemm.tile<64x64xbf16>
        %21 = ggemm.mma %19, %20, %arg6 : !ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16> -> !ggemm.accumulator<64x64xf32>
        scf.yield %21 : !ggemm.accumulator<64x64xf32>
      }
      %12 = arith.subi %arg4, %2 : index
      %13 = arith.divui %12, %4 : index
      %14 = arith.addi %arg4, %4 : index
      %15 = arith.cmpi ult, %14, %1 : index
      %16 = ggemm.split_k_sum %11 rank(%3) round(%13) more(%15) : !ggemm.accumulator<64x64xf32>
      %c0_5 = arith.constant 0 : index
      %17 = arith.cmpi eq, %3, %c0_5 : index
      scf.if %17 {
        ggemm.store_tile %16 to %arg3 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<64x64xf32>, memref<?x128xbf16>
      }
    }
  }
  return
}

// -----

// A split_k_tail launch: its split_k_sum runs under `active` (the split
// units), in place as above; whole tiles keep their own sums.
// CTAS5-LABEL: func.func @split_k_tail(
// CTAS5: %[[PARTIALS:.+]] = memref.alloc(%{{.+}}) : memref<?x64x64xf32>
// CTAS5: arith.constant false
// CTAS5-NEXT: arith.constant 0 : index
// CTAS5-NEXT: scf.if %[[ACTIVE:.+]] {
// CTAS5-NEXT: arith.constant 0 : index
// CTAS5-NEXT: arith.cmpi eq
// CTAS5-NEXT: scf.if %{{.+}} {
// CTAS5: memref.load %[[PARTIALS]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<?x64x64xf32>
// CTAS5: arith.addf
// CTAS5: } else {
// CTAS5: memref.store %{{.+}}, %[[PARTIALS]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<?x64x64xf32>
// CTAS5: %[[WHOLE:.+]] = arith.xori %[[ACTIVE]], %{{.+}} : i1
// CTAS5-NEXT: %[[STORES:.+]] = arith.ori %[[WHOLE]], %{{.+}} : i1
// CTAS5-NEXT: scf.if %[[STORES]] {
func.func @split_k_tail(%arg0: memref<?x512xbf16>, %arg1: memref<1x128x512xbf16>, %arg2: memref<2xi32>, %arg3: memref<?x128xbf16>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x512xbf16>
  %c128 = arith.constant 128 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<2xi32>) groups(%c1) rows_per_group(%c0) num_rows(%dim) num_cols(%c128) config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, consumer_warpgroups = 1, split_k = 2, split_k_tail = true>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.tile_count %0
    %c2 = arith.constant 2 : index
    %2 = arith.divui %1, %num_ctas : index
    %3 = arith.muli %2, %num_ctas : index
    %4 = arith.subi %1, %3 : index
    %5 = arith.muli %4, %c2 : index
    %6 = arith.cmpi ule, %5, %num_ctas : index
    %7 = arith.addi %3, %5 : index
    %8 = arith.select %6, %7, %1 : index
    scf.for %arg4 = %cta to %8 step %num_ctas {
      %9 = arith.remui %arg4, %c2 : index
      %10 = arith.cmpi uge, %arg4, %3 : index
      %11 = arith.andi %6, %10 : i1
      %12 = arith.subi %arg4, %3 : index
      %13 = arith.divui %12, %c2 : index
      %14 = arith.addi %3, %13 : index
      %15 = arith.select %11, %14, %arg4 : index
      %group, %row, %row_end, %col = ggemm.map_tile %0[%15]
      %c8 = arith.constant 8 : index
      %c64 = arith.constant 64 : index
      %c0_0 = arith.constant 0 : index
      %c1_1 = arith.constant 1 : index
      %16 = ggemm.zero_accumulator : !ggemm.accumulator<64x64xf32>
      %17 = arith.muli %9, %c8 : index
      %18 = arith.divui %17, %c2 : index
      %c4 = arith.constant 4 : index
      %19 = arith.addi %18, %c4 : index
      %20 = arith.select %11, %18, %c0_0 : index
      %21 = arith.subi %19, %18 : index
      %22 = arith.select %11, %21, %c8 : index
      %23 = scf.for %arg5 = %c0_0 to %22 step %c1_1 iter_args(%arg6 = %16) -> (!ggemm.accumulator<64x64xf32>) {
        %28 = arith.addi %20, %arg5 : index
        %29 = arith.muli %28, %c64 : index
        %30 = ggemm.load_tile %arg0[%row, %29] : memref<?x512xbf16> -> !ggemm.tile<64x64xbf16>
        %31 = ggemm.load_tile %arg1[%group, %col, %29] : memref<1x128x512xbf16> -> !ggemm.tile<64x64xbf16>
        %32 = ggemm.mma %30, %31, %arg6 : !ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16> -> !ggemm.accumulator<64x64xf32>
        scf.yield %32 : !ggemm.accumulator<64x64xf32>
      }
      %false = arith.constant false
      %c0_2 = arith.constant 0 : index
      %24 = ggemm.split_k_sum %23 rank(%9) round(%c0_2) more(%false) active(%11) : !ggemm.accumulator<64x64xf32>
      %c0_3 = arith.constant 0 : index
      %25 = arith.cmpi eq, %9, %c0_3 : index
      %true = arith.constant true
      %26 = arith.xori %11, %true : i1
      %27 = arith.ori %26, %25 : i1
      scf.if %27 {
        ggemm.store_tile %24 to %arg3 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<64x64xf32>, memref<?x128xbf16>
      }
    }
  }
  return
}

// -----

func.func @split_k_tiles_grid(%acc: !ggemm.accumulator<64x8xf32>, %i: index, %more: i1) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 8, block_n = 64, block_k = 128,
                                consumer_warpgroups = 1, swap_ab = true, split_k = 2>)
  ggemm.launch %s grid(tiles) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.split_k_sum' op expects a persistent grid with split_k > 1 for convert-ggemm-to-loops, got split_k = 2 and grid tiles}}
    %sum = ggemm.split_k_sum %acc rank(%i) round(%i) more(%more) : !ggemm.accumulator<64x8xf32>
  }
  return
}
