//===- GGemmAttrs.td - ggemm attributes and enums ---------*- tablegen -*-===//
#ifndef GGEMM_ATTRS_TD
#define GGEMM_ATTRS_TD

include "ggemm/Dialect/GGemm/IR/GGemmDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def GGemm_WeightLayoutNK : I32EnumAttrCase<"nk", 0>;
def GGemm_WeightLayoutKN : I32EnumAttrCase<"kn", 1>;
def GGemm_WeightLayout : I32EnumAttr<"WeightLayout",
    "storage order of a per-group weight matrix",
    [GGemm_WeightLayoutNK, GGemm_WeightLayoutKN]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::ggemm";
}
def GGemm_WeightLayoutAttr : EnumAttr<GGemm_Dialect, GGemm_WeightLayout,
                                      "weight_layout"> {
  // Summaries name the attribute first: an op whose attribute has the wrong
  // kind reports "failed to satisfy constraint: <summary>".
  let summary = "`#ggemm.weight_layout<nk|kn>`: weights are [G, N, K] "
                "(K contiguous) or [G, K, N]";
  let assemblyFormat = "`<` $value `>`";
}

def GGemm_ActNone : I32EnumAttrCase<"none", 0>;
def GGemm_ActRelu : I32EnumAttrCase<"relu", 1>;
def GGemm_ActGelu : I32EnumAttrCase<"gelu", 2>;
def GGemm_ActSilu : I32EnumAttrCase<"silu", 3>;
def GGemm_ActSwiglu : I32EnumAttrCase<"swiglu", 4>;
def GGemm_Activation : I32EnumAttr<"Activation", "epilogue activation",
    [GGemm_ActNone, GGemm_ActRelu, GGemm_ActGelu, GGemm_ActSilu,
     GGemm_ActSwiglu]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::ggemm";
}

def GGemm_RasterAlongN : I32EnumAttrCase<"along_n", 0>;
def GGemm_RasterAlongM : I32EnumAttrCase<"along_m", 1>;
def GGemm_RasterOrder : I32EnumAttr<"RasterOrder",
    "order in which tile ids walk the (m, n) tile grid of a group",
    [GGemm_RasterAlongN, GGemm_RasterAlongM]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::ggemm";
}

def GGemm_TileLayoutKMajor : I32EnumAttrCase<"k_major", 0>;
def GGemm_TileLayoutMNMajor : I32EnumAttrCase<"mn_major", 1>;
def GGemm_TileLayout : I32EnumAttr<"TileLayout",
    "storage order of an operand tile: K contiguous, or rows contiguous",
    [GGemm_TileLayoutKMajor, GGemm_TileLayoutMNMajor]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::ggemm";
}

def GGemm_GridPersistent : I32EnumAttrCase<"persistent", 0>;
def GGemm_GridTiles : I32EnumAttrCase<"tiles", 1>;
def GGemm_GridPolicy : I32EnumAttr<"GridPolicy",
    "how many CTAs a kernel is launched with",
    [GGemm_GridPersistent, GGemm_GridTiles]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::ggemm";
}
def GGemm_GridPolicyAttr : EnumAttr<GGemm_Dialect, GGemm_GridPolicy,
                                    "grid_policy"> {
  let summary = "`#ggemm.grid_policy<persistent|tiles>`: one CTA per SM "
                "striding over the tile ids, or one CTA per tile id";
  let assemblyFormat = "`<` $value `>`";
}

def GGemm_RowMappingSegment : I32EnumAttrCase<"segment", 0>;
def GGemm_RowMappingMasked : I32EnumAttrCase<"masked", 1>;
def GGemm_RowMappingUniform : I32EnumAttrCase<"uniform", 2>;
def GGemm_RowMapping : I32EnumAttr<"RowMapping",
    "how the rows of the flattened activation matrix split into groups",
    [GGemm_RowMappingSegment, GGemm_RowMappingMasked,
     GGemm_RowMappingUniform]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::ggemm";
}
def GGemm_RowMappingAttr : EnumAttr<GGemm_Dialect, GGemm_RowMapping,
                                    "row_mapping"> {
  let summary = "`#ggemm.row_mapping<segment|masked|uniform>`: how the rows "
                "of the flattened activation matrix split into groups";
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class GGemm_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<GGemm_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def GGemm_EpilogueAttr : GGemm_Attr<"Epilogue", "epilogue"> {
  let summary = "`#ggemm.epilogue<...>`: what happens to an accumulator tile "
                "before it is stored";
  let description = [{
    The epilogue computes, per output element,
    `y = act(acc + bias[w, n]) * row_scale[m] (+ y_old if accumulate)`,
    where `bias` and `row_scale` are optional operands of the op, `act` is the
    activation and `accumulate` adds the value already in the output. The
    result is converted to the output element type (bf16, f16 or f32).

    `swiglu` is gated (SwiGLU): the weight holds `2N` rows, the gate rows
    `[0, N)` then the up rows `[N, 2N)` side by side (the `w13` layout of
    vLLM's and SGLang's fused MoE weights), and
    `y[m, n] = silu(g + bias[w, n]) * (u + bias[w, N + n]) * row_scale[m]
    (+ y_old)` with `g = (x · W[w]ᵀ)[m, n]`, `u = (x · W[w]ᵀ)[m, N + n]`:
    y has N columns and the bias 2N.

    `gate_up_block = B` (swiglu only; 0, the default, is the side-by-side
    layout above) interleaves the gate and up rows of w in blocks: w's 2N
    rows come in blocks of `2B`, rows `[2B j, 2B j + B)` the gate rows of
    outputs `[B j, B j + B)` and rows `[2B j + B, 2B j + 2B)` their up rows
    (with `weight_layout = kn` the same along w's columns). Each tile of
    `block_n = 2B` weight rows then reads its gate and up rows as one
    contiguous box, next to each other in memory and in L2, instead of two
    boxes N rows apart. This is a storage choice of w only: y, and the bias
    (`[Gw, 2N]`, gate `[0, N)` then up `[N, 2N)`), keep the logical order.
    B is a multiple of 8 (the register pairing of gate and up columns works
    on whole 8-column wgmma fragments) and at most 128 (a tile of 2B <= 256
    rows, wgmma's largest N), and divides N; the op's tile config must have
    `block_n = 2B`. `ggemm.interleave_gate_up` (Python) converts vLLM's
    side-by-side `w13`.

    `atomic` (with `accumulate`, on a `ggemm.segment_matmul` with
    `scatter_indices`): the add into y is an atomic add (`red.global.add`),
    so that rows of several segments may land on one row of y (a MoE
    layer's top-k sum). The order of the adds, and so the rounding of the
    sum, is not deterministic; without `atomic` every row of y is written
    by at most one segment row and the result is.

    ```mlir
    #ggemm.epilogue<activation = silu, accumulate = true>
    #ggemm.epilogue<activation = swiglu>
    #ggemm.epilogue<activation = swiglu, gate_up_block = 64>
    #ggemm.epilogue<accumulate = true, atomic = true>
    ```
  }];
  let parameters = (ins
    DefaultValuedParameter<"::mlir::ggemm::Activation",
                           "::mlir::ggemm::Activation::none">:$activation,
    DefaultValuedParameter<"bool", "false">:$accumulate,
    DefaultValuedParameter<"bool", "false">:$atomic,
    DefaultValuedParameter<"int64_t", "0">:$gate_up_block);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether the activation is gated (`swiglu`): the accumulator holds
    /// twice the output columns.
    bool isGated() const {
      return getActivation() == ::mlir::ggemm::Activation::swiglu;
    }
    /// Whether a gated weight interleaves its gate and up rows in blocks of
    /// `gate_up_block` (the tile loads them as one box); false for the
    /// side-by-side layout.
    bool isGateUpInterleaved() const { return getGateUpBlock() > 0; }
  }];
}

def GGemm_StoreStagingAttr : GGemm_Attr<"StoreStaging", "store_staging"> {
  let summary = "`#ggemm.store_staging<...>`: an epilogue staged through "
                "shared memory and stored by TMA";
  let description = [{
    Set by `ggemm-tma-store` on a `ggemm.store_tile`: each consumer
    warpgroup writes its rows of the tile into shared memory, one box of
    `rows` rows by `cols` columns (`cols` elements of y make one 128-byte
    swizzle row) at a time, through `buffers` boxes it cycles through, and
    one of its threads stores each box with a TMA bulk tensor store
    (`cp.async.bulk.tensor`), which runs on while the warpgroup fills the
    next box and then multiplies the next tile. Before refilling a box, the
    warpgroup waits until the store that last read it has finished reading
    (`cp.async.bulk.wait_group.read buffers - 1`). `ggemm.store_drain` waits
    for the last ones.

    `row_stores` (a `scatter`ed store): the rows of a box are not
    contiguous in y, so each row of the box is stored on its own, by a
    one-row TMA store at the y row it is scattered to. The box's first 64
    threads issue one row each (rows past the tile's `row_end` or
    scattered outside y are not stored), and each of them waits for its own
    stores. TMA's 128-byte swizzle follows the shared-memory address, so a
    one-row store of box row `r` reads it with the box's swizzle phase `r %
    8`.

    ```mlir
    #ggemm.store_staging<rows = 64, cols = 64, buffers = 2>
    #ggemm.store_staging<rows = 64, cols = 64, buffers = 2, row_stores = true>
    ```
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$cols, "int64_t":$buffers,
                        DefaultValuedParameter<"bool", "false">:$row_stores);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Bytes of one box: `rows` swizzle rows of 128 bytes.
    int64_t getBoxBytes() const { return getRows() * 128; }
  }];
}

def GGemm_ScaleBlockAttr : GGemm_Attr<"ScaleBlock", "scale_block"> {
  let summary = "`#ggemm.scale_block<RxC>`: granularity of an FP8 operand's "
                "dequantisation scales";
  let description = [{
    How many elements of an FP8 operand share one f32 scale. Written
    `tensor` (one scale per tensor, or per group for weights), `per_row`
    (one scale per row: per token for activations, per output channel for
    weights), or `RxC` for blocks of R rows by C elements along K:
    `1x128` (per token and 128-wide K block, DeepSeek-V3 activations) and
    `128x128` (weights). Rows and columns are given in the logical
    `[rows, K]` view of the operand, whatever its storage layout. C is a
    multiple of 32 (one FP8 wgmma k-step) and must divide K.

    The scale operands' shapes (masked and batched ops: `G` groups of
    `Mmax` / `M` rows):

    | kind | x_scale | w_scale |
    |---|---|---|
    | `tensor` | `[1]` (one for all of x, every op) | `[Gw]` (one per weight matrix) |
    | `per_row` | `[M]` (segment), `[G, Mmax]` (masked, batched) | `[Gw, N]` |
    | `1x128` / `128x128` | `[M, K/128]`, `[G, Mmax, K/128]` | `[Gw, N/128, K/128]` |

    `tensor` and `per_row` scales do not change along K, so the f32
    accumulator of the whole K is scaled once, in the epilogue:
    `y = epilogue(acc[m, n] * sx(m) * sw(g, n))`. The two operands may mix
    these two kinds; block scales (promoted per K block, see
    `ggemm.promote`) go with block scales only.

    ```mlir
    #ggemm.scale_block<1x128>
    #ggemm.scale_block<128x128>
    #ggemm.scale_block<per_row>
    ```
  }];
  // A value of 0 for `rows` or `cols` means "the whole extent".
  let parameters = (ins "int64_t":$rows, "int64_t":$cols);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isTensorWise() const { return getRows() == 0 && getCols() == 0; }
    bool isPerRow() const { return getRows() == 1 && getCols() == 0; }
    bool isBlock() const { return getRows() > 0 && getCols() > 0; }
  }];
}

def GGemm_TileConfigAttr : GGemm_Attr<"TileConfig", "tile_config"> {
  let summary = "`#ggemm.tile_config<...>`: how one CTA tiles the problem";
  let description = [{
    Block sizes of one CTA tile, the depth of the shared-memory pipeline, the
    number of consumer warpgroups, whether the operands are swapped for small
    M (swap-AB), the thread-block cluster shape and the raster order of tile
    ids within a group.

    ```mlir
    #ggemm.tile_config<block_m = 128, block_n = 128, block_k = 64, stages = 4,
                       consumer_warpgroups = 2, swap_ab = false,
                       cluster_m = 1, cluster_n = 1, raster = along_n>
    ```

    Each consumer warpgroup computes 64 rows of the mma (block_m, or
    block_n with swap_ab): one to three of them (three: 192-row tiles, which
    ggemm-select-config gives block-scaled FP8 on large groups).

    `pingpong = true` schedules the consumers as CUTLASS's ping-pong kernel
    does instead: two consumer warpgroups take alternate tiles of the CTA,
    each computing a whole tile of 64 or 128 rows (block_m = 64 or 128: one
    or two m64 wgmma row blocks per warpgroup; no swap_ab), so that
    one warpgroup's epilogue runs while the other's main loop has the
    tensor cores. The ring hands the stages out in tile order, so the two
    main loops follow each other without a barrier between them.

    `swizzle = W` walks each group's tile grid in bands of W tiles across
    the raster direction (CUTLASS's swizzle): with `raster = along_m`,
    consecutive tile ids step across a band of W column tiles, then down
    the rows, and the next band starts when the band's rows are done (the
    last band may be narrower); with `along_n` the same with bands of W row
    tiles. A wave of CTAs then covers about (CTAs / W) x W tiles, so it
    shares both operands' tiles in L2 rather than one operand's. The
    default 1 is the plain raster. With `swizzle_min_tiles = T` the bands
    apply only to the groups that have at least T tiles along the walk
    (row tiles along m); the others keep the plain raster (0, the default:
    every group). On an H100 bands of 4 column tiles ran 1.02-1.05x the
    plain walk on groups of ~8192 rows and 0.94-0.99x on groups of 4096 or
    fewer at wide N (bench/NOTES.md v20).

    `promote_pairs = true` (block-scaled operands, whose K blocks are
    promoted one by one: `ggemm.promote`) makes `ggemm-warp-specialize`
    give the consumers two K blocks per step: block i's product is issued
    and left pending, block i + 1's is issued into a second product, one
    `wgmma.wait_group 0` waits for both, and the two are promoted in order
    (the sum's order does not change). A K block then costs half a wgmma
    wait; each consumer thread holds a third accumulator-sized register
    set, so it is meant for narrow tiles (ggemm-select-config sets it on
    block-scaled 8-bit tiles of at most 64 x 96 per consumer warpgroup:
    up to 1.16x on FP8 decode, 0.98-1.03x where it does not help,
    bench/NOTES.md v23). An odd block count ends with one block on its
    own. The CPU reference (`convert-ggemm-to-loops`) does not
    warp-specialize; it sums the blocks in the same order.

    `split_k = S > 1` splits each tile's K blocks over the S CTAs of a
    thread-block cluster (rank r takes blocks [r KB / S, (r + 1) KB / S)):
    every CTA computes a partial sum of the same tile, ranks 1..S-1 write
    theirs into rank 0's shared memory, and rank 0 adds them in rank order
    and stores the tile (`ggemm.split_k_sum`). It gives a product with
    fewer tiles than SMs more CTAs to stream its operands with (FP8 decode:
    one group of a few tokens, N = 576 makes 9 tiles of 64 weight rows), at
    the cost of S - 1 partial tiles through distributed shared memory. Not
    with `cluster_m` or `cluster_n` > 1, nor `pingpong`; at most 8 (a
    portable cluster).

    `split_k_tail = true` (with `split_k = S > 1`) splits only the tiles of
    the persistent grid's last, partial wave: every CTA computes whole tiles
    (one CTA a tile, as without `split_k`) for as many whole waves as the
    tile count holds, and the tiles left over, when S of them fit the idle
    CTAs (left over x S <= CTAs), are split over clusters of S. Decided on
    the device from the tile count, so for rows unknown at compile time: at
    M = 4096, N = 4096, 704 tiles of 192x128 are 5 whole waves of 132 CTAs
    and 44 tiles, which then take half a tile's time over 88 CTAs instead
    of a whole one over 44. Each CTA's split tile is its last, so rank 0's
    partials buffer may overlay its idle stage ring (`ggemm-stage-ring`
    places it there when the ring is the larger).

    The attribute checks what does not depend on the element type (wgmma
    tile shapes, stage and warpgroup ranges, cluster sizes); the ops that
    carry it also check block_k against the element type and the shared
    memory of all stages against the 227 KB budget of an sm_90 CTA.
  }];
  let parameters = (ins
    "int64_t":$block_m, "int64_t":$block_n, "int64_t":$block_k,
    DefaultValuedParameter<"int64_t", "4">:$stages,
    DefaultValuedParameter<"int64_t", "2">:$consumer_warpgroups,
    DefaultValuedParameter<"bool", "false">:$swap_ab,
    DefaultValuedParameter<"int64_t", "1">:$cluster_m,
    DefaultValuedParameter<"int64_t", "1">:$cluster_n,
    DefaultValuedParameter<"::mlir::ggemm::RasterOrder",
                           "::mlir::ggemm::RasterOrder::along_n">:$raster,
    DefaultValuedParameter<"bool", "false">:$pingpong,
    DefaultValuedParameter<"int64_t", "1">:$swizzle,
    DefaultValuedParameter<"int64_t", "0">:$swizzle_min_tiles,
    DefaultValuedParameter<"bool", "false">:$promote_pairs,
    DefaultValuedParameter<"int64_t", "1">:$split_k,
    DefaultValuedParameter<"bool", "false">:$split_k_tail);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Bytes of shared memory the operand ring needs for the given operand
    /// element width in bytes.
    int64_t getPipelineSmemBytes(int64_t elementBytes) const;
  }];
}

def GGemm_RingLayoutAttr : GGemm_Attr<"RingLayout", "ring_layout"> {
  let summary = "`#ggemm.ring_layout<...>`: shared-memory placement of a "
                "stage ring";
  let description = [{
    Set by `ggemm-stage-ring` on `ggemm.create_ring`: the number of stages,
    and for each tile type of the ring (in the order of its
    `!ggemm.ring<...>` type) the byte offset of its buffer inside the CTA's
    dynamic shared memory and the bytes of one stage slot; then the byte
    offset of the mbarrier array (a `full` mbarrier per stage, then an
    `empty` one per stage, 8 bytes each) and `smem_bytes`, the dynamic shared
    memory the kernel is launched with (at most 227 KB). Slot `s` of tile
    `j` starts at `offsets[j] + s * stage_bytes[j]`; `full[s]` at
    `barrier_offset + 8 s`, `empty[s]` at `barrier_offset + 8 (stages + s)`.
    Stage sizes and buffer offsets are 128-byte aligned (TMA writes there),
    1024-byte aligned for the slots of tiles (128-byte swizzle; checked by
    `ggemm.create_ring`);
    the buffers and the mbarriers must not overlap and must end within
    `smem_bytes`.

    When the launch's `ggemm.store_tile` has a `staging` (set by
    `ggemm-tma-store`), `staging_offset` and `staging_bytes` place the
    epilogue's store buffers: `buffers` boxes per consumer warpgroup, of
    `rows x 128` bytes each, warpgroup `w`'s box `j` at `staging_offset +
    (w * buffers + j) * rows * 128` (1024-byte aligned: the boxes are
    128-byte swizzled). Absent (offset -1) without a staged store.

    When the launch has a `ggemm.split_k_sum` (a config with `split_k = S >
    1`), `split_k_offset` and `split_k_bytes` place its buffer: S - 1 slots
    of one accumulator's bytes (rank r's partial in slot r - 1, register i
    of consumer thread t at byte `16 (threads (i / 4) + t) + 4 (i mod 4)`),
    then a `full` and an `empty` mbarrier (8 bytes each). 16-byte aligned;
    absent (offset -1) without. With `split_k_barriers = O` the buffer holds
    the slots only and overlays the ring's tile buffers (which it must lie
    within), and the two mbarriers are at `O` (32 bytes with a word the
    consumers read back, 16-byte aligned), outside everything else: a
    `split_k_tail` launch, whose split tile is each CTA's last, so that
    rank 0's ring is idle once its K loop is done (rank 0 says so to the
    others before they write).

    ```mlir
    #ggemm.ring_layout<stages = 4, offsets = [0, 65536],
                       stage_bytes = [16384, 32768], barrier_offset = 196608,
                       smem_bytes = 196672>
    ```
  }];
  let parameters = (ins "int64_t":$stages,
                    ArrayRefParameter<"int64_t">:$offsets,
                    ArrayRefParameter<"int64_t">:$stage_bytes,
                    "int64_t":$barrier_offset, "int64_t":$smem_bytes,
                    DefaultValuedParameter<"int64_t", "-1">:$staging_offset,
                    DefaultValuedParameter<"int64_t", "0">:$staging_bytes,
                    DefaultValuedParameter<"int64_t", "-1">:$split_k_offset,
                    DefaultValuedParameter<"int64_t", "0">:$split_k_bytes,
                    DefaultValuedParameter<"int64_t", "-1">:$split_k_barriers);
  let assemblyFormat = [{
    `<` `stages` `=` $stages `,` `offsets` `=` `[` $offsets `]` `,`
    `stage_bytes` `=` `[` $stage_bytes `]` `,`
    `barrier_offset` `=` $barrier_offset `,` `smem_bytes` `=` $smem_bytes ``
    custom<RingLayoutRegions>($staging_offset, $staging_bytes,
                              $split_k_offset, $split_k_bytes,
                              $split_k_barriers) `` `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Bytes of the mbarrier array: a full and an empty mbarrier per stage.
    int64_t getBarrierBytes() const { return 16 * getStages(); }
    /// Whether the split-K buffer overlays the ring's tile buffers (its
    /// mbarriers then elsewhere, at split_k_barriers).
    bool splitKOverlaysRing() const { return getSplitKBarriers() != -1; }
  }];
}

#endif // GGEMM_ATTRS_TD
