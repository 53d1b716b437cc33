//===- PersistentSchedule.cpp - tile loops -> launches over CTAs ----------===//
//
// A ggemm.foreach_tile says which tiles there are; this pass says which CTA
// computes which: the loop becomes a ggemm.launch whose body maps tile ids
// to tiles with ggemm.map_tile, either striding over them (a persistent
// grid, one CTA per SM) or taking the CTA's own id (one CTA per tile).
//
//===----------------------------------------------------------------------===//

#include "ggemm/Dialect/GGemm/Transforms/Passes.h"
#include "ggemm/Dialect/GGemm/Transforms/StageChecks.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_GGEMMPERSISTENTSCHEDULE
#include "ggemm/Dialect/GGemm/Transforms/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;

namespace {

/// Moves the body of `loop` in front of `before`, its block arguments
/// replaced by the results of `tile`.
void inlineTileBody(RewriterBase &rewriter, ForeachTileOp loop, MapTileOp tile,
                    Operation *before) {
  Block &body = loop.getBody().front();
  rewriter.eraseOp(body.getTerminator());
  rewriter.inlineBlockBefore(&body, before, tile.getResults());
}

LogicalResult schedule(RewriterBase &rewriter, ForeachTileOp loop,
                       GridPolicy grid, bool dependentLaunch) {
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  auto sched = TileScheduleOp::create(
      rewriter, loc, ScheduleType::get(rewriter.getContext()),
      loop.getRowMappingAttr(), loop.getGroupRows(), loop.getWeightIndices(),
      loop.getNumWeights(), loop.getNumGroups(), loop.getRowsPerGroup(),
      loop.getNumRows(), loop.getNumCols(), loop.getConfigAttr());
  auto launch = LaunchOp::create(
      rewriter, loc, sched, GridPolicyAttr::get(rewriter.getContext(), grid),
      dependentLaunch ? rewriter.getUnitAttr() : UnitAttr());
  Block *body = rewriter.createBlock(
      &launch.getBody(), {}, {rewriter.getIndexType(), rewriter.getIndexType()},
      {loc, loc});
  Value cta = launch.getCtaArg(), numCtas = launch.getNumCtasArg();
  Value total = TileCountOp::create(rewriter, loc, sched);
  TileConfigAttr config = loop.getConfigAttr();
  if (config.getClusterM() > 1) {
    // A cluster's CTAs walk the (cluster) tiles together, each taking its
    // rank's rows of them; the runtime launches whole clusters.
    Value size =
        arith::ConstantIndexOp::create(rewriter, loc, config.getClusterM());
    Value cluster = arith::DivUIOp::create(rewriter, loc, cta, size);
    Value rank = arith::RemUIOp::create(rewriter, loc, cta, size);
    Value clusters = arith::DivUIOp::create(rewriter, loc, numCtas, size);
    auto tiles = scf::ForOp::create(rewriter, loc, cluster, total, clusters);
    rewriter.setInsertionPointToStart(tiles.getBody());
    auto tile =
        MapTileOp::create(rewriter, loc, sched, tiles.getInductionVar(), rank);
    inlineTileBody(rewriter, loop, tile, tiles.getBody()->getTerminator());
  } else if (grid == GridPolicy::persistent) {
    auto tiles = scf::ForOp::create(rewriter, loc, cta, total, numCtas);
    rewriter.setInsertionPointToStart(tiles.getBody());
    auto tile =
        MapTileOp::create(rewriter, loc, sched, tiles.getInductionVar());
    inlineTileBody(rewriter, loop, tile, tiles.getBody()->getTerminator());
  } else {
    Value hasTile = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ult, cta, total);
    auto tileIf = scf::IfOp::create(rewriter, loc, hasTile, false);
    rewriter.setInsertionPointToStart(tileIf.thenBlock());
    auto tile = MapTileOp::create(rewriter, loc, sched, cta);
    inlineTileBody(rewriter, loop, tile, tileIf.thenBlock()->getTerminator());
  }
  rewriter.setInsertionPointToEnd(body);
  YieldOp::create(rewriter, loc);
  rewriter.eraseOp(loop);
  return success();
}

struct PersistentSchedulePass
    : public ggemm::impl::GGemmPersistentScheduleBase<PersistentSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(expectTiled(getOperation(), getArgument())))
      return signalPassFailure();
    SmallVector<ForeachTileOp> loops;
    getOperation()->walk([&](ForeachTileOp loop) { loops.push_back(loop); });
    IRRewriter rewriter(&getContext());
    for (ForeachTileOp loop : loops) {
      TileConfigAttr config = loop.getConfigAttr();
      if (config.getClusterN() > 1) {
        loop.emitOpError() << "expects cluster_n = 1: clusters share weight "
                              "tiles between CTAs along m (cluster_m), got "
                              "cluster_n = "
                           << config.getClusterN();
        return signalPassFailure();
      }
      if (config.getClusterM() > 1 && grid != GridPolicy::persistent) {
        loop.emitOpError() << "expects grid=persistent with cluster_m = "
                           << config.getClusterM()
                           << ": a cluster's CTAs walk their tiles together";
        return signalPassFailure();
      }
      if (failed(schedule(rewriter, loop, grid, dependentLaunch)))
        return signalPassFailure();
    }
  }
};
} // namespace
