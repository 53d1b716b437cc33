//===- TileSchedule.cpp - tile id -> (group, row, col) mapping ------------===//

#include "ggemm/Dialect/GGemm/Transforms/TileSchedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::ggemm;

static Value cst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

static Value ceilDiv(OpBuilder &b, Location loc, Value a, int64_t d) {
  // (a + d - 1) / d for non-negative a.
  Value sum = arith::AddIOp::create(b, loc, a, cst(b, loc, d - 1));
  return arith::DivUIOp::create(b, loc, sum, cst(b, loc, d));
}

std::pair<Value, Value> TileSchedule::groupRows(OpBuilder &b, Location loc,
                                                Value group) const {
  switch (rowMapping) {
  case RowMapping::segment: {
    Value begin = loadGroupRow(b, loc, group);
    Value next = arith::AddIOp::create(b, loc, group, cst(b, loc, 1));
    Value end = loadGroupRow(b, loc, next);
    // A decreasing seg_indptr is invalid input: clamp to an empty segment
    // rather than walk a negative row count.
    Value len = arith::SubIOp::create(b, loc, end, begin);
    Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, len,
                                      cst(b, loc, 0));
    len = arith::SelectOp::create(b, loc, neg, cst(b, loc, 0), len);
    return {begin, len};
  }
  case RowMapping::masked: {
    Value begin = arith::MulIOp::create(b, loc, group, rowsPerGroup);
    Value count = loadGroupRow(b, loc, group);
    // Counts are clamped to [0, rows_per_group].
    count = arith::MaxSIOp::create(b, loc, count, cst(b, loc, 0));
    count = arith::MinSIOp::create(b, loc, count, rowsPerGroup);
    return {begin, count};
  }
  case RowMapping::uniform:
    return {arith::MulIOp::create(b, loc, group, rowsPerGroup), rowsPerGroup};
  }
  llvm_unreachable("unknown row mapping");
}

Value TileSchedule::numColTiles(OpBuilder &b, Location loc) const {
  return ceilDiv(b, loc, numCols, blockN);
}

Value TileSchedule::groupTiles(OpBuilder &b, Location loc, Value group) const {
  Value len = groupRows(b, loc, group).second;
  return arith::MulIOp::create(b, loc, ceilDiv(b, loc, len, blockM),
                               numColTiles(b, loc));
}

Value TileSchedule::totalTiles(OpBuilder &b, Location loc) const {
  if (rowMapping == RowMapping::uniform)
    return arith::MulIOp::create(b, loc, numGroups,
                                 groupTiles(b, loc, cst(b, loc, 0)));
  auto loop = scf::ForOp::create(b, loc, cst(b, loc, 0), numGroups,
                                 cst(b, loc, 1), ValueRange{cst(b, loc, 0)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value sum = arith::AddIOp::create(b, loc, loop.getRegionIterArg(0),
                                    groupTiles(b, loc, loop.getInductionVar()));
  scf::YieldOp::create(b, loc, sum);
  return loop.getResult(0);
}

Value TileSchedule::tileBound(OpBuilder &b, Location loc, Value numRows) const {
  Value rowTiles;
  if (rowMapping == RowMapping::segment)
    // A segment's last row tile may be partial: at most one extra per group.
    rowTiles = arith::AddIOp::create(b, loc, ceilDiv(b, loc, numRows, blockM),
                                     numGroups);
  else
    rowTiles = arith::MulIOp::create(b, loc, numGroups,
                                     ceilDiv(b, loc, rowsPerGroup, blockM));
  return arith::MulIOp::create(b, loc, rowTiles, numColTiles(b, loc));
}

TileSchedule::Tile TileSchedule::mapTile(OpBuilder &b, Location loc,
                                         Value tileId) const {
  Value group, local;
  if (rowMapping == RowMapping::uniform) {
    Value perGroup = groupTiles(b, loc, cst(b, loc, 0));
    group = arith::DivUIOp::create(b, loc, tileId, perGroup);
    local = arith::RemUIOp::create(b, loc, tileId, perGroup);
  } else {
    // Walk the groups, accumulating their tile counts, until the group that
    // holds `tileId`. Every thread of a CTA runs the same walk (the reads of
    // group_rows are uniform and cached), so no shared state is needed.
    // iter_args: (group found so far, its first tile id, running count).
    Value zero = cst(b, loc, 0);
    auto loop = scf::ForOp::create(b, loc, zero, numGroups, cst(b, loc, 1),
                                   ValueRange{zero, zero, zero});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value g = loop.getInductionVar();
      Value foundGroup = loop.getRegionIterArg(0);
      Value foundStart = loop.getRegionIterArg(1);
      Value running = loop.getRegionIterArg(2);
      Value next =
          arith::AddIOp::create(b, loc, running, groupTiles(b, loc, g));
      // The group holds the tile iff running <= tileId < next.
      Value geStart = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                            running, tileId);
      Value ltEnd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          tileId, next);
      Value hit = arith::AndIOp::create(b, loc, geStart, ltEnd);
      foundGroup = arith::SelectOp::create(b, loc, hit, g, foundGroup);
      foundStart = arith::SelectOp::create(b, loc, hit, running, foundStart);
      scf::YieldOp::create(b, loc, ValueRange{foundGroup, foundStart, next});
    }
    group = loop.getResult(0);
    local = arith::SubIOp::create(b, loc, tileId, loop.getResult(1));
  }
  auto [rowStart, rowCount] = groupRows(b, loc, group);
  Value colTiles = numColTiles(b, loc);
  Value mTile, nTile;
  if (raster == RasterOrder::along_n) {
    mTile = arith::DivUIOp::create(b, loc, local, colTiles);
    nTile = arith::RemUIOp::create(b, loc, local, colTiles);
  } else {
    Value rowTiles = ceilDiv(b, loc, rowCount, blockM);
    nTile = arith::DivUIOp::create(b, loc, local, rowTiles);
    mTile = arith::RemUIOp::create(b, loc, local, rowTiles);
  }
  Tile tile;
  tile.group = group;
  tile.rowBegin = arith::AddIOp::create(
      b, loc, rowStart,
      arith::MulIOp::create(b, loc, mTile, cst(b, loc, blockM)));
  tile.rowEnd = arith::AddIOp::create(b, loc, rowStart, rowCount);
  tile.colBegin = arith::MulIOp::create(b, loc, nTile, cst(b, loc, blockN));
  return tile;
}
