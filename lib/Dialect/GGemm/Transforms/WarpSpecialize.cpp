//===- WarpSpecialize.cpp - TMA producer and MMA consumer roles -----------===//
//
// Splits the tile loop of a ggemm.launch into two roles, as Triton's warp
// specialisation partitions a loop: the producer keeps the tile loads, the
// consumers the mma and the store, and a ring of stages carries the tiles
// from one to the other. Both roles walk the same tile ids and K blocks and
// count ring positions the same way, so they agree on every position
// without talking to each other except through the ring.
//
//===----------------------------------------------------------------------===//

#include "ggemm/Dialect/GGemm/Transforms/Passes.h"
#include "ggemm/Dialect/GGemm/Transforms/StageChecks.h"

#include "WarpRoles.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_GGEMMWARPSPECIALIZE
#include "ggemm/Dialect/GGemm/Transforms/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::warp_roles;

namespace {

/// Whether `v` is the same in every tile of `tileLoop`: defined outside it,
/// or computed inside by side-effect-free ops from such values (the K
/// loop's bound from memref.dim of x).
bool isTileInvariant(Value v, Operation *tileLoop, int depth = 0) {
  if (!tileLoop->isAncestor(v.getParentRegion()->getParentOp()))
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 8 || !isMemoryEffectFree(def) ||
      def->getNumRegions() != 0)
    return false;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return isTileInvariant(operand, tileLoop, depth + 1);
  });
}

struct WarpSpecializePass
    : public ggemm::impl::GGemmWarpSpecializeBase<WarpSpecializePass> {
  using Base::Base;

  LogicalResult checkOptions() {
    for (auto [name, registers] : {std::pair<StringRef, int64_t>{
                                       "producer-registers", producerRegisters},
                                   {"consumer-registers", consumerRegisters}})
      if (registers < 24 || registers > 256 || registers % 8 != 0)
        return getOperation().emitError()
               << getArgument() << ": expects " << name
               << " to be a multiple of 8 in [24, 256] (setmaxnreg), got "
               << registers;
    if (consumerWarpgroups < 0 || consumerWarpgroups > 3)
      return getOperation().emitError()
             << getArgument()
             << ": expects consumer-warpgroups in [0, 3] (0: the tile "
                "config's), got "
             << consumerWarpgroups.getValue();
    if (pendingMmas < 0 || pendingMmas > 1)
      return getOperation().emitError()
             << getArgument() << ": expects pending-mmas to be 0 or 1, got "
             << pendingMmas.getValue();
    return success();
  }

  LogicalResult specialize(LaunchOp launch) {
    FailureOr<TileProgram> program = matchTileProgram(launch);
    if (failed(program))
      return failure();
    // A promoted product is read right after its mma: nothing may still
    // be pending.
    int64_t pending = isa<PromoteOp>(program->update) ? 0 : pendingMmas;
    TileConfigAttr config = launch.getScheduleOp().getConfig();
    bool promotePairs = config.getPromotePairs();
    if (promotePairs && !isa<PromoteOp>(program->update))
      return launch.emitOpError()
             << "expects promote_pairs only with block-scaled operands (a "
                "ggemm.promote of each K block's product), got a tile program "
                "whose mma updates the accumulator itself";
    int64_t consumers = consumerWarpgroups ? consumerWarpgroups.getValue()
                                           : config.getConsumerWarpgroups();
    // The mma's `a` tile is what the consumers split into 64-row wgmma
    // blocks: the token tile (block_m), or the weight tile (block_n) once
    // ggemm-swap-ab has swapped the operands.
    bool swapped = config.getSwapAb();
    bool storesTransposed = false;
    launch.walk(
        [&](StoreTileOp store) { storesTransposed |= store.getTransposed(); });
    if (swapped != storesTransposed)
      return launch.emitOpError()
             << (swapped ? "expects the tile program of a swap_ab config to "
                           "be swapped (a transposed ggemm.store_tile): run "
                           "ggemm-swap-ab after ggemm-tile"
                         : "expects no transposed ggemm.store_tile without "
                           "swap_ab in the tile config");
    bool pingpong = config.getPingpong();
    if (pingpong) {
      if (consumers != 2)
        return launch.emitOpError()
               << "expects 2 consumer warpgroups for a pingpong config, got "
               << consumers << " (consumer-warpgroups option)";
      if (!isa<scf::ForOp>(program->tileLoop))
        return launch.emitOpError()
               << "expects a persistent tile loop for a pingpong config (its "
                  "warpgroups take alternate tiles of a CTA), got one CTA per "
                  "tile";
      // Each warpgroup skips the other's ring positions: every tile must
      // have the same number of K blocks.
      scf::ForOp k = program->kLoop;
      for (Value bound : {k.getLowerBound(), k.getUpperBound(), k.getStep()})
        if (!isTileInvariant(bound, program->tileLoop))
          return launch.emitOpError()
                 << "expects the same K blocks in every tile for a pingpong "
                    "config (K loop bounds defined outside the tile loop), "
                    "got a bound that depends on the tile";
    }
    int64_t mmaRows = program->mma.getA().getType().getRows();
    if (pingpong && mmaRows != 64 && mmaRows != 128)
      return launch.emitOpError()
             << "expects block_m (" << mmaRows
             << ") to be 64 or 128 for a pingpong config: each consumer "
                "warpgroup computes a whole tile";
    if (!pingpong && mmaRows != 64 * consumers)
      return launch.emitOpError()
             << "expects " << (swapped ? "block_n" : "block_m") << " ("
             << mmaRows << ") to be 64 x the consumer warpgroups (" << consumers
             << "): each consumer warpgroup computes 64 rows of the mma";
    // Budgets not given as options: with three consumer warpgroups the
    // defaults (40 + 3 x 232) would not fit, so the producer keeps 32 and
    // the consumers share the rest (160 each, 128 x (32 + 3 x 160) = 65536,
    // as with 24; the split_k_tail walk spilled in the producer's K loop
    // at 24, none at 32; bench/NOTES.md v36). With one, 40 is less than
    // the registers allow (128 x (56 + 232) of the 65536 a CTA of two
    // warpgroups is launched with) and less than the
    // producer of FP8 swap-AB tiles of 8 and 16 tokens needs: ptxas spilled
    // 12 bytes there, none with 56 (bench/NOTES.md v26).
    int64_t producerBudget = producerRegisters,
            consumerBudget = consumerRegisters;
    bool defaults = producerRegisters.getNumOccurrences() == 0 &&
                    consumerRegisters.getNumOccurrences() == 0;
    int64_t pool = WarpSpecializeOp::launchRegisters(consumers + 1);
    if (consumers == 3 && defaults) {
      producerBudget = 32;
      consumerBudget = (pool / 128 - producerBudget) / consumers / 8 * 8;
    } else if (consumers == 1 && defaults) {
      producerBudget = 56;
    }
    int64_t registers = 128 * (producerBudget + consumers * consumerBudget);
    if (registers > pool)
      return launch.emitOpError()
             << "expects the roles' registers to fit the " << pool
             << " a CTA of " << consumers + 1
             << " warpgroups is launched with: 128 x (" << producerBudget
             << " + " << consumers << " x " << consumerBudget
             << ") = " << registers;

    Location loc = launch.getLoc();
    // The ring comes first in the launch, so its mbarriers are set up before
    // anything else a CTA does (as the kernel did before it was IR).
    OpBuilder b = OpBuilder::atBlockBegin(&launch.getBody().front());
    SmallVector<Type> entryTypes;
    for (Operation *load : program->loads)
      entryTypes.push_back(load->getResult(0).getType());
    auto ringType = RingType::get(b.getContext(), entryTypes);
    // Clusters along m share the weight tile (the ring's second entry):
    // each CTA multicasts its slice, and a slot is free once every consumer
    // warp of every CTA of the cluster released it.
    int64_t clusterM = launch.getScheduleOp().getConfig().getClusterM();
    // A ping-pong stage has one consumer warpgroup.
    int64_t stageConsumers = pingpong ? 1 : consumers;
    int64_t releaseCount = 128 * stageConsumers;
    DenseI64ArrayAttr multicast;
    if (clusterM > 1) {
      releaseCount = 4 * stageConsumers * clusterM;
      multicast = b.getDenseI64ArrayAttr({1});
    }
    Value ring = CreateRingOp::create(b, loc, ringType,
                                      b.getI64IntegerAttr(releaseCount),
                                      RingLayoutAttr(), multicast);
    b.setInsertionPoint(program->tileLoop);
    auto roles = WarpSpecializeOp::create(
        b, loc, b.getI64IntegerAttr(producerBudget),
        b.getI64IntegerAttr(consumers), b.getI64IntegerAttr(consumerBudget),
        pingpong ? b.getUnitAttr() : UnitAttr());
    b.createBlock(&roles.getProducer());
    buildProducer(b, *program, ring);
    YieldOp::create(b, loc);
    b.createBlock(&roles.getConsumers());
    buildConsumers(b, *program, ring, pending, pingpong, promotePairs);
    YieldOp::create(b, loc);
    program->tileLoop->erase();
    // Each role cloned the index arithmetic of the whole tile; drop what it
    // does not use.
    IRRewriter rewriter(b.getContext());
    (void)runRegionDCE(rewriter, roles->getRegions());
    return success();
  }

  void runOnOperation() override {
    if (failed(checkOptions()) ||
        failed(expectScheduled(getOperation(), getArgument())))
      return signalPassFailure();
    SmallVector<LaunchOp> launches;
    getOperation()->walk([&](LaunchOp launch) {
      // A launch that already has roles is left as it is.
      if (launch.getBody().front().getOps<WarpSpecializeOp>().empty())
        launches.push_back(launch);
    });
    for (LaunchOp launch : launches)
      if (failed(specialize(launch)))
        return signalPassFailure();
  }
};
} // namespace
