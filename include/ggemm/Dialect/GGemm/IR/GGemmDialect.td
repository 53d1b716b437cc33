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

// The type of an operand or result, checked under its name. ODS reports a
// type that fails a constraint by position ("operand #3 must be ..."); a
// GGemm_Checked<T> passes ODS's check, documents T's summary, and the
// GGemm_CheckedTypes trait (code from ggemm-tblgen
// -gen-checked-type-verifiers) checks T before verify() runs, naming the
// value: "operand 'weight_indices' must be 1D memref of 32-bit signless
// integer values, but got 'memref<4xi64>'". Every operand and result of a
// ggemm op has one; ggemm-tblgen refuses an op where one is missing.
class GGemm_Checked<Type type>
    : Type<CPred<"true">, type.summary, type.cppType> {
  Type checked = type;
  let description = type.description;
  let builderCall = type.builderCall;
}

def GGemm_CheckedTypes : NativeOpTrait<"CheckedTypes"> {
  let cppNamespace = "::mlir::ggemm";
}

class GGemm_Op<string mnemonic, list<Trait> traits = []>
    : Op<GGemm_Dialect, mnemonic, !listconcat([GGemm_CheckedTypes], traits)>;

#endif // GGEMM_DIALECT_TD
