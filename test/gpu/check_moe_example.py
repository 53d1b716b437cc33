#!/usr/bin/env python3
"""GPU check of examples/moe_layer.py: the example's own checks (its
``checks()``: forward and backward against plain torch with both combines,
inference with both combines, expert parallel over 2 simulated ranks) on
a small layer, a Qwen3-MoE-like one and one with DeepSeek-V3's expert
shapes and 64 experts, at a few token counts (1 token leaves most experts
without tokens). Prints a line per case and
``gpu-check-moe-example: N passed, M failed``; with ``--bench`` also the
example's timing of the fused layer against the glued one.

The GPU host has no LLVM: the kernels come from the MoE catalog, whose spec
(test/gpu/check_moe.py --write-spec, test/gpu/build_moe_catalog.sh)
includes this script's :func:`spec`.

    python3 test/gpu/check_moe_example.py --catalog .device/moe_catalog \\
        --report moe-example.md
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "test" / "gpu"))

from check_python import Checker  # noqa: E402
from ggemm.expert_parallel import expert_ranges  # noqa: E402

#: The layers checked (hidden, intermediate per expert, experts, top-k) and
#: their token counts; the example's default sizes are qwen3-moe's.
MODELS = {
    "small": dict(hidden=256, intermediate=192, experts=8, top_k=2,
                  tokens=[1, 5, 300]),
    "qwen3-moe": dict(hidden=2048, intermediate=768, experts=128, top_k=8,
                      tokens=[1, 16, 512, 4096]),
    "deepseek-v3-64e": dict(hidden=7168, intermediate=2048, experts=64,
                            top_k=8, tokens=[1, 16, 512, 2048]),
}
#: Token counts of --bench (the small layer is not timed).
BENCH_TOKENS = [512, 4096, 16384]
#: The simulated ranks of the expert-parallel check.
WORLD_SIZE = 2


def layer_kernels(hidden: int, inter: int, groups: int) -> list:
    """The GEMMs of examples/moe_layer.py's MoELayer holding ``groups``
    experts, forward and backward."""
    h, i = hidden, inter
    seg = dict(op="segment_matmul", dtype="bf16", groups=groups)
    kragged = dict(op="segment_matmul_k", dtype="bf16", groups=groups)
    return [
        # up: gathered token rows, SwiGLU
        dict(seg, n=i, k=h, row_indices=True, activation="swiglu"),
        # down without autograd: weighted rows to their slots, or added
        # atomically onto float32 token rows
        dict(seg, n=h, k=i, row_scale=True, scatter=True),
        dict(seg, n=h, k=i, row_scale=True, scatter=True, accumulate=True,
             atomic=True, out_dtype="f32"),
        # down while autograd records: the weighted rows (torch scatters)
        dict(seg, n=h, k=i, row_scale=True),
        # its backward: z recomputed (f32), dh (w2 read "kn"), dW2
        dict(seg, n=h, k=i, out_dtype="f32"),
        dict(seg, n=i, k=h, weight_layout="kn"),
        dict(kragged, n=h, k=i),
        # the up projection's backward: z recomputed gathered (f32), dx
        # (f32: the gathered rows' sum), dW13
        dict(seg, n=2 * i, k=h, row_indices=True, out_dtype="f32"),
        dict(seg, n=h, k=2 * i, weight_layout="kn", out_dtype="f32"),
        dict(kragged, n=2 * i, k=h),
    ]


def glued_kernels(hidden: int, inter: int, groups: int) -> list:
    """The plain GEMMs of the example's glued layer (the benchmark's peer)
    beyond the fused layer's: up and down, and dx of the up projection."""
    h, i = hidden, inter
    seg = dict(op="segment_matmul", dtype="bf16", groups=groups)
    return [dict(seg, n=2 * i, k=h), dict(seg, n=h, k=i),
            dict(seg, n=h, k=2 * i, weight_layout="kn")]


def spec() -> dict:
    """Every kernel this script's checks and benchmark launch."""
    lines = []
    for m in MODELS.values():
        e = m["experts"]
        lines.append(dict(op="sort_by_expert", num_experts=e,
                          topk=m["top_k"], index_dtype="i32"))
        shards = {end - first for first, end in expert_ranges(e, WORLD_SIZE)}
        for groups in sorted({e} | shards):
            lines += layer_kernels(m["hidden"], m["intermediate"], groups)
        lines += glued_kernels(m["hidden"], m["intermediate"], e)
    return {"format": "bin", "kernels": lines}


def load_example():
    """examples/moe_layer.py as a module (it imports torch and ggemm)."""
    path = ROOT / "examples" / "moe_layer.py"
    module_spec = importlib.util.spec_from_file_location("moe_layer", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def run_checks(check: Checker, seed: int, models=None) -> None:
    import torch
    example = load_example()
    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    torch.manual_seed(seed)
    for name, m in MODELS.items():
        if models and name not in models:
            continue
        layer = example.MoELayer(m["hidden"], m["intermediate"],
                                 m["experts"], m["top_k"],
                                 device=torch.device("cuda"))
        for check_name, fn in example.checks(layer, m["tokens"], gen, name):
            check.run(check_name, fn)
        del layer
        torch.cuda.empty_cache()


def run_bench(lines, seed, repeats, models=None):
    import torch
    example = load_example()
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed + 1)
    for name, m in MODELS.items():
        if name == "small" or (models and name not in models):
            continue
        layer = example.MoELayer(m["hidden"], m["intermediate"],
                                 m["experts"], m["top_k"],
                                 device=torch.device("cuda"))
        print(f"{name}:", flush=True)
        lines += ["", f"{name} (H={m['hidden']}, I={m['intermediate']}, "
                  f"E={m['experts']}, top-{m['top_k']}): median ms of "
                  f"{repeats} runs, fresh random inputs, CUDA events", ""]
        lines += example.bench(layer, BENCH_TOKENS, repeats, gen)
        del layer
        torch.cuda.empty_cache()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--catalog", type=Path)
    parser.add_argument("--write-spec", type=Path)
    parser.add_argument("--bench", action="store_true")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--models", nargs="*", choices=list(MODELS),
                        help="check (and time) only these layers (default: "
                        "all)")
    args = parser.parse_args()
    if args.write_spec:
        args.write_spec.write_text(json.dumps(spec(), indent=1) + "\n")
        return 0
    import torch
    if args.catalog:
        os.environ["GGEMM_CATALOG"] = str(args.catalog)
    check = Checker(None)
    run_checks(check, args.seed, args.models)
    summary = (f"gpu-check-moe-example: {check.passed} passed, "
               f"{check.failed} failed")
    print(summary, flush=True)
    bench_lines = []
    if args.bench:
        torch.cuda.empty_cache()
        run_bench(bench_lines, args.seed, args.repeats, args.models)
    if args.report:
        text = ["# examples/moe_layer.py on the GPU "
                "(test/gpu/check_moe_example.py)", "",
                f"- device: {torch.cuda.get_device_name()}",
                f"- date: {datetime.date.today().isoformat()}",
                f"- commit: {os.environ.get('GGEMM_COMMIT', 'unknown')}",
                f"- seed: {args.seed}", "", "```"] + check.lines + [
                    "```", "", summary, ""]
        if bench_lines:
            text += ["## Fused against glued"] + bench_lines
        args.report.write_text("\n".join(text) + "\n")
    return 0 if check.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
