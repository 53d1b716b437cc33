#!/usr/bin/env python3
"""Programmatic dependent launch (bench/NOTES.md v29): FP8 decode products
launched back to back, as a model's layers are, with and without
`dependent_launch` (the default of `ggemm-to-ptx` since v29; the baseline
bundle is the same kernels compiled with `dependent-launch=false`).

A chain is `--chain` launches of one dense kernel (`fp8_dense_n{n}_k{k}`)
in a row, each on its own copy of the weights (enough copies that together
they are three times the L2, so each launch reads its weights from HBM as a
layer does), with nothing between the launches; it is timed as a whole by
check_fp8.median_ms (one event pair around the chain: an event recorded
between two launches would keep them apart) and reported per launch,
beside a chain of plain reads of the same weight bytes (torch.sum).

Checks first, on both bundles: each kernel against the product of the
dequantised operands (DeepGEMM's calc_diff < 1e-3, y poisoned with NaN),
then a chain in which every launch reads x and its scales right after
torch kernels wrote them (a new x each time) and writes a y of its own: a
kernel that read before the copy finished would compute with the previous
x, which the check against each launch's own reference catches.

    python3 bench/bench_pdl.py --bundles .device/bundles_fp8 \\
        --baseline .device/bundles_fp8_nopdl --report out.md

The baseline, on the CPU machine:

    for f in test/gpu/kernels_fp8/fp8_dense_n*_k*.mlir; do
      gemm-opt $f --ggemm-to-ptx="chip=sm_90a format=bin \\
        dependent-launch=false bundle-dir=.device/bundles_fp8_nopdl" \\
        -o /dev/null; done
"""
import argparse
import datetime
import json
import os
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "test" / "gpu"))
from ggemm.runtime import Kernel  # noqa: E402
import check_fp8 as c  # noqa: E402

SHAPES = [(2112, 7168), (7168, 2048), (4096, 7168), (7168, 16384), (576, 7168),
          (24576, 1536), (32768, 512)]
ROWS = (1, 128)
L2_BYTES = 50 << 20


def dependent(path: Path) -> bool:
    """Whether a bundle's kernels ask for programmatic dependent launch."""
    manifest = json.loads(path.read_text())
    kernels = manifest.get("variants", [manifest])
    return all(k.get("dependent_launch", False) for k in kernels)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, required=True)
    parser.add_argument("--baseline", type=Path, required=True,
                        help="the same kernels without dependent_launch")
    parser.add_argument("--also", type=Path, action="append", default=[],
                        help="other bundles of the same kernels, timed in the "
                        "same rounds (a column each, named by their COMMIT); "
                        "not checked")
    parser.add_argument("--chain", type=int, default=16)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--commit", default=os.environ.get("GGEMM_COMMIT",
                                                           "unknown"))
    args = parser.parse_args()
    if args.chain < 2:
        parser.error(f"--chain must be at least 2, got {args.chain}")
    torch.manual_seed(20261127)
    props = torch.cuda.get_device_properties(0)
    base_commit = ((args.baseline / "COMMIT").read_text().strip()
                   if (args.baseline / "COMMIT").exists() else "unknown")
    lines = ["# Programmatic dependent launch: FP8 decode launches back to "
             "back (bench/bench_pdl.py)", "",
             f"- device: {props.name} ({props.multi_processor_count} SMs), "
             f"torch {torch.__version__}",
             f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"- commit: {args.commit} (with dependent_launch: "
             f"{args.bundles}; without: {args.baseline}, {base_commit})",
             f"- a chain: {args.chain} launches in a row, each on its own "
             "weight copy (copies x weight bytes >= 3 x 50 MB of L2), timed "
             "as a whole by check_fp8.median_ms (20 interleaved rounds behind "
             "a sleep kernel, L2 evicted before each chain); per launch = "
             "chain time / launches", ""]
    failures = 0
    rows_out = []
    for n, k in SHAPES:
        name = f"fp8_dense_n{n}_k{k}_kernel.json"
        paths = {"pdl": args.bundles / name, "nopdl": args.baseline / name}
        if not all(p.exists() for p in paths.values()):
            lines.append(f"- {name}: missing from a bundle, skipped")
            continue
        flags = {key: dependent(p) for key, p in paths.items()}
        if not flags["pdl"] or flags["nopdl"]:
            lines.append(f"- {name}: dependent_launch is {flags['pdl']} in "
                         f"--bundles and {flags['nopdl']} in --baseline; "
                         "expected true and false")
            failures += 1
            continue
        kernels = {key: Kernel(p) for key, p in paths.items()}
        wbytes = n * k
        copies = max(2, -(-3 * L2_BYTES // wbytes))
        weights = [c.weights(1, n, k) for _ in range(copies)]
        wds = [c.dequant_w(wq, ws)[0] for wq, ws in weights]
        for m in ROWS:
            indptr = torch.tensor([0, m], dtype=torch.int32, device="cuda")
            xs_list = []
            for _ in range(2):
                xq, xs = c.quantize_rows(torch.randn(m, k, device="cuda",
                                                     dtype=torch.bfloat16))
                xs_list.append((xq, c.mn_major(xs), c.dequant_rows(xq, xs, k),
                                xs))
            refs = {}

            def ref(v, w):
                if (v, w) not in refs:
                    refs[(v, w)] = xs_list[v][2] @ wds[w].t()
                return refs[(v, w)]

            ys = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
                  for _ in range(args.chain)]
            notes = []
            for key, kern in kernels.items():
                # One launch.
                xq, xs_mn = xs_list[0][:2]
                ys[0].fill_(float("nan"))
                kern(x=xq, w=weights[0][0], x_scale=xs_mn,
                     w_scale=weights[0][1], seg_indptr=indptr, y=ys[0])
                torch.cuda.synchronize()
                diff = c.calc_diff(ys[0], ref(0, 0))
                bad = diff >= 1e-3 or bool(torch.isnan(ys[0]).any())
                # A chain of copy-then-launch: each launch must see its x.
                x_buf = torch.empty_like(xs_list[0][0])
                # MN-major, TMA-aligned like the scales it receives
                # (empty_like would make a dense row-major copy).
                s_buf = c.mn_major(xs_list[0][3])
                for y in ys:
                    y.fill_(float("nan"))
                for i in range(args.chain):
                    v, w = i % 2, i % copies
                    # Elementwise kernels (a copy_ could be a memcpy,
                    # not a kernel before ours).
                    torch.bitwise_or(xs_list[v][0].view(torch.uint8), 0,
                                     out=x_buf.view(torch.uint8))
                    torch.mul(xs_list[v][1], 1.0, out=s_buf)
                    kern(x=x_buf, w=weights[w][0], x_scale=s_buf,
                         w_scale=weights[w][1], seg_indptr=indptr, y=ys[i])
                torch.cuda.synchronize()
                worst = max(c.calc_diff(ys[i], ref(i % 2, i % copies))
                            for i in range(args.chain))
                nan = any(bool(torch.isnan(y).any()) for y in ys)
                bad = bad or worst >= 1e-3 or nan
                failures += bad
                notes.append(f"{key} {'FAIL' if bad else 'ok'} "
                             f"({diff:.1e}, chain {worst:.1e})")

            def chain(kern):
                def run():
                    xq, xs_mn = xs_list[0][:2]
                    for i in range(args.chain):
                        wq, ws = weights[i % copies]
                        kern(x=xq, w=wq, x_scale=xs_mn, w_scale=ws,
                             seg_indptr=indptr, y=ys[i])
                return run

            plain = [torch.zeros(wbytes // 2, device="cuda",
                                 dtype=torch.bfloat16) for _ in range(copies)]

            def plain_chain():
                for i in range(args.chain):
                    plain[i % copies].sum()

            others = [Kernel(d / name) for d in args.also
                      if (d / name).exists()]
            t_pdl, t_nopdl, t_plain, *t_also = c.median_ms(
                [chain(kernels["pdl"]), chain(kernels["nopdl"]), plain_chain]
                + [chain(kern) for kern in others])
            del plain
            per = [t * 1e3 / args.chain for t in (t_pdl, t_nopdl, t_plain)]
            also = [t * 1e3 / args.chain for t in t_also]
            rows_out.append((f"N={n} K={k} M={m}", wbytes, copies, per,
                             "; ".join(notes), also))
    also_names = [((d / "COMMIT").read_text().strip()
                   if (d / "COMMIT").exists() else str(d)) for d in args.also]
    lines += ["| shape | weight MB | copies | with µs/launch (TB/s) | without "
              "µs/launch (TB/s) | without / with | plain read µs (TB/s) | "
              "with, % of plain read | "
              + "".join(f"{a} µs/launch, over with | " for a in also_names)
              + "checks (calc_diff: one launch, worst of the chain) |",
              "|---|---|---|---|---|---|---|---|" + "---|" * len(also_names)
              + "---|"]
    ratios = []
    for shape, wbytes, copies, (a, b, p), note, also in rows_out:
        tbs = lambda us: wbytes / us / 1e6  # noqa: E731
        ratios.append(b / a)
        lines.append(f"| {shape} | {wbytes / 1e6:.1f} | {copies} | "
                     f"{a:.1f} ({tbs(a):.2f}) | {b:.1f} ({tbs(b):.2f}) | "
                     f"{b / a:.3f} | {p:.1f} ({tbs(p):.2f}) | "
                     f"{100 * p / a:.0f} | "
                     + "".join(f"{t:.1f}, {t / a:.3f} | " for t in also)
                     + f"{note} |")
    lines += ["", f"pdl-check: {2 * len(rows_out) - failures} passed, "
              f"{failures} failed"]
    if ratios:
        lines.append(f"pdl-bench: time without / with dependent launch "
                     f"{min(ratios):.3f}-{max(ratios):.3f} over "
                     f"{len(ratios)} chains")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.report:
        args.report.write_text(text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
