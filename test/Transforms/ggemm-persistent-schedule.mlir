// ggemm-persistent-schedule: a tile loop becomes a tile schedule and a
// launch whose CTAs walk the tile ids (grid=persistent) or take one tile id
// each (grid=tiles); the tile body moves in unchanged, its arguments
// replaced by ggemm.map_tile's results. By default the launch is a
// programmatic dependent launch (dependent_launch), its body starting with
// ggemm.wait_dependency; dependent-launch=false leaves both out. With
// dependent-prefetch-bytes (0 by default), a one-group product prefetches
// weight tiles into L2 before the wait (see @one_group).
// RUN: gemm-opt %s -split-input-file -ggemm-persistent-schedule -verify-diagnostics | FileCheck %s
// RUN: gemm-opt %s -split-input-file -ggemm-persistent-schedule=grid=tiles -verify-diagnostics | FileCheck %s --check-prefix=TILES
// RUN: gemm-opt %s -split-input-file -ggemm-persistent-schedule=dependent-launch=false -verify-diagnostics | FileCheck %s --check-prefix=NODEP
// RUN: gemm-opt %s -split-input-file -ggemm-persistent-schedule=dependent-prefetch-bytes=16777216 -verify-diagnostics | FileCheck %s --check-prefix=PF
// RUN: gemm-opt %s -split-input-file -ggemm-persistent-schedule=dependent-prefetch-bytes=65536 -verify-diagnostics | FileCheck %s --check-prefix=BUDGET
// RUN: not gemm-opt %s -split-input-file -ggemm-persistent-schedule=dependent-prefetch-bytes=-1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADPF

// NODEP-LABEL: func.func @segment(
// NODEP: ggemm.launch %{{.+}} grid(persistent) {
// NODEP-NOT: ggemm.wait_dependency
// NODEP-NOT: ggemm.prefetch_tile
// BADPF: error: 'ggemm.foreach_tile' op expects dependent-prefetch-bytes >= 0, got -1

// CHECK-LABEL: func.func @segment(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x256xbf16>, %[[W:[a-z0-9]+]]: memref<4x128x256xbf16>, %[[P:[a-z0-9]+]]: memref<5xi32>, %[[Y:[a-z0-9]+]]: memref<?x128xbf16>, %[[G:[a-z0-9]+]]: index, %[[M:[a-z0-9]+]]: index, %[[N:[a-z0-9]+]]: index)
// CHECK: %[[S:.+]] = ggemm.tile_schedule segment rows(%[[P]] : memref<5xi32>) groups(%[[G]]) rows_per_group(%{{.+}}) num_rows(%[[M]]) num_cols(%[[N]]) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, raster = along_m>)
// CHECK-NEXT: ggemm.launch %[[S]] grid(persistent) dependent_launch {
// CHECK-NEXT: ^bb0(%[[CTA:.+]]: index, %[[NUM:.+]]: index):
// CHECK-NEXT: ggemm.wait_dependency
// CHECK-NEXT: %[[T:.+]] = ggemm.tile_count %[[S]]
// CHECK-NEXT: scf.for %[[ID:.+]] = %[[CTA]] to %[[T]] step %[[NUM]] {
// CHECK-NEXT: %[[GRP:.+]], %[[ROW:.+]], %[[END:.+]], %[[COL:.+]] = ggemm.map_tile %[[S]][%[[ID]]]
// CHECK: ggemm.load_tile %[[X]][%[[ROW]], %{{.+}}]
// CHECK-NEXT: ggemm.load_tile %[[W]][%[[GRP]], %[[COL]], %{{.+}}]
// CHECK: ggemm.store_tile %{{.+}} to %[[Y]] row(%[[ROW]]) row_end(%[[END]]) col(%[[COL]])
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: ggemm.foreach_tile

// TILES-LABEL: func.func @segment(
// TILES: %[[S:.+]] = ggemm.tile_schedule segment
// TILES-NEXT: ggemm.launch %[[S]] grid(tiles) dependent_launch {
// TILES-NEXT: ^bb0(%[[CTA:.+]]: index, %{{.+}}: index):
// TILES-NEXT: ggemm.wait_dependency
// TILES-NEXT: %[[T:.+]] = ggemm.tile_count %[[S]]
// TILES-NEXT: %[[HAS:.+]] = arith.cmpi ult, %[[CTA]], %[[T]] : index
// TILES-NEXT: scf.if %[[HAS]] {
// TILES-NEXT: %{{.+}}, %[[ROW:.+]], %[[END:.+]], %[[COL:.+]] = ggemm.map_tile %[[S]][%[[CTA]]]
// TILES: ggemm.store_tile %{{.+}} row(%[[ROW]]) row_end(%[[END]]) col(%[[COL]])
func.func @segment(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>, %indptr: memref<5xi32>,
                   %y: memref<?x128xbf16>, %groups: index, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  ggemm.foreach_tile segment rows(%indptr : memref<5xi32>) groups(%groups)
      rows_per_group(%c0) num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, raster = along_m>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
    %acc = scf.for %kb = %c0 to %c4 step %c1 iter_args(%a = %zero)
        -> (!ggemm.accumulator<128x128xf32>) {
      %k = arith.muli %kb, %c64 : index
      %ta = ggemm.load_tile %x[%row, %k] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
      %tb = ggemm.load_tile %w[%g, %col, %k] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
      %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>
          -> !ggemm.accumulator<128x128xf32>
      scf.yield %next : !ggemm.accumulator<128x128xf32>
    }
    ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

// One group, static N (a dense call). With dependent-prefetch-bytes, before
// the wait, CTA c < 33 (the column tiles of 64 weight rows) brings the
// first K blocks of column tile c's weights into L2, the K loop's index
// arithmetic cloned, the group 0: 16 MiB covers all 56 K blocks of the 33
// tiles' 8 KB boxes, 65536 bytes 65536 / (33 x 8192) = 0 of them (no
// prefetch); by default (0) none. With a group count that is not 1
// (@segment) nothing is prefetched either.
// CHECK-LABEL: func.func @one_group(
// CHECK-NOT: ggemm.prefetch_tile
// CHECK: ggemm.wait_dependency
// CHECK-NOT: ggemm.prefetch_tile
// PF-LABEL: func.func @one_group(
// PF-SAME: %[[W:[a-z0-9]+]]: memref<1x2112x7168xf8E4M3FN>
// PF: ggemm.launch %{{.+}} grid(persistent) dependent_launch {
// PF-NEXT: ^bb0(%[[CTA:.+]]: index, %{{.+}}: index):
// PF-NEXT: %[[C33:.+]] = arith.constant 33 : index
// PF-NEXT: %[[FIRST:.+]] = arith.cmpi ult, %[[CTA]], %[[C33]] : index
// PF-NEXT: scf.if %[[FIRST]] {
// PF-NEXT: %[[G0:.+]] = arith.constant 0 : index
// PF-NEXT: %[[C64:.+]] = arith.constant 64 : index
// PF-NEXT: %[[COL:.+]] = arith.muli %[[CTA]], %[[C64]] : index
// PF-NEXT: %[[ZERO:.+]] = arith.constant 0 : index
// PF-NEXT: %[[C56:.+]] = arith.constant 56 : index
// PF-NEXT: %[[ONE:.+]] = arith.constant 1 : index
// PF-NEXT: scf.for %[[KB:.+]] = %[[ZERO]] to %[[C56]] step %[[ONE]] {
// PF-NEXT: %[[C128:.+]] = arith.constant 128 : index
// PF-NEXT: %[[K:.+]] = arith.muli %[[KB]], %[[C128]] : index
// PF-NEXT: ggemm.prefetch_tile %[[W]][%[[G0]], %[[COL]], %[[K]]] : memref<1x2112x7168xf8E4M3FN>, !ggemm.tile<64x128xf8E4M3FN>
// PF-NEXT: }
// PF-NEXT: }
// PF-NEXT: ggemm.wait_dependency
// PF-NEXT: ggemm.tile_count
// BUDGET-LABEL: func.func @one_group(
// BUDGET-NOT: ggemm.prefetch_tile
// BUDGET: ggemm.wait_dependency
// NODEP-LABEL: func.func @one_group(
// NODEP-NOT: ggemm.prefetch_tile
func.func @one_group(%x: memref<?x7168xf8E4M3FN>, %w: memref<1x2112x7168xf8E4M3FN>,
                     %indptr: memref<2xi32>, %y: memref<?x2112xbf16>, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2112 = arith.constant 2112 : index
  ggemm.foreach_tile segment rows(%indptr : memref<2xi32>) groups(%c1)
      rows_per_group(%c0) num_rows(%m) num_cols(%c2112)
      config(#ggemm.tile_config<block_m = 128, block_n = 64, block_k = 128>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %c56 = arith.constant 56 : index
    %c128 = arith.constant 128 : index
    %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x64xf32>
    %acc = scf.for %kb = %c0 to %c56 step %c1 iter_args(%a = %zero)
        -> (!ggemm.accumulator<128x64xf32>) {
      %k = arith.muli %kb, %c128 : index
      %ta = ggemm.load_tile %x[%row, %k] : memref<?x7168xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
      %tb = ggemm.load_tile %w[%g, %col, %k] : memref<1x2112x7168xf8E4M3FN> -> !ggemm.tile<64x128xf8E4M3FN>
      %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<64x128xf8E4M3FN>
          -> !ggemm.accumulator<128x64xf32>
      scf.yield %next : !ggemm.accumulator<128x64xf32>
    }
    ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x64xf32>, memref<?x2112xbf16>
  }
  return
}

// -----

// Every tile loop of a function gets its own schedule and launch.
// CHECK-LABEL: func.func @two(
// CHECK: %[[S0:.+]] = ggemm.tile_schedule uniform weights(%{{.+}} : memref<4xi32>) num_weights(%{{.+}})
// CHECK-NEXT: ggemm.launch %[[S0]] grid(persistent)
// CHECK: %[[S1:.+]] = ggemm.tile_schedule masked
// CHECK-NEXT: ggemm.launch %[[S1]] grid(persistent)
// TILES-LABEL: func.func @two(
// TILES-COUNT-2: grid(tiles)
func.func @two(%counts: memref<4xi32>, %n: index) {
  ggemm.foreach_tile uniform weights(%counts : memref<4xi32>) num_weights(%n) groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
  }
  ggemm.foreach_tile masked rows(%counts : memref<4xi32>) groups(%n) rows_per_group(%n)
      num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
  }
  return
}

// -----

// Problem-level ops must be tiled first.
func.func @problem(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                   %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op is a problem-level op: run ggemm-select-config and ggemm-tile before ggemm-persistent-schedule}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

// segment_matmul_k too.
func.func @problem_k(%dy: memref<?x128xbf16>, %x: memref<?x256xbf16>,
                     %indptr: memref<5xi32>, %dw: memref<4x128x256xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op is a problem-level op: run ggemm-select-config and ggemm-tile before ggemm-persistent-schedule}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x128xbf16>, memref<?x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%dw : memref<4x128x256xf32>)
  return
}
