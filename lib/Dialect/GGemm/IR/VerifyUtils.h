//===- VerifyUtils.h - checks shared by the ggemm verifiers ---*- C++ -*-===//
//
// Private to the dialect library: the shape, type and TMA checks that the
// problem-level, tile-level and schedule-level verifiers share.
//
//===----------------------------------------------------------------------===//
#ifndef GGEMM_LIB_DIALECT_GGEMM_IR_VERIFYUTILS_H
#define GGEMM_LIB_DIALECT_GGEMM_IR_VERIFYUTILS_H

#include "ggemm/Dialect/GGemm/IR/GGemm.h"

namespace mlir::ggemm::detail {

/// Prints a dimension for diagnostics: `?` for dynamic sizes.
std::string dimStr(int64_t d);

/// True when two dimensions can be equal at run time.
bool compatible(int64_t a, int64_t b);

/// Checks `type` against `expected` dimension by dimension.
LogicalResult verifyShape(Operation *op, StringRef name, MemRefType type,
                          ArrayRef<int64_t> expected);

/// Statically known TMA rules: the innermost dimension is contiguous, every
/// other stride is a multiple of 16 bytes, and a static base offset keeps the
/// 16-byte alignment of the allocation.
LogicalResult verifyTmaOperand(Operation *op, StringRef name, MemRefType type);

/// Checks the operand element types against what wgmma can multiply.
LogicalResult verifyOperandTypes(Operation *op, Type a, Type b);

/// Checks a tile config against the operand element type (null: success).
LogicalResult verifyConfigForType(Operation *op, TileConfigAttr config,
                                  Type elementType);

/// What ggemm.foreach_tile and ggemm.tile_schedule check of their shared
/// operands: the `rows` operand goes with the row mapping, the weight
/// indices with their count.
LogicalResult verifyTileHeader(Operation *op, RowMapping rowMapping,
                               Value groupRows, Value weightIndices,
                               Value numWeights, TileConfigAttr config);

/// What ggemm.load_tile and ggemm.prefetch_tile check of the box they name:
/// a matrix or a batch of matrices, one index per dimension, the tile's
/// element type the source's.
LogicalResult verifyTileBox(Operation *op, MemRefType source, size_t numIndices,
                            TileType tile);

} // namespace mlir::ggemm::detail

#endif // GGEMM_LIB_DIALECT_GGEMM_IR_VERIFYUTILS_H
