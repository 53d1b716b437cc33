//===- MmaToNVVM.cpp - mma and promote -> wgmma and FP8 promotion ---------===//
//
// Each consumer warpgroup owns 64 rows of a tile: its share of the A tile
// and of the accumulator, which lives in its registers in wgmma's m64nNk16
// fragment layout (warp w of the warpgroup holds rows 16w + lane/4 (+8);
// register 4i + 2h + e holds column 8i + 2(lane % 4) + e of row half h).
// ggemm.mma issues the wgmmas of one K block; ggemm.promote scales an FP8
// K block's product by its block scales into the accumulator.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <cassert>
#include <functional>
#include <numeric>

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::nvvm;

static NVVM::WGMMATypes wgmmaType(Type t) {
  if (t.isBF16())
    return NVVM::WGMMATypes::bf16;
  if (t.isF16())
    return NVVM::WGMMATypes::f16;
  if (isa<Float8E4M3FNType>(t))
    return NVVM::WGMMATypes::e4m3;
  if (isInt8(t))
    return NVVM::WGMMATypes::s8;
  return NVVM::WGMMATypes::e5m2;
}

Value KernelTranslator::wgmmaDescriptor(Value smemAddress, int64_t leadingBytes,
                                        int64_t strideBytes) {
  // Start address >> 4 in bits [0, 14), leading byte offset >> 4 in
  // [16, 30), stride byte offset >> 4 in [32, 46), swizzle mode 1 (128 B)
  // in [62, 64).
  Value addr = LLVM::PtrToIntOp::create(b, loc, i64, smemAddress);
  Value addrField = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, addr, c64(4)), c64(0x3fff));
  uint64_t constant = (uint64_t(leadingBytes >> 4) & 0x3fff) << 16 |
                      (uint64_t(strideBytes >> 4) & 0x3fff) << 32 |
                      uint64_t(1) << 62;
  return arith::OrIOp::create(b, loc, addrField,
                              c64(static_cast<int64_t>(constant)));
}

SmallVector<Value> KernelTranslator::splitRowBlocks(Value acc, int64_t blocks) {
  if (blocks == 1)
    return {acc};
  auto type = cast<LLVM::LLVMStructType>(acc.getType());
  int64_t perBlock = type.getBody().size() / blocks;
  auto blockType = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(perBlock, type.getBody().front()));
  SmallVector<Value> parts;
  for (int64_t rb = 0; rb < blocks; ++rb) {
    Value part = LLVM::UndefOp::create(b, loc, blockType);
    for (int64_t r = 0; r < perBlock; ++r)
      part = LLVM::InsertValueOp::create(
          b, loc, part,
          LLVM::ExtractValueOp::create(b, loc, acc, rb * perBlock + r), r);
    parts.push_back(part);
  }
  return parts;
}

Value KernelTranslator::joinRowBlocks(ArrayRef<Value> parts, Type type) {
  if (parts.size() == 1)
    return parts.front();
  Value acc = LLVM::UndefOp::create(b, loc, type);
  int64_t perBlock =
      cast<LLVM::LLVMStructType>(parts.front().getType()).getBody().size();
  for (auto [rb, part] : llvm::enumerate(parts))
    for (int64_t r = 0; r < perBlock; ++r)
      acc = LLVM::InsertValueOp::create(
          b, loc, acc, LLVM::ExtractValueOp::create(b, loc, part, r),
          rb * perBlock + r);
  return acc;
}

KernelTranslator::FragmentBase KernelTranslator::fragmentBase() {
  Value lane = arith::RemUIOp::create(b, loc, tid, idx(32));
  Value warpInGroup = arith::DivUIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, tid, idx(128)), idx(32));
  Value row = add(add(mul(rowWarpgroup, idx(64)), mul(warpInGroup, idx(16))),
                  arith::DivUIOp::create(b, loc, lane, idx(4)));
  Value col = mul(arith::RemUIOp::create(b, loc, lane, idx(4)), idx(2));
  return {row, col};
}

LogicalResult KernelTranslator::translateMma(MmaOp op) {
  Value aTile = lookup(op.getA(), op), bTile = lookup(op.getB(), op);
  Value acc = lookup(op.getAcc(), op);
  if (!aTile || !bTile || !acc)
    return failure();
  TileType aType = op.getA().getType(), bType = op.getB().getType();
  Type elem = aType.getElementType();
  int64_t elemBytes = getElementBytes(elem);
  int64_t blockN = bType.getRows(), blockK = aType.getK();
  // wgmma's K per instruction: 32 bytes of each operand row.
  const int64_t wgmmaK = 32 / elemBytes;
  // A product started from zeros needs no zero registers: the first wgmma
  // ignores its accumulator input (scale-d = 0).
  bool fromZero = bool(op.getAcc().getDefiningOp<ZeroAccumulatorOp>());
  // A product promoted right after (an FP8 K block): its scale factors are
  // read from the stage slot now, while the slot is held, so that their
  // shared-memory latency and multiplies overlap the wgmma instead of
  // following its wait. Only when they fit: a few distinct factors (one row
  // scale per fragment half times one weight scale), or one per register
  // of a tile of at most 128 columns (64 f32 beside the partial and the
  // sum: the per-column scales of a K-ragged b tile); 192 columns would
  // leave 96 live across the wgmma, past setmaxnreg's 232 with the partial
  // and the sum. Not measured for a swap-AB tile's per-token scales, which
  // keep the loads after the wait.
  auto hoistable = [&](PromoteOp promote) {
    if (!promote.getBScales())
      return true;
    int64_t count = cast<ScalesType>(promote.getBScales().getType()).getCount();
    return count <= 2 || (blockN <= 128 && !facts.swapped);
  };
  if (op->hasOneUse())
    if (auto promote = dyn_cast<PromoteOp>(*op->user_begin());
        promote && promote.getPartial() == op.getResult() &&
        hoistable(promote)) {
      FailureOr<SmallVector<Value>> factors = promoteFactors(promote);
      if (failed(factors))
        return failure();
      hoistedPromoteFactors[promote] = std::move(*factors);
    }
  // Its registers are then left undefined rather than zeroed: zeros would
  // cost one move per register before every product (an FP8 tile starts a
  // product per 128-wide K block).
  if (fromZero)
    acc = LLVM::UndefOp::create(b, loc, acc.getType());
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  // K-major tiles: rows of one 128-byte swizzle row, 8-row swizzle atoms
  // 1024 bytes apart (stride byte offset); the leading byte offset is
  // unused. An mn_major tile is loaded as boxes of one swizzle row of
  // columns (kSwizzleBytes / elemBytes rows of the tile) by block_k: the
  // leading byte offset steps over those boxes. Either operand may be
  // mn_major (after ggemm-swap-ab a kn weight tile is the mma's a).
  auto leadingBytes = [&](TileType type) -> int64_t {
    return type.isMNMajor() ? kSwizzleBytes * blockK : 16;
  };
  // Bytes of 64 rows of a tile: one warpgroup's share of the a tile.
  int64_t rows64Bytes = aType.isMNMajor() ? (64 / (kSwizzleBytes / elemBytes)) *
                                                kSwizzleBytes * blockK
                                          : 64 * kSwizzleBytes;
  Value aRows = byteOffset(aTile, mul(rowWarpgroup, idx(rows64Bytes)));
  Value descA = wgmmaDescriptor(aRows, leadingBytes(aType), 8 * kSwizzleBytes);
  Value descB = wgmmaDescriptor(bTile, leadingBytes(bType), 8 * kSwizzleBytes);
  // wgmma's layouts: A row = K-major (col: M-major, "transposed"); B col =
  // K-major (row: N-major).
  NVVM::MMALayout layoutA =
      aType.isMNMajor() ? NVVM::MMALayout::col : NVVM::MMALayout::row;
  NVVM::MMALayout layoutB =
      bType.isMNMajor() ? NVVM::MMALayout::row : NVVM::MMALayout::col;
  // Advance along K: 32 bytes inside the swizzled row for K-major tiles,
  // wgmmaK rows of 128 bytes for mn_major ones.
  auto kStep = [&](TileType type, int64_t kk) -> int64_t {
    return type.isMNMajor() ? (kk * wgmmaK * kSwizzleBytes) >> 4
                            : (kk * wgmmaK * elemBytes) >> 4;
  };
  // INT8: the exact s32 sum (wrapping on overflow, which a K below 2^31 /
  // 128^2 cannot reach).
  NVVM::WGMMATypes accType =
      isInt8(elem) ? NVVM::WGMMATypes::s32 : NVVM::WGMMATypes::f32;
  // A warpgroup holding several 64-row blocks (a 128-row ping-pong tile)
  // issues one wgmma per block and K step, each into its block's registers
  // (the accumulator's [rb R, (rb + 1) R)) from its 64 rows of a.
  int64_t blocks = facts.rowBlocks;
  SmallVector<Value> blockAcc = splitRowBlocks(acc, blocks);
  Type blockType = blockAcc.front().getType();
  for (int64_t kk = 0; kk < blockK / wgmmaK; ++kk) {
    Value dA0 = kk ? add(descA, c64(kStep(aType, kk))) : descA;
    Value dB = kk ? add(descB, c64(kStep(bType, kk))) : descB;
    for (int64_t rb = 0; rb < blocks; ++rb) {
      Value dA = rb ? add(dA0, c64((rb * rows64Bytes) >> 4)) : dA0;
      blockAcc[rb] = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, blockType, blockAcc[rb], dA, dB,
          NVVM::MMAShapeAttr::get(ctx, 64, blockN, wgmmaK), wgmmaType(elem),
          wgmmaType(elem), accType,
          kk == 0 && fromZero ? NVVM::WGMMAScaleOut::zero
                              : NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, layoutA, layoutB,
          NVVM::MMAIntOverflowAttr());
    }
  }
  acc = joinRowBlocks(blockAcc, acc.getType());
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  int64_t pending = op.getPending() ? *op.getPending() : 0;
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, pending);
  mapping.map(op.getResult(), acc);
  return success();
}

FailureOr<SmallVector<Value>> KernelTranslator::promoteFactors(PromoteOp op) {
  Value aScales = op.getAScales() ? lookup(op.getAScales(), op) : Value();
  Value bScales = op.getBScales() ? lookup(op.getBScales(), op) : Value();
  if ((op.getAScales() && !aScales) || (op.getBScales() && !bScales))
    return failure();
  ArrayRef<int64_t> shape = op.getAcc().getType().getShape();
  int64_t blockM = shape[0], blockN = shape[1];
  // The thread's two rows of the tile (see the fragment layout above).
  FragmentBase fragment = fragmentBase();
  Value row0 = fragment.row, laneCol = fragment.col;
  Value one = arith::ConstantFloatOp::create(b, loc, f32, APFloat(1.0f));
  Value rowScale[2] = {one, one};
  if (aScales) {
    int64_t count = cast<ScalesType>(op.getAScales().getType()).getCount();
    int64_t rowsPerScale = blockM / count;
    for (int64_t h = 0; h < 2; ++h) {
      Value row = add(row0, idx(8 * h));
      Value at = rowsPerScale == 1
                     ? row
                     : arith::DivUIOp::create(b, loc, row, idx(rowsPerScale))
                           .getResult();
      rowScale[h] = load(f32, elementAddress(aScales, f32, at));
    }
  }
  int64_t bCount = 1, colsPerScale = blockN;
  if (bScales) {
    bCount = cast<ScalesType>(op.getBScales().getType()).getCount();
    colsPerScale = blockN / bCount;
  }
  // factor(h, s) = row scale of half h times column scale s.
  SmallVector<Value> factors;
  auto factorsOf = [&](ArrayRef<Value> colScales) {
    factors.clear();
    for (int64_t h = 0; h < 2; ++h)
      for (Value colScale : colScales)
        factors.push_back(arith::MulFOp::create(b, loc, rowScale[h], colScale));
  };
  // Register r's column: 8 (r / 4) + 2 (lane % 4) + r % 2.
  std::function<Value(int64_t)> factorOf;
  if (!bScales) {
    factorOf = [&](int64_t r) { return rowScale[(r / 2) % 2]; };
  } else if (op.getBOffset()) {
    // A tile that starts b_offset columns into its first weight scale
    // block (192 columns of 128-column blocks). The offset is a multiple of
    // g = gcd(block_n, block), so each g-column group of the tile lies in
    // one block; a group's block is static when every possible offset puts
    // it in the same one, else it is selected by the offset (one select
    // per row half: the middle 64 columns of a 192-column tile).
    int64_t block = *op.getBBlock();
    int64_t group = std::gcd(blockN, block);
    assert(group % 8 == 0 && "the promote verifier keeps both multiples of 8");
    Value offset = lookup(op.getBOffset(), op);
    if (!offset)
      return failure();
    SmallVector<Value> colScales;
    for (int64_t i = 0; i < bCount; ++i)
      colScales.push_back(load(f32, elementAddress(bScales, f32, idx(i))));
    factorsOf(colScales);
    SmallVector<Value> groupFactors; // [half][group]
    int64_t groups = blockN / group;
    for (int64_t h = 0; h < 2; ++h) {
      for (int64_t q = 0; q < groups; ++q) {
        int64_t first = group * q / block;
        int64_t last = (group * q + block - group) / block;
        Value factor = factors[h * bCount + first];
        if (last != first) {
          Value at = arith::DivUIOp::create(b, loc, add(idx(group * q), offset),
                                            idx(block));
          for (int64_t s = first + 1; s <= last && s < bCount; ++s)
            factor = arith::SelectOp::create(
                b, loc, cmp(arith::CmpIPredicate::eq, at, idx(s)),
                factors[h * bCount + s], factor);
        }
        groupFactors.push_back(factor);
      }
    }
    factors = std::move(groupFactors);
    factorOf = [&, groups, group](int64_t r) {
      return factors[((r / 2) % 2) * groups + 8 * (r / 4) / group];
    };
  } else if (colsPerScale % 8 == 0) {
    // A column's scale is fixed by its 8-column fragment: fragments never
    // straddle a scale block.
    SmallVector<Value> colScales;
    for (int64_t i = 0; i < bCount; ++i)
      colScales.push_back(load(f32, elementAddress(bScales, f32, idx(i))));
    factorsOf(colScales);
    factorOf = [&](int64_t r) {
      return factors[((r / 2) % 2) * bCount + 8 * (r / 4) / colsPerScale];
    };
  } else {
    // Fewer than 8 columns per scale (the activation scales of a swap-AB
    // tile, one per token column): each of the thread's columns reads its
    // own scale.
    SmallVector<Value> colScales;
    for (int64_t c = 0; c < blockN / 4; ++c) {
      Value column = add(laneCol, idx(8 * (c / 2) + c % 2));
      Value at = colsPerScale == 1
                     ? column
                     : arith::DivUIOp::create(b, loc, column, idx(colsPerScale))
                           .getResult();
      colScales.push_back(load(f32, elementAddress(bScales, f32, at)));
    }
    bCount = blockN / 4;
    factorsOf(colScales);
    factorOf = [&](int64_t r) {
      return factors[((r / 2) % 2) * bCount + 2 * (r / 4) + r % 2];
    };
  }
  SmallVector<Value> perRegister;
  for (int64_t r = 0; r < blockN / 2; ++r)
    perRegister.push_back(factorOf(r));
  return perRegister;
}

LogicalResult KernelTranslator::translatePromote(PromoteOp op) {
  Value partial = lookup(op.getPartial(), op), acc = lookup(op.getAcc(), op);
  if (!partial || !acc)
    return failure();
  // The factors were read before the product's wgmma where translateMma
  // could (hoistedPromoteFactors), so that the promotion starts as soon as
  // the product is complete.
  SmallVector<Value> factors;
  if (auto it = hoistedPromoteFactors.find(op);
      it != hoistedPromoteFactors.end()) {
    factors = std::move(it->second);
    hoistedPromoteFactors.erase(it);
  } else {
    FailureOr<SmallVector<Value>> computed = promoteFactors(op);
    if (failed(computed))
      return failure();
    factors = std::move(*computed);
  }
  for (auto [r, factor] : llvm::enumerate(factors)) {
    Value p = LLVM::ExtractValueOp::create(b, loc, partial, r);
    Value old = LLVM::ExtractValueOp::create(b, loc, acc, r);
    // One fused multiply-add: a separate mul and add lower to mul.rn and
    // add.rn, which ptxas may not contract, doubling the FP32 work the
    // tensor cores wait on.
    Value sum = LLVM::FMAOp::create(b, loc, p, factor, old);
    acc = LLVM::InsertValueOp::create(b, loc, acc, sum, r);
  }
  mapping.map(op.getResult(), acc);
  return success();
}
