#!/usr/bin/env python3
"""Probe (issue 10, NOTES v17): does the DRAM access pattern of an FP8
decode GEMM's weight stream cap its bandwidth? Streams an e4m3-sized
(1-byte) weight matrix W [N, K] the way the decode kernels' CTAs do: P
programs, each owning `rows` consecutive weight rows and walking K in
chunks of `chunk` bytes per row (128: one K block of the FP8 kernels; 256,
512: several K blocks per fetch), summing what it reads so that nothing is
optimised away. Triton (cp.async-style pipelined loads, not TMA): it
measures what DRAM gives each pattern, not a GEMM. Timed with
check_fp8.median_ms (queued launches, L2 flushed); torch.sum over 4 GiB in
the same run as the ceiling.

    python3 bench/probe_weight_stream.py --report out.md
"""
import argparse
import datetime
import os
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "gpu"))
import check_fp8 as c  # noqa: E402


@triton.jit
def stream(w_ptr, out_ptr, K, ROWS: tl.constexpr, CHUNK: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, CHUNK)
    acc = tl.zeros((ROWS, CHUNK), dtype=tl.int32)
    for k0 in range(0, K, CHUNK):
        ptrs = w_ptr + rows[:, None] * K + (k0 + cols)[None, :]
        acc += tl.load(ptrs).to(tl.int32)
    tl.store(out_ptr + pid, tl.sum(acc))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    props = torch.cuda.get_device_properties(0)
    hbm = c.hbm_read_tbs()
    lines = ["# Weight-stream probe (bench/probe_weight_stream.py)", "",
             f"- device: {props.name} ({props.multi_processor_count} SMs), "
             f"torch {torch.__version__}, triton {triton.__version__}",
             f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"- commit: {os.environ.get('GGEMM_COMMIT', 'unknown')}",
             f"- HBM read ceiling in this run: {hbm:.2f} TB/s (torch.sum over "
             "4 GiB of bf16)",
             "- timing: check_fp8.median_ms (queued behind a sleep kernel, L2 "
             "flushed before each launch), median of 20", "",
             "| N x K (bytes) | rows per program | programs | chunk bytes | "
             "num_stages | µs | TB/s | % of HBM read |",
             "|---|---|---|---|---|---|---|---|"]
    for n, k in ((7168, 16384), (4096, 7168)):
        w = torch.randint(-100, 100, (n, k), device="cuda", dtype=torch.int8)
        for rows in (64, 128):
            progs = n // rows
            out = torch.empty(progs, device="cuda", dtype=torch.int32)
            for chunk in (128, 256, 512):
                for stages in (4, 8):
                    if rows * chunk * stages > 160 * 1024:
                        continue

                    def run():
                        stream[(progs,)](w, out, k, ROWS=rows, CHUNK=chunk,
                                         num_stages=stages, num_warps=4)
                    run()
                    torch.cuda.synchronize()
                    expect = w.view(progs, rows * k).sum(1, dtype=torch.int64)
                    if not torch.equal(out.long(), expect):
                        raise AssertionError(f"sum mismatch rows={rows} "
                                             f"chunk={chunk}")
                    [t] = c.median_ms([run])
                    tbs = n * k / t / 1e9
                    lines.append(f"| {n} x {k} | {rows} | {progs} | {chunk} | "
                                 f"{stages} | {t * 1e3:.1f} | {tbs:.2f} | "
                                 f"{100 * tbs / hbm:.0f} |")
                    print(lines[-1], flush=True)
    if args.report:
        args.report.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
