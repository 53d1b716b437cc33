// ggemm-serialize-kernels compiles every gpu.module to a gpu.binary, as
// upstream's gpu-module-to-binary does, the modules in parallel when the
// context is multithreaded (gemm-opt's default). The result is the same with
// and without threads: binaries in the modules' order.
// RUN: gemm-opt %s -split-input-file -ggemm-serialize-kernels -verify-diagnostics | FileCheck %s
// RUN: gemm-opt %s -split-input-file -ggemm-serialize-kernels -verify-diagnostics --mlir-disable-threading | FileCheck %s
// RUN: %if ptxas %{ gemm-opt %s -split-input-file -ggemm-serialize-kernels="format=bin" -verify-diagnostics | FileCheck %s --check-prefix=BIN %}
// RUN: not gemm-opt %s -split-input-file -ggemm-serialize-kernels="format=cubin" 2>&1 | FileCheck %s --check-prefix=FORMAT

// CHECK-LABEL: module
// CHECK-NOT: gpu.module
// CHECK: gpu.binary @first_kernel [#gpu.object<#nvvm.target<chip = "sm_90a">, properties = {{.*}}, assembly = "{{.*}}.entry first_kernel{{.*}}">]
// CHECK-NEXT: gpu.binary @second_kernel [#gpu.object<#nvvm.target<chip = "sm_90a">, properties = {{.*}}, assembly = "{{.*}}.entry second_kernel{{.*}}">]
// CHECK-NEXT: gpu.binary @third_kernel
// CHECK-NEXT: func.func @host
// BIN: gpu.binary @first_kernel [#gpu.object<#nvvm.target<chip = "sm_90a">, properties = {{.*}}, bin = "{{.*}}">]
// BIN-NEXT: gpu.binary @second_kernel [#gpu.object<#nvvm.target<chip = "sm_90a">, properties = {{.*}}, bin = "{{.*}}">]
// FORMAT: error: expects format to be one of isa, bin; got 'cubin'
module attributes {gpu.container_module} {
  gpu.module @first_kernel [#nvvm.target<chip = "sm_90a">] {
    llvm.func @first_kernel(%arg0: !llvm.ptr<1>) attributes {nvvm.kernel} {
      %0 = nvvm.read.ptx.sreg.tid.x : i32
      llvm.store %0, %arg0 : i32, !llvm.ptr<1>
      llvm.return
    }
  }
  gpu.module @second_kernel [#nvvm.target<chip = "sm_90a">] {
    llvm.func @second_kernel(%arg0: !llvm.ptr<1>) attributes {nvvm.kernel} {
      %0 = nvvm.read.ptx.sreg.ctaid.x : i32
      llvm.store %0, %arg0 : i32, !llvm.ptr<1>
      llvm.return
    }
  }
  gpu.module @third_kernel [#nvvm.target<chip = "sm_90a">] {
    llvm.func @third_kernel() attributes {nvvm.kernel} {
      llvm.return
    }
  }
  func.func @host() {
    return
  }
}

// -----

// A module without a target: nothing is compiled.
module attributes {gpu.container_module} {
  // expected-error@below {{expects a target attribute to compile for; attach one (nvvm-attach-target)}}
  gpu.module @untargeted_kernel {
  }
  gpu.module @lonely_kernel [#nvvm.target<chip = "sm_90a">] {
  }
}
