//===- QuantizeToLoops.h - ggemm.quantize -> CPU loops ---------*- C++ -*-===//
#ifndef GGEMM_LIB_CONVERSION_GGEMMTOLOOPS_QUANTIZETOLOOPS_H
#define GGEMM_LIB_CONVERSION_GGEMMTOLOOPS_QUANTIZETOLOOPS_H

#include "ggemm/Dialect/GGemm/IR/GGemm.h"

namespace mlir::ggemm {

/// Replaces `op` by loops over its scale blocks (the CPU reference of the
/// GPU quantize kernel): the block's absolute maximum, its scale, then each
/// element scaled and encoded to FP8 with integer arithmetic.
void lowerQuantizeToLoops(QuantizeOp op);

} // namespace mlir::ggemm

#endif // GGEMM_LIB_CONVERSION_GGEMMTOLOOPS_QUANTIZETOLOOPS_H
