// What the GPU back end does not compile of the MoE forms, diagnosed: a
// gated kernel on clusters (the multicast weight tile is split by rows, the
// gated one by halves), gathered rows with swap-AB (the gathered tile must
// be wgmma's A), and gated or gathered masked/batched kernels (the
// runtime launches these forms for segment_matmul only).
// RUN: gemm-opt %s -split-input-file --ggemm-to-ptx="chip=sm_90a" -verify-diagnostics -o /dev/null

func.func @gated_cluster(%x: memref<?x256xbf16>, %w: memref<4x512x256xbf16>,
                         %indptr: memref<5xi32>, %y: memref<?x256xbf16>) {
  // expected-error @+1 {{'ggemm.launch' op expects a gated (swiglu) kernel without swap_ab, clusters or FP8}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x512x256xbf16>)
      segments(%indptr : memref<5xi32>) outs(%y : memref<?x256xbf16>)
      {epilogue = #ggemm.epilogue<activation = swiglu>,
       config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64,
                                   cluster_m = 2, raster = along_m>}
  return
}

// -----

func.func @gather_swap(%x: memref<?x256xbf16>, %w: memref<4x256x256xbf16>,
                       %indptr: memref<5xi32>, %ri: memref<?xi32>,
                       %y: memref<?x256xbf16>) {
  // expected-error @+1 {{'ggemm.launch' op expects no swap_ab with gathered rows (the gathered tile is wgmma's A)}}
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x256x256xbf16>)
      segments(%indptr : memref<5xi32>) row_indices(%ri : memref<?xi32>)
      outs(%y : memref<?x256xbf16>)
      {config = #ggemm.tile_config<block_m = 24, block_n = 128, block_k = 64,
                                   consumer_warpgroups = 2, swap_ab = true>}
  return
}

// -----

func.func @gated_masked(%x: memref<4x64x256xbf16>, %w: memref<4x512x256xbf16>,
                        %counts: memref<4xi32>, %y: memref<4x64x256xbf16>) {
  // expected-error @+1 {{'ggemm.launch' op expects gathered or scattered rows and a gated (swiglu) epilogue only in a bf16/f16 segment kernel without clusters (the runtime launches them for segment_matmul)}}
  ggemm.masked_matmul ins(%x, %w : memref<4x64x256xbf16>, memref<4x512x256xbf16>)
      masked_m(%counts : memref<4xi32>) outs(%y : memref<4x64x256xbf16>)
      {epilogue = #ggemm.epilogue<activation = swiglu>,
       config = #ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64,
                                   consumer_warpgroups = 1>}
  return
}
