//===- SwapAB.cpp - swap the MMA operand roles for few rows ---------------===//
//
// For groups of few rows the token tile is a poor wgmma M (64 rows per
// warpgroup, most of them padding). Swapping the operands puts the weight
// tile in M and the tokens in wgmma's N, which may be any multiple of 8:
// 20 rows cost 24 columns of MMA instead of 64 rows. The product is then
// the output tile transposed; the store writes it back transposed, with the
// same masks and epilogue.
//
//===----------------------------------------------------------------------===//

#include "ggemm/Dialect/GGemm/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Verifier.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_GGEMMSWAPAB
#include "ggemm/Dialect/GGemm/Transforms/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;

namespace {

AccumulatorType transposed(AccumulatorType type) {
  ArrayRef<int64_t> shape = type.getShape();
  return AccumulatorType::get(type.getContext(), {shape[1], shape[0]},
                              type.getElementType());
}

/// Transposes every accumulator value of `body`: each op that makes or
/// updates one gets the transposed type, the mma its operands swapped, the
/// promotion its scales swapped and the store `transposed`. Checks first
/// that it knows every op an accumulator flows through, so a failure leaves
/// the IR untouched.
LogicalResult swapTileProgram(ForeachTileOp loop) {
  SmallVector<Operation *> accOps;
  WalkResult walk =
      loop.getBody().walk([&](Operation *op) {
        bool touchesAcc =
            llvm::any_of(op->getOperandTypes(),
                         llvm::IsaPred<AccumulatorType>) ||
            llvm::any_of(op->getResultTypes(), llvm::IsaPred<AccumulatorType>);
        if (!touchesAcc)
          return WalkResult::advance();
        if (!isa<ZeroAccumulatorOp, MmaOp, PromoteOp, MmaWaitOp, StoreTileOp,
                 scf::ForOp, scf::YieldOp>(op)) {
          op->emitOpError()
              << "carries an accumulator through an op ggemm-swap-ab does not "
                 "know how to transpose";
          return WalkResult::interrupt();
        }
        if (auto promote = dyn_cast<PromoteOp>(op);
            promote && promote.getBOffset()) {
          op->emitOpError()
              << "expects no b_offset in a tile program to swap (the weight "
                 "tile, swapped into wgmma's rows, must cover whole weight "
                 "scale blocks: block_n 64, 128 or 256)";
          return WalkResult::interrupt();
        }
        accOps.push_back(op);
        return WalkResult::advance();
      });
  if (walk.wasInterrupted())
    return failure();
  for (Operation *op : accOps) {
    for (Value result : op->getResults())
      if (auto acc = dyn_cast<AccumulatorType>(result.getType()))
        result.setType(transposed(acc));
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      for (BlockArgument arg : forOp.getRegionIterArgs())
        if (auto acc = dyn_cast<AccumulatorType>(arg.getType()))
          arg.setType(transposed(acc));
    } else if (auto mma = dyn_cast<MmaOp>(op)) {
      Value a = mma.getA(), b = mma.getB();
      mma.getAMutable().assign(b);
      mma.getBMutable().assign(a);
    } else if (auto promote = dyn_cast<PromoteOp>(op)) {
      // Activation scales follow the tokens (now the accumulator's
      // columns), weight scales the weight rows (now its rows).
      Value a = promote.getAScales(), b = promote.getBScales();
      promote.getAScalesMutable().clear();
      promote.getBScalesMutable().clear();
      if (b)
        promote.getAScalesMutable().assign(b);
      if (a)
        promote.getBScalesMutable().assign(a);
    } else if (auto store = dyn_cast<StoreTileOp>(op)) {
      store.setTransposed(!store.getTransposed());
    }
  }
  return success();
}

/// Whether the tile program of `loop` is already swapped: its store is
/// transposed.
bool isSwapped(ForeachTileOp loop) {
  bool swapped = false;
  loop.getBody().walk(
      [&](StoreTileOp store) { swapped |= store.getTransposed(); });
  return swapped;
}

struct SwapABPass : public ggemm::impl::GGemmSwapABBase<SwapABPass> {
  void runOnOperation() override {
    SmallVector<ForeachTileOp> loops;
    getOperation()->walk([&](ForeachTileOp loop) {
      if (loop.getConfig().getSwapAb() && !isSwapped(loop))
        loops.push_back(loop);
    });
    for (ForeachTileOp loop : loops) {
      if (failed(swapTileProgram(loop)))
        return signalPassFailure();
      // The swapped program must still verify (operand and accumulator
      // shapes, promotion scale counts).
      if (failed(mlir::verify(loop)))
        return signalPassFailure();
    }
  }
};
} // namespace
