//===- Tile.cpp - problem level -> tile level -----------------------------===//

#include "ggemm/Dialect/GGemm/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_GGEMMTILE
#include "ggemm/Dialect/GGemm/Transforms/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;

namespace {
/// Operands of a grouped matmul once 3-D activations are flattened.
struct TileProblem {
  RowMapping rowMapping;
  Value groupRows;               // seg_indptr / masked_m / null
  Value numGroups, rowsPerGroup; // index
  Value x, w, y, weightIndices, bias, rowScale;
  WeightLayout layout;
  EpilogueAttr epilogue;
  TileConfigAttr config;
};

/// Collapses `[G, M, ...]` to `[G * M, ...]`.
Value collapseLeading(OpBuilder &b, Location loc, Value v) {
  if (!v)
    return v;
  auto type = cast<MemRefType>(v.getType());
  SmallVector<ReassociationIndices> groups;
  groups.push_back({0, 1});
  for (int64_t d = 2; d < type.getRank(); ++d)
    groups.push_back({d});
  return memref::CollapseShapeOp::create(b, loc, v, groups);
}

/// Whether dimensions 0 and 1 of `type` can merge into one, by the rule
/// memref.collapse_shape verifies: statically known strides must show the
/// groups stored back to back; unknown ones are taken on trust.
bool leadingDimsCollapse(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  int64_t groups = type.getDimSize(0), rows = type.getDimSize(1);
  if (groups == 1 || rows == 1)
    return true;
  if (ShapedType::isDynamic(rows) || ShapedType::isDynamic(strides[0]) ||
      ShapedType::isDynamic(strides[1]))
    return true;
  return strides[0] == rows * strides[1];
}

/// The tile program sees 3-D operands as `[groups * rows, *]` matrices;
/// diagnoses those whose groups are not stored back to back (padded groups)
/// rather than building an invalid memref.collapse_shape.
LogicalResult
checkCollapsible(Operation *op,
                 ArrayRef<std::pair<StringRef, Value>> namedOperands) {
  for (auto [name, value] : namedOperands) {
    if (!value)
      continue;
    auto type = cast<MemRefType>(value.getType());
    if (!leadingDimsCollapse(type))
      return op->emitOpError()
             << "expects " << name
             << " to store its groups back to back (dimensions 0 and 1 "
                "collapsible into one), got "
             << type;
  }
  return success();
}

Value dim(OpBuilder &b, Location loc, Value v, int64_t d) {
  return memref::DimOp::create(b, loc, v, d);
}

LogicalResult emitTileProgram(OpBuilder &b, Operation *op,
                              const TileProblem &p) {
  Location loc = op->getLoc();
  MemRefType xType = cast<MemRefType>(p.x.getType());
  if (isFp8(xType.getElementType()))
    return op->emitOpError()
           << "FP8 operands have no tile-level lowering yet (scale-block "
              "promotion is not implemented)";
  if (p.config.getSwapAb())
    return op->emitOpError() << "swap_ab configs need ggemm-swap-ab, which "
                                "is not implemented yet";
  Value numRows = dim(b, loc, p.x, 0);
  bool kn = p.layout == WeightLayout::kn;
  Value numCols = dim(b, loc, p.w, kn ? 2 : 1);
  auto loop = ForeachTileOp::create(
      b, loc, RowMappingAttr::get(b.getContext(), p.rowMapping), p.groupRows,
      p.numGroups, p.rowsPerGroup, numRows, numCols, p.config,
      /*persistent=*/b.getUnitAttr());
  Block *body =
      b.createBlock(&loop.getBody(), {}, SmallVector<Type>(4, b.getIndexType()),
                    SmallVector<Location>(4, loc));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  auto accType = AccumulatorType::get(
      b.getContext(), {p.config.getBlockM(), p.config.getBlockN()},
      b.getF32Type());
  auto mma = TileMmaOp::create(
      b, loc, accType, p.x, p.w, p.weightIndices, loop.getGroupArg(),
      loop.getRowBeginArg(), loop.getColBeginArg(), p.config,
      WeightLayoutAttr::get(b.getContext(), p.layout), PipelineAttr());
  TileStoreOp::create(b, loc, mma.getAcc(), p.y, p.weightIndices, p.bias,
                      p.rowScale, loop.getGroupArg(), loop.getRowBeginArg(),
                      loop.getRowEndArg(), loop.getColBeginArg(), p.epilogue);
  YieldOp::create(b, loc);
  return success();
}

struct TilePass : public ggemm::impl::GGemmTileBase<TilePass> {
  void runOnOperation() override {
    SmallVector<Operation *> problems;
    getOperation()->walk([&](Operation *op) {
      if (isa<SegmentMatmulOp, MaskedMatmulOp, BatchedMatmulOp>(op))
        problems.push_back(op);
    });
    for (Operation *op : problems) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      auto config = op->getAttrOfType<TileConfigAttr>("config");
      if (!config) {
        op->emitOpError()
            << "expects a tile config: run ggemm-select-config "
               "first or write `config = #ggemm.tile_config<...>`";
        return signalPassFailure();
      }
      TileProblem p;
      p.config = config;
      if (auto seg = dyn_cast<SegmentMatmulOp>(op)) {
        p.rowMapping = RowMapping::segment;
        p.groupRows = seg.getSegIndptr();
        p.numGroups =
            arith::SubIOp::create(b, loc, dim(b, loc, p.groupRows, 0),
                                  arith::ConstantIndexOp::create(b, loc, 1));
        p.rowsPerGroup = arith::ConstantIndexOp::create(b, loc, 0);
        p.x = seg.getX();
        p.w = seg.getW();
        p.y = seg.getY();
        p.weightIndices = seg.getWeightIndices();
        p.bias = seg.getBias();
        p.rowScale = seg.getRowScale();
        p.layout = seg.getWeightLayout();
        p.epilogue = seg.getEpilogueAttr();
      } else if (auto masked = dyn_cast<MaskedMatmulOp>(op)) {
        if (failed(checkCollapsible(op, {{"x", masked.getX()},
                                         {"y", masked.getY()},
                                         {"row_scale", masked.getRowScale()}})))
          return signalPassFailure();
        p.rowMapping = RowMapping::masked;
        p.groupRows = masked.getMaskedM();
        p.numGroups = dim(b, loc, masked.getX(), 0);
        p.rowsPerGroup = dim(b, loc, masked.getX(), 1);
        p.x = collapseLeading(b, loc, masked.getX());
        p.w = masked.getW();
        p.y = collapseLeading(b, loc, masked.getY());
        p.bias = masked.getBias();
        p.rowScale = collapseLeading(b, loc, masked.getRowScale());
        p.layout = masked.getWeightLayout();
        p.epilogue = masked.getEpilogueAttr();
      } else {
        auto batched = cast<BatchedMatmulOp>(op);
        if (failed(
                checkCollapsible(op, {{"x", batched.getX()},
                                      {"y", batched.getY()},
                                      {"row_scale", batched.getRowScale()}})))
          return signalPassFailure();
        p.rowMapping = RowMapping::uniform;
        p.numGroups = dim(b, loc, batched.getX(), 0);
        p.rowsPerGroup = dim(b, loc, batched.getX(), 1);
        p.x = collapseLeading(b, loc, batched.getX());
        p.w = batched.getW();
        p.y = collapseLeading(b, loc, batched.getY());
        p.bias = batched.getBias();
        p.rowScale = collapseLeading(b, loc, batched.getRowScale());
        p.layout = batched.getWeightLayout();
        p.epilogue = batched.getEpilogueAttr();
      }
      if (failed(emitTileProgram(b, op, p)))
        return signalPassFailure();
      op->erase();
    }
  }
};
} // namespace
