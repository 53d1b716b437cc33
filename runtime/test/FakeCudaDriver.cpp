//===- FakeCudaDriver.cpp - Scriptable stand-in for libcuda ---------------===//
//
// Implements the entry points the runtime resolves, with the behaviour
// described in FakeCudaDriver.h. Only cuGetProcAddress_v2 and the ggemmFake*
// control functions are exported.
//
//===----------------------------------------------------------------------===//

#include "FakeCudaDriver.h"

#include <cstring>
#include <mutex>
#include <string>

#define FAKE_EXPORT __attribute__((visibility("default")))

namespace {

struct FakeState {
  FakeDriverConfig config;
  int launchCount = 0;
  FakeLaunchRecord lastLaunch = {};
  int encodeCount = 0;
  FakeEncodeRecord encodes[kFakeMaxEncodes] = {};
  int moduleLoadCount = 0;
  int moduleUnloadCount = 0;
  char lastImage[64] = {};
  int smemAttributeCount = 0;
  int lastSmemAttribute = 0;
  int pointerQueryCount = 0;
};

FakeState &state() {
  static FakeState instance;
  return instance;
}

std::mutex &stateMutex() {
  static std::mutex mutex;
  return mutex;
}

// Distinct non-null handles.
CUcontext const kContext = reinterpret_cast<CUcontext>(0xC0);
CUfunction const kFunction = reinterpret_cast<CUfunction>(0xF0);
int moduleCounter = 0;

struct ErrorName {
  CUresult result;
  const char *name;
  const char *text;
};
const ErrorName kErrorNames[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE",
     "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX",
     "a PTX JIT compilation failed"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
     "operation not supported"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
};

CUresult fakeGetErrorName(CUresult error, const char **name) {
  for (const ErrorName &entry : kErrorNames)
    if (entry.result == error) {
      *name = entry.name;
      return CUDA_SUCCESS;
    }
  *name = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult fakeGetErrorString(CUresult error, const char **text) {
  for (const ErrorName &entry : kErrorNames)
    if (entry.result == error) {
      *text = entry.text;
      return CUDA_SUCCESS;
    }
  *text = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult fakeInit(unsigned int) { return CUDA_SUCCESS; }

CUresult fakeDriverGetVersion(int *version) {
  *version = 13000;
  return CUDA_SUCCESS;
}

CUresult fakeCtxGetCurrent(CUcontext *context) {
  std::lock_guard<std::mutex> lock(stateMutex());
  *context = state().config.hasContext ? kContext : nullptr;
  return CUDA_SUCCESS;
}

CUresult fakeCtxGetDevice(CUdevice *device) {
  std::lock_guard<std::mutex> lock(stateMutex());
  if (!state().config.hasContext)
    return CUDA_ERROR_INVALID_CONTEXT;
  *device = state().config.device;
  return CUDA_SUCCESS;
}

CUresult fakeCtxGetId(CUcontext context, unsigned long long *id) {
  std::lock_guard<std::mutex> lock(stateMutex());
  if (context != kContext)
    return CUDA_ERROR_INVALID_CONTEXT;
  *id = state().config.contextId;
  return CUDA_SUCCESS;
}

CUresult fakeDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                                CUdevice) {
  std::lock_guard<std::mutex> lock(stateMutex());
  const FakeDriverConfig &config = state().config;
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = config.ccMajor;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = config.ccMinor;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = config.smCount;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *value = config.maxSmemOptin;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

// Images starting with "BADCUBIN" or "BADPTX" are rejected; the latter with a
// JIT log.
CUresult fakeModuleLoadDataEx(CUmodule *module, const void *image,
                              unsigned int numOptions, CUjit_option *options,
                              void **values) {
  std::lock_guard<std::mutex> lock(stateMutex());
  const char *text = static_cast<const char *>(image);
  if (std::strncmp(text, "BADCUBIN", 8) == 0)
    return CUDA_ERROR_INVALID_IMAGE;
  if (std::strncmp(text, "BADPTX", 6) == 0) {
    char *log = nullptr;
    size_t size = 0;
    for (unsigned i = 0; i < numOptions; ++i) {
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
        log = static_cast<char *>(values[i]);
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
        size = reinterpret_cast<uintptr_t>(values[i]);
    }
    if (log && size > 0) {
      std::strncpy(log, "ptxas fatal: fake syntax error", size - 1);
      log[size - 1] = '\0';
    }
    return CUDA_ERROR_INVALID_PTX;
  }
  FakeState &fake = state();
  ++fake.moduleLoadCount;
  std::strncpy(fake.lastImage, text, sizeof(fake.lastImage) - 1);
  *module = reinterpret_cast<CUmodule>(uintptr_t(0x1000 + ++moduleCounter));
  return CUDA_SUCCESS;
}

CUresult fakeModuleUnload(CUmodule) {
  std::lock_guard<std::mutex> lock(stateMutex());
  ++state().moduleUnloadCount;
  return CUDA_SUCCESS;
}

CUresult fakeModuleGetFunction(CUfunction *function, CUmodule,
                               const char *name) {
  if (std::strcmp(name, "missing_kernel") == 0)
    return CUDA_ERROR_NOT_FOUND;
  *function = kFunction;
  return CUDA_SUCCESS;
}

CUresult fakeFuncSetAttribute(CUfunction function, CUfunction_attribute attr,
                              int value) {
  std::lock_guard<std::mutex> lock(stateMutex());
  if (function != kFunction)
    return CUDA_ERROR_INVALID_HANDLE;
  if (attr == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    ++state().smemAttributeCount;
    state().lastSmemAttribute = value;
  }
  return CUDA_SUCCESS;
}

CUresult fakeFuncGetParamInfo(CUfunction, size_t index, size_t *offset,
                              size_t *size) {
  std::lock_guard<std::mutex> lock(stateMutex());
  const FakeDriverConfig &config = state().config;
  if (!config.supportsParamInfo)
    return CUDA_ERROR_NOT_SUPPORTED;
  if (index >= size_t(config.numKernelParams))
    return CUDA_ERROR_INVALID_VALUE;
  size_t position = 0;
  for (size_t i = 0; i < index; ++i)
    position += config.kernelParamSizes[i];
  *offset = position;
  *size = config.kernelParamSizes[index];
  return CUDA_SUCCESS;
}

CUresult fakePointerGetAttribute(void *data, CUpointer_attribute attribute,
                                 CUdeviceptr pointer) {
  std::lock_guard<std::mutex> lock(stateMutex());
  ++state().pointerQueryCount;
  if (pointer < 0x1000)
    return CUDA_ERROR_INVALID_VALUE;
  bool host = pointer & kFakeHostBit;
  int ordinal = (pointer & kFakeDevice1Bit) ? 1 : 0;
  switch (attribute) {
  case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
    *static_cast<int *>(data) = ordinal;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    *static_cast<unsigned *>(data) =
        host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult fakeTensorMapEncodeTiled(
    CUtensorMap *map, CUtensorMapDataType dataType, cuuint32_t rank,
    void *address, const cuuint64_t *dims, const cuuint64_t *strides,
    const cuuint32_t *box, const cuuint32_t *elementStrides,
    CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) {
  std::lock_guard<std::mutex> lock(stateMutex());
  FakeState &fake = state();
  if (fake.config.encodeResult != CUDA_SUCCESS)
    return fake.config.encodeResult;
  // The real driver requires this alignment; so does the fake.
  if (reinterpret_cast<uintptr_t>(map) % 64 != 0 || rank < 1 || rank > 5)
    return CUDA_ERROR_INVALID_VALUE;
  // The most recent kFakeMaxEncodes calls are kept.
  FakeEncodeRecord &record = fake.encodes[fake.encodeCount % kFakeMaxEncodes];
  record = FakeEncodeRecord{};
  record.dataType = dataType;
  record.rank = rank;
  record.globalAddress = address;
  for (cuuint32_t d = 0; d < rank; ++d) {
    record.globalDim[d] = dims[d];
    record.boxDim[d] = box[d];
    record.elementStrides[d] = elementStrides[d];
    if (d + 1 < rank)
      record.globalStrides[d] = strides[d];
  }
  record.interleave = interleave;
  record.swizzle = swizzle;
  record.l2Promotion = l2Promotion;
  record.oobFill = oobFill;
  std::memset(map, 0, sizeof(*map));
  map->opaque[0] = kFakeTensorMapMagic;
  map->opaque[1] = static_cast<cuuint64_t>(fake.encodeCount);
  ++fake.encodeCount;
  return CUDA_SUCCESS;
}

CUresult fakeLaunchKernelEx(const CUlaunchConfig *config, CUfunction function,
                            void **kernelParams, void **extra) {
  std::lock_guard<std::mutex> lock(stateMutex());
  FakeState &fake = state();
  if (function != kFunction || extra)
    return CUDA_ERROR_INVALID_HANDLE;
  if (fake.config.launchResult != CUDA_SUCCESS)
    return fake.config.launchResult;
  FakeLaunchRecord &record = fake.lastLaunch;
  record = FakeLaunchRecord{};
  record.grid[0] = config->gridDimX;
  record.grid[1] = config->gridDimY;
  record.grid[2] = config->gridDimZ;
  record.block[0] = config->blockDimX;
  record.block[1] = config->blockDimY;
  record.block[2] = config->blockDimZ;
  record.cluster[0] = record.cluster[1] = record.cluster[2] = 1;
  record.programmaticStreamSerialization = 0;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      record.cluster[0] = config->attrs[i].value.clusterDim.x;
      record.cluster[1] = config->attrs[i].value.clusterDim.y;
      record.cluster[2] = config->attrs[i].value.clusterDim.z;
    }
    if (config->attrs[i].id ==
        CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
      record.programmaticStreamSerialization =
          config->attrs[i].value.programmaticStreamSerializationAllowed;
  }
  record.sharedMemBytes = config->sharedMemBytes;
  record.stream = config->hStream;
  record.function = function;
  record.numParams = fake.config.numKernelParams;
  for (int i = 0; i < record.numParams; ++i) {
    size_t size = fake.config.kernelParamSizes[i];
    record.paramSizes[i] = size;
    record.paramAddresses[i] = reinterpret_cast<uintptr_t>(kernelParams[i]);
    std::memcpy(record.paramBytes[i], kernelParams[i], size > 128 ? 128 : size);
  }
  ++fake.launchCount;
  return CUDA_SUCCESS;
}

struct Entry {
  const char *name;
  void *function;
};

template <typename F> void *address(F function) {
  return reinterpret_cast<void *>(function);
}

const Entry kEntries[] = {
    {"cuGetErrorName", address(fakeGetErrorName)},
    {"cuGetErrorString", address(fakeGetErrorString)},
    {"cuInit", address(fakeInit)},
    {"cuDriverGetVersion", address(fakeDriverGetVersion)},
    {"cuCtxGetCurrent", address(fakeCtxGetCurrent)},
    {"cuCtxGetDevice", address(fakeCtxGetDevice)},
    {"cuCtxGetId", address(fakeCtxGetId)},
    {"cuDeviceGetAttribute", address(fakeDeviceGetAttribute)},
    {"cuModuleLoadDataEx", address(fakeModuleLoadDataEx)},
    {"cuModuleUnload", address(fakeModuleUnload)},
    {"cuModuleGetFunction", address(fakeModuleGetFunction)},
    {"cuFuncSetAttribute", address(fakeFuncSetAttribute)},
    {"cuFuncGetParamInfo", address(fakeFuncGetParamInfo)},
    {"cuPointerGetAttribute", address(fakePointerGetAttribute)},
    {"cuTensorMapEncodeTiled", address(fakeTensorMapEncodeTiled)},
    {"cuLaunchKernelEx", address(fakeLaunchKernelEx)},
};

} // namespace

extern "C" {

FAKE_EXPORT CUresult
cuGetProcAddress_v2(const char *symbol, void **function, int, cuuint64_t,
                    CUdriverProcAddressQueryResult *symbolStatus) {
  for (const Entry &entry : kEntries)
    if (std::strcmp(entry.name, symbol) == 0) {
      *function = entry.function;
      if (symbolStatus)
        *symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  *function = nullptr;
  if (symbolStatus)
    *symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}

FAKE_EXPORT FakeDriverConfig *ggemmFakeConfig() { return &state().config; }

FAKE_EXPORT void ggemmFakeReset() {
  std::lock_guard<std::mutex> lock(stateMutex());
  state() = FakeState();
}

FAKE_EXPORT int ggemmFakeLaunchCount() { return state().launchCount; }

FAKE_EXPORT const FakeLaunchRecord *ggemmFakeLastLaunch() {
  return &state().lastLaunch;
}

FAKE_EXPORT int ggemmFakeEncodeCount() { return state().encodeCount; }

FAKE_EXPORT const FakeEncodeRecord *ggemmFakeEncode(int index) {
  if (index < 0 || index >= state().encodeCount ||
      index < state().encodeCount - kFakeMaxEncodes)
    return nullptr;
  return &state().encodes[index % kFakeMaxEncodes];
}

FAKE_EXPORT int ggemmFakeModuleLoadCount() { return state().moduleLoadCount; }

FAKE_EXPORT int ggemmFakeModuleUnloadCount() {
  return state().moduleUnloadCount;
}

FAKE_EXPORT const char *ggemmFakeLastModuleImage() { return state().lastImage; }

FAKE_EXPORT int ggemmFakeSmemAttributeCount() {
  return state().smemAttributeCount;
}

FAKE_EXPORT int ggemmFakeLastSmemAttribute() {
  return state().lastSmemAttribute;
}

FAKE_EXPORT int ggemmFakePointerQueryCount() {
  return state().pointerQueryCount;
}

} // extern "C"
