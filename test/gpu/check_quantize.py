#!/usr/bin/env python3
"""GPU check and benchmark of GGEMM's FP8 quantize kernel
(``ggemm.quantize``, ``method="kernel"``) on Hopper.

Every case draws fresh random bf16 (or f16) inputs and requires the kernel's
outputs to equal, bit for bit, both torch paths:

- ``ggemm.quantize(x, method="torch")``, the package's torch reference, and
- DeepGEMM's ``per_token_cast_to_fp8`` / ``per_block_cast_to_fp8`` written
  out here as DeepGEMM writes them (``x * (448 / amax)``, amax clamped to
  1e-4), so that the reference itself is checked;

the e4m3 bytes (compared as uint8) and the f32 scales (compared as int32
bit patterns), in the layouts the FP8 GEMMs read: 1x128 scales MN-major
(strides (1, M_pad), M_pad a multiple of 4), 128x128 scales row-major
[(G,) ceil(N / 128), K / 128]. The outputs start poisoned (NaN bytes and
scales), so an element the kernel does not write fails.

Cases: 1x128 with rows 1, 7, 300, 4096, 16384 and K 7168, 2048; 1x128
over [G, rows, K] through the kernel directly (the Python op takes
[M, K]), MN-major scales per group whose padding rows must stay
poisoned; f16 input;
all-zero blocks (some -0.0), blocks below the 1e-4 floor, one huge value
among tiny ones (FP8 subnormals), values that scale onto rounding ties;
128x128 weights [N, K] and [G, N, K] with a partial last row block; an
empty x; a CUDA-graph replay with x changed in place; and K = 7000 (not a
multiple of 128), which must raise ``ggemm.ArgumentError`` naming K.

With ``--bench`` it times the kernel against the torch path (medians of
CUDA-graph replays timed with CUDA events) at the large sizes (and, for
latency, at 1, 16 and 128 rows), and reports
GB/s of the bytes moved (x read, q and the scales written) and that as a
fraction of a device-to-device copy of the same number of bytes measured
in the same run, and as a fraction of a plain cast of x to e4m3 (torch's
elementwise copy: the same x and q streams, no scales).

Prints a line per case, ``gpu-check-quantize: N passed, M failed`` and,
with ``--bench``, ``quantize-bench: min fraction of copy bandwidth F over S
sizes`` and ``quantize-bench: min fraction of an e4m3 cast's bandwidth F
over S sizes``.

The GPU host has no LLVM: the kernels come from a catalog built on the CPU
machine from this script's spec (``bash test/gpu/build_bundles.sh``, or
``bash test/gpu/build_python_catalog.sh build .device/quantize_catalog
test/gpu/check_quantize.py``).

    python3 test/gpu/check_quantize.py --catalog .device/quantize_catalog \\
        --bench --report bench/results/quantize.md
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "test" / "gpu"))
from check_python import Checker  # noqa: E402

FP8_MAX = 448.0
ROWS = [1, 7, 4096, 16384]
KS = [7168, 2048]


def spec() -> dict:
    """The quantize kernels the checks use (every size is dynamic)."""
    return {"format": "bin", "kernels": [
        {"op": "quantize", "x_dtype": ["bf16", "f16"],
         "scale_block": "1x128", "rank": 2},
        {"op": "quantize", "x_dtype": "bf16", "scale_block": "1x128",
         "rank": 3},
        {"op": "quantize", "x_dtype": "bf16", "scale_block": "128x128",
         "rank": [2, 3]},
    ]}


# -- DeepGEMM's casts, as DeepGEMM writes them --------------------------------

def deepgemm_per_token(x):
    """DeepGEMM's per_token_cast_to_fp8: (q [M, K], scales [M, K / 128])."""
    import torch
    m, k = x.shape
    x_view = x.view(m, -1, 128)
    x_amax = x_view.abs().float().amax(dim=2).view(m, -1).clamp(1e-4)
    q = (x_view * (448.0 / x_amax.unsqueeze(2))).to(torch.float8_e4m3fn)
    return q.view(m, k), x_amax / 448.0


def deepgemm_per_block(x):
    """DeepGEMM's per_block_cast_to_fp8 over the last two dimensions (rows
    padded with zeros to a multiple of 128): (q, scales)."""
    import torch
    *lead, m, k = x.shape
    pad_m = -(-m // 128) * 128
    x_padded = torch.zeros((*lead, pad_m, k), dtype=x.dtype, device=x.device)
    x_padded[..., :m, :] = x
    x_view = x_padded.view(*lead, pad_m // 128, 128, k // 128, 128)
    x_amax = x_view.abs().float().amax(dim=(-3, -1), keepdim=True)
    x_amax = x_amax.clamp(1e-4)
    x_scaled = (x_view * (448.0 / x_amax)).to(torch.float8_e4m3fn)
    q = x_scaled.view_as(x_padded)[..., :m, :].contiguous()
    scales = (x_amax / 448.0).view(*lead, pad_m // 128, k // 128)
    return q, scales


# -- comparisons ---------------------------------------------------------------

class Failure(Exception):
    pass


def same_bytes(name, got, want):
    import torch
    a = got.contiguous().view(torch.uint8)
    b = want.contiguous().view(torch.uint8)
    if a.shape != b.shape:
        raise Failure(f"{name}: shape {list(a.shape)} != {list(b.shape)}")
    bad = (a != b).nonzero()
    if bad.numel():
        first = tuple(bad[0].tolist())
        raise Failure(f"{name}: {bad.shape[0]} of {a.numel()} bytes differ, "
                      f"first at {first}: {int(a[first]):#04x} != "
                      f"{int(b[first]):#04x}")


def same_scales(name, got, want):
    import torch
    if tuple(got.shape) != tuple(want.shape):
        raise Failure(f"{name}: shape {list(got.shape)} != "
                      f"{list(want.shape)}")
    a = got.float().contiguous().view(torch.int32)
    b = want.float().contiguous().view(torch.int32)
    bad = (a != b).nonzero()
    if bad.numel():
        first = tuple(bad[0].tolist())
        raise Failure(f"{name}: {bad.shape[0]} of {a.numel()} scales differ, "
                      f"first at {first}: {got[first].item()!r} != "
                      f"{want[first].item()!r}")


def check_layout(x, scales, block):
    """The scales are in the layout the FP8 GEMMs read, without a copy."""
    *lead, rows, k = x.shape
    if block == (1, 128):
        if scales.shape != (rows, k // 128):
            raise Failure(f"scales shape {list(scales.shape)}")
        if scales.stride(0) != 1 or scales.stride(1) % 4 or \
                scales.stride(1) < rows:
            raise Failure(f"scales not MN-major: strides {scales.stride()}")
    else:
        want = (*lead, -(-rows // 128), k // 128)
        if tuple(scales.shape) != want or not scales.is_contiguous():
            raise Failure(f"scales {list(scales.shape)} strides "
                          f"{scales.stride()}, expected row-major {want}")


def poison(q, scales):
    q.view(__import__("torch").uint8).fill_(0x7F)  # e4m3 NaN
    scales.fill_(float("nan"))


def check_one(x, block):
    """The kernel against both references; returns a note."""
    import torch
    import ggemm
    q, s = ggemm.quantize(x, block=block, method="kernel")
    check_layout(x, s, block)
    # Run again into poisoned outputs of the same layout: every element
    # must be written by this launch.
    poison(q, s)
    from ggemm.cache import kernel_for
    from ggemm.problem import QuantizeProblem
    from ggemm.ops import dtype_name
    name = f"{block[0]}x{block[1]}"
    kernel = kernel_for(QuantizeProblem(dtype_name(x), name, rank=x.dim()))
    if x.numel():
        kernel.launch({"x": x.contiguous(), "q": q, "scale": s})
    tq, ts = ggemm.quantize(x, block=block, method="torch")
    torch.cuda.synchronize()
    same_bytes("q vs torch path", q, tq)
    same_scales("scales vs torch path", s, ts)
    if x.dtype == torch.bfloat16 and x.numel():
        dq, ds = (deepgemm_per_token(x) if block == (1, 128)
                  else deepgemm_per_block(x))
        same_bytes("q vs DeepGEMM's cast", q, dq)
        same_scales("scales vs DeepGEMM's cast", s, ds)
    return f"{q.numel()} bytes, {s.numel()} scales bitwise equal"


def check_grouped_tokens(x):
    """1x128 over [G, rows, K] (the masked layout's activations), through
    the kernel directly (the Python op takes [M, K]): each group's scales
    MN-major in a buffer padded to a multiple of 4 rows, whose pad must
    stay poisoned; each group against the torch path of its [rows, K]."""
    import torch
    import ggemm
    from ggemm.cache import kernel_for
    from ggemm.problem import QuantizeProblem
    g, rows, k = x.shape
    pad = -(-rows // 4) * 4
    q = torch.empty(x.shape, dtype=torch.float8_e4m3fn, device="cuda")
    buf = torch.empty(g, k // 128, pad, device="cuda")
    s = buf.transpose(1, 2)[:, :rows]
    poison(q, buf)
    kernel = kernel_for(QuantizeProblem("bf16", "1x128", rank=3))
    kernel.launch({"x": x, "q": q, "scale": s})
    torch.cuda.synchronize()
    for i in range(g):
        tq, ts = ggemm.quantize(x[i], method="torch")
        same_bytes(f"group {i} q vs torch path", q[i], tq)
        same_scales(f"group {i} scales vs torch path", s[i], ts)
    if pad > rows and not torch.isnan(buf[:, :, rows:]).all():
        raise Failure("a scale of the padding rows was written")
    return f"{q.numel()} bytes, {g * rows * (k // 128)} scales bitwise equal"


# -- inputs --------------------------------------------------------------------

def fresh(shape, gen, dtype=None):
    import torch
    dtype = dtype or torch.bfloat16
    # Magnitudes spread over several binades, as activations are.
    x = torch.randn(shape, device="cuda", generator=gen)
    x = x * torch.exp2(torch.randint(-6, 7, shape[:-1] + (1,), device="cuda",
                                     generator=gen).float())
    return x.to(dtype)


def special(rows, k, gen):
    """Zero blocks (with -0.0), blocks under the floor, a huge value among
    tiny ones, and values that land on rounding ties after scaling."""
    import torch
    x = fresh((rows, k), gen)
    kb = k // 128
    view = x.view(rows, kb, 128)
    view[::3, 0] = 0.0
    view[1::3, min(1, kb - 1)] = -0.0
    view[2::5, kb - 1] = (torch.rand(view[2::5, kb - 1].shape, device="cuda",
                                     generator=gen) * 5e-5).bfloat16()
    if rows > 3:
        view[3, 0] = 1e-3
        view[3, 0, 7] = 3e4
    # A maximum of 3.5 makes the factor (1 / 3.5) * 448 exactly 128 in
    # f32: the other entries, midpoints of adjacent e4m3 values over 128
    # (exact in bf16), scale onto rounding ties, which go to the even code.
    if rows > 4:
        grid = torch.arange(127, dtype=torch.uint8, device="cuda") \
            .view(torch.float8_e4m3fn).float()
        pick = torch.randint(0, 126, (127,), device="cuda", generator=gen)
        sign = torch.randint(0, 2, (127,), device="cuda",
                             generator=gen) * 2 - 1
        ties = (grid[pick] + grid[pick + 1]) / 2 / 128 * sign
        view[4, 0] = torch.cat([torch.tensor([3.5], device="cuda"),
                                ties]).bfloat16()
    return x


# -- the checks ----------------------------------------------------------------

def run_checks(lines, seed):
    import torch
    import ggemm
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    check = Checker(None, width=52, lines=lines)
    case = check.run

    for k in KS:
        for rows in ROWS:
            x = fresh((rows, k), gen)
            case(f"1x128 bf16 [{rows}, {k}]",
                 lambda x=x: check_one(x, (1, 128)))
    case("1x128 f16 [7, 7168]",
         lambda: check_one(fresh((7, 7168), gen, torch.float16), (1, 128)))
    case("1x128 f16 [4096, 2048]",
         lambda: check_one(fresh((4096, 2048), gen, torch.float16), (1, 128)))
    for rows, k in ((7, 2048), (4096, 7168)):
        x = special(rows, k, gen)
        case(f"1x128 zero/tiny/huge/tie blocks [{rows}, {k}]",
             lambda x=x: check_one(x, (1, 128)))
    case("1x128 no rows [0, 7168]",
         lambda: check_one(fresh((0, 7168), gen), (1, 128)))
    x = fresh((300, 2048), gen)
    case("1x128 bf16 [300, 2048]", lambda: check_one(x, (1, 128)))
    for shape in ((3, 13, 2048), (4, 300, 7168)):
        x = fresh(shape, gen)
        case(f"1x128 bf16 groups {list(shape)}",
             lambda x=x: check_grouped_tokens(x))
    for shape in ((4096, 7168), (7168, 2048), (300, 256), (4, 2112, 7168),
                  (8, 384, 2048)):
        x = fresh(shape, gen)
        case(f"128x128 bf16 {list(shape)}",
             lambda x=x: check_one(x, (128, 128)))
    w = special(300, 2048, gen)
    case("128x128 zero/tiny/huge/tie blocks [300, 2048]",
         lambda: check_one(w, (128, 128)))

    def k_not_multiple():
        x = fresh((16, 7000), gen)
        try:
            ggemm.quantize(x, method="kernel")
        except ggemm.ArgumentError as error:
            if "7000" not in str(error) or "128" not in str(error):
                raise Failure(f"unclear error: {error}") from None
            return f"ArgumentError: {error}"
        raise Failure("K = 7000 was accepted")
    case("K = 7000 is refused", k_not_multiple)

    def graph_replay():
        x = fresh((4096, 7168), gen)
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            ggemm.quantize(x, method="kernel")  # loads the kernel
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            q, s = ggemm.quantize(x, method="kernel")
        x.copy_(special(4096, 7168, gen))
        graph.replay()
        torch.cuda.synchronize()
        tq, ts = ggemm.quantize(x, method="torch")
        same_bytes("q after replay", q, tq)
        same_scales("scales after replay", s, ts)
        return "replay bitwise equal to torch on new x"
    case("CUDA graph replay [4096, 7168]", graph_replay)
    return check.passed, check.failed


# -- the benchmark -------------------------------------------------------------

def time_ms(fn, replays=20, trials=7):
    """Median milliseconds of one `fn`, replayed from a CUDA graph (so that
    Python's launch overhead does not count) and timed with CUDA events."""
    import torch
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for _ in range(replays):
            fn()
    times = []
    for _ in range(trials):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / replays)
    return statistics.median(times)


def run_bench(lines, seed):
    import torch
    import ggemm
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed + 1)
    rows_out = []
    fractions = []
    cast_fractions = []
    sizes = [((rows, k), (1, 128)) for rows in (4096, 16384) for k in KS]
    sizes += [((7168, 2048), (128, 128)), ((8, 2048, 7168), (128, 128))]
    for shape, block in sizes:
        x = fresh(shape, gen)
        numel = x.numel()
        rows = numel // shape[-1]
        blocks = (rows // block[0]) * (shape[-1] // 128)
        moved = 2 * numel + numel + 4 * blocks  # x read, q and scales written
        src = torch.empty(moved // 2, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        # A copy that reads and writes `moved` bytes in all.
        copy_ms = time_ms(lambda: dst.copy_(src))
        # A plain cast of x to e4m3 (no scaling): the same read and write
        # streams as the kernel's x and q, without the scales.
        cast_out = torch.empty(shape, dtype=torch.float8_e4m3fn,
                               device="cuda")
        cast_ms = time_ms(lambda: cast_out.copy_(x))
        kernel_ms = time_ms(
            lambda: ggemm.quantize(x, block=block, method="kernel"))
        torch_ms = time_ms(
            lambda: ggemm.quantize(x, block=block, method="torch"))
        gbps = moved / kernel_ms / 1e6
        fraction = copy_ms / kernel_ms
        fractions.append(fraction)
        cast_moved = 3 * numel
        cast_gbps = cast_moved / cast_ms / 1e6
        cast_fractions.append(gbps / cast_gbps)
        row = (f"| {block[0]}x{block[1]} | {list(shape)} | {moved / 1e6:.1f} "
               f"| {kernel_ms * 1e3:.1f} | {gbps:.0f} | "
               f"{moved / copy_ms / 1e6:.0f} | {fraction:.2f} | "
               f"{cast_gbps:.0f} | {gbps / cast_gbps:.2f} | "
               f"{torch_ms * 1e3:.1f} | {torch_ms / kernel_ms:.1f}x |")
        rows_out.append(row)
        print(row, flush=True)
        del src, dst, x, cast_out
        torch.cuda.empty_cache()
    header = ["| block | x | MB moved | kernel µs | kernel GB/s | copy GB/s "
              "| fraction of copy | e4m3 cast GB/s | fraction of cast "
              "| torch µs | speedup |",
              "|" + "---|" * 11]
    lines += header + rows_out
    summary = (f"quantize-bench: min fraction of copy bandwidth "
               f"{min(fractions):.2f} over {len(fractions)} sizes")
    cast_summary = (f"quantize-bench: min fraction of an e4m3 cast's "
                    f"bandwidth {min(cast_fractions):.2f} over "
                    f"{len(cast_fractions)} sizes")
    lines += ["", summary, cast_summary]
    print(summary, flush=True)
    print(cast_summary, flush=True)
    # Decode-sized inputs: a launch's latency, not bandwidth.
    lines += ["", "Few tokens (1x128; latency, no bandwidth claim):", "",
              "| x | kernel µs | torch µs |", "|---|---|---|"]
    for rows in (1, 16, 128):
        x = fresh((rows, 7168), gen)
        kernel_ms = time_ms(
            lambda: ggemm.quantize(x, block=(1, 128), method="kernel"))
        torch_ms = time_ms(
            lambda: ggemm.quantize(x, block=(1, 128), method="torch"))
        lines.append(f"| [{rows}, 7168] | {kernel_ms * 1e3:.1f} | "
                     f"{torch_ms * 1e3:.1f} |")
        print(lines[-1], flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--catalog", type=Path)
    parser.add_argument("--write-spec", type=Path)
    parser.add_argument("--bench", action="store_true")
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    if args.write_spec:
        args.write_spec.write_text(json.dumps(spec(), indent=1) + "\n")
        return 0
    import torch
    if args.catalog:
        os.environ["GGEMM_CATALOG"] = str(args.catalog)
    lines = []
    passed, failed = run_checks(lines, args.seed)
    summary = f"gpu-check-quantize: {passed} passed, {failed} failed"
    print(summary, flush=True)
    bench_lines = []
    if args.bench:
        torch.cuda.empty_cache()
        run_bench(bench_lines, args.seed)
    if args.report:
        text = ["# FP8 quantize kernel (test/gpu/check_quantize.py)", "",
                f"- device: {torch.cuda.get_device_name()}",
                f"- date: {datetime.date.today().isoformat()}",
                f"- commit: {os.environ.get('GGEMM_COMMIT', 'unknown')}",
                f"- seed: {args.seed}", "", "```"] + lines + \
            ["```", "", summary, ""]
        if bench_lines:
            text += ["## Speed (medians of CUDA-graph replays)", ""]
            text += bench_lines
        args.report.write_text("\n".join(text) + "\n")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
