//===- TileConfigHeuristics.cpp - tile config choice ----------------------===//

#include "ggemm/Dialect/GGemm/Transforms/TileConfigHeuristics.h"

#include "ggemm/Dialect/GGemm/IR/GGemm.h"

#include <algorithm>

using namespace mlir::ggemm;

int64_t mlir::ggemm::maxStagesThatFit(int64_t stageBytes, int64_t budgetBytes) {
  if (stageBytes <= 0)
    return 0;
  return budgetBytes / (stageBytes + 16);
}

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

TileChoice mlir::ggemm::chooseTileConfig(const ProblemSummary &problem,
                                         int64_t numSMs) {
  TileChoice choice;
  // One 128-byte swizzle row of K per stage.
  choice.blockK = 128 / problem.elementBytes;

  // Rows: few tokens per group waste most of a 128-row tile, so use one
  // consumer warpgroup and 64 rows when groups are known to be small.
  bool smallGroups = problem.rowsPerGroup > 0 && problem.rowsPerGroup <= 64;
  choice.blockM = smallGroups ? 64 : 128;
  choice.consumerWarpgroups = smallGroups ? 1 : 2;

  // Columns: among the widths wgmma and the layout allow, take the one whose
  // last wave keeps the most SMs busy; prefer the wider tile on ties (less
  // A re-reading).
  int64_t best = 128;
  // Without an expected row count assume many rows per group: 128x128
  // tiles are then the efficient default.
  if (problem.n > 0 && problem.rowsPerGroup > 0) {
    double bestScore = -1;
    for (int64_t bn : {256, 128, 64}) {
      if (problem.weightsNMajor && bn % 64 != 0)
        continue;
      if (bn > 64 && problem.n <= bn / 2)
        continue; // more than half the tile would be padding
      int64_t rowTiles = 1;
      if (problem.rowsPerGroup > 0)
        rowTiles = ceilDiv(problem.rowsPerGroup, choice.blockM) *
                   std::max<int64_t>(problem.numGroups, 1);
      int64_t tiles = rowTiles * ceilDiv(problem.n, bn);
      int64_t waves = ceilDiv(tiles, numSMs);
      double utilisation = double(tiles) / double(waves * numSMs);
      // A 256-wide tile doubles the accumulator registers: only worth it
      // when it does not cost utilisation.
      double score = utilisation + (bn == 128 ? 0.01 : 0.0);
      if (score > bestScore + 1e-9) {
        bestScore = score;
        best = bn;
      }
    }
  }
  choice.blockN = best;

  int64_t stageBytes =
      (choice.blockM + choice.blockN) * choice.blockK * problem.elementBytes;
  int64_t stages = std::min<int64_t>(
      6, maxStagesThatFit(stageBytes, kMaxSmemBytesPerCta - 1024));
  if (problem.k > 0)
    stages = std::min(stages,
                      std::max<int64_t>(2, ceilDiv(problem.k, choice.blockK)));
  choice.stages = std::max<int64_t>(stages, 1);
  return choice;
}
