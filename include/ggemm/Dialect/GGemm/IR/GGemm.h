//===- GGemm.h - ggemm dialect --------------------------------*- C++ -*-===//
//
// The ggemm dialect: problem-level grouped matmul ops, FP8 scale-block
// attributes and the tile-level program a kernel is made of.
//
//===----------------------------------------------------------------------===//
#ifndef GGEMM_DIALECT_GGEMM_IR_GGEMM_H
#define GGEMM_DIALECT_GGEMM_IR_GGEMM_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ggemm/Dialect/GGemm/IR/GGemmOpsDialect.h.inc"

#include "ggemm/Dialect/GGemm/IR/GGemmEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "ggemm/Dialect/GGemm/IR/GGemmAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "ggemm/Dialect/GGemm/IR/GGemmOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "ggemm/Dialect/GGemm/IR/GGemmOps.h.inc"

namespace mlir::ggemm {
/// Largest dynamic shared memory one sm_90 CTA may use (227 KB).
constexpr int64_t kMaxSmemBytesPerCta = 227 * 1024;
/// Byte width of one element of an operand type (FP8 is 1, bf16/f16 2).
int64_t getElementBytes(Type type);
/// True for the FP8 element types wgmma accepts.
bool isFp8(Type type);
} // namespace mlir::ggemm

#endif // GGEMM_DIALECT_GGEMM_IR_GGEMM_H
