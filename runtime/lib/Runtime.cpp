//===- Runtime.cpp - GGEMM kernel-bundle runtime C API --------------------===//
//
// A kernel reads its manifest and binaries at load time and loads a module
// lazily into each CUDA context it is launched in. A launch validates the
// tensors (LaunchPlan), which needs no driver, and only then talks to the
// driver: pointer checks, descriptor encoding and cuLaunchKernelEx on the
// caller's stream. Nothing synchronises and nothing reads device memory.
//
//===----------------------------------------------------------------------===//

#include "ggemm-runtime/ggemm_runtime.h"

#include "DescriptorCache.h"
#include "Dispatch.h"
#include "Driver.h"
#include "LaunchPlan.h"
#include "Manifest.h"

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <new>
#include <sstream>
#include <vector>

using namespace ggemm::runtime;

namespace {

/// What a kernel holds per CUDA context it has been launched in.
struct ContextState {
  CUcontext context = nullptr;
  unsigned long long contextId = 0;
  CUdevice device = 0;
  int smCount = 0;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
};

/// One kernel of the bundle (a version 1 bundle has one).
struct KernelVariant {
  Manifest manifest;
  std::string cubinImage;
  std::string ptxImage;
  // unique_ptr keeps each state's address stable for lock-free use after
  // lookup; states are only removed by ggemm_kernel_destroy.
  std::vector<std::unique_ptr<ContextState>> contexts;
};

} // namespace

struct ggemm_kernel {
  /// The dispatch rule; its variants are moved into `variants`.
  Bundle bundle;
  std::vector<KernelVariant> variants;
  /// Guards every variant's `contexts`.
  std::mutex mutex;
  /// Encoded TMA descriptors of recent launches, shared by the variants:
  /// the key holds every encode argument (the box included), and
  /// descriptors do not depend on the context (they encode addresses).
  DescriptorCache descriptors;
};

namespace {

thread_local std::string lastError;

/// Runs an API body: records its message and turns exceptions (host memory
/// exhaustion, bugs) into statuses so that nothing escapes the C boundary.
template <typename Body> ggemm_status guarded(Body &&body) noexcept {
  try {
    lastError.clear();
    Status status = body();
    if (!status.ok())
      lastError = status.getMessage();
    return status.getCode();
  } catch (const std::bad_alloc &) {
    lastError = "out of host memory";
  } catch (const std::exception &error) {
    lastError = std::string("internal error: ") + error.what();
  } catch (...) {
    lastError = "internal error: unknown exception";
  }
  return GGEMM_ERROR_INTERNAL;
}

Status readFile(const std::string &path, const char *what,
                const std::string &manifestPath, std::string &contents) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return Status(GGEMM_ERROR_IO, std::string("cannot open ") + what + " '" +
                                      path + "' named by manifest '" +
                                      manifestPath +
                                      "': " + std::strerror(errno));
  std::ostringstream stream;
  stream << file.rdbuf();
  if (file.bad())
    return Status(GGEMM_ERROR_IO,
                  std::string("cannot read ") + what + " '" + path + "'");
  contents = stream.str();
  if (contents.empty())
    return Status(GGEMM_ERROR_IO, std::string(what) + " '" + path +
                                      "' named by manifest '" + manifestPath +
                                      "' is empty");
  return Status::success();
}

Status currentContext(const DriverApi &driver, CUcontext &context) {
  if (Status status = checkResult(driver, driver.ctxGetCurrent(&context),
                                  "cuCtxGetCurrent");
      !status.ok())
    return status;
  if (!context)
    return Status(GGEMM_ERROR_NO_CONTEXT,
                  "no current CUDA context on this thread (make one current, "
                  "e.g. by using a PyTorch CUDA tensor of the device first)");
  return Status::success();
}

Status deviceAttribute(const DriverApi &driver, CUdevice_attribute attribute,
                       CUdevice device, const char *name, int &value) {
  return checkResult(driver,
                     driver.deviceGetAttribute(&value, attribute, device),
                     std::string("cuDeviceGetAttribute(") + name + ")");
}

Status checkArch(const Manifest &manifest, int device, int major, int minor) {
  int capability = major * 10 + minor;
  int target = manifest.archMajor * 10 + manifest.archMinor;
  std::string have = "device " + std::to_string(device) +
                     " has compute capability " + std::to_string(major) + "." +
                     std::to_string(minor);
  std::string want = std::to_string(manifest.archMajor) + "." +
                     std::to_string(manifest.archMinor);
  if (manifest.archSpecific && capability != target)
    return unsupported("the kernel was built for " + manifest.arch +
                       ", which runs only on compute capability " + want +
                       "; " + have);
  if (manifest.arch.back() == 'f' &&
      (major != manifest.archMajor || minor < manifest.archMinor))
    return unsupported("the kernel was built for " + manifest.arch +
                       ", which runs on compute capability " +
                       std::to_string(manifest.archMajor) + ".x with x >= " +
                       std::to_string(manifest.archMinor) + "; " + have);
  if (capability < target)
    return unsupported("the kernel was built for " + manifest.arch +
                       ", which needs compute capability " + want +
                       " or newer; " + have);
  return Status::success();
}

/// Loads the cubin, falling back to the PTX (JIT) when there is no cubin or
/// the driver rejects it, e.g. for another architecture.
Status loadModule(const DriverApi &driver, const KernelVariant &kernel,
                  CUmodule &module) {
  const Manifest &manifest = kernel.manifest;
  std::string cubinError;
  if (!kernel.cubinImage.empty()) {
    CUresult result = driver.moduleLoadDataEx(&module, kernel.cubinImage.data(),
                                              0, nullptr, nullptr);
    if (result == CUDA_SUCCESS)
      return Status::success();
    cubinError = "loading cubin '" + manifest.cubinPath + "' failed with " +
                 describeResult(driver, result);
    if (kernel.ptxImage.empty())
      return Status(GGEMM_ERROR_CUDA, cubinError);
  }
  // The JIT's own diagnostics say why PTX is rejected; keep them.
  std::vector<char> log(8192, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log.data(), reinterpret_cast<void *>(log.size() - 1)};
  // std::string keeps a terminating NUL after the PTX text, as the JIT
  // requires.
  CUresult result = driver.moduleLoadDataEx(&module, kernel.ptxImage.c_str(), 2,
                                            options, values);
  if (result == CUDA_SUCCESS)
    return Status::success();
  std::string message = "loading PTX '" + manifest.ptxPath + "' failed with " +
                        describeResult(driver, result);
  if (log[0])
    message += ": " + std::string(log.data());
  if (!cubinError.empty())
    message = cubinError + "; " + message;
  return Status(GGEMM_ERROR_CUDA, message);
}

/// Checks the manifest's parameter list against the kernel's, where the
/// driver can tell (cuFuncGetParamInfo, CUDA 12.4+).
Status checkKernelParams(const DriverApi &driver, const Manifest &manifest,
                         CUfunction function) {
  if (!driver.funcGetParamInfo)
    return Status::success();
  for (size_t i = 0; i < manifest.params.size(); ++i) {
    size_t offset = 0, size = 0;
    CUresult result = driver.funcGetParamInfo(function, i, &offset, &size);
    if (result == CUDA_ERROR_NOT_SUPPORTED)
      return Status::success();
    if (result != CUDA_SUCCESS)
      return badManifest("manifest '" + manifest.sourceName + "' lists " +
                         std::to_string(manifest.params.size()) +
                         " parameters, but kernel '" + manifest.entry +
                         "' takes " + std::to_string(i));
    size_t expected = paramSize(manifest.params[i]);
    if (size != expected)
      return badManifest("manifest '" + manifest.sourceName + "': parameter " +
                         std::to_string(i) + " '" + manifest.params[i].name +
                         "' is passed as " + std::to_string(expected) +
                         " bytes, but kernel '" + manifest.entry +
                         "' declares " + std::to_string(size) + " bytes");
  }
  size_t offset = 0, size = 0;
  if (driver.funcGetParamInfo(function, manifest.params.size(), &offset,
                              &size) == CUDA_SUCCESS)
    return badManifest("manifest '" + manifest.sourceName + "' lists " +
                       std::to_string(manifest.params.size()) +
                       " parameters, but kernel '" + manifest.entry +
                       "' takes more");
  return Status::success();
}

/// The state of `variant` of `kernel` in the current context, created
/// (module loaded, attributes set) on first use.
Status contextState(const DriverApi &driver, ggemm_kernel &kernel,
                    KernelVariant &variant, ContextState *&state) {
  CUcontext context;
  if (Status status = currentContext(driver, context); !status.ok())
    return status;
  // Handles of destroyed contexts can be reused; their ids never are.
  unsigned long long contextId = 0;
  if (driver.ctxGetId)
    if (Status status = checkResult(
            driver, driver.ctxGetId(context, &contextId), "cuCtxGetId");
        !status.ok())
      return status;

  std::lock_guard<std::mutex> lock(kernel.mutex);
  for (const auto &existing : variant.contexts)
    if (existing->context == context && existing->contextId == contextId) {
      state = existing.get();
      return Status::success();
    }

  const Manifest &manifest = variant.manifest;
  auto created = std::make_unique<ContextState>();
  created->context = context;
  created->contextId = contextId;
  if (Status status = checkResult(driver, driver.ctxGetDevice(&created->device),
                                  "cuCtxGetDevice");
      !status.ok())
    return status;
  const CUdevice device = created->device;
  int major = 0, minor = 0, maxSmem = 0;
  Status status =
      deviceAttribute(driver, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                      device, "COMPUTE_CAPABILITY_MAJOR", major);
  if (status.ok())
    status =
        deviceAttribute(driver, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                        device, "COMPUTE_CAPABILITY_MINOR", minor);
  if (status.ok())
    status = deviceAttribute(driver, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                             device, "MULTIPROCESSOR_COUNT", created->smCount);
  if (status.ok())
    status = deviceAttribute(
        driver, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device,
        "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", maxSmem);
  if (status.ok())
    status = checkArch(manifest, device, major, minor);
  if (!status.ok())
    return status;
  if (manifest.dynamicSmem > static_cast<unsigned>(maxSmem))
    return unsupported(
        "the kernel needs " + std::to_string(manifest.dynamicSmem) +
        " bytes of dynamic shared memory, device " + std::to_string(device) +
        " allows " + std::to_string(maxSmem));

  if (Status status = loadModule(driver, variant, created->module);
      !status.ok())
    return status;
  // From here on the module must be unloaded if anything fails.
  auto fail = [&](Status status) {
    driver.moduleUnload(created->module);
    return status;
  };
  CUresult result = driver.moduleGetFunction(
      &created->function, created->module, manifest.entry.c_str());
  if (result == CUDA_ERROR_NOT_FOUND)
    return fail(badManifest("kernel '" + manifest.entry +
                            "' (the manifest's "
                            "entry) is not in the module of '" +
                            manifest.sourceName + "'"));
  if (Status status = checkResult(
          driver, result, "cuModuleGetFunction('" + manifest.entry + "')");
      !status.ok())
    return fail(status);
  if (Status status = checkKernelParams(driver, manifest, created->function);
      !status.ok())
    return fail(status);
  if (manifest.dynamicSmem > 0)
    if (Status status =
            checkResult(driver,
                        driver.funcSetAttribute(
                            created->function,
                            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            static_cast<int>(manifest.dynamicSmem)),
                        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, " +
                            std::to_string(manifest.dynamicSmem) + ")");
        !status.ok())
      return fail(status);
  if (manifest.cluster[0] > 8)
    if (Status status = checkResult(
            driver,
            driver.funcSetAttribute(
                created->function,
                CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
            "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)");
        !status.ok())
      return fail(status);

  state = created.get();
  variant.contexts.push_back(std::move(created));
  return Status::success();
}

/// Every tensor the kernel will touch must be memory of the context's device.
Status checkDevicePointers(const DriverApi &driver, const BoundArgs &args,
                           CUdevice device) {
  for (const TensorArg &tensor : args.tensors) {
    if (!tensor.present || !tensor.data)
      continue;
    // Built only for an error: this runs for every tensor of every launch.
    auto prefix = [&] {
      return std::string("tensor '") + tensor.name +
             "' is not device memory of device " + std::to_string(device);
    };
    CUdeviceptr address =
        static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(tensor.data));
    int ordinal = -1;
    CUresult result = driver.pointerGetAttribute(
        &ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, address);
    if (result != CUDA_SUCCESS)
      return invalidArgument(prefix() + " (cuPointerGetAttribute: " +
                             describeResult(driver, result) + ")");
    if (ordinal != device)
      return invalidArgument(prefix() + " (it belongs to device " +
                             std::to_string(ordinal) + ")");
    unsigned memoryType = 0;
    result = driver.pointerGetAttribute(
        &memoryType, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address);
    if (result != CUDA_SUCCESS)
      return invalidArgument(prefix() + " (cuPointerGetAttribute: " +
                             describeResult(driver, result) + ")");
    if (memoryType == CU_MEMORYTYPE_HOST)
      return invalidArgument(prefix() + " (it is host memory)");
  }
  return Status::success();
}

std::string describeTensorMap(const TensorMapArgs &args) {
  std::string text = "dims [";
  for (uint32_t d = 0; d < args.rank; ++d)
    text += (d ? ", " : "") + std::to_string(args.globalDim[d]);
  text += "], byte strides [";
  for (uint32_t d = 0; d + 1 < args.rank; ++d)
    text += (d ? ", " : "") + std::to_string(args.globalStrides[d]);
  text += "], box [";
  for (uint32_t d = 0; d < args.rank; ++d)
    text += (d ? ", " : "") + std::to_string(args.boxDim[d]);
  return text + "]";
}

/// The variant a launch with these tensors and hint uses: a pure function
/// of the shapes and the hint, so a captured graph keeps it.
Status chooseVariant(const ggemm_kernel &kernel, const ggemm_tensor *tensors,
                     int numTensors, int64_t expectedM, size_t &index) {
  index = 0;
  if (expectedM < 0)
    return invalidArgument("expected_m must be positive, or 0 for no hint, "
                           "got " +
                           std::to_string(expectedM));
  if (kernel.variants.size() == 1)
    return Status::success();
  // Every variant solves the same problem: the first binds the shapes.
  BoundArgs args;
  if (Status status = bindArguments(kernel.variants.front().manifest, tensors,
                                    numTensors, args);
      !status.ok())
    return status;
  index = selectVariant(
      kernel.bundle,
      dispatchRowsPerGroup(kernel.variants.front().manifest.problem.op,
                           args.shape, expectedM));
  return Status::success();
}

Status launch(ggemm_kernel &kernel, const ggemm_tensor *tensors, int numTensors,
              int64_t expectedM, void *stream) {
  size_t index = 0;
  if (Status status =
          chooseVariant(kernel, tensors, numTensors, expectedM, index);
      !status.ok())
    return status;
  KernelVariant &variant = kernel.variants[index];
  const Manifest &manifest = variant.manifest;
  LaunchPlan plan;
  if (Status status = planLaunch(manifest, tensors, numTensors, plan);
      !status.ok())
    return status;
  if (plan.args.shape.numTiles == 0)
    return Status::success();

  const DriverApi *driver;
  if (Status status = getDriver(driver); !status.ok())
    return status;
  ContextState *state;
  if (Status status = contextState(*driver, kernel, variant, state);
      !status.ok())
    return status;
  if (Status status = checkDevicePointers(*driver, plan.args, state->device);
      !status.ok())
    return status;
  unsigned gridX = 0;
  if (Status status = computeGrid(manifest, plan.args.shape.numTiles,
                                  state->smCount, gridX);
      !status.ok())
    return status;

  // The driver copies parameter values at launch, so host storage on this
  // stack frame is enough. CUtensorMap is declared 128-byte aligned.
  CUtensorMap tensorMaps[kMaxTensorMapParams];
  int64_t scalars[kMaxKernelParams];
  uint64_t pointers[kMaxKernelParams];
  int32_t scalars32[kMaxKernelParams];
  void *kernelParams[kMaxKernelParams];
  int numTensorMaps = 0;
  for (size_t i = 0; i < manifest.params.size(); ++i) {
    const ParamSpec &param = manifest.params[i];
    const ParamValue &value = plan.params[i];
    switch (param.kind) {
    case ParamKind::TmaDescriptor: {
      const TensorMapArgs &args = value.tensorMap;
      CUtensorMap &map = tensorMaps[numTensorMaps++];
      if (args.absent) {
        std::memset(&map, 0, sizeof(map));
      } else if (!kernel.descriptors.lookup(args, map)) {
        CUresult result = driver->tensorMapEncodeTiled(
            &map, args.dataType, args.rank, args.globalAddress,
            args.globalDim.data(), args.globalStrides.data(),
            args.boxDim.data(), args.elementStrides.data(), args.interleave,
            args.swizzle, args.l2Promotion, args.oobFill);
        if (result != CUDA_SUCCESS)
          return checkResult(*driver, result,
                             "cuTensorMapEncodeTiled for parameter '" +
                                 param.name + "' (tensor " +
                                 tensorRoleName(param.tensor) + ", " +
                                 describeTensorMap(args) + ")");
        kernel.descriptors.insert(args, map);
      }
      kernelParams[i] = &map;
      break;
    }
    case ParamKind::Pointer:
      pointers[i] = value.pointer;
      kernelParams[i] = &pointers[i];
      break;
    case ParamKind::Scalar:
      if (param.dtype == GGEMM_DTYPE_I32) {
        scalars32[i] = static_cast<int32_t>(value.scalar);
        kernelParams[i] = &scalars32[i];
      } else {
        scalars[i] = value.scalar;
        kernelParams[i] = &scalars[i];
      }
      break;
    }
  }

  CUlaunchAttribute attributes[2];
  CUlaunchConfig config = {};
  config.gridDimX = gridX;
  config.gridDimY = 1;
  config.gridDimZ = 1;
  config.blockDimX = manifest.block[0];
  config.blockDimY = manifest.block[1];
  config.blockDimZ = manifest.block[2];
  config.sharedMemBytes = manifest.dynamicSmem;
  config.hStream = static_cast<CUstream>(stream);
  config.attrs = attributes;
  config.numAttrs = 0;
  if (manifest.cluster[0] > 1) {
    attributes[0] = CUlaunchAttribute{};
    attributes[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attributes[0].value.clusterDim.x = manifest.cluster[0];
    attributes[0].value.clusterDim.y = 1;
    attributes[0].value.clusterDim.z = 1;
    config.numAttrs = 1;
  }
  if (manifest.dependentLaunch) {
    // Programmatic dependent launch: the kernel may start while the
    // previous grid of the stream finishes; it waits for it itself
    // (griddepcontrol.wait) before touching memory.
    CUlaunchAttribute &pdl = attributes[config.numAttrs++];
    pdl = CUlaunchAttribute{};
    pdl.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    pdl.value.programmaticStreamSerializationAllowed = 1;
  }
  CUresult result =
      driver->launchKernelEx(&config, state->function, kernelParams, nullptr);
  if (result == CUDA_SUCCESS)
    return Status::success();
  return checkResult(
      *driver, result,
      "cuLaunchKernelEx of '" + manifest.entry + "' (grid " +
          std::to_string(gridX) + ", block [" +
          std::to_string(manifest.block[0]) + ", " +
          std::to_string(manifest.block[1]) + ", " +
          std::to_string(manifest.block[2]) + "], cluster " +
          std::to_string(manifest.cluster[0]) +
          (manifest.dependentLaunch ? ", dependent launch" : "") +
          ", dynamic shared memory " + std::to_string(manifest.dynamicSmem) +
          " bytes)");
}

Status gridFor(const ggemm_kernel *kernel, const ggemm_tensor *tensors,
               int numTensors, int smCount, bool querySmCount, int *gridX) {
  if (!kernel)
    return invalidArgument("kernel is null");
  if (!gridX)
    return invalidArgument("grid_x is null");
  *gridX = 0;
  size_t index = 0;
  if (Status status = chooseVariant(*kernel, tensors, numTensors, 0, index);
      !status.ok())
    return status;
  const Manifest &manifest = kernel->variants[index].manifest;
  BoundArgs args;
  if (Status status = bindArguments(manifest, tensors, numTensors, args);
      !status.ok())
    return status;
  if (args.shape.numTiles == 0)
    return Status::success();
  if (querySmCount && manifest.gridPolicy == GridPolicy::Persistent) {
    const DriverApi *driver;
    if (Status status = getDriver(driver); !status.ok())
      return status;
    CUcontext context;
    if (Status status = currentContext(*driver, context); !status.ok())
      return status;
    CUdevice device;
    if (Status status = checkResult(*driver, driver->ctxGetDevice(&device),
                                    "cuCtxGetDevice");
        !status.ok())
      return status;
    if (Status status =
            deviceAttribute(*driver, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                            device, "MULTIPROCESSOR_COUNT", smCount);
        !status.ok())
      return status;
  }
  unsigned grid = 0;
  if (Status status = computeGrid(manifest, args.shape.numTiles, smCount, grid);
      !status.ok())
    return status;
  *gridX = static_cast<int>(grid);
  return Status::success();
}

} // namespace

extern "C" {

int ggemm_runtime_abi_version(void) { return GGEMM_RUNTIME_ABI_VERSION; }

const char *ggemm_status_name(ggemm_status status) {
  switch (status) {
  case GGEMM_OK:
    return "GGEMM_OK";
  case GGEMM_ERROR_INVALID_ARGUMENT:
    return "GGEMM_ERROR_INVALID_ARGUMENT";
  case GGEMM_ERROR_BAD_MANIFEST:
    return "GGEMM_ERROR_BAD_MANIFEST";
  case GGEMM_ERROR_NO_DRIVER:
    return "GGEMM_ERROR_NO_DRIVER";
  case GGEMM_ERROR_CUDA:
    return "GGEMM_ERROR_CUDA";
  case GGEMM_ERROR_UNSUPPORTED:
    return "GGEMM_ERROR_UNSUPPORTED";
  case GGEMM_ERROR_IO:
    return "GGEMM_ERROR_IO";
  case GGEMM_ERROR_NO_CONTEXT:
    return "GGEMM_ERROR_NO_CONTEXT";
  case GGEMM_ERROR_INTERNAL:
    return "GGEMM_ERROR_INTERNAL";
  }
  return "GGEMM_ERROR_UNKNOWN";
}

const char *ggemm_last_error(void) { return lastError.c_str(); }

ggemm_status ggemm_kernel_load(const char *manifest_path, ggemm_kernel **out) {
  return guarded([&]() -> Status {
    if (out)
      *out = nullptr;
    if (!manifest_path)
      return invalidArgument("manifest_path is null");
    if (!out)
      return invalidArgument("out is null");
    auto kernel = std::make_unique<ggemm_kernel>();
    if (Status status = loadBundleFile(manifest_path, kernel->bundle);
        !status.ok())
      return status;
    for (Manifest &manifest : kernel->bundle.variants) {
      KernelVariant &variant = kernel->variants.emplace_back();
      variant.manifest = std::move(manifest);
      if (!variant.manifest.cubinPath.empty())
        if (Status status = readFile(variant.manifest.cubinPath, "cubin",
                                     manifest_path, variant.cubinImage);
            !status.ok())
          return status;
      if (!variant.manifest.ptxPath.empty())
        if (Status status = readFile(variant.manifest.ptxPath, "PTX",
                                     manifest_path, variant.ptxImage);
            !status.ok())
          return status;
    }
    *out = kernel.release();
    return Status::success();
  });
}

ggemm_status ggemm_kernel_prepare(ggemm_kernel *kernel) {
  return guarded([&]() -> Status {
    if (!kernel)
      return invalidArgument("kernel is null");
    const DriverApi *driver;
    if (Status status = getDriver(driver); !status.ok())
      return status;
    // Every variant: a launch captured into a graph later must not load.
    for (KernelVariant &variant : kernel->variants) {
      ContextState *state;
      if (Status status = contextState(*driver, *kernel, variant, state);
          !status.ok())
        return status;
    }
    return Status::success();
  });
}

ggemm_status ggemm_kernel_launch(ggemm_kernel *kernel,
                                 const ggemm_tensor *tensors, int num_tensors,
                                 void *cu_stream) {
  return guarded([&]() -> Status {
    if (!kernel)
      return invalidArgument("kernel is null");
    return launch(*kernel, tensors, num_tensors, 0, cu_stream);
  });
}

ggemm_status ggemm_kernel_launch_hinted(ggemm_kernel *kernel,
                                        const ggemm_tensor *tensors,
                                        int num_tensors, int64_t expected_m,
                                        void *cu_stream) {
  return guarded([&]() -> Status {
    if (!kernel)
      return invalidArgument("kernel is null");
    return launch(*kernel, tensors, num_tensors, expected_m, cu_stream);
  });
}

ggemm_status ggemm_kernel_num_variants(const ggemm_kernel *kernel, int *count) {
  return guarded([&]() -> Status {
    if (!kernel)
      return invalidArgument("kernel is null");
    if (!count)
      return invalidArgument("count is null");
    *count = static_cast<int>(kernel->variants.size());
    return Status::success();
  });
}

ggemm_status ggemm_kernel_select_variant(const ggemm_kernel *kernel,
                                         const ggemm_tensor *tensors,
                                         int num_tensors, int64_t expected_m,
                                         int *variant) {
  return guarded([&]() -> Status {
    if (!kernel)
      return invalidArgument("kernel is null");
    if (!variant)
      return invalidArgument("variant is null");
    *variant = -1;
    size_t index = 0;
    if (Status status =
            chooseVariant(*kernel, tensors, num_tensors, expected_m, index);
        !status.ok())
      return status;
    // A single-variant kernel still checks the tensors, as a launch would.
    if (kernel->variants.size() == 1) {
      BoundArgs args;
      if (Status status = bindArguments(kernel->variants.front().manifest,
                                        tensors, num_tensors, args);
          !status.ok())
        return status;
    }
    *variant = static_cast<int>(index);
    return Status::success();
  });
}

ggemm_status ggemm_kernel_grid(const ggemm_kernel *kernel,
                               const ggemm_tensor *tensors, int num_tensors,
                               int *grid_x) {
  return guarded(
      [&]() { return gridFor(kernel, tensors, num_tensors, 0, true, grid_x); });
}

ggemm_status ggemm_kernel_grid_for_sm_count(const ggemm_kernel *kernel,
                                            const ggemm_tensor *tensors,
                                            int num_tensors, int sm_count,
                                            int *grid_x) {
  return guarded([&]() {
    return gridFor(kernel, tensors, num_tensors, sm_count, false, grid_x);
  });
}

void ggemm_kernel_destroy(ggemm_kernel *kernel) {
  if (!kernel)
    return;
  try {
    const DriverApi *driver = nullptr;
    bool loaded = false;
    for (const KernelVariant &variant : kernel->variants)
      loaded |= !variant.contexts.empty();
    if (loaded && getDriver(driver).ok())
      for (const KernelVariant &variant : kernel->variants)
        for (const auto &state : variant.contexts)
          // Fails harmlessly when the context is gone or the driver is
          // shutting down at process exit.
          driver->moduleUnload(state->module);
  } catch (...) {
    // Nothing may escape the C boundary; the memory is freed regardless.
  }
  delete kernel;
}

} // extern "C"
