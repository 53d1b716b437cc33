#!/usr/bin/env python3
"""Grouped-GEMM speed: GGEMM kernels vs torch._grouped_mm and cuBLAS.

Runs on a Hopper GPU (through device) with the bundles built by
test/gpu/build_bundles.sh. For each shape: fresh random bf16 inputs, a
correctness check of every GGEMM kernel against torch (float32 reference),
then the median of many timed runs (triton.testing.do_bench, CUDA events) of
each GGEMM variant, torch._grouped_mm (2D x 3D with offsets) and cuBLAS
(torch.matmul per group; torch.bmm where groups are equal). TFLOP/s count
2 * rows * N * K useful flops.

Example:
    python3 bench/bench_e2e.py --bundles .device/bundles --report bench.md
"""
import argparse
import datetime
import os
import random
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
}


def shapes(rng: random.Random):
    """(label, group lengths, N, K)."""
    skew = [8192, 4096, 2048, 1024, 512, 256, 128, 128]  # 16384 rows
    return [
        ("G=8 M=4096 N=4096 K=7168", [512] * 8, 4096, 7168),
        ("G=8 M=16384 N=4096 K=7168", [2048] * 8, 4096, 7168),
        ("G=8 M=16384 N=7168 K=2048", [2048] * 8, 7168, 2048),
        ("64 groups x 64 rows N=4096 K=7168", [64] * 64, 4096, 7168),
        ("128 groups x 16 rows N=4096 K=2048", [16] * 128, 4096, 2048),
        ("G=8 skewed M=16384 N=4096 K=7168", skew, 4096, 7168),
    ]


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, required=True)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--commit", default=os.environ.get("GGEMM_COMMIT", "unknown"))
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = random.Random(0)
    kernels = {label: Kernel(args.bundles / f"{name}.json")
               for label, name in GGEMM_VARIANTS.items()
               if (args.bundles / f"{name}.json").exists()}
    props = torch.cuda.get_device_properties(0)
    rows_out = []
    for label, lengths, n, k in shapes(rng):
        groups = len(lengths)
        m = sum(lengths)
        offsets = [0]
        for length in lengths:
            offsets.append(offsets[-1] + length)
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = (torch.randn(groups, n, k, device="cuda") / k ** 0.5).to(torch.bfloat16)
        indptr = torch.tensor(offsets, dtype=torch.int32, device="cuda")
        offs = indptr[1:].clone()
        flops = 2.0 * m * n * k
        results = {}
        ref = torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)
        for name, kernel in kernels.items():
            y = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            kernel(x=x, w=w, y=y, seg_indptr=indptr)
            torch.cuda.synchronize()
            err = ((y.float() - ref.float()).norm() / ref.float().norm()).item()
            ms = bench(lambda: kernel(x=x, w=w, y=y, seg_indptr=indptr))
            results[name] = (ms, err)
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
            rows_out.append((label, name, ms, tflops, err))
            print(f"{label:40s} {name:22s} {ms:8.3f} ms {tflops:7.1f} TFLOP/s"
                  + (f"  rel err {err:.1e}" if name.startswith("ggemm") else ""),
                  flush=True)
        del x, w
        torch.cuda.empty_cache()
    if args.report:
        lines = [
            "# Grouped GEMM speed (bf16 in, bf16 out, f32 accumulate)",
            "",
            f"- device: {props.name} ({props.multi_processor_count} SMs), torch "
            f"{torch.__version__}, triton {triton.__version__}",
            f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
            f"- commit: {args.commit}",
            "- script: bench/bench_e2e.py (median of triton.testing.do_bench over "
            "CUDA-graph replays of one call, "
            "warmup 50 ms, rep 300 ms; fresh torch.randn inputs; M = total rows "
            "over all groups; weights [G, N, K])",
            "- ggemm rel err: vs torch._grouped_mm output, checked before timing",
            "",
            "| shape | implementation | median ms | TFLOP/s | rel err |",
            "|---|---|---|---|---|",
        ]
        for label, name, ms, tflops, err in rows_out:
            e = f"{err:.1e}" if name.startswith("ggemm") else ""
            lines.append(f"| {label} | {name} | {ms:.3f} | {tflops:.1f} | {e} |")
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
