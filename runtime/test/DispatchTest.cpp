//===- DispatchTest.cpp - Tests of the per-launch variant choice ----------===//

#include "Dispatch.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

namespace ggemm::runtime {
namespace {

ProblemShape shape(int64_t numRows, int64_t rowsPerGroup, int64_t numGroups) {
  ProblemShape s;
  s.numRows = numRows;
  s.rowsPerGroup = rowsPerGroup;
  s.numGroups = numGroups;
  return s;
}

TEST(Dispatch, SegmentRowsAreTheRoundedUpAverage) {
  EXPECT_EQ(dispatchRowsPerGroup(Op::SegmentMatmul, shape(1000, 0, 8), 0), 125);
  EXPECT_EQ(dispatchRowsPerGroup(Op::SegmentMatmul, shape(1001, 0, 8), 0), 126);
  EXPECT_EQ(dispatchRowsPerGroup(Op::SegmentMatmul, shape(7, 0, 8), 0), 1);
  EXPECT_EQ(dispatchRowsPerGroup(Op::SegmentMatmul, shape(1000, 0, 0), 0), 0);
}

// segment_matmul_k's segments split its token rows T as segment_matmul's
// split M: rows_per_group (R, a column count of dw) plays no part.
TEST(Dispatch, KRaggedUsesTheAverageSegmentOfTokenRows) {
  EXPECT_EQ(dispatchRowsPerGroup(Op::SegmentMatmulK, shape(1000, 4096, 8), 0),
            125);
  EXPECT_EQ(dispatchRowsPerGroup(Op::SegmentMatmulK, shape(0, 4096, 8), 0), 0);
  EXPECT_EQ(dispatchRowsPerGroup(Op::SegmentMatmulK, shape(1000, 4096, 0), 0),
            0);
  EXPECT_EQ(dispatchRowsPerGroup(Op::SegmentMatmulK, shape(1000, 4096, 8), 20),
            20);
}

TEST(Dispatch, MaskedAndBatchedUseTheRowsPerGroup) {
  EXPECT_EQ(
      dispatchRowsPerGroup(Op::MaskedMatmul, shape(32 * 4096, 4096, 32), 0),
      4096);
  EXPECT_EQ(dispatchRowsPerGroup(Op::BatchedMatmul, shape(400, 100, 4), 0),
            100);
}

TEST(Dispatch, TheHintWins) {
  EXPECT_EQ(
      dispatchRowsPerGroup(Op::MaskedMatmul, shape(32 * 4096, 4096, 32), 20),
      20);
  EXPECT_EQ(dispatchRowsPerGroup(Op::SegmentMatmul, shape(1000, 0, 8), 300),
            300);
}

TEST(Dispatch, FirstVariantWhoseBoundHolds) {
  Bundle bundle;
  bundle.variants.resize(3);
  bundle.bounds = {64, 256};
  EXPECT_EQ(selectVariant(bundle, 0), 0u);
  EXPECT_EQ(selectVariant(bundle, 1), 0u);
  EXPECT_EQ(selectVariant(bundle, 64), 0u);
  EXPECT_EQ(selectVariant(bundle, 65), 1u);
  EXPECT_EQ(selectVariant(bundle, 256), 1u);
  EXPECT_EQ(selectVariant(bundle, 257), 2u);
  EXPECT_EQ(selectVariant(bundle, int64_t(1) << 40), 2u);
}

TEST(Dispatch, OneVariant) {
  Bundle bundle;
  bundle.variants.resize(1);
  EXPECT_EQ(selectVariant(bundle, 0), 0u);
  EXPECT_EQ(selectVariant(bundle, 1000), 0u);
}

} // namespace
} // namespace ggemm::runtime
