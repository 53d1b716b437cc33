// ggemm-export-bundle writes <dir>/<kernel>.{ptx,cubin} and <dir>/<kernel>.json
// for every kernel of the module's `ggemm.manifests`.
//
// End to end: the bundle of a problem op compiled by ggemm-to-ptx, with one
// kernel (variants=false: manifest version 1) and with the default tile
// variants (version 2: the kernels of @moe_up_v0 and @moe_up_v1 in one
// bundle named after @moe_up).
// RUN: rm -rf %t && mkdir -p %t
// RUN: gemm-opt %S/../../examples/segment_matmul_bf16.mlir --ggemm-to-ptx="chip=sm_90a variants=false bundle-dir=%t/e2e" -o /dev/null
// RUN: gemm-opt %S/../../examples/segment_matmul_bf16.mlir --ggemm-to-ptx="chip=sm_90a bundle-dir=%t/variants" -o /dev/null
// RUN: FileCheck %s --check-prefix=E2E-VAR --input-file=%t/variants/moe_up_kernel.json
// RUN: ls %t/variants | FileCheck %s --check-prefix=E2E-VAR-FILES
// RUN: FileCheck %s --check-prefix=E2E --input-file=%t/e2e/moe_up_kernel.json
// RUN: FileCheck %s --check-prefix=E2E-PTX --input-file=%t/e2e/moe_up_kernel.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t/e2e/moe_up_kernel.ptx -o %t/e2e/moe_up_kernel.cubin %}
//
// The pass alone on hand-written gpu.binary ops, and its diagnostics.
// RUN: gemm-opt %s -split-input-file -ggemm-export-bundle="dir=%t/direct" -verify-diagnostics -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX-JSON --input-file=%t/direct/ptx_kernel.json
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/direct/ptx_kernel.ptx
// RUN: FileCheck %s --check-prefix=CUBIN-JSON --input-file=%t/direct/cubin_kernel.json
// RUN: od -An -c %t/direct/cubin_kernel.cubin | FileCheck %s --check-prefix=CUBIN
// RUN: FileCheck %s --check-prefix=VAR-JSON --input-file=%t/direct/moe_kernel.json
// RUN: FileCheck %s --check-prefix=VAR-PTX0 --input-file=%t/direct/moe_v0_kernel.ptx
// RUN: od -An -c %t/direct/moe_v1_kernel.cubin | FileCheck %s --check-prefix=VAR-CUBIN1
// RUN: ls %t/direct | FileCheck %s --check-prefix=VAR-FILES
//
// A directory that cannot be created, a file that cannot be written.
// RUN: not gemm-opt %s -split-input-file -ggemm-export-bundle="dir=%s/sub" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NODIR
// RUN: mkdir -p %t/blocked/ptx_kernel.ptx
// RUN: not gemm-opt %s -split-input-file -ggemm-export-bundle="dir=%t/blocked" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOWRITE

// The manifest of the example's kernel: launch shape, shared memory, the
// problem, the tile and the parameter list in kernel order.
// E2E: "arch": "sm_90a",
// E2E: "block": [
// E2E-NEXT: 384,
// E2E-NEXT: 1,
// E2E-NEXT: 1
// E2E-NEXT: ],
// E2E: "cluster": [
// E2E-NEXT: 1,
// E2E: "dynamic_smem": {{[1-9][0-9]*}},
// E2E: "entry": "moe_up_kernel",
// E2E: "format": "ggemm-bundle",
// E2E: "grid": {
// E2E-NEXT: "ctas_per_sm": 1,
// E2E-NEXT: "policy": "persistent"
// E2E: "params": [
// E2E: "box": [
// E2E-NEXT: 64,
// E2E-NEXT: 128
// E2E-NEXT: ],
// E2E-NEXT: "dtype": "bf16",
// E2E-NEXT: "kind": "tma_descriptor",
// E2E-NEXT: "name": "a_desc",
// E2E-NEXT: "oob_fill": "zero",
// E2E-NEXT: "rank": 2,
// E2E-NEXT: "swizzle": "128B",
// E2E-NEXT: "tensor": "x"
// E2E: "name": "b_desc",
// E2E: "rank": 3,
// E2E: "tensor": "w"
// E2E: "kind": "pointer",
// E2E-NEXT: "name": "y",
// E2E: "name": "group_rows",
// E2E-NEXT: "optional": false,
// E2E-NEXT: "tensor": "seg_indptr"
// E2E: "name": "weight_indices",
// E2E: "name": "bias",
// E2E: "name": "row_scale",
// E2E: "name": "num_rows",
// E2E: "name": "rows_per_group",
// E2E: "name": "num_groups",
// E2E: "name": "n",
// E2E: "name": "k",
// E2E: "name": "ldy",
// E2E: "problem": {
// E2E-NEXT: "a_dtype": "bf16",
// E2E: "k": 7168,
// E2E: "n": 4096,
// E2E: "op": "segment_matmul",
// E2E: "ptx": "moe_up_kernel.ptx",
// E2E: "tile": {
// E2E-NEXT: "block_k": 64,
// E2E: "version": 1
// E2E-PTX: .target sm_90a
// E2E-PTX: .entry moe_up_kernel(

// E2E-VAR: "arch": "sm_90a",
// E2E-VAR-NEXT: "dispatch": {
// E2E-VAR-NEXT: "bounds": [
// E2E-VAR-NEXT: 16,
// E2E-VAR-NEXT: 32,
// E2E-VAR-NEXT: 64
// E2E-VAR-NEXT: ],
// E2E-VAR-NEXT: "rule": "rows_per_group"
// E2E-VAR-NEXT: },
// E2E-VAR-NEXT: "format": "ggemm-bundle",
// E2E-VAR-NEXT: "problem": {
// E2E-VAR: "op": "segment_matmul",
// E2E-VAR: "variants": [
// E2E-VAR-NEXT: {
// E2E-VAR-NEXT: "block": [
// E2E-VAR-NEXT: 384,
// E2E-VAR: "entry": "moe_up_v0_kernel",
// E2E-VAR: "name": "a_desc",
// E2E-VAR: "ptx": "moe_up_v0_kernel.ptx",
// E2E-VAR-NEXT: "tile": {
// E2E-VAR-NEXT: "block_k": 64,
// E2E-VAR-NEXT: "block_m": 24,
// E2E-VAR-NEXT: "block_n": 128,
// E2E-VAR: "swap_ab": true
// E2E-VAR: "entry": "moe_up_v3_kernel",
// E2E-VAR: "ptx": "moe_up_v3_kernel.ptx",
// E2E-VAR-NEXT: "tile": {
// E2E-VAR-NEXT: "block_k": 64,
// E2E-VAR-NEXT: "block_m": 128,
// E2E-VAR-NEXT: "block_n": 256,
// E2E-VAR: "swap_ab": false
// E2E-VAR: "version": 2
// E2E-VAR-FILES: moe_up_kernel.json
// E2E-VAR-FILES-NEXT: moe_up_v0_kernel.ptx
// E2E-VAR-FILES-NEXT: moe_up_v1_kernel.ptx
// E2E-VAR-FILES-NEXT: moe_up_v2_kernel.ptx
// E2E-VAR-FILES-NEXT: moe_up_v3_kernel.ptx

// PTX-JSON: {
// PTX-JSON-NEXT: "arch": "sm_90a",
// PTX-JSON-NEXT: "block": [
// PTX-JSON-NEXT: 384,
// PTX-JSON-NEXT: 1,
// PTX-JSON-NEXT: 1
// PTX-JSON-NEXT: ],
// PTX-JSON-NEXT: "entry": "ptx_kernel",
// PTX-JSON-NEXT: "flag": true,
// PTX-JSON-NEXT: "nested": {
// PTX-JSON-NEXT: "name": "b_desc"
// PTX-JSON-NEXT: },
// PTX-JSON-NEXT: "ptx": "ptx_kernel.ptx"
// PTX-JSON-NEXT: }
// PTX: // PTX text
// PTX-NEXT: .entry ptx_kernel()
// CUBIN-JSON: "cubin": "cubin_kernel.cubin",
// CUBIN-JSON-NEXT: "entry": "cubin_kernel"
// CUBIN: 177 E L F
// NODIR: error: cannot create {{.*}}sub:
// NOWRITE: error: cannot write {{.*}}ptx_kernel.ptx:
module attributes {
    ggemm.manifests = {
      ptx_kernel = {entry = "ptx_kernel", block = [384, 1, 1], flag = true,
                    nested = {name = "b_desc"}},
      cubin_kernel = {entry = "cubin_kernel"}}} {
  gpu.binary @ptx_kernel_module [#gpu.object<#nvvm.target<chip = "sm_90a">,
                                             assembly = "// PTX text\0A.entry ptx_kernel()\0A">]
  gpu.binary @cubin_kernel_module [#gpu.object<#nvvm.target<chip = "sm_90a">, bin = "\7FELF">]
}

// -----

// expected-error @+1 {{expects ggemm kernels: no ggemm.manifests attribute (run ggemm-to-ptx first)}}
module {
  func.func @not_compiled() {
    return
  }
}

// -----

// expected-error @+1 {{expects gpu.binary @lost_kernel_module for kernel lost_kernel (run gpu-module-to-binary first)}}
module attributes {ggemm.manifests = {lost_kernel = {entry = "lost_kernel"}}} {
  gpu.module @lost_kernel_module {
  }
}

// -----

module attributes {ggemm.manifests = {two_kernel = {entry = "two_kernel"}}} {
  // expected-error @+1 {{expects one object, got 2}}
  gpu.binary @two_kernel_module [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "a">,
                                 #gpu.object<#nvvm.target<chip = "sm_90">, assembly = "b">]
}

// -----

module attributes {ggemm.manifests = {llvm_kernel = {entry = "llvm_kernel"}}} {
  // expected-error @+1 {{expects PTX (format=isa) or cubin (format=bin) objects}}
  gpu.binary @llvm_kernel_module [#gpu.object<#nvvm.target<chip = "sm_90a">, offload = "BC">]
}

// -----

// The manifest is read back from the IR: a value JSON cannot mirror (here
// `none`, a type) is diagnosed. It used to be a report_fatal_error.
// expected-error @+1 {{expects the manifest of kernel none_kernel to hold only bools, 64-bit integers, floats, strings, arrays and dictionaries, got none}}
module attributes {ggemm.manifests = {none_kernel = {entry = "none_kernel", nested = {flag = [none]}}}} {
  gpu.binary @none_kernel_module [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "a">]
}

// -----

// Unsigned values keep their value; one that does not fit JSON's int64_t is
// diagnosed instead of being truncated.
// expected-error @+1 {{expects the manifest of kernel wide_kernel to hold only bools, 64-bit integers, floats, strings, arrays and dictionaries, got 18446744073709551615 : ui64}}
module attributes {ggemm.manifests = {wide_kernel = {entry = "wide_kernel", small = 200 : ui8, wide = 18446744073709551615 : ui64}}} {
  gpu.binary @wide_kernel_module [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "a">]
}

// -----

// expected-error @+1 {{expects the manifest of kernel int_kernel to be a dictionary, got 1 : i64}}
module attributes {ggemm.manifests = {int_kernel = 1}} {
  gpu.binary @int_kernel_module [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "a">]
}

// -----

// Variants: the kernels ggemm.dispatch names form one bundle, named after
// the original function, manifest version 2; the shared problem and arch
// move to the top, each kernel's binary keeps its own name; no manifest of
// its own is written for a variant. Single kernels stay version 1.
// VAR-JSON: {
// VAR-JSON-NEXT: "arch": "sm_90a",
// VAR-JSON-NEXT: "dispatch": {
// VAR-JSON-NEXT: "bounds": [
// VAR-JSON-NEXT: 32
// VAR-JSON-NEXT: ],
// VAR-JSON-NEXT: "rule": "rows_per_group"
// VAR-JSON-NEXT: },
// VAR-JSON-NEXT: "format": "ggemm-bundle",
// VAR-JSON-NEXT: "problem": {
// VAR-JSON-NEXT: "op": "masked_matmul"
// VAR-JSON-NEXT: },
// VAR-JSON-NEXT: "variants": [
// VAR-JSON-NEXT: {
// VAR-JSON-NEXT: "block": 256,
// VAR-JSON-NEXT: "entry": "moe_v0_kernel",
// VAR-JSON-NEXT: "ptx": "moe_v0_kernel.ptx"
// VAR-JSON-NEXT: },
// VAR-JSON-NEXT: {
// VAR-JSON-NEXT: "block": 384,
// VAR-JSON-NEXT: "cubin": "moe_v1_kernel.cubin",
// VAR-JSON-NEXT: "entry": "moe_v1_kernel"
// VAR-JSON-NEXT: }
// VAR-JSON-NEXT: ],
// VAR-JSON-NEXT: "version": 2
// VAR-JSON-NEXT: }
// VAR-PTX0: .entry moe_v0_kernel()
// VAR-CUBIN1: 177 E L F
// VAR-FILES: moe_kernel.json
// VAR-FILES-NEXT: moe_v0_kernel.ptx
// VAR-FILES-NEXT: moe_v1_kernel.cubin
module attributes {
    ggemm.dispatch = {moe = {rule = "rows_per_group", variants = ["moe_v0", "moe_v1"],
                             bounds = [32]}},
    ggemm.manifests = {
      moe_v0_kernel = {format = "ggemm-bundle", version = 1, entry = "moe_v0_kernel",
                       block = 256, problem = {op = "masked_matmul"}},
      moe_v1_kernel = {format = "ggemm-bundle", version = 1, entry = "moe_v1_kernel",
                       block = 384, problem = {op = "masked_matmul"}}}} {
  gpu.binary @moe_v0_kernel_module [#gpu.object<#nvvm.target<chip = "sm_90a">,
                                                assembly = ".entry moe_v0_kernel()\0A">]
  gpu.binary @moe_v1_kernel_module [#gpu.object<#nvvm.target<chip = "sm_90a">, bin = "\7FELF">]
}

// -----

// expected-error @+1 {{expects ggemm.dispatch entry moe to be {rule = "rows_per_group", variants = [N >= 2 function names], bounds = [N - 1 increasing positive integers]}, got {bounds = [32, 32, 16], rule = "rows_per_group", variants = ["a", "b", "c", "d"]}}}
module attributes {
    ggemm.dispatch = {moe = {rule = "rows_per_group", variants = ["a", "b", "c", "d"],
                             bounds = [32, 32, 16]}},
    ggemm.manifests = {}} {
}

// -----

// expected-error @+1 {{expects ggemm.dispatch entry moe to be {rule = "rows_per_group", variants = [N >= 2 function names], bounds = [N - 1 increasing positive integers]}, got {bounds = [32], rule = "total_rows", variants = ["a", "b"]}}}
module attributes {
    ggemm.dispatch = {moe = {rule = "total_rows", variants = ["a", "b"], bounds = [32]}},
    ggemm.manifests = {}} {
}

// -----

// expected-error @+1 {{expects ggemm.dispatch to be a dictionary, got ["moe"]}}
module attributes {ggemm.dispatch = ["moe"], ggemm.manifests = {}} {
}

// -----

// expected-error @+1 {{expects kernel bad_v1_kernel of variant @bad_v1 of bad in ggemm.manifests (ggemm.dispatch names it)}}
module attributes {
    ggemm.dispatch = {bad = {rule = "rows_per_group", variants = ["bad_v0", "bad_v1"], bounds = [32]}},
    ggemm.manifests = {bad_v0_kernel = {entry = "bad_v0_kernel", problem = {op = "masked_matmul"}}}} {
  gpu.binary @bad_v0_kernel_module [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "a">]
}

// -----

// expected-error @+1 {{expects the variants of bad to share their problem and arch, but kernel bad_v1_kernel differs from the first}}
module attributes {
    ggemm.dispatch = {bad = {rule = "rows_per_group", variants = ["bad_v0", "bad_v1"], bounds = [32]}},
    ggemm.manifests = {bad_v0_kernel = {entry = "bad_v0_kernel", problem = {op = "masked_matmul"}},
                       bad_v1_kernel = {entry = "bad_v1_kernel", problem = {op = "batched_matmul"}}}} {
  gpu.binary @bad_v0_kernel_module [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "a">]
  gpu.binary @bad_v1_kernel_module [#gpu.object<#nvvm.target<chip = "sm_90a">, assembly = "b">]
}
