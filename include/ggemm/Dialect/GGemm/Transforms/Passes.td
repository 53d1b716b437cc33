//===- Passes.td - ggemm transformation passes ------------*- tablegen -*-===//
//
// In ggemm-to-ptx order: ggemm-select-config, ggemm-tile,
// ggemm-persistent-schedule, ggemm-warp-specialize, ggemm-stage-ring, then
// convert-ggemm-to-nvvm, ggemm-serialize-kernels and ggemm-export-bundle. Kept
// alphabetical here.
//
//===----------------------------------------------------------------------===//
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

def GGemmPersistentSchedule
    : Pass<"ggemm-persistent-schedule", "::mlir::ModuleOp"> {
  let summary = "spread the tiles of each tile loop over a grid of CTAs";
  let description = [{
    Replaces every `ggemm.foreach_tile` by a `ggemm.tile_schedule` (the
    numbering of its tiles) and a `ggemm.launch` whose CTAs walk the tile
    ids. With `grid=persistent` (the default) the kernel is launched with
    one CTA per SM and each CTA strides over the tile ids from its own id;
    with `grid=tiles` every CTA computes the tile with its own id, if there
    is one. Either way each tile id is mapped to its tile on the device by
    `ggemm.map_tile`, and the tile body is unchanged. With
    `dependent-launch` (the default) the launch is `dependent_launch`: the
    kernel may start while the previous kernel of its stream finishes
    (see `ggemm.launch`), and its body starts with `ggemm.wait_dependency`.
    Before the wait, where the weight tiles are known without device data
    (one group, whose every column tile the product reads; no weight
    indices, static N, no clusters), CTA `c < ceil(N / block_n)` brings the
    first K blocks of column tile `c`'s weights into L2
    (`ggemm.prefetch_tile`; L2 is shared, so which CTA reads them later
    does not matter), as many K blocks as keep all of them within
    `dependent-prefetch-bytes` (0, the default: none), so that a decode
    launch's weights would start to arrive while the kernel before it runs.
    Off by default: on an H100, 16 MiB of it made chains of FP8 decode
    launches 0.77-1.05x as fast and single launches 0.83-1.00x
    (bench/NOTES.md v32).

    ```mlir
    ggemm.launch %sched grid(persistent) dependent_launch {
    ^bb0(%cta: index, %num_ctas: index):
      %first = arith.cmpi ult, %cta, %c33 : index
      scf.if %first {
        %col = arith.muli %cta, %c64 : index
        scf.for %kb = %c0 to %c56 step %c1 {
          %k = arith.muli %kb, %c128 : index
          ggemm.prefetch_tile %w[%c0, %col, %k]
              : memref<1x2112x7168xf8E4M3FN>, !ggemm.tile<64x128xf8E4M3FN>
        }
      }
      ggemm.wait_dependency
      ...
    }
    ```

    A config with `cluster_m = C > 1` (thread-block clusters along m, which
    share weight tiles by TMA multicast) needs the persistent grid: a tile
    is then C x block_m rows, the C CTAs of a cluster (`cta / C`) walk the
    tiles together, striding by the number of clusters, and each takes its
    rank's (`cta mod C`) block_m rows: `ggemm.map_tile %sched[%t]
    cluster_rank(%rank)`. `cluster_n > 1` is rejected.

    A config with `split_k = S > 1` (the persistent grid only) has the S
    CTAs of a cluster walk the tiles together the same way, each running K
    blocks [r KB / S, (r + 1) KB / S) of every tile's K loop (r = `cta mod
    S`); after the loop `ggemm.split_k_sum` adds their partial sums into
    rank 0, which alone stores the tile:

    ```mlir
    %acc = scf.for %kb = %lo to %hi step %c1 iter_args(...) { ... }
    %round = arith.divui (%t - %cluster), %clusters
    %more = arith.cmpi ult, %t + %clusters, %total
    %sum = ggemm.split_k_sum %acc rank(%rank) round(%round) more(%more)
        : !ggemm.accumulator<64x8xf32>
    %lead = arith.cmpi eq, %rank, %c0 : index
    scf.if %lead {
      ggemm.store_tile %sum to %y ...
    }
    ```

    With `split_k_tail = true` only the tiles of the last, partial wave are
    split: the CTAs walk work units, the first `whole` (the tile count
    rounded down to a multiple of the grid) being tiles, one CTA each, and,
    when the `rest` tiles left over fit the grid S CTAs each, unit `whole +
    S j + r` rank r's share of tile `whole + j` (r = unit mod S, the CTA's
    rank). The K loop counts the unit's blocks from 0 and offsets them;
    `ggemm.split_k_sum ... more(false) active(%in_tail)` exchanges partials
    in split units only, and whole tiles and rank 0 store:

    ```mlir
    %whole = arith.muli (%total / %num_ctas), %num_ctas
    %split = arith.cmpi ule, (%total - %whole) * S, %num_ctas
    %units = arith.select %split, %whole + (%total - %whole) * S, %total
    scf.for %u = %cta to %units step %num_ctas {
      %in_tail = arith.andi %split, (%u >= %whole)
      %t = arith.select %in_tail, %whole + (%u - %whole) / S, %u
      ...
      %acc = scf.for %kk = %c0 to %count ... { %kb = %first + %kk ... }
      %sum = ggemm.split_k_sum %acc rank(%u mod S) round(%c0) more(%false)
          active(%in_tail) : !ggemm.accumulator<192x128xf32>
      scf.if (not %in_tail or rank == 0) { ggemm.store_tile %sum ... }
    }
    ```

    The tile body must then be one `ggemm.store_tile` of the result of a K
    loop from 0 by 1, as `ggemm-tile` writes it.

    Before:

    ```mlir
    ggemm.foreach_tile segment rows(%indptr : memref<9xi32>) groups(%c8)
        rows_per_group(%c0) num_rows(%m) num_cols(%c4096) config(#cfg) {
    ^bb0(%group: index, %row: index, %row_end: index, %col: index):
      ...
    }
    ```

    After (`grid=persistent`):

    ```mlir
    %sched = ggemm.tile_schedule segment rows(%indptr : memref<9xi32>)
        groups(%c8) rows_per_group(%c0) num_rows(%m) num_cols(%c4096)
        config(#cfg)
    ggemm.launch %sched grid(persistent) dependent_launch {
    ^bb0(%cta: index, %num_ctas: index):
      ggemm.wait_dependency
      %total = ggemm.tile_count %sched
      scf.for %t = %cta to %total step %num_ctas {
        %group, %row, %row_end, %col = ggemm.map_tile %sched[%t]
        ...
      }
    }
    ```

    After (`grid=tiles`):

    ```mlir
    ggemm.launch %sched grid(tiles) dependent_launch {
    ^bb0(%cta: index, %num_ctas: index):
      ggemm.wait_dependency
      %total = ggemm.tile_count %sched
      %has_tile = arith.cmpi ult, %cta, %total : index
      scf.if %has_tile {
        %group, %row, %row_end, %col = ggemm.map_tile %sched[%cta]
        ...
      }
    }
    ```
  }];
  let options = [
    Option<"grid", "grid", "::mlir::ggemm::GridPolicy",
           /*default=*/"::mlir::ggemm::GridPolicy::persistent",
           "how many CTAs the kernel is launched with",
           [{::llvm::cl::values(
               clEnumValN(::mlir::ggemm::GridPolicy::persistent, "persistent",
                          "one CTA per SM, striding over the tile ids"),
               clEnumValN(::mlir::ggemm::GridPolicy::tiles, "tiles",
                          "one CTA per tile id"))}]>,
    Option<"dependentLaunch", "dependent-launch", "bool", /*default=*/"true",
           "mark each ggemm.launch dependent_launch (programmatic dependent "
           "launch: it may start while the previous kernel of its stream "
           "finishes, and waits for it before reading anything)">,
    Option<"dependentPrefetchBytes", "dependent-prefetch-bytes", "int64_t",
           /*default=*/"0",
           "with dependent-launch, at most this many bytes of the first "
           "tiles' weights brought into L2 before the wait (0, the "
           "default: none)">,
  ];
  let dependentDialects = ["::mlir::ggemm::GGemmDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def GGemmSelectConfig : Pass<"ggemm-select-config", "::mlir::ModuleOp"> {
  let summary = "choose a tile config for each problem op";
  let description = [{
    Sets `config = #ggemm.tile_config<...>` on every problem-level op that
    has none, from N, K, the element type, the expected rows per group and
    the SM count (see `TileConfigHeuristics.h`). A config the user wrote is
    kept.

    Before:

    ```mlir
    ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
        segments(%indptr : memref<9xi32>) outs(%y : memref<?x4096xbf16>)
    ```

    After:

    ```mlir
    ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
        segments(%indptr : memref<9xi32>) outs(%y : memref<?x4096xbf16>)
        {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64,
                                     stages = 4, raster = along_m>}
    ```

    The rows per group come from, in order: the op's `expected_m`, the
    `expected-rows` option, the static shape (segment: M / G; masked:
    `Mmax`; batched: `M`).

    A gated (`swiglu`) op never gets swap-AB (small groups get 64-row
    tiles); with `#ggemm.epilogue<gate_up_block = B>` its `block_n` is 2B
    (one block of interleaved gate and up rows a tile), in every variant,
    and only `block_m` follows the rows.

    A `ggemm.segment_matmul_k` gets one config from
    `chooseKRaggedTileConfig`: its output per group is fixed (the rows are
    `dy`'s columns, the columns `x`'s, for `nk`), its rows per group are
    the reduction, so neither `expected-rows` nor variants apply, and it
    is never swap-AB.

    With `variants=true`, an op whose rows per group are unknown at compile
    time (no `expected_m`, no `expected-rows`; dynamic M, a dynamic group
    count, or a masked op, whose `Mmax` only bounds the valid rows) and
    that is the only problem op of a top-level function nobody calls gets
    one variant per distinct choice of `chooseVariants` (rows-per-group
    buckets; see `TileConfigHeuristics.h`): the function is cloned once per
    variant (`@f_v0`, `@f_v1`, ...; the original is erased), each clone's
    op gets its variant's config, and the module attribute `ggemm.dispatch`
    records the host's rule: launch `variants[i]` for the first `i` with
    `rows per group <= bounds[i]`, the last variant otherwise. The export
    step writes one bundle per original function with all its variants.

    ```mlir
    // -ggemm-select-config=variants=true on @moe_up above:
    module attributes {ggemm.dispatch = {moe_up = {bounds = [64],
        rule = "rows_per_group", variants = ["moe_up_v0", "moe_up_v1"]}}} {
      func.func @moe_up_v0(...) {
        ggemm.segment_matmul ... {config = #ggemm.tile_config<block_m = 64,
            block_n = 128, block_k = 64, stages = 6, consumer_warpgroups = 1>}
      }
      func.func @moe_up_v1(...) {
        ggemm.segment_matmul ... {config = #ggemm.tile_config<block_m = 128,
            block_n = 256, block_k = 64, raster = along_m>}
      }
    }
    ```
  }];
  let options = [
    Option<"numSMs", "num-sms", "int64_t", /*default=*/"132",
           "streaming multiprocessors of the target GPU (positive)">,
    Option<"expectedRows", "expected-rows", "int64_t", /*default=*/"0",
           "expected rows per group when they are dynamic (0: unknown); an "
           "op's expected_m wins">,
    Option<"variants", "variants", "bool", /*default=*/"false",
           "emit several tile variants, chosen per launch by the rows per "
           "group, for ops whose rows per group are unknown">,
  ];
  let dependentDialects = ["::mlir::ggemm::GGemmDialect"];
}

def GGemmSerializeKernels
    : Pass<"ggemm-serialize-kernels", "::mlir::ModuleOp"> {
  let summary = "compile every gpu.module to a gpu.binary, the modules in "
                "parallel";
  let description = [{
    Does what upstream's `gpu-module-to-binary` does for the top-level
    `gpu.module`s (each target attribute's `serializeToObject`: translation
    to LLVM IR, LLVM's optimiser, the NVPTX back end and, for `format=bin`,
    `ptxas`), with the modules spread over the context's thread pool when
    the context is multithreaded: a problem op with tile variants has one
    `gpu.module` per variant, and upstream's pass compiles them one after
    the other. The `gpu.binary` ops and their objects are the same as
    upstream's, in the same order. Without multithreading the modules are
    compiled in order on the calling thread.

    On Linux, `ptxas` runs with address-space randomisation off (the
    serialising thread's personality, restored afterwards): ptxas 13.0's
    code otherwise varies from run to run for some kernels, so that a
    cubin would not be a function of the IR (bench/NOTES.md v26).

    Before:

    ```mlir
    gpu.module @moe_up_v0_kernel [#nvvm.target<chip = "sm_90a", O = 3>] {
      llvm.func @moe_up_v0_kernel(...) attributes {nvvm.kernel} { ... }
    }
    gpu.module @moe_up_v1_kernel [#nvvm.target<chip = "sm_90a", O = 3>] {
      ...
    }
    ```

    After (`format=isa`):

    ```mlir
    gpu.binary @moe_up_v0_kernel [#gpu.object<#nvvm.target<chip = "sm_90a",
        O = 3>, properties = {...}, assembly = "// Generated by LLVM NVPTX
        Back-End ...">]
    gpu.binary @moe_up_v1_kernel [...]
    ```
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"isa\"",
           "what each kernel becomes: isa (PTX) or bin (cubin, through "
           "ptxas)">,
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"\"",
           "CUDA toolkit directory (ptxas, libdevice); empty: upstream's "
           "search (CUDA_ROOT, CUDA_HOME, CUDA_PATH, the build's default)">,
  ];
}

def GGemmStageRing : Pass<"ggemm-stage-ring", "::mlir::ModuleOp"> {
  let summary = "place each stage ring in shared memory";
  let description = [{
    Sets `layout = #ggemm.ring_layout<...>` on every `ggemm.create_ring`:
    the number of stages (the tile config's `stages`, lowered when they
    would not fit the 227 KB budget), a buffer of stage slots per entry
    type (1024-byte aligned for tiles, 128-byte for FP8 scales, whose slots
    also hold 4 rows of alignment slack) and the full/empty
    mbarrier array behind them. The staged epilogue's store boxes
    (`ggemm-tma-store`) and a split-K launch's buffer (`ggemm.split_k_sum`:
    split_k - 1 partial accumulators and two mbarriers) go behind those,
    and the ring's stages are what they leave. Where every split_k_sum has
    no tile after it (`more` a constant false: `split_k_tail`) and the
    ring's tile buffers hold the partials, they overlay the ring instead
    (`split_k_barriers`: the mbarriers behind everything) and cost no
    stage. A
    layout already set is kept. `convert-ggemm-to-nvvm` then addresses slot
    `i mod stages` of each buffer and its mbarriers exactly as the layout
    says.

    Before:

    ```mlir
    %ring = ggemm.create_ring release_count(256)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
    ```

    After (config `stages = 4`):

    ```mlir
    %ring = ggemm.create_ring release_count(256)
        layout(#ggemm.ring_layout<stages = 4, offsets = [0, 65536],
                                  stage_bytes = [16384, 32768],
                                  barrier_offset = 196608, smem_bytes = 196672>)
        : !ggemm.ring<!ggemm.tile<128x64xbf16>, !ggemm.tile<256x64xbf16>>
    ```
  }];
  let dependentDialects = ["::mlir::ggemm::GGemmDialect"];
}

def GGemmSwapAB : Pass<"ggemm-swap-ab", "::mlir::ModuleOp"> {
  let summary = "swap the MMA operand roles of tile programs with swap_ab";
  let description = [{
    Rewrites the tile program of each `ggemm.foreach_tile` whose config has
    `swap_ab = true` (chosen by `ggemm-select-config` for groups of few
    rows, or written by the user): the weight tile becomes the mma's `a`
    (wgmma's M, 64 weight rows per consumer warpgroup) and the token tile
    its `b` (wgmma's N: `block_m`, any multiple of 8), so a group of 20
    rows costs 24 MMA columns instead of 64 rows. The accumulator is then
    the output tile transposed: its type is transposed throughout the K
    loop, a `ggemm.promote` swaps its activation and weight scales, and the
    `ggemm.store_tile` is marked `transposed` (same row mask at the
    segment's end, same epilogue). Loads, the schedule and the ring do not
    change. A program already swapped (its store is `transposed`) is left
    as it is; configs without `swap_ab` are untouched.

    Before (`#cfg` has `block_m = 24, block_n = 128, swap_ab = true`):

    ```mlir
    %acc = scf.for %kb = %c0 to %c4 step %c1
        iter_args(%a = %zero) -> (!ggemm.accumulator<24x128xf32>) {
      %ta = ggemm.load_tile %x[%row, %k] : memref<?x256xbf16> -> !ggemm.tile<24x64xbf16>
      %tb = ggemm.load_tile %w[%group, %col, %k]
          : memref<4x128x256xbf16> -> !ggemm.tile<128x64xbf16>
      %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<24x64xbf16>,
          !ggemm.tile<128x64xbf16> -> !ggemm.accumulator<24x128xf32>
      scf.yield %next : !ggemm.accumulator<24x128xf32>
    }
    ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col)
        : !ggemm.accumulator<24x128xf32>, memref<?x128xbf16>
    ```

    After:

    ```mlir
    %acc = scf.for %kb = %c0 to %c4 step %c1
        iter_args(%a = %zero) -> (!ggemm.accumulator<128x24xf32>) {
      ...
      %next = ggemm.mma %tb, %ta, %a : !ggemm.tile<128x64xbf16>,
          !ggemm.tile<24x64xbf16> -> !ggemm.accumulator<128x24xf32>
      scf.yield %next : !ggemm.accumulator<128x24xf32>
    }
    ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col) transposed
        : !ggemm.accumulator<128x24xf32>, memref<?x128xbf16>
    ```
  }];
  let dependentDialects = ["::mlir::ggemm::GGemmDialect",
                           "::mlir::scf::SCFDialect"];
}

def GGemmTile : Pass<"ggemm-tile", "::mlir::ModuleOp"> {
  let summary = "rewrite problem-level ops into tile programs";
  let description = [{
    Replaces each `ggemm.segment_matmul`, `ggemm.masked_matmul`,
    `ggemm.batched_matmul` and `ggemm.segment_matmul_k` that carries a tile
    config by a
    `ggemm.foreach_tile` whose body computes one output tile: an `scf.for`
    over the K blocks loads the A and B tiles of a block
    (`ggemm.load_tile`) and multiplies them into the accumulator
    (`ggemm.mma`); `ggemm.store_tile` applies the epilogue. Three-dimensional
    activations and outputs are collapsed to `[groups * rows, *]`, so the
    tile program only sees matrices.

    Before:

    ```mlir
    ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
        segments(%indptr : memref<9xi32>) outs(%y : memref<?x4096xbf16>)
        {config = #ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64>}
    ```

    After:

    ```mlir
    ggemm.foreach_tile segment rows(%indptr : memref<9xi32>) groups(%c8)
        rows_per_group(%c0) num_rows(%m) num_cols(%c4096) config(#cfg) {
    ^bb0(%group: index, %row: index, %row_end: index, %col: index):
      %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x256xf32>
      %acc = scf.for %kb = %c0 to %c112 step %c1
          iter_args(%a = %zero) -> (!ggemm.accumulator<128x256xf32>) {
        %k = arith.muli %kb, %c64 : index
        %ta = ggemm.load_tile %x[%row, %k]
            : memref<?x7168xbf16> -> !ggemm.tile<128x64xbf16>
        %tb = ggemm.load_tile %w[%group, %col, %k]
            : memref<8x4096x7168xbf16> -> !ggemm.tile<256x64xbf16>
        %next = ggemm.mma %ta, %tb, %a : !ggemm.tile<128x64xbf16>,
            !ggemm.tile<256x64xbf16> -> !ggemm.accumulator<128x256xf32>
        scf.yield %next : !ggemm.accumulator<128x256xf32>
      }
      ggemm.store_tile %acc to %y row(%row) row_end(%row_end) col(%col)
          : !ggemm.accumulator<128x256xf32>, memref<?x4096xbf16>
    }
    ```

    A gated (`swiglu`) op's tiles run over w's 2N rows and store at column
    `col / 2`: side by side, its weight tile is `ggemm.load_tile ... split`
    (gate rows from `col / 2`, up rows N further on); with interleaved
    gate/up blocks (`gate_up_block`) it is one plain load at row `col`.

    `ggemm.segment_matmul_k` (K-ragged weight gradients) becomes a
    `uniform` tile loop over its `[G, N, K]` output seen as `[G * N, K]`,
    whose K loop runs over the group's rows (`ggemm.segment_bounds`) with
    both operand tiles `mn_major` and masked at the segment's end
    (`k_end`):

    ```mlir
    ggemm.foreach_tile uniform groups(%c8) rows_per_group(%c4096)
        num_rows(%c32768) num_cols(%c7168) config(#cfg) {
    ^bb0(%group: index, %row: index, %row_end: index, %col: index):
      %m = arith.subi %row, %first : index   // %first = %group * 4096
      %begin, %end = ggemm.segment_bounds %indptr[%group] num_rows(%t)
          : memref<9xi32>
      %acc = scf.for %kb = %c0 to %blocks step %c1
          iter_args(%a = %zero) -> (!ggemm.accumulator<128x256xf32>) {
        %k = arith.addi %begin, %offset : index   // %offset = %kb * 64
        %ta = ggemm.load_tile %dy[%k, %m] k_end(%end)
            : memref<?x4096xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
        %tb = ggemm.load_tile %x[%k, %col] k_end(%end)
            : memref<?x7168xbf16> -> !ggemm.tile<256x64xbf16, mn_major>
        ...
      }
      ggemm.store_tile %acc to %dw_flat row(%row) row_end(%row_end) col(%col)
          : !ggemm.accumulator<128x256xf32>, memref<32768x7168xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::ggemm::GGemmDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def GGemmWarpSpecialize : Pass<"ggemm-warp-specialize", "::mlir::ModuleOp"> {
  let summary = "split each launch into a TMA producer and MMA consumers";
  let description = [{
    Rewrites the tile loop of every `ggemm.launch` into a
    `ggemm.warp_specialize` of two roles that share a `!ggemm.ring` of
    stages (`ggemm.create_ring`), as Triton's warp specialisation
    partitions a loop:

    - the producer runs the tile loop and, per K block, the tile loads,
      putting them into the next ring position (`ggemm.ring_put`);
    - the consumers run the tile loop and, per K block, take the tiles
      (`ggemm.ring_get`), multiply them with up to `pending-mmas` wgmma
      groups left in flight (`ggemm.mma {pending}`), and release each
      position once the mma that read it has finished
      (`ggemm.ring_release`); after the K loop they wait for the last mma
      (`ggemm.mma_wait`) and store the tile.

    Block scales travel through the ring with the tiles; the consumers'
    `ggemm.ring_get` gets each scales entry's offset in its slot, computed
    from the producer load's own row index (`row % 4` for a 2-D scale
    tensor, loaded from the 16-byte-aligned row; 0 for weight scales).

    A load with a `k_end` (the K-ragged program of `ggemm.segment_matmul_k`)
    is put into the ring whole, since TMA cannot stop at a segment's end;
    the consumers then zero its K rows at or past `k_end` in the ring slot
    (`ggemm.zero_k_tail %tiles valid(k_end - k)`) before the mma reads it.

    The ring position is a counter both roles carry through their tile and
    K loops, so the mbarrier phases run on across tiles. The consumers split
    each tile's rows (64 per warpgroup), so `block_m` must be 64 times the
    consumer warpgroup count. The registers of the roles are `setmaxnreg`
    budgets and must fit the registers the CTA is launched with (64512 for
    two consumer warpgroups, 65536 for one or three; see
    `ggemm.warp_specialize`).

    With a `pingpong` tile config the two consumer warpgroups take
    alternate tiles of the CTA instead (`ggemm.consumer_warpgroup`; block_m
    64 or 128, the warpgroup's whole tile), each skipping the other's ring
    positions, and take the ring in turns (`ggemm.turn_wait` before a
    tile's first stage, `ggemm.turn_pass` after its K loop), so that one
    warpgroup's epilogue runs under the other's main loop. Every tile must
    have the same number of K blocks.

    Before (the body of a `ggemm.launch`):

    ```mlir
    scf.for %t = %cta to %total step %num_ctas {
      %group, %row, %row_end, %col = ggemm.map_tile %sched[%t]
      %zero = ggemm.zero_accumulator : !acc
      %acc = scf.for %kb = %c0 to %c112 step %c1 iter_args(%a = %zero) -> (!acc) {
        %ta = ggemm.load_tile %x[%row, %k] : ... -> !ta
        %tb = ggemm.load_tile %w[%group, %col, %k] : ... -> !tb
        %next = ggemm.mma %ta, %tb, %a : !ta, !tb -> !acc
        scf.yield %next : !acc
      }
      ggemm.store_tile %acc to %y ...
    }
    ```

    After:

    ```mlir
    %ring = ggemm.create_ring release_count(256) : !ggemm.ring<!ta, !tb>
    ggemm.warp_specialize producer registers(40) {
      %0 = scf.for %t = %cta to %total step %num_ctas iter_args(%p = %c0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %sched[%t]
        %1 = scf.for %kb = %c0 to %c112 step %c1 iter_args(%i = %p) -> (index) {
          %ta = ggemm.load_tile %x[%row, %k] : ... -> !ta
          %tb = ggemm.load_tile %w[%group, %col, %k] : ... -> !tb
          ggemm.ring_put %ring[%i], %ta, %tb : !ggemm.ring<!ta, !tb>
          %2 = arith.addi %i, %c1 : index
          scf.yield %2 : index
        }
        scf.yield %1 : index
      }
    } consumers(2) registers(232) {
      %0 = scf.for %t = %cta to %total step %num_ctas iter_args(%p = %c0) -> (index) {
        %group, %row, %row_end, %col = ggemm.map_tile %sched[%t]
        %zero = ggemm.zero_accumulator : !acc
        %1:2 = scf.for %kb = %c0 to %c112 step %c1
            iter_args(%a = %zero, %i = %p) -> (!acc, index) {
          %ta, %tb = ggemm.ring_get %ring[%i] : !ggemm.ring<!ta, !tb>
          %next = ggemm.mma %ta, %tb, %a {pending = 1} : !ta, !tb -> !acc
          %later = arith.cmpi ugt, %kb, %c0 : index
          scf.if %later {
            %prev = arith.subi %i, %c1 : index
            ggemm.ring_release %ring[%prev] : !ggemm.ring<!ta, !tb>
          }
          %2 = arith.addi %i, %c1 : index
          scf.yield %next, %2 : !acc, index
        }
        %done = ggemm.mma_wait %1#0 : !acc
        %ran = arith.cmpi ugt, %1#1, %p : index
        scf.if %ran {
          %last = arith.subi %1#1, %c1 : index
          ggemm.ring_release %ring[%last] : !ggemm.ring<!ta, !tb>
        }
        ggemm.store_tile %done to %y ...
        scf.yield %1#1 : index
      }
    }
    ```
  }];
  let options = [
    Option<"consumerWarpgroups", "consumer-warpgroups", "int64_t",
           /*default=*/"0",
           "consumer warpgroups, 1 to 3 (0: the tile config's)">,
    Option<"producerRegisters", "producer-registers", "int64_t",
           /*default=*/"40",
           "setmaxnreg budget of the producer warpgroup (24..256, a multiple "
           "of 8; with neither budget given, 24 for three consumer "
           "warpgroups and 56 for one)">,
    Option<"consumerRegisters", "consumer-registers", "int64_t",
           /*default=*/"232",
           "setmaxnreg budget of each consumer warpgroup (24..256, a "
           "multiple of 8; with three consumer warpgroups and neither budget "
           "given, 160)">,
    Option<"pendingMmas", "pending-mmas", "int64_t", /*default=*/"1",
           "wgmma groups a consumer keeps in flight while it waits for the "
           "next stage (0 or 1)">,
  ];
  let dependentDialects = ["::mlir::ggemm::GGemmDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def GGemmTmaStore : Pass<"ggemm-tma-store", "::mlir::ModuleOp"> {
  let summary = "stage the consumers' epilogue through shared memory and "
                "store it by TMA";
  let description = [{
    Decides, per warp-specialised launch, whether its `ggemm.store_tile`
    writes through shared memory and TMA bulk tensor stores (`staging =
    #ggemm.store_staging<...>`) instead of per-thread masked global stores,
    and appends `ggemm.store_drain` to the consumer role. A staged store
    leaves the tile as soon as its last box is in shared memory: the TMA
    engine writes it to global memory while the warpgroup multiplies the
    next tile, and it writes whole 128-byte lines instead of the 4-byte
    pieces of the wgmma fragment.

    A store is staged when all of these hold (otherwise it is left as it
    is):
    - it is not `transposed` (swap-AB), and a `scatter`ed store does not
      add into y (`accumulate`, `atomic`: those read y element by element);
    - the columns it stores (half the accumulator's with a gated
      `swiglu` epilogue) are whole boxes;
    - y's elements are 2 or 4 bytes, and a static N makes 16-byte rows
      (N times the element size a multiple of 16; a dynamic N is checked at
      run time, where the kernel falls back to the masked stores);
    - the ring at its configured depth and `buffers` boxes of 64 x 128
      bytes per consumer warpgroup fit the 227 KB of shared memory; with
      fewer bytes left, one box per warpgroup is tried.

    Rows at a segment's end stay exact: a consumer warpgroup whose 64 rows
    reach past `row_end` (the next segment's rows) stores that tile with
    the masked stores (see `ggemm.store_tile`).

    A scattered store (`scatter`: MoE's down projection writing each row to
    its token's slot) gets `row_stores = true`: its boxes are staged the
    same way, and each box row is written by a one-row TMA store at the y
    row it is scattered to, so the rows past `row_end` are simply not
    stored and every warpgroup stages.

    Before (the end of the consumer role of `ggemm-warp-specialize`):

    ```mlir
        ggemm.store_tile %done to %y row(%row) row_end(%end) col(%col)
            : !ggemm.accumulator<128x256xf32>, memref<?x4096xbf16>
        scf.yield %1#1 : index
      }
    }
    ```

    After:

    ```mlir
        ggemm.store_tile %done to %y row(%row) row_end(%end) col(%col)
            {staging = #ggemm.store_staging<rows = 64, cols = 64, buffers = 2>}
            : !ggemm.accumulator<128x256xf32>, memref<?x4096xbf16>
        scf.yield %1#1 : index
      }
      ggemm.store_drain
    }
    ```
  }];
  let options = [
    Option<"buffers", "buffers", "int64_t", /*default=*/"2",
           "store boxes per consumer warpgroup (1 to 4): with 2, a "
           "warpgroup fills one while TMA stores the other">,
  ];
  let dependentDialects = ["::mlir::ggemm::GGemmDialect"];
}

#endif // GGEMM_TRANSFORMS_PASSES_TD
