//===- RingToNVVM.cpp - stage ring and warp roles -> NVVM -----------------===//
//
// The ring's slots and mbarriers sit where its #ggemm.ring_layout says;
// position i is slot i mod stages, in mbarrier phase (i / stages) mod 2.
// The producer's side (ggemm.ring_put's loads) is RingPutToNVVM.cpp.
// full[s] completes on the producer's expect_tx arrival plus the TMA bytes,
// empty[s] on one arrival per consumer thread.
//
// The kernel is written with NVVM ops (mbarriers, TMA, setmaxnreg) and LLVM
// pointers rather than nvgpu: nvgpu's mbarrier group lives in static shared
// memory with no control of the layout, and its TMA descriptor type cannot be
// a kernel argument (shared/mlir22/FACTS.md, §5c and §7).
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::nvvm;

// A ring position counts the K blocks a CTA has passed through the ring:
// below 2^32 in any launch (that many blocks would take minutes), so its
// slot and round are computed in 32 bits. In 64 bits the division by a
// stage count such as 6 is a chain of a dozen wide multiplies on every K
// block, between the consumers' previous promotion and their next wait
// (the ncu source profile in bench/NOTES.md, FP8 v12).
Value KernelTranslator::ringSlot(Value position) {
  return arith::IndexCastUIOp::create(
      b, loc, b.getIndexType(),
      arith::RemUIOp::create(b, loc, toI32(position),
                             c32(facts.layout.getStages())));
}

Value KernelTranslator::ringParity(Value position) {
  Value round = arith::DivUIOp::create(b, loc, toI32(position),
                                       c32(facts.layout.getStages()));
  return arith::AndIOp::create(b, loc, round, c32(1));
}

Value KernelTranslator::ringBarrier(Value slot, bool empty) {
  Value index = empty ? add(slot, idx(facts.layout.getStages())) : slot;
  return byteOffset(
      smem, add(idx(facts.layout.getBarrierOffset()), mul(index, idx(8))));
}

Value KernelTranslator::ringBuffer(unsigned tile, Value slot) {
  RingLayoutAttr layout = facts.layout;
  return byteOffset(smem, add(idx(layout.getOffsets()[tile]),
                              mul(slot, idx(layout.getStageBytes()[tile]))));
}

LogicalResult KernelTranslator::translateCreateRing(CreateRingOp op) {
  // One thread initialises the ring's mbarriers, then the whole CTA waits.
  auto init =
      scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::eq, tid, idx(0)),
                        /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(init.thenBlock());
    for (int64_t s = 0; s < facts.layout.getStages(); ++s) {
      // The producer's arrival (with the TMA bytes); with gathered rows
      // also one per thread of the producer warpgroup, when its cp.async
      // copies land (cp.async.mbarrier.arrive.noinc).
      NVVM::MBarrierInitOp::create(b, loc, ringBarrier(idx(s), false),
                                   c32(facts.gather ? 1 + 128 : 1), Value());
      NVVM::MBarrierInitOp::create(b, loc, ringBarrier(idx(s), true),
                                   c32(op.getReleaseCount()), Value());
    }
    if (facts.splitK > 1)
      initSplitKBarriers();
    NVVM::FenceMbarrierInitOp::create(b, loc);
  }
  if (facts.clusterSize() > 1) {
    // The peers arrive on this CTA's empty mbarriers and multicast into
    // its slots (split-K: arrive on its split-K mbarriers and write its
    // buffer): all must be initialised first.
    NVVM::ClusterArriveOp::create(b, loc, UnitAttr());
    NVVM::ClusterWaitOp::create(b, loc, UnitAttr());
  } else {
    gpu::BarrierOp::create(b, loc);
  }
  // The ring value is the shared-memory base its layout is relative to.
  mapping.map(op.getRing(), smem);
  return success();
}

LogicalResult KernelTranslator::translateWarpSpecialize(WarpSpecializeOp op) {
  // Consumer warpgroups are 0 .. C-1 (their index is their share of a
  // tile's rows), the producer is warpgroup C.
  Value isProducer =
      cmp(arith::CmpIPredicate::eq, warpgroup, idx(op.getConsumerWarpgroups()));
  auto roles = scf::IfOp::create(b, loc, isProducer, /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(roles.thenBlock()->getTerminator());
  NVVM::SetMaxRegisterOp::create(b, loc, op.getProducerRegisters(),
                                 NVVM::SetMaxRegisterAction::decrease);
  // One elected thread of the producer's first warp issues every load;
  // with gathered rows the whole producer warpgroup runs the producer, each
  // thread copying its share of the rows (translateRingPut).
  if (!facts.gather) {
    Value warpInGroup = arith::DivUIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, tid, idx(128)), idx(32));
    auto warp0 = scf::IfOp::create(
        b, loc, cmp(arith::CmpIPredicate::eq, warpInGroup, idx(0)), false);
    b.setInsertionPoint(warp0.thenBlock()->getTerminator());
    Value leader = NVVM::ElectSyncOp::create(b, loc, i1, Value());
    auto leaderIf = scf::IfOp::create(b, loc, leader, false);
    b.setInsertionPoint(leaderIf.thenBlock()->getTerminator());
  }
  if (failed(translateBlock(op.getProducer().front())))
    return failure();

  b.setInsertionPoint(roles.elseBlock()->getTerminator());
  NVVM::SetMaxRegisterOp::create(b, loc, op.getConsumerRegisters(),
                                 NVVM::SetMaxRegisterAction::increase);
  return translateBlock(op.getConsumers().front());
}

LogicalResult KernelTranslator::translateRingGet(RingGetOp op) {
  Value position = lookup(op.getPosition(), op);
  if (!position)
    return failure();
  Value slot = ringSlot(position);
  NVVM::MBarrierTryWaitParityOp::create(b, loc, ringBarrier(slot, false),
                                        ringParity(position), c32(kWaitTicks));
  // Gathered rows were written by cp.async (the generic proxy); wgmma reads
  // shared memory through the async proxy.
  if (facts.gather)
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  // A tile is the address of its slot's buffer; scales are the address of
  // their first scale, `scale_offsets` into the slot (computed by the
  // consumers themselves: a load from the slot would put a shared-memory
  // round trip between the wait and the wgmma's issue).
  auto offsets = op.getScaleOffsets().begin();
  for (auto [index, tile] : llvm::enumerate(op.getTiles())) {
    Value buffer = ringBuffer(index, slot);
    if (isa<ScalesType>(tile.getType())) {
      Value first = lookup(*offsets++, op);
      if (!first)
        return failure();
      buffer = byteOffset(buffer, mul(first, idx(4)));
    }
    mapping.map(tile, buffer);
  }
  return success();
}

LogicalResult KernelTranslator::translateRingRelease(RingReleaseOp op) {
  Value position = lookup(op.getPosition(), op);
  if (!position)
    return failure();
  Value empty = ringBarrier(ringSlot(position), true);
  if (facts.clusterM == 1) {
    NVVM::MBarrierArriveOp::create(b, loc, Type(), empty, Value());
    return success();
  }
  // Lane r < C of each consumer warp releases the slot of the cluster's
  // CTA r, whose producer multicasts into this CTA's slot too. The warp
  // has finished reading the slot: the wgmma wait before is warp-wide.
  // The arrival's release is CTA-scoped, as CUTLASS's cluster pipelines
  // arrive: what it orders is this warp's wgmma reads of the slot, and a
  // cluster-scoped release costs a fence.acq_rel.cluster per arrival (seen
  // on an H100: the consumers then stalled on it, the tensor pipe 50 %
  // busy instead of 87 %).
  // The other lanes' own reads of the slot (the scales' loads, every
  // lane) are ordered before the arrival by a warp barrier first: an
  // arrival releases only its own thread's accesses, so without it the
  // producer's next write to the slot would race, by the PTX memory model,
  // with the other lanes' loads. (compute-sanitizer racecheck reports a
  // hazard between those stores and loads in the FP8 cluster kernel with
  // and without the barrier, and with a CTA-local arrival for the own
  // CTA; not understood: bench/NOTES.md v44.)
  NVVM::SyncWarpOp::create(b, loc, c32(-1));
  Value lane = arith::RemUIOp::create(b, loc, tid, idx(32));
  auto sender = scf::IfOp::create(
      b, loc, cmp(arith::CmpIPredicate::ult, lane, idx(facts.clusterM)), false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(sender.thenBlock());
  Value remote = NVVM::MapaOp::create(b, loc, ptrCluster, empty, toI32(lane));
  NVVM::MBarrierArriveOp::create(b, loc, Type(), remote, Value(),
                                 NVVM::MemScopeKind::CTA,
                                 /*relaxed=*/false);
  return success();
}

LogicalResult KernelTranslator::translateZeroKTail(ZeroKTailOp op) {
  Value valid = lookup(op.getValid(), op);
  Value from = op.getFrom() ? lookup(op.getFrom(), op) : Value();
  if (!valid || (op.getFrom() && !from))
    return failure();
  SmallVector<Value> tiles;
  for (Value tile : op.getTiles()) {
    Value buffer = lookup(tile, op);
    if (!buffer)
      return failure();
    tiles.push_back(buffer);
  }
  // Only the first and last K blocks of a segment are partial; every
  // consumer thread sees the same bounds, so all take the branch and its
  // barrier. The verifier checked that the tiles share one K block.
  int64_t blockK = cast<TileType>(op.getTiles()[0].getType()).getK();
  Value partialBlock = cmp(arith::CmpIPredicate::slt, valid, idx(blockK));
  if (from)
    partialBlock = arith::OrIOp::create(
        b, loc, partialBlock, cmp(arith::CmpIPredicate::sgt, from, idx(0)));
  auto partial = scf::IfOp::create(b, loc, partialBlock, false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(partial.thenBlock()->getTerminator());
    // The consumer threads are 0 .. 128 C - 1; each takes every
    // (128 C)-th 16-byte chunk of the tiles' swizzle rows.
    int64_t threads = 128 * facts.numConsumers;
    constexpr int64_t kChunkBytes = 16;
    int64_t chunksPerRow = kSwizzleBytes / kChunkBytes;
    auto vecType = VectorType::get({4}, i32);
    Value zeros = LLVM::ZeroOp::create(b, loc, vecType);
    // mn_major tiles: a box row is one K index, so the rows valid ..
    // block_k of every box are zeroed whole (the swizzle permutes chunks
    // within a row).
    SmallVector<std::pair<Value, TileType>> mnMajor, kMajor;
    for (auto [tile, buffer] : llvm::zip(op.getTiles(), tiles)) {
      auto type = cast<TileType>(tile.getType());
      (type.isMNMajor() ? mnMajor : kMajor).push_back({buffer, type});
    }
    if (!mnMajor.empty()) {
      OpBuilder::InsertionGuard loopGuard(b);
      auto loop =
          scf::ForOp::create(b, loc, add(mul(valid, idx(chunksPerRow)), tid),
                             idx(blockK * chunksPerRow), idx(threads));
      b.setInsertionPointToStart(loop.getBody());
      Value chunk = mul(loop.getInductionVar(), idx(kChunkBytes));
      for (auto [buffer, type] : mnMajor) {
        int64_t boxBytes = kSwizzleBytes * blockK;
        int64_t boxes = type.getNumBytes() / boxBytes;
        for (int64_t j = 0; j < boxes; ++j)
          LLVM::StoreOp::create(
              b, loc, zeros, byteOffset(buffer, add(chunk, idx(j * boxBytes))),
              /*alignment=*/kChunkBytes);
      }
    }
    // k_major tiles: a swizzle row is one tile row, block_k consecutive K
    // indices; chunk c of row r sits at chunk c ^ (r % 8) (128-byte
    // swizzle). A chunk wholly inside [from, valid) stays; one wholly
    // outside becomes zero, one across a bound keeps its bytes inside it.
    for (auto [buffer, type] : kMajor) {
      OpBuilder::InsertionGuard loopGuard(b);
      int64_t elemBytes = getElementBytes(type.getElementType());
      int64_t perChunk = kChunkBytes / elemBytes;
      auto loop = scf::ForOp::create(
          b, loc, tid, idx(type.getRows() * chunksPerRow), idx(threads));
      b.setInsertionPointToStart(loop.getBody());
      Value c = loop.getInductionVar();
      Value row = arith::DivUIOp::create(b, loc, c, idx(chunksPerRow));
      Value logical = arith::RemUIOp::create(b, loc, c, idx(chunksPerRow));
      Value physical = arith::XOrIOp::create(
          b, loc, logical,
          arith::RemUIOp::create(b, loc, row, idx(chunksPerRow)));
      Value address = byteOffset(buffer, add(mul(row, idx(kSwizzleBytes)),
                                             mul(physical, idx(kChunkBytes))));
      // The chunk's kept elements [lo, hi) of 0 .. perChunk.
      Value start = mul(logical, idx(perChunk));
      auto clampTo = [&](Value v, int64_t hiBound) {
        return arith::MinSIOp::create(
            b, loc, arith::MaxSIOp::create(b, loc, v, idx(0)), idx(hiBound));
      };
      Value lo =
          from ? clampTo(arith::SubIOp::create(b, loc, from, start), perChunk)
               : idx(0);
      Value hi = arith::MaxSIOp::create(
          b, loc,
          clampTo(arith::SubIOp::create(b, loc, valid, start), perChunk), lo);
      Value crossed = arith::OrIOp::create(
          b, loc, cmp(arith::CmpIPredicate::ne, lo, idx(0)),
          cmp(arith::CmpIPredicate::ne, hi, idx(perChunk)));
      auto masked = scf::IfOp::create(b, loc, crossed, false);
      b.setInsertionPoint(masked.thenBlock()->getTerminator());
      // Byte masks of the four words: bytes [lo, hi) of the chunk kept.
      Value loByte = mul(lo, idx(elemBytes)), hiByte = mul(hi, idx(elemBytes));
      auto below = [&](Value bytes) { // the low `bytes` (0..4) bytes set
        Value bits =
            arith::IndexCastOp::create(b, loc, i64, mul(bytes, idx(8)));
        Value ones = arith::SubIOp::create(
            b, loc, arith::ShLIOp::create(b, loc, c64(1), bits), c64(1));
        return arith::TruncIOp::create(b, loc, i32, ones).getResult();
      };
      Value mask = LLVM::UndefOp::create(b, loc, vecType);
      for (int64_t w = 0; w < 4; ++w) {
        Value wLo =
            clampTo(arith::SubIOp::create(b, loc, loByte, idx(4 * w)), 4);
        Value wHi =
            clampTo(arith::SubIOp::create(b, loc, hiByte, idx(4 * w)), 4);
        Value word = arith::AndIOp::create(
            b, loc, below(wHi),
            arith::XOrIOp::create(b, loc, below(wLo), c32(-1)));
        mask = LLVM::InsertElementOp::create(b, loc, mask, word, c32(w));
      }
      Value old = LLVM::LoadOp::create(b, loc, vecType, address,
                                       /*alignment=*/kChunkBytes);
      LLVM::StoreOp::create(b, loc, LLVM::AndOp::create(b, loc, old, mask),
                            address, /*alignment=*/kChunkBytes);
    }
    // wgmma reads shared memory through the async proxy: make the zeros
    // visible to it, then wait for every consumer's share.
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    NVVM::BarrierOp::create(b, loc, Type(), c32(kZeroKTailBarrier),
                            c32(threads), NVVM::BarrierReductionAttr(),
                            Value());
  }
  mapping.map(op.getMasked(), tiles);
  return success();
}
