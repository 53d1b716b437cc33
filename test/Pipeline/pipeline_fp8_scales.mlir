// FP8 with tensor-wise and per-row scales end to end: the kernels keep the
// plain wgmma K loop of the bf16 path (a 128x256 tile: no promotion
// registers), the store scales the accumulator, and the manifest passes
// both scales by pointer after the other parameters; ptxas assembles each.
// One function per scale-kind mix and op (segment, masked swap-AB,
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

// A 128x256 tile, 64 rows per consumer warpgroup: one m64n256k32 per
// 32-wide k step, no per-K-block promotion (no second accumulator).
// SEG: .entry rowwise_kernel(
// SEG: wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3
// SEG-NOT: wgmma.mma_async.sync.aligned.m64n128k32
// The parameters (after y's descriptor: the epilogue is staged), then the
// problem and the tile, in the JSON's key order.
// SEG-JSON-NOT: a_scale_desc
// SEG-JSON: "name": "num_weights"
// SEG-JSON: "name": "y_desc"
// SEG-JSON: "kind": "pointer",
// SEG-JSON-NEXT: "name": "x_scale",
// SEG-JSON-NEXT: "optional": false,
// SEG-JSON-NEXT: "tensor": "x_scale"
// SEG-JSON: "kind": "pointer",
// SEG-JSON-NEXT: "name": "w_scale",
// SEG-JSON-NEXT: "optional": false,
// SEG-JSON-NEXT: "tensor": "w_scale"
// SEG-JSON: "w_scale_block": "per_row"
// SEG-JSON: "x_scale_block": "per_row"
// SEG-JSON: "block_n": 256
func.func @rowwise(%x: memref<?x7168xf8E4M3FN>, %w: memref<8x4096x7168xf8E4M3FN>,
                   %p: memref<9xi32>, %xs: memref<?xf32>, %ws: memref<8x4096xf32>,
                   %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xf8E4M3FN>, memref<8x4096x7168xf8E4M3FN>)
      segments(%p : memref<9xi32>) scales(%xs, %ws : memref<?xf32>, memref<8x4096xf32>)
      outs(%y : memref<?x4096xbf16>)
      {x_scale_block = #ggemm.scale_block<per_row>, w_scale_block = #ggemm.scale_block<per_row>}
  return
}

// -----

// Swap-AB: the weight tile is wgmma's A, 24 tokens its N.
// SWAP: .entry masked_swap_kernel(
// SWAP: wgmma.mma_async.sync.aligned.m64n24k32.f32.e4m3.e4m3
// SWAP-JSON: "name": "x_scale"
// SWAP-JSON: "name": "w_scale"
// SWAP-JSON: "op": "masked_matmul"
// SWAP-JSON: "w_scale_block": "per_row"
// SWAP-JSON: "x_scale_block": "tensor"
// SWAP-JSON: "swap_ab": true
func.func @masked_swap(%x: memref<8x?x2048xf8E4M3FN>, %w: memref<8x7168x2048xf8E4M3FN>,
                       %m: memref<8xi32>, %xs: memref<1xf32>, %ws: memref<8x7168xf32>,
                       %y: memref<8x?x7168xbf16>) {
  ggemm.masked_matmul ins(%x, %w : memref<8x?x2048xf8E4M3FN>, memref<8x7168x2048xf8E4M3FN>)
      masked_m(%m : memref<8xi32>) scales(%xs, %ws : memref<1xf32>, memref<8x7168xf32>)
      outs(%y : memref<8x?x7168xbf16>)
      {x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = #ggemm.scale_block<per_row>,
       config = #ggemm.tile_config<block_m = 24, block_n = 64, block_k = 128, stages = 6,
                                   consumer_warpgroups = 1, swap_ab = true>}
  return
}

// -----

// FlashInfer's bmm_fp8: tensor-wise scales, bias and relu, f32 out.
// BMM-JSON: "has_bias": true
// BMM-JSON: "op": "batched_matmul"
// BMM-JSON: "w_scale_block": "tensor"
// BMM-JSON: "x_scale_block": "tensor"
func.func @bmm(%x: memref<4x?x1024xf8E4M3FN>, %w: memref<4x1000x1024xf8E4M3FN>,
               %xs: memref<1xf32>, %ws: memref<4xf32>, %b: memref<4x1000xf32>,
               %y: memref<4x?x1000xf32>) {
  ggemm.batched_matmul ins(%x, %w : memref<4x?x1024xf8E4M3FN>, memref<4x1000x1024xf8E4M3FN>)
      scales(%xs, %ws : memref<1xf32>, memref<4xf32>) bias(%b : memref<4x1000xf32>)
      outs(%y : memref<4x?x1000xf32>)
      {x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = #ggemm.scale_block<tensor>,
       epilogue = #ggemm.epilogue<activation = relu>}
  return
}
