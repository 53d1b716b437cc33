#!/usr/bin/env python3
"""Clocks and power under load (issues 10 and 11): for each shape, GGEMM's
kernel and its peer each run back to back for `--seconds` while a
background `nvidia-smi` samples the SM clock, the board power and the
clock-event (throttle) reasons; the table gives each side's throughput, its
median clock and power over the window (the first 0.3 s left out), and the
work it did per SM and clock against the tensor cores' per-clock peak.

Why: on the large bf16 shapes GGEMM and torch._grouped_mm (CUTLASS) keep
the tensor pipe about equally busy (NOTES v11, v19), and the issue asks
for 5 % more. If both run at the board's power limit, the clock is what
the power allows, and throughput per clock is the figure left to win.

bf16: the default 128x256 kernel (bench_throughput.KERNEL) against
torch._grouped_mm on bench_throughput's 15 shapes, and cuBLAS's dense
8192^3 on random and on all-zero inputs (the same product, less switching
power). FP8 (when its bundles are given): the select-config kernels of
check_fp8's large shapes against cuBLAS block-scaled (one call, or one per
group). Every GGEMM result is checked first (bf16: relative error < 1e-2
against torch._grouped_mm; FP8: calc_diff < 1e-3 against the dequantised
product); a failing shape is reported and not timed.

Per-clock peaks (the vendor's dense rates at the 1830 MHz boost clock over
132 SMs): 4096 bf16 and 8192 FP8 flops per SM and clock.

Example (on the GPU machine):
    python3 bench/probe_clocks.py --bundles .device/bundles \
        --fp8-bundles .device/bundles_fp8 --report clocks.md
"""
import argparse
import datetime
import itertools
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "test" / "gpu"))
import bench_e2e  # noqa: E402
import bench_throughput  # noqa: E402
from ggemm.runtime import Kernel  # noqa: E402

PEAK_PER_SM_CLOCK = {"bf16": 4096, "fp8": 8192}
# NVML's clock-event reason bits (nvmlClocksEventReasons).
REASONS = {0x1: "idle", 0x2: "app clocks", 0x4: "power cap",
           0x8: "hw slowdown", 0x20: "sw thermal", 0x40: "hw thermal",
           0x80: "power brake"}


class Sampler:
    """nvidia-smi in loop mode; each line is stamped with the host's
    monotonic clock when it arrives."""

    def __init__(self, period_ms: int):
        self.samples = []
        # Drivers before 535 name the reasons clocks_throttle_reasons.
        reasons = "clocks_event_reasons.active"
        try:
            query(reasons)
        except subprocess.CalledProcessError:
            reasons = "clocks_throttle_reasons.active"
        fields = f"clocks.sm,power.draw,{reasons},temperature.gpu"
        self.proc = subprocess.Popen(
            ["nvidia-smi", f"--query-gpu={fields}",
             "--format=csv,noheader,nounits", f"--loop-ms={period_ms}"],
            stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            parts = [p.strip() for p in line.split(",")]
            try:
                clock, power = float(parts[0]), float(parts[1])
                reasons, temp = int(parts[2], 16), float(parts[3])
            except (ValueError, IndexError):
                continue
            self.samples.append((time.monotonic(), clock, power, reasons, temp))

    def window(self, t0: float, t1: float):
        return [s for s in self.samples if t0 <= s[0] <= t1]

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def query(field: str) -> str:
    out = subprocess.run(["nvidia-smi", f"--query-gpu={field}",
                          "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[0]


def run_window(fn, seconds: float, sampler: Sampler, skip: float = 0.3):
    """Launch fn back to back for `seconds` (the queue kept about 40 launches
    deep); returns ms per launch and the samples' medians."""
    fn()
    torch.cuda.synchronize()
    marks = []
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    t0 = time.monotonic()
    start.record()
    launches = 0
    while time.monotonic() - t0 < seconds:
        for _ in range(20):
            fn()
        launches += 20
        mark = torch.cuda.Event()
        mark.record()
        marks.append(mark)
        if len(marks) > 2:
            marks.pop(0).synchronize()
    end.record()
    end.synchronize()
    t1 = time.monotonic()
    ms = start.elapsed_time(end) / launches
    window = sampler.window(t0 + skip, t1)
    if not window:
        return ms, None
    reasons = 0
    for s in window:
        reasons |= s[3]
    return ms, {
        "clock": statistics.median(s[1] for s in window),
        "power": statistics.median(s[2] for s in window),
        "temp": max(s[4] for s in window),
        "reasons": reasons,
        "samples": len(window),
    }


def reason_text(bits: int) -> str:
    names = [name for bit, name in REASONS.items() if bits & bit]
    return ", ".join(names) if names else "none"


def row(label, who, kind, flops, ms, stats, sms):
    tflops = flops / ms / 1e9
    if stats is None:
        return (f"| {label} | {who} | {ms:.3f} | {tflops:.0f} | - | - | - | - | - |", tflops, None)
    per_clock = flops / (ms * 1e-3) / (sms * stats["clock"] * 1e6)
    share = per_clock / PEAK_PER_SM_CLOCK[kind]
    return (f"| {label} | {who} | {ms:.3f} | {tflops:.0f} | {stats['clock']:.0f} | "
            f"{stats['power']:.0f} | {per_clock:.0f} ({share * 100:.1f} %) | "
            f"{reason_text(stats['reasons'])} | {stats['temp']:.0f} |", tflops, share)


def wanted(label: str, only: str) -> bool:
    """Whether `label` contains one of the comma-separated substrings of
    `only` (every label when it is empty)."""
    return any(part in label for part in only.split(","))


def bf16_cases(bundles: Path, rng: random.Random, only: str):
    kernel = Kernel(bundles / f"{bench_throughput.KERNEL}.json")
    for label, lengths, n, k in bench_throughput.shapes(rng):
        if not wanted(label, only):
            continue
        m = sum(lengths)
        x, w, indptr, offs, ref = bench_e2e.segment_inputs(lengths, n, k)
        y = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        kernel(x=x, w=w, y=y, seg_indptr=indptr)
        torch.cuda.synchronize()
        err = ((y.float() - ref.float()).norm() / ref.float().norm()).item()
        yield (label, "bf16", 2.0 * m * n * k, err, err < 1e-2,
               lambda: kernel(x=x, w=w, y=y, seg_indptr=indptr),
               lambda: torch._grouped_mm(x, w.transpose(-2, -1), offs=offs),
               "torch._grouped_mm")


def fp8_cases(bundles: Path, only: str):
    import check_fp8  # test/gpu: quantisation and the cuBLAS peers
    shapes = [("dense", 1, 4096, 7168, 16384), ("dense", 1, 4096, 4096, 7168),
              ("grouped", 4, 8192, 4096, 7168), ("grouped", 8, 4096, 4096, 7168),
              # Weights of 37 and 44 MB a group: select-config's bands
              # (bench/NOTES.md v38).
              ("dense", 1, 4096, 24576, 1536), ("grouped", 4, 8192, 6144, 7168)]
    for kind, g, rows, n, k in shapes:
        m = g * rows
        label = f"FP8 {kind} G={g} M={m} N={n} K={k}"
        if not wanted(label, only):
            continue
        name = (f"fp8_dense_n{n}_k{k}_kernel" if kind == "dense" else
                f"fp8_seg_n{n}_k{k}_kernel")
        if not (bundles / f"{name}.json").exists():
            name = f"fp8_seg_n{n}_k{k}_kernel"
        if not (bundles / f"{name}.json").exists():
            continue
        kern = Kernel(bundles / f"{name}.json")
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        xq, xs = check_fp8.quantize_rows(x)
        wq, ws = check_fp8.weights(g, n, k)
        xs_mn = check_fp8.mn_major(xs)
        offsets = torch.arange(0, m + 1, rows, dtype=torch.int32, device="cuda")
        y = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        kern(x=xq, w=wq, x_scale=xs_mn, w_scale=ws, seg_indptr=offsets, y=y)
        torch.cuda.synchronize()
        # The reference on each group's first and last 128 rows (a float64
        # product of the whole shape would take tens of seconds; check_fp8
        # checks these kernels in full).
        diff = 0.0
        for gi in range(g):
            w64 = check_fp8.dequant_w(wq[gi:gi + 1], ws[gi:gi + 1])[0]
            for start in (gi * rows, (gi + 1) * rows - 128):
                rs = slice(start, start + 128)
                ref = check_fp8.dequant_rows(xq[rs], xs[rs], k) @ w64.t()
                diff = max(diff, check_fp8.calc_diff(y[rs], ref))
            del w64
        fns = []
        for gi in range(g):
            rs = slice(gi * rows, (gi + 1) * rows)
            _, fn, _ = check_fp8.first_peer(check_fp8.blockwise_peers(
                xq[rs], check_fp8.mn_major(xs[rs]), wq[gi], ws[gi]))
            fns.append(fn)
        peer = None if any(f is None for f in fns) else (lambda fns=fns: [f() for f in fns])
        yield (label, "fp8", 2.0 * m * n * k, diff, diff < 1e-3,
               lambda kern=kern, xq=xq, wq=wq, xs_mn=xs_mn, ws=ws, offsets=offsets, y=y:
               kern(x=xq, w=wq, x_scale=xs_mn, w_scale=ws, seg_indptr=offsets, y=y),
               peer, "cuBLAS block-scaled" + (" per group" if g > 1 else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, required=True)
    parser.add_argument("--fp8-bundles", type=Path)
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--period-ms", type=int, default=20)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--only", default="", help="shape labels to keep: comma-separated substrings, any of them")
    parser.add_argument("--report", type=Path)
    parser.add_argument("--commit", default=os.environ.get("GGEMM_COMMIT", "unknown"))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    header = {f: query(f) for f in ("name", "power.limit", "clocks.max.sm",
                                    "driver_version")}
    sampler = Sampler(args.period_ms)
    bench_throughput.warm_up()
    lines = [
        "# Clocks and power under load: GGEMM against its peers",
        "",
        f"- device: {props.name} ({sms} SMs), torch {torch.__version__}, "
        f"driver {header['driver_version']}, power limit {header['power.limit']} W, "
        f"max SM clock {header['clocks.max.sm']} MHz",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- commit: {args.commit}",
        f"- script: bench/probe_clocks.py --seconds {args.seconds} --period-ms "
        f"{args.period_ms} --seed {args.seed}"
        + (f" --only '{args.only}'" if args.only else "")
        + " (each side launched back to back for the window; ms per launch from "
        "CUDA events over the window; clock and power: medians of nvidia-smi "
        "samples after the first 0.3 s; per clock: flops per SM and SM clock, "
        "with its share of the per-clock peak, 4096 bf16 / 8192 FP8; reasons: "
        "every clock-event reason seen in the window; temp: the window's max, C)",
        "",
        "| shape | who | ms | TFLOP/s | SM MHz | W | flops / SM / clock | reasons | temp |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    failures, compared = 0, []

    def emit(text):
        print(text, flush=True)
        lines.append(text)

    for zeros in (False, True):
        a = (torch.zeros if zeros else torch.randn)(8192, 8192, device="cuda",
                                                    dtype=torch.bfloat16)
        ms, stats = run_window(lambda a=a: a @ a, args.seconds, sampler)
        emit(row(f"dense 8192^3 ({'zeros' if zeros else 'random'})",
                 "cuBLAS bf16", "bf16", 2.0 * 8192 ** 3, ms, stats, sms)[0])
        del a
    # Lazily: each shape's tensors live only while it is timed.
    cases = bf16_cases(args.bundles, rng, args.only)
    if args.fp8_bundles:
        cases = itertools.chain(cases, fp8_cases(args.fp8_bundles, args.only))
    for label, kind, flops, err, ok, ours, peer, peer_name in cases:
        if not ok:
            failures += 1
            emit(f"| {label} | GGEMM | FAIL (error {err:.2e}) | | | | | | |")
            continue
        ms, stats = run_window(ours, args.seconds, sampler)
        text, tf_ours, share_ours = row(label, "GGEMM", kind, flops, ms, stats, sms)
        emit(text)
        if peer is None:
            continue
        ms_p, stats_p = run_window(peer, args.seconds, sampler)
        text, tf_peer, share_peer = row(label, peer_name, kind, flops, ms_p,
                                        stats_p, sms)
        emit(text)
        if stats and stats_p:
            compared.append((label, tf_ours / tf_peer,
                             stats["clock"] / stats_p["clock"],
                             share_ours / share_peer))
    sampler.stop()
    lines += ["", "| shape | throughput ours / peer | clock ours / peer | per clock ours / peer |",
              "|---|---|---|---|"]
    for label, r, c, p in compared:
        lines.append(f"| {label} | {r:.3f} | {c:.3f} | {p:.3f} |")
        print(f"{label:60s} throughput {r:.3f} clock {c:.3f} per-clock {p:.3f}")
    summary = (f"clock-probe: {len(compared)} shapes compared, {failures} failed; "
               + (f"ours/peer throughput {min(c[1] for c in compared):.3f}-"
                  f"{max(c[1] for c in compared):.3f}, clock "
                  f"{min(c[2] for c in compared):.3f}-{max(c[2] for c in compared):.3f}"
                  if compared else "nothing compared"))
    print(summary, flush=True)
    lines += ["", summary, ""]
    if args.report:
        args.report.write_text("\n".join(lines))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
