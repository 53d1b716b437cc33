// Benchmark kernel: ping-pong consumers on 128x128 tiles (each warpgroup two
// m64 row blocks; 32 KB of operands per 2.1 MFLOP, against 40 KB for the
// 64x256 ping-pong tile), 6 stages, along m (bench/NOTES.md v19).
func.func @bench_seg_m128n128_pingpong_along_m(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                                               %indptr: memref<?xi32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xbf16>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64,
                                   stages = 6, raster = along_m, pingpong = true>}
  return
}
