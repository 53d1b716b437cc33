//===- GGemmToLoops.cpp - tile programs -> CPU loops ----------------------===//
//
// The CPU reference back end. A ggemm.foreach_tile becomes the loop nest a
// persistent kernel runs, over a simulated grid of CTAs:
//
//   %acc = memref.alloca() : memref<BMxBNxf32>        // one per tile_mma
//   ...
//   scf.for %cta = 0 to num-ctas {
//     %total = ...                                     // totalTiles
//     scf.for %t = %cta to %total step num-ctas {
//       (group, row, row_end, col) = ...               // mapTile(%t)
//       tile_mma, tile_store: loops over the tile
//     }
//   }
//
// The tile mapping (TileSchedule) and the epilogue arithmetic (buildEpilogue)
// are the GPU kernel's own code, so a wrong index, mask or tile -> group
// mapping shows up as a wrong number in the CPU execution tests. What stays
// behind is what the hardware does: TMA's zero fill becomes explicit masks,
// wgmma a sum over k in f32, the fragment stores loops over the tile's
// masked region.
//
//===----------------------------------------------------------------------===//

#include "ggemm/Conversion/Passes.h"
#include "ggemm/Dialect/GGemm/IR/GGemm.h"
#include "ggemm/Dialect/GGemm/Transforms/Epilogue.h"
#include "ggemm/Dialect/GGemm/Transforms/TileSchedule.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_CONVERTGGEMMTOLOOPS
#include "ggemm/Conversion/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;

namespace {

Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value toIndex(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

Value toF32(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isF32())
    return v;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
}

/// The weight matrix of `group`'s tiles: `weight_indices[group]`, or `group`
/// without weight indices.
Value weightOf(OpBuilder &b, Location loc, Value weightIndices, Value group) {
  if (!weightIndices)
    return group;
  return toIndex(b, loc, memref::LoadOp::create(b, loc, weightIndices, group));
}

bool isAccumulator(Value v) { return isa<AccumulatorType>(v.getType()); }

/// Explains why the CPU back end cannot lower the body of `loop`, if it
/// cannot: the tile ops must sit directly in the body and accumulators may
/// only flow from a tile_mma to a tile_store of the same body. Other ops
/// (index arithmetic, say) are copied as they are.
LogicalResult checkBody(ForeachTileOp loop) {
  Block &body = loop.getBody().front();
  for (Operation &op : body) {
    if (isa<YieldOp>(op))
      continue;
    if (auto mma = dyn_cast<TileMmaOp>(op)) {
      Type elem = mma.getX().getType().getElementType();
      if (isFp8(elem))
        return mma.emitOpError()
               << "expects bf16 or f16 operands for the CPU back end, got "
               << elem << " (FP8 scale promotion is not implemented)";
      continue;
    }
    if (auto store = dyn_cast<TileStoreOp>(op)) {
      auto mma = store.getAcc().getDefiningOp<TileMmaOp>();
      if (!mma || mma->getBlock() != &body)
        return store.emitOpError() << "expects its accumulator to come from "
                                      "a ggemm.tile_mma of the same tile loop";
      continue;
    }
    WalkResult result = op.walk([](Operation *nested) {
      if (isa_and_nonnull<GGemmDialect>(nested->getDialect())) {
        nested->emitOpError()
            << "is not supported inside a tile loop by the CPU back end "
               "(expected ggemm.tile_mma and ggemm.tile_store directly in "
               "the body)";
        return WalkResult::interrupt();
      }
      if (llvm::any_of(nested->getOperands(), isAccumulator) ||
          llvm::any_of(nested->getResults(), isAccumulator)) {
        nested->emitOpError() << "expects no accumulator operands or results: "
                                 "the CPU back end passes accumulators only "
                                 "from ggemm.tile_mma to ggemm.tile_store";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
  }
  return success();
}

/// Lowers one tile loop whose body passed `checkBody`.
class TileLoopLowering {
public:
  TileLoopLowering(ForeachTileOp loop, int64_t numCtas)
      : loop(loop), numCtas(numCtas) {}

  void lower();

private:
  Value lookup(Value v) { return mapping.lookupOrDefault(v); }
  void lowerMma(OpBuilder &b, TileMmaOp mma);
  void lowerStore(OpBuilder &b, TileStoreOp store);

  ForeachTileOp loop;
  int64_t numCtas;
  /// Body values -> their CPU counterparts; an accumulator maps to its
  /// buffer.
  IRMapping mapping;
};

void TileLoopLowering::lower() {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  // The accumulator buffers go to the entry block of the enclosing
  // allocation scope (the function), outside every loop, so that walking
  // many tiles does not grow the stack; each tile overwrites its buffer.
  OpBuilder allocas(loop);
  if (Operation *scope =
          loop->getParentWithTrait<OpTrait::AutomaticAllocationScope>())
    allocas.setInsertionPointToStart(&scope->getRegion(0).front());
  for (auto mma : loop.getBody().front().getOps<TileMmaOp>()) {
    TileConfigAttr config = mma.getConfig();
    mapping.map(mma.getAcc(),
                memref::AllocaOp::create(
                    allocas, loc,
                    MemRefType::get({config.getBlockM(), config.getBlockN()},
                                    b.getF32Type())));
  }

  Value groupRows = loop.getGroupRows();
  auto loadGroupRow = [groupRows](OpBuilder &b, Location loc,
                                  Value index) -> Value {
    return toIndex(b, loc, memref::LoadOp::create(b, loc, groupRows, index));
  };
  TileConfigAttr config = loop.getConfig();
  TileSchedule schedule{loop.getRowMapping(), config.getBlockM(),
                        config.getBlockN(),   config.getRaster(),
                        loop.getNumGroups(),  loop.getRowsPerGroup(),
                        loop.getNumCols(),    loadGroupRow};

  Value zero = indexConstant(b, loc, 0);
  Value one = indexConstant(b, loc, 1);
  Value tileId;
  if (loop.getPersistent()) {
    // As on the GPU, every CTA counts the tiles itself from group_rows and
    // strides over the tile ids from its own id.
    Value numCtasValue = indexConstant(b, loc, numCtas);
    auto ctaLoop = scf::ForOp::create(b, loc, zero, numCtasValue, one);
    b.setInsertionPointToStart(ctaLoop.getBody());
    Value totalTiles = schedule.totalTiles(b, loc);
    auto tileLoop = scf::ForOp::create(b, loc, ctaLoop.getInductionVar(),
                                       totalTiles, numCtasValue);
    b.setInsertionPointToStart(tileLoop.getBody());
    tileId = tileLoop.getInductionVar();
  } else {
    // One CTA per tile id.
    Value totalTiles = schedule.totalTiles(b, loc);
    auto tileLoop = scf::ForOp::create(b, loc, zero, totalTiles, one);
    b.setInsertionPointToStart(tileLoop.getBody());
    tileId = tileLoop.getInductionVar();
  }
  TileSchedule::Tile tile = schedule.mapTile(b, loc, tileId);
  mapping.map(loop.getGroupArg(), tile.group);
  mapping.map(loop.getRowBeginArg(), tile.rowBegin);
  mapping.map(loop.getRowEndArg(), tile.rowEnd);
  mapping.map(loop.getColBeginArg(), tile.colBegin);

  for (Operation &op : loop.getBody().front()) {
    if (isa<YieldOp>(op))
      continue;
    if (auto mma = dyn_cast<TileMmaOp>(op))
      lowerMma(b, mma);
    else if (auto store = dyn_cast<TileStoreOp>(op))
      lowerStore(b, store);
    else
      b.clone(op, mapping);
  }
  loop.erase();
}

void TileLoopLowering::lowerMma(OpBuilder &b, TileMmaOp mma) {
  OpBuilder::InsertionGuard guard(b);
  Location loc = mma.getLoc();
  Value acc = mapping.lookup(mma.getAcc());
  Value x = lookup(mma.getX()), w = lookup(mma.getW());
  Value row = lookup(mma.getRow()), col = lookup(mma.getCol());
  TileConfigAttr config = mma.getConfig();
  int64_t blockK = config.getBlockK();
  bool kn = mma.getWeightLayout() == WeightLayout::kn;
  FloatType f32 = b.getF32Type();
  auto ult = [&](Value lhs, Value rhs) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lhs, rhs);
  };

  // The extents TMA's descriptors carry: reads at or past them are zero.
  Value numRows = memref::DimOp::create(b, loc, x, 0);
  Value k = memref::DimOp::create(b, loc, x, 1);
  Value n = memref::DimOp::create(b, loc, w, kn ? 2 : 1);
  Value weight =
      weightOf(b, loc, lookup(mma.getWeightIndices()), lookup(mma.getGroup()));
  Value zero = indexConstant(b, loc, 0);
  Value one = indexConstant(b, loc, 1);
  Value blockKValue = indexConstant(b, loc, blockK);
  Value kBlocks = arith::DivUIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, k, indexConstant(b, loc, blockK - 1)),
      blockKValue);
  Value fzero = arith::ConstantFloatOp::create(b, loc, f32, APFloat(0.0f));

  // acc[i, j] = the sum over the k-blocks, in the order the stages arrive,
  // of the products of their block_k columns. Masked rows and columns are
  // summed too, from zeros, as wgmma sums TMA's zero fill.
  auto iLoop = scf::ForOp::create(
      b, loc, zero, indexConstant(b, loc, config.getBlockM()), one);
  b.setInsertionPointToStart(iLoop.getBody());
  Value i = iLoop.getInductionVar();
  Value r = arith::AddIOp::create(b, loc, row, i);
  Value rowInBounds = ult(r, numRows);

  auto jLoop = scf::ForOp::create(
      b, loc, zero, indexConstant(b, loc, config.getBlockN()), one);
  b.setInsertionPointToStart(jLoop.getBody());
  Value j = jLoop.getInductionVar();
  Value c = arith::AddIOp::create(b, loc, col, j);
  Value inBounds = arith::AndIOp::create(b, loc, rowInBounds, ult(c, n));
  auto kBlockLoop =
      scf::ForOp::create(b, loc, zero, kBlocks, one, ValueRange{fzero});
  memref::StoreOp::create(b, loc, kBlockLoop.getResult(0), acc,
                          ValueRange{i, j});

  b.setInsertionPointToStart(kBlockLoop.getBody());
  Value kBase =
      arith::MulIOp::create(b, loc, kBlockLoop.getInductionVar(), blockKValue);
  auto kLoop = scf::ForOp::create(b, loc, zero, blockKValue, one,
                                  kBlockLoop.getRegionIterArgs());
  scf::YieldOp::create(b, loc, kLoop.getResults());

  b.setInsertionPointToStart(kLoop.getBody());
  Value kIndex = arith::AddIOp::create(b, loc, kBase, kLoop.getInductionVar());
  Value valid = arith::AndIOp::create(b, loc, inBounds, ult(kIndex, k));
  auto product = scf::IfOp::create(b, loc, TypeRange{f32}, valid,
                                   /*withElseRegion=*/true);
  scf::YieldOp::create(b, loc,
                       arith::AddFOp::create(b, loc, kLoop.getRegionIterArg(0),
                                             product.getResult(0))
                           .getResult());

  b.setInsertionPointToStart(product.thenBlock());
  Value a = toF32(b, loc, memref::LoadOp::create(b, loc, x, {r, kIndex}));
  Value wIndices[] = {weight, kn ? kIndex : c, kn ? c : kIndex};
  Value bv = toF32(b, loc, memref::LoadOp::create(b, loc, w, wIndices));
  scf::YieldOp::create(b, loc,
                       arith::MulFOp::create(b, loc, a, bv).getResult());
  b.setInsertionPointToStart(product.elseBlock());
  scf::YieldOp::create(b, loc, fzero);
}

void TileLoopLowering::lowerStore(OpBuilder &b, TileStoreOp store) {
  OpBuilder::InsertionGuard guard(b);
  Location loc = store.getLoc();
  Value acc = mapping.lookup(store.getAcc());
  Value y = lookup(store.getY());
  Value bias = lookup(store.getBias()), rowScale = lookup(store.getRowScale());
  Value row = lookup(store.getRow()), rowEnd = lookup(store.getRowEnd());
  Value col = lookup(store.getCol());
  ArrayRef<int64_t> tileShape = store.getAcc().getType().getShape();
  Type outType = store.getY().getType().getElementType();
  EpilogueAttr epilogue = store.getEpilogueAttr();
  Activation activation =
      epilogue ? epilogue.getActivation() : Activation::none;
  bool accumulate = epilogue && epilogue.getAccumulate();

  Value n = memref::DimOp::create(b, loc, y, 1);
  Value weight;
  if (bias)
    weight = weightOf(b, loc, lookup(store.getWeightIndices()),
                      lookup(store.getGroup()));
  // Rows at or past row_end belong to the next group (or to none); columns
  // at or past N do not exist.
  Value rowLimit = arith::MinSIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, row, indexConstant(b, loc, tileShape[0])),
      rowEnd);
  Value colLimit = arith::MinSIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, col, indexConstant(b, loc, tileShape[1])),
      n);
  Value one = indexConstant(b, loc, 1);

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
}

struct ConvertGGemmToLoopsPass
    : public ggemm::impl::ConvertGGemmToLoopsBase<ConvertGGemmToLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<ForeachTileOp> loops;
    bool invalid = false;
    getOperation().walk([&](Operation *op) {
      if (auto loop = dyn_cast<ForeachTileOp>(op)) {
        loops.push_back(loop);
      } else if (isa<TileMmaOp, TileStoreOp>(op) &&
                 !op->getParentOfType<ForeachTileOp>()) {
        op->emitOpError() << "expects to be in the body of a "
                             "ggemm.foreach_tile";
        invalid = true;
      }
    });
    for (ForeachTileOp loop : loops) {
      if (numCtas < 1) {
        loop.emitOpError() << "expects num-ctas to be positive, got "
                           << numCtas.getValue();
        invalid = true;
      } else if (failed(checkBody(loop))) {
        invalid = true;
      }
    }
    if (invalid)
      return signalPassFailure();
    for (ForeachTileOp loop : loops)
      TileLoopLowering(loop, numCtas).lower();
  }
};
} // namespace
