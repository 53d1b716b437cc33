//===- ManifestTest.cpp - Tests of manifest parsing and checking ----------===//

#include "Manifest.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

namespace ggemm::runtime {
namespace {

using test::withManifest;
using test::withMultiVariantManifest;

Manifest parseOk(const std::string &text) {
  Manifest manifest;
  Status status = parseManifest(text, "k.json", "/bundles", manifest);
  EXPECT_TRUE(status.ok()) << status.getMessage();
  return manifest;
}

/// The error message of a manifest that must be rejected.
std::string parseError(const std::string &text) {
  Manifest manifest;
  Status status = parseManifest(text, "k.json", "/bundles", manifest);
  EXPECT_EQ(status.getCode(), GGEMM_ERROR_BAD_MANIFEST) << status.getMessage();
  return status.getMessage();
}

TEST(Manifest, ParsesTheDocumentedExample) {
  Manifest manifest = parseOk(test::kSegmentManifest);
  EXPECT_EQ(manifest.entry, "ggemm_segment_matmul_kernel");
  EXPECT_EQ(manifest.ptxPath, "/bundles/k.ptx");
  EXPECT_EQ(manifest.cubinPath, "/bundles/k.cubin");
  EXPECT_EQ(manifest.arch, "sm_90a");
  EXPECT_EQ(manifest.archMajor, 9);
  EXPECT_EQ(manifest.archMinor, 0);
  EXPECT_TRUE(manifest.archSpecific);
  EXPECT_EQ(manifest.block[0], 384u);
  EXPECT_EQ(manifest.cluster[0], 1u);
  EXPECT_FALSE(manifest.dependentLaunch); // absent: false
  EXPECT_EQ(manifest.dynamicSmem, 132096u);

  const ProblemSpec &problem = manifest.problem;
  EXPECT_EQ(problem.op, Op::SegmentMatmul);
  EXPECT_EQ(problem.aDtype, GGEMM_DTYPE_BF16);
  EXPECT_EQ(problem.outDtype, GGEMM_DTYPE_BF16);
  EXPECT_EQ(problem.indexDtype, GGEMM_DTYPE_I32);
  EXPECT_EQ(problem.weightLayout, WeightLayout::NK);
  EXPECT_EQ(problem.m, -1);
  EXPECT_EQ(problem.n, 4096);
  EXPECT_EQ(problem.k, 7168);
  EXPECT_EQ(problem.numGroups, 8);
  EXPECT_EQ(problem.numWeights, 8);
  EXPECT_FALSE(problem.hasBias);

  EXPECT_EQ(manifest.blockM, 128);
  EXPECT_EQ(manifest.blockN, 128);
  EXPECT_EQ(manifest.blockK, 64);
  EXPECT_EQ(manifest.stages, 4);
  EXPECT_EQ(manifest.gridPolicy, GridPolicy::Persistent);
  EXPECT_EQ(manifest.ctasPerSm, 1);

  ASSERT_EQ(manifest.params.size(), 13u);
  const ParamSpec &a = manifest.params[0];
  EXPECT_EQ(a.name, "a_desc");
  EXPECT_EQ(a.kind, ParamKind::TmaDescriptor);
  EXPECT_EQ(a.tensor, TensorRole::X);
  EXPECT_EQ(a.rank, 2);
  EXPECT_EQ(a.box[0], 64u);
  EXPECT_EQ(a.box[1], 128u);
  EXPECT_EQ(a.swizzle, Swizzle::Bytes128);
  EXPECT_EQ(a.oobFill, OobFill::Zero);
  EXPECT_EQ(manifest.params[3].tensor, TensorRole::SegIndptr);
  EXPECT_FALSE(manifest.params[3].optional);
  EXPECT_TRUE(manifest.params[4].optional);
  const ParamSpec &numGroups = manifest.params[9];
  EXPECT_EQ(numGroups.kind, ParamKind::Scalar);
  EXPECT_EQ(numGroups.dtype, GGEMM_DTYPE_I32);
  EXPECT_EQ(numGroups.source, ScalarSource::NumGroups);
  EXPECT_EQ(manifest.params[12].source, ScalarSource::Ldy);
}

TEST(Manifest, Defaults) {
  // No cubin, no cluster, no grid, no dynamic_smem, minimal problem.
  std::string text = R"({
    "format": "ggemm-bundle", "version": 1, "entry": "e", "ptx": "k.ptx",
    "arch": "sm_90", "block": [128, 1, 1],
    "problem": {"op": "batched_matmul", "a_dtype": "f16", "b_dtype": "f16",
                "out_dtype": "f32", "m": -1, "n": -1, "k": -1,
                "num_groups": -1},
    "tile": {"block_m": 64, "block_n": 64},
    "params": [
      {"name": "x", "kind": "pointer", "tensor": "x"},
      {"name": "w", "kind": "pointer", "tensor": "w"},
      {"name": "y", "kind": "pointer", "tensor": "y"},
      {"name": "seven", "kind": "scalar", "dtype": "i32", "value": 7}
    ],
    "generator": {"note": "unknown top-level keys are metadata"}
  })";
  Manifest manifest;
  Status status = parseManifest(text, "k.json", "", manifest);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(manifest.ptxPath, "k.ptx");
  EXPECT_TRUE(manifest.cubinPath.empty());
  EXPECT_FALSE(manifest.archSpecific);
  EXPECT_EQ(manifest.cluster[0], 1u);
  EXPECT_EQ(manifest.dynamicSmem, 0u);
  EXPECT_EQ(manifest.gridPolicy, GridPolicy::Persistent);
  EXPECT_EQ(manifest.ctasPerSm, 1);
  EXPECT_EQ(manifest.problem.indexDtype, GGEMM_DTYPE_I32);
  EXPECT_EQ(manifest.problem.weightLayout, WeightLayout::NK);
  EXPECT_EQ(manifest.problem.numWeights, -1);
  EXPECT_EQ(manifest.params[3].source, ScalarSource::Literal);
  EXPECT_EQ(manifest.params[3].literal, 7);
}

TEST(Manifest, AbsolutePathsAreKept) {
  Manifest manifest = parseOk(withManifest("\"k.ptx\"", "\"/abs/k.ptx\""));
  EXPECT_EQ(manifest.ptxPath, "/abs/k.ptx");
}

TEST(Manifest, RejectsInvalidJson) {
  // nlohmann/json's position is the last byte it read: the end of the
  // string that should have been preceded by a comma.
  EXPECT_CONTAINS(parseError(withManifest("\"version\": 1,", "\"version\": 1")),
                  "k.json:3:9: invalid JSON at byte 52: syntax error while "
                  "parsing object - unexpected string literal; expected '}'");
  EXPECT_CONTAINS(parseError("{\"format\": \"ggemm-bundle\",}"),
                  "k.json:1:27: invalid JSON at byte 27: syntax error while "
                  "parsing object key - unexpected '}'; expected string "
                  "literal");
  EXPECT_EQ(parseError("[]"), "k.json: expected an object, got array");
}

TEST(Manifest, RejectsWrongFormatAndVersion) {
  EXPECT_CONTAINS(
      parseError(withManifest("\"ggemm-bundle\"", "\"other\"")),
      "k.json: /format: expected \"ggemm-bundle\", got string \"other\"");
  EXPECT_CONTAINS(parseError(withManifest("\"version\": 1", "\"version\": 3")),
                  "k.json: /version: unsupported manifest version 3 (this "
                  "runtime reads versions 1 and 2)");
  EXPECT_CONTAINS(
      parseError(withManifest("\"version\": 1", "\"version\": \"1\"")),
      "k.json: /version: expected an integer, got string \"1\"");
}

TEST(Manifest, RejectsMissingKeys) {
  EXPECT_CONTAINS(parseError(withManifest(
                      "\"entry\": \"ggemm_segment_matmul_kernel\",", "")),
                  "k.json: /entry: missing required key");
  EXPECT_CONTAINS(parseError(withManifest(
                      "\"ptx\": \"k.ptx\", \"cubin\": \"k.cubin\",", "")),
                  "expected \"ptx\" or \"cubin\" (or both)");
  EXPECT_CONTAINS(parseError(withManifest("\"a_dtype\": \"bf16\", ", "")),
                  "k.json: /problem/a_dtype: missing required key");
  EXPECT_CONTAINS(parseError(withManifest("\"block_m\": 128, ", "")),
                  "k.json: /tile/block_m: missing required key");
}

TEST(Manifest, RejectsBadEnums) {
  EXPECT_CONTAINS(
      parseError(withManifest("\"a_dtype\": \"bf16\"", "\"a_dtype\": \"bf8\"")),
      "k.json: /problem/a_dtype: expected one of bf16, f16, f32, f8e4m3, "
      "f8e5m2 or s8, got string \"bf8\"");
  EXPECT_CONTAINS(
      parseError(withManifest("\"segment_matmul\"", "\"gemm\"")),
      "k.json: /problem/op: expected one of segment_matmul, masked_matmul, "
      "batched_matmul, segment_matmul_k, sort_by_expert or quantize, got "
      "string \"gemm\"");
  EXPECT_CONTAINS(parseError(withManifest("\"index_dtype\": \"i32\"",
                                          "\"index_dtype\": \"i16\"")),
                  "k.json: /problem/index_dtype: expected one of i32 or i64");
  EXPECT_CONTAINS(parseError(withManifest("\"weight_layout\": \"nk\"",
                                          "\"weight_layout\": \"kn2\"")),
                  "k.json: /problem/weight_layout: expected one of nk or kn");
  EXPECT_CONTAINS(parseError(withManifest("\"persistent\"", "\"dynamic\"")),
                  "k.json: /grid/policy: expected one of persistent, tiles or "
                  "single");
  EXPECT_CONTAINS(
      parseError(withManifest("\"swizzle\": \"128B\", \"oob_fill\": \"zero\"}"
                              ",\n    {\"name\": \"b_desc\"",
                              "\"swizzle\": \"96B\", \"oob_fill\": \"zero\"},"
                              "\n    {\"name\": \"b_desc\"")),
      "k.json: /params/0/swizzle: expected one of none, 32B, 64B or 128B, got "
      "string "
      "\"96B\"");
  EXPECT_CONTAINS(
      parseError(withManifest("\"kind\": \"pointer\", \"tensor\": \"y\"",
                              "\"kind\": \"ptr\", \"tensor\": \"y\"")),
      "k.json: /params/2/kind: expected one of tma_descriptor, pointer or "
      "scalar");
  EXPECT_CONTAINS(
      parseError(withManifest("\"value\": \"ldy\"", "\"value\": \"lda_y\"")),
      "k.json: /params/12/value: expected one of num_rows, rows_per_group,"
      " num_groups, num_weights, m, n, k, lda, ldy, num_tiles, y_rows, "
      "x_rows, num_pairs, scale_stride_group, scale_stride_row, "
      "scale_stride_col, y_scale_stride_row or y_scale_stride_col, "
      "got string \"lda_y\"");
  EXPECT_CONTAINS(
      parseError(withManifest("\"arch\": \"sm_90a\"", "\"arch\": \"hopper\"")),
      "k.json: /arch: expected sm_<major><minor>[a|f] such as \"sm_90a\", "
      "got \"hopper\"");
}

TEST(Manifest, RejectsUnknownKeysInSemanticSections) {
  EXPECT_CONTAINS(
      parseError(withManifest("\"has_bias\": false", "\"has_bais\": false")),
      "k.json: /problem/has_bais: unknown key (expected one of op, a_dtype");
  EXPECT_CONTAINS(
      parseError(withManifest("\"stages\": 4", "\"stages\": 4, \"warps\": 4")),
      "k.json: /tile/warps: unknown key");
  EXPECT_CONTAINS(
      parseError(withManifest("\"optional\": false",
                              "\"optional\": false, \"ro\": 1")),
      "k.json: /params/3/ro: unknown key (expected one of name, kind, "
      "tensor, dtype, optional)");
}

TEST(Manifest, RejectsBadNumbers) {
  EXPECT_CONTAINS(parseError(withManifest("[384, 1, 1]", "[384, 1]")),
                  "k.json: /block: expected an array of 3 integers, got an "
                  "array of 2 elements");
  EXPECT_CONTAINS(parseError(withManifest("[384, 1, 1]", "[384, 0, 1]")),
                  "k.json: /block/1: expected an integer in [1, 1024], got 0");
  EXPECT_CONTAINS(parseError(withManifest("[384, 1, 1]", "[512, 4, 1]")),
                  "k.json: /block: a block has at most 1024 threads, got 2048");
  EXPECT_TRUE(parseOk(withManifest("\"cluster\": [1, 1, 1]",
                                   "\"cluster\": [1, 1, 1], "
                                   "\"dependent_launch\": true"))
                  .dependentLaunch);
  EXPECT_CONTAINS(parseError(withManifest("\"cluster\": [1, 1, 1]",
                                          "\"cluster\": [1, 1, 1], "
                                          "\"dependent_launch\": 1")),
                  "k.json: /dependent_launch: expected true or false, got 1");
  EXPECT_CONTAINS(
      parseError(
          withManifest("\"cluster\": [1, 1, 1]", "\"cluster\": [2, 2, 1]")),
      "k.json: /cluster: the grid is one-dimensional, so cluster[1] and "
      "cluster[2] must be 1, got [2, 2, 1]");
  // A split-K kernel: split_k CTAs a tile, which make (part of) a cluster.
  const std::string splitTile =
      "\"tile\": {\"block_m\": 128, \"block_n\": 128, \"block_k\": 64, "
      "\"stages\": 4, \"split_k\": 4}";
  const std::string plainTile = "\"tile\": {\"block_m\": 128, \"block_n\": "
                                "128, \"block_k\": 64, \"stages\": 4}";
  EXPECT_EQ(
      parseOk(withManifest("\"cluster\": [1, 1, 1]", "\"cluster\": [4, 1, 1]"))
          .splitK,
      1);
  EXPECT_EQ(parseOk(test::replaced(withManifest("\"cluster\": [1, 1, 1]",
                                                "\"cluster\": [4, 1, 1]"),
                                   plainTile, splitTile))
                .splitK,
            4);
  EXPECT_CONTAINS(parseError(withManifest(plainTile, splitTile)),
                  "k.json: /tile/split_k: expected to divide cluster[0] (1: a "
                  "tile's CTAs form a cluster), got 4");
  // split_k_tail: the kernel splits its last wave only; the launch is the
  // same (the key is known, and read as nothing).
  EXPECT_EQ(
      parseOk(test::replaced(withManifest("\"cluster\": [1, 1, 1]",
                                          "\"cluster\": [4, 1, 1]"),
                             plainTile,
                             test::replaced(splitTile, "\"split_k\": 4",
                                            "\"split_k\": 4, \"split_k_tail\": "
                                            "true")))
          .splitK,
      4);
  EXPECT_CONTAINS(
      parseError(test::replaced(
          withManifest("\"cluster\": [1, 1, 1]", "\"cluster\": [4, 1, 1]"),
          plainTile,
          test::replaced(splitTile, "\"split_k\": 4", "\"split_k\": 0"))),
      "k.json: /tile/split_k: expected an integer in [1, 16], got 0");
  EXPECT_CONTAINS(
      parseError(
          withManifest("\"dynamic_smem\": 132096", "\"dynamic_smem\": -1")),
      "k.json: /dynamic_smem: expected an integer in [0, 1073741824], got "
      "-1");
  EXPECT_CONTAINS(
      parseError(withManifest("\"n\": 4096", "\"n\": 0")),
      "k.json: /problem/n: expected a positive integer or -1 (dynamic), got 0");
  EXPECT_CONTAINS(parseError(withManifest("\"k\": 7168", "\"k\": 71.5")),
                  "k.json: /problem/k: expected a positive integer or -1 "
                  "(dynamic), got 71.5");
  EXPECT_CONTAINS(
      parseError(withManifest("\"block_m\": 128", "\"block_m\": true")),
      "k.json: /tile/block_m: expected an integer, got true");
  EXPECT_CONTAINS(
      parseError(withManifest("\"num_weights\": 8", "\"num_weights\": 4")),
      "k.json: /problem/num_weights: num_weights (4) must equal num_groups (8) "
      "when "
      "has_weight_indices is false");
}

TEST(Manifest, RejectsInconsistentDescriptors) {
  EXPECT_CONTAINS(
      parseError(withManifest("\"tensor\": \"x\", \"dtype\": \"bf16\"",
                              "\"tensor\": \"x\", \"dtype\": \"f16\"")),
      "k.json: /params/0/dtype: tensor \"x\" has dtype bf16 in this problem, "
      "got f16");
  EXPECT_CONTAINS(
      parseError(withManifest("\"rank\": 2, \"box\": [64, 128]",
                              "\"rank\": 3, \"box\": [64, 128, 1]")),
      "k.json: /params/0/rank: a descriptor of \"x\" for segment_matmul has "
      "rank 2, "
      "got 3");
  EXPECT_CONTAINS(
      parseError(withManifest("\"box\": [64, 128]", "\"box\": [64, 128, 1]")),
      "k.json: /params/0/box: expected an array of 2 integers, got an "
      "array of 3 elements");
  EXPECT_CONTAINS(
      parseError(withManifest("\"box\": [64, 128]", "\"box\": [64, 512]")),
      "k.json: /params/0/box/1: expected an integer in [1, 256], got 512");
  EXPECT_CONTAINS(
      parseError(withManifest("\"box\": [64, 128]", "\"box\": [32, 128]")),
      "k.json: /params/0/box: innermost box extent is 64 bytes, expected "
      "the swizzle width 128 bytes");
  EXPECT_CONTAINS(
      parseError(withManifest("\"box\": [64, 128], \"swizzle\": \"128B\"",
                              "\"box\": [4, 128], \"swizzle\": \"none\"")),
      "k.json: /params/0/box: innermost box extent is 8 bytes; TMA needs a "
      "multiple "
      "of 16 bytes");
  EXPECT_CONTAINS(
      parseError(withManifest("\"kind\": \"tma_descriptor\", \"tensor\": \"x\"",
                              "\"kind\": \"tma_descriptor\", \"tensor\": "
                              "\"bias\"")),
      "k.json: /params/0/tensor: a tma_descriptor can describe x, w, y or "
      "x_scale, got \"bias\"");
}

TEST(Manifest, RejectsInconsistentParams) {
  EXPECT_CONTAINS(
      parseError(withManifest("\"tensor\": \"seg_indptr\"",
                              "\"tensor\": \"masked_m\"")),
      "k.json: /params/3/tensor: tensor \"masked_m\" does not exist for "
      "segment_matmul");
  EXPECT_CONTAINS(
      parseError(withManifest("\"name\": \"ldy\"", "\"name\": \"k\"")),
      "k.json: /params/12/name: duplicate parameter name \"k\"");
  EXPECT_CONTAINS(
      parseError(
          withManifest("{\"name\": \"y\", \"kind\": \"pointer\", \"tensor\": "
                       "\"y\"},",
                       "")),
      "k.json: /params: no parameter passes tensor \"y\" (segment_matmul "
      "writes y)");
}

TEST(Manifest, OptionalTensorsFollowTheProblem) {
  // has_bias: true with the bias pointer present is accepted.
  parseOk(withManifest("\"has_bias\": false", "\"has_bias\": true"));
  // A required bias pointer in a problem without bias is contradictory.
  EXPECT_CONTAINS(
      parseError(withManifest("\"tensor\": \"bias\", \"optional\": true",
                              "\"tensor\": \"bias\", \"optional\": false")),
      "k.json: /params/5: tensor \"bias\" is marked required (optional: false) "
      "but "
      "the problem is compiled without it");
  // has_row_scale: true but no parameter passes row_scale.
  std::string text =
      withManifest("\"has_row_scale\": false", "\"has_row_scale\": true");
  text = test::replaced(text,
                        "{\"name\": \"row_scale\", \"kind\": \"pointer\", "
                        "\"tensor\": \"row_scale\", \"optional\": true},",
                        "");
  EXPECT_CONTAINS(parseError(text),
                  "k.json: /params: no parameter passes tensor \"row_scale\" "
                  "(problem.has_row_scale is true)");
}

using test::kWScalePointer;
using test::kXScaleDescriptor;
using test::withFp8Manifest;

TEST(Manifest, ParsesTheFp8BlockScaledManifest) {
  Manifest manifest = parseOk(test::fp8SegmentManifest());
  EXPECT_EQ(manifest.problem.aDtype, GGEMM_DTYPE_F8E4M3);
  EXPECT_EQ(manifest.problem.xScaleBlock, ScaleBlock::Block1x128);
  EXPECT_EQ(manifest.problem.wScaleBlock, ScaleBlock::Block128x128);
  ASSERT_EQ(manifest.params.size(), 15u);
  const ParamSpec &xScale = manifest.params[13];
  EXPECT_EQ(xScale.name, "a_scale_desc");
  EXPECT_EQ(xScale.kind, ParamKind::TmaDescriptor);
  EXPECT_EQ(xScale.tensor, TensorRole::XScale);
  EXPECT_EQ(xScale.dtype, GGEMM_DTYPE_F32);
  EXPECT_EQ(xScale.rank, 2);
  EXPECT_EQ(xScale.box[0], 128u);
  EXPECT_EQ(xScale.box[1], 1u);
  EXPECT_EQ(xScale.swizzle, Swizzle::None);
  const ParamSpec &wScale = manifest.params[14];
  EXPECT_EQ(wScale.kind, ParamKind::Pointer);
  EXPECT_EQ(wScale.tensor, TensorRole::WScale);
  EXPECT_EQ(wScale.dtype, GGEMM_DTYPE_F32);
  EXPECT_FALSE(wScale.optional);
  EXPECT_TRUE(manifest.usesTensor(TensorRole::XScale));
  EXPECT_TRUE(manifest.usesTensor(TensorRole::WScale));
}

TEST(Manifest, ScaleBlocksAbsentOrNullMeanNoScales) {
  Manifest manifest = parseOk(test::kSegmentManifest);
  EXPECT_EQ(manifest.problem.xScaleBlock, ScaleBlock::None);
  EXPECT_EQ(manifest.problem.wScaleBlock, ScaleBlock::None);
  manifest = parseOk(withManifest(
      "\"accumulate\": false",
      "\"accumulate\": false, \"x_scale_block\": null, \"w_scale_block\": "
      "null"));
  EXPECT_EQ(manifest.problem.xScaleBlock, ScaleBlock::None);
  EXPECT_EQ(manifest.problem.wScaleBlock, ScaleBlock::None);
  // fp8 without scales stays valid (per-tensor scaling done elsewhere).
  std::string text = withFp8Manifest(
      "\"x_scale_block\": \"1x128\", \"w_scale_block\": \"128x128\"",
      "\"x_scale_block\": null, \"w_scale_block\": null");
  text = test::replaced(text, std::string(",\n    ") + kXScaleDescriptor, "");
  text = test::replaced(text, std::string(",\n    ") + kWScalePointer, "");
  manifest = parseOk(text);
  EXPECT_EQ(manifest.problem.xScaleBlock, ScaleBlock::None);
}

TEST(Manifest, AcceptsEveryScaleBlock) {
  // Scales the x descriptor cannot map are passed by pointer.
  const std::string xScalePointer =
      "{\"name\": \"x_scale\", \"kind\": \"pointer\", \"tensor\": "
      "\"x_scale\"}";
  struct Case {
    const char *x;
    const char *w;
    ScaleBlock xBlock;
    ScaleBlock wBlock;
  };
  const Case cases[] = {
      {"per_row", "per_row", ScaleBlock::PerRow, ScaleBlock::PerRow},
      {"tensor", "tensor", ScaleBlock::Tensor, ScaleBlock::Tensor},
      {"per_row", "128x128", ScaleBlock::PerRow, ScaleBlock::Block128x128},
      {"tensor", "per_row", ScaleBlock::Tensor, ScaleBlock::PerRow},
  };
  for (const Case &c : cases) {
    std::string text = withFp8Manifest(
        "\"x_scale_block\": \"1x128\", \"w_scale_block\": \"128x128\"",
        std::string("\"x_scale_block\": \"") + c.x +
            "\", \"w_scale_block\": \"" + c.w + "\"");
    text = test::replaced(text, kXScaleDescriptor, xScalePointer);
    Manifest manifest = parseOk(text);
    EXPECT_EQ(manifest.problem.xScaleBlock, c.xBlock) << c.x;
    EXPECT_EQ(manifest.problem.wScaleBlock, c.wBlock) << c.w;
    EXPECT_EQ(manifest.params[13].kind, ParamKind::Pointer);
  }
  // 1x128 scales may also be read through a pointer.
  Manifest manifest =
      parseOk(withFp8Manifest(kXScaleDescriptor, xScalePointer));
  EXPECT_EQ(manifest.params[13].tensor, TensorRole::XScale);
}

TEST(Manifest, RejectsBadScaleBlocks) {
  const std::string blocks =
      "\"x_scale_block\": \"1x128\", \"w_scale_block\": \"128x128\"";
  auto withBlocks = [&](const std::string &to) {
    return withFp8Manifest(blocks, to);
  };
  EXPECT_CONTAINS(
      parseError(withBlocks(
          "\"x_scale_block\": \"2x128\", \"w_scale_block\": \"128x128\"")),
      "k.json: /problem/x_scale_block: expected null or one of 1x128, "
      "128x128, per_row or tensor, got string \"2x128\"");
  EXPECT_CONTAINS(
      parseError(
          withBlocks("\"x_scale_block\": \"1x128\", \"w_scale_block\": 128")),
      "k.json: /problem/w_scale_block: expected null or one of 1x128, "
      "128x128, per_row or tensor, got 128");
  EXPECT_CONTAINS(
      parseError(withBlocks(
          "\"x_scale_block\": \"128x128\", \"w_scale_block\": \"128x128\"")),
      "k.json: /problem/x_scale_block: \"128x128\" is a block of w; "
      "x_scale_block is one of 1x128, per_row or tensor");
  EXPECT_CONTAINS(
      parseError(withBlocks(
          "\"x_scale_block\": \"1x128\", \"w_scale_block\": \"1x128\"")),
      "k.json: /problem/w_scale_block: \"1x128\" is a block of x; "
      "w_scale_block is one of 128x128, per_row or tensor");
  // Both or neither.
  EXPECT_CONTAINS(parseError(withBlocks("\"x_scale_block\": \"1x128\"")),
                  "k.json: /problem/w_scale_block: missing while "
                  "x_scale_block is \"1x128\" (x and w are scaled together: "
                  "give both scale blocks or neither)");
  EXPECT_CONTAINS(
      parseError(withBlocks(
          "\"x_scale_block\": null, \"w_scale_block\": \"128x128\"")),
      "k.json: /problem/x_scale_block: missing while w_scale_block is "
      "\"128x128\"");
  // Only fp8 and s8 inputs are scaled.
  std::string bf16 =
      test::replaced(test::fp8SegmentManifest(), "\"a_dtype\": \"f8e4m3\"",
                     "\"a_dtype\": \"bf16\"");
  EXPECT_CONTAINS(parseError(bf16),
                  "k.json: /problem/x_scale_block: scale blocks are for fp8 "
                  "and s8 inputs (a_dtype f8e4m3, f8e5m2 or s8), but a_dtype "
                  "is bf16");
  // f8e5m2 is fp8 too.
  std::string e5m2 =
      test::replaced(test::fp8SegmentManifest(), "f8e4m3", "f8e5m2");
  EXPECT_EQ(parseOk(e5m2).problem.xScaleBlock, ScaleBlock::Block1x128);
}

TEST(Manifest, ScaleParamsFollowTheProblem) {
  // A problem without scales has no scale parameters, optional or not.
  const std::string noScales =
      "\"x_scale_block\": null, \"w_scale_block\": null";
  const std::string blocks =
      "\"x_scale_block\": \"1x128\", \"w_scale_block\": \"128x128\"";
  std::string text = withFp8Manifest(blocks, noScales);
  EXPECT_CONTAINS(parseError(text),
                  "k.json: /params/13/tensor: tensor \"x_scale\" needs "
                  "problem.x_scale_block, but the problem has no scales");
  text = test::replaced(text, std::string(",\n    ") + kXScaleDescriptor, "");
  EXPECT_CONTAINS(parseError(text),
                  "k.json: /params/13/tensor: tensor \"w_scale\" needs "
                  "problem.w_scale_block, but the problem has no scales");
  EXPECT_CONTAINS(
      parseError(withManifest("\"tensor\": \"row_scale\", \"optional\": true",
                              "\"tensor\": \"x_scale\", \"optional\": true")),
      "k.json: /params/6/tensor: tensor \"x_scale\" needs "
      "problem.x_scale_block, but the problem has no scales");

  // A problem with scales passes both.
  EXPECT_CONTAINS(parseError(withFp8Manifest(
                      std::string(",\n    ") + kXScaleDescriptor, "")),
                  "k.json: /params: no parameter passes tensor \"x_scale\" "
                  "(problem.x_scale_block is \"1x128\")");
  EXPECT_CONTAINS(
      parseError(withFp8Manifest(std::string(",\n    ") + kWScalePointer, "")),
      "k.json: /params: no parameter passes tensor \"w_scale\" "
      "(problem.w_scale_block is \"128x128\")");
}

TEST(Manifest, RejectsInconsistentScaleParams) {
  // Scales are f32.
  EXPECT_CONTAINS(
      parseError(withFp8Manifest("\"tensor\": \"x_scale\", \"dtype\": \"f32\"",
                                 "\"tensor\": \"x_scale\", \"dtype\": "
                                 "\"bf16\"")),
      "k.json: /params/13/dtype: tensor \"x_scale\" has dtype f32 in this "
      "problem, got bf16");
  EXPECT_CONTAINS(
      parseError(withFp8Manifest("\"tensor\": \"w_scale\",",
                                 "\"tensor\": \"w_scale\", \"dtype\": "
                                 "\"f16\",")),
      "k.json: /params/14/dtype: tensor \"w_scale\" has dtype f32 in this "
      "problem, got f16");
  // w's scales have no descriptor.
  EXPECT_CONTAINS(
      parseError(withFp8Manifest(
          kWScalePointer,
          "{\"name\": \"w_scale\", \"kind\": \"tma_descriptor\", "
          "\"tensor\": \"w_scale\", \"dtype\": \"f32\", \"rank\": 3, "
          "\"box\": [4, 1, 1], \"swizzle\": \"none\"}")),
      "k.json: /params/14/tensor: a tma_descriptor can describe x, w, y or "
      "x_scale, got \"w_scale\"");
  // The descriptor maps [rows, k blocks]: 1x128 only, rank 2, no swizzle.
  std::string perRow = withFp8Manifest("\"x_scale_block\": \"1x128\"",
                                       "\"x_scale_block\": \"per_row\"");
  EXPECT_CONTAINS(parseError(perRow),
                  "k.json: /params/13/tensor: a tma_descriptor of "
                  "\"x_scale\" needs x_scale_block \"1x128\", got "
                  "\"per_row\" (pass per_row and tensor scales by pointer)");
  std::string masked =
      withFp8Manifest("\"segment_matmul\"", "\"masked_matmul\"");
  masked = test::replaced(masked, "\"seg_indptr\"", "\"masked_m\"");
  parseOk(masked);
  EXPECT_CONTAINS(
      parseError(test::replaced(masked, "\"rank\": 2, \"box\": [128, 1]",
                                "\"rank\": 3, \"box\": [128, 1, 1]")),
      "k.json: /params/13/rank: a descriptor of \"x_scale\" for "
      "masked_matmul has rank 2 (rows of all groups, k blocks), got 3");
  EXPECT_CONTAINS(
      parseError(withFp8Manifest("\"box\": [128, 1], \"swizzle\": \"none\"",
                                 "\"box\": [32, 1], \"swizzle\": \"128B\"")),
      "k.json: /params/13/swizzle: a descriptor of \"x_scale\" is not "
      "swizzled, expected \"none\", got string \"128B\"");
  // The TMA box rules hold for scales too: 2 f32 are 8 bytes.
  EXPECT_CONTAINS(
      parseError(withFp8Manifest("\"box\": [128, 1]", "\"box\": [2, 1]")),
      "k.json: /params/13/box: innermost box extent is 8 bytes; TMA needs a "
      "multiple of 16 bytes");
}

//===----------------------------------------------------------------------===//
// INT8: s8 x s8 -> s32, dequantised by tensor-wise / per-row scales
//===----------------------------------------------------------------------===//

using test::s8SegmentManifest;
using test::withS8Manifest;

TEST(Int8Manifest, S8IsAOneByteDtype) {
  EXPECT_EQ(GGEMM_DTYPE_S8, 7); // ABI: appended after i64
  EXPECT_STREQ(dtypeName(GGEMM_DTYPE_S8), "s8");
  EXPECT_EQ(dtypeSize(GGEMM_DTYPE_S8), 1);
  EXPECT_TRUE(isValidDtype(GGEMM_DTYPE_S8));
  EXPECT_FALSE(isValidDtype(GGEMM_DTYPE_S8 + 1));
}

TEST(Int8Manifest, ParsesTheInt8Manifest) {
  Manifest manifest = parseOk(s8SegmentManifest());
  const ProblemSpec &problem = manifest.problem;
  EXPECT_EQ(problem.aDtype, GGEMM_DTYPE_S8);
  EXPECT_EQ(problem.bDtype, GGEMM_DTYPE_S8);
  EXPECT_EQ(problem.outDtype, GGEMM_DTYPE_BF16);
  EXPECT_EQ(problem.xScaleBlock, ScaleBlock::PerRow);
  EXPECT_EQ(problem.wScaleBlock, ScaleBlock::PerRow);
  ASSERT_EQ(manifest.params.size(), 15u);
  EXPECT_EQ(manifest.params[0].dtype, GGEMM_DTYPE_S8);
  EXPECT_EQ(manifest.params[0].box[0], 128u); // 128 bytes: the swizzle width
  EXPECT_EQ(manifest.params[1].dtype, GGEMM_DTYPE_S8);
  for (size_t i : {13u, 14u}) {
    EXPECT_EQ(manifest.params[i].kind, ParamKind::Pointer);
    EXPECT_EQ(manifest.params[i].dtype, GGEMM_DTYPE_F32);
    EXPECT_FALSE(manifest.params[i].optional);
  }
  EXPECT_EQ(manifest.params[13].tensor, TensorRole::XScale);
  EXPECT_EQ(manifest.params[14].tensor, TensorRole::WScale);
  EXPECT_EQ(expectedTensorDtype(problem, TensorRole::X), GGEMM_DTYPE_S8);
  EXPECT_EQ(expectedTensorDtype(problem, TensorRole::W), GGEMM_DTYPE_S8);
}

TEST(Int8Manifest, AcceptsTensorAndPerRowScalesInAnyMix) {
  struct Case {
    const char *x;
    const char *w;
    ScaleBlock xBlock;
    ScaleBlock wBlock;
  };
  const Case cases[] = {
      {"per_row", "per_row", ScaleBlock::PerRow, ScaleBlock::PerRow},
      {"tensor", "tensor", ScaleBlock::Tensor, ScaleBlock::Tensor},
      {"per_row", "tensor", ScaleBlock::PerRow, ScaleBlock::Tensor},
      {"tensor", "per_row", ScaleBlock::Tensor, ScaleBlock::PerRow},
  };
  for (const Case &c : cases) {
    Manifest manifest = parseOk(s8SegmentManifest(c.x, c.w));
    EXPECT_EQ(manifest.problem.xScaleBlock, c.xBlock) << c.x;
    EXPECT_EQ(manifest.problem.wScaleBlock, c.wBlock) << c.w;
  }
  // Every float output, and a masked kernel too.
  const std::pair<const char *, ggemm_dtype> outputs[] = {
      {"\"out_dtype\": \"f16\"", GGEMM_DTYPE_F16},
      {"\"out_dtype\": \"f32\"", GGEMM_DTYPE_F32}};
  for (const auto &[key, dtype] : outputs)
    EXPECT_EQ(parseOk(withS8Manifest("\"out_dtype\": \"bf16\"", key))
                  .problem.outDtype,
              dtype);
  std::string masked =
      withS8Manifest("\"segment_matmul\"", "\"masked_matmul\"");
  EXPECT_EQ(parseOk(test::replaced(masked, "\"seg_indptr\"", "\"masked_m\""))
                .problem.op,
            Op::MaskedMatmul);
}

TEST(Int8Manifest, RejectsInt8WithoutScales) {
  std::string text = withS8Manifest(
      "\"x_scale_block\": \"per_row\", \"w_scale_block\": \"per_row\"",
      "\"x_scale_block\": null, \"w_scale_block\": null");
  text =
      test::replaced(text, std::string(",\n    ") + test::kXScalePointer, "");
  text =
      test::replaced(text, std::string(",\n    ") + test::kWScalePointer, "");
  const char *const missing =
      "k.json: /problem/x_scale_block: missing, but s8 operands need "
      "x_scale_block and w_scale_block (\"tensor\" or \"per_row\") to "
      "dequantise the int32 accumulator";
  EXPECT_CONTAINS(parseError(text), missing);
  EXPECT_CONTAINS(
      parseError(test::replaced(
          text, ",\n    \"x_scale_block\": null, \"w_scale_block\": null", "")),
      missing);
  // One of the two is the generic error of scales that come together.
  EXPECT_CONTAINS(
      parseError(withS8Manifest("\"w_scale_block\": \"per_row\"",
                                "\"w_scale_block\": null")),
      "k.json: /problem/w_scale_block: missing while x_scale_block is "
      "\"per_row\"");
}

TEST(Int8Manifest, RejectsBlockScales) {
  EXPECT_CONTAINS(parseError(s8SegmentManifest("1x128", "128x128")),
                  "k.json: /problem/x_scale_block: s8 operands take "
                  "\"tensor\" or \"per_row\" scales, got \"1x128\" (block "
                  "scales are for fp8)");
  EXPECT_CONTAINS(parseError(s8SegmentManifest("per_row", "128x128")),
                  "k.json: /problem/w_scale_block: s8 operands take "
                  "\"tensor\" or \"per_row\" scales, got \"128x128\" (block "
                  "scales are for fp8)");
  EXPECT_CONTAINS(parseError(s8SegmentManifest("1x128", "tensor")),
                  "k.json: /problem/x_scale_block: s8 operands take "
                  "\"tensor\" or \"per_row\" scales, got \"1x128\"");
}

TEST(Int8Manifest, RejectsMixedOperandDtypes) {
  EXPECT_CONTAINS(
      parseError(
          withS8Manifest("\"b_dtype\": \"s8\"", "\"b_dtype\": \"f8e4m3\"")),
      "k.json: /problem/b_dtype: expected s8 like a_dtype (x and w of an "
      "int8 kernel are both s8), got f8e4m3");
  EXPECT_CONTAINS(
      parseError(
          withS8Manifest("\"a_dtype\": \"s8\"", "\"a_dtype\": \"bf16\"")),
      "k.json: /problem/a_dtype: expected s8 like b_dtype (x and w of an "
      "int8 kernel are both s8), got bf16");
}

TEST(Int8Manifest, RejectsNonFloatOutputs) {
  // An e4m3 y comes with its scales (FP8 output, below), from any input.
  EXPECT_CONTAINS(
      parseError(withS8Manifest("\"out_dtype\": \"bf16\"",
                                "\"out_dtype\": \"f8e4m3\"")),
      "k.json: /problem/y_scale_block: missing, but an f8e4m3 y needs "
      "y_scale_block \"1x128\"");
  EXPECT_EQ(parseOk(test::fp8OutOf(s8SegmentManifest())).problem.outDtype,
            GGEMM_DTYPE_F8E4M3);
  EXPECT_CONTAINS(
      parseError(withS8Manifest("\"out_dtype\": \"bf16\"",
                                "\"out_dtype\": \"f8e5m2\"")),
      "k.json: /problem/out_dtype: segment_matmul writes y as bf16, f16, f32 "
      "or f8e4m3 (with y_scale_block \"1x128\"), got f8e5m2");
  // The accumulator's s32 is not an output dtype of any kernel.
  EXPECT_CONTAINS(parseError(withS8Manifest("\"out_dtype\": \"bf16\"",
                                            "\"out_dtype\": \"s8\"")),
                  "k.json: /problem/out_dtype: expected one of bf16, f16, "
                  "f32, f8e4m3 or f8e5m2, got string \"s8\"");
}

TEST(Int8Manifest, DescriptorsFollowTheOperandDtype) {
  // x's and w's descriptors say s8; any other element type is refused.
  EXPECT_CONTAINS(
      parseError(withS8Manifest("\"tensor\": \"x\", \"dtype\": \"s8\"",
                                "\"tensor\": \"x\", \"dtype\": \"f8e4m3\"")),
      "k.json: /params/0/dtype: tensor \"x\" has dtype s8 in this problem, "
      "got f8e4m3");
  EXPECT_CONTAINS(
      parseError(test::replaced(test::fp8SegmentManifest(),
                                "\"tensor\": \"w\", \"dtype\": \"f8e4m3\"",
                                "\"tensor\": \"w\", \"dtype\": \"s8\"")),
      "k.json: /params/1/dtype: tensor \"w\" has dtype f8e4m3 in this "
      "problem, got s8");
  // 1-byte rows: 64 s8 are 64 bytes, not the 128-byte swizzle.
  EXPECT_CONTAINS(
      parseError(withS8Manifest("\"box\": [128, 128]", "\"box\": [64, 128]")),
      "k.json: /params/0/box: innermost box extent is 64 bytes, expected the "
      "swizzle width 128 bytes");
  EXPECT_CONTAINS(
      parseError(withS8Manifest("\"box\": [128, 128], \"swizzle\": \"128B\", "
                                "\"oob_fill\": \"zero\"",
                                "\"box\": [128, 128], \"swizzle\": \"128B\", "
                                "\"oob_fill\": \"nan\"")),
      "k.json: /params/0/oob_fill: \"nan\" fill is not available for s8 "
      "tensors (TMA sees them as uint8)");
  // s8 pointers may say their dtype, and it must agree.
  EXPECT_CONTAINS(
      parseError(withS8Manifest("\"tensor\": \"y\"",
                                "\"tensor\": \"y\", \"dtype\": \"s8\"")),
      "k.json: /params/2/dtype: tensor \"y\" has dtype bf16 in this problem, "
      "got s8");
}

//===----------------------------------------------------------------------===//
// FP8 output: an e4m3 y quantised in the epilogue, with its 1x128 scales
//===----------------------------------------------------------------------===//

using test::fp8OutOf;
using test::withFp8OutManifest;

TEST(Fp8OutManifest, ParsesTheCompilersManifest) {
  Manifest manifest = parseOk(test::kFp8OutManifest);
  const ProblemSpec &problem = manifest.problem;
  EXPECT_EQ(problem.op, Op::SegmentMatmul);
  EXPECT_EQ(problem.aDtype, GGEMM_DTYPE_BF16);
  EXPECT_EQ(problem.outDtype, GGEMM_DTYPE_F8E4M3);
  EXPECT_EQ(problem.yScaleBlock, ScaleBlock::Block1x128);
  EXPECT_EQ(problem.xScaleBlock, ScaleBlock::None);
  EXPECT_EQ(problem.activation, Activation::Silu);
  EXPECT_EQ(expectedTensorDtype(problem, TensorRole::Y), GGEMM_DTYPE_F8E4M3);
  EXPECT_EQ(expectedTensorDtype(problem, TensorRole::YScale), GGEMM_DTYPE_F32);
  ASSERT_EQ(manifest.params.size(), 17u);
  const ParamSpec &yScale = manifest.params[14];
  EXPECT_EQ(yScale.kind, ParamKind::Pointer);
  EXPECT_EQ(yScale.tensor, TensorRole::YScale);
  EXPECT_EQ(yScale.dtype, GGEMM_DTYPE_F32);
  EXPECT_FALSE(yScale.optional);
  EXPECT_EQ(manifest.params[15].source, ScalarSource::YScaleStrideRow);
  EXPECT_EQ(manifest.params[16].source, ScalarSource::YScaleStrideCol);
  for (int i : {15, 16})
    EXPECT_EQ(manifest.params[i].dtype, GGEMM_DTYPE_I64);
  EXPECT_TRUE(manifest.usesTensor(TensorRole::YScale));
  EXPECT_STREQ(tensorRoleName(TensorRole::YScale), "y_scale");
  // The forward GEMMs take y_scale; the other ops do not.
  for (Op op : {Op::SegmentMatmul, Op::MaskedMatmul, Op::BatchedMatmul})
    EXPECT_TRUE(tensorExistsForOp(TensorRole::YScale, op)) << opName(op);
  for (Op op : {Op::SegmentMatmulK, Op::SortByExpert, Op::Quantize})
    EXPECT_FALSE(tensorExistsForOp(TensorRole::YScale, op)) << opName(op);
}

TEST(Fp8OutManifest, AnyInputAndEveryForwardOp) {
  // bf16, f16, fp8 (block or epilogue scales) and s8 inputs.
  EXPECT_EQ(parseOk(fp8OutOf(test::kSegmentManifest)).problem.yScaleBlock,
            ScaleBlock::Block1x128);
  std::string f16 =
      test::replaced(fp8OutOf(test::kSegmentManifest), "bf16", "f16");
  EXPECT_EQ(parseOk(f16).problem.aDtype, GGEMM_DTYPE_F16);
  Manifest fp8 = parseOk(fp8OutOf(test::fp8SegmentManifest()));
  EXPECT_EQ(fp8.problem.xScaleBlock, ScaleBlock::Block1x128);
  ASSERT_EQ(fp8.params.size(), 18u);
  EXPECT_EQ(fp8.params[13].tensor, TensorRole::XScale);
  EXPECT_EQ(fp8.params[15].tensor, TensorRole::YScale);
  EXPECT_EQ(parseOk(fp8OutOf(test::s8SegmentManifest("tensor", "per_row")))
                .problem.outDtype,
            GGEMM_DTYPE_F8E4M3);
  std::string masked =
      test::replaced(fp8OutOf(test::kSegmentManifest), "\"segment_matmul\"",
                     "\"masked_matmul\"");
  masked = test::replaced(masked, "\"seg_indptr\"", "\"masked_m\"");
  EXPECT_EQ(parseOk(masked).problem.op, Op::MaskedMatmul);
  std::string batched =
      test::replaced(masked, "\"masked_matmul\"", "\"batched_matmul\"");
  batched = test::replaced(batched,
                           "{\"name\": \"group_rows\", \"kind\": "
                           "\"pointer\", \"tensor\": \"masked_m\", "
                           "\"optional\": false},\n    ",
                           "");
  Manifest batchedManifest = parseOk(batched);
  EXPECT_EQ(batchedManifest.problem.op, Op::BatchedMatmul);
  EXPECT_EQ(batchedManifest.problem.yScaleBlock, ScaleBlock::Block1x128);
  // Gated and gathered: y has the segment rows still.
  Manifest moe = parseOk(fp8OutOf(test::moeSegmentManifest(
      {/*gather=*/true, false, false, /*swiglu=*/true})));
  EXPECT_EQ(moe.problem.activation, Activation::Swiglu);
  EXPECT_TRUE(moe.problem.hasRowIndices);
  // null is the absent key's "no scales".
  EXPECT_EQ(parseOk(test::withManifest("\"accumulate\": false",
                                       "\"accumulate\": false, "
                                       "\"y_scale_block\": null"))
                .problem.yScaleBlock,
            ScaleBlock::None);
}

TEST(Fp8OutManifest, RejectsInconsistentProblems) {
  struct Case {
    std::string text;
    const char *message;
  };
  const Case cases[] = {
      {withFp8OutManifest(", \"y_scale_block\": \"1x128\"", ""),
       "k.json: /problem/y_scale_block: missing, but an f8e4m3 y needs "
       "y_scale_block \"1x128\" (the epilogue writes its scales to y_scale)"},
      {withFp8OutManifest("\"y_scale_block\": \"1x128\"",
                          "\"y_scale_block\": null"),
       "k.json: /problem/y_scale_block: missing, but an f8e4m3 y needs "
       "y_scale_block"},
      {withFp8OutManifest("\"out_dtype\": \"f8e4m3\"",
                          "\"out_dtype\": \"bf16\""),
       "k.json: /problem/y_scale_block: \"1x128\" scales an f8e4m3 y, but "
       "out_dtype is bf16"},
      {withFp8OutManifest("\"y_scale_block\": \"1x128\"",
                          "\"y_scale_block\": \"128x128\""),
       "k.json: /problem/y_scale_block: expected null or one of 1x128, got "
       "string \"128x128\""},
      {withFp8OutManifest("\"out_dtype\": \"f8e4m3\"",
                          "\"out_dtype\": \"f8e5m2\""),
       "k.json: /problem/out_dtype: segment_matmul writes y as bf16, f16, "
       "f32 or f8e4m3 (with y_scale_block \"1x128\"), got f8e5m2"},
      {withFp8OutManifest("\"accumulate\": false", "\"accumulate\": true"),
       "k.json: /problem/accumulate: accumulate adds to y, but an f8e4m3 y "
       "is quantised from the values the epilogue computes: expected false, "
       "got true"},
      {fp8OutOf(test::moeSegmentManifest({false, true, true, false})),
       "k.json: /problem/atomic: atomic adds to y, but an f8e4m3 y is "
       "quantised from the values the epilogue computes: expected false, got "
       "true"},
      {fp8OutOf(test::moeSegmentManifest({false, true, false, false})),
       "k.json: /problem/has_scatter_indices: has_scatter_indices scatters "
       "rows of y, but an f8e4m3 y and its scales have the segment rows: "
       "expected false, got true"},
      // segment_matmul_k writes dw, which has no scales.
      {test::withKRaggedManifest("\"accumulate\": false",
                                 "\"accumulate\": false, \"y_scale_block\": "
                                 "\"1x128\""),
       "k.json: /problem/y_scale_block: segment_matmul_k writes no f8e4m3 "
       "dw, so it has no y_scale, got \"1x128\""},
      {test::withKRaggedManifest("\"out_dtype\": \"f32\"",
                                 "\"out_dtype\": \"f8e4m3\""),
       "k.json: /problem/out_dtype: segment_matmul_k writes dw as f32, bf16 "
       "or f16, got f8e4m3"},
      {test::withQuantizeManifest("\"rank\": 2",
                                  "\"rank\": 2, \"y_scale_block\": \"1x128\""),
       "k.json: /problem/y_scale_block: unknown key"},
  };
  for (const Case &c : cases)
    EXPECT_CONTAINS(parseError(c.text), c.message);
}

TEST(Fp8OutManifest, ParamsFollowTheProblem) {
  const std::string yScale = std::string(",\n    ") + test::kYScalePointer;
  const std::string row = std::string(",\n    ") + test::kYScaleStrideRow;
  const std::string col = std::string(",\n    ") + test::kYScaleStrideCol;
  const std::string text = fp8OutOf(test::kSegmentManifest);
  EXPECT_CONTAINS(parseError(test::replaced(text, yScale, "")),
                  "k.json: /params: no parameter passes tensor \"y_scale\" "
                  "(problem.y_scale_block is \"1x128\")");
  EXPECT_CONTAINS(parseError(test::replaced(text, row, "")),
                  "k.json: /params: no scalar parameter carries "
                  "\"y_scale_stride_row\" (problem.y_scale_block is "
                  "\"1x128\": the kernel writes y_scale at its strides)");
  EXPECT_CONTAINS(parseError(test::replaced(text, col, "")),
                  "no scalar parameter carries \"y_scale_stride_col\"");
  // A kernel without an e4m3 y has none of them.
  std::string bf16 =
      test::replaced(test::replaced(text, "\"out_dtype\": \"f8e4m3\"",
                                    "\"out_dtype\": \"bf16\""),
                     ", \"y_scale_block\": \"1x128\"", "");
  EXPECT_CONTAINS(parseError(bf16),
                  "k.json: /params/13/tensor: tensor \"y_scale\" needs "
                  "problem.y_scale_block (an f8e4m3 y), but out_dtype is bf16");
  EXPECT_CONTAINS(parseError(test::replaced(bf16, yScale, "")),
                  "k.json: /params/13/value: string \"y_scale_stride_row\" is "
                  "a value of a kernel that writes an f8e4m3 y and its "
                  "y_scale, which needs problem.y_scale_block");
  // Nor do the ops without a y.
  EXPECT_CONTAINS(
      parseError(test::withKRaggedManifest(
          "\"tensor\": \"row_scale\", \"optional\": true",
          "\"tensor\": \"y_scale\", \"optional\": true")),
      "k.json: /params/6/tensor: tensor \"y_scale\" does not exist for "
      "segment_matmul_k");
  EXPECT_CONTAINS(parseError(test::withQuantizeManifest(
                      "\"value\": \"scale_stride_col\"",
                      "\"value\": \"y_scale_stride_col\"")),
                  "k.json: /params/8/value: quantize's scalars are");
  // y_scale is f32, by pointer (the epilogue stores it one value at a
  // time: no descriptor).
  EXPECT_CONTAINS(
      parseError(withFp8OutManifest(
          "\"name\": \"y_scale\", \"optional\": false",
          "\"name\": \"y_scale\", \"optional\": false, \"dtype\": \"bf16\"")),
      "k.json: /params/14/dtype: tensor \"y_scale\" has dtype f32 in this "
      "problem, got bf16");
  EXPECT_CONTAINS(
      parseError(withFp8OutManifest(
          "{\"kind\": \"pointer\", \"name\": \"y_scale\", \"optional\": "
          "false, \"tensor\": \"y_scale\"}",
          "{\"name\": \"y_scale\", \"kind\": \"tma_descriptor\", \"tensor\": "
          "\"y_scale\", \"dtype\": \"f32\", \"rank\": 2, \"box\": [128, 1], "
          "\"swizzle\": \"none\"}")),
      "k.json: /params/14/tensor: a tma_descriptor can describe x, w, y or "
      "x_scale, got \"y_scale\"");
}

TEST(Manifest, ScalarLiteralsMustFitTheirDtype) {
  EXPECT_CONTAINS(
      parseError(withManifest("\"dtype\": \"i32\", \"value\": \"k\"",
                              "\"dtype\": \"i32\", \"value\": 4294967296")),
      "k.json: /params/11/value: literal 4294967296 does not fit the "
      "scalar's dtype i32");
}

TEST(Manifest, ErrorsNameTheBundleFileAndTheField) {
  test::TempDir dir;
  std::string path = dir.write(
      "k.json", withManifest("\"tensor\": \"seg_indptr\"",
                             "\"tensor\": \"seg_indptr\", \"dtype\": \"i64\""));
  Manifest manifest;
  Status status = loadManifestFile(path, manifest);
  EXPECT_EQ(status.getCode(), GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_EQ(status.getMessage(),
            path + ": /params/3/dtype: tensor \"seg_indptr\" has dtype i32 in "
                   "this problem, got i64");
  EXPECT_TRUE(manifest.entry.empty());
}

TEST(Manifest, FileErrors) {
  Manifest manifest;
  Status status = loadManifestFile("/nonexistent/k.json", manifest);
  EXPECT_EQ(status.getCode(), GGEMM_ERROR_IO);
  EXPECT_CONTAINS(status.getMessage(),
                  "cannot open manifest '/nonexistent/k.json'");

  test::TempDir dir;
  std::string path = dir.write("k.json", test::kSegmentManifest);
  status = loadManifestFile(path, manifest);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(manifest.cubinPath, dir.file("k.cubin"));
  EXPECT_EQ(manifest.sourceName, path);
}

//===----------------------------------------------------------------------===//
// segment_matmul_k: K-ragged weight gradients (issue 12)
//===----------------------------------------------------------------------===//

using test::kRaggedManifest;
using test::withKRaggedManifest;

TEST(KRaggedManifest, ParsesNk) {
  Manifest manifest = parseOk(kRaggedManifest());
  const ProblemSpec &problem = manifest.problem;
  EXPECT_EQ(problem.op, Op::SegmentMatmulK);
  EXPECT_EQ(problem.aDtype, GGEMM_DTYPE_BF16);
  EXPECT_EQ(problem.outDtype, GGEMM_DTYPE_F32);
  EXPECT_EQ(problem.weightLayout, WeightLayout::NK);
  EXPECT_EQ(problem.n, 4096);
  EXPECT_EQ(problem.k, 7168);
  ASSERT_EQ(manifest.params.size(), 14u);
  EXPECT_EQ(manifest.params[0].tensor, TensorRole::Dy);
  EXPECT_EQ(manifest.params[1].tensor, TensorRole::X);
  EXPECT_EQ(manifest.params[2].tensor, TensorRole::Dw);
  EXPECT_EQ(manifest.params[2].dtype, GGEMM_DTYPE_F32);
  EXPECT_EQ(manifest.params[3].tensor, TensorRole::SegIndptr);
  // The ABI's bias slot: an optional pointer that is always null.
  EXPECT_EQ(manifest.params[5].tensor, TensorRole::Bias);
  EXPECT_TRUE(manifest.params[5].optional);
  EXPECT_EQ(manifest.params[13].source, ScalarSource::NumWeights);
  EXPECT_TRUE(manifest.usesTensor(TensorRole::Dy));
  EXPECT_FALSE(manifest.usesTensor(TensorRole::W));
  EXPECT_FALSE(manifest.usesTensor(TensorRole::Y));
  EXPECT_STREQ(tensorRoleName(TensorRole::Dy), "dy");
  EXPECT_STREQ(tensorRoleName(TensorRole::Dw), "dw");
  EXPECT_STREQ(opName(Op::SegmentMatmulK), "segment_matmul_k");
}

TEST(KRaggedManifest, ParsesKn) {
  Manifest manifest = parseOk(kRaggedManifest(/*kn=*/true));
  EXPECT_EQ(manifest.problem.weightLayout, WeightLayout::KN);
  EXPECT_EQ(manifest.params[0].tensor, TensorRole::X);
  EXPECT_EQ(manifest.params[1].tensor, TensorRole::Dy);
  // f16 gradients of f16 inputs, an absent activation, accumulate.
  std::string text = withKRaggedManifest(
      "\"a_dtype\": \"bf16\", \"b_dtype\": \"bf16\", \"out_dtype\": \"f32\"",
      "\"a_dtype\": \"f16\", \"b_dtype\": \"f16\", \"out_dtype\": \"f16\"");
  text = test::replaced(text, "\"dtype\": \"bf16\"", "\"dtype\": \"f16\"");
  text = test::replaced(text, "\"accumulate\": false, \"activation\": \"none\"",
                        "\"accumulate\": true");
  Manifest f16 = parseOk(text);
  EXPECT_EQ(f16.problem.aDtype, GGEMM_DTYPE_F16);
  EXPECT_EQ(f16.problem.outDtype, GGEMM_DTYPE_F16);
  EXPECT_TRUE(f16.problem.accumulate);
}

TEST(KRaggedManifest, RejectsE5m2S8AndF32Inputs) {
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest(
          "\"a_dtype\": \"bf16\", \"b_dtype\": \"bf16\"",
          "\"a_dtype\": \"f8e5m2\", \"b_dtype\": \"f8e5m2\"")),
      "k.json: /problem/a_dtype: segment_matmul_k reads dy and x as bf16, "
      "f16 or f8e4m3, got f8e5m2 (fp8 K-ragged reads e4m3 operands only)");
  EXPECT_CONTAINS(
      parseError(
          withKRaggedManifest("\"a_dtype\": \"bf16\", \"b_dtype\": \"bf16\"",
                              "\"a_dtype\": \"s8\", \"b_dtype\": \"s8\"")),
      "k.json: /problem/a_dtype: segment_matmul_k reads dy and x as bf16, "
      "f16 or f8e4m3, got s8 (int8 K-ragged is not defined)");
  EXPECT_CONTAINS(
      parseError(
          withKRaggedManifest("\"a_dtype\": \"bf16\"", "\"a_dtype\": \"f32\"")),
      "k.json: /problem/a_dtype: segment_matmul_k reads dy and x as bf16, "
      "f16 or f8e4m3, got f32");
}

TEST(KRaggedManifest, RejectsDifferentInputDtypes) {
  EXPECT_CONTAINS(
      parseError(
          withKRaggedManifest("\"b_dtype\": \"bf16\"", "\"b_dtype\": \"f16\"")),
      "k.json: /problem/b_dtype: expected a_dtype (bf16): dy and x of "
      "segment_matmul_k have one dtype, got f16");
}

TEST(KRaggedManifest, RejectsFp8Gradients) {
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest("\"out_dtype\": \"f32\"",
                                     "\"out_dtype\": \"f8e5m2\"")),
      "k.json: /problem/out_dtype: segment_matmul_k writes dw as f32, bf16 or "
      "f16, got f8e5m2");
}

TEST(KRaggedManifest, RejectsStaticTokenRows) {
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest("\"m\": -1", "\"m\": 1000")),
      "k.json: /problem/m: segment_matmul_k's token rows are always dynamic, "
      "expected -1, got 1000");
}

TEST(KRaggedManifest, RejectsWeightIndices) {
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest("\"has_weight_indices\": false",
                                     "\"has_weight_indices\": true")),
      "k.json: /problem/has_weight_indices: segment_matmul_k has no "
      "weight_indices, expected false, got true");
}

TEST(KRaggedManifest, RejectsBias) {
  EXPECT_CONTAINS(parseError(withKRaggedManifest("\"has_bias\": false",
                                                 "\"has_bias\": true")),
                  "k.json: /problem/has_bias: segment_matmul_k has no bias, "
                  "expected false, got true");
}

TEST(KRaggedManifest, RejectsRowScale) {
  EXPECT_CONTAINS(parseError(withKRaggedManifest("\"has_row_scale\": false",
                                                 "\"has_row_scale\": true")),
                  "k.json: /problem/has_row_scale: segment_matmul_k has no "
                  "row_scale, expected false, got true");
}

TEST(KRaggedManifest, RejectsScaleBlocks) {
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest(
          "\"accumulate\": false",
          "\"accumulate\": false, \"x_scale_block\": \"1x128\", "
          "\"w_scale_block\": \"128x128\"")),
      "k.json: /problem/x_scale_block: segment_matmul_k of bf16 dy and x has "
      "no scales (only f8e4m3 dy and x take 1x128 scales), got \"1x128\"");
  // One block alone is blamed on itself, not on the missing partner.
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest(
          "\"accumulate\": false",
          "\"accumulate\": false, \"w_scale_block\": \"tensor\"")),
      "k.json: /problem/w_scale_block: segment_matmul_k of bf16 dy and x has "
      "no scales (only f8e4m3 dy and x take 1x128 scales), got \"tensor\"");
  // Transposed bf16 operands have none either.
  EXPECT_CONTAINS(
      parseError(test::replaced(
          test::transposedKRaggedManifest(), "\"transposed\": true",
          "\"transposed\": true, \"x_scale_block\": \"1x128\", "
          "\"w_scale_block\": \"1x128\"")),
      "k.json: /problem/x_scale_block: segment_matmul_k of bf16 dy and x has "
      "no scales");
  // null is no scales, as for the other ops.
  parseOk(withKRaggedManifest("\"accumulate\": false",
                              "\"accumulate\": false, \"x_scale_block\": null, "
                              "\"w_scale_block\": null"));
}

TEST(KRaggedManifest, RejectsActivations) {
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest("\"activation\": \"none\"",
                                     "\"activation\": \"silu\"")),
      "k.json: /problem/activation: segment_matmul_k has no activation, "
      "expected \"none\", got string \"silu\"");
  // The other ops still leave the activation to the compiler.
  parseOk(withManifest("\"accumulate\": false",
                       "\"accumulate\": false, \"activation\": \"silu\""));
}

TEST(KRaggedManifest, NumWeightsIsNumGroups) {
  EXPECT_CONTAINS(
      parseError(
          withKRaggedManifest("\"num_weights\": 8", "\"num_weights\": 4")),
      "k.json: /problem/num_weights: num_weights (4) must equal num_groups "
      "(8)");
}

TEST(KRaggedManifest, RejectsTensorsOfOtherOps) {
  // w, y and the scales do not exist for the op, whatever the kind.
  EXPECT_CONTAINS(parseError(withKRaggedManifest("\"tensor\": \"dw\"",
                                                 "\"tensor\": \"y\"")),
                  "k.json: /params/2/tensor: tensor \"y\" does not exist for "
                  "segment_matmul_k");
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest("\"tensor\": \"x\"", "\"tensor\": \"w\"")),
      "k.json: /params/1/tensor: tensor \"w\" does not exist for "
      "segment_matmul_k");
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest("\"tensor\": \"row_scale\"",
                                     "\"tensor\": \"masked_m\"")),
      "k.json: /params/6/tensor: tensor \"masked_m\" does not exist for "
      "segment_matmul_k");
  // The null slots of the ABI are optional pointers: required ones and
  // descriptors are rejected.
  EXPECT_CONTAINS(
      parseError(
          withKRaggedManifest("\"tensor\": \"bias\", \"optional\": true",
                              "\"tensor\": \"bias\", \"optional\": false")),
      "k.json: /params/5: tensor \"bias\" is marked required (optional: "
      "false) but the problem is compiled without it");
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest(
          "{\"name\": \"row_scale\", \"kind\": \"pointer\", \"tensor\": "
          "\"row_scale\", \"optional\": true}",
          "{\"name\": \"row_scale\", \"kind\": \"tma_descriptor\", "
          "\"tensor\": \"row_scale\", \"dtype\": \"f32\", \"rank\": 2, "
          "\"box\": [32, 64], \"swizzle\": \"128B\"}")),
      "k.json: /params/6/tensor: tensor \"row_scale\" does not exist for "
      "segment_matmul_k");
  // And the other ops do not take dy or dw.
  EXPECT_CONTAINS(
      parseError(withManifest("\"tensor\": \"y\"", "\"tensor\": \"dw\"")),
      "k.json: /params/2/tensor: tensor \"dw\" does not exist for "
      "segment_matmul");
}

TEST(KRaggedManifest, DescriptorsDescribeDyXOrDw) {
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest(
          "{\"name\": \"group_rows\", \"kind\": \"pointer\", \"tensor\": "
          "\"seg_indptr\", \"optional\": false}",
          "{\"name\": \"group_rows\", \"kind\": \"tma_descriptor\", "
          "\"tensor\": \"seg_indptr\", \"dtype\": \"f32\", \"rank\": 2, "
          "\"box\": [32, 64], \"swizzle\": \"128B\"}")),
      "k.json: /params/3/tensor: a tma_descriptor of segment_matmul_k can "
      "describe dy, x, dw, dy_scale or x_scale, got \"seg_indptr\"");
  // dw's descriptor, for a staged epilogue, parses.
  std::string staged = withKRaggedManifest(
      R"json({"name": "num_weights", "kind": "scalar", "dtype": "i32", "value": "num_weights"})json",
      R"json({"name": "num_weights", "kind": "scalar", "dtype": "i32", "value": "num_weights"},
    {"name": "y_desc", "kind": "tma_descriptor", "tensor": "dw", "dtype": "f32", "rank": 2, "box": [32, 64], "swizzle": "128B", "oob_fill": "zero"})json");
  Manifest manifest;
  Status status = parseManifest(staged, "k.json", "", manifest);
  EXPECT_TRUE(status.ok()) << status.getMessage();
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest("\"tensor\": \"dy\", \"dtype\": "
                                     "\"bf16\", \"rank\": 2, \"box\": [64, 64]",
                                     "\"tensor\": \"dy\", \"dtype\": "
                                     "\"bf16\", \"rank\": 3, \"box\": [64, "
                                     "64, 1]")),
      "k.json: /params/0/rank: a descriptor of \"dy\" for segment_matmul_k "
      "has rank 2 (columns, token rows), got 3");
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest("\"tensor\": \"dy\", \"dtype\": \"bf16\"",
                                     "\"tensor\": \"dy\", \"dtype\": "
                                     "\"f16\"")),
      "k.json: /params/0/dtype: tensor \"dy\" has dtype bf16 in this problem, "
      "got f16");
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest(
          "{\"name\": \"y\", \"kind\": \"pointer\", \"tensor\": \"dw\"}",
          "{\"name\": \"y\", \"kind\": \"pointer\", \"tensor\": \"dw\", "
          "\"dtype\": \"bf16\"}")),
      "k.json: /params/2/dtype: tensor \"dw\" has dtype f32 in this problem, "
      "got bf16");
}

TEST(KRaggedManifest, EveryTensorMustReachTheKernel) {
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest(
          "{\"name\": \"y\", \"kind\": \"pointer\", \"tensor\": \"dw\"},", "")),
      "k.json: /params: no parameter passes tensor \"dw\" (segment_matmul_k "
      "writes dw)");
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest(
          "{\"name\": \"a_desc\", \"kind\": \"tma_descriptor\", \"tensor\": "
          "\"dy\", \"dtype\": \"bf16\", \"rank\": 2, \"box\": [64, 64], "
          "\"swizzle\": \"128B\", \"oob_fill\": \"zero\"},",
          "")),
      "k.json: /params: no parameter passes tensor \"dy\" (segment_matmul_k "
      "reads dy)");
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest(
          "{\"name\": \"group_rows\", \"kind\": \"pointer\", \"tensor\": "
          "\"seg_indptr\", \"optional\": false},",
          "")),
      "k.json: /params: no parameter passes tensor \"seg_indptr\" "
      "(segment_matmul_k reads seg_indptr)");
}

//===----------------------------------------------------------------------===//
// segment_matmul_k of transposed operands, and its FP8 form
//===----------------------------------------------------------------------===//

using test::fp8KRaggedManifest;
using test::withFp8KRaggedManifest;

TEST(Fp8KRaggedManifest, ParsesNk) {
  Manifest manifest = parseOk(fp8KRaggedManifest());
  const ProblemSpec &problem = manifest.problem;
  EXPECT_EQ(problem.op, Op::SegmentMatmulK);
  EXPECT_EQ(problem.aDtype, GGEMM_DTYPE_F8E4M3);
  EXPECT_EQ(problem.bDtype, GGEMM_DTYPE_F8E4M3);
  EXPECT_EQ(problem.outDtype, GGEMM_DTYPE_F32);
  EXPECT_TRUE(problem.transposed);
  EXPECT_EQ(problem.xScaleBlock, ScaleBlock::Block1x128);
  EXPECT_EQ(problem.wScaleBlock, ScaleBlock::Block1x128);
  EXPECT_EQ(problem.yScaleBlock, ScaleBlock::None);
  EXPECT_EQ(manifest.blockM, 128);
  EXPECT_EQ(manifest.blockN, 192);
  ASSERT_EQ(manifest.params.size(), 16u);
  const ParamSpec &a = manifest.params[0];
  EXPECT_EQ(a.tensor, TensorRole::Dy);
  EXPECT_EQ(a.dtype, GGEMM_DTYPE_F8E4M3);
  EXPECT_EQ(a.box[0], 128u);
  EXPECT_EQ(a.box[1], 128u);
  EXPECT_EQ(manifest.params[1].tensor, TensorRole::X);
  EXPECT_EQ(manifest.params[1].box[1], 192u);
  EXPECT_EQ(manifest.params[13].source, ScalarSource::NumWeights);
  const ParamSpec &aScale = manifest.params[14];
  EXPECT_EQ(aScale.name, "a_scale_desc");
  EXPECT_EQ(aScale.kind, ParamKind::TmaDescriptor);
  EXPECT_EQ(aScale.tensor, TensorRole::DyScale);
  EXPECT_EQ(aScale.dtype, GGEMM_DTYPE_F32);
  EXPECT_EQ(aScale.rank, 2);
  EXPECT_EQ(aScale.box[0], 132u);
  EXPECT_EQ(aScale.box[1], 1u);
  EXPECT_EQ(aScale.swizzle, Swizzle::None);
  EXPECT_EQ(aScale.oobFill, OobFill::Zero);
  const ParamSpec &bScale = manifest.params[15];
  EXPECT_EQ(bScale.name, "b_scale_desc");
  EXPECT_EQ(bScale.tensor, TensorRole::XScale);
  EXPECT_EQ(bScale.box[0], 196u);
  EXPECT_TRUE(manifest.usesTensor(TensorRole::DyScale));
  EXPECT_TRUE(manifest.usesTensor(TensorRole::XScale));
  EXPECT_FALSE(manifest.usesTensor(TensorRole::WScale));
  EXPECT_STREQ(tensorRoleName(TensorRole::DyScale), "dy_scale");
  EXPECT_EQ(expectedTensorDtype(problem, TensorRole::DyScale), GGEMM_DTYPE_F32);
  EXPECT_TRUE(tensorExistsForOp(TensorRole::DyScale, Op::SegmentMatmulK));
  EXPECT_TRUE(tensorExistsForOp(TensorRole::XScale, Op::SegmentMatmulK));
  EXPECT_FALSE(tensorExistsForOp(TensorRole::DyScale, Op::SegmentMatmul));
  EXPECT_FALSE(tensorExistsForOp(TensorRole::DyScale, Op::MaskedMatmul));
  EXPECT_FALSE(tensorExistsForOp(TensorRole::DyScale, Op::Quantize));
}

TEST(Fp8KRaggedManifest, ParsesKn) {
  Manifest manifest = parseOk(fp8KRaggedManifest(/*kn=*/true));
  EXPECT_EQ(manifest.problem.weightLayout, WeightLayout::KN);
  ASSERT_EQ(manifest.params.size(), 16u);
  // A = x with x_scale, B = dy with dy_scale.
  EXPECT_EQ(manifest.params[0].tensor, TensorRole::X);
  EXPECT_EQ(manifest.params[1].tensor, TensorRole::Dy);
  EXPECT_EQ(manifest.params[14].tensor, TensorRole::XScale);
  EXPECT_EQ(manifest.params[14].box[0], 132u);
  EXPECT_EQ(manifest.params[15].tensor, TensorRole::DyScale);
  EXPECT_EQ(manifest.params[15].box[0], 196u);
}

TEST(Fp8KRaggedManifest, ParsesAStagedEpilogue) {
  // y_desc follows the scale descriptors, as for the forward ops.
  Manifest manifest =
      parseOk(fp8KRaggedManifest(/*kn=*/false, /*staged=*/true));
  ASSERT_EQ(manifest.params.size(), 17u);
  EXPECT_EQ(manifest.params[16].name, "y_desc");
  EXPECT_EQ(manifest.params[16].tensor, TensorRole::Dw);
  // bf16 gradients and accumulation are as for bf16 operands.
  std::string text = withFp8KRaggedManifest("\"out_dtype\": \"f32\"",
                                            "\"out_dtype\": \"bf16\"");
  text = test::replaced(text, "\"index_dtype\": \"i32\"",
                        "\"index_dtype\": \"i64\"");
  text = test::replaced(text, "\"accumulate\": false", "\"accumulate\": true");
  Manifest bf16 = parseOk(text);
  EXPECT_EQ(bf16.problem.outDtype, GGEMM_DTYPE_BF16);
  EXPECT_EQ(bf16.problem.indexDtype, GGEMM_DTYPE_I64);
  EXPECT_TRUE(bf16.problem.accumulate);
}

TEST(KRaggedManifest, TransposedOperandsAreOptionalForBf16) {
  // Absent reads as false: the manifests before the key still load.
  EXPECT_FALSE(parseOk(kRaggedManifest()).problem.transposed);
  EXPECT_FALSE(parseOk(withKRaggedManifest("\"activation\": \"none\"",
                                           "\"activation\": \"none\", "
                                           "\"transposed\": false"))
                   .problem.transposed);
  for (bool kn : {false, true}) {
    Manifest manifest = parseOk(test::transposedKRaggedManifest(kn));
    EXPECT_TRUE(manifest.problem.transposed);
    EXPECT_EQ(manifest.problem.aDtype, GGEMM_DTYPE_BF16);
    EXPECT_EQ(manifest.problem.xScaleBlock, ScaleBlock::None);
    EXPECT_EQ(manifest.params.size(), 14u);
  }
  EXPECT_CONTAINS(parseError(withKRaggedManifest("\"activation\": \"none\"",
                                                 "\"activation\": \"none\", "
                                                 "\"transposed\": 1")),
                  "k.json: /problem/transposed: expected true or false, got 1");
  // The forward ops read x and w as they are.
  EXPECT_CONTAINS(
      parseError(withManifest("\"accumulate\": false",
                              "\"accumulate\": false, \"transposed\": true")),
      "k.json: /problem/transposed: segment_matmul reads x and w as they are "
      "(only segment_matmul_k takes transposed dy and x), expected false, got "
      "true");
  parseOk(withManifest("\"accumulate\": false",
                       "\"accumulate\": false, \"transposed\": false"));
  EXPECT_CONTAINS(parseError(test::withQuantizeManifest(
                      "\"rank\": 2", "\"rank\": 2, \"transposed\": true")),
                  "k.json: /problem/transposed: unknown key");
}

TEST(Fp8KRaggedManifest, NeedsTransposedOperands) {
  EXPECT_CONTAINS(
      parseError(withFp8KRaggedManifest(", \"transposed\": true", "")),
      "k.json: /problem/transposed: missing, but f8e4m3 dy and x of "
      "segment_matmul_k must be given transposed, dy [N, T] and x [K, T] (the "
      "token rows innermost: wgmma's fp8 forms read both operands K-major)");
  EXPECT_CONTAINS(
      parseError(withFp8KRaggedManifest("\"transposed\": true",
                                        "\"transposed\": false")),
      "k.json: /problem/transposed: f8e4m3 dy and x of segment_matmul_k must "
      "be given transposed, dy [N, T] and x [K, T] (the token rows innermost: "
      "wgmma's fp8 forms read both operands K-major), expected true, got "
      "false");
}

TEST(Fp8KRaggedManifest, NeedsOneBy128ScalesOfBoth) {
  EXPECT_CONTAINS(
      parseError(withFp8KRaggedManifest("\"x_scale_block\": \"1x128\", ", "")),
      "k.json: /problem/x_scale_block: missing, but f8e4m3 dy and x of "
      "segment_matmul_k take 1x128 scales along the token rows (dy_scale and "
      "x_scale): expected \"1x128\"");
  EXPECT_CONTAINS(
      parseError(withFp8KRaggedManifest(", \"w_scale_block\": \"1x128\"", "")),
      "k.json: /problem/w_scale_block: missing, but f8e4m3 dy and x of "
      "segment_matmul_k take 1x128 scales");
  EXPECT_CONTAINS(
      parseError(withFp8KRaggedManifest("\"x_scale_block\": \"1x128\"",
                                        "\"x_scale_block\": null")),
      "k.json: /problem/x_scale_block: missing, but f8e4m3 dy and x");
  EXPECT_CONTAINS(
      parseError(withFp8KRaggedManifest("\"w_scale_block\": \"1x128\"",
                                        "\"w_scale_block\": \"128x128\"")),
      "k.json: /problem/w_scale_block: f8e4m3 dy and x of segment_matmul_k "
      "take 1x128 scales along the token rows (dy_scale and x_scale), "
      "expected \"1x128\", got \"128x128\"");
  EXPECT_CONTAINS(
      parseError(withFp8KRaggedManifest("\"x_scale_block\": \"1x128\"",
                                        "\"x_scale_block\": \"per_row\"")),
      "k.json: /problem/x_scale_block: f8e4m3 dy and x of segment_matmul_k "
      "take 1x128 scales along the token rows (dy_scale and x_scale), "
      "expected \"1x128\", got \"per_row\"");
  EXPECT_CONTAINS(
      parseError(withFp8KRaggedManifest(
          "\"w_scale_block\": \"1x128\"",
          "\"w_scale_block\": \"1x128\", \"y_scale_block\": \"1x128\"")),
      "k.json: /problem/y_scale_block: segment_matmul_k writes no f8e4m3 dw, "
      "so it has no y_scale, got \"1x128\"");
  EXPECT_CONTAINS(
      parseError(withFp8KRaggedManifest("\"out_dtype\": \"f32\"",
                                        "\"out_dtype\": \"f8e4m3\"")),
      "k.json: /problem/out_dtype: segment_matmul_k writes dw as f32, bf16 "
      "or f16, got f8e4m3");
  EXPECT_CONTAINS(
      parseError(withFp8KRaggedManifest("\"b_dtype\": \"f8e4m3\"",
                                        "\"b_dtype\": \"bf16\"")),
      "k.json: /problem/b_dtype: expected a_dtype (f8e4m3): dy and x of "
      "segment_matmul_k have one dtype, got bf16");
}

TEST(Fp8KRaggedManifest, ScalesReachTheKernelByTma) {
  const std::string aScale =
      ",\n    {\"name\": \"a_scale_desc\", \"kind\": \"tma_descriptor\", "
      "\"tensor\": \"dy_scale\", \"dtype\": \"f32\", \"rank\": 2, \"box\": "
      "[132, 1], \"swizzle\": \"none\", \"oob_fill\": \"zero\"}";
  const std::string bScale =
      ",\n    {\"name\": \"b_scale_desc\", \"kind\": \"tma_descriptor\", "
      "\"tensor\": \"x_scale\", \"dtype\": \"f32\", \"rank\": 2, \"box\": "
      "[196, 1], \"swizzle\": \"none\", \"oob_fill\": \"zero\"}";
  EXPECT_CONTAINS(parseError(withFp8KRaggedManifest(aScale, "")),
                  "k.json: /params: no parameter passes tensor \"dy_scale\" "
                  "(problem.x_scale_block and w_scale_block are \"1x128\": "
                  "f8e4m3 dy and x have scales)");
  EXPECT_CONTAINS(parseError(withFp8KRaggedManifest(bScale, "")),
                  "k.json: /params: no parameter passes tensor \"x_scale\" "
                  "(problem.x_scale_block is \"1x128\")");
  EXPECT_CONTAINS(
      parseError(withFp8KRaggedManifest(
          "{\"name\": \"a_scale_desc\", \"kind\": \"tma_descriptor\", "
          "\"tensor\": \"dy_scale\", \"dtype\": \"f32\", \"rank\": 2, \"box\": "
          "[132, 1], \"swizzle\": \"none\", \"oob_fill\": \"zero\"}",
          "{\"name\": \"a_scale\", \"kind\": \"pointer\", \"tensor\": "
          "\"dy_scale\", \"optional\": false}")),
      "k.json: /params/14/kind: segment_matmul_k reads \"dy_scale\" by TMA, "
      "expected \"tma_descriptor\", got string \"pointer\"");
  EXPECT_CONTAINS(
      parseError(withFp8KRaggedManifest(
          "\"tensor\": \"x_scale\", \"dtype\": \"f32\", \"rank\": 2, \"box\": "
          "[196, 1], \"swizzle\": \"none\"",
          "\"tensor\": \"x_scale\", \"dtype\": \"f32\", \"rank\": 2, \"box\": "
          "[32, 1], \"swizzle\": \"128B\"")),
      "k.json: /params/15/swizzle: a descriptor of \"x_scale\" is not "
      "swizzled, expected \"none\", got string \"128B\"");
  EXPECT_CONTAINS(
      parseError(withFp8KRaggedManifest(
          "\"tensor\": \"dy_scale\", \"dtype\": \"f32\", \"rank\": 2, \"box\": "
          "[132, 1]",
          "\"tensor\": \"dy_scale\", \"dtype\": \"f32\", \"rank\": 3, \"box\": "
          "[132, 1, 1]")),
      "k.json: /params/14/rank: a descriptor of \"dy_scale\" for "
      "segment_matmul_k has rank 2 (rows, token blocks), got 3");
  EXPECT_CONTAINS(
      parseError(withFp8KRaggedManifest(
          "\"tensor\": \"dy_scale\", \"dtype\": \"f32\"",
          "\"tensor\": \"dy_scale\", \"dtype\": \"bf16\"")),
      "k.json: /params/14/dtype: tensor \"dy_scale\" has dtype f32 in this "
      "problem, got bf16");
  EXPECT_CONTAINS(
      parseError(withFp8KRaggedManifest("\"tensor\": \"dy\", \"dtype\": "
                                        "\"f8e4m3\", \"rank\": 2",
                                        "\"tensor\": \"dy\", \"dtype\": "
                                        "\"f8e4m3\", \"rank\": 3")),
      "k.json: /params/0/rank: a descriptor of \"dy\" for segment_matmul_k "
      "has rank 2 (token rows, rows), got 3");
  // 64 fp8 tokens fill half the 128-byte swizzle.
  EXPECT_CONTAINS(
      parseError(
          withFp8KRaggedManifest("\"box\": [128, 128]", "\"box\": [64, 128]")),
      "k.json: /params/0/box: innermost box extent is 64 bytes, expected the "
      "swizzle width 128 bytes");
  // A bf16 kernel has no scales to describe.
  EXPECT_CONTAINS(
      parseError(withKRaggedManifest(
          "{\"name\": \"num_weights\", \"kind\": \"scalar\", \"dtype\": "
          "\"i32\", \"value\": \"num_weights\"}",
          "{\"name\": \"num_weights\", \"kind\": \"scalar\", \"dtype\": "
          "\"i32\", \"value\": \"num_weights\"}" +
              aScale)),
      "k.json: /params/14/tensor: tensor \"dy_scale\" needs "
      "problem.x_scale_block and w_scale_block \"1x128\" (f8e4m3 dy and x), "
      "but the problem has no scales");
  // And the forward ops have no dy_scale.
  EXPECT_CONTAINS(
      parseError(test::withFp8Manifest("\"tensor\": \"x_scale\"",
                                       "\"tensor\": \"dy_scale\"")),
      "k.json: /params/13/tensor: tensor \"dy_scale\" does not exist for "
      "segment_matmul");
}

//===----------------------------------------------------------------------===//
// segment_matmul's gather-A, scatter and SwiGLU (MoE layers)
//===----------------------------------------------------------------------===//

using test::MoeFeatures;
using test::moeSegmentManifest;

std::string withMoeManifest(const MoeFeatures &features,
                            const std::string &from, const std::string &to) {
  return test::replaced(moeSegmentManifest(features), from, to);
}

TEST(MoeManifest, ParsesGatherScatterAndSwiglu) {
  Manifest manifest = parseOk(moeSegmentManifest(
      {/*gather=*/true, /*scatter=*/true, /*atomic=*/true, /*swiglu=*/true}));
  const ProblemSpec &problem = manifest.problem;
  EXPECT_TRUE(problem.hasRowIndices);
  EXPECT_TRUE(problem.hasScatterIndices);
  EXPECT_TRUE(problem.atomic);
  EXPECT_TRUE(problem.accumulate);
  EXPECT_EQ(problem.activation, Activation::Swiglu);
  // One gathered row per TMA box; two boxes of 64 weight rows per tile.
  EXPECT_EQ(manifest.params[0].box[0], 64u);
  EXPECT_EQ(manifest.params[0].box[1], 1u);
  EXPECT_EQ(manifest.params[1].box[1], 64u);
  ASSERT_EQ(manifest.params.size(), 16u);
  EXPECT_EQ(manifest.params[13].name, "row_indices");
  EXPECT_EQ(manifest.params[13].kind, ParamKind::Pointer);
  EXPECT_EQ(manifest.params[13].tensor, TensorRole::RowIndices);
  EXPECT_EQ(manifest.params[13].dtype, GGEMM_DTYPE_I32);
  EXPECT_FALSE(manifest.params[13].optional);
  EXPECT_EQ(manifest.params[14].tensor, TensorRole::ScatterIndices);
  EXPECT_EQ(manifest.params[14].dtype, GGEMM_DTYPE_I32);
  EXPECT_EQ(manifest.params[15].kind, ParamKind::Scalar);
  EXPECT_EQ(manifest.params[15].dtype, GGEMM_DTYPE_I64);
  EXPECT_EQ(manifest.params[15].source, ScalarSource::YRows);
  EXPECT_STREQ(tensorRoleName(TensorRole::RowIndices), "row_indices");
  EXPECT_STREQ(tensorRoleName(TensorRole::ScatterIndices), "scatter_indices");
}

TEST(MoeManifest, FeaturesAreOffByDefault) {
  const ProblemSpec problem = parseOk(test::kSegmentManifest).problem;
  EXPECT_FALSE(problem.hasRowIndices);
  EXPECT_FALSE(problem.hasScatterIndices);
  EXPECT_FALSE(problem.atomic);
  EXPECT_EQ(problem.activation, Activation::None);
  // Each feature alone, and non-atomic scattered accumulation.
  parseOk(moeSegmentManifest({/*gather=*/true}));
  parseOk(moeSegmentManifest({/*gather=*/false, /*scatter=*/true}));
  parseOk(moeSegmentManifest({/*gather=*/false, /*scatter=*/false,
                              /*atomic=*/false, /*swiglu=*/true}));
  parseOk(withMoeManifest({/*gather=*/false, /*scatter=*/true},
                          "\"accumulate\": false", "\"accumulate\": true"));
}

TEST(MoeManifest, ActivationsAreChecked) {
  for (const char *name : {"none", "relu", "gelu", "silu", "swiglu"}) {
    Manifest manifest = parseOk(withManifest(
        "\"accumulate\": false", std::string("\"accumulate\": false, "
                                             "\"activation\": \"") +
                                     name + "\""));
    EXPECT_STREQ(activationName(manifest.problem.activation), name);
  }
  EXPECT_CONTAINS(parseError(withManifest("\"accumulate\": false",
                                          "\"accumulate\": false, "
                                          "\"activation\": \"tanh\"")),
                  "k.json: /problem/activation: expected one of none, relu, "
                  "gelu, silu or swiglu, got string \"tanh\"");
}

MoeFeatures interleavedSwiglu() {
  MoeFeatures features;
  features.swiglu = true;
  features.interleaved = true;
  return features;
}

TEST(MoeManifest, GateUpBlockOrdersSwigluWeights) {
  // Absent: side by side (0), the weight tile two boxes of half its rows.
  EXPECT_EQ(parseOk(moeSegmentManifest({/*gather=*/false, /*scatter=*/false,
                                        /*atomic=*/false, /*swiglu=*/true}))
                .problem.gateUpBlock,
            0);
  // Interleaved: the tile of 128 rows is one block, one box.
  Manifest manifest = parseOk(moeSegmentManifest(interleavedSwiglu()));
  EXPECT_EQ(manifest.problem.gateUpBlock, 64);
  EXPECT_EQ(manifest.problem.activation, Activation::Swiglu);
  EXPECT_EQ(manifest.params[1].box[1], 128u);
  EXPECT_CONTAINS(
      parseError(withManifest("\"accumulate\": false",
                              "\"accumulate\": false, \"gate_up_block\": 64")),
      "k.json: /problem/gate_up_block: gate_up_block orders the gate and up "
      "rows of a swiglu weight; expected 0 with activation \"none\", got 64");
  parseOk(withManifest("\"accumulate\": false",
                       "\"accumulate\": false, \"gate_up_block\": 0"));
  EXPECT_CONTAINS(
      parseError(withMoeManifest(interleavedSwiglu(), "\"gate_up_block\": 64",
                                 "\"gate_up_block\": -8")),
      "k.json: /problem/gate_up_block: expected an integer in [0, 65536], got "
      "-8");
  EXPECT_CONTAINS(
      parseError(withMoeManifest(interleavedSwiglu(), "\"gate_up_block\": 64",
                                 "\"gate_up_block\": \"64\"")),
      "k.json: /problem/gate_up_block: expected an integer, got string "
      "\"64\"");
  // The kernel pairs columns j and j + block_n / 2: its tile must be one
  // block.
  EXPECT_CONTAINS(
      parseError(withMoeManifest(interleavedSwiglu(), "\"gate_up_block\": 64",
                                 "\"gate_up_block\": 32")),
      "k.json: /tile/block_n: expected 2 * problem.gate_up_block (64: one "
      "block of gate and up rows), got 128");
}

TEST(MoeManifest, AtomicNeedsScatterAndAccumulate) {
  EXPECT_CONTAINS(
      parseError(withManifest("\"accumulate\": false",
                              "\"accumulate\": true, \"atomic\": true")),
      "k.json: /problem/atomic: atomic adds are for scattered rows, which "
      "need has_scatter_indices true, got false");
  EXPECT_CONTAINS(
      parseError(withMoeManifest({/*gather=*/false, /*scatter=*/true},
                                 "\"accumulate\": false",
                                 "\"accumulate\": false, \"atomic\": true")),
      "k.json: /problem/atomic: atomic adds accumulate into y, which needs "
      "accumulate true, got false");
  EXPECT_CONTAINS(
      parseError(withManifest("\"accumulate\": false", "\"accumulate\": false, "
                                                       "\"atomic\": 1")),
      "k.json: /problem/atomic: expected true or false, got 1");
  // false is always fine.
  parseOk(withManifest("\"accumulate\": false",
                       "\"accumulate\": false, \"atomic\": false"));
}

TEST(MoeManifest, FeaturesAreSegmentMatmulOnly) {
  std::string masked = test::replaced(
      test::kSegmentManifest, "\"segment_matmul\"", "\"masked_matmul\"");
  masked = test::replaced(masked, "\"seg_indptr\"", "\"masked_m\"");
  parseOk(masked);
  EXPECT_CONTAINS(
      parseError(test::replaced(masked, "\"has_row_scale\": false",
                                "\"has_row_scale\": false, "
                                "\"has_scatter_indices\": true")),
      "k.json: /problem/has_scatter_indices: masked_matmul has no "
      "scatter_indices (only segment_matmul scatters rows of y), expected "
      "false, got true");
  EXPECT_CONTAINS(
      parseError(test::replaced(masked, "\"has_row_scale\": false",
                                "\"has_row_scale\": false, "
                                "\"has_row_indices\": true")),
      "k.json: /problem/has_row_indices: masked_matmul has no row_indices "
      "(only segment_matmul gathers rows of x), expected false, got true");
  std::string batched =
      test::replaced(masked, "\"masked_matmul\"", "\"batched_matmul\"");
  EXPECT_CONTAINS(
      parseError(test::replaced(batched, "\"accumulate\": false",
                                "\"accumulate\": true, \"atomic\": true")),
      "k.json: /problem/atomic: batched_matmul has no atomic adds (only "
      "segment_matmul scatters rows of y), expected false, got true");
  EXPECT_CONTAINS(
      parseError(test::replaced(masked, "\"accumulate\": false",
                                "\"accumulate\": false, "
                                "\"activation\": \"swiglu\"")),
      "k.json: /problem/activation: masked_matmul has no swiglu (only "
      "segment_matmul reads weights of gate and up halves), got string "
      "\"swiglu\"");
  // Elementwise activations stay available to every op but
  // segment_matmul_k.
  parseOk(test::replaced(masked, "\"accumulate\": false",
                         "\"accumulate\": false, \"activation\": \"gelu\""));
  // The indices do not exist for the other ops, whatever the flags.
  EXPECT_CONTAINS(
      parseError(test::replaced(masked, "\"value\": \"ldy\"}",
                                std::string("\"value\": \"ldy\"}, ") +
                                    test::kRowIndicesPointer)),
      "k.json: /params/13/tensor: tensor \"row_indices\" does not exist for "
      "masked_matmul");
  EXPECT_CONTAINS(
      parseError(test::withKRaggedManifest(
          "\"has_row_scale\": false",
          "\"has_row_scale\": false, \"has_row_indices\": true")),
      "k.json: /problem/has_row_indices: segment_matmul_k has no row_indices");
  EXPECT_CONTAINS(
      parseError(test::withKRaggedManifest("\"activation\": \"none\"",
                                           "\"activation\": \"swiglu\"")),
      "k.json: /problem/activation: segment_matmul_k has no "
      "activation, expected \"none\", got string \"swiglu\"");
  EXPECT_CONTAINS(
      parseError(test::withKRaggedManifest(
          "\"value\": \"num_weights\"}",
          std::string("\"value\": \"num_weights\"}, ") +
              test::kScatterIndicesPointer)),
      "k.json: /params/14/tensor: tensor \"scatter_indices\" does not exist "
      "for segment_matmul_k");
}

TEST(MoeManifest, EnabledIndicesMustReachTheKernel) {
  const MoeFeatures both = {/*gather=*/true, /*scatter=*/true};
  EXPECT_CONTAINS(
      parseError(withMoeManifest(
          both, std::string(",\n    ") + test::kRowIndicesPointer, "")),
      "k.json: /params: no parameter passes tensor \"row_indices\" "
      "(problem.has_row_indices is true)");
  EXPECT_CONTAINS(
      parseError(withMoeManifest(
          both, std::string(",\n    ") + test::kScatterIndicesPointer, "")),
      "k.json: /params: no parameter passes tensor \"scatter_indices\" "
      "(problem.has_scatter_indices is true)");
  // The kernel drops rows scattered outside y, so it needs y's rows.
  EXPECT_CONTAINS(parseError(withMoeManifest(
                      both, std::string(",\n    ") + test::kYRowsScalar, "")),
                  "k.json: /params: no scalar parameter carries \"y_rows\" "
                  "(problem.has_scatter_indices is true: the kernel skips rows "
                  "scattered outside [0, y_rows))");
  // An i32 y_rows is range-checked at launch, as every scalar.
  parseOk(withMoeManifest(both, "\"dtype\": \"i64\", \"value\": \"y_rows\"",
                          "\"dtype\": \"i32\", \"value\": \"y_rows\""));
}

TEST(MoeManifest, RequiredIndicesNeedTheirFlag) {
  EXPECT_CONTAINS(
      parseError(withManifest("\"value\": \"ldy\"}",
                              std::string("\"value\": \"ldy\"}, ") +
                                  test::kRowIndicesPointer)),
      "k.json: /params/13: tensor \"row_indices\" is marked required "
      "(optional: false) but the problem is compiled without it");
  EXPECT_CONTAINS(
      parseError(withManifest("\"value\": \"ldy\"}",
                              std::string("\"value\": \"ldy\"}, ") +
                                  test::kScatterIndicesPointer)),
      "k.json: /params/13: tensor \"scatter_indices\" is marked required "
      "(optional: false) but the problem is compiled without it");
  // As for bias: an optional slot of a disabled tensor is passed as null.
  parseOk(withManifest(
      "\"value\": \"ldy\"}",
      "\"value\": \"ldy\"}, {\"name\": \"row_indices\", \"kind\": "
      "\"pointer\", \"tensor\": \"row_indices\", \"optional\": true}"));
}

TEST(MoeManifest, IndicesAreI32Pointers) {
  const MoeFeatures both = {/*gather=*/true, /*scatter=*/true};
  EXPECT_CONTAINS(
      parseError(withMoeManifest(both, "\"tensor\": \"row_indices\", ",
                                 "\"tensor\": \"row_indices\", \"dtype\": "
                                 "\"i64\", ")),
      "k.json: /params/13/dtype: tensor \"row_indices\" has dtype i32 in "
      "this problem, got i64");
  EXPECT_CONTAINS(
      parseError(withMoeManifest(both, "\"tensor\": \"scatter_indices\", ",
                                 "\"tensor\": \"scatter_indices\", "
                                 "\"dtype\": \"i64\", ")),
      "k.json: /params/14/dtype: tensor \"scatter_indices\" has dtype i32 "
      "in this problem, got i64");
  // index_dtype is seg_indptr's: it does not widen the row indices.
  parseOk(withMoeManifest(both, "\"index_dtype\": \"i32\"",
                          "\"index_dtype\": \"i64\""));
  parseOk(withMoeManifest(both, "\"tensor\": \"row_indices\", ",
                          "\"tensor\": \"row_indices\", \"dtype\": "
                          "\"i32\", "));
  EXPECT_CONTAINS(
      parseError(withMoeManifest(
          both, test::kRowIndicesPointer,
          "{\"name\": \"row_indices\", \"kind\": \"tma_descriptor\", "
          "\"tensor\": \"row_indices\", \"dtype\": \"f32\", \"rank\": 2, "
          "\"box\": [32, 64], \"swizzle\": \"128B\"}")),
      "k.json: /params/13/tensor: a tma_descriptor can describe x, w, y or "
      "x_scale, got \"row_indices\"");
}

TEST(MoeManifest, YRowsNeedsScatter) {
  EXPECT_CONTAINS(
      parseError(withManifest("\"value\": \"ldy\"}",
                              std::string("\"value\": \"ldy\"}, ") +
                                  test::kYRowsScalar)),
      "k.json: /params/13/value: \"y_rows\" is the rows of a scattered y and "
      "needs problem.has_scatter_indices, which is false");
  // Gather alone keeps y's rows the segment rows.
  EXPECT_CONTAINS(
      parseError(withMoeManifest({/*gather=*/true}, "\"value\": \"ldy\"}",
                                 std::string("\"value\": \"ldy\"}, ") +
                                     test::kYRowsScalar)),
      "k.json: /params/13/value: \"y_rows\" is the rows of a scattered y");
}

TEST(MoeManifest, VersionTwoBundlesCarryTheFeatures) {
  Bundle bundle;
  Status status = parseBundle(test::multiVariantManifest(moeSegmentManifest(
                                  {/*gather=*/true, /*scatter=*/true,
                                   /*atomic=*/true, /*swiglu=*/true})),
                              "k.json", "/bundles", bundle);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  ASSERT_EQ(bundle.variants.size(), 2u);
  for (const Manifest &variant : bundle.variants) {
    EXPECT_TRUE(variant.problem.hasRowIndices);
    EXPECT_TRUE(variant.problem.hasScatterIndices);
    EXPECT_EQ(variant.problem.activation, Activation::Swiglu);
    EXPECT_EQ(variant.params.size(), 16u);
  }
}

//===----------------------------------------------------------------------===//
// Version 2: kernel variants and their dispatch rule
//===----------------------------------------------------------------------===//

Bundle parseBundleOk(const std::string &text) {
  Bundle bundle;
  Status status = parseBundle(text, "k.json", "/bundles", bundle);
  EXPECT_TRUE(status.ok()) << status.getMessage();
  return bundle;
}

std::string parseBundleError(const std::string &text) {
  Bundle bundle;
  Status status = parseBundle(text, "k.json", "/bundles", bundle);
  EXPECT_EQ(status.getCode(), GGEMM_ERROR_BAD_MANIFEST) << status.getMessage();
  EXPECT_TRUE(bundle.variants.empty());
  return status.getMessage();
}

TEST(Bundle, Version1IsOneVariant) {
  Bundle bundle = parseBundleOk(test::kSegmentManifest);
  EXPECT_EQ(bundle.version, 1);
  ASSERT_EQ(bundle.variants.size(), 1u);
  EXPECT_TRUE(bundle.bounds.empty());
  EXPECT_EQ(bundle.variants[0].entry, "ggemm_segment_matmul_kernel");
}

TEST(Bundle, ParsesVariants) {
  Bundle bundle = parseBundleOk(test::multiVariantManifest());
  EXPECT_EQ(bundle.version, 2);
  ASSERT_EQ(bundle.variants.size(), 2u);
  ASSERT_EQ(bundle.bounds.size(), 1u);
  EXPECT_EQ(bundle.bounds[0], 64);
  const Manifest &small = bundle.variants[0];
  const Manifest &large = bundle.variants[1];
  EXPECT_EQ(small.entry, "small");
  EXPECT_EQ(small.ptxPath, "/bundles/small.ptx");
  EXPECT_TRUE(small.cubinPath.empty());
  EXPECT_EQ(small.block[0], 256u);
  EXPECT_EQ(small.dynamicSmem, 99328u);
  EXPECT_EQ(small.blockM, 64);
  EXPECT_EQ(small.params[0].box[1], 64u);
  EXPECT_EQ(large.entry, "large");
  EXPECT_EQ(large.cubinPath, "/bundles/large.cubin");
  EXPECT_TRUE(large.ptxPath.empty());
  EXPECT_EQ(large.block[0], 384u);
  EXPECT_EQ(large.blockM, 128);
  // The problem and the arch are the bundle's, shared by every variant.
  for (const Manifest &variant : bundle.variants) {
    EXPECT_EQ(variant.arch, "sm_90a");
    EXPECT_TRUE(variant.archSpecific);
    EXPECT_EQ(variant.problem.op, Op::SegmentMatmul);
    EXPECT_EQ(variant.problem.k, 7168);
    EXPECT_EQ(variant.params.size(), 13u);
    EXPECT_EQ(variant.sourceName, "k.json");
  }
}

TEST(Bundle, ParseManifestWantsOneKernel) {
  EXPECT_CONTAINS(parseError(test::multiVariantManifest()),
                  "k.json: /variants: expected one kernel, got 2 variants");
}

TEST(Bundle, RejectsBadDispatch) {
  EXPECT_CONTAINS(
      parseBundleError(withMultiVariantManifest(
          "\"bounds\": [\n      64\n    ]", "\"bounds\": []")),
      "k.json: /dispatch/bounds: expected one bound fewer than the 2 "
      "variants, got 0");
  EXPECT_CONTAINS(
      parseBundleError(withMultiVariantManifest(
          "\"bounds\": [\n      64\n    ]", "\"bounds\": [64, 32]")),
      "k.json: /dispatch/bounds/1: expected increasing positive integers "
      "(rows per group), got 32 after 64");
  EXPECT_CONTAINS(
      parseBundleError(withMultiVariantManifest(
          "\"bounds\": [\n      64\n    ]", "\"bounds\": [0]")),
      "k.json: /dispatch/bounds/0: expected increasing positive integers "
      "(rows per group), got 0");
  EXPECT_CONTAINS(
      parseBundleError(withMultiVariantManifest(
          "\"bounds\": [\n      64\n    ]", "\"bounds\": 64")),
      "k.json: /dispatch/bounds: expected an array of integers, got 64");
  EXPECT_CONTAINS(parseBundleError(withMultiVariantManifest(
                      "\"rows_per_group\"", "\"total_rows\"")),
                  "k.json: /dispatch/rule: expected \"rows_per_group\", got "
                  "string \"total_rows\"");
  EXPECT_CONTAINS(parseBundleError(withMultiVariantManifest(
                      "\"rule\": \"rows_per_group\"",
                      "\"rule\": \"rows_per_group\", \"by\": 1")),
                  "k.json: /dispatch/by: unknown key");
  EXPECT_CONTAINS(parseBundleError(withMultiVariantManifest("\"dispatch\"",
                                                            "\"dispatcher\"")),
                  "k.json: /dispatch: missing required key");
}

TEST(Bundle, RejectsBadVariants) {
  nlohmann::ordered_json one =
      nlohmann::ordered_json::parse(test::multiVariantManifest());
  one["variants"].erase(1);
  one["dispatch"]["bounds"] = nlohmann::ordered_json::array();
  EXPECT_CONTAINS(parseBundleError(one.dump()),
                  "k.json: /variants: expected an array of 2 to 16 kernel "
                  "variants, got an array of 1 elements");
  // Errors point into the variant.
  EXPECT_CONTAINS(
      parseBundleError(
          withMultiVariantManifest("\"block_m\": 128", "\"block_m\": 0")),
      "k.json: /variants/1/tile/block_m: expected an integer in [1, 65536], "
      "got 0");
  EXPECT_CONTAINS(
      parseBundleError(withMultiVariantManifest(
          "\"entry\": \"small\"", "\"entry\": \"small\", \"stages\": 4")),
      "k.json: /variants/0/stages: unknown key");
  nlohmann::ordered_json noEntry =
      nlohmann::ordered_json::parse(test::multiVariantManifest());
  noEntry["variants"][0].erase("entry");
  EXPECT_CONTAINS(parseBundleError(noEntry.dump()),
                  "k.json: /variants/0/entry: missing required key");
  EXPECT_CONTAINS(parseBundleError(withMultiVariantManifest(
                      "\"ptx\": \"small.ptx\"", "\"sass\": \"small.ptx\"")),
                  "k.json: /variants/0/sass: unknown key");
  EXPECT_CONTAINS(
      parseBundleError(withMultiVariantManifest("\"block\": [\n        256",
                                                "\"block\": [\n        2048")),
      "k.json: /variants/0/block/0: expected an integer in [1, 1024], got "
      "2048");
  // Parameters are checked against the shared problem.
  EXPECT_CONTAINS(
      parseBundleError(withMultiVariantManifest("\"op\": \"segment_matmul\"",
                                                "\"op\": \"masked_matmul\"")),
      "k.json: /variants/0/params");
  EXPECT_CONTAINS(
      parseBundleError(withMultiVariantManifest("\"sm_90a\"", "\"sm90\"")),
      "k.json: /arch: expected sm_<major><minor>[a|f]");
}

TEST(KRaggedBundle, ParsesVariants) {
  Bundle bundle =
      parseBundleOk(test::multiVariantManifest(test::kKRaggedManifest));
  ASSERT_EQ(bundle.variants.size(), 2u);
  for (const Manifest &variant : bundle.variants) {
    EXPECT_EQ(variant.problem.op, Op::SegmentMatmulK);
    EXPECT_EQ(variant.params.size(), 14u);
  }
  EXPECT_EQ(bundle.variants[0].blockM, 64);
  EXPECT_EQ(bundle.variants[1].blockM, 128);
}

TEST(KRaggedBundle, OneVariantIsVersion1) {
  // As for every op: a single kernel is written as version 1, and version 2
  // with one variant is malformed.
  nlohmann::ordered_json one = nlohmann::ordered_json::parse(
      test::multiVariantManifest(test::kKRaggedManifest));
  one["variants"].erase(1);
  one["dispatch"]["bounds"] = nlohmann::ordered_json::array();
  EXPECT_CONTAINS(parseBundleError(one.dump()),
                  "k.json: /variants: expected an array of 2 to 16 kernel "
                  "variants, got an array of 1 elements");
}

TEST(KRaggedBundle, ProblemChecksApply) {
  EXPECT_CONTAINS(parseBundleError(test::replaced(
                      test::multiVariantManifest(test::kKRaggedManifest),
                      "\"has_bias\": false", "\"has_bias\": true")),
                  "k.json: /problem/has_bias: segment_matmul_k has no bias");
}

TEST(Fp8KRaggedBundle, ParsesVariants) {
  Bundle bundle = parseBundleOk(test::fp8KRaggedMultiVariantManifest());
  ASSERT_EQ(bundle.variants.size(), 2u);
  for (const Manifest &variant : bundle.variants) {
    EXPECT_TRUE(variant.problem.transposed);
    EXPECT_EQ(variant.params.size(), 16u);
  }
  EXPECT_EQ(bundle.variants[0].params[0].box[1], 64u);
  EXPECT_EQ(bundle.variants[0].params[14].box[0], 68u);
  EXPECT_EQ(bundle.variants[1].params[14].box[0], 132u);
}

//===----------------------------------------------------------------------===//
// sort_by_expert (MoE routing)
//===----------------------------------------------------------------------===//

using test::withRoutingManifest;

TEST(QuantizeManifest, ParsesTheCompilersManifest) {
  Manifest manifest = parseOk(test::kQuantizeManifest);
  EXPECT_EQ(manifest.entry, "quantize_kernel");
  EXPECT_EQ(manifest.gridPolicy, GridPolicy::Persistent);
  EXPECT_EQ(manifest.ctasPerSm, 4);
  EXPECT_EQ(manifest.unitsPerCta, 64);
  const ProblemSpec &problem = manifest.problem;
  EXPECT_EQ(problem.op, Op::Quantize);
  EXPECT_EQ(problem.aDtype, GGEMM_DTYPE_BF16);
  EXPECT_EQ(problem.outDtype, GGEMM_DTYPE_F8E4M3);
  EXPECT_EQ(problem.xScaleBlock, ScaleBlock::Block1x128);
  EXPECT_EQ(problem.rank, 2);
  ASSERT_EQ(manifest.params.size(), 9u);
  const TensorRole roles[] = {TensorRole::X, TensorRole::Q, TensorRole::Scale};
  const ggemm_dtype dtypes[] = {GGEMM_DTYPE_BF16, GGEMM_DTYPE_F8E4M3,
                                GGEMM_DTYPE_F32};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(manifest.params[i].tensor, roles[i]);
    EXPECT_EQ(manifest.params[i].dtype, dtypes[i]);
  }
  const ScalarSource sources[] = {ScalarSource::NumGroups,
                                  ScalarSource::RowsPerGroup,
                                  ScalarSource::K,
                                  ScalarSource::ScaleStrideGroup,
                                  ScalarSource::ScaleStrideRow,
                                  ScalarSource::ScaleStrideCol};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(manifest.params[3 + i].source, sources[i]);
}

TEST(QuantizeManifest, RejectsBadManifests) {
  struct Case {
    const char *from;
    const char *to;
    const char *message;
  };
  const Case cases[] = {
      {"\"x_dtype\": \"bf16\"", "\"x_dtype\": \"f32\"",
       "k.json: /problem/x_dtype: expected one of bf16 or f16, got string "
       "\"f32\""},
      {"\"scale_block\": \"1x128\"", "\"scale_block\": \"per_row\"",
       "k.json: /problem/scale_block: expected one of 1x128 or 128x128, got "
       "string \"per_row\""},
      {"\"rank\": 2", "\"rank\": 4",
       "k.json: /problem/rank: expected an integer in [2, 3], got 4"},
      {"\"policy\": \"persistent\"", "\"policy\": \"tiles\"",
       "k.json: /grid/policy: quantize's grid strides over its blocks, "
       "expected \"persistent\", got string \"tiles\""},
      {"\"value\": \"k\"", "\"value\": \"n\"",
       "k.json: /params/5/value: quantize's scalars are \"num_groups\", "
       "\"rows_per_group\", \"k\" and the \"scale_stride_*\" values, got "
       "string \"n\""},
      {"\"tensor\": \"scale\"", "\"tensor\": \"w\"",
       "k.json: /params/2/tensor: tensor \"w\" does not exist for quantize"},
  };
  for (const Case &c : cases)
    EXPECT_CONTAINS(parseError(test::withQuantizeManifest(c.from, c.to)),
                    c.message);
  // The strides are quantize's values only.
  EXPECT_CONTAINS(parseError(withRoutingManifest("\"value\": \"num_pairs\"",
                                                 "\"value\": "
                                                 "\"scale_stride_row\"")),
                  "sort_by_expert's only scalar is \"num_pairs\"");
}

TEST(RoutingManifest, ParsesTheCompilersManifest) {
  Manifest manifest = parseOk(test::kRoutingManifest);
  EXPECT_EQ(manifest.entry, "route_kernel");
  EXPECT_EQ(manifest.block[0], 1024u);
  EXPECT_EQ(manifest.dynamicSmem, 34056u);
  EXPECT_EQ(manifest.gridPolicy, GridPolicy::Single);
  EXPECT_EQ(manifest.blockM, 0); // no tile
  const ProblemSpec &problem = manifest.problem;
  EXPECT_EQ(problem.op, Op::SortByExpert);
  EXPECT_EQ(problem.numExperts, 256);
  EXPECT_EQ(problem.topk, 8);
  EXPECT_EQ(problem.indexDtype, GGEMM_DTYPE_I32);
  ASSERT_EQ(manifest.params.size(), 5u);
  const TensorRole roles[] = {TensorRole::TopkIds, TensorRole::SegIndptr,
                              TensorRole::RowIndices, TensorRole::PairIndices};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(manifest.params[i].kind, ParamKind::Pointer);
    EXPECT_EQ(manifest.params[i].tensor, roles[i]);
    EXPECT_EQ(manifest.params[i].dtype, GGEMM_DTYPE_I32);
    EXPECT_FALSE(manifest.params[i].optional);
  }
  EXPECT_EQ(manifest.params[4].kind, ParamKind::Scalar);
  EXPECT_EQ(manifest.params[4].dtype, GGEMM_DTYPE_I64);
  EXPECT_EQ(manifest.params[4].source, ScalarSource::NumPairs);
}

TEST(RoutingManifest, Int64IdsAndDefaults) {
  // i64 ids; seg_indptr stays i32 whatever index_dtype. Without "grid" the
  // op's one policy applies; the parameters may come in any order.
  std::string text = withRoutingManifest("\"index_dtype\": \"i32\"",
                                         "\"index_dtype\": \"i64\"");
  text = test::replaced(text, "\"grid\": {\"policy\": \"single\"},\n", "");
  text = test::replaced(
      text,
      "{\"kind\": \"pointer\", \"name\": \"topk_ids\", \"tensor\": "
      "\"topk_ids\"}",
      "{\"kind\": \"scalar\", \"name\": \"num_pairs\", \"dtype\": \"i32\", "
      "\"value\": \"num_pairs\"}, {\"kind\": \"pointer\", \"name\": "
      "\"topk_ids\", \"tensor\": \"topk_ids\", \"dtype\": \"i64\"}");
  text =
      test::replaced(text,
                     ",\n    {\"kind\": \"scalar\", \"name\": \"num_pairs\", "
                     "\"dtype\": \"i64\", \"value\": \"num_pairs\"}",
                     "");
  Manifest manifest = parseOk(text);
  EXPECT_EQ(manifest.problem.indexDtype, GGEMM_DTYPE_I64);
  EXPECT_EQ(manifest.gridPolicy, GridPolicy::Single);
  ASSERT_EQ(manifest.params.size(), 5u);
  EXPECT_EQ(manifest.params[0].source, ScalarSource::NumPairs);
  EXPECT_EQ(manifest.params[0].dtype, GGEMM_DTYPE_I32);
  EXPECT_EQ(manifest.params[1].tensor, TensorRole::TopkIds);
  EXPECT_EQ(manifest.params[1].dtype, GGEMM_DTYPE_I64);
}

TEST(RoutingManifest, RejectsBadProblems) {
  struct Case {
    const char *from;
    const char *to;
    const char *message;
  };
  const Case problems[] = {
      {"\"num_experts\": 256", "\"num_experts\": 0",
       "k.json: /problem/num_experts: expected an integer in [1, "
       "2147483646], got 0"},
      {"\"num_experts\": 256, ", "",
       "k.json: /problem/num_experts: missing required key"},
      {"\"topk\": 8", "\"topk\": 0",
       "k.json: /problem/topk: expected an integer in [1, 2147483647], got 0"},
      {"\"topk\": 8", "\"topk\": 8.0",
       "k.json: /problem/topk: expected an integer, got 8.0"},
      {"\"index_dtype\": \"i32\"", "\"index_dtype\": \"u8\"",
       "k.json: /problem/index_dtype: expected one of i32 or i64, got string "
       "\"u8\""},
      {", \"index_dtype\": \"i32\"", "",
       "k.json: /problem/index_dtype: missing required key"},
      // A GEMM's fields are not routing's: strict, as the other problems.
      {"\"topk\": 8", "\"topk\": 8, \"a_dtype\": \"bf16\"",
       "k.json: /problem/a_dtype: unknown key (expected one of op, "
       "num_experts, topk, index_dtype)"},
  };
  for (const Case &c : problems)
    EXPECT_CONTAINS(parseError(withRoutingManifest(c.from, c.to)), c.message);
}

TEST(RoutingManifest, OneCtaNoTileOneKernel) {
  EXPECT_CONTAINS(
      parseError(withRoutingManifest("\"single\"", "\"persistent\"")),
      "k.json: /grid/policy: sort_by_expert runs one CTA, expected "
      "\"single\", got string \"persistent\"");
  EXPECT_CONTAINS(
      parseError(withRoutingManifest("\"single\"}", "\"single\", "
                                                    "\"ctas_per_sm\": 1}")),
      "k.json: /grid/ctas_per_sm: unknown key (expected one of policy)");
  EXPECT_CONTAINS(
      parseError(withRoutingManifest(
          "\"grid\"", "\"tile\": {\"block_m\": 128, \"block_n\": 128}, "
                      "\"grid\"")),
      "k.json: /tile: sort_by_expert has no tile (one CTA sorts every pair)");
  EXPECT_CONTAINS(
      parseError(withRoutingManifest("\"cluster\": [1, 1, 1]",
                                     "\"cluster\": [2, 1, 1]")),
      "k.json: /cluster: sort_by_expert runs one CTA, expected [1, 1, 1], "
      "got [2, 1, 1]");
  // "single" is routing's alone.
  EXPECT_CONTAINS(
      parseError(withManifest("\"policy\": \"persistent\", \"ctas_per_sm\": 1",
                              "\"policy\": \"single\"")),
      "k.json: /grid/policy: \"single\" (one CTA) is sort_by_expert's "
      "policy; segment_matmul takes \"persistent\" or \"tiles\"");
  // One kernel: never variants.
  nlohmann::ordered_json single =
      nlohmann::ordered_json::parse(test::kRoutingManifest);
  nlohmann::ordered_json variant = single;
  for (const char *key : {"format", "version", "arch", "problem"})
    variant.erase(key);
  nlohmann::ordered_json bundle = {
      {"format", "ggemm-bundle"},
      {"version", 2},
      {"arch", "sm_90a"},
      {"problem", single["problem"]},
      {"dispatch", {{"rule", "rows_per_group"}, {"bounds", {64}}}},
      {"variants", {variant, variant}}};
  Bundle parsed;
  Status status = parseBundle(bundle.dump(), "k.json", "", parsed);
  EXPECT_EQ(status.getCode(), GGEMM_ERROR_BAD_MANIFEST);
  EXPECT_EQ(status.getMessage(), "k.json: /version: sort_by_expert has one "
                                 "kernel, expected version 1, got 2");
}

TEST(RoutingManifest, RejectsBadParams) {
  const std::string idsParam = "{\"kind\": \"pointer\", \"name\": "
                               "\"topk_ids\", \"tensor\": \"topk_ids\"}";
  const std::string pairsParam =
      ",\n    {\"kind\": \"pointer\", \"name\": \"pair_indices\", "
      "\"tensor\": \"pair_indices\"}";
  const std::string scalarParam =
      ",\n    {\"kind\": \"scalar\", \"name\": \"num_pairs\", \"dtype\": "
      "\"i64\", \"value\": \"num_pairs\"}";
  const char *const expected = "(sort_by_expert takes topk_ids, seg_indptr, "
                               "row_indices, pair_indices and num_pairs)";
  EXPECT_CONTAINS(parseError(withRoutingManifest(pairsParam, "")),
                  std::string("k.json: /params: no parameter passes tensor "
                              "\"pair_indices\" ") +
                      expected);
  EXPECT_CONTAINS(parseError(withRoutingManifest(scalarParam, "")),
                  std::string("k.json: /params: no scalar parameter carries "
                              "\"num_pairs\" ") +
                      expected);
  EXPECT_CONTAINS(
      parseError(withRoutingManifest(
          idsParam, idsParam + ", {\"kind\": \"pointer\", \"name\": "
                               "\"again\", \"tensor\": \"topk_ids\"}")),
      "k.json: /params: sort_by_expert takes 5 parameters (topk_ids, "
      "seg_indptr, row_indices, pair_indices and num_pairs, each once), "
      "got 6");
  EXPECT_CONTAINS(parseError(withRoutingManifest("\"value\": \"num_pairs\"",
                                                 "\"value\": \"num_rows\"")),
                  "k.json: /params/4/value: sort_by_expert's only scalar is "
                  "\"num_pairs\", got string \"num_rows\"");
  EXPECT_CONTAINS(parseError(withRoutingManifest("\"value\": \"num_pairs\"",
                                                 "\"value\": 128")),
                  "k.json: /params/4/value: sort_by_expert's only scalar is "
                  "\"num_pairs\", got 128");
  EXPECT_CONTAINS(parseError(withRoutingManifest("\"tensor\": \"topk_ids\"",
                                                 "\"tensor\": \"x\"")),
                  "k.json: /params/0/tensor: tensor \"x\" does not exist for "
                  "sort_by_expert");
  EXPECT_CONTAINS(
      parseError(withRoutingManifest(
          idsParam, "{\"kind\": \"tma_descriptor\", \"name\": \"topk_ids\", "
                    "\"tensor\": \"topk_ids\"}")),
      "k.json: /params/0/kind: sort_by_expert takes pointers and one scalar, "
      "expected \"pointer\", got \"tma_descriptor\"");
  EXPECT_CONTAINS(
      parseError(withRoutingManifest("\"tensor\": \"row_indices\"",
                                     "\"tensor\": \"row_indices\", "
                                     "\"optional\": true")),
      "k.json: /params/2/optional: sort_by_expert reads or writes every "
      "tensor, so \"row_indices\" is required: expected false, got true");
  EXPECT_CONTAINS(
      parseError(withRoutingManifest("\"tensor\": \"seg_indptr\"",
                                     "\"tensor\": \"seg_indptr\", "
                                     "\"dtype\": \"i64\"")),
      "k.json: /params/1/dtype: tensor \"seg_indptr\" has dtype i32 in this "
      "problem, got i64");
  EXPECT_CONTAINS(
      parseError(withRoutingManifest("\"tensor\": \"topk_ids\"",
                                     "\"tensor\": \"topk_ids\", "
                                     "\"dtype\": \"i64\"")),
      "k.json: /params/0/dtype: tensor \"topk_ids\" has dtype i32 in this "
      "problem, got i64");
}

TEST(RoutingManifest, RoutingParamsAreRoutingsOnly) {
  EXPECT_CONTAINS(
      parseError(
          withManifest("\"value\": \"ldy\"", "\"value\": \"num_pairs\"")),
      "k.json: /params/12/value: \"num_pairs\" is a value of sort_by_expert, "
      "not of segment_matmul");
  EXPECT_CONTAINS(
      parseError(withManifest("\"tensor\": \"y\"", "\"tensor\": \"topk_ids\"")),
      "k.json: /params/2/tensor: tensor \"topk_ids\" does not exist for "
      "segment_matmul");
  EXPECT_CONTAINS(
      parseError(
          withManifest("\"tensor\": \"y\"", "\"tensor\": \"pair_indices\"")),
      "k.json: /params/2/tensor: tensor \"pair_indices\" does not exist for "
      "segment_matmul");
}

} // namespace
} // namespace ggemm::runtime
