// Benchmark kernel: segment_matmul bf16 with 64x128 tiles (one consumer
// warpgroup), for small groups.
func.func @bench_seg_m64n128(%x: memref<?x?xbf16>, %w: memref<?x?x?xbf16>,
                             %indptr: memref<?xi32>, %y: memref<?x?xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x?xbf16>, memref<?x?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%y : memref<?x?xbf16>)
      {config = #ggemm.tile_config<block_m = 64, block_n = 128, block_k = 64,
                                   stages = 8, consumer_warpgroups = 1>}
  return
}
