//===- GGemmCAPI.cpp - C API of the ggemm compiler ------------------------===//

#include "ggemm-c/GGemm.h"

#include "ggemm/Dialect/GGemm/Transforms/Passes.h"
#include "ggemm/InitAllPasses.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unistd.h>

using namespace mlir;

/// The compiler threads GGEMM_COMPILER_THREADS asks for: 0 (unset, empty or
/// not a number) for one per hardware thread.
static unsigned requestedThreads() {
  const char *text = std::getenv("GGEMM_COMPILER_THREADS");
  unsigned threads = 0;
  if (!text || StringRef(text).trim().getAsInteger(10, threads))
    return 0;
  return threads;
}

/// One pool for every compiler of the process, sized on first use: the
/// kernels of a multi-variant bundle compile in parallel on it, and a caller
/// that compiles several bundles on threads of its own (a catalog build)
/// shares it rather than starting a pool per context. Never destroyed: idle
/// workers need no joining at exit. A child of fork() inherits the pool but
/// none of its threads (its compiles would wait forever), so it gets a pool
/// of its own.
static llvm::ThreadPoolInterface &sharedThreadPool() {
  static std::mutex mutex;
  static llvm::ThreadPoolInterface *pool = nullptr;
  static pid_t owner = 0;
  std::lock_guard<std::mutex> lock(mutex);
  if (!pool || owner != ::getpid()) {
    unsigned threads = requestedThreads();
    pool = new llvm::DefaultThreadPool(threads
                                           ? llvm::hardware_concurrency(threads)
                                           : llvm::hardware_concurrency());
    owner = ::getpid();
  }
  return *pool;
}

struct GGemmCompiler {
  MLIRContext context;
  std::string lastError;
  explicit GGemmCompiler(const DialectRegistry &registry)
      : context(registry, MLIRContext::Threading::DISABLED) {
    // Read at every creation, so that GGEMM_COMPILER_THREADS=1 (no pool:
    // everything on the calling thread) can be set between compiles.
    if (requestedThreads() != 1)
      context.setThreadPool(sharedThreadPool());
    context.loadAllAvailableDialects();
    // A diagnostic names the op and says what is wrong; the generic-form
    // dump of the op that MLIR attaches by default only buries it.
    context.printOpOnDiagnostic(false);
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
          os << location(diag.getLocation()) << ": "
             << severity(diag.getSeverity()) << ": " << diag << "\n";
          for (Diagnostic &note : diag.getNotes())
            os << location(note.getLocation()) << ": note: " << note << "\n";
          return success();
        }) {
    compiler->lastError.clear();
  }

private:
  /// `file:line:col` as compilers print it, whatever wraps the location.
  static std::string location(Location loc) {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (auto file = loc->findInstanceOf<FileLineColLoc>())
      os << file.getFilename().getValue() << ":" << file.getLine() << ":"
         << file.getColumn();
    else
      os << loc;
    return text;
  }
  static StringRef severity(DiagnosticSeverity severity) {
    switch (severity) {
    case DiagnosticSeverity::Error:
      return "error";
    case DiagnosticSeverity::Warning:
      return "warning";
    case DiagnosticSeverity::Note:
      return "note";
    case DiagnosticSeverity::Remark:
      return "remark";
    }
    return "error";
  }

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
  // The upstream passes too, as gemm-opt registers them: a textual pipeline
  // that runs in gemm-opt runs here (bench/compile_latency.py spells out
  // an older ggemm-to-ptx with them).
  std::call_once(once, [] {
    mlir::registerAllPasses();
    ggemm::registerAllPasses();
  });
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
  return ggemmModuleParseNamed(compiler, source, length, "<source>");
}

GGemmModule *ggemmModuleParseNamed(GGemmCompiler *compiler, const char *source,
                                   size_t length, const char *sourceName) {
  DiagnosticCollector collect(compiler);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      StringRef(source, length), ParserConfig(&compiler->context),
      sourceName ? sourceName : "<source>");
  if (!module)
    return nullptr;
  return new GGemmModule{compiler, std::move(module)};
}

void ggemmModuleDestroy(GGemmModule *module) { delete module; }

/// Runs `fn` with file descriptor 2 pointed at a temporary file and returns
/// what was written to it. llvm::cl reports a bad pass-option value ("for the
/// --format option: expects one of isa, bin; got 'cubin'") on llvm::errs(),
/// with no stream to pass in, and the caller of the C API has to see it in
/// LastError. Only one capture runs at a time; if the temporary file cannot
/// be made, `fn` runs with stderr untouched and nothing is captured.
static std::string captureStderr(llvm::function_ref<void()> fn) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  llvm::errs().flush();
  std::fflush(stderr);
  FILE *file = std::tmpfile();
  int saved = file ? ::dup(2) : -1;
  if (!file || saved < 0 || ::dup2(::fileno(file), 2) < 0) {
    if (saved >= 0)
      ::close(saved);
    if (file)
      std::fclose(file);
    fn();
    return {};
  }
  fn();
  llvm::errs().flush();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::string text;
  std::rewind(file);
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), file))
    text.append(buffer, n);
  std::fclose(file);
  return text;
}

int ggemmModuleRunPipeline(GGemmModule *module, const char *pipeline) {
  DiagnosticCollector collect(module->compiler);
  PassManager pm(&module->compiler->context);
  std::string errors;
  llvm::raw_string_ostream os(errors);
  LogicalResult parsed = failure();
  std::string optionErrors =
      captureStderr([&] { parsed = parsePassPipeline(pipeline, pm, os); });
  if (failed(parsed)) {
    // llvm::cl prefixes its messages with the (empty) program name.
    StringRef detail = StringRef(optionErrors).trim();
    if (detail.consume_front(": "))
      detail = detail.trim();
    module->compiler->lastError += "invalid pipeline: " + errors;
    if (!detail.empty())
      module->compiler->lastError += detail.str() + "\n";
    return 1;
  }
  // Whatever else reached stderr meanwhile (another thread's output, say)
  // goes where it was headed.
  if (!optionErrors.empty()) {
    llvm::errs() << optionErrors;
    llvm::errs().flush();
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
