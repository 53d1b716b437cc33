//===- Passes.td - ggemm transformation passes ------------*- tablegen -*-===//
#ifndef GGEMM_TRANSFORMS_PASSES_TD
#define GGEMM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def GGemmExportBundle : Pass<"ggemm-export-bundle", "::mlir::ModuleOp"> {
  let summary = "write each compiled kernel as a bundle (PTX/cubin + manifest)";
  let description = [{
    For every `gpu.binary` produced from a ggemm kernel, writes
    `<dir>/<kernel>.ptx` (or `.cubin`) and `<dir>/<kernel>.json`, the
    manifest the runtime launches it with (entry, block, dynamic shared
    memory, grid policy, parameters with each TMA descriptor's tensor, box
    and swizzle). See `docs/Bundle.md`.
  }];
  let options = [
    Option<"outputDir", "dir", "std::string", /*default=*/"\".\"",
           "directory the bundle files are written to">,
  ];
}

def GGemmPipeline : Pass<"ggemm-pipeline", "::mlir::ModuleOp"> {
  let summary = "plan the multi-stage shared-memory ring of each tile_mma";
  let description = [{
    Sets `#ggemm.pipeline<...>` on every `ggemm.tile_mma`: the number of ring
    stages (the tile config's `stages`, lowered when they would not fit the
    227 KB budget), the 1024-byte aligned A and B stage buffers and the
    full/empty mbarrier array. `convert-ggemm-to-nvgpu` turns the plan into
    TMA loads completing on the full barriers and wgmma consumers releasing
    the empty barriers.
  }];
  let dependentDialects = ["::mlir::ggemm::GGemmDialect"];
}

def GGemmSelectConfig : Pass<"ggemm-select-config", "::mlir::ModuleOp"> {
  let summary = "choose a tile config for each problem op";
  let description = [{
    Sets `config = #ggemm.tile_config<...>` on every problem-level op that
    has none, from N, K, the element type, the expected rows per group and
    the SM count (see `TileConfigHeuristics.h`). A config the user wrote is
    kept.
  }];
  let options = [
    Option<"numSMs", "num-sms", "int64_t", /*default=*/"132",
           "streaming multiprocessors of the target GPU">,
    Option<"expectedRows", "expected-rows", "int64_t", /*default=*/"0",
           "expected rows per group when they are dynamic (0: unknown)">,
  ];
  let dependentDialects = ["::mlir::ggemm::GGemmDialect"];
}

def GGemmTile : Pass<"ggemm-tile", "::mlir::ModuleOp"> {
  let summary = "rewrite problem-level ops into tile programs";
  let description = [{
    Replaces each `ggemm.segment_matmul`, `ggemm.masked_matmul` and
    `ggemm.batched_matmul` that carries a tile config by a
    `ggemm.foreach_tile` whose body is one `ggemm.tile_mma` and one
    `ggemm.tile_store`. Three-dimensional activations and outputs are
    collapsed to `[groups * rows, *]`, so the tile program only sees
    matrices.
  }];
  let dependentDialects = ["::mlir::ggemm::GGemmDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // GGEMM_TRANSFORMS_PASSES_TD
