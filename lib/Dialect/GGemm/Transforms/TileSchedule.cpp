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

/// Entry `index` of seg_indptr clamped into [0, num_rows]: seg_indptr is
/// device data, so a segment is [clamp(r[g]), max(clamp(r[g+1]), start)).
/// A decreasing seg_indptr gives empty segments and offsets past the rows
/// end there, so no tile reaches past y and the tile count stays bounded.
static Value clampedOffset(OpBuilder &b, Location loc, const TileSchedule &s,
                           Value index) {
  Value offset = s.loadGroupRow(b, loc, index);
  offset = arith::MaxSIOp::create(b, loc, offset, cst(b, loc, 0));
  return arith::MinSIOp::create(b, loc, offset, s.numRows);
}

/// The row count of a segment from its clamped start and the clamped offset
/// after it.
static Value segmentLength(OpBuilder &b, Location loc, Value start,
                           Value nextOffset) {
  Value end = arith::MaxSIOp::create(b, loc, nextOffset, start);
  return arith::SubIOp::create(b, loc, end, start);
}

std::pair<Value, Value> TileSchedule::groupRows(OpBuilder &b, Location loc,
                                                Value group) const {
  switch (rowMapping) {
  case RowMapping::segment: {
    Value begin = clampedOffset(b, loc, *this, group);
    Value next = arith::AddIOp::create(b, loc, group, cst(b, loc, 1));
    return {begin,
            segmentLength(b, loc, begin, clampedOffset(b, loc, *this, next))};
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

/// The tiles of group `group` with `rows` rows; none when its weight index
/// is outside [0, num_weights) (negative ones compare as huge), which would
/// read past w and bias.
static Value tilesOf(OpBuilder &b, Location loc, const TileSchedule &s,
                     Value group, Value rows) {
  Value tiles = arith::MulIOp::create(
      b, loc, ceilDiv(b, loc, rows, s.rowsPerTile()), s.numColTiles(b, loc));
  if (!s.loadWeightIndex)
    return tiles;
  Value weight = s.loadWeightIndex(b, loc, group);
  Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, weight,
                                      s.numWeights);
  return arith::SelectOp::create(b, loc, valid, tiles, cst(b, loc, 0));
}

Value TileSchedule::groupTiles(OpBuilder &b, Location loc, Value group) const {
  return tilesOf(b, loc, *this, group, groupRows(b, loc, group).second);
}

/// Whether every group has the same tiles, so no walk is needed.
static bool isUniform(const TileSchedule &s) {
  return s.rowMapping == RowMapping::uniform && !s.loadWeightIndex;
}

/// One step of the walk over the groups that totalTiles and mapTile share:
/// the tiles of group `g`. Segments carry the clamped start of the group
/// from step to step, so each step reads seg_indptr once.
static std::pair<Value, Value> walkStep(OpBuilder &b, Location loc,
                                        const TileSchedule &s, Value g,
                                        Value start) {
  if (s.rowMapping != RowMapping::segment)
    return {s.groupTiles(b, loc, g), start};
  Value next = arith::AddIOp::create(b, loc, g, cst(b, loc, 1));
  Value nextStart = clampedOffset(b, loc, s, next);
  Value rows = segmentLength(b, loc, start, nextStart);
  return {tilesOf(b, loc, s, g, rows), nextStart};
}

/// The carried value of the first step of the walk.
static Value walkStart(OpBuilder &b, Location loc, const TileSchedule &s) {
  if (s.rowMapping != RowMapping::segment)
    return cst(b, loc, 0);
  return clampedOffset(b, loc, s, cst(b, loc, 0));
}

Value TileSchedule::totalTiles(OpBuilder &b, Location loc) const {
  if (isUniform(*this))
    return arith::MulIOp::create(b, loc, numGroups,
                                 groupTiles(b, loc, cst(b, loc, 0)));
  Value zero = cst(b, loc, 0);
  // iter_args: (running count, carried start).
  auto loop = scf::ForOp::create(b, loc, zero, numGroups, cst(b, loc, 1),
                                 ValueRange{zero, walkStart(b, loc, *this)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  auto [tiles, nextStart] =
      walkStep(b, loc, *this, loop.getInductionVar(), loop.getRegionIterArg(1));
  Value sum = arith::AddIOp::create(b, loc, loop.getRegionIterArg(0), tiles);
  scf::YieldOp::create(b, loc, ValueRange{sum, nextStart});
  return loop.getResult(0);
}

Value TileSchedule::tileBound(OpBuilder &b, Location loc) const {
  Value rowTiles;
  if (rowMapping == RowMapping::segment)
    // A segment's last row tile may be partial: at most one extra per group.
    rowTiles = arith::AddIOp::create(
        b, loc, ceilDiv(b, loc, numRows, rowsPerTile()), numGroups);
  else
    rowTiles = arith::MulIOp::create(
        b, loc, numGroups, ceilDiv(b, loc, rowsPerGroup, rowsPerTile()));
  return arith::MulIOp::create(b, loc, rowTiles, numColTiles(b, loc));
}

/// The walk of mapTile from a cursor: from the cursor's group (from group
/// 0 when `tileId` lies before it), on while `tileId` lies past the group's
/// tiles and a group follows. Returns the group and its first tile id, and
/// leaves the cursor there.
static std::pair<Value, Value> walkFrom(OpBuilder &b, Location loc,
                                        const TileSchedule &s, Value tileId,
                                        const TileSchedule::Cursor &cursor) {
  Value zero = cst(b, loc, 0), one = cst(b, loc, 1);
  Value group = cursor.load(b, loc, 0), first = cursor.load(b, loc, 1);
  Value behind =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tileId, first);
  group = arith::SelectOp::create(b, loc, behind, zero, group);
  first = arith::SelectOp::create(b, loc, behind, zero, first);
  Value start = s.rowMapping == RowMapping::segment
                    ? clampedOffset(b, loc, s, group)
                    : zero;
  Type index = b.getIndexType();
  // (group, its first tile, its carried start); the before region also
  // forwards the group's end and the next group's start.
  auto loop =
      scf::WhileOp::create(b, loc, TypeRange{index, index, index, index},
                           ValueRange{group, first, start});
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before = b.createBlock(&loop.getBefore(), {}, {index, index, index},
                                  {loc, loc, loc});
    Value g = before->getArgument(0), gFirst = before->getArgument(1);
    auto [tiles, nextStart] = walkStep(b, loc, s, g, before->getArgument(2));
    Value end = arith::AddIOp::create(b, loc, gFirst, tiles);
    Value past =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, tileId, end);
    Value next = arith::AddIOp::create(b, loc, g, one);
    Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, next,
                                       s.numGroups);
    scf::ConditionOp::create(b, loc, arith::AndIOp::create(b, loc, past, more),
                             ValueRange{g, gFirst, nextStart, end});
    Block *after =
        b.createBlock(&loop.getAfter(), {}, {index, index, index, index},
                      {loc, loc, loc, loc});
    scf::YieldOp::create(
        b, loc,
        ValueRange{arith::AddIOp::create(b, loc, after->getArgument(0), one),
                   after->getArgument(3), after->getArgument(2)});
  }
  // The while's results are the before region's forwarded values of its
  // last round: (group, first tile, next start, end).
  cursor.store(b, loc, 0, loop.getResult(0));
  cursor.store(b, loc, 1, loop.getResult(1));
  return {loop.getResult(0), loop.getResult(1)};
}

TileSchedule::Tile TileSchedule::mapTile(OpBuilder &b, Location loc,
                                         Value tileId, Value clusterRank,
                                         const Cursor *cursor) const {
  Value group, local;
  if (isUniform(*this)) {
    Value perGroup = groupTiles(b, loc, cst(b, loc, 0));
    group = arith::DivUIOp::create(b, loc, tileId, perGroup);
    local = arith::RemUIOp::create(b, loc, tileId, perGroup);
  } else {
    // Without a cursor, every walk starts at group 0.
    TileSchedule::Cursor fromZero;
    fromZero.load = [](OpBuilder &b, Location loc, unsigned) {
      return cst(b, loc, 0);
    };
    fromZero.store = [](OpBuilder &, Location, unsigned, Value) {};
    auto [found, first] =
        walkFrom(b, loc, *this, tileId, cursor ? *cursor : fromZero);
    group = found;
    local = arith::SubIOp::create(b, loc, tileId, first);
  }
  auto [rowStart, rowCount] = groupRows(b, loc, group);
  Value colTiles = numColTiles(b, loc);
  Value rowTiles = ceilDiv(b, loc, rowCount, rowsPerTile());
  // The tile ids walk along `walkTiles` tiles (the row tiles along m, the
  // column tiles along n) of one `across` tile after another.
  bool alongM = raster == RasterOrder::along_m;
  Value walkTiles = alongM ? rowTiles : colTiles;
  Value acrossTiles = alongM ? colTiles : rowTiles;
  // The plain raster: one across tile after another.
  auto plain = [&](OpBuilder &b) -> std::pair<Value, Value> {
    Value across = arith::DivUIOp::create(b, loc, local, walkTiles);
    return {arith::RemUIOp::create(b, loc, local, walkTiles), across};
  };
  // Bands of `swizzle` across tiles: a band holds walkTiles x width ids
  // and steps across its width first; the last band's width is what is
  // left of the across tiles.
  auto banded = [&](OpBuilder &b) -> std::pair<Value, Value> {
    Value width = cst(b, loc, swizzle);
    Value bandIds = arith::MulIOp::create(b, loc, walkTiles, width);
    Value band = arith::DivUIOp::create(b, loc, local, bandIds);
    Value inBand = arith::RemUIOp::create(b, loc, local, bandIds);
    Value bandStart = arith::MulIOp::create(b, loc, band, width);
    Value bandWidth = arith::MinUIOp::create(
        b, loc, width, arith::SubIOp::create(b, loc, acrossTiles, bandStart));
    Value walk = arith::DivUIOp::create(b, loc, inBand, bandWidth);
    return {walk, arith::AddIOp::create(
                      b, loc, bandStart,
                      arith::RemUIOp::create(b, loc, inBand, bandWidth))};
  };
  Value walk, across;
  if (swizzle == 1)
    std::tie(walk, across) = plain(b);
  else if (swizzleMinTiles == 0)
    std::tie(walk, across) = banded(b);
  else {
    // A group with fewer than swizzleMinTiles walk tiles keeps the plain
    // raster, by a branch: its tiles run the plain walk's arithmetic.
    Value big = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                      walkTiles, cst(b, loc, swizzleMinTiles));
    Type index = b.getIndexType();
    auto choice = scf::IfOp::create(b, loc, TypeRange{index, index}, big,
                                    /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(choice.thenBlock());
    auto [bandWalk, bandAcross] = banded(b);
    scf::YieldOp::create(b, loc, ValueRange{bandWalk, bandAcross});
    b.setInsertionPointToStart(choice.elseBlock());
    auto [plainWalk, plainAcross] = plain(b);
    scf::YieldOp::create(b, loc, ValueRange{plainWalk, plainAcross});
    walk = choice.getResult(0);
    across = choice.getResult(1);
  }
  Value mTile = alongM ? walk : across;
  Value nTile = alongM ? across : walk;
  Tile tile;
  tile.group = group;
  tile.rowBegin = arith::AddIOp::create(
      b, loc, rowStart,
      arith::MulIOp::create(b, loc, mTile, cst(b, loc, rowsPerTile())));
  // A cluster's CTAs split its tile's rows, block_m each, in rank order.
  if (clusterRank)
    tile.rowBegin = arith::AddIOp::create(
        b, loc, tile.rowBegin,
        arith::MulIOp::create(b, loc, clusterRank, cst(b, loc, blockM)));
  tile.rowEnd = arith::AddIOp::create(b, loc, rowStart, rowCount);
  tile.colBegin = arith::MulIOp::create(b, loc, nTile, cst(b, loc, blockN));
  return tile;
}
