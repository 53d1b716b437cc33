// GPU-check kernel: ping-pong consumers on 2-CTA clusters sharing the weight
// tile by TMA multicast, with bias, silu and a per-row scale.
func.func @seg_nk_bf16_pingpong_cluster2_bias_silu_rs(%x: memref<?x?xbf16>,
    %w: memref<?x?x?xbf16>, %indptr: memref<?xi32>, %bias: memref<?x?xf32>,
    %rs: memref<?xf32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) bias(%bias : memref<?x?xf32>)
      row_scale(%rs : memref<?xf32>) outs(%y : memref<?x?xbf16>)
      {epilogue = #ggemm.epilogue<activation = silu>,
       config = #ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64,
                                   stages = 4, cluster_m = 2, raster = along_m,
                                   pingpong = true>}
  return
}
