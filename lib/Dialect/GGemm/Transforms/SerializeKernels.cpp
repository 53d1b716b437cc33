//===- SerializeKernels.cpp - gpu.module to gpu.binary in parallel --------===//
//
// Upstream's gpu-module-to-binary serialises the gpu.modules of a module one
// after the other. Each serialisation is independent (its own LLVMContext,
// target machine and temporary files) and nearly all of a compile's time, and
// a problem op with tile variants has one gpu.module per variant, so this
// pass runs them on the context's thread pool and builds the gpu.binary ops
// afterwards, on the calling thread, in the modules' order.
//
//===----------------------------------------------------------------------===//

#include "ggemm/Dialect/GGemm/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/StringSwitch.h"

#if defined(__linux__)
#include <sys/personality.h>
#endif

namespace mlir::ggemm {
#define GEN_PASS_DEF_GGEMMSERIALIZEKERNELS
#include "ggemm/Dialect/GGemm/Transforms/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;

namespace {
/// ptxas 13.0's code depends on where its memory lands: the same PTX,
/// assembled ten times, gave up to five different .text sections for some
/// kernels (a bf16 128x256 tile with an epilogue, a K-ragged one), and the
/// same one every time with address-space randomisation off (`setarch -R`;
/// bench/NOTES.md v26). On Linux the personality is per thread and the ptxas
/// a serialiser spawns inherits it, so this guard turns randomisation off
/// for the calling thread's children while it serialises, then restores the
/// thread's personality: a kernel's cubin is a function of its IR.
class DeterministicPtxas {
public:
  DeterministicPtxas() {
#if defined(__linux__)
    int current = personality(0xffffffff);
    if (current != -1 && !(current & ADDR_NO_RANDOMIZE) &&
        personality(current | ADDR_NO_RANDOMIZE) != -1)
      previous = current;
#endif
  }
  ~DeterministicPtxas() {
#if defined(__linux__)
    if (previous != -1)
      personality(previous);
#endif
  }
  DeterministicPtxas(const DeterministicPtxas &) = delete;
  DeterministicPtxas &operator=(const DeterministicPtxas &) = delete;

private:
  int previous = -1;
};

struct GGemmSerializeKernels
    : public ggemm::impl::GGemmSerializeKernelsBase<GGemmSerializeKernels> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<gpu::CompilationTarget> compilationTarget =
        llvm::StringSwitch<std::optional<gpu::CompilationTarget>>(format)
            .Case("isa", gpu::CompilationTarget::Assembly)
            .Case("bin", gpu::CompilationTarget::Binary)
            .Default(std::nullopt);
    if (!compilationTarget) {
      module.emitError() << "expects format to be one of isa, bin; got '"
                         << format << "'";
      return signalPassFailure();
    }

    SmallVector<gpu::GPUModuleOp> kernels(module.getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp kernel : kernels) {
      if (!kernel.getTargetsAttr() || kernel.getTargetsAttr().empty()) {
        kernel.emitError("expects a target attribute to compile for; "
                         "attach one (nvvm-attach-target)");
        return signalPassFailure();
      }
      for (Attribute target : kernel.getTargetsAttr())
        if (!isa<gpu::TargetAttrInterface>(target)) {
          kernel.emitError() << "expects target attributes that can "
                                "serialise a module; got "
                             << target;
          return signalPassFailure();
        }
    }

    // Built here, not lazily as upstream does: the serialisers may ask for
    // it from several threads.
    SymbolTable symbols(module);
    auto getSymbols = [&]() -> SymbolTable * { return &symbols; };
    gpu::TargetOptions options(toolkit, /*librariesToLink=*/{},
                               /*cmdOptions=*/{}, /*elfSection=*/{},
                               *compilationTarget, getSymbols);

    // Serialising writes attributes on the module serialised (the back
    // end's times) and creates attributes in the context, both safe from
    // the pool's threads; the gpu.binary ops are created afterwards.
    SmallVector<SmallVector<Attribute>> objects(kernels.size());
    auto serialize = [&](size_t index) -> LogicalResult {
      gpu::GPUModuleOp kernel = kernels[index];
      DeterministicPtxas deterministic;
      for (Attribute attr : kernel.getTargetsAttr()) {
        auto target = cast<gpu::TargetAttrInterface>(attr);
        std::optional<SmallVector<char, 0>> serialized =
            target.serializeToObject(kernel, options);
        if (!serialized)
          return kernel.emitError("failed to serialise the module for ")
                 << attr;
        Attribute object = target.createObject(kernel, *serialized, options);
        if (!object)
          return kernel.emitError("failed to create the object for ") << attr;
        objects[index].push_back(object);
      }
      return success();
    };
    if (failed(failableParallelForEachN(&getContext(), 0, kernels.size(),
                                        serialize)))
      return signalPassFailure();

    OpBuilder builder(&getContext());
    for (auto [kernel, kernelObjects] : llvm::zip_equal(kernels, objects)) {
      auto handler =
          dyn_cast_or_null<gpu::OffloadingLLVMTranslationAttrInterface>(
              kernel.getOffloadingHandlerAttr());
      builder.setInsertionPointAfter(kernel);
      gpu::BinaryOp::create(builder, kernel.getLoc(), kernel.getName(), handler,
                            builder.getArrayAttr(kernelObjects));
      kernel->erase();
    }
  }
};
} // namespace
