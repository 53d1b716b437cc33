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

/// Reads entry `index` (an index value) of the group-rows array and returns
/// it as an index value. The GPU loads through a global pointer, the CPU
/// through a memref.
using GroupRowLoader = std::function<Value(OpBuilder &, Location, Value index)>;

/// What the mapping needs to know about a foreach_tile.
struct TileSchedule {
  RowMapping rowMapping;
  int64_t blockM;
  int64_t blockN;
  RasterOrder raster;
  Value numGroups;    // index
  Value rowsPerGroup; // index (masked / uniform)
  Value numCols;      // index
  GroupRowLoader loadGroupRow;

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
  Value tileBound(OpBuilder &b, Location loc, Value numRows) const;

  /// The tile with id `tileId` (< totalTiles).
  struct Tile {
    Value group, rowBegin, rowEnd, colBegin;
  };
  Tile mapTile(OpBuilder &b, Location loc, Value tileId) const;
};

} // namespace mlir::ggemm

#endif // GGEMM_DIALECT_GGEMM_TRANSFORMS_TILESCHEDULE_H
