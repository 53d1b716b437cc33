//===- Passes.td - ggemm conversion passes ----------------*- tablegen -*-===//
#ifndef GGEMM_CONVERSION_PASSES_TD
#define GGEMM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// GGemmToLoops
//===----------------------------------------------------------------------===//

def ConvertGGemmToLoops : Pass<"convert-ggemm-to-loops", "::mlir::ModuleOp"> {
  let summary = "lower the tile program to scf/memref/arith loops (CPU reference)";
  let description = [{
    Runs the tile schedule of `ggemm.foreach_tile` on a CPU: the same tile
    config, the same tile-id to group mapping (computed from `group_rows` by
    the code the GPU kernel uses) and the same row and column masks. Only
    the hardware parts become plain loops: TMA, the mbarrier ring, wgmma and
    warp roles.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

//===----------------------------------------------------------------------===//
// GGemmToNVGPU
//===----------------------------------------------------------------------===//

def ConvertGGemmToNVGPU : Pass<"convert-ggemm-to-nvgpu", "::mlir::ModuleOp"> {
  let summary = "lower tile programs to gpu/nvgpu/nvvm kernels";
  let description = [{
    Turns every pipelined `ggemm.foreach_tile` into a `gpu.func` kernel in a
    `gpu.module`: a producer warp issues TMA loads into the shared-memory
    ring (`nvgpu.tma.async.load` completing on mbarriers), consumer
    warpgroups run `nvvm.wgmma.mma_async` on each stage and release it, and
    the epilogue stores the wgmma fragments with row masks. The kernel walks
    tile ids persistently and maps each to its group on the device. The
    kernel's parameters and launch facts are recorded in a `ggemm.manifest`
    attribute for `ggemm-export-bundle`. The enclosing host function is
    erased: the runtime launches the kernel.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "target chip (only sm_90a is supported)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def GGemmFinalizeKernelAbi
    : Pass<"ggemm-finalize-kernel-abi", "::mlir::gpu::GPUModuleOp"> {
  let summary = "pass the TMA descriptors of ggemm kernels by value";
  let description = [{
    Runs after `convert-gpu-to-nvvm`. Every `llvm.func` kernel that carries
    `ggemm.grid_constant_args` gets, on each listed `!llvm.ptr` argument,
    `llvm.byval = !llvm.array<128 x i8>`, `llvm.align = 64` and
    `nvvm.grid_constant`: the 128-byte CUtensorMap travels in the kernel's
    parameter space (CUTLASS's `__grid_constant__ const CUtensorMap`), so a
    launch needs no device copy of the descriptors and stays CUDA-graph
    safe. `gpu.func` cannot carry these attributes itself (FACTS.md §5b).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

#endif // GGEMM_CONVERSION_PASSES_TD
