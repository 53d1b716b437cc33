// Every diagnostic of the tile-level and schedule-level ops and types
// (lib/Dialect/GGemm/IR/GGemm{Tile,Schedule}Ops.cpp, GGemmTypes.cpp).
// RUN: gemm-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// !ggemm.tile, !ggemm.ring
//===----------------------------------------------------------------------===//

// expected-error @+1 {{expects a rank-2 tile, got rank 3}}
func.func @tile_rank(%t: !ggemm.tile<2x64x64xbf16>) {
  return
}

// -----

// expected-error @+1 {{expects a static, positive tile shape}}
func.func @tile_empty(%t: !ggemm.tile<0x64xbf16>) {
  return
}

// -----

// expected-error @+1 {{expects a bf16, f16, FP8 or i8 tile, got 'f32'}}
func.func @tile_f32(%t: !ggemm.tile<64x64xf32>) {
  return
}

// -----

// expected-error @+1 {{expected a tile layout (k_major or mn_major), got 'row'}}
func.func @tile_layout(%t: !ggemm.tile<64x64xbf16, row>) {
  return
}

// -----

// expected-error @+1 {{expects a ring of !ggemm.tile and !ggemm.scales types, got 'f32'}}
func.func @ring_not_tiles(%r: !ggemm.ring<f32>) {
  return
}

//===----------------------------------------------------------------------===//
// ggemm.foreach_tile, ggemm.tile_schedule
//===----------------------------------------------------------------------===//

// -----

func.func @foreach_tile_segment_rows(%i: index) {
  // expected-error @+1 {{'ggemm.foreach_tile' op expects a `rows` operand for row_mapping segment}}
  ggemm.foreach_tile segment groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
  }
  return
}

// -----

func.func @foreach_tile_masked_rows(%i: index) {
  // expected-error @+1 {{'ggemm.foreach_tile' op expects a `rows` operand for row_mapping masked}}
  ggemm.foreach_tile masked groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
  }
  return
}

// -----

func.func @foreach_tile_uniform_rows(%rows: memref<4xi32>, %i: index) {
  // expected-error @+1 {{'ggemm.foreach_tile' op expects no `rows` operand for row_mapping uniform}}
  ggemm.foreach_tile uniform rows(%rows : memref<4xi32>) groups(%i) rows_per_group(%i)
      num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
  }
  return
}

// -----

func.func @foreach_tile_three_args(%i: index) {
  // expected-error @+1 {{'ggemm.foreach_tile' op expects the body to take 4 index arguments (group, row, row_end, col), got (index, index, index)}}
  ggemm.foreach_tile uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
  ^bb0(%g: index, %row: index, %row_end: index):
  }
  return
}

// -----

func.func @foreach_tile_i32_arg(%i: index) {
  // expected-error @+1 {{'ggemm.foreach_tile' op expects the body to take 4 index arguments (group, row, row_end, col), got (index, index, index, i32)}}
  ggemm.foreach_tile uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: i32):
  }
  return
}

// -----

func.func @foreach_tile_bad_row_mapping(%n: index) {
  // expected-error @+1 {{expected a row mapping (segment, masked or uniform), got 'ragged'}}
  ggemm.foreach_tile ragged groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
  }
  return
}

// -----

func.func @tile_schedule_rows(%i: index) {
  // expected-error @+1 {{'ggemm.tile_schedule' op expects a `rows` operand for row_mapping segment}}
  %s = ggemm.tile_schedule segment groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  return
}

// -----

func.func @tile_schedule_weights_without_count(%idx: memref<4xi32>, %i: index) {
  // expected-error @+1 {{'ggemm.tile_schedule' op expects `weights` and `num_weights` together}}
  %s = "ggemm.tile_schedule"(%idx, %i, %i, %i, %i)
      <{row_mapping = #ggemm.row_mapping<uniform>,
        config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
        operandSegmentSizes = array<i32: 0, 1, 0, 1, 1, 1, 1>}>
      : (memref<4xi32>, index, index, index, index) -> !ggemm.schedule
  return
}

// -----

func.func @yield_outside() {
  // expected-error @+1 {{'ggemm.yield' op expects parent op to be one of 'ggemm.foreach_tile, ggemm.launch, ggemm.warp_specialize'}}
  ggemm.yield
}

//===----------------------------------------------------------------------===//
// ggemm.load_tile
//===----------------------------------------------------------------------===//

// -----

func.func @load_tile_rank(%x: memref<256xbf16>, %i: index) {
  // expected-error @+1 {{'ggemm.load_tile' op expects source to be a matrix or a batch of matrices (rank 2 or 3), got rank 1}}
  %t = ggemm.load_tile %x[%i] : memref<256xbf16> -> !ggemm.tile<64x64xbf16>
  return
}

// -----

func.func @load_tile_indices(%x: memref<?x256xbf16>, %i: index) {
  // expected-error @+1 {{'ggemm.load_tile' op expects 2 indices (one per dimension of source), got 3}}
  %t = ggemm.load_tile %x[%i, %i, %i] : memref<?x256xbf16> -> !ggemm.tile<64x64xbf16>
  return
}

// -----

func.func @load_tile_element(%x: memref<?x256xbf16>, %i: index) {
  // expected-error @+1 {{'ggemm.load_tile' op expects the tile's element type 'f16' to be source's, 'bf16'}}
  %t = ggemm.load_tile %x[%i, %i] : memref<?x256xbf16> -> !ggemm.tile<64x64xf16>
  return
}

// -----

func.func @load_tile_fp8_mn_major(%w: memref<4x256x128xf8E4M3FN>, %i: index) {
  // expected-error @+1 {{'ggemm.load_tile' op expects a k_major 'f8E4M3FN' tile (wgmma reads FP8 and INT8 operands K-major only), got mn_major}}
  %t = ggemm.load_tile %w[%i, %i, %i]
      : memref<4x256x128xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN, mn_major>
  return
}

// -----

func.func @load_tile_tma(%x: memref<?x100xbf16>, %i: index) {
  // expected-error @+1 {{'ggemm.load_tile' op expects dimension 0 of source to have a stride that is a multiple of 16 bytes (TMA), got 200 bytes}}
  %t = ggemm.load_tile %x[%i, %i] : memref<?x100xbf16> -> !ggemm.tile<64x64xbf16>
  return
}

//===----------------------------------------------------------------------===//
// ggemm.mma, ggemm.store_tile
//===----------------------------------------------------------------------===//

// -----

func.func @mma_rows(%a: !ggemm.tile<64x64xbf16>, %b: !ggemm.tile<128x64xbf16>,
                    %acc: !ggemm.accumulator<128x128xf32>) {
  // expected-error @+1 {{'ggemm.mma' op expects a's rows (64) to be the accumulator's rows (128)}}
  %r = ggemm.mma %a, %b, %acc : !ggemm.tile<64x64xbf16>, !ggemm.tile<128x64xbf16>
      -> !ggemm.accumulator<128x128xf32>
  return
}

// -----

func.func @mma_cols(%a: !ggemm.tile<128x64xbf16>, %b: !ggemm.tile<256x64xbf16>,
                    %acc: !ggemm.accumulator<128x128xf32>) {
  // expected-error @+1 {{'ggemm.mma' op expects b's rows (256) to be the accumulator's columns (128)}}
  %r = ggemm.mma %a, %b, %acc : !ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>
      -> !ggemm.accumulator<128x128xf32>
  return
}

// -----

func.func @mma_k(%a: !ggemm.tile<128x64xbf16>, %b: !ggemm.tile<128x32xbf16>,
                 %acc: !ggemm.accumulator<128x128xf32>) {
  // expected-error @+1 {{'ggemm.mma' op expects a and b over the same K block, got 64 and 32}}
  %r = ggemm.mma %a, %b, %acc : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x32xbf16>
      -> !ggemm.accumulator<128x128xf32>
  return
}

// -----

func.func @mma_types(%a: !ggemm.tile<128x64xbf16>, %b: !ggemm.tile<128x64xf16>,
                     %acc: !ggemm.accumulator<128x128xf32>) {
  // expected-error @+1 {{'ggemm.mma' op expects x and w to be both bf16, both f16, both FP8 (f8E4M3FN/f8E5M2) or both i8, got 'bf16' and 'f16'}}
  %r = ggemm.mma %a, %b, %acc : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xf16>
      -> !ggemm.accumulator<128x128xf32>
  return
}

// -----

func.func @mma_fp8_mn_major(%a: !ggemm.tile<128x128xf8E4M3FN>,
                            %b: !ggemm.tile<128x128xf8E4M3FN, mn_major>,
                            %acc: !ggemm.accumulator<128x128xf32>) {
  // expected-error @+1 {{'ggemm.mma' op expects k_major 'f8E4M3FN' tiles (wgmma reads FP8 and INT8 operands K-major only)}}
  %r = ggemm.mma %a, %b, %acc
      : !ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN, mn_major>
      -> !ggemm.accumulator<128x128xf32>
  return
}

// -----

func.func @mma_int8_f32_accumulator(%a: !ggemm.tile<128x128xi8>,
                                    %b: !ggemm.tile<128x128xi8>,
                                    %acc: !ggemm.accumulator<128x128xf32>) {
  // expected-error @+1 {{'ggemm.mma' op expects an 'i32' accumulator for 'i8' tiles, got 'f32'}}
  %r = ggemm.mma %a, %b, %acc
      : !ggemm.tile<128x128xi8>, !ggemm.tile<128x128xi8>
      -> !ggemm.accumulator<128x128xf32>
  return
}

// -----

func.func @mma_bf16_i32_accumulator(%a: !ggemm.tile<128x64xbf16>,
                                    %b: !ggemm.tile<128x64xbf16>,
                                    %acc: !ggemm.accumulator<128x128xi32>) {
  // expected-error @+1 {{'ggemm.mma' op expects an 'f32' accumulator for 'bf16' tiles, got 'i32'}}
  %r = ggemm.mma %a, %b, %acc
      : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>
      -> !ggemm.accumulator<128x128xi32>
  return
}

// -----

func.func @mma_int8_mn_major(%a: !ggemm.tile<128x128xi8>,
                             %b: !ggemm.tile<128x128xi8, mn_major>,
                             %acc: !ggemm.accumulator<128x128xi32>) {
  // expected-error @+1 {{'ggemm.mma' op expects k_major 'i8' tiles (wgmma reads FP8 and INT8 operands K-major only)}}
  %r = ggemm.mma %a, %b, %acc
      : !ggemm.tile<128x128xi8>, !ggemm.tile<128x128xi8, mn_major>
      -> !ggemm.accumulator<128x128xi32>
  return
}

// -----

func.func @store_tile_i32_without_scales(%acc: !ggemm.accumulator<128x128xi32>,
                                         %y: memref<?x128xbf16>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects x_scale and w_scale for an i32 accumulator (an INT8 product is dequantised by its store)}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i)
      : !ggemm.accumulator<128x128xi32>, memref<?x128xbf16>
  return
}

// -----

func.func @promote_i32(%p: !ggemm.accumulator<128x128xi32>,
                       %acc: !ggemm.accumulator<128x128xi32>,
                       %b: !ggemm.scales<1>) {
  // expected-error @+1 {{'ggemm.promote' op expects an f32 accumulator (block scales promote FP8 products), got 'i32'}}
  %r = ggemm.promote %p into %acc b_scales(%b : !ggemm.scales<1>) : !ggemm.accumulator<128x128xi32>
  return
}

// -----

func.func @store_tile_e4m3_without_scale(%acc: !ggemm.accumulator<128x128xf32>,
                                         %y: memref<?x128xf8E4M3FN>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects `y_scale` with an e4m3 y (its 1x128 scales)}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i)
      : !ggemm.accumulator<128x128xf32>, memref<?x128xf8E4M3FN>
  return
}

// -----

func.func @store_tile_e4m3_transposed(%acc: !ggemm.accumulator<128x128xf32>,
                                      %y: memref<?x128xf8E4M3FN>,
                                      %ys: memref<?x1xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects an e4m3 store without `transposed`, `scatter`, accumulate or atomic (each row's 128-column block is quantised as the tile computes it)}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i) transposed
      y_scale(%ys : memref<?x1xf32>)
      : !ggemm.accumulator<128x128xf32>, memref<?x128xf8E4M3FN>
  return
}

// -----

func.func @store_tile_e4m3_partial_block(%acc: !ggemm.accumulator<128x64xf32>,
                                         %y: memref<?x128xf8E4M3FN>,
                                         %ys: memref<?x1xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects the tile's output columns (64) to be whole 128-column blocks of y}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i)
      y_scale(%ys : memref<?x1xf32>)
      : !ggemm.accumulator<128x64xf32>, memref<?x128xf8E4M3FN>
  return
}

// -----

func.func @store_tile_e4m3_scale_shape(%acc: !ggemm.accumulator<128x128xf32>,
                                       %y: memref<?x300xf8E4M3FN>,
                                       %ys: memref<?x2xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects y_scale of [?, 3] (one scale per row and 128 columns), got [?, 2]}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i)
      y_scale(%ys : memref<?x2xf32>)
      : !ggemm.accumulator<128x128xf32>, memref<?x300xf8E4M3FN>
  return
}

// -----

func.func @store_tile_y_scale_for_bf16(%acc: !ggemm.accumulator<128x128xf32>,
                                       %y: memref<?x128xbf16>,
                                       %ys: memref<?x1xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects `y_scale` only with an e4m3 y}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i)
      y_scale(%ys : memref<?x1xf32>)
      : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  return
}

// -----

func.func @accumulator_i16(%acc: !ggemm.accumulator<128x128xi16>) {
  // expected-error @-1 {{expects an f32 or (INT8 products) i32 accumulator, got 'i16'}}
  return
}

// -----

func.func @mma_pending(%a: !ggemm.tile<128x64xbf16>, %b: !ggemm.tile<128x64xbf16>,
                       %acc: !ggemm.accumulator<128x128xf32>) {
  // expected-error @+1 {{'ggemm.mma' op attribute 'pending' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 0 whose maximum value is 7}}
  %r = ggemm.mma %a, %b, %acc {pending = 8} : !ggemm.tile<128x64xbf16>,
      !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<128x128xf32>
  return
}

// -----

func.func @store_tile_weight_without_bias(%acc: !ggemm.accumulator<128x128xf32>,
                                          %y: memref<?x128xbf16>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects a `weight` index exactly when a bias is given (the bias row to read)}}
  "ggemm.store_tile"(%acc, %y, %i, %i, %i, %i)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0>}>
      : (!ggemm.accumulator<128x128xf32>, memref<?x128xbf16>, index, index, index, index) -> ()
  return
}

// -----

func.func @store_tile_bias(%acc: !ggemm.accumulator<128x128xf32>, %y: memref<?x256xbf16>,
                           %b: memref<4x128xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects bias rows of 256 columns, got 128}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i) bias(%b[%i] : memref<4x128xf32>)
      : !ggemm.accumulator<128x128xf32>, memref<?x256xbf16>
  return
}

// -----

func.func @store_tile_row_scale(%acc: !ggemm.accumulator<128x128xf32>,
                                %y: memref<100x256xbf16>, %rs: memref<128xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects one row_scale entry per row (100), got 128}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i) row_scale(%rs : memref<128xf32>)
      : !ggemm.accumulator<128x128xf32>, memref<100x256xbf16>
  return
}

// -----

func.func @store_tile_x_scale_rows(%acc: !ggemm.accumulator<128x128xf32>,
                                   %y: memref<100x128xbf16>, %xs: memref<128xf32>,
                                   %ws: memref<4xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects one x_scale entry per row (100) without an index (per-row scales), got 128}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i) x_scale(%xs : memref<128xf32>)
      w_scale(%ws[%i] : memref<4xf32>) : !ggemm.accumulator<128x128xf32>, memref<100x128xbf16>
  return
}

// -----

func.func @store_tile_w_scale_cols(%acc: !ggemm.accumulator<128x128xf32>,
                                   %y: memref<?x256xbf16>, %xs: memref<1xf32>,
                                   %ws: memref<4x128xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects per-channel w_scale rows of 256 columns, got 128}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i) x_scale(%xs[%i] : memref<1xf32>)
      w_scale(%ws[%i] : memref<4x128xf32>) : !ggemm.accumulator<128x128xf32>, memref<?x256xbf16>
  return
}

// -----

func.func @store_tile_w_scale_rank(%acc: !ggemm.accumulator<128x128xf32>,
                                   %y: memref<?x128xbf16>, %xs: memref<1xf32>,
                                   %ws: memref<4x1x128xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects w_scale of rank 1 (one per weight) or 2 (one per weight and output column), got rank 3}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i) x_scale(%xs[%i] : memref<1xf32>)
      w_scale(%ws[%i] : memref<4x1x128xf32>) : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  return
}

// -----

func.func @store_tile_x_scale_alone(%acc: !ggemm.accumulator<128x128xf32>,
                                    %y: memref<?x128xbf16>, %xs: memref<1xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects x_scale and w_scale together (the dequantisation of both FP8 operands), got only x_scale}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i) x_scale(%xs[%i] : memref<1xf32>)
      : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  return
}

// -----

func.func @store_tile_w_scale_index(%acc: !ggemm.accumulator<128x128xf32>,
                                    %y: memref<?x128xbf16>, %xs: memref<1xf32>,
                                    %ws: memref<4xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects a w_scale index exactly when w_scale is given (the weight matrix to read)}}
  "ggemm.store_tile"(%acc, %y, %i, %i, %i, %xs, %i, %ws)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0>}>
      : (!ggemm.accumulator<128x128xf32>, memref<?x128xbf16>, index, index, index, memref<1xf32>, index, memref<4xf32>) -> ()
  return
}

// -----

func.func @store_tile_scales_gated(%acc: !ggemm.accumulator<128x256xf32>,
                                   %y: memref<?x128xbf16>, %xs: memref<1xf32>,
                                   %ws: memref<4xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects no x_scale and w_scale with a gated (swiglu) epilogue}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i) x_scale(%xs[%i] : memref<1xf32>)
      w_scale(%ws[%i] : memref<4xf32>) {epilogue = #ggemm.epilogue<activation = swiglu>}
      : !ggemm.accumulator<128x256xf32>, memref<?x128xbf16>
  return
}

// -----

func.func @store_tile_staging_cols(%acc: !ggemm.accumulator<128x128xf32>,
                                   %y: memref<?x256xbf16>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects staging boxes of one 128-byte swizzle row of y (64 columns of 'bf16'), got cols = 32}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i)
      {staging = #ggemm.store_staging<rows = 64, cols = 32, buffers = 2>}
      : !ggemm.accumulator<128x128xf32>, memref<?x256xbf16>
  return
}

// -----

func.func @store_tile_staging_whole_boxes(%acc: !ggemm.accumulator<64x80xf32>,
                                          %y: memref<?x256xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects the accumulator (64x80) to be whole staging boxes of 64x32}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i)
      {staging = #ggemm.store_staging<rows = 64, cols = 32, buffers = 1>}
      : !ggemm.accumulator<64x80xf32>, memref<?x256xf32>
  return
}

// -----

func.func @store_tile_staging_transposed(%acc: !ggemm.accumulator<128x64xf32>,
                                         %y: memref<?x256xbf16>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects no `staging` on a transposed store (its fragments are columns of y)}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i) transposed
      {staging = #ggemm.store_staging<rows = 64, cols = 64, buffers = 2>}
      : !ggemm.accumulator<128x64xf32>, memref<?x256xbf16>
  return
}

//===----------------------------------------------------------------------===//
// ggemm.launch, ggemm.warp_specialize, ring ops
//===----------------------------------------------------------------------===//

// -----

func.func @launch_schedule(%s: !ggemm.schedule) {
  // expected-error @+1 {{'ggemm.launch' op expects its schedule to be the result of a ggemm.tile_schedule}}
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
  }
  return
}

// -----

func.func @launch_args(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  // expected-error @+1 {{'ggemm.launch' op expects the body to take 2 index arguments (cta, num_ctas), got 1 arguments}}
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index):
  }
  return
}

// -----

func.func @launch_dependent_without_wait(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  // expected-error @+1 {{'ggemm.launch' op expects one ggemm.wait_dependency in the body of a dependent_launch, got 0}}
  ggemm.launch %s grid(persistent) dependent_launch {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %s
  }
  return
}

// -----

func.func @launch_dependent_two_waits(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  // expected-error @+1 {{'ggemm.launch' op expects one ggemm.wait_dependency in the body of a dependent_launch, got 2}}
  ggemm.launch %s grid(persistent) dependent_launch {
  ^bb0(%cta: index, %num_ctas: index):
    ggemm.wait_dependency
    ggemm.wait_dependency
  }
  return
}

// -----

func.func @launch_tile_count_before_wait(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) dependent_launch {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.tile_count' op expects to come after the launch's ggemm.wait_dependency: before it only the ring, ggemm.prefetch_tile and pure arithmetic may run (the previous kernel may still be writing memory)}}
    %total = ggemm.tile_count %s
    ggemm.wait_dependency
  }
  return
}

// -----

func.func @launch_map_tile_before_wait(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) dependent_launch {
  ^bb0(%cta: index, %num_ctas: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %t = %c0 to %c1 step %c1 {
      // expected-error @+1 {{'ggemm.map_tile' op expects to come after the launch's ggemm.wait_dependency}}
      %g, %row, %row_end, %col = ggemm.map_tile %s[%t]
    }
    ggemm.wait_dependency
  }
  return
}

// -----

func.func @wait_without_dependent_launch(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.wait_dependency' op expects its ggemm.launch to be dependent_launch (without it nothing runs before the previous kernel has finished)}}
    ggemm.wait_dependency
  }
  return
}

// -----

func.func @wait_outside_launch() {
  // expected-error @+1 {{'ggemm.wait_dependency' op expects parent op 'ggemm.launch'}}
  ggemm.wait_dependency
  return
}

// -----

func.func @prefetch_indices(%w: memref<1x2112x7168xf8E4M3FN>, %i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.prefetch_tile' op expects 3 indices (one per dimension of source), got 2}}
    ggemm.prefetch_tile %w[%i, %i] : memref<1x2112x7168xf8E4M3FN>, !ggemm.tile<64x128xf8E4M3FN>
  }
  return
}

// -----

func.func @prefetch_element_type(%w: memref<1x2112x7168xf8E4M3FN>, %i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.prefetch_tile' op expects the tile's element type 'bf16' to be source's, 'f8E4M3FN'}}
    ggemm.prefetch_tile %w[%i, %i, %i] : memref<1x2112x7168xf8E4M3FN>, !ggemm.tile<64x64xbf16>
  }
  return
}

// -----

func.func @prefetch_outside_launch(%w: memref<1x2112x7168xf8E4M3FN>, %i: index) {
  // expected-error @+1 {{'ggemm.prefetch_tile' op expects to be in the body of a ggemm.launch}}
  ggemm.prefetch_tile %w[%i, %i, %i] : memref<1x2112x7168xf8E4M3FN>, !ggemm.tile<64x128xf8E4M3FN>
  return
}

// -----

func.func @launch_grid(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  // expected-error @+1 {{expected a grid policy (persistent or tiles), got 'cluster'}}
  ggemm.launch %s grid(cluster) {
  ^bb0(%cta: index, %num_ctas: index):
  }
  return
}

// -----

func.func @warp_specialize_outside_launch() {
  // expected-error @+1 {{'ggemm.warp_specialize' op expects parent op 'ggemm.launch'}}
  ggemm.warp_specialize producer registers(40) {
  } consumers(2) registers(232) {
  }
  return
}

// -----

func.func @warp_specialize_registers(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.warp_specialize' op expects the consumer registers to be a multiple of 8 (setmaxnreg), got 230}}
    ggemm.warp_specialize producer registers(40) {
    } consumers(2) registers(230) {
    }
  }
  return
}

// -----

func.func @warp_specialize_launch_registers(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // 384 threads get 168 registers each at launch: 64512, not 65536.
    // expected-error @+1 {{'ggemm.warp_specialize' op expects the roles' registers to fit the 64512 a CTA of 3 warpgroups is launched with: 128 x (32 + 2 x 240) = 65536}}
    ggemm.warp_specialize producer registers(32) {
    } consumers(2) registers(240) {
    }
  }
  return
}

// -----

func.func @warp_specialize_register_file(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.warp_specialize' op expects the roles' registers to fit the 65536 a CTA of 4 warpgroups is launched with: 128 x (40 + 3 x 232) = 94208}}
    ggemm.warp_specialize producer registers(40) {
    } consumers(3) registers(232) {
    }
  }
  return
}

// -----

func.func @pingpong_three_warpgroups(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64, pingpong = true>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.warp_specialize' op expects 2 consumer warpgroups with pingpong, got 3}}
    ggemm.warp_specialize producer registers(24) {
    } consumers(3) pingpong registers(160) {
    }
  }
  return
}

// -----

func.func @turn_in_cooperative_consumers(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    ggemm.warp_specialize producer registers(40) {
    } consumers(2) registers(232) {
      // expected-error @+1 {{'ggemm.turn_wait' op expects a pingpong ggemm.warp_specialize (the cooperative consumers share every tile)}}
      ggemm.turn_wait
    }
  }
  return
}

// -----

func.func @consumer_warpgroup_in_producer(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64, pingpong = true>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    ggemm.warp_specialize producer registers(40) {
      // expected-error @+1 {{'ggemm.consumer_warpgroup' op expects to be in the consumers region of a ggemm.warp_specialize}}
      %wg = ggemm.consumer_warpgroup
    } consumers(2) pingpong registers(232) {
    }
  }
  return
}

// -----

func.func @turn_pass_outside_roles(%i: index) {
  // expected-error @+1 {{'ggemm.turn_pass' op expects to be in the consumers region of a ggemm.warp_specialize}}
  ggemm.turn_pass
  return
}

// -----

func.func @warp_specialize_register_range(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.warp_specialize' op attribute 'producer_registers' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 24 whose maximum value is 256}}
    ggemm.warp_specialize producer registers(16) {
    } consumers(1) registers(232) {
    }
  }
  return
}

// -----

func.func @create_ring_multicast_without_cluster(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.create_ring' op expects no multicast entries in a launch without clusters (cluster_m = 1)}}
    %r = ggemm.create_ring release_count(256) {multicast = array<i64: 1>}
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
  }
  return
}

// -----

func.func @create_ring_multicast_entry(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, cluster_m = 2>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.create_ring' op expects multicast entries to be distinct tile entries of the ring (0 to 1), got 2}}
    %r = ggemm.create_ring release_count(16) {multicast = array<i64: 2>}
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
  }
  return
}

// -----

func.func @create_ring_multicast_rows(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 8, block_k = 64, cluster_m = 4>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.create_ring' op expects multicast tile 1 ('!ggemm.tile<8x64xbf16>') to split into 4 row slices of a multiple of 8 rows (whole 1024-byte swizzle atoms)}}
    %r = ggemm.create_ring release_count(32) {multicast = array<i64: 1>}
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<8x64xbf16>>
  }
  return
}

// -----

func.func @map_tile_needs_rank(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, cluster_m = 2>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.map_tile' op expects a cluster_rank: the schedule's tiles are shared by cluster_m = 2 CTAs}}
    %g, %row, %end, %col = ggemm.map_tile %s[%cta]
  }
  return
}

// -----

func.func @map_tile_rank_without_cluster(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.map_tile' op expects no cluster_rank: the schedule's config has cluster_m = 1}}
    %g, %row, %end, %col = ggemm.map_tile %s[%cta] cluster_rank(%cta)
  }
  return
}

// -----

func.func @create_ring_buffers(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.create_ring' op expects a layout with one buffer per tile type (2), got 1}}
    %r = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0], stage_bytes = [16384],
                                  barrier_offset = 16384, smem_bytes = 16400>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
  }
  return
}

// -----

func.func @create_ring_slot_size(%i: index) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.create_ring' op expects stage slots of at least 16384 bytes for tile 0 ('!ggemm.tile<128x64xbf16>'), got 8192}}
    %r = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0], stage_bytes = [8192],
                                  barrier_offset = 8192, smem_bytes = 8208>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>>
  }
  return
}

// -----

func.func @create_ring_tile_alignment(%n: index) {
  %s = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.create_ring' op expects 1024-byte aligned stage slots for tile 1 ('!ggemm.tile<128x64xbf16>', 128-byte swizzle), got 16384 bytes at offset 640}}
    %r = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 640], stage_bytes = [640, 16384],
                                  barrier_offset = 17024, smem_bytes = 17040>)
        : !ggemm.ring<!ggemm.scales<128>, !ggemm.tile<128x64xbf16>>
  }
  return
}

// -----

func.func @create_ring_scales_slot(%n: index) {
  %s = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // 128 scales need 128 + 4 of slack: 528 bytes.
    // expected-error @+1 {{'ggemm.create_ring' op expects stage slots of at least 528 bytes for tile 0 ('!ggemm.scales<128>'), got 512}}
    %r = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0], stage_bytes = [512],
                                  barrier_offset = 512, smem_bytes = 528>)
        : !ggemm.ring<!ggemm.scales<128>>
  }
  return
}

// -----

// expected-error @+1 {{expects a positive number of scales, got 0}}
func.func private @no_scales(!ggemm.scales<0>)

// -----

func.func @load_scales_rank(%s: memref<?xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.load_scales' op expects source to have a row and a K-block dimension (rank 2 or more), got rank 1}}
  %a = ggemm.load_scales %s[%i] : memref<?xf32> -> !ggemm.scales<128>
  return
}

// -----

func.func @load_scales_indices(%s: memref<?x4xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.load_scales' op expects 2 indices (one per dimension of source), got 3}}
  %a = ggemm.load_scales %s[%i, %i, %i] : memref<?x4xf32> -> !ggemm.scales<128>
  return
}

// -----

func.func @load_scales_type(%s: memref<?x4xbf16>, %i: index) {
  // expected-error @+1 {{'ggemm.load_scales' op operand 'source' must be memref of 32-bit float values, but got 'memref<?x4xbf16>'}}
  %a = ggemm.load_scales %s[%i, %i] : memref<?x4xbf16> -> !ggemm.scales<128>
  return
}

// -----

func.func @promote_without_scales(%p: !ggemm.accumulator<128x128xf32>,
                                  %acc: !ggemm.accumulator<128x128xf32>) {
  // expected-error @+1 {{'ggemm.promote' op expects a_scales, b_scales or both (without scales the partial is added by ggemm.mma)}}
  %r = ggemm.promote %p into %acc : !ggemm.accumulator<128x128xf32>
  return
}

// -----

func.func @promote_scale_count(%p: !ggemm.accumulator<128x128xf32>,
                               %acc: !ggemm.accumulator<128x128xf32>,
                               %b: !ggemm.scales<3>) {
  // expected-error @+1 {{'ggemm.promote' op expects the number of b_scales (3) to divide the accumulator's columns (128)}}
  %r = ggemm.promote %p into %acc b_scales(%b : !ggemm.scales<3>) : !ggemm.accumulator<128x128xf32>
  return
}

// -----

func.func @promote_offset_without_block(%p: !ggemm.accumulator<128x192xf32>,
                                        %acc: !ggemm.accumulator<128x192xf32>,
                                        %b: !ggemm.scales<2>, %off: index) {
  // expected-error @+1 {{'ggemm.promote' op expects b_offset and b_block together (the tile's place in its first weight scale block, and the block's columns)}}
  %r = ggemm.promote %p into %acc b_scales(%b : !ggemm.scales<2>) b_offset(%off) : !ggemm.accumulator<128x192xf32>
  return
}

// -----

func.func @promote_offset_without_scales(%p: !ggemm.accumulator<128x192xf32>,
                                         %acc: !ggemm.accumulator<128x192xf32>,
                                         %a: !ggemm.scales<128>, %off: index) {
  // expected-error @+1 {{'ggemm.promote' op expects b_scales with b_offset}}
  %r = ggemm.promote %p into %acc a_scales(%a : !ggemm.scales<128>) b_offset(%off) {b_block = 128 : i64} : !ggemm.accumulator<128x192xf32>
  return
}

// -----

func.func @promote_offset_block_not_8(%p: !ggemm.accumulator<128x192xf32>,
                                       %acc: !ggemm.accumulator<128x192xf32>,
                                       %b: !ggemm.scales<3>, %off: index) {
  // expected-error @+1 {{'ggemm.promote' op expects b_block (100) and the accumulator's columns (192) to be multiples of 8 (a tile's offset into a block then moves by whole 8-column wgmma fragments)}}
  %r = ggemm.promote %p into %acc b_scales(%b : !ggemm.scales<3>) b_offset(%off) {b_block = 100 : i64} : !ggemm.accumulator<128x192xf32>
  return
}

// -----

func.func @promote_offset_scale_count(%p: !ggemm.accumulator<128x192xf32>,
                                      %acc: !ggemm.accumulator<128x192xf32>,
                                      %b: !ggemm.scales<1>, %off: index) {
  // expected-error @+1 {{'ggemm.promote' op expects 2 b_scales (the most blocks of 128 columns that a tile of 192 columns covers), got 1}}
  %r = ggemm.promote %p into %acc b_scales(%b : !ggemm.scales<1>) b_offset(%off) {b_block = 128 : i64} : !ggemm.accumulator<128x192xf32>
  return
}

// -----

func.func @create_ring_outside_launch() {
  // expected-error @+1 {{'ggemm.create_ring' op expects parent op 'ggemm.launch'}}
  %r = ggemm.create_ring release_count(128) : !ggemm.ring<!ggemm.tile<64x64xbf16>>
  return
}

// -----

func.func @ring_put_types(%r: !ggemm.ring<!ggemm.tile<64x64xbf16>>,
                          %t: !ggemm.tile<64x64xf16>, %i: index) {
  // expected-error @+1 {{'ggemm.ring_put' op expects tiles of the ring's types (!ggemm.tile<64x64xbf16>), got (!ggemm.tile<64x64xf16>)}}
  "ggemm.ring_put"(%r, %i, %t)
      : (!ggemm.ring<!ggemm.tile<64x64xbf16>>, index, !ggemm.tile<64x64xf16>) -> ()
  return
}

// -----

func.func @ring_get_types(%r: !ggemm.ring<!ggemm.tile<64x64xbf16>>, %i: index) {
  // expected-error @+1 {{'ggemm.ring_get' op expects results of the ring's types (!ggemm.tile<64x64xbf16>), got (!ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16>)}}
  %a, %b = "ggemm.ring_get"(%r, %i)
      : (!ggemm.ring<!ggemm.tile<64x64xbf16>>, index)
      -> (!ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16>)
  return
}

// -----

// The consumers find each scales entry in its slot by its offset: one per
// scales entry, none for a ring of tiles only.
func.func @ring_get_scale_offsets(
    %r: !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>, !ggemm.scales<1>>,
    %i: index) {
  // expected-error @+1 {{'ggemm.ring_get' op expects one scale offset per !ggemm.scales entry of the ring (2), got 1}}
  %t, %a, %w = ggemm.ring_get %r[%i] scale_offsets(%i)
      : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>, !ggemm.scales<1>>
  return
}

// -----

func.func @ring_get_scale_offsets_missing(
    %r: !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>>, %i: index) {
  // expected-error @+1 {{'ggemm.ring_get' op expects one scale offset per !ggemm.scales entry of the ring (1), got 0}}
  %t, %a = ggemm.ring_get %r[%i]
      : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>>
  return
}

// -----

func.func @ring_get_scale_offsets_no_scales(%r: !ggemm.ring<!ggemm.tile<64x64xbf16>>,
                                            %i: index) {
  // expected-error @+1 {{'ggemm.ring_get' op expects one scale offset per !ggemm.scales entry of the ring (0), got 1}}
  %t = ggemm.ring_get %r[%i] scale_offsets(%i) : !ggemm.ring<!ggemm.tile<64x64xbf16>>
  return
}

// -----

func.func @ring_get_not_a_ring(%i: index) {
  // expected-error @+1 {{expected a !ggemm.ring type, got 'index'}}
  %a = ggemm.ring_get %i[%i] : index
  return
}

// -----

// The K-ragged mask writes the tiles' ring slots: only ring_get results have
// one.
func.func @zero_k_tail_not_a_slot(%t: !ggemm.tile<64x64xbf16, mn_major>, %v: index) {
  // expected-error @+1 {{'ggemm.zero_k_tail' op expects tile 0 to be a result of a ggemm.ring_get (it is zeroed in its ring slot), got a block argument}}
  %m = ggemm.zero_k_tail %t valid(%v) : !ggemm.tile<64x64xbf16, mn_major>
  return
}

// -----

func.func @zero_k_tail_two_k_blocks(%r: !ggemm.ring<!ggemm.tile<64x64xbf16, mn_major>, !ggemm.tile<64x32xbf16, mn_major>>,
                                    %i: index) {
  %a, %b = ggemm.ring_get %r[%i]
      : !ggemm.ring<!ggemm.tile<64x64xbf16, mn_major>, !ggemm.tile<64x32xbf16, mn_major>>
  // expected-error @+1 {{'ggemm.zero_k_tail' op expects tiles of one K block (64), got '!ggemm.tile<64x32xbf16, mn_major>' as tile 1}}
  %m:2 = ggemm.zero_k_tail %a, %b valid(%i)
      : !ggemm.tile<64x64xbf16, mn_major>, !ggemm.tile<64x32xbf16, mn_major>
  return
}

// -----

func.func @zero_k_tail_from_mn_major(%r: !ggemm.ring<!ggemm.tile<64x64xbf16, mn_major>>,
                                     %i: index) {
  %a = ggemm.ring_get %r[%i] : !ggemm.ring<!ggemm.tile<64x64xbf16, mn_major>>
  // expected-error @+1 {{'ggemm.zero_k_tail' op expects k_major tiles with `from`, got '!ggemm.tile<64x64xbf16, mn_major>' as tile 0}}
  %m = ggemm.zero_k_tail %a valid(%i) from(%i) : !ggemm.tile<64x64xbf16, mn_major>
  return
}

// -----

func.func @load_tile_k_begin_alone(%x: memref<256x?xbf16>, %i: index) {
  // expected-error @+1 {{'ggemm.load_tile' op expects k_begin only with k_end}}
  %t = "ggemm.load_tile"(%x, %i, %i, %i)
      <{operandSegmentSizes = array<i32: 1, 2, 0, 0, 0, 0, 1>}>
      : (memref<256x?xbf16>, index, index, index) -> !ggemm.tile<128x64xbf16>
  return
}

// -----

func.func @zero_k_tail_no_tiles(%v: index) {
  // expected-error @+1 {{'ggemm.zero_k_tail' op expects at least one tile}}
  "ggemm.zero_k_tail"(%v) <{operandSegmentSizes = array<i32: 0, 1, 0>}>
      : (index) -> ()
  return
}

// -----

func.func @gather_mn_major(%w: memref<4x256x512xbf16>, %ri: memref<?xi32>, %i: index) {
  // expected-error @+1 {{'ggemm.load_tile' op expects a gathered tile to be a k_major tile of a matrix (its rows are gathered), got a batch source}}
  %t = ggemm.load_tile %w[%i, %i, %i] gather(%ri : memref<?xi32>, %i)
      : memref<4x256x512xbf16> -> !ggemm.tile<128x64xbf16>
  return
}

// -----

func.func @gather_without_end(%x: memref<?x256xbf16>, %ri: memref<?xi32>, %i: index) {
  // expected-error @+1 {{'ggemm.load_tile' op expects gather indices and their end together}}
  %t = "ggemm.load_tile"(%x, %i, %i, %ri)
      <{operandSegmentSizes = array<i32: 1, 2, 0, 1, 0, 0, 0>}>
      : (memref<?x256xbf16>, index, index, memref<?xi32>) -> !ggemm.tile<128x64xbf16>
  return
}

// -----

func.func @gated_transposed(%acc: !ggemm.accumulator<128x48xf32>,
                            %y: memref<?x64xbf16>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects a gated (swiglu) store of an untransposed accumulator with an even number of columns (gate half, up half)}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i) transposed
      {epilogue = #ggemm.epilogue<activation = swiglu>}
      : !ggemm.accumulator<128x48xf32>, memref<?x64xbf16>
  return
}

// -----

func.func @gated_interleaved_width(%acc: !ggemm.accumulator<128x256xf32>,
                                   %y: memref<?x128xbf16>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects an accumulator of 2 x gate_up_block (128) columns for a gated store of interleaved gate/up blocks, got 256}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i)
      {epilogue = #ggemm.epilogue<activation = swiglu, gate_up_block = 64>}
      : !ggemm.accumulator<128x256xf32>, memref<?x128xbf16>
  return
}

// -----

func.func @atomic_store_without_scatter(%acc: !ggemm.accumulator<128x128xf32>,
                                        %y: memref<?x128xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects an atomic epilogue only with `scatter` and accumulate = true}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i)
      {epilogue = #ggemm.epilogue<accumulate = true, atomic = true>}
      : !ggemm.accumulator<128x128xf32>, memref<?x128xf32>
  return
}

// -----

func.func @staged_scatter(%acc: !ggemm.accumulator<128x128xf32>,
                          %y: memref<?x128xbf16>, %si: memref<?xi32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects `row_stores = true` in the staging of a scattered store (its rows are not a box of y), got #ggemm.store_staging<rows = 64, cols = 64, buffers = 2>}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i) scatter(%si : memref<?xi32>)
      {staging = #ggemm.store_staging<rows = 64, cols = 64, buffers = 2>}
      : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  return
}

// -----

func.func @row_stores_without_scatter(%acc: !ggemm.accumulator<128x128xf32>,
                                      %y: memref<?x128xbf16>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects `row_stores` staging only on a scattered store (with `scatter`)}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i)
      {staging = #ggemm.store_staging<rows = 64, cols = 64, buffers = 2, row_stores = true>}
      : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  return
}

// -----

func.func @staged_scatter_accumulate(%acc: !ggemm.accumulator<128x128xf32>,
                                     %y: memref<?x128xf32>, %si: memref<?xi32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects no `staging` on a scattered store that accumulates into y (its adds are per-element)}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i) scatter(%si : memref<?xi32>)
      {epilogue = #ggemm.epilogue<accumulate = true>,
       staging = #ggemm.store_staging<rows = 64, cols = 32, buffers = 2, row_stores = true>}
      : !ggemm.accumulator<128x128xf32>, memref<?x128xf32>
  return
}

// -----

func.func @gated_bias_columns(%acc: !ggemm.accumulator<128x128xf32>,
                              %y: memref<?x64xbf16>, %b: memref<4x64xf32>, %i: index) {
  // expected-error @+1 {{'ggemm.store_tile' op expects bias rows of 128 columns (gate, then up), got 64}}
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i) bias(%b[%i] : memref<4x64xf32>)
      {epilogue = #ggemm.epilogue<activation = swiglu>}
      : !ggemm.accumulator<128x128xf32>, memref<?x64xbf16>
  return
}

// -----

func.func @split_odd_rows(%w: memref<4x256x512xbf16>, %i: index) {
  // expected-error @+1 {{'ggemm.load_tile' op expects an even number of tile rows to split, got 7}}
  %t = ggemm.load_tile %w[%i, %i, %i] split(%i)
      : memref<4x256x512xbf16> -> !ggemm.tile<7x64xbf16>
  return
}

// -----

func.func @gather_and_split(%x: memref<?x256xbf16>, %ri: memref<?xi32>, %i: index) {
  // expected-error @+1 {{'ggemm.load_tile' op expects no k_end or split with gather}}
  %t = ggemm.load_tile %x[%i, %i] gather(%ri : memref<?xi32>, %i) split(%i)
      : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
  return
}

// -----

func.func @split_k_sum_outside_launch(%acc: !ggemm.accumulator<64x8xf32>, %i: index,
                                      %more: i1) {
  // expected-error @+1 {{'ggemm.split_k_sum' op expects to be in the body of a ggemm.launch}}
  %sum = ggemm.split_k_sum %acc rank(%i) round(%i) more(%more) : !ggemm.accumulator<64x8xf32>
  return
}

// -----

func.func @split_k_sum_without_split(%acc: !ggemm.accumulator<64x8xf32>, %i: index,
                                     %more: i1) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 8, block_n = 64, block_k = 128,
                                consumer_warpgroups = 1, swap_ab = true>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.split_k_sum' op expects its launch's config to have split_k > 1 (the CTAs whose partial sums it adds), got split_k = 1}}
    %sum = ggemm.split_k_sum %acc rank(%i) round(%i) more(%more) : !ggemm.accumulator<64x8xf32>
  }
  return
}

// -----

// Rank 0's buffer for 7 partials of 64x8 f32 (2 KB each) and two
// mbarriers is 14352 bytes; the layout gives 2064.
func.func @split_k_sum_buffer(%acc: !ggemm.accumulator<64x8xf32>, %i: index, %more: i1) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 8, block_n = 64, block_k = 128,
                                consumer_warpgroups = 1, swap_ab = true, split_k = 8>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(128)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 1024], stage_bytes = [1024, 8192],
                                  barrier_offset = 9216, smem_bytes = 11296,
                                  split_k_offset = 9232, split_k_bytes = 2064>)
        : !ggemm.ring<!ggemm.tile<8x128xf8E4M3FN>, !ggemm.tile<64x128xf8E4M3FN>>
    // expected-error @+1 {{'ggemm.split_k_sum' op expects the ring layout's split-K buffer to hold 7 partial accumulators ('!ggemm.accumulator<64x8xf32>') and two mbarriers, 14352 bytes, got split_k_bytes = 2064}}
    %sum = ggemm.split_k_sum %acc rank(%i) round(%i) more(%more) : !ggemm.accumulator<64x8xf32>
  }
  return
}

// -----

// Over the ring (split_k_barriers), the partials may be written only after
// the CTA's last tile: `more` must be a constant false.
func.func @split_k_sum_overlay_more(%acc: !ggemm.accumulator<64x64xf32>, %i: index, %more: i1) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 128, stages = 4,
                                consumer_warpgroups = 1, split_k = 2, split_k_tail = true>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(128)
        layout(#ggemm.ring_layout<stages = 4, offsets = [0, 32768], stage_bytes = [8192, 8192],
                                  barrier_offset = 65536, smem_bytes = 65632,
                                  split_k_offset = 0, split_k_bytes = 16384,
                                  split_k_barriers = 65600>)
        : !ggemm.ring<!ggemm.tile<64x128xf8E4M3FN>, !ggemm.tile<64x128xf8E4M3FN>>
    // expected-error @+1 {{'ggemm.split_k_sum' op expects `more` to be a constant false when the split-K buffer overlays the stage ring (split_k_barriers set): the ring is free only after the CTA's last tile}}
    %sum = ggemm.split_k_sum %acc rank(%i) round(%i) more(%more) : !ggemm.accumulator<64x64xf32>
  }
  return
}

// -----

// Over the ring the buffer holds the partials only (its mbarriers are at
// split_k_barriers): one 64x64 f32 partial is 16384 bytes.
func.func @split_k_sum_overlay_bytes(%acc: !ggemm.accumulator<64x64xf32>, %i: index, %tail: i1) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 128, stages = 4,
                                consumer_warpgroups = 1, split_k = 2, split_k_tail = true>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(128)
        layout(#ggemm.ring_layout<stages = 4, offsets = [0, 32768], stage_bytes = [8192, 8192],
                                  barrier_offset = 65536, smem_bytes = 65632,
                                  split_k_offset = 0, split_k_bytes = 8192,
                                  split_k_barriers = 65600>)
        : !ggemm.ring<!ggemm.tile<64x128xf8E4M3FN>, !ggemm.tile<64x128xf8E4M3FN>>
    %false = arith.constant false
    // expected-error @+1 {{'ggemm.split_k_sum' op expects the ring layout's split-K buffer to hold 1 partial accumulators ('!ggemm.accumulator<64x64xf32>'), 16384 bytes, got split_k_bytes = 8192}}
    %sum = ggemm.split_k_sum %acc rank(%i) round(%i) more(%false) active(%tail) : !ggemm.accumulator<64x64xf32>
  }
  return
}
