//===- StagedStoreToNVVM.cpp - the epilogue through shared memory and TMA -===//
//
// ggemm-tma-store's staged store_tile: each consumer warpgroup writes its
// epilogue values into its 128-byte-swizzled store boxes in shared memory,
// then one thread stores each box with a TMA tensor store (or, for
// scattered rows, one-row bulk copies), and ggemm.store_drain waits for the
// stores before the boxes are written again or the kernel ends. The other
// stores of store_tile are in TileOpsToNVVM.cpp.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include "ggemm/Dialect/GGemm/Transforms/Epilogue.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::nvvm;

void KernelTranslator::storeStaged(StoreTileOp op, Value acc, Value wgRow,
                                   Value rowEnd, Value col0, Value weight,
                                   int64_t blockN) {
  StoreStagingAttr staging = op.getStagingAttr();
  bool rowStores = staging.getRowStores();
  EpilogueAttr epilogue = facts.store.getEpilogueAttr();
  int64_t elemBytes = getElementBytes(facts.outElem);
  int64_t cols = staging.getCols(), buffers = staging.getBuffers();
  int64_t boxBytes = staging.getBoxBytes();
  auto pairType = VectorType::get({2}, facts.outElem);
  int64_t pairBytes = 2 * elemBytes;
  Value lane = arith::RemUIOp::create(b, loc, tid, idx(32));
  Value laneRow = arith::DivUIOp::create(b, loc, lane, idx(4));
  Value laneCol = mul(arith::RemUIOp::create(b, loc, lane, idx(4)), idx(2));
  Value inGroup = arith::RemUIOp::create(b, loc, tid, idx(128));
  Value warpInGroup = arith::DivUIOp::create(b, loc, inGroup, idx(32));
  // The threads that issue (and so wait for) the warpgroup's TMA stores:
  // thread 0 for whole boxes, threads 0-63 for one box row each.
  Value leader = cmp(arith::CmpIPredicate::ult, inGroup,
                     idx(rowStores ? staging.getRows() : 1));
  Value barrier = toI32(add(warpgroup, idx(kStoreBarrierBase)));
  // The warpgroup's boxes: `buffers` of them, behind the other
  // warpgroups'.
  Value boxes = byteOffset(smem, add(idx(facts.layout.getStagingOffset()),
                                     mul(warpgroup, idx(buffers * boxBytes))));
  // The thread's rows (fragment rows h = 0, 1) inside a box, and their
  // 128-byte swizzle phase: a box row's 16-byte chunk c sits at chunk
  // c ^ (row % 8), and row % 8 = lane / 4.
  Value boxRow = add(mul(warpInGroup, idx(16)), laneRow);
  Value rowScales[2], rowFactors[2];
  Value rows[2];
  for (int64_t h = 0; h < 2; ++h) {
    rows[h] = add(add(wgRow, boxRow), idx(8 * h));
    // With one-row stores a warpgroup may hold rows at or past row_end
    // (not stored); their per-row factors are read at the tile's last row,
    // which is one of x's.
    if (rowStores)
      rows[h] = arith::SelectOp::create(
          b, loc, cmp(arith::CmpIPredicate::ult, rows[h], rowEnd), rows[h],
          arith::SubIOp::create(b, loc, rowEnd, idx(1)).getResult());
    if (facts.rowScale)
      rowScales[h] = load(f32, elementAddress(param(kRowScale), f32, rows[h]));
    rowFactors[h] = rowDequant(rows[h]);
  }
  // One-row stores: thread i (< 64) of the warpgroup stores box row i at
  // the y row it is scattered to, when it is a row of the tile inside y.
  Value storeRowOk, storeRowTarget;
  if (rowStores) {
    Value row = add(wgRow, inGroup);
    Value inTile = cmp(arith::CmpIPredicate::ult, row, rowEnd);
    Value safeRow = arith::SelectOp::create(b, loc, inTile, row, wgRow);
    auto targetIf =
        scf::IfOp::create(b, loc, TypeRange{i32},
                          arith::AndIOp::create(b, loc, leader, inTile), true);
    {
      OpBuilder::InsertionGuard targetGuard(b);
      b.setInsertionPointToStart(targetIf.thenBlock());
      Value target =
          load(i32, elementAddress(param(KernelParam(facts.scatterParam())),
                                   i32, safeRow));
      scf::YieldOp::create(b, loc, target);
      b.setInsertionPointToStart(targetIf.elseBlock());
      scf::YieldOp::create(b, loc, c32(-1));
    }
    // Unsigned: a negative target is outside y too.
    storeRowTarget = targetIf.getResult(0);
    Value yRows = toIndex(param(KernelParam(facts.yRowsParam())));
    storeRowOk = cmp(arith::CmpIPredicate::ult, toIndex(storeRowTarget), yRows);
  }
  Value yDesc = kernel.getArgument(facts.yDescParam());
  auto leaderOnly = [&](function_ref<void()> body) {
    auto ifOp = scf::IfOp::create(b, loc, leader, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  };
  auto meet = [&]() {
    NVVM::BarrierOp::create(b, loc, Type(), barrier, c32(128),
                            NVVM::BarrierReductionAttr(), Value());
  };
  for (int64_t j = 0; j < blockN / cols; ++j) {
    Value box = byteOffset(boxes, idx((j % buffers) * boxBytes));
    // The store that last read this box (`buffers` stores ago, possibly
    // of the previous tile) must have finished reading it.
    leaderOnly([&] {
      NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, buffers - 1,
                                           UnitAttr::get(ctx));
    });
    meet();
    if (facts.yScale) {
      // An e4m3 y: a box's 128 columns are one 1x128 block of each of its
      // rows, quantised here; its bytes go to the box as packed pairs.
      QuantizedBlock q = quantizeBlock(acc, j, add(col0, laneCol), weight,
                                       rowScales, rowFactors);
      Value blockCol = add(col0, idx(128 * j));
      for (int64_t h = 0; h < 2; ++h) {
        storeBlockScale(q.scale[h], rows[h], blockCol);
        Value rowInBox = add(boxRow, idx(8 * h));
        Value rowBytes = byteOffset(box, mul(rowInBox, idx(kSwizzleBytes)));
        for (int64_t ii = 0; ii < cols / 8; ++ii) {
          Value byte = add(laneCol, idx(8 * ii));
          Value chunk = arith::DivUIOp::create(b, loc, byte, idx(16));
          Value within = arith::RemUIOp::create(b, loc, byte, idx(16));
          Value swizzled = arith::XOrIOp::create(b, loc, chunk, laneRow);
          LLVM::StoreOp::create(
              b, loc, quantizedPair(acc, j, ii, h, q.factor[h]),
              byteOffset(rowBytes, add(mul(swizzled, idx(16)), within)),
              /*alignment=*/2);
        }
      }
    }
    for (int64_t h = 0; h < 2 && !facts.yScale; ++h) {
      Value rowInBox = add(boxRow, idx(8 * h));
      Value rowBytes = byteOffset(box, mul(rowInBox, idx(kSwizzleBytes)));
      for (int64_t ii = 0; ii < cols / 8; ++ii) {
        int64_t i = j * (cols / 8) + ii;
        Value v0 = LLVM::ExtractValueOp::create(
            b, loc, acc, ArrayRef<int64_t>{4 * i + 2 * h});
        Value v1 = LLVM::ExtractValueOp::create(
            b, loc, acc, ArrayRef<int64_t>{4 * i + 2 * h + 1});
        // Columns past N are clipped by TMA; their bias and old values are
        // not read (y's rows are whole 16-byte units, so a pair never
        // straddles N).
        Value col = add(col0, add(laneCol, idx(8 * i)));
        Value inside = cmp(arith::CmpIPredicate::ult, col, n);
        Value safeCol = arith::SelectOp::create(b, loc, inside, col, idx(0));
        Value oldPair;
        if (epilogue && epilogue.getAccumulate()) {
          Value address = elementAddress(param(kY), facts.outElem,
                                         add(mul(rows[h], ldy), safeCol));
          oldPair = LLVM::LoadOp::create(b, loc, pairType, address, pairBytes);
        }
        Value pair = epiloguePair(v0, v1, rowScales[h], rowFactors[h], rows[h],
                                  safeCol, weight, oldPair);
        // Byte offset of the pair in the box row, then swizzled.
        Value byte = mul(add(laneCol, idx(8 * ii)), idx(elemBytes));
        Value chunk = arith::DivUIOp::create(b, loc, byte, idx(16));
        Value within = arith::RemUIOp::create(b, loc, byte, idx(16));
        Value swizzled = arith::XOrIOp::create(b, loc, chunk, laneRow);
        LLVM::StoreOp::create(
            b, loc, pair,
            byteOffset(rowBytes, add(mul(swizzled, idx(16)), within)),
            pairBytes);
      }
    }
    // TMA reads shared memory through the async proxy.
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    meet();
    leaderOnly([&] {
      Value colCoord = toI32(add(col0, idx(j * cols)));
      auto store = [&](Value src, Value row) {
        NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
            b, loc, yDesc, src, ValueRange{colCoord, row}, Value(),
            NVVM::TMAStoreModeAttr::get(ctx, NVVM::TMAStoreMode::TILE),
            Value());
      };
      if (!rowStores) {
        store(box, toI32(wgRow));
      } else {
        auto rowIf = scf::IfOp::create(b, loc, storeRowOk, false);
        OpBuilder::InsertionGuard rowGuard(b);
        b.setInsertionPointToStart(rowIf.thenBlock());
        store(byteOffset(box, mul(inGroup, idx(kSwizzleBytes))),
              storeRowTarget);
      }
      // Every issuing thread commits a group (empty when it stored
      // nothing), so that its waits count the same groups as the others'.
      NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
    });
  }
}

LogicalResult KernelTranslator::translateStoreDrain(StoreDrainOp op) {
  // Only the thread that issued a warpgroup's stores can wait for them; the
  // other threads wait for it at the CTA's end (the kernel returns after
  // the roles, and the CTA's shared memory lives until all threads have).
  if (!facts.staged())
    return op.emitOpError() << "expects a staged ggemm.store_tile in the "
                               "launch (ggemm-tma-store)";
  // One-row stores are issued by the warpgroup's first 64 threads.
  StoreStagingAttr staging = facts.store.getStagingAttr();
  int64_t issuers = staging && staging.getRowStores() ? staging.getRows() : 1;
  Value inGroup = arith::RemUIOp::create(b, loc, tid, idx(128));
  auto ifOp = scf::IfOp::create(
      b, loc, cmp(arith::CmpIPredicate::ult, inGroup, idx(issuers)), false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, 0, UnitAttr());
  return success();
}
