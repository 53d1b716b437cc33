//===- InitAllPasses.h - register every ggemm pass ------------*- C++ -*-===//
//
// What an embedding compiler calls: registerAllDialects() adds the ggemm
// dialect and the upstream dialects its pipelines produce to a registry;
// registerAllPasses() registers the ggemm passes and pipelines.
//
//===----------------------------------------------------------------------===//
#ifndef GGEMM_INITALLPASSES_H
#define GGEMM_INITALLPASSES_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::ggemm {
/// Adds ggemm and every dialect (and extension/translation) its pipelines
/// need to `registry`.
void registerAllDialects(DialectRegistry &registry);
/// Registers all ggemm passes and the `ggemm-to-ptx` / `ggemm-to-cpu`
/// pipelines.
void registerAllPasses();
} // namespace mlir::ggemm

#endif // GGEMM_INITALLPASSES_H
