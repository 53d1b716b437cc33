// Benchmark kernel: the 128x128 ping-pong kernel's tiles walked along m in
// bands of 8 column tiles (swizzle = 8): along m alone, a 128-column grid
// re-reads each group's x once per column tile (bench/NOTES.md v19, v20).
func.func @bench_seg_m128n128_pingpong_along_m_sw8(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                                                   %indptr: memref<?xi32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xbf16>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64,
                                   stages = 6, raster = along_m, pingpong = true, swizzle = 8>}
  return
}
