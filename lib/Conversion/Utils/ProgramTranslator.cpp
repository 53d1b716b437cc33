//===- ProgramTranslator.cpp - copy a tile program op by op ---------------===//

#include "ProgramTranslator.h"

using namespace mlir;
using namespace mlir::ggemm;

static bool isGGemmType(Type type) {
  return isa<AccumulatorType, TileType, RingType, ScheduleType>(type);
}

Value ProgramTranslator::lookup(Value value, Operation *user) {
  if (!value)
    return value;
  if (Value mapped = mapping.lookupOrNull(value))
    return mapped;
  Value resolved = resolveExternal(value, user);
  if (resolved)
    mapping.map(value, resolved);
  return resolved;
}

LogicalResult ProgramTranslator::translateBlock(Block &block) {
  for (Operation &op : block) {
    LogicalResult result = success();
    if (isa<YieldOp>(op))
      continue;
    if (auto forOp = dyn_cast<scf::ForOp>(op))
      result = translateFor(forOp);
    else if (auto ifOp = dyn_cast<scf::IfOp>(op))
      result = translateIf(ifOp);
    else if (auto yield = dyn_cast<scf::YieldOp>(op))
      result = translateYield(yield);
    else if (isa<GGemmDialect>(op.getDialect()))
      result = translateGGemmOp(&op);
    else
      result = translateOther(&op);
    if (failed(result))
      return failure();
  }
  return success();
}

LogicalResult ProgramTranslator::lookupAll(ValueRange values, Operation *user,
                                           SmallVectorImpl<Value> &result) {
  for (Value value : values) {
    result.push_back(lookup(value, user));
    if (!result.back())
      return failure();
  }
  return success();
}

LogicalResult ProgramTranslator::translateFor(scf::ForOp op) {
  SmallVector<Value> inits;
  if (failed(lookupAll(op.getInitArgs(), op, inits)))
    return failure();
  Value lb = lookup(op.getLowerBound(), op),
        ub = lookup(op.getUpperBound(), op), step = lookup(op.getStep(), op);
  if (!lb || !ub || !step)
    return failure();
  auto loop = scf::ForOp::create(b, op.getLoc(), lb, ub, step, inits);
  Block *body = loop.getBody();
  if (!body->empty())
    body->getTerminator()->erase();
  mapping.map(op.getInductionVar(), loop.getInductionVar());
  for (auto [from, to] :
       llvm::zip(op.getRegionIterArgs(), loop.getRegionIterArgs()))
    mapping.map(from, to);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(body);
    if (failed(translateBlock(*op.getBody())))
      return failure();
  }
  mapping.map(op.getResults(), loop.getResults());
  return success();
}

LogicalResult ProgramTranslator::translateIf(scf::IfOp op) {
  Value condition = lookup(op.getCondition(), op);
  if (!condition)
    return failure();
  // The branches are translated into detached blocks first: the result
  // types of the new if are those of the translated yields.
  auto translateBranch = [&](Block *from, std::unique_ptr<Block> &to) {
    to = std::make_unique<Block>();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(to.get());
    return translateBlock(*from);
  };
  bool withElse = !op.getElseRegion().empty();
  std::unique_ptr<Block> thenBlock, elseBlock;
  if (failed(translateBranch(op.thenBlock(), thenBlock)) ||
      (withElse && failed(translateBranch(op.elseBlock(), elseBlock))))
    return failure();
  auto newIf = scf::IfOp::create(b, op.getLoc(),
                                 thenBlock->getTerminator()->getOperandTypes(),
                                 condition, withElse);
  auto replace = [](Region &region, std::unique_ptr<Block> block) {
    region.getBlocks().clear();
    region.push_back(block.release());
  };
  replace(newIf.getThenRegion(), std::move(thenBlock));
  if (withElse)
    replace(newIf.getElseRegion(), std::move(elseBlock));
  mapping.map(op.getResults(), newIf.getResults());
  return success();
}

LogicalResult ProgramTranslator::translateYield(scf::YieldOp op) {
  SmallVector<Value> operands;
  if (failed(lookupAll(op.getOperands(), op, operands)))
    return failure();
  scf::YieldOp::create(b, op.getLoc(), operands);
  return success();
}

LogicalResult ProgramTranslator::copy(Operation *op) {
  if (op->getNumRegions() != 0)
    return op->emitOpError() << "is not supported in a ggemm tile program "
                                "(only scf.for, scf.if and ops without "
                                "regions)";
  if (llvm::any_of(op->getOperandTypes(), isGGemmType) ||
      llvm::any_of(op->getResultTypes(), isGGemmType))
    return op->emitOpError() << "expects no ggemm-typed operands or results "
                                "outside the ggemm ops of a tile program";
  for (Value operand : op->getOperands())
    if (!lookup(operand, op))
      return failure();
  b.clone(*op, mapping);
  return success();
}
