// segment_matmul_k bf16 -> f32, dw [G, N, K], every size dynamic, with
// 128 x 128 tiles and 6 stages instead of the heuristic's 128 x 256 x 4: the
// tile experiment check_kragged.py --bench times next to the main kernel
// (twice the tiles: better wave balance for few, short groups, half the
// operand reuse per K block). Its correctness runs in the random cases.
func.func @kragged_nk_bf16_f32_128x128(%dy: memref<?x?xbf16>, %x: memref<?x?xbf16>,
                                       %indptr: memref<?xi32>, %dw: memref<?x?x?xf32>) {
  ggemm.segment_matmul_k ins(%dy, %x : memref<?x?xbf16>, memref<?x?xbf16>)
      segments(%indptr : memref<?xi32>) outs(%dw : memref<?x?x?xf32>)
      {config = #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, stages = 6, raster = along_m>}
  return
}
