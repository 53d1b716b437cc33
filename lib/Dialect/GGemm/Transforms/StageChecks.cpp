//===- StageChecks.cpp - is the IR at the stage a pass expects? -----------===//

#include "ggemm/Dialect/GGemm/Transforms/StageChecks.h"

using namespace mlir;
using namespace mlir::ggemm;

LogicalResult mlir::ggemm::expectTiled(Operation *root, StringRef pass) {
  WalkResult result = root->walk([&](Operation *op) {
    if (!isa<SegmentMatmulOp, MaskedMatmulOp, BatchedMatmulOp,
             SegmentMatmulKOp>(op))
      return WalkResult::advance();
    op->emitOpError() << "is a problem-level op: run ggemm-select-config and "
                         "ggemm-tile before "
                      << pass;
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

LogicalResult mlir::ggemm::expectScheduled(Operation *root, StringRef pass) {
  if (failed(expectTiled(root, pass)))
    return failure();
  WalkResult result = root->walk([&](ForeachTileOp loop) {
    loop.emitOpError() << "is an unscheduled tile loop: run "
                          "ggemm-persistent-schedule before "
                       << pass;
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}
