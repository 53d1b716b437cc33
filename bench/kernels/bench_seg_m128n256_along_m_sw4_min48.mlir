// Benchmark kernel: ggemm-select-config's 128x256 tile for large groups
// since v20: walked along m in bands of 4 column tiles only in the groups
// of at least 48 row tiles (6144 rows), plain in the others
// (bench/NOTES.md v20).
func.func @bench_seg_m128n256_along_m_sw4_min48(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                                                %indptr: memref<?xi32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xbf16>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64,
                                   stages = 4, raster = along_m, swizzle = 4, swizzle_min_tiles = 48>}
  return
}
