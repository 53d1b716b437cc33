//===- SelectConfig.cpp - choose tile configs -----------------------------===//

#include "ggemm/Dialect/GGemm/Transforms/Passes.h"
#include "ggemm/Dialect/GGemm/Transforms/TileConfigHeuristics.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_GGEMMSELECTCONFIG
#include "ggemm/Dialect/GGemm/Transforms/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;

namespace {
/// Returns the problem summary of a grouped matmul op.
template <typename OpTy>
ProblemSummary summarise(OpTy op, int64_t groups, int64_t rowsPerGroup,
                         int64_t maxRowsPerGroup = 0) {
  ProblemSummary p;
  MemRefType wType = op.getW().getType();
  bool kn = op.getWeightLayout() == WeightLayout::kn;
  auto known = [](int64_t d) { return ShapedType::isDynamic(d) ? 0 : d; };
  p.n = known(kn ? wType.getDimSize(2) : wType.getDimSize(1));
  p.k = known(kn ? wType.getDimSize(1) : wType.getDimSize(2));
  p.elementBytes = getElementBytes(wType.getElementType());
  p.weightsNMajor = kn;
  p.blockScaled = op.getXScaleBlockAttr() && op.getXScaleBlockAttr().isBlock();
  p.numGroups = known(groups);
  p.rowsPerGroup = known(rowsPerGroup);
  p.maxRowsPerGroup = known(maxRowsPerGroup);
  return p;
}

struct SelectConfigPass
    : public ggemm::impl::GGemmSelectConfigBase<SelectConfigPass> {
  using Base::Base;

  void apply(Operation *op, const ProblemSummary &problem) {
    if (op->hasAttr("config"))
      return; // a user-given config wins
    TileChoice c = chooseTileConfig(problem, numSMs);
    auto config = TileConfigAttr::get(
        op->getContext(), c.blockM, c.blockN, c.blockK, c.stages,
        c.consumerWarpgroups, c.swapAB, /*cluster_m=*/1,
        /*cluster_n=*/1,
        c.rasterAlongM ? RasterOrder::along_m : RasterOrder::along_n);
    op->setAttr("config", config);
  }

  void runOnOperation() override {
    if (numSMs < 1 || expectedRows < 0) {
      getOperation().emitError()
          << getArgument()
          << ": expects num-sms >= 1 and expected-rows >= 0, got num-sms = "
          << numSMs.getValue()
          << ", expected-rows = " << expectedRows.getValue();
      return signalPassFailure();
    }
    getOperation()->walk([&](Operation *op) {
      if (auto seg = dyn_cast<SegmentMatmulOp>(op)) {
        // seg_indptr holds G + 1 entries; its size may be dynamic.
        int64_t indptrSize = seg.getSegIndptr().getType().getDimSize(0);
        int64_t groups = ShapedType::isDynamic(indptrSize)
                             ? ShapedType::kDynamic
                             : indptrSize - 1;
        int64_t rows = seg.getX().getType().getDimSize(0);
        int64_t perGroup = expectedRows;
        if (!perGroup && !ShapedType::isDynamic(rows) &&
            !ShapedType::isDynamic(groups) && groups > 0)
          perGroup = rows / groups;
        apply(op, summarise(seg, groups, perGroup));
      } else if (auto masked = dyn_cast<MaskedMatmulOp>(op)) {
        MemRefType x = masked.getX().getType();
        int64_t perGroup = expectedRows ? expectedRows : x.getDimSize(1);
        apply(op,
              summarise(masked, x.getDimSize(0), perGroup, x.getDimSize(1)));
      } else if (auto batched = dyn_cast<BatchedMatmulOp>(op)) {
        MemRefType x = batched.getX().getType();
        apply(op, summarise(batched, x.getDimSize(0), x.getDimSize(1),
                            x.getDimSize(1)));
      }
    });
  }
};
} // namespace
