// INT8 (s8 x s8, aiter's int8_gemm) end to end: the kernels of the FP8
// tensor-wise / per-row form with s8 operands. wgmma sums into s32
// registers (exact), the store converts them to f32 (cvt.rn.f32.s32) and
// dequantises with x_scale and w_scale; the manifest names the operands
// s8 and passes both scales by pointer; ptxas assembles each kernel. One
// function per op (segment with the selected 128x256 tile, masked swap-AB,
// batched).
// RUN: rm -rf %t && gemm-opt %s --split-input-file --ggemm-to-ptx="chip=sm_90a variants=false bundle-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=SEG --input-file=%t/rowwise_kernel.ptx
// RUN: FileCheck %s --check-prefix=SEG-JSON --input-file=%t/rowwise_kernel.json
// RUN: FileCheck %s --check-prefix=SWAP --input-file=%t/masked_swap_kernel.ptx
// RUN: FileCheck %s --check-prefix=SWAP-JSON --input-file=%t/masked_swap_kernel.json
// RUN: FileCheck %s --check-prefix=BMM-JSON --input-file=%t/bmm_kernel.json
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/rowwise_kernel.ptx -o %t/rowwise.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/masked_swap_kernel.ptx -o %t/swap.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/bmm_kernel.ptx -o %t/bmm.cubin %}

// A 128x256 tile: one m64n256k32 s8 wgmma per 32-wide k step into s32
// registers; the store converts them.
// SEG: .entry rowwise_kernel(
// SEG: wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8
// SEG-NOT: .f32.e4m3
// SEG: cvt.rn.f32.s32
// SEG-JSON: "dtype": "s8",
// SEG-JSON-NEXT: "kind": "tma_descriptor",
// SEG-JSON-NEXT: "name": "a_desc",
// SEG-JSON: "dtype": "s8",
// SEG-JSON-NEXT: "kind": "tma_descriptor",
// SEG-JSON-NEXT: "name": "b_desc",
// The scales come after the other parameters.
// SEG-JSON: "name": "num_weights"
// SEG-JSON: "kind": "pointer",
// SEG-JSON-NEXT: "name": "x_scale",
// SEG-JSON-NEXT: "optional": false,
// SEG-JSON-NEXT: "tensor": "x_scale"
// SEG-JSON: "kind": "pointer",
// SEG-JSON-NEXT: "name": "w_scale",
// SEG-JSON-NEXT: "optional": false,
// SEG-JSON-NEXT: "tensor": "w_scale"
// SEG-JSON: "a_dtype": "s8",
// SEG-JSON: "b_dtype": "s8",
// SEG-JSON: "w_scale_block": "per_row"
// SEG-JSON: "x_scale_block": "per_row"
// SEG-JSON: "block_k": 128
// SEG-JSON: "block_n": 256
func.func @rowwise(%x: memref<?x7168xi8>, %w: memref<8x4096x7168xi8>,
                   %p: memref<9xi32>, %xs: memref<?xf32>, %ws: memref<8x4096xf32>,
                   %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xi8>, memref<8x4096x7168xi8>)
      segments(%p : memref<9xi32>) scales(%xs, %ws : memref<?xf32>, memref<8x4096xf32>)
      outs(%y : memref<?x4096xbf16>)
      {x_scale_block = #ggemm.scale_block<per_row>, w_scale_block = #ggemm.scale_block<per_row>}
  return
}

// -----

// Swap-AB: the weight tile is wgmma's A, 24 tokens its N; the accumulator
// is stored transposed, converted the same way.
// SWAP: .entry masked_swap_kernel(
// SWAP: wgmma.mma_async.sync.aligned.m64n24k32.s32.s8.s8
// SWAP: cvt.rn.f32.s32
// SWAP-JSON: "name": "x_scale"
// SWAP-JSON: "name": "w_scale"
// SWAP-JSON: "a_dtype": "s8",
// SWAP-JSON: "op": "masked_matmul"
// SWAP-JSON: "w_scale_block": "per_row"
// SWAP-JSON: "x_scale_block": "tensor"
// SWAP-JSON: "swap_ab": true
func.func @masked_swap(%x: memref<8x?x2048xi8>, %w: memref<8x7168x2048xi8>,
                       %m: memref<8xi32>, %xs: memref<1xf32>, %ws: memref<8x7168xf32>,
                       %y: memref<8x?x7168xbf16>) {
  ggemm.masked_matmul ins(%x, %w : memref<8x?x2048xi8>, memref<8x7168x2048xi8>)
      masked_m(%m : memref<8xi32>) scales(%xs, %ws : memref<1xf32>, memref<8x7168xf32>)
      outs(%y : memref<8x?x7168xbf16>)
      {x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = #ggemm.scale_block<per_row>,
       config = #ggemm.tile_config<block_m = 24, block_n = 64, block_k = 128, stages = 6,
                                   consumer_warpgroups = 1, swap_ab = true>}
  return
}

// -----

// Batched with per-token x scales, bias and relu, f32 out.
// BMM-JSON: "a_dtype": "s8",
// BMM-JSON: "has_bias": true
// BMM-JSON: "op": "batched_matmul"
// BMM-JSON: "out_dtype": "f32"
// BMM-JSON: "w_scale_block": "tensor"
// BMM-JSON: "x_scale_block": "per_row"
func.func @bmm(%x: memref<4x?x1024xi8>, %w: memref<4x1000x1024xi8>,
               %xs: memref<4x?xf32>, %ws: memref<4xf32>, %b: memref<4x1000xf32>,
               %y: memref<4x?x1000xf32>) {
  ggemm.batched_matmul ins(%x, %w : memref<4x?x1024xi8>, memref<4x1000x1024xi8>)
      scales(%xs, %ws : memref<4x?xf32>, memref<4xf32>) bias(%b : memref<4x1000xf32>)
      outs(%y : memref<4x?x1000xf32>)
      {x_scale_block = #ggemm.scale_block<per_row>, w_scale_block = #ggemm.scale_block<tensor>,
       epilogue = #ggemm.epilogue<activation = relu>}
  return
}
