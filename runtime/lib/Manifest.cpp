//===- Manifest.cpp - Kernel-bundle manifest (format version 1) -----------===//

#include "Manifest.h"

#include "Json.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <initializer_list>
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
  }
  return "<invalid dtype>";
}

int64_t dtypeSize(ggemm_dtype dtype) {
  switch (dtype) {
  case GGEMM_DTYPE_F8E4M3:
  case GGEMM_DTYPE_F8E5M2:
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
  return dtype >= GGEMM_DTYPE_BF16 && dtype <= GGEMM_DTYPE_I64;
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
  }
  return "<invalid op>";
}

ggemm_dtype expectedTensorDtype(const ProblemSpec &problem, TensorRole role) {
  switch (role) {
  case TensorRole::X:
    return problem.aDtype;
  case TensorRole::W:
    return problem.bDtype;
  case TensorRole::Y:
    return problem.outDtype;
  case TensorRole::SegIndptr:
  case TensorRole::MaskedM:
    return problem.indexDtype;
  case TensorRole::WeightIndices:
    return GGEMM_DTYPE_I32;
  case TensorRole::Bias:
  case TensorRole::RowScale:
    return GGEMM_DTYPE_F32;
  }
  return GGEMM_DTYPE_F32;
}

bool tensorExistsForOp(TensorRole role, Op op) {
  if (role == TensorRole::SegIndptr)
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
                              {"batched_matmul", Op::BatchedMatmul}};
const EnumEntry<ggemm_dtype> kFloatDtypes[] = {{"bf16", GGEMM_DTYPE_BF16},
                                               {"f16", GGEMM_DTYPE_F16},
                                               {"f32", GGEMM_DTYPE_F32},
                                               {"f8e4m3", GGEMM_DTYPE_F8E4M3},
                                               {"f8e5m2", GGEMM_DTYPE_F8E5M2}};
const EnumEntry<ggemm_dtype> kIndexDtypes[] = {{"i32", GGEMM_DTYPE_I32},
                                               {"i64", GGEMM_DTYPE_I64}};
const EnumEntry<ggemm_dtype> kAllDtypes[] = {
    {"bf16", GGEMM_DTYPE_BF16},     {"f16", GGEMM_DTYPE_F16},
    {"f32", GGEMM_DTYPE_F32},       {"f8e4m3", GGEMM_DTYPE_F8E4M3},
    {"f8e5m2", GGEMM_DTYPE_F8E5M2}, {"i32", GGEMM_DTYPE_I32},
    {"i64", GGEMM_DTYPE_I64}};
const EnumEntry<WeightLayout> kWeightLayouts[] = {{"nk", WeightLayout::NK},
                                                  {"kn", WeightLayout::KN}};
const EnumEntry<GridPolicy> kGridPolicies[] = {
    {"persistent", GridPolicy::Persistent}, {"tiles", GridPolicy::Tiles}};
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
    {"row_scale", TensorRole::RowScale}};
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
    {"num_tiles", ScalarSource::NumTiles}};

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

/// Short rendering of a JSON value for "got ..." messages.
std::string describe(const json::Value &value) {
  switch (value.getKind()) {
  case json::Value::Kind::String:
    return "string " + quote(value.getString());
  case json::Value::Kind::Number: {
    if (value.isInteger())
      return std::to_string(value.getInteger());
    std::ostringstream stream;
    stream.imbue(std::locale::classic());
    stream << value.getNumber();
    return stream.str();
  }
  case json::Value::Kind::Bool:
    return value.getBool() ? "true" : "false";
  default:
    return json::Value::kindName(value.getKind());
  }
}

/// Reads typed fields out of the manifest's JSON and formats errors as
/// "SOURCE:LINE:COLUMN: FIELD: MESSAGE".
class Reader {
public:
  explicit Reader(const std::string &sourceName) : sourceName(sourceName) {}

  Status error(const json::Value &at, const std::string &field,
               const std::string &message) const {
    std::string location = sourceName + ":" + std::to_string(at.getLine()) +
                           ":" + std::to_string(at.getColumn()) + ": ";
    return badManifest(location + (field.empty() ? "" : field + ": ") +
                       message);
  }

  static std::string join(const std::string &path, const char *key) {
    return path.empty() ? std::string(key) : path + "." + key;
  }

  Status expectObject(const json::Value &value,
                      const std::string &field) const {
    if (!value.isObject())
      return error(value, field,
                   std::string("expected an object, got ") + describe(value));
    return Status::success();
  }

  /// Rejects members not in `allowed`: in a semantic section a misspelt key
  /// would otherwise silently fall back to a default.
  Status checkKeys(const json::Value &object, const std::string &path,
                   std::initializer_list<const char *> allowed) const {
    for (const auto &member : object.getObject()) {
      bool known = false;
      std::string names;
      for (const char *key : allowed) {
        known |= member.first == key;
        names += names.empty() ? "" : ", ";
        names += key;
      }
      if (!known)
        return error(member.second, join(path, member.first.c_str()),
                     "unknown key (expected one of " + names + ")");
    }
    return Status::success();
  }

  /// Sets `result` to the member, or null when it is absent and optional.
  Status member(const json::Value &object, const std::string &path,
                const char *key, bool required,
                const json::Value *&result) const {
    result = object.find(key);
    if (!result && required)
      return error(object, path.empty() ? "" : path,
                   std::string("missing required key ") + quote(key));
    return Status::success();
  }

  Status readString(const json::Value &object, const std::string &path,
                    const char *key, bool required, std::string &out) const {
    const json::Value *value;
    if (Status status = member(object, path, key, required, value);
        !status.ok() || !value)
      return status;
    if (!value->isString())
      return error(*value, join(path, key),
                   "expected a string, got " + describe(*value));
    if (value->getString().empty())
      return error(*value, join(path, key), "expected a non-empty string");
    out = value->getString();
    return Status::success();
  }

  Status checkInteger(const json::Value &value, const std::string &field,
                      int64_t min, int64_t max) const {
    if (!value.isInteger())
      return error(value, field, "expected an integer, got " + describe(value));
    if (value.getInteger() < min || value.getInteger() > max)
      return error(value, field,
                   "expected an integer in [" + std::to_string(min) + ", " +
                       std::to_string(max) + "], got " +
                       std::to_string(value.getInteger()));
    return Status::success();
  }

  Status readInteger(const json::Value &object, const std::string &path,
                     const char *key, bool required, int64_t min, int64_t max,
                     int64_t &out) const {
    const json::Value *value;
    if (Status status = member(object, path, key, required, value);
        !status.ok() || !value)
      return status;
    if (Status status = checkInteger(*value, join(path, key), min, max);
        !status.ok())
      return status;
    out = value->getInteger();
    return Status::success();
  }

  template <typename T>
  Status readInteger(const json::Value &object, const std::string &path,
                     const char *key, bool required, int64_t min, int64_t max,
                     T &out) const {
    int64_t wide = static_cast<int64_t>(out);
    Status status = readInteger(object, path, key, required, min, max, wide);
    out = static_cast<T>(wide);
    return status;
  }

  /// A static size: -1 (taken from the tensors at launch) or positive.
  Status readSize(const json::Value &object, const std::string &path,
                  const char *key, bool required, int64_t &out) const {
    const json::Value *value;
    if (Status status = member(object, path, key, required, value);
        !status.ok() || !value)
      return status;
    if (!value->isInteger() ||
        (value->getInteger() != -1 && value->getInteger() <= 0))
      return error(*value, join(path, key),
                   "expected a positive integer or -1 (dynamic), got " +
                       describe(*value));
    out = value->getInteger();
    return Status::success();
  }

  Status readBool(const json::Value &object, const std::string &path,
                  const char *key, bool &out) const {
    const json::Value *value = object.find(key);
    if (!value)
      return Status::success();
    if (!value->isBool())
      return error(*value, join(path, key),
                   "expected true or false, got " + describe(*value));
    out = value->getBool();
    return Status::success();
  }

  template <typename T, size_t N>
  Status readEnum(const json::Value &object, const std::string &path,
                  const char *key, bool required,
                  const EnumEntry<T> (&table)[N], T &out) const {
    const json::Value *value;
    if (Status status = member(object, path, key, required, value);
        !status.ok() || !value)
      return status;
    if (value->isString())
      for (const EnumEntry<T> &entry : table)
        if (value->getString() == entry.name) {
          out = entry.value;
          return Status::success();
        }
    return error(*value, join(path, key),
                 "expected one of " + listNames(table) + ", got " +
                     describe(*value));
  }

  /// A fixed-length array of integers in [min, max].
  template <typename T>
  Status readIntegerArray(const json::Value &object, const std::string &path,
                          const char *key, bool required, size_t length,
                          int64_t min, int64_t max, T *out) const {
    const json::Value *value;
    if (Status status = member(object, path, key, required, value);
        !status.ok() || !value)
      return status;
    std::string field = join(path, key);
    if (!value->isArray() || value->getArray().size() != length)
      return error(
          *value, field,
          "expected an array of " + std::to_string(length) + " integers, got " +
              (value->isArray()
                   ? "an array of " + std::to_string(value->getArray().size()) +
                         " elements"
                   : describe(*value)));
    for (size_t i = 0; i < length; ++i) {
      const json::Value &element = value->getArray()[i];
      if (Status status = checkInteger(
              element, field + "[" + std::to_string(i) + "]", min, max);
          !status.ok())
        return status;
      out[i] = static_cast<T>(element.getInteger());
    }
    return Status::success();
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

Status parseProblem(const Reader &reader, const json::Value &root,
                    ProblemSpec &problem) {
  const json::Value *object;
  if (Status status = reader.member(root, "", "problem", true, object);
      !status.ok())
    return status;
  const std::string path = "problem";
  if (Status status = reader.expectObject(*object, path); !status.ok())
    return status;
  if (Status status = reader.checkKeys(
          *object, path,
          {"op", "a_dtype", "b_dtype", "out_dtype", "index_dtype",
           "weight_layout", "m", "n", "k", "num_groups", "num_weights",
           "has_weight_indices", "has_bias", "has_row_scale", "accumulate",
           "activation"});
      !status.ok())
    return status;

  Status status = reader.readEnum(*object, path, "op", true, kOps, problem.op);
  if (status.ok())
    status = reader.readEnum(*object, path, "a_dtype", true, kFloatDtypes,
                             problem.aDtype);
  if (status.ok())
    status = reader.readEnum(*object, path, "b_dtype", true, kFloatDtypes,
                             problem.bDtype);
  if (status.ok())
    status = reader.readEnum(*object, path, "out_dtype", true, kFloatDtypes,
                             problem.outDtype);
  if (status.ok())
    status = reader.readEnum(*object, path, "index_dtype", false, kIndexDtypes,
                             problem.indexDtype);
  if (status.ok())
    status = reader.readEnum(*object, path, "weight_layout", false,
                             kWeightLayouts, problem.weightLayout);
  if (status.ok())
    status = reader.readSize(*object, path, "m", true, problem.m);
  if (status.ok())
    status = reader.readSize(*object, path, "n", true, problem.n);
  if (status.ok())
    status = reader.readSize(*object, path, "k", true, problem.k);
  if (status.ok())
    status =
        reader.readSize(*object, path, "num_groups", true, problem.numGroups);
  if (status.ok())
    status = reader.readSize(*object, path, "num_weights", false,
                             problem.numWeights);
  if (status.ok())
    status = reader.readBool(*object, path, "has_weight_indices",
                             problem.hasWeightIndices);
  if (status.ok())
    status = reader.readBool(*object, path, "has_bias", problem.hasBias);
  if (status.ok())
    status =
        reader.readBool(*object, path, "has_row_scale", problem.hasRowScale);
  if (status.ok())
    status = reader.readBool(*object, path, "accumulate", problem.accumulate);
  if (!status.ok())
    return status;

  if (!problem.hasWeightIndices && problem.numGroups != -1 &&
      problem.numWeights != -1 && problem.numGroups != problem.numWeights)
    return reader.error(*object, path,
                        "num_weights (" + std::to_string(problem.numWeights) +
                            ") must equal num_groups (" +
                            std::to_string(problem.numGroups) +
                            ") when has_weight_indices is false");
  return Status::success();
}

Status parseParam(const Reader &reader, const json::Value &object,
                  const std::string &path, const ProblemSpec &problem,
                  ParamSpec &param) {
  if (Status status = reader.expectObject(object, path); !status.ok())
    return status;
  Status status = reader.readString(object, path, "name", true, param.name);
  if (status.ok())
    status =
        reader.readEnum(object, path, "kind", true, kParamKinds, param.kind);
  if (!status.ok())
    return status;

  if (param.kind == ParamKind::Scalar) {
    if (Status status =
            reader.checkKeys(object, path, {"name", "kind", "dtype", "value"});
        !status.ok())
      return status;
    if (Status status = reader.readEnum(object, path, "dtype", true,
                                        kIndexDtypes, param.dtype);
        !status.ok())
      return status;
    const json::Value *value;
    if (Status status = reader.member(object, path, "value", true, value);
        !status.ok())
      return status;
    std::string field = Reader::join(path, "value");
    if (value->isInteger()) {
      param.source = ScalarSource::Literal;
      param.literal = value->getInteger();
      if (param.dtype == GGEMM_DTYPE_I32 &&
          (param.literal < INT32_MIN || param.literal > INT32_MAX))
        return reader.error(*value, field,
                            "literal " + std::to_string(param.literal) +
                                " does not fit the scalar's dtype i32");
      return Status::success();
    }
    return reader.readEnum(object, path, "value", true, kScalarSources,
                           param.source);
  }

  // Descriptors and pointers both name a tensor.
  if (Status status = reader.readEnum(object, path, "tensor", true,
                                      kTensorRoles, param.tensor);
      !status.ok())
    return status;
  const json::Value &tensorValue = *object.find("tensor");
  std::string tensorField = Reader::join(path, "tensor");
  if (!tensorExistsForOp(param.tensor, problem.op))
    return reader.error(tensorValue, tensorField,
                        std::string("tensor ") +
                            quote(tensorRoleName(param.tensor)) +
                            " does not exist for " + opName(problem.op));
  ggemm_dtype expectedDtype = expectedTensorDtype(problem, param.tensor);

  if (param.kind == ParamKind::Pointer) {
    if (Status status = reader.checkKeys(
            object, path, {"name", "kind", "tensor", "dtype", "optional"});
        !status.ok())
      return status;
    if (Status status =
            reader.readBool(object, path, "optional", param.optional);
        !status.ok())
      return status;
    // "dtype" is optional for pointers; when present it must agree.
    param.dtype = expectedDtype;
    if (const json::Value *dtypeValue = object.find("dtype")) {
      ggemm_dtype dtype = expectedDtype;
      if (Status status =
              reader.readEnum(object, path, "dtype", true, kAllDtypes, dtype);
          !status.ok())
        return status;
      if (dtype != expectedDtype)
        return reader.error(*dtypeValue, Reader::join(path, "dtype"),
                            std::string("tensor ") +
                                quote(tensorRoleName(param.tensor)) +
                                " has dtype " + dtypeName(expectedDtype) +
                                " in this problem, got " + dtypeName(dtype));
    }
    return Status::success();
  }

  // TMA descriptor.
  if (Status status = reader.checkKeys(object, path,
                                       {"name", "kind", "tensor", "dtype",
                                        "rank", "box", "swizzle", "oob_fill"});
      !status.ok())
    return status;
  if (param.tensor != TensorRole::X && param.tensor != TensorRole::W &&
      param.tensor != TensorRole::Y)
    return reader.error(tensorValue, tensorField,
                        "a tma_descriptor can describe x, w or y, got " +
                            quote(tensorRoleName(param.tensor)));
  status =
      reader.readEnum(object, path, "dtype", true, kFloatDtypes, param.dtype);
  if (status.ok())
    status = reader.readInteger(object, path, "rank", true, 1,
                                kMaxTensorMapRank, param.rank);
  if (status.ok())
    status = reader.readEnum(object, path, "swizzle", true, kSwizzles,
                             param.swizzle);
  if (status.ok())
    status = reader.readEnum(object, path, "oob_fill", false, kOobFills,
                             param.oobFill);
  if (!status.ok())
    return status;
  if (param.dtype != expectedDtype)
    return reader.error(*object.find("dtype"), Reader::join(path, "dtype"),
                        std::string("tensor ") +
                            quote(tensorRoleName(param.tensor)) +
                            " has dtype " + dtypeName(expectedDtype) +
                            " in this problem, got " + dtypeName(param.dtype));

  const json::Value &rankValue = *object.find("rank");
  int expectedRank = param.tensor == TensorRole::W ? 3 : 2;
  bool rankOk = param.rank == expectedRank ||
                (param.tensor != TensorRole::W && param.rank == 3 &&
                 problem.op != Op::SegmentMatmul);
  if (!rankOk)
    return reader.error(
        rankValue, Reader::join(path, "rank"),
        std::string("a descriptor of ") + quote(tensorRoleName(param.tensor)) +
            " for " + opName(problem.op) + " has rank " +
            (param.tensor == TensorRole::W ? "3"
             : problem.op == Op::SegmentMatmul
                 ? "2"
                 : "2 (rows of all groups) or 3 (group, row, column)") +
            ", got " + std::to_string(param.rank));

  if (Status status = reader.readIntegerArray(
          object, path, "box", true, param.rank, 1, 256, param.box.data());
      !status.ok())
    return status;
  const json::Value &boxValue = *object.find("box");
  int64_t innerBytes = int64_t(param.box[0]) * dtypeSize(param.dtype);
  int64_t swizzleWidth = swizzleBytes(param.swizzle);
  if (swizzleWidth == 0 && innerBytes % 16 != 0)
    return reader.error(boxValue, Reader::join(path, "box"),
                        "innermost box extent is " +
                            std::to_string(innerBytes) +
                            " bytes; TMA needs a multiple of 16 bytes");
  if (swizzleWidth != 0 && innerBytes != swizzleWidth)
    return reader.error(boxValue, Reader::join(path, "box"),
                        "innermost box extent is " +
                            std::to_string(innerBytes) +
                            " bytes, expected the swizzle width " +
                            std::to_string(swizzleWidth) + " bytes");
  if (param.oobFill == OobFill::Nan &&
      (param.dtype == GGEMM_DTYPE_F8E4M3 || param.dtype == GGEMM_DTYPE_F8E5M2))
    return reader.error(*object.find("oob_fill"),
                        Reader::join(path, "oob_fill"),
                        "\"nan\" fill is not available for fp8 tensors (TMA "
                        "sees them as uint8)");
  return Status::success();
}

Status parseParams(const Reader &reader, const json::Value &root,
                   Manifest &manifest) {
  const json::Value *array;
  if (Status status = reader.member(root, "", "params", true, array);
      !status.ok())
    return status;
  if (!array->isArray())
    return reader.error(*array, "params",
                        "expected an array, got " + describe(*array));
  if (array->getArray().size() > size_t(kMaxKernelParams))
    return reader.error(*array, "params",
                        "at most " + std::to_string(kMaxKernelParams) +
                            " parameters are supported, got " +
                            std::to_string(array->getArray().size()));
  int numDescriptors = 0;
  for (size_t i = 0; i < array->getArray().size(); ++i) {
    const json::Value &object = array->getArray()[i];
    std::string path = "params[" + std::to_string(i) + "]";
    ParamSpec param;
    if (Status status =
            parseParam(reader, object, path, manifest.problem, param);
        !status.ok())
      return status;
    for (const ParamSpec &previous : manifest.params)
      if (previous.name == param.name)
        return reader.error(object, path,
                            "duplicate parameter name " + quote(param.name));
    if (param.kind == ParamKind::TmaDescriptor &&
        ++numDescriptors > kMaxTensorMapParams)
      return reader.error(object, path,
                          "at most " + std::to_string(kMaxTensorMapParams) +
                              " tma_descriptor parameters are supported");
    manifest.params.push_back(std::move(param));
  }

  // Every tensor the problem needs must reach the kernel, and a tensor the
  // problem was compiled without must not be demanded.
  const ProblemSpec &problem = manifest.problem;
  struct Requirement {
    TensorRole role;
    bool required;
    const char *reason;
  };
  const Requirement requirements[] = {
      {TensorRole::X, true, "every problem reads x"},
      {TensorRole::W, true, "every problem reads w"},
      {TensorRole::Y, true, "every problem writes y"},
      {TensorRole::SegIndptr, problem.op == Op::SegmentMatmul,
       "segment_matmul reads seg_indptr"},
      {TensorRole::MaskedM, problem.op == Op::MaskedMatmul,
       "masked_matmul reads masked_m"},
      {TensorRole::WeightIndices, problem.hasWeightIndices,
       "problem.has_weight_indices is true"},
      {TensorRole::Bias, problem.hasBias, "problem.has_bias is true"},
      {TensorRole::RowScale, problem.hasRowScale,
       "problem.has_row_scale is true"},
  };
  for (const Requirement &requirement : requirements)
    if (requirement.required && !manifest.usesTensor(requirement.role))
      return reader.error(*array, "params",
                          std::string("no parameter passes tensor ") +
                              quote(tensorRoleName(requirement.role)) + " (" +
                              requirement.reason + ")");
  for (size_t i = 0; i < manifest.params.size(); ++i) {
    const ParamSpec &param = manifest.params[i];
    if (param.kind != ParamKind::Pointer || param.optional)
      continue;
    bool gatedOff =
        (param.tensor == TensorRole::WeightIndices &&
         !problem.hasWeightIndices) ||
        (param.tensor == TensorRole::Bias && !problem.hasBias) ||
        (param.tensor == TensorRole::RowScale && !problem.hasRowScale);
    if (gatedOff)
      return reader.error(
          array->getArray()[i], "params[" + std::to_string(i) + "]",
          std::string("tensor ") + quote(tensorRoleName(param.tensor)) +
              " is marked required (optional: false) but the problem is "
              "compiled without it");
  }
  return Status::success();
}

Status parseRoot(const Reader &reader, const json::Value &root,
                 const std::string &directory, Manifest &manifest) {
  if (Status status = reader.expectObject(root, "manifest"); !status.ok())
    return status;

  std::string format;
  if (Status status = reader.readString(root, "", "format", true, format);
      !status.ok())
    return status;
  if (format != "ggemm-bundle")
    return reader.error(*root.find("format"), "format",
                        "expected \"ggemm-bundle\", got " + quote(format));
  int64_t version = 0;
  if (Status status = reader.readInteger(root, "", "version", true, INT64_MIN,
                                         INT64_MAX, version);
      !status.ok())
    return status;
  if (version != kManifestVersion)
    return reader.error(*root.find("version"), "version",
                        "unsupported manifest version " +
                            std::to_string(version) +
                            " (this runtime reads version " +
                            std::to_string(kManifestVersion) + ")");

  Status status = reader.readString(root, "", "entry", true, manifest.entry);
  std::string ptx, cubin;
  if (status.ok())
    status = reader.readString(root, "", "ptx", false, ptx);
  if (status.ok())
    status = reader.readString(root, "", "cubin", false, cubin);
  if (status.ok())
    status = reader.readString(root, "", "arch", true, manifest.arch);
  if (!status.ok())
    return status;
  if (ptx.empty() && cubin.empty())
    return reader.error(root, "", "expected \"ptx\" or \"cubin\" (or both)");
  auto resolve = [&](const std::string &path) {
    if (path.empty() || path[0] == '/' || directory.empty())
      return path;
    return directory + "/" + path;
  };
  manifest.ptxPath = resolve(ptx);
  manifest.cubinPath = resolve(cubin);
  if (!parseArch(manifest.arch, manifest.archMajor, manifest.archMinor,
                 manifest.archSpecific))
    return reader.error(*root.find("arch"), "arch",
                        "expected sm_<major><minor>[a|f] such as \"sm_90a\", "
                        "got " +
                            quote(manifest.arch));

  status = reader.readIntegerArray(root, "", "block", true, 3, 1, 1024,
                                   manifest.block.data());
  if (status.ok())
    status = reader.readIntegerArray(root, "", "cluster", false, 3, 1, 16,
                                     manifest.cluster.data());
  if (status.ok())
    status = reader.readInteger(root, "", "dynamic_smem", false, 0,
                                int64_t(1) << 30, manifest.dynamicSmem);
  if (!status.ok())
    return status;
  if (int64_t(manifest.block[0]) * manifest.block[1] * manifest.block[2] > 1024)
    return reader.error(
        *root.find("block"), "block",
        "a block has at most 1024 threads, got " +
            std::to_string(int64_t(manifest.block[0]) * manifest.block[1] *
                           manifest.block[2]));
  if (manifest.cluster[1] != 1 || manifest.cluster[2] != 1)
    return reader.error(*root.find("cluster"), "cluster",
                        "the grid is one-dimensional, so cluster[1] and "
                        "cluster[2] must be 1, got [" +
                            std::to_string(manifest.cluster[0]) + ", " +
                            std::to_string(manifest.cluster[1]) + ", " +
                            std::to_string(manifest.cluster[2]) + "]");

  if (Status status = parseProblem(reader, root, manifest.problem);
      !status.ok())
    return status;

  const json::Value *tile;
  if (Status status = reader.member(root, "", "tile", true, tile); !status.ok())
    return status;
  status = reader.expectObject(*tile, "tile");
  if (status.ok())
    status = reader.checkKeys(
        *tile, "tile",
        {"block_m", "block_n", "block_k", "stages", "consumer_warpgroups"});
  if (status.ok())
    status = reader.readInteger(*tile, "tile", "block_m", true, 1, 1 << 16,
                                manifest.blockM);
  if (status.ok())
    status = reader.readInteger(*tile, "tile", "block_n", true, 1, 1 << 16,
                                manifest.blockN);
  if (status.ok())
    status = reader.readInteger(*tile, "tile", "block_k", false, 1, 1 << 16,
                                manifest.blockK);
  if (status.ok())
    status = reader.readInteger(*tile, "tile", "stages", false, 1, 64,
                                manifest.stages);
  if (!status.ok())
    return status;

  if (const json::Value *grid = root.find("grid")) {
    status = reader.expectObject(*grid, "grid");
    if (status.ok())
      status = reader.checkKeys(*grid, "grid", {"policy", "ctas_per_sm"});
    if (status.ok())
      status = reader.readEnum(*grid, "grid", "policy", false, kGridPolicies,
                               manifest.gridPolicy);
    if (status.ok())
      status = reader.readInteger(*grid, "grid", "ctas_per_sm", false, 1, 64,
                                  manifest.ctasPerSm);
    if (!status.ok())
      return status;
  }

  return parseParams(reader, root, manifest);
}

} // namespace

Status parseManifest(std::string_view text, const std::string &sourceName,
                     const std::string &directory, Manifest &manifest) {
  manifest = Manifest();
  manifest.sourceName = sourceName;
  manifest.directory = directory;
  json::Value root;
  std::string jsonError;
  if (!json::parse(text, root, jsonError))
    return badManifest(sourceName + ":" + jsonError);
  Reader reader(manifest.sourceName);
  Status status = parseRoot(reader, root, directory, manifest);
  if (!status.ok()) {
    manifest = Manifest();
    return status;
  }
  return status;
}

Status loadManifestFile(const std::string &path, Manifest &manifest) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return Status(GGEMM_ERROR_IO, "cannot open manifest '" + path +
                                      "': " + std::strerror(errno));
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad())
    return Status(GGEMM_ERROR_IO, "cannot read manifest '" + path + "'");
  size_t slash = path.find_last_of('/');
  std::string directory =
      slash == std::string::npos ? std::string() : path.substr(0, slash);
  if (slash == 0)
    directory = "/";
  return parseManifest(contents.str(), path, directory, manifest);
}

} // namespace ggemm::runtime
