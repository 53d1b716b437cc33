//===- RoutingToNVVM.cpp - ggemm.sort_by_expert -> one-CTA kernel ---------===//
//
// The MoE routing kernel: one CTA of kRoutingWarps warps sorts the P pairs
// of topk_ids by expert, stably, with no host round trip. Warp w owns the
// contiguous pairs [w * R, (w + 1) * R) (R a multiple of kWarpStep), and keeps
// its own counter per bucket (buildExpertBucket: negative ids, experts, ids
// from E on) in shared memory:
//
//   1. each warp counts its pairs per bucket (shared-memory atomics);
//   2. one thread per bucket turns the warps' counts into warp-order
//      offsets and the bucket's total;
//   3. warp 0 scans the totals (a shuffle scan over 32 lane ranges): the
//      bucket starts, which are seg_indptr;
//   4. each warp walks its pairs in order, 32 at a time (loaded kWarpStep
//      at a time, the loads of a step issued together): lanes with the same
//      bucket find each other with match.sync, rank themselves by lane, and
//      write row_indices / pair_indices at their warp's cursor plus rank.
//
// Pairs keep their order within a bucket: warps own ranges in pair order
// and offsets are taken in warp order, lanes in lane order. Upstream has no
// op for a block-wide sort (the gpu dialect's reductions do not place), so
// the kernel is written from gpu, scf and arith ops and the NVVM ops for
// match.sync, shfl.sync and bar.warp.sync.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"
#include "StandaloneKernel.h"
#include "ggemm/Dialect/GGemm/Transforms/Routing.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::nvvm;

namespace {

/// Warps of the routing kernel's one CTA (its block is 32 times that).
constexpr int64_t kRoutingWarps = 32;
/// Pairs a lane loads before it uses the first: the loop over a warp's
/// pairs is latency-bound (a global load, then dependent shared-memory
/// work), so each step issues this many independent loads.
constexpr int64_t kPairsPerLane = 8;
/// A warp's step over its pairs.
constexpr int64_t kWarpStep = 32 * kPairsPerLane;
/// Shared memory a CTA may have on sm_90 (227 KiB).
constexpr int64_t kMaxSharedBytes = 227 * 1024;

/// Kernel parameters, in order (docs/Bundle.md, "Routing kernels").
enum RoutingParam : unsigned {
  kTopkIds,
  kSegIndptr,
  kRowIndices,
  kPairIndices,
  kNumPairs,
};

/// Writes the kernel body; one method per phase of the file comment.
class RoutingKernelBuilder : StandaloneKernelBuilder {
public:
  RoutingKernelBuilder(OpBuilder &b, SortByExpertOp op, gpu::GPUFuncOp kernel,
                       LLVM::GlobalOp smem)
      : StandaloneKernelBuilder(b, op.getLoc(), kernel), op(op),
        smemGlobal(smem), numBuckets(op.getNumExperts() + 2) {}

  void build();

private:
  Value loadI32(Value address) {
    return LLVM::LoadOp::create(b, loc, b.getI32Type(), address);
  }
  void store(Value value, Value address) {
    LLVM::StoreOp::create(b, loc, value, address);
  }
  /// Warp w's counter of bucket `bucket`, and the totals (then starts).
  Value counter(Value warp, Value bucket) {
    return at(smem, b.getI32Type(), add(mul(warp, idx(numBuckets)), bucket));
  }
  Value total(Value bucket) {
    return at(smem, b.getI32Type(),
              add(idx(kRoutingWarps * numBuckets), bucket));
  }
  void barrier() { gpu::BarrierOp::create(b, loc); }
  void syncWarp() { NVVM::SyncWarpOp::create(b, loc, c32(-1)); }
  /// The pairs of a lane in the warp step from `base`, whether each is in
  /// the warp's range, and its bucket (the bucket past the last, which no
  /// pair has, for one that is not): all loads first, then the buckets.
  struct StepPairs {
    SmallVector<Value> pairs, valid, buckets;
  };
  StepPairs stepPairs(Value base) {
    Type elem = cast<MemRefType>(op.getTopkIds().getType()).getElementType();
    StepPairs step;
    SmallVector<Value> ids;
    for (int64_t j = 0; j < kPairsPerLane; ++j) {
      Value pair = add(base, add(lane, idx(32 * j)));
      Value valid = cmp(arith::CmpIPredicate::ult, pair, end);
      // A pair past the range reads the step's first, which exists.
      Value safe = arith::SelectOp::create(b, loc, valid, pair, base);
      step.pairs.push_back(pair);
      step.valid.push_back(valid);
      ids.push_back(
          LLVM::LoadOp::create(b, loc, elem, at(param(kTopkIds), elem, safe)));
    }
    for (int64_t j = 0; j < kPairsPerLane; ++j)
      step.buckets.push_back(arith::SelectOp::create(
          b, loc, step.valid[j],
          buildExpertBucket(b, loc, toIndex(ids[j]), op.getNumExperts()),
          idx(numBuckets)));
    return step;
  }

  void countPairs();
  void warpOffsets();
  void scanTotals();
  void placePairs();

  SortByExpertOp op;
  LLVM::GlobalOp smemGlobal;
  int64_t numBuckets;
  Value smem, tid, lane, warp, numPairs, begin, end;
};

void RoutingKernelBuilder::build() {
  b.setInsertionPointToStart(&kernel.getBody().front());
  auto ptrShared = LLVM::LLVMPointerType::get(b.getContext(), 3);
  smem = LLVM::AddressOfOp::create(b, loc, ptrShared, smemGlobal.getSymName());
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  lane = arith::RemUIOp::create(b, loc, tid, idx(32));
  warp = arith::DivUIOp::create(b, loc, tid, idx(32));
  numPairs = toIndex(param(kNumPairs));
  // R = ceil(P / (warps * step)) * step pairs per warp.
  int64_t perStep = kRoutingWarps * kWarpStep;
  Value range = mul(arith::DivUIOp::create(
                        b, loc, add(numPairs, idx(perStep - 1)), idx(perStep)),
                    idx(kWarpStep));
  begin = mul(warp, range);
  end = arith::MinUIOp::create(b, loc, add(begin, range), numPairs);

  forRange(tid, idx(kRoutingWarps * numBuckets), idx(kRoutingWarps * 32),
           [&](Value i) { store(c32(0), at(smem, b.getI32Type(), i)); });
  barrier();
  countPairs();
  barrier();
  warpOffsets();
  barrier();
  scanTotals();
  barrier();
  // Each warp's cursors start at its offset within the bucket's start.
  forRange(tid, idx(kRoutingWarps * numBuckets), idx(kRoutingWarps * 32),
           [&](Value i) {
             Value address = at(smem, b.getI32Type(), i);
             Value start = loadI32(
                 total(arith::RemUIOp::create(b, loc, i, idx(numBuckets))));
             store(add(loadI32(address), start), address);
           });
  barrier();
  placePairs();
  gpu::ReturnOp::create(b, loc);
}

void RoutingKernelBuilder::countPairs() {
  forRange(begin, end, idx(kWarpStep), [&](Value base) {
    StepPairs step = stepPairs(base);
    for (int64_t j = 0; j < kPairsPerLane; ++j)
      ifThen(step.valid[j], [&] {
        LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::add,
                                  counter(warp, step.buckets[j]), c32(1),
                                  LLVM::AtomicOrdering::monotonic);
      });
  });
}

void RoutingKernelBuilder::warpOffsets() {
  forRange(tid, idx(numBuckets), idx(kRoutingWarps * 32), [&](Value bucket) {
    auto loop = scf::ForOp::create(b, loc, idx(0), idx(kRoutingWarps), idx(1),
                                   ValueRange{c32(0)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value address = counter(loop.getInductionVar(), bucket);
      Value count = loadI32(address);
      Value running = loop.getRegionIterArgs()[0];
      store(running, address);
      scf::YieldOp::create(b, loc, ValueRange{add(running, count)});
    }
    store(loop.getResult(0), total(bucket));
  });
}

void RoutingKernelBuilder::scanTotals() {
  ifThen(cmp(arith::CmpIPredicate::eq, warp, idx(0)), [&] {
    // Lane l scans buckets [l * C, min((l + 1) * C, NB)).
    int64_t perLane = (numBuckets + 31) / 32;
    Value lo = arith::MinUIOp::create(b, loc, mul(lane, idx(perLane)),
                                      idx(numBuckets));
    Value hi =
        arith::MinUIOp::create(b, loc, add(lo, idx(perLane)), idx(numBuckets));
    auto sum = scf::ForOp::create(b, loc, lo, hi, idx(1), ValueRange{c32(0)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(sum.getBody());
      Value part = add(sum.getRegionIterArgs()[0],
                       loadI32(total(sum.getInductionVar())));
      scf::YieldOp::create(b, loc, ValueRange{part});
    }
    Value own = sum.getResult(0);
    Value inclusive = own;
    Value laneI32 = toI32(lane);
    for (int64_t delta = 1; delta < 32; delta *= 2) {
      // shfl.up returns the lane's own value below `delta`: skip it there.
      Value below = NVVM::ShflOp::create(b, loc, b.getI32Type(), c32(-1),
                                         inclusive, c32(delta), c32(0),
                                         NVVM::ShflKind::up, UnitAttr())
                        .getResult();
      Value has = cmp(arith::CmpIPredicate::sge, laneI32, c32(delta));
      inclusive = arith::SelectOp::create(b, loc, has, add(inclusive, below),
                                          inclusive);
    }
    Value running = arith::SubIOp::create(b, loc, inclusive, own);
    auto place =
        scf::ForOp::create(b, loc, lo, hi, idx(1), ValueRange{running});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(place.getBody());
    Value bucket = place.getInductionVar();
    Value start = place.getRegionIterArgs()[0];
    Value count = loadI32(total(bucket));
    store(start, total(bucket));
    // Bucket e + 1 is expert e's: its start is seg_indptr[e].
    ifThen(cmp(arith::CmpIPredicate::uge, bucket, idx(1)), [&] {
      store(start, at(param(kSegIndptr), b.getI32Type(),
                      arith::SubIOp::create(b, loc, bucket, idx(1))));
    });
    scf::YieldOp::create(b, loc, ValueRange{add(start, count)});
  });
}

void RoutingKernelBuilder::placePairs() {
  Type i32 = b.getI32Type();
  Value below = arith::SubIOp::create(
      b, loc, arith::ShLIOp::create(b, loc, c32(1), toI32(lane)), c32(1));
  forRange(begin, end, idx(kWarpStep), [&](Value base) {
    StepPairs step = stepPairs(base);
    // In pair order: 32 consecutive pairs at a time, one per lane.
    for (int64_t j = 0; j < kPairsPerLane; ++j) {
      Value pair = step.pairs[j], valid = step.valid[j];
      Value bucket = step.buckets[j];
      Value peers = NVVM::MatchSyncOp::create(
          b, loc, i32, c32(-1), toI32(bucket), NVVM::MatchSyncKind::any);
      Value rank = LLVM::CtPopOp::create(
          b, loc, i32, arith::AndIOp::create(b, loc, peers, below));
      Value cursor =
          counter(warp, arith::SelectOp::create(b, loc, valid, bucket, idx(0)));
      Value first = loadI32(cursor);
      ifThen(valid, [&] {
        Value slot = toIndex(add(first, rank));
        Value token = arith::DivUIOp::create(b, loc, pair, idx(op.getTopk()));
        store(toI32(token), at(param(kRowIndices), i32, slot));
        store(toI32(pair), at(param(kPairIndices), i32, slot));
      });
      // Every lane has read the cursor before its lowest lane moves it on.
      syncWarp();
      ifThen(arith::AndIOp::create(b, loc, valid,
                                   cmp(arith::CmpIPredicate::eq, rank, c32(0))),
             [&] {
               store(add(first, LLVM::CtPopOp::create(b, loc, i32, peers)),
                     cursor);
             });
      syncWarp();
    }
  });
}

} // namespace

int64_t mlir::ggemm::nvvm::routingSharedBytes(int64_t numExperts) {
  return (kRoutingWarps + 1) * (numExperts + 2) * 4;
}

FailureOr<DictionaryAttr>
mlir::ggemm::nvvm::buildRoutingKernel(SortByExpertOp op, ModuleOp module,
                                      StringRef name) {
  int64_t numExperts = op.getNumExperts();
  int64_t sharedBytes = routingSharedBytes(numExperts);
  if (sharedBytes > kMaxSharedBytes)
    return op.emitOpError()
           << "expects at most "
           << kMaxSharedBytes / ((kRoutingWarps + 1) * 4) - 2
           << " experts for the GPU routing kernel (" << kRoutingWarps + 1
           << " counters of each in shared memory), got " << numExperts;
  MLIRContext *ctx = module.getContext();
  auto ptrGlobal = LLVM::LLVMPointerType::get(ctx, 1);
  Type i64 = IntegerType::get(ctx, 64);
  int32_t threads = kRoutingWarps * 32;
  StandaloneKernel kernel = createStandaloneKernel(
      module, op.getLoc(), name,
      {ptrGlobal, ptrGlobal, ptrGlobal, ptrGlobal, i64}, threads);
  OpBuilder body(ctx);
  RoutingKernelBuilder(body, op, kernel.func, kernel.smem).build();

  ManifestFields m(ctx);
  Type idElem = cast<MemRefType>(op.getTopkIds().getType()).getElementType();
  SmallVector<Attribute> params = {
      m.pointer("topk_ids"), m.pointer("seg_indptr"), m.pointer("row_indices"),
      m.pointer("pair_indices"), m.scalar("num_pairs", "num_pairs")};
  return m.manifest(
      name, threads, sharedBytes, m.dict({m.named("policy", m.s("single"))}),
      m.dict(
          {m.named("op", m.s("sort_by_expert")),
           m.named("num_experts", m.i(numExperts)),
           m.named("topk", m.i(op.getTopk())),
           m.named("index_dtype", m.s(idElem.isInteger(32) ? "i32" : "i64"))}),
      params);
}
