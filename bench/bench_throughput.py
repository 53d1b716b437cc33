#!/usr/bin/env python3
"""Large-M throughput (issue 11): GGEMM's 128x256 persistent kernel as
ggemm-select-config configures it (along m, in bands of 4 column tiles in
the groups of at least 48 row tiles; and, when their bundles are there,
the same tiles walked plainly, swizzled in every group or on 2-CTA
clusters, and the ping-pong kernels, alone, swizzled and on 2-CTA
clusters) against
torch._grouped_mm in the same run, on DeepGEMM's grouped contiguous bf16
shapes and the six shapes of bench_e2e.py (the v4 table), after 3 s of
dense matmuls to bring the clocks up.

DeepGEMM's shapes: (G, rows per group) in {(4, 8192), (8, 4096)} x (N, K) in
{(6144, 7168), (7168, 3072), (4096, 4096), (4096, 2048)}, each group's rows
drawn uniformly in [0.7, 1.3] x the expected count (seeded). Inputs are fresh
torch.randn; every GGEMM result is checked against torch._grouped_mm before
it is timed (relative error < 1e-2). Timings are medians of
triton.testing.do_bench over CUDA-graph replays (bench_e2e.bench), GGEMM
and torch alternated `--repeats` times; the ratio is torch's median time
over GGEMM's. The table closes with
`throughput-bench: min ratio vs torch._grouped_mm R over S shapes`.

Example (on the GPU machine):
    python3 bench/bench_throughput.py --bundles .device/bundles --report t.md
"""
import argparse
import datetime
import os
import random
import statistics
import sys
from pathlib import Path

import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import bench_e2e  # noqa: E402
from ggemm.runtime import Kernel  # noqa: E402

# ggemm-select-config's tile for these shapes since NOTES v20: 128x256,
# along m, in bands of 4 column tiles in the groups of at least 48 row
# tiles.
KERNEL = "bench_seg_m128n256_along_m_sw4_min48_kernel"
# The same tiles walked plainly along m (the default before v20), in bands
# of 4 or 8 column tiles in every group (swizzle), on 2-CTA
# clusters sharing the weight tile, and ping-pong consumers (two warpgroups
# on alternate tiles), alone, swizzled and in 2-CTA clusters: timed too when
# their bundles are there, each with its own summary line after the 128x256
# kernel's.
OTHER_KERNELS = {
    "128x256 plain": "bench_seg_m128n256_along_m_kernel",
    "128x256 swizzle 4": "bench_seg_m128n256_along_m_sw4_kernel",
    "128x256 swizzle 8": "bench_seg_m128n256_along_m_sw8_kernel",
    # The default's first form (737b1fa): the band width selected per group
    # (a select), where the default now branches (NOTES v20).
    "128x256 swizzle 4 from 48 row tiles, select":
        "bench_seg_m128n256_along_m_sw4_min48_select_kernel",
    "128x256 2-CTA clusters": "bench_seg_m128n256_along_m_c2_kernel",
    "64x256 ping-pong": "bench_seg_m64n256_pingpong_along_m_kernel",
    "64x256 ping-pong, 5 stages":
        "bench_seg_m64n256_pingpong_s5_along_m_kernel",
    "128x128 ping-pong": "bench_seg_m128n128_pingpong_along_m_kernel",
    "128x128 ping-pong swizzle 8":
        "bench_seg_m128n128_pingpong_along_m_sw8_kernel",
    "64x256 ping-pong 2-CTA clusters":
        "bench_seg_m64n256_pingpong_along_m_c2_kernel",
}


def shapes(rng: random.Random):
    out = []
    for groups, rows in ((4, 8192), (8, 4096)):
        for n, k in ((6144, 7168), (7168, 3072), (4096, 4096), (4096, 2048)):
            lengths = [int(rows * rng.uniform(0.7, 1.3)) for _ in range(groups)]
            out.append((f"DeepGEMM G={groups} ~{rows} rows/group N={n} K={k}",
                        lengths, n, k))
    for label, lengths, n, k in bench_e2e.shapes():
        out.append((f"v4 {label}", lengths, n, k))
    return out


def warm_up(seconds: float = 3.0) -> None:
    """Dense matmuls until the clocks have ramped up: the first shape of a
    first run otherwise times at idle clocks (a 15 % spread was seen)."""
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    while True:
        for _ in range(10):
            a @ a
        end.record()
        end.synchronize()
        if start.elapsed_time(end) > seconds * 1e3:
            return


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--extra", action="append", default=[], metavar="LABEL=MANIFEST",
                        help="another kernel to time in the same rounds (a manifest "
                        "path, e.g. an experiment's), with its own summary line")
    parser.add_argument("--commit", default=os.environ.get("GGEMM_COMMIT", "unknown"))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    kernels = {"128x256": Kernel(args.bundles / f"{KERNEL}.json")}
    for name, bundle in OTHER_KERNELS.items():
        if (args.bundles / f"{bundle}.json").exists():
            kernels[name] = Kernel(args.bundles / f"{bundle}.json")
    for extra in args.extra:
        label, _, manifest = extra.partition("=")
        kernels[label] = Kernel(Path(manifest))
    warm_up()
    props = torch.cuda.get_device_properties(0)
    rows_out, failures = [], 0
    ratios = {name: [] for name in kernels}
    for label, lengths, n, k in shapes(rng):
        m = sum(lengths)
        x, w, indptr, offs, ref = bench_e2e.segment_inputs(lengths, n, k)
        y = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        errs = {}
        for name, kernel in kernels.items():
            y.fill_(float("nan"))
            kernel(x=x, w=w, y=y, seg_indptr=indptr)
            torch.cuda.synchronize()
            errs[name] = ((y.float() - ref.float()).norm()
                          / ref.float().norm()).item()
        ok = all(e < 1e-2 for e in errs.values())
        failures += not ok
        times = {name: [] for name in kernels}
        peer = []
        for _ in range(args.repeats):
            for name, kernel in kernels.items():
                times[name].append(bench_e2e.bench(
                    lambda kernel=kernel: kernel(x=x, w=w, y=y, seg_indptr=indptr)))
            peer.append(bench_e2e.bench(
                lambda: torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)))
        t_peer = statistics.median(peer)
        flops = 2.0 * m * n * k
        for name in kernels:
            t_ours = statistics.median(times[name])
            ratio = t_peer / t_ours
            ratios[name].append(ratio)
            spread = max((max(v) - min(v)) / statistics.median(v)
                         for v in (times[name], peer))
            rows_out.append((label, name, m, t_ours, flops / t_ours / 1e9, t_peer,
                             flops / t_peer / 1e9, ratio, spread, errs[name],
                             errs[name] < 1e-2))
            print(f"{label:50s} {name:24s} M={m:6d} ggemm {t_ours:.3f} ms "
                  f"{flops / t_ours / 1e9:6.1f} TFLOP/s  torch {t_peer:.3f} ms "
                  f"{flops / t_peer / 1e9:6.1f}  ratio {ratio:.3f} spread "
                  f"{spread:.3f} rel err {errs[name]:.1e} "
                  f"{'PASS' if errs[name] < 1e-2 else 'FAIL'}", flush=True)
        del x, w, y, ref
        torch.cuda.empty_cache()
    main_ratios = ratios["128x256"]
    summary = (f"throughput-bench: min ratio vs torch._grouped_mm "
               f"{min(main_ratios):.2f} over {len(main_ratios)} shapes")
    extra = [f"throughput-bench ({name}): min ratio vs torch._grouped_mm "
             f"{min(r):.2f} over {len(r)} shapes"
             for name, r in ratios.items() if name != "128x256"]
    for line in [summary] + extra:
        print(line, flush=True)
    if args.report:
        lines = [
            "# Large-M throughput: GGEMM vs torch._grouped_mm (bf16 in and out)",
            "",
            f"- device: {props.name} ({props.multi_processor_count} SMs), torch "
            f"{torch.__version__}, triton {triton.__version__}",
            f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
            f"- commit: {args.commit}",
            f"- script: bench/bench_throughput.py --seed {args.seed} --repeats "
            f"{args.repeats} (kernels {', '.join(kernels)}: along "
            "m, dynamic sizes; medians of do_bench over CUDA-graph replays, GGEMM and "
            "torch alternated; ratio = torch ms / GGEMM ms; spread = the larger "
            "(max - min) / median of the two)",
            "",
            "| shape | GGEMM kernel | M | GGEMM ms | GGEMM TFLOP/s | torch ms | torch TFLOP/s | ratio | spread | rel err |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for label, name, m, to, fo, tp, fp, ratio, spread, err, ok in rows_out:
            lines.append(f"| {label} | {name} | {m} | {to:.3f} | {fo:.0f} | "
                         f"{tp:.3f} | {fp:.0f} | {ratio:.3f} | {spread:.3f} | "
                         f"{err:.1e}{'' if ok else ' FAIL'} |")
        lines += ["", "The summary line is the 128x256 kernel's (what "
                  "ggemm-select-config picks for these shapes); other kernels "
                  "follow it.", "", summary] + extra + [""]
        args.report.write_text("\n".join(lines))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
