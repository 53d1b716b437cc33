//===- GGemmTypes.cpp - ggemm types ---------------------------------------===//

#include "ggemm/Dialect/GGemm/IR/GGemm.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ggemm;

#define GET_TYPEDEF_CLASSES
#include "ggemm/Dialect/GGemm/IR/GGemmOpsTypes.cpp.inc"

void GGemmDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "ggemm/Dialect/GGemm/IR/GGemmOpsTypes.cpp.inc"
      >();
}

/// Parses `<RxCxT` (the caller parses the rest and the `>`).
static ParseResult parseShapeAndType(AsmParser &parser,
                                     SmallVectorImpl<int64_t> &shape,
                                     Type &elementType) {
  return failure(parser.parseLess() ||
                 parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
                 parser.parseType(elementType));
}

static void printShapeAndType(AsmPrinter &printer, ArrayRef<int64_t> shape,
                              Type elementType) {
  printer << "<";
  for (int64_t d : shape)
    printer << d << "x";
  printer << elementType;
}

/// Rank-2, static, positive shapes.
static LogicalResult verifyTileShape(function_ref<InFlightDiagnostic()> emit,
                                     StringRef what, ArrayRef<int64_t> shape) {
  if (shape.size() != 2)
    return emit() << "expects a rank-2 " << what << ", got rank "
                  << shape.size();
  if (llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
    return emit() << "expects a static, positive " << what << " shape";
  return success();
}

//===----------------------------------------------------------------------===//
// AccumulatorType
//===----------------------------------------------------------------------===//

Type AccumulatorType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parseShapeAndType(parser, shape, elementType) || parser.parseGreater())
    return {};
  return parser.getChecked<AccumulatorType>(parser.getContext(), shape,
                                            elementType);
}

void AccumulatorType::print(AsmPrinter &printer) const {
  printShapeAndType(printer, getShape(), getElementType());
  printer << ">";
}

LogicalResult
AccumulatorType::verify(function_ref<InFlightDiagnostic()> emitError,
                        ArrayRef<int64_t> shape, Type elementType) {
  if (failed(verifyTileShape(emitError, "accumulator", shape)))
    return failure();
  if (!elementType.isF32() && !elementType.isSignlessInteger(32))
    return emitError() << "expects an f32 or (INT8 products) i32 "
                          "accumulator, got "
                       << elementType;
  return success();
}

//===----------------------------------------------------------------------===//
// TileType
//===----------------------------------------------------------------------===//

Type TileType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parseShapeAndType(parser, shape, elementType))
    return {};
  TileLayout layout = TileLayout::k_major;
  if (succeeded(parser.parseOptionalComma())) {
    SMLoc loc = parser.getCurrentLocation();
    StringRef keyword;
    if (parser.parseKeyword(&keyword))
      return {};
    std::optional<TileLayout> parsed = symbolizeTileLayout(keyword);
    if (!parsed) {
      parser.emitError(loc) << "expected a tile layout (k_major or "
                               "mn_major), got '"
                            << keyword << "'";
      return {};
    }
    layout = *parsed;
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<TileType>(parser.getContext(), shape, elementType,
                                     layout);
}

void TileType::print(AsmPrinter &printer) const {
  printShapeAndType(printer, getShape(), getElementType());
  if (getLayout() != TileLayout::k_major)
    printer << ", " << stringifyTileLayout(getLayout());
  printer << ">";
}

LogicalResult TileType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType,
                               TileLayout) {
  if (failed(verifyTileShape(emitError, "tile", shape)))
    return failure();
  if (!(elementType.isBF16() || elementType.isF16() ||
        isQuantized(elementType)))
    return emitError() << "expects a bf16, f16, FP8 or i8 tile, got "
                       << elementType;
  return success();
}

int64_t TileType::getNumBytes() const {
  return getRows() * getK() * getElementBytes(getElementType());
}

//===----------------------------------------------------------------------===//
// ScalesType
//===----------------------------------------------------------------------===//

LogicalResult ScalesType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t count) {
  if (count <= 0)
    return emitError() << "expects a positive number of scales, got " << count;
  return success();
}

//===----------------------------------------------------------------------===//
// RingType
//===----------------------------------------------------------------------===//

LogicalResult RingType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<Type> tiles) {
  if (tiles.empty())
    return emitError() << "expects a ring of at least one tile type";
  for (Type tile : tiles)
    if (!isa<TileType, ScalesType>(tile))
      return emitError() << "expects a ring of !ggemm.tile and !ggemm.scales "
                            "types, got "
                         << tile;
  return success();
}
