//===- TileConfigHeuristicsTest.cpp - tile config heuristics --------------===//
//
// The heuristics behind ggemm-select-config, tested on their own: every
// choice must be a tile config the verifiers accept (wgmma shapes, block_k
// against the element type, the 227 KB shared-memory budget), and the
// choices follow the rules written in TileConfigHeuristics.h.
//
//===----------------------------------------------------------------------===//

#include "ggemm/Dialect/GGemm/Transforms/TileConfigHeuristics.h"

#include "ggemm/Dialect/GGemm/IR/GGemm.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <string>

using namespace mlir;
using namespace mlir::ggemm;

namespace {

constexpr int64_t kH100SMs = 132;

ProblemSummary problem(int64_t n, int64_t k, int64_t rowsPerGroup,
                       int64_t numGroups, int64_t elementBytes = 2,
                       bool weightsNMajor = false) {
  ProblemSummary p;
  p.n = n;
  p.k = k;
  p.rowsPerGroup = rowsPerGroup;
  p.numGroups = numGroups;
  p.elementBytes = elementBytes;
  p.weightsNMajor = weightsNMajor;
  return p;
}

std::string describe(const ProblemSummary &p) {
  return "n=" + std::to_string(p.n) + " k=" + std::to_string(p.k) +
         " rows=" + std::to_string(p.rowsPerGroup) +
         " groups=" + std::to_string(p.numGroups) +
         " bytes=" + std::to_string(p.elementBytes) +
         (p.weightsNMajor ? " kn" : " nk");
}

/// Shared memory of the operand ring as the op verifiers count it.
int64_t ringBytes(const TileChoice &c, int64_t elementBytes) {
  return c.stages * (c.blockM + c.blockN) * c.blockK * elementBytes +
         c.stages * 16;
}

/// The problems the property tests sweep: decode to prefill row counts,
/// unknown sizes, small and large N and K, bf16 and FP8, both layouts.
std::vector<ProblemSummary> sweep() {
  std::vector<ProblemSummary> problems;
  for (int64_t bytes : {1, 2})
    for (bool kn : {false, true})
      for (int64_t n : {0, 8, 64, 200, 384, 1024, 4096, 7168})
        for (int64_t k : {0, 64, 128, 512, 7168})
          for (int64_t rows : {0, 1, 16, 64, 65, 256, 4096})
            for (int64_t groups : {0, 1, 8, 256})
              problems.push_back(problem(n, k, rows, groups, bytes, kn));
  return problems;
}

TEST(MaxStagesThatFit, CountsMbarriers) {
  // 16 bytes of mbarriers per stage come on top of the operand tiles.
  EXPECT_EQ(maxStagesThatFit(32768, 3 * 32768), 2);
  EXPECT_EQ(maxStagesThatFit(32768, 3 * (32768 + 16)), 3);
  EXPECT_EQ(maxStagesThatFit(32768, kMaxSmemBytesPerCta), 7);
  EXPECT_EQ(maxStagesThatFit(49152, kMaxSmemBytesPerCta), 4);
}

TEST(MaxStagesThatFit, TooLargeOrEmpty) {
  EXPECT_EQ(maxStagesThatFit(kMaxSmemBytesPerCta, kMaxSmemBytesPerCta), 0);
  EXPECT_EQ(maxStagesThatFit(0, kMaxSmemBytesPerCta), 0);
  EXPECT_EQ(maxStagesThatFit(-1024, kMaxSmemBytesPerCta), 0);
}

TEST(ChooseTileConfig, BlockKIsOneSwizzleRow) {
  EXPECT_EQ(chooseTileConfig(problem(4096, 7168, 0, 8, 2), kH100SMs).blockK,
            64);
  EXPECT_EQ(chooseTileConfig(problem(4096, 7168, 0, 8, 1), kH100SMs).blockK,
            128);
  for (const ProblemSummary &p : sweep())
    EXPECT_EQ(chooseTileConfig(p, kH100SMs).blockK * p.elementBytes, 128)
        << describe(p);
}

TEST(ChooseTileConfig, StagesFitTheSharedMemoryBudget) {
  for (const ProblemSummary &p : sweep()) {
    TileChoice c = chooseTileConfig(p, kH100SMs);
    EXPECT_GE(c.stages, 1) << describe(p);
    EXPECT_LE(c.stages, p.elementBytes == 1 ? 8 : 6) << describe(p);
    EXPECT_LE(ringBytes(c, p.elementBytes), kMaxSmemBytesPerCta) << describe(p);
  }
  // Block-scaled FP8 decode tiles take 8 stages, its large tiles what fits.
  ProblemSummary decode = problem(7168, 16384, 1, 1, 1);
  decode.blockScaled = true;
  EXPECT_EQ(chooseTileConfig(decode, kH100SMs).stages, 8);
  decode.rowsPerGroup = 128;
  EXPECT_EQ(chooseTileConfig(decode, kH100SMs).blockN, 64);
  EXPECT_EQ(chooseTileConfig(decode, kH100SMs).stages, 8);
}

TEST(ChooseTileConfig, DeepestRingThatFits) {
  // 128x128 bf16 tiles: 32 KB a stage, capped at 6 stages.
  TileChoice c = chooseTileConfig(problem(128, 7168, 0, 8), kH100SMs);
  ASSERT_EQ(c.blockN, 128);
  EXPECT_EQ(c.stages, 6);
  // 128x256 bf16 tiles: 48 KB a stage, 4 fit.
  c = chooseTileConfig(problem(384, 7168, 128, 66), kH100SMs);
  ASSERT_EQ(c.blockN, 256);
  EXPECT_EQ(c.stages, 4);
  EXPECT_GT(ringBytes({c.blockM, c.blockN, c.blockK, c.stages + 1, 2}, 2),
            kMaxSmemBytesPerCta);
}

TEST(ChooseTileConfig, NoMoreStagesThanKBlocks) {
  // K = 64 is one K block: two stages still overlap loads across tiles.
  EXPECT_EQ(chooseTileConfig(problem(256, 64, 100, 4), kH100SMs).stages, 2);
  EXPECT_EQ(chooseTileConfig(problem(256, 256, 100, 4), kH100SMs).stages, 4);
  EXPECT_EQ(chooseTileConfig(problem(256, 320, 100, 4), kH100SMs).stages, 5);
  // Unknown K: only the budget limits the ring (128x256 tiles: 4 stages).
  EXPECT_EQ(chooseTileConfig(problem(4096, 0, 0, 8), kH100SMs).stages, 4);
  EXPECT_EQ(chooseTileConfig(problem(128, 0, 0, 8), kH100SMs).stages, 6);
}

TEST(ChooseTileConfig, BlockScaledFp8) {
  // FP8 with 1x128 / 128x128 scales: K blocks of 128, at most 192 columns
  // (two f32 register sets per consumer: the K block's product and the
  // sum), scales counted in each stage. Large groups: the 128x192 tile's
  // work as 192x128 over three consumer warpgroups.
  ProblemSummary p = problem(7168, 16384, 0, 1, 1);
  p.blockScaled = true;
  TileChoice c = chooseTileConfig(p, kH100SMs);
  EXPECT_EQ(c.blockK, 128);
  EXPECT_EQ(c.blockM, 192);
  EXPECT_EQ(c.blockN, 128);
  EXPECT_EQ(c.consumerWarpgroups, 3);
  // A stage: 24 + 16 KB of tiles and the scales; 5 would fit, 4 leave room
  // for the three warpgroups' store boxes.
  EXPECT_EQ(c.stages, 4);
  EXPECT_LE(ringBytes(c, 1), kMaxSmemBytesPerCta);
  // Per-column scales (K-ragged) and gated tiles keep 128x192.
  ProblemSummary columns = p;
  columns.perColumnScales = true;
  TileChoice cc = chooseTileConfig(columns, kH100SMs);
  EXPECT_EQ(cc.blockM, 128);
  EXPECT_EQ(cc.blockN, 192);
  EXPECT_EQ(cc.consumerWarpgroups, 2);
  // Three consumer warpgroups only for block-scaled FP8.
  for (const ProblemSummary &q : sweep())
    if (!q.blockScaled)
      EXPECT_LE(chooseTileConfig(q, kH100SMs).consumerWarpgroups, 2)
          << describe(q);
  // The same problem without scales may take 256 columns.
  p.blockScaled = false;
  EXPECT_EQ(chooseTileConfig(p, kH100SMs).blockN, 256);
  for (ProblemSummary q : sweep()) {
    q.blockScaled = q.elementBytes == 1;
    if (q.blockScaled)
      EXPECT_LE(chooseTileConfig(q, kH100SMs).blockN, 192) << describe(q);
  }
}

TEST(ChooseTileConfig, BlockScaledFp8BandsGroupsOfLargeWeights) {
  // The 192x128 tiles walk along n in bands of 4 row tiles where a group's
  // weights (N x K bytes) reach 32 MiB, every group alike; plainly below
  // that, or where N or K is unknown (bench/NOTES.md v38).
  auto walk = [](int64_t n, int64_t k, int64_t rows, int64_t groups) {
    ProblemSummary p = problem(n, k, rows, groups, 1);
    p.blockScaled = true;
    return chooseTileConfig(p, kH100SMs);
  };
  for (auto [n, k] : {std::pair<int64_t, int64_t>{7168, 16384},
                      {24576, 1536},
                      {6144, 7168},
                      {4096, 8192}}) {
    TileChoice c = walk(n, k, 0, 0);
    EXPECT_EQ(c.blockM, 192) << n << "x" << k;
    EXPECT_FALSE(c.rasterAlongM) << n << "x" << k;
    EXPECT_EQ(c.swizzle, kLargeWeightSwizzle) << n << "x" << k;
    EXPECT_EQ(c.swizzleMinTiles, 0) << n << "x" << k;
    EXPECT_EQ(walk(n, k, 4096, 8).swizzle, kLargeWeightSwizzle)
        << n << "x" << k;
  }
  // 29 MB and less: the plain walk (one byte short of 32 MiB too).
  for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 7168},
                      {7168, 3072},
                      {7168, 2048},
                      {2112, 7168},
                      {4096, 8191}}) {
    TileChoice c = walk(n, k, 0, 0);
    EXPECT_EQ(c.blockM, 192) << n << "x" << k;
    EXPECT_EQ(c.swizzle, 1) << n << "x" << k;
  }
  // Unknown K.
  EXPECT_EQ(walk(24576, 0, 0, 0).swizzle, 1);
  // Not the other 8-bit tiles (tensor-wise or per-row scales, not timed).
  EXPECT_EQ(chooseTileConfig(problem(7168, 16384, 0, 0, 1), kH100SMs).swizzle,
            1);
}

TEST(ChooseTileConfig, BlockScaledFp8TakesWideTilesOnlyWhereTheyPay) {
  auto blockScaled = [](ProblemSummary p) {
    p.blockScaled = true;
    return p;
  };
  // The columns of the 128-row tile chosen; a 192x128 three-warpgroup
  // tile stands for 128x192 (the same work per K block).
  auto width = [&](int64_t n, int64_t k, int64_t rows, int64_t groups) {
    TileChoice c =
        chooseTileConfig(blockScaled(problem(n, k, rows, groups, 1)), kH100SMs);
    return c.consumerWarpgroups == 3 ? c.blockM : c.blockN;
  };
  // Large groups, known or not: 192 columns (1.11x 128 on an H100).
  EXPECT_EQ(width(6144, 7168, 4096, 8), 192);
  EXPECT_EQ(width(6144, 7168, 0, 0), 192);
  // A few hundred rows per group in an unknown number of groups (a row
  // bucket of a dynamic kernel): 128, as one group of 128 rows measured.
  EXPECT_EQ(width(7168, 16384, 128, 0), 128);
  // N of a few tiles: 192 would pad more than it gains.
  EXPECT_EQ(width(1024, 1024, 0, 0), 128);
  // Known rows and groups: three warpgroups unless their 192-row tiles take
  // more waves than 128x192 at 1.08x the time. One group of 128 rows at
  // N = 24576: 128 tiles of 128x192 are one wave, 192 of 192x128 two.
  TileChoice oneWave =
      chooseTileConfig(blockScaled(problem(24576, 1536, 128, 1, 1)), kH100SMs);
  EXPECT_EQ(oneWave.blockM, 128);
  EXPECT_EQ(oneWave.blockN, 192);
  EXPECT_EQ(oneWave.consumerWarpgroups, 2);
  // Eight groups of 4096 rows at N = 6144: 64 waves of 192x128 against 63
  // of 128x192, which the three warpgroups' speed outweighs.
  TileChoice manyWaves =
      chooseTileConfig(blockScaled(problem(6144, 7168, 4096, 8, 1)), kH100SMs);
  EXPECT_EQ(manyWaves.blockM, 192);
  EXPECT_EQ(manyWaves.consumerWarpgroups, 3);
  // Decode, one group of at most 128 rows (a dense call's <= 128-row
  // bucket): 32 columns where 64 leave SMs idle and 32 still fit one wave
  // (N = 2112: 66 CTAs instead of 33; N = 4096: 128 instead of 64), 64
  // where 32 would take two (N = 7168).
  EXPECT_EQ(width(2112, 7168, 128, 1), 32);
  EXPECT_EQ(width(4096, 7168, 128, 1), 32);
  EXPECT_EQ(width(7168, 16384, 128, 1), 64);
  EXPECT_EQ(width(7168, 2048, 128, 1), 64);
  // The same rules for FP8 with tensor-wise or per-row scales and INT8
  // (8-bit operands), in one group: 32 columns at N = 2112, swap-AB tiles
  // of 64 weight rows at 16 rows.
  for (bool integer : {false, true}) {
    ProblemSummary q = problem(2112, 7168, 128, 1, 1);
    q.integerOperands = integer;
    EXPECT_EQ(chooseTileConfig(q, kH100SMs).blockN, 32) << integer;
    q.rowsPerGroup = 16;
    TileChoice c = chooseTileConfig(q, kH100SMs);
    EXPECT_TRUE(c.swapAB) << integer;
    EXPECT_EQ(c.blockN, 64) << integer;
    EXPECT_EQ(c.consumerWarpgroups, 1) << integer;
    EXPECT_EQ(c.stages, 8) << integer;
  }
  // Not without a known group count, nor for 16-bit operands.
  EXPECT_EQ(width(2112, 7168, 128, 0), 128);
  for (const ProblemSummary &q : sweep())
    if (q.elementBytes != 1)
      EXPECT_NE(chooseTileConfig(q, kH100SMs).blockN, 32) << describe(q);
  // A gated tile's halves of 96 columns: not with block scales.
  ProblemSummary gated = blockScaled(problem(4096, 7168, 4096, 8, 1));
  gated.gated = true;
  EXPECT_LE(chooseTileConfig(gated, kH100SMs).blockN, 128);
  // 16-bit operands never take 192.
  for (const ProblemSummary &q : sweep())
    if (q.elementBytes != 1)
      EXPECT_NE(chooseTileConfig(q, kH100SMs).blockN, 192) << describe(q);
}

TEST(ChooseTileConfig, EightBitTilesOf192ColumnsWherePaddingCosts) {
  // 8-bit operands without block scales (tensor-wise or per-row FP8, INT8)
  // take 192 columns where 256 would pad more: N = 2112 is 11 tiles of 192
  // and 9 of 256 (1.29x on an H100 at M = 4096, NOTES v34), rows known or
  // not; N = 4096 stays 256, which divides it. One register set (no
  // promotion), so the 128-row tile stays on two warpgroups.
  for (bool integer : {false, true}) {
    for (int64_t rows : {int64_t{0}, int64_t{4096}}) {
      ProblemSummary q = problem(2112, 7168, rows, rows ? 1 : 0, 1);
      q.integerOperands = integer;
      TileChoice c = chooseTileConfig(q, kH100SMs);
      EXPECT_EQ(c.blockM, 128) << integer << " rows=" << rows;
      EXPECT_EQ(c.blockN, 192) << integer << " rows=" << rows;
      EXPECT_EQ(c.consumerWarpgroups, 2) << integer << " rows=" << rows;
      // Four stages (five would fit), for the staged epilogue's boxes.
      EXPECT_EQ(c.stages, 4) << integer << " rows=" << rows;
      q.n = 4096;
      EXPECT_EQ(chooseTileConfig(q, kH100SMs).blockN, 256)
          << integer << " rows=" << rows;
    }
  }
  // Not for a gated tile (not measured).
  ProblemSummary gated = problem(2112, 7168, 0, 0, 1);
  gated.gated = true;
  EXPECT_NE(chooseTileConfig(gated, kH100SMs).blockN, 192);
}

TEST(ChooseTileConfig, EpilogueScaledFp8) {
  // FP8 with tensor-wise or per-row scales (blockScaled false): one f32
  // register set, no scales in the stages, so the bf16 path's choices with
  // 128-element K blocks: 128x256 tiles of 48 KB a stage, 4 of them.
  ProblemSummary p = problem(7168, 16384, 0, 1, /*elementBytes=*/1);
  TileChoice c = chooseTileConfig(p, kH100SMs);
  EXPECT_FALSE(c.swapAB);
  EXPECT_EQ(c.blockK, 128);
  EXPECT_EQ(c.blockM, 128);
  EXPECT_EQ(c.blockN, 256);
  EXPECT_EQ(c.stages, 4);
  EXPECT_LE(ringBytes(c, 1), kMaxSmemBytesPerCta);
  // Unknown N: the widest tile, as for bf16.
  EXPECT_EQ(chooseTileConfig(problem(0, 0, 0, 0, 1), kH100SMs).blockN, 256);
  // Few rows per group: swap-AB, whose token tile may use all of wgmma's
  // 256 columns (no activation-scale box of block_m + 4 to fit).
  ProblemSummary small = problem(4096, 7168, 250, 8, 1);
  small.rowsPerGroup = 64;
  TileChoice swapped = chooseTileConfig(small, kH100SMs);
  EXPECT_TRUE(swapped.swapAB);
  EXPECT_EQ(swapped.blockM, 88);
  EXPECT_EQ(swapped.blockK, 128);
  small.maxRowsPerGroup = 256;
  small.rowsPerGroup = 250;
  EXPECT_FALSE(chooseTileConfig(small, kH100SMs).swapAB);
  for (const ProblemSummary &q : sweep()) {
    if (q.elementBytes != 1)
      continue;
    TileChoice choice = chooseTileConfig(q, kH100SMs);
    EXPECT_EQ(choice.blockK, 128) << describe(q);
    EXPECT_LE(ringBytes(choice, 1), kMaxSmemBytesPerCta) << describe(q);
  }
}

TEST(ChooseTileConfig, SmallGroupsSwapAB) {
  // Token tiles sized to the expected rows + 30 %, in steps of 8; the
  // weight tile fills wgmma's M over two consumer warpgroups.
  for (auto [rows, blockM] : {std::pair<int64_t, int64_t>{1, 8},
                              {6, 8},
                              {16, 24},
                              {20, 32},
                              {32, 48},
                              {64, 88}}) {
    TileChoice c = chooseTileConfig(problem(4096, 7168, rows, 8), kH100SMs);
    EXPECT_TRUE(c.swapAB) << rows;
    EXPECT_EQ(c.blockM, blockM) << rows;
    EXPECT_EQ(c.blockN, 128) << rows;
    EXPECT_EQ(c.consumerWarpgroups, 2) << rows;
  }
  // INT8: wgmma's s8 forms take N = 8, 16, 24 or a multiple of 16 (40 and
  // 64 rows would be 56 and 88 in steps of 8).
  for (auto [rows, blockM] : {std::pair<int64_t, int64_t>{6, 8},
                              {16, 24},
                              {20, 32},
                              {32, 48},
                              {40, 64},
                              {64, 96}}) {
    ProblemSummary p = problem(4096, 7168, rows, 8);
    p.elementBytes = 1;
    p.integerOperands = true;
    TileChoice c = chooseTileConfig(p, kH100SMs);
    EXPECT_TRUE(c.swapAB) << rows;
    EXPECT_EQ(c.blockM, blockM) << rows;
  }
  // An e4m3 y: never swap-AB (each row's 128-column block is the tile's),
  // and tiles of whole 128-column blocks of y (a gated tile writes half
  // its columns).
  for (auto [n, rows, gated] :
       {std::tuple<int64_t, int64_t, bool>{4096, 16, false},
        {200, 4096, false},
        {96, 4096, false},
        {2048, 16, true},
        {2048, 4096, true}}) {
    ProblemSummary p = problem(n, 7168, rows, 8);
    p.fp8Output = true;
    p.noSwapAB = true;
    p.gated = gated;
    TileChoice c = chooseTileConfig(p, kH100SMs);
    EXPECT_FALSE(c.swapAB) << n << " " << rows;
    EXPECT_EQ((gated ? c.blockN / 2 : c.blockN) % 128, 0) << n << " " << rows;
  }
  // Block-scaled FP8 in one group (a dense decode call): 64 weight rows on
  // one warpgroup where 128-row tiles would leave SMs idle (N = 7168: 56
  // tiles), 128 with many tiles (32 groups of N = 4096: 1024).
  for (auto [n, rows, groups, blockN] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t>{7168, 1, 1, 64},
        {7168, 64, 1, 64},
        {2112, 16, 1, 64},
        {4096, 20, 32, 128},
        {4096, 20, 6, 128}}) {
    ProblemSummary p = problem(n, 7168, rows, groups, 1);
    p.blockScaled = true;
    TileChoice c = chooseTileConfig(p, kH100SMs);
    EXPECT_TRUE(c.swapAB) << n << " " << rows << " " << groups;
    EXPECT_EQ(c.blockN, blockN) << n << " " << rows << " " << groups;
    EXPECT_EQ(c.consumerWarpgroups, blockN / 64);
  }
  // Narrow N: one warpgroup of 64 weight rows.
  TileChoice narrow = chooseTileConfig(problem(64, 7168, 16, 8), kH100SMs);
  EXPECT_TRUE(narrow.swapAB);
  EXPECT_EQ(narrow.blockN, 64);
  EXPECT_EQ(narrow.consumerWarpgroups, 1);
  for (int64_t rows : {0, 65, 128, 4096}) {
    TileChoice c = chooseTileConfig(problem(4096, 7168, rows, 8), kH100SMs);
    EXPECT_FALSE(c.swapAB) << rows;
    EXPECT_EQ(c.blockM, 128) << rows;
    EXPECT_EQ(c.consumerWarpgroups, 2) << rows;
  }
}

TEST(ChooseTileConfig, OneWarpgroupPer64MmaRows) {
  // The consumers split the mma's a tile: tokens, or weights with swap-AB.
  for (const ProblemSummary &p : sweep()) {
    TileChoice c = chooseTileConfig(p, kH100SMs);
    EXPECT_EQ(c.swapAB ? c.blockN : c.blockM, 64 * c.consumerWarpgroups)
        << describe(p);
  }
}

TEST(ChooseTileConfig, UnknownNDefaultsTo128x256) {
  // A dynamic-shape kernel must not get the slow 128x128 tile (issue 9:
  // 0.73x of the static kernel on large MoE shapes).
  TileChoice c = chooseTileConfig(problem(0, 0, 0, 0), kH100SMs);
  EXPECT_FALSE(c.swapAB);
  EXPECT_EQ(c.blockM, 128);
  EXPECT_EQ(c.blockN, 256);
  ProblemSummary fp8 = problem(0, 0, 0, 0, /*elementBytes=*/1);
  fp8.blockScaled = true;
  TileChoice f = chooseTileConfig(fp8, kH100SMs);
  EXPECT_EQ(f.blockM * f.blockN, 192 * 128);
  EXPECT_EQ(f.consumerWarpgroups, 3);
}

TEST(ChooseTileConfig, NMajorWeightsUse64ColumnBoxes) {
  for (const ProblemSummary &p : sweep()) {
    if (!p.weightsNMajor)
      continue;
    EXPECT_EQ(chooseTileConfig(p, kH100SMs).blockN % 64, 0) << describe(p);
  }
}

TEST(ChooseTileConfig, UnknownRowsDefaultTo128x256) {
  // Many rows assumed: the widest tile, the most efficient one, wins.
  TileChoice c = chooseTileConfig(problem(4096, 7168, 0, 8), kH100SMs);
  EXPECT_EQ(c.blockM, 128);
  EXPECT_EQ(c.blockN, 256);
}

TEST(ChooseTileConfig, WaveQuantisation) {
  // N = 384 on 66 row tiles: 256-wide tiles make one full wave of 132,
  // 128-wide ones 198 tiles, a second wave half empty.
  EXPECT_EQ(chooseTileConfig(problem(384, 7168, 128, 66), kH100SMs).blockN,
            256);
  // Equal utilisation: the 256-wide tile wins on measured efficiency
  // (8 waves of 256 columns beat 16 waves of 128).
  EXPECT_EQ(chooseTileConfig(problem(4096, 7168, 128, 66), kH100SMs).blockN,
            256);
  // 8 groups of 128 rows, N = 640 on 20 SMs: 256 columns make 3 column
  // tiles (24 tiles, 2 waves), 128 columns 5 (40 tiles, 2 waves) of cheaper
  // tiles: 128 wins.
  EXPECT_EQ(chooseTileConfig(problem(640, 7168, 128, 8), 20).blockN, 128);
}

TEST(ChooseTileConfig, NarrowN) {
  // More than half of a 128-wide tile would be padding: 64 columns.
  EXPECT_EQ(chooseTileConfig(problem(8, 7168, 128, 8), kH100SMs).blockN, 64);
  EXPECT_EQ(chooseTileConfig(problem(64, 7168, 128, 8), kH100SMs).blockN, 64);
}

/// Builds the tile configs of choices through the attribute's verifier,
/// collecting its diagnostics in `errors`.
class ConfigVerifier {
public:
  ConfigVerifier() {
    context.loadDialect<GGemmDialect>();
    context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      errors += diag.str() + "\n";
      return success();
    });
  }

  /// The config of `c`, or null when the verifier rejects it.
  TileConfigAttr config(const TileChoice &c) {
    const int64_t clusterM = 1, clusterN = 1;
    return TileConfigAttr::getChecked(
        [&] { return mlir::emitError(UnknownLoc::get(&context)); }, &context,
        c.blockM, c.blockN, c.blockK, c.stages, c.consumerWarpgroups, c.swapAB,
        clusterM, clusterN,
        c.rasterAlongM ? RasterOrder::along_m : RasterOrder::along_n,
        /*pingpong=*/false, c.swizzle, c.swizzleMinTiles, c.promotePairs,
        c.splitK, /*splitKTail=*/false);
  }

  std::string errors;

private:
  MLIRContext context;
};

TEST(ChooseTileConfig, ChoicesPassTheVerifiers) {
  ConfigVerifier verifier;
  for (const ProblemSummary &p : sweep()) {
    TileConfigAttr config = verifier.config(chooseTileConfig(p, kH100SMs));
    ASSERT_TRUE(config) << describe(p) << ": " << verifier.errors;
    EXPECT_LE(config.getPipelineSmemBytes(p.elementBytes), kMaxSmemBytesPerCta)
        << describe(p);
  }
}

} // namespace

TEST(ChooseTileConfig, TwoWarpgroupTilesWalkAlongM) {
  EXPECT_TRUE(
      chooseTileConfig(problem(4096, 7168, 0, 8), kH100SMs).rasterAlongM);
  EXPECT_TRUE(
      chooseTileConfig(problem(4096, 7168, 2048, 8), kH100SMs).rasterAlongM);
  // Small groups (one warpgroup, 64-row tiles) keep the along-n walk.
  EXPECT_FALSE(
      chooseTileConfig(problem(4096, 7168, 16, 8), kH100SMs).rasterAlongM);
}

TEST(ChooseTileConfig, LargeGroupsWalkInBands) {
  // The 128x256 two-byte tiles walk bands of 4 column tiles on groups of at
  // least 48 row tiles (NOTES v20), whatever the rows expected (the rule
  // is applied per group on the device).
  for (int64_t rows : {int64_t{0}, int64_t{512}, int64_t{8192}}) {
    TileChoice c = chooseTileConfig(problem(6144, 7168, rows, 4), kH100SMs);
    ASSERT_EQ(c.blockM, 128);
    ASSERT_EQ(c.blockN, 256);
    EXPECT_EQ(c.swizzle, kLargeGroupSwizzle) << rows;
    EXPECT_EQ(c.swizzleMinTiles, kLargeGroupSwizzleMinTiles) << rows;
  }
  EXPECT_EQ(kLargeGroupSwizzleMinTiles * 128, 6144);
  // Not where it was not measured: other tiles, 8-bit operands, the MoE
  // programs (gated, gathered or scattered rows) and K-ragged products.
  auto plain = [](const TileChoice &c) {
    return c.swizzle == 1 && c.swizzleMinTiles == 0;
  };
  EXPECT_TRUE(plain(chooseTileConfig(problem(4096, 7168, 16, 8), kH100SMs)));
  EXPECT_TRUE(plain(chooseTileConfig(problem(4096, 7168, 64, 8), kH100SMs)));
  ProblemSummary fp8 = problem(4096, 7168, 0, 8, 1);
  fp8.blockScaled = true;
  EXPECT_TRUE(plain(chooseTileConfig(fp8, kH100SMs)));
  ProblemSummary gated = problem(4096, 7168, 0, 8);
  gated.gated = true;
  gated.noSwapAB = true;
  EXPECT_TRUE(plain(chooseTileConfig(gated, kH100SMs)));
  ProblemSummary gathered = problem(4096, 7168, 0, 8);
  gathered.noSwapAB = true;
  EXPECT_TRUE(plain(chooseTileConfig(gathered, kH100SMs)));
  TileChoice kRagged =
      chooseKRaggedTileConfig(problem(4096, 7168, 4096, 8), kH100SMs);
  EXPECT_EQ(kRagged.blockN, 256);
  EXPECT_TRUE(plain(kRagged));
}

TEST(ChooseTileConfig, NarrowBlockScaledTilesPromotePairs) {
  // Block-scaled FP8 tiles of at most 64 x 96 per consumer warpgroup take
  // two K blocks per wgmma wait (NOTES v23): the one-warpgroup swap-AB
  // decode tiles, the 128-row tiles of at most 64 columns and the 64-row
  // decode tiles of 16 or 32 (v25).
  auto fp8 = [](int64_t n, int64_t rows, int64_t groups) {
    ProblemSummary p = problem(n, 7168, rows, groups, 1);
    p.blockScaled = true;
    return p;
  };
  for (int64_t n : {int64_t{2112}, int64_t{4096}, int64_t{7168}})
    for (int64_t rows : {int64_t{1}, int64_t{16}, int64_t{64}, int64_t{128}}) {
      TileChoice c = chooseTileConfig(fp8(n, rows, 1), kH100SMs);
      bool narrow = c.swapAB ? c.consumerWarpgroups == 1 && c.blockM <= 96
                             : (c.blockM == 128 && c.blockN <= 64) ||
                                   (c.blockM == 64 && c.blockN <= 32 &&
                                    c.consumerWarpgroups == 1);
      EXPECT_TRUE(narrow) << n << " " << rows;
      EXPECT_TRUE(c.promotePairs) << n << " " << rows;
    }
  // Large tiles (a third register set would spill), swap-AB tiles of two
  // warpgroups (many groups of few rows), per-column scales, other scale
  // kinds and two-byte operands keep one K block per wait.
  TileChoice large = chooseTileConfig(fp8(4096, 4096, 8), kH100SMs);
  EXPECT_EQ(large.blockM, 192);
  EXPECT_FALSE(large.promotePairs);
  TileChoice manyGroups = chooseTileConfig(fp8(4096, 20, 32), kH100SMs);
  EXPECT_TRUE(manyGroups.swapAB);
  EXPECT_EQ(manyGroups.consumerWarpgroups, 2);
  EXPECT_FALSE(manyGroups.promotePairs);
  ProblemSummary perColumn = fp8(4096, 16, 1);
  perColumn.perColumnScales = true;
  EXPECT_FALSE(chooseTileConfig(perColumn, kH100SMs).promotePairs);
  EXPECT_FALSE(
      chooseTileConfig(problem(4096, 7168, 16, 1, 1), kH100SMs).promotePairs);
  EXPECT_FALSE(
      chooseTileConfig(problem(4096, 7168, 16, 1), kH100SMs).promotePairs);
  EXPECT_FALSE(
      chooseKRaggedTileConfig(fp8(4096, 4096, 8), kH100SMs).promotePairs);
}

TEST(ChooseTileConfig, NarrowDecodeTilesFillTheSMs) {
  // 8-bit operands in one group of 33-128 rows: 64-row tiles on one
  // consumer warpgroup by 32 or 16 columns where they make more CTAs than
  // the other tiles and still one wave (NOTES v25, v27).
  auto fp8 = [](int64_t n, int64_t rows, int64_t groups) {
    ProblemSummary p = problem(n, 7168, rows, groups, 1);
    p.blockScaled = true;
    return p;
  };
  struct Expect {
    int64_t n, rows, blockN;
  };
  // 64 rows: N = 2112 in 132 tiles of 16, N = 4096 in 128 of 32; 128 rows:
  // N = 2112 in 2 x 66 tiles of 32.
  for (Expect e : {Expect{2112, 64, 16}, Expect{4096, 64, 32},
                   Expect{2112, 128, 32}, Expect{2112, 48, 16}}) {
    TileChoice c = chooseTileConfig(fp8(e.n, e.rows, 1), kH100SMs);
    EXPECT_FALSE(c.swapAB) << e.n << " " << e.rows;
    EXPECT_EQ(c.blockM, 64) << e.n << " " << e.rows;
    EXPECT_EQ(c.blockN, e.blockN) << e.n << " " << e.rows;
    EXPECT_EQ(c.consumerWarpgroups, 1) << e.n << " " << e.rows;
    EXPECT_EQ(c.stages, 8) << e.n << " " << e.rows;
    EXPECT_TRUE(c.promotePairs) << e.n << " " << e.rows;
  }
  // Where the narrow tiles would take two waves the others stay: 128 rows
  // at N = 4096 (128x32, 128 CTAs), N = 7168 (128x64; swap-AB at 64 rows).
  TileChoice wide = chooseTileConfig(fp8(4096, 128, 1), kH100SMs);
  EXPECT_EQ(wide.blockM, 128);
  EXPECT_EQ(wide.blockN, 32);
  EXPECT_EQ(chooseTileConfig(fp8(7168, 128, 1), kH100SMs).blockM, 128);
  EXPECT_TRUE(chooseTileConfig(fp8(7168, 64, 1), kH100SMs).swapAB);
  // 32 rows and fewer keep swap-AB (1.16-1.67x the 64-row tiles at 1 and
  // 16 rows), and so do many groups.
  for (int64_t rows : {int64_t{1}, int64_t{16}, int64_t{32}})
    EXPECT_TRUE(chooseTileConfig(fp8(2112, rows, 1), kH100SMs).swapAB) << rows;
  EXPECT_TRUE(chooseTileConfig(fp8(2112, 64, 8), kH100SMs).swapAB);
  // The other 8-bit kinds (tensor-wise or per-row FP8 scales, INT8) too,
  // without pairs (NOTES v27); not 16-bit operands, per-column scales or
  // an e4m3 y.
  for (bool integer : {false, true}) {
    ProblemSummary q = problem(2112, 7168, 128, 1, 1);
    q.integerOperands = integer;
    TileChoice c = chooseTileConfig(q, kH100SMs);
    EXPECT_EQ(c.blockM, 64) << integer;
    EXPECT_EQ(c.blockN, 32) << integer;
    EXPECT_FALSE(c.promotePairs) << integer;
  }
  EXPECT_TRUE(chooseTileConfig(problem(2112, 7168, 64, 1), kH100SMs).swapAB);
  ProblemSummary perColumn = fp8(2112, 128, 1);
  perColumn.perColumnScales = true;
  EXPECT_EQ(chooseTileConfig(perColumn, kH100SMs).blockM, 128);
  ProblemSummary e4m3 = fp8(2112, 128, 1);
  e4m3.fp8Output = true;
  e4m3.noSwapAB = true;
  EXPECT_NE(chooseTileConfig(e4m3, kH100SMs).blockN, 32);
}

TEST(ChooseTileConfig, OneFp8GroupTakesItsRowsExactly) {
  // A block-scaled 8-bit product of one group knows its rows: the swap-AB
  // token tile is sized to them without the +30 % margin (NOTES v26).
  auto fp8 = [](int64_t n, int64_t rows, int64_t groups) {
    ProblemSummary p = problem(n, 7168, rows, groups, 1);
    p.blockScaled = true;
    return p;
  };
  for (int64_t rows : {int64_t{8}, int64_t{16}, int64_t{32}}) {
    TileChoice c = chooseTileConfig(fp8(2112, rows, 1), kH100SMs);
    EXPECT_TRUE(c.swapAB) << rows;
    EXPECT_EQ(c.blockM, rows);
  }
  TileChoice n7168 = chooseTileConfig(fp8(7168, 64, 1), kH100SMs);
  EXPECT_TRUE(n7168.swapAB);
  EXPECT_EQ(n7168.blockM, 64);
  // Many groups, other scale kinds and two-byte operands keep the margin.
  EXPECT_EQ(chooseTileConfig(fp8(7168, 16, 8), kH100SMs).blockM, 24);
  EXPECT_EQ(chooseTileConfig(problem(7168, 7168, 16, 1, 1), kH100SMs).blockM,
            24);
  EXPECT_EQ(chooseTileConfig(problem(7168, 7168, 16, 1), kH100SMs).blockM, 24);
}

TEST(ChooseTileConfig, SplitKWhereTilesLeaveSMsIdle) {
  // Block-scaled FP8 of one group whose tiles leave SMs idle: each tile's K
  // blocks over a cluster of split_k CTAs, the most whose clusters are
  // resident at once (8 GPCs of 16 SMs on 132), with at least 4 K blocks a
  // CTA and at most 32 KB of partial tiles (NOTES v35).
  auto fp8 = [](int64_t n, int64_t k, int64_t rows) {
    ProblemSummary p = problem(n, k, rows, 1, 1);
    p.blockScaled = true;
    return p;
  };
  // N = 576, one token: 9 tiles of 64 weight rows, 8 CTAs each.
  TileChoice n576 = chooseTileConfig(fp8(576, 7168, 1), kH100SMs);
  EXPECT_TRUE(n576.swapAB);
  EXPECT_EQ(n576.blockN, 64);
  EXPECT_EQ(n576.splitK, 8);
  // N = 2112: 33 tiles. 33 clusters of 4 would fill the 132 SMs, but 8
  // GPCs hold 32 of them; 3 a tile (measured 1.13x, 4: 0.85x).
  EXPECT_EQ(chooseTileConfig(fp8(2112, 7168, 1), kH100SMs).splitK, 3);
  // 32 tokens: 8 KB partials, 4 of them within 32 KB.
  EXPECT_EQ(chooseTileConfig(fp8(576, 7168, 32), kH100SMs).splitK, 5);
  // 64 tokens at N = 576: 36 tiles of 64 x 16, 3 CTAs each (108; 64 x 32
  // would be 18 tiles of 5, 90).
  TileChoice narrow = chooseTileConfig(fp8(576, 7168, 64), kH100SMs);
  EXPECT_EQ(narrow.blockM, 64);
  EXPECT_EQ(narrow.blockN, 16);
  EXPECT_EQ(narrow.splitK, 3);
  // 128 tokens: the narrow decode tile counts CTAs with the split, so 36
  // tiles of 64 x 32 over 3 CTAs (108) beat 72 of 64 x 16 that cannot be
  // split (72 clusters of 2 do not fit): 1.26x on an H100 (NOTES v35).
  TileChoice rows128 = chooseTileConfig(fp8(576, 7168, 128), kH100SMs);
  EXPECT_EQ(rows128.blockM, 64);
  EXPECT_EQ(rows128.blockN, 32);
  EXPECT_EQ(rows128.splitK, 3);
  // At N = 2112 the 64 x 32 tiles fill the SMs without a split.
  TileChoice n2112 = chooseTileConfig(fp8(2112, 7168, 128), kH100SMs);
  EXPECT_EQ(n2112.blockN, 32);
  EXPECT_EQ(n2112.splitK, 1);
  // Tiles that fill the SMs (N = 7168: 112 of 64 weight rows), short K
  // (N = 576, K = 512: 4 blocks), unknown rows or groups, per-column
  // scales, gated tiles and other element kinds are not split.
  EXPECT_EQ(chooseTileConfig(fp8(7168, 7168, 1), kH100SMs).splitK, 1);
  EXPECT_EQ(chooseTileConfig(fp8(576, 512, 1), kH100SMs).splitK, 1);
  EXPECT_EQ(chooseTileConfig(fp8(576, 7168, 0), kH100SMs).splitK, 1);
  ProblemSummary groups = fp8(576, 7168, 1);
  groups.numGroups = 0;
  EXPECT_EQ(chooseTileConfig(groups, kH100SMs).splitK, 1);
  ProblemSummary perColumn = fp8(576, 7168, 1);
  perColumn.perColumnScales = true;
  EXPECT_EQ(chooseTileConfig(perColumn, kH100SMs).splitK, 1);
  ProblemSummary gated = fp8(576, 7168, 1);
  gated.gated = true;
  EXPECT_EQ(chooseTileConfig(gated, kH100SMs).splitK, 1);
  EXPECT_EQ(chooseTileConfig(problem(576, 7168, 1, 1, 1), kH100SMs).splitK, 1);
  EXPECT_EQ(chooseTileConfig(problem(576, 7168, 1, 1), kH100SMs).splitK, 1);
  // Fewer SMs, fewer resident clusters: 78 SMs are 8 GPCs of 9, one
  // cluster of 8 each, so the 9 tiles at N = 576 split over 4.
  EXPECT_EQ(chooseTileConfig(fp8(576, 7168, 1), 78).splitK, 4);
}

TEST(ChooseVariants, OneFp8GroupHasAnEightRowBucket) {
  // Dense block-scaled FP8 (one group, rows unknown): buckets of 8, 16, 32
  // tokens on swap-AB tiles of exactly that many, then the others (v25).
  ProblemSummary p = problem(7168, 16384, 0, 1, 1);
  p.blockScaled = true;
  std::vector<TileVariant> variants = chooseVariants(p, kH100SMs);
  ASSERT_GE(variants.size(), 4u);
  for (auto [i, bound] :
       {std::pair<int, int64_t>{0, 8}, {1, 16}, {2, 32}, {3, 64}}) {
    EXPECT_EQ(variants[i].maxRowsPerGroup, bound);
    EXPECT_TRUE(variants[i].tile.swapAB);
    EXPECT_EQ(variants[i].tile.blockM, bound);
  }
  // Not with several groups, nor for other kinds.
  ProblemSummary grouped = p;
  grouped.numGroups = 8;
  EXPECT_EQ(chooseVariants(grouped, kH100SMs).front().maxRowsPerGroup, 16);
  EXPECT_EQ(chooseVariants(problem(7168, 16384, 0, 1, 1), kH100SMs)
                .front()
                .maxRowsPerGroup,
            16);
  EXPECT_EQ(ArrayRef<int64_t>(variantRowBounds(grouped)),
            ArrayRef<int64_t>(kVariantRowBounds));
}

namespace {

/// The variant the host's dispatch rule picks for `rows` per group: the
/// first whose bound is at least `rows`, else the last (docs/Bundle.md).
const TileVariant &dispatch(const std::vector<TileVariant> &variants,
                            int64_t rows) {
  for (const TileVariant &v : variants)
    if (v.maxRowsPerGroup > 0 && rows <= v.maxRowsPerGroup)
      return v;
  return variants.back();
}

} // namespace

// Unknown rows over 8 groups of N = 4096, K = 7168: today's heuristics give
// 64x128 one-warpgroup tiles up to 64 rows per group and 128x256 above, so
// the five buckets merge into two variants.
TEST(ChooseVariants, SmallAndLargeRows) {
  // Swap-AB tiles sized to each bucket's largest groups (+30 %), then
  // 128x256 above 64 rows per group.
  std::vector<TileVariant> variants =
      chooseVariants(problem(4096, 7168, 0, 8), kH100SMs);
  ASSERT_EQ(variants.size(), 4u);
  for (auto [i, bound, blockM] : {std::tuple<int, int64_t, int64_t>{0, 16, 24},
                                  {1, 32, 48},
                                  {2, 64, 88}}) {
    EXPECT_EQ(variants[i].maxRowsPerGroup, bound);
    EXPECT_TRUE(variants[i].tile.swapAB);
    EXPECT_EQ(variants[i].tile.blockM, blockM);
    EXPECT_EQ(variants[i].tile.blockN, 128);
  }
  EXPECT_EQ(variants[3].maxRowsPerGroup, 0);
  EXPECT_FALSE(variants[3].tile.swapAB);
  EXPECT_EQ(variants[3].tile.blockM, 128);
  EXPECT_EQ(variants[3].tile.blockN, 256);
  EXPECT_EQ(variants[3].tile.consumerWarpgroups, 2);
}

// rowsPerGroup in the summary is ignored: the variants are for unknown rows.
TEST(ChooseVariants, IgnoresTheSummarysRows) {
  std::vector<TileVariant> a =
      chooseVariants(problem(4096, 7168, 0, 8), kH100SMs);
  std::vector<TileVariant> b =
      chooseVariants(problem(4096, 7168, 16, 8), kH100SMs);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(sameTileChoice(a[i].tile, b[i].tile));
    EXPECT_EQ(a[i].maxRowsPerGroup, b[i].maxRowsPerGroup);
  }
}

// A cap (a masked op's Mmax) drops the buckets above it, and the last
// variant is chosen for the cap itself.
TEST(ChooseVariants, CappedRows) {
  std::vector<TileVariant> small =
      chooseVariants(problem(4096, 7168, 0, 8), kH100SMs, 32);
  // Swap-AB token tiles follow the rows: one for <= 16, one for the cap.
  ASSERT_EQ(small.size(), 2u);
  EXPECT_EQ(small[0].maxRowsPerGroup, 16);
  EXPECT_EQ(small[1].maxRowsPerGroup, 0);
  EXPECT_EQ(small[1].representativeRows, 32);
  EXPECT_TRUE(sameTileChoice(
      small[1].tile, chooseTileConfig(problem(4096, 7168, 32, 8), kH100SMs)));

  std::vector<TileVariant> mid =
      chooseVariants(problem(4096, 7168, 0, 8), kH100SMs, 100);
  ASSERT_EQ(mid.size(), 4u);
  EXPECT_EQ(mid[2].maxRowsPerGroup, 64);
  EXPECT_EQ(mid[3].maxRowsPerGroup, 0);
  EXPECT_EQ(mid[3].representativeRows, 100);
  EXPECT_TRUE(sameTileChoice(
      mid[3].tile, chooseTileConfig(problem(4096, 7168, 100, 8), kH100SMs)));
}

// Over the sweep: bounds increase and only the last variant is unbounded;
// neighbours differ (else they would have merged); and the variant the
// dispatch rule picks at every bucket bound is chooseTileConfig's choice
// for that bound, so variants follow chooseTileConfig whatever it returns
// (swap-AB tiles included, once it returns them).
TEST(ChooseVariants, FollowChooseTileConfig) {
  for (ProblemSummary p : sweep()) {
    for (int64_t cap : {int64_t(0), int64_t(48), int64_t(4096)}) {
      std::vector<TileVariant> variants = chooseVariants(p, kH100SMs, cap);
      ASSERT_FALSE(variants.empty()) << describe(p);
      EXPECT_EQ(variants.back().maxRowsPerGroup, 0) << describe(p);
      for (size_t i = 0; i + 1 < variants.size(); ++i) {
        EXPECT_GT(variants[i].maxRowsPerGroup, 0) << describe(p);
        if (i > 0)
          EXPECT_GT(variants[i].maxRowsPerGroup,
                    variants[i - 1].maxRowsPerGroup)
              << describe(p);
        EXPECT_FALSE(sameTileChoice(variants[i].tile, variants[i + 1].tile))
            << describe(p);
      }
      for (int64_t bound : variantRowBounds(p)) {
        if (cap > 0 && bound >= cap)
          break;
        ProblemSummary atBound = p;
        atBound.rowsPerGroup = bound;
        EXPECT_TRUE(sameTileChoice(dispatch(variants, bound).tile,
                                   chooseTileConfig(atBound, kH100SMs)))
            << describe(p) << " cap=" << cap << " rows=" << bound;
      }
      ProblemSummary many = p;
      many.rowsPerGroup = cap;
      EXPECT_TRUE(sameTileChoice(dispatch(variants, 1 << 20).tile,
                                 chooseTileConfig(many, kH100SMs)))
          << describe(p) << " cap=" << cap;
    }
  }
}

TEST(ChooseKRaggedTileConfig, NeverSwapsAB) {
  // K-ragged: rows are the fixed output rows per group (a weight
  // dimension), n the output columns; the tile program is never swapped.
  for (const ProblemSummary &p : sweep()) {
    if (p.elementBytes != 2 || !p.weightsNMajor)
      continue;
    TileChoice c = chooseKRaggedTileConfig(p, kH100SMs);
    EXPECT_FALSE(c.swapAB) << describe(p);
    EXPECT_EQ(c.blockM, 128) << describe(p);
    EXPECT_EQ(c.blockN % 64, 0) << describe(p);
    EXPECT_EQ(c.blockK, 64) << describe(p);
  }
}

TEST(ChooseKRaggedTileConfig, DeepGemmShape) {
  // (G, m, n) = (8, 4096, 7168): the wide tile, as for the forward ops.
  TileChoice c =
      chooseKRaggedTileConfig(problem(7168, 0, 4096, 8, 2, true), kH100SMs);
  EXPECT_EQ(c.blockM, 128);
  EXPECT_EQ(c.blockN, 256);
  EXPECT_GE(c.stages, 2);
}

TEST(ChooseKRaggedTileConfig, Fp8TransposedWithPerColumnScales) {
  // FP8 K-ragged (dy [N, T], x [K, T], 1x128 scales along the tokens): the
  // block-scaled width (192: product and sum in 2 x 96 registers), block_k
  // 128, and stages counted with a slot of 192 column scales.
  for (int64_t n : {2048, 7168}) {
    ProblemSummary p = problem(n, 0, 4096, 8, 1, false);
    p.blockScaled = p.perColumnScales = true;
    TileChoice c = chooseKRaggedTileConfig(p, kH100SMs);
    EXPECT_FALSE(c.swapAB);
    EXPECT_EQ(c.blockM, 128);
    EXPECT_EQ(c.blockN, 192) << "n=" << n;
    EXPECT_EQ(c.blockK, 128);
    // (128 + 192) x 128 bytes of operands, 640 + 896 of scale slots (a
    // header and block + 4 scales, each rounded up to 128 bytes).
    int64_t stageBytes = (128 + 192) * 128 + 640 + 896;
    EXPECT_LE(c.stages * stageBytes, kMaxSmemBytesPerCta - 1024);
    EXPECT_EQ(c.stages, 5);
  }
}

// A program with no swapped form (gated epilogue, gathered or scattered
// rows): small groups get 64-row tiles on one consumer warpgroup, larger
// ones the usual 128-row tiles; never swap-AB.
TEST(ChooseTileConfig, NoSwapABGivesSmallTilesToSmallGroups) {
  for (int64_t rows : {1, 16, 64}) {
    ProblemSummary p = problem(1536, 2048, rows, 128);
    p.noSwapAB = true;
    TileChoice c = chooseTileConfig(p, kH100SMs);
    EXPECT_FALSE(c.swapAB) << rows;
    EXPECT_EQ(c.blockM, 64) << rows;
    EXPECT_EQ(c.consumerWarpgroups, 1) << rows;
    // The same problem without the restriction takes swap-AB.
    p.noSwapAB = false;
    EXPECT_TRUE(chooseTileConfig(p, kH100SMs).swapAB) << rows;
  }
  ProblemSummary large = problem(1536, 2048, 512, 128);
  large.noSwapAB = true;
  TileChoice c = chooseTileConfig(large, kH100SMs);
  EXPECT_FALSE(c.swapAB);
  EXPECT_EQ(c.blockM, 128);
  EXPECT_EQ(c.consumerWarpgroups, 2);
}

// Interleaved gate/up blocks of B rows: every tile is one block (block_n =
// 2B) whatever N, K and the rows say; block_m follows the rows as for any
// program without swap-AB, even when the summary does not forbid swap-AB
// itself. Every choice passes the tile config verifier and fits the
// shared-memory budget.
TEST(ChooseTileConfig, InterleavedGateUpTilesAreOneBlock) {
  ConfigVerifier verifier;
  for (int64_t block = 8; block <= 128; block += 8) {
    for (int64_t rows : {0, 1, 16, 64, 65, 4096}) {
      ProblemSummary p = problem(2 * 2048, 7168, rows, 256);
      p.gateUpBlock = block;
      TileChoice c = chooseTileConfig(p, kH100SMs);
      std::string where = describe(p) + " block=" + std::to_string(block);
      EXPECT_EQ(c.blockN, 2 * block) << where;
      EXPECT_FALSE(c.swapAB) << where;
      bool small = rows > 0 && rows <= kSwapAbMaxRows;
      EXPECT_EQ(c.blockM, small ? 64 : 128) << where;
      EXPECT_EQ(c.consumerWarpgroups, small ? 1 : 2) << where;
      TileConfigAttr config = verifier.config(c);
      ASSERT_TRUE(config) << where << ": " << verifier.errors;
      EXPECT_LE(config.getPipelineSmemBytes(p.elementBytes),
                kMaxSmemBytesPerCta)
          << where;
    }
  }
}

// The variants of an interleaved weight differ in block_m only: each keeps
// the one block_n its weight layout allows.
TEST(ChooseVariants, InterleavedGateUpKeepBlockN) {
  ProblemSummary p = problem(2 * 2048, 7168, 0, 256);
  p.noSwapAB = true;
  p.gateUpBlock = 64;
  std::vector<TileVariant> variants = chooseVariants(p, kH100SMs);
  ASSERT_EQ(variants.size(), 2u);
  for (const TileVariant &v : variants)
    EXPECT_EQ(v.tile.blockN, 128);
  EXPECT_EQ(variants[0].tile.blockM, 64);
  EXPECT_EQ(variants[0].maxRowsPerGroup, kSwapAbMaxRows);
  EXPECT_EQ(variants[1].tile.blockM, 128);
  EXPECT_EQ(variants[1].maxRowsPerGroup, 0);
}
