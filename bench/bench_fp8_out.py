#!/usr/bin/env python3
"""The e4m3 output epilogue (issue 10) timed against the unfused pair it
replaces, on a Hopper GPU, through the Python ops:

- fused: ``segment_matmul(x, w, seg, out_dtype=torch.float8_e4m3fn)``, the
  GEMM writing e4m3 y and its MN-major 1x128 scales;
- unfused: ``segment_matmul(x, w, seg)`` in bf16, then ``ggemm.quantize``
  (1x128, the same arithmetic on the bf16-rounded values);
- the bf16 GEMM alone, for the share of the quantisation.

Medians of CUDA-event timings (20 runs after 3 warm-ups) of each, in the
same run; the two e4m3 results are compared (calc_diff of the dequantised
values: they differ by the bf16 rounding of the unfused path). Prints a
table and ``fp8-out-bench: min speedup of the fused e4m3 output over GEMM +
quantize S over N shapes``.

The GPU host has no LLVM: the kernels come from a catalog built here,
``bash test/gpu/build_python_catalog.sh build .device/fp8out_catalog
bench/bench_fp8_out.py``; then there ``python3 bench/bench_fp8_out.py
--catalog .device/fp8out_catalog --report fp8out.md``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

#: (groups, rows per group, N, K): DeepSeek-V3-like expert projections
#: (7168 -> 2048 up, 2048 -> 7168 down) and a 4096-square one.
SHAPES = [(8, 2048, 7168, 2048), (8, 4096, 2048, 7168), (8, 4096, 4096, 4096)]


def spec() -> dict:
    lines = [dict(op="quantize", x_dtype="bf16", scale_block="1x128",
                  rank=2)]
    for g, _, n, k in SHAPES:
        seg = dict(op="segment_matmul", dtype="bf16", n=n, k=k, groups=g)
        lines += [seg, dict(seg, out_dtype="f8e4m3")]
    return {"format": "bin", "kernels": lines}


def median_ms(fns, repeats=20, warmup=3,
              sequential=False) -> list[float]:
    """Medians of CUDA-event timings of each of `fns`: by default
    check_fp8.median_ms (interleaved rounds queued behind a sleep kernel, L2
    flushed before each launch, rotated; bench/NOTES.md v17: timing each
    launch from an idle GPU put the host's launch work inside the timing).
    `sequential` times all of one function before the next, each from an
    idle GPU (this script's first method, kept to show the difference)."""
    import torch
    if not sequential:
        sys.path.insert(0, str(ROOT / "test" / "gpu"))
        import check_fp8
        return check_fp8.median_ms(fns, repeats=repeats, warmup=warmup)
    for fn in fns:
        for _ in range(warmup):
            fn()
    times = [[] for _ in fns]
    for fn, out in zip(fns, times):
        for _ in range(repeats):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            out.append(start.elapsed_time(end))
    return [statistics.median(t) for t in times]


def dequantize(q, s):
    n = q.shape[1]
    return q.double() * s.double().repeat_interleave(128, dim=1)[:, :n]


def calc_diff(a, b) -> float:
    a, b = a.double(), b.double()
    denom = (a * a + b * b).sum()
    return 0.0 if denom == 0 else float(1 - 2 * (a * b).sum() / denom)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", type=Path)
    parser.add_argument("--write-spec", type=Path)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--sequential", action="store_true",
                        help="time each column's 20 launches in a row "
                        "(default: interleaved rounds)")
    args = parser.parse_args()
    if args.write_spec:
        args.write_spec.write_text(json.dumps(spec(), indent=1) + "\n")
        return 0
    if args.catalog:
        os.environ["GGEMM_CATALOG"] = str(args.catalog)
    import torch
    import ggemm
    torch.manual_seed(20261126)
    f8 = torch.float8_e4m3fn
    rows_out = ["| G x rows | N | K | bf16 GEMM ms | + quantize ms | fused "
                "e4m3 ms | speedup | TFLOP/s fused | calc_diff fused vs "
                "unfused |", "|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(rows_out), flush=True)
    speedups = []
    for g, rows, n, k in SHAPES:
        m = g * rows
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16) / 16
        seg = torch.arange(0, m + 1, rows, device="cuda", dtype=torch.int32)
        y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        y8, ys = ggemm.segment_matmul(x, w, seg, out_dtype=f8)

        def gemm():
            ggemm.segment_matmul(x, w, seg, out=y)

        def unfused():
            ggemm.segment_matmul(x, w, seg, out=y)
            return ggemm.quantize(y)

        def fused():
            ggemm.segment_matmul(x, w, seg, out=y8, out_scale=ys)

        q, s = unfused()
        fused()
        torch.cuda.synchronize()
        diff = calc_diff(dequantize(y8, ys), dequantize(q, s))
        t_gemm, t_unfused, t_fused = median_ms(
            [gemm, unfused, fused], sequential=args.sequential)
        speedup = t_unfused / t_fused
        speedups.append(speedup)
        tflops = 2.0 * m * n * k / t_fused / 1e9
        rows_out.append(f"| {g} x {rows} | {n} | {k} | {t_gemm:.3f} | "
                        f"{t_unfused:.3f} | {t_fused:.3f} | {speedup:.2f} | "
                        f"{tflops:.0f} | {diff:.1e} |")
        print(rows_out[-1], flush=True)
    summary = (f"fp8-out-bench: min speedup of the fused e4m3 output over "
               f"GEMM + quantize {min(speedups):.2f} over {len(speedups)} "
               f"shapes")
    print(summary, flush=True)
    if args.report:
        props = torch.cuda.get_device_properties(0)
        text = ["# The e4m3 output epilogue against GEMM + quantize "
                "(bench/bench_fp8_out.py)", "",
                f"- device: {props.name} ({props.multi_processor_count} SMs), "
                f"torch {torch.__version__}",
                f"- date: {datetime.date.today().isoformat()}",
                f"- commit: {os.environ.get('GGEMM_COMMIT', 'unknown')}",
                "- times: medians of 20 CUDA-event timings after 3 warm-ups, "
                + ("each column's 20 in a row from an idle GPU "
                   "(--sequential); " if args.sequential else
                   "check_fp8.median_ms: 20 interleaved rounds of one launch "
                   "per column queued behind a sleep kernel, L2 flushed "
                   "before each launch; ") +
                "the unfused column is the bf16 GEMM followed by "
                "ggemm.quantize (1x128)", ""] + rows_out + ["", summary, ""]
        args.report.write_text("\n".join(text) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
