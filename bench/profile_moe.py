#!/usr/bin/env python3
"""One launch each of the MoE up projection's GGEMM kernels under ncu
(DeepSeek-V3-like, 16384 tokens, top-8 of 256 experts): gathered x with the
fused SwiGLU, gathered x alone, SwiGLU alone (permuted x) and the plain GEMM,
so that their counters can be compared (bench/NOTES.md, MoE).

    ncu --profile-from-start off ... python3 bench/profile_moe.py \\
        --catalog .device/moe_catalog
"""
import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "test" / "gpu"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--catalog", type=Path, required=True)
    parser.add_argument("--model", default="deepseek-v3")
    parser.add_argument("--tokens", type=int, default=16384)
    args = parser.parse_args()
    os.environ["GGEMM_CATALOG"] = str(args.catalog)
    import torch
    import ggemm
    import check_moe
    m = check_moe.MODELS[args.model]
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1)
    w13, _ = check_moe.weights_of(m, gen)
    x = torch.randn(args.tokens, m["hidden"], device="cuda",
                    generator=gen).to(torch.bfloat16)
    ids, _ = check_moe.routing(args.tokens, m, gen)
    r = ggemm.sort_by_expert(ids, num_experts=m["experts"])
    xs = x[r.row_indices.long()]
    calls = {
        "gather+swiglu": lambda: ggemm.segment_matmul(
            x, w13, r.seg_indptr, row_indices=r.row_indices,
            activation="swiglu"),
        "gather": lambda: ggemm.segment_matmul(
            x, w13, r.seg_indptr, row_indices=r.row_indices),
        "swiglu": lambda: ggemm.segment_matmul(xs, w13, r.seg_indptr,
                                               activation="swiglu"),
        "plain": lambda: ggemm.segment_matmul(xs, w13, r.seg_indptr),
    }
    for fn in calls.values():  # load every kernel outside the profile
        fn()
    torch.cuda.synchronize()
    for name, fn in calls.items():
        print(f"profiling: {name}", flush=True)
        torch.cuda.cudart().cudaProfilerStart()
        fn()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
