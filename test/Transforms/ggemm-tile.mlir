// ggemm-tile: problem-level ops become a ggemm.foreach_tile whose body is
// the tile program: an scf.for over the K blocks that loads the A and B
// tiles of a block and multiplies them into the accumulator, then the
// store with the epilogue. 3-D operands are collapsed to matrices. Cases
// the pass cannot tile are diagnosed.
// RUN: gemm-opt %s -split-input-file -ggemm-tile -verify-diagnostics | FileCheck %s

// Segments: G = size(seg_indptr) - 1, no rows per group; the weight index
// feeds the B tile and the bias row; static K gives a constant block count.
// CHECK-LABEL: func.func @segment(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x256xbf16>, %[[W:[a-z0-9]+]]: memref<2x128x256xbf16>, %[[P:[a-z0-9]+]]: memref<5xi64>, %[[IDX:[a-z0-9]+]]: memref<4xi32>, %[[B:[a-z0-9]+]]: memref<2x128xf32>, %[[RS:[a-z0-9]+]]: memref<?xf32>, %[[Y:[a-z0-9]+]]: memref<?x128xf32>)
// CHECK-DAG: %[[G:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[M:.+]] = memref.dim %[[X]], %c0{{(_[0-9]+)?}} : memref<?x256xbf16>
// CHECK-DAG: %[[N:.+]] = arith.constant 128 : index
// The weight indices go to the tile loop too, with the weight count, so that
// groups whose device-side index is not a weight get no tiles.
// CHECK-DAG: %[[GW:.+]] = arith.constant 2 : index
// CHECK: ggemm.foreach_tile segment rows(%[[P]] : memref<5xi64>) weights(%[[IDX]] : memref<4xi32>) num_weights(%[[GW]]) groups(%[[G]]) rows_per_group(%{{.+}}) num_rows(%[[M]]) num_cols(%[[N]]) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
// CHECK-NEXT: ^bb0(%[[GRP:.+]]: index, %[[ROW:.+]]: index, %[[END:.+]]: index, %[[COL:.+]]: index):
// CHECK-NEXT: %[[WIDX:.+]] = ggemm.weight_index %[[IDX]][%[[GRP]]] : memref<4xi32>
// CHECK-DAG: %[[KB:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK: %[[ZERO:.+]] = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
// CHECK-NEXT: %[[ACC:.+]] = scf.for %[[I:.+]] = %{{.+}} to %[[KB]] step %{{.+}} iter_args(%[[A:.+]] = %[[ZERO]]) -> (!ggemm.accumulator<128x128xf32>) {
// CHECK-NEXT: %[[K:.+]] = arith.muli %[[I]], %[[C64]] : index
// CHECK-NEXT: %[[TA:.+]] = ggemm.load_tile %[[X]][%[[ROW]], %[[K]]] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
// CHECK-NEXT: %[[TB:.+]] = ggemm.load_tile %[[W]][%[[WIDX]], %[[COL]], %[[K]]] : memref<2x128x256xbf16> -> !ggemm.tile<128x64xbf16>
// CHECK-NEXT: %[[NEXT:.+]] = ggemm.mma %[[TA]], %[[TB]], %[[A]] : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<128x128xf32>
// CHECK-NEXT: scf.yield %[[NEXT]] : !ggemm.accumulator<128x128xf32>
// CHECK-NEXT: }
// CHECK-NEXT: ggemm.store_tile %[[ACC]] to %[[Y]] row(%[[ROW]]) row_end(%[[END]]) col(%[[COL]]) bias(%[[B]][%[[WIDX]]] : memref<2x128xf32>) row_scale(%[[RS]] : memref<?xf32>) {epilogue = #ggemm.epilogue<activation = relu>} : !ggemm.accumulator<128x128xf32>, memref<?x128xf32>
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
// counts become the loop's rows; a kn weight gives an mn_major B tile read
// at [group, k, col]; without weight indices the group indexes the bias.
// CHECK-LABEL: func.func @masked(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<4x64x256xf16>, %[[W:[a-z0-9]+]]: memref<4x256x192xf16>, %[[CNT:[a-z0-9]+]]: memref<4xi32>, %[[B:[a-z0-9]+]]: memref<4x192xf32>, %[[RS:[a-z0-9]+]]: memref<4x64xf32>, %[[Y:[a-z0-9]+]]: memref<4x64x192xbf16>)
// CHECK-DAG: %[[G:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[MMAX:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[X2:.+]] = memref.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : memref<4x64x256xf16> into memref<256x256xf16>
// CHECK-DAG: %[[Y2:.+]] = memref.collapse_shape %[[Y]] {{\[}}[0, 1], [2]] : memref<4x64x192xbf16> into memref<256x192xbf16>
// CHECK-DAG: %[[RS2:.+]] = memref.collapse_shape %[[RS]] {{\[}}[0, 1]] : memref<4x64xf32> into memref<256xf32>
// CHECK-DAG: %[[M:.+]] = arith.constant 256 : index
// CHECK-DAG: %[[N:.+]] = arith.constant 192 : index
// CHECK: ggemm.foreach_tile masked rows(%[[CNT]] : memref<4xi32>) groups(%[[G]]) rows_per_group(%[[MMAX]]) num_rows(%[[M]]) num_cols(%[[N]]) config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, consumer_warpgroups = 1>) {
// CHECK-NEXT: ^bb0(%[[GRP:.+]]: index, %[[ROW:.+]]: index, %[[END:.+]]: index, %[[COL:.+]]: index):
// CHECK: ggemm.load_tile %[[X2]][%[[ROW]], %[[K:.+]]] : memref<256x256xf16> -> !ggemm.tile<64x64xf16>
// CHECK-NEXT: ggemm.load_tile %[[W]][%[[GRP]], %[[K]], %[[COL]]] : memref<4x256x192xf16> -> !ggemm.tile<64x64xf16, mn_major>
// CHECK-NEXT: ggemm.mma {{.+}} : !ggemm.tile<64x64xf16>, !ggemm.tile<64x64xf16, mn_major> -> !ggemm.accumulator<64x64xf32>
// CHECK: ggemm.store_tile %{{.+}} to %[[Y2]] row(%[[ROW]]) row_end(%[[END]]) col(%[[COL]]) bias(%[[B]][%[[GRP]]] : memref<4x192xf32>) row_scale(%[[RS2]] : memref<256xf32>) : !ggemm.accumulator<64x64xf32>, memref<256x192xbf16>
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
// CHECK: ggemm.foreach_tile uniform groups(%[[B]]) rows_per_group(%[[ROWS]]) num_rows(%{{.+}}) num_cols(%{{.+}}) config(#ggemm.tile_config<block_m = 128, block_n = 64, block_k = 64, stages = 2, raster = along_m>) {
// CHECK: ggemm.load_tile %[[X2]][{{.+}}] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
// CHECK: ggemm.store_tile %{{.+}} to %[[Y2]] row
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

// Every problem op of the module is tiled; a dynamic K gives a block count
// computed from memref.dim, a dynamic seg_indptr a group count from its
// size.
// CHECK-LABEL: func.func @several(
// CHECK: %[[S:.+]] = memref.dim %{{.+}}, %{{.+}} : memref<?xi32>
// CHECK: arith.subi %[[S]], %{{.+}} : index
// CHECK: ggemm.foreach_tile segment rows(%{{.+}} : memref<?xi32>)
// CHECK: ggemm.foreach_tile segment rows(%{{.+}} : memref<5xi32>)
// CHECK: %[[K:.+]] = memref.dim %{{.+}}, %{{.+}} : memref<?x?xbf16>
// CHECK: %[[SUM:.+]] = arith.addi %[[K]], %{{.+}} : index
// CHECK: arith.divui %[[SUM]], %{{.+}} : index
// CHECK-NOT: ggemm.segment_matmul
func.func @several(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>, %indptr: memref<?xi32>,
                   %y: memref<?x128xbf16>, %xd: memref<?x?xbf16>, %wd: memref<4x128x?xbf16>,
                   %indptr4: memref<5xi32>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x128xbf16>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>}
  ggemm.segment_matmul ins(%xd, %wd : memref<?x?xbf16>, memref<4x128x?xbf16>)
      segments(%indptr4 : memref<5xi32>) outs(%y : memref<?x128xbf16>)
      {config = #ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64,
                                   consumer_warpgroups = 1>}
  return
}

// -----

// K-ragged (segment_matmul_k, nk): a uniform tile loop over dw seen as
// [G * N, K]; the K loop runs over the group's rows from segment_bounds
// in block_k steps, both tiles mn_major and masked at the segment's end
// (k_end); accumulate becomes the store's epilogue.
// CHECK-LABEL: func.func @segment_matmul_k(
// CHECK-SAME: %[[DY:[a-z0-9]+]]: memref<?x128xbf16>, %[[X:[a-z0-9]+]]: memref<?x256xbf16>, %[[P:[a-z0-9]+]]: memref<5xi32>, %[[DW:[a-z0-9]+]]: memref<4x128x256xf32>)
// CHECK-DAG: %[[C128:.+]] = arith.constant 128 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK-DAG: %[[G:.+]] = arith.subi %{{.+}}, %{{.+}} : index
// CHECK-DAG: %[[T:.+]] = memref.dim %[[DY]], %{{.+}} : memref<?x128xbf16>
// CHECK-DAG: %[[FLAT:.+]] = memref.collapse_shape %[[DW]] {{\[\[}}0, 1], [2]] : memref<4x128x256xf32> into memref<512x256xf32>
// CHECK-DAG: %[[ROWS:.+]] = arith.muli %[[G]], %[[C128]] : index
// CHECK: ggemm.foreach_tile uniform groups(%[[G]]) rows_per_group(%[[C128]]) num_rows(%[[ROWS]]) num_cols(%[[C256]]) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) {
// CHECK-NEXT: ^bb0(%[[GRP:group]]: index, %[[ROW:row]]: index, %[[END:row_end]]: index, %[[COL:col]]: index):
// CHECK-NEXT: %[[FIRST:.+]] = arith.muli %[[GRP]], %[[C128]] : index
// CHECK-NEXT: %[[M:.+]] = arith.subi %[[ROW]], %[[FIRST]] : index
// CHECK-NEXT: %[[BEGIN:.+]], %[[KEND:.+]] = ggemm.segment_bounds %[[P]][%[[GRP]]] num_rows(%[[T]]) : memref<5xi32>
// CHECK: %[[LEN:.+]] = arith.subi %[[KEND]], %[[BEGIN]] : index
// CHECK: %[[KB:.+]] = arith.divui %{{.+}}, %{{.+}} : index
// CHECK: %[[ZERO:.+]] = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
// CHECK-NEXT: %[[ACC:.+]] = scf.for %[[I:.+]] = %{{.+}} to %[[KB]] step %{{.+}} iter_args(%[[A:.+]] = %[[ZERO]]) -> (!ggemm.accumulator<128x128xf32>) {
// CHECK-NEXT: %[[OFF:.+]] = arith.muli %[[I]], %{{.+}} : index
// CHECK-NEXT: %[[K:.+]] = arith.addi %[[BEGIN]], %[[OFF]] : index
// CHECK-NEXT: %[[TA:.+]] = ggemm.load_tile %[[DY]][%[[K]], %[[M]]] k_end(%[[KEND]]) : memref<?x128xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
// CHECK-NEXT: %[[TB:.+]] = ggemm.load_tile %[[X]][%[[K]], %[[COL]]] k_end(%[[KEND]]) : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
// CHECK-NEXT: %[[NEXT:.+]] = ggemm.mma %[[TA]], %[[TB]], %[[A]] : !ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<128x64xbf16, mn_major> -> !ggemm.accumulator<128x128xf32>
// CHECK-NEXT: scf.yield %[[NEXT]]
// CHECK: ggemm.store_tile %[[ACC]] to %[[FLAT]] row(%[[ROW]]) row_end(%[[END]]) col(%[[COL]]) {epilogue = #ggemm.epilogue<accumulate = true>, ggemm.k_ragged_layout = #ggemm.weight_layout<nk>} : !ggemm.accumulator<128x128xf32>, memref<512x256xf32>
// CHECK-NOT: ggemm.segment_matmul_k
func.func @segment_matmul_k(%dy: memref<?x128xbf16>, %x: memref<?x256xbf16>,
                            %indptr: memref<5xi32>, %dw: memref<4x128x256xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x128xbf16>, memref<?x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%dw : memref<4x128x256xf32>)
      {accumulate, config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>}
  return
}

// -----

// K-ragged with dy and x transposed ([N, T], [K, T]): k_major tiles at
// [feature, k]; the K loop runs over the block_k-aligned blocks the
// segment overlaps (a TMA box's K coordinate must be 16-byte aligned), so
// its loads are masked at both ends (k_begin, k_end).
// CHECK-LABEL: func.func @segment_matmul_k_transposed(
// CHECK-SAME: %[[DY:[a-z0-9]+]]: memref<128x?xbf16>, %[[X:[a-z0-9]+]]: memref<256x?xbf16>
// CHECK: %[[BEGIN:.+]], %[[KEND:.+]] = ggemm.segment_bounds
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[C63:.+]] = arith.constant 63 : index
// CHECK: %[[FIRSTKB:.+]] = arith.divui %[[BEGIN]], %[[C64]] : index
// CHECK: %[[ROUND:.+]] = arith.addi %[[KEND]], %[[C63]] : index
// CHECK: %[[LASTKB:.+]] = arith.divui %[[ROUND]], %[[C64]] : index
// CHECK: %[[EMPTY:.+]] = arith.cmpi eq, %[[BEGIN]], %[[KEND]] : index
// CHECK: %[[SPAN:.+]] = arith.subi %[[LASTKB]], %[[FIRSTKB]] : index
// CHECK: %[[NKB:.+]] = arith.select %[[EMPTY]], %{{.+}}, %[[SPAN]] : index
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %[[NKB]] step
// CHECK-NEXT: %[[KB:.+]] = arith.addi %[[FIRSTKB]], %[[I]] : index
// CHECK-NEXT: %[[K:.+]] = arith.muli %[[KB]], %[[C64]] : index
// CHECK-NEXT: ggemm.load_tile %[[DY]][%{{.+}}, %[[K]]] k_begin(%[[BEGIN]]) k_end(%[[KEND]]) : memref<128x?xbf16> -> !ggemm.tile<128x64xbf16>
// CHECK-NEXT: ggemm.load_tile %[[X]][%{{.+}}, %[[K]]] k_begin(%[[BEGIN]]) k_end(%[[KEND]]) : memref<256x?xbf16> -> !ggemm.tile<128x64xbf16>
// CHECK-NOT: ggemm.promote
func.func @segment_matmul_k_transposed(%dy: memref<128x?xbf16>, %x: memref<256x?xbf16>,
                                       %indptr: memref<5xi32>, %dw: memref<4x128x256xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<128x?xbf16>, memref<256x?xbf16>)
      segments(%indptr : memref<5xi32>) outs(%dw : memref<4x128x256xf32>)
      {transposed, config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>}
  return
}

// -----

// K-ragged FP8 (transposed, 1x128 scales along the tokens): the 128-token
// scale blocks, one scale per row of each tile at the block, each block's
// product promoted into the sum.
// CHECK-LABEL: func.func @segment_matmul_k_fp8(
// CHECK: scf.for
// CHECK: %[[KB:.+]] = arith.addi
// CHECK: ggemm.load_tile %{{.+}}[%{{.+}}, %{{.+}}] k_begin(%{{.+}}) k_end(%{{.+}}) : memref<128x?xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
// CHECK-NEXT: ggemm.load_tile %{{.+}}[%[[COL:.+]], %{{.+}}] k_begin(%{{.+}}) k_end(%{{.+}}) : memref<256x?xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
// CHECK-NEXT: %[[SA:.+]] = ggemm.load_scales %{{.+}}[%{{.+}}, %[[KB]]] : memref<128x?xf32, strided<[1, ?]>> -> !ggemm.scales<128>
// CHECK-NEXT: %[[SB:.+]] = ggemm.load_scales %{{.+}}[%[[COL]], %[[KB]]] : memref<256x?xf32, strided<[1, ?]>> -> !ggemm.scales<128>
// CHECK-NEXT: %[[Z:.+]] = ggemm.zero_accumulator
// CHECK-NEXT: %[[P:.+]] = ggemm.mma %{{.+}}, %{{.+}}, %[[Z]]
// CHECK-NEXT: ggemm.promote %[[P]] into %{{.+}} a_scales(%[[SA]] : !ggemm.scales<128>) b_scales(%[[SB]] : !ggemm.scales<128>) : !ggemm.accumulator<128x128xf32>
func.func @segment_matmul_k_fp8(%dy: memref<128x?xf8E4M3FN>, %x: memref<256x?xf8E4M3FN>,
                                %indptr: memref<5xi32>,
                                %dys: memref<128x?xf32, strided<[1, ?]>>,
                                %xs: memref<256x?xf32, strided<[1, ?]>>,
                                %dw: memref<4x128x256xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<128x?xf8E4M3FN>, memref<256x?xf8E4M3FN>)
      segments(%indptr : memref<5xi32>)
      scales(%dys, %xs : memref<128x?xf32, strided<[1, ?]>>, memref<256x?xf32, strided<[1, ?]>>)
      outs(%dw : memref<4x128x256xf32>)
      {transposed, config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>}
  return
}

// -----

// K-ragged, kn: dw[g] = x[seg]ᵀ · dy[seg], so x gives the output rows (the
// A tile) and dy its columns; a dynamic seg_indptr gives G from its size;
// no accumulate, no epilogue.
// CHECK-LABEL: func.func @segment_matmul_k_kn(
// CHECK-SAME: %[[DY:[a-z0-9]+]]: memref<?x?xf16>, %[[X:[a-z0-9]+]]: memref<?x192xf16>, %[[P:[a-z0-9]+]]: memref<?xi64>, %[[DW:[a-z0-9]+]]: memref<3x192x?xbf16>)
// CHECK: %[[S:.+]] = memref.dim %[[P]], %{{.+}} : memref<?xi64>
// CHECK: %[[G:.+]] = arith.subi %[[S]], %{{.+}} : index
// CHECK: %[[N:.+]] = memref.dim %[[DY]], %{{.+}} : memref<?x?xf16>
// CHECK: ggemm.foreach_tile uniform groups(%[[G]]) rows_per_group(%{{.+}}) num_rows(%{{.+}}) num_cols(%[[N]])
// CHECK: ggemm.segment_bounds %[[P]][%{{.+}}] num_rows(%{{.+}}) : memref<?xi64>
// CHECK: ggemm.load_tile %[[X]][%{{.+}}, %{{.+}}] k_end(%{{.+}}) : memref<?x192xf16> -> !ggemm.tile<64x64xf16, mn_major>
// CHECK-NEXT: ggemm.load_tile %[[DY]][%{{.+}}, %{{.+}}] k_end(%{{.+}}) : memref<?x?xf16> -> !ggemm.tile<128x64xf16, mn_major>
// CHECK: ggemm.store_tile %{{.+}} to %{{.+}} row(%{{.+}}) row_end(%{{.+}}) col(%{{.+}}) {ggemm.k_ragged_layout = #ggemm.weight_layout<kn>} : !ggemm.accumulator<64x128xf32>, memref<576x?xbf16>
func.func @segment_matmul_k_kn(%dy: memref<?x?xf16>, %x: memref<?x192xf16>,
                               %indptr: memref<?xi64>, %dw: memref<3x192x?xbf16>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x?xf16>, memref<?x192xf16>)
      segments(%indptr : memref<?xi64>) outs(%dw : memref<3x192x?xbf16>)
      {weight_layout = #ggemm.weight_layout<kn>,
       config = #ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64, consumer_warpgroups = 1>}
  return
}

// -----

func.func @segment_matmul_k_swap_ab(%dy: memref<?x128xbf16>, %x: memref<?x256xbf16>,
                                    %indptr: memref<5xi32>, %dw: memref<4x128x256xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects a tile config without swap_ab: the K-ragged tile program is not swapped}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x128xbf16>, memref<?x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%dw : memref<4x128x256xf32>)
      {config = #ggemm.tile_config<block_m = 32, block_n = 128, block_k = 64, consumer_warpgroups = 2, swap_ab = true>}
  return
}

// -----

func.func @segment_matmul_k_padded_dw(%dy: memref<?x128xbf16>, %x: memref<?x256xbf16>,
                                      %indptr: memref<5xi32>,
                                      %dw: memref<4x128x256xf32, strided<[40000, 256, 1]>>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects dw to store its groups back to back (dimensions 0 and 1 collapsible into one), got 'memref<4x128x256xf32, strided<[40000, 256, 1]>>'}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x128xbf16>, memref<?x256xbf16>)
      segments(%indptr : memref<5xi32>)
      outs(%dw : memref<4x128x256xf32, strided<[40000, 256, 1]>>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>}
  return
}

// -----

func.func @segment_matmul_k_no_config(%dy: memref<?x128xbf16>, %x: memref<?x256xbf16>,
                                      %indptr: memref<5xi32>, %dw: memref<4x128x256xf32>) {
  // expected-error @+1 {{'ggemm.segment_matmul_k' op expects a tile config: run ggemm-select-config first or write `config = #ggemm.tile_config<...>`}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x128xbf16>, memref<?x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%dw : memref<4x128x256xf32>)
  return
}

// -----

// ggemm.quantize is a standalone kernel, not tiled: it passes through.
// CHECK-LABEL: func.func @quantize(
// CHECK-NEXT: ggemm.quantize ins(%{{.*}} : memref<?x256xbf16>) outs(%{{.*}}, %{{.*}} : memref<?x256xf8E4M3FN>, memref<?x2xf32>)
// CHECK-NEXT: return
func.func @quantize(%x: memref<?x256xbf16>, %q: memref<?x256xf8E4M3FN>, %s: memref<?x2xf32>) {
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

// FP8 with 1x128 / 128x128 block scales: each K block's product starts from
// its own zero accumulator and is promoted into the running one with the
// block's activation scales (one per tile row, at [row, kb]) and weight
// scales (block_n = 256: two, at [weight, col / 128, kb]).
// CHECK-LABEL: func.func @fp8(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x256xf8E4M3FN>, %[[W:[a-z0-9]+]]: memref<4x256x256xf8E4M3FN>, %[[P:[a-z0-9]+]]: memref<5xi32>, %[[XS:[a-z0-9]+]]: memref<?x2xf32, strided<[1, ?]>>, %[[WS:[a-z0-9]+]]: memref<4x2x2xf32>, %[[Y:[a-z0-9]+]]: memref<?x256xbf16>)
// CHECK: ggemm.foreach_tile segment
// CHECK-NEXT: ^bb0(%[[GRP:.+]]: index, %[[ROW:.+]]: index, %[[END:.+]]: index, %[[COL:.+]]: index):
// CHECK-DAG: %[[C128:.+]] = arith.constant 128 : index
// CHECK: %[[ZERO:.+]] = ggemm.zero_accumulator : !ggemm.accumulator<128x256xf32>
// CHECK-NEXT: %[[ACC:.+]] = scf.for %[[KB:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[A:.+]] = %[[ZERO]]) -> (!ggemm.accumulator<128x256xf32>) {
// CHECK-NEXT: %[[K:.+]] = arith.muli %[[KB]], %[[C128]] : index
// CHECK-NEXT: %[[TA:.+]] = ggemm.load_tile %[[X]][%[[ROW]], %[[K]]] : memref<?x256xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
// CHECK-NEXT: %[[TB:.+]] = ggemm.load_tile %[[W]][%[[GRP]], %[[COL]], %[[K]]] : memref<4x256x256xf8E4M3FN> -> !ggemm.tile<256x128xf8E4M3FN>
// CHECK-NEXT: %[[SA:.+]] = ggemm.load_scales %[[XS]][%[[ROW]], %[[KB]]] : memref<?x2xf32, strided<[1, ?]>> -> !ggemm.scales<128>
// CHECK: %[[CB:.+]] = arith.divui %[[COL]], %{{.+}} : index
// CHECK-NEXT: %[[SB:.+]] = ggemm.load_scales %[[WS]][%[[GRP]], %[[CB]], %[[KB]]] : memref<4x2x2xf32> -> !ggemm.scales<2>
// CHECK-NEXT: %[[PZ:.+]] = ggemm.zero_accumulator : !ggemm.accumulator<128x256xf32>
// CHECK-NEXT: %[[PART:.+]] = ggemm.mma %[[TA]], %[[TB]], %[[PZ]] : !ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<256x128xf8E4M3FN> -> !ggemm.accumulator<128x256xf32>
// CHECK-NEXT: %[[NEXT:.+]] = ggemm.promote %[[PART]] into %[[A]] a_scales(%[[SA]] : !ggemm.scales<128>) b_scales(%[[SB]] : !ggemm.scales<2>) : !ggemm.accumulator<128x256xf32>
// CHECK-NEXT: scf.yield %[[NEXT]] : !ggemm.accumulator<128x256xf32>
// CHECK: ggemm.store_tile %[[ACC]] to %[[Y]]
func.func @fp8(%x: memref<?x256xf8E4M3FN>, %w: memref<4x256x256xf8E4M3FN>,
               %indptr: memref<5xi32>, %xs: memref<?x2xf32, strided<[1, ?]>>,
               %ws: memref<4x2x2xf32>, %y: memref<?x256xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xf8E4M3FN>, memref<4x256x256xf8E4M3FN>)
      segments(%indptr : memref<5xi32>)
      scales(%xs, %ws : memref<?x2xf32, strided<[1, ?]>>, memref<4x2x2xf32>)
      outs(%y : memref<?x256xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>,
       config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 128>}
  return
}

// -----

// block_n = 192 with 128x128 weight scales: a column tile starts at 0 or 64
// within a weight-scale block, so it reads the two blocks from the one of its
// first column and the promotion gets the offset (col mod 128).
// CHECK-LABEL: func.func @fp8_block_192(
// CHECK: ggemm.foreach_tile segment
// CHECK-NEXT: ^bb0(%[[GRP:.+]]: index, %[[ROW:.+]]: index, %[[END:.+]]: index, %[[COL:.+]]: index):
// CHECK: scf.for %[[KB:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[A:.+]] = %{{.+}}) -> (!ggemm.accumulator<128x192xf32>) {
// CHECK: %[[SA:.+]] = ggemm.load_scales
// CHECK: %[[CB:.+]] = arith.divui %[[COL]], %[[C128:.+]] : index
// CHECK-NEXT: %[[SB:.+]] = ggemm.load_scales %{{.+}}[%[[GRP]], %[[CB]], %[[KB]]] : memref<4x4x2xf32> -> !ggemm.scales<2>
// CHECK-NEXT: %[[OFF:.+]] = arith.remui %[[COL]], %[[C128]] : index
// CHECK: %[[PART:.+]] = ggemm.mma
// CHECK-NEXT: ggemm.promote %[[PART]] into %[[A]] a_scales(%[[SA]] : !ggemm.scales<128>) b_scales(%[[SB]] : !ggemm.scales<2>) b_offset(%[[OFF]]) {b_block = 128 : i64} : !ggemm.accumulator<128x192xf32>
func.func @fp8_block_192(%x: memref<?x256xf8E4M3FN>, %w: memref<4x450x256xf8E4M3FN>,
                         %indptr: memref<5xi32>, %xs: memref<?x2xf32, strided<[1, ?]>>,
                         %ws: memref<4x4x2xf32>, %y: memref<?x450xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xf8E4M3FN>, memref<4x450x256xf8E4M3FN>)
      segments(%indptr : memref<5xi32>)
      scales(%xs, %ws : memref<?x2xf32, strided<[1, ?]>>, memref<4x4x2xf32>)
      outs(%y : memref<?x450xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>,
       config = #ggemm.tile_config<block_m = 128, block_n = 192, block_k = 128>}
  return
}

// -----

// FP8 with per-row (per-token) activation and per-channel weight scales:
// they do not change along K, so the K loop is the plain mma loop of
// bf16 and the store scales the whole accumulator, x's scale at the output
// row (no index), w's at [weight, column].
// CHECK-LABEL: func.func @fp8_per_row(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x256xf8E4M3FN>, %[[W:[a-z0-9]+]]: memref<4x128x256xf8E4M3FN>, %[[P:[a-z0-9]+]]: memref<5xi32>, %[[XS:[a-z0-9]+]]: memref<?xf32>, %[[WS:[a-z0-9]+]]: memref<4x128xf32>, %[[Y:[a-z0-9]+]]: memref<?x128xbf16>)
// CHECK: ggemm.foreach_tile segment
// CHECK-NEXT: ^bb0(%[[GRP:.+]]: index, %[[ROW:.+]]: index, %[[END:.+]]: index, %[[COL:.+]]: index):
// CHECK: %[[ACC:.+]] = scf.for %{{.+}} iter_args(%[[A:.+]] = %{{.+}}) -> (!ggemm.accumulator<128x128xf32>) {
// CHECK: %[[TA:.+]] = ggemm.load_tile %[[X]]
// CHECK-NEXT: %[[TB:.+]] = ggemm.load_tile %[[W]]
// CHECK-NEXT: %[[NEXT:.+]] = ggemm.mma %[[TA]], %[[TB]], %[[A]] : !ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN> -> !ggemm.accumulator<128x128xf32>
// CHECK-NEXT: scf.yield %[[NEXT]]
// CHECK-NOT: ggemm.promote
// CHECK: ggemm.store_tile %[[ACC]] to %[[Y]] row(%[[ROW]]) row_end(%[[END]]) col(%[[COL]]) x_scale(%[[XS]] : memref<?xf32>) w_scale(%[[WS]][%[[GRP]]] : memref<4x128xf32>) : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
func.func @fp8_per_row(%x: memref<?x256xf8E4M3FN>, %w: memref<4x128x256xf8E4M3FN>,
                       %indptr: memref<5xi32>, %xs: memref<?xf32>, %ws: memref<4x128xf32>,
                       %y: memref<?x128xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xf8E4M3FN>, memref<4x128x256xf8E4M3FN>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<?xf32>, memref<4x128xf32>)
      outs(%y : memref<?x128xbf16>)
      {x_scale_block = #ggemm.scale_block<per_row>, w_scale_block = #ggemm.scale_block<per_row>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>}
  return
}

// -----

// INT8 (tensor-wise x, per-channel w scales): the K loop of the epilogue-
// scaled FP8 form, but the mma sums into an i32 accumulator (wgmma's exact
// s32.s8.s8), which the store dequantises.
// CHECK-LABEL: func.func @int8_scaled(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x256xi8>, %[[W:[a-z0-9]+]]: memref<4x128x256xi8>, %[[P:[a-z0-9]+]]: memref<5xi32>, %[[XS:[a-z0-9]+]]: memref<1xf32>, %[[WS:[a-z0-9]+]]: memref<4x128xf32>, %[[Y:[a-z0-9]+]]: memref<?x128xf32>)
// CHECK: ggemm.foreach_tile segment
// CHECK-NEXT: ^bb0(%[[GRP:.+]]: index, %[[ROW:.+]]: index, %[[END:.+]]: index, %[[COL:.+]]: index):
// CHECK: %[[ZERO:.+]] = ggemm.zero_accumulator : !ggemm.accumulator<128x128xi32>
// CHECK: %[[ACC:.+]] = scf.for %{{.+}} iter_args(%[[A:.+]] = %[[ZERO]]) -> (!ggemm.accumulator<128x128xi32>) {
// CHECK: %[[TA:.+]] = ggemm.load_tile %[[X]]{{.*}} -> !ggemm.tile<128x128xi8>
// CHECK-NEXT: %[[TB:.+]] = ggemm.load_tile %[[W]]{{.*}} -> !ggemm.tile<128x128xi8>
// CHECK-NEXT: %[[NEXT:.+]] = ggemm.mma %[[TA]], %[[TB]], %[[A]] : !ggemm.tile<128x128xi8>, !ggemm.tile<128x128xi8> -> !ggemm.accumulator<128x128xi32>
// CHECK-NEXT: scf.yield %[[NEXT]]
// CHECK-NOT: ggemm.promote
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: ggemm.store_tile %[[ACC]] to %[[Y]] row(%[[ROW]]) row_end(%[[END]]) col(%[[COL]]) x_scale(%[[XS]][%[[C0]]] : memref<1xf32>) w_scale(%[[WS]][%[[GRP]]] : memref<4x128xf32>) : !ggemm.accumulator<128x128xi32>, memref<?x128xf32>
func.func @int8_scaled(%x: memref<?x256xi8>, %w: memref<4x128x256xi8>,
                       %indptr: memref<5xi32>, %xs: memref<1xf32>, %ws: memref<4x128xf32>,
                       %y: memref<?x128xf32>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xi8>, memref<4x128x256xi8>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<1xf32>, memref<4x128xf32>)
      outs(%y : memref<?x128xf32>)
      {x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = #ggemm.scale_block<per_row>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>}
  return
}

// -----

// An e4m3 y: the store carries y_scale (masked: collapsed to [G * Mmax,
// NB] like y, the MN-major strides kept), and quantises what it computes.
// CHECK-LABEL: func.func @fp8_out_masked(
// CHECK-SAME: %[[YS:[a-z0-9]+]]: memref<4x64x2xf32, strided<[64, 1, 256]>>)
// CHECK-DAG: %[[Y2:.+]] = memref.collapse_shape %{{.+}} {{\[\[}}0, 1], [2]] : memref<4x64x256xf8E4M3FN> into memref<256x256xf8E4M3FN>
// CHECK-DAG: %[[YS2:.+]] = memref.collapse_shape %[[YS]] {{\[\[}}0, 1], [2]] : memref<4x64x2xf32, strided<[64, 1, 256]>> into memref<256x2xf32, strided<[1, 256]>>
// CHECK: ggemm.store_tile %{{.+}} to %[[Y2]] row(%{{.+}}) row_end(%{{.+}}) col(%{{.+}}) y_scale(%[[YS2]] : memref<256x2xf32, strided<[1, 256]>>) : !ggemm.accumulator<64x256xf32>, memref<256x256xf8E4M3FN>
func.func @fp8_out_masked(%x: memref<4x64x512xbf16>, %w: memref<4x256x512xbf16>,
                          %m: memref<4xi32>, %y: memref<4x64x256xf8E4M3FN>,
                          %ys: memref<4x64x2xf32, strided<[64, 1, 256]>>) {
  ggemm.masked_matmul ins(%x, %w : memref<4x64x512xbf16>, memref<4x256x512xbf16>)
      masked_m(%m : memref<4xi32>)
      outs(%y : memref<4x64x256xf8E4M3FN>) y_scale(%ys : memref<4x64x2xf32, strided<[64, 1, 256]>>)
      {config = #ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64, consumer_warpgroups = 1>}
  return
}

// -----

func.func @fp8_out_padded_groups(%x: memref<4x64x512xbf16>, %w: memref<4x256x512xbf16>,
                                 %m: memref<4xi32>, %y: memref<4x64x256xf8E4M3FN>,
                                 %ys: memref<4x64x2xf32, strided<[256, 2, 1]>>) {
  // expected-error @+1 {{'ggemm.masked_matmul' op expects y_scale to store its groups back to back (dimensions 0 and 1 collapsible into one), got 'memref<4x64x2xf32, strided<[256, 2, 1]>>'}}
  ggemm.masked_matmul ins(%x, %w : memref<4x64x512xbf16>, memref<4x256x512xbf16>)
      masked_m(%m : memref<4xi32>)
      outs(%y : memref<4x64x256xf8E4M3FN>) y_scale(%ys : memref<4x64x2xf32, strided<[256, 2, 1]>>)
      {config = #ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64, consumer_warpgroups = 1>}
  return
}

// -----

func.func @int8_kn(%x: memref<?x256xi8>, %w: memref<4x256x128xi8>,
                   %indptr: memref<5xi32>, %xs: memref<1xf32>, %ws: memref<4xf32>,
                   %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects weight_layout nk for 'i8' (wgmma reads FP8 and INT8 operands K-major only)}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xi8>, memref<4x256x128xi8>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<1xf32>, memref<4xf32>)
      outs(%y : memref<?x128xbf16>)
      {weight_layout = #ggemm.weight_layout<kn>,
       x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = #ggemm.scale_block<tensor>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>}
  return
}

// -----

func.func @fp8_scale_block_k(%x: memref<?x256xf8E4M3FN>, %w: memref<4x128x256xf8E4M3FN>,
                             %indptr: memref<5xi32>, %xs: memref<?x1xf32>, %ws: memref<4x1x1xf32>,
                             %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects the tile config's block_k (128) to be the scale blocks' K extent (256): each K block is promoted with one scale}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xf8E4M3FN>, memref<4x128x256xf8E4M3FN>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<?x1xf32>, memref<4x1x1xf32>)
      outs(%y : memref<?x128xbf16>)
      {x_scale_block = #ggemm.scale_block<1x256>, w_scale_block = #ggemm.scale_block<128x256>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>}
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

// -----

// Tensor-wise scales (FlashInfer's bmm_fp8): x's one scale is read at
// index 0, w's at the tile's weight (the batch); the 128x256 tile of the
// bf16 path (no promotion registers). x's [1] scales are not collapsed
// like x (they have no rows).
// CHECK-LABEL: func.func @tensor_wise_batched(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<4x64x256xf8E5M2>, %[[W:[a-z0-9]+]]: memref<4x128x256xf8E5M2>, %[[XS:[a-z0-9]+]]: memref<1xf32>, %[[WS:[a-z0-9]+]]: memref<4xf32>, %[[Y:[a-z0-9]+]]: memref<4x64x128xbf16>)
// CHECK-NOT: memref.collapse_shape %[[XS]]
// CHECK: ggemm.foreach_tile uniform
// CHECK-NEXT: ^bb0(%[[GRP:.+]]: index, %[[ROW:.+]]: index, %[[END:.+]]: index, %[[COL:.+]]: index):
// CHECK: ggemm.mma
// CHECK-NOT: ggemm.promote
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT: ggemm.store_tile %{{.+}} to %{{.+}} row(%[[ROW]]) row_end(%[[END]]) col(%[[COL]]) x_scale(%[[XS]][%[[C0]]] : memref<1xf32>) w_scale(%[[WS]][%[[GRP]]] : memref<4xf32>) : !ggemm.accumulator<128x256xf32>, memref<256x128xbf16>
func.func @tensor_wise_batched(%x: memref<4x64x256xf8E5M2>, %w: memref<4x128x256xf8E5M2>,
                               %xs: memref<1xf32>, %ws: memref<4xf32>,
                               %y: memref<4x64x128xbf16>) {
  ggemm.batched_matmul ins(%x, %w : memref<4x64x256xf8E5M2>, memref<4x128x256xf8E5M2>)
      scales(%xs, %ws : memref<1xf32>, memref<4xf32>) outs(%y : memref<4x64x128xbf16>)
      {x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = #ggemm.scale_block<tensor>,
       config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 128, stages = 3>}
  return
}

// -----

// Masked, per-token x scales ([G, Mmax], collapsed like x to [G * Mmax])
// with one weight scale per group, and a bias and activation after them.
// CHECK-LABEL: func.func @per_row_masked(
// CHECK-SAME: %[[XS:[a-z0-9]+]]: memref<4x64xf32>, %[[WS:[a-z0-9]+]]: memref<4xf32>, %[[B:[a-z0-9]+]]: memref<4x128xf32>
// CHECK: %[[XSC:.+]] = memref.collapse_shape %[[XS]] {{\[}}[0, 1]] : memref<4x64xf32> into memref<256xf32>
// CHECK: ggemm.foreach_tile masked
// CHECK-NEXT: ^bb0(%[[GRP:.+]]: index, %[[ROW:.+]]: index, %[[END:.+]]: index, %[[COL:.+]]: index):
// CHECK: ggemm.store_tile %{{.+}} to %{{.+}} row(%[[ROW]]) row_end(%[[END]]) col(%[[COL]]) bias(%[[B]][%[[GRP]]] : memref<4x128xf32>) x_scale(%[[XSC]] : memref<256xf32>) w_scale(%[[WS]][%[[GRP]]] : memref<4xf32>) {epilogue = #ggemm.epilogue<activation = gelu>}
func.func @per_row_masked(%x: memref<4x64x256xf8E4M3FN>, %w: memref<4x128x256xf8E4M3FN>,
                          %counts: memref<4xi32>, %xs: memref<4x64xf32>, %ws: memref<4xf32>,
                          %b: memref<4x128xf32>, %y: memref<4x64x128xbf16>) {
  ggemm.masked_matmul ins(%x, %w : memref<4x64x256xf8E4M3FN>, memref<4x128x256xf8E4M3FN>)
      masked_m(%counts : memref<4xi32>)
      scales(%xs, %ws : memref<4x64xf32>, memref<4xf32>) bias(%b : memref<4x128xf32>)
      outs(%y : memref<4x64x128xbf16>)
      {x_scale_block = #ggemm.scale_block<per_row>, w_scale_block = #ggemm.scale_block<tensor>,
       epilogue = #ggemm.epilogue<activation = gelu>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>}
  return
}

// -----

// A block kind with a non-block kind: the block-scaled operand would need
// the per-K-block promotion, the other not.
func.func @mixed_block_per_row(%x: memref<?x256xf8E4M3FN>, %w: memref<4x128x256xf8E4M3FN>,
                               %indptr: memref<5xi32>, %xs: memref<?x2xf32>, %ws: memref<4x128xf32>,
                               %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects block scales on both FP8 operands or on neither (block scales are promoted per K block, tensor-wise and per-row ones applied once in the epilogue), got #ggemm.scale_block<1x128> and #ggemm.scale_block<per_row>}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xf8E4M3FN>, memref<4x128x256xf8E4M3FN>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<?x2xf32>, memref<4x128xf32>)
      outs(%y : memref<?x128xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<per_row>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>}
  return
}

// -----

// Other blocks than 1x128 / 128x128 are not promoted.
func.func @other_blocks(%x: memref<?x256xf8E4M3FN>, %w: memref<4x128x256xf8E4M3FN>,
                        %indptr: memref<5xi32>, %xs: memref<?x4xf32>, %ws: memref<4x2x4xf32>,
                        %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects x_scale_block = #ggemm.scale_block<1x128> and w_scale_block = #ggemm.scale_block<128x128> for FP8 block scales (the blocks ggemm-tile promotes per K block), got #ggemm.scale_block<1x64> and #ggemm.scale_block<64x64>}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xf8E4M3FN>, memref<4x128x256xf8E4M3FN>)
      segments(%indptr : memref<5xi32>) scales(%xs, %ws : memref<?x4xf32>, memref<4x2x4xf32>)
      outs(%y : memref<?x128xbf16>)
      {x_scale_block = #ggemm.scale_block<1x64>, w_scale_block = #ggemm.scale_block<64x64>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>}
  return
}

// -----

// MoE without glue: gathered x rows (row_indices; M is their count, x has
// rows of its own) and the gated epilogue. The tiles run over w's 2N rows;
// a tile's column col covers outputs [col / 2, col / 2 + block_n / 2): its
// weight tile is split, gate rows from col / 2 and up rows N further on.
// CHECK-LABEL: func.func @gather_swiglu(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x256xbf16>, %[[W:[a-z0-9]+]]: memref<4x512x256xbf16>, %[[P:[a-z0-9]+]]: memref<5xi32>, %[[RI:[a-z0-9]+]]: memref<?xi32>, %[[Y:[a-z0-9]+]]: memref<?x256xbf16>)
// CHECK: %[[M:.+]] = memref.dim %[[RI]], %c0{{(_[0-9]+)?}} : memref<?xi32>
// CHECK: %[[N2:.+]] = arith.constant 512 : index
// CHECK: ggemm.foreach_tile segment rows(%[[P]] : memref<5xi32>) groups(%{{.+}}) rows_per_group(%{{.+}}) num_rows(%[[M]]) num_cols(%[[N2]])
// CHECK-NEXT: ^bb0(%[[GRP:.+]]: index, %[[ROW:.+]]: index, %[[END:.+]]: index, %[[COL:.+]]: index):
// CHECK: %[[OUTCOL:.+]] = arith.divui %[[COL]], %[[TWO:.+]] : index
// CHECK-NEXT: %[[UP:.+]] = arith.divui %[[N2]], %[[TWO]] : index
// CHECK: ggemm.load_tile %[[X]][%[[ROW]], %[[K:.+]]] gather(%[[RI]] : memref<?xi32>, %[[END]]) : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
// CHECK-NEXT: ggemm.load_tile %[[W]][%[[GRP]], %[[OUTCOL]], %[[K]]] split(%[[UP]]) : memref<4x512x256xbf16> -> !ggemm.tile<256x64xbf16>
// CHECK: ggemm.store_tile %{{.+}} to %[[Y]] row(%[[ROW]]) row_end(%[[END]]) col(%[[OUTCOL]]) {epilogue = #ggemm.epilogue<activation = swiglu>} : !ggemm.accumulator<128x256xf32>, memref<?x256xbf16>
func.func @gather_swiglu(%x: memref<?x256xbf16>, %w: memref<4x512x256xbf16>, %indptr: memref<5xi32>,
                         %ri: memref<?xi32>, %y: memref<?x256xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x512x256xbf16>)
      segments(%indptr : memref<5xi32>) row_indices(%ri : memref<?xi32>)
      outs(%y : memref<?x256xbf16>)
      {epilogue = #ggemm.epilogue<activation = swiglu>,
       config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64>}
  return
}

// -----

// Interleaved gate/up blocks (gate_up_block = 64, block_n = 128, bias kept
// in the logical order): the tile at column col is w's rows [col, col +
// 128) as they are, 64 gate rows then their 64 up rows, one load without
// `split`; the outputs start at col / 2 and the store pairs columns j and
// j + 64 as for side-by-side halves.
// CHECK-LABEL: func.func @gather_swiglu_interleaved(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x256xbf16>, %[[W:[a-z0-9]+]]: memref<4x512x256xbf16>, %[[P:[a-z0-9]+]]: memref<5xi32>, %[[RI:[a-z0-9]+]]: memref<?xi32>, %[[B:[a-z0-9]+]]: memref<4x512xf32>, %[[Y:[a-z0-9]+]]: memref<?x256xbf16>)
// CHECK: %[[N2:.+]] = arith.constant 512 : index
// CHECK: ggemm.foreach_tile segment rows(%[[P]] : memref<5xi32>) groups(%{{.+}}) rows_per_group(%{{.+}}) num_rows(%{{.+}}) num_cols(%[[N2]])
// CHECK-NEXT: ^bb0(%[[GRP:.+]]: index, %[[ROW:.+]]: index, %[[END:.+]]: index, %[[COL:.+]]: index):
// CHECK: %[[OUTCOL:.+]] = arith.divui %[[COL]], %{{.+}} : index
// CHECK-NOT: arith.divui %[[N2]]
// CHECK: ggemm.load_tile %[[X]][%[[ROW]], %[[K:.+]]] gather(%[[RI]] : memref<?xi32>, %[[END]]) : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
// CHECK-NEXT: ggemm.load_tile %[[W]][%[[GRP]], %[[COL]], %[[K]]] : memref<4x512x256xbf16> -> !ggemm.tile<128x64xbf16>
// CHECK: ggemm.store_tile %{{.+}} to %[[Y]] row(%[[ROW]]) row_end(%[[END]]) col(%[[OUTCOL]]) bias(%[[B]][%[[GRP]]] : memref<4x512xf32>) {epilogue = #ggemm.epilogue<activation = swiglu, gate_up_block = 64>} : !ggemm.accumulator<128x128xf32>, memref<?x256xbf16>
func.func @gather_swiglu_interleaved(%x: memref<?x256xbf16>, %w: memref<4x512x256xbf16>,
                                     %indptr: memref<5xi32>, %ri: memref<?xi32>,
                                     %bias: memref<4x512xf32>, %y: memref<?x256xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x512x256xbf16>)
      segments(%indptr : memref<5xi32>) row_indices(%ri : memref<?xi32>)
      bias(%bias : memref<4x512xf32>) outs(%y : memref<?x256xbf16>)
      {epilogue = #ggemm.epilogue<activation = swiglu, gate_up_block = 64>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>}
  return
}

// -----

// The scatter-combine epilogue: the store sends row r to y row
// scatter_indices[r] and adds it in atomically; the routing weights are the
// row scale, read at the segment row.
// CHECK-LABEL: func.func @scatter_atomic(
// CHECK-SAME: %[[H:[a-z0-9]+]]: memref<?x128xbf16>, %[[W:[a-z0-9]+]]: memref<4x256x128xbf16>, %[[P:[a-z0-9]+]]: memref<5xi32>, %[[RS:[a-z0-9]+]]: memref<?xf32>, %[[SI:[a-z0-9]+]]: memref<?xi32>, %[[OUT:[a-z0-9]+]]: memref<?x256xf32>)
// CHECK: %[[M:.+]] = memref.dim %[[H]], %c0{{(_[0-9]+)?}} : memref<?x128xbf16>
// CHECK: ggemm.foreach_tile segment rows(%[[P]] : memref<5xi32>) groups(%{{.+}}) rows_per_group(%{{.+}}) num_rows(%[[M]])
// CHECK: ggemm.load_tile %[[H]][%{{.+}}, %{{.+}}] : memref<?x128xbf16> -> !ggemm.tile<128x64xbf16>
// CHECK: ggemm.store_tile %{{.+}} to %[[OUT]] row(%{{.+}}) row_end(%{{.+}}) col(%{{.+}}) row_scale(%[[RS]] : memref<?xf32>) scatter(%[[SI]] : memref<?xi32>) {epilogue = #ggemm.epilogue<accumulate = true, atomic = true>} : !ggemm.accumulator<128x128xf32>, memref<?x256xf32>
func.func @scatter_atomic(%h: memref<?x128xbf16>, %w: memref<4x256x128xbf16>, %indptr: memref<5xi32>,
                          %rs: memref<?xf32>, %si: memref<?xi32>, %out: memref<?x256xf32>) {
  ggemm.segment_matmul ins(%h, %w : memref<?x128xbf16>, memref<4x256x128xbf16>)
      segments(%indptr : memref<5xi32>) row_scale(%rs : memref<?xf32>)
      scatter_indices(%si : memref<?xi32>) outs(%out : memref<?x256xf32>)
      {epilogue = #ggemm.epilogue<accumulate = true, atomic = true>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>}
  return
}

// -----

func.func @fp8_gather(%x: memref<?x256xf8E4M3FN>, %w: memref<4x256x256xf8E4M3FN>, %indptr: memref<5xi32>,
                      %ri: memref<?xi32>, %xs: memref<?x2xf32>, %ws: memref<4x2x2xf32>,
                      %y: memref<?x256xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op expects bf16 or f16 operands with row_indices: the FP8 and INT8 tile programs have no gathered or gated form yet}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xf8E4M3FN>, memref<4x256x256xf8E4M3FN>)
      segments(%indptr : memref<5xi32>) row_indices(%ri : memref<?xi32>)
      scales(%xs, %ws : memref<?x2xf32>, memref<4x2x2xf32>)
      outs(%y : memref<?x256xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>}
  return
}
