//===- Driver.h - CUDA driver loaded at run time ----------------*- C++ -*-===//
//
// The runtime never links libcuda: it dlopen()s "libcuda.so.1" (or the file
// named by the GGEMM_CUDA_DRIVER environment variable) on first use and
// resolves entry points through cuGetProcAddress, so that the library loads
// on machines without a driver and reports GGEMM_ERROR_NO_DRIVER there.
//
//===----------------------------------------------------------------------===//

#ifndef GGEMM_RUNTIME_DRIVER_H
#define GGEMM_RUNTIME_DRIVER_H

#include "Status.h"

#include <cuda.h>

#include <string>

namespace ggemm::runtime {

/// Driver entry points, with the signatures of CUDA 12.0 (the oldest driver
/// accepted). Optional entry points may be null.
struct DriverApi {
  int driverVersion = 0;
  decltype(&::cuGetErrorName) getErrorName = nullptr;
  decltype(&::cuGetErrorString) getErrorString = nullptr;
  decltype(&::cuCtxGetCurrent) ctxGetCurrent = nullptr;
  decltype(&::cuCtxGetDevice) ctxGetDevice = nullptr;
  decltype(&::cuCtxGetId) ctxGetId = nullptr;
  decltype(&::cuDeviceGetAttribute) deviceGetAttribute = nullptr;
  decltype(&::cuModuleLoadDataEx) moduleLoadDataEx = nullptr;
  decltype(&::cuModuleUnload) moduleUnload = nullptr;
  decltype(&::cuModuleGetFunction) moduleGetFunction = nullptr;
  decltype(&::cuFuncSetAttribute) funcSetAttribute = nullptr;
  decltype(&::cuPointerGetAttribute) pointerGetAttribute = nullptr;
  decltype(&::cuTensorMapEncodeTiled) tensorMapEncodeTiled = nullptr;
  decltype(&::cuLaunchKernelEx) launchKernelEx = nullptr;
  /// CUDA 12.4+; used to check the manifest's parameters against the kernel.
  decltype(&::cuFuncGetParamInfo) funcGetParamInfo = nullptr;
};

/// The process's driver, loaded and initialised (cuInit) on the first call.
/// The outcome is cached: later calls return the same driver or error.
Status getDriver(const DriverApi *&driver);

/// "CUDA_ERROR_INVALID_VALUE (invalid argument)".
std::string describeResult(const DriverApi &driver, CUresult result);

/// GGEMM_ERROR_CUDA naming the failed call, or success for CUDA_SUCCESS.
Status checkResult(const DriverApi &driver, CUresult result,
                   const std::string &call);

} // namespace ggemm::runtime

#endif // GGEMM_RUNTIME_DRIVER_H
