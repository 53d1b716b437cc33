//===- QuantizeToLoops.h - ggemm.quantize -> CPU loops ---------*- C++ -*-===//
#ifndef GGEMM_LIB_CONVERSION_GGEMMTOLOOPS_QUANTIZETOLOOPS_H
#define GGEMM_LIB_CONVERSION_GGEMMTOLOOPS_QUANTIZETOLOOPS_H

#include "ggemm/Dialect/GGemm/IR/GGemm.h"
#include "mlir/IR/Builders.h"

namespace mlir::ggemm {

/// Replaces `op` by loops over its scale blocks (the CPU reference of the
/// GPU quantize kernel): the block's absolute maximum, its scale, then each
/// element scaled and encoded to FP8 with integer arithmetic.
void lowerQuantizeToLoops(QuantizeOp op);

/// f32 `v` -> FP8 (`fp8Type`) with integer arithmetic on its bits: round to
/// nearest even, saturating at +-`fp8Max`, NaN to 0x7f (what
/// `cvt.rn.satfinite` gives on the GPU). LLVM has no FP8 conversions for the
/// CPU.
Value encodeFp8(OpBuilder &b, Location loc, Value v, Type fp8Type,
                double fp8Max);

} // namespace mlir::ggemm

#endif // GGEMM_LIB_CONVERSION_GGEMMTOLOOPS_QUANTIZETOLOOPS_H
