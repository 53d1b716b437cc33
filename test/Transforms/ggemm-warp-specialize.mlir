// ggemm-warp-specialize: the tile loop of a launch becomes a producer role
// (tile loads put into a ring of stages) and a consumer role (tiles taken
// from the ring, multiplied with one wgmma group left in flight, released
// once that group has finished, then stored). Both roles carry the ring
// position through their tile and K loops.
// RUN: gemm-opt %s -split-input-file -ggemm-warp-specialize -verify-diagnostics | FileCheck %s
// RUN: gemm-opt %s -split-input-file -ggemm-warp-specialize="pending-mmas=0 producer-registers=24 consumer-registers=240" -verify-diagnostics | FileCheck %s --check-prefix=SYNC
// RUN: not gemm-opt %s -ggemm-warp-specialize=pending-mmas=2 -o /dev/null 2>&1 | FileCheck %s --check-prefix=PENDING
// RUN: not gemm-opt %s -ggemm-warp-specialize=consumer-registers=236 -o /dev/null 2>&1 | FileCheck %s --check-prefix=REGISTERS
// RUN: not gemm-opt %s -split-input-file -ggemm-warp-specialize="producer-registers=32 consumer-registers=240" -o /dev/null 2>&1 | FileCheck %s --check-prefix=POOL

// PENDING: error: ggemm-warp-specialize: expects pending-mmas to be 0 or 1, got 2
// REGISTERS: error: ggemm-warp-specialize: expects consumer-registers to be a multiple of 8 in [24, 256] (setmaxnreg), got 236
// Three warpgroups of 384 threads are launched with 168 registers a thread,
// 64512 in all: 32 + 2 x 240 (65536) would hang in setmaxnreg.inc (NOTES v28).
// POOL: error: 'ggemm.launch' op expects the roles' registers to fit the 64512 a CTA of 3 warpgroups is launched with: 128 x (32 + 2 x 240) = 65536

// CHECK-LABEL: func.func @segment(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x256xbf16>, %[[W:[a-z0-9]+]]: memref<4x128x256xbf16>, %{{.+}}: memref<5xi32>, %[[IDX:[a-z0-9]+]]: memref<4xi32>, %[[B:[a-z0-9]+]]: memref<4x128xf32>, %[[Y:[a-z0-9]+]]: memref<?x128xbf16>
// CHECK: ggemm.launch %[[S:.+]] grid(persistent) {
// CHECK-NEXT: ^bb0(%[[CTA:.+]]: index, %[[NUM:.+]]: index):
// CHECK-NEXT: %[[RING:.+]] = ggemm.create_ring release_count(256) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
// CHECK-NEXT: %[[T:.+]] = ggemm.tile_count %[[S]]
// CHECK-NEXT: ggemm.warp_specialize producer registers(40) {
// CHECK-NEXT: %[[P0:.+]] = arith.constant 0 : index
// CHECK-NEXT: scf.for %[[ID:.+]] = %[[CTA]] to %[[T]] step %[[NUM]] iter_args(%[[PT:.+]] = %[[P0]]) -> (index) {
// CHECK-NEXT: %[[GRP:.+]], %[[ROW:.+]], %{{.+}}, %[[COL:.+]] = ggemm.map_tile %[[S]][%[[ID]]]
// CHECK-NEXT: %[[WIDX:.+]] = ggemm.weight_index %[[IDX]][%[[GRP]]] : memref<4xi32>
// CHECK-NOT: ggemm.zero_accumulator
// CHECK: %[[PEND:.+]] = scf.for %[[KB:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[PK:.+]] = %[[PT]]) -> (index) {
// CHECK-NEXT: %[[K:.+]] = arith.muli %[[KB]], %{{.+}} : index
// CHECK-NEXT: %[[TA:.+]] = ggemm.load_tile %[[X]][%[[ROW]], %[[K]]] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
// CHECK-NEXT: %[[TB:.+]] = ggemm.load_tile %[[W]][%[[WIDX]], %[[COL]], %[[K]]] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
// CHECK-NEXT: ggemm.ring_put %[[RING]][%[[PK]]], %[[TA]], %[[TB]] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
// CHECK-NEXT: %{{.+}} = arith.constant 1 : index
// CHECK-NEXT: %[[PN:.+]] = arith.addi %[[PK]], %{{.+}} : index
// CHECK-NEXT: scf.yield %[[PN]] : index
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[PEND]] : index
// CHECK-NEXT: }
// CHECK-NEXT: } consumers(2) registers(232) {
// CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT: scf.for %[[ID:.+]] = %[[CTA]] to %[[T]] step %[[NUM]] iter_args(%[[CT:.+]] = %[[C0]]) -> (index) {
// CHECK-NEXT: %[[GRP:.+]], %[[ROW:.+]], %[[END:.+]], %[[COL:.+]] = ggemm.map_tile %[[S]][%[[ID]]]
// CHECK-NEXT: %[[WIDX:.+]] = ggemm.weight_index %[[IDX]][%[[GRP]]] : memref<4xi32>
// CHECK-NOT: ggemm.load_tile
// CHECK: %[[ZERO:.+]] = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
// CHECK-NEXT: %[[LOOP:.+]]:2 = scf.for %[[KB:.+]] = %[[LB:.+]] to %{{.+}} step %{{.+}} iter_args(%[[A:.+]] = %[[ZERO]], %[[CK:.+]] = %[[CT]]) -> (!ggemm.accumulator<128x128xf32>, index) {
// CHECK-NEXT: %[[TILES:.+]]:2 = ggemm.ring_get %[[RING]][%[[CK]]] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
// CHECK-NEXT: %[[NEXT:.+]] = ggemm.mma %[[TILES]]#0, %[[TILES]]#1, %[[A]] {pending = 1 : i64} : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<128x128xf32>
// CHECK-NEXT: %[[LATER:.+]] = arith.cmpi ugt, %[[KB]], %[[LB]] : index
// CHECK-NEXT: scf.if %[[LATER]] {
// CHECK-NEXT: %{{.+}} = arith.constant 1 : index
// CHECK-NEXT: %[[PREV:.+]] = arith.subi %[[CK]], %{{.+}} : index
// CHECK-NEXT: ggemm.ring_release %[[RING]][%[[PREV]]]
// CHECK-NEXT: }
// CHECK: scf.yield %[[NEXT]], %{{.+}} : !ggemm.accumulator<128x128xf32>, index
// CHECK-NEXT: }
// CHECK-NEXT: %[[DONE:.+]] = ggemm.mma_wait %[[LOOP]]#0 : !ggemm.accumulator<128x128xf32>
// CHECK-NEXT: %[[RAN:.+]] = arith.cmpi ugt, %[[LOOP]]#1, %[[CT]] : index
// CHECK-NEXT: scf.if %[[RAN]] {
// CHECK-NEXT: %{{.+}} = arith.constant 1 : index
// CHECK-NEXT: %[[LAST:.+]] = arith.subi %[[LOOP]]#1, %{{.+}} : index
// CHECK-NEXT: ggemm.ring_release %[[RING]][%[[LAST]]]
// CHECK-NEXT: }
// CHECK-NEXT: ggemm.store_tile %[[DONE]] to %[[Y]] row(%[[ROW]]) row_end(%[[END]]) col(%[[COL]]) bias(%[[B]][%[[WIDX]]] : memref<4x128xf32>)
// CHECK-NEXT: scf.yield %[[LOOP]]#1 : index

// Without pending mmas every position is released right after its mma.
// SYNC-LABEL: func.func @segment(
// SYNC: ggemm.warp_specialize producer registers(24) {
// SYNC: } consumers(2) registers(240) {
// SYNC: %[[TILES:.+]]:2 = ggemm.ring_get %[[RING:.+]][%[[CK:.+]]] :
// SYNC-NEXT: ggemm.mma %[[TILES]]#0, %[[TILES]]#1, %{{.+}} : !ggemm.tile
// SYNC-NEXT: ggemm.ring_release %[[RING]][%[[CK]]]
// SYNC-NOT: ggemm.mma_wait
// SYNC: ggemm.store_tile
func.func @segment(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>, %indptr: memref<5xi32>,
                   %idx: memref<4xi32>, %b: memref<4x128xf32>, %y: memref<?x128xbf16>,
                   %groups: index, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %sched = ggemm.tile_schedule segment rows(%indptr : memref<5xi32>) groups(%groups)
      rows_per_group(%c0) num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, raster = along_m>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    scf.for %t = %cta to %total step %num_ctas {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%t]
      %widx = ggemm.weight_index %idx[%g] : memref<4xi32>
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c64 = arith.constant 64 : index
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      %acc = scf.for %kb = %c0 to %c4 step %c1 iter_args(%a = %zero)
          -> (!ggemm.accumulator<128x128xf32>) {
        %k = arith.muli %kb, %c64 : index
        %ta = ggemm.load_tile %x[%row, %k] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
        %tb = ggemm.load_tile %w[%widx, %col, %k] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
        %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>
            -> !ggemm.accumulator<128x128xf32>
        scf.yield %next : !ggemm.accumulator<128x128xf32>
      }
      ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col)
          bias(%b[%widx] : memref<4x128xf32>)
          : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
    }
  }
  return
}

// -----

// One CTA per tile: the roles keep the scf.if and count positions from 0.
// One consumer warpgroup: the producer keeps 56 registers (40 with two).
// CHECK-LABEL: func.func @tiles(
// CHECK: ggemm.warp_specialize producer registers(56) {
// CHECK-NEXT: %[[Z:.+]] = arith.constant 0 : index
// CHECK-NEXT: scf.if %{{.+}} {
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[Z]]) -> (index) {
// CHECK: ggemm.ring_put
// CHECK: } consumers(1) registers(232) {
// CHECK-NEXT: %[[Z:.+]] = arith.constant 0 : index
// CHECK-NEXT: scf.if %{{.+}} {
// CHECK: scf.for {{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %[[Z]]) -> (!ggemm.accumulator<64x128xf32>, index) {
// CHECK: ggemm.store_tile
func.func @tiles(%x: memref<?x256xf16>, %w: memref<4x256x128xf16>, %counts: memref<4xi32>,
                 %y: memref<?x128xf32>, %n: index) {
  %sched = ggemm.tile_schedule masked rows(%counts : memref<4xi32>) groups(%n)
      rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64, consumer_warpgroups = 1>)
  ggemm.launch %sched grid(tiles) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    %has = arith.cmpi ult, %cta, %total : index
    scf.if %has {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%cta]
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<64x128xf32>
      %acc = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %zero)
          -> (!ggemm.accumulator<64x128xf32>) {
        %ta = ggemm.load_tile %x[%row, %k] : memref<?x256xf16> -> !ggemm.tile<64x64xf16>
        %tb = ggemm.load_tile %w[%g, %k, %col]
            : memref<4x256x128xf16> -> !ggemm.tile<128x64xf16, mn_major>
        %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<64x64xf16>,
            !ggemm.tile<128x64xf16, mn_major> -> !ggemm.accumulator<64x128xf32>
        scf.yield %next : !ggemm.accumulator<64x128xf32>
      }
      ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col)
          : !ggemm.accumulator<64x128xf32>, memref<?x128xf32>
    }
  }
  return
}

// -----

// Cooperative consumers need 64 rows per warpgroup.
func.func @block_m(%x: memref<?x256xf16>, %w: memref<4x256x128xf16>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, consumer_warpgroups = 1>)
  // expected-error @+1 {{'ggemm.launch' op expects block_m (128) to be 64 x the consumer warpgroups (1): each consumer warpgroup computes 64 rows of the mma}}
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    scf.for %t = %cta to %total step %num_ctas {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%t]
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      %acc = scf.for %k = %c0 to %c1 step %c1 iter_args(%a = %zero)
          -> (!ggemm.accumulator<128x128xf32>) {
        %ta = ggemm.load_tile %x[%row, %k] : memref<?x256xf16> -> !ggemm.tile<128x64xf16>
        %tb = ggemm.load_tile %w[%g, %k, %col]
            : memref<4x256x128xf16> -> !ggemm.tile<128x64xf16, mn_major>
        %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<128x64xf16>,
            !ggemm.tile<128x64xf16, mn_major> -> !ggemm.accumulator<128x128xf32>
        scf.yield %next : !ggemm.accumulator<128x128xf32>
      }
    }
  }
  return
}

// -----

// The loads must feed the mma straight from the K loop.
func.func @load_outside_k_loop(%x: memref<?x256xf16>, %w: memref<4x256x128xf16>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64, consumer_warpgroups = 1>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    scf.for %t = %cta to %total step %num_ctas {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%t]
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %ta = ggemm.load_tile %x[%row, %c0] : memref<?x256xf16> -> !ggemm.tile<64x64xf16>
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<64x128xf32>
      %acc = scf.for %k = %c0 to %c1 step %c1 iter_args(%a = %zero)
          -> (!ggemm.accumulator<64x128xf32>) {
        %tb = ggemm.load_tile %w[%g, %k, %col]
            : memref<4x256x128xf16> -> !ggemm.tile<128x64xf16, mn_major>
        // expected-error @+1 {{'ggemm.mma' op expects operand a to be a ggemm.load_tile or ggemm.load_scales of the K loop used only here}}
        %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<64x64xf16>,
            !ggemm.tile<128x64xf16, mn_major> -> !ggemm.accumulator<64x128xf32>
        scf.yield %next : !ggemm.accumulator<64x128xf32>
      }
    }
  }
  return
}

// -----

// Tile loops must be scheduled first.
func.func @unscheduled(%n: index) {
  // expected-error @+1 {{'ggemm.foreach_tile' op is an unscheduled tile loop: run ggemm-persistent-schedule before ggemm-warp-specialize}}
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
  }
  return
}

// -----

// FP8 block scales: the ring carries the K block's scales with its tiles;
// the consumers start each block's product from zero, promote it with the
// block's scales, and release the position after the promotion. A promoted
// product is never left pending (no `pending` on the mma). The consumers
// compute where each scales entry starts in its slot: the activation
// scales from the tile's first row (row % 4, the slot being loaded from the
// 16-byte-aligned row), the weight scales at 0.
// CHECK-LABEL: func.func @fp8(
// CHECK: %[[RING:.+]] = ggemm.create_ring release_count(256) : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>, !ggemm.scales<1>>
// CHECK: ggemm.warp_specialize producer
// CHECK: %[[TA:.+]] = ggemm.load_tile
// CHECK-NEXT: %[[TB:.+]] = ggemm.load_tile
// CHECK-NEXT: %[[SA:.+]] = ggemm.load_scales
// CHECK: %[[SB:.+]] = ggemm.load_scales
// CHECK-NEXT: ggemm.ring_put %[[RING]][%{{.+}}], %[[TA]], %[[TB]], %[[SA]], %[[SB]]
// CHECK: consumers(2)
// CHECK: %{{.+}}, %[[ROW:.+]], %{{.+}}, %{{.+}} = ggemm.map_tile
// CHECK: %[[FOUR:.+]] = arith.constant 4 : index
// CHECK-NEXT: %[[AOFF:.+]] = arith.remui %[[ROW]], %[[FOUR]] : index
// CHECK-NEXT: %[[WOFF:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[GET:.+]]:4 = ggemm.ring_get %[[RING]][%[[POS:.+]]] scale_offsets(%[[AOFF]], %[[WOFF]])
// CHECK-NEXT: %[[Z:.+]] = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
// CHECK-NEXT: %[[P:.+]] = ggemm.mma %[[GET]]#0, %[[GET]]#1, %[[Z]] : !ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN> -> !ggemm.accumulator<128x128xf32>
// CHECK-NEXT: %[[NEXT:.+]] = ggemm.promote %[[P]] into %{{.+}} a_scales(%[[GET]]#2 : !ggemm.scales<128>) b_scales(%[[GET]]#3 : !ggemm.scales<1>)
// CHECK-NEXT: ggemm.ring_release %[[RING]][%[[POS]]]
// CHECK-NOT: ggemm.mma_wait
// CHECK: ggemm.store_tile
func.func @fp8(%arg0: memref<?x256xf8E4M3FN>, %arg1: memref<2x256x256xf8E4M3FN>, %arg2: memref<3xi32>, %arg3: memref<?x2xf32, strided<[1, ?]>>, %arg4: memref<2x2x2xf32>, %arg5: memref<?x256xbf16>) {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x256xf8E4M3FN>
  %c256 = arith.constant 256 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<3xi32>) groups(%c2) rows_per_group(%c0) num_rows(%dim) num_cols(%c256) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.tile_count %0
    scf.for %arg6 = %cta to %1 step %num_ctas {
      %group, %row, %row_end, %col = ggemm.map_tile %0[%arg6]
      %c2_1 = arith.constant 2 : index
      %c0_2 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c128 = arith.constant 128 : index
      %2 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      %3 = scf.for %arg7 = %c0_2 to %c2_1 step %c1 iter_args(%arg8 = %2) -> (!ggemm.accumulator<128x128xf32>) {
        %4 = arith.muli %arg7, %c128 : index
        %5 = ggemm.load_tile %arg0[%row, %4] : memref<?x256xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
        %6 = ggemm.load_tile %arg1[%group, %col, %4] : memref<2x256x256xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
        %7 = ggemm.load_scales %arg3[%row, %arg7] : memref<?x2xf32, strided<[1, ?]>> -> !ggemm.scales<128>
        %c128_3 = arith.constant 128 : index
        %8 = arith.divui %col, %c128_3 : index
        %9 = ggemm.load_scales %arg4[%group, %8, %arg7] : memref<2x2x2xf32> -> !ggemm.scales<1>
        %10 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
        %11 = ggemm.mma %5, %6, %10 : !ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN> -> !ggemm.accumulator<128x128xf32>
        %12 = ggemm.promote %11 into %arg8 a_scales(%7 : !ggemm.scales<128>) b_scales(%9 : !ggemm.scales<1>) : !ggemm.accumulator<128x128xf32>
        scf.yield %12 : !ggemm.accumulator<128x128xf32>
      }
      ggemm.store_tile %3 to %arg5 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<128x128xf32>, memref<?x256xbf16>
    }
  }
  return
}

// -----

// A scales row index the K loop computes (here any index that depends on the
// K block): the consumers compute it (a clone of its ops) before the
// ring_get that needs its scale offset.
// CHECK-LABEL: func.func @fp8_scale_row_in_k_loop(
// CHECK: consumers(2)
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (!ggemm.accumulator<128x128xf32>, index) {
// CHECK-NEXT: %[[R:.+]] = arith.addi %{{.+}}, %[[K]] : index
// CHECK-NEXT: %[[FOUR:.+]] = arith.constant 4 : index
// CHECK-NEXT: %[[OFF:.+]] = arith.remui %[[R]], %[[FOUR]] : index
// CHECK-NEXT: %[[WOFF:.+]] = arith.constant 0 : index
// CHECK-NEXT: ggemm.ring_get %{{.+}}[%{{.+}}] scale_offsets(%[[OFF]], %[[WOFF]])
func.func @fp8_scale_row_in_k_loop(%arg0: memref<?x256xf8E4M3FN>, %arg1: memref<2x256x256xf8E4M3FN>, %arg2: memref<3xi32>, %arg3: memref<?x2xf32, strided<[1, ?]>>, %arg4: memref<2x2x2xf32>, %arg5: memref<?x256xbf16>) {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x256xf8E4M3FN>
  %c256 = arith.constant 256 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<3xi32>) groups(%c2) rows_per_group(%c0) num_rows(%dim) num_cols(%c256) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.tile_count %0
    scf.for %arg6 = %cta to %1 step %num_ctas {
      %group, %row, %row_end, %col = ggemm.map_tile %0[%arg6]
      %c2_1 = arith.constant 2 : index
      %c0_2 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c128 = arith.constant 128 : index
      %2 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      %3 = scf.for %arg7 = %c0_2 to %c2_1 step %c1 iter_args(%arg8 = %2) -> (!ggemm.accumulator<128x128xf32>) {
        %4 = arith.muli %arg7, %c128 : index
        %5 = ggemm.load_tile %arg0[%row, %4] : memref<?x256xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
        %6 = ggemm.load_tile %arg1[%group, %col, %4] : memref<2x256x256xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
        %r = arith.addi %row, %arg7 : index
        %7 = ggemm.load_scales %arg3[%r, %arg7] : memref<?x2xf32, strided<[1, ?]>> -> !ggemm.scales<128>
        %c128_3 = arith.constant 128 : index
        %8 = arith.divui %col, %c128_3 : index
        %9 = ggemm.load_scales %arg4[%group, %8, %arg7] : memref<2x2x2xf32> -> !ggemm.scales<1>
        %10 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
        %11 = ggemm.mma %5, %6, %10 : !ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN> -> !ggemm.accumulator<128x128xf32>
        %12 = ggemm.promote %11 into %arg8 a_scales(%7 : !ggemm.scales<128>) b_scales(%9 : !ggemm.scales<1>) : !ggemm.accumulator<128x128xf32>
        scf.yield %12 : !ggemm.accumulator<128x128xf32>
      }
      ggemm.store_tile %3 to %arg5 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<128x128xf32>, memref<?x256xbf16>
    }
  }
  return
}

// -----

// A swap_ab config whose tile program ggemm-swap-ab has not swapped.
func.func @swap_ab_unswapped(%x: memref<?x64xbf16>, %w: memref<4x128x64xbf16>, %y: memref<?x128xbf16>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 16, block_n = 128, block_k = 64, swap_ab = true>)
  // expected-error @+1 {{'ggemm.launch' op expects the tile program of a swap_ab config to be swapped (a transposed ggemm.store_tile): run ggemm-swap-ab after ggemm-tile}}
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    scf.for %t = %cta to %total step %num_ctas {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%t]
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<16x128xf32>
      %acc = scf.for %k = %c0 to %c1 step %c1 iter_args(%a = %zero)
          -> (!ggemm.accumulator<16x128xf32>) {
        %ta = ggemm.load_tile %x[%row, %k] : memref<?x64xbf16> -> !ggemm.tile<16x64xbf16>
        %tb = ggemm.load_tile %w[%g, %col, %k] : memref<4x128x64xbf16> -> !ggemm.tile<128x64xbf16>
        %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<16x64xbf16>,
            !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<16x128xf32>
        scf.yield %next : !ggemm.accumulator<16x128xf32>
      }
      ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col)
          : !ggemm.accumulator<16x128xf32>, memref<?x128xbf16>
    }
  }
  return
}

// -----

// The K-ragged tile program (ggemm.segment_matmul_k): the producer loads
// whole boxes (TMA cannot stop at a segment's end, the next segment's rows
// exist), and the consumers zero the K rows at or past k_end in the ring
// slots before the mma reads them (ggemm.zero_k_tail, valid = k_end - k).
// CHECK-LABEL: func.func @k_ragged
// CHECK: ggemm.warp_specialize producer
// CHECK: %[[PB:.+]], %[[PE:.+]] = ggemm.segment_bounds
// CHECK: %[[PA:.+]] = ggemm.load_tile %{{.+}}[%[[PB]], %{{.+}}] k_end(%[[PE]])
// CHECK-NEXT: %[[PX:.+]] = ggemm.load_tile %{{.+}}[%[[PB]], %{{.+}}] k_end(%[[PE]])
// CHECK-NEXT: ggemm.ring_put %{{.+}}[%{{.+}}], %[[PA]], %[[PX]]
// CHECK-NOT: ggemm.zero_k_tail
// CHECK: consumers(2)
// CHECK: %[[B:.+]], %[[E:.+]] = ggemm.segment_bounds
// CHECK: %[[T:.+]]:2 = ggemm.ring_get
// CHECK-NEXT: %[[V:.+]] = arith.subi %[[E]], %[[B]] : index
// CHECK-NEXT: %[[M:.+]]:2 = ggemm.zero_k_tail %[[T]]#0, %[[T]]#1 valid(%[[V]]) : !ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<128x64xbf16, mn_major>
// CHECK-NEXT: ggemm.mma %[[M]]#0, %[[M]]#1, %{{.+}} {pending = 1 : i64}
// SYNC-LABEL: func.func @k_ragged
// SYNC: ggemm.zero_k_tail
// SYNC-NEXT: ggemm.mma
func.func @k_ragged(%dy: memref<?x128xbf16>, %x: memref<?x256xbf16>,
                    %indptr: memref<5xi32>, %dw: memref<512x256xf32>, %t: index) {
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %sched = ggemm.tile_schedule uniform groups(%c4) rows_per_group(%c128)
      num_rows(%c512) num_cols(%c256)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    scf.for %i = %cta to %total step %num_ctas {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%i]
      %begin, %end = ggemm.segment_bounds %indptr[%g] num_rows(%t) : memref<5xi32>
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      %acc = scf.for %kb = %c0 to %c1 step %c1 iter_args(%a = %zero)
          -> (!ggemm.accumulator<128x128xf32>) {
        %ta = ggemm.load_tile %dy[%begin, %row] k_end(%end)
            : memref<?x128xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
        %tb = ggemm.load_tile %x[%begin, %col] k_end(%end)
            : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
        %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<128x64xbf16, mn_major>,
            !ggemm.tile<128x64xbf16, mn_major> -> !ggemm.accumulator<128x128xf32>
        scf.yield %next : !ggemm.accumulator<128x128xf32>
      }
      ggemm.store_tile %acc to %dw row(%row) row_end(%row_end) col(%col)
          : !ggemm.accumulator<128x128xf32>, memref<512x256xf32>
    }
  }
  return
}

// -----

// A transposed K-ragged program (k_major tiles, K blocks aligned below the
// segment's start): the consumers also zero what lies before k_begin
// (ggemm.zero_k_tail ... from(k_begin - k)).
// CHECK-LABEL: func.func @k_ragged_transposed
// CHECK: consumers(2)
// CHECK: %[[B:.+]], %[[E:.+]] = ggemm.segment_bounds
// CHECK: %[[T:.+]]:2 = ggemm.ring_get
// CHECK: %[[K:.+]] = arith.muli
// CHECK-NEXT: %[[V:.+]] = arith.subi %[[E]], %[[K]] : index
// CHECK-NEXT: %[[F:.+]] = arith.subi %[[B]], %[[K]] : index
// CHECK-NEXT: %[[M:.+]]:2 = ggemm.zero_k_tail %[[T]]#0, %[[T]]#1 valid(%[[V]]) from(%[[F]]) : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>
// CHECK-NEXT: ggemm.mma %[[M]]#0, %[[M]]#1, %{{.+}} {pending = 1 : i64}
func.func @k_ragged_transposed(%dy: memref<128x?xbf16>, %x: memref<256x?xbf16>,
                               %indptr: memref<5xi32>, %dw: memref<512x256xf32>, %t: index) {
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %sched = ggemm.tile_schedule uniform groups(%c4) rows_per_group(%c128)
      num_rows(%c512) num_cols(%c256)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    scf.for %i = %cta to %total step %num_ctas {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%i]
      %begin, %end = ggemm.segment_bounds %indptr[%g] num_rows(%t) : memref<5xi32>
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %first = arith.divui %begin, %c64 : index
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      %acc = scf.for %kb = %c0 to %c1 step %c1 iter_args(%a = %zero)
          -> (!ggemm.accumulator<128x128xf32>) {
        %blk = arith.addi %first, %kb : index
        %k = arith.muli %blk, %c64 : index
        %ta = ggemm.load_tile %dy[%row, %k] k_begin(%begin) k_end(%end)
            : memref<128x?xbf16> -> !ggemm.tile<128x64xbf16>
        %tb = ggemm.load_tile %x[%col, %k] k_begin(%begin) k_end(%end)
            : memref<256x?xbf16> -> !ggemm.tile<128x64xbf16>
        %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<128x64xbf16>,
            !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<128x128xf32>
        scf.yield %next : !ggemm.accumulator<128x128xf32>
      }
      ggemm.store_tile %acc to %dw row(%row) row_end(%row_end) col(%col)
          : !ggemm.accumulator<128x128xf32>, memref<512x256xf32>
    }
  }
  return
}

// -----

// Only the tiles whose loads have a k_end are zeroed, each by its own K
// index.
// CHECK-LABEL: func.func @k_end_only
// CHECK: consumers(2)
// CHECK: %[[T:.+]]:2 = ggemm.ring_get
// CHECK-NEXT: %[[V:.+]] = arith.subi %{{.+}}, %{{.+}} : index
// CHECK-NEXT: %[[M:.+]] = ggemm.zero_k_tail %[[T]]#0 valid(%[[V]]) : !ggemm.tile<128x64xbf16, mn_major>
// CHECK-NEXT: ggemm.mma %[[M]], %[[T]]#1, %{{.+}}
func.func @k_end_only(%dy: memref<?x128xbf16>, %x: memref<?x256xbf16>,
                      %dw: memref<512x256xf32>, %end: index) {
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %sched = ggemm.tile_schedule uniform groups(%c4) rows_per_group(%c128)
      num_rows(%c512) num_cols(%c256)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    scf.for %i = %cta to %total step %num_ctas {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%i]
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      %acc = scf.for %kb = %c0 to %c1 step %c1 iter_args(%a = %zero)
          -> (!ggemm.accumulator<128x128xf32>) {
        %ta = ggemm.load_tile %dy[%kb, %row] k_end(%end)
            : memref<?x128xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
        %tb = ggemm.load_tile %x[%kb, %col]
            : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
        %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<128x64xbf16, mn_major>,
            !ggemm.tile<128x64xbf16, mn_major> -> !ggemm.accumulator<128x128xf32>
        scf.yield %next : !ggemm.accumulator<128x128xf32>
      }
      ggemm.store_tile %acc to %dw row(%row) row_end(%row_end) col(%col)
          : !ggemm.accumulator<128x128xf32>, memref<512x256xf32>
    }
  }
  return
}

// -----

// 2-CTA clusters along m: the ring's weight tile (entry 1) is multicast,
// and a slot is free once every consumer warp of both CTAs released it
// (8 warps x 2 CTAs).
// CHECK-LABEL: func.func @clustered(
// CHECK: ggemm.create_ring release_count(16) {multicast = array<i64: 1>} : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
// CHECK: ggemm.map_tile %{{.+}}[%{{.+}}] cluster_rank(%{{.+}})
func.func @clustered(%arg0: memref<?x256xbf16>, %arg1: memref<4x256x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<?x256xbf16>) {
  %c4 = arith.constant 4 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x256xbf16>
  %c256 = arith.constant 256 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<5xi32>) groups(%c4) rows_per_group(%c0) num_rows(%dim) num_cols(%c256) config(#ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, cluster_m = 2, raster = along_m>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.tile_count %0
    %c2 = arith.constant 2 : index
    %2 = arith.divui %cta, %c2 : index
    %3 = arith.remui %cta, %c2 : index
    %4 = arith.divui %num_ctas, %c2 : index
    scf.for %arg4 = %2 to %1 step %4 {
      %group, %row, %row_end, %col = ggemm.map_tile %0[%arg4] cluster_rank(%3)
      %c4_1 = arith.constant 4 : index
      %c64 = arith.constant 64 : index
      %c0_2 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %5 = ggemm.zero_accumulator : !ggemm.accumulator<128x256xf32>
      %6 = scf.for %arg5 = %c0_2 to %c4_1 step %c1 iter_args(%arg6 = %5) -> (!ggemm.accumulator<128x256xf32>) {
        %7 = arith.muli %arg5, %c64 : index
        %8 = ggemm.load_tile %arg0[%row, %7] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
        %9 = ggemm.load_tile %arg1[%group, %col, %7] : memref<4x256x256xbf16> -> !ggemm.tile<256x64xbf16>
        %10 = ggemm.mma %8, %9, %arg6 : !ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16> -> !ggemm.accumulator<128x256xf32>
        scf.yield %10 : !ggemm.accumulator<128x256xf32>
      }
      ggemm.store_tile %6 to %arg3 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<128x256xf32>, memref<?x256xbf16>
    }
  }
  return
}
