#!/usr/bin/env python3
"""GPU check of GGEMM's Python face: the ops on torch tensors (the K-ragged
weight gradient ``segment_matmul_k`` included, its FP8 form with e4m3 x
[K, T] and dy [N, T] and 1x128 token scales too), every compat wrapper
(DeepGEMM's ``k_grouped_fp8_gemm_nt_contiguous`` among them),
autograd (dW on the K-ragged kernel), torch.compile, CUDA-graph capture and
the host overhead of a call. The MoE example has its own check,
test/gpu/check_moe_example.py.

The GPU host has no LLVM: every kernel comes from a catalog prebuilt on the
CPU machine from this script's spec (test/gpu/build_python_catalog.sh runs
``check_python.py --write-spec`` and ``python -m ggemm.catalog build``).

Each numerical case uses fresh random inputs; outputs given with ``out=``
are poisoned (NaN) before the call, and the rows the op must not write are
checked bit for bit afterwards. The reference is torch in float64; the
criterion is ||out - ref|| / ||ref|| < 1e-2, and for FP8 DeepGEMM's
calc_diff < 1e-3 against the product of the dequantised operands.

Prints a line per case and, last, ``gpu-check-python: N passed, M failed``.

    python3 test/gpu/check_python.py --catalog .device/python_catalog \\
        --report bench/results/python.md
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Callable, List, Optional

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

TOL = 1e-2
# The sizes every case uses: N, K and G are compiled into the kernels.
N, K, G = 384, 256, 6
N2, K2 = 256, 384          # the other layout's / the transposed sizes


def spec() -> dict:
    """Every kernel the cases below launch (one catalog line each)."""
    bf, f16 = "bf16", "f16"
    seg = dict(op="segment_matmul")
    bat = dict(op="batched_matmul")
    lines = [
        # ops
        dict(seg, dtype=bf, n=N, k=K, groups=G),
        dict(seg, dtype=bf, n=N2, k=K2, groups=5, num_weights=3,
             weight_indices=True, index_dtype="i64", out_dtype="f32",
             weight_layout="kn"),
        dict(seg, dtype=bf, n=N, k=K, groups=G, bias=True, row_scale=True,
             activation="silu"),
        dict(seg, dtype=f16, n=N2, k=128, groups=4, weight_layout="kn",
             activation="gelu", accumulate=True),
        dict(seg, dtype=bf, n=200, k=K, groups=G, activation="relu"),
        dict(op="masked_matmul", dtype=bf, n=N, k=K, groups=4),
        dict(op="masked_matmul", dtype=f16, n=N2, k=128, groups=3,
             index_dtype="i64", bias=True, row_scale=True,
             weight_layout="kn"),
        dict(bat, dtype=bf, n=N, k=K, groups=3),
        dict(bat, dtype=bf, n=N2, k=K2, groups=2, weight_layout="kn",
             out_dtype="f32"),
        # compat: flashinfer
        dict(seg, dtype=bf, n=N2, k=K2, groups=5, weight_layout="kn"),
        # deep_gemm
        dict(bat, dtype=bf, n=N, k=K, groups=1),
        dict(bat, dtype=bf, n=N, k=K, groups=1, out_dtype="f32",
             accumulate=True),
        dict(seg, dtype=bf, n=N, k=K, groups=9, num_weights=4,
             weight_indices=True, index_dtype="i64"),
        # megablox
        dict(seg, dtype=bf, n=N2, k=K2, groups=5, weight_layout="kn",
             index_dtype="i64"),
        dict(seg, dtype=bf, n=N2, k=K2, groups=3, weight_layout="kn",
             index_dtype="i64"),
        # aiter
        dict(bat, dtype=bf, n=N2, k=K2, groups=2, weight_layout="kn"),
        dict(bat, dtype=bf, n=N2, k=K2, groups=1, weight_layout="kn",
             bias=True),
        dict(bat, dtype=bf, n=N2, k=K2, groups=1, weight_layout="kn",
             bias=True, activation="gelu"),
        dict(bat, dtype=bf, n=N2, k=K2, groups=1, weight_layout="kn",
             activation="relu"),
        dict(bat, dtype=bf, n=N2, k=K2, groups=1, weight_layout="kn",
             row_scale=True),
        dict(bat, dtype=bf, n=N2, k=K2, groups=1, weight_layout="kn",
             row_scale=True, accumulate=True),
        # autograd: the recomputed pre-activation and dx (other layout)
        dict(seg, dtype=bf, n=N, k=K, groups=G, bias=True, out_dtype="f32"),
        dict(seg, dtype=bf, n=N2, k=K2, groups=G, weight_layout="kn"),
        # torch.compile
        dict(seg, dtype=bf, n=N, k=K, groups=G, activation="silu"),
        # FP8 (e4m3, 1x128 / 128x128 block scales): the ops, DeepGEMM's
        # dense / contiguous / masked and FlagGems' bmm
        dict(seg, dtype="f8e4m3", n=N, k=K, groups=G),
        dict(bat, dtype="f8e4m3", n=N, k=K, groups=1),
        dict(seg, dtype="f8e4m3", n=N, k=K, groups=9, num_weights=4,
             weight_indices=True, index_dtype="i64"),
        dict(op="masked_matmul", dtype="f8e4m3", n=N, k=K, groups=4),
        dict(bat, dtype="f8e4m3", n=N, k=K, groups=3),
        # FlashInfer's bmm_fp8: tensor-wise scales
        dict(bat, dtype="f8e4m3", n=N, k=K, groups=2, x_scale_block="tensor",
             w_scale_block="tensor"),
        # e5m2 operands (x and w alike): block scales, and bmm_fp8's
        # tensor-wise ones
        dict(seg, dtype="f8e5m2", n=N, k=K, groups=G),
        dict(bat, dtype="f8e5m2", n=N, k=K, groups=2, x_scale_block="tensor",
             w_scale_block="tensor"),
        # INT8 (s8, exact int32 sums): the ops with per-row and tensor-wise
        # scales, and aiter's int8_gemm (one batch, bf16 and f32 out)
        dict(seg, dtype="s8", n=N, k=K, groups=G, x_scale_block="per_row",
             w_scale_block="per_row"),
        dict(op="masked_matmul", dtype="s8", n=N, k=K, groups=4,
             x_scale_block="tensor", w_scale_block="per_row"),
        dict(bat, dtype="s8", n=N, k=K, groups=1, x_scale_block="per_row",
             w_scale_block="per_row"),
        dict(bat, dtype="s8", n=N, k=K, groups=1, x_scale_block="per_row",
             w_scale_block="per_row", out_dtype="f32"),
        # An e4m3 y with its 1x128 scales, and the FP8 op of the next layer
        # reading them as they are (K = N)
        dict(seg, dtype=bf, n=N, k=K, groups=G, activation="silu",
             out_dtype="f8e4m3"),
        dict(seg, dtype="f8e4m3", n=N2, k=N, groups=G),
        # autograd with weight_layout kn and weight indices: the forward,
        # dx (the other layout) and dW (below, K-ragged per segment)
        dict(seg, dtype=bf, n=N2, k=K2, groups=5, num_weights=3,
             weight_indices=True, index_dtype="i64", weight_layout="kn"),
        dict(seg, dtype=bf, n=K2, k=N2, groups=5, num_weights=3,
             weight_indices=True, index_dtype="i64"),
    ]
    # segment_matmul_k (K-ragged weight gradients): dw [G, N, K] from dy
    # [T, N] and x [T, K]. The ops, autograd's dW, megablox tgmm and
    # DeepGEMM's k_grouped_bf16_gemm_tn_contiguous.
    kr = dict(op="segment_matmul_k", dtype=bf)
    lines += [
        dict(kr, n=N, k=K, groups=G, out_dtype="f32"),
        dict(kr, n=N, k=K, groups=G),           # bf16 dw; autograd's dW
        dict(kr, n=N, k=K, groups=G, out_dtype="f32", accumulate=True),
        # weight indices (one f32 matrix per segment), kn; autograd kn dW
        dict(kr, n=N2, k=K2, groups=5, index_dtype="i64", out_dtype="f32",
             weight_layout="kn"),
        dict(kr, dtype=f16, n=N2, k=128, groups=4, out_dtype="f32",
             weight_layout="kn"),
        # megablox tgmm (int64 offsets from group_sizes), and its sharded
        # existing_out form; DeepGEMM's k-grouped (d = f32, c = d)
        dict(kr, n=K2, k=N2, groups=5, index_dtype="i64", out_dtype="f32"),
        dict(kr, n=K2, k=N2, groups=3, index_dtype="i64", out_dtype="f32",
             accumulate=True),
        # Given transposed (dy [N, T], x [K, T]): FP8 e4m3 with 1x128
        # scales along the tokens (f32 dw, also the per-segment matrices of
        # weight indices and torch.compile's; bf16 dw; accumulate kn i64).
        # bf16 given transposed (no scales).
        dict(kr, n=N, k=K, groups=G, transposed=True, out_dtype="f32"),
        dict(kr, dtype="f8e4m3", n=N, k=K, groups=G, transposed=True,
             out_dtype="f32"),
        dict(kr, dtype="f8e4m3", n=N, k=K, groups=G, transposed=True),
        dict(kr, dtype="f8e4m3", n=N2, k=K2, groups=5, transposed=True,
             index_dtype="i64", out_dtype="f32", weight_layout="kn",
             accumulate=True),
        # DeepGEMM's k_grouped_fp8_gemm_nt_contiguous (m = N2, n = K2, 4
        # groups, int64 offsets): c given (accumulate) or None
        dict(kr, dtype="f8e4m3", n=N2, k=K2, groups=4, transposed=True,
             index_dtype="i64", out_dtype="f32", accumulate=True),
        dict(kr, dtype="f8e4m3", n=N2, k=K2, groups=4, transposed=True,
             index_dtype="i64", out_dtype="f32"),
    ]
    return {"format": "bin", "kernels": lines}


# -- helpers -----------------------------------------------------------------

def rel_err(out, ref) -> float:
    out, ref = out.double(), ref.double()
    denom = ref.norm().item()
    diff = (out - ref).norm().item()
    return diff / denom if denom > 0 else diff


def expect_close(out, ref, what: str = "out") -> None:
    import torch
    if torch.isnan(out.double()).any():
        raise AssertionError(f"{what}: {int(torch.isnan(out.double()).sum())}"
                             f" NaN (poison or unwritten) elements")
    err = rel_err(out, ref)
    if not err < TOL:
        raise AssertionError(f"{what}: rel err {err:.2e} >= {TOL}")


def same_bits(a, b) -> bool:
    import torch
    bits = {2: torch.int16, 4: torch.int32}[a.element_size()]
    return bool((a.contiguous().view(bits) == b.contiguous().view(bits)).all())


def act64(t, activation):
    import torch
    return {"relu": torch.relu, "gelu": torch.nn.functional.gelu,
            "silu": torch.nn.functional.silu}.get(activation,
                                                  lambda v: v)(t)


def segments(rng, groups: int, start_gap: bool = True):
    """Random segment lengths with empty and 1-row segments, a gap before
    the first and after the last."""
    lengths = [rng.choice([0, 1, 7, 64, 127, 128, 129, 300]) for _ in
               range(groups)]
    start = rng.choice([0, 3]) if start_gap else 0
    offsets = [start]
    for length in lengths:
        offsets.append(offsets[-1] + length)
    rows = offsets[-1] + (rng.choice([0, 5]) if start_gap else 0)
    return offsets, rows


def seg_reference(x, w, offsets, layout="nk", weight_indices=None, bias=None,
                  activation=None, row_scale=None):
    """float64 reference of segment_matmul; zero outside the segments."""
    import torch
    n = w.shape[1] if layout == "nk" else w.shape[2]
    ref = torch.zeros(x.shape[0], n, dtype=torch.float64, device=x.device)
    for g in range(len(offsets) - 1):
        b, e = offsets[g], offsets[g + 1]
        if e <= b:
            continue
        i = int(weight_indices[g]) if weight_indices is not None else g
        if not 0 <= i < w.shape[0]:
            continue
        wm = w[i].double()
        z = x[b:e].double() @ (wm.t() if layout == "nk" else wm)
        if bias is not None:
            z = z + bias[i].double()
        z = act64(z, activation)
        if row_scale is not None:
            z = z * row_scale[b:e, None].double()
        ref[b:e] = z
    return ref


class Checker:
    """Runs cases, counting and printing each as a PASS or FAIL line (its
    name padded to ``width``), and keeps the lines in ``lines``."""

    def __init__(self, rng, width: int = 44,
                 lines: Optional[List[str]] = None) -> None:
        self.rng = rng
        self.width = width
        self.passed = self.failed = 0
        self.lines: List[str] = lines if lines is not None else []

    def run(self, name: str, case: Callable[[], str]) -> None:
        try:
            note = case() or ""
            ok, text = True, f"PASS {note}".rstrip()
        except Exception as error:  # noqa: BLE001 - every failure counts
            ok = False
            text = f"FAIL {type(error).__name__}: {error}"
            if os.environ.get("GGEMM_CHECK_TRACEBACK"):
                traceback.print_exc()
        self.passed += ok
        self.failed += not ok
        line = f"{name:{self.width}s} {text}"
        self.lines.append(line)
        print(line, flush=True)


# -- cases -------------------------------------------------------------------

def cases(check: Checker) -> None:
    import torch
    import ggemm
    from ggemm.compat import aiter, deep_gemm, flashinfer, megablox

    rng = check.rng
    dev = "cuda"
    bf = torch.bfloat16

    def rand(*shape, dtype=bf, scale=1.0):
        return (torch.randn(*shape, device=dev) * scale).to(dtype)

    def seg_case(layout="nk", dtype=bf, n=N, k=K, groups=G, num_weights=None,
                 weight_indices=False, index=torch.int32, bias=False,
                 row_scale=False, activation=None, out_dtype=None,
                 accumulate=False, with_out=False):
        def case():
            offsets, rows = segments(rng, groups)
            gw = num_weights or groups
            x = rand(rows, k, dtype=dtype)
            w = rand(gw, n, k, dtype=dtype, scale=1 / math.sqrt(k)) \
                if layout == "nk" else rand(gw, k, n, dtype=dtype,
                                            scale=1 / math.sqrt(k))
            seg = torch.tensor(offsets, dtype=index, device=dev)
            idx = (torch.tensor([rng.randrange(-1, gw + 1) for _ in
                                 range(groups)], dtype=torch.int32,
                                device=dev) if weight_indices else None)
            b = torch.randn(gw, n, device=dev) if bias else None
            rs = torch.rand(rows, device=dev) + 0.5 if row_scale else None
            odt = out_dtype or dtype
            out = None
            if with_out or accumulate:
                out = (torch.randn(rows, n, device=dev).to(odt) if accumulate
                       else torch.full((rows, n), float("nan"), device=dev,
                                       dtype=odt))
            before = out.clone() if out is not None else None
            y = ggemm.segment_matmul(
                x, w, seg, weight_indices=idx, weight_layout=layout, bias=b,
                activation=activation, row_scale=rs, accumulate=accumulate,
                out=out, out_dtype=None if out is not None else out_dtype)
            torch.cuda.synchronize()
            if out is not None and y is not out:
                raise AssertionError("out= was not returned")
            ref = seg_reference(x, w, offsets, layout, idx, b, activation, rs)
            inside = torch.zeros(rows, dtype=torch.bool, device=dev)
            for g in range(groups):
                if idx is None or 0 <= int(idx[g]) < gw:
                    inside[offsets[g]:offsets[g + 1]] = True
            if accumulate:
                ref[inside] += before[inside].double()
            expect_close(y[inside], ref[inside])
            expected = (out.dtype if out is not None else
                        torch.float32 if out_dtype == "f32" else dtype)
            if y.dtype != expected:
                raise AssertionError(f"dtype {y.dtype}, expected {expected}")
            outside = ~inside
            if out is not None:
                if not same_bits(y[outside], before[outside]):
                    raise AssertionError("rows outside every segment written")
            elif outside.any() and bool((y[outside] != 0).any()):
                raise AssertionError("rows outside every segment not zero")
            return f"rows={rows} err={rel_err(y[inside], ref[inside]):.1e}"
        return case

    check.run("segment_matmul nk bf16", seg_case())
    check.run("segment_matmul nk bf16 out=", seg_case(with_out=True))
    check.run("segment_matmul kn idx i64 ->f32",
              seg_case("kn", n=N2, k=K2, groups=5, num_weights=3,
                       weight_indices=True, index=torch.int64,
                       out_dtype="f32"))
    check.run("segment_matmul bias silu row_scale",
              seg_case(bias=True, row_scale=True, activation="silu"))
    check.run("segment_matmul f16 kn gelu accumulate",
              seg_case("kn", torch.float16, n=N2, k=128, groups=4,
                       activation="gelu", accumulate=True))
    check.run("segment_matmul relu N=200", seg_case(n=200,
                                                    activation="relu"))

    def grouped_case(op, layout="nk", dtype=bf, n=N, k=K, groups=4,
                     index=torch.int32, bias=False, row_scale=False,
                     out_dtype=None, with_out=False):
        def case():
            rows = rng.choice([1, 17, 64, 130])
            x = rand(groups, rows, k, dtype=dtype)
            w = (rand(groups, n, k, dtype=dtype, scale=1 / math.sqrt(k))
                 if layout == "nk" else
                 rand(groups, k, n, dtype=dtype, scale=1 / math.sqrt(k)))
            counts = [rng.choice([0, 1, rows, rows + 3, rng.randint(0, rows)])
                      for _ in range(groups)]
            masked = torch.tensor(counts, dtype=index, device=dev)
            b = torch.randn(groups, n, device=dev) if bias else None
            rs = torch.rand(groups, rows, device=dev) + 0.5 if row_scale \
                else None
            odt = {None: dtype, "f32": torch.float32}[out_dtype]
            out = (torch.full((groups, rows, n), float("nan"), device=dev,
                              dtype=odt) if with_out else None)
            before = out.clone() if out is not None else None
            kwargs = dict(weight_layout=layout, bias=b, row_scale=rs, out=out,
                          out_dtype=None if with_out else out_dtype)
            if op == "masked":
                y = ggemm.masked_matmul(x, w, masked, **kwargs)
            else:
                y = ggemm.batched_matmul(x, w, **kwargs)
            torch.cuda.synchronize()
            ref = torch.einsum("gmk,gnk->gmn", x.double(), w.double()) \
                if layout == "nk" else torch.einsum(
                    "gmk,gkn->gmn", x.double(), w.double())
            if b is not None:
                ref = ref + b.double()[:, None, :]
            if rs is not None:
                ref = ref * rs.double()[:, :, None]
            valid = torch.ones(groups, rows, dtype=torch.bool, device=dev)
            if op == "masked":
                for g, c in enumerate(counts):
                    valid[g, min(max(c, 0), rows):] = False
            expect_close(y[valid], ref[valid])
            if out is not None:
                if not same_bits(y[~valid], before[~valid]):
                    raise AssertionError("masked rows written")
            elif bool((y[~valid] != 0).any()):
                raise AssertionError("masked rows not zero")
            return f"rows={rows}"
        return case

    check.run("masked_matmul nk bf16", grouped_case("masked"))
    check.run("masked_matmul nk bf16 out=", grouped_case("masked",
                                                         with_out=True))
    check.run("masked_matmul kn f16 i64 bias row_scale",
              grouped_case("masked", "kn", torch.float16, n=N2, k=128,
                           groups=3, index=torch.int64, bias=True,
                           row_scale=True))
    check.run("batched_matmul nk bf16", grouped_case("batched", groups=3))
    check.run("batched_matmul kn ->f32",
              grouped_case("batched", "kn", n=N2, k=K2, groups=2,
                           out_dtype="f32"))

    # -- segment_matmul_k (K-ragged weight gradients)
    def kragged_case(layout="nk", dtype=bf, n=N, k=K, groups=G,
                     index=torch.int32, out_dtype=None, with_out=False,
                     accumulate=False, weight_indices=False, num_weights=None,
                     no_rows=False, fallback=None):
        def case():
            offsets, rows = segments(rng, groups)
            if no_rows:
                offsets, rows = [0] * (groups + 1), 0
            gw = num_weights or groups
            x = rand(rows, k, dtype=dtype)
            dy = rand(rows, n, dtype=dtype)
            seg = torch.tensor(offsets, dtype=index, device=dev)
            idx = (torch.tensor([rng.randrange(-1, gw + 1) for _ in
                                 range(groups)], dtype=torch.int64,
                                device=dev) if weight_indices else None)
            shape = (gw, n, k) if layout == "nk" else (gw, k, n)
            odt = {None: dtype, "f32": torch.float32, "bf16": bf}[out_dtype]
            out = None
            if with_out or accumulate:
                out = (torch.randn(*shape, device=dev).to(odt) if accumulate
                       else torch.full(shape, float("nan"), device=dev,
                                       dtype=odt))
            before = out.clone() if out is not None else None
            dw = ggemm.segment_matmul_k(
                x, dy, seg, weight_indices=idx,
                num_weights=num_weights, weight_layout=layout,
                accumulate=accumulate, out=out,
                out_dtype=None if out is not None else out_dtype,
                fallback=fallback)
            torch.cuda.synchronize()
            if out is not None and dw is not out:
                raise AssertionError("out= was not returned")
            if dw.dtype != odt or tuple(dw.shape) != shape:
                raise AssertionError(f"dw {dw.dtype} {list(dw.shape)}, "
                                     f"expected {odt} {list(shape)}")
            ref = torch.zeros(gw, n, k, dtype=torch.float64, device=dev)
            reached = [False] * gw
            for g in range(groups):
                i = int(idx[g]) if idx is not None else g
                b = min(max(offsets[g], 0), rows)
                e = min(max(offsets[g + 1], b), rows)
                if 0 <= i < gw and e > b:
                    ref[i] += dy[b:e].double().t() @ x[b:e].double()
                    reached[i] = True
            if layout == "kn":
                ref = ref.transpose(1, 2)
            if accumulate:
                ref = ref + before.double()
            expect_close(dw, ref, "dw")
            for i in range(gw):
                if reached[i]:
                    continue
                want = before[i] if accumulate else torch.zeros_like(dw[i])
                if not same_bits(dw[i], want):
                    raise AssertionError(
                        f"dw[{i}] (no rows) is not "
                        f"{'unchanged' if accumulate else 'zero'}")
            return (f"rows={rows} err={rel_err(dw, ref):.1e}" if rows
                    else "T=0")
        return case

    check.run("segment_matmul_k nk ->f32",
              kragged_case(out_dtype="f32"))
    check.run("segment_matmul_k nk ->bf16 (default dtype)", kragged_case())
    check.run("segment_matmul_k out= f32 (poisoned)",
              kragged_case(out_dtype="f32", with_out=True))
    check.run("segment_matmul_k accumulate out= f32",
              kragged_case(out_dtype="f32", accumulate=True))
    check.run("segment_matmul_k weight_indices kn i64",
              kragged_case("kn", n=N2, k=K2, groups=5, num_weights=3,
                           weight_indices=True, index=torch.int64,
                           out_dtype="bf16"))
    check.run("segment_matmul_k weight_indices accumulate",
              kragged_case("kn", n=N2, k=K2, groups=5, num_weights=3,
                           weight_indices=True, index=torch.int64,
                           out_dtype="f32", accumulate=True))
    check.run("segment_matmul_k f16 kn ->f32",
              kragged_case("kn", torch.float16, n=N2, k=128, groups=4,
                           out_dtype="f32"))
    check.run("segment_matmul_k T=0 -> zeros",
              kragged_case(out_dtype="f32", no_rows=True))
    check.run("segment_matmul_k T=0 out= (poisoned)",
              kragged_case(out_dtype="f32", no_rows=True, with_out=True))
    check.run("segment_matmul_k T=0 accumulate keeps",
              kragged_case(out_dtype="f32", no_rows=True, accumulate=True))
    check.run("segment_matmul_k N=204 fallback='torch'",
              kragged_case(n=204, out_dtype="f32", fallback="torch"))

    def kragged_refuses_case():
        x, dy = rand(64, K), rand(64, 204)
        seg = torch.tensor([0, 30, 64], dtype=torch.int32, device=dev)
        try:
            ggemm.segment_matmul_k(x, dy, seg)
        except ggemm.ArgumentError as error:
            if "multiple of 8" not in str(error):
                raise
            return "ArgumentError"
        raise AssertionError("N = 204 without fallback did not raise")

    check.run("segment_matmul_k N=204 raises without fallback",
              kragged_refuses_case)

    # -- compat: flashinfer
    def flashinfer_case(column_major: bool, use_lens: bool):
        def case():
            groups = G if column_major else 5
            n, k = (N, K) if column_major else (N2, K2)
            offsets, rows = segments(rng, groups, start_gap=False)
            x = rand(rows, k)
            w = (rand(groups, n, k, scale=1 / math.sqrt(k)) if column_major
                 else rand(groups, k, n, scale=1 / math.sqrt(k)))
            seg = torch.tensor(offsets, dtype=torch.int32, device=dev)
            wrapper = flashinfer.SegmentGEMMWrapper(
                torch.empty(1, device=dev))
            if use_lens:
                y = wrapper.run(x, w, groups, column_major,
                                seg_lens=seg[1:] - seg[:-1])
            else:
                y = wrapper.run(x, w, groups, column_major, seg_indptr=seg)
            torch.cuda.synchronize()
            ref = seg_reference(x, w, offsets, "nk" if column_major else "kn")
            expect_close(y, ref)
        return case

    check.run("flashinfer SegmentGEMMWrapper col-major lens",
              flashinfer_case(True, True))
    check.run("flashinfer SegmentGEMMWrapper row-major indptr",
              flashinfer_case(False, False))

    # -- compat: deep_gemm
    def dg_gemm_case():
        a, b = rand(300, K), rand(N, K, scale=1 / math.sqrt(K))
        d = torch.full((300, N), float("nan"), device=dev, dtype=bf)
        deep_gemm.bf16_gemm_nt(a, b, d)
        c = torch.randn(300, N, device=dev)
        d32 = torch.empty(300, N, device=dev)
        deep_gemm.bf16_gemm_nt(a, b, d32, c=c)
        torch.cuda.synchronize()
        ref = a.double() @ b.double().t()
        expect_close(d, ref, "d")
        expect_close(d32, ref + c.double(), "d (c=)")

    def dg_contiguous_case():
        groups = 4
        sizes = [rng.choice([0, 1, 100, 200]) for _ in range(groups)]
        order = list(range(groups))
        rng.shuffle(order)
        m_indices = []
        for g in order:  # groups in any order, padded to 128 with -1
            padded = -(-sizes[g] // 128) * 128
            m_indices += [g] * sizes[g] + [-1] * (padded - sizes[g])
        m_indices += [-1] * 5
        rows = len(m_indices)
        a = rand(rows, K)
        b = rand(groups, N, K, scale=1 / math.sqrt(K))
        d = torch.full((rows, N), float("nan"), device=dev, dtype=bf)
        mi = torch.tensor(m_indices, dtype=torch.int32, device=dev)
        deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, mi)
        torch.cuda.synchronize()
        valid = mi >= 0
        ref = torch.zeros(rows, N, dtype=torch.float64, device=dev)
        for g in range(groups):
            mine = mi == g
            ref[mine] = a.double()[mine] @ b[g].double().t()
        expect_close(d[valid], ref[valid], "d")
        if not bool(torch.isnan(d[~valid].float()).all()):
            raise AssertionError("rows with m_indices = -1 written")
        return f"rows={rows}"

    def dg_masked_case():
        groups, rows = 4, 64
        a = rand(groups, rows, K)
        b = rand(groups, N, K, scale=1 / math.sqrt(K))
        d = torch.full((groups, rows, N), float("nan"), device=dev, dtype=bf)
        counts = [rng.randint(0, rows) for _ in range(groups)]
        masked = torch.tensor(counts, dtype=torch.int32, device=dev)
        deep_gemm.m_grouped_bf16_gemm_nt_masked(a, b, d, masked,
                                                expected_m=rows // 2)
        torch.cuda.synchronize()
        for g, c in enumerate(counts):
            if c:
                expect_close(d[g, :c], a[g, :c].double() @ b[g].double().t())
            if not bool(torch.isnan(d[g, c:].float()).all()):
                raise AssertionError(f"group {g}: rows past masked_m written")

    # -- FP8: the quantisation and reference of check_fp8.py (DeepGEMM's
    # per_token / per_block casts, calc_diff < 1e-3 against float64 of the
    # dequantised operands)
    sys.path.insert(0, str(ROOT / "test" / "gpu"))
    import check_fp8 as f8
    from ggemm.compat import flag_gems

    def fp8_check(out, ref, what="out"):
        if torch.isnan(out.double()).any():
            raise AssertionError(f"{what}: NaN (poison or unwritten) elements")
        diff = f8.calc_diff(out, ref)
        if not diff < 1e-3:
            raise AssertionError(f"{what}: calc_diff {diff:.2e} >= 1e-3")
        return f"calc_diff {diff:.1e}"

    def fp8_weights(groups, dtype="f8e4m3"):
        return f8.quantize_blocks(torch.randn(groups, N, K, device=dev,
                                              dtype=bf), dtype)

    def fp8_segment_case(dtype="f8e4m3"):
        offsets, rows = segments(rng, G)
        xq, xs = f8.quantize_rows(torch.randn(rows, K, device=dev, dtype=bf),
                                  dtype)
        wq, ws = fp8_weights(G, dtype)
        if (xq.dtype, wq.dtype) != (f8.F8_TYPES[dtype][0],) * 2:
            raise AssertionError(f"operands {xq.dtype}, {wq.dtype}")
        seg = torch.tensor(offsets, dtype=torch.int32, device=dev)
        # Row-major activation scales: the op copies them MN-major.
        y = ggemm.segment_matmul(xq, wq, seg, x_scale=xs, w_scale=ws)
        torch.cuda.synchronize()
        xd, wd = f8.dequant_rows(xq, xs, K), f8.dequant_w(wq, ws)
        for g in range(G):
            b, e = offsets[g], offsets[g + 1]
            if e > b:
                fp8_check(y[b:e], xd[b:e] @ wd[g].t(), f"group {g}")
        if bool((y[:offsets[0]] != 0).any()) or \
                bool((y[offsets[-1]:] != 0).any()):
            raise AssertionError("rows outside the segments not zero")
        return f"rows={rows}"

    def fp8_dense_case():
        m = rng.choice([1, 100, 300])
        xq, xs = f8.quantize_rows(torch.randn(m, K, device=dev, dtype=bf))
        wq, ws = fp8_weights(1)
        d = torch.full((m, N), float("nan"), device=dev, dtype=bf)
        deep_gemm.gemm_fp8_fp8_bf16_nt((xq, xs), (wq[0], ws[0]), d)
        torch.cuda.synchronize()
        return fp8_check(d, f8.dequant_rows(xq, xs, K)
                         @ f8.dequant_w(wq, ws)[0].t())

    def fp8_contiguous_case():
        groups = 4
        sizes = [rng.choice([0, 1, 100, 200]) for _ in range(groups)]
        m_indices = []
        for g in range(groups):
            padded = -(-sizes[g] // 128) * 128
            m_indices += [g] * sizes[g] + [-1] * (padded - sizes[g])
        m_indices += [-1] * 5
        rows = len(m_indices)
        xq, xs = f8.quantize_rows(torch.randn(rows, K, device=dev, dtype=bf))
        wq, ws = fp8_weights(groups)
        d = torch.full((rows, N), float("nan"), device=dev, dtype=bf)
        mi = torch.tensor(m_indices, dtype=torch.int32, device=dev)
        deep_gemm.m_grouped_gemm_fp8_fp8_bf16_nt_contiguous((xq, xs),
                                                            (wq, ws), d, mi)
        torch.cuda.synchronize()
        xd, wd = f8.dequant_rows(xq, xs, K), f8.dequant_w(wq, ws)
        notes = []
        for g in range(groups):
            mine = mi == g
            if bool(mine.any()):
                notes.append(fp8_check(d[mine], xd[mine] @ wd[g].t(),
                                       f"group {g}"))
        if not bool(torch.isnan(d[mi < 0].float()).all()):
            raise AssertionError("rows with m_indices = -1 written")
        return f"rows={rows}"

    def fp8_masked_case():
        groups, rows = 4, 64
        xq, xs = f8.quantize_rows(torch.randn(groups * rows, K, device=dev,
                                              dtype=bf))
        wq, ws = fp8_weights(groups)
        d = torch.full((groups, rows, N), float("nan"), device=dev, dtype=bf)
        counts = [rng.randint(0, rows) for _ in range(groups)]
        masked = torch.tensor(counts, dtype=torch.int32, device=dev)
        deep_gemm.m_grouped_gemm_fp8_fp8_bf16_nt_masked(
            (xq.view(groups, rows, K), xs.view(groups, rows, -1)), (wq, ws),
            d, masked, expected_m=rows // 2)
        torch.cuda.synchronize()
        xd = f8.dequant_rows(xq, xs, K).view(groups, rows, K)
        wd = f8.dequant_w(wq, ws)
        for g, c in enumerate(counts):
            if c:
                fp8_check(d[g, :c], xd[g, :c] @ wd[g].t(), f"group {g}")
            if not bool(torch.isnan(d[g, c:].float()).all()):
                raise AssertionError(f"group {g}: rows past masked_m written")

    def fp8_bmm_case():
        batch, m = 3, rng.choice([16, 128, 200])
        xq, xs = f8.quantize_rows(torch.randn(batch * m, K, device=dev,
                                              dtype=bf))
        wq, ws = fp8_weights(batch)
        z = flag_gems.w8a8_block_fp8_bmm(xq.view(batch, m, K),
                                         wq, xs.view(batch, m, -1), ws,
                                         block_size=[128, 128])
        torch.cuda.synchronize()
        xd = f8.dequant_rows(xq, xs, K).view(batch, m, K)
        return fp8_check(z, torch.bmm(xd, f8.dequant_w(wq, ws)
                                      .transpose(1, 2)))

    def flashinfer_bmm_fp8_case(dtype=torch.float8_e4m3fn):
        from ggemm.compat import flashinfer
        batch, m = 2, rng.choice([1, 64, 200])
        a = torch.randn(batch, m, K, device=dev) * 3
        b = torch.randn(batch, N, K, device=dev)
        # Tensor-wise scales, FlashInfer's convention: x = q * scale.
        f8_max = torch.finfo(dtype).max
        a_scale = (a.abs().amax() / f8_max).reshape(1)
        b_scale = (b.abs().amax() / f8_max).reshape(1)
        aq = (a / a_scale).to(dtype)
        bq = (b / b_scale).to(dtype)
        out = torch.full((batch, m, N), float("nan"), device=dev, dtype=bf)
        # B as FlashInfer passes it: [b, k, n], column-major.
        flashinfer.bmm_fp8(aq, bq.transpose(-2, -1), a_scale, b_scale,
                           torch.bfloat16, out=out)
        torch.cuda.synchronize()
        ref = torch.bmm(aq.double() * a_scale.double(),
                        (bq.double() * b_scale.double()).transpose(1, 2))
        return fp8_check(out, ref)

    def fp8_out_case():
        # An e4m3 y, then the next layer's FP8 op on (y, y_scale) as they
        # are: its x and 1x128 x_scale.
        offsets, rows = segments(rng, G)
        x, w = rand(rows, K), rand(G, N, K, scale=1 / 16)
        seg = torch.tensor(offsets, dtype=torch.int32, device=dev)
        h, hs = ggemm.segment_matmul(x, w, seg, activation="silu",
                                     out_dtype=torch.float8_e4m3fn)
        w2q, w2s = f8.quantize_blocks(torch.randn(G, N2, N, device=dev,
                                                  dtype=bf))
        out = ggemm.segment_matmul(h, w2q, seg, x_scale=hs, w_scale=w2s)
        torch.cuda.synchronize()
        ref = seg_reference(x, w, offsets, activation="silu")
        b, e = offsets[0], offsets[-1]
        diff = f8.check_fp8_rows(h[b:e], hs[b:e], ref[b:e])
        hd = h.double() * hs.double().repeat_interleave(128, dim=1)[:, :N]
        wd2 = f8.dequant_w(w2q, w2s)
        for g in range(G):
            gb, ge = offsets[g], offsets[g + 1]
            if ge > gb:
                fp8_check(out[gb:ge], hd[gb:ge] @ wd2[g].t(), f"group {g}")
        return (f"e4m3 y calc_diff {diff:.1e}, y_scale {tuple(hs.shape)} "
                f"strides {hs.stride()}")

    check.run("e4m3 y (out_dtype) -> next FP8 segment_matmul", fp8_out_case)
    check.run("fp8 segment_matmul (row-major x_scale)", fp8_segment_case)
    check.run("flashinfer bmm_fp8 (tensor-wise)", flashinfer_bmm_fp8_case)
    check.run("fp8 e5m2 segment_matmul (1x128 / 128x128)",
              lambda: fp8_segment_case("f8e5m2"))
    check.run("flashinfer bmm_fp8 e5m2 (tensor-wise)",
              lambda: flashinfer_bmm_fp8_case(torch.float8_e5m2))
    check.run("deep_gemm gemm_fp8_fp8_bf16_nt", fp8_dense_case)
    check.run("deep_gemm m_grouped fp8 contiguous", fp8_contiguous_case)
    check.run("deep_gemm m_grouped fp8 masked", fp8_masked_case)
    check.run("flag_gems w8a8_block_fp8_bmm", fp8_bmm_case)

    # -- FP8 K-ragged weight gradients: segment_matmul_k with e4m3 x [K, T]
    # and dy [N, T] (transposed) and 1x128 scales along the tokens, and
    # DeepGEMM's k_grouped_fp8_gemm_nt_contiguous on it. Criterion as
    # DeepGEMM's (and test/gpu/check_kragged_fp8.py's): calc_diff < 1e-3
    # per weight against the float64 product of the dequantised operands;
    # weights without rows exactly zero (bit-identical with accumulate).
    def fp8_tokens(features, tokens, scales="mn"):
        """(q [F, T] e4m3: a view of rows padded to 16 bytes when T is
        not a multiple of 16; scale [F, ceil(T/128)] f32, MN-major
        (torch.empty(TB, F).t()) or row-major; the dequantised float64
        [F, T]): values whose magnitude moves by up to 2^3 from one (row,
        128-token block) to the next, quantised per block (amax / 448)."""
        tb = -(-tokens // 128)
        src = torch.randn(features, tb, 128, device=dev)
        src = src * torch.exp2(torch.randint(
            -3, 4, (features, tb, 1), device=dev).float())
        src = src.reshape(features, tb * 128)
        src[:, tokens:] = 0
        blocks = src.view(features, tb, 128)
        scale = blocks.abs().amax(dim=2).clamp(min=1e-4) / 448.0
        q = (blocks / scale[:, :, None]).clamp(-448, 448).to(
            torch.float8_e4m3fn)
        deq = (q.double() * scale[:, :, None].double()).reshape(
            features, tb * 128)[:, :tokens]
        storage = torch.zeros(features, max(-(-tokens // 16) * 16, 16),
                              device=dev, dtype=torch.float8_e4m3fn)
        storage[:, :tokens] = q.reshape(features, tb * 128)[:, :tokens]
        if scales == "mn":
            scale = torch.empty(tb, features, device=dev).copy_(scale.t()).t()
        return storage[:, :tokens], scale.contiguous() if scales == "row" \
            else scale, deq

    def fp8_kragged_case(layout="nk", n=N, k=K, groups=G, index=torch.int32,
                         out_dtype="f32", accumulate=False, with_out=False,
                         weight_indices=False, num_weights=None,
                         scales="mn"):
        def case():
            # Segments starting and ending mid-block, one empty group, rows
            # before the first and after the last (in no group).
            lengths = [rng.choice([1, 7, 64, 127, 129, 300])
                       for _ in range(groups)]
            lengths[rng.randrange(groups)] = 0
            offsets = [rng.choice([0, 3, 50])]
            for length in lengths:
                offsets.append(offsets[-1] + length)
            rows = offsets[-1] + rng.choice([0, 5, 13])
            x, xs, x_deq = fp8_tokens(k, rows, scales)
            dy, dys, dy_deq = fp8_tokens(n, rows, scales)
            gw = num_weights or groups
            seg = torch.tensor(offsets, dtype=index, device=dev)
            idx = (torch.tensor([rng.randrange(-1, gw + 1) for _ in
                                 range(groups)], dtype=torch.int32,
                                device=dev) if weight_indices else None)
            shape = (gw, n, k) if layout == "nk" else (gw, k, n)
            odt = {"f32": torch.float32, "bf16": bf, None: bf}[out_dtype]
            out = None
            if with_out or accumulate:
                out = (torch.randn(*shape, device=dev).to(odt) if accumulate
                       else torch.full(shape, float("nan"), device=dev,
                                       dtype=odt))
            before = out.clone() if out is not None else None
            dw = ggemm.segment_matmul_k(
                x, dy, seg, transposed=True, x_scale=xs, dy_scale=dys,
                weight_indices=idx, num_weights=num_weights,
                weight_layout=layout, accumulate=accumulate, out=out,
                out_dtype=None if out is not None else
                {"f32": torch.float32, "bf16": bf, None: None}[out_dtype])
            torch.cuda.synchronize()
            if out is not None and dw is not out:
                raise AssertionError("out= was not returned")
            if dw.dtype != odt or tuple(dw.shape) != shape:
                raise AssertionError(f"dw {dw.dtype} {list(dw.shape)}, "
                                     f"expected {odt} {list(shape)}")
            ref = torch.zeros(gw, n, k, dtype=torch.float64, device=dev)
            reached = [False] * gw
            for g in range(groups):
                i = int(idx[g]) if idx is not None else g
                b, e = offsets[g], offsets[g + 1]
                if 0 <= i < gw and e > b:
                    ref[i] += dy_deq[:, b:e] @ x_deq[:, b:e].t()
                    reached[i] = True
            if layout == "kn":
                ref = ref.transpose(1, 2)
            notes = []
            for i in range(gw):
                if not reached[i]:
                    want = before[i] if accumulate else torch.zeros_like(
                        dw[i])
                    if not same_bits(dw[i], want):
                        raise AssertionError(
                            f"dw[{i}] (no rows) is not "
                            f"{'unchanged' if accumulate else 'zero'}")
                    continue
                got = dw[i].double() - (before[i].double() if accumulate
                                        else 0)
                notes.append(fp8_check(got, ref[i], f"dw[{i}]"))
            padded = x.stride(0) != rows
            return (f"T={rows}{' (padded rows)' if padded else ''}, "
                    f"{sum(reached)}/{gw} reached, "
                    f"max {max(notes, default='-')}")
        return case

    check.run("segment_matmul_k fp8 nk ->f32 (unaligned, empty group)",
              fp8_kragged_case())
    check.run("segment_matmul_k fp8 ->bf16 default, row-major scales",
              fp8_kragged_case(out_dtype=None, scales="row"))
    check.run("segment_matmul_k fp8 out= f32 (poisoned)",
              fp8_kragged_case(with_out=True))
    check.run("segment_matmul_k fp8 accumulate kn i64",
              fp8_kragged_case("kn", n=N2, k=K2, groups=5,
                               index=torch.int64, accumulate=True))
    check.run("segment_matmul_k fp8 weight_indices ->bf16",
              fp8_kragged_case(num_weights=3, weight_indices=True,
                               out_dtype="bf16"))

    def fp8_kragged_compile_case():
        def f(x, dy, seg, xs, dys):
            return ggemm.segment_matmul_k(
                x, dy, seg, transposed=True, x_scale=xs, dy_scale=dys,
                out_dtype=torch.float32) * 2
        compiled = torch.compile(f, fullgraph=True)
        offsets = [0, 100, 100, 250, 251, 400, 512]
        x, xs, x_deq = fp8_tokens(K, 512)
        dy, dys, dy_deq = fp8_tokens(N, 512)
        seg = torch.tensor(offsets, dtype=torch.int32, device=dev)
        dw = compiled(x, dy, seg, xs, dys)
        torch.cuda.synchronize()
        for g in range(G):
            b, e = offsets[g], offsets[g + 1]
            if e > b:
                fp8_check(dw[g], 2 * dy_deq[:, b:e] @ x_deq[:, b:e].t(),
                          f"dw[{g}]")
            elif not bool((dw[g] == 0).all()):
                raise AssertionError(f"dw[{g}] (no rows) is not zero")
        return "fullgraph"

    check.run("segment_matmul_k fp8 under torch.compile(fullgraph)",
              fp8_kragged_compile_case)

    def dg_k_grouped_fp8_case(ks, accumulate, use_ks_tensor):
        """DeepGEMM's SM90 K-grouped FP8 GEMM: a and b K-major, each
        group's [m, ks[g]] / [n, ks[g]] block back to back (as DeepGEMM's
        generators lay them out), sf = per-channel scales transposed
        ([m, sum(ks)/128], MN-major), d [G, m, n] f32; c = d (in place),
        another tensor, or None."""
        def case():
            m, n = N2, K2
            groups, total = len(ks), sum(ks)
            a_q, a_s, a_deq = fp8_tokens(m, total)
            b_q, b_s, b_deq = fp8_tokens(n, total)

            def k_major_blocks(q):
                pieces, start = [], 0
                for size in ks:
                    pieces.append(q[:, start:start + size].contiguous()
                                  .view(torch.uint8).reshape(-1))
                    start += size
                return torch.cat(pieces).view(torch.float8_e4m3fn)
            a, b = (k_major_blocks(a_q), a_s), (k_major_blocks(b_q), b_s)
            ks_tensor = (torch.tensor(ks, dtype=torch.int32, device=dev)
                         if use_ks_tensor else None)
            d = torch.full((groups, m, n), float("nan"), device=dev)
            c = None
            if accumulate == "in place":
                d = torch.randn(groups, m, n, device=dev)
                c = d
                # The first call loads the kernel; the second must not
                # synchronise (ks_tensor's prefix sums stay on the device).
                scratch = d.clone()
                deep_gemm.k_grouped_fp8_gemm_nt_contiguous(
                    a, b, scratch, ks, ks_tensor, c=scratch)
            elif accumulate == "other":
                c = torch.randn(groups, m, n, device=dev)
            before = (c if c is not None else d).clone()
            torch.cuda.synchronize()
            if use_ks_tensor:
                torch.cuda.set_sync_debug_mode("error")
            try:
                deep_gemm.k_grouped_fp8_gemm_nt_contiguous(
                    a, b, d, ks, ks_tensor, c=c, recipe=(1, 1, 128))
            finally:
                torch.cuda.set_sync_debug_mode("default")
            torch.cuda.synchronize()
            start = 0
            notes = []
            for g, size in enumerate(ks):
                if size == 0:
                    want = before[g] if c is not None else torch.zeros_like(
                        d[g])
                    if not same_bits(d[g], want):
                        raise AssertionError(f"d[{g}] (ks = 0) is not "
                                             f"{'c' if c is not None else 0}")
                    continue
                ref = (a_deq[:, start:start + size]
                       @ b_deq[:, start:start + size].t())
                got = d[g].double() - (before[g].double() if c is not None
                                       else 0)
                notes.append(fp8_check(got, ref, f"d[{g}]"))
                start += size
            return f"ks={ks}, max {max(notes, default='-')}"
        return case

    check.run("deep_gemm k_grouped_fp8_nt ks%128=0 c=d, no sync",
              dg_k_grouped_fp8_case([256, 0, 128, 384], "in place", True))
    check.run("deep_gemm k_grouped_fp8_nt unaligned ks, c other",
              dg_k_grouped_fp8_case([100, 37, 0, 250], "other", False))
    check.run("deep_gemm k_grouped_fp8_nt one group, c=None",
              dg_k_grouped_fp8_case([0, 512, 0, 0], None, True))

    # -- INT8: s8 x s8 summed exactly in int32, dequantised in the epilogue
    def int8_rand(*shape):
        return torch.randint(-128, 128, shape, device=dev, dtype=torch.int8)

    def int8_segment_case():
        offsets, rows = segments(rng, G)
        x, w = int8_rand(rows, K), int8_rand(G, N, K)
        xs = torch.rand(rows, device=dev) + 0.5
        ws = torch.rand(G, N, device=dev) / 1000
        indptr = torch.tensor(offsets, dtype=torch.int32, device=dev)
        y = torch.full((rows, N), float("nan"), device=dev, dtype=bf)
        ggemm.segment_matmul(x, w, indptr, x_scale=xs, w_scale=ws, out=y)
        torch.cuda.synchronize()
        ref = seg_reference(x, w, offsets)
        for g in range(G):
            b, e = offsets[g], offsets[g + 1]
            ref[b:e] *= xs[b:e, None].double() * ws[g].double()
        inside = torch.zeros(rows, dtype=torch.bool, device=dev)
        inside[offsets[0]:offsets[-1]] = True
        expect_close(y[inside], ref[inside])
        if not bool(torch.isnan(y[~inside].float()).all()):
            raise AssertionError("rows outside every segment were written")
        return f"rel err {rel_err(y[inside], ref[inside]):.1e}"

    def int8_masked_case():
        groups, rows = 4, 160
        counts = [rng.choice([0, 1, 50, 160, 300]) for _ in range(groups)]
        x, w = int8_rand(groups, rows, K), int8_rand(groups, N, K)
        xs = torch.rand(1, device=dev) / 100
        ws = torch.rand(groups, N, device=dev) / 100
        m = torch.tensor(counts, dtype=torch.int32, device=dev)
        y = torch.full((groups, rows, N), float("nan"), device=dev, dtype=bf)
        ggemm.masked_matmul(x, w, m, x_scale=xs, w_scale=ws, out=y)
        torch.cuda.synchronize()
        errors = []
        for g, c in enumerate(counts):
            c = min(c, rows)
            ref = (x[g, :c].double() @ w[g].double().t()) * xs.double() \
                * ws[g].double()
            if c:
                expect_close(y[g, :c], ref, f"group {g}")
                errors.append(rel_err(y[g, :c], ref))
            if not bool(torch.isnan(y[g, c:].float()).all()):
                raise AssertionError(f"group {g}: rows past masked_m written")
        return f"max rel err {max(errors, default=0):.1e}"

    def aiter_int8_case():
        from ggemm.compat import aiter
        m = rng.choice([1, 33, 200])
        x, w = int8_rand(m, K), int8_rand(N, K)
        x_scale = torch.rand(m, 1, device=dev) / 100
        w_scale = torch.rand(1, N, device=dev) / 100
        y = aiter.int8_gemm(x, w, x_scale, w_scale, torch.bfloat16)
        torch.cuda.synchronize()
        if y.shape != (m, N) or y.dtype != bf:
            raise AssertionError(f"got {tuple(y.shape)} {y.dtype}")
        ref = (x.double() @ w.double().t()) * x_scale.double() \
            * w_scale.double()
        expect_close(y, ref)
        return f"rel err {rel_err(y, ref):.1e}"

    def aiter_int8_exact_case():
        # Unit scales, f32 out, K = 256: |sum| <= 2^22, so the int32 sum
        # converted to f32 is the exact integer product.
        from ggemm.compat import aiter
        m = rng.choice([17, 256])
        x, w = int8_rand(m, K), int8_rand(N, K)
        x[0], w[0] = -128, -128
        y = aiter.int8_gemm(x, w, torch.ones(m, 1, device=dev),
                            torch.ones(1, N, device=dev), torch.float32)
        torch.cuda.synchronize()
        exact = x.double() @ w.double().t()
        if not torch.equal(y.double(), exact):
            raise AssertionError(f"{int((y.double() != exact).sum())} values "
                                 f"differ from the exact integer product")
        return "equal to the integer product"

    check.run("int8 segment_matmul per-row scales", int8_segment_case)
    check.run("int8 masked_matmul tensor x, channel w", int8_masked_case)
    check.run("aiter int8_gemm per-token/per-channel", aiter_int8_case)
    check.run("aiter int8_gemm f32 unit scales exact", aiter_int8_exact_case)

    check.run("deep_gemm bf16_gemm_nt (+c)", dg_gemm_case)
    check.run("deep_gemm m_grouped contiguous m_indices", dg_contiguous_case)
    check.run("deep_gemm m_grouped masked", dg_masked_case)

    # -- compat: megablox / ejkernel
    def gmm_case(offset):
        def case():
            total = 5
            sizes = [rng.choice([0, 1, 64, 150]) for _ in range(total)]
            rows = sum(sizes)
            lhs = rand(rows, K2)
            local = 3 if offset is not None else total
            first = offset or 0
            rhs = rand(local, K2, N2, scale=1 / math.sqrt(K2))
            group_sizes = torch.tensor(sizes, dtype=torch.int32, device=dev)
            existing = (torch.randn(rows, N2, device=dev).to(bf)
                        if offset is not None else None)
            before = existing.clone() if existing is not None else None
            out = megablox.gmm(lhs, rhs, group_sizes,
                               preferred_element_type=bf,
                               group_offset=offset, existing_out=existing)
            torch.cuda.synchronize()
            bounds = [0]
            for s in sizes:
                bounds.append(bounds[-1] + s)
            ref = (before.double().clone() if before is not None else
                   torch.zeros(rows, N2, dtype=torch.float64, device=dev))
            for j in range(local):
                b, e = bounds[first + j], bounds[first + j + 1]
                ref[b:e] = lhs[b:e].double() @ rhs[j].double()
            if before is not None:
                b, e = bounds[first], bounds[first + local]
                mine = torch.zeros(rows, dtype=torch.bool, device=dev)
                mine[b:e] = True
                if not same_bits(out[~mine], before[~mine]):
                    raise AssertionError("rows of other shards changed")
                expect_close(out[mine], ref[mine])
            else:
                expect_close(out, ref)
        return case

    check.run("megablox gmm", gmm_case(None))
    check.run("megablox gmm group_offset existing_out", gmm_case(2))

    def tgmm_case(sharded, row_major_lhs):
        def case():
            total = 5
            sizes = [rng.choice([0, 1, 64, 150, 333]) for _ in range(total)]
            rows = sum(sizes) + 7  # rows past every group: in none
            x = rand(rows, K2)
            lhs = x.t().contiguous() if row_major_lhs else x.t()  # [k, m]
            rhs = rand(rows, N2)                                   # [m, n]
            group_sizes = torch.tensor(sizes, dtype=torch.int32, device=dev)
            first, local = (1, 3) if sharded else (0, total)
            existing = (torch.randn(local, K2, N2, device=dev) if sharded
                        else None)
            before = existing.clone() if existing is not None else None
            out = megablox.tgmm(
                lhs, rhs, group_sizes, group_offset=first if sharded
                else None, num_actual_groups=local if sharded else None,
                existing_out=existing)
            torch.cuda.synchronize()
            if out.dtype != torch.float32 or tuple(out.shape) != (
                    local, K2, N2):
                raise AssertionError(f"out {out.dtype} {list(out.shape)}")
            bounds = [0]
            for size in sizes:
                bounds.append(bounds[-1] + size)
            ref = (before.double() if before is not None else
                   torch.zeros(local, K2, N2, dtype=torch.float64,
                               device=dev))
            for j in range(local):
                b, e = bounds[first + j], bounds[first + j + 1]
                ref[j] += x[b:e].double().t() @ rhs[b:e].double()
            expect_close(out, ref, "tgmm")
            return f"sizes={sizes}"
        return case

    check.run("megablox tgmm (lhs = x.t())", tgmm_case(False, False))
    check.run("megablox tgmm row-major lhs", tgmm_case(False, True))
    check.run("megablox tgmm group_offset existing_out", tgmm_case(True,
                                                                   False))

    def dg_k_grouped_case(accumulate):
        def case():
            groups = 3 if accumulate else 5
            ks = [rng.choice([0, 1, 128, 256, 300]) for _ in range(groups)]
            total = sum(ks)
            a, b = rand(total, K2), rand(total, N2)        # [sum k, m / n]
            ks_tensor = torch.tensor(ks, dtype=torch.int32, device=dev)
            d = (torch.randn(groups, K2, N2, device=dev) if accumulate else
                 torch.full((groups, K2, N2), float("nan"), device=dev))
            before = d.clone()
            deep_gemm.k_grouped_bf16_gemm_tn_contiguous(
                a, b, d, ks, ks_tensor, c=d if accumulate else None)
            torch.cuda.synchronize()
            ref = (before.double() if accumulate else
                   torch.zeros(groups, K2, N2, dtype=torch.float64,
                               device=dev))
            start = 0
            for g, size in enumerate(ks):
                ref[g] += (a[start:start + size].double().t()
                           @ b[start:start + size].double())
                start += size
            expect_close(d, ref, "d")
            return f"ks={ks}"
        return case

    check.run("deep_gemm k_grouped_bf16_gemm_tn_contiguous",
              dg_k_grouped_case(False))
    check.run("deep_gemm k_grouped_bf16 c=d (accumulate)",
              dg_k_grouped_case(True))

    # -- compat: aiter
    def aiter_case():
        a = rand(2, 100, K2)
        b = rand(2, K2, N2, scale=1 / math.sqrt(K2))
        expect_close(aiter.batched_gemm(a, b), a.double() @ b.double(),
                     "batched_gemm")
        bt = rand(3, N, K, scale=1 / math.sqrt(K))
        at = rand(3, 50, K)
        expect_close(aiter.batched_gemm(at, bt, transpose_b=True),
                     at.double() @ bt.double().transpose(1, 2),
                     "batched_gemm transpose_b")
        x = rand(77, K2)
        w = rand(K2, N2, scale=1 / math.sqrt(K2))
        bias = torch.randn(N2, device=dev)
        z = x.double() @ w.double()
        expect_close(aiter.gemm_bias(x, w, bias), z + bias.double(),
                     "gemm_bias")
        expect_close(aiter.gemm_gelu(x, w, bias),
                     torch.nn.functional.gelu(z + bias.double()), "gemm_gelu")
        expect_close(aiter.gemm_relu(x, w), torch.relu(z), "gemm_relu")
        c = torch.randn(77, N2, device=dev).to(bf)
        expect_close(aiter.cutlass_gemm(x, w, alpha=0.5), 0.5 * z,
                     "cutlass_gemm alpha")
        expect_close(aiter.cutlass_gemm(x, w, 0.5, 2.0, c),
                     0.5 * z + 2.0 * c.double(), "cutlass_gemm beta c")

    check.run("aiter batched/bias/gelu/relu/cutlass_gemm", aiter_case)

    # -- autograd
    def autograd_case(activation, with_bias, with_scale):
        def case():
            offsets, rows = segments(rng, G)
            x = rand(rows, K).requires_grad_()
            w = rand(G, N, K, scale=1 / math.sqrt(K)).requires_grad_()
            seg = torch.tensor(offsets, dtype=torch.int32, device=dev)
            b = (torch.randn(G, N, device=dev).requires_grad_()
                 if with_bias else None)
            rs = ((torch.rand(rows, device=dev) + 0.5).requires_grad_()
                  if with_scale else None)
            y = ggemm.segment_matmul(x, w, seg, bias=b, activation=activation,
                                     row_scale=rs)
            dy = torch.randn_like(y)
            y.backward(dy)
            leaves = [t for t in (x, w, b, rs) if t is not None]
            refs = [t.detach().double().requires_grad_() for t in leaves]
            ref = seg_reference(refs[0], refs[1], offsets, "nk", None,
                                refs[2] if with_bias else None, activation,
                                refs[-1] if with_scale else None)
            ref.backward(dy.double())
            expect_close(y.detach(), ref.detach(), "y")
            for name, t, r in zip("x w bias row_scale".split()
                                  if with_bias else
                                  "x w row_scale".split(), leaves, refs):
                expect_close(t.grad, r.grad, f"d{name}")
        return case

    check.run("autograd segment_matmul", autograd_case(None, False, False))
    check.run("autograd segment_matmul bias silu row_scale",
              autograd_case("silu", True, True))

    def autograd_kn_indices_case():
        """dW through the K-ragged kernel with weight indices (several
        segments per weight, one skipped) and weight_layout kn, against
        torch's float64 autograd; the backward must not synchronise."""
        groups, gw = 5, 3
        offsets, rows = segments(rng, groups)
        x = rand(rows, K2).requires_grad_()
        w = rand(gw, K2, N2, scale=1 / math.sqrt(K2)).requires_grad_()
        seg = torch.tensor(offsets, dtype=torch.int64, device=dev)
        idx = torch.tensor([0, 2, 0, -1, 1], dtype=torch.int32, device=dev)
        y = ggemm.segment_matmul(x, w, seg, weight_indices=idx,
                                 weight_layout="kn")
        dy = torch.randn_like(y)
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            y.backward(dy)
        finally:
            torch.cuda.set_sync_debug_mode("default")
        xr = x.detach().double().requires_grad_()
        wr = w.detach().double().requires_grad_()
        ref = seg_reference(xr, wr, offsets, "kn", idx)
        ref.backward(dy.double())
        expect_close(x.grad, xr.grad, "dx")
        expect_close(w.grad, wr.grad, "dW")
        if w.grad.dtype != w.dtype:
            raise AssertionError(f"dW dtype {w.grad.dtype}")
        return f"rows={rows}, backward without sync"

    check.run("autograd kn weight_indices dW (K-ragged, no sync)",
              autograd_kn_indices_case)

    # -- torch.compile
    def compile_case():
        def f(x, w, seg):
            return ggemm.segment_matmul(x, w, seg, activation="silu") * 2 + 1
        compiled = torch.compile(f, fullgraph=True)
        offsets, rows = segments(rng, G, start_gap=False)
        x = rand(rows, K)
        w = rand(G, N, K, scale=1 / math.sqrt(K))
        seg = torch.tensor(offsets, dtype=torch.int32, device=dev)
        got = compiled(x, w, seg)
        torch.cuda.synchronize()
        ref = seg_reference(x, w, offsets, activation="silu") * 2 + 1
        expect_close(got, ref)
        x2 = rand(rows + 40, K)
        offsets2 = offsets[:-1] + [rows + 40]
        seg2 = torch.tensor(offsets2, dtype=torch.int32, device=dev)
        expect_close(compiled(x2, w, seg2),
                     seg_reference(x2, w, offsets2, activation="silu") * 2 + 1,
                     "second shape")

    check.run("torch.compile(fullgraph=True)", compile_case)

    # -- CUDA graph
    def graph_case():
        offsets, rows = segments(rng, G, start_gap=False)
        x = rand(rows, K)
        w = rand(G, N, K, scale=1 / math.sqrt(K))
        seg = torch.tensor(offsets, dtype=torch.int32, device=dev)
        y = torch.empty(rows, N, device=dev, dtype=bf)
        ggemm.segment_matmul(x, w, seg, out=y)  # loads the module
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            ggemm.segment_matmul(x, w, seg, out=y)
        cuts = sorted(rng.randint(0, rows) for _ in range(G - 1))
        offsets = [0] + cuts + [rows]
        seg.copy_(torch.tensor(offsets, dtype=torch.int32))
        y.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        expect_close(y, seg_reference(x, w, offsets))

    check.run("CUDA graph capture + new segments + replay", graph_case)

    # bf16 operands given transposed (dy [N, T], x [K, T]): on the kernel,
    # segments starting and ending at any token (its K blocks are aligned
    # and masked at both ends), against torch's fallback and float64.
    def bf16_transposed_kragged_case():
        offsets, rows = segments(rng, G)
        x, dy = rand(K, rows), rand(N, rows)      # [K, T], [N, T]
        if rows % 8:                              # 16-byte rows: pad them
            pad = -(-rows // 8) * 8
            x = torch.cat([x, x.new_zeros(K, pad - rows)], 1)[:, :rows]
            dy = torch.cat([dy, dy.new_zeros(N, pad - rows)], 1)[:, :rows]
        seg = torch.tensor(offsets, dtype=torch.int32, device=dev)
        dw = torch.full((G, N, K), float("nan"), device=dev)
        ggemm.segment_matmul_k(x, dy, seg, transposed=True, out=dw)
        fallback = ggemm.segment_matmul_k(x, dy, seg, transposed=True,
                                          out_dtype=torch.float32,
                                          fallback="torch")
        torch.cuda.synchronize()
        ref = torch.zeros(G, N, K, dtype=torch.float64, device=dev)
        for g in range(G):
            b, e = offsets[g], offsets[g + 1]
            if e > b:
                ref[g] = dy[:, b:e].double() @ x[:, b:e].double().t()
        expect_close(dw, ref, "dw")
        expect_close(fallback, ref, "fallback dw")
        return f"rows={rows} err={rel_err(dw, ref):.1e}"

    check.run("segment_matmul_k bf16 transposed on the kernel",
              bf16_transposed_kragged_case)


def overhead(check: Checker, report: List[str]) -> None:
    """Host time per call (no synchronisation inside the loop)."""
    import torch
    import ggemm
    from ggemm.cache import kernel_for

    x = torch.randn(64, K, device="cuda").to(torch.bfloat16)
    w = torch.randn(G, N, K, device="cuda").to(torch.bfloat16)
    seg = torch.tensor([0, 10, 20, 30, 40, 50, 64], dtype=torch.int32,
                       device="cuda")
    y = torch.empty(64, N, device="cuda", dtype=torch.bfloat16)
    wt = w[0].t()

    def per_call(fn, calls=2000):
        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        host = (time.perf_counter() - start) / calls * 1e6
        torch.cuda.synchronize()
        return host

    kernel = kernel_for(ggemm.ops.plan_segment_matmul(x, w, seg).problem)
    results = {
        "ggemm.segment_matmul(out=y)":
            per_call(lambda: ggemm.segment_matmul(x, w, seg, out=y)),
        "ggemm.segment_matmul (allocates y)":
            per_call(lambda: ggemm.segment_matmul(x, w, seg)),
        "ggemm.Kernel.__call__ (same kernel)":
            per_call(lambda: kernel(x=x, w=w, y=y, seg_indptr=seg)),
        "torch.mm (64x256 @ 256x384)":
            per_call(lambda: torch.mm(x, wt)),
    }
    report += ["", "Host time per call (us, mean of 2000 calls, no sync in "
               "the loop):", "", "| call | us |", "|---|---|"]
    for name, value in results.items():
        report.append(f"| {name} | {value:.1f} |")
        print(f"overhead {name:40s} {value:6.1f} us", flush=True)
    main = results["ggemm.segment_matmul(out=y)"]

    def bound():
        if not main < 60:
            raise AssertionError(f"{main:.1f} us per call >= 60 us")
        return f"{main:.1f} us/call"

    check.run("host overhead segment_matmul(out=) < 60 us", bound)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-spec", type=Path,
                        help="write the catalog spec these checks need, exit")
    parser.add_argument("--catalog", type=Path)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--report", type=Path)
    parser.add_argument("--commit",
                        default=os.environ.get("GGEMM_COMMIT", "unknown"))
    args = parser.parse_args()
    if args.write_spec:
        args.write_spec.write_text(json.dumps(spec(), indent=1) + "\n")
        return 0
    if args.catalog:
        os.environ["GGEMM_CATALOG"] = str(args.catalog)
    import random

    import torch
    check = Checker(random.Random(args.seed))
    print(f"seed {args.seed}, catalog {os.environ.get('GGEMM_CATALOG')}",
          flush=True)
    report: List[str] = []
    cases(check)
    overhead(check, report)
    summary = f"gpu-check-python: {check.passed} passed, {check.failed} failed"
    if args.report:
        props = torch.cuda.get_device_properties(0)
        lines = [
            "# GPU check of the Python face",
            "",
            f"- device: {props.name} ({props.multi_processor_count} SMs), "
            f"torch {torch.__version__}, CUDA {torch.version.cuda}",
            "- date: " + datetime.datetime.now(
                datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            f"- commit: {args.commit}",
            f"- script: test/gpu/check_python.py --seed {args.seed} (kernels "
            f"from a catalog built on the CPU machine)",
            f"- criterion: relative error vs torch float64 < {TOL}, poisoned "
            f"outputs, rows the op must not write bit-identical",
            "", "```"] + check.lines + ["```"] + report + ["", summary, ""]
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text("\n".join(lines))
    print(summary, flush=True)
    return 0 if check.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
