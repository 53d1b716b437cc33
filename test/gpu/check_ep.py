#!/usr/bin/env python3
"""GPU check of expert parallelism (issue 16): examples/moe_layer.py's
``ExpertParallelMoE`` over the GPUs of one host, one process per GPU
(``torchrun``), tokens exchanged with ``all_to_all_single`` over NCCL,
against the same layer on one GPU and the float32 torch reference, on the
same inputs and routing; then its forward timed phase by phase (route,
dispatch, experts, combine) at DeepSeek-V3-like sizes, next to the whole
layer on one GPU.

Checks (the example's ``expert_parallel_checks``, per layer of
check_moe_example.MODELS, tokens per rank as listed there): forward and
backward (output, x's, the router's and each rank's expert weights'
gradients), forward without autograd twice (bitwise equal), ranks with
unequal token counts, and the last rank's experts getting no token (it
receives no rows). Criterion: relative error < 1e-2 (bf16) against both
references, on every rank. Prints ``gpu-check-ep: N passed, M failed``.

The GPU host has no LLVM: the kernels come from the MoE catalog
(test/gpu/build_moe_catalog.sh; check_moe.py's spec includes :func:`spec`).
NVLink multicast stays off (the example sets NCCL_NVLS_ENABLE=0,
TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1 before NCCL
starts; run_on_device.sh sets them too).

    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \\
    python3 -m torch.distributed.run --standalone --nproc-per-node 2 \\
        test/gpu/check_ep.py --catalog .device/moe_catalog --report ep.md
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "test" / "gpu"))

from check_python import Checker  # noqa: E402
import check_moe_example  # noqa: E402
from ggemm.expert_parallel import expert_ranges  # noqa: E402

#: The layer timed (DeepSeek-V3's MoE: hidden 7168, 2048 per expert, 256
#: experts, top-8), tokens per rank, and the ranks its kernels are built
#: for.
BENCH_MODEL = dict(hidden=7168, intermediate=2048, experts=256, top_k=8)
BENCH_TOKENS = [512, 4096, 16384]
WORLD_SIZE = 2


def spec() -> dict:
    """The kernels of the timed layer beyond check_moe's and
    check_moe_example's (which hold the checked layers' whole and
    half-size kernels, forward and backward, and DeepSeek-V3's whole
    layer): its forward on the experts of one of ``WORLD_SIZE`` ranks."""
    m = BENCH_MODEL
    h, i = m["hidden"], m["intermediate"]
    lines = [dict(op="sort_by_expert", num_experts=m["experts"],
                  topk=m["top_k"], index_dtype="i32")]
    for groups in sorted({m["experts"]} | {
            end - first for first, end in expert_ranges(m["experts"],
                                                        WORLD_SIZE)}):
        seg = dict(op="segment_matmul", dtype="bf16", groups=groups)
        lines += [dict(seg, n=i, k=h, row_indices=True, activation="swiglu"),
                  dict(seg, n=h, k=i, row_scale=True, scatter=True)]
    return {"format": "bin", "kernels": lines}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--catalog", type=Path)
    parser.add_argument("--write-spec", type=Path)
    parser.add_argument("--no-bench", action="store_true")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--models", nargs="*",
                        choices=list(check_moe_example.MODELS),
                        help="check only these layers (default: all)")
    args = parser.parse_args()
    if args.write_spec:
        args.write_spec.write_text(json.dumps(spec(), indent=1) + "\n")
        return 0
    if "RANK" not in os.environ:
        print("check_ep.py: start it with torchrun (python3 -m "
              "torch.distributed.run --nproc-per-node 2 ...)",
              file=sys.stderr)
        return 2
    if args.catalog:
        os.environ["GGEMM_CATALOG"] = str(args.catalog)
    example = check_moe_example.load_example()  # sets the NVLS variables
    import torch
    import torch.distributed as dist

    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device,
                            timeout=datetime.timedelta(minutes=4))
    rank, world = dist.get_rank(), dist.get_world_size()
    names = [None] * world
    dist.all_gather_object(names, torch.cuda.get_device_name(device))
    if rank:
        sys.stdout = open(os.devnull, "w")  # rank 0 speaks for all
    print(f"{world} ranks: {', '.join(names)}; NCCL_NVLS_ENABLE="
          f"{os.environ.get('NCCL_NVLS_ENABLE')}, "
          f"TORCH_SYMM_MEM_DISABLE_MULTICAST="
          f"{os.environ.get('TORCH_SYMM_MEM_DISABLE_MULTICAST')}",
          flush=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(args.seed)
    generator = torch.Generator(device=device)
    generator.manual_seed(args.seed)

    check = Checker(None, width=52)
    for name, m in check_moe_example.MODELS.items():
        if args.models and name not in args.models:
            continue
        layer = example.MoELayer(m["hidden"], m["intermediate"],
                                 m["experts"], m["top_k"], device=device)
        example.share_parameters(layer)
        for case, run in example.expert_parallel_checks(
                layer, m["tokens"], generator, name):
            check.run(case, run)
        del layer, run  # the checks hold the layer
        torch.cuda.empty_cache()
    summary = f"gpu-check-ep: {check.passed} passed, {check.failed} failed"
    print(summary, flush=True)

    bench_lines = []
    if not args.no_bench:
        m = BENCH_MODEL
        ranges = expert_ranges(m["experts"], world)
        part = example.MoELayer(m["hidden"], m["intermediate"], m["experts"],
                                m["top_k"], expert_range=ranges[rank],
                                device=device)
        example.share_parameters(part.router)  # the same routing everywhere
        one_gpu = None
        if rank == 0:
            one_gpu = example.MoELayer(m["hidden"], m["intermediate"],
                                       m["experts"], m["top_k"],
                                       device=device)
            with torch.no_grad():
                one_gpu.router.weight.copy_(part.router.weight)
        print("timing:", flush=True)
        bench_lines = example.bench_expert_parallel(
            one_gpu, example.ExpertParallelMoE(part), BENCH_TOKENS,
            args.repeats, generator)
    dist.destroy_process_group()

    if rank == 0 and args.report:
        m = BENCH_MODEL
        nccl = torch.cuda.nccl.version()
        nccl = ".".join(map(str, nccl)) if isinstance(nccl, tuple) else nccl
        text = ["# Expert parallelism over NCCL (test/gpu/check_ep.py)", "",
                f"- devices: {world} ranks, one process each: "
                f"{', '.join(names)}",
                f"- date: {datetime.date.today().isoformat()}",
                f"- commit: {os.environ.get('GGEMM_COMMIT', 'unknown')}",
                f"- torch {torch.__version__}, NCCL {nccl}; "
                f"NCCL_NVLS_ENABLE={os.environ.get('NCCL_NVLS_ENABLE')}, "
                f"TORCH_SYMM_MEM_DISABLE_MULTICAST="
                f"{os.environ.get('TORCH_SYMM_MEM_DISABLE_MULTICAST')}",
                f"- seed: {args.seed}", "", "```"] + check.lines + [
                    "```", "", summary, ""]
        if bench_lines:
            text += [
                "## Forward, phase by phase", "",
                f"DeepSeek-V3-like layer (H={m['hidden']}, I="
                f"{m['intermediate']}, E={m['experts']}, top-"
                f"{m['top_k']}), {world} ranks of {m['experts'] // world} "
                f"experts; median ms of {args.repeats} runs (CUDA events on "
                f"each rank, fresh random inputs, ranks lined up by a "
                f"barrier before each run); one GPU: the whole layer over "
                f"all ranks' tokens on rank 0's GPU; one GPU / EP: its "
                f"time over the slowest rank's total.", ""] + bench_lines
        args.report.write_text("\n".join(text) + "\n")
    return 0 if check.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
