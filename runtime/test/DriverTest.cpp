//===- DriverTest.cpp - Tests of the driver half of a launch --------------===//
//
// The driver is loaded once per process, so each suite runs in its own CTest
// process with GGEMM_CUDA_DRIVER set by runtime/test/CMakeLists.txt:
//   NoDriver.*      GGEMM_CUDA_DRIVER names a missing file (or the toolkit's
//                   stub libcuda): every driver-backed call reports
//                   GGEMM_ERROR_NO_DRIVER.
//   SystemDriver.*  no override: libcuda.so.1 as installed, if any.
//   FakeDriver.*    GGEMM_CUDA_DRIVER names the fake of FakeCudaDriver.cpp.
//
//===----------------------------------------------------------------------===//

#include "ggemm-runtime/ggemm_runtime.h"

#include "DescriptorCache.h"
#include "FakeCudaDriver.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace ggemm::runtime {
namespace {

using test::makeTensor;
using test::SegmentTensors;
using test::TempDir;

ggemm_kernel *loadOk(const std::string &path) {
  ggemm_kernel *kernel = nullptr;
  EXPECT_EQ(ggemm_kernel_load(path.c_str(), &kernel), GGEMM_OK)
      << ggemm_last_error();
  return kernel;
}

//===----------------------------------------------------------------------===//
// No driver
//===----------------------------------------------------------------------===//

TEST(NoDriver, DriverCallsReportNoDriver) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kSegmentManifest));
  ASSERT_NE(kernel, nullptr);
  SegmentTensors t;
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr),
            GGEMM_ERROR_NO_DRIVER);
  EXPECT_CONTAINS(ggemm_last_error(), "no CUDA driver: ");
  EXPECT_EQ(ggemm_kernel_prepare(kernel), GGEMM_ERROR_NO_DRIVER);
  int grid = -1;
  EXPECT_EQ(ggemm_kernel_grid(kernel, t.get(), 4, &grid),
            GGEMM_ERROR_NO_DRIVER);
  // The outcome is cached and stays the same.
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr),
            GGEMM_ERROR_NO_DRIVER);
  ggemm_kernel_destroy(kernel);
}

TEST(NoDriver, ValidationStillComesFirst) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kSegmentManifest));
  ASSERT_NE(kernel, nullptr);
  SegmentTensors t;
  t.x.strides[0] = 7172;
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(ggemm_last_error(), "tensor 'x': stride of dimension 0");
  ggemm_kernel_destroy(kernel);
}

TEST(NoDriver, EmptyProblemsLaunchNothing) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kSegmentManifest));
  ASSERT_NE(kernel, nullptr);
  SegmentTensors t;
  t.x = makeTensor("x", 0, GGEMM_DTYPE_BF16, {0, 7168});
  t.y = makeTensor("y", 0, GGEMM_DTYPE_BF16, {0, 4096});
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
      << ggemm_last_error();
  int grid = -1;
  EXPECT_EQ(ggemm_kernel_grid(kernel, t.get(), 4, &grid), GGEMM_OK);
  EXPECT_EQ(grid, 0);
  ggemm_kernel_destroy(kernel);
}

// segment_matmul_k: no token rows is work to do (the gradients are
// written), so it needs the driver; no groups is not.
TEST(NoDriver, KRaggedWithoutTokenRowsNeedsTheDriver) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kRaggedManifest()));
  ASSERT_NE(kernel, nullptr);
  test::KRaggedTensors t;
  t.dy = makeTensor("dy", 0, GGEMM_DTYPE_BF16, {0, 4096});
  t.x = makeTensor("x", 0, GGEMM_DTYPE_BF16, {0, 7168});
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr),
            GGEMM_ERROR_NO_DRIVER);
  ggemm_kernel_destroy(kernel);

  kernel = loadOk(dir.writeBundle(
      test::withKRaggedManifest("\"num_groups\": 8, \"num_weights\": 8",
                                "\"num_groups\": -1, \"num_weights\": -1")));
  ASSERT_NE(kernel, nullptr);
  t.indptr = makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {1});
  t.dw = makeTensor("dw", 0, GGEMM_DTYPE_F32, {0, 4096, 7168});
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
      << ggemm_last_error();
  ggemm_kernel_destroy(kernel);
}

// sort_by_expert: no pairs is still work (seg_indptr is written).
TEST(NoDriver, RoutingWithoutPairsNeedsTheDriver) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kRoutingManifest));
  ASSERT_NE(kernel, nullptr);
  test::RoutingTensors t;
  t.setPairs(0);
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr),
            GGEMM_ERROR_NO_DRIVER);
  // The grid needs no device: always one CTA.
  int grid = -1;
  EXPECT_EQ(ggemm_kernel_grid(kernel, t.get(), 4, &grid), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(grid, 1);
  ggemm_kernel_destroy(kernel);
}

//===----------------------------------------------------------------------===//
// The installed driver, if any
//===----------------------------------------------------------------------===//

TEST(SystemDriver, LaunchFailsCleanlyWithoutAContext) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kSegmentManifest));
  ASSERT_NE(kernel, nullptr);
  SegmentTensors t;
  ggemm_status status = ggemm_kernel_launch(kernel, t.get(), 4, nullptr);
  // Without a GPU: no driver. With one: this thread has no current context.
  if (status == GGEMM_ERROR_NO_DRIVER)
    EXPECT_CONTAINS(ggemm_last_error(), "no CUDA driver: ");
  else
    EXPECT_EQ(status, GGEMM_ERROR_NO_CONTEXT) << ggemm_last_error();
  ggemm_kernel_destroy(kernel);
}

//===----------------------------------------------------------------------===//
// The fake driver
//===----------------------------------------------------------------------===//

class FakeDriver : public ::testing::Test {
protected:
  void SetUp() override {
    const char *path = std::getenv("GGEMM_CUDA_DRIVER");
    ASSERT_TRUE(path && *path) << "GGEMM_CUDA_DRIVER is not set";
    // The same file as the runtime's dlopen: the same instance.
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    bind(config, "ggemmFakeConfig");
    bind(reset, "ggemmFakeReset");
    bind(launchCount, "ggemmFakeLaunchCount");
    bind(lastLaunch, "ggemmFakeLastLaunch");
    bind(encodeCount, "ggemmFakeEncodeCount");
    bind(encode, "ggemmFakeEncode");
    bind(moduleLoadCount, "ggemmFakeModuleLoadCount");
    bind(moduleUnloadCount, "ggemmFakeModuleUnloadCount");
    bind(lastModuleImage, "ggemmFakeLastModuleImage");
    bind(smemAttributeCount, "ggemmFakeSmemAttributeCount");
    bind(lastSmemAttribute, "ggemmFakeLastSmemAttribute");
    reset();
    // Record every parameter of the segment kernel.
    FakeDriverConfig &fake = *config();
    fake.numKernelParams = 13;
    for (int i = 0; i < 13; ++i)
      fake.kernelParamSizes[i] = test::kSegmentParamSizes[i];
  }

  void TearDown() override {
    if (handle)
      dlclose(handle);
  }

  template <typename F> void bind(F &function, const char *name) {
    function = reinterpret_cast<F>(dlsym(handle, name));
    ASSERT_NE(function, nullptr) << name;
  }

  /// Loads `manifest` with fake binaries and launches the segment tensors.
  ggemm_status launch(const std::string &manifest, const ggemm_tensor *tensors,
                      int count, void *stream = nullptr) {
    ggemm_kernel *kernel = loadOk(dir.writeBundle(manifest));
    if (!kernel)
      return GGEMM_ERROR_INTERNAL;
    ggemm_status status = ggemm_kernel_launch(kernel, tensors, count, stream);
    lastError = ggemm_last_error();
    ggemm_kernel_destroy(kernel);
    return status;
  }

  template <typename T> T paramValue(int index) {
    T value;
    std::memcpy(&value, lastLaunch()->paramBytes[index], sizeof(T));
    return value;
  }

  void *handle = nullptr;
  TempDir dir;
  std::string lastError;
  FakeDriverConfig *(*config)() = nullptr;
  void (*reset)() = nullptr;
  int (*launchCount)() = nullptr;
  const FakeLaunchRecord *(*lastLaunch)() = nullptr;
  int (*encodeCount)() = nullptr;
  const FakeEncodeRecord *(*encode)(int) = nullptr;
  int (*moduleLoadCount)() = nullptr;
  int (*moduleUnloadCount)() = nullptr;
  const char *(*lastModuleImage)() = nullptr;
  int (*smemAttributeCount)() = nullptr;
  int (*lastSmemAttribute)() = nullptr;
};

TEST_F(FakeDriver, LaunchesSegmentKernel) {
  SegmentTensors t;
  t.y.strides[0] = 4096 + 64;
  void *stream = reinterpret_cast<void *>(0x5eed);
  ASSERT_EQ(launch(test::kSegmentManifest, t.get(), 4, stream), GGEMM_OK)
      << lastError;
  ASSERT_EQ(launchCount(), 1);
  const FakeLaunchRecord &record = *lastLaunch();
  EXPECT_EQ(record.grid[0], 132u); // min(132 SMs, 512 tiles)
  EXPECT_EQ(record.grid[1], 1u);
  EXPECT_EQ(record.grid[2], 1u);
  EXPECT_EQ(record.block[0], 384u);
  EXPECT_EQ(record.block[1], 1u);
  EXPECT_EQ(record.cluster[0], 1u);
  EXPECT_EQ(record.programmaticStreamSerialization, 0u); // not asked for
  EXPECT_EQ(record.sharedMemBytes, 132096u);
  EXPECT_EQ(record.stream, static_cast<CUstream>(stream));
  EXPECT_EQ(lastSmemAttribute(), 132096);
  EXPECT_STREQ(lastModuleImage(), "fake cubin");

  // Descriptors: passed by value, 64-byte aligned, in parameter order.
  ASSERT_EQ(encodeCount(), 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(paramValue<uint64_t>(i), kFakeTensorMapMagic);
    EXPECT_EQ(record.paramAddresses[i] % 64, 0u);
  }
  const uint64_t *aWords =
      reinterpret_cast<const uint64_t *>(record.paramBytes[0]);
  const uint64_t *bWords =
      reinterpret_cast<const uint64_t *>(record.paramBytes[1]);
  const FakeEncodeRecord &a = *encode(static_cast<int>(aWords[1]));
  const FakeEncodeRecord &b = *encode(static_cast<int>(bWords[1]));
  EXPECT_EQ(a.globalAddress, reinterpret_cast<void *>(test::kX));
  EXPECT_EQ(a.dataType, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(a.rank, 2u);
  EXPECT_EQ(a.globalDim[0], 7168u);
  EXPECT_EQ(a.globalDim[1], 1000u);
  EXPECT_EQ(a.globalStrides[0], 7168u * 2);
  EXPECT_EQ(a.boxDim[0], 64u);
  EXPECT_EQ(a.boxDim[1], 128u);
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(a.l2Promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  EXPECT_EQ(a.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  EXPECT_EQ(b.globalAddress, reinterpret_cast<void *>(test::kW));
  EXPECT_EQ(b.rank, 3u);
  EXPECT_EQ(b.globalDim[2], 8u);
  EXPECT_EQ(b.globalStrides[1], 4096u * 7168u * 2);

  // Pointers, absent optional tensors as null, then the scalars.
  EXPECT_EQ(paramValue<uint64_t>(2), test::kY);
  EXPECT_EQ(paramValue<uint64_t>(3), test::kIndptr);
  EXPECT_EQ(paramValue<uint64_t>(4), 0u);
  EXPECT_EQ(paramValue<uint64_t>(5), 0u);
  EXPECT_EQ(paramValue<uint64_t>(6), 0u);
  EXPECT_EQ(paramValue<int64_t>(7), 1000);
  EXPECT_EQ(paramValue<int64_t>(8), 0);
  EXPECT_EQ(paramValue<int32_t>(9), 8);
  EXPECT_EQ(paramValue<int32_t>(10), 4096);
  EXPECT_EQ(paramValue<int32_t>(11), 7168);
  EXPECT_EQ(paramValue<int64_t>(12), 4160);
}

TEST_F(FakeDriver, LaunchesFp8ScaledKernel) {
  FakeDriverConfig &fake = *config();
  fake.numKernelParams = 15;
  fake.kernelParamSizes[13] = 128; // a_scale_desc
  fake.kernelParamSizes[14] = 8;   // w_scale
  test::Fp8SegmentTensors t;
  ASSERT_EQ(launch(test::fp8SegmentManifest(), t.get(), 6), GGEMM_OK)
      << lastError;
  ASSERT_EQ(launchCount(), 1);
  ASSERT_EQ(encodeCount(), 3);
  const FakeLaunchRecord &record = *lastLaunch();
  EXPECT_EQ(paramValue<uint64_t>(13), kFakeTensorMapMagic);
  EXPECT_EQ(record.paramAddresses[13] % 64, 0u);
  const uint64_t *words =
      reinterpret_cast<const uint64_t *>(record.paramBytes[13]);
  const FakeEncodeRecord &scales = *encode(static_cast<int>(words[1]));
  EXPECT_EQ(scales.globalAddress, reinterpret_cast<void *>(test::kXScale));
  EXPECT_EQ(scales.dataType, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(scales.rank, 2u);
  EXPECT_EQ(scales.globalDim[0], 1000u);
  EXPECT_EQ(scales.globalDim[1], 56u);
  EXPECT_EQ(scales.globalStrides[0], 1000u * 4);
  EXPECT_EQ(scales.boxDim[0], 128u);
  EXPECT_EQ(scales.boxDim[1], 1u);
  EXPECT_EQ(scales.swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
  EXPECT_EQ(paramValue<uint64_t>(14), test::kWScale);

  // The scales are device memory of the context's device, like every tensor.
  t.wScale.data = reinterpret_cast<void *>(test::kWScale | kFakeHostBit);
  EXPECT_EQ(launch(test::fp8SegmentManifest(), t.get(), 6),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(lastError, "tensor 'w_scale' is not device memory of "
                             "device 0 (it is host memory)");
}

// An e4m3 y (as the compiler writes such a kernel: y by pointer, then
// y_scale and its strides last): no descriptor of y or its scales is
// encoded, and the scales land in their slots with the strides read off the
// tensor.
TEST_F(FakeDriver, LaunchesFp8OutputKernel) {
  FakeDriverConfig &fake = *config();
  fake.supportsParamInfo = true;
  fake.numKernelParams = 17;
  for (int i = 0; i < 17; ++i)
    fake.kernelParamSizes[i] = test::kFp8OutParamSizes[i];
  test::Fp8OutTensors t;
  ASSERT_EQ(launch(test::kFp8OutManifest, t.get(), 6), GGEMM_OK) << lastError;
  ASSERT_EQ(launchCount(), 1);
  EXPECT_EQ(encodeCount(), 2); // x and w only
  EXPECT_EQ(paramValue<uint64_t>(2), test::kY);
  EXPECT_EQ(paramValue<int64_t>(12), 384); // ldy
  EXPECT_EQ(paramValue<uint64_t>(14), test::kYScale);
  EXPECT_EQ(paramValue<int64_t>(15), 1);
  EXPECT_EQ(paramValue<int64_t>(16), 1000);

  // Row-major scales, padded: the kernel gets their strides.
  t.yScale = test::makeStrided("y_scale", test::kYScale, GGEMM_DTYPE_F32,
                               {1000, 3}, {4, 1});
  ASSERT_EQ(launch(test::kFp8OutManifest, t.get(), 6), GGEMM_OK) << lastError;
  EXPECT_EQ(paramValue<int64_t>(15), 4);
  EXPECT_EQ(paramValue<int64_t>(16), 1);

  // The scales are device memory of the context's device, like every tensor.
  t.yScale.data = reinterpret_cast<void *>(test::kYScale | kFakeHostBit);
  EXPECT_EQ(launch(test::kFp8OutManifest, t.get(), 6),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(lastError, "tensor 'y_scale' is not device memory of "
                             "device 0 (it is host memory)");
  test::Fp8OutTensors u;
  EXPECT_EQ(launch(test::kFp8OutManifest, u.get(), 5),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(lastError, "missing tensor 'y_scale'");

  // A kernel without the scales' parameters is refused when its module
  // loads (cuFuncGetParamInfo): the manifest and the kernel disagree.
  fake.numKernelParams = 14;
  EXPECT_EQ(launch(test::kFp8OutManifest, u.get(), 6),
            GGEMM_ERROR_BAD_MANIFEST);
}

// FP8 with per-token and per-channel scales (as the compiler writes such a
// kernel: both scales by pointer, applied in the epilogue): no scale
// descriptor is encoded, the pointers land in their slots, and scales of
// the 1x128 layout are refused by name.
TEST_F(FakeDriver, LaunchesFp8EpilogueScaledKernel) {
  FakeDriverConfig &fake = *config();
  fake.numKernelParams = 15;
  fake.kernelParamSizes[13] = 8; // x_scale
  fake.kernelParamSizes[14] = 8; // w_scale
  std::string manifest = test::replaced(
      test::withFp8Manifest(
          "\"x_scale_block\": \"1x128\", \"w_scale_block\": \"128x128\"",
          "\"x_scale_block\": \"per_row\", \"w_scale_block\": \"per_row\""),
      test::kXScaleDescriptor,
      R"json({"name": "x_scale", "kind": "pointer", "tensor": "x_scale", "optional": false})json");
  test::Fp8SegmentTensors t;
  t.xScale = makeTensor("x_scale", test::kXScale, GGEMM_DTYPE_F32, {1000});
  t.wScale = makeTensor("w_scale", test::kWScale, GGEMM_DTYPE_F32, {8, 4096});
  ASSERT_EQ(launch(manifest, t.get(), 6), GGEMM_OK) << lastError;
  ASSERT_EQ(launchCount(), 1);
  EXPECT_EQ(encodeCount(), 2); // x and w only
  EXPECT_EQ(paramValue<uint64_t>(13), test::kXScale);
  EXPECT_EQ(paramValue<uint64_t>(14), test::kWScale);

  t.xScale = test::makeStrided("x_scale", test::kXScale, GGEMM_DTYPE_F32,
                               {1000, 56}, {1, 1000});
  EXPECT_EQ(launch(manifest, t.get(), 6), GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(lastError, "tensor 'x_scale': expected rank 1 ([m] for "
                             "x_scale_block \"per_row\")");

  // Tensor-wise: one x scale, one per weight matrix.
  std::string tensorWise = test::replaced(
      manifest,
      "\"x_scale_block\": \"per_row\", \"w_scale_block\": \"per_row\"",
      "\"x_scale_block\": \"tensor\", \"w_scale_block\": \"tensor\"");
  t.xScale = makeTensor("x_scale", test::kXScale, GGEMM_DTYPE_F32, {1});
  t.wScale = makeTensor("w_scale", test::kWScale, GGEMM_DTYPE_F32, {8});
  ASSERT_EQ(launch(tensorWise, t.get(), 6), GGEMM_OK) << lastError;
  EXPECT_EQ(paramValue<uint64_t>(13), test::kXScale);
  EXPECT_EQ(paramValue<uint64_t>(14), test::kWScale);
}

// INT8 (as the compiler writes it: the FP8 per-row kernel with s8 x and
// w): x and w encoded as uint8 with 1-byte strides, the scales' pointers in
// their slots, and what an s8 kernel cannot take refused by name.
TEST_F(FakeDriver, LaunchesInt8ScaledKernel) {
  FakeDriverConfig &fake = *config();
  fake.numKernelParams = 15;
  fake.kernelParamSizes[13] = 8; // x_scale
  fake.kernelParamSizes[14] = 8; // w_scale
  const std::string manifest = test::s8SegmentManifest();
  test::S8SegmentTensors t;
  ASSERT_EQ(launch(manifest, t.get(), 6), GGEMM_OK) << lastError;
  ASSERT_EQ(launchCount(), 1);
  ASSERT_EQ(encodeCount(), 2); // x and w only
  const FakeLaunchRecord &record = *lastLaunch();
  const uint64_t *aWords =
      reinterpret_cast<const uint64_t *>(record.paramBytes[0]);
  const uint64_t *bWords =
      reinterpret_cast<const uint64_t *>(record.paramBytes[1]);
  const FakeEncodeRecord &a = *encode(static_cast<int>(aWords[1]));
  const FakeEncodeRecord &b = *encode(static_cast<int>(bWords[1]));
  EXPECT_EQ(a.globalAddress, reinterpret_cast<void *>(test::kX));
  EXPECT_EQ(a.dataType, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(a.globalDim[0], 7168u);
  EXPECT_EQ(a.globalDim[1], 1000u);
  EXPECT_EQ(a.globalStrides[0], 7168u);
  EXPECT_EQ(a.boxDim[0], 128u);
  EXPECT_EQ(a.boxDim[1], 128u);
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(b.globalAddress, reinterpret_cast<void *>(test::kW));
  EXPECT_EQ(b.dataType, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(b.globalStrides[1], 4096u * 7168u);
  EXPECT_EQ(paramValue<uint64_t>(13), test::kXScale);
  EXPECT_EQ(paramValue<uint64_t>(14), test::kWScale);

  // fp8 tensors are not s8, and 1x128 scales are not per-row ones.
  test::S8SegmentTensors fp8;
  fp8.x.dtype = fp8.w.dtype = GGEMM_DTYPE_F8E4M3;
  EXPECT_EQ(launch(manifest, fp8.get(), 6), GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(lastError, "tensor 'x': expected dtype s8, got f8e4m3");
  test::S8SegmentTensors blocks;
  blocks.xScale = test::makeStrided("x_scale", test::kXScale, GGEMM_DTYPE_F32,
                                    {1000, 56}, {1, 1000});
  EXPECT_EQ(launch(manifest, blocks.get(), 6), GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(lastError, "tensor 'x_scale': expected rank 1 ([m] for "
                             "x_scale_block \"per_row\")");
  EXPECT_EQ(launch(manifest, t.get(), 4), GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(lastError, "missing tensor 'x_scale'");

  // Tensor-wise: one x scale, one per weight matrix.
  t.setTensorScales();
  ASSERT_EQ(launch(test::s8SegmentManifest("tensor", "tensor"), t.get(), 6),
            GGEMM_OK)
      << lastError;
  EXPECT_EQ(paramValue<uint64_t>(13), test::kXScale);
  EXPECT_EQ(paramValue<uint64_t>(14), test::kWScale);
}

// The MoE kernel of docs/Runtime.md: x rows gathered through row_indices
// (one TMA box per row), results scattered through scatter_indices with
// atomic adds, a swiglu weight of 2N rows; 16 parameters, the last three
// appended after the 13 of the plain kernel.
TEST_F(FakeDriver, LaunchesGatherScatterSwigluKernel) {
  const test::MoeFeatures features = {/*gather=*/true, /*scatter=*/true,
                                      /*atomic=*/true, /*swiglu=*/true};
  FakeDriverConfig &fake = *config();
  fake.supportsParamInfo = true;
  fake.numKernelParams = 16;
  for (int i = 13; i < 16; ++i)
    fake.kernelParamSizes[i] = 8;
  test::MoeTensors t(features);
  const ggemm_tensor *list = t.get();
  ASSERT_EQ(launch(test::moeSegmentManifest(features), list, t.count), GGEMM_OK)
      << lastError;
  ASSERT_EQ(launchCount(), 1);
  const FakeLaunchRecord &record = *lastLaunch();
  ASSERT_EQ(record.numParams, 16);
  EXPECT_EQ(record.paramSizes[13], 8u);
  EXPECT_EQ(record.paramSizes[15], 8u);
  EXPECT_EQ(record.grid[0], 132u); // min(132 SMs, 512 tiles of M = 1000)

  const uint64_t *aWords =
      reinterpret_cast<const uint64_t *>(record.paramBytes[0]);
  const uint64_t *bWords =
      reinterpret_cast<const uint64_t *>(record.paramBytes[1]);
  const FakeEncodeRecord &a = *encode(static_cast<int>(aWords[1]));
  const FakeEncodeRecord &b = *encode(static_cast<int>(bWords[1]));
  EXPECT_EQ(a.globalAddress, reinterpret_cast<void *>(test::kX));
  EXPECT_EQ(a.globalDim[0], 7168u);
  EXPECT_EQ(a.globalDim[1], 300u); // x's rows, not the 1000 gathered
  EXPECT_EQ(a.boxDim[0], 64u);
  EXPECT_EQ(a.boxDim[1], 1u);
  EXPECT_EQ(b.globalDim[1], 8192u); // 2N
  EXPECT_EQ(b.boxDim[1], 64u);

  EXPECT_EQ(paramValue<uint64_t>(2), test::kY);
  EXPECT_EQ(paramValue<int64_t>(7), 1000);  // num_rows: M
  EXPECT_EQ(paramValue<int32_t>(10), 4096); // n
  EXPECT_EQ(paramValue<int64_t>(12), 4096); // ldy
  EXPECT_EQ(paramValue<uint64_t>(13), test::kRowIndices);
  EXPECT_EQ(paramValue<uint64_t>(14), test::kScatterIndices);
  EXPECT_EQ(paramValue<int64_t>(15), 5000); // y_rows: Y
  const unsigned char yRows[8] = {0x88, 0x13, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(std::memcmp(record.paramBytes[15], yRows, 8), 0);

  // The indices are device memory of the context's device, like every
  // tensor.
  t.scatterIndices.data =
      reinterpret_cast<void *>(test::kScatterIndices | kFakeHostBit);
  list = t.get();
  EXPECT_EQ(launch(test::moeSegmentManifest(features), list, t.count),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(lastError, "tensor 'scatter_indices' is not device memory "
                             "of device 0 (it is host memory)");
  t.scatterIndices.data = reinterpret_cast<void *>(test::kScatterIndices);
  t.rowIndices.data =
      reinterpret_cast<void *>(test::kRowIndices | kFakeDevice1Bit);
  list = t.get();
  EXPECT_EQ(launch(test::moeSegmentManifest(features), list, t.count),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(lastError, "tensor 'row_indices' is not device memory of "
                             "device 0 (it belongs to device 1)");

  // A kernel compiled without the three parameters does not match.
  fake.numKernelParams = 13;
  t.rowIndices.data = reinterpret_cast<void *>(test::kRowIndices);
  list = t.get();
  EXPECT_EQ(launch(test::moeSegmentManifest(features), list, t.count),
            GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_CONTAINS(lastError, "lists 16 parameters, but kernel "
                             "'ggemm_segment_matmul_kernel' takes 13");
  EXPECT_EQ(launchCount(), 1);
}

TEST_F(FakeDriver, ModuleIsLoadedOncePerContext) {
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kSegmentManifest));
  ASSERT_NE(kernel, nullptr);
  SegmentTensors t;
  EXPECT_EQ(ggemm_kernel_prepare(kernel), GGEMM_OK) << ggemm_last_error();
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK);
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK);
  EXPECT_EQ(moduleLoadCount(), 1);
  EXPECT_EQ(smemAttributeCount(), 1);
  EXPECT_EQ(launchCount(), 2);
  // Another context (new id): a second module.
  config()->contextId = 2;
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK);
  EXPECT_EQ(moduleLoadCount(), 2);
  ggemm_kernel_destroy(kernel);
  EXPECT_EQ(moduleUnloadCount(), 2);
}

TEST_F(FakeDriver, ConcurrentLaunchesShareOneModule) {
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kSegmentManifest));
  ASSERT_NE(kernel, nullptr);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      SegmentTensors t;
      for (int j = 0; j < 25; ++j)
        if (ggemm_kernel_launch(kernel, t.get(), 4, nullptr) != GGEMM_OK &&
            failures++ == 0)
          ADD_FAILURE() << ggemm_last_error();
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(launchCount(), 100);
  EXPECT_EQ(moduleLoadCount(), 1);
  ggemm_kernel_destroy(kernel);
}

/// The descriptor argument of launch parameter `index` of the last launch, as
/// the encode call that made it recorded it.
const FakeEncodeRecord *
launchedDescriptor(const FakeLaunchRecord &record, int index,
                   const FakeEncodeRecord *(*encode)(int)) {
  const uint64_t *words =
      reinterpret_cast<const uint64_t *>(record.paramBytes[index]);
  if (words[0] != kFakeTensorMapMagic)
    return nullptr;
  return encode(static_cast<int>(words[1]));
}

TEST_F(FakeDriver, SameTensorsReuseTheEncodedDescriptors) {
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kSegmentManifest));
  ASSERT_NE(kernel, nullptr);
  SegmentTensors t;
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(encodeCount(), 2);
  unsigned char first[2][128];
  std::memcpy(first, lastLaunch()->paramBytes, sizeof(first));
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK);
  EXPECT_EQ(encodeCount(), 2);
  EXPECT_EQ(launchCount(), 2);
  // The launch passes the same bytes the driver encoded the first time.
  EXPECT_EQ(std::memcmp(first, lastLaunch()->paramBytes, sizeof(first)), 0);
  ggemm_kernel_destroy(kernel);
}

TEST_F(FakeDriver, ChangedTensorsAreEncodedAgain) {
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kSegmentManifest));
  ASSERT_NE(kernel, nullptr);
  SegmentTensors t;
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
      << ggemm_last_error();
  ASSERT_EQ(encodeCount(), 2);

  // Another x address: x is encoded again, w's descriptor is reused.
  t.x.data = reinterpret_cast<void *>(test::kX + 0x10000);
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK);
  EXPECT_EQ(encodeCount(), 3);
  const FakeEncodeRecord *a = launchedDescriptor(*lastLaunch(), 0, encode);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->globalAddress, t.x.data);

  // Fewer rows (y follows): a new x descriptor.
  t.x.shape[0] = 999;
  t.y.shape[0] = 999;
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(encodeCount(), 4);
  a = launchedDescriptor(*lastLaunch(), 0, encode);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->globalDim[1], 999u);

  // A padded row stride of x: encoded again with the new byte stride.
  t.x.strides[0] = 7168 + 64;
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(encodeCount(), 5);
  a = launchedDescriptor(*lastLaunch(), 0, encode);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->globalStrides[0], (7168u + 64) * 2);

  // A padded weight matrix stride: w is encoded again, x is reused.
  t.w.strides[0] = 4096 * 7168 + 64;
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(encodeCount(), 6);
  const FakeEncodeRecord *b = launchedDescriptor(*lastLaunch(), 1, encode);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->globalStrides[1], (4096u * 7168 + 64) * 2);

  // Back to the first tensors: both descriptors are still cached.
  SegmentTensors original;
  ASSERT_EQ(ggemm_kernel_launch(kernel, original.get(), 4, nullptr), GGEMM_OK);
  EXPECT_EQ(encodeCount(), 6);
  a = launchedDescriptor(*lastLaunch(), 0, encode);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->globalAddress, reinterpret_cast<void *>(test::kX));
  EXPECT_EQ(a->globalDim[1], 1000u);
  ggemm_kernel_destroy(kernel);
}

TEST_F(FakeDriver, DescriptorCacheIsBounded) {
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kSegmentManifest));
  ASSERT_NE(kernel, nullptr);
  SegmentTensors t;
  const int capacity = DescriptorCache::kCapacity;
  // w's descriptor and capacity + 3 x descriptors, one per launch.
  for (int i = 0; i < capacity + 3; ++i) {
    t.x.data = reinterpret_cast<void *>(test::kX + 0x10000 * i);
    ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
        << ggemm_last_error();
  }
  EXPECT_EQ(encodeCount(), capacity + 4);
  // w stays (used by every launch); the oldest x descriptors were evicted.
  t.x.data = reinterpret_cast<void *>(test::kX);
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK);
  EXPECT_EQ(encodeCount(), capacity + 5);
  t.x.data = reinterpret_cast<void *>(test::kX + 0x10000 * (capacity + 2));
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK);
  EXPECT_EQ(encodeCount(), capacity + 5);
  ggemm_kernel_destroy(kernel);
}

TEST_F(FakeDriver, FailedEncodesAreNotCached) {
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kSegmentManifest));
  ASSERT_NE(kernel, nullptr);
  SegmentTensors t;
  config()->encodeResult = CUDA_ERROR_INVALID_VALUE;
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_ERROR_CUDA);
  EXPECT_CONTAINS(ggemm_last_error(), "cuTensorMapEncodeTiled for parameter "
                                      "'a_desc'");
  config()->encodeResult = CUDA_SUCCESS;
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(encodeCount(), 2);
  EXPECT_EQ(launchCount(), 1);
  ggemm_kernel_destroy(kernel);
}

TEST_F(FakeDriver, ConcurrentLaunchesShareTheDescriptorCache) {
  // Threads with distinct x tensors share the w descriptor.
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kSegmentManifest));
  ASSERT_NE(kernel, nullptr);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      SegmentTensors t;
      for (int j = 0; j < 50; ++j) {
        // Three x addresses per thread: 13 descriptors in all fit.
        t.x.data = reinterpret_cast<void *>(test::kX + 0x10000 * (3 * i) +
                                            0x10000 * (j % 3));
        if (ggemm_kernel_launch(kernel, t.get(), 4, nullptr) != GGEMM_OK &&
            failures++ == 0)
          ADD_FAILURE() << ggemm_last_error();
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(launchCount(), 200);
  // Each x once; w once, or once per thread that missed it at the same time.
  EXPECT_GE(encodeCount(), 13);
  EXPECT_LE(encodeCount(), 16);
  ggemm_kernel_destroy(kernel);
}

TEST_F(FakeDriver, GridUsesTheDeviceMultiprocessorCount) {
  config()->smCount = 100;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kSegmentManifest));
  ASSERT_NE(kernel, nullptr);
  SegmentTensors t;
  int grid = -1;
  EXPECT_EQ(ggemm_kernel_grid(kernel, t.get(), 4, &grid), GGEMM_OK);
  EXPECT_EQ(grid, 100);
  EXPECT_EQ(moduleLoadCount(), 0); // the grid query loads nothing
  ggemm_kernel_destroy(kernel);
}

TEST_F(FakeDriver, ClusterLaunch) {
  std::string manifest =
      test::withManifest("\"cluster\": [1, 1, 1]", "\"cluster\": [2, 1, 1]");
  manifest = test::replaced(manifest, "\"persistent\"", "\"tiles\"");
  SegmentTensors t;
  t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {100, 7168});
  t.y = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {100, 4096});
  ASSERT_EQ(launch(manifest, t.get(), 4), GGEMM_OK) << lastError;
  const FakeLaunchRecord &record = *lastLaunch();
  EXPECT_EQ(record.cluster[0], 2u);
  EXPECT_EQ(record.cluster[1], 1u);
  EXPECT_EQ(record.cluster[2], 1u);
  EXPECT_EQ(record.grid[0], 32u * (1 + 8)); // tiles policy, already even
}

TEST_F(FakeDriver, DependentLaunch) {
  // With a cluster too: both attributes go with the launch.
  std::string manifest =
      test::withManifest("\"cluster\": [1, 1, 1]",
                         "\"cluster\": [2, 1, 1], \"dependent_launch\": true");
  SegmentTensors t;
  ASSERT_EQ(launch(manifest, t.get(), 4), GGEMM_OK) << lastError;
  const FakeLaunchRecord &record = *lastLaunch();
  EXPECT_EQ(record.programmaticStreamSerialization, 1u);
  EXPECT_EQ(record.cluster[0], 2u);
}

TEST_F(FakeDriver, OptionalPointersArePassed) {
  std::string manifest =
      test::withManifest("\"has_bias\": false", "\"has_bias\": true");
  SegmentTensors t;
  ggemm_tensor bias =
      makeTensor("bias", test::kExtra, GGEMM_DTYPE_F32, {8, 4096});
  ASSERT_EQ(launch(manifest, t.get({bias}), 5), GGEMM_OK) << lastError;
  EXPECT_EQ(paramValue<uint64_t>(5), test::kExtra);
}

TEST_F(FakeDriver, EmptyProblemLaunchesNothing) {
  SegmentTensors t;
  t.indptr = makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {1});
  t.w = makeTensor("w", 0, GGEMM_DTYPE_BF16, {0, 4096, 7168});
  std::string manifest =
      test::withManifest("\"num_groups\": 8, \"num_weights\": 8",
                         "\"num_groups\": -1, \"num_weights\": -1");
  EXPECT_EQ(launch(manifest, t.get(), 4), GGEMM_OK) << lastError;
  EXPECT_EQ(launchCount(), 0);
  EXPECT_EQ(moduleLoadCount(), 0);
}

TEST_F(FakeDriver, NoCurrentContext) {
  config()->hasContext = false;
  SegmentTensors t;
  EXPECT_EQ(launch(test::kSegmentManifest, t.get(), 4), GGEMM_ERROR_NO_CONTEXT);
  EXPECT_CONTAINS(lastError, "no current CUDA context on this thread");
}

TEST_F(FakeDriver, TensorsMustBeMemoryOfTheContextDevice) {
  {
    SegmentTensors t;
    t.x.data = reinterpret_cast<void *>(test::kX | kFakeHostBit);
    EXPECT_EQ(launch(test::kSegmentManifest, t.get(), 4),
              GGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT_CONTAINS(lastError, "tensor 'x' is not device memory of device 0 "
                               "(it is host memory)");
  }
  {
    SegmentTensors t;
    t.w.data = reinterpret_cast<void *>(test::kW | kFakeDevice1Bit);
    EXPECT_EQ(launch(test::kSegmentManifest, t.get(), 4),
              GGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT_CONTAINS(lastError, "tensor 'w' is not device memory of device 0 "
                               "(it belongs to device 1)");
  }
  {
    SegmentTensors t;
    t.indptr.data = reinterpret_cast<void *>(0x800);
    EXPECT_EQ(launch(test::kSegmentManifest, t.get(), 4),
              GGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT_CONTAINS(lastError,
                    "tensor 'seg_indptr' is not device memory of device 0 "
                    "(cuPointerGetAttribute: CUDA_ERROR_INVALID_VALUE "
                    "(invalid argument))");
  }
  EXPECT_EQ(launchCount(), 0);
}

TEST_F(FakeDriver, DeviceMustMatchTheArchitecture) {
  config()->ccMajor = 8;
  config()->ccMinor = 0;
  SegmentTensors t;
  EXPECT_EQ(launch(test::kSegmentManifest, t.get(), 4),
            GGEMM_ERROR_UNSUPPORTED);
  EXPECT_CONTAINS(lastError, "the kernel was built for sm_90a, which runs "
                             "only on compute capability 9.0; device 0 has "
                             "compute capability 8.0");
  config()->ccMajor = 10;
  EXPECT_EQ(launch(test::kSegmentManifest, t.get(), 4),
            GGEMM_ERROR_UNSUPPORTED);
  // A plain sm_90 kernel runs on newer devices (through its PTX).
  EXPECT_EQ(launch(test::withManifest("\"sm_90a\"", "\"sm_90\""), t.get(), 4),
            GGEMM_OK)
      << lastError;
}

TEST_F(FakeDriver, SharedMemoryLimit) {
  config()->maxSmemOptin = 100000;
  SegmentTensors t;
  EXPECT_EQ(launch(test::kSegmentManifest, t.get(), 4),
            GGEMM_ERROR_UNSUPPORTED);
  EXPECT_CONTAINS(lastError, "the kernel needs 132096 bytes of dynamic shared "
                             "memory, device 0 allows 100000");
}

TEST_F(FakeDriver, ModuleLoadingFallsBackToPtx) {
  SegmentTensors t;
  ggemm_kernel *kernel =
      loadOk(dir.writeBundle(test::kSegmentManifest, "BADCUBIN", "good ptx"));
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_STREQ(lastModuleImage(), "good ptx");
  ggemm_kernel_destroy(kernel);

  kernel =
      loadOk(dir.writeBundle(test::kSegmentManifest, "BADCUBIN", "BADPTX"));
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_ERROR_CUDA);
  EXPECT_CONTAINS(ggemm_last_error(),
                  "loading cubin '" + dir.file("k.cubin") +
                      "' failed with CUDA_ERROR_INVALID_IMAGE");
  EXPECT_CONTAINS(ggemm_last_error(),
                  "loading PTX '" + dir.file("k.ptx") +
                      "' failed with CUDA_ERROR_INVALID_PTX (a PTX JIT "
                      "compilation failed): ptxas fatal: fake syntax error");
  ggemm_kernel_destroy(kernel);

  // A PTX-only bundle.
  std::string ptxOnly = test::withManifest("\"cubin\": \"k.cubin\",", "");
  kernel = loadOk(dir.writeBundle(ptxOnly, "", "only ptx"));
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_STREQ(lastModuleImage(), "only ptx");
  ggemm_kernel_destroy(kernel);
}

TEST_F(FakeDriver, MissingEntryPoint) {
  SegmentTensors t;
  EXPECT_EQ(launch(test::withManifest("\"ggemm_segment_matmul_kernel\"",
                                      "\"missing_kernel\""),
                   t.get(), 4),
            GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_CONTAINS(lastError, "kernel 'missing_kernel' (the manifest's entry) "
                             "is not in the module");
  EXPECT_EQ(moduleUnloadCount(), 1);
}

TEST_F(FakeDriver, ParametersAreCheckedAgainstTheKernel) {
  FakeDriverConfig &fake = *config();
  fake.supportsParamInfo = true;
  SegmentTensors t;
  EXPECT_EQ(launch(test::kSegmentManifest, t.get(), 4), GGEMM_OK) << lastError;

  fake.kernelParamSizes[2] = 4;
  EXPECT_EQ(launch(test::kSegmentManifest, t.get(), 4),
            GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_CONTAINS(lastError, "parameter 2 'y' is passed as 8 bytes, but "
                             "kernel 'ggemm_segment_matmul_kernel' declares 4 "
                             "bytes");
  fake.kernelParamSizes[2] = 8;

  fake.numKernelParams = 12;
  EXPECT_EQ(launch(test::kSegmentManifest, t.get(), 4),
            GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_CONTAINS(lastError, "lists 13 parameters, but kernel "
                             "'ggemm_segment_matmul_kernel' takes 12");
  fake.numKernelParams = 14;
  fake.kernelParamSizes[13] = 4;
  EXPECT_EQ(launch(test::kSegmentManifest, t.get(), 4),
            GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_CONTAINS(lastError, "takes more");
}

TEST_F(FakeDriver, DriverFailuresNameTheCall) {
  SegmentTensors t;
  config()->encodeResult = CUDA_ERROR_INVALID_VALUE;
  EXPECT_EQ(launch(test::kSegmentManifest, t.get(), 4), GGEMM_ERROR_CUDA);
  EXPECT_CONTAINS(lastError,
                  "cuTensorMapEncodeTiled for parameter 'a_desc' (tensor x, "
                  "dims [7168, 1000], byte strides [14336], box [64, 128]) "
                  "failed with CUDA_ERROR_INVALID_VALUE (invalid argument)");
  config()->encodeResult = CUDA_SUCCESS;

  config()->launchResult = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  EXPECT_EQ(launch(test::kSegmentManifest, t.get(), 4), GGEMM_ERROR_CUDA);
  EXPECT_CONTAINS(lastError,
                  "cuLaunchKernelEx of 'ggemm_segment_matmul_kernel' (grid "
                  "132, block [384, 1, 1], cluster 1, dynamic shared memory "
                  "132096 bytes) failed with "
                  "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources "
                  "requested for launch)");
}

// A version 2 bundle launches the variant its rule picks, per launch;
// prepare loads every variant's module, so a launch captured into a graph
// loads nothing, whichever variant it picks.
TEST_F(FakeDriver, LaunchesTheChosenVariant) {
  ggemm_kernel *kernel = loadOk(dir.writeMultiVariantBundle());
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(ggemm_kernel_prepare(kernel), GGEMM_OK) << ggemm_last_error();
  EXPECT_EQ(moduleLoadCount(), 2);
  SegmentTensors t; // 125 rows per group: the large variant
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(lastLaunch()->block[0], 384u);
  EXPECT_EQ(lastLaunch()->sharedMemBytes, 132096u);
  ASSERT_EQ(ggemm_kernel_launch_hinted(kernel, t.get(), 4, 20, nullptr),
            GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(lastLaunch()->block[0], 256u);
  EXPECT_EQ(lastLaunch()->sharedMemBytes, 99328u);
  // Its own descriptors: the small variant's x box is 64 rows.
  const uint64_t *aWords =
      reinterpret_cast<const uint64_t *>(lastLaunch()->paramBytes[0]);
  EXPECT_EQ(encode(static_cast<int>(aWords[1]))->boxDim[1], 64u);
  // 64 x 128 tiles: (1000 / 64 rounded up + 8) * 32 tiles, 132 SMs.
  EXPECT_EQ(lastLaunch()->grid[0], 132u);
  ASSERT_EQ(ggemm_kernel_launch_hinted(kernel, t.get(), 4, 0, nullptr),
            GGEMM_OK);
  EXPECT_EQ(lastLaunch()->block[0], 384u);
  EXPECT_EQ(moduleLoadCount(), 2);
  EXPECT_EQ(launchCount(), 3);
  EXPECT_EQ(ggemm_kernel_launch_hinted(kernel, t.get(), 4, -5, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(launchCount(), 3);
  ggemm_kernel_destroy(kernel);
  EXPECT_EQ(moduleUnloadCount(), 2);
}

// Without prepare, a variant's module is loaded by its first launch only.
TEST_F(FakeDriver, VariantsLoadLazily) {
  ggemm_kernel *kernel = loadOk(dir.writeMultiVariantBundle());
  ASSERT_NE(kernel, nullptr);
  SegmentTensors t;
  ASSERT_EQ(ggemm_kernel_launch_hinted(kernel, t.get(), 4, 8, nullptr),
            GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(moduleLoadCount(), 1);
  EXPECT_STREQ(lastModuleImage(), "small ptx");
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK);
  EXPECT_EQ(moduleLoadCount(), 2);
  EXPECT_STREQ(lastModuleImage(), "large cubin");
  ggemm_kernel_destroy(kernel);
}

//===----------------------------------------------------------------------===//
// segment_matmul_k (issue 12) with the fake driver
//===----------------------------------------------------------------------===//

/// The fake records the 14 parameters of test::kKRaggedManifest.
void recordKRaggedParams(FakeDriverConfig &fake) {
  fake.numKernelParams = 14;
  for (int i = 0; i < 14; ++i)
    fake.kernelParamSizes[i] = test::kKRaggedParamSizes[i];
}

TEST_F(FakeDriver, KRaggedLaunchesNkKernel) {
  recordKRaggedParams(*config());
  test::KRaggedTensors t;
  t.dw.strides[1] = 7168 + 4;
  t.dw.strides[0] = 4096 * (7168 + 4);
  ASSERT_EQ(launch(test::kRaggedManifest(), t.get(), 4), GGEMM_OK) << lastError;
  ASSERT_EQ(launchCount(), 1);
  const FakeLaunchRecord &record = *lastLaunch();
  EXPECT_EQ(record.grid[0], 132u); // min(132 SMs, 8 * 32 * 56 tiles)
  EXPECT_EQ(record.numParams, 14);
  const FakeEncodeRecord *a = launchedDescriptor(record, 0, encode);
  const FakeEncodeRecord *b = launchedDescriptor(record, 1, encode);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // A = dy: [N, T]; B = x: [K, T]; 64 columns by block_k token rows.
  EXPECT_EQ(a->globalAddress, reinterpret_cast<void *>(test::kDy));
  EXPECT_EQ(a->dataType, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(a->rank, 2u);
  EXPECT_EQ(a->globalDim[0], 4096u);
  EXPECT_EQ(a->globalDim[1], 1000u);
  EXPECT_EQ(a->globalStrides[0], 4096u * 2);
  EXPECT_EQ(a->boxDim[0], 64u);
  EXPECT_EQ(a->boxDim[1], 64u);
  EXPECT_EQ(a->swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(a->oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  EXPECT_EQ(b->globalAddress, reinterpret_cast<void *>(test::kX));
  EXPECT_EQ(b->globalDim[0], 7168u);
  EXPECT_EQ(b->globalDim[1], 1000u);
  EXPECT_EQ(b->globalStrides[0], 7168u * 2);
  EXPECT_EQ(b->boxDim[0], 64u);
  EXPECT_EQ(b->boxDim[1], 64u);

  EXPECT_EQ(paramValue<uint64_t>(2), test::kDw);
  EXPECT_EQ(paramValue<uint64_t>(3), test::kIndptr);
  EXPECT_EQ(paramValue<uint64_t>(4), 0u);
  EXPECT_EQ(paramValue<uint64_t>(5), 0u);
  EXPECT_EQ(paramValue<uint64_t>(6), 0u);
  EXPECT_EQ(paramValue<int64_t>(7), 1000);  // num_rows: T
  EXPECT_EQ(paramValue<int64_t>(8), 4096);  // rows_per_group: R = N
  EXPECT_EQ(paramValue<int32_t>(9), 8);     // num_groups
  EXPECT_EQ(paramValue<int32_t>(10), 7168); // n: C = K
  EXPECT_EQ(paramValue<int32_t>(11), 1000); // k: T
  EXPECT_EQ(paramValue<int64_t>(12), 7172); // ldy: dw's padded rows
  EXPECT_EQ(paramValue<int32_t>(13), 8);    // num_weights
}

TEST_F(FakeDriver, KRaggedLaunchesKnKernel) {
  recordKRaggedParams(*config());
  test::KRaggedTensors t(/*kn=*/true);
  ASSERT_EQ(launch(test::kRaggedManifest(/*kn=*/true), t.get(), 4), GGEMM_OK)
      << lastError;
  ASSERT_EQ(launchCount(), 1);
  const FakeEncodeRecord *a = launchedDescriptor(*lastLaunch(), 0, encode);
  const FakeEncodeRecord *b = launchedDescriptor(*lastLaunch(), 1, encode);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // A = x: [K, T]; B = dy: [N, T].
  EXPECT_EQ(a->globalAddress, reinterpret_cast<void *>(test::kX));
  EXPECT_EQ(a->globalDim[0], 7168u);
  EXPECT_EQ(b->globalAddress, reinterpret_cast<void *>(test::kDy));
  EXPECT_EQ(b->globalDim[0], 4096u);
  EXPECT_EQ(paramValue<int64_t>(8), 7168);  // R = K
  EXPECT_EQ(paramValue<int32_t>(10), 4096); // C = N
  EXPECT_EQ(paramValue<int64_t>(12), 4096); // ldy
}

// T = 0 writes every dw[g] (zeros, or unchanged when accumulating): the
// kernel is launched, with descriptors of one row at valid addresses.
TEST_F(FakeDriver, KRaggedNoTokenRowsStillLaunch) {
  recordKRaggedParams(*config());
  test::KRaggedTensors t;
  t.dy = makeTensor("dy", 0, GGEMM_DTYPE_BF16, {0, 4096});
  t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {0, 7168});
  ASSERT_EQ(launch(test::kRaggedManifest(), t.get(), 4), GGEMM_OK) << lastError;
  ASSERT_EQ(launchCount(), 1);
  EXPECT_EQ(lastLaunch()->grid[0], 132u);
  const FakeEncodeRecord *a = launchedDescriptor(*lastLaunch(), 0, encode);
  const FakeEncodeRecord *b = launchedDescriptor(*lastLaunch(), 1, encode);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->globalAddress, reinterpret_cast<void *>(test::kDw));
  EXPECT_EQ(a->globalDim[0], 4096u);
  EXPECT_EQ(a->globalDim[1], 1u);
  EXPECT_EQ(a->globalStrides[0], 4096u * 2);
  EXPECT_EQ(b->globalAddress, reinterpret_cast<void *>(test::kX));
  EXPECT_EQ(b->globalDim[1], 1u);
  EXPECT_EQ(paramValue<int64_t>(7), 0); // num_rows
  EXPECT_EQ(paramValue<int64_t>(8), 4096);
  EXPECT_EQ(paramValue<int32_t>(11), 0); // k

  // No aligned address to describe: nothing is launched.
  t.x.data = nullptr;
  t.dw.data = reinterpret_cast<void *>(test::kDw + 4);
  EXPECT_EQ(launch(test::kRaggedManifest(), t.get(), 4),
            GGEMM_ERROR_UNSUPPORTED);
  EXPECT_CONTAINS(lastError, "dy has no token rows (T = 0)");
  EXPECT_EQ(launchCount(), 1);
}

TEST_F(FakeDriver, KRaggedNoGroupsOrColumnsLaunchNothing) {
  recordKRaggedParams(*config());
  std::string manifest = test::withKRaggedManifest(
      "\"n\": 4096, \"k\": 7168, \"num_groups\": 8, \"num_weights\": 8",
      "\"n\": -1, \"k\": -1, \"num_groups\": -1, \"num_weights\": -1");
  {
    test::KRaggedTensors t;
    t.indptr = makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {1});
    t.dw = makeTensor("dw", 0, GGEMM_DTYPE_F32, {0, 4096, 7168});
    EXPECT_EQ(launch(manifest, t.get(), 4), GGEMM_OK) << lastError;
  }
  {
    test::KRaggedTensors t;
    t.dy = makeTensor("dy", 0, GGEMM_DTYPE_BF16, {1000, 0});
    t.dw = makeTensor("dw", 0, GGEMM_DTYPE_F32, {8, 0, 7168});
    EXPECT_EQ(launch(manifest, t.get(), 4), GGEMM_OK) << lastError;
  }
  {
    test::KRaggedTensors t;
    t.x = makeTensor("x", 0, GGEMM_DTYPE_BF16, {0, 0});
    t.dy = makeTensor("dy", 0, GGEMM_DTYPE_BF16, {0, 4096});
    t.dw = makeTensor("dw", 0, GGEMM_DTYPE_F32, {8, 4096, 0});
    EXPECT_EQ(launch(manifest, t.get(), 4), GGEMM_OK) << lastError;
  }
  EXPECT_EQ(launchCount(), 0);
  EXPECT_EQ(moduleLoadCount(), 0);
  EXPECT_EQ(encodeCount(), 0);
}

// The cache keys on the encode arguments, so dy, x and the one-row
// descriptors of T = 0 (at dw's address) never share an entry they should
// not: each launch passes what the driver would encode for it.
TEST_F(FakeDriver, KRaggedDescriptorCacheKeysOnTheGradientTensors) {
  recordKRaggedParams(*config());
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kRaggedManifest()));
  ASSERT_NE(kernel, nullptr);
  test::KRaggedTensors t;
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(encodeCount(), 2);
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK);
  EXPECT_EQ(encodeCount(), 2);

  // Fewer token rows: both descriptors change.
  t.dy.shape[0] = 999;
  t.x.shape[0] = 999;
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(encodeCount(), 4);
  EXPECT_EQ(launchedDescriptor(*lastLaunch(), 0, encode)->globalDim[1], 999u);

  // No token rows and null pointers: both are described at dw's address,
  // with their own extents, as two entries.
  t.dy = makeTensor("dy", 0, GGEMM_DTYPE_BF16, {0, 4096});
  t.x = makeTensor("x", 0, GGEMM_DTYPE_BF16, {0, 7168});
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(encodeCount(), 6);
  const FakeEncodeRecord *a = launchedDescriptor(*lastLaunch(), 0, encode);
  const FakeEncodeRecord *b = launchedDescriptor(*lastLaunch(), 1, encode);
  EXPECT_EQ(a->globalAddress, reinterpret_cast<void *>(test::kDw));
  EXPECT_EQ(b->globalAddress, reinterpret_cast<void *>(test::kDw));
  EXPECT_EQ(a->globalDim[0], 4096u);
  EXPECT_EQ(b->globalDim[0], 7168u);

  // A gradient elsewhere moves the one-row descriptors with it.
  t.dw.data = reinterpret_cast<void *>(test::kDw + 0x10000);
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK);
  EXPECT_EQ(encodeCount(), 8);
  EXPECT_EQ(launchedDescriptor(*lastLaunch(), 0, encode)->globalAddress,
            t.dw.data);
  ggemm_kernel_destroy(kernel);
}

TEST_F(FakeDriver, KRaggedTensorsMustBeDeviceMemory) {
  recordKRaggedParams(*config());
  test::KRaggedTensors t;
  t.dw.data = reinterpret_cast<void *>(test::kDw | kFakeHostBit);
  EXPECT_EQ(launch(test::kRaggedManifest(), t.get(), 4),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(lastError,
                  "tensor 'dw' is not device memory of device 0 (it is host "
                  "memory)");
  t = test::KRaggedTensors();
  t.dy.data = reinterpret_cast<void *>(test::kDy | kFakeDevice1Bit);
  EXPECT_EQ(launch(test::kRaggedManifest(), t.get(), 4),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(lastError, "tensor 'dy' is not device memory of device 0");
}

TEST_F(FakeDriver, KRaggedParametersAreCheckedAgainstTheKernel) {
  recordKRaggedParams(*config());
  // A 13-parameter kernel (no num_weights) does not match the manifest.
  config()->supportsParamInfo = true;
  config()->numKernelParams = 13;
  test::KRaggedTensors t;
  EXPECT_EQ(launch(test::kRaggedManifest(), t.get(), 4),
            GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_CONTAINS(lastError, "lists 14 parameters, but kernel "
                             "'ggemm_segment_matmul_k_kernel' takes 13");
  config()->numKernelParams = 14;
  EXPECT_EQ(launch(test::kRaggedManifest(), t.get(), 4), GGEMM_OK) << lastError;
}

TEST_F(FakeDriver, KRaggedLaunchesTheChosenVariant) {
  recordKRaggedParams(*config());
  ggemm_kernel *kernel = loadOk(dir.writeMultiVariantBundle(
      test::multiVariantManifest(test::kKRaggedManifest)));
  ASSERT_NE(kernel, nullptr);
  // M := T: 1000 token rows over 8 groups is 125 per group, the large one.
  test::KRaggedTensors t;
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(lastLaunch()->block[0], 384u);
  ASSERT_EQ(ggemm_kernel_launch_hinted(kernel, t.get(), 4, 20, nullptr),
            GGEMM_OK);
  EXPECT_EQ(lastLaunch()->block[0], 256u);
  // No token rows: 0 per group, the small one, still launched.
  t.dy = makeTensor("dy", 0, GGEMM_DTYPE_BF16, {0, 4096});
  t.x = makeTensor("x", 0, GGEMM_DTYPE_BF16, {0, 7168});
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(lastLaunch()->block[0], 256u);
  EXPECT_EQ(launchCount(), 3);
  ggemm_kernel_destroy(kernel);
}

//===----------------------------------------------------------------------===//
// segment_matmul_k's FP8 form with the fake driver
//===----------------------------------------------------------------------===//

/// The fake kernel takes the 16 parameters of test::kFp8KRaggedManifest,
/// and y_desc after them when `staged`, checked through cuFuncGetParamInfo.
void recordFp8KRaggedParams(FakeDriverConfig &fake, bool staged = false) {
  fake.supportsParamInfo = true;
  fake.numKernelParams = staged ? 17 : 16;
  for (int i = 0; i < 16; ++i)
    fake.kernelParamSizes[i] = test::kFp8KRaggedParamSizes[i];
  fake.kernelParamSizes[16] = staged ? 128 : 0;
}

TEST_F(FakeDriver, Fp8KRaggedLaunchesNkKernel) {
  recordFp8KRaggedParams(*config());
  test::Fp8KRaggedTensors t;
  ASSERT_EQ(launch(test::fp8KRaggedManifest(), t.get(), 6), GGEMM_OK)
      << lastError;
  ASSERT_EQ(launchCount(), 1);
  const FakeLaunchRecord &record = *lastLaunch();
  EXPECT_EQ(record.numParams, 16);
  EXPECT_EQ(record.grid[0], 132u); // min(132 SMs, 8 * 32 * 38 tiles)
  EXPECT_EQ(encodeCount(), 4);
  // dy [N, T], x [K, T]: 128 tokens by block_m (A) or block_n (B) rows.
  const FakeEncodeRecord *a = launchedDescriptor(record, 0, encode);
  const FakeEncodeRecord *b = launchedDescriptor(record, 1, encode);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->globalAddress, reinterpret_cast<void *>(test::kDy));
  EXPECT_EQ(a->dataType, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(a->globalDim[0], 1008u);
  EXPECT_EQ(a->globalDim[1], 4096u);
  EXPECT_EQ(a->globalStrides[0], 1008u);
  EXPECT_EQ(a->boxDim[0], 128u);
  EXPECT_EQ(a->boxDim[1], 128u);
  EXPECT_EQ(a->swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(b->globalAddress, reinterpret_cast<void *>(test::kX));
  EXPECT_EQ(b->globalDim[0], 1008u);
  EXPECT_EQ(b->globalDim[1], 7168u);
  EXPECT_EQ(b->boxDim[1], 192u);
  // The scales: MN-major [rows, token blocks], boxes of block + 4 rows.
  const FakeEncodeRecord *aScale = launchedDescriptor(record, 14, encode);
  const FakeEncodeRecord *bScale = launchedDescriptor(record, 15, encode);
  ASSERT_NE(aScale, nullptr);
  ASSERT_NE(bScale, nullptr);
  EXPECT_EQ(aScale->globalAddress, reinterpret_cast<void *>(test::kDyScale));
  EXPECT_EQ(aScale->dataType, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(aScale->rank, 2u);
  EXPECT_EQ(aScale->globalDim[0], 4096u);
  EXPECT_EQ(aScale->globalDim[1], 8u);
  EXPECT_EQ(aScale->globalStrides[0], 4096u * 4);
  EXPECT_EQ(aScale->boxDim[0], 132u);
  EXPECT_EQ(aScale->boxDim[1], 1u);
  EXPECT_EQ(aScale->swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
  EXPECT_EQ(aScale->oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  EXPECT_EQ(bScale->globalAddress, reinterpret_cast<void *>(test::kXScale));
  EXPECT_EQ(bScale->globalDim[0], 7168u);
  EXPECT_EQ(bScale->globalDim[1], 8u);
  EXPECT_EQ(bScale->globalStrides[0], 7168u * 4);
  EXPECT_EQ(bScale->boxDim[0], 196u);

  EXPECT_EQ(paramValue<uint64_t>(2), test::kDw);
  EXPECT_EQ(paramValue<uint64_t>(3), test::kIndptr);
  EXPECT_EQ(paramValue<uint64_t>(4), 0u);
  EXPECT_EQ(paramValue<uint64_t>(5), 0u);
  EXPECT_EQ(paramValue<uint64_t>(6), 0u);
  EXPECT_EQ(paramValue<int64_t>(7), 1008);  // num_rows: T, dy.shape[1]
  EXPECT_EQ(paramValue<int64_t>(8), 4096);  // rows_per_group: R = N
  EXPECT_EQ(paramValue<int32_t>(9), 8);     // num_groups
  EXPECT_EQ(paramValue<int32_t>(10), 7168); // n: C = K
  EXPECT_EQ(paramValue<int32_t>(11), 1008); // k: T
  EXPECT_EQ(paramValue<int64_t>(12), 7168); // ldy
  EXPECT_EQ(paramValue<int32_t>(13), 8);    // num_weights
}

TEST_F(FakeDriver, Fp8KRaggedLaunchesKnKernel) {
  recordFp8KRaggedParams(*config());
  test::Fp8KRaggedTensors t(/*kn=*/true);
  ASSERT_EQ(launch(test::fp8KRaggedManifest(/*kn=*/true), t.get(), 6), GGEMM_OK)
      << lastError;
  const FakeLaunchRecord &record = *lastLaunch();
  EXPECT_EQ(record.numParams, 16);
  // A = x with x_scale, B = dy with dy_scale.
  EXPECT_EQ(launchedDescriptor(record, 0, encode)->globalAddress,
            reinterpret_cast<void *>(test::kX));
  EXPECT_EQ(launchedDescriptor(record, 1, encode)->globalAddress,
            reinterpret_cast<void *>(test::kDy));
  const FakeEncodeRecord *aScale = launchedDescriptor(record, 14, encode);
  const FakeEncodeRecord *bScale = launchedDescriptor(record, 15, encode);
  EXPECT_EQ(aScale->globalAddress, reinterpret_cast<void *>(test::kXScale));
  EXPECT_EQ(aScale->globalDim[0], 7168u);
  EXPECT_EQ(aScale->boxDim[0], 132u);
  EXPECT_EQ(bScale->globalAddress, reinterpret_cast<void *>(test::kDyScale));
  EXPECT_EQ(bScale->globalDim[0], 4096u);
  EXPECT_EQ(bScale->boxDim[0], 196u);
  EXPECT_EQ(paramValue<int64_t>(8), 7168);  // R = K
  EXPECT_EQ(paramValue<int32_t>(10), 4096); // C = N
}

TEST_F(FakeDriver, Fp8KRaggedStagedEpilogueTakesSeventeenParameters) {
  recordFp8KRaggedParams(*config(), /*staged=*/true);
  test::Fp8KRaggedTensors t;
  ASSERT_EQ(launch(test::fp8KRaggedManifest(/*kn=*/false, /*staged=*/true),
                   t.get(), 6),
            GGEMM_OK)
      << lastError;
  const FakeLaunchRecord &record = *lastLaunch();
  EXPECT_EQ(record.numParams, 17);
  EXPECT_EQ(encodeCount(), 5);
  const FakeEncodeRecord *dw = launchedDescriptor(record, 16, encode);
  ASSERT_NE(dw, nullptr);
  EXPECT_EQ(dw->globalAddress, reinterpret_cast<void *>(test::kDw));
  EXPECT_EQ(dw->globalDim[0], 7168u);
  EXPECT_EQ(dw->globalDim[1], 8u * 4096u);

  // A 16-parameter manifest does not match a 17-parameter kernel.
  EXPECT_EQ(launch(test::fp8KRaggedManifest(), t.get(), 6),
            GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_CONTAINS(lastError, "lists 16 parameters, but kernel "
                             "'ggemm_segment_matmul_k_fp8_kernel' takes more");
  EXPECT_EQ(launchCount(), 1);
}

TEST_F(FakeDriver, Fp8KRaggedNoTokenRowsStillLaunch) {
  recordFp8KRaggedParams(*config());
  test::Fp8KRaggedTensors t;
  t.setTokens(0);
  ASSERT_EQ(launch(test::fp8KRaggedManifest(), t.get(), 6), GGEMM_OK)
      << lastError;
  ASSERT_EQ(launchCount(), 1);
  for (int i : {0, 1, 14, 15})
    EXPECT_EQ(launchedDescriptor(*lastLaunch(), i, encode)->globalAddress,
              reinterpret_cast<void *>(test::kDw))
        << "parameter " << i;
  EXPECT_EQ(paramValue<int64_t>(7), 0);
}

TEST_F(FakeDriver, Fp8KRaggedLaunchesTheChosenVariant) {
  recordFp8KRaggedParams(*config());
  ggemm_kernel *kernel = loadOk(
      dir.writeMultiVariantBundle(test::fp8KRaggedMultiVariantManifest()));
  ASSERT_NE(kernel, nullptr);
  // M := T = dy.shape[1]: 1008 token rows over 8 groups is 126 per group,
  // the large variant; 256 is 32 per group, the small one.
  test::Fp8KRaggedTensors t;
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 6, nullptr), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(lastLaunch()->block[0], 384u);
  t.setTokens(256);
  ASSERT_EQ(ggemm_kernel_launch(kernel, t.get(), 6, nullptr), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(lastLaunch()->block[0], 256u);
  const FakeEncodeRecord *aScale =
      launchedDescriptor(*lastLaunch(), 14, encode);
  EXPECT_EQ(aScale->boxDim[0], 68u);
  EXPECT_EQ(aScale->globalDim[1], 2u);
  EXPECT_EQ(launchCount(), 2);
  ggemm_kernel_destroy(kernel);
}

//===----------------------------------------------------------------------===//
// sort_by_expert (MoE routing): one CTA
//===----------------------------------------------------------------------===//

using test::RoutingTensors;

/// The fake kernel takes kRoutingManifest's 5 parameters, checked through
/// cuFuncGetParamInfo.
void expectRoutingKernel(FakeDriverConfig &fake) {
  fake.supportsParamInfo = true;
  fake.numKernelParams = 5;
  for (int i = 0; i < 5; ++i)
    fake.kernelParamSizes[i] = test::kRoutingParamSizes[i];
}

TEST_F(FakeDriver, LaunchesRoutingKernel) {
  expectRoutingKernel(*config());
  RoutingTensors t;
  void *stream = reinterpret_cast<void *>(0x5eed);
  ASSERT_EQ(launch(test::kRoutingManifest, t.get(), 4, stream), GGEMM_OK)
      << lastError;
  ASSERT_EQ(launchCount(), 1);
  const FakeLaunchRecord &record = *lastLaunch();
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(record.grid[d], 1u);
    EXPECT_EQ(record.cluster[d], 1u);
  }
  EXPECT_EQ(record.block[0], 1024u);
  EXPECT_EQ(record.block[1], 1u);
  EXPECT_EQ(record.block[2], 1u);
  EXPECT_EQ(record.sharedMemBytes, 34056u);
  EXPECT_EQ(record.stream, static_cast<CUstream>(stream));
  EXPECT_EQ(lastSmemAttribute(), 34056);
  EXPECT_STREQ(lastModuleImage(), "fake ptx"); // the manifest names no cubin
  EXPECT_EQ(encodeCount(), 0);                 // no descriptors

  ASSERT_EQ(record.numParams, 5);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(record.paramSizes[i], 8u);
  EXPECT_EQ(paramValue<uint64_t>(0), test::kTopkIds);
  EXPECT_EQ(paramValue<uint64_t>(1), test::kIndptr);
  EXPECT_EQ(paramValue<uint64_t>(2), test::kRowIndices);
  EXPECT_EQ(paramValue<uint64_t>(3), test::kPairIndices);
  EXPECT_EQ(paramValue<int64_t>(4), 128);
}

//===----------------------------------------------------------------------===//
// quantize: a grid-stride kernel of pointers and scalars
//===----------------------------------------------------------------------===//

TEST_F(FakeDriver, LaunchesQuantizeKernel) {
  FakeDriverConfig &fake = *config();
  fake.supportsParamInfo = true;
  fake.numKernelParams = 9;
  for (int i = 0; i < 9; ++i)
    fake.kernelParamSizes[i] = 8;
  test::QuantizeTensors t;
  ASSERT_EQ(launch(test::kQuantizeManifest, t.get(), 3), GGEMM_OK) << lastError;
  ASSERT_EQ(launchCount(), 1);
  const FakeLaunchRecord &record = *lastLaunch();
  EXPECT_EQ(record.grid[0], 7u); // ceil(100 * 4 / 64)
  EXPECT_EQ(record.block[0], 256u);
  EXPECT_EQ(encodeCount(), 0);
  ASSERT_EQ(record.numParams, 9);
  EXPECT_EQ(paramValue<uint64_t>(0), test::kX);
  EXPECT_EQ(paramValue<uint64_t>(1), test::kQ);
  EXPECT_EQ(paramValue<uint64_t>(2), test::kScale);
  EXPECT_EQ(paramValue<int64_t>(3), 1);   // num_groups
  EXPECT_EQ(paramValue<int64_t>(4), 100); // rows
  EXPECT_EQ(paramValue<int64_t>(5), 512); // k
  EXPECT_EQ(paramValue<int64_t>(6), 0);   // no group dimension
  EXPECT_EQ(paramValue<int64_t>(7), 1);   // MN-major: rows contiguous
  EXPECT_EQ(paramValue<int64_t>(8), 104); // the padded rows
}

TEST_F(FakeDriver, RoutingWithoutPairsStillLaunches) {
  // The kernel writes seg_indptr (zeros): a launch, with null vectors.
  expectRoutingKernel(*config());
  RoutingTensors t;
  t.setPairs(0);
  ASSERT_EQ(launch(test::kRoutingManifest, t.get(), 4), GGEMM_OK) << lastError;
  ASSERT_EQ(launchCount(), 1);
  EXPECT_EQ(lastLaunch()->grid[0], 1u);
  EXPECT_EQ(paramValue<uint64_t>(0), 0u);
  EXPECT_EQ(paramValue<uint64_t>(1), test::kIndptr);
  EXPECT_EQ(paramValue<uint64_t>(2), 0u);
  EXPECT_EQ(paramValue<uint64_t>(3), 0u);
  EXPECT_EQ(paramValue<int64_t>(4), 0);
}

TEST_F(FakeDriver, RoutingInt64IdsAndI32Count) {
  // The manifest's order and dtypes decide the packing.
  FakeDriverConfig &fake = *config();
  expectRoutingKernel(fake);
  fake.kernelParamSizes[4] = 4;
  std::string manifest = test::withRoutingManifest("\"index_dtype\": \"i32\"",
                                                   "\"index_dtype\": \"i64\"");
  manifest = test::replaced(manifest, "\"dtype\": \"i64\", \"value\"",
                            "\"dtype\": \"i32\", \"value\"");
  RoutingTensors t;
  t.setPairs(2048, GGEMM_DTYPE_I64);
  ASSERT_EQ(launch(manifest, t.get(), 4), GGEMM_OK) << lastError;
  EXPECT_EQ(lastLaunch()->paramSizes[4], 4u);
  EXPECT_EQ(paramValue<int32_t>(4), 2048);
}

TEST_F(FakeDriver, RoutingRaisesTheSharedMemoryLimit) {
  expectRoutingKernel(*config());
  RoutingTensors t;
  std::string manifest = test::withRoutingManifest("\"dynamic_smem\": 34056",
                                                   "\"dynamic_smem\": 99000");
  ASSERT_EQ(launch(manifest, t.get(), 4), GGEMM_OK) << lastError;
  EXPECT_EQ(lastSmemAttribute(), 99000);
  EXPECT_EQ(lastLaunch()->sharedMemBytes, 99000u);
  config()->maxSmemOptin = 65536;
  EXPECT_EQ(launch(manifest, t.get(), 4), GGEMM_ERROR_UNSUPPORTED);
  EXPECT_CONTAINS(lastError, "the kernel needs 99000 bytes of dynamic shared "
                             "memory, device 0 allows 65536");
}

TEST_F(FakeDriver, RoutingErrors) {
  FakeDriverConfig &fake = *config();
  expectRoutingKernel(fake);
  {
    RoutingTensors t;
    t.ids.data = reinterpret_cast<void *>(test::kTopkIds | kFakeHostBit);
    EXPECT_EQ(launch(test::kRoutingManifest, t.get(), 4),
              GGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(lastError, "tensor 'topk_ids' is not device memory of device 0 "
                         "(it is host memory)");
  }
  {
    RoutingTensors t;
    t.pairs.data =
        reinterpret_cast<void *>(test::kPairIndices | kFakeDevice1Bit);
    EXPECT_EQ(launch(test::kRoutingManifest, t.get(), 4),
              GGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(lastError, "tensor 'pair_indices' is not device memory of "
                         "device 0 (it belongs to device 1)");
  }
  // Validation comes before the driver: nothing is loaded.
  {
    RoutingTensors t;
    t.setPairs(12);
    EXPECT_EQ(launch(test::kRoutingManifest, t.get(), 4),
              GGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT_CONTAINS(lastError, "tensor 'topk_ids': dimension 0 (num_pairs) is "
                               "12, expected a multiple of 8");
  }
  EXPECT_EQ(moduleLoadCount(), 2);
  // A kernel that takes other parameters than the manifest lists.
  RoutingTensors t;
  fake.numKernelParams = 4;
  EXPECT_EQ(launch(test::kRoutingManifest, t.get(), 4),
            GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_CONTAINS(lastError,
                  "lists 5 parameters, but kernel 'route_kernel' takes 4");
  fake.numKernelParams = 5;
  fake.kernelParamSizes[4] = 4;
  EXPECT_EQ(launch(test::kRoutingManifest, t.get(), 4),
            GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_CONTAINS(lastError, "parameter 4 'num_pairs' is passed as 8 bytes, "
                             "but kernel 'route_kernel' declares 4 bytes");
  EXPECT_EQ(launchCount(), 0);
}

TEST_F(FakeDriver, RoutingGridIsOneCta) {
  config()->smCount = 100;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kRoutingManifest));
  ASSERT_NE(kernel, nullptr);
  RoutingTensors t;
  int grid = -1;
  EXPECT_EQ(ggemm_kernel_grid(kernel, t.get(), 4, &grid), GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(grid, 1);
  EXPECT_EQ(moduleLoadCount(), 0);
  ggemm_kernel_destroy(kernel);
}

} // namespace
} // namespace ggemm::runtime
