#!/usr/bin/env python3
"""Summarises an ncu source-page CSV (warp-stall samples per SASS
instruction, as test/gpu/run_on_device.sh's profile-fp8 step writes it,
xz-compressed or not): the instructions with the most samples and their
main stall reasons, and the share of the samples in the consumers' K loop
(from the first QGMMA/HGMMA's loop head to its back branch).

    python3 bench/ncu_source_summary.py fp8-source.csv.xz [--top 16]
"""
import argparse
import csv
import io
import lzma
import sys


def read_rows(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        text = f.read()
    rows = list(csv.reader(io.StringIO(text)))
    # The first row names the kernel, the second is the header.
    return rows[0], rows[1], rows[2:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--top", type=int, default=16)
    args = parser.parse_args()
    kernel, header, data = read_rows(args.csv)
    samples = header.index("Warp Stall Sampling (All Samples)")
    source = header.index("Source")
    executed = header.index("Instructions Executed")
    reasons = [c for c in header
               if c.startswith("stall_") and "Not Issued" not in c]

    def count(row, column):
        value = row[column]
        return int(value) if value.isdigit() else 0

    total = sum(count(r, samples) for r in data)
    print(f"kernel: {kernel[1] if len(kernel) > 1 else kernel}")
    print(f"samples: {total}, SASS instructions: {len(data)}")
    print()
    print("| address | share | executed | instruction | main stall reasons |")
    print("|---|---|---|---|---|")
    for row in sorted(data, key=lambda r: -count(r, samples))[:args.top]:
        stalls = sorted(((c, count(row, header.index(c))) for c in reasons),
                        key=lambda x: -x[1])[:2]
        text = ", ".join(f"{c[6:]} {n}" for c, n in stalls if n)
        print(f"| {row[0][-5:]} | {100 * count(row, samples) / total:.1f} % "
              f"| {row[executed]} | `{row[source].strip()[:60]}` | {text} |")
    # The K loop: the instructions executed as often as the most executed
    # wgmma (QGMMA for FP8, HGMMA for bf16/f16).
    mma = [r for r in data if "GMMA" in r[source]]
    if mma:
        loop_count = max(count(r, executed) for r in mma)
        loop = [r for r in data if count(r, executed) == loop_count]
        share = sum(count(r, samples) for r in loop) / total
        wait = sum(count(r, samples) for r in loop
                   if "DEPBAR" in r[source]) / total
        print()
        print(f"K loop ({len(loop)} instructions executed {loop_count} "
              f"times): {100 * share:.1f} % of the samples, of which "
              f"{100 * wait:.1f} % waiting for the product (WARPGROUP.DEPBAR)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
