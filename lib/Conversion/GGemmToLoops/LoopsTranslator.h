//===- LoopsTranslator.h - convert-ggemm-to-loops internals ----*- C++ -*-===//
//
// The CPU reference back end's translator of scheduled tile programs
// (GGemmToLoops.cpp: the launch, the schedule and the pass) and its tile-op
// lowerings (TileOpsToLoops.cpp: loads, mma, promotion, stores), with the
// loop helpers both use.
//
//===----------------------------------------------------------------------===//
#ifndef GGEMM_LIB_CONVERSION_GGEMMTOLOOPS_LOOPSTRANSLATOR_H
#define GGEMM_LIB_CONVERSION_GGEMMTOLOOPS_LOOPSTRANSLATOR_H

#include "../Utils/ProgramTranslator.h"
#include "ggemm/Dialect/GGemm/Transforms/TileSchedule.h"

namespace mlir::ggemm::loops {

/// `v` (an integer) as an index.
Value toIndex(OpBuilder &b, Location loc, Value v);

/// `v` as f32: FP8 decoded exactly with integer arithmetic (LLVM has no FP8
/// types for the CPU), narrower floats extended.
Value toF32(OpBuilder &b, Location loc, Value v);

/// `lhs < rhs`, unsigned.
Value ult(OpBuilder &b, Location loc, Value lhs, Value rhs);

/// `source[at]`, or `zero` when an index is past its dimension (TMA's zero
/// fill) or, with `inMask`, when `inMask` is false.
Value loadOrZero(OpBuilder &b, Location loc, Value source, ValueRange at,
                 Value zero, Value inMask = Value());

/// `for i < extent0, j < extent1: body(i, j)`, the builder left after the
/// nest.
void forEach2D(OpBuilder &b, Location loc, int64_t extent0, int64_t extent1,
               function_ref<void(Value, Value)> body);

class LoopsTranslator : public ProgramTranslator {
public:
  LoopsTranslator(OpBuilder &b, OpBuilder &allocas, int64_t numCtas)
      : ProgramTranslator(b), allocas(allocas), numCtas(numCtas) {}

  void lowerLaunch(LaunchOp launch, LogicalResult &result);

protected:
  LogicalResult translateGGemmOp(Operation *op) override;
  Value resolveExternal(Value value, Operation *) override { return value; }

private:
  TileSchedule scheduleOf(Value schedule);
  /// A buffer for the values of an accumulator or tile type, allocated once
  /// at the function's entry so that walking many tiles does not grow the
  /// stack; every execution of the op overwrites it.
  Value buffer(Type type, Location loc);

  LogicalResult lowerLoad(LoadTileOp op);
  LogicalResult lowerLoadScales(LoadScalesOp op);
  LogicalResult lowerMma(MmaOp op);
  LogicalResult lowerPromote(PromoteOp op);
  LogicalResult lowerStore(StoreTileOp op);
  /// A split-K cluster's sum: ranks > 0 keep their partial in
  /// `splitKPartials` (one per rank and round); rank 0, which the grid
  /// loop runs after them, adds them in rank order.
  LogicalResult lowerSplitKSum(SplitKSumOp op);
  /// The quantised store of one row of an e4m3 y (with `y_scale`): columns
  /// `[col, colLimit)`, each value given by `epilogueAt(column, old, type)`.
  void quantizedRow(StoreTileOp op, Value y, Value yScale, Value row, Value col,
                    Value colLimit, int64_t tileCols,
                    function_ref<Value(Value, Value, Type)> epilogueAt);

  OpBuilder &allocas;
  int64_t numCtas;
  /// With split_k: [(split_k - 1) x rounds, rows, cols] partial sums, the
  /// rounds (each cluster's most tiles) and split_k.
  Value splitKPartials, splitKRounds;
  int64_t splitK = 1;
};

} // namespace mlir::ggemm::loops

#endif // GGEMM_LIB_CONVERSION_GGEMMTOLOOPS_LOOPSTRANSLATOR_H
