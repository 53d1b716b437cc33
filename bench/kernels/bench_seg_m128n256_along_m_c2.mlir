// Benchmark kernel: bench_seg_m128n256_along_m on 2-CTA clusters
// (cluster_m = 2): the two CTAs of a cluster take the two 128-row halves
// of a 256-row tile and share its 256-column weight tile, each loading half
// of it by TMA multicast.
func.func @bench_seg_m128n256_along_m_c2(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                                         %indptr: memref<?xi32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xbf16>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64,
                                   stages = 4, cluster_m = 2, raster = along_m>}
  return
}
