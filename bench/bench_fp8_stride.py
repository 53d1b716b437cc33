#!/usr/bin/env python3
"""Does the weights' row stride cap FP8 decode? (issue 10, NOTES v17's
untested hypothesis.) M = 128, N = 7168, K = 16384 reads its weights at
1.95-2.0 TB/s (65 % of torch.sum's read bandwidth) in every tiling tried,
and so does cuBLAS, while DeepGEMM's masked shapes (rows 7168 bytes apart)
reach 88 %. Its rows are 16 KB apart, a power of two. This times the same
problem with the weight rows 16512 bytes apart, three ways, in one run:

- GGEMM's kernels with K padded by one zero 128-wide block (K = 16512,
  `fp8_pad_*` of bench/gen_fp8_decode_kernels.py; the zero columns leave the
  product unchanged, checked against the same float64 reference), against
  the same tile configs at K = 16384 (`fp8_dense_n7168_k16384_*`);
- cuBLAS block-scaled FP8 on the K = 16384 weights, contiguous and as a
  view into the padded storage (same math, row stride 16512 bytes);
- torch's column sum (dim 0) of the weight bytes viewed as int32, [7168,
  4096] contiguous against [7168, 4128]: a plain stream down the rows.

TB/s counts the weight bytes each launch must read (N x its K).

    python3 bench/bench_fp8_stride.py --bundles .device/bundles_fp8 \\
        --experiments .device/bundles_fp8_decode --report out.md
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

N, K, PAD = 7168, 16384, 128
LABELS = ("m128n64s8", "swap64n64")
ROWS = (1, 16, 64, 128)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, required=True)
    parser.add_argument("--experiments", type=Path, required=True)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--commit", default=os.environ.get("GGEMM_COMMIT",
                                                           "unknown"))
    args = parser.parse_args()
    torch.manual_seed(20261126)
    props = torch.cuda.get_device_properties(0)
    hbm = c.hbm_read_tbs()
    kp = K + PAD
    lines = ["# FP8 decode: the weights' row stride (bench/bench_fp8_stride.py)",
             "", f"- device: {props.name} ({props.multi_processor_count} SMs), "
             f"torch {torch.__version__}",
             f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"- commit: {args.commit}",
             f"- HBM read ceiling, measured in this run: {hbm:.2f} TB/s "
             "(torch.sum over 4 GiB of bf16)",
             "- timing: check_fp8.median_ms (20 rounds, queued behind a sleep "
             "kernel, L2 flushed before each launch, rotated); TB/s = weight "
             "bytes the launch reads / median time",
             f"- N = {N}; row stride {K} bytes (K = {K}) against {kp} bytes "
             f"(K padded to {kp} for GGEMM, a strided view for cuBLAS)", ""]
    failures = 0
    dense = {lab: Kernel(args.experiments / f"fp8_dense_n{N}_k{K}_{lab}_kernel.json")
             for lab in LABELS}
    padded = {lab: Kernel(args.experiments / f"fp8_pad_n{N}_k{kp}_{lab}_kernel.json")
              for lab in LABELS}
    wq, ws = c.weights(1, N, K)
    wd = c.dequant_w(wq, ws)[0]
    wq_p = torch.zeros(1, N, kp, device="cuda", dtype=wq.dtype)
    wq_p[:, :, :K] = wq
    ws_p = torch.ones(1, ws.shape[1], ws.shape[2] + 1, device="cuda")
    ws_p[:, :, :-1] = ws
    w_view = wq_p[0, :, :K]  # row stride kp
    assert w_view.stride() == (kp, 1)

    # The plain stream: column sums of the weight bytes as int32.
    cols = wq.view(torch.int32)[0]
    cols_p = wq_p.view(torch.int32)[0]
    t_cols, t_cols_p = c.median_ms([lambda: cols.sum(0), lambda: cols_p.sum(0)])
    lines += ["## A plain stream down the rows (torch column sum of the bytes as int32)", "",
              "| row stride | µs | TB/s | % of HBM read |", "|---|---|---|---|",
              f"| {K} | {t_cols * 1e3:.1f} | {N * K / t_cols / 1e9:.2f} | "
              f"{100 * N * K / t_cols / 1e9 / hbm:.0f} |",
              f"| {kp} | {t_cols_p * 1e3:.1f} | {N * kp / t_cols_p / 1e9:.2f} | "
              f"{100 * N * kp / t_cols_p / 1e9 / hbm:.0f} |", ""]
    print("\n".join(lines[-6:]), flush=True)

    head = " | ".join(f"{lab} stride {s} µs (TB/s)" for lab in LABELS
                      for s in (K, kp))
    lines += ["## FP8 block-scaled GEMM", "",
              f"| M | {head} | cuBLAS stride {K} µs (TB/s) | cuBLAS stride "
              f"{kp} µs (TB/s) |", "|---|" + "---|" * (2 * len(LABELS) + 2)]
    for m in ROWS:
        x = torch.randn(m, K, device="cuda", dtype=torch.bfloat16)
        xq, xs = c.quantize_rows(x)
        xs_mn = c.mn_major(xs)
        xq_p = torch.zeros(m, kp, device="cuda", dtype=xq.dtype)
        xq_p[:, :K] = xq
        xs_p = c.mn_major(torch.cat([xs, torch.ones(m, 1, device="cuda")], 1))
        ref = c.dequant_rows(xq, xs, K) @ wd.t()
        indptr = torch.tensor([0, m], dtype=torch.int32, device="cuda")
        y = torch.empty(m, N, device="cuda", dtype=torch.bfloat16)
        # One cell per column: a timed function, or the reason there is none
        # (a cuBLAS stride it refused keeps its own column).
        fns, notes, nbytes, cells_at = [], [], [], []
        for lab in LABELS:
            for kern, kw in ((dense[lab], dict(x=xq, w=wq, x_scale=xs_mn,
                                                w_scale=ws)),
                             (padded[lab], dict(x=xq_p, w=wq_p, x_scale=xs_p,
                                                w_scale=ws_p))):
                def run(kern=kern, kw=kw):
                    kern(seg_indptr=indptr, y=y, **kw)
                y.fill_(float("nan"))
                run()
                torch.cuda.synchronize()
                diff = c.calc_diff(y, ref)
                ok = diff < 1e-3 and not torch.isnan(y).any()
                failures += not ok
                notes.append("" if ok else f" FAIL calc_diff {diff:.1e}")
                fns.append(run)
                cells_at.append(len(fns) - 1)
                nbytes.append(N * kw["w"].shape[2])
        for w in (wq[0], w_view):
            label, peer, errors = c.first_peer(c.blockwise_peers(xq, xs_mn, w,
                                                                 ws[0]))
            if peer:
                out = peer()
                diff = c.calc_diff(out, ref)
                notes.append("" if diff < 1e-3 else f" FAIL calc_diff {diff:.1e}")
                fns.append(peer)
                cells_at.append(len(fns) - 1)
                nbytes.append(N * K)
            else:
                cells_at.append("unavailable: " + "; ".join(errors)[:80])
        times = c.median_ms(fns)
        timed = [f"{t * 1e3:.1f} ({b / t / 1e9:.2f}){note}"
                 for t, b, note in zip(times, nbytes, notes)]
        cells = [timed[at] if isinstance(at, int) else at for at in cells_at]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    summary = (f"fp8-stride: {failures} check failures; see the tables for "
               "the stride's effect")
    lines += ["", summary]
    print(summary, flush=True)
    if args.report:
        args.report.write_text("\n".join(lines) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
