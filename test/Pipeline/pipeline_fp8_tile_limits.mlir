// FP8 tiles carry their activation scales through one TMA box of block_m + 4
// f32: a swap-AB token tile of 256 rows does not fit it.
// RUN: not gemm-opt %s --ggemm-to-ptx="chip=sm_90a" -o /dev/null 2>&1 | FileCheck %s
// CHECK: error: 'ggemm.launch' op expects at most 252 token rows per FP8 tile (the activation scales' TMA box holds block_m + 4 <= 256 scales), got 256
func.func @fp8_swap_256(%x: memref<?x256xf8E4M3FN>, %w: memref<4x128x256xf8E4M3FN>, %p: memref<5xi32>,
                        %xs: memref<?x2xf32, strided<[1, ?]>>, %ws: memref<4x1x2xf32>,
                        %y: memref<?x128xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xf8E4M3FN>, memref<4x128x256xf8E4M3FN>)
      segments(%p : memref<5xi32>)
      scales(%xs, %ws : memref<?x2xf32, strided<[1, ?]>>, memref<4x1x2xf32>)
      outs(%y : memref<?x128xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>,
       config = #ggemm.tile_config<block_m = 256, block_n = 64, block_k = 128, stages = 2,
                                   consumer_warpgroups = 1, swap_ab = true>}
  return
}
