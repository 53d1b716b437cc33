//===- SplitKToNVVM.cpp - a split-K cluster's partial sums -----------===//
//
// ggemm.split_k_sum: the CTAs of a split-K cluster add their partial tiles
// in rank 0's shared memory (distributed shared memory, `mapa`), with a
// full and an empty mbarrier in the ring layout's split-K buffer.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::nvvm;

Value KernelTranslator::splitKBuffer() {
  return byteOffset(smem, idx(facts.layout.getSplitKOffset()));
}

Value KernelTranslator::splitKBarrier(bool empty) {
  // After the split_k - 1 slots of one accumulator each.
  int64_t slots = (facts.splitK - 1) * facts.splitKSlotBytes;
  return byteOffset(splitKBuffer(), idx(slots + (empty ? 8 : 0)));
}

void KernelTranslator::initSplitKBarriers() {
  // Rank 0's full mbarrier counts every consumer thread of the other
  // ranks; each other rank's empty one rank 0's consumer threads.
  int64_t threads = 128 * facts.numConsumers;
  NVVM::MBarrierInitOp::create(b, loc, splitKBarrier(false),
                               c32((facts.splitK - 1) * threads), Value());
  NVVM::MBarrierInitOp::create(b, loc, splitKBarrier(true), c32(threads),
                               Value());
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
  if (!partial || !rank || !round || !more)
    return failure();
  int64_t splitK = facts.splitK;
  auto type = cast<LLVM::LLVMStructType>(partial.getType());
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
  Value buffer = splitKBuffer();
  Value full = splitKBarrier(false), empty = splitKBarrier(true);
  Value parity = arith::AndIOp::create(b, loc, round, idx(1));
  auto lead = scf::IfOp::create(b, loc, TypeRange{type},
                                cmp(arith::CmpIPredicate::eq, rank, idx(0)),
                                /*withElseRegion=*/true);
  {
    // Rank 0: wait for the others' partials, add them in rank order, and
    // free the buffer for the cluster's next tile.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(lead.thenBlock());
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
    auto release = scf::IfOp::create(b, loc, more, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPoint(release.thenBlock()->getTerminator());
      for (int64_t r = 1; r < splitK; ++r) {
        Value remote = NVVM::MapaOp::create(b, loc, ptrCluster, empty, c32(r));
        NVVM::MBarrierArriveOp::create(b, loc, Type(), remote, Value(),
                                       NVVM::MemScopeKind::CLUSTER,
                                       /*relaxed=*/false);
      }
    }
    scf::YieldOp::create(b, loc, acc);
  }
  {
    // Rank r > 0: once rank 0 has read its previous partial, write this
    // one into slot r - 1 of rank 0's buffer and arrive on its full
    // mbarrier (the release orders the stores before the arrival).
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(lead.elseBlock());
    auto later = scf::IfOp::create(
        b, loc, cmp(arith::CmpIPredicate::ugt, round, idx(0)), false);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPoint(later.thenBlock()->getTerminator());
      Value previous = arith::XOrIOp::create(b, loc, parity, idx(1));
      waitClusterPhase(empty, previous);
    }
    Value local =
        byteOffset(buffer, mul(arith::SubIOp::create(b, loc, rank, idx(1)),
                               idx(facts.splitKSlotBytes)));
    for (int64_t q = 0; q < registers / 4; ++q) {
      Value values = LLVM::UndefOp::create(b, loc, vec);
      for (int64_t j = 0; j < 4; ++j)
        values = LLVM::InsertElementOp::create(
            b, loc, values,
            LLVM::ExtractValueOp::create(b, loc, partial, 4 * q + j),
            LLVM::ConstantOp::create(b, loc, i32, j));
      Value remote =
          NVVM::MapaOp::create(b, loc, ptrCluster, quad(local, q), c32(0));
      LLVM::StoreOp::create(b, loc, values, remote, 16);
    }
    Value remoteFull = NVVM::MapaOp::create(b, loc, ptrCluster, full, c32(0));
    NVVM::MBarrierArriveOp::create(b, loc, Type(), remoteFull, Value(),
                                   NVVM::MemScopeKind::CLUSTER,
                                   /*relaxed=*/false);
    scf::YieldOp::create(b, loc, partial);
  }
  mapping.map(op.getResult(), lead.getResult(0));
  return success();
}
