// ggemm-persistent-schedule with thread-block clusters (cluster_m > 1):
// the CTAs of a cluster walk the (cluster_m x block_m-row) tiles together
// from their cluster's index, striding by the number of clusters, and each
// takes its rank's block_m rows (ggemm.map_tile ... cluster_rank). Clusters
// need the persistent grid, and share weight tiles along m only.
// RUN: gemm-opt %s -split-input-file -ggemm-persistent-schedule -verify-diagnostics | FileCheck %s
// RUN: not gemm-opt %s -ggemm-persistent-schedule=grid=tiles -o /dev/null 2>&1 | FileCheck %s --check-prefix=TILES

// TILES: error: 'ggemm.foreach_tile' op expects grid=persistent with cluster_m = 2: a cluster's CTAs walk their tiles together

// CHECK-LABEL: func.func @clustered(
// CHECK: ggemm.launch %[[S:.+]] grid(persistent) dependent_launch {
// CHECK-NEXT: ^bb0(%[[CTA:.+]]: index, %[[NUM:.+]]: index):
// CHECK-NEXT: ggemm.wait_dependency
// CHECK-NEXT: %[[T:.+]] = ggemm.tile_count %[[S]]
// CHECK-NEXT: %[[C2:.+]] = arith.constant 2 : index
// CHECK-NEXT: %[[CL:.+]] = arith.divui %[[CTA]], %[[C2]] : index
// CHECK-NEXT: %[[RANK:.+]] = arith.remui %[[CTA]], %[[C2]] : index
// CHECK-NEXT: %[[NCL:.+]] = arith.divui %[[NUM]], %[[C2]] : index
// CHECK-NEXT: scf.for %[[ID:.+]] = %[[CL]] to %[[T]] step %[[NCL]] {
// CHECK-NEXT: %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} = ggemm.map_tile %[[S]][%[[ID]]] cluster_rank(%[[RANK]])
func.func @clustered(%arg0: memref<?x256xbf16>, %arg1: memref<4x256x256xbf16>, %arg2: memref<5xi32>, %arg3: memref<?x256xbf16>) {
  %c4 = arith.constant 4 : index
  %c0 = arith.constant 0 : index
  %c0_0 = arith.constant 0 : index
  %dim = memref.dim %arg0, %c0_0 : memref<?x256xbf16>
  %c256 = arith.constant 256 : index
  ggemm.foreach_tile segment rows(%arg2 : memref<5xi32>) groups(%c4) rows_per_group(%c0) num_rows(%dim) num_cols(%c256) config(#ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64, cluster_m = 2, raster = along_m>) {
  ^bb0(%group: index, %row: index, %row_end: index, %col: index):
    %c4_1 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %c0_2 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %0 = ggemm.zero_accumulator : !ggemm.accumulator<128x256xf32>
    %1 = scf.for %arg4 = %c0_2 to %c4_1 step %c1 iter_args(%arg5 = %0) -> (!ggemm.accumulator<128x256xf32>) {
      %2 = arith.muli %arg4, %c64 : index
      %3 = ggemm.load_tile %arg0[%row, %2] : memref<?x256xbf16> -> !ggemm.tile<128x64xbf16>
      %4 = ggemm.load_tile %arg1[%group, %col, %2] : memref<4x256x256xbf16> -> !ggemm.tile<256x64xbf16>
      %5 = ggemm.mma %3, %4, %arg5 : !ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16> -> !ggemm.accumulator<128x256xf32>
      scf.yield %5 : !ggemm.accumulator<128x256xf32>
    }
    ggemm.store_tile %1 to %arg3 row(%row) row_end(%row_end) col(%col) : !ggemm.accumulator<128x256xf32>, memref<?x256xbf16>
  }
  return
}

// -----

func.func @cluster_n(%n: index) {
  // expected-error @+1 {{'ggemm.foreach_tile' op expects cluster_n = 1: clusters share weight tiles between CTAs along m (cluster_m), got cluster_n = 2}}
  ggemm.foreach_tile uniform groups(%n) rows_per_group(%n) num_rows(%n) num_cols(%n)
      config(#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, cluster_n = 2>) {
  ^bb0(%g: index, %row: index, %row_end: index, %col: index):
  }
  return
}
