//===- Pipeline.cpp - plan the shared-memory operand ring -----------------===//

#include "ggemm/Dialect/GGemm/Transforms/Passes.h"
#include "ggemm/Dialect/GGemm/Transforms/TileConfigHeuristics.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_GGEMMPIPELINE
#include "ggemm/Dialect/GGemm/Transforms/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;

namespace {
struct PipelinePass : public ggemm::impl::GGemmPipelineBase<PipelinePass> {
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([&](TileMmaOp op) {
      if (op.getPipelineAttr())
        return WalkResult::advance();
      TileConfigAttr config = op.getConfig();
      int64_t bytes = getElementBytes(op.getX().getType().getElementType());
      // 128-byte swizzled tiles must start on 1024-byte boundaries; whole
      // tiles of 8-row swizzle atoms keep every stage aligned.
      int64_t aStage =
          llvm::alignTo(config.getBlockM() * config.getBlockK() * bytes, 1024);
      int64_t bStage =
          llvm::alignTo(config.getBlockN() * config.getBlockK() * bytes, 1024);
      int64_t stages =
          std::min(config.getStages(),
                   maxStagesThatFit(aStage + bStage, kMaxSmemBytesPerCta));
      if (stages < 1) {
        op.emitOpError() << "expects at least one stage of " << aStage + bStage
                         << " bytes to fit in " << kMaxSmemBytesPerCta
                         << " bytes of shared memory";
        return WalkResult::interrupt();
      }
      int64_t aOffset = 0;
      int64_t bOffset = aOffset + stages * aStage;
      int64_t barrierOffset = bOffset + stages * bStage;
      int64_t smemBytes = barrierOffset + 16 * stages;
      op.setPipelineAttr(PipelineAttr::get(op.getContext(), stages, aStage,
                                           bStage, aOffset, bOffset,
                                           barrierOffset, smemBytes));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
