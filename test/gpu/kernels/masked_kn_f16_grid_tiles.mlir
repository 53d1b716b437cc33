// masked_matmul f16, weights [G, K, N], 64x128 tiles, scheduled one CTA per
// tile (grid=tiles).
// ggemm-to-ptx-options: grid=tiles
func.func @masked_kn_f16_grid_tiles(%x: memref<?x?x?xf16>, %w: memref<?x?x?xf16>,
                                    %m: memref<?xi64>, %y: memref<?x?x?xf16>) {
  ggemm.masked_matmul ins(%x, %w : memref<?x?x?xf16>, memref<?x?x?xf16>)
      masked_m(%m : memref<?xi64>) outs(%y : memref<?x?x?xf16>)
      {weight_layout = #ggemm.weight_layout<kn>,
       config = #ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64,
                                   stages = 4, consumer_warpgroups = 1>}
  return
}
