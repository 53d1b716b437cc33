// ggemm-finalize-kernel-abi: after convert-gpu-to-nvvm, the TMA descriptor
// arguments listed in `ggemm.grid_constant_args` are passed by value in the
// kernel's parameter space (CUTLASS's __grid_constant__ const CUtensorMap).
// RUN: gemm-opt %s -split-input-file --pass-pipeline="builtin.module(gpu.module(ggemm-finalize-kernel-abi))" -verify-diagnostics | FileCheck %s

// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.func @kernel(
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr<1>, %{{[a-z0-9]+}}: i64)
// The marker is consumed.
// CHECK-SAME: attributes {nvvm.kernel, nvvm.maxntid = array<i32: 384, 1, 1>} {
// Functions without the attribute are left alone.
// CHECK: llvm.func @helper(%{{[a-z0-9]+}}: !llvm.ptr) {
gpu.module @kernels {
  llvm.func @kernel(%a_desc: !llvm.ptr, %b_desc: !llvm.ptr, %y: !llvm.ptr<1>, %n: i64)
      attributes {ggemm.grid_constant_args = array<i64: 0, 1>, nvvm.kernel,
                  nvvm.maxntid = array<i32: 384, 1, 1>} {
    llvm.return
  }
  llvm.func @helper(%p: !llvm.ptr) {
    llvm.return
  }
}

// -----

// Only the listed arguments change.
// CHECK-LABEL: gpu.module @one
// CHECK: llvm.func @kernel(%{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
gpu.module @one {
  llvm.func @kernel(%p: !llvm.ptr, %desc: !llvm.ptr)
      attributes {ggemm.grid_constant_args = array<i64: 1>, nvvm.kernel} {
    llvm.return
  }
}

// -----

gpu.module @not_a_pointer {
  // expected-error @+1 {{'llvm.func' op expects argument 1 to be a pointer to a TMA descriptor}}
  llvm.func @kernel(%desc: !llvm.ptr, %n: i64)
      attributes {ggemm.grid_constant_args = array<i64: 0, 1>, nvvm.kernel} {
    llvm.return
  }
}

// -----

gpu.module @out_of_range {
  // expected-error @+1 {{'llvm.func' op expects argument index 2 to be in [0, 2)}}
  llvm.func @kernel(%a: !llvm.ptr, %b: !llvm.ptr)
      attributes {ggemm.grid_constant_args = array<i64: 2>, nvvm.kernel} {
    llvm.return
  }
}

// -----

// A negative index is out of range too (it used to reach getArgument(-1)).
gpu.module @negative {
  // expected-error @+1 {{'llvm.func' op expects argument index -1 to be in [0, 1)}}
  llvm.func @kernel(%desc: !llvm.ptr)
      attributes {ggemm.grid_constant_args = array<i64: -1>} {
    llvm.return
  }
}

// -----

gpu.module @no_arguments {
  // expected-error @+1 {{'llvm.func' op expects argument index 0 to be in [0, 0)}}
  llvm.func @kernel() attributes {ggemm.grid_constant_args = array<i64: 0>} {
    llvm.return
  }
}

// -----

// A declaration has no entry block to read the argument types from (found
// by the fuzzer: the pass crashed on it); its signature gets the attributes.
// CHECK-LABEL: gpu.module @declaration
// CHECK: llvm.func @kernel(!llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, i64)
// CHECK-SAME: attributes {nvvm.kernel}
// CHECK-NOT: ggemm.grid_constant_args
gpu.module @declaration {
  llvm.func @kernel(!llvm.ptr, i64)
      attributes {ggemm.grid_constant_args = array<i64: 0>, nvvm.kernel}
}

// -----

gpu.module @declaration_not_a_pointer {
  // expected-error @+1 {{'llvm.func' op expects argument 1 to be a pointer to a TMA descriptor}}
  llvm.func @kernel(!llvm.ptr, i64)
      attributes {ggemm.grid_constant_args = array<i64: 1>, nvvm.kernel}
}
