//===- GGemmCAPI.cpp - C API of the ggemm compiler ------------------------===//

#include "ggemm-c/GGemm.h"

#include "ggemm/Dialect/GGemm/Transforms/Passes.h"
#include "ggemm/InitAllPasses.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <mutex>

using namespace mlir;

struct GGemmCompiler {
  MLIRContext context;
  std::string lastError;
  explicit GGemmCompiler(const DialectRegistry &registry)
      : context(registry, MLIRContext::Threading::DISABLED) {
    context.loadAllAvailableDialects();
  }
};

struct GGemmModule {
  GGemmCompiler *compiler;
  OwningOpRef<ModuleOp> module;
};

namespace {
/// Collects the diagnostics emitted while it lives into `sink`.
class DiagnosticCollector {
public:
  DiagnosticCollector(GGemmCompiler *compiler)
      : compiler(compiler),
        handler(&compiler->context, [this](Diagnostic &diag) {
          llvm::raw_string_ostream os(this->compiler->lastError);
          os << diag.getLocation() << ": " << diag << "\n";
          for (Diagnostic &note : diag.getNotes())
            os << note.getLocation() << ": note: " << note << "\n";
          return success();
        }) {
    compiler->lastError.clear();
  }

private:
  GGemmCompiler *compiler;
  ScopedDiagnosticHandler handler;
};

char *copyString(const std::string &s) {
  char *out = static_cast<char *>(std::malloc(s.size() + 1));
  std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}
} // namespace

GGemmCompiler *ggemmCompilerCreate(void) {
  static std::once_flag once;
  std::call_once(once, [] { ggemm::registerAllPasses(); });
  DialectRegistry registry;
  ggemm::registerAllDialects(registry);
  return new GGemmCompiler(registry);
}

void ggemmCompilerDestroy(GGemmCompiler *compiler) { delete compiler; }

const char *ggemmCompilerLastError(GGemmCompiler *compiler) {
  return compiler->lastError.c_str();
}

GGemmModule *ggemmModuleParse(GGemmCompiler *compiler, const char *source,
                              size_t length) {
  DiagnosticCollector collect(compiler);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      StringRef(source, length), ParserConfig(&compiler->context));
  if (!module)
    return nullptr;
  return new GGemmModule{compiler, std::move(module)};
}

void ggemmModuleDestroy(GGemmModule *module) { delete module; }

int ggemmModuleRunPipeline(GGemmModule *module, const char *pipeline) {
  DiagnosticCollector collect(module->compiler);
  PassManager pm(&module->compiler->context);
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (failed(parsePassPipeline(pipeline, pm, os))) {
    module->compiler->lastError += "invalid pipeline: " + errors;
    return 1;
  }
  return failed(pm.run(*module->module)) ? 1 : 0;
}

char *ggemmModulePrint(GGemmModule *module, int generic) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  module->module->print(os, flags);
  return copyString(text);
}

int ggemmModuleExportBundles(GGemmModule *module, const char *dir) {
  DiagnosticCollector collect(module->compiler);
  return failed(ggemm::exportBundles(*module->module, dir, nullptr)) ? 1 : 0;
}

void ggemmFreeString(char *string) { std::free(string); }
