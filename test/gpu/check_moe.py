#!/usr/bin/env python3
"""GPU check and benchmark of a whole MoE FFN without glue (issue 13):
route, up projection with gathered token rows and the fused SwiGLU, down
projection with the routing weights and the scatter-combine epilogue.

The layer on GGEMM (``fused``), per forward:

1. ``ggemm.sort_by_expert``: the (token, k) pairs sorted by expert on the
   device (segments, the token of each sorted row, the pair of each row),
   by GGEMM's routing kernel (``method="auto"`` on CUDA tensors);
2. ``h = segment_matmul(x, w13, row_indices=token_of_row,
   activation="swiglu")``: x is read in token order, no permuted copy;
   ``w13`` holds each expert's gate rows then up rows (vLLM's layout),
   or (``fused (interleaved)``) ``ggemm.interleave_gate_up(w13, B)`` with
   ``gate_up_block=B``: blocks of B gate rows and their B up rows, each
   tile one contiguous block (B = ``gate_up_block_of(model)``);
3. down projection, ``row_scale`` = each row's routing weight, and
   - ``slots`` (the default, deterministic): each row written to its pair's
     slot of a ``[T, topk, H]`` buffer (``scatter_indices`` = pair), then a
     fixed-order sum over the top-k slots;
   - ``atomic`` (opt-in): each row added into its token's f32 row of the
     output (``scatter_indices`` = token, ``accumulate``, ``atomic``).

The reference is plain torch in float32 (TF32 off), expert by expert, from
the same bf16 inputs; the criterion is ||out - ref|| / ||ref|| < 1e-2. The
routing is fresh and random (softmax top-k of random logits), so experts get
zero tokens; extra cases route tokens twice to one expert, pass padding
expert ids (-1), put a bias on the gated weights and run every layer on the
interleaved weight too (with autograd through it on the small layer: dW
must come back interleaved). The routing kernel is also checked alone
against torch's path (``method="torch"``): the same seg_indptr,
row_indices and pair_indices bit for bit (both sorts are stable) for T in
1, 16, 512, 16384 tokens of each layer's (E, topk), ids with -1 padding
and ids >= E, int64 ids, no tokens, and a CUDA-graph replay. Prints a line
per case and ``gpu-check-moe: N passed, M failed``.

With ``--bench``, the same sizes are timed (medians of CUDA-graph replays,
bench/bench_e2e.bench) against the glued layer, in the same run:

- ``glued (torch)``: permute x (a copy), ``torch._grouped_mm`` up, SwiGLU as
  its own pass, ``torch._grouped_mm`` down, un-permute, weight and sum;
- ``glued (GGEMM)``: the same glue around GGEMM's plain segment_matmul.

and closes with ``moe-bench: min speedup vs glued S over N sizes`` (glued =
the faster of the two glued layers, fused = the faster of the side-by-side
and the interleaved weight, per size). The breakdown at 16384 tokens times
each GEMM (the up GEMM with gather + SwiGLU on both weight layouts) and the
routing step with both methods.

The GPU host has no LLVM: the kernels come from a catalog built on the CPU
machine from this script's spec (test/gpu/build_moe_catalog.sh).

    python3 test/gpu/check_moe.py --catalog .device/moe_catalog \\
        --bench --report bench/results/moe.md
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "test" / "gpu"))

from check_python import Checker, rel_err  # noqa: E402
import check_ep  # noqa: E402
import check_moe_example  # noqa: E402

TOL = 1e-2
#: DeepSeek-V3-like and Qwen3-MoE-like layers (hidden, intermediate per
#: expert, experts, top-k), and a small one for the edge cases.
MODELS = {
    "deepseek-v3": dict(hidden=7168, inter=2048, experts=256, topk=8),
    "qwen3-moe": dict(hidden=2048, inter=768, experts=128, topk=8),
    "small": dict(hidden=256, inter=192, experts=8, topk=2),
}
TOKENS = [1, 16, 512, 16384]


def gate_up_block_of(m: dict) -> int:
    """The interleaved layout's block B of a layer: 128 (a 256-row weight
    tile, the side-by-side kernel's tile at many rows, so that the two
    differ in the layout only) where it divides the intermediate size,
    else 64."""
    return 128 if m["inter"] % 128 == 0 else 64


def spec() -> dict:
    """The kernels of every layer below (one catalog line each)."""
    lines = []
    for name, m in MODELS.items():
        h, i, e = m["hidden"], m["inter"], m["experts"]
        b = gate_up_block_of(m)
        seg = dict(op="segment_matmul", dtype="bf16", groups=e)
        lines += [
            # the routing kernel of sort_by_expert, for int32 and int64 ids
            dict(op="sort_by_expert", num_experts=e, topk=m["topk"],
                 index_dtype=["i32", "i64"]),
            # fused: up (gather + SwiGLU), down (slots; atomic combine)
            dict(seg, n=i, k=h, row_indices=True, activation="swiglu"),
            # fused (interleaved): up on the interleaved weight
            dict(seg, n=i, k=h, row_indices=True, activation="swiglu",
                 gate_up_block=b),
            dict(seg, n=h, k=i, row_scale=True, scatter=True),
            dict(seg, n=h, k=i, row_scale=True, scatter=True,
                 accumulate=True, atomic=True, out_dtype="f32"),
            # glued on GGEMM: plain up (2I columns) and down
            dict(seg, n=2 * i, k=h),
            dict(seg, n=h, k=i),
            # the breakdown: gather alone, SwiGLU alone
            dict(seg, n=2 * i, k=h, row_indices=True),
            dict(seg, n=i, k=h, activation="swiglu"),
        ]
        if name == "small":
            lines += [dict(seg, n=i, k=h, row_indices=True,
                           activation="swiglu", bias=True),
                      dict(seg, n=i, k=h, row_indices=True,
                           activation="swiglu", bias=True, gate_up_block=b),
                      # autograd on the interleaved weight with a bias: z
                      # recomputed with the bias (in w's row order)
                      dict(seg, n=2 * i, k=h, row_indices=True, bias=True,
                           out_dtype="f32"),
                      dict(seg, n=h, k=i, scatter=True),
                      # aiter's grouped_gemm: gathered and scattered
                      dict(seg, n=2 * i, k=h, row_indices=True,
                           scatter=True),
                      # autograd through gather + SwiGLU: z recomputed
                      # (2I wide, f32), dx (the other layout, f32 for the
                      # gathered rows' sum), dW (K-ragged)
                      dict(seg, n=2 * i, k=h, row_indices=True,
                           out_dtype="f32"),
                      dict(seg, n=h, k=2 * i, weight_layout="kn",
                           out_dtype="f32"),
                      dict(op="segment_matmul_k", dtype="bf16", n=2 * i,
                           k=h, groups=e)]
    # examples/moe_layer.py's GPU checks (check_moe_example.py, and
    # check_ep.py on several GPUs): one catalog for all.
    lines += check_moe_example.spec()["kernels"]
    lines += check_ep.spec()["kernels"]
    return {"format": "bin", "kernels": lines}


# -- the layers ----------------------------------------------------------------

def routing(T, m, gen, duplicates=False, padding=False):
    """Top-k experts of T tokens and their softmax weights (float32)."""
    import torch
    e, k = m["experts"], m["topk"]
    if duplicates:
        # Experts drawn with replacement: a token may get one expert twice.
        ids = torch.randint(0, e, (T, k), device="cuda", generator=gen)
        weights = torch.rand(T, k, device="cuda", generator=gen)
        weights = weights / weights.sum(-1, keepdim=True)
    else:
        logits = torch.randn(T, e, device="cuda", generator=gen)
        top, ids = torch.topk(logits, k, dim=-1)
        weights = torch.softmax(top, dim=-1)
    if padding:
        # Padding ids (-1) route nowhere and contribute nothing.
        ids = ids.clone()
        ids[::3, 0] = -1
    return ids.to(torch.int32), weights.float()


def fused(x, w13, w2, ids, weights, e, combine="slots", bias=None,
          padded=False, gate_up_block=None, catalog=None):
    """The MoE FFN on GGEMM (see the module docstring). `padded`: some ids
    are outside [0, e) (their slots must read zero). `gate_up_block`: w13
    is interleaved in blocks of that many gate and up rows. `catalog`: the
    kernels' catalog (default: GGEMM_CATALOG)."""
    import torch
    import ggemm
    T, k = ids.shape
    r = ggemm.sort_by_expert(ids, num_experts=e, catalog=catalog)
    h = ggemm.segment_matmul(x, w13, r.seg_indptr, row_indices=r.row_indices,
                             activation="swiglu", bias=bias,
                             gate_up_block=gate_up_block, catalog=catalog)
    row_weight = weights.reshape(-1)[r.pair_indices.long()]
    if combine == "atomic":
        out = torch.zeros(T, w2.shape[1], device="cuda", dtype=torch.float32)
        ggemm.segment_matmul(h, w2, r.seg_indptr, row_scale=row_weight,
                             scatter_indices=r.row_indices, out=out,
                             accumulate=True, atomic=True, catalog=catalog)
        return out
    # Every slot of a pair with an expert in [0, E) is written; padding
    # pairs' slots must read zero.
    alloc = torch.zeros if padded else torch.empty
    slots = alloc(T * k, w2.shape[1], device="cuda", dtype=x.dtype)
    ggemm.segment_matmul(h, w2, r.seg_indptr, row_scale=row_weight,
                         scatter_indices=r.pair_indices, out=slots,
                         catalog=catalog)
    return slots.view(T, k, -1).sum(1)


def glue_routing(ids, e):
    """The permutation of the glued layer: pairs sorted by expert, the token
    of each sorted row, the cumulative row ends per expert (int32)."""
    import torch
    flat = ids.reshape(-1).long()
    order = torch.argsort(flat, stable=True)
    counts = torch.zeros(e, dtype=torch.int64, device=flat.device)
    counts.scatter_add_(0, flat, torch.ones_like(flat))
    ends = torch.cumsum(counts, 0).to(torch.int32)
    return order, order // ids.shape[1], ends


def glued_torch(x, w13, w2, ids, weights, e):
    """Permute, torch._grouped_mm, SwiGLU, torch._grouped_mm, un-permute."""
    import torch
    T, k = ids.shape
    i = w2.shape[2]
    order, token, ends = glue_routing(ids, e)
    xs = x[token]
    gu = torch._grouped_mm(xs, w13.transpose(-2, -1), offs=ends)
    a = torch.nn.functional.silu(gu[:, :i]) * gu[:, i:]
    y = torch._grouped_mm(a, w2.transpose(-2, -1), offs=ends)
    slots = torch.empty_like(y)
    slots[order] = y
    return (slots.view(T, k, -1) * weights[..., None].to(y.dtype)).sum(1)


def glued_ggemm(x, w13, w2, ids, weights, e):
    """The same glue around GGEMM's plain segment_matmul."""
    import torch
    import ggemm
    T, k = ids.shape
    i = w2.shape[2]
    order, token, ends = glue_routing(ids, e)
    indptr = torch.nn.functional.pad(ends, (1, 0))
    xs = x[token]
    gu = ggemm.segment_matmul(xs, w13, indptr)
    a = torch.nn.functional.silu(gu[:, :i]) * gu[:, i:]
    y = ggemm.segment_matmul(a, w2, indptr)
    slots = torch.empty_like(y)
    slots[order] = y
    return (slots.view(T, k, -1) * weights[..., None].to(y.dtype)).sum(1)


def reference(x, w13, w2, ids, weights, bias=None):
    """float32, expert by expert, from the bf16 inputs."""
    import torch
    T, k = ids.shape
    i = w2.shape[2]
    out = torch.zeros(T, w2.shape[1], device="cuda", dtype=torch.float32)
    flat = ids.reshape(-1).long()
    token = torch.arange(T, device="cuda").repeat_interleave(k)
    wflat = weights.reshape(-1)
    for ex in torch.unique(flat).tolist():
        if not 0 <= ex < w13.shape[0]:
            continue
        sel = (flat == ex).nonzero().squeeze(1)
        xe = x[token[sel]].float()
        gu = xe @ w13[ex].float().t()
        if bias is not None:
            gu = gu + bias[ex].float()
        a = torch.nn.functional.silu(gu[:, :i]) * gu[:, i:]
        y = a @ w2[ex].float().t()
        out.index_add_(0, token[sel], y * wflat[sel, None])
    return out


def weights_of(m, gen):
    import torch
    h, i, e = m["hidden"], m["inter"], m["experts"]
    # Expert by expert: a float32 temporary of all of DeepSeek-V3's w13
    # would take 30 GB.
    w13 = torch.empty(e, 2 * i, h, device="cuda", dtype=torch.bfloat16)
    w2 = torch.empty(e, h, i, device="cuda", dtype=torch.bfloat16)
    for ex in range(e):
        w13[ex] = torch.randn(2 * i, h, device="cuda", generator=gen) / h ** 0.5
        w2[ex] = torch.randn(h, i, device="cuda", generator=gen) / i ** 0.5
    return w13, w2


# -- check ---------------------------------------------------------------------

def same_routing(ids, e):
    """sort_by_expert's kernel against torch's path: the three tensors equal
    bit for bit, dtypes and shapes included."""
    import torch
    import ggemm
    kernel = ggemm.sort_by_expert(ids, e, method="kernel")
    reference = ggemm.sort_by_expert(ids, e, method="torch")
    for name, got, want in zip(ggemm.Routing._fields, kernel, reference):
        if got.dtype != want.dtype or got.shape != want.shape:
            raise AssertionError(f"{name}: {got.dtype} {tuple(got.shape)}, "
                                 f"torch's {want.dtype} {tuple(want.shape)}")
        if not torch.equal(got, want):
            at = int((got != want).nonzero()[0, 0])
            raise AssertionError(f"{name}[{at}] is {int(got[at])}, torch's "
                                 f"{int(want[at])}")
    pairs = ids.numel()
    inside = int(kernel.seg_indptr[-1] - kernel.seg_indptr[0])
    return f"bitwise equal, {pairs} pairs, {inside} in segments"


def routing_checks(case, gen, models=None):
    """The routing kernel alone (see the module docstring)."""
    import torch
    import ggemm
    for name, m in MODELS.items():
        if name == "small" or (models and name not in models):
            continue
        e, k = m["experts"], m["topk"]
        label = f"routing E={e} topk={k}"
        for T in TOKENS:
            ids, _ = routing(T, m, gen)
            case(f"{label} T={T}", lambda ids=ids: same_routing(ids, e))
        T = 512
        ids, _ = routing(T, m, gen, padding=True)
        case(f"{label} T={T} padding ids -1",
             lambda ids=ids: same_routing(ids, e))
        # Ids of other ranks' experts (>= E) and below 0, repeated within
        # a token: in no segment, sorted around them.
        wild = torch.randint(-3, e + 5, (T, k), device="cuda", generator=gen,
                             dtype=torch.int32)
        case(f"{label} T={T} ids outside [0, E)",
             lambda: same_routing(wild, e))
        for T in (16, 16384):
            ids, _ = routing(T, m, gen, padding=True)
            case(f"{label} T={T} int64 ids",
                 lambda ids=ids: same_routing(ids.long(), e))
        empty = torch.empty(0, k, device="cuda", dtype=torch.int32)
        case(f"{label} T=0", lambda: same_routing(empty, e))

        def graph_replay():
            # One launch, no sync, nothing allocated but the outputs: it
            # replays from a CUDA graph with the ids changed in place.
            ids = routing(512, m, gen)[0]
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                ggemm.sort_by_expert(ids, e, method="kernel")  # loads
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, stream=stream):
                captured = ggemm.sort_by_expert(ids, e, method="kernel")
            ids.copy_(routing(512, m, gen, padding=True)[0])
            graph.replay()
            torch.cuda.synchronize()
            want = ggemm.sort_by_expert(ids, e, method="torch")
            for field, got, ref in zip(ggemm.Routing._fields, captured, want):
                if not torch.equal(got, ref):
                    raise AssertionError(f"{field} differs after replay")
            return "replay bitwise equal to torch on new ids"
        case(f"{label} CUDA graph replay", graph_replay)


def run_checks(lines, seed, models=None):
    import torch
    import ggemm
    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    check = Checker(None, width=48, lines=lines)
    case = check.run

    def compare(out, ref):
        if torch.isnan(out.double()).any():
            raise AssertionError("NaN in the output")
        err = rel_err(out, ref)
        if not err < TOL:
            raise AssertionError(f"rel err {err:.2e} >= {TOL}")
        return f"rel err {err:.1e}"

    routing_checks(case, gen, models)
    for name, m in MODELS.items():
        if models and name not in models:
            continue
        w13, w2 = weights_of(m, gen)
        e = m["experts"]
        b = gate_up_block_of(m)
        w13i = ggemm.interleave_gate_up(w13, b)
        tokens = TOKENS if name != "small" else [1, 5, 300]
        for T in tokens:
            x = torch.randn(T, m["hidden"], device="cuda", generator=gen,
                            dtype=torch.float32).to(torch.bfloat16)
            ids, wts = routing(T, m, gen)
            ref = reference(x, w13, w2, ids, wts)
            active = int(torch.unique(ids).numel())
            for combine in ("slots", "atomic"):
                def run(combine=combine):
                    out = fused(x, w13, w2, ids, wts, e, combine)
                    note = compare(out, ref)
                    if combine == "slots":
                        again = fused(x, w13, w2, ids, wts, e, combine)
                        if not torch.equal(out, again):
                            raise AssertionError("slots combine not "
                                                 "deterministic")
                        note += ", bitwise repeatable"
                    return f"{note}, {active}/{e} experts used"
                case(f"{name} T={T} {combine}", run)
            case(f"{name} T={T} slots, interleaved w13 (B={b})",
                 lambda: compare(fused(x, w13i, w2, ids, wts, e, "slots",
                                       gate_up_block=b), ref)
                 + f", {active}/{e} experts used")
        if name == "small":
            T = 300
            x = torch.randn(T, m["hidden"], device="cuda", generator=gen
                            ).to(torch.bfloat16)
            for label, kw in (("twice to one expert", dict(duplicates=True)),
                              ("padding ids -1", dict(padding=True))):
                ids, wts = routing(T, m, gen, **kw)
                ref = reference(x, w13, w2, ids, wts)
                for combine in ("slots", "atomic"):
                    case(f"small T={T} {label} {combine}",
                         lambda ids=ids, wts=wts, ref=ref, c=combine: compare(
                             fused(x, w13, w2, ids, wts, e, c,
                                   padded="padding" in label), ref))
            ids, wts = routing(T, m, gen)
            bias = torch.randn(e, 2 * m["inter"], device="cuda",
                               generator=gen)
            ref = reference(x, w13, w2, ids, wts, bias=bias)
            case(f"small T={T} swiglu bias",
                 lambda: compare(fused(x, w13, w2, ids, wts, e, "slots",
                                       bias=bias), ref))
            # The bias stays in the logical order on an interleaved weight.
            case(f"small T={T} swiglu bias, interleaved w13 (B={b})",
                 lambda: compare(fused(x, w13i, w2, ids, wts, e, "slots",
                                       bias=bias, gate_up_block=b), ref))

            # The layout must matter: the interleaved weight read as side
            # by side (I / B = 3 blocks) is a different layer.
            def misread():
                out = fused(x, w13i, w2, ids, wts, e, "slots")
                err = rel_err(out, ref)
                if not err > 10 * TOL:
                    raise AssertionError(f"rel err {err:.2e}: the layout "
                                         f"did not matter")
                return f"rel err {err:.1e} (as expected)"
            case(f"small T={T} interleaved w13 read side by side fails",
                 misread)
            # The ops alone with indices outside x and y: gathered rows
            # outside x read zeros, scattered rows outside y write nothing
            # (y's other rows keep their values, bit for bit).
            def out_of_range():
                M = 200
                ri = torch.randint(0, T, (M,), device="cuda", generator=gen,
                                   dtype=torch.int32)
                ri[::7] = -1
                ri[3::11] = T + 3
                si = torch.randperm(M + 40, device="cuda", generator=gen)[
                    :M].to(torch.int32) - 20  # some below 0, some >= M
                counts = [60, 0, 90, 50, 0, 0, 0, 0][:e]
                indptr = torch.tensor([0] + list(torch.tensor(counts).cumsum(
                    0).tolist()), device="cuda", dtype=torch.int32)
                # y has M rows: indices in [-20, 0) and [M, M + 20) miss it.
                out = torch.randn(M, m["hidden"], device="cuda",
                                  generator=gen).to(torch.bfloat16)
                old = out.clone()
                h = ggemm.segment_matmul(x, w13, indptr, row_indices=ri,
                                         activation="swiglu")
                ggemm.segment_matmul(h, w2, indptr, scatter_indices=si,
                                     out=out)
                xg = torch.where((ri >= 0)[:, None] & (ri < T)[:, None],
                                 x[ri.clamp(0, T - 1).long()].float(), 0.0)
                ref = old.float().clone()
                i = m["inter"]
                for g in range(e):
                    lo, hi = int(indptr[g]), int(indptr[g + 1])
                    if hi <= lo:
                        continue
                    gu = xg[lo:hi] @ w13[g].float().t()
                    a = (torch.nn.functional.silu(gu[:, :i]) * gu[:, i:]
                         ).to(torch.bfloat16).float()
                    y = a @ w2[g].float().t()
                    t = si[lo:hi].long()
                    keep = (t >= 0) & (t < M)
                    ref[t[keep]] = y[keep]
                written = torch.zeros(M, dtype=torch.bool, device="cuda")
                t = si[:int(indptr[-1])].long()
                written[t[(t >= 0) & (t < M)]] = True
                if not torch.equal(out[~written], old[~written]):
                    raise AssertionError("rows no index points to changed")
                return compare(out[written].float(), ref[written])
            case(f"small gather/scatter indices outside x and y",
                 out_of_range)
            # aiter's grouped_gemm(input, weights, expert_ids, topk):
            # out[t, j] = x[t] @ w[ids[t, j]]ᵀ, zero for an id outside the
            # experts; one gathered and scattered segment_matmul (and, with
            # autograd recording, a gathered one and torch's index_copy).
            def aiter_grouped_gemm(requires_grad):
                from ggemm.compat import aiter
                ids, _ = routing(T, m, gen, padding=True)
                xi = x.detach().clone().requires_grad_(requires_grad)
                out = aiter.grouped_gemm(xi, w13, ids, m["topk"])
                ref = torch.zeros(T, m["topk"], w13.shape[1], device="cuda")
                for j in range(m["topk"]):
                    e_ids = ids[:, j].long()
                    ok = (e_ids >= 0) & (e_ids < e)
                    wj = w13[e_ids.clamp(0, e - 1)].float()
                    ref[:, j] = torch.where(
                        ok[:, None],
                        torch.einsum("tk,tnk->tn", x.float(), wj), 0.0)
                if tuple(out.shape) != tuple(ref.shape):
                    raise AssertionError(f"shape {tuple(out.shape)}")
                return compare(out.detach().float(), ref)
            case("small aiter.grouped_gemm (padding ids)",
                 lambda: aiter_grouped_gemm(False))
            case("small aiter.grouped_gemm, autograd recording",
                 lambda: aiter_grouped_gemm(True))

            # Autograd through gather + SwiGLU (torch_ops' backward: z
            # recomputed, dx summed onto the tokens, dW on the K-ragged
            # kernel) against float64 torch autograd; on the interleaved
            # weight with a bias too: dW must come back interleaved, dbias
            # in the logical order.
            def autograd_gather_swiglu(interleaved):
                M = 200
                ri = torch.randint(0, T, (M,), device="cuda", generator=gen,
                                   dtype=torch.int32)
                ri[::9] = -1
                counts = [60, 0, 90, 50, 0, 0, 0, 0][:e]
                indptr = torch.tensor(
                    [0] + torch.tensor(counts).cumsum(0).tolist(),
                    device="cuda", dtype=torch.int32)
                bias = torch.randn(e, 2 * m["inter"], device="cuda",
                                   generator=gen) if interleaved else None
                xa = x.detach().clone().requires_grad_(True)
                wa = (w13i if interleaved else w13).detach().clone(
                ).requires_grad_(True)
                ba = bias.clone().requires_grad_(True) if interleaved \
                    else None
                h = ggemm.segment_matmul(
                    xa, wa, indptr, row_indices=ri, activation="swiglu",
                    bias=ba, gate_up_block=b if interleaved else None)
                g = torch.randn(h.shape, device="cuda", generator=gen)
                (h.float() * g).sum().backward()
                x64 = x.detach().double().requires_grad_(True)
                w64 = w13.detach().double().requires_grad_(True)
                b64 = bias.double().requires_grad_(True) if interleaved \
                    else None
                valid = ((ri >= 0) & (ri < T))[:, None]
                xg = torch.where(valid, x64[ri.clamp(0, T - 1).long()], 0.0)
                i = m["inter"]
                loss = 0.0
                for grp in range(e):
                    lo, hi = int(indptr[grp]), int(indptr[grp + 1])
                    if hi <= lo:
                        continue
                    z = xg[lo:hi] @ w64[grp].t()
                    if interleaved:
                        z = z + b64[grp]
                    hh = torch.nn.functional.silu(z[:, :i]) * z[:, i:]
                    loss = loss + (hh * g[lo:hi].double()).sum()
                loss.backward()
                dw_ref = ggemm.interleave_gate_up(w64.grad, b) \
                    if interleaved else w64.grad
                notes = [f"dx {compare(xa.grad.float(), x64.grad)}",
                         f"dW {compare(wa.grad.float(), dw_ref)}"]
                if interleaved:
                    notes.append(
                        f"dbias {compare(ba.grad.float(), b64.grad)}")
                return ", ".join(notes)
            case("small autograd through gather + SwiGLU",
                 lambda: autograd_gather_swiglu(False))
            case(f"small autograd through gather + SwiGLU, interleaved "
                 f"w13 (B={b}) and bias", lambda: autograd_gather_swiglu(True))
            # The two glued layers agree with the reference too (the
            # benchmark's peers compute the same thing).
            case(f"small T={T} glued (torch)", lambda: compare(
                glued_torch(x, w13, w2, ids, wts, e).float(),
                reference(x, w13, w2, ids, wts)))
            case(f"small T={T} glued (GGEMM)", lambda: compare(
                glued_ggemm(x, w13, w2, ids, wts, e).float(),
                reference(x, w13, w2, ids, wts)))
        del w13, w13i, w2
        torch.cuda.empty_cache()
    return check.passed, check.failed


# -- bench ---------------------------------------------------------------------

def moved_bytes(m, T, active):
    """Bytes each layer must move at least (bf16): the weights of the
    experts used, and the activations each version reads and writes."""
    h, i, k = m["hidden"], m["inter"], m["topk"]
    M = T * k
    weights = active * 3 * i * h * 2
    fused_act = 2 * (M * h           # gathered x rows (read)
                     + M * i         # h written, then read
                     + M * i
                     + M * h         # slots written, read by the sum
                     + M * h + T * h)
    glued_act = 2 * (T * h + M * h   # permute: read x, write xs
                     + M * h         # up reads xs
                     + M * 2 * i     # up writes gate/up
                     + M * 2 * i + M * i   # SwiGLU reads, writes a
                     + M * i         # down reads a
                     + M * h         # down writes y
                     + 2 * M * h     # un-permute: read y, write slots
                     + M * h + T * h)  # weighted sum
    return weights, fused_act, glued_act


def run_bench(lines, seed, repeats, alt_catalog=None, alt_label="",
              models=None):
    import torch
    import bench_e2e
    import ggemm
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed + 1)
    rows = []
    speedups = []
    # Clocks up first (METHOD.md).
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(200):
        a @ a
    torch.cuda.synchronize()
    del a
    for name, m in MODELS.items():
        if name == "small" or (models and name not in models):
            continue
        w13, w2 = weights_of(m, gen)
        e = m["experts"]
        b = gate_up_block_of(m)
        w13i = ggemm.interleave_gate_up(w13, b)
        for T in TOKENS:
            x = torch.randn(T, m["hidden"], device="cuda", generator=gen
                            ).to(torch.bfloat16)
            ids, wts = routing(T, m, gen)
            active = int(torch.unique(ids).numel())
            fns = {
                "fused": lambda: fused(x, w13, w2, ids, wts, e, "slots"),
                "fused (interleaved)": lambda: fused(
                    x, w13i, w2, ids, wts, e, "slots", gate_up_block=b),
                "fused atomic": lambda: fused(x, w13, w2, ids, wts, e,
                                              "atomic"),
                "glued (torch)": lambda: glued_torch(x, w13, w2, ids, wts, e),
                "glued (GGEMM)": lambda: glued_ggemm(x, w13, w2, ids, wts, e),
            }
            if alt_catalog:
                fns["alt"] = lambda: fused(x, w13, w2, ids, wts, e, "slots",
                                           catalog=str(alt_catalog))
            times = {key: [] for key in fns}
            for _ in range(repeats):
                for key, fn in fns.items():
                    times[key].append(bench_e2e.bench(fn))
            t = {key: statistics.median(v) for key, v in times.items()}
            glued = min(t["glued (torch)"], t["glued (GGEMM)"])
            # The layer on the faster of the two weight layouts.
            best = min(t["fused"], t["fused (interleaved)"])
            speedup = glued / best
            speedups.append(speedup)
            wbytes, fbytes, gbytes = moved_bytes(m, T, active)
            row = (f"| {name} | {T} | {active} | {t['fused'] * 1e3:.1f} | "
                   f"{t['fused (interleaved)'] * 1e3:.1f} | "
                   f"{t['fused atomic'] * 1e3:.1f} | "
                   f"{t['glued (torch)'] * 1e3:.1f} | "
                   f"{t['glued (GGEMM)'] * 1e3:.1f} | {speedup:.2f} | "
                   f"{wbytes / 1e9:.2f} | {fbytes / 1e9:.3f} | "
                   f"{gbytes / 1e9:.3f} | "
                   f"{(wbytes + fbytes) / (best * 1e-3) / 1e12:.2f} |"
                   + (f" {t['alt'] * 1e3:.1f} | {t['alt'] / t['fused']:.3f} |"
                      if alt_catalog else ""))
            rows.append(row)
            print(row, flush=True)
            del x
        del w13, w13i, w2
        torch.cuda.empty_cache()
    # Where the time goes at the largest size: each kernel of the fused
    # layer next to the variant without the fusion.
    import ggemm
    breakdown = ["", "Breakdown at 16384 tokens (median µs): each GEMM of the "
                 "fused layer next to the same GEMM without one of its "
                 "fusions, the up GEMM on the interleaved weight (B = "
                 "gate_up_block_of(model)), and the routing step "
                 "(sort_by_expert) with each method.",
                 "", "| model | up: gather + SwiGLU | up: gather + SwiGLU, "
                 "interleaved w13 | up: gather only (2I "
                 "columns) | up: SwiGLU only (permuted x) | up: plain (2I "
                 "columns, permuted x) | down: scatter to slots | down: "
                 "plain | routing: kernel | routing: torch |"
                 + (f" up: gather + SwiGLU, {alt_label} | down: scatter to "
                    f"slots, {alt_label} |" if alt_catalog else ""),
                 "|" + "---|" * (12 if alt_catalog else 10)]
    for name, m in MODELS.items():
        if name == "small" or (models and name not in models):
            continue
        w13, w2 = weights_of(m, gen)
        b = gate_up_block_of(m)
        w13i = ggemm.interleave_gate_up(w13, b)
        e, T = m["experts"], TOKENS[-1]
        x = torch.randn(T, m["hidden"], device="cuda", generator=gen
                        ).to(torch.bfloat16)
        ids, wts = routing(T, m, gen)
        r = ggemm.sort_by_expert(ids, num_experts=e)
        xs = x[r.row_indices.long()]
        h = ggemm.segment_matmul(x, w13, r.seg_indptr,
                                 row_indices=r.row_indices,
                                 activation="swiglu")
        rw = wts.reshape(-1)[r.pair_indices.long()]
        slots = torch.empty(T * m["topk"], m["hidden"], device="cuda",
                            dtype=torch.bfloat16)
        parts = {
            "gather+swiglu": lambda: ggemm.segment_matmul(
                x, w13, r.seg_indptr, row_indices=r.row_indices,
                activation="swiglu"),
            "gather+swiglu interleaved": lambda: ggemm.segment_matmul(
                x, w13i, r.seg_indptr, row_indices=r.row_indices,
                activation="swiglu", gate_up_block=b),
            "gather": lambda: ggemm.segment_matmul(
                x, w13, r.seg_indptr, row_indices=r.row_indices),
            "swiglu": lambda: ggemm.segment_matmul(
                xs, w13, r.seg_indptr, activation="swiglu"),
            "plain up": lambda: ggemm.segment_matmul(xs, w13, r.seg_indptr),
            "scatter": lambda: ggemm.segment_matmul(
                h, w2, r.seg_indptr, row_scale=rw,
                scatter_indices=r.pair_indices, out=slots),
            "plain down": lambda: ggemm.segment_matmul(h, w2, r.seg_indptr),
            # sort_by_expert's two methods: the GGEMM routing kernel and
            # torch's argsort + searchsorted.
            "routing kernel": lambda: ggemm.sort_by_expert(
                ids, num_experts=e, method="kernel"),
            "routing torch": lambda: ggemm.sort_by_expert(
                ids, num_experts=e, method="torch"),
        }
        if alt_catalog:
            parts["alt"] = lambda: ggemm.segment_matmul(
                x, w13, r.seg_indptr, row_indices=r.row_indices,
                activation="swiglu", catalog=str(alt_catalog))
            parts["alt down"] = lambda: ggemm.segment_matmul(
                h, w2, r.seg_indptr, row_scale=rw,
                scatter_indices=r.pair_indices, out=slots,
                catalog=str(alt_catalog))
        t = {key: bench_e2e.bench(fn) for key, fn in parts.items()}
        row = f"| {name} | " + " | ".join(
            f"{t[key] * 1e3:.0f}" for key in parts) + " |"
        breakdown.append(row)
        print(row, flush=True)
        del w13, w13i, w2, x, xs, h, slots
        torch.cuda.empty_cache()
    header = ["| model | tokens | experts used | fused µs | fused "
              "(interleaved) µs | fused atomic µs "
              "| glued (torch) µs | glued (GGEMM) µs | speedup vs glued | "
              "weight GB | fused act. GB | glued act. GB | fused TB/s |"
              + (f" fused, {alt_label} µs | {alt_label} / fused |"
                 if alt_catalog else ""),
              "|" + "---|" * (15 if alt_catalog else 13)]
    lines += header + rows + breakdown
    summary = (f"moe-bench: min speedup vs glued {min(speedups):.2f} over "
               f"{len(speedups)} sizes")
    lines.append("")
    lines.append(summary)
    print(summary, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--catalog", type=Path)
    parser.add_argument("--write-spec", type=Path)
    parser.add_argument("--bench", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--alt-catalog", type=Path,
                        help="time the fused layer (slots), its up "
                        "projection and its scatter down projection from "
                        "this catalog too (the tables' last columns)")
    parser.add_argument("--alt-label", default="other catalog")
    parser.add_argument("--models", nargs="*", choices=list(MODELS),
                        help="check (and time) only these layers (default: "
                        "all)")
    args = parser.parse_args()
    if args.write_spec:
        args.write_spec.write_text(json.dumps(spec(), indent=1) + "\n")
        return 0
    import torch
    if args.catalog:
        os.environ["GGEMM_CATALOG"] = str(args.catalog)
    lines = []
    passed, failed = run_checks(lines, args.seed, args.models)
    summary = f"gpu-check-moe: {passed} passed, {failed} failed"
    print(summary, flush=True)
    bench_lines = []
    if args.bench:
        torch.cuda.empty_cache()
        run_bench(bench_lines, args.seed, args.repeats, args.alt_catalog,
                  args.alt_label, args.models)
    if args.report:
        device = torch.cuda.get_device_name()
        commit = os.environ.get("GGEMM_COMMIT", "unknown")
        text = [f"# MoE FFN without glue (test/gpu/check_moe.py)", "",
                f"- device: {device}",
                f"- date: {datetime.date.today().isoformat()}",
                f"- commit: {commit}", f"- seed: {args.seed}", "",
                "```"] + lines + ["```", "", summary, ""]
        if bench_lines:
            text += ["## Speed (medians of CUDA-graph replays)", ""]
            text += bench_lines
        args.report.write_text("\n".join(text) + "\n")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
