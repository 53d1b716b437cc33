// convert-ggemm-to-nvgpu: each pipelined ggemm.foreach_tile becomes a
// warp-specialised, persistent gpu.func written with NVVM ops (TMA,
// mbarriers, wgmma, setmaxnreg), its launch manifest a module attribute; the
// host function is erased. Tile programs this back end cannot compile are
// diagnosed.
// RUN: gemm-opt %s -split-input-file -convert-ggemm-to-nvgpu="chip=sm_90a" -verify-diagnostics | FileCheck %s
// RUN: not gemm-opt %s -split-input-file -convert-ggemm-to-nvgpu="chip=sm_90" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHIP

// CHIP: error: expects chip sm_90a (wgmma and setmaxnreg), got sm_90

// Segments, K-major weights, two consumer warpgroups, 4 stages.
// CHECK: module attributes {ggemm.manifests = {seg_kernel = {block = [384, 1, 1], cluster = [1, 1, 1], dynamic_smem = 131136 : i64, entry = "seg_kernel", format = "ggemm-bundle"
// CHECK-SAME: problem = {a_dtype = "bf16", accumulate = false, activation = "silu", b_dtype = "bf16", has_bias = true, has_row_scale = false, has_weight_indices = true, index_dtype = "i64", k = 256 : i64, m = -1 : i64, n = 128 : i64, num_groups = 8 : i64, num_weights = 4 : i64, op = "segment_matmul", out_dtype = "bf16", weight_layout = "nk"}
// CHECK-SAME: tile = {block_k = 64 : i64, block_m = 128 : i64, block_n = 128 : i64, consumer_warpgroups = 2 : i64, stages = 4 : i64}
// CHECK-SAME: gpu.container_module
// CHECK-NOT: func.func @seg
// CHECK-LABEL: gpu.module @seg_kernel_module
// Dynamic shared memory: an extern array, 1024-byte aligned for 128-byte swizzle.
// CHECK: llvm.mlir.global external @ggemm_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// Parameters: A and B TMA descriptors, 5 global pointers, 6 scalars.
// CHECK: gpu.func @seg_kernel(%[[ADESC:[a-z0-9]+]]: !llvm.ptr, %[[BDESC:[a-z0-9]+]]: !llvm.ptr, %{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i64) kernel
// CHECK-SAME: attributes {ggemm.grid_constant_args = array<i64: 0, 1>, nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32}
// Thread 0 sets up a full (1 arrival) and an empty (256 consumer threads)
// mbarrier per stage.
// CHECK: scf.if
// CHECK: nvvm.mbarrier.init %{{.+}}, %c1_i32{{(_[0-9]+)?}} : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c256_i32{{(_[0-9]+)?}} : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c1_i32{{(_[0-9]+)?}} : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c256_i32{{(_[0-9]+)?}} : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c1_i32{{(_[0-9]+)?}} : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c256_i32{{(_[0-9]+)?}} : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c1_i32{{(_[0-9]+)?}} : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c256_i32{{(_[0-9]+)?}} : !llvm.ptr<3>, i32
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// Persistent: CTAs stride over the tile ids.
// CHECK: gpu.block_id x
// CHECK: gpu.grid_dim x
// Producer warpgroup: one elected thread issues both TMA loads of a stage.
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.elect.sync
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: %[[TX:.+]] = arith.constant 32768 : i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %[[TX]] : !llvm.ptr<3>, i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %[[ADESC]], %{{.+}}, box[%{{.+}}, %{{.+}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %[[BDESC]], %{{.+}}, box[%{{.+}}, %{{.+}}, %{{.+}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// Consumer warpgroups: wait for a full stage, 4 x k16 wgmma over block_k = 64
// with K-major A (row) and B (col), then release the stage.
// CHECK: nvvm.setmaxregister increase 232
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.+}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned
// CHECK: nvvm.mbarrier.arrive %{{.+}} : !llvm.ptr<3>
// Epilogue: bias, SiLU, bf16 stores masked by the segment end.
// CHECK: llvm.load %{{.+}} : !llvm.ptr<1> -> f32
// CHECK: math.exp
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: llvm.store %{{.+}}, %{{.+}} : bf16, !llvm.ptr<1>
// CHECK: gpu.return
func.func @seg(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>, %indptr: memref<9xi64>,
               %idx: memref<8xi32>, %b: memref<4x128xf32>, %y: memref<?x128xbf16>,
               %groups: index, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  ggemm.foreach_tile segment rows(%indptr : memref<9xi64>) groups(%groups)
      rows_per_group(%c0) num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        weight_indices(%idx : memref<8xi32>) group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
    ggemm.tile_store %acc to %y weight_indices(%idx : memref<8xi32>) bias(%b : memref<4x128xf32>)
        group(%g) row(%row) row_end(%row_end) col(%col)
        {epilogue = #ggemm.epilogue<activation = silu>}
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

// Masked groups, an N-major (kn) weight: each B stage is two 64-column TMA
// boxes and wgmma reads B transposed (row); one consumer warpgroup, f32 out.
// CHECK: module attributes {ggemm.manifests = {masked_kn_kernel = {block = [256, 1, 1], cluster = [1, 1, 1], dynamic_smem = 49184 : i64
// CHECK-SAME: {box = [64, 64, 1], dtype = "f16", kind = "tma_descriptor", name = "b_desc"
// CHECK-SAME: {kind = "pointer", name = "group_rows", optional = false, tensor = "masked_m"}
// CHECK-SAME: index_dtype = "i64"
// CHECK-SAME: op = "masked_matmul", out_dtype = "f32", weight_layout = "kn"
// CHECK-LABEL: gpu.module @masked_kn_kernel_module
// CHECK: gpu.func @masked_kn_kernel(
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK-COUNT-3: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: nvvm.setmaxregister increase 232
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.+}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK: llvm.store %{{.+}}, %{{.+}} : f32, !llvm.ptr<1>
// CHECK: gpu.return
func.func @masked_kn(%x: memref<?x256xf16>, %w: memref<4x256x128xf16>, %counts: memref<4xi64>,
                     %y: memref<?x128xf32>, %g: index, %mmax: index, %m: index, %n: index) {
  ggemm.foreach_tile masked rows(%counts : memref<4xi64>) groups(%g) rows_per_group(%mmax)
      num_rows(%m) num_cols(%n)
      config(#ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64, stages = 2, consumer_warpgroups = 1>)
      persistent {
  ^bb0(%grp: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xf16>, memref<4x256x128xf16>)
        group(%grp) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64, stages = 2,
                                     consumer_warpgroups = 1>,
         weight_layout = #ggemm.weight_layout<kn>,
         pipeline = #ggemm.pipeline<stages = 2, a_stage_bytes = 8192, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 16384, barrier_offset = 49152,
                                    smem_bytes = 49184>}
        -> !ggemm.accumulator<64x128xf32>
    ggemm.tile_store %acc to %y group(%grp) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<64x128xf32>, memref<?x128xf32>
  }
  return
}

// -----

// Two tile loops in one function: two kernels, numbered.
// CHECK: module attributes {ggemm.manifests = {two_kernel_0 = {{.+}}, two_kernel_1 = {{.+}}}
// CHECK-DAG: gpu.module @two_kernel_0_module
// CHECK-DAG: gpu.module @two_kernel_1_module
// CHECK-NOT: func.func
func.func @two(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>, %y: memref<?x128xbf16>,
               %n: index) {
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        {epilogue = #ggemm.epilogue<accumulate = true>}
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

// A module without tile loops is left alone.
// CHECK-LABEL: func.func @no_tiles(
// CHECK-NOT: gpu.module
func.func @no_tiles() {
  return
}

//===----------------------------------------------------------------------===//
// Tile programs the GPU back end cannot compile
//===----------------------------------------------------------------------===//

// -----

func.func @two_mma(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %n: index) {
  // expected-error @+1 {{'ggemm.foreach_tile' op expects one ggemm.tile_mma per tile loop for the GPU back end}}
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
    %acc2 = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

func.func @two_stores(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %n: index) {
  // expected-error @+1 {{'ggemm.foreach_tile' op expects one ggemm.tile_store per tile loop for the GPU back end}}
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

func.func @other_op(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %n: index) {
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    // expected-error @+1 {{'arith.constant' op is not supported inside a tile loop by the GPU back end (expected only ggemm.tile_mma and ggemm.tile_store)}}
    %c0 = arith.constant 0 : index
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

func.func @no_store(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %n: index) {
  // expected-error @+1 {{'ggemm.foreach_tile' op expects a ggemm.tile_mma whose accumulator is stored by a ggemm.tile_store}}
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
  }
  return
}

// -----

// The stored accumulator is not the one tile_mma computed.
func.func @other_accumulator(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %n: index, %other: !ggemm.accumulator<128x128xf32>) {
  // expected-error @+1 {{'ggemm.foreach_tile' op expects a ggemm.tile_mma whose accumulator is stored by a ggemm.tile_store}}
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
    ggemm.tile_store %other to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

func.func @swapped_coordinates(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %n: index) {
  // expected-error @+1 {{'ggemm.foreach_tile' op expects the tile ops to compute exactly the tile the loop yields}}
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        group(%g) row(%col) col(%row)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

// A store that ignores the segment end would write the next group's rows.
func.func @store_row_end(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %n: index) {
  // expected-error @+1 {{'ggemm.foreach_tile' op expects the tile ops to compute exactly the tile the loop yields}}
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%n) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

func.func @no_pipeline(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %n: index) {
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    // expected-error @+1 {{'ggemm.tile_mma' op expects a `pipeline` plan: run ggemm-pipeline first}}
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
         weight_layout = #ggemm.weight_layout<nk>}
        -> !ggemm.accumulator<128x128xf32>
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

func.func @config_mismatch(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %n: index) {
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    // expected-error @+1 {{'ggemm.tile_mma' op expects the tile loop's config}}
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, stages = 2>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 2, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 32768, barrier_offset = 65536,
                                    smem_bytes = 65568>}
        -> !ggemm.accumulator<128x128xf32>
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

func.func @fp8(%x: memref<?x256xf8E4M3FN>, %w: memref<4x128x256xf8E4M3FN>,
    %y: memref<?x128xbf16>, %n: index) {
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    // expected-error @+1 {{'ggemm.tile_mma' op FP8 operands are not supported by the GPU back end yet}}
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xf8E4M3FN>, memref<4x128x256xf8E4M3FN>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

// Each consumer warpgroup computes one m64 wgmma row block.
func.func @rows_per_warpgroup(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %n: index) {
  // expected-error @+1 {{'ggemm.foreach_tile' op expects block_m = 64 x consumer_warpgroups (64) for the GPU back end, got 128}}
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, consumer_warpgroups = 1>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, consumer_warpgroups = 1>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

func.func @kn_block_n(%x: memref<?x256xbf16>, %w: memref<4x256x96xbf16>,
    %y: memref<?x96xbf16>, %n: index) {
  // expected-error @+1 {{'ggemm.foreach_tile' op expects block_n to be a multiple of 64 for weight_layout kn (64-column TMA boxes), got 96}}
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 96, block_k = 64>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x256x96xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 96, block_k = 64>,
         weight_layout = #ggemm.weight_layout<kn>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 12288,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 114688,
                                    smem_bytes = 114752>}
        -> !ggemm.accumulator<128x96xf32>
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x96xf32>, memref<?x96xbf16>
  }
  return
}

// -----

func.func @cluster(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %n: index) {
  // expected-error @+1 {{'ggemm.foreach_tile' op thread-block clusters are not supported by the GPU back end yet}}
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, cluster_m = 2>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, cluster_m = 2>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

func.func @store_weight_indices(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %n: index, %idx: memref<4xi32>) {
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>) weight_indices(%idx : memref<4xi32>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
    // expected-error @+1 {{'ggemm.tile_store' op expects the weight_indices of the tile_mma}}
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  return
}

// -----

func.func @y_inner_stride(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16, strided<[256, 2]>>, %n: index) {
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
    // expected-error @+1 {{'ggemm.tile_store' op expects the innermost dimension of y to be contiguous for the GPU back end, got 'memref<?x128xbf16, strided<[256, 2]>>'}}
    ggemm.tile_store %acc to %y group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16, strided<[256, 2]>>
  }
  return
}

// -----

func.func @bias_padded(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %b: memref<4x128xf32, strided<[136, 1]>>, %n: index) {
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>) persistent {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
    %acc = ggemm.tile_mma ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
        group(%g) row(%row) col(%col)
        {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>,
         weight_layout = #ggemm.weight_layout<nk>,
         pipeline = #ggemm.pipeline<stages = 4, a_stage_bytes = 16384, b_stage_bytes = 16384,
                                    a_offset = 0, b_offset = 65536, barrier_offset = 131072,
                                    smem_bytes = 131136>}
        -> !ggemm.accumulator<128x128xf32>
    // expected-error @+1 {{'ggemm.tile_store' op expects bias to be a dense row-major memref for the GPU back end, got 'memref<4x128xf32, strided<[136, 1]>>'}}
    ggemm.tile_store %acc to %y bias(%b : memref<4x128xf32, strided<[136, 1]>>)
        group(%g) row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
  }
  return
}
