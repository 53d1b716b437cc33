// End to end: problem op -> PTX for sm_90a with wgmma and TMA, assembled by
// ptxas. One function per weight layout and output type.
// RUN: rm -rf %t && gemm-opt %s --split-input-file --ggemm-to-ptx="chip=sm_90a bundle-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=NK --input-file=%t/seg_nk_v3_kernel.ptx
// RUN: FileCheck %s --check-prefix=NK-SMALL --input-file=%t/seg_nk_v0_kernel.ptx
// RUN: FileCheck %s --check-prefix=KN --input-file=%t/seg_kn_kernel.ptx
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/seg_nk_kernel.json
// RUN: FileCheck %s --check-prefix=SILU --input-file=%t/batched_kernel.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/seg_nk_v0_kernel.ptx -o %t/nk0.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/seg_nk_v3_kernel.ptx -o %t/nk3.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/seg_kn_kernel.ptx -o %t/kn.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/batched_kernel.ptx -o %t/b.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/masked_v0_kernel.ptx -o %t/m0.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/masked_v2_kernel.ptx -o %t/m2.cubin %}

// NK-LABEL: .entry seg_nk_v3_kernel(
// NK: .param .align 64 .b8 seg_nk_v3_kernel_param_0[128]
// NK: .param .align 64 .b8 seg_nk_v3_kernel_param_1[128]
// NK: .maxntid 384, 1, 1
// NK: .minnctapersm 1
// Thread 0 prefetches the TMA descriptors, the ring's mbarriers are set
// up, then programmatic dependent launch (the default): the previous grid
// before any global load. Eight groups: no weight prefetch.
// NK-NOT: ld.global
// NK-COUNT-2: prefetch.param.tensormap
// NK-NOT: ld.global
// NK: mbarrier.init.shared.b64
// NK-NOT: ld.global
// NK-NOT: cp.async.bulk.prefetch.tensor
// NK: griddepcontrol.wait;
// NK-NEXT: griddepcontrol.launch_dependents;
// NK: setmaxnreg.dec.sync.aligned.u32 40
// NK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// NK: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// NK: setmaxnreg.inc.sync.aligned.u32 232
// NK: wgmma.fence.sync.aligned
// K-major B: no transpose of B.
// NK: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 0;
// NK: wgmma.commit_group.sync.aligned
// NK: wgmma.wait_group.sync.aligned 0
// NK: st.global.b16
func.func @seg_nk(%x: memref<?x7168xbf16>, %w: memref<8x4096x7168xbf16>,
                  %indptr: memref<9xi32>, %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
      segments(%indptr : memref<9xi32>) outs(%y : memref<?x4096xbf16>)
  return
}

// Dynamic rows: four variants in one bundle (ggemm-select-config's
// variants, the pipeline's default): swap-AB with 24, 48 and 88 token rows
// up to 16, 32 and 64 rows per group (the weight tile in wgmma's M over two
// consumer warpgroups, the tokens in its N), 128x256 above.
// NK-SMALL-LABEL: .entry seg_nk_v0_kernel(
// NK-SMALL: .maxntid 384, 1, 1
// NK-SMALL: wgmma.mma_async.sync.aligned.m64n24k16.f32.bf16.bf16
// JSON: "dispatch": {
// JSON-NEXT: "bounds": [
// JSON-NEXT: 16,
// JSON-NEXT: 32,
// JSON-NEXT: 64
// JSON-NEXT: ],
// JSON-NEXT: "rule": "rows_per_group"
// JSON: "format": "ggemm-bundle"
// JSON: "problem": {
// JSON: "variants": [
// JSON: "dependent_launch": true
// JSON: "entry": "seg_nk_v0_kernel"
// JSON: "ptx": "seg_nk_v0_kernel.ptx"
// JSON: "block_m": 24
// JSON: "swap_ab": true
// JSON: "entry": "seg_nk_v3_kernel"
// JSON: "ptx": "seg_nk_v3_kernel.ptx"
// JSON: "block_m": 128,
// JSON-NEXT: "block_n": 256
// JSON: "swap_ab": false
// JSON: "version": 2

// -----

// KN-LABEL: .entry seg_kn_kernel(
// An N-major B tile is two 64-column TMA boxes per stage.
// KN-COUNT-2: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// N-major B: B transposed.
// KN: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 1;
// KN: st.global.b32
func.func @seg_kn(%x: memref<?x512xf16>, %w: memref<4x512x256xf16>,
                  %indptr: memref<5xi64>, %idx: memref<4xi32>,
                  %y: memref<?x256xf32>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x512xf16>, memref<4x512x256xf16>)
      segments(%indptr : memref<5xi64>) weight_indices(%idx : memref<4xi32>)
      outs(%y : memref<?x256xf32>)
      {weight_layout = #ggemm.weight_layout<kn>,
       config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, stages = 4>}
  return
}

// -----

// silu's division is div.approx (2 ulp in f32, below what a bf16 or f32
// output keeps of it): the IEEE div.rn.f32 expands to a slow-path
// subroutine per accumulator element and store path, and took ptxas 4 s of
// a DeepSeek-V3 up-projection bundle's 4.3 s (bench/NOTES.md).
// SILU-LABEL: .entry batched_kernel(
// SILU: ex2.approx.ftz.f32
// SILU: div.approx.f32
// SILU-NOT: div.rn.f32
func.func @batched(%x: memref<4x100x256xbf16>, %w: memref<4x200x256xbf16>,
                   %bias: memref<4x200xf32>, %y: memref<4x100x200xbf16>) {
  ggemm.batched_matmul ins(%x, %w : memref<4x100x256xbf16>, memref<4x200x256xbf16>)
      bias(%bias : memref<4x200xf32>) outs(%y : memref<4x100x200xbf16>)
      {epilogue = #ggemm.epilogue<activation = silu>}
  return
}

// -----

func.func @masked(%x: memref<8x64x256xbf16>, %w: memref<8x128x256xbf16>,
                  %m: memref<8xi32>, %rs: memref<8x64xf32>,
                  %y: memref<8x64x128xbf16>) {
  ggemm.masked_matmul ins(%x, %w : memref<8x64x256xbf16>, memref<8x128x256xbf16>)
      masked_m(%m : memref<8xi32>) row_scale(%rs : memref<8x64xf32>)
      outs(%y : memref<8x64x128xbf16>)
      {epilogue = #ggemm.epilogue<activation = gelu, accumulate = true>}
  return
}
