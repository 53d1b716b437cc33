//===- GGemmDialect.cpp - ggemm dialect registration ----------------------===//

#include "ggemm/Dialect/GGemm/IR/GGemm.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ggemm;

#include "ggemm/Dialect/GGemm/IR/GGemmOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "ggemm/Dialect/GGemm/IR/GGemmOpsTypes.cpp.inc"

void GGemmDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ggemm/Dialect/GGemm/IR/GGemmOps.cpp.inc"
      >();
  registerAttributes();
  addTypes<
#define GET_TYPEDEF_LIST
#include "ggemm/Dialect/GGemm/IR/GGemmOpsTypes.cpp.inc"
      >();
}

Type AccumulatorType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  return parser.getChecked<AccumulatorType>(parser.getContext(), shape,
                                            elementType);
}

void AccumulatorType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t d : getShape())
    printer << d << "x";
  printer << getElementType() << ">";
}

LogicalResult
AccumulatorType::verify(function_ref<InFlightDiagnostic()> emitError,
                        ArrayRef<int64_t> shape, Type elementType) {
  if (shape.size() != 2)
    return emitError() << "expects a rank-2 accumulator, got rank "
                       << shape.size();
  if (llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
    return emitError() << "expects a static, positive accumulator shape";
  if (!elementType.isF32())
    return emitError() << "expects an f32 accumulator, got " << elementType;
  return success();
}

int64_t mlir::ggemm::getElementBytes(Type type) {
  return llvm::divideCeil(type.getIntOrFloatBitWidth(), 8);
}

bool mlir::ggemm::isFp8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}
