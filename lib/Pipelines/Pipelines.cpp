//===- Pipelines.cpp - ggemm-to-ptx and ggemm-to-cpu ----------------------===//
//
// Built with the pass API, not as text, so option values reach the passes
// as they are (a `}` in a path is just a character). The GPU half mirrors
// upstream's gpu-lower-to-nvvm-pipeline (FACTS.md §7), with
// ggemm-finalize-kernel-abi after convert-gpu-to-nvvm, the kernel lowering
// nested in each gpu.module and ggemm-serialize-kernels in place of
// gpu-module-to-binary, so that the kernels of a bundle compile in parallel.
//
//===----------------------------------------------------------------------===//

#include "ggemm/Pipelines/Pipelines.h"

#include "ggemm/Conversion/Passes.h"
#include "ggemm/Dialect/GGemm/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::ggemm;

/// The passes both pipelines start with: problem ops to scheduled launches.
static void addSchedulePasses(OpPassManager &pm, int64_t numSMs,
                              GridPolicy grid, bool variants,
                              bool dependentLaunch,
                              int64_t dependentPrefetchBytes = 0) {
  GGemmSelectConfigOptions selectConfig;
  selectConfig.numSMs = numSMs;
  selectConfig.variants = variants;
  pm.addPass(createGGemmSelectConfig(selectConfig));
  pm.addPass(createGGemmTile());
  pm.addPass(createGGemmSwapAB());
  GGemmPersistentScheduleOptions schedule;
  schedule.grid = grid;
  schedule.dependentLaunch = dependentLaunch;
  schedule.dependentPrefetchBytes = dependentPrefetchBytes;
  pm.addPass(createGGemmPersistentSchedule(schedule));
}

void mlir::ggemm::buildToPtxPipeline(OpPassManager &pm,
                                     const ToPtxOptions &options) {
  addSchedulePasses(pm, options.numSMs, options.grid, options.variants,
                    options.dependentLaunch, options.dependentPrefetchBytes);
  pm.addPass(createGGemmWarpSpecialize());
  if (options.tmaStore)
    pm.addPass(createGGemmTmaStore());
  pm.addPass(createGGemmStageRing());
  ConvertGGemmToNVVMOptions toNVVM;
  toNVVM.chip = options.chip;
  pm.addPass(createConvertGGemmToNVVM(toNVVM));

  // convert-ggemm-to-nvvm leaves nothing outside the gpu.modules, so the
  // lowering to the LLVM dialect runs nested in each, in parallel on a
  // multithreaded context (one gpu.module per tile variant), and once:
  // the top-level canonicalize and cse that upstream's pipeline runs
  // before the nest only repeated the nested ones here (the same PTX for
  // the kernels of bench/compile_latency.py). Only the passes anchored on
  // builtin.module stay at the top.
  pm.addPass(createConvertFuncToLLVMPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createArithToLLVMConversionPass());
  kernels.addPass(createConvertIndexToLLVMPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createGGemmFinalizeKernelAbi());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createGpuToLLVMConversionPass());
  // Upstream's gpu-module-to-binary, with the kernels (one per tile
  // variant) compiled in parallel on a multithreaded context.
  GGemmSerializeKernelsOptions binary;
  binary.format = options.format == BinaryFormat::bin ? "bin" : "isa";
  binary.toolkit = options.cudaPath;
  pm.addPass(createGGemmSerializeKernels(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (!options.bundleDir.getValue().empty()) {
    GGemmExportBundleOptions bundle;
    bundle.outputDir = options.bundleDir;
    pm.addPass(createGGemmExportBundle(bundle));
  }
}

void mlir::ggemm::buildToCpuPipeline(OpPassManager &pm,
                                     const ToCpuOptions &options) {
  // One config per op: the CPU program is called by its caller, which
  // could not choose between variant clones.
  // The CPU back end runs one launch after the other.
  addSchedulePasses(pm, options.numSMs, options.grid, /*variants=*/false,
                    /*dependentLaunch=*/false);
  ConvertGGemmToLoopsOptions toLoops;
  toLoops.numCtas = options.numCtas;
  pm.addPass(createConvertGGemmToLoops(toLoops));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::ggemm::registerPipelines() {
  PassPipelineRegistration<ToPtxOptions>(
      "ggemm-to-ptx",
      "Compile ggemm problem ops to PTX (or cubin) kernels for Hopper: "
      "select-config, tile, persistent-schedule, warp-specialize, stage-ring, "
      "convert-ggemm-to-nvvm, then the NVVM lowering and serialisation",
      buildToPtxPipeline);
  PassPipelineRegistration<ToCpuOptions>(
      "ggemm-to-cpu",
      "Lower ggemm problem ops through the same tile schedule to loops and "
      "the LLVM dialect, runnable with mlir-runner",
      buildToCpuPipeline);
}
