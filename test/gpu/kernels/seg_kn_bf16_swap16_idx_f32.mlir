// Swap-AB segment_matmul with weights [Gw, K, N] (an mn_major weight tile
// as wgmma's A), weight_indices, f32 out, 16-row token tiles.
func.func @seg_kn_bf16_swap16_idx_f32(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                                      %indptr: memref<?xi64>, %idx: memref<?xi32>,
                                      %y: memref<?x?xf32>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi64>) weight_indices(%idx : memref<?xi32>)
      outs(%y : memref<?x?xf32>) {weight_layout = #ggemm.weight_layout<kn>,
       config = #ggemm.tile_config<block_m = 16, block_n = 64, block_k = 64,
                                   stages = 6, consumer_warpgroups = 1, swap_ab = true>}
  return
}
