//===- Manifest.cpp - Kernel-bundle manifest (format versions 1, 2) ------===//
//
// The JSON is parsed by nlohmann/json, made as strict as RFC 8259 asks
// (parseJson), and the manifest is read from tables of the keys each object
// may hold. Errors name the bundle file and the field as a JSON pointer
// (RFC 6901): "k.json: /params/3/dtype: ...".
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

namespace ggemm::runtime {

const char *dtypeName(ggemm_dtype dtype) {
  switch (dtype) {
  case GGEMM_DTYPE_BF16:
    return "bf16";
  case GGEMM_DTYPE_F16:
    return "f16";
  case GGEMM_DTYPE_F32:
    return "f32";
  case GGEMM_DTYPE_F8E4M3:
    return "f8e4m3";
  case GGEMM_DTYPE_F8E5M2:
    return "f8e5m2";
  case GGEMM_DTYPE_I32:
    return "i32";
  case GGEMM_DTYPE_I64:
    return "i64";
  case GGEMM_DTYPE_S8:
    return "s8";
  }
  return "<invalid dtype>";
}

int64_t dtypeSize(ggemm_dtype dtype) {
  switch (dtype) {
  case GGEMM_DTYPE_F8E4M3:
  case GGEMM_DTYPE_F8E5M2:
  case GGEMM_DTYPE_S8:
    return 1;
  case GGEMM_DTYPE_BF16:
  case GGEMM_DTYPE_F16:
    return 2;
  case GGEMM_DTYPE_F32:
  case GGEMM_DTYPE_I32:
    return 4;
  case GGEMM_DTYPE_I64:
    return 8;
  }
  return 0;
}

bool isValidDtype(int dtype) {
  return dtype >= GGEMM_DTYPE_BF16 && dtype <= GGEMM_DTYPE_S8;
}

const char *tensorRoleName(TensorRole role) {
  switch (role) {
  case TensorRole::X:
    return "x";
  case TensorRole::W:
    return "w";
  case TensorRole::Y:
    return "y";
  case TensorRole::SegIndptr:
    return "seg_indptr";
  case TensorRole::MaskedM:
    return "masked_m";
  case TensorRole::WeightIndices:
    return "weight_indices";
  case TensorRole::Bias:
    return "bias";
  case TensorRole::RowScale:
    return "row_scale";
  case TensorRole::XScale:
    return "x_scale";
  case TensorRole::WScale:
    return "w_scale";
  case TensorRole::Dy:
    return "dy";
  case TensorRole::Dw:
    return "dw";
  case TensorRole::RowIndices:
    return "row_indices";
  case TensorRole::ScatterIndices:
    return "scatter_indices";
  case TensorRole::TopkIds:
    return "topk_ids";
  case TensorRole::PairIndices:
    return "pair_indices";
  case TensorRole::Q:
    return "q";
  case TensorRole::Scale:
    return "scale";
  case TensorRole::YScale:
    return "y_scale";
  case TensorRole::DyScale:
    return "dy_scale";
  }
  return "<invalid tensor>";
}

const char *opName(Op op) {
  switch (op) {
  case Op::SegmentMatmul:
    return "segment_matmul";
  case Op::MaskedMatmul:
    return "masked_matmul";
  case Op::BatchedMatmul:
    return "batched_matmul";
  case Op::SegmentMatmulK:
    return "segment_matmul_k";
  case Op::SortByExpert:
    return "sort_by_expert";
  case Op::Quantize:
    return "quantize";
  }
  return "<invalid op>";
}

const char *scaleBlockName(ScaleBlock block) {
  switch (block) {
  case ScaleBlock::None:
    return "none";
  case ScaleBlock::Block1x128:
    return "1x128";
  case ScaleBlock::Block128x128:
    return "128x128";
  case ScaleBlock::PerRow:
    return "per_row";
  case ScaleBlock::Tensor:
    return "tensor";
  }
  return "<invalid scale block>";
}

const char *activationName(Activation activation) {
  switch (activation) {
  case Activation::None:
    return "none";
  case Activation::Relu:
    return "relu";
  case Activation::Gelu:
    return "gelu";
  case Activation::Silu:
    return "silu";
  case Activation::Swiglu:
    return "swiglu";
  }
  return "<invalid activation>";
}

ggemm_dtype expectedTensorDtype(const ProblemSpec &problem, TensorRole role) {
  switch (role) {
  case TensorRole::X:
    // segment_matmul_k: x is B (nk) or A (kn); parseProblem made a_dtype and
    // b_dtype equal.
    return problem.aDtype;
  case TensorRole::W:
    return problem.bDtype;
  case TensorRole::Y:
    return problem.outDtype;
  case TensorRole::Dy:
    return problem.aDtype;
  case TensorRole::Dw:
  case TensorRole::Q:
    return problem.outDtype;
  case TensorRole::SegIndptr:
    // sort_by_expert's index_dtype is its input's; it writes i32 offsets.
    return problem.op == Op::SortByExpert ? GGEMM_DTYPE_I32
                                          : problem.indexDtype;
  case TensorRole::MaskedM:
  case TensorRole::TopkIds:
    return problem.indexDtype;
  case TensorRole::WeightIndices:
  case TensorRole::RowIndices:
  case TensorRole::ScatterIndices:
  case TensorRole::PairIndices:
    return GGEMM_DTYPE_I32;
  case TensorRole::Bias:
  case TensorRole::RowScale:
  case TensorRole::XScale:
  case TensorRole::WScale:
  case TensorRole::Scale:
  case TensorRole::YScale:
  case TensorRole::DyScale:
    return GGEMM_DTYPE_F32;
  }
  return GGEMM_DTYPE_F32;
}

bool tensorExistsForOp(TensorRole role, Op op) {
  if (op == Op::Quantize)
    return role == TensorRole::X || role == TensorRole::Q ||
           role == TensorRole::Scale;
  if (role == TensorRole::Q || role == TensorRole::Scale)
    return false;
  if (op == Op::SortByExpert)
    return role == TensorRole::TopkIds || role == TensorRole::SegIndptr ||
           role == TensorRole::RowIndices || role == TensorRole::PairIndices;
  if (role == TensorRole::TopkIds || role == TensorRole::PairIndices)
    return false;
  // dy_scale and x_scale: the f8e4m3 form's (the problem decides).
  if (op == Op::SegmentMatmulK)
    return role == TensorRole::Dy || role == TensorRole::X ||
           role == TensorRole::SegIndptr || role == TensorRole::Dw ||
           role == TensorRole::DyScale || role == TensorRole::XScale;
  if (role == TensorRole::Dy || role == TensorRole::Dw ||
      role == TensorRole::DyScale)
    return false;
  // An f8e4m3 y's scales: the forward GEMMs' (segment_matmul_k returned
  // above).
  if (role == TensorRole::YScale)
    return true;
  if (role == TensorRole::SegIndptr || role == TensorRole::RowIndices ||
      role == TensorRole::ScatterIndices)
    return op == Op::SegmentMatmul;
  if (role == TensorRole::MaskedM)
    return op == Op::MaskedMatmul;
  return true;
}

bool Manifest::usesTensor(TensorRole role) const {
  for (const ParamSpec &param : params)
    if (param.kind != ParamKind::Scalar && param.tensor == role)
      return true;
  return false;
}

namespace {

template <typename T> struct EnumEntry {
  const char *name;
  T value;
};

const EnumEntry<Op> kOps[] = {{"segment_matmul", Op::SegmentMatmul},
                              {"masked_matmul", Op::MaskedMatmul},
                              {"batched_matmul", Op::BatchedMatmul},
                              {"segment_matmul_k", Op::SegmentMatmulK},
                              {"sort_by_expert", Op::SortByExpert},
                              {"quantize", Op::Quantize}};
const EnumEntry<ggemm_dtype> kFloatDtypes[] = {{"bf16", GGEMM_DTYPE_BF16},
                                               {"f16", GGEMM_DTYPE_F16},
                                               {"f32", GGEMM_DTYPE_F32},
                                               {"f8e4m3", GGEMM_DTYPE_F8E4M3},
                                               {"f8e5m2", GGEMM_DTYPE_F8E5M2}};
// What x and w (and the TMA descriptors of x, w and y) may hold: the float
// types and s8, INT8's operands. Outputs stay float (kFloatDtypes).
const EnumEntry<ggemm_dtype> kOperandDtypes[] = {
    {"bf16", GGEMM_DTYPE_BF16},     {"f16", GGEMM_DTYPE_F16},
    {"f32", GGEMM_DTYPE_F32},       {"f8e4m3", GGEMM_DTYPE_F8E4M3},
    {"f8e5m2", GGEMM_DTYPE_F8E5M2}, {"s8", GGEMM_DTYPE_S8}};
const EnumEntry<ggemm_dtype> kIndexDtypes[] = {{"i32", GGEMM_DTYPE_I32},
                                               {"i64", GGEMM_DTYPE_I64}};
const EnumEntry<ggemm_dtype> kAllDtypes[] = {
    {"bf16", GGEMM_DTYPE_BF16},     {"f16", GGEMM_DTYPE_F16},
    {"f32", GGEMM_DTYPE_F32},       {"f8e4m3", GGEMM_DTYPE_F8E4M3},
    {"f8e5m2", GGEMM_DTYPE_F8E5M2}, {"i32", GGEMM_DTYPE_I32},
    {"i64", GGEMM_DTYPE_I64},       {"s8", GGEMM_DTYPE_S8}};
const EnumEntry<WeightLayout> kWeightLayouts[] = {{"nk", WeightLayout::NK},
                                                  {"kn", WeightLayout::KN}};
const EnumEntry<GridPolicy> kGridPolicies[] = {
    {"persistent", GridPolicy::Persistent},
    {"tiles", GridPolicy::Tiles},
    {"single", GridPolicy::Single}};
const EnumEntry<ParamKind> kParamKinds[] = {
    {"tma_descriptor", ParamKind::TmaDescriptor},
    {"pointer", ParamKind::Pointer},
    {"scalar", ParamKind::Scalar}};
const EnumEntry<Swizzle> kSwizzles[] = {{"none", Swizzle::None},
                                        {"32B", Swizzle::Bytes32},
                                        {"64B", Swizzle::Bytes64},
                                        {"128B", Swizzle::Bytes128}};
const EnumEntry<OobFill> kOobFills[] = {{"zero", OobFill::Zero},
                                        {"nan", OobFill::Nan}};
const EnumEntry<TensorRole> kTensorRoles[] = {
    {"x", TensorRole::X},
    {"w", TensorRole::W},
    {"y", TensorRole::Y},
    {"seg_indptr", TensorRole::SegIndptr},
    {"masked_m", TensorRole::MaskedM},
    {"weight_indices", TensorRole::WeightIndices},
    {"bias", TensorRole::Bias},
    {"row_scale", TensorRole::RowScale},
    {"x_scale", TensorRole::XScale},
    {"w_scale", TensorRole::WScale},
    {"dy", TensorRole::Dy},
    {"dw", TensorRole::Dw},
    {"row_indices", TensorRole::RowIndices},
    {"scatter_indices", TensorRole::ScatterIndices},
    {"topk_ids", TensorRole::TopkIds},
    {"pair_indices", TensorRole::PairIndices},
    {"q", TensorRole::Q},
    {"scale", TensorRole::Scale},
    {"y_scale", TensorRole::YScale},
    {"dy_scale", TensorRole::DyScale}};
// quantize: what its kernel reads, writes and how its scales are blocked.
const EnumEntry<ggemm_dtype> kQuantizeInputDtypes[] = {
    {"bf16", GGEMM_DTYPE_BF16}, {"f16", GGEMM_DTYPE_F16}};
const EnumEntry<ggemm_dtype> kFp8Dtypes[] = {{"f8e4m3", GGEMM_DTYPE_F8E4M3},
                                             {"f8e5m2", GGEMM_DTYPE_F8E5M2}};
const EnumEntry<ScaleBlock> kQuantizeScaleBlocks[] = {
    {"1x128", ScaleBlock::Block1x128}, {"128x128", ScaleBlock::Block128x128}};
// An f8e4m3 y's scales: one per row and 128 columns of y.
const EnumEntry<ScaleBlock> kYScaleBlocks[] = {
    {"1x128", ScaleBlock::Block1x128}};
const EnumEntry<ScaleBlock> kScaleBlocks[] = {
    {"1x128", ScaleBlock::Block1x128},
    {"128x128", ScaleBlock::Block128x128},
    {"per_row", ScaleBlock::PerRow},
    {"tensor", ScaleBlock::Tensor}};
const EnumEntry<ScalarSource> kScalarSources[] = {
    {"num_rows", ScalarSource::NumRows},
    {"rows_per_group", ScalarSource::RowsPerGroup},
    {"num_groups", ScalarSource::NumGroups},
    {"num_weights", ScalarSource::NumWeights},
    {"m", ScalarSource::M},
    {"n", ScalarSource::N},
    {"k", ScalarSource::K},
    {"lda", ScalarSource::Lda},
    {"ldy", ScalarSource::Ldy},
    {"num_tiles", ScalarSource::NumTiles},
    {"y_rows", ScalarSource::YRows},
    {"x_rows", ScalarSource::XRows},
    {"num_pairs", ScalarSource::NumPairs},
    {"scale_stride_group", ScalarSource::ScaleStrideGroup},
    {"scale_stride_row", ScalarSource::ScaleStrideRow},
    {"scale_stride_col", ScalarSource::ScaleStrideCol},
    {"y_scale_stride_row", ScalarSource::YScaleStrideRow},
    {"y_scale_stride_col", ScalarSource::YScaleStrideCol}};
const EnumEntry<Activation> kActivations[] = {{"none", Activation::None},
                                              {"relu", Activation::Relu},
                                              {"gelu", Activation::Gelu},
                                              {"silu", Activation::Silu},
                                              {"swiglu", Activation::Swiglu}};

template <typename T, size_t N>
std::string listNames(const EnumEntry<T> (&table)[N]) {
  std::string names;
  for (size_t i = 0; i < N; ++i) {
    if (i)
      names += i + 1 == N ? " or " : ", ";
    names += table[i].name;
  }
  return names;
}

std::string quote(const std::string &text) { return "\"" + text + "\""; }

using Json = nlohmann::json;
using Pointer = Json::json_pointer;

/// Short rendering of a JSON value for "got ..." messages.
std::string describe(const Json &value) {
  if (!value.is_string() && !value.is_number() && !value.is_boolean())
    return value.type_name();
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  return value.is_string() ? "string " + text : text;
}

/// JSON integers that fit int64_t. nlohmann/json reads positive integers as
/// unsigned, and integers beyond 64 bits as floating point.
bool isInt64(const Json &value) {
  return value.is_number_integer() &&
         (!value.is_number_unsigned() ||
          value.get<uint64_t>() <= uint64_t(INT64_MAX));
}

// Deep enough for any manifest; the old hand-written reader had the same
// bound, so the same documents are rejected.
constexpr int kMaxDepth = 64;

/// Thrown from the parser callback to stop at a document nlohmann/json would
/// accept but a manifest must not be.
struct Rejection {
  std::string at; // JSON pointer; empty when no field is to blame
  std::string message;
};

/// Where the parser is, for the JSON pointer of an error, and the keys seen
/// in each open object, to reject duplicates.
struct ParseLevel {
  bool isObject;
  std::set<std::string> keys;
  std::string key;  // objects: the member being parsed
  size_t index = 0; // arrays: the element being parsed
};

std::string pointerTo(const std::vector<ParseLevel> &levels) {
  Pointer at;
  for (const ParseLevel &level : levels) {
    if (level.isObject && level.keys.empty())
      break;
    at = level.isObject ? at / level.key : at / level.index;
  }
  return at.to_string();
}

/// nlohmann/json's message without its "[json.exception.NAME.ID] " tag and
/// its "parse error at line L, column C: " (said by the caller), with bytes
/// outside ASCII escaped: the text it quotes may not be UTF-8.
std::string jsonMessage(const std::string &what) {
  std::string message = what;
  size_t tagEnd = message.find("] ");
  if (message.rfind("[json.exception.", 0) == 0 && tagEnd != std::string::npos)
    message.erase(0, tagEnd + 2);
  size_t colon = message.find(": ");
  if (message.rfind("parse error", 0) == 0 && colon != std::string::npos)
    message.erase(0, colon + 2);
  std::string escaped;
  for (unsigned char c : message) {
    if (c < 0x80) {
      escaped += static_cast<char>(c);
      continue;
    }
    static const char *hex = "0123456789abcdef";
    escaped += std::string("\\x") + hex[c >> 4] + hex[c & 15];
  }
  return escaped;
}

/// "SOURCE:LINE:COLUMN: invalid JSON at byte BYTE: MESSAGE", `byte`
/// counting from 1 as nlohmann/json's parse_error::byte does.
Status syntaxError(std::string_view text, size_t byte,
                   const std::string &sourceName, const std::string &message) {
  std::string_view before =
      text.substr(0, std::min<size_t>(byte ? byte - 1 : 0, text.size()));
  size_t lineStart = before.rfind('\n');
  size_t column =
      before.size() - (lineStart == std::string_view::npos ? 0 : lineStart + 1);
  return badManifest(
      sourceName + ":" +
      std::to_string(1 + std::count(before.begin(), before.end(), '\n')) + ":" +
      std::to_string(column + 1) + ": invalid JSON at byte " +
      std::to_string(byte) + ": " + message);
}

/// Parses `text` as one RFC 8259 document. nlohmann/json is strict (no
/// comments, no trailing commas, UTF-8 checked) except that a repeated key
/// silently replaces the earlier value, nesting is unbounded and a NUL byte
/// ends the input; those are rejected here. Nothing it throws gets out.
Status parseJson(std::string_view text, const std::string &sourceName,
                 Json &root) {
  if (size_t nul = text.find('\0'); nul != std::string_view::npos)
    return syntaxError(text, nul + 1, sourceName,
                       "NUL byte (JSON text cannot contain one)");
  std::vector<ParseLevel> levels;
  auto track = [&](int depth, Json::parse_event_t event, Json &parsed) {
    using Event = Json::parse_event_t;
    if ((event == Event::object_start || event == Event::array_start ||
         event == Event::value) &&
        depth > kMaxDepth)
      throw Rejection{"", "nesting deeper than " + std::to_string(kMaxDepth) +
                              " levels"};
    if (event == Event::object_start || event == Event::array_start)
      levels.push_back({event == Event::object_start, {}, {}, 0});
    if (event == Event::key) {
      ParseLevel &level = levels.back();
      level.key = parsed.get<std::string>();
      if (!level.keys.insert(level.key).second)
        throw Rejection{pointerTo(levels), "duplicate key " + quote(level.key)};
    }
    if (event == Event::object_end || event == Event::array_end)
      levels.pop_back();
    // An element is complete: the next one of the array has the next index.
    if ((event == Event::value || event == Event::object_end ||
         event == Event::array_end) &&
        !levels.empty() && !levels.back().isObject)
      ++levels.back().index;
    return true;
  };
  std::string at;
  std::string message;
  try {
    root = Json::parse(text.begin(), text.end(), track,
                       /*allow_exceptions=*/true, /*ignore_comments=*/false);
    return Status::success();
  } catch (const Rejection &rejection) {
    at = rejection.at;
    message = rejection.message;
  } catch (const Json::parse_error &error) {
    return syntaxError(text, error.byte, sourceName, jsonMessage(error.what()));
  } catch (const Json::exception &error) {
    // E.g. "number overflow parsing '1e999'", which carries no position.
    at = pointerTo(levels);
    message = jsonMessage(error.what());
  }
  return badManifest(sourceName + ": " + (at.empty() ? "" : at + ": ") +
                     "invalid JSON: " + message);
}

enum Presence : bool { Optional = false, Required = true };
enum Strictness : bool { KnownKeysOnly = true, AnyKeys = false };

/// One expected member of an object: `read` checks the value and stores it,
/// or is null for a key that is allowed but not used by the runtime.
struct Field {
  const char *key;
  Presence presence;
  std::function<Status(const Json &value, const Pointer &at)> read;
};

Field ignored(const char *key) { return {key, Optional, nullptr}; }

/// Reads typed fields out of the manifest's JSON and formats errors as
/// "SOURCE: POINTER: MESSAGE", POINTER naming the field (RFC 6901).
class Reader {
public:
  explicit Reader(const std::string &sourceName) : sourceName(sourceName) {}

  Status error(const Pointer &at, const std::string &message) const {
    std::string field = at.to_string();
    return badManifest(sourceName + ": " + (field.empty() ? "" : field + ": ") +
                       message);
  }

  /// Reads the members of `object` listed in `fields`, in their order.
  /// KnownKeysOnly rejects other keys first: in a semantic section a
  /// misspelt key would otherwise silently fall back to a default.
  Status readObject(const Json &object, const Pointer &at,
                    const std::vector<Field> &fields,
                    Strictness strictness) const {
    if (!object.is_object())
      return error(at, "expected an object, got " + describe(object));
    if (strictness == KnownKeysOnly)
      for (const auto &member : object.items()) {
        bool known = false;
        std::string names;
        for (const Field &field : fields) {
          known |= member.key() == field.key;
          names += (names.empty() ? "" : ", ") + std::string(field.key);
        }
        if (!known)
          return error(at / member.key(),
                       "unknown key (expected one of " + names + ")");
      }
    for (const Field &field : fields) {
      auto member = object.find(field.key);
      if (member == object.end()) {
        if (field.presence == Required)
          return error(at / field.key, "missing required key");
        continue;
      }
      if (field.read)
        if (Status status = field.read(*member, at / field.key); !status.ok())
          return status;
    }
    return Status::success();
  }

  Status checkInteger(const Json &value, const Pointer &at, int64_t min,
                      int64_t max) const {
    if (!isInt64(value))
      return error(at, "expected an integer, got " + describe(value));
    int64_t integer = value.get<int64_t>();
    if (integer < min || integer > max)
      return error(at, "expected an integer in [" + std::to_string(min) + ", " +
                           std::to_string(max) + "], got " +
                           std::to_string(integer));
    return Status::success();
  }

  template <typename T, size_t N>
  Status readEnum(const Json &value, const Pointer &at,
                  const EnumEntry<T> (&table)[N], T &out) const {
    if (value.is_string())
      for (const EnumEntry<T> &entry : table)
        if (value.get_ref<const std::string &>() == entry.name) {
          out = entry.value;
          return Status::success();
        }
    return error(at, "expected one of " + listNames(table) + ", got " +
                         describe(value));
  }

  /// A fixed-length array of integers in [min, max].
  template <typename T>
  Status readIntegers(const Json &value, const Pointer &at, size_t length,
                      int64_t min, int64_t max, T *out) const {
    if (!value.is_array() || value.size() != length)
      return error(
          at,
          "expected an array of " + std::to_string(length) + " integers, got " +
              (value.is_array()
                   ? "an array of " + std::to_string(value.size()) + " elements"
                   : describe(value)));
    for (size_t i = 0; i < length; ++i) {
      if (Status status = checkInteger(value[i], at / i, min, max);
          !status.ok())
        return status;
      out[i] = static_cast<T>(value[i].get<int64_t>());
    }
    return Status::success();
  }

  // Fields of the tables below.

  Field string(const char *key, Presence presence, std::string &out) const {
    return {key, presence, [this, &out](const Json &value, const Pointer &at) {
              if (!value.is_string())
                return error(at, "expected a string, got " + describe(value));
              if (value.get_ref<const std::string &>().empty())
                return error(at, "expected a non-empty string");
              out = value.get<std::string>();
              return Status::success();
            }};
  }

  template <typename T>
  Field integer(const char *key, Presence presence, int64_t min, int64_t max,
                T &out) const {
    return {key, presence,
            [this, min, max, &out](const Json &value, const Pointer &at) {
              Status status = checkInteger(value, at, min, max);
              if (status.ok())
                out = static_cast<T>(value.get<int64_t>());
              return status;
            }};
  }

  /// A static size: -1 (taken from the tensors at launch) or positive.
  Field size(const char *key, Presence presence, int64_t &out) const {
    return {key, presence, [this, &out](const Json &value, const Pointer &at) {
              if (!isInt64(value) ||
                  (value.get<int64_t>() != -1 && value.get<int64_t>() <= 0))
                return error(at, "expected a positive integer or -1 (dynamic), "
                                 "got " +
                                     describe(value));
              out = value.get<int64_t>();
              return Status::success();
            }};
  }

  Field boolean(const char *key, bool &out) const {
    return {key, Optional, [this, &out](const Json &value, const Pointer &at) {
              if (!value.is_boolean())
                return error(at,
                             "expected true or false, got " + describe(value));
              out = value.get<bool>();
              return Status::success();
            }};
  }

  template <typename T, size_t N>
  Field choice(const char *key, Presence presence,
               const EnumEntry<T> (&table)[N], T &out) const {
    return {key, presence,
            [this, &table, &out](const Json &value, const Pointer &at) {
              return readEnum(value, at, table, out);
            }};
  }

  /// A choice that may also be null, which reads as `none` (as an absent
  /// key does).
  template <typename T, size_t N>
  Field nullableChoice(const char *key, const EnumEntry<T> (&table)[N], T none,
                       T &out) const {
    return {key, Optional,
            [this, &table, none, &out](const Json &value, const Pointer &at) {
              if (value.is_null()) {
                out = none;
                return Status::success();
              }
              if (value.is_string())
                for (const EnumEntry<T> &entry : table)
                  if (value.get_ref<const std::string &>() == entry.name) {
                    out = entry.value;
                    return Status::success();
                  }
              return error(at, "expected null or one of " + listNames(table) +
                                   ", got " + describe(value));
            }};
  }

  template <typename T>
  Field integers(const char *key, Presence presence, size_t length, int64_t min,
                 int64_t max, T *out) const {
    return {
        key, presence,
        [this, length, min, max, out](const Json &value, const Pointer &at) {
          return readIntegers(value, at, length, min, max, out);
        }};
  }

private:
  const std::string &sourceName;
};

/// Parses "sm_90a" / "sm_90" / "sm_100f" into a compute capability.
bool parseArch(const std::string &arch, int &major, int &minor,
               bool &specific) {
  if (arch.size() < 5 || arch.compare(0, 3, "sm_") != 0)
    return false;
  size_t end = arch.size();
  char suffix = arch.back();
  specific = suffix == 'a';
  if (suffix == 'a' || suffix == 'f')
    --end;
  std::string digits = arch.substr(3, end - 3);
  if (digits.size() < 2 || digits.size() > 3)
    return false;
  for (char c : digits)
    if (c < '0' || c > '9')
      return false;
  int value = std::stoi(digits);
  major = value / 10;
  minor = value % 10;
  return major > 0;
}

int64_t swizzleBytes(Swizzle swizzle) {
  switch (swizzle) {
  case Swizzle::None:
    return 0;
  case Swizzle::Bytes32:
    return 32;
  case Swizzle::Bytes64:
    return 64;
  case Swizzle::Bytes128:
    return 128;
  }
  return 0;
}

/// The problem fields segment_matmul_k restricts: it reads dy and x of one
/// dtype, bf16, f16 or f8e4m3, always has dynamic token rows, and has no
/// weight indices, bias, row scale, y scales or activation (its epilogue
/// only stores or accumulates the f32 sums). f8e4m3 dy and x come
/// transposed ([N, T] and [K, T]: wgmma's fp8 forms read both operands
/// K-major) with 1x128 scales along the tokens (x_scale_block and
/// w_scale_block "1x128": dy_scale and x_scale); bf16 and f16 ones have no
/// scales and may come either way. `activation` and `transposed` are null
/// when the key is absent.
Status checkKRaggedProblem(const Reader &reader, const Pointer &at,
                           const ProblemSpec &problem, const Json *activation,
                           const Json *transposed) {
  const std::string op = opName(problem.op);
  const bool fp8 = problem.aDtype == GGEMM_DTYPE_F8E4M3;
  if (problem.aDtype != GGEMM_DTYPE_BF16 && problem.aDtype != GGEMM_DTYPE_F16 &&
      !fp8)
    return reader.error(at / "a_dtype",
                        op + " reads dy and x as bf16, f16 or f8e4m3, got " +
                            dtypeName(problem.aDtype) +
                            (problem.aDtype == GGEMM_DTYPE_S8
                                 ? " (int8 K-ragged is not defined)"
                             : problem.aDtype == GGEMM_DTYPE_F8E5M2
                                 ? " (fp8 K-ragged reads e4m3 operands only)"
                                 : ""));
  if (problem.bDtype != problem.aDtype)
    return reader.error(at / "b_dtype", std::string("expected a_dtype (") +
                                            dtypeName(problem.aDtype) +
                                            "): dy and x of " + op +
                                            " have one dtype, got " +
                                            dtypeName(problem.bDtype));
  if (problem.outDtype != GGEMM_DTYPE_F32 &&
      problem.outDtype != GGEMM_DTYPE_BF16 &&
      problem.outDtype != GGEMM_DTYPE_F16)
    return reader.error(at / "out_dtype", op +
                                              " writes dw as f32, bf16 or f16, "
                                              "got " +
                                              dtypeName(problem.outDtype));
  if (fp8 && !problem.transposed)
    return reader.error(
        at / "transposed",
        std::string(transposed ? "" : "missing, but ") + "f8e4m3 dy and x of " +
            op +
            " must be given transposed, dy [N, T] and x [K, T] (the token "
            "rows innermost: wgmma's fp8 forms read both operands K-major)" +
            (transposed ? ", expected true, got false" : ""));
  if (problem.m != -1)
    return reader.error(at / "m", op +
                                      "'s token rows are always dynamic, "
                                      "expected -1, got " +
                                      std::to_string(problem.m));
  struct AbsentTensor {
    const char *key;
    const char *tensor;
    bool value;
  };
  const AbsentTensor absentTensors[] = {
      {"has_weight_indices", "weight_indices", problem.hasWeightIndices},
      {"has_bias", "bias", problem.hasBias},
      {"has_row_scale", "row_scale", problem.hasRowScale}};
  for (const AbsentTensor &absent : absentTensors)
    if (absent.value)
      return reader.error(at / absent.key, op + " has no " + absent.tensor +
                                               ", expected false, got true");
  // Both operands' scales run along the tokens, the reduction: the two
  // blocks say together that dy and x each have 1x128 scales.
  const std::pair<const char *, ScaleBlock> operandScales[] = {
      {"x_scale_block", problem.xScaleBlock},
      {"w_scale_block", problem.wScaleBlock}};
  for (const auto &[key, block] : operandScales) {
    if (fp8 && block == ScaleBlock::None)
      return reader.error(at / key,
                          "missing, but f8e4m3 dy and x of " + op +
                              " take 1x128 scales along the token rows "
                              "(dy_scale and x_scale): expected \"1x128\"");
    if (fp8 && block != ScaleBlock::Block1x128)
      return reader.error(at / key, "f8e4m3 dy and x of " + op +
                                        " take 1x128 scales along the token "
                                        "rows (dy_scale and x_scale), "
                                        "expected \"1x128\", got " +
                                        quote(scaleBlockName(block)));
    if (!fp8 && block != ScaleBlock::None)
      return reader.error(at / key, op + " of " + dtypeName(problem.aDtype) +
                                        " dy and x has no scales (only "
                                        "f8e4m3 dy and x take 1x128 scales), "
                                        "got " +
                                        quote(scaleBlockName(block)));
  }
  if (problem.yScaleBlock != ScaleBlock::None)
    return reader.error(at / "y_scale_block",
                        op +
                            " writes no f8e4m3 dw, so it has no y_scale, got " +
                            quote(scaleBlockName(problem.yScaleBlock)));
  if (activation && *activation != "none")
    return reader.error(at / "activation",
                        op + " has no activation, expected \"none\", got " +
                            describe(*activation));
  return Status::success();
}

/// Gather-A, scatter (and its atomic adds) and SwiGLU are features of
/// segment_matmul's kernel only; atomic adds are a way to accumulate
/// scattered rows, so they need has_scatter_indices and accumulate;
/// interleaved gate/up blocks are a layout of a swiglu weight.
Status checkGatherScatterProblem(const Reader &reader, const Pointer &at,
                                 const ProblemSpec &problem) {
  if (problem.op != Op::SegmentMatmul) {
    const std::string op = opName(problem.op);
    struct SegmentOnly {
      const char *key;
      const char *feature;
      bool value;
    };
    const SegmentOnly flags[] = {
        {"has_row_indices",
         "row_indices (only segment_matmul gathers rows of x)",
         problem.hasRowIndices},
        {"has_scatter_indices",
         "scatter_indices (only segment_matmul scatters rows of y)",
         problem.hasScatterIndices},
        {"atomic", "atomic adds (only segment_matmul scatters rows of y)",
         problem.atomic}};
    for (const SegmentOnly &flag : flags)
      if (flag.value)
        return reader.error(at / flag.key, op + " has no " + flag.feature +
                                               ", expected false, got true");
    if (problem.activation == Activation::Swiglu)
      return reader.error(at / "activation",
                          op + " has no swiglu (only segment_matmul reads "
                               "weights of gate and up halves), got "
                               "string \"swiglu\"");
  }
  if (problem.atomic && !problem.hasScatterIndices)
    return reader.error(at / "atomic",
                        "atomic adds are for scattered rows, which need "
                        "has_scatter_indices true, got false");
  if (problem.gateUpBlock > 0 && problem.activation != Activation::Swiglu)
    return reader.error(at / "gate_up_block",
                        std::string("gate_up_block orders the gate and up "
                                    "rows of a swiglu weight; expected 0 "
                                    "with activation ") +
                            quote(activationName(problem.activation)) +
                            ", got " + std::to_string(problem.gateUpBlock));
  if (problem.atomic && !problem.accumulate)
    return reader.error(at / "atomic", "atomic adds accumulate into y, which "
                                       "needs accumulate true, got false");
  return Status::success();
}

/// INT8 (s8 x s8 -> s32 wgmma): x and w are both s8, and the exact int32
/// accumulator reaches y only through the epilogue's scales, which are
/// tensor-wise or per row (an s8 kernel has no per-K-block promotion, so
/// no 1x128 / 128x128 blocks); y is any output (checkOutputProblem).
/// parseProblem has made the scale blocks come together. A no-op without
/// s8 operands.
Status checkInt8Problem(const Reader &reader, const Pointer &at,
                        const ProblemSpec &problem) {
  const bool aInt8 = problem.aDtype == GGEMM_DTYPE_S8;
  const bool bInt8 = problem.bDtype == GGEMM_DTYPE_S8;
  if (!aInt8 && !bInt8)
    return Status::success();
  if (aInt8 != bInt8)
    return reader.error(at / (aInt8 ? "b_dtype" : "a_dtype"),
                        std::string("expected s8 like ") +
                            (aInt8 ? "a_dtype" : "b_dtype") +
                            " (x and w of an int8 kernel are both s8), got " +
                            dtypeName(aInt8 ? problem.bDtype : problem.aDtype));
  if (problem.xScaleBlock == ScaleBlock::None)
    return reader.error(at / "x_scale_block",
                        "missing, but s8 operands need x_scale_block and "
                        "w_scale_block (\"tensor\" or \"per_row\") to "
                        "dequantise the int32 accumulator");
  const std::pair<const char *, ScaleBlock> blocks[] = {
      {"x_scale_block", problem.xScaleBlock},
      {"w_scale_block", problem.wScaleBlock}};
  for (const auto &[key, block] : blocks)
    if (block != ScaleBlock::Tensor && block != ScaleBlock::PerRow)
      return reader.error(at / key,
                          std::string("s8 operands take \"tensor\" or "
                                      "\"per_row\" scales, got ") +
                              quote(scaleBlockName(block)) +
                              " (block scales are for fp8)");
  return Status::success();
}

/// y of segment, masked and batched matmul: bf16, f16, f32 or f8e4m3 (an
/// e5m2 y is no kernel's), whatever x and w are. An f8e4m3 y is quantised
/// in the epilogue, per row and 128 columns, into its 1x128 scales
/// (y_scale), so y_scale_block "1x128" comes with it and only with it; the
/// values quantised are those the epilogue computes, so nothing is added
/// to y (accumulate, atomic) and its rows are y's own (no scatter).
Status checkOutputProblem(const Reader &reader, const Pointer &at,
                          const ProblemSpec &problem) {
  if (problem.outDtype == GGEMM_DTYPE_F8E5M2)
    return reader.error(at / "out_dtype",
                        std::string(opName(problem.op)) +
                            " writes y as bf16, f16, f32 or f8e4m3 (with "
                            "y_scale_block \"1x128\"), got f8e5m2");
  const bool fp8Out = problem.outDtype == GGEMM_DTYPE_F8E4M3;
  const bool yScaled = problem.yScaleBlock != ScaleBlock::None;
  if (fp8Out && !yScaled)
    return reader.error(at / "y_scale_block",
                        "missing, but an f8e4m3 y needs y_scale_block "
                        "\"1x128\" (the epilogue writes its scales to "
                        "y_scale)");
  if (!fp8Out && yScaled)
    return reader.error(at / "y_scale_block",
                        std::string("\"1x128\" scales an f8e4m3 y, but "
                                    "out_dtype is ") +
                            dtypeName(problem.outDtype));
  if (!fp8Out)
    return Status::success();
  struct Excluded {
    const char *key;
    bool value;
    const char *why;
  };
  const Excluded excluded[] = {
      {"atomic", problem.atomic,
       "adds to y, but an f8e4m3 y is quantised from the values the "
       "epilogue computes"},
      {"accumulate", problem.accumulate,
       "adds to y, but an f8e4m3 y is quantised from the values the "
       "epilogue computes"},
      {"has_scatter_indices", problem.hasScatterIndices,
       "scatters rows of y, but an f8e4m3 y and its scales have the segment "
       "rows"}};
  for (const Excluded &flag : excluded)
    if (flag.value)
      return reader.error(at / flag.key, std::string(flag.key) + " " +
                                             flag.why +
                                             ": expected false, got true");
  return Status::success();
}

/// sort_by_expert's problem: none of a GEMM's fields, its own three. Its
/// index_dtype (topk_ids') is required: a kernel reading i64 ids through an
/// i32 default would read garbage.
Status parseRoutingProblem(const Reader &reader, const Json &object,
                           const Pointer &at, ProblemSpec &problem) {
  // seg_indptr's E + 1 offsets and the P < 2^31 pairs are i32.
  const int64_t maxI32 = std::numeric_limits<int32_t>::max();
  return reader.readObject(
      object, at,
      {reader.choice("op", Required, kOps, problem.op),
       reader.integer("num_experts", Required, 1, maxI32 - 1,
                      problem.numExperts),
       reader.integer("topk", Required, 1, maxI32, problem.topk),
       reader.choice("index_dtype", Required, kIndexDtypes,
                     problem.indexDtype)},
      KnownKeysOnly);
}

/// quantize's problem: x's and q's dtypes, the scale block and x's rank.
Status parseQuantizeProblem(const Reader &reader, const Json &object,
                            const Pointer &at, ProblemSpec &problem) {
  int64_t rank = 0;
  Status status = reader.readObject(
      object, at,
      {reader.choice("op", Required, kOps, problem.op),
       reader.choice("x_dtype", Required, kQuantizeInputDtypes, problem.aDtype),
       reader.choice("q_dtype", Required, kFp8Dtypes, problem.outDtype),
       reader.choice("scale_block", Required, kQuantizeScaleBlocks,
                     problem.xScaleBlock),
       reader.integer("rank", Required, 2, 3, rank)},
      KnownKeysOnly);
  problem.bDtype = problem.outDtype;
  problem.rank = static_cast<int>(rank);
  return status;
}

/// Without weight indices there is one weight (gradient) per group.
Status checkNumWeights(const Reader &reader, const Pointer &at,
                       const ProblemSpec &problem) {
  if (!problem.hasWeightIndices && problem.numGroups != -1 &&
      problem.numWeights != -1 && problem.numGroups != problem.numWeights)
    return reader.error(at / "num_weights",
                        "num_weights (" + std::to_string(problem.numWeights) +
                            ") must equal num_groups (" +
                            std::to_string(problem.numGroups) +
                            ") when has_weight_indices is false");
  return Status::success();
}

Status parseProblem(const Reader &reader, const Json &object, const Pointer &at,
                    ProblemSpec &problem) {
  // The op decides which keys the problem has.
  if (Status status = reader.readObject(
          object, at, {reader.choice("op", Required, kOps, problem.op)},
          AnyKeys);
      !status.ok())
    return status;
  if (problem.op == Op::SortByExpert)
    return parseRoutingProblem(reader, object, at, problem);
  if (problem.op == Op::Quantize)
    return parseQuantizeProblem(reader, object, at, problem);
  const Json *activation = nullptr;
  const Json *transposed = nullptr;
  if (Status status = reader.readObject(
          object, at,
          {reader.choice("op", Required, kOps, problem.op),
           reader.choice("a_dtype", Required, kOperandDtypes, problem.aDtype),
           reader.choice("b_dtype", Required, kOperandDtypes, problem.bDtype),
           reader.choice("out_dtype", Required, kFloatDtypes, problem.outDtype),
           reader.choice("index_dtype", Optional, kIndexDtypes,
                         problem.indexDtype),
           reader.choice("weight_layout", Optional, kWeightLayouts,
                         problem.weightLayout),
           reader.size("m", Required, problem.m),
           reader.size("n", Required, problem.n),
           reader.size("k", Required, problem.k),
           reader.size("num_groups", Required, problem.numGroups),
           reader.size("num_weights", Optional, problem.numWeights),
           reader.boolean("has_weight_indices", problem.hasWeightIndices),
           reader.boolean("has_bias", problem.hasBias),
           reader.boolean("has_row_scale", problem.hasRowScale),
           reader.boolean("has_row_indices", problem.hasRowIndices),
           reader.boolean("has_scatter_indices", problem.hasScatterIndices),
           reader.boolean("accumulate", problem.accumulate),
           reader.boolean("atomic", problem.atomic),
           {"transposed", Optional,
            [&reader, &transposed, &problem](const Json &value,
                                             const Pointer &valueAt) {
              transposed = &value;
              return reader.boolean("transposed", problem.transposed)
                  .read(value, valueAt);
            }},
           reader.integer("gate_up_block", Optional, 0, 1 << 16,
                          problem.gateUpBlock),
           reader.nullableChoice("x_scale_block", kScaleBlocks,
                                 ScaleBlock::None, problem.xScaleBlock),
           reader.nullableChoice("w_scale_block", kScaleBlocks,
                                 ScaleBlock::None, problem.wScaleBlock),
           reader.nullableChoice("y_scale_block", kYScaleBlocks,
                                 ScaleBlock::None, problem.yScaleBlock),
           // The compiler's epilogue applies it; the runtime checks it
           // where an op has none, and swiglu's weight of 2N rows.
           {"activation", Optional,
            [&reader, &activation, &problem](const Json &value,
                                             const Pointer &valueAt) {
              activation = &value;
              return reader.readEnum(value, valueAt, kActivations,
                                     problem.activation);
            }}},
          KnownKeysOnly);
      !status.ok())
    return status;
  if (problem.transposed && problem.op != Op::SegmentMatmulK)
    return reader.error(at / "transposed",
                        std::string(opName(problem.op)) +
                            " reads x and w as they are (only "
                            "segment_matmul_k takes transposed dy and x), "
                            "expected false, got true");
  if (problem.op == Op::SegmentMatmulK)
    if (Status status =
            checkKRaggedProblem(reader, at, problem, activation, transposed);
        !status.ok())
      return status;
  if (Status status = checkGatherScatterProblem(reader, at, problem);
      !status.ok())
    return status;
  if (problem.op != Op::SegmentMatmulK)
    if (Status status = checkOutputProblem(reader, at, problem); !status.ok())
      return status;
  // segment_matmul_k's scale blocks are checkKRaggedProblem's (both 1x128
  // along the tokens, or none); the rest is the forward ops'.
  if (problem.op == Op::SegmentMatmulK)
    return checkNumWeights(reader, at, problem);

  // fp8 block scaling: x's and w's scales come together, and only fp8 inputs
  // are scaled.
  if (problem.xScaleBlock == ScaleBlock::Block128x128)
    return reader.error(at / "x_scale_block",
                        "\"128x128\" is a block of w; x_scale_block is one "
                        "of 1x128, per_row or tensor");
  if (problem.wScaleBlock == ScaleBlock::Block1x128)
    return reader.error(at / "w_scale_block",
                        "\"1x128\" is a block of x; w_scale_block is one "
                        "of 128x128, per_row or tensor");
  const bool xScaled = problem.xScaleBlock != ScaleBlock::None;
  const bool wScaled = problem.wScaleBlock != ScaleBlock::None;
  if (xScaled != wScaled) {
    const char *missing = xScaled ? "w_scale_block" : "x_scale_block";
    const char *given = xScaled ? "x_scale_block" : "w_scale_block";
    ScaleBlock givenBlock = xScaled ? problem.xScaleBlock : problem.wScaleBlock;
    return reader.error(at / missing,
                        std::string("missing while ") + given + " is " +
                            quote(scaleBlockName(givenBlock)) +
                            " (x and w are scaled together: give both scale "
                            "blocks or neither)");
  }
  if (Status status = checkInt8Problem(reader, at, problem); !status.ok())
    return status;
  if (xScaled && problem.aDtype != GGEMM_DTYPE_F8E4M3 &&
      problem.aDtype != GGEMM_DTYPE_F8E5M2 && problem.aDtype != GGEMM_DTYPE_S8)
    return reader.error(at / "x_scale_block",
                        std::string("scale blocks are for fp8 and s8 inputs "
                                    "(a_dtype f8e4m3, f8e5m2 or s8), but "
                                    "a_dtype is ") +
                            dtypeName(problem.aDtype));

  return checkNumWeights(reader, at, problem);
}

Status parseParam(const Reader &reader, const Json &object, const Pointer &at,
                  const ProblemSpec &problem, ParamSpec &param) {
  // The kind decides the other keys; descriptors and pointers name a tensor.
  Status status = reader.readObject(
      object, at,
      {reader.string("name", Required, param.name),
       reader.choice("kind", Required, kParamKinds, param.kind)},
      AnyKeys);
  if (status.ok() && param.kind != ParamKind::Scalar)
    status = reader.readObject(
        object, at,
        {reader.choice("tensor", Required, kTensorRoles, param.tensor)},
        AnyKeys);
  if (!status.ok())
    return status;

  const bool routing = problem.op == Op::SortByExpert;
  const bool quantize = problem.op == Op::Quantize;
  auto quantizeSource = [](ScalarSource source) {
    return source == ScalarSource::NumGroups ||
           source == ScalarSource::RowsPerGroup || source == ScalarSource::K ||
           source == ScalarSource::ScaleStrideGroup ||
           source == ScalarSource::ScaleStrideRow ||
           source == ScalarSource::ScaleStrideCol;
  };
  auto quantizeScalar = [&](const Json &value, const Pointer &valueAt) {
    return reader.error(valueAt, "quantize's scalars are \"num_groups\", "
                                 "\"rows_per_group\", \"k\" and the "
                                 "\"scale_stride_*\" values, got " +
                                     describe(value));
  };
  // num_pairs is the only quantity of sort_by_expert, and only its.
  auto routingScalar = [&](const Json &value, const Pointer &valueAt) {
    return reader.error(valueAt,
                        "sort_by_expert's only scalar is \"num_pairs\", got " +
                            describe(value));
  };
  if (param.kind == ParamKind::Scalar)
    return reader.readObject(
        object, at,
        {ignored("name"),
         ignored("kind"),
         reader.choice("dtype", Required, kIndexDtypes, param.dtype),
         {"value", Required,
          [&](const Json &value, const Pointer &valueAt) {
            if (!isInt64(value)) {
              Status status =
                  reader.readEnum(value, valueAt, kScalarSources, param.source);
              if (!status.ok())
                return status;
              if (routing && param.source != ScalarSource::NumPairs)
                return routingScalar(value, valueAt);
              if (quantize && !quantizeSource(param.source))
                return quantizeScalar(value, valueAt);
              if (!quantize &&
                  (param.source == ScalarSource::ScaleStrideGroup ||
                   param.source == ScalarSource::ScaleStrideRow ||
                   param.source == ScalarSource::ScaleStrideCol))
                return reader.error(valueAt,
                                    std::string("the scale strides are values "
                                                "of quantize, not of ") +
                                        opName(problem.op));
              if ((param.source == ScalarSource::YScaleStrideRow ||
                   param.source == ScalarSource::YScaleStrideCol) &&
                  problem.yScaleBlock == ScaleBlock::None)
                return reader.error(valueAt,
                                    describe(value) +
                                        " is a value of a kernel that writes "
                                        "an f8e4m3 y and its y_scale, which "
                                        "needs problem.y_scale_block");
              if (!routing && param.source == ScalarSource::NumPairs)
                return reader.error(valueAt,
                                    std::string("\"num_pairs\" is a value "
                                                "of sort_by_expert, not of ") +
                                        opName(problem.op));
              // Without scatter y's rows are the segment rows (num_rows).
              if (param.source == ScalarSource::YRows &&
                  !problem.hasScatterIndices)
                return reader.error(valueAt,
                                    "\"y_rows\" is the rows of a scattered "
                                    "y and needs problem.has_scatter_indices, "
                                    "which is false");
              return status;
            }
            if (routing)
              return routingScalar(value, valueAt);
            if (quantize)
              return quantizeScalar(value, valueAt);
            param.source = ScalarSource::Literal;
            param.literal = value.get<int64_t>();
            if (param.dtype == GGEMM_DTYPE_I32 &&
                (param.literal < INT32_MIN || param.literal > INT32_MAX))
              return reader.error(valueAt,
                                  "literal " + std::to_string(param.literal) +
                                      " does not fit the scalar's dtype i32");
            return Status::success();
          }}},
        KnownKeysOnly);

  const char *tensorName = tensorRoleName(param.tensor);
  const bool kRagged = problem.op == Op::SegmentMatmulK;
  // segment_matmul_k keeps the 14-parameter ABI of the other ops: its
  // weight_indices, bias and row_scale slots are optional pointers that are
  // always null (a required one fails the has_* check of parseParams).
  const bool nullSlot = kRagged && param.kind == ParamKind::Pointer &&
                        (param.tensor == TensorRole::WeightIndices ||
                         param.tensor == TensorRole::Bias ||
                         param.tensor == TensorRole::RowScale);
  if (!tensorExistsForOp(param.tensor, problem.op) && !nullSlot)
    return reader.error(at / "tensor",
                        std::string("tensor ") + quote(tensorName) +
                            " does not exist for " + opName(problem.op));
  if (routing && param.kind == ParamKind::TmaDescriptor)
    return reader.error(at / "kind",
                        "sort_by_expert takes pointers and one scalar, "
                        "expected \"pointer\", got \"tma_descriptor\"");
  if (quantize && param.kind == ParamKind::TmaDescriptor)
    return reader.error(at / "kind",
                        "quantize takes pointers and scalars, expected "
                        "\"pointer\", got \"tma_descriptor\"");
  // Scales exist only in a block-scaled problem: a kernel that reads them
  // from a problem without them would read whatever the caller's null is.
  // segment_matmul_k's two are its f8e4m3 form's, which TMA reads.
  const bool kRaggedScale = kRagged && (param.tensor == TensorRole::DyScale ||
                                        param.tensor == TensorRole::XScale);
  if (kRaggedScale && problem.xScaleBlock == ScaleBlock::None)
    return reader.error(at / "tensor",
                        std::string("tensor ") + quote(tensorName) +
                            " needs problem.x_scale_block and w_scale_block "
                            "\"1x128\" (f8e4m3 dy and x), but the problem "
                            "has no scales");
  if (kRaggedScale && param.kind != ParamKind::TmaDescriptor)
    return reader.error(at / "kind",
                        std::string("segment_matmul_k reads ") +
                            quote(tensorName) +
                            " by TMA, expected \"tma_descriptor\", got " +
                            describe(object.at("kind")));
  if ((param.tensor == TensorRole::XScale &&
       problem.xScaleBlock == ScaleBlock::None) ||
      (param.tensor == TensorRole::WScale &&
       problem.wScaleBlock == ScaleBlock::None))
    return reader.error(at / "tensor",
                        std::string("tensor ") + quote(tensorName) +
                            " needs problem." + tensorName +
                            "_block, but the problem has no scales");
  if (param.tensor == TensorRole::YScale &&
      problem.yScaleBlock == ScaleBlock::None)
    return reader.error(at / "tensor",
                        std::string("tensor \"y_scale\" needs "
                                    "problem.y_scale_block (an f8e4m3 y), but "
                                    "out_dtype is ") +
                            dtypeName(problem.outDtype));
  ggemm_dtype expectedDtype = expectedTensorDtype(problem, param.tensor);
  auto checkDtype = [&](ggemm_dtype dtype) {
    if (dtype == expectedDtype)
      return Status::success();
    return reader.error(at / "dtype",
                        std::string("tensor ") + quote(tensorName) +
                            " has dtype " + dtypeName(expectedDtype) +
                            " in this problem, got " + dtypeName(dtype));
  };

  if (param.kind == ParamKind::Pointer) {
    // "dtype" is optional for pointers; when present it must agree.
    param.dtype = expectedDtype;
    status = reader.readObject(
        object, at,
        {ignored("name"), ignored("kind"), ignored("tensor"),
         reader.choice("dtype", Optional, kAllDtypes, param.dtype),
         reader.boolean("optional", param.optional)},
        KnownKeysOnly);
    if (status.ok() && (routing || quantize) && param.optional)
      return reader.error(at / "optional",
                          std::string(opName(problem.op)) +
                              " reads or writes every tensor, so " +
                              quote(tensorName) +
                              " is required: expected false, got true");
    return status.ok() ? checkDtype(param.dtype) : status;
  }

  // TMA descriptor. `xScale`: 1x128 scales, MN-major [rows, blocks] (of
  // x for the forward ops; of dy or x along the tokens for
  // segment_matmul_k).
  const bool xScale = param.tensor == TensorRole::XScale || kRaggedScale;
  if (kRagged && param.tensor != TensorRole::Dy &&
      param.tensor != TensorRole::X && param.tensor != TensorRole::Dw &&
      !kRaggedScale)
    return reader.error(at / "tensor",
                        "a tma_descriptor of segment_matmul_k can describe dy, "
                        "x, dw, dy_scale or x_scale, got " +
                            quote(tensorName));
  if (!kRagged && param.tensor != TensorRole::X &&
      param.tensor != TensorRole::W && param.tensor != TensorRole::Y && !xScale)
    return reader.error(at / "tensor",
                        "a tma_descriptor can describe x, w, y or x_scale, "
                        "got " +
                            quote(tensorName));
  // Only 1x128 scales have the [rows, k blocks] layout the descriptor maps.
  if (xScale && problem.xScaleBlock != ScaleBlock::Block1x128)
    return reader.error(at / "tensor",
                        std::string("a tma_descriptor of \"x_scale\" needs "
                                    "x_scale_block \"1x128\", got ") +
                            quote(scaleBlockName(problem.xScaleBlock)) +
                            " (pass per_row and tensor scales by pointer)");
  status = reader.readObject(
      object, at,
      {ignored("name"), ignored("kind"), ignored("tensor"),
       reader.choice("dtype", Required, kOperandDtypes, param.dtype),
       reader.integer("rank", Required, 1, kMaxTensorMapRank, param.rank),
       ignored("box"),
       reader.choice("swizzle", Required, kSwizzles, param.swizzle),
       reader.choice("oob_fill", Optional, kOobFills, param.oobFill)},
      KnownKeysOnly);
  if (status.ok())
    status = checkDtype(param.dtype);
  if (!status.ok())
    return status;

  int expectedRank = param.tensor == TensorRole::W ? 3 : 2;
  bool rankOk = param.rank == expectedRank ||
                (param.tensor != TensorRole::W && !xScale && param.rank == 3 &&
                 problem.op != Op::SegmentMatmul && !kRagged);
  if (!rankOk)
    return reader.error(
        at / "rank",
        std::string("a descriptor of ") + quote(tensorName) + " for " +
            opName(problem.op) + " has rank " +
            (param.tensor == TensorRole::W ? "3"
             : kRaggedScale                ? "2 (rows, token blocks)"
             : xScale                      ? "2 (rows of all groups, k blocks)"
             : kRagged && problem.transposed ? "2 (token rows, rows)"
             : kRagged                       ? "2 (columns, token rows)"
             : problem.op == Op::SegmentMatmul
                 ? "2"
                 : "2 (rows of all groups) or 3 (group, row, column)") +
            ", got " + std::to_string(param.rank));
  // The kernel reads the scales of a k block as one plain column.
  if (xScale && param.swizzle != Swizzle::None)
    return reader.error(at / "swizzle",
                        std::string("a descriptor of ") + quote(tensorName) +
                            " is not swizzled, expected \"none\", got " +
                            describe(object.at("swizzle")));

  if (Status status =
          reader.readObject(object, at,
                            {reader.integers("box", Required, param.rank, 1,
                                             256, param.box.data())},
                            AnyKeys);
      !status.ok())
    return status;
  int64_t innerBytes = int64_t(param.box[0]) * dtypeSize(param.dtype);
  int64_t swizzleWidth = swizzleBytes(param.swizzle);
  if (swizzleWidth == 0 && innerBytes % 16 != 0)
    return reader.error(at / "box", "innermost box extent is " +
                                        std::to_string(innerBytes) +
                                        " bytes; TMA needs a multiple of 16 "
                                        "bytes");
  if (swizzleWidth != 0 && innerBytes != swizzleWidth)
    return reader.error(
        at / "box", "innermost box extent is " + std::to_string(innerBytes) +
                        " bytes, expected the swizzle width " +
                        std::to_string(swizzleWidth) + " bytes");
  if (param.oobFill == OobFill::Nan && dtypeSize(param.dtype) == 1)
    return reader.error(at / "oob_fill",
                        std::string("\"nan\" fill is not available for ") +
                            (param.dtype == GGEMM_DTYPE_S8 ? "s8" : "fp8") +
                            " tensors (TMA sees them as uint8)");
  return Status::success();
}

/// sort_by_expert's kernel takes its four tensors and num_pairs, each once
/// (parseParam admitted nothing else), in the manifest's order.
Status checkRoutingParams(const Reader &reader, const Pointer &at,
                          const Manifest &manifest) {
  const char *const expected = "topk_ids, seg_indptr, row_indices, "
                               "pair_indices and num_pairs";
  for (TensorRole role : {TensorRole::TopkIds, TensorRole::SegIndptr,
                          TensorRole::RowIndices, TensorRole::PairIndices})
    if (!manifest.usesTensor(role))
      return reader.error(at, std::string("no parameter passes tensor ") +
                                  quote(tensorRoleName(role)) +
                                  " (sort_by_expert takes " + expected + ")");
  if (std::none_of(manifest.params.begin(), manifest.params.end(),
                   [](const ParamSpec &param) {
                     return param.kind == ParamKind::Scalar;
                   }))
    return reader.error(at, std::string("no scalar parameter carries "
                                        "\"num_pairs\" (sort_by_expert "
                                        "takes ") +
                                expected + ")");
  if (manifest.params.size() != 5)
    return reader.error(at, std::string("sort_by_expert takes 5 parameters (") +
                                expected + ", each once), got " +
                                std::to_string(manifest.params.size()));
  return Status::success();
}

/// quantize's kernel takes x, q, scale and its six scalars, each once
/// (parseParam admitted nothing else).
Status checkQuantizeParams(const Reader &reader, const Pointer &at,
                           const Manifest &manifest) {
  const char *const expected =
      "x, q, scale, num_groups, rows_per_group, k, scale_stride_group, "
      "scale_stride_row and scale_stride_col";
  for (TensorRole role : {TensorRole::X, TensorRole::Q, TensorRole::Scale})
    if (!manifest.usesTensor(role))
      return reader.error(at, std::string("no parameter passes tensor ") +
                                  quote(tensorRoleName(role)) +
                                  " (quantize takes " + expected + ")");
  for (ScalarSource source :
       {ScalarSource::NumGroups, ScalarSource::RowsPerGroup, ScalarSource::K,
        ScalarSource::ScaleStrideGroup, ScalarSource::ScaleStrideRow,
        ScalarSource::ScaleStrideCol})
    if (std::none_of(manifest.params.begin(), manifest.params.end(),
                     [&](const ParamSpec &param) {
                       return param.kind == ParamKind::Scalar &&
                              param.source == source;
                     }))
      return reader.error(at, std::string("a scalar of quantize is missing "
                                          "(quantize takes ") +
                                  expected + ")");
  if (manifest.params.size() != 9)
    return reader.error(at, std::string("quantize takes 9 parameters (") +
                                expected + ", each once), got " +
                                std::to_string(manifest.params.size()));
  return Status::success();
}

Status parseParams(const Reader &reader, const Json &array, const Pointer &at,
                   Manifest &manifest) {
  if (!array.is_array())
    return reader.error(at, "expected an array, got " + describe(array));
  if (array.size() > size_t(kMaxKernelParams))
    return reader.error(at, "at most " + std::to_string(kMaxKernelParams) +
                                " parameters are supported, got " +
                                std::to_string(array.size()));
  int numDescriptors = 0;
  for (size_t i = 0; i < array.size(); ++i) {
    ParamSpec param;
    if (Status status =
            parseParam(reader, array[i], at / i, manifest.problem, param);
        !status.ok())
      return status;
    for (const ParamSpec &previous : manifest.params)
      if (previous.name == param.name)
        return reader.error(at / i / "name",
                            "duplicate parameter name " + quote(param.name));
    if (param.kind == ParamKind::TmaDescriptor &&
        ++numDescriptors > kMaxTensorMapParams)
      return reader.error(at / i,
                          "at most " + std::to_string(kMaxTensorMapParams) +
                              " tma_descriptor parameters are supported");
    manifest.params.push_back(std::move(param));
  }
  if (manifest.problem.op == Op::SortByExpert)
    return checkRoutingParams(reader, at, manifest);
  if (manifest.problem.op == Op::Quantize)
    return checkQuantizeParams(reader, at, manifest);

  // Every tensor the problem needs must reach the kernel, and a tensor the
  // problem was compiled without must not be demanded.
  const ProblemSpec &problem = manifest.problem;
  struct Requirement {
    TensorRole role;
    bool required;
    std::string reason;
  };
  auto scaleReason = [](const char *key, ScaleBlock block) {
    return std::string("problem.") + key + " is " +
           quote(scaleBlockName(block));
  };
  const bool kRagged = problem.op == Op::SegmentMatmulK;
  const Requirement requirements[] = {
      {TensorRole::X, true, "every problem reads x"},
      {TensorRole::W, !kRagged, std::string(opName(problem.op)) + " reads w"},
      {TensorRole::Y, !kRagged, std::string(opName(problem.op)) + " writes y"},
      {TensorRole::Dy, kRagged, "segment_matmul_k reads dy"},
      {TensorRole::Dw, kRagged, "segment_matmul_k writes dw"},
      {TensorRole::SegIndptr, problem.op == Op::SegmentMatmul || kRagged,
       std::string(opName(problem.op)) + " reads seg_indptr"},
      {TensorRole::MaskedM, problem.op == Op::MaskedMatmul,
       "masked_matmul reads masked_m"},
      {TensorRole::WeightIndices, problem.hasWeightIndices,
       "problem.has_weight_indices is true"},
      {TensorRole::Bias, problem.hasBias, "problem.has_bias is true"},
      {TensorRole::RowScale, problem.hasRowScale,
       "problem.has_row_scale is true"},
      {TensorRole::RowIndices, problem.hasRowIndices,
       "problem.has_row_indices is true"},
      {TensorRole::ScatterIndices, problem.hasScatterIndices,
       "problem.has_scatter_indices is true"},
      {TensorRole::XScale, problem.xScaleBlock != ScaleBlock::None,
       scaleReason("x_scale_block", problem.xScaleBlock)},
      {TensorRole::DyScale, kRagged && problem.wScaleBlock != ScaleBlock::None,
       "problem.x_scale_block and w_scale_block are \"1x128\": f8e4m3 dy "
       "and x have scales"},
      {TensorRole::WScale, !kRagged && problem.wScaleBlock != ScaleBlock::None,
       scaleReason("w_scale_block", problem.wScaleBlock)},
      {TensorRole::YScale, problem.yScaleBlock != ScaleBlock::None,
       scaleReason("y_scale_block", problem.yScaleBlock)},
  };
  for (const Requirement &requirement : requirements)
    if (requirement.required && !manifest.usesTensor(requirement.role))
      return reader.error(at, std::string("no parameter passes tensor ") +
                                  quote(tensorRoleName(requirement.role)) +
                                  " (" + requirement.reason + ")");
  for (size_t i = 0; i < manifest.params.size(); ++i) {
    const ParamSpec &param = manifest.params[i];
    if (param.kind != ParamKind::Pointer || param.optional)
      continue;
    bool gatedOff =
        (param.tensor == TensorRole::WeightIndices &&
         !problem.hasWeightIndices) ||
        (param.tensor == TensorRole::Bias && !problem.hasBias) ||
        (param.tensor == TensorRole::RowScale && !problem.hasRowScale) ||
        (param.tensor == TensorRole::RowIndices && !problem.hasRowIndices) ||
        (param.tensor == TensorRole::ScatterIndices &&
         !problem.hasScatterIndices);
    if (gatedOff)
      return reader.error(
          at / i, std::string("tensor ") + quote(tensorRoleName(param.tensor)) +
                      " is marked required (optional: false) but the problem "
                      "is compiled without it");
  }
  // The kernel drops rows scattered outside y, so it must know y's rows.
  if (problem.hasScatterIndices &&
      std::none_of(manifest.params.begin(), manifest.params.end(),
                   [](const ParamSpec &param) {
                     return param.kind == ParamKind::Scalar &&
                            param.source == ScalarSource::YRows;
                   }))
    return reader.error(at, "no scalar parameter carries \"y_rows\" "
                            "(problem.has_scatter_indices is true: the kernel "
                            "skips rows scattered outside [0, y_rows))");
  // The kernel writes an f8e4m3 y's scales at these strides.
  const std::pair<ScalarSource, const char *> yScaleStrides[] = {
      {ScalarSource::YScaleStrideRow, "y_scale_stride_row"},
      {ScalarSource::YScaleStrideCol, "y_scale_stride_col"}};
  if (problem.yScaleBlock != ScaleBlock::None)
    for (const auto &stride : yScaleStrides)
      if (std::none_of(manifest.params.begin(), manifest.params.end(),
                       [&stride](const ParamSpec &param) {
                         return param.kind == ParamKind::Scalar &&
                                param.source == stride.first;
                       }))
        return reader.error(at, std::string("no scalar parameter carries \"") +
                                    stride.second +
                                    "\" (problem.y_scale_block is \"1x128\": "
                                    "the kernel writes y_scale at its "
                                    "strides)");
  return Status::success();
}

/// The fields of one kernel that precede the problem: at the top level of a
/// version 1 manifest, in each element of `variants` in version 2.
std::vector<Field> kernelHeadFields(const Reader &reader, Manifest &manifest,
                                    std::string &ptx, std::string &cubin) {
  return {
      reader.string("entry", Required, manifest.entry),
      reader.string("ptx", Optional, ptx),
      reader.string("cubin", Optional, cubin),
      reader.integers("block", Required, 3, 1, 1024, manifest.block.data()),
      reader.integers("cluster", Optional, 3, 1, 16, manifest.cluster.data()),
      reader.integer("dynamic_smem", Optional, 0, int64_t(1) << 30,
                     manifest.dynamicSmem),
      reader.boolean("dependent_launch", manifest.dependentLaunch)};
}

/// The checks of the head fields across keys.
Status checkKernelHead(const Reader &reader, const Pointer &at,
                       const std::string &directory, const std::string &ptx,
                       const std::string &cubin, Manifest &manifest) {
  if (ptx.empty() && cubin.empty())
    return reader.error(at, "expected \"ptx\" or \"cubin\" (or both)");
  auto resolve = [&](const std::string &path) {
    if (path.empty() || path[0] == '/' || directory.empty())
      return path;
    return directory + "/" + path;
  };
  manifest.ptxPath = resolve(ptx);
  manifest.cubinPath = resolve(cubin);
  int64_t threads =
      int64_t(manifest.block[0]) * manifest.block[1] * manifest.block[2];
  if (threads > 1024)
    return reader.error(at / "block", "a block has at most 1024 threads, got " +
                                          std::to_string(threads));
  if (manifest.cluster[1] != 1 || manifest.cluster[2] != 1)
    return reader.error(at / "cluster",
                        "the grid is one-dimensional, so cluster[1] and "
                        "cluster[2] must be 1, got [" +
                            std::to_string(manifest.cluster[0]) + ", " +
                            std::to_string(manifest.cluster[1]) + ", " +
                            std::to_string(manifest.cluster[2]) + "]");
  return Status::success();
}

Status parseArchField(const Reader &reader, const Pointer &at,
                      Manifest &manifest) {
  if (!parseArch(manifest.arch, manifest.archMajor, manifest.archMinor,
                 manifest.archSpecific))
    return reader.error(at,
                        "expected sm_<major><minor>[a|f] such as \"sm_90a\", "
                        "got " +
                            quote(manifest.arch));
  return Status::success();
}

/// The fields of one kernel that follow the problem, which decides them
/// (params are checked against it; sort_by_expert has no tile and only the
/// "single" grid policy, which this sets as its default).
std::vector<Field> kernelBodyFields(const Reader &reader, Manifest &manifest) {
  Field params = {"params", Required,
                  [&reader, &manifest](const Json &value, const Pointer &at) {
                    return parseParams(reader, value, at, manifest);
                  }};
  if (manifest.problem.op == Op::SortByExpert) {
    manifest.gridPolicy = GridPolicy::Single;
    return {{"tile", Optional,
             [&reader](const Json &, const Pointer &at) {
               return reader.error(at, "sort_by_expert has no tile (one CTA "
                                       "sorts every pair)");
             }},
            {"grid", Optional,
             [&reader, &manifest](const Json &value, const Pointer &at) {
               Status status = reader.readObject(
                   value, at,
                   {reader.choice("policy", Optional, kGridPolicies,
                                  manifest.gridPolicy)},
                   KnownKeysOnly);
               if (status.ok() && manifest.gridPolicy != GridPolicy::Single)
                 return reader.error(at / "policy",
                                     "sort_by_expert runs one CTA, expected "
                                     "\"single\", got " +
                                         describe(value.at("policy")));
               return status;
             }},
            params};
  }
  if (manifest.problem.op == Op::Quantize) {
    return {{"tile", Optional,
             [&reader](const Json &, const Pointer &at) {
               return reader.error(at, "quantize has no tile (its grid "
                                       "strides over the scale blocks)");
             }},
            {"grid", Required,
             [&reader, &manifest](const Json &value, const Pointer &at) {
               Status status = reader.readObject(
                   value, at,
                   {reader.choice("policy", Required, kGridPolicies,
                                  manifest.gridPolicy),
                    reader.integer("ctas_per_sm", Optional, 1, 64,
                                   manifest.ctasPerSm),
                    reader.integer("units_per_cta", Required, 1, 1 << 20,
                                   manifest.unitsPerCta)},
                   KnownKeysOnly);
               if (status.ok() && manifest.gridPolicy != GridPolicy::Persistent)
                 return reader.error(at / "policy",
                                     "quantize's grid strides over its "
                                     "blocks, expected \"persistent\", got " +
                                         describe(value.at("policy")));
               return status;
             }},
            params};
  }
  return {
      {"tile", Required,
       [&reader, &manifest](const Json &value, const Pointer &at) {
         Status status = reader.readObject(
             value, at,
             {reader.integer("block_m", Required, 1, 1 << 16, manifest.blockM),
              reader.integer("block_n", Required, 1, 1 << 16, manifest.blockN),
              reader.integer("block_k", Optional, 1, 1 << 16, manifest.blockK),
              reader.integer("stages", Optional, 1, 64, manifest.stages),
              reader.integer("split_k", Optional, 1, 16, manifest.splitK),
              ignored("consumer_warpgroups"), ignored("swap_ab"),
              ignored("pingpong"),
              // The kernel splits its last wave's tiles when they fit the
              // grid it is given: the grid is split_k's either way.
              ignored("split_k_tail")},
             KnownKeysOnly);
         // A split-K tile's CTAs are one cluster (or a part of one).
         if (status.ok() && manifest.splitK > 1 &&
             manifest.cluster[0] % manifest.splitK != 0)
           return reader.error(at / "split_k",
                               "expected to divide cluster[0] (" +
                                   std::to_string(manifest.cluster[0]) +
                                   ": a tile's CTAs form a cluster), got " +
                                   std::to_string(manifest.splitK));
         // An interleaved weight's tile is one block of gate and up rows:
         // the kernel pairs columns j and j + block_n / 2.
         const int64_t block = manifest.problem.gateUpBlock;
         if (status.ok() && block > 0 && manifest.blockN != 2 * block)
           return reader.error(at / "block_n",
                               "expected 2 * problem.gate_up_block (" +
                                   std::to_string(2 * block) +
                                   ": one block of gate and up rows), got " +
                                   std::to_string(manifest.blockN));
         return status;
       }},
      {"grid", Optional,
       [&reader, &manifest](const Json &value, const Pointer &at) {
         Status status =
             reader.readObject(value, at,
                               {reader.choice("policy", Optional, kGridPolicies,
                                              manifest.gridPolicy),
                                reader.integer("ctas_per_sm", Optional, 1, 64,
                                               manifest.ctasPerSm)},
                               KnownKeysOnly);
         if (status.ok() && manifest.gridPolicy == GridPolicy::Single)
           return reader.error(
               at / "policy",
               std::string("\"single\" (one CTA) is sort_by_expert's "
                           "policy; ") +
                   opName(manifest.problem.op) +
                   " takes \"persistent\" or \"tiles\"");
         return status;
       }},
      params};
}

/// Version 1: one kernel, its fields at the top level.
Status parseSingleKernel(const Reader &reader, const Json &root,
                         const std::string &directory, Manifest &manifest) {
  const Pointer top;
  std::string ptx, cubin;
  std::vector<Field> head = kernelHeadFields(reader, manifest, ptx, cubin);
  // "arch" is read after the file names, as it always was.
  head.insert(head.begin() + 3, reader.string("arch", Required, manifest.arch));
  Status status =
      reader.readObject(root, top, head,
                        AnyKeys); // unknown top-level keys are metadata
  if (status.ok() && ptx.empty() && cubin.empty())
    status = reader.error(top, "expected \"ptx\" or \"cubin\" (or both)");
  if (status.ok())
    status = parseArchField(reader, top / "arch", manifest);
  if (status.ok())
    status = checkKernelHead(reader, top, directory, ptx, cubin, manifest);
  if (!status.ok())
    return status;
  // The problem first: it decides the other fields.
  if (Status status = reader.readObject(
          root, top,
          {{"problem", Required,
            [&](const Json &value, const Pointer &at) {
              return parseProblem(reader, value, at, manifest.problem);
            }}},
          AnyKeys);
      !status.ok())
    return status;
  if ((manifest.problem.op == Op::SortByExpert ||
       manifest.problem.op == Op::Quantize) &&
      manifest.cluster[0] != 1)
    return reader.error(top / "cluster",
                        std::string(manifest.problem.op == Op::Quantize
                                        ? "quantize runs CTAs on their own"
                                        : "sort_by_expert runs one CTA") +
                            ", expected [1, 1, 1], got [" +
                            std::to_string(manifest.cluster[0]) + ", 1, 1]");
  return reader.readObject(root, top, kernelBodyFields(reader, manifest),
                           AnyKeys);
}

/// Version 2: a problem, a dispatch rule and its kernel variants.
Status parseVariants(const Reader &reader, const Json &root,
                     const std::string &directory, Bundle &bundle) {
  const Pointer top;
  Manifest shared;
  shared.sourceName = bundle.sourceName;
  shared.directory = directory;
  const Json *variants = nullptr;
  Pointer variantsAt;
  Status status = reader.readObject(
      root, top,
      {reader.string("arch", Required, shared.arch),
       {"problem", Required,
        [&](const Json &value, const Pointer &at) {
          if (Status status = parseArchField(reader, top / "arch", shared);
              !status.ok())
            return status;
          Status status = parseProblem(reader, value, at, shared.problem);
          if (status.ok() && (shared.problem.op == Op::SortByExpert ||
                              shared.problem.op == Op::Quantize))
            return reader.error(top / "version",
                                std::string(opName(shared.problem.op)) +
                                    " has one kernel, expected version 1, "
                                    "got 2");
          return status;
        }},
       {"dispatch", Required,
        [&](const Json &value, const Pointer &at) {
          std::string rule;
          Status status = reader.readObject(
              value, at,
              {{"rule", Required,
                [&](const Json &rule, const Pointer &at) {
                  if (rule == "rows_per_group")
                    return Status::success();
                  return reader.error(at, "expected \"rows_per_group\", got " +
                                              describe(rule));
                }},
               {"bounds", Required,
                [&](const Json &bounds, const Pointer &at) {
                  if (!bounds.is_array())
                    return reader.error(at, "expected an array of integers, "
                                            "got " +
                                                describe(bounds));
                  for (size_t i = 0; i < bounds.size(); ++i) {
                    int64_t previous =
                        bundle.bounds.empty() ? 0 : bundle.bounds.back();
                    if (Status status = reader.checkInteger(
                            bounds[i], at / i, previous + 1, INT64_MAX);
                        !status.ok())
                      return reader.error(
                          at / i,
                          "expected increasing positive integers (rows per "
                          "group), got " +
                              describe(bounds[i]) +
                              (i ? " after " + std::to_string(previous) : ""));
                    bundle.bounds.push_back(bounds[i].get<int64_t>());
                  }
                  return Status::success();
                }}},
              KnownKeysOnly);
          return status;
        }},
       {"variants", Required,
        [&](const Json &value, const Pointer &at) {
          if (!value.is_array() || value.size() < 2 ||
              value.size() > size_t(kMaxVariants))
            return reader.error(
                at, "expected an array of 2 to " +
                        std::to_string(kMaxVariants) +
                        " kernel variants, got " +
                        (value.is_array()
                             ? "an array of " + std::to_string(value.size()) +
                                   " elements"
                             : describe(value)));
          variants = &value;
          variantsAt = at;
          return Status::success();
        }}},
      AnyKeys); // unknown top-level keys are metadata
  if (!status.ok())
    return status;
  if (bundle.bounds.size() + 1 != variants->size())
    return reader.error(top / "dispatch" / "bounds",
                        "expected one bound fewer than the " +
                            std::to_string(variants->size()) +
                            " variants, got " +
                            std::to_string(bundle.bounds.size()));
  for (size_t i = 0; i < variants->size(); ++i) {
    const Json &object = (*variants)[i];
    Pointer at = variantsAt / i;
    Manifest manifest = shared;
    std::string ptx, cubin;
    std::vector<Field> fields = kernelHeadFields(reader, manifest, ptx, cubin);
    std::vector<Field> body = kernelBodyFields(reader, manifest);
    fields.insert(fields.end(), body.begin(), body.end());
    // A variant is all semantics: a misspelt key is an error.
    if (Status status = reader.readObject(object, at, fields, KnownKeysOnly);
        !status.ok())
      return status;
    if (Status status =
            checkKernelHead(reader, at, directory, ptx, cubin, manifest);
        !status.ok())
      return status;
    bundle.variants.push_back(std::move(manifest));
  }
  return Status::success();
}

Status parseRoot(const Reader &reader, const Json &root,
                 const std::string &directory, Bundle &bundle) {
  const Pointer top;
  Status status = reader.readObject(
      root, top,
      {{"format", Required,
        [&](const Json &value, const Pointer &at) {
          if (value == "ggemm-bundle")
            return Status::success();
          return reader.error(at, "expected \"ggemm-bundle\", got " +
                                      describe(value));
        }},
       {"version", Required,
        [&](const Json &value, const Pointer &at) {
          Status integer = reader.checkInteger(value, at, INT64_MIN, INT64_MAX);
          if (integer.ok() && value.get<int64_t>() != kManifestVersion &&
              value.get<int64_t>() != kMultiVariantManifestVersion)
            return reader.error(
                at, "unsupported manifest version " + describe(value) +
                        " (this runtime reads versions " +
                        std::to_string(kManifestVersion) + " and " +
                        std::to_string(kMultiVariantManifestVersion) + ")");
          if (integer.ok())
            bundle.version = static_cast<int>(value.get<int64_t>());
          return integer;
        }}},
      AnyKeys);
  if (!status.ok())
    return status;
  if (bundle.version == kMultiVariantManifestVersion)
    return parseVariants(reader, root, directory, bundle);
  Manifest manifest;
  manifest.sourceName = bundle.sourceName;
  manifest.directory = directory;
  if (Status status = parseSingleKernel(reader, root, directory, manifest);
      !status.ok())
    return status;
  bundle.variants.push_back(std::move(manifest));
  return Status::success();
}

Status readFileText(const std::string &path, std::string &text,
                    std::string &directory) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return Status(GGEMM_ERROR_IO, "cannot open manifest '" + path +
                                      "': " + std::strerror(errno));
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad())
    return Status(GGEMM_ERROR_IO, "cannot read manifest '" + path + "'");
  size_t slash = path.find_last_of('/');
  directory =
      slash == std::string::npos ? std::string() : path.substr(0, slash);
  if (slash == 0)
    directory = "/";
  text = contents.str();
  return Status::success();
}

} // namespace

Status parseBundle(std::string_view text, const std::string &sourceName,
                   const std::string &directory, Bundle &bundle) {
  bundle = Bundle();
  bundle.sourceName = sourceName;
  Json root;
  Status status = parseJson(text, sourceName, root);
  if (status.ok())
    status = parseRoot(Reader(sourceName), root, directory, bundle);
  if (!status.ok()) {
    bundle = Bundle();
    bundle.sourceName = sourceName;
  }
  return status;
}

Status parseManifest(std::string_view text, const std::string &sourceName,
                     const std::string &directory, Manifest &manifest) {
  manifest = Manifest();
  manifest.sourceName = sourceName;
  manifest.directory = directory;
  Bundle bundle;
  if (Status status = parseBundle(text, sourceName, directory, bundle);
      !status.ok())
    return status;
  if (bundle.variants.size() != 1)
    return badManifest(sourceName + ": /variants: expected one kernel, got " +
                       std::to_string(bundle.variants.size()) +
                       " variants (load the manifest as a bundle)");
  manifest = std::move(bundle.variants.front());
  return Status::success();
}

Status loadBundleFile(const std::string &path, Bundle &bundle) {
  std::string text, directory;
  if (Status status = readFileText(path, text, directory); !status.ok())
    return status;
  return parseBundle(text, path, directory, bundle);
}

Status loadManifestFile(const std::string &path, Manifest &manifest) {
  std::string text, directory;
  if (Status status = readFileText(path, text, directory); !status.ok())
    return status;
  return parseManifest(text, path, directory, manifest);
}

} // namespace ggemm::runtime
