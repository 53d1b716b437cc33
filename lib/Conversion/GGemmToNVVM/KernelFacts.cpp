//===- KernelFacts.cpp - read a launch ------------------------------------===//

#include "Kernel.h"

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::nvvm;

SmallVector<Type> mlir::ggemm::nvvm::kernelParamTypes(MLIRContext *ctx,
                                                      const KernelFacts &f) {
  bool blockScaled = f.blockScaled(), staged = f.staged();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto ptrGlobal = LLVM::LLVMPointerType::get(ctx, 1);
  auto i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
  SmallVector<Type> types = {
      ptr, ptr, ptrGlobal, ptrGlobal, ptrGlobal, ptrGlobal, ptrGlobal,
      i64, i64, i32,       i32,       i32,       i64,       i32};
  // A K-ragged kernel's second operand has one scale per row too: a TMA
  // descriptor where the weight scales' pointer goes.
  if (blockScaled)
    types.append({ptr, f.kRagged ? ptr : ptrGlobal});
  if (staged)
    types.push_back(ptr);
  if (f.gather)
    types.append({ptrGlobal, ptrGlobal, i64, i64});
  if (f.scatter)
    types.append({ptrGlobal, i64});
  if (f.epilogueScaled())
    types.append({ptrGlobal, ptrGlobal});
  if (f.yScale)
    types.append({ptrGlobal, i64, i64});
  return types;
}

namespace {

/// The value of an index known at compile time (a constant, or the static
/// size of a memref.dim), or -1.
int64_t staticIndex(Value value) {
  if (auto cst = value.getDefiningOp<arith::ConstantIndexOp>())
    return cst.value();
  if (auto dim = value.getDefiningOp<memref::DimOp>()) {
    auto type = dyn_cast<MemRefType>(dim.getSource().getType());
    std::optional<int64_t> index = dim.getConstantIndex();
    if (type && index && *index >= 0 && *index < type.getRank() &&
        !type.isDynamicDim(*index))
      return type.getDimSize(*index);
  }
  return -1;
}

/// Checks a memref the kernel reads or writes through a bare pointer: the
/// innermost dimension must be contiguous, and `dense` ones must have the
/// identity (row-major, unpadded) layout.
LogicalResult verifyKernelAddressed(Operation *op, StringRef name, Value value,
                                    bool dense) {
  auto type = cast<MemRefType>(value.getType());
  if (dense) {
    if (!type.getLayout().isIdentity() &&
        !type.areTrailingDimsContiguous(type.getRank()))
      return op->emitOpError() << "expects " << name
                               << " to be a dense row-major memref for the "
                                  "GPU back end, got "
                               << type;
    return success();
  }
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.empty() ||
      strides.back() != 1)
    return op->emitOpError()
           << "expects the innermost dimension of " << name
           << " to be contiguous for the GPU back end, got " << type;
  return success();
}

/// Binds `value` to the kernel operand `slot` (named `name`): every op of a
/// kernel that reads an operand must read the same memref.
LogicalResult bind(Operation *user, StringRef name, Value &slot, Value value) {
  if (!value)
    return success();
  if (slot && slot != value)
    return user->emitOpError() << "expects the kernel's " << name
                               << " to be one memref: it reads two";
  slot = value;
  return success();
}

/// Checks a tile against the 128-byte swizzled TMA boxes and the wgmma
/// shapes the kernel uses.
LogicalResult checkTile(Operation *op, StringRef name, TileType tile) {
  int64_t bytes = getElementBytes(tile.getElementType());
  if (tile.getK() * bytes != kSwizzleBytes)
    return op->emitOpError()
           << "expects " << name << " tiles whose K block is " << kSwizzleBytes
           << " bytes (one swizzle row), got " << tile;
  if (tile.isMNMajor() && (tile.getRows() * bytes) % kSwizzleBytes != 0)
    return op->emitOpError()
           << "expects the rows of an mn_major " << name
           << " tile to be whole 128-byte TMA boxes, got " << tile;
  return success();
}
} // namespace

FailureOr<KernelFacts> mlir::ggemm::nvvm::analyseLaunch(LaunchOp launch,
                                                        StringRef name) {
  KernelFacts f;
  f.name = name.str();
  f.launch = launch;
  f.schedule = launch.getScheduleOp();
  f.config = f.schedule.getConfig();
  Block &body = launch.getBody().front();
  auto roles = body.getOps<WarpSpecializeOp>();
  auto rings = body.getOps<CreateRingOp>();
  if (roles.empty() || rings.empty())
    return launch.emitOpError() << "has no warp roles: run "
                                   "ggemm-warp-specialize and "
                                   "ggemm-stage-ring before "
                                   "convert-ggemm-to-nvvm";
  if (std::next(roles.begin()) != roles.end() ||
      std::next(rings.begin()) != rings.end())
    return launch.emitOpError()
           << "expects one ggemm.warp_specialize and one ggemm.create_ring";
  f.roles = *roles.begin();
  f.ring = *rings.begin();
  f.layout = f.ring.getLayoutAttr();
  if (!f.layout)
    return f.ring.emitOpError() << "expects a layout: run ggemm-stage-ring "
                                   "before convert-ggemm-to-nvvm";
  f.numConsumers = f.roles.getConsumerWarpgroups();
  f.pingpong = f.roles.getPingpong();
  f.threads = 128 * (f.numConsumers + 1);
  f.clusterM = f.config.getClusterM();
  f.dependentLaunch = launch.getDependentLaunch();
  // The consumers of one stage: every warpgroup, or one with ping-pong.
  int64_t stageConsumers = f.pingpong ? 1 : f.numConsumers;
  int64_t releaseCount =
      f.clusterM > 1 ? 4 * stageConsumers * f.clusterM : 128 * stageConsumers;
  if (f.ring.getReleaseCount() != releaseCount)
    return f.ring.emitOpError()
           << "expects a release count of one per consumer "
           << (f.clusterM > 1 ? "warp and cluster CTA (" : "thread (")
           << releaseCount << "), got " << f.ring.getReleaseCount();
  if (f.config.getClusterN() != 1)
    return launch.emitOpError() << "expects cluster_n = 1 for the GPU back "
                                   "end (clusters share weight tiles along "
                                   "m), got "
                                << f.config.getClusterN();
  if (f.clusterM > 2)
    return launch.emitOpError() << "expects cluster_m of 1 or 2 for the GPU "
                                   "back end (the cluster size checked on a "
                                   "GPU), got "
                                << f.clusterM;
  f.splitK = f.config.getSplitK();
  if (f.splitK > 1) {
    SmallVector<SplitKSumOp> sums;
    launch.walk([&](SplitKSumOp sum) { sums.push_back(sum); });
    if (sums.size() != 1)
      return launch.emitOpError()
             << "expects one ggemm.split_k_sum in a launch of split_k = "
             << f.splitK << ", got " << sums.size();
    // ggemm.split_k_sum's verifier has checked the layout's buffer.
    AccumulatorType acc = sums.front().getPartial().getType();
    f.splitKSlotBytes = acc.getShape()[0] * acc.getShape()[1] * 4;
    if (launch.getGrid() != GridPolicy::persistent)
      return launch.emitOpError() << "expects a persistent grid with split_k";
  }
  if (f.clusterM > 1) {
    std::optional<ArrayRef<int64_t>> shared = f.ring.getMulticast();
    if (!shared || shared->size() != 1 || (*shared)[0] != 1)
      return f.ring.emitOpError()
             << "expects the weight tile (entry 1) to be the one multicast "
                "entry of a ring of cluster_m = "
             << f.clusterM;
    if (launch.getGrid() != GridPolicy::persistent)
      return launch.emitOpError() << "expects a persistent grid with "
                                     "clusters";
  }

  // The operands the kernel reads, bound to its parameters.
  f.groupRows = f.schedule.getGroupRows();
  if (failed(bind(f.schedule, "weight_indices", f.weightIndices,
                  f.schedule.getWeightIndices())))
    return failure();
  if (f.groupRows)
    f.indexElem = cast<MemRefType>(f.groupRows.getType()).getElementType();
  // A K-ragged program reads two [T, *] (or, transposed, [*, T]) matrices
  // and, with FP8, their scales, two [*, T/128] matrices: which is the
  // mma's a is the ring's order (a, then b, then their scales), not the
  // sources' ranks.
  launch.walk([&](Operation *op) {
    auto load = dyn_cast<LoadTileOp>(op);
    f.kRagged |= isa<SegmentBoundsOp>(op) || (load && load.getKEnd());
  });
  if (f.kRagged) {
    SmallVector<RingPutOp> puts;
    launch.walk([&](RingPutOp put) { puts.push_back(put); });
    size_t entries =
        puts.size() == 1 ? puts.front().getTiles().size() : size_t(0);
    auto source = [&](unsigned i) -> Value {
      if (i >= entries)
        return Value();
      Operation *def = puts.front().getTiles()[i].getDefiningOp();
      if (auto load = dyn_cast_or_null<LoadTileOp>(def))
        return load.getSource();
      if (auto scales = dyn_cast_or_null<LoadScalesOp>(def))
        return scales.getSource();
      return Value();
    };
    f.x = source(0);
    f.w = source(1);
    if (entries == 4) {
      f.xScale = source(2);
      f.wScale = source(3);
    }
    if ((entries != 2 && entries != 4) || !f.x || !f.w || f.x == f.w ||
        (entries == 4 && (!f.xScale || !f.wScale || f.xScale == f.wScale)))
      return launch.emitOpError()
             << "expects one ggemm.ring_put of two tile loads from two "
                "matrices (and, with FP8, the loads of their scales from two "
                "others) in a K-ragged kernel (ggemm.segment_matmul_k)";
  }
  SmallVector<StoreTileOp> stores;
  WalkResult walk = launch.walk([&](Operation *op) {
    LogicalResult ok = success();
    if (auto load = dyn_cast<LoadTileOp>(op)) {
      bool isA = f.kRagged ? load.getSource() == f.x
                           : load.getSource().getType().getRank() == 2;
      ok = bind(op, isA ? "x" : "w", isA ? f.x : f.w, load.getSource());
      if (succeeded(ok))
        ok = checkTile(op, isA ? "A" : "B", load.getType());
      if (succeeded(ok) && isA && load.getType().isMNMajor() && !f.kRagged)
        ok = op->emitOpError() << "expects a k_major A tile for the GPU back "
                                  "end, got "
                               << load.getType();
      if (succeeded(ok))
        ok = bind(op, "row_indices", f.gather, load.getGather());
      if (succeeded(ok) && load.getSplit() && isA)
        ok = op->emitOpError() << "expects only the weight tile to be split";
      (isA ? f.aTile : f.bTile) = load.getType();
    } else if (auto load = dyn_cast<LoadScalesOp>(op)) {
      // Activation scales are a matrix (rows, K blocks), weight scales a
      // batch of them; the K-ragged scales are both matrices.
      bool isA = f.kRagged ? load.getSource() == f.xScale
                           : load.getSource().getType().getRank() == 2;
      ok = bind(op, isA ? "x_scale" : "w_scale", isA ? f.xScale : f.wScale,
                load.getSource());
      (isA ? f.aScales : f.bScales) = load.getType();
    } else if (auto bounds = dyn_cast<SegmentBoundsOp>(op)) {
      ok = bind(op, "seg_indptr", f.groupRows, bounds.getSegIndptr());
      f.indexElem =
          cast<MemRefType>(bounds.getSegIndptr().getType()).getElementType();
    } else if (auto index = dyn_cast<WeightIndexOp>(op)) {
      ok =
          bind(op, "weight_indices", f.weightIndices, index.getWeightIndices());
    } else if (auto store = dyn_cast<StoreTileOp>(op)) {
      stores.push_back(store);
      if (succeeded(ok = bind(op, "y", f.y, store.getY())) &&
          succeeded(ok = bind(op, "bias", f.bias, store.getBias())) &&
          succeeded(
              ok = bind(op, "row_scale", f.rowScale, store.getRowScale())) &&
          succeeded(
              ok = bind(op, "x_scale", f.xEpilogueScale, store.getXScale())) &&
          succeeded(
              ok = bind(op, "w_scale", f.wEpilogueScale, store.getWScale())) &&
          succeeded(ok = bind(op, "y_scale", f.yScale, store.getYScale())))
        ok = bind(op, "scatter_indices", f.scatter, store.getScatter());
      f.perRowXScale = store.hasPerRowXScale();
      f.perChannelWScale = store.hasPerChannelWScale();
    } else if (isa<ForeachTileOp, LaunchOp, TileScheduleOp>(op) &&
               op != launch) {
      ok = op->emitOpError() << "is not supported inside a ggemm.launch";
    }
    return failed(ok) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (!f.x || !f.w || stores.size() != 1)
    return launch.emitOpError() << "expects tile loads of x and w and one "
                                   "ggemm.store_tile in the kernel";
  f.store = stores.front();
  f.staging = f.store.getStagingAttr();
  if (EpilogueAttr epilogue = f.store.getEpilogueAttr()) {
    f.gated = epilogue.isGated();
    f.atomic = epilogue.getAtomic();
    f.gateUpBlock = epilogue.getGateUpBlock();
  }
  if (f.staging && f.layout.getStagingOffset() < 0)
    return f.ring.emitOpError()
           << "expects a layout with the store staging of the launch's "
              "ggemm.store_tile: run ggemm-stage-ring after ggemm-tma-store";
  if (f.staging && f.layout.getStagingBytes() < f.numConsumers *
                                                    f.staging.getBuffers() *
                                                    f.staging.getBoxBytes())
    return f.ring.emitOpError()
           << "expects staging_bytes for " << f.staging.getBuffers()
           << " boxes of " << f.staging.getBoxBytes() << " bytes per consumer "
           << "warpgroup, got " << f.layout.getStagingBytes();
  if (auto layout =
          f.store->getAttrOfType<WeightLayoutAttr>(kKRaggedLayoutAttrName))
    f.kRaggedLayout = layout.getValue();
  f.outElem = cast<MemRefType>(f.y.getType()).getElementType();
  if (f.aTile.getElementType() != f.bTile.getElementType())
    return launch.emitOpError() << "expects x and w of one element type";
  // The consumers split the mma's a tile into 64-row wgmma blocks: the
  // token tile, or the weight tile after ggemm-swap-ab.
  f.swapped = f.store.getTransposed();
  if (f.swapped != f.config.getSwapAb())
    return launch.emitOpError()
           << "expects a transposed ggemm.store_tile exactly when the tile "
              "config has swap_ab (run ggemm-swap-ab after ggemm-tile)";
  // Ping-pong consumers were checked on the GPU with bf16/f16 operands,
  // every plain epilogue and clusters (NOTES v19); the rest is refused
  // rather than run unchecked.
  if (f.pingpong && (f.swapped || f.kRagged || isQuantized(f.aElem()) ||
                     f.gather || f.scatter || f.gated || f.yScale))
    return launch.emitOpError()
           << "expects bf16 or f16 operands without swap_ab, K-ragged "
              "segments, gathered or scattered rows, a gated epilogue or an "
              "e4m3 y for ping-pong consumers (only those are checked on the "
              "GPU)";
  TileType mmaA = f.swapped ? f.bTile : f.aTile;
  if (f.pingpong && mmaA.getRows() == 128)
    f.rowBlocks = 2;
  if (mmaA.getRows() != 64 * stageConsumers * f.rowBlocks)
    return launch.emitOpError() << "expects " << (f.swapped ? "B" : "A")
                                << " tiles of 64 rows per consumer warpgroup ("
                                << 64 * stageConsumers << "), got " << mmaA;
  if (f.swapped) {
    SmallVector<MmaOp> mmas;
    launch.walk([&](MmaOp mma) { mmas.push_back(mma); });
    if (llvm::any_of(mmas, [&](MmaOp mma) {
          return mma.getA().getType() != f.bTile ||
                 mma.getB().getType() != f.aTile;
        }))
      return launch.emitOpError()
             << "expects the mma of a swap_ab kernel to take the weight tile "
                "as a and the token tile as b";
  }
  if (f.xScale && f.aTile.getRows() + kScalesSlackRows > 256)
    return launch.emitOpError()
           << "expects at most " << 256 - kScalesSlackRows
           << " token rows per FP8 tile (the activation scales' TMA box holds "
              "block_m + "
           << kScalesSlackRows << " <= 256 scales), got " << f.aTile.getRows();
  if (f.kRagged && isFp8(f.aElem()) &&
      !isa<Float8E4M3FNType>(f.aTile.getElementType()))
    return launch.emitOpError()
           << "expects e4m3 operands in an FP8 K-ragged kernel (the runtime "
              "launches f8e4m3 segment_matmul_k kernels only), got "
           << f.aTile.getElementType();
  if (f.kRagged && f.wScale && f.bTile.getRows() + kScalesSlackRows > 256)
    return launch.emitOpError()
           << "expects at most " << 256 - kScalesSlackRows
           << " columns per FP8 K-ragged tile (the scales' TMA box holds "
              "block_n + "
           << kScalesSlackRows << " <= 256 scales), got " << f.bTile.getRows();
  if (f.config.getBlockM() != f.aTile.getRows() ||
      f.config.getBlockN() != f.bTile.getRows())
    return launch.emitOpError()
           << "expects the tiles of the schedule's "
              "config (block_m = "
           << f.config.getBlockM() << ", block_n = " << f.config.getBlockN()
           << "), got " << f.aTile << " and " << f.bTile;
  if (bool(f.xScale) != bool(f.wScale))
    return launch.emitOpError() << "expects activation and weight scales "
                                   "together (one promotion per K block)";
  if (f.clusterM > 1 && (f.kRagged || f.swapped || f.bTile.isMNMajor()))
    return launch.emitOpError()
           << "expects clusters only for segment, masked and batched "
              "kernels with nk weights, not swapped (the multicast weight "
              "tile is split by rows)";
  // The gated epilogue pairs accumulator columns j and j + block_n / 2 in
  // one thread (wgmma's fragments repeat every 8 columns): not with a
  // transposed accumulator or a multicast weight tile. Side by side, the
  // weight tile is two half-tile loads N rows apart, and an mn_major half
  // must be whole 128-byte boxes; interleaved, it is one load of a block
  // of 2 x gate_up_block rows, gate then up.
  launch.walk([&](LoadTileOp load) { f.splitB |= bool(load.getSplit()); });
  if (f.splitB != (f.gated && f.gateUpBlock == 0))
    return launch.emitOpError()
           << "expects a split weight tile exactly with a gated (swiglu) "
              "ggemm.store_tile of side-by-side gate and up halves "
              "(gate_up_block = 0), got "
           << (f.splitB ? "a split" : "an unsplit") << " weight tile and "
           << (f.gated ? "a gated" : "an ungated")
           << " store with gate_up_block = " << f.gateUpBlock;
  if (f.gated && f.gateUpBlock && f.bTile.getRows() != 2 * f.gateUpBlock)
    return launch.emitOpError()
           << "expects a weight tile of 2 x gate_up_block ("
           << 2 * f.gateUpBlock << ") rows, one block of gate and up rows, got "
           << f.bTile;
  if (f.gated) {
    int64_t half = f.bTile.getRows() / 2;
    if (f.swapped || f.clusterM > 1 || f.blockScaled() || f.kRagged ||
        half % 8 != 0 ||
        (f.splitB && f.bTile.isMNMajor() &&
         (half * getElementBytes(f.aElem())) % kSwizzleBytes != 0))
      return launch.emitOpError()
             << "expects a gated (swiglu) kernel without swap_ab, clusters "
                "or FP8, with halves of the weight tile that are whole "
                "8-column fragments (and, split, whole 128-byte boxes of an "
                "mn_major tile), got "
             << f.bTile;
  }
  if ((f.gather || f.scatter || f.gated) &&
      (f.schedule.getRowMapping() != RowMapping::segment || f.kRagged ||
       isQuantized(f.aElem()) || f.clusterM > 1))
    return launch.emitOpError()
           << "expects gathered or scattered rows and a gated (swiglu) "
              "epilogue only in a bf16/f16 segment kernel without clusters "
              "(the runtime launches them for segment_matmul)";
  if (f.gather && f.swapped)
    return launch.emitOpError() << "expects no swap_ab with gathered rows "
                                   "(the gathered tile is wgmma's A)";
  if (f.scatter && failed(verifyKernelAddressed(f.store, "scatter_indices",
                                                f.scatter, true)))
    return failure();
  if (f.gather &&
      failed(verifyKernelAddressed(launch, "row_indices", f.gather, true)))
    return failure();
  SmallVector<Type> expectedRing = {f.aTile, f.bTile};
  if (f.blockScaled()) {
    if (!isFp8(f.aElem()))
      return launch.emitOpError() << "expects block scales only with FP8 "
                                     "tiles, got "
                                  << f.aTile;
    if (f.aScales.getCount() != f.aTile.getRows())
      return launch.emitOpError()
             << "expects one activation scale per tile row ("
             << f.aTile.getRows() << "), got " << f.aScales;
    // K-ragged: one scale per row of the b tile too.
    int64_t weightScales = f.kRagged
                               ? f.bTile.getRows()
                               : getScaleBlocksPerTile(f.bTile.getRows(), 128);
    if (f.bScales.getCount() != weightScales)
      return launch.emitOpError()
             << "expects the scales of the "
             << (f.kRagged ? "rows of a b tile of "
                           : "128-row weight scale blocks a tile of ")
             << f.bTile.getRows() << " rows" << (f.kRagged ? "" : " covers")
             << " (" << weightScales << "), got " << f.bScales;
    // TMA reads the activation scales of a tile's rows as one box: the
    // rows must be contiguous (MN-major). Masked and batched scales are
    // [G, Mmax, KB] collapsed to rows: their row dimension is the source's
    // second to last (collapse_shape cannot keep a dynamic unit stride).
    auto checkMNMajor = [&](Value scales) -> LogicalResult {
      if (auto collapse = scales.getDefiningOp<memref::CollapseShapeOp>())
        scales = collapse.getSrc();
      auto type = cast<MemRefType>(scales.getType());
      SmallVector<int64_t> strides;
      int64_t offset;
      if (failed(type.getStridesAndOffset(strides, offset)) ||
          strides[type.getRank() - 2] != 1)
        return launch.emitOpError()
               << "expects MN-major "
               << (f.kRagged ? "scales" : "activation scales")
               << " (rows contiguous, memref<?x?xf32, strided<[1, ?]>>) for "
                  "the GPU back end, got "
               << type;
      return success();
    };
    if (failed(checkMNMajor(f.xScale)))
      return failure();
    if (f.kRagged
            ? failed(checkMNMajor(f.wScale))
            : failed(verifyKernelAddressed(launch, "w_scale", f.wScale, true)))
      return failure();
    expectedRing.append({f.aScales, f.bScales});
    if (f.epilogueScaled())
      return launch.emitOpError()
             << "expects either block scales or epilogue scales (x_scale, "
                "w_scale on ggemm.store_tile), not both";
  } else if (isQuantized(f.aElem()) != f.epilogueScaled()) {
    return launch.emitOpError()
           << "expects FP8 tiles with block scales (ggemm.load_scales and "
              "ggemm.promote) or with epilogue scales (x_scale, w_scale on "
              "ggemm.store_tile), INT8 tiles with epilogue scales, and no "
              "scales for "
           << f.aElem();
  }
  if (TypeRange(f.ring.getRing().getType().getTiles()) !=
      TypeRange(expectedRing)) {
    std::string expected;
    llvm::raw_string_ostream os(expected);
    llvm::interleaveComma(expectedRing, os);
    return f.ring.emitOpError()
           << "expects a ring of the A and B tiles (and, with block scales, "
              "their scales): ("
           << expected << ")";
  }

  // The kernel addresses y, bias, row_scale and epilogue scales itself (y
  // row by row with the runtime's row stride, the others densely).
  if (failed(verifyKernelAddressed(f.store, "y", f.y, /*dense=*/false)) ||
      (f.bias &&
       failed(verifyKernelAddressed(f.store, "bias", f.bias, true))) ||
      (f.rowScale &&
       failed(verifyKernelAddressed(f.store, "row_scale", f.rowScale, true))) ||
      (f.xEpilogueScale && failed(verifyKernelAddressed(
                               f.store, "x_scale", f.xEpilogueScale, true))) ||
      (f.wEpilogueScale && failed(verifyKernelAddressed(
                               f.store, "w_scale", f.wEpilogueScale, true))))
    return failure();

  MemRefType wType = cast<MemRefType>(f.w.getType());
  auto staticOr = [](int64_t d) { return ShapedType::isDynamic(d) ? -1 : d; };
  f.staticGroups = staticIndex(f.schedule.getNumGroups());
  if (f.groupRows) {
    // The group count is also the static size of seg_indptr (G + 1) or of
    // the masked counts (G).
    int64_t size = cast<MemRefType>(f.groupRows.getType()).getDimSize(0);
    bool offsets =
        f.kRagged || f.schedule.getRowMapping() == RowMapping::segment;
    if (!ShapedType::isDynamic(size))
      f.staticGroups = offsets ? size - 1 : size;
  }
  if (f.kRagged) {
    // dy is [T, N] and x [T, K] (transposed: [N, T] and [K, T], read as
    // k_major tiles); the a operand is dy for `nk`.
    bool nk = f.kRaggedLayout == WeightLayout::nk;
    unsigned featureDim = f.aTile.isMNMajor() ? 1 : 0;
    auto cols = [&](Value matrix) {
      return staticOr(
          cast<MemRefType>(matrix.getType()).getDimSize(featureDim));
    };
    f.staticN = cols(nk ? f.x : f.w);
    f.staticK = cols(nk ? f.w : f.x);
    f.staticWeights = f.staticGroups;
    return f;
  }
  f.staticN = staticOr(wType.getDimSize(f.nMajorB() ? 2 : 1));
  // The manifest's n is y's columns: half of a gated w's rows.
  if (f.gated && f.staticN > 0)
    f.staticN /= 2;
  f.staticK = staticOr(wType.getDimSize(f.nMajorB() ? 1 : 2));
  f.staticWeights = staticOr(wType.getDimSize(0));
  return f;
}
