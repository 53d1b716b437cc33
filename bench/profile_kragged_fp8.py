#!/usr/bin/env python3
"""Hardware counters of the FP8 K-ragged kernel against the bf16 one on the
same problem (NOTES v15: the FP8 kernel ran at the bf16 kernel's speed).
G = 4 groups of 4096 tokens, N = 4096, K = 7168 (DeepGEMM's k-grouped
shape at half its rows). One profiled launch per kernel, after untimed
warm-up launches, between cudaProfilerStart and Stop; run under
`ncu --profile-from-start off` (run_on_device.sh profile-kragged-fp8).

    python3 bench/profile_kragged_fp8.py --fp8-bundles DIR --bf16-bundles DIR
"""
import argparse
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from ggemm.runtime import Kernel  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fp8-bundles", type=Path, required=True)
    parser.add_argument("--bf16-bundles", type=Path, required=True)
    args = parser.parse_args()
    g, rows, n, k = 4, 4096, 4096, 7168
    t = g * rows
    tb = t // 128
    indptr = torch.arange(0, t + 1, rows, dtype=torch.int32, device="cuda")
    dw = torch.empty(g, n, k, device="cuda")
    dy8 = torch.randn(n, t, device="cuda").to(torch.float8_e4m3fn)
    x8 = torch.randn(k, t, device="cuda").to(torch.float8_e4m3fn)
    dys = torch.rand(tb, n, device="cuda").t()
    xs = torch.rand(tb, k, device="cuda").t()
    dy16 = torch.randn(t, n, device="cuda").to(torch.bfloat16)
    x16 = torch.randn(t, k, device="cuda").to(torch.bfloat16)
    fp8 = Kernel(args.fp8_bundles / "kragged_fp8_nk_f32_kernel.json")
    bf16 = Kernel(args.bf16_bundles / "kragged_nk_bf16_f32_kernel.json")
    launches = [
        ("fp8 kragged_fp8_nk_f32", lambda: fp8(dy=dy8, x=x8, seg_indptr=indptr,
                                               dy_scale=dys, x_scale=xs, dw=dw)),
        ("bf16 kragged_nk_bf16_f32", lambda: bf16(dy=dy16, x=x16,
                                                  seg_indptr=indptr, dw=dw)),
    ]
    for _, fn in launches:
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    for label, fn in launches:
        print(f"profiling: {label}", flush=True)
        torch.cuda.cudart().cudaProfilerStart()
        fn()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
