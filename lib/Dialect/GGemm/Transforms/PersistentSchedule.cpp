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
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

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

/// The weight load of `loop`'s K loop whose tiles can be named without
/// device data, or null: one group (whose every column tile the product
/// reads, whatever its rows), no weight indices, static N, no clusters, and
/// one plain load of a weight batch (no gather, split or K bounds) indexed
/// by the group, the column, constants and the K loop (a constant 0..KB
/// trip) only.
LoadTileOp prefetchableWeightLoad(ForeachTileOp loop) {
  if (loop.getConfigAttr().getClusterM() > 1 ||
      loop.getConfigAttr().getSplitK() > 1 || loop.getWeightIndices() ||
      getConstantIntValue(loop.getNumGroups()) != std::optional<int64_t>(1) ||
      !getConstantIntValue(loop.getNumCols()))
    return {};
  Block &body = loop.getBody().front();
  LoadTileOp weights;
  WalkResult walk = loop.walk([&](LoadTileOp load) {
    if (load.getSource().getType().getRank() != 3)
      return WalkResult::advance();
    if (weights)
      return WalkResult::interrupt();
    weights = load;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted() || !weights || weights.getGather() ||
      weights.getSplit() || weights.getKEnd() || weights.getKBegin())
    return {};
  auto kLoop = dyn_cast<scf::ForOp>(weights->getParentOp());
  if (!kLoop || kLoop->getParentOp() != loop ||
      getConstantIntValue(kLoop.getLowerBound()) != std::optional<int64_t>(0) ||
      getConstantIntValue(kLoop.getStep()) != std::optional<int64_t>(1) ||
      !getConstantIntValue(kLoop.getUpperBound()))
    return {};
  // The indices may use the group and the column, not the rows.
  SmallVector<Value> work(weights.getIndices());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (v == body.getArgument(1) || v == body.getArgument(2))
      return {};
    Operation *def = v.getDefiningOp();
    if (!def || !loop->isAncestor(def))
      continue;
    if (!isPure(def) || def->getNumRegions())
      return {};
    llvm::append_range(work, def->getOperands());
  }
  return weights;
}

/// Before the wait of a dependent launch: CTA c below the column tile count
/// prefetches the first K blocks of column tile c's weights into L2
/// (prefetchableWeightLoad's), as many as keep the whole within
/// `budgetBytes`. Between them the CTAs bring in the first blocks of every
/// column tile, each once; L2 being shared, which CTA then reads them does
/// not matter (with one row tile, tile c is column tile c in either
/// raster).
void prefetchFirstWeights(RewriterBase &rewriter, ForeachTileOp loop, Value cta,
                          int64_t budgetBytes) {
  LoadTileOp weights = prefetchableWeightLoad(loop);
  if (!weights || budgetBytes <= 0)
    return;
  Location loc = weights.getLoc();
  auto kLoop = cast<scf::ForOp>(weights->getParentOp());
  int64_t kBlocks = *getConstantIntValue(kLoop.getUpperBound());
  int64_t blockN = loop.getConfigAttr().getBlockN();
  int64_t colTiles =
      llvm::divideCeil(*getConstantIntValue(loop.getNumCols()), blockN);
  int64_t tileBytes = weights.getType().getNumBytes();
  int64_t blocks = std::min(kBlocks, budgetBytes / (colTiles * tileBytes));
  if (blocks <= 0 || kBlocks <= 0)
    return;
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
  };
  Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                                      cta, cst(colTiles));
  auto ifFirst = scf::IfOp::create(rewriter, loc, first, false);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(ifFirst.thenBlock());
  Block &body = loop.getBody().front();
  IRMapping mapping;
  mapping.map(body.getArgument(0), cst(0));
  mapping.map(body.getArgument(3),
              arith::MulIOp::create(rewriter, loc, cta, cst(blockN)));
  Value lower = cst(0), upper = cst(blocks), step = cst(1);
  auto blocksLoop = scf::ForOp::create(rewriter, loc, lower, upper, step);
  rewriter.setInsertionPointToStart(blocksLoop.getBody());
  mapping.map(kLoop.getInductionVar(), blocksLoop.getInductionVar());
  // The indices' arithmetic (K offsets, the weight-scale column), cloned
  // in order; what is defined outside the tile loop is used as it is.
  std::function<Value(Value)> clone = [&](Value v) -> Value {
    if (Value mapped = mapping.lookupOrNull(v))
      return mapped;
    Operation *def = v.getDefiningOp();
    if (!def || !loop->isAncestor(def))
      return v;
    for (Value operand : def->getOperands())
      clone(operand);
    rewriter.clone(*def, mapping);
    return mapping.lookup(v);
  };
  SmallVector<Value> indices;
  for (Value index : weights.getIndices())
    indices.push_back(clone(index));
  PrefetchTileOp::create(rewriter, loc, weights.getSource(), indices,
                         TypeAttr::get(weights.getType()));
}

/// The K loop and the store of a tile body just inlined into `tiles`, for
/// split_k: one ggemm.store_tile of the result of an scf.for from 0 by 1.
FailureOr<std::pair<scf::ForOp, StoreTileOp>> matchSplitBody(ForeachTileOp loop,
                                                             scf::ForOp tiles) {
  SmallVector<StoreTileOp> stores;
  for (auto store : tiles.getBody()->getOps<StoreTileOp>())
    stores.push_back(store);
  scf::ForOp kLoop;
  if (stores.size() == 1)
    kLoop = stores.front().getAcc().getDefiningOp<scf::ForOp>();
  if (!kLoop || kLoop->getBlock() != tiles.getBody() ||
      kLoop.getNumResults() != 1 ||
      getConstantIntValue(kLoop.getLowerBound()) != std::optional<int64_t>(0) ||
      getConstantIntValue(kLoop.getStep()) != std::optional<int64_t>(1))
    return loop.emitOpError()
           << "expects, with split_k = " << loop.getConfigAttr().getSplitK()
           << ", a tile body of one ggemm.store_tile of the result of an "
              "scf.for K loop from 0 by 1 (as ggemm-tile writes it)";
  return std::make_pair(kLoop, stores.front());
}

/// Splits the K loop of the tile body just inlined into `tiles` (whose
/// induction variable is the cluster's tile id, from `cluster` by
/// `clusters`) over the `splitK` CTAs of a cluster: rank `rank` takes K
/// blocks [rank KB / S, (rank + 1) KB / S); after the loop
/// `ggemm.split_k_sum` adds the partials into rank 0, which alone stores
/// the tile.
LogicalResult splitTileK(RewriterBase &rewriter, ForeachTileOp loop,
                         scf::ForOp tiles, Value rank, Value cluster,
                         Value clusters, Value total) {
  int64_t splitK = loop.getConfigAttr().getSplitK();
  auto matched = matchSplitBody(loop, tiles);
  if (failed(matched))
    return failure();
  auto [kLoop, store] = *matched;
  Location loc = kLoop.getLoc();
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
  };
  // The rank's share of the K blocks.
  rewriter.setInsertionPoint(kLoop);
  Value blocks = kLoop.getUpperBound(), size = cst(splitK);
  auto bound = [&](Value r) -> Value {
    return arith::DivUIOp::create(
        rewriter, loc, arith::MulIOp::create(rewriter, loc, r, blocks), size);
  };
  Value lower = bound(rank);
  Value upper = bound(arith::AddIOp::create(rewriter, loc, rank, cst(1)));
  rewriter.modifyOpInPlace(kLoop, [&] {
    kLoop.setLowerBound(lower);
    kLoop.setUpperBound(upper);
  });
  // The partials added in rank 0, which stores the tile.
  rewriter.setInsertionPoint(store);
  Value tile = tiles.getInductionVar();
  Value round = arith::DivUIOp::create(
      rewriter, loc, arith::SubIOp::create(rewriter, loc, tile, cluster),
      clusters);
  Value more = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ult,
      arith::AddIOp::create(rewriter, loc, tile, clusters), total);
  auto sum = SplitKSumOp::create(rewriter, loc, kLoop.getResult(0).getType(),
                                 kLoop.getResult(0), rank, round, more,
                                 /*active=*/Value());
  Value lead = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                     rank, cst(0));
  auto ifLead = scf::IfOp::create(rewriter, loc, lead, false);
  rewriter.moveOpBefore(store, ifLead.thenBlock()->getTerminator());
  rewriter.modifyOpInPlace(store, [&] { store.getAccMutable().assign(sum); });
  return success();
}

/// split_k_tail: one loop over work units, striding over the CTAs. The
/// first `whole` units (as many whole waves of the grid as the tile count
/// holds) are tiles, one CTA each; when the `rest` tiles left over, S CTAs
/// each, fit the grid, units whole + S j + r are rank r's share of tile
/// whole + j (a cluster's S CTAs take tile whole + their cluster's index),
/// and otherwise the rest are tiles too. The K loop runs the rank's blocks
/// in a split unit, ggemm.split_k_sum adds the partials into rank 0, and
/// only whole tiles and rank 0 store. A CTA's split unit is its last.
LogicalResult scheduleSplitTail(RewriterBase &rewriter, ForeachTileOp loop,
                                TileScheduleOp sched, Value cta, Value numCtas,
                                Value total) {
  Location loc = loop.getLoc();
  int64_t splitK = loop.getConfigAttr().getSplitK();
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
  };
  using arith::CmpIPredicate;
  Value size = cst(splitK);
  Value whole = arith::MulIOp::create(
      rewriter, loc, arith::DivUIOp::create(rewriter, loc, total, numCtas),
      numCtas);
  Value rest = arith::SubIOp::create(rewriter, loc, total, whole);
  Value restCtas = arith::MulIOp::create(rewriter, loc, rest, size);
  Value split = arith::CmpIOp::create(rewriter, loc, CmpIPredicate::ule,
                                      restCtas, numCtas);
  Value units = arith::SelectOp::create(
      rewriter, loc, split,
      arith::AddIOp::create(rewriter, loc, whole, restCtas), total);
  auto tiles = scf::ForOp::create(rewriter, loc, cta, units, numCtas);
  rewriter.setInsertionPointToStart(tiles.getBody());
  Value unit = tiles.getInductionVar();
  // The CTA's rank, from the unit (the CTA's id modulo the grid, a multiple
  // of S): values of the unit are not hoisted out of the tile loop, where
  // they would hold registers across it.
  Value rank = arith::RemUIOp::create(rewriter, loc, unit, size);
  Value inTail = arith::AndIOp::create(
      rewriter, loc, split,
      arith::CmpIOp::create(rewriter, loc, CmpIPredicate::uge, unit, whole));
  Value tailTile = arith::AddIOp::create(
      rewriter, loc, whole,
      arith::DivUIOp::create(rewriter, loc,
                             arith::SubIOp::create(rewriter, loc, unit, whole),
                             size));
  Value id = arith::SelectOp::create(rewriter, loc, inTail, tailTile, unit);
  auto tile = MapTileOp::create(rewriter, loc, sched, id);
  inlineTileBody(rewriter, loop, tile, tiles.getBody()->getTerminator());
  auto matched = matchSplitBody(loop, tiles);
  if (failed(matched))
    return failure();
  auto [kLoop, store] = *matched;
  // The unit's K blocks: all, or the rank's share (an equal one where S
  // divides a static block count: the upper bound the lower one plus a
  // constant).
  rewriter.setInsertionPoint(kLoop);
  Value blocks = kLoop.getUpperBound();
  auto bound = [&](Value r) -> Value {
    return arith::DivUIOp::create(
        rewriter, loc, arith::MulIOp::create(rewriter, loc, r, blocks), size);
  };
  Value first = bound(rank), last;
  std::optional<int64_t> staticBlocks = getConstantIntValue(blocks);
  if (staticBlocks && *staticBlocks % splitK == 0)
    last = arith::AddIOp::create(rewriter, loc, first,
                                 cst(*staticBlocks / splitK));
  else
    last = bound(arith::AddIOp::create(rewriter, loc, rank, cst(1)));
  // The loop counts the unit's blocks from 0 and its body offsets them by
  // the first: whole tiles and split units differ in the trip count only,
  // so that the consumers carry their ring position alone (LLVM keeps the
  // block index and the position as two counters when the lower bound
  // varies).
  Value offset = arith::SelectOp::create(rewriter, loc, inTail, first,
                                         kLoop.getLowerBound());
  Value count = arith::SelectOp::create(
      rewriter, loc, inTail, arith::SubIOp::create(rewriter, loc, last, first),
      blocks);
  rewriter.modifyOpInPlace(kLoop, [&] { kLoop.setUpperBound(count); });
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(kLoop.getBody());
    Value iv = kLoop.getInductionVar();
    Value block = arith::AddIOp::create(rewriter, loc, offset, iv);
    rewriter.replaceAllUsesExcept(iv, block, block.getDefiningOp());
  }
  // A split unit's partials added into rank 0; no tile of the CTA follows.
  rewriter.setInsertionPoint(store);
  Value acc = kLoop.getResult(0);
  Value none = arith::ConstantIntOp::create(rewriter, loc, 0, 1);
  auto sum = SplitKSumOp::create(rewriter, loc, acc.getType(), acc, rank,
                                 cst(0), none, inTail);
  Value lead =
      arith::CmpIOp::create(rewriter, loc, CmpIPredicate::eq, rank, cst(0));
  Value notTail = arith::XOrIOp::create(
      rewriter, loc, inTail, arith::ConstantIntOp::create(rewriter, loc, 1, 1));
  Value stores = arith::OrIOp::create(rewriter, loc, notTail, lead);
  auto ifStore = scf::IfOp::create(rewriter, loc, stores, false);
  rewriter.moveOpBefore(store, ifStore.thenBlock()->getTerminator());
  rewriter.modifyOpInPlace(
      store, [&] { store.getAccMutable().assign(sum.getResult()); });
  return success();
}

LogicalResult schedule(RewriterBase &rewriter, ForeachTileOp loop,
                       GridPolicy grid, bool dependentLaunch,
                       int64_t prefetchBytes) {
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
  if (dependentLaunch) {
    prefetchFirstWeights(rewriter, loop, cta, prefetchBytes);
    WaitDependencyOp::create(rewriter, loc);
  }
  Value total = TileCountOp::create(rewriter, loc, sched);
  TileConfigAttr config = loop.getConfigAttr();
  int64_t clusterSize = config.getClusterM() * config.getSplitK();
  if (config.getSplitKTail()) {
    if (failed(scheduleSplitTail(rewriter, loop, sched, cta, numCtas, total)))
      return failure();
  } else if (clusterSize > 1) {
    // A cluster's CTAs walk the tiles together, each taking its rank's rows
    // of them (cluster_m) or its share of their K blocks (split_k); the
    // runtime launches whole clusters.
    Value size = arith::ConstantIndexOp::create(rewriter, loc, clusterSize);
    Value cluster = arith::DivUIOp::create(rewriter, loc, cta, size);
    Value rank = arith::RemUIOp::create(rewriter, loc, cta, size);
    Value clusters = arith::DivUIOp::create(rewriter, loc, numCtas, size);
    auto tiles = scf::ForOp::create(rewriter, loc, cluster, total, clusters);
    rewriter.setInsertionPointToStart(tiles.getBody());
    bool splitK = config.getSplitK() > 1;
    auto tile = MapTileOp::create(rewriter, loc, sched, tiles.getInductionVar(),
                                  splitK ? Value() : rank);
    inlineTileBody(rewriter, loop, tile, tiles.getBody()->getTerminator());
    if (splitK && failed(splitTileK(rewriter, loop, tiles, rank, cluster,
                                    clusters, total)))
      return failure();
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
      if (config.getSplitK() > 1 && grid != GridPolicy::persistent) {
        loop.emitOpError() << "expects grid=persistent with split_k = "
                           << config.getSplitK()
                           << ": a cluster's CTAs walk their tiles together";
        return signalPassFailure();
      }
      if (config.getClusterM() > 1 && grid != GridPolicy::persistent) {
        loop.emitOpError() << "expects grid=persistent with cluster_m = "
                           << config.getClusterM()
                           << ": a cluster's CTAs walk their tiles together";
        return signalPassFailure();
      }
      if (dependentPrefetchBytes < 0) {
        loop.emitOpError() << "expects dependent-prefetch-bytes >= 0, got "
                           << static_cast<int64_t>(dependentPrefetchBytes);
        return signalPassFailure();
      }
      if (failed(schedule(rewriter, loop, grid, dependentLaunch,
                          dependentPrefetchBytes)))
        return signalPassFailure();
    }
  }
};
} // namespace
