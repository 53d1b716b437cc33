//===- TileConfigHeuristics.cpp - tile config choice ----------------------===//

#include "ggemm/Dialect/GGemm/Transforms/TileConfigHeuristics.h"

#include "ggemm/Dialect/GGemm/IR/GGemm.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <optional>

using namespace mlir::ggemm;

int64_t mlir::ggemm::maxStagesThatFit(int64_t stageBytes, int64_t budgetBytes) {
  if (stageBytes <= 0)
    return 0;
  return budgetBytes / (stageBytes + 16);
}

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A block-scaled 8-bit product of one group (a dense call): its rows are
/// exact, so its token tiles take no margin and its variants get a bucket of
/// 1-8 rows (bench/NOTES.md v26).
static bool isOneBlockScaledGroup(const ProblemSummary &problem) {
  return problem.blockScaled && problem.elementBytes == 1 &&
         problem.numGroups == 1;
}

/// Swap-AB for groups of at most kSwapAbMaxRows rows: the weight tile fills
/// wgmma's M (128 rows over two consumer warpgroups) and the token tile its
/// N, sized to the expected rows with room for +30 % (masked counts and
/// segment lengths vary around the expectation) in steps of 8 (of 16 above
/// 24 rows for INT8: the N values wgmma's s8 forms take).
static TileChoice chooseSwapAbConfig(const ProblemSummary &problem,
                                     int64_t numSMs) {
  TileChoice choice;
  choice.swapAB = true;
  choice.blockK = 128 / problem.elementBytes;
  // Block-scaled 8-bit products of one group (a dense call) know their
  // rows exactly: the token tile takes them without the margin. At 64
  // rows and N = 7168, 64 tokens ran 1.02-1.06x the 88 of the margin on an
  // H100 and 1.08-1.22x on an H200 (bench/NOTES.md v26); at 16, 16 against
  // 24 0.97-1.04x.
  bool exactRows = isOneBlockScaledGroup(problem);
  int64_t rows =
      exactRows ? problem.rowsPerGroup : (problem.rowsPerGroup * 13 + 9) / 10;
  if (problem.maxRowsPerGroup > 0)
    rows = std::min(rows, problem.maxRowsPerGroup);
  // FP8 activation scales arrive as one TMA box of block_m + 4 <= 256.
  int64_t maxRows = problem.blockScaled ? 248 : 256;
  choice.blockM = std::min<int64_t>(
      maxRows,
      llvm::alignTo(rows, problem.integerOperands && rows > 24 ? 16 : 8));
  bool narrow = problem.n > 0 && problem.n <= 64;
  choice.blockN = narrow ? 64 : 128;
  // 8-bit operands (FP8 with any scales, INT8) whose 128-row weight tiles
  // leave SMs idle (one group of decode tokens: N = 7168 makes 56 tiles):
  // 64 weight rows on one consumer warpgroup, twice the CTAs. On an H100
  // that ran 1.03-1.26x as fast at 1 and 16 tokens and 1.18-1.57x at 64
  // over DeepGEMM's dense N, K with block scales (one group; bench/NOTES.md
  // v17, decode tiles), and the other scale kinds and INT8 share the
  // weight stream (v17); with many tiles (masked decode over many groups)
  // each CTA's K block would carry half the weights, so 128 stay.
  if (!narrow && problem.elementBytes == 1 && problem.n > 0 &&
      problem.numGroups > 0 && problem.rowsPerGroup > 0) {
    int64_t tiles = ceilDiv(rows, choice.blockM) * problem.numGroups *
                    ceilDiv(problem.n, 128);
    if (tiles < numSMs)
      choice.blockN = 64;
  }
  choice.consumerWarpgroups = choice.blockN / 64;
  choice.rasterAlongM = false;
  return choice;
}

/// Two promoted K blocks per wgmma wait for block-scaled 8-bit tiles whose
/// consumer warpgroups hold at most 64 x 96 accumulator elements: the
/// swap-AB decode tiles of one warpgroup (64 weight rows by the tokens),
/// the 128-row tiles of at most 64 columns and the one-warpgroup 64-row
/// tiles of 16 or 32 (chooseNarrowDecodeTile's, measured with pairs). Over
/// DeepGEMM's dense N, K at 1-128 tokens that ran up to 1.16x as fast
/// (1.15-1.16x at 64 tokens on N = 2112, 1.05-1.13x at 64 on N = 4096) and
/// 0.98-1.03x on the rows it does not help, on an H100 and an H200
/// (bench/NOTES.md v23). Not for per-column (K-ragged) scales or gated tiles,
/// which were not measured, nor the swap-AB tiles of two warpgroups (many
/// groups of few rows), which ran level with and without (v23).
static void choosePromotePairs(const ProblemSummary &problem,
                               TileChoice &choice) {
  if (!problem.blockScaled || problem.elementBytes != 1 ||
      problem.perColumnScales || problem.gated || problem.gateUpBlock != 0)
    return;
  if (choice.swapAB)
    choice.promotePairs = choice.consumerWarpgroups == 1 &&
                          choice.blockN == 64 && choice.blockM <= 96;
  else
    choice.promotePairs =
        (choice.blockM == 128 && choice.blockN <= 64) ||
        (choice.blockM == 64 && choice.consumerWarpgroups == 1 &&
         choice.blockN <= 32);
}

static int64_t splitKFor(const ProblemSummary &problem, int64_t numSMs,
                         const TileChoice &choice);

/// 8-bit products (FP8 with any scales, INT8) of a known number of groups
/// of 33-128 rows whose tiles leave SMs idle (decode: one group, N = 2112 or
/// 4096): 64 token rows on one consumer warpgroup by 32 or 16 weight columns,
/// the most CTAs that still fit one wave, where that is more than `choice`
/// makes. On an H100, over DeepGEMM's dense N, K (bench/NOTES.md v25; L2
/// evicted by a read / by a write before each launch): at 64 rows 64x16
/// tiles (132 CTAs at N = 2112) ran 1.33x / 1.23x the swap-AB tile (33
/// CTAs) and 64x32 (128 at N = 4096) 1.19x / 1.12x; at 128 rows 64x32 (132
/// at N = 2112) 1.22x / 1.08x 128x32 (66). At 1 and 16 rows the swap-AB
/// tiles ran 1.16-1.67x as fast as these, so the rule starts above 32
/// rows. Two 64-row tiles read the same weight tile, at about the same
/// time, so through L2. With tensor-wise scales 64x32 at 128 rows,
/// N = 2112 ran 1.14x (FP8) and 1.21x (INT8) 128x32 (H100, v27). Not for
/// per-column scales, gated tiles or an e4m3 y (not measured; whole
/// 128-column blocks needed).
static void chooseNarrowDecodeTile(const ProblemSummary &problem,
                                   int64_t numSMs, TileChoice &choice) {
  if (problem.elementBytes != 1 || problem.perColumnScales || problem.gated ||
      problem.gateUpBlock != 0 || problem.fp8Output || problem.weightsNMajor ||
      problem.n <= 0 || problem.numGroups <= 0 || problem.rowsPerGroup <= 32 ||
      problem.rowsPerGroup > 128)
    return;
  // A tile's CTAs: one, or its split_k (block-scaled FP8: at 128 tokens
  // and N = 576, 36 tiles of 64x32 over 3 CTAs each ran 1.26x as fast as
  // 72 of 64x16 on one, on an H100; bench/NOTES.md v35).
  auto ctas = [&](const TileChoice &tile) {
    return ceilDiv(problem.rowsPerGroup, tile.blockM) * problem.numGroups *
           ceilDiv(problem.n, tile.blockN) * splitKFor(problem, numSMs, tile);
  };
  int64_t bestCtas = ctas(choice);
  std::optional<TileChoice> best;
  for (int64_t bn : {32, 16}) {
    TileChoice narrow;
    narrow.blockM = 64;
    narrow.blockN = bn;
    narrow.blockK = 128;
    narrow.consumerWarpgroups = 1;
    // Ties go to the narrow tile (measured against the others unsplit,
    // v25; not against a split swap-AB tile of as many CTAs).
    int64_t count = ctas(narrow);
    if (count <= numSMs && (count > bestCtas || (count == bestCtas && !best))) {
      bestCtas = count;
      best = narrow;
    }
  }
  if (!best)
    return;
  best->stages = chooseStages(problem, *best);
  choice = *best;
}

/// The split_k of `choice`'s tiles. Block-scaled 8-bit products of a known
/// number of groups and rows, static N and K, whose tiles leave SMs idle
/// (decode: one group of a few tokens at N = 576 or 2112 makes 9 or 33
/// tiles of 64 weight rows): each tile's K blocks split over the CTAs of a
/// cluster, the most that are resident at once, at most 8 (a portable
/// cluster), with at least 4 K blocks a CTA and the S - 1 partial tiles
/// within kMaxSplitKBytes of rank 0's shared memory. A cluster's CTAs share a
/// GPC, so the resident clusters of S CTAs are modelled as kGpcs x floor(SMs a
/// GPC / S) (H100: 8 GPCs of 16-18 SMs): on an H100 33 clusters of 4 (132 CTAs)
/// ran 1.2x as long as 33 of 3, and 0.85x as fast as no split. Measured on an
/// H100 (bench/NOTES.md v35): N = 576, K = 7168 at 1-16 tokens (9 tiles, 8 CTAs
/// each) 1.5x as fast as no split, at 64 (36 tiles of 64 x 16, 3 each) 1.3x; N
/// = 2112 at one token (33 tiles, 3 each) 1.13x; N = 4096 (64 tiles, 2 each)
/// level. Not for per-column scales or gated tiles (not measured).
static int64_t splitKFor(const ProblemSummary &problem, int64_t numSMs,
                         const TileChoice &choice) {
  if (!problem.blockScaled || problem.elementBytes != 1 ||
      problem.perColumnScales || problem.gated || problem.gateUpBlock != 0 ||
      problem.n <= 0 || problem.k <= 0 || problem.numGroups <= 0 ||
      problem.rowsPerGroup <= 0)
    return 1;
  int64_t tiles = ceilDiv(problem.rowsPerGroup, choice.blockM) *
                  problem.numGroups * ceilDiv(problem.n, choice.blockN);
  int64_t kBlocks = ceilDiv(problem.k, choice.blockK);
  int64_t partialBytes = choice.blockM * choice.blockN * 4;
  int64_t smsPerGpc = numSMs / kGpcs;
  for (int64_t splitK = 8; splitK >= 2; --splitK)
    if (tiles <= kGpcs * (smsPerGpc / splitK) && kBlocks >= 4 * splitK &&
        (splitK - 1) * partialBytes <= kMaxSplitKBytes)
      return splitK;
  return 1;
}

static TileChoice chooseTileShape(const ProblemSummary &problem,
                                  int64_t numSMs);

TileChoice mlir::ggemm::chooseTileConfig(const ProblemSummary &problem,
                                         int64_t numSMs) {
  TileChoice choice = chooseTileShape(problem, numSMs);
  chooseNarrowDecodeTile(problem, numSMs, choice);
  choosePromotePairs(problem, choice);
  choice.splitK = splitKFor(problem, numSMs, choice);
  return choice;
}

/// Whether a block-scaled product's 128x192 tiles, as 192x128 over three
/// consumer warpgroups, take more modelled time than as they are: waves of
/// 192x128 tiles against waves of 128x192 tiles, each 1.08x as long (the
/// three-warpgroup tile ran 1.02-1.15x as fast on large shapes, where
/// waves do not count; bench/NOTES.md v18). False where the rows or groups
/// are unknown.
static bool threeWarpgroupsTakeMoreTime(const ProblemSummary &problem,
                                        int64_t numSMs) {
  if (problem.rowsPerGroup <= 0 || problem.numGroups <= 0 || problem.n <= 0)
    return false;
  auto waves = [&](int64_t blockM, int64_t blockN) {
    return ceilDiv(ceilDiv(problem.rowsPerGroup, blockM) * problem.numGroups *
                       ceilDiv(problem.n, blockN),
                   numSMs);
  };
  return double(waves(192, 128)) > 1.08 * double(waves(128, 192));
}

static TileChoice chooseTileShape(const ProblemSummary &problem,
                                  int64_t numSMs) {
  bool smallGroups =
      problem.rowsPerGroup > 0 && problem.rowsPerGroup <= kSwapAbMaxRows;
  if (smallGroups && !problem.noSwapAB && problem.gateUpBlock == 0) {
    TileChoice choice = chooseSwapAbConfig(problem, numSMs);
    choice.stages = chooseStages(problem, choice);
    return choice;
  }
  TileChoice choice;
  // One 128-byte swizzle row of K per stage.
  choice.blockK = 128 / problem.elementBytes;

  // Rows: 128 over two consumer warpgroups (small groups took swap-AB
  // above); 64 on one for small groups of a program that cannot be
  // swapped.
  choice.blockM = smallGroups ? 64 : 128;
  choice.consumerWarpgroups = smallGroups ? 1 : 2;

  // Columns: pick the width with the least modelled time, waves x (time of
  // one tile). A tile's time grows with its width over the kernel's measured
  // efficiency at that width (bench/NOTES.md: on an H200, 128x256 tiles run
  // at ~580 TFLOP/s, 128x128 at ~490, i.e. 0.84 of it; narrower tiles read
  // relatively more shared memory per flop). With unknown rows the number of
  // waves is taken as proportional to the number of tiles.
  // FP8 block-scaled tiles (at most 192 columns: 2 x 96 accumulator
  // registers per consumer thread): on an H100 128x192 tiles ran 1.11x as
  // fast as 128x128 on DeepGEMM's grouped shapes without column padding
  // (N = 6144; bench/NOTES.md, v13).
  // Block-scaled FP8 at 32 columns: at M = 128 in one group an H100 ran
  // 128x32 tiles 1.17x (N = 4096) and 1.22x (N = 2112) as fast as 128x64,
  // whose 64 and 33 CTAs left SMs idle, and 0.78x at N = 7168, where 32
  // columns take two waves (bench/NOTES.md v17, decode tiles): 0.45 makes
  // one wave of 32 beat one wave of 64 and lose to it over two.
  auto efficiency = [&](int64_t bn) {
    if (bn == 192)
      return 0.93;
    if (bn == 32)
      return 0.45;
    return bn >= 256 ? 1.0 : bn >= 128 ? 0.84 : 0.6;
  };
  // Unknown N (a dynamic-shape kernel): the widest tile, which runs at the
  // highest efficiency on large problems (bench/NOTES.md).
  int64_t best = problem.blockScaled ? 192 : 256;
  if (problem.gateUpBlock > 0) {
    // Interleaved gate/up blocks: a tile is one block of gate and up rows,
    // the layout's choice (the verifier holds 2B to wgmma's N range).
    best = 2 * problem.gateUpBlock;
  } else if (problem.n > 0) {
    double bestCost = 0;
    bool found = false;
    // 32 columns only where waves are counted (known rows and groups) and
    // only for 8-bit operands (FP8, INT8), the kinds measured (v17).
    bool countsWaves = problem.rowsPerGroup > 0 && problem.numGroups > 0;
    for (int64_t bn : {256, 192, 128, 64, 32}) {
      if (bn == 32 && !(problem.elementBytes == 1 && countsWaves))
        continue;
      // Block scales: 256 columns would need 2 x 128 accumulator registers
      // per consumer thread (product and sum), more than setmaxnreg's 240
      // leave room for; 192 fit (2 x 96). A gated tile's halves would be
      // 96 columns, which no weight scale block layout lines up with.
      if (problem.blockScaled && (bn > 192 || (bn == 192 && problem.gated)))
        continue;
      // 16-bit operands have 256 (measured best) and no measurement at 192.
      // 8-bit ones without block scales (tensor-wise or per-row FP8, INT8)
      // take 192 where it pads less than 256: at N = 2112 (11 tiles of
      // 192, 9 of 256 with a quarter of the last one empty) 128x192 ran
      // 1.29x as fast as 128x256 at M = 4096 on an H100, FP8 and INT8
      // alike, with four stages (bench/NOTES.md v34); at N = 4096, where
      // 256 divides N, the model keeps 256 (128x192 ran 0.73-0.76x there).
      // Not for gated tiles (not measured).
      if (!problem.blockScaled && bn == 192 &&
          (problem.elementBytes != 1 || problem.gated))
        continue;
      // Groups of a few hundred rows in an unknown number of groups: at
      // 128 rows in one group, 128x192 FP8 tiles were 8-15 % slower than
      // 128x128 ones on an H100 (fewer CTAs than SMs, each longer), at many
      // groups they would be faster; the model cannot tell which, so the
      // bounded row buckets keep 128 and only the unbounded one (large
      // groups) and programs with a known group count take 192.
      if (bn == 192 && problem.rowsPerGroup > 0 && problem.numGroups <= 0)
        continue;
      if (problem.weightsNMajor && bn % 64 != 0)
        continue;
      // An e4m3 y: whole 128-column blocks of y per tile (half the
      // tile's columns when gated).
      if (problem.fp8Output && (problem.gated ? bn / 2 : bn) % 128 != 0)
        continue;
      if (bn > 64 && problem.n <= bn / 2)
        continue; // more than half the tile would be padding
      double colTiles = double(ceilDiv(problem.n, bn));
      double waves;
      if (countsWaves) {
        int64_t tiles = ceilDiv(problem.rowsPerGroup, choice.blockM) *
                        std::max<int64_t>(problem.numGroups, 1) *
                        ceilDiv(problem.n, bn);
        waves = double(ceilDiv(tiles, numSMs));
      } else {
        // Unknown rows or groups (a dynamic group count): wave
        // quantisation cannot be modelled; the tile count stands in.
        waves = colTiles;
      }
      double cost = waves * double(bn) / efficiency(bn);
      // Ties go to the wider tile, listed first (less re-reading of A).
      if (!found || cost < bestCost * (1 - 1e-9)) {
        bestCost = cost;
        best = bn;
        found = true;
      }
    }
  }
  choice.blockN = best;
  // Two-warpgroup tiles walk along m: on the H200 the 128x256 kernel ran as
  // fast or up to 9% faster that way on every large shape measured
  // (bench/results/2026-11-22-bench-v4.md), the weight tile of a wave being
  // shared by its CTAs.
  choice.rasterAlongM = true;
  // Block-scaled FP8 on large groups: the 6.3 MFLOP of a 128x192 K block
  // as 192x128 over three consumer warpgroups instead (64 x 128 each,
  // product and sum 2 x 64 registers of the 160 each gets), so that a
  // warpgroup's promotion overlaps the other two's wgmma: 1.02-1.15x
  // 128x192 on an H100 over the benchmark's large dense and grouped shapes
  // (bench/NOTES.md v18). Four stages leave room for the staged epilogue's
  // boxes of three warpgroups. Along n, as measured (along m, the tile
  // walk's extra live values spill 64 bytes from the consumers' 160
  // registers). Not for per-column (K-ragged) scales or a gated tile,
  // which were not measured. Where waves are counted (known rows and
  // groups) and the 192-row tiles would take more of them than 128x192
  // costs at that speed, 128x192 stays: one group of 128 rows at N = 24576
  // makes 128 tiles of 128x192 (one wave) and 192 of 192x128 (two).
  if (problem.blockScaled && best == 192 && !problem.perColumnScales &&
      !problem.gated && choice.blockM == 128 &&
      !threeWarpgroupsTakeMoreTime(problem, numSMs)) {
    choice.blockM = 192;
    choice.blockN = 128;
    choice.consumerWarpgroups = 3;
    choice.rasterAlongM = false;
    choice.stages = std::min<int64_t>(4, chooseStages(problem, choice));
    // Along n, a wave of 132 CTAs covers about 132 / (N / 128) row tiles
    // and every column tile, so each wave reads a group's whole weight
    // matrix; when that is larger than L2 holds, each wave reads it from
    // DRAM again (ncu, H100: 2.7x and 3.2x the operand and output bytes at
    // M = 4096, N = 24576, K = 1536 and G = 8, N = 4096, K = 7168). Bands
    // of 4 row tiles, walked across the band first, make a wave 4 row
    // tiles by ~33 column tiles. Timed against the plain walk in one H100
    // run: 1.03-1.10x where a group's weights are 37-117 MB (N x K at
    // N = 24576, K = 1536; N = 6144, K = 7168; N = 7168, K = 16384),
    // 0.96-1.02x where they are 8-29 MB (bench/NOTES.md v38). So from
    // 32 MiB of weights a group, when N and K are known.
    if (problem.n > 0 && problem.k > 0 &&
        problem.n * problem.k * problem.elementBytes >=
            kLargeWeightSwizzleBytes) {
      choice.swizzle = kLargeWeightSwizzle;
      choice.swizzleMinTiles = 0;
    }
    return choice;
  }
  choice.stages = chooseStages(problem, choice);
  // 8-bit 128x192 tiles without block scales: four stages, leaving room
  // for two store boxes a consumer warpgroup (five left one): 1.09-1.10x
  // as fast at M = 4096, N = 2112 on an H100, FP8 and INT8 (NOTES v34).
  if (!problem.blockScaled && problem.elementBytes == 1 && best == 192)
    choice.stages = std::min<int64_t>(4, choice.stages);
  // Large groups walk their 128x256 tiles in bands of 4 column tiles, so
  // that a wave of CTAs shares x tiles as well as weight tiles: on an H100
  // that ran 1.02-1.05x the plain walk on groups of ~8192 rows (64 row
  // tiles) and 0.94-0.99x on groups of 4096 rows or fewer at N >= 6144
  // (32 row tiles and less; H200: 1.02x and 0.98-1.01x), over the large-M
  // benchmark's segments (bench/NOTES.md v20). So the bands apply only to
  // groups of at least 48 row tiles (6144 rows), decided per group on the
  // device: 1.02-1.07x the plain walk on the G = 4 shapes and level on the
  // others in two H100 runs. The walk is the same for every row mapping
  // and weight layout; not for the MoE programs (gathered or scattered
  // rows, gated), which were not measured.
  if (choice.blockM == 128 && choice.blockN == 256 && choice.rasterAlongM &&
      problem.elementBytes == 2 && !problem.noSwapAB && !problem.gated &&
      problem.gateUpBlock == 0) {
    choice.swizzle = kLargeGroupSwizzle;
    choice.swizzleMinTiles = kLargeGroupSwizzleMinTiles;
  }
  return choice;
}

int64_t mlir::ggemm::chooseStages(const ProblemSummary &problem,
                                  const TileChoice &choice) {
  int64_t stageBytes =
      (choice.blockM + choice.blockN) * choice.blockK * problem.elementBytes;
  // The block's scales: one f32 per row, and the weight scales (or one per
  // column), each in a 128-byte-aligned slot.
  auto scalesSlot = [](int64_t count) {
    return llvm::alignTo(getScalesSlotBytes(count), kScalesSlotAlignment);
  };
  if (problem.blockScaled)
    stageBytes +=
        scalesSlot(choice.blockM) +
        scalesSlot(problem.perColumnScales ? choice.blockN : /*weight*/ 1);
  // At most 6 stages, 8 for 8-bit operands (FP8, INT8): block-scaled FP8's
  // narrow decode tiles (128x64, 128x32, swap-AB with 64 weight rows,
  // 11-25 KB a stage) ran 1.00-1.10x as fast with 8 on an H100
  // (bench/NOTES.md v17); large tiles fit 4 to 6 either way.
  int64_t maxStages = problem.elementBytes == 1 ? 8 : 6;
  int64_t stages = std::min<int64_t>(
      maxStages, maxStagesThatFit(stageBytes, kMaxSmemBytesPerCta - 1024));
  if (problem.k > 0)
    stages = std::min(stages,
                      std::max<int64_t>(2, ceilDiv(problem.k, choice.blockK)));
  return std::max<int64_t>(stages, 1);
}

bool mlir::ggemm::sameTileChoice(const TileChoice &a, const TileChoice &b) {
  return a.blockM == b.blockM && a.blockN == b.blockN && a.blockK == b.blockK &&
         a.stages == b.stages && a.consumerWarpgroups == b.consumerWarpgroups &&
         a.rasterAlongM == b.rasterAlongM && a.swapAB == b.swapAB &&
         a.swizzle == b.swizzle && a.swizzleMinTiles == b.swizzleMinTiles &&
         a.promotePairs == b.promotePairs && a.splitK == b.splitK;
}

llvm::ArrayRef<int64_t>
mlir::ggemm::variantRowBounds(const ProblemSummary &problem) {
  // 1-8 rows in one block-scaled 8-bit group: 8-token swap-AB tiles ran
  // 1.06-1.11x the 16-row bucket's 24 at one token on an H100 and
  // 1.06-1.17x on an H200, over DeepGEMM's dense N, K (bench/NOTES.md v26).
  if (isOneBlockScaledGroup(problem))
    return kDecodeVariantRowBounds;
  return kVariantRowBounds;
}

std::vector<TileVariant>
mlir::ggemm::chooseVariants(const ProblemSummary &problem, int64_t numSMs,
                            int64_t maxRowsPerGroup) {
  std::vector<TileVariant> variants;
  int64_t lower = 0;
  auto addBucket = [&](int64_t bound, int64_t representative) {
    ProblemSummary bucket = problem;
    bucket.rowsPerGroup = representative;
    TileChoice choice = chooseTileConfig(bucket, numSMs);
    if (!variants.empty() && sameTileChoice(variants.back().tile, choice)) {
      variants.back().maxRowsPerGroup = bound;
      variants.back().representativeRows = representative;
    } else
      variants.push_back({choice, bound, representative});
  };
  for (int64_t bound : variantRowBounds(problem)) {
    if (maxRowsPerGroup > 0 && bound >= maxRowsPerGroup) {
      // The cap ends the list: its bucket is the last, unbounded one.
      addBucket(0, maxRowsPerGroup);
      return variants;
    }
    addBucket(bound, bound);
    lower = bound;
  }
  addBucket(0, maxRowsPerGroup > lower ? maxRowsPerGroup : 0);
  return variants;
}

TileChoice mlir::ggemm::chooseKRaggedTileConfig(ProblemSummary problem,
                                                int64_t numSMs) {
  problem.k = 0; // each group's rows: unknown here
  if (problem.rowsPerGroup > 0 && problem.rowsPerGroup <= kSwapAbMaxRows)
    problem.rowsPerGroup = 0;
  TileChoice choice = chooseTileConfig(problem, numSMs);
  // Not measured for the K-ragged tile walk: the plain raster, one K block
  // per wait, no split-K (whose K loop the K-ragged program does not have).
  choice.swizzle = 1;
  choice.swizzleMinTiles = 0;
  choice.promotePairs = false;
  choice.splitK = 1;
  return choice;
}
