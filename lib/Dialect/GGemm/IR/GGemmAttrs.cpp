//===- GGemmAttrs.cpp - ggemm attributes ----------------------------------===//

#include "ggemm/Dialect/GGemm/IR/GGemm.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::ggemm;

#include "ggemm/Dialect/GGemm/IR/GGemmEnums.cpp.inc"

/// The optional regions of #ggemm.ring_layout, each printed only when
/// present: `, staging_offset = O, staging_bytes = B` and `, split_k_offset
/// = O, split_k_bytes = B` (then `, split_k_barriers = C` when the buffer
/// overlays the ring), in that order.
static ParseResult
parseRingLayoutRegions(AsmParser &parser, int64_t &stagingOffset,
                       int64_t &stagingBytes, int64_t &splitKOffset,
                       int64_t &splitKBytes, int64_t &splitKBarriers) {
  stagingOffset = splitKOffset = splitKBarriers = -1;
  stagingBytes = splitKBytes = 0;
  auto field = [&](StringRef name, int64_t &value) {
    return failure(parser.parseKeyword(name) || parser.parseEqual() ||
                   parser.parseInteger(value));
  };
  bool staging = false, splitK = false;
  while (succeeded(parser.parseOptionalComma())) {
    if (!staging && !splitK &&
        succeeded(parser.parseOptionalKeyword("staging_offset"))) {
      staging = true;
      if (parser.parseEqual() || parser.parseInteger(stagingOffset) ||
          parser.parseComma() || failed(field("staging_bytes", stagingBytes)))
        return failure();
      continue;
    }
    if (!splitK) {
      splitK = true;
      if (failed(field("split_k_offset", splitKOffset)) ||
          parser.parseComma() || failed(field("split_k_bytes", splitKBytes)))
        return failure();
      if (failed(parser.parseOptionalComma()))
        return success();
      if (failed(parser.parseOptionalKeyword("split_k_barriers")))
        return parser.emitError(parser.getCurrentLocation(),
                                "expected '>' or split_k_barriers after "
                                "split_k_bytes");
      if (parser.parseEqual() || parser.parseInteger(splitKBarriers))
        return failure();
      continue;
    }
    return parser.emitError(parser.getCurrentLocation(),
                            "expected '>' after split_k_barriers");
  }
  return success();
}

static void printRingLayoutRegions(AsmPrinter &printer, int64_t stagingOffset,
                                   int64_t stagingBytes, int64_t splitKOffset,
                                   int64_t splitKBytes,
                                   int64_t splitKBarriers) {
  if (stagingOffset != -1 || stagingBytes != 0)
    printer << ", staging_offset = " << stagingOffset
            << ", staging_bytes = " << stagingBytes;
  if (splitKOffset != -1 || splitKBytes != 0 || splitKBarriers != -1)
    printer << ", split_k_offset = " << splitKOffset
            << ", split_k_bytes = " << splitKBytes;
  if (splitKBarriers != -1)
    printer << ", split_k_barriers = " << splitKBarriers;
}

#define GET_ATTRDEF_CLASSES
#include "ggemm/Dialect/GGemm/IR/GGemmAttrs.cpp.inc"

void GGemmDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ggemm/Dialect/GGemm/IR/GGemmAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// ScaleBlockAttr
//===----------------------------------------------------------------------===//

Attribute ScaleBlockAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  int64_t rows = 0, cols = 0;
  if (succeeded(parser.parseOptionalKeyword("tensor"))) {
    rows = cols = 0;
  } else if (succeeded(parser.parseOptionalKeyword("per_row"))) {
    rows = 1;
    cols = 0;
  } else {
    SmallVector<int64_t> dims;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseDimensionList(dims, /*allowDynamic=*/false,
                                  /*withTrailingX=*/false))
      return {};
    if (dims.size() != 2) {
      InFlightDiagnostic diag = parser.emitError(loc)
                                << "expected `tensor`, `per_row` or `RxC`";
      // An unknown keyword parses as an empty dimension list.
      if (!dims.empty())
        diag << ", got " << dims.size() << " dimensions";
      return {};
    }
    rows = dims[0];
    cols = dims[1];
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ScaleBlockAttr>(parser.getContext(), rows, cols);
}

void ScaleBlockAttr::print(AsmPrinter &printer) const {
  printer << "<";
  if (isTensorWise())
    printer << "tensor";
  else if (isPerRow())
    printer << "per_row";
  else
    printer << getRows() << "x" << getCols();
  printer << ">";
}

LogicalResult
ScaleBlockAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t rows, int64_t cols) {
  bool tensorWise = rows == 0 && cols == 0;
  bool perRow = rows == 1 && cols == 0;
  bool block = rows > 0 && cols > 0;
  if (!tensorWise && !perRow && !block)
    return emitError() << "expects `tensor`, `per_row` or a positive RxC "
                          "block, got rows = "
                       << rows << ", cols = " << cols;
  if (block && cols % 32 != 0)
    return emitError() << "expects the K extent of a scale block (" << cols
                       << ") to be a multiple of 32 (one FP8 wgmma k-step)";
  return success();
}

//===----------------------------------------------------------------------===//
// EpilogueAttr
//===----------------------------------------------------------------------===//

LogicalResult EpilogueAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   Activation activation, bool, bool,
                                   int64_t gateUpBlock) {
  if (gateUpBlock == 0)
    return success();
  if (activation != Activation::swiglu)
    return emitError() << "expects gate_up_block only with activation = "
                          "swiglu (it orders a gated weight's rows), got "
                          "activation = "
                       << stringifyActivation(activation);
  // The tile holds 2B weight rows (block_n, at most wgmma's N of 256), and
  // the consumers pair gate column j with up column j + B within whole
  // 8-column fragments.
  if (gateUpBlock < 0 || gateUpBlock % 8 != 0 || gateUpBlock > 128)
    return emitError() << "expects gate_up_block to be 0 or a positive "
                          "multiple of 8 of at most 128 (a tile of 2 x "
                          "gate_up_block <= 256 weight rows), got "
                       << gateUpBlock;
  return success();
}

//===----------------------------------------------------------------------===//
// TileConfigAttr
//===----------------------------------------------------------------------===//

LogicalResult
TileConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t blockM, int64_t blockN, int64_t blockK,
                       int64_t stages, int64_t consumerWarpgroups, bool swapAB,
                       int64_t clusterM, int64_t clusterN, RasterOrder,
                       bool pingpong, int64_t swizzle, int64_t swizzleMinTiles,
                       bool promotePairs, int64_t splitK, bool splitKTail) {
  if (consumerWarpgroups < 1 || consumerWarpgroups > 3)
    return emitError() << "expects 1 to 3 consumer warpgroups, got "
                       << consumerWarpgroups;
  if (promotePairs && pingpong)
    return emitError() << "expects promote_pairs without pingpong (the "
                          "ping-pong consumers take one K block per step)";
  if (pingpong) {
    // Two warpgroups on alternate tiles, each one or two whole m64 row
    // blocks.
    if (consumerWarpgroups != 2)
      return emitError() << "expects 2 consumer warpgroups with pingpong (they "
                            "take alternate tiles), got "
                         << consumerWarpgroups;
    if (swapAB)
      return emitError() << "expects no swap_ab with pingpong";
    if (blockM != 64 && blockM != 128)
      return emitError() << "expects block_m = 64 or 128 with pingpong (each "
                            "consumer warpgroup computes a whole tile, one or "
                            "two m64 row blocks), got "
                         << blockM;
  }
  if (!swapAB) {
    // Each consumer warpgroup owns whole m64 wgmma row blocks (checked
    // above for ping-pong, whose warpgroups own whole tiles).
    if (!pingpong && (blockM <= 0 || blockM % (64 * consumerWarpgroups) != 0 ||
                      blockM > 256))
      return emitError() << "expects block_m to be a multiple of "
                         << 64 * consumerWarpgroups
                         << " (64 rows per consumer warpgroup) and at most "
                            "256, got "
                         << blockM;
    if (blockN < 8 || blockN > 256 || blockN % 8 != 0)
      return emitError() << "expects block_n in [8, 256] and a multiple of 8 "
                            "(a wgmma N), got "
                         << blockN;
  } else {
    // With swap-AB the weight tile fills wgmma's M and tokens its N.
    if (blockN <= 0 || blockN % (64 * consumerWarpgroups) != 0 || blockN > 256)
      return emitError() << "expects block_n to be a multiple of "
                         << 64 * consumerWarpgroups
                         << " with swap_ab (weights fill wgmma's M), got "
                         << blockN;
    if (blockM < 8 || blockM > 256 || blockM % 8 != 0)
      return emitError() << "expects block_m in [8, 256] and a multiple of 8 "
                            "with swap_ab (tokens fill wgmma's N), got "
                         << blockM;
  }
  if (blockK <= 0 || blockK % 16 != 0 || blockK > 256)
    return emitError() << "expects block_k to be a positive multiple of 16 "
                          "and at most 256, got "
                       << blockK;
  if (stages < 1 || stages > 8)
    return emitError() << "expects 1 to 8 pipeline stages, got " << stages;
  auto isClusterDim = [](int64_t d) { return d == 1 || d == 2 || d == 4; };
  if (!isClusterDim(clusterM) || !isClusterDim(clusterN) ||
      clusterM * clusterN > 8)
    return emitError() << "expects cluster dimensions in {1, 2, 4} with at "
                          "most 8 CTAs, got "
                       << clusterM << "x" << clusterN;
  if (swizzle < 1 || swizzle > 64)
    return emitError() << "expects swizzle in [1, 64] (tiles per raster band), "
                          "got "
                       << swizzle;
  if (swizzleMinTiles < 0 || swizzleMinTiles > (1 << 20))
    return emitError() << "expects swizzle_min_tiles in [0, 2^20], got "
                       << swizzleMinTiles;
  if (swizzleMinTiles > 0 && swizzle == 1)
    return emitError() << "expects swizzle > 1 with swizzle_min_tiles (it "
                          "says which groups are walked in bands), got "
                          "swizzle = 1";
  if (splitK < 1 || splitK > 8)
    return emitError() << "expects split_k in [1, 8] (the CTAs of a portable "
                          "cluster that share a tile's K blocks), got "
                       << splitK;
  if (splitK > 1 && (clusterM > 1 || clusterN > 1 || pingpong))
    return emitError() << "expects split_k = 1 with cluster_m, cluster_n > 1 "
                          "or pingpong (a split-K cluster's CTAs all compute "
                          "one tile), got split_k = "
                       << splitK;
  if (splitKTail && splitK < 2)
    return emitError() << "expects split_k > 1 with split_k_tail (the CTAs "
                          "that split each tile of the last wave), got "
                          "split_k = "
                       << splitK;
  return success();
}

int64_t TileConfigAttr::getPipelineSmemBytes(int64_t elementBytes) const {
  int64_t stageBytes = (getBlockM() + getBlockN()) * getBlockK() * elementBytes;
  // Two 8-byte mbarriers (full, empty) per stage.
  return getStages() * stageBytes + getStages() * 16;
}

//===----------------------------------------------------------------------===//
// RingLayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult
RingLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t stages, ArrayRef<int64_t> offsets,
                       ArrayRef<int64_t> stageBytes, int64_t barrierOffset,
                       int64_t smemBytes, int64_t stagingOffset,
                       int64_t stagingBytes, int64_t splitKOffset,
                       int64_t splitKBytes, int64_t splitKBarriers) {
  if (stages < 1 || stages > 8)
    return emitError() << "expects 1 to 8 stages, got " << stages;
  if (offsets.empty() || offsets.size() != stageBytes.size())
    return emitError() << "expects one offset and one stage size per buffer, "
                          "got "
                       << offsets.size() << " offsets and " << stageBytes.size()
                       << " stage sizes";
  for (auto [offset, bytes] : llvm::zip(offsets, stageBytes)) {
    if (bytes <= 0 || offset < 0)
      return emitError() << "expects positive stage sizes and non-negative "
                            "offsets, got "
                         << bytes << " bytes at offset " << offset;
    // TMA writes shared memory at 128-byte-aligned addresses; slots of
    // swizzled tiles need 1024 (checked by ggemm.create_ring, which knows
    // the entries).
    if (bytes % 128 != 0 || offset % 128 != 0)
      return emitError() << "expects 128-byte aligned stage sizes and "
                            "offsets (TMA destinations), got "
                         << bytes << " bytes at offset " << offset;
  }
  if (barrierOffset < 0 || barrierOffset % 8 != 0)
    return emitError() << "expects a non-negative, 8-byte aligned mbarrier "
                          "offset, got "
                       << barrierOffset;
  if (smemBytes > kMaxSmemBytesPerCta)
    return emitError() << "expects at most " << kMaxSmemBytesPerCta
                       << " bytes of shared memory per CTA, got " << smemBytes;

  // The buffers and the full/empty mbarrier pairs, in any order, must lie
  // inside smem_bytes without overlapping.
  struct Region {
    std::string name;
    int64_t begin, bytesPerStage, end;
  };
  SmallVector<Region> regions;
  for (auto [index, offset, bytes] : llvm::enumerate(offsets, stageBytes))
    regions.push_back({"buffer " + std::to_string(index), offset, bytes, 0});
  regions.push_back({"the mbarriers", barrierOffset, 16, 0});
  if (stagingOffset != -1 || stagingBytes != 0) {
    // Swizzled store boxes, as swizzled tiles, start on 1024-byte
    // boundaries.
    if (stagingOffset < 0 || stagingOffset % 1024 != 0 || stagingBytes <= 0 ||
        stagingBytes % 1024 != 0)
      return emitError() << "expects a 1024-byte aligned staging_offset and a "
                            "positive multiple of 1024 staging_bytes, got "
                         << stagingBytes << " bytes at offset "
                         << stagingOffset;
    // One "stage" of all the staging bytes.
    regions.push_back({"the store staging", stagingOffset, stagingBytes, 0});
  }
  bool overlay = splitKBarriers != -1;
  if (splitKOffset != -1 || splitKBytes != 0 || overlay) {
    // Partials stored 16 bytes a thread at a time, then two mbarriers
    // (elsewhere, when the partials overlay the ring).
    int64_t least = overlay ? 0 : 16;
    if (splitKOffset < 0 || splitKOffset % 16 != 0 || splitKBytes <= least ||
        splitKBytes % 16 != 0)
      return emitError() << "expects a 16-byte aligned split_k_offset and a "
                            "multiple of 16 split_k_bytes above "
                         << least << ", got " << splitKBytes
                         << " bytes at offset " << splitKOffset;
    if (!overlay) {
      regions.push_back({"the split-K buffer", splitKOffset, splitKBytes, 0});
    } else {
      // The partials overlay the ring's tile buffers; only the mbarriers
      // need a place of their own.
      if (splitKBarriers < 0 || splitKBarriers % 8 != 0)
        return emitError() << "expects a non-negative, 8-byte aligned "
                              "split_k_barriers, got "
                           << splitKBarriers;
      int64_t ringBegin = offsets.front(), ringEnd = 0;
      for (auto [offset, bytes] : llvm::zip(offsets, stageBytes)) {
        ringBegin = std::min(ringBegin, offset);
        std::optional<int64_t> end = llvm::checkedMulAdd(stages, bytes, offset);
        ringEnd = std::max(ringEnd, end.value_or(INT64_MAX));
      }
      std::optional<int64_t> end = llvm::checkedAdd(splitKOffset, splitKBytes);
      if (splitKOffset < ringBegin || !end || *end > ringEnd)
        return emitError() << "expects the split-K buffer [" << splitKOffset
                           << ", " << splitKOffset + splitKBytes
                           << ") to lie within the ring's tile buffers ["
                           << ringBegin << ", " << ringEnd
                           << ") it overlays (split_k_barriers set)";
      // Two mbarriers, then a word of the lowering's (32 bytes).
      regions.push_back({"the split-K mbarriers", splitKBarriers, 32, 0});
    }
  }
  for (Region &region : regions) {
    // Huge user-written values must not overflow.
    int64_t times = region.name == "the store staging" ||
                            region.name == "the split-K buffer" ||
                            region.name == "the split-K mbarriers"
                        ? 1
                        : stages;
    std::optional<int64_t> end =
        llvm::checkedMulAdd(times, region.bytesPerStage, region.begin);
    if (!end || *end > smemBytes)
      return emitError() << "expects " << region.name << " (" << times
                         << " stages of " << region.bytesPerStage
                         << " bytes at offset " << region.begin
                         << ") to end within smem_bytes (" << smemBytes << ")";
    region.end = *end;
  }
  for (size_t i = 0; i < regions.size(); ++i) {
    for (size_t j = i + 1; j < regions.size(); ++j) {
      const Region &a = regions[i], &b = regions[j];
      if (a.begin < b.end && b.begin < a.end)
        return emitError() << "expects " << a.name << " [" << a.begin << ", "
                           << a.end << ") not to overlap " << b.name << " ["
                           << b.begin << ", " << b.end << ")";
    }
  }
  return success();
}

LogicalResult
StoreStagingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         int64_t rows, int64_t cols, int64_t buffers,
                         bool rowStores) {
  // A box holds a consumer warpgroup's 64 accumulator rows; its columns
  // are one 128-byte swizzle row of the output (8, 16 or 32 elements of
  // 16, 8 or 4 bytes: TMA's 128-byte swizzle span).
  if (rows != 64)
    return emitError() << "expects rows = 64 (a consumer warpgroup's rows), "
                          "got "
                       << rows;
  if (cols != 32 && cols != 64 && cols != 128)
    return emitError() << "expects cols to be 32, 64 or 128 (one 128-byte "
                          "swizzle row of f32, bf16/f16 or 8-bit elements), "
                          "got "
                       << cols;
  if (buffers < 1 || buffers > 4)
    return emitError() << "expects 1 to 4 buffers, got " << buffers;
  return success();
}
