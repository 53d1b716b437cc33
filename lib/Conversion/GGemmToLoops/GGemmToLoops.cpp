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
//         mma       -> f32 loops into the accumulator buffer
//       }
//       store_tile  -> epilogue loops over the tile's masked region
//     }
//   }
//
// The tile mapping (TileSchedule) and the epilogue arithmetic (buildEpilogue)
// are the GPU kernel's own code, so a wrong index, mask or tile -> group
// mapping shows up as a wrong number in the CPU execution tests. Warp roles
// and the stage ring are GPU-only: this pass runs before
// ggemm-warp-specialize.
//
//===----------------------------------------------------------------------===//

#include "../Utils/ProgramTranslator.h"
#include "ggemm/Conversion/Passes.h"
#include "ggemm/Dialect/GGemm/Transforms/Epilogue.h"
#include "ggemm/Dialect/GGemm/Transforms/StageChecks.h"
#include "ggemm/Dialect/GGemm/Transforms/TileSchedule.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_CONVERTGGEMMTOLOOPS
#include "ggemm/Conversion/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;

namespace {

Value toIndex(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

Value toF32(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isF32())
    return v;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
}

Value ult(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lhs, rhs);
}

/// `for i < extent0, j < extent1: body(i, j)`, the builder left after the
/// nest.
void forEach2D(OpBuilder &b, Location loc, int64_t extent0, int64_t extent1,
               function_ref<void(Value, Value)> body) {
  OpBuilder::InsertionGuard guard(b);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto outer = scf::ForOp::create(
      b, loc, zero, arith::ConstantIndexOp::create(b, loc, extent0), one);
  b.setInsertionPointToStart(outer.getBody());
  auto inner = scf::ForOp::create(
      b, loc, zero, arith::ConstantIndexOp::create(b, loc, extent1), one);
  b.setInsertionPointToStart(inner.getBody());
  body(outer.getInductionVar(), inner.getInductionVar());
}

class LoopsTranslator : public ProgramTranslator {
public:
  LoopsTranslator(OpBuilder &b, OpBuilder &allocas, int64_t numCtas)
      : ProgramTranslator(b), allocas(allocas), numCtas(numCtas) {}

  void lowerLaunch(LaunchOp launch, LogicalResult &result);

protected:
  LogicalResult translateGGemmOp(Operation *op) override;
  Value resolveExternal(Value value, Operation *) override { return value; }

private:
  TileSchedule scheduleOf(Value schedule);
  /// A buffer for the values of an accumulator or tile type, allocated once
  /// at the function's entry so that walking many tiles does not grow the
  /// stack; every execution of the op overwrites it.
  Value buffer(Type type, Location loc);

  LogicalResult lowerLoad(LoadTileOp op);
  LogicalResult lowerMma(MmaOp op);
  LogicalResult lowerStore(StoreTileOp op);

  OpBuilder &allocas;
  int64_t numCtas;
};

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
  s.raster = config.getRaster();
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
    gridSize = arith::ConstantIndexOp::create(b, loc, numCtas);
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
      .Case([&](MapTileOp map) {
        TileSchedule::Tile tile =
            scheduleOf(map.getSchedule())
                .mapTile(b, loc, lookup(map.getTile(), map));
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
      .Case([&](ZeroAccumulatorOp zero) {
        Value acc = buffer(zero.getType(), loc);
        Value fzero = arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                                     APFloat(0.0f));
        ArrayRef<int64_t> shape = zero.getType().getShape();
        forEach2D(b, loc, shape[0], shape[1], [&](Value i, Value j) {
          memref::StoreOp::create(b, loc, fzero, acc, ValueRange{i, j});
        });
        mapping.map(zero.getAcc(), acc);
        return success();
      })
      .Case([&](LoadTileOp load) { return lowerLoad(load); })
      .Case([&](MmaOp mma) { return lowerMma(mma); })
      .Case([&](MmaWaitOp wait) {
        mapping.map(wait.getResult(), lookup(wait.getAcc(), wait));
        return success();
      })
      .Case([&](StoreTileOp store) { return lowerStore(store); })
      .Default([&](Operation *other) {
        if (isa<WarpSpecializeOp, CreateRingOp, RingPutOp, RingGetOp,
                RingReleaseOp>(other))
          return other->emitOpError()
                 << "is GPU-only (warp roles and the stage ring have no CPU "
                    "counterpart): run convert-ggemm-to-loops before "
                    "ggemm-warp-specialize";
        return other->emitOpError()
               << "is not supported inside a ggemm.launch by "
                  "convert-ggemm-to-loops";
      });
}

LogicalResult LoopsTranslator::lowerLoad(LoadTileOp op) {
  Location loc = op.getLoc();
  TileType type = op.getType();
  Value source = lookup(op.getSource(), op);
  SmallVector<Value> indices;
  for (Value index : op.getIndices())
    indices.push_back(lookup(index, op));
  Value tile = buffer(type, loc);
  int64_t rank = indices.size();
  // Which source dimension runs along the tile's rows, which along K.
  int64_t rowDim = type.isMNMajor() ? rank - 1 : rank - 2;
  int64_t kDim = type.isMNMajor() ? rank - 2 : rank - 1;
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
  forEach2D(b, loc, type.getRows(), type.getK(), [&](Value r, Value c) {
    SmallVector<Value> at(indices);
    at[rowDim] = arith::AddIOp::create(b, loc, indices[rowDim], r);
    at[kDim] = arith::AddIOp::create(b, loc, indices[kDim], c);
    // TMA's zero fill: every coordinate past its dimension reads as zero.
    Value inBounds;
    for (int64_t d = 0; d < rank; ++d) {
      Value ok = ult(b, loc, at[d], memref::DimOp::create(b, loc, source, d));
      inBounds = inBounds ? arith::AndIOp::create(b, loc, inBounds, ok) : ok;
    }
    auto read = scf::IfOp::create(b, loc, TypeRange{type.getElementType()},
                                  inBounds, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(read.thenBlock());
      scf::YieldOp::create(
          b, loc, memref::LoadOp::create(b, loc, source, at).getResult());
      b.setInsertionPointToStart(read.elseBlock());
      scf::YieldOp::create(b, loc, zero);
    }
    memref::StoreOp::create(b, loc, read.getResult(0), tile, ValueRange{r, c});
  });
  mapping.map(op.getTile(), tile);
  return success();
}

LogicalResult LoopsTranslator::lowerMma(MmaOp op) {
  Location loc = op.getLoc();
  // The pass checked that the accumulator has no other use: update it in
  // place.
  Value acc = lookup(op.getAcc(), op);
  Value a = lookup(op.getA(), op), bTile = lookup(op.getB(), op);
  ArrayRef<int64_t> shape = op.getAcc().getType().getShape();
  int64_t k = op.getA().getType().getK();
  forEach2D(b, loc, shape[0], shape[1], [&](Value i, Value j) {
    Value init = memref::LoadOp::create(b, loc, acc, ValueRange{i, j});
    auto kLoop = scf::ForOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0),
        arith::ConstantIndexOp::create(b, loc, k),
        arith::ConstantIndexOp::create(b, loc, 1), ValueRange{init});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(kLoop.getBody());
      Value kk = kLoop.getInductionVar();
      Value av = toF32(b, loc, memref::LoadOp::create(b, loc, a, {i, kk}));
      Value bv = toF32(b, loc, memref::LoadOp::create(b, loc, bTile, {j, kk}));
      Value sum = arith::AddFOp::create(b, loc, kLoop.getRegionIterArg(0),
                                        arith::MulFOp::create(b, loc, av, bv));
      scf::YieldOp::create(b, loc, sum);
    }
    memref::StoreOp::create(b, loc, kLoop.getResult(0), acc, ValueRange{i, j});
  });
  mapping.map(op.getResult(), acc);
  return success();
}

LogicalResult LoopsTranslator::lowerStore(StoreTileOp op) {
  Location loc = op.getLoc();
  Value acc = lookup(op.getAcc(), op);
  Value y = lookup(op.getY(), op);
  Value bias = lookup(op.getBias(), op),
        rowScale = lookup(op.getRowScale(), op);
  Value weight = lookup(op.getWeight(), op);
  Value row = lookup(op.getRow(), op), rowEnd = lookup(op.getRowEnd(), op);
  Value col = lookup(op.getCol(), op);
  ArrayRef<int64_t> tileShape = op.getAcc().getType().getShape();
  Type outType = op.getY().getType().getElementType();
  EpilogueAttr epilogue = op.getEpilogueAttr();
  Activation activation =
      epilogue ? epilogue.getActivation() : Activation::none;
  bool accumulate = epilogue && epilogue.getAccumulate();

  OpBuilder::InsertionGuard guard(b);
  Value n = memref::DimOp::create(b, loc, y, 1);
  // Rows at or past row_end belong to the next group (or to none); columns
  // at or past N do not exist.
  Value rowLimit = arith::MinSIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, row, arith::ConstantIndexOp::create(b, loc, tileShape[0])),
      rowEnd);
  Value colLimit = arith::MinSIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, col, arith::ConstantIndexOp::create(b, loc, tileShape[1])),
      n);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto rowLoop = scf::ForOp::create(b, loc, row, rowLimit, one);
  b.setInsertionPointToStart(rowLoop.getBody());
  Value r = rowLoop.getInductionVar();
  Value i = arith::SubIOp::create(b, loc, r, row);
  Value scale;
  if (rowScale)
    scale = memref::LoadOp::create(b, loc, rowScale, r);
  auto colLoop = scf::ForOp::create(b, loc, col, colLimit, one);
  b.setInsertionPointToStart(colLoop.getBody());
  Value c = colLoop.getInductionVar();
  Value j = arith::SubIOp::create(b, loc, c, col);
  Value v = memref::LoadOp::create(b, loc, acc, {i, j});
  Value biasValue, old;
  if (bias)
    biasValue = memref::LoadOp::create(b, loc, bias, {weight, c});
  if (accumulate)
    old = memref::LoadOp::create(b, loc, y, {r, c});
  Value out =
      buildEpilogue(b, loc, v, biasValue, activation, scale, old, outType);
  memref::StoreOp::create(b, loc, out, y, {r, c});
  return success();
}

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
      if (auto tile = dyn_cast<TileType>(v.getType());
          tile && isFp8(tile.getElementType())) {
        op->emitOpError() << "expects bf16 or f16 tiles for the CPU back end, "
                             "got "
                          << tile.getElementType()
                          << " (FP8 scale promotion is not implemented)";
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
    WalkResult stray = module->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (auto launch = dyn_cast<LaunchOp>(op)) {
        launches.push_back(launch);
        return WalkResult::skip();
      }
      if (isa<GGemmDialect>(op->getDialect()) &&
          !isa<TileScheduleOp, SegmentMatmulKOp, QuantizeOp>(op)) {
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
