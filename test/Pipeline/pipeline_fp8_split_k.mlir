// FP8 decode split over K, end to end: one token against N = 576 weight
// rows makes 9 swap-AB tiles of 64 weight rows, so ggemm-select-config
// splits each tile's 56 K blocks over a cluster of 8 CTAs (split_k = 8,
// bench/NOTES.md v35). The manifest launches clusters of 8 and 8 CTAs a
// tile. In the kernel: the cluster barrier after the mbarriers' setup
// (peers arrive on them), then ranks 1-7 store their partial registers
// into rank 0's shared memory (mapa, st.shared::cluster) and arrive on its
// full mbarrier with a cluster-scoped release; rank 0 waits for that phase
// with a cluster-scoped acquire, adds the partials, and frees the buffer
// by arriving on each peer's empty mbarrier; a cluster barrier before the
// CTAs exit.
// RUN: rm -rf %t && gemm-opt %s --ggemm-to-ptx="chip=sm_90a bundle-dir=%t" -o /dev/null
// RUN: FileCheck %s --input-file=%t/fp8_split_k_kernel.ptx
// RUN: FileCheck %s --check-prefix=MANIFEST --input-file=%t/fp8_split_k_kernel.json
// RUN: gemm-opt %s -ggemm-select-config | FileCheck %s --check-prefix=CONFIG
// The CPU reference takes the same config and adds the partial sums too
// (its numbers: test/Execution/*split_k*):
// RUN: gemm-opt %s --ggemm-to-cpu -o /dev/null
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t/fp8_split_k_kernel.ptx -o %t/k.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// CONFIG: #ggemm.tile_config<block_m = 8, block_n = 64, block_k = 128, stages = 8, consumer_warpgroups = 1, swap_ab = true, promote_pairs = true, split_k = 8>

// MANIFEST: "cluster": [
// MANIFEST-NEXT: 8,
// MANIFEST-NEXT: 1,
// MANIFEST-NEXT: 1
// MANIFEST: "split_k": 8,

// CHECK: .entry fp8_split_k_kernel(
// CHECK: fence.mbarrier_init.release.cluster;
// CHECK: barrier.cluster.arrive;
// CHECK-NEXT: barrier.cluster.wait;
// CHECK-DAG: mapa.shared::cluster.u64 {{.*}}, 0;
// CHECK-DAG: mapa.shared::cluster.u64 {{.*}}, 7;
// CHECK: wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3
// CHECK-DAG: mbarrier.try_wait.parity.acquire.cluster.shared.b64
// CHECK-DAG: st.shared::cluster.v4.b32
// CHECK-DAG: mbarrier.arrive.release.cluster.shared::cluster.b64
// CHECK: barrier.cluster.arrive;
// CHECK-NEXT: barrier.cluster.wait;
// CHECK-NEXT: ret;

// PTXAS: 0 bytes spill stores, 0 bytes spill loads
func.func @fp8_split_k(%x: memref<1x7168xf8E4M3FN>, %w: memref<1x576x7168xf8E4M3FN>,
                       %p: memref<2xi32>, %xs: memref<1x56xf32, strided<[1, 1]>>,
                       %ws: memref<1x5x56xf32>, %y: memref<1x576xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<1x7168xf8E4M3FN>, memref<1x576x7168xf8E4M3FN>)
      segments(%p : memref<2xi32>)
      scales(%xs, %ws : memref<1x56xf32, strided<[1, 1]>>, memref<1x5x56xf32>)
      outs(%y : memref<1x576xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}
