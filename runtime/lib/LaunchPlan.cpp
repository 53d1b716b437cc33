//===- LaunchPlan.cpp - Driver-free launch preparation --------------------===//

#include "LaunchPlan.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

namespace ggemm::runtime {

namespace {

// Larger extents or strides cannot be described by TMA (dims <= 2^32, byte
// strides < 2^40) and would overflow the products below.
constexpr int64_t kMaxExtent = int64_t(1) << 40;

// Rows and columns of K (and of N) that share one "1x128" / "128x128" scale.
constexpr int64_t kScaleBlock = 128;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

uint64_t roundUp16(uint64_t value) { return (value + 15) / 16 * 16; }

std::string pointerText(const void *pointer) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "0x%" PRIxPTR,
                reinterpret_cast<uintptr_t>(pointer));
  return buffer;
}

std::string shapeText(const int64_t *shape, int rank) {
  std::string text = "[";
  for (int i = 0; i < rank; ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string tensorPrefix(const TensorArg &tensor) {
  return std::string("tensor '") + tensor.name + "': ";
}

/// Tensors `problem` takes, in the order the messages list them (the
/// forward ops' optional ones included).
std::vector<TensorRole> rolesForProblem(const ProblemSpec &problem) {
  const Op op = problem.op;
  if (op == Op::SegmentMatmulK && problem.xScaleBlock != ScaleBlock::None)
    return {TensorRole::Dy, TensorRole::X,       TensorRole::SegIndptr,
            TensorRole::Dw, TensorRole::DyScale, TensorRole::XScale};
  if (op == Op::SegmentMatmulK)
    return {TensorRole::Dy, TensorRole::X, TensorRole::SegIndptr,
            TensorRole::Dw};
  if (op == Op::SortByExpert)
    return {TensorRole::TopkIds, TensorRole::SegIndptr, TensorRole::RowIndices,
            TensorRole::PairIndices};
  std::vector<TensorRole> roles;
  for (int i = 0; i < kNumTensorRoles; ++i)
    if (tensorExistsForOp(static_cast<TensorRole>(i), op))
      roles.push_back(static_cast<TensorRole>(i));
  return roles;
}

std::string roleList(const std::vector<TensorRole> &roles) {
  std::string text;
  for (size_t i = 0; i < roles.size(); ++i)
    text += (i ? ", " : "") + std::string(tensorRoleName(roles[i]));
  return text;
}

/// Replaces the strides of extent-1 dimensions, which never step, by the
/// contiguous value so that layout checks only see strides that matter.
/// One exception: in a [G, 1, C] tensor the rows of the [G, C] matrix it is
/// read as are stride[0] apart, so the row dimension takes that stride (a
/// padded row stride must survive canonicalisation).
void canonicalizeStrides(TensorArg &tensor) {
  for (int d = tensor.rank - 1; d >= 0; --d) {
    if (tensor.shape[d] != 1)
      continue;
    if (tensor.rank == 3 && d == 1 && tensor.shape[0] > 1)
      tensor.strides[d] = tensor.strides[0];
    else
      tensor.strides[d] = d == tensor.rank - 1
                              ? 1
                              : tensor.shape[d + 1] * tensor.strides[d + 1];
  }
}

Status checkDtype(const TensorArg &tensor, ggemm_dtype expected) {
  if (tensor.dtype != expected)
    return invalidArgument(tensorPrefix(tensor) + "expected dtype " +
                           dtypeName(expected) + ", got " +
                           dtypeName(tensor.dtype));
  return Status::success();
}

Status checkRank(const TensorArg &tensor, int expected, const char *layout) {
  if (tensor.rank != expected)
    return invalidArgument(
        tensorPrefix(tensor) + "expected rank " + std::to_string(expected) +
        " (" + layout + "), got rank " + std::to_string(tensor.rank) +
        " with shape " + shapeText(tensor.shape.data(), tensor.rank));
  return Status::success();
}

/// Checks one extent against a value derived from another tensor. `what`
/// names the dimension, or is null when `from` says enough.
Status checkExtent(const TensorArg &tensor, int dim, int64_t expected,
                   const char *what, const std::string &from) {
  if (tensor.shape[dim] != expected)
    return invalidArgument(
        tensorPrefix(tensor) + "dimension " + std::to_string(dim) +
        (what ? std::string(" (") + what + ")" : std::string()) + " is " +
        std::to_string(tensor.shape[dim]) + ", expected " +
        std::to_string(expected) + " (" + from + "); shape is " +
        shapeText(tensor.shape.data(), tensor.rank));
  return Status::success();
}

/// Where a problem size shows in the tensors: dimension `dim` of `role`,
/// whose extent is `factor` times the size plus `offset` (seg_indptr holds
/// num_groups + 1 offsets; a swiglu weight 2 * n rows). `label` names the
/// dimension when that is not the size's name.
struct SizeSource {
  TensorRole role;
  int dim;
  int64_t offset = 0;
  const char *label = nullptr;
  int64_t factor = 1;
};

/// Binds the size `what` to every present tensor of `sources`. When the
/// kernel was compiled for a static size (`compiled` != -1), each tensor is
/// checked against it, so that the error names the tensor that is wrong;
/// otherwise the first tensor gives the size and the error names both
/// tensors that disagree.
Status bindSize(const BoundArgs &args, const char *what, int64_t compiled,
                const std::vector<SizeSource> &sources, int64_t &size) {
  auto dimText = [&](const SizeSource &source) {
    return "dimension " + std::to_string(source.dim) + " (" +
           (source.label ? source.label : what) + ")";
  };
  const TensorArg *reference = nullptr;
  const SizeSource *referenceSource = nullptr;
  for (const SizeSource &source : sources) {
    const TensorArg &tensor = args.get(source.role);
    if (!tensor.present)
      continue;
    const int64_t extent = tensor.shape[source.dim];
    if (compiled != -1 && extent != compiled * source.factor + source.offset)
      return invalidArgument(
          tensorPrefix(tensor) + dimText(source) + " is " +
          std::to_string(extent) + ", expected " +
          std::to_string(compiled * source.factor + source.offset) +
          " (the kernel was compiled for " + what + " = " +
          std::to_string(compiled) + "); shape is " +
          shapeText(tensor.shape.data(), tensor.rank));
    if (!reference) {
      if ((extent - source.offset) % source.factor != 0)
        return invalidArgument(tensorPrefix(tensor) + dimText(source) + " is " +
                               std::to_string(extent) +
                               ", expected a multiple of " +
                               std::to_string(source.factor) + "; shape is " +
                               shapeText(tensor.shape.data(), tensor.rank));
      reference = &tensor;
      referenceSource = &source;
      size = (extent - source.offset) / source.factor;
    } else if (extent != size * source.factor + source.offset) {
      // Where a dimension is a multiple of the size, the extents alone do
      // not say which one is expected.
      const bool scaled = source.factor != 1 || referenceSource->factor != 1;
      return invalidArgument(
          std::string("tensors '") + reference->name + "' and '" + tensor.name +
          "' disagree on " + what + ": " + reference->name + " " +
          dimText(*referenceSource) + " is " +
          std::to_string(reference->shape[referenceSource->dim]) + ", " +
          tensor.name + " " + dimText(source) + " is " +
          std::to_string(extent) +
          (scaled ? ", expected " +
                        std::to_string(size * source.factor + source.offset)
                  : std::string()) +
          "; shapes are " +
          shapeText(reference->shape.data(), reference->rank) + " and " +
          shapeText(tensor.shape.data(), tensor.rank));
    }
  }
  return Status::success();
}

Status checkAlignment(const TensorArg &tensor, int64_t alignment,
                      const char *why) {
  if (!tensor.empty &&
      reinterpret_cast<uintptr_t>(tensor.data) % alignment != 0)
    return invalidArgument(
        tensorPrefix(tensor) + "data pointer " + pointerText(tensor.data) +
        " is not " + std::to_string(alignment) + "-byte aligned (" + why + ")");
  return Status::success();
}

Status checkInnerContiguous(const TensorArg &tensor) {
  if (!tensor.empty && tensor.rank > 0 && tensor.strides[tensor.rank - 1] != 1)
    return invalidArgument(
        tensorPrefix(tensor) + "innermost stride is " +
        std::to_string(tensor.strides[tensor.rank - 1]) +
        ", expected 1 (the last dimension must be contiguous); strides are " +
        shapeText(tensor.strides.data(), tensor.rank));
  return Status::success();
}

/// The stride of `dim` (whose extent is > 1) must step by a multiple of 16
/// bytes: TMA requires it, and the epilogue's vector stores rely on it.
Status checkStride16(const TensorArg &tensor, int dim) {
  if (tensor.empty || tensor.shape[dim] <= 1)
    return Status::success();
  int64_t bytes = tensor.strides[dim] * dtypeSize(tensor.dtype);
  if (bytes % 16 != 0)
    return invalidArgument(
        tensorPrefix(tensor) + "stride of dimension " + std::to_string(dim) +
        " is " + std::to_string(tensor.strides[dim]) + " elements (" +
        std::to_string(bytes) +
        " bytes), expected a multiple of 16 bytes (pad the rows)");
  return Status::success();
}

/// A row-major tensor: every stride equals the contiguous one.
Status checkContiguous(const TensorArg &tensor) {
  if (tensor.empty)
    return Status::success();
  int64_t expected = 1;
  for (int d = tensor.rank - 1; d >= 0; --d) {
    if (tensor.shape[d] > 1 && tensor.strides[d] != expected)
      return invalidArgument(
          tensorPrefix(tensor) + "expected a contiguous tensor, got strides " +
          shapeText(tensor.strides.data(), tensor.rank) + " for shape " +
          shapeText(tensor.shape.data(), tensor.rank));
    expected *= tensor.shape[d];
  }
  return Status::success();
}

/// A dense array read or written element by element (index vectors, bias,
/// scales): contiguous, aligned to its element size.
Status checkDenseArray(const TensorArg &tensor) {
  if (Status status = checkContiguous(tensor); !status.ok())
    return status;
  return checkAlignment(tensor, dtypeSize(tensor.dtype),
                        "natural alignment of its dtype");
}

/// Checks that a row-major matrix view of `tensor` exists: the last dimension
/// is contiguous, rows do not overlap, and (rank 3) groups are packed so that
/// [G, R, C] can be read as [G * R, C]. Rows read by TMA (`tma`) must also
/// start 16 bytes apart.
Status checkRowView(const TensorArg &tensor, bool tma) {
  if (tensor.empty)
    return Status::success();
  if (Status status = checkInnerContiguous(tensor); !status.ok())
    return status;
  int rowDim = tensor.rank - 2;
  int64_t columns = tensor.shape[tensor.rank - 1];
  if (tensor.shape[rowDim] > 1 && tensor.strides[rowDim] < columns)
    return invalidArgument(tensorPrefix(tensor) + "row stride " +
                           std::to_string(tensor.strides[rowDim]) +
                           " is smaller than the row length " +
                           std::to_string(columns));
  if (tma)
    if (Status status = checkStride16(tensor, rowDim); !status.ok())
      return status;
  if (tensor.rank == 3 && tensor.shape[0] > 1 &&
      tensor.strides[0] != tensor.shape[1] * tensor.strides[1])
    return invalidArgument(
        tensorPrefix(tensor) + "stride of dimension 0 is " +
        std::to_string(tensor.strides[0]) + ", expected " +
        std::to_string(tensor.shape[1] * tensor.strides[1]) +
        " (shape[1] * stride[1]): groups must be packed so that the tensor "
        "reads as one matrix of " +
        std::to_string(tensor.shape[0] * tensor.shape[1]) + " rows");
  return Status::success();
}

/// How to make 1x128 scales of `tensor`'s shape MN-major in PyTorch: the
/// allocation and the conversion of row-major scales `s`, with the rows
/// padded so that the k blocks start 16 bytes apart.
std::string mnMajorAdvice(const TensorArg &tensor) {
  const bool grouped = tensor.rank == 3;
  const int64_t blocks = tensor.shape[tensor.rank - 1];
  const int64_t rows =
      grouped ? tensor.shape[0] * tensor.shape[1] : tensor.shape[0];
  const int64_t padded = (rows + 3) / 4 * 4;
  const std::string trim =
      padded != rows ? "[:" + std::to_string(rows) + "]" : "";
  const std::string view = grouped
                               ? ".view(" + std::to_string(tensor.shape[0]) +
                                     ", " + std::to_string(tensor.shape[1]) +
                                     ", " + std::to_string(blocks) + ")"
                               : "";
  const std::string strides = grouped
                                  ? "[" + std::to_string(tensor.shape[1]) +
                                        ", 1, " + std::to_string(padded) + "]"
                                  : "[1, " + std::to_string(padded) + "]";
  std::string convert = grouped ? "s.reshape(" + std::to_string(rows) + ", " +
                                      std::to_string(blocks) + ")"
                                : "s";
  if (padded != rows)
    convert = "torch.nn.functional.pad(" + convert + ", (0, 0, 0, " +
              std::to_string(padded - rows) + "))";
  return "allocate them as torch.empty(" + std::to_string(blocks) + ", " +
         std::to_string(padded) + ").t()" + trim + view + " (strides " +
         strides + "), or convert row-major scales s with " + convert +
         ".t().contiguous().t()" + trim + view;
}

/// "1x128" scales of x as the kernel's TMA descriptor reads them: a matrix of
/// [rows, k blocks] whose rows are contiguous (MN-major), so that the scales
/// of one k block for consecutive rows are one column. [G, Mmax, k blocks]
/// must have its groups back to back, reading as G * Mmax rows; the k blocks
/// are at least the rows apart, and 16 bytes times some integer (TMA).
/// `block` names a block of the reduction: "k block", or "token block" for
/// segment_matmul_k's dy_scale and x_scale ([rows, token blocks]).
Status checkMnMajorScales(const TensorArg &tensor,
                          const std::string &block = "k block") {
  if (tensor.empty)
    return Status::success();
  const bool grouped = tensor.rank == 3;
  const int rowDim = tensor.rank - 2;
  const int blockDim = tensor.rank - 1;
  const int64_t rows =
      grouped ? tensor.shape[0] * tensor.shape[1] : tensor.shape[0];
  if (tensor.shape[rowDim] > 1 && tensor.strides[rowDim] != 1)
    return invalidArgument(
        tensorPrefix(tensor) +
        "the kernel wants MN-major scales (stride 1 along the rows, so that "
        "TMA reads the scales of one " +
        block + " as a column), got strides " +
        shapeText(tensor.strides.data(), tensor.rank) + " for shape " +
        shapeText(tensor.shape.data(), tensor.rank) + "; " +
        mnMajorAdvice(tensor));
  if (grouped && tensor.shape[0] > 1 && tensor.strides[0] != tensor.shape[1])
    return invalidArgument(
        tensorPrefix(tensor) + "stride of dimension 0 is " +
        std::to_string(tensor.strides[0]) + ", expected " +
        std::to_string(tensor.shape[1]) +
        " (shape[1]): the groups' rows must be back to back so that they "
        "read as " +
        std::to_string(rows) + " rows with stride 1; " + mnMajorAdvice(tensor));
  const int64_t blockStride = tensor.strides[blockDim];
  if (tensor.shape[blockDim] > 1 && blockStride < rows)
    return invalidArgument(tensorPrefix(tensor) + "stride of dimension " +
                           std::to_string(blockDim) + " (" + block + "s) is " +
                           std::to_string(blockStride) +
                           ", expected at least the " + std::to_string(rows) +
                           " rows (the columns of scales overlap); " +
                           mnMajorAdvice(tensor));
  if (tensor.shape[blockDim] > 1 && blockStride % 4 != 0)
    return invalidArgument(
        tensorPrefix(tensor) + "stride of dimension " +
        std::to_string(blockDim) + " (" + block + "s) is " +
        std::to_string(blockStride) + " elements (" +
        std::to_string(blockStride * 4) +
        " bytes), expected a multiple of 16 bytes for TMA (pad the rows); " +
        mnMajorAdvice(tensor));
  return Status::success();
}

/// 1x128 scales, MN-major [rows, blocks] as TMA reads them: dims (rows,
/// blocks) innermost first, the blocks `blockStride` elements apart. A
/// single block is never stepped: its stride is the rows, padded to 16
/// bytes.
void mnMajorScaleMap(int64_t rows, int64_t blocks, int64_t blockStride,
                     int64_t *dims, int64_t *strides) {
  dims[0] = rows;
  dims[1] = blocks;
  strides[1] = blocks > 1 ? blockStride : (rows + 3) / 4 * 4;
}

/// An f8e4m3 y's scales, written by the epilogue one f32 at a time at
/// y_scale + R * y_scale_stride_row + j * y_scale_stride_col, R the row of
/// all groups (g * Mmax + r) and j the 128-column block: any strides that
/// give every (R, j) its own element. [G, Mmax, NB] must space its groups
/// Mmax rows apart, so that its rows read as G * Mmax rows of one stride
/// (MN-major, the FP8 ops' 1x128 x_scale layout, or row-major both do).
Status checkYScaleLayout(const TensorArg &tensor) {
  if (tensor.empty)
    return Status::success();
  const bool grouped = tensor.rank == 3;
  const int rowDim = tensor.rank - 2;
  const int blockDim = tensor.rank - 1;
  if (grouped && tensor.shape[0] > 1 &&
      tensor.strides[0] != tensor.shape[1] * tensor.strides[1])
    return invalidArgument(
        tensorPrefix(tensor) + "stride of dimension 0 is " +
        std::to_string(tensor.strides[0]) + ", expected " +
        std::to_string(tensor.shape[1] * tensor.strides[1]) +
        " (shape[1] * stride[1]): the kernel writes the scales of group g's "
        "row r as row g * " +
        std::to_string(tensor.shape[1]) +
        " + r, so the groups' rows must be one stride apart; strides are " +
        shapeText(tensor.strides.data(), tensor.rank) + " (MN-major " +
        "torch.empty(" + std::to_string(tensor.shape[2]) + ", " +
        std::to_string(tensor.shape[0] * tensor.shape[1]) + ").t().view(" +
        std::to_string(tensor.shape[0]) + ", " +
        std::to_string(tensor.shape[1]) + ", " +
        std::to_string(tensor.shape[2]) + ") or a contiguous tensor has it)");
  const int64_t rows =
      grouped ? tensor.shape[0] * tensor.shape[1] : tensor.shape[0];
  const int64_t blocks = tensor.shape[blockDim];
  const int64_t rowStride = tensor.strides[rowDim];
  const int64_t blockStride = tensor.strides[blockDim];
  // Strides of extent-1 dimensions were made the contiguous ones: a lone
  // row or block is never stepped.
  if (rows > 1 && blocks > 1 && rowStride < blocks * blockStride &&
      blockStride < rows * rowStride)
    return invalidArgument(
        tensorPrefix(tensor) + "strides " +
        shapeText(tensor.strides.data(), tensor.rank) + " for shape " +
        shapeText(tensor.shape.data(), tensor.rank) +
        " may give two scales one element (the kernel writes every one): "
        "expected the row stride to be at least " +
        std::to_string(blocks) +
        " * the block stride (row-major) or the "
        "block stride at least " +
        std::to_string(rows) + " * the row stride (MN-major)");
  return Status::success();
}

Status bindTensor(const Manifest &manifest, const ggemm_tensor &input,
                  int index, BoundArgs &args) {
  const Op op = manifest.problem.op;
  if (!input.name)
    return invalidArgument("tensors[" + std::to_string(index) +
                           "] has a null name");
  const char *name = input.name;
  int roleIndex = -1;
  for (int i = 0; i < kNumTensorRoles && roleIndex < 0; ++i)
    if (std::strcmp(name, tensorRoleName(static_cast<TensorRole>(i))) == 0)
      roleIndex = i;
  if (roleIndex < 0 ||
      !tensorExistsForOp(static_cast<TensorRole>(roleIndex), op))
    return invalidArgument(std::string("unknown tensor '") + name + "' (" +
                           opName(op) + " takes " +
                           roleList(rolesForProblem(manifest.problem)) + ")");
  TensorArg &tensor = args.tensors[roleIndex];
  if (tensor.present)
    return invalidArgument(std::string("tensor '") + name + "' is given twice");

  tensor.present = true;
  tensor.name = tensorRoleName(static_cast<TensorRole>(roleIndex));
  if (input.rank < 0 || input.rank > GGEMM_MAX_RANK)
    return invalidArgument(tensorPrefix(tensor) + "rank " +
                           std::to_string(input.rank) + " is outside [0, " +
                           std::to_string(GGEMM_MAX_RANK) + "]");
  // A C caller may store any int in the enum field; reading it as the enum
  // type would be undefined for values outside the enumerators.
  static_assert(sizeof(ggemm_dtype) == sizeof(int), "ggemm_dtype is an int");
  int rawDtype;
  std::memcpy(&rawDtype, &input.dtype, sizeof(rawDtype));
  if (!isValidDtype(rawDtype))
    return invalidArgument(tensorPrefix(tensor) + "invalid dtype value " +
                           std::to_string(rawDtype));
  tensor.data = input.data;
  tensor.dtype = static_cast<ggemm_dtype>(rawDtype);
  tensor.rank = input.rank;
  bool empty = false;
  for (int d = 0; d < input.rank; ++d) {
    tensor.shape[d] = input.shape[d];
    tensor.strides[d] = input.strides[d];
    if (input.shape[d] < 0 || input.shape[d] > kMaxExtent)
      return invalidArgument(tensorPrefix(tensor) + "extent " +
                             std::to_string(input.shape[d]) + " of dimension " +
                             std::to_string(d) + " is outside [0, 2^40]");
    if (input.strides[d] < 0 || input.strides[d] > kMaxExtent)
      return invalidArgument(tensorPrefix(tensor) + "stride " +
                             std::to_string(input.strides[d]) +
                             " of dimension " + std::to_string(d) +
                             " is outside [0, 2^40] (negative strides are "
                             "not supported)");
    empty |= input.shape[d] == 0;
  }
  tensor.empty = empty;
  canonicalizeStrides(tensor);
  for (int d = 0; d < tensor.rank && !empty; ++d)
    if (tensor.shape[d] > 1 && tensor.strides[d] == 0)
      return invalidArgument(tensorPrefix(tensor) + "stride of dimension " +
                             std::to_string(d) +
                             " is 0 (broadcast tensors are not supported)");
  if (!tensor.data && !empty)
    return invalidArgument(tensorPrefix(tensor) + "data pointer is null");
  return Status::success();
}

/// Presence rules: the op's tensors and the problem's options decide which
/// tensors must, may and must not be given.
Status checkPresence(const Manifest &manifest, const BoundArgs &args) {
  const ProblemSpec &problem = manifest.problem;
  std::vector<TensorRole> required = {TensorRole::X, TensorRole::W,
                                      TensorRole::Y};
  if (problem.op == Op::SegmentMatmul)
    required.push_back(TensorRole::SegIndptr);
  if (problem.op == Op::MaskedMatmul)
    required.push_back(TensorRole::MaskedM);
  // They take nothing optional: bindTensor rejects the rest by name.
  const bool allRequired = problem.op == Op::SegmentMatmulK ||
                           problem.op == Op::SortByExpert ||
                           problem.op == Op::Quantize;
  if (allRequired)
    required = rolesForProblem(problem);
  for (TensorRole role : required)
    if (!args.get(role).present)
      return invalidArgument(std::string("missing tensor '") +
                             tensorRoleName(role) + "' (" + opName(problem.op) +
                             " needs " + roleList(required) + ")");
  // sort_by_expert's row_indices is an output, not gather-A's option;
  // quantize has no options.
  if (problem.op == Op::SortByExpert || problem.op == Op::Quantize)
    return Status::success();
  // segment_matmul_k's only option is its f8e4m3 form's scales, which
  // bindTensor admits by name for either form.
  if (problem.op == Op::SegmentMatmulK) {
    if (problem.xScaleBlock == ScaleBlock::None)
      for (TensorRole role : {TensorRole::DyScale, TensorRole::XScale})
        if (args.get(role).present)
          return invalidArgument(
              std::string("tensor '") + tensorRoleName(role) +
              "' was given, but the kernel was compiled without it "
              "(problem.x_scale_block is absent: only f8e4m3 dy and x of "
              "segment_matmul_k have scales, and its dy and x are " +
              dtypeName(problem.aDtype) + ")");
    return Status::success();
  }

  // `field` names the problem field that decides; `block` is the scale
  // block of a scale tensor's field (None for a flag). The messages are
  // built only for an error: this runs on every launch.
  struct Option {
    TensorRole role;
    bool enabled;
    const char *field;
    bool isScale;
    ScaleBlock block;
  };
  const Option options[] = {
      {TensorRole::WeightIndices, problem.hasWeightIndices,
       "has_weight_indices", false, ScaleBlock::None},
      {TensorRole::Bias, problem.hasBias, "has_bias", false, ScaleBlock::None},
      {TensorRole::RowScale, problem.hasRowScale, "has_row_scale", false,
       ScaleBlock::None},
      {TensorRole::RowIndices, problem.hasRowIndices, "has_row_indices", false,
       ScaleBlock::None},
      {TensorRole::ScatterIndices, problem.hasScatterIndices,
       "has_scatter_indices", false, ScaleBlock::None},
      {TensorRole::XScale, problem.xScaleBlock != ScaleBlock::None,
       "x_scale_block", true, problem.xScaleBlock},
      {TensorRole::WScale, problem.wScaleBlock != ScaleBlock::None,
       "w_scale_block", true, problem.wScaleBlock},
      {TensorRole::YScale, problem.yScaleBlock != ScaleBlock::None,
       "y_scale_block", true, problem.yScaleBlock},
  };
  for (const Option &option : options) {
    bool present = args.get(option.role).present;
    if (option.enabled && !present)
      return invalidArgument(
          std::string("missing tensor '") + tensorRoleName(option.role) +
          "' (the kernel was compiled with " + option.field +
          (option.isScale
               ? std::string(" \"") + scaleBlockName(option.block) + "\""
               : std::string()) +
          ")");
    if (!option.enabled && present)
      return invalidArgument(
          std::string("tensor '") + tensorRoleName(option.role) +
          "' was given, but the kernel was compiled "
          "without it (problem." +
          option.field + (option.isScale ? " is absent" : " is false") + ")");
  }
  // A required pointer parameter may name an optional tensor only when the
  // problem enables it, which parseManifest has checked.
  return Status::success();
}

/// A transposed dy [N, T] or x [K, T] is read by TMA along its rows of
/// tokens, so the rows must start 16 bytes apart: with contiguous rows, T a
/// multiple of 16 / e tokens. Checked apart from checkRowView's stride rule
/// to say which extent to pad. `layout` is the tensor's, "[n, token rows]".
Status checkTokenRowStride(const TensorArg &tensor, const char *layout,
                           int64_t tokens) {
  if (tensor.empty || tensor.shape[0] <= 1)
    return Status::success();
  const int64_t elementSize = dtypeSize(tensor.dtype);
  const int64_t bytes = tensor.strides[0] * elementSize;
  if (bytes % 16 == 0)
    return Status::success();
  const int64_t unit = 16 / elementSize;
  const int64_t padded = ceilDiv(tokens, unit) * unit;
  return invalidArgument(
      tensorPrefix(tensor) + "row stride is " +
      std::to_string(tensor.strides[0]) + " elements (" +
      std::to_string(bytes) +
      " bytes), expected a multiple of 16 bytes: TMA reads the transposed " +
      tensor.name + " " + layout + " by rows of tokens, so the token rows (" +
      std::to_string(tokens) + ") must be padded to a multiple of " +
      std::to_string(unit) + " in memory (allocate [" +
      std::to_string(tensor.shape[0]) + ", " + std::to_string(padded) +
      "] and pass its [:, :" + std::to_string(tokens) + "] view); shape is " +
      shapeText(tensor.shape.data(), tensor.rank) + ", strides " +
      shapeText(tensor.strides.data(), tensor.rank));
}

/// segment_matmul_k: dy [T, N], x [T, K] (transposed: dy [N, T], x [K, T]),
/// seg_indptr [G + 1] and dw [G, N, K] (nk) or [G, K, N] (kn); with f8e4m3
/// dy and x also their 1x128 scales along the tokens, dy_scale
/// [N, ceil(T / 128)] and x_scale [K, ceil(T / 128)], MN-major. The kernel
/// computes dw as one [G * R, C] matrix, per group A^T B over the group's
/// token rows, with (A, B) = (dy, x) for nk and (x, dy) for kn: R = A's
/// columns, C = B's.
Status checkKRaggedTensors(const Manifest &manifest, BoundArgs &args) {
  using Role = TensorRole;
  const ProblemSpec &problem = manifest.problem;
  const bool nk = problem.weightLayout == WeightLayout::NK;
  const bool transposed = problem.transposed;
  const TensorArg &dy = args.get(Role::Dy);
  const TensorArg &x = args.get(Role::X);
  const TensorArg &indptr = args.get(Role::SegIndptr);
  const TensorArg &dw = args.get(Role::Dw);
  const TensorArg &dyScale = args.get(Role::DyScale);
  const TensorArg &xScale = args.get(Role::XScale);
  ProblemShape &shape = args.shape;
  // Where dy and x keep their token rows and their columns.
  const int tokenDim = transposed ? 1 : 0;
  const int columnDim = 1 - tokenDim;

  for (Role role : rolesForProblem(problem))
    if (Status status =
            checkDtype(args.get(role), expectedTensorDtype(problem, role));
        !status.ok())
      return status;
  struct RankRule {
    const TensorArg &tensor;
    int rank;
    const char *layout;
  };
  const RankRule ranks[] = {
      {dy, 2, transposed ? "[n, token rows]: transposed" : "[token rows, n]"},
      {x, 2, transposed ? "[k, token rows]: transposed" : "[token rows, k]"},
      {indptr, 1, "[num_groups + 1]"},
      {dw, 3,
       nk ? "[num_groups, n, k] for weight_layout \"nk\""
          : "[num_groups, k, n] for weight_layout \"kn\""},
      {dyScale, 2, "[n, ceil(token rows / 128)]"},
      {xScale, 2, "[k, ceil(token rows / 128)]"},
  };
  // checkPresence has required the scales exactly when the problem has
  // scale blocks.
  for (const RankRule &rule : ranks)
    if (rule.tensor.present)
      if (Status status = checkRank(rule.tensor, rule.rank, rule.layout);
          !status.ok())
        return status;
  if (indptr.shape[0] < 1)
    return invalidArgument(tensorPrefix(indptr) +
                           "expected at least 1 element (num_groups + 1), "
                           "got 0");

  int64_t tokens = 0, n = 0, k = 0;
  if (Status status =
          bindSize(args, "token rows", problem.m,
                   {{Role::Dy, tokenDim}, {Role::X, tokenDim}}, tokens);
      !status.ok())
    return status;
  if (Status status = bindSize(
          args, "n", problem.n,
          {{Role::Dy, columnDim}, {Role::Dw, nk ? 1 : 2}, {Role::DyScale, 0}},
          n);
      !status.ok())
    return status;
  if (Status status = bindSize(
          args, "k", problem.k,
          {{Role::X, columnDim}, {Role::Dw, nk ? 2 : 1}, {Role::XScale, 0}}, k);
      !status.ok())
    return status;
  // One gradient per group: num_weights is num_groups.
  const int64_t staticGroups =
      problem.numGroups != -1 ? problem.numGroups : problem.numWeights;
  if (Status status =
          bindSize(args, "num_groups", staticGroups,
                   {{Role::SegIndptr, 0, 1, "num_groups + 1"}, {Role::Dw, 0}},
                   shape.numGroups);
      !status.ok())
    return status;
  const int64_t tokenBlocks = ceilDiv(tokens, kScaleBlock);
  const std::string tokenBlocksText = "ceil(token rows / " +
                                      std::to_string(kScaleBlock) + ") with " +
                                      std::to_string(tokens) + " token rows";
  for (const TensorArg *scale : {&dyScale, &xScale})
    if (scale->present)
      if (Status status = checkExtent(*scale, 1, tokenBlocks, "token blocks",
                                      tokenBlocksText);
          !status.ok())
        return status;

  // dy and x are read by TMA; dw is written element by element as one
  // [G * R, C] matrix, so its groups must be packed.
  const char *tmaWhy = "TMA needs 16-byte aligned global addresses";
  const std::pair<const TensorArg *, const char *> operands[] = {
      {&dy, "[n, token rows]"}, {&x, "[k, token rows]"}};
  for (const auto &[tensor, layout] : operands) {
    if (Status status = checkRowView(*tensor, /*tma=*/!transposed);
        !status.ok())
      return status;
    if (transposed)
      if (Status status = checkTokenRowStride(*tensor, layout, tokens);
          !status.ok())
        return status;
    if (Status status = checkAlignment(*tensor, 16, tmaWhy); !status.ok())
      return status;
  }
  // The scales as the forward ops' 1x128 x_scale: [rows, token blocks]
  // with the rows contiguous, read by TMA.
  for (const TensorArg *scale : {&dyScale, &xScale}) {
    if (!scale->present)
      continue;
    if (Status status = checkMnMajorScales(*scale, "token block"); !status.ok())
      return status;
    if (Status status = checkAlignment(*scale, 16, tmaWhy); !status.ok())
      return status;
  }
  if (Status status = checkRowView(dw, /*tma=*/false); !status.ok())
    return status;
  if (Status status = checkAlignment(dw, dtypeSize(dw.dtype),
                                     "natural alignment of its dtype");
      !status.ok())
    return status;
  if (Status status = checkDenseArray(indptr); !status.ok())
    return status;

  shape.numWeights = shape.numGroups;
  shape.numRows = tokens;
  shape.xRows = tokens;
  shape.m = tokens;
  // The kernel's K is the token rows; its N is C.
  shape.k = tokens;
  shape.rowsPerGroup = nk ? n : k;
  shape.n = nk ? k : n;
  // Both are at most 2^40: divide rather than multiply.
  if (shape.rowsPerGroup > 0 &&
      shape.numGroups > kMaxExtent / shape.rowsPerGroup)
    return invalidArgument(
        tensorPrefix(dw) +
        "groups * rows = " + std::to_string(shape.numGroups) + " * " +
        std::to_string(shape.rowsPerGroup) + " is larger than 2^40");
  shape.yRows = shape.numGroups * shape.rowsPerGroup;
  shape.lda = x.strides[0];
  shape.ldy = dw.strides[1];
  // T = 0 is not empty: every dw[g] is still written (zeros, or left as it
  // is when accumulating), so only G, R or C of 0 launch nothing.
  shape.numTiles = computeTileBound(problem.op, shape.numRows,
                                    shape.rowsPerGroup, shape.numGroups,
                                    shape.n, manifest.blockM, manifest.blockN);
  return Status::success();
}

/// sort_by_expert: topk_ids [P] of index_dtype; seg_indptr [E + 1],
/// row_indices [P] and pair_indices [P] of i32; all contiguous. P = 0 is
/// work too: the kernel still writes seg_indptr (zeros), so there is always
/// one CTA to launch.
Status checkRoutingTensors(const Manifest &manifest, BoundArgs &args) {
  using Role = TensorRole;
  const ProblemSpec &problem = manifest.problem;
  const std::vector<Role> roles = rolesForProblem(problem);
  for (Role role : roles)
    if (Status status =
            checkDtype(args.get(role), expectedTensorDtype(problem, role));
        !status.ok())
      return status;
  for (Role role : roles)
    if (Status status = checkRank(args.get(role), 1,
                                  role == Role::SegIndptr ? "[num_experts + 1]"
                                                          : "[num_pairs]");
        !status.ok())
      return status;

  ProblemShape &shape = args.shape;
  if (Status status = bindSize(args, "num_experts", problem.numExperts,
                               {{Role::SegIndptr, 0, 1, "num_experts + 1"}},
                               shape.numGroups);
      !status.ok())
    return status;
  if (Status status = bindSize(
          args, "num_pairs", -1,
          {{Role::TopkIds, 0}, {Role::RowIndices, 0}, {Role::PairIndices, 0}},
          shape.numPairs);
      !status.ok())
    return status;
  const TensorArg &ids = args.get(Role::TopkIds);
  const std::string pairs = "dimension 0 (num_pairs) is " +
                            std::to_string(shape.numPairs) + ", expected ";
  const std::string idsShape =
      "; shape is " + shapeText(ids.shape.data(), ids.rank);
  if (shape.numPairs % problem.topk != 0)
    return invalidArgument(tensorPrefix(ids) + pairs + "a multiple of " +
                           std::to_string(problem.topk) +
                           " (whole tokens of topk pairs: the kernel was "
                           "compiled for topk = " +
                           std::to_string(problem.topk) + ")" + idsShape);
  if (shape.numPairs > std::numeric_limits<int32_t>::max())
    return unsupported(tensorPrefix(ids) + pairs +
                       "at most 2^31 - 1 (the kernel counts pairs in i32)" +
                       idsShape);
  for (Role role : roles)
    if (Status status = checkDenseArray(args.get(role)); !status.ok())
      return status;
  shape.numTiles = 1;
  return Status::success();
}

/// quantize: x [rows, k] or [groups, rows, k] of x_dtype and q of the same
/// shape and q_dtype, both row-major (x 16-byte aligned: the kernel loads 16
/// bytes per thread; q 8-byte aligned: it stores 8), k a multiple of 128;
/// scale f32 [(groups,) ceil(rows / R), k / 128] in any strides (the 1x128
/// scales of the FP8 GEMMs are MN-major), naturally aligned.
Status checkQuantizeTensors(const Manifest &manifest, BoundArgs &args) {
  using Role = TensorRole;
  const ProblemSpec &problem = manifest.problem;
  const TensorArg &x = args.get(Role::X);
  const TensorArg &q = args.get(Role::Q);
  const TensorArg &scale = args.get(Role::Scale);
  for (Role role : {Role::X, Role::Q, Role::Scale})
    if (Status status =
            checkDtype(args.get(role), expectedTensorDtype(problem, role));
        !status.ok())
      return status;
  const bool grouped = problem.rank == 3;
  const char *layout = grouped ? "[num_groups, rows, k]" : "[rows, k]";
  for (Role role : {Role::X, Role::Q})
    if (Status status = checkRank(args.get(role), problem.rank, layout);
        !status.ok())
      return status;
  if (Status status = checkRank(scale, problem.rank,
                                grouped ? "[num_groups, row blocks, k blocks]"
                                        : "[row blocks, k blocks]");
      !status.ok())
    return status;
  for (int d = 0; d < problem.rank; ++d)
    if (Status status = checkExtent(q, d, x.shape[d], nullptr, "x's shape");
        !status.ok())
      return status;

  ProblemShape &shape = args.shape;
  const int rowDim = problem.rank - 2;
  shape.numGroups = grouped ? x.shape[0] : 1;
  shape.rowsPerGroup = x.shape[rowDim];
  shape.k = x.shape[rowDim + 1];
  if (shape.k % kScaleBlock != 0)
    return invalidArgument(
        tensorPrefix(x) + "dimension " + std::to_string(rowDim + 1) +
        " (k) is " + std::to_string(shape.k) + ", expected a multiple of " +
        std::to_string(kScaleBlock) +
        " (one scale per 128 columns; pad k); shape is " +
        shapeText(x.shape.data(), x.rank));
  const int64_t blockRows =
      problem.xScaleBlock == ScaleBlock::Block1x128 ? 1 : kScaleBlock;
  const int64_t rowBlocks = ceilDiv(shape.rowsPerGroup, blockRows);
  const int64_t colBlocks = shape.k / kScaleBlock;
  const std::string from = std::string("x's shape and the ") +
                           scaleBlockName(problem.xScaleBlock) + " blocks";
  if (grouped)
    if (Status status =
            checkExtent(scale, 0, shape.numGroups, "num_groups", from);
        !status.ok())
      return status;
  if (Status status = checkExtent(scale, rowDim, rowBlocks, "row blocks", from);
      !status.ok())
    return status;
  if (Status status =
          checkExtent(scale, rowDim + 1, colBlocks, "k blocks", from);
      !status.ok())
    return status;
  for (const TensorArg *tensor : {&x, &q})
    if (Status status = checkContiguous(*tensor); !status.ok())
      return status;
  if (Status status = checkAlignment(x, 16, "the kernel loads 16 bytes");
      !status.ok())
    return status;
  if (Status status = checkAlignment(q, 8, "the kernel stores 8 bytes");
      !status.ok())
    return status;
  if (Status status = checkAlignment(scale, 4, "natural alignment of f32");
      !status.ok())
    return status;
  shape.scaleStrides = {grouped ? scale.strides[0] : 0, scale.strides[rowDim],
                        scale.strides[rowDim + 1]};
  const int64_t units = shape.numGroups * rowBlocks * colBlocks;
  shape.numTiles = ceilDiv(units, std::max(manifest.unitsPerCta, 1));
  return Status::success();
}

Status checkTensors(const Manifest &manifest, BoundArgs &args) {
  const ProblemSpec &problem = manifest.problem;
  if (problem.op == Op::SegmentMatmulK)
    return checkKRaggedTensors(manifest, args);
  if (problem.op == Op::SortByExpert)
    return checkRoutingTensors(manifest, args);
  if (problem.op == Op::Quantize)
    return checkQuantizeTensors(manifest, args);
  const bool segment = problem.op == Op::SegmentMatmul;
  const TensorArg &x = args.get(TensorRole::X);
  const TensorArg &w = args.get(TensorRole::W);
  const TensorArg &y = args.get(TensorRole::Y);
  ProblemShape &shape = args.shape;

  // Dtypes first: they are the likeliest mistake and make the clearest error.
  for (int i = 0; i < kNumTensorRoles; ++i) {
    const TensorArg &tensor = args.tensors[i];
    if (tensor.present)
      if (Status status = checkDtype(
              tensor, expectedTensorDtype(problem, static_cast<TensorRole>(i)));
          !status.ok())
        return status;
  }

  // Ranks, before any extent is read.
  const bool nk = problem.weightLayout == WeightLayout::NK;
  const TensorArg &indptr = args.get(TensorRole::SegIndptr);
  const TensorArg &counts = args.get(TensorRole::MaskedM);
  const TensorArg &indices = args.get(TensorRole::WeightIndices);
  const TensorArg &bias = args.get(TensorRole::Bias);
  const TensorArg &scale = args.get(TensorRole::RowScale);
  const bool groupedScale = !segment && scale.present && scale.rank == 2;
  const TensorArg &xScale = args.get(TensorRole::XScale);
  const TensorArg &wScale = args.get(TensorRole::WScale);
  const TensorArg &rowIndices = args.get(TensorRole::RowIndices);
  const TensorArg &scatterIndices = args.get(TensorRole::ScatterIndices);
  const TensorArg &yScale = args.get(TensorRole::YScale);
  // segment_matmul only (parseManifest): x's rows are gathered and y's
  // scattered, so their rows are not the segment rows M.
  const bool gather = problem.hasRowIndices;
  const bool scatter = problem.hasScatterIndices;
  // The weight holds the gate and up halves, 2N rows.
  const bool swiglu = problem.activation == Activation::Swiglu;
  const ScaleBlock xBlock = problem.xScaleBlock;
  const ScaleBlock wBlock = problem.wScaleBlock;
  // Scales that follow x's rows (and groups) or w's matrices (and N).
  const bool xScaleRows =
      xBlock == ScaleBlock::Block1x128 || xBlock == ScaleBlock::PerRow;
  const bool wScaleColumns = wBlock == ScaleBlock::PerRow;
  struct RankRule {
    const TensorArg &tensor;
    int rank;
    const char *layout;
  };
  const RankRule ranks[] = {
      {x, segment ? 2 : 3,
       gather    ? "[x rows, k]: rows gathered by row_indices"
       : segment ? "[m, k]"
                 : "[groups, m, k]"},
      {w, 3,
       swiglu ? (nk ? "[num_weights, 2 * n, k] for weight_layout \"nk\" "
                      "and swiglu"
                    : "[num_weights, k, 2 * n] for weight_layout \"kn\" "
                      "and swiglu")
       : nk   ? "[num_weights, n, k] for weight_layout \"nk\""
              : "[num_weights, k, n] for weight_layout \"kn\""},
      {y, segment ? 2 : 3,
       scatter   ? "[y rows, n]: rows scattered by scatter_indices"
       : segment ? "[m, n]"
                 : "[groups, m, n]"},
      {indptr, 1, "[num_groups + 1]"},
      {counts, 1, "[num_groups]"},
      {indices, 1, "[num_groups]"},
      {rowIndices, 1, "[m]: the x row of each segment row"},
      {scatterIndices, 1, "[m]: the y row of each result row"},
      {bias, 2,
       swiglu ? "[num_weights, 2 * n] for swiglu" : "[num_weights, n]"},
      {scale, groupedScale ? 2 : 1,
       segment ? "[m]" : "[groups * m] or [groups, m]"},
      {xScale,
       xBlock == ScaleBlock::Block1x128 ? (segment ? 2 : 3)
       : xBlock == ScaleBlock::PerRow   ? (segment ? 1 : 2)
                                        : 1,
       xBlock == ScaleBlock::Block1x128
           ? (segment ? "[m, ceil(k / 128)] for x_scale_block \"1x128\""
                      : "[groups, m, ceil(k / 128)] for x_scale_block "
                        "\"1x128\"")
       : xBlock == ScaleBlock::PerRow
           ? (segment ? "[m] for x_scale_block \"per_row\""
                      : "[groups, m] for x_scale_block \"per_row\"")
           : "[1] for x_scale_block \"tensor\""},
      {wScale,
       wBlock == ScaleBlock::Block128x128 ? 3
       : wBlock == ScaleBlock::PerRow     ? 2
                                          : 1,
       wBlock == ScaleBlock::Block128x128
           ? (swiglu ? "[num_weights, ceil(2 * n / 128), ceil(k / 128)] for "
                       "w_scale_block \"128x128\" and swiglu"
                     : "[num_weights, ceil(n / 128), ceil(k / 128)] for "
                       "w_scale_block \"128x128\"")
       : wBlock == ScaleBlock::PerRow
           ? (swiglu ? "[num_weights, 2 * n] for w_scale_block \"per_row\" "
                       "and swiglu"
                     : "[num_weights, n] for w_scale_block \"per_row\"")
           : "[num_weights] for w_scale_block \"tensor\""},
      {yScale, segment ? 2 : 3,
       segment ? "[m, ceil(n / 128)] for y_scale_block \"1x128\""
               : "[groups, m, ceil(n / 128)] for y_scale_block \"1x128\""},
  };
  for (const RankRule &rule : ranks)
    if (rule.tensor.present)
      if (Status status = checkRank(rule.tensor, rule.rank, rule.layout);
          !status.ok())
        return status;
  if (segment && indptr.shape[0] < 1)
    return invalidArgument(tensorPrefix(indptr) +
                           "expected at least 1 element (num_groups + 1), "
                           "got 0");

  // Sizes. Every tensor that carries a size is checked, against the static
  // size where the kernel has one, so that an error blames the right tensor.
  using Role = TensorRole;
  if (Status status =
          bindSize(args, "k", problem.k,
                   {{Role::X, x.rank - 1}, {Role::W, nk ? 2 : 1}}, shape.k);
      !status.ok())
    return status;
  // N is y's columns. A swiglu weight has 2N rows (bias and w's scales
  // follow them); y comes first so that a wrong weight is blamed.
  const int64_t weightRowFactor = swiglu ? 2 : 1;
  const char *weightRowLabel =
      swiglu ? "2 * n: swiglu's gate and up halves" : nullptr;
  std::vector<SizeSource> columns = {
      {Role::W, nk ? 1 : 2, 0, weightRowLabel, weightRowFactor},
      {Role::Y, y.rank - 1},
      {Role::Bias, 1, 0, weightRowLabel, weightRowFactor}};
  if (swiglu)
    std::swap(columns[0], columns[1]);
  if (wScaleColumns)
    columns.push_back({Role::WScale, 1, 0, weightRowLabel, weightRowFactor});
  if (Status status = bindSize(args, "n", problem.n, columns, shape.n);
      !status.ok())
    return status;
  // Interleaved gate/up blocks: w's 2N rows are whole blocks of 2B.
  if (problem.gateUpBlock > 0 && shape.n % problem.gateUpBlock != 0)
    return invalidArgument(tensorPrefix(w) + "n = " + std::to_string(shape.n) +
                           " is not a multiple of problem.gate_up_block (" +
                           std::to_string(problem.gateUpBlock) +
                           "): w's 2 * n rows must be whole blocks of gate "
                           "and up rows");
  // Rows: all of them for segment_matmul, those of a group otherwise. With
  // gather (scatter) the indices carry M, and x (y) has rows of its own.
  const int rowDim = segment ? 0 : 1;
  std::vector<SizeSource> rows = {gather ? SizeSource{Role::RowIndices, 0}
                                         : SizeSource{Role::X, rowDim},
                                  scatter ? SizeSource{Role::ScatterIndices, 0}
                                          : SizeSource{Role::Y, rowDim}};
  if (segment || groupedScale)
    rows.push_back({Role::RowScale, rowDim});
  // x's scales follow x's rows, y's y's (parseManifest admits no scatter
  // with them).
  if (xScaleRows && !gather)
    rows.push_back({Role::XScale, rowDim});
  rows.push_back({Role::YScale, rowDim});
  if (Status status = bindSize(args, "m", problem.m, rows, shape.m);
      !status.ok())
    return status;
  if (gather) {
    std::vector<SizeSource> xRows = {{Role::X, 0}};
    if (xScaleRows)
      xRows.push_back({Role::XScale, 0});
    if (Status status = bindSize(args, "x rows", -1, xRows, shape.xRows);
        !status.ok())
      return status;
  }

  // Without weight_indices there is one weight matrix per group: w and bias
  // carry the number of groups, and a static num_weights fixes it.
  std::vector<SizeSource> groups;
  if (segment)
    groups = {{Role::SegIndptr, 0, 1, "num_groups + 1"}};
  else
    groups = {{Role::X, 0}, {Role::MaskedM, 0}, {Role::Y, 0}};
  if (groupedScale)
    groups.push_back({Role::RowScale, 0});
  if (!segment && xScaleRows)
    groups.push_back({Role::XScale, 0});
  if (!segment)
    groups.push_back({Role::YScale, 0});
  std::vector<SizeSource> weights = {
      {Role::W, 0}, {Role::Bias, 0}, {Role::WScale, 0}};
  int64_t staticGroups = problem.numGroups;
  if (problem.hasWeightIndices) {
    groups.push_back({Role::WeightIndices, 0});
  } else {
    const char *label = "num_weights: one per group without weight_indices";
    groups.insert(groups.end(), {{Role::W, 0, 0, label},
                                 {Role::Bias, 0, 0, label},
                                 {Role::WScale, 0, 0, label}});
    weights.clear();
    if (staticGroups == -1)
      staticGroups = problem.numWeights;
  }
  if (Status status =
          bindSize(args, "num_groups", staticGroups, groups, shape.numGroups);
      !status.ok())
    return status;
  shape.numWeights = shape.numGroups;
  if (Status status = bindSize(args, "num_weights", problem.numWeights, weights,
                               shape.numWeights);
      !status.ok())
    return status;

  if (segment) {
    shape.numRows = shape.m;
    shape.rowsPerGroup = 0;
    shape.xRows = gather ? shape.xRows : shape.m;
    shape.yRows = scatter ? y.shape[0] : shape.m;
  } else {
    shape.rowsPerGroup = shape.m;
    shape.numRows = shape.numGroups * shape.m; // both <= 2^40: no overflow
    if (shape.numRows > kMaxExtent)
      return invalidArgument(
          tensorPrefix(x) + "groups * rows = " + std::to_string(shape.numRows) +
          " is larger than 2^40");
    if (scale.present && !groupedScale)
      if (Status status =
              checkExtent(scale, 0, shape.numRows, "rows", "rows of x");
          !status.ok())
        return status;
    shape.xRows = shape.numRows;
    shape.yRows = shape.numRows;
  }

  // The numbers of scale blocks, from the sizes just bound.
  const int64_t kBlocks = ceilDiv(shape.k, kScaleBlock);
  const std::string kBlocksText =
      "ceil(k / " + std::to_string(kScaleBlock) + ")";
  if (xScale.present && xBlock == ScaleBlock::Block1x128)
    if (Status status =
            checkExtent(xScale, xScale.rank - 1, kBlocks, nullptr, kBlocksText);
        !status.ok())
      return status;
  if (xScale.present && xBlock == ScaleBlock::Tensor)
    if (Status status =
            checkExtent(xScale, 0, 1, nullptr, "one scale for all of x");
        !status.ok())
      return status;
  if (yScale.present)
    if (Status status = checkExtent(
            yScale, yScale.rank - 1, ceilDiv(shape.n, kScaleBlock), nullptr,
            "ceil(n / " + std::to_string(kScaleBlock) + ")");
        !status.ok())
      return status;
  if (wScale.present && wBlock == ScaleBlock::Block128x128) {
    if (Status status = checkExtent(
            wScale, 1, ceilDiv(weightRowFactor * shape.n, kScaleBlock), nullptr,
            std::string(swiglu ? "ceil(2 * n / " : "ceil(n / ") +
                std::to_string(kScaleBlock) + ")");
        !status.ok())
      return status;
    if (Status status = checkExtent(wScale, 2, kBlocks, nullptr, kBlocksText);
        !status.ok())
      return status;
  }

  // Layouts and alignment.
  const char *tmaWhy = "TMA needs 16-byte aligned global addresses";
  if (Status status = checkRowView(x, /*tma=*/true); !status.ok())
    return status;
  if (Status status = checkAlignment(x, 16, tmaWhy); !status.ok())
    return status;
  if (Status status = checkInnerContiguous(w); !status.ok())
    return status;
  for (int d = 0; d < 2; ++d)
    if (Status status = checkStride16(w, d); !status.ok())
      return status;
  if (Status status = checkAlignment(w, 16, tmaWhy); !status.ok())
    return status;
  // The epilogue writes y element by element: any row stride works.
  if (Status status = checkRowView(y, /*tma=*/false); !status.ok())
    return status;
  if (Status status = checkAlignment(y, dtypeSize(y.dtype),
                                     "natural alignment of its dtype");
      !status.ok())
    return status;
  // 1x128 scales are read by TMA (whatever the parameter kind: the kernel
  // expects this layout); the others are dense arrays.
  const bool mnMajorScales = xBlock == ScaleBlock::Block1x128;
  if (xScale.present && mnMajorScales) {
    if (Status status = checkMnMajorScales(xScale); !status.ok())
      return status;
    if (Status status = checkAlignment(xScale, 16, tmaWhy); !status.ok())
      return status;
  }
  if (yScale.present) {
    if (Status status = checkYScaleLayout(yScale); !status.ok())
      return status;
    if (Status status =
            checkAlignment(yScale, 4, "natural alignment of its dtype");
        !status.ok())
      return status;
    shape.yScaleStrides = {yScale.strides[yScale.rank - 2],
                           yScale.strides[yScale.rank - 1]};
  }
  for (TensorRole role :
       {TensorRole::SegIndptr, TensorRole::MaskedM, TensorRole::WeightIndices,
        TensorRole::RowIndices, TensorRole::ScatterIndices,
        TensorRole::RowScale, TensorRole::Bias, TensorRole::XScale,
        TensorRole::WScale}) {
    const TensorArg &tensor = args.get(role);
    if (!tensor.present || (role == TensorRole::XScale && mnMajorScales))
      continue;
    if (Status status = checkDenseArray(tensor); !status.ok())
      return status;
  }

  shape.lda = x.strides[x.rank - 2];
  shape.ldy = y.strides[y.rank - 2];
  // A swiglu kernel's tiles run over w's 2N rows (block_n of them each,
  // block_n / 2 output columns).
  const int64_t tileCols =
      problem.activation == Activation::Swiglu ? 2 * shape.n : shape.n;
  shape.numTiles = computeTileBound(problem.op, shape.numRows,
                                    shape.rowsPerGroup, shape.numGroups,
                                    tileCols, manifest.blockM, manifest.blockN);
  // The kernel skips rows scattered outside [0, Y): a y without rows gets
  // none of them.
  if (scatter && shape.yRows == 0)
    shape.numTiles = 0;
  // Every gathered row must exist, and TMA cannot describe 0 rows.
  if (gather && shape.numTiles > 0 && shape.xRows == 0)
    return invalidArgument(tensorPrefix(x) +
                           "dimension 0 (x rows) is 0, expected at least 1: "
                           "row_indices gathers " +
                           std::to_string(shape.m) + " rows from x; shape is " +
                           shapeText(x.shape.data(), x.rank));
  if (shape.numTiles > 0 && shape.k == 0)
    return unsupported("k = 0 is not supported (x has no columns)");
  if (shape.numTiles > 0 && shape.numWeights == 0)
    return invalidArgument(tensorPrefix(w) +
                           "dimension 0 (num_weights) is 0, but there are "
                           "groups to multiply");
  return Status::success();
}

} // namespace

Status bindArguments(const Manifest &manifest, const ggemm_tensor *tensors,
                     int numTensors, BoundArgs &args) {
  args = BoundArgs();
  if (numTensors < 0)
    return invalidArgument("num_tensors is negative (" +
                           std::to_string(numTensors) + ")");
  if (numTensors > 0 && !tensors)
    return invalidArgument("tensors is null but num_tensors is " +
                           std::to_string(numTensors));
  for (int i = 0; i < numTensors; ++i)
    if (Status status = bindTensor(manifest, tensors[i], i, args); !status.ok())
      return status;
  if (Status status = checkPresence(manifest, args); !status.ok())
    return status;
  return checkTensors(manifest, args);
}

int64_t computeTileBound(Op op, int64_t numRows, int64_t rowsPerGroup,
                         int64_t numGroups, int64_t n, int blockM, int blockN) {
  // segment_matmul_k tiles rows_per_group (R), not its token rows, which may
  // be 0 with tiles to write.
  const int64_t rows = op == Op::SegmentMatmul ? numRows : rowsPerGroup;
  if (rows <= 0 || numGroups <= 0 || n <= 0)
    return 0;
  __int128 columnTiles = ceilDiv(n, blockN);
  __int128 rowTiles = op == Op::SegmentMatmul
                          ? __int128(ceilDiv(numRows, blockM)) + numGroups
                          : __int128(numGroups) * ceilDiv(rowsPerGroup, blockM);
  __int128 tiles = columnTiles * rowTiles;
  if (tiles > std::numeric_limits<int64_t>::max())
    return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(tiles);
}

Status computeGrid(const Manifest &manifest, int64_t tileBound, int smCount,
                   unsigned &gridX) {
  gridX = 0;
  if (tileBound <= 0)
    return Status::success();
  if (manifest.gridPolicy == GridPolicy::Single) {
    gridX = 1;
    return Status::success();
  }
  const int64_t clusterX = manifest.cluster[0];
  const int64_t maxGrid = std::numeric_limits<int32_t>::max();
  // A split-K kernel takes split_k CTAs a tile.
  int64_t tiles = std::min(tileBound, maxGrid + clusterX);
  tiles = std::min<int64_t>(tiles * manifest.splitK, maxGrid + clusterX);
  int64_t grid = ceilDiv(tiles, clusterX) * clusterX;
  if (manifest.gridPolicy == GridPolicy::Persistent) {
    if (smCount <= 0)
      return invalidArgument("multiprocessor count must be positive, got " +
                             std::to_string(smCount));
    // As many CTAs as can be resident, whole clusters only.
    int64_t resident = int64_t(smCount) * manifest.ctasPerSm;
    resident = std::max(clusterX, resident / clusterX * clusterX);
    grid = std::min(grid, resident);
  }
  if (grid > maxGrid)
    return unsupported("the problem needs " + std::to_string(tileBound) +
                       " CTAs, more than the grid limit " +
                       std::to_string(maxGrid) +
                       " (use the \"persistent\" grid policy)");
  gridX = static_cast<unsigned>(grid);
  return Status::success();
}

int64_t scalarValue(const ParamSpec &param, const ProblemShape &shape) {
  switch (param.source) {
  case ScalarSource::Literal:
    return param.literal;
  case ScalarSource::NumRows:
    return shape.numRows;
  case ScalarSource::RowsPerGroup:
    return shape.rowsPerGroup;
  case ScalarSource::NumGroups:
    return shape.numGroups;
  case ScalarSource::NumWeights:
    return shape.numWeights;
  case ScalarSource::M:
    return shape.m;
  case ScalarSource::N:
    return shape.n;
  case ScalarSource::K:
    return shape.k;
  case ScalarSource::Lda:
    return shape.lda;
  case ScalarSource::Ldy:
    return shape.ldy;
  case ScalarSource::NumTiles:
    return shape.numTiles;
  case ScalarSource::YRows:
    return shape.yRows;
  case ScalarSource::XRows:
    return shape.xRows;
  case ScalarSource::NumPairs:
    return shape.numPairs;
  case ScalarSource::ScaleStrideGroup:
    return shape.scaleStrides[0];
  case ScalarSource::ScaleStrideRow:
    return shape.scaleStrides[1];
  case ScalarSource::ScaleStrideCol:
    return shape.scaleStrides[2];
  case ScalarSource::YScaleStrideRow:
    return shape.yScaleStrides[0];
  case ScalarSource::YScaleStrideCol:
    return shape.yScaleStrides[1];
  }
  return 0;
}

Status computeTensorMapArgs(const Manifest &manifest, const ParamSpec &param,
                            const BoundArgs &args, TensorMapArgs &result) {
  result = TensorMapArgs();
  const TensorArg &tensor = args.get(param.tensor);
  const ProblemShape &shape = args.shape;
  // Built only for an error: this runs for every descriptor of every launch.
  auto context = [&] {
    return "parameter '" + param.name + "' (TMA descriptor of " +
           tensorRoleName(param.tensor) + ")";
  };
  const int64_t elementSize = dtypeSize(tensor.dtype);

  switch (tensor.dtype) {
  case GGEMM_DTYPE_BF16:
    result.dataType = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    break;
  case GGEMM_DTYPE_F16:
    result.dataType = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    break;
  case GGEMM_DTYPE_F32:
    result.dataType = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    break;
  // One-byte operands are copied, not converted: TMA has no fp8 or signed
  // 8-bit type, and zero fill is the zero of each.
  case GGEMM_DTYPE_F8E4M3:
  case GGEMM_DTYPE_F8E5M2:
  case GGEMM_DTYPE_S8:
    result.dataType = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    break;
  default:
    return invalidArgument(context() + ": dtype " + dtypeName(tensor.dtype) +
                           " cannot be described by TMA");
  }

  // y's descriptor serves the staged epilogue only where TMA can address
  // y and clip its rows exactly (a TMA store clips columns past N to
  // 16-byte units); elsewhere the kernel stores without it (the same test,
  // in the kernel, on y's address, ldy and N).
  // The output as the kernel sees it: [rows, N] (dw of segment_matmul_k
  // as [G * R, C], its groups packed).
  const bool output =
      param.tensor == TensorRole::Y || param.tensor == TensorRole::Dw;
  const int64_t outputRows = param.tensor == TensorRole::Dw
                                 ? shape.numGroups * shape.rowsPerGroup
                                 : shape.yRows;
  if (output) {
    int64_t rowStride = tensor.strides[tensor.rank - 2];
    if (reinterpret_cast<uintptr_t>(tensor.data) % 16 != 0 ||
        (rowStride * elementSize) % 16 != 0 ||
        (shape.n * elementSize) % 16 != 0 || outputRows < 1) {
      result.absent = true;
      return Status::success();
    }
  }

  // (extent, element stride) pairs, innermost first.
  int64_t dims[kMaxTensorMapRank] = {};
  int64_t strides[kMaxTensorMapRank] = {};
  int rank = param.rank;
  void *address = tensor.data;
  if (param.tensor == TensorRole::Dw) {
    dims[0] = shape.n;
    dims[1] = outputRows;
    strides[1] = tensor.strides[tensor.rank - 2];
  } else if (manifest.problem.op == Op::SegmentMatmulK) {
    // parseManifest admits rank 2 only, and only these tensors: dy [T, N]
    // or x [T, K], columns innermost, then the token rows, the kernel's K;
    // transposed dy [N, T] or x [K, T], the token rows innermost; or their
    // scales, MN-major [rows, token blocks] as the forward ops' x_scale.
    const bool scales = param.tensor == TensorRole::DyScale ||
                        param.tensor == TensorRole::XScale;
    if (scales) {
      mnMajorScaleMap(tensor.shape[0], ceilDiv(shape.numRows, kScaleBlock),
                      tensor.strides[1], dims, strides);
    } else if (manifest.problem.transposed) {
      dims[0] = shape.numRows;
      dims[1] = tensor.shape[0];
      strides[1] = tensor.strides[0];
    } else {
      dims[0] = tensor.shape[1];
      dims[1] = shape.numRows;
      strides[1] = tensor.strides[0];
    }
    if (shape.numRows == 0) {
      // No token rows, but dw must still be written. TMA cannot encode an
      // extent of 0 and an empty tensor's pointer may be null: describe one
      // row (one token, one block of scales) at an aligned device address
      // the kernel never reads (every segment is clamped to [0, 0)).
      const TensorArg &dw = args.get(TensorRole::Dw);
      if (scales || !manifest.problem.transposed) {
        dims[1] = 1;
        strides[1] = dims[0];
      } else {
        dims[0] = 1;
        strides[1] = 16 / elementSize;
      }
      if (!tensor.data || reinterpret_cast<uintptr_t>(tensor.data) % 16 != 0)
        address = dw.data;
      if (!address || reinterpret_cast<uintptr_t>(address) % 16 != 0)
        return unsupported(
            context() + ": " + tensor.name +
            " has no token rows (T = 0), so its descriptor is encoded over "
            "one token row of a 16-byte aligned device address that the "
            "kernel does not read, but neither its data pointer " +
            pointerText(tensor.data) + " nor dw's " + pointerText(dw.data) +
            " is 16-byte aligned");
    }
  } else if (param.tensor == TensorRole::XScale) {
    // MN-major [rows of all groups, k blocks] (parseManifest admits only
    // "1x128" scales and rank 2; bindArguments checked the layout).
    mnMajorScaleMap(shape.xRows, ceilDiv(shape.k, kScaleBlock),
                    tensor.strides[tensor.rank - 1], dims, strides);
  } else if (param.tensor == TensorRole::W) {
    bool nk = manifest.problem.weightLayout == WeightLayout::NK;
    // A swiglu weight's 2N rows: the gate half, then the up half.
    int64_t weightRows = manifest.problem.activation == Activation::Swiglu
                             ? 2 * shape.n
                             : shape.n;
    dims[0] = nk ? shape.k : weightRows;
    dims[1] = nk ? weightRows : shape.k;
    dims[2] = shape.numWeights;
    strides[1] = tensor.strides[1];
    strides[2] = tensor.strides[0];
  } else {
    int64_t columns = param.tensor == TensorRole::X ? shape.k : shape.n;
    int64_t rowStride = tensor.strides[tensor.rank - 2];
    dims[0] = columns;
    strides[1] = rowStride;
    if (rank == 2) {
      // With gather (scatter) x (y) has rows of its own.
      dims[1] = param.tensor == TensorRole::X ? shape.xRows : shape.yRows;
    } else {
      dims[1] = shape.rowsPerGroup;
      dims[2] = shape.numGroups;
      strides[2] = tensor.strides[0];
    }
  }

  result.rank = static_cast<uint32_t>(rank);
  result.globalAddress = address;
  if (reinterpret_cast<uintptr_t>(address) % 16 != 0)
    return invalidArgument(context() + ": global address " +
                           pointerText(address) + " is not 16-byte aligned");
  for (int d = 0; d < rank; ++d) {
    if (dims[d] < 1 || dims[d] > (int64_t(1) << 32))
      return invalidArgument(context() + ": dimension " + std::to_string(d) +
                             " (innermost first) has extent " +
                             std::to_string(dims[d]) + ", TMA needs [1, 2^32]");
    result.globalDim[d] = static_cast<uint64_t>(dims[d]);
    result.boxDim[d] = param.box[d];
    result.elementStrides[d] = 1;
  }
  for (int d = 1; d < rank; ++d) {
    uint64_t bytes = static_cast<uint64_t>(strides[d] * elementSize);
    // The stride of an extent-1 dimension is never stepped; TMA still
    // requires it to be a positive multiple of 16.
    if (dims[d] == 1)
      bytes = std::max<uint64_t>(16, roundUp16(bytes));
    if (bytes % 16 != 0 || bytes >= (uint64_t(1) << 40))
      return invalidArgument(context() + ": byte stride of dimension " +
                             std::to_string(d) + " (innermost first) is " +
                             std::to_string(bytes) +
                             ", TMA needs a multiple of 16 below 2^40");
    result.globalStrides[d - 1] = bytes;
  }

  switch (param.swizzle) {
  case Swizzle::None:
    result.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    break;
  case Swizzle::Bytes32:
    result.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
    break;
  case Swizzle::Bytes64:
    result.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
    break;
  case Swizzle::Bytes128:
    result.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    break;
  }
  result.interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  result.l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  // FILL_NONE fills out-of-bounds elements with zeros.
  result.oobFill = param.oobFill == OobFill::Nan
                       ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                       : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  return Status::success();
}

size_t paramSize(const ParamSpec &param) {
  switch (param.kind) {
  case ParamKind::TmaDescriptor:
    return sizeof(CUtensorMap);
  case ParamKind::Pointer:
    return sizeof(void *);
  case ParamKind::Scalar:
    return param.dtype == GGEMM_DTYPE_I32 ? 4 : 8;
  }
  return 0;
}

Status planLaunch(const Manifest &manifest, const ggemm_tensor *tensors,
                  int numTensors, LaunchPlan &plan) {
  plan.params.clear();
  if (Status status = bindArguments(manifest, tensors, numTensors, plan.args);
      !status.ok())
    return status;
  if (plan.args.shape.numTiles == 0)
    return Status::success();
  plan.params.resize(manifest.params.size());
  for (size_t i = 0; i < manifest.params.size(); ++i) {
    const ParamSpec &param = manifest.params[i];
    ParamValue &value = plan.params[i];
    switch (param.kind) {
    case ParamKind::TmaDescriptor:
      if (Status status =
              computeTensorMapArgs(manifest, param, plan.args, value.tensorMap);
          !status.ok())
        return status;
      break;
    case ParamKind::Pointer: {
      const TensorArg &tensor = plan.args.get(param.tensor);
      if (!tensor.present && !param.optional)
        return invalidArgument(
            "missing tensor '" + std::string(tensorRoleName(param.tensor)) +
            "' (parameter '" + param.name + "' is not optional)");
      value.pointer =
          tensor.present
              ? static_cast<uint64_t>(reinterpret_cast<uintptr_t>(tensor.data))
              : 0;
      break;
    }
    case ParamKind::Scalar:
      value.scalar = scalarValue(param, plan.args.shape);
      if (param.dtype == GGEMM_DTYPE_I32 &&
          (value.scalar < std::numeric_limits<int32_t>::min() ||
           value.scalar > std::numeric_limits<int32_t>::max()))
        return unsupported("scalar parameter '" + param.name + "' is " +
                           std::to_string(value.scalar) +
                           ", which does not fit its dtype i32");
      break;
    }
  }
  return Status::success();
}

} // namespace ggemm::runtime
