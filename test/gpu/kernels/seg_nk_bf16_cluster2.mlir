// GPU-check kernel: segments on 2-CTA clusters (cluster_m = 2) sharing the
// weight tile by TMA multicast; 128x256 tiles along m, the staged epilogue.
func.func @seg_nk_bf16_cluster2(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                                %indptr: memref<?xi32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xbf16>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64,
                                   stages = 4, cluster_m = 2, raster = along_m>}
  return
}
