//===- GGemmDialect.cpp - ggemm dialect registration ----------------------===//

#include "ggemm/Dialect/GGemm/IR/GGemm.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

using namespace mlir;
using namespace mlir::ggemm;

#include "ggemm/Dialect/GGemm/IR/GGemmOpsDialect.cpp.inc"

void GGemmDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ggemm/Dialect/GGemm/IR/GGemmOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}

int64_t mlir::ggemm::getElementBytes(Type type) {
  return llvm::divideCeil(type.getIntOrFloatBitWidth(), 8);
}

int64_t mlir::ggemm::getScaleBlocksPerTile(int64_t tileRows,
                                           int64_t scaleRows) {
  // A tile starts at a multiple of its rows, so its offset into a scale
  // block is a multiple of gcd(tileRows, scaleRows); the largest such
  // offset leaves the most rows for the blocks after it.
  int64_t maxOffset = scaleRows - std::gcd(tileRows, scaleRows);
  return llvm::divideCeil(maxOffset + tileRows, scaleRows);
}

bool mlir::ggemm::tileStraddlesScaleBlocks(int64_t tileRows,
                                           int64_t scaleRows) {
  return tileRows % scaleRows != 0 && scaleRows % tileRows != 0;
}

bool mlir::ggemm::isFp8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

bool mlir::ggemm::isInt8(Type type) { return type.isSignlessInteger(8); }

bool mlir::ggemm::isQuantized(Type type) { return isFp8(type) || isInt8(type); }

Type mlir::ggemm::getAccumulatorElementType(Type operand) {
  MLIRContext *ctx = operand.getContext();
  return isInt8(operand) ? Type(IntegerType::get(ctx, 32))
                         : Type(Float32Type::get(ctx));
}

int64_t mlir::ggemm::getRingSlotBytes(Type entry) {
  if (auto scales = dyn_cast<ScalesType>(entry))
    return getScalesSlotBytes(scales.getCount());
  return getRingEntryBytes(entry);
}

int64_t mlir::ggemm::getRingSlotAlignment(Type entry) {
  return isa<ScalesType>(entry) ? kScalesSlotAlignment : 1024;
}

int64_t mlir::ggemm::getRingSmemBytes(ArrayRef<Type> entries, int64_t stages) {
  int64_t bytes = 0;
  for (Type entry : entries) {
    int64_t alignment = getRingSlotAlignment(entry);
    bytes = llvm::alignTo(bytes, alignment) +
            stages * llvm::alignTo(getRingSlotBytes(entry), alignment);
  }
  return llvm::alignTo(bytes, 8) + 16 * stages;
}

int64_t mlir::ggemm::getRingEntryBytes(Type entry) {
  if (auto scales = dyn_cast<ScalesType>(entry))
    return scales.getNumBytes();
  return cast<TileType>(entry).getNumBytes();
}
