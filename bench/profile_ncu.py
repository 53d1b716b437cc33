#!/usr/bin/env python3
"""Launches a few GGEMM kernels and their torch peers once each, between
cudaProfilerStart/Stop, so that `ncu --profile-from-start off` reads the
hardware counters of exactly those launches (issue 11: where does a tile's
time go). Inputs as in bench_e2e.py / check_fp8.py; every launch is
preceded by untimed warm-up launches outside the profiled range.

Run on the device through bench/profile_ncu.sh, which names the metrics.
"""
import argparse
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "test" / "gpu"))
from ggemm.runtime import Kernel  # noqa: E402
import check_fp8  # noqa: E402


def bf16_cases(bundles: Path):
    out = []
    names = ["bench_seg_m128n256_along_m_kernel"]
    for other in ("bench_seg_m128n256_along_m_c2_kernel",
                  "bench_seg_m64n256_pingpong_along_m_kernel"):
        if (bundles / f"{other}.json").exists():
            names.append(other)
    for name in names:
        out += bf16_kernel_cases(bundles, name, peer=name == names[0])
    return out


def bf16_kernel_cases(bundles: Path, name: str, peer: bool):
    out = []
    kernel = Kernel(bundles / f"{name}.json")
    for groups, rows, n, k in ((8, 2048, 7168, 2048), (8, 2048, 4096, 7168)):
        m = groups * rows
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = (torch.randn(groups, n, k, device="cuda") / k ** 0.5).to(torch.bfloat16)
        indptr = torch.arange(0, m + 1, rows, dtype=torch.int32, device="cuda")
        offs = indptr[1:].clone()
        y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        tag = f"bf16 G={groups} M={m} N={n} K={k}"
        out.append((f"{tag} ggemm {name}",
                    lambda kernel=kernel, x=x, w=w, y=y, indptr=indptr:
                    kernel(x=x, w=w, y=y, seg_indptr=indptr)))
        if not peer:
            continue
        out.append((f"{tag} torch._grouped_mm",
                    lambda x=x, w=w, offs=offs:
                    torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)))
    return out


def swizzle_cases(bundles: Path):
    """The 128x256 kernel walked along m, plain and in bands of 8 column
    tiles (swizzle = 8), on the shape where the bands ran slowest (256
    groups of 512 rows, N = 7168, K = 2048) and one where they ran fastest
    (4 groups of 8192 rows, N = 6144, K = 7168): NOTES v20."""
    out = []
    for name in ("bench_seg_m128n256_along_m_kernel",
                 "bench_seg_m128n256_along_m_sw8_kernel"):
        kernel = Kernel(bundles / f"{name}.json")
        for groups, rows, n, k in ((256, 512, 7168, 2048),
                                   (4, 8192, 6144, 7168)):
            m = groups * rows
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            w = (torch.randn(groups, n, k, device="cuda") / k ** 0.5).to(
                torch.bfloat16)
            indptr = torch.arange(0, m + 1, rows, dtype=torch.int32,
                                  device="cuda")
            y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            out.append((f"bf16 G={groups} M={m} N={n} K={k} ggemm {name}",
                        lambda kernel=kernel, x=x, w=w, y=y, indptr=indptr:
                        kernel(x=x, w=w, y=y, seg_indptr=indptr)))
    return out


def fp8_cases(bundles: Path, shape=(8, 4096, 4096, 7168)):
    out = []
    groups, rows, n, k = shape
    kernel = Kernel(bundles / f"fp8_seg_n{n}_k{k}_kernel.json")
    m = groups * rows
    xq, xs, xs_mn, wq, ws, indptr = check_fp8.grouped_operands(groups, rows,
                                                               n, k)
    y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    tag = f"fp8 G={groups} M={m} N={n} K={k}"
    out.append((f"{tag} ggemm",
                lambda: kernel(x=xq, w=wq, x_scale=xs_mn, w_scale=ws,
                               seg_indptr=indptr, y=y)))
    a = xq[:rows]
    sa = check_fp8.mn_major(xs[:rows])
    label, fn, _ = check_fp8.first_peer(check_fp8.blockwise_peers(a, sa, wq[0], ws[0]))
    if fn is not None:
        out.append((f"fp8 M={rows} N={n} K={k} (one group) {label}", fn))
    return out


def fp8_decode_cases(bundles: Path):
    """Dense FP8 at M = 128 (issue 10's decode target, 85 % of HBM on the
    weight bytes): the one-weight kernel (its 128x64 variant) and the
    cuBLAS block-scaled peer, to read where the weight stream stalls."""
    out = []
    m, n, k = 128, 7168, 16384
    kernel = Kernel(bundles / f"fp8_dense_n{n}_k{k}_kernel.json")
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    xq, xs = check_fp8.quantize_rows(x)
    wq, ws = check_fp8.weights(1, n, k)
    xs_mn = check_fp8.mn_major(xs)
    indptr = torch.tensor([0, m], dtype=torch.int32, device="cuda")
    y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    tag = f"fp8 dense M={m} N={n} K={k}"
    out.append((f"{tag} ggemm",
                lambda: kernel(x=xq, w=wq, x_scale=xs_mn, w_scale=ws,
                               seg_indptr=indptr, y=y)))
    label, fn, _ = check_fp8.first_peer(
        check_fp8.blockwise_peers(xq, xs_mn, wq[0], ws[0]))
    if fn is not None:
        out.append((f"{tag} {label}", fn))
    return out


def fp8out_cases(catalog: Path):
    """The bf16 GEMM and the same GEMM with the e4m3 output epilogue
    (bench_fp8_out.py's kernels), on the shape where the fused kernel is
    furthest behind (K = 7168) and the one where it is closest (K = 2048)."""
    import os
    os.environ["GGEMM_CATALOG"] = str(catalog)
    import ggemm
    out = []
    for groups, rows, n, k in ((8, 4096, 2048, 7168), (8, 2048, 7168, 2048)):
        m = groups * rows
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(groups, n, k, device="cuda", dtype=torch.bfloat16) / 16
        seg = torch.arange(0, m + 1, rows, device="cuda", dtype=torch.int32)
        y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        y8, ys = ggemm.segment_matmul(x, w, seg, out_dtype=torch.float8_e4m3fn)
        tag = f"G={groups} M={m} N={n} K={k}"
        out.append((f"{tag} ggemm bf16 y",
                    lambda x=x, w=w, seg=seg, y=y:
                    ggemm.segment_matmul(x, w, seg, out=y)))
        out.append((f"{tag} ggemm e4m3 y",
                    lambda x=x, w=w, seg=seg, y8=y8, ys=ys:
                    ggemm.segment_matmul(x, w, seg, out=y8, out_scale=ys)))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path,
                        help="the bf16 benchmark bundles (left out: FP8 only)")
    parser.add_argument("--swizzle", action="store_true",
                        help="with --bundles: the plain and swizzled 128x256 "
                        "kernels instead of the bf16 cases")
    parser.add_argument("--fp8-bundles", type=Path)
    parser.add_argument("--fp8-decode", action="store_true",
                        help="with --fp8-bundles: dense FP8 at M = 128 "
                        "instead of the grouped shape")
    parser.add_argument("--fp8-shape", default="8,4096,4096,7168",
                        help="with --fp8-bundles: groups,rows per group,n,k "
                        "of the grouped case (fp8_seg_n{n}_k{k}_kernel)")
    parser.add_argument("--fp8out-catalog", type=Path,
                        help="bench_fp8_out.py's catalog: bf16 vs e4m3 y")
    args = parser.parse_args()
    torch.manual_seed(0)
    cases = []
    if args.bundles:
        cases = (swizzle_cases if args.swizzle else bf16_cases)(args.bundles)
    if args.fp8_bundles:
        if args.fp8_decode:
            cases += fp8_decode_cases(args.fp8_bundles)
        else:
            shape = tuple(int(v) for v in args.fp8_shape.split(","))
            cases += fp8_cases(args.fp8_bundles, shape)
    if args.fp8out_catalog:
        cases += fp8out_cases(args.fp8out_catalog)
    for label, fn in cases:
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        print(f"profiling: {label}", flush=True)
        torch.cuda.profiler.start()
        fn()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
