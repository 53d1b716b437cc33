// ggemm-warp-specialize with three consumer warpgroups (192-row tiles,
// select-config's choice for block-scaled FP8 on large groups): the roles'
// register budgets follow the warpgroup count when no option sets them.
// RUN: gemm-opt %s -ggemm-warp-specialize | FileCheck %s
// RUN: not gemm-opt %s -ggemm-warp-specialize="producer-registers=40 consumer-registers=232" -o /dev/null 2>&1 | FileCheck %s --check-prefix=THREE

// Three consumer warpgroups (192 rows): without register options the
// producer keeps 32 and each consumer gets 160, so that 128 x (32 + 3 x 160)
// fills the 65536 a CTA of four warpgroups is launched with (the defaults
// 40 + 2 x 232 are for two).
// CHECK-LABEL: func.func @three(
// CHECK: ggemm.create_ring release_count(384)
// CHECK: ggemm.warp_specialize producer registers(32) {
// CHECK: } consumers(3) registers(160) {
// CHECK: ggemm.mma %{{.+}} : !ggemm.tile<192x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<192x128xf32>
// Budgets given as options are kept, and checked.
// THREE: error: 'ggemm.launch' op expects the roles' registers to fit the 65536 a CTA of 4 warpgroups is launched with: 128 x (40 + 3 x 232) = 94208
func.func @three(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>, %indptr: memref<5xi32>,
                   %idx: memref<4xi32>, %b: memref<4x128xf32>, %y: memref<?x128xbf16>,
                   %groups: index, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %sched = ggemm.tile_schedule segment rows(%indptr : memref<5xi32>) groups(%groups)
      rows_per_group(%c0) num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 192, block_n = 128, block_k = 64, consumer_warpgroups = 3>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    scf.for %t = %cta to %total step %num_ctas {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%t]
      %widx = ggemm.weight_index %idx[%g] : memref<4xi32>
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c64 = arith.constant 64 : index
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<192x128xf32>
      %acc = scf.for %kb = %c0 to %c4 step %c1 iter_args(%a = %zero)
          -> (!ggemm.accumulator<192x128xf32>) {
        %k = arith.muli %kb, %c64 : index
        %ta = ggemm.load_tile %x[%row, %k] : memref<?x256xbf16> -> !ggemm.tile<192x64xbf16>
        %tb = ggemm.load_tile %w[%widx, %col, %k] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
        %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<192x64xbf16>, !ggemm.tile<128x64xbf16>
            -> !ggemm.accumulator<192x128xf32>
        scf.yield %next : !ggemm.accumulator<192x128xf32>
      }
      ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col)
          bias(%b[%widx] : memref<4x128xf32>)
          : !ggemm.accumulator<192x128xf32>, memref<?x128xbf16>
    }
  }
  return
}

