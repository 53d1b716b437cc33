// ggemm-swap-ab: a tile program whose config has swap_ab = true gets the
// weight tile as the mma's a and the token tile as its b; the accumulator
// is transposed through the K loop, a promotion swaps its scales and the
// store is marked transposed. Loads stay as they are. Programs without
// swap_ab, and programs already swapped, are left alone.
// RUN: gemm-opt %s -split-input-file -ggemm-swap-ab -verify-diagnostics | FileCheck %s
// RUN: gemm-opt %s -split-input-file -ggemm-swap-ab -ggemm-swap-ab -verify-diagnostics | FileCheck %s

// bf16 segment_matmul with a bias: 24 tokens x 128 weight rows.
// CHECK-LABEL: func.func @segment_bf16
// CHECK: %[[ZERO:.+]] = ggemm.zero_accumulator : !ggemm.accumulator<128x24xf32>
// CHECK: %[[ACC:.+]] = scf.for {{.*}} iter_args(%[[A:.+]] = %[[ZERO]]) -> (!ggemm.accumulator<128x24xf32>)
// CHECK: %[[TA:.+]] = ggemm.load_tile %{{.+}}[%{{.+}}, %{{.+}}] : memref<?x256xbf16> -> !ggemm.tile<24x64xbf16>
// CHECK: %[[TB:.+]] = ggemm.load_tile %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
// CHECK: %[[NEXT:.+]] = ggemm.mma %[[TB]], %[[TA]], %[[A]] : !ggemm.tile<128x64xbf16>, !ggemm.tile<24x64xbf16> -> !ggemm.accumulator<128x24xf32>
// CHECK: scf.yield %[[NEXT]] : !ggemm.accumulator<128x24xf32>
// CHECK: ggemm.store_tile %[[ACC]] to %{{.+}} row(%{{.+}}) row_end(%{{.+}}) col(%{{.+}}) transposed bias(%{{.+}}[%{{.+}}] : memref<4x128xf32>) : !ggemm.accumulator<128x24xf32>, memref<?x128xbf16>
func.func @segment_bf16(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>, %indptr: memref<5xi32>,
                        %bias: memref<4x128xf32>, %y: memref<?x128xbf16>, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  ggemm.foreach_tile segment rows(%indptr : memref<5xi32>) groups(%c4) rows_per_group(%c0)
      num_rows(%m) num_cols(%c128)
      config(#ggemm.tile_config<block_m = 24, block_n = 128, block_k = 64, swap_ab = true>) {
  ^bb0(%group: index, %row: index, %row_end: index, %col: index):
    %zero = ggemm.zero_accumulator : !ggemm.accumulator<24x128xf32>
    %acc = scf.for %kb = %c0 to %c4 step %c1 iter_args(%a = %zero) -> (!ggemm.accumulator<24x128xf32>) {
      %k = arith.muli %kb, %c64 : index
      %ta = ggemm.load_tile %x[%row, %k] : memref<?x256xbf16> -> !ggemm.tile<24x64xbf16>
      %tb = ggemm.load_tile %w[%group, %col, %k] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
      %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<24x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<24x128xf32>
      scf.yield %next : !ggemm.accumulator<24x128xf32>
    }
    ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col) bias(%bias[%group] : memref<4x128xf32>)
        : !ggemm.accumulator<24x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

// FP8 with block scales: the weight scales now scale the accumulator's
// rows (a_scales), the 32 activation scales its columns (b_scales).
// CHECK-LABEL: func.func @fp8_promote
// CHECK: %[[SA:.+]] = ggemm.load_scales %{{.+}} : memref<?x4xf32, strided<[1, ?]>> -> !ggemm.scales<32>
// CHECK: %[[SB:.+]] = ggemm.load_scales %{{.+}} : memref<4x2x4xf32> -> !ggemm.scales<1>
// CHECK: %[[ZERO:.+]] = ggemm.zero_accumulator : !ggemm.accumulator<128x32xf32>
// CHECK: %[[PART:.+]] = ggemm.mma %[[TB:.+]], %[[TA:.+]], %[[ZERO]] : !ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<32x128xf8E4M3FN> -> !ggemm.accumulator<128x32xf32>
// CHECK: ggemm.promote %[[PART]] into %{{.+}} a_scales(%[[SB]] : !ggemm.scales<1>) b_scales(%[[SA]] : !ggemm.scales<32>) : !ggemm.accumulator<128x32xf32>
// CHECK: ggemm.store_tile {{.*}} transposed : !ggemm.accumulator<128x32xf32>, memref<?x256xbf16>
func.func @fp8_promote(%x: memref<?x512xf8E4M3FN>, %w: memref<4x256x512xf8E4M3FN>, %indptr: memref<5xi32>,
                       %xs: memref<?x4xf32, strided<[1, ?]>>, %ws: memref<4x2x4xf32>,
                       %y: memref<?x256xbf16>, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  ggemm.foreach_tile segment rows(%indptr : memref<5xi32>) groups(%c4) rows_per_group(%c0)
      num_rows(%m) num_cols(%c256)
      config(#ggemm.tile_config<block_m = 32, block_n = 128, block_k = 128, swap_ab = true>) {
  ^bb0(%group: index, %row: index, %row_end: index, %col: index):
    %zero = ggemm.zero_accumulator : !ggemm.accumulator<32x128xf32>
    %acc = scf.for %kb = %c0 to %c4 step %c1 iter_args(%a = %zero) -> (!ggemm.accumulator<32x128xf32>) {
      %k = arith.muli %kb, %c128 : index
      %ta = ggemm.load_tile %x[%row, %k] : memref<?x512xf8E4M3FN> -> !ggemm.tile<32x128xf8E4M3FN>
      %tb = ggemm.load_tile %w[%group, %col, %k] : memref<4x256x512xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
      %sa = ggemm.load_scales %xs[%row, %kb] : memref<?x4xf32, strided<[1, ?]>> -> !ggemm.scales<32>
      %cb = arith.divui %col, %c128 : index
      %sb = ggemm.load_scales %ws[%group, %cb, %kb] : memref<4x2x4xf32> -> !ggemm.scales<1>
      %z = ggemm.zero_accumulator : !ggemm.accumulator<32x128xf32>
      %p = ggemm.mma %ta, %tb, %z : !ggemm.tile<32x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN> -> !ggemm.accumulator<32x128xf32>
      %next = ggemm.promote %p into %a a_scales(%sa : !ggemm.scales<32>) b_scales(%sb : !ggemm.scales<1>) : !ggemm.accumulator<32x128xf32>
      scf.yield %next : !ggemm.accumulator<32x128xf32>
    }
    ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<32x128xf32>, memref<?x256xbf16>
  }
  return
}

// -----

// A 192-row weight tile starts inside a weight-scale block (b_offset): its
// scales cannot become per-row ones of whole blocks, so it is not swapped.
func.func @fp8_promote_offset(%x: memref<?x512xf8E4M3FN>, %w: memref<4x384x512xf8E4M3FN>, %indptr: memref<5xi32>,
                              %xs: memref<?x4xf32, strided<[1, ?]>>, %ws: memref<4x3x4xf32>,
                              %y: memref<?x384xbf16>, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 128 : index
  %c384 = arith.constant 384 : index
  ggemm.foreach_tile segment rows(%indptr : memref<5xi32>) groups(%c4) rows_per_group(%c0)
      num_rows(%m) num_cols(%c384)
      config(#ggemm.tile_config<block_m = 32, block_n = 192, block_k = 128, consumer_warpgroups = 1, swap_ab = true>) {
  ^bb0(%group: index, %row: index, %row_end: index, %col: index):
    %zero = ggemm.zero_accumulator : !ggemm.accumulator<32x192xf32>
    %acc = scf.for %kb = %c0 to %c4 step %c1 iter_args(%a = %zero) -> (!ggemm.accumulator<32x192xf32>) {
      %k = arith.muli %kb, %c128 : index
      %ta = ggemm.load_tile %x[%row, %k] : memref<?x512xf8E4M3FN> -> !ggemm.tile<32x128xf8E4M3FN>
      %tb = ggemm.load_tile %w[%group, %col, %k] : memref<4x384x512xf8E4M3FN> -> !ggemm.tile<192x128xf8E4M3FN>
      %sa = ggemm.load_scales %xs[%row, %kb] : memref<?x4xf32, strided<[1, ?]>> -> !ggemm.scales<32>
      %cb = arith.divui %col, %c128 : index
      %sb = ggemm.load_scales %ws[%group, %cb, %kb] : memref<4x3x4xf32> -> !ggemm.scales<2>
      %off = arith.remui %col, %c128 : index
      %z = ggemm.zero_accumulator : !ggemm.accumulator<32x192xf32>
      %p = ggemm.mma %ta, %tb, %z : !ggemm.tile<32x128xf8E4M3FN>, !ggemm.tile<192x128xf8E4M3FN> -> !ggemm.accumulator<32x192xf32>
      // expected-error @+1 {{'ggemm.promote' op expects no b_offset in a tile program to swap (the weight tile, swapped into wgmma's rows, must cover whole weight scale blocks: block_n 64, 128 or 256)}}
      %next = ggemm.promote %p into %a a_scales(%sa : !ggemm.scales<32>) b_scales(%sb : !ggemm.scales<2>) b_offset(%off) {b_block = 128 : i64} : !ggemm.accumulator<32x192xf32>
      scf.yield %next : !ggemm.accumulator<32x192xf32>
    }
    ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<32x192xf32>, memref<?x384xbf16>
  }
  return
}

// -----

// Without swap_ab nothing changes.
// CHECK-LABEL: func.func @no_swap
// CHECK: ggemm.mma %[[TA:.+]], %[[TB:.+]], %{{.+}} : !ggemm.tile<64x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<64x128xf32>
// CHECK: ggemm.store_tile
// CHECK-NOT: transposed
// CHECK-SAME: : !ggemm.accumulator<64x128xf32>, memref<?x128xbf16>
func.func @no_swap(%x: memref<?x64xbf16>, %w: memref<2x128x64xbf16>, %y: memref<?x128xbf16>, %m: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  ggemm.foreach_tile uniform groups(%c2) rows_per_group(%m) num_rows(%m) num_cols(%c128)
      config(#ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64, consumer_warpgroups = 1>) {
  ^bb0(%group: index, %row: index, %row_end: index, %col: index):
    %zero = ggemm.zero_accumulator : !ggemm.accumulator<64x128xf32>
    %ta = ggemm.load_tile %x[%row, %c0] : memref<?x64xbf16> -> !ggemm.tile<64x64xbf16>
    %tb = ggemm.load_tile %w[%group, %col, %c0] : memref<2x128x64xbf16> -> !ggemm.tile<128x64xbf16>
    %acc = ggemm.mma %ta, %tb, %zero : !ggemm.tile<64x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<64x128xf32>
    ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<64x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

// An accumulator carried through an op the pass does not know is
// diagnosed, and the program is left as it was.
func.func @unknown_carrier(%x: memref<?x64xbf16>, %w: memref<2x128x64xbf16>, %y: memref<?x128xbf16>,
                           %m: index, %cond: i1) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  ggemm.foreach_tile uniform groups(%c2) rows_per_group(%m) num_rows(%m) num_cols(%c128)
      config(#ggemm.tile_config<block_m = 16, block_n = 128, block_k = 64, swap_ab = true>) {
  ^bb0(%group: index, %row: index, %row_end: index, %col: index):
    %zero = ggemm.zero_accumulator : !ggemm.accumulator<16x128xf32>
    // expected-error @+1 {{'scf.if' op carries an accumulator through an op ggemm-swap-ab does not know how to transpose}}
    %acc = scf.if %cond -> (!ggemm.accumulator<16x128xf32>) {
      scf.yield %zero : !ggemm.accumulator<16x128xf32>
    } else {
      scf.yield %zero : !ggemm.accumulator<16x128xf32>
    }
    ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<16x128xf32>, memref<?x128xbf16>
  }
  return
}
