//===- GGemmOps.cpp - ggemm operations and verifiers ----------------------===//

#include "RegionParsing.h"
#include "VerifyUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::detail;

namespace {
/// The logical dimensions of a grouped matmul.
struct ProblemDims {
  int64_t rows;    // rows of x seen as a matrix (M)
  int64_t n;       // output columns
  int64_t k;       // reduction extent
  int64_t weights; // number of weight matrices (Gw)
};

/// Shape of the scales expected for one operand with logical extent
/// `[lead..., rows, k]` under `block`.
SmallVector<int64_t> expectedScaleShape(ArrayRef<int64_t> lead, int64_t rows,
                                        int64_t k, ScaleBlockAttr block) {
  SmallVector<int64_t> shape(lead);
  auto ceilDiv = [](int64_t a, int64_t b) {
    return ShapedType::isDynamic(a) ? ShapedType::kDynamic
                                    : llvm::divideCeil(a, b);
  };
  // One scale for the whole tensor, whatever its groups: FlashInfer's and
  // torch's scalar activation scale. Per-group activation scales are
  // per-row scales with equal rows.
  if (block.isTensorWise())
    return {1};
  if (block.isPerRow()) {
    shape.push_back(rows);
    return shape;
  }
  shape.push_back(ceilDiv(rows, block.getRows()));
  shape.push_back(ceilDiv(k, block.getCols()));
  return shape;
}

/// Verifies the FP8 / INT8 scale operands and attributes of a problem op.
LogicalResult verifyScales(Operation *op, Type aType, Value xScale,
                           Value wScale, ScaleBlockAttr xBlock,
                           ScaleBlockAttr wBlock, ArrayRef<int64_t> xLead,
                           int64_t rows, const ProblemDims &dims) {
  if (!isQuantized(aType)) {
    if (xScale || wScale)
      return op->emitOpError() << "expects no scales for " << aType
                               << " operands; scales apply to FP8 and INT8 "
                                  "only";
    if (xBlock || wBlock)
      return op->emitOpError() << "expects no scale_block attributes for "
                               << aType << " operands";
    return success();
  }
  StringRef kind = isInt8(aType) ? "INT8" : "FP8";
  if (!xScale || !wScale)
    return op->emitOpError()
           << "expects `scales(x_scale, w_scale)` for " << kind << " operands";
  if (!xBlock || !wBlock)
    return op->emitOpError() << "expects `x_scale_block` and `w_scale_block` "
                                "attributes for "
                             << kind << " operands";
  // The int32 sum of a K block cannot be scaled per block without losing
  // its exactness: INT8 is dequantised once, in the epilogue.
  if (isInt8(aType))
    for (auto [name, block] :
         {std::pair<StringRef, ScaleBlockAttr>{"x_scale_block", xBlock},
          {"w_scale_block", wBlock}})
      if (block.isBlock())
        return op->emitOpError()
               << "expects a tensor-wise or per-row " << name
               << " for INT8 operands (they are dequantised once, in the "
                  "epilogue), got "
               << block;
  for (ScaleBlockAttr block : {xBlock, wBlock}) {
    if (!block.isBlock() || ShapedType::isDynamic(dims.k))
      continue;
    if (dims.k % block.getCols() != 0)
      return op->emitOpError() << "expects K (" << dims.k
                               << ") to be a multiple of the scale block ("
                               << block.getCols() << ")";
  }
  if (failed(verifyShape(op, "x_scale", cast<MemRefType>(xScale.getType()),
                         expectedScaleShape(xLead, rows, dims.k, xBlock))))
    return failure();
  // Weight scales are per weight matrix: tensor-wise means one per group.
  SmallVector<int64_t> wShape =
      wBlock.isTensorWise()
          ? SmallVector<int64_t>{dims.weights}
          : expectedScaleShape({dims.weights}, dims.n, dims.k, wBlock);
  return verifyShape(op, "w_scale", cast<MemRefType>(wScale.getType()), wShape);
}

/// Verifies an e4m3 y's 1x128 scales: `y_scale` exactly with an e4m3 y,
/// `[lead..., rows, ceil(N/128)]` (ggemm-tile checks that the groups of a
/// masked or batched one collapse, as it does for y), an epilogue that
/// computes every value it quantises, and a tile config of whole,
/// unswapped 128-column blocks.
template <typename OpTy>
LogicalResult verifyYScale(OpTy op, ArrayRef<int64_t> lead,
                           const ProblemDims &dims, Value scatterIndices,
                           bool gated) {
  auto yType = cast<MemRefType>(op.getY().getType());
  Value yScale = op.getYScale();
  bool fp8Out = isa<Float8E4M3FNType>(yType.getElementType());
  if (fp8Out && !yScale)
    return op.emitOpError() << "expects `y_scale` with an e4m3 y (its 1x128 "
                               "scales, computed in the epilogue)";
  if (!fp8Out && yScale)
    return op.emitOpError()
           << "expects no `y_scale` for a " << yType.getElementType()
           << " y (y_scale goes with an e4m3 y)";
  if (!yScale)
    return success();
  EpilogueAttr epilogue = op.getEpilogueAttr();
  if (epilogue && (epilogue.getAccumulate() || epilogue.getAtomic()))
    return op.emitOpError() << "expects no accumulate or atomic epilogue with "
                               "an e4m3 y (the epilogue quantises the values "
                               "it computes)";
  if (scatterIndices)
    return op.emitOpError() << "expects no scatter_indices with an e4m3 y";
  auto scaleType = cast<MemRefType>(yScale.getType());
  SmallVector<int64_t> shape(lead);
  shape.push_back(yType.getDimSize(lead.size()));
  shape.push_back(ShapedType::isDynamic(dims.n)
                      ? ShapedType::kDynamic
                      : llvm::divideCeil(dims.n, 128));
  if (failed(verifyShape(op, "y_scale", scaleType, shape)))
    return failure();
  if (TileConfigAttr config = op.getConfigAttr()) {
    int64_t outCols = gated ? config.getBlockN() / 2 : config.getBlockN();
    if (config.getSwapAb() || outCols % 128 != 0)
      return op.emitOpError()
             << "expects a tile config without swap_ab whose tiles are whole "
                "128-column blocks of an e4m3 y (each row's block maximum "
                "is taken in the tile), got block_n = "
             << config.getBlockN()
             << (config.getSwapAb() ? " with swap_ab" : "");
  }
  return success();
}

/// Verifies what segment, masked and batched matmul share: x is
/// `[lead..., rows, K]`, w is `[Gw, N, K]` or `[Gw, K, N]`, y is
/// `[lead..., rows, N]`.
template <typename OpTy>
LogicalResult verifyGroupedMatmul(OpTy op, ArrayRef<int64_t> lead,
                                  ProblemDims &dims) {
  Operation *operation = op.getOperation();
  auto xType = cast<MemRefType>(op.getX().getType());
  auto wType = cast<MemRefType>(op.getW().getType());
  auto yType = cast<MemRefType>(op.getY().getType());
  Type aElem = xType.getElementType();
  if (failed(verifyOperandTypes(operation, aElem, wType.getElementType())))
    return failure();

  bool kn = op.getWeightLayout() == WeightLayout::kn;
  dims.rows = xType.getShape()[lead.size()];
  dims.k = xType.getShape().back();
  dims.weights = wType.getDimSize(0);
  dims.n = kn ? wType.getDimSize(2) : wType.getDimSize(1);
  // Gathered x: M is the length of row_indices, not x's rows.
  Value rowIndices, scatterIndices;
  if constexpr (std::is_same_v<OpTy, SegmentMatmulOp>) {
    rowIndices = op.getRowIndices();
    scatterIndices = op.getScatterIndices();
  }
  if (rowIndices)
    dims.rows = cast<MemRefType>(rowIndices.getType()).getDimSize(0);
  EpilogueAttr epilogue = op.getEpilogueAttr();
  // A gated epilogue reads 2N weight rows (gate, then up) per N outputs.
  bool gated = epilogue && epilogue.isGated();
  int64_t wRows = dims.n;
  if (gated) {
    if (!ShapedType::isDynamic(wRows) && wRows % 2 != 0)
      return op.emitOpError()
             << "expects w's N extent (" << wRows
             << ") to be even for activation = swiglu (gate rows, then as "
                "many up rows)";
    if (!ShapedType::isDynamic(wRows))
      dims.n = wRows / 2;
    // Interleaved gate/up blocks: the 2N rows are whole blocks of 2B, and
    // each tile is one of them.
    if (int64_t block = epilogue.getGateUpBlock()) {
      if (!ShapedType::isDynamic(dims.n) && dims.n % block != 0)
        return op.emitOpError()
               << "expects N (" << dims.n << ", half of w's N extent) to be "
               << "a multiple of gate_up_block (" << block
               << "): w's rows are whole blocks of gate and up rows";
      TileConfigAttr config = op.getConfigAttr();
      if (config && config.getBlockN() != 2 * block)
        return op.emitOpError()
               << "expects the tile config's block_n to be 2 x gate_up_block ("
               << 2 * block << ": one tile per block of gate and up rows), got "
               << config.getBlockN();
    }
  }
  if (epilogue && epilogue.getAtomic() &&
      (!scatterIndices || !epilogue.getAccumulate()))
    return op.emitOpError()
           << "expects an atomic epilogue only with scatter_indices and "
              "accumulate = true (atomic adds rows of y in), got "
           << (scatterIndices ? "no accumulate" : "no scatter_indices");
  int64_t wK = kn ? wType.getDimSize(1) : wType.getDimSize(2);
  if (!compatible(wK, dims.k))
    return op.emitOpError()
           << "expects w's K (" << dimStr(wK) << ") to match x's K ("
           << dimStr(dims.k) << ") for weight_layout "
           << stringifyWeightLayout(op.getWeightLayout());
  if (!ShapedType::isDynamic(dims.k) && dims.k == 0)
    return op.emitOpError() << "expects a non-empty reduction (K > 0)";

  SmallVector<int64_t> yShape(lead);
  // Scattered y has any number of rows.
  yShape.push_back(scatterIndices ? ShapedType::kDynamic : dims.rows);
  yShape.push_back(dims.n);
  if (failed(verifyShape(operation, "y", yType, yShape)))
    return failure();
  if (scatterIndices &&
      failed(verifyShape(operation, "scatter_indices",
                         cast<MemRefType>(scatterIndices.getType()),
                         {dims.rows})))
    return failure();
  if (failed(verifyYScale(op, lead, dims, scatterIndices, gated)))
    return failure();

  if (failed(verifyTmaOperand(operation, "x", xType)) ||
      failed(verifyTmaOperand(operation, "w", wType)))
    return failure();

  // Activation scales go with x's rows (gathered with them), weight scales
  // with w's rows (2N when gated).
  ProblemDims scaleDims = dims;
  scaleDims.n = wRows;
  if (failed(verifyScales(operation, aElem, op.getXScale(), op.getWScale(),
                          op.getXScaleBlockAttr(), op.getWScaleBlockAttr(),
                          lead, xType.getShape()[lead.size()], scaleDims)))
    return failure();

  if (Value bias = op.getBias())
    if (failed(verifyShape(operation, "bias", cast<MemRefType>(bias.getType()),
                           {dims.weights, gated ? wRows : dims.n})))
      return failure();
  if (Value rowScale = op.getRowScale()) {
    SmallVector<int64_t> rsShape(lead);
    rsShape.push_back(dims.rows);
    if (failed(verifyShape(operation, "row_scale",
                           cast<MemRefType>(rowScale.getType()), rsShape)))
      return failure();
  }
  return verifyConfigForType(operation, op.getConfigAttr(), aElem);
}
} // namespace

//===----------------------------------------------------------------------===//
// Problem-level ops
//===----------------------------------------------------------------------===//

#define GGEMM_PROBLEM_ACCESSORS(OP)                                            \
  Type OP::getAElementType() { return getX().getType().getElementType(); }     \
  Type OP::getBElementType() { return getW().getType().getElementType(); }

GGEMM_PROBLEM_ACCESSORS(SegmentMatmulOp)
GGEMM_PROBLEM_ACCESSORS(MaskedMatmulOp)
GGEMM_PROBLEM_ACCESSORS(BatchedMatmulOp)
#undef GGEMM_PROBLEM_ACCESSORS

/// `expected_m` is a hint of the rows per group: positive, and no more than
/// `maxRows` where the op bounds them statically (Mmax, M).
static LogicalResult verifyExpectedM(Operation *op,
                                     std::optional<int64_t> expectedM,
                                     int64_t maxRows, StringRef bound) {
  if (!expectedM)
    return success();
  if (*expectedM <= 0)
    return op->emitOpError()
           << "expects expected_m to be positive, got " << *expectedM;
  if (!ShapedType::isDynamic(maxRows) && *expectedM > maxRows)
    return op->emitOpError()
           << "expects expected_m (" << *expectedM << ") to be at most "
           << bound << " (" << maxRows << ")";
  return success();
}

LogicalResult SegmentMatmulOp::verify() {
  ProblemDims dims;
  if (failed(verifyGroupedMatmul(*this, {}, dims)))
    return failure();
  // Rows per group are at most M, but any positive guess is a valid hint.
  if (failed(verifyExpectedM(*this, getExpectedM(), ShapedType::kDynamic, "")))
    return failure();
  int64_t indptrSize = getSegIndptr().getType().getDimSize(0);
  if (!ShapedType::isDynamic(indptrSize) && indptrSize < 1)
    return emitOpError() << "expects seg_indptr to hold G + 1 >= 1 entries, "
                            "got "
                         << indptrSize;
  int64_t groups =
      ShapedType::isDynamic(indptrSize) ? ShapedType::kDynamic : indptrSize - 1;
  if (Value indices = getWeightIndices()) {
    int64_t n = cast<MemRefType>(indices.getType()).getDimSize(0);
    if (!compatible(n, groups))
      return emitOpError() << "expects weight_indices to hold one entry per "
                              "segment ("
                           << dimStr(groups) << "), got " << dimStr(n);
  } else if (!compatible(groups, dims.weights)) {
    return emitOpError() << "expects one weight per segment without "
                            "weight_indices: w has "
                         << dimStr(dims.weights) << " weights, seg_indptr "
                         << dimStr(groups) << " segments";
  }
  return success();
}

LogicalResult MaskedMatmulOp::verify() {
  int64_t groups = getX().getType().getDimSize(0);
  ProblemDims dims;
  if (failed(verifyGroupedMatmul(*this, {groups}, dims)))
    return failure();
  if (!compatible(dims.weights, groups))
    return emitOpError() << "expects one weight per group: x has "
                         << dimStr(groups) << " groups, w has "
                         << dimStr(dims.weights);
  if (failed(verifyExpectedM(*this, getExpectedM(), dims.rows, "Mmax")))
    return failure();
  return verifyShape(*this, "masked_m", getMaskedM().getType(), {groups});
}

LogicalResult BatchedMatmulOp::verify() {
  int64_t batch = getX().getType().getDimSize(0);
  ProblemDims dims;
  if (failed(verifyGroupedMatmul(*this, {batch}, dims)))
    return failure();
  if (!compatible(dims.weights, batch))
    return emitOpError() << "expects one weight per batch: x has "
                         << dimStr(batch) << " batches, w has "
                         << dimStr(dims.weights);
  return verifyExpectedM(*this, getExpectedM(), dims.rows, "M");
}

LogicalResult SegmentMatmulKOp::verify() {
  MemRefType dyType = getDy().getType(), xType = getX().getType(),
             dwType = getDw().getType();
  Type elementType = xType.getElementType();
  bool fp8 = isFp8(elementType);
  if (bool(getDyScale()) != bool(getXScale()))
    return emitOpError() << "expects dy_scale and x_scale together, got "
                         << (getDyScale() ? "dy_scale" : "x_scale") << " alone";
  if (dyType.getElementType() != elementType ||
      !(elementType.isBF16() || elementType.isF16() || fp8))
    return emitOpError() << "expects dy and x to be both bf16, both f16 or "
                            "both the same FP8 type, got "
                         << dyType.getElementType() << " and " << elementType;
  if (fp8 && !getTransposed())
    return emitOpError()
           << "expects FP8 dy and x to be given transposed ([N, T] and [K, "
              "T], `transposed`): wgmma's FP8 forms read K-major operands, "
              "and the tokens are K here";
  if (fp8 && !getDyScale())
    return emitOpError() << "expects scales (dy_scale and x_scale, 1x128 "
                            "along the tokens) for FP8 dy and x";
  if (!fp8 && getDyScale())
    return emitOpError() << "expects no scales for " << elementType
                         << " dy and x (scales are for FP8 operands)";
  unsigned tokenDim = getTokenDim(), featureDim = 1 - tokenDim;
  const char *tokens = getTransposed() ? "columns" : "rows";
  int64_t numTokens = dyType.getDimSize(tokenDim);
  if (!compatible(numTokens, xType.getDimSize(tokenDim)))
    return emitOpError() << "expects dy and x to have the same token " << tokens
                         << ", got " << dimStr(numTokens) << " and "
                         << dimStr(xType.getDimSize(tokenDim));
  int64_t indptrSize = getSegIndptr().getType().getDimSize(0);
  if (!ShapedType::isDynamic(indptrSize) && indptrSize < 1)
    return emitOpError() << "expects seg_indptr to hold G + 1 >= 1 entries, "
                            "got "
                         << indptrSize;
  int64_t groups =
      ShapedType::isDynamic(indptrSize) ? ShapedType::kDynamic : indptrSize - 1;
  int64_t n = dyType.getDimSize(featureDim), k = xType.getDimSize(featureDim);
  SmallVector<int64_t> expected = getWeightLayout() == WeightLayout::kn
                                      ? SmallVector<int64_t>{groups, k, n}
                                      : SmallVector<int64_t>{groups, n, k};
  if (failed(verifyShape(*this, "dw", dwType, expected)))
    return failure();
  if (getDyScale()) {
    // One scale per operand row and 128-token block.
    int64_t blocks = ShapedType::isDynamic(numTokens)
                         ? ShapedType::kDynamic
                         : llvm::divideCeil(numTokens, 128);
    if (failed(verifyShape(*this, "dy_scale", getDyScale().getType(),
                           {n, blocks})) ||
        failed(
            verifyShape(*this, "x_scale", getXScale().getType(), {k, blocks})))
      return failure();
  }
  if (failed(verifyTmaOperand(*this, "dy", dyType)) ||
      failed(verifyTmaOperand(*this, "x", xType)))
    return failure();
  return verifyConfigForType(*this, getConfigAttr(), elementType);
}

LogicalResult QuantizeOp::verify() {
  MemRefType xType = getX().getType(), qType = getQ().getType(),
             sType = getScale().getType();
  ScaleBlockAttr block = getBlockShape();
  if (!block.isBlock())
    return emitOpError() << "expects an RxC scale_block (1x128 per token, "
                            "128x128 per block), got "
                         << block;
  if (failed(verifyShape(*this, "q", qType, xType.getShape())))
    return failure();
  ArrayRef<int64_t> shape = xType.getShape();
  int64_t rows = shape[shape.size() - 2], k = shape.back();
  if (!ShapedType::isDynamic(k) && k % block.getCols() != 0)
    return emitOpError() << "expects K (" << k
                         << ") to be a multiple of the scale block ("
                         << block.getCols() << ")";
  SmallVector<int64_t> expected(shape.drop_back(2));
  expected.push_back(ShapedType::isDynamic(rows)
                         ? ShapedType::kDynamic
                         : llvm::divideCeil(rows, block.getRows()));
  expected.push_back(ShapedType::isDynamic(k) ? ShapedType::kDynamic
                                              : k / block.getCols());
  return verifyShape(*this, "scale", sType, expected);
}

LogicalResult SortByExpertOp::verify() {
  int64_t topk = getTopk();
  if (topk <= 0)
    return emitOpError() << "expects a positive topk, got " << topk;
  int64_t experts = getSegIndptr().getType().getDimSize(0);
  if (ShapedType::isDynamic(experts) || experts < 2)
    return emitOpError() << "expects seg_indptr of static size E + 1 with at "
                            "least one expert, got "
                         << getSegIndptr().getType();
  int64_t pairs = getTopkIds().getType().getDimSize(0);
  if (!ShapedType::isDynamic(pairs) && pairs % topk != 0)
    return emitOpError() << "expects the pairs of topk_ids (" << pairs
                         << ") to be a multiple of topk (" << topk << ")";
  if (failed(verifyShape(*this, "row_indices", getRowIndices().getType(),
                         {pairs})))
    return failure();
  return verifyShape(*this, "pair_indices", getPairIndices().getType(),
                     {pairs});
}

//===----------------------------------------------------------------------===//
// Custom assembly directives of the tile and schedule ops
//===----------------------------------------------------------------------===//

/// Parses an enum written as a bare keyword (`segment`, `persistent`) into
/// its attribute; `expected` lists the keywords for the diagnostic.
template <typename AttrT, typename EnumT>
static ParseResult
parseEnumKeyword(OpAsmParser &parser, AttrT &attr,
                 std::optional<EnumT> (*symbolize)(StringRef),
                 StringRef expected) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<EnumT> value = symbolize(keyword);
  if (!value)
    return parser.emitError(loc)
           << "expected " << expected << ", got '" << keyword << "'";
  attr = AttrT::get(parser.getContext(), *value);
  return success();
}

/// `ggemm.foreach_tile segment ...`: the row mapping as a bare keyword.
static ParseResult parseRowMapping(OpAsmParser &parser, RowMappingAttr &attr) {
  return parseEnumKeyword(parser, attr, symbolizeRowMapping,
                          "a row mapping (segment, masked or uniform)");
}

static void printRowMapping(OpAsmPrinter &printer, Operation *,
                            RowMappingAttr attr) {
  printer << stringifyRowMapping(attr.getValue());
}

/// `ggemm.launch %s grid(persistent)`: the grid policy as a bare keyword.
static ParseResult parseGridPolicy(OpAsmParser &parser, GridPolicyAttr &attr) {
  return parseEnumKeyword(parser, attr, symbolizeGridPolicy,
                          "a grid policy (persistent or tiles)");
}

static void printGridPolicy(OpAsmPrinter &printer, Operation *,
                            GridPolicyAttr attr) {
  printer << stringifyGridPolicy(attr.getValue());
}

/// The ring type of a ring op, from which the types of its tiles follow.
static ParseResult parseRingTiles(OpAsmParser &parser, Type &ringType,
                                  SmallVectorImpl<Type> &tileTypes) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseType(ringType))
    return failure();
  auto ring = dyn_cast<RingType>(ringType);
  if (!ring)
    return parser.emitError(loc)
           << "expected a !ggemm.ring type, got " << ringType;
  llvm::append_range(tileTypes, ring.getTiles());
  return success();
}

static void printRingTiles(OpAsmPrinter &printer, Operation *, Type ringType,
                           TypeRange) {
  printer << ringType;
}

#define GET_OP_CLASSES
#include "ggemm/Dialect/GGemm/IR/GGemmOps.cpp.inc"

namespace mlir::ggemm {
#include "ggemm/Dialect/GGemm/IR/GGemmCheckedTypes.cpp.inc"
} // namespace mlir::ggemm
