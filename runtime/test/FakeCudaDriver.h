//===- FakeCudaDriver.h - Scriptable stand-in for libcuda -------*- C++ -*-===//
//
// A shared library that the runtime loads instead of libcuda.so.1 (through
// GGEMM_CUDA_DRIVER) so that the driver half of a launch (context and device
// queries, module loading, pointer checks, descriptor encoding, parameter
// packing, cuLaunchKernelEx) is tested on machines without a GPU. The test
// dlopen()s the same file to reach these control functions.
//
// Pointer convention: addresses below 0x1000 are not CUDA memory, addresses
// with bit 44 set belong to device 1, with bit 45 set are pinned host memory;
// all others are device memory of device 0.
//
//===----------------------------------------------------------------------===//

#ifndef GGEMM_RUNTIME_TEST_FAKECUDADRIVER_H
#define GGEMM_RUNTIME_TEST_FAKECUDADRIVER_H

#include <cuda.h>

#include <cstddef>
#include <cstdint>

constexpr uintptr_t kFakeDevice1Bit = uintptr_t(1) << 44;
constexpr uintptr_t kFakeHostBit = uintptr_t(1) << 45;
constexpr int kFakeMaxParams = 64;
constexpr int kFakeMaxEncodes = 64;

/// Behaviour of the fake, editable between calls.
struct FakeDriverConfig {
  bool hasContext = true;
  unsigned long long contextId = 1;
  int device = 0;
  int ccMajor = 9;
  int ccMinor = 0;
  int smCount = 132;
  int maxSmemOptin = 232448;
  /// cuFuncGetParamInfo answers from kernelParamSizes when true, else
  /// CUDA_ERROR_NOT_SUPPORTED. Launch records copy kernelParamSizes bytes of
  /// each parameter when numKernelParams > 0.
  bool supportsParamInfo = false;
  int numKernelParams = 0;
  size_t kernelParamSizes[kFakeMaxParams] = {};
  CUresult launchResult = CUDA_SUCCESS;
  CUresult encodeResult = CUDA_SUCCESS;
};

struct FakeLaunchRecord {
  unsigned grid[3];
  unsigned block[3];
  unsigned cluster[3];
  unsigned sharedMemBytes;
  CUstream stream;
  CUfunction function;
  int numParams;
  size_t paramSizes[kFakeMaxParams];
  alignas(16) unsigned char paramBytes[kFakeMaxParams][128];
  uintptr_t paramAddresses[kFakeMaxParams];
  /// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION's value (0 when
  /// the launch has none). Last: the Python tests read the fields above
  /// through ctypes.
  unsigned programmaticStreamSerialization;
};

struct FakeEncodeRecord {
  CUtensorMapDataType dataType;
  uint32_t rank;
  void *globalAddress;
  uint64_t globalDim[5];
  uint64_t globalStrides[4];
  uint32_t boxDim[5];
  uint32_t elementStrides[5];
  CUtensorMapInterleave interleave;
  CUtensorMapSwizzle swizzle;
  CUtensorMapL2promotion l2Promotion;
  CUtensorMapFloatOOBfill oobFill;
};

/// What an encoded fake CUtensorMap holds: opaque[0] is this magic and
/// opaque[1] the index of the encode record, so a test can match a launch's
/// descriptor parameter to its encode call.
constexpr uint64_t kFakeTensorMapMagic = 0x67676d6d74656e73ull;

extern "C" {
FakeDriverConfig *ggemmFakeConfig();
/// Restores the default configuration and clears the records.
void ggemmFakeReset();
int ggemmFakeLaunchCount();
const FakeLaunchRecord *ggemmFakeLastLaunch();
int ggemmFakeEncodeCount();
/// The record of encode call `index` (counted from the last reset), or null
/// when it is not among the last kFakeMaxEncodes.
const FakeEncodeRecord *ggemmFakeEncode(int index);
int ggemmFakeModuleLoadCount();
int ggemmFakeModuleUnloadCount();
/// The first bytes of the image of the last successful module load.
const char *ggemmFakeLastModuleImage();
/// cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) calls and last value.
int ggemmFakeSmemAttributeCount();
int ggemmFakeLastSmemAttribute();
int ggemmFakePointerQueryCount();
}

#endif // GGEMM_RUNTIME_TEST_FAKECUDADRIVER_H
