//===- StandaloneKernel.cpp - kernels of one op, not of a launch ----------===//

#include "StandaloneKernel.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::ggemm::nvvm;

StandaloneKernel
mlir::ggemm::nvvm::createStandaloneKernel(ModuleOp module, Location loc,
                                          StringRef name, ArrayRef<Type> params,
                                          int32_t threads) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto gpuModule = gpu::GPUModuleOp::create(b, loc, (name + "_module").str());
  SymbolTable(module).insert(gpuModule);
  b.setInsertionPointToStart(gpuModule.getBody());
  auto smem = LLVM::GlobalOp::create(
      b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
      /*isConstant=*/false, LLVM::Linkage::External, "ggemm_smem", Attribute(),
      /*alignment=*/16, /*addrSpace=*/3);
  auto func =
      gpu::GPUFuncOp::create(b, loc, name, b.getFunctionType(params, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
  func->setAttr("nvvm.reqntid", b.getDenseI32ArrayAttr({threads, 1, 1}));
  return {func, smem};
}

Value StandaloneKernelBuilder::at(Value base, Type elem, Value index) {
  return LLVM::GEPOp::create(
      b, loc, base.getType(), elem, base,
      ValueRange{arith::IndexCastOp::create(b, loc, b.getI64Type(), index)});
}

void StandaloneKernelBuilder::forRange(Value lower, Value upper, Value step,
                                       function_ref<void(Value)> body) {
  auto loop = scf::ForOp::create(b, loc, lower, upper, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(loop.getInductionVar());
}

void StandaloneKernelBuilder::ifThen(Value condition,
                                     function_ref<void()> body) {
  auto branch = scf::IfOp::create(b, loc, condition, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(branch.thenBlock());
  body();
}

Attribute ManifestFields::pointer(StringRef tensor) {
  return dict({named("kind", s("pointer")), named("name", s(tensor)),
               named("tensor", s(tensor))});
}

Attribute ManifestFields::scalar(StringRef name, StringRef value) {
  return dict({named("kind", s("scalar")), named("name", s(name)),
               named("dtype", s("i64")), named("value", s(value))});
}

DictionaryAttr ManifestFields::manifest(StringRef name, int64_t threads,
                                        int64_t dynamicSmem,
                                        DictionaryAttr grid,
                                        DictionaryAttr problem,
                                        ArrayRef<Attribute> params) {
  return dict({named("format", s("ggemm-bundle")), named("version", i(1)),
               named("entry", s(name)),
               named("block", b.getArrayAttr({i(threads), i(1), i(1)})),
               named("cluster", b.getArrayAttr({i(1), i(1), i(1)})),
               named("dynamic_smem", i(dynamicSmem)), named("grid", grid),
               named("problem", problem),
               named("params", b.getArrayAttr(params))});
}
