// Benchmark kernel: bench_seg_m64n128's tiles with ping-pong consumers: two
// consumer warpgroups on alternate 64x128 tiles (bench/NOTES.md v19).
func.func @bench_seg_m64n128_pingpong(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                                      %indptr: memref<?xi32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xbf16>)
      {config = #ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64,
                                   stages = 8, pingpong = true>}
  return
}
