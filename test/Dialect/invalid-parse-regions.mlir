// Parse failures inside the regions of ggemm.launch, ggemm.warp_specialize
// and ggemm.foreach_tile after a forward reference from outside the region
// was resolved to a value the region defines: each must end in its
// diagnostic, with no use of a freed value left behind (the seeded fuzz
// campaign's crash-dfb8f2cb1a; bench/results/2026-11-23-fuzz-50k.md,
// finding 3). The valgrind run fails on any invalid read or write.
// RUN: gemm-opt %s -split-input-file -verify-diagnostics
// REQUIRES: valgrind
// RUN: valgrind -q --error-exitcode=99 gemm-opt %s -split-input-file -verify-diagnostics

// The launch body uses %row, defined in the producer region; the consumers
// region then fails.
func.func @consumers_fail(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                          %indptr: memref<9xi64>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %s = ggemm.tile_schedule segment rows(%indptr : memref<9xi64>) groups(%c8) rows_per_group(%c0) num_rows(%c128) num_cols(%c128) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %t = ggemm.load_tile %x[%row, %c0] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
    ggemm.warp_specialize producer registers(40) {
      %group, %row, %row_end, %col = ggemm.map_tile %s[%cta]
    } consumers(2) registers(232) {
      // expected-error @+1 {{expected SSA operand}}
      %a = ggemm.store_tile : !ggemm.accumulator<128x128xf32>
    }
  }
  return
}

// -----

// The same, failing between the two regions.
func.func @keyword_fail(%x: memref<?x256xbf16>, %indptr: memref<9xi64>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %s = ggemm.tile_schedule segment rows(%indptr : memref<9xi64>) groups(%c8) rows_per_group(%c0) num_rows(%c128) num_cols(%c128) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %t = ggemm.load_tile %x[%row, %c0] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
    ggemm.warp_specialize producer registers(40) {
      %group, %row, %row_end, %col = ggemm.map_tile %s[%cta]
    // expected-error @+1 {{expected 'consumers'}}
    } consumer(2) registers(232) {
    }
  }
  return
}

// -----

// A use at function scope of a value defined in the launch body, which then
// fails.
func.func @launch_fail(%x: memref<?x256xbf16>, %indptr: memref<9xi64>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %t = ggemm.load_tile %x[%n, %c0] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
  %s = ggemm.tile_schedule segment rows(%indptr : memref<9xi64>) groups(%c8) rows_per_group(%c0) num_rows(%c128) num_cols(%c128) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %n = ggemm.tile_count %s
    // expected-error @+1 {{custom op 'ggemm.bogus' is unknown}}
    ggemm.bogus
  }
  return
}

// -----

// A use at function scope of a value defined in a foreach_tile body, which
// then fails.
func.func @foreach_fail(%x: memref<?x256xbf16>, %indptr: memref<9xi32>,
                        %n: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %t = ggemm.load_tile %x[%k, %c0] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
  ggemm.foreach_tile segment rows(%indptr : memref<9xi32>) groups(%c8)
      rows_per_group(%c0) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
  ^bb0(%group: index, %row: index, %row_end: index, %col: index):
    %k = arith.addi %row, %col : index
    // expected-error @+1 {{expected SSA operand}}
    %a = ggemm.store_tile : !ggemm.accumulator<128x128xf32>
  }
  return
}

// -----

// An inherent attribute in the attribute dictionary is checked as the
// generated parsers check it.
func.func @inherent_attr(%indptr: memref<9xi64>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %s = ggemm.tile_schedule segment rows(%indptr : memref<9xi64>) groups(%c8) rows_per_group(%c0) num_rows(%c128) num_cols(%c128) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    ggemm.warp_specialize producer registers(40) {
    } consumers(2) registers(232) {
    // expected-error @+1 {{attribute 'producer_registers' failed to satisfy constraint}}
    } {producer_registers = "x"}
  }
  return
}
