//===- ProgramTranslator.h - copy a tile program op by op -----*- C++ -*-===//
//
// Both back ends turn a ggemm.launch into code by walking its body once, in
// order: each ggemm op is translated by a small function of the back end,
// scf.for / scf.if / scf.yield are rebuilt with the back end's types for the
// values they carry (accumulators, tiles, rings), and every other op is
// copied as it is. Private to the conversion library.
//
//===----------------------------------------------------------------------===//
#ifndef GGEMM_LIB_CONVERSION_UTILS_PROGRAMTRANSLATOR_H
#define GGEMM_LIB_CONVERSION_UTILS_PROGRAMTRANSLATOR_H

#include "ggemm/Dialect/GGemm/IR/GGemm.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::ggemm {

class ProgramTranslator {
public:
  explicit ProgramTranslator(OpBuilder &b) : b(b) {}
  virtual ~ProgramTranslator() = default;

  /// Translates the ops of `block` at the builder's insertion point. The
  /// block's arguments must be mapped; a ggemm.yield terminator is dropped,
  /// an scf.yield becomes one with the translated operands.
  LogicalResult translateBlock(Block &block);

  IRMapping &getMapping() { return mapping; }

protected:
  /// Translates one op of the ggemm dialect, mapping its results.
  virtual LogicalResult translateGGemmOp(Operation *op) = 0;
  /// The translation of `value`, defined outside the translated region
  /// (null, after a diagnostic, when the back end cannot use it).
  virtual Value resolveExternal(Value value, Operation *user) = 0;

  /// Translates an op of another dialect without ggemm-typed values; the
  /// default copies it.
  virtual LogicalResult translateOther(Operation *op) { return copy(op); }
  /// Copies `op`, its operands translated.
  LogicalResult copy(Operation *op);

  /// The translation of an operand of `user`.
  Value lookup(Value value, Operation *user);
  /// The translations of `values`, appended to `result`; fails if one has
  /// none.
  LogicalResult lookupAll(ValueRange values, Operation *user,
                          SmallVectorImpl<Value> &result);

  OpBuilder &b;
  IRMapping mapping;

private:
  LogicalResult translateFor(scf::ForOp op);
  LogicalResult translateIf(scf::IfOp op);
  LogicalResult translateYield(scf::YieldOp op);
};

} // namespace mlir::ggemm

#endif // GGEMM_LIB_CONVERSION_UTILS_PROGRAMTRANSLATOR_H
