// An e4m3 y quantised in the epilogue, end to end: ggemm-select-config
// picks tiles of whole 128-column blocks and no swap-AB (even for small
// groups), ggemm-tma-store stages the store (a 64 x 128-byte box is one
// block of each row: y_desc of dtype f8e4m3, a TMA store per box), the PTX
// takes each block's maximum across a quad (two shfl.sync.bfly) and packs
// pairs with cvt.rn.satfinite.e4m3x2.f32, and the manifest passes y_scale
// and its strides last; ptxas assembles each kernel. Cases: a bf16 segment kernel
// with bias and silu, the MoE up projection (gathered rows, SwiGLU) to an
// e4m3 h for the FP8 down projection, an FP8 block-scaled masked kernel.
// RUN: rm -rf %t && gemm-opt %s --split-input-file --ggemm-to-ptx="chip=sm_90a variants=false bundle-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=SEG --input-file=%t/seg_kernel.ptx
// RUN: FileCheck %s --check-prefix=SEG-JSON --input-file=%t/seg_kernel.json
// RUN: FileCheck %s --check-prefix=UP-JSON --input-file=%t/moe_up_kernel.json
// RUN: FileCheck %s --check-prefix=MASKED-JSON --input-file=%t/masked_fp8_kernel.json
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/seg_kernel.ptx -o %t/seg.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/moe_up_kernel.ptx -o %t/up.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/masked_fp8_kernel.ptx -o %t/masked.cubin %}

// SEG: .entry seg_kernel(
// SEG: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// SEG: shfl.sync.bfly.b32
// SEG: shfl.sync.bfly.b32
// SEG: cvt.rn.satfinite.e4m3x2.f32
// SEG: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// SEG-JSON: "name": "num_weights"
// SEG-JSON: "box": [
// SEG-JSON-NEXT: 128,
// SEG-JSON-NEXT: 64
// SEG-JSON-NEXT: ],
// SEG-JSON-NEXT: "dtype": "f8e4m3",
// SEG-JSON-NEXT: "kind": "tma_descriptor",
// SEG-JSON-NEXT: "name": "y_desc",
// SEG-JSON: "kind": "pointer",
// SEG-JSON-NEXT: "name": "y_scale",
// SEG-JSON-NEXT: "optional": false,
// SEG-JSON-NEXT: "tensor": "y_scale"
// SEG-JSON: "name": "y_scale_stride_row",
// SEG-JSON: "name": "y_scale_stride_col",
// SEG-JSON: "out_dtype": "f8e4m3",
// SEG-JSON: "y_scale_block": "1x128"
// SEG-JSON: "block_n": 256
// SEG-JSON: "swap_ab": false
func.func @seg(%x: memref<?x7168xbf16>, %w: memref<8x4096x7168xbf16>,
               %p: memref<9xi32>, %b: memref<8x4096xf32>,
               %y: memref<?x4096xf8E4M3FN>, %ys: memref<?x32xf32, strided<[1, ?]>>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
      segments(%p : memref<9xi32>) bias(%b : memref<8x4096xf32>)
      outs(%y : memref<?x4096xf8E4M3FN>) y_scale(%ys : memref<?x32xf32, strided<[1, ?]>>)
      {epilogue = #ggemm.epilogue<activation = silu>}
  return
}

// -----

// The MoE up projection with few rows per expert: 64-row tiles on one
// warpgroup (no swap-AB), 256 weight rows (gate and up halves) per tile for
// 128 columns of h.
// UP-JSON: "name": "row_indices"
// UP-JSON: "name": "y_scale"
// UP-JSON: "activation": "swiglu"
// UP-JSON: "has_row_indices": true
// UP-JSON: "out_dtype": "f8e4m3"
// UP-JSON: "block_m": 64
// UP-JSON: "block_n": 256
// UP-JSON: "swap_ab": false
func.func @moe_up(%x: memref<?x2048xbf16>, %w13: memref<128x1536x2048xbf16>,
                  %p: memref<129xi32>, %rows: memref<?xi32>,
                  %h: memref<?x768xf8E4M3FN>, %hs: memref<?x6xf32, strided<[1, ?]>>) {
  ggemm.segment_matmul ins(%x, %w13 : memref<?x2048xbf16>, memref<128x1536x2048xbf16>)
      segments(%p : memref<129xi32>) row_indices(%rows : memref<?xi32>)
      outs(%h : memref<?x768xf8E4M3FN>) y_scale(%hs : memref<?x6xf32, strided<[1, ?]>>)
      {epilogue = #ggemm.epilogue<activation = swiglu>, expected_m = 32}
  return
}

// -----

// FP8 in (1x128 / 128x128 block scales), e4m3 out: DeepGEMM's masked decode
// layer feeding the next FP8 layer.
// MASKED-JSON: "name": "a_scale_desc"
// MASKED-JSON: "name": "y_scale"
// MASKED-JSON: "op": "masked_matmul"
// MASKED-JSON: "out_dtype": "f8e4m3"
// MASKED-JSON: "x_scale_block": "1x128"
// MASKED-JSON: "y_scale_block": "1x128"
// MASKED-JSON: "swap_ab": false
func.func @masked_fp8(%x: memref<8x?x2048xf8E4M3FN>, %w: memref<8x7168x2048xf8E4M3FN>,
                      %m: memref<8xi32>, %xs: memref<8x?x16xf32, strided<[?, 1, ?]>>,
                      %ws: memref<8x56x16xf32>, %y: memref<8x?x7168xf8E4M3FN>,
                      %ys: memref<8x?x56xf32, strided<[?, 1, ?]>>) {
  ggemm.masked_matmul ins(%x, %w : memref<8x?x2048xf8E4M3FN>, memref<8x7168x2048xf8E4M3FN>)
      masked_m(%m : memref<8xi32>)
      scales(%xs, %ws : memref<8x?x16xf32, strided<[?, 1, ?]>>, memref<8x56x16xf32>)
      outs(%y : memref<8x?x7168xf8E4M3FN>) y_scale(%ys : memref<8x?x56xf32, strided<[?, 1, ?]>>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>,
       expected_m = 20}
  return
}
