#!/usr/bin/env python3
"""Writes the FP8 kernels of the GPU check and benchmark (test/gpu/kernels_fp8).

Each kernel is one FP8 (f8E4M3FN) problem op with 1x128 activation scales
(MN-major: memref<?xKBxf32, strided<[1, ?]>>, see docs/Design.md) and
128x128 weight scales, static N and K, dynamic rows and groups; the tile
config is left to ggemm-select-config. The shapes are DeepGEMM's test lists
(dense, grouped contiguous, masked) and a FlagGems-style batched bmm, plus
epilogue variants. Kernels named `*_rowwise`, `*_tensor`, `*_mixed`,
`*_channel` take tensor-wise (`[1]` for x, `[G]` for w) or per-row (`[M]` /
`[G, Mmax]` for x, `[G, N]` for w) scales instead, applied in the
epilogue (torch._scaled_mm row-wise, FlashInfer's bmm_fp8). Kernels named
`int8_*` are the same forms with i8 operands (aiter's int8_gemm): exact
s32 sums, tensor-wise or per-row scales. Kernels named `fp8out_*` write an
e4m3 y with MN-major 1x128 scales computed in the epilogue, from bf16, FP8
or INT8 inputs. Regenerate after editing:

    python3 test/gpu/gen_fp8_kernels.py
"""
import os

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels_fp8")
F8 = "f8E4M3FN"

# (n, k) of DeepGEMM's dense and grouped-contiguous lists.
SEGMENT_NK = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512),
              (7168, 16384), (4096, 7168), (7168, 2048), (6144, 7168),
              (7168, 3072), (4096, 4096), (4096, 2048)]
MASKED_NK = [(4096, 7168), (7168, 2048)]
# (n, k) of DeepGEMM's dense list, which the benchmark times, also as one-weight
# kernels (`fp8_dense_*`: G = 1 static, what a dense FP8 call of the Python
# layer compiles), whose row-bucket variants know the group count.
DENSE_NK = [(7168, 16384), (4096, 7168), (2112, 7168), (7168, 2048),
            (576, 7168), (24576, 1536), (32768, 512)]
BATCHED_NK = [(1024, 1024)]


def kb(k: int) -> int:
    return -(-k // 128)


BLOCKS = ("1x128", "128x128")


def scale_types(xk, wk, k, n, x_lead):
    """The x_scale and w_scale memref types of scale blocks (xk, wk); x_lead
    is "" (segment) or "?x" (masked, batched)."""
    xs = {"1x128": (f"memref<?x{kb(k)}xf32, strided<[1, ?]>>" if not x_lead
                    else f"memref<?x?x{kb(k)}xf32, strided<[?, 1, ?]>>"),
          "per_row": f"memref<{x_lead}?xf32>",
          "tensor": "memref<1xf32>"}[xk]
    ws = {"128x128": f"memref<?x{kb(n)}x{kb(k)}xf32>",
          "per_row": f"memref<?x{n}xf32>",
          "tensor": "memref<?xf32>"}[wk]
    return xs, ws


def segment(n, k, out="bf16", widx=False, bias=False, act=None, rs=False,
            acc=False, name=None, f8=F8, scales=BLOCKS):
    name = name or f"fp8_seg_n{n}_k{k}"
    args = [f"%x: memref<?x{k}x{f8}>", f"%w: memref<?x{n}x{k}x{f8}>",
            "%p: memref<?xi32>"]
    lines = [f"  ggemm.segment_matmul ins(%x, %w : memref<?x{k}x{f8}>, "
             f"memref<?x{n}x{k}x{f8}>)", "      segments(%p : memref<?xi32>)"]
    if widx:
        args.append("%idx: memref<?xi32>")
        lines.append("      weight_indices(%idx : memref<?xi32>)")
    xs, ws = scale_types(*scales, k, n, "")
    args += [f"%xs: {xs}", f"%ws: {ws}"]
    lines.append(f"      scales(%xs, %ws : {xs}, {ws})")
    if bias:
        args.append(f"%b: memref<?x{n}xf32>")
        lines.append(f"      bias(%b : memref<?x{n}xf32>)")
    if rs:
        args.append("%rs: memref<?xf32>")
        lines.append("      row_scale(%rs : memref<?xf32>)")
    args.append(f"%y: memref<?x{n}x{out}>")
    lines.append(f"      outs(%y : memref<?x{n}x{out}>)")
    return name, args, lines, epilogue(act, acc), None, scales


def dense(n, k):
    """A dense FP8 GEMM: segment_matmul with one weight and one segment,
    static (`fp8_dense_n{n}_k{k}`)."""
    name = f"fp8_dense_n{n}_k{k}"
    xs, _ = scale_types(*BLOCKS, k, n, "")
    ws = f"memref<1x{kb(n)}x{kb(k)}xf32>"
    args = [f"%x: memref<?x{k}x{F8}>", f"%w: memref<1x{n}x{k}x{F8}>",
            "%p: memref<2xi32>", f"%xs: {xs}", f"%ws: {ws}",
            f"%y: memref<?x{n}xbf16>"]
    lines = [f"  ggemm.segment_matmul ins(%x, %w : memref<?x{k}x{F8}>, "
             f"memref<1x{n}x{k}x{F8}>)", "      segments(%p : memref<2xi32>)",
             f"      scales(%xs, %ws : {xs}, {ws})",
             f"      outs(%y : memref<?x{n}xbf16>)"]
    return name, args, lines, None, None, BLOCKS


def dense_scaled(n, k, scales, name, f8=F8):
    """A dense GEMM with tensor-wise or per-row scales: segment_matmul with
    one weight and one segment, static (`fp8_dense_*` / `int8_dense_*`)."""
    xs, ws = scale_types(*scales, k, n, "")
    ws = ws.replace("memref<?", "memref<1")
    w = f"memref<1x{n}x{k}x{f8}>"
    args = [f"%x: memref<?x{k}x{f8}>", f"%w: {w}", "%p: memref<2xi32>",
            f"%xs: {xs}", f"%ws: {ws}", f"%y: memref<?x{n}xbf16>"]
    lines = [f"  ggemm.segment_matmul ins(%x, %w : memref<?x{k}x{f8}>, {w})",
             "      segments(%p : memref<2xi32>)",
             f"      scales(%xs, %ws : {xs}, {ws})",
             f"      outs(%y : memref<?x{n}xbf16>)"]
    return name, args, lines, None, None, scales


def epilogue(act, acc):
    parts = []
    if act:
        parts.append(f"activation = {act}")
    if acc:
        parts.append("accumulate = true")
    return f"#ggemm.epilogue<{', '.join(parts)}>" if parts else None


def grouped(op, n, k, out="bf16", scales=BLOCKS, name=None, act=None,
            acc=False, f8=F8):
    name = name or f"fp8_{op}_n{n}_k{k}"
    xs, ws = scale_types(*scales, k, n, "?x")
    args = [f"%x: memref<?x?x{k}x{f8}>", f"%w: memref<?x{n}x{k}x{f8}>"]
    lines = [f"  ggemm.{op}_matmul ins(%x, %w : memref<?x?x{k}x{f8}>, "
             f"memref<?x{n}x{k}x{f8}>)"]
    if op == "masked":
        args.append("%m: memref<?xi32>")
        lines.append("      masked_m(%m : memref<?xi32>)")
    args += [f"%xs: {xs}", f"%ws: {ws}", f"%y: memref<?x?x{n}x{out}>"]
    lines.append(f"      scales(%xs, %ws : {xs}, {ws})")
    lines.append(f"      outs(%y : memref<?x?x{n}x{out}>)")
    return name, args, lines, epilogue(act, acc), None, scales


def fp8_out(name, op, n, k, elem="bf16", scales=None, bias=False, act=None,
            rs=False, gated=False):
    """A kernel writing an e4m3 y and its MN-major 1x128 scales (`y_scale`)
    from `elem` operands (FP8 and INT8 with `scales`). Gated: w holds 2N
    rows (SwiGLU)."""
    nb = -(-n // 128)
    w_rows = 2 * n if gated else n
    lead = "" if op == "segment" else "?x"
    x = f"memref<{lead}?x{k}x{elem}>"
    w = f"memref<?x{w_rows}x{k}x{elem}>"
    y = f"memref<{lead}?x{n}xf8E4M3FN>"
    ys = (f"memref<?x{nb}xf32, strided<[1, ?]>>" if op == "segment"
          else f"memref<?x?x{nb}xf32, strided<[?, 1, ?]>>")
    args = [f"%x: {x}", f"%w: {w}"]
    lines = [f"  ggemm.{op}_matmul ins(%x, %w : {x}, {w})"]
    if op == "segment":
        args.append("%p: memref<?xi32>")
        lines.append("      segments(%p : memref<?xi32>)")
    elif op == "masked":
        args.append("%m: memref<?xi32>")
        lines.append("      masked_m(%m : memref<?xi32>)")
    if scales:
        xs, ws = scale_types(*scales, k, w_rows, lead)
        args += [f"%xs: {xs}", f"%ws: {ws}"]
        lines.append(f"      scales(%xs, %ws : {xs}, {ws})")
    if bias:
        args.append(f"%b: memref<?x{w_rows}xf32>")
        lines.append(f"      bias(%b : memref<?x{w_rows}xf32>)")
    if rs:
        rs_type = "memref<?xf32>" if op == "segment" else "memref<?x?xf32>"
        args.append(f"%rs: {rs_type}")
        lines.append(f"      row_scale(%rs : {rs_type})")
    args += [f"%y: {y}", f"%ys: {ys}"]
    lines.append(f"      outs(%y : {y}) y_scale(%ys : {ys})")
    return name, args, lines, epilogue("swiglu" if gated else act, False), \
        None, scales


def swap_config(block_m, block_n):
    """A swap-AB tile config: block_m token rows in wgmma's N, block_n
    weight rows in its M (64 per consumer warpgroup)."""
    return (f"#ggemm.tile_config<block_m = {block_m}, block_n = {block_n}, "
            f"block_k = 128, stages = 6, consumer_warpgroups = "
            f"{block_n // 64}, swap_ab = true>")


def with_config(kernel, config):
    """A kernel tuple of segment() / grouped() with a tile config."""
    name, args, lines, epi, _, scales = kernel
    return name, args, lines, epi, config, scales


def write(name, args, lines, epi, config=None, scales=BLOCKS, out_dir=HERE,
          generator="test/gpu/gen_fp8_kernels.py"):
    attrs = ([f"x_scale_block = #ggemm.scale_block<{scales[0]}>",
              f"w_scale_block = #ggemm.scale_block<{scales[1]}>"]
             if scales else [])
    if config:
        attrs.append(f"config = {config}")
    if epi:
        attrs.insert(0, f"epilogue = {epi}")
    if attrs:
        lines[-1] += " {" + ",\n       ".join(attrs) + "}"
    text = (f"// GENERATED by {generator}.\n"
            f"func.func @{name}({', '.join(args)}) {{\n"
            + "\n".join(lines) + "\n  return\n}\n")
    with open(os.path.join(out_dir, name + ".mlir"), "w") as f:
        f.write(text)


def main():
    os.makedirs(HERE, exist_ok=True)
    for old in os.listdir(HERE):
        if old.endswith(".mlir"):
            os.remove(os.path.join(HERE, old))
    kernels = [segment(n, k) for n, k in SEGMENT_NK]
    kernels += [dense(n, k) for n, k in DENSE_NK]
    kernels += [grouped("masked", n, k) for n, k in MASKED_NK]
    kernels += [grouped("batched", n, k) for n, k in BATCHED_NK]
    kernels.append(segment(384, 512, out="f32", widx=True, bias=True,
                           act="silu", name="fp8_seg_n384_k512_idx_bias_silu"))
    kernels.append(segment(256, 1024, rs=True, acc=True,
                           name="fp8_seg_n256_k1024_rs_acc"))
    # e5m2 (wider range, 2 mantissa bits) on one of DeepGEMM's shapes.
    kernels.append(segment(4096, 7168, name="fp8_seg_n4096_k7168_e5m2",
                           f8="f8E5M2"))
    # Swap-AB (few rows per group): a segment kernel with weight indices and
    # a masked one on DeepGEMM's shapes.
    kernels.append(with_config(
        segment(4096, 7168, widx=True, name="fp8_seg_n4096_k7168_swap32_idx"),
        swap_config(32, 128)))
    kernels.append(with_config(
        grouped("masked", 7168, 2048, name="fp8_masked_n7168_k2048_swap24"),
        swap_config(24, 64)))
    # Two K blocks per wgmma wait (promote_pairs) over an odd block count
    # (K = 1152: 9 blocks, the last one on its own), on the two tile kinds
    # select-config gives it: a one-warpgroup swap-AB tile and 128x64.
    for suffix, config in (
            ("swap24_pairs", "#ggemm.tile_config<block_m = 24, block_n = 64, "
             "block_k = 128, stages = 8, consumer_warpgroups = 1, "
             "swap_ab = true, promote_pairs = true>"),
            ("m128n64_pairs", "#ggemm.tile_config<block_m = 128, block_n = 64, "
             "block_k = 128, stages = 8, promote_pairs = true>")):
        name, args, lines, epi, _, scales = dense(1024, 1152)
        kernels.append((f"{name}_{suffix}", args, lines, epi, config, scales))
    # Tensor-wise and per-row scales, scaled once in the epilogue: the
    # bf16 path's tiles (128x256 where N allows), every kind and mix with
    # segment, masked and batched ops, an odd N with K not a multiple of
    # 128, epilogue composition, swap-AB.
    rowwise, tensor = ("per_row", "per_row"), ("tensor", "tensor")
    kernels.append(segment(4096, 7168, name="fp8_seg_n4096_k7168_rowwise",
                           scales=rowwise))
    kernels.append(segment(2112, 7168, name="fp8_seg_n2112_k7168_tensor",
                           scales=tensor))
    # Their one-weight forms (G = 1 static, as a dense call of the Python
    # layer compiles them), for the decode rows of the benchmark.
    kernels.append(dense_scaled(4096, 7168, rowwise,
                                "fp8_dense_n4096_k7168_rowwise"))
    kernels.append(dense_scaled(2112, 7168, tensor,
                                "fp8_dense_n2112_k7168_tensor"))
    kernels.append(segment(2049, 1600, widx=True, bias=True, act="gelu",
                           name="fp8_seg_n2049_k1600_mixed_idx_bias_gelu",
                           scales=("per_row", "tensor")))
    kernels.append(segment(999, 1024, out="f32", rs=True, acc=True,
                           name="fp8_seg_n999_k1024_channel_rs_acc",
                           scales=("tensor", "per_row")))
    kernels.append(with_config(
        segment(4096, 7168, widx=True, scales=rowwise,
                name="fp8_seg_n4096_k7168_rowwise_swap32_idx"),
        swap_config(32, 128)))
    kernels.append(grouped("masked", 4096, 7168, scales=rowwise,
                           name="fp8_masked_n4096_k7168_rowwise"))
    kernels.append(grouped("masked", 7168, 2048, scales=("tensor", "per_row"),
                           name="fp8_masked_n7168_k2048_channel"))
    kernels.append(with_config(
        grouped("masked", 7168, 2048, scales=rowwise,
                name="fp8_masked_n7168_k2048_rowwise_swap24"),
        swap_config(24, 64)))
    kernels.append(grouped("batched", 1024, 1024, scales=tensor,
                           name="fp8_batched_n1024_k1024_tensor"))
    kernels.append(grouped("batched", 1000, 1024, out="f32", act="relu",
                           acc=True, scales=("per_row", "tensor"),
                           name="fp8_batched_n1000_k1024_mixed_relu_acc"))
    # INT8 (i8 x i8 -> exact s32, aiter's int8_gemm): the tensor-wise and
    # per-row forms above with i8 operands; one f32 kernel with unit scales
    # checks the integer sum exactly.
    i8 = dict(f8="i8")
    kernels.append(segment(4096, 7168, name="int8_seg_n4096_k7168_rowwise",
                           scales=rowwise, **i8))
    kernels.append(segment(2112, 7168, name="int8_seg_n2112_k7168_tensor",
                           scales=tensor, **i8))
    kernels.append(segment(2049, 1600, widx=True, bias=True, act="gelu",
                           name="int8_seg_n2049_k1600_mixed_idx_bias_gelu",
                           scales=("per_row", "tensor"), **i8))
    kernels.append(segment(999, 1024, out="f32", rs=True, acc=True,
                           name="int8_seg_n999_k1024_channel_rs_acc",
                           scales=("tensor", "per_row"), **i8))
    kernels.append(segment(520, 1024, out="f32", scales=tensor,
                           name="int8_seg_n520_k1024_exact", **i8))
    kernels.append(dense_scaled(4096, 7168, rowwise,
                                "int8_dense_n4096_k7168_rowwise", f8="i8"))
    kernels.append(dense_scaled(2112, 7168, tensor,
                                "int8_dense_n2112_k7168_tensor", f8="i8"))
    kernels.append(with_config(
        segment(4096, 7168, widx=True, scales=rowwise,
                name="int8_seg_n4096_k7168_rowwise_swap32_idx", **i8),
        swap_config(32, 128)))
    kernels.append(grouped("masked", 7168, 2048, scales=("tensor", "per_row"),
                           name="int8_masked_n7168_k2048_channel", **i8))
    kernels.append(with_config(
        grouped("masked", 7168, 2048, scales=rowwise,
                name="int8_masked_n7168_k2048_rowwise_swap24", **i8),
        swap_config(24, 64)))
    kernels.append(grouped("batched", 1000, 1024, out="f32", act="relu",
                           acc=True, scales=("per_row", "tensor"),
                           name="int8_batched_n1000_k1024_mixed_relu_acc",
                           **i8))
    # An e4m3 y with its 1x128 scales computed in the epilogue: from bf16
    # (bias and silu; a 7168-wide layer whose output is the next FP8
    # layer's x, fp8_seg_n4096_k7168 checks the chain), FP8 block-scaled,
    # INT8, masked and batched (N not a multiple of 128, row_scale), SwiGLU.
    kernels.append(fp8_out("fp8out_seg_n7168_k2048_bf16_bias_silu", "segment",
                           7168, 2048, bias=True, act="silu"))
    kernels.append(fp8_out("fp8out_seg_n4096_k7168_fp8", "segment", 4096,
                           7168, elem=F8, scales=BLOCKS))
    kernels.append(fp8_out("fp8out_seg_n2112_k7168_int8", "segment", 2112,
                           7168, elem="i8", scales=rowwise))
    kernels.append(fp8_out("fp8out_masked_n7168_k2048_bf16", "masked", 7168,
                           2048))
    kernels.append(fp8_out("fp8out_batched_n1000_k1024_bf16_rs_relu",
                           "batched", 1000, 1024, rs=True, act="relu"))
    kernels.append(fp8_out("fp8out_seg_n768_k2048_bf16_swiglu", "segment",
                           768, 2048, gated=True))
    # 2-CTA clusters sharing the weight tile by TMA multicast (a config
    # option; ggemm-select-config does not choose it).
    def segment_and_masked(config, seg, masked):
        """A segment and a masked kernel of `config`: (N, K, name) each."""
        n, k, name = seg
        kernels.append(with_config(segment(n, k, name=name), config))
        n, k, name = masked
        kernels.append(with_config(grouped("masked", n, k, name=name),
                                   config))

    segment_and_masked(
        "#ggemm.tile_config<block_m = 128, block_n = 128, block_k = 128, "
        "stages = 6, cluster_m = 2>",
        (4096, 7168, "fp8_seg_n4096_k7168_c2"),
        (4096, 7168, "fp8_masked_n4096_k7168_c2"))
    # Split-K clusters (split_k) with more tiles than clusters, so that each
    # cluster walks several tiles and rank 0's buffer is handed back and
    # forth (select-config splits only where each cluster has one tile):
    # swap-AB 8-token tiles over 8 CTAs, 128x32 tiles over 3, and INT8's
    # exact integer sums over 4.
    kernels.append(with_config(
        segment(576, 7168, name="fp8_seg_n576_k7168_sk8"),
        swap_config(8, 64).replace(">", ", split_k = 8>")))
    kernels.append(with_config(
        grouped("masked", 4096, 7168, name="fp8_masked_n4096_k7168_sk3"),
        "#ggemm.tile_config<block_m = 128, block_n = 32, block_k = 128, "
        "stages = 8, promote_pairs = true, split_k = 3>"))
    kernels.append(with_config(
        segment(520, 1024, out="f32", scales=tensor,
                name="int8_seg_n520_k1024_exact_sk4", **i8),
        "#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 128, "
        "stages = 2, consumer_warpgroups = 1, split_k = 4>"))
    # split_k_tail (an option; select-config does not set it): the 192x128
    # tiles of three consumer warpgroups, the last wave's tiles split over
    # clusters of 2 whose partials meet in rank 0's idle ring.
    segment_and_masked(
        "#ggemm.tile_config<block_m = 192, block_n = 128, block_k = 128, "
        "stages = 4, consumer_warpgroups = 3, split_k = 2, "
        "split_k_tail = true>",
        (4096, 7168, "fp8_seg_n4096_k7168_tail"),
        (7168, 2048, "fp8_masked_n7168_k2048_tail"))
    for kernel in kernels:
        write(*kernel)
    print(f"wrote {len(kernels)} kernels to {HERE}")


if __name__ == "__main__":
    main()
