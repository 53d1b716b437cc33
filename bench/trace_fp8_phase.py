#!/usr/bin/env python3
"""The consumer warpgroups' phase in an FP8 block-scaled kernel (bench/NOTES.md
v42, v43): launches one kernel compiled with GGEMM_EXP_TRACE=1
(bench/experiments/2026-11-27-warpgroup-timeline.patch), whose consumer
warpgroups write SM clock stamps of their first 128 ring positions (the
wgmma issue and the wait's return) into y's spare columns (y is given a row
stride of N + 2048; row r holds CTA r's stamps), and summarises them:

- per K block, the spread of the three warpgroups' wait returns (0 cycles:
  lockstep; a third of a K block's product time: evenly staggered);
- the order in which the warpgroups' products complete;
- the time a warpgroup waits for its own product, and a K block's period.

    python3 bench/trace_fp8_phase.py --bundles DIR --shape 8,4096,4096,2048 \\
        --report out.md
"""
import argparse
import datetime
import statistics
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "test" / "gpu"))
from ggemm.runtime import Kernel  # noqa: E402
import check_fp8 as c  # noqa: E402

SPARE = 2048  # bf16 columns past N: 4 KB a row, 3 x 128 x 8 bytes used


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, required=True)
    parser.add_argument("--shape", default="8,4096,4096,2048",
                        help="G,rows a group,N,K (default %(default)s)")
    parser.add_argument("--ctas", type=int, default=8,
                        help="CTAs whose timelines are printed")
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    g, rows, n, k = (int(v) for v in args.shape.split(","))
    torch.manual_seed(20261127)
    kern = Kernel(args.bundles / f"fp8_seg_n{n}_k{k}_kernel.json")
    m = g * rows
    xq, _, xs_mn, wq, ws, offsets = c.grouped_operands(g, rows, n, k)
    full = torch.zeros(m, n + SPARE, device="cuda", dtype=torch.bfloat16)
    y = full[:, :n]
    for _ in range(3):  # warm up (clocks, caches)
        kern(x=xq, w=wq, x_scale=xs_mn, w_scale=ws, seg_indptr=offsets, y=y)
    full[:, n:].zero_()
    kern(x=xq, w=wq, x_scale=xs_mn, w_scale=ws, seg_indptr=offsets, y=y)
    torch.cuda.synchronize()
    props = torch.cuda.get_device_properties(0)
    ctas = min(props.multi_processor_count, m)
    stamps = full[:ctas, n:n + 3 * 128 * 4].contiguous().view(torch.int32)
    stamps = stamps.view(ctas, 3, 128, 2).cpu().to(torch.int64) & 0xFFFFFFFF
    commit_file = args.bundles / "COMMIT"
    commit = (commit_file.read_text().strip() if commit_file.exists()
              else "unknown")
    lines = ["# Consumer warpgroup timelines (bench/trace_fp8_phase.py)", "",
             f"- device: {props.name} ({props.multi_processor_count} SMs), "
             f"torch {torch.__version__}",
             f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"- commit: {commit} (kernels: {args.bundles})",
             f"- shape: G = {g}, {rows} rows a group, N = {n}, K = {k}; one "
             "launch after three warm-up launches; SM clock cycles", ""]
    header = len(lines)
    spreads, waits, periods, orders = [], [], [], {}
    used = 0
    for cta in range(ctas):
        s = stamps[cta]
        if (s == 0).all():
            continue
        used += 1
        base = int(s[s > 0].min())
        rel = (s - base) % (1 << 32)
        for pos in range(1, 128):
            done = [int(rel[w, pos, 1]) for w in range(3)]
            issue = [int(rel[w, pos, 0]) for w in range(3)]
            if min(done) == 0 or min(issue) == 0:
                continue
            spreads.append(max(done) - min(done))
            waits.extend(d - i for d, i in zip(done, issue))
            prev = [int(rel[w, pos - 1, 1]) for w in range(3)]
            if min(prev) > 0:
                periods.extend(d - p for d, p in zip(done, prev))
            order = "".join(str(w) for w in sorted(range(3),
                                                   key=lambda w: done[w]))
            orders[order] = orders.get(order, 0) + 1
        if cta < args.ctas:
            lines += [f"## CTA {cta}: per ring position, each warpgroup's "
                      "issue / wait return (cycles from the CTA's first stamp)",
                      "", "| position | wg 0 | wg 1 | wg 2 |", "|---|---|---|---|"]
            for pos in range(0, 40):
                cells = [f"{int(rel[w, pos, 0])} / {int(rel[w, pos, 1])}"
                         for w in range(3)]
                lines.append(f"| {pos} | " + " | ".join(cells) + " |")
            lines.append("")

    def q(v):
        v = sorted(v)
        return (f"median {statistics.median(v):.0f}, p10 {v[len(v) // 10]}, "
                f"p90 {v[9 * len(v) // 10]}")
    summary = ["## Summary", "", f"- CTAs with stamps: {used}",
               f"- K block period of a warpgroup (wait return to wait "
               f"return): {q(periods)} cycles",
               f"- a warpgroup's issue to its wait's return: {q(waits)} cycles",
               f"- spread of the three warpgroups' wait returns within one ring "
               f"position: {q(spreads)} cycles",
               "- completion order of the three warpgroups per position "
               "(count): " + ", ".join(f"{o}: {n_}" for o, n_ in
                                       sorted(orders.items(),
                                              key=lambda t: -t[1])), ""]
    lines[header:header] = summary
    print("\n".join(summary))
    if args.report:
        args.report.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
