// Round trip of every ggemm op, with and without each optional operand and
// attribute, in the custom and the generic form.
// RUN: gemm-opt %s | gemm-opt | FileCheck %s
// RUN: gemm-opt %s --mlir-print-op-generic | gemm-opt | FileCheck %s

//===----------------------------------------------------------------------===//
// ggemm.segment_matmul
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @segment_matmul_minimal(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x7168xbf16>, %[[W:[a-z0-9]+]]: memref<8x4096x7168xbf16>, %[[P:[a-z0-9]+]]: memref<9xi32>, %[[Y:[a-z0-9]+]]: memref<?x4096xbf16>)
// CHECK: ggemm.segment_matmul ins(%[[X]], %[[W]] : memref<?x7168xbf16>, memref<8x4096x7168xbf16>) segments(%[[P]] : memref<9xi32>) outs(%[[Y]] : memref<?x4096xbf16>){{$}}
func.func @segment_matmul_minimal(%x: memref<?x7168xbf16>, %w: memref<8x4096x7168xbf16>,
                                  %indptr: memref<9xi32>, %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
      segments(%indptr : memref<9xi32>)
      outs(%y : memref<?x4096xbf16>)
  return
}

// The default weight layout is elided; `kn` is printed.
// CHECK-LABEL: func.func @segment_matmul_layouts(
// CHECK: ggemm.segment_matmul ins(%{{.*}}, %{{.*}} : memref<?x256xf16>, memref<4x128x256xf16>) segments(%{{.*}} : memref<5xi64>) outs(%{{.*}} : memref<?x128xf32>){{$}}
// CHECK: ggemm.segment_matmul ins(%{{.*}}, %{{.*}} : memref<?x256xf16>, memref<4x256x128xf16>) segments(%{{.*}} : memref<5xi64>) outs(%{{.*}} : memref<?x128xf32>) {weight_layout = #ggemm.weight_layout<kn>}
func.func @segment_matmul_layouts(%x: memref<?x256xf16>, %wnk: memref<4x128x256xf16>,
                                  %wkn: memref<4x256x128xf16>, %indptr: memref<5xi64>,
                                  %y: memref<?x128xf32>) {
  ggemm.segment_matmul ins(%x, %wnk : memref<?x256xf16>, memref<4x128x256xf16>)
      segments(%indptr : memref<5xi64>) outs(%y : memref<?x128xf32>)
      {weight_layout = #ggemm.weight_layout<nk>}
  ggemm.segment_matmul ins(%x, %wkn : memref<?x256xf16>, memref<4x256x128xf16>)
      segments(%indptr : memref<5xi64>) outs(%y : memref<?x128xf32>)
      {weight_layout = #ggemm.weight_layout<kn>}
  return
}

// The expected rows per group, a hint for ggemm-select-config.
// CHECK-LABEL: func.func @expected_m(
// CHECK: ggemm.segment_matmul {{.*}} outs(%{{.*}} : memref<?x128xbf16>) {expected_m = 20 : i64}
// CHECK: ggemm.masked_matmul {{.*}} outs(%{{.*}} : memref<4x64x128xbf16>) {expected_m = 64 : i64}
// CHECK: ggemm.batched_matmul {{.*}} outs(%{{.*}} : memref<4x?x128xbf16>) {expected_m = 300 : i64}
func.func @expected_m(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                      %indptr: memref<5xi32>, %y: memref<?x128xbf16>,
                      %xm: memref<4x64x256xbf16>, %counts: memref<4xi32>,
                      %ym: memref<4x64x128xbf16>, %xb: memref<4x?x256xbf16>,
                      %yb: memref<4x?x128xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>) {expected_m = 20}
  ggemm.masked_matmul ins(%xm, %w : memref<4x64x256xbf16>, memref<4x128x256xbf16>)
      masked_m(%counts : memref<4xi32>) outs(%ym : memref<4x64x128xbf16>) {expected_m = 64}
  ggemm.batched_matmul ins(%xb, %w : memref<4x?x256xbf16>, memref<4x128x256xbf16>)
      outs(%yb : memref<4x?x128xbf16>) {expected_m = 300}
  return
}

// CHECK-LABEL: func.func @segment_matmul_weight_indices(
// CHECK-SAME: %[[IDX:[a-z0-9]+]]: memref<6xi32>
// CHECK: ggemm.segment_matmul ins(%{{.*}}, %{{.*}} : memref<?x256xbf16>, memref<2x128x256xbf16>) segments(%{{.*}} : memref<7xi32>) weight_indices(%[[IDX]] : memref<6xi32>) outs(%{{.*}} : memref<?x128xbf16>){{$}}
func.func @segment_matmul_weight_indices(%x: memref<?x256xbf16>, %w: memref<2x128x256xbf16>,
                                         %indptr: memref<7xi32>, %idx: memref<6xi32>,
                                         %y: memref<?x128xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<2x128x256xbf16>)
      segments(%indptr : memref<7xi32>) weight_indices(%idx : memref<6xi32>)
      outs(%y : memref<?x128xbf16>)
  return
}

// Dynamic group count: seg_indptr and the weights are both dynamic.
// CHECK-LABEL: func.func @segment_matmul_dynamic(
// CHECK: ggemm.segment_matmul ins(%{{.*}}, %{{.*}} : memref<?x?xbf16>, memref<?x?x?xbf16>) segments(%{{.*}} : memref<?xi64>) outs(%{{.*}} : memref<?x?xf32>){{$}}
func.func @segment_matmul_dynamic(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                                  %indptr: memref<?xi64>, %y: memref<?x?xf32>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi64>) outs(%y : memref<?x?xf32>)
  return
}

// Strided operands that TMA can still read: a padded row pitch (a multiple
// of 16 bytes) and a dynamic offset.
// CHECK-LABEL: func.func @segment_matmul_strided(
// CHECK: ggemm.segment_matmul ins(%{{.*}}, %{{.*}} : memref<?x256xbf16, strided<[264, 1], offset: ?>>, memref<4x128x256xbf16, strided<[65536, 512, 1], offset: 8>>) segments(%{{.*}} : memref<5xi32>) outs(%{{.*}} : memref<?x128xbf16, strided<[?, 1]>>){{$}}
func.func @segment_matmul_strided(%x: memref<?x256xbf16, strided<[264, 1], offset: ?>>,
                                  %w: memref<4x128x256xbf16, strided<[65536, 512, 1], offset: 8>>,
                                  %indptr: memref<5xi32>,
                                  %y: memref<?x128xbf16, strided<[?, 1]>>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16, strided<[264, 1], offset: ?>>,
                                    memref<4x128x256xbf16, strided<[65536, 512, 1], offset: 8>>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16, strided<[?, 1]>>)
  return
}

// CHECK-LABEL: func.func @segment_matmul_bias(
// CHECK-SAME: %[[B:[a-z0-9]+]]: memref<4x128xf32>
// CHECK: ggemm.segment_matmul ins({{.*}}) segments({{.*}}) bias(%[[B]] : memref<4x128xf32>) outs(%{{.*}} : memref<?x128xbf16>){{$}}
func.func @segment_matmul_bias(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                               %indptr: memref<5xi32>, %b: memref<4x128xf32>,
                               %y: memref<?x128xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) bias(%b : memref<4x128xf32>)
      outs(%y : memref<?x128xbf16>)
  return
}

// CHECK-LABEL: func.func @segment_matmul_row_scale(
// CHECK-SAME: %[[RS:[a-z0-9]+]]: memref<?xf32>
// CHECK: ggemm.segment_matmul ins({{.*}}) segments({{.*}}) row_scale(%[[RS]] : memref<?xf32>) outs(%{{.*}} : memref<?x128xbf16>){{$}}
func.func @segment_matmul_row_scale(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                                    %indptr: memref<5xi32>, %rs: memref<?xf32>,
                                    %y: memref<?x128xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) row_scale(%rs : memref<?xf32>)
      outs(%y : memref<?x128xbf16>)
  return
}

// Every activation, accumulate, and an epilogue with only defaults.
// CHECK-LABEL: func.func @segment_matmul_epilogue(
// CHECK: outs(%{{.*}} : memref<?x128xbf16>) {epilogue = #ggemm.epilogue<>}
// CHECK: outs(%{{.*}} : memref<?x128xbf16>) {epilogue = #ggemm.epilogue<activation = relu>}
// CHECK: outs(%{{.*}} : memref<?x128xbf16>) {epilogue = #ggemm.epilogue<activation = gelu, accumulate = true>}
// CHECK: outs(%{{.*}} : memref<?x128xbf16>) {epilogue = #ggemm.epilogue<activation = silu>}
// CHECK: outs(%{{.*}} : memref<?x128xbf16>) {epilogue = #ggemm.epilogue<accumulate = true>}
func.func @segment_matmul_epilogue(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                                   %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
      {epilogue = #ggemm.epilogue<activation = none, accumulate = false>}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
      {epilogue = #ggemm.epilogue<activation = relu>}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
      {epilogue = #ggemm.epilogue<activation = gelu, accumulate = true>}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
      {epilogue = #ggemm.epilogue<activation = silu>}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
      {epilogue = #ggemm.epilogue<accumulate = true>}
  return
}

// CHECK-LABEL: func.func @segment_matmul_config(
// CHECK: outs(%{{.*}} : memref<?x128xbf16>) {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>}
// CHECK: outs(%{{.*}} : memref<?x128xbf16>) {config = #ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64, stages = 3, consumer_warpgroups = 1, cluster_m = 2, raster = along_m>}
func.func @segment_matmul_config(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                                 %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, stages = 4,
                                   consumer_warpgroups = 2, swap_ab = false,
                                   cluster_m = 1, cluster_n = 1, raster = along_n>}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
      {config = #ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64, stages = 3,
                                   consumer_warpgroups = 1, cluster_m = 2,
                                   raster = along_m>}
  return
}

// Everything at once: FP8 with 1x128 activation and 128x128 weight scales,
// weight indices, bias, row scale, epilogue and config.
// CHECK-LABEL: func.func @segment_matmul_all(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x512xf8E4M3FN>, %[[W:[a-z0-9]+]]: memref<4x256x512xf8E4M3FN>, %[[P:[a-z0-9]+]]: memref<5xi64>, %[[IDX:[a-z0-9]+]]: memref<4xi32>, %[[XS:[a-z0-9]+]]: memref<?x4xf32>, %[[WS:[a-z0-9]+]]: memref<4x2x4xf32>, %[[B:[a-z0-9]+]]: memref<4x256xf32>, %[[RS:[a-z0-9]+]]: memref<?xf32>, %[[Y:[a-z0-9]+]]: memref<?x256xbf16>)
// CHECK: ggemm.segment_matmul ins(%[[X]], %[[W]] : memref<?x512xf8E4M3FN>, memref<4x256x512xf8E4M3FN>)
// CHECK-SAME: segments(%[[P]] : memref<5xi64>)
// CHECK-SAME: weight_indices(%[[IDX]] : memref<4xi32>)
// CHECK-SAME: scales(%[[XS]], %[[WS]] : memref<?x4xf32>, memref<4x2x4xf32>)
// CHECK-SAME: bias(%[[B]] : memref<4x256xf32>)
// CHECK-SAME: row_scale(%[[RS]] : memref<?xf32>)
// CHECK-SAME: outs(%[[Y]] : memref<?x256xbf16>)
// CHECK-SAME: {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128, stages = 5>, epilogue = #ggemm.epilogue<activation = silu>, w_scale_block = #ggemm.scale_block<128x128>, x_scale_block = #ggemm.scale_block<1x128>}
func.func @segment_matmul_all(%x: memref<?x512xf8E4M3FN>, %w: memref<4x256x512xf8E4M3FN>,
                              %indptr: memref<5xi64>, %idx: memref<4xi32>,
                              %xs: memref<?x4xf32>, %ws: memref<4x2x4xf32>,
                              %b: memref<4x256xf32>, %rs: memref<?xf32>,
                              %y: memref<?x256xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x512xf8E4M3FN>, memref<4x256x512xf8E4M3FN>)
      segments(%indptr : memref<5xi64>)
      weight_indices(%idx : memref<4xi32>)
      scales(%xs, %ws : memref<?x4xf32>, memref<4x2x4xf32>)
      bias(%b : memref<4x256xf32>)
      row_scale(%rs : memref<?xf32>)
      outs(%y : memref<?x256xbf16>)
      {epilogue = #ggemm.epilogue<activation = silu>,
       x_scale_block = #ggemm.scale_block<1x128>,
       w_scale_block = #ggemm.scale_block<128x128>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128, stages = 5>}
  return
}

// An e4m3 y with its 1x128 scales (MN-major), on each problem op.
// CHECK-LABEL: func.func @fp8_output(
// CHECK: outs(%{{.*}} : memref<?x256xf8E4M3FN>) y_scale(%{{.*}} : memref<?x2xf32, strided<[1, ?]>>)
// CHECK: outs(%{{.*}} : memref<4x64x256xf8E4M3FN>) y_scale(%{{.*}} : memref<4x64x2xf32, strided<[64, 1, 256]>>)
// CHECK: outs(%{{.*}} : memref<4x64x256xf8E4M3FN>) y_scale(%{{.*}} : memref<4x64x2xf32>)
func.func @fp8_output(%x: memref<?x512xbf16>, %xb: memref<4x64x512xbf16>,
                      %w: memref<4x256x512xbf16>, %indptr: memref<5xi32>,
                      %m: memref<4xi32>, %y: memref<?x256xf8E4M3FN>,
                      %ys: memref<?x2xf32, strided<[1, ?]>>,
                      %yb: memref<4x64x256xf8E4M3FN>,
                      %ysb: memref<4x64x2xf32, strided<[64, 1, 256]>>,
                      %ysr: memref<4x64x2xf32>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x512xbf16>, memref<4x256x512xbf16>)
      segments(%indptr : memref<5xi32>)
      outs(%y : memref<?x256xf8E4M3FN>) y_scale(%ys : memref<?x2xf32, strided<[1, ?]>>)
  ggemm.masked_matmul ins(%xb, %w : memref<4x64x512xbf16>, memref<4x256x512xbf16>)
      masked_m(%m : memref<4xi32>)
      outs(%yb : memref<4x64x256xf8E4M3FN>) y_scale(%ysb : memref<4x64x2xf32, strided<[64, 1, 256]>>)
  ggemm.batched_matmul ins(%xb, %w : memref<4x64x512xbf16>, memref<4x256x512xbf16>)
      outs(%yb : memref<4x64x256xf8E4M3FN>) y_scale(%ysr : memref<4x64x2xf32>)
  return
}

// INT8 (aiter's int8_gemm): i8 operands with tensor-wise or per-row scales,
// on each problem op.
// CHECK-LABEL: func.func @int8_scales(
// CHECK: ggemm.segment_matmul ins(%{{.*}}, %{{.*}} : memref<?x512xi8>, memref<4x200x512xi8>)
// CHECK-SAME: scales(%{{.*}}, %{{.*}} : memref<?xf32>, memref<4x200xf32>)
// CHECK-SAME: {w_scale_block = #ggemm.scale_block<per_row>, x_scale_block = #ggemm.scale_block<per_row>}
// CHECK: ggemm.masked_matmul ins(%{{.*}}, %{{.*}} : memref<4x64x512xi8>, memref<4x200x512xi8>)
// CHECK-SAME: scales(%{{.*}}, %{{.*}} : memref<1xf32>, memref<4xf32>)
// CHECK-SAME: {w_scale_block = #ggemm.scale_block<tensor>, x_scale_block = #ggemm.scale_block<tensor>}
// CHECK: ggemm.batched_matmul ins(%{{.*}}, %{{.*}} : memref<4x64x512xi8>, memref<4x200x512xi8>)
// CHECK-SAME: scales(%{{.*}}, %{{.*}} : memref<4x64xf32>, memref<4xf32>)
// CHECK-SAME: {w_scale_block = #ggemm.scale_block<tensor>, x_scale_block = #ggemm.scale_block<per_row>}
func.func @int8_scales(%x: memref<?x512xi8>, %xb: memref<4x64x512xi8>,
                       %w: memref<4x200x512xi8>, %indptr: memref<5xi32>,
                       %m: memref<4xi32>, %xs_row: memref<?xf32>,
                       %ws_row: memref<4x200xf32>, %xs_tensor: memref<1xf32>,
                       %ws_tensor: memref<4xf32>, %xs_batch: memref<4x64xf32>,
                       %y: memref<?x200xbf16>, %yb: memref<4x64x200xf32>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x512xi8>, memref<4x200x512xi8>)
      segments(%indptr : memref<5xi32>)
      scales(%xs_row, %ws_row : memref<?xf32>, memref<4x200xf32>)
      outs(%y : memref<?x200xbf16>)
      {x_scale_block = #ggemm.scale_block<per_row>, w_scale_block = #ggemm.scale_block<per_row>}
  ggemm.masked_matmul ins(%xb, %w : memref<4x64x512xi8>, memref<4x200x512xi8>)
      masked_m(%m : memref<4xi32>)
      scales(%xs_tensor, %ws_tensor : memref<1xf32>, memref<4xf32>)
      outs(%yb : memref<4x64x200xf32>)
      {x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = #ggemm.scale_block<tensor>}
  ggemm.batched_matmul ins(%xb, %w : memref<4x64x512xi8>, memref<4x200x512xi8>)
      scales(%xs_batch, %ws_tensor : memref<4x64xf32>, memref<4xf32>)
      outs(%yb : memref<4x64x200xf32>)
      {x_scale_block = #ggemm.scale_block<per_row>, w_scale_block = #ggemm.scale_block<tensor>}
  return
}

// FP8 with each scale-block kind: tensor-wise (one scale for x, one per
// weight), per row (per token, per output channel), blocks; e4m3 and e5m2
// (mixed too); N not a multiple of the 128-row weight block.
// CHECK-LABEL: func.func @segment_matmul_fp8_scales(
// CHECK: scales(%{{.*}}, %{{.*}} : memref<1xf32>, memref<4xf32>)
// CHECK-SAME: {w_scale_block = #ggemm.scale_block<tensor>, x_scale_block = #ggemm.scale_block<tensor>}
// CHECK: scales(%{{.*}}, %{{.*}} : memref<?xf32>, memref<4x200xf32>)
// CHECK-SAME: {w_scale_block = #ggemm.scale_block<per_row>, x_scale_block = #ggemm.scale_block<per_row>}
// CHECK: scales(%{{.*}}, %{{.*}} : memref<?x4xf32>, memref<4x2x4xf32>)
// CHECK-SAME: {w_scale_block = #ggemm.scale_block<128x128>, x_scale_block = #ggemm.scale_block<1x128>}
// CHECK: ins(%{{.*}}, %{{.*}} : memref<?x512xf8E5M2>, memref<4x200x512xf8E5M2>)
// CHECK-SAME: scales(%{{.*}}, %{{.*}} : memref<?x4xf32>, memref<4x200xf32>)
// CHECK-SAME: {w_scale_block = #ggemm.scale_block<per_row>, x_scale_block = #ggemm.scale_block<1x128>}
// CHECK: ins(%{{.*}}, %{{.*}} : memref<?x512xf8E4M3FN>, memref<4x200x512xf8E5M2>)
// CHECK-SAME: scales(%{{.*}}, %{{.*}} : memref<?xf32>, memref<4x4x8xf32>)
// CHECK-SAME: {w_scale_block = #ggemm.scale_block<64x64>, x_scale_block = #ggemm.scale_block<per_row>}
func.func @segment_matmul_fp8_scales(%x4: memref<?x512xf8E4M3FN>, %w4: memref<4x200x512xf8E4M3FN>,
                                     %x5: memref<?x512xf8E5M2>, %w5: memref<4x200x512xf8E5M2>,
                                     %indptr: memref<5xi32>, %y: memref<?x200xbf16>,
                                     %xs_tensor: memref<1xf32>, %ws_tensor: memref<4xf32>,
                                     %xs_row: memref<?xf32>, %ws_row: memref<4x200xf32>,
                                     %xs_blk: memref<?x4xf32>, %ws_blk: memref<4x2x4xf32>,
                                     %ws_blk64: memref<4x4x8xf32>) {
  ggemm.segment_matmul ins(%x4, %w4 : memref<?x512xf8E4M3FN>, memref<4x200x512xf8E4M3FN>)
      segments(%indptr : memref<5xi32>)
      scales(%xs_tensor, %ws_tensor : memref<1xf32>, memref<4xf32>)
      outs(%y : memref<?x200xbf16>)
      {x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = #ggemm.scale_block<tensor>}
  ggemm.segment_matmul ins(%x4, %w4 : memref<?x512xf8E4M3FN>, memref<4x200x512xf8E4M3FN>)
      segments(%indptr : memref<5xi32>)
      scales(%xs_row, %ws_row : memref<?xf32>, memref<4x200xf32>)
      outs(%y : memref<?x200xbf16>)
      {x_scale_block = #ggemm.scale_block<per_row>, w_scale_block = #ggemm.scale_block<per_row>}
  ggemm.segment_matmul ins(%x4, %w4 : memref<?x512xf8E4M3FN>, memref<4x200x512xf8E4M3FN>)
      segments(%indptr : memref<5xi32>)
      scales(%xs_blk, %ws_blk : memref<?x4xf32>, memref<4x2x4xf32>)
      outs(%y : memref<?x200xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  ggemm.segment_matmul ins(%x5, %w5 : memref<?x512xf8E5M2>, memref<4x200x512xf8E5M2>)
      segments(%indptr : memref<5xi32>)
      scales(%xs_blk, %ws_row : memref<?x4xf32>, memref<4x200xf32>)
      outs(%y : memref<?x200xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<per_row>}
  ggemm.segment_matmul ins(%x4, %w5 : memref<?x512xf8E4M3FN>, memref<4x200x512xf8E5M2>)
      segments(%indptr : memref<5xi32>)
      scales(%xs_row, %ws_blk64 : memref<?xf32>, memref<4x4x8xf32>)
      outs(%y : memref<?x200xbf16>)
      {x_scale_block = #ggemm.scale_block<per_row>, w_scale_block = #ggemm.scale_block<64x64>}
  return
}

// FP8 weights stored [G, K, N]: scale blocks are still given in the logical
// [N, K] view.
// CHECK-LABEL: func.func @segment_matmul_fp8_kn(
// CHECK: ins(%{{.*}}, %{{.*}} : memref<?x256xf8E4M3FN>, memref<4x256x384xf8E4M3FN>)
// CHECK-SAME: scales(%{{.*}}, %{{.*}} : memref<?x2xf32>, memref<4x3x2xf32>)
// CHECK-SAME: outs(%{{.*}} : memref<?x384xf16>)
// CHECK-SAME: {w_scale_block = #ggemm.scale_block<128x128>, weight_layout = #ggemm.weight_layout<kn>, x_scale_block = #ggemm.scale_block<1x128>}
func.func @segment_matmul_fp8_kn(%x: memref<?x256xf8E4M3FN>, %w: memref<4x256x384xf8E4M3FN>,
                                 %indptr: memref<5xi32>, %xs: memref<?x2xf32>,
                                 %ws: memref<4x3x2xf32>, %y: memref<?x384xf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xf8E4M3FN>, memref<4x256x384xf8E4M3FN>)
      segments(%indptr : memref<5xi32>)
      scales(%xs, %ws : memref<?x2xf32>, memref<4x3x2xf32>)
      outs(%y : memref<?x384xf16>)
      {weight_layout = #ggemm.weight_layout<kn>,
       x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}

//===----------------------------------------------------------------------===//
// ggemm.masked_matmul
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @masked_matmul_minimal(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<8x256x7168xbf16>, %[[W:[a-z0-9]+]]: memref<8x4096x7168xbf16>, %[[M:[a-z0-9]+]]: memref<8xi32>, %[[Y:[a-z0-9]+]]: memref<8x256x4096xbf16>)
// CHECK: ggemm.masked_matmul ins(%[[X]], %[[W]] : memref<8x256x7168xbf16>, memref<8x4096x7168xbf16>) masked_m(%[[M]] : memref<8xi32>) outs(%[[Y]] : memref<8x256x4096xbf16>){{$}}
func.func @masked_matmul_minimal(%x: memref<8x256x7168xbf16>, %w: memref<8x4096x7168xbf16>,
                                 %counts: memref<8xi32>, %y: memref<8x256x4096xbf16>) {
  ggemm.masked_matmul ins(%x, %w : memref<8x256x7168xbf16>, memref<8x4096x7168xbf16>)
      masked_m(%counts : memref<8xi32>)
      outs(%y : memref<8x256x4096xbf16>)
  return
}

// CHECK-LABEL: func.func @masked_matmul_all(
// CHECK-SAME: %[[B:[a-z0-9]+]]: memref<4x384xf32>, %[[RS:[a-z0-9]+]]: memref<4x64xf32>
// CHECK: ggemm.masked_matmul ins(%{{.*}}, %{{.*}} : memref<4x64x256xf16>, memref<4x256x384xf16>) masked_m(%{{.*}} : memref<4xi64>) bias(%[[B]] : memref<4x384xf32>) row_scale(%[[RS]] : memref<4x64xf32>) outs(%{{.*}} : memref<4x64x384xf32>)
// CHECK-SAME: {config = #ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64, consumer_warpgroups = 1>, epilogue = #ggemm.epilogue<activation = gelu, accumulate = true>, weight_layout = #ggemm.weight_layout<kn>}
func.func @masked_matmul_all(%x: memref<4x64x256xf16>, %w: memref<4x256x384xf16>,
                             %counts: memref<4xi64>, %b: memref<4x384xf32>,
                             %rs: memref<4x64xf32>, %y: memref<4x64x384xf32>) {
  ggemm.masked_matmul ins(%x, %w : memref<4x64x256xf16>, memref<4x256x384xf16>)
      masked_m(%counts : memref<4xi64>)
      bias(%b : memref<4x384xf32>) row_scale(%rs : memref<4x64xf32>)
      outs(%y : memref<4x64x384xf32>)
      {weight_layout = #ggemm.weight_layout<kn>,
       epilogue = #ggemm.epilogue<activation = gelu, accumulate = true>,
       config = #ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64, consumer_warpgroups = 1>}
  return
}

// FP8 scales of a 3-D activation carry the group dimension in front.
// CHECK-LABEL: func.func @masked_matmul_fp8(
// CHECK: scales(%{{.*}}, %{{.*}} : memref<8x64x4xf32>, memref<8x2x4xf32>)
// CHECK-SAME: {w_scale_block = #ggemm.scale_block<128x128>, x_scale_block = #ggemm.scale_block<1x128>}
// CHECK: scales(%{{.*}}, %{{.*}} : memref<1xf32>, memref<8xf32>)
// CHECK-SAME: {w_scale_block = #ggemm.scale_block<tensor>, x_scale_block = #ggemm.scale_block<tensor>}
// CHECK: scales(%{{.*}}, %{{.*}} : memref<8x64xf32>, memref<8x256xf32>)
// CHECK-SAME: {w_scale_block = #ggemm.scale_block<per_row>, x_scale_block = #ggemm.scale_block<per_row>}
func.func @masked_matmul_fp8(%x: memref<8x64x512xf8E4M3FN>, %w: memref<8x256x512xf8E4M3FN>,
                             %counts: memref<8xi32>, %y: memref<8x64x256xbf16>,
                             %xs_blk: memref<8x64x4xf32>, %ws_blk: memref<8x2x4xf32>,
                             %xs_t: memref<1xf32>, %ws_t: memref<8xf32>,
                             %xs_row: memref<8x64xf32>, %ws_row: memref<8x256xf32>) {
  ggemm.masked_matmul ins(%x, %w : memref<8x64x512xf8E4M3FN>, memref<8x256x512xf8E4M3FN>)
      masked_m(%counts : memref<8xi32>)
      scales(%xs_blk, %ws_blk : memref<8x64x4xf32>, memref<8x2x4xf32>)
      outs(%y : memref<8x64x256xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  ggemm.masked_matmul ins(%x, %w : memref<8x64x512xf8E4M3FN>, memref<8x256x512xf8E4M3FN>)
      masked_m(%counts : memref<8xi32>)
      scales(%xs_t, %ws_t : memref<1xf32>, memref<8xf32>)
      outs(%y : memref<8x64x256xbf16>)
      {x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = #ggemm.scale_block<tensor>}
  ggemm.masked_matmul ins(%x, %w : memref<8x64x512xf8E4M3FN>, memref<8x256x512xf8E4M3FN>)
      masked_m(%counts : memref<8xi32>)
      scales(%xs_row, %ws_row : memref<8x64xf32>, memref<8x256xf32>)
      outs(%y : memref<8x64x256xbf16>)
      {x_scale_block = #ggemm.scale_block<per_row>, w_scale_block = #ggemm.scale_block<per_row>}
  return
}

//===----------------------------------------------------------------------===//
// ggemm.batched_matmul
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @batched_matmul_minimal(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<4x100x256xbf16>, %[[W:[a-z0-9]+]]: memref<4x256x256xbf16>, %[[Y:[a-z0-9]+]]: memref<4x100x256xf32>)
// CHECK: ggemm.batched_matmul ins(%[[X]], %[[W]] : memref<4x100x256xbf16>, memref<4x256x256xbf16>) outs(%[[Y]] : memref<4x100x256xf32>){{$}}
func.func @batched_matmul_minimal(%x: memref<4x100x256xbf16>, %w: memref<4x256x256xbf16>,
                                  %y: memref<4x100x256xf32>) {
  ggemm.batched_matmul ins(%x, %w : memref<4x100x256xbf16>, memref<4x256x256xbf16>)
      outs(%y : memref<4x100x256xf32>)
  return
}

// CHECK-LABEL: func.func @batched_matmul_all(
// CHECK: ggemm.batched_matmul ins(%{{.*}}, %{{.*}} : memref<?x?x512xf8E4M3FN>, memref<?x512x256xf8E4M3FN>) scales(%{{.*}}, %{{.*}} : memref<?x?x4xf32>, memref<?x2x4xf32>) bias(%{{.*}} : memref<?x256xf32>) row_scale(%{{.*}} : memref<?x?xf32>) outs(%{{.*}} : memref<?x?x256xbf16>)
// CHECK-SAME: {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 128, stages = 3>, epilogue = #ggemm.epilogue<activation = relu>, w_scale_block = #ggemm.scale_block<128x128>, weight_layout = #ggemm.weight_layout<kn>, x_scale_block = #ggemm.scale_block<1x128>}
func.func @batched_matmul_all(%x: memref<?x?x512xf8E4M3FN>, %w: memref<?x512x256xf8E4M3FN>,
                              %xs: memref<?x?x4xf32>, %ws: memref<?x2x4xf32>,
                              %b: memref<?x256xf32>, %rs: memref<?x?xf32>,
                              %y: memref<?x?x256xbf16>) {
  ggemm.batched_matmul ins(%x, %w : memref<?x?x512xf8E4M3FN>, memref<?x512x256xf8E4M3FN>)
      scales(%xs, %ws : memref<?x?x4xf32>, memref<?x2x4xf32>)
      bias(%b : memref<?x256xf32>) row_scale(%rs : memref<?x?xf32>)
      outs(%y : memref<?x?x256xbf16>)
      {weight_layout = #ggemm.weight_layout<kn>,
       epilogue = #ggemm.epilogue<activation = relu>,
       x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>,
       config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 128, stages = 3>}
  return
}

//===----------------------------------------------------------------------===//
// ggemm.segment_matmul_k
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @segment_matmul_k_minimal(
// CHECK-SAME: %[[DY:[a-z0-9]+]]: memref<?x4096xbf16>, %[[X:[a-z0-9]+]]: memref<?x7168xbf16>, %[[P:[a-z0-9]+]]: memref<9xi32>, %[[DW:[a-z0-9]+]]: memref<8x4096x7168xf32>)
// CHECK: ggemm.segment_matmul_k ins(%[[DY]], %[[X]] : memref<?x4096xbf16>, memref<?x7168xbf16>) segments(%[[P]] : memref<9xi32>) outs(%[[DW]] : memref<8x4096x7168xf32>){{$}}
func.func @segment_matmul_k_minimal(%dy: memref<?x4096xbf16>, %x: memref<?x7168xbf16>,
                                    %indptr: memref<9xi32>, %dw: memref<8x4096x7168xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x4096xbf16>, memref<?x7168xbf16>)
      segments(%indptr : memref<9xi32>)
      outs(%dw : memref<8x4096x7168xf32>)
  return
}

// CHECK-LABEL: func.func @segment_matmul_k_all(
// CHECK: ggemm.segment_matmul_k ins(%{{.*}}, %{{.*}} : memref<?x256xf16>, memref<?x512xf16>) segments(%{{.*}} : memref<5xi64>) outs(%{{.*}} : memref<4x512x256xbf16>)
// CHECK-SAME: {accumulate, config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>, weight_layout = #ggemm.weight_layout<kn>}
func.func @segment_matmul_k_all(%dy: memref<?x256xf16>, %x: memref<?x512xf16>,
                                %indptr: memref<5xi64>, %dw: memref<4x512x256xbf16>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x256xf16>, memref<?x512xf16>)
      segments(%indptr : memref<5xi64>)
      outs(%dw : memref<4x512x256xbf16>)
      {weight_layout = #ggemm.weight_layout<kn>, accumulate,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>}
  return
}

//===----------------------------------------------------------------------===//
// ggemm.sort_by_expert
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @sort_by_expert(
// CHECK: ggemm.sort_by_expert ins(%{{.*}} : memref<?xi32>) outs(%{{.*}}, %{{.*}}, %{{.*}} : memref<257xi32>, memref<?xi32>, memref<?xi32>) {topk = 8 : i64}
// CHECK: ggemm.sort_by_expert ins(%{{.*}} : memref<16xi64>) outs(%{{.*}}, %{{.*}}, %{{.*}} : memref<9xi32>, memref<16xi32>, memref<?xi32>) {topk = 2 : i64}
func.func @sort_by_expert(%ids: memref<?xi32>, %indptr: memref<257xi32>,
                          %rows: memref<?xi32>, %pairs: memref<?xi32>,
                          %ids64: memref<16xi64>, %indptr8: memref<9xi32>,
                          %rows16: memref<16xi32>) {
  ggemm.sort_by_expert ins(%ids : memref<?xi32>)
      outs(%indptr, %rows, %pairs : memref<257xi32>, memref<?xi32>, memref<?xi32>)
      {topk = 8}
  ggemm.sort_by_expert ins(%ids64 : memref<16xi64>)
      outs(%indptr8, %rows16, %pairs : memref<9xi32>, memref<16xi32>, memref<?xi32>)
      {topk = 2}
  return
}

//===----------------------------------------------------------------------===//
// ggemm.quantize
//===----------------------------------------------------------------------===//

// The default scale block (1x128) is elided; the scales may be MN-major
// (strided), as the FP8 GEMMs read them; 128x128 weight blocks over 3D w.
// CHECK-LABEL: func.func @quantize(
// CHECK: ggemm.quantize ins(%{{.*}} : memref<?x7168xbf16>) outs(%{{.*}}, %{{.*}} : memref<?x7168xf8E4M3FN>, memref<?x56xf32, strided<[1, ?]>>){{$}}
// CHECK: ggemm.quantize ins(%{{.*}} : memref<?x7168xbf16>) outs(%{{.*}}, %{{.*}} : memref<?x7168xf8E4M3FN>, memref<?x56xf32, strided<[1, ?]>>) {scale_block = #ggemm.scale_block<1x128>}
// CHECK: ggemm.quantize ins(%{{.*}} : memref<16x256xf16>) outs(%{{.*}}, %{{.*}} : memref<16x256xf8E5M2>, memref<16x4xf32>) {scale_block = #ggemm.scale_block<1x64>}
// CHECK: ggemm.quantize ins(%{{.*}} : memref<?x?xf32>) outs(%{{.*}}, %{{.*}} : memref<?x?xf8E4M3FN>, memref<?x?xf32>){{$}}
// CHECK: ggemm.quantize ins(%{{.*}} : memref<4x300x256xbf16>) outs(%{{.*}}, %{{.*}} : memref<4x300x256xf8E4M3FN>, memref<4x3x2xf32>) {scale_block = #ggemm.scale_block<128x128>}
func.func @quantize(%x: memref<?x7168xbf16>, %q: memref<?x7168xf8E4M3FN>,
                    %s: memref<?x56xf32, strided<[1, ?]>>,
                    %x16: memref<16x256xf16>, %q5: memref<16x256xf8E5M2>, %s4: memref<16x4xf32>,
                    %xd: memref<?x?xf32>, %qd: memref<?x?xf8E4M3FN>, %sd: memref<?x?xf32>,
                    %w: memref<4x300x256xbf16>, %wq: memref<4x300x256xf8E4M3FN>,
                    %ws: memref<4x3x2xf32>) {
  ggemm.quantize ins(%x : memref<?x7168xbf16>)
      outs(%q, %s : memref<?x7168xf8E4M3FN>, memref<?x56xf32, strided<[1, ?]>>)
  ggemm.quantize ins(%x : memref<?x7168xbf16>)
      outs(%q, %s : memref<?x7168xf8E4M3FN>, memref<?x56xf32, strided<[1, ?]>>)
      {scale_block = #ggemm.scale_block<1x128>}
  ggemm.quantize ins(%x16 : memref<16x256xf16>)
      outs(%q5, %s4 : memref<16x256xf8E5M2>, memref<16x4xf32>)
      {scale_block = #ggemm.scale_block<1x64>}
  ggemm.quantize ins(%xd : memref<?x?xf32>)
      outs(%qd, %sd : memref<?x?xf8E4M3FN>, memref<?x?xf32>)
  ggemm.quantize ins(%w : memref<4x300x256xbf16>)
      outs(%wq, %ws : memref<4x300x256xf8E4M3FN>, memref<4x3x2xf32>)
      {scale_block = #ggemm.scale_block<128x128>}
  return
}

//===----------------------------------------------------------------------===//
// Tile level: ggemm.foreach_tile, weight_index, zero_accumulator, load_tile,
// mma, mma_wait, store_tile; !ggemm.tile, !ggemm.accumulator
//===----------------------------------------------------------------------===//

// The K-ragged pieces: a segment's clamped rows and loads masked at its
// end (ggemm.segment_matmul_k's tile program).
// CHECK-LABEL: func.func @tile_k_ragged(
// CHECK-SAME: %[[DY:[a-z0-9]+]]: memref<?x128xbf16>, %[[P:[a-z0-9]+]]: memref<?xi64>, %[[G:[a-z0-9]+]]: index, %[[T:[a-z0-9]+]]: index, %[[M:[a-z0-9]+]]: index)
// CHECK: %[[BEGIN:.+]], %[[END:.+]] = ggemm.segment_bounds %[[P]][%[[G]]] num_rows(%[[T]]) : memref<?xi64>
// CHECK-NEXT: ggemm.load_tile %[[DY]][%[[BEGIN]], %[[M]]] k_end(%[[END]]) : memref<?x128xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
// CHECK-NEXT: ggemm.load_tile %[[DY]][%[[BEGIN]], %[[M]]] : memref<?x128xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
func.func @tile_k_ragged(%dy: memref<?x128xbf16>, %indptr: memref<?xi64>,
                         %g: index, %t: index, %m: index) {
  %begin, %end = ggemm.segment_bounds %indptr[%g] num_rows(%t) : memref<?xi64>
  %a = ggemm.load_tile %dy[%begin, %m] k_end(%end)
      : memref<?x128xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
  %b = ggemm.load_tile %dy[%begin, %m]
      : memref<?x128xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
  return
}

// A segment tile program with its K loop: weight indices, both tile
// layouts, bias, row scale and an epilogue. Body arguments and map_tile
// results are named after what they are.
// CHECK-LABEL: func.func @tile_segment(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x256xbf16>, %[[W:[a-z0-9]+]]: memref<4x128x256xbf16>, %[[P:[a-z0-9]+]]: memref<9xi32>, %[[IDX:[a-z0-9]+]]: memref<8xi32>, %[[B:[a-z0-9]+]]: memref<4x128xf32>, %[[RS:[a-z0-9]+]]: memref<?xf32>, %[[Y:[a-z0-9]+]]: memref<?x128xbf16>, %[[G:[a-z0-9]+]]: index, %[[M:[a-z0-9]+]]: index, %[[N:[a-z0-9]+]]: index, %[[KB:[a-z0-9]+]]: index)
// CHECK: ggemm.foreach_tile segment rows(%[[P]] : memref<9xi32>) weights(%[[IDX]] : memref<8xi32>) num_weights(%[[G]]) groups(%[[G]]) rows_per_group(%[[G]]) num_rows(%[[M]]) num_cols(%[[N]]) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
// CHECK-NEXT: ^bb0(%[[GRP:group]]: index, %[[ROW:row]]: index, %[[END:row_end]]: index, %[[COL:col]]: index):
// CHECK-NEXT: %[[WIDX:.+]] = ggemm.weight_index %[[IDX]][%[[GRP]]] : memref<8xi32>
// CHECK: %[[ZERO:.+]] = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
// CHECK-NEXT: %[[ACC:.+]] = scf.for %[[K:.+]] = %{{.+}} to %[[KB]] step %{{.+}} iter_args(%[[A:.+]] = %[[ZERO]]) -> (!ggemm.accumulator<128x128xf32>) {
// CHECK-NEXT: %[[TA:.+]] = ggemm.load_tile %[[X]][%[[ROW]], %[[K]]] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
// CHECK-NEXT: %[[TB:.+]] = ggemm.load_tile %[[W]][%[[WIDX]], %[[COL]], %[[K]]] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
// CHECK-NEXT: %[[NEXT:.+]] = ggemm.mma %[[TA]], %[[TB]], %[[A]] : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<128x128xf32>
// CHECK-NEXT: scf.yield %[[NEXT]] : !ggemm.accumulator<128x128xf32>
// CHECK: ggemm.store_tile %[[ACC]] to %[[Y]] row(%[[ROW]]) row_end(%[[END]]) col(%[[COL]]) bias(%[[B]][%[[WIDX]]] : memref<4x128xf32>) row_scale(%[[RS]] : memref<?xf32>) {epilogue = #ggemm.epilogue<activation = silu>} : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
// CHECK-NEXT: }
func.func @tile_segment(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                        %indptr: memref<9xi32>, %idx: memref<8xi32>,
                        %b: memref<4x128xf32>, %rs: memref<?xf32>,
                        %y: memref<?x128xbf16>, %groups: index, %m: index, %n: index,
                        %kblocks: index) {
  ggemm.foreach_tile segment rows(%indptr : memref<9xi32>)
      weights(%idx : memref<8xi32>) num_weights(%groups) groups(%groups)
      rows_per_group(%groups) num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %widx = ggemm.weight_index %idx[%g] : memref<8xi32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
    %acc = scf.for %k = %c0 to %kblocks step %c1 iter_args(%a = %zero)
        -> (!ggemm.accumulator<128x128xf32>) {
      %ta = ggemm.load_tile %x[%row, %k] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
      %tb = ggemm.load_tile %w[%widx, %col, %k]
          : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
      %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>
          -> !ggemm.accumulator<128x128xf32>
      scf.yield %next : !ggemm.accumulator<128x128xf32>
    }
    ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col)
        bias(%b[%widx] : memref<4x128xf32>) row_scale(%rs : memref<?xf32>)
        {epilogue = #ggemm.epilogue<activation = silu>}
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
    ggemm.yield
  }
  return
}

// Masked rows, an mn_major tile of a kn weight, an mma with a pending
// group and its wait, a store without optional operands; an explicit
// terminator is elided.
// CHECK-LABEL: func.func @tile_masked(
// CHECK: ggemm.foreach_tile masked rows(%{{.*}} : memref<4xi64>) groups(%{{.*}}) rows_per_group(%{{.*}}) num_rows(%{{.*}}) num_cols(%{{.*}}) config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, consumer_warpgroups = 1, raster = along_m>) {
// CHECK: ggemm.load_tile %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : memref<4x256x64xf16> -> !ggemm.tile<64x64xf16, mn_major>
// CHECK: %[[R:.+]] = ggemm.mma %{{.*}}, %{{.*}}, %{{.*}} {pending = 1 : i64} : !ggemm.tile<64x64xf16>, !ggemm.tile<64x64xf16, mn_major> -> !ggemm.accumulator<64x64xf32>
// CHECK-NEXT: %[[D:.+]] = ggemm.mma_wait %[[R]] : !ggemm.accumulator<64x64xf32>
// CHECK-NEXT: ggemm.store_tile %[[D]] to %{{.*}} row(%{{.*}}) row_end(%{{.*}}) col(%{{.*}}) : !ggemm.accumulator<64x64xf32>, memref<?x64xf32>
// CHECK-NEXT: }
func.func @tile_masked(%x: memref<?x256xf16>, %w: memref<4x256x64xf16>, %counts: memref<4xi64>,
                       %y: memref<?x64xf32>, %groups: index, %mmax: index, %m: index,
                       %n: index) {
  ggemm.foreach_tile masked rows(%counts : memref<4xi64>) groups(%groups)
      rows_per_group(%mmax) num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, consumer_warpgroups = 1,
              raster = along_m>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %c0 = arith.constant 0 : index
    %zero = ggemm.zero_accumulator : !ggemm.accumulator<64x64xf32>
    %ta = ggemm.load_tile %x[%row, %c0] : memref<?x256xf16> -> !ggemm.tile<64x64xf16>
    %tb = ggemm.load_tile %w[%g, %c0, %col]
        : memref<4x256x64xf16> -> !ggemm.tile<64x64xf16, mn_major>
    %acc = ggemm.mma %ta, %tb, %zero {pending = 1}
        : !ggemm.tile<64x64xf16>, !ggemm.tile<64x64xf16, mn_major>
        -> !ggemm.accumulator<64x64xf32>
    %done = ggemm.mma_wait %acc : !ggemm.accumulator<64x64xf32>
    ggemm.store_tile %done to %y row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<64x64xf32>, memref<?x64xf32>
  }
  return
}

// FP8 epilogue scales on a store: per-row x and per-channel w, then
// tensor-wise x (an index) and one w scale per weight.
// CHECK-LABEL: func.func @store_tile_scales(
// CHECK: ggemm.store_tile %{{.*}} to %{{.*}} row(%{{.*}}) row_end(%{{.*}}) col(%{{.*}}) x_scale(%{{.*}} : memref<?xf32>) w_scale(%{{.*}}[%{{.*}}] : memref<4x128xf32>) : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
// CHECK: ggemm.store_tile %{{.*}} to %{{.*}} row(%{{.*}}) row_end(%{{.*}}) col(%{{.*}}) x_scale(%{{.*}}[%{{.*}}] : memref<1xf32>) w_scale(%{{.*}}[%{{.*}}] : memref<4xf32>) : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
func.func @store_tile_scales(%acc: !ggemm.accumulator<128x128xf32>, %y: memref<?x128xbf16>,
                             %xs_row: memref<?xf32>, %ws_col: memref<4x128xf32>,
                             %xs_t: memref<1xf32>, %ws_t: memref<4xf32>, %i: index) {
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i) x_scale(%xs_row : memref<?xf32>)
      w_scale(%ws_col[%i] : memref<4x128xf32>) : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  ggemm.store_tile %acc to %y row(%i) row_end(%i) col(%i) x_scale(%xs_t[%i] : memref<1xf32>)
      w_scale(%ws_t[%i] : memref<4xf32>) : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  return
}

// Uniform groups have no `rows` operand; FP8 tiles; an empty body.
// CHECK-LABEL: func.func @tile_uniform(
// CHECK: ggemm.foreach_tile uniform groups(%{{.*}}) rows_per_group(%{{.*}}) num_rows(%{{.*}}) num_cols(%{{.*}}) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>) {
// CHECK: ggemm.mma %{{.*}}, %{{.*}}, %{{.*}} : !ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E5M2> -> !ggemm.accumulator<128x128xf32>
// CHECK: ggemm.foreach_tile uniform groups(%{{.*}}) rows_per_group(%{{.*}}) num_rows(%{{.*}}) num_cols(%{{.*}}) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT: }
func.func @tile_uniform(%x: memref<?x512xf8E4M3FN>, %w: memref<4x128x512xf8E5M2>,
                        %y: memref<?x128xf16>, %groups: index, %rows: index, %m: index,
                        %n: index) {
  ggemm.foreach_tile uniform groups(%groups) rows_per_group(%rows) num_rows(%m)
      num_cols(%n) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %c0 = arith.constant 0 : index
    %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
    %ta = ggemm.load_tile %x[%row, %c0]
        : memref<?x512xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
    %tb = ggemm.load_tile %w[%g, %col, %c0]
        : memref<4x128x512xf8E5M2> -> !ggemm.tile<128x128xf8E5M2>
    %acc = ggemm.mma %ta, %tb, %zero
        : !ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E5M2>
        -> !ggemm.accumulator<128x128xf32>
    ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col)
        {epilogue = #ggemm.epilogue<accumulate = true>}
        : !ggemm.accumulator<128x128xf32>, memref<?x128xf16>
  }
  ggemm.foreach_tile uniform groups(%groups) rows_per_group(%rows) num_rows(%m)
      num_cols(%n) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
  }
  return
}

//===----------------------------------------------------------------------===//
// Schedule level: tile_schedule, launch, wait_dependency, prefetch_tile,
// tile_count, map_tile, split_k_sum,
// warp_specialize, create_ring, ring_put, ring_get, ring_release,
// store_drain;
// !ggemm.schedule, !ggemm.ring
//===----------------------------------------------------------------------===//

// A persistent launch: the schedule, the tile count, the grid-stride loop
// and map_tile with its named results.
// CHECK-LABEL: func.func @schedule_persistent(
// CHECK: %[[S:.+]] = ggemm.tile_schedule segment rows(%{{.*}} : memref<9xi32>) groups(%{{.*}}) rows_per_group(%{{.*}}) num_rows(%{{.*}}) num_cols(%{{.*}}) config(#ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m>)
// CHECK-NEXT: ggemm.launch %[[S]] grid(persistent) {
// CHECK-NEXT: ^bb0(%[[CTA:cta]]: index, %[[NUM:num_ctas]]: index):
// CHECK-NEXT: %[[T:.+]] = ggemm.tile_count %[[S]]
// CHECK-NEXT: scf.for %[[ID:.+]] = %[[CTA]] to %[[T]] step %[[NUM]] {
// CHECK-NEXT: %group, %row, %row_end, %col = ggemm.map_tile %[[S]][%[[ID]]]
// A dependent launch: its wait, and an L2 prefetch of a weight tile
// before it.
// CHECK: func.func @schedule_tiles(
// CHECK: ggemm.launch %{{.*}} grid(tiles) dependent_launch {
// CHECK-NEXT: ^bb0(%cta: index, %num_ctas: index):
// CHECK-NEXT: ggemm.prefetch_tile %{{.*}}[%{{.*}}, %cta, %{{.*}}] : memref<1x2112x7168xf8E4M3FN>, !ggemm.tile<64x128xf8E4M3FN>
// CHECK-NEXT: ggemm.wait_dependency
// CHECK-NEXT: ggemm.tile_count
func.func @schedule_persistent(%indptr: memref<9xi32>, %groups: index, %m: index,
                               %n: index) {
  %c0 = arith.constant 0 : index
  %sched = ggemm.tile_schedule segment rows(%indptr : memref<9xi32>) groups(%groups)
      rows_per_group(%c0) num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %total = ggemm.tile_count %sched
    scf.for %t = %cta to %total step %num_ctas {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%t]
    }
  }
  return
}
func.func @schedule_tiles(%groups: index, %rows: index, %m: index, %n: index,
                          %w: memref<1x2112x7168xf8E4M3FN>) {
  %sched = ggemm.tile_schedule uniform groups(%groups) rows_per_group(%rows)
      num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, consumer_warpgroups = 1>)
  ggemm.launch %sched grid(tiles) dependent_launch {
  ^bb0(%cta: index, %num_ctas: index):
    ggemm.prefetch_tile %w[%rows, %cta, %m] : memref<1x2112x7168xf8E4M3FN>, !ggemm.tile<64x128xf8E4M3FN>
    ggemm.wait_dependency
    %total = ggemm.tile_count %sched
    %has = arith.cmpi ult, %cta, %total : index
    scf.if %has {
      %g, %row, %row_end, %col = ggemm.map_tile %sched[%cta]
    }
  }
  return
}

// A split-K launch: the partial sums of a cluster's CTAs added into rank 0.
// CHECK-LABEL: func.func @split_k_sum(
// CHECK: ggemm.launch %{{.*}} grid(persistent) {
// CHECK: %{{.+}} = ggemm.split_k_sum %{{.+}} rank(%{{.+}}) round(%{{.+}}) more(%{{.+}}) : !ggemm.accumulator<64x8xf32>
func.func @split_k_sum(%i: index, %more: i1) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 8, block_n = 64, block_k = 128,
                                consumer_warpgroups = 1, swap_ab = true, split_k = 8>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %c8 = arith.constant 8 : index
    %rank = arith.remui %cta, %c8 : index
    %acc = ggemm.zero_accumulator : !ggemm.accumulator<64x8xf32>
    %sum = ggemm.split_k_sum %acc rank(%rank) round(%i) more(%more)
        : !ggemm.accumulator<64x8xf32>
  }
  return
}

// A split_k_tail launch's sum, taken only for the split units (`active`).
// CHECK-LABEL: func.func @split_k_sum_active(
// CHECK: %{{.+}} = ggemm.split_k_sum %{{.+}} rank(%{{.+}}) round(%{{.+}}) more(%{{.+}}) active(%{{.+}}) : !ggemm.accumulator<192x128xf32>
func.func @split_k_sum_active(%i: index, %tail: i1) {
  %s = ggemm.tile_schedule uniform groups(%i) rows_per_group(%i) num_rows(%i) num_cols(%i)
      config(#ggemm.tile_config<block_m = 192, block_n = 128, block_k = 128,
                                consumer_warpgroups = 3, split_k = 2, split_k_tail = true>)
  ggemm.launch %s grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %acc = ggemm.zero_accumulator : !ggemm.accumulator<192x128xf32>
    %sum = ggemm.split_k_sum %acc rank(%i) round(%c0) more(%false) active(%tail)
        : !ggemm.accumulator<192x128xf32>
  }
  return
}

// Warp roles and a stage ring, with and without its layout.
// CHECK-LABEL: func.func @warp_roles(
// CHECK: %[[RING:.+]] = ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 32768], barrier_offset = 196608, smem_bytes = 196672>) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
// CHECK-NEXT: %{{.+}} = ggemm.create_ring release_count(128) : !ggemm.ring<!ggemm.tile<64x64xbf16>>
// CHECK-NEXT: %[[SCALED:.+]] = ggemm.create_ring release_count(256) : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>, !ggemm.scales<1>>
// CHECK-NEXT: ggemm.warp_specialize producer registers(40) {
// CHECK: ggemm.ring_put %[[RING]][%{{.+}}], %{{.+}}, %{{.+}} : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
// CHECK: } consumers(2) registers(232) {
// CHECK-NEXT: %[[T:.+]]:2 = ggemm.ring_get %[[RING]][%{{.+}}] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
// CHECK-NEXT: %{{.+}}:2 = ggemm.zero_k_tail %[[T]]#0, %[[T]]#1 valid(%{{.+}}) : !ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>
// CHECK-NEXT: %{{.+}} = ggemm.zero_k_tail %[[T]]#1 valid(%{{.+}}) : !ggemm.tile<256x64xbf16>
// CHECK-NEXT: ggemm.ring_release %[[RING]][%{{.+}}] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
// CHECK-NEXT: %{{.+}}:3 = ggemm.ring_get %[[SCALED]][%[[I:.+]]] scale_offsets(%[[I]], %[[I]]) : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>, !ggemm.scales<1>>
// CHECK-NEXT: ggemm.store_drain
// CHECK-NEXT: }
func.func @warp_roles(%x: memref<?x7168xbf16>, %w: memref<8x4096x7168xbf16>,
                      %groups: index, %rows: index, %m: index, %n: index, %i: index) {
  %sched = ggemm.tile_schedule uniform groups(%groups) rows_per_group(%rows)
      num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536],
                                  stage_bytes = [16384, 32768],
                                  barrier_offset = 196608, smem_bytes = 196672>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
    %other = ggemm.create_ring release_count(128) : !ggemm.ring<!ggemm.tile<64x64xbf16>>
    %scaled = ggemm.create_ring release_count(256)
        : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>, !ggemm.scales<1>>
    ggemm.warp_specialize producer registers(40) {
      %ta = ggemm.load_tile %x[%cta, %i] : memref<?x7168xbf16> -> !ggemm.tile<128x64xbf16>
      %tb = ggemm.load_tile %w[%cta, %cta, %i]
          : memref<8x4096x7168xbf16> -> !ggemm.tile<256x64xbf16>
      ggemm.ring_put %ring[%i], %ta, %tb
          : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
    } consumers(2) registers(232) {
      %ta, %tb = ggemm.ring_get %ring[%i]
          : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
      %ma, %mb = ggemm.zero_k_tail %ta, %tb valid(%i)
          : !ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>
      %mc = ggemm.zero_k_tail %tb valid(%i) : !ggemm.tile<256x64xbf16>
      ggemm.ring_release %ring[%i]
          : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
      %sx, %sa, %sw = ggemm.ring_get %scaled[%i] scale_offsets(%i, %i)
          : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>, !ggemm.scales<1>>
      ggemm.store_drain
    }
  }
  return
}

// Ping-pong consumers: the warpgroup index and the turns.
// CHECK-LABEL: func.func @pingpong_roles(
// CHECK: } consumers(2) pingpong registers(232) {
// CHECK-NEXT: %{{.+}} = ggemm.consumer_warpgroup
// CHECK-NEXT: ggemm.turn_wait
// CHECK-NEXT: ggemm.turn_pass
// CHECK-NEXT: }
func.func @pingpong_roles(%groups: index, %rows: index, %m: index, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%groups) rows_per_group(%rows)
      num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64, pingpong = true>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    ggemm.warp_specialize producer registers(40) {
    } consumers(2) pingpong registers(232) {
      %wg = ggemm.consumer_warpgroup
      ggemm.turn_wait
      ggemm.turn_pass
    }
  }
  return
}

// FP8 block scales at the tile level: a K block's scales and its promotion.
// CHECK-LABEL: func.func @scales_and_promote(
// CHECK: %[[SA:.+]] = ggemm.load_scales %{{.+}}[%{{.+}}, %{{.+}}] : memref<?x56xf32, strided<[1, ?]>> -> !ggemm.scales<128>
// CHECK: %[[SB:.+]] = ggemm.load_scales %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : memref<8x32x56xf32> -> !ggemm.scales<1>
// CHECK: ggemm.promote %{{.+}} into %{{.+}} a_scales(%[[SA]] : !ggemm.scales<128>) b_scales(%[[SB]] : !ggemm.scales<1>) : !ggemm.accumulator<128x128xf32>
// CHECK: ggemm.promote %{{.+}} into %{{.+}} b_scales(%[[SB]] : !ggemm.scales<1>) : !ggemm.accumulator<128x128xf32>
func.func @scales_and_promote(%xs: memref<?x56xf32, strided<[1, ?]>>, %ws: memref<8x32x56xf32>,
                              %i: index, %p: !ggemm.accumulator<128x128xf32>,
                              %acc: !ggemm.accumulator<128x128xf32>)
    -> (!ggemm.accumulator<128x128xf32>, !ggemm.accumulator<128x128xf32>) {
  %sa = ggemm.load_scales %xs[%i, %i] : memref<?x56xf32, strided<[1, ?]>> -> !ggemm.scales<128>
  %sb = ggemm.load_scales %ws[%i, %i, %i] : memref<8x32x56xf32> -> !ggemm.scales<1>
  %r = ggemm.promote %p into %acc a_scales(%sa : !ggemm.scales<128>) b_scales(%sb : !ggemm.scales<1>) : !ggemm.accumulator<128x128xf32>
  %r2 = ggemm.promote %p into %acc b_scales(%sb : !ggemm.scales<1>) : !ggemm.accumulator<128x128xf32>
  return %r, %r2 : !ggemm.accumulator<128x128xf32>, !ggemm.accumulator<128x128xf32>
}

// A 192-column tile starts 0 or 64 columns into a 128-column weight-scale
// block: its promotion takes the offset and the block.
// CHECK-LABEL: func.func @promote_with_offset(
// CHECK: ggemm.promote %{{.+}} into %{{.+}} b_scales(%{{.+}} : !ggemm.scales<2>) b_offset(%{{.+}}) {b_block = 128 : i64} : !ggemm.accumulator<128x192xf32>
func.func @promote_with_offset(%p: !ggemm.accumulator<128x192xf32>,
                               %acc: !ggemm.accumulator<128x192xf32>,
                               %sb: !ggemm.scales<2>, %off: index)
    -> !ggemm.accumulator<128x192xf32> {
  %r = ggemm.promote %p into %acc b_scales(%sb : !ggemm.scales<2>) b_offset(%off) {b_block = 128 : i64} : !ggemm.accumulator<128x192xf32>
  return %r : !ggemm.accumulator<128x192xf32>
}
