#!/usr/bin/env python3
"""Compile latency of GGEMM kernels from Python, on the CPU machine.

Measures, for the problem ops of a DeepSeek-V3-sized MoE layer (bf16 and
FP8, up and down projections, prefill and decode, shared expert, the dx
kernels of training), each a multi-variant bundle (ggemm-to-ptx's default:
one kernel per rows-per-group bucket):

- IR -> PTX in process (the C API's ggemm-to-ptx, no cache), per op and
  per variant (the op's time over its kernels), with the compiler's thread
  pool (the default) and single-threaded (``GGEMM_COMPILER_THREADS=1``:
  the kernels one after the other), and with the pipeline as it was before
  (``BEFORE_PIPELINE``, single-threaded), median of --repeats runs; one
  kernel per op (variants=false) for comparison with the first table;
  optionally at other LLVM opt levels (--opt-levels);
- where the time goes: gemm-opt's pass timing (``--mlir-timing``) for one
  op, single-threaded;
- IR -> cubin (ptxas) per op (--cubin);
- the cold model set: every op to PTX through the disk cache (empty), as
  ``python -m ggemm.catalog build`` does it, with 1 or --jobs caller
  threads, with and without the pool; to cubin with --cubin;
- warm hits: a disk-cache hit (hash the IR, find the entry), the
  in-memory hit of the ops layer (``ggemm.cache.kernel_for``), and the warm
  model set.

Writes a markdown table ending with
``compile-latency: median PTX ms per variant P, cold model set S s, warm W ms``
(P: single-threaded op time over its kernels at the default opt level; S:
the cold set with the pool and --jobs caller threads; W: the median
disk-cache hit).

    python3 bench/compile_latency.py --report bench/results/compile-latency.md
"""

from __future__ import annotations

import argparse
import datetime
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, Iterator, List, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from ggemm import cache, compiler  # noqa: E402
from ggemm.problem import Problem  # noqa: E402

HIDDEN, INTER, EXPERTS = 7168, 2048, 256


def model_set() -> Dict[str, Problem]:
    """The problem ops of a DeepSeek-V3-sized MoE layer: up/down
    projections for prefill (segments) and decode (masked), in bf16 and FP8
    (1x128 activation and 128x128 weight scale blocks), the shared expert
    (batched, one matrix) and the dx kernels of training (the other weight
    layout)."""
    problems: Dict[str, Problem] = {}
    for dtype in ("bf16", "f8e4m3"):
        seg = dict(op="segment_matmul", dtype=dtype, groups=EXPERTS)
        masked = dict(op="masked_matmul", dtype=dtype, groups=EXPERTS)
        problems.update({
            f"{dtype} prefill up (silu)": Problem(
                **seg, n=2 * INTER, k=HIDDEN, activation="silu"),
            f"{dtype} prefill down (row scale)": Problem(
                **seg, n=HIDDEN, k=INTER, row_scale=True),
            f"{dtype} decode up (silu)": Problem(
                **masked, n=2 * INTER, k=HIDDEN, activation="silu"),
            f"{dtype} decode down (row scale)": Problem(
                **masked, n=HIDDEN, k=INTER, row_scale=True),
        })
    shared = dict(op="batched_matmul", dtype="bf16", groups=1)
    seg = dict(op="segment_matmul", dtype="bf16", groups=EXPERTS)
    problems.update({
        "bf16 shared expert up": Problem(**shared, n=2 * INTER, k=HIDDEN,
                                         activation="silu"),
        "bf16 shared expert down": Problem(**shared, n=HIDDEN, k=INTER),
        "bf16 dx of up (kn)": Problem(**seg, n=HIDDEN, k=2 * INTER,
                                      weight_layout="kn"),
        "bf16 dx of down (kn)": Problem(**seg, n=INTER, k=HIDDEN,
                                        weight_layout="kn"),
    })
    return problems


def commit() -> str:
    """GGEMM_COMMIT when set (the GPU host's copy of the tree has no
    reliable git metadata: run_on_device.sh sets it), else the checkout's
    commit, with "+changes" when the tree differs."""
    if os.environ.get("GGEMM_COMMIT"):
        return os.environ["GGEMM_COMMIT"]

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True,
                              text=True).stdout.strip()
    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+changes" if git("status", "--porcelain",
                                     "--untracked-files=no") else "")


@contextlib.contextmanager
def compiler_threads(threads: Optional[int]) -> Iterator[None]:
    """Compilers created inside use the process's pool (``None``) or are
    single-threaded (``1``): the C API reads GGEMM_COMPILER_THREADS at each
    compiler's creation."""
    previous = os.environ.pop("GGEMM_COMPILER_THREADS", None)
    if threads is not None:
        os.environ["GGEMM_COMPILER_THREADS"] = str(threads)
    try:
        yield
    finally:
        os.environ.pop("GGEMM_COMPILER_THREADS", None)
        if previous is not None:
            os.environ["GGEMM_COMPILER_THREADS"] = previous


#: ggemm-to-ptx as it was at e67f041 (before this benchmark's changes),
#: spelled out: the NVVM lowering at the top level, then upstream's
#: gpu-module-to-binary, which compiles the kernels one after the other.
#: Run single-threaded (the C API's contexts were) it is the 'before'.
#: (The C API anchors a pipeline on the module: no builtin.module(...).)
BEFORE_PIPELINE = (
    "ggemm-select-config{num-sms=132 variants=true}, "
    "ggemm-tile, ggemm-swap-ab, ggemm-persistent-schedule{grid=persistent}, "
    "ggemm-warp-specialize, ggemm-stage-ring, "
    "convert-ggemm-to-nvvm{chip=sm_90a}, convert-scf-to-cf, "
    "convert-nvvm-to-llvm, convert-func-to-llvm, expand-strided-metadata, "
    "nvvm-attach-target{O=3 chip=sm_90a features=+ptx80}, lower-affine, "
    "convert-arith-to-llvm, convert-index-to-llvm, canonicalize, cse, "
    "gpu.module(convert-gpu-to-nvvm, ggemm-finalize-kernel-abi, canonicalize, "
    "cse, reconcile-unrealized-casts), gpu-to-llvm, "
    "gpu-module-to-binary{format=isa}, convert-math-to-llvm, canonicalize, "
    "cse, reconcile-unrealized-casts")


def time_pipeline(source: str, pipeline: str) -> float:
    start = time.perf_counter()
    with compiler._module_after(source, pipeline, "bench.mlir"):
        pass
    return (time.perf_counter() - start) * 1e3


def median_ms(source: str, pipeline: str, repeats: int,
              threads: Optional[int] = None) -> float:
    with compiler_threads(threads):
        return statistics.median(time_pipeline(source, pipeline)
                                 for _ in range(repeats))


def thread_cpu_ns() -> Dict[str, int]:
    """CPU time of each thread of this process (ns, from schedstat)."""
    times = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                times[tid] = int(f.read().split()[0])
        except OSError:
            pass
    return times


def critical_path_ms(source: str, pipeline: str, repeats: int) -> float:
    """The op's latency on a machine with a free core per pool thread,
    estimated from CPU times with the pool: the calling thread's (the
    serial part; it only waits while the pool works) plus the busiest
    pool thread's. This machine's cores are shared with other builds, so
    its wall times cannot show the parallel gain."""
    caller = str(threading.get_native_id())
    estimates = []
    for _ in range(repeats):
        before = thread_cpu_ns()
        time_pipeline(source, pipeline)
        after = thread_cpu_ns()
        spent = {tid: ns - before.get(tid, 0) for tid, ns in after.items()}
        serial = spent.pop(caller, 0)
        estimates.append((serial + max(spent.values(), default=0)) / 1e6)
    return statistics.median(estimates)


def count_kernels(source: str) -> int:
    """The kernels (variants) of the op's bundle."""
    with tempfile.TemporaryDirectory() as cache_dir:
        entry = compiler.compile_to_cache(source, compiler.pipeline_text(),
                                          cache_dir)
        return sum(1 for p in entry.iterdir() if p.suffix == ".ptx")


def pass_timing(source: str, top: int = 12) -> List[str]:
    """gemm-opt's pass timing of ggemm-to-ptx on ``source``,
    single-threaded: the ``top`` passes by wall time, as table rows."""
    build = Path(os.environ.get("GGEMM_BUILD_DIR", ROOT / "build"))
    with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
        f.write(source)
        f.flush()
        result = subprocess.run(
            [str(build / "bin" / "gemm-opt"), f.name,
             "--ggemm-to-ptx=chip=sm_90a", "--mlir-disable-threading",
             "--mlir-timing", "--mlir-timing-display=list", "-o",
             os.devnull], capture_output=True, text=True, check=True)
    rows = []
    for line in result.stderr.splitlines():
        match = re.match(r"\s+([0-9.]+) \(\s*([0-9.]+)%\)\s+(.+)$", line)
        if match and match.group(3) != "root":
            rows.append(f"| {match.group(3)} | {float(match.group(1)) * 1e3:.0f}"
                        f" | {match.group(2)} |")
    return rows[:top]


def cold_set(problems: Dict[str, Problem], binary_format: str, jobs: int,
             threads: Optional[int], pipeline: Optional[str] = None) -> float:
    with tempfile.TemporaryDirectory() as cache_dir, \
            compiler_threads(threads):
        pipeline = pipeline or compiler.pipeline_text(
            binary_format=binary_format)
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(lambda p: compiler.compile_to_cache(
                p.mlir(), pipeline, cache_dir), problems.values()))
        return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--machine", default="CPU machine",
                        help="where this runs, for the report (the load "
                        "average is added)")
    parser.add_argument("--opt-levels", default="",
                        help="extra LLVM opt levels to time, e.g. 2,1,0")
    parser.add_argument("--cubin", action="store_true",
                        help="also time IR -> cubin (ptxas: slow)")
    parser.add_argument("--only", help="regex: the ops to time")
    parser.add_argument("--pool-threads", type=int, default=0,
                        help="threads of the compiler's pool (0: one per "
                             "CPU); more than the kernels of an op lets the "
                             "free-cores estimate give each kernel a thread")
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    problems = model_set()
    if args.only:
        problems = {k: v for k, v in problems.items()
                    if re.search(args.only, k)}
    opt_levels = [int(v) for v in args.opt_levels.split(",") if v]
    if args.pool_threads:
        # Read when the first compiler is created, which sizes the pool.
        os.environ["GGEMM_COMPILER_THREADS"] = str(args.pool_threads)
    compiler.load_compiler()
    # Warm the process: the first pipeline run registers passes and loads
    # LLVM's targets.
    first = next(iter(problems.values())).mlir()
    first_ms = time_pipeline(first, compiler.pipeline_text())
    load_start = os.getloadavg()[0]

    rows: List[List[str]] = []
    per_variant: List[float] = []
    per_variant_pool: List[float] = []
    op_before: List[float] = []
    single_kernel: List[float] = []
    op_serial: List[float] = []
    op_pool: List[float] = []
    op_critical: List[float] = []
    by_level: Dict[int, List[float]] = {lvl: [] for lvl in opt_levels}
    cubin: List[float] = []
    total_kernels = 0
    default = compiler.pipeline_text()
    for name, problem in problems.items():
        source = problem.mlir()
        kernels = count_kernels(source)
        total_kernels += kernels
        before = median_ms(source, BEFORE_PIPELINE, args.repeats, threads=1)
        serial = median_ms(source, default, args.repeats, threads=1)
        pooled = median_ms(source, default, args.repeats)
        with compiler_threads(None):
            critical = critical_path_ms(source, default, args.repeats)
        op_critical.append(critical)
        single = median_ms(source, "ggemm-to-ptx{chip=sm_90a variants=false}",
                           args.repeats, threads=1)
        op_before.append(before)
        single_kernel.append(single)
        op_serial.append(serial)
        op_pool.append(pooled)
        per_variant.append(serial / kernels)
        per_variant_pool.append(pooled / kernels)
        row = [name, str(kernels), f"{single:.0f}", f"{before:.0f}",
               f"{serial:.0f}", f"{pooled:.0f}", f"{critical:.0f}",
               f"{serial / kernels:.0f}", f"{pooled / kernels:.0f}"]
        for level in opt_levels:
            ms = median_ms(source, compiler.pipeline_text(opt_level=level),
                           args.repeats, threads=1) / kernels
            by_level[level].append(ms)
            row.append(f"{ms:.0f}")
        if args.cubin:
            ms = median_ms(source, compiler.pipeline_text(
                binary_format="bin"), 1)
            cubin.append(ms)
            row.append(f"{ms:.0f}")
        rows.append(row)
        print(" | ".join(row), flush=True)

    timing_name = next((k for k in problems if "prefill down" in k),
                       next(iter(problems)))
    build = Path(os.environ.get("GGEMM_BUILD_DIR", ROOT / "build"))
    if (build / "bin" / "gemm-opt").is_file():
        timing_rows = pass_timing(problems[timing_name].mlir())
    else:  # a GPU host with only the compiler library
        timing_rows = ["| (no gemm-opt on this host: not measured) | | |"]

    cold = {}
    for jobs in sorted({1, args.jobs}):
        label = "before (e67f041 pipeline, 1 thread per compile)"
        cold[(jobs, label)] = cold_set(problems, "isa", jobs, 1,
                                       BEFORE_PIPELINE)
        print(f"cold PTX, {jobs} jobs, {label}: "
              f"{cold[(jobs, label)]:.2f} s", flush=True)
        for threads, label in ((1, "1 thread per compile"), (None, "pool")):
            cold[(jobs, label)] = cold_set(problems, "isa", jobs, threads)
            print(f"cold PTX, {jobs} jobs, {label}: "
                  f"{cold[(jobs, label)]:.2f} s", flush=True)
    cold_bin = (cold_set(problems, "bin", args.jobs, None) if args.cubin
                else None)

    with tempfile.TemporaryDirectory() as cache_dir:
        options = cache.CompileOptions(cache_dir=cache_dir)
        pipeline = options.pipeline()
        for p in problems.values():
            compiler.compile_to_cache(p.mlir(), pipeline, cache_dir)
        hits = []
        for p in problems.values():
            source = p.mlir()
            for _ in range(20):
                start = time.perf_counter()
                compiler.compile_to_cache(source, pipeline, cache_dir)
                hits.append((time.perf_counter() - start) * 1e3)
        start = time.perf_counter()
        for p in problems.values():
            compiler.compile_to_cache(p.mlir(), pipeline, cache_dir)
        warm_set_ms = (time.perf_counter() - start) * 1e3
        # The ops layer's in-memory hit (needs the runtime library to load
        # the bundle; no GPU).
        memory_hit_us = None
        previous = cache._options
        try:
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

    median = statistics.median
    header = (["op", "kernels", "one kernel ms (variants=false), 1 thread",
               "op ms, before (e67f041 pipeline, 1 thread)",
               "op ms, 1 thread", "op ms, pool",
               "op ms, pool, free cores (estimate)",
               "ms per variant, 1 thread", "ms per variant, pool"]
              + [f"ms per variant O{lvl}, 1 thread" for lvl in opt_levels]
              + (["op cubin ms, pool"] if args.cubin else []))
    summary = (["median", "", f"{median(single_kernel):.0f}",
                f"{median(op_before):.0f}", f"{median(op_serial):.0f}",
                f"{median(op_pool):.0f}", f"{median(op_critical):.0f}",
                f"{median(per_variant):.0f}",
                f"{median(per_variant_pool):.0f}"]
               + [f"{median(by_level[lvl]):.0f}" for lvl in opt_levels]
               + ([f"{median(cubin):.0f}"] if args.cubin else []))
    cold_best = cold[(args.jobs, "pool")]
    lines = [
        f"# Compile latency from Python ({args.machine})",
        "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- machine: {args.machine}, {os.cpu_count()} CPUs, load average "
        f"{load_start:.1f} at the start and {os.getloadavg()[0]:.1f} at the "
        f"end",
        f"- commit: {commit()}",
        f"- compiler library: {compiler.load_compiler()._name}",
        f"- model set: DeepSeek-V3-sized MoE layer, hidden {HIDDEN}, expert "
        f"intermediate {INTER}, {EXPERTS} experts: {len(problems)} problem "
        f"ops, {total_kernels} kernels (tile variants)",
        f"- script: bench/compile_latency.py --repeats {args.repeats} --jobs "
        f"{args.jobs}" + (f" --opt-levels {args.opt_levels}"
                          if opt_levels else "")
        + (" --cubin" if args.cubin else "")
        + (f" --pool-threads {args.pool_threads}" if args.pool_threads
           else "")
        + (f" --only '{args.only}'" if args.only else ""),
        f"- first pipeline run of the process (registration, target "
        f"initialisation): {first_ms:.0f} ms",
        "- '1 thread': GGEMM_COMPILER_THREADS=1, the kernels of an op one "
        "after the other; 'pool': the compiler's shared thread pool "
        f"({args.pool_threads or os.cpu_count()} threads), the kernels of an "
        "op in parallel; 'free cores (estimate)': the calling thread's CPU "
        "time plus the busiest pool thread's (the op's latency where each "
        "pool thread has a core to itself)",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ] + ["| " + " | ".join(r) + " |" for r in rows + [summary]] + [
        "",
        f"Where the time goes: gemm-opt --mlir-timing, ggemm-to-ptx of "
        f"'{timing_name}', single-threaded (top passes by wall time):",
        "",
        "| pass | ms | % |",
        "|---|---|---|",
    ] + timing_rows + [
        "",
        f"- cold model set to PTX ({len(problems)} ops, empty cache): "
        + "; ".join(f"{jobs} caller thread{'s' if jobs > 1 else ''}, "
                    f"{label}: {seconds:.2f} s"
                    for (jobs, label), seconds in cold.items())
        + (f"; to cubin ({args.jobs} caller threads, pool): "
           f"{cold_bin:.2f} s" if cold_bin is not None else ""),
        f"- warm disk-cache hit (hash the IR, find the entry): median "
        f"{warm_ms:.2f} ms; whole model set warm {warm_set_ms:.1f} ms",
        "- in-memory hit of the ops layer (ggemm.cache.kernel_for): "
        + (f"{memory_hit_us:.2f} us" if memory_hit_us is not None
           else "not measured"),
        "",
        f"compile-latency: median PTX ms per variant "
        f"{median(per_variant):.0f}, cold model set {cold_best:.1f} s, warm "
        f"{warm_ms:.2f} ms",
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
