// ggemm-tile: problem-level ops become a persistent ggemm.foreach_tile whose
// body is one tile_mma and one tile_store; 3-D operands are collapsed to
// matrices. Cases the pass cannot tile are diagnosed.
// RUN: gemm-opt %s -split-input-file -ggemm-tile -verify-diagnostics | FileCheck %s

// Segments: G = size(seg_indptr) - 1, no rows per group; weight indices,
// bias, row scale and the epilogue go to the tile ops.
// CHECK-LABEL: func.func @segment(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x256xbf16>, %[[W:[a-z0-9]+]]: memref<2x128x256xbf16>, %[[P:[a-z0-9]+]]: memref<5xi64>, %[[IDX:[a-z0-9]+]]: memref<4xi32>, %[[B:[a-z0-9]+]]: memref<2x128xf32>, %[[RS:[a-z0-9]+]]: memref<?xf32>, %[[Y:[a-z0-9]+]]: memref<?x128xf32>)
// CHECK-DAG: %[[PTRS:.+]] = memref.dim %[[P]], %c0{{(_[0-9]+)?}} : memref<5xi64>
// CHECK-DAG: %[[G:.+]] = arith.subi %[[PTRS]], %c1{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[M:.+]] = memref.dim %[[X]], %c0{{(_[0-9]+)?}} : memref<?x256xbf16>
// CHECK-DAG: %[[N:.+]] = memref.dim %[[W]], %c1{{(_[0-9]+)?}} : memref<2x128x256xbf16>
// CHECK: ggemm.foreach_tile segment rows(%[[P]] : memref<5xi64>) groups(%[[G]]) rows_per_group(%{{.+}}) num_rows(%[[M]]) num_cols(%[[N]]) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) persistent {
// CHECK-NEXT: ^bb0(%[[GRP:.+]]: index, %[[ROW:.+]]: index, %[[END:.+]]: index, %[[COL:.+]]: index):
// CHECK-NEXT: %[[ACC:.+]] = ggemm.tile_mma ins(%[[X]], %[[W]] : memref<?x256xbf16>, memref<2x128x256xbf16>) weight_indices(%[[IDX]] : memref<4xi32>) group(%[[GRP]]) row(%[[ROW]]) col(%[[COL]]) {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>, weight_layout = #ggemm.weight_layout<nk>} -> !ggemm.accumulator<128x128xf32>
// CHECK-NEXT: ggemm.tile_store %[[ACC]] to %[[Y]] weight_indices(%[[IDX]] : memref<4xi32>) bias(%[[B]] : memref<2x128xf32>) row_scale(%[[RS]] : memref<?xf32>) group(%[[GRP]]) row(%[[ROW]]) row_end(%[[END]]) col(%[[COL]]) {epilogue = #ggemm.epilogue<activation = relu>} : !ggemm.accumulator<128x128xf32>, memref<?x128xf32>
// CHECK-NEXT: }
// CHECK-NOT: ggemm.segment_matmul
func.func @segment(%x: memref<?x256xbf16>, %w: memref<2x128x256xbf16>, %indptr: memref<5xi64>,
                   %idx: memref<4xi32>, %b: memref<2x128xf32>, %rs: memref<?xf32>,
                   %y: memref<?x128xf32>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<2x128x256xbf16>)
      segments(%indptr : memref<5xi64>) weight_indices(%idx : memref<4xi32>)
      bias(%b : memref<2x128xf32>) row_scale(%rs : memref<?xf32>)
      outs(%y : memref<?x128xf32>)
      {epilogue = #ggemm.epilogue<activation = relu>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>}
  return
}

// -----

// Masked groups: x, y and the row scales collapse to [G * Mmax, ...]; the
// counts become the loop's rows; a kn weight's N is its dimension 2.
// CHECK-LABEL: func.func @masked(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<4x64x256xf16>, %[[W:[a-z0-9]+]]: memref<4x256x192xf16>, %[[CNT:[a-z0-9]+]]: memref<4xi32>, %[[B:[a-z0-9]+]]: memref<4x192xf32>, %[[RS:[a-z0-9]+]]: memref<4x64xf32>, %[[Y:[a-z0-9]+]]: memref<4x64x192xbf16>)
// CHECK-DAG: %[[G:.+]] = memref.dim %[[X]], %c0{{(_[0-9]+)?}} : memref<4x64x256xf16>
// CHECK-DAG: %[[MMAX:.+]] = memref.dim %[[X]], %c1{{(_[0-9]+)?}} : memref<4x64x256xf16>
// CHECK-DAG: %[[X2:.+]] = memref.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : memref<4x64x256xf16> into memref<256x256xf16>
// CHECK-DAG: %[[Y2:.+]] = memref.collapse_shape %[[Y]] {{\[}}[0, 1], [2]] : memref<4x64x192xbf16> into memref<256x192xbf16>
// CHECK-DAG: %[[RS2:.+]] = memref.collapse_shape %[[RS]] {{\[}}[0, 1]] : memref<4x64xf32> into memref<256xf32>
// CHECK-DAG: %[[M:.+]] = memref.dim %[[X2]], %{{.+}} : memref<256x256xf16>
// CHECK-DAG: %[[N:.+]] = memref.dim %[[W]], %c2{{(_[0-9]+)?}} : memref<4x256x192xf16>
// CHECK: ggemm.foreach_tile masked rows(%[[CNT]] : memref<4xi32>) groups(%[[G]]) rows_per_group(%[[MMAX]]) num_rows(%[[M]]) num_cols(%[[N]]) config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, consumer_warpgroups = 1>) persistent {
// CHECK: ggemm.tile_mma ins(%[[X2]], %[[W]] : memref<256x256xf16>, memref<4x256x192xf16>) group
// CHECK-SAME: weight_layout = #ggemm.weight_layout<kn>} -> !ggemm.accumulator<64x64xf32>
// CHECK-NEXT: ggemm.tile_store %{{.+}} to %[[Y2]] bias(%[[B]] : memref<4x192xf32>) row_scale(%[[RS2]] : memref<256xf32>) group
// CHECK-SAME: : !ggemm.accumulator<64x64xf32>, memref<256x192xbf16>
// CHECK-NOT: ggemm.masked_matmul
func.func @masked(%x: memref<4x64x256xf16>, %w: memref<4x256x192xf16>, %counts: memref<4xi32>,
                  %b: memref<4x192xf32>, %rs: memref<4x64xf32>, %y: memref<4x64x192xbf16>) {
  ggemm.masked_matmul ins(%x, %w : memref<4x64x256xf16>, memref<4x256x192xf16>)
      masked_m(%counts : memref<4xi32>) bias(%b : memref<4x192xf32>)
      row_scale(%rs : memref<4x64xf32>) outs(%y : memref<4x64x192xbf16>)
      {weight_layout = #ggemm.weight_layout<kn>,
       config = #ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64,
                                   consumer_warpgroups = 1>}
  return
}

// -----

// Batches: uniform groups, no `rows` operand; dynamic sizes collapse to a
// dynamic row count.
// CHECK-LABEL: func.func @batched(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x?x256xbf16>, %[[W:[a-z0-9]+]]: memref<?x128x256xbf16>, %[[Y:[a-z0-9]+]]: memref<?x?x128xf32>)
// CHECK-DAG: %[[B:.+]] = memref.dim %[[X]], %c0{{(_[0-9]+)?}} : memref<?x?x256xbf16>
// CHECK-DAG: %[[ROWS:.+]] = memref.dim %[[X]], %c1{{(_[0-9]+)?}} : memref<?x?x256xbf16>
// CHECK-DAG: %[[X2:.+]] = memref.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : memref<?x?x256xbf16> into memref<?x256xbf16>
// CHECK-DAG: %[[Y2:.+]] = memref.collapse_shape %[[Y]] {{\[}}[0, 1], [2]] : memref<?x?x128xf32> into memref<?x128xf32>
// CHECK: ggemm.foreach_tile uniform groups(%[[B]]) rows_per_group(%[[ROWS]]) num_rows(%{{.+}}) num_cols(%{{.+}}) config(#ggemm.tile_config<block_m = 128, block_n = 64, block_k = 64, stages = 2, raster = along_m>) persistent {
// CHECK: ggemm.tile_mma ins(%[[X2]], %[[W]] : memref<?x256xbf16>, memref<?x128x256xbf16>) group
// CHECK: ggemm.tile_store %{{.+}} to %[[Y2]] group
// CHECK-SAME: {epilogue = #ggemm.epilogue<activation = gelu, accumulate = true>} : !ggemm.accumulator<128x64xf32>, memref<?x128xf32>
func.func @batched(%x: memref<?x?x256xbf16>, %w: memref<?x128x256xbf16>, %y: memref<?x?x128xf32>) {
  ggemm.batched_matmul ins(%x, %w : memref<?x?x256xbf16>, memref<?x128x256xbf16>)
      outs(%y : memref<?x?x128xf32>)
      {epilogue = #ggemm.epilogue<activation = gelu, accumulate = true>,
       config = #ggemm.tile_config<block_m = 128, block_n = 64, block_k = 64, stages = 2,
                                   raster = along_m>}
  return
}

// -----

// Every problem op of the module is tiled; other ops stay.
// CHECK-LABEL: func.func @several(
// CHECK-COUNT-2: ggemm.foreach_tile segment
// CHECK: ggemm.segment_matmul_k
// CHECK: ggemm.quantize
func.func @several(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>, %indptr: memref<5xi32>,
                   %y: memref<?x128xbf16>, %dw: memref<4x128x256xf32>,
                   %q: memref<?x256xf8E4M3FN>, %s: memref<?x2xf32>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
      {config = #ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64,
                                   consumer_warpgroups = 1>}
  ggemm.segment_matmul_k ins(%y, %x : memref<?x128xbf16>, memref<?x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%dw : memref<4x128x256xf32>)
  ggemm.quantize ins(%x : memref<?x256xbf16>) outs(%q, %s : memref<?x256xf8E4M3FN>, memref<?x2xf32>)
  return
}

// -----

func.func @no_config(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                     %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects a tile config: run ggemm-select-config first or write `config = #ggemm.tile_config<...>`}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @fp8(%x: memref<?x256xf8E4M3FN>, %w: memref<4x128x256xf8E4M3FN>,
               %indptr: memref<5xi32>, %xs: memref<?x2xf32>, %ws: memref<4x1x2xf32>,
               %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op FP8 operands have no tile-level lowering yet (scale-block promotion is not implemented)}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xf8E4M3FN>, memref<4x128x256xf8E4M3FN>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<?x2xf32>, memref<4x1x2xf32>)
      outs(%y : memref<?x128xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>}
  return
}

// -----

func.func @swap_ab(%x: memref<8x16x256xbf16>, %w: memref<8x128x256xbf16>, %counts: memref<8xi32>,
                   %y: memref<8x16x128xbf16>) {
  // expected-error @+1 {{'ggemm.masked_matmul' op swap_ab configs need ggemm-swap-ab, which is not implemented yet}}
  ggemm.masked_matmul ins(%x, %w : memref<8x16x256xbf16>, memref<8x128x256xbf16>)
      masked_m(%counts : memref<8xi32>) outs(%y : memref<8x16x128xbf16>)
      {config = #ggemm.tile_config<block_m = 16, block_n = 128, block_k = 64,
                                   consumer_warpgroups = 1, swap_ab = true>}
  return
}

// -----

// Groups padded to 80 rows in memory cannot be seen as one matrix.
func.func @padded_groups(%x: memref<4x64x256xbf16, strided<[20480, 256, 1]>>,
                         %w: memref<4x128x256xbf16>, %counts: memref<4xi32>,
                         %y: memref<4x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.masked_matmul' op expects x to store its groups back to back (dimensions 0 and 1 collapsible into one), got 'memref<4x64x256xbf16, strided<[20480, 256, 1]>>'}}
  ggemm.masked_matmul ins(%x, %w : memref<4x64x256xbf16, strided<[20480, 256, 1]>>, memref<4x128x256xbf16>)
      masked_m(%counts : memref<4xi32>) outs(%y : memref<4x64x128xbf16>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>}
  return
}

// -----

func.func @padded_output(%x: memref<4x64x256xbf16>, %w: memref<4x128x256xbf16>,
                         %y: memref<4x64x128xbf16, strided<[16384, 128, 1]>>) {
  // expected-error @+1 {{'ggemm.batched_matmul' op expects y to store its groups back to back (dimensions 0 and 1 collapsible into one), got 'memref<4x64x128xbf16, strided<[16384, 128, 1]>>'}}
  ggemm.batched_matmul ins(%x, %w : memref<4x64x256xbf16>, memref<4x128x256xbf16>)
      outs(%y : memref<4x64x128xbf16, strided<[16384, 128, 1]>>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>}
  return
}

// -----

func.func @padded_row_scale(%x: memref<4x64x256xbf16>, %w: memref<4x128x256xbf16>,
                            %rs: memref<4x64xf32, strided<[128, 1]>>,
                            %y: memref<4x64x128xbf16>) {
  // expected-error @+1 {{'ggemm.batched_matmul' op expects row_scale to store its groups back to back (dimensions 0 and 1 collapsible into one), got 'memref<4x64xf32, strided<[128, 1]>>'}}
  ggemm.batched_matmul ins(%x, %w : memref<4x64x256xbf16>, memref<4x128x256xbf16>)
      row_scale(%rs : memref<4x64xf32, strided<[128, 1]>>) outs(%y : memref<4x64x128xbf16>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>}
  return
}

// -----

// A dynamic group stride is taken on trust, as memref.collapse_shape does.
// CHECK-LABEL: func.func @dynamic_group_stride(
// CHECK: memref.collapse_shape %{{.+}} {{\[}}[0, 1], [2]] : memref<4x64x256xbf16, strided<[?, 256, 1]>> into memref<256x256xbf16, strided<[256, 1]>>
// CHECK: ggemm.foreach_tile masked
func.func @dynamic_group_stride(%x: memref<4x64x256xbf16, strided<[?, 256, 1]>>,
                                %w: memref<4x128x256xbf16>, %counts: memref<4xi32>,
                                %y: memref<4x64x128xbf16>) {
  ggemm.masked_matmul ins(%x, %w : memref<4x64x256xbf16, strided<[?, 256, 1]>>, memref<4x128x256xbf16>)
      masked_m(%counts : memref<4xi32>) outs(%y : memref<4x64x128xbf16>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>}
  return
}
