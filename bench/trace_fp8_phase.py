#!/usr/bin/env python3
"""The consumer warpgroups' phase in an FP8 block-scaled kernel (bench/NOTES.md
v42, v43): launches one kernel compiled with GGEMM_EXP_TRACE=1
(bench/experiments/2026-11-27-timeline-scale-offsets-prewait.patch, on
fa7ad8c; v42's 2026-11-27-warpgroup-timeline.patch wrote 8 bytes a
position, which this version of the script does not read), which writes SM
clock stamps of the first 128 ring positions into y's spare columns (y is
given a row stride of N + 4096; row r holds CTA r's stamps, 16 bytes a
position): per consumer warpgroup the clock before and after the full
mbarrier wait, at the wgmma issue and at the wait's return; for the
producer before and after the empty mbarrier wait, before the full
arrival and after the loads' issue. It summarises:

- per K block, the spread of the three warpgroups' wait returns (0 cycles:
  lockstep; a third of a K block's product time: evenly staggered);
- the order in which the warpgroups' products complete;
- the time a warpgroup waits for its own product, and a K block's period;
- where a warpgroup's time between two products goes (the promotion and
  release, the wait for the slot's data), and the producer's (the wait
  for a free slot, the weight scales' load, the issue); the data's
  arrival after its issue.

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

SPARE = 4096  # bf16 columns past N: 8 KB a row, 4 x 128 x 16 bytes used


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
    stamps = full[:ctas, n:n + SPARE].contiguous().view(torch.int32)
    stamps = stamps.view(ctas, 4, 128, 4).cpu().to(torch.int64) & 0xFFFFFFFF
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
    data_waits, between, empty_waits, scale_loads, issues = [], [], [], [], []
    latencies, leads, waited, products = [], [], 0, {0: [], 1: [], 2: []}
    positions = 0
    used = 0
    for cta in range(ctas):
        s = stamps[cta]
        if (s == 0).all():
            continue
        used += 1
        base = int(s[s > 0].min())
        rel = (s - base) % (1 << 32)
        # A stamp of 0 was never written (a position the CTA did not reach).
        written = s != 0
        ready, arrived, issued, done = (rel[:3, :, i] for i in range(4))
        prod = rel[3]
        serial = []  # (done, issue, position, warpgroup) of every product
        for pos in range(0, 128):
            if not bool(written[:3, pos].all()):
                continue
            for w in range(3):
                serial.append((int(done[w, pos]), int(issued[w, pos]), pos, w))
            if pos == 0:
                continue
            d = [int(done[w, pos]) for w in range(3)]
            i_ = [int(issued[w, pos]) for w in range(3)]
            r = [int(ready[w, pos]) for w in range(3)]
            a = [int(arrived[w, pos]) for w in range(3)]
            positions += 1
            spreads.append(max(d) - min(d))
            waits.extend(x - y for x, y in zip(d, i_))
            data_waits.extend(x - y for x, y in zip(a, r))
            prev = [int(done[w, pos - 1]) for w in range(3)]
            if bool(written[:3, pos - 1, 3].all()):
                periods.extend(x - y for x, y in zip(d, prev))
                between.extend(x - y for x, y in zip(r, prev))
            order = "".join(str(w) for w in sorted(range(3), key=lambda w: d[w]))
            orders[order] = orders.get(order, 0) + 1
            t0, t1, t2, t3 = (int(prod[pos, j]) for j in range(4))
            if not bool(written[3, pos].all()):
                continue
            empty_waits.append(t1 - t0)
            scale_loads.append(t2 - t1)
            issues.append(t3 - t2)
            leads.append(min(r) - t3)
            # The slot's data landed no later than the first arrival of a
            # warpgroup that waited for it (by more than 40 cycles).
            landed = [x for x, y in zip(a, r) if x - y > 40]
            if landed:
                waited += 1
                latencies.append(min(landed) - t3)
        # Products run one after another on the tensor pipe: each starts at
        # the later of its issue and the previous product's completion; rank
        # it by its issue order within its ring position.
        serial.sort()
        last = 0
        for d_, i_, pos, w in serial:
            if pos > 0:
                rank = sorted(range(3), key=lambda v: int(issued[v, pos])).index(w)
                products[rank].append(d_ - max(i_, last))
            last = d_
        if cta < args.ctas:
            lines += [f"## CTA {cta}: per ring position, each consumer "
                      "warpgroup's ready / data / issue / return, and the "
                      "producer's empty wait / free / issued (cycles from the "
                      "CTA's first stamp)", "",
                      "| position | wg 0 | wg 1 | wg 2 | producer |",
                      "|---|---|---|---|---|"]
            for pos in range(0, 40):
                cells = ["/".join(str(int(rel[w, pos, i])) for i in range(4))
                         for w in range(3)]
                cells.append("/".join(str(int(prod[pos, i])) for i in (0, 1, 3)))
                lines.append(f"| {pos} | " + " | ".join(cells) + " |")
            lines.append("")

    def q(v):
        if not v:
            return "none"
        v = sorted(v)
        return (f"median {statistics.median(v):.0f}, p10 {v[len(v) // 10]}, "
                f"p90 {v[9 * len(v) // 10]}")
    summary = ["## Summary", "", f"- CTAs with stamps: {used}",
               f"- K block period of a warpgroup (wait return to wait "
               f"return): {q(periods)} cycles",
               f"- a warpgroup's issue to its wait's return: {q(waits)} cycles",
               f"- a warpgroup's wait return to its next full wait "
               f"(promotion, release, loop): {q(between)} cycles",
               f"- a warpgroup's full wait (the slot's data): "
               f"{q(data_waits)} cycles",
               f"- ring positions where a warpgroup waited > 40 cycles for "
               f"the data: {waited} of {positions}",
               f"- there, the data's arrival after the producer's issue: "
               f"{q(latencies)} cycles",
               f"- the producer's issue ahead of the first warpgroup's full "
               f"wait: {q(leads)} cycles",
               f"- the producer's empty wait: {q(empty_waits)}; weight scales "
               f"(load and store): {q(scale_loads)}; issue: {q(issues)} cycles",
               "- serial products (start = later of issue and the previous "
               "completion), by issue rank within a position: "
               + "; ".join(f"{r + 1}: {q(v)}" for r, v in products.items()),
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
