// FP8 decode with 1x128 / 128x128 block scales, end to end: one weight
// matrix, rows unknown, so ggemm-select-config writes a variant per row
// bucket (with a bucket of 1-8 rows for one block-scaled 8-bit group,
// NOTES v26). The narrow ones (swap-AB tiles of 64 weight rows by 8, 16
// and 32 tokens, the rows of one group exactly, v26; 64x16 and 64x32 on
// one warpgroup for <= 64 and <= 128 rows, v25; 128x32 for <= 256) take
// two K blocks per wgmma wait (`promote_pairs`): the first product's group
// stays in flight (`wgmma.wait_group 1`) while the second is issued, then
// one `wait_group 0` covers both before the two promotions (bench/NOTES.md
// v23). The large variant (192x128 on three warpgroups) keeps one block
// per wait. No spills either way (the 8- and 16-token tiles spilled 12
// bytes in the producer with its 40 registers; one consumer warpgroup now
// leaves it 56). The swap-AB variants' 33 tiles split their K blocks over
// clusters of 3 CTAs (split_k; pipeline_fp8_split_k.mlir).
// RUN: rm -rf %t && gemm-opt %s --ggemm-to-ptx="chip=sm_90a bundle-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PAIRS --input-file=%t/fp8_decode_pairs_v0_kernel.ptx
// RUN: FileCheck %s --check-prefix=PAIRS --input-file=%t/fp8_decode_pairs_v3_kernel.ptx
// RUN: FileCheck %s --check-prefix=PAIRS --input-file=%t/fp8_decode_pairs_v5_kernel.ptx
// RUN: FileCheck %s --check-prefix=SINGLE --input-file=%t/fp8_decode_pairs_v6_kernel.ptx
// RUN: FileCheck %s --check-prefix=NOPF --input-file=%t/fp8_decode_pairs_v0_kernel.ptx
// RUN: gemm-opt %s --ggemm-to-ptx="chip=sm_90a dependent-prefetch-bytes=16777216 bundle-dir=%t/pf" -o /dev/null
// RUN: FileCheck %s --check-prefix=L2PF --input-file=%t/pf/fp8_decode_pairs_v3_kernel.ptx
// RUN: not gemm-opt %s --ggemm-to-ptx="chip=sm_90a dependent-prefetch-bytes=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGPF
// RUN: gemm-opt %s -ggemm-select-config=variants=true | FileCheck %s --check-prefix=CONFIG
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t/fp8_decode_pairs_v0_kernel.ptx -o %t/v0.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t/fp8_decode_pairs_v1_kernel.ptx -o %t/v1.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t/fp8_decode_pairs_v3_kernel.ptx -o %t/v3.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t/fp8_decode_pairs_v5_kernel.ptx -o %t/v5.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// CONFIG: ggemm.dispatch = {fp8_decode_pairs = {bounds = [8, 16, 32, 64, 128, 256]
// CONFIG: func.func @fp8_decode_pairs_v0(
// CONFIG: #ggemm.tile_config<block_m = 8, block_n = 64, {{.*}}swap_ab = true, promote_pairs = true, split_k = 3>
// CONFIG: func.func @fp8_decode_pairs_v1(
// CONFIG: #ggemm.tile_config<block_m = 16, block_n = 64, {{.*}}swap_ab = true, promote_pairs = true, split_k = 3>
// CONFIG: func.func @fp8_decode_pairs_v2(
// CONFIG: #ggemm.tile_config<block_m = 32, block_n = 64, {{.*}}swap_ab = true, promote_pairs = true, split_k = 3>
// CONFIG: func.func @fp8_decode_pairs_v3(
// CONFIG: #ggemm.tile_config<block_m = 64, block_n = 16, block_k = 128, stages = 8, consumer_warpgroups = 1, promote_pairs = true>
// CONFIG: func.func @fp8_decode_pairs_v4(
// CONFIG: #ggemm.tile_config<block_m = 64, block_n = 32, block_k = 128, stages = 8, consumer_warpgroups = 1, promote_pairs = true>
// CONFIG: func.func @fp8_decode_pairs_v5(
// CONFIG: #ggemm.tile_config<block_m = 128, block_n = 32, {{.*}}promote_pairs = true>
// CONFIG: func.func @fp8_decode_pairs_v6(
// CONFIG-NOT: promote_pairs
// CONFIG: consumer_warpgroups = 3>

// PAIRS: .entry fp8_decode_pairs_v{{[035]}}_kernel(
// PAIRS: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k32.f32.e4m3.e4m3
// PAIRS: wgmma.commit_group.sync.aligned;
// PAIRS-NEXT: wgmma.wait_group.sync.aligned 1;
// PAIRS: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k32.f32.e4m3.e4m3
// PAIRS: wgmma.commit_group.sync.aligned;
// PAIRS-NEXT: wgmma.wait_group.sync.aligned 0;
// PAIRS: fma.rn.f32

// SINGLE: .entry fp8_decode_pairs_v6_kernel(
// SINGLE-NOT: wgmma.wait_group.sync.aligned 1;
// SINGLE: wgmma.wait_group.sync.aligned 0;
// SINGLE-NOT: wgmma.wait_group.sync.aligned 1;

// One group, with ggemm-to-ptx's dependent-prefetch-bytes: before the
// dependent launch's wait, thread 0 of CTA c < 132 brings the 56 K blocks
// of column tile c's weights (16 rows of the 64x16 tiles) into L2, with no
// global load before the wait. (The split-K variants v0-v2 do not
// prefetch.)
// L2PF: .entry fp8_decode_pairs_v3_kernel(
// L2PF-NOT: ld.global
// L2PF: cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}];
// L2PF-NOT: ld.global
// L2PF: griddepcontrol.wait;
// By default (dependent-prefetch-bytes=0) the wait alone.
// NOPF-NOT: cp.async.bulk.prefetch.tensor
// NOPF: griddepcontrol.wait;
// NOPF-NOT: cp.async.bulk.prefetch.tensor
// NEGPF: error: 'ggemm.foreach_tile' op expects dependent-prefetch-bytes >= 0, got -1

// PTXAS: 0 bytes spill stores, 0 bytes spill loads
func.func @fp8_decode_pairs(%x: memref<?x7168xf8E4M3FN>, %w: memref<1x2112x7168xf8E4M3FN>,
                            %p: memref<2xi32>, %xs: memref<?x56xf32, strided<[1, ?]>>,
                            %ws: memref<1x17x56xf32>, %y: memref<?x2112xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xf8E4M3FN>, memref<1x2112x7168xf8E4M3FN>)
      segments(%p : memref<2xi32>)
      scales(%xs, %ws : memref<?x56xf32, strided<[1, ?]>>, memref<1x17x56xf32>)
      outs(%y : memref<?x2112xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>}
  return
}
