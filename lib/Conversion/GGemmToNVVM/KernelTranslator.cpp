//===- KernelTranslator.cpp - a launch body -> a kernel body --------------===//
//
// The entry of the kernel and the ops that need no hardware: the tile
// schedule, weight indices, sizes, the accumulator's zeros. The ring and the
// warp roles are in RingToNVVM.cpp, the mma and the store in
// TileOpsToNVVM.cpp.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::nvvm;

KernelTranslator::KernelTranslator(OpBuilder &b, const KernelFacts &facts,
                                   gpu::GPUFuncOp kernel, LLVM::GlobalOp smem)
    : ProgramTranslator(b), facts(facts), kernel(kernel), smemGlobal(smem),
      loc(facts.launch.getLoc()), ctx(b.getContext()), entry(b) {
  i1 = b.getI1Type();
  i32 = b.getI32Type();
  i64 = b.getI64Type();
  f32 = b.getF32Type();
  ptrShared = LLVM::LLVMPointerType::get(ctx, 3);
  ptrCluster = LLVM::LLVMPointerType::get(ctx, 7);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

Value KernelTranslator::idx(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}
Value KernelTranslator::c32(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}
Value KernelTranslator::c64(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 64);
}
Value KernelTranslator::toIndex(Value v) {
  if (v.getType().isIndex())
    return v;
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}
Value KernelTranslator::toI32(Value v) {
  return arith::IndexCastOp::create(b, loc, i32, v);
}
Value KernelTranslator::toI64(Value v) {
  return arith::IndexCastOp::create(b, loc, i64, v);
}
Value KernelTranslator::add(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value KernelTranslator::mul(Value x, Value y) {
  return arith::MulIOp::create(b, loc, x, y);
}
Value KernelTranslator::cmp(arith::CmpIPredicate p, Value x, Value y) {
  return arith::CmpIOp::create(b, loc, p, x, y);
}
Value KernelTranslator::byteOffset(Value base, Value offset) {
  return LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(), base,
                             ValueRange{toI64(offset)});
}
Value KernelTranslator::elementAddress(Value base, Type elemType, Value index) {
  return LLVM::GEPOp::create(b, loc, base.getType(), elemType, base,
                             ValueRange{toI64(index)});
}
Value KernelTranslator::load(Type type, Value address) {
  return LLVM::LoadOp::create(b, loc, type, address);
}

//===----------------------------------------------------------------------===//
// Entry and dispatch
//===----------------------------------------------------------------------===//

LogicalResult KernelTranslator::translate() {
  b.setInsertionPointToStart(&kernel.getBody().front());
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  {
    // One thread brings the TMA descriptors (by-value kernel parameters,
    // so no earlier kernel writes them; in_param_space: the pointers are
    // the parameters') into the descriptor cache, as CUTLASS's and
    // DeepGEMM's kernels do, so that the first TMA copy does not wait for
    // them; with a dependent launch this overlaps the previous grid.
    auto first =
        scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::eq, tid, idx(0)),
                          /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(first.thenBlock());
    for (int64_t descriptor : facts.descriptorParams())
      NVVM::PrefetchOp::create(
          b, loc, /*cacheLevel=*/NVVM::PrefetchCacheLevelAttr(),
          /*evictPriority=*/NVVM::CacheEvictionPriorityAttr(),
          kernel.getArgument(descriptor), /*predicate=*/Value(),
          /*tensormap=*/b.getUnitAttr(), /*uniform=*/UnitAttr(),
          /*in_param_space=*/b.getUnitAttr());
  }
  // The warpgroup index, the same in every lane of a warp: broadcast from
  // lane 0 (shfl.sync.idx) so that ptxas sees it is warp-uniform. Derived
  // from the thread id it is per-lane to ptxas, and so is everything
  // computed from it: in the 192x128 FP8 kernels the A-tile descriptors
  // and the scale addresses, which each K block then moved into uniform
  // registers (16 R2UR) and partly recomputed from the thread id (S2R).
  // Broadcast, the consumers' K loop keeps them in uniform registers: 120
  // SASS instructions a K block instead of 132, 1.11-1.14x the speed at
  // M = 4096, N = 4096, K = 7168 on an H100 (bench/NOTES.md v37). All
  // threads are converged here.
  warpgroup = toIndex(
      NVVM::ShflOp::create(b, loc, i32, c32(-1),
                           toI32(arith::DivUIOp::create(b, loc, tid, idx(128))),
                           c32(0), c32(31), NVVM::ShflKind::idx, UnitAttr())
          .getResult());
  // A cooperative consumer warpgroup w computes rows [64 w, 64 w + 64) of
  // every tile; a ping-pong one all rows of its own tiles, from row 0 (a
  // 128-row tile's second block: see translateMma and translateStore).
  rowWarpgroup = facts.pingpong ? idx(0) : warpgroup;
  smem = LLVM::AddressOfOp::create(b, loc, ptrShared, smemGlobal.getSymName());
  // Scalars of the tile schedule. num_rows clamps the segments and
  // num_weights the weight indices, both device data.
  numRows = toIndex(param(kNumRows));
  rowsPerGroup = toIndex(param(kRowsPerGroup));
  numGroups = toIndex(param(kNumGroups));
  n = toIndex(param(kN));
  k = toIndex(param(kK));
  ldy = toIndex(param(kLdy));
  numWeights = toIndex(param(kNumWeights));
  if (facts.blockScaled()) {
    auto ceil128 = [&](Value v) {
      return arith::DivUIOp::create(b, loc, add(v, idx(127)), idx(128))
          .getResult();
    };
    scaleRows = ceil128(n);
    scaleBlocks = ceil128(k);
  }
  auto loader = [this](KernelParam array, Type elem) {
    return [this, array, elem](OpBuilder &, Location, Value i) -> Value {
      return toIndex(load(elem, elementAddress(param(array), elem, i)));
    };
  };
  TileConfigAttr config = facts.config;
  TileSchedule s;
  s.rowMapping = facts.schedule.getRowMapping();
  s.blockM = config.getBlockM();
  s.blockN = config.getBlockN();
  s.clusterM = config.getClusterM();
  s.raster = config.getRaster();
  s.swizzle = config.getSwizzle();
  s.swizzleMinTiles = config.getSwizzleMinTiles();
  s.numGroups = numGroups;
  s.rowsPerGroup = rowsPerGroup;
  s.numRows = numRows;
  // A gated kernel's tiles run over w's 2N rows (gate and up halves).
  s.numCols = facts.gated ? mul(n, idx(2)) : n;
  s.loadGroupRow =
      loader(kGroupRows, facts.indexElem ? facts.indexElem : Type(i32));
  if (facts.schedule.getWeightIndices()) {
    s.loadWeightIndex = loader(kWeightIndices, i32);
    s.numWeights = numWeights;
  }
  schedule = s;
  // Host constants go before everything else.
  entry.setInsertionPointToStart(&kernel.getBody().front());
  Value blockId = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  mapping.map(facts.launch.getCtaArg(), blockId);
  if (facts.clusterM > 1)
    clusterRank = arith::RemUIOp::create(b, loc, blockId, idx(facts.clusterM));
  mapping.map(facts.launch.getNumCtasArg(),
              gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  if (failed(translateBlock(facts.launch.getBody().front())))
    return failure();
  if (facts.clusterSize() > 1) {
    // No CTA leaves while a peer may still multicast or write partial sums
    // into its shared memory or arrive on its mbarriers.
    NVVM::ClusterArriveOp::create(b, loc, UnitAttr());
    NVVM::ClusterWaitOp::create(b, loc, UnitAttr());
  }
  gpu::ReturnOp::create(b, loc);
  return success();
}

Value KernelTranslator::resolveExternal(Value value, Operation *user) {
  // Constants of the host function are cloned into the kernel's entry.
  Operation *def = value.getDefiningOp();
  if (def && def->hasTrait<OpTrait::ConstantLike>()) {
    if (Value cloned = externalConstants.lookupOrNull(value))
      return cloned;
    Operation *copy = entry.clone(*def);
    externalConstants.map(def->getResults(), copy->getResults());
    return externalConstants.lookup(value);
  }
  // Sizes of the kernel's operands (a K-ragged program reads the rows of
  // x in its K loop): the kernel's scalar parameters, set up at its entry.
  if (auto dim = dyn_cast_or_null<memref::DimOp>(def))
    return dimSize(dim, entry);
  user->emitOpError() << "uses a value defined outside the ggemm.launch "
                         "that is neither a constant nor a kernel operand ("
                      << value << ")";
  return Value();
}

LogicalResult KernelTranslator::tmaCoordinates(Operation *op,
                                               ValueRange indices,
                                               SmallVectorImpl<Value> &coords) {
  // TMA coordinates run innermost first: the memref indices reversed.
  for (Value i : llvm::reverse(indices)) {
    Value mapped = lookup(i, op);
    if (!mapped)
      return failure();
    coords.push_back(toI32(mapped));
  }
  return success();
}

LogicalResult KernelTranslator::translatePrefetchTile(PrefetchTileOp op) {
  if (op.getSource() != facts.x && op.getSource() != facts.w)
    return op.emitOpError() << "expects to prefetch a tile of the kernel's x "
                               "or w (the operands with TMA descriptors)";
  SmallVector<Value> coords;
  if (failed(tmaCoordinates(op, op.getIndices(), coords)))
    return failure();
  // The boxes ggemm.ring_put loads the tile in: one 128-byte swizzle row
  // wide, several side by side along the rows of an mn_major tile.
  TileType type = cast<TileType>(op.getTile());
  int64_t boxElems = kSwizzleBytes / getElementBytes(type.getElementType());
  int64_t boxes = type.isMNMajor() ? type.getRows() / boxElems : 1;
  Value desc = param(op.getSource() == facts.x ? kADesc : kBDesc);
  // One thread of the CTA.
  auto first =
      scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::eq, tid, idx(0)),
                        /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(first.thenBlock());
  for (int64_t j = 0; j < boxes; ++j) {
    SmallVector<Value> at(coords);
    if (j)
      at[0] = arith::AddIOp::create(b, loc, coords[0], c32(j * boxElems));
    NVVM::CpAsyncBulkTensorPrefetchOp::create(
        b, loc, desc, at, /*im2colOffsets=*/ValueRange{},
        NVVM::TMALoadMode::TILE, /*l2CacheHint=*/Value());
  }
  return success();
}

LogicalResult KernelTranslator::translateGGemmOp(Operation *op) {
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](TileCountOp count) {
        mapping.map(count.getCount(), schedule->totalTiles(b, loc));
        return success();
      })
      .Case([&](WaitDependencyOp) {
        // Programmatic dependent launch: every thread waits for the
        // previous grid of the stream to finish and its writes to be
        // visible; then the next grid may launch, its CTAs starting as SMs
        // free up and waiting likewise.
        NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
        NVVM::GriddepcontrolOp::create(
            b, loc, NVVM::GridDepActionKind::launch_dependents);
        return success();
      })
      .Case([&](PrefetchTileOp prefetch) {
        return translatePrefetchTile(prefetch);
      })
      .Case([&](MapTileOp map) {
        Value tileId = lookup(map.getTile(), map);
        Value rank =
            map.getClusterRank() ? lookup(map.getClusterRank(), map) : Value();
        if (!tileId || (map.getClusterRank() && !rank))
          return failure();
        // The walk's cursor: two i64 allocas at the kernel's entry, which
        // LLVM's SROA turns into registers carried around the persistent
        // loop (each thread maps increasing tile ids, so it walks each
        // group once instead of every group for every tile).
        Value one = LLVM::ConstantOp::create(entry, loc, i32,
                                             entry.getI32IntegerAttr(1));
        auto ptr = LLVM::LLVMPointerType::get(ctx);
        Value zero = LLVM::ConstantOp::create(entry, loc, i64,
                                              entry.getI64IntegerAttr(0));
        SmallVector<Value, 2> slots;
        for (int slot = 0; slot < 2; ++slot) {
          slots.push_back(LLVM::AllocaOp::create(entry, loc, ptr, i64, one));
          LLVM::StoreOp::create(entry, loc, zero, slots.back());
        }
        TileSchedule::Cursor cursor;
        cursor.load = [&](OpBuilder &b, Location loc, unsigned slot) {
          return toIndex(LLVM::LoadOp::create(b, loc, i64, slots[slot]));
        };
        cursor.store = [&](OpBuilder &b, Location loc, unsigned slot,
                           Value value) {
          LLVM::StoreOp::create(
              b, loc,
              arith::IndexCastUIOp::create(b, loc, i64, value).getResult(),
              slots[slot]);
        };
        TileSchedule::Tile tile =
            schedule->mapTile(b, loc, tileId, rank, &cursor);
        mapping.map(map.getResults(), ValueRange{tile.group, tile.rowBegin,
                                                 tile.rowEnd, tile.colBegin});
        return success();
      })
      .Case([&](WeightIndexOp index) {
        Value group = lookup(index.getGroup(), index);
        if (!group)
          return failure();
        mapping.map(index.getWeight(),
                    toIndex(load(i32, elementAddress(param(kWeightIndices), i32,
                                                     group))));
        return success();
      })
      .Case([&](ZeroAccumulatorOp zero) {
        // Set before the first wgmma fence, so ptxas does not have to
        // serialise around register moves (FACTS.md §2).
        mapping.map(
            zero.getAcc(),
            LLVM::ZeroOp::create(
                b, loc,
                LLVM::LLVMStructType::getLiteral(
                    ctx, SmallVector<Type>(zero.getType().getShape()[1] / 2 *
                                               facts.rowBlocks,
                                           zero.getType().getElementType()))));
        return success();
      })
      .Case<LoadTileOp, LoadScalesOp>([&](Operation *load) -> LogicalResult {
        // Issued by the ring_put its tile goes to, straight into the slot.
        if (load->hasOneUse() && isa<RingPutOp>(*load->user_begin()))
          return success();
        return load->emitOpError()
               << "expects its result to be put into a stage ring: run "
                  "ggemm-warp-specialize before convert-ggemm-to-nvvm";
      })
      .Case([&](PromoteOp op) { return translatePromote(op); })
      .Case([&](SplitKSumOp op) { return translateSplitKSum(op); })
      .Case([&](CreateRingOp op) { return translateCreateRing(op); })
      .Case([&](WarpSpecializeOp op) { return translateWarpSpecialize(op); })
      .Case([&](ConsumerWarpgroupOp op) {
        mapping.map(op.getIndex(), warpgroup);
        return success();
      })
      // Both ping-pong consumer warpgroups (256 threads) meet at warpgroup
      // w's turn barrier: w waits there, the other arrives.
      .Case([&](TurnWaitOp) {
        NVVM::BarrierOp::create(
            b, loc, Type(), toI32(add(warpgroup, idx(kTurnBarrierBase))),
            c32(256), NVVM::BarrierReductionAttr(), Value());
        return success();
      })
      .Case([&](TurnPassOp) {
        Value other = arith::SubIOp::create(b, loc, idx(1), warpgroup);
        NVVM::BarrierArriveOp::create(
            b, loc, toI32(add(other, idx(kTurnBarrierBase))), c32(256));
        return success();
      })
      .Case([&](RingPutOp op) { return translateRingPut(op); })
      .Case([&](RingGetOp op) { return translateRingGet(op); })
      .Case([&](RingReleaseOp op) { return translateRingRelease(op); })
      .Case([&](MmaOp op) { return translateMma(op); })
      .Case([&](MmaWaitOp wait) {
        Value acc = lookup(wait.getAcc(), wait);
        if (!acc)
          return failure();
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
        mapping.map(wait.getResult(), acc);
        return success();
      })
      .Case([&](StoreTileOp op) { return translateStore(op); })
      .Case([&](StoreDrainOp op) { return translateStoreDrain(op); })
      .Case([&](SegmentBoundsOp op) { return translateSegmentBounds(op); })
      .Case([&](ZeroKTailOp op) { return translateZeroKTail(op); })
      .Default([&](Operation *other) {
        return other->emitOpError()
               << "is not supported inside a ggemm.launch by "
                  "convert-ggemm-to-nvvm";
      });
}

LogicalResult KernelTranslator::translateOther(Operation *op) {
  if (auto dim = dyn_cast<memref::DimOp>(op))
    return translateDim(dim);
  return copy(op);
}

/// Sizes of the kernel's operands: static ones are constants, dynamic ones
/// the scalar parameters the runtime passes.
LogicalResult KernelTranslator::translateDim(memref::DimOp op) {
  Value size = dimSize(op, b);
  if (!size)
    return failure();
  mapping.map(op.getResult(), size);
  return success();
}

Value KernelTranslator::dimSize(memref::DimOp op, OpBuilder &at) {
  std::optional<int64_t> index = op.getConstantIndex();
  auto type = dyn_cast<MemRefType>(op.getSource().getType());
  if (!index || !type || *index < 0 || *index >= type.getRank()) {
    op.emitOpError() << "expects a constant dimension of a memref in a kernel";
    return Value();
  }
  if (!type.isDynamicDim(*index))
    return arith::ConstantIndexOp::create(at, loc, type.getDimSize(*index));
  Value source = op.getSource(), size;
  bool kn = facts.nMajorB();
  if (facts.kRagged) {
    // [T, rows_per_group] (the mma's a) and [T, n] (its b); transposed
    // (k_major tiles), [rows_per_group, T] and [n, T].
    int64_t tokenDim = facts.aTile.isMNMajor() ? 0 : 1;
    if (source == facts.x || source == facts.w)
      size = *index == tokenDim  ? numRows
             : source == facts.x ? rowsPerGroup
                                 : n;
  } else if (source == facts.x) {
    // Gathered x has rows of its own, which the kernel does not need (TMA
    // bounds them).
    size = *index == 1 ? k : facts.gather ? Value() : numRows;
  } else if (source == facts.w && *index > 0) {
    // A gated w has 2N rows: gate, then up.
    size = (*index == 1) == kn ? k : facts.gated ? mul(n, idx(2)) : n;
  } else if (source == facts.gather && *index == 0) {
    // The gather indices: one per segment row.
    size = numRows;
  }
  if (source == facts.y && *index == 1)
    size = n;
  if (!size)
    op.emitOpError() << "reads a size the kernel has no parameter for "
                        "(dimension "
                     << *index << " of " << type << ")";
  return size;
}

LogicalResult KernelTranslator::translateSegmentBounds(SegmentBoundsOp op) {
  Value group = lookup(op.getGroup(), op);
  Value rows = lookup(op.getNumRows(), op);
  if (!group || !rows)
    return failure();
  // The tile schedule's own clamping of a segment's rows, on seg_indptr in
  // global memory.
  TileSchedule segments;
  segments.rowMapping = RowMapping::segment;
  segments.numRows = rows;
  segments.loadGroupRow = [this](OpBuilder &, Location, Value i) -> Value {
    return toIndex(load(facts.indexElem,
                        elementAddress(param(kGroupRows), facts.indexElem, i)));
  };
  auto [begin, count] = segments.groupRows(b, loc, group);
  mapping.map(op.getBegin(), begin);
  mapping.map(op.getEnd(), add(begin, count));
  return success();
}
