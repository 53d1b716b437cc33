// The MoE forms of segment_matmul end to end (ggemm-to-ptx): gathered x
// rows copied by the producer warpgroup with cp.async (x by address, the
// stage's full mbarrier counting 1 + 128 arrivals, one
// cp.async.mbarrier.arrive.noinc per thread, the consumers fencing the async
// proxy after the wait), the gated weight tile as two TMA loads of half the
// tile (one load of a whole block with interleaved gate/up blocks), and the
// scatter-combine epilogue: atomic adds, or (into slots) one-row TMA stores
// of the staged boxes. The manifests carry the new problem keys and
// parameters. ptxas accepts the kernels.
// RUN: rm -rf %t && gemm-opt %s --ggemm-to-ptx="chip=sm_90a variants=false bundle-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=UP --input-file=%t/up_kernel.ptx
// RUN: FileCheck %s --check-prefix=UPJSON --input-file=%t/up_kernel.json
// RUN: FileCheck %s --check-prefix=DOWN --input-file=%t/down_kernel.ptx
// RUN: FileCheck %s --check-prefix=DOWNJSON --input-file=%t/down_kernel.json
// RUN: FileCheck %s --check-prefix=UPI --input-file=%t/up_interleaved_kernel.ptx
// RUN: FileCheck %s --check-prefix=UPIJSON --input-file=%t/up_interleaved_kernel.json
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/up_kernel.ptx -o %t/up.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/up_interleaved_kernel.ptx -o %t/up_interleaved.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/down_kernel.ptx -o %t/down.cubin %}
// RUN: FileCheck %s --check-prefix=SLOTS --input-file=%t/down_slots_kernel.ptx
// RUN: FileCheck %s --check-prefix=SLOTSJSON --input-file=%t/down_slots_kernel.json
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/down_slots_kernel.ptx -o %t/down_slots.cubin %}

// UP: mbarrier.init.shared.b64 [ggemm_smem+{{[0-9]+}}], %r{{[0-9]+}};
// UP: shfl.sync.idx.b32
// UP: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// UP: cp.async.mbarrier.arrive.noinc.shared.b64
// The weight tile: gate half and up half, two 3-d TMA loads.
// UP: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// UP-NEXT: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// UP-NOT: cp.async.bulk.tensor.2d.shared::cluster.global
// UP: fence.proxy.async.shared::cta;
// UP: wgmma.mma_async

// The gathered rows' x descriptor has one-row boxes (the kernel does not
// read it; the producer copies by address).
// UPJSON: "box": [
// UPJSON-NEXT: 64,
// UPJSON-NEXT: 1
// UPJSON-NEXT: ],
// UPJSON: "name": "a_desc",
// UPJSON: "name": "b_desc",
// UPJSON: "name": "row_indices",
// UPJSON: "kind": "pointer",
// UPJSON-NEXT: "name": "x",
// UPJSON: "name": "lda",
// UPJSON: "name": "x_rows",
// UPJSON: "activation": "swiglu",
// UPJSON: "has_row_indices": true,
// UPJSON: "n": 768,
func.func @up(%x: memref<?x2048xbf16>, %w: memref<8x1536x2048xbf16>,
              %indptr: memref<9xi32>, %ri: memref<?xi32>, %h: memref<?x768xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x2048xbf16>, memref<8x1536x2048xbf16>)
      segments(%indptr : memref<9xi32>) row_indices(%ri : memref<?xi32>)
      outs(%h : memref<?x768xbf16>)
      {epilogue = #ggemm.epilogue<activation = swiglu>, expected_m = 512}
  return
}

// Interleaved gate/up blocks of 128 rows: the weight tile (block_n = 256,
// one block) is one 3-d TMA load of a 256-row box; the manifest records
// gate_up_block and the whole box. The bias stays [8, 1536], gate then up.
// UPI: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// UPI: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// UPI-NOT: cp.async.bulk.tensor.3d.shared::cluster.global
// UPI: wgmma.mma_async

// UPIJSON: "name": "a_desc",
// UPIJSON: "box": [
// UPIJSON-NEXT: 64,
// UPIJSON-NEXT: 256,
// UPIJSON-NEXT: 1
// UPIJSON-NEXT: ],
// UPIJSON: "name": "b_desc",
// UPIJSON: "problem": {
// UPIJSON: "activation": "swiglu",
// UPIJSON: "gate_up_block": 128,
// UPIJSON: "has_bias": true,
// UPIJSON: "tile": {
// UPIJSON: "block_n": 256,
func.func @up_interleaved(%x: memref<?x2048xbf16>, %w: memref<8x1536x2048xbf16>,
                          %indptr: memref<9xi32>, %ri: memref<?xi32>,
                          %bias: memref<8x1536xf32>, %h: memref<?x768xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x2048xbf16>, memref<8x1536x2048xbf16>)
      segments(%indptr : memref<9xi32>) row_indices(%ri : memref<?xi32>)
      bias(%bias : memref<8x1536xf32>) outs(%h : memref<?x768xbf16>)
      {epilogue = #ggemm.epilogue<activation = swiglu, gate_up_block = 128>,
       expected_m = 512}
  return
}

// Scattered rows keep the masked stores (no TMA store), each element added
// with an atomic.
// DOWN: atom.global.add.f32
// DOWN-NOT: cp.async.bulk.tensor.2d.global.shared::cta

// DOWNJSON: "name": "scatter_indices",
// DOWNJSON: "name": "y_rows",
// DOWNJSON: "atomic": true,
// DOWNJSON: "has_scatter_indices": true,
func.func @down(%h: memref<?x768xbf16>, %w: memref<8x2048x768xbf16>,
                %indptr: memref<9xi32>, %rw: memref<?xf32>, %token: memref<?xi32>,
                %out: memref<?x2048xf32>) {
  ggemm.segment_matmul ins(%h, %w : memref<?x768xbf16>, memref<8x2048x768xbf16>)
      segments(%indptr : memref<9xi32>) row_scale(%rw : memref<?xf32>)
      scatter_indices(%token : memref<?xi32>) outs(%out : memref<?x2048xf32>)
      {epilogue = #ggemm.epilogue<accumulate = true, atomic = true>, expected_m = 512}
  return
}

// Scattered rows into slots (no adds): the staged boxes go out one row per
// TMA store, at the row's scattered y row; y's descriptor has one-row boxes
// of 64 bf16 columns, and the y row count comes with it.
// SLOTS-LABEL: .entry down_slots_kernel(
// SLOTS: fence.proxy.async.shared::cta
// SLOTS: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// SLOTS: cp.async.bulk.commit_group
// SLOTS: cp.async.bulk.wait_group.read 1
// SLOTS-NOT: atom.global.add
// SLOTS: cp.async.bulk.wait_group 0
// SLOTSJSON: "name": "num_weights",
// SLOTSJSON: "box": [
// SLOTSJSON-NEXT: 64,
// SLOTSJSON-NEXT: {{^ *1$}}
// SLOTSJSON-NEXT: ],
// SLOTSJSON-NEXT: "dtype": "bf16",
// SLOTSJSON-NEXT: "kind": "tma_descriptor",
// SLOTSJSON-NEXT: "name": "y_desc",
// SLOTSJSON: "name": "scatter_indices",
// SLOTSJSON: "name": "y_rows",
// SLOTSJSON: "has_scatter_indices": true,
func.func @down_slots(%h: memref<?x768xbf16>, %w: memref<8x2048x768xbf16>,
                      %indptr: memref<9xi32>, %rw: memref<?xf32>, %slot: memref<?xi32>,
                      %out: memref<?x2048xbf16>) {
  ggemm.segment_matmul ins(%h, %w : memref<?x768xbf16>, memref<8x2048x768xbf16>)
      segments(%indptr : memref<9xi32>) row_scale(%rw : memref<?xf32>)
      scatter_indices(%slot : memref<?xi32>) outs(%out : memref<?x2048xbf16>)
      {expected_m = 512}
  return
}
