//===- StandaloneKernel.h - kernels of one op, not of a launch -*- C++ -*-===//
//
// What the kernels of ggemm.sort_by_expert (RoutingToNVVM.cpp) and
// ggemm.quantize (QuantizeToNVVM.cpp) share: each is one gpu.func of
// pointer and scalar parameters in a gpu.module of its own, written from
// gpu, scf, arith and NVVM ops, with a manifest of pointers and scalars.
//
//===----------------------------------------------------------------------===//

#ifndef GGEMM_LIB_CONVERSION_GGEMMTONVVM_STANDALONEKERNEL_H
#define GGEMM_LIB_CONVERSION_GGEMMTONVVM_STANDALONEKERNEL_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::ggemm::nvvm {

/// The kernel `name` (a gpu.func of `params`, `threads` threads required)
/// in gpu.module `name`_module at the end of `module`, and the extern
/// dynamic shared memory `ggemm_smem` of that module.
struct StandaloneKernel {
  gpu::GPUFuncOp func;
  LLVM::GlobalOp smem;
};
StandaloneKernel createStandaloneKernel(ModuleOp module, Location loc,
                                        StringRef name, ArrayRef<Type> params,
                                        int32_t threads);

/// Index and i32 arithmetic, addresses and structured control flow at the
/// builder's point: the vocabulary of the standalone kernels' bodies.
class StandaloneKernelBuilder {
protected:
  StandaloneKernelBuilder(OpBuilder &b, Location loc, gpu::GPUFuncOp kernel)
      : b(b), loc(loc), kernel(kernel) {}

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value c32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value toIndex(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }
  Value toI32(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), v);
  }
  Value param(unsigned index) { return kernel.getArgument(index); }
  /// The address of element `index` of `base`.
  Value at(Value base, Type elem, Value index);
  /// `body(i)` for i in [lower, upper) step `step`, at the current point.
  void forRange(Value lower, Value upper, Value step,
                function_ref<void(Value)> body);
  void ifThen(Value condition, function_ref<void()> body);

  OpBuilder &b;
  Location loc;
  gpu::GPUFuncOp kernel;
};

/// The manifest fields of a standalone kernel, as attributes.
class ManifestFields {
public:
  explicit ManifestFields(MLIRContext *ctx) : b(ctx) {}

  NamedAttribute named(StringRef key, Attribute value) {
    return b.getNamedAttr(key, value);
  }
  Attribute i(int64_t v) { return b.getI64IntegerAttr(v); }
  Attribute s(StringRef v) { return b.getStringAttr(v); }
  DictionaryAttr dict(ArrayRef<NamedAttribute> fields) {
    return b.getDictionaryAttr(fields);
  }
  /// A pointer parameter to tensor `tensor`, named after it.
  Attribute pointer(StringRef tensor);
  /// An i64 scalar parameter `name` of the value `value`.
  Attribute scalar(StringRef name, StringRef value);
  /// A version 1 manifest of entry `name`: one-dimensional blocks of
  /// `threads`, no cluster.
  DictionaryAttr manifest(StringRef name, int64_t threads, int64_t dynamicSmem,
                          DictionaryAttr grid, DictionaryAttr problem,
                          ArrayRef<Attribute> params);

private:
  Builder b;
};

} // namespace mlir::ggemm::nvvm

#endif // GGEMM_LIB_CONVERSION_GGEMMTONVVM_STANDALONEKERNEL_H
