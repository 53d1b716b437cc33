//===- RingPutToNVVM.cpp - the producer side of the stage ring -> NVVM ----===//
//
// ggemm.ring_put: the producer thread waits for the slot's empty mbarrier,
// announces the slot's bytes on its full mbarrier and issues the TMA loads
// of the position's tiles and FP8 scales into it (multicast to the
// cluster's CTAs where the ring says so); gathered rows go by cp.async from
// the whole producer warpgroup, weight scales by plain loads.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::nvvm;

LogicalResult KernelTranslator::translateRingPut(RingPutOp op) {
  Value position = lookup(op.getPosition(), op);
  if (!position)
    return failure();
  Value slot = ringSlot(position);
  // Weight scales are read with plain loads before the wait, so that their
  // latency overlaps it; they are written into the slot after it.
  SmallVector<std::pair<LoadScalesOp, unsigned>> weightScales;
  for (auto [index, entry] : llvm::enumerate(op.getTiles()))
    if (auto load = entry.getDefiningOp<LoadScalesOp>();
        load && load.getSource().getType().getRank() == 3)
      weightScales.push_back({load, index});
  SmallVector<SmallVector<Value>> weightScaleValues;
  for (auto [load, index] : weightScales)
    weightScaleValues.push_back(loadWeightScales(load));
  // Gathered rows (the whole producer warpgroup runs this; TMA cannot
  // gather on sm_90): warp w copies the tile rows [w R/4, (w + 1) R/4), and
  // its lane l reads the x rows of its rows l, l + 32, ... from the gather
  // indices before the wait, like the weight scales; rows past the
  // segment's end, and indices outside x, become -1 (zero-filled).
  Value lane, producerThread, warpRow0;
  SmallVector<Value> gatheredRows;
  if (facts.gather) {
    producerThread = arith::RemUIOp::create(b, loc, tid, idx(128));
    lane = arith::RemUIOp::create(b, loc, tid, idx(32));
    Value xRows = param(KernelParam(facts.xRowsParam()));
    for (Value entry : op.getTiles()) {
      auto gathered = entry.getDefiningOp<LoadTileOp>();
      if (!gathered || !gathered.getGather())
        continue;
      Value row0 = lookup(gathered.getIndices()[0], gathered);
      Value end = lookup(gathered.getGatherEnd(), gathered);
      if (!row0 || !end)
        return failure();
      int64_t warpRows = gathered.getType().getRows() / 4;
      warpRow0 = mul(arith::DivUIOp::create(b, loc, producerThread, idx(32)),
                     idx(warpRows));
      for (int64_t q = 0; q < llvm::divideCeil(warpRows, 32); ++q) {
        Value r = add(add(row0, warpRow0), add(lane, idx(32 * q)));
        Value inSegment = cmp(arith::CmpIPredicate::ult, r, end);
        Value safe = arith::SelectOp::create(b, loc, inSegment, r, idx(0));
        Value index =
            load(i32, elementAddress(param(KernelParam(facts.gatherParam())),
                                     i32, safe));
        // Unsigned: a negative index is past x too.
        Value inX = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ult,
            arith::ExtSIOp::create(b, loc, i64, index), xRows);
        gatheredRows.push_back(arith::SelectOp::create(
            b, loc, arith::AndIOp::create(b, loc, inSegment, inX), index,
            c32(-1)));
      }
    }
  }
  // With the whole warpgroup here, one thread arrives and issues the
  // whole-box loads.
  auto leaderOnly = [&](function_ref<void()> body) {
    if (!facts.gather)
      return body();
    auto ifOp = scf::IfOp::create(
        b, loc, cmp(arith::CmpIPredicate::eq, producerThread, idx(0)), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  };
  // Wait until the consumers released the slot's previous use (the first
  // round passes at once: the empty barrier starts in the other phase).
  Value emptyParity =
      arith::XOrIOp::create(b, loc, ringParity(position), c32(1));
  NVVM::MBarrierTryWaitParityOp::create(b, loc, ringBarrier(slot, true),
                                        emptyParity, c32(kWaitTicks));
  Value full = ringBarrier(slot, false);
  // Stores to the slot before the arrival are visible to the consumers once
  // the full barrier completes (the arrival releases them). Weight scales
  // start the slot (a scale offset of 0 in ggemm.ring_get).
  for (auto [entry, values] : llvm::zip(weightScales, weightScaleValues)) {
    Value dst = ringBuffer(entry.second, slot);
    for (auto [i, value] : llvm::enumerate(values))
      LLVM::StoreOp::create(b, loc, value, elementAddress(dst, f32, idx(i)));
  }
  // Activation scales: TMA starts at the 16-byte-aligned row at or below
  // the tile's first row (the consumers' ggemm.ring_get has the difference
  // as its scale offset).
  DenseMap<unsigned, Value> alignedRows;
  for (auto [index, entry] : llvm::enumerate(op.getTiles())) {
    auto scales = entry.getDefiningOp<LoadScalesOp>();
    if (!scales || scales.getSource().getType().getRank() != 2)
      continue;
    Value row = lookup(scales.getIndices()[0], scales);
    if (!row)
      return failure();
    alignedRows[index] =
        arith::AndIOp::create(b, loc, row, idx(-kScalesSlackRows));
  }
  int64_t txBytes = 0;
  for (Value entry : op.getTiles()) {
    auto scales = entry.getDefiningOp<LoadScalesOp>();
    // Gathered rows arrive by cp.async, not TMA: no transaction bytes.
    if (auto tileLoad = entry.getDefiningOp<LoadTileOp>();
        tileLoad && tileLoad.getGather())
      continue;
    if (!scales)
      txBytes += getRingEntryBytes(entry.getType());
    else if (scales.getSource().getType().getRank() == 2)
      txBytes += 4 * (scales.getType().getCount() + kScalesSlackRows);
  }
  leaderOnly([&] {
    NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), full, c32(txBytes),
                                           NVVM::MemScopeKind::CTA,
                                           /*relaxed=*/false, Value());
  });
  for (auto [index, tile] : llvm::enumerate(op.getTiles())) {
    if (auto scales = tile.getDefiningOp<LoadScalesOp>()) {
      if (scales.getSource().getType().getRank() == 2 &&
          failed(putActivationScales(scales, alignedRows.lookup(index),
                                     ringBuffer(index, slot), full)))
        return failure();
      continue;
    }
    auto tileLoad = tile.getDefiningOp<LoadTileOp>();
    if (!tileLoad || !tile.hasOneUse())
      return op.emitOpError() << "expects tile " << index
                              << " to come from a ggemm.load_tile used only "
                                 "here (its TMA goes straight into the slot)";
    // A `k_end` is honoured by the consumers (ggemm.zero_k_tail): TMA
    // cannot stop at a segment's end, as the next segment's rows exist, so
    // the whole box is loaded.
    TileType type = tileLoad.getType();
    Value desc = param(tileLoad.getSource() == facts.x ? kADesc : kBDesc);
    SmallVector<Value> coords;
    if (failed(tmaCoordinates(tileLoad, tileLoad.getIndices(), coords)))
      return failure();
    // A box is one 128-byte swizzle row wide: an mn_major tile (rows
    // contiguous) is several boxes side by side along its rows.
    int64_t elemBytes = getElementBytes(type.getElementType());
    int64_t boxElems = kSwizzleBytes / elemBytes;
    int64_t boxes = type.isMNMajor() ? type.getRows() / boxElems : 1;
    int64_t boxBytes = type.getNumBytes() / boxes;
    Value dst = ringBuffer(index, slot);
    if (tileLoad.getGather()) {
      if (failed(putGatheredRows(type, coords[0], gatheredRows, lane, warpRow0,
                                 dst, full)))
        return failure();
      continue;
    }
    if (Value split = tileLoad.getSplit()) {
      // Gate rows, then the up rows `split` further on: the tile's two
      // halves, each loaded as a whole-box TMA of half the tile (k_major)
      // or as half its 128-byte column boxes (mn_major).
      Value offset = lookup(split, tileLoad);
      if (!offset)
        return failure();
      int64_t halfBoxes = type.isMNMajor() ? boxes / 2 : 1;
      int64_t halfBytes = type.getNumBytes() / 2;
      int64_t rowCoord = type.isMNMajor() ? 0 : 1;
      leaderOnly([&] {
        for (int64_t h = 0; h < 2; ++h) {
          for (int64_t j = 0; j < halfBoxes; ++j) {
            SmallVector<Value> at(coords);
            Value shift = idx(j * boxElems);
            if (h)
              shift = add(shift, offset);
            at[rowCoord] =
                arith::AddIOp::create(b, loc, coords[rowCoord], toI32(shift));
            Value boxDst = byteOffset(
                dst, idx(h * halfBytes + j * (halfBytes / halfBoxes)));
            NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
                b, loc,
                LLVM::AddrSpaceCastOp::create(b, loc, ptrCluster, boxDst), desc,
                at, full, ValueRange{}, Value(), Value(),
                NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
                NVVM::CTAGroupKindAttr(), Value());
          }
        }
      });
      continue;
    }
    std::optional<ArrayRef<int64_t>> shared = facts.ring.getMulticast();
    if (shared && llvm::is_contained(*shared, int64_t(index))) {
      // This CTA's 1/C of the (k_major) tile's rows, multicast into the
      // slot of every CTA of the cluster; the full mbarrier of each counts
      // the whole tile's bytes.
      int64_t sliceRows = type.getRows() / facts.clusterM;
      SmallVector<Value> at(coords);
      at[1] = arith::AddIOp::create(b, loc, coords[1],
                                    toI32(mul(clusterRank, idx(sliceRows))));
      Value sliceDst =
          byteOffset(dst, mul(clusterRank, idx(sliceRows * kSwizzleBytes)));
      Value mask = arith::ConstantIntOp::create(
          b, loc, (int64_t(1) << facts.clusterM) - 1, 16);
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, loc, LLVM::AddrSpaceCastOp::create(b, loc, ptrCluster, sliceDst),
          desc, at, full, ValueRange{}, mask, Value(), NVVM::TMALoadMode::TILE,
          /*isCTAOnly=*/false, NVVM::CTAGroupKindAttr(), Value());
      continue;
    }
    leaderOnly([&] {
      for (int64_t j = 0; j < boxes; ++j) {
        SmallVector<Value> at(coords);
        if (j)
          at[0] = arith::AddIOp::create(b, loc, coords[0], c32(j * boxElems));
        Value boxDst = j ? byteOffset(dst, idx(j * boxBytes)) : dst;
        Value dstCluster =
            LLVM::AddrSpaceCastOp::create(b, loc, ptrCluster, boxDst);
        NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
            b, loc, dstCluster, desc, at, full, ValueRange{}, Value(), Value(),
            NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
            NVVM::CTAGroupKindAttr(), Value());
      }
    });
  }
  return success();
}

LogicalResult KernelTranslator::putGatheredRows(TileType type, Value k0,
                                                ArrayRef<Value> sourceRows,
                                                Value lane, Value warpRow0,
                                                Value dst, Value full) {
  // Each producer warp copies its quarter of the tile's rows with cp.async,
  // 16 bytes a lane: one instruction covers 4 rows (8 lanes a 128-byte
  // row), so the lanes of a row read it whole. Lane l holds the x rows of
  // the warp's rows l, l + 32, ... (sourceRows); the 8 lanes of the warp's
  // row i take its x row from lane i % 32 (a shuffle). A row's 16-byte chunk c
  // goes to chunk c ^ (i % 8) of its 128-byte swizzle row, where the consumers'
  // wgmma reads it, as TMA would have put it. Rows of -1 and chunks past K are
  // zero-filled (source size 0), never read.
  Value x = param(KernelParam(facts.xParam()));
  Value lda = toIndex(param(KernelParam(facts.ldaParam())));
  int64_t elemBytes = getElementBytes(type.getElementType());
  int64_t chunkElems = 16 / elemBytes;
  Value chunk = arith::RemUIOp::create(b, loc, lane, idx(8));
  Value rowInGroup = arith::DivUIOp::create(b, loc, lane, idx(8));
  Value col = add(toIndex(k0), mul(chunk, idx(chunkElems)));
  Value inK = cmp(arith::CmpIPredicate::ult, col, k);
  Value allLanes = c32(-1);
  for (int64_t j = 0; j < type.getRows() / 16; ++j) {
    int64_t q = (4 * j) / 32;
    Value srcLane = toI32(add(idx((4 * j) % 32), rowInGroup));
    Value row =
        NVVM::ShflOp::create(b, loc, i32, allLanes, sourceRows[q], srcLane,
                             c32(0x1f), NVVM::ShflKind::idx, UnitAttr())
            .getResult();
    Value ok = arith::AndIOp::create(
        b, loc, inK,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, row, c32(0)));
    Value safeRow = arith::SelectOp::create(b, loc, ok, toIndex(row), idx(0));
    Value safeCol = arith::SelectOp::create(b, loc, ok, col, idx(0));
    Value src = elementAddress(x, type.getElementType(),
                               add(mul(safeRow, lda), safeCol));
    Value tileRow = add(warpRow0, add(idx(4 * j), rowInGroup));
    Value swizzled = arith::XOrIOp::create(
        b, loc, chunk, arith::RemUIOp::create(b, loc, tileRow, idx(8)));
    Value chunkDst = byteOffset(
        dst, add(mul(tileRow, idx(kSwizzleBytes)), mul(swizzled, idx(16))));
    Value size = arith::SelectOp::create(b, loc, ok, c32(16), c32(0));
    NVVM::CpAsyncOp::create(b, loc, chunkDst, src, 16,
                            NVVM::LoadCacheModifierKind::CG, size);
  }
  // Each lane's arrival completes when its copies have landed.
  NVVM::CpAsyncMBarrierArriveOp::create(b, loc, full, /*noinc=*/true);
  return success();
}

LogicalResult KernelTranslator::putActivationScales(LoadScalesOp load,
                                                    Value alignedRow, Value dst,
                                                    Value full) {
  if (!load->hasOneUse())
    return load.emitOpError() << "expects to be used only by its ring_put";
  // One TMA box of the scales of one K block, from the aligned row. The
  // storage is MN-major ([K blocks, rows], rows innermost), so the
  // coordinates are (row, kb).
  Value kb = lookup(load.getIndices()[1], load);
  if (!kb)
    return failure();
  SmallVector<Value> coords = {toI32(alignedRow), toI32(kb)};
  Value dstCluster = LLVM::AddrSpaceCastOp::create(b, loc, ptrCluster, dst);
  // A K-ragged kernel's b scales have their descriptor in the weight
  // scales' slot (kWScale).
  Value desc = param(load.getSource() == facts.xScale ? kAScaleDesc : kWScale);
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      b, loc, dstCluster, desc, coords, full, ValueRange{}, Value(), Value(),
      NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false, NVVM::CTAGroupKindAttr(),
      Value());
  return success();
}

SmallVector<Value> KernelTranslator::loadWeightScales(LoadScalesOp scales) {
  // w_scale is a dense [weights, ceil(N / 128), ceil(K / 128)] array; the
  // scales of weight-scale rows past its end are zero, like a TMA fill.
  Value weight = lookup(scales.getIndices()[0], scales),
        row = lookup(scales.getIndices()[1], scales),
        kb = lookup(scales.getIndices()[2], scales);
  Value zero =
      arith::ConstantFloatOp::create(b, loc, f32, APFloat(0.0f)).getResult();
  SmallVector<Value> values;
  for (int64_t i = 0; i < scales.getType().getCount(); ++i) {
    Value r = add(row, idx(i));
    Value inside = cmp(arith::CmpIPredicate::ult, r, scaleRows);
    auto read = scf::IfOp::create(b, loc, TypeRange{f32}, inside, true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(read.thenBlock());
      Value index = add(mul(add(mul(weight, scaleRows), r), scaleBlocks), kb);
      scf::YieldOp::create(
          b, loc, load(f32, elementAddress(param(kWScale), f32, index)));
      b.setInsertionPointToStart(read.elseBlock());
      scf::YieldOp::create(b, loc, zero);
    }
    values.push_back(read.getResult(0));
  }
  return values;
}
