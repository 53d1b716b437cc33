//===- GGemmToLoops.cpp - tile programs -> CPU loops ----------------------===//
#include "ggemm/Conversion/Passes.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_CONVERTGGEMMTOLOOPS
#include "ggemm/Conversion/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;

namespace {
struct ConvertGGemmToLoopsPass
    : public ggemm::impl::ConvertGGemmToLoopsBase<ConvertGGemmToLoopsPass> {
  void runOnOperation() override {
    getOperation().emitError("convert-ggemm-to-loops: not written yet");
    signalPassFailure();
  }
};
} // namespace
