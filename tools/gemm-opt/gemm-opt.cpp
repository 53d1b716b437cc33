//===- gemm-opt.cpp - the ggemm optimizer driver
//---------------------------===//
//
// mlir-opt for ggemm: the ggemm dialect and passes, the upstream dialects and
// passes its pipelines need, and the ggemm-to-ptx / ggemm-to-cpu pipelines.
//
//===----------------------------------------------------------------------===//

#include "ggemm/InitAllPasses.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::ggemm::registerAllPasses();
  mlir::DialectRegistry registry;
  mlir::ggemm::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "GGEMM optimizer driver\n", registry));
}
