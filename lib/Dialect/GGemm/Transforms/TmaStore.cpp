//===- TmaStore.cpp - stage the epilogue through shared memory ------------===//

#include "ggemm/Dialect/GGemm/Transforms/Passes.h"
#include "ggemm/Dialect/GGemm/Transforms/StageChecks.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_GGEMMTMASTORE
#include "ggemm/Dialect/GGemm/Transforms/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;

namespace {
struct TmaStorePass : public ggemm::impl::GGemmTmaStoreBase<TmaStorePass> {
  using Base::Base;

  /// Stages the store of `roles`' consumers when it qualifies (see the
  /// pass description); returns whether it did.
  bool stage(LaunchOp launch, WarpSpecializeOp roles, StoreTileOp store) {
    if (store.getTransposed() || store.getStagingAttr())
      return false;
    // Scattered rows go out one TMA store per row; adds into y (atomic or
    // not) read y element by element and keep the direct stores.
    EpilogueAttr epilogue = store.getEpilogueAttr();
    bool scatter = bool(store.getScatter());
    if (scatter && epilogue && epilogue.getAccumulate())
      return false;
    MemRefType yType = store.getY().getType();
    int64_t elemBytes = getElementBytes(yType.getElementType());
    // An e4m3 y (with its y_scale): a box of 128 columns is one 1x128
    // block of each of its rows, quantised as the box is written.
    if (elemBytes != 2 && elemBytes != 4 &&
        !(elemBytes == 1 && store.getYScale()))
      return false;
    int64_t n = yType.getDimSize(1);
    if (!ShapedType::isDynamic(n) && (n * elemBytes) % 16 != 0)
      return false;
    SmallVector<int64_t> acc(store.getAcc().getType().getShape());
    // A gated tile stores half its accumulator's columns.
    if (epilogue && epilogue.isGated())
      acc[1] /= 2;
    // Every consumer warpgroup has its boxes; a ping-pong one stores all
    // rows of its own tiles (64, or 128 as two 64-row blocks in turn).
    int64_t consumers = roles.getConsumerWarpgroups();
    int64_t rows = 64 * consumers;
    if (roles.getPingpong() && (acc[0] == 64 || acc[0] == 128))
      rows = acc[0];
    int64_t cols = 128 / elemBytes;
    if (acc[0] != rows || acc[1] % cols != 0)
      return false;
    auto rings = launch.getBody().front().getOps<CreateRingOp>();
    if (rings.empty())
      return false;
    CreateRingOp ring = *rings.begin();
    int64_t stages = launch.getScheduleOp().getConfig().getStages();
    int64_t base = llvm::alignTo(
        getRingSmemBytes(ring.getRing().getType().getTiles(), stages), 1024);
    constexpr int64_t kBoxBytes = 64 * 128;
    for (int64_t boxes = buffers; boxes >= 1; --boxes) {
      if (base + consumers * boxes * kBoxBytes > kMaxSmemBytesPerCta)
        continue;
      store.setStagingAttr(
          StoreStagingAttr::get(store.getContext(), 64, cols, boxes, scatter));
      return true;
    }
    return false;
  }

  void runOnOperation() override {
    if (buffers < 1 || buffers > 4) {
      getOperation()->emitError()
          << getArgument() << ": expects buffers to be 1 to 4, got "
          << buffers.getValue();
      return signalPassFailure();
    }
    if (failed(expectScheduled(getOperation(), getArgument())))
      return signalPassFailure();
    WalkResult result = getOperation()->walk([&](LaunchOp launch) {
      auto all = launch.getBody().front().getOps<WarpSpecializeOp>();
      if (all.empty()) {
        launch.emitOpError() << "has no warp roles: run ggemm-warp-specialize "
                                "before "
                             << getArgument();
        return WalkResult::interrupt();
      }
      WarpSpecializeOp roles = *all.begin();
      Block &consumers = roles.getConsumers().front();
      SmallVector<StoreTileOp> stores;
      consumers.walk([&](StoreTileOp store) { stores.push_back(store); });
      bool staged = false;
      for (StoreTileOp store : stores)
        staged |= stage(launch, roles, store);
      if (staged && consumers.getOps<StoreDrainOp>().empty()) {
        OpBuilder b = OpBuilder::atBlockEnd(&consumers);
        if (!consumers.empty() &&
            consumers.back().hasTrait<OpTrait::IsTerminator>())
          b.setInsertionPoint(&consumers.back());
        StoreDrainOp::create(b, launch.getLoc());
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
