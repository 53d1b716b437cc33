// ggemm-stage-ring: each stage ring gets its shared-memory layout: the
// config's stages (fewer when they would not fit 227 KB), a 1024-byte
// aligned buffer of stage slots per tile type, then the full and empty
// mbarriers. A layout already written is kept.
// RUN: gemm-opt %s -split-input-file -ggemm-stage-ring -verify-diagnostics | FileCheck %s
// The layouts written must satisfy #ggemm.ring_layout's own verifier (an
// assertion build's fuzz campaign found FP8 rings that did not; a release
// build printed them anyway):
// RUN: gemm-opt %s -split-input-file -ggemm-stage-ring -verify-diagnostics | gemm-opt -split-input-file -o /dev/null

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

// -----

// FP8 block scales: after the two tile buffers (1024-byte aligned), the
// activation scales (128 + 4 slack f32: 528 bytes, in 640-byte slots) and
// the weight scales (one f32: 128-byte slots), both 128-byte aligned.
// CHECK-LABEL: func.func @fp8(
// CHECK: ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536, 131072, 133632], stage_bytes = [16384, 16384, 640, 128], barrier_offset = 134144, smem_bytes = 134208>)
func.func @fp8(%arg0: memref<?x256xf8E4M3FN>, %arg1: memref<2x256x256xf8E4M3FN>, %arg2: memref<3xi32>, %arg3: memref<?x2xf32, strided<[1, ?]>>, %arg4: memref<2x2x2xf32>, %arg5: memref<?x256xbf16>) {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x256xf8E4M3FN>
  %c256 = arith.constant 256 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<3xi32>) groups(%c2) rows_per_group(%c0) num_rows(%dim) num_cols(%c256) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(256) : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>, !ggemm.scales<1>>
    %2 = ggemm.tile_count %0
    ggemm.warp_specialize producer registers(40) {
      %c0_1 = arith.constant 0 : index
      %3 = scf.for %arg6 = %cta to %2 step %num_ctas iter_args(%arg7 = %c0_1) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg6]
        %c2_2 = arith.constant 2 : index
        %c0_3 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %c128 = arith.constant 128 : index
        %4 = scf.for %arg8 = %c0_3 to %c2_2 step %c1 iter_args(%arg9 = %arg7) -> (index) {
          %5 = arith.muli %arg8, %c128 : index
          %6 = ggemm.load_tile %arg0[%row, %5] : memref<?x256xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
          %7 = ggemm.load_tile %arg1[%group, %col, %5] : memref<2x256x256xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
          %8 = ggemm.load_scales %arg3[%row, %arg8] : memref<?x2xf32, strided<[1, ?]>> -> !ggemm.scales<128>
          %c128_4 = arith.constant 128 : index
          %9 = arith.divui %col, %c128_4 : index
          %10 = ggemm.load_scales %arg4[%group, %9, %arg8] : memref<2x2x2xf32> -> !ggemm.scales<1>
          ggemm.ring_put %1[%arg9], %6, %7, %8, %10 : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>, !ggemm.scales<1>>
          %c1_5 = arith.constant 1 : index
          %11 = arith.addi %arg9, %c1_5 : index
          scf.yield %11 : index
        }
        scf.yield %4 : index
      }
    } consumers(2) registers(232) {
      %c0_1 = arith.constant 0 : index
      %3 = scf.for %arg6 = %cta to %2 step %num_ctas iter_args(%arg7 = %c0_1) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg6]
        %c2_2 = arith.constant 2 : index
        %c0_3 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %c4_s = arith.constant 4 : index
        %scale_offset = arith.remui %row, %c4_s : index
        %4 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
        %5:2 = scf.for %arg8 = %c0_3 to %c2_2 step %c1 iter_args(%arg9 = %4, %arg10 = %arg7) -> (!ggemm.accumulator<128x128xf32>, index) {
          %6:4 = ggemm.ring_get %1[%arg10] scale_offsets(%scale_offset, %c0_3) : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>, !ggemm.scales<1>>
          %7 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
          %8 = ggemm.mma %6#0, %6#1, %7 : !ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN> -> !ggemm.accumulator<128x128xf32>
          %9 = ggemm.promote %8 into %arg9 a_scales(%6#2 : !ggemm.scales<128>) b_scales(%6#3 : !ggemm.scales<1>) : !ggemm.accumulator<128x128xf32>
          ggemm.ring_release %1[%arg10] : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>, !ggemm.scales<1>>
          %c1_4 = arith.constant 1 : index
          %10 = arith.addi %arg10, %c1_4 : index
          scf.yield %9, %10 : !ggemm.accumulator<128x128xf32>, index
        }
        ggemm.store_tile %5#0 to %arg5 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<128x128xf32>, memref<?x256xbf16>
        scf.yield %5#1 : index
      }
    }
  }
  return
}

// -----

// A staged store (ggemm-tma-store): two 8 KB boxes per consumer warpgroup
// go behind the mbarriers, 1024-byte aligned; the ring keeps its 4 stages.
// CHECK-LABEL: func.func @staged(
// CHECK: ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 32768], barrier_offset = 196608, smem_bytes = 230400, staging_offset = 197632, staging_bytes = 32768>)
func.func @staged(%arg0: memref<?x256xbf16>, %arg1: memref<4x256x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<?x256xbf16>, %arg4: index, %arg5: index, %arg6: index) {
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
        ggemm.store_tile %6 to %arg3 row(%row) row_end(%row_end) col(%col) {staging = #ggemm.store_staging<rows = 64, cols = 64, buffers = 2>} : !ggemm.accumulator<128x256xf32>, memref<?x256xbf16>
        scf.yield %5#1 : index
      }
      ggemm.store_drain
    }
  }
  return
}

// -----

// A split-K launch (split_k = 2): behind the ring and its mbarriers, the
// split-K buffer of ggemm.split_k_sum, one 64x64 f32 partial (16 KB) and
// its full and empty mbarriers, 16-byte aligned; the ring keeps the
// config's 4 stages, which fit beside it.
// CHECK-LABEL: func.func @split_k(
// CHECK: ggemm.create_ring release_count(128) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 32768], stage_bytes = [8192, 8192], barrier_offset = 65536, smem_bytes = 82000, split_k_offset = 65600, split_k_bytes = 16400>)
func.func @split_k(%arg0: memref<?x512xbf16>, %arg1: memref<1x128x512xbf16>, %arg2: memref<2xi32>, %arg3: memref<?x128xbf16>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x512xbf16>
  %c128 = arith.constant 128 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<2xi32>) groups(%c1) rows_per_group(%c0) num_rows(%dim) num_cols(%c128) config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, consumer_warpgroups = 1, split_k = 2>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(128) : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16>>
    %2 = ggemm.tile_count %0
    %c2 = arith.constant 2 : index
    %3 = arith.divui %cta, %c2 : index
    %4 = arith.remui %cta, %c2 : index
    %5 = arith.divui %num_ctas, %c2 : index
    ggemm.warp_specialize producer registers(56) {
      %c0_1 = arith.constant 0 : index
      %6 = scf.for %arg4 = %3 to %2 step %5 iter_args(%arg5 = %c0_1) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg4]
        %c8 = arith.constant 8 : index
        %c64 = arith.constant 64 : index
        %c1_2 = arith.constant 1 : index
        %c2_3 = arith.constant 2 : index
        %7 = arith.muli %4, %c8 : index
        %8 = arith.divui %7, %c2_3 : index
        %c1_4 = arith.constant 1 : index
        %9 = arith.addi %4, %c1_4 : index
        %10 = arith.muli %9, %c8 : index
        %11 = arith.divui %10, %c2_3 : index
        %12 = scf.for %arg6 = %8 to %11 step %c1_2 iter_args(%arg7 = %arg5) -> (index) {
          %13 = arith.muli %arg6, %c64 : index
          %14 = ggemm.load_tile %arg0[%row, %13] : memref<?x512xbf16> -> !ggemm.tile<64x64xbf16>
          %15 = ggemm.load_tile %arg1[%group, %col, %13] : memref<1x128x512xbf16> -> !ggemm.tile<64x64xbf16>
          ggemm.ring_put %1[%arg7], %14, %15 : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16>>
          %c1_5 = arith.constant 1 : index
          %16 = arith.addi %arg7, %c1_5 : index
          scf.yield %16 : index
        }
        scf.yield %12 : index
      }
    } consumers(1) registers(232) {
      %c0_1 = arith.constant 0 : index
      %6 = scf.for %arg4 = %3 to %2 step %5 iter_args(%arg5 = %c0_1) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg4]
        %c8 = arith.constant 8 : index
        %c1_2 = arith.constant 1 : index
        %7 = ggemm.zero_accumulator : !ggemm.accumulator<64x64xf32>
        %c2_3 = arith.constant 2 : index
        %8 = arith.muli %4, %c8 : index
        %9 = arith.divui %8, %c2_3 : index
        %c1_4 = arith.constant 1 : index
        %10 = arith.addi %4, %c1_4 : index
        %11 = arith.muli %10, %c8 : index
        %12 = arith.divui %11, %c2_3 : index
        %13:2 = scf.for %arg6 = %9 to %12 step %c1_2 iter_args(%arg7 = %7, %arg8 = %arg5) -> (!ggemm.accumulator<64x64xf32>, index) {
          %22:2 = ggemm.ring_get %1[%arg8] : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16>>
          %23 = ggemm.mma %22#0, %22#1, %arg7 {pending = 1 : i64} : !ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16> -> !ggemm.accumulator<64x64xf32>
          %24 = arith.cmpi ugt, %arg6, %9 : index
          scf.if %24 {
            %c1_7 = arith.constant 1 : index
            %26 = arith.subi %arg8, %c1_7 : index
            ggemm.ring_release %1[%26] : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16>>
          }
          %c1_6 = arith.constant 1 : index
          %25 = arith.addi %arg8, %c1_6 : index
          scf.yield %23, %25 : !ggemm.accumulator<64x64xf32>, index
        }
        %14 = ggemm.mma_wait %13#0 : !ggemm.accumulator<64x64xf32>
        %15 = arith.cmpi ugt, %13#1, %arg5 : index
        scf.if %15 {
          %c1_6 = arith.constant 1 : index
          %22 = arith.subi %13#1, %c1_6 : index
          ggemm.ring_release %1[%22] : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16>>
        }
        %16 = arith.subi %arg4, %3 : index
        %17 = arith.divui %16, %5 : index
        %18 = arith.addi %arg4, %5 : index
        %19 = arith.cmpi ult, %18, %2 : index
        %20 = ggemm.split_k_sum %14 rank(%4) round(%17) more(%19) : !ggemm.accumulator<64x64xf32>
        %c0_5 = arith.constant 0 : index
        %21 = arith.cmpi eq, %4, %c0_5 : index
        scf.if %21 {
          ggemm.store_tile %20 to %arg3 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<64x64xf32>, memref<?x128xbf16>
        }
        scf.yield %13#1 : index
      }
    }
  }
  return
}

// -----

// Split over 4 CTAs, 128x128 f32 partials: rank 0's buffer takes 3 of them
// (192 KB), so the ring gets the one stage that still fits.
// CHECK-LABEL: func.func @split_k_wide(
// CHECK: ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384], barrier_offset = 32768, smem_bytes = 229408, split_k_offset = 32784, split_k_bytes = 196624>)
func.func @split_k_wide(%arg0: memref<?x512xbf16>, %arg1: memref<1x256x512xbf16>, %arg2: memref<2xi32>, %arg3: memref<?x256xbf16>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x512xbf16>
  %c256 = arith.constant 256 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<2xi32>) groups(%c1) rows_per_group(%c0) num_rows(%dim) num_cols(%c256) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, split_k = 4>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(256) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    %2 = ggemm.tile_count %0
    %c4 = arith.constant 4 : index
    %3 = arith.divui %cta, %c4 : index
    %4 = arith.remui %cta, %c4 : index
    %5 = arith.divui %num_ctas, %c4 : index
    ggemm.warp_specialize producer registers(40) {
      %c0_1 = arith.constant 0 : index
      %6 = scf.for %arg4 = %3 to %2 step %5 iter_args(%arg5 = %c0_1) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg4]
        %c8 = arith.constant 8 : index
        %c64 = arith.constant 64 : index
        %c1_2 = arith.constant 1 : index
        %c4_3 = arith.constant 4 : index
        %7 = arith.muli %4, %c8 : index
        %8 = arith.divui %7, %c4_3 : index
        %c1_4 = arith.constant 1 : index
        %9 = arith.addi %4, %c1_4 : index
        %10 = arith.muli %9, %c8 : index
        %11 = arith.divui %10, %c4_3 : index
        %12 = scf.for %arg6 = %8 to %11 step %c1_2 iter_args(%arg7 = %arg5) -> (index) {
          %13 = arith.muli %arg6, %c64 : index
          %14 = ggemm.load_tile %arg0[%row, %13] : memref<?x512xbf16> -> !ggemm.tile<128x64xbf16>
          %15 = ggemm.load_tile %arg1[%group, %col, %13] : memref<1x256x512xbf16> -> !ggemm.tile<128x64xbf16>
          ggemm.ring_put %1[%arg7], %14, %15 : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %c1_5 = arith.constant 1 : index
          %16 = arith.addi %arg7, %c1_5 : index
          scf.yield %16 : index
        }
        scf.yield %12 : index
      }
    } consumers(2) registers(232) {
      %c0_1 = arith.constant 0 : index
      %6 = scf.for %arg4 = %3 to %2 step %5 iter_args(%arg5 = %c0_1) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg4]
        %c8 = arith.constant 8 : index
        %c1_2 = arith.constant 1 : index
        %7 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
        %c4_3 = arith.constant 4 : index
        %8 = arith.muli %4, %c8 : index
        %9 = arith.divui %8, %c4_3 : index
        %c1_4 = arith.constant 1 : index
        %10 = arith.addi %4, %c1_4 : index
        %11 = arith.muli %10, %c8 : index
        %12 = arith.divui %11, %c4_3 : index
        %13:2 = scf.for %arg6 = %9 to %12 step %c1_2 iter_args(%arg7 = %7, %arg8 = %arg5) -> (!ggemm.accumulator<128x128xf32>, index) {
          %22:2 = ggemm.ring_get %1[%arg8] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %23 = ggemm.mma %22#0, %22#1, %arg7 {pending = 1 : i64} : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<128x128xf32>
          %24 = arith.cmpi ugt, %arg6, %9 : index
          scf.if %24 {
            %c1_7 = arith.constant 1 : index
            %26 = arith.subi %arg8, %c1_7 : index
            ggemm.ring_release %1[%26] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          }
          %c1_6 = arith.constant 1 : index
          %25 = arith.addi %arg8, %c1_6 : index
          scf.yield %23, %25 : !ggemm.accumulator<128x128xf32>, index
        }
        %14 = ggemm.mma_wait %13#0 : !ggemm.accumulator<128x128xf32>
        %15 = arith.cmpi ugt, %13#1, %arg5 : index
        scf.if %15 {
          %c1_6 = arith.constant 1 : index
          %22 = arith.subi %13#1, %c1_6 : index
          ggemm.ring_release %1[%22] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
        }
        %16 = arith.subi %arg4, %3 : index
        %17 = arith.divui %16, %5 : index
        %18 = arith.addi %arg4, %5 : index
        %19 = arith.cmpi ult, %18, %2 : index
        %20 = ggemm.split_k_sum %14 rank(%4) round(%17) more(%19) : !ggemm.accumulator<128x128xf32>
        %c0_5 = arith.constant 0 : index
        %21 = arith.cmpi eq, %4, %c0_5 : index
        scf.if %21 {
          ggemm.store_tile %20 to %arg3 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<128x128xf32>, memref<?x256xbf16>
        }
        scf.yield %13#1 : index
      }
    }
  }
  return
}

// -----

// split_k_tail: each CTA's split tile is its last, so the partial (16 KB)
// overlays the ring's tile buffers (64 KB over 4 stages), idle by then,
// and costs no stage; its two mbarriers and a word of the lowering's (32
// bytes) go behind the ring's mbarriers, 16-byte aligned.
// CHECK-LABEL: func.func @split_k_tail(
// CHECK: ggemm.create_ring release_count(128) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 32768], stage_bytes = [8192, 8192], barrier_offset = 65536, smem_bytes = 65632, split_k_offset = 0, split_k_bytes = 16384, split_k_barriers = 65600>)
func.func @split_k_tail(%arg0: memref<?x512xbf16>, %arg1: memref<1x128x512xbf16>, %arg2: memref<2xi32>, %arg3: memref<?x128xbf16>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x512xbf16>
  %c128 = arith.constant 128 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<2xi32>) groups(%c1) rows_per_group(%c0) num_rows(%dim) num_cols(%c128) config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, consumer_warpgroups = 1, split_k = 2, split_k_tail = true>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(128) : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16>>
    %2 = ggemm.tile_count %0
    %c2 = arith.constant 2 : index
    %3 = arith.divui %2, %num_ctas : index
    %4 = arith.muli %3, %num_ctas : index
    %5 = arith.subi %2, %4 : index
    %6 = arith.muli %5, %c2 : index
    %7 = arith.cmpi ule, %6, %num_ctas : index
    %8 = arith.addi %4, %6 : index
    %9 = arith.select %7, %8, %2 : index
    ggemm.warp_specialize producer registers(56) {
      %c0_0 = arith.constant 0 : index
      %10 = scf.for %arg4 = %cta to %9 step %num_ctas iter_args(%arg5 = %c0_0) -> (index) {
        %11 = arith.remui %arg4, %c2 : index
        %12 = arith.cmpi uge, %arg4, %4 : index
        %13 = arith.andi %7, %12 : i1
        %14 = arith.subi %arg4, %4 : index
        %15 = arith.divui %14, %c2 : index
        %16 = arith.addi %4, %15 : index
        %17 = arith.select %13, %16, %arg4 : index
        %group, %row, %row_end, %col = ggemm.map_tile %0[%17]
        %c8 = arith.constant 8 : index
        %c64 = arith.constant 64 : index
        %c0_1 = arith.constant 0 : index
        %c1_2 = arith.constant 1 : index
        %18 = arith.muli %11, %c8 : index
        %19 = arith.divui %18, %c2 : index
        %c4 = arith.constant 4 : index
        %20 = arith.addi %19, %c4 : index
        %21 = arith.select %13, %19, %c0_1 : index
        %22 = arith.subi %20, %19 : index
        %23 = arith.select %13, %22, %c8 : index
        %24 = scf.for %arg6 = %c0_1 to %23 step %c1_2 iter_args(%arg7 = %arg5) -> (index) {
          %25 = arith.addi %21, %arg6 : index
          %26 = arith.muli %25, %c64 : index
          %27 = ggemm.load_tile %arg0[%row, %26] : memref<?x512xbf16> -> !ggemm.tile<64x64xbf16>
          %28 = ggemm.load_tile %arg1[%group, %col, %26] : memref<1x128x512xbf16> -> !ggemm.tile<64x64xbf16>
          ggemm.ring_put %1[%arg7], %27, %28 : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16>>
          %c1_3 = arith.constant 1 : index
          %29 = arith.addi %arg7, %c1_3 : index
          scf.yield %29 : index
        }
        scf.yield %24 : index
      }
    } consumers(1) registers(232) {
      %c0_0 = arith.constant 0 : index
      %10 = scf.for %arg4 = %cta to %9 step %num_ctas iter_args(%arg5 = %c0_0) -> (index) {
        %11 = arith.remui %arg4, %c2 : index
        %12 = arith.cmpi uge, %arg4, %4 : index
        %13 = arith.andi %7, %12 : i1
        %14 = arith.subi %arg4, %4 : index
        %15 = arith.divui %14, %c2 : index
        %16 = arith.addi %4, %15 : index
        %17 = arith.select %13, %16, %arg4 : index
        %group, %row, %row_end, %col = ggemm.map_tile %0[%17]
        %c8 = arith.constant 8 : index
        %c0_1 = arith.constant 0 : index
        %c1_2 = arith.constant 1 : index
        %18 = ggemm.zero_accumulator : !ggemm.accumulator<64x64xf32>
        %19 = arith.muli %11, %c8 : index
        %20 = arith.divui %19, %c2 : index
        %c4 = arith.constant 4 : index
        %21 = arith.addi %20, %c4 : index
        %22 = arith.subi %21, %20 : index
        %23 = arith.select %13, %22, %c8 : index
        %24:2 = scf.for %arg6 = %c0_1 to %23 step %c1_2 iter_args(%arg7 = %18, %arg8 = %arg5) -> (!ggemm.accumulator<64x64xf32>, index) {
          %31:2 = ggemm.ring_get %1[%arg8] : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16>>
          %32 = ggemm.mma %31#0, %31#1, %arg7 {pending = 1 : i64} : !ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16> -> !ggemm.accumulator<64x64xf32>
          %33 = arith.cmpi ugt, %arg6, %c0_1 : index
          scf.if %33 {
            %c1_6 = arith.constant 1 : index
            %35 = arith.subi %arg8, %c1_6 : index
            ggemm.ring_release %1[%35] : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16>>
          }
          %c1_5 = arith.constant 1 : index
          %34 = arith.addi %arg8, %c1_5 : index
          scf.yield %32, %34 : !ggemm.accumulator<64x64xf32>, index
        }
        %25 = ggemm.mma_wait %24#0 : !ggemm.accumulator<64x64xf32>
        %26 = arith.cmpi ugt, %24#1, %arg5 : index
        scf.if %26 {
          %c1_5 = arith.constant 1 : index
          %31 = arith.subi %24#1, %c1_5 : index
          ggemm.ring_release %1[%31] : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16>>
        }
        %false = arith.constant false
        %c0_3 = arith.constant 0 : index
        %27 = ggemm.split_k_sum %25 rank(%11) round(%c0_3) more(%false) active(%13) : !ggemm.accumulator<64x64xf32>
        %c0_4 = arith.constant 0 : index
        %28 = arith.cmpi eq, %11, %c0_4 : index
        %true = arith.constant true
        %29 = arith.xori %13, %true : i1
        %30 = arith.ori %29, %28 : i1
        scf.if %30 {
          ggemm.store_tile %27 to %arg3 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<64x64xf32>, memref<?x128xbf16>
        }
        scf.yield %24#1 : index
      }
    }
  }
  return
}

// -----

// A ring smaller than the partial (one stage of 64x32 tiles, 8 KB): the
// buffer goes beside it, as without split_k_tail.
// CHECK-LABEL: func.func @split_k_tail_small_ring(
// CHECK: ggemm.create_ring release_count(128) layout(#ggemm.ring_layout<stages = 1, offsets = [0, 4096], stage_bytes = [4096, 4096], barrier_offset = 8192, smem_bytes = 24608, split_k_offset = 8208, split_k_bytes = 16400>)
func.func @split_k_tail_small_ring(%arg0: memref<?x512xbf16>, %arg1: memref<1x128x512xbf16>, %arg2: memref<2xi32>, %arg3: memref<?x128xbf16>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x512xbf16>
  %c128 = arith.constant 128 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<2xi32>) groups(%c1) rows_per_group(%c0) num_rows(%dim) num_cols(%c128) config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 32, stages = 1, consumer_warpgroups = 1, split_k = 2, split_k_tail = true>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(128) : !ggemm.ring<!ggemm.tile<64x32xbf16>, !ggemm.tile<64x32xbf16>>
    %2 = ggemm.tile_count %0
    %c2 = arith.constant 2 : index
    %3 = arith.divui %2, %num_ctas : index
    %4 = arith.muli %3, %num_ctas : index
    %5 = arith.subi %2, %4 : index
    %6 = arith.muli %5, %c2 : index
    %7 = arith.cmpi ule, %6, %num_ctas : index
    %8 = arith.addi %4, %6 : index
    %9 = arith.select %7, %8, %2 : index
    ggemm.warp_specialize producer registers(56) {
      %c0_0 = arith.constant 0 : index
      %10 = scf.for %arg4 = %cta to %9 step %num_ctas iter_args(%arg5 = %c0_0) -> (index) {
        %11 = arith.remui %arg4, %c2 : index
        %12 = arith.cmpi uge, %arg4, %4 : index
        %13 = arith.andi %7, %12 : i1
        %14 = arith.subi %arg4, %4 : index
        %15 = arith.divui %14, %c2 : index
        %16 = arith.addi %4, %15 : index
        %17 = arith.select %13, %16, %arg4 : index
        %group, %row, %row_end, %col = ggemm.map_tile %0[%17]
        %c16 = arith.constant 16 : index
        %c32 = arith.constant 32 : index
        %c0_1 = arith.constant 0 : index
        %c1_2 = arith.constant 1 : index
        %18 = arith.muli %11, %c16 : index
        %19 = arith.divui %18, %c2 : index
        %c8 = arith.constant 8 : index
        %20 = arith.addi %19, %c8 : index
        %21 = arith.select %13, %19, %c0_1 : index
        %22 = arith.subi %20, %19 : index
        %23 = arith.select %13, %22, %c16 : index
        %24 = scf.for %arg6 = %c0_1 to %23 step %c1_2 iter_args(%arg7 = %arg5) -> (index) {
          %25 = arith.addi %21, %arg6 : index
          %26 = arith.muli %25, %c32 : index
          %27 = ggemm.load_tile %arg0[%row, %26] : memref<?x512xbf16> -> !ggemm.tile<64x32xbf16>
          %28 = ggemm.load_tile %arg1[%group, %col, %26] : memref<1x128x512xbf16> -> !ggemm.tile<64x32xbf16>
          ggemm.ring_put %1[%arg7], %27, %28 : !ggemm.ring<!ggemm.tile<64x32xbf16>, !ggemm.tile<64x32xbf16>>
          %c1_3 = arith.constant 1 : index
          %29 = arith.addi %arg7, %c1_3 : index
          scf.yield %29 : index
        }
        scf.yield %24 : index
      }
    } consumers(1) registers(232) {
      %c0_0 = arith.constant 0 : index
      %10 = scf.for %arg4 = %cta to %9 step %num_ctas iter_args(%arg5 = %c0_0) -> (index) {
        %11 = arith.remui %arg4, %c2 : index
        %12 = arith.cmpi uge, %arg4, %4 : index
        %13 = arith.andi %7, %12 : i1
        %14 = arith.subi %arg4, %4 : index
        %15 = arith.divui %14, %c2 : index
        %16 = arith.addi %4, %15 : index
        %17 = arith.select %13, %16, %arg4 : index
        %group, %row, %row_end, %col = ggemm.map_tile %0[%17]
        %c16 = arith.constant 16 : index
        %c0_1 = arith.constant 0 : index
        %c1_2 = arith.constant 1 : index
        %18 = ggemm.zero_accumulator : !ggemm.accumulator<64x64xf32>
        %19 = arith.muli %11, %c16 : index
        %20 = arith.divui %19, %c2 : index
        %c8 = arith.constant 8 : index
        %21 = arith.addi %20, %c8 : index
        %22 = arith.subi %21, %20 : index
        %23 = arith.select %13, %22, %c16 : index
        %24:2 = scf.for %arg6 = %c0_1 to %23 step %c1_2 iter_args(%arg7 = %18, %arg8 = %arg5) -> (!ggemm.accumulator<64x64xf32>, index) {
          %31:2 = ggemm.ring_get %1[%arg8] : !ggemm.ring<!ggemm.tile<64x32xbf16>, !ggemm.tile<64x32xbf16>>
          %32 = ggemm.mma %31#0, %31#1, %arg7 {pending = 1 : i64} : !ggemm.tile<64x32xbf16>, !ggemm.tile<64x32xbf16> -> !ggemm.accumulator<64x64xf32>
          %33 = arith.cmpi ugt, %arg6, %c0_1 : index
          scf.if %33 {
            %c1_6 = arith.constant 1 : index
            %35 = arith.subi %arg8, %c1_6 : index
            ggemm.ring_release %1[%35] : !ggemm.ring<!ggemm.tile<64x32xbf16>, !ggemm.tile<64x32xbf16>>
          }
          %c1_5 = arith.constant 1 : index
          %34 = arith.addi %arg8, %c1_5 : index
          scf.yield %32, %34 : !ggemm.accumulator<64x64xf32>, index
        }
        %25 = ggemm.mma_wait %24#0 : !ggemm.accumulator<64x64xf32>
        %26 = arith.cmpi ugt, %24#1, %arg5 : index
        scf.if %26 {
          %c1_5 = arith.constant 1 : index
          %31 = arith.subi %24#1, %c1_5 : index
          ggemm.ring_release %1[%31] : !ggemm.ring<!ggemm.tile<64x32xbf16>, !ggemm.tile<64x32xbf16>>
        }
        %false = arith.constant false
        %c0_3 = arith.constant 0 : index
        %27 = ggemm.split_k_sum %25 rank(%11) round(%c0_3) more(%false) active(%13) : !ggemm.accumulator<64x64xf32>
        %c0_4 = arith.constant 0 : index
        %28 = arith.cmpi eq, %11, %c0_4 : index
        %true = arith.constant true
        %29 = arith.xori %13, %true : i1
        %30 = arith.ori %29, %28 : i1
        scf.if %30 {
          ggemm.store_tile %27 to %arg3 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<64x64xf32>, memref<?x128xbf16>
        }
        scf.yield %24#1 : index
      }
    }
  }
  return
}
