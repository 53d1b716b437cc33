// The same IR gives the same cubin. ptxas 13.0's code depends on where its
// memory lands: assembling this kernel's PTX ten times gave five different
// .text sections, and one with address-space randomisation off. So
// ggemm-serialize-kernels spawns ptxas with randomisation off (the
// serialising thread's personality, restored afterwards; bench/NOTES.md
// v26). Four compiles must agree byte for byte (each extra compile would
// match the first by chance about half the time without it).
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: gemm-opt %s --ggemm-to-ptx="chip=sm_90a format=bin bundle-dir=%t/a" -o /dev/null
// RUN: gemm-opt %s --ggemm-to-ptx="chip=sm_90a format=bin bundle-dir=%t/b" -o /dev/null
// RUN: gemm-opt %s --ggemm-to-ptx="chip=sm_90a format=bin bundle-dir=%t/c" -o /dev/null
// RUN: gemm-opt %s --ggemm-to-ptx="chip=sm_90a format=bin bundle-dir=%t/d" -o /dev/null
// RUN: cmp %t/a/deterministic_cubin_kernel.cubin %t/b/deterministic_cubin_kernel.cubin
// RUN: cmp %t/a/deterministic_cubin_kernel.cubin %t/c/deterministic_cubin_kernel.cubin
// RUN: cmp %t/a/deterministic_cubin_kernel.cubin %t/d/deterministic_cubin_kernel.cubin

// A bf16 128x256 tile of a kn weight with weight indices (one of the Python
// catalog's kernels whose cubin varied from build to build).
func.func @deterministic_cubin(%x: memref<?x384xbf16>, %w: memref<3x384x256xbf16>,
                               %seg_indptr: memref<6xi64>, %weight_indices: memref<5xi32>,
                               %y: memref<?x256xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x384xbf16>, memref<3x384x256xbf16>)
      segments(%seg_indptr : memref<6xi64>)
      weight_indices(%weight_indices : memref<5xi32>)
      outs(%y : memref<?x256xbf16>)
      {weight_layout = #ggemm.weight_layout<kn>,
       config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, raster = along_m, swizzle = 4, swizzle_min_tiles = 48>}
  return
}
