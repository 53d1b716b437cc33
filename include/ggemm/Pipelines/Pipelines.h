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

inline StringRef stringifyBinaryFormat(BinaryFormat format) {
  return format == BinaryFormat::isa ? "isa" : "bin";
}

/// The parser of an enum-valued pipeline option: a value it does not know is
/// an error that lists the ones it does ("expects one of isa, bin; got
/// 'cubin'"), not just "Cannot find option named".
template <typename EnumT, StringRef (*Stringify)(EnumT)>
struct ListingOptionParser : public llvm::cl::parser<EnumT> {
  using llvm::cl::parser<EnumT>::parser;

  bool parse(llvm::cl::Option &option, StringRef argName, StringRef arg,
             EnumT &value) {
    std::string known;
    for (const auto &entry : this->Values) {
      if (entry.Name == arg) {
        value = entry.V.getValue();
        return false;
      }
      known += (known.empty() ? "" : ", ") + entry.Name.str();
    }
    return option.error("expects one of " + known + "; got '" + arg + "'");
  }

  /// How the pass manager prints the option (--dump-pass-pipeline).
  static void print(llvm::raw_ostream &os, const EnumT &value) {
    os << Stringify(value);
  }
};

/// The parser of `features`: a PTX ISA version sm_90a kernels can use and
/// ptxas 13 accepts. Anything else would reach LLVM, which ignores an
/// unknown feature, falls back to PTX 6.0 and aborts on sm_90a.
struct PtxFeaturesParser : public llvm::cl::parser<std::string> {
  using llvm::cl::parser<std::string>::parser;

  bool parse(llvm::cl::Option &option, StringRef argName, StringRef arg,
             std::string &value) {
    unsigned version = 0;
    if (!arg.starts_with("+ptx") ||
        arg.drop_front(4).getAsInteger(10, version) || version < 80 ||
        version > 90)
      return option.error("expects a PTX ISA version from +ptx80 to +ptx90 "
                          "(sm_90a needs PTX 8.0), got '" +
                          arg + "'");
    value = arg.str();
    return false;
  }
};

/// The grid policy option both pipelines share.
#define GGEMM_GRID_OPTION                                                      \
  PassOptions::Option<GridPolicy,                                              \
                      ListingOptionParser<GridPolicy, stringifyGridPolicy>>    \
      grid {                                                                   \
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
  PassOptions::Option<std::string, PtxFeaturesParser> features{
      *this, "features",
      llvm::cl::desc("PTX features (PTX ISA version, +ptx80 .. +ptx90)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<BinaryFormat,
                      ListingOptionParser<BinaryFormat, stringifyBinaryFormat>>
      format{*this, "format",
             llvm::cl::desc("what each kernel is serialised to"),
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
  PassOptions::Option<bool> variants{
      *this, "variants",
      llvm::cl::desc("several tile variants per op, chosen per launch by the "
                     "rows per group, when they are unknown at compile time "
                     "(ggemm-select-config's variants)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> dependentLaunch{
      *this, "dependent-launch",
      llvm::cl::desc("programmatic dependent launch: each kernel may start "
                     "while the previous kernel of its stream finishes, and "
                     "waits for it before touching memory "
                     "(ggemm-persistent-schedule's dependent-launch)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> dependentPrefetchBytes{
      *this, "dependent-prefetch-bytes",
      llvm::cl::desc("with dependent-launch, at most this many bytes of the "
                     "first tiles' weights brought into L2 before the wait "
                     "(ggemm-persistent-schedule's dependent-prefetch-bytes; "
                     "0, the default: none)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> tmaStore{
      *this, "tma-store",
      llvm::cl::desc("stage the epilogue through shared memory and store it "
                     "by TMA where it qualifies (ggemm-tma-store)"),
      llvm::cl::init(true)};
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
/// ggemm-warp-specialize, ggemm-tma-store, ggemm-stage-ring,
/// convert-ggemm-to-nvvm, then the
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
