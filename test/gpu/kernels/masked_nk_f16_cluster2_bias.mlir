// GPU-check kernel: masked groups on 2-CTA clusters (cluster_m = 2), f16
// with a bias and f32 output, 128x128 tiles.
func.func @masked_nk_f16_cluster2_bias(%x: memref<?x?x?xf16>, %w: memref<?x?x?xf16>,
                                       %counts: memref<?xi32>, %b: memref<?x?xf32>,
                                       %y: memref<?x?x?xf32>) {
  ggemm.masked_matmul ins(%x, %w : memref<?x?x?xf16>, memref<?x?x?xf16>)
      masked_m(%counts : memref<?xi32>) bias(%b : memref<?x?xf32>)
      outs(%y : memref<?x?x?xf32>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64,
                                   stages = 4, cluster_m = 2>}
  return
}
