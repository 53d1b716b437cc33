//===- TileOpsToNVVM.cpp - store_tile -> the epilogue and its stores ------===//
//
// Each consumer warpgroup owns 64 rows of a tile: its share of the A tile
// and of the accumulator, which lives in its registers in wgmma's m64nNk16
// fragment layout (warp w of the warpgroup holds rows 16w + lane/4 (+8);
// register 4i + 2h + e holds column 8i + 2(lane % 4) + e of row half h).
// ggemm.store_tile applies the epilogue to those registers and writes y
// (staged through shared memory and TMA, masked, transposed or quantised);
// ggemm.mma and ggemm.promote are in MmaToNVVM.cpp.
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
