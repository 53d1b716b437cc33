//===- gemm-opt.cpp - the ggemm optimizer driver
//---------------------------===//
//
// mlir-opt for ggemm: the ggemm dialect and passes, the upstream dialects and
// passes its pipelines need, and the ggemm-to-ptx / ggemm-to-cpu pipelines.
//
//===----------------------------------------------------------------------===//

#include "ggemm/InitAllPasses.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"

int main(int argc, char **argv) {
  // A diagnostic names the op and says what is wrong; MLIR's default also
  // prints the op in generic form after it, which buries the message. Keep
  // it behind --mlir-print-op-on-diagnostic.
  mlir::registerMLIRContextCLOptions();
  auto &options = llvm::cl::getRegisteredOptions();
  if (auto *printOp = static_cast<llvm::cl::opt<bool> *>(
          options.lookup("mlir-print-op-on-diagnostic")))
    printOp->setInitialValue(false);
  mlir::registerAllPasses();
  mlir::ggemm::registerAllPasses();
  mlir::DialectRegistry registry;
  mlir::ggemm::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "GGEMM optimizer driver\n", registry));
}
