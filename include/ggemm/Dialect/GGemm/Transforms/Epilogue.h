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

/// The FP8 quantisation of a block whose largest |value| is `amax` (f32),
/// as `ggemm.quantize` and an e4m3 y's epilogue define it: `{scale,
/// factor}` with `amax` floored at 1e-4 (`arith.maximumf`: NaN stays),
/// `scale = amax * f32(1 / fp8Max)` (torch's division by a scalar on the
/// GPU) and `factor = (1 / amax) * fp8Max`; a value `v` is stored as
/// `fp8(clamp(v * factor))` and read back as `fp8 * scale`.
std::pair<Value, Value> buildFp8ScaleAndFactor(OpBuilder &b, Location loc,
                                               Value amax, double fp8Max);

} // namespace mlir::ggemm

#endif // GGEMM_DIALECT_GGEMM_TRANSFORMS_EPILOGUE_H
