//===- Registration.cpp - register ggemm dialects and passes --------------===//

#include "ggemm/Conversion/Passes.h"
#include "ggemm/Dialect/GGemm/IR/GGemm.h"
#include "ggemm/Dialect/GGemm/Transforms/Passes.h"
#include "ggemm/InitAllPasses.h"
#include "ggemm/Pipelines/Pipelines.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::ggemm::registerAllDialects(DialectRegistry &registry) {
  registry.insert<GGemmDialect>();
  // The pipelines produce func, arith, math, memref, scf, cf, vector, linalg,
  // gpu, nvgpu, nvvm and llvm; the NVVM target attribute needs the
  // extensions and the LLVM IR translations to serialise to PTX/cubin.
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
}

void mlir::ggemm::registerAllPasses() {
  registerGGemmPasses();
  registerGGemmConversionPasses();
  registerPipelines();
}
