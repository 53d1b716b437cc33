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
    config, the same tile-id to group mapping (`TileSchedule`, computed from
    `group_rows` by the code the GPU kernel uses), the same row and column
    masks and the same epilogue arithmetic. Each tile loop becomes the loop
    of a persistent kernel over a simulated grid of `num-ctas` CTAs, each
    striding over the tile ids as a CTA of the GPU kernel does:

    ```mlir
    scf.for %cta = %c0 to %num_ctas step %c1 {
      %total = ...                       // TileSchedule::totalTiles
      scf.for %t = %cta to %total step %num_ctas {
        ...                              // TileSchedule::mapTile, the body
      }
    }
    ```

    A tile loop without `persistent` runs one tile id per CTA. Only the
    hardware parts become plain loops: `ggemm.tile_mma` fills an f32
    `memref.alloca` accumulator over i, j and the k-blocks, with TMA's zero
    fill written out (rows at or past `num_rows`, columns at or past `N` and
    the K tail contribute zero); `ggemm.tile_store` applies the epilogue to
    the rows `[row, min(row + block_m, row_end))` and columns `[col, min(col
    + block_n, N))` and writes nothing else. The mbarrier ring, wgmma and
    the warp roles have no CPU counterpart. Other ops of the function are
    left as they are.
  }];
  let options = [
    Option<"numCtas", "num-ctas", "int64_t", /*default=*/"3",
           "CTAs of the simulated persistent grid; a small count makes each "
           "CTA walk several tile ids (the grid-stride path)">,
  ];
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
    Turns every pipelined `ggemm.foreach_tile` into a warp-specialised,
    persistent `gpu.func` kernel in its own `gpu.module`: one elected thread
    of the producer warpgroup issues TMA loads
    (`nvvm.cp.async.bulk.tensor.shared.cluster.global`) into the
    shared-memory ring, completing on mbarriers; consumer warpgroups chain
    `nvvm.wgmma.mma_async` over each stage and release it; the epilogue
    stores the wgmma fragments with row and column masks. The kernel walks
    tile ids persistently and maps each to its group on the device
    (`TileSchedule`). Each kernel's parameters and launch facts are recorded
    as an entry of the module's `ggemm.manifests` dictionary for
    `ggemm-export-bundle`. The enclosing host function is erased: the
    runtime launches the kernel.
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
