// ggemm.quantize end to end (ggemm-to-ptx): both quantize kernels in PTX
// (16-byte vector loads, shfl.sync.bfly maxima, an IEEE reciprocal for
// the factor, cvt.rn.satfinite.e4m3x2.f32 packing, 8-byte stores), their bundle manifests, and ptxas accepting them for sm_90a.
// RUN: rm -rf %t && gemm-opt %s --ggemm-to-ptx="chip=sm_90a bundle-dir=%t" -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/quant_kernel.ptx
// RUN: FileCheck %s --check-prefix=WPTX --input-file=%t/wquant_kernel.ptx
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/quant_kernel.json
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/quant_kernel.ptx -o %t/quant.cubin %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/wquant_kernel.ptx -o %t/wquant.cubin %}

// PTX: .target sm_90a
// PTX: .visible .entry quant_kernel(
// PTX-COUNT-3: .param .u64 .ptr .global .align 1 quant_kernel_param_{{[0-2]}},
// PTX: .reqntid 256, 1, 1
// PTX: .minnctapersm 4
// PTX: ld.global.v4.b32
// PTX: shfl.sync.bfly.b32
// PTX: rcp.rn.f32
// PTX: cvt.rn.satfinite.e4m3x2.f32
// PTX: st.global.v2.b32

// WPTX: .visible .entry wquant_kernel(
// WPTX: ld.global.v4.b32
// WPTX: shfl.sync.bfly.b32
// WPTX: bar.sync 0;
// WPTX: cvt.rn.satfinite.e4m3x2.f32

// JSON: "block": [
// JSON-NEXT: 256,
// JSON: "entry": "quant_kernel",
// JSON: "grid": {
// JSON-NEXT: "ctas_per_sm": 4,
// JSON-NEXT: "policy": "persistent",
// JSON-NEXT: "units_per_cta": 8
// JSON: "problem": {
// JSON-NEXT: "op": "quantize",
// JSON-NEXT: "q_dtype": "f8e4m3",
// JSON-NEXT: "rank": 2,
// JSON-NEXT: "scale_block": "1x128",
// JSON-NEXT: "x_dtype": "bf16"
// JSON: "ptx": "quant_kernel.ptx",

func.func @quant(%x: memref<?x?xbf16>, %q: memref<?x?xf8E4M3FN>,
                 %s: memref<?x?xf32, strided<[?, ?], offset: ?>>) {
  ggemm.quantize ins(%x : memref<?x?xbf16>)
      outs(%q, %s : memref<?x?xf8E4M3FN>, memref<?x?xf32, strided<[?, ?], offset: ?>>)
  return
}

func.func @wquant(%w: memref<?x?x?xbf16>, %q: memref<?x?x?xf8E4M3FN>,
                  %s: memref<?x?x?xf32>) {
  ggemm.quantize ins(%w : memref<?x?x?xbf16>)
      outs(%q, %s : memref<?x?x?xf8E4M3FN>, memref<?x?x?xf32>)
      {scale_block = #ggemm.scale_block<128x128>}
  return
}
