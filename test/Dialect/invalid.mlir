// Every diagnostic of the ggemm op verifiers (lib/Dialect/GGemm/IR/GGemmOps.cpp)
// and a few of the ODS type constraints.
// RUN: gemm-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// ODS type constraints
//===----------------------------------------------------------------------===//

func.func @ods_integer_activation(%x: memref<?x256xi16>, %w: memref<4x128x256xi16>,
                                  %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op operand 'x' must be 2D memref of bfloat16 type or 16-bit float or f8E4M3FN type or f8E5M2 type or 8-bit signless integer values, but got 'memref<?x256xi16>'}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xi16>, memref<4x128x256xi16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @ods_fp8_output(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                          %indptr: memref<5xi32>, %y: memref<?x128xf8E5M2>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op operand 'y' must be 2D memref of bfloat16 type or 16-bit float or 32-bit float or f8E4M3FN type values, but got 'memref<?x128xf8E5M2>'}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xf8E5M2>)
  return
}

// -----

func.func @ods_f32_indptr(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                          %indptr: memref<5xf32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op operand 'seg_indptr' must be 1D memref of 32-bit signless integer or 64-bit signless integer values, but got 'memref<5xf32>'}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xf32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @ods_i64_weight_indices(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                                  %indptr: memref<5xi32>, %idx: memref<4xi64>,
                                  %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op operand 'weight_indices' must be 1D memref of 32-bit signless integer values, but got 'memref<4xi64>'}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) weight_indices(%idx : memref<4xi64>)
      outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @ods_2d_masked_activation(%x: memref<64x256xbf16>, %w: memref<4x128x256xbf16>,
                                    %m: memref<4xi32>, %y: memref<4x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.masked_matmul' op operand 'x' must be 3D memref of bfloat16 type or 16-bit float or f8E4M3FN type or f8E5M2 type or 8-bit signless integer values, but got 'memref<64x256xbf16>'}}
  ggemm.masked_matmul ins(%x, %w : memref<64x256xbf16>, memref<4x128x256xbf16>)
      masked_m(%m : memref<4xi32>) outs(%y : memref<4x64x128xbf16>)
  return
}

// -----

func.func @ods_bf16_quantized(%x: memref<?x256xbf16>, %q: memref<?x256xbf16>,
                              %s: memref<?x2xf32>) {
  // expected-error @+1 {{'ggemm.quantize' op operand 'q' must be 2D/3D memref of f8E4M3FN type or f8E5M2 type values, but got 'memref<?x256xbf16>'}}
  ggemm.quantize ins(%x : memref<?x256xbf16>) outs(%q, %s : memref<?x256xbf16>, memref<?x2xf32>)
  return
}

//===----------------------------------------------------------------------===//
// Element types and shapes of the grouped matmuls
//===----------------------------------------------------------------------===//

// -----

func.func @mixed_16bit_types(%x: memref<?x256xbf16>, %w: memref<4x128x256xf16>,
                             %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects x and w to be both bf16, both f16, both FP8 (f8E4M3FN/f8E5M2) or both i8, got 'bf16' and 'f16'}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @fp8_times_bf16(%x: memref<4x64x256xf8E4M3FN>, %w: memref<4x128x256xbf16>,
                          %y: memref<4x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.batched_matmul' op expects x and w to be both bf16, both f16, both FP8 (f8E4M3FN/f8E5M2) or both i8, got 'f8E4M3FN' and 'bf16'}}
  ggemm.batched_matmul ins(%x, %w : memref<4x64x256xf8E4M3FN>, memref<4x128x256xbf16>)
      outs(%y : memref<4x64x128xbf16>)
  return
}

// -----

func.func @k_mismatch_nk(%x: memref<?x256xbf16>, %w: memref<4x128x512xbf16>,
                         %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects w's K (512) to match x's K (256) for weight_layout nk}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x512xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

// A [G, N, K] weight read with the kn layout.
func.func @k_mismatch_kn(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                         %indptr: memref<5xi32>, %y: memref<?x256xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects w's K (128) to match x's K (256) for weight_layout kn}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x256xbf16>)
      {weight_layout = #ggemm.weight_layout<kn>}
  return
}

// -----

func.func @empty_reduction(%x: memref<?x0xbf16>, %w: memref<4x128x0xbf16>,
                           %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects a non-empty reduction (K > 0)}}
  ggemm.segment_matmul ins(%x, %w : memref<?x0xbf16>, memref<4x128x0xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @output_n_mismatch(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                             %indptr: memref<5xi32>, %y: memref<?x64xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects y of shape [?, 128], got [?, 64]}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x64xbf16>)
  return
}

// -----

func.func @output_rows_mismatch(%x: memref<100x256xbf16>, %w: memref<4x128x256xbf16>,
                                %indptr: memref<5xi32>, %y: memref<99x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects y of shape [100, 128], got [99, 128]}}
  ggemm.segment_matmul ins(%x, %w : memref<100x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<99x128xbf16>)
  return
}

// -----

func.func @masked_output_groups(%x: memref<4x64x256xbf16>, %w: memref<4x128x256xbf16>,
                                %m: memref<4xi32>, %y: memref<8x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.masked_matmul' op expects y of shape [4, 64, 128], got [8, 64, 128]}}
  ggemm.masked_matmul ins(%x, %w : memref<4x64x256xbf16>, memref<4x128x256xbf16>)
      masked_m(%m : memref<4xi32>) outs(%y : memref<8x64x128xbf16>)
  return
}

// -----

func.func @bias_shape(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                      %indptr: memref<5xi32>, %b: memref<4x256xf32>,
                      %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects bias of shape [4, 128], got [4, 256]}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) bias(%b : memref<4x256xf32>)
      outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @row_scale_shape(%x: memref<100x256xbf16>, %w: memref<4x128x256xbf16>,
                           %indptr: memref<5xi32>, %rs: memref<128xf32>,
                           %y: memref<100x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects row_scale of shape [100], got [128]}}
  ggemm.segment_matmul ins(%x, %w : memref<100x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) row_scale(%rs : memref<128xf32>)
      outs(%y : memref<100x128xbf16>)
  return
}

// -----

// A 3-D problem wants per-group row scales: [G, Mmax].
func.func @row_scale_rank(%x: memref<4x64x256xbf16>, %w: memref<4x128x256xbf16>,
                          %rs: memref<4x32xf32>, %y: memref<4x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.batched_matmul' op expects row_scale of shape [4, 64], got [4, 32]}}
  ggemm.batched_matmul ins(%x, %w : memref<4x64x256xbf16>, memref<4x128x256xbf16>)
      row_scale(%rs : memref<4x32xf32>) outs(%y : memref<4x64x128xbf16>)
  return
}

//===----------------------------------------------------------------------===//
// segment_matmul: segments and weights
//===----------------------------------------------------------------------===//

// -----

func.func @empty_indptr(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                        %indptr: memref<0xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects seg_indptr to hold G + 1 >= 1 entries, got 0}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<0xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @weight_per_segment(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                              %indptr: memref<9xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects one weight per segment without weight_indices: w has 4 weights, seg_indptr 8 segments}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<9xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @weight_indices_count(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                                %indptr: memref<9xi32>, %idx: memref<4xi32>,
                                %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects weight_indices to hold one entry per segment (8), got 4}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<9xi32>) weight_indices(%idx : memref<4xi32>)
      outs(%y : memref<?x128xbf16>)
  return
}

//===----------------------------------------------------------------------===//
// masked_matmul and batched_matmul: groups
//===----------------------------------------------------------------------===//

// -----

func.func @masked_weight_per_group(%x: memref<4x64x256xbf16>, %w: memref<8x128x256xbf16>,
                                   %m: memref<4xi32>, %y: memref<4x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.masked_matmul' op expects one weight per group: x has 4 groups, w has 8}}
  ggemm.masked_matmul ins(%x, %w : memref<4x64x256xbf16>, memref<8x128x256xbf16>)
      masked_m(%m : memref<4xi32>) outs(%y : memref<4x64x128xbf16>)
  return
}

// -----

func.func @masked_counts(%x: memref<4x64x256xbf16>, %w: memref<4x128x256xbf16>,
                         %m: memref<5xi64>, %y: memref<4x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.masked_matmul' op expects masked_m of shape [4], got [5]}}
  ggemm.masked_matmul ins(%x, %w : memref<4x64x256xbf16>, memref<4x128x256xbf16>)
      masked_m(%m : memref<5xi64>) outs(%y : memref<4x64x128xbf16>)
  return
}

// -----

func.func @batched_weight_per_batch(%x: memref<4x64x256xbf16>, %w: memref<2x128x256xbf16>,
                                    %y: memref<4x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.batched_matmul' op expects one weight per batch: x has 4 batches, w has 2}}
  ggemm.batched_matmul ins(%x, %w : memref<4x64x256xbf16>, memref<2x128x256xbf16>)
      outs(%y : memref<4x64x128xbf16>)
  return
}

//===----------------------------------------------------------------------===//
// Static TMA rules
//===----------------------------------------------------------------------===//

// -----

// K = 100 bf16: rows 200 bytes apart.
func.func @tma_row_stride(%x: memref<?x100xbf16>, %w: memref<4x128x100xbf16>,
                          %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects dimension 0 of x to have a stride that is a multiple of 16 bytes (TMA), got 200 bytes}}
  ggemm.segment_matmul ins(%x, %w : memref<?x100xbf16>, memref<4x128x100xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

// A padded x, but the weights' N rows are 200 bytes apart.
func.func @tma_weight_stride(%x: memref<?x100xbf16, strided<[104, 1]>>,
                             %w: memref<4x128x100xbf16>, %indptr: memref<5xi32>,
                             %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects dimension 1 of w to have a stride that is a multiple of 16 bytes (TMA), got 200 bytes}}
  ggemm.segment_matmul ins(%x, %w : memref<?x100xbf16, strided<[104, 1]>>, memref<4x128x100xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

// FP8: 1-byte elements, K = 200.
func.func @tma_fp8_stride(%x: memref<4x64x200xf8E4M3FN>, %w: memref<4x128x200xf8E4M3FN>,
                          %xs: memref<1xf32>, %ws: memref<4xf32>,
                          %y: memref<4x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.batched_matmul' op expects dimension 1 of x to have a stride that is a multiple of 16 bytes (TMA), got 200 bytes}}
  ggemm.batched_matmul ins(%x, %w : memref<4x64x200xf8E4M3FN>, memref<4x128x200xf8E4M3FN>)
      scales(%xs, %ws : memref<1xf32>, memref<4xf32>) outs(%y : memref<4x64x128xbf16>)
      {x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = #ggemm.scale_block<tensor>}
  return
}

// -----

func.func @tma_static_offset(%x: memref<?x256xbf16, strided<[256, 1], offset: 4>>,
                             %w: memref<4x128x256xbf16>, %indptr: memref<5xi32>,
                             %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects x to start 16-byte aligned (TMA), got a static offset of 8 bytes}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16, strided<[256, 1], offset: 4>>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @tma_non_contiguous(%x: memref<?x256xbf16, strided<[512, 2]>>,
                              %w: memref<4x128x256xbf16>, %indptr: memref<5xi32>,
                              %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects the innermost dimension of x to be contiguous (stride 1), got stride 2}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16, strided<[512, 2]>>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @tma_dynamic_inner_stride(%x: memref<?x256xbf16>,
                                    %w: memref<4x128x256xbf16, strided<[?, ?, ?]>>,
                                    %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects the innermost dimension of w to be contiguous (stride 1), got stride ?}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16, strided<[?, ?, ?]>>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

// A transposed view of a [G, K, N] weight: the innermost dimension is the
// strided one.
func.func @tma_transposed_weight(%x: memref<?x256xbf16>,
                                 %w: memref<4x128x256xbf16, strided<[32768, 1, 128]>>,
                                 %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects the innermost dimension of w to be contiguous (stride 1), got stride 128}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16, strided<[32768, 1, 128]>>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @tma_not_strided(%x: memref<64x256xbf16, affine_map<(m, k) -> (m floordiv 2, k mod 128)>>,
                           %w: memref<4x128x256xbf16>, %indptr: memref<5xi32>,
                           %y: memref<64x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects x to have a strided layout, got 'memref<64x256xbf16, affine_map<(d0, d1) -> (d0 floordiv 2, d1 mod 128)>>'}}
  ggemm.segment_matmul ins(%x, %w : memref<64x256xbf16, affine_map<(m, k) -> (m floordiv 2, k mod 128)>>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<64x128xbf16>)
  return
}

//===----------------------------------------------------------------------===//
// FP8 scales
//===----------------------------------------------------------------------===//

// -----

func.func @scales_for_bf16(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                           %indptr: memref<5xi32>, %xs: memref<1xf32>, %ws: memref<4xf32>,
                           %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects no scales for 'bf16' operands; scales apply to FP8 and INT8 only}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<1xf32>, memref<4xf32>)
      outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @fp8_out_without_scale(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                                 %indptr: memref<5xi32>, %y: memref<?x128xf8E4M3FN>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects `y_scale` with an e4m3 y (its 1x128 scales, computed in the epilogue)}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xf8E4M3FN>)
  return
}

// -----

func.func @y_scale_for_bf16(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                            %indptr: memref<5xi32>, %y: memref<?x128xbf16>,
                            %ys: memref<?x1xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects no `y_scale` for a 'bf16' y (y_scale goes with an e4m3 y)}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>) y_scale(%ys : memref<?x1xf32>)
  return
}

// -----

func.func @fp8_out_accumulate(%x: memref<4x64x256xbf16>, %w: memref<4x128x256xbf16>,
                              %y: memref<4x64x128xf8E4M3FN>, %ys: memref<4x64x1xf32>) {
  // expected-error @+1 {{'ggemm.batched_matmul' op expects no accumulate or atomic epilogue with an e4m3 y (the epilogue quantises the values it computes)}}
  ggemm.batched_matmul ins(%x, %w : memref<4x64x256xbf16>, memref<4x128x256xbf16>)
      outs(%y : memref<4x64x128xf8E4M3FN>) y_scale(%ys : memref<4x64x1xf32>)
      {epilogue = #ggemm.epilogue<accumulate = true>}
  return
}

// -----

func.func @fp8_out_scatter(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                           %indptr: memref<5xi32>, %s: memref<?xi32>,
                           %y: memref<?x128xf8E4M3FN>, %ys: memref<?x1xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects no scatter_indices with an e4m3 y}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) scatter_indices(%s : memref<?xi32>)
      outs(%y : memref<?x128xf8E4M3FN>) y_scale(%ys : memref<?x1xf32>)
  return
}

// -----

func.func @fp8_out_scale_shape(%x: memref<?x256xbf16>, %w: memref<4x200x256xbf16>,
                               %indptr: memref<5xi32>, %y: memref<?x200xf8E4M3FN>,
                               %ys: memref<?x1xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects y_scale of shape [?, 2], got [?, 1]}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x200x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x200xf8E4M3FN>) y_scale(%ys : memref<?x1xf32>)
  return
}

// -----

func.func @fp8_out_narrow_tiles(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                                %indptr: memref<5xi32>, %y: memref<?x128xf8E4M3FN>,
                                %ys: memref<?x1xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects a tile config without swap_ab whose tiles are whole 128-column blocks of an e4m3 y (each row's block maximum is taken in the tile), got block_n = 64}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xf8E4M3FN>) y_scale(%ys : memref<?x1xf32>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 64, block_k = 64>}
  return
}

// -----

func.func @int8_without_scales(%x: memref<?x256xi8>, %w: memref<4x128x256xi8>,
                               %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects `scales(x_scale, w_scale)` for INT8 operands}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xi8>, memref<4x128x256xi8>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @int8_block_scales(%x: memref<?x256xi8>, %w: memref<4x128x256xi8>,
                             %indptr: memref<5xi32>, %xs: memref<?x2xf32>, %ws: memref<4x128xf32>,
                             %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects a tensor-wise or per-row x_scale_block for INT8 operands (they are dequantised once, in the epilogue), got #ggemm.scale_block<1x128>}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xi8>, memref<4x128x256xi8>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<?x2xf32>, memref<4x128xf32>)
      outs(%y : memref<?x128xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<per_row>}
  return
}

// -----

func.func @int8_weight_block_scales(%x: memref<4x64x256xi8>, %w: memref<4x128x256xi8>,
                                    %xs: memref<1xf32>, %ws: memref<4x1x2xf32>,
                                    %y: memref<4x64x128xf32>) {
  // expected-error @+1 {{'ggemm.batched_matmul' op expects a tensor-wise or per-row w_scale_block for INT8 operands (they are dequantised once, in the epilogue), got #ggemm.scale_block<128x128>}}
  ggemm.batched_matmul ins(%x, %w : memref<4x64x256xi8>, memref<4x128x256xi8>)
      scales(%xs, %ws : memref<1xf32>, memref<4x1x2xf32>)
      outs(%y : memref<4x64x128xf32>)
      {x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

func.func @int8_swap_ab_n(%x: memref<?x256xi8>, %w: memref<4x128x256xi8>,
                          %indptr: memref<5xi32>, %xs: memref<1xf32>, %ws: memref<4xf32>,
                          %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects the tile's wgmma N (block_m with swap_ab) to be 8, 16, 24 or a multiple of 16 for i8 operands (the N of wgmma's s8 forms), got 88}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xi8>, memref<4x128x256xi8>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<1xf32>, memref<4xf32>)
      outs(%y : memref<?x128xbf16>)
      {x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = #ggemm.scale_block<tensor>,
       config = #ggemm.tile_config<block_m = 88, block_n = 128, block_k = 128, swap_ab = true>}
  return
}

// -----

func.func @int8_with_bf16_weights(%x: memref<?x256xi8>, %w: memref<4x128x256xbf16>,
                                  %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects x and w to be both bf16, both f16, both FP8 (f8E4M3FN/f8E5M2) or both i8, got 'i8' and 'bf16'}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xi8>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @scale_block_for_f16(%x: memref<4x64x256xf16>, %w: memref<4x128x256xf16>,
                               %m: memref<4xi32>, %y: memref<4x64x128xf16>) {
  // expected-error @+1 {{'ggemm.masked_matmul' op expects no scale_block attributes for 'f16' operands}}
  ggemm.masked_matmul ins(%x, %w : memref<4x64x256xf16>, memref<4x128x256xf16>)
      masked_m(%m : memref<4xi32>) outs(%y : memref<4x64x128xf16>)
      {w_scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

func.func @fp8_without_scales(%x: memref<?x256xf8E4M3FN>, %w: memref<4x128x256xf8E4M3FN>,
                              %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects `scales(x_scale, w_scale)` for FP8 operands}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xf8E4M3FN>, memref<4x128x256xf8E4M3FN>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

// The custom syntax always gives both scales; the generic one can give one.
func.func @fp8_one_scale(%x: memref<?x256xf8E5M2>, %w: memref<4x128x256xf8E5M2>,
                         %indptr: memref<5xi32>, %xs: memref<?x2xf32>,
                         %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects `scales(x_scale, w_scale)` for FP8 operands}}
  "ggemm.segment_matmul"(%x, %w, %indptr, %xs, %y)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0>,
        x_scale_block = #ggemm.scale_block<1x128>,
        w_scale_block = #ggemm.scale_block<128x128>}>
      : (memref<?x256xf8E5M2>, memref<4x128x256xf8E5M2>, memref<5xi32>, memref<?x2xf32>,
         memref<?x128xbf16>) -> ()
  return
}

// -----

func.func @fp8_without_scale_blocks(%x: memref<?x256xf8E4M3FN>, %w: memref<4x128x256xf8E4M3FN>,
                                    %indptr: memref<5xi32>, %xs: memref<?x2xf32>,
                                    %ws: memref<4x1x2xf32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects `x_scale_block` and `w_scale_block` attributes for FP8 operands}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xf8E4M3FN>, memref<4x128x256xf8E4M3FN>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<?x2xf32>, memref<4x1x2xf32>)
      outs(%y : memref<?x128xbf16>) {x_scale_block = #ggemm.scale_block<1x128>}
  return
}

// -----

func.func @k_not_multiple_of_scale_block(%x: memref<?x192xf8E4M3FN>,
                                         %w: memref<4x128x192xf8E4M3FN>,
                                         %indptr: memref<5xi32>, %xs: memref<?x2xf32>,
                                         %ws: memref<4x1x2xf32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects K (192) to be a multiple of the scale block (128)}}
  ggemm.segment_matmul ins(%x, %w : memref<?x192xf8E4M3FN>, memref<4x128x192xf8E4M3FN>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<?x2xf32>, memref<4x1x2xf32>)
      outs(%y : memref<?x128xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

// Only the weight block is 128 wide here.
func.func @k_not_multiple_of_weight_block(%x: memref<?x192xf8E4M3FN>,
                                          %w: memref<4x128x192xf8E4M3FN>,
                                          %indptr: memref<5xi32>, %xs: memref<?x3xf32>,
                                          %ws: memref<4x1x2xf32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects K (192) to be a multiple of the scale block (128)}}
  ggemm.segment_matmul ins(%x, %w : memref<?x192xf8E4M3FN>, memref<4x128x192xf8E4M3FN>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<?x3xf32>, memref<4x1x2xf32>)
      outs(%y : memref<?x128xbf16>)
      {x_scale_block = #ggemm.scale_block<1x64>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

func.func @x_scale_blocks(%x: memref<?x512xf8E4M3FN>, %w: memref<4x256x512xf8E4M3FN>,
                          %indptr: memref<5xi32>, %xs: memref<?x2xf32>,
                          %ws: memref<4x2x4xf32>, %y: memref<?x256xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects x_scale of shape [?, 4], got [?, 2]}}
  ggemm.segment_matmul ins(%x, %w : memref<?x512xf8E4M3FN>, memref<4x256x512xf8E4M3FN>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<?x2xf32>, memref<4x2x4xf32>)
      outs(%y : memref<?x256xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

// Per-token scales are one per row, not one per 128-wide block.
func.func @x_scale_per_row_rank(%x: memref<?x512xf8E4M3FN>, %w: memref<4x256x512xf8E4M3FN>,
                                %indptr: memref<5xi32>, %xs: memref<?x4xf32>,
                                %ws: memref<4x2x4xf32>, %y: memref<?x256xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects x_scale to have rank 1 [?], got rank 2}}
  ggemm.segment_matmul ins(%x, %w : memref<?x512xf8E4M3FN>, memref<4x256x512xf8E4M3FN>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<?x4xf32>, memref<4x2x4xf32>)
      outs(%y : memref<?x256xbf16>)
      {x_scale_block = #ggemm.scale_block<per_row>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

func.func @x_scale_tensor(%x: memref<?x512xf8E4M3FN>, %w: memref<4x256x512xf8E4M3FN>,
                          %indptr: memref<5xi32>, %xs: memref<2xf32>,
                          %ws: memref<4xf32>, %y: memref<?x256xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects x_scale of shape [1], got [2]}}
  ggemm.segment_matmul ins(%x, %w : memref<?x512xf8E4M3FN>, memref<4x256x512xf8E4M3FN>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<2xf32>, memref<4xf32>)
      outs(%y : memref<?x256xbf16>)
      {x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = #ggemm.scale_block<tensor>}
  return
}

// -----

// N = 200 needs ceil(200 / 128) = 2 row blocks of weight scales.
func.func @w_scale_blocks(%x: memref<?x512xf8E4M3FN>, %w: memref<4x200x512xf8E4M3FN>,
                          %indptr: memref<5xi32>, %xs: memref<?x4xf32>,
                          %ws: memref<4x1x4xf32>, %y: memref<?x200xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects w_scale of shape [4, 2, 4], got [4, 1, 4]}}
  ggemm.segment_matmul ins(%x, %w : memref<?x512xf8E4M3FN>, memref<4x200x512xf8E4M3FN>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<?x4xf32>, memref<4x1x4xf32>)
      outs(%y : memref<?x200xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

// Tensor-wise weight scales are one per weight matrix.
func.func @w_scale_tensor(%x: memref<?x512xf8E4M3FN>, %w: memref<4x256x512xf8E4M3FN>,
                          %indptr: memref<5xi32>, %xs: memref<1xf32>,
                          %ws: memref<1xf32>, %y: memref<?x256xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects w_scale of shape [4], got [1]}}
  ggemm.segment_matmul ins(%x, %w : memref<?x512xf8E4M3FN>, memref<4x256x512xf8E4M3FN>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<1xf32>, memref<1xf32>)
      outs(%y : memref<?x256xbf16>)
      {x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = #ggemm.scale_block<tensor>}
  return
}

// -----

// Per-channel weight scales of a kn weight follow N = 384, not K = 256.
func.func @w_scale_per_row_kn(%x: memref<?x256xf8E4M3FN>, %w: memref<4x256x384xf8E4M3FN>,
                              %indptr: memref<5xi32>, %xs: memref<?xf32>,
                              %ws: memref<4x256xf32>, %y: memref<?x384xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects w_scale of shape [4, 384], got [4, 256]}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xf8E4M3FN>, memref<4x256x384xf8E4M3FN>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<?xf32>, memref<4x256xf32>)
      outs(%y : memref<?x384xbf16>)
      {weight_layout = #ggemm.weight_layout<kn>,
       x_scale_block = #ggemm.scale_block<per_row>, w_scale_block = #ggemm.scale_block<per_row>}
  return
}

// -----

// Masked activation scales carry the group dimension.
func.func @masked_x_scale_groups(%x: memref<4x64x256xf8E4M3FN>, %w: memref<4x128x256xf8E4M3FN>,
                                 %m: memref<4xi32>, %xs: memref<64x2xf32>,
                                 %ws: memref<4x1x2xf32>, %y: memref<4x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.masked_matmul' op expects x_scale to have rank 3 [4, 64, 2], got rank 2}}
  ggemm.masked_matmul ins(%x, %w : memref<4x64x256xf8E4M3FN>, memref<4x128x256xf8E4M3FN>)
      masked_m(%m : memref<4xi32>) scales(%xs, %ws : memref<64x2xf32>, memref<4x1x2xf32>)
      outs(%y : memref<4x64x128xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

// Tensor-wise activation scales are one for all of x, also for masked and
// batched x (per-group activation scales are per_row scales).
func.func @masked_x_scale_tensor(%x: memref<4x64x256xf8E4M3FN>, %w: memref<4x128x256xf8E4M3FN>,
                                 %m: memref<4xi32>, %xs: memref<4xf32>,
                                 %ws: memref<4xf32>, %y: memref<4x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.masked_matmul' op expects x_scale of shape [1], got [4]}}
  ggemm.masked_matmul ins(%x, %w : memref<4x64x256xf8E4M3FN>, memref<4x128x256xf8E4M3FN>)
      masked_m(%m : memref<4xi32>) scales(%xs, %ws : memref<4xf32>, memref<4xf32>)
      outs(%y : memref<4x64x128xbf16>)
      {x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = #ggemm.scale_block<tensor>}
  return
}

// -----

// Batched per-token scales are [B, M], one per row of each batch.
func.func @batched_x_scale_per_row(%x: memref<4x64x256xf8E4M3FN>, %w: memref<4x128x256xf8E4M3FN>,
                                   %xs: memref<256xf32>, %ws: memref<4x128xf32>,
                                   %y: memref<4x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.batched_matmul' op expects x_scale to have rank 2 [4, 64], got rank 1}}
  ggemm.batched_matmul ins(%x, %w : memref<4x64x256xf8E4M3FN>, memref<4x128x256xf8E4M3FN>)
      scales(%xs, %ws : memref<256xf32>, memref<4x128xf32>) outs(%y : memref<4x64x128xbf16>)
      {x_scale_block = #ggemm.scale_block<per_row>, w_scale_block = #ggemm.scale_block<per_row>}
  return
}

// -----

// Per-channel weight scales are [G, N].
func.func @w_scale_per_channel_groups(%x: memref<4x64x256xf8E4M3FN>, %w: memref<4x128x256xf8E4M3FN>,
                                      %m: memref<4xi32>, %xs: memref<4x64xf32>,
                                      %ws: memref<128xf32>, %y: memref<4x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.masked_matmul' op expects w_scale to have rank 2 [4, 128], got rank 1}}
  ggemm.masked_matmul ins(%x, %w : memref<4x64x256xf8E4M3FN>, memref<4x128x256xf8E4M3FN>)
      masked_m(%m : memref<4xi32>) scales(%xs, %ws : memref<4x64xf32>, memref<128xf32>)
      outs(%y : memref<4x64x128xbf16>)
      {x_scale_block = #ggemm.scale_block<per_row>, w_scale_block = #ggemm.scale_block<per_row>}
  return
}

//===----------------------------------------------------------------------===//
// Tile configs against the element type
//===----------------------------------------------------------------------===//

// -----

func.func @block_k_bf16(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                        %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects block_k * element bytes to be 128 (one 128-byte swizzle row) for 'bf16', i.e. block_k = 64, got 128}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>}
  return
}

// -----

func.func @block_k_fp8(%x: memref<4x64x256xf8E5M2>, %w: memref<4x128x256xf8E5M2>,
                       %xs: memref<1xf32>, %ws: memref<4xf32>, %y: memref<4x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.batched_matmul' op expects block_k * element bytes to be 128 (one 128-byte swizzle row) for 'f8E5M2', i.e. block_k = 128, got 64}}
  ggemm.batched_matmul ins(%x, %w : memref<4x64x256xf8E5M2>, memref<4x128x256xf8E5M2>)
      scales(%xs, %ws : memref<1xf32>, memref<4xf32>) outs(%y : memref<4x64x128xbf16>)
      {x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = #ggemm.scale_block<tensor>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>}
  return
}

// -----

// 5 stages of (128 + 256) x 64 bf16 = 245760 bytes.
func.func @smem_budget(%x: memref<?x256xbf16>, %w: memref<4x256x256xbf16>,
                       %indptr: memref<5xi32>, %y: memref<?x256xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects the tile config's shared memory (245840 bytes for 5 stages) to fit in 232448 bytes}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x256x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x256xbf16>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, stages = 5>}
  return
}

//===----------------------------------------------------------------------===//
// ggemm.segment_matmul_k
//===----------------------------------------------------------------------===//

// -----

func.func @k_op_mixed_types(%dy: memref<?x256xbf16>, %x: memref<?x512xf16>,
                            %indptr: memref<5xi64>, %dw: memref<4x256x512xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects dy and x to be both bf16, both f16 or both the same FP8 type, got 'bf16' and 'f16'}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x256xbf16>, memref<?x512xf16>)
      segments(%indptr : memref<5xi64>) outs(%dw : memref<4x256x512xf32>)
  return
}

// -----

func.func @k_op_fp8(%dy: memref<?x256xf8E4M3FN>, %x: memref<?x512xf8E4M3FN>,
                    %indptr: memref<5xi64>, %dw: memref<4x256x512xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects FP8 dy and x to be given transposed ([N, T] and [K, T], `transposed`): wgmma's FP8 forms read K-major operands, and the tokens are K here}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x256xf8E4M3FN>, memref<?x512xf8E4M3FN>)
      segments(%indptr : memref<5xi64>) outs(%dw : memref<4x256x512xf32>)
  return
}

// -----

func.func @k_op_rows(%dy: memref<100x256xbf16>, %x: memref<99x512xbf16>,
                     %indptr: memref<5xi64>, %dw: memref<4x256x512xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects dy and x to have the same token rows, got 100 and 99}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<100x256xbf16>, memref<99x512xbf16>)
      segments(%indptr : memref<5xi64>) outs(%dw : memref<4x256x512xf32>)
  return
}

// -----

func.func @k_op_dy_scale_alone(%dy: memref<256x?xf8E4M3FN>, %x: memref<512x?xf8E4M3FN>,
                               %indptr: memref<5xi64>, %dys: memref<256x?xf32>,
                               %dw: memref<4x256x512xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects dy_scale and x_scale together, got dy_scale alone}}
  "ggemm.segment_matmul_k"(%dy, %x, %indptr, %dys, %dw)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1>, transposed}>
      : (memref<256x?xf8E4M3FN>, memref<512x?xf8E4M3FN>, memref<5xi64>,
         memref<256x?xf32>, memref<4x256x512xf32>) -> ()
  return
}

// -----

func.func @k_op_x_scale_alone(%dy: memref<256x?xbf16>, %x: memref<512x?xbf16>,
                              %indptr: memref<5xi64>, %xs: memref<512x?xf32>,
                              %dw: memref<4x512x256xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects dy_scale and x_scale together, got x_scale alone}}
  "ggemm.segment_matmul_k"(%dy, %x, %indptr, %xs, %dw)
      <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 1>, transposed,
        weight_layout = #ggemm.weight_layout<kn>}>
      : (memref<256x?xbf16>, memref<512x?xbf16>, memref<5xi64>,
         memref<512x?xf32>, memref<4x512x256xf32>) -> ()
  return
}

// -----

func.func @k_op_fp8_no_scales(%dy: memref<256x?xf8E4M3FN>, %x: memref<512x?xf8E4M3FN>,
                              %indptr: memref<5xi64>, %dw: memref<4x256x512xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects scales (dy_scale and x_scale, 1x128 along the tokens) for FP8 dy and x}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<256x?xf8E4M3FN>, memref<512x?xf8E4M3FN>)
      segments(%indptr : memref<5xi64>) outs(%dw : memref<4x256x512xf32>) {transposed}
  return
}

// -----

func.func @k_op_bf16_scales(%dy: memref<256x?xbf16>, %x: memref<512x?xbf16>,
                            %indptr: memref<5xi64>, %dys: memref<256x?xf32>,
                            %xs: memref<512x?xf32>, %dw: memref<4x256x512xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects no scales for 'bf16' dy and x (scales are for FP8 operands)}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<256x?xbf16>, memref<512x?xbf16>)
      segments(%indptr : memref<5xi64>)
      scales(%dys, %xs : memref<256x?xf32>, memref<512x?xf32>)
      outs(%dw : memref<4x256x512xf32>) {transposed}
  return
}

// -----

func.func @k_op_fp8_token_columns(%dy: memref<256x304xf8E4M3FN>, %x: memref<512x288xf8E4M3FN>,
                                  %indptr: memref<5xi64>, %dys: memref<256x3xf32>,
                                  %xs: memref<512x3xf32>, %dw: memref<4x256x512xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects dy and x to have the same token columns, got 304 and 288}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<256x304xf8E4M3FN>, memref<512x288xf8E4M3FN>)
      segments(%indptr : memref<5xi64>)
      scales(%dys, %xs : memref<256x3xf32>, memref<512x3xf32>)
      outs(%dw : memref<4x256x512xf32>) {transposed}
  return
}

// -----

func.func @k_op_fp8_scale_blocks(%dy: memref<256x304xf8E4M3FN>, %x: memref<512x304xf8E4M3FN>,
                                 %indptr: memref<5xi64>, %dys: memref<256x2xf32>,
                                 %xs: memref<512x3xf32>, %dw: memref<4x256x512xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects dy_scale of shape [256, 3], got [256, 2]}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<256x304xf8E4M3FN>, memref<512x304xf8E4M3FN>)
      segments(%indptr : memref<5xi64>)
      scales(%dys, %xs : memref<256x2xf32>, memref<512x3xf32>)
      outs(%dw : memref<4x256x512xf32>) {transposed}
  return
}

// -----

func.func @k_op_fp8_dw_shape(%dy: memref<256x?xf8E4M3FN>, %x: memref<512x?xf8E4M3FN>,
                             %indptr: memref<5xi64>, %dys: memref<256x?xf32>,
                             %xs: memref<512x?xf32>, %dw: memref<4x512x256xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects dw of shape [4, 256, 512], got [4, 512, 256]}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<256x?xf8E4M3FN>, memref<512x?xf8E4M3FN>)
      segments(%indptr : memref<5xi64>)
      scales(%dys, %xs : memref<256x?xf32>, memref<512x?xf32>)
      outs(%dw : memref<4x512x256xf32>) {transposed}
  return
}

// -----

func.func @k_op_empty_indptr(%dy: memref<?x256xbf16>, %x: memref<?x512xbf16>,
                             %indptr: memref<0xi64>, %dw: memref<4x256x512xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects seg_indptr to hold G + 1 >= 1 entries, got 0}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x256xbf16>, memref<?x512xbf16>)
      segments(%indptr : memref<0xi64>) outs(%dw : memref<4x256x512xf32>)
  return
}

// -----

func.func @k_op_dw_nk(%dy: memref<?x256xbf16>, %x: memref<?x512xbf16>,
                      %indptr: memref<5xi64>, %dw: memref<4x512x256xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects dw of shape [4, 256, 512], got [4, 512, 256]}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x256xbf16>, memref<?x512xbf16>)
      segments(%indptr : memref<5xi64>) outs(%dw : memref<4x512x256xf32>)
  return
}

// -----

func.func @k_op_dw_kn(%dy: memref<?x256xbf16>, %x: memref<?x512xbf16>,
                      %indptr: memref<9xi64>, %dw: memref<4x512x256xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects dw of shape [8, 512, 256], got [4, 512, 256]}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x256xbf16>, memref<?x512xbf16>)
      segments(%indptr : memref<9xi64>) outs(%dw : memref<4x512x256xf32>)
      {weight_layout = #ggemm.weight_layout<kn>}
  return
}

// -----

func.func @k_op_tma(%dy: memref<?x100xbf16>, %x: memref<?x512xbf16>,
                    %indptr: memref<5xi64>, %dw: memref<4x100x512xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects dimension 0 of dy to have a stride that is a multiple of 16 bytes (TMA), got 200 bytes}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x100xbf16>, memref<?x512xbf16>)
      segments(%indptr : memref<5xi64>) outs(%dw : memref<4x100x512xf32>)
  return
}

// -----

func.func @k_op_block_k(%dy: memref<?x256xf16>, %x: memref<?x512xf16>,
                        %indptr: memref<5xi64>, %dw: memref<4x256x512xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects block_k * element bytes to be 128 (one 128-byte swizzle row) for 'f16', i.e. block_k = 64, got 32}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x256xf16>, memref<?x512xf16>)
      segments(%indptr : memref<5xi64>) outs(%dw : memref<4x256x512xf32>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 32>}
  return
}

// -----

func.func @k_op_smem(%dy: memref<?x256xf16>, %x: memref<?x512xf16>,
                     %indptr: memref<5xi64>, %dw: memref<4x256x512xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects the tile config's shared memory (262272 bytes for 8 stages) to fit in 232448 bytes}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x256xf16>, memref<?x512xf16>)
      segments(%indptr : memref<5xi64>) outs(%dw : memref<4x256x512xf32>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, stages = 8>}
  return
}

//===----------------------------------------------------------------------===//
// ggemm.sort_by_expert
//===----------------------------------------------------------------------===//

// -----

func.func @sort_topk_zero(%ids: memref<?xi32>, %indptr: memref<9xi32>, %rows: memref<?xi32>, %pairs: memref<?xi32>) {
  // expected-error @+1 {{'ggemm.sort_by_expert' op expects a positive topk, got 0}}
  ggemm.sort_by_expert ins(%ids : memref<?xi32>)
      outs(%indptr, %rows, %pairs : memref<9xi32>, memref<?xi32>, memref<?xi32>) {topk = 0}
  return
}

// -----

func.func @sort_indptr_dynamic(%ids: memref<?xi32>, %indptr: memref<?xi32>, %rows: memref<?xi32>, %pairs: memref<?xi32>) {
  // expected-error @+1 {{'ggemm.sort_by_expert' op expects seg_indptr of static size E + 1 with at least one expert, got 'memref<?xi32>'}}
  ggemm.sort_by_expert ins(%ids : memref<?xi32>)
      outs(%indptr, %rows, %pairs : memref<?xi32>, memref<?xi32>, memref<?xi32>) {topk = 2}
  return
}

// -----

func.func @sort_no_experts(%ids: memref<?xi32>, %indptr: memref<1xi32>, %rows: memref<?xi32>, %pairs: memref<?xi32>) {
  // expected-error @+1 {{'ggemm.sort_by_expert' op expects seg_indptr of static size E + 1 with at least one expert, got 'memref<1xi32>'}}
  ggemm.sort_by_expert ins(%ids : memref<?xi32>)
      outs(%indptr, %rows, %pairs : memref<1xi32>, memref<?xi32>, memref<?xi32>) {topk = 2}
  return
}

// -----

func.func @sort_pairs_not_tokens(%ids: memref<15xi32>, %indptr: memref<9xi32>, %rows: memref<?xi32>, %pairs: memref<?xi32>) {
  // expected-error @+1 {{'ggemm.sort_by_expert' op expects the pairs of topk_ids (15) to be a multiple of topk (2)}}
  ggemm.sort_by_expert ins(%ids : memref<15xi32>)
      outs(%indptr, %rows, %pairs : memref<9xi32>, memref<?xi32>, memref<?xi32>) {topk = 2}
  return
}

// -----

func.func @sort_rows_shape(%ids: memref<16xi32>, %indptr: memref<9xi32>, %rows: memref<8xi32>, %pairs: memref<?xi32>) {
  // expected-error @+1 {{'ggemm.sort_by_expert' op expects row_indices of shape [16], got [8]}}
  ggemm.sort_by_expert ins(%ids : memref<16xi32>)
      outs(%indptr, %rows, %pairs : memref<9xi32>, memref<8xi32>, memref<?xi32>) {topk = 2}
  return
}

// -----

func.func @sort_pairs_shape(%ids: memref<?xi32>, %indptr: memref<9xi32>, %rows: memref<?xi32>, %pairs: memref<4x4xi32>) {
  // expected-error @+1 {{'ggemm.sort_by_expert' op operand 'pair_indices' must be 1D memref of 32-bit signless integer values, but got 'memref<4x4xi32>'}}
  ggemm.sort_by_expert ins(%ids : memref<?xi32>)
      outs(%indptr, %rows, %pairs : memref<9xi32>, memref<?xi32>, memref<4x4xi32>) {topk = 2}
  return
}

// -----

//===----------------------------------------------------------------------===//
// ggemm.quantize
//===----------------------------------------------------------------------===//

// -----

func.func @quantize_block_tensor(%x: memref<?x256xbf16>, %q: memref<?x256xf8E4M3FN>,
                                 %s: memref<?x2xf32>) {
  // expected-error @+1 {{'ggemm.quantize' op expects an RxC scale_block (1x128 per token, 128x128 per block), got #ggemm.scale_block<tensor>}}
  ggemm.quantize ins(%x : memref<?x256xbf16>) outs(%q, %s : memref<?x256xf8E4M3FN>, memref<?x2xf32>)
      {scale_block = #ggemm.scale_block<tensor>}
  return
}

// -----

func.func @quantize_block_per_row(%x: memref<?x256xbf16>, %q: memref<?x256xf8E4M3FN>,
                                  %s: memref<?x2xf32>) {
  // expected-error @+1 {{'ggemm.quantize' op expects an RxC scale_block (1x128 per token, 128x128 per block), got #ggemm.scale_block<per_row>}}
  ggemm.quantize ins(%x : memref<?x256xbf16>) outs(%q, %s : memref<?x256xf8E4M3FN>, memref<?x2xf32>)
      {scale_block = #ggemm.scale_block<per_row>}
  return
}

// -----

func.func @quantize_x_rank(%x: memref<256xbf16>, %q: memref<256xf8E4M3FN>,
                           %s: memref<2xf32>) {
  // expected-error @+1 {{'ggemm.quantize' op operand 'x' must be 2D/3D memref of bfloat16 type or 16-bit float or 32-bit float values, but got 'memref<256xbf16>'}}
  ggemm.quantize ins(%x : memref<256xbf16>) outs(%q, %s : memref<256xf8E4M3FN>, memref<2xf32>)
  return
}

// -----

func.func @quantize_q_shape(%x: memref<8x256xbf16>, %q: memref<8x128xf8E4M3FN>,
                            %s: memref<8x2xf32>) {
  // expected-error @+1 {{'ggemm.quantize' op expects q of shape [8, 256], got [8, 128]}}
  ggemm.quantize ins(%x : memref<8x256xbf16>) outs(%q, %s : memref<8x128xf8E4M3FN>, memref<8x2xf32>)
  return
}

// -----

func.func @quantize_k(%x: memref<?x192xbf16>, %q: memref<?x192xf8E4M3FN>,
                      %s: memref<?x2xf32>) {
  // expected-error @+1 {{'ggemm.quantize' op expects K (192) to be a multiple of the scale block (128)}}
  ggemm.quantize ins(%x : memref<?x192xbf16>) outs(%q, %s : memref<?x192xf8E4M3FN>, memref<?x2xf32>)
  return
}

// -----

func.func @quantize_scale_shape(%x: memref<?x512xf16>, %q: memref<?x512xf8E5M2>,
                                %s: memref<?x4xf32>) {
  // expected-error @+1 {{'ggemm.quantize' op expects scale of shape [?, 8], got [?, 4]}}
  ggemm.quantize ins(%x : memref<?x512xf16>) outs(%q, %s : memref<?x512xf8E5M2>, memref<?x4xf32>)
      {scale_block = #ggemm.scale_block<1x64>}
  return
}

// -----

// 128x128 blocks: ceil(300 / 128) = 3 row blocks per weight.
func.func @quantize_block_scale_shape(%w: memref<4x300x256xbf16>, %q: memref<4x300x256xf8E4M3FN>,
                                      %s: memref<4x2x2xf32>) {
  // expected-error @+1 {{'ggemm.quantize' op expects scale of shape [4, 3, 2], got [4, 2, 2]}}
  ggemm.quantize ins(%w : memref<4x300x256xbf16>) outs(%q, %s : memref<4x300x256xf8E4M3FN>, memref<4x2x2xf32>)
      {scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

func.func @expected_m_zero(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                           %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects expected_m to be positive, got 0}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>) {expected_m = 0}
  return
}

// -----

func.func @expected_m_negative(%x: memref<4x64x256xbf16>, %w: memref<4x128x256xbf16>,
                               %counts: memref<4xi32>, %y: memref<4x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.masked_matmul' op expects expected_m to be positive, got -3}}
  ggemm.masked_matmul ins(%x, %w : memref<4x64x256xbf16>, memref<4x128x256xbf16>)
      masked_m(%counts : memref<4xi32>) outs(%y : memref<4x64x128xbf16>) {expected_m = -3}
  return
}

// -----

func.func @expected_m_above_mmax(%x: memref<4x64x256xbf16>, %w: memref<4x128x256xbf16>,
                                 %counts: memref<4xi32>, %y: memref<4x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.masked_matmul' op expects expected_m (65) to be at most Mmax (64)}}
  ggemm.masked_matmul ins(%x, %w : memref<4x64x256xbf16>, memref<4x128x256xbf16>)
      masked_m(%counts : memref<4xi32>) outs(%y : memref<4x64x128xbf16>) {expected_m = 65}
  return
}

// -----

func.func @expected_m_above_m(%x: memref<2x16x256xbf16>, %w: memref<2x128x256xbf16>,
                              %y: memref<2x16x128xbf16>) {
  // expected-error @+1 {{'ggemm.batched_matmul' op expects expected_m (32) to be at most M (16)}}
  ggemm.batched_matmul ins(%x, %w : memref<2x16x256xbf16>, memref<2x128x256xbf16>)
      outs(%y : memref<2x16x128xbf16>) {expected_m = 32}
  return
}

// -----

func.func @expected_m_type(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                           %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+2 {{'ggemm.segment_matmul' op attribute 'expected_m' failed to satisfy constraint: 64-bit signless integer attribute}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>) {expected_m = 4 : i32}
  return
}

// -----

func.func @swiglu_odd_rows(%x: memref<?x256xbf16>, %w: memref<4x127x256xbf16>,
                           %indptr: memref<5xi32>, %y: memref<?x63xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects w's N extent (127) to be even for activation = swiglu (gate rows, then as many up rows)}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x127x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x63xbf16>)
      {epilogue = #ggemm.epilogue<activation = swiglu>}
  return
}

// -----

func.func @swiglu_y_columns(%x: memref<?x256xbf16>, %w: memref<4x256x256xbf16>,
                            %indptr: memref<5xi32>, %y: memref<?x256xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects y of shape [?, 128], got [?, 256]}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x256x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x256xbf16>)
      {epilogue = #ggemm.epilogue<activation = swiglu>}
  return
}

// -----

func.func @swiglu_bias_columns(%x: memref<?x256xbf16>, %w: memref<4x256x256xbf16>,
                               %indptr: memref<5xi32>, %b: memref<4x128xf32>,
                               %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects bias of shape [4, 256], got [4, 128]}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x256x256xbf16>)
      segments(%indptr : memref<5xi32>) bias(%b : memref<4x128xf32>)
      outs(%y : memref<?x128xbf16>)
      {epilogue = #ggemm.epilogue<activation = swiglu>}
  return
}

// -----

func.func @gate_up_block_partial(%x: memref<?x256xbf16>, %w: memref<4x192x256xbf16>,
                                 %indptr: memref<5xi32>, %y: memref<?x96xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects N (96, half of w's N extent) to be a multiple of gate_up_block (64): w's rows are whole blocks of gate and up rows}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x192x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x96xbf16>)
      {epilogue = #ggemm.epilogue<activation = swiglu, gate_up_block = 64>}
  return
}

// -----

func.func @gate_up_block_config(%x: memref<?x256xbf16>, %w: memref<4x256x256xbf16>,
                                %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects the tile config's block_n to be 2 x gate_up_block (128: one tile per block of gate and up rows), got 256}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x256x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
      {epilogue = #ggemm.epilogue<activation = swiglu, gate_up_block = 64>,
       config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64>}
  return
}

// -----

func.func @atomic_without_scatter(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                                  %indptr: memref<5xi32>, %y: memref<?x128xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects an atomic epilogue only with scatter_indices and accumulate = true (atomic adds rows of y in), got no scatter_indices}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xf32>)
      {epilogue = #ggemm.epilogue<accumulate = true, atomic = true>}
  return
}

// -----

func.func @atomic_without_accumulate(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                                     %indptr: memref<5xi32>, %si: memref<?xi32>,
                                     %y: memref<?x128xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects an atomic epilogue only with scatter_indices and accumulate = true (atomic adds rows of y in), got no accumulate}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) scatter_indices(%si : memref<?xi32>)
      outs(%y : memref<?x128xf32>) {epilogue = #ggemm.epilogue<atomic = true>}
  return
}

// -----

func.func @scatter_length(%x: memref<100x256xbf16>, %w: memref<4x128x256xbf16>,
                          %indptr: memref<5xi32>, %si: memref<99xi32>,
                          %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects scatter_indices of shape [100], got [99]}}
  ggemm.segment_matmul ins(%x, %w : memref<100x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) scatter_indices(%si : memref<99xi32>)
      outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @gather_rows_set_y(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                             %indptr: memref<5xi32>, %ri: memref<64xi32>,
                             %y: memref<100x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects y of shape [64, 128], got [100, 128]}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) row_indices(%ri : memref<64xi32>)
      outs(%y : memref<100x128xbf16>)
  return
}

// -----

func.func @row_indices_i64(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                           %indptr: memref<5xi32>, %ri: memref<?xi64>,
                           %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op operand 'row_indices' must be 1D memref of 32-bit signless integer values, but got 'memref<?xi64>'}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) row_indices(%ri : memref<?xi64>)
      outs(%y : memref<?x128xbf16>)
  return
}
