//===- VerifyUtils.cpp - verification helpers shared by the ggemm ops -----===//

#include "VerifyUtils.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::detail;

//===----------------------------------------------------------------------===//
// Shared verification helpers
//===----------------------------------------------------------------------===//

std::string mlir::ggemm::detail::dimStr(int64_t d) {
  return ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
}

bool mlir::ggemm::detail::compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

LogicalResult mlir::ggemm::detail::verifyShape(Operation *op, StringRef name,
                                               MemRefType type,
                                               ArrayRef<int64_t> expected) {
  ArrayRef<int64_t> actual = type.getShape();
  auto fmt = [](ArrayRef<int64_t> dims) {
    std::string s = "[";
    for (auto [i, d] : llvm::enumerate(dims))
      s += (i ? ", " : "") + dimStr(d);
    return s + "]";
  };
  if (actual.size() != expected.size())
    return op->emitOpError()
           << "expects " << name << " to have rank " << expected.size() << " "
           << fmt(expected) << ", got rank " << actual.size();
  for (auto [a, e] : llvm::zip(actual, expected))
    if (!compatible(a, e))
      return op->emitOpError() << "expects " << name << " of shape "
                               << fmt(expected) << ", got " << fmt(actual);
  return success();
}

LogicalResult mlir::ggemm::detail::verifyTmaOperand(Operation *op,
                                                    StringRef name,
                                                    MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return op->emitOpError()
           << "expects " << name << " to have a strided layout, got " << type;
  int64_t bytes = getElementBytes(type.getElementType());
  if (!strides.empty() && strides.back() != 1)
    return op->emitOpError() << "expects the innermost dimension of " << name
                             << " to be contiguous (stride 1), got stride "
                             << dimStr(strides.back());
  for (size_t i = 0; i + 1 < strides.size(); ++i) {
    if (ShapedType::isDynamic(strides[i]))
      continue;
    if ((strides[i] * bytes) % 16 != 0)
      return op->emitOpError()
             << "expects dimension " << i << " of " << name
             << " to have a stride that is a multiple of 16 bytes (TMA), got "
             << strides[i] * bytes << " bytes";
  }
  if (!ShapedType::isDynamic(offset) && (offset * bytes) % 16 != 0)
    return op->emitOpError() << "expects " << name
                             << " to start 16-byte aligned (TMA), got a "
                                "static offset of "
                             << offset * bytes << " bytes";
  return success();
}

LogicalResult mlir::ggemm::detail::verifyOperandTypes(Operation *op, Type a,
                                                      Type b) {
  if (isFp8(a) && isFp8(b))
    return success();
  if ((a.isBF16() && b.isBF16()) || (a.isF16() && b.isF16()) ||
      (isInt8(a) && isInt8(b)))
    return success();
  return op->emitOpError()
         << "expects x and w to be both bf16, both f16, both FP8 "
            "(f8E4M3FN/f8E5M2) or both i8, got "
         << a << " and " << b;
}

LogicalResult mlir::ggemm::detail::verifyConfigForType(Operation *op,
                                                       TileConfigAttr config,
                                                       Type elementType) {
  if (!config)
    return success();
  int64_t bytes = getElementBytes(elementType);
  if (config.getBlockK() * bytes != 128)
    return op->emitOpError()
           << "expects block_k * element bytes to be 128 (one 128-byte "
              "swizzle row) for "
           << elementType << ", i.e. block_k = " << 128 / bytes << ", got "
           << config.getBlockK();
  // wgmma's s8 forms take fewer N than the float ones.
  int64_t wgmmaN = config.getSwapAb() ? config.getBlockM() : config.getBlockN();
  if (isInt8(elementType) && wgmmaN > 24 && wgmmaN % 16 != 0)
    return op->emitOpError()
           << "expects the tile's wgmma N ("
           << (config.getSwapAb() ? "block_m with swap_ab" : "block_n")
           << ") to be 8, 16, 24 or a multiple of 16 for i8 operands (the N "
              "of wgmma's s8 forms), got "
           << wgmmaN;
  int64_t smem = config.getPipelineSmemBytes(bytes);
  if (smem > kMaxSmemBytesPerCta)
    return op->emitOpError()
           << "expects the tile config's shared memory (" << smem
           << " bytes for " << config.getStages() << " stages) to fit in "
           << kMaxSmemBytesPerCta << " bytes";
  return success();
}

LogicalResult mlir::ggemm::detail::verifyTileBox(Operation *op,
                                                 MemRefType source,
                                                 size_t numIndices,
                                                 TileType tile) {
  int64_t rank = source.getRank();
  if (rank != 2 && rank != 3)
    return op->emitOpError() << "expects source to be a matrix or a batch of "
                                "matrices (rank 2 or 3), got rank "
                             << rank;
  if (static_cast<int64_t>(numIndices) != rank)
    return op->emitOpError()
           << "expects " << rank
           << " indices (one per dimension of source), got " << numIndices;
  if (source.getElementType() != tile.getElementType())
    return op->emitOpError()
           << "expects the tile's element type " << tile.getElementType()
           << " to be source's, " << source.getElementType();
  return success();
}
