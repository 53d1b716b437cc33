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
/// Manifests are kept as attributes until here; JSON mirrors them 1:1. They
/// are read back from the IR, so a value of another kind is diagnosed on
/// `module`, not trusted.
FailureOr<llvm::json::Value> toJson(ModuleOp module, StringRef kernel,
                                    Attribute attr) {
  if (auto boolAttr = dyn_cast<BoolAttr>(attr))
    return llvm::json::Value(boolAttr.getValue());
  if (auto intAttr = dyn_cast<IntegerAttr>(attr)) {
    // JSON integers are int64_t: a wider value is diagnosed, not truncated.
    const APInt &value = intAttr.getValue();
    if (intAttr.getType().isUnsignedInteger() ? value.isIntN(63)
                                              : value.isSignedIntN(64))
      return llvm::json::Value(intAttr.getType().isUnsignedInteger()
                                   ? int64_t(value.getZExtValue())
                                   : value.getSExtValue());
  }
  if (auto floatAttr = dyn_cast<FloatAttr>(attr))
    return llvm::json::Value(floatAttr.getValueAsDouble());
  if (auto str = dyn_cast<StringAttr>(attr))
    return llvm::json::Value(str.getValue().str());
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array out;
    for (Attribute element : array) {
      FailureOr<llvm::json::Value> value = toJson(module, kernel, element);
      if (failed(value))
        return failure();
      out.push_back(std::move(*value));
    }
    return llvm::json::Value(std::move(out));
  }
  if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object out;
    for (NamedAttribute field : dict) {
      FailureOr<llvm::json::Value> value =
          toJson(module, kernel, field.getValue());
      if (failed(value))
        return failure();
      out[field.getName().getValue()] = std::move(*value);
    }
    return llvm::json::Value(std::move(out));
  }
  return module.emitError()
         << "expects the manifest of kernel " << kernel
         << " to hold only bools, 64-bit integers, floats, strings, arrays "
            "and dictionaries, got "
         << attr;
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
    if (!isa<DictionaryAttr>(entry.getValue()))
      return module.emitError()
             << "expects the manifest of kernel " << kernel
             << " to be a dictionary, got " << entry.getValue();
    FailureOr<llvm::json::Value> json =
        toJson(module, kernel, entry.getValue());
    if (failed(json))
      return failure();
    llvm::json::Object manifest = std::move(*json->getAsObject());
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
