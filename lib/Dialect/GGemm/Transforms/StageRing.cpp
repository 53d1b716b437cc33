//===- StageRing.cpp - place stage rings in shared memory -----------------===//

#include "ggemm/Dialect/GGemm/Transforms/Passes.h"
#include "ggemm/Dialect/GGemm/Transforms/StageChecks.h"
#include "ggemm/Dialect/GGemm/Transforms/TileConfigHeuristics.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_GGEMMSTAGERING
#include "ggemm/Dialect/GGemm/Transforms/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;

namespace {
/// 128-byte swizzled tiles must start on 1024-byte boundaries.
constexpr int64_t kSlotAlignment = 1024;

struct StageRingPass : public ggemm::impl::GGemmStageRingBase<StageRingPass> {
  LogicalResult place(CreateRingOp ring) {
    auto launch = cast<LaunchOp>(ring->getParentOp());
    TileConfigAttr config = launch.getScheduleOp().getConfig();
    SmallVector<int64_t> stageBytes, offsets;
    int64_t bytesPerStage = 0;
    for (Type tile : ring.getRing().getType().getTiles()) {
      stageBytes.push_back(
          llvm::alignTo(cast<TileType>(tile).getNumBytes(), kSlotAlignment));
      bytesPerStage += stageBytes.back();
    }
    int64_t stages =
        std::min(config.getStages(),
                 maxStagesThatFit(bytesPerStage, kMaxSmemBytesPerCta));
    if (stages < 1)
      return ring.emitOpError()
             << "expects at least one stage of " << bytesPerStage
             << " bytes to fit in " << kMaxSmemBytesPerCta
             << " bytes of shared memory";
    int64_t offset = 0;
    for (int64_t bytes : stageBytes) {
      offsets.push_back(offset);
      offset += stages * bytes;
    }
    int64_t barrierOffset = offset;
    int64_t smemBytes = barrierOffset + 16 * stages;
    ring.setLayoutAttr(RingLayoutAttr::get(ring.getContext(), stages, offsets,
                                           stageBytes, barrierOffset,
                                           smemBytes));
    return success();
  }

  void runOnOperation() override {
    if (failed(expectScheduled(getOperation(), getArgument())))
      return signalPassFailure();
    WalkResult result = getOperation()->walk([&](LaunchOp launch) {
      auto rings = launch.getBody().front().getOps<CreateRingOp>();
      if (rings.empty()) {
        launch.emitOpError() << "has no stage ring: run ggemm-warp-specialize "
                                "before "
                             << getArgument();
        return WalkResult::interrupt();
      }
      for (CreateRingOp ring : rings)
        if (!ring.getLayoutAttr() && failed(place(ring)))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
