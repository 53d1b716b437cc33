#!/usr/bin/env python3
"""GPU check and benchmark of GGEMM's K-ragged weight-gradient kernels.

`ggemm.segment_matmul_k`: dw[g] = dy[s_g:s_(g+1)]^T . x[s_g:s_(g+1)], dy [T, N],
x [T, K], seg_indptr [G + 1], dw [G, N, K] (`nk`) or [G, K, N] (`kn`), with
the offsets clamped (begin = clamp(r[g], 0, T), end = clamp(r[g+1], begin, T));
an empty group writes zeros, or leaves dw[g] as it was with `accumulate`.

Loads the bundles compiled here by test/gpu/build_bundles.sh (from
test/gpu/kernels_kragged, into .device/bundles_kragged) and runs:

- DeepGEMM's k-grouped list (G, m = N, n = K, expected rows per group) with
  rows per group drawn in 0.7-1.3x the expected count (arbitrary, not tile
  multiples), plus for each a variant with 25 % of the groups empty and one
  with a single non-empty group holding about all the rows; bf16 -> f32, nk;
- edge cases on every kernel (accumulate, bf16 out, kn f16, i64 offsets,
  grid=tiles): 1-row groups, T not a multiple of 64, N and K not multiples of
  the 128 x 256 tile, T = 0, G = 0, rows in no group (leading, trailing),
  untrusted seg_indptr (decreasing, past T, negative, huge i64), padded row
  strides, many groups, long reductions, random mixes.

Every case draws fresh random inputs, poisons dw (NaN, or random values for
accumulate; padded storage too), and compares with a float64 reference
computed on the GPU per group (dy[b:e]^T @ x[b:e] of the clamped offsets,
plus the old dw with accumulate). Criterion, per non-empty group:
max|out - ref| / max|ref| < 1e-3 for f32 dw (the sum of exact bf16/f16
products kept in f32), < 1e-2 for bf16/f16 dw; no NaN/Inf; an empty group
exactly zero (bit-identical to before with accumulate); padding of the
storage bit-identical. One PASS/FAIL line per case, then
`gpu-check-kragged: N passed, M failed`; exit status 1 on any failure.

With --bench it times, on DeepGEMM's shapes with exactly the expected rows
per group, GGEMM (bf16 -> f32 and bf16 -> bf16) against torch in the same
run: torch._grouped_mm in its 2D x 2D K-ragged form (mat_a = dy.t(), a
[N, T] column-major view; mat_b = x [T, K]; offs = int32 cumulative ends
[G]; out_dtype float32 when this torch takes it, else bf16 out) and a
per-group cuBLAS loop (torch.mm(dy[s:e].t(), x[s:e], out=dw[g]), with
out_dtype=float32 where torch.mm takes it). Each timing is one CUDA-graph
replay (eager where capture fails; the table says so) between two CUDA
events, queued behind a sleep kernel with L2 flushed before it
(check_fp8.median_ms); the median of 30 after 5 warm-ups. GGEMM is timed
before and after the peers and the faster median kept. Every row's ratio is
the best same-dtype peer's time over GGEMM's (> 1: GGEMM faster); GGEMM's
output is checked against the cuBLAS loop's before timing (rel. error
< 1e-2, else the row fails and the exit status is 1). Closes with
`kragged-bench: min ratio vs best peer R over S shapes` (S counts shape x
output-dtype rows that had a peer).

Example (on the GPU machine, after test/gpu/run_on_device.sh built the
runtime):
    python3 test/gpu/check_kragged.py --bundles .device/bundles_kragged \\
        --bench --report /tmp/ggemm-out/kragged.md
"""
import argparse
import datetime
import json
import os
import random
import sys
import time
from pathlib import Path

try:  # the case generation below runs without torch (CPU-side tests)
    import torch
except ImportError:  # pragma: no cover
    torch = None

MAIN = "kragged_nk_bf16_f32_kernel"
ACC = "kragged_nk_bf16_f32_acc_kernel"
BF16_OUT = "kragged_nk_bf16_bf16_kernel"
#: Tile experiments timed next to a bench kernel (same problem, another
#: tile config), not used by the correctness cases.
VARIANTS = {MAIN: ("kragged_nk_bf16_f32_128x128_kernel", "128x128")}
KN_F16 = "kragged_kn_f16_f32_kernel"
I64 = "kragged_nk_bf16_f32_i64_kernel"
TILES = "kragged_nk_bf16_f32_grid_tiles_kernel"

#: DeepGEMM's k-grouped weight-gradient list: (G, m, n, expected rows per
#: group); dw[g] is [m, n], dy [T, m], x [T, n].
DEEPGEMM_K_GROUPED = [(8, 768, 2048, 128), (4, 4096, 7168, 8192),
                      (4, 7168, 2048, 8192), (8, 4096, 7168, 4096),
                      (8, 7168, 2048, 4096), (16, 4096, 7168, 2048),
                      (16, 7168, 2048, 2048)]


# ----------------------------------------------------------------------------
# Cases (pure Python)
# ----------------------------------------------------------------------------

def clamp_offsets(offsets, rows):
    """[(begin, end)] per group: begin = clamp(r[g], 0, T),
    end = clamp(r[g + 1], begin, T)."""
    bounds = []
    for g in range(len(offsets) - 1):
        begin = min(max(offsets[g], 0), rows)
        end = min(max(offsets[g + 1], begin), rows)
        bounds.append((begin, end))
    return bounds


def offsets_of(lengths, lead=0):
    offsets = [lead]
    for length in lengths:
        offsets.append(offsets[-1] + length)
    return offsets


def case(label, kernel, n, k, offsets, rows=None, tail=0, pad=None):
    """A case: dy [T, n], x [T, k], seg_indptr = offsets (taken as given:
    possibly untrusted), T = rows or offsets[-1] + tail. pad = (row offset,
    dy column pad, x column pad, dw column pad) to run on strided views."""
    if rows is None:
        rows = max(offsets[-1], 0) + tail
    return {"label": label, "kernel": kernel, "n": n, "k": k,
            "offsets": list(offsets), "rows": rows, "pad": pad}


def varied(rng, expected, g, empty=0):
    """g lengths in 0.7-1.3 x expected; `empty` of them (chosen at random)
    zero."""
    lengths = [max(1, int(expected * rng.uniform(0.7, 1.3))) for _ in range(g)]
    for gi in rng.sample(range(g), empty):
        lengths[gi] = 0
    return lengths


def deepgemm_cases(rng, quick=False):
    cases = []
    shapes = DEEPGEMM_K_GROUPED[:2] if quick else DEEPGEMM_K_GROUPED
    for si, (g, m, n, expected) in enumerate(shapes):
        shape = f"G={g} m={m} n={n} rows~{expected}"
        cases.append(case(f"deepgemm {shape} +-30%", MAIN, m, n,
                          offsets_of(varied(rng, expected, g))))
        if quick and si > 0:
            continue
        cases.append(case(f"deepgemm {shape} +-30%, 25% empty", MAIN, m, n,
                          offsets_of(varied(rng, expected, g, max(1, g // 4)))))
        lengths = [0] * g
        lengths[rng.randrange(g)] = int(g * expected * rng.uniform(0.7, 1.3))
        cases.append(case(f"deepgemm {shape} one non-empty group", MAIN, m, n,
                          offsets_of(lengths)))
    return cases


def untrusted(rng, g, rows, low, high):
    return [rng.randint(low, high) for _ in range(g + 1)]


def edge_cases(rng):
    cases = []
    # --- the main kernel (bf16 -> f32, nk, i32 offsets, persistent)
    cases += [
        case("1-row groups", MAIN, 256, 256, offsets_of([1] * 8)),
        case("1-row groups mixed", MAIN, 512, 384, offsets_of([1, 130, 1, 0, 1, 64])),
        case("T=340 not a multiple of 64", MAIN, 384, 512, offsets_of([37, 100, 203])),
        case("N=200 K=328 not tile multiples", MAIN, 200, 328,
             offsets_of([150, 77, 300])),
        case("N=K=8", MAIN, 8, 8, offsets_of([5, 0, 70])),
        case("N=136 K=1000", MAIN, 136, 1000, offsets_of([129, 257])),
        case("N=264 K=8", MAIN, 264, 8, offsets_of([65, 3, 191])),
        case("T=0: all groups empty", MAIN, 256, 264, [0] * 6, rows=0),
        case("T=100, all groups empty (rows in no group)", MAIN, 128, 256,
             [0] * 5, rows=100),
        case("G=0: nothing to do", MAIN, 128, 128, [0], rows=10),
        case("trailing rows in no group", MAIN, 384, 640, offsets_of([100, 200]),
             tail=77),
        case("leading rows in no group", MAIN, 256, 384,
             offsets_of([70, 0, 190], lead=50), tail=13),
        case("untrusted: decreasing offsets", MAIN, 256, 512,
             [0, 300, 100, 400, 350, 500, 20], rows=520),
        case("untrusted: offsets past T", MAIN, 384, 256,
             [0, 100, 350, 1000, 5000], rows=300),
        case("untrusted: negative offsets", MAIN, 256, 264,
             [-100, -5, 60, -7, 200, 260], rows=260),
        case("untrusted: random", MAIN, 328, 392,
             untrusted(rng, 9, 700, -200, 900), rows=700),
        case("padded strides, row offset", MAIN, 384, 256,
             offsets_of([99, 0, 300, 5]), pad=(3, 40, 24, 16)),
        case("padded strides, N K not tile multiples", MAIN, 200, 136,
             offsets_of([64, 129, 1]), tail=9, pad=(1, 8, 56, 8)),
        case("G=8 N=1024 K=2048 rows~700", MAIN, 1024, 2048,
             offsets_of(varied(rng, 700, 8, 1))),
        case("one group, 20000 rows", MAIN, 256, 512, offsets_of([20000])),
        case("G=64 small groups", MAIN, 128, 256,
             offsets_of([rng.choice([0, 1, 2, 63, 64, 65, 128, 129, 300])
                         for _ in range(64)])),
    ]
    # --- accumulate (dw += ...; empty groups leave dw[g] unchanged)
    cases += [
        case("accumulate G=4 N=512 K=768", ACC, 512, 768,
             offsets_of(varied(rng, 400, 4))),
        case("accumulate 25% empty", ACC, 1024, 512,
             offsets_of(varied(rng, 300, 8, 2))),
        case("accumulate T=0: dw unchanged", ACC, 256, 256, [0] * 5, rows=0),
        case("accumulate untrusted offsets", ACC, 256, 384,
             [50, 20, 300, -4, 900, 310], rows=400),
        case("accumulate N=200 K=72, 1-row groups", ACC, 200, 72,
             offsets_of([1, 1, 0, 1, 77])),
        case("accumulate trailing rows, padded strides", ACC, 384, 256,
             offsets_of([130, 0, 61]), tail=40, pad=(2, 16, 8, 24)),
        case("accumulate G=8 N=2048 K=1024 rows~500", ACC, 2048, 1024,
             offsets_of(varied(rng, 500, 8))),
    ]
    # --- bf16 out
    cases += [
        case("bf16 out G=8 N=1024 K=1536 25% empty", BF16_OUT, 1024, 1536,
             offsets_of(varied(rng, 600, 8, 2))),
        case("bf16 out N=200 K=72", BF16_OUT, 200, 72, offsets_of([33, 190, 2])),
        case("bf16 out T=0: zeros", BF16_OUT, 256, 128, [0] * 4, rows=0),
        case("bf16 out 1-row groups", BF16_OUT, 384, 256, offsets_of([1] * 5)),
        case("bf16 out untrusted", BF16_OUT, 256, 256,
             untrusted(rng, 6, 500, -100, 650), rows=500),
        case("bf16 out one group, 16384 rows", BF16_OUT, 512, 512,
             offsets_of([16384])),
    ]
    # --- kn, f16 in, f32 out: dw[g] = x[seg]^T dy[seg], [K, N]
    cases += [
        case("kn f16 G=4 N=768 K=1024", KN_F16, 768, 1024,
             offsets_of(varied(rng, 500, 4))),
        case("kn f16 N=136 K=200, T not a multiple of 64", KN_F16, 136, 200,
             offsets_of([70, 1, 150])),
        case("kn f16 empty groups, trailing rows", KN_F16, 256, 512,
             offsets_of([0, 129, 0, 64]), tail=31),
        case("kn f16 untrusted", KN_F16, 384, 256,
             untrusted(rng, 7, 600, -50, 800), rows=600),
        case("kn f16 T=0", KN_F16, 128, 264, [0] * 4, rows=0),
        case("kn f16 padded strides", KN_F16, 264, 128, offsets_of([200, 57]),
             pad=(5, 8, 16, 40)),
    ]
    # --- i64 offsets
    cases += [
        case("i64 G=8 N=512 K=1024", I64, 512, 1024, offsets_of(varied(rng, 300, 8, 1))),
        case("i64 untrusted, huge offsets", I64, 256, 384,
             [-(1 << 40), 10, (1 << 33) + 5, 100, -(1 << 31) - 1, 300, (1 << 62)],
             rows=350),
        case("i64 T=0", I64, 256, 256, [0] * 3, rows=0),
        case("i64 1-row groups", I64, 136, 264, offsets_of([1, 0, 1, 1])),
    ]
    # --- grid=tiles
    cases += [
        case("grid=tiles G=8 N=1024 K=1024", TILES, 1024, 1024,
             offsets_of(varied(rng, 500, 8, 2))),
        case("grid=tiles deepgemm G=4 m=7168 n=2048 rows~8192", TILES, 7168, 2048,
             offsets_of(varied(rng, 8192, 4))),
        case("grid=tiles N=200 K=328", TILES, 200, 328, offsets_of([300, 1, 64])),
        case("grid=tiles T=0", TILES, 256, 256, [0] * 5, rows=0),
        case("grid=tiles untrusted", TILES, 256, 512,
             untrusted(rng, 5, 400, -100, 500), rows=400),
    ]
    return cases


def random_cases(rng, count):
    names = [MAIN, ACC, BF16_OUT, KN_F16, I64, TILES, VARIANTS[MAIN][0]]
    cases = []
    for i in range(count):
        name = names[i % len(names)]
        g = rng.choice([1, 2, 3, 5, 8, 17])
        n = 8 * rng.randint(1, 160)
        k = 8 * rng.randint(1, 160)
        style = rng.choice(["mixed", "tiny", "skewed"])
        if style == "mixed":
            lengths = [rng.choice([0, 1, 2, 63, 64, 65, 127, 128, 129, 200, 300])
                       for _ in range(g)]
        elif style == "tiny":
            lengths = [rng.choice([0, 1, 2, 3, 7, 16]) for _ in range(g)]
        else:
            lengths = [rng.choice([0, 1, 5]) for _ in range(g)]
            lengths[rng.randrange(g)] = rng.randint(500, 3000)
        tail = rng.choice([0, 0, 5])
        cases.append(case(f"random {style} G={g} N={n} K={k}", name, n, k,
                          offsets_of(lengths), tail=tail))
    return cases


def build_cases(rng, quick=False):
    cases = deepgemm_cases(rng, quick) + edge_cases(rng)
    cases += random_cases(rng, 6 if quick else 18)
    return cases


# ----------------------------------------------------------------------------
# Running a case (torch)
# ----------------------------------------------------------------------------

class Failure(Exception):
    pass


def dtypes():
    return {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}


def as_bits(t):
    return t.view(torch.int32 if t.element_size() == 4 else torch.int16)


def strided(rows, cols, dtype, row_offset=0, col_pad=0, device="cuda"):
    """A [rows, cols] view with a row stride of cols + col_pad, starting
    row_offset rows into its storage (stays 16-byte aligned: pads are
    multiples of 8 elements)."""
    storage = torch.randn(rows + row_offset, cols + col_pad, device=device).to(dtype)
    return storage[row_offset:, :cols]


def run_case(kernels, manifests, spec):
    """Returns (max per-group error, note); raises Failure."""
    name = spec["kernel"]
    if name not in kernels:
        raise Failure(f"no bundle {name}")
    p = manifests[name]["problem"]
    dt = dtypes()
    in_dtype, out_dtype = dt[p["a_dtype"]], dt[p["out_dtype"]]
    index_dtype = torch.int64 if p["index_dtype"] == "i64" else torch.int32
    kn = p["weight_layout"] == "kn"
    acc = bool(p["accumulate"])
    n, k, rows, offsets = spec["n"], spec["k"], spec["rows"], spec["offsets"]
    g = len(offsets) - 1
    row_offset, dy_pad, x_pad, dw_pad = spec["pad"] or (0, 0, 0, 0)
    dy = strided(rows, n, in_dtype, row_offset, dy_pad)
    x = strided(rows, k, in_dtype, row_offset, x_pad)
    r, c = (k, n) if kn else (n, k)
    if acc:
        storage = torch.randn(g, r, c + dw_pad, device="cuda").to(out_dtype)
    else:
        storage = torch.full((g, r, c + dw_pad), float("nan"), device="cuda",
                             dtype=out_dtype)
    dw = storage[:, :, :c]
    before = storage.clone() if acc or dw_pad else None
    indptr = torch.tensor(offsets, dtype=index_dtype, device="cuda")
    kernels[name](dy=dy, x=x, seg_indptr=indptr, dw=dw)
    torch.cuda.synchronize()

    problems = []
    if dw_pad and not torch.equal(as_bits(storage[:, :, c:]), as_bits(before[:, :, c:])):
        problems.append("padding of dw's rows written")
    tolerance = 1e-3 if out_dtype == torch.float32 else 1e-2
    worst = 0.0
    empty = 0
    for gi, (b, e) in enumerate(clamp_offsets(offsets, rows)):
        got = dw[gi]
        if e <= b:
            empty += 1
            if acc:
                if not torch.equal(as_bits(got), as_bits(before[gi, :, :c])):
                    problems.append(f"group {gi} (empty) changed with accumulate")
            elif not bool((got == 0).all()):
                problems.append(f"group {gi} (empty) not all zeros "
                                f"({int(torch.isnan(got).sum())} NaN)")
            continue
        a, bmat = dy[b:e].double(), x[b:e].double()
        ref = bmat.t() @ a if kn else a.t() @ bmat
        if acc:
            ref += before[gi, :, :c].double()
        if not bool(torch.isfinite(got).all()):
            problems.append(f"group {gi}: {int(torch.isnan(got).sum())} NaN, "
                            f"{int(torch.isinf(got).sum())} Inf")
            continue
        scale = float(ref.abs().max())
        err = float((got.double() - ref).abs().max()) / max(scale, 1e-30)
        worst = max(worst, err)
        if not err < tolerance:
            problems.append(f"group {gi} rows [{b}, {e}): max err {err:.2e} "
                            f">= {tolerance} of max|ref| {scale:.3g}")
        del a, bmat, ref
    if problems:
        raise Failure("; ".join(problems[:4]) + (" ..." if len(problems) > 4 else ""))
    return worst, f"max err {worst:.1e} (tol {tolerance:g}), {empty}/{g} empty"


# ----------------------------------------------------------------------------
# Benchmark
# ----------------------------------------------------------------------------

def time_ms(fn, repeats=30, warmup=5):
    """(median ms of `repeats` CUDA-event timings, "graph" or "eager")."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    run, mode = fn, "eager"
    try:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            fn()
        torch.cuda.synchronize()
        run, mode = graph.replay, "graph"
    except Exception:  # noqa: BLE001 - e.g. a host sync inside fn
        torch.cuda.synchronize()
    # The CUDA-event median of the FP8 check (needs torch, hence imported
    # here: the case generation above runs without it).
    from check_fp8 import median_ms  # noqa: E402
    return median_ms([run], repeats, warmup)[0], mode


def rel_err(a, b):
    a, b = a.double(), b.double()
    return float((a - b).norm() / b.norm().clamp(min=1e-30))


def make_peers(dy, x, ends, slices, out_dtype):
    """{"grouped" / "loop": (fn, output dtype, error of the preferred form or
    None)}: torch._grouped_mm 2D x 2D and a per-group torch.mm loop, with
    out_dtype (f32) where this torch takes it, else with bf16 output."""
    g, m, n = len(slices), dy.shape[1], x.shape[1]
    dy_t = dy.t()
    forms = {}

    def grouped_fn(dtype):
        if dtype == torch.float32:
            return lambda: torch._grouped_mm(dy_t, x, offs=ends, out_dtype=torch.float32)
        return lambda: torch._grouped_mm(dy_t, x, offs=ends)

    def loop_fn(dtype):
        out = torch.empty(g, m, n, device="cuda", dtype=dtype)
        if dtype == torch.float32:
            def fn():
                for i, (a, b) in enumerate(slices):
                    torch.mm(a, b, out_dtype=torch.float32, out=out[i])
                return out
        else:
            def fn():
                for i, (a, b) in enumerate(slices):
                    torch.mm(a, b, out=out[i])
                return out
        return fn

    for label, make in (("grouped", grouped_fn), ("loop", loop_fn)):
        first_error = None
        for dtype in dict.fromkeys([out_dtype, torch.bfloat16]):
            fn = make(dtype)
            try:
                got = fn()
                torch.cuda.synchronize()
                if got.dtype != dtype:
                    raise TypeError(f"returned {got.dtype}")
                del got
            except Exception as exc:  # noqa: BLE001
                torch.cuda.synchronize()
                first_error = first_error or \
                    f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:120]}"
                continue
            forms[label] = (fn, dtype, first_error)
            break
        else:
            forms[label] = (None, None, first_error)
    return forms


def bench(kernels, lines, quick=False, baseline=None):
    shapes = DEEPGEMM_K_GROUPED[:3] if quick else DEEPGEMM_K_GROUPED
    short = {torch.float32: "f32", torch.bfloat16: "bf16"}
    ratios, errors, failed = [], {}, 0
    lines += ["", "## Speed (same run)", "",
              "DeepGEMM's k-grouped shapes, exactly the expected rows per group, "
              "bf16 dy and x, fresh random inputs per shape. Each time is the "
              "median of 30 CUDA-event timings of one CUDA-graph replay (eager "
              "where marked) after 5 warm-ups, each queued behind a sleep "
              "kernel with L2 flushed before it (check_fp8.median_ms, since "
              "2026-11-26; before, from an idle GPU with warm L2). GGEMM is "
              "timed before and "
              "after the peers; the faster median is kept and the other shown. "
              "A peer cell gives us (TFLOP/s) and the dtype it wrote. Ratio: "
              "the best peer's time / GGEMM's (> 1: GGEMM faster). TFLOP/s = "
              "2 G rows m n / time. check: ||GGEMM - cuBLAS loop|| / "
              "||cuBLAS loop|| before timing.", "",
              "| shape (G, m, n, rows) | GGEMM dw | GGEMM us | GGEMM TFLOP/s "
              "| GGEMM 2nd us | torch._grouped_mm us (TFLOP/s) dw "
              "| cuBLAS loop us (TFLOP/s) dw | ratio vs best peer | check "
              "| GGEMM 128x128 tiles us (TFLOP/s) |"
              + (" baseline us | baseline / GGEMM |" if baseline else ""),
              "|---|---|---|---|---|---|---|---|---|---|"
              + ("---|---|" if baseline else "")]
    for g, m, n, rows in shapes:
        t = g * rows
        dy = torch.randn(t, m, device="cuda").to(torch.bfloat16)
        x = torch.randn(t, n, device="cuda").to(torch.bfloat16)
        indptr = torch.arange(0, t + 1, rows, dtype=torch.int32, device="cuda")
        ends = indptr[1:].contiguous()
        flops = 2.0 * t * m * n
        tf = lambda ms: flops / ms / 1e9  # noqa: E731
        slices = [(dy[i * rows:(i + 1) * rows].t(), x[i * rows:(i + 1) * rows])
                  for i in range(g)]
        shape = f"({g}, {m}, {n}, {rows})"
        for out_dtype, kname in ((torch.float32, MAIN), (torch.bfloat16, BF16_OUT)):
            out_name = short[out_dtype]
            if kname not in kernels:
                failed += 1
                lines.append(f"| {shape} | {out_name} | FAIL: no bundle {kname} "
                             "| | | | | | |")
                continue
            kern = kernels[kname]
            dw = torch.empty(g, m, n, device="cuda", dtype=out_dtype)
            ours = lambda: kern(dy=dy, x=x, seg_indptr=indptr, dw=dw)  # noqa: E731
            peers = make_peers(dy, x, ends, slices, out_dtype)
            for label, (_, dtype, err) in peers.items():
                if err:
                    errors[(label, out_name)] = err
            check = "no peer"
            try:
                dw.fill_(float("nan"))
                ours()
                torch.cuda.synchronize()
                ref_fn = peers["loop"][0] or peers["grouped"][0]
                if ref_fn is not None:
                    e = rel_err(dw, ref_fn())
                    check = f"{e:.1e}"
                    if not e < 1e-2 or bool(torch.isnan(dw).any()):
                        check = f"FAIL {e:.1e}"
            except Exception as exc:  # noqa: BLE001
                check = f"FAIL {type(exc).__name__}: {str(exc)[:80]}"
            if check.startswith("FAIL"):
                failed += 1
                lines.append(f"| {shape} | {out_name} | | | | | | | {check} |")
                print(lines[-1], flush=True)
                continue
            t1, mode1 = time_ms(ours)
            timed = {label: (time_ms(fn), dtype)
                     for label, (fn, dtype, _) in peers.items() if fn is not None}
            t2, mode2 = time_ms(ours)
            t_ours, t_other = min(t1, t2), max(t1, t2)
            variant = VARIANTS.get(kname)
            variant_cell = ""
            if variant and variant[0] in kernels:
                vkern = kernels[variant[0]]
                vms, _ = time_ms(lambda: vkern(dy=dy, x=x, seg_indptr=indptr, dw=dw))
                variant_cell = f"{vms * 1e3:.0f} ({tf(vms):.0f})"
            cells = []
            for label in ("grouped", "loop"):
                if label in timed:
                    (ms, mode), dtype = timed[label]
                    mark = "" if mode == "graph" else ", eager"
                    cells.append(f"{ms * 1e3:.0f} ({tf(ms):.0f}) {short[dtype]}{mark}")
                else:
                    cells.append("did not run")
            ours_mark = "" if mode1 == mode2 == "graph" else " eager"
            if timed:
                ratio = min(ms for (ms, _), _ in timed.values()) / t_ours
                ratios.append(ratio)
                ratio_cell = f"{ratio:.2f}"
            else:
                ratio_cell = "no peer"
            base_cells = ""
            if baseline and kname in baseline:
                base = baseline[kname]
                tb, _ = time_ms(lambda: base(dy=dy, x=x, seg_indptr=indptr, dw=dw))
                # Once more each, alternating, so that drift hits both.
                t_ours = min(t_ours, time_ms(ours)[0])
                tb = min(tb, time_ms(
                    lambda: base(dy=dy, x=x, seg_indptr=indptr, dw=dw))[0])
                base_cells = f" {tb * 1e3:.0f} | {tb / t_ours:.2f} |"
            lines.append(f"| {shape} | {out_name} | {t_ours * 1e3:.0f}{ours_mark} | "
                         f"{tf(t_ours):.0f} | {t_other * 1e3:.0f} | {cells[0]} | "
                         f"{cells[1]} | {ratio_cell} | {check} | {variant_cell} |"
                         + base_cells)
            print(lines[-1], flush=True)
            del dw, peers, ours
            torch.cuda.empty_cache()
        del dy, x, slices
        torch.cuda.empty_cache()
    lines += ["", "Peers: torch._grouped_mm(dy.t(), x, offs=int32 cumulative ends "
              "[G]) in its 2D x 2D K-ragged form, dy.t() being a [m, T] "
              "column-major view of dy (the layout torch's CUTLASS path takes "
              "with any group size >= 0; its fast path needs bf16 output), "
              "out_dtype=torch.float32 for the f32 rows where this torch takes "
              "it; cuBLAS loop: torch.mm(dy[s:e].t(), x[s:e], out=dw[g]) per "
              "group (G launches, captured in one graph), out_dtype=torch.float32 "
              "for the f32 rows where torch.mm takes it. A peer that could not "
              "write f32 ran with bf16 output instead (its cell says bf16): it "
              "then writes half the bytes GGEMM's f32 row writes."]
    if errors:
        lines += ["", "Preferred peer forms that did not run (this torch):", ""]
        lines += [f"- {label}, {dtype} rows: {err}" for (label, dtype), err
                  in sorted(errors.items())]
    if failed:
        lines += ["", f"{failed} bench rows FAILED their check (exit status 1)."]
    summary = (f"kragged-bench: min ratio vs best peer {min(ratios):.2f} over "
               f"{len(ratios)} shapes" if ratios else "kragged-bench: no peer ran")
    lines += ["", summary]
    print(summary, flush=True)
    return failed


def ablation(bundles, cases, manifests, lines):
    """Reruns the main kernel's cases with a build whose consumers do not
    zero the rows past a segment's end. Returns 1 when none fails (the
    check would not see a missing mask), else 0."""
    from ggemm.runtime import Kernel  # noqa: E402
    path = bundles / f"{MAIN}.json"
    if not path.exists():
        lines += ["", f"mask ablation: FAIL, no bundle {path}"]
        return 1
    kernels = {MAIN: Kernel(path)}
    mine = [spec for spec in cases if spec["kernel"] == MAIN]
    broken = []
    for spec in mine:
        try:
            run_case(kernels, manifests, spec)
        except Exception as exc:  # noqa: BLE001
            broken.append((spec["label"], f"{type(exc).__name__}: {str(exc)[:100]}"))
    line = (f"mask ablation: {len(broken)} of {len(mine)} cases of {MAIN} fail "
            f"with the consumers' ggemm.zero_k_tail removed")
    print(line, flush=True)
    lines += ["", "## Mask ablation", "",
              "The same cases of the main kernel, run with bundles compiled with "
              "the consumers' K-ragged mask removed (the ggemm.zero_k_tail that "
              "ggemm-warp-specialize writes; test/gpu/build_kragged_ablation.sh). "
              "Cases whose segments all end on a 64-row boundary, or that have "
              "no rows after a segment, cannot notice.", ""]
    lines += [f"- {label}: {why}" for label, why in broken[:40]]
    lines += ["", line]
    return 0 if broken else 1


# ----------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--report", type=Path)
    parser.add_argument("--bench", action="store_true")
    parser.add_argument("--quick", action="store_true",
                        help="fewer DeepGEMM shapes and random cases; 3 bench shapes")
    parser.add_argument("--commit", default=os.environ.get("GGEMM_COMMIT", "unknown"))
    parser.add_argument("--baseline", type=Path,
                        help="bundles of an earlier commit: with --bench, "
                             "their kernels are timed in the same run")
    parser.add_argument("--ablation-bundles", type=Path,
                        help="bundles compiled with the consumers' K-ragged "
                             "mask (ggemm.zero_k_tail) removed: the cases of "
                             "the main kernel are run again with them and "
                             "must fail (the check proves it sees the mask)")
    args = parser.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
    from ggemm.runtime import Kernel  # noqa: E402

    torch.cuda.init()
    manifests = {path.stem: json.loads(path.read_text())
                 for path in sorted(args.bundles.glob("*.json"))}
    kernels = {name: Kernel(args.bundles / f"{name}.json") for name in manifests}
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    cases = build_cases(rng, args.quick)
    print(f"seed {args.seed}; {len(kernels)} kernels, {len(cases)} cases", flush=True)
    passed = failed = 0
    rows, failures = [], []
    started = time.time()
    for index, spec in enumerate(cases):
        try:
            _, note = run_case(kernels, manifests, spec)
            ok = True
        except Exception as exc:  # noqa: BLE001 - report every failure
            ok, note = False, f"{type(exc).__name__}: {exc}"
        passed += ok
        failed += not ok
        t = spec["rows"]
        line = (f"case {index:3d} {spec['label']:55s} {spec['kernel']:38s} "
                f"T={t} N={spec['n']} K={spec['k']} G={len(spec['offsets']) - 1} "
                f"{note} {'PASS' if ok else 'FAIL'}")
        print(line, flush=True)
        rows.append(f"| {index} | {spec['label']} | {spec['kernel']} | {t} | "
                    f"{spec['n']} | {spec['k']} | {len(spec['offsets']) - 1} | "
                    f"{note} | {'PASS' if ok else 'FAIL'} |")
        if not ok:
            failures.append(line)
        torch.cuda.empty_cache()
    summary = f"gpu-check-kragged: {passed} passed, {failed} failed"
    print(summary, flush=True)
    props = torch.cuda.get_device_properties(0)
    lines = [
        "# K-ragged weight-gradient (segment_matmul_k) GPU check",
        "",
        f"- device: {torch.cuda.get_device_name(0)} ({props.multi_processor_count} "
        f"SMs), torch {torch.__version__}, CUDA {torch.version.cuda}",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- commit: {args.commit}",
        f"- script: test/gpu/check_kragged.py --seed {args.seed}"
        + (" --bench" if args.bench else "") + (" --quick" if args.quick else ""),
        f"- kernels: {', '.join(sorted(kernels))}",
        f"- cases: {len(cases)}",
        "- criterion: per non-empty group max|out - ref| / max|ref| < 1e-3 (f32 "
        "dw) or 1e-2 (bf16/f16 dw) against float64 dy[b:e]^T x[b:e] (x^T dy for "
        "kn; + the old dw with accumulate) over the clamped offsets (begin = "
        "clamp(r[g], 0, T), end = clamp(r[g+1], begin, T)); no NaN/Inf; empty "
        "groups exactly zero, or bit-identical with accumulate; padding of dw's "
        "storage bit-identical; fresh random inputs per case, dw poisoned (NaN, "
        "random values with accumulate)",
        f"- correctness run: {time.time() - started:.0f} s",
        "",
        "| # | case | kernel | T | N | K | G | result | |",
        "|---|---|---|---|---|---|---|---|---|",
    ] + rows
    if failures:
        lines += ["", "Failures:", ""] + [f"- `{f}`" for f in failures[:50]]
    lines += ["", summary]
    if args.ablation_bundles:
        failed += ablation(args.ablation_bundles, cases, manifests, lines)
    bench_failed = 0
    if args.bench:
        baseline = None
        if args.baseline:
            baseline = {path.stem: Kernel(path)
                        for path in sorted(args.baseline.glob("*.json"))}
            base_commit = args.baseline / "COMMIT"
            lines += ["", f"Baseline kernels: {args.baseline.name} (commit "
                      f"{base_commit.read_text().strip() if base_commit.exists() else 'unknown'}"
                      "), timed in the same run after GGEMM's, then both once "
                      "more; each keeps its faster median."]
        bench_failed = bench(kernels, lines, args.quick, baseline)
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text("\n".join(lines) + "\n")
    return 0 if failed == 0 and bench_failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
