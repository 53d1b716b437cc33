//===- Routing.cpp - the expert bucket of a MoE pair ----------------------===//

#include "ggemm/Dialect/GGemm/Transforms/Routing.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

Value mlir::ggemm::buildExpertBucket(OpBuilder &b, Location loc, Value id,
                                     int64_t numExperts) {
  Type type = id.getType();
  auto constant = [&](int64_t v) -> Value {
    if (type.isIndex())
      return arith::ConstantIndexOp::create(b, loc, v);
    return arith::ConstantIntOp::create(b, loc, type, v);
  };
  Value zero = constant(0);
  Value last = constant(numExperts + 1);
  Value next = arith::AddIOp::create(b, loc, id, constant(1));
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, id, zero);
  Value beyond = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, id,
                                       constant(numExperts));
  Value bucket = arith::SelectOp::create(b, loc, beyond, last, next);
  return arith::SelectOp::create(b, loc, negative, zero, bucket);
}
