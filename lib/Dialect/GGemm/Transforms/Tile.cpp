//===- Tile.cpp - problem level -> tile level -----------------------------===//

#include "ggemm/Dialect/GGemm/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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
  /// An e4m3 y's 1x128 scales (`[rows, ceil(N/128)]`), null otherwise.
  Value yScale;
  /// segment_matmul only: gathered x rows, scattered y rows.
  Value rowIndices, scatterIndices;
  /// FP8 only: the scales and their blocks.
  Value xScale, wScale;
  ScaleBlockAttr xBlock, wBlock;
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

/// The activation scales that have a row dimension to collapse like x, or
/// null: tensor-wise scales (`[1]`, one for all of x) have none.
Value scalesWithRows(Value scales, ScaleBlockAttr block) {
  return scales && !block.isTensorWise() ? scales : Value();
}

/// Collapses `[G, M, ...]` activation scales to `[G * M, ...]` like x, when
/// they have a row dimension (tensor-wise scales have none).
Value collapseScales(OpBuilder &b, Location loc, Value scales,
                     ScaleBlockAttr block) {
  if (!scalesWithRows(scales, block))
    return scales;
  return collapseLeading(b, loc, scales);
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

/// `memref.dim`, a constant when the size is static.
Value dim(OpBuilder &b, Location loc, Value v, int64_t d) {
  auto type = cast<MemRefType>(v.getType());
  if (!type.isDynamicDim(d))
    return arith::ConstantIndexOp::create(b, loc, type.getDimSize(d));
  return memref::DimOp::create(b, loc, v, d);
}

/// The number of `blockK` blocks of dimension `d` of `v`: a constant when
/// the size is static, else `(size + blockK - 1) / blockK`.
Value kBlockCount(OpBuilder &b, Location loc, Value v, int64_t d,
                  int64_t divisor) {
  auto type = cast<MemRefType>(v.getType());
  if (!type.isDynamicDim(d))
    return arith::ConstantIndexOp::create(
        b, loc, llvm::divideCeil(type.getDimSize(d), divisor));
  Value value = memref::DimOp::create(b, loc, v, d);
  Value sum = arith::AddIOp::create(
      b, loc, value, arith::ConstantIndexOp::create(b, loc, divisor - 1));
  return arith::DivUIOp::create(
      b, loc, sum, arith::ConstantIndexOp::create(b, loc, divisor));
}

/// Checks that this pass can tile the FP8 or INT8 scales of `p`: block
/// scales on both operands, promoted per K block with one K block per scale
/// block, or tensor-wise / per-row scales on both, applied once in the
/// epilogue (INT8's only kind: the op's verifier refuses INT8 blocks).
LogicalResult checkQuantizedScales(Operation *op, const TileProblem &p,
                                   Type elementType) {
  if (p.layout != WeightLayout::nk)
    return op->emitOpError()
           << "expects weight_layout nk for " << elementType
           << " (wgmma reads FP8 and INT8 operands K-major only)";
  if (p.xBlock.isBlock() != p.wBlock.isBlock())
    return op->emitOpError()
           << "expects block scales on both FP8 operands or on neither (block "
              "scales are promoted per K block, tensor-wise and per-row ones "
              "applied once in the epilogue), got "
           << p.xBlock << " and " << p.wBlock;
  if (!p.xBlock.isBlock())
    return success();
  if (p.xBlock.getRows() != 1 || p.wBlock.getRows() != 128)
    return op->emitOpError()
           << "expects x_scale_block = #ggemm.scale_block<1x128> and "
              "w_scale_block = #ggemm.scale_block<128x128> for FP8 block "
              "scales (the blocks ggemm-tile promotes per K block), got "
           << p.xBlock << " and " << p.wBlock;
  int64_t blockK = p.config.getBlockK(), blockN = p.config.getBlockN();
  if (p.xBlock.getCols() != blockK || p.wBlock.getCols() != blockK)
    return op->emitOpError()
           << "expects the tile config's block_k (" << blockK
           << ") to be the scale blocks' K extent (" << p.xBlock.getCols()
           << "): each K block is promoted with one scale";
  // Any block_n (a multiple of 8, as the tile config verifies): one that
  // neither divides nor is a multiple of 128 (192) is promoted with the
  // tile's offset into its first weight scale block.
  return success();
}

/// Creates the tile loop and its body block (group, row, row end, column
/// arguments); the caller sets the insertion point into it.
ForeachTileOp createTileLoop(OpBuilder &b, Location loc, RowMapping mapping,
                             Value groupRows, Value weightIndices,
                             Value numWeights, Value numGroups,
                             Value rowsPerGroup, Value numRows, Value numCols,
                             TileConfigAttr config) {
  auto loop = ForeachTileOp::create(
      b, loc, RowMappingAttr::get(b.getContext(), mapping), groupRows,
      weightIndices, numWeights, numGroups, rowsPerGroup, numRows, numCols,
      config);
  b.createBlock(&loop.getBody(), {}, SmallVector<Type>(4, b.getIndexType()),
                SmallVector<Location>(4, loc));
  return loop;
}

/// The K loop of a tile, `[0, kBlocks)`, carrying an accumulator of
/// `accType` from zero; the caller fills its body.
scf::ForOp createKLoop(OpBuilder &b, Location loc, Value kBlocks,
                       AccumulatorType accType) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value init = ZeroAccumulatorOp::create(b, loc, accType);
  return scf::ForOp::create(b, loc, zero, kBlocks, one, ValueRange{init});
}

/// Writes the tile program: a ggemm.foreach_tile whose body walks the K
/// blocks with an scf.for, loading the A and B tiles of each block and
/// multiplying them into the accumulator, then stores the tile. With FP8
/// block scales each K block's product starts from zero and is promoted
/// into the accumulator with its scales.
LogicalResult emitTileProgram(OpBuilder &b, Operation *op,
                              const TileProblem &p) {
  Location loc = op->getLoc();
  MemRefType xType = cast<MemRefType>(p.x.getType());
  Type elementType = xType.getElementType();
  bool quantized = isQuantized(elementType);
  if (quantized && failed(checkQuantizedScales(op, p, elementType)))
    return failure();
  // Block scales are promoted per K block; tensor-wise and per-row ones
  // scale the whole accumulator in the store.
  bool blockScaled = quantized && p.xBlock.isBlock();
  bool gated = p.epilogue && p.epilogue.isGated();
  if (quantized && (gated || p.rowIndices))
    return op->emitOpError()
           << "expects bf16 or f16 operands with "
           << (gated ? "activation = swiglu" : "row_indices")
           << ": the FP8 and INT8 tile programs have no gathered or gated "
              "form yet";
  // The tile rows are the segments' rows: x's, or row_indices' when x is
  // gathered.
  Value numRows = dim(b, loc, p.rowIndices ? p.rowIndices : p.x, 0);
  bool kn = p.layout == WeightLayout::kn;
  // The tiles run over w's rows: with a gated epilogue 2N of them, each
  // tile's first half gate rows and second half the matching up rows
  // (side by side: two halves N rows apart; interleaved: one block).
  Value numCols = dim(b, loc, p.w, kn ? 2 : 1);
  // Weight indices are device data: the schedule skips groups whose index
  // is not a weight of w.
  Value numWeights = p.weightIndices ? dim(b, loc, p.w, 0) : Value();
  OpBuilder::InsertionGuard guard(b);
  ForeachTileOp loop = createTileLoop(
      b, loc, p.rowMapping, p.groupRows, p.weightIndices, numWeights,
      p.numGroups, p.rowsPerGroup, numRows, numCols, p.config);
  Value group = loop.getGroupArg(), row = loop.getRowBeginArg(),
        col = loop.getColBeginArg();

  int64_t blockM = p.config.getBlockM(), blockN = p.config.getBlockN(),
          blockK = p.config.getBlockK();
  MLIRContext *ctx = b.getContext();
  // INT8 products sum exactly in i32; everything else in f32.
  auto accType = AccumulatorType::get(ctx, {blockM, blockN},
                                      getAccumulatorElementType(elementType));
  auto aType =
      TileType::get(ctx, {blockM, blockK}, elementType, TileLayout::k_major);
  auto bType = TileType::get(ctx, {blockN, blockK}, elementType,
                             kn ? TileLayout::mn_major : TileLayout::k_major);

  Value weight = group;
  if (p.weightIndices)
    weight = WeightIndexOp::create(b, loc, p.weightIndices, group);
  // Gated: tile columns [col, col + block_n) of the 2N are output columns
  // [col / 2, col / 2 + block_n / 2). Side by side, the gate rows start at
  // col / 2 and the up rows N further on (a split load); with interleaved
  // blocks of block_n / 2 rows (the verifier holds block_n to 2B) the tile
  // is w's rows [col, col + block_n) as they are, gate then up.
  bool interleaved = gated && p.epilogue.isGateUpInterleaved();
  Value outCol = col, weightRow = col, upOffset;
  if (gated) {
    Value two = arith::ConstantIndexOp::create(b, loc, 2);
    outCol = arith::DivUIOp::create(b, loc, col, two);
    if (!interleaved) {
      weightRow = outCol;
      upOffset = arith::DivUIOp::create(b, loc, numCols, two);
    }
  }
  Value kBlocks = kBlockCount(b, loc, p.x, 1, blockK);
  Value blockKValue = arith::ConstantIndexOp::create(b, loc, blockK);
  auto kLoop = createKLoop(b, loc, kBlocks, accType);
  {
    OpBuilder::InsertionGuard kGuard(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value k =
        arith::MulIOp::create(b, loc, kLoop.getInductionVar(), blockKValue);
    Value aTile = LoadTileOp::create(
        b, loc, aType, p.x, ValueRange{row, k}, Value(), p.rowIndices,
        p.rowIndices ? loop.getRowEndArg() : Value(), Value(), Value());
    SmallVector<Value> bIndices = {weight, weightRow, k};
    if (kn)
      std::swap(bIndices[1], bIndices[2]);
    Value bTile = LoadTileOp::create(b, loc, bType, p.w, bIndices, Value(),
                                     Value(), Value(), upOffset, Value());
    Value acc = kLoop.getRegionIterArg(0);
    Value next;
    if (!blockScaled) {
      next = MmaOp::create(b, loc, accType, aTile, bTile, acc, IntegerAttr());
    } else {
      // Activation scales: one per row of the tile at [row, kb]; weight
      // scales: one per 128 weight rows at [weight, col / 128, kb].
      Value kb = kLoop.getInductionVar();
      Value aScales = LoadScalesOp::create(b, loc, ScalesType::get(ctx, blockM),
                                           p.xScale, ValueRange{row, kb});
      // Scales of the weight-scale blocks the tile's columns fall in, from
      // the block of its first column; a tile that may start inside a
      // block (192 columns of 128) says where (b_offset).
      int64_t scaleRows = p.wBlock.getRows();
      Value scaleRowsValue = arith::ConstantIndexOp::create(b, loc, scaleRows);
      Value scaleRow = arith::DivUIOp::create(b, loc, col, scaleRowsValue);
      Value bScales = LoadScalesOp::create(
          b, loc,
          ScalesType::get(ctx, getScaleBlocksPerTile(blockN, scaleRows)),
          p.wScale, ValueRange{weight, scaleRow, kb});
      Value bOffset;
      IntegerAttr bBlock;
      if (tileStraddlesScaleBlocks(blockN, scaleRows)) {
        bOffset = arith::RemUIOp::create(b, loc, col, scaleRowsValue);
        bBlock = b.getI64IntegerAttr(scaleRows);
      }
      // The block's product starts from its own zero accumulator.
      Value partial = MmaOp::create(b, loc, accType, aTile, bTile,
                                    ZeroAccumulatorOp::create(b, loc, accType),
                                    IntegerAttr());
      next = PromoteOp::create(b, loc, accType, partial, acc, aScales, bScales,
                               bOffset, bBlock);
    }
    scf::YieldOp::create(b, loc, next);
  }
  // Epilogue scales: a tensor-wise x scale is read at its one entry, a
  // per-row one at the output row; w's at the tile's weight.
  Value xScale, xScaleIndex, wScale, wScaleIndex;
  if (quantized && !blockScaled) {
    xScale = p.xScale;
    if (p.xBlock.isTensorWise())
      xScaleIndex = arith::ConstantIndexOp::create(b, loc, 0);
    wScale = p.wScale;
    wScaleIndex = weight;
  }
  StoreTileOp::create(b, loc, kLoop.getResult(0), p.y, row, loop.getRowEndArg(),
                      outCol, p.bias, p.bias ? weight : Value(), p.rowScale,
                      xScale, xScaleIndex, wScale, wScaleIndex,
                      p.scatterIndices, p.yScale, p.epilogue,
                      /*transposed=*/false,
                      /*staging=*/StoreStagingAttr());
  YieldOp::create(b, loc);
  return success();
}

/// Writes the K-ragged tile program of `op`: `dw[g] = a[seg_g]ᵀ · b[seg_g]`
/// with `(a, b) = (dy, x)` (`nk`) or `(x, dy)` (`kn`). The output of every
/// group has the same shape, so the tile loop is `uniform` over `dw` seen as
/// a `[G * rows, cols]` matrix; the raggedness is in the K loop, which runs
/// over the group's rows in `block_k` steps. The operands are read as
/// `mn_major` tiles (`[block_k, block_m]` boxes of row-major `[M, *]`
/// matrices), or `k_major` ones when `transposed` (`[block_m, block_k]`
/// boxes of `[*, M]`), each masked at the segment's end: without `k_end` the
/// last K block would add the next group's rows into the sum. Transposed,
/// the K blocks are the block_k-aligned blocks the segment overlaps, masked
/// at both ends (`k_begin`, `k_end`): TMA faults on a K coordinate that is
/// not 16-byte aligned. With FP8 scales, one per operand row and 128 tokens
/// from token 0, those are the scale blocks, each promoted with its scales.
LogicalResult emitKRaggedProgram(OpBuilder &b, SegmentMatmulKOp op) {
  Location loc = op.getLoc();
  TileConfigAttr config = op.getConfigAttr();
  if (config.getSwapAb())
    return op.emitOpError() << "expects a tile config without swap_ab: the "
                               "K-ragged tile program is not swapped";
  if (failed(checkCollapsible(op, {{"dw", op.getDw()}})))
    return failure();
  bool kn = op.getWeightLayout() == WeightLayout::kn;
  bool transposed = op.getTransposed();
  Value aSource = kn ? op.getX() : op.getDy();
  Value bSource = kn ? op.getDy() : op.getX();
  Value aScale = kn ? op.getXScale() : op.getDyScale();
  Value bScale = kn ? op.getDyScale() : op.getXScale();
  bool scaled = bool(aScale);
  unsigned tokenDim = op.getTokenDim(), featureDim = 1 - tokenDim;
  Value indptr = op.getSegIndptr();
  Value numGroups =
      arith::SubIOp::create(b, loc, dim(b, loc, indptr, 0),
                            arith::ConstantIndexOp::create(b, loc, 1));
  Value rowsPerGroup = dim(b, loc, aSource, featureDim);
  Value numTokens = dim(b, loc, aSource, tokenDim);
  Value dw = collapseLeading(b, loc, op.getDw());
  Value numRows = arith::MulIOp::create(b, loc, numGroups, rowsPerGroup);
  Value numCols = dim(b, loc, bSource, featureDim);
  OpBuilder::InsertionGuard guard(b);
  ForeachTileOp loop =
      createTileLoop(b, loc, RowMapping::uniform, Value(), Value(), Value(),
                     numGroups, rowsPerGroup, numRows, numCols, config);
  Value group = loop.getGroupArg(), row = loop.getRowBeginArg(),
        col = loop.getColBeginArg();

  int64_t blockM = config.getBlockM(), blockN = config.getBlockN(),
          blockK = config.getBlockK();
  MLIRContext *ctx = b.getContext();
  Type elementType = op.getX().getType().getElementType();
  auto accType = AccumulatorType::get(ctx, {blockM, blockN}, b.getF32Type());
  TileLayout layout = transposed ? TileLayout::k_major : TileLayout::mn_major;
  auto aType = TileType::get(ctx, {blockM, blockK}, elementType, layout);
  auto bType = TileType::get(ctx, {blockN, blockK}, elementType, layout);

  // The tile's first row within its group's output: a feature of aSource.
  Value aCol = arith::SubIOp::create(
      b, loc, row, arith::MulIOp::create(b, loc, group, rowsPerGroup));
  auto bounds = SegmentBoundsOp::create(b, loc, indptr, group, numTokens);
  Value begin = bounds.getBegin(), end = bounds.getEnd();
  Value blockKValue = arith::ConstantIndexOp::create(b, loc, blockK);
  Value roundUp = arith::ConstantIndexOp::create(b, loc, blockK - 1);
  // The K blocks: ceil((end - begin) / block_k) from `begin`, none for an
  // empty segment; transposed, the block_k-aligned blocks [begin / block_k,
  // ceil(end / block_k)): a k_major box's K coordinate is the innermost TMA
  // coordinate, which must be 16-byte aligned (sm_90 faults on another),
  // and with scales these are the scale blocks (block_k = 128, the
  // verifier's FP8 block).
  bool alignedBlocks = scaled || transposed;
  Value firstBlock, kBlocks;
  if (alignedBlocks) {
    firstBlock = arith::DivUIOp::create(b, loc, begin, blockKValue);
    Value lastBlock = arith::DivUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, end, roundUp), blockKValue);
    Value empty =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, begin, end);
    kBlocks = arith::SelectOp::create(
        b, loc, empty, arith::ConstantIndexOp::create(b, loc, 0),
        arith::SubIOp::create(b, loc, lastBlock, firstBlock));
  } else {
    kBlocks = arith::DivUIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, arith::SubIOp::create(b, loc, end, begin),
                              roundUp),
        blockKValue);
  }
  auto kLoop = createKLoop(b, loc, kBlocks, accType);
  {
    OpBuilder::InsertionGuard kGuard(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value kb, k;
    if (alignedBlocks) {
      kb = arith::AddIOp::create(b, loc, firstBlock, kLoop.getInductionVar());
      k = arith::MulIOp::create(b, loc, kb, blockKValue);
    } else {
      k = arith::AddIOp::create(
          b, loc, begin,
          arith::MulIOp::create(b, loc, kLoop.getInductionVar(), blockKValue));
    }
    auto indices = [&](Value feature) {
      return transposed ? SmallVector<Value>{feature, k}
                        : SmallVector<Value>{k, feature};
    };
    Value kBegin = alignedBlocks ? begin : Value();
    Value aTile =
        LoadTileOp::create(b, loc, aType, aSource, indices(aCol), kBegin, end);
    Value bTile =
        LoadTileOp::create(b, loc, bType, bSource, indices(col), kBegin, end);
    Value acc = kLoop.getRegionIterArg(0);
    Value next;
    if (!scaled) {
      next = MmaOp::create(b, loc, accType, aTile, bTile, acc, IntegerAttr());
    } else {
      // One scale per row of each tile at the block: [feature, kb].
      Value aScales = LoadScalesOp::create(b, loc, ScalesType::get(ctx, blockM),
                                           aScale, ValueRange{aCol, kb});
      Value bScales = LoadScalesOp::create(b, loc, ScalesType::get(ctx, blockN),
                                           bScale, ValueRange{col, kb});
      Value partial = MmaOp::create(b, loc, accType, aTile, bTile,
                                    ZeroAccumulatorOp::create(b, loc, accType),
                                    IntegerAttr());
      next = PromoteOp::create(b, loc, accType, partial, acc, aScales, bScales,
                               Value(), IntegerAttr());
    }
    scf::YieldOp::create(b, loc, next);
  }
  EpilogueAttr epilogue;
  if (op.getAccumulate())
    epilogue = EpilogueAttr::get(ctx, Activation::none, /*accumulate=*/true,
                                 /*atomic=*/false, /*gateUpBlock=*/0);
  auto store = StoreTileOp::create(b, loc, kLoop.getResult(0), dw, row,
                                   loop.getRowEndArg(), col, Value(), Value(),
                                   Value(), Value(), Value(), Value(), Value(),
                                   Value(), Value(), epilogue,
                                   /*transposed=*/false,
                                   /*staging=*/StoreStagingAttr());
  store->setAttr(kKRaggedLayoutAttrName,
                 WeightLayoutAttr::get(ctx, op.getWeightLayout()));
  YieldOp::create(b, loc);
  return success();
}

struct TilePass : public ggemm::impl::GGemmTileBase<TilePass> {
  void runOnOperation() override {
    // ggemm.sort_by_expert and ggemm.quantize are not tiled: each is one
    // standalone kernel of its own, written by the back ends.
    SmallVector<Operation *> problems;
    getOperation()->walk([&](Operation *op) {
      if (isa<SegmentMatmulOp, MaskedMatmulOp, BatchedMatmulOp,
              SegmentMatmulKOp>(op))
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
      if (auto kRagged = dyn_cast<SegmentMatmulKOp>(op)) {
        if (failed(emitKRaggedProgram(b, kRagged)))
          return signalPassFailure();
        op->erase();
        continue;
      }
      TileProblem p;
      p.config = config;
      if (auto seg = dyn_cast<SegmentMatmulOp>(op)) {
        p.rowMapping = RowMapping::segment;
        p.groupRows = seg.getSegIndptr();
        int64_t indptrSize =
            cast<MemRefType>(p.groupRows.getType()).getDimSize(0);
        p.numGroups =
            ShapedType::isDynamic(indptrSize)
                ? arith::SubIOp::create(
                      b, loc, dim(b, loc, p.groupRows, 0),
                      arith::ConstantIndexOp::create(b, loc, 1))
                      .getResult()
                : arith::ConstantIndexOp::create(b, loc, indptrSize - 1)
                      .getResult();
        p.rowsPerGroup = arith::ConstantIndexOp::create(b, loc, 0);
        p.x = seg.getX();
        p.w = seg.getW();
        p.y = seg.getY();
        p.yScale = seg.getYScale();
        p.weightIndices = seg.getWeightIndices();
        p.rowIndices = seg.getRowIndices();
        p.scatterIndices = seg.getScatterIndices();
        p.bias = seg.getBias();
        p.rowScale = seg.getRowScale();
        p.layout = seg.getWeightLayout();
        p.epilogue = seg.getEpilogueAttr();
        p.xScale = seg.getXScale();
        p.wScale = seg.getWScale();
        p.xBlock = seg.getXScaleBlockAttr();
        p.wBlock = seg.getWScaleBlockAttr();
      } else if (auto masked = dyn_cast<MaskedMatmulOp>(op)) {
        if (failed(checkCollapsible(
                op,
                {{"x", masked.getX()},
                 {"y", masked.getY()},
                 {"y_scale", masked.getYScale()},
                 {"row_scale", masked.getRowScale()},
                 {"x_scale", scalesWithRows(masked.getXScale(),
                                            masked.getXScaleBlockAttr())}})))
          return signalPassFailure();
        p.rowMapping = RowMapping::masked;
        p.groupRows = masked.getMaskedM();
        p.numGroups = dim(b, loc, masked.getX(), 0);
        p.rowsPerGroup = dim(b, loc, masked.getX(), 1);
        p.x = collapseLeading(b, loc, masked.getX());
        p.w = masked.getW();
        p.y = collapseLeading(b, loc, masked.getY());
        p.yScale = collapseLeading(b, loc, masked.getYScale());
        p.bias = masked.getBias();
        p.rowScale = collapseLeading(b, loc, masked.getRowScale());
        p.layout = masked.getWeightLayout();
        p.epilogue = masked.getEpilogueAttr();
        p.xScale = collapseScales(b, loc, masked.getXScale(),
                                  masked.getXScaleBlockAttr());
        p.wScale = masked.getWScale();
        p.xBlock = masked.getXScaleBlockAttr();
        p.wBlock = masked.getWScaleBlockAttr();
      } else {
        auto batched = cast<BatchedMatmulOp>(op);
        if (failed(checkCollapsible(
                op,
                {{"x", batched.getX()},
                 {"y", batched.getY()},
                 {"y_scale", batched.getYScale()},
                 {"row_scale", batched.getRowScale()},
                 {"x_scale", scalesWithRows(batched.getXScale(),
                                            batched.getXScaleBlockAttr())}})))
          return signalPassFailure();
        p.rowMapping = RowMapping::uniform;
        p.numGroups = dim(b, loc, batched.getX(), 0);
        p.rowsPerGroup = dim(b, loc, batched.getX(), 1);
        p.x = collapseLeading(b, loc, batched.getX());
        p.w = batched.getW();
        p.y = collapseLeading(b, loc, batched.getY());
        p.yScale = collapseLeading(b, loc, batched.getYScale());
        p.bias = batched.getBias();
        p.rowScale = collapseLeading(b, loc, batched.getRowScale());
        p.layout = batched.getWeightLayout();
        p.epilogue = batched.getEpilogueAttr();
        p.xScale = collapseScales(b, loc, batched.getXScale(),
                                  batched.getXScaleBlockAttr());
        p.wScale = batched.getWScale();
        p.xBlock = batched.getXScaleBlockAttr();
        p.wBlock = batched.getWScaleBlockAttr();
      }
      if (failed(emitTileProgram(b, op, p)))
        return signalPassFailure();
      op->erase();
    }
  }
};
} // namespace
