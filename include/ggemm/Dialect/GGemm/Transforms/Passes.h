//===- Passes.h - ggemm transformation passes -----------------*- C++ -*-===//
#ifndef GGEMM_DIALECT_GGEMM_TRANSFORMS_PASSES_H
#define GGEMM_DIALECT_GGEMM_TRANSFORMS_PASSES_H

#include "ggemm/Dialect/GGemm/IR/GGemm.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ggemm {
#define GEN_PASS_DECL
#include "ggemm/Dialect/GGemm/Transforms/Passes.h.inc"

/// Writes `<dir>/<kernel>.{ptx,cubin,json}` for every kernel of a module
/// compiled by ggemm-to-ptx; appends the paths written to `written`.
LogicalResult exportBundles(ModuleOp module, StringRef dir,
                            SmallVectorImpl<std::string> *written);

#define GEN_PASS_REGISTRATION
#include "ggemm/Dialect/GGemm/Transforms/Passes.h.inc"
} // namespace mlir::ggemm

#endif // GGEMM_DIALECT_GGEMM_TRANSFORMS_PASSES_H
