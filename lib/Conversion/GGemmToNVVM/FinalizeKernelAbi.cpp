//===- FinalizeKernelAbi.cpp - by-value TMA descriptor parameters ---------===//

#include "ggemm/Conversion/Passes.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_GGEMMFINALIZEKERNELABI
#include "ggemm/Conversion/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;

namespace {
/// Size and alignment of a CUtensorMap.
constexpr int64_t kTensorMapBytes = 128;
constexpr int64_t kTensorMapAlign = 64;

struct FinalizeKernelAbiPass
    : public ggemm::impl::GGemmFinalizeKernelAbiBase<FinalizeKernelAbiPass> {
  void runOnOperation() override {
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      auto args =
          func->getAttrOfType<DenseI64ArrayAttr>("ggemm.grid_constant_args");
      if (!args)
        return;
      MLIRContext *ctx = func.getContext();
      Builder b(ctx);
      auto tensorMap = LLVM::LLVMArrayType::get(b.getI8Type(), kTensorMapBytes);
      // The list comes from the IR, so it is user input: a negative index
      // must not reach the argument types (it is an int64_t, the bound
      // unsigned). The types come from the function type, not the entry
      // block: a declaration has no block to take getArgument() from.
      ArrayRef<Type> argumentTypes = func.getArgumentTypes();
      int64_t numArguments = argumentTypes.size();
      for (int64_t index : args.asArrayRef()) {
        if (index < 0 || index >= numArguments) {
          func.emitOpError() << "expects argument index " << index
                             << " to be in [0, " << numArguments << ")";
          return signalPassFailure();
        }
        if (!isa<LLVM::LLVMPointerType>(argumentTypes[index])) {
          func.emitOpError() << "expects argument " << index
                             << " to be a pointer to a TMA descriptor";
          return signalPassFailure();
        }
        func.setArgAttr(index, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(tensorMap));
        func.setArgAttr(index, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(kTensorMapAlign));
        func.setArgAttr(index, NVVM::NVVMDialect::getGridConstantAttrName(),
                        UnitAttr::get(ctx));
      }
      func->removeAttr("ggemm.grid_constant_args");
    });
  }
};
} // namespace
