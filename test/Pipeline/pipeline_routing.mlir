// ggemm.sort_by_expert end to end (ggemm-to-ptx): the one-CTA routing kernel
// in PTX (1024 threads required, match.any ranking, shfl.sync.up scan,
// bar.warp.sync around each warp's cursor, dynamic shared memory), its
// bundle manifest, and ptxas accepting it for sm_90a.
// RUN: rm -rf %t && gemm-opt %s --ggemm-to-ptx="chip=sm_90a bundle-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/route_kernel.ptx
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/route_kernel.json
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/route_kernel.ptx -o %t/route.cubin %}

// PTX: .target sm_90a
// PTX: .extern .shared .align 16 .b8 ggemm_smem[];
// PTX: .visible .entry route_kernel(
// PTX-COUNT-4: .param .u64 .ptr .global .align 1 route_kernel_param_{{[0-3]}},
// PTX-NEXT: .param .u64 route_kernel_param_4
// PTX: .reqntid 1024, 1, 1
// PTX: atom.shared.add.u32
// PTX: bar.sync 0;
// PTX: shfl.sync.up.b32
// PTX: match.any.sync.b32
// PTX: popc.b32
// PTX: bar.warp.sync -1;

// JSON: "block": [
// JSON-NEXT: 1024,
// JSON: "dynamic_smem": 34056,
// JSON: "entry": "route_kernel",
// JSON: "grid": {
// JSON-NEXT: "policy": "single"
// JSON: "problem": {
// JSON-NEXT: "index_dtype": "i32",
// JSON-NEXT: "num_experts": 256,
// JSON-NEXT: "op": "sort_by_expert",
// JSON-NEXT: "topk": 8
// JSON: "ptx": "route_kernel.ptx",

func.func @route(%ids: memref<?xi32>, %indptr: memref<257xi32>,
                 %rows: memref<?xi32>, %pairs: memref<?xi32>) {
  ggemm.sort_by_expert ins(%ids : memref<?xi32>)
      outs(%indptr, %rows, %pairs : memref<257xi32>, memref<?xi32>, memref<?xi32>)
      {topk = 8}
  return
}
