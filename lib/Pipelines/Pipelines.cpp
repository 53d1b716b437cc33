//===- Pipelines.cpp - ggemm-to-ptx and ggemm-to-cpu ----------------------===//
//
// The pipelines are spelled as textual pass pipelines so that the exact
// sequence is visible in one place (and in `--dump-pass-pipeline`). The GPU
// half mirrors upstream's gpu-lower-to-nvvm-pipeline (FACTS.md §7), with
// ggemm-finalize-kernel-abi inserted after convert-gpu-to-nvvm.
//
//===----------------------------------------------------------------------===//

#include "ggemm/Pipelines/Pipelines.h"

#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// Adds a textual pipeline to `pm`; the upstream passes it names are
/// registered on first use so embedders need not register them.
static void addTextualPipeline(OpPassManager &pm, StringRef pipeline) {
  static bool registered = [] {
    mlir::registerAllPasses();
    return true;
  }();
  (void)registered;
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (failed(parsePassPipeline(pipeline, pm, os)))
    llvm::report_fatal_error(llvm::Twine("ggemm: bad internal pipeline: ") +
                             errors);
}

void mlir::ggemm::buildToPtxPipeline(OpPassManager &pm,
                                     const ToPtxOptions &options) {
  std::string pipeline = llvm::formatv(
      "ggemm-select-config{{num-sms={0}},ggemm-tile,ggemm-pipeline,"
      "convert-ggemm-to-nvgpu{{chip={1}},"
      "convert-nvgpu-to-nvvm,convert-scf-to-cf,convert-nvvm-to-llvm,"
      "convert-func-to-llvm,expand-strided-metadata,"
      "nvvm-attach-target{{chip={1} features={2} O={3}},"
      "lower-affine,convert-arith-to-llvm,convert-index-to-llvm,"
      "canonicalize,cse,"
      "gpu.module(convert-gpu-to-nvvm,ggemm-finalize-kernel-abi,"
      "canonicalize,cse,reconcile-unrealized-casts),"
      "gpu-to-llvm,gpu-module-to-binary{{format={4} toolkit={5}},"
      "convert-math-to-llvm,canonicalize,cse,reconcile-unrealized-casts",
      options.numSMs.getValue(), options.chip.getValue(),
      options.features.getValue(), options.optLevel.getValue(),
      options.format.getValue(), options.cudaPath.getValue());
  if (!options.bundleDir.getValue().empty())
    pipeline += llvm::formatv(",ggemm-export-bundle{{dir={0}}",
                              options.bundleDir.getValue())
                    .str();
  addTextualPipeline(pm, pipeline);
}

void mlir::ggemm::buildToCpuPipeline(OpPassManager &pm,
                                     const ToCpuOptions &options) {
  std::string pipeline = llvm::formatv(
      "ggemm-select-config{{num-sms={0}},ggemm-tile,convert-ggemm-to-loops,"
      "expand-strided-metadata,lower-affine,convert-math-to-libm,"
      "convert-scf-to-cf,finalize-memref-to-llvm,convert-math-to-llvm,"
      "convert-arith-to-llvm,"
      "convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
      "convert-vector-to-llvm,reconcile-unrealized-casts",
      options.numSMs.getValue());
  addTextualPipeline(pm, pipeline);
}

void mlir::ggemm::registerPipelines() {
  PassPipelineRegistration<ToPtxOptions>(
      "ggemm-to-ptx",
      "Compile ggemm problem ops to PTX (or cubin) kernels for Hopper: "
      "select-config, tile, pipeline, convert-ggemm-to-nvgpu, then the "
      "NVVM lowering and serialisation",
      buildToPtxPipeline);
  PassPipelineRegistration<ToCpuOptions>(
      "ggemm-to-cpu",
      "Lower ggemm problem ops through the same tile schedule to loops and "
      "the LLVM dialect, runnable with mlir-runner",
      buildToCpuPipeline);
}
