//===- GGemmToLoops.cpp - scheduled tile programs -> CPU loops ------------===//
//
// The CPU reference back end. A ggemm.launch becomes a loop over simulated
// CTAs running its body, so the persistent schedule (or the one-CTA-per-tile
// one) is executed exactly as written:
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
  Value gridSize;
  if (launch.getGrid() == GridPolicy::persistent)
    // Whole clusters, as the runtime launches them.
    gridSize = arith::ConstantIndexOp::create(
        b, loc,
        std::max(schedule.clusterM, numCtas - numCtas % schedule.clusterM));
  else
    // As the runtime does: one CTA per tile of a bound computed without
    // reading group_rows; the CTAs past the real tile count find no tile.
    gridSize = schedule.tileBound(b, loc);
  auto grid =
      scf::ForOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0),
                         gridSize, arith::ConstantIndexOp::create(b, loc, 1));
  b.setInsertionPoint(grid.getBody()->getTerminator());
  mapping.map(launch.getCtaArg(), grid.getInductionVar());
  mapping.map(launch.getNumCtasArg(), gridSize);
  result = translateBlock(launch.getBody().front());
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
