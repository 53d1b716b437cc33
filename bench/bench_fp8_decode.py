#!/usr/bin/env python3
"""FP8 decode tiles (issue 10: M <= 128 at >= 85 % of the HBM read
bandwidth on the weight bytes): the dense FP8 one-weight kernels of
check_fp8.py (`fp8_dense_n{n}_k{k}`, select-config's tiles) against the same
problems compiled with explicit tile configs (bench/gen_fp8_decode_kernels.py)
and cuBLAS block-scaled FP8, in one run. Each kernel is checked first (fresh
inputs, y poisoned with NaN, DeepGEMM's calc_diff < 1e-3 against the float64
product of the dequantised operands); timings use check_fp8.median_ms
(launches queued behind a sleep kernel, L2 flushed before each).

    python3 bench/bench_fp8_decode.py --bundles .device/bundles_fp8 \\
        --experiments .device/bundles_fp8_decode [--baseline DIR] --report out.md
"""
import argparse
import datetime
import os
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "test" / "gpu"))
from ggemm.runtime import Kernel  # noqa: E402
import check_fp8 as c  # noqa: E402

SHAPES = [(7168, 16384), (4096, 7168), (2112, 7168), (7168, 2048),
          (576, 7168), (24576, 1536), (32768, 512)]
ROWS = (1, 16, 64, 128)


def split_k_table(bundles: Path, experiments: Path, hbm: float,
                  strided: bool = False) -> list:
    """Split-K, emulated: the S K-slices of each dense problem as one
    batched FP8 matmul (`fp8_splitk_*`, 128x128 tiles, S x N / 128 CTAs),
    timed against the dense kernel in the same rounds. The partial products
    (bf16 here, f32 in a real split-K) are checked by their sum and not
    reduced in the timing: the table bounds what a split-K main loop with
    wide weight tiles would reach. With `strided` the weight slices are
    strided views of the dense weights (each row's S pieces K / S bytes
    apart, as a split-K kernel reads them) instead of contiguous copies."""
    lines = ["", "## Split-K, emulated (main loop only, no reduction"
             + ("; strided slices" if strided else "") + ")", "",
             "| shape | S | CTAs | dense kernel µs (TB/s) | S slices µs (TB/s) "
             "| % of HBM read | partial bytes (f32) MB | check |",
             "|---|---|---|---|---|---|---|---|"]
    for n, k in SHAPES:
        paths = sorted(experiments.glob(f"fp8_splitk_n{n}_k{k}_s*_kernel.json"))
        dense_path = bundles / f"fp8_dense_n{n}_k{k}_kernel.json"
        if not paths or not dense_path.exists():
            continue
        split = int(paths[0].stem.split("_s")[-1].split("_")[0])
        kern, dense = Kernel(paths[0]), Kernel(dense_path)
        ks, kbs = k // split, k // split // 128
        wq, ws = c.weights(1, n, k)
        wd = c.dequant_w(wq, ws)[0]
        w3 = wq[0].view(n, split, ks).permute(1, 0, 2)
        w3 = w3 if strided else w3.contiguous()
        ws3 = ws[0].view(-1, split, kbs).permute(1, 0, 2).contiguous()
        for m in (16, 128):
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            xq, xs = c.quantize_rows(x)
            xs_mn = c.mn_major(xs)
            # (The runtime wants a batched x packed: its slices stay copies.)
            x3 = xq.view(m, split, ks).permute(1, 0, 2).contiguous()
            # MN-major over all S x M rows (the runtime wants the groups'
            # rows back to back).
            rows = xs.view(m, split, kbs).permute(1, 0, 2).reshape(split * m,
                                                                   kbs)
            xs3 = rows.t().contiguous().t().view(split, m, kbs)
            indptr = torch.tensor([0, m], dtype=torch.int32, device="cuda")
            y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            y3 = torch.empty(split, m, n, device="cuda", dtype=torch.bfloat16)

            def run_split():
                kern(x=x3, w=w3, x_scale=xs3, w_scale=ws3, y=y3)

            def run_dense():
                dense(x=xq, w=wq, x_scale=xs_mn, w_scale=ws,
                      seg_indptr=indptr, y=y)
            y3.fill_(float("nan"))
            run_split()
            torch.cuda.synchronize()
            ref = c.dequant_rows(xq, xs, k) @ wd.t()
            diff = c.calc_diff(y3.double().sum(0), ref)
            ok = diff < 1e-3
            t_dense, t_split = c.median_ms([run_dense, run_split])
            tb = n * k / 1e9
            ctas = split * -(-n // 128) * -(-m // 128)
            lines.append(
                f"| M={m} N={n} K={k} | {split} | {ctas} | {t_dense * 1e3:.1f} "
                f"({tb / t_dense:.2f}) | {t_split * 1e3:.1f} "
                f"({tb / t_split:.2f}) | {100 * tb / t_split / hbm:.0f} | "
                f"{split * m * n * 4 / 1e6:.1f} | "
                f"{'ok' if ok else 'FAIL'} calc_diff {diff:.1e} |")
            print(lines[-1], flush=True)
    return lines


def flush_control(hbm: float) -> list:
    """torch.sum over buffers of the decode shapes' weight bytes, timed after
    each way of evicting L2 (check_fp8.median_ms's `flush`): what a plain
    read of that many bytes reaches when the launch before it left L2 dirty
    (write), clean (read) or holding the buffer (none)."""
    lines = ["## L2 eviction control: torch.sum over the weight bytes", "",
             "| bytes MB | after a write µs (TB/s) | after a read µs (TB/s) "
             "| no eviction µs (TB/s) |", "|---|---|---|---|"]
    for n, k in SHAPES:
        buf = torch.zeros(n * k // 2, device="cuda", dtype=torch.bfloat16)
        cells = []
        for flush in ("write", "read", "none"):
            [t] = c.median_ms([buf.sum], flush=flush)
            cells.append(f"{t * 1e3:.1f} ({n * k / t / 1e9:.2f})")
        lines.append(f"| {n * k / 1e6:.1f} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
        del buf
    return lines + [""]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, required=True)
    parser.add_argument("--experiments", type=Path, required=True)
    parser.add_argument("--baseline", type=Path,
                        help="bundles of an earlier commit whose dense "
                        "kernels are timed in the same rounds (column "
                        "'was<COMMIT>')")
    parser.add_argument("--report", type=Path)
    parser.add_argument("--split-strided", action="store_true",
                        help="time the emulated split-K again on strided "
                        "views of the dense weights (the memory a split-K "
                        "kernel reads)")
    parser.add_argument("--flush", choices=("write", "read"),
                        default=c.FLUSH,
                        help="how L2 is evicted before each timed launch "
                        "(check_fp8.FLUSH; default %(default)s)")
    parser.add_argument("--commit", default=os.environ.get("GGEMM_COMMIT",
                                                           "unknown"))
    args = parser.parse_args()
    c.FLUSH = args.flush
    torch.manual_seed(20261126)
    props = torch.cuda.get_device_properties(0)
    hbm = c.hbm_read_tbs()
    lines = ["# FP8 decode tiles (bench/bench_fp8_decode.py)", "",
             f"- device: {props.name} ({props.multi_processor_count} SMs), "
             f"torch {torch.__version__}",
             f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"- commit: {args.commit} (experiments: "
             f"{(args.experiments / 'COMMIT').read_text().strip()})",
             f"- HBM read ceiling, measured in this run: {hbm:.2f} TB/s "
             "(torch.sum over 4 GiB of bf16)",
             "- timing: check_fp8.median_ms, 20 interleaved rounds, launches "
             f"queued behind a sleep kernel, L2 evicted before each by a "
             f"{args.flush} of {c.FLUSH_BYTES >> 20} MB (check_fp8.FLUSH); "
             "TB/s = weight bytes / median time", ""]
    lines += flush_control(hbm)
    failures = 0
    best_share = []
    header = None
    for n, k in SHAPES:
        default = f"fp8_dense_n{n}_k{k}_kernel"
        names = [("select-config", args.bundles / f"{default}.json")]
        names += [(p.stem.replace(f"fp8_dense_n{n}_k{k}_", "")
                   .replace("_kernel", ""), p)
                  for p in sorted(args.experiments.glob(
                      f"fp8_dense_n{n}_k{k}_*_kernel.json"))]
        if args.baseline:
            tag = (args.baseline / "COMMIT").read_text().strip() if (
                args.baseline / "COMMIT").exists() else "baseline"
            names.append((f"was{tag}", args.baseline / f"{default}.json"))
        kernels = [(label, Kernel(path)) for label, path in names
                   if path.exists()]
        # A table per set of kernels: the experiments differ by shape.
        labels = [label for label, _ in kernels]
        if labels != header:
            lines += ["", "| shape | " + " | ".join(f"{x} µs (TB/s)"
                                                     for x in labels)
                      + " | cuBLAS µs (TB/s) | best | best % of HBM read |",
                      "|---|" + "---|" * (len(labels) + 3)]
            header = labels
        wq, ws = c.weights(1, n, k)
        wd = c.dequant_w(wq, ws)[0]
        for m in ROWS:
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            xq, xs = c.quantize_rows(x)
            xs_mn = c.mn_major(xs)
            ref = c.dequant_rows(xq, xs, k) @ wd.t()
            indptr = torch.tensor([0, m], dtype=torch.int32, device="cuda")
            y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            fns, notes = [], []
            for label, kern in kernels:
                def run(kern=kern):
                    kern(x=xq, w=wq, x_scale=xs_mn, w_scale=ws,
                         seg_indptr=indptr, y=y)
                y.fill_(float("nan"))
                run()
                torch.cuda.synchronize()
                diff = c.calc_diff(y, ref)
                ok = diff < 1e-3 and not torch.isnan(y).any()
                failures += not ok
                notes.append("" if ok else f" FAIL calc_diff {diff:.1e}")
                fns.append(run)
            label, peer, _ = c.first_peer(c.blockwise_peers(xq, xs_mn, wq[0],
                                                            ws[0]))
            timed = fns + ([peer] if peer else [])
            times = c.median_ms(timed)
            wbytes = n * k
            tbs = [wbytes / t / 1e9 for t in times]
            best = max(range(len(fns)), key=lambda i: tbs[i])
            best_share.append(tbs[best] / hbm)
            cells = [f"{t * 1e3:.1f} ({b:.2f}){note}"
                     for t, b, note in zip(times, tbs, notes)]
            cells.append(f"{times[-1] * 1e3:.1f} ({tbs[-1]:.2f})" if peer
                         else "unavailable")
            lines.append(f"| M={m} N={n} K={k} | " + " | ".join(cells)
                         + f" | {kernels[best][0]} | "
                         f"{100 * tbs[best] / hbm:.0f} |")
            print(lines[-1], flush=True)
    lines += split_k_table(args.bundles, args.experiments, hbm)
    if args.split_strided:
        lines += split_k_table(args.bundles, args.experiments, hbm,
                               strided=True)
    summary = (f"fp8-decode-tiles: best share of HBM read bandwidth "
               f"{100 * min(best_share):.0f}-{100 * max(best_share):.0f} % "
               f"over {len(best_share)} shapes, {failures} check failures")
    lines += ["", summary]
    print(summary, flush=True)
    if args.report:
        args.report.write_text("\n".join(lines) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
