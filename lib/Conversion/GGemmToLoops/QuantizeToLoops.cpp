//===- QuantizeToLoops.cpp - ggemm.quantize -> CPU loops ------------------===//
//
// One loop nest per scale block (R rows, the last possibly partial, by C
// columns) of the op's `[rows, K]` view, for each leading index:
//
//   amax = max(max |x| over the block, 1e-4)
//   scale[.., i, j] = amax * rcp         // rcp = 1 / fp8_max in f32
//   factor = (1 / amax) * fp8_max
//   q[r, c] = encode(clamp(x[r, c] * factor, -fp8_max, fp8_max))
//
// in f32, each operation rounded as the op's definition (and DeepGEMM's
// torch code on the GPU, where a division by a scalar is a product with its
// f32 reciprocal) rounds it. LLVM has no FP8 types, so `arith.truncf` to them
// does not lower to the CPU (and on overflow it would give NaN, not
// saturate): encode() rounds to nearest even with integer arithmetic on the
// f32 bits, exactly, and the clamp before it saturates.
//
//===----------------------------------------------------------------------===//

#include "QuantizeToLoops.h"

#include "ggemm/Dialect/GGemm/Transforms/Epilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ggemm;

namespace {

class QuantizeLoopsBuilder {
public:
  QuantizeLoopsBuilder(QuantizeOp op)
      : op(op), b(op), loc(op.getLoc()), f32(b.getF32Type()),
        i32(b.getI32Type()) {}

  void build();

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value c32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i32, v).getResult();
  }
  Value cf(double v) {
    return arith::ConstantFloatOp::create(b, loc, f32,
                                          APFloat(static_cast<float>(v)));
  }
  Value cmpf(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  /// `body(i)` for i in [lower, upper) at the current point.
  void forRange(Value lower, Value upper, function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, lower, upper, idx(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  }
  /// Element (lead..., row, col) of x as f32.
  Value loadX(ArrayRef<Value> lead, Value row, Value col) {
    SmallVector<Value> indices(lead);
    indices.append({row, col});
    Value v = memref::LoadOp::create(b, loc, op.getX(), indices);
    if (v.getType().isF32())
      return v;
    return arith::ExtFOp::create(b, loc, f32, v);
  }
  /// The block (lead, rowBlock, colBlock): its maximum, scale and bytes.
  void quantizeBlock(ArrayRef<Value> lead, Value rowBlock, Value colBlock);

  QuantizeOp op;
  OpBuilder b;
  Location loc;
  FloatType f32;
  Type i32;
  Value rows;
};

void QuantizeLoopsBuilder::quantizeBlock(ArrayRef<Value> lead, Value rowBlock,
                                         Value colBlock) {
  ScaleBlockAttr block = op.getBlockShape();
  Value row0 = arith::MulIOp::create(b, loc, rowBlock, idx(block.getRows()));
  Value rowEnd = arith::MinUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, row0, idx(block.getRows())), rows);
  Value col0 = arith::MulIOp::create(b, loc, colBlock, idx(block.getCols()));
  Value colEnd = arith::AddIOp::create(b, loc, col0, idx(block.getCols()));
  auto rowLoop =
      scf::ForOp::create(b, loc, row0, rowEnd, idx(1), ValueRange{cf(0.0)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(rowLoop.getBody());
    auto colLoop = scf::ForOp::create(b, loc, col0, colEnd, idx(1),
                                      rowLoop.getRegionIterArgs());
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(colLoop.getBody());
      Value x =
          loadX(lead, rowLoop.getInductionVar(), colLoop.getInductionVar());
      // |x| as max(x, -x): NaN propagates, as torch's amax does.
      Value absX = arith::MaximumFOp::create(b, loc, x,
                                             arith::NegFOp::create(b, loc, x));
      scf::YieldOp::create(b, loc,
                           ValueRange{arith::MaximumFOp::create(
                               b, loc, colLoop.getRegionIterArgs()[0], absX)});
    }
    scf::YieldOp::create(b, loc, colLoop.getResults());
  }
  auto [scale, factor] =
      buildFp8ScaleAndFactor(b, loc, rowLoop.getResult(0), op.getFp8Max());
  SmallVector<Value> scaleIndices(lead);
  scaleIndices.append({rowBlock, colBlock});
  memref::StoreOp::create(b, loc, scale, op.getScale(), scaleIndices);
  Type fp8Type = op.getQ().getType().getElementType();
  forRange(row0, rowEnd, [&](Value row) {
    forRange(col0, colEnd, [&](Value col) {
      Value scaled =
          arith::MulFOp::create(b, loc, loadX(lead, row, col), factor);
      SmallVector<Value> indices(lead);
      indices.append({row, col});
      memref::StoreOp::create(
          b, loc, encodeFp8(b, loc, scaled, fp8Type, op.getFp8Max()), op.getQ(),
          indices);
    });
  });
}

void QuantizeLoopsBuilder::build() {
  Value x = op.getX();
  int64_t rank = op.getX().getType().getRank();
  rows = memref::DimOp::create(b, loc, x, rank - 2);
  ScaleBlockAttr block = op.getBlockShape();
  Value rowBlocks =
      arith::CeilDivUIOp::create(b, loc, rows, idx(block.getRows()));
  Value colBlocks = arith::DivUIOp::create(
      b, loc, memref::DimOp::create(b, loc, x, rank - 1), idx(block.getCols()));
  auto blocks = [&](ArrayRef<Value> lead) {
    forRange(idx(0), rowBlocks, [&](Value rowBlock) {
      forRange(idx(0), colBlocks, [&](Value colBlock) {
        quantizeBlock(lead, rowBlock, colBlock);
      });
    });
  };
  if (rank == 2)
    blocks({});
  else
    forRange(idx(0), memref::DimOp::create(b, loc, x, 0),
             [&](Value g) { blocks({g}); });
  op.erase();
}

} // namespace

/// f32 -> FP8 bits, round to nearest even, saturating at +-fp8_max; NaN
/// gives 0x7f (cvt.rn.satfinite's NaN). f8E4M3FN: bias 7, 3 mantissa bits;
/// f8E5M2: bias 15, 2 mantissa bits.
Value mlir::ggemm::encodeFp8(OpBuilder &b, Location loc, Value v, Type fp8Type,
                             double fp8Max) {
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  auto c32 = [&](int64_t c) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, c).getResult();
  };
  auto cf = [&](double c) -> Value {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                          APFloat(static_cast<float>(c)));
  };
  auto cmpf = [&](arith::CmpFPredicate p, Value x, Value y) -> Value {
    return arith::CmpFOp::create(b, loc, p, x, y);
  };
  auto select = [&](Value c, Value x, Value y) -> Value {
    return arith::SelectOp::create(b, loc, c, x, y);
  };
  bool e4m3 = isa<Float8E4M3FNType>(fp8Type);
  int64_t mantissaBits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  int64_t minNormalExp = 1 - bias;
  Value clamped =
      select(cmpf(arith::CmpFPredicate::OGT, v, cf(fp8Max)), cf(fp8Max), v);
  clamped = select(cmpf(arith::CmpFPredicate::OLT, clamped, cf(-fp8Max)),
                   cf(-fp8Max), clamped);
  Value bits = arith::BitcastOp::create(b, loc, i32, clamped);
  Value sign = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, c32(24)), c32(0x80));
  Value absBits = arith::AndIOp::create(b, loc, bits, c32(0x7fffffff));
  Value magnitude = arith::BitcastOp::create(b, loc, f32, absBits);
  // Normal: drop 23 - M mantissa bits, rounding to nearest even; a carry
  // out of the mantissa moves into the exponent, as it should. Then rebias.
  int64_t drop = 23 - mantissaBits;
  Value lsb = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, absBits, c32(drop)), c32(1));
  Value rounded = arith::AddIOp::create(
      b, loc, absBits,
      arith::AddIOp::create(b, loc, c32((int64_t(1) << (drop - 1)) - 1), lsb));
  Value normal = arith::SubIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, rounded, c32(drop)),
      c32((127 - bias) << mantissaBits));
  // Below the smallest normal: the count of subnormal steps, rounded to
  // nearest even by adding and subtracting 2^23 (exact: the count is below
  // 2^M); a count of 2^M is the smallest normal's code, as it should be.
  Value steps = arith::MulFOp::create(
      b, loc, magnitude, cf(std::ldexp(1.0, mantissaBits - minNormalExp)));
  Value magic = cf(8388608.0);
  Value count = arith::SubFOp::create(
      b, loc, arith::AddFOp::create(b, loc, steps, magic), magic);
  Value subnormal = arith::FPToUIOp::create(b, loc, i32, count);
  Value code = select(cmpf(arith::CmpFPredicate::OLT, magnitude,
                           cf(std::ldexp(1.0, minNormalExp))),
                      subnormal, normal);
  code = select(cmpf(arith::CmpFPredicate::UNO, v, v), c32(0x7f),
                arith::OrIOp::create(b, loc, code, sign));
  Value byte = arith::TruncIOp::create(b, loc, b.getI8Type(), code);
  return arith::BitcastOp::create(b, loc, fp8Type, byte);
}

void mlir::ggemm::lowerQuantizeToLoops(QuantizeOp op) {
  QuantizeLoopsBuilder(op).build();
}
