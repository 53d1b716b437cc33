//===- Passes.h - ggemm conversion passes ---------------------*- C++ -*-===//
#ifndef GGEMM_CONVERSION_PASSES_H
#define GGEMM_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ggemm {
#define GEN_PASS_DECL
#include "ggemm/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ggemm/Conversion/Passes.h.inc"
} // namespace mlir::ggemm

#endif // GGEMM_CONVERSION_PASSES_H
