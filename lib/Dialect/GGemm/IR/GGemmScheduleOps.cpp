//===- GGemmScheduleOps.cpp - schedule-level ops --------------------------===//

#include "RegionParsing.h"
#include "VerifyUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::detail;

/// Registers of an SM's register file (64 K 32-bit registers on sm_90).
static constexpr int64_t kRegistersPerSm = 64 * 1024;

//===----------------------------------------------------------------------===//
// TileScheduleOp, LaunchOp, MapTileOp
//===----------------------------------------------------------------------===//

LogicalResult TileScheduleOp::verify() {
  return verifyTileHeader(*this, getRowMapping(), getGroupRows(),
                          getWeightIndices(), getNumWeights(), getConfig());
}

TileScheduleOp LaunchOp::getScheduleOp() {
  return getSchedule().getDefiningOp<TileScheduleOp>();
}

LogicalResult LaunchOp::verify() {
  if (!getScheduleOp())
    return emitOpError() << "expects its schedule to be the result of a "
                            "ggemm.tile_schedule";
  return success();
}

LogicalResult LaunchOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != 2 ||
      !llvm::all_of(body.getArgumentTypes(),
                    [](Type t) { return t.isIndex(); }))
    return emitOpError() << "expects the body to take 2 index arguments "
                            "(cta, num_ctas), got "
                         << body.getNumArguments() << " arguments";
  auto waits = body.getOps<WaitDependencyOp>();
  int64_t numWaits = std::distance(waits.begin(), waits.end());
  if (getDependentLaunch() && numWaits != 1)
    return emitOpError() << "expects one ggemm.wait_dependency in the body of "
                            "a dependent_launch, got "
                         << numWaits;
  if (numWaits == 0)
    return success();
  // Before the wait, nothing that touches memory another kernel may write:
  // the ring, L2 prefetches, and the arithmetic and loops around them.
  for (Operation &op : body) {
    if (isa<WaitDependencyOp>(op))
      break;
    WalkResult early =
        op.walk([&](Operation *inner) {
          if (isa<CreateRingOp, PrefetchTileOp, scf::IfOp, scf::ForOp,
                  scf::YieldOp>(inner) ||
              isPure(inner))
            return WalkResult::advance();
          inner->emitOpError()
              << "expects to come after the launch's ggemm.wait_dependency: "
                 "before it only the ring, ggemm.prefetch_tile and pure "
                 "arithmetic may run (the previous kernel may still be writing "
                 "memory)";
          return WalkResult::interrupt();
        });
    if (early.wasInterrupted())
      return failure();
  }
  return success();
}

LogicalResult WaitDependencyOp::verify() {
  if (!cast<LaunchOp>((*this)->getParentOp()).getDependentLaunch())
    return emitOpError() << "expects its ggemm.launch to be dependent_launch "
                            "(without it nothing runs before the previous "
                            "kernel has finished)";
  return success();
}

LogicalResult PrefetchTileOp::verify() {
  if (failed(verifyTileBox(*this, getSource().getType(), getIndices().size(),
                           cast<TileType>(getTile()))))
    return failure();
  if (!(*this)->getParentOfType<LaunchOp>())
    return emitOpError() << "expects to be in the body of a ggemm.launch";
  return success();
}

void LaunchOp::getAsmBlockArgumentNames(Region &region,
                                        OpAsmSetValueNameFn setNameFn) {
  if (region.empty() || region.front().getNumArguments() != 2)
    return;
  setNameFn(region.front().getArgument(0), "cta");
  setNameFn(region.front().getArgument(1), "num_ctas");
}

LogicalResult MapTileOp::verify() {
  auto schedule = getSchedule().getDefiningOp<TileScheduleOp>();
  if (!schedule)
    return success();
  int64_t clusterM = schedule.getConfig().getClusterM();
  if (clusterM > 1 && !getClusterRank())
    return emitOpError() << "expects a cluster_rank: the schedule's tiles are "
                            "shared by cluster_m = "
                         << clusterM << " CTAs";
  if (clusterM == 1 && getClusterRank())
    return emitOpError() << "expects no cluster_rank: the schedule's config "
                            "has cluster_m = 1";
  return success();
}

void MapTileOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getGroup(), "group");
  setNameFn(getRow(), "row");
  setNameFn(getRowEnd(), "row_end");
  setNameFn(getCol(), "col");
}

//===----------------------------------------------------------------------===//
// WarpSpecializeOp
//===----------------------------------------------------------------------===//

int64_t WarpSpecializeOp::launchRegisters(int64_t warpgroups) {
  // ptxas gives each thread the most registers that fit the SM's file in
  // the allocation's steps of 8 (at most 255, allocated as 256): 168 for
  // 384 threads, so 64512 of the 65536 for a CTA of three warpgroups.
  int64_t threads = 128 * warpgroups;
  return threads * std::min<int64_t>(256, kRegistersPerSm / threads / 8 * 8);
}

LogicalResult WarpSpecializeOp::verify() {
  for (auto [name, registers] :
       {std::pair<StringRef, int64_t>{"producer", getProducerRegisters()},
        {"consumer", getConsumerRegisters()}})
    if (registers % 8 != 0)
      return emitOpError() << "expects the " << name
                           << " registers to be a multiple of 8 (setmaxnreg), "
                              "got "
                           << registers;
  if (getPingpong() && getConsumerWarpgroups() != 2)
    return emitOpError() << "expects 2 consumer warpgroups with pingpong, got "
                         << getConsumerWarpgroups();
  int64_t total = 128 * (getProducerRegisters() +
                         getConsumerWarpgroups() * getConsumerRegisters());
  int64_t pool = launchRegisters(getConsumerWarpgroups() + 1);
  if (total > pool)
    return emitOpError() << "expects the roles' registers to fit the " << pool
                         << " a CTA of " << getConsumerWarpgroups() + 1
                         << " warpgroups is launched with: 128 x ("
                         << getProducerRegisters() << " + "
                         << getConsumerWarpgroups() << " x "
                         << getConsumerRegisters() << ") = " << total;
  return success();
}

/// Ops of ping-pong consumers: in the consumers region of a pingpong
/// ggemm.warp_specialize.
static LogicalResult verifyInPingpongConsumers(Operation *op) {
  auto roles = op->getParentOfType<WarpSpecializeOp>();
  if (!roles || !roles.getConsumers().isAncestor(op->getParentRegion()))
    return op->emitOpError() << "expects to be in the consumers region of a "
                                "ggemm.warp_specialize";
  if (!roles.getPingpong())
    return op->emitOpError() << "expects a pingpong ggemm.warp_specialize "
                                "(the cooperative consumers share every tile)";
  return success();
}

LogicalResult ConsumerWarpgroupOp::verify() {
  return verifyInPingpongConsumers(*this);
}
LogicalResult TurnWaitOp::verify() { return verifyInPingpongConsumers(*this); }
LogicalResult TurnPassOp::verify() { return verifyInPingpongConsumers(*this); }

LogicalResult WarpSpecializeOp::verifyRegions() {
  for (Region *region : {&getProducer(), &getConsumers()})
    if (region->front().getNumArguments() != 0)
      return emitOpError() << "expects role regions without arguments";
  return success();
}

//===----------------------------------------------------------------------===//
// Ring ops
//===----------------------------------------------------------------------===//

LogicalResult CreateRingOp::verify() {
  if (std::optional<ArrayRef<int64_t>> entries = getMulticast()) {
    int64_t clusterM =
        getParentOp<LaunchOp>().getScheduleOp().getConfig().getClusterM();
    if (clusterM == 1)
      return emitOpError() << "expects no multicast entries in a launch "
                              "without clusters (cluster_m = 1)";
    ArrayRef<Type> tiles = getRing().getType().getTiles();
    llvm::SmallDenseSet<int64_t> seen;
    for (int64_t entry : *entries) {
      if (entry < 0 || entry >= int64_t(tiles.size()) ||
          !isa<TileType>(tiles[entry]) || !seen.insert(entry).second)
        return emitOpError() << "expects multicast entries to be distinct "
                                "tile entries of the ring (0 to "
                             << tiles.size() - 1 << "), got " << entry;
      auto tile = cast<TileType>(tiles[entry]);
      // Each CTA's slice starts a 1024-byte swizzle atom (8 rows of 128
      // bytes) in the slot.
      if (tile.getRows() % (8 * clusterM) != 0)
        return emitOpError() << "expects multicast tile " << entry << " ("
                             << tile << ") to split into " << clusterM
                             << " row slices of a multiple of 8 rows (whole "
                                "1024-byte swizzle atoms)";
    }
  }
  RingLayoutAttr layout = getLayoutAttr();
  if (!layout)
    return success();
  ArrayRef<Type> tiles = getRing().getType().getTiles();
  if (layout.getOffsets().size() != tiles.size())
    return emitOpError() << "expects a layout with one buffer per tile type ("
                         << tiles.size() << "), got "
                         << layout.getOffsets().size();
  for (auto [index, tile, bytes] :
       llvm::enumerate(tiles, layout.getStageBytes())) {
    int64_t needed = getRingSlotBytes(tile);
    if (bytes < needed)
      return emitOpError() << "expects stage slots of at least " << needed
                           << " bytes for tile " << index << " (" << tile
                           << "), got " << bytes;
    int64_t offset = layout.getOffsets()[index];
    if (isa<TileType>(tile) && (bytes % 1024 != 0 || offset % 1024 != 0))
      return emitOpError() << "expects 1024-byte aligned stage slots for tile "
                           << index << " (" << tile
                           << ", 128-byte swizzle), got " << bytes
                           << " bytes at offset " << offset;
  }
  return success();
}

/// Checks that `types` are the tile types of `ring`.
static LogicalResult verifyRingTiles(Operation *op, RingType ring,
                                     TypeRange types, StringRef what) {
  if (TypeRange(ring.getTiles()) == types)
    return success();
  std::string expected, actual;
  llvm::raw_string_ostream e(expected), a(actual);
  llvm::interleaveComma(ring.getTiles(), e);
  llvm::interleaveComma(types, a);
  return op->emitOpError() << "expects " << what << " of the ring's types ("
                           << expected << "), got (" << actual << ")";
}

LogicalResult RingPutOp::verify() {
  return verifyRingTiles(*this, getRing().getType(), getTiles().getTypes(),
                         "tiles");
}

LogicalResult RingGetOp::verify() {
  if (failed(verifyRingTiles(*this, getRing().getType(), getTiles().getTypes(),
                             "results")))
    return failure();
  int64_t scales = llvm::count_if(getRing().getType().getTiles(),
                                  [](Type t) { return isa<ScalesType>(t); });
  if (int64_t(getScaleOffsets().size()) != scales)
    return emitOpError() << "expects one scale offset per !ggemm.scales entry "
                            "of the ring ("
                         << scales << "), got " << getScaleOffsets().size();
  return success();
}

//===----------------------------------------------------------------------===//
// ZeroKTailOp
//===----------------------------------------------------------------------===//

LogicalResult ZeroKTailOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands, DictionaryAttr,
    OpaqueProperties, RegionRange, SmallVectorImpl<Type> &inferredReturnTypes) {
  // The tiles, then `valid` (and `from`): the results are the tiles, masked.
  for (Value operand : operands)
    if (isa<TileType>(operand.getType()))
      inferredReturnTypes.push_back(operand.getType());
  return success(!inferredReturnTypes.empty());
}

LogicalResult ZeroKTailOp::verify() {
  if (getTiles().empty())
    return emitOpError() << "expects at least one tile";
  // One `valid` bounds them all: they must share the K block.
  int64_t blockK = cast<TileType>(getTiles()[0].getType()).getK();
  for (auto [index, tile] : llvm::enumerate(getTiles()))
    if (cast<TileType>(tile.getType()).getK() != blockK)
      return emitOpError() << "expects tiles of one K block (" << blockK
                           << "), got " << tile.getType() << " as tile "
                           << index;
  // `from` is the transposed (k_major) K-ragged program's: an mn_major
  // tile is masked at the segment's end only.
  if (getFrom())
    for (auto [index, tile] : llvm::enumerate(getTiles()))
      if (cast<TileType>(tile.getType()).isMNMajor())
        return emitOpError() << "expects k_major tiles with `from`, got "
                             << tile.getType() << " as tile " << index;
  for (auto [index, tile] : llvm::enumerate(getTiles()))
    if (!tile.getDefiningOp<RingGetOp>())
      return emitOpError()
             << "expects tile " << index
             << " to be a result of a ggemm.ring_get (it is "
                "zeroed in its ring slot), got "
             << (tile.getDefiningOp()
                     ? tile.getDefiningOp()->getName().getStringRef()
                     : StringRef("a block argument"));
  return success();
}

//===----------------------------------------------------------------------===//
// WarpSpecializeOp assembly
//===----------------------------------------------------------------------===//

/// Parses `( <integer> )` into an i64 attribute.
static ParseResult parseParenI64(OpAsmParser &parser, IntegerAttr &attr) {
  return failure(
      parser.parseLParen() ||
      parser.parseAttribute(attr, parser.getBuilder().getIntegerType(64)) ||
      parser.parseRParen());
}

/// `producer registers(N) {...} consumers(W) registers(N) {...} attr-dict`.
/// Everything after the producer region can still fail, so every failure
/// from there on drops the uses of the parsed regions' values first.
ParseResult WarpSpecializeOp::parse(OpAsmParser &parser,
                                    OperationState &result) {
  Properties &props = result.getOrAddProperties<Properties>();
  auto producer = std::make_unique<Region>();
  auto consumers = std::make_unique<Region>();
  if (parser.parseKeyword("producer") || parser.parseKeyword("registers") ||
      parseParenI64(parser, props.producer_registers) ||
      parseGuardedRegion(parser, *producer))
    return failure();
  SMLoc attrLoc;
  auto attrError = [&]() {
    return parser.emitError(attrLoc)
           << "'" << result.name.getStringRef() << "' op ";
  };
  if (parser.parseKeyword("consumers") ||
      parseParenI64(parser, props.consumer_warpgroups) ||
      (succeeded(parser.parseOptionalKeyword("pingpong")) &&
       (props.pingpong = parser.getBuilder().getUnitAttr(), false)) ||
      parser.parseKeyword("registers") ||
      parseParenI64(parser, props.consumer_registers) ||
      parseGuardedRegion(parser, *consumers) ||
      (attrLoc = parser.getCurrentLocation(),
       parser.parseOptionalAttrDict(result.attributes)) ||
      failed(verifyInherentAttrs(result.name, result.attributes, attrError))) {
    dropUsesOfRegionValues(*producer);
    dropUsesOfRegionValues(*consumers);
    return failure();
  }
  result.addRegion(std::move(producer));
  result.addRegion(std::move(consumers));
  return success();
}

void WarpSpecializeOp::print(OpAsmPrinter &printer) {
  printer << " producer registers(" << getProducerRegisters() << ") ";
  printGuardedRegion(printer, *this, getProducer());
  printer << " consumers(" << getConsumerWarpgroups() << ")"
          << (getPingpong() ? " pingpong" : "") << " registers("
          << getConsumerRegisters() << ") ";
  printGuardedRegion(printer, *this, getConsumers());
  printer.printOptionalAttrDict(
      (*this)->getAttrs(),
      {getProducerRegistersAttrName(), getConsumerWarpgroupsAttrName(),
       getConsumerRegistersAttrName(), getPingpongAttrName()});
}

//===----------------------------------------------------------------------===//
// SplitKSumOp
//===----------------------------------------------------------------------===//

LogicalResult SplitKSumOp::verify() {
  auto launch = (*this)->getParentOfType<LaunchOp>();
  if (!launch)
    return emitOpError() << "expects to be in the body of a ggemm.launch";
  TileScheduleOp schedule = launch.getScheduleOp();
  if (!schedule)
    return success(); // LaunchOp's verifier says so
  int64_t splitK = schedule.getConfig().getSplitK();
  if (splitK < 2)
    return emitOpError() << "expects its launch's config to have split_k > 1 "
                            "(the CTAs whose partial sums it adds), got "
                            "split_k = "
                         << splitK;
  // Once ggemm-stage-ring has placed the buffer, it must hold the partials
  // and the two mbarriers (these elsewhere when it overlays the ring).
  AccumulatorType acc = getPartial().getType();
  int64_t slots = (splitK - 1) * acc.getShape()[0] * acc.getShape()[1] * 4;
  for (CreateRingOp ring : launch.getBody().front().getOps<CreateRingOp>()) {
    RingLayoutAttr layout = ring.getLayoutAttr();
    if (!layout)
      continue;
    bool overlay = layout.splitKOverlaysRing();
    int64_t needed = slots + (overlay ? 0 : 16);
    if (layout.getSplitKBytes() < needed)
      return emitOpError() << "expects the ring layout's split-K buffer to "
                              "hold "
                           << splitK - 1 << " partial accumulators (" << acc
                           << ")" << (overlay ? "" : " and two mbarriers")
                           << ", " << needed << " bytes, got split_k_bytes = "
                           << layout.getSplitKBytes();
    // Over the ring, the partials may only be written once no later tile
    // of the CTA needs the ring.
    if (overlay && !matchPattern(getMore(), m_Zero()))
      return emitOpError() << "expects `more` to be a constant false when "
                              "the split-K buffer overlays the stage ring "
                              "(split_k_barriers set): the ring is free only "
                              "after the CTA's last tile";
  }
  return success();
}
