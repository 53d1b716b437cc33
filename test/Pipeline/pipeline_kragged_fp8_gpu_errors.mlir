// What the GPU back end refuses in an FP8 K-ragged program that the CPU
// reference runs: e5m2 operands (the runtime launches f8e4m3
// segment_matmul_k kernels only), scales that are not MN-major (TMA reads
// one token block's scales of a tile as a column), and tiles wider than a
// scale box (block_n + 4 <= 256 scales). Each is said at compile time
// rather than left to a bundle the runtime would refuse.
// RUN: gemm-opt %s -split-input-file --ggemm-to-cpu -o /dev/null
// RUN: gemm-opt %s -split-input-file --ggemm-to-ptx="chip=sm_90a" -verify-diagnostics -o /dev/null

func.func @wgrad_e5m2(%dy: memref<256x?xf8E5M2>, %x: memref<512x?xf8E5M2>,
                      %indptr: memref<5xi32>,
                      %dys: memref<256x?xf32, strided<[1, ?]>>,
                      %xs: memref<512x?xf32, strided<[1, ?]>>,
                      %dw: memref<4x256x512xf32>) {
  // expected-error @+1 {{'ggemm.launch' op expects e4m3 operands in an FP8 K-ragged kernel (the runtime launches f8e4m3 segment_matmul_k kernels only), got 'f8E5M2'}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<256x?xf8E5M2>, memref<512x?xf8E5M2>)
      segments(%indptr : memref<5xi32>)
      scales(%dys, %xs : memref<256x?xf32, strided<[1, ?]>>, memref<512x?xf32, strided<[1, ?]>>)
      outs(%dw : memref<4x256x512xf32>) {transposed}
  return
}

// -----

func.func @wgrad_row_major_scales(%dy: memref<256x?xf8E4M3FN>, %x: memref<512x?xf8E4M3FN>,
                                  %indptr: memref<5xi32>, %dys: memref<256x?xf32>,
                                  %xs: memref<512x?xf32>, %dw: memref<4x256x512xf32>) {
  // expected-error @+1 {{'ggemm.launch' op expects MN-major scales (rows contiguous, memref<?x?xf32, strided<[1, ?]>>) for the GPU back end, got 'memref<256x?xf32>'}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<256x?xf8E4M3FN>, memref<512x?xf8E4M3FN>)
      segments(%indptr : memref<5xi32>)
      scales(%dys, %xs : memref<256x?xf32>, memref<512x?xf32>)
      outs(%dw : memref<4x256x512xf32>) {transposed}
  return
}

// -----

func.func @wgrad_wide_tile(%dy: memref<256x?xf8E4M3FN>, %x: memref<512x?xf8E4M3FN>,
                           %indptr: memref<5xi32>,
                           %dys: memref<256x?xf32, strided<[1, ?]>>,
                           %xs: memref<512x?xf32, strided<[1, ?]>>,
                           %dw: memref<4x256x512xf32>) {
  // expected-error @+1 {{'ggemm.launch' op expects at most 252 columns per FP8 K-ragged tile (the scales' TMA box holds block_n + 4 <= 256 scales), got 256}}
  ggemm.segment_matmul_k ins(%dy, %x : memref<256x?xf8E4M3FN>, memref<512x?xf8E4M3FN>)
      segments(%indptr : memref<5xi32>)
      scales(%dys, %xs : memref<256x?xf32, strided<[1, ?]>>, memref<512x?xf32, strided<[1, ?]>>)
      outs(%dw : memref<4x256x512xf32>)
      {transposed, config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 128, stages = 2>}
  return
}
