//===- GGemmToNVVM.cpp - launches -> Hopper kernels -----------------------===//
//
// Outlines every warp-specialised ggemm.launch into a gpu.func of its own
// gpu.module, with the parameter ABI of docs/Bundle.md, and translates its
// body op by op (KernelTranslator). A ggemm.sort_by_expert becomes the
// routing kernel of RoutingToNVVM.cpp, a ggemm.quantize the quantize
// kernel of QuantizeToNVVM.cpp, each in a gpu.module of its own too.
// Nothing is decided here: tile shapes, the grid, the warp roles, the
// register budgets, the ring's stages and placement and the mma's wait
// depth are all read off the IR.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"
#include "ggemm/Conversion/Passes.h"
#include "ggemm/Dialect/GGemm/Transforms/StageChecks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ggemm {
#define GEN_PASS_DEF_CONVERTGGEMMTONVVM
#include "ggemm/Conversion/Passes.h.inc"
} // namespace mlir::ggemm

using namespace mlir;
using namespace mlir::ggemm;
using namespace mlir::ggemm::nvvm;

namespace {

/// The host function of a launch is erased once its launches are kernels
/// (the runtime launches them): it must hold nothing else that would be
/// lost, and nothing may call it.
LogicalResult checkHostFunction(FunctionOpInterface func, ModuleOp module) {
  if (std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(func, module);
      uses && !uses->empty())
    return func.emitOpError()
           << "expects no callers: convert-ggemm-to-nvvm replaces the body of "
              "a function that holds ggemm launches by kernels the runtime "
              "launches, and erases the function";
  WalkResult result = func->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == func.getOperation())
      return WalkResult::advance();
    if (isa<LaunchOp, SortByExpertOp, QuantizeOp>(op))
      return WalkResult::skip();
    if (op->hasTrait<OpTrait::ReturnLike>() && op->getNumOperands() == 0)
      return WalkResult::advance();
    if (isa<TileScheduleOp>(op) || isMemoryEffectFree(op))
      return WalkResult::advance();
    op->emitOpError() << "would be lost: convert-ggemm-to-nvvm erases the "
                         "host function of ggemm launches, which may only "
                         "hold the launches and side-effect-free ops";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

struct ConvertGGemmToNVVMPass
    : public ggemm::impl::ConvertGGemmToNVVMBase<ConvertGGemmToNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (chip != "sm_90a") {
      module.emitError() << getArgument()
                         << ": expects chip sm_90a (wgmma and setmaxnreg), "
                            "got "
                         << chip;
      return signalPassFailure();
    }
    if (failed(expectScheduled(module, getArgument())))
      return signalPassFailure();
    SmallVector<LaunchOp> launches;
    // The ops that are a kernel of their own (routing, quantize).
    SmallVector<Operation *> standalones;
    // Kernels of one host function, for their names.
    llvm::DenseMap<Operation *, int64_t> kernelsOf;
    module.walk([&](Operation *op) {
      if (auto launch = dyn_cast<LaunchOp>(op))
        launches.push_back(launch);
      else if (isa<SortByExpertOp, QuantizeOp>(op))
        standalones.push_back(op);
      else
        return;
      ++kernelsOf[op->getParentOfType<FunctionOpInterface>()];
    });
    if (launches.empty() && standalones.empty())
      return;
    MLIRContext *ctx = module.getContext();
    llvm::SetVector<Operation *> hostFuncs;
    SmallVector<Operation *> kernelOps(launches.begin(), launches.end());
    kernelOps.append(standalones.begin(), standalones.end());
    for (Operation *kernelOp : kernelOps) {
      auto func = kernelOp->getParentOfType<FunctionOpInterface>();
      if (func && !hostFuncs.contains(func)) {
        if (failed(checkHostFunction(func, module)))
          return signalPassFailure();
        hostFuncs.insert(func);
      }
    }
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(ctx));
    SmallVector<NamedAttribute> manifests;
    if (auto existing =
            module->getAttrOfType<DictionaryAttr>("ggemm.manifests"))
      manifests.append(existing.begin(), existing.end());

    auto kernelName = [&](Operation *op) {
      auto func = op->getParentOfType<FunctionOpInterface>();
      std::string name =
          (func ? func.getName().str() : std::string("ggemm")) + "_kernel";
      if (kernelsOf[func] > 1)
        name += "_" + std::to_string(manifests.size());
      return name;
    };
    for (Operation *op : standalones) {
      std::string name = kernelName(op);
      FailureOr<DictionaryAttr> manifest =
          isa<SortByExpertOp>(op)
              ? buildRoutingKernel(cast<SortByExpertOp>(op), module, name)
              : buildQuantizeKernel(cast<QuantizeOp>(op), module, name);
      if (failed(manifest))
        return signalPassFailure();
      manifests.push_back(
          NamedAttribute(StringAttr::get(ctx, name), *manifest));
      if (!op->getParentOfType<FunctionOpInterface>())
        op->erase();
    }
    for (LaunchOp launch : launches) {
      auto func = launch->getParentOfType<FunctionOpInterface>();
      std::string name = kernelName(launch);
      FailureOr<KernelFacts> facts = analyseLaunch(launch, name);
      if (failed(facts))
        return signalPassFailure();

      Location loc = launch.getLoc();
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      auto gpuModule = gpu::GPUModuleOp::create(b, loc, name + "_module");
      SymbolTable(module).insert(gpuModule);
      b.setInsertionPointToStart(gpuModule.getBody());
      // Dynamic shared memory: an extern, 1024-byte aligned array (128-byte
      // swizzled TMA/wgmma tiles need 1024-byte alignment; FACTS.md §5c).
      auto smem = LLVM::GlobalOp::create(
          b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
          /*isConstant=*/false, LLVM::Linkage::External, "ggemm_smem",
          Attribute(), /*alignment=*/1024, /*addrSpace=*/3);
      auto kernel = gpu::GPUFuncOp::create(
          b, loc, name, b.getFunctionType(kernelParamTypes(ctx, *facts), {}));
      kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                      UnitAttr::get(ctx));
      // setmaxnreg needs a register cap at entry: a thread bound plus one
      // CTA per SM (FACTS.md §4).
      kernel->setAttr("nvvm.maxntid",
                      b.getDenseI32ArrayAttr({int32_t(facts->threads), 1, 1}));
      kernel->setAttr("nvvm.minctasm", b.getI32IntegerAttr(1));
      // The TMA descriptors are passed by value (__grid_constant__);
      // ggemm-finalize-kernel-abi applies this after convert-gpu-to-nvvm.
      kernel->setAttr("ggemm.grid_constant_args",
                      b.getDenseI64ArrayAttr(facts->descriptorParams()));
      OpBuilder bodyBuilder(ctx);
      KernelTranslator translator(bodyBuilder, *facts, kernel, smem);
      if (failed(translator.translate()))
        return signalPassFailure();
      manifests.push_back(NamedAttribute(StringAttr::get(ctx, name),
                                         buildManifest(ctx, *facts)));
      if (!func)
        launch.erase();
    }
    module->setAttr("ggemm.manifests", DictionaryAttr::get(ctx, manifests));
    for (Operation *func : hostFuncs)
      func->erase();
  }
};
} // namespace
