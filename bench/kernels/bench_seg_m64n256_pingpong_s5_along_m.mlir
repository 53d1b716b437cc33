// Benchmark kernel: bench_seg_m64n256_pingpong_along_m with 5 stages (and so
// one store box per warpgroup): ping-pong consumers (issue 11): two consumer warpgroups
// on alternate 64x256 tiles, each one's epilogue under the other's main
// loop, along m.
func.func @bench_seg_m64n256_pingpong_s5_along_m(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                                              %indptr: memref<?xi32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xbf16>)
      {config = #ggemm.tile_config<block_m = 64, block_n = 256, block_k = 64,
                                   stages = 5, raster = along_m, pingpong = true>}
  return
}
