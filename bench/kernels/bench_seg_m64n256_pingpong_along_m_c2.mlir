// Benchmark kernel: bench_seg_m64n256_pingpong_along_m on 2-CTA clusters:
// the two CTAs take the two 64-row halves of a 128-row tile and share its
// 256-column weight tile by TMA multicast, so that a CTA reads as many
// operand bytes from L2 per flop as the 128x256 cooperative kernel.
func.func @bench_seg_m64n256_pingpong_along_m_c2(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                                                 %indptr: memref<?xi32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xbf16>)
      {config = #ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64,
                                   stages = 4, cluster_m = 2, raster = along_m,
                                   pingpong = true>}
  return
}
