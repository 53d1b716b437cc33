// What the GPU back end refuses with ping-pong consumers: the paths not
// checked on the GPU with them (8-bit operands, MoE's gathered and
// scattered rows). The CPU reference runs them (the warp roles are
// GPU-only); the GPU back end says so at compile time.
// RUN: gemm-opt %s -split-input-file --ggemm-to-cpu -o /dev/null
// RUN: gemm-opt %s -split-input-file --ggemm-to-ptx="chip=sm_90a" -verify-diagnostics -o /dev/null

func.func @fp8_pingpong(%x: memref<?x1024xf8E4M3FN>, %w: memref<?x512x1024xf8E4M3FN>,
                        %p: memref<?xi32>, %xs: memref<?x8xf32, strided<[1, ?]>>,
                        %ws: memref<?x4x8xf32>, %y: memref<?x512xbf16>) {
  // expected-error @+1 {{'ggemm.launch' op expects bf16 or f16 operands without swap_ab, K-ragged segments, gathered or scattered rows, a gated epilogue or an e4m3 y for ping-pong consumers (only those are checked on the GPU)}}
  ggemm.segment_matmul ins(%x, %w : memref<?x1024xf8E4M3FN>, memref<?x512x1024xf8E4M3FN>)
      segments(%p : memref<?xi32>)
      scales(%xs, %ws : memref<?x8xf32, strided<[1, ?]>>, memref<?x4x8xf32>)
      outs(%y : memref<?x512xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>,
       config = #ggemm.tile_config<block_m = 64, block_n = 128, block_k = 128,
                                   stages = 4, pingpong = true>}
  return
}

// -----

func.func @scatter_pingpong(%h: memref<?x768xbf16>, %w: memref<8x2048x768xbf16>,
                            %indptr: memref<9xi32>, %token: memref<?xi32>,
                            %out: memref<?x2048xbf16>) {
  // expected-error @+1 {{'ggemm.launch' op expects bf16 or f16 operands without swap_ab, K-ragged segments, gathered or scattered rows, a gated epilogue or an e4m3 y for ping-pong consumers (only those are checked on the GPU)}}
  ggemm.segment_matmul ins(%h, %w : memref<?x768xbf16>, memref<8x2048x768xbf16>)
      segments(%indptr : memref<9xi32>)
      scatter_indices(%token : memref<?xi32>) outs(%out : memref<?x2048xbf16>)
      {config = #ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64,
                                   stages = 4, pingpong = true>}
  return
}
