#!/usr/bin/env python3
"""Grouped-GEMM speed: GGEMM kernels vs torch._grouped_mm and cuBLAS, and
against the same kernels compiled by an earlier commit.

Runs on a Hopper GPU (through device) with the bundles built by
test/gpu/build_bundles.sh (and, with --baseline, bench/build_baseline.sh).
For each shape: fresh random bf16 inputs, a correctness check of every GGEMM
kernel against torch (float32 reference), then the median of many timed runs
(triton.testing.do_bench over CUDA-graph replays) of each GGEMM variant,
torch._grouped_mm (2D x 3D with offsets) and cuBLAS (torch.matmul per group;
torch.bmm where groups are equal). A kernel compiled for static sizes runs
only on shapes of those sizes. TFLOP/s count 2 * rows * N * K useful flops.

With --baseline DIR every variant found in both bundle directories is timed
`--repeats` times in alternation (new, old, new, old, ...): the spread of
one kernel's repeats is the run-to-run noise, and the new/old ratio is
reported next to it.

Example:
    python3 bench/bench_e2e.py --bundles .device/bundles \\
        --baseline .device/bundles_eaf177a --report bench.md
"""
import argparse
import datetime
import json
import os
import random
import statistics
import sys
from pathlib import Path

import torch
import triton.testing

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from ggemm.runtime import Kernel  # noqa: E402

GGEMM_VARIANTS = {
    "ggemm 128x128": "seg_nk_bf16_kernel",
    "ggemm 128x256": "seg_nk_bf16_n256_kernel",
    "ggemm 64x128": "bench_seg_m64n128_kernel",
    "ggemm 128x256 along m": "bench_seg_m128n256_along_m_kernel",
    "ggemm 128x256 along m, 2-CTA clusters": "bench_seg_m128n256_along_m_c2_kernel",
    "ggemm 64x128 ping-pong": "bench_seg_m64n128_pingpong_kernel",
    "ggemm 64x256 ping-pong along m": "bench_seg_m64n256_pingpong_along_m_kernel",
    "ggemm static (select-config)": "bench_static_n4096_k7168_kernel",
    "ggemm static (select-config) ": "bench_static_n7168_k2048_kernel",
}


def shapes():
    """(label, group lengths, N, K)."""
    skew = [8192, 4096, 2048, 1024, 512, 256, 128, 128]  # 16384 rows
    return [
        ("G=8 M=4096 N=4096 K=7168", [512] * 8, 4096, 7168),
        ("G=8 M=16384 N=4096 K=7168", [2048] * 8, 4096, 7168),
        ("G=8 M=16384 N=7168 K=2048", [2048] * 8, 7168, 2048),
        ("64 groups x 64 rows N=4096 K=7168", [64] * 64, 4096, 7168),
        ("128 groups x 16 rows N=4096 K=2048", [16] * 128, 4096, 2048),
        ("G=8 skewed M=16384 N=4096 K=7168", skew, 4096, 7168),
        # DeepSeek-V3's down projection at 16384 tokens x top-8 over 256
        # experts: many groups of large tiles, where a walk over every
        # group per tile weighs most (NOTES v14).
        ("256 groups x 512 rows N=7168 K=2048", [512] * 256, 7168, 2048),
    ]


def fits(manifest: dict, groups: int, n: int, k: int) -> bool:
    """Whether a kernel's static sizes (-1: dynamic) admit the shape."""
    p = manifest["problem"]
    return all(want < 0 or want == have for want, have in
               ((p["n"], n), (p["k"], k), (p["num_groups"], groups),
                (p["num_weights"], groups)))


def bench(fn) -> float:
    """Median milliseconds of `fn` replayed from a CUDA graph, so that Python
    launch overhead does not count for small problems (METHOD.md)."""
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        fn()
    torch.cuda.synchronize()
    return triton.testing.do_bench(graph.replay, warmup=50, rep=300,
                                   return_mode="median")


def segment_inputs(lengths, n: int, k: int):
    """Fresh bf16 x [M, K] and w [G, N, K] (scaled so that y is O(1)), the
    i32 seg_indptr of `lengths`, torch's offsets and torch._grouped_mm's y."""
    groups, m = len(lengths), sum(lengths)
    offsets = [0]
    for length in lengths:
        offsets.append(offsets[-1] + length)
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = (torch.randn(groups, n, k, device="cuda") / k ** 0.5).to(torch.bfloat16)
    indptr = torch.tensor(offsets, dtype=torch.int32, device="cuda")
    offs = indptr[1:].clone()
    ref = torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)
    return x, w, indptr, offs, ref


def load(bundles: Path) -> dict:
    """label -> (kernel, manifest) for the variants found in `bundles`."""
    out = {}
    for label, name in GGEMM_VARIANTS.items():
        path = bundles / f"{name}.json"
        if path.exists():
            out[label] = (Kernel(path), json.loads(path.read_text()))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, required=True)
    parser.add_argument("--baseline", type=Path,
                        help="bundles of an earlier commit to compare with")
    parser.add_argument("--repeats", type=int, default=3,
                        help="alternating timings of each kernel with "
                             "--baseline")
    parser.add_argument("--report", type=Path)
    parser.add_argument("--commit", default=os.environ.get("GGEMM_COMMIT", "unknown"))
    args = parser.parse_args()
    torch.manual_seed(0)
    random.seed(0)
    kernels = load(args.bundles)
    old_kernels = load(args.baseline) if args.baseline else {}
    base = (args.baseline / "COMMIT").read_text().strip() \
        if args.baseline and (args.baseline / "COMMIT").exists() else "baseline"
    props = torch.cuda.get_device_properties(0)
    rows_out, compare_out = [], []
    for label, lengths, n, k in shapes():
        groups = len(lengths)
        m = sum(lengths)
        x, w, indptr, offs, ref = segment_inputs(lengths, n, k)
        offsets = indptr.tolist()
        flops = 2.0 * m * n * k
        results = {}

        def run(kernel: Kernel):
            y = torch.full((m, n), float("nan"), device="cuda",
                           dtype=torch.bfloat16)
            kernel(x=x, w=w, y=y, seg_indptr=indptr)
            torch.cuda.synchronize()
            err = ((y.float() - ref.float()).norm() / ref.float().norm()).item()
            return (lambda: kernel(x=x, w=w, y=y, seg_indptr=indptr)), err

        for name, (kernel, manifest) in kernels.items():
            if not fits(manifest, groups, n, k):
                continue
            fn, err = run(kernel)
            old, old_manifest = old_kernels.get(name, (None, None))
            if old is None or not fits(old_manifest, groups, n, k):
                results[name] = (bench(fn), err)
                continue
            old_fn, old_err = run(old)
            new_ms, old_ms = [], []
            for _ in range(args.repeats):
                new_ms.append(bench(fn))
                old_ms.append(bench(old_fn))
            results[name] = (statistics.median(new_ms), err)
            results[f"{name} @{base}"] = (statistics.median(old_ms), old_err)
            spread = max((max(v) - min(v)) / statistics.median(v)
                         for v in (new_ms, old_ms))
            ratio = statistics.median(old_ms) / statistics.median(new_ms)
            compare_out.append((label, name.strip(), new_ms, old_ms, ratio,
                                spread))
            print(f"{label:40s} {name.strip():30s} new {new_ms} old {old_ms} "
                  f"speed new/old {ratio:.3f} spread {spread:.3f}", flush=True)
        results["torch._grouped_mm"] = (
            bench(lambda: torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)), 0.0)
        segs = [(offsets[g], offsets[g + 1]) for g in range(groups)]
        y_loop = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)

        def cublas_loop():
            for g, (b, e) in enumerate(segs):
                torch.matmul(x[b:e], w[g].t(), out=y_loop[b:e])
        results["cuBLAS matmul loop"] = (bench(cublas_loop), 0.0)
        if len(set(lengths)) == 1:
            xb = x.view(groups, lengths[0], k)
            results["cuBLAS bmm"] = (bench(lambda: torch.bmm(xb, w.transpose(1, 2))), 0.0)
        for name, (ms, err) in results.items():
            tflops = flops / (ms * 1e-3) / 1e12
            rows_out.append((label, name.strip(), ms, tflops, err))
            print(f"{label:40s} {name.strip():34s} {ms:8.3f} ms {tflops:7.1f} TFLOP/s"
                  + (f"  rel err {err:.1e}" if name.startswith("ggemm") else ""),
                  flush=True)
        del x, w
        torch.cuda.empty_cache()
    slower = [c for c in compare_out if c[4] < 1.0 - c[5]]
    summary = (f"bench-compare: {len(compare_out)} kernel/shape pairs vs {base}, "
               f"{len(slower)} slower by more than the run-to-run spread")
    print(summary, flush=True)
    if args.report:
        lines = [
            "# Grouped GEMM speed (bf16 in, bf16 out, f32 accumulate)",
            "",
            f"- device: {props.name} ({props.multi_processor_count} SMs), torch "
            f"{torch.__version__}, triton {triton.__version__}",
            f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
            f"- commit: {args.commit}" + (f"; baseline kernels: {base}, same run"
                                          if compare_out else ""),
            "- script: bench/bench_e2e.py (median of triton.testing.do_bench over "
            "CUDA-graph replays of one call, warmup 50 ms, rep 300 ms; fresh "
            "torch.randn inputs; M = total rows over all groups; weights [G, N, K])",
            "- ggemm rel err: vs torch._grouped_mm output, checked before timing",
            "",
            "| shape | implementation | median ms | TFLOP/s | rel err |",
            "|---|---|---|---|---|",
        ]
        for label, name, ms, tflops, err in rows_out:
            e = f"{err:.1e}" if name.startswith("ggemm") else ""
            lines.append(f"| {label} | {name} | {ms:.3f} | {tflops:.1f} | {e} |")
        if compare_out:
            lines += [
                "",
                f"## This commit against {base}, same run",
                "",
                f"Each kernel timed {args.repeats} times, alternating new and old "
                "(median of each repeat's do_bench median). Spread: the larger "
                "(max - min) / median of the two kernels' repeats. A pair counts "
                "as slower when old/new < 1 - spread.",
                "",
                "| shape | variant | new ms (repeats) | old ms (repeats) | "
                "speed new/old | spread |",
                "|---|---|---|---|---|---|",
            ]
            for label, name, new_ms, old_ms, ratio, spread in compare_out:
                lines.append(
                    f"| {label} | {name} | {', '.join(f'{v:.3f}' for v in new_ms)} "
                    f"| {', '.join(f'{v:.3f}' for v in old_ms)} | {ratio:.3f} "
                    f"| {spread:.3f} |")
            lines += ["", summary]
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
