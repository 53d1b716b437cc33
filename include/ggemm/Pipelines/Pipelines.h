//===- Pipelines.h - registered ggemm pass pipelines ----------*- C++ -*-===//
#ifndef GGEMM_PIPELINES_PIPELINES_H
#define GGEMM_PIPELINES_PIPELINES_H

#include "ggemm/Dialect/GGemm/IR/GGemm.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#ifndef GGEMM_DEFAULT_CUDA_PATH
#define GGEMM_DEFAULT_CUDA_PATH "/usr/local/cuda"
#endif

namespace mlir::ggemm {

/// What `ggemm-to-ptx` serialises each kernel to.
enum class BinaryFormat { isa, bin };

/// The grid policy option both pipelines share.
#define GGEMM_GRID_OPTION                                                      \
  PassOptions::Option<GridPolicy> grid {                                       \
    *this, "grid",                                                             \
        llvm::cl::desc("how many CTAs a kernel is launched with "              \
                       "(ggemm-persistent-schedule)"),                         \
        llvm::cl::init(GridPolicy::persistent),                                \
        llvm::cl::values(                                                      \
            clEnumValN(GridPolicy::persistent, "persistent",                   \
                       "one CTA per SM, striding over the tile ids"),          \
            clEnumValN(GridPolicy::tiles, "tiles", "one CTA per tile id"))     \
  }

/// Options of `ggemm-to-ptx`.
struct ToPtxOptions : public PassPipelineOptions<ToPtxOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("target chip (only sm_90a is supported)"),
      llvm::cl::init("sm_90a")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (PTX ISA version, +ptx80 .. +ptx90)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<BinaryFormat> format{
      *this, "format", llvm::cl::desc("what each kernel is serialised to"),
      llvm::cl::init(BinaryFormat::isa),
      llvm::cl::values(
          clEnumValN(BinaryFormat::isa, "isa", "PTX"),
          clEnumValN(BinaryFormat::bin, "bin", "cubin (runs ptxas)"))};
  PassOptions::Option<int64_t> numSMs{
      *this, "num-sms", llvm::cl::desc("SM count used by the heuristics"),
      llvm::cl::init(132)};
  PassOptions::Option<unsigned> optLevel{
      *this, "opt-level", llvm::cl::desc("LLVM optimisation level (0-3)"),
      llvm::cl::init(3)};
  GGEMM_GRID_OPTION;
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

/// Problem level -> PTX (or cubin) inside `gpu.binary` ops:
/// ggemm-select-config, ggemm-tile, ggemm-persistent-schedule,
/// ggemm-warp-specialize, ggemm-stage-ring, convert-ggemm-to-nvvm, then the
/// upstream NVVM lowering and serialisation (and ggemm-export-bundle).
void buildToPtxPipeline(OpPassManager &pm, const ToPtxOptions &options);

/// Options of `ggemm-to-cpu`.
struct ToCpuOptions : public PassPipelineOptions<ToCpuOptions> {
  PassOptions::Option<int64_t> numSMs{
      *this, "num-sms", llvm::cl::desc("SM count used by the heuristics"),
      llvm::cl::init(132)};
  GGEMM_GRID_OPTION;
  PassOptions::Option<int64_t> numCtas{
      *this, "num-ctas",
      llvm::cl::desc("CTAs of the simulated persistent grid"),
      llvm::cl::init(3)};
};

#undef GGEMM_GRID_OPTION

/// Problem level -> LLVM dialect runnable with `mlir-runner` on a CPU:
/// the passes of ggemm-to-ptx up to ggemm-persistent-schedule, then
/// convert-ggemm-to-loops and the upstream lowering to LLVM.
void buildToCpuPipeline(OpPassManager &pm, const ToCpuOptions &options);

/// Registers `ggemm-to-ptx` and `ggemm-to-cpu`.
void registerPipelines();

} // namespace mlir::ggemm

#endif // GGEMM_PIPELINES_PIPELINES_H
