//===- GGemmTileOps.td - ggemm tile-level operations -------*- tablegen -*-===//
//
// The tile level: the program that computes one output tile, written by
// ggemm-tile. A plain scf.for walks the K blocks; each step loads the A and
// B tiles of one K block and multiplies them into an accumulator value.
//
//===----------------------------------------------------------------------===//
#ifndef GGEMM_TILE_OPS_TD
#define GGEMM_TILE_OPS_TD

include "mlir/IR/OpAsmInterface.td"

def GGemm_YieldOp : GGemm_Op<"yield", [Pure, Terminator,
    ParentOneOf<["ForeachTileOp", "LaunchOp", "WarpSpecializeOp"]>]> {
  let summary = "terminates the body of a tile loop, a launch or a warp role";
  let assemblyFormat = "attr-dict";
}

def GGemm_ForeachTileOp : GGemm_Op<"foreach_tile", [
    SingleBlockImplicitTerminator<"YieldOp">, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "the tile loop of a grouped matmul";
  let description = [{
    Runs its body once per output tile `(group, m-tile, n-tile)`, in no
    particular order. Rows of the flattened `[num_rows, *]` activation matrix
    split into `num_groups` groups by the row mapping:

    - `segment`: group `g` owns rows `[r[g], r[g+1])` with `r = group_rows`
      (`seg_indptr`);
    - `masked`: group `g` owns rows `[g * rows_per_group, g * rows_per_group
      + min(r[g], rows_per_group))` with `r = group_rows` (the counts);
    - `uniform`: group `g` owns rows `[g * rows_per_group, (g+1) *
      rows_per_group)`; there is no `group_rows` operand.

    `group_rows` lives on the device and is not checked on the host, so the
    rows are clamped rather than trusted: a segment is `[b, e)` with `b =
    clamp(r[g], 0, num_rows)` and `e = clamp(r[g+1], b, num_rows)` (a
    decreasing `seg_indptr` gives empty segments, offsets past `num_rows`
    end there), and masked counts are clamped to `[0, rows_per_group]`.
    With `weights(weight_indices) num_weights(n)`, a group whose weight
    index is outside `[0, n)` has no tiles: its rows are left as they are.

    Each group's rows are cut into `block_m` tiles and the `num_cols` output
    columns into `block_n` tiles of the tile config. The body receives the
    group, the first row of the tile, the end of the group's rows (`row_end`,
    exclusive: rows at or past it belong to another group and must not be
    written) and the first column. How tiles are spread over CTAs is not
    decided here: `ggemm-persistent-schedule` turns the loop into a
    `ggemm.launch` (see there).

    ```mlir
    ggemm.foreach_tile segment rows(%indptr : memref<9xi32>)
        groups(%c8) rows_per_group(%c0) num_rows(%m) num_cols(%c4096)
        config(#ggemm.tile_config<block_m = 128, block_n = 256, block_k = 64>) {
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
  }];
  let arguments = (ins GGemm_RowMappingAttr:$row_mapping,
                   Optional<GGemm_IndexVector>:$group_rows,
                   Optional<GGemm_I32Vector>:$weight_indices,
                   Optional<GGemm_Index>:$num_weights,
                   GGemm_Index:$num_groups, GGemm_Index:$rows_per_group, GGemm_Index:$num_rows,
                   GGemm_Index:$num_cols, GGemm_TileConfigAttr:$config);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    custom<RowMapping>($row_mapping) (`rows` `(` $group_rows^ `:` type($group_rows) `)`)?
    (`weights` `(` $weight_indices^ `:` type($weight_indices) `)`
     `num_weights` `(` $num_weights `)`)?
    `groups` `(` $num_groups `)` `rows_per_group` `(` $rows_per_group `)`
    `num_rows` `(` $num_rows `)` `num_cols` `(` $num_cols `)`
    `config` `(` qualified($config) `)` attr-dict-with-keyword
    custom<GuardedRegion>($body)
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Value getGroupArg() { return getBody().getArgument(0); }
    ::mlir::Value getRowBeginArg() { return getBody().getArgument(1); }
    ::mlir::Value getRowEndArg() { return getBody().getArgument(2); }
    ::mlir::Value getColBeginArg() { return getBody().getArgument(3); }
  }];
}

def GGemm_WeightIndexOp : GGemm_Op<"weight_index",
    [MemoryEffects<[MemRead]>]> {
  let summary = "the weight matrix of a group";
  let description = [{
    Reads `weight_indices[group]`: the index of the weight matrix group
    `group` multiplies with. Without weight indices the group is its own
    weight index and no op is needed.

    On the GPU a 32-bit global load; on the CPU, a `memref.load`.

    ```mlir
    %w = ggemm.weight_index %indices[%group] : memref<8xi32>
    ```
  }];
  let arguments = (ins GGemm_I32Vector:$weight_indices,
                   GGemm_Index:$group);
  let results = (outs GGemm_Index:$weight);
  let builders = [OpBuilder<(ins "::mlir::Value":$weight_indices,
                                 "::mlir::Value":$group), [{
    build($_builder, $_state, $_builder.getIndexType(), weight_indices, group);
  }]>];
  let assemblyFormat = [{
    $weight_indices `[` $group `]` attr-dict `:` type($weight_indices)
  }];
}

def GGemm_ZeroAccumulatorOp : GGemm_Op<"zero_accumulator", [Pure]> {
  let summary = "an accumulator of zeros";
  let description = [{
    The accumulator a tile starts from. On the GPU the zeros are set before
    the first `wgmma.fence`, so ptxas does not serialise around them.

    ```mlir
    %zero = ggemm.zero_accumulator : !ggemm.accumulator<128x256xf32>
    ```
  }];
  let results = (outs GGemm_Accumulator:$acc);
  let assemblyFormat = "attr-dict `:` qualified(type($acc))";
}

def GGemm_LoadTileOp : GGemm_Op<"load_tile", [MemoryEffects<[MemRead]>,
                                               AttrSizedOperandSegments]> {
  let summary = "read one K block of an operand tile";
  let description = [{
    Reads the tile of the result type from `source`, a matrix (`x`) or a
    batch of matrices (`w`), at `indices` (one per dimension of `source`;
    with a batch the first selects the matrix). A `k_major` tile of shape
    `R x C` is the box `source[..., i : i + R, j : j + C]`; an `mn_major`
    one is the box `source[..., i : i + C, j : j + R]` read transposed (a
    `[K, N]` weight). Elements outside `source` read as zero, as TMA fills
    them.

    `k_end` (optional) bounds the reduction: elements whose K coordinate in
    `source` is at or past `k_end` read as zero too. This is the K-ragged
    mask of `ggemm.segment_matmul_k`: the last K block of a group may reach
    into the next group's rows, which exist, so TMA's zero fill does not
    stop them from entering the sum. `k_begin` (optional, with `k_end`)
    bounds it from below: elements whose K coordinate is below `k_begin`
    read as zero (the FP8 K-ragged program's loads, whose K blocks are
    aligned to the 128-token scale blocks, not to the segment). Both back
    ends implement them: the CPU one in its copy; on the GPU the producer's
    TMA loads the whole box and `ggemm-warp-specialize` puts a
    `ggemm.zero_k_tail` of the tile in the consumers, between the ring and
    the mma.

    `gather(%indices, %end)` (optional; a `k_major` tile of a matrix)
    reads the tile's rows through `indices` (`[M]` i32): tile row `i` is
    source row `indices[r + i]`, `r` being the row index. Rows with `r + i`
    at or past `end` (the next segment's), past the end of `indices`, or
    whose index is outside the source read as zero. On the GPU (TMA cannot
    gather on sm_90) the producer warpgroup copies the rows with cp.async,
    16 bytes a thread, into the slot's 128-byte swizzle rows as TMA would
    have written them, zero-fills the rows past `end` and arrives on the
    stage's mbarrier when its copies land; the consumers fence the async
    proxy before wgmma reads them.

    `split(%offset)` (optional): the tile's second half of rows is read
    `offset` rows further on: tile row `i >= R / 2` is source row
    `r + offset + i - R / 2` (for an `mn_major` tile, column). This is the
    weight tile of a gated (`swiglu`) epilogue: gate rows `[r, r + R/2)`
    and the matching up rows `[N + r, N + r + R/2)`.

    On the GPU the producer issues it as TMA (`cp.async.bulk.tensor`) into
    a stage slot of a `!ggemm.ring` (see `ggemm.ring_put`); on the CPU it
    copies into a buffer.

    ```mlir
    %a = ggemm.load_tile %x[%row, %k] : memref<?x7168xbf16> -> !ggemm.tile<128x64xbf16>
    %b = ggemm.load_tile %w[%widx, %k, %col]
        : memref<8x7168x4096xbf16> -> !ggemm.tile<256x64xbf16, mn_major>
    // K-ragged: rows of dy at or past %end belong to the next group.
    %t = ggemm.load_tile %dy[%k, %m] k_end(%end)
        : memref<?x4096xbf16> -> !ggemm.tile<128x64xbf16, mn_major>
    // FP8 K-ragged: a 128-aligned block that may start before %begin.
    %f = ggemm.load_tile %dyt[%m, %k] k_begin(%begin) k_end(%end)
        : memref<4096x?xf8E4M3FN> -> !ggemm.tile<128x128xf8E4M3FN>
    // Gathered rows; a gate/up weight tile.
    %a = ggemm.load_tile %x[%row, %k] gather(%ri : memref<?xi32>, %row_end)
        : memref<?x2048xbf16> -> !ggemm.tile<128x64xbf16>
    %g = ggemm.load_tile %w[%widx, %half, %k] split(%n)
        : memref<8x1536x2048xbf16> -> !ggemm.tile<256x64xbf16>
    ```
  }];
  let arguments = (ins GGemm_OperandMemref:$source,
                   Variadic<GGemm_Index>:$indices,
                   Optional<GGemm_Index>:$k_end,
                   Optional<GGemm_I32Vector>:$gather,
                   Optional<GGemm_Index>:$gather_end,
                   Optional<GGemm_Index>:$split,
                   Optional<GGemm_Index>:$k_begin);
  let results = (outs GGemm_Tile:$tile);
  let builders = [
    OpBuilder<(ins "::mlir::Type":$tile, "::mlir::Value":$source,
                   "::mlir::ValueRange":$indices), [{
      build($_builder, $_state, tile, source, indices, ::mlir::Value(),
            ::mlir::Value(), ::mlir::Value(), ::mlir::Value(),
            ::mlir::Value());
    }]>,
    OpBuilder<(ins "::mlir::Type":$tile, "::mlir::Value":$source,
                   "::mlir::ValueRange":$indices, "::mlir::Value":$k_end), [{
      build($_builder, $_state, tile, source, indices, k_end,
            ::mlir::Value(), ::mlir::Value(), ::mlir::Value(),
            ::mlir::Value());
    }]>,
    OpBuilder<(ins "::mlir::Type":$tile, "::mlir::Value":$source,
                   "::mlir::ValueRange":$indices, "::mlir::Value":$k_begin,
                   "::mlir::Value":$k_end), [{
      build($_builder, $_state, tile, source, indices, k_end,
            ::mlir::Value(), ::mlir::Value(), ::mlir::Value(), k_begin);
    }]>
  ];
  let assemblyFormat = [{
    $source `[` $indices `]` (`k_begin` `(` $k_begin^ `)`)?
    (`k_end` `(` $k_end^ `)`)?
    (`gather` `(` $gather^ `:` type($gather) `,` $gather_end `)`)?
    (`split` `(` $split^ `)`)?
    attr-dict `:` type($source) `->` qualified(type($tile))
  }];
  let hasVerifier = 1;
}

def GGemm_SegmentBoundsOp : GGemm_Op<"segment_bounds",
    [MemoryEffects<[MemRead]>]> {
  let summary = "the rows of one segment, clamped";
  let description = [{
    Reads `seg_indptr[group]` and `seg_indptr[group + 1]` and returns the
    segment's rows `[begin, end)`, clamped as `ggemm.foreach_tile` clamps
    its segments (the offsets are device data): `begin = clamp(r[g], 0,
    num_rows)`, `end = clamp(r[g+1], begin, num_rows)`.

    The K-ragged tile program of `ggemm.segment_matmul_k` runs its K loop
    over these rows; the output tiles themselves are `uniform` (every
    group has the same `M x N` output), so the rows are not a row mapping
    of the tile loop but a bound of its K loop.

    On the CPU two `memref.load`s and the clamps (the tile schedule's own
    code); on the GPU two 32/64-bit global loads and the same clamps.

    ```mlir
    %begin, %end = ggemm.segment_bounds %indptr[%group] num_rows(%t)
        : memref<9xi32>
    ```
  }];
  let arguments = (ins GGemm_IndexVector:$seg_indptr, GGemm_Index:$group,
                   GGemm_Index:$num_rows);
  let results = (outs GGemm_Index:$begin, GGemm_Index:$end);
  let builders = [OpBuilder<(ins "::mlir::Value":$seg_indptr,
                                 "::mlir::Value":$group,
                                 "::mlir::Value":$num_rows), [{
    build($_builder, $_state, $_builder.getIndexType(),
          $_builder.getIndexType(), seg_indptr, group, num_rows);
  }]>];
  let assemblyFormat = [{
    $seg_indptr `[` $group `]` `num_rows` `(` $num_rows `)` attr-dict
    `:` type($seg_indptr)
  }];
}

def GGemm_MmaOp : GGemm_Op<"mma", [MemoryEffects<[MemRead]>,
                                   AllTypesMatch<["acc", "result"]>]> {
  let summary = "multiply one K block into an accumulator";
  let description = [{
    `result[i, j] = acc[i, j] + sum_k a[i, k] * b[j, k]`: `a` has the
    accumulator's rows (tokens), `b` its columns (weight rows, i.e. output
    columns), both over the same K block.

    On the GPU each consumer warpgroup issues `wgmma.fence`, one
    `wgmma.mma_async` (m64nNk16 for bf16/f16) per 16-wide K step of its 64
    rows, and `wgmma.commit_group`, then waits until at most `pending`
    groups are still in flight (`wgmma.wait_group pending`). `pending` is set
    by `ggemm-warp-specialize` (absent: 0, the product is complete). While
    groups are pending the result may only feed another `ggemm.mma`, or
    `ggemm.mma_wait`. On the CPU, loops in f32.

    After `ggemm-swap-ab`, `a` is the weight tile and `b` the token tile:
    the accumulator is the output tile transposed (see `ggemm.store_tile`'s
    `transposed`), and few tokens cost few wgmma columns (N is any multiple
    of 8) rather than 64 wgmma rows.

    A per-K-block scale (FP8 block-scale promotion) goes between the `mma`
    of one K block, started from `ggemm.zero_accumulator`, and the running
    accumulator.

    ```mlir
    %next = ggemm.mma %a, %b, %acc : !ggemm.tile<128x64xbf16>,
        !ggemm.tile<256x64xbf16> -> !ggemm.accumulator<128x256xf32>
    ```
  }];
  let arguments = (ins GGemm_Tile:$a, GGemm_Tile:$b,
                   GGemm_Accumulator:$acc,
                   OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<0>,
                                                       IntMaxValue<7>]>>:$pending);
  let results = (outs GGemm_Accumulator:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` qualified(type($a)) `,` qualified(type($b))
    `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def GGemm_LoadScalesOp : GGemm_Op<"load_scales", [MemoryEffects<[MemRead]>]> {
  let summary = "read the FP8 block scales of one K block";
  let description = [{
    Reads `count` scales (the result type's) of `source` at `indices`, one
    per dimension of `source`, consecutive along the second-to-last
    dimension (rows in units of scale blocks): `result[i] =
    source[..., r + i, kb]` for indices `[..., r, kb]`. Scales past the end
    of that dimension read as zero; the operand rows they would scale are
    zero too.

    For `1x128` activation scales `source` is `[M, K/128]` and the indices
    are the tile's first row and its K block; for `128x128` weight scales
    it is `[G, N/128, K/128]` at `[weight, col / 128, kb]`.

    On the GPU the producer loads them into the stage slot of the K block
    (`ggemm.ring_put`): activation scales by TMA, which needs the rows
    contiguous (an MN-major `memref<?x?xf32, strided<[1, ?]>>`, see
    docs/Design.md), weight scales with one load. On the CPU, a copy.

    ```mlir
    %sa = ggemm.load_scales %xs[%row, %kb]
        : memref<?x56xf32, strided<[1, ?]>> -> !ggemm.scales<128>
    %sb = ggemm.load_scales %ws[%widx, %cb, %kb]
        : memref<8x32x56xf32> -> !ggemm.scales<1>
    ```
  }];
  let arguments = (ins GGemm_F32Memref:$source, Variadic<GGemm_Index>:$indices);
  let results = (outs GGemm_Scales:$scales);
  let assemblyFormat = [{
    $source `[` $indices `]` attr-dict `:` type($source) `->` qualified(type($scales))
  }];
  let hasVerifier = 1;
}

def GGemm_PromoteOp : GGemm_Op<"promote", [Pure, AttrSizedOperandSegments,
                                           AllTypesMatch<["partial", "acc", "result"]>]> {
  let summary = "add one K block's scaled partial product into the accumulator";
  let description = [{
    FP8 block-scale promotion: `result[i, j] = acc[i, j] + partial[i, j] *
    a[i * |a| / R] * b[j * |b| / C]` for an `R x C` accumulator, where
    `partial` is the product of one K block (a `ggemm.mma` started from
    `ggemm.zero_accumulator`) and `a`, `b` are the block's activation and
    weight scales (`!ggemm.scales`; a missing one counts as 1). It keeps
    the sum in f32 per K block, as DeepGEMM does, rather than scaling once
    at the end, which block scales that change along K do not allow.

    A tile whose width neither divides nor is a multiple of the weight
    scale block (192 columns of 128-column blocks) starts at a different
    place in its first block from one tile to the next: `b_offset` gives
    that place and `b_block` the block's columns, and column `j` uses
    `b[(j + b_offset) / b_block]` (`|b|` is then the most blocks such a
    tile covers, 2 for 192 of 128). `b_block` and the columns are multiples
    of 8; `b_offset` must be below `b_block` and a multiple of gcd(columns,
    `b_block`), as for a tile that starts at a multiple of its width (what
    ggemm-tile writes).

    On the GPU each consumer thread scales the partial in its registers
    (its rows' activation scales and its columns' weight scales read from
    the stage slot) and adds it into the accumulator registers; the
    partial's mma must have finished (no `pending`). On the CPU, loops.

    ```mlir
    %next = ggemm.promote %p into %acc a_scales(%sa : !ggemm.scales<128>)
        b_scales(%sb : !ggemm.scales<1>) : !ggemm.accumulator<128x128xf32>
    %wide = ggemm.promote %p into %acc a_scales(%sa : !ggemm.scales<128>)
        b_scales(%sb : !ggemm.scales<2>) b_offset(%off) {b_block = 128 : i64}
        : !ggemm.accumulator<128x192xf32>
    ```
  }];
  let arguments = (ins GGemm_Accumulator:$partial, GGemm_Accumulator:$acc,
                   Optional<GGemm_Scales>:$a_scales,
                   Optional<GGemm_Scales>:$b_scales,
                   Optional<GGemm_Index>:$b_offset,
                   OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$b_block);
  let results = (outs GGemm_Accumulator:$result);
  let assemblyFormat = [{
    $partial `into` $acc
    (`a_scales` `(` $a_scales^ `:` qualified(type($a_scales)) `)`)?
    (`b_scales` `(` $b_scales^ `:` qualified(type($b_scales)) `)`)?
    (`b_offset` `(` $b_offset^ `)`)?
    attr-dict `:` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def GGemm_MmaWaitOp : GGemm_Op<"mma_wait", [AllTypesMatch<["acc", "result"]>]> {
  let summary = "wait until every pending mma of an accumulator has finished";
  let description = [{
    Returns `acc` once no `ggemm.mma` into it is in flight
    (`wgmma.wait_group 0` on the GPU; nothing on the CPU).

    ```mlir
    %done = ggemm.mma_wait %acc : !ggemm.accumulator<128x256xf32>
    ```
  }];
  let arguments = (ins GGemm_Accumulator:$acc);
  let results = (outs GGemm_Accumulator:$result);
  let assemblyFormat = "$acc attr-dict `:` qualified(type($acc))";
}

def GGemm_StoreTileOp : GGemm_Op<"store_tile", [AttrSizedOperandSegments]> {
  let summary = "epilogue and masked store of an accumulator tile";
  let description = [{
    Applies the epilogue to `acc` and writes the rows `[row, min(row +
    block_m, row_end))` and columns `[col, min(col + block_n, N))` of `y`;
    nothing else is written. `bias` is read at row `weight` (the tile's
    weight matrix), `row_scale` at the output row.

    `transposed` (written by `ggemm-swap-ab`): the accumulator holds the
    tile transposed, one accumulator row per output column and one column
    per output row, `y[row + j, col + i] = epilogue(acc[i, j])`, with the
    same row mask (`row + j < row_end`) and column mask (`col + i < N`).

    On the GPU the consumer warpgroups write their wgmma fragments with
    row-masked global stores; on the CPU, loops. With a `staging`
    (`#ggemm.store_staging`, set by `ggemm-tma-store`), a warpgroup whose
    64 rows all lie before `row_end` writes them through shared memory and
    TMA stores instead (columns past N are clipped by TMA), when y's address
    and row stride are 16-byte aligned (the runtime passes y's descriptor
    then); a warpgroup with rows at or past `row_end` (the next segment's)
    uses the masked stores. `staging` needs an accumulator of at least 64
    rows that is not `transposed`, and `cols` elements of y in 128 bytes.
    A `scatter`ed store is staged with `row_stores` (each box row stored at
    its scattered y row; rows at or past `row_end` are not stored, so every
    warpgroup stages) and without `accumulate`.

    With a gated epilogue (`activation = swiglu`) the accumulator's first
    half of columns holds the gate and the second half the up values of
    the same output columns: the tile writes `y[row + i, col + j]` for `j <
    C / 2` (C the accumulator's columns), and reads the bias at columns
    `col + j` and `N + col + j`.

    FP8 with tensor-wise or per-row scales (`x_scale`, `w_scale`; written
    by `ggemm-tile`): these scales do not change along K, so the tile's
    accumulator holds the whole unscaled product and the store scales it
    first, `v = acc[m, n] * sx(m) * sw(n)`, then adds the bias and so on.
    `x_scale(%xs[%i] : memref<1xf32>)` with an index is tensor-wise, `sx(m)
    = xs[i]`; without one, `x_scale(%xs : memref<?xf32>)` is per row, read
    at the output row like `row_scale`. `w_scale(%ws[%w] : ...)` is read at
    weight `w`: `memref<Gxf32>` is one scale per weight matrix, `sw(n) =
    ws[w]`, and `memref<GxNxf32>` one per output channel, `sw(n) = ws[w,
    n]`. On the GPU the tensor-wise factors are loaded once per tile, the
    per-row ones once per fragment row (as `row_scale`), the per-channel
    ones per column (as `bias`).

    `scatter` (`[M]` i32): row `r` of the tile's rows goes to y row
    `scatter[r]`, or nowhere when that is outside y; `row_scale` is still
    read at `r`. An `atomic` epilogue adds it in with atomic adds.

    `y_scale` (an e4m3 `y`, `[rows, ceil(N/128)]` f32): the tile's
    epilogue values are quantised per row and 128 columns, `y_scale[r, j]
    = amax * f32(1/448)` with `amax = max(max |v|, 1e-4)` over the block's
    columns before N, `y = e4m3(v * ((1 / amax) * 448))`, as
    `ggemm.quantize` does with `1x128` blocks; the tile's columns are whole
    blocks (`col` and the accumulator's columns, halved when gated, are
    multiples of 128), it is not `transposed`, and there is no accumulate,
    atomic or scatter. On the GPU each row's block maximum is a quad's:
    four lanes hold a row's 128 columns of a wgmma fragment; a `staging`
    box of 128 e4m3 columns is one block of each of its rows.

    ```mlir
    ggemm.store_tile %acc to %y row(%row) row_end(%end) col(%col)
        bias(%b[%widx] : memref<4x256xf32>)
        {epilogue = #ggemm.epilogue<activation = silu>}
        : !ggemm.accumulator<128x256xf32>, memref<?x256xbf16>
    // FP8, per-token activation and per-channel weight scales.
    ggemm.store_tile %acc to %y row(%row) row_end(%end) col(%col)
        x_scale(%xs : memref<?xf32>) w_scale(%ws[%widx] : memref<4x256xf32>)
        : !ggemm.accumulator<128x256xf32>, memref<?x256xbf16>
    // FP8, tensor-wise scales (FlashInfer's bmm_fp8).
    ggemm.store_tile %acc to %y row(%row) row_end(%end) col(%col)
        x_scale(%xs[%c0] : memref<1xf32>) w_scale(%ws[%widx] : memref<4xf32>)
        : !ggemm.accumulator<128x256xf32>, memref<?x256xbf16>
    // An e4m3 y for the next FP8 layer, with its MN-major 1x128 scales.
    ggemm.store_tile %acc to %y row(%row) row_end(%end) col(%col)
        y_scale(%ys : memref<?x2xf32, strided<[1, ?]>>)
        : !ggemm.accumulator<128x256xf32>, memref<?x256xf8E4M3FN>
    ```
  }];
  let arguments = (ins GGemm_Accumulator:$acc, GGemm_OutMatrix:$y,
                   GGemm_Index:$row, GGemm_Index:$row_end, GGemm_Index:$col,
                   Optional<GGemm_F32Matrix>:$bias,
                   Optional<GGemm_Index>:$weight,
                   Optional<GGemm_F32Vector>:$row_scale,
                   Optional<GGemm_F32Vector>:$x_scale,
                   Optional<GGemm_Index>:$x_scale_index,
                   Optional<GGemm_F32Memref>:$w_scale,
                   Optional<GGemm_Index>:$w_scale_index,
                   Optional<GGemm_I32Vector>:$scatter,
                   Optional<GGemm_F32Matrix>:$y_scale,
                   OptionalAttr<GGemm_EpilogueAttr>:$epilogue,
                   UnitAttr:$transposed,
                   OptionalAttr<GGemm_StoreStagingAttr>:$staging);
  let assemblyFormat = [{
    $acc `to` $y `row` `(` $row `)` `row_end` `(` $row_end `)` `col` `(` $col `)`
    (`transposed` $transposed^)?
    (`bias` `(` $bias^ `[` $weight `]` `:` type($bias) `)`)?
    (`row_scale` `(` $row_scale^ `:` type($row_scale) `)`)?
    (`x_scale` `(` $x_scale^ (`[` $x_scale_index^ `]`)? `:` type($x_scale) `)`)?
    (`w_scale` `(` $w_scale^ `[` $w_scale_index `]` `:` type($w_scale) `)`)?
    (`scatter` `(` $scatter^ `:` type($scatter) `)`)?
    (`y_scale` `(` $y_scale^ `:` type($y_scale) `)`)?
    attr-dict `:` qualified(type($acc)) `,` type($y)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// FP8 epilogue scales: x's per row (no index) rather than tensor-wise.
    bool hasPerRowXScale() { return getXScale() && !getXScaleIndex(); }
    /// w's per output channel (`[G, N]`) rather than one per weight matrix.
    bool hasPerChannelWScale() {
      return getWScale() &&
             ::llvm::cast<::mlir::MemRefType>(getWScale().getType())
                     .getRank() == 2;
    }
  }];
}

#endif // GGEMM_TILE_OPS_TD
