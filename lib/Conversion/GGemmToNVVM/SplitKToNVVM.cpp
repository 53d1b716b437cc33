//===- SplitKToNVVM.cpp - a split-K cluster's partial sums -----------===//
//
// ggemm.split_k_sum: the CTAs of a split-K cluster add their partial tiles
// in rank 0's shared memory (distributed shared memory, `mapa`), with a
// full and an empty mbarrier in the ring layout's split-K buffer (or, where
// the buffer overlays the idle ring of a split_k_tail launch, beside it).
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::nvvm;

Value KernelTranslator::splitKBuffer(Value base) {
  return byteOffset(base ? base : smem, idx(facts.layout.getSplitKOffset()));
}

Value KernelTranslator::splitKBarrier(bool empty, Value base) {
  // After the split_k - 1 slots of one accumulator each, or, where the
  // slots overlay the ring, at split_k_barriers.
  if (facts.layout.splitKOverlaysRing())
    return byteOffset(base ? base : smem,
                      idx(facts.layout.getSplitKBarriers() + (empty ? 8 : 0)));
  int64_t slots = (facts.splitK - 1) * facts.splitKSlotBytes;
  return byteOffset(splitKBuffer(base), idx(slots + (empty ? 8 : 0)));
}

/// Where the slots overlay the ring, the word after the two mbarriers
/// holds 0, which the consumers read back before the exchange (see
/// translateSplitKSum).
static constexpr int64_t kSplitKAnchorOffset = 16;

void KernelTranslator::initSplitKBarriers() {
  // Rank 0's full mbarrier counts every consumer thread of the other
  // ranks; each other rank's empty one rank 0's consumer threads.
  int64_t threads = 128 * facts.numConsumers;
  NVVM::MBarrierInitOp::create(b, loc, splitKBarrier(false),
                               c32((facts.splitK - 1) * threads), Value());
  NVVM::MBarrierInitOp::create(b, loc, splitKBarrier(true), c32(threads),
                               Value());
  if (facts.layout.splitKOverlaysRing())
    LLVM::StoreOp::create(
        b, loc, c32(0),
        byteOffset(
            smem, idx(facts.layout.getSplitKBarriers() + kSplitKAnchorOffset)));
}

void KernelTranslator::waitClusterPhase(Value barrier, Value parity) {
  // mbarrier.try_wait.parity with cluster-scoped acquire: the arrivals it
  // waits for are other CTAs' (release.cluster). The upstream op that
  // loops (nvvm.mbarrier.try_wait.parity) is CTA-scoped only.
  auto loop = scf::WhileOp::create(b, loc, TypeRange{}, ValueRange{});
  Block *before = b.createBlock(&loop.getBefore());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(before);
    Value done = NVVM::MBarrierTryWaitOp::create(
        b, loc, i1, barrier, toI32(parity), Value(),
        NVVM::MemScopeKind::CLUSTER, /*relaxed=*/false);
    Value pending = arith::XOrIOp::create(
        b, loc, done, arith::ConstantIntOp::create(b, loc, 1, 1));
    scf::ConditionOp::create(b, loc, pending, ValueRange{});
  }
  Block *after = b.createBlock(&loop.getAfter());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(after);
    scf::YieldOp::create(b, loc);
  }
  b.setInsertionPointAfter(loop);
}

LogicalResult KernelTranslator::translateSplitKSum(SplitKSumOp op) {
  Value partial = lookup(op.getPartial(), op);
  Value rank = lookup(op.getRank(), op);
  Value round = lookup(op.getRound(), op);
  Value more = lookup(op.getMore(), op);
  Value active = op.getActive() ? lookup(op.getActive(), op) : Value();
  if (!partial || !rank || !round || !more || (op.getActive() && !active))
    return failure();
  int64_t splitK = facts.splitK;
  auto type = cast<LLVM::LLVMStructType>(partial.getType());
  // Inactive (a whole tile of a split_k_tail launch): the CTA's own sum.
  scf::IfOp ifActive;
  if (active) {
    ifActive = scf::IfOp::create(b, loc, TypeRange{type}, active,
                                 /*withElseRegion=*/true);
    b.setInsertionPointToStart(ifActive.elseBlock());
    scf::YieldOp::create(b, loc, partial);
    b.setInsertionPointToStart(ifActive.thenBlock());
  }
  int64_t registers = type.getBody().size();
  Type elem = type.getBody().front();
  bool integer = isa<IntegerType>(elem);
  int64_t threads = 128 * facts.numConsumers;
  auto vec = VectorType::get({4}, elem);
  // Register i of consumer thread t sits at 16 (threads (i / 4) + t) +
  // 4 (i mod 4) of its slot: 16-byte stores, consecutive threads side by
  // side.
  auto quad = [&](Value slot, int64_t q) {
    return byteOffset(slot, mul(add(idx(threads * q), tid), idx(16)));
  };
  // Over the ring, the buffer is free once rank 0's K loop is done (the
  // op's verifier has checked that no tile follows): rank 0 says so through
  // each other rank's empty mbarrier, and they wait for it before writing.
  bool overlay = facts.layout.splitKOverlaysRing();
  // There (split_k_tail, the CTA's last unit, with three 64 x 128 tiles of
  // consumers at their 160 registers) the addresses start from a 0 read
  // back from shared memory: LLVM would otherwise hoist them (constants,
  // the thread id and mapa) out of the tile loop, and ptxas, short of the
  // registers they then hold across the K loop, spilled and recomputed the
  // scale addresses from the thread id in every K block (bench/NOTES.md
  // v36). A volatile load stays where it is.
  Value base;
  if (overlay) {
    Value anchor = LLVM::LoadOp::create(
        b, loc, i32,
        byteOffset(smem,
                   idx(facts.layout.getSplitKBarriers() + kSplitKAnchorOffset)),
        /*alignment=*/4, /*isVolatile=*/true);
    base = byteOffset(smem, toIndex(anchor));
  }
  Value buffer = splitKBuffer(base);
  Value full = splitKBarrier(false, base), empty = splitKBarrier(true, base);
  Value parity = arith::AndIOp::create(b, loc, round, idx(1));
  auto releaseToPeers = [&] {
    for (int64_t r = 1; r < splitK; ++r) {
      Value remote = NVVM::MapaOp::create(b, loc, ptrCluster, empty, c32(r));
      NVVM::MBarrierArriveOp::create(b, loc, Type(), remote, Value(),
                                     NVVM::MemScopeKind::CLUSTER,
                                     /*relaxed=*/false);
    }
  };
  auto lead = scf::IfOp::create(b, loc, TypeRange{type},
                                cmp(arith::CmpIPredicate::eq, rank, idx(0)),
                                /*withElseRegion=*/true);
  {
    // Rank 0: wait for the others' partials, add them in rank order, and
    // free the buffer for the cluster's next tile.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(lead.thenBlock());
    if (overlay) {
      // The ring's last readers were this CTA's wgmmas (the async proxy);
      // the others write the slots through the generic one.
      NVVM::FenceProxyOp::create(
          b, loc, NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
      releaseToPeers();
    }
    waitClusterPhase(full, parity);
    Value acc = partial;
    for (int64_t r = 1; r < splitK; ++r) {
      Value slot = byteOffset(buffer, idx((r - 1) * facts.splitKSlotBytes));
      for (int64_t q = 0; q < registers / 4; ++q) {
        Value values = LLVM::LoadOp::create(b, loc, vec, quad(slot, q), 16);
        for (int64_t j = 0; j < 4; ++j) {
          Value mine = LLVM::ExtractValueOp::create(b, loc, acc, 4 * q + j);
          Value theirs = LLVM::ExtractElementOp::create(
              b, loc, values, LLVM::ConstantOp::create(b, loc, i32, j));
          Value sum = integer
                          ? Value(arith::AddIOp::create(b, loc, mine, theirs))
                          : Value(arith::AddFOp::create(b, loc, mine, theirs));
          acc = LLVM::InsertValueOp::create(b, loc, acc, sum, 4 * q + j);
        }
      }
    }
    if (!overlay) {
      auto release = scf::IfOp::create(b, loc, more, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPoint(release.thenBlock()->getTerminator());
      releaseToPeers();
    }
    scf::YieldOp::create(b, loc, acc);
  }
  {
    // Rank r > 0: once rank 0 has read its previous partial, write this
    // one into slot r - 1 of rank 0's buffer and arrive on its full
    // mbarrier (the release orders the stores before the arrival).
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(lead.elseBlock());
    if (overlay) {
      // Rank 0's release of this round.
      waitClusterPhase(empty, parity);
    } else {
      auto later = scf::IfOp::create(
          b, loc, cmp(arith::CmpIPredicate::ugt, round, idx(0)), false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPoint(later.thenBlock()->getTerminator());
      Value previous = arith::XOrIOp::create(b, loc, parity, idx(1));
      waitClusterPhase(empty, previous);
    }
    // Rank r's slot, r - 1 (with two ranks the one slot: rank is then
    // only compared, and need not stay live as an index).
    Value local =
        splitK == 2
            ? buffer
            : byteOffset(buffer,
                         mul(arith::SubIOp::create(b, loc, rank, idx(1)),
                             idx(facts.splitKSlotBytes)));
    // One mapa for the thread's first quad; the others are constant
    // offsets from it (the CTAs' layouts are the same), so that no
    // address per quad stays live across the K loop, where LLVM would
    // hoist them to.
    Value remote =
        NVVM::MapaOp::create(b, loc, ptrCluster, quad(local, 0), c32(0));
    for (int64_t q = 0; q < registers / 4; ++q) {
      Value values = LLVM::UndefOp::create(b, loc, vec);
      for (int64_t j = 0; j < 4; ++j)
        values = LLVM::InsertElementOp::create(
            b, loc, values,
            LLVM::ExtractValueOp::create(b, loc, partial, 4 * q + j),
            LLVM::ConstantOp::create(b, loc, i32, j));
      LLVM::StoreOp::create(b, loc, values,
                            byteOffset(remote, idx(threads * q * 16)), 16);
    }
    Value remoteFull = NVVM::MapaOp::create(b, loc, ptrCluster, full, c32(0));
    NVVM::MBarrierArriveOp::create(b, loc, Type(), remoteFull, Value(),
                                   NVVM::MemScopeKind::CLUSTER,
                                   /*relaxed=*/false);
    scf::YieldOp::create(b, loc, partial);
  }
  if (!ifActive) {
    mapping.map(op.getResult(), lead.getResult(0));
    return success();
  }
  scf::YieldOp::create(b, loc, lead.getResult(0));
  b.setInsertionPointAfter(ifActive);
  mapping.map(op.getResult(), ifActive.getResult(0));
  return success();
}
