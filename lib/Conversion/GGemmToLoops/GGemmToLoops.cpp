//===- GGemmToLoops.cpp - scheduled tile programs -> CPU loops ------------===//
//
// The CPU reference back end. A ggemm.launch becomes a loop over simulated
// CTAs running its body, so the persistent schedule (or the one-CTA-per-tile
// one) is executed exactly as written (with split_k, each cluster's ranks
// from the last to 0, which adds the others' partial sums):
//
//   scf.for %cta = 0 to num-ctas {              // grid(persistent)
//     %total = ...                              // TileSchedule::totalTiles
//     scf.for %t = %cta to %total step num-ctas {
//       (group, row, row_end, col) = ...        // TileSchedule::mapTile
//       scf.for %kb ... {                       // the K loop, as written
//         load_tile -> copy into a buffer, zero outside the source
//         mma       -> f32 loops into the accumulator buffer (FP8
//                      decoded exactly with integer arithmetic)
//         load_scales, promote -> copies and f32 loops
//       }
//       store_tile  -> epilogue loops over the tile's masked region
//     }
//   }
//
// The tile mapping (TileSchedule) and the epilogue arithmetic (buildEpilogue)
// are the GPU kernel's own code, so a wrong index, mask or tile -> group
// mapping shows up as a wrong number in the CPU execution tests. Warp roles
// and the stage ring are GPU-only: this pass runs before
// ggemm-warp-specialize. This file lowers the launch and the schedule ops;
// TileOpsToLoops.cpp the tile ops (LoopsTranslator.h).
//
//===----------------------------------------------------------------------===//

#include "LoopsTranslator.h"
#include "QuantizeToLoops.h"
#include "RoutingToLoops.h"
#include "ggemm/Conversion/Passes.h"
#include "ggemm/Dialect/GGemm/Transforms/StageChecks.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_CONVERTGGEMMTOLOOPS
#include "ggemm/Conversion/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::loops;

namespace mlir::ggemm::loops {

TileSchedule LoopsTranslator::scheduleOf(Value schedule) {
  auto op = schedule.getDefiningOp<TileScheduleOp>();
  auto loader = [](Value array) {
    return [array](OpBuilder &b, Location loc, Value index) -> Value {
      return toIndex(b, loc, memref::LoadOp::create(b, loc, array, index));
    };
  };
  TileConfigAttr config = op.getConfig();
  TileSchedule s;
  s.rowMapping = op.getRowMapping();
  s.blockM = config.getBlockM();
  s.blockN = config.getBlockN();
  s.clusterM = config.getClusterM();
  s.raster = config.getRaster();
  s.swizzle = config.getSwizzle();
  s.swizzleMinTiles = config.getSwizzleMinTiles();
  s.numGroups = op.getNumGroups();
  s.rowsPerGroup = op.getRowsPerGroup();
  s.numRows = op.getNumRows();
  s.numCols = op.getNumCols();
  if (Value groupRows = op.getGroupRows())
    s.loadGroupRow = loader(groupRows);
  if (Value weightIndices = op.getWeightIndices()) {
    s.loadWeightIndex = loader(weightIndices);
    s.numWeights = op.getNumWeights();
  }
  return s;
}

Value LoopsTranslator::buffer(Type type, Location loc) {
  MemRefType memrefType;
  if (auto acc = dyn_cast<AccumulatorType>(type))
    memrefType = MemRefType::get(acc.getShape(), acc.getElementType());
  else if (auto scales = dyn_cast<ScalesType>(type))
    memrefType = MemRefType::get({scales.getCount()}, b.getF32Type());
  else
    memrefType = MemRefType::get(cast<TileType>(type).getShape(),
                                 cast<TileType>(type).getElementType());
  return memref::AllocaOp::create(allocas, loc, memrefType);
}

void LoopsTranslator::lowerLaunch(LaunchOp launch, LogicalResult &result) {
  Location loc = launch.getLoc();
  b.setInsertionPoint(launch);
  TileSchedule schedule = scheduleOf(launch.getSchedule());
  int64_t clusterSize =
      schedule.clusterM * launch.getScheduleOp().getConfig().getSplitK();
  Value gridSize;
  if (launch.getGrid() == GridPolicy::persistent)
    // Whole clusters, as the runtime launches them.
    gridSize = arith::ConstantIndexOp::create(
        b, loc, std::max(clusterSize, numCtas - numCtas % clusterSize));
  else
    // As the runtime does: one CTA per tile of a bound computed without
    // reading group_rows; the CTAs past the real tile count find no tile.
    gridSize = schedule.tileBound(b, loc);
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  splitK = launch.getScheduleOp().getConfig().getSplitK();
  SplitKSumOp sum;
  launch.walk([&](SplitKSumOp op) { sum = op; });
  if (sum && (splitK < 2 || launch.getGrid() != GridPolicy::persistent)) {
    // Whole clusters walking the tiles together: what the ranks assume.
    result = sum.emitOpError()
             << "expects a persistent grid with split_k > 1 for "
                "convert-ggemm-to-loops, got split_k = "
             << splitK << " and grid " << stringifyGridPolicy(launch.getGrid());
    return;
  }
  if (sum) {
    // Room for every partial sum of ranks > 0: a cluster takes at most
    // ceil(tiles / clusters) tiles.
    Value clusters = arith::DivUIOp::create(b, loc, gridSize, cst(splitK));
    splitKRounds = arith::CeilDivUIOp::create(
        b, loc, schedule.totalTiles(b, loc), clusters);
    AccumulatorType acc = sum.getPartial().getType();
    splitKPartials = memref::AllocOp::create(
        b, loc,
        MemRefType::get(
            {ShapedType::kDynamic, acc.getShape()[0], acc.getShape()[1]},
            acc.getElementType()),
        ValueRange{
            arith::MulIOp::create(b, loc, cst(splitK - 1), splitKRounds)});
  }
  auto grid = scf::ForOp::create(b, loc, cst(0), gridSize, cst(1));
  b.setInsertionPoint(grid.getBody()->getTerminator());
  Value cta = grid.getInductionVar();
  if (splitK > 1) {
    // The CTAs of a split-K cluster run from the last rank to rank 0,
    // which adds the others' partial sums.
    Value rank = arith::RemUIOp::create(b, loc, cta, cst(splitK));
    cta = arith::AddIOp::create(
        b, loc, arith::SubIOp::create(b, loc, cta, rank),
        arith::SubIOp::create(b, loc, cst(splitK - 1), rank));
  }
  mapping.map(launch.getCtaArg(), cta);
  mapping.map(launch.getNumCtasArg(), gridSize);
  result = translateBlock(launch.getBody().front());
  if (splitKPartials) {
    b.setInsertionPointAfter(grid);
    memref::DeallocOp::create(b, loc, splitKPartials);
  }
}

LogicalResult LoopsTranslator::lowerSplitKSum(SplitKSumOp op) {
  Location loc = op.getLoc();
  Value acc = lookup(op.getPartial(), op);
  Value rank = lookup(op.getRank(), op);
  Value round = lookup(op.getRound(), op);
  Value active = op.getActive() ? lookup(op.getActive(), op) : Value();
  if (!acc || !rank || !round || (op.getActive() && !active))
    return failure();
  // Inactive (a whole tile of a split_k_tail launch): the CTA's own sum,
  // in place.
  OpBuilder::InsertionGuard activeGuard(b);
  if (active) {
    auto ifActive = scf::IfOp::create(b, op.getLoc(), active,
                                      /*withElseRegion=*/false);
    b.setInsertionPoint(ifActive.thenBlock()->getTerminator());
  }
  AccumulatorType type = op.getPartial().getType();
  bool integer = isa<IntegerType>(type.getElementType());
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  // Rank r's partial of this round: entry (r - 1) x rounds + round.
  auto slot = [&](Value r) {
    return arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, arith::SubIOp::create(b, loc, r, cst(1)),
                              splitKRounds),
        round);
  };
  Value lead =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rank, cst(0));
  auto branch = scf::IfOp::create(b, loc, lead, /*withElseRegion=*/true);
  int64_t rows = type.getShape()[0], cols = type.getShape()[1];
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    for (int64_t r = 1; r < splitK; ++r) {
      Value at = slot(cst(r));
      forEach2D(b, loc, rows, cols, [&](Value i, Value j) {
        Value mine = memref::LoadOp::create(b, loc, acc, ValueRange{i, j});
        Value theirs = memref::LoadOp::create(b, loc, splitKPartials,
                                              ValueRange{at, i, j});
        Value sum = integer
                        ? Value(arith::AddIOp::create(b, loc, mine, theirs))
                        : Value(arith::AddFOp::create(b, loc, mine, theirs));
        memref::StoreOp::create(b, loc, sum, acc, ValueRange{i, j});
      });
    }
    b.setInsertionPoint(branch.elseBlock()->getTerminator());
    Value at = slot(rank);
    forEach2D(b, loc, rows, cols, [&](Value i, Value j) {
      memref::StoreOp::create(
          b, loc, memref::LoadOp::create(b, loc, acc, ValueRange{i, j}),
          splitKPartials, ValueRange{at, i, j});
    });
  }
  mapping.map(op.getResult(), acc);
  return success();
}

LogicalResult LoopsTranslator::translateGGemmOp(Operation *op) {
  Location loc = op->getLoc();
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](TileCountOp count) {
        mapping.map(count.getCount(),
                    scheduleOf(count.getSchedule()).totalTiles(b, loc));
        return success();
      })
      // Launches run one after the other here, and there is no L2 to fill.
      .Case<WaitDependencyOp, PrefetchTileOp>(
          [](Operation *) { return success(); })
      .Case([&](MapTileOp map) {
        Value rank =
            map.getClusterRank() ? lookup(map.getClusterRank(), map) : Value();
        // The walk's cursor, as on the GPU: it carries over from one
        // simulated CTA to the next, whose first tile lies before it (the
        // walk restarts), so the tests run both paths.
        auto slots = memref::AllocaOp::create(
            allocas, loc, MemRefType::get({2}, b.getIndexType()));
        Value zero = arith::ConstantIndexOp::create(allocas, loc, 0);
        for (int64_t slot = 0; slot < 2; ++slot)
          memref::StoreOp::create(
              allocas, loc, zero, slots,
              ValueRange{arith::ConstantIndexOp::create(allocas, loc, slot)});
        TileSchedule::Cursor cursor;
        cursor.load = [&](OpBuilder &b, Location loc, unsigned slot) -> Value {
          return memref::LoadOp::create(
              b, loc, slots,
              ValueRange{arith::ConstantIndexOp::create(b, loc, slot)});
        };
        cursor.store = [&](OpBuilder &b, Location loc, unsigned slot,
                           Value value) {
          memref::StoreOp::create(
              b, loc, value, slots,
              ValueRange{arith::ConstantIndexOp::create(b, loc, slot)});
        };
        TileSchedule::Tile tile =
            scheduleOf(map.getSchedule())
                .mapTile(b, loc, lookup(map.getTile(), map), rank, &cursor);
        mapping.map(map.getResults(), ValueRange{tile.group, tile.rowBegin,
                                                 tile.rowEnd, tile.colBegin});
        return success();
      })
      .Case([&](WeightIndexOp index) {
        Value weight = memref::LoadOp::create(
            b, loc, lookup(index.getWeightIndices(), index),
            lookup(index.getGroup(), index));
        mapping.map(index.getWeight(), toIndex(b, loc, weight));
        return success();
      })
      .Case([&](SegmentBoundsOp bounds) {
        // The tile schedule's own clamping of a segment's rows.
        TileSchedule segments;
        segments.rowMapping = RowMapping::segment;
        segments.numRows = lookup(bounds.getNumRows(), bounds);
        Value indptr = lookup(bounds.getSegIndptr(), bounds);
        segments.loadGroupRow = [indptr](OpBuilder &b, Location loc,
                                         Value index) -> Value {
          return toIndex(b, loc, memref::LoadOp::create(b, loc, indptr, index));
        };
        auto [begin, count] =
            segments.groupRows(b, loc, lookup(bounds.getGroup(), bounds));
        mapping.map(bounds.getBegin(), begin);
        mapping.map(bounds.getEnd(),
                    arith::AddIOp::create(b, loc, begin, count).getResult());
        return success();
      })
      .Case([&](ZeroAccumulatorOp zero) {
        Value acc = buffer(zero.getType(), loc);
        Value fzero = arith::ConstantOp::create(
            b, loc, b.getZeroAttr(zero.getType().getElementType()));
        ArrayRef<int64_t> shape = zero.getType().getShape();
        forEach2D(b, loc, shape[0], shape[1], [&](Value i, Value j) {
          memref::StoreOp::create(b, loc, fzero, acc, ValueRange{i, j});
        });
        mapping.map(zero.getAcc(), acc);
        return success();
      })
      .Case([&](LoadTileOp load) { return lowerLoad(load); })
      .Case([&](MmaOp mma) { return lowerMma(mma); })
      .Case([&](LoadScalesOp load) { return lowerLoadScales(load); })
      .Case([&](PromoteOp promote) { return lowerPromote(promote); })
      .Case([&](MmaWaitOp wait) {
        mapping.map(wait.getResult(), lookup(wait.getAcc(), wait));
        return success();
      })
      .Case([&](StoreTileOp store) { return lowerStore(store); })
      .Case([&](SplitKSumOp sum) { return lowerSplitKSum(sum); })
      .Default([&](Operation *other) {
        if (isa<WarpSpecializeOp, CreateRingOp, RingPutOp, RingGetOp,
                RingReleaseOp, StoreDrainOp>(other))
          return other->emitOpError()
                 << "is GPU-only (warp roles and the stage ring have no CPU "
                    "counterpart): run convert-ggemm-to-loops before "
                    "ggemm-warp-specialize";
        return other->emitOpError()
               << "is not supported inside a ggemm.launch by "
                  "convert-ggemm-to-loops";
      });
}

} // namespace mlir::ggemm::loops

namespace {

/// What the in-place lowering needs: accumulators flow linearly (each value
/// used at most once) and tiles are not carried by loops or branches.
LogicalResult checkLaunch(LaunchOp launch) {
  WalkResult result = launch.walk([&](Operation *op) {
    for (Value v : op->getResults()) {
      if (isa<AccumulatorType>(v.getType()) && !v.hasOneUse() &&
          !v.use_empty()) {
        op->emitOpError() << "expects each accumulator value to be used "
                             "once: the CPU back end updates accumulators in "
                             "place";
        return WalkResult::interrupt();
      }
      if (isa<TileType>(v.getType()) && !isa<LoadTileOp, RingGetOp>(op)) {
        op->emitOpError() << "expects tiles to come straight from "
                             "ggemm.load_tile for the CPU back end";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct ConvertGGemmToLoopsPass
    : public ggemm::impl::ConvertGGemmToLoopsBase<ConvertGGemmToLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (numCtas < 1) {
      module.emitError() << getArgument()
                         << ": expects num-ctas to be positive, got "
                         << numCtas.getValue();
      return signalPassFailure();
    }
    if (failed(expectScheduled(module, getArgument())))
      return signalPassFailure();
    SmallVector<LaunchOp> launches;
    SmallVector<SortByExpertOp> routings;
    SmallVector<QuantizeOp> quantizes;
    WalkResult stray = module->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (auto launch = dyn_cast<LaunchOp>(op)) {
        launches.push_back(launch);
        return WalkResult::skip();
      }
      if (auto routing = dyn_cast<SortByExpertOp>(op)) {
        routings.push_back(routing);
        return WalkResult::advance();
      }
      if (auto quantize = dyn_cast<QuantizeOp>(op)) {
        quantizes.push_back(quantize);
        return WalkResult::advance();
      }
      if (isa<GGemmDialect>(op->getDialect()) && !isa<TileScheduleOp>(op)) {
        op->emitOpError() << "expects to be in the body of a ggemm.launch";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (stray.wasInterrupted())
      return signalPassFailure();
    for (LaunchOp launch : launches)
      if (failed(checkLaunch(launch)))
        return signalPassFailure();
    for (SortByExpertOp routing : routings)
      lowerSortByExpertToLoops(routing);
    for (QuantizeOp quantize : quantizes)
      lowerQuantizeToLoops(quantize);
    for (LaunchOp launch : launches) {
      OpBuilder b(launch);
      OpBuilder allocas(launch);
      if (Operation *scope =
              launch->getParentWithTrait<OpTrait::AutomaticAllocationScope>())
        allocas.setInsertionPointToStart(&scope->getRegion(0).front());
      LoopsTranslator translator(b, allocas, numCtas);
      LogicalResult result = success();
      translator.lowerLaunch(launch, result);
      if (failed(result))
        return signalPassFailure();
      launch.erase();
    }
    module.walk([](TileScheduleOp schedule) {
      if (schedule->use_empty())
        schedule.erase();
    });
  }
};
} // namespace
