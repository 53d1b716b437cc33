//===- ExportBundle.cpp - write kernel bundles ----------------------------===//

#include "ggemm/Dialect/GGemm/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_GGEMMEXPORTBUNDLE
#include "ggemm/Dialect/GGemm/Transforms/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;

namespace {
/// Manifests are kept as attributes until here; JSON mirrors them 1:1.
llvm::json::Value toJson(Attribute attr) {
  if (auto boolAttr = dyn_cast<BoolAttr>(attr))
    return boolAttr.getValue();
  if (auto intAttr = dyn_cast<IntegerAttr>(attr))
    return intAttr.getInt();
  if (auto floatAttr = dyn_cast<FloatAttr>(attr))
    return floatAttr.getValueAsDouble();
  if (auto str = dyn_cast<StringAttr>(attr))
    return str.getValue().str();
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array out;
    for (Attribute element : array)
      out.push_back(toJson(element));
    return out;
  }
  if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object out;
    for (NamedAttribute field : dict)
      out[field.getName().getValue()] = toJson(field.getValue());
    return out;
  }
  // Manifests hold only the kinds above; anything else is a writer bug.
  llvm::report_fatal_error("ggemm-export-bundle: unexpected manifest value");
}

LogicalResult writeFile(Operation *op, StringRef path, StringRef contents) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return op->emitError() << "cannot write " << path << ": " << ec.message();
  os << contents;
  return success();
}
} // namespace

/// Public so the C API can export without running a pass manager.
namespace mlir::ggemm {
LogicalResult exportBundles(ModuleOp module, StringRef dir,
                            SmallVectorImpl<std::string> *written) {
  auto manifests = module->getAttrOfType<DictionaryAttr>("ggemm.manifests");
  if (!manifests)
    return module.emitError() << "expects ggemm kernels: no ggemm.manifests "
                                 "attribute (run ggemm-to-ptx first)";
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return module.emitError()
           << "cannot create " << dir << ": " << ec.message();
  for (NamedAttribute entry : manifests) {
    StringRef kernel = entry.getName().getValue();
    std::string moduleName = (kernel + "_module").str();
    auto binary = module.lookupSymbol<gpu::BinaryOp>(moduleName);
    if (!binary)
      return module.emitError()
             << "expects gpu.binary @" << moduleName << " for kernel " << kernel
             << " (run gpu-module-to-binary first)";
    auto objects = binary.getObjects();
    if (objects.size() != 1)
      return binary.emitError() << "expects one object, got " << objects.size();
    auto object = cast<gpu::ObjectAttr>(objects[0]);
    llvm::json::Object manifest = *toJson(entry.getValue()).getAsObject();
    StringRef suffix;
    switch (object.getFormat()) {
    case gpu::CompilationTarget::Assembly:
      suffix = ".ptx";
      manifest["ptx"] = (kernel + suffix).str();
      break;
    case gpu::CompilationTarget::Binary:
      suffix = ".cubin";
      manifest["cubin"] = (kernel + suffix).str();
      break;
    default:
      return binary.emitError() << "expects PTX (format=isa) or cubin "
                                   "(format=bin) objects";
    }
    if (auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget()))
      manifest["arch"] = target.getChip().str();
    llvm::SmallString<256> binPath(dir), jsonPath(dir);
    llvm::sys::path::append(binPath, (kernel + suffix).str());
    llvm::sys::path::append(jsonPath, (kernel + ".json").str());
    if (failed(writeFile(binary, binPath, object.getObject().getValue())))
      return failure();
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest)))
       << "\n";
    if (failed(writeFile(binary, jsonPath, text)))
      return failure();
    if (written) {
      written->push_back(std::string(binPath));
      written->push_back(std::string(jsonPath));
    }
  }
  return success();
}
} // namespace mlir::ggemm

namespace {
struct ExportBundlePass
    : public ggemm::impl::GGemmExportBundleBase<ExportBundlePass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(exportBundles(getOperation(), outputDir, nullptr)))
      signalPassFailure();
  }
};
} // namespace
