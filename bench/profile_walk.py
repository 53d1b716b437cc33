#!/usr/bin/env python3
"""Hardware counters of the 256-group shape of bench_e2e.py (256 groups of
512 rows, N = 7168, K = 2048) for two bench kernels, each in two bundle
directories (NOTES v14: with the cursor walk, the kernel that rasters
along m got faster there and the one along n slower). One profiled launch
per kernel, after untimed warm-up launches, between cudaProfilerStart and
Stop; run under `ncu --profile-from-start off` (run_on_device.sh
profile-walk).

    python3 bench/profile_walk.py --bundles NEW --baseline OLD
"""
import argparse
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from ggemm.runtime import Kernel  # noqa: E402

KERNELS = ("seg_nk_bf16_n256_kernel", "bench_seg_m128n256_along_m_kernel")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, required=True)
    parser.add_argument("--baseline", type=Path, required=True)
    args = parser.parse_args()
    groups, rows, n, k = 256, 512, 7168, 2048
    m = groups * rows
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = (torch.randn(groups, n, k, device="cuda") / k ** 0.5).to(torch.bfloat16)
    indptr = torch.arange(0, m + 1, rows, dtype=torch.int32, device="cuda")
    y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    launches = []
    for label, directory in (("new", args.bundles), ("old", args.baseline)):
        for name in KERNELS:
            kernel = Kernel(directory / f"{name}.json")
            launches.append((f"{label} {name}", kernel))
    for _, kernel in launches:
        for _ in range(3):
            kernel(x=x, w=w, y=y, seg_indptr=indptr)
    torch.cuda.synchronize()
    for label, kernel in launches:
        print(f"profiling: {label}", flush=True)
        torch.cuda.cudart().cudaProfilerStart()
        kernel(x=x, w=w, y=y, seg_indptr=indptr)
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
