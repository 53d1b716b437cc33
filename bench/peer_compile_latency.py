#!/usr/bin/env python3
"""Compile latency of a peer, Triton, on the GPU host: the compile-latency
table's peer column (issue 14; bench/compile_latency.py measures GGEMM).

Times the first call of a Triton GEMM kernel per configuration with an empty
cache (Triton's front end, its MLIR passes, LLVM's NVPTX back end and
ptxas: a cubin, like GGEMM's `format=bin`), then the call that finds it
on disk in a new process (`--phase warm` with the same `--cache-dir`), and
an in-memory hit. The kernel is a plain tiled GEMM (`tl.dot` over a K
loop, optional silu), in bf16 and in FP8 (e4m3, K-major B), at the tile
shapes a grouped GEMM uses; 16 configurations, each a distinct compile.
Each time is one call with a CUDA synchronisation after it, minus nothing:
the kernels run for microseconds.

    python3 bench/peer_compile_latency.py --cache-dir /tmp/tc --phase cold --report cold.md
    python3 bench/peer_compile_latency.py --cache-dir /tmp/tc --phase warm --report warm.md
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, required=True,
                        help="Triton's cache (TRITON_CACHE_DIR): empty for "
                        "--phase cold, the cold phase's for --phase warm")
    parser.add_argument("--phase", choices=("cold", "warm"), required=True)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--commit", default=os.environ.get("GGEMM_COMMIT", "unknown"))
    args = parser.parse_args()
    if args.phase == "cold" and args.cache_dir.exists() and any(args.cache_dir.iterdir()):
        print(f"error: --phase cold needs an empty cache, {args.cache_dir} is not",
              file=sys.stderr)
        return 2
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    # Before Triton is imported: it reads the cache location then.
    os.environ["TRITON_CACHE_DIR"] = str(args.cache_dir)
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def gemm(a, b, c, M, N, K, sam, sak, sbn, sbk, scm, scn,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
             BLOCK_K: tl.constexpr, SILU: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            ka = k0 + rk
            x = tl.load(a + rm[:, None] * sam + ka[None, :] * sak,
                        mask=(rm[:, None] < M) & (ka[None, :] < K), other=0.0)
            w = tl.load(b + rn[None, :] * sbn + ka[:, None] * sbk,
                        mask=(rn[None, :] < N) & (ka[:, None] < K), other=0.0)
            acc = tl.dot(x, w, acc)
        if SILU:
            acc = acc * tl.sigmoid(acc)
        tl.store(c + rm[:, None] * scm + rn[None, :] * scn,
                 acc.to(c.dtype.element_ty),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))

    @triton.jit
    def touch(p):
        tl.store(p, 1.0)

    # The process's first compile also initialises Triton (its back end,
    # the driver): timed apart, on a one-store kernel.
    scratch = torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    start = time.perf_counter()
    touch[(1,)](scratch)
    torch.cuda.synchronize()
    init_ms = (time.perf_counter() - start) * 1e3

    m, n, k = 512, 2048, 1024
    configs = []
    for dtype in ("bf16", "f8e4m3"):
        for bm, bn, bk, stages, warps in ((128, 256, 64, 3, 8), (128, 128, 64, 4, 4),
                                          (64, 128, 64, 4, 4), (128, 64, 64, 4, 4)):
            for silu in (False, True):
                configs.append((dtype, bm, bn, 128 if dtype == "f8e4m3" else bk,
                                stages, warps, silu))
    a16 = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w16 = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    operands = {"bf16": (a16, w16),
                "f8e4m3": (a16.to(torch.float8_e4m3fn), w16.to(torch.float8_e4m3fn))}
    y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()

    def call(cfg):
        dtype, bm, bn, bk, stages, warps, silu = cfg
        x, w = operands[dtype]
        grid = (triton.cdiv(m, bm), triton.cdiv(n, bn))
        gemm[grid](x, w, y, m, n, k, x.stride(0), x.stride(1), w.stride(0),
                   w.stride(1), y.stride(0), y.stride(1), BLOCK_M=bm,
                   BLOCK_N=bn, BLOCK_K=bk, SILU=silu, num_stages=stages,
                   num_warps=warps)

    rows, first, hits = [], [], []
    for cfg in configs:
        start = time.perf_counter()
        call(cfg)
        torch.cuda.synchronize()
        first_ms = (time.perf_counter() - start) * 1e3
        # In-memory hits: the same call again (Python dispatch and launch).
        again = []
        for _ in range(20):
            start = time.perf_counter()
            call(cfg)
            torch.cuda.synchronize()
            again.append((time.perf_counter() - start) * 1e3)
        hit_ms = statistics.median(again)
        first.append(first_ms)
        hits.append(hit_ms)
        dtype, bm, bn, bk, stages, warps, silu = cfg
        rows.append(f"| {dtype} | {bm}x{bn}x{bk} | {stages} | {warps} | "
                    f"{'silu' if silu else 'none'} | {first_ms:.0f} | {hit_ms:.3f} |")
        print(rows[-1], flush=True)
    props = torch.cuda.get_device_properties(0)
    what = ("first call with an empty cache (compile to cubin, load, run)"
            if args.phase == "cold" else
            "first call in a new process, the cubin on disk (cache hit, load, run)")
    lines = [
        f"# Triton compile latency ({args.phase}), the peer of bench/compile_latency.py",
        "",
        f"- device: {props.name} host ({os.cpu_count()} CPUs), torch "
        f"{torch.__version__}, Triton {triton.__version__}",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- commit: {args.commit}",
        f"- script: bench/peer_compile_latency.py --phase {args.phase}",
        f"- kernel: a tiled GEMM (tl.dot over K, optional silu), {m}x{n}x{k}; "
        f"'first call': {what}; 'hit': median of 20 more calls (in memory)",
        f"- the process's first Triton call (a one-store kernel: Triton's and "
        f"the driver's initialisation and that kernel), before the table: "
        f"{init_ms:.0f} ms",
        "",
        "| dtype | tile (MxNxK) | stages | warps | epilogue | first call ms | hit ms |",
        "|---|---|---|---|---|---|---|",
    ] + rows + [
        "",
        f"triton-{args.phase}: median first call {statistics.median(first):.0f} ms "
        f"per kernel (min {min(first):.0f}, max {max(first):.0f}) over "
        f"{len(first)} kernels, in-memory hit {statistics.median(hits):.3f} ms",
    ]
    print(lines[-1])
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
