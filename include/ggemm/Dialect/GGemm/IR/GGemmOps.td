//===- GGemmOps.td - ggemm operations ---------------------*- tablegen -*-===//
#ifndef GGEMM_OPS_TD
#define GGEMM_OPS_TD

include "ggemm/Dialect/GGemm/IR/GGemmDialect.td"
include "ggemm/Dialect/GGemm/IR/GGemmAttrs.td"
include "ggemm/Dialect/GGemm/IR/GGemmTypes.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Operand constraints
//===----------------------------------------------------------------------===//

def GGemm_OperandElement : AnyTypeOf<[BF16, F16, F8E4M3FN, F8E5M2, I8]>;
def GGemm_OutputElement : AnyTypeOf<[BF16, F16, F32]>;
// y of the forward ops may also be e4m3, with its 1x128 scales (y_scale).
def GGemm_YElement : AnyTypeOf<[BF16, F16, F32, F8E4M3FN]>;
def GGemm_IndexElement : AnyTypeOf<[I32, I64]>;

// Each is GGemm_Checked: a wrong type is reported under the operand's name.
def GGemm_Matrix : GGemm_Checked<MemRefRankOf<[GGemm_OperandElement], [2]>>;
def GGemm_Batch : GGemm_Checked<MemRefRankOf<[GGemm_OperandElement], [3]>>;
def GGemm_OperandMemref : GGemm_Checked<MemRefOf<[GGemm_OperandElement]>>;
def GGemm_OutMatrix : GGemm_Checked<MemRefRankOf<[GGemm_YElement], [2]>>;
def GGemm_OutBatch : GGemm_Checked<MemRefRankOf<[GGemm_YElement], [3]>>;
def GGemm_IndexVector : GGemm_Checked<MemRefRankOf<[GGemm_IndexElement], [1]>>;
def GGemm_I32Vector : GGemm_Checked<MemRefRankOf<[I32], [1]>>;
def GGemm_ScaleTensor : GGemm_Checked<MemRefOf<[F32]>>;
def GGemm_F32Memref : GGemm_Checked<MemRefOf<[F32]>>;
def GGemm_F32Vector : GGemm_Checked<MemRefRankOf<[F32], [1]>>;
def GGemm_F32Matrix : GGemm_Checked<MemRefRankOf<[F32], [2]>>;
def GGemm_F32Batch : GGemm_Checked<MemRefRankOf<[F32], [3]>>;
def GGemm_GradBatch : GGemm_Checked<MemRefRankOf<[GGemm_OutputElement], [3]>>;
def GGemm_HighMatrixOrBatch
    : GGemm_Checked<MemRefRankOf<[BF16, F16, F32], [2, 3]>>;
def GGemm_Fp8MatrixOrBatch
    : GGemm_Checked<MemRefRankOf<[F8E4M3FN, F8E5M2], [2, 3]>>;
def GGemm_F32MatrixOrBatch : GGemm_Checked<MemRefRankOf<[F32], [2, 3]>>;
def GGemm_Index : GGemm_Checked<Index>;
def GGemm_Bool : GGemm_Checked<I1>;

// Attributes and optional operands shared by the problem-level ops.
class GGemm_ProblemOp<string mnemonic, list<Trait> traits = []>
    : GGemm_Op<mnemonic, !listconcat(traits, [AttrSizedOperandSegments])> {
  code problemDecls = [{
    /// Element type of the activation operand.
    ::mlir::Type getAElementType();
    /// Element type of the weight operand.
    ::mlir::Type getBElementType();
  }];
}

//===----------------------------------------------------------------------===//
// Problem level
//===----------------------------------------------------------------------===//

def GGemm_SegmentMatmulOp : GGemm_ProblemOp<"segment_matmul"> {
  let summary = "ragged grouped matmul over row segments";
  let description = [{
    `y[s_i:s_(i+1)] = epilogue(x[s_i:s_(i+1)] · W[idx_i]ᵀ)` for each group
    `i < G`, where `s = seg_indptr` (a device-side `[G+1]` i32 or i64 array,
    non-decreasing, `s_0 = 0`, `s_G <= M`) and `idx = weight_indices` (an
    optional device-side `[G]` i32 array; without it `idx_i = i`).
    Weights are `[Gw, N, K]` (`weight_layout = nk`, default) or `[Gw, K, N]`
    (`kn`). Rows of `y` outside every segment are never written. Segments
    may be empty.

    Covers FlashInfer's segment GEMM, megablox `gmm`, `torch._grouped_mm`
    (2D x 3D) and DeepGEMM's contiguous layout, without padding groups to
    the tile size.

    FP8 operands (`f8E4M3FN`, `f8E5M2`) need `scales`: `x_scale` with
    `x_scale_block` and `w_scale` with `w_scale_block` (see
    `#ggemm.scale_block`), applied before the epilogue. INT8 operands (`i8`,
    signed) need them too, tensor-wise or per-row only: the int32 sum of
    `x · Wᵀ` (exact: wgmma's `s32.s8.s8`) is converted to f32 and scaled
    before the epilogue (aiter's `int8_gemm`).

    An e4m3 `y` (`f8E4M3FN`) is quantised in the epilogue for the next FP8
    layer, with `y_scale` (`[M, ceil(N/128)]` f32, any strides; masked and
    batched: `[G, Mmax, ceil(N/128)]` with the group stride `Mmax` times the
    row stride): for each row and 128 columns the epilogue's f32 values `v`
    (everything but `accumulate`) give `amax = max(max |v|, 1e-4)`, `y_scale
    = amax * f32(1/448)` and `y = e4m3(v * ((1 / amax) * 448))` (round to
    nearest even, saturating), the arithmetic of `ggemm.quantize` with
    `1x128` blocks. MN-major `y_scale` (rows contiguous) feeds the next FP8
    op's `x_scale` as it is. Not with `accumulate`, `atomic` or
    `scatter_indices`; tiles whole 128-column blocks of y, not swapped.

    MoE layers without glue (issue 13):
    - `row_indices` (optional, device-side `[M]` i32) gathers x: segment
      row `r` reads `x[row_indices[r]]`, so tokens stay in their original
      order and no permuted copy of x is made. x is then `[T, K]` with any
      T; `M` is the length of `row_indices` (what `seg_indptr` indexes,
      and the rows of `row_scale`). An index outside `[0, T)` reads zeros.
    - `scatter_indices` (optional, device-side `[M]` i32) scatters y:
      result row `r` goes to `y[scatter_indices[r]]`; y is then `[Y, N]`
      with any Y, rows no index points to are not written, and an index
      outside `[0, Y)` writes nothing. Without `atomic` each row of y
      should be the target of one segment row (two writes to one row leave
      either); with `#ggemm.epilogue<accumulate = true, atomic = true>` the
      rows are added in with atomic adds: the top-k combine of a MoE
      layer, routing weights as `row_scale`.
    - `#ggemm.epilogue<activation = swiglu>`: w holds `2N` rows, gate then
      up (see `#ggemm.epilogue`), and y the N columns of
      `silu(gate) * up`.

    `expected_m` (optional, positive) is the expected number of rows per
    group, a tuning hint for `ggemm-select-config` when the rows are only
    known at run time (it wins over the pass's `expected-rows` option, and
    with it the op gets one tile config rather than several variants).

    Lowers (through `ggemm-tile`) to a `ggemm.foreach_tile` with
    `row_mapping = segment`, then to one persistent WGMMA + TMA kernel.

    ```mlir
    ggemm.segment_matmul ins(%x, %w : memref<?x7168xbf16>, memref<8x4096x7168xbf16>)
        segments(%indptr : memref<9xi32>)
        outs(%y : memref<?x4096xbf16>)
    ggemm.segment_matmul ins(%x, %w : memref<?x512xf8E4M3FN>, memref<4x256x512xf8E4M3FN>)
        segments(%indptr : memref<5xi64>)
        weight_indices(%idx : memref<4xi32>)
        scales(%xs, %ws : memref<?x4xf32>, memref<4x2x4xf32>)
        bias(%b : memref<4x256xf32>)
        outs(%y : memref<?x256xbf16>)
        {epilogue = #ggemm.epilogue<activation = silu>,
         x_scale_block = #ggemm.scale_block<1x128>,
         w_scale_block = #ggemm.scale_block<128x128>}
    // A MoE FFN's up projection on tokens in their own order, SwiGLU fused.
    ggemm.segment_matmul ins(%x, %w13 : memref<?x2048xbf16>, memref<128x1536x2048xbf16>)
        segments(%indptr : memref<129xi32>)
        row_indices(%token_of_row : memref<?xi32>)
        outs(%h : memref<?x768xbf16>)
        {epilogue = #ggemm.epilogue<activation = swiglu>}
    // Its down projection, weighted and summed into the tokens' rows.
    ggemm.segment_matmul ins(%h, %w2 : memref<?x768xbf16>, memref<128x2048x768xbf16>)
        segments(%indptr : memref<129xi32>)
        row_scale(%routing_weight : memref<?xf32>)
        scatter_indices(%token_of_row : memref<?xi32>)
        outs(%out : memref<?x2048xf32>)
        {epilogue = #ggemm.epilogue<accumulate = true, atomic = true>}
    ```
  }];
  let arguments = (ins GGemm_Matrix:$x, GGemm_Batch:$w,
                   GGemm_IndexVector:$seg_indptr,
                   Optional<GGemm_I32Vector>:$weight_indices,
                   Optional<GGemm_I32Vector>:$row_indices,
                   Optional<GGemm_ScaleTensor>:$x_scale,
                   Optional<GGemm_ScaleTensor>:$w_scale,
                   Optional<GGemm_F32Matrix>:$bias,
                   Optional<GGemm_F32Vector>:$row_scale,
                   Optional<GGemm_I32Vector>:$scatter_indices,
                   GGemm_OutMatrix:$y,
                   Optional<GGemm_F32Matrix>:$y_scale,
                   DefaultValuedAttr<GGemm_WeightLayoutAttr,
                       "::mlir::ggemm::WeightLayout::nk">:$weight_layout,
                   OptionalAttr<GGemm_EpilogueAttr>:$epilogue,
                   OptionalAttr<GGemm_ScaleBlockAttr>:$x_scale_block,
                   OptionalAttr<GGemm_ScaleBlockAttr>:$w_scale_block,
                   OptionalAttr<GGemm_TileConfigAttr>:$config,
                   OptionalAttr<I64Attr>:$expected_m);
  let assemblyFormat = [{
    `ins` `(` $x `,` $w `:` type($x) `,` type($w) `)`
    `segments` `(` $seg_indptr `:` type($seg_indptr) `)`
    (`weight_indices` `(` $weight_indices^ `:` type($weight_indices) `)`)?
    (`row_indices` `(` $row_indices^ `:` type($row_indices) `)`)?
    (`scales` `(` $x_scale^ `,` $w_scale `:` type($x_scale) `,` type($w_scale) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`row_scale` `(` $row_scale^ `:` type($row_scale) `)`)?
    (`scatter_indices` `(` $scatter_indices^ `:` type($scatter_indices) `)`)?
    `outs` `(` $y `:` type($y) `)`
    (`y_scale` `(` $y_scale^ `:` type($y_scale) `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = problemDecls;
}

def GGemm_MaskedMatmulOp : GGemm_ProblemOp<"masked_matmul"> {
  let summary = "grouped matmul with a device-side count of valid rows per group";
  let description = [{
    `y[g, :m_g] = epilogue(x[g, :m_g] · W[g]ᵀ)` with `m_g = masked_m[g]`
    (a device-side `[G]` i32 or i64 array, clamped to `Mmax`); rows
    `y[g, m_g:]` are not written. This is DeepGEMM's "masked" layout used
    for decoding with CUDA graphs.

    `expected_m` (optional, positive, at most `Mmax` when that is static) is
    the expected number of valid rows per group, DeepGEMM's `expected_m`:
    `ggemm-select-config` picks one tile config for it. Without it the
    valid rows are unknown (`Mmax` only bounds them), and the pass may
    emit several variants chosen per launch (see `ggemm-select-config`).

    ```mlir
    ggemm.masked_matmul ins(%x, %w : memref<8x256x7168xbf16>, memref<8x4096x7168xbf16>)
        masked_m(%counts : memref<8xi32>)
        outs(%y : memref<8x256x4096xbf16>)
    ```
  }];
  let arguments = (ins GGemm_Batch:$x, GGemm_Batch:$w,
                   GGemm_IndexVector:$masked_m,
                   Optional<GGemm_ScaleTensor>:$x_scale,
                   Optional<GGemm_ScaleTensor>:$w_scale,
                   Optional<GGemm_F32Matrix>:$bias,
                   Optional<GGemm_F32Matrix>:$row_scale,
                   GGemm_OutBatch:$y,
                   Optional<GGemm_F32Batch>:$y_scale,
                   DefaultValuedAttr<GGemm_WeightLayoutAttr,
                       "::mlir::ggemm::WeightLayout::nk">:$weight_layout,
                   OptionalAttr<GGemm_EpilogueAttr>:$epilogue,
                   OptionalAttr<GGemm_ScaleBlockAttr>:$x_scale_block,
                   OptionalAttr<GGemm_ScaleBlockAttr>:$w_scale_block,
                   OptionalAttr<GGemm_TileConfigAttr>:$config,
                   OptionalAttr<I64Attr>:$expected_m);
  let assemblyFormat = [{
    `ins` `(` $x `,` $w `:` type($x) `,` type($w) `)`
    `masked_m` `(` $masked_m `:` type($masked_m) `)`
    (`scales` `(` $x_scale^ `,` $w_scale `:` type($x_scale) `,` type($w_scale) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`row_scale` `(` $row_scale^ `:` type($row_scale) `)`)?
    `outs` `(` $y `:` type($y) `)`
    (`y_scale` `(` $y_scale^ `:` type($y_scale) `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = problemDecls;
}

def GGemm_BatchedMatmulOp : GGemm_ProblemOp<"batched_matmul"> {
  let summary = "batched matmul with one weight per batch";
  let description = [{
    `y[b] = epilogue(x[b] · W[b]ᵀ)` for `b < B`; `x` is `[B, M, K]`, `W` is
    `[B, N, K]` (`nk`) or `[B, K, N]` (`kn`), `y` is `[B, M, N]`
    (FlagGems `bmm`, aiter `batched_gemm`).

    `expected_m` (optional, positive, at most `M` when that is static) is
    the expected `M` when `M` is dynamic, a hint for `ggemm-select-config`.

    ```mlir
    ggemm.batched_matmul ins(%x, %w : memref<4x100x256xbf16>, memref<4x256x256xbf16>)
        outs(%y : memref<4x100x256xf32>)
    ```
  }];
  let arguments = (ins GGemm_Batch:$x, GGemm_Batch:$w,
                   Optional<GGemm_ScaleTensor>:$x_scale,
                   Optional<GGemm_ScaleTensor>:$w_scale,
                   Optional<GGemm_F32Matrix>:$bias,
                   Optional<GGemm_F32Matrix>:$row_scale,
                   GGemm_OutBatch:$y,
                   Optional<GGemm_F32Batch>:$y_scale,
                   DefaultValuedAttr<GGemm_WeightLayoutAttr,
                       "::mlir::ggemm::WeightLayout::nk">:$weight_layout,
                   OptionalAttr<GGemm_EpilogueAttr>:$epilogue,
                   OptionalAttr<GGemm_ScaleBlockAttr>:$x_scale_block,
                   OptionalAttr<GGemm_ScaleBlockAttr>:$w_scale_block,
                   OptionalAttr<GGemm_TileConfigAttr>:$config,
                   OptionalAttr<I64Attr>:$expected_m);
  let assemblyFormat = [{
    `ins` `(` $x `,` $w `:` type($x) `,` type($w) `)`
    (`scales` `(` $x_scale^ `,` $w_scale `:` type($x_scale) `,` type($w_scale) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`row_scale` `(` $row_scale^ `:` type($row_scale) `)`)?
    `outs` `(` $y `:` type($y) `)`
    (`y_scale` `(` $y_scale^ `:` type($y_scale) `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = problemDecls;
}

def GGemm_SegmentMatmulKOp : GGemm_Op<"segment_matmul_k",
                                      [AttrSizedOperandSegments]> {
  let summary = "K-ragged grouped matmul for weight gradients";
  let description = [{
    `dw[g] = dy[s_g:s_(g+1)]ᵀ · x[s_g:s_(g+1)]` for each group `g < G`: the
    reduction runs over each group's rows (megablox `tgmm`,
    `torch._grouped_mm` 2D x 2D). `dy` is `[M, N]`, `x` is `[M, K]`, `dw` is
    `[G, N, K]` (`nk`) or `[G, K, N]` (`kn`). `dw` is f32 (gradient
    accumulation), bf16 or f16; the sum is kept in f32 and rounded once.

    With `transposed`, `dy` and `x` are given with the tokens innermost,
    `[N, M]` and `[K, M]` (K-major for the product), and `dw[g] = dy[:,
    s_g:s_(g+1)] · x[:, s_g:s_(g+1)]ᵀ`: DeepGEMM's
    `k_grouped_fp8_gemm_nt_contiguous` layout. FP8 (`f8E4M3FN`, `f8E5M2`)
    operands need it, since wgmma's FP8 forms read K-major operands only
    (the CPU reference runs both FP8 types, the GPU back end e4m3), and
    need `scales` (both): `dy_scale` `[N, ceil(M / 128)]` and `x_scale` `[K,
    ceil(M / 128)]` f32, the scale of `dy[n, t]` being `dy_scale[n, t /
    128]` (1x128 blocks along the tokens, counted from token 0 whatever the
    segments). The product of each 128-token block is scaled and summed in
    f32 (`ggemm.promote`), so a segment may start or end anywhere: the
    K blocks of a segment are the 128-aligned blocks it overlaps, and the
    tokens of a block outside the segment are masked on both sides. On the
    GPU the scales must be MN-major (`strided<[1, ?]>`), like the forward
    ops' activation scales.

    Every `dw[g]` is written, whatever its segment: an empty segment
    (`s_g == s_(g+1)`) writes zeros, and with `accumulate` (`dw[g] +=
    ...`) adds zero, which leaves `dw[g]` unchanged. Offsets are clamped
    like `ggemm.segment_matmul`'s (`ggemm.segment_bounds`): rows past `M`
    are in no segment and a decreasing offset gives an empty one.

    Lowers (through `ggemm-tile`) to a `ggemm.foreach_tile` with
    `row_mapping = uniform` over the `G x N` rows of `dw` seen as a
    `[G * N, K]` matrix, i.e. tiles over (group, n-tile, k-tile), and a K
    loop over the group's rows (`ggemm.segment_bounds`) in `block_k` steps.
    Without `transposed` both operand tiles are `mn_major` (a `[block_k,
    block_m]` box of `dy` is contiguous along its columns), with it
    `k_major`. Every load is masked at the segment's end
    (`ggemm.load_tile ... k_end`): the last K block must not read the next
    group's rows. Transposed, the K blocks are aligned to `block_k` (a TMA
    box's innermost coordinate must be 16-byte aligned; with FP8 they are
    the scale blocks), so the first one is masked at the segment's start
    too (`k_begin`). Both back ends run it: the CPU reference masks in its copy; on
    the GPU the producer's TMA loads whole boxes and the consumers zero the
    rows past the segment's end in shared memory (`ggemm.zero_k_tail`,
    written by `ggemm-warp-specialize`).

    ```mlir
    ggemm.segment_matmul_k ins(%dy, %x : memref<?x4096xbf16>, memref<?x7168xbf16>)
        segments(%indptr : memref<9xi32>)
        outs(%dw : memref<8x4096x7168xf32>) {accumulate}
    // FP8 weight gradients, DeepGEMM's layout: dy [N, T], x [K, T].
    ggemm.segment_matmul_k ins(%dyt, %xt : memref<4096x?xf8E4M3FN>, memref<7168x?xf8E4M3FN>)
        segments(%indptr : memref<9xi32>)
        scales(%dys, %xs : memref<4096x?xf32, strided<[1, ?]>>,
                           memref<7168x?xf32, strided<[1, ?]>>)
        outs(%dw : memref<8x4096x7168xf32>) {transposed}
    ```
  }];
  let arguments = (ins GGemm_Matrix:$dy, GGemm_Matrix:$x,
                   GGemm_IndexVector:$seg_indptr,
                   Optional<GGemm_F32Matrix>:$dy_scale,
                   Optional<GGemm_F32Matrix>:$x_scale,
                   GGemm_GradBatch:$dw,
                   DefaultValuedAttr<GGemm_WeightLayoutAttr,
                       "::mlir::ggemm::WeightLayout::nk">:$weight_layout,
                   UnitAttr:$accumulate,
                   UnitAttr:$transposed,
                   OptionalAttr<GGemm_TileConfigAttr>:$config);
  let assemblyFormat = [{
    `ins` `(` $dy `,` $x `:` type($dy) `,` type($x) `)`
    `segments` `(` $seg_indptr `:` type($seg_indptr) `)`
    (`scales` `(` $dy_scale^ `,` $x_scale `:` type($dy_scale) `,` type($x_scale) `)`)?
    `outs` `(` $dw `:` type($dw) `)`
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of token rows: dy's rows, or its columns when transposed.
    unsigned getTokenDim() { return getTransposed() ? 1 : 0; }
  }];
}

def GGemm_QuantizeOp : GGemm_Op<"quantize"> {
  let summary = "bf16/f16 to FP8 with 1x128 (per token) or 128x128 (per "
                "block) scales";
  let description = [{
    Quantises `x` (`[rows, K]` or `[G, rows, K]`) to the FP8 type of `q`
    with one f32 scale per `R x C` block of the `[rows, K]` view, where
    `scale_block = #ggemm.scale_block<RxC>` (default `1x128`, elided):
    `1x128` are DeepSeek-V3's per-token activation scales, `128x128` its
    per-block weight scales. For block `(i, j)` (rows `[iR, (i+1)R)`, the
    last block of rows may be partial; columns `[jC, (j+1)C)`):

    ```
    amax       = max(max(|x[r, c]|) over the block, 1e-4)
    scale[i, j] = amax * rcp    // rcp = 1 / fp8_max rounded to f32
    q[r, c]    = fp8(x[r, c] * ((1 / amax) * fp8_max))
    ```

    with `fp8` rounding to nearest even and saturating at `+-fp8_max`
    (448 for e4m3, 57344 for e5m2). This is DeepGEMM's
    `per_token_cast_to_fp8` / `per_block_cast_to_fp8` operation for
    operation as torch runs it on the GPU (`448 / amax` is a reciprocal then
    a product; `amax / 448` a product with 448's f32 reciprocal, which
    differs from a true division in the last bit for about half of the
    blocks), so the bytes match DeepGEMM's and the torch path's bit for
    bit. The floor keeps an all-zero block finite: its scale
    is `1e-4 * rcp` and its bytes 0. `C` must divide K.

    `scale` is `[lead..., ceil(rows / R), K / C]` in any strided layout,
    so the MN-major activation scales the FP8 GEMMs read
    (`memref<?xKBxf32, strided<[1, ?]>>`) are written in place, and the
    `[G, N/128, K/128]` row-major weight scales likewise.

    `ggemm-to-cpu` lowers it to loops (`convert-ggemm-to-loops`, an exact
    integer FP8 encoder), `ggemm-to-ptx` to a memory-bound kernel
    (`convert-ggemm-to-nvvm`): 16-byte loads, one warp per 128-column
    block of 1 or 128 rows, the block's maximum by warp shuffles,
    `cvt.rn.satfinite.e4m3x2.f32` to pack, a grid-stride loop over the
    blocks.

    ```mlir
    ggemm.quantize ins(%x : memref<?x7168xbf16>)
        outs(%q, %s : memref<?x7168xf8E4M3FN>, memref<?x56xf32, strided<[1, ?]>>)
    ggemm.quantize ins(%w : memref<8x4096x7168xbf16>)
        outs(%wq, %ws : memref<8x4096x7168xf8E4M3FN>, memref<8x32x56xf32>)
        {scale_block = #ggemm.scale_block<128x128>}
    ```
  }];
  let arguments = (ins GGemm_HighMatrixOrBatch:$x,
                   GGemm_Fp8MatrixOrBatch:$q,
                   GGemm_F32MatrixOrBatch:$scale,
                   OptionalAttr<GGemm_ScaleBlockAttr>:$scale_block);
  let assemblyFormat = [{
    `ins` `(` $x `:` type($x) `)`
    `outs` `(` $q `,` $scale `:` type($q) `,` type($scale) `)`
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The scale block, `1x128` when the attribute is absent.
    ScaleBlockAttr getBlockShape() {
      if (ScaleBlockAttr block = getScaleBlockAttr())
        return block;
      return ScaleBlockAttr::get(getContext(), 1, 128);
    }
    /// fp8_max of q's element type (448 for e4m3, 57344 for e5m2).
    double getFp8Max() {
      return ::llvm::isa<Float8E4M3FNType>(getQ().getType().getElementType())
                 ? 448.0
                 : 57344.0;
    }
  }];
}

def GGemm_SortByExpertOp : GGemm_Op<"sort_by_expert"> {
  let summary = "MoE routing: (token, k) pairs sorted by expert, on the device";
  let description = [{
    A token `t` routed to experts `topk_ids[t * topk + j]`, `j < topk`, makes
    `topk` pairs, pair `p = t * topk + j`. The op sorts the `P` pairs of
    `topk_ids` (a device-side `[P]` i32 or i64 array, `P` a multiple of
    `topk`) by expert, stably (pairs of one expert keep their order), and
    writes what a gathered `ggemm.segment_matmul` and its scatter need:

    - `seg_indptr` (`[E + 1]` i32, E static): expert `e`'s pairs are the
      sorted rows `[seg_indptr[e], seg_indptr[e + 1])`; `seg_indptr[e]` is
      the number of pairs whose expert id is below `e`. Ids outside
      `[0, E)` (another rank's expert, a padding id such as -1) are in no
      segment: the negative ones sort before `seg_indptr[0]`, those from E
      on after `seg_indptr[E]`;
    - `row_indices` (`[P]` i32): the token of each sorted row, `p / topk`
      (the up projection's gather indices);
    - `pair_indices` (`[P]` i32): the pair of each sorted row, `p` (the
      down projection's scatter indices into a `[T, topk, H]` output).

    `ggemm-to-ptx` lowers it to one kernel of one CTA of 1024 threads
    (`convert-ggemm-to-nvvm`): each warp histograms a contiguous range of
    the pairs into its own shared-memory counters, the counters are scanned
    per expert (warp order) and over the experts, and each warp places its
    pairs in order, ranking equal experts within a warp with `match.sync`.
    Nothing goes through the host, so a CUDA graph can capture it next to
    the GEMMs. `ggemm-to-cpu` lowers it to a counting sort in loops.

    ```mlir
    ggemm.sort_by_expert ins(%topk_ids : memref<?xi32>)
        outs(%seg_indptr, %row_indices, %pair_indices :
             memref<257xi32>, memref<?xi32>, memref<?xi32>) {topk = 8}
    ```
  }];
  let arguments = (ins GGemm_IndexVector:$topk_ids,
                   GGemm_I32Vector:$seg_indptr,
                   GGemm_I32Vector:$row_indices,
                   GGemm_I32Vector:$pair_indices,
                   I64Attr:$topk);
  let assemblyFormat = [{
    `ins` `(` $topk_ids `:` type($topk_ids) `)`
    `outs` `(` $seg_indptr `,` $row_indices `,` $pair_indices `:`
      type($seg_indptr) `,` type($row_indices) `,` type($pair_indices) `)`
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// E, the experts of seg_indptr (its static size less one).
    int64_t getNumExperts() {
      return getSegIndptr().getType().getDimSize(0) - 1;
    }
  }];
}

include "ggemm/Dialect/GGemm/IR/GGemmTileOps.td"
include "ggemm/Dialect/GGemm/IR/GGemmScheduleOps.td"

#endif // GGEMM_OPS_TD
