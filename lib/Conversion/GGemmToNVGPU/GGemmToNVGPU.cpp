//===- GGemmToNVGPU.cpp - tile programs -> Hopper kernels -----------------===//
//
// Builds one warp-specialised, persistent kernel per ggemm.foreach_tile:
//
//   warpgroups 0 .. C-1   consumers: wait for a full stage, chain
//                         wgmma.mma_async over it, release it, and at the end
//                         of a tile run the epilogue with row-masked stores;
//   warpgroup C           producer: one elected thread issues the TMA loads
//                         of A and B into the S-stage ring.
//
// Both roles walk the same tile ids (blockIdx.x, += gridDim.x) and map each to
// (group, row, col) with TileSchedule, the code the CPU back end also uses.
// Stages are handed over with full/empty mbarriers kept in dynamic shared
// memory; a running stage counter carries the mbarrier phases across tiles.
//
// The kernel is written with NVVM ops (mbarriers, TMA, wgmma, setmaxnreg) and
// LLVM pointers rather than nvgpu: nvgpu's wgmma descriptor iteration only
// handles an N-major B, and its mbarrier group lives in static shared memory
// with no control of the layout (see shared/mlir22/FACTS.md, §1 and §5c).
//
//===----------------------------------------------------------------------===//

#include "ggemm/Conversion/Passes.h"
#include "ggemm/Dialect/GGemm/IR/GGemm.h"
#include "ggemm/Dialect/GGemm/Transforms/Epilogue.h"
#include "ggemm/Dialect/GGemm/Transforms/TileSchedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_CONVERTGGEMMTONVGPU
#include "ggemm/Conversion/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;

namespace {

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
  kNumParams
};

/// Bytes of one 128-byte swizzle row: the K extent of every smem tile row.
constexpr int64_t kSwizzleBytes = 128;
/// N columns of one N-major B box (one 128-byte swizzle row of bf16/f16).
constexpr int64_t kNMajorBoxCols = 64;
/// Spin hint for mbarrier.try_wait.
constexpr int64_t kWaitTicks = 10000000;

/// Everything the kernel builder needs, read off the tile program.
struct KernelPlan {
  std::string name;
  // Op handles are value types whose accessors are not const.
  mutable ForeachTileOp loop;
  mutable TileMmaOp mma;
  mutable TileStoreOp store;
  TileConfigAttr config;
  PipelineAttr pipeline;
  Type aElem, outElem, indexElem; // indexElem: null for uniform
  int64_t elemBytes;
  bool nMajorB;
  bool hasWeightIndices, hasBias, hasRowScale, accumulate;
  Activation activation;
  int64_t numConsumers;
  int64_t staticN, staticK; // -1 when dynamic
  int64_t staticGroups, staticWeights;
};

/// Builder with the handful of helpers the kernel needs.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, const KernelPlan &plan)
      : b(b), loc(loc), plan(plan), ctx(b.getContext()) {
    i1 = b.getI1Type();
    i32 = b.getI32Type();
    i64 = b.getI64Type();
    f32 = b.getF32Type();
    ptr = LLVM::LLVMPointerType::get(ctx);
    ptrGlobal = LLVM::LLVMPointerType::get(ctx, 1);
    ptrShared = LLVM::LLVMPointerType::get(ctx, 3);
    ptrCluster = LLVM::LLVMPointerType::get(ctx, 7);
  }

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value c32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  Value c64(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 64); }
  Value toIndex(Value v) {
    if (v.getType().isIndex())
      return v;
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }
  Value toI32(Value v) { return arith::IndexCastOp::create(b, loc, i32, v); }
  Value toI64(Value v) { return arith::IndexCastOp::create(b, loc, i64, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }

  /// `base + offset` bytes, for an index offset.
  Value byteOffset(Value base, Value offset) {
    return LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(), base,
                               ValueRange{toI64(offset)});
  }
  /// Address of element `index` of `elemType` at `base`.
  Value elementAddress(Value base, Type elemType, Value index) {
    return LLVM::GEPOp::create(b, loc, base.getType(), elemType, base,
                               ValueRange{toI64(index)});
  }
  Value load(Type type, Value address) {
    return LLVM::LoadOp::create(b, loc, type, address);
  }

  /// Descriptor of a 128-byte swizzled shared-memory tile for wgmma:
  /// start address >> 4 in bits [0, 14), leading byte offset >> 4 in
  /// [16, 30), stride byte offset >> 4 in [32, 46), swizzle mode 1 (128 B)
  /// in [62, 64).
  Value wgmmaDescriptor(Value smemAddress, int64_t leadingBytes,
                        int64_t strideBytes) {
    Value addr = LLVM::PtrToIntOp::create(b, loc, i64, smemAddress);
    Value addrField = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, addr, c64(4)), c64(0x3fff));
    uint64_t constant = (uint64_t(leadingBytes >> 4) & 0x3fff) << 16 |
                        (uint64_t(strideBytes >> 4) & 0x3fff) << 32 |
                        uint64_t(1) << 62;
    return arith::OrIOp::create(b, loc, addrField,
                                c64(static_cast<int64_t>(constant)));
  }

  OpBuilder &b;
  Location loc;
  const KernelPlan &plan;
  MLIRContext *ctx;
  Type i1, i32, i64;
  FloatType f32;
  LLVM::LLVMPointerType ptr, ptrGlobal, ptrShared, ptrCluster;
};

NVVM::WGMMATypes wgmmaType(Type t) {
  if (t.isBF16())
    return NVVM::WGMMATypes::bf16;
  if (t.isF16())
    return NVVM::WGMMATypes::f16;
  if (isa<Float8E4M3FNType>(t))
    return NVVM::WGMMATypes::e4m3;
  return NVVM::WGMMATypes::e5m2;
}

StringRef dtypeName(Type t) {
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  if (t.isF32())
    return "f32";
  if (isa<Float8E4M3FNType>(t))
    return "f8e4m3";
  if (isa<Float8E5M2Type>(t))
    return "f8e5m2";
  if (t.isInteger(32))
    return "i32";
  return "i64";
}

/// The value of an index known at compile time (a constant, or the static
/// size of a memref.dim), or -1.
int64_t staticIndex(Value value) {
  if (auto cst = value.getDefiningOp<arith::ConstantIndexOp>())
    return cst.value();
  if (auto dim = value.getDefiningOp<memref::DimOp>()) {
    auto type = dyn_cast<MemRefType>(dim.getSource().getType());
    std::optional<int64_t> index = dim.getConstantIndex();
    if (type && index && *index < type.getRank() && !type.isDynamicDim(*index))
      return type.getDimSize(*index);
  }
  return -1;
}

/// Checks a memref the kernel reads or writes through a bare pointer: the
/// innermost dimension must be contiguous, and `dense` ones must have the
/// identity (row-major, unpadded) layout.
LogicalResult verifyKernelAddressed(TileStoreOp op, StringRef name, Value value,
                                    bool dense) {
  auto type = cast<MemRefType>(value.getType());
  if (dense) {
    if (!type.getLayout().isIdentity() &&
        !type.areTrailingDimsContiguous(type.getRank()))
      return op.emitOpError() << "expects " << name
                              << " to be a dense row-major memref for the GPU "
                                 "back end, got "
                              << type;
    return success();
  }
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.empty() ||
      strides.back() != 1)
    return op.emitOpError()
           << "expects the innermost dimension of " << name
           << " to be contiguous for the GPU back end, got " << type;
  return success();
}

/// Reads the tile program of `loop` into a plan, or explains why this back
/// end cannot compile it.
FailureOr<KernelPlan> analyse(ForeachTileOp loop, StringRef name) {
  KernelPlan plan;
  plan.name = name.str();
  plan.loop = loop;
  for (Operation &op : loop.getBody().front()) {
    if (auto mma = dyn_cast<TileMmaOp>(op)) {
      if (plan.mma)
        return loop.emitOpError() << "expects one ggemm.tile_mma per tile "
                                     "loop for the GPU back end";
      plan.mma = mma;
    } else if (auto store = dyn_cast<TileStoreOp>(op)) {
      if (plan.store)
        return loop.emitOpError() << "expects one ggemm.tile_store per tile "
                                     "loop for the GPU back end";
      plan.store = store;
    } else if (!isa<YieldOp>(op)) {
      return op.emitOpError()
             << "is not supported inside a tile loop by the GPU back end "
                "(expected only ggemm.tile_mma and ggemm.tile_store)";
    }
  }
  if (!plan.mma || !plan.store || plan.store.getAcc() != plan.mma.getAcc())
    return loop.emitOpError() << "expects a ggemm.tile_mma whose accumulator "
                                 "is stored by a ggemm.tile_store";
  Value group = loop.getGroupArg(), row = loop.getRowBeginArg(),
        rowEnd = loop.getRowEndArg(), col = loop.getColBeginArg();
  if (plan.mma.getGroup() != group || plan.mma.getRow() != row ||
      plan.mma.getCol() != col || plan.store.getGroup() != group ||
      plan.store.getRow() != row || plan.store.getRowEnd() != rowEnd ||
      plan.store.getCol() != col)
    return loop.emitOpError() << "expects the tile ops to compute exactly the "
                                 "tile the loop yields";
  plan.pipeline = plan.mma.getPipelineAttr();
  if (!plan.pipeline)
    return plan.mma.emitOpError() << "expects a `pipeline` plan: run "
                                     "ggemm-pipeline first";
  plan.config = loop.getConfig();
  if (plan.mma.getConfig() != plan.config)
    return plan.mma.emitOpError() << "expects the tile loop's config";
  plan.aElem = plan.mma.getX().getType().getElementType();
  if (isFp8(plan.aElem))
    return plan.mma.emitOpError() << "FP8 operands are not supported by the "
                                     "GPU back end yet";
  plan.elemBytes = getElementBytes(plan.aElem);
  plan.outElem = plan.store.getY().getType().getElementType();
  plan.nMajorB = plan.mma.getWeightLayout() == WeightLayout::kn;
  plan.numConsumers = plan.config.getConsumerWarpgroups();
  if (plan.config.getBlockM() != 64 * plan.numConsumers)
    return loop.emitOpError()
           << "expects block_m = 64 x consumer_warpgroups ("
           << 64 * plan.numConsumers << ") for the GPU back end, got "
           << plan.config.getBlockM();
  if (plan.nMajorB && plan.config.getBlockN() % kNMajorBoxCols != 0)
    return loop.emitOpError() << "expects block_n to be a multiple of 64 for "
                                 "weight_layout kn (64-column TMA boxes), got "
                              << plan.config.getBlockN();
  if (plan.config.getClusterM() * plan.config.getClusterN() != 1)
    return loop.emitOpError() << "thread-block clusters are not supported by "
                                 "the GPU back end yet";
  if (plan.store.getWeightIndices() != plan.mma.getWeightIndices())
    return plan.store.emitOpError() << "expects the weight_indices of the "
                                       "tile_mma";
  plan.hasWeightIndices = static_cast<bool>(plan.mma.getWeightIndices());
  plan.hasBias = static_cast<bool>(plan.store.getBias());
  plan.hasRowScale = static_cast<bool>(plan.store.getRowScale());
  EpilogueAttr epilogue = plan.store.getEpilogueAttr();
  plan.activation = epilogue ? epilogue.getActivation() : Activation::none;
  plan.accumulate = epilogue && epilogue.getAccumulate();
  if (Value rows = loop.getGroupRows())
    plan.indexElem = cast<MemRefType>(rows.getType()).getElementType();
  MemRefType wType = plan.mma.getW().getType();
  auto staticOr = [](int64_t d) { return ShapedType::isDynamic(d) ? -1 : d; };
  plan.staticN =
      staticOr(plan.nMajorB ? wType.getDimSize(2) : wType.getDimSize(1));
  plan.staticK =
      staticOr(plan.nMajorB ? wType.getDimSize(1) : wType.getDimSize(2));
  plan.staticWeights = staticOr(wType.getDimSize(0));
  plan.staticGroups = staticIndex(loop.getNumGroups());
  if (Value rows = loop.getGroupRows()) {
    // The group count is also the static size of seg_indptr (G + 1) or of
    // the masked counts (G).
    int64_t size = cast<MemRefType>(rows.getType()).getDimSize(0);
    if (!ShapedType::isDynamic(size))
      plan.staticGroups =
          loop.getRowMapping() == RowMapping::segment ? size - 1 : size;
  }

  // The kernel addresses y, bias and row_scale itself (y row by row with the
  // runtime's row stride, bias and row_scale densely): their innermost
  // dimension must be contiguous and bias/row_scale dense.
  if (failed(verifyKernelAddressed(plan.store, "y", plan.store.getY(),
                                   /*dense=*/false)) ||
      (plan.hasBias && failed(verifyKernelAddressed(
                           plan.store, "bias", plan.store.getBias(), true))) ||
      (plan.hasRowScale &&
       failed(verifyKernelAddressed(plan.store, "row_scale",
                                    plan.store.getRowScale(), true))))
    return failure();
  return plan;
}

/// The launch manifest of a kernel (see docs/Bundle.md), as an attribute so
/// it survives until ggemm-export-bundle writes it as JSON.
DictionaryAttr buildManifest(MLIRContext *ctx, const KernelPlan &plan,
                             int64_t threads, StringRef op) {
  Builder b(ctx);
  auto named = [&](StringRef k, Attribute v) { return b.getNamedAttr(k, v); };
  auto i = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  auto s = [&](StringRef v) { return b.getStringAttr(v); };
  auto arr = [&](ArrayRef<int64_t> vs) {
    SmallVector<Attribute> attrs;
    for (int64_t v : vs)
      attrs.push_back(i(v));
    return b.getArrayAttr(attrs);
  };
  TileConfigAttr c = plan.config;
  SmallVector<NamedAttribute> problem = {
      named("op", s(op)),
      named("a_dtype", s(dtypeName(plan.aElem))),
      named("b_dtype", s(dtypeName(plan.aElem))),
      named("out_dtype", s(dtypeName(plan.outElem))),
      named("index_dtype",
            s(plan.indexElem ? dtypeName(plan.indexElem) : "i32")),
      named("weight_layout", s(plan.nMajorB ? "kn" : "nk")),
      named("m", i(-1)),
      named("n", i(plan.staticN)),
      named("k", i(plan.staticK)),
      named("num_groups", i(plan.staticGroups)),
      named("num_weights", i(plan.staticWeights)),
      named("has_weight_indices", b.getBoolAttr(plan.hasWeightIndices)),
      named("has_bias", b.getBoolAttr(plan.hasBias)),
      named("has_row_scale", b.getBoolAttr(plan.hasRowScale)),
      named("accumulate", b.getBoolAttr(plan.accumulate)),
      named("activation", s(stringifyActivation(plan.activation)))};
  SmallVector<NamedAttribute> tile = {
      named("block_m", i(c.getBlockM())), named("block_n", i(c.getBlockN())),
      named("block_k", i(c.getBlockK())),
      named("stages", i(plan.pipeline.getStages())),
      named("consumer_warpgroups", i(plan.numConsumers))};
  SmallVector<NamedAttribute> grid = {named("policy", s("persistent")),
                                      named("ctas_per_sm", i(1))};
  auto param = [&](ArrayRef<NamedAttribute> fields) {
    return b.getDictionaryAttr(fields);
  };
  int64_t bBoxN = plan.nMajorB ? kNMajorBoxCols : c.getBlockN();
  SmallVector<int64_t> bBox =
      plan.nMajorB ? SmallVector<int64_t>{bBoxN, c.getBlockK(), 1}
                   : SmallVector<int64_t>{c.getBlockK(), bBoxN, 1};
  StringRef rowsTensor = op == "masked_matmul" ? "masked_m" : "seg_indptr";
  SmallVector<Attribute> params = {
      param({named("name", s("a_desc")), named("kind", s("tma_descriptor")),
             named("tensor", s("x")), named("dtype", s(dtypeName(plan.aElem))),
             named("rank", i(2)),
             named("box", arr({c.getBlockK(), c.getBlockM()})),
             named("swizzle", s("128B")), named("oob_fill", s("zero"))}),
      param({named("name", s("b_desc")), named("kind", s("tma_descriptor")),
             named("tensor", s("w")), named("dtype", s(dtypeName(plan.aElem))),
             named("rank", i(3)), named("box", arr(bBox)),
             named("swizzle", s("128B")), named("oob_fill", s("zero"))}),
      param({named("name", s("y")), named("kind", s("pointer")),
             named("tensor", s("y"))}),
      // Uniform groups read no group_rows: the slot is a null pointer.
      plan.indexElem
          ? param({named("name", s("group_rows")), named("kind", s("pointer")),
                   named("tensor", s(rowsTensor)),
                   named("optional", b.getBoolAttr(false))})
          : param({named("name", s("group_rows")), named("kind", s("scalar")),
                   named("dtype", s("i64")), named("value", i(0))}),
      param({named("name", s("weight_indices")), named("kind", s("pointer")),
             named("tensor", s("weight_indices")),
             named("optional", b.getBoolAttr(true))}),
      param({named("name", s("bias")), named("kind", s("pointer")),
             named("tensor", s("bias")),
             named("optional", b.getBoolAttr(true))}),
      param({named("name", s("row_scale")), named("kind", s("pointer")),
             named("tensor", s("row_scale")),
             named("optional", b.getBoolAttr(true))})};
  for (auto [pname, dtype] :
       {std::pair<StringRef, StringRef>{"num_rows", "i64"},
        {"rows_per_group", "i64"},
        {"num_groups", "i32"},
        {"n", "i32"},
        {"k", "i32"},
        {"ldy", "i64"}})
    params.push_back(
        param({named("name", s(pname)), named("kind", s("scalar")),
               named("dtype", s(dtype)), named("value", s(pname))}));
  SmallVector<NamedAttribute> manifest = {
      named("format", s("ggemm-bundle")),
      named("version", i(1)),
      named("entry", s(plan.name)),
      named("block", arr({threads, 1, 1})),
      named("cluster", arr({1, 1, 1})),
      named("dynamic_smem", i(plan.pipeline.getSmemBytes())),
      named("problem", b.getDictionaryAttr(problem)),
      named("tile", b.getDictionaryAttr(tile)),
      named("grid", b.getDictionaryAttr(grid)),
      named("params", b.getArrayAttr(params))};
  return b.getDictionaryAttr(manifest);
}

/// Applies the epilogue to one accumulator element and stores it. `rowScale`
/// is the row's scale (null without one).
void emitElementStore(KernelBuilder &kb, Value value, Value rowScale, Value row,
                      Value col, Value weight, Value n, Value ldy,
                      ValueRange params) {
  const KernelPlan &plan = kb.plan;
  Value bias, old;
  if (plan.hasBias)
    bias = kb.load(kb.f32, kb.elementAddress(params[kBias], kb.f32,
                                             kb.add(kb.mul(weight, n), col)));
  Value address = kb.elementAddress(params[kY], plan.outElem,
                                    kb.add(kb.mul(row, ldy), col));
  if (plan.accumulate)
    old = kb.load(plan.outElem, address);
  Value v = buildEpilogue(kb.b, kb.loc, value, bias, plan.activation, rowScale,
                          old, plan.outElem);
  LLVM::StoreOp::create(kb.b, kb.loc, v, address);
}

/// Applies the epilogue to the two adjacent elements (row, col) and
/// (row, col + 1) of a wgmma fragment and writes them with one vector store;
/// the caller has checked that both columns exist and the pair is aligned.
void emitPairStore(KernelBuilder &kb, Value v0, Value v1, Value rowScale,
                   Value row, Value col, Value weight, Value n, Value ldy,
                   ValueRange params) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const KernelPlan &plan = kb.plan;
  auto pairType = VectorType::get({2}, plan.outElem);
  int64_t pairBytes = 2 * getElementBytes(plan.outElem);
  Value address = kb.elementAddress(params[kY], plan.outElem,
                                    kb.add(kb.mul(row, ldy), col));
  Value oldPair;
  if (plan.accumulate)
    oldPair = LLVM::LoadOp::create(b, loc, pairType, address, pairBytes);
  Value pair = LLVM::UndefOp::create(b, loc, pairType);
  Value values[2] = {v0, v1};
  for (int64_t e = 0; e < 2; ++e) {
    Value position = kb.c32(e);
    Value bias, old;
    if (plan.hasBias)
      bias = kb.load(kb.f32, kb.elementAddress(params[kBias], kb.f32,
                                               kb.add(kb.mul(weight, n),
                                                      kb.add(col, kb.idx(e)))));
    if (oldPair)
      old = LLVM::ExtractElementOp::create(b, loc, oldPair, position);
    Value v = buildEpilogue(b, loc, values[e], bias, plan.activation, rowScale,
                            old, plan.outElem);
    pair = LLVM::InsertElementOp::create(b, loc, pair, v, position);
  }
  LLVM::StoreOp::create(b, loc, pair, address, pairBytes);
}

/// Builds the kernel body into `func`.
void buildKernelBody(gpu::GPUFuncOp func, const KernelPlan &plan,
                     LLVM::GlobalOp smemGlobal) {
  OpBuilder b(func.getBody());
  Location loc = plan.loop.getLoc();
  KernelBuilder kb(b, loc, plan);
  ValueRange params = func.getArguments();
  const TileConfigAttr config = plan.config;
  const PipelineAttr pipeline = plan.pipeline;
  const int64_t stages = pipeline.getStages();
  const int64_t blockN = config.getBlockN();
  const int64_t blockK = config.getBlockK();
  const int64_t numConsumerThreads = 128 * plan.numConsumers;

  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value smem =
      LLVM::AddressOfOp::create(b, loc, kb.ptrShared, smemGlobal.getSymName());
  auto barrier = [&](Value stage, bool empty) {
    Value slot = empty ? kb.add(stage, kb.idx(stages)) : stage;
    return kb.byteOffset(smem, kb.add(kb.idx(pipeline.getBarrierOffset()),
                                      kb.mul(slot, kb.idx(8))));
  };

  // One thread initialises the ring's barriers: full[s] completes on the
  // producer's expect_tx arrival plus the TMA bytes, empty[s] on one arrival
  // per consumer thread.
  Value isThread0 = kb.cmp(arith::CmpIPredicate::eq, tid, kb.idx(0));
  auto init = scf::IfOp::create(b, loc, isThread0, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(init.thenBlock());
    for (int64_t s = 0; s < stages; ++s) {
      NVVM::MBarrierInitOp::create(b, loc, barrier(kb.idx(s), false), kb.c32(1),
                                   Value());
      NVVM::MBarrierInitOp::create(b, loc, barrier(kb.idx(s), true),
                                   kb.c32(numConsumerThreads), Value());
    }
    NVVM::FenceMbarrierInitOp::create(b, loc);
  }
  gpu::BarrierOp::create(b, loc);

  // Scalars and the shared tile schedule.
  // num_rows is not read: TMA's out-of-bounds fill already zeroes rows past
  // the end of x, and the row masks come from the group bounds.
  Value rowsPerGroup = kb.toIndex(params[kRowsPerGroup]);
  Value numGroups = kb.toIndex(params[kNumGroups]);
  Value n = kb.toIndex(params[kN]);
  Value k = kb.toIndex(params[kK]);
  Value ldy = kb.toIndex(params[kLdy]);
  Type indexElem = plan.indexElem ? plan.indexElem : kb.i32;
  auto loadGroupRow = [&](OpBuilder &, Location, Value i) -> Value {
    return kb.toIndex(kb.load(
        indexElem, kb.elementAddress(params[kGroupRows], indexElem, i)));
  };
  TileSchedule schedule{plan.loop.getRowMapping(),
                        config.getBlockM(),
                        blockN,
                        config.getRaster(),
                        numGroups,
                        rowsPerGroup,
                        n,
                        loadGroupRow};
  Value totalTiles = schedule.totalTiles(b, loc);
  Value firstTile = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value tileStride = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  Value kBlocks = arith::DivUIOp::create(b, loc, kb.add(k, kb.idx(blockK - 1)),
                                         kb.idx(blockK));
  auto weightOf = [&](Value group) -> Value {
    if (!plan.hasWeightIndices)
      return group;
    return kb.toIndex(kb.load(
        kb.i32, kb.elementAddress(params[kWeightIndices], kb.i32, group)));
  };
  // Stage slot and mbarrier parity of the `it`-th k-block of this CTA.
  auto stageOf = [&](Value it) {
    return arith::RemUIOp::create(b, loc, it, kb.idx(stages)).getResult();
  };
  auto parityOf = [&](Value it) {
    Value round = arith::DivUIOp::create(b, loc, it, kb.idx(stages));
    return kb.toI32(arith::AndIOp::create(b, loc, round, kb.idx(1)));
  };

  Value warpgroup = arith::DivUIOp::create(b, loc, tid, kb.idx(128));
  Value isProducer =
      kb.cmp(arith::CmpIPredicate::eq, warpgroup, kb.idx(plan.numConsumers));
  auto roles = scf::IfOp::create(b, loc, isProducer, /*withElse=*/true);

  // ---------------------------------------------------------------- producer
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(roles.thenBlock());
    NVVM::SetMaxRegisterOp::create(b, loc, 40,
                                   NVVM::SetMaxRegisterAction::decrease);
    Value warpInGroup = arith::DivUIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, tid, kb.idx(128)), kb.idx(32));
    auto warp0 = scf::IfOp::create(
        b, loc, kb.cmp(arith::CmpIPredicate::eq, warpInGroup, kb.idx(0)),
        false);
    b.setInsertionPointToStart(warp0.thenBlock());
    Value leader = NVVM::ElectSyncOp::create(b, loc, kb.i1, Value());
    auto leaderIf = scf::IfOp::create(b, loc, leader, false);
    b.setInsertionPointToStart(leaderIf.thenBlock());
    int64_t txBytes = pipeline.getAStageBytes() + pipeline.getBStageBytes();
    auto tiles = scf::ForOp::create(b, loc, firstTile, totalTiles, tileStride,
                                    ValueRange{kb.idx(0)});
    b.setInsertionPointToStart(tiles.getBody());
    TileSchedule::Tile tile = schedule.mapTile(b, loc, tiles.getInductionVar());
    Value weight = weightOf(tile.group);
    auto kLoop = scf::ForOp::create(b, loc, kb.idx(0), kBlocks, kb.idx(1),
                                    ValueRange{tiles.getRegionIterArg(0)});
    {
      OpBuilder::InsertionGuard kGuard(b);
      b.setInsertionPointToStart(kLoop.getBody());
      Value it = kLoop.getRegionIterArg(0);
      Value stage = stageOf(it);
      // Wait until the consumers released the slot (first round passes).
      Value emptyParity =
          arith::XOrIOp::create(b, loc, parityOf(it), kb.c32(1));
      NVVM::MBarrierTryWaitParityOp::create(b, loc, barrier(stage, true),
                                            emptyParity, kb.c32(kWaitTicks));
      Value full = barrier(stage, false);
      NVVM::MBarrierArriveExpectTxOp::create(
          b, loc, Type(), full, kb.c32(txBytes), NVVM::MemScopeKind::CTA,
          /*relaxed=*/false, Value());
      Value kCoord = kb.toI32(kb.mul(kLoop.getInductionVar(), kb.idx(blockK)));
      auto tmaLoad = [&](Value desc, Value dst, ValueRange coords) {
        Value dstCluster =
            LLVM::AddrSpaceCastOp::create(b, loc, kb.ptrCluster, dst);
        NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
            b, loc, dstCluster, desc, coords, full, ValueRange{}, Value(),
            Value(), NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
            NVVM::CTAGroupKindAttr(), Value());
      };
      Value aDst = kb.byteOffset(
          smem, kb.add(kb.idx(pipeline.getAOffset()),
                       kb.mul(stage, kb.idx(pipeline.getAStageBytes()))));
      tmaLoad(params[kADesc], aDst, {kCoord, kb.toI32(tile.rowBegin)});
      Value bDst = kb.byteOffset(
          smem, kb.add(kb.idx(pipeline.getBOffset()),
                       kb.mul(stage, kb.idx(pipeline.getBStageBytes()))));
      Value weight32 = kb.toI32(weight);
      if (!plan.nMajorB) {
        tmaLoad(params[kBDesc], bDst,
                {kCoord, kb.toI32(tile.colBegin), weight32});
      } else {
        // An N-major B tile is BN/64 boxes of [block_k rows x 64 columns].
        int64_t boxBytes = kNMajorBoxCols * blockK * plan.elemBytes;
        for (int64_t j = 0; j < blockN / kNMajorBoxCols; ++j)
          tmaLoad(params[kBDesc], kb.byteOffset(bDst, kb.idx(j * boxBytes)),
                  {kb.toI32(kb.add(tile.colBegin, kb.idx(j * kNMajorBoxCols))),
                   kCoord, weight32});
      }
      scf::YieldOp::create(b, loc, kb.add(it, kb.idx(1)));
    }
    scf::YieldOp::create(b, loc, kLoop.getResult(0));
  }

  // --------------------------------------------------------------- consumers
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(roles.elseBlock());
    NVVM::SetMaxRegisterOp::create(b, loc, 232,
                                   NVVM::SetMaxRegisterAction::increase);
    auto accType = LLVM::LLVMStructType::getLiteral(
        kb.ctx, SmallVector<Type>(blockN / 2, kb.f32));
    auto tiles = scf::ForOp::create(b, loc, firstTile, totalTiles, tileStride,
                                    ValueRange{kb.idx(0)});
    b.setInsertionPointToStart(tiles.getBody());
    TileSchedule::Tile tile = schedule.mapTile(b, loc, tiles.getInductionVar());
    // Zero the accumulator before the first wgmma fence, so ptxas does not
    // have to serialise around register moves (FACTS.md §2).
    Value zero = LLVM::ZeroOp::create(b, loc, accType);
    auto kLoop =
        scf::ForOp::create(b, loc, kb.idx(0), kBlocks, kb.idx(1),
                           ValueRange{tiles.getRegionIterArg(0), zero});
    {
      OpBuilder::InsertionGuard kGuard(b);
      b.setInsertionPointToStart(kLoop.getBody());
      Value it = kLoop.getRegionIterArg(0);
      Value acc = kLoop.getRegionIterArg(1);
      Value stage = stageOf(it);
      NVVM::MBarrierTryWaitParityOp::create(b, loc, barrier(stage, false),
                                            parityOf(it), kb.c32(kWaitTicks));
      NVVM::WgmmaFenceAlignedOp::create(b, loc);
      // This warpgroup's 64 rows of the A stage: 64 rows x 128 bytes.
      Value aTile = kb.byteOffset(
          smem, kb.add(kb.idx(pipeline.getAOffset()),
                       kb.add(kb.mul(stage, kb.idx(pipeline.getAStageBytes())),
                              kb.mul(warpgroup, kb.idx(64 * kSwizzleBytes)))));
      Value bTile = kb.byteOffset(
          smem, kb.add(kb.idx(pipeline.getBOffset()),
                       kb.mul(stage, kb.idx(pipeline.getBStageBytes()))));
      // K-major tiles: 8-row swizzle atoms 1024 bytes apart (stride byte
      // offset); the leading byte offset is unused. An N-major B steps over
      // its 64-column boxes with the leading byte offset.
      Value descA = kb.wgmmaDescriptor(aTile, 16, 8 * kSwizzleBytes);
      int64_t bLeading =
          plan.nMajorB ? kNMajorBoxCols * blockK * plan.elemBytes : 16;
      Value descB = kb.wgmmaDescriptor(bTile, bLeading, 8 * kSwizzleBytes);
      const int64_t wgmmaK = 16;
      NVVM::MMALayout layoutB =
          plan.nMajorB ? NVVM::MMALayout::row : NVVM::MMALayout::col;
      for (int64_t kk = 0; kk < blockK / wgmmaK; ++kk) {
        // Advance along K: 32 bytes inside the swizzled row for K-major
        // tiles, 16 rows of 128 bytes for an N-major B.
        int64_t aStep = (kk * wgmmaK * plan.elemBytes) >> 4;
        int64_t bStep =
            plan.nMajorB ? (kk * wgmmaK * kSwizzleBytes) >> 4 : aStep;
        Value dA = kk ? kb.add(descA, kb.c64(aStep)) : descA;
        Value dB = kk ? kb.add(descB, kb.c64(bStep)) : descB;
        acc = NVVM::WgmmaMmaAsyncOp::create(
            b, loc, accType, acc, dA, dB,
            NVVM::MMAShapeAttr::get(kb.ctx, 64, blockN, wgmmaK),
            wgmmaType(plan.aElem), wgmmaType(plan.aElem), NVVM::WGMMATypes::f32,
            NVVM::WGMMAScaleOut::one, NVVM::WGMMAScaleIn::one,
            NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row, layoutB,
            NVVM::MMAIntOverflowAttr());
      }
      NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
      // Keep this k-block's wgmmas in flight while the next stage is
      // awaited: waiting for all but the newest group retires the previous
      // k-block, whose stage then goes back to the producer.
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
      Value notFirst =
          kb.cmp(arith::CmpIPredicate::ugt, kLoop.getInductionVar(), kb.idx(0));
      auto release = scf::IfOp::create(b, loc, notFirst, false);
      {
        OpBuilder::InsertionGuard releaseGuard(b);
        b.setInsertionPointToStart(release.thenBlock());
        Value previous = stageOf(arith::SubIOp::create(b, loc, it, kb.idx(1)));
        NVVM::MBarrierArriveOp::create(b, loc, Type(), barrier(previous, true),
                                       Value());
      }
      scf::YieldOp::create(b, loc, ValueRange{kb.add(it, kb.idx(1)), acc});
    }
    Value acc = kLoop.getResult(1);
    // Retire the last k-block and release its stage.
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    Value itEnd = kLoop.getResult(0);
    auto releaseLast = scf::IfOp::create(
        b, loc, kb.cmp(arith::CmpIPredicate::ugt, kBlocks, kb.idx(0)), false);
    {
      OpBuilder::InsertionGuard releaseGuard(b);
      b.setInsertionPointToStart(releaseLast.thenBlock());
      Value last = stageOf(arith::SubIOp::create(b, loc, itEnd, kb.idx(1)));
      NVVM::MBarrierArriveOp::create(b, loc, Type(), barrier(last, true),
                                     Value());
    }

    // Epilogue. wgmma's m64nNk16 f32 fragment: warp w of the warpgroup holds
    // rows 16w + lane/4 (+8); register 4i + 2h + e holds column
    // 8i + 2(lane % 4) + e of row half h.
    Value lane = arith::RemUIOp::create(b, loc, tid, kb.idx(32));
    Value warpInGroup = arith::DivUIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, tid, kb.idx(128)), kb.idx(32));
    Value rowBase =
        kb.add(kb.add(tile.rowBegin, kb.mul(warpgroup, kb.idx(64))),
               kb.add(kb.mul(warpInGroup, kb.idx(16)),
                      arith::DivUIOp::create(b, loc, lane, kb.idx(4))));
    Value colBase = kb.add(
        tile.colBegin,
        kb.mul(arith::RemUIOp::create(b, loc, lane, kb.idx(4)), kb.idx(2)));
    Value weight = weightOf(tile.group);
    // A thread's two adjacent columns go out as one vector store when y's
    // rows keep pairs aligned (the runtime only guarantees the element's
    // alignment); the scalar path covers the rest and the N tail.
    int64_t pairBytes = 2 * getElementBytes(plan.outElem);
    Value yAddress = LLVM::PtrToIntOp::create(b, loc, kb.i64, params[kY]);
    Value pairAligned = arith::AndIOp::create(
        b, loc,
        kb.cmp(arith::CmpIPredicate::eq,
               arith::RemUIOp::create(b, loc, yAddress, kb.c64(pairBytes)),
               kb.c64(0)),
        kb.cmp(arith::CmpIPredicate::eq,
               arith::RemUIOp::create(b, loc, ldy, kb.idx(2)), kb.idx(0)));
    for (int64_t h = 0; h < 2; ++h) {
      Value row = kb.add(rowBase, kb.idx(8 * h));
      Value rowOk = kb.cmp(arith::CmpIPredicate::ult, row, tile.rowEnd);
      auto rowIf = scf::IfOp::create(b, loc, rowOk, false);
      OpBuilder::InsertionGuard rowGuard(b);
      b.setInsertionPointToStart(rowIf.thenBlock());
      Value rowScale;
      if (plan.hasRowScale)
        rowScale =
            kb.load(kb.f32, kb.elementAddress(params[kRowScale], kb.f32, row));
      for (int64_t i = 0; i < blockN / 8; ++i) {
        Value col = kb.add(colBase, kb.idx(8 * i));
        Value v0 = LLVM::ExtractValueOp::create(
            b, loc, acc, ArrayRef<int64_t>{4 * i + 2 * h});
        Value v1 = LLVM::ExtractValueOp::create(
            b, loc, acc, ArrayRef<int64_t>{4 * i + 2 * h + 1});
        Value pairOk = arith::AndIOp::create(
            b, loc, pairAligned,
            kb.cmp(arith::CmpIPredicate::ult, kb.add(col, kb.idx(1)), n));
        auto pairIf = scf::IfOp::create(b, loc, pairOk, /*withElse=*/true);
        OpBuilder::InsertionGuard pairGuard(b);
        b.setInsertionPointToStart(pairIf.thenBlock());
        emitPairStore(kb, v0, v1, rowScale, row, col, weight, n, ldy, params);
        b.setInsertionPointToStart(pairIf.elseBlock());
        for (int64_t e = 0; e < 2; ++e) {
          Value colE = kb.add(col, kb.idx(e));
          auto colIf = scf::IfOp::create(
              b, loc, kb.cmp(arith::CmpIPredicate::ult, colE, n), false);
          OpBuilder::InsertionGuard colGuard(b);
          b.setInsertionPointToStart(colIf.thenBlock());
          emitElementStore(kb, e ? v1 : v0, rowScale, row, colE, weight, n, ldy,
                           params);
        }
      }
    }
    scf::YieldOp::create(b, loc, kLoop.getResult(0));
  }
  gpu::ReturnOp::create(b, loc);
}

struct ConvertGGemmToNVGPUPass
    : public ggemm::impl::ConvertGGemmToNVGPUBase<ConvertGGemmToNVGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (chip != "sm_90a") {
      module.emitError() << "expects chip sm_90a (wgmma and setmaxnreg), got "
                         << chip;
      return signalPassFailure();
    }
    SmallVector<ForeachTileOp> loops;
    module.walk([&](ForeachTileOp loop) { loops.push_back(loop); });
    if (loops.empty())
      return;
    MLIRContext *ctx = module.getContext();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(ctx));
    SymbolTable symbols(module);
    SmallVector<NamedAttribute> manifests;
    if (auto existing =
            module->getAttrOfType<DictionaryAttr>("ggemm.manifests"))
      manifests.append(existing.begin(), existing.end());
    llvm::SetVector<Operation *> hostFuncs;

    for (ForeachTileOp loop : loops) {
      auto func = loop->getParentOfType<FunctionOpInterface>();
      std::string name =
          (func ? func.getName().str() : std::string("ggemm")) + "_kernel";
      if (llvm::count_if(loops, [&](ForeachTileOp other) {
            return other->getParentOfType<FunctionOpInterface>() == func;
          }) > 1)
        name += "_" + std::to_string(manifests.size());
      FailureOr<KernelPlan> plan = analyse(loop, name);
      if (failed(plan))
        return signalPassFailure();

      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      Location loc = loop.getLoc();
      auto gpuModule = gpu::GPUModuleOp::create(b, loc, name + "_module");
      SymbolTable(module).insert(gpuModule);
      b.setInsertionPointToStart(gpuModule.getBody());
      // Dynamic shared memory: an extern, 1024-byte aligned array (128-byte
      // swizzled TMA/wgmma tiles need 1024-byte alignment; FACTS.md §5c).
      auto smemGlobal = LLVM::GlobalOp::create(
          b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
          /*isConstant=*/false, LLVM::Linkage::External, "ggemm_smem",
          Attribute(), /*alignment=*/1024, /*addrSpace=*/3);

      auto ptr = LLVM::LLVMPointerType::get(ctx);
      auto ptrGlobal = LLVM::LLVMPointerType::get(ctx, 1);
      SmallVector<Type> argTypes = {ptr,
                                    ptr,
                                    ptrGlobal,
                                    ptrGlobal,
                                    ptrGlobal,
                                    ptrGlobal,
                                    ptrGlobal,
                                    b.getI64Type(),
                                    b.getI64Type(),
                                    b.getI32Type(),
                                    b.getI32Type(),
                                    b.getI32Type(),
                                    b.getI64Type()};
      auto funcType = b.getFunctionType(argTypes, {});
      auto kernel = gpu::GPUFuncOp::create(b, loc, name, funcType);
      kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                      UnitAttr::get(ctx));
      int64_t threads = 128 * (plan->numConsumers + 1);
      // setmaxnreg needs a register cap at entry: a thread bound plus one
      // CTA per SM (FACTS.md §4).
      kernel->setAttr("nvvm.maxntid",
                      b.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));
      kernel->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
      // The TMA descriptors are passed by value (__grid_constant__);
      // ggemm-finalize-kernel-abi applies this after convert-gpu-to-nvvm.
      kernel->setAttr("ggemm.grid_constant_args",
                      b.getDenseI64ArrayAttr({kADesc, kBDesc}));
      StringRef op = "segment_matmul";
      if (loop.getRowMapping() == RowMapping::masked)
        op = "masked_matmul";
      else if (loop.getRowMapping() == RowMapping::uniform)
        op = "batched_matmul";
      manifests.push_back(NamedAttribute(
          StringAttr::get(ctx, name), buildManifest(ctx, *plan, threads, op)));
      buildKernelBody(kernel, *plan, smemGlobal);
      if (func)
        hostFuncs.insert(func);
      else
        loop.erase();
    }
    module->setAttr("ggemm.manifests", DictionaryAttr::get(ctx, manifests));
    // The runtime launches the kernels: the host functions have no other
    // job once their tile loops are kernels.
    for (Operation *func : hostFuncs)
      func->erase();
  }
};
} // namespace
