//===- GGemmTileOps.cpp - tile-level ops ----------------------------------===//

#include "VerifyUtils.h"

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::detail;

LogicalResult
mlir::ggemm::detail::verifyTileHeader(Operation *op, RowMapping rowMapping,
                                      Value groupRows, Value weightIndices,
                                      Value numWeights, TileConfigAttr config) {
  bool needsRows = rowMapping != RowMapping::uniform;
  if (needsRows && !groupRows)
    return op->emitOpError() << "expects a `rows` operand for row_mapping "
                             << stringifyRowMapping(rowMapping);
  if (!needsRows && groupRows)
    return op->emitOpError() << "expects no `rows` operand for row_mapping "
                                "uniform";
  if (static_cast<bool>(weightIndices) != static_cast<bool>(numWeights))
    return op->emitOpError() << "expects `weights` and `num_weights` together";
  return success();
}

//===----------------------------------------------------------------------===//
// ForeachTileOp
//===----------------------------------------------------------------------===//

LogicalResult ForeachTileOp::verify() {
  return verifyTileHeader(*this, getRowMapping(), getGroupRows(),
                          getWeightIndices(), getNumWeights(), getConfig());
}

LogicalResult ForeachTileOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != 4 ||
      !llvm::all_of(body.getArgumentTypes(),
                    [](Type t) { return t.isIndex(); })) {
    std::string types;
    llvm::raw_string_ostream os(types);
    llvm::interleaveComma(body.getArgumentTypes(), os);
    return emitOpError() << "expects the body to take 4 index arguments "
                            "(group, row, row_end, col), got ("
                         << types << ")";
  }
  return success();
}

void ForeachTileOp::getAsmBlockArgumentNames(Region &region,
                                             OpAsmSetValueNameFn setNameFn) {
  if (region.empty() || region.front().getNumArguments() != 4)
    return;
  const char *names[] = {"group", "row", "row_end", "col"};
  for (auto [arg, name] : llvm::zip(region.front().getArguments(), names))
    setNameFn(arg, name);
}

//===----------------------------------------------------------------------===//
// LoadTileOp
//===----------------------------------------------------------------------===//

LogicalResult LoadTileOp::verify() {
  MemRefType sourceType = getSource().getType();
  TileType tileType = getTile().getType();
  int64_t rank = sourceType.getRank();
  if (failed(verifyTileBox(*this, sourceType, getIndices().size(), tileType)))
    return failure();
  if (isQuantized(tileType.getElementType()) && tileType.isMNMajor())
    return emitOpError() << "expects a k_major " << tileType.getElementType()
                         << " tile (wgmma reads FP8 and INT8 operands K-major "
                            "only), got mn_major";
  if (static_cast<bool>(getGather()) != static_cast<bool>(getGatherEnd()))
    return emitOpError() << "expects gather indices and their end together";
  if (getGather()) {
    if (rank != 2 || tileType.isMNMajor())
      return emitOpError() << "expects a gathered tile to be a k_major tile "
                              "of a matrix (its rows are gathered), got a "
                           << (rank != 2 ? "batch source" : "mn_major tile");
    if (getKEnd() || getSplit())
      return emitOpError() << "expects no k_end or split with gather";
  }
  if (getKBegin() && !getKEnd())
    return emitOpError() << "expects k_begin only with k_end";
  if (getSplit() && tileType.getRows() % 2 != 0)
    return emitOpError() << "expects an even number of tile rows to split, "
                            "got "
                         << tileType.getRows();
  return verifyTmaOperand(*this, "source", sourceType);
}

//===----------------------------------------------------------------------===//
// MmaOp
//===----------------------------------------------------------------------===//

LogicalResult MmaOp::verify() {
  TileType a = getA().getType(), b = getB().getType();
  AccumulatorType acc = getAcc().getType();
  if (a.getRows() != acc.getShape()[0])
    return emitOpError() << "expects a's rows (" << a.getRows()
                         << ") to be the accumulator's rows ("
                         << acc.getShape()[0] << ")";
  if (b.getRows() != acc.getShape()[1])
    return emitOpError() << "expects b's rows (" << b.getRows()
                         << ") to be the accumulator's columns ("
                         << acc.getShape()[1] << ")";
  if (a.getK() != b.getK())
    return emitOpError() << "expects a and b over the same K block, got "
                         << a.getK() << " and " << b.getK();
  if (failed(verifyOperandTypes(*this, a.getElementType(), b.getElementType())))
    return failure();
  if (isQuantized(a.getElementType()) && (a.isMNMajor() || b.isMNMajor()))
    return emitOpError() << "expects k_major " << a.getElementType()
                         << " tiles (wgmma reads FP8 and INT8 operands "
                            "K-major only)";
  Type accElem = getAccumulatorElementType(a.getElementType());
  if (acc.getElementType() != accElem)
    return emitOpError() << "expects an " << accElem << " accumulator for "
                         << a.getElementType() << " tiles, got "
                         << acc.getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// LoadScalesOp
//===----------------------------------------------------------------------===//

LogicalResult LoadScalesOp::verify() {
  auto sourceType = cast<MemRefType>(getSource().getType());
  int64_t rank = sourceType.getRank();
  if (rank < 2)
    return emitOpError() << "expects source to have a row and a K-block "
                            "dimension (rank 2 or more), got rank "
                         << rank;
  if (static_cast<int64_t>(getIndices().size()) != rank)
    return emitOpError() << "expects " << rank
                         << " indices (one per dimension of source), got "
                         << getIndices().size();
  return success();
}

//===----------------------------------------------------------------------===//
// PromoteOp
//===----------------------------------------------------------------------===//

LogicalResult PromoteOp::verify() {
  ArrayRef<int64_t> shape = getAcc().getType().getShape();
  if (!getAcc().getType().getElementType().isF32())
    return emitOpError() << "expects an f32 accumulator (block scales promote "
                            "FP8 products), got "
                         << getAcc().getType().getElementType();
  if (!getAScales() && !getBScales())
    return emitOpError() << "expects a_scales, b_scales or both (without "
                            "scales the partial is added by ggemm.mma)";
  if (bool(getBOffset()) != bool(getBBlock()))
    return emitOpError() << "expects b_offset and b_block together (the "
                            "tile's place in its first weight scale block, "
                            "and the block's columns)";
  if (getBOffset()) {
    if (!getBScales())
      return emitOpError() << "expects b_scales with b_offset";
    int64_t block = *getBBlock();
    if (block % 8 != 0 || shape[1] % 8 != 0)
      return emitOpError() << "expects b_block (" << block
                           << ") and the accumulator's columns (" << shape[1]
                           << ") to be multiples of 8 (a tile's offset into a "
                              "block then moves by whole 8-column wgmma "
                              "fragments)";
    int64_t count = cast<ScalesType>(getBScales().getType()).getCount();
    int64_t expected = getScaleBlocksPerTile(shape[1], block);
    if (count != expected)
      return emitOpError() << "expects " << expected
                           << " b_scales (the most blocks of " << block
                           << " columns that a tile of " << shape[1]
                           << " columns covers), got " << count;
  }
  for (auto [name, scales, extent, what] :
       {std::tuple<StringRef, Value, int64_t, StringRef>{
            "a_scales", getAScales(), shape[0], "rows"},
        {"b_scales", getBScales(), shape[1], "columns"}}) {
    if (!scales || (scales == getBScales() && getBOffset()))
      continue;
    int64_t count = cast<ScalesType>(scales.getType()).getCount();
    if (count > extent || extent % count != 0)
      return emitOpError() << "expects the number of " << name << " (" << count
                           << ") to divide the accumulator's " << what << " ("
                           << extent << ")";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// StoreTileOp
//===----------------------------------------------------------------------===//

/// The FP8 epilogue scales of a store: given together, x's tensor-wise (an
/// index) or one per row, w's one per weight or one per output column.
static LogicalResult verifyEpilogueScales(StoreTileOp op, int64_t rows,
                                          int64_t n, bool gated) {
  Value xScale = op.getXScale(), wScale = op.getWScale();
  if (!xScale && op.getXScaleIndex())
    return op.emitOpError() << "expects an x_scale index only with x_scale";
  if (static_cast<bool>(wScale) != static_cast<bool>(op.getWScaleIndex()))
    return op.emitOpError() << "expects a w_scale index exactly when w_scale "
                               "is given (the weight matrix to read)";
  if (static_cast<bool>(xScale) != static_cast<bool>(wScale))
    return op.emitOpError()
           << "expects x_scale and w_scale together (the dequantisation of "
              "both FP8 operands), got only "
           << (xScale ? "x_scale" : "w_scale");
  if (!xScale)
    return success();
  if (gated)
    return op.emitOpError() << "expects no x_scale and w_scale with a gated "
                               "(swiglu) epilogue";
  if (op.hasPerRowXScale()) {
    int64_t scaleRows = cast<MemRefType>(xScale.getType()).getDimSize(0);
    if (!compatible(scaleRows, rows))
      return op.emitOpError()
             << "expects one x_scale entry per row (" << dimStr(rows)
             << ") without an index (per-row scales), got "
             << dimStr(scaleRows);
  }
  auto wType = cast<MemRefType>(wScale.getType());
  if (wType.getRank() != 1 && wType.getRank() != 2)
    return op.emitOpError() << "expects w_scale of rank 1 (one per weight) or "
                               "2 (one per weight and output column), got rank "
                            << wType.getRank();
  if (wType.getRank() == 2 && !compatible(wType.getDimSize(1), n))
    return op.emitOpError()
           << "expects per-channel w_scale rows of " << dimStr(n)
           << " columns, got " << dimStr(wType.getDimSize(1));
  return success();
}

/// An e4m3 y's store: `y_scale` exactly with an e4m3 y, `[rows,
/// ceil(N/128)]`, over whole 128-column blocks of an untransposed,
/// unstaged tile whose epilogue computes every value it writes.
static LogicalResult verifyQuantizedStore(StoreTileOp op, int64_t rows,
                                          int64_t n, bool gated) {
  Type yElem = op.getY().getType().getElementType();
  bool fp8Out = isa<Float8E4M3FNType>(yElem);
  Value yScale = op.getYScale();
  if (fp8Out != static_cast<bool>(yScale))
    return op.emitOpError()
           << (fp8Out ? "expects `y_scale` with an e4m3 y (its 1x128 scales)"
                      : "expects `y_scale` only with an e4m3 y");
  if (!yScale)
    return success();
  EpilogueAttr epilogue = op.getEpilogueAttr();
  if (op.getTransposed() || op.getScatter() ||
      (epilogue && (epilogue.getAccumulate() || epilogue.getAtomic())))
    return op.emitOpError()
           << "expects an e4m3 store without `transposed`, `scatter`, "
              "accumulate or atomic (each row's 128-column block is "
              "quantised as the tile computes it)";
  int64_t cols = op.getAcc().getType().getShape()[1] / (gated ? 2 : 1);
  if (cols % 128 != 0)
    return op.emitOpError() << "expects the tile's output columns (" << cols
                            << ") to be whole 128-column blocks of y";
  auto scaleType = cast<MemRefType>(yScale.getType());
  int64_t blocks = ShapedType::isDynamic(n) ? ShapedType::kDynamic
                                            : llvm::divideCeil(n, 128);
  if (!compatible(scaleType.getDimSize(0), rows) ||
      !compatible(scaleType.getDimSize(1), blocks))
    return op.emitOpError()
           << "expects y_scale of [" << dimStr(rows) << ", " << dimStr(blocks)
           << "] (one scale per row and 128 columns), got ["
           << dimStr(scaleType.getDimSize(0)) << ", "
           << dimStr(scaleType.getDimSize(1)) << "]";
  return success();
}

LogicalResult StoreTileOp::verify() {
  MemRefType yType = getY().getType();
  int64_t n = yType.getDimSize(1);
  EpilogueAttr epilogue = getEpilogueAttr();
  bool gated = epilogue && epilogue.isGated();
  if (static_cast<bool>(getBias()) != static_cast<bool>(getWeight()))
    return emitOpError() << "expects a `weight` index exactly when a bias is "
                            "given (the bias row to read)";
  if (Value bias = getBias()) {
    int64_t biasN = cast<MemRefType>(bias.getType()).getDimSize(1);
    int64_t expected = gated && !ShapedType::isDynamic(n) ? 2 * n : n;
    if (!compatible(biasN, expected))
      return emitOpError() << "expects bias rows of " << dimStr(expected)
                           << " columns" << (gated ? " (gate, then up)" : "")
                           << ", got " << dimStr(biasN);
  }
  // The rows the tile's row indices run over: y's, or scatter's.
  int64_t rows = yType.getDimSize(0);
  if (Value scatter = getScatter())
    rows = cast<MemRefType>(scatter.getType()).getDimSize(0);
  if (Value rowScale = getRowScale()) {
    int64_t scaleRows = cast<MemRefType>(rowScale.getType()).getDimSize(0);
    if (!compatible(scaleRows, rows))
      return emitOpError() << "expects one row_scale entry per row ("
                           << dimStr(rows) << "), got " << dimStr(scaleRows);
  }
  if (failed(verifyEpilogueScales(*this, rows, n, gated)))
    return failure();
  // An INT8 product's exact int32 sum becomes a number only through its
  // dequantisation.
  if (getAcc().getType().getElementType().isSignlessInteger(32) && !getXScale())
    return emitOpError() << "expects x_scale and w_scale for an i32 "
                            "accumulator (an INT8 product is dequantised by "
                            "its store)";
  if (gated) {
    int64_t accCols = getAcc().getType().getShape()[1];
    if (getTransposed() || accCols % 2 != 0)
      return emitOpError() << "expects a gated (swiglu) store of an "
                              "untransposed accumulator with an even number "
                              "of columns (gate half, up half)";
    // The store pairs columns j and j + accCols / 2: with interleaved
    // gate/up blocks those are a gate row and its up row only when the
    // tile is one block.
    int64_t block = epilogue.getGateUpBlock();
    if (block && accCols != 2 * block)
      return emitOpError() << "expects an accumulator of 2 x gate_up_block ("
                           << 2 * block << ") columns for a gated store of "
                           << "interleaved gate/up blocks, got " << accCols;
  }
  if (epilogue && epilogue.getAtomic() &&
      (!getScatter() || !epilogue.getAccumulate()))
    return emitOpError() << "expects an atomic epilogue only with `scatter` "
                            "and accumulate = true";
  if (StoreStagingAttr staging = getStagingAttr()) {
    // A scattered tile's rows are not a box of y: each goes out on its
    // own, and a value already in y would be read at the wrong row.
    if (getScatter() && !staging.getRowStores())
      return emitOpError() << "expects `row_stores = true` in the staging of "
                              "a scattered store (its rows are not a box of "
                              "y), got "
                           << staging;
    if (!getScatter() && staging.getRowStores())
      return emitOpError() << "expects `row_stores` staging only on a "
                              "scattered store (with `scatter`)";
    if (getScatter() && epilogue && epilogue.getAccumulate())
      return emitOpError() << "expects no `staging` on a scattered store "
                              "that accumulates into y (its adds are "
                              "per-element)";
    if (getTransposed())
      return emitOpError() << "expects no `staging` on a transposed store "
                              "(its fragments are columns of y)";
    int64_t elemBytes = getElementBytes(yType.getElementType());
    if (staging.getCols() * elemBytes != 128)
      return emitOpError() << "expects staging boxes of one 128-byte swizzle "
                              "row of y ("
                           << 128 / elemBytes << " columns of "
                           << yType.getElementType()
                           << "), got cols = " << staging.getCols();
    SmallVector<int64_t> acc(getAcc().getType().getShape());
    // A gated tile stores half its columns.
    if (gated)
      acc[1] /= 2;
    if (acc[0] % staging.getRows() != 0 || acc[1] % staging.getCols() != 0)
      return emitOpError() << "expects the accumulator (" << acc[0] << "x"
                           << acc[1] << ") to be whole staging boxes of "
                           << staging.getRows() << "x" << staging.getCols();
  }
  if (failed(verifyQuantizedStore(*this, rows, n, gated)))
    return failure();
  return success();
}
