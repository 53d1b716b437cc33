//===- Kernel.h - what convert-ggemm-to-nvvm builds a kernel from -*- C++
//-*-===//
//
// Private to convert-ggemm-to-nvvm: the kernel's parameter ABI, the facts a
// launch's IR states (read once, checked against what this back end can
// compile), the launch manifest, and the translator that writes the kernel
// body op by op.
//
//===----------------------------------------------------------------------===//
#ifndef GGEMM_LIB_CONVERSION_GGEMMTONVVM_KERNEL_H
#define GGEMM_LIB_CONVERSION_GGEMMTONVVM_KERNEL_H

#include "../Utils/ProgramTranslator.h"
#include "ggemm/Dialect/GGemm/Transforms/TileSchedule.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::ggemm::nvvm {

/// Kernel parameters, in order. Keep in step with docs/Bundle.md and the
/// runtime's manifest reader.
enum KernelParam : unsigned {
  kADesc,
  kBDesc,
  kY,
  kGroupRows,
  kWeightIndices,
  kBias,
  kRowScale,
  kNumRows,
  kRowsPerGroup,
  kNumGroups,
  kN,
  kK,
  kLdy,
  kNumWeights,
  kNumParams,
  // Kernels with FP8 block scales only: the TMA descriptor of the MN-major
  // activation scales and the weight scales (a K-ragged kernel: the
  // descriptors of its a and b operands' MN-major scales).
  kAScaleDesc = kNumParams,
  kWScale,
  kNumBlockScaledParams
};

struct KernelFacts;

/// The parameter types, in the order above (with the scale parameters when
/// `blockScaled`, then y's TMA descriptor when `staged`, then the gather
/// indices, then the scatter indices and y's rows, then the epilogue scales,
/// then an e4m3 y's scales; see KernelFacts).
SmallVector<Type> kernelParamTypes(MLIRContext *ctx, const KernelFacts &facts);

/// Bytes of one 128-byte swizzle row: the contiguous extent of every smem
/// tile box.
constexpr int64_t kSwizzleBytes = 128;

/// Spin hint for mbarrier.try_wait.
constexpr int64_t kWaitTicks = 10000000;

/// The named barrier (`bar.sync`) the consumer warpgroups meet at after a
/// ggemm.zero_k_tail; 0 is the CTA-wide one.
constexpr int64_t kZeroKTailBarrier = 1;

/// The named barriers of the staged epilogue's warpgroups: consumer
/// warpgroup w meets its 128 threads at kStoreBarrierBase + w.
constexpr int64_t kStoreBarrierBase = 2;

/// The named barriers of ping-pong turns: consumer warpgroup w waits for
/// its turn at kTurnBarrierBase + w (after the store barriers of up to three
/// warpgroups), which the other warpgroup arrives at.
constexpr int64_t kTurnBarrierBase = kStoreBarrierBase + 3;

/// What a launch's IR says about its kernel, read by `analyseLaunch`.
struct KernelFacts {
  std::string name;
  // Op handles are value types whose accessors are not const.
  mutable LaunchOp launch;
  mutable TileScheduleOp schedule;
  mutable WarpSpecializeOp roles;
  mutable CreateRingOp ring;
  mutable StoreTileOp store;
  TileConfigAttr config;
  RingLayoutAttr layout;
  /// The memrefs the kernel reads and writes, bound to parameters; null
  /// where the kernel has none.
  Value x, w, y, groupRows, weightIndices, bias, rowScale;
  /// FP8 block scales: the memrefs and their per-K-block entries; null
  /// without.
  Value xScale, wScale;
  ScalesType aScales, bScales;
  TileType aTile, bTile;
  Type outElem, indexElem; // indexElem: null for uniform rows
  int64_t numConsumers;
  /// CTAs of a cluster along m (1: no clusters); they share the weight
  /// tile by TMA multicast.
  int64_t clusterM = 1;
  /// CTAs of a split-K cluster (tile_config's split_k; 1: none), and the
  /// bytes of one partial accumulator in the split-K buffer.
  int64_t splitK = 1, splitKSlotBytes = 0;
  /// The CTAs of a thread-block cluster, whichever kind.
  int64_t clusterSize() const { return clusterM * splitK; }
  /// ggemm-swap-ab swapped the mma's operands: the weight tile is wgmma's A
  /// and the store transposed.
  bool swapped = false;
  /// The consumer warpgroups take alternate tiles (ggemm.warp_specialize
  /// pingpong) instead of 64-row blocks of every tile.
  bool pingpong = false;
  /// ggemm.launch dependent_launch: the kernel waits for the previous grid
  /// of its stream first and lets the next one launch
  /// (programmatic dependent launch).
  bool dependentLaunch = false;
  /// The 64-row blocks of a tile one consumer warpgroup holds: 1, or 2 for
  /// a ping-pong warpgroup's 128-row tile (its registers are the blocks'
  /// one after the other).
  int64_t rowBlocks = 1;
  /// A K-ragged program (ggemm.segment_matmul_k): `x` and `w` are the mma's
  /// a and b sources, both [T, *] matrices read as mn_major tiles, the K
  /// loop runs over a segment of `groupRows` (`ggemm.segment_bounds`), and
  /// `kRaggedLayout` says which of them is dy (`nk`: a; `kn`: b).
  bool kRagged = false;
  WeightLayout kRaggedLayout = WeightLayout::nk;
  int64_t threads;
  // Static sizes for the manifest, -1 when dynamic.
  int64_t staticN, staticK, staticGroups, staticWeights;

  /// ggemm-tma-store's decision: the epilogue goes through shared memory
  /// and TMA stores (null: masked global stores only).
  StoreStagingAttr staging;

  /// MoE fusion (issue 13): the gather indices of x's rows
  /// (`ggemm.load_tile ... gather`), the scatter indices of y's rows
  /// (`ggemm.store_tile ... scatter`), null without; a gated (swiglu)
  /// epilogue, whose w has 2N rows; an atomic (scatter-add) epilogue.
  Value gather, scatter;
  bool gated = false, atomic = false;
  /// FP8 tensor-wise and per-row scales, applied by the store (null
  /// without): x's per row or tensor-wise, w's per output channel or one
  /// per weight.
  Value xEpilogueScale, wEpilogueScale;
  bool perRowXScale = false, perChannelWScale = false;
  /// An e4m3 y's 1x128 scales, written by the store (null without).
  Value yScale;
  /// A gated weight's layout: side by side (0), its tile split into a gate
  /// half and an up half N rows apart (`splitB`), or interleaved in blocks
  /// of `gateUpBlock` rows, its tile one box of both.
  int64_t gateUpBlock = 0;
  bool splitB = false;

  bool nMajorB() const { return !kRagged && bTile.isMNMajor(); }
  bool staged() const { return bool(staging); }
  /// The parameter of y's TMA descriptor (staged stores only): after the
  /// scale parameters.
  unsigned yDescParam() const {
    return blockScaled() ? kNumBlockScaledParams : kNumParams;
  }
  /// The parameters after y's descriptor: the gather indices (with
  /// `gather`), then the scatter indices and y's row count (with
  /// `scatter`).
  unsigned gatherParam() const { return yDescParam() + (staged() ? 1 : 0); }
  /// With `gather`, after the indices: x's address, row stride (elements)
  /// and rows, for the producer's cp.async copies.
  unsigned xParam() const { return gatherParam() + 1; }
  unsigned ldaParam() const { return gatherParam() + 2; }
  unsigned xRowsParam() const { return gatherParam() + 3; }
  unsigned scatterParam() const { return gatherParam() + (gather ? 4 : 0); }
  unsigned yRowsParam() const { return scatterParam() + 1; }
  /// With epilogue scales, after the scatter parameters: x's and w's scales
  /// by address.
  unsigned xScaleParam() const { return scatterParam() + (scatter ? 2 : 0); }
  unsigned wScaleParam() const { return xScaleParam() + 1; }
  /// With an e4m3 y, after the epilogue scales: y_scale's address and its
  /// row and column strides (elements).
  unsigned yScaleParam() const {
    return xScaleParam() + (epilogueScaled() ? 2 : 0);
  }
  unsigned yScaleRowStrideParam() const { return yScaleParam() + 1; }
  unsigned yScaleColStrideParam() const { return yScaleParam() + 2; }
  bool epilogueScaled() const { return bool(xEpilogueScale); }
  bool blockScaled() const { return bool(aScales); }
  Type aElem() const { return aTile.getElementType(); }
  /// The parameters that are TMA descriptors, passed by value
  /// (__grid_constant__): a and b, the block scales' (x's, and with a
  /// K-ragged kernel b's in kWScale's place), y's when staged.
  SmallVector<int64_t> descriptorParams() const {
    SmallVector<int64_t> descriptors = {kADesc, kBDesc};
    if (blockScaled())
      descriptors.push_back(kAScaleDesc);
    if (blockScaled() && kRagged)
      descriptors.push_back(kWScale);
    if (staged())
      descriptors.push_back(yDescParam());
    return descriptors;
  }
};

/// Reads the facts of `launch`, or explains why this back end cannot
/// compile it.
FailureOr<KernelFacts> analyseLaunch(LaunchOp launch, StringRef name);

/// The launch manifest of a kernel (see docs/Bundle.md), as an attribute so
/// it survives until ggemm-export-bundle writes it as JSON.
DictionaryAttr buildManifest(MLIRContext *ctx, const KernelFacts &facts);

/// Dynamic shared memory of the routing kernel of `numExperts` experts.
int64_t routingSharedBytes(int64_t numExperts);

/// Builds the routing kernel of `op` (RoutingToNVVM.cpp), gpu.func `name` in
/// gpu.module `name`_module at the end of `module`, and returns its
/// manifest; fails with a diagnostic when it cannot.
FailureOr<DictionaryAttr> buildRoutingKernel(SortByExpertOp op, ModuleOp module,
                                             StringRef name);

/// Builds the quantize kernel of `op` (QuantizeToNVVM.cpp), gpu.func `name`
/// in gpu.module `name`_module at the end of `module`, and returns its
/// manifest; fails with a diagnostic when it cannot.
FailureOr<DictionaryAttr> buildQuantizeKernel(QuantizeOp op, ModuleOp module,
                                              StringRef name);

/// Writes the body of a kernel from the launch's IR, one small function
/// per ggemm op.
class KernelTranslator : public ProgramTranslator {
public:
  KernelTranslator(OpBuilder &b, const KernelFacts &facts,
                   gpu::GPUFuncOp kernel, LLVM::GlobalOp smem);

  /// Translates the launch body into the kernel.
  LogicalResult translate();

protected:
  LogicalResult translateGGemmOp(Operation *op) override;
  LogicalResult translateOther(Operation *op) override;
  Value resolveExternal(Value value, Operation *user) override;

private:
  // Helpers (NVVMHelpers.cpp).
  Value idx(int64_t v);
  Value c32(int64_t v);
  Value c64(int64_t v);
  Value toIndex(Value v);
  Value toI32(Value v);
  Value toI64(Value v);
  Value add(Value x, Value y);
  Value mul(Value x, Value y);
  Value cmp(arith::CmpIPredicate p, Value x, Value y);
  Value byteOffset(Value base, Value offset);
  Value elementAddress(Value base, Type elemType, Value index);
  Value load(Type type, Value address);
  Value wgmmaDescriptor(Value smemAddress, int64_t leadingBytes,
                        int64_t strideBytes);
  Value param(KernelParam p) { return kernel.getArgument(p); }

  // The ring (RingToNVVM.cpp).
  Value ringSlot(Value position);
  Value ringParity(Value position);
  Value ringBarrier(Value slot, bool empty);
  Value ringBuffer(unsigned tile, Value slot);
  LogicalResult translateCreateRing(CreateRingOp op);
  LogicalResult translateRingPut(RingPutOp op);
  LogicalResult translatePrefetchTile(PrefetchTileOp op);
  /// The TMA coordinates of the box at `indices` (`op`'s): the memref
  /// indices translated, innermost first, as i32.
  LogicalResult tmaCoordinates(Operation *op, ValueRange indices,
                               SmallVectorImpl<Value> &coords);
  LogicalResult translateRingGet(RingGetOp op);
  LogicalResult translateRingRelease(RingReleaseOp op);
  LogicalResult translateWarpSpecialize(WarpSpecializeOp op);

  // A split-K cluster's partial sums (SplitKToNVVM.cpp).
  /// The ring layout's split-K buffer, and its full / empty mbarrier.
  /// The split-K buffer and its mbarriers, from `base` (the shared
  /// memory's start when null).
  Value splitKBuffer(Value base = Value());
  Value splitKBarrier(bool empty, Value base = Value());
  void initSplitKBarriers();
  /// Waits for the phase of parity `parity` of `barrier`, with the
  /// cluster-scoped acquire that other CTAs' arrivals need.
  void waitClusterPhase(Value barrier, Value parity);
  LogicalResult translateSplitKSum(SplitKSumOp op);

  // The tile ops (TileOpsToNVVM.cpp).
  /// The thread's place in its warpgroup's share of an accumulator: its
  /// first row (64 warpgroup + 16 warp + lane / 4; the second is 8 below)
  /// and its first column of every 8 (2 (lane % 4)).
  struct FragmentBase {
    Value row, col;
  };
  FragmentBase fragmentBase();
  /// A warpgroup's accumulator registers as its `blocks` 64-row blocks'
  /// (each the registers of an m64 accumulator), and back.
  SmallVector<Value> splitRowBlocks(Value acc, int64_t blocks);
  Value joinRowBlocks(ArrayRef<Value> parts, Type type);
  LogicalResult translateMma(MmaOp op);
  LogicalResult translatePromote(PromoteOp op);
  /// The factor each accumulator register of `op`'s partial is scaled by
  /// (row scale x column scale), read from the stage slot's scales.
  FailureOr<SmallVector<Value>> promoteFactors(PromoteOp op);
  /// Factors translateMma read ahead of a product's wgmma, by promotion.
  llvm::DenseMap<Operation *, SmallVector<Value>> hoistedPromoteFactors;
  SmallVector<Value> loadWeightScales(LoadScalesOp load);
  LogicalResult putActivationScales(LoadScalesOp load, Value alignedRow,
                                    Value dst, Value full);
  LogicalResult putGatheredRows(TileType type, Value k0,
                                ArrayRef<Value> sourceRows, Value lane,
                                Value warpRow0, Value dst, Value full);
  LogicalResult translateStore(StoreTileOp op);
  void storeDirect(Value acc, Value row0, Value rowEnd, Value col0,
                   Value weight, int64_t blockN);
  void storeStaged(StoreTileOp op, Value acc, Value row0, Value rowEnd,
                   Value col0, Value weight, int64_t blockN);
  /// An e4m3 y: each row's 128-column blocks quantised (y_scale) and
  /// stored with masked byte-pair stores.
  void storeQuantized(Value acc, Value row0, Value rowEnd, Value col0,
                      Value weight, int64_t blockN);
  /// Block `block` (128 columns from the thread's `colBase`) of an e4m3
  /// y's two fragment rows: the epilogue's f32 values in place of their
  /// accumulator registers, each row's scale and factor (the quad's
  /// maximum), the columns of the thread's pairs.
  struct QuantizedBlock {
    Value scale[2], factor[2];
    SmallVector<Value> cols;
  };
  QuantizedBlock quantizeBlock(Value &acc, int64_t block, Value colBase,
                               Value weight, ArrayRef<Value> rowScale,
                               ArrayRef<Value> rowFactor);
  /// The e4m3 pair (i16, column j + 1 in the upper byte) of the thread's
  /// j-th column pair of `block` in fragment row h.
  Value quantizedPair(Value acc, int64_t block, int64_t j, int64_t h,
                      Value factor);
  /// The scale of `row`'s block at `blockCol`, by the quad's first lane.
  void storeBlockScale(Value scale, Value row, Value blockCol);
  /// A gated (swiglu) tile's accumulator of `blockN` columns as the
  /// accumulator of its `blockN / 2` output columns: `silu(gate + bias) *
  /// (up + bias)` in f32.
  Value gateAccumulator(Value acc, Value col0, Value weight, int64_t blockN);
  /// An i32 accumulator's registers (an INT8 product) as f32 ones.
  Value accumulatorToF32(Value acc);
  LogicalResult translateStoreDrain(StoreDrainOp op);
  Value epiloguePair(Value v0, Value v1, Value rowScale, Value rowFactor,
                     Value row, Value col, Value weight, Value oldPair);
  LogicalResult translateTransposedStore(StoreTileOp op, Value acc, Value row0,
                                         Value rowEnd, Value col0,
                                         Value weight);
  /// The store of one warpgroup's 64 rows (`rowWarpgroup`'s block).
  LogicalResult translateStoreRows(StoreTileOp op, Value acc, Value row0,
                                   Value rowEnd, Value col0, Value weight);
  /// FP8 tensor-wise / per-row scales (`x_scale`, `w_scale` of the store):
  /// a row's factor, `sx(row)` times the tile's tensor-wise factors (null
  /// without scales), and an element's, the row's times `sw(col)`.
  Value rowDequant(Value row);
  Value elementDequant(Value rowFactor, Value col);
  void storeElement(Value value, Value rowScale, Value rowFactor, Value row,
                    Value col, Value weight);
  void storePair(Value v0, Value v1, Value rowScale, Value rowFactor, Value row,
                 Value col, Value weight);
  LogicalResult translateDim(memref::DimOp op);
  Value dimSize(memref::DimOp op, OpBuilder &at);
  LogicalResult translateSegmentBounds(SegmentBoundsOp op);
  LogicalResult translateZeroKTail(ZeroKTailOp op);

  const KernelFacts &facts;
  gpu::GPUFuncOp kernel;
  LLVM::GlobalOp smemGlobal;
  Location loc;
  MLIRContext *ctx;
  Type i1, i32, i64;
  FloatType f32;
  LLVM::LLVMPointerType ptrShared, ptrCluster;
  /// Set up at the kernel's entry. `rowWarpgroup` is the warpgroup's 64-row
  /// block of a tile: `warpgroup`, or 0 with ping-pong consumers.
  Value tid, warpgroup, rowWarpgroup, smem;
  /// The CTA's rank in its cluster (blockIdx.x mod cluster_m), with
  /// clusters.
  Value clusterRank;
  Value numRows, rowsPerGroup, numGroups, n, k, ldy, numWeights;
  /// The weight scales' row and K-block counts (ceil(N / 128),
  /// ceil(K / 128)), with block scales.
  Value scaleRows, scaleBlocks;
  std::optional<TileSchedule> schedule;
  /// Set by translateStore for its tile: the product of the tensor-wise
  /// scale factors (null: none) and the weight the scales are read at.
  Value tileDequant, dequantWeight;
  /// Constants of the host function, cloned once into the kernel.
  IRMapping externalConstants;
  OpBuilder entry;
};

} // namespace mlir::ggemm::nvvm

#endif // GGEMM_LIB_CONVERSION_GGEMMTONVVM_KERNEL_H
