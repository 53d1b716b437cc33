//===- RoutingToLoops.cpp - ggemm.sort_by_expert -> CPU loops -------------===//
//
// A stable counting sort over the buckets of buildExpertBucket (negative
// ids, then experts 0..E-1, then ids from E on):
//
//   counts[b] = #pairs in bucket b            // one pass over topk_ids
//   counts[b] = sum(counts[0..b))             // exclusive scan: bucket starts
//   seg_indptr[e] = counts[e + 1]
//   for p in order: i = counts[b(p)]++; row_indices[i] = p / topk;
//                   pair_indices[i] = p
//
// The GPU kernel computes the same starts with per-warp counters; the
// execution tests compare both against the sort's definition.
//
//===----------------------------------------------------------------------===//

#include "RoutingToLoops.h"
#include "ggemm/Dialect/GGemm/Transforms/Routing.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::ggemm;

void mlir::ggemm::lowerSortByExpertToLoops(SortByExpertOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  int64_t numExperts = op.getNumExperts();
  int64_t numBuckets = numExperts + 2;
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Type indexType = b.getIndexType();
  Value zero = cst(0), one = cst(1);
  Value counts = memref::AllocaOp::create(
      b, loc, MemRefType::get({numBuckets}, indexType));
  Value numPairs = memref::DimOp::create(b, loc, op.getTopkIds(), 0);
  auto bucketOf = [&](Value pair) {
    Value id = memref::LoadOp::create(b, loc, op.getTopkIds(), pair);
    Value asIndex = arith::IndexCastOp::create(b, loc, indexType, id);
    return buildExpertBucket(b, loc, asIndex, numExperts);
  };
  auto loop = [&](Value lower, Value upper, ValueRange inits,
                  function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    auto forOp = scf::ForOp::create(b, loc, lower, upper, one, inits);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    SmallVector<Value> yields =
        body(forOp.getInductionVar(), forOp.getRegionIterArgs());
    // A loop without results got its (empty) yield from the builder.
    if (!inits.empty())
      scf::YieldOp::create(b, loc, yields);
    return forOp;
  };

  loop(zero, cst(numBuckets), {}, [&](Value bucket, ValueRange) {
    memref::StoreOp::create(b, loc, zero, counts, bucket);
    return SmallVector<Value>();
  });
  loop(zero, numPairs, {}, [&](Value pair, ValueRange) {
    Value bucket = bucketOf(pair);
    Value count = memref::LoadOp::create(b, loc, counts, bucket);
    memref::StoreOp::create(b, loc, arith::AddIOp::create(b, loc, count, one),
                            counts, bucket);
    return SmallVector<Value>();
  });
  loop(zero, cst(numBuckets), {zero}, [&](Value bucket, ValueRange carried) {
    Value count = memref::LoadOp::create(b, loc, counts, bucket);
    memref::StoreOp::create(b, loc, carried[0], counts, bucket);
    return SmallVector<Value>{arith::AddIOp::create(b, loc, carried[0], count)};
  });
  Type i32 = b.getI32Type();
  auto toI32 = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, i32, v);
  };
  loop(zero, cst(numExperts + 1), {}, [&](Value expert, ValueRange) {
    Value next = arith::AddIOp::create(b, loc, expert, one);
    Value start = memref::LoadOp::create(b, loc, counts, next);
    memref::StoreOp::create(b, loc, toI32(start), op.getSegIndptr(), expert);
    return SmallVector<Value>();
  });
  Value topk = cst(op.getTopk());
  loop(zero, numPairs, {}, [&](Value pair, ValueRange) {
    Value bucket = bucketOf(pair);
    Value slot = memref::LoadOp::create(b, loc, counts, bucket);
    memref::StoreOp::create(b, loc, arith::AddIOp::create(b, loc, slot, one),
                            counts, bucket);
    memref::StoreOp::create(b, loc,
                            toI32(arith::DivUIOp::create(b, loc, pair, topk)),
                            op.getRowIndices(), slot);
    memref::StoreOp::create(b, loc, toI32(pair), op.getPairIndices(), slot);
    return SmallVector<Value>();
  });
  op.erase();
}
