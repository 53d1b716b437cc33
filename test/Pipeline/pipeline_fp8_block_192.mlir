// FP8 with 1x128 / 128x128 block scales in 128x192 tiles (select-config's
// choice for large groups from v13 to v17, given here as the config; it now
// picks the same work as 192x128 over three consumer warpgroups,
// pipeline_fp8_three_warpgroups.mlir). A
// column tile starts 0 or 64 columns into a weight-scale block, so the
// consumers read two weight scales per K block and pick the middle 64
// columns' one by the tile's offset (one selp per row half); the product
// and the sum (2 x 96 registers per thread) fit without spills.
// RUN: rm -rf %t && gemm-opt %s --ggemm-to-ptx="chip=sm_90a variants=false bundle-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/fp8_wide_kernel.ptx
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/fp8_wide_kernel.json
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t/fp8_wide_kernel.ptx -o %t/wide.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// PTX: .entry fp8_wide_kernel(
// PTX: setmaxnreg.inc.sync.aligned.u32 {{.*}}232;
// The two selects are made with the other factors before the K block's
// wgmma (translateMma hoists them), then one fma per register.
// PTX-COUNT-2: selp.f32
// PTX-NOT: selp.f32
// PTX: wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3
// PTX-NOT: wgmma.mma_async.sync.aligned.m64n128k32
// PTX: fma.rn.f32
// JSON: "block_n": 192
// JSON: "stages": 5
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
func.func @fp8_wide(%x: memref<?x7168xf8E4M3FN>, %w: memref<?x4096x7168xf8E4M3FN>,
                    %p: memref<?xi32>, %xs: memref<?x56xf32, strided<[1, ?]>>,
                    %ws: memref<?x32x56xf32>, %y: memref<?x4096xbf16>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x7168xf8E4M3FN>, memref<?x4096x7168xf8E4M3FN>)
      segments(%p : memref<?xi32>)
      scales(%xs, %ws : memref<?x56xf32, strided<[1, ?]>>, memref<?x32x56xf32>)
      outs(%y : memref<?x4096xbf16>)
      {x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = #ggemm.scale_block<128x128>,
       config = #ggemm.tile_config<block_m = 128, block_n = 192, block_k = 128, stages = 5, raster = along_m>}
  return
}
