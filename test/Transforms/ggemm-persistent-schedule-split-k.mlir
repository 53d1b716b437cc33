// ggemm-persistent-schedule with split-K clusters (split_k = S > 1): the S
// CTAs of a cluster walk the tiles together from their cluster's index,
// striding by the number of clusters; rank r runs K blocks [r KB / S,
// (r + 1) KB / S) of each tile's K loop, ggemm.split_k_sum adds the
// partial sums into rank 0 (round: the tile's ordinal among the cluster's,
// more: whether the cluster has a next tile), and rank 0 alone stores the
// tile. Split-K needs the persistent grid and a tile body whose one store
// takes the result of a K loop from 0 by 1. With split_k_tail only the
// tiles of the last, partial wave are split (last case).
// RUN: gemm-opt %s -split-input-file -ggemm-persistent-schedule -verify-diagnostics | FileCheck %s
// RUN: not gemm-opt %s -split-input-file -ggemm-persistent-schedule=grid=tiles -o /dev/null 2>&1 | FileCheck %s --check-prefix=TILES

// TILES: error: 'ggemm.foreach_tile' op expects grid=persistent with split_k = 4: a cluster's CTAs walk their tiles together
// TILES: error: 'ggemm.foreach_tile' op expects grid=persistent with split_k = 2: a cluster's CTAs walk their tiles together

// CHECK-LABEL: func.func @split_k(
// CHECK: ggemm.launch %[[S:.+]] grid(persistent) dependent_launch {
// CHECK-NEXT: ^bb0(%[[CTA:.+]]: index, %[[NUM:.+]]: index):
// CHECK-NEXT: ggemm.wait_dependency
// CHECK-NEXT: %[[T:.+]] = ggemm.tile_count %[[S]]
// CHECK-NEXT: %[[C4:.+]] = arith.constant 4 : index
// CHECK-NEXT: %[[CL:.+]] = arith.divui %[[CTA]], %[[C4]] : index
// CHECK-NEXT: %[[RANK:.+]] = arith.remui %[[CTA]], %[[C4]] : index
// CHECK-NEXT: %[[NCL:.+]] = arith.divui %[[NUM]], %[[C4]] : index
// CHECK-NEXT: scf.for %[[ID:.+]] = %[[CL]] to %[[T]] step %[[NCL]] {
// CHECK-NEXT: %{{.+}}, %[[ROW:.+]], %[[END:.+]], %[[COL:.+]] = ggemm.map_tile %[[S]][%[[ID]]]
// CHECK: %[[KB:.+]] = arith.constant 56 : index
// CHECK: %[[ZERO:.+]] = ggemm.zero_accumulator : !ggemm.accumulator<64x8xf32>
// CHECK: %[[SIZE:.+]] = arith.constant 4 : index
// CHECK-NEXT: %[[M0:.+]] = arith.muli %[[RANK]], %[[KB]] : index
// CHECK-NEXT: %[[LO:.+]] = arith.divui %[[M0]], %[[SIZE]] : index
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT: %[[NEXT:.+]] = arith.addi %[[RANK]], %[[ONE]] : index
// CHECK-NEXT: %[[M1:.+]] = arith.muli %[[NEXT]], %[[KB]] : index
// CHECK-NEXT: %[[HI:.+]] = arith.divui %[[M1]], %[[SIZE]] : index
// CHECK-NEXT: %[[ACC:.+]] = scf.for %{{.+}} = %[[LO]] to %[[HI]] step %{{.+}} iter_args(%{{.+}} = %[[ZERO]])
// CHECK: %[[SINCE:.+]] = arith.subi %[[ID]], %[[CL]] : index
// CHECK-NEXT: %[[ROUND:.+]] = arith.divui %[[SINCE]], %[[NCL]] : index
// CHECK-NEXT: %[[AFTER:.+]] = arith.addi %[[ID]], %[[NCL]] : index
// CHECK-NEXT: %[[MORE:.+]] = arith.cmpi ult, %[[AFTER]], %[[T]] : index
// CHECK-NEXT: %[[SUM:.+]] = ggemm.split_k_sum %[[ACC]] rank(%[[RANK]]) round(%[[ROUND]]) more(%[[MORE]]) : !ggemm.accumulator<64x8xf32>
// CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[LEAD:.+]] = arith.cmpi eq, %[[RANK]], %[[C0]] : index
// CHECK-NEXT: scf.if %[[LEAD]] {
// CHECK-NEXT: ggemm.store_tile %[[SUM]] to %{{.+}} row(%[[ROW]]) row_end(%[[END]]) col(%[[COL]]) transposed
// CHECK-NEXT: }
// CHECK-NEXT: }
func.func @split_k(%arg0: memref<?x7168xf8E4M3FN>, %arg1: memref<1x2112x7168xf8E4M3FN>, %arg2: memref<2xi32>, %arg3: memref<?x56xf32, strided<[1, ?]>>, %arg4: memref<1x17x56xf32>, %arg5: memref<?x2112xbf16>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x7168xf8E4M3FN>
  %c2112 = arith.constant 2112 : index
  ggemm.foreach_tile segment rows(%arg2 : memref<2xi32>) groups(%c1) rows_per_group(%c0) num_rows(%dim) num_cols(%c2112) config(#ggemm.tile_config<block_m = 8, block_n = 64, block_k = 128, stages = 8, consumer_warpgroups = 1, swap_ab = true, split_k = 4>) {
  ^bb0(%group: index, %row: index, %row_end: index, %col: index):
    %c56 = arith.constant 56 : index
    %c128 = arith.constant 128 : index
    %c0_1 = arith.constant 0 : index
    %c1_2 = arith.constant 1 : index
    %0 = ggemm.zero_accumulator : !ggemm.accumulator<64x8xf32>
    %1 = scf.for %arg6 = %c0_1 to %c56 step %c1_2 iter_args(%arg7 = %0) -> (!ggemm.accumulator<64x8xf32>) {
      %2 = arith.muli %arg6, %c128 : index
      %3 = ggemm.load_tile %arg0[%row, %2] : memref<?x7168xf8E4M3FN> -> !ggemm.tile<8x128xf8E4M3FN>
      %4 = ggemm.load_tile %arg1[%group, %col, %2] : memref<1x2112x7168xf8E4M3FN> -> !ggemm.tile<64x128xf8E4M3FN>
      %5 = ggemm.load_scales %arg3[%row, %arg6] : memref<?x56xf32, strided<[1, ?]>> -> !ggemm.scales<8>
      %6 = arith.divui %col, %c128 : index
      %7 = ggemm.load_scales %arg4[%group, %6, %arg6] : memref<1x17x56xf32> -> !ggemm.scales<1>
      %8 = ggemm.zero_accumulator : !ggemm.accumulator<64x8xf32>
      %9 = ggemm.mma %4, %3, %8 : !ggemm.tile<64x128xf8E4M3FN>, !ggemm.tile<8x128xf8E4M3FN> -> !ggemm.accumulator<64x8xf32>
      %10 = ggemm.promote %9 into %arg7 a_scales(%7 : !ggemm.scales<1>) b_scales(%5 : !ggemm.scales<8>) : !ggemm.accumulator<64x8xf32>
      scf.yield %10 : !ggemm.accumulator<64x8xf32>
    }
    ggemm.store_tile %1 to %arg5 row(%row) row_end(%row_end) col(%col) transposed : !ggemm.accumulator<64x8xf32>, memref<?x2112xbf16>
  }
  return
}

// -----

// Two stores: which one the partial sums go to is not clear.
func.func @two_stores(%x: memref<?x64xbf16>, %w: memref<1x64x64xbf16>, %p: memref<2xi32>, %y: memref<?x64xbf16>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %dim = memref.dim %x, %c0 : memref<?x64xbf16>
  %c64 = arith.constant 64 : index
  // expected-error @+1 {{'ggemm.foreach_tile' op expects, with split_k = 2, a tile body of one ggemm.store_tile of the result of an scf.for K loop from 0 by 1 (as ggemm-tile writes it)}}
  ggemm.foreach_tile segment rows(%p : memref<2xi32>) groups(%c1) rows_per_group(%c0) num_rows(%dim) num_cols(%c64) config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, consumer_warpgroups = 1, split_k = 2>) {
  ^bb0(%group: index, %row: index, %row_end: index, %col: index):
    %c0_1 = arith.constant 0 : index
    %c1_2 = arith.constant 1 : index
    %0 = ggemm.zero_accumulator : !ggemm.accumulator<64x64xf32>
    %1 = scf.for %k = %c0_1 to %c1_2 step %c1_2 iter_args(%acc = %0) -> (!ggemm.accumulator<64x64xf32>) {
      %a = ggemm.load_tile %x[%row, %c0_1] : memref<?x64xbf16> -> !ggemm.tile<64x64xbf16>
      %b = ggemm.load_tile %w[%group, %col, %c0_1] : memref<1x64x64xbf16> -> !ggemm.tile<64x64xbf16>
      %2 = ggemm.mma %a, %b, %acc : !ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16> -> !ggemm.accumulator<64x64xf32>
      scf.yield %2 : !ggemm.accumulator<64x64xf32>
    }
    ggemm.store_tile %1 to %y row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<64x64xf32>, memref<?x64xbf16>
    ggemm.store_tile %1 to %y row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<64x64xf32>, memref<?x64xbf16>
  }
  return
}

// -----

// split_k_tail: the tiles of whole waves one CTA each, then, when the tiles
// left over fit the grid 2 CTAs each, those split over the clusters of 2.
// One loop over units: unit u < whole is tile u; u = whole + 2 j + r is
// rank r's half of tile whole + j (r = u mod 2, the CTA's rank). The K loop
// counts the unit's blocks from 0 (56, or 28 from the rank's first) and
// offsets them; ggemm.split_k_sum, active in split units only, has no tile
// after it (more = false); whole tiles and rank 0 store.
// CHECK-LABEL: func.func @split_k_tail(
// CHECK: %[[T:.+]] = ggemm.tile_count %[[S:.+]]
// CHECK-NEXT: %[[C2:.+]] = arith.constant 2 : index
// CHECK-NEXT: %[[WAVES:.+]] = arith.divui %[[T]], %[[NUM:.+]] : index
// CHECK-NEXT: %[[WHOLE:.+]] = arith.muli %[[WAVES]], %[[NUM]] : index
// CHECK-NEXT: %[[REST:.+]] = arith.subi %[[T]], %[[WHOLE]] : index
// CHECK-NEXT: %[[RESTCTAS:.+]] = arith.muli %[[REST]], %[[C2]] : index
// CHECK-NEXT: %[[SPLIT:.+]] = arith.cmpi ule, %[[RESTCTAS]], %[[NUM]] : index
// CHECK-NEXT: %[[ALL:.+]] = arith.addi %[[WHOLE]], %[[RESTCTAS]] : index
// CHECK-NEXT: %[[UNITS:.+]] = arith.select %[[SPLIT]], %[[ALL]], %[[T]] : index
// CHECK-NEXT: scf.for %[[U:.+]] = %[[CTA:.+]] to %[[UNITS]] step %[[NUM]] {
// CHECK-NEXT: %[[RANK:.+]] = arith.remui %[[U]], %[[C2]] : index
// CHECK-NEXT: %[[PAST:.+]] = arith.cmpi uge, %[[U]], %[[WHOLE]] : index
// CHECK-NEXT: %[[TAIL:.+]] = arith.andi %[[SPLIT]], %[[PAST]] : i1
// CHECK-NEXT: %[[SINCE:.+]] = arith.subi %[[U]], %[[WHOLE]] : index
// CHECK-NEXT: %[[J:.+]] = arith.divui %[[SINCE]], %[[C2]] : index
// CHECK-NEXT: %[[TAILTILE:.+]] = arith.addi %[[WHOLE]], %[[J]] : index
// CHECK-NEXT: %[[ID:.+]] = arith.select %[[TAIL]], %[[TAILTILE]], %[[U]] : index
// CHECK-NEXT: %{{.+}}, %[[ROW:.+]], %[[END:.+]], %[[COL:.+]] = ggemm.map_tile %[[S]][%[[ID]]]
// CHECK: %[[C56:.+]] = arith.constant 56 : index
// CHECK: %[[M:.+]] = arith.muli %[[RANK]], %[[C56]] : index
// CHECK-NEXT: %[[FIRST:.+]] = arith.divui %[[M]], %[[C2]] : index
// CHECK-NEXT: %[[C28:.+]] = arith.constant 28 : index
// CHECK-NEXT: %[[LAST:.+]] = arith.addi %[[FIRST]], %[[C28]] : index
// CHECK-NEXT: %[[OFFSET:.+]] = arith.select %[[TAIL]], %[[FIRST]], %{{.+}} : index
// CHECK-NEXT: %[[SPAN:.+]] = arith.subi %[[LAST]], %[[FIRST]] : index
// CHECK-NEXT: %[[COUNT:.+]] = arith.select %[[TAIL]], %[[SPAN]], %[[C56]] : index
// CHECK-NEXT: %[[ACC:.+]] = scf.for %[[KK:.+]] = %{{.+}} to %[[COUNT]] step %{{.+}} iter_args
// CHECK-NEXT: %[[K:.+]] = arith.addi %[[OFFSET]], %[[KK]] : index
// CHECK-NEXT: arith.muli %[[K]], %{{.+}} : index
// CHECK: ggemm.load_scales %{{.+}}[%[[ROW]], %[[K]]]
// CHECK: %[[FALSE:.+]] = arith.constant false
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[SUM:.+]] = ggemm.split_k_sum %[[ACC]] rank(%[[RANK]]) round(%[[ZERO]]) more(%[[FALSE]]) active(%[[TAIL]]) : !ggemm.accumulator<192x128xf32>
// CHECK: %[[LEAD:.+]] = arith.cmpi eq, %[[RANK]], %{{.+}} : index
// CHECK: %[[WHOLETILE:.+]] = arith.xori %[[TAIL]], %{{.+}} : i1
// CHECK-NEXT: %[[STORES:.+]] = arith.ori %[[WHOLETILE]], %[[LEAD]] : i1
// CHECK-NEXT: scf.if %[[STORES]] {
// CHECK-NEXT: ggemm.store_tile %[[SUM]] to %{{.+}} row(%[[ROW]]) row_end(%[[END]]) col(%[[COL]])
func.func @split_k_tail(%arg0: memref<?x7168xf8E4M3FN>, %arg1: memref<1x4096x7168xf8E4M3FN>, %arg2: memref<2xi32>, %arg3: memref<?x56xf32, strided<[1, ?]>>, %arg4: memref<1x32x56xf32>, %arg5: memref<?x4096xbf16>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x7168xf8E4M3FN>
  %c4096 = arith.constant 4096 : index
  ggemm.foreach_tile segment rows(%arg2 : memref<2xi32>) groups(%c1) rows_per_group(%c0) num_rows(%dim) num_cols(%c4096) config(#ggemm.tile_config<block_m = 192, block_n = 128, block_k = 128, consumer_warpgroups = 3, split_k = 2, split_k_tail = true>) {
  ^bb0(%group: index, %row: index, %row_end: index, %col: index):
    %c56 = arith.constant 56 : index
    %c128 = arith.constant 128 : index
    %c0_1 = arith.constant 0 : index
    %c1_2 = arith.constant 1 : index
    %0 = ggemm.zero_accumulator : !ggemm.accumulator<192x128xf32>
    %1 = scf.for %arg6 = %c0_1 to %c56 step %c1_2 iter_args(%arg7 = %0) -> (!ggemm.accumulator<192x128xf32>) {
      %2 = arith.muli %arg6, %c128 : index
      %3 = ggemm.load_tile %arg0[%row, %2] : memref<?x7168xf8E4M3FN> -> !ggemm.tile<192x128xf8E4M3FN>
      %4 = ggemm.load_tile %arg1[%group, %col, %2] : memref<1x4096x7168xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
      %5 = ggemm.load_scales %arg3[%row, %arg6] : memref<?x56xf32, strided<[1, ?]>> -> !ggemm.scales<192>
      %6 = arith.divui %col, %c128 : index
      %7 = ggemm.load_scales %arg4[%group, %6, %arg6] : memref<1x32x56xf32> -> !ggemm.scales<1>
      %8 = ggemm.zero_accumulator : !ggemm.accumulator<192x128xf32>
      %9 = ggemm.mma %3, %4, %8 : !ggemm.tile<192x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN> -> !ggemm.accumulator<192x128xf32>
      %10 = ggemm.promote %9 into %arg7 a_scales(%5 : !ggemm.scales<192>) b_scales(%7 : !ggemm.scales<1>) : !ggemm.accumulator<192x128xf32>
      scf.yield %10 : !ggemm.accumulator<192x128xf32>
    }
    ggemm.store_tile %1 to %arg5 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<192x128xf32>, memref<?x4096xbf16>
  }
  return
}
