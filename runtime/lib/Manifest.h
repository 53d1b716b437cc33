//===- Manifest.h - Kernel-bundle manifest (versions 1, 2) ------*- C++ -*-===//
//
// The manifest is the contract between the compiler, which writes it next to
// the PTX/cubin, and this runtime. docs/Runtime.md documents every field;
// parseManifest checks all of them so that a launch never has to.
//
//===----------------------------------------------------------------------===//

#ifndef GGEMM_RUNTIME_MANIFEST_H
#define GGEMM_RUNTIME_MANIFEST_H

#include "Status.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ggemm::runtime {

/// Version 1: one kernel. Version 2: several variants of one problem's
/// kernel and the rule that picks one per launch (docs/Runtime.md).
constexpr int kManifestVersion = 1;
constexpr int kMultiVariantManifestVersion = 2;
constexpr int kMaxVariants = 16;
constexpr int kMaxKernelParams = 64;
constexpr int kMaxTensorMapParams = 8;
constexpr int kMaxTensorMapRank = 5;

/// SegmentMatmulK is the K-ragged weight gradient (issue 12): per group g,
/// dw[g] = dy[s_g:s_(g+1)]^T x[s_g:s_(g+1)], the segments running over the
/// token rows, which are the reduction dimension (its FP8 form, DeepGEMM's
/// k_grouped_fp8_gemm_nt_contiguous, takes dy and x transposed, [N, T] and
/// [K, T], with 1x128 scales along the tokens). SortByExpert is MoE
/// routing, not a GEMM: one CTA sorts the (token, k) pairs of topk_ids by
/// expert into seg_indptr, row_indices and pair_indices. Quantize is not a
/// GEMM either: x (bf16/f16) to q (FP8) and its 1x128 or 128x128 scales,
/// in the layouts the FP8 GEMMs read.
enum class Op {
  SegmentMatmul,
  MaskedMatmul,
  BatchedMatmul,
  SegmentMatmulK,
  SortByExpert,
  Quantize
};

/// Tensors a caller passes by name. segment_matmul_k takes dy, x,
/// seg_indptr and dw, and for f8e4m3 dy and x their 1x128 scales along the
/// tokens, dy_scale and x_scale; sort_by_expert topk_ids, seg_indptr,
/// row_indices and pair_indices; quantize x, q and scale; the other ops x, w, y
/// and their index tensors, and y_scale (an f8e4m3 y's 1x128 scales, written by
/// the epilogue); segment_matmul also row_indices (gather-A) and
/// scatter_indices.
enum class TensorRole {
  X,
  W,
  Y,
  SegIndptr,
  MaskedM,
  WeightIndices,
  Bias,
  RowScale,
  XScale,
  WScale,
  Dy,
  Dw,
  RowIndices,
  ScatterIndices,
  TopkIds,
  PairIndices,
  Q,
  Scale,
  YScale,
  DyScale,
};
constexpr int kNumTensorRoles = 20;

enum class WeightLayout { NK, KN };
/// Single: one CTA (sort_by_expert's only policy, and only its).
enum class GridPolicy { Persistent, Tiles, Single };
enum class ParamKind { TmaDescriptor, Pointer, Scalar };
enum class Swizzle { None, Bytes32, Bytes64, Bytes128 };
enum class OobFill { Zero, Nan };

/// The epilogue's activation. Swiglu (segment_matmul only) reads a weight of
/// 2N rows, the gate and up halves, and writes N columns; the others are
/// elementwise and change no shape.
enum class Activation { None, Relu, Gelu, Silu, Swiglu };

/// How many elements of x or w share one f32 scale (fp8 block scaling,
/// DeepSeek-V3 style; s8 kernels take only PerRow and Tensor). None: the
/// kernel takes no scales.
enum class ScaleBlock {
  None,
  Block1x128,   // x: one scale per row and 128 columns of K
  Block128x128, // w: one scale per 128 x 128 block of (N, K)
  PerRow,       // x: one per row; w: one per column of N
  Tensor,       // x: one in all; w: one per weight matrix
};

/// Launch-time quantities a scalar parameter can carry.
enum class ScalarSource {
  Literal,
  NumRows,
  RowsPerGroup,
  NumGroups,
  NumWeights,
  M,
  N,
  K,
  Lda,
  Ldy,
  NumTiles,
  YRows,    // y.shape[0]; only with has_scatter_indices
  XRows,    // x.shape[0] (T, the gathered rows' source with has_row_indices)
  NumPairs, // sort_by_expert only: topk_ids.shape[0], P
  // quantize only: scale's element strides over (group, row block, k
  // block); the group stride is 0 for rank-2 x.
  ScaleStrideGroup,
  ScaleStrideRow,
  ScaleStrideCol,
  // An f8e4m3 y's (problem.y_scale_block): y_scale's element strides over
  // (row of all groups, 128-column block of y).
  YScaleStrideRow,
  YScaleStrideCol,
};

struct ParamSpec {
  std::string name;
  ParamKind kind = ParamKind::Pointer;
  // TmaDescriptor and Pointer.
  TensorRole tensor = TensorRole::X;
  // Pointer: the tensor may be absent (null is passed).
  bool optional = false;
  // TmaDescriptor: element type; Scalar: I32 or I64.
  ggemm_dtype dtype = GGEMM_DTYPE_I64;
  // TmaDescriptor.
  int rank = 0;
  std::array<uint32_t, kMaxTensorMapRank> box{};
  Swizzle swizzle = Swizzle::None;
  OobFill oobFill = OobFill::Zero;
  // Scalar.
  ScalarSource source = ScalarSource::Literal;
  int64_t literal = 0;
};

/// Static problem description; -1 marks a size taken from the tensors.
struct ProblemSpec {
  Op op = Op::SegmentMatmul;
  ggemm_dtype aDtype = GGEMM_DTYPE_BF16;
  ggemm_dtype bDtype = GGEMM_DTYPE_BF16;
  ggemm_dtype outDtype = GGEMM_DTYPE_BF16;
  ggemm_dtype indexDtype = GGEMM_DTYPE_I32;
  WeightLayout weightLayout = WeightLayout::NK;
  int64_t m = -1;
  int64_t n = -1;
  int64_t k = -1;
  int64_t numGroups = -1;
  int64_t numWeights = -1;
  bool hasWeightIndices = false;
  bool hasBias = false;
  bool hasRowScale = false;
  /// segment_matmul only. Gather-A: segment row r reads x row
  /// row_indices[r], so M is row_indices' length and x has any T rows.
  bool hasRowIndices = false;
  /// segment_matmul only. Row r of the result goes to y row
  /// scatter_indices[r], so y has any Y rows.
  bool hasScatterIndices = false;
  bool accumulate = false;
  /// Needs hasScatterIndices and accumulate; informational for the runtime.
  bool atomic = false;
  Activation activation = Activation::None;
  /// Swiglu only: w's gate and up rows interleaved in blocks of this many
  /// rows (2 * gate_up_block rows a block, gate then up; the kernel's
  /// block_n is one block); 0: side by side, gate rows [0, n) then up rows
  /// [n, 2n). The tensors' shapes are the same either way.
  int64_t gateUpBlock = 0;
  /// segment_matmul_k only: dy and x are given transposed, [N, T] and
  /// [K, T] (the token rows T innermost, K-major as wgmma's fp8 forms read
  /// them), not [T, N] and [T, K]. Required for f8e4m3 dy and x; an absent
  /// key reads as false.
  bool transposed = false;
  /// Both None or both set, and set only for an fp8 or s8 a_dtype (always
  /// for s8, and then PerRow or Tensor). segment_matmul_k: both Block1x128
  /// for f8e4m3 dy and x (dy_scale and x_scale, one scale per row and 128
  /// token rows), else both None.
  ScaleBlock xScaleBlock = ScaleBlock::None;
  ScaleBlock wScaleBlock = ScaleBlock::None;
  /// segment, masked and batched matmul: Block1x128 exactly when outDtype
  /// is f8e4m3 (the epilogue quantises y per row and 128 columns and writes
  /// y_scale), else None.
  ScaleBlock yScaleBlock = ScaleBlock::None;
  /// sort_by_expert only (its indexDtype is topk_ids' dtype): E, the
  /// segments of seg_indptr [E + 1], and the pairs per token.
  int64_t numExperts = 0;
  int64_t topk = 0;
  /// quantize only (aDtype is x's, outDtype q's, xScaleBlock 1x128 or
  /// 128x128): x's rank, 2 ([rows, k]) or 3 ([groups, rows, k]).
  int rank = 0;
};

struct Manifest {
  /// Where the manifest was read from ("<memory>" for parseManifest) and the
  /// directory bundle paths are relative to.
  std::string sourceName;
  std::string directory;

  std::string entry;
  /// Resolved paths; empty when the manifest does not name the file.
  std::string ptxPath;
  std::string cubinPath;
  std::string arch;
  int archMajor = 0;
  int archMinor = 0;
  /// "sm_90a": the binary runs only on exactly this compute capability.
  bool archSpecific = false;

  std::array<unsigned, 3> block{1, 1, 1};
  std::array<unsigned, 3> cluster{1, 1, 1};
  unsigned dynamicSmem = 0;
  /// Launched with programmatic stream serialization: the kernel waits for
  /// the previous grid of its stream itself (griddepcontrol.wait).
  bool dependentLaunch = false;

  ProblemSpec problem;
  int blockM = 0;
  int blockN = 0;
  int blockK = 0;
  int stages = 0;
  /// The CTAs of a split-K cluster that share each tile's K blocks
  /// (tile.split_k; 1: none): the grid takes split_k CTAs a tile.
  int splitK = 1;
  GridPolicy gridPolicy = GridPolicy::Persistent;
  int ctasPerSm = 1;
  /// quantize only: the scale blocks one CTA takes per step of its
  /// grid-stride loop (its "tiles" are ceil(blocks / unitsPerCta)).
  int unitsPerCta = 0;

  std::vector<ParamSpec> params;

  /// Whether any parameter passes `role` (as descriptor or pointer).
  bool usesTensor(TensorRole role) const;
};

/// A kernel bundle: the variants of one problem's kernel, each a complete
/// Manifest (same problem and arch), and the dispatch rule between them.
/// A version 1 manifest is a bundle of one variant.
struct Bundle {
  std::string sourceName;
  int version = kManifestVersion;
  std::vector<Manifest> variants;
  /// Rule "rows_per_group": variants[i] serves launches whose rows per group
  /// (dispatch.h) are at most bounds[i] (and more than bounds[i - 1]); the
  /// last variant serves the rest. variants.size() - 1 increasing positive
  /// integers.
  std::vector<int64_t> bounds;
};

/// Parses and checks manifest JSON of either version.
Status parseBundle(std::string_view text, const std::string &sourceName,
                   const std::string &directory, Bundle &bundle);

/// Reads `path` and parses it with its directory as the bundle directory.
Status loadBundleFile(const std::string &path, Bundle &bundle);

/// Parses and checks a manifest of one kernel (version 1). `sourceName`
/// prefixes error messages and `directory` resolves the relative "ptx"/"cubin"
/// paths.
Status parseManifest(std::string_view text, const std::string &sourceName,
                     const std::string &directory, Manifest &manifest);

/// Reads `path` and parses it with its directory as the bundle directory.
Status loadManifestFile(const std::string &path, Manifest &manifest);

const char *dtypeName(ggemm_dtype dtype);
/// Size in bytes of one element; 0 for values outside the enum.
int64_t dtypeSize(ggemm_dtype dtype);
bool isValidDtype(int dtype);
const char *tensorRoleName(TensorRole role);
/// The dtype a tensor has in `problem` (x: a_dtype, index tensors:
/// index_dtype, weight_indices, row_indices and scatter_indices: i32, bias,
/// row_scale and the scales (dy_scale included): f32; for sort_by_expert
/// topk_ids: index_dtype, its outputs: i32; for quantize x: a_dtype, q:
/// out_dtype).
ggemm_dtype expectedTensorDtype(const ProblemSpec &problem, TensorRole role);
/// Whether `op` takes `role` at all (seg_indptr, masked_m, row_indices,
/// scatter_indices, topk_ids, pair_indices and y_scale are op-specific;
/// segment_matmul_k takes dy_scale and x_scale, which only its f8e4m3 form
/// has).
bool tensorExistsForOp(TensorRole role, Op op);
const char *opName(Op op);
/// The manifest spelling ("1x128", "per_row"); "none" for ScaleBlock::None.
const char *scaleBlockName(ScaleBlock block);
const char *activationName(Activation activation);

} // namespace ggemm::runtime

#endif // GGEMM_RUNTIME_MANIFEST_H
