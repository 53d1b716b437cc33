#!/usr/bin/env python3
"""GPU check and benchmark of GGEMM's FP8 K-ragged weight-gradient kernels.

`ggemm.segment_matmul_k ... {transposed}` with e4m3 operands (DeepGEMM's
`k_grouped_fp8_gemm_nt_contiguous` layout): dy [N, T] and x [K, T] with the
tokens innermost, dy_scale [N, ceil(T/128)] and x_scale [K, ceil(T/128)] f32
(1x128 blocks along the tokens, counted from token 0; MN-major storage),
seg_indptr [G + 1] clamped like segment_matmul's, and per group g

    dw[g] = sum over t in [s_g, s_(g+1)) of dy_scale[:, t/128] dy[:, t]
            (x_scale[:, t/128] x[:, t])^T     (nk: [N, K]; kn: [K, N]).

Segments may start and end anywhere: the kernel masks the rows of another
group inside a 128-token block on both sides. Empty groups write zeros (or
leave dw[g] unchanged with accumulate).

Loads the bundles compiled here by test/gpu/build_bundles.sh (from
test/gpu/kernels_kragged_fp8 into .device/bundles_kragged_fp8) and runs:

- DeepGEMM's k-grouped list (G, m = N, n = K, expected rows per group) with
  rows per group in 0.7-1.3x the expected count, once aligned to 128 (what
  DeepGEMM requires) and once not, plus variants with 25 % empty groups and
  with a single non-empty group (nk, f32 dw);
- edge cases on every kernel (bf16 dw, accumulate with i64 offsets, kn,
  and the transposed form in bf16 without scales): 1-row groups, segments
  inside one 128-token block, T not a multiple of 16 (a padded row
  stride), rows in no group, untrusted offsets (decreasing, past T,
  negative).

Inputs: fresh bf16-range values whose magnitude changes by up to 2^3 from one
(row, 128-token block) to the next, quantised per (row, block) as DeepGEMM
does (scale = amax / 448); dw poisoned (NaN, or random with accumulate).
Criterion per non-empty group: DeepGEMM's calc_diff(out, ref) = 1 - 2 sum(out
ref) / sum(out^2 + ref^2) < 1e-3 against the float64 product of the
dequantised operands; no NaN/Inf; empty groups exactly zero (bit-identical
with accumulate). Prints `gpu-check-kragged-fp8: N passed, M failed`.

With --ablation-bundles (test/gpu/build_kragged_ablation.sh: the main kernel
built without the mask at a segment's start) the main kernel's cases run
again with it and some must fail, which shows the check sees that mask.

With --bench (needs --bf16-bundles, the bf16 K-ragged bundles): on
DeepGEMM's shapes with exactly the expected rows per group, in interleaved
rounds of CUDA-graph replays (median of 30; check_fp8.median_ms: queued
behind a sleep kernel, L2 flushed before each): GGEMM FP8 (f32
dw), GGEMM bf16 (f32 dw, the same problem in bf16), torch._grouped_mm 2D x 2D
in bf16 (bf16 out), and a per-group loop of cuBLAS FP8 with 1x128 x 1x128
scales through torch's scaled_mm where this torch takes that recipe (checked
against the reference before it is timed). Closes with
`kragged-fp8-bench: min ratio vs best peer R over S shapes`, the peers being
the bf16 grouped_mm and the FP8 cuBLAS loop.
"""
import argparse
import datetime
import json
import os
import random
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The bf16 K-ragged check's case helpers and DeepGEMM's list; the FP8
# check's timing and calc_diff.
from check_fp8 import calc_diff, median_ms  # noqa: E402
from check_kragged import (DEEPGEMM_K_GROUPED, Failure, as_bits,  # noqa: E402
                           case, clamp_offsets, offsets_of)

MAIN = "kragged_fp8_nk_f32_kernel"
#: bf16 dy and x given transposed (no scales): its K blocks are aligned to
#: 64 tokens and masked at both ends, like the FP8 ones.
BF16_T = "kragged_t_nk_bf16_f32_kernel"
BF16_OUT = "kragged_fp8_nk_bf16_kernel"
ACC = "kragged_fp8_nk_f32_acc_kernel"
KN = "kragged_fp8_kn_f32_kernel"
BF16_MAIN = "kragged_nk_bf16_f32_kernel"

FP8_MAX = 448.0


def build_cases(rng, quick=False):
    cases = []
    shapes = DEEPGEMM_K_GROUPED[:3] if quick else DEEPGEMM_K_GROUPED
    for g, m, n, expected in shapes:
        for aligned in (True, False):
            lengths = [int(expected * rng.uniform(0.7, 1.3)) for _ in range(g)]
            if aligned:
                lengths = [max(128, (x + 64) // 128 * 128) for x in lengths]
            tag = "aligned" if aligned else "varied"
            cases.append(case(f"deepgemm G={g} {tag}", MAIN, m, n,
                              offsets_of(lengths)))
        lengths = [int(expected * rng.uniform(0.7, 1.3)) for _ in range(g)]
        for i in rng.sample(range(g), max(1, g // 4)):
            lengths[i] = 0
        cases.append(case(f"deepgemm G={g} 25% empty", MAIN, m, n,
                          offsets_of(lengths), tail=rng.randrange(0, 200)))
        single = [0] * g
        single[rng.randrange(g)] = expected * g // 2 + 37
        cases.append(case(f"deepgemm G={g} one group", MAIN, m, n,
                          offsets_of(single)))
    for kernel in (MAIN, BF16_OUT, ACC, KN, BF16_T):
        cases += [
            case("1-row groups, a segment inside one block", kernel, 72, 136,
                 [0, 1, 2, 50, 51, 300], tail=13),
            case("segments starting mid-block, empty first/last", kernel, 128,
                 256, [0, 0, 70, 200, 390, 390], tail=9),
            case("leading rows in no group, T % 16 != 0", kernel, 256, 192,
                 offsets_of([150, 3, 260], lead=41), tail=7),
            case("untrusted offsets (decreasing, past T, negative)", kernel,
                 96, 136, [-5, 100, 90, 333, 10_000], rows=333),
            case("many small groups", kernel, 192, 256,
                 offsets_of([rng.randrange(0, 90) for _ in range(33)])),
            case("one long group", kernel, 200, 72, [0, 3000], tail=5),
        ]
    return cases


def quantize_transposed(features, tokens, rng_seed):
    """(q [F, T] e4m3 view of a 16-byte-aligned row stride, scale [F, TB]
    MN-major, dequantised float64 [F, T]): values whose magnitude moves by
    up to 2^3 between (row, 128-token block)s, quantised per block."""
    g = torch.Generator(device="cuda").manual_seed(rng_seed)
    tb = -(-tokens // 128)
    pad_t = tb * 128
    src = torch.randn(features, pad_t, device="cuda", generator=g)
    mag = torch.exp2(torch.randint(-3, 4, (features, tb), device="cuda",
                                   generator=g).float())
    src = (src.view(features, tb, 128) * mag[:, :, None])
    src[:, :, :][..., :] = src  # noqa: keep the view's shape
    flat = src.reshape(features, pad_t)
    flat[:, tokens:] = 0  # tokens past T do not count in a block's amax
    amax = flat.view(features, tb, 128).abs().amax(dim=2).clamp(min=1e-4)
    scale = amax / FP8_MAX
    q = (flat.view(features, tb, 128) / scale[:, :, None]).clamp(
        -FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn).view(features, pad_t)
    stride = -(-tokens // 16) * 16
    storage = torch.zeros(features, max(stride, 16), device="cuda",
                          dtype=torch.float8_e4m3fn)
    storage[:, :tokens] = q[:, :tokens]
    scale_storage = torch.empty(tb, features, device="cuda")
    scale_storage.copy_(scale.t())
    deq = (q.view(features, tb, 128).double() * scale[:, :, None].double()
           ).view(features, pad_t)[:, :tokens]
    return storage[:, :tokens], scale_storage.t(), deq


def bf16_transposed(features, tokens, rng_seed):
    """(bf16 [F, T] view of a 16-byte-aligned row stride, None, float64 of
    it): plain bf16 operands of the transposed form."""
    g = torch.Generator(device="cuda").manual_seed(rng_seed)
    stride = max(-(-tokens // 8) * 8, 8)
    storage = torch.randn(features, stride, device="cuda", generator=g).to(
        torch.bfloat16)
    view = storage[:, :tokens]
    return view, None, view.double()


def run_case(kernels, manifests, spec, seed):
    name = spec["kernel"]
    if name not in kernels:
        raise Failure(f"no bundle {name}")
    p = manifests[name]["problem"]
    out_dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[p["out_dtype"]]
    index_dtype = torch.int64 if p["index_dtype"] == "i64" else torch.int32
    kn = p["weight_layout"] == "kn"
    acc = bool(p["accumulate"])
    n, k, rows, offsets = spec["n"], spec["k"], spec["rows"], spec["offsets"]
    g = len(offsets) - 1
    fp8 = p["a_dtype"] == "f8e4m3"
    operands = quantize_transposed if fp8 else bf16_transposed
    dy, dys, dy_deq = operands(n, rows, seed)
    x, xs, x_deq = operands(k, rows, seed + 1)
    r, c = (k, n) if kn else (n, k)
    if acc:
        dw = torch.randn(g, r, c, device="cuda").to(out_dtype)
    else:
        dw = torch.full((g, r, c), float("nan"), device="cuda", dtype=out_dtype)
    before = dw.clone()
    indptr = torch.tensor(offsets, dtype=index_dtype, device="cuda")
    scales = {"dy_scale": dys, "x_scale": xs} if fp8 else {}
    kernels[name](dy=dy, x=x, seg_indptr=indptr, dw=dw, **scales)
    torch.cuda.synchronize()
    problems, worst, worst_err, empty = [], 0.0, 0.0, 0
    for gi, (b, e) in enumerate(clamp_offsets(offsets, rows)):
        got = dw[gi]
        if e <= b:
            empty += 1
            if acc:
                if not torch.equal(as_bits(got), as_bits(before[gi])):
                    problems.append(f"group {gi} (empty) changed with accumulate")
            elif not bool((got == 0).all()):
                problems.append(f"group {gi} (empty) not all zeros")
            continue
        ref = dy_deq[:, b:e] @ x_deq[:, b:e].t()
        if kn:
            ref = ref.t()
        if not bool(torch.isfinite(got).all()):
            problems.append(f"group {gi}: {int(torch.isnan(got).sum())} NaN")
            continue
        got_sum = got.double() - (before[gi].double() if acc else 0)
        diff = calc_diff(got_sum, ref)
        # And element-wise: the products are exact, the sums kept in f32
        # (bf16 dw rounds each element once).
        tolerance = 1e-3 if out_dtype == torch.float32 else 1e-2
        err = float((got_sum - ref).abs().max()) / max(float(ref.abs().max()),
                                                       1e-30)
        worst = max(worst, diff)
        worst_err = max(worst_err, err)
        if not (diff < 1e-3 and err < tolerance):
            problems.append(f"group {gi} rows [{b}, {e}): calc_diff {diff:.2e}, "
                            f"max err {err:.2e}")
        del ref
    if problems:
        raise Failure("; ".join(problems[:4]) + (" ..." if len(problems) > 4 else ""))
    return (f"max calc_diff {worst:.1e} (< 1e-3), max err {worst_err:.1e}, "
            f"{empty}/{g} empty")


# ----------------------------------------------------------------------------
# Benchmark
# ----------------------------------------------------------------------------

def graphed(fn):
    """fn captured in a CUDA graph (its replay), or fn itself if capture
    fails; and which."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    try:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            fn()
        torch.cuda.synchronize()
        return graph.replay, "graph"
    except Exception:  # noqa: BLE001 - e.g. a host sync inside fn
        torch.cuda.synchronize()
        return fn, "eager"


def fp8_loop_peer(dy, dys, x, xs, bounds, dw_ref):
    """A per-group loop of cuBLAS FP8 with 1x128 scales on both operands
    (dw[g] = dy[:, b:e] x[:, b:e]^T, K = the group's tokens), through the
    first torch entry point that takes the recipe and gives the reference's
    result; (fn, label) or (None, reasons)."""
    F = torch.nn.functional
    outs = [torch.empty(dy.shape[0], x.shape[0], device="cuda",
                        dtype=torch.bfloat16) for _ in bounds]
    reasons = []
    variants = []
    if hasattr(F, "scaled_mm") and hasattr(F, "ScalingType"):
        def call_f(a, sa, b, sb, out):
            out.copy_(F.scaled_mm(a, b.t(), sa, F.ScalingType.BlockWise1x128,
                                  sb.t(), F.ScalingType.BlockWise1x128,
                                  output_dtype=torch.bfloat16))
        variants.append(("F.scaled_mm 1x128 x 1x128", call_f))

    def call_t(a, sa, b, sb, out):
        out.copy_(torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb.t(),
                                   out_dtype=torch.bfloat16))
    variants.append(("torch._scaled_mm 1x128 x 1x128", call_t))
    for label, call in variants:
        def fn(call=call):
            for (b, e), out in zip(bounds, outs):
                call(dy[:, b:e], dys[:, b // 128:e // 128], x[:, b:e],
                     xs[:, b // 128:e // 128], out)
        try:
            fn()
            torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001
            reasons.append(f"{label}: {type(exc).__name__}: {str(exc)[:90]}")
            continue
        err = max(calc_diff(o, r) for o, r in zip(outs, dw_ref))
        if not err < 1e-3:
            reasons.append(f"{label}: wrong result (calc_diff {err:.1e})")
            continue
        return fn, label
    return None, "; ".join(reasons)


def bench(kernels, bf16_kernels, lines, quick=False, variants=None):
    lines += ["", "## Speed", "",
              "Interleaved rounds of CUDA-graph replays, median of 30 after 3 "
              "warm-ups, queued behind a sleep kernel with L2 flushed before "
              "each (check_fp8.median_ms). TFLOP/s = 2 N K T / time. Ratio = "
              "the best peer's time / GGEMM FP8's (peers: torch._grouped_mm "
              "bf16 and the cuBLAS FP8 loop).", "",
              "| G, N, K, rows/group | GGEMM FP8 us (TFLOP/s) | GGEMM bf16 us "
              "(TFLOP/s) | torch._grouped_mm bf16 us | cuBLAS FP8 loop us | "
              "ratio vs best peer | FP8 / GGEMM bf16 |",
              "|---|---|---|---|---|---|---|"]
    ratios, failed = [], 0
    fp8_note = None
    variants = variants or {}
    variant_rows = []
    for g, n, k, expected in (DEEPGEMM_K_GROUPED[:3] if quick
                              else DEEPGEMM_K_GROUPED):
        rows = g * expected
        offsets = offsets_of([expected] * g)
        bounds = clamp_offsets(offsets, rows)
        dy, dys, dy_deq = quantize_transposed(n, rows, 7)
        x, xs, x_deq = quantize_transposed(k, rows, 8)
        indptr = torch.tensor(offsets, dtype=torch.int32, device="cuda")
        dw = torch.empty(g, n, k, device="cuda")
        fp8 = lambda: kernels[MAIN](dy=dy, x=x, seg_indptr=indptr,  # noqa: E731
                                    dy_scale=dys, x_scale=xs, dw=dw)
        fp8()
        torch.cuda.synchronize()
        refs = [dy_deq[:, b:e] @ x_deq[:, b:e].t() for b, e in bounds]
        err = max(calc_diff(dw[i], refs[i]) for i in range(g))
        if not err < 1e-3:
            lines.append(f"| {g}, {n}, {k}, {expected} | wrong result "
                         f"(calc_diff {err:.1e}) | | | | | |")
            failed += 1
            continue
        # The same problem in bf16: dy [T, N], x [T, K] row-major.
        dy16 = dy_deq.t().contiguous().to(torch.bfloat16)
        x16 = x_deq.t().contiguous().to(torch.bfloat16)
        dy_deq = x_deq = None
        dw16 = torch.empty(g, n, k, device="cuda")
        cols = [("GGEMM FP8", fp8)]
        variant_out = torch.empty_like(dw)
        for vname, vkernel in sorted(variants.items()):
            vkernel(dy=dy, x=x, seg_indptr=indptr, dy_scale=dys, x_scale=xs,
                    dw=variant_out)
            torch.cuda.synchronize()
            verr = max(calc_diff(variant_out[i], refs[i]) for i in range(g))
            if not verr < 1e-3:
                variant_rows.append(f"| {g}, {n}, {k}, {expected} | {vname} "
                                    f"wrong (calc_diff {verr:.1e}) | |")
                failed += 1
                continue
            cols.append((vname, lambda vk=vkernel: vk(
                dy=dy, x=x, seg_indptr=indptr, dy_scale=dys, x_scale=xs,
                dw=variant_out)))
        if BF16_MAIN in bf16_kernels:
            cols.append(("GGEMM bf16", lambda: bf16_kernels[BF16_MAIN](
                dy=dy16, x=x16, seg_indptr=indptr, dw=dw16)))
        ends = torch.tensor(offsets[1:], dtype=torch.int32, device="cuda")
        cols.append(("grouped_mm", lambda: torch._grouped_mm(
            dy16.t(), x16, offs=ends)))
        loop, label = fp8_loop_peer(dy, dys, x, xs, bounds, refs)
        del refs
        if loop is not None:
            cols.append(("cuBLAS FP8 loop", loop))
            fp8_note = label
        elif fp8_note is None:
            fp8_note = f"no FP8 peer: {label}"
        runs = [graphed(fn)[0] for _, fn in cols]
        times = dict(zip([c[0] for c in cols], median_ms(runs, repeats=30)))
        flops = 2.0 * n * k * rows
        tf = lambda ms: flops / (ms * 1e-3) / 1e12  # noqa: E731
        peers = [times[c] for c in ("grouped_mm", "cuBLAS FP8 loop")
                 if c in times]
        ratio = min(peers) / times["GGEMM FP8"]
        ratios.append(ratio)
        us = lambda c: (f"{times[c] * 1e3:.0f}" if c in times else "-")  # noqa: E731
        bf16_col = (f"{us('GGEMM bf16')} ({tf(times['GGEMM bf16']):.0f})"
                    if "GGEMM bf16" in times else "-")
        own = (f"{times['GGEMM bf16'] / times['GGEMM FP8']:.2f}x"
               if "GGEMM bf16" in times else "-")
        lines.append(f"| {g}, {n}, {k}, {expected} | {us('GGEMM FP8')} "
                     f"({tf(times['GGEMM FP8']):.0f}) | {bf16_col} | "
                     f"{us('grouped_mm')} | {us('cuBLAS FP8 loop')} | "
                     f"{ratio:.2f} | {own} |")
        print(lines[-1], flush=True)
        for vname in sorted(variants):
            if vname in times:
                variant_rows.append(
                    f"| {g}, {n}, {k}, {expected} | {vname} | "
                    f"{times[vname] * 1e3:.0f} ({tf(times[vname]):.0f}) | "
                    f"{times['GGEMM FP8'] / times[vname]:.3f} |")
                print(variant_rows[-1], flush=True)
        runs = cols = None  # the graphs hold their inputs
        torch.cuda.empty_cache()
    lines += ["", f"FP8 peer: {fp8_note}", ""]
    if variant_rows:
        lines += ["Tile experiments, timed in the same rounds as GGEMM FP8 "
                  "(its time over theirs: > 1, the variant is faster):", "",
                  "| shape | variant | us (TFLOP/s) | GGEMM FP8 / variant |",
                  "|---|---|---|---|"] + variant_rows + [""]
    summary = (f"kragged-fp8-bench: min ratio vs best peer "
               f"{min(ratios) if ratios else float('nan'):.2f} over "
               f"{len(ratios)} shapes")
    lines.append(summary)
    print(summary, flush=True)
    return failed


def ablation(directory, cases, manifests, lines, seed):
    """The main kernel's cases with the start-of-segment mask removed;
    returns 1 when none fails (the check would not see it), else 0."""
    from ggemm.runtime import Kernel  # noqa: E402
    path = directory / f"{MAIN}.json"
    if not path.exists():
        lines += ["", f"mask ablation: FAIL, no bundle {path}"]
        return 1
    kernels = {MAIN: Kernel(path)}
    mine = [(i, spec) for i, spec in enumerate(cases) if spec["kernel"] == MAIN]
    broken = []
    for index, spec in mine:
        try:
            run_case(kernels, manifests, spec, seed * 1000 + 2 * index)
        except Exception as exc:  # noqa: BLE001
            broken.append((spec["label"], f"{type(exc).__name__}: {str(exc)[:100]}"))
    line = (f"mask ablation: {len(broken)} of {len(mine)} cases of {MAIN} fail "
            "with the mask at a segment's start removed")
    print(line, flush=True)
    lines += ["", "## Mask ablation", "",
              "The main kernel's cases again, compiled without the `from` of "
              "its ggemm.zero_k_tail (test/gpu/build_kragged_ablation.sh). "
              "Cases whose segments all start on a 128-token boundary cannot "
              "notice.", ""]
    lines += [f"- {label}: {why}" for label, why in broken[:40]]
    lines += ["", line]
    return 0 if broken else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, required=True)
    parser.add_argument("--bf16-bundles", type=Path,
                        help="the bf16 K-ragged bundles (timed with --bench)")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--report", type=Path)
    parser.add_argument("--bench", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--commit", default=os.environ.get("GGEMM_COMMIT", "unknown"))
    parser.add_argument("--variant-bundles", type=Path,
                        help="more kernels of the main kernel's signature "
                             "(tile experiments), timed with --bench")
    parser.add_argument("--ablation-bundles", type=Path,
                        help="the main kernel without the mask at a segment's "
                             "start: its cases must fail")
    args = parser.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
    from ggemm.runtime import Kernel  # noqa: E402

    torch.cuda.init()

    def load(directory):
        manifests = {path.stem: json.loads(path.read_text())
                     for path in sorted(directory.glob("*.json"))}
        return manifests, {name: Kernel(directory / f"{name}.json")
                           for name in manifests}

    manifests, kernels = load(args.bundles)
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    cases = build_cases(rng, args.quick)
    print(f"seed {args.seed}; {len(kernels)} kernels, {len(cases)} cases",
          flush=True)
    passed = failed = 0
    rows, failures = [], []
    started = time.time()
    for index, spec in enumerate(cases):
        try:
            note = run_case(kernels, manifests, spec, args.seed * 1000 + 2 * index)
            ok = True
        except Exception as exc:  # noqa: BLE001 - report every failure
            ok, note = False, f"{type(exc).__name__}: {exc}"
        passed += ok
        failed += not ok
        g = len(spec["offsets"]) - 1
        line = (f"case {index:3d} {spec['label']:50s} {spec['kernel']:30s} "
                f"T={spec['rows']} N={spec['n']} K={spec['k']} G={g} {note} "
                f"{'PASS' if ok else 'FAIL'}")
        print(line, flush=True)
        rows.append(f"| {index} | {spec['label']} | {spec['kernel']} | "
                    f"{spec['rows']} | {spec['n']} | {spec['k']} | {g} | {note} "
                    f"| {'PASS' if ok else 'FAIL'} |")
        if not ok:
            failures.append(line)
        torch.cuda.empty_cache()
    summary = f"gpu-check-kragged-fp8: {passed} passed, {failed} failed"
    print(summary, flush=True)
    props = torch.cuda.get_device_properties(0)
    lines = [
        "# FP8 K-ragged weight gradients (segment_matmul_k, transposed e4m3) on the GPU",
        "",
        f"- device: {torch.cuda.get_device_name(0)} ({props.multi_processor_count} "
        f"SMs), torch {torch.__version__}, CUDA {torch.version.cuda}",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- commit: {args.commit}",
        f"- script: test/gpu/check_kragged_fp8.py --seed {args.seed}"
        + (" --bench" if args.bench else "") + (" --quick" if args.quick else ""),
        f"- kernels: {', '.join(sorted(kernels))}",
        "- criterion: per non-empty group calc_diff < 1e-3 and max|out - ref| / "
        "max|ref| < 1e-3 (f32 dw) or 1e-2 (bf16 dw) against the float64 "
        "product of the dequantised operands (the bf16 ones for the "
        "transposed bf16 kernel) over the clamped offsets; no NaN/Inf; empty "
        "groups exactly zero (bit-identical with accumulate)",
        f"- correctness run: {time.time() - started:.0f} s",
        "",
        "| # | case | kernel | T | N | K | G | result | |",
        "|---|---|---|---|---|---|---|---|---|",
    ] + rows
    if failures:
        lines += ["", "Failures:", ""] + [f"- `{f}`" for f in failures[:50]]
    lines += ["", summary]
    if args.ablation_bundles:
        failed += ablation(args.ablation_bundles, cases, manifests, lines,
                           args.seed)
    bench_failed = 0
    if args.bench:
        bf16 = load(args.bf16_bundles)[1] if args.bf16_bundles else {}
        variants = {}
        if args.variant_bundles:
            # Kernels of the main kernel's problem (f32 dw, nk, no
            # accumulate): tile experiments, or the main kernel of another
            # build (named after its directory).
            want = {key: manifests[MAIN]["problem"].get(key) for key in
                    ("weight_layout", "out_dtype", "accumulate", "index_dtype")}
            vmanifests, vkernels = load(args.variant_bundles)
            for name, kernel in vkernels.items():
                problem = vmanifests[name]["problem"]
                if any(problem.get(key) != value for key, value in want.items()):
                    continue
                label = (f"{args.variant_bundles.name}/{name}" if name == MAIN
                         else name)
                variants[label] = kernel
            commit = args.variant_bundles / "COMMIT"
            lines += ["", f"Variants: {args.variant_bundles.name}"
                      + (f" (commit {commit.read_text().strip()})"
                         if commit.exists() else "")]
        bench_failed = bench(kernels, bf16, lines, args.quick, variants)
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text("\n".join(lines) + "\n")
    return 0 if failed == 0 and bench_failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
