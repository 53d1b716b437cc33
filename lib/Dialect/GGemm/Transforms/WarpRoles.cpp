//===- WarpRoles.cpp - the roles of ggemm-warp-specialize -----------------===//
//
// The tile program ggemm-warp-specialize matches, and the producer and
// consumer roles it is split into. Both roles walk the same tile ids and K
// blocks and count ring positions the same way, so they agree on every
// position without talking to each other except through the ring.
//
//===----------------------------------------------------------------------===//

#include "WarpRoles.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <functional>

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::warp_roles;

FailureOr<TileProgram> warp_roles::matchTileProgram(LaunchOp launch) {
  SmallVector<MmaOp> mmas;
  launch.walk([&](MmaOp mma) { mmas.push_back(mma); });
  if (mmas.size() != 1)
    return launch.emitOpError() << "expects exactly one ggemm.mma in the tile "
                                   "program to warp-specialize, got "
                                << mmas.size();
  TileProgram p;
  p.mma = mmas.front();
  p.kLoop = dyn_cast<scf::ForOp>(p.mma->getParentOp());
  // The accumulator's one use is the mma, or a ggemm.promote of the mma's
  // product; the loop yields its result.
  p.update = p.mma;
  if (p.mma.getResult().hasOneUse())
    if (auto promote =
            dyn_cast<PromoteOp>(*p.mma.getResult().getUsers().begin());
        promote && promote.getPartial() == p.mma.getResult())
      p.update = promote;
  Value acc = p.update == p.mma.getOperation()
                  ? p.mma.getAcc()
                  : cast<PromoteOp>(p.update).getAcc();
  if (!p.kLoop || p.kLoop.getNumRegionIterArgs() != 1 ||
      acc != p.kLoop.getRegionIterArg(0) ||
      !p.kLoop.getRegionIterArg(0).hasOneUse() ||
      p.kLoop.getYieldedValues()[0] != p.update->getResult(0))
    return p.mma.emitOpError()
           << "expects to be (or to feed the ggemm.promote that is) the only "
              "use of the accumulator of an scf.for K loop that yields its "
              "result";
  if (p.update != p.mma.getOperation()) {
    auto zero = p.mma.getAcc().getDefiningOp<ZeroAccumulatorOp>();
    if (!zero || zero->getParentOp() != p.kLoop)
      return p.mma.emitOpError()
             << "expects the product of a promoted K block to start from a "
                "ggemm.zero_accumulator of the K loop";
  }
  p.tileLoop = p.kLoop->getParentOp();
  bool isTileFor =
      isa<scf::ForOp>(p.tileLoop) && p.tileLoop->getNumResults() == 0;
  bool isTileIf = isa<scf::IfOp>(p.tileLoop) &&
                  p.tileLoop->getNumResults() == 0 &&
                  cast<scf::IfOp>(p.tileLoop).getElseRegion().empty();
  if (!(isTileFor || isTileIf) || p.tileLoop->getParentOp() != launch)
    return p.kLoop.emitOpError()
           << "expects the K loop directly in the tile loop (an scf.for or "
              "scf.if without results in the ggemm.launch body), as "
              "ggemm-persistent-schedule writes it";
  SmallVector<std::pair<StringRef, Value>> operands = {{"a", p.mma.getA()},
                                                       {"b", p.mma.getB()}};
  if (auto promote = dyn_cast<PromoteOp>(p.update)) {
    if (promote.getAScales())
      operands.push_back({"a_scales", promote.getAScales()});
    if (promote.getBScales())
      operands.push_back({"b_scales", promote.getBScales()});
  }
  for (auto [name, operand] : operands) {
    Operation *load = operand.getDefiningOp();
    if (!isa_and_nonnull<LoadTileOp, LoadScalesOp>(load) ||
        load->getParentOp() != p.kLoop || !operand.hasOneUse())
      return p.update->emitOpError()
             << "expects operand " << name
             << " to be a ggemm.load_tile or ggemm.load_scales of the K loop "
                "used only here";
  }
  // The ring's entries in program order.
  for (Operation &op : p.kLoop.getBody()->without_terminator())
    if (llvm::any_of(operands, [&](auto &named) {
          return named.second.getDefiningOp() == &op;
        }))
      p.loads.push_back(&op);
  // The roles duplicate the control flow and the index arithmetic: apart
  // from the loads, the mma and the final store, nothing may write memory.
  for (Operation &op : p.kLoop.getBody()->without_terminator())
    if (&op != p.mma && !p.isLoad(&op) && !wouldOpBeTriviallyDead(&op))
      return op.emitOpError() << "is not supported in a K loop to "
                                 "warp-specialize (only the tile and scale "
                                 "loads, the mma and side-effect-free ops)";
  for (Operation &op : p.kLoop->getBlock()->without_terminator()) {
    if (&op == p.kLoop)
      break;
    if (!wouldOpBeTriviallyDead(&op))
      return op.emitOpError() << "is not supported before the K loop of a "
                                 "tile to warp-specialize (only "
                                 "side-effect-free ops)";
  }
  return p;
}

namespace {

/// Builds one role of the tile program.
class RoleBuilder {
public:
  RoleBuilder(OpBuilder &b, TileProgram program, Value ring)
      : b(b), p(program), ring(ring), loc(program.kLoop.getLoc()) {}

  /// The producer: the tile loop with the loads of each K block put into
  /// the ring.
  void buildProducer() {
    buildTileLoop([&](Value start) {
      scf::ForOp kLoop = p.kLoop;
      auto loop = scf::ForOp::create(
          b, loc, map.lookupOrDefault(kLoop.getLowerBound()),
          map.lookupOrDefault(kLoop.getUpperBound()),
          map.lookupOrDefault(kLoop.getStep()), ValueRange{start});
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      map.map(kLoop.getInductionVar(), loop.getInductionVar());
      // Everything but the accumulator's arithmetic (what is not needed
      // by the loads goes with the DCE at the end).
      for (Operation &op : kLoop.getBody()->without_terminator())
        if (!isa<MmaOp, PromoteOp, ZeroAccumulatorOp>(op))
          b.clone(op, map);
      Value position = loop.getRegionIterArg(0);
      SmallVector<Value> entries;
      for (Operation *load : p.loads)
        entries.push_back(map.lookup(load->getResult(0)));
      RingPutOp::create(b, loc, ring, position, entries);
      scf::YieldOp::create(b, loc, increment(position));
      return loop.getResult(0);
    });
  }

  /// The consumers: the tile loop with each K block's tiles taken from the
  /// ring, multiplied and released, then the store. With `pingpong`, each
  /// consumer warpgroup takes every other tile of the CTA's (the producer
  /// puts them in tile order), and skips the other's ring positions. With
  /// `promotePairs` (promoted products only), two K blocks per step.
  void buildConsumers(int64_t pendingMmas, bool pingpong, bool promotePairs) {
    pingpongWarpgroup =
        pingpong ? ConsumerWarpgroupOp::create(b, loc).getResult() : Value();
    buildTileLoop([&](Value start) {
      scf::ForOp kLoop = p.kLoop;
      Value lowerBound = map.lookupOrDefault(kLoop.getLowerBound());
      Value init = map.lookupOrDefault(kLoop.getInitArgs()[0]);
      Value acc, end;
      if (promotePairs) {
        std::tie(acc, end) = buildPairedKLoop(lowerBound, init, start);
      } else {
        auto loop = scf::ForOp::create(
            b, loc, lowerBound, map.lookupOrDefault(kLoop.getUpperBound()),
            map.lookupOrDefault(kLoop.getStep()), ValueRange{init, start});
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(loop.getBody());
          Value position = loop.getRegionIterArg(1);
          Value next =
              emitBlock(loop.getInductionVar(), loop.getRegionIterArg(0),
                        position, pendingMmas);
          if (pendingMmas == 0) {
            RingReleaseOp::create(b, loc, ring, position);
          } else {
            // The mma of this block may still run: release the previous
            // block's position, whose mma has finished.
            Value later =
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                      loop.getInductionVar(), lowerBound);
            releaseIf(later, position);
          }
          scf::YieldOp::create(b, loc, ValueRange{next, increment(position)});
        }
        acc = loop.getResult(0);
        end = loop.getResult(1);
      }
      if (afterKLoop)
        afterKLoop();
      if (pendingMmas > 0) {
        acc = MmaWaitOp::create(b, loc, acc.getType(), acc);
        Value ran = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                          end, start);
        releaseIf(ran, end);
      }
      map.map(kLoop.getResult(0), acc);
      for (Operation *op = kLoop->getNextNode();
           op && !op->hasTrait<OpTrait::IsTerminator>(); op = op->getNextNode())
        b.clone(*op, map);
      return end;
    });
  }

private:
  /// Emits one K block of the consumers at `iv`: its entries taken from the
  /// ring at `position`, then the K loop's body with `acc` as the
  /// accumulator (the mma `pending` when asked). Returns the updated
  /// accumulator, or null with `deferUpdate`: the update (the promote) is
  /// then left for the caller, and the map holds the block's values.
  Value emitBlock(Value iv, Value acc, Value position, int64_t pending,
                  bool deferUpdate = false) {
    scf::ForOp kLoop = p.kLoop;
    map.map(kLoop.getInductionVar(), iv);
    map.map(kLoop.getRegionIterArg(0), acc);
    SmallVector<Type> entryTypes;
    for (Operation *load : p.loads)
      entryTypes.push_back(load->getResult(0).getType());
    auto get =
        RingGetOp::create(b, loc, entryTypes, ring, position, scaleOffsets());
    for (auto [load, entry] : llvm::zip(p.loads, get.getResults()))
      map.map(load->getResult(0), entry);
    bool masked = false;
    for (Operation &op : kLoop.getBody()->without_terminator()) {
      if (p.isLoad(&op) || (deferUpdate && &op == p.update))
        continue;
      // The K-ragged mask goes between the ring and the first op that
      // reads a tile, once the block's K index has been computed.
      if (!masked && llvm::any_of(op.getOperands(), [&](Value v) {
            return p.isLoad(v.getDefiningOp());
          })) {
        zeroKTails();
        masked = true;
      }
      Operation *clone = b.clone(op, map);
      if (&op == p.mma.getOperation() && pending)
        clone->setAttr("pending", b.getI64IntegerAttr(pending));
    }
    return deferUpdate ? Value() : map.lookup(p.update->getResult(0));
  }

  /// Where each scales entry's first scale lies in its ring slot (see
  /// ggemm.ring_get): a 2-D scale tensor's slot is loaded from the
  /// 16-byte-aligned row at or below the load's first row r, so r %
  /// kScalesSlackRows; weight scales start the slot. Computed here, in the
  /// consumers, from the load's own row index (cloned with what it depends
  /// on in the K loop), so that no consumer reads it from shared memory.
  SmallVector<Value> scaleOffsets() {
    SmallVector<Value> offsets;
    for (Operation *op : p.loads) {
      auto load = dyn_cast<LoadScalesOp>(op);
      if (!load)
        continue;
      if (load.getSource().getType().getRank() != 2) {
        offsets.push_back(arith::ConstantIndexOp::create(b, loc, 0));
        continue;
      }
      Value row = materialize(load.getIndices()[0]);
      offsets.push_back(arith::RemUIOp::create(
          b, loc, row,
          arith::ConstantIndexOp::create(b, loc, kScalesSlackRows)));
    }
    return offsets;
  }

  /// `value` in the consumers: its mapped copy, or, for a value the K loop
  /// body computes, a clone of its computation (the body's own clone
  /// follows the ring_get).
  Value materialize(Value value) {
    if (Value mapped = map.lookupOrNull(value))
      return mapped;
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != p.kLoop.getBody())
      return value;
    for (Value operand : def->getOperands())
      materialize(operand);
    b.clone(*def, map);
    return map.lookup(value);
  }

  /// The consumers' K loop with two promoted K blocks per step: block i's
  /// product is left pending while block i + 1's is issued, one wait
  /// covers both, and they are promoted in order (the sum's order is the
  /// single-block loop's). An odd block count ends with one block on its
  /// own. Returns the accumulator and the ring position after the loop.
  std::pair<Value, Value> buildPairedKLoop(Value lowerBound, Value init,
                                           Value start) {
    scf::ForOp kLoop = p.kLoop;
    Value upper = map.lookupOrDefault(kLoop.getUpperBound());
    Value step = map.lookupOrDefault(kLoop.getStep());
    Value two = arith::ConstantIndexOp::create(b, loc, 2);
    Value pairs = arith::DivUIOp::create(b, loc, kBlocks(), two);
    Value pairStep = arith::MulIOp::create(b, loc, step, two);
    Value pairedEnd = arith::AddIOp::create(
        b, loc, lowerBound, arith::MulIOp::create(b, loc, pairs, pairStep));
    auto loop = scf::ForOp::create(b, loc, lowerBound, pairedEnd, pairStep,
                                   ValueRange{init, start});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value acc = loop.getRegionIterArg(0);
      Value first = loop.getRegionIterArg(1);
      emitBlock(loop.getInductionVar(), acc, first, /*pending=*/1,
                /*deferUpdate=*/true);
      Value firstProduct = map.lookup(p.mma.getResult());
      IRMapping firstMap = map;
      Value second = increment(first);
      Value iv = arith::AddIOp::create(b, loc, loop.getInductionVar(), step);
      emitBlock(iv, acc, second, /*pending=*/0, /*deferUpdate=*/true);
      // The second mma waited for every group: the first product is done.
      firstMap.map(
          p.mma.getResult(),
          MmaWaitOp::create(b, loc, firstProduct.getType(), firstProduct));
      Value promoted = b.clone(*p.update, firstMap)->getResult(0);
      map.map(kLoop.getRegionIterArg(0), promoted);
      Value next = b.clone(*p.update, map)->getResult(0);
      RingReleaseOp::create(b, loc, ring, first);
      RingReleaseOp::create(b, loc, ring, second);
      scf::YieldOp::create(b, loc, ValueRange{next, increment(second)});
    }
    // The last block of an odd count.
    Value odd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                      pairedEnd, upper);
    Value acc = loop.getResult(0), position = loop.getResult(1);
    auto last = scf::IfOp::create(
        b, loc, TypeRange{acc.getType(), position.getType()}, odd,
        /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(last.thenBlock());
    Value next = emitBlock(pairedEnd, acc, position, /*pending=*/0);
    RingReleaseOp::create(b, loc, ring, position);
    scf::YieldOp::create(b, loc, ValueRange{next, increment(position)});
    b.setInsertionPointToStart(last.elseBlock());
    scf::YieldOp::create(b, loc, ValueRange{acc, position});
    return {last.getResult(0), last.getResult(1)};
  }

  /// Writes a ggemm.zero_k_tail for the tiles whose loads have a `k_end`
  /// (one per distinct K index and bounds), mapping the loads to the masked
  /// tiles: the producer's TMA loads whole boxes, the consumers zero what
  /// lies past the segment's end (and before its start, with `k_begin`).
  void zeroKTails() {
    using Key = std::tuple<Value, Value, Value>; // K index, k_end, k_begin
    SmallVector<std::pair<Key, SmallVector<LoadTileOp>>> groups;
    for (Operation *op : p.loads) {
      auto load = dyn_cast<LoadTileOp>(op);
      if (!load || !load.getKEnd())
        continue;
      Value k = load.getIndices()[kIndexDim(load)];
      Key key = {k, load.getKEnd(), load.getKBegin()};
      auto *group =
          llvm::find_if(groups, [&](auto &g) { return g.first == key; });
      if (group == groups.end())
        groups.push_back({key, {load}});
      else
        group->second.push_back(load);
    }
    for (auto &[key, loads] : groups) {
      auto [k, kEnd, kBegin] = key;
      Value kHere = map.lookupOrDefault(k);
      Value valid =
          arith::SubIOp::create(b, loc, map.lookupOrDefault(kEnd), kHere);
      Value from;
      if (kBegin)
        from =
            arith::SubIOp::create(b, loc, map.lookupOrDefault(kBegin), kHere);
      SmallVector<Value> tiles;
      for (LoadTileOp load : loads)
        tiles.push_back(map.lookup(load.getTile()));
      auto zero = ZeroKTailOp::create(b, loc, tiles, valid, from);
      for (auto [load, masked] : llvm::zip(loads, zero.getMasked()))
        map.map(load.getTile(), masked);
    }
  }

  /// The dimension of a load's source that runs along K.
  static unsigned kIndexDim(LoadTileOp load) {
    unsigned rank = load.getIndices().size();
    return load.getType().isMNMajor() ? rank - 2 : rank - 1;
  }

  /// Recreates the tile loop carrying the ring position; `buildBody` emits
  /// the role's K loop from a start position and returns the end position.
  /// A ping-pong consumer warpgroup w walks tiles w, w + 2, ... of the CTA's
  /// sequence; its j-th tile's K blocks sit at ring positions from
  /// (2 j + w) x (K blocks per tile): the loop carries 2 j x that.
  void buildTileLoop(function_ref<Value(Value)> buildBody) {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    OpBuilder::InsertionGuard guard(b);
    if (auto tiles = dyn_cast<scf::ForOp>(p.tileLoop)) {
      Value lower = tiles.getLowerBound(), step = tiles.getStep();
      Value wg = pingpongWarpgroup;
      if (wg) {
        lower = arith::AddIOp::create(b, loc, lower,
                                      arith::MulIOp::create(b, loc, wg, step));
        step = arith::AddIOp::create(b, loc, step, step);
      }
      auto loop =
          scf::ForOp::create(b, tiles.getLoc(), lower, tiles.getUpperBound(),
                             step, ValueRange{zero});
      map.map(tiles.getInductionVar(), loop.getInductionVar());
      b.setInsertionPointToStart(loop.getBody());
      cloneUntilKLoop(tiles.getBody());
      Value position = loop.getRegionIterArg(0);
      if (!wg) {
        scf::YieldOp::create(b, loc, buildBody(position));
        return;
      }
      Value blocks = kBlocks();
      Value start = arith::AddIOp::create(
          b, loc, position, arith::MulIOp::create(b, loc, wg, blocks));
      // The CTA's first tile (warpgroup 0's) starts the turns; every later
      // tile waits for the previous one's, and a tile passes the turn when
      // a next tile exists.
      Value tile = loop.getInductionVar();
      ifThen(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, tile,
                                   tiles.getLowerBound()),
             [&] { TurnWaitOp::create(b, loc); });
      Value ctaStep = tiles.getStep(), end = tiles.getUpperBound();
      afterKLoop = [this, tile, ctaStep, end] {
        Value next = arith::AddIOp::create(b, loc, tile, ctaStep);
        ifThen(
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, next, end),
            [&] { TurnPassOp::create(b, loc); });
      };
      buildBody(start);
      scf::YieldOp::create(
          b, loc,
          arith::AddIOp::create(
              b, loc, position,
              arith::AddIOp::create(b, loc, blocks, blocks).getResult())
              .getResult());
      return;
    }
    auto tile = cast<scf::IfOp>(p.tileLoop);
    auto newIf = scf::IfOp::create(b, tile.getLoc(), tile.getCondition(),
                                   /*withElseRegion=*/false);
    b.setInsertionPoint(newIf.thenBlock()->getTerminator());
    cloneUntilKLoop(tile.thenBlock());
    buildBody(zero);
  }

  /// The K loop's trip count, from its bounds as the role sees them.
  Value kBlocks() {
    scf::ForOp kLoop = p.kLoop;
    Value lower = map.lookupOrDefault(kLoop.getLowerBound());
    Value upper = map.lookupOrDefault(kLoop.getUpperBound());
    Value step = map.lookupOrDefault(kLoop.getStep());
    Value span = arith::SubIOp::create(b, loc, upper, lower);
    return arith::CeilDivUIOp::create(b, loc, span, step);
  }

  void cloneUntilKLoop(Block *body) {
    for (Operation &op : *body) {
      if (&op == p.kLoop)
        return;
      b.clone(op, map);
    }
  }

  Value increment(Value position) {
    return arith::AddIOp::create(b, loc, position,
                                 arith::ConstantIndexOp::create(b, loc, 1));
  }

  void ifThen(Value condition, function_ref<void()> body) {
    auto op = scf::IfOp::create(b, loc, condition, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(op.thenBlock()->getTerminator());
    body();
  }

  /// `if (condition) ring_release(position - 1)`.
  void releaseIf(Value condition, Value position) {
    auto release = scf::IfOp::create(b, loc, condition, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(release.thenBlock()->getTerminator());
    Value previous = arith::SubIOp::create(
        b, loc, position, arith::ConstantIndexOp::create(b, loc, 1));
    RingReleaseOp::create(b, loc, ring, previous);
  }

  OpBuilder &b;
  TileProgram p;
  Value ring;
  Location loc;
  IRMapping map;
  /// The consumer warpgroup's index in a ping-pong consumers region.
  Value pingpongWarpgroup;
  /// Emits the ping-pong turn's end after the K loop (set per tile).
  std::function<void()> afterKLoop;
};

} // namespace

void warp_roles::buildProducer(OpBuilder &b, const TileProgram &program,
                               Value ring) {
  RoleBuilder(b, program, ring).buildProducer();
}

void warp_roles::buildConsumers(OpBuilder &b, const TileProgram &program,
                                Value ring, int64_t pendingMmas, bool pingpong,
                                bool promotePairs) {
  RoleBuilder(b, program, ring)
      .buildConsumers(pendingMmas, pingpong, promotePairs);
}
