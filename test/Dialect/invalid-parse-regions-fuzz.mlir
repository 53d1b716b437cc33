// The seeded fuzz campaign's crash-dfb8f2cb1a (scripts/test.sh, seed 1), as
// the fuzzer wrote it: the launch body's `%8 = ggemm.load_tile` uses %4,
// %col and %6 before the producer region defines them, and the consumers
// region then fails to parse. Before the guarded region parsers, gemm-opt
// freed the producer region with those uses in place and glibc aborted
// (`malloc(): unsorted double linked list corrupted`) on every run.
// RUN: gemm-opt %s -verify-diagnostics

func.func @seg(%arg0: memref<?x256xbf16>, %arg1: memref<4x128x256xbf16>, %arg2: memref<9xi64>, %arg3: memref<8xi32>, %arg4: memref<4x128xf32>, %arg5: memref<?x128xbf16>) {
  %c8 = arith.constant 8 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x256xbf16>
  %c128 = arith.constant 128 : index
  %c4 = arith.constant 4 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<9xi64>) weights(%arg3 : memref<8xi32>) num_weights(%c4) groups(%c8) rows_per_group(%c0) num_rows(%dim) num_cols(%c128) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 16384], barrier_offset = 131072, smem_bytes = 131136>) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %8 = ggemm.load_tile %arg1[%4, %col, %6] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
    ggemm.warp_specialize producer registers(40) {
      %c0_1 = arith.constant 0 : index
      %3 = scf.for %arg6 = %cta to %2 step %num_ctas iter_args(%arg7 = %c0_1) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg6]
        %4 = ggemm.weight_index %arg3[%group] : memref<8xi32>
        %c4_2 = arith.constant 4 : index
        %c0_3 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %c64 = arith.constant 64 : index
        %5 = scf.for %arg8 = %c0_3 to %c4_2 step %c1 iter_args(%arg9 = %arg7) -> (index) {
          %6 = arith.muli %arg8, %c64 : index
          %7 = ggemm.load_tile %arg0[%row, %6] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
    %2 = ggemm.tile_count %0
          ggemm.ring_put %1[%arg9], %7, %8 : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %c1_4 = arith.constant 1 : index
          %9 = arith.addi %arg9, %c1_4 : index
          scf.yield %9 : index
        }
        scf.yield %5 : index
      }
    } consumers(2) registers(232) {
      %c0_1 = arith.constant 0 : index
      %3 = scf.for %arg6 = %cta to %2 step %num_ctas iter_args(%arg7 = %c0_1) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg6]
        %4 = ggemm.weight_index %arg3[%group] : memref<8xi32>
        %c4_2 = arith.constant 4 : index
        %c0_3 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        // expected-error @+1 {{expected SSA operand}}
        %5 = ggemm.store_tile : !ggemm.accumulator<128x128xf32>
        %6:2 = scf.for %arg8 = %c0_3 to %c4_2 step %c1 iter_args(%arg9 = %5, %arg10 = %arg7) -> (!ggemm.accumulator<128x128xf32>, index) {
          %9:2 = ggemm.ring_get %1[%arg10] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %10 = ggemm.mma %9#0, %9#1, %arg9 {pending = 1 : i64} : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<128x128xf32>
          %11 = arith.cmpi ugt, %arg8, %c0_3 : index
          scf.if %11 {
            %c1_5 = arith.constant 1 : index
            %13 = arith.subi %arg10, %c1_5 : index
            ggemm.ring_release %1[%13] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          }
          %c1_4 = arith.constant 1 : index
          %12 = arith.addi %arg10, %c1_4 : index
          scf.yield %10, %12 : !ggemm.accumulator<128x128xf32>, index
        }
        %7 = ggemm.mma_wait %6#0 : !ggemm.accumulator<128x128xf32>
        %8 = arith.cmpi ugt, %6#1, %arg7 : index
        scf.if %8 {
          %c1_4 = arith.constant 1 : index
          %9 = arith.subi %6#1, %c1_4 : index
          ggemm.ring_release %1[%9] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
        }
        ggemm.store_tile %7 to %arg5 row(%row) row_end(%row_end) col(%col) bias(%arg4[%4] : memref<4x128xf32>) {epilogue = #ggemm.epilogue<activation = silu>} : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
        scf.yield %6#1 : index
      }
    }
  }
  return
}
