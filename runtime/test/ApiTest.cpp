//===- ApiTest.cpp - Tests of the C API that need no driver ---------------===//
//
// These tests never reach the driver: loading, argument validation and the
// grid for a given multiprocessor count all happen before it is needed.
//
//===----------------------------------------------------------------------===//

#include "ggemm-runtime/ggemm_runtime.h"

#include "TestSupport.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>

namespace ggemm::runtime {
namespace {

using test::makeTensor;
using test::SegmentTensors;
using test::TempDir;

/// Loads a manifest that must load.
ggemm_kernel *loadOk(const std::string &path) {
  ggemm_kernel *kernel = nullptr;
  ggemm_status status = ggemm_kernel_load(path.c_str(), &kernel);
  EXPECT_EQ(status, GGEMM_OK) << ggemm_last_error();
  EXPECT_STREQ(ggemm_last_error(), "");
  return kernel;
}

TEST(Api, VersionAndStatusNames) {
  EXPECT_EQ(ggemm_runtime_abi_version(), GGEMM_RUNTIME_ABI_VERSION);
  EXPECT_STREQ(ggemm_status_name(GGEMM_OK), "GGEMM_OK");
  EXPECT_STREQ(ggemm_status_name(GGEMM_ERROR_NO_DRIVER),
               "GGEMM_ERROR_NO_DRIVER");
  EXPECT_STREQ(ggemm_status_name(static_cast<ggemm_status>(15)),
               "GGEMM_ERROR_UNKNOWN");
}

TEST(Api, LoadErrors) {
  ggemm_kernel *kernel = reinterpret_cast<ggemm_kernel *>(0x1);
  EXPECT_EQ(ggemm_kernel_load(nullptr, &kernel), GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kernel, nullptr);
  EXPECT_STREQ(ggemm_last_error(), "manifest_path is null");
  EXPECT_EQ(ggemm_kernel_load("k.json", nullptr), GGEMM_ERROR_INVALID_ARGUMENT);

  kernel = reinterpret_cast<ggemm_kernel *>(0x1);
  EXPECT_EQ(ggemm_kernel_load("/nonexistent/k.json", &kernel), GGEMM_ERROR_IO);
  EXPECT_EQ(kernel, nullptr);
  EXPECT_CONTAINS(ggemm_last_error(),
                  "cannot open manifest '/nonexistent/k.json': No such file");

  TempDir dir;
  std::string path = dir.write("bad.json", "{\"format\": \"ggemm-bundle\"");
  EXPECT_EQ(ggemm_kernel_load(path.c_str(), &kernel), GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_STREQ(ggemm_last_error(),
               (path + ":1:26: invalid JSON at byte 26: syntax error while "
                       "parsing object - unexpected end of input; expected "
                       "'}'")
                   .c_str());

  path = dir.write("v3.json",
                   test::withManifest("\"version\": 1", "\"version\": 3"));
  EXPECT_EQ(ggemm_kernel_load(path.c_str(), &kernel), GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_CONTAINS(ggemm_last_error(), "unsupported manifest version 3");

  // What nlohmann/json throws (number overflow, bad UTF-8, deep nesting) is a
  // bad manifest, not an internal error.
  for (const std::string &text :
       {test::withManifest("\"k\": 7168", "\"k\": 1e999"),
        test::withManifest("_kernel\"", "_kernel\xff\""),
        std::string(100000, '['),
        test::withManifest("\"version\": 1",
                           "\"version\": 1, \"version\": 1")}) {
    path = dir.write("hostile.json", text);
    EXPECT_EQ(ggemm_kernel_load(path.c_str(), &kernel),
              GGEMM_ERROR_BAD_MANIFEST);
    EXPECT_EQ(kernel, nullptr);
    EXPECT_CONTAINS(ggemm_last_error(), path);
    EXPECT_CONTAINS(ggemm_last_error(), "invalid JSON");
  }
}

TEST(Api, LoadNeedsTheNamedBinaries) {
  TempDir dir;
  ggemm_kernel *kernel = nullptr;
  // The manifest names k.cubin, which does not exist.
  std::string path = dir.writeBundle(test::kSegmentManifest, "", "fake ptx");
  EXPECT_EQ(ggemm_kernel_load(path.c_str(), &kernel), GGEMM_ERROR_IO);
  EXPECT_CONTAINS(ggemm_last_error(), "cannot open cubin '" +
                                          dir.file("k.cubin") +
                                          "' named by manifest");
  dir.write("k.cubin", "");
  EXPECT_EQ(ggemm_kernel_load(path.c_str(), &kernel), GGEMM_ERROR_IO);
  EXPECT_CONTAINS(ggemm_last_error(), "' is empty");

  dir.write("k.cubin", "fake cubin");
  kernel = loadOk(path);
  ggemm_kernel_destroy(kernel);
  ggemm_kernel_destroy(nullptr);
}

TEST(Api, LaunchValidatesBeforeTheDriver) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kSegmentManifest));
  ASSERT_NE(kernel, nullptr);

  EXPECT_EQ(ggemm_kernel_launch(nullptr, nullptr, 0, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ggemm_last_error(), "kernel is null");

  SegmentTensors t;
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 3, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(ggemm_last_error(), "missing tensor 'seg_indptr'");

  t.w.dtype = GGEMM_DTYPE_F16;
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 4, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ggemm_last_error(), "tensor 'w': expected dtype bf16, got f16");

  SegmentTensors u;
  u.x.data = reinterpret_cast<void *>(test::kX + 8);
  EXPECT_EQ(ggemm_kernel_launch(kernel, u.get(), 4, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(ggemm_last_error(), "is not 16-byte aligned");

  ggemm_kernel_destroy(kernel);
}

TEST(Api, ScaleTensorsByName) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::fp8SegmentManifest()));
  ASSERT_NE(kernel, nullptr);
  test::Fp8SegmentTensors t;
  int grid = -1;
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 6, 132, &grid),
            GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(grid, 132);
  // Any order: tensors are bound by name.
  ggemm_tensor reordered[] = {t.wScale, t.xScale, t.indptr, t.y, t.w, t.x};
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, reordered, 6, 132, &grid),
            GGEMM_OK)
      << ggemm_last_error();
  t.xScale.name = "x_scales";
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 6, 132, &grid),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(ggemm_last_error(), "unknown tensor 'x_scales'");

  test::Fp8SegmentTensors u;
  u.xScale = makeTensor("x_scale", test::kXScale, GGEMM_DTYPE_F32, {1000, 56});
  EXPECT_EQ(ggemm_kernel_launch(kernel, u.get(), 6, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(ggemm_last_error(),
                  "tensor 'x_scale': the kernel wants MN-major scales");
  ggemm_kernel_destroy(kernel);
}

// A kernel that writes an e4m3 y through the C API, without the driver:
// y_scale by name, checked before the driver, and a manifest whose e4m3 y
// lacks its scales does not load.
TEST(Api, Fp8OutputKernel) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kFp8OutManifest));
  ASSERT_NE(kernel, nullptr);
  test::Fp8OutTensors t;
  int grid = -1;
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 6, 132, &grid),
            GGEMM_OK)
      << ggemm_last_error();
  // ceil(384 / 128) * (ceil(1000 / 128) + 4) = 36 tiles.
  EXPECT_EQ(grid, 36);
  ggemm_tensor reordered[] = {t.yScale, t.bias, t.indptr, t.y, t.w, t.x};
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, reordered, 6, 132, &grid),
            GGEMM_OK)
      << ggemm_last_error();
  t.yScale.name = "y_scales";
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 6, 132, &grid),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(ggemm_last_error(), "unknown tensor 'y_scales'");
  EXPECT_CONTAINS(ggemm_last_error(), "x_scale, w_scale, row_indices, "
                                      "scatter_indices, y_scale)");

  test::Fp8OutTensors u;
  u.yScale = test::makeStrided("y_scale", test::kYScale, GGEMM_DTYPE_F32,
                               {1000, 3}, {1, 2});
  EXPECT_EQ(ggemm_kernel_launch(kernel, u.get(), 6, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ggemm_last_error(),
               "tensor 'y_scale': strides [1, 2] for shape [1000, 3] may "
               "give two scales one element (the kernel writes every one): "
               "expected the row stride to be at least 3 * the block stride "
               "(row-major) or the block stride at least 1000 * the row "
               "stride (MN-major)");
  ggemm_kernel_destroy(kernel);

  ggemm_kernel *bad = nullptr;
  std::string path = dir.writeBundle(
      test::withFp8OutManifest(", \"y_scale_block\": \"1x128\"", ""));
  EXPECT_EQ(ggemm_kernel_load(path.c_str(), &bad), GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_EQ(bad, nullptr);
  EXPECT_STREQ(ggemm_last_error(),
               (path + ": /problem/y_scale_block: missing, but an f8e4m3 y "
                       "needs y_scale_block \"1x128\" (the epilogue writes "
                       "its scales to y_scale)")
                   .c_str());
}

// An INT8 kernel through the C API, without the driver: s8 tensors (enum
// value 7) are taken, scales by name, and an s8 manifest with block scales
// does not load.
TEST(Api, Int8Kernel) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::s8SegmentManifest()));
  ASSERT_NE(kernel, nullptr);
  test::S8SegmentTensors t;
  int grid = -1;
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 6, 132, &grid),
            GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(grid, 132);
  ggemm_tensor reordered[] = {t.wScale, t.xScale, t.indptr, t.y, t.w, t.x};
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, reordered, 6, 132, &grid),
            GGEMM_OK)
      << ggemm_last_error();
  test::S8SegmentTensors u;
  u.w.dtype = GGEMM_DTYPE_BF16;
  EXPECT_EQ(ggemm_kernel_launch(kernel, u.get(), 6, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ggemm_last_error(), "tensor 'w': expected dtype s8, got bf16");
  EXPECT_EQ(ggemm_kernel_launch(kernel, t.get(), 5, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(ggemm_last_error(),
                  "missing tensor 'w_scale' (the kernel was compiled with "
                  "w_scale_block \"per_row\")");
  ggemm_kernel_destroy(kernel);

  ggemm_kernel *bad = nullptr;
  std::string path =
      dir.writeBundle(test::s8SegmentManifest("per_row", "128x128"));
  EXPECT_EQ(ggemm_kernel_load(path.c_str(), &bad), GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_EQ(bad, nullptr);
  EXPECT_STREQ(ggemm_last_error(),
               (path + ": /problem/w_scale_block: s8 operands take \"tensor\" "
                       "or \"per_row\" scales, got \"128x128\" (block scales "
                       "are for fp8)")
                   .c_str());
}

TEST(Api, GridForSmCount) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kSegmentManifest));
  ASSERT_NE(kernel, nullptr);
  SegmentTensors t;
  int grid = -1;
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 4, 132, &grid),
            GGEMM_OK);
  EXPECT_EQ(grid, 132);
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 4, 1000, &grid),
            GGEMM_OK);
  EXPECT_EQ(grid, 512); // the tile bound
  t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {0, 7168});
  t.y = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {0, 4096});
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 4, 132, &grid),
            GGEMM_OK);
  EXPECT_EQ(grid, 0);
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 4, 132, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(nullptr, t.get(), 4, 132, &grid),
            GGEMM_ERROR_INVALID_ARGUMENT);
  ggemm_kernel_destroy(kernel);
}

TEST(Api, LastErrorIsPerThreadAndClearedBySuccess) {
  ggemm_kernel *kernel = nullptr;
  EXPECT_EQ(ggemm_kernel_load(nullptr, &kernel), GGEMM_ERROR_INVALID_ARGUMENT);
  std::string otherThreadError = "unset";
  std::thread([&] { otherThreadError = ggemm_last_error(); }).join();
  EXPECT_EQ(otherThreadError, "");
  EXPECT_STREQ(ggemm_last_error(), "manifest_path is null");

  TempDir dir;
  kernel = loadOk(dir.writeBundle(test::kSegmentManifest));
  EXPECT_STREQ(ggemm_last_error(), "");
  ggemm_kernel_destroy(kernel);
}

// With gather-A the rows per group are the segment rows (row_indices'
// length) over the groups, whatever x's rows: 8 groups of 125 rows take the
// large variant even when x has 10 rows, and 8 of 64 the small one even
// when x has 5000.
TEST(Api, GatheredRowsSelectTheVariant) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeMultiVariantBundle(
      test::multiVariantManifest(test::moeSegmentManifest({/*gather=*/true}))));
  ASSERT_NE(kernel, nullptr);
  test::MoeTensors t({/*gather=*/true});
  t.x.shape[0] = 10;
  int variant = -1;
  const ggemm_tensor *list = t.get();
  EXPECT_EQ(ggemm_kernel_select_variant(kernel, list, t.count, 0, &variant),
            GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(variant, 1);
  t.x.shape[0] = 5000;
  t.rowIndices.shape[0] = 512;
  t.y.shape[0] = 512;
  list = t.get();
  EXPECT_EQ(ggemm_kernel_select_variant(kernel, list, t.count, 0, &variant),
            GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(variant, 0);
  // Its grid: 64-row tiles of the 512 segment rows, (512 / 64 + 8) * 32.
  int grid = 0;
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, list, t.count, 600, &grid),
            GGEMM_OK);
  EXPECT_EQ(grid, 512);
  ggemm_kernel_destroy(kernel);
}

// A version 2 bundle: the variant is chosen from the shapes and the hint,
// without the driver. M = 1000 rows over 8 segments is 125 rows per group,
// above the small variant's bound of 64.
TEST(Api, SelectsAVariantPerLaunch) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeMultiVariantBundle());
  ASSERT_NE(kernel, nullptr);
  int count = 0;
  EXPECT_EQ(ggemm_kernel_num_variants(kernel, &count), GGEMM_OK);
  EXPECT_EQ(count, 2);
  SegmentTensors t;
  int variant = -1;
  EXPECT_EQ(ggemm_kernel_select_variant(kernel, t.get(), 4, 0, &variant),
            GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(variant, 1);
  EXPECT_EQ(ggemm_kernel_select_variant(kernel, t.get(), 4, 64, &variant),
            GGEMM_OK);
  EXPECT_EQ(variant, 0);
  EXPECT_EQ(ggemm_kernel_select_variant(kernel, t.get(), 4, 65, &variant),
            GGEMM_OK);
  EXPECT_EQ(variant, 1);
  // 512 rows over 8 segments: 64 per group.
  t.x.shape[0] = 512;
  t.y.shape[0] = 512;
  EXPECT_EQ(ggemm_kernel_select_variant(kernel, t.get(), 4, 0, &variant),
            GGEMM_OK);
  EXPECT_EQ(variant, 0);
  // The grid follows the chosen variant: 64-row tiles, N / 128 columns,
  // (512 / 64 + 8) * 32 = 512 tiles on 600 SMs.
  int grid = 0;
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 4, 600, &grid),
            GGEMM_OK);
  EXPECT_EQ(grid, 512);

  EXPECT_EQ(ggemm_kernel_select_variant(kernel, t.get(), 4, -1, &variant),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(variant, -1);
  EXPECT_STREQ(ggemm_last_error(),
               "expected_m must be positive, or 0 for no hint, got -1");
  EXPECT_EQ(ggemm_kernel_select_variant(kernel, t.get(), 3, 0, &variant),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(ggemm_last_error(), "seg_indptr");
  EXPECT_EQ(ggemm_kernel_select_variant(kernel, t.get(), 4, 0, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ggemm_kernel_num_variants(kernel, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ggemm_kernel_num_variants(nullptr, &count),
            GGEMM_ERROR_INVALID_ARGUMENT);
  ggemm_kernel_destroy(kernel);
}

TEST(Api, SingleVariantBundles) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kSegmentManifest));
  ASSERT_NE(kernel, nullptr);
  int count = 0;
  EXPECT_EQ(ggemm_kernel_num_variants(kernel, &count), GGEMM_OK);
  EXPECT_EQ(count, 1);
  SegmentTensors t;
  int variant = -1;
  EXPECT_EQ(ggemm_kernel_select_variant(kernel, t.get(), 4, 16, &variant),
            GGEMM_OK);
  EXPECT_EQ(variant, 0);
  // The tensors are still checked.
  t.x.shape[1] = 4096;
  EXPECT_EQ(ggemm_kernel_select_variant(kernel, t.get(), 4, 16, &variant),
            GGEMM_ERROR_INVALID_ARGUMENT);
  ggemm_kernel_destroy(kernel);
}

TEST(Api, EveryVariantsBinaryIsRead) {
  TempDir dir;
  std::string path = dir.write("k.json", test::multiVariantManifest());
  dir.write("small.ptx", "small ptx");
  ggemm_kernel *kernel = nullptr;
  EXPECT_EQ(ggemm_kernel_load(path.c_str(), &kernel), GGEMM_ERROR_IO);
  EXPECT_EQ(kernel, nullptr);
  EXPECT_CONTAINS(ggemm_last_error(),
                  "cannot open cubin '" + dir.file("large.cubin") + "'");
}

// segment_matmul_k through the C API, without the driver: tensors by their
// names, the grid of G * ceil(R / block_m) * ceil(C / block_n) tiles.
TEST(Api, KRaggedTensorsByName) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kRaggedManifest()));
  ASSERT_NE(kernel, nullptr);
  test::KRaggedTensors t;
  int grid = -1;
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 4, 100000, &grid),
            GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(grid, 8 * 32 * 56);
  // No token rows: the same grid (the gradients are still written).
  t.dy = makeTensor("dy", 0, GGEMM_DTYPE_BF16, {0, 4096});
  t.x = makeTensor("x", 0, GGEMM_DTYPE_BF16, {0, 7168});
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 4, 100000, &grid),
            GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(grid, 8 * 32 * 56);
  int variant = -1;
  EXPECT_EQ(ggemm_kernel_select_variant(kernel, t.get(), 4, 0, &variant),
            GGEMM_OK);
  EXPECT_EQ(variant, 0);

  test::KRaggedTensors fresh;
  ggemm_tensor w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 4096, 7168});
  EXPECT_EQ(ggemm_kernel_launch(kernel, fresh.get({w}), 5, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ggemm_last_error(),
               "unknown tensor 'w' (segment_matmul_k takes dy, x, seg_indptr, "
               "dw)");
  EXPECT_EQ(ggemm_kernel_launch(kernel, fresh.get(), 3, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ggemm_last_error(), "missing tensor 'dw' (segment_matmul_k "
                                   "needs dy, x, seg_indptr, dw)");
  ggemm_kernel_destroy(kernel);
}

// The FP8 form of segment_matmul_k through the C API, without the driver:
// dy_scale and x_scale by name like every tensor, T from dy's and x's
// dimension 1 for the grid and the choice of variant.
TEST(Api, Fp8KRaggedTensorsByName) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(
      dir.writeMultiVariantBundle(test::fp8KRaggedMultiVariantManifest()));
  ASSERT_NE(kernel, nullptr);
  test::Fp8KRaggedTensors t;
  int grid = -1;
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 6, 100000, &grid),
            GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(grid, 8 * 32 * 38);
  // 1008 token rows over 8 groups: 126 per group, past the bound of 64.
  int variant = -1;
  EXPECT_EQ(ggemm_kernel_select_variant(kernel, t.get(), 6, 0, &variant),
            GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(variant, 1);
  t.setTokens(512);
  EXPECT_EQ(ggemm_kernel_select_variant(kernel, t.get(), 6, 0, &variant),
            GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(variant, 0);

  test::Fp8KRaggedTensors fresh;
  EXPECT_EQ(ggemm_kernel_launch(kernel, fresh.getWithoutScales(), 4, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ggemm_last_error(),
               "missing tensor 'dy_scale' (segment_matmul_k needs dy, x, "
               "seg_indptr, dw, dy_scale, x_scale)");
  ggemm_tensor w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 4096, 7168});
  EXPECT_EQ(ggemm_kernel_launch(kernel, fresh.get({w}), 7, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ggemm_last_error(),
               "unknown tensor 'w' (segment_matmul_k takes dy, x, seg_indptr, "
               "dw, dy_scale, x_scale)");
  fresh.setTokens(1000);
  EXPECT_EQ(ggemm_kernel_select_variant(kernel, fresh.get(), 6, 0, &variant),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(ggemm_last_error(),
                  "tensor 'dy': row stride is 1000 elements (1000 bytes), "
                  "expected a multiple of 16 bytes");
  ggemm_kernel_destroy(kernel);
}

// sort_by_expert through the C API, without the driver: one kernel, one
// CTA whatever the device and the pairs, and each tensor error by name.
TEST(Api, RoutingKernel) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kRoutingManifest));
  ASSERT_NE(kernel, nullptr);
  int count = 0;
  EXPECT_EQ(ggemm_kernel_num_variants(kernel, &count), GGEMM_OK);
  EXPECT_EQ(count, 1);
  test::RoutingTensors t;
  int grid = -1;
  for (int sms : {132, 1}) {
    EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 4, sms, &grid),
              GGEMM_OK)
        << ggemm_last_error();
    EXPECT_EQ(grid, 1);
  }
  int variant = -1;
  EXPECT_EQ(ggemm_kernel_select_variant(kernel, t.get(), 4, 0, &variant),
            GGEMM_OK);
  EXPECT_EQ(variant, 0);
  t.setPairs(0);
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 4, 132, &grid),
            GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(grid, 1);

  struct Case {
    std::function<void(test::RoutingTensors &)> change;
    ggemm_status status;
    const char *message;
  };
  const Case cases[] = {
      {[](test::RoutingTensors &r) { r.setPairs(100); },
       GGEMM_ERROR_INVALID_ARGUMENT,
       "tensor 'topk_ids': dimension 0 (num_pairs) is 100, expected a "
       "multiple of 8 (whole tokens of topk pairs: the kernel was compiled "
       "for topk = 8); shape is [100]"},
      {[](test::RoutingTensors &r) { r.setPairs(int64_t(1) << 32); },
       GGEMM_ERROR_UNSUPPORTED,
       "tensor 'topk_ids': dimension 0 (num_pairs) is 4294967296, expected "
       "at most 2^31 - 1 (the kernel counts pairs in i32); shape is "
       "[4294967296]"},
      {[](test::RoutingTensors &r) { r.ids.dtype = GGEMM_DTYPE_I64; },
       GGEMM_ERROR_INVALID_ARGUMENT,
       "tensor 'topk_ids': expected dtype i32, got i64"},
      {[](test::RoutingTensors &r) { r.indptr.shape[0] = 256; },
       GGEMM_ERROR_INVALID_ARGUMENT,
       "tensor 'seg_indptr': dimension 0 (num_experts + 1) is 256, expected "
       "257 (the kernel was compiled for num_experts = 256); shape is [256]"},
      {[](test::RoutingTensors &r) { r.rows.shape[0] = 120; },
       GGEMM_ERROR_INVALID_ARGUMENT,
       "tensors 'topk_ids' and 'row_indices' disagree on num_pairs: topk_ids "
       "dimension 0 (num_pairs) is 128, row_indices dimension 0 (num_pairs) "
       "is 120; shapes are [128] and [120]"},
      {[](test::RoutingTensors &r) { r.pairs.strides[0] = 3; },
       GGEMM_ERROR_INVALID_ARGUMENT,
       "tensor 'pair_indices': expected a contiguous tensor, got strides [3] "
       "for shape [128]"},
  };
  for (const Case &c : cases) {
    test::RoutingTensors changed;
    c.change(changed);
    EXPECT_EQ(ggemm_kernel_launch(kernel, changed.get(), 4, nullptr), c.status);
    EXPECT_STREQ(ggemm_last_error(), c.message);
  }
  test::RoutingTensors fresh;
  EXPECT_EQ(ggemm_kernel_launch(kernel, fresh.get(), 2, nullptr),
            GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ggemm_last_error(),
               "missing tensor 'row_indices' (sort_by_expert needs topk_ids, "
               "seg_indptr, row_indices, pair_indices)");
  ggemm_kernel_destroy(kernel);

  // A malformed routing manifest does not load.
  ggemm_kernel *bad = nullptr;
  std::string path =
      dir.writeBundle(test::withRoutingManifest("\"single\"", "\"tiles\""));
  EXPECT_EQ(ggemm_kernel_load(path.c_str(), &bad), GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_EQ(bad, nullptr);
  EXPECT_STREQ(ggemm_last_error(),
               (path + ": /grid/policy: sort_by_expert runs one CTA, expected "
                       "\"single\", got string \"tiles\"")
                   .c_str());
}

// quantize through the C API, without the driver: a grid of
// ceil(blocks / units_per_cta) CTAs capped at 4 per SM, and each tensor
// error by name.
TEST(Api, QuantizeKernel) {
  TempDir dir;
  ggemm_kernel *kernel = loadOk(dir.writeBundle(test::kQuantizeManifest));
  ASSERT_NE(kernel, nullptr);
  test::QuantizeTensors t;
  int grid = -1;
  // 100 rows of 4 blocks: 400 units, 64 a CTA: 7 CTAs; 1 SM holds 4.
  for (auto [sms, expected] : {std::pair{132, 7}, std::pair{1, 4}}) {
    EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 3, sms, &grid),
              GGEMM_OK)
        << ggemm_last_error();
    EXPECT_EQ(grid, expected);
  }
  t.x.shape[0] = t.q.shape[0] = t.scale.shape[0] = 100000;
  t.scale.strides[1] = 100000;
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 3, 132, &grid),
            GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(grid, 132 * 4);
  t.x.shape[0] = t.q.shape[0] = t.scale.shape[0] = 0;
  EXPECT_EQ(ggemm_kernel_grid_for_sm_count(kernel, t.get(), 3, 132, &grid),
            GGEMM_OK)
      << ggemm_last_error();
  EXPECT_EQ(grid, 0);

  struct Case {
    std::function<void(test::QuantizeTensors &)> change;
    const char *message;
  };
  const Case cases[] = {
      {[](test::QuantizeTensors &r) { r.q.dtype = GGEMM_DTYPE_F8E5M2; },
       "tensor 'q': expected dtype f8e4m3, got f8e5m2"},
      {[](test::QuantizeTensors &r) { r.q.shape[1] = 384; },
       "tensor 'q': dimension 1 is 384, expected 512 (x's shape); shape is "
       "[100, 384]"},
      {[](test::QuantizeTensors &r) {
         r.x.shape[1] = r.q.shape[1] = 500;
         r.x.strides[0] = r.q.strides[0] = 500;
       },
       "tensor 'x': dimension 1 (k) is 500, expected a multiple of 128 (one "
       "scale per 128 columns; pad k); shape is [100, 500]"},
      {[](test::QuantizeTensors &r) { r.scale.shape[1] = 3; },
       "tensor 'scale': dimension 1 (k blocks) is 3, expected 4 (x's shape "
       "and the 1x128 blocks); shape is [100, 3]"},
      {[](test::QuantizeTensors &r) { r.x.strides[0] = 1024; },
       "tensor 'x': expected a contiguous tensor, got strides [1024, 1] for "
       "shape [100, 512]"},
      {[](test::QuantizeTensors &r) {
         r.x.data = reinterpret_cast<void *>(test::kX + 8);
       },
       "tensor 'x': data pointer 0x100100008 is not 16-byte aligned (the "
       "kernel loads 16 bytes)"},
  };
  for (const Case &c : cases) {
    test::QuantizeTensors changed;
    c.change(changed);
    EXPECT_EQ(ggemm_kernel_launch(kernel, changed.get(), 3, nullptr),
              GGEMM_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(ggemm_last_error(), c.message);
  }
  ggemm_kernel_destroy(kernel);

  // A quantize manifest without units_per_cta does not load.
  ggemm_kernel *bad = nullptr;
  std::string path = dir.writeBundle(
      test::withQuantizeManifest(", \"units_per_cta\": 64", ""));
  EXPECT_EQ(ggemm_kernel_load(path.c_str(), &bad), GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_EQ(bad, nullptr);
  EXPECT_STREQ(ggemm_last_error(),
               (path + ": /grid/units_per_cta: missing required key").c_str());
}

} // namespace
} // namespace ggemm::runtime
