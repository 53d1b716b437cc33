// convert-ggemm-to-nvvm: each warp-specialised launch becomes a gpu.func
// kernel written with NVVM ops (TMA, mbarriers, wgmma, setmaxnreg), op by op
// from the schedule-level IR; its launch manifest becomes a module
// attribute and the host function is erased. Launches this back end cannot
// compile, and IR of an earlier stage, are diagnosed.
// RUN: gemm-opt %s -split-input-file -convert-ggemm-to-nvvm="chip=sm_90a" -verify-diagnostics | FileCheck %s
// RUN: not gemm-opt %s -split-input-file -convert-ggemm-to-nvvm="chip=sm_90" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHIP

// CHIP: error: convert-ggemm-to-nvvm: expects chip sm_90a (wgmma and setmaxnreg), got sm_90

// Segments, K-major weights, two consumer warpgroups, 4 stages, weight
// indices, bias and SiLU, i64 seg_indptr, a persistent grid.
// CHECK: module attributes {ggemm.manifests = {seg_kernel = {block = [384, 1, 1], cluster = [1, 1, 1], dependent_launch = false, dynamic_smem = 131136 : i64, entry = "seg_kernel", format = "ggemm-bundle", grid = {ctas_per_sm = 1 : i64, policy = "persistent"}
// CHECK-SAME: problem = {a_dtype = "bf16", accumulate = false, activation = "silu", b_dtype = "bf16", has_bias = true, has_row_scale = false, has_weight_indices = true, index_dtype = "i64", k = 256 : i64, m = -1 : i64, n = 128 : i64, num_groups = 8 : i64, num_weights = 4 : i64, op = "segment_matmul", out_dtype = "bf16", weight_layout = "nk"}
// CHECK-SAME: tile = {block_k = 64 : i64, block_m = 128 : i64, block_n = 128 : i64, consumer_warpgroups = 2 : i64, stages = 4 : i64, swap_ab = false}
// CHECK-SAME: gpu.container_module
// CHECK-NOT: func.func @seg
// CHECK-LABEL: gpu.module @seg_kernel_module
// Dynamic shared memory: an extern array, 1024-byte aligned for 128-byte swizzle.
// CHECK: llvm.mlir.global external @ggemm_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// Parameters: A and B TMA descriptors, 5 global pointers, 7 scalars.
// CHECK: gpu.func @seg_kernel(%[[ADESC:[a-z0-9]+]]: !llvm.ptr, %[[BDESC:[a-z0-9]+]]: !llvm.ptr, %{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %[[WIDX:[a-z0-9]+]]: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i64, %[[NUM_WEIGHTS:[a-z0-9]+]]: i32) kernel
// CHECK-SAME: attributes {ggemm.grid_constant_args = array<i64: 0, 1>, nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32}
// The map_tile walks' cursors (a group and its first tile id), a pair for
// each map_tile (the producer's, the consumers'), 0 in allocas at the entry
// that SROA makes registers.
// CHECK: %[[PG:.+]] = llvm.alloca %{{.+}} x i64 : (i32) -> !llvm.ptr
// CHECK: %[[PF:.+]] = llvm.alloca %{{.+}} x i64 : (i32) -> !llvm.ptr
// CHECK: %[[CG:.+]] = llvm.alloca %{{.+}} x i64 : (i32) -> !llvm.ptr
// CHECK: %[[CF:.+]] = llvm.alloca %{{.+}} x i64 : (i32) -> !llvm.ptr
// The warpgroup index (thread id / 128), broadcast from lane 0 so that
// ptxas sees it is the same in every lane of a warp.
// CHECK: %[[TID:.+]] = gpu.thread_id x
// CHECK: %[[WG:.+]] = arith.divui %[[TID]], %{{.+}} : index
// CHECK: %[[WG32:.+]] = arith.index_cast %[[WG]] : index to i32
// CHECK: nvvm.shfl.sync idx %{{.+}}, %[[WG32]], %{{.+}}, %{{.+}} : i32 -> i32
// CHECK: %[[GW:.+]] = arith.index_cast %[[NUM_WEIGHTS]] : i32 to index
// The launch's CTA id and count.
// CHECK: gpu.block_id x
// CHECK: gpu.grid_dim x
// ggemm.create_ring: thread 0 sets up a full (1 arrival) and an empty (256
// releases) mbarrier per stage at the layout's offsets.
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
// ggemm.tile_count: the walk over seg_indptr, skipping groups whose weight
// index is not below num_weights.
// CHECK: scf.for
// CHECK: llvm.load %{{.+}} : !llvm.ptr<1> -> i64
// CHECK: llvm.getelementptr %[[WIDX]]
// CHECK: llvm.load %{{.+}} : !llvm.ptr<1> -> i32
// CHECK: arith.cmpi ult, %{{.+}}, %[[GW]] : index
// ggemm.warp_specialize: the producer is the warpgroup after the consumers.
// CHECK: %[[IS_PRODUCER:.+]] = arith.cmpi eq, %{{.+}}, %c2{{(_[0-9]+)?}} : index
// CHECK: scf.if %[[IS_PRODUCER]] {
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.elect.sync
// map_tile: the walk from the producer's cursor, which keeps its result.
// CHECK: llvm.load %[[PG]] : !llvm.ptr -> i64
// CHECK: llvm.load %[[PF]] : !llvm.ptr -> i64
// CHECK: scf.while
// CHECK: llvm.store %{{.+}}, %[[PG]] : i64, !llvm.ptr
// CHECK: llvm.store %{{.+}}, %[[PF]] : i64, !llvm.ptr
// ggemm.ring_put: wait for the empty slot, expect the bytes of both tiles,
// one TMA per tile into the slot.
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: %[[TX:.+]] = arith.constant 32768 : i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %[[TX]] : !llvm.ptr<3>, i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %[[ADESC]], %{{.+}}, box[%{{.+}}, %{{.+}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %[[BDESC]], %{{.+}}, box[%{{.+}}, %{{.+}}, %{{.+}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// Consumers: ggemm.ring_get waits for the full slot; ggemm.mma is 4 x k16
// wgmma over block_k = 64 with K-major A (row) and B (col), then keeps one
// group in flight (pending = 1); ggemm.ring_release arrives on empty.
// CHECK: } else {
// CHECK: nvvm.setmaxregister increase 232
// CHECK: llvm.load %[[CG]] : !llvm.ptr -> i64
// CHECK: scf.while
// CHECK: llvm.store %{{.+}}, %[[CF]] : i64, !llvm.ptr
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.+}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive %{{.+}} : !llvm.ptr<3>
// ggemm.mma_wait, then the last release.
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive %{{.+}} : !llvm.ptr<3>
// ggemm.store_tile: bias, SiLU, bf16 stores masked by the segment end.
// CHECK: arith.cmpi ult, %{{.+}}, %{{.+}} : index
// CHECK: llvm.load %{{.+}} : !llvm.ptr<1> -> f32
// CHECK: math.exp
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: llvm.store %{{.+}}, %{{.+}} : bf16, !llvm.ptr<1>
// CHECK: gpu.return
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
    %2 = ggemm.tile_count %0
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
          %8 = ggemm.load_tile %arg1[%4, %col, %6] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
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
        %5 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
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

// -----

// Masked groups with a dynamic group size, an mn_major (kn) B tile: each
// stage's B is two 64-column TMA boxes and wgmma reads B transposed (row);
// one consumer warpgroup, f32 out, one CTA per tile.
// CHECK: module attributes {ggemm.manifests = {masked_kn_kernel = {block = [256, 1, 1], cluster = [1, 1, 1], dependent_launch = true, dynamic_smem = 49184 : i64
// CHECK-SAME: grid = {ctas_per_sm = 1 : i64, policy = "tiles"}
// CHECK-SAME: {box = [64, 64, 1], dtype = "f16", kind = "tma_descriptor", name = "b_desc"
// CHECK-SAME: {kind = "pointer", name = "group_rows", optional = false, tensor = "masked_m"}
// CHECK-SAME: index_dtype = "i64"
// CHECK-SAME: op = "masked_matmul", out_dtype = "f32", weight_layout = "kn"
// CHECK-LABEL: gpu.module @masked_kn_kernel_module
// CHECK: gpu.func @masked_kn_kernel(
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// The wait is where ggemm.wait_dependency is: before it only the
// parameters' stack copies, thread 0's prefetch of the two TMA descriptors
// (kernel parameters), the ring's mbarriers (shared memory) and thread 0's
// L2 prefetch of a w tile (ggemm.prefetch_tile, two 64-column boxes of the
// mn_major tile): no load of global memory.
// CHECK-NOT: llvm.load
// CHECK: nvvm.prefetch tensormap in_param_space, %arg0 : !llvm.ptr
// CHECK-NEXT: nvvm.prefetch tensormap in_param_space, %arg1 : !llvm.ptr
// CHECK-NOT: llvm.load
// CHECK: nvvm.fence.mbarrier.init
// CHECK-NOT: llvm.load
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %thread_id_x, %{{.+}} : index
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.prefetch %arg1, box[%[[C0:.+]], %[[C1:.+]], %[[C2:.+]]] : !llvm.ptr
// CHECK: %[[NEXT:.+]] = arith.addi %[[C0]], %c64_i32 : i32
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.prefetch %arg1, box[%[[NEXT]], %[[C1]], %[[C2]]] : !llvm.ptr
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK-COUNT-3: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: nvvm.setmaxregister increase 232
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.+}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// CHECK: llvm.store %{{.+}}, %{{.+}} : f32, !llvm.ptr<1>
// CHECK: gpu.return
func.func @masked_kn(%arg0: memref<4x?x256xf16>, %arg1: memref<4x256x128xf16>, %arg2: memref<4xi64>, %arg3: memref<4x?x128xf32>) {
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %dim = memref.dim %arg0, %c1 : memref<4x?x256xf16>
  %collapse_shape = memref.collapse_shape %arg0 [[0, 1], [2]] : memref<4x?x256xf16> into memref<?x256xf16>
  %collapse_shape_0 = memref.collapse_shape %arg3 [[0, 1], [2]] : memref<4x?x128xf32> into memref<?x128xf32>
  %c0 = arith.constant 0 : index
  %dim_1 = memref.dim %collapse_shape, %c0 : memref<?x256xf16>
  %c128 = arith.constant 128 : index
  %0 = ggemm.tile_schedule masked rows(%arg2 : memref<4xi64>) groups(%c4) rows_per_group(%dim) num_rows(%dim_1) num_cols(%c128) config(#ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64, stages = 2, consumer_warpgroups = 1>)
  ggemm.launch %0 grid(tiles) dependent_launch {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(128) layout(#ggemm.ring_layout<stages = 2, offsets = [0, 16384], stage_bytes = [8192, 16384], barrier_offset = 49152, smem_bytes = 49184>) : !ggemm.ring<!ggemm.tile<64x64xf16>, !ggemm.tile<128x64xf16, mn_major>>
    %cp0 = arith.constant 0 : index
    %cp64 = arith.constant 64 : index
    ggemm.prefetch_tile %arg1[%cp0, %cp64, %cp0] : memref<4x256x128xf16>, !ggemm.tile<128x64xf16, mn_major>
    ggemm.wait_dependency
    %2 = ggemm.tile_count %0
    %3 = arith.cmpi ult, %cta, %2 : index
    ggemm.warp_specialize producer registers(40) {
      %c0_2 = arith.constant 0 : index
      scf.if %3 {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%cta]
        %c4_3 = arith.constant 4 : index
        %c0_4 = arith.constant 0 : index
        %c1_5 = arith.constant 1 : index
        %c64 = arith.constant 64 : index
        %4 = scf.for %arg4 = %c0_4 to %c4_3 step %c1_5 iter_args(%arg5 = %c0_2) -> (index) {
          %5 = arith.muli %arg4, %c64 : index
          %6 = ggemm.load_tile %collapse_shape[%row, %5] : memref<?x256xf16> -> !ggemm.tile<64x64xf16>
          %7 = ggemm.load_tile %arg1[%group, %5, %col] : memref<4x256x128xf16> -> !ggemm.tile<128x64xf16, mn_major>
          ggemm.ring_put %1[%arg5], %6, %7 : !ggemm.ring<!ggemm.tile<64x64xf16>, !ggemm.tile<128x64xf16, mn_major>>
          %c1_6 = arith.constant 1 : index
          %8 = arith.addi %arg5, %c1_6 : index
          scf.yield %8 : index
        }
      }
    } consumers(1) registers(232) {
      %c0_2 = arith.constant 0 : index
      scf.if %3 {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%cta]
        %c4_3 = arith.constant 4 : index
        %c0_4 = arith.constant 0 : index
        %c1_5 = arith.constant 1 : index
        %4 = ggemm.zero_accumulator : !ggemm.accumulator<64x128xf32>
        %5:2 = scf.for %arg4 = %c0_4 to %c4_3 step %c1_5 iter_args(%arg5 = %4, %arg6 = %c0_2) -> (!ggemm.accumulator<64x128xf32>, index) {
          %8:2 = ggemm.ring_get %1[%arg6] : !ggemm.ring<!ggemm.tile<64x64xf16>, !ggemm.tile<128x64xf16, mn_major>>
          %9 = ggemm.mma %8#0, %8#1, %arg5 {pending = 1 : i64} : !ggemm.tile<64x64xf16>, !ggemm.tile<128x64xf16, mn_major> -> !ggemm.accumulator<64x128xf32>
          %10 = arith.cmpi ugt, %arg4, %c0_4 : index
          scf.if %10 {
            %c1_7 = arith.constant 1 : index
            %12 = arith.subi %arg6, %c1_7 : index
            ggemm.ring_release %1[%12] : !ggemm.ring<!ggemm.tile<64x64xf16>, !ggemm.tile<128x64xf16, mn_major>>
          }
          %c1_6 = arith.constant 1 : index
          %11 = arith.addi %arg6, %c1_6 : index
          scf.yield %9, %11 : !ggemm.accumulator<64x128xf32>, index
        }
        %6 = ggemm.mma_wait %5#0 : !ggemm.accumulator<64x128xf32>
        %7 = arith.cmpi ugt, %5#1, %c0_2 : index
        scf.if %7 {
          %c1_6 = arith.constant 1 : index
          %8 = arith.subi %5#1, %c1_6 : index
          ggemm.ring_release %1[%8] : !ggemm.ring<!ggemm.tile<64x64xf16>, !ggemm.tile<128x64xf16, mn_major>>
        }
        ggemm.store_tile %6 to %collapse_shape_0 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<64x128xf32>, memref<?x128xf32>
      }
    }
  }
  return
}

// -----

// Two launches in one function: two kernels, numbered.
// CHECK: module attributes {ggemm.manifests = {two_kernel_0 = {{.+}}, two_kernel_1 = {{.+}}}
// CHECK-DAG: gpu.module @two_kernel_0_module
// CHECK-DAG: gpu.module @two_kernel_1_module
// CHECK-NOT: func.func
func.func @two(%arg0: memref<4x64x256xbf16>, %arg1: memref<4x128x256xbf16>, %arg2: memref<4x64x128xbf16>) {
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %collapse_shape = memref.collapse_shape %arg0 [[0, 1], [2]] : memref<4x64x256xbf16> into memref<256x256xbf16>
  %collapse_shape_0 = memref.collapse_shape %arg2 [[0, 1], [2]] : memref<4x64x128xbf16> into memref<256x128xbf16>
  %c256 = arith.constant 256 : index
  %c128 = arith.constant 128 : index
  %0 = ggemm.tile_schedule uniform groups(%c4) rows_per_group(%c64) num_rows(%c256) num_cols(%c128) config(#ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64, consumer_warpgroups = 1>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %2 = ggemm.create_ring release_count(128) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 32768], stage_bytes = [8192, 16384], barrier_offset = 98304, smem_bytes = 98368>) : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<128x64xbf16>>
    %3 = ggemm.tile_count %0
    ggemm.warp_specialize producer registers(40) {
      %c0 = arith.constant 0 : index
      %4 = scf.for %arg3 = %cta to %3 step %num_ctas iter_args(%arg4 = %c0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg3]
        %c4_7 = arith.constant 4 : index
        %c0_8 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %c64_9 = arith.constant 64 : index
        %5 = scf.for %arg5 = %c0_8 to %c4_7 step %c1 iter_args(%arg6 = %arg4) -> (index) {
          %6 = arith.muli %arg5, %c64_9 : index
          %7 = ggemm.load_tile %collapse_shape[%row, %6] : memref<256x256xbf16> -> !ggemm.tile<64x64xbf16>
          %8 = ggemm.load_tile %arg1[%group, %col, %6] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
          ggemm.ring_put %2[%arg6], %7, %8 : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<128x64xbf16>>
          %c1_10 = arith.constant 1 : index
          %9 = arith.addi %arg6, %c1_10 : index
          scf.yield %9 : index
        }
        scf.yield %5 : index
      }
    } consumers(1) registers(232) {
      %c0 = arith.constant 0 : index
      %4 = scf.for %arg3 = %cta to %3 step %num_ctas iter_args(%arg4 = %c0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg3]
        %c4_7 = arith.constant 4 : index
        %c0_8 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %5 = ggemm.zero_accumulator : !ggemm.accumulator<64x128xf32>
        %6:2 = scf.for %arg5 = %c0_8 to %c4_7 step %c1 iter_args(%arg6 = %5, %arg7 = %arg4) -> (!ggemm.accumulator<64x128xf32>, index) {
          %9:2 = ggemm.ring_get %2[%arg7] : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<128x64xbf16>>
          %10 = ggemm.mma %9#0, %9#1, %arg6 {pending = 1 : i64} : !ggemm.tile<64x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<64x128xf32>
          %11 = arith.cmpi ugt, %arg5, %c0_8 : index
          scf.if %11 {
            %c1_10 = arith.constant 1 : index
            %13 = arith.subi %arg7, %c1_10 : index
            ggemm.ring_release %2[%13] : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<128x64xbf16>>
          }
          %c1_9 = arith.constant 1 : index
          %12 = arith.addi %arg7, %c1_9 : index
          scf.yield %10, %12 : !ggemm.accumulator<64x128xf32>, index
        }
        %7 = ggemm.mma_wait %6#0 : !ggemm.accumulator<64x128xf32>
        %8 = arith.cmpi ugt, %6#1, %arg4 : index
        scf.if %8 {
          %c1_9 = arith.constant 1 : index
          %9 = arith.subi %6#1, %c1_9 : index
          ggemm.ring_release %2[%9] : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<128x64xbf16>>
        }
        ggemm.store_tile %7 to %collapse_shape_0 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<64x128xf32>, memref<256x128xbf16>
        scf.yield %6#1 : index
      }
    }
  }
  %c4_1 = arith.constant 4 : index
  %c64_2 = arith.constant 64 : index
  %collapse_shape_3 = memref.collapse_shape %arg0 [[0, 1], [2]] : memref<4x64x256xbf16> into memref<256x256xbf16>
  %collapse_shape_4 = memref.collapse_shape %arg2 [[0, 1], [2]] : memref<4x64x128xbf16> into memref<256x128xbf16>
  %c256_5 = arith.constant 256 : index
  %c128_6 = arith.constant 128 : index
  %1 = ggemm.tile_schedule uniform groups(%c4_1) rows_per_group(%c64_2) num_rows(%c256_5) num_cols(%c128_6) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %1 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %2 = ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 16384], barrier_offset = 131072, smem_bytes = 131136>) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    %3 = ggemm.tile_count %1
    ggemm.warp_specialize producer registers(40) {
      %c0 = arith.constant 0 : index
      %4 = scf.for %arg3 = %cta to %3 step %num_ctas iter_args(%arg4 = %c0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %1[%arg3]
        %c4_7 = arith.constant 4 : index
        %c0_8 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %c64_9 = arith.constant 64 : index
        %5 = scf.for %arg5 = %c0_8 to %c4_7 step %c1 iter_args(%arg6 = %arg4) -> (index) {
          %6 = arith.muli %arg5, %c64_9 : index
          %7 = ggemm.load_tile %collapse_shape_3[%row, %6] : memref<256x256xbf16> -> !ggemm.tile<128x64xbf16>
          %8 = ggemm.load_tile %arg1[%group, %col, %6] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
          ggemm.ring_put %2[%arg6], %7, %8 : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %c1_10 = arith.constant 1 : index
          %9 = arith.addi %arg6, %c1_10 : index
          scf.yield %9 : index
        }
        scf.yield %5 : index
      }
    } consumers(2) registers(232) {
      %c0 = arith.constant 0 : index
      %4 = scf.for %arg3 = %cta to %3 step %num_ctas iter_args(%arg4 = %c0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %1[%arg3]
        %c4_7 = arith.constant 4 : index
        %c0_8 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %5 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
        %6:2 = scf.for %arg5 = %c0_8 to %c4_7 step %c1 iter_args(%arg6 = %5, %arg7 = %arg4) -> (!ggemm.accumulator<128x128xf32>, index) {
          %9:2 = ggemm.ring_get %2[%arg7] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %10 = ggemm.mma %9#0, %9#1, %arg6 {pending = 1 : i64} : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<128x128xf32>
          %11 = arith.cmpi ugt, %arg5, %c0_8 : index
          scf.if %11 {
            %c1_10 = arith.constant 1 : index
            %13 = arith.subi %arg7, %c1_10 : index
            ggemm.ring_release %2[%13] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          }
          %c1_9 = arith.constant 1 : index
          %12 = arith.addi %arg7, %c1_9 : index
          scf.yield %10, %12 : !ggemm.accumulator<128x128xf32>, index
        }
        %7 = ggemm.mma_wait %6#0 : !ggemm.accumulator<128x128xf32>
        %8 = arith.cmpi ugt, %6#1, %arg4 : index
        scf.if %8 {
          %c1_9 = arith.constant 1 : index
          %9 = arith.subi %6#1, %c1_9 : index
          ggemm.ring_release %2[%9] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
        }
        ggemm.store_tile %7 to %collapse_shape_4 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<128x128xf32>, memref<256x128xbf16>
        scf.yield %6#1 : index
      }
    }
  }
  return
}

// -----

// A module without launches is left alone.
// CHECK-LABEL: func.func @no_launch(
// CHECK-NOT: gpu.module
func.func @no_launch() {
  return
}

// -----

// A K-ragged launch (ggemm.segment_matmul_k, from ggemm-tile,
// ggemm-persistent-schedule, ggemm-warp-specialize and ggemm-stage-ring):
// the manifest names the op's tensors (dy, x: rank-2 descriptors with boxes
// of one swizzle row of columns; dw), the segment's rows are read from
// seg_indptr and clamped, and the consumers zero the rows past the segment's
// end in both ring slots (16-byte shared stores over the chunks of rows
// valid .. 63 of each 8 KB box, split over the 256 consumer threads), fence
// them to the async proxy and meet at named barrier 1 before the wgmma.
// CHECK: wgrad_kernel = {block = [384, 1, 1]
// CHECK-SAME: params = [{box = [64, 64], dtype = "bf16", kind = "tma_descriptor", name = "a_desc", oob_fill = "zero", rank = 2 : i64, swizzle = "128B", tensor = "dy"}, {box = [64, 64], dtype = "bf16", kind = "tma_descriptor", name = "b_desc", oob_fill = "zero", rank = 2 : i64, swizzle = "128B", tensor = "x"}, {kind = "pointer", name = "y", tensor = "dw"}, {kind = "pointer", name = "group_rows", optional = false, tensor = "seg_indptr"}
// CHECK-SAME: problem = {a_dtype = "bf16", accumulate = false, activation = "none", b_dtype = "bf16", has_bias = false, has_row_scale = false, has_weight_indices = false, index_dtype = "i32", k = 256 : i64, m = -1 : i64, n = 128 : i64, num_groups = 4 : i64, num_weights = 4 : i64, op = "segment_matmul_k", out_dtype = "f32", transposed = false, weight_layout = "nk"}
// CHECK-LABEL: gpu.func @wgrad_kernel
// CHECK: %[[PARTIAL:.+]] = arith.cmpi slt, %[[VALID:.+]], %c64{{.*}} : index
// CHECK: scf.if %[[PARTIAL]] {
// CHECK: %[[ZERO:.+]] = llvm.mlir.zero : vector<4xi32>
// CHECK: %[[FIRST:.+]] = arith.muli %[[VALID]], %c8{{.*}} : index
// CHECK: %[[FROM:.+]] = arith.addi %[[FIRST]], %thread_id_x : index
// CHECK: scf.for %{{.+}} = %[[FROM]] to %c512{{.*}} step %c256
// CHECK-COUNT-4: llvm.store %[[ZERO]], %{{.+}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK: }
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %c1_i32{{.*}} number_of_threads = %c256_i32
// CHECK: }
// CHECK-NEXT: nvvm.wgmma.fence.aligned
func.func @wgrad(%arg0: memref<?x128xbf16>, %arg1: memref<?x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<4x128x256xf32>) {
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %0 = arith.subi %c5, %c1 : index
  %c128 = arith.constant 128 : index
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x128xbf16>
  %collapse_shape = memref.collapse_shape %arg3 [[0, 1], [2]] : memref<4x128x256xf32> into memref<512x256xf32>
  %1 = arith.muli %0, %c128 : index
  %c256 = arith.constant 256 : index
  %2 = ggemm.tile_schedule uniform groups(%0) rows_per_group(%c128) num_rows(%1) num_cols(%c256) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %2 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %3 = ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 16384], barrier_offset = 131072, smem_bytes = 131136>) : !ggemm.ring<!ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<128x64xbf16, mn_major>>
    %4 = ggemm.tile_count %2
    ggemm.warp_specialize producer registers(40) {
      %c0_0 = arith.constant 0 : index
      %5 = scf.for %arg4 = %cta to %4 step %num_ctas iter_args(%arg5 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %2[%arg4]
        %6 = arith.muli %group, %c128 : index
        %7 = arith.subi %row, %6 : index
        %begin, %end = ggemm.segment_bounds %arg2[%group] num_rows(%dim) : memref<5xi32>
        %c64 = arith.constant 64 : index
        %c63 = arith.constant 63 : index
        %8 = arith.subi %end, %begin : index
        %9 = arith.addi %8, %c63 : index
        %10 = arith.divui %9, %c64 : index
        %c0_1 = arith.constant 0 : index
        %c1_2 = arith.constant 1 : index
        %11 = scf.for %arg6 = %c0_1 to %10 step %c1_2 iter_args(%arg7 = %arg5) -> (index) {
          %12 = arith.muli %arg6, %c64 : index
          %13 = arith.addi %begin, %12 : index
          %14 = ggemm.load_tile %arg0[%13, %7] k_end(%end) : memref<?x128xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
          %15 = ggemm.load_tile %arg1[%13, %col] k_end(%end) : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
          ggemm.ring_put %3[%arg7], %14, %15 : !ggemm.ring<!ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<128x64xbf16, mn_major>>
          %c1_3 = arith.constant 1 : index
          %16 = arith.addi %arg7, %c1_3 : index
          scf.yield %16 : index
        }
        scf.yield %11 : index
      }
    } consumers(2) registers(232) {
      %c0_0 = arith.constant 0 : index
      %5 = scf.for %arg4 = %cta to %4 step %num_ctas iter_args(%arg5 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %2[%arg4]
        %begin, %end = ggemm.segment_bounds %arg2[%group] num_rows(%dim) : memref<5xi32>
        %c64 = arith.constant 64 : index
        %c63 = arith.constant 63 : index
        %6 = arith.subi %end, %begin : index
        %7 = arith.addi %6, %c63 : index
        %8 = arith.divui %7, %c64 : index
        %c0_1 = arith.constant 0 : index
        %c1_2 = arith.constant 1 : index
        %9 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
        %10:2 = scf.for %arg6 = %c0_1 to %8 step %c1_2 iter_args(%arg7 = %9, %arg8 = %arg5) -> (!ggemm.accumulator<128x128xf32>, index) {
          %13:2 = ggemm.ring_get %3[%arg8] : !ggemm.ring<!ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<128x64xbf16, mn_major>>
          %14 = arith.muli %arg6, %c64 : index
          %15 = arith.addi %begin, %14 : index
          %16 = arith.subi %end, %15 : index
          %17:2 = ggemm.zero_k_tail %13#0, %13#1 valid(%16) : !ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<128x64xbf16, mn_major>
          %18 = ggemm.mma %17#0, %17#1, %arg7 {pending = 1 : i64} : !ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<128x64xbf16, mn_major> -> !ggemm.accumulator<128x128xf32>
          %19 = arith.cmpi ugt, %arg6, %c0_1 : index
          scf.if %19 {
            %c1_4 = arith.constant 1 : index
            %21 = arith.subi %arg8, %c1_4 : index
            ggemm.ring_release %3[%21] : !ggemm.ring<!ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<128x64xbf16, mn_major>>
          }
          %c1_3 = arith.constant 1 : index
          %20 = arith.addi %arg8, %c1_3 : index
          scf.yield %18, %20 : !ggemm.accumulator<128x128xf32>, index
        }
        %11 = ggemm.mma_wait %10#0 : !ggemm.accumulator<128x128xf32>
        %12 = arith.cmpi ugt, %10#1, %arg5 : index
        scf.if %12 {
          %c1_3 = arith.constant 1 : index
          %13 = arith.subi %10#1, %c1_3 : index
          ggemm.ring_release %3[%13] : !ggemm.ring<!ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<128x64xbf16, mn_major>>
        }
        ggemm.store_tile %11 to %collapse_shape row(%row) row_end(%row_end) col(%col) {ggemm.k_ragged_layout = #ggemm.weight_layout<nk>} : !ggemm.accumulator<128x128xf32>, memref<512x256xf32>
        scf.yield %10#1 : index
      }
    }
  }
  return
}

// -----

// A K-ragged kernel names its tensors by the ring's order (a, then b): both
// tiles from one matrix give it nothing to name.
func.func @wgrad_one_matrix(%arg0: memref<?x128xbf16>, %arg1: memref<?x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<4x128x256xf32>) {
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %0 = arith.subi %c5, %c1 : index
  %c128 = arith.constant 128 : index
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x128xbf16>
  %collapse_shape = memref.collapse_shape %arg3 [[0, 1], [2]] : memref<4x128x256xf32> into memref<512x256xf32>
  %1 = arith.muli %0, %c128 : index
  %c256 = arith.constant 256 : index
  %2 = ggemm.tile_schedule uniform groups(%0) rows_per_group(%c128) num_rows(%1) num_cols(%c256) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  // expected-error @+1 {{'ggemm.launch' op expects one ggemm.ring_put of two tile loads from two matrices (and, with FP8, the loads of their scales from two others) in a K-ragged kernel (ggemm.segment_matmul_k)}}
  ggemm.launch %2 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %3 = ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 16384], barrier_offset = 131072, smem_bytes = 131136>) : !ggemm.ring<!ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<128x64xbf16, mn_major>>
    %4 = ggemm.tile_count %2
    ggemm.warp_specialize producer registers(40) {
      %c0_0 = arith.constant 0 : index
      %5 = scf.for %arg4 = %cta to %4 step %num_ctas iter_args(%arg5 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %2[%arg4]
        %6 = arith.muli %group, %c128 : index
        %7 = arith.subi %row, %6 : index
        %begin, %end = ggemm.segment_bounds %arg2[%group] num_rows(%dim) : memref<5xi32>
        %c64 = arith.constant 64 : index
        %c63 = arith.constant 63 : index
        %8 = arith.subi %end, %begin : index
        %9 = arith.addi %8, %c63 : index
        %10 = arith.divui %9, %c64 : index
        %c0_1 = arith.constant 0 : index
        %c1_2 = arith.constant 1 : index
        %11 = scf.for %arg6 = %c0_1 to %10 step %c1_2 iter_args(%arg7 = %arg5) -> (index) {
          %12 = arith.muli %arg6, %c64 : index
          %13 = arith.addi %begin, %12 : index
          %14 = ggemm.load_tile %arg0[%13, %7] k_end(%end) : memref<?x128xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
          %15 = ggemm.load_tile %arg0[%13, %col] k_end(%end) : memref<?x128xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
          ggemm.ring_put %3[%arg7], %14, %15 : !ggemm.ring<!ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<128x64xbf16, mn_major>>
          %c1_3 = arith.constant 1 : index
          %16 = arith.addi %arg7, %c1_3 : index
          scf.yield %16 : index
        }
        scf.yield %11 : index
      }
    } consumers(2) registers(232) {
      %c0_0 = arith.constant 0 : index
      %5 = scf.for %arg4 = %cta to %4 step %num_ctas iter_args(%arg5 = %c0_0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %2[%arg4]
        %begin, %end = ggemm.segment_bounds %arg2[%group] num_rows(%dim) : memref<5xi32>
        %c64 = arith.constant 64 : index
        %c63 = arith.constant 63 : index
        %6 = arith.subi %end, %begin : index
        %7 = arith.addi %6, %c63 : index
        %8 = arith.divui %7, %c64 : index
        %c0_1 = arith.constant 0 : index
        %c1_2 = arith.constant 1 : index
        %9 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
        %10:2 = scf.for %arg6 = %c0_1 to %8 step %c1_2 iter_args(%arg7 = %9, %arg8 = %arg5) -> (!ggemm.accumulator<128x128xf32>, index) {
          %13:2 = ggemm.ring_get %3[%arg8] : !ggemm.ring<!ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<128x64xbf16, mn_major>>
          %14 = arith.muli %arg6, %c64 : index
          %15 = arith.addi %begin, %14 : index
          %16 = arith.subi %end, %15 : index
          %17:2 = ggemm.zero_k_tail %13#0, %13#1 valid(%16) : !ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<128x64xbf16, mn_major>
          %18 = ggemm.mma %17#0, %17#1, %arg7 {pending = 1 : i64} : !ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<128x64xbf16, mn_major> -> !ggemm.accumulator<128x128xf32>
          %19 = arith.cmpi ugt, %arg6, %c0_1 : index
          scf.if %19 {
            %c1_4 = arith.constant 1 : index
            %21 = arith.subi %arg8, %c1_4 : index
            ggemm.ring_release %3[%21] : !ggemm.ring<!ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<128x64xbf16, mn_major>>
          }
          %c1_3 = arith.constant 1 : index
          %20 = arith.addi %arg8, %c1_3 : index
          scf.yield %18, %20 : !ggemm.accumulator<128x128xf32>, index
        }
        %11 = ggemm.mma_wait %10#0 : !ggemm.accumulator<128x128xf32>
        %12 = arith.cmpi ugt, %10#1, %arg5 : index
        scf.if %12 {
          %c1_3 = arith.constant 1 : index
          %13 = arith.subi %10#1, %c1_3 : index
          ggemm.ring_release %3[%13] : !ggemm.ring<!ggemm.tile<128x64xbf16, mn_major>, !ggemm.tile<128x64xbf16, mn_major>>
        }
        ggemm.store_tile %11 to %collapse_shape row(%row) row_end(%row_end) col(%col) {ggemm.k_ragged_layout = #ggemm.weight_layout<nk>} : !ggemm.accumulator<128x128xf32>, memref<512x256xf32>
        scf.yield %10#1 : index
      }
    }
  }
  return
}

// -----

// IR of an earlier stage.
func.func @problem(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                   %indptr: memref<5xi32>, %y: memref<?x128xbf16>) {
  // expected-error @+1 {{'ggemm.segment_matmul' op is a problem-level op: run ggemm-select-config and ggemm-tile before convert-ggemm-to-nvvm}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

func.func @no_roles(%n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  // expected-error @+1 {{'ggemm.launch' op has no warp roles: run ggemm-warp-specialize and ggemm-stage-ring before convert-ggemm-to-nvvm}}
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
  }
  return
}

// -----

// A split_k config needs the ggemm.split_k_sum that adds the ranks' partial
// sums.
func.func @split_k_without_sum(%n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, split_k = 2>)
  // expected-error @+1 {{'ggemm.launch' op expects one ggemm.split_k_sum in a launch of split_k = 2, got 0}}
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 32784>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
    } consumers(2) registers(232) {
    }
  }
  return
}

// -----

// The ranks of a split-K cluster walk the tiles together: not on a grid of
// one CTA per tile.
func.func @split_k_tiles_grid(%n: index, %acc: !ggemm.accumulator<128x128xf32>, %more: i1) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, split_k = 2>)
  // expected-error @+1 {{'ggemm.launch' op expects a persistent grid with split_k}}
  ggemm.launch %sched grid(tiles) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 131104,
                                  split_k_offset = 32784, split_k_bytes = 65552>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
    } consumers(2) registers(232) {
      %sum = ggemm.split_k_sum %acc rank(%n) round(%n) more(%more)
          : !ggemm.accumulator<128x128xf32>
    }
  }
  return
}

// -----

func.func @no_layout(%n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.create_ring' op expects a layout: run ggemm-stage-ring before convert-ggemm-to-nvvm}}
    %ring = ggemm.create_ring release_count(256)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
    } consumers(2) registers(232) {
    }
  }
  return
}

// -----

// The host function is erased: a caller would be left dangling.
// expected-error @+1 {{'func.func' op expects no callers: convert-ggemm-to-nvvm replaces the body of a function that holds ggemm launches by kernels the runtime launches, and erases the function}}
func.func @called(%n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
  }
  return
}
func.func @caller(%n: index) {
  func.call @called(%n) : (index) -> ()
  return
}

// -----

// ... and so would any other work of the host function.
func.func @other_work(%n: index, %m: memref<4xf32>, %f: f32) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  // expected-error @+1 {{'memref.store' op would be lost: convert-ggemm-to-nvvm erases the host function of ggemm launches, which may only hold the launches and side-effect-free ops}}
  memref.store %f, %m[%n] : memref<4xf32>
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
  }
  return
}

// -----

// A load whose tile is not put into a ring has no kernel counterpart.
func.func @load_without_ring(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                             %y: memref<?x128xbf16>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 32784>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
      // expected-error @+1 {{'ggemm.load_tile' op expects its result to be put into a stage ring: run ggemm-warp-specialize before convert-ggemm-to-nvvm}}
      %ta = ggemm.load_tile %x[%cta, %cta] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
      %tb = ggemm.load_tile %w[%cta, %cta, %cta] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      %acc = ggemm.mma %ta, %tb, %zero : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>
          -> !ggemm.accumulator<128x128xf32>
    } consumers(2) registers(232) {
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      ggemm.store_tile %zero to %y row(%cta) row_end(%cta) col(%cta)
          : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
    }
  }
  return
}

// -----

// The kernel addresses y row by row: its rows must be contiguous.
func.func @strided_y(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                     %y: memref<?x128xbf16, strided<[256, 2]>>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 32784>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
      %ta = ggemm.load_tile %x[%cta, %cta] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
      %tb = ggemm.load_tile %w[%cta, %cta, %cta] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
      ggemm.ring_put %ring[%cta], %ta, %tb
          : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    } consumers(2) registers(232) {
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      // expected-error @+1 {{'ggemm.store_tile' op expects the innermost dimension of y to be contiguous for the GPU back end, got 'memref<?x128xbf16, strided<[256, 2]>>'}}
      ggemm.store_tile %zero to %y row(%cta) row_end(%cta) col(%cta)
          : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16, strided<[256, 2]>>
    }
  }
  return
}

// -----

// Each consumer warpgroup takes 64 rows of the A tile.
func.func @a_rows(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                  %y: memref<?x128xbf16>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  // expected-error @+1 {{'ggemm.launch' op expects A tiles of 64 rows per consumer warpgroup (64), got '!ggemm.tile<128x64xbf16>'}}
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(128)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 32784>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
      %ta = ggemm.load_tile %x[%cta, %cta] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
      %tb = ggemm.load_tile %w[%cta, %cta, %cta] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
      ggemm.ring_put %ring[%cta], %ta, %tb
          : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    } consumers(1) registers(232) {
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      ggemm.store_tile %zero to %y row(%cta) row_end(%cta) col(%cta)
          : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
    }
  }
  return
}

// -----

// A cluster ring must multicast the weight tile, and only it.
func.func @cluster_multicast_entry(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, cluster_m = 2>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.create_ring' op expects the weight tile (entry 1) to be the one multicast entry of a ring of cluster_m = 2}}
    %ring = ggemm.create_ring release_count(16)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 32784>)
        {multicast = array<i64: 0>} : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
      %ta = ggemm.load_tile %x[%cta, %cta] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
      %tb = ggemm.load_tile %w[%cta, %cta, %cta] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
      ggemm.ring_put %ring[%cta], %ta, %tb
          : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    } consumers(2) registers(232) {
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      ggemm.store_tile %zero to %y row(%cta) row_end(%cta) col(%cta)
          : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
    }
  }
  return
}

// -----

// A cluster's CTAs walk their tiles together: no one-CTA-per-tile grid.
func.func @cluster_grid_tiles(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, cluster_m = 2>)
  // expected-error @+1 {{'ggemm.launch' op expects a persistent grid with clusters}}
  ggemm.launch %sched grid(tiles) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(16)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 32784>)
        {multicast = array<i64: 1>} : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
      %ta = ggemm.load_tile %x[%cta, %cta] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
      %tb = ggemm.load_tile %w[%cta, %cta, %cta] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
      ggemm.ring_put %ring[%cta], %ta, %tb
          : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    } consumers(2) registers(232) {
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      ggemm.store_tile %zero to %y row(%cta) row_end(%cta) col(%cta)
          : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
    }
  }
  return
}

// -----

// The multicast weight tile is split by rows: kn (mn_major) weights are
// not supported with clusters.
func.func @cluster_kn(%x: memref<?x256xbf16>, %w: memref<4x256x128xbf16>,
    %y: memref<?x128xbf16>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, cluster_m = 2>)
  // expected-error @+1 {{'ggemm.launch' op expects clusters only for segment, masked and batched kernels with nk weights, not swapped (the multicast weight tile is split by rows)}}
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(16)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 32784>)
        {multicast = array<i64: 1>} : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16, mn_major>>
    ggemm.warp_specialize producer registers(40) {
      %ta = ggemm.load_tile %x[%cta, %cta] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
      %tb = ggemm.load_tile %w[%cta, %cta, %cta] : memref<4x256x128xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
      ggemm.ring_put %ring[%cta], %ta, %tb
          : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16, mn_major>>
    } consumers(2) registers(232) {
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      ggemm.store_tile %zero to %y row(%cta) row_end(%cta) col(%cta)
          : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
    }
  }
  return
}

// -----

// A staged store needs room for its boxes: 2 boxes of 8 KB per consumer
// warpgroup, not 16 KB in all.
func.func @staging_bytes(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.create_ring' op expects staging_bytes for 2 boxes of 8192 bytes per consumer warpgroup, got 16384}}
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 66560, staging_offset = 33792, staging_bytes = 16384>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
      %ta = ggemm.load_tile %x[%cta, %cta] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
      %tb = ggemm.load_tile %w[%cta, %cta, %cta] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
      ggemm.ring_put %ring[%cta], %ta, %tb
          : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    } consumers(2) registers(232) {
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      ggemm.store_tile %zero to %y row(%cta) row_end(%cta) col(%cta)
          {staging = #ggemm.store_staging<rows = 64, cols = 64, buffers = 2>}
          : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
    }
  }
  return
}

// -----

// ggemm.store_drain waits for staged stores; without one it is an error.
func.func @drain_unstaged(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
    %y: memref<?x128xbf16>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 32784>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
      %ta = ggemm.load_tile %x[%cta, %cta] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
      %tb = ggemm.load_tile %w[%cta, %cta, %cta] : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
      ggemm.ring_put %ring[%cta], %ta, %tb
          : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    } consumers(2) registers(232) {
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      ggemm.store_tile %zero to %y row(%cta) row_end(%cta) col(%cta)
          : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
      // expected-error @+1 {{'ggemm.store_drain' op expects a staged ggemm.store_tile in the launch (ggemm-tma-store)}}
      ggemm.store_drain
    }
  }
  return
}

// -----

func.func @cluster_release_count(%n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, cluster_m = 2>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{'ggemm.create_ring' op expects a release count of one per consumer warp and cluster CTA (16), got 256}}
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 32784>)
        {multicast = array<i64: 1>}
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
    } consumers(2) registers(232) {
    }
  }
  return
}

// -----

func.func @cluster_4(%n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, cluster_m = 4>)
  // expected-error @+1 {{'ggemm.launch' op expects cluster_m of 1 or 2 for the GPU back end (the cluster size checked on a GPU), got 4}}
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(32)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 32784>)
        {multicast = array<i64: 1>}
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
    } consumers(2) registers(232) {
    }
  }
  return
}

// -----

func.func @cluster_n(%n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, cluster_n = 2>)
  // expected-error @+1 {{'ggemm.launch' op expects cluster_n = 1 for the GPU back end (clusters share weight tiles along m), got 2}}
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 32784>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
    } consumers(2) registers(232) {
    }
  }
  return
}

// -----

// FP8 block scales: two more kernel parameters (the activation scales' TMA
// descriptor, passed by value, and the weight scales); the activation
// scales arrive by TMA with the tiles; e4m3 wgmma with K = 32 per
// instruction, the first of a block's product with scale-d = 0; the
// manifest names the scale blocks and the scale parameters (the scales'
// box is block_m + 4 rows: it starts at a 16-byte-aligned row).
// CHECK: {box = [132, 1], dtype = "f32", kind = "tma_descriptor", name = "a_scale_desc", oob_fill = "zero", rank = 2 : i64, swizzle = "none", tensor = "x_scale"}
// CHECK-SAME: {kind = "pointer", name = "w_scale", optional = false, tensor = "w_scale"}
// CHECK-SAME: w_scale_block = "128x128"
// CHECK-SAME: x_scale_block = "1x128"
// CHECK-LABEL: gpu.func @fp8_kernel(
// CHECK-SAME: %[[ASD:arg14]]: !llvm.ptr, %[[WS:arg15]]: !llvm.ptr<1>)
// CHECK-SAME: ggemm.grid_constant_args = array<i64: 0, 1, 14>
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg0,
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg1,
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %[[ASD]], %{{.+}}, box[%{{.+}}, %{{.+}}]
// The consumers find each block's scales at the ring_get's scale offsets:
// the only shared-memory loads between the full wait and the wgmma are the
// scales themselves.
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: llvm.load %{{.+}} : !llvm.ptr<3> -> i32
// CHECK: llvm.load %{{.+}} : !llvm.ptr<3> -> f32
// CHECK-NOT: llvm.load %{{.+}} : !llvm.ptr<3> -> i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async %{{.+}}, %{{.+}}, %{{.+}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async %{{.+}}, %{{.+}}, %{{.+}}, <m = 64, n = 128, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @fp8(%arg0: memref<?x256xf8E4M3FN>, %arg1: memref<2x256x256xf8E4M3FN>, %arg2: memref<3xi32>, %arg3: memref<?x2xf32, strided<[1, ?]>>, %arg4: memref<2x2x2xf32>, %arg5: memref<?x256xbf16>) {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x256xf8E4M3FN>
  %c256 = arith.constant 256 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<3xi32>) groups(%c2) rows_per_group(%c0) num_rows(%dim) num_cols(%c256) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536, 131072, 133632], stage_bytes = [16384, 16384, 640, 128], barrier_offset = 134144, smem_bytes = 134208>) : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>, !ggemm.scales<1>>
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

// The weight scales in the ring must be those of the 128-row blocks a tile
// covers: one for 128 rows (getScaleBlocksPerTile), not two.
func.func @fp8_weight_scale_count(%arg0: memref<?x256xf8E4M3FN>, %arg1: memref<2x256x256xf8E4M3FN>, %arg2: memref<3xi32>, %arg3: memref<?x2xf32, strided<[1, ?]>>, %arg4: memref<2x2x2xf32>, %arg5: memref<?x256xbf16>) {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x256xf8E4M3FN>
  %c256 = arith.constant 256 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<3xi32>) groups(%c2) rows_per_group(%c0) num_rows(%dim) num_cols(%c256) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>)
  // expected-error @+1 {{'ggemm.launch' op expects the scales of the 128-row weight scale blocks a tile of 128 rows covers (1), got '!ggemm.scales<2>'}}
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536, 131072, 133632], stage_bytes = [16384, 16384, 640, 128], barrier_offset = 134144, smem_bytes = 134208>) : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>, !ggemm.scales<2>>
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
          %10 = ggemm.load_scales %arg4[%group, %9, %arg8] : memref<2x2x2xf32> -> !ggemm.scales<2>
          ggemm.ring_put %1[%arg9], %6, %7, %8, %10 : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>, !ggemm.scales<2>>
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
          %6:4 = ggemm.ring_get %1[%arg10] scale_offsets(%scale_offset, %c0_3) : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>, !ggemm.scales<2>>
          %7 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
          %8 = ggemm.mma %6#0, %6#1, %7 : !ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN> -> !ggemm.accumulator<128x128xf32>
          %9 = ggemm.promote %8 into %arg9 a_scales(%6#2 : !ggemm.scales<128>) b_scales(%6#3 : !ggemm.scales<2>) : !ggemm.accumulator<128x128xf32>
          ggemm.ring_release %1[%arg10] : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>, !ggemm.scales<128>, !ggemm.scales<2>>
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

// FP8 with per-token and per-channel scales: no scales in the ring, a
// plain wgmma K loop; the store multiplies each accumulator element by
// x_scale[row] (loaded once per fragment row, after the row mask) times
// w_scale[weight, col] (per column, as a bias), before the conversion to
// bf16. Both scales are the last two parameters, by address.
// CHECK: {kind = "pointer", name = "x_scale", optional = false, tensor = "x_scale"}, {kind = "pointer", name = "w_scale", optional = false, tensor = "w_scale"}]
// CHECK-SAME: w_scale_block = "per_row"
// CHECK-SAME: x_scale_block = "per_row"
// CHECK-LABEL: gpu.func @fp8_rowwise_kernel(
// CHECK-SAME: %[[XS:arg14]]: !llvm.ptr<1>, %[[WS:arg15]]: !llvm.ptr<1>)
// CHECK-SAME: ggemm.grid_constant_args = array<i64: 0, 1>
// CHECK: nvvm.wgmma.mma_async %{{.+}}, %{{.+}}, %{{.+}}, <m = 64, n = 128, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK: %[[ROWOK:.+]] = arith.cmpi ult, %[[ROW:.+]], %{{.+}} : index
// CHECK-NEXT: scf.if %[[ROWOK]] {
// CHECK-NEXT: %[[ROW64:.+]] = arith.index_cast %[[ROW]] : index to i64
// CHECK-NEXT: %[[XSP:.+]] = llvm.getelementptr %[[XS]][%[[ROW64]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT: %[[SX:.+]] = llvm.load %[[XSP]] : !llvm.ptr<1> -> f32
// CHECK: %[[WSP:.+]] = llvm.getelementptr %[[WS]][%{{.+}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT: %[[SW:.+]] = llvm.load %[[WSP]] : !llvm.ptr<1> -> f32
// CHECK-NEXT: %[[F:.+]] = arith.mulf %[[SX]], %[[SW]] : f32
// CHECK-NEXT: %[[V:.+]] = arith.mulf %{{.+}}, %[[F]] : f32
// CHECK-NEXT: arith.truncf %[[V]] : f32 to bf16
func.func @fp8_rowwise(%arg0: memref<?x256xf8E4M3FN>, %arg1: memref<2x128x256xf8E4M3FN>, %arg2: memref<3xi32>, %arg3: memref<?xf32>, %arg4: memref<2x128xf32>, %arg5: memref<?x128xbf16>) {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x256xf8E4M3FN>
  %c128 = arith.constant 128 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<3xi32>) groups(%c2) rows_per_group(%c0) num_rows(%dim) num_cols(%c128) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 16384], barrier_offset = 131072, smem_bytes = 131136>) : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>>
    %2 = ggemm.tile_count %0
    ggemm.warp_specialize producer registers(40) {
      %c0_1 = arith.constant 0 : index
      %3 = scf.for %arg6 = %cta to %2 step %num_ctas iter_args(%arg7 = %c0_1) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg6]
        %c2_2 = arith.constant 2 : index
        %c128_3 = arith.constant 128 : index
        %c0_4 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %4 = scf.for %arg8 = %c0_4 to %c2_2 step %c1 iter_args(%arg9 = %arg7) -> (index) {
          %5 = arith.muli %arg8, %c128_3 : index
          %6 = ggemm.load_tile %arg0[%row, %5] : memref<?x256xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
          %7 = ggemm.load_tile %arg1[%group, %col, %5] : memref<2x128x256xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
          ggemm.ring_put %1[%arg9], %6, %7 : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>>
          %c1_5 = arith.constant 1 : index
          %8 = arith.addi %arg9, %c1_5 : index
          scf.yield %8 : index
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
        %4 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
        %5:2 = scf.for %arg8 = %c0_3 to %c2_2 step %c1 iter_args(%arg9 = %4, %arg10 = %arg7) -> (!ggemm.accumulator<128x128xf32>, index) {
          %8:2 = ggemm.ring_get %1[%arg10] : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>>
          %9 = ggemm.mma %8#0, %8#1, %arg9 {pending = 1 : i64} : !ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN> -> !ggemm.accumulator<128x128xf32>
          %10 = arith.cmpi ugt, %arg8, %c0_3 : index
          scf.if %10 {
            %c1_5 = arith.constant 1 : index
            %12 = arith.subi %arg10, %c1_5 : index
            ggemm.ring_release %1[%12] : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>>
          }
          %c1_4 = arith.constant 1 : index
          %11 = arith.addi %arg10, %c1_4 : index
          scf.yield %9, %11 : !ggemm.accumulator<128x128xf32>, index
        }
        %6 = ggemm.mma_wait %5#0 : !ggemm.accumulator<128x128xf32>
        %7 = arith.cmpi ugt, %5#1, %arg7 : index
        scf.if %7 {
          %c1_4 = arith.constant 1 : index
          %8 = arith.subi %5#1, %c1_4 : index
          ggemm.ring_release %1[%8] : !ggemm.ring<!ggemm.tile<128x128xf8E4M3FN>, !ggemm.tile<128x128xf8E4M3FN>>
        }
        ggemm.store_tile %6 to %arg5 row(%row) row_end(%row_end) col(%col) x_scale(%arg3 : memref<?xf32>) w_scale(%arg4[%group] : memref<2x128xf32>) : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
        scf.yield %5#1 : index
      }
    }
  }
  return
}

// -----

// INT8 with per-token and per-channel scales: the kernel of fp8_rowwise
// with s8 tiles. The i32 accumulator starts as an i32 struct, wgmma sums s8
// x s8 into s32 (exact), and the store converts each register to f32
// (sitofp) before the dequantisation; the manifest names the operands s8.
// CHECK: {box = [128, 128], dtype = "s8", kind = "tma_descriptor", name = "a_desc"
// CHECK-SAME: a_dtype = "s8"
// CHECK-SAME: b_dtype = "s8"
// CHECK-LABEL: gpu.func @int8_rowwise_kernel(
// CHECK: llvm.mlir.zero : !llvm.struct<(i32,
// CHECK: nvvm.wgmma.mma_async %{{.+}}, %{{.+}}, %{{.+}}, <m = 64, n = 128, k = 32>, D[<s32>, <one>], A[<s8>, <one>, <row>], B[<s8>, <one>, <col>]
// CHECK: %[[R0:.+]] = llvm.extractvalue %{{.+}}[0] : !llvm.struct<(i32,
// CHECK-NEXT: %[[F0:.+]] = arith.sitofp %[[R0]] : i32 to f32
// CHECK-NEXT: llvm.insertvalue %[[F0]], %{{.+}}[0] : !llvm.struct<(f32,
func.func @int8_rowwise(%arg0: memref<?x256xi8>, %arg1: memref<2x128x256xi8>, %arg2: memref<3xi32>, %arg3: memref<?xf32>, %arg4: memref<2x128xf32>, %arg5: memref<?x128xbf16>) {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x256xi8>
  %c128 = arith.constant 128 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<3xi32>) groups(%c2) rows_per_group(%c0) num_rows(%dim) num_cols(%c128) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 16384], barrier_offset = 131072, smem_bytes = 131136>) : !ggemm.ring<!ggemm.tile<128x128xi8>, !ggemm.tile<128x128xi8>>
    %2 = ggemm.tile_count %0
    ggemm.warp_specialize producer registers(40) {
      %c0_1 = arith.constant 0 : index
      %3 = scf.for %arg6 = %cta to %2 step %num_ctas iter_args(%arg7 = %c0_1) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg6]
        %c2_2 = arith.constant 2 : index
        %c128_3 = arith.constant 128 : index
        %c0_4 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %4 = scf.for %arg8 = %c0_4 to %c2_2 step %c1 iter_args(%arg9 = %arg7) -> (index) {
          %5 = arith.muli %arg8, %c128_3 : index
          %6 = ggemm.load_tile %arg0[%row, %5] : memref<?x256xi8> -> !ggemm.tile<128x128xi8>
          %7 = ggemm.load_tile %arg1[%group, %col, %5] : memref<2x128x256xi8> -> !ggemm.tile<128x128xi8>
          ggemm.ring_put %1[%arg9], %6, %7 : !ggemm.ring<!ggemm.tile<128x128xi8>, !ggemm.tile<128x128xi8>>
          %c1_5 = arith.constant 1 : index
          %8 = arith.addi %arg9, %c1_5 : index
          scf.yield %8 : index
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
        %4 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xi32>
        %5:2 = scf.for %arg8 = %c0_3 to %c2_2 step %c1 iter_args(%arg9 = %4, %arg10 = %arg7) -> (!ggemm.accumulator<128x128xi32>, index) {
          %8:2 = ggemm.ring_get %1[%arg10] : !ggemm.ring<!ggemm.tile<128x128xi8>, !ggemm.tile<128x128xi8>>
          %9 = ggemm.mma %8#0, %8#1, %arg9 {pending = 1 : i64} : !ggemm.tile<128x128xi8>, !ggemm.tile<128x128xi8> -> !ggemm.accumulator<128x128xi32>
          %10 = arith.cmpi ugt, %arg8, %c0_3 : index
          scf.if %10 {
            %c1_5 = arith.constant 1 : index
            %12 = arith.subi %arg10, %c1_5 : index
            ggemm.ring_release %1[%12] : !ggemm.ring<!ggemm.tile<128x128xi8>, !ggemm.tile<128x128xi8>>
          }
          %c1_4 = arith.constant 1 : index
          %11 = arith.addi %arg10, %c1_4 : index
          scf.yield %9, %11 : !ggemm.accumulator<128x128xi32>, index
        }
        %6 = ggemm.mma_wait %5#0 : !ggemm.accumulator<128x128xi32>
        %7 = arith.cmpi ugt, %5#1, %arg7 : index
        scf.if %7 {
          %c1_4 = arith.constant 1 : index
          %8 = arith.subi %5#1, %c1_4 : index
          ggemm.ring_release %1[%8] : !ggemm.ring<!ggemm.tile<128x128xi8>, !ggemm.tile<128x128xi8>>
        }
        ggemm.store_tile %6 to %arg5 row(%row) row_end(%row_end) col(%col) x_scale(%arg3 : memref<?xf32>) w_scale(%arg4[%group] : memref<2x128xf32>) : !ggemm.accumulator<128x128xi32>, memref<?x128xbf16>
        scf.yield %5#1 : index
      }
    }
  }
  return
}

// -----

// An e4m3 y: each row's 128-column block of a tile is quantised by the
// quad of lanes that holds it. The lane's maximum |value| goes through two
// butterfly shuffles (xor 1, 2: the quad), ggemm.quantize's arithmetic
// gives the scale and factor, the quad's first lane stores the scale at
// (row, block) with y_scale's two strides, and pairs of columns are packed
// by cvt.rn.satfinite.e4m3x2 and stored as 16 bits.
// CHECK: {kind = "pointer", name = "y_scale", optional = false, tensor = "y_scale"}, {dtype = "i64", kind = "scalar", name = "y_scale_stride_row", value = "y_scale_stride_row"}, {dtype = "i64", kind = "scalar", name = "y_scale_stride_col", value = "y_scale_stride_col"}]
// CHECK-SAME: out_dtype = "f8e4m3"
// CHECK-SAME: y_scale_block = "1x128"
// CHECK-LABEL: gpu.func @fp8_out_kernel(
// CHECK-SAME: %[[YS:arg14]]: !llvm.ptr<1>, %{{arg15}}: i64, %{{arg16}}: i64)
// CHECK: %[[S1:.+]] = nvvm.shfl.sync bfly %{{.+}}, %[[L:.+]], %c1_i32, %{{.+}} : f32 -> f32
// CHECK-NEXT: %[[M1:.+]] = arith.maximumf %[[L]], %[[S1]] : f32
// CHECK: %[[S2:.+]] = nvvm.shfl.sync bfly %{{.+}}, %[[M1]], %c2_i32, %{{.+}} : f32 -> f32
// CHECK-NEXT: %[[AMAX:.+]] = arith.maximumf %[[M1]], %[[S2]] : f32
// CHECK: %[[FLOORED:.+]] = arith.maximumf %[[AMAX]], %{{.+}} : f32
// CHECK: %[[SCALE:.+]] = arith.mulf %[[FLOORED]], %{{.+}} : f32
// CHECK: %[[RECIP:.+]] = arith.divf %{{.+}}, %[[FLOORED]] : f32
// CHECK: %[[FACTOR:.+]] = arith.mulf %[[RECIP]], %{{.+}} : f32
// CHECK: scf.if
// CHECK: %[[AT:.+]] = llvm.getelementptr %[[YS]][%{{.+}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT: llvm.store %[[SCALE]], %[[AT]] : f32, !llvm.ptr<1>
// CHECK: %[[LO:.+]] = arith.mulf %{{.+}}, %[[FACTOR]] : f32
// CHECK: %[[HI:.+]] = arith.mulf %{{.+}}, %[[FACTOR]] : f32
// CHECK: %[[PAIR:.+]] = nvvm.convert.f32x2.to.f8x2 %[[HI]], %[[LO]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK: llvm.store %[[PAIR]], %{{.+}} {alignment = 2 : i64} : i16, !llvm.ptr<1>
func.func @fp8_out(%arg0: memref<?x256xbf16>, %arg1: memref<2x128x256xbf16>, %arg2: memref<3xi32>, %arg3: memref<?x128xf8E4M3FN>, %arg4: memref<?x1xf32, strided<[1, ?]>>) {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x256xbf16>
  %c128 = arith.constant 128 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<3xi32>) groups(%c2) rows_per_group(%c0) num_rows(%dim) num_cols(%c128) config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 16384], barrier_offset = 131072, smem_bytes = 131136>) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    %2 = ggemm.tile_count %0
    ggemm.warp_specialize producer registers(40) {
      %c0_1 = arith.constant 0 : index
      %3 = scf.for %arg5 = %cta to %2 step %num_ctas iter_args(%arg6 = %c0_1) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg5]
        %c4 = arith.constant 4 : index
        %c64 = arith.constant 64 : index
        %c0_2 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %4 = scf.for %arg7 = %c0_2 to %c4 step %c1 iter_args(%arg8 = %arg6) -> (index) {
          %5 = arith.muli %arg7, %c64 : index
          %6 = ggemm.load_tile %arg0[%row, %5] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
          %7 = ggemm.load_tile %arg1[%group, %col, %5] : memref<2x128x256xbf16> -> !ggemm.tile<128x64xbf16>
          ggemm.ring_put %1[%arg8], %6, %7 : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %c1_3 = arith.constant 1 : index
          %8 = arith.addi %arg8, %c1_3 : index
          scf.yield %8 : index
        }
        scf.yield %4 : index
      }
    } consumers(2) registers(232) {
      %c0_1 = arith.constant 0 : index
      %3 = scf.for %arg5 = %cta to %2 step %num_ctas iter_args(%arg6 = %c0_1) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg5]
        %c4 = arith.constant 4 : index
        %c0_2 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %4 = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
        %5:2 = scf.for %arg7 = %c0_2 to %c4 step %c1 iter_args(%arg8 = %4, %arg9 = %arg6) -> (!ggemm.accumulator<128x128xf32>, index) {
          %8:2 = ggemm.ring_get %1[%arg9] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %9 = ggemm.mma %8#0, %8#1, %arg8 {pending = 1 : i64} : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<128x128xf32>
          %10 = arith.cmpi ugt, %arg7, %c0_2 : index
          scf.if %10 {
            %c1_4 = arith.constant 1 : index
            %12 = arith.subi %arg9, %c1_4 : index
            ggemm.ring_release %1[%12] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          }
          %c1_3 = arith.constant 1 : index
          %11 = arith.addi %arg9, %c1_3 : index
          scf.yield %9, %11 : !ggemm.accumulator<128x128xf32>, index
        }
        %6 = ggemm.mma_wait %5#0 : !ggemm.accumulator<128x128xf32>
        %7 = arith.cmpi ugt, %5#1, %arg6 : index
        scf.if %7 {
          %c1_3 = arith.constant 1 : index
          %8 = arith.subi %5#1, %c1_3 : index
          ggemm.ring_release %1[%8] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
        }
        ggemm.store_tile %6 to %arg3 row(%row) row_end(%row_end) col(%col) y_scale(%arg4 : memref<?x1xf32, strided<[1, ?]>>) : !ggemm.accumulator<128x128xf32>, memref<?x128xf8E4M3FN>
        scf.yield %5#1 : index
      }
    }
  }
  return
}

// -----

// A staged epilogue (ggemm-tma-store): y's descriptor is the last
// parameter (passed by value), and per 64-column box each consumer
// warpgroup waits until the store that last read the box has finished
// reading it, meets at its named barrier, writes the box (swizzled pairs
// of bf16), fences the async proxy, meets again, and one thread issues the
// TMA store; the role ends waiting for its stores. Warpgroups whose rows
// reach past row_end keep the masked global stores.
// CHECK: staged_kernel = {block = [384, 1, 1], cluster = [1, 1, 1], dependent_launch = false, dynamic_smem = 230400 : i64
// CHECK-SAME: {box = [64, 64], dtype = "bf16", kind = "tma_descriptor", name = "y_desc", oob_fill = "zero", rank = 2 : i64, swizzle = "128B", tensor = "y"}
// CHECK-LABEL: gpu.func @staged_kernel(
// CHECK-SAME: %[[YDESC:arg14]]: !llvm.ptr)
// CHECK-SAME: ggemm.grid_constant_args = array<i64: 0, 1, 14>
// CHECK: scf.if %{{.+}} {
// CHECK: nvvm.cp.async.bulk.wait_group 1 {read}
// CHECK: nvvm.barrier id = %[[BAR:.+]] number_of_threads = %{{.+}}
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %[[BAR]] number_of_threads = %{{.+}}
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[YDESC]], %{{.+}}, box[%{{.+}}, %{{.+}}] : !llvm.ptr, <3>
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[YDESC]]
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[YDESC]]
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[YDESC]]
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: } else {
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<1>
// CHECK: nvvm.cp.async.bulk.wait_group 0
// CHECK-NOT: {read}
func.func @staged(%arg0: memref<?x256xbf16>, %arg1: memref<4x256x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<?x256xbf16>, %arg4: index, %arg5: index, %arg6: index) {
  %c0 = arith.constant 0 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<5xi32>) groups(%arg4) rows_per_group(%c0) num_rows(%arg5) num_cols(%arg6) config(#ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 32768], barrier_offset = 196608, smem_bytes = 230400, staging_offset = 197632, staging_bytes = 32768>) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
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

// A staged store whose ring has no room placed for it.
func.func @staged_unplaced(%arg0: memref<?x256xbf16>, %arg1: memref<4x256x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<?x256xbf16>, %arg4: index, %arg5: index, %arg6: index) {
  %c0 = arith.constant 0 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<5xi32>) groups(%arg4) rows_per_group(%c0) num_rows(%arg5) num_cols(%arg6) config(#ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    // expected-error @+1 {{expects a layout with the store staging of the launch's ggemm.store_tile: run ggemm-stage-ring after ggemm-tma-store}}
    %1 = ggemm.create_ring release_count(256) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 32768], barrier_offset = 196608, smem_bytes = 196672>) : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
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

// 2-CTA clusters along m (cluster_m = 2): the manifest asks for clusters of
// 2 and weight boxes of half the tile's rows; after the mbarrier set-up the
// cluster meets (peers arrive on this CTA's mbarriers and multicast into
// its slots); each producer multicasts its half of the weight tile into
// both CTAs (mask 0b11), its A tile only into its own; lane r < 2 of every
// consumer warp releases a slot on CTA r (mapa, arrive on shared::cluster)
// after a warp barrier, which orders the other lanes' reads of the slot
// before that arrival; the cluster meets again before the kernel returns.
// CHECK: clustered_kernel = {block = [384, 1, 1], cluster = [2, 1, 1]
// CHECK-SAME: {box = [64, 128, 1], dtype = "bf16", kind = "tma_descriptor", name = "b_desc"
// CHECK-LABEL: gpu.func @clustered_kernel(
// CHECK: %[[BLOCK:.+]] = gpu.block_id  x
// CHECK: %[[RANK:.+]] = arith.remui %[[BLOCK]], %{{.+}} : index
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg0, %{{.+}}, box[%{{.+}}, %{{.+}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK: %[[MASK:.+]] = arith.constant 3 : i16
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg1, %{{.+}}, box[%{{.+}}, %{{.+}}, %{{.+}}] multicast_mask = %[[MASK]] : !llvm.ptr<7>, !llvm.ptr
// CHECK: nvvm.bar.warp.sync %{{.+}} : i32
// CHECK: %[[LANE:.+]] = arith.remui %{{.+}}, %{{.+}} : index
// CHECK: scf.if %{{.+}} {
// CHECK: %[[REMOTE:.+]] = nvvm.mapa %{{.+}}, %{{.+}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[REMOTE]] : !llvm.ptr<7>
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: gpu.return
func.func @clustered(%arg0: memref<?x256xbf16>, %arg1: memref<4x256x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<?x256xbf16>) {
  %c4 = arith.constant 4 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x256xbf16>
  %c256 = arith.constant 256 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<5xi32>) groups(%c4) rows_per_group(%c0) num_rows(%dim) num_cols(%c256) config(#ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, cluster_m = 2, raster = along_m>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(16) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536], stage_bytes = [16384, 32768], barrier_offset = 196608, smem_bytes = 230400, staging_offset = 197632, staging_bytes = 32768>) {multicast = array<i64: 1>} : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
    %2 = ggemm.tile_count %0
    %c2 = arith.constant 2 : index
    %3 = arith.divui %cta, %c2 : index
    %4 = arith.remui %cta, %c2 : index
    %5 = arith.divui %num_ctas, %c2 : index
    ggemm.warp_specialize producer registers(40) {
      %c0_1 = arith.constant 0 : index
      %6 = scf.for %arg4 = %3 to %2 step %5 iter_args(%arg5 = %c0_1) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg4] cluster_rank(%4)
        %c4_2 = arith.constant 4 : index
        %c64 = arith.constant 64 : index
        %c0_3 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %7 = scf.for %arg6 = %c0_3 to %c4_2 step %c1 iter_args(%arg7 = %arg5) -> (index) {
          %8 = arith.muli %arg6, %c64 : index
          %9 = ggemm.load_tile %arg0[%row, %8] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
          %10 = ggemm.load_tile %arg1[%group, %col, %8] : memref<4x256x256xbf16> -> !ggemm.tile<256x64xbf16>
          ggemm.ring_put %1[%arg7], %9, %10 : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          %c1_4 = arith.constant 1 : index
          %11 = arith.addi %arg7, %c1_4 : index
          scf.yield %11 : index
        }
        scf.yield %7 : index
      }
    } consumers(2) registers(232) {
      %c0_1 = arith.constant 0 : index
      %6 = scf.for %arg4 = %3 to %2 step %5 iter_args(%arg5 = %c0_1) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %0[%arg4] cluster_rank(%4)
        %c4_2 = arith.constant 4 : index
        %c0_3 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %7 = ggemm.zero_accumulator : !ggemm.accumulator<128x256xf32>
        %8:2 = scf.for %arg6 = %c0_3 to %c4_2 step %c1 iter_args(%arg7 = %7, %arg8 = %arg5) -> (!ggemm.accumulator<128x256xf32>, index) {
          %11:2 = ggemm.ring_get %1[%arg8] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          %12 = ggemm.mma %11#0, %11#1, %arg7 {pending = 1 : i64} : !ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16> -> !ggemm.accumulator<128x256xf32>
          %13 = arith.cmpi ugt, %arg6, %c0_3 : index
          scf.if %13 {
            %c1_5 = arith.constant 1 : index
            %15 = arith.subi %arg8, %c1_5 : index
            ggemm.ring_release %1[%15] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
          }
          %c1_4 = arith.constant 1 : index
          %14 = arith.addi %arg8, %c1_4 : index
          scf.yield %12, %14 : !ggemm.accumulator<128x256xf32>, index
        }
        %9 = ggemm.mma_wait %8#0 : !ggemm.accumulator<128x256xf32>
        %10 = arith.cmpi ugt, %8#1, %arg5 : index
        scf.if %10 {
          %c1_4 = arith.constant 1 : index
          %11 = arith.subi %8#1, %c1_4 : index
          ggemm.ring_release %1[%11] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
        }
        ggemm.store_tile %9 to %arg3 row(%row) row_end(%row_end) col(%col) {staging = #ggemm.store_staging<rows = 64, cols = 64, buffers = 2>} : !ggemm.accumulator<128x256xf32>, memref<?x256xbf16>
        scf.yield %8#1 : index
      }
      ggemm.store_drain
    }
  }
  return
}

// -----

// A split-K launch (split_k = 2): clusters of 2 CTAs in the manifest, and
// split_k in its tile; the split-K buffer's full mbarrier counts the other
// rank's 128 consumer threads and its empty one rank 0's 128, set up with
// the ring's before the cluster meets. ggemm.split_k_sum: rank 0 waits
// for the full mbarrier's phase with a cluster-scoped acquire, adds the
// other rank's partial (16-byte loads of its slot) to its registers and,
// when the cluster has another tile, arrives on rank 1's empty mbarrier
// (mapa) with a cluster-scoped release; rank 1 waits for its empty
// mbarrier after its first tile, stores its registers into rank 0's slot
// (one mapa, then 16-byte stores to shared::cluster at constant offsets
// from it) and arrives on rank 0's full
// mbarrier. The cluster meets again before the kernel returns.
// CHECK: split_kernel = {block = [256, 1, 1], cluster = [2, 1, 1]
// CHECK-SAME: tile = {block_k = 64 : i64, block_m = 64 : i64, block_n = 64 : i64, consumer_warpgroups = 1 : i64, split_k = 2 : i64
// CHECK-LABEL: gpu.func @split_kernel(
// CHECK: arith.constant 16384 : index
// CHECK: nvvm.mbarrier.init %{{.+}}, %c128_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: arith.constant 16392 : index
// CHECK: nvvm.mbarrier.init %{{.+}}, %c128_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK: %{{.+}} = scf.if %{{.+}} -> (!llvm.struct<(f32, {{.*}})>) {
// CHECK-NEXT: scf.while : () -> () {
// CHECK: nvvm.mbarrier.try_wait %{{.+}}, %{{.+}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<3>, i32 -> i1
// CHECK: llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK: arith.addf
// CHECK: scf.if %{{.+}} {
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[PEER:.+]] = nvvm.mapa %{{.+}}, %[[ONE]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[PEER]] {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK: } else {
// CHECK: scf.if %{{.+}} {
// CHECK: nvvm.mbarrier.try_wait %{{.+}}, %{{.+}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<3>, i32 -> i1
// CHECK: %[[SLOT:.+]] = nvvm.mapa %{{.+}}, %{{.+}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: %[[AT:.+]] = llvm.getelementptr %[[SLOT]][%{{.+}}] : (!llvm.ptr<7>, i64) -> !llvm.ptr<7>, i8
// CHECK-NEXT: llvm.store %{{.+}}, %[[AT]] {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<7>
// CHECK: nvvm.mbarrier.arrive %{{.+}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK-NEXT: scf.yield
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: gpu.return
func.func @split(%arg0: memref<?x512xbf16>, %arg1: memref<1x128x512xbf16>, %arg2: memref<2xi32>, %arg3: memref<?x128xbf16>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x512xbf16>
  %c128 = arith.constant 128 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<2xi32>) groups(%c1) rows_per_group(%c0) num_rows(%dim) num_cols(%c128) config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, consumer_warpgroups = 1, split_k = 2>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(128) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 32768], stage_bytes = [8192, 8192], barrier_offset = 65536, smem_bytes = 82000, split_k_offset = 65600, split_k_bytes = 16400>) : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16>>
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

// A split (gate/up) weight tile needs a gated store, and a gated store a
// split weight tile.
func.func @split_without_gated_store(%x: memref<?x256xbf16>, %w: memref<4x256x256xbf16>,
    %y: memref<?x128xbf16>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  // expected-error @+1 {{'ggemm.launch' op expects a split weight tile exactly with a gated (swiglu) ggemm.store_tile of side-by-side gate and up halves (gate_up_block = 0), got a split weight tile and an ungated store with gate_up_block = 0}}
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 32784>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
      %ta = ggemm.load_tile %x[%cta, %cta] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
      %tb = ggemm.load_tile %w[%cta, %cta, %cta] split(%n) : memref<4x256x256xbf16> -> !ggemm.tile<128x64xbf16>
      ggemm.ring_put %ring[%cta], %ta, %tb
          : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    } consumers(2) registers(232) {
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      ggemm.store_tile %zero to %y row(%cta) row_end(%cta) col(%cta)
          : !ggemm.accumulator<128x128xf32>, memref<?x128xbf16>
    }
  }
  return
}

// -----

// A gated kernel over a weight of interleaved gate/up blocks (gate_up_block
// = 64, block_n = 128): the producer loads the weight tile, one block of 64
// gate and 64 up rows, with one 3-d TMA load of a 128-row box (side by side
// it would be two of 64 rows, N apart); the manifest's b_desc box is the
// whole tile and the problem records gate_up_block.
// CHECK: module attributes {ggemm.manifests = {interleaved_up_kernel = {
// CHECK-SAME: {box = [64, 128, 1], dtype = "bf16", kind = "tma_descriptor", name = "b_desc"
// CHECK-SAME: problem = {a_dtype = "bf16", accumulate = false, activation = "swiglu", b_dtype = "bf16", gate_up_block = 64 : i64,
// CHECK-LABEL: gpu.func @interleaved_up_kernel(
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg0, %{{.+}}, box[%{{.+}}, %{{.+}}] :
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg1, %{{.+}}, box[%{{.+}}, %{{.+}}, %{{.+}}] :
// CHECK-NOT: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.wgmma.mma_async
func.func @interleaved_up(%x: memref<?x256xbf16>, %w: memref<4x512x256xbf16>,
                          %indptr: memref<5xi32>, %y: memref<?x256xbf16>) {
  %c4 = arith.constant 4 : index
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x256xbf16>
  %c512 = arith.constant 512 : index
  %sched = ggemm.tile_schedule segment rows(%indptr : memref<5xi32>) groups(%c4) rows_per_group(%c0) num_rows(%m) num_cols(%c512)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, stages = 2>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 2, offsets = [0, 32768], stage_bytes = [16384, 16384],
                                  barrier_offset = 65536, smem_bytes = 65568>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    %tiles = ggemm.tile_count %sched
    ggemm.warp_specialize producer registers(40) {
      %z = arith.constant 0 : index
      %end = scf.for %t = %cta to %tiles step %num_ctas iter_args(%slot = %z) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %sched[%t]
        %kb = arith.constant 4 : index
        %c64 = arith.constant 64 : index
        %c1 = arith.constant 1 : index
        %next = scf.for %i = %z to %kb step %c1 iter_args(%s = %slot) -> (index) {
          %k = arith.muli %i, %c64 : index
          %ta = ggemm.load_tile %x[%row, %k] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
          %tb = ggemm.load_tile %w[%group, %col, %k] : memref<4x512x256xbf16> -> !ggemm.tile<128x64xbf16>
          ggemm.ring_put %ring[%s], %ta, %tb : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %s1 = arith.addi %s, %c1 : index
          scf.yield %s1 : index
        }
        scf.yield %next : index
      }
    } consumers(2) registers(232) {
      %z = arith.constant 0 : index
      %end = scf.for %t = %cta to %tiles step %num_ctas iter_args(%slot = %z) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %sched[%t]
        %c2 = arith.constant 2 : index
        %out_col = arith.divui %col, %c2 : index
        %kb = arith.constant 4 : index
        %c1 = arith.constant 1 : index
        %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
        %acc:2 = scf.for %i = %z to %kb step %c1 iter_args(%a = %zero, %s = %slot) -> (!ggemm.accumulator<128x128xf32>, index) {
          %tiles2:2 = ggemm.ring_get %ring[%s] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          %p = ggemm.mma %tiles2#0, %tiles2#1, %a {pending = 1 : i64} : !ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<128x128xf32>
          %later = arith.cmpi ugt, %i, %z : index
          scf.if %later {
            %prev = arith.subi %s, %c1 : index
            ggemm.ring_release %ring[%prev] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
          }
          %s1 = arith.addi %s, %c1 : index
          scf.yield %p, %s1 : !ggemm.accumulator<128x128xf32>, index
        }
        %done = ggemm.mma_wait %acc#0 : !ggemm.accumulator<128x128xf32>
        %any = arith.cmpi ugt, %acc#1, %slot : index
        scf.if %any {
          %last = arith.subi %acc#1, %c1 : index
          ggemm.ring_release %ring[%last] : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
        }
        ggemm.store_tile %done to %y row(%row) row_end(%row_end) col(%out_col)
            {epilogue = #ggemm.epilogue<activation = swiglu, gate_up_block = 64>}
            : !ggemm.accumulator<128x128xf32>, memref<?x256xbf16>
        scf.yield %acc#1 : index
      }
    }
  }
  return
}

// -----

// Interleaved gate/up blocks: the weight tile is one load of a whole block
// (2 x gate_up_block rows), never split.
func.func @interleaved_split(%x: memref<?x256xbf16>, %w: memref<4x256x256xbf16>,
    %y: memref<?x64xbf16>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  // expected-error @+1 {{'ggemm.launch' op expects a split weight tile exactly with a gated (swiglu) ggemm.store_tile of side-by-side gate and up halves (gate_up_block = 0), got a split weight tile and a gated store with gate_up_block = 64}}
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 32784>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
      %ta = ggemm.load_tile %x[%cta, %cta] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
      %tb = ggemm.load_tile %w[%cta, %cta, %cta] split(%n) : memref<4x256x256xbf16> -> !ggemm.tile<128x64xbf16>
      ggemm.ring_put %ring[%cta], %ta, %tb
          : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    } consumers(2) registers(232) {
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      ggemm.store_tile %zero to %y row(%cta) row_end(%cta) col(%cta)
          {epilogue = #ggemm.epilogue<activation = swiglu, gate_up_block = 64>}
          : !ggemm.accumulator<128x128xf32>, memref<?x64xbf16>
    }
  }
  return
}

// -----

func.func @interleaved_tile_not_one_block(%x: memref<?x256xbf16>, %w: memref<4x256x256xbf16>,
    %y: memref<?x32xbf16>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  // expected-error @+1 {{'ggemm.launch' op expects a weight tile of 2 x gate_up_block (64) rows, one block of gate and up rows, got '!ggemm.tile<128x64xbf16>'}}
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 32784>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
      %ta = ggemm.load_tile %x[%cta, %cta] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
      %tb = ggemm.load_tile %w[%cta, %cta, %cta] : memref<4x256x256xbf16> -> !ggemm.tile<128x64xbf16>
      ggemm.ring_put %ring[%cta], %ta, %tb
          : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    } consumers(2) registers(232) {
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x64xf32>
      ggemm.store_tile %zero to %y row(%cta) row_end(%cta) col(%cta)
          {epilogue = #ggemm.epilogue<activation = swiglu, gate_up_block = 32>}
          : !ggemm.accumulator<128x64xf32>, memref<?x32xbf16>
    }
  }
  return
}

// -----

func.func @gated_store_without_split(%x: memref<?x256xbf16>, %w: memref<4x256x256xbf16>,
    %y: memref<?x64xbf16>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  // expected-error @+1 {{'ggemm.launch' op expects a split weight tile exactly with a gated (swiglu) ggemm.store_tile of side-by-side gate and up halves (gate_up_block = 0), got an unsplit weight tile and a gated store with gate_up_block = 0}}
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 32784>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
      %ta = ggemm.load_tile %x[%cta, %cta] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
      %tb = ggemm.load_tile %w[%cta, %cta, %cta] : memref<4x256x256xbf16> -> !ggemm.tile<128x64xbf16>
      ggemm.ring_put %ring[%cta], %ta, %tb
          : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    } consumers(2) registers(232) {
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      ggemm.store_tile %zero to %y row(%cta) row_end(%cta) col(%cta)
          {epilogue = #ggemm.epilogue<activation = swiglu>}
          : !ggemm.accumulator<128x128xf32>, memref<?x64xbf16>
    }
  }
  return
}

// -----

// Only the weight tile is split (gate and up rows).
func.func @split_activation_tile(%x: memref<?x256xbf16>, %w: memref<4x256x256xbf16>,
    %y: memref<?x64xbf16>, %n: index) {
  %sched = ggemm.tile_schedule uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64>)
  ggemm.launch %sched grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 1, offsets = [0, 16384], stage_bytes = [16384, 16384],
                                  barrier_offset = 32768, smem_bytes = 32784>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    ggemm.warp_specialize producer registers(40) {
      // expected-error @+1 {{'ggemm.load_tile' op expects only the weight tile to be split}}
      %ta = ggemm.load_tile %x[%cta, %cta] split(%n) : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
      %tb = ggemm.load_tile %w[%cta, %cta, %cta] : memref<4x256x256xbf16> -> !ggemm.tile<128x64xbf16>
      ggemm.ring_put %ring[%cta], %ta, %tb
          : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<128x64xbf16>>
    } consumers(2) registers(232) {
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x128xf32>
      ggemm.store_tile %zero to %y row(%cta) row_end(%cta) col(%cta)
          {epilogue = #ggemm.epilogue<activation = swiglu>}
          : !ggemm.accumulator<128x128xf32>, memref<?x64xbf16>
    }
  }
  return
}

// -----

// ggemm.sort_by_expert: the one-CTA routing kernel (1024 threads), with its
// 33 x (E + 2) i32 counters in dynamic shared memory, match.sync ranking the
// lanes of a bucket, shfl.sync.up scanning the bucket totals; the manifest
// names the five parameters and the single-CTA grid.
// CHECK: ggemm.manifests = {route_kernel = {block = [1024, 1, 1], cluster = [1, 1, 1], dynamic_smem = 1320 : i64, entry = "route_kernel", format = "ggemm-bundle", grid = {policy = "single"}, params = [{kind = "pointer", name = "topk_ids", tensor = "topk_ids"}, {kind = "pointer", name = "seg_indptr", tensor = "seg_indptr"}, {kind = "pointer", name = "row_indices", tensor = "row_indices"}, {kind = "pointer", name = "pair_indices", tensor = "pair_indices"}, {dtype = "i64", kind = "scalar", name = "num_pairs", value = "num_pairs"}], problem = {index_dtype = "i64", num_experts = 8 : i64, op = "sort_by_expert", topk = 2 : i64}, version = 1 : i64}
// CHECK-LABEL: gpu.module @route_kernel_module
// CHECK: llvm.mlir.global external @ggemm_smem() {addr_space = 3 : i32, alignment = 16 : i64}
// CHECK: gpu.func @route_kernel(%{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{.+}}: i64) kernel attributes {nvvm.reqntid = array<i32: 1024, 1, 1>}
// CHECK: gpu.barrier
// CHECK: llvm.atomicrmw add %{{.+}}, %{{.+}} monotonic : !llvm.ptr<3>, i32
// CHECK: gpu.barrier
// CHECK: nvvm.shfl.sync up
// CHECK: gpu.barrier
// CHECK: nvvm.match.sync any %{{.+}}, %{{.+}} : i32 -> i32
// CHECK: llvm.intr.ctpop
// CHECK: nvvm.bar.warp.sync
// CHECK-NOT: func.func @route
func.func @route(%ids: memref<?xi64>, %indptr: memref<9xi32>,
                 %rows: memref<?xi32>, %pairs: memref<?xi32>) {
  ggemm.sort_by_expert ins(%ids : memref<?xi64>)
      outs(%indptr, %rows, %pairs : memref<9xi32>, memref<?xi32>, memref<?xi32>)
      {topk = 2}
  return
}

// -----

func.func @route_too_many_experts(%ids: memref<?xi32>, %indptr: memref<2001xi32>,
                                  %rows: memref<?xi32>, %pairs: memref<?xi32>) {
  // expected-error @+1 {{'ggemm.sort_by_expert' op expects at most 1758 experts for the GPU routing kernel (33 counters of each in shared memory), got 2000}}
  ggemm.sort_by_expert ins(%ids : memref<?xi32>)
      outs(%indptr, %rows, %pairs : memref<2001xi32>, memref<?xi32>, memref<?xi32>)
      {topk = 8}
  return
}

// -----

// ggemm.quantize, 1x128: a grid-stride loop of 256-thread CTAs over tasks
// of eight rows of one 128-column block a warp, the two halves on
// consecutive rows, the task's four 16-byte loads first; the block maxima
// by shfl.sync.bfly within a half-warp; pairs of values packed by
// cvt.rn.satfinite.e4m3x2.f32 and stored 8 bytes a thread; the task's
// eight scales gathered by shfl.sync.idx and stored together at the
// caller's strides (MN-major here).
// CHECK: ggemm.manifests = {quant_kernel = {block = [256, 1, 1], cluster = [1, 1, 1], dynamic_smem = 0 : i64, entry = "quant_kernel", format = "ggemm-bundle", grid = {ctas_per_sm = 4 : i64, policy = "persistent", units_per_cta = 8 : i64}, params = [{kind = "pointer", name = "x", tensor = "x"}, {kind = "pointer", name = "q", tensor = "q"}, {kind = "pointer", name = "scale", tensor = "scale"}, {dtype = "i64", kind = "scalar", name = "num_groups", value = "num_groups"}, {dtype = "i64", kind = "scalar", name = "rows", value = "rows_per_group"}, {dtype = "i64", kind = "scalar", name = "k", value = "k"}, {dtype = "i64", kind = "scalar", name = "scale_stride_group", value = "scale_stride_group"}, {dtype = "i64", kind = "scalar", name = "scale_stride_row", value = "scale_stride_row"}, {dtype = "i64", kind = "scalar", name = "scale_stride_col", value = "scale_stride_col"}], problem = {op = "quantize", q_dtype = "f8e4m3", rank = 2 : i64, scale_block = "1x128", x_dtype = "bf16"}, version = 1 : i64}}
// CHECK-LABEL: gpu.module @quant_kernel_module
// CHECK: gpu.func @quant_kernel(%{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{.+}}: !llvm.ptr<1>, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64) kernel attributes {nvvm.minctasm = 4 : i32, nvvm.reqntid = array<i32: 256, 1, 1>}
// CHECK: gpu.grid_dim x
// CHECK: scf.for
// CHECK-COUNT-4: llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: nvvm.shfl.sync bfly
// CHECK: arith.divf
// CHECK: nvvm.convert.f32x2.to.f8x2 %{{.+}}, %{{.+}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<1>
// CHECK-COUNT-3: nvvm.shfl.sync idx
// CHECK: llvm.store %{{.+}}, %{{.+}} : f32, !llvm.ptr<1>
// CHECK-NOT: func.func @quant
func.func @quant(%x: memref<?x7168xbf16>, %q: memref<?x7168xf8E4M3FN>,
                 %s: memref<?x56xf32, strided<[1, ?]>>) {
  ggemm.quantize ins(%x : memref<?x7168xbf16>)
      outs(%q, %s : memref<?x7168xf8E4M3FN>, memref<?x56xf32, strided<[1, ?]>>)
  return
}

// -----

// ggemm.quantize, 128x128 over 3D weights: a CTA per block (grid-stride
// over the blocks), eight rows of one 16-byte column chunk per thread, the
// block's maximum across the warps through 32 bytes of shared memory.
// CHECK: ggemm.manifests = {wquant_kernel = {{{.*}}dynamic_smem = 32 : i64{{.*}}grid = {ctas_per_sm = 2 : i64, policy = "persistent", units_per_cta = 1 : i64}{{.*}}problem = {op = "quantize", q_dtype = "f8e4m3", rank = 3 : i64, scale_block = "128x128", x_dtype = "f16"}
// CHECK-LABEL: gpu.module @wquant_kernel_module
// CHECK: gpu.block_id x
// CHECK: gpu.grid_dim x
// CHECK-COUNT-8: llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf16>
// CHECK: nvvm.shfl.sync bfly
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: nvvm.convert.f32x2.to.f8x2
func.func @wquant(%w: memref<8x4096x7168xf16>, %q: memref<8x4096x7168xf8E4M3FN>,
                  %s: memref<8x32x56xf32>) {
  ggemm.quantize ins(%w : memref<8x4096x7168xf16>)
      outs(%q, %s : memref<8x4096x7168xf8E4M3FN>, memref<8x32x56xf32>)
      {scale_block = #ggemm.scale_block<128x128>}
  return
}

// -----

func.func @quant_f32(%x: memref<?x256xf32>, %q: memref<?x256xf8E4M3FN>, %s: memref<?x2xf32>) {
  // expected-error @+1 {{'ggemm.quantize' op expects bf16 or f16 x for the GPU quantize kernel (16-byte loads of 8 elements), got 'f32'}}
  ggemm.quantize ins(%x : memref<?x256xf32>) outs(%q, %s : memref<?x256xf8E4M3FN>, memref<?x2xf32>)
  return
}

// -----

func.func @quant_block_64(%x: memref<?x256xbf16>, %q: memref<?x256xf8E4M3FN>, %s: memref<?x4xf32>) {
  // expected-error @+1 {{'ggemm.quantize' op expects scale_block 1x128 or 128x128 for the GPU quantize kernel, got #ggemm.scale_block<1x64>}}
  ggemm.quantize ins(%x : memref<?x256xbf16>) outs(%q, %s : memref<?x256xf8E4M3FN>, memref<?x4xf32>)
      {scale_block = #ggemm.scale_block<1x64>}
  return
}

// -----

func.func @quant_strided_x(%x: memref<?x256xbf16, strided<[512, 1]>>, %q: memref<?x256xf8E4M3FN>, %s: memref<?x2xf32>) {
  // expected-error @+1 {{'ggemm.quantize' op expects x in row-major layout for the GPU quantize kernel, got 'memref<?x256xbf16, strided<[512, 1]>>'}}
  ggemm.quantize ins(%x : memref<?x256xbf16, strided<[512, 1]>>) outs(%q, %s : memref<?x256xf8E4M3FN>, memref<?x2xf32>)
  return
}

// -----

// A split_k_tail launch: the split-K buffer overlays the ring (layout's
// split_k_barriers), so the word after its two mbarriers is set to 0 with
// them. ggemm.split_k_sum runs under `active` only; there the addresses
// start from that word read back (volatile: LLVM keeps it, and what is
// computed from it, in the tail instead of hoisting it out of the tile
// loop). Rank 0 first tells rank 1 its ring is free (the async proxy's
// reads fenced, then a cluster-scoped arrival on rank 1's empty mbarrier)
// and then waits for the partial; rank 1 waits for that release in every
// round before it writes.
// CHECK: split_k_tail_kernel = {block = [256, 1, 1], cluster = [2, 1, 1]
// CHECK-SAME: tile = {block_k = 64 : i64, block_m = 64 : i64, block_n = 64 : i64, consumer_warpgroups = 1 : i64, split_k = 2 : i64, split_k_tail = true
// CHECK-LABEL: gpu.func @split_k_tail_kernel(
// CHECK: arith.constant 65600 : index
// CHECK: nvvm.mbarrier.init
// CHECK: arith.constant 65608 : index
// CHECK: nvvm.mbarrier.init
// CHECK-NEXT: %[[WORD:.+]] = arith.constant 65616 : index
// CHECK: %[[AT:.+]] = llvm.getelementptr %{{.+}}[%{{.+}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK-NEXT: llvm.store %[[ZERO]], %[[AT]] : i32, !llvm.ptr<3>
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK: %{{.+}} = scf.if %{{.+}} -> (!llvm.struct<(f32, {{.*}})>) {
// CHECK-NEXT: arith.constant 65616 : index
// CHECK: %[[ANCHOR:.+]] = llvm.load volatile %{{.+}} {alignment = 4 : i64} : !llvm.ptr<3> -> i32
// CHECK: %{{.+}} = scf.if %{{.+}} -> (!llvm.struct<(f32, {{.*}})>) {
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[PEER:.+]] = nvvm.mapa %{{.+}}, %[[ONE]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[PEER]] {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK-NEXT: scf.while : () -> () {
// CHECK: nvvm.mbarrier.try_wait %{{.+}}, %{{.+}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<3>, i32 -> i1
// CHECK: arith.addf
// CHECK: } else {
// CHECK-NEXT: scf.while : () -> () {
// CHECK: nvvm.mbarrier.try_wait %{{.+}}, %{{.+}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<3>, i32 -> i1
// CHECK: %[[SLOT:.+]] = nvvm.mapa %{{.+}}, %{{.+}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: llvm.store %{{.+}}, %{{.+}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<7>
// CHECK: nvvm.mbarrier.arrive %{{.+}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK: } else {
// CHECK-NEXT: scf.yield %{{.+}} : !llvm.struct<(f32, {{.*}})>
func.func @split_k_tail(%arg0: memref<?x512xbf16>, %arg1: memref<1x128x512xbf16>, %arg2: memref<2xi32>, %arg3: memref<?x128xbf16>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0 : memref<?x512xbf16>
  %c128 = arith.constant 128 : index
  %0 = ggemm.tile_schedule segment rows(%arg2 : memref<2xi32>) groups(%c1) rows_per_group(%c0) num_rows(%dim) num_cols(%c128) config(#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, consumer_warpgroups = 1, split_k = 2, split_k_tail = true>)
  ggemm.launch %0 grid(persistent) {
  ^bb0(%cta: index, %num_ctas: index):
    %1 = ggemm.create_ring release_count(128) layout(#ggemm.ring_layout<stages = 4, offsets = [0, 32768], stage_bytes = [8192, 8192], barrier_offset = 65536, smem_bytes = 65632, split_k_offset = 0, split_k_bytes = 16384, split_k_barriers = 65600>) : !ggemm.ring<!ggemm.tile<64x64xbf16>, !ggemm.tile<64x64xbf16>>
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
