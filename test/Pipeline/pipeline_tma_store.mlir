// The staged epilogue end to end (ggemm-tma-store, on by default in
// ggemm-to-ptx): the PTX of a large-tile kernel stores its boxes from
// shared memory with TMA bulk tensor stores, waits for a box's previous
// store to have read it, and drains at the end; the manifest passes y's
// descriptor. tma-store=false keeps the masked global stores only. The
// many-variant selection of a dynamic problem is turned off so that one
// 128x256 kernel is written.
// RUN: gemm-opt %s --ggemm-to-ptx="chip=sm_90a variants=false" | FileCheck %s
// RUN: gemm-opt %s --ggemm-to-ptx="chip=sm_90a variants=false tma-store=false" | FileCheck %s --check-prefix=OFF

// CHECK: name = "y_desc"
// CHECK: cp.async.bulk.wait_group.read \091;
// CHECK: fence.proxy.async.shared::cta;
// CHECK: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}], [%rd{{[0-9]+}}];
// CHECK: cp.async.bulk.commit_group;
// CHECK: cp.async.bulk.wait_group \090;

// OFF-NOT: y_desc
// OFF-NOT: cp.async.bulk.tensor.2d.global.shared
// OFF-NOT: cp.async.bulk.commit_group
func.func @up(%x: memref<?x7168xbf16>, %w: memref<8x4096x7168xbf16>,
              %indptr: memref<9xi32>, %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
      segments(%indptr : memref<9xi32>) outs(%y : memref<?x4096xbf16>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64,
                                   raster = along_m>}
  return
}
