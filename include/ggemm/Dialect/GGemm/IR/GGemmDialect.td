//===- GGemmDialect.td - ggemm dialect definition ---------*- tablegen -*-===//
#ifndef GGEMM_DIALECT_TD
#define GGEMM_DIALECT_TD

include "mlir/IR/OpBase.td"

def GGemm_Dialect : Dialect {
  let name = "ggemm";
  let cppNamespace = "::mlir::ggemm";
  let summary = "Grouped, batched and block-scaled matrix products for Hopper";
  let description = [{
    The `ggemm` dialect states *what* a grouped matrix product computes (which
    rows go with which weight, which scales apply, what the epilogue does) at
    the **problem level**, and *how* one CTA computes its tiles at the **tile
    level**. Problem-level ops take memrefs; one op is one kernel launch.
    Passes pick a tile configuration, tile the problem and lower the tile
    program either to NVGPU/NVVM (PTX for `sm_90a`) or to plain loops (the CPU
    reference back end).
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

class GGemm_Op<string mnemonic, list<Trait> traits = []>
    : Op<GGemm_Dialect, mnemonic, traits>;

#endif // GGEMM_DIALECT_TD
