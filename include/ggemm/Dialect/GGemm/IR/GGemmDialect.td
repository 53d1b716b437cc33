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
    the **problem level**, the program that computes one output tile at the
    **tile level** (a K loop of tile loads and mma), and how that program
    runs on the hardware at the **schedule level** (a launch over CTAs, warp
    roles, a ring of shared-memory stages). Problem-level ops take memrefs;
    one op is one kernel launch. Passes pick a tile configuration, tile the
    problem, schedule the tile program and lower it either to NVVM (PTX for
    `sm_90a`) or to plain loops (the CPU reference back end). See
    `docs/RationaleIRLevels.md`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

class GGemm_Op<string mnemonic, list<Trait> traits = []>
    : Op<GGemm_Dialect, mnemonic, traits>;

#endif // GGEMM_DIALECT_TD
