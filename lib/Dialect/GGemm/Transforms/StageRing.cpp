//===- StageRing.cpp - place stage rings in shared memory -----------------===//

#include "ggemm/Dialect/GGemm/Transforms/Passes.h"
#include "ggemm/Dialect/GGemm/Transforms/StageChecks.h"
#include "ggemm/Dialect/GGemm/Transforms/TileConfigHeuristics.h"

#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_GGEMMSTAGERING
#include "ggemm/Dialect/GGemm/Transforms/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;

namespace {
struct StageRingPass : public ggemm::impl::GGemmStageRingBase<StageRingPass> {
  LogicalResult place(CreateRingOp ring) {
    auto launch = cast<LaunchOp>(ring->getParentOp());
    TileConfigAttr config = launch.getScheduleOp().getConfig();
    SmallVector<int64_t> stageBytes, offsets;
    ArrayRef<Type> entries = ring.getRing().getType().getTiles();
    int64_t bytesPerStage = 0;
    for (Type entry : entries) {
      stageBytes.push_back(
          llvm::alignTo(getRingSlotBytes(entry), getRingSlotAlignment(entry)));
      bytesPerStage += stageBytes.back();
    }
    // The staged epilogue's store boxes (ggemm-tma-store) go behind the
    // ring, so the ring's budget is what they leave.
    // Each consumer warpgroup has its own boxes: one per 64-row block of
    // the tile, or, with ping-pong consumers (on alternate whole tiles),
    // one per warpgroup.
    auto roles = launch.getBody().front().getOps<WarpSpecializeOp>();
    int64_t pingpongWarpgroups =
        !roles.empty() && (*roles.begin()).getPingpong()
            ? (*roles.begin()).getConsumerWarpgroups()
            : 0;
    int64_t stagingBytes = 0;
    launch.getBody().walk([&](StoreTileOp store) {
      if (StoreStagingAttr staging = store.getStagingAttr())
        stagingBytes = std::max(
            stagingBytes,
            staging.getBuffers() * staging.getBoxBytes() *
                (pingpongWarpgroups ? pingpongWarpgroups
                                    : store.getAcc().getType().getShape()[0] /
                                          staging.getRows()));
    });
    // A split-K cluster's partials (ggemm.split_k_sum): split_k - 1
    // accumulators in rank 0, then its full and empty mbarriers.
    int64_t splitKBytes = 0;
    bool lastTileOnly = true;
    launch.getBody().walk([&](SplitKSumOp sum) {
      AccumulatorType acc = sum.getPartial().getType();
      splitKBytes =
          (config.getSplitK() - 1) * acc.getShape()[0] * acc.getShape()[1] * 4 +
          16;
      lastTileOnly &= matchPattern(sum.getMore(), m_Zero());
    });
    auto stagesWithin = [&](int64_t reserved) {
      return std::min(
          config.getStages(),
          maxStagesThatFit(bytesPerStage,
                           kMaxSmemBytesPerCta -
                               (stagingBytes ? stagingBytes + 1024 : 0) -
                               reserved));
    };
    // Where each CTA's split tile is its last (split_k_tail), the partials
    // may overlay rank 0's ring, idle by then; the mbarriers go elsewhere.
    // That costs no stages where the ring's tile buffers hold the partials.
    int64_t stages = stagesWithin(splitKBytes ? splitKBytes + 16 : 0);
    bool overlay = false;
    if (splitKBytes && lastTileOnly && config.getSplitKTail()) {
      int64_t ringBytes = 0;
      // Reserved: the mbarriers and the lowering's word (32 bytes) and
      // their 16-byte alignment.
      int64_t overlayStages = stagesWithin(32 + 16);
      for (auto [entry, bytes] : llvm::zip(entries, stageBytes))
        ringBytes = llvm::alignTo(ringBytes, getRingSlotAlignment(entry)) +
                    overlayStages * bytes;
      if (splitKBytes - 16 <= ringBytes) {
        overlay = true;
        stages = overlayStages;
      }
    }
    if (stages < 1)
      return ring.emitOpError()
             << "expects at least one stage of " << bytesPerStage
             << " bytes to fit in " << kMaxSmemBytesPerCta
             << " bytes of shared memory";
    // Each entry's slots side by side; slot sizes are multiples of their
    // alignment, so only the start of each area needs aligning (the tiles
    // come first in rings ggemm-warp-specialize builds, needing no padding).
    int64_t offset = 0;
    for (auto [entry, bytes] : llvm::zip(entries, stageBytes)) {
      offset = llvm::alignTo(offset, getRingSlotAlignment(entry));
      offsets.push_back(offset);
      offset += stages * bytes;
    }
    offset = llvm::alignTo(offset, 8);
    int64_t barrierOffset = offset;
    int64_t smemBytes = barrierOffset + 16 * stages;
    int64_t stagingOffset = -1;
    if (stagingBytes) {
      stagingOffset = llvm::alignTo(smemBytes, 1024);
      smemBytes = stagingOffset + stagingBytes;
    }
    int64_t splitKOffset = -1, splitKBarriers = -1;
    if (overlay) {
      splitKOffset = offsets.front();
      splitKBytes -= 16;
      // The two mbarriers and a word the consumers read back.
      splitKBarriers = llvm::alignTo(smemBytes, 16);
      smemBytes = splitKBarriers + 32;
    } else if (splitKBytes) {
      splitKOffset = llvm::alignTo(smemBytes, 16);
      smemBytes = splitKOffset + splitKBytes;
    }
    ring.setLayoutAttr(RingLayoutAttr::get(
        ring.getContext(), stages, offsets, stageBytes, barrierOffset,
        smemBytes, stagingOffset, stagingBytes, splitKOffset, splitKBytes,
        splitKBarriers));
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
