//===- LaunchPlan.h - Driver-free launch preparation ------------*- C++ -*-===//
//
// Everything a launch decides before it needs the CUDA driver: binding the
// caller's tensors to the manifest's roles, checking dtypes, shapes, strides
// and alignment, deriving the problem sizes and scalar values, sizing the
// grid, and computing the cuTensorMapEncodeTiled arguments. All functions are
// pure, so they are unit-tested on machines without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef GGEMM_RUNTIME_LAUNCHPLAN_H
#define GGEMM_RUNTIME_LAUNCHPLAN_H

#include "Manifest.h"

#include <cuda.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ggemm::runtime {

/// A caller's tensor after binding. Strides of extent-1 dimensions, which
/// never step, are replaced by canonical values so that the layout checks
/// accept what PyTorch produces for them (e.g. [1, K] views).
struct TensorArg {
  bool present = false;
  /// Some extent is 0: strides are meaningless and layouts are not checked.
  bool empty = false;
  const char *name = "";
  void *data = nullptr;
  ggemm_dtype dtype = GGEMM_DTYPE_F32;
  int rank = 0;
  std::array<int64_t, GGEMM_MAX_RANK> shape{};
  std::array<int64_t, GGEMM_MAX_RANK> strides{};
};

/// Sizes derived from the tensors. segment_matmul_k's are those of the
/// kernel's view, dw as [G * R, C] = A^T B per group: numRows, m and k are
/// the token rows T (dy's and x's dimension 0, or 1 when they are given
/// transposed), rowsPerGroup R, n C, numWeights G, ldy dw's row stride
/// (docs/Runtime.md, "Tensors").
struct ProblemShape {
  int64_t numRows = 0;      // the segment rows M (masked/batched: G * Mmax)
  int64_t rowsPerGroup = 0; // 0 for segment_matmul
  int64_t numGroups = 0;    // sort_by_expert: E, the experts
  int64_t numWeights = 0;
  int64_t m = 0; // segment: total rows; masked/batched: rows per group
  /// Rows of the 2-D views of x and y: numRows, except x's T rows with
  /// row_indices (gather-A) and y's Y rows with scatter_indices.
  int64_t xRows = 0;
  int64_t yRows = 0;
  int64_t n = 0; // y's columns (swiglu: half of w's)
  int64_t k = 0;
  int64_t lda = 0;      // row stride of x, elements
  int64_t ldy = 0;      // row stride of y (segment_matmul_k: dw), elements
  int64_t numTiles = 0; // sort_by_expert: 1, its one CTA
  int64_t numPairs = 0; // sort_by_expert: P, topk_ids' length
  /// quantize: scale's element strides over (group, row block, k block),
  /// the group's 0 for rank 2.
  std::array<int64_t, 3> scaleStrides{};
  /// An f8e4m3 y's y_scale: element strides over (row of all groups,
  /// 128-column block); {0, 0} without it.
  std::array<int64_t, 2> yScaleStrides{};
};

struct BoundArgs {
  std::array<TensorArg, kNumTensorRoles> tensors;
  ProblemShape shape;

  const TensorArg &get(TensorRole role) const {
    return tensors[static_cast<int>(role)];
  }
};

/// The arguments of one cuTensorMapEncodeTiled call; dims innermost first.
struct TensorMapArgs {
  CUtensorMapDataType dataType = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  uint32_t rank = 0;
  void *globalAddress = nullptr;
  std::array<uint64_t, kMaxTensorMapRank> globalDim{};
  std::array<uint64_t, kMaxTensorMapRank - 1> globalStrides{}; // bytes
  std::array<uint32_t, kMaxTensorMapRank> boxDim{};
  std::array<uint32_t, kMaxTensorMapRank> elementStrides{};
  CUtensorMapInterleave interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapL2promotion l2Promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  CUtensorMapFloatOOBfill oobFill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  /// The kernel does not read this descriptor on this launch: it is passed
  /// as 128 zero bytes. Only y's descriptor (the staged epilogue's TMA
  /// stores) may be absent, when y's address or row stride is not 16-byte
  /// aligned; the kernel checks the same condition and then writes y with
  /// plain stores (docs/Bundle.md).
  bool absent = false;
};

/// Binds `tensors` by name and checks them against the manifest (dtype, rank,
/// shape, static sizes, strides, alignment, presence of required and absence
/// of unsupported tensors), then fills `args.shape`.
Status bindArguments(const Manifest &manifest, const ggemm_tensor *tensors,
                     int numTensors, BoundArgs &args);

/// Upper bound on the output tiles, as described in docs/Runtime.md:
/// ceil(n / block_n) * (ceil(m / block_m) + groups) for segment_matmul,
/// ceil(n / block_n) * groups * ceil(rows_per_group / block_m) otherwise
/// (segment_matmul_k: G * ceil(R / block_m) * ceil(C / block_n), whatever
/// the token rows).
int64_t computeTileBound(Op op, int64_t numRows, int64_t rowsPerGroup,
                         int64_t numGroups, int64_t n, int blockM, int blockN);

/// grid.x for `tileBound` tiles on a device of `smCount` multiprocessors
/// (ignored by the "tiles" and "single" policies). 0 when there are no
/// tiles; 1 for "single". The result is a multiple of the cluster's x
/// extent.
Status computeGrid(const Manifest &manifest, int64_t tileBound, int smCount,
                   unsigned &gridX);

/// The value of a scalar parameter.
int64_t scalarValue(const ParamSpec &param, const ProblemShape &shape);

/// The cuTensorMapEncodeTiled arguments for a tma_descriptor parameter,
/// checked against the TMA rules (alignment, strides, extents).
Status computeTensorMapArgs(const Manifest &manifest, const ParamSpec &param,
                            const BoundArgs &args, TensorMapArgs &result);

/// Bytes the kernel parameter occupies (128 for a CUtensorMap).
size_t paramSize(const ParamSpec &param);

/// One kernel parameter, ready for the driver.
struct ParamValue {
  TensorMapArgs tensorMap; // TmaDescriptor: still to be encoded
  uint64_t pointer = 0;    // Pointer: device address, 0 for absent tensors
  int64_t scalar = 0;      // Scalar: value, range-checked against its dtype
};

/// Everything a launch needs that the driver does not provide: the bound
/// tensors, the problem sizes and each parameter's value.
struct LaunchPlan {
  BoundArgs args;
  std::vector<ParamValue> params; // in manifest.params order
};

/// bindArguments followed by the per-parameter values. When
/// plan.args.shape.numTiles is 0 the launch is skipped and `params` is empty.
Status planLaunch(const Manifest &manifest, const ggemm_tensor *tensors,
                  int numTensors, LaunchPlan &plan);

} // namespace ggemm::runtime

#endif // GGEMM_RUNTIME_LAUNCHPLAN_H
