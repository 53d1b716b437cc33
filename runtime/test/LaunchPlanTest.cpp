//===- LaunchPlanTest.cpp - Tests of driver-free launch preparation -------===//

#include "LaunchPlan.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <functional>
#include <vector>

namespace ggemm::runtime {
namespace {

using test::makeTensor;
using test::SegmentTensors;
using test::withManifest;

Manifest manifestFrom(const std::string &text) {
  Manifest manifest;
  Status status = parseManifest(text, "k.json", "", manifest);
  EXPECT_TRUE(status.ok()) << status.getMessage();
  return manifest;
}

Manifest segmentManifest() { return manifestFrom(test::kSegmentManifest); }

/// A segment manifest with no static sizes, so tests can pick any shape.
Manifest dynamicSegmentManifest() {
  std::string text = withManifest("\"n\": 4096, \"k\": 7168, \"num_groups\": "
                                  "8, \"num_weights\": 8",
                                  "\"n\": -1, \"k\": -1, \"num_groups\": -1, "
                                  "\"num_weights\": -1");
  return manifestFrom(text);
}

/// A segment manifest as masked_matmul (x [G, Mmax, K], masked_m [G]) with
/// no static sizes.
std::string asMasked(const std::string &segment) {
  std::string text =
      test::replaced(segment, "\"segment_matmul\"", "\"masked_matmul\"");
  text = test::replaced(text, "\"seg_indptr\"", "\"masked_m\"");
  text = test::replaced(text,
                        "\"m\": -1, \"n\": 4096, \"k\": 7168, "
                        "\"num_groups\": 8, \"num_weights\": 8",
                        "\"m\": -1, \"n\": -1, \"k\": -1, \"num_groups\": "
                        "-1, \"num_weights\": -1");
  return text;
}

/// A masked_matmul manifest: x [G, Mmax, K], masked_m [G].
Manifest maskedManifest(bool rowScale = false) {
  std::string text = asMasked(test::kSegmentManifest);
  if (rowScale)
    text = test::replaced(text, "\"has_row_scale\": false",
                          "\"has_row_scale\": true");
  return manifestFrom(text);
}

Status bind(const Manifest &manifest, const ggemm_tensor *tensors, int count,
            BoundArgs &args) {
  return bindArguments(manifest, tensors, count, args);
}

/// The error of binding `tensors`, which must be INVALID_ARGUMENT.
std::string bindError(const Manifest &manifest, const ggemm_tensor *tensors,
                      int count,
                      ggemm_status expected = GGEMM_ERROR_INVALID_ARGUMENT) {
  BoundArgs args;
  Status status = bind(manifest, tensors, count, args);
  EXPECT_EQ(status.getCode(), expected) << status.getMessage();
  return status.getMessage();
}

TEST(Bind, SegmentShapes) {
  Manifest manifest = segmentManifest();
  SegmentTensors t;
  BoundArgs args;
  Status status = bind(manifest, t.get(), 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  const ProblemShape &shape = args.shape;
  EXPECT_EQ(shape.numRows, 1000);
  EXPECT_EQ(shape.rowsPerGroup, 0);
  EXPECT_EQ(shape.numGroups, 8);
  EXPECT_EQ(shape.numWeights, 8);
  EXPECT_EQ(shape.m, 1000);
  EXPECT_EQ(shape.n, 4096);
  EXPECT_EQ(shape.k, 7168);
  EXPECT_EQ(shape.lda, 7168);
  EXPECT_EQ(shape.ldy, 4096);
  // ceil(4096 / 128) * (ceil(1000 / 128) + 8) = 32 * 16.
  EXPECT_EQ(shape.numTiles, 512);
  EXPECT_TRUE(args.get(TensorRole::X).present);
  EXPECT_FALSE(args.get(TensorRole::Bias).present);
}

TEST(Bind, PaddedRowStrides) {
  Manifest manifest = segmentManifest();
  SegmentTensors t;
  t.x.strides[0] = 7168 + 64;
  t.y.strides[0] = 4096 + 8;
  BoundArgs args;
  Status status = bind(manifest, t.get(), 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.lda, 7232);
  EXPECT_EQ(args.shape.ldy, 4104);
}

TEST(Bind, MissingAndUnknownTensors) {
  Manifest manifest = segmentManifest();
  SegmentTensors t;
  EXPECT_CONTAINS(bindError(manifest, t.get(), 3),
                  "missing tensor 'seg_indptr' (segment_matmul needs x, w, y, "
                  "seg_indptr)");
  ggemm_tensor unknown = makeTensor("z", test::kExtra, GGEMM_DTYPE_F32, {1});
  EXPECT_CONTAINS(bindError(manifest, t.get({unknown}), 5),
                  "unknown tensor 'z' (segment_matmul takes x, w, y, "
                  "seg_indptr, weight_indices, bias, row_scale, x_scale, "
                  "w_scale, row_indices, scatter_indices, y_scale)");
  ggemm_tensor masked =
      makeTensor("masked_m", test::kExtra, GGEMM_DTYPE_I32, {8});
  EXPECT_CONTAINS(bindError(manifest, t.get({masked}), 5),
                  "unknown tensor 'masked_m'");
  EXPECT_CONTAINS(bindError(manifest, t.get({t.x}), 5),
                  "tensor 'x' is given twice");
  ggemm_tensor nameless = t.x;
  nameless.name = nullptr;
  EXPECT_CONTAINS(bindError(manifest, &nameless, 1),
                  "tensors[0] has a null name");
  EXPECT_CONTAINS(bindError(manifest, nullptr, 2),
                  "tensors is null but num_tensors is 2");
  EXPECT_CONTAINS(bindError(manifest, nullptr, -1), "num_tensors is negative");
}

TEST(Bind, OptionalTensorsFollowTheProblem) {
  Manifest manifest = segmentManifest();
  SegmentTensors t;
  ggemm_tensor bias =
      makeTensor("bias", test::kExtra, GGEMM_DTYPE_F32, {8, 4096});
  EXPECT_CONTAINS(bindError(manifest, t.get({bias}), 5),
                  "tensor 'bias' was given, but the kernel was compiled "
                  "without it (problem.has_bias is false)");

  Manifest withBias =
      manifestFrom(withManifest("\"has_bias\": false", "\"has_bias\": true"));
  EXPECT_CONTAINS(bindError(withBias, t.get(), 4),
                  "missing tensor 'bias' (the kernel was compiled with "
                  "has_bias)");
  BoundArgs args;
  Status status = bind(withBias, t.get({bias}), 5, args);
  EXPECT_TRUE(status.ok()) << status.getMessage();
  ggemm_tensor f16Bias = bias;
  f16Bias.dtype = GGEMM_DTYPE_BF16;
  EXPECT_CONTAINS(bindError(withBias, t.get({f16Bias}), 5),
                  "tensor 'bias': expected dtype f32, got bf16");
  ggemm_tensor shortBias =
      makeTensor("bias", test::kExtra, GGEMM_DTYPE_F32, {8, 4000});
  EXPECT_CONTAINS(bindError(withBias, t.get({shortBias}), 5),
                  "tensor 'bias': dimension 1 (n) is 4000, expected 4096");
  ggemm_tensor stridedBias = bias;
  stridedBias.strides[0] = 4100;
  EXPECT_CONTAINS(bindError(withBias, t.get({stridedBias}), 5),
                  "tensor 'bias': expected a contiguous tensor, got strides "
                  "[4100, 1] for shape [8, 4096]");
}

TEST(Bind, ScaleTensorsFollowTheProblem) {
  // A kernel without scales must not silently ignore them.
  Manifest manifest = segmentManifest();
  SegmentTensors t;
  test::Fp8SegmentTensors fp8;
  EXPECT_CONTAINS(bindError(manifest, t.get({fp8.xScale}), 5),
                  "tensor 'x_scale' was given, but the kernel was compiled "
                  "without it (problem.x_scale_block is absent)");
  EXPECT_CONTAINS(bindError(manifest, t.get({fp8.wScale}), 5),
                  "tensor 'w_scale' was given, but the kernel was compiled "
                  "without it (problem.w_scale_block is absent)");

  Manifest scaled = manifestFrom(test::fp8SegmentManifest());
  BoundArgs args;
  Status status = bind(scaled, fp8.get(), 6, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_TRUE(args.get(TensorRole::XScale).present);
  EXPECT_TRUE(args.get(TensorRole::WScale).present);
  EXPECT_CONTAINS(bindError(scaled, fp8.get(), 4),
                  "missing tensor 'x_scale' (the kernel was compiled with "
                  "x_scale_block \"1x128\")");
  EXPECT_CONTAINS(bindError(scaled, fp8.get(), 5),
                  "missing tensor 'w_scale' (the kernel was compiled with "
                  "w_scale_block \"128x128\")");
}

TEST(Bind, WrongDtype) {
  Manifest manifest = segmentManifest();
  SegmentTensors t;
  t.w.dtype = GGEMM_DTYPE_F16;
  EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                  "tensor 'w': expected dtype bf16, got f16");
  SegmentTensors u;
  u.indptr.dtype = GGEMM_DTYPE_I64;
  EXPECT_CONTAINS(bindError(manifest, u.get(), 4),
                  "tensor 'seg_indptr': expected dtype i32, got i64");
  SegmentTensors v;
  int badDtype = 42; // as a C caller could store it
  std::memcpy(&v.y.dtype, &badDtype, sizeof(badDtype));
  EXPECT_CONTAINS(bindError(manifest, v.get(), 4),
                  "tensor 'y': invalid dtype value 42");
}

TEST(Bind, WrongRank) {
  Manifest manifest = segmentManifest();
  SegmentTensors t;
  t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {1, 1000, 7168});
  EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                  "tensor 'x': expected rank 2 ([m, k]), got rank 3 with "
                  "shape [1, 1000, 7168]");
  SegmentTensors u;
  u.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {4096, 7168});
  EXPECT_CONTAINS(bindError(manifest, u.get(), 4),
                  "tensor 'w': expected rank 3 ([num_weights, n, k] for "
                  "weight_layout \"nk\"), got rank 2");
  SegmentTensors v;
  v.y.rank = 5;
  EXPECT_CONTAINS(bindError(manifest, v.get(), 4),
                  "tensor 'y': rank 5 is outside [0, 4]");
}

TEST(Bind, ShapeMismatches) {
  // Nothing static: the first tensor that carries a size gives it, and a
  // tensor that disagrees is reported together with that one.
  Manifest manifest = dynamicSegmentManifest();
  {
    SegmentTensors t;
    t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 4096, 7000});
    EXPECT_EQ(bindError(manifest, t.get(), 4),
              "tensors 'x' and 'w' disagree on k: x dimension 1 (k) is 7168, "
              "w dimension 2 (k) is 7000; shapes are [1000, 7168] and [8, "
              "4096, 7000]");
  }
  {
    SegmentTensors t;
    t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {1000, 4096});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensors 'x' and 'w' disagree on k: x dimension 1 (k) is "
                    "4096, w dimension 2 (k) is 7168");
  }
  {
    SegmentTensors t;
    t.y = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {1000, 2048});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensors 'w' and 'y' disagree on n: w dimension 1 (n) is "
                    "4096, y dimension 1 (n) is 2048");
  }
  {
    SegmentTensors t;
    t.y = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {999, 4096});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensors 'x' and 'y' disagree on m: x dimension 0 (m) is "
                    "1000, y dimension 0 (m) is 999");
  }
  {
    SegmentTensors t;
    t.indptr = makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {5});
    EXPECT_EQ(bindError(manifest, t.get(), 4),
              "tensors 'seg_indptr' and 'w' disagree on num_groups: "
              "seg_indptr dimension 0 (num_groups + 1) is 5, w dimension 0 "
              "(num_weights: one per group without weight_indices) is 8; "
              "shapes are [5] and [8, 4096, 7168]");
  }
  {
    SegmentTensors t;
    t.indptr = makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {0});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'seg_indptr': expected at least 1 element");
  }
}

TEST(Bind, StaticSizesBlameTheWrongTensor) {
  // n = 4096, k = 7168, num_groups = num_weights = 8: every tensor is checked
  // against the static size, so the error names the tensor that differs.
  Manifest manifest =
      manifestFrom(withManifest("\"has_bias\": false, \"has_row_scale\": false",
                                "\"has_bias\": true, \"has_row_scale\": true"));
  struct Case {
    ggemm_tensor tensor;
    const char *error;
  };
  const Case cases[] = {
      {makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {1000, 4096}),
       "tensor 'x': dimension 1 (k) is 4096, expected 7168 (the kernel was "
       "compiled for k = 7168); shape is [1000, 4096]"},
      {makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 4096, 4096}),
       "tensor 'w': dimension 2 (k) is 4096, expected 7168 (the kernel was "
       "compiled for k = 7168); shape is [8, 4096, 4096]"},
      {makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 2048, 7168}),
       "tensor 'w': dimension 1 (n) is 2048, expected 4096 (the kernel was "
       "compiled for n = 4096)"},
      {makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {1000, 2048}),
       "tensor 'y': dimension 1 (n) is 2048, expected 4096 (the kernel was "
       "compiled for n = 4096)"},
      {makeTensor("bias", test::kExtra, GGEMM_DTYPE_F32, {8, 2048}),
       "tensor 'bias': dimension 1 (n) is 2048, expected 4096 (the kernel "
       "was compiled for n = 4096)"},
      {makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {5}),
       "tensor 'seg_indptr': dimension 0 (num_groups + 1) is 5, expected 9 "
       "(the kernel was compiled for num_groups = 8); shape is [5]"},
      {makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {4, 4096, 7168}),
       "tensor 'w': dimension 0 (num_weights: one per group without "
       "weight_indices) is 4, expected 8 (the kernel was compiled for "
       "num_groups = 8)"},
      {makeTensor("bias", test::kExtra, GGEMM_DTYPE_F32, {4, 4096}),
       "tensor 'bias': dimension 0 (num_weights: one per group without "
       "weight_indices) is 4, expected 8"},
  };
  for (const Case &c : cases) {
    SegmentTensors t;
    ggemm_tensor bias =
        makeTensor("bias", test::kExtra, GGEMM_DTYPE_F32, {8, 4096});
    ggemm_tensor scale = makeTensor("row_scale", test::kExtra + 0x100000,
                                    GGEMM_DTYPE_F32, {1000});
    for (ggemm_tensor *tensor : {&t.x, &t.w, &t.y, &t.indptr, &bias, &scale})
      if (std::strcmp(tensor->name, c.tensor.name) == 0)
        *tensor = c.tensor;
    EXPECT_CONTAINS(bindError(manifest, t.get({bias, scale}), 6), c.error);
  }
}

TEST(Bind, StaticRowsBlameTheWrongTensor) {
  Manifest manifest = manifestFrom(
      withManifest("\"m\": -1, \"n\": 4096", "\"m\": 1000, \"n\": 4096"));
  manifest.problem.hasRowScale = true;
  const ggemm_tensor scale =
      makeTensor("row_scale", test::kExtra, GGEMM_DTYPE_F32, {1000});
  {
    SegmentTensors t;
    t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {999, 7168});
    EXPECT_CONTAINS(bindError(manifest, t.get({scale}), 5),
                    "tensor 'x': dimension 0 (m) is 999, expected 1000 (the "
                    "kernel was compiled for m = 1000)");
  }
  {
    SegmentTensors t;
    t.y = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {999, 4096});
    EXPECT_CONTAINS(bindError(manifest, t.get({scale}), 5),
                    "tensor 'y': dimension 0 (m) is 999, expected 1000");
  }
  {
    SegmentTensors t;
    ggemm_tensor shortScale = scale;
    shortScale.shape[0] = 999;
    EXPECT_CONTAINS(bindError(manifest, t.get({shortScale}), 5),
                    "tensor 'row_scale': dimension 0 (m) is 999, expected "
                    "1000");
    // Without the static size, row_scale disagrees with x.
    manifest.problem.m = -1;
    EXPECT_CONTAINS(bindError(manifest, t.get({shortScale}), 5),
                    "tensors 'x' and 'row_scale' disagree on m: x dimension 0 "
                    "(m) is 1000, row_scale dimension 0 (m) is 999");
  }
}

TEST(Bind, Alignment) {
  Manifest manifest = segmentManifest();
  {
    SegmentTensors t;
    t.x.data = reinterpret_cast<void *>(test::kX + 2);
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'x': data pointer 0x100100002 is not 16-byte "
                    "aligned (TMA needs 16-byte aligned global addresses)");
  }
  {
    SegmentTensors t;
    t.w.data = reinterpret_cast<void *>(test::kW + 8);
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'w': data pointer 0x100200008 is not 16-byte "
                    "aligned");
  }
  {
    // y is written element by element: its natural alignment is enough.
    SegmentTensors t;
    t.y.data = reinterpret_cast<void *>(test::kY + 4);
    BoundArgs args;
    Status status = bind(manifest, t.get(), 4, args);
    EXPECT_TRUE(status.ok()) << status.getMessage();
    t.y.data = reinterpret_cast<void *>(test::kY + 1);
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'y': data pointer 0x100300001 is not 2-byte "
                    "aligned (natural alignment of its dtype)");
  }
  {
    // Index tensors only need their natural alignment.
    SegmentTensors t;
    t.indptr.data = reinterpret_cast<void *>(test::kIndptr + 4);
    BoundArgs args;
    Status status = bind(manifest, t.get(), 4, args);
    EXPECT_TRUE(status.ok()) << status.getMessage();
    t.indptr.data = reinterpret_cast<void *>(test::kIndptr + 2);
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'seg_indptr': data pointer 0x100400002 is not "
                    "4-byte aligned (natural alignment of its dtype)");
  }
  {
    SegmentTensors t;
    t.x.data = nullptr;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'x': data pointer is null");
  }
}

TEST(Bind, Strides) {
  Manifest manifest = segmentManifest();
  {
    SegmentTensors t;
    t.x.strides[1] = 2;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'x': innermost stride is 2, expected 1 (the last "
                    "dimension must be contiguous); strides are [7168, 2]");
  }
  {
    // A transposed w: K is not the contiguous dimension.
    SegmentTensors t;
    t.w.strides[1] = 1;
    t.w.strides[2] = 4096;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'w': innermost stride is 4096, expected 1");
  }
  {
    SegmentTensors t;
    t.x.strides[0] = 7172; // 14344 bytes
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'x': stride of dimension 0 is 7172 elements "
                    "(14344 bytes), expected a multiple of 16 bytes");
  }
  {
    // y is not read by TMA: a padded row stride of any length works.
    SegmentTensors t;
    t.y.strides[0] = 4099;
    BoundArgs args;
    Status status = bind(manifest, t.get(), 4, args);
    EXPECT_TRUE(status.ok()) << status.getMessage();
  }
  {
    SegmentTensors t;
    t.w.strides[0] = 4096 * 7168 + 4;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'w': stride of dimension 0 is 29360132 elements");
  }
  {
    SegmentTensors t;
    t.y.strides[0] = 2048;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'y': row stride 2048 is smaller than the row "
                    "length 4096");
  }
  {
    SegmentTensors t;
    t.x.strides[0] = 0;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'x': stride of dimension 0 is 0 (broadcast "
                    "tensors are not supported)");
  }
  {
    SegmentTensors t;
    t.x.strides[0] = -7168;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "negative strides are not supported");
  }
}

TEST(Bind, ExtentOneStridesAreIgnored) {
  // PyTorch gives extent-1 dimensions arbitrary strides; they never step.
  Manifest manifest = dynamicSegmentManifest();
  SegmentTensors t;
  t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {1, 7168});
  t.x.strides[0] = 3; // meaningless for a single row
  t.y = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {1, 4096});
  t.y.strides[0] = 1;
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {1, 4096, 7168});
  t.w.strides[0] = 5;
  t.indptr = makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {2});
  BoundArgs args;
  Status status = bind(manifest, t.get(), 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.lda, 7168);
  EXPECT_EQ(args.shape.ldy, 4096);
}

TEST(Bind, EmptyProblemsHaveNoTiles) {
  Manifest manifest = dynamicSegmentManifest();
  SegmentTensors t;
  t.x = makeTensor("x", 0, GGEMM_DTYPE_BF16, {0, 7168});
  t.y = makeTensor("y", 0, GGEMM_DTYPE_BF16, {0, 4096});
  BoundArgs args;
  Status status = bind(manifest, t.get(), 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.numTiles, 0);

  SegmentTensors u;
  u.indptr = makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {1});
  u.w = makeTensor("w", 0, GGEMM_DTYPE_BF16, {0, 4096, 7168});
  status = bind(manifest, u.get(), 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.numGroups, 0);
  EXPECT_EQ(args.shape.numTiles, 0);
}

TEST(Bind, ZeroKIsUnsupported) {
  Manifest manifest = dynamicSegmentManifest();
  SegmentTensors t;
  t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {1000, 0});
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 4096, 0});
  EXPECT_CONTAINS(bindError(manifest, t.get(), 4, GGEMM_ERROR_UNSUPPORTED),
                  "k = 0 is not supported");
}

TEST(Bind, WeightIndices) {
  std::string text = withManifest("\"num_groups\": 8, \"num_weights\": 8",
                                  "\"num_groups\": -1, \"num_weights\": -1");
  text = test::replaced(text, "\"has_weight_indices\": false",
                        "\"has_weight_indices\": true");
  Manifest manifest = manifestFrom(text);
  SegmentTensors t;
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {3, 4096, 7168});
  ggemm_tensor indices =
      makeTensor("weight_indices", test::kExtra, GGEMM_DTYPE_I32, {8});
  BoundArgs args;
  Status status = bind(manifest, t.get({indices}), 5, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.numGroups, 8);
  EXPECT_EQ(args.shape.numWeights, 3);
  indices.shape[0] = 7;
  EXPECT_CONTAINS(bindError(manifest, t.get({indices}), 5),
                  "tensors 'seg_indptr' and 'weight_indices' disagree on "
                  "num_groups: seg_indptr dimension 0 (num_groups + 1) is 9, "
                  "weight_indices dimension 0 (num_groups) is 7");
  ggemm_tensor bias =
      makeTensor("bias", test::kExtra + 0x100000, GGEMM_DTYPE_F32, {4, 4096});
  manifest.problem.hasBias = true;
  indices.shape[0] = 8;
  EXPECT_CONTAINS(bindError(manifest, t.get({indices, bias}), 6),
                  "tensors 'w' and 'bias' disagree on num_weights: w "
                  "dimension 0 (num_weights) is 3, bias dimension 0 "
                  "(num_weights) is 4");
  // Static sizes blame the tensor that differs from them.
  manifest.problem.hasBias = false;
  manifest.problem.numGroups = 8;
  manifest.problem.numWeights = 4;
  EXPECT_CONTAINS(bindError(manifest, t.get({indices}), 5),
                  "tensor 'w': dimension 0 (num_weights) is 3, expected 4 (the "
                  "kernel was compiled for num_weights = 4)");
  indices.shape[0] = 7;
  EXPECT_CONTAINS(bindError(manifest, t.get({indices}), 5),
                  "tensor 'weight_indices': dimension 0 (num_groups) is 7, "
                  "expected 8 (the kernel was compiled for num_groups = 8)");
  EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                  "missing tensor 'weight_indices'");
}

TEST(Bind, KnWeightLayout) {
  Manifest manifest = manifestFrom(
      withManifest("\"weight_layout\": \"nk\"", "\"weight_layout\": \"kn\""));
  SegmentTensors t;
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 7168, 4096});
  BoundArgs args;
  Status status = bind(manifest, t.get(), 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.n, 4096);
  EXPECT_EQ(args.shape.k, 7168);
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 4096, 7168});
  EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                  "tensor 'w': dimension 1 (k) is 4096, expected 7168");
}

TEST(Bind, MaskedShapes) {
  Manifest manifest = maskedManifest();
  ggemm_tensor tensors[] = {
      makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {4, 256, 512}),
      makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {4, 1024, 512}),
      makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {4, 256, 1024}),
      makeTensor("masked_m", test::kIndptr, GGEMM_DTYPE_I32, {4}),
  };
  BoundArgs args;
  Status status = bind(manifest, tensors, 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.numRows, 1024);
  EXPECT_EQ(args.shape.rowsPerGroup, 256);
  EXPECT_EQ(args.shape.numGroups, 4);
  EXPECT_EQ(args.shape.m, 256);
  // ceil(1024 / 128) * 4 * ceil(256 / 128) = 8 * 4 * 2.
  EXPECT_EQ(args.shape.numTiles, 64);

  tensors[3].shape[0] = 3;
  EXPECT_CONTAINS(bindError(manifest, tensors, 4),
                  "tensors 'x' and 'masked_m' disagree on num_groups: x "
                  "dimension 0 (num_groups) is 4, masked_m dimension 0 "
                  "(num_groups) is 3");
  manifest.problem.numGroups = 3;
  EXPECT_CONTAINS(bindError(manifest, tensors, 4),
                  "tensor 'x': dimension 0 (num_groups) is 4, expected 3 (the "
                  "kernel was compiled for num_groups = 3)");
  manifest.problem.numGroups = -1;
  tensors[3].shape[0] = 4;
  // Groups of x must be packed so that x reads as [G * Mmax, K].
  tensors[0].strides[0] = 256 * 512 + 64;
  EXPECT_CONTAINS(bindError(manifest, tensors, 4),
                  "tensor 'x': stride of dimension 0 is 131136, expected "
                  "131072 (shape[1] * stride[1])");
  tensors[0].strides[0] = 256 * 512;
  tensors[2] = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {4, 128, 1024});
  EXPECT_CONTAINS(bindError(manifest, tensors, 4),
                  "tensors 'x' and 'y' disagree on m: x dimension 1 (m) is "
                  "256, y dimension 1 (m) is 128");
  tensors[2] = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {256, 1024});
  EXPECT_CONTAINS(bindError(manifest, tensors, 4),
                  "tensor 'y': expected rank 3 ([groups, m, n]), got rank 2");
}

TEST(Bind, OneRowGroupsKeepTheirRowStride) {
  // [G, 1, C] views into padded rows (PyTorch: y[:, :1, :n] of a [G, 1, ld]
  // buffer): the matrix's rows are stride[0] apart, whatever stride[1] says.
  Manifest manifest = maskedManifest();
  ggemm_tensor tensors[] = {
      makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {4, 1, 512}),
      makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {4, 1024, 512}),
      makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {4, 1, 1024}),
      makeTensor("masked_m", test::kIndptr, GGEMM_DTYPE_I32, {4}),
  };
  tensors[0].strides[0] = 520;
  tensors[0].strides[1] = 520;
  tensors[2].strides[0] = 1027;
  tensors[2].strides[1] = 7; // never stepped: ignored
  BoundArgs args;
  Status status = bind(manifest, tensors, 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.lda, 520);
  EXPECT_EQ(args.shape.ldy, 1027);
  EXPECT_EQ(args.shape.numRows, 4);
}

TEST(Bind, RowScaleShapes) {
  Manifest manifest = maskedManifest(/*rowScale=*/true);
  ggemm_tensor tensors[] = {
      makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {4, 256, 512}),
      makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {4, 1024, 512}),
      makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {4, 256, 1024}),
      makeTensor("masked_m", test::kIndptr, GGEMM_DTYPE_I32, {4}),
      makeTensor("row_scale", test::kExtra, GGEMM_DTYPE_F32, {1024}),
  };
  BoundArgs args;
  Status status = bind(manifest, tensors, 5, args);
  EXPECT_TRUE(status.ok()) << status.getMessage();
  tensors[4] = makeTensor("row_scale", test::kExtra, GGEMM_DTYPE_F32, {4, 256});
  status = bind(manifest, tensors, 5, args);
  EXPECT_TRUE(status.ok()) << status.getMessage();
  tensors[4] = makeTensor("row_scale", test::kExtra, GGEMM_DTYPE_F32, {1000});
  EXPECT_CONTAINS(bindError(manifest, tensors, 5),
                  "tensor 'row_scale': dimension 0 (rows) is 1000, expected "
                  "1024 (rows of x)");
  tensors[4] = makeTensor("row_scale", test::kExtra, GGEMM_DTYPE_F32, {3, 256});
  EXPECT_CONTAINS(bindError(manifest, tensors, 5),
                  "tensors 'x' and 'row_scale' disagree on num_groups: x "
                  "dimension 0 (num_groups) is 4, row_scale dimension 0 "
                  "(num_groups) is 3");
  tensors[4] = makeTensor("row_scale", test::kExtra, GGEMM_DTYPE_F32, {4, 255});
  EXPECT_CONTAINS(bindError(manifest, tensors, 5),
                  "tensors 'x' and 'row_scale' disagree on m: x dimension 1 "
                  "(m) is 256, row_scale dimension 1 (m) is 255");
}

/// fp8 segment tensors with M rows: x [M, 7168], y [M, 4096] and x_scale
/// [M, 56] MN-major with k blocks `blockStride` apart.
test::Fp8SegmentTensors fp8Rows(int64_t rows, int64_t blockStride) {
  test::Fp8SegmentTensors t;
  t.x.shape[0] = rows;
  t.y.shape[0] = rows;
  t.xScale = test::makeStrided("x_scale", test::kXScale, GGEMM_DTYPE_F32,
                               {rows, 56}, {1, blockStride});
  return t;
}

/// fp8 masked tensors: x [4, 256, 512] (4 k blocks), w [4, 1024, 512] (8 n
/// blocks), x_scale [4, 256, 4] MN-major over all 1024 rows.
struct Fp8MaskedTensors {
  ggemm_tensor x = makeTensor("x", test::kX, GGEMM_DTYPE_F8E4M3, {4, 256, 512});
  ggemm_tensor w =
      makeTensor("w", test::kW, GGEMM_DTYPE_F8E4M3, {4, 1024, 512});
  ggemm_tensor y = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {4, 256, 1024});
  ggemm_tensor maskedM =
      makeTensor("masked_m", test::kIndptr, GGEMM_DTYPE_I32, {4});
  ggemm_tensor xScale = test::makeStrided(
      "x_scale", test::kXScale, GGEMM_DTYPE_F32, {4, 256, 4}, {256, 1, 1024});
  ggemm_tensor wScale =
      makeTensor("w_scale", test::kWScale, GGEMM_DTYPE_F32, {4, 8, 4});

  ggemm_tensor list[6];
  int count = 6;

  const ggemm_tensor *get() {
    int index = 0;
    for (const ggemm_tensor &tensor : {x, w, y, maskedM, xScale, wScale})
      list[index++] = tensor;
    return list;
  }
};

/// One way to get the tensors wrong and (part of) the error it must cause.
template <typename Tensors> struct BadTensors {
  std::function<void(Tensors &)> change;
  std::string error;
};

/// Binds `Tensors` as each case changes them, expecting its error.
template <typename Tensors>
void expectBindErrors(const Manifest &manifest,
                      const std::vector<BadTensors<Tensors>> &cases) {
  for (const BadTensors<Tensors> &bad : cases) {
    Tensors tensors;
    bad.change(tensors);
    const ggemm_tensor *list = tensors.get();
    EXPECT_CONTAINS(bindError(manifest, list, tensors.count), bad.error);
  }
}

template <typename Tensors>
void expectBinds(const Manifest &manifest,
                 const std::function<void(Tensors &)> &change) {
  Tensors tensors;
  change(tensors);
  const ggemm_tensor *list = tensors.get();
  BoundArgs args;
  Status status = bind(manifest, list, tensors.count, args);
  EXPECT_TRUE(status.ok()) << status.getMessage();
}

using Fp8Segment = test::Fp8SegmentTensors;

TEST(Bind, XScaleSegmentLayouts) {
  Manifest manifest = manifestFrom(test::fp8SegmentManifest());
  // MN-major with padded columns: torch.empty(56, 304).t()[:300].
  expectBinds<Fp8Segment>(manifest, [](auto &t) { t = fp8Rows(300, 304); });
  // One row or one k block: the stride that is never stepped is free.
  expectBinds<Fp8Segment>(manifest, [](auto &t) {
    t = fp8Rows(1, 304);
    t.xScale.strides[0] = 56;
  });
  expectBinds<Fp8Segment>(
      manifestFrom(test::withFp8Manifest("\"k\": 7168", "\"k\": 64")),
      [](auto &t) {
        t.x.shape[1] = 64;
        t.w.shape[2] = 64;
        t.xScale =
            makeTensor("x_scale", test::kXScale, GGEMM_DTYPE_F32, {1000, 1});
        t.wScale =
            makeTensor("w_scale", test::kWScale, GGEMM_DTYPE_F32, {8, 32, 1});
      });

  expectBindErrors<Fp8Segment>(
      manifest,
      {{[](auto &t) { t.xScale.dtype = GGEMM_DTYPE_BF16; },
        "tensor 'x_scale': expected dtype f32, got bf16"},
       {[](auto &t) {
          t.xScale =
              makeTensor("x_scale", test::kXScale, GGEMM_DTYPE_F32, {1000});
        },
        "tensor 'x_scale': expected rank 2 ([m, ceil(k / 128)] for "
        "x_scale_block \"1x128\"), got rank 1 with shape [1000]"},
       {[](auto &t) {
          t = fp8Rows(300, 304);
          t.xScale.shape[1] = 55;
        },
        "tensor 'x_scale': dimension 1 is 55, expected 56 (ceil(k / 128)); "
        "shape is [300, 55]"},
       {[](auto &t) { t.xScale.shape[0] = 999; },
        "tensors 'x' and 'x_scale' disagree on m: x dimension 0 (m) is 1000, "
        "x_scale dimension 0 (m) is 999"},
       // Row-major scales are the likeliest mistake: say how to fix them.
       {[](auto &t) {
          t = fp8Rows(300, 304);
          t.xScale =
              makeTensor("x_scale", test::kXScale, GGEMM_DTYPE_F32, {300, 56});
        },
        "tensor 'x_scale': the kernel wants MN-major scales (stride 1 along "
        "the rows, so that TMA reads the scales of one k block as a column), "
        "got strides [56, 1] for shape [300, 56]; allocate them as "
        "torch.empty(56, 300).t() (strides [1, 300]), or convert row-major "
        "scales s with s.t().contiguous().t()"},
       // 301 rows: the k blocks must be padded to 304 rows apart.
       {[](auto &t) {
          t = fp8Rows(301, 304);
          t.xScale =
              makeTensor("x_scale", test::kXScale, GGEMM_DTYPE_F32, {301, 56});
        },
        "allocate them as torch.empty(56, 304).t()[:301] (strides [1, 304]), "
        "or convert row-major scales s with torch.nn.functional.pad(s, (0, 0, "
        "0, 3)).t().contiguous().t()[:301]"},
       {[](auto &t) { t = fp8Rows(301, 301); },
        "tensor 'x_scale': stride of dimension 1 (k blocks) is 301 elements "
        "(1204 bytes), expected a multiple of 16 bytes for TMA (pad the "
        "rows); allocate them as torch.empty(56, 304).t()[:301]"},
       {[](auto &t) { t = fp8Rows(300, 296); },
        "tensor 'x_scale': stride of dimension 1 (k blocks) is 296, expected "
        "at least the 300 rows (the columns of scales overlap)"},
       {[](auto &t) {
          t.xScale.data = reinterpret_cast<void *>(test::kXScale + 4);
        },
        "tensor 'x_scale': data pointer 0x100600004 is not 16-byte aligned "
        "(TMA needs 16-byte aligned global addresses)"}});
}

TEST(Bind, XScaleMaskedLayouts) {
  Manifest manifest = manifestFrom(asMasked(test::fp8SegmentManifest()));
  expectBinds<Fp8MaskedTensors>(manifest, [](auto &) {});
  // Padded k-block stride.
  expectBinds<Fp8MaskedTensors>(manifest,
                                [](auto &t) { t.xScale.strides[2] = 1028; });
  expectBindErrors<Fp8MaskedTensors>(
      manifest,
      {{[](auto &t) {
          t.xScale = test::makeStrided("x_scale", test::kXScale,
                                       GGEMM_DTYPE_F32, {1024, 4}, {1, 1024});
        },
        "tensor 'x_scale': expected rank 3 ([groups, m, ceil(k / 128)] for "
        "x_scale_block \"1x128\"), got rank 2"},
       {[](auto &t) { t.xScale.shape[0] = 3; },
        "tensors 'x' and 'x_scale' disagree on num_groups"},
       {[](auto &t) { t.xScale.shape[1] = 255; },
        "tensors 'x' and 'x_scale' disagree on m: x dimension 1 (m) is 256, "
        "x_scale dimension 1 (m) is 255"},
       {[](auto &t) { t.xScale.shape[2] = 5; },
        "tensor 'x_scale': dimension 2 is 5, expected 4 (ceil(k / 128))"},
       // Row-major [G, Mmax, KB].
       {[](auto &t) {
          t.xScale = makeTensor("x_scale", test::kXScale, GGEMM_DTYPE_F32,
                                {4, 256, 4});
        },
        "tensor 'x_scale': the kernel wants MN-major scales (stride 1 along "
        "the rows, so that TMA reads the scales of one k block as a column), "
        "got strides [1024, 4, 1] for shape [4, 256, 4]; allocate them as "
        "torch.empty(4, 1024).t().view(4, 256, 4) (strides [256, 1, 1024]), "
        "or convert row-major scales s with s.reshape(1024, "
        "4).t().contiguous().t().view(4, 256, 4)"},
       // MN-major per group (torch.empty(4, 4, 256).transpose(1, 2)): the
       // groups are not back to back.
       {[](auto &t) {
          t.xScale.strides[0] = 1024;
          t.xScale.strides[2] = 256;
        },
        "tensor 'x_scale': stride of dimension 0 is 1024, expected 256 "
        "(shape[1]): the groups' rows must be back to back so that they read "
        "as 1024 rows with stride 1"},
       {[](auto &t) { t.xScale.strides[2] = 1000; },
        "tensor 'x_scale': stride of dimension 2 (k blocks) is 1000, expected "
        "at least the 1024 rows"},
       {[](auto &t) { t.xScale.strides[2] = 1026; },
        "tensor 'x_scale': stride of dimension 2 (k blocks) is 1026 elements "
        "(4104 bytes), expected a multiple of 16 bytes"}});
}

TEST(Bind, WScaleShapes) {
  Manifest manifest = manifestFrom(test::fp8SegmentManifest());
  expectBindErrors<Fp8Segment>(
      manifest,
      {{[](auto &t) {
          t.wScale =
              makeTensor("w_scale", test::kWScale, GGEMM_DTYPE_F32, {8, 32});
        },
        "tensor 'w_scale': expected rank 3 ([num_weights, ceil(n / 128), "
        "ceil(k / 128)] for w_scale_block \"128x128\"), got rank 2"},
       {[](auto &t) { t.wScale.shape[2] = 55; },
        "tensor 'w_scale': dimension 2 is 55, expected 56 (ceil(k / 128)); "
        "shape is [8, 32, 55]"},
       {[](auto &t) { t.wScale.shape[1] = 31; },
        "tensor 'w_scale': dimension 1 is 31, expected 32 (ceil(n / 128)); "
        "shape is [8, 31, 56]"},
       {[](auto &t) { t.wScale.shape[0] = 7; },
        "tensor 'w_scale': dimension 0 (num_weights: one per group without "
        "weight_indices) is 7, expected 8"},
       {[](auto &t) {
          t.wScale =
              test::makeStrided("w_scale", test::kWScale, GGEMM_DTYPE_F32,
                                {8, 32, 56}, {32 * 56, 1, 32});
        },
        "tensor 'w_scale': expected a contiguous tensor, got strides [1792, "
        "1, 32] for shape [8, 32, 56]"},
       {[](auto &t) {
          t.wScale.data = reinterpret_cast<void *>(test::kWScale + 2);
        },
        "tensor 'w_scale': data pointer 0x100700002 is not 4-byte aligned "
        "(natural alignment of its dtype)"}});

  // With weight indices, w_scale has one scale matrix per weight matrix.
  Manifest indexed = manifestFrom(test::withFp8Manifest(
      "\"has_weight_indices\": false", "\"has_weight_indices\": true"));
  ggemm_tensor indices =
      makeTensor("weight_indices", test::kExtra, GGEMM_DTYPE_I32, {8});
  Fp8Segment t;
  BoundArgs args;
  Status status = bind(indexed, t.get({indices}), 7, args);
  EXPECT_TRUE(status.ok()) << status.getMessage();
  t.wScale.shape[0] = 7;
  EXPECT_CONTAINS(bindError(indexed, t.get({indices}), 7),
                  "tensor 'w_scale': dimension 0 (num_weights) is 7, expected "
                  "8 (the kernel was compiled for num_weights = 8)");

  // Masked: one scale matrix per group's weights, n and k blocks as w's.
  expectBindErrors<Fp8MaskedTensors>(
      manifestFrom(asMasked(test::fp8SegmentManifest())),
      {{[](auto &t) { t.wScale.shape[0] = 3; },
        "tensors 'x' and 'w_scale' disagree on num_groups"},
       {[](auto &t) { t.wScale.shape[1] = 16; },
        "tensor 'w_scale': dimension 1 is 16, expected 8 (ceil(n / 128))"}});
}

//===----------------------------------------------------------------------===//
// FP8 output: an e4m3 y and its 1x128 scales (y_scale)
//===----------------------------------------------------------------------===//

using Fp8Out = test::Fp8OutTensors;

/// masked_matmul writing an e4m3 y: bf16 x [4, 256, 512], w [4, 384, 512],
/// y [4, 256, 384] and y_scale [4, 256, 3] MN-major over all 1024 rows
/// (torch.empty(3, 1024).t().view(4, 256, 3)), as the FP8 masked ops take
/// their x_scale.
struct Fp8OutMaskedTensors {
  ggemm_tensor x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {4, 256, 512});
  ggemm_tensor w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {4, 384, 512});
  ggemm_tensor y = makeTensor("y", test::kY, GGEMM_DTYPE_F8E4M3, {4, 256, 384});
  ggemm_tensor maskedM =
      makeTensor("masked_m", test::kIndptr, GGEMM_DTYPE_I32, {4});
  ggemm_tensor yScale = test::makeStrided(
      "y_scale", test::kYScale, GGEMM_DTYPE_F32, {4, 256, 3}, {256, 1, 1024});

  ggemm_tensor list[5];
  int count = 5;

  const ggemm_tensor *get() {
    int index = 0;
    for (const ggemm_tensor &tensor : {x, w, y, maskedM, yScale})
      list[index++] = tensor;
    return list;
  }
};

Manifest fp8OutMaskedManifest() {
  return manifestFrom(test::fp8OutOf(asMasked(test::kSegmentManifest)));
}

TEST(Bind, YScaleFollowsTheProblem) {
  // A kernel without an e4m3 y must not silently ignore scales for it.
  Fp8Out fp8;
  SegmentTensors t;
  EXPECT_CONTAINS(bindError(segmentManifest(), t.get({fp8.yScale}), 5),
                  "tensor 'y_scale' was given, but the kernel was compiled "
                  "without it (problem.y_scale_block is absent)");

  Manifest manifest = manifestFrom(test::kFp8OutManifest);
  BoundArgs args;
  Status status = bind(manifest, fp8.get(), 6, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_TRUE(args.get(TensorRole::YScale).present);
  EXPECT_EQ(args.shape.yScaleStrides[0], 1);
  EXPECT_EQ(args.shape.yScaleStrides[1], 1000);
  EXPECT_EQ(args.shape.n, 384);
  EXPECT_EQ(args.shape.ldy, 384);
  EXPECT_CONTAINS(bindError(manifest, fp8.get(), 5),
                  "missing tensor 'y_scale' (the kernel was compiled with "
                  "y_scale_block \"1x128\")");
  // y is e4m3 (one byte) in this kernel, and only in it.
  Fp8Out bf16;
  bf16.y.dtype = GGEMM_DTYPE_BF16;
  EXPECT_CONTAINS(bindError(manifest, bf16.get(), 6),
                  "tensor 'y': expected dtype f8e4m3, got bf16");
  SegmentTensors e4m3;
  e4m3.y.dtype = GGEMM_DTYPE_F8E4M3;
  EXPECT_CONTAINS(bindError(segmentManifest(), e4m3.get(), 4),
                  "tensor 'y': expected dtype bf16, got f8e4m3");
}

TEST(Bind, YScaleSegmentLayouts) {
  Manifest manifest = manifestFrom(test::kFp8OutManifest);
  // Any strides that give each scale its own element: MN-major with padded
  // columns (torch.empty(3, 1004).t()), row-major, padded rows.
  for (std::array<int64_t, 2> strides :
       {std::array<int64_t, 2>{1, 1004}, std::array<int64_t, 2>{3, 1},
        std::array<int64_t, 2>{4, 1}})
    expectBinds<Fp8Out>(manifest, [&strides](auto &t) {
      t.yScale.strides[0] = strides[0];
      t.yScale.strides[1] = strides[1];
    });
  // y may have any row stride, as any y (its rows are stored one by one).
  expectBinds<Fp8Out>(manifest, [](auto &t) { t.y.strides[0] = 385; });
  // One column block (n <= 128): its stride is never stepped.
  expectBinds<Fp8Out>(
      manifestFrom(test::withFp8OutManifest("\"n\": 384", "\"n\": 100")),
      [](auto &t) {
        t.w.shape[1] = 100;
        t.y.shape[1] = 100;
        t.bias = makeTensor("bias", test::kExtra, GGEMM_DTYPE_F32, {4, 100});
        t.yScale = test::makeStrided("y_scale", test::kYScale, GGEMM_DTYPE_F32,
                                     {1000, 1}, {1, 7});
      });

  expectBindErrors<Fp8Out>(
      manifest,
      {{[](auto &t) { t.yScale.dtype = GGEMM_DTYPE_BF16; },
        "tensor 'y_scale': expected dtype f32, got bf16"},
       {[](auto &t) {
          t.yScale =
              makeTensor("y_scale", test::kYScale, GGEMM_DTYPE_F32, {1000});
        },
        "tensor 'y_scale': expected rank 2 ([m, ceil(n / 128)] for "
        "y_scale_block \"1x128\"), got rank 1 with shape [1000]"},
       {[](auto &t) { t.yScale.shape[1] = 4; },
        "tensor 'y_scale': dimension 1 is 4, expected 3 (ceil(n / 128)); "
        "shape is [1000, 4]"},
       {[](auto &t) { t.yScale.shape[0] = 999; },
        "tensors 'x' and 'y_scale' disagree on m: x dimension 0 (m) is 1000, "
        "y_scale dimension 0 (m) is 999"},
       {[](auto &t) { t.yScale.strides[1] = 500; },
        "tensor 'y_scale': strides [1, 500] for shape [1000, 3] may give two "
        "scales one element (the kernel writes every one): expected the row "
        "stride to be at least 3 * the block stride (row-major) or the block "
        "stride at least 1000 * the row stride (MN-major)"},
       {[](auto &t) {
          t.yScale.strides[0] = 2;
          t.yScale.strides[1] = 1;
        },
        "tensor 'y_scale': strides [2, 1] for shape [1000, 3] may give two "
        "scales one element"},
       {[](auto &t) { t.yScale.strides[1] = 0; },
        "tensor 'y_scale': stride of dimension 1 is 0 (broadcast tensors are "
        "not supported)"},
       {[](auto &t) {
          t.yScale.data = reinterpret_cast<void *>(test::kYScale + 2);
        },
        "tensor 'y_scale': data pointer 0x101000002 is not 4-byte aligned "
        "(natural alignment of its dtype)"}});
}

TEST(Bind, YScaleMaskedLayouts) {
  Manifest manifest = fp8OutMaskedManifest();
  expectBinds<Fp8OutMaskedTensors>(manifest, [](auto &) {});
  // Padded block stride; row-major [G, Mmax, NB]; one row per group (its
  // group stride is then the row stride).
  expectBinds<Fp8OutMaskedTensors>(manifest,
                                   [](auto &t) { t.yScale.strides[2] = 1028; });
  expectBinds<Fp8OutMaskedTensors>(manifest, [](auto &t) {
    t.yScale =
        makeTensor("y_scale", test::kYScale, GGEMM_DTYPE_F32, {4, 256, 3});
  });
  expectBinds<Fp8OutMaskedTensors>(manifest, [](auto &t) {
    t.x.shape[1] = t.y.shape[1] = t.yScale.shape[1] = 1;
    t.x.strides[0] = 512;
    t.y.strides[0] = 384;
    t.yScale.strides[0] = 4;
    t.yScale.strides[2] = 1;
  });

  expectBindErrors<Fp8OutMaskedTensors>(
      manifest,
      {{[](auto &t) {
          t.yScale = test::makeStrided("y_scale", test::kYScale,
                                       GGEMM_DTYPE_F32, {1024, 3}, {1, 1024});
        },
        "tensor 'y_scale': expected rank 3 ([groups, m, ceil(n / 128)] for "
        "y_scale_block \"1x128\"), got rank 2"},
       {[](auto &t) { t.yScale.shape[0] = 3; },
        "tensors 'x' and 'y_scale' disagree on num_groups"},
       {[](auto &t) { t.yScale.shape[1] = 255; },
        "tensors 'x' and 'y_scale' disagree on m: x dimension 1 (m) is 256, "
        "y_scale dimension 1 (m) is 255"},
       {[](auto &t) { t.yScale.shape[2] = 4; },
        "tensor 'y_scale': dimension 2 is 4, expected 3 (ceil(n / 128))"},
       // MN-major per group (torch.empty(4, 3, 256).transpose(1, 2)): the
       // groups' rows are not one stride apart.
       {[](auto &t) {
          t.yScale.strides[0] = 768;
          t.yScale.strides[2] = 256;
        },
        "tensor 'y_scale': stride of dimension 0 is 768, expected 256 "
        "(shape[1] * stride[1]): the kernel writes the scales of group g's "
        "row r as row g * 256 + r, so the groups' rows must be one stride "
        "apart; strides are [768, 1, 256] (MN-major torch.empty(3, "
        "1024).t().view(4, 256, 3) or a contiguous tensor has it)"},
       {[](auto &t) { t.yScale.strides[2] = 1000; },
        "tensor 'y_scale': strides [256, 1, 1000] for shape [4, 256, 3] may "
        "give two scales one element"}});
}

/// `text` with other scale blocks, x's scales passed by pointer.
std::string withScaleBlocks(const std::string &text, const char *xBlock,
                            const char *wBlock) {
  std::string blocks = test::replaced(
      text, "\"x_scale_block\": \"1x128\", \"w_scale_block\": \"128x128\"",
      std::string("\"x_scale_block\": \"") + xBlock +
          "\", \"w_scale_block\": \"" + wBlock + "\"");
  return test::replaced(blocks, test::kXScaleDescriptor,
                        "{\"name\": \"x_scale\", \"kind\": \"pointer\", "
                        "\"tensor\": \"x_scale\"}");
}

TEST(Bind, PerRowAndTensorScales) {
  Manifest perRow = manifestFrom(
      withScaleBlocks(test::fp8SegmentManifest(), "per_row", "per_row"));
  auto perRowScales = [](Fp8Segment &t) {
    t.xScale =
        makeTensor("x_scale", test::kXScale + 4, GGEMM_DTYPE_F32, {1000});
    t.wScale = makeTensor("w_scale", test::kWScale, GGEMM_DTYPE_F32, {8, 4096});
  };
  expectBinds<Fp8Segment>(perRow, perRowScales);
  expectBindErrors<Fp8Segment>(
      perRow,
      {{[&](auto &t) {
          perRowScales(t);
          t.xScale.shape[0] = 999;
        },
        "tensors 'x' and 'x_scale' disagree on m: x dimension 0 (m) is 1000, "
        "x_scale dimension 0 (m) is 999"},
       {[&](auto &t) {
          perRowScales(t);
          t.xScale =
              makeTensor("x_scale", test::kXScale, GGEMM_DTYPE_F32, {1000, 1});
        },
        "tensor 'x_scale': expected rank 1 ([m] for x_scale_block "
        "\"per_row\"), got rank 2"},
       {[&](auto &t) {
          perRowScales(t);
          t.xScale.strides[0] = 2;
        },
        "tensor 'x_scale': expected a contiguous tensor"},
       {[&](auto &t) {
          perRowScales(t);
          t.wScale.shape[1] = 4095;
        },
        "tensor 'w_scale': dimension 1 (n) is 4095, expected 4096 (the kernel "
        "was compiled for n = 4096)"}});

  Manifest perTensor = manifestFrom(
      withScaleBlocks(test::fp8SegmentManifest(), "tensor", "tensor"));
  auto perTensorScales = [](Fp8Segment &t) {
    t.xScale = makeTensor("x_scale", test::kXScale, GGEMM_DTYPE_F32, {1});
    t.wScale = makeTensor("w_scale", test::kWScale, GGEMM_DTYPE_F32, {8});
  };
  expectBinds<Fp8Segment>(perTensor, perTensorScales);
  expectBindErrors<Fp8Segment>(
      perTensor, {{[&](auto &t) {
                     perTensorScales(t);
                     t.xScale.shape[0] = 2;
                   },
                   "tensor 'x_scale': dimension 0 is 2, expected 1 (one scale "
                   "for all of x)"},
                  {[&](auto &t) {
                     perTensorScales(t);
                     t.wScale.shape[0] = 9;
                   },
                   "tensor 'w_scale': dimension 0 (num_weights: one per group "
                   "without weight_indices) is 9, expected 8"}});

  // Masked per_row scales are [G, Mmax], like x's rows.
  Manifest maskedPerRow = manifestFrom(asMasked(
      withScaleBlocks(test::fp8SegmentManifest(), "per_row", "per_row")));
  auto maskedScales = [](Fp8MaskedTensors &t) {
    t.xScale = makeTensor("x_scale", test::kXScale, GGEMM_DTYPE_F32, {4, 256});
    t.wScale = makeTensor("w_scale", test::kWScale, GGEMM_DTYPE_F32, {4, 1024});
  };
  expectBinds<Fp8MaskedTensors>(maskedPerRow, maskedScales);
  expectBindErrors<Fp8MaskedTensors>(
      maskedPerRow, {{[&](auto &t) {
                        maskedScales(t);
                        t.xScale.shape[1] = 128;
                      },
                      "tensors 'x' and 'x_scale' disagree on m"}});
}

//===----------------------------------------------------------------------===//
// INT8: s8 x and w, tensor-wise / per-row scales by pointer
//===----------------------------------------------------------------------===//

using S8Segment = test::S8SegmentTensors;

/// s8 masked tensors: x [4, 256, 512], w [4, 1024, 512], per-row scales
/// x_scale [4, 256] (groups back to back) and w_scale [4, 1024].
struct S8MaskedTensors {
  ggemm_tensor x = makeTensor("x", test::kX, GGEMM_DTYPE_S8, {4, 256, 512});
  ggemm_tensor w = makeTensor("w", test::kW, GGEMM_DTYPE_S8, {4, 1024, 512});
  ggemm_tensor y = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {4, 256, 1024});
  ggemm_tensor maskedM =
      makeTensor("masked_m", test::kIndptr, GGEMM_DTYPE_I32, {4});
  ggemm_tensor xScale =
      makeTensor("x_scale", test::kXScale, GGEMM_DTYPE_F32, {4, 256});
  ggemm_tensor wScale =
      makeTensor("w_scale", test::kWScale, GGEMM_DTYPE_F32, {4, 1024});

  ggemm_tensor list[6];
  int count = 6;

  const ggemm_tensor *get() {
    int index = 0;
    for (const ggemm_tensor &tensor : {x, w, y, maskedM, xScale, wScale})
      list[index++] = tensor;
    return list;
  }
};

TEST(Bind, Int8OperandsAndScales) {
  Manifest perRow = manifestFrom(test::s8SegmentManifest());
  expectBinds<S8Segment>(perRow, [](auto &) {});
  expectBindErrors<S8Segment>(
      perRow,
      {// x and w are s8, both of them; the scales f32.
       {[](auto &t) { t.x.dtype = GGEMM_DTYPE_F8E4M3; },
        "tensor 'x': expected dtype s8, got f8e4m3"},
       {[](auto &t) { t.w.dtype = GGEMM_DTYPE_BF16; },
        "tensor 'w': expected dtype s8, got bf16"},
       {[](auto &t) { t.y.dtype = GGEMM_DTYPE_S8; },
        "tensor 'y': expected dtype bf16, got s8"},
       {[](auto &t) { t.xScale.dtype = GGEMM_DTYPE_BF16; },
        "tensor 'x_scale': expected dtype f32, got bf16"},
       // Per-row scales: x's [m], w's [num_weights, n], dense.
       {[](auto &t) { t.xScale.shape[0] = 999; },
        "tensors 'x' and 'x_scale' disagree on m: x dimension 0 (m) is 1000, "
        "x_scale dimension 0 (m) is 999"},
       {[](auto &t) {
          t.xScale = test::makeStrided("x_scale", test::kXScale,
                                       GGEMM_DTYPE_F32, {1000, 56}, {1, 1000});
        },
        "tensor 'x_scale': expected rank 1 ([m] for x_scale_block "
        "\"per_row\"), got rank 2"},
       {[](auto &t) {
          t.wScale = makeTensor("w_scale", test::kWScale, GGEMM_DTYPE_F32,
                                {8, 32, 56});
        },
        "tensor 'w_scale': expected rank 2 ([num_weights, n] for "
        "w_scale_block \"per_row\")"},
       {[](auto &t) { t.wScale.shape[1] = 4095; },
        "tensor 'w_scale': dimension 1 (n) is 4095, expected 4096 (the kernel "
        "was compiled for n = 4096)"},
       // Strides count 1-byte elements: TMA needs 16-byte row strides.
       {[](auto &t) { t.x.strides[0] = 7176; },
        "tensor 'x': stride of dimension 0 is 7176 elements (7176 bytes), "
        "expected a multiple of 16 bytes"}});
  // The scales are required.
  S8Segment t;
  EXPECT_CONTAINS(bindError(perRow, t.get(), 4),
                  "missing tensor 'x_scale' (the kernel was compiled with "
                  "x_scale_block \"per_row\")");
  EXPECT_CONTAINS(bindError(perRow, t.get(), 5),
                  "missing tensor 'w_scale' (the kernel was compiled with "
                  "w_scale_block \"per_row\")");

  Manifest perTensor =
      manifestFrom(test::s8SegmentManifest("tensor", "tensor"));
  expectBinds<S8Segment>(perTensor, [](auto &t) { t.setTensorScales(); });
  expectBindErrors<S8Segment>(
      perTensor, {{[](auto &t) {
                     t.setTensorScales();
                     t.xScale.shape[0] = 2;
                   },
                   "tensor 'x_scale': dimension 0 is 2, expected 1 (one scale "
                   "for all of x)"},
                  {[](auto &t) {
                     t.setTensorScales();
                     t.wScale.shape[0] = 9;
                   },
                   "tensor 'w_scale': dimension 0 (num_weights: one per group "
                   "without weight_indices) is 9, expected 8"}});
  // Mixed: per-token x scales with one scale per weight matrix.
  expectBinds<S8Segment>(
      manifestFrom(test::s8SegmentManifest("per_row", "tensor")), [](auto &t) {
        t.wScale = makeTensor("w_scale", test::kWScale, GGEMM_DTYPE_F32, {8});
      });

  // Masked per-row scales are [G, Mmax], like x's rows.
  Manifest masked = manifestFrom(asMasked(test::s8SegmentManifest()));
  expectBinds<S8MaskedTensors>(masked, [](auto &) {});
  expectBindErrors<S8MaskedTensors>(
      masked, {{[](auto &t) { t.xScale.shape[1] = 128; },
                "tensors 'x' and 'x_scale' disagree on m"},
               {[](auto &t) { t.x.dtype = GGEMM_DTYPE_BF16; },
                "tensor 'x': expected dtype s8, got bf16"}});
}

TEST(Grid, TileBound) {
  // segment: ceil(N / bn) * (ceil(M / bm) + G).
  EXPECT_EQ(computeTileBound(Op::SegmentMatmul, 1000, 0, 8, 4096, 128, 128),
            32 * (8 + 8));
  EXPECT_EQ(computeTileBound(Op::SegmentMatmul, 1, 0, 1, 1, 128, 128), 2);
  // masked / batched: ceil(N / bn) * G * ceil(rows_per_group / bm).
  EXPECT_EQ(computeTileBound(Op::MaskedMatmul, 4 * 300, 300, 4, 1000, 128, 64),
            16 * 4 * 3);
  EXPECT_EQ(computeTileBound(Op::BatchedMatmul, 2 * 128, 128, 2, 128, 128, 128),
            2);
  // Nothing to do.
  EXPECT_EQ(computeTileBound(Op::SegmentMatmul, 0, 0, 8, 4096, 128, 128), 0);
  EXPECT_EQ(computeTileBound(Op::SegmentMatmul, 100, 0, 0, 4096, 128, 128), 0);
  EXPECT_EQ(computeTileBound(Op::MaskedMatmul, 0, 0, 4, 4096, 128, 128), 0);
  EXPECT_EQ(computeTileBound(Op::SegmentMatmul, 100, 0, 1, 0, 128, 128), 0);
  // Saturates instead of overflowing.
  int64_t huge = int64_t(1) << 40;
  EXPECT_EQ(computeTileBound(Op::SegmentMatmul, huge, 0, huge, huge, 1, 1),
            INT64_MAX);
}

TEST(Grid, PersistentPolicy) {
  Manifest manifest = segmentManifest();
  unsigned grid = 0;
  ASSERT_TRUE(computeGrid(manifest, 512, 132, grid).ok());
  EXPECT_EQ(grid, 132u);
  ASSERT_TRUE(computeGrid(manifest, 7, 132, grid).ok());
  EXPECT_EQ(grid, 7u);
  ASSERT_TRUE(computeGrid(manifest, 0, 132, grid).ok());
  EXPECT_EQ(grid, 0u);
  manifest.ctasPerSm = 2;
  ASSERT_TRUE(computeGrid(manifest, 512, 132, grid).ok());
  EXPECT_EQ(grid, 264u);
  ASSERT_TRUE(computeGrid(manifest, INT64_MAX, 132, grid).ok());
  EXPECT_EQ(grid, 264u);
  Status status = computeGrid(manifest, 10, 0, grid);
  EXPECT_EQ(status.getCode(), GGEMM_ERROR_INVALID_ARGUMENT);
}

TEST(Grid, PersistentPolicyWithClusters) {
  Manifest manifest = segmentManifest();
  manifest.cluster = {2, 1, 1};
  unsigned grid = 0;
  // Few tiles: rounded up to whole clusters.
  ASSERT_TRUE(computeGrid(manifest, 7, 132, grid).ok());
  EXPECT_EQ(grid, 8u);
  // Many tiles: as many whole clusters as fit on the device.
  manifest.cluster = {8, 1, 1};
  ASSERT_TRUE(computeGrid(manifest, 1000, 132, grid).ok());
  EXPECT_EQ(grid, 128u);
  // Fewer SMs than a cluster: one cluster.
  ASSERT_TRUE(computeGrid(manifest, 1000, 4, grid).ok());
  EXPECT_EQ(grid, 8u);
}

TEST(Grid, SplitKTakesSplitKCtasATile) {
  Manifest manifest = segmentManifest();
  manifest.cluster = {8, 1, 1};
  manifest.splitK = 8;
  unsigned grid = 0;
  // 9 tiles of 8 CTAs each.
  ASSERT_TRUE(computeGrid(manifest, 9, 132, grid).ok());
  EXPECT_EQ(grid, 72u);
  // More than fit: as many whole clusters as there are SMs for.
  ASSERT_TRUE(computeGrid(manifest, 33, 132, grid).ok());
  EXPECT_EQ(grid, 128u);
  // A huge tile bound does not overflow.
  ASSERT_TRUE(computeGrid(manifest, INT64_MAX, 132, grid).ok());
  EXPECT_EQ(grid, 128u);
  manifest.cluster = {3, 1, 1};
  manifest.splitK = 3;
  ASSERT_TRUE(computeGrid(manifest, 33, 132, grid).ok());
  EXPECT_EQ(grid, 99u);
}

TEST(Grid, TilesPolicy) {
  Manifest manifest = segmentManifest();
  manifest.gridPolicy = GridPolicy::Tiles;
  unsigned grid = 0;
  ASSERT_TRUE(computeGrid(manifest, 512, 132, grid).ok());
  EXPECT_EQ(grid, 512u);
  manifest.cluster = {2, 1, 1};
  ASSERT_TRUE(computeGrid(manifest, 511, 0, grid).ok());
  EXPECT_EQ(grid, 512u);
  Status status = computeGrid(manifest, int64_t(1) << 33, 132, grid);
  EXPECT_EQ(status.getCode(), GGEMM_ERROR_UNSUPPORTED);
  EXPECT_CONTAINS(status.getMessage(), "more than the grid limit 2147483647");
}

TEST(TensorMap, SegmentDescriptors) {
  Manifest manifest = segmentManifest();
  SegmentTensors t;
  t.x.strides[0] = 7168 + 64; // padded rows
  BoundArgs args;
  ASSERT_TRUE(bind(manifest, t.get(), 4, args).ok());

  TensorMapArgs a;
  Status status = computeTensorMapArgs(manifest, manifest.params[0], args, a);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(a.dataType, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(a.rank, 2u);
  EXPECT_EQ(a.globalAddress, reinterpret_cast<void *>(test::kX));
  EXPECT_EQ(a.globalDim[0], 7168u); // K innermost
  EXPECT_EQ(a.globalDim[1], 1000u); // rows
  EXPECT_EQ(a.globalStrides[0], (7168u + 64u) * 2u);
  EXPECT_EQ(a.boxDim[0], 64u);
  EXPECT_EQ(a.boxDim[1], 128u);
  EXPECT_EQ(a.elementStrides[0], 1u);
  EXPECT_EQ(a.elementStrides[1], 1u);
  EXPECT_EQ(a.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(a.l2Promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  EXPECT_EQ(a.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);

  TensorMapArgs b;
  status = computeTensorMapArgs(manifest, manifest.params[1], args, b);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(b.rank, 3u);
  EXPECT_EQ(b.globalAddress, reinterpret_cast<void *>(test::kW));
  EXPECT_EQ(b.globalDim[0], 7168u); // K
  EXPECT_EQ(b.globalDim[1], 4096u); // N
  EXPECT_EQ(b.globalDim[2], 8u);    // weights
  EXPECT_EQ(b.globalStrides[0], 7168u * 2u);
  EXPECT_EQ(b.globalStrides[1], 4096u * 7168u * 2u);
  EXPECT_EQ(b.boxDim[2], 1u);
}

TEST(TensorMap, KnWeightsAndDtypes) {
  std::string text =
      withManifest("\"weight_layout\": \"nk\"", "\"weight_layout\": \"kn\"");
  text = test::replaced(text, "bf16", "f8e4m3");
  // An e4m3 y would come with its scales; this test is about w.
  text = test::replaced(text, "\"out_dtype\": \"f8e4m3\"",
                        "\"out_dtype\": \"bf16\"");
  // 128 fp8 elements fill the 128-byte swizzle.
  text = test::replaced(text, "\"box\": [64, 128, 1]", "\"box\": [128, 64, 1]");
  text = test::replaced(text, "\"box\": [64, 128]", "\"box\": [128, 128]");
  Manifest manifest = manifestFrom(text);
  SegmentTensors t;
  t.x.dtype = GGEMM_DTYPE_F8E4M3;
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_F8E4M3, {8, 7168, 4096});
  BoundArgs args;
  Status status = bind(manifest, t.get(), 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  TensorMapArgs b;
  status = computeTensorMapArgs(manifest, manifest.params[1], args, b);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(b.dataType, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(b.globalDim[0], 4096u); // N innermost for "kn"
  EXPECT_EQ(b.globalDim[1], 7168u); // K
  EXPECT_EQ(b.globalDim[2], 8u);
  EXPECT_EQ(b.globalStrides[0], 4096u);
  EXPECT_EQ(b.globalStrides[1], 4096u * 7168u);
}

TEST(TensorMap, MaskedRank3AndNanFill) {
  std::string text = withManifest("\"segment_matmul\"", "\"masked_matmul\"");
  text = test::replaced(text, "\"seg_indptr\"", "\"masked_m\"");
  text = test::replaced(
      text, "\"m\": -1, \"n\": 4096, \"k\": 7168, \"num_groups\": 8",
      "\"m\": -1, \"n\": -1, \"k\": -1, \"num_groups\": -1");
  text = test::replaced(text, "\"num_weights\": 8", "\"num_weights\": -1");
  text = test::replaced(text,
                        "\"rank\": 2, \"box\": [64, 128], \"swizzle\": "
                        "\"128B\", \"oob_fill\": \"zero\"",
                        "\"rank\": 3, \"box\": [64, 128, 1], \"swizzle\": "
                        "\"128B\", \"oob_fill\": \"nan\"");
  Manifest manifest = manifestFrom(text);
  ggemm_tensor tensors[] = {
      makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {4, 256, 512}),
      makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {4, 1024, 512}),
      makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {4, 256, 1024}),
      makeTensor("masked_m", test::kIndptr, GGEMM_DTYPE_I64, {4}),
  };
  manifest.problem.indexDtype = GGEMM_DTYPE_I64;
  BoundArgs args;
  Status status = bind(manifest, tensors, 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  TensorMapArgs a;
  status = computeTensorMapArgs(manifest, manifest.params[0], args, a);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(a.rank, 3u);
  EXPECT_EQ(a.globalDim[0], 512u);
  EXPECT_EQ(a.globalDim[1], 256u);
  EXPECT_EQ(a.globalDim[2], 4u);
  EXPECT_EQ(a.globalStrides[0], 512u * 2u);
  EXPECT_EQ(a.globalStrides[1], 256u * 512u * 2u);
  EXPECT_EQ(a.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
}

TEST(TensorMap, YDescriptorOnlyWhereTmaCanAddressY) {
  // The staged epilogue's descriptor of y (ggemm-tma-store): [num_rows, N]
  // boxes of 64 rows by 64 bf16 columns; absent (128 zero bytes) when y's
  // address or row stride is not 16-byte aligned, where the kernel stores
  // without it.
  std::string text = test::replaced(
      test::kSegmentManifest,
      R"json({"name": "ldy", "kind": "scalar", "dtype": "i64", "value": "ldy"})json",
      R"json({"name": "ldy", "kind": "scalar", "dtype": "i64", "value": "ldy"},
    {"name": "y_desc", "kind": "tma_descriptor", "tensor": "y", "dtype": "bf16", "rank": 2, "box": [64, 64], "swizzle": "128B", "oob_fill": "zero"})json");
  Manifest manifest = manifestFrom(text);
  const ParamSpec &param = manifest.params.back();
  ASSERT_EQ(param.name, "y_desc");
  SegmentTensors t;
  BoundArgs args;
  ASSERT_TRUE(bind(manifest, t.get(), 4, args).ok());
  TensorMapArgs y;
  Status status = computeTensorMapArgs(manifest, param, args, y);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_FALSE(y.absent);
  EXPECT_EQ(y.globalAddress, reinterpret_cast<void *>(test::kY));
  EXPECT_EQ(y.globalDim[0], 4096u); // N innermost
  EXPECT_EQ(y.globalDim[1], 1000u); // rows
  EXPECT_EQ(y.globalStrides[0], 4096u * 2u);
  EXPECT_EQ(y.boxDim[0], 64u);
  EXPECT_EQ(y.boxDim[1], 64u);
  EXPECT_EQ(y.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);

  // A row stride of 4100 elements (8200 bytes) is not a multiple of 16.
  t.y = test::makeStrided("y", test::kY, GGEMM_DTYPE_BF16, {1000, 4096},
                          {4100, 1});
  ASSERT_TRUE(bind(manifest, t.get(), 4, args).ok());
  status = computeTensorMapArgs(manifest, param, args, y);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_TRUE(y.absent);

  // An address 8 bytes past a 16-byte boundary.
  t.y = makeTensor("y", test::kY + 8, GGEMM_DTYPE_BF16, {1000, 4096});
  ASSERT_TRUE(bind(manifest, t.get(), 4, args).ok());
  status = computeTensorMapArgs(manifest, param, args, y);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_TRUE(y.absent);

  // N = 4092 (8184 bytes): a TMA store would write the rest of the last
  // 16-byte unit of each row.
  t.y = test::makeStrided("y", test::kY, GGEMM_DTYPE_BF16, {1000, 4092},
                          {4104, 1});
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 4092, 7168});
  std::string dynamicN = test::replaced(text, "\"n\": 4096", "\"n\": -1");
  Manifest anyN = manifestFrom(dynamicN);
  ASSERT_TRUE(bind(anyN, t.get(), 4, args).ok());
  status = computeTensorMapArgs(anyN, anyN.params.back(), args, y);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_TRUE(y.absent);
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 4096, 7168});

  // A row stride of 4104 elements is: the descriptor steps it.
  t.y = test::makeStrided("y", test::kY, GGEMM_DTYPE_BF16, {1000, 4096},
                          {4104, 1});
  ASSERT_TRUE(bind(manifest, t.get(), 4, args).ok());
  status = computeTensorMapArgs(manifest, param, args, y);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_FALSE(y.absent);
  EXPECT_EQ(y.globalStrides[0], 4104u * 2u);
}

TEST(TensorMap, XScaleDescriptor) {
  // M = 300, K = 7168 (56 k blocks), k blocks 304 rows apart.
  Manifest manifest = manifestFrom(test::fp8SegmentManifest());
  const ParamSpec &param = manifest.params[13];
  ASSERT_EQ(param.tensor, TensorRole::XScale);
  test::Fp8SegmentTensors t = fp8Rows(300, 304);
  BoundArgs args;
  ASSERT_TRUE(bind(manifest, t.get(), 6, args).ok());
  TensorMapArgs a;
  Status status = computeTensorMapArgs(manifest, param, args, a);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(a.dataType, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(a.rank, 2u);
  EXPECT_EQ(a.globalAddress, reinterpret_cast<void *>(test::kXScale));
  EXPECT_EQ(a.globalDim[0], 300u); // rows innermost
  EXPECT_EQ(a.globalDim[1], 56u);  // k blocks
  EXPECT_EQ(a.globalStrides[0], 304u * 4u);
  EXPECT_EQ(a.boxDim[0], 128u);
  EXPECT_EQ(a.boxDim[1], 1u);
  EXPECT_EQ(a.elementStrides[0], 1u);
  EXPECT_EQ(a.elementStrides[1], 1u);
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
  EXPECT_EQ(a.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(a.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);

  // Masked: the rows of all groups, [4, 256] read as 1024.
  Manifest masked = manifestFrom(asMasked(test::fp8SegmentManifest()));
  Fp8MaskedTensors u;
  u.xScale.strides[2] = 1028;
  ASSERT_TRUE(bind(masked, u.get(), 6, args).ok());
  status = computeTensorMapArgs(masked, masked.params[13], args, a);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(a.rank, 2u);
  EXPECT_EQ(a.globalDim[0], 1024u);
  EXPECT_EQ(a.globalDim[1], 4u);
  EXPECT_EQ(a.globalStrides[0], 1028u * 4u);

  // One k block (k = 64): its stride is never stepped, so it is the rows
  // padded to 16 bytes whatever the tensor says.
  Manifest smallK =
      manifestFrom(test::withFp8Manifest("\"k\": 7168", "\"k\": 64"));
  t = fp8Rows(301, 304);
  t.x.shape[1] = 64;
  t.w.shape[2] = 64;
  t.xScale = makeTensor("x_scale", test::kXScale, GGEMM_DTYPE_F32, {301, 1});
  t.wScale = makeTensor("w_scale", test::kWScale, GGEMM_DTYPE_F32, {8, 32, 1});
  ASSERT_TRUE(bind(smallK, t.get(), 6, args).ok());
  status = computeTensorMapArgs(smallK, smallK.params[13], args, a);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(a.globalDim[0], 301u);
  EXPECT_EQ(a.globalDim[1], 1u);
  EXPECT_EQ(a.globalStrides[0], 304u * 4u);
}

TEST(TensorMap, ExtentOneDimensionsGetValidStrides) {
  Manifest manifest = dynamicSegmentManifest();
  SegmentTensors t;
  // One row of 8 bf16: the row stride (16 bytes) is never stepped.
  t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {1, 8});
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {1, 24, 8});
  t.y = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {1, 24});
  t.indptr = makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {2});
  BoundArgs args;
  Status status = bind(manifest, t.get(), 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  TensorMapArgs b;
  status = computeTensorMapArgs(manifest, manifest.params[1], args, b);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(b.globalStrides[0], 16u);
  EXPECT_EQ(b.globalStrides[1], 24u * 16u); // extent 1: rounded, >= 16
}

TEST(TensorMap, RejectsDimsBeyondTmaLimits) {
  Manifest manifest = dynamicSegmentManifest();
  SegmentTensors t;
  int64_t rows = (int64_t(1) << 32) + 1;
  t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {rows, 64});
  t.y = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {rows, 64});
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 64, 64});
  BoundArgs args;
  Status status = bind(manifest, t.get(), 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  TensorMapArgs a;
  status = computeTensorMapArgs(manifest, manifest.params[0], args, a);
  EXPECT_EQ(status.getCode(), GGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_CONTAINS(status.getMessage(),
                  "parameter 'a_desc' (TMA descriptor of x): dimension 1 "
                  "(innermost first) has extent 4294967297, TMA needs [1, "
                  "2^32]");
}

TEST(Plan, ScalarsAndPointers) {
  Manifest manifest = segmentManifest();
  SegmentTensors t;
  t.y.strides[0] = 4096 + 64;
  LaunchPlan plan;
  Status status = planLaunch(manifest, t.get(), 4, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  ASSERT_EQ(plan.params.size(), 13u);
  EXPECT_EQ(plan.params[2].pointer, test::kY);
  EXPECT_EQ(plan.params[3].pointer, test::kIndptr);
  EXPECT_EQ(plan.params[4].pointer, 0u); // absent optional weight_indices
  EXPECT_EQ(plan.params[5].pointer, 0u);
  EXPECT_EQ(plan.params[6].pointer, 0u);
  EXPECT_EQ(plan.params[7].scalar, 1000);  // num_rows
  EXPECT_EQ(plan.params[8].scalar, 0);     // rows_per_group
  EXPECT_EQ(plan.params[9].scalar, 8);     // num_groups
  EXPECT_EQ(plan.params[10].scalar, 4096); // n
  EXPECT_EQ(plan.params[11].scalar, 7168); // k
  EXPECT_EQ(plan.params[12].scalar, 4160); // ldy
  for (size_t i = 0; i < manifest.params.size(); ++i)
    EXPECT_EQ(paramSize(manifest.params[i]), test::kSegmentParamSizes[i])
        << manifest.params[i].name;
}

TEST(Plan, Fp8ScaleParams) {
  Manifest manifest = manifestFrom(test::fp8SegmentManifest());
  test::Fp8SegmentTensors t;
  LaunchPlan plan;
  Status status = planLaunch(manifest, t.get(), 6, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  ASSERT_EQ(plan.params.size(), 15u);
  EXPECT_EQ(plan.params[13].tensorMap.globalAddress,
            reinterpret_cast<void *>(test::kXScale));
  EXPECT_EQ(plan.params[13].tensorMap.globalDim[0], 1000u);
  EXPECT_EQ(plan.params[13].tensorMap.globalStrides[0], 1000u * 4u);
  EXPECT_EQ(plan.params[14].pointer, test::kWScale);
  EXPECT_EQ(paramSize(manifest.params[13]), 128u);
  EXPECT_EQ(paramSize(manifest.params[14]), 8u);
}

// An e4m3 y's scales are passed by pointer with the strides the kernel
// writes them at: the row (of all groups) and the 128-column block.
TEST(Plan, Fp8OutParams) {
  Manifest manifest = manifestFrom(test::kFp8OutManifest);
  Fp8Out t;
  LaunchPlan plan;
  Status status = planLaunch(manifest, t.get(), 6, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  ASSERT_EQ(plan.params.size(), 17u);
  EXPECT_EQ(plan.params[2].pointer, test::kY);
  EXPECT_EQ(plan.params[5].pointer, test::kExtra); // bias
  EXPECT_EQ(plan.params[12].scalar, 384);          // ldy, in e4m3 elements
  EXPECT_EQ(plan.params[14].pointer, test::kYScale);
  EXPECT_EQ(plan.params[15].scalar, 1);    // y_scale_stride_row
  EXPECT_EQ(plan.params[16].scalar, 1000); // y_scale_stride_col
  for (size_t i = 0; i < manifest.params.size(); ++i)
    EXPECT_EQ(paramSize(manifest.params[i]), test::kFp8OutParamSizes[i])
        << manifest.params[i].name;
  // Row-major scales: the same kernel, other strides.
  t.yScale = makeTensor("y_scale", test::kYScale, GGEMM_DTYPE_F32, {1000, 3});
  status = planLaunch(manifest, t.get(), 6, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(plan.params[15].scalar, 3);
  EXPECT_EQ(plan.params[16].scalar, 1);

  // Masked: rows of all groups, g * Mmax + r, one stride apart.
  Manifest masked = fp8OutMaskedManifest();
  Fp8OutMaskedTensors m;
  status = planLaunch(masked, m.get(), m.count, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  ASSERT_EQ(plan.params.size(), 16u);
  EXPECT_EQ(plan.params[13].pointer, test::kYScale);
  EXPECT_EQ(plan.params[14].scalar, 1);
  EXPECT_EQ(plan.params[15].scalar, 1024);
  m.yScale = makeTensor("y_scale", test::kYScale, GGEMM_DTYPE_F32, {4, 256, 3});
  status = planLaunch(masked, m.get(), m.count, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(plan.params[14].scalar, 3);
  EXPECT_EQ(plan.params[15].scalar, 1);

  // No rows: nothing launched, the empty scales unchecked.
  Fp8Out empty;
  empty.x = makeTensor("x", 0, GGEMM_DTYPE_BF16, {0, 512});
  empty.y = makeTensor("y", 0, GGEMM_DTYPE_F8E4M3, {0, 384});
  empty.yScale =
      test::makeStrided("y_scale", 0, GGEMM_DTYPE_F32, {0, 3}, {1, 0});
  status = planLaunch(manifest, empty.get(), 6, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(plan.args.shape.numTiles, 0);
  EXPECT_TRUE(plan.params.empty());
}

// s8 operands are described to TMA as uint8 (copied, not converted), with
// 1-byte strides; the scales are plain pointers.
TEST(Plan, Int8DescriptorsAndScales) {
  Manifest manifest = manifestFrom(test::s8SegmentManifest());
  S8Segment t;
  LaunchPlan plan;
  Status status = planLaunch(manifest, t.get(), 6, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  ASSERT_EQ(plan.params.size(), 15u);
  const TensorMapArgs &a = plan.params[0].tensorMap;
  EXPECT_EQ(a.dataType, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(a.globalAddress, reinterpret_cast<void *>(test::kX));
  EXPECT_EQ(a.globalDim[0], 7168u);
  EXPECT_EQ(a.globalDim[1], 1000u);
  EXPECT_EQ(a.globalStrides[0], 7168u);
  EXPECT_EQ(a.boxDim[0], 128u);
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  const TensorMapArgs &b = plan.params[1].tensorMap;
  EXPECT_EQ(b.dataType, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(b.globalStrides[0], 7168u);
  EXPECT_EQ(b.globalStrides[1], 4096u * 7168u);
  EXPECT_EQ(plan.params[13].pointer, test::kXScale);
  EXPECT_EQ(plan.params[14].pointer, test::kWScale);
  EXPECT_EQ(paramSize(manifest.params[13]), 8u);
  EXPECT_EQ(paramSize(manifest.params[14]), 8u);
  EXPECT_EQ(plan.params[11].scalar, 7168); // k
}

TEST(Plan, EmptyProblemPlansNothing) {
  Manifest manifest = segmentManifest();
  SegmentTensors t;
  t.x = makeTensor("x", 0, GGEMM_DTYPE_BF16, {0, 7168});
  t.y = makeTensor("y", 0, GGEMM_DTYPE_BF16, {0, 4096});
  LaunchPlan plan;
  Status status = planLaunch(manifest, t.get(), 4, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(plan.args.shape.numTiles, 0);
  EXPECT_TRUE(plan.params.empty());
}

TEST(Plan, I32ScalarOverflow) {
  std::string text =
      withManifest("{\"name\": \"ldy\", \"kind\": \"scalar\", \"dtype\": "
                   "\"i64\", \"value\": \"ldy\"}",
                   "{\"name\": \"ldy\", \"kind\": \"scalar\", \"dtype\": "
                   "\"i32\", \"value\": \"ldy\"}");
  Manifest manifest = manifestFrom(text);
  SegmentTensors t;
  t.y.strides[0] = int64_t(1) << 31;
  LaunchPlan plan;
  Status status = planLaunch(manifest, t.get(), 4, plan);
  EXPECT_EQ(status.getCode(), GGEMM_ERROR_UNSUPPORTED);
  EXPECT_CONTAINS(status.getMessage(), "scalar parameter 'ldy' is 2147483648, "
                                       "which does not fit its dtype i32");
}

//===----------------------------------------------------------------------===//
// segment_matmul_k: K-ragged weight gradients (issue 12)
//===----------------------------------------------------------------------===//

using test::KRaggedTensors;

Manifest kRaggedManifest(bool kn = false) {
  return manifestFrom(test::kRaggedManifest(kn));
}

/// kRaggedManifest(kn) with no static sizes.
Manifest dynamicKRaggedManifest(bool kn = false) {
  return manifestFrom(test::withKRaggedManifest(
      "\"n\": 4096, \"k\": 7168, \"num_groups\": 8, \"num_weights\": 8",
      "\"n\": -1, \"k\": -1, \"num_groups\": -1, \"num_weights\": -1", kn));
}

TEST(KRaggedBind, NkShapes) {
  Manifest manifest = kRaggedManifest();
  KRaggedTensors t;
  BoundArgs args;
  Status status = bind(manifest, t.get(), 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  const ProblemShape &shape = args.shape;
  // dw [G * R, C] = dy^T x per group: R = N, C = K, the kernel's K is T.
  EXPECT_EQ(shape.numRows, 1000);
  EXPECT_EQ(shape.m, 1000);
  EXPECT_EQ(shape.k, 1000);
  EXPECT_EQ(shape.rowsPerGroup, 4096);
  EXPECT_EQ(shape.n, 7168);
  EXPECT_EQ(shape.numGroups, 8);
  EXPECT_EQ(shape.numWeights, 8);
  EXPECT_EQ(shape.lda, 7168);
  EXPECT_EQ(shape.ldy, 7168);
  // 8 * ceil(4096 / 128) * ceil(7168 / 128).
  EXPECT_EQ(shape.numTiles, 8 * 32 * 56);
}

TEST(KRaggedTensorMap, DwDescriptorOfAStagedEpilogue) {
  // dw [8, 4096, 7168] f32 as the kernel's [G * R, C] = [32768, 7168]
  // output; absent where its rows are not 16-byte units, and with T = 0
  // (dw is still written).
  std::string text = test::withKRaggedManifest(
      R"json({"name": "num_weights", "kind": "scalar", "dtype": "i32", "value": "num_weights"})json",
      R"json({"name": "num_weights", "kind": "scalar", "dtype": "i32", "value": "num_weights"},
    {"name": "y_desc", "kind": "tma_descriptor", "tensor": "dw", "dtype": "f32", "rank": 2, "box": [32, 64], "swizzle": "128B", "oob_fill": "zero"})json");
  Manifest manifest = manifestFrom(text);
  const ParamSpec &param = manifest.params.back();
  KRaggedTensors t;
  BoundArgs args;
  ASSERT_TRUE(bind(manifest, t.get(), 4, args).ok());
  TensorMapArgs dw;
  Status status = computeTensorMapArgs(manifest, param, args, dw);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_FALSE(dw.absent);
  EXPECT_EQ(dw.globalAddress, reinterpret_cast<void *>(test::kDw));
  EXPECT_EQ(dw.dataType, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(dw.globalDim[0], 7168u);
  EXPECT_EQ(dw.globalDim[1], 8u * 4096u);
  EXPECT_EQ(dw.globalStrides[0], 7168u * 4u);
  EXPECT_EQ(dw.boxDim[0], 32u);
  EXPECT_EQ(dw.boxDim[1], 64u);

  // No token rows: dw is still described.
  t.dy = makeTensor("dy", test::kDy, GGEMM_DTYPE_BF16, {0, 4096});
  t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {0, 7168});
  ASSERT_TRUE(bind(manifest, t.get(), 4, args).ok());
  status = computeTensorMapArgs(manifest, param, args, dw);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_FALSE(dw.absent);
  EXPECT_EQ(dw.globalDim[1], 8u * 4096u);

  // Rows 7170 f32 apart (28680 bytes) are not 16-byte units.
  KRaggedTensors padded;
  padded.dw = test::makeStrided("dw", test::kDw, GGEMM_DTYPE_F32,
                                {8, 4096, 7168}, {4096 * 7170, 7170, 1});
  ASSERT_TRUE(bind(manifest, padded.get(), 4, args).ok());
  status = computeTensorMapArgs(manifest, param, args, dw);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_TRUE(dw.absent);
}

TEST(KRaggedBind, KnShapes) {
  Manifest manifest = kRaggedManifest(/*kn=*/true);
  KRaggedTensors t(/*kn=*/true);
  t.dw.strides[0] = 7168 * 4100;
  t.dw.strides[1] = 4100; // padded rows of dw
  BoundArgs args;
  Status status = bind(manifest, t.get(), 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  // A = x, B = dy: R = K, C = N.
  EXPECT_EQ(args.shape.rowsPerGroup, 7168);
  EXPECT_EQ(args.shape.n, 4096);
  EXPECT_EQ(args.shape.k, 1000);
  EXPECT_EQ(args.shape.ldy, 4100);
}

TEST(KRaggedBind, MissingTensors) {
  Manifest manifest = kRaggedManifest();
  KRaggedTensors t;
  // dy, x, seg_indptr without dw.
  EXPECT_CONTAINS(bindError(manifest, t.get(), 3),
                  "missing tensor 'dw' (segment_matmul_k needs dy, x, "
                  "seg_indptr, dw)");
  const ggemm_tensor noDy[] = {t.x, t.indptr, t.dw};
  EXPECT_CONTAINS(bindError(manifest, noDy, 3),
                  "missing tensor 'dy' (segment_matmul_k needs dy, x, "
                  "seg_indptr, dw)");
}

TEST(KRaggedBind, TensorsOfOtherOpsAreRejectedByName) {
  Manifest manifest = kRaggedManifest();
  KRaggedTensors t;
  for (const char *name : {"w", "y", "weight_indices", "bias", "row_scale",
                           "w_scale", "masked_m"}) {
    ggemm_tensor extra = makeTensor(name, test::kExtra, GGEMM_DTYPE_F32, {8});
    EXPECT_CONTAINS(bindError(manifest, t.get({extra}), 5),
                    std::string("unknown tensor '") + name +
                        "' (segment_matmul_k takes dy, x, seg_indptr, dw)");
  }
  // Scales are the f8e4m3 form's: a bf16 kernel knows them, and says so.
  for (const char *name : {"dy_scale", "x_scale"}) {
    ggemm_tensor extra =
        test::makeMnMajorScales(name, test::kExtra, 4096, 8, 4096);
    EXPECT_CONTAINS(bindError(manifest, t.get({extra}), 5),
                    std::string("tensor '") + name +
                        "' was given, but the kernel was compiled without it "
                        "(problem.x_scale_block is absent: only f8e4m3 dy "
                        "and x of segment_matmul_k have scales, and its dy "
                        "and x are bf16)");
  }
  // And the other ops do not take dy, dw or dy_scale.
  SegmentTensors segment;
  ggemm_tensor dy = t.dy;
  EXPECT_CONTAINS(bindError(segmentManifest(), segment.get({dy}), 5),
                  "unknown tensor 'dy' (segment_matmul takes x, w, y, "
                  "seg_indptr, weight_indices, bias, row_scale, x_scale, "
                  "w_scale, row_indices, scatter_indices, y_scale)");
  ggemm_tensor dyScale =
      test::makeMnMajorScales("dy_scale", test::kExtra, 1000, 56, 1000);
  EXPECT_CONTAINS(bindError(segmentManifest(), segment.get({dyScale}), 5),
                  "unknown tensor 'dy_scale' (segment_matmul takes x, w, y, "
                  "seg_indptr, weight_indices, bias, row_scale, x_scale, "
                  "w_scale, row_indices, scatter_indices, y_scale)");
}

TEST(KRaggedBind, WrongDtypes) {
  Manifest manifest = kRaggedManifest();
  {
    KRaggedTensors t;
    t.dy.dtype = GGEMM_DTYPE_F16;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'dy': expected dtype bf16, got f16");
  }
  {
    KRaggedTensors t;
    t.x.dtype = GGEMM_DTYPE_F32;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'x': expected dtype bf16, got f32");
  }
  {
    KRaggedTensors t;
    t.dw.dtype = GGEMM_DTYPE_BF16;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'dw': expected dtype f32, got bf16");
  }
  {
    KRaggedTensors t;
    t.indptr.dtype = GGEMM_DTYPE_I64;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'seg_indptr': expected dtype i32, got i64");
  }
}

TEST(KRaggedBind, WrongRanks) {
  Manifest manifest = kRaggedManifest();
  {
    KRaggedTensors t;
    t.dy = makeTensor("dy", test::kDy, GGEMM_DTYPE_BF16, {8, 125, 4096});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'dy': expected rank 2 ([token rows, n]), got rank "
                    "3 with shape [8, 125, 4096]");
  }
  {
    KRaggedTensors t;
    t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {7168000});
    EXPECT_CONTAINS(
        bindError(manifest, t.get(), 4),
        "tensor 'x': expected rank 2 ([token rows, k]), got rank 1");
  }
  {
    KRaggedTensors t;
    t.dw = makeTensor("dw", test::kDw, GGEMM_DTYPE_F32, {8 * 4096, 7168});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'dw': expected rank 3 ([num_groups, n, k] for "
                    "weight_layout \"nk\"), got rank 2 with shape "
                    "[32768, 7168]");
    EXPECT_CONTAINS(bindError(kRaggedManifest(/*kn=*/true), t.get(), 4),
                    "tensor 'dw': expected rank 3 ([num_groups, k, n] for "
                    "weight_layout \"kn\")");
  }
  {
    KRaggedTensors t;
    t.indptr = makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {9, 1});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'seg_indptr': expected rank 1 ([num_groups + 1])");
    t.indptr = makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {0});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'seg_indptr': expected at least 1 element");
  }
}

TEST(KRaggedBind, TokenRowsMustAgree) {
  Manifest manifest = kRaggedManifest();
  KRaggedTensors t;
  t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {999, 7168});
  EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                  "tensors 'dy' and 'x' disagree on token rows: dy dimension "
                  "0 (token rows) is 1000, x dimension 0 (token rows) is 999; "
                  "shapes are [1000, 4096] and [999, 7168]");
}

TEST(KRaggedBind, GroupsMustAgree) {
  Manifest manifest = dynamicKRaggedManifest();
  KRaggedTensors t;
  t.indptr = makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {10});
  EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                  "tensors 'seg_indptr' and 'dw' disagree on num_groups: "
                  "seg_indptr dimension 0 (num_groups + 1) is 10, dw "
                  "dimension 0 (num_groups) is 8; shapes are [10] and "
                  "[8, 4096, 7168]");
}

TEST(KRaggedBind, GradientDimsFollowTheLayout) {
  {
    KRaggedTensors t;
    t.dw = makeTensor("dw", test::kDw, GGEMM_DTYPE_F32, {8, 4096, 7000});
    EXPECT_CONTAINS(bindError(dynamicKRaggedManifest(), t.get(), 4),
                    "tensors 'x' and 'dw' disagree on k: x dimension 1 (k) is "
                    "7168, dw dimension 2 (k) is 7000");
  }
  {
    KRaggedTensors t;
    t.dw = makeTensor("dw", test::kDw, GGEMM_DTYPE_F32, {8, 4000, 7168});
    EXPECT_CONTAINS(bindError(dynamicKRaggedManifest(), t.get(), 4),
                    "tensors 'dy' and 'dw' disagree on n: dy dimension 1 (n) "
                    "is 4096, dw dimension 1 (n) is 4000");
  }
  {
    // An nk gradient given to a kn kernel.
    KRaggedTensors t;
    EXPECT_CONTAINS(bindError(dynamicKRaggedManifest(/*kn=*/true), t.get(), 4),
                    "tensors 'dy' and 'dw' disagree on n: dy dimension 1 (n) "
                    "is 4096, dw dimension 2 (n) is 7168");
  }
}

TEST(KRaggedBind, StaticSizesBlameTheWrongTensor) {
  Manifest manifest = kRaggedManifest();
  {
    KRaggedTensors t;
    t.dy = makeTensor("dy", test::kDy, GGEMM_DTYPE_BF16, {1000, 4000});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'dy': dimension 1 (n) is 4000, expected 4096 (the "
                    "kernel was compiled for n = 4096); shape is [1000, 4000]");
  }
  {
    KRaggedTensors t;
    t.dw = makeTensor("dw", test::kDw, GGEMM_DTYPE_F32, {8, 4096, 7000});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'dw': dimension 2 (k) is 7000, expected 7168 (the "
                    "kernel was compiled for k = 7168)");
  }
  {
    KRaggedTensors t;
    t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {1000, 7000});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'x': dimension 1 (k) is 7000, expected 7168");
  }
  {
    KRaggedTensors t;
    t.indptr = makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {10});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'seg_indptr': dimension 0 (num_groups + 1) is 10, "
                    "expected 9 (the kernel was compiled for num_groups = 8)");
  }
  {
    KRaggedTensors t;
    t.dw = makeTensor("dw", test::kDw, GGEMM_DTYPE_F32, {9, 4096, 7168});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'dw': dimension 0 (num_groups) is 9, expected 8");
  }
}

TEST(KRaggedBind, InputsAreReadByTma) {
  Manifest manifest = kRaggedManifest();
  {
    KRaggedTensors t;
    t.dy.strides[1] = 2;
    t.dy.strides[0] = 8192;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'dy': innermost stride is 2, expected 1");
  }
  {
    KRaggedTensors t;
    t.x.strides[0] = 7000;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'x': row stride 7000 is smaller than the row "
                    "length 7168");
  }
  {
    KRaggedTensors t;
    t.dy.strides[0] = 4100;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'dy': stride of dimension 0 is 4100 elements "
                    "(8200 bytes), expected a multiple of 16 bytes");
  }
  {
    KRaggedTensors t;
    t.x.data = reinterpret_cast<void *>(test::kX + 8);
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'x': data pointer 0x100100008 is not 16-byte "
                    "aligned (TMA needs 16-byte aligned global addresses)");
  }
  {
    KRaggedTensors t;
    t.dy.data = reinterpret_cast<void *>(test::kDy + 2);
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'dy': data pointer 0x100800002 is not 16-byte "
                    "aligned");
  }
  {
    // Padded rows are fine.
    KRaggedTensors t;
    t.dy.strides[0] = 4096 + 64;
    t.x.strides[0] = 7168 + 8;
    BoundArgs args;
    Status status = bind(manifest, t.get(), 4, args);
    ASSERT_TRUE(status.ok()) << status.getMessage();
    EXPECT_EQ(args.shape.lda, 7176);
  }
}

TEST(KRaggedBind, GradientReadsAsOneMatrix) {
  Manifest manifest = kRaggedManifest();
  {
    KRaggedTensors t;
    t.dw.strides[2] = 2;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'dw': innermost stride is 2, expected 1");
  }
  {
    KRaggedTensors t;
    t.dw.strides[1] = 7000;
    t.dw.strides[0] = 4096 * 7000;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'dw': row stride 7000 is smaller than the row "
                    "length 7168");
  }
  {
    KRaggedTensors t;
    t.dw.strides[0] = 4096 * 7168 + 64;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'dw': stride of dimension 0 is 29360192, expected "
                    "29360128 (shape[1] * stride[1]): groups must be packed");
  }
  {
    KRaggedTensors t;
    t.dw.data = reinterpret_cast<void *>(test::kDw + 2);
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'dw': data pointer 0x100900002 is not 4-byte "
                    "aligned (natural alignment of its dtype)");
  }
  {
    KRaggedTensors t;
    t.indptr.strides[0] = 2;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 4),
                    "tensor 'seg_indptr': expected a contiguous tensor");
  }
  {
    // dw is written element by element: any row stride, 4-byte alignment.
    KRaggedTensors t;
    t.dw.strides[1] = 7169;
    t.dw.strides[0] = 4096 * 7169;
    t.dw.data = reinterpret_cast<void *>(test::kDw + 4);
    BoundArgs args;
    Status status = bind(manifest, t.get(), 4, args);
    ASSERT_TRUE(status.ok()) << status.getMessage();
    EXPECT_EQ(args.shape.ldy, 7169);
  }
}

TEST(KRaggedBind, GradientRowsAreBounded) {
  // [G * R, C] must stay a matrix of at most 2^40 rows. G and R are each at
  // most 2^40, so their product (here 2^78) must not be computed in int64.
  const int64_t big = int64_t(1) << 39;
  KRaggedTensors t;
  t.dy = makeTensor("dy", test::kDy, GGEMM_DTYPE_BF16, {1, big});
  t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {1, 1});
  t.indptr =
      makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {big + 1});
  t.dw = makeTensor("dw", test::kDw, GGEMM_DTYPE_F32, {big, big, 1});
  EXPECT_CONTAINS(bindError(dynamicKRaggedManifest(), t.get(), 4),
                  "tensor 'dw': groups * rows = 549755813888 * 549755813888 "
                  "is larger than 2^40");
}

TEST(KRaggedBind, NoGroupsRowsOrColumnsHaveNoTiles) {
  {
    KRaggedTensors t;
    t.indptr = makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {1});
    t.dw = makeTensor("dw", 0, GGEMM_DTYPE_F32, {0, 4096, 7168});
    BoundArgs args;
    Status status = bind(dynamicKRaggedManifest(), t.get(), 4, args);
    ASSERT_TRUE(status.ok()) << status.getMessage();
    EXPECT_EQ(args.shape.numTiles, 0);
  }
  {
    // N = 0: R = 0 for nk, C = 0 for kn.
    for (bool kn : {false, true}) {
      KRaggedTensors t(kn);
      t.dy = makeTensor("dy", 0, GGEMM_DTYPE_BF16, {1000, 0});
      t.dw = makeTensor("dw", 0, GGEMM_DTYPE_F32,
                        {8, kn ? int64_t(7168) : 0, kn ? 0 : int64_t(7168)});
      BoundArgs args;
      Status status = bind(dynamicKRaggedManifest(kn), t.get(), 4, args);
      ASSERT_TRUE(status.ok()) << status.getMessage();
      EXPECT_EQ(args.shape.numTiles, 0) << "kn " << kn;
    }
  }
  {
    // K = 0 has nothing to write and is not the "k = 0" error of the other
    // ops (the kernel's K is the token rows).
    KRaggedTensors t;
    t.x = makeTensor("x", 0, GGEMM_DTYPE_BF16, {1000, 0});
    t.dw = makeTensor("dw", 0, GGEMM_DTYPE_F32, {8, 4096, 0});
    BoundArgs args;
    Status status = bind(dynamicKRaggedManifest(), t.get(), 4, args);
    ASSERT_TRUE(status.ok()) << status.getMessage();
    EXPECT_EQ(args.shape.numTiles, 0);
  }
}

TEST(KRaggedBind, NoTokenRowsStillWritesTheGradients) {
  Manifest manifest = kRaggedManifest();
  KRaggedTensors t;
  t.dy = makeTensor("dy", 0, GGEMM_DTYPE_BF16, {0, 4096});
  t.x = makeTensor("x", 0, GGEMM_DTYPE_BF16, {0, 7168});
  BoundArgs args;
  Status status = bind(manifest, t.get(), 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.numRows, 0);
  EXPECT_EQ(args.shape.k, 0);
  EXPECT_EQ(args.shape.numTiles, 8 * 32 * 56);
}

TEST(KRaggedGrid, TileBound) {
  // G * ceil(R / block_m) * ceil(C / block_n), whatever the token rows.
  EXPECT_EQ(computeTileBound(Op::SegmentMatmulK, 1000, 300, 8, 200, 128, 256),
            8 * 3 * 1);
  EXPECT_EQ(computeTileBound(Op::SegmentMatmulK, 0, 300, 8, 200, 128, 256),
            8 * 3 * 1);
  EXPECT_EQ(computeTileBound(Op::SegmentMatmulK, 1000, 0, 8, 200, 128, 256), 0);
  EXPECT_EQ(computeTileBound(Op::SegmentMatmulK, 1000, 300, 0, 200, 128, 256),
            0);
  EXPECT_EQ(computeTileBound(Op::SegmentMatmulK, 1000, 300, 8, 0, 128, 256), 0);
  // From the tensors: nk tiles N x K, kn K x N.
  for (bool kn : {false, true}) {
    std::string text = test::withKRaggedManifest(
        "\"n\": 4096, \"k\": 7168, \"num_groups\": 8, \"num_weights\": 8",
        "\"n\": -1, \"k\": -1, \"num_groups\": -1, \"num_weights\": -1", kn);
    text = test::replaced(text, "\"block_n\": 128", "\"block_n\": 256");
    text = test::replaced(text, "\"policy\": \"persistent\"",
                          "\"policy\": \"tiles\"");
    Manifest manifest = manifestFrom(text);
    KRaggedTensors t(kn);
    t.dy = makeTensor("dy", test::kDy, GGEMM_DTYPE_BF16, {1000, 296});
    t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {1000, 200});
    t.dw = kn ? makeTensor("dw", test::kDw, GGEMM_DTYPE_F32, {8, 200, 296})
              : makeTensor("dw", test::kDw, GGEMM_DTYPE_F32, {8, 296, 200});
    BoundArgs args;
    Status status = bind(manifest, t.get(), 4, args);
    ASSERT_TRUE(status.ok()) << status.getMessage();
    // nk: R = 296, C = 200; kn: R = 200, C = 296.
    int64_t expected = kn ? 8 * 2 * 2 : 8 * 3 * 1;
    EXPECT_EQ(args.shape.numTiles, expected) << "kn " << kn;
    unsigned grid = 0;
    ASSERT_TRUE(computeGrid(manifest, args.shape.numTiles, 132, grid).ok());
    EXPECT_EQ(grid, static_cast<unsigned>(expected));
  }
}

TEST(KRaggedTensorMap, NkDescriptors) {
  Manifest manifest = kRaggedManifest();
  KRaggedTensors t;
  t.dy.strides[0] = 4096 + 64;
  LaunchPlan plan;
  Status status = planLaunch(manifest, t.get(), 4, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  // a_desc: A = dy, dims [N, T], its padded row stride.
  const TensorMapArgs &a = plan.params[0].tensorMap;
  EXPECT_EQ(a.globalAddress, reinterpret_cast<void *>(test::kDy));
  EXPECT_EQ(a.dataType, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(a.rank, 2u);
  EXPECT_EQ(a.globalDim[0], 4096u);
  EXPECT_EQ(a.globalDim[1], 1000u);
  EXPECT_EQ(a.globalStrides[0], 4160u * 2);
  EXPECT_EQ(a.boxDim[0], 64u);
  EXPECT_EQ(a.boxDim[1], 64u);
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(a.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  // b_desc: B = x, dims [K, T].
  const TensorMapArgs &b = plan.params[1].tensorMap;
  EXPECT_EQ(b.globalAddress, reinterpret_cast<void *>(test::kX));
  EXPECT_EQ(b.globalDim[0], 7168u);
  EXPECT_EQ(b.globalDim[1], 1000u);
  EXPECT_EQ(b.globalStrides[0], 7168u * 2);
}

TEST(KRaggedTensorMap, KnDescriptors) {
  Manifest manifest = kRaggedManifest(/*kn=*/true);
  KRaggedTensors t(/*kn=*/true);
  LaunchPlan plan;
  Status status = planLaunch(manifest, t.get(), 4, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  // a_desc: A = x, dims [K, T]; b_desc: B = dy, dims [N, T].
  const TensorMapArgs &a = plan.params[0].tensorMap;
  EXPECT_EQ(a.globalAddress, reinterpret_cast<void *>(test::kX));
  EXPECT_EQ(a.globalDim[0], 7168u);
  EXPECT_EQ(a.globalDim[1], 1000u);
  EXPECT_EQ(a.globalStrides[0], 7168u * 2);
  const TensorMapArgs &b = plan.params[1].tensorMap;
  EXPECT_EQ(b.globalAddress, reinterpret_cast<void *>(test::kDy));
  EXPECT_EQ(b.globalDim[0], 4096u);
  EXPECT_EQ(b.globalDim[1], 1000u);
  EXPECT_EQ(b.globalStrides[0], 4096u * 2);
}

TEST(KRaggedTensorMap, NoTokenRowsEncodeOneRow) {
  Manifest manifest = kRaggedManifest();
  KRaggedTensors t;
  // dy's pointer is null, x's is aligned: dy borrows dw's address.
  t.dy = makeTensor("dy", 0, GGEMM_DTYPE_BF16, {0, 4096});
  t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {0, 7168});
  LaunchPlan plan;
  Status status = planLaunch(manifest, t.get(), 4, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  ASSERT_EQ(plan.params.size(), 14u);
  const TensorMapArgs &a = plan.params[0].tensorMap;
  EXPECT_EQ(a.globalAddress, reinterpret_cast<void *>(test::kDw));
  EXPECT_EQ(a.globalDim[0], 4096u);
  EXPECT_EQ(a.globalDim[1], 1u);
  EXPECT_EQ(a.globalStrides[0], 4096u * 2);
  const TensorMapArgs &b = plan.params[1].tensorMap;
  EXPECT_EQ(b.globalAddress, reinterpret_cast<void *>(test::kX));
  EXPECT_EQ(b.globalDim[0], 7168u);
  EXPECT_EQ(b.globalDim[1], 1u);
  EXPECT_EQ(b.globalStrides[0], 7168u * 2);
  EXPECT_EQ(plan.params[7].scalar, 0);  // num_rows
  EXPECT_EQ(plan.params[11].scalar, 0); // k

  // A misaligned pointer of an empty tensor (not checked by bind) is not
  // used either; an odd number of columns gets a 16-byte stride.
  t.dy = makeTensor("dy", test::kDy + 8, GGEMM_DTYPE_BF16, {0, 4095});
  t.dw = makeTensor("dw", test::kDw, GGEMM_DTYPE_F32, {8, 4095, 7168});
  status = planLaunch(dynamicKRaggedManifest(), t.get(), 4, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(plan.params[0].tensorMap.globalAddress,
            reinterpret_cast<void *>(test::kDw));
  EXPECT_EQ(plan.params[0].tensorMap.globalStrides[0], 8192u);
}

TEST(KRaggedTensorMap, NoTokenRowsAndNoAlignedAddress) {
  Manifest manifest = kRaggedManifest();
  KRaggedTensors t;
  t.dy = makeTensor("dy", 0, GGEMM_DTYPE_BF16, {0, 4096});
  t.x = makeTensor("x", 0, GGEMM_DTYPE_BF16, {0, 7168});
  t.dw.data = reinterpret_cast<void *>(test::kDw + 4); // f32-aligned only
  LaunchPlan plan;
  Status status = planLaunch(manifest, t.get(), 4, plan);
  EXPECT_EQ(status.getCode(), GGEMM_ERROR_UNSUPPORTED);
  EXPECT_CONTAINS(status.getMessage(),
                  "parameter 'a_desc' (TMA descriptor of dy): dy has no token "
                  "rows (T = 0), so its descriptor is encoded over one token "
                  "row of a 16-byte aligned device address that the kernel "
                  "does not read, but neither its data pointer 0x0 nor dw's "
                  "0x100900004 is 16-byte aligned");
}

TEST(KRaggedPlan, ScalarsAndPointers) {
  for (bool kn : {false, true}) {
    Manifest manifest = kRaggedManifest(kn);
    KRaggedTensors t(kn);
    LaunchPlan plan;
    Status status = planLaunch(manifest, t.get(), 4, plan);
    ASSERT_TRUE(status.ok()) << status.getMessage();
    ASSERT_EQ(plan.params.size(), 14u);
    EXPECT_EQ(plan.params[2].pointer, test::kDw);
    EXPECT_EQ(plan.params[3].pointer, test::kIndptr);
    EXPECT_EQ(plan.params[4].pointer, 0u); // weight_indices, bias, row_scale
    EXPECT_EQ(plan.params[5].pointer, 0u);
    EXPECT_EQ(plan.params[6].pointer, 0u);
    EXPECT_EQ(plan.params[7].scalar, 1000);              // num_rows: T
    EXPECT_EQ(plan.params[8].scalar, kn ? 7168 : 4096);  // rows_per_group
    EXPECT_EQ(plan.params[9].scalar, 8);                 // num_groups
    EXPECT_EQ(plan.params[10].scalar, kn ? 4096 : 7168); // n: C
    EXPECT_EQ(plan.params[11].scalar, 1000);             // k: T
    EXPECT_EQ(plan.params[12].scalar, kn ? 4096 : 7168); // ldy
    EXPECT_EQ(plan.params[13].scalar, 8);                // num_weights
    for (size_t i = 0; i < manifest.params.size(); ++i)
      EXPECT_EQ(paramSize(manifest.params[i]), test::kKRaggedParamSizes[i])
          << manifest.params[i].name;
  }
}

//===----------------------------------------------------------------------===//
// segment_matmul_k of transposed operands, and its FP8 form
//===----------------------------------------------------------------------===//

using test::Fp8KRaggedTensors;

Manifest fp8KRaggedManifest(bool kn = false, bool staged = false) {
  return manifestFrom(test::fp8KRaggedManifest(kn, staged));
}

/// fp8KRaggedManifest(kn) with no static sizes.
Manifest dynamicFp8KRaggedManifest(bool kn = false) {
  return manifestFrom(test::withFp8KRaggedManifest(
      "\"n\": 4096, \"k\": 7168, \"num_groups\": 8, \"num_weights\": 8",
      "\"n\": -1, \"k\": -1, \"num_groups\": -1, \"num_weights\": -1", kn));
}

TEST(Fp8KRaggedBind, TokenRowsAreDimensionOne) {
  for (bool kn : {false, true}) {
    Fp8KRaggedTensors t(kn);
    BoundArgs args;
    Status status = bind(fp8KRaggedManifest(kn), t.get(), 6, args);
    ASSERT_TRUE(status.ok()) << status.getMessage();
    const ProblemShape &shape = args.shape;
    // T from dy [N, T] and x [K, T]; R = N (nk) or K (kn), C the other.
    EXPECT_EQ(shape.numRows, 1008);
    EXPECT_EQ(shape.m, 1008);
    EXPECT_EQ(shape.k, 1008);
    EXPECT_EQ(shape.rowsPerGroup, kn ? 7168 : 4096);
    EXPECT_EQ(shape.n, kn ? 4096 : 7168);
    EXPECT_EQ(shape.numGroups, 8);
    EXPECT_EQ(shape.numWeights, 8);
    EXPECT_EQ(shape.lda, 1008);
    EXPECT_EQ(shape.ldy, kn ? 4096 : 7168);
    // nk: 8 * ceil(4096 / 128) * ceil(7168 / 192); kn: 8 * 56 * 22.
    EXPECT_EQ(shape.numTiles, kn ? 8 * 56 * 22 : 8 * 32 * 38) << "kn " << kn;
  }
}

TEST(Fp8KRaggedTensorMap, OperandAndScaleDescriptors) {
  for (bool kn : {false, true}) {
    Manifest manifest = fp8KRaggedManifest(kn);
    Fp8KRaggedTensors t(kn);
    // Padded rows of tokens (1024 bytes) and of scales (N' = 4100).
    t.dy.strides[0] = 1024;
    t.dyScale.strides[1] = 4100;
    LaunchPlan plan;
    Status status = planLaunch(manifest, t.get(), 6, plan);
    ASSERT_TRUE(status.ok()) << status.getMessage();
    ASSERT_EQ(plan.params.size(), 16u);
    // dy [N, T] and x [K, T]: tokens innermost, 128 of them by block_m
    // (A) or block_n (B) rows.
    const TensorMapArgs &dy = plan.params[kn ? 1 : 0].tensorMap;
    EXPECT_EQ(dy.globalAddress, reinterpret_cast<void *>(test::kDy));
    EXPECT_EQ(dy.dataType, CU_TENSOR_MAP_DATA_TYPE_UINT8);
    EXPECT_EQ(dy.rank, 2u);
    EXPECT_EQ(dy.globalDim[0], 1008u);
    EXPECT_EQ(dy.globalDim[1], 4096u);
    EXPECT_EQ(dy.globalStrides[0], 1024u);
    EXPECT_EQ(dy.boxDim[0], 128u);
    EXPECT_EQ(dy.boxDim[1], kn ? 192u : 128u);
    EXPECT_EQ(dy.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
    EXPECT_EQ(dy.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    const TensorMapArgs &x = plan.params[kn ? 0 : 1].tensorMap;
    EXPECT_EQ(x.globalAddress, reinterpret_cast<void *>(test::kX));
    EXPECT_EQ(x.dataType, CU_TENSOR_MAP_DATA_TYPE_UINT8);
    EXPECT_EQ(x.globalDim[0], 1008u);
    EXPECT_EQ(x.globalDim[1], 7168u);
    EXPECT_EQ(x.globalStrides[0], 1008u);
    EXPECT_EQ(x.boxDim[0], 128u);
    EXPECT_EQ(x.boxDim[1], kn ? 128u : 192u);
    // The scales as the forward ops' x_scale: MN-major [rows, token
    // blocks], the rows innermost, the blocks stride(1) * 4 bytes apart.
    const TensorMapArgs &dyScale = plan.params[kn ? 15 : 14].tensorMap;
    EXPECT_EQ(dyScale.globalAddress, reinterpret_cast<void *>(test::kDyScale));
    EXPECT_EQ(dyScale.dataType, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
    EXPECT_EQ(dyScale.rank, 2u);
    EXPECT_EQ(dyScale.globalDim[0], 4096u);
    EXPECT_EQ(dyScale.globalDim[1], 8u); // ceil(1008 / 128)
    EXPECT_EQ(dyScale.globalStrides[0], 4100u * 4);
    EXPECT_EQ(dyScale.boxDim[0], kn ? 196u : 132u);
    EXPECT_EQ(dyScale.boxDim[1], 1u);
    EXPECT_EQ(dyScale.swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
    EXPECT_EQ(dyScale.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    const TensorMapArgs &xScale = plan.params[kn ? 14 : 15].tensorMap;
    EXPECT_EQ(xScale.globalAddress, reinterpret_cast<void *>(test::kXScale));
    EXPECT_EQ(xScale.globalDim[0], 7168u);
    EXPECT_EQ(xScale.globalDim[1], 8u);
    EXPECT_EQ(xScale.globalStrides[0], 7168u * 4);
    EXPECT_EQ(xScale.boxDim[0], kn ? 132u : 196u);
    EXPECT_EQ(xScale.boxDim[1], 1u);

    EXPECT_EQ(plan.params[2].pointer, test::kDw);
    EXPECT_EQ(plan.params[3].pointer, test::kIndptr);
    EXPECT_EQ(plan.params[7].scalar, 1008);              // num_rows: T
    EXPECT_EQ(plan.params[8].scalar, kn ? 7168 : 4096);  // rows_per_group
    EXPECT_EQ(plan.params[10].scalar, kn ? 4096 : 7168); // n: C
    EXPECT_EQ(plan.params[11].scalar, 1008);             // k: T
    for (size_t i = 0; i < manifest.params.size(); ++i)
      EXPECT_EQ(paramSize(manifest.params[i]), test::kFp8KRaggedParamSizes[i])
          << manifest.params[i].name;
  }
}

TEST(Fp8KRaggedTensorMap, OneTokenBlock) {
  // T = 112: one block of scales, never stepped; its stride is the rows
  // padded to 16 bytes, whatever the caller's.
  Manifest manifest = dynamicFp8KRaggedManifest();
  Fp8KRaggedTensors t;
  t.setTokens(112);
  t.dy = makeTensor("dy", test::kDy, GGEMM_DTYPE_F8E4M3, {4094, 112});
  t.dw = makeTensor("dw", test::kDw, GGEMM_DTYPE_F32, {8, 4094, 7168});
  t.dyScale = test::makeMnMajorScales("dy_scale", test::kDyScale, 4094, 1, 1);
  LaunchPlan plan;
  Status status = planLaunch(manifest, t.get(), 6, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  const TensorMapArgs &dyScale = plan.params[14].tensorMap;
  EXPECT_EQ(dyScale.globalDim[0], 4094u);
  EXPECT_EQ(dyScale.globalDim[1], 1u);
  EXPECT_EQ(dyScale.globalStrides[0], 4096u * 4);
  EXPECT_EQ(plan.params[0].tensorMap.globalDim[0], 112u);
  EXPECT_EQ(plan.params[0].tensorMap.globalStrides[0], 112u);
}

TEST(Fp8KRaggedTensorMap, NoTokenRowsEncodeOneToken) {
  // T = 0: every dw[g] is still written. dy, x and their scales have no
  // data; each descriptor describes one token (one block) at dw's address.
  Manifest manifest = fp8KRaggedManifest();
  Fp8KRaggedTensors t;
  t.setTokens(0);
  LaunchPlan plan;
  Status status = planLaunch(manifest, t.get(), 6, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  ASSERT_EQ(plan.params.size(), 16u);
  EXPECT_EQ(plan.args.shape.numTiles, 8 * 32 * 38);
  for (int i : {0, 1}) {
    const TensorMapArgs &operand = plan.params[i].tensorMap;
    EXPECT_EQ(operand.globalAddress, reinterpret_cast<void *>(test::kDw));
    EXPECT_EQ(operand.globalDim[0], 1u);
    EXPECT_EQ(operand.globalDim[1], i == 0 ? 4096u : 7168u);
    EXPECT_EQ(operand.globalStrides[0], 16u);
  }
  for (int i : {14, 15}) {
    const TensorMapArgs &scale = plan.params[i].tensorMap;
    EXPECT_EQ(scale.globalAddress, reinterpret_cast<void *>(test::kDw));
    EXPECT_EQ(scale.globalDim[0], i == 14 ? 4096u : 7168u);
    EXPECT_EQ(scale.globalDim[1], 1u);
    EXPECT_EQ(scale.globalStrides[0], (i == 14 ? 4096u : 7168u) * 4);
  }
  EXPECT_EQ(plan.params[7].scalar, 0);  // num_rows
  EXPECT_EQ(plan.params[11].scalar, 0); // k

  // Nowhere aligned to describe them.
  t.dw.data = reinterpret_cast<void *>(test::kDw + 4);
  status = planLaunch(manifest, t.get(), 6, plan);
  EXPECT_EQ(status.getCode(), GGEMM_ERROR_UNSUPPORTED);
  EXPECT_CONTAINS(status.getMessage(),
                  "parameter 'a_desc' (TMA descriptor of dy): dy has no token "
                  "rows (T = 0)");
}

TEST(Fp8KRaggedTensorMap, StagedEpilogueDescribesDw) {
  Manifest manifest = fp8KRaggedManifest(/*kn=*/false, /*staged=*/true);
  Fp8KRaggedTensors t;
  LaunchPlan plan;
  Status status = planLaunch(manifest, t.get(), 6, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  ASSERT_EQ(plan.params.size(), 17u);
  const TensorMapArgs &dw = plan.params[16].tensorMap;
  EXPECT_FALSE(dw.absent);
  EXPECT_EQ(dw.globalAddress, reinterpret_cast<void *>(test::kDw));
  EXPECT_EQ(dw.globalDim[0], 7168u);
  EXPECT_EQ(dw.globalDim[1], 8u * 4096u);
  EXPECT_EQ(dw.globalStrides[0], 7168u * 4);
}

TEST(Fp8KRaggedBind, TensorsByName) {
  Manifest manifest = fp8KRaggedManifest();
  Fp8KRaggedTensors t;
  // dy, x, seg_indptr, dw without the scales.
  EXPECT_CONTAINS(bindError(manifest, t.getWithoutScales(), 4),
                  "missing tensor 'dy_scale' (segment_matmul_k needs dy, x, "
                  "seg_indptr, dw, dy_scale, x_scale)");
  const ggemm_tensor noXScale[] = {t.dy, t.x, t.indptr, t.dw, t.dyScale};
  EXPECT_CONTAINS(bindError(manifest, noXScale, 5),
                  "missing tensor 'x_scale' (segment_matmul_k needs dy, x, "
                  "seg_indptr, dw, dy_scale, x_scale)");
  for (const char *name : {"w", "w_scale", "y_scale"}) {
    ggemm_tensor extra = makeTensor(name, test::kExtra, GGEMM_DTYPE_F32, {8});
    EXPECT_CONTAINS(bindError(manifest, t.get({extra}), 7),
                    std::string("unknown tensor '") + name +
                        "' (segment_matmul_k takes dy, x, seg_indptr, dw, "
                        "dy_scale, x_scale)");
  }
  EXPECT_CONTAINS(bindError(manifest, t.get({t.xScale}), 7),
                  "tensor 'x_scale' is given twice");
}

TEST(Fp8KRaggedBind, DtypesAndRanks) {
  Manifest manifest = fp8KRaggedManifest();
  {
    Fp8KRaggedTensors t(/*kn=*/false, GGEMM_DTYPE_BF16);
    EXPECT_CONTAINS(bindError(manifest, t.get(), 6),
                    "tensor 'dy': expected dtype f8e4m3, got bf16");
  }
  {
    Fp8KRaggedTensors t;
    t.xScale.dtype = GGEMM_DTYPE_BF16;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 6),
                    "tensor 'x_scale': expected dtype f32, got bf16");
  }
  {
    Fp8KRaggedTensors t;
    t.dyScale =
        makeTensor("dy_scale", test::kDyScale, GGEMM_DTYPE_F32, {4096 * 8});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 6),
                    "tensor 'dy_scale': expected rank 2 ([n, ceil(token rows "
                    "/ 128)]), got rank 1 with shape [32768]");
  }
  {
    Fp8KRaggedTensors t;
    t.x = makeTensor("x", test::kX, GGEMM_DTYPE_F8E4M3, {1, 7168, 1008});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 6),
                    "tensor 'x': expected rank 2 ([k, token rows]: "
                    "transposed), got rank 3");
  }
}

TEST(Fp8KRaggedBind, OperandsAreTransposed) {
  Manifest manifest = fp8KRaggedManifest();
  {
    // T from dimension 1 of both.
    Fp8KRaggedTensors t;
    t.x = makeTensor("x", test::kX, GGEMM_DTYPE_F8E4M3, {7168, 992});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 6),
                    "tensors 'dy' and 'x' disagree on token rows: dy "
                    "dimension 1 (token rows) is 1008, x dimension 1 (token "
                    "rows) is 992; shapes are [4096, 1008] and [7168, 992]");
  }
  {
    // [T, N] and [T, K], as the bf16 kernels take them.
    Fp8KRaggedTensors t;
    t.dy = makeTensor("dy", test::kDy, GGEMM_DTYPE_F8E4M3, {1008, 4096});
    t.x = makeTensor("x", test::kX, GGEMM_DTYPE_F8E4M3, {1008, 7168});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 6),
                    "tensors 'dy' and 'x' disagree on token rows: dy "
                    "dimension 1 (token rows) is 4096, x dimension 1 (token "
                    "rows) is 7168");
  }
  {
    Fp8KRaggedTensors t;
    t.dy = makeTensor("dy", test::kDy, GGEMM_DTYPE_F8E4M3, {4000, 1008});
    EXPECT_CONTAINS(bindError(manifest, t.get(), 6),
                    "tensor 'dy': dimension 0 (n) is 4000, expected 4096 (the "
                    "kernel was compiled for n = 4096); shape is "
                    "[4000, 1008]");
  }
}

TEST(Fp8KRaggedBind, TokenRowsAre16ByteUnits) {
  Manifest manifest = fp8KRaggedManifest();
  {
    // T = 1000 contiguous f8e4m3 tokens: rows 1000 bytes apart.
    Fp8KRaggedTensors t;
    t.setTokens(1000);
    EXPECT_CONTAINS(
        bindError(manifest, t.get(), 6),
        "tensor 'dy': row stride is 1000 elements (1000 bytes), expected a "
        "multiple of 16 bytes: TMA reads the transposed dy [n, token rows] by "
        "rows of tokens, so the token rows (1000) must be padded to a "
        "multiple of 16 in memory (allocate [4096, 1008] and pass its "
        "[:, :1000] view); shape is [4096, 1000], strides [1000, 1]");
    t.dy.strides[0] = 1008;
    EXPECT_CONTAINS(
        bindError(manifest, t.get(), 6),
        "tensor 'x': row stride is 1000 elements (1000 bytes), expected a "
        "multiple of 16 bytes: TMA reads the transposed x [k, token rows]");
    // The padded views pass, T staying 1000.
    t.x.strides[0] = 1008;
    BoundArgs args;
    Status status = bind(manifest, t.get(), 6, args);
    ASSERT_TRUE(status.ok()) << status.getMessage();
    EXPECT_EQ(args.shape.numRows, 1000);
    EXPECT_EQ(args.shape.lda, 1008);
  }
  {
    // bf16 tokens: 8 of them make 16 bytes.
    Manifest bf16 = manifestFrom(test::transposedKRaggedManifest());
    Fp8KRaggedTensors t(/*kn=*/false, GGEMM_DTYPE_BF16);
    t.setTokens(1004);
    EXPECT_CONTAINS(bindError(bf16, t.getWithoutScales(), 4),
                    "tensor 'dy': row stride is 1004 elements (2008 bytes), "
                    "expected a multiple of 16 bytes: TMA reads the "
                    "transposed dy [n, token rows] by rows of tokens, so the "
                    "token rows (1004) must be padded to a multiple of 8 in "
                    "memory (allocate [4096, 1008] and pass its [:, :1004] "
                    "view)");
  }
  {
    Fp8KRaggedTensors t;
    t.dy.strides[0] = 1000;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 6),
                    "tensor 'dy': row stride 1000 is smaller than the row "
                    "length 1008");
  }
  {
    Fp8KRaggedTensors t;
    t.x.data = reinterpret_cast<void *>(test::kX + 8);
    EXPECT_CONTAINS(bindError(manifest, t.get(), 6),
                    "tensor 'x': data pointer 0x100100008 is not 16-byte "
                    "aligned (TMA needs 16-byte aligned global addresses)");
  }
}

TEST(Fp8KRaggedBind, ScaleShapes) {
  {
    Fp8KRaggedTensors t;
    t.dyScale =
        test::makeMnMajorScales("dy_scale", test::kDyScale, 4096, 7, 4096);
    EXPECT_CONTAINS(bindError(fp8KRaggedManifest(), t.get(), 6),
                    "tensor 'dy_scale': dimension 1 (token blocks) is 7, "
                    "expected 8 (ceil(token rows / 128) with 1008 token "
                    "rows); shape is [4096, 7]");
  }
  {
    Fp8KRaggedTensors t;
    t.setTokens(1024);
    t.xScale = test::makeMnMajorScales("x_scale", test::kXScale, 7168, 9, 7168);
    EXPECT_CONTAINS(bindError(fp8KRaggedManifest(), t.get(), 6),
                    "tensor 'x_scale': dimension 1 (token blocks) is 9, "
                    "expected 8 (ceil(token rows / 128) with 1024 token rows)");
  }
  {
    Fp8KRaggedTensors t;
    t.dyScale =
        test::makeMnMajorScales("dy_scale", test::kDyScale, 4000, 8, 4000);
    EXPECT_CONTAINS(bindError(fp8KRaggedManifest(), t.get(), 6),
                    "tensor 'dy_scale': dimension 0 (n) is 4000, expected "
                    "4096 (the kernel was compiled for n = 4096)");
  }
  {
    // The rows of x_scale are x's: K for nk and kn alike.
    Fp8KRaggedTensors t(/*kn=*/true);
    t.xScale = test::makeMnMajorScales("x_scale", test::kXScale, 7000, 8, 7000);
    EXPECT_CONTAINS(
        bindError(dynamicFp8KRaggedManifest(/*kn=*/true), t.get(), 6),
        "tensors 'x' and 'x_scale' disagree on k: x dimension 0 "
        "(k) is 7168, x_scale dimension 0 (k) is 7000; shapes are "
        "[7168, 1008] and [7000, 8]");
  }
}

TEST(Fp8KRaggedBind, ScalesAreMnMajor) {
  Manifest manifest = fp8KRaggedManifest();
  {
    // Row-major [K, 8].
    Fp8KRaggedTensors t;
    t.xScale = makeTensor("x_scale", test::kXScale, GGEMM_DTYPE_F32, {7168, 8});
    EXPECT_CONTAINS(
        bindError(manifest, t.get(), 6),
        "tensor 'x_scale': the kernel wants MN-major scales (stride 1 along "
        "the rows, so that TMA reads the scales of one token block as a "
        "column), got strides [8, 1] for shape [7168, 8]; allocate them as "
        "torch.empty(8, 7168).t() (strides [1, 7168]), or convert row-major "
        "scales s with s.t().contiguous().t()");
  }
  {
    // N' = 4098: token blocks 16392 bytes apart.
    Fp8KRaggedTensors t;
    t.dyScale.strides[1] = 4098;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 6),
                    "tensor 'dy_scale': stride of dimension 1 (token blocks) "
                    "is 4098 elements (16392 bytes), expected a multiple of 16 "
                    "bytes for TMA (pad the rows)");
  }
  {
    Fp8KRaggedTensors t;
    t.dyScale.strides[1] = 4000;
    EXPECT_CONTAINS(bindError(manifest, t.get(), 6),
                    "tensor 'dy_scale': stride of dimension 1 (token blocks) "
                    "is 4000, expected at least the 4096 rows (the columns of "
                    "scales overlap)");
  }
  {
    Fp8KRaggedTensors t;
    t.xScale.data = reinterpret_cast<void *>(test::kXScale + 4);
    EXPECT_CONTAINS(bindError(manifest, t.get(), 6),
                    "tensor 'x_scale': data pointer 0x100600004 is not "
                    "16-byte aligned (TMA needs 16-byte aligned global "
                    "addresses)");
  }
}

TEST(TransposedKRagged, Bf16OperandsWithoutScales) {
  for (bool kn : {false, true}) {
    Manifest manifest = manifestFrom(test::transposedKRaggedManifest(kn));
    Fp8KRaggedTensors t(kn, GGEMM_DTYPE_BF16);
    LaunchPlan plan;
    Status status = planLaunch(manifest, t.getWithoutScales(), 4, plan);
    ASSERT_TRUE(status.ok()) << status.getMessage();
    ASSERT_EQ(plan.params.size(), 14u);
    EXPECT_EQ(plan.args.shape.numRows, 1008);
    EXPECT_EQ(plan.args.shape.rowsPerGroup, kn ? 7168 : 4096);
    const TensorMapArgs &dy = plan.params[kn ? 1 : 0].tensorMap;
    EXPECT_EQ(dy.dataType, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
    EXPECT_EQ(dy.globalDim[0], 1008u);
    EXPECT_EQ(dy.globalDim[1], 4096u);
    EXPECT_EQ(dy.globalStrides[0], 1008u * 2);
    EXPECT_EQ(dy.boxDim[0], 64u);
    EXPECT_EQ(dy.boxDim[1], 128u);
    const TensorMapArgs &x = plan.params[kn ? 0 : 1].tensorMap;
    EXPECT_EQ(x.globalDim[0], 1008u);
    EXPECT_EQ(x.globalDim[1], 7168u);

    // Scales belong to the f8e4m3 form.
    EXPECT_CONTAINS(bindError(manifest, t.get(), 6),
                    "tensor 'dy_scale' was given, but the kernel was compiled "
                    "without it (problem.x_scale_block is absent: only "
                    "f8e4m3 dy and x of segment_matmul_k have scales, and its "
                    "dy and x are bf16)");
  }
}

//===----------------------------------------------------------------------===//
// segment_matmul's gather-A, scatter and SwiGLU (MoE layers)
//===----------------------------------------------------------------------===//

using test::MoeFeatures;
using test::MoeTensors;

const MoeFeatures kGather = {/*gather=*/true};
const MoeFeatures kScatter = {/*gather=*/false, /*scatter=*/true};
const MoeFeatures kGatherScatter = {/*gather=*/true, /*scatter=*/true};
const MoeFeatures kSwiglu = {/*gather=*/false, /*scatter=*/false,
                             /*atomic=*/false, /*swiglu=*/true};
const MoeFeatures kAllFeatures = {/*gather=*/true, /*scatter=*/true,
                                  /*atomic=*/true, /*swiglu=*/true};

std::string moeText(const MoeFeatures &features) {
  return test::moeSegmentManifest(features);
}

Manifest moeManifest(const MoeFeatures &features) {
  return manifestFrom(moeText(features));
}

/// `text` with no static sizes.
std::string dynamicSizes(const std::string &text) {
  return test::replaced(
      text, "\"n\": 4096, \"k\": 7168, \"num_groups\": 8, \"num_weights\": 8",
      "\"n\": -1, \"k\": -1, \"num_groups\": -1, \"num_weights\": -1");
}

Status bindMoe(const Manifest &manifest, MoeTensors &tensors, BoundArgs &args) {
  const ggemm_tensor *list = tensors.get();
  return bind(manifest, list, tensors.count, args);
}

std::string moeBindError(const Manifest &manifest, MoeTensors &tensors) {
  const ggemm_tensor *list = tensors.get();
  return bindError(manifest, list, tensors.count);
}

TEST(MoeBind, GatheredXHasRowsOfItsOwn) {
  Manifest manifest = moeManifest(kGather);
  // T = 300 rows of x gathered into M = 1000 segment rows.
  MoeTensors t(kGather);
  BoundArgs args;
  Status status = bindMoe(manifest, t, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  const ProblemShape &shape = args.shape;
  EXPECT_EQ(shape.numRows, 1000);
  EXPECT_EQ(shape.m, 1000);
  EXPECT_EQ(shape.xRows, 300);
  EXPECT_EQ(shape.yRows, 1000);
  EXPECT_EQ(shape.lda, 7168);
  EXPECT_EQ(shape.ldy, 4096);
  // The tile bound counts segment rows: 32 * (ceil(1000 / 128) + 8).
  EXPECT_EQ(shape.numTiles, 512);

  // More rows in x than segment rows, and a single row: same tiles.
  for (int64_t rows : {5000, 1}) {
    t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {rows, 7168});
    status = bindMoe(manifest, t, args);
    ASSERT_TRUE(status.ok()) << status.getMessage();
    EXPECT_EQ(args.shape.xRows, rows);
    EXPECT_EQ(args.shape.numRows, 1000);
    EXPECT_EQ(args.shape.numTiles, 512);
  }
  // Without gather, x's rows are the segment rows again.
  t.x = makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {300, 7168});
  SegmentTensors plain;
  plain.x = t.x;
  EXPECT_CONTAINS(bindError(segmentManifest(), plain.get(), 4),
                  "tensors 'x' and 'y' disagree on m: x dimension 0 (m) is "
                  "300, y dimension 0 (m) is 1000");
}

TEST(MoeBind, RowIndicesCarryTheSegmentRows) {
  Manifest manifest = moeManifest(kGather);
  MoeTensors t(kGather);
  t.rowIndices.shape[0] = 999;
  EXPECT_CONTAINS(moeBindError(manifest, t),
                  "tensors 'row_indices' and 'y' disagree on m: row_indices "
                  "dimension 0 (m) is 999, y dimension 0 (m) is 1000; shapes "
                  "are [999] and [1000, 4096]");
  // A static m is the segment rows: row_indices is checked, x is not.
  Manifest staticM = manifestFrom(
      test::replaced(moeText(kGather), "\"m\": -1", "\"m\": 1000"));
  EXPECT_CONTAINS(moeBindError(staticM, t),
                  "tensor 'row_indices': dimension 0 (m) is 999, expected "
                  "1000 (the kernel was compiled for m = 1000); shape is "
                  "[999]");
  MoeTensors u(kGather);
  BoundArgs args;
  Status status = bindMoe(staticM, u, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.xRows, 300);

  // row_scale scales the segment rows: [M], not [T].
  Manifest rowScaled = manifestFrom(test::replaced(
      moeText(kGather), "\"has_row_scale\": false", "\"has_row_scale\": true"));
  ggemm_tensor scale =
      makeTensor("row_scale", test::kExtra, GGEMM_DTYPE_F32, {1000});
  const ggemm_tensor *list = u.get({scale});
  status = bind(rowScaled, list, u.count, args);
  EXPECT_TRUE(status.ok()) << status.getMessage();
  scale.shape[0] = 300;
  list = u.get({scale});
  EXPECT_CONTAINS(bindError(rowScaled, list, u.count),
                  "tensors 'row_indices' and 'row_scale' disagree on m: "
                  "row_indices dimension 0 (m) is 1000, row_scale dimension "
                  "0 (m) is 300");
}

TEST(MoeBind, IndicesAreContiguousI32Vectors) {
  Manifest manifest = moeManifest(kGatherScatter);
  struct Case {
    std::function<void(MoeTensors &)> change;
    const char *error;
  };
  const Case cases[] = {
      {[](MoeTensors &t) { t.rowIndices.dtype = GGEMM_DTYPE_I64; },
       "tensor 'row_indices': expected dtype i32, got i64"},
      {[](MoeTensors &t) { t.scatterIndices.dtype = GGEMM_DTYPE_I64; },
       "tensor 'scatter_indices': expected dtype i32, got i64"},
      {[](MoeTensors &t) {
         t.rowIndices = makeTensor("row_indices", test::kRowIndices,
                                   GGEMM_DTYPE_I32, {1000, 1});
       },
       "tensor 'row_indices': expected rank 1 ([m]: the x row of each "
       "segment row), got rank 2 with shape [1000, 1]"},
      {[](MoeTensors &t) {
         t.scatterIndices =
             test::makeStrided("scatter_indices", test::kScatterIndices,
                               GGEMM_DTYPE_I32, {1000}, {2});
       },
       "tensor 'scatter_indices': expected a contiguous tensor, got strides "
       "[2] for shape [1000]"},
      {[](MoeTensors &t) {
         t.rowIndices.data = reinterpret_cast<void *>(test::kRowIndices + 2);
       },
       "tensor 'row_indices': data pointer 0x100a00002 is not 4-byte aligned "
       "(natural alignment of its dtype)"},
      {[](MoeTensors &t) { t.scatterIndices.data = nullptr; },
       "tensor 'scatter_indices': data pointer is null"},
  };
  for (const Case &bad : cases) {
    MoeTensors t(kGatherScatter);
    bad.change(t);
    EXPECT_CONTAINS(moeBindError(manifest, t), bad.error);
  }
  // index_dtype is seg_indptr's: the row indices stay i32.
  Manifest wideIndptr = manifestFrom(
      test::replaced(moeText(kGatherScatter), "\"index_dtype\": \"i32\"",
                     "\"index_dtype\": \"i64\""));
  MoeTensors t(kGatherScatter);
  t.indptr.dtype = GGEMM_DTYPE_I64;
  BoundArgs args;
  Status status = bindMoe(wideIndptr, t, args);
  EXPECT_TRUE(status.ok()) << status.getMessage();
  t.rowIndices.dtype = GGEMM_DTYPE_I64;
  EXPECT_CONTAINS(moeBindError(wideIndptr, t),
                  "tensor 'row_indices': expected dtype i32, got i64");
}

TEST(MoeBind, IndicesFollowTheProblem) {
  SegmentTensors plain;
  MoeTensors t(kGatherScatter);
  EXPECT_CONTAINS(bindError(segmentManifest(), plain.get({t.rowIndices}), 5),
                  "tensor 'row_indices' was given, but the kernel was "
                  "compiled without it (problem.has_row_indices is false)");
  EXPECT_CONTAINS(
      bindError(segmentManifest(), plain.get({t.scatterIndices}), 5),
      "tensor 'scatter_indices' was given, but the kernel was compiled "
      "without it (problem.has_scatter_indices is false)");
  EXPECT_CONTAINS(bindError(moeManifest(kGather), plain.get(), 4),
                  "missing tensor 'row_indices' (the kernel was compiled with "
                  "has_row_indices)");
  EXPECT_CONTAINS(
      bindError(moeManifest(kScatter), plain.get(), 4),
      "missing tensor 'scatter_indices' (the kernel was compiled with "
      "has_scatter_indices)");
  // Only segment_matmul takes them.
  ggemm_tensor masked[] = {
      makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {4, 256, 512}),
      makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {4, 1024, 512}),
      makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {4, 256, 1024}),
      makeTensor("masked_m", test::kIndptr, GGEMM_DTYPE_I32, {4}),
      t.rowIndices,
  };
  EXPECT_CONTAINS(bindError(maskedManifest(), masked, 5),
                  "unknown tensor 'row_indices' (masked_matmul takes x, w, "
                  "y, masked_m, weight_indices, bias, row_scale, x_scale, "
                  "w_scale, y_scale)");
  KRaggedTensors grad;
  EXPECT_CONTAINS(
      bindError(kRaggedManifest(), grad.get({t.scatterIndices}), 5),
      "unknown tensor 'scatter_indices' (segment_matmul_k takes dy, x, "
      "seg_indptr, dw)");
}

TEST(MoeBind, ScatteredYHasRowsOfItsOwn) {
  Manifest manifest = moeManifest(kScatter);
  // M = 1000 result rows scattered into Y = 5000 rows of y.
  MoeTensors t(kScatter);
  BoundArgs args;
  Status status = bindMoe(manifest, t, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.numRows, 1000);
  EXPECT_EQ(args.shape.xRows, 1000);
  EXPECT_EQ(args.shape.yRows, 5000);
  EXPECT_EQ(args.shape.ldy, 4096);
  EXPECT_EQ(args.shape.numTiles, 512);
  // Fewer rows than results (the kernel drops rows scattered outside y).
  t.y = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {10, 4096});
  status = bindMoe(manifest, t, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.yRows, 10);
  EXPECT_EQ(args.shape.numTiles, 512);

  MoeTensors bad(kScatter);
  bad.scatterIndices.shape[0] = 999;
  EXPECT_CONTAINS(moeBindError(manifest, bad),
                  "tensors 'x' and 'scatter_indices' disagree on m: x "
                  "dimension 0 (m) is 1000, scatter_indices dimension 0 (m) "
                  "is 999");
  bad = MoeTensors(kScatter);
  bad.y.shape[1] = 4000;
  EXPECT_CONTAINS(moeBindError(manifest, bad),
                  "tensor 'y': dimension 1 (n) is 4000, expected 4096");
  bad = MoeTensors(kScatter);
  bad.y = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {8, 625, 4096});
  EXPECT_CONTAINS(moeBindError(manifest, bad),
                  "tensor 'y': expected rank 2 ([y rows, n]: rows scattered "
                  "by scatter_indices), got rank 3");
}

TEST(MoeBind, GatherAndScatter) {
  Manifest manifest = moeManifest(kGatherScatter);
  MoeTensors t(kGatherScatter);
  t.y = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {77, 4096});
  BoundArgs args;
  Status status = bindMoe(manifest, t, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.numRows, 1000);
  EXPECT_EQ(args.shape.xRows, 300);
  EXPECT_EQ(args.shape.yRows, 77);
  EXPECT_EQ(args.shape.numTiles, 512);
  t.scatterIndices.shape[0] = 999;
  EXPECT_CONTAINS(moeBindError(manifest, t),
                  "tensors 'row_indices' and 'scatter_indices' disagree on m: "
                  "row_indices dimension 0 (m) is 1000, scatter_indices "
                  "dimension 0 (m) is 999");
}

TEST(MoeBind, GatheringFromAnEmptyXIsAnError) {
  Manifest manifest = moeManifest(kGather);
  MoeTensors t(kGather);
  t.x = makeTensor("x", 0, GGEMM_DTYPE_BF16, {0, 7168});
  EXPECT_CONTAINS(moeBindError(manifest, t),
                  "tensor 'x': dimension 0 (x rows) is 0, expected at least "
                  "1: row_indices gathers 1000 rows from x; shape is [0, "
                  "7168]");
  // Nothing to gather: no tiles, no error.
  t.rowIndices = makeTensor("row_indices", 0, GGEMM_DTYPE_I32, {0});
  t.y = makeTensor("y", 0, GGEMM_DTYPE_BF16, {0, 4096});
  BoundArgs args;
  Status status = bindMoe(manifest, t, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.numTiles, 0);
}

TEST(MoeBind, ScatteringIntoAnEmptyYLaunchesNothing) {
  // Every row would be skipped: the kernel has nothing to do.
  Manifest manifest = moeManifest(kAllFeatures);
  MoeTensors t(kAllFeatures);
  t.y = makeTensor("y", 0, GGEMM_DTYPE_BF16, {0, 4096});
  LaunchPlan plan;
  const ggemm_tensor *list = t.get();
  Status status = planLaunch(manifest, list, t.count, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(plan.args.shape.numRows, 1000);
  EXPECT_EQ(plan.args.shape.numTiles, 0);
  EXPECT_TRUE(plan.params.empty());
}

// An interleaved weight binds like a side-by-side one (its shape is the
// same); N must be whole blocks of gate and up rows.
TEST(MoeBind, InterleavedSwigluNIsWholeBlocks) {
  MoeFeatures features = kSwiglu;
  features.interleaved = true;
  MoeTensors t(features);
  BoundArgs args;
  Status status = bindMoe(moeManifest(features), t, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.n, 4096);
  EXPECT_EQ(args.shape.numTiles, 1024);
  Manifest anyN = manifestFrom(dynamicSizes(moeText(features)));
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 8000, 7168});
  t.y = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {1000, 4000});
  EXPECT_CONTAINS(moeBindError(anyN, t),
                  "tensor 'w': n = 4000 is not a multiple of "
                  "problem.gate_up_block (64): w's 2 * n rows must be whole "
                  "blocks of gate and up rows");
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 8064, 7168});
  t.y = makeTensor("y", test::kY, GGEMM_DTYPE_BF16, {1000, 4032});
  status = bindMoe(anyN, t, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.n, 4032);
}

TEST(MoeBind, SwigluWeightsHoldTwiceN) {
  Manifest manifest = moeManifest(kSwiglu);
  MoeTensors t(kSwiglu);
  BoundArgs args;
  Status status = bindMoe(manifest, t, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.n, 4096);
  // The tiles run over w's 2N = 8192 rows (block_n of them per tile): twice
  // the bound of 4096 plain output columns.
  EXPECT_EQ(args.shape.numTiles, 1024);

  // A weight of N rows, as without swiglu.
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 4096, 7168});
  EXPECT_CONTAINS(moeBindError(manifest, t),
                  "tensor 'w': dimension 1 (2 * n: swiglu's gate and up "
                  "halves) is 4096, expected 8192 (the kernel was compiled "
                  "for n = 4096); shape is [8, 4096, 7168]");
  Manifest anyN = manifestFrom(dynamicSizes(moeText(kSwiglu)));
  EXPECT_CONTAINS(moeBindError(anyN, t),
                  "tensors 'y' and 'w' disagree on n: y dimension 1 (n) is "
                  "4096, w dimension 1 (2 * n: swiglu's gate and up halves) "
                  "is 4096, expected 8192; shapes are [1000, 4096] and [8, "
                  "4096, 7168]");
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 8192, 7168});
  status = bindMoe(anyN, t, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.n, 4096);
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 8192});
  EXPECT_CONTAINS(moeBindError(anyN, t),
                  "tensor 'w': expected rank 3 ([num_weights, 2 * n, k] for "
                  "weight_layout \"nk\" and swiglu), got rank 2");

  // kn: [Gw, K, 2N].
  Manifest kn =
      manifestFrom(test::replaced(moeText(kSwiglu), "\"weight_layout\": \"nk\"",
                                  "\"weight_layout\": \"kn\""));
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 7168, 8192});
  status = bindMoe(kn, t, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.n, 4096);
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 7168, 4096});
  EXPECT_CONTAINS(moeBindError(kn, t),
                  "tensor 'w': dimension 2 (2 * n: swiglu's gate and up "
                  "halves) is 4096, expected 8192");

  // The bias follows the weight's rows.
  Manifest biased = manifestFrom(test::replaced(
      moeText(kSwiglu), "\"has_bias\": false", "\"has_bias\": true"));
  MoeTensors u(kSwiglu);
  ggemm_tensor bias =
      makeTensor("bias", test::kExtra, GGEMM_DTYPE_F32, {8, 8192});
  const ggemm_tensor *list = u.get({bias});
  status = bind(biased, list, u.count, args);
  EXPECT_TRUE(status.ok()) << status.getMessage();
  bias.shape[1] = 4096;
  list = u.get({bias});
  EXPECT_CONTAINS(bindError(biased, list, u.count),
                  "tensor 'bias': dimension 1 (2 * n: swiglu's gate and up "
                  "halves) is 4096, expected 8192");
}

/// fp8SegmentManifest() with swiglu and, if `gather`, row_indices.
std::string fp8MoeText(bool gather, bool swiglu) {
  std::string text = test::fp8SegmentManifest();
  if (swiglu)
    text = test::replaced(text, "\"accumulate\": false,",
                          "\"accumulate\": false, \"activation\": \"swiglu\",");
  if (gather) {
    text = test::replaced(text, "\"has_row_scale\": false",
                          "\"has_row_scale\": false, \"has_row_indices\": "
                          "true");
    text = test::replaced(text, test::kWScalePointer,
                          std::string(test::kWScalePointer) + ", " +
                              test::kRowIndicesPointer);
  }
  return text;
}

TEST(MoeBind, SwigluWeightScalesFollowTheWeightRows) {
  Manifest manifest = manifestFrom(fp8MoeText(false, true));
  // 128x128 blocks of [2N, K]: ceil(8192 / 128) = 64.
  auto swigluWeights = [](Fp8Segment &t) {
    t.w.shape[1] = 8192;
    t.wScale =
        makeTensor("w_scale", test::kWScale, GGEMM_DTYPE_F32, {8, 64, 56});
  };
  expectBinds<Fp8Segment>(manifest, swigluWeights);
  expectBindErrors<Fp8Segment>(
      manifest, {{[&](auto &t) {
                    swigluWeights(t);
                    t.wScale.shape[1] = 32;
                  },
                  "tensor 'w_scale': dimension 1 is 32, expected 64 (ceil(2 * "
                  "n / 128)); shape is [8, 32, 56]"}});
  Manifest perRow = manifestFrom(
      withScaleBlocks(fp8MoeText(false, true), "per_row", "per_row"));
  auto perRowScales = [](Fp8Segment &t) {
    t.w.shape[1] = 8192;
    t.xScale = makeTensor("x_scale", test::kXScale, GGEMM_DTYPE_F32, {1000});
    t.wScale = makeTensor("w_scale", test::kWScale, GGEMM_DTYPE_F32, {8, 8192});
  };
  expectBinds<Fp8Segment>(perRow, perRowScales);
  expectBindErrors<Fp8Segment>(
      perRow, {{[&](auto &t) {
                  perRowScales(t);
                  t.wScale.shape[1] = 4096;
                },
                "tensor 'w_scale': dimension 1 (2 * n: swiglu's gate and up "
                "halves) is 4096, expected 8192"}});
}

TEST(MoeBind, GatheredXScalesFollowX) {
  Manifest manifest = manifestFrom(fp8MoeText(true, false));
  // x and its 1x128 scales have T = 300 rows; the segments have M = 1000.
  test::Fp8SegmentTensors t = fp8Rows(300, 304);
  t.y.shape[0] = 1000;
  MoeTensors indices(kGather);
  const ggemm_tensor *list = t.get({indices.rowIndices});
  BoundArgs args;
  Status status = bind(manifest, list, t.count, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.numRows, 1000);
  EXPECT_EQ(args.shape.xRows, 300);
  TensorMapArgs scales;
  ASSERT_EQ(manifest.params[13].tensor, TensorRole::XScale);
  status = computeTensorMapArgs(manifest, manifest.params[13], args, scales);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(scales.globalDim[0], 300u);
  EXPECT_EQ(scales.globalDim[1], 56u);
  EXPECT_EQ(scales.globalStrides[0], 304u * 4u);

  // Scales of the segment rows instead of x's rows.
  t = fp8Rows(300, 1000);
  t.y.shape[0] = 1000;
  t.xScale = test::makeStrided("x_scale", test::kXScale, GGEMM_DTYPE_F32,
                               {1000, 56}, {1, 1000});
  list = t.get({indices.rowIndices});
  EXPECT_CONTAINS(bindError(manifest, list, t.count),
                  "tensors 'x' and 'x_scale' disagree on x rows: x dimension "
                  "0 (x rows) is 300, x_scale dimension 0 (x rows) is 1000");
}

TEST(MoeTensorMap, GatheredXIsReadOneRowPerBox) {
  // The compiler's order: the staged epilogue's y_desc, then the indices.
  std::string text = test::replaced(
      moeText(kAllFeatures), "\"value\": \"ldy\"}",
      "\"value\": \"ldy\"},\n    {\"name\": \"y_desc\", \"kind\": "
      "\"tma_descriptor\", \"tensor\": \"y\", \"dtype\": \"bf16\", \"rank\": "
      "2, \"box\": [64, 64], \"swizzle\": \"128B\", \"oob_fill\": \"zero\"}");
  Manifest manifest = manifestFrom(text);
  ASSERT_EQ(manifest.params.size(), 17u);
  MoeTensors t(kAllFeatures);
  t.x.strides[0] = 7168 + 64;
  BoundArgs args;
  Status status = bindMoe(manifest, t, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();

  TensorMapArgs a;
  status = computeTensorMapArgs(manifest, manifest.params[0], args, a);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(a.rank, 2u);
  EXPECT_EQ(a.globalAddress, reinterpret_cast<void *>(test::kX));
  EXPECT_EQ(a.globalDim[0], 7168u); // K
  EXPECT_EQ(a.globalDim[1], 300u);  // x's T rows, not M
  EXPECT_EQ(a.globalStrides[0], (7168u + 64u) * 2u);
  EXPECT_EQ(a.boxDim[0], 64u);
  EXPECT_EQ(a.boxDim[1], 1u);
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);

  // swiglu: the 2N weight rows, two boxes of 64 rows per 128-column tile.
  TensorMapArgs b;
  status = computeTensorMapArgs(manifest, manifest.params[1], args, b);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(b.globalDim[0], 7168u);
  EXPECT_EQ(b.globalDim[1], 8192u);
  EXPECT_EQ(b.globalDim[2], 8u);
  EXPECT_EQ(b.globalStrides[0], 7168u * 2u);
  EXPECT_EQ(b.globalStrides[1], 8192u * 7168u * 2u);
  EXPECT_EQ(b.boxDim[1], 64u);

  // y's Y rows.
  TensorMapArgs y;
  ASSERT_EQ(manifest.params[13].name, "y_desc");
  status = computeTensorMapArgs(manifest, manifest.params[13], args, y);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_FALSE(y.absent);
  EXPECT_EQ(y.globalDim[0], 4096u);
  EXPECT_EQ(y.globalDim[1], 5000u);

  // kn swiglu weights: [Gw, K, 2N], 2N innermost.
  Manifest kn = manifestFrom(test::replaced(text, "\"weight_layout\": \"nk\"",
                                            "\"weight_layout\": \"kn\""));
  t.w = makeTensor("w", test::kW, GGEMM_DTYPE_BF16, {8, 7168, 8192});
  status = bindMoe(kn, t, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  status = computeTensorMapArgs(kn, kn.params[1], args, b);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(b.globalDim[0], 8192u);
  EXPECT_EQ(b.globalDim[1], 7168u);
  EXPECT_EQ(b.globalStrides[0], 8192u * 2u);
}

TEST(MoePlan, ScalarsAndPointers) {
  Manifest manifest = moeManifest(kAllFeatures);
  MoeTensors t(kAllFeatures);
  LaunchPlan plan;
  const ggemm_tensor *list = t.get();
  Status status = planLaunch(manifest, list, t.count, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  ASSERT_EQ(plan.params.size(), 16u);
  EXPECT_EQ(plan.params[7].scalar, 1000);  // num_rows: M
  EXPECT_EQ(plan.params[10].scalar, 4096); // n: y's columns
  EXPECT_EQ(plan.params[12].scalar, 4096); // ldy
  EXPECT_EQ(plan.params[13].pointer, test::kRowIndices);
  EXPECT_EQ(plan.params[14].pointer, test::kScatterIndices);
  EXPECT_EQ(plan.params[15].scalar, 5000); // y_rows: Y
  for (size_t i = 13; i < 16; ++i)
    EXPECT_EQ(paramSize(manifest.params[i]), 8u) << manifest.params[i].name;

  // An i32 y_rows must fit.
  Manifest narrow = manifestFrom(test::replaced(
      moeText(kAllFeatures), "\"dtype\": \"i64\", \"value\": \"y_rows\"",
      "\"dtype\": \"i32\", \"value\": \"y_rows\""));
  status = planLaunch(narrow, list, t.count, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(plan.params[15].scalar, 5000);
  EXPECT_EQ(paramSize(narrow.params[15]), 4u);
  t.y = makeTensor("y", test::kY, GGEMM_DTYPE_BF16,
                   {(int64_t(1) << 31) + 1, 4096});
  list = t.get();
  status = planLaunch(narrow, list, t.count, plan);
  EXPECT_EQ(status.getCode(), GGEMM_ERROR_UNSUPPORTED);
  EXPECT_CONTAINS(status.getMessage(), "scalar parameter 'y_rows' is "
                                       "2147483649, which does not fit its "
                                       "dtype i32");
}

//===----------------------------------------------------------------------===//
// sort_by_expert: MoE routing
//===----------------------------------------------------------------------===//

using test::RoutingTensors;

Manifest routingManifest(const char *indexDtype = "i32") {
  return manifestFrom(test::withRoutingManifest(
      "\"index_dtype\": \"i32\"",
      std::string("\"index_dtype\": \"") + indexDtype + "\""));
}

TEST(RoutingBind, Shapes) {
  RoutingTensors t;
  BoundArgs args;
  Status status = bind(routingManifest(), t.get(), 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.numPairs, 128);
  EXPECT_EQ(args.shape.numGroups, 256);
  EXPECT_EQ(args.shape.numTiles, 1);
  // By name, in any order.
  ggemm_tensor reordered[] = {t.pairs, t.rows, t.indptr, t.ids};
  ASSERT_TRUE(bind(routingManifest(), reordered, 4, args).ok());
  EXPECT_EQ(args.get(TensorRole::TopkIds).data,
            reinterpret_cast<void *>(test::kTopkIds));
}

TEST(RoutingBind, IdsHaveTheIndexDtype) {
  RoutingTensors t;
  t.setPairs(128, GGEMM_DTYPE_I64);
  BoundArgs args;
  Status status = bind(routingManifest("i64"), t.get(), 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(bindError(routingManifest("i32"), t.get(), 4),
            "tensor 'topk_ids': expected dtype i32, got i64");
  t.setPairs(128, GGEMM_DTYPE_I32);
  EXPECT_EQ(bindError(routingManifest("i64"), t.get(), 4),
            "tensor 'topk_ids': expected dtype i64, got i32");
  // The outputs are i32 whatever the ids.
  RoutingTensors u;
  u.setPairs(128, GGEMM_DTYPE_I64);
  u.indptr.dtype = GGEMM_DTYPE_I64;
  EXPECT_EQ(bindError(routingManifest("i64"), u.get(), 4),
            "tensor 'seg_indptr': expected dtype i32, got i64");
  RoutingTensors v;
  v.rows.dtype = GGEMM_DTYPE_I64;
  EXPECT_EQ(bindError(routingManifest(), v.get(), 4),
            "tensor 'row_indices': expected dtype i32, got i64");
  RoutingTensors w;
  w.pairs.dtype = GGEMM_DTYPE_F32;
  EXPECT_EQ(bindError(routingManifest(), w.get(), 4),
            "tensor 'pair_indices': expected dtype i32, got f32");
}

TEST(RoutingBind, MissingAndUnknownTensors) {
  RoutingTensors t;
  EXPECT_EQ(bindError(routingManifest(), t.get(), 3),
            "missing tensor 'pair_indices' (sort_by_expert needs topk_ids, "
            "seg_indptr, row_indices, pair_indices)");
  EXPECT_EQ(bindError(routingManifest(),
                      t.get({makeTensor("x", test::kX, GGEMM_DTYPE_BF16, {8})}),
                      5),
            "unknown tensor 'x' (sort_by_expert takes topk_ids, seg_indptr, "
            "row_indices, pair_indices)");
  EXPECT_EQ(bindError(routingManifest(), t.get({t.ids}), 5),
            "tensor 'topk_ids' is given twice");
  // A GEMM takes no routing tensor.
  SegmentTensors s;
  EXPECT_CONTAINS(bindError(segmentManifest(), s.get({t.ids}), 5),
                  "unknown tensor 'topk_ids' (segment_matmul takes x, w, y, "
                  "seg_indptr,");
}

TEST(RoutingBind, WrongRanks) {
  RoutingTensors t;
  t.ids = makeTensor("topk_ids", test::kTopkIds, GGEMM_DTYPE_I32, {16, 8});
  EXPECT_EQ(bindError(routingManifest(), t.get(), 4),
            "tensor 'topk_ids': expected rank 1 ([num_pairs]), got rank 2 "
            "with shape [16, 8]");
  RoutingTensors u;
  u.indptr = makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {1, 257});
  EXPECT_EQ(bindError(routingManifest(), u.get(), 4),
            "tensor 'seg_indptr': expected rank 1 ([num_experts + 1]), got "
            "rank 2 with shape [1, 257]");
}

TEST(RoutingBind, SizesNameTheTensor) {
  RoutingTensors t;
  t.indptr = makeTensor("seg_indptr", test::kIndptr, GGEMM_DTYPE_I32, {129});
  EXPECT_EQ(bindError(routingManifest(), t.get(), 4),
            "tensor 'seg_indptr': dimension 0 (num_experts + 1) is 129, "
            "expected 257 (the kernel was compiled for num_experts = 256); "
            "shape is [129]");
  RoutingTensors u;
  u.rows = makeTensor("row_indices", test::kRowIndices, GGEMM_DTYPE_I32, {64});
  EXPECT_EQ(bindError(routingManifest(), u.get(), 4),
            "tensors 'topk_ids' and 'row_indices' disagree on num_pairs: "
            "topk_ids dimension 0 (num_pairs) is 128, row_indices dimension "
            "0 (num_pairs) is 64; shapes are [128] and [64]");
  RoutingTensors v;
  v.pairs =
      makeTensor("pair_indices", test::kPairIndices, GGEMM_DTYPE_I32, {136});
  EXPECT_EQ(bindError(routingManifest(), v.get(), 4),
            "tensors 'topk_ids' and 'pair_indices' disagree on num_pairs: "
            "topk_ids dimension 0 (num_pairs) is 128, pair_indices dimension "
            "0 (num_pairs) is 136; shapes are [128] and [136]");
}

TEST(RoutingBind, PairsOfWholeTokensCountedInI32) {
  RoutingTensors t;
  t.setPairs(127);
  EXPECT_EQ(bindError(routingManifest(), t.get(), 4),
            "tensor 'topk_ids': dimension 0 (num_pairs) is 127, expected a "
            "multiple of 8 (whole tokens of topk pairs: the kernel was "
            "compiled for topk = 8); shape is [127]");
  t.setPairs(int64_t(1) << 31);
  EXPECT_EQ(bindError(routingManifest(), t.get(), 4, GGEMM_ERROR_UNSUPPORTED),
            "tensor 'topk_ids': dimension 0 (num_pairs) is 2147483648, "
            "expected at most 2^31 - 1 (the kernel counts pairs in i32); "
            "shape is [2147483648]");
  t.setPairs((int64_t(1) << 31) - 8);
  BoundArgs args;
  EXPECT_TRUE(bind(routingManifest(), t.get(), 4, args).ok());
}

TEST(RoutingBind, ContiguousAndAligned) {
  RoutingTensors t;
  t.ids.strides[0] = 2;
  EXPECT_EQ(bindError(routingManifest(), t.get(), 4),
            "tensor 'topk_ids': expected a contiguous tensor, got strides [2] "
            "for shape [128]");
  RoutingTensors u;
  u.indptr.strides[0] = 2;
  EXPECT_EQ(bindError(routingManifest(), u.get(), 4),
            "tensor 'seg_indptr': expected a contiguous tensor, got strides "
            "[2] for shape [257]");
  RoutingTensors v;
  v.pairs.data = reinterpret_cast<void *>(test::kPairIndices + 2);
  EXPECT_EQ(bindError(routingManifest(), v.get(), 4),
            "tensor 'pair_indices': data pointer 0x100d00002 is not 4-byte "
            "aligned (natural alignment of its dtype)");
  RoutingTensors w;
  w.setPairs(128, GGEMM_DTYPE_I64);
  w.ids.data = reinterpret_cast<void *>(test::kTopkIds + 4);
  EXPECT_EQ(bindError(routingManifest("i64"), w.get(), 4),
            "tensor 'topk_ids': data pointer 0x100c00004 is not 8-byte "
            "aligned (natural alignment of its dtype)");
  // A 4-byte aligned i32 vector needs nothing more (no TMA).
  RoutingTensors x;
  x.rows.data = reinterpret_cast<void *>(test::kRowIndices + 4);
  BoundArgs args;
  EXPECT_TRUE(bind(routingManifest(), x.get(), 4, args).ok());
}

TEST(RoutingBind, NoPairsStillLaunch) {
  // The kernel writes seg_indptr (all zeros) even without pairs: one CTA.
  RoutingTensors t;
  t.setPairs(0);
  BoundArgs args;
  Status status = bind(routingManifest(), t.get(), 4, args);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(args.shape.numPairs, 0);
  EXPECT_EQ(args.shape.numTiles, 1);
  unsigned grid = 0;
  ASSERT_TRUE(
      computeGrid(routingManifest(), args.shape.numTiles, 132, grid).ok());
  EXPECT_EQ(grid, 1u);
}

TEST(RoutingGrid, OneCtaWhateverTheDevice) {
  Manifest manifest = routingManifest();
  unsigned grid = 0;
  for (int sms : {132, 1, 0}) {
    ASSERT_TRUE(computeGrid(manifest, 1, sms, grid).ok());
    EXPECT_EQ(grid, 1u);
  }
  // "single" is one CTA, whatever the bound.
  ASSERT_TRUE(computeGrid(manifest, 5, 132, grid).ok());
  EXPECT_EQ(grid, 1u);
}

TEST(RoutingPlan, PointersAndNumPairs) {
  Manifest manifest = routingManifest();
  RoutingTensors t;
  LaunchPlan plan;
  Status status = planLaunch(manifest, t.get(), 4, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  ASSERT_EQ(plan.params.size(), 5u);
  EXPECT_EQ(plan.params[0].pointer, test::kTopkIds);
  EXPECT_EQ(plan.params[1].pointer, test::kIndptr);
  EXPECT_EQ(plan.params[2].pointer, test::kRowIndices);
  EXPECT_EQ(plan.params[3].pointer, test::kPairIndices);
  EXPECT_EQ(plan.params[4].scalar, 128);
  for (size_t i = 0; i < manifest.params.size(); ++i)
    EXPECT_EQ(paramSize(manifest.params[i]), test::kRoutingParamSizes[i])
        << manifest.params[i].name;

  // No pairs: empty vectors may be null; seg_indptr is still written.
  t.setPairs(0);
  status = planLaunch(manifest, t.get(), 4, plan);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  ASSERT_EQ(plan.params.size(), 5u);
  EXPECT_EQ(plan.params[0].pointer, 0u);
  EXPECT_EQ(plan.params[1].pointer, test::kIndptr);
  EXPECT_EQ(plan.params[4].scalar, 0);
}

} // namespace
} // namespace ggemm::runtime
