//===- Routing.h - the expert bucket of a MoE pair -------------*- C++ -*-===//
//
// What both back ends of ggemm.sort_by_expert (the GPU kernel of
// convert-ggemm-to-nvvm and the loops of convert-ggemm-to-loops) compute
// per pair, shared so that the CPU tests check the very arithmetic the GPU
// runs.
//
//===----------------------------------------------------------------------===//
#ifndef GGEMM_DIALECT_GGEMM_TRANSFORMS_ROUTING_H
#define GGEMM_DIALECT_GGEMM_TRANSFORMS_ROUTING_H

#include "mlir/IR/Builders.h"

namespace mlir::ggemm {

/// The counting-sort bucket of expert id `id` (any integer type; the
/// result has the same type) among `numExperts` experts: 0 for a negative
/// id, `id + 1` for an id in `[0, numExperts)`, `numExperts + 1` from
/// `numExperts` on. Bucket `e + 1` starts at `seg_indptr[e]`.
Value buildExpertBucket(OpBuilder &b, Location loc, Value id,
                        int64_t numExperts);

} // namespace mlir::ggemm

#endif // GGEMM_DIALECT_GGEMM_TRANSFORMS_ROUTING_H
