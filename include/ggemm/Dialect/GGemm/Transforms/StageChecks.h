//===- StageChecks.h - is the IR at the stage a pass expects? -*- C++ -*-===//
//
// Each ggemm pass works on one IR level. Given IR of an earlier level it
// says which pass has to run first, instead of leaving the ops untouched.
//
//===----------------------------------------------------------------------===//
#ifndef GGEMM_DIALECT_GGEMM_TRANSFORMS_STAGECHECKS_H
#define GGEMM_DIALECT_GGEMM_TRANSFORMS_STAGECHECKS_H

#include "ggemm/Dialect/GGemm/IR/GGemm.h"

namespace mlir::ggemm {

/// Fails on the first problem-level op (segment, masked or batched matmul)
/// under `root`: `pass` needs the tile program ggemm-tile writes.
LogicalResult expectTiled(Operation *root, StringRef pass);

/// Fails on the first problem-level op or ggemm.foreach_tile under `root`:
/// `pass` needs the launches ggemm-persistent-schedule writes.
LogicalResult expectScheduled(Operation *root, StringRef pass);

} // namespace mlir::ggemm

#endif // GGEMM_DIALECT_GGEMM_TRANSFORMS_STAGECHECKS_H
