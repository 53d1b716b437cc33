// ggemm-stage-ring: each stage ring gets its shared-memory layout: the
// config's stages (fewer when they would not fit 227 KB), a 1024-byte
// aligned buffer of stage slots per tile type, then the full and empty
// mbarriers. A layout already written is kept.
// RUN: gemm-opt %s -split-input-file -ggemm-stage-ring -verify-diagnostics | FileCheck %s

// 4 stages (the default) of 16 KB A and 16 KB B slots.
// CHECK-LABEL: func.func @segment(
// CHECK: ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 16384], barrier_offset = 131072, smem_bytes = 131136>) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
// CHECK-NEXT: ggemm.warp_specialize
func.func @segment(%arg0: memref<?x256xbf16>, %arg1: memref<4x128x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<4xi32>, %arg4: memref<4x128xf32>, %arg5: memref<?x128xbf16>, %arg6: index, %arg7: index, %arg8: index) {
  %c0 = arith.constant 0 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<5xi32>) groups(%arg6) rows_per_group(%c0) num_rows(%arg7) num_cols(%arg8) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, raster = along_m>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.tile_count %0
    %2 = ggemm.create_ring release_count(256) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg9 = %cta to %1 step %num_ctas iter_args(%arg10 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg9]
        %4 = ggemm.weight_index %arg3[%group] : memref<4xi32>
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %c64 = arith.constant 64 : index
        %5 = scf.for %arg11 = %c0 to %c4 step %c1 iter_args(%arg12 = %arg10) -> (index) {
          %6 = arith.muli %arg11, %c64 : index
          %7 = ggemm.load_tile %arg0[%row, %6] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
          %8 = ggemm.load_tile %arg1[%4, %col, %6] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
          ggemm.ring_put %2[%arg12], %7, %8 : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %c1_1 = arith.constant 1 : index
          %9 = arith.addi %arg12, %c1_1 : index
          scf.yield %9 : index
        }
        scf.yield %5 : index
      }
    } consumers(2) registers(232) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg9 = %cta to %1 step %num_ctas iter_args(%arg10 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg9]
        %4 = ggemm.weight_index %arg3[%group] : memref<4xi32>
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %5 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
        %6:2 = scf.for %arg11 = %c0 to %c4 step %c1 iter_args(%arg12 = %5, %arg13 = %arg10) -> (!ggemm.accumulator<128x128xf32>, index) {
          %9:2 = ggemm.ring_get %2[%arg13] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %10 = ggemm.mma %9#0, %9#1, %arg12 {pending = 1 : i64} : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<128x128xf32>
          %11 = arith.cmpi ugt, %arg11, %c0 : index
          scf.if %11 {
            %c1_2 = arith.constant 1 : index
            %13 = arith.subi %arg13, %c1_2 : index
            ggemm.ring_release %2[%13] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          }
          %c1_1 = arith.constant 1 : index
          %12 = arith.addi %arg13, %c1_1 : index
          scf.yield %10, %12 : !ggemm.accumulator<128x128xf32>, index
        }
        %7 = ggemm.mma_wait %6#0 : !ggemm.accumulator<128x128xf32>
        %8 = arith.cmpi ugt, %6#1, %arg10 : index
        scf.if %8 {
          %c1_1 = arith.constant 1 : index
          %9 = arith.subi %6#1, %c1_1 : index
          ggemm.ring_release %2[%9] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
        }
        ggemm.store_tile %7 to %arg5 row(%row) row_end(%row_end) col(%col) bias(%arg4[%4] : memref<4x128xf32>) : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
        scf.yield %6#1 : index
      }
    }
  }
  return
}

// -----

// 8 stages of 48 KB ask for more than 227 KB: 4 fit.
// CHECK-LABEL: func.func @clamped(
// CHECK: ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 32768], barrier_offset = 196608, smem_bytes = 196672>) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
func.func @clamped(%arg0: memref<?x256xbf16>, %arg1: memref<4x256x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<4xi32>, %arg4: memref<4x256xf32>, %arg5: memref<?x256xbf16>, %arg6: index, %arg7: index, %arg8: index) {
  %c0 = arith.constant 0 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<5xi32>) groups(%arg6) rows_per_group(%c0) num_rows(%arg7) num_cols(%arg8) config(#ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, stages = 8, raster = along_m>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.tile_count %0
    %2 = ggemm.create_ring release_count(256) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg9 = %cta to %1 step %num_ctas iter_args(%arg10 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg9]
        %4 = ggemm.weight_index %arg3[%group] : memref<4xi32>
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %c64 = arith.constant 64 : index
        %5 = scf.for %arg11 = %c0 to %c4 step %c1 iter_args(%arg12 = %arg10) -> (index) {
          %6 = arith.muli %arg11, %c64 : index
          %7 = ggemm.load_tile %arg0[%row, %6] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
          %8 = ggemm.load_tile %arg1[%4, %col, %6] : memref<4x256x256xbf16> -> !ggemm.tile<256x64xbf16>
          ggemm.ring_put %2[%arg12], %7, %8 : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          %c1_1 = arith.constant 1 : index
          %9 = arith.addi %arg12, %c1_1 : index
          scf.yield %9 : index
        }
        scf.yield %5 : index
      }
    } consumers(2) registers(232) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg9 = %cta to %1 step %num_ctas iter_args(%arg10 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg9]
        %4 = ggemm.weight_index %arg3[%group] : memref<4xi32>
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %5 = ggemm.zero_accumulator : !ggemm.accumulator<128x256xf32>
        %6:2 = scf.for %arg11 = %c0 to %c4 step %c1 iter_args(%arg12 = %5, %arg13 = %arg10) -> (!ggemm.accumulator<128x256xf32>, index) {
          %9:2 = ggemm.ring_get %2[%arg13] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          %10 = ggemm.mma %9#0, %9#1, %arg12 {pending = 1 : i64} : !ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16> -> !ggemm.accumulator<128x256xf32>
          %11 = arith.cmpi ugt, %arg11, %c0 : index
          scf.if %11 {
            %c1_2 = arith.constant 1 : index
            %13 = arith.subi %arg13, %c1_2 : index
            ggemm.ring_release %2[%13] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          }
          %c1_1 = arith.constant 1 : index
          %12 = arith.addi %arg13, %c1_1 : index
          scf.yield %10, %12 : !ggemm.accumulator<128x256xf32>, index
        }
        %7 = ggemm.mma_wait %6#0 : !ggemm.accumulator<128x256xf32>
        %8 = arith.cmpi ugt, %6#1, %arg10 : index
        scf.if %8 {
          %c1_1 = arith.constant 1 : index
          %9 = arith.subi %6#1, %c1_1 : index
          ggemm.ring_release %2[%9] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
        }
        ggemm.store_tile %7 to %arg5 row(%row) row_end(%row_end) col(%col) bias(%arg4[%4] : memref<4x256xf32>) : !ggemm.accumulator<128x256xf32>, memref<?x256xbf16>
        scf.yield %6#1 : index
      }
    }
  }
  return
}

// -----

// A layout written by hand (or an earlier run) stays.
// CHECK-LABEL: func.func @kept(
// CHECK: ggemm.create_ring release_count(128) layout(#ggemm.ring_layout<stages = 2, offsets = [8192, 0], stage_bytes = [4096, 4096], barrier_offset = 16384, smem_bytes = 16416>) : !ggemm.ring<!ggemm.tile<32x64xbf16>, !ggemm.tile<32x64xbf16>>
func.func @kept(%n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, consumer_warpgroups = 1>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(128)
        layout(#ggemm.ring_layout<stages = 2, offsets = [8192, 0], stage_bytes = [4096, 4096],
                                  barrier_offset = 16384, smem_bytes = 16416>)
        : !ggemm.ring<!ggemm.tile<32x64xbf16>, !ggemm.tile<32x64xbf16>>
  }
  return
}

// -----

// A launch without warp roles has no ring to place.
func.func @no_ring(%n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  // expected-error @+1 {{'ggemm.launch' op has no stage ring: run ggemm-warp-specialize before ggemm-stage-ring}}
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
  }
  return
}
