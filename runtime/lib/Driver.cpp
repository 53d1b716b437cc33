//===- Driver.cpp - CUDA driver loaded at run time ------------------------===//

#include "Driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <type_traits>

namespace ggemm::runtime {

namespace {

// Entry points are requested with the ABI of this version, the oldest driver
// accepted; their signatures in cuda.h are unchanged since.
constexpr int kMinDriverVersion = 12000;

using GetProcAddressFn = CUresult (*)(const char *symbol, void **function,
                                      int cudaVersion, cuuint64_t flags,
                                      CUdriverProcAddressQueryResult *status);

struct DriverState {
  DriverApi api;
  Status status;
};

std::string versionText(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

std::string resultText(const DriverApi *api, CUresult result) {
  if (api && api->getErrorName)
    return describeResult(*api, result);
  if (result == CUDA_ERROR_STUB_LIBRARY)
    return "CUDA_ERROR_STUB_LIBRARY (the CUDA driver is a stub library)";
  return "CUresult " + std::to_string(static_cast<int>(result));
}

DriverState loadDriver() {
  DriverState state;
  const char *override = std::getenv("GGEMM_CUDA_DRIVER");
  const std::string path =
      override && *override ? std::string(override) : "libcuda.so.1";
  auto noDriver = [&](const std::string &why) {
    return Status(GGEMM_ERROR_NO_DRIVER, "no CUDA driver: " + why);
  };

  dlerror();
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *reason = dlerror();
    state.status = noDriver("cannot load " + path + " (" +
                            (reason ? reason : "unknown dlopen error") + ")");
    return state;
  }
  // The library stays loaded for the life of the process: modules and
  // function handles handed out by it may be used until exit.
  auto getProcAddress =
      reinterpret_cast<GetProcAddressFn>(dlsym(handle, "cuGetProcAddress_v2"));
  if (!getProcAddress) {
    state.status =
        noDriver(path +
                 " has no cuGetProcAddress_v2; a driver "
                 "for CUDA " +
                 versionText(kMinDriverVersion) + " or newer is needed");
    return state;
  }

  DriverApi &api = state.api;
  auto resolve = [&](const char *name, auto &slot, int version,
                     bool required) -> Status {
    void *function = nullptr;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult result = getProcAddress(name, &function, version,
                                     CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (result != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS ||
        !function) {
      if (!required)
        return Status::success();
      return noDriver(
          "cannot resolve " + std::string(name) + " in " + path + " (" +
          (result != CUDA_SUCCESS ? resultText(&api, result)
                                  : "symbol not found or version too old") +
          ")");
    }
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(function);
    return Status::success();
  };

  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDriverGetVersion) driverGetVersion = nullptr;
  Status status =
      resolve("cuGetErrorName", api.getErrorName, kMinDriverVersion, true);
  if (status.ok())
    status = resolve("cuGetErrorString", api.getErrorString, kMinDriverVersion,
                     true);
  if (status.ok())
    status = resolve("cuInit", init, kMinDriverVersion, true);
  if (status.ok())
    status = resolve("cuDriverGetVersion", driverGetVersion, kMinDriverVersion,
                     true);
  if (!status.ok()) {
    state.status = status;
    return state;
  }

  if (CUresult result = init(0); result != CUDA_SUCCESS) {
    state.status = noDriver("cuInit failed with " + resultText(&api, result));
    return state;
  }
  if (CUresult result = driverGetVersion(&api.driverVersion);
      result != CUDA_SUCCESS) {
    state.status =
        noDriver("cuDriverGetVersion failed with " + resultText(&api, result));
    return state;
  }
  if (api.driverVersion < kMinDriverVersion) {
    state.status =
        noDriver("the driver supports CUDA " + versionText(api.driverVersion) +
                 ", " + versionText(kMinDriverVersion) + " or newer is needed");
    return state;
  }

  const int v = kMinDriverVersion;
  status = resolve("cuCtxGetCurrent", api.ctxGetCurrent, v, true);
  if (status.ok())
    status = resolve("cuCtxGetDevice", api.ctxGetDevice, v, true);
  if (status.ok())
    status = resolve("cuCtxGetId", api.ctxGetId, v, false);
  if (status.ok())
    status = resolve("cuDeviceGetAttribute", api.deviceGetAttribute, v, true);
  if (status.ok())
    status = resolve("cuModuleLoadDataEx", api.moduleLoadDataEx, v, true);
  if (status.ok())
    status = resolve("cuModuleUnload", api.moduleUnload, v, true);
  if (status.ok())
    status = resolve("cuModuleGetFunction", api.moduleGetFunction, v, true);
  if (status.ok())
    status = resolve("cuFuncSetAttribute", api.funcSetAttribute, v, true);
  if (status.ok())
    status = resolve("cuPointerGetAttribute", api.pointerGetAttribute, v, true);
  if (status.ok())
    status =
        resolve("cuTensorMapEncodeTiled", api.tensorMapEncodeTiled, v, true);
  if (status.ok())
    status = resolve("cuLaunchKernelEx", api.launchKernelEx, v, true);
  if (status.ok())
    status = resolve("cuFuncGetParamInfo", api.funcGetParamInfo, 12040, false);
  state.status = status;
  return state;
}

} // namespace

Status getDriver(const DriverApi *&driver) {
  // Function-local static: initialised once, thread-safely.
  static const DriverState state = loadDriver();
  driver = state.status.ok() ? &state.api : nullptr;
  return state.status;
}

std::string describeResult(const DriverApi &driver, CUresult result) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (!driver.getErrorName ||
      driver.getErrorName(result, &name) != CUDA_SUCCESS || !name)
    return "CUresult " + std::to_string(static_cast<int>(result));
  std::string description = name;
  if (driver.getErrorString &&
      driver.getErrorString(result, &text) == CUDA_SUCCESS && text)
    description += std::string(" (") + text + ")";
  return description;
}

Status checkResult(const DriverApi &driver, CUresult result,
                   const std::string &call) {
  if (result == CUDA_SUCCESS)
    return Status::success();
  return Status(GGEMM_ERROR_CUDA,
                call + " failed with " + describeResult(driver, result));
}

} // namespace ggemm::runtime
