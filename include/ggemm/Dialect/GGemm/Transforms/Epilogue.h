//===- Epilogue.h - per-element epilogue arithmetic ------------*- C++ -*-===//
//
// The arithmetic of the epilogue, shared by the GPU kernel
// (convert-ggemm-to-nvgpu) and the CPU reference back end
// (convert-ggemm-to-loops) so that the CPU tests check the very operations
// the GPU runs. Each back end loads the operands its own way and stores the
// result itself.
//
//===----------------------------------------------------------------------===//
#ifndef GGEMM_DIALECT_GGEMM_TRANSFORMS_EPILOGUE_H
#define GGEMM_DIALECT_GGEMM_TRANSFORMS_EPILOGUE_H

#include "ggemm/Dialect/GGemm/IR/GGemm.h"
#include "mlir/IR/Builders.h"

namespace mlir::ggemm {

/// Returns `act(acc * dequant + bias) * rowScale (+ old)` computed in f32
/// and converted to `outType` (bf16, f16 or f32). `acc`, `dequant`, `bias`
/// and `rowScale` are f32; `old`, the value already in the output, has type
/// `outType`. `dequant` (the FP8 scales of a tensor-wise or per-row scaled
/// product, `sx(m) * sw(n)`), `bias`, `rowScale` and `old` are null when
/// the epilogue has none.
Value buildEpilogue(OpBuilder &b, Location loc, Value acc, Value dequant,
                    Value bias, Activation activation, Value rowScale,
                    Value old, Type outType);

/// `x * y` in f32 where either factor may be absent (null, i.e. 1): the
/// product of the epilogue's scale factors, null when both are.
Value mulFactors(OpBuilder &b, Location loc, Value x, Value y);

/// The gated (SwiGLU) epilogue: `silu(gate + gateBias) * (up + upBias) *
/// rowScale (+ old)`, in f32, converted to `outType`. The biases,
/// `rowScale` and `old` are null when absent.
Value buildGatedEpilogue(OpBuilder &b, Location loc, Value gate, Value up,
                         Value gateBias, Value upBias, Value rowScale,
                         Value old, Type outType);

} // namespace mlir::ggemm

#endif // GGEMM_DIALECT_GGEMM_TRANSFORMS_EPILOGUE_H
