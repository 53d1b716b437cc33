//===- RoutingToLoops.h - ggemm.sort_by_expert -> CPU loops ----*- C++ -*-===//
#ifndef GGEMM_LIB_CONVERSION_GGEMMTOLOOPS_ROUTINGTOLOOPS_H
#define GGEMM_LIB_CONVERSION_GGEMMTOLOOPS_ROUTINGTOLOOPS_H

#include "ggemm/Dialect/GGemm/IR/GGemm.h"

namespace mlir::ggemm {

/// Replaces `op` by a stable counting sort in loops (the CPU reference of
/// the GPU routing kernel): count the pairs per bucket, scan, then place
/// each pair in order.
void lowerSortByExpertToLoops(SortByExpertOp op);

} // namespace mlir::ggemm

#endif // GGEMM_LIB_CONVERSION_GGEMMTOLOOPS_ROUTINGTOLOOPS_H
