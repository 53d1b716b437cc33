//===- ExportBundle.cpp - write kernel bundles ----------------------------===//

#include "ggemm/Dialect/GGemm/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"
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

namespace {
/// One compiled kernel of `ggemm.manifests`: its manifest as JSON, with
/// `ptx` or `cubin` and `arch` added, and its binary.
struct CompiledKernel {
  gpu::BinaryOp binary;
  llvm::json::Object manifest;
  std::string fileName; // <kernel>.ptx or <kernel>.cubin
  StringRef contents;
};

FailureOr<CompiledKernel> readKernel(ModuleOp module, StringRef kernel,
                                     Attribute manifestAttr) {
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
  if (!isa<DictionaryAttr>(manifestAttr))
    return module.emitError() << "expects the manifest of kernel " << kernel
                              << " to be a dictionary, got " << manifestAttr;
  FailureOr<llvm::json::Value> json = toJson(module, kernel, manifestAttr);
  if (failed(json))
    return failure();
  CompiledKernel result{binary, std::move(*json->getAsObject()), "",
                        object.getObject().getValue()};
  switch (object.getFormat()) {
  case gpu::CompilationTarget::Assembly:
    result.fileName = (kernel + ".ptx").str();
    result.manifest["ptx"] = result.fileName;
    break;
  case gpu::CompilationTarget::Binary:
    result.fileName = (kernel + ".cubin").str();
    result.manifest["cubin"] = result.fileName;
    break;
  default:
    return binary.emitError() << "expects PTX (format=isa) or cubin "
                                 "(format=bin) objects";
  }
  if (auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget()))
    result.manifest["arch"] = target.getChip().str();
  return result;
}

LogicalResult writeJson(Operation *op, StringRef path,
                        llvm::json::Object manifest) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  return writeFile(op, path, text);
}

/// One entry of `ggemm.dispatch`, checked: the variants' function names (in
/// dispatch order) and the rows-per-group bounds between them.
struct DispatchEntry {
  StringRef function;
  SmallVector<StringRef> variants;
  SmallVector<int64_t> bounds;
};

FailureOr<DispatchEntry> readDispatch(ModuleOp module, NamedAttribute entry) {
  DispatchEntry result;
  result.function = entry.getName().getValue();
  auto fail = [&]() {
    return module.emitError()
           << "expects ggemm.dispatch entry " << result.function
           << " to be {rule = \"rows_per_group\", variants = [N >= 2 function "
              "names], bounds = [N - 1 increasing positive integers]}, got "
           << entry.getValue();
  };
  auto dict = dyn_cast<DictionaryAttr>(entry.getValue());
  if (!dict || dict.size() != 3)
    return fail();
  auto rule = dict.getAs<StringAttr>("rule");
  auto variants = dict.getAs<ArrayAttr>("variants");
  auto bounds = dict.getAs<ArrayAttr>("bounds");
  if (!rule || rule.getValue() != "rows_per_group" || !variants || !bounds ||
      variants.size() < 2 || bounds.size() + 1 != variants.size())
    return fail();
  for (Attribute variant : variants) {
    auto name = dyn_cast<StringAttr>(variant);
    if (!name)
      return fail();
    result.variants.push_back(name.getValue());
  }
  for (Attribute bound : bounds) {
    auto value = dyn_cast<IntegerAttr>(bound);
    if (!value || value.getInt() <= 0 ||
        (!result.bounds.empty() && value.getInt() <= result.bounds.back()))
      return fail();
    result.bounds.push_back(value.getInt());
  }
  return result;
}

/// Writes the version 2 bundle of `entry`: <function>_kernel.json with one
/// element of `variants` per kernel, and each kernel's binary. Everything
/// is checked before anything is written.
LogicalResult exportVariants(ModuleOp module, StringRef dir,
                             DictionaryAttr manifests,
                             const DispatchEntry &entry,
                             SmallVectorImpl<std::string> *written) {
  SmallVector<CompiledKernel> kernels;
  std::optional<llvm::json::Value> problem, arch;
  for (StringRef function : entry.variants) {
    std::string kernel = (function + "_kernel").str();
    Attribute manifestAttr = manifests.get(kernel);
    if (!manifestAttr)
      return module.emitError()
             << "expects kernel " << kernel << " of variant @" << function
             << " of " << entry.function
             << " in ggemm.manifests (ggemm.dispatch names it)";
    FailureOr<CompiledKernel> compiled =
        readKernel(module, kernel, manifestAttr);
    if (failed(compiled))
      return failure();
    llvm::json::Object &manifest = compiled->manifest;
    auto field = [&](StringRef key) -> llvm::json::Value {
      if (llvm::json::Value *value = manifest.get(key))
        return *value;
      return nullptr;
    };
    // The problem and the target are the bundle's; the rest is the
    // variant's own kernel.
    llvm::json::Value variantProblem = field("problem");
    llvm::json::Value variantArch = field("arch");
    if (!problem) {
      problem = variantProblem;
      arch = variantArch;
    } else if (*problem != variantProblem || *arch != variantArch) {
      return module.emitError()
             << "expects the variants of " << entry.function
             << " to share their problem and arch, but kernel " << kernel
             << " differs from the first";
    }
    for (StringRef key : {"format", "version", "problem", "arch"})
      manifest.erase(key);
    kernels.push_back(std::move(*compiled));
  }

  llvm::json::Array variants;
  for (CompiledKernel &kernel : kernels) {
    llvm::SmallString<256> binPath(dir);
    llvm::sys::path::append(binPath, kernel.fileName);
    if (failed(writeFile(kernel.binary, binPath, kernel.contents)))
      return failure();
    if (written)
      written->push_back(std::string(binPath));
    variants.push_back(std::move(kernel.manifest));
  }
  llvm::json::Array bounds;
  for (int64_t bound : entry.bounds)
    bounds.push_back(bound);
  llvm::json::Object top{
      {"format", "ggemm-bundle"},
      {"version", 2},
      {"arch", std::move(*arch)},
      {"problem", std::move(*problem)},
      {"dispatch", llvm::json::Object{{"rule", "rows_per_group"},
                                      {"bounds", std::move(bounds)}}},
      {"variants", std::move(variants)}};
  llvm::SmallString<256> jsonPath(dir);
  llvm::sys::path::append(jsonPath, (entry.function + "_kernel.json").str());
  if (failed(writeJson(module, jsonPath, std::move(top))))
    return failure();
  if (written)
    written->push_back(std::string(jsonPath));
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
  // ggemm-select-config's variants: one bundle per original function.
  SmallVector<DispatchEntry> groups;
  llvm::StringSet<> grouped;
  if (Attribute dispatch = module->getAttr("ggemm.dispatch")) {
    auto dict = dyn_cast<DictionaryAttr>(dispatch);
    if (!dict)
      return module.emitError()
             << "expects ggemm.dispatch to be a dictionary, got " << dispatch;
    for (NamedAttribute entry : dict) {
      FailureOr<DispatchEntry> group = readDispatch(module, entry);
      if (failed(group))
        return failure();
      for (StringRef function : group->variants)
        grouped.insert((function + "_kernel").str());
      groups.push_back(std::move(*group));
    }
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return module.emitError()
           << "cannot create " << dir << ": " << ec.message();
  for (NamedAttribute entry : manifests) {
    StringRef kernel = entry.getName().getValue();
    if (grouped.contains(kernel))
      continue;
    FailureOr<CompiledKernel> compiled =
        readKernel(module, kernel, entry.getValue());
    if (failed(compiled))
      return failure();
    llvm::SmallString<256> binPath(dir), jsonPath(dir);
    llvm::sys::path::append(binPath, compiled->fileName);
    llvm::sys::path::append(jsonPath, (kernel + ".json").str());
    if (failed(writeFile(compiled->binary, binPath, compiled->contents)))
      return failure();
    if (failed(writeJson(compiled->binary, jsonPath,
                         std::move(compiled->manifest))))
      return failure();
    if (written) {
      written->push_back(std::string(binPath));
      written->push_back(std::string(jsonPath));
    }
  }
  for (const DispatchEntry &group : groups)
    if (failed(exportVariants(module, dir, manifests, group, written)))
      return failure();
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
