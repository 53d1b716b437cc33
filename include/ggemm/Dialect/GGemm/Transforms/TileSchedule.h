//===- TileSchedule.h - tile id -> (group, row, col) mapping ---*- C++ -*-===//
//
// The one place that turns a tile id into the tile a CTA computes. Both the
// GPU kernel (convert-ggemm-to-nvvm) and the CPU reference back end
// (convert-ggemm-to-loops) build their mapping with these functions, so the
// CPU tests check the very arithmetic the GPU runs.
//
//===----------------------------------------------------------------------===//
#ifndef GGEMM_DIALECT_GGEMM_TRANSFORMS_TILESCHEDULE_H
#define GGEMM_DIALECT_GGEMM_TRANSFORMS_TILESCHEDULE_H

#include "ggemm/Dialect/GGemm/IR/GGemm.h"
#include "mlir/IR/Builders.h"

#include <functional>

namespace mlir::ggemm {

/// Reads entry `index` (an index value) of a device array (the group rows,
/// the weight indices) and returns it as an index value. The GPU loads
/// through a global pointer, the CPU through a memref.
using GroupRowLoader = std::function<Value(OpBuilder &, Location, Value index)>;

/// What the mapping needs to know about a tile_schedule (or foreach_tile).
/// Device data is not trusted: segment rows are clamped to [0, numRows],
/// masked counts to [0, rowsPerGroup], and with weight indices a group
/// whose index is not below numWeights has no tiles.
struct TileSchedule {
  RowMapping rowMapping;
  int64_t blockM = 0;
  int64_t blockN = 0;
  /// CTAs of a cluster along M (tile_config's cluster_m): a scheduled tile
  /// is then clusterM x blockM rows, which the cluster's CTAs split.
  int64_t clusterM = 1;
  RasterOrder raster = RasterOrder::along_n;
  /// Tiles per raster band (tile_config's swizzle); 1: the plain raster.
  int64_t swizzle = 1;
  /// Groups with fewer tiles along the walk keep the plain raster
  /// (tile_config's swizzle_min_tiles; 0: none).
  int64_t swizzleMinTiles = 0;
  Value numGroups;    // index
  Value rowsPerGroup; // index (masked / uniform)
  Value numRows;      // index
  Value numCols;      // index
  GroupRowLoader loadGroupRow;
  /// Null without weight indices.
  GroupRowLoader loadWeightIndex;
  Value numWeights; // index, with loadWeightIndex

  /// First row and row count of group `group`.
  std::pair<Value, Value> groupRows(OpBuilder &b, Location loc,
                                    Value group) const;
  /// Number of column tiles.
  Value numColTiles(OpBuilder &b, Location loc) const;
  /// Number of tiles of group `group` (row tiles x column tiles).
  Value groupTiles(OpBuilder &b, Location loc, Value group) const;
  /// Total number of tiles over all groups.
  Value totalTiles(OpBuilder &b, Location loc) const;
  /// A bound on totalTiles that needs no read of group_rows, so a host can
  /// size a one-CTA-per-tile grid without a sync (the runtime's formula):
  /// `(ceil(num_rows / block_m) + num_groups) * col_tiles` for segments,
  /// `num_groups * ceil(rows_per_group / block_m) * col_tiles` otherwise.
  Value tileBound(OpBuilder &b, Location loc) const;

  /// Rows of one scheduled tile (a cluster's, with clusterM > 1).
  int64_t rowsPerTile() const { return blockM * clusterM; }

  /// The tile with id `tileId` (< totalTiles); with a `clusterRank` (an
  /// index below clusterM), that CTA's blockM rows of it, which may all
  /// lie at or past rowEnd.
  struct Tile {
    Value group, rowBegin, rowEnd, colBegin;
  };
  /// Where a thread's last mapTile stopped in its walk over the groups:
  /// slot 0 the group, slot 1 the group's first tile id, both 0 at first.
  /// The GPU keeps them in allocas that LLVM promotes to registers, the
  /// CPU in a memref.
  struct Cursor {
    std::function<Value(OpBuilder &, Location, unsigned slot)> load;
    std::function<void(OpBuilder &, Location, unsigned slot, Value)> store;
  };
  /// With a `cursor`, the walk starts at the cursor's group and leaves the
  /// cursor at the tile's group: a thread mapping increasing tile ids (a
  /// persistent CTA's grid-stride loop) walks each group once in all,
  /// instead of every group for every tile. A tile id before the cursor's
  /// group starts the walk from group 0 again, so the result never depends
  /// on the cursor. Without one, each walk starts at group 0 and stops at
  /// the tile's group.
  Tile mapTile(OpBuilder &b, Location loc, Value tileId,
               Value clusterRank = Value(),
               const Cursor *cursor = nullptr) const;
};

} // namespace mlir::ggemm

#endif // GGEMM_DIALECT_GGEMM_TRANSFORMS_TILESCHEDULE_H
