// ggemm-tma-store: the consumers' ggemm.store_tile gets a staging (shared
// memory boxes stored by TMA) where y's rows are 16-byte units and the
// boxes fit next to the ring; the consumer role then ends with a
// ggemm.store_drain. The input is ggemm-warp-specialize's output.
// RUN: gemm-opt %s -split-input-file -ggemm-tma-store | FileCheck %s
// RUN: gemm-opt %s -split-input-file -ggemm-tma-store=buffers=1 | FileCheck %s --check-prefix=ONE
// RUN: not gemm-opt %s -ggemm-tma-store=buffers=5 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUFFERS
// RUN: not gemm-opt %S/ggemm-warp-specialize.mlir -split-input-file -ggemm-tma-store -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROLES

// BUFFERS: error: ggemm-tma-store: expects buffers to be 1 to 4, got 5
// ROLES: error: 'ggemm.launch' op has no warp roles: run ggemm-warp-specialize before ggemm-tma-store

// A bf16 output of 256 columns: boxes of 64 columns, two per consumer
// warpgroup, and the drain at the end of the consumer role only.
// CHECK-LABEL: func.func @segment(
// CHECK: ggemm.warp_specialize producer
// CHECK-NOT: ggemm.store_drain
// CHECK: } consumers(2) registers(232) {
// CHECK: ggemm.store_tile %{{.+}} to %{{.+}} row(%{{.+}}) row_end(%{{.+}}) col(%{{.+}}) {staging = #ggemm.store_staging<rows = 64, cols = 64, buffers = 2>} : !ggemm.accumulator<128x256xf32>, memref<?x256xbf16>
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: ggemm.store_drain
// CHECK-NEXT: }
// ONE-LABEL: func.func @segment(
// ONE: {staging = #ggemm.store_staging<rows = 64, cols = 64, buffers = 1>}
func.func @segment(%arg0: memref<?x256xbf16>, %arg1: memref<4x256x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<?x256xbf16>, %arg4: index, %arg5: index, %arg6: index) {
  %c0 = arith.constant 0 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<5xi32>) groups(%arg4) rows_per_group(%c0) num_rows(%arg5) num_cols(%arg6) config(#ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(256) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
    %2 = ggemm.tile_count %0
    ggemm.warp_specialize producer registers(40) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg7 = %cta to %2 step %num_ctas iter_args(%arg8 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg7]
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %c64 = arith.constant 64 : index
        %4 = scf.for %arg9 = %c0 to %c4 step %c1 iter_args(%arg10 = %arg8) -> (index) {
          %5 = arith.muli %arg9, %c64 : index
          %6 = ggemm.load_tile %arg0[%row, %5] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
          %7 = ggemm.load_tile %arg1[%group, %col, %5] : memref<4x256x256xbf16> -> !ggemm.tile<256x64xbf16>
          ggemm.ring_put %1[%arg10], %6, %7 : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          %c1_1 = arith.constant 1 : index
          %8 = arith.addi %arg10, %c1_1 : index
          scf.yield %8 : index
        }
        scf.yield %4 : index
      }
    } consumers(2) registers(232) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg7 = %cta to %2 step %num_ctas iter_args(%arg8 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg7]
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %4 = ggemm.zero_accumulator : !ggemm.accumulator<128x256xf32>
        %5:2 = scf.for %arg9 = %c0 to %c4 step %c1 iter_args(%arg10 = %4, %arg11 = %arg8) -> (!ggemm.accumulator<128x256xf32>, index) {
          %8:2 = ggemm.ring_get %1[%arg11] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          %9 = ggemm.mma %8#0, %8#1, %arg10 {pending = 1 : i64} : !ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16> -> !ggemm.accumulator<128x256xf32>
          %10 = arith.cmpi ugt, %arg9, %c0 : index
          scf.if %10 {
            %c1_2 = arith.constant 1 : index
            %12 = arith.subi %arg11, %c1_2 : index
            ggemm.ring_release %1[%12] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          }
          %c1_1 = arith.constant 1 : index
          %11 = arith.addi %arg11, %c1_1 : index
          scf.yield %9, %11 : !ggemm.accumulator<128x256xf32>, index
        }
        %6 = ggemm.mma_wait %5#0 : !ggemm.accumulator<128x256xf32>
        %7 = arith.cmpi ugt, %5#1, %arg8 : index
        scf.if %7 {
          %c1_1 = arith.constant 1 : index
          %8 = arith.subi %5#1, %c1_1 : index
          ggemm.ring_release %1[%8] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
        }
        ggemm.store_tile %6 to %arg3 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<128x256xf32>, memref<?x256xbf16>
        scf.yield %5#1 : index
      }
    }
  }
  return
}

// -----

// f32 output: 32 columns make a 128-byte swizzle row.
// CHECK-LABEL: func.func @f32_out(
// CHECK: {staging = #ggemm.store_staging<rows = 64, cols = 32, buffers = 2>} : !ggemm.accumulator<128x256xf32>, memref<?x256xf32>
// CHECK: ggemm.store_drain
func.func @f32_out(%arg0: memref<?x256xbf16>, %arg1: memref<4x256x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<?x256xf32>, %arg4: index, %arg5: index, %arg6: index) {
  %c0 = arith.constant 0 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<5xi32>) groups(%arg4) rows_per_group(%c0) num_rows(%arg5) num_cols(%arg6) config(#ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(256) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
    %2 = ggemm.tile_count %0
    ggemm.warp_specialize producer registers(40) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg7 = %cta to %2 step %num_ctas iter_args(%arg8 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg7]
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %c64 = arith.constant 64 : index
        %4 = scf.for %arg9 = %c0 to %c4 step %c1 iter_args(%arg10 = %arg8) -> (index) {
          %5 = arith.muli %arg9, %c64 : index
          %6 = ggemm.load_tile %arg0[%row, %5] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
          %7 = ggemm.load_tile %arg1[%group, %col, %5] : memref<4x256x256xbf16> -> !ggemm.tile<256x64xbf16>
          ggemm.ring_put %1[%arg10], %6, %7 : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          %c1_1 = arith.constant 1 : index
          %8 = arith.addi %arg10, %c1_1 : index
          scf.yield %8 : index
        }
        scf.yield %4 : index
      }
    } consumers(2) registers(232) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg7 = %cta to %2 step %num_ctas iter_args(%arg8 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg7]
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %4 = ggemm.zero_accumulator : !ggemm.accumulator<128x256xf32>
        %5:2 = scf.for %arg9 = %c0 to %c4 step %c1 iter_args(%arg10 = %4, %arg11 = %arg8) -> (!ggemm.accumulator<128x256xf32>, index) {
          %8:2 = ggemm.ring_get %1[%arg11] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          %9 = ggemm.mma %8#0, %8#1, %arg10 {pending = 1 : i64} : !ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16> -> !ggemm.accumulator<128x256xf32>
          %10 = arith.cmpi ugt, %arg9, %c0 : index
          scf.if %10 {
            %c1_2 = arith.constant 1 : index
            %12 = arith.subi %arg11, %c1_2 : index
            ggemm.ring_release %1[%12] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          }
          %c1_1 = arith.constant 1 : index
          %11 = arith.addi %arg11, %c1_1 : index
          scf.yield %9, %11 : !ggemm.accumulator<128x256xf32>, index
        }
        %6 = ggemm.mma_wait %5#0 : !ggemm.accumulator<128x256xf32>
        %7 = arith.cmpi ugt, %5#1, %arg8 : index
        scf.if %7 {
          %c1_1 = arith.constant 1 : index
          %8 = arith.subi %5#1, %c1_1 : index
          ggemm.ring_release %1[%8] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
        }
        ggemm.store_tile %6 to %arg3 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<128x256xf32>, memref<?x256xf32>
        scf.yield %5#1 : index
      }
    }
  }
  return
}

// -----

// A 5-stage ring of 128x192 tiles (205824 bytes with its mbarriers,
// aligned) leaves room for one 8 KB box per warpgroup, not two.
// CHECK-LABEL: func.func @one_box(
// CHECK: {staging = #ggemm.store_staging<rows = 64, cols = 64, buffers = 1>}
// CHECK: ggemm.store_drain
func.func @one_box(%arg0: memref<?x256xbf16>, %arg1: memref<4x192x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<?x192xbf16>, %arg4: index, %arg5: index, %arg6: index) {
  %c0 = arith.constant 0 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<5xi32>) groups(%arg4) rows_per_group(%c0) num_rows(%arg5) num_cols(%arg6) config(#ggemm.tile_config<block_m = 128, block_n = 192, block_k = 64, stages = 5>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(256) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<192x64xbf16>>
    %2 = ggemm.tile_count %0
    ggemm.warp_specialize producer registers(40) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg7 = %cta to %2 step %num_ctas iter_args(%arg8 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg7]
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %c64 = arith.constant 64 : index
        %4 = scf.for %arg9 = %c0 to %c4 step %c1 iter_args(%arg10 = %arg8) -> (index) {
          %5 = arith.muli %arg9, %c64 : index
          %6 = ggemm.load_tile %arg0[%row, %5] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
          %7 = ggemm.load_tile %arg1[%group, %col, %5] : memref<4x192x256xbf16> -> !ggemm.tile<192x64xbf16>
          ggemm.ring_put %1[%arg10], %6, %7 : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<192x64xbf16>>
          %c1_1 = arith.constant 1 : index
          %8 = arith.addi %arg10, %c1_1 : index
          scf.yield %8 : index
        }
        scf.yield %4 : index
      }
    } consumers(2) registers(232) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg7 = %cta to %2 step %num_ctas iter_args(%arg8 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg7]
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %4 = ggemm.zero_accumulator : !ggemm.accumulator<128x192xf32>
        %5:2 = scf.for %arg9 = %c0 to %c4 step %c1 iter_args(%arg10 = %4, %arg11 = %arg8) -> (!ggemm.accumulator<128x192xf32>, index) {
          %8:2 = ggemm.ring_get %1[%arg11] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<192x64xbf16>>
          %9 = ggemm.mma %8#0, %8#1, %arg10 {pending = 1 : i64} : !ggemm.tile<128x64xbf16>, !ggemm.tile<192x64xbf16> -> !ggemm.accumulator<128x192xf32>
          %10 = arith.cmpi ugt, %arg9, %c0 : index
          scf.if %10 {
            %c1_2 = arith.constant 1 : index
            %12 = arith.subi %arg11, %c1_2 : index
            ggemm.ring_release %1[%12] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<192x64xbf16>>
          }
          %c1_1 = arith.constant 1 : index
          %11 = arith.addi %arg11, %c1_1 : index
          scf.yield %9, %11 : !ggemm.accumulator<128x192xf32>, index
        }
        %6 = ggemm.mma_wait %5#0 : !ggemm.accumulator<128x192xf32>
        %7 = arith.cmpi ugt, %5#1, %arg8 : index
        scf.if %7 {
          %c1_1 = arith.constant 1 : index
          %8 = arith.subi %5#1, %c1_1 : index
          ggemm.ring_release %1[%8] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<192x64xbf16>>
        }
        ggemm.store_tile %6 to %arg3 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<128x192xf32>, memref<?x192xbf16>
        scf.yield %5#1 : index
      }
    }
  }
  return
}

// -----

// 100 bf16 columns are 200 bytes a row: TMA cannot address y, the store
// stays as it is and no drain is added.
// CHECK-LABEL: func.func @unaligned_rows(
// CHECK-NOT: staging
// CHECK-NOT: ggemm.store_drain
// CHECK: return
func.func @unaligned_rows(%arg0: memref<?x256xbf16>, %arg1: memref<4x100x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<?x100xbf16>, %arg4: index, %arg5: index, %arg6: index) {
  %c0 = arith.constant 0 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<5xi32>) groups(%arg4) rows_per_group(%c0) num_rows(%arg5) num_cols(%arg6) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(256) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    %2 = ggemm.tile_count %0
    ggemm.warp_specialize producer registers(40) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg7 = %cta to %2 step %num_ctas iter_args(%arg8 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg7]
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %c64 = arith.constant 64 : index
        %4 = scf.for %arg9 = %c0 to %c4 step %c1 iter_args(%arg10 = %arg8) -> (index) {
          %5 = arith.muli %arg9, %c64 : index
          %6 = ggemm.load_tile %arg0[%row, %5] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
          %7 = ggemm.load_tile %arg1[%group, %col, %5] : memref<4x100x256xbf16> -> !ggemm.tile<128x64xbf16>
          ggemm.ring_put %1[%arg10], %6, %7 : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %c1_1 = arith.constant 1 : index
          %8 = arith.addi %arg10, %c1_1 : index
          scf.yield %8 : index
        }
        scf.yield %4 : index
      }
    } consumers(2) registers(232) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg7 = %cta to %2 step %num_ctas iter_args(%arg8 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg7]
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %4 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
        %5:2 = scf.for %arg9 = %c0 to %c4 step %c1 iter_args(%arg10 = %4, %arg11 = %arg8) -> (!ggemm.accumulator<128x128xf32>, index) {
          %8:2 = ggemm.ring_get %1[%arg11] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %9 = ggemm.mma %8#0, %8#1, %arg10 {pending = 1 : i64} : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<128x128xf32>
          %10 = arith.cmpi ugt, %arg9, %c0 : index
          scf.if %10 {
            %c1_2 = arith.constant 1 : index
            %12 = arith.subi %arg11, %c1_2 : index
            ggemm.ring_release %1[%12] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          }
          %c1_1 = arith.constant 1 : index
          %11 = arith.addi %arg11, %c1_1 : index
          scf.yield %9, %11 : !ggemm.accumulator<128x128xf32>, index
        }
        %6 = ggemm.mma_wait %5#0 : !ggemm.accumulator<128x128xf32>
        %7 = arith.cmpi ugt, %5#1, %arg8 : index
        scf.if %7 {
          %c1_1 = arith.constant 1 : index
          %8 = arith.subi %5#1, %c1_1 : index
          ggemm.ring_release %1[%8] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
        }
        ggemm.store_tile %6 to %arg3 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<128x128xf32>, memref<?x100xbf16>
        scf.yield %5#1 : index
      }
    }
  }
  return
}

// -----

// Seven stages of 128x128 tiles leave no room for a box.
// CHECK-LABEL: func.func @no_room(
// CHECK-NOT: staging
// CHECK-NOT: ggemm.store_drain
// CHECK: return
func.func @no_room(%arg0: memref<?x256xbf16>, %arg1: memref<4x256x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<?x256xbf16>, %arg4: index, %arg5: index, %arg6: index) {
  %c0 = arith.constant 0 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<5xi32>) groups(%arg4) rows_per_group(%c0) num_rows(%arg5) num_cols(%arg6) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, stages = 7>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(256) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    %2 = ggemm.tile_count %0
    ggemm.warp_specialize producer registers(40) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg7 = %cta to %2 step %num_ctas iter_args(%arg8 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg7]
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %c64 = arith.constant 64 : index
        %4 = scf.for %arg9 = %c0 to %c4 step %c1 iter_args(%arg10 = %arg8) -> (index) {
          %5 = arith.muli %arg9, %c64 : index
          %6 = ggemm.load_tile %arg0[%row, %5] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
          %7 = ggemm.load_tile %arg1[%group, %col, %5] : memref<4x256x256xbf16> -> !ggemm.tile<128x64xbf16>
          ggemm.ring_put %1[%arg10], %6, %7 : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %c1_1 = arith.constant 1 : index
          %8 = arith.addi %arg10, %c1_1 : index
          scf.yield %8 : index
        }
        scf.yield %4 : index
      }
    } consumers(2) registers(232) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg7 = %cta to %2 step %num_ctas iter_args(%arg8 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg7]
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %4 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
        %5:2 = scf.for %arg9 = %c0 to %c4 step %c1 iter_args(%arg10 = %4, %arg11 = %arg8) -> (!ggemm.accumulator<128x128xf32>, index) {
          %8:2 = ggemm.ring_get %1[%arg11] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %9 = ggemm.mma %8#0, %8#1, %arg10 {pending = 1 : i64} : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<128x128xf32>
          %10 = arith.cmpi ugt, %arg9, %c0 : index
          scf.if %10 {
            %c1_2 = arith.constant 1 : index
            %12 = arith.subi %arg11, %c1_2 : index
            ggemm.ring_release %1[%12] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          }
          %c1_1 = arith.constant 1 : index
          %11 = arith.addi %arg11, %c1_1 : index
          scf.yield %9, %11 : !ggemm.accumulator<128x128xf32>, index
        }
        %6 = ggemm.mma_wait %5#0 : !ggemm.accumulator<128x128xf32>
        %7 = arith.cmpi ugt, %5#1, %arg8 : index
        scf.if %7 {
          %c1_1 = arith.constant 1 : index
          %8 = arith.subi %5#1, %c1_1 : index
          ggemm.ring_release %1[%8] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
        }
        ggemm.store_tile %6 to %arg3 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<128x128xf32>, memref<?x256xbf16>
        scf.yield %5#1 : index
      }
    }
  }
  return
}

// -----

// Scattered rows (MoE's down projection into per-pair slots): the same
// boxes, stored one row at a time (`row_stores`), so every warpgroup stages.
// CHECK-LABEL: func.func @scatter_slots(
// CHECK: } consumers(2) registers(232) {
// CHECK: ggemm.store_tile %{{.+}} scatter(%{{.+}} : memref<?xi32>) {staging = #ggemm.store_staging<rows = 64, cols = 64, buffers = 2, row_stores = true>} : !ggemm.accumulator<128x256xf32>, memref<?x256xbf16>
// CHECK: ggemm.store_drain
func.func @scatter_slots(%arg0: memref<?x256xbf16>, %arg1: memref<4x256x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<?x256xbf16>, %si: memref<?xi32>, %arg4: index, %arg5: index, %arg6: index) {
  %c0 = arith.constant 0 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<5xi32>) groups(%arg4) rows_per_group(%c0) num_rows(%arg5) num_cols(%arg6) config(#ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(256) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
    %2 = ggemm.tile_count %0
    ggemm.warp_specialize producer registers(40) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg7 = %cta to %2 step %num_ctas iter_args(%arg8 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg7]
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %c64 = arith.constant 64 : index
        %4 = scf.for %arg9 = %c0 to %c4 step %c1 iter_args(%arg10 = %arg8) -> (index) {
          %5 = arith.muli %arg9, %c64 : index
          %6 = ggemm.load_tile %arg0[%row, %5] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
          %7 = ggemm.load_tile %arg1[%group, %col, %5] : memref<4x256x256xbf16> -> !ggemm.tile<256x64xbf16>
          ggemm.ring_put %1[%arg10], %6, %7 : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          %c1_1 = arith.constant 1 : index
          %8 = arith.addi %arg10, %c1_1 : index
          scf.yield %8 : index
        }
        scf.yield %4 : index
      }
    } consumers(2) registers(232) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg7 = %cta to %2 step %num_ctas iter_args(%arg8 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg7]
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %4 = ggemm.zero_accumulator : !ggemm.accumulator<128x256xf32>
        %5:2 = scf.for %arg9 = %c0 to %c4 step %c1 iter_args(%arg10 = %4, %arg11 = %arg8) -> (!ggemm.accumulator<128x256xf32>, index) {
          %8:2 = ggemm.ring_get %1[%arg11] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          %9 = ggemm.mma %8#0, %8#1, %arg10 {pending = 1 : i64} : !ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16> -> !ggemm.accumulator<128x256xf32>
          %10 = arith.cmpi ugt, %arg9, %c0 : index
          scf.if %10 {
            %c1_2 = arith.constant 1 : index
            %12 = arith.subi %arg11, %c1_2 : index
            ggemm.ring_release %1[%12] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          }
          %c1_1 = arith.constant 1 : index
          %11 = arith.addi %arg11, %c1_1 : index
          scf.yield %9, %11 : !ggemm.accumulator<128x256xf32>, index
        }
        %6 = ggemm.mma_wait %5#0 : !ggemm.accumulator<128x256xf32>
        %7 = arith.cmpi ugt, %5#1, %arg8 : index
        scf.if %7 {
          %c1_1 = arith.constant 1 : index
          %8 = arith.subi %5#1, %c1_1 : index
          ggemm.ring_release %1[%8] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
        }
        ggemm.store_tile %6 to %arg3 row(%row) row_end(%row_end) col(%col) scatter(%si : memref<?xi32>) : !ggemm.accumulator<128x256xf32>, memref<?x256xbf16>
        scf.yield %5#1 : index
      }
    }
  }
  return
}

// -----

// Scattered atomic adds read y element by element: not staged, no drain.
// CHECK-LABEL: func.func @scatter_atomic(
// CHECK: ggemm.store_tile %{{.+}} scatter(%{{.+}} : memref<?xi32>) {epilogue = #ggemm.epilogue<accumulate = true, atomic = true>} : !ggemm.accumulator<128x256xf32>, memref<?x256xf32>
// CHECK-NOT: ggemm.store_drain
// CHECK: return
func.func @scatter_atomic(%arg0: memref<?x256xbf16>, %arg1: memref<4x256x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<?x256xf32>, %si: memref<?xi32>, %arg4: index, %arg5: index, %arg6: index) {
  %c0 = arith.constant 0 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<5xi32>) groups(%arg4) rows_per_group(%c0) num_rows(%arg5) num_cols(%arg6) config(#ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(256) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
    %2 = ggemm.tile_count %0
    ggemm.warp_specialize producer registers(40) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg7 = %cta to %2 step %num_ctas iter_args(%arg8 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg7]
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %c64 = arith.constant 64 : index
        %4 = scf.for %arg9 = %c0 to %c4 step %c1 iter_args(%arg10 = %arg8) -> (index) {
          %5 = arith.muli %arg9, %c64 : index
          %6 = ggemm.load_tile %arg0[%row, %5] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
          %7 = ggemm.load_tile %arg1[%group, %col, %5] : memref<4x256x256xbf16> -> !ggemm.tile<256x64xbf16>
          ggemm.ring_put %1[%arg10], %6, %7 : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          %c1_1 = arith.constant 1 : index
          %8 = arith.addi %arg10, %c1_1 : index
          scf.yield %8 : index
        }
        scf.yield %4 : index
      }
    } consumers(2) registers(232) {
      %c0_0 = arith.constant 0 : index
      %3 = scf.for %arg7 = %cta to %2 step %num_ctas iter_args(%arg8 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg7]
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %4 = ggemm.zero_accumulator : !ggemm.accumulator<128x256xf32>
        %5:2 = scf.for %arg9 = %c0 to %c4 step %c1 iter_args(%arg10 = %4, %arg11 = %arg8) -> (!ggemm.accumulator<128x256xf32>, index) {
          %8:2 = ggemm.ring_get %1[%arg11] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          %9 = ggemm.mma %8#0, %8#1, %arg10 {pending = 1 : i64} : !ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16> -> !ggemm.accumulator<128x256xf32>
          %10 = arith.cmpi ugt, %arg9, %c0 : index
          scf.if %10 {
            %c1_2 = arith.constant 1 : index
            %12 = arith.subi %arg11, %c1_2 : index
            ggemm.ring_release %1[%12] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          }
          %c1_1 = arith.constant 1 : index
          %11 = arith.addi %arg11, %c1_1 : index
          scf.yield %9, %11 : !ggemm.accumulator<128x256xf32>, index
        }
        %6 = ggemm.mma_wait %5#0 : !ggemm.accumulator<128x256xf32>
        %7 = arith.cmpi ugt, %5#1, %arg8 : index
        scf.if %7 {
          %c1_1 = arith.constant 1 : index
          %8 = arith.subi %5#1, %c1_1 : index
          ggemm.ring_release %1[%8] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
        }
        ggemm.store_tile %6 to %arg3 row(%row) row_end(%row_end) col(%col) scatter(%si : memref<?xi32>) {epilogue = #ggemm.epilogue<accumulate = true, atomic = true>} : !ggemm.accumulator<128x256xf32>, memref<?x256xf32>
        scf.yield %5#1 : index
      }
    }
  }
  return
}
