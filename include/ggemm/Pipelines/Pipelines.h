//===- Pipelines.h - registered ggemm pass pipelines ----------*- C++ -*-===//
#ifndef GGEMM_PIPELINES_PIPELINES_H
#define GGEMM_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#ifndef GGEMM_DEFAULT_CUDA_PATH
#define GGEMM_DEFAULT_CUDA_PATH "/usr/local/cuda"
#endif

namespace mlir::ggemm {

/// Options of `ggemm-to-ptx`.
struct ToPtxOptions : public PassPipelineOptions<ToPtxOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("target chip"), llvm::cl::init("sm_90a")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features (PTX ISA version)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu-module-to-binary format: isa (PTX) or bin (cubin, "
                     "needs ptxas)"),
      llvm::cl::init("isa")};
  PassOptions::Option<int64_t> numSMs{
      *this, "num-sms", llvm::cl::desc("SM count used by the heuristics"),
      llvm::cl::init(132)};
  PassOptions::Option<int> optLevel{*this, "opt-level",
                                    llvm::cl::desc("LLVM optimisation level"),
                                    llvm::cl::init(3)};
  PassOptions::Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit: libdevice (math functions in epilogues) "
                     "and ptxas for format=bin"),
      llvm::cl::init(GGEMM_DEFAULT_CUDA_PATH)};
  PassOptions::Option<std::string> bundleDir{
      *this, "bundle-dir",
      llvm::cl::desc("if set, write each kernel bundle into this directory"),
      llvm::cl::init("")};
};

/// Problem level -> PTX (or cubin) inside `gpu.binary` ops.
void buildToPtxPipeline(OpPassManager &pm, const ToPtxOptions &options);

/// Options of `ggemm-to-cpu`.
struct ToCpuOptions : public PassPipelineOptions<ToCpuOptions> {
  PassOptions::Option<int64_t> numSMs{
      *this, "num-sms", llvm::cl::desc("SM count used by the heuristics"),
      llvm::cl::init(132)};
};

/// Problem level -> LLVM dialect runnable with `mlir-runner` on a CPU.
void buildToCpuPipeline(OpPassManager &pm, const ToCpuOptions &options);

/// Registers `ggemm-to-ptx` and `ggemm-to-cpu`.
void registerPipelines();

} // namespace mlir::ggemm

#endif // GGEMM_PIPELINES_PIPELINES_H
