// ggemm-warp-specialize with a pingpong tile config: the two consumer
// warpgroups take alternate tiles of the CTA, skip each other's ring
// positions and hand the ring over once per tile.
// RUN: gemm-opt %s -split-input-file -ggemm-warp-specialize -verify-diagnostics | FileCheck %s
// RUN: not gemm-opt %s -split-input-file -ggemm-warp-specialize="consumer-warpgroups=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTION

// Before: the tile program of ggemm-persistent-schedule, 64-row tiles.
// After: the producer is unchanged (all tiles in order); consumer warpgroup
// %wg walks tiles cta + wg * num_ctas, step 2 num_ctas; its tiles' ring
// positions start at position + wg * (K blocks) and the loop carries
// position + 2 (K blocks); every tile but the CTA's first waits for its
// turn, and a tile with a next one passes it after its K loop.
// CHECK-LABEL: func.func @pingpong(
// CHECK: ggemm.create_ring release_count(128)
// CHECK: ggemm.warp_specialize producer registers(40) {
// CHECK: scf.for %{{.+}} = %[[CTA:cta]] to %[[TOTAL:.+]] step %[[NUM:num_ctas]] iter_args(
// CHECK: ggemm.ring_put
// CHECK: } consumers(2) pingpong registers(232) {
// CHECK-NEXT: %[[WG:.+]] = ggemm.consumer_warpgroup
// CHECK: %[[OFF:.+]] = arith.muli %[[WG]], %[[NUM]] : index
// CHECK-NEXT: %[[FIRST:.+]] = arith.addi %[[CTA]], %[[OFF]] : index
// CHECK-NEXT: %[[STEP:.+]] = arith.addi %[[NUM]], %[[NUM]] : index
// CHECK-NEXT: scf.for %[[T:.+]] = %[[FIRST]] to %[[TOTAL]] step %[[STEP]] iter_args(%[[POS:.+]] = %{{.+}}) -> (index) {
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui
// CHECK-NEXT: %[[SKIP:.+]] = arith.muli %[[WG]], %[[BLOCKS]] : index
// CHECK-NEXT: %[[START:.+]] = arith.addi %[[POS]], %[[SKIP]] : index
// CHECK-NEXT: %[[LATER:.+]] = arith.cmpi ne, %[[T]], %[[CTA]] : index
// CHECK-NEXT: scf.if %[[LATER]] {
// CHECK-NEXT: ggemm.turn_wait
// CHECK-NEXT: }
// CHECK-NEXT: %[[K:.+]]:2 = scf.for %{{.+}} = %{{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %[[START]])
// CHECK: ggemm.ring_get
// CHECK: ggemm.mma
// CHECK: scf.yield %{{.+}}, %{{.+}} : !ggemm.accumulator<64x256xf32>, index
// CHECK-NEXT: }
// CHECK-NEXT: %[[NEXT:.+]] = arith.addi %[[T]], %[[NUM]] : index
// CHECK-NEXT: %[[MORE:.+]] = arith.cmpi ult, %[[NEXT]], %[[TOTAL]] : index
// CHECK-NEXT: scf.if %[[MORE]] {
// CHECK-NEXT: ggemm.turn_pass
// CHECK-NEXT: }
// CHECK-NEXT: ggemm.mma_wait %[[K]]#0
// CHECK: ggemm.store_tile
// CHECK-NEXT: %[[TWO:.+]] = arith.addi %[[BLOCKS]], %[[BLOCKS]] : index
// CHECK-NEXT: %[[NEXTPOS:.+]] = arith.addi %[[POS]], %[[TWO]] : index
// CHECK-NEXT: scf.yield %[[NEXTPOS]] : index
// OPTION: error: 'ggemm.launch' op expects 2 consumer warpgroups for a pingpong config, got 1 (consumer-warpgroups option)
func.func @pingpong(%x: memref<?x?xbf16>, %w: memref<4x256x?xbf16>, %indptr: memref<5xi32>,
                    %y: memref<?x256xbf16>, %groups: index, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %sched = ggemm.tile_schedule segment rows(%indptr : memref<5xi32>) groups(%groups)
      rows_per_group(%c0) num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64, pingpong = true>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    scf.for %t = %cta to %total step %num_ctas {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%t]
      %c1 = arith.constant 1 : index
      %c63 = arith.constant 63 : index
      %c64 = arith.constant 64 : index
      %k = memref.dim %x, %c1 : memref<?x?xbf16>
      %k63 = arith.addi %k, %c63 : index
      %blocks = arith.divui %k63, %c64 : index
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<64x256xf32>
      %acc = scf.for %kb = %c0 to %blocks step %c1 iter_args(%a = %zero)
          -> (!ggemm.accumulator<64x256xf32>) {
        %kk = arith.muli %kb, %c64 : index
        %ta = ggemm.load_tile %x[%row, %kk] : memref<?x?xbf16> -> !ggemm.tile<64x64xbf16>
        %tb = ggemm.load_tile %w[%g, %col, %kk] : memref<4x256x?xbf16> -> !ggemm.tile<256x64xbf16>
        %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<64x64xbf16>, !ggemm.tile<256x64xbf16>
            -> !ggemm.accumulator<64x256xf32>
        scf.yield %next : !ggemm.accumulator<64x256xf32>
      }
      ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col)
          : !ggemm.accumulator<64x256xf32>, memref<?x256xbf16>
    }
  }
  return
}

// -----

// The warpgroups skip each other's K blocks: every tile must have as many.
func.func @pingpong_tile_dependent_k(%x: memref<?x?xbf16>, %w: memref<4x256x?xbf16>,
                                     %indptr: memref<5xi32>, %y: memref<?x256xbf16>,
                                     %groups: index, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %sched = ggemm.tile_schedule segment rows(%indptr : memref<5xi32>) groups(%groups)
      rows_per_group(%c0) num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64, pingpong = true>)
  // expected-error @+1 {{'ggemm.launch' op expects the same K blocks in every tile for a pingpong config (K loop bounds defined outside the tile loop), got a bound that depends on the tile}}
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    scf.for %t = %cta to %total step %num_ctas {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%t]
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<64x256xf32>
      %acc = scf.for %kb = %c0 to %g step %c1 iter_args(%a = %zero)
          -> (!ggemm.accumulator<64x256xf32>) {
        %kk = arith.muli %kb, %c64 : index
        %ta = ggemm.load_tile %x[%row, %kk] : memref<?x?xbf16> -> !ggemm.tile<64x64xbf16>
        %tb = ggemm.load_tile %w[%g, %col, %kk] : memref<4x256x?xbf16> -> !ggemm.tile<256x64xbf16>
        %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<64x64xbf16>, !ggemm.tile<256x64xbf16>
            -> !ggemm.accumulator<64x256xf32>
        scf.yield %next : !ggemm.accumulator<64x256xf32>
      }
      ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col)
          : !ggemm.accumulator<64x256xf32>, memref<?x256xbf16>
    }
  }
  return
}

// -----

// One CTA per tile has no alternate tiles to take.
func.func @pingpong_grid_tiles(%x: memref<?x128xbf16>, %w: memref<4x256x128xbf16>,
                               %indptr: memref<5xi32>, %y: memref<?x256xbf16>,
                               %groups: index, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %sched = ggemm.tile_schedule segment rows(%indptr : memref<5xi32>) groups(%groups)
      rows_per_group(%c0) num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64, pingpong = true>)
  // expected-error @+1 {{'ggemm.launch' op expects a persistent tile loop for a pingpong config (its warpgroups take alternate tiles of a CTA), got one CTA per tile}}
  ggemm.launch %sched grid(tiles) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    %has = arith.cmpi ult, %cta, %total : index
    scf.if %has {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%cta]
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c64 = arith.constant 64 : index
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<64x256xf32>
      %acc = scf.for %kb = %c0 to %c2 step %c1 iter_args(%a = %zero)
          -> (!ggemm.accumulator<64x256xf32>) {
        %kk = arith.muli %kb, %c64 : index
        %ta = ggemm.load_tile %x[%row, %kk] : memref<?x128xbf16> -> !ggemm.tile<64x64xbf16>
        %tb = ggemm.load_tile %w[%g, %col, %kk] : memref<4x256x128xbf16> -> !ggemm.tile<256x64xbf16>
        %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<64x64xbf16>, !ggemm.tile<256x64xbf16>
            -> !ggemm.accumulator<64x256xf32>
        scf.yield %next : !ggemm.accumulator<64x256xf32>
      }
      ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col)
          : !ggemm.accumulator<64x256xf32>, memref<?x256xbf16>
    }
  }
  return
}

// -----

// A ping-pong warpgroup computes a whole tile of one or two m64 blocks: a
// 192-row mma (the tile program disagreeing with the config) has no place.
func.func @pingpong_mma_rows(%x: memref<?x128xbf16>, %w: memref<4x256x128xbf16>,
                             %indptr: memref<5xi32>, %y: memref<?x256xbf16>,
                             %groups: index, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %sched = ggemm.tile_schedule segment rows(%indptr : memref<5xi32>) groups(%groups)
      rows_per_group(%c0) num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64, pingpong = true>)
  // expected-error @+1 {{'ggemm.launch' op expects block_m (192) to be 64 or 128 for a pingpong config: each consumer warpgroup computes a whole tile}}
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    scf.for %t = %cta to %total step %num_ctas {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%t]
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c64 = arith.constant 64 : index
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<192x256xf32>
      %acc = scf.for %kb = %c0 to %c2 step %c1 iter_args(%a = %zero)
          -> (!ggemm.accumulator<192x256xf32>) {
        %kk = arith.muli %kb, %c64 : index
        %ta = ggemm.load_tile %x[%row, %kk] : memref<?x128xbf16> -> !ggemm.tile<192x64xbf16>
        %tb = ggemm.load_tile %w[%g, %col, %kk] : memref<4x256x128xbf16> -> !ggemm.tile<256x64xbf16>
        %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<192x64xbf16>, !ggemm.tile<256x64xbf16>
            -> !ggemm.accumulator<192x256xf32>
        scf.yield %next : !ggemm.accumulator<192x256xf32>
      }
      ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col)
          : !ggemm.accumulator<192x256xf32>, memref<?x256xbf16>
    }
  }
  return
}
