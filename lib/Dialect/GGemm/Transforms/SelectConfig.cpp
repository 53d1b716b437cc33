//===- SelectConfig.cpp - choose tile configs -----------------------------===//
//
// A thin pass over TileConfigHeuristics: it reads what the IR says about a
// problem op (N, K, dtype, the rows per group when known), asks the
// heuristics, and writes the answer into the IR: a `config` per op, or, for
// ops whose rows per group are only known at run time (`variants=true`), one
// clone of the op's function per tile variant plus the host's dispatch rule
// in the module attribute `ggemm.dispatch`.
//
//===----------------------------------------------------------------------===//

#include "ggemm/Dialect/GGemm/Transforms/Passes.h"
#include "ggemm/Dialect/GGemm/Transforms/TileConfigHeuristics.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_GGEMMSELECTCONFIG
#include "ggemm/Dialect/GGemm/Transforms/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;

namespace {
/// Returns the problem summary of a grouped matmul op.
template <typename OpTy>
ProblemSummary summarise(OpTy op, int64_t groups, int64_t rowsPerGroup) {
  ProblemSummary p;
  MemRefType wType = op.getW().getType();
  bool kn = op.getWeightLayout() == WeightLayout::kn;
  auto known = [](int64_t d) { return ShapedType::isDynamic(d) ? 0 : d; };
  p.n = known(kn ? wType.getDimSize(2) : wType.getDimSize(1));
  p.k = known(kn ? wType.getDimSize(1) : wType.getDimSize(2));
  p.elementBytes = getElementBytes(wType.getElementType());
  p.integerOperands = isInt8(wType.getElementType());
  p.weightsNMajor = kn;
  p.blockScaled = op.getXScaleBlockAttr() && op.getXScaleBlockAttr().isBlock();
  EpilogueAttr epilogue = op.getEpilogueAttr();
  p.gated = epilogue && epilogue.isGated();
  p.fp8Output = isa<Float8E4M3FNType>(op.getY().getType().getElementType());
  p.noSwapAB = p.gated || p.fp8Output;
  if (epilogue && epilogue.isGated())
    p.gateUpBlock = epilogue.getGateUpBlock();
  if constexpr (std::is_same_v<OpTy, SegmentMatmulOp>)
    p.noSwapAB |= op.getRowIndices() || op.getScatterIndices();
  p.numGroups = known(groups);
  p.rowsPerGroup = known(rowsPerGroup);
  return p;
}

/// The problem summary of a K-ragged product: the output `dw[g]` is
/// `[rows, n]` with `(rows, n) = (dy's features, x's features)` (`nk`) or
/// the other way round (`kn`); both operand tiles are MN-major, or K-major
/// when `transposed` (FP8: block-scaled, one scale per row of each).
ProblemSummary summarise(SegmentMatmulKOp op) {
  auto known = [](int64_t d) { return ShapedType::isDynamic(d) ? 0 : d; };
  bool kn = op.getWeightLayout() == WeightLayout::kn;
  unsigned featureDim = 1 - op.getTokenDim();
  int64_t dyCols = op.getDy().getType().getDimSize(featureDim);
  int64_t xCols = op.getX().getType().getDimSize(featureDim);
  ProblemSummary p;
  p.rowsPerGroup = known(kn ? xCols : dyCols);
  p.n = known(kn ? dyCols : xCols);
  p.numGroups = known(op.getDw().getType().getDimSize(0));
  p.elementBytes = getElementBytes(op.getX().getType().getElementType());
  p.weightsNMajor = !op.getTransposed();
  p.blockScaled = p.perColumnScales = bool(op.getDyScale());
  return p;
}

/// What the pass knows about one problem op.
struct Analysis {
  Operation *op;
  /// The rows per group set (0: unknown, many rows are assumed).
  ProblemSummary summary;
  /// No hint and no static shape gives the rows per group: a launch's rows
  /// may call for another tile.
  bool rowsUnknown = false;
  /// A static bound on the rows per group (masked: Mmax; segment: M), or 0.
  int64_t maxRowsPerGroup = 0;
};

TileConfigAttr toAttr(MLIRContext *ctx, const TileChoice &c) {
  return TileConfigAttr::get(ctx, c.blockM, c.blockN, c.blockK, c.stages,
                             c.consumerWarpgroups, c.swapAB, /*cluster_m=*/1,
                             /*cluster_n=*/1,
                             c.rasterAlongM ? RasterOrder::along_m
                                            : RasterOrder::along_n,
                             /*pingpong=*/false, c.swizzle, c.swizzleMinTiles,
                             c.promotePairs, c.splitK,
                             /*split_k_tail=*/false);
}

struct SelectConfigPass
    : public ggemm::impl::GGemmSelectConfigBase<SelectConfigPass> {
  using Base::Base;

  /// The rows per group a hint gives: the op's expected_m, then the pass's
  /// expected-rows; 0 without either.
  int64_t hintedRows(std::optional<int64_t> expectedM) const {
    if (expectedM)
      return *expectedM;
    return expectedRows;
  }

  std::optional<Analysis> analyse(Operation *op) const {
    auto dynamic = [](int64_t d) { return ShapedType::isDynamic(d); };
    Analysis a{op, {}, false, 0};
    if (auto seg = dyn_cast<SegmentMatmulOp>(op)) {
      // seg_indptr holds G + 1 entries; its size may be dynamic.
      int64_t indptrSize = seg.getSegIndptr().getType().getDimSize(0);
      int64_t groups =
          dynamic(indptrSize) ? ShapedType::kDynamic : indptrSize - 1;
      // The segments' rows: x's, or row_indices' when x is gathered.
      int64_t rows =
          seg.getRowIndices()
              ? cast<MemRefType>(seg.getRowIndices().getType()).getDimSize(0)
              : seg.getX().getType().getDimSize(0);
      int64_t perGroup = hintedRows(seg.getExpectedM());
      if (!perGroup && !dynamic(rows) && !dynamic(groups) && groups > 0)
        perGroup = rows / groups;
      a.summary = summarise(seg, groups, perGroup);
      a.rowsUnknown = perGroup == 0;
      a.maxRowsPerGroup = dynamic(rows) ? 0 : rows;
      a.summary.maxRowsPerGroup = a.maxRowsPerGroup;
      return a;
    }
    if (auto masked = dyn_cast<MaskedMatmulOp>(op)) {
      MemRefType x = masked.getX().getType();
      int64_t hint = hintedRows(masked.getExpectedM());
      // Mmax only bounds the valid rows: without a hint they are unknown,
      // and a single config is chosen for Mmax.
      a.summary =
          summarise(masked, x.getDimSize(0), hint ? hint : x.getDimSize(1));
      a.rowsUnknown = hint == 0;
      a.maxRowsPerGroup = dynamic(x.getDimSize(1)) ? 0 : x.getDimSize(1);
      a.summary.maxRowsPerGroup = a.maxRowsPerGroup;
      return a;
    }
    if (auto batched = dyn_cast<BatchedMatmulOp>(op)) {
      MemRefType x = batched.getX().getType();
      // A static M is exact; a hint stands in for a dynamic one only.
      int64_t rows = x.getDimSize(1);
      if (dynamic(rows))
        rows = hintedRows(batched.getExpectedM());
      a.summary = summarise(batched, x.getDimSize(0), rows);
      a.summary.maxRowsPerGroup = dynamic(x.getDimSize(1)) ? 0 : rows;
      a.rowsUnknown = dynamic(x.getDimSize(1)) && rows == 0;
      return a;
    }
    return std::nullopt;
  }

  /// The function whose clones would carry the variants of `op`: a
  /// top-level function that holds no other problem op and has no callers
  /// (a caller could not choose a clone). Null otherwise.
  FunctionOpInterface variantHost(Operation *op, ModuleOp module) const {
    auto func = op->getParentOfType<FunctionOpInterface>();
    if (!func || func->getParentOp() != module.getOperation())
      return {};
    int problemOps = 0;
    func->walk([&](Operation *inner) {
      if (isa<SegmentMatmulOp, MaskedMatmulOp, BatchedMatmulOp>(inner))
        ++problemOps;
    });
    if (problemOps != 1)
      return {};
    if (std::optional<SymbolTable::UseRange> uses =
            SymbolTable::getSymbolUses(func, module);
        !uses || !uses->empty())
      return {};
    return func;
  }

  /// Clones `func` once per variant, sets each clone's problem op's config,
  /// erases `func` and returns the dispatch entry of `ggemm.dispatch`.
  DictionaryAttr emitVariants(FunctionOpInterface func, ModuleOp module,
                              ArrayRef<TileVariant> variants) {
    MLIRContext *ctx = module.getContext();
    Builder b(ctx);
    SymbolTable symbols(module);
    SmallVector<Attribute> names;
    SmallVector<int64_t> bounds;
    Operation *insertAfter = func;
    for (auto [index, variant] : llvm::enumerate(variants)) {
      Operation *clone = func->clone();
      SymbolTable::setSymbolName(clone,
                                 (func.getName() + "_v" + Twine(index)).str());
      module.getBody()->getOperations().insertAfter(
          Block::iterator(insertAfter), clone);
      // Renames the clone when its name is taken.
      StringAttr name = symbols.insert(clone, Block::iterator(clone));
      clone->walk([&](Operation *inner) {
        if (isa<SegmentMatmulOp, MaskedMatmulOp, BatchedMatmulOp>(inner))
          inner->setAttr("config", toAttr(ctx, variant.tile));
      });
      names.push_back(name);
      if (variant.maxRowsPerGroup > 0)
        bounds.push_back(variant.maxRowsPerGroup);
      insertAfter = clone;
    }
    symbols.erase(func);
    return b.getDictionaryAttr(
        {b.getNamedAttr("rule", b.getStringAttr("rows_per_group")),
         b.getNamedAttr("variants", b.getArrayAttr(names)),
         b.getNamedAttr("bounds", b.getI64ArrayAttr(bounds))});
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
    ModuleOp module = getOperation();
    SmallVector<Analysis> ops;
    module->walk([&](Operation *op) {
      if (std::optional<Analysis> a = analyse(op))
        ops.push_back(*a);
    });
    // K-ragged products: one config, their output shape is fixed.
    module->walk([&](SegmentMatmulKOp op) {
      if (!op.getConfig())
        op.setConfigAttr(toAttr(
            op.getContext(), chooseKRaggedTileConfig(summarise(op), numSMs)));
    });

    SmallVector<NamedAttribute> dispatch;
    if (auto existing = module->getAttrOfType<DictionaryAttr>("ggemm.dispatch"))
      dispatch.append(existing.begin(), existing.end());
    size_t dispatchEntries = dispatch.size();
    for (const Analysis &a : ops) {
      if (a.op->hasAttr("config"))
        continue; // a user-given config wins
      if (variants && a.rowsUnknown) {
        if (FunctionOpInterface func = variantHost(a.op, module)) {
          std::vector<TileVariant> choices =
              chooseVariants(a.summary, numSMs, a.maxRowsPerGroup);
          if (choices.size() > 1) {
            StringAttr original = func.getNameAttr();
            dispatch.push_back(
                NamedAttribute(original, emitVariants(func, module, choices)));
            continue;
          }
        }
      }
      TileChoice c = chooseTileConfig(a.summary, numSMs);
      a.op->setAttr("config", toAttr(a.op->getContext(), c));
    }
    if (dispatch.size() != dispatchEntries)
      module->setAttr("ggemm.dispatch",
                      DictionaryAttr::get(module.getContext(), dispatch));
  }
};
} // namespace
