//===- Epilogue.cpp - per-element epilogue arithmetic ---------------------===//

#include "ggemm/Dialect/GGemm/Transforms/Epilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::ggemm;

static Value f32Constant(OpBuilder &b, Location loc, float v) {
  return arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(v));
}

Value mlir::ggemm::buildEpilogue(OpBuilder &b, Location loc, Value acc,
                                 Value bias, Activation activation,
                                 Value rowScale, Value old, Type outType) {
  Value v = acc;
  if (bias)
    v = arith::AddFOp::create(b, loc, v, bias);
  switch (activation) {
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
  case Activation::silu: {
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, v));
    v = arith::DivFOp::create(
        b, loc, v, arith::AddFOp::create(b, loc, f32Constant(b, loc, 1.0f), e));
    break;
  }
  }
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
