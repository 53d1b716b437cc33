//===- TileConfigHeuristics.h - tile config choice ------------*- C++ -*-===//
//
// Tile-shape, stage and warpgroup heuristics, kept apart from the pass that
// applies them (ggemm-select-config) so they can be tested and reused.
//
//===----------------------------------------------------------------------===//
#ifndef GGEMM_DIALECT_GGEMM_TRANSFORMS_TILECONFIGHEURISTICS_H
#define GGEMM_DIALECT_GGEMM_TRANSFORMS_TILECONFIGHEURISTICS_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace mlir::ggemm {

/// What the heuristics know about a problem. Unknown sizes are <= 0.
struct ProblemSummary {
  int64_t n = 0;               // output columns
  int64_t k = 0;               // reduction extent
  int64_t rowsPerGroup = 0;    // expected rows per group (0: unknown)
  int64_t maxRowsPerGroup = 0; // at most this many (masked Mmax, batched M)
  int64_t numGroups = 0;       // groups (0: unknown)
  int64_t elementBytes = 2;    // operand element width
  bool weightsNMajor = false;  // weight_layout = kn
  /// FP8 with block scales: each K block's product is promoted into the
  /// accumulator, so a consumer holds two f32 register sets, and each stage
  /// carries the block's scales.
  bool blockScaled = false;
  /// With `blockScaled`: the second operand's scales are one per column
  /// (the FP8 K-ragged product's 1x128 scales of x), a stage slot of
  /// block_n f32 rather than one weight scale.
  bool perColumnScales = false;
  /// INT8 operands: wgmma's s8 forms take N = 8, 16, 24 or a multiple of
  /// 16, so a swap-AB token tile above 24 rows is rounded to 16.
  bool integerOperands = false;
  /// An e4m3 y quantised per row and 128 columns in the epilogue: a tile's
  /// output columns are whole blocks of 128 (block_n, or block_n / 2 when
  /// gated), and never swap-AB (set `noSwapAB` too).
  bool fp8Output = false;
  /// A gated (swiglu) epilogue: a tile of block_n weight rows writes
  /// block_n / 2 columns of y.
  bool gated = false;
  /// The tile program has no swapped form (a gated epilogue, gathered or
  /// scattered rows): small groups get 64-row tiles instead of swap-AB.
  bool noSwapAB = false;
  /// A gated weight whose gate and up rows are interleaved in blocks of
  /// this many rows (`#ggemm.epilogue<gate_up_block = B>`; 0: side by
  /// side): each tile must be one block of gate and up rows, so block_n is
  /// 2B, never swap-AB.
  int64_t gateUpBlock = 0;
};

/// The chosen tile shape.
struct TileChoice {
  int64_t blockM, blockN, blockK, stages, consumerWarpgroups;
  /// Walk a group's tiles along m (consecutive tile ids share a weight
  /// tile) rather than along n.
  bool rasterAlongM = false;
  /// Swap-AB (ggemm-swap-ab): the weight tile fills wgmma's M (block_n rows,
  /// 64 per consumer warpgroup) and the tokens its N (block_m, a multiple
  /// of 8), for groups of few rows.
  bool swapAB = false;
  /// Bands of `swizzle` tiles across the raster, for groups of at least
  /// `swizzleMinTiles` tiles along it (tile_config's swizzle and
  /// swizzle_min_tiles; 1 and 0: the plain raster).
  int64_t swizzle = 1;
  int64_t swizzleMinTiles = 0;
  /// Two promoted K blocks per wgmma wait (tile_config's promote_pairs).
  bool promotePairs = false;
  /// CTAs of a cluster that split each tile's K blocks (tile_config's
  /// split_k; 1: none).
  int64_t splitK = 1;
};

/// The band of the 128x256 two-byte tiles walked along m, and the row
/// tiles a group needs for it (bench/NOTES.md v20).
constexpr int64_t kLargeGroupSwizzle = 4;
constexpr int64_t kLargeGroupSwizzleMinTiles = 48;

/// The band of the block-scaled 192x128 tiles walked along n (row tiles a
/// band), and the weight bytes of one group (N x K) from which they take it
/// (bench/NOTES.md v38).
constexpr int64_t kLargeWeightSwizzle = 4;
constexpr int64_t kLargeWeightSwizzleBytes = int64_t{32} << 20;

/// The most shared memory a split-K cluster's rank 0 gives its peers'
/// partial tiles (tile_config's split_k).
constexpr int64_t kMaxSplitKBytes = 32 * 1024;

/// The GPCs of the target (H100: 8, of 16-18 SMs), which a thread-block
/// cluster's CTAs never straddle.
constexpr int64_t kGpcs = 8;

/// Groups of at most this many expected rows get a swap-AB tile.
constexpr int64_t kSwapAbMaxRows = 64;

/// Picks block sizes (wave-quantisation aware over `numSMs`; swap-AB when
/// the groups are known to have at most kSwapAbMaxRows rows), then the
/// deepest ring that fits the 227 KB shared-memory budget (at most 6
/// stages, and no more stages than K blocks when K is known). With
/// `gateUpBlock` = B > 0 block_n is 2B and block_m is chosen as for any
/// program without swap-AB. Block-scaled 8-bit tiles of known rows and
/// groups, static N and K, that leave SMs idle split their K blocks over
/// a cluster (`splitK`, as many CTAs as the GPCs hold; bench/NOTES.md v35).
TileChoice chooseTileConfig(const ProblemSummary &problem, int64_t numSMs);

/// The tile config of a K-ragged product (`ggemm.segment_matmul_k`): the
/// output rows per group (`problem.rowsPerGroup`, a weight dimension, known
/// statically or not) and columns are fixed, K is each group's rows. Never
/// swap-AB (the K-ragged tile program is not swapped): groups of few output
/// rows get chooseTileConfig's choice for unknown, i.e. many, rows. The
/// stages do not depend on K, which is not known at compile time.
TileChoice chooseKRaggedTileConfig(ProblemSummary problem, int64_t numSMs);

/// The deepest ring of `choice`'s stages that fits the shared-memory budget
/// (at most 6, no more than the K blocks when K is known).
int64_t chooseStages(const ProblemSummary &problem, const TileChoice &choice);

/// One tile variant of a problem whose rows per group are known only at run
/// time. A bundle carries all variants; the host picks one per launch by the
/// rows per group it expects (docs/Bundle.md, "Variants").
struct TileVariant {
  TileChoice tile;
  /// The variant serves launches expecting at most this many rows per group
  /// (and more than the previous variant's bound); 0 for the last variant,
  /// which has no bound.
  int64_t maxRowsPerGroup = 0;
  /// The rows per group `tile` was chosen for: chooseTileConfig's
  /// rowsPerGroup at the largest of its buckets (0: unknown, i.e. many).
  int64_t representativeRows = 0;
};

/// The upper bounds of the row-per-group buckets chooseVariants considers;
/// rows above the last bound form one more, unbounded bucket.
inline constexpr int64_t kVariantRowBounds[] = {16, 32, 64, 128, 256};

/// The same with a bucket of 1-8 rows, for block-scaled 8-bit products of
/// one group (a dense call: single-token decode gets 8-token swap-AB
/// tiles, bench/NOTES.md v26).
inline constexpr int64_t kDecodeVariantRowBounds[] = {8, 16, 32, 64, 128, 256};

/// The bucket bounds chooseVariants uses for `problem`.
llvm::ArrayRef<int64_t> variantRowBounds(const ProblemSummary &problem);

/// Whether two choices are the same kernel (every field equal).
bool sameTileChoice(const TileChoice &a, const TileChoice &b);

/// Tile variants for `problem` when its rows per group are unknown at
/// compile time (problem.rowsPerGroup is ignored). Each bucket of
/// variantRowBounds(problem) gets chooseTileConfig's choice for the bucket's
/// upper bound (the tile must serve the bucket's largest groups; the unbounded
/// bucket asks for unknown, i.e. many, rows); consecutive buckets with the
/// same choice merge into one variant. `maxRowsPerGroup` > 0 bounds the
/// rows (a masked op's Mmax): buckets above it are dropped and the last
/// one is chosen for it. Variants are ordered by their bounds, the last
/// unbounded; one variant means the rows do not change the choice.
std::vector<TileVariant> chooseVariants(const ProblemSummary &problem,
                                        int64_t numSMs,
                                        int64_t maxRowsPerGroup = 0);

/// Number of stages of `stageBytes` each (plus 16 bytes of mbarriers per
/// stage) that fit `budgetBytes`.
int64_t maxStagesThatFit(int64_t stageBytes, int64_t budgetBytes);

} // namespace mlir::ggemm

#endif // GGEMM_DIALECT_GGEMM_TRANSFORMS_TILECONFIGHEURISTICS_H
