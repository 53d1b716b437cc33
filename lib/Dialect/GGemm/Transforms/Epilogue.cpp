//===- Epilogue.cpp - per-element epilogue arithmetic ---------------------===//

#include "ggemm/Dialect/GGemm/Transforms/Epilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::ggemm;

static Value f32Constant(OpBuilder &b, Location loc, float v) {
  return arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(v));
}

static Value silu(OpBuilder &b, Location loc, Value v) {
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, v));
  return arith::DivFOp::create(
      b, loc, v, arith::AddFOp::create(b, loc, f32Constant(b, loc, 1.0f), e),
      arith::FastMathFlags::afn);
}

/// `v * rowScale (+ old)` converted to `outType`: what every epilogue ends
/// with.
static Value finishEpilogue(OpBuilder &b, Location loc, Value v, Value rowScale,
                            Value old, Type outType) {
  if (rowScale)
    v = arith::MulFOp::create(b, loc, v, rowScale);
  if (old) {
    if (!outType.isF32())
      old = arith::ExtFOp::create(b, loc, b.getF32Type(), old);
    v = arith::AddFOp::create(b, loc, v, old);
  }
  if (!outType.isF32())
    v = arith::TruncFOp::create(b, loc, outType, v);
  return v;
}

Value mlir::ggemm::buildGatedEpilogue(OpBuilder &b, Location loc, Value gate,
                                      Value up, Value gateBias, Value upBias,
                                      Value rowScale, Value old, Type outType) {
  if (gateBias)
    gate = arith::AddFOp::create(b, loc, gate, gateBias);
  if (upBias)
    up = arith::AddFOp::create(b, loc, up, upBias);
  Value v = arith::MulFOp::create(b, loc, silu(b, loc, gate), up);
  return finishEpilogue(b, loc, v, rowScale, old, outType);
}

Value mlir::ggemm::mulFactors(OpBuilder &b, Location loc, Value x, Value y) {
  if (!x || !y)
    return x ? x : y;
  return arith::MulFOp::create(b, loc, x, y);
}

Value mlir::ggemm::buildEpilogue(OpBuilder &b, Location loc, Value acc,
                                 Value dequant, Value bias,
                                 Activation activation, Value rowScale,
                                 Value old, Type outType) {
  Value v = mulFactors(b, loc, acc, dequant);
  if (bias)
    v = arith::AddFOp::create(b, loc, v, bias);
  switch (activation) {
  case Activation::swiglu:
    // Gated: two accumulator values per output (buildGatedEpilogue).
    llvm_unreachable("swiglu goes through buildGatedEpilogue");
  case Activation::none:
    break;
  case Activation::relu:
    v = arith::MaximumFOp::create(b, loc, v, f32Constant(b, loc, 0.0f));
    break;
  case Activation::gelu: {
    // Exact (erf) GELU, as torch.nn.functional.gelu computes by default.
    Value erf = math::ErfOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, v,
                              f32Constant(b, loc, 0.70710678118654752f)));
    v = arith::MulFOp::create(
        b, loc, arith::MulFOp::create(b, loc, f32Constant(b, loc, 0.5f), v),
        arith::AddFOp::create(b, loc, f32Constant(b, loc, 1.0f), erf));
    break;
  }
  case Activation::silu:
    v = silu(b, loc, v);
    break;
  }
  return finishEpilogue(b, loc, v, rowScale, old, outType);
}

std::pair<Value, Value> mlir::ggemm::buildFp8ScaleAndFactor(OpBuilder &b,
                                                            Location loc,
                                                            Value amax,
                                                            double fp8Max) {
  Type f32 = b.getF32Type();
  auto cf = [&](double v) -> Value {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                          APFloat(static_cast<float>(v)));
  };
  amax = arith::MaximumFOp::create(b, loc, amax, cf(1e-4));
  Value scale = arith::MulFOp::create(b, loc, amax, cf(1.0 / fp8Max));
  Value factor = arith::MulFOp::create(
      b, loc, arith::DivFOp::create(b, loc, cf(1.0), amax), cf(fp8Max));
  return {scale, factor};
}
