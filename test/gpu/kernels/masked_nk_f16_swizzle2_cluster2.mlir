// GPU-check kernel: masked groups, [N, K] weights, 2-CTA clusters sharing
// the weight tile, tiles walked along n in bands of 2 (cluster) row tiles.
func.func @masked_nk_f16_swizzle2_cluster2(%x: memref<?x?x?xf16>,
    %w: memref<?x?x?xf16>, %counts: memref<?xi32>, %y: memref<?x?x?xf16>) {
  ggemm.masked_matmul ins(%x, %w : memref<?x?x?xf16>, memref<?x?x?xf16>)
      masked_m(%counts : memref<?xi32>) outs(%y : memref<?x?x?xf16>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64,
                                   stages = 4, cluster_m = 2, swizzle = 2>}
  return
}
