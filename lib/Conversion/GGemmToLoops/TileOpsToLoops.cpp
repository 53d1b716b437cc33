//===- TileOpsToLoops.cpp - tile ops -> CPU loops -------------------------===//
//
// The CPU reference back end's lowering of the tile ops inside a launch:
// load_tile copies into a buffer (zero outside the source, as TMA fills),
// mma and promote are f32 loops (FP8 decoded exactly with integer
// arithmetic), store_tile runs the GPU kernel's own epilogue arithmetic
// (buildEpilogue) over the tile's masked region.
//
//===----------------------------------------------------------------------===//

#include "LoopsTranslator.h"
#include "QuantizeToLoops.h"
#include "ggemm/Dialect/GGemm/Transforms/Epilogue.h"

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::loops;

namespace mlir::ggemm::loops {

Value toIndex(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

/// Decodes an FP8 value exactly with integer arithmetic: LLVM has no FP8
/// types, so `arith.extf` from them does not lower to the CPU.
/// f8E4M3FN: bias 7, 3 mantissa bits, S.1111.111 is NaN, no infinities;
/// f8E5M2: bias 15, 2 mantissa bits, exponent 31 is infinity or NaN.
static Value decodeFp8(OpBuilder &b, Location loc, Value v) {
  bool e4m3 = isa<Float8E4M3FNType>(v.getType());
  int64_t mantissaBits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto c = [&](int64_t value) {
    return arith::ConstantIntOp::create(b, loc, i32, value).getResult();
  };
  auto eq = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y)
        .getResult();
  };
  Value bits = arith::ExtUIOp::create(
      b, loc, i32, arith::BitcastOp::create(b, loc, b.getI8Type(), v));
  Value sign = arith::ShLIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, c(7)), c(31));
  Value exponent = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, c(mantissaBits)),
      c((1 << (7 - mantissaBits)) - 1));
  Value mantissa =
      arith::AndIOp::create(b, loc, bits, c((1 << mantissaBits) - 1));
  // Normal: rebias the exponent, widen the mantissa.
  Value normalBits = arith::OrIOp::create(
      b, loc,
      arith::OrIOp::create(
          b, loc, sign,
          arith::ShLIOp::create(
              b, loc, arith::AddIOp::create(b, loc, exponent, c(127 - bias)),
              c(23))),
      arith::ShLIOp::create(b, loc, mantissa, c(23 - mantissaBits)));
  Value normal = arith::BitcastOp::create(b, loc, f32, normalBits);
  // Subnormal (and zero): mantissa * 2^(1 - bias - mantissa bits), signed.
  Value magnitude = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, f32, mantissa),
      arith::ConstantFloatOp::create(
          b, loc, cast<FloatType>(f32),
          APFloat(std::ldexp(1.0f, int(1 - bias - mantissaBits)))));
  Value subnormal = arith::BitcastOp::create(
      b, loc, f32,
      arith::OrIOp::create(b, loc, sign,
                           arith::BitcastOp::create(b, loc, i32, magnitude)));
  Value result =
      arith::SelectOp::create(b, loc, eq(exponent, c(0)), subnormal, normal);
  Value nan = arith::ConstantFloatOp::create(
      b, loc, cast<FloatType>(f32), APFloat::getNaN(APFloat::IEEEsingle()));
  if (e4m3)
    return arith::SelectOp::create(
        b, loc,
        arith::AndIOp::create(b, loc, eq(exponent, c(15)), eq(mantissa, c(7))),
        nan, result);
  Value inf = arith::BitcastOp::create(
      b, loc, f32, arith::OrIOp::create(b, loc, sign, c(0x7f800000)));
  Value special = arith::SelectOp::create(b, loc, eq(mantissa, c(0)), inf, nan);
  return arith::SelectOp::create(b, loc, eq(exponent, c(31)), special, result);
}

Value toF32(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isF32())
    return v;
  if (isFp8(v.getType()))
    return decodeFp8(b, loc, v);
  return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
}

Value ult(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lhs, rhs);
}

/// `source[at]`, or `zero` when an index is past its dimension (TMA's zero
/// fill) or, with `inMask`, when `inMask` is false.
Value loadOrZero(OpBuilder &b, Location loc, Value source, ValueRange at,
                 Value zero, Value inMask) {
  Value inBounds = inMask;
  for (auto [d, index] : llvm::enumerate(at)) {
    Value ok = ult(b, loc, index, memref::DimOp::create(b, loc, source, d));
    inBounds = inBounds ? arith::AndIOp::create(b, loc, inBounds, ok) : ok;
  }
  auto read = scf::IfOp::create(b, loc, TypeRange{zero.getType()}, inBounds,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(read.thenBlock());
  scf::YieldOp::create(b, loc,
                       memref::LoadOp::create(b, loc, source, at).getResult());
  b.setInsertionPointToStart(read.elseBlock());
  scf::YieldOp::create(b, loc, zero);
  return read.getResult(0);
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

LogicalResult LoopsTranslator::lowerLoad(LoadTileOp op) {
  Location loc = op.getLoc();
  TileType type = op.getType();
  Value source = lookup(op.getSource(), op);
  SmallVector<Value> indices;
  for (Value index : op.getIndices())
    indices.push_back(lookup(index, op));
  Value kEnd = lookup(op.getKEnd(), op), kBegin = lookup(op.getKBegin(), op);
  Value tile = buffer(type, loc);
  int64_t rank = indices.size();
  // Which source dimension runs along the tile's rows, which along K.
  int64_t rowDim = type.isMNMajor() ? rank - 1 : rank - 2;
  int64_t kDim = type.isMNMajor() ? rank - 2 : rank - 1;
  // FP8 zero as its bit pattern: LLVM has no FP8 constants.
  Type elemType = type.getElementType();
  Value zero = isFp8(elemType)
                   ? arith::BitcastOp::create(
                         b, loc, elemType,
                         arith::ConstantIntOp::create(b, loc, b.getI8Type(), 0))
                         .getResult()
                   : arith::ConstantOp::create(b, loc, b.getZeroAttr(elemType))
                         .getResult();
  Value gather = lookup(op.getGather(), op),
        gatherEnd = lookup(op.getGatherEnd(), op);
  Value split = lookup(op.getSplit(), op);
  int64_t half = type.getRows() / 2;
  forEach2D(b, loc, type.getRows(), type.getK(), [&](Value r, Value c) {
    SmallVector<Value> at(indices);
    at[rowDim] = arith::AddIOp::create(b, loc, indices[rowDim], r);
    at[kDim] = arith::AddIOp::create(b, loc, indices[kDim], c);
    // K-ragged: rows of the next group exist but are not part of this sum.
    Value inSegment = kEnd ? ult(b, loc, at[kDim], kEnd) : Value();
    // FP8 K-ragged: a scale-block-aligned K block may start before the
    // segment, whose previous rows belong to the previous group.
    if (kBegin)
      inSegment = arith::AndIOp::create(
          b, loc, inSegment,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, at[kDim],
                                kBegin));
    if (split) {
      // The second half of the tile's rows is `split` rows further on.
      Value second =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, r,
                                arith::ConstantIndexOp::create(b, loc, half));
      Value shifted = arith::AddIOp::create(
          b, loc, at[rowDim],
          arith::SubIOp::create(b, loc, split,
                                arith::ConstantIndexOp::create(b, loc, half)));
      at[rowDim] = arith::SelectOp::create(b, loc, second, shifted, at[rowDim]);
    }
    if (gather) {
      // The segment row's index into the source; rows past the segment's
      // end (or past the indices) read zero, and so do indices outside the
      // source (loadOrZero's bounds check).
      Value segmentRow = at[rowDim];
      inSegment = arith::AndIOp::create(
          b, loc, ult(b, loc, segmentRow, gatherEnd),
          ult(b, loc, segmentRow, memref::DimOp::create(b, loc, gather, 0)));
      auto index = scf::IfOp::create(b, loc, TypeRange{b.getIndexType()},
                                     inSegment, /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(index.thenBlock());
        scf::YieldOp::create(
            b, loc,
            toIndex(b, loc,
                    memref::LoadOp::create(b, loc, gather, segmentRow)));
        b.setInsertionPointToStart(index.elseBlock());
        scf::YieldOp::create(
            b, loc, arith::ConstantIndexOp::create(b, loc, 0).getResult());
      }
      at[rowDim] = index.getResult(0);
    }
    // TMA's zero fill: every coordinate past its dimension reads as zero.
    memref::StoreOp::create(b, loc,
                            loadOrZero(b, loc, source, at, zero, inSegment),
                            tile, ValueRange{r, c});
  });
  mapping.map(op.getTile(), tile);
  return success();
}

LogicalResult LoopsTranslator::lowerLoadScales(LoadScalesOp op) {
  Location loc = op.getLoc();
  Value source = lookup(op.getSource(), op);
  SmallVector<Value> indices;
  for (Value index : op.getIndices())
    indices.push_back(lookup(index, op));
  int64_t count = op.getType().getCount();
  int64_t rowDim = indices.size() - 2;
  Value scales = buffer(op.getType(), loc);
  Value zero =
      arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f));
  OpBuilder::InsertionGuard guard(b);
  auto loop =
      scf::ForOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0),
                         arith::ConstantIndexOp::create(b, loc, count),
                         arith::ConstantIndexOp::create(b, loc, 1));
  b.setInsertionPointToStart(loop.getBody());
  Value i = loop.getInductionVar();
  SmallVector<Value> at(indices);
  at[rowDim] = arith::AddIOp::create(b, loc, indices[rowDim], i);
  // Scales past the end read as zero, as TMA fills them.
  memref::StoreOp::create(b, loc, loadOrZero(b, loc, source, at, zero), scales,
                          i);
  mapping.map(op.getScales(), scales);
  return success();
}

LogicalResult LoopsTranslator::lowerPromote(PromoteOp op) {
  Location loc = op.getLoc();
  // The accumulator is updated in place (each value has one use).
  Value acc = lookup(op.getAcc(), op), partial = lookup(op.getPartial(), op);
  Value aScales = lookup(op.getAScales(), op),
        bScales = lookup(op.getBScales(), op);
  ArrayRef<int64_t> shape = op.getAcc().getType().getShape();
  // Element i of an extent-E dimension uses scale i * count / E.
  auto scaleOf = [&](Value scales, Value i, int64_t extent) -> Value {
    int64_t count = cast<MemRefType>(scales.getType()).getDimSize(0);
    Value at = arith::DivUIOp::create(
        b, loc, i, arith::ConstantIndexOp::create(b, loc, extent / count));
    return memref::LoadOp::create(b, loc, scales, at);
  };
  // A tile starting b_offset columns into a b_block-column weight scale
  // block: column j uses scale (j + b_offset) / b_block.
  Value bOffset = op.getBOffset() ? lookup(op.getBOffset(), op) : Value();
  if (op.getBOffset() && !bOffset)
    return failure();
  forEach2D(b, loc, shape[0], shape[1], [&](Value i, Value j) {
    Value p = memref::LoadOp::create(b, loc, partial, ValueRange{i, j});
    if (aScales)
      p = arith::MulFOp::create(b, loc, p, scaleOf(aScales, i, shape[0]));
    if (bScales && bOffset) {
      Value at = arith::DivUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, j, bOffset),
          arith::ConstantIndexOp::create(b, loc, *op.getBBlock()));
      p = arith::MulFOp::create(b, loc, p,
                                memref::LoadOp::create(b, loc, bScales, at));
    } else if (bScales) {
      p = arith::MulFOp::create(b, loc, p, scaleOf(bScales, j, shape[1]));
    }
    Value old = memref::LoadOp::create(b, loc, acc, ValueRange{i, j});
    memref::StoreOp::create(b, loc, arith::AddFOp::create(b, loc, old, p), acc,
                            ValueRange{i, j});
  });
  mapping.map(op.getResult(), acc);
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
  bool integer = op.getAcc().getType().getElementType().isSignlessInteger(32);
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
      Value av = memref::LoadOp::create(b, loc, a, {i, kk});
      Value bv = memref::LoadOp::create(b, loc, bTile, {j, kk});
      Value sum;
      if (integer) {
        // wgmma's s8 x s8 -> s32: exact products, a wrapping sum.
        Type i32 = b.getI32Type();
        sum = arith::AddIOp::create(
            b, loc, kLoop.getRegionIterArg(0),
            arith::MulIOp::create(b, loc,
                                  arith::ExtSIOp::create(b, loc, i32, av),
                                  arith::ExtSIOp::create(b, loc, i32, bv)));
      } else {
        sum = arith::AddFOp::create(b, loc, kLoop.getRegionIterArg(0),
                                    arith::MulFOp::create(b, loc,
                                                          toF32(b, loc, av),
                                                          toF32(b, loc, bv)));
      }
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
  Value scatter = lookup(op.getScatter(), op);
  Value xScale = lookup(op.getXScale(), op),
        wScale = lookup(op.getWScale(), op);
  Value xScaleIndex = lookup(op.getXScaleIndex(), op),
        wScaleIndex = lookup(op.getWScaleIndex(), op);
  ArrayRef<int64_t> tileShape = op.getAcc().getType().getShape();
  Type outType = op.getY().getType().getElementType();
  EpilogueAttr epilogue = op.getEpilogueAttr();
  Activation activation =
      epilogue ? epilogue.getActivation() : Activation::none;
  bool accumulate = epilogue && epilogue.getAccumulate();
  bool gated = epilogue && epilogue.isGated();

  // A transposed accumulator (ggemm-swap-ab) holds output column i of the
  // tile in its row i. A gated one holds the gate values of its output
  // columns in its first half of columns and the up values in its second.
  bool transposed = op.getTransposed();
  int64_t tileRows = tileShape[transposed ? 1 : 0],
          tileCols = tileShape[transposed ? 0 : 1];
  if (gated)
    tileCols /= 2;

  OpBuilder::InsertionGuard guard(b);
  Value n = memref::DimOp::create(b, loc, y, 1);
  // Rows at or past row_end belong to the next group (or to none); columns
  // at or past N do not exist.
  Value rowLimit = arith::MinSIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, row,
                            arith::ConstantIndexOp::create(b, loc, tileRows)),
      rowEnd);
  Value colLimit = arith::MinSIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, col,
                            arith::ConstantIndexOp::create(b, loc, tileCols)),
      n);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  // FP8 dequantisation: the tensor-wise factors once per tile, a per-row x
  // scale per row, a per-channel w scale per column.
  Value tileDequant;
  if (xScale && xScaleIndex)
    tileDequant = memref::LoadOp::create(b, loc, xScale, xScaleIndex);
  if (wScale && !op.hasPerChannelWScale())
    tileDequant =
        mulFactors(b, loc, tileDequant,
                   memref::LoadOp::create(b, loc, wScale, wScaleIndex));
  auto rowLoop = scf::ForOp::create(b, loc, row, rowLimit, one);
  b.setInsertionPointToStart(rowLoop.getBody());
  Value r = rowLoop.getInductionVar();
  Value i = arith::SubIOp::create(b, loc, r, row);
  Value scale;
  if (rowScale)
    scale = memref::LoadOp::create(b, loc, rowScale, r);
  Value rowDequant = tileDequant;
  if (op.hasPerRowXScale())
    rowDequant = mulFactors(b, loc, memref::LoadOp::create(b, loc, xScale, r),
                            tileDequant);
  // The row of y: the tile's row, or where scatter sends it (nowhere when
  // that is outside y).
  Value target = r;
  if (scatter) {
    target = toIndex(b, loc, memref::LoadOp::create(b, loc, scatter, r));
    auto inside = scf::IfOp::create(
        b, loc, ult(b, loc, target, memref::DimOp::create(b, loc, y, 0)),
        /*withElseRegion=*/false);
    b.setInsertionPointToStart(inside.thenBlock());
  }
  // The epilogue's value at column c of the row, in `type` (f32 before an
  // e4m3 y's quantisation); `old` is y's value there (accumulate).
  auto epilogueAt = [&](Value c, Value old, Type type) -> Value {
    Value j = arith::SubIOp::create(b, loc, c, col);
    auto accAt = [&](Value column) -> Value {
      Value v = transposed ? memref::LoadOp::create(b, loc, acc, {column, i})
                           : memref::LoadOp::create(b, loc, acc, {i, column});
      // An INT8 product's int32 sum, as the GPU converts it (exact below
      // 2^24, rounded to nearest even above).
      if (v.getType().isSignlessInteger(32))
        v = arith::SIToFPOp::create(b, loc, b.getF32Type(), v);
      return v;
    };
    Value v = accAt(j);
    Value up, biasValue, upBias;
    if (gated)
      up = accAt(arith::AddIOp::create(
          b, loc, j, arith::ConstantIndexOp::create(b, loc, tileCols)));
    if (bias)
      biasValue = memref::LoadOp::create(b, loc, bias, {weight, c});
    Value dequant = rowDequant;
    if (op.hasPerChannelWScale())
      dequant =
          mulFactors(b, loc, rowDequant,
                     memref::LoadOp::create(b, loc, wScale, {wScaleIndex, c}));
    if (bias && gated)
      upBias = memref::LoadOp::create(
          b, loc, bias, {weight, arith::AddIOp::create(b, loc, c, n)});
    return gated ? buildGatedEpilogue(b, loc, v, up, biasValue, upBias, scale,
                                      old, type)
                 : buildEpilogue(b, loc, v, dequant, biasValue, activation,
                                 scale, old, type);
  };
  if (Value yScale = lookup(op.getYScale(), op)) {
    quantizedRow(op, y, yScale, target, col, colLimit, tileCols, epilogueAt);
    return success();
  }
  auto colLoop = scf::ForOp::create(b, loc, col, colLimit, one);
  b.setInsertionPointToStart(colLoop.getBody());
  Value c = colLoop.getInductionVar();
  // Sequential on the CPU, an atomic add is this read, add and write.
  Value old;
  if (accumulate)
    old = memref::LoadOp::create(b, loc, y, {target, c});
  memref::StoreOp::create(b, loc, epilogueAt(c, old, outType), y, {target, c});
  return success();
}

void LoopsTranslator::quantizedRow(
    StoreTileOp op, Value y, Value yScale, Value row, Value col, Value colLimit,
    int64_t tileCols, function_ref<Value(Value, Value, Type)> epilogueAt) {
  // An e4m3 y: per 128 columns of the row (the tile's columns are whole
  // blocks), the block's largest |value| gives its scale, then each value
  // is scaled and encoded, as ggemm.quantize does with 1x128 blocks.
  Location loc = op.getLoc();
  Type f32 = b.getF32Type();
  Type fp8Type = op.getY().getType().getElementType();
  constexpr double kE4m3Max = 448.0;
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  OpBuilder::InsertionGuard guard(b);
  auto blocks = scf::ForOp::create(b, loc, col, colLimit, idx(128));
  b.setInsertionPointToStart(blocks.getBody());
  Value c0 = blocks.getInductionVar();
  Value c1 = arith::MinSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, c0, idx(128)), colLimit);
  auto maxLoop = scf::ForOp::create(
      b, loc, c0, c1, idx(1),
      ValueRange{arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                                APFloat(0.0f))
                     .getResult()});
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(maxLoop.getBody());
    Value v = epilogueAt(maxLoop.getInductionVar(), Value(), f32);
    // |v| as max(v, -v): NaN propagates, as in ggemm.quantize.
    Value absV =
        arith::MaximumFOp::create(b, loc, v, arith::NegFOp::create(b, loc, v));
    scf::YieldOp::create(b, loc,
                         ValueRange{arith::MaximumFOp::create(
                             b, loc, maxLoop.getRegionIterArgs()[0], absV)});
  }
  auto [scale, factor] =
      buildFp8ScaleAndFactor(b, loc, maxLoop.getResult(0), kE4m3Max);
  memref::StoreOp::create(
      b, loc, scale, yScale,
      ValueRange{row, arith::DivUIOp::create(b, loc, c0, idx(128))});
  auto storeLoop = scf::ForOp::create(b, loc, c0, c1, idx(1));
  b.setInsertionPointToStart(storeLoop.getBody());
  Value c = storeLoop.getInductionVar();
  Value scaled =
      arith::MulFOp::create(b, loc, epilogueAt(c, Value(), f32), factor);
  memref::StoreOp::create(b, loc, encodeFp8(b, loc, scaled, fp8Type, kE4m3Max),
                          y, ValueRange{row, c});
}

} // namespace mlir::ggemm::loops
