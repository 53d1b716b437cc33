// Embeds GGEMM the way an ML compiler would: register the dialects and
// passes, build a module, run the registered ggemm-to-ptx pipeline and check
// that a kernel came out.
#include "ggemm/InitAllPasses.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

static const char *kSource = R"mlir(
func.func @experts(%x: memref<?x256xbf16>, %w: memref<4x128x256xbf16>,
                   %indptr: memref<5xi64>, %y: memref<?x128xf32>) {
  ggemm.segment_matmul ins(%x, %w : memref<?x256xbf16>, memref<4x128x256xbf16>)
      segments(%indptr : memref<5xi64>) outs(%y : memref<?x128xf32>)
  return
}
)mlir";

int main() {
  mlir::ggemm::registerAllPasses();
  mlir::DialectRegistry registry;
  mlir::ggemm::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(kSource, &context);
  if (!module)
    return 1;
  mlir::PassManager pm(&context);
  if (mlir::failed(mlir::parsePassPipeline("ggemm-to-ptx{chip=sm_90a}", pm)) ||
      mlir::failed(pm.run(*module)))
    return 2;
  // Dynamic rows: by default one kernel per tile variant (experts_v0_kernel,
  // ...), each with its gpu.binary, listed in ggemm.manifests.
  auto manifests =
      (*module)->getAttrOfType<mlir::DictionaryAttr>("ggemm.manifests");
  unsigned kernels = 0;
  llvm::outs() << "consumer: ggemm-to-ptx produced";
  for (mlir::NamedAttribute kernel :
       manifests ? manifests.getValue()
                 : llvm::ArrayRef<mlir::NamedAttribute>())
    if (module->lookupSymbol((kernel.getName().getValue() + "_module").str())) {
      llvm::outs() << " " << kernel.getName().getValue();
      ++kernels;
    }
  llvm::outs() << (kernels ? "\n" : " nothing\n");
  return kernels ? 0 : 3;
}
