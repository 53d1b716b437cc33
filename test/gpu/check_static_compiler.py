#!/usr/bin/env python3
"""The self-contained compiler library compiling kernels on a GPU host.

scripts/build-static-capi.sh links libGGemmCAPI.so with Debian's static MLIR
and LLVM archives; the GPU machine has no LLVM. This check points
GGEMM_COMPILER_LIB at that library (no catalog, a fresh kernel cache) and
calls ggemm's ops on torch tensors, so every kernel is compiled on the GPU
host itself on first use (IR -> PTX in process; the driver JIT-compiles the
PTX). Each result is checked against torch in float32 (relative error
< 1e-2, no NaN poison left). Cold (compile + load + launch) and warm call
times are reported. Closing line: `gpu-check-static-compiler: N passed,
M failed`.

    GGEMM_COMPILER_LIB=/tmp/ggemm-static/libGGemmCAPI.so \\
        python3 test/gpu/check_static_compiler.py --report static.md
"""
import argparse
import datetime
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))


def rel_err(got, ref):
    return ((got.float() - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path)
    parser.add_argument("--commit", default=os.environ.get("GGEMM_COMMIT", "unknown"))
    args = parser.parse_args()
    library = os.environ.get("GGEMM_COMPILER_LIB")
    if not library or not Path(library).is_file():
        print("GGEMM_COMPILER_LIB must name the static libGGemmCAPI.so")
        return 2
    os.environ.pop("GGEMM_CATALOG", None)
    os.environ["GGEMM_CACHE_DIR"] = tempfile.mkdtemp(prefix="ggemm-cache-")
    found = subprocess.run("ldconfig -p | grep -E 'libMLIR|libLLVM'",
                           shell=True, capture_output=True, text=True).stdout
    names = sorted({line.split()[0] for line in found.splitlines() if line.strip()})
    llvm_here = f"{len(names)} ({', '.join(names) or 'none'})"
    deps = subprocess.run(["ldd", library], capture_output=True, text=True).stdout
    if "libLLVM" in deps or "libMLIR" in deps:
        print(f"{library} links a shared LLVM/MLIR library:\n{deps}")
        return 2
    import ggemm
    from ggemm.compiler import load_compiler

    loaded = load_compiler()._name
    torch.manual_seed(0)
    dev = "cuda"
    results = []

    def case(label, run, reference):
        start = time.perf_counter()
        try:
            got = run()
            torch.cuda.synchronize()
            cold = time.perf_counter() - start
            err = rel_err(got, reference())
            nan = bool(torch.isnan(got.float()).any())
            start = time.perf_counter()
            for _ in range(10):
                run()
            torch.cuda.synchronize()
            warm = (time.perf_counter() - start) / 10
            ok = err < 1e-2 and not nan
            detail = f"rel err {err:.1e}{', NaN left' if nan else ''}"
        except Exception as exc:  # noqa: BLE001 - report every failure
            ok, cold, warm, detail = False, float("nan"), float("nan"), f"{type(exc).__name__}: {exc}"
        results.append((label, ok, cold, warm, detail))
        print(f"{label:55s} {'PASS' if ok else 'FAIL'} cold {cold:7.3f} s "
              f"warm {warm * 1e3:7.3f} ms  {detail}", flush=True)

    # Segment matmul, bf16, dynamic rows: a 4-variant bundle.
    g, n, k = 8, 4096, 7168
    lengths = [300, 0, 17, 1000, 64, 5, 700, 128]
    offsets = [0]
    for length in lengths:
        offsets.append(offsets[-1] + length)
    x = torch.randn(offsets[-1], k, device=dev).to(torch.bfloat16)
    w = (torch.randn(g, n, k, device=dev) / k ** 0.5).to(torch.bfloat16)
    seg = torch.tensor(offsets, dtype=torch.int32, device=dev)

    def seg_ref():
        return torch.cat([x[offsets[i]:offsets[i + 1]].float() @ w[i].float().t()
                          for i in range(g)])
    case("segment_matmul bf16 G=8 N=4096 K=7168",
         lambda: ggemm.segment_matmul(x, w, seg), seg_ref)

    # Masked decode with DeepGEMM's hint: the swap-AB variant.
    gm, mmax, nm, km = 6, 128, 7168, 2048
    counts = [20, 14, 26, 0, 21, 17]
    xm = torch.randn(gm, mmax, km, device=dev).to(torch.bfloat16)
    wm = (torch.randn(gm, nm, km, device=dev) / km ** 0.5).to(torch.bfloat16)
    mm = torch.tensor(counts, dtype=torch.int32, device=dev)

    def masked_run():
        out = ggemm.masked_matmul(xm, wm, mm, expected_m=20)
        return torch.cat([out[i, :c] for i, c in enumerate(counts)])

    def masked_ref():
        return torch.cat([xm[i, :c].float() @ wm[i].float().t()
                          for i, c in enumerate(counts)])
    case("masked_matmul bf16 expected_m=20 (swap-AB) N=7168 K=2048",
         masked_run, masked_ref)

    # Batched f16 with bias and silu.
    b, mb, nb, kb = 4, 100, 384, 512
    xb = torch.randn(b, mb, kb, device=dev).to(torch.float16)
    wb = (torch.randn(b, nb, kb, device=dev) / kb ** 0.5).to(torch.float16)
    bias = torch.randn(b, nb, device=dev)

    def batched_ref():
        return torch.nn.functional.silu(
            torch.bmm(xb.float(), wb.float().transpose(1, 2)) + bias[:, None, :])
    case("batched_matmul f16 bias+silu B=4 M=100 N=384 K=512",
         lambda: ggemm.batched_matmul(xb, wb, bias=bias, activation="silu"),
         batched_ref)

    kernels = sum(1 for _ in Path(os.environ["GGEMM_CACHE_DIR"]).rglob("*.ptx"))
    passed = sum(ok for _, ok, *_ in results)
    failed = len(results) - passed
    summary = f"gpu-check-static-compiler: {passed} passed, {failed} failed"
    print(f"compiled {kernels} PTX kernels on this host; LLVM/MLIR shared "
          f"libraries known to ldconfig: {llvm_here}", flush=True)
    print(summary, flush=True)
    if args.report:
        props = torch.cuda.get_device_properties(0)
        lines = [
            "# Compiling on the GPU host with the self-contained compiler library",
            "",
            f"- device: {props.name} ({props.multi_processor_count} SMs), torch "
            f"{torch.__version__}, CUDA {torch.version.cuda}",
            f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
            f"- commit: {args.commit}",
            "- library: scripts/build-static-capi.sh (Debian's static MLIR/LLVM "
            f"archives linked in), loaded from {loaded}",
            f"- LLVM/MLIR shared libraries on this host (ldconfig -p): {llvm_here}",
            "- script: test/gpu/check_static_compiler.py (no catalog, a fresh "
            "kernel cache: every kernel compiled here on first use; IR -> PTX in "
            "process, the driver JIT-compiles the PTX; checked against torch in "
            "float32, rel err < 1e-2)",
            "",
            "Run-time dependencies (ldd):",
            "",
            "```",
            deps.strip(),
            "```",
            "",
            "| call | result | cold (compile + load + run) s | warm ms | detail |",
            "|---|---|---|---|---|",
        ]
        for label, ok, cold, warm, detail in results:
            lines.append(f"| {label} | {'PASS' if ok else 'FAIL'} | {cold:.3f} | "
                         f"{warm * 1e3:.3f} | {detail} |")
        lines += ["", f"PTX kernels compiled on this host: {kernels}", "", summary, ""]
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text("\n".join(lines))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
