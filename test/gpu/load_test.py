#!/usr/bin/env python3
"""Load test of the GGEMM runtime and kernels (run on a GPU through device).

For a segment, a masked and a batched kernel, on small problems:

1. `--launches` launches round-robin over 4 streams, then a check of the
   result against torch, twice (the driver's queue of launches not yet run
   grows host memory to a high-water mark in the first round; the second
   is held to the bounds);
2. the same number of launches as replays of a CUDA graph that holds 100
   launches, then a check;
3. `--reloads` times: load the bundle, launch once, close it (modules must
   be unloaded).

Before and after each phase it reads the process's resident host memory
(VmRSS), the GPU memory the driver reports in use (cuMemGetInfo through
torch.cuda.mem_get_info, after emptying torch's cache) and the number of
open file descriptors, and fails when they grow by more than the bounds.
Prints one line per phase and, last, `gpu-load: N passed, M failed`.

Example (on the GPU machine):
    python3 test/gpu/load_test.py --bundles .device/bundles --launches 100000
"""
import argparse
import os
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from ggemm.runtime import Kernel  # noqa: E402

#: Growth allowed over a phase.
RSS_BOUND_MB = 64
GPU_BOUND_MB = 64
FD_BOUND = 8


def usage() -> tuple:
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    rss = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) // 1024
    free, total = torch.cuda.mem_get_info()
    fds = len(os.listdir("/proc/self/fd"))
    return rss, (total - free) // (1 << 20), fds


def problem(op: str) -> tuple:
    """Tensors and the reference of a small problem of kind `op`."""
    torch.manual_seed(1)
    k, n = 128, 128
    if op == "segment":
        offsets = [0, 40, 40, 170, 200]
        x = torch.randn(220, k, device="cuda").to(torch.bfloat16)
        w = (torch.randn(4, n, k, device="cuda") / k ** 0.5).to(torch.bfloat16)
        indptr = torch.tensor(offsets, dtype=torch.int32, device="cuda")
        ref = torch.full((220, n), float("nan"), device="cuda",
                         dtype=torch.float64)
        for g in range(4):
            b, e = offsets[g], offsets[g + 1]
            ref[b:e] = x[b:e].double() @ w[g].double().t()
        return {"x": x, "w": w, "seg_indptr": indptr}, (220, n), ref
    x = torch.randn(4, 100, k, device="cuda").to(torch.bfloat16)
    w = (torch.randn(4, n, k, device="cuda") / k ** 0.5).to(torch.bfloat16)
    ref = torch.einsum("gmk,gnk->gmn", x.double(), w.double())
    tensors = {"x": x, "w": w}
    if op == "masked":
        counts = [100, 0, 37, 100]
        tensors["masked_m"] = torch.tensor(counts, dtype=torch.int32,
                                           device="cuda")
        for g, c in enumerate(counts):
            ref[g, c:] = float("nan")
    return tensors, (4, 100, n), ref


def check(y: torch.Tensor, ref: torch.Tensor) -> str:
    inside = ~torch.isnan(ref)
    got = y.double()
    if torch.isnan(got[inside]).any():
        return "unwritten elements"
    err = ((got[inside] - ref[inside]).norm() / ref[inside].norm()).item()
    return "" if err < 1e-2 else f"rel err {err:.2e}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, required=True)
    parser.add_argument("--launches", type=int, default=100000)
    parser.add_argument("--reloads", type=int, default=1000)
    args = parser.parse_args()
    kinds = {"segment": "seg_nk_bf16_kernel", "masked": "masked_nk_bf16_kernel",
             "batched": "batched_nk_bf16_kernel"}
    streams = [torch.cuda.Stream() for _ in range(4)]
    passed = failed = 0

    def report(name: str, problems: list, before: tuple, after: tuple,
               seconds: float, launches: int) -> None:
        nonlocal passed, failed
        drss, dgpu, dfd = (a - b for a, b in zip(after, before))
        if drss > RSS_BOUND_MB:
            problems.append(f"host RSS grew {drss} MB")
        if dgpu > GPU_BOUND_MB:
            problems.append(f"GPU memory grew {dgpu} MB")
        if dfd > FD_BOUND:
            problems.append(f"{dfd} more open files")
        ok = not problems
        passed += ok
        failed += not ok
        print(f"{name:28s} {launches:8d} launches {seconds:6.1f} s  "
              f"RSS {before[0]}->{after[0]} MB  GPU {before[1]}->{after[1]} MB"
              f"  fds {before[2]}->{after[2]}  "
              f"{'PASS' if ok else 'FAIL ' + '; '.join(problems)}", flush=True)

    for op, name in kinds.items():
        path = args.bundles / f"{name}.json"
        tensors, y_shape, ref = problem(op)
        kernel = Kernel(path)
        y = torch.full(y_shape, float("nan"), device="cuda",
                       dtype=torch.bfloat16)
        # Warm up: load the module and touch every stream, so one-time
        # costs (module load, per-stream driver state) stay out of the
        # bounds; growth per launch is what a leak would show.
        for i in range(1000):
            kernel(y=y, stream=streams[i % len(streams)], **tensors)
        torch.cuda.synchronize()

        # 1. A loop over streams, twice. Launches are queued without a sync,
        # so the driver's host-side queue grows to a high-water mark in the
        # first round; a leak would grow again in the second, which is the
        # one held to the bounds.
        for round_ in (1, 2):
            y.fill_(float("nan"))
            before = usage()
            start = time.time()
            for i in range(args.launches):
                kernel(y=y, stream=streams[i % len(streams)], **tensors)
            torch.cuda.synchronize()
            seconds = time.time() - start
            problems = [p for p in [check(y, ref)] if p]
            if round_ == 1:
                after = usage()
                print(f"{op + ' streams, round 1':28s} {args.launches:8d} "
                      f"launches {seconds:6.1f} s  RSS {before[0]}->{after[0]}"
                      f" MB  GPU {before[1]}->{after[1]} MB (high-water mark, "
                      f"not bounded)  {'ok' if not problems else problems}",
                      flush=True)
                continue
            report(f"{op} streams, round 2", problems, before, usage(),
                   seconds, args.launches)

        # 2. CUDA-graph replays.
        y.fill_(float("nan"))
        capture = torch.cuda.Stream()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=capture):
            for _ in range(100):
                kernel(y=y, **tensors)
        torch.cuda.synchronize()
        before = usage()
        start = time.time()
        for _ in range(args.launches // 100):
            graph.replay()
        torch.cuda.synchronize()
        seconds = time.time() - start
        problems = [p for p in [check(y, ref)] if p]
        report(f"{op} graph replay", problems, before, usage(), seconds,
               args.launches // 100 * 100)
        del graph

        # 3. Load, launch, close.
        kernel.close()
        before = usage()
        start = time.time()
        for _ in range(args.reloads):
            with Kernel(path) as again:
                again(y=y, **tensors)
        torch.cuda.synchronize()
        seconds = time.time() - start
        problems = [p for p in [check(y, ref)] if p]
        report(f"{op} load/launch/close", problems, before, usage(), seconds,
               args.reloads)

    print(f"gpu-load: {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
