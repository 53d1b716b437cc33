// ggemm-warp-specialize with `promote_pairs = true` in the tile config: the
// consumers take two promoted K blocks per step (block i's product left
// pending while block i + 1's is issued, one wait for both, the two
// promoted in order) and finish an odd count with one block on its own.
// RUN: gemm-opt %s -split-input-file -ggemm-warp-specialize -verify-diagnostics | FileCheck %s

// Before: the tile program of ggemm-persistent-schedule, three K blocks of
// FP8 with 1x128 / 128x128 scales, each product promoted.
// After: the producer is unchanged (one ring position per K block); the
// consumers' K loop runs to 2 x floor(3 / 2) blocks, two at a time: the
// first mma `pending = 1`, the second's ring_get and mma, an mma_wait on
// the first product, the promotes in block order, both positions
// released; then an scf.if takes the last block when the count is odd.
// CHECK-LABEL: func.func @fp8_pairs(
// CHECK: %[[RING:.+]] = ggemm.create_ring release_count(256)
// CHECK: ggemm.warp_specialize producer
// CHECK: scf.for
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[BLOCKS:.+]] step %{{.+}} iter_args(
// CHECK: ggemm.ring_put
// CHECK: consumers(2)
// CHECK: %[[ZERO:.+]] = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
// CHECK: %[[COUNT:.+]] = arith.ceildivui
// CHECK-NEXT: %[[PAIRS:.+]] = arith.divui %[[COUNT]], %[[TWO:.+]] : index
// CHECK-NEXT: %[[STEP2:.+]] = arith.muli %{{.+}}, %[[TWO]] : index
// CHECK-NEXT: %[[SPAN:.+]] = arith.muli %[[PAIRS]], %[[STEP2]] : index
// CHECK-NEXT: %[[PAIRED_END:.+]] = arith.addi %[[LB:.+]], %[[SPAN]] : index
// CHECK-NEXT: %[[LOOP:.+]]:2 = scf.for %[[KB:.+]] = %[[LB]] to %[[PAIRED_END]] step %[[STEP2]] iter_args(%[[ACC:.+]] = %[[ZERO]], %[[POS:.+]] = %{{.+}})
// CHECK-NEXT: %[[FOUR:.+]] = arith.constant 4 : index
// CHECK-NEXT: %[[OFF0:.+]] = arith.remui %row, %[[FOUR]] : index
// CHECK-NEXT: %[[WOFF0:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[G0:.+]]:4 = ggemm.ring_get %[[RING]][%[[POS]]] scale_offsets(%[[OFF0]], %[[WOFF0]])
// CHECK-NEXT: %[[Z0:.+]] = ggemm.zero_accumulator
// CHECK-NEXT: %[[P0:.+]] = ggemm.mma %[[G0]]#0, %[[G0]]#1, %[[Z0]] {pending = 1 : i64}
// CHECK: %[[POS1:.+]] = arith.addi %[[POS]], %{{.+}} : index
// CHECK: %[[G1:.+]]:4 = ggemm.ring_get %[[RING]][%[[POS1]]] scale_offsets(%{{.+}}, %{{.+}})
// CHECK-NEXT: %[[Z1:.+]] = ggemm.zero_accumulator
// CHECK-NEXT: %[[P1:.+]] = ggemm.mma %[[G1]]#0, %[[G1]]#1, %[[Z1]] :
// CHECK-NEXT: %[[DONE0:.+]] = ggemm.mma_wait %[[P0]]
// CHECK-NEXT: %[[A0:.+]] = ggemm.promote %[[DONE0]] into %[[ACC]] a_scales(%[[G0]]#2 : !ggemm.scales<128>) b_scales(%[[G0]]#3 : !ggemm.scales<1>)
// CHECK-NEXT: %[[A1:.+]] = ggemm.promote %[[P1]] into %[[A0]] a_scales(%[[G1]]#2 : !ggemm.scales<128>) b_scales(%[[G1]]#3 : !ggemm.scales<1>)
// CHECK-NEXT: ggemm.ring_release %[[RING]][%[[POS]]]
// CHECK-NEXT: ggemm.ring_release %[[RING]][%[[POS1]]]
// CHECK: %[[NEXT:.+]] = arith.addi %[[POS1]], %{{.+}} : index
// CHECK-NEXT: scf.yield %[[A1]], %[[NEXT]]
// CHECK: %[[ODD:.+]] = arith.cmpi ult, %[[PAIRED_END]], %{{.+}} : index
// CHECK-NEXT: %[[LAST:.+]]:2 = scf.if %[[ODD]] -> (!ggemm.accumulator<128x128xf32>, index) {
// CHECK: %[[G2:.+]]:4 = ggemm.ring_get %[[RING]][%[[LOOP]]#1] scale_offsets(%{{.+}}, %{{.+}})
// CHECK-NEXT: %[[Z2:.+]] = ggemm.zero_accumulator
// CHECK-NEXT: %[[P2:.+]] = ggemm.mma %[[G2]]#0, %[[G2]]#1, %[[Z2]] :
// CHECK-NEXT: %[[A2:.+]] = ggemm.promote %[[P2]] into %[[LOOP]]#0
// CHECK-NEXT: ggemm.ring_release %[[RING]][%[[LOOP]]#1]
// CHECK: scf.yield %[[A2]], %{{.+}}
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[LOOP]]#0, %[[LOOP]]#1
// CHECK: ggemm.store_tile %[[LAST]]#0
// CHECK-NOT: ggemm.mma_wait
// CHECK: scf.yield %[[LAST]]#1
func.func @fp8_pairs(%x: memref<?x384xf8E4M3FN>, %w: memref<2x256x384xf8E4M3FN>, %indptr: memref<3xi32>,
                     %xs: memref<?x3xf32, strided<[1, ?]>>, %ws: memref<2x2x3xf32>, %y: memref<?x256xbf16>,
                     %m: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %sched = ggemm.tile_schedule segment rows(%indptr : memref<3xi32>) groups(%c2)
      rows_per_group(%c0) num_rows(%m) num_cols(%c256)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128, promote_pairs = true>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    scf.for %t = %cta to %total step %num_ctas {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%t]
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %c128 = arith.constant 128 : index
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      %acc = scf.for %kb = %c0 to %c3 step %c1 iter_args(%a = %zero)
          -> (!ggemm.accumulator<128x128xf32>) {
        %k = arith.muli %kb, %c128 : index
        %ta = ggemm.load_tile %x[%row, %k] : memref<?x384xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
        %tb = ggemm.load_tile %w[%g, %col, %k] : memref<2x256x384xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
        %sa = ggemm.load_scales %xs[%row, %kb] : memref<?x3xf32, strided<[1, ?]>> -> !ggemm.scales<128>
        %nb = arith.divui %col, %c128 : index
        %sb = ggemm.load_scales %ws[%g, %nb, %kb] : memref<2x2x3xf32> -> !ggemm.scales<1>
        %z = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
        %p = ggemm.mma %ta, %tb, %z : !ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>
            -> !ggemm.accumulator<128x128xf32>
        %next = ggemm.promote %p into %a a_scales(%sa : !ggemm.scales<128>) b_scales(%sb : !ggemm.scales<1>)
            : !ggemm.accumulator<128x128xf32>
        scf.yield %next : !ggemm.accumulator<128x128xf32>
      }
      ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col)
          : !ggemm.accumulator<128x128xf32>, memref<?x256xbf16>
    }
  }
  return
}

// -----

// promote_pairs needs a promoted product: a bf16 mma updates the
// accumulator itself.
func.func @pairs_without_promote(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>, %indptr: memref<5xi32>,
                                 %y: memref<?x128xbf16>, %groups: index, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %sched = ggemm.tile_schedule segment rows(%indptr : memref<5xi32>) groups(%groups)
      rows_per_group(%c0) num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, promote_pairs = true>)
  // expected-error @+1 {{'ggemm.launch' op expects promote_pairs only with block-scaled operands (a ggemm.promote of each K block's product), got a tile program whose mma updates the accumulator itself}}
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    scf.for %t = %cta to %total step %num_ctas {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%t]
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
  }
  return
}
