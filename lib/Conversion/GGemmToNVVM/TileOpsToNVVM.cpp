//===- TileOpsToNVVM.cpp - store_tile -> the epilogue and its stores ------===//
//
// Each consumer warpgroup owns 64 rows of a tile: its share of the A tile
// and of the accumulator, which lives in its registers in wgmma's m64nNk16
// fragment layout (warp w of the warpgroup holds rows 16w + lane/4 (+8);
// register 4i + 2h + e holds column 8i + 2(lane % 4) + e of row half h).
// ggemm.store_tile applies the epilogue to those registers and writes y
// (masked, transposed or quantised; staged through shared memory and TMA
// in StagedStoreToNVVM.cpp); ggemm.mma and ggemm.promote are in
// MmaToNVVM.cpp.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include "ggemm/Dialect/GGemm/Transforms/Epilogue.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::nvvm;

/// The activation the store path applies: none for a gated epilogue,
/// whose SwiGLU and biases are applied before (gateAccumulator).
static Activation storeActivation(const KernelFacts &facts) {
  EpilogueAttr epilogue = facts.store.getEpilogueAttr();
  if (!epilogue || facts.gated)
    return Activation::none;
  return epilogue.getActivation();
}

Value KernelTranslator::rowDequant(Value row) {
  if (!facts.perRowXScale)
    return tileDequant;
  return mulFactors(
      b, loc,
      load(f32,
           elementAddress(param(KernelParam(facts.xScaleParam())), f32, row)),
      tileDequant);
}

Value KernelTranslator::elementDequant(Value rowFactor, Value col) {
  if (!facts.perChannelWScale)
    return rowFactor;
  Value channel =
      load(f32, elementAddress(param(KernelParam(facts.wScaleParam())), f32,
                               add(mul(dequantWeight, n), col)));
  return mulFactors(b, loc, rowFactor, channel);
}

void KernelTranslator::storeElement(Value value, Value rowScale,
                                    Value rowFactor, Value row, Value col,
                                    Value weight) {
  EpilogueAttr epilogue = facts.store.getEpilogueAttr();
  Value bias, old;
  if (facts.bias && !facts.gated)
    bias =
        load(f32, elementAddress(param(kBias), f32, add(mul(weight, n), col)));
  Value address =
      elementAddress(param(kY), facts.outElem, add(mul(row, ldy), col));
  bool readOld = epilogue && epilogue.getAccumulate() && !facts.atomic;
  if (readOld)
    old = load(facts.outElem, address);
  Value v = buildEpilogue(b, loc, value, elementDequant(rowFactor, col), bias,
                          storeActivation(facts), rowScale, old, facts.outElem);
  if (facts.atomic) {
    // y[row, col] += v as one atomic add (atom.global.add): rows of several
    // segments may add into one row of y.
    LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::fadd, address, v,
                              LLVM::AtomicOrdering::monotonic);
    return;
  }
  LLVM::StoreOp::create(b, loc, v, address);
}

Value KernelTranslator::accumulatorToF32(Value acc) {
  auto type = cast<LLVM::LLVMStructType>(acc.getType());
  int64_t registers = type.getBody().size();
  Value out = LLVM::UndefOp::create(
      b, loc,
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(registers, f32)));
  for (int64_t r = 0; r < registers; ++r)
    out = LLVM::InsertValueOp::create(
        b, loc, out,
        arith::SIToFPOp::create(b, loc, f32,
                                LLVM::ExtractValueOp::create(b, loc, acc, r)),
        r);
  return out;
}

Value KernelTranslator::gateAccumulator(Value acc, Value col0, Value weight,
                                        int64_t blockN) {
  // wgmma's fragments repeat every 8 columns, so the thread holding gate
  // column j of the tile also holds up column j + blockN / 2: register
  // 4 i + r (i < blockN / 16) pairs with 4 (i + blockN / 16) + r. The
  // gated values form an accumulator of half the columns.
  int64_t half = blockN / 2, fragments = half / 8;
  FragmentBase fragment = fragmentBase();
  Value colBase = add(col0, fragment.col);
  auto type =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(half / 2, f32));
  Value gated = LLVM::UndefOp::create(b, loc, type);
  // Bias columns past N are not read: their outputs are not stored.
  Value biasRow = facts.bias ? mul(weight, mul(n, idx(2))) : Value();
  for (int64_t i = 0; i < fragments; ++i) {
    for (int64_t e = 0; e < 2; ++e) {
      Value gateBias, upBias;
      if (facts.bias) {
        Value col = add(colBase, idx(8 * i + e));
        Value safe = arith::SelectOp::create(
            b, loc, cmp(arith::CmpIPredicate::ult, col, n), col, idx(0));
        gateBias =
            load(f32, elementAddress(param(kBias), f32, add(biasRow, safe)));
        upBias = load(
            f32, elementAddress(param(kBias), f32, add(biasRow, add(n, safe))));
      }
      for (int64_t h = 0; h < 2; ++h) {
        int64_t r = 4 * i + 2 * h + e;
        Value gate = LLVM::ExtractValueOp::create(b, loc, acc, r);
        Value up = LLVM::ExtractValueOp::create(b, loc, acc, r + 4 * fragments);
        Value v = buildGatedEpilogue(b, loc, gate, up, gateBias, upBias,
                                     Value(), Value(), f32);
        gated = LLVM::InsertValueOp::create(b, loc, gated, v, r);
      }
    }
  }
  return gated;
}

Value KernelTranslator::epiloguePair(Value v0, Value v1, Value rowScale,
                                     Value rowFactor, Value row, Value col,
                                     Value weight, Value oldPair) {
  auto pairType = VectorType::get({2}, facts.outElem);
  Value pair = LLVM::UndefOp::create(b, loc, pairType);
  Value values[2] = {v0, v1};
  for (int64_t e = 0; e < 2; ++e) {
    Value position = c32(e);
    Value bias, old;
    if (facts.bias && !facts.gated)
      bias = load(f32, elementAddress(param(kBias), f32,
                                      add(mul(weight, n), add(col, idx(e)))));
    if (oldPair)
      old = LLVM::ExtractElementOp::create(b, loc, oldPair, position);
    Value v = buildEpilogue(
        b, loc, values[e], elementDequant(rowFactor, add(col, idx(e))), bias,
        storeActivation(facts), rowScale, old, facts.outElem);
    pair = LLVM::InsertElementOp::create(b, loc, pair, v, position);
  }
  return pair;
}

void KernelTranslator::storePair(Value v0, Value v1, Value rowScale,
                                 Value rowFactor, Value row, Value col,
                                 Value weight) {
  EpilogueAttr epilogue = facts.store.getEpilogueAttr();
  auto pairType = VectorType::get({2}, facts.outElem);
  int64_t pairBytes = 2 * getElementBytes(facts.outElem);
  Value address =
      elementAddress(param(kY), facts.outElem, add(mul(row, ldy), col));
  Value oldPair;
  if (epilogue && epilogue.getAccumulate())
    oldPair = LLVM::LoadOp::create(b, loc, pairType, address, pairBytes);
  LLVM::StoreOp::create(
      b, loc,
      epiloguePair(v0, v1, rowScale, rowFactor, row, col, weight, oldPair),
      address, pairBytes);
}

LogicalResult KernelTranslator::translateStore(StoreTileOp op) {
  Value acc = lookup(op.getAcc(), op), row0 = lookup(op.getRow(), op),
        rowEnd = lookup(op.getRowEnd(), op), col0 = lookup(op.getCol(), op);
  Value weight = op.getWeight() ? lookup(op.getWeight(), op) : Value();
  if (!acc || !row0 || !rowEnd || !col0 || (op.getWeight() && !weight))
    return failure();
  // An INT8 product's int32 registers become f32 ones first (cvt.rn.f32.s32:
  // exact below 2^24); the dequantisation and the epilogue follow as for
  // FP8.
  if (op.getAcc().getType().getElementType().isSignlessInteger(32))
    acc = accumulatorToF32(acc);
  // FP8 / INT8 tensor-wise and per-row scales: the tensor-wise factors once
  // per tile, the per-row and per-channel ones where the rows and columns
  // are.
  tileDequant = Value();
  dequantWeight = Value();
  if (op.getXScale()) {
    dequantWeight = lookup(op.getWScaleIndex(), op);
    if (!dequantWeight)
      return failure();
    if (!facts.perRowXScale) {
      Value at = lookup(op.getXScaleIndex(), op);
      if (!at)
        return failure();
      tileDequant =
          load(f32, elementAddress(param(KernelParam(facts.xScaleParam())), f32,
                                   at));
    }
    if (!facts.perChannelWScale)
      tileDequant = mulFactors(
          b, loc, tileDequant,
          load(f32, elementAddress(param(KernelParam(facts.wScaleParam())), f32,
                                   dequantWeight)));
  }
  if (op.getTransposed())
    return translateTransposedStore(op, acc, row0, rowEnd, col0, weight);
  // A 128-row ping-pong tile: the warpgroup stores its two 64-row blocks
  // one after the other, each as a warpgroup's rows (through the same
  // store boxes).
  if (facts.rowBlocks == 1)
    return translateStoreRows(op, acc, row0, rowEnd, col0, weight);
  Value wholeWarpgroup = rowWarpgroup;
  for (auto [rb, part] :
       llvm::enumerate(splitRowBlocks(acc, facts.rowBlocks))) {
    rowWarpgroup = idx(rb);
    if (failed(translateStoreRows(op, part, row0, rowEnd, col0, weight)))
      return failure();
  }
  rowWarpgroup = wholeWarpgroup;
  return success();
}

LogicalResult KernelTranslator::translateStoreRows(StoreTileOp op, Value acc,
                                                   Value row0, Value rowEnd,
                                                   Value col0, Value weight) {
  int64_t blockN = op.getAcc().getType().getShape()[1];
  if (facts.gated) {
    acc = gateAccumulator(acc, col0, weight, blockN);
    blockN /= 2;
  }
  // The masked stores: an e4m3 y's quantised ones, or the plain ones.
  auto storeMasked = [&]() {
    if (facts.yScale)
      storeQuantized(acc, row0, rowEnd, col0, weight, blockN);
    else
      storeDirect(acc, row0, rowEnd, col0, weight, blockN);
  };
  if (!op.getStagingAttr()) {
    storeMasked();
    return success();
  }
  // Staged (ggemm-tma-store): a warpgroup whose 64 rows all belong to the
  // tile's group stores them by TMA, when y admits a descriptor: a 16-byte
  // aligned address, row stride and row (the runtime's condition for
  // passing one; a TMA store clips columns past N only to 16-byte units,
  // seen on an H100 with 7 f32 columns). Rows at or past row_end are the
  // next group's, so a warpgroup that reaches them stores with the masked
  // stores. The condition is the same for all threads of a warpgroup,
  // which meet at named barriers.
  int64_t elemBytes = getElementBytes(facts.outElem);
  Value yAddress = LLVM::PtrToIntOp::create(b, loc, i64, param(kY));
  auto multipleOf16 = [&](Value bytes) {
    return cmp(arith::CmpIPredicate::eq,
               arith::RemUIOp::create(b, loc, bytes, idx(16)), idx(0));
  };
  Value yAligned = arith::AndIOp::create(
      b, loc,
      cmp(arith::CmpIPredicate::eq,
          arith::RemUIOp::create(b, loc, yAddress, c64(16)), c64(0)),
      arith::AndIOp::create(b, loc, multipleOf16(mul(ldy, idx(elemBytes))),
                            multipleOf16(mul(n, idx(elemBytes)))));
  Value wgRow = add(row0, mul(rowWarpgroup, idx(64)));
  // One-row stores (a scattered y) store only the rows before row_end:
  // every warpgroup stages.
  Value whole =
      op.getStagingAttr().getRowStores()
          ? arith::ConstantIntOp::create(b, loc, i1, 1).getResult()
          : cmp(arith::CmpIPredicate::ule, add(wgRow, idx(64)), rowEnd);
  auto staged = scf::IfOp::create(
      b, loc, arith::AndIOp::create(b, loc, yAligned, whole), true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(staged.thenBlock());
  storeStaged(op, acc, wgRow, rowEnd, col0, weight, blockN);
  b.setInsertionPointToStart(staged.elseBlock());
  storeMasked();
  return success();
}

void KernelTranslator::storeDirect(Value acc, Value row0, Value rowEnd,
                                   Value col0, Value weight, int64_t blockN) {
  FragmentBase fragment = fragmentBase();
  Value rowBase = add(row0, fragment.row);
  Value colBase = add(col0, fragment.col);
  // A thread's two adjacent columns go out as one vector store when y's
  // rows keep pairs aligned (the runtime only guarantees the element's
  // alignment); the scalar path covers the rest and the N tail.
  int64_t pairBytes = 2 * getElementBytes(facts.outElem);
  Value yAddress = LLVM::PtrToIntOp::create(b, loc, i64, param(kY));
  Value pairAligned = arith::AndIOp::create(
      b, loc,
      cmp(arith::CmpIPredicate::eq,
          arith::RemUIOp::create(b, loc, yAddress, c64(pairBytes)), c64(0)),
      cmp(arith::CmpIPredicate::eq, arith::RemUIOp::create(b, loc, ldy, idx(2)),
          idx(0)));
  OpBuilder::InsertionGuard guard(b);
  for (int64_t h = 0; h < 2; ++h) {
    Value row = add(rowBase, idx(8 * h));
    // Rows at or past the group's end belong to another group.
    auto rowIf = scf::IfOp::create(
        b, loc, cmp(arith::CmpIPredicate::ult, row, rowEnd), false);
    OpBuilder::InsertionGuard rowGuard(b);
    b.setInsertionPointToStart(rowIf.thenBlock());
    Value rowScale;
    if (facts.rowScale)
      rowScale = load(f32, elementAddress(param(kRowScale), f32, row));
    Value rowFactor = rowDequant(row);
    if (facts.scatter) {
      // The row of y the segment row goes to, if it is one of y's.
      Value target = toIndex(
          load(i32, elementAddress(param(KernelParam(facts.scatterParam())),
                                   i32, row)));
      Value yRows = toIndex(param(KernelParam(facts.yRowsParam())));
      auto inside = scf::IfOp::create(
          b, loc, cmp(arith::CmpIPredicate::ult, target, yRows), false);
      b.setInsertionPointToStart(inside.thenBlock());
      row = target;
    }
    for (int64_t i = 0; i < blockN / 8; ++i) {
      Value col = add(colBase, idx(8 * i));
      Value v0 = LLVM::ExtractValueOp::create(b, loc, acc,
                                              ArrayRef<int64_t>{4 * i + 2 * h});
      Value v1 = LLVM::ExtractValueOp::create(
          b, loc, acc, ArrayRef<int64_t>{4 * i + 2 * h + 1});
      // Atomic adds go element by element.
      Value pairOk = arith::AndIOp::create(
          b, loc,
          facts.atomic ? arith::ConstantIntOp::create(b, loc, i1, 0)
                       : pairAligned,
          cmp(arith::CmpIPredicate::ult, add(col, idx(1)), n));
      auto pairIf = scf::IfOp::create(b, loc, pairOk, /*withElse=*/true);
      OpBuilder::InsertionGuard pairGuard(b);
      b.setInsertionPointToStart(pairIf.thenBlock());
      storePair(v0, v1, rowScale, rowFactor, row, col, weight);
      b.setInsertionPointToStart(pairIf.elseBlock());
      for (int64_t e = 0; e < 2; ++e) {
        Value colE = add(col, idx(e));
        auto colIf = scf::IfOp::create(
            b, loc, cmp(arith::CmpIPredicate::ult, colE, n), false);
        OpBuilder::InsertionGuard colGuard(b);
        b.setInsertionPointToStart(colIf.thenBlock());
        storeElement(e ? v1 : v0, rowScale, rowFactor, row, colE, weight);
      }
    }
  }
}

KernelTranslator::QuantizedBlock
KernelTranslator::quantizeBlock(Value &acc, int64_t block, Value colBase,
                                Value weight, ArrayRef<Value> rowScale,
                                ArrayRef<Value> rowFactor) {
  // ggemm.quantize's 1x128 arithmetic on the epilogue's f32 values. A wgmma
  // fragment gives each lane of a quad (the four lanes with one lane / 4)
  // two adjacent columns of every 8 of the quad's two rows, so a row's 128
  // columns are the quad's 4 x 32 values: each lane takes the maximum of
  // its own, two butterfly shuffles (lane ^ 1, lane ^ 2) that of the block.
  // The shuffles involve the whole warp: every lane computes its values.
  // They replace their accumulator registers, both rows of a column
  // together: a column's bias is read once and used at once (merged loads
  // of the two rows, far apart, kept 32 biases beside the accumulator and
  // spilled). Columns at or past N read column N - 1 and stay out of the
  // maximum.
  constexpr double kE4m3Max = 448.0;
  Value zero = arith::ConstantFloatOp::create(b, loc, f32, APFloat(0.0f));
  Value lastCol = arith::SubIOp::create(b, loc, n, idx(1));
  QuantizedBlock out;
  Value amax[2] = {zero, zero};
  for (int64_t i = 16 * block; i < 16 * (block + 1); ++i) {
    Value col = add(colBase, idx(8 * i));
    out.cols.push_back(col);
    for (int64_t e = 0; e < 2; ++e) {
      Value colE = add(col, idx(e));
      Value colOk = cmp(arith::CmpIPredicate::ult, colE, n);
      Value safeCol = arith::SelectOp::create(
          b, loc, colOk, colE, arith::MinUIOp::create(b, loc, colE, lastCol));
      Value bias;
      if (facts.bias && !facts.gated)
        bias = load(f32, elementAddress(param(kBias), f32,
                                        add(mul(weight, n), safeCol)));
      for (int64_t h = 0; h < 2; ++h) {
        int64_t reg = 4 * i + 2 * h + e;
        Value v = buildEpilogue(
            b, loc,
            LLVM::ExtractValueOp::create(b, loc, acc, ArrayRef<int64_t>{reg}),
            elementDequant(rowFactor[h], safeCol), bias, storeActivation(facts),
            rowScale[h], Value(), f32);
        acc = LLVM::InsertValueOp::create(b, loc, acc, v, reg);
        Value magnitude = arith::MaximumFOp::create(
            b, loc, v, arith::NegFOp::create(b, loc, v));
        amax[h] = arith::MaximumFOp::create(
            b, loc, amax[h],
            arith::SelectOp::create(b, loc, colOk, magnitude, zero));
      }
    }
  }
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t delta : {1, 2}) {
      Value other =
          NVVM::ShflOp::create(b, loc, f32, c32(-1), amax[h], c32(delta),
                               c32(31), NVVM::ShflKind::bfly, UnitAttr())
              .getResult();
      amax[h] = arith::MaximumFOp::create(b, loc, amax[h], other);
    }
    std::tie(out.scale[h], out.factor[h]) =
        buildFp8ScaleAndFactor(b, loc, amax[h], kE4m3Max);
  }
  return out;
}

Value KernelTranslator::quantizedPair(Value acc, int64_t block, int64_t j,
                                      int64_t h, Value factor) {
  int64_t reg = 4 * (16 * block + j) + 2 * h;
  Value lo = arith::MulFOp::create(
      b, loc, LLVM::ExtractValueOp::create(b, loc, acc, reg), factor);
  Value hi = arith::MulFOp::create(
      b, loc, LLVM::ExtractValueOp::create(b, loc, acc, reg + 1), factor);
  // The first operand goes to the upper byte: column col + 1.
  return NVVM::ConvertF32x2ToF8x2Op::create(
      b, loc, b.getI16Type(), hi, lo, NVVM::FPRoundingMode::RN,
      NVVM::SaturationMode::SATFINITE, /*relu=*/false, facts.outElem);
}

void KernelTranslator::storeBlockScale(Value scale, Value row, Value blockCol) {
  // Once per row, by the quad's first lane, where the block has columns.
  Value lane = arith::RemUIOp::create(b, loc, tid, idx(32));
  Value quadLeader = cmp(arith::CmpIPredicate::eq,
                         arith::RemUIOp::create(b, loc, lane, idx(4)), idx(0));
  auto scaleIf = scf::IfOp::create(
      b, loc,
      arith::AndIOp::create(b, loc, quadLeader,
                            cmp(arith::CmpIPredicate::ult, blockCol, n)),
      false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(scaleIf.thenBlock());
  Value rowStride = toIndex(param(KernelParam(facts.yScaleRowStrideParam())));
  Value colStride = toIndex(param(KernelParam(facts.yScaleColStrideParam())));
  Value at =
      add(mul(row, rowStride),
          mul(arith::DivUIOp::create(b, loc, blockCol, idx(128)), colStride));
  LLVM::StoreOp::create(
      b, loc, scale,
      elementAddress(param(KernelParam(facts.yScaleParam())), f32, at));
}

void KernelTranslator::storeQuantized(Value acc, Value row0, Value rowEnd,
                                      Value col0, Value weight,
                                      int64_t blockN) {
  // Masked stores: rows past row_end compute their values too (the
  // block maximum's shuffles involve the whole warp), from row 0's factors
  // (in bounds, unused), and store nothing.
  FragmentBase fragment = fragmentBase();
  Value rowBase = add(row0, fragment.row);
  Value colBase = add(col0, fragment.col);
  // Pairs of e4m3 bytes go out as 16-bit stores where y keeps them aligned.
  Value yAddress = LLVM::PtrToIntOp::create(b, loc, i64, param(kY));
  Value pairAligned = arith::AndIOp::create(
      b, loc,
      cmp(arith::CmpIPredicate::eq,
          arith::RemUIOp::create(b, loc, yAddress, c64(2)), c64(0)),
      cmp(arith::CmpIPredicate::eq, arith::RemUIOp::create(b, loc, ldy, idx(2)),
          idx(0)));
  OpBuilder::InsertionGuard guard(b);
  Value rows[2], rowOk[2], rowScale[2], rowFactor[2];
  for (int64_t h = 0; h < 2; ++h) {
    rows[h] = add(rowBase, idx(8 * h));
    rowOk[h] = cmp(arith::CmpIPredicate::ult, rows[h], rowEnd);
    Value safeRow = arith::SelectOp::create(b, loc, rowOk[h], rows[h], idx(0));
    if (facts.rowScale)
      rowScale[h] = load(f32, elementAddress(param(kRowScale), f32, safeRow));
    rowFactor[h] = rowDequant(safeRow);
  }
  for (int64_t block = 0; block < blockN / 128; ++block) {
    QuantizedBlock q =
        quantizeBlock(acc, block, colBase, weight, rowScale, rowFactor);
    Value blockCol = add(col0, idx(128 * block));
    for (int64_t h = 0; h < 2; ++h) {
      Value row = rows[h];
      auto rowIf = scf::IfOp::create(b, loc, rowOk[h], false);
      OpBuilder::InsertionGuard rowGuard(b);
      b.setInsertionPointToStart(rowIf.thenBlock());
      storeBlockScale(q.scale[h], row, blockCol);
      for (auto [j, col] : llvm::enumerate(q.cols)) {
        Value packed = quantizedPair(acc, block, j, h, q.factor[h]);
        Value address =
            elementAddress(param(kY), b.getI8Type(), add(mul(row, ldy), col));
        Value pairOk = arith::AndIOp::create(
            b, loc, pairAligned,
            cmp(arith::CmpIPredicate::ult, add(col, idx(1)), n));
        auto pairIf = scf::IfOp::create(b, loc, pairOk, /*withElse=*/true);
        OpBuilder::InsertionGuard pairGuard(b);
        b.setInsertionPointToStart(pairIf.thenBlock());
        LLVM::StoreOp::create(b, loc, packed, address, /*alignment=*/2);
        b.setInsertionPointToStart(pairIf.elseBlock());
        for (int64_t e = 0; e < 2; ++e) {
          auto colIf = scf::IfOp::create(
              b, loc, cmp(arith::CmpIPredicate::ult, add(col, idx(e)), n),
              false);
          OpBuilder::InsertionGuard colGuard(b);
          b.setInsertionPointToStart(colIf.thenBlock());
          Value byte = arith::TruncIOp::create(
              b, loc, b.getI8Type(),
              e ? arith::ShRUIOp::create(
                      b, loc, packed,
                      arith::ConstantIntOp::create(b, loc, b.getI16Type(), 8))
                      .getResult()
                : packed);
          LLVM::StoreOp::create(
              b, loc, byte,
              elementAddress(param(kY), b.getI8Type(),
                             add(mul(row, ldy), add(col, idx(e)))));
        }
      }
    }
  }
}

LogicalResult KernelTranslator::translateTransposedStore(StoreTileOp op,
                                                         Value acc, Value row0,
                                                         Value rowEnd,
                                                         Value col0,
                                                         Value weight) {
  // The accumulator is the output tile transposed (ggemm-swap-ab): the
  // thread's fragment rows are output columns, its fragment columns output
  // rows. Adjacent registers are adjacent rows of one column, so each
  // element is stored on its own (the tile has few rows).
  int64_t tokens = op.getAcc().getType().getShape()[1];
  FragmentBase fragment = fragmentBase();
  Value colBase = add(col0, fragment.row);
  Value rowBase = add(row0, fragment.col);
  OpBuilder::InsertionGuard guard(b);
  // Row masks first (rows at or past the group's end belong to another
  // group), then the column mask; the row scale is loaded once per row.
  for (int64_t i = 0; i < tokens / 8; ++i) {
    for (int64_t e = 0; e < 2; ++e) {
      Value row = add(rowBase, idx(8 * i + e));
      auto rowIf = scf::IfOp::create(
          b, loc, cmp(arith::CmpIPredicate::ult, row, rowEnd), false);
      OpBuilder::InsertionGuard rowGuard(b);
      b.setInsertionPointToStart(rowIf.thenBlock());
      Value rowScale;
      if (facts.rowScale)
        rowScale = load(f32, elementAddress(param(kRowScale), f32, row));
      Value rowFactor = rowDequant(row);
      for (int64_t h = 0; h < 2; ++h) {
        Value col = add(colBase, idx(8 * h));
        auto colIf = scf::IfOp::create(
            b, loc, cmp(arith::CmpIPredicate::ult, col, n), false);
        OpBuilder::InsertionGuard colGuard(b);
        b.setInsertionPointToStart(colIf.thenBlock());
        Value v = LLVM::ExtractValueOp::create(
            b, loc, acc, ArrayRef<int64_t>{4 * i + 2 * h + e});
        storeElement(v, rowScale, rowFactor, row, col, weight);
      }
    }
  }
  return success();
}
