#!/usr/bin/env python3
"""Small and mid-size groups: swap-AB and tile variants vs torch._grouped_mm.

Runs on a Hopper GPU (through device) with the bundles of
bench/kernels_swap (bench/gen_swap_kernels.py), built by
test/gpu/build_bundles.sh into .device/bundles_swap, and the static-shape
kernels of bench/kernels in .device/bundles.

1. HBM read bandwidth, measured in this run: torch.sum over 4 GiB of bf16
   (median of do_bench), the ceiling of the decode shapes.
2. DeepGEMM's masked list, (G, m) in {(32,192), (6,1024), (32,20), (6,20)} x
   (n, k) in {(6144,7168), (7168,3072), (4096,4096), (4096,2048)}, max_m =
   4096, counts m * U(0.7, 1.3) as DeepGEMM draws them. Every GGEMM variant
   is checked against torch (relative error vs a float32 reference < 1e-2,
   no poison left in owned rows) and timed; the peer is torch._grouped_mm
   over the same rows packed contiguously (2D x 3D with offsets), timed on
   the same inputs. For <= 32 rows per group the weight bytes over the time,
   as a fraction of the measured read bandwidth, are reported too.
3. The dynamic-shape segment kernel (N, K, G unknown at compile time) vs the
   static-shape kernels on large MoE shapes.

Timings: median of triton.testing.do_bench over CUDA-graph replays.
The closing line is
`swap-ab-bench: min ratio vs torch._grouped_mm R (masked list), min
weight-bandwidth fraction F (<= 32 rows)`, R taken over the best GGEMM
variant of each shape and, separately, over the variant the dispatch rule
(ggemm-select-config's heuristics) would pick.
"""
import argparse
import datetime
import json
import os
import random
import sys
from pathlib import Path

import torch
import triton

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from ggemm.runtime import Kernel  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The CUDA-graph median timer every benchmark here uses (METHOD.md).
from bench_e2e import bench  # noqa: E402

NK = [(6144, 7168), (7168, 3072), (4096, 4096), (4096, 2048)]
GM = [(32, 192), (6, 1024), (32, 20), (6, 20)]
MAX_M = 4096
VARIANTS = ["swap32n64", "swap32", "swap64", "swap128", "m64n128", "m128n256"]


def read_bandwidth() -> float:
    """Bytes/s of a read-only pass (torch.sum) over 4 GiB."""
    a = torch.randn(2 * 1024 ** 3 // 2, device="cuda").to(torch.bfloat16)
    a = torch.cat([a, a])  # 2^31 elements = 4 GiB
    ms = bench(lambda: a.sum())
    bw = a.numel() * 2 / (ms * 1e-3)
    del a
    torch.cuda.empty_cache()
    return bw


def rel_err(y, ref):
    return ((y.float() - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, default=Path(".device/bundles_swap"))
    parser.add_argument("--static-bundles", type=Path, default=Path(".device/bundles"))
    parser.add_argument("--report", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--commit", default=os.environ.get("GGEMM_COMMIT", "unknown"))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    props = torch.cuda.get_device_properties(0)
    lines = []
    bw = read_bandwidth()
    print(f"read bandwidth {bw / 1e12:.2f} TB/s", flush=True)

    table, ratios_best, fractions, failures = [], [], [], []
    picks = {}
    for n, k in NK:
        kernels = {}
        for v in VARIANTS:
            path = args.bundles / f"swapbench_masked_n{n}_k{k}_{v}_kernel.json"
            if path.exists():
                kernels[v] = Kernel(path)
        for g, m in GM:
            counts = [max(1, int(m * rng.uniform(0.7, 1.3))) for _ in range(g)]
            x = torch.randn(g, MAX_M, k, device="cuda").to(torch.bfloat16)
            w = (torch.randn(g, n, k, device="cuda") / k ** 0.5).to(torch.bfloat16)
            masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
            # The peer's rows: the same valid rows, packed.
            xp = torch.cat([x[i, :c] for i, c in enumerate(counts)])
            offs = torch.tensor(counts, device="cuda", dtype=torch.int32).cumsum(0).to(torch.int32)
            ref = torch._grouped_mm(xp, w.transpose(-2, -1), offs=offs).float()
            rows = sum(counts)
            flops = 2.0 * rows * n * k
            wbytes = g * n * k * 2
            peer_ms = bench(lambda: torch._grouped_mm(xp, w.transpose(-2, -1), offs=offs))
            label = f"G={g} m~{m} n={n} k={k}"
            row = {"label": label, "rows": rows, "peer": peer_ms, "ggemm": {}}
            y = torch.empty(g, MAX_M, n, device="cuda", dtype=torch.bfloat16)
            for v, kernel in kernels.items():
                y.fill_(float("nan"))
                kernel(x=x, w=w, masked_m=masked_m, y=y)
                torch.cuda.synchronize()
                got = torch.cat([y[i, :c] for i, c in enumerate(counts)])
                err = rel_err(got, ref)
                poison = torch.isnan(got).any().item()
                if not err < 1e-2 or poison:
                    failures.append(f"{label} {v}: rel err {err:.2e} poison {poison}")
                    continue
                ms = bench(lambda: kernel(x=x, w=w, masked_m=masked_m, y=y))
                row["ggemm"][v] = (ms, err)
                print(f"{label:32s} {v:10s} {ms:8.4f} ms  {flops / ms / 1e9:7.1f} TFLOP/s "
                      f"vs torch {peer_ms / ms:5.2f}x  rel err {err:.1e}", flush=True)
            print(f"{label:32s} {'torch':10s} {peer_ms:8.4f} ms  "
                  f"{flops / peer_ms / 1e9:7.1f} TFLOP/s", flush=True)
            if row["ggemm"]:
                best = min(row["ggemm"], key=lambda v: row["ggemm"][v][0])
                row["best"] = best
                ratios_best.append((peer_ms / row["ggemm"][best][0], label, best))
                picks.setdefault((g, m), []).append(best)
                if m <= 32:
                    frac = wbytes / (row["ggemm"][best][0] * 1e-3) / bw
                    fractions.append((frac, label, best))
                    row["frac"] = frac
                    row["peer_frac"] = wbytes / (peer_ms * 1e-3) / bw
            table.append(row)
            del x, w, xp, y
            torch.cuda.empty_cache()

    # Dynamic-shape vs static-shape kernels on large MoE shapes.
    dyn_rows = []
    dyn_path = args.bundles / "swapbench_seg_dynamic_kernel.json"
    statics = {(4096, 7168): "bench_static_n4096_k7168_kernel.json",
               (7168, 2048): "bench_static_n7168_k2048_kernel.json"}
    if dyn_path.exists():
        dyn = Kernel(dyn_path)
        dyn_manifest = json.loads(dyn_path.read_text())
        for (n, k), static_name in statics.items():
            spath = args.static_bundles / static_name
            if not spath.exists():
                continue
            static = Kernel(spath)
            # The static kernels are compiled for G = 8.
            for g, mean in ((8, 4096), (8, 2048)):
                lengths = [int(mean * rng.uniform(0.7, 1.3)) for _ in range(g)]
                offsets = [0]
                for length in lengths:
                    offsets.append(offsets[-1] + length)
                rows = offsets[-1]
                x = torch.randn(rows, k, device="cuda").to(torch.bfloat16)
                w = (torch.randn(g, n, k, device="cuda") / k ** 0.5).to(torch.bfloat16)
                indptr = torch.tensor(offsets, dtype=torch.int32, device="cuda")
                ref = torch._grouped_mm(x, w.transpose(-2, -1), offs=indptr[1:].clone()).float()
                res = {}
                # A multi-variant bundle (version 2): the tile this launch
                # runs is its dispatch rule's choice.
                y0 = torch.empty((rows, n), device="cuda", dtype=torch.bfloat16)
                variant = dyn.select_variant(x=x, w=w, seg_indptr=indptr, y=y0)
                dyn_tile = (dyn_manifest["variants"][variant]["tile"]
                            if "variants" in dyn_manifest else dyn_manifest["tile"])
                for name, kern in (("dynamic", dyn), ("static", static)):
                    y = torch.full((rows, n), float("nan"), device="cuda", dtype=torch.bfloat16)
                    kern(x=x, w=w, seg_indptr=indptr, y=y)
                    torch.cuda.synchronize()
                    err = rel_err(y, ref)
                    if not err < 1e-2:
                        failures.append(f"dynamic/static {name} G={g} n={n} k={k}: {err:.2e}")
                    res[name] = bench(lambda: kern(x=x, w=w, seg_indptr=indptr, y=y))
                flops = 2.0 * rows * n * k
                label = f"G={g} rows~{mean} n={n} k={k}"
                dyn_rows.append((label, res["dynamic"], res["static"], flops,
                                 f"{dyn_tile['block_m']}x{dyn_tile['block_n']}"))
                print(f"{label:32s} dynamic {res['dynamic']:.4f} ms static "
                      f"{res['static']:.4f} ms ratio {res['static'] / res['dynamic']:.3f}",
                      flush=True)
                del x, w
                torch.cuda.empty_cache()

    r = min(ratios_best)[0] if ratios_best else float("nan")
    f = min(fractions)[0] if fractions else float("nan")
    summary = (f"swap-ab-bench: min ratio vs torch._grouped_mm {r:.2f} (masked list), "
               f"min weight-bandwidth fraction {f:.2f} (<= 32 rows)")
    print(summary, flush=True)
    for failure in failures:
        print("FAIL", failure, flush=True)
    if args.report:
        lines += [
            "# Small and mid-size groups: swap-AB and tile variants",
            "",
            f"- device: {props.name} ({props.multi_processor_count} SMs), torch "
            f"{torch.__version__}, triton {triton.__version__}",
            f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
            f"- commit: {args.commit}",
            "- script: bench/bench_swap_ab.py (median of triton.testing.do_bench over "
            "CUDA-graph replays; fresh torch.randn inputs; masked counts m * U(0.7, 1.3), "
            f"max_m = {MAX_M}; peer: torch._grouped_mm over the same rows packed)",
            f"- HBM read bandwidth, this run: {bw / 1e12:.2f} TB/s (torch.sum over 4 GiB bf16)",
            "- every GGEMM variant checked before timing: rel err vs float32 < 1e-2, "
            "no NaN poison left in owned rows",
            "",
            "## DeepGEMM's masked list (ms; ratio = torch / ggemm)",
            "",
            "| shape | rows | torch ms | " + " | ".join(VARIANTS) +
            " | best | best ratio | weight BW frac (ggemm / torch) |",
            "|---|---|---|" + "---|" * len(VARIANTS) + "---|---|---|",
        ]
        for row in table:
            cells = []
            for v in VARIANTS:
                if v in row["ggemm"]:
                    ms = row["ggemm"][v][0]
                    cells.append(f"{ms:.4f} ({row['peer'] / ms:.2f})")
                else:
                    cells.append("-")
            best = row.get("best")
            ratio = row["peer"] / row["ggemm"][best][0] if best else float("nan")
            frac = (f"{row['frac']:.2f} / {row['peer_frac']:.2f}"
                    if "frac" in row else "")
            lines.append(f"| {row['label']} | {row['rows']} | {row['peer']:.4f} | "
                         + " | ".join(cells) + f" | {best} | {ratio:.2f} | {frac} |")
        if dyn_rows:
            lines += ["", "## Dynamic-shape kernel (N, K, G unknown at compile time; the "
                      "variant its dispatch rule picks) vs static-shape kernels",
                      "", "| shape | dynamic tile | dynamic ms | static ms | static/dynamic | "
                      "dynamic TFLOP/s |", "|---|---|---|---|---|---|"]
            for label, d, s, flops, tile in dyn_rows:
                lines.append(f"| {label} | {tile} | {d:.4f} | {s:.4f} | {s / d:.3f} | "
                             f"{flops / d / 1e9:.1f} |")
        if failures:
            lines += ["", "Failures:", ""] + [f"- {x}" for x in failures]
        lines += ["", summary, ""]
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text("\n".join(lines))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
