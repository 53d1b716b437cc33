#!/usr/bin/env python3
"""Compile latency of GGEMM kernels from Python, on the CPU machine.

Measures, for the kernels of a DeepSeek-V3-like MoE layer (bf16: FP8 is not
lowered yet):

- IR -> PTX in process (the C API's ggemm-to-ptx, no cache), per variant,
  at several LLVM opt levels (median of --repeats runs);
- IR -> cubin (ptxas) per variant at the default opt level;
- the cold model set: every kernel to PTX and to cubin through the disk
  cache (empty), in parallel threads, as ``python -m ggemm.catalog build``
  does it;
- warm hits: a disk-cache hit (hash the IR, find the entry), the
  in-memory hit of the ops layer (``ggemm.cache.kernel_for``), and the warm
  model set.

Writes a markdown table ending with
``compile-latency: median PTX ms per variant P, cold model set S s, warm W ms``
(P at the pipeline's default opt level; W the median disk-cache hit).

    python3 bench/compile_latency.py --report bench/results/compile-latency.md
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from ggemm import cache, compiler  # noqa: E402
from ggemm.problem import Problem  # noqa: E402

HIDDEN, INTER, EXPERTS = 7168, 2048, 256


def model_set() -> Dict[str, Problem]:
    """Up/down projections of a DeepSeek-V3-sized MoE layer: prefill
    (segments), decode (masked), shared expert (batched, one matrix) and the
    dx kernels of training (the other weight layout)."""
    seg = dict(op="segment_matmul", dtype="bf16", groups=EXPERTS)
    masked = dict(op="masked_matmul", dtype="bf16", groups=EXPERTS)
    shared = dict(op="batched_matmul", dtype="bf16", groups=1)
    return {
        "prefill up (silu)": Problem(**seg, n=2 * INTER, k=HIDDEN,
                                     activation="silu"),
        "prefill down (row scale)": Problem(**seg, n=HIDDEN, k=INTER,
                                            row_scale=True),
        "decode up (silu)": Problem(**masked, n=2 * INTER, k=HIDDEN,
                                    activation="silu"),
        "decode down (row scale)": Problem(**masked, n=HIDDEN, k=INTER,
                                           row_scale=True),
        "shared expert up": Problem(**shared, n=2 * INTER, k=HIDDEN,
                                    activation="silu"),
        "shared expert down": Problem(**shared, n=HIDDEN, k=INTER),
        "dx of up (kn)": Problem(**seg, n=HIDDEN, k=2 * INTER,
                                 weight_layout="kn"),
        "dx of down (kn)": Problem(**seg, n=INTER, k=HIDDEN,
                                   weight_layout="kn"),
    }


def time_pipeline(source: str, pipeline: str) -> float:
    start = time.perf_counter()
    with compiler._module_after(source, pipeline, "bench.mlir"):
        pass
    return (time.perf_counter() - start) * 1e3


def median_ms(source: str, pipeline: str, repeats: int) -> float:
    return statistics.median(time_pipeline(source, pipeline)
                             for _ in range(repeats))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--opt-levels", default="3,2,1,0")
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    problems = model_set()
    opt_levels = [int(v) for v in args.opt_levels.split(",")]
    compiler.load_compiler()
    # Warm the process: the first pipeline run registers passes and loads
    # LLVM's targets.
    first = next(iter(problems.values())).mlir()
    start = time.perf_counter()
    time_pipeline(first, compiler.pipeline_text())
    first_ms = (time.perf_counter() - start) * 1e3

    rows: List[List[str]] = []
    ptx_default: List[float] = []
    ptx_by_level: Dict[int, List[float]] = {lvl: [] for lvl in opt_levels}
    cubin: List[float] = []
    front: List[float] = []
    for name, problem in problems.items():
        source = problem.mlir()
        per_level = {}
        for level in opt_levels:
            per_level[level] = median_ms(source, compiler.pipeline_text(
                opt_level=level), args.repeats)
            ptx_by_level[level].append(per_level[level])
        default = median_ms(source, compiler.pipeline_text(), args.repeats)
        ptx_default.append(default)
        # The ggemm passes alone (problem op -> NVVM-ready IR).
        ggemm_ms = median_ms(source, "ggemm-select-config,ggemm-tile,"
                             "ggemm-persistent-schedule,ggemm-warp-specialize,"
                             "ggemm-stage-ring", args.repeats)
        front.append(ggemm_ms)
        bin_ms = median_ms(source, compiler.pipeline_text(binary_format="bin"),
                           1)
        cubin.append(bin_ms)
        rows.append([name, f"{ggemm_ms:.1f}", f"{default:.0f}"]
                    + [f"{per_level[lvl]:.0f}" for lvl in opt_levels]
                    + [f"{bin_ms:.0f}"])
        print(" | ".join(rows[-1]), flush=True)

    def cold_set(binary_format: str) -> float:
        with tempfile.TemporaryDirectory() as cache_dir:
            pipeline = compiler.pipeline_text(binary_format=binary_format)
            start = time.perf_counter()
            with ThreadPoolExecutor(max_workers=args.jobs) as pool:
                list(pool.map(lambda p: compiler.compile_to_cache(
                    p.mlir(), pipeline, cache_dir), problems.values()))
            return time.perf_counter() - start

    cold_ptx = cold_set("isa")
    cold_ptx_serial = None
    if args.jobs > 1:
        jobs, args.jobs = args.jobs, 1
        cold_ptx_serial = cold_set("isa")
        args.jobs = jobs
    cold_bin = cold_set("bin")

    with tempfile.TemporaryDirectory() as cache_dir:
        options = cache.CompileOptions(cache_dir=cache_dir)
        pipeline = options.pipeline()
        for p in problems.values():
            compiler.compile_to_cache(p.mlir(), pipeline, cache_dir)
        hits = []
        for p in problems.values():
            for _ in range(20):
                start = time.perf_counter()
                compiler.compile_to_cache(p.mlir(), pipeline, cache_dir)
                hits.append((time.perf_counter() - start) * 1e3)
        start = time.perf_counter()
        for p in problems.values():
            compiler.compile_to_cache(p.mlir(), pipeline, cache_dir)
        warm_set_ms = (time.perf_counter() - start) * 1e3
        # The ops layer's in-memory hit (needs the runtime library to load
        # the bundle; no GPU).
        memory_hit_us = None
        try:
            previous = cache._options
            cache._options = options
            cache.kernel_for(next(iter(problems.values())))
            start = time.perf_counter()
            for _ in range(10000):
                cache.kernel_for(next(iter(problems.values())))
            memory_hit_us = (time.perf_counter() - start) / 10000 * 1e6
        except Exception as error:  # noqa: BLE001 - reported as missing
            print(f"memory hit not measured: {error}")
        finally:
            cache._options = previous
    warm_ms = statistics.median(hits)

    p_median = statistics.median(ptx_default)
    level_medians = {lvl: statistics.median(v)
                     for lvl, v in ptx_by_level.items()}
    header = (["kernel", "ggemm passes ms", "PTX ms (default)"]
              + [f"PTX ms O{lvl}" for lvl in opt_levels] + ["cubin ms"])
    lines = [
        "# Compile latency from Python (CPU machine)",
        "",
        f"- machine: {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f} at the end (shared with other builds)",
        f"- model set: DeepSeek-V3-like MoE layer, bf16 (FP8 not lowered "
        f"yet): hidden {HIDDEN}, expert intermediate {INTER}, {EXPERTS} "
        f"experts",
        f"- script: bench/compile_latency.py --repeats {args.repeats} --jobs "
        f"{args.jobs}",
        f"- first pipeline run of the process (registration, target "
        f"initialisation): {first_ms:.0f} ms",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ] + ["| " + " | ".join(r) + " |" for r in rows] + [
        "| median | " + f"{statistics.median(front):.1f} | {p_median:.0f} | "
        + " | ".join(f"{level_medians[lvl]:.0f}" for lvl in opt_levels)
        + f" | {statistics.median(cubin):.0f} |",
        "",
        f"- cold model set ({len(problems)} kernels, {args.jobs} threads, "
        f"empty cache): PTX {cold_ptx:.2f} s"
        + (f" ({cold_ptx_serial:.2f} s with 1 thread)"
           if cold_ptx_serial is not None else "")
        + f", cubin {cold_bin:.2f} s",
        f"- warm disk-cache hit (hash the IR, find the entry): median "
        f"{warm_ms:.2f} ms; whole model set warm {warm_set_ms:.1f} ms",
        "- in-memory hit of the ops layer (ggemm.cache.kernel_for): "
        + (f"{memory_hit_us:.2f} us" if memory_hit_us is not None
           else "not measured"),
        "",
        f"compile-latency: median PTX ms per variant {p_median:.0f}, cold "
        f"model set {cold_ptx:.1f} s, warm {warm_ms:.2f} ms",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
