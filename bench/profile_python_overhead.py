#!/usr/bin/env python3
"""Where the host time of a GGEMM call goes (on the GPU machine).

Profiles `ggemm.segment_matmul(x, w, seg, out=y)` and the bare
`ggemm.Kernel.__call__` on the same small problem as check_python.py's
overhead case (kernels from its catalog), with cProfile over many calls, and
prints the functions with the most own time. Needs GGEMM_CATALOG (or
--catalog) and GGEMM_RUNTIME_LIB, as check_python.py.

    python3 bench/profile_python_overhead.py --catalog .device/python_catalog
"""
import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", type=Path, required=True)
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    os.environ["GGEMM_CATALOG"] = str(args.catalog)

    import torch
    import ggemm
    from ggemm.cache import kernel_for

    n, k, g = 384, 256, 6  # check_python.py's N, K, G
    x = torch.randn(64, k, device="cuda").to(torch.bfloat16)
    w = torch.randn(g, n, k, device="cuda").to(torch.bfloat16)
    seg = torch.tensor([0, 10, 20, 30, 40, 50, 64], dtype=torch.int32,
                       device="cuda")
    y = torch.empty(64, n, device="cuda", dtype=torch.bfloat16)
    kernel = kernel_for(ggemm.ops.plan_segment_matmul(x, w, seg).problem)

    calls = {
        "ggemm.segment_matmul(out=y)":
            lambda: ggemm.segment_matmul(x, w, seg, out=y),
        "ggemm.Kernel.__call__":
            lambda: kernel(x=x, w=w, y=y, seg_indptr=seg),
    }
    for name, fn in calls.items():
        for _ in range(100):
            fn()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(args.calls):
            fn()
        plain = (time.perf_counter() - start) / args.calls * 1e6
        torch.cuda.synchronize()
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(args.calls):
            fn()
        profile.disable()
        torch.cuda.synchronize()
        print(f"== {name}: {plain:.1f} us per call without the profiler; "
              f"own time per call under it:", flush=True)
        stats = pstats.Stats(profile)
        rows = []
        for (path, line, func), (cc, nc, tt, ct, callers) in \
                stats.stats.items():
            rows.append((tt / args.calls * 1e6, nc / args.calls,
                         f"{Path(path).name}:{line}({func})"))
        for own, per_call, where in sorted(rows, reverse=True)[:args.top]:
            print(f"  {own:7.2f} us  {per_call:5.1f} calls  {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
