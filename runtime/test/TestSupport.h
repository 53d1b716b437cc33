//===- TestSupport.h - Helpers shared by the runtime tests ------*- C++ -*-===//

#ifndef GGEMM_RUNTIME_TEST_TESTSUPPORT_H
#define GGEMM_RUNTIME_TEST_TESTSUPPORT_H

#include "ggemm-runtime/ggemm_runtime.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <unistd.h>

namespace ggemm::runtime::test {

inline ::testing::AssertionResult containsFormat(const char *haystackExpr,
                                                 const char *needleExpr,
                                                 const std::string &haystack,
                                                 const std::string &needle) {
  if (haystack.find(needle) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << haystackExpr << " does not contain " << needleExpr
         << "\n  text:   \"" << haystack << "\"\n  wanted: \"" << needle
         << "\"";
}

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_PRED_FORMAT2(::ggemm::runtime::test::containsFormat, haystack, needle)

/// The manifest of docs/Runtime.md: a bf16 segment_matmul with TMA
/// descriptors for x and w and every optional pointer.
inline const char *const kSegmentManifest = R"json({
  "format": "ggemm-bundle", "version": 1,
  "entry": "ggemm_segment_matmul_kernel",
  "ptx": "k.ptx", "cubin": "k.cubin",
  "arch": "sm_90a",
  "block": [384, 1, 1],
  "cluster": [1, 1, 1],
  "dynamic_smem": 132096,
  "problem": {
    "op": "segment_matmul",
    "a_dtype": "bf16", "b_dtype": "bf16", "out_dtype": "bf16",
    "index_dtype": "i32",
    "weight_layout": "nk",
    "m": -1, "n": 4096, "k": 7168, "num_groups": 8, "num_weights": 8,
    "has_weight_indices": false, "has_bias": false, "has_row_scale": false,
    "accumulate": false
  },
  "tile": {"block_m": 128, "block_n": 128, "block_k": 64, "stages": 4},
  "grid": {"policy": "persistent", "ctas_per_sm": 1},
  "params": [
    {"name": "a_desc", "kind": "tma_descriptor", "tensor": "x", "dtype": "bf16", "rank": 2, "box": [64, 128], "swizzle": "128B", "oob_fill": "zero"},
    {"name": "b_desc", "kind": "tma_descriptor", "tensor": "w", "dtype": "bf16", "rank": 3, "box": [64, 128, 1], "swizzle": "128B", "oob_fill": "zero"},
    {"name": "y", "kind": "pointer", "tensor": "y"},
    {"name": "group_rows", "kind": "pointer", "tensor": "seg_indptr", "optional": false},
    {"name": "weight_indices", "kind": "pointer", "tensor": "weight_indices", "optional": true},
    {"name": "bias", "kind": "pointer", "tensor": "bias", "optional": true},
    {"name": "row_scale", "kind": "pointer", "tensor": "row_scale", "optional": true},
    {"name": "num_rows", "kind": "scalar", "dtype": "i64", "value": "num_rows"},
    {"name": "rows_per_group", "kind": "scalar", "dtype": "i64", "value": "rows_per_group"},
    {"name": "num_groups", "kind": "scalar", "dtype": "i32", "value": "num_groups"},
    {"name": "n", "kind": "scalar", "dtype": "i32", "value": "n"},
    {"name": "k", "kind": "scalar", "dtype": "i32", "value": "k"},
    {"name": "ldy", "kind": "scalar", "dtype": "i64", "value": "ldy"}
  ]
})json";

/// Kernel parameter sizes of kSegmentManifest, in order.
inline constexpr size_t kSegmentParamSizes[] = {128, 128, 8, 8, 8, 8, 8,
                                                8,   8,   4, 4, 4, 8};

/// kSegmentManifest with every occurrence of `from` replaced by `to`;
/// `from` must occur.
inline std::string replaced(std::string text, const std::string &from,
                            const std::string &to) {
  size_t position = text.find(from);
  EXPECT_NE(position, std::string::npos) << "'" << from << "' not in text";
  while (position != std::string::npos) {
    text.replace(position, from.size(), to);
    position = text.find(from, position + to.size());
  }
  return text;
}

inline std::string withManifest(const std::string &from,
                                const std::string &to) {
  return replaced(kSegmentManifest, from, to);
}

/// The x_scale descriptor and w_scale pointer of fp8SegmentManifest(), as
/// the compiler writes them.
inline const char *const kXScaleDescriptor =
    R"json({"name": "a_scale_desc", "kind": "tma_descriptor", "tensor": "x_scale", "dtype": "f32", "rank": 2, "box": [128, 1], "swizzle": "none", "oob_fill": "zero"})json";
inline const char *const kWScalePointer =
    R"json({"name": "w_scale", "kind": "pointer", "tensor": "w_scale", "optional": false})json";

/// kSegmentManifest as an fp8 block-scaled kernel (DeepSeek-V3 style): x
/// with one f32 scale per row and 128 columns of K, read by TMA; w with one
/// per 128 x 128 block, read through a pointer. The scale parameters come
/// last (13 and 14) so that the others keep their positions.
inline std::string fp8SegmentManifest() {
  std::string text =
      withManifest("\"a_dtype\": \"bf16\", \"b_dtype\": \"bf16\"",
                   "\"a_dtype\": \"f8e4m3\", \"b_dtype\": \"f8e4m3\"");
  // 128 fp8 elements fill the 128-byte swizzle.
  text = replaced(text, "\"dtype\": \"bf16\", \"rank\": 2, \"box\": [64, 128]",
                  "\"dtype\": \"f8e4m3\", \"rank\": 2, \"box\": [128, 128]");
  text =
      replaced(text, "\"dtype\": \"bf16\", \"rank\": 3, \"box\": [64, 128, 1]",
               "\"dtype\": \"f8e4m3\", \"rank\": 3, \"box\": [128, 128, 1]");
  text = replaced(text, "\"accumulate\": false",
                  "\"accumulate\": false,\n    \"x_scale_block\": \"1x128\", "
                  "\"w_scale_block\": \"128x128\"");
  return replaced(text, "\"value\": \"ldy\"}",
                  std::string("\"value\": \"ldy\"},\n    ") +
                      kXScaleDescriptor + ",\n    " + kWScalePointer);
}

inline std::string withFp8Manifest(const std::string &from,
                                   const std::string &to) {
  return replaced(fp8SegmentManifest(), from, to);
}

/// The x_scale pointer of a kernel whose scales are applied in the epilogue
/// ("tensor" or "per_row" x scales), as the compiler writes it.
inline const char *const kXScalePointer =
    R"json({"name": "x_scale", "kind": "pointer", "tensor": "x_scale", "optional": false})json";

/// fp8SegmentManifest() as the compiler writes an INT8 kernel
/// (docs/Bundle.md, "INT8 kernels"): s8 x and w (128 of them fill the
/// 128-byte swizzle, as fp8's do), the exact int32 accumulator dequantised
/// in the epilogue by `xBlock` and `wBlock` scales ("tensor" or "per_row"),
/// both passed by pointer as parameters 13 and 14.
inline std::string s8SegmentManifest(const std::string &xBlock = "per_row",
                                     const std::string &wBlock = "per_row") {
  std::string text = replaced(fp8SegmentManifest(), "f8e4m3", "s8");
  text = replaced(
      text, "\"x_scale_block\": \"1x128\", \"w_scale_block\": \"128x128\"",
      "\"x_scale_block\": \"" + xBlock + "\", \"w_scale_block\": \"" + wBlock +
          "\"");
  return replaced(text, kXScaleDescriptor, kXScalePointer);
}

inline std::string withS8Manifest(const std::string &from,
                                  const std::string &to) {
  return replaced(s8SegmentManifest(), from, to);
}

/// kSegmentManifest (or another version 1 manifest, `kernel`) as a version 2
/// bundle of two variants, as the compiler writes one for dynamic rows:
/// "small" (64-row tiles, 256 threads, 99 KB, small.ptx) for at most 64 rows
/// per group, then "large" (the 128-row kernel of `kernel`, large.cubin) for
/// more.
inline std::string
multiVariantManifest(const std::string &kernel = kSegmentManifest) {
  nlohmann::ordered_json single = nlohmann::ordered_json::parse(kernel);
  nlohmann::ordered_json large = single;
  for (const char *key : {"format", "version", "arch", "problem", "ptx"})
    large.erase(key);
  large["entry"] = "large";
  large["cubin"] = "large.cubin";
  nlohmann::ordered_json small = large;
  small.erase("cubin");
  small["entry"] = "small";
  small["ptx"] = "small.ptx";
  small["block"] = {256, 1, 1};
  small["dynamic_smem"] = 99328;
  small["tile"]["block_m"] = 64;
  // a_desc's box: block_m rows of A (its innermost extent fills the
  // swizzle).
  small["params"][0]["box"][1] = 64;
  nlohmann::ordered_json bundle = {
      {"format", "ggemm-bundle"},
      {"version", 2},
      {"arch", single["arch"]},
      {"problem", single["problem"]},
      {"dispatch", {{"rule", "rows_per_group"}, {"bounds", {64}}}},
      {"variants", {small, large}}};
  return bundle.dump(2);
}

inline std::string withMultiVariantManifest(const std::string &from,
                                            const std::string &to) {
  return replaced(multiVariantManifest(), from, to);
}

/// A segment_matmul_k kernel (issue 12's weight gradient, dw[g] = dy[s_g:
/// s_(g+1)]^T x[s_g:s_(g+1)]) with the 14 parameters of docs/Bundle.md: bf16
/// dy [T, 4096] and x [T, 7168], f32 dw [8, 4096, 7168] ("nk"). The kernel
/// reads A = dy and B = x; 64 bf16 columns fill the 128-byte swizzle.
inline const char *const kKRaggedManifest = R"json({
  "format": "ggemm-bundle", "version": 1,
  "entry": "ggemm_segment_matmul_k_kernel",
  "ptx": "k.ptx", "cubin": "k.cubin",
  "arch": "sm_90a",
  "block": [384, 1, 1],
  "cluster": [1, 1, 1],
  "dynamic_smem": 132096,
  "problem": {
    "op": "segment_matmul_k",
    "a_dtype": "bf16", "b_dtype": "bf16", "out_dtype": "f32",
    "index_dtype": "i32",
    "weight_layout": "nk",
    "m": -1, "n": 4096, "k": 7168, "num_groups": 8, "num_weights": 8,
    "has_weight_indices": false, "has_bias": false, "has_row_scale": false,
    "accumulate": false, "activation": "none"
  },
  "tile": {"block_m": 128, "block_n": 128, "block_k": 64, "stages": 4},
  "grid": {"policy": "persistent", "ctas_per_sm": 1},
  "params": [
    {"name": "a_desc", "kind": "tma_descriptor", "tensor": "dy", "dtype": "bf16", "rank": 2, "box": [64, 64], "swizzle": "128B", "oob_fill": "zero"},
    {"name": "b_desc", "kind": "tma_descriptor", "tensor": "x", "dtype": "bf16", "rank": 2, "box": [64, 64], "swizzle": "128B", "oob_fill": "zero"},
    {"name": "y", "kind": "pointer", "tensor": "dw"},
    {"name": "group_rows", "kind": "pointer", "tensor": "seg_indptr", "optional": false},
    {"name": "weight_indices", "kind": "pointer", "tensor": "weight_indices", "optional": true},
    {"name": "bias", "kind": "pointer", "tensor": "bias", "optional": true},
    {"name": "row_scale", "kind": "pointer", "tensor": "row_scale", "optional": true},
    {"name": "num_rows", "kind": "scalar", "dtype": "i64", "value": "num_rows"},
    {"name": "rows_per_group", "kind": "scalar", "dtype": "i64", "value": "rows_per_group"},
    {"name": "num_groups", "kind": "scalar", "dtype": "i32", "value": "num_groups"},
    {"name": "n", "kind": "scalar", "dtype": "i32", "value": "n"},
    {"name": "k", "kind": "scalar", "dtype": "i32", "value": "k"},
    {"name": "ldy", "kind": "scalar", "dtype": "i64", "value": "ldy"},
    {"name": "num_weights", "kind": "scalar", "dtype": "i32", "value": "num_weights"}
  ]
})json";

/// Kernel parameter sizes of kKRaggedManifest, in order.
inline constexpr size_t kKRaggedParamSizes[] = {128, 128, 8, 8, 8, 8, 8,
                                                8,   8,   4, 4, 4, 8, 4};

/// kKRaggedManifest, or its "kn" form (dw [8, 7168, 4096]), whose kernel
/// reads A = x and B = dy.
inline std::string kRaggedManifest(bool kn = false) {
  if (!kn)
    return kKRaggedManifest;
  std::string text = replaced(kKRaggedManifest, "\"weight_layout\": \"nk\"",
                              "\"weight_layout\": \"kn\"");
  text = replaced(text,
                  "\"a_desc\", \"kind\": \"tma_descriptor\", "
                  "\"tensor\": \"dy\"",
                  "\"a_desc\", \"kind\": \"tma_descriptor\", \"tensor\": "
                  "\"@A\"");
  text = replaced(text,
                  "\"b_desc\", \"kind\": \"tma_descriptor\", "
                  "\"tensor\": \"x\"",
                  "\"b_desc\", \"kind\": \"tma_descriptor\", \"tensor\": "
                  "\"dy\"");
  return replaced(text, "\"@A\"", "\"x\"");
}

inline std::string withKRaggedManifest(const std::string &from,
                                       const std::string &to, bool kn = false) {
  return replaced(kRaggedManifest(kn), from, to);
}

/// kRaggedManifest(kn) as a kernel of transposed bf16 operands, dy [N, T]
/// and x [K, T] (the FP8 form's layout, without scales): the boxes are 64
/// tokens (one 128-byte swizzle row) by block_m rows of A (a_desc) and
/// block_n rows of B (b_desc).
inline std::string transposedKRaggedManifest(bool kn = false) {
  std::string text = replaced(kRaggedManifest(kn), "\"activation\": \"none\"",
                              "\"activation\": \"none\", \"transposed\": true");
  return replaced(text, "\"rank\": 2, \"box\": [64, 64]",
                  "\"rank\": 2, \"box\": [64, 128]");
}

/// The FP8 K-ragged weight gradient (DeepGEMM's
/// k_grouped_fp8_gemm_nt_contiguous) as the compiler writes it: f8e4m3 dy
/// [N, T] = [4096, T] and x [K, T] = [7168, T] given transposed (the token
/// rows innermost, K-major for wgmma's fp8 forms), 1x128 scales of both
/// along the tokens, f32 dw [8, 4096, 7168] ("nk": A = dy, B = x). The 14
/// parameters of kKRaggedManifest (boxes of 128 tokens, one 128-byte
/// swizzle row, by block_m = 128 rows of A and block_n = 192 rows of B),
/// then the two scale descriptors (boxes of block_m + 4 and block_n + 4
/// rows by one token block).
inline const char *const kFp8KRaggedManifest = R"json({
  "format": "ggemm-bundle", "version": 1,
  "entry": "ggemm_segment_matmul_k_fp8_kernel",
  "ptx": "k.ptx", "cubin": "k.cubin",
  "arch": "sm_90a",
  "block": [384, 1, 1],
  "cluster": [1, 1, 1],
  "dynamic_smem": 180224,
  "problem": {
    "op": "segment_matmul_k",
    "a_dtype": "f8e4m3", "b_dtype": "f8e4m3", "out_dtype": "f32",
    "index_dtype": "i32",
    "weight_layout": "nk",
    "m": -1, "n": 4096, "k": 7168, "num_groups": 8, "num_weights": 8,
    "has_weight_indices": false, "has_bias": false, "has_row_scale": false,
    "accumulate": false, "activation": "none", "transposed": true,
    "x_scale_block": "1x128", "w_scale_block": "1x128"
  },
  "tile": {"block_m": 128, "block_n": 192, "block_k": 128, "stages": 4},
  "grid": {"policy": "persistent", "ctas_per_sm": 1},
  "params": [
    {"name": "a_desc", "kind": "tma_descriptor", "tensor": "dy", "dtype": "f8e4m3", "rank": 2, "box": [128, 128], "swizzle": "128B", "oob_fill": "zero"},
    {"name": "b_desc", "kind": "tma_descriptor", "tensor": "x", "dtype": "f8e4m3", "rank": 2, "box": [128, 192], "swizzle": "128B", "oob_fill": "zero"},
    {"name": "y", "kind": "pointer", "tensor": "dw"},
    {"name": "group_rows", "kind": "pointer", "tensor": "seg_indptr", "optional": false},
    {"name": "weight_indices", "kind": "pointer", "tensor": "weight_indices", "optional": true},
    {"name": "bias", "kind": "pointer", "tensor": "bias", "optional": true},
    {"name": "row_scale", "kind": "pointer", "tensor": "row_scale", "optional": true},
    {"name": "num_rows", "kind": "scalar", "dtype": "i64", "value": "num_rows"},
    {"name": "rows_per_group", "kind": "scalar", "dtype": "i64", "value": "rows_per_group"},
    {"name": "num_groups", "kind": "scalar", "dtype": "i32", "value": "num_groups"},
    {"name": "n", "kind": "scalar", "dtype": "i32", "value": "n"},
    {"name": "k", "kind": "scalar", "dtype": "i32", "value": "k"},
    {"name": "ldy", "kind": "scalar", "dtype": "i64", "value": "ldy"},
    {"name": "num_weights", "kind": "scalar", "dtype": "i32", "value": "num_weights"},
    {"name": "a_scale_desc", "kind": "tma_descriptor", "tensor": "dy_scale", "dtype": "f32", "rank": 2, "box": [132, 1], "swizzle": "none", "oob_fill": "zero"},
    {"name": "b_scale_desc", "kind": "tma_descriptor", "tensor": "x_scale", "dtype": "f32", "rank": 2, "box": [196, 1], "swizzle": "none", "oob_fill": "zero"}
  ]
})json";

/// Kernel parameter sizes of kFp8KRaggedManifest, in order.
inline constexpr size_t kFp8KRaggedParamSizes[] = {
    128, 128, 8, 8, 8, 8, 8, 8, 8, 4, 4, 4, 8, 4, 128, 128};

/// The y_desc parameter a staged epilogue appends to a K-ragged kernel
/// (dw as [G * R, C] f32: 32 columns, one 128-byte swizzle row, by a
/// consumer warpgroup's 64 rows).
inline const char *const kDwDescriptor =
    R"json({"name": "y_desc", "kind": "tma_descriptor", "tensor": "dw", "dtype": "f32", "rank": 2, "box": [32, 64], "swizzle": "128B", "oob_fill": "zero"})json";

/// kFp8KRaggedManifest, or its "kn" form (dw [8, 7168, 4096]: A = x with
/// x_scale, B = dy with dy_scale); `staged` appends y_desc.
inline std::string fp8KRaggedManifest(bool kn = false, bool staged = false) {
  std::string text = kFp8KRaggedManifest;
  if (kn) {
    text = replaced(text, "\"weight_layout\": \"nk\"",
                    "\"weight_layout\": \"kn\"");
    // Swap the operands (and their scales) between A and B.
    text = replaced(text, "\"tensor\": \"dy\"", "\"tensor\": \"@A\"");
    text = replaced(text, "\"tensor\": \"x\"", "\"tensor\": \"dy\"");
    text = replaced(text, "\"tensor\": \"@A\"", "\"tensor\": \"x\"");
    text = replaced(text, "\"tensor\": \"dy_scale\"", "\"tensor\": \"@S\"");
    text =
        replaced(text, "\"tensor\": \"x_scale\"", "\"tensor\": \"dy_scale\"");
    text = replaced(text, "\"tensor\": \"@S\"", "\"tensor\": \"x_scale\"");
  }
  if (staged) {
    const std::string end = "\n  ]\n}";
    size_t position = text.rfind(end);
    EXPECT_NE(position, std::string::npos) << "no params array to append to";
    text = text.substr(0, position) + ",\n    " + kDwDescriptor + end;
  }
  return text;
}

/// fp8KRaggedManifest() as a version 2 bundle (multiVariantManifest()): a
/// "small" variant of block_m = 64 (a_desc box [128, 64], a_scale_desc
/// box [68, 1]) for at most 64 token rows per group, then the 128-row one.
inline std::string fp8KRaggedMultiVariantManifest() {
  nlohmann::ordered_json bundle =
      nlohmann::ordered_json::parse(multiVariantManifest(fp8KRaggedManifest()));
  nlohmann::ordered_json &scale = bundle["variants"][0]["params"][14];
  EXPECT_EQ(scale["name"], "a_scale_desc");
  scale["box"][0] = 64 + 4;
  return bundle.dump(2);
}

inline std::string withFp8KRaggedManifest(const std::string &from,
                                          const std::string &to,
                                          bool kn = false) {
  return replaced(fp8KRaggedManifest(kn), from, to);
}

/// The parameters the compiler appends to a segment_matmul kernel for
/// gather-A (row_indices) and scatter (scatter_indices, y_rows), in order.
inline const char *const kRowIndicesPointer =
    R"json({"name": "row_indices", "kind": "pointer", "tensor": "row_indices", "optional": false})json";
inline const char *const kScatterIndicesPointer =
    R"json({"name": "scatter_indices", "kind": "pointer", "tensor": "scatter_indices", "optional": false})json";
inline const char *const kYRowsScalar =
    R"json({"name": "y_rows", "kind": "scalar", "dtype": "i64", "value": "y_rows"})json";

/// The MoE features of a segment_matmul kernel (docs/Runtime.md).
struct MoeFeatures {
  bool gather = false;  // has_row_indices: x rows read through row_indices
  bool scatter = false; // has_scatter_indices: y rows through scatter_indices
  bool atomic = false;  // with scatter: atomic adds (and accumulate)
  bool swiglu = false;  // activation "swiglu": w of 2N rows
  /// With swiglu: gate and up rows interleaved in blocks of 64 (the tile's
  /// block_n of 128 is one block, loaded as one box).
  bool interleaved = false;
};

/// kSegmentManifest with `features`, as the compiler writes them: gather
/// loads each x row with its own TMA box ([64, 1]); swiglu loads the gate
/// and up halves of a 128-column tile as two boxes of 64 weight rows (one
/// box of 128 when interleaved); the new parameters follow the 13 of
/// kSegmentManifest (row_indices, then scatter_indices and y_rows).
inline std::string moeSegmentManifest(const MoeFeatures &features) {
  std::string text = kSegmentManifest;
  std::string flags = "\"has_row_scale\": false";
  if (features.gather)
    flags += ", \"has_row_indices\": true";
  if (features.scatter)
    flags += ", \"has_scatter_indices\": true";
  text = replaced(text, "\"has_row_scale\": false", flags);
  if (features.atomic)
    text = replaced(text, "\"accumulate\": false",
                    "\"accumulate\": true, \"atomic\": true");
  if (features.swiglu) {
    text = replaced(text, "\"accumulate\": ",
                    "\"activation\": \"swiglu\", \"accumulate\": ");
    if (features.interleaved)
      text = replaced(text, "\"activation\": \"swiglu\"",
                      "\"activation\": \"swiglu\", \"gate_up_block\": 64");
    else
      text = replaced(text, "\"box\": [64, 128, 1]", "\"box\": [64, 64, 1]");
  }
  if (features.gather)
    text = replaced(text, "\"box\": [64, 128], ", "\"box\": [64, 1], ");
  std::string params = "\"value\": \"ldy\"}";
  if (features.gather)
    params += std::string(",\n    ") + kRowIndicesPointer;
  if (features.scatter)
    params += std::string(",\n    ") + kScatterIndicesPointer + ",\n    " +
              kYRowsScalar;
  return replaced(text, "\"value\": \"ldy\"}", params);
}

/// A sort_by_expert (MoE routing) kernel as the compiler writes it: one CTA
/// sorts the (token, k) pairs of i32 topk_ids by expert, E = 256 experts,
/// topk = 8 (docs/Runtime.md, "Routing kernels").
inline const char *const kRoutingManifest = R"json({
  "format": "ggemm-bundle", "version": 1, "arch": "sm_90a",
  "entry": "route_kernel", "ptx": "k.ptx",
  "block": [1024, 1, 1], "cluster": [1, 1, 1], "dynamic_smem": 34056,
  "grid": {"policy": "single"},
  "problem": {"op": "sort_by_expert", "num_experts": 256, "topk": 8, "index_dtype": "i32"},
  "params": [
    {"kind": "pointer", "name": "topk_ids", "tensor": "topk_ids"},
    {"kind": "pointer", "name": "seg_indptr", "tensor": "seg_indptr"},
    {"kind": "pointer", "name": "row_indices", "tensor": "row_indices"},
    {"kind": "pointer", "name": "pair_indices", "tensor": "pair_indices"},
    {"kind": "scalar", "name": "num_pairs", "dtype": "i64", "value": "num_pairs"}]
})json";

/// Kernel parameter sizes of kRoutingManifest, in order.
inline constexpr size_t kRoutingParamSizes[] = {8, 8, 8, 8, 8};

inline std::string withRoutingManifest(const std::string &from,
                                       const std::string &to) {
  return replaced(kRoutingManifest, from, to);
}

/// A quantize kernel as the compiler writes it: bf16 [rows, k] to e4m3 with
/// 1x128 scales, a grid-stride loop over the blocks (docs/Runtime.md,
/// "Quantize kernels").
inline const char *const kQuantizeManifest = R"json({
  "format": "ggemm-bundle", "version": 1, "arch": "sm_90a",
  "entry": "quantize_kernel", "ptx": "k.ptx",
  "block": [256, 1, 1], "cluster": [1, 1, 1], "dynamic_smem": 0,
  "grid": {"policy": "persistent", "ctas_per_sm": 4, "units_per_cta": 64},
  "problem": {"op": "quantize", "x_dtype": "bf16", "q_dtype": "f8e4m3", "scale_block": "1x128", "rank": 2},
  "params": [
    {"kind": "pointer", "name": "x", "tensor": "x"},
    {"kind": "pointer", "name": "q", "tensor": "q"},
    {"kind": "pointer", "name": "scale", "tensor": "scale"},
    {"kind": "scalar", "name": "num_groups", "dtype": "i64", "value": "num_groups"},
    {"kind": "scalar", "name": "rows", "dtype": "i64", "value": "rows_per_group"},
    {"kind": "scalar", "name": "k", "dtype": "i64", "value": "k"},
    {"kind": "scalar", "name": "scale_stride_group", "dtype": "i64", "value": "scale_stride_group"},
    {"kind": "scalar", "name": "scale_stride_row", "dtype": "i64", "value": "scale_stride_row"},
    {"kind": "scalar", "name": "scale_stride_col", "dtype": "i64", "value": "scale_stride_col"}]
})json";

inline std::string withQuantizeManifest(const std::string &from,
                                        const std::string &to) {
  return replaced(kQuantizeManifest, from, to);
}

/// A segment_matmul kernel that writes an e4m3 y with its 1x128 scales, as
/// the compiler writes it (docs/Runtime.md, "FP8 output"): bf16 x [M, 512],
/// w [4, 384, 512], a bias and silu; the 14 parameters of the bf16 kernel,
/// then y_scale and its two strides. y has no descriptor (the epilogue
/// stores it with its scales).
inline const char *const kFp8OutManifest = R"json({
  "format": "ggemm-bundle", "version": 1, "arch": "sm_90a",
  "entry": "fp8out_kernel", "ptx": "k.ptx",
  "block": [384, 1, 1], "cluster": [1, 1, 1], "dynamic_smem": 196704,
  "grid": {"ctas_per_sm": 1, "policy": "persistent"},
  "problem": {"a_dtype": "bf16", "accumulate": false, "activation": "silu", "b_dtype": "bf16", "has_bias": true, "has_row_scale": false, "has_weight_indices": false, "index_dtype": "i32", "k": 512, "m": -1, "n": 384, "num_groups": 4, "num_weights": 4, "op": "segment_matmul", "out_dtype": "f8e4m3", "weight_layout": "nk", "y_scale_block": "1x128"},
  "tile": {"block_k": 64, "block_m": 128, "block_n": 128, "consumer_warpgroups": 2, "stages": 6, "swap_ab": false},
  "params": [
    {"box": [64, 128], "dtype": "bf16", "kind": "tma_descriptor", "name": "a_desc", "oob_fill": "zero", "rank": 2, "swizzle": "128B", "tensor": "x"},
    {"box": [64, 128, 1], "dtype": "bf16", "kind": "tma_descriptor", "name": "b_desc", "oob_fill": "zero", "rank": 3, "swizzle": "128B", "tensor": "w"},
    {"kind": "pointer", "name": "y", "tensor": "y"},
    {"kind": "pointer", "name": "group_rows", "optional": false, "tensor": "seg_indptr"},
    {"kind": "pointer", "name": "weight_indices", "optional": true, "tensor": "weight_indices"},
    {"kind": "pointer", "name": "bias", "optional": true, "tensor": "bias"},
    {"kind": "pointer", "name": "row_scale", "optional": true, "tensor": "row_scale"},
    {"dtype": "i64", "kind": "scalar", "name": "num_rows", "value": "num_rows"},
    {"dtype": "i64", "kind": "scalar", "name": "rows_per_group", "value": "rows_per_group"},
    {"dtype": "i32", "kind": "scalar", "name": "num_groups", "value": "num_groups"},
    {"dtype": "i32", "kind": "scalar", "name": "n", "value": "n"},
    {"dtype": "i32", "kind": "scalar", "name": "k", "value": "k"},
    {"dtype": "i64", "kind": "scalar", "name": "ldy", "value": "ldy"},
    {"dtype": "i32", "kind": "scalar", "name": "num_weights", "value": "num_weights"},
    {"kind": "pointer", "name": "y_scale", "optional": false, "tensor": "y_scale"},
    {"dtype": "i64", "kind": "scalar", "name": "y_scale_stride_row", "value": "y_scale_stride_row"},
    {"dtype": "i64", "kind": "scalar", "name": "y_scale_stride_col", "value": "y_scale_stride_col"}]
})json";

/// Kernel parameter sizes of kFp8OutManifest, in order.
inline constexpr size_t kFp8OutParamSizes[] = {128, 128, 8, 8, 8, 8, 8, 8, 8,
                                               4,   4,   4, 8, 4, 8, 8, 8};

inline std::string withFp8OutManifest(const std::string &from,
                                      const std::string &to) {
  return replaced(kFp8OutManifest, from, to);
}

/// The parameters the compiler appends for an e4m3 y, in order.
inline const char *const kYScalePointer =
    R"json({"name": "y_scale", "kind": "pointer", "tensor": "y_scale", "optional": false})json";
inline const char *const kYScaleStrideRow =
    R"json({"name": "y_scale_stride_row", "kind": "scalar", "dtype": "i64", "value": "y_scale_stride_row"})json";
inline const char *const kYScaleStrideCol =
    R"json({"name": "y_scale_stride_col", "kind": "scalar", "dtype": "i64", "value": "y_scale_stride_col"})json";

/// `kernel` (kSegmentManifest, fp8SegmentManifest(), s8SegmentManifest() or
/// a masked/batched form of one) as a kernel that writes an e4m3 y:
/// out_dtype f8e4m3, y_scale_block "1x128", and y_scale and its strides
/// appended to the parameters.
inline std::string fp8OutOf(const std::string &kernel) {
  std::string text =
      replaced(kernel, "\"out_dtype\": \"bf16\"",
               "\"out_dtype\": \"f8e4m3\", \"y_scale_block\": \"1x128\"");
  const std::string end = "\n  ]\n}";
  size_t position = text.rfind(end);
  EXPECT_NE(position, std::string::npos) << "no params array to append to";
  return text.substr(0, position) + ",\n    " + kYScalePointer + ",\n    " +
         kYScaleStrideRow + ",\n    " + kYScaleStrideCol + end;
}

/// A fresh directory under $TMPDIR, removed with its files at destruction.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base && *base ? base : "/tmp") + "/ggemm-rt-XXXXXX";
    path = pattern;
    if (!mkdtemp(path.data()))
      ADD_FAILURE() << "mkdtemp failed for " << pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  std::string file(const std::string &name) const { return path + "/" + name; }

  std::string write(const std::string &name,
                    const std::string &contents) const {
    std::string full = file(name);
    std::ofstream(full, std::ios::binary) << contents;
    return full;
  }

  /// Writes k.json plus a k.cubin and k.ptx with harmless contents; returns
  /// the manifest path.
  std::string writeBundle(const std::string &manifest,
                          const std::string &cubin = "fake cubin",
                          const std::string &ptx = "fake ptx") const {
    if (!cubin.empty())
      write("k.cubin", cubin);
    if (!ptx.empty())
      write("k.ptx", ptx);
    return write("k.json", manifest);
  }

  /// Writes k.json as multiVariantManifest() (or `manifest`) with small.ptx
  /// and large.cubin; returns the manifest path.
  std::string
  writeMultiVariantBundle(const std::string &manifest = multiVariantManifest(),
                          const std::string &smallPtx = "small ptx",
                          const std::string &largeCubin = "large cubin") const {
    write("small.ptx", smallPtx);
    write("large.cubin", largeCubin);
    return write("k.json", manifest);
  }

private:
  std::string path;
};

/// A row-major tensor at `address`.
inline ggemm_tensor makeTensor(const char *name, uintptr_t address,
                               ggemm_dtype dtype,
                               std::initializer_list<int64_t> shape) {
  ggemm_tensor tensor = {};
  tensor.name = name;
  tensor.data = reinterpret_cast<void *>(address);
  tensor.dtype = dtype;
  tensor.rank = static_cast<int>(shape.size());
  int d = 0;
  for (int64_t extent : shape)
    tensor.shape[d++] = extent;
  int64_t stride = 1;
  for (int i = tensor.rank - 1; i >= 0; --i) {
    tensor.strides[i] = stride;
    stride *= tensor.shape[i];
  }
  return tensor;
}

/// Valid fake device addresses for the segment problem's tensors.
constexpr uintptr_t kX = 0x100000000 + 0x100000;
constexpr uintptr_t kW = 0x100000000 + 0x200000;
constexpr uintptr_t kY = 0x100000000 + 0x300000;
constexpr uintptr_t kIndptr = 0x100000000 + 0x400000;
constexpr uintptr_t kExtra = 0x100000000 + 0x500000;

/// The tensors of kSegmentManifest: M = 1000 rows, 8 groups.
struct SegmentTensors {
  ggemm_tensor x = makeTensor("x", kX, GGEMM_DTYPE_BF16, {1000, 7168});
  ggemm_tensor w = makeTensor("w", kW, GGEMM_DTYPE_BF16, {8, 4096, 7168});
  ggemm_tensor y = makeTensor("y", kY, GGEMM_DTYPE_BF16, {1000, 4096});
  ggemm_tensor indptr = makeTensor("seg_indptr", kIndptr, GGEMM_DTYPE_I32, {9});

  ggemm_tensor list[8];
  int count = 0;

  /// The four required tensors followed by `extra`.
  const ggemm_tensor *get(std::initializer_list<ggemm_tensor> extra = {}) {
    count = 0;
    for (const ggemm_tensor &tensor : {x, w, y, indptr})
      list[count++] = tensor;
    for (const ggemm_tensor &tensor : extra)
      list[count++] = tensor;
    return list;
  }
};

constexpr uintptr_t kRowIndices = 0x100000000 + 0xa00000;
constexpr uintptr_t kScatterIndices = 0x100000000 + 0xb00000;

/// The tensors of moeSegmentManifest(): M = 1000 segment rows in 8 groups,
/// x of T = 300 rows with gather (else M), y of Y = 5000 rows with scatter
/// (else M), w of 2N = 8192 rows with swiglu (else N = 4096).
struct MoeTensors {
  MoeFeatures features;
  ggemm_tensor x, w, y;
  ggemm_tensor indptr = makeTensor("seg_indptr", kIndptr, GGEMM_DTYPE_I32, {9});
  ggemm_tensor rowIndices =
      makeTensor("row_indices", kRowIndices, GGEMM_DTYPE_I32, {1000});
  ggemm_tensor scatterIndices =
      makeTensor("scatter_indices", kScatterIndices, GGEMM_DTYPE_I32, {1000});

  ggemm_tensor list[10];
  int count = 0;

  explicit MoeTensors(const MoeFeatures &features)
      : features(features), x(makeTensor("x", kX, GGEMM_DTYPE_BF16,
                                         {features.gather ? 300 : 1000, 7168})),
        w(makeTensor("w", kW, GGEMM_DTYPE_BF16,
                     {8, features.swiglu ? 8192 : 4096, 7168})),
        y(makeTensor("y", kY, GGEMM_DTYPE_BF16,
                     {features.scatter ? 5000 : 1000, 4096})) {}

  /// x, w, y, seg_indptr, the indices the features enable, then `extra`.
  const ggemm_tensor *get(std::initializer_list<ggemm_tensor> extra = {}) {
    count = 0;
    for (const ggemm_tensor &tensor : {x, w, y, indptr})
      list[count++] = tensor;
    if (features.gather)
      list[count++] = rowIndices;
    if (features.scatter)
      list[count++] = scatterIndices;
    for (const ggemm_tensor &tensor : extra)
      list[count++] = tensor;
    return list;
  }
};

/// A tensor of `shape` with the given `strides` (elements) at `address`.
inline ggemm_tensor makeStrided(const char *name, uintptr_t address,
                                ggemm_dtype dtype,
                                std::initializer_list<int64_t> shape,
                                std::initializer_list<int64_t> strides) {
  ggemm_tensor tensor = makeTensor(name, address, dtype, shape);
  int d = 0;
  for (int64_t stride : strides)
    tensor.strides[d++] = stride;
  EXPECT_EQ(d, tensor.rank) << name << ": one stride per dimension";
  return tensor;
}

constexpr uintptr_t kDy = 0x100000000 + 0x800000;
constexpr uintptr_t kDw = 0x100000000 + 0x900000;

/// The tensors of kRaggedManifest(kn): T = 1000 token rows, N = 4096,
/// K = 7168, 8 groups, f32 dw [8, N, K] (nk) or [8, K, N] (kn).
struct KRaggedTensors {
  ggemm_tensor dy = makeTensor("dy", kDy, GGEMM_DTYPE_BF16, {1000, 4096});
  ggemm_tensor x = makeTensor("x", kX, GGEMM_DTYPE_BF16, {1000, 7168});
  ggemm_tensor indptr = makeTensor("seg_indptr", kIndptr, GGEMM_DTYPE_I32, {9});
  ggemm_tensor dw;

  ggemm_tensor list[8];
  int count = 0;

  explicit KRaggedTensors(bool kn = false)
      : dw(kn ? makeTensor("dw", kDw, GGEMM_DTYPE_F32, {8, 7168, 4096})
              : makeTensor("dw", kDw, GGEMM_DTYPE_F32, {8, 4096, 7168})) {}

  /// dy, x, seg_indptr, dw followed by `extra` (at most 4).
  const ggemm_tensor *get(std::initializer_list<ggemm_tensor> extra = {}) {
    count = 0;
    for (const ggemm_tensor &tensor : {dy, x, indptr, dw})
      list[count++] = tensor;
    for (const ggemm_tensor &tensor : extra)
      list[count++] = tensor;
    return list;
  }
};

constexpr uintptr_t kXScale = 0x100000000 + 0x600000;
constexpr uintptr_t kWScale = 0x100000000 + 0x700000;
constexpr uintptr_t kDyScale = 0x100000000 + 0x1100000;

/// A tensor of MN-major 1x128 scales [rows, blocks] whose blocks are
/// `paddedRows` apart (strides [1, paddedRows]), as
/// torch.empty(blocks, paddedRows).t()[:rows] gives.
inline ggemm_tensor makeMnMajorScales(const char *name, uintptr_t address,
                                      int64_t rows, int64_t blocks,
                                      int64_t paddedRows) {
  ggemm_tensor tensor =
      makeTensor(name, address, GGEMM_DTYPE_F32, {rows, blocks});
  tensor.strides[0] = 1;
  tensor.strides[1] = paddedRows;
  return tensor;
}

/// The tensors of fp8KRaggedManifest(kn) (and, with `dtype` bf16, of
/// transposedKRaggedManifest(kn), which takes no scales): T = 1008 token
/// rows (a multiple of 16, so that contiguous rows of f8e4m3 tokens are
/// 16-byte units; 8 blocks of 128, the last partial), N = 4096, K = 7168,
/// 8 groups. dy [N, T] and x [K, T] transposed; dy_scale [N, 8] and x_scale
/// [K, 8] MN-major; f32 dw [8, N, K] (nk) or [8, K, N] (kn).
struct Fp8KRaggedTensors {
  ggemm_tensor dy;
  ggemm_tensor x;
  ggemm_tensor indptr = makeTensor("seg_indptr", kIndptr, GGEMM_DTYPE_I32, {9});
  ggemm_tensor dw;
  ggemm_tensor dyScale = makeMnMajorScales("dy_scale", kDyScale, 4096, 8, 4096);
  ggemm_tensor xScale = makeMnMajorScales("x_scale", kXScale, 7168, 8, 7168);

  ggemm_tensor list[10];
  int count = 0;

  explicit Fp8KRaggedTensors(bool kn = false,
                             ggemm_dtype dtype = GGEMM_DTYPE_F8E4M3)
      : dy(makeTensor("dy", kDy, dtype, {4096, 1008})),
        x(makeTensor("x", kX, dtype, {7168, 1008})),
        dw(kn ? makeTensor("dw", kDw, GGEMM_DTYPE_F32, {8, 7168, 4096})
              : makeTensor("dw", kDw, GGEMM_DTYPE_F32, {8, 4096, 7168})) {}

  /// `tokens` token rows in dy, x and the scales' blocks (contiguous rows;
  /// null data for none).
  void setTokens(int64_t tokens) {
    auto address = [tokens](uintptr_t base) { return tokens ? base : 0; };
    const int64_t blocks = (tokens + 127) / 128;
    dy = makeTensor("dy", address(kDy), dy.dtype, {4096, tokens});
    x = makeTensor("x", address(kX), x.dtype, {7168, tokens});
    dyScale =
        makeMnMajorScales("dy_scale", address(kDyScale), 4096, blocks, 4096);
    xScale = makeMnMajorScales("x_scale", address(kXScale), 7168, blocks, 7168);
  }

  /// dy, x, seg_indptr, dw, dy_scale, x_scale followed by `extra` (at most
  /// 4).
  const ggemm_tensor *get(std::initializer_list<ggemm_tensor> extra = {}) {
    count = 0;
    for (const ggemm_tensor &tensor : {dy, x, indptr, dw, dyScale, xScale})
      list[count++] = tensor;
    for (const ggemm_tensor &tensor : extra)
      list[count++] = tensor;
    return list;
  }

  /// dy, x, seg_indptr, dw only: a transposed bf16 kernel's tensors.
  const ggemm_tensor *getWithoutScales() {
    count = 0;
    for (const ggemm_tensor &tensor : {dy, x, indptr, dw})
      list[count++] = tensor;
    return list;
  }
};

/// The tensors of fp8SegmentManifest(): M = 1000 rows, K = 7168 (56 blocks of
/// 128), N = 4096 (32 blocks), 8 groups. x_scale is MN-major: [1000, 56]
/// with strides [1, 1000], as torch.empty(56, 1000).t() gives.
struct Fp8SegmentTensors : SegmentTensors {
  ggemm_tensor xScale =
      makeStrided("x_scale", kXScale, GGEMM_DTYPE_F32, {1000, 56}, {1, 1000});
  ggemm_tensor wScale =
      makeTensor("w_scale", kWScale, GGEMM_DTYPE_F32, {8, 32, 56});

  Fp8SegmentTensors() {
    x.dtype = GGEMM_DTYPE_F8E4M3;
    w.dtype = GGEMM_DTYPE_F8E4M3;
  }

  /// x, w, y, seg_indptr, x_scale, w_scale followed by `extra` (at most 2).
  const ggemm_tensor *get(std::initializer_list<ggemm_tensor> extra = {}) {
    SegmentTensors::get({xScale, wScale});
    for (const ggemm_tensor &tensor : extra)
      list[count++] = tensor;
    return list;
  }
};

/// The tensors of s8SegmentManifest(): Fp8SegmentTensors' shapes with s8 x
/// and w and per-row scales, x_scale [1000] (one per token) and w_scale
/// [8, 4096] (one per output channel of each weight).
struct S8SegmentTensors : SegmentTensors {
  ggemm_tensor xScale = makeTensor("x_scale", kXScale, GGEMM_DTYPE_F32, {1000});
  ggemm_tensor wScale =
      makeTensor("w_scale", kWScale, GGEMM_DTYPE_F32, {8, 4096});

  S8SegmentTensors() {
    x.dtype = GGEMM_DTYPE_S8;
    w.dtype = GGEMM_DTYPE_S8;
  }

  /// Tensor-wise scales: one for all of x, one per weight matrix.
  void setTensorScales() {
    xScale = makeTensor("x_scale", kXScale, GGEMM_DTYPE_F32, {1});
    wScale = makeTensor("w_scale", kWScale, GGEMM_DTYPE_F32, {8});
  }

  /// x, w, y, seg_indptr, x_scale, w_scale followed by `extra` (at most 2).
  const ggemm_tensor *get(std::initializer_list<ggemm_tensor> extra = {}) {
    SegmentTensors::get({xScale, wScale});
    for (const ggemm_tensor &tensor : extra)
      list[count++] = tensor;
    return list;
  }
};

constexpr uintptr_t kYScale = 0x100000000 + 0x1000000;

/// The tensors of kFp8OutManifest: M = 1000 rows of bf16 x [1000, 512],
/// w [4, 384, 512], bias [4, 384], e4m3 y [1000, 384] and its scales
/// y_scale [1000, 3] MN-major (torch.empty(3, 1000).t()), 4 groups.
struct Fp8OutTensors {
  ggemm_tensor x = makeTensor("x", kX, GGEMM_DTYPE_BF16, {1000, 512});
  ggemm_tensor w = makeTensor("w", kW, GGEMM_DTYPE_BF16, {4, 384, 512});
  ggemm_tensor y = makeTensor("y", kY, GGEMM_DTYPE_F8E4M3, {1000, 384});
  ggemm_tensor indptr = makeTensor("seg_indptr", kIndptr, GGEMM_DTYPE_I32, {5});
  ggemm_tensor bias = makeTensor("bias", kExtra, GGEMM_DTYPE_F32, {4, 384});
  ggemm_tensor yScale =
      makeStrided("y_scale", kYScale, GGEMM_DTYPE_F32, {1000, 3}, {1, 1000});

  ggemm_tensor list[8];
  int count = 0;

  /// x, w, y, seg_indptr, bias, y_scale followed by `extra` (at most 2).
  const ggemm_tensor *get(std::initializer_list<ggemm_tensor> extra = {}) {
    count = 0;
    for (const ggemm_tensor &tensor : {x, w, y, indptr, bias, yScale})
      list[count++] = tensor;
    for (const ggemm_tensor &tensor : extra)
      list[count++] = tensor;
    return list;
  }
};

constexpr uintptr_t kTopkIds = 0x100000000 + 0xc00000;
constexpr uintptr_t kPairIndices = 0x100000000 + 0xd00000;

/// The tensors of kRoutingManifest: T = 16 tokens of topk = 8, so P = 128
/// pairs, E = 256 experts.
struct RoutingTensors {
  ggemm_tensor ids = makeTensor("topk_ids", kTopkIds, GGEMM_DTYPE_I32, {128});
  ggemm_tensor indptr =
      makeTensor("seg_indptr", kIndptr, GGEMM_DTYPE_I32, {257});
  ggemm_tensor rows =
      makeTensor("row_indices", kRowIndices, GGEMM_DTYPE_I32, {128});
  ggemm_tensor pairs =
      makeTensor("pair_indices", kPairIndices, GGEMM_DTYPE_I32, {128});

  ggemm_tensor list[8];
  int count = 0;

  /// topk_ids (of `dtype`), row_indices and pair_indices of `numPairs`
  /// pairs; with none, null data, as PyTorch may give empty tensors.
  void setPairs(int64_t numPairs, ggemm_dtype dtype = GGEMM_DTYPE_I32) {
    auto address = [numPairs](uintptr_t base) { return numPairs ? base : 0; };
    ids = makeTensor("topk_ids", address(kTopkIds), dtype, {numPairs});
    rows = makeTensor("row_indices", address(kRowIndices), GGEMM_DTYPE_I32,
                      {numPairs});
    pairs = makeTensor("pair_indices", address(kPairIndices), GGEMM_DTYPE_I32,
                       {numPairs});
  }

  /// topk_ids, seg_indptr, row_indices, pair_indices followed by `extra`.
  const ggemm_tensor *get(std::initializer_list<ggemm_tensor> extra = {}) {
    count = 0;
    for (const ggemm_tensor &tensor : {ids, indptr, rows, pairs})
      list[count++] = tensor;
    for (const ggemm_tensor &tensor : extra)
      list[count++] = tensor;
    return list;
  }
};

constexpr uintptr_t kQ = 0x100000000 + 0xe00000;
constexpr uintptr_t kScale = 0x100000000 + 0xf00000;

/// The tensors of kQuantizeManifest: x [100, 512] bf16, q likewise e4m3,
/// the scales [100, 4] MN-major (a [4, 104] buffer transposed), as the FP8
/// GEMMs read them.
struct QuantizeTensors {
  ggemm_tensor x = makeTensor("x", kX, GGEMM_DTYPE_BF16, {100, 512});
  ggemm_tensor q = makeTensor("q", kQ, GGEMM_DTYPE_F8E4M3, {100, 512});
  ggemm_tensor scale = mnMajorScale(100, 4, 104);

  static ggemm_tensor mnMajorScale(int64_t rows, int64_t blocks,
                                   int64_t paddedRows) {
    ggemm_tensor t =
        makeTensor("scale", kScale, GGEMM_DTYPE_F32, {rows, blocks});
    t.strides[0] = 1;
    t.strides[1] = paddedRows;
    return t;
  }

  ggemm_tensor list[4];

  const ggemm_tensor *get() {
    list[0] = x;
    list[1] = q;
    list[2] = scale;
    return list;
  }
};

} // namespace ggemm::runtime::test

#endif // GGEMM_RUNTIME_TEST_TESTSUPPORT_H
