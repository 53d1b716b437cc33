#!/usr/bin/env python3
"""End-to-end GPU check of GGEMM kernels (run on a Hopper GPU through device).

Loads the kernel bundles compiled on the CPU machine (test/gpu/build_bundles.sh),
launches them through the GGEMM runtime (python/ggemm over libggemm_runtime.so)
on many random problems, and compares every output with torch in float64.

For every case: fresh random inputs; the output is poisoned (NaN) before the
launch, or filled with random values for `accumulate` kernels; the check
requires (1) relative error ||out - ref|| / ||ref|| < tolerance over every row
that belongs to a group, (2) no poison left in those rows, (3) every row that
belongs to no group bit-identical to what it was before the launch.

Prints one line per case and, last, `gpu-check: N passed, M failed`.

Example (on the GPU machine):
    python3 test/gpu/check_e2e.py --bundles .device/bundles --cases 240 \
        --report bench/results/e2e.md
"""
import argparse
import datetime
import json
import math
import os
import random
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import ggemm  # noqa: E402
from ggemm.runtime import Kernel  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}


def rand_segments(rng: random.Random, groups: int, style: str) -> list:
    """Segment lengths: mixed sizes with empty and 1-row segments, skewed,
    or tile-sized."""
    if style == "mixed":
        pool = [0, 1, 2, 63, 64, 65, 127, 128, 129, 200, 257, 300]
        return [rng.choice(pool) if rng.random() < 0.6 else rng.randint(0, 300)
                for _ in range(groups)]
    if style == "skewed":
        lengths = [rng.choice([0, 1, rng.randint(0, 16)]) for _ in range(groups)]
        lengths[rng.randrange(groups)] = rng.randint(1000, 5000)
        return lengths
    if style == "tiny":
        return [rng.choice([0, 1, 2, 3, 7, 16]) for _ in range(groups)]
    return [rng.randint(100, 600) for _ in range(groups)]


def activation(ref: torch.Tensor, act: str) -> torch.Tensor:
    if act == "relu":
        return torch.relu(ref)
    if act == "gelu":
        return torch.nn.functional.gelu(ref)
    if act == "silu":
        return torch.nn.functional.silu(ref)
    return ref


class Case:
    """One random problem for one kernel."""

    def __init__(self, manifest: dict, rng: random.Random, index: int):
        self.manifest = manifest
        self.problem = manifest["problem"]
        self.rng = rng
        self.index = index

    def build(self, device: str = "cuda") -> None:
        p, rng = self.problem, self.rng
        op = p["op"]
        a_dtype = DTYPES[p["a_dtype"]]
        out_dtype = DTYPES[p["out_dtype"]]
        kn = p["weight_layout"] == "kn"
        n_align = 8 if kn else 1
        n = rng.choice([8, 64, 100, 128, 200, 256, 264, 384, 640])
        n = max(n_align, (n // n_align) * n_align)
        if not kn and rng.random() < 0.3:
            n = rng.choice([7, 33, 129, 255])  # odd N: only the store masks it
        k = rng.choice([8, 56, 64, 72, 128, 192, 200, 512, 1000, 1024])
        # A kernel compiled for static sizes gets problems of those sizes.
        if p["n"] > 0:
            n = p["n"]
        if p["k"] > 0:
            k = p["k"]
        static_groups = p["num_groups"] if p["num_groups"] > 0 else None
        static_weights = p["num_weights"] if p["num_weights"] > 0 else None
        self.n, self.k = n, k
        self.desc = {}
        if op == "segment_matmul":
            groups = static_groups or rng.choice([1, 2, 3, 8, 17, 64, 128])
            style = rng.choice(["mixed", "mixed", "skewed", "tiny", "big"])
            lengths = rand_segments(rng, groups, style)
            start = rng.choice([0, 0, 0, rng.randint(1, 50)])
            tail = rng.choice([0, 0, rng.randint(1, 50)])
            offsets = [start]
            for length in lengths:
                offsets.append(offsets[-1] + length)
            rows = offsets[-1] + tail
            num_weights = groups
            if p["has_weight_indices"]:
                num_weights = rng.choice([max(1, groups // 2), groups, groups + 3])
            num_weights = static_weights or num_weights
            index_dtype = torch.int64 if p["index_dtype"] == "i64" else torch.int32
            self.seg_indptr = torch.tensor(offsets, dtype=index_dtype, device=device)
            self.groups = [(offsets[g], offsets[g + 1]) for g in range(groups)]
            self.x = torch.randn(rows, k, device=device).to(a_dtype)
            y_shape = (rows, n)
            self.desc = dict(G=groups, style=style, rows=rows)
        elif op == "masked_matmul":
            groups = static_groups or rng.choice([1, 4, 8, 16])
            mmax = rng.choice([1, 16, 64, 100, 128, 256, 300])
            counts = [rng.choice([0, 1, mmax, mmax + 5, rng.randint(0, mmax)])
                      for _ in range(groups)]
            index_dtype = torch.int64 if p["index_dtype"] == "i64" else torch.int32
            self.masked_m = torch.tensor(counts, dtype=index_dtype, device=device)
            self.groups = [(g * mmax, g * mmax + min(max(c, 0), mmax))
                           for g, c in enumerate(counts)]
            num_weights = groups
            self.x = torch.randn(groups, mmax, k, device=device).to(a_dtype)
            y_shape = (groups, mmax, n)
            self.desc = dict(G=groups, Mmax=mmax)
        else:
            batch = static_groups or rng.choice([1, 2, 5, 16])
            m = rng.choice([1, 7, 64, 100, 128, 300])
            self.groups = [(b * m, (b + 1) * m) for b in range(batch)]
            num_weights = batch
            self.x = torch.randn(batch, m, k, device=device).to(a_dtype)
            y_shape = (batch, m, n)
            self.desc = dict(B=batch, M=m)
        w_shape = (num_weights, k, n) if kn else (num_weights, n, k)
        self.w = (torch.randn(*w_shape, device=device) / math.sqrt(k)).to(a_dtype)
        num_groups = len(self.groups)
        self.weight_indices = None
        if p["has_weight_indices"]:
            self.weight_indices = torch.randint(
                0, num_weights, (num_groups,), dtype=torch.int32, device=device)
        self.bias = (torch.randn(num_weights, n, device=device)
                     if p["has_bias"] else None)
        flat_rows = self.x.numel() // k
        self.row_scale = (torch.rand(flat_rows, device=device) + 0.5
                          if p["has_row_scale"] else None)
        # y is often a view into a larger buffer: rows padded to ldy >= N and
        # a base one element past an aligned address, so that the kernel's
        # row-stride and alignment handling (vector or scalar stores) runs.
        pad = rng.choice([0, 0, 1, 3, 8])
        offset = rng.choice([0, 0, 1])
        ld = n + pad
        count = math.prod(y_shape[:-1]) * ld + offset
        if p["accumulate"]:
            storage = torch.randn(count, device=device).to(out_dtype)
        else:
            storage = torch.full((count,), float("nan"), device=device,
                                 dtype=out_dtype)
        self.y = storage[offset:].view(*y_shape[:-1], ld)[..., :n]
        self.y_storage = storage
        self.storage_before = storage.clone()
        self.in_view = torch.zeros(count, dtype=torch.bool, device=device)
        self.in_view.as_strided(self.y.shape, self.y.stride(),
                                offset).fill_(True)
        self.y_before = self.y.clone()
        self.desc.update(ldy=ld, y_offset=offset)
        self.desc.update(N=n, K=k)

    def reference(self) -> torch.Tensor:
        p = self.problem
        kn = p["weight_layout"] == "kn"
        x2 = self.x.reshape(-1, self.k).double()
        ref = self.y_before.reshape(x2.shape[0], self.n).double().clone()
        for g, (begin, end) in enumerate(self.groups):
            if end <= begin:
                continue
            widx = int(self.weight_indices[g]) if self.weight_indices is not None else g
            w = self.w[widx].double()
            out = x2[begin:end] @ (w if kn else w.t())
            if self.bias is not None:
                out = out + self.bias[widx].double()
            out = activation(out, p.get("activation", "none"))
            if self.row_scale is not None:
                out = out * self.row_scale[begin:end, None].double()
            if p["accumulate"]:
                out = out + ref[begin:end]
            ref[begin:end] = out
        return ref

    def tensors(self) -> dict:
        t = {"x": self.x, "w": self.w, "y": self.y,
             "weight_indices": self.weight_indices, "bias": self.bias,
             "row_scale": self.row_scale}
        if self.problem["op"] == "segment_matmul":
            t["seg_indptr"] = self.seg_indptr
        if self.problem["op"] == "masked_matmul":
            t["masked_m"] = self.masked_m
        return t

    def check(self, ref: torch.Tensor, tolerance: float) -> tuple:
        out = self.y.reshape(ref.shape).double()
        before = self.y_before.reshape(ref.shape)
        after = self.y.reshape(ref.shape)
        inside = torch.zeros(ref.shape[0], dtype=torch.bool, device=ref.device)
        for begin, end in self.groups:
            inside[begin:end] = True
        problems = []
        if inside.any():
            o, r = out[inside], ref[inside]
            if torch.isnan(o).any():
                problems.append(f"{int(torch.isnan(o).sum())} unwritten/NaN elements")
            denom = r.norm().item()
            err = (o - r).norm().item() / denom if denom > 0 else (o - r).norm().item()
            if not err < tolerance:
                problems.append(f"rel err {err:.2e} >= {tolerance:g}")
        else:
            err = 0.0
        padding = ~self.in_view
        if padding.any():
            a = self.y_storage[padding]
            b = self.storage_before[padding]
            bits = torch.int16 if a.element_size() == 2 else torch.int32
            if not bool((a.view(bits) == b.view(bits)).all()):
                problems.append("elements outside the y view (row padding) "
                                "written")
        outside = ~inside
        if outside.any():
            a, b = after[outside], before[outside]
            same = (a.view(torch.int16 if a.element_size() == 2 else torch.int32)
                    == b.view(torch.int16 if b.element_size() == 2 else torch.int32))
            if not bool(same.all()):
                problems.append(f"{int((~same).sum())} elements outside every group written")
        return err, problems


def load_manifests(bundle_dir: Path) -> dict:
    return {p.stem: json.loads(p.read_text()) for p in sorted(bundle_dir.glob("*.json"))}


def graph_check(kernel: Kernel, case: Case) -> list:
    """Capture one launch in a CUDA graph, then change seg_indptr's contents
    on the device and replay: the graph must follow the new segments (no host
    read of seg_indptr happened at capture)."""
    problems = []
    stream = torch.cuda.Stream()
    kernel.prepare()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        kernel(**case.tensors(), stream=stream)
    # New segment boundaries inside the same row range, written on device.
    rows = case.x.shape[0]
    groups = len(case.groups)
    cuts = sorted(random.Random(7).randint(0, rows) for _ in range(groups - 1))
    offsets = [0] + cuts + [rows]
    case.seg_indptr.copy_(torch.tensor(offsets, dtype=case.seg_indptr.dtype))
    case.groups = [(offsets[g], offsets[g + 1]) for g in range(groups)]
    if case.problem["accumulate"]:
        case.y.copy_(torch.randn(case.y.shape, device=case.y.device))
    else:
        case.y.fill_(float("nan"))
    case.y_before = case.y.clone()
    case.storage_before = case.y_storage.clone()
    graph.replay()
    torch.cuda.synchronize()
    err, found = case.check(case.reference(), 1e-2)
    problems += found
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, required=True)
    parser.add_argument("--cases", type=int, default=240)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--report", type=Path)
    parser.add_argument("--commit", default=os.environ.get("GGEMM_COMMIT", "unknown"))
    args = parser.parse_args()

    torch.cuda.init()
    manifests = load_manifests(args.bundles)
    kernels = {name: Kernel(args.bundles / f"{name}.json") for name in manifests}
    rng = random.Random(args.seed)
    names = sorted(kernels)
    passed = failed = 0
    per_kernel = {name: [0, 0, 0.0] for name in names}
    variants_seen: dict = {}
    failures = []
    print(f"seed {args.seed}; {len(names)} kernels: {', '.join(names)}", flush=True)
    for index in range(args.cases):
        name = names[index % len(names)]
        case = Case(manifests[name], rng, index)
        case.build()
        tolerance = 1e-2
        # Multi-variant bundles: masked launches sometimes pass a hint
        # (DeepGEMM's expected_m), which may pick another variant.
        hint = None
        if (case.problem["op"] == "masked_matmul" and kernels[name].num_variants > 1
                and rng.random() < 0.5):
            hint = rng.choice([1, 8, 20, 48, 64, 100, 300])
        try:
            variant = kernels[name].select_variant(expected_m=hint, **case.tensors())
            case.desc.update(variant=variant)
            if hint is not None:
                case.desc.update(expected_m=hint)
            variants_seen.setdefault(name, set()).add(variant)
            kernels[name](expected_m=hint, **case.tensors())
            torch.cuda.synchronize()
            err, problems = case.check(case.reference(), tolerance)
        except Exception as exc:  # noqa: BLE001 - report every failure
            err, problems = float("nan"), [f"{type(exc).__name__}: {exc}"]
        ok = not problems
        passed += ok
        failed += not ok
        stats = per_kernel[name]
        stats[0 if ok else 1] += 1
        if err == err:
            stats[2] = max(stats[2], err)
        line = (f"case {index:3d} {name:28s} {case.desc} rel_err {err:.2e} "
                f"{'PASS' if ok else 'FAIL ' + '; '.join(problems)}")
        print(line, flush=True)
        if not ok:
            failures.append(line)

    # CUDA-graph safety: capture, change seg_indptr on the device, replay.
    graph_results = []
    for name in names:
        if manifests[name]["problem"]["op"] != "segment_matmul":
            continue
        case = Case(manifests[name], random.Random(args.seed + 1), -1)
        case.build()
        try:
            problems = graph_check(kernels[name], case)
        except Exception as exc:  # noqa: BLE001
            problems = [f"{type(exc).__name__}: {exc}"]
        ok = not problems
        passed += ok
        failed += not ok
        graph_results.append((name, ok, problems))
        print(f"graph {name:28s} {'PASS' if ok else 'FAIL ' + '; '.join(problems)}",
              flush=True)
        if not ok:
            failures.append(f"graph {name}: {problems}")

    summary = f"gpu-check: {passed} passed, {failed} failed"
    if args.report:
        props = torch.cuda.get_device_properties(0)
        lines = [
            "# GPU end-to-end check",
            "",
            f"- device: {props.name} ({props.multi_processor_count} SMs), "
            f"torch {torch.__version__}, CUDA {torch.version.cuda}",
            f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
            f"- commit: {args.commit}",
            f"- script: test/gpu/check_e2e.py --cases {args.cases} --seed {args.seed}",
            "- criterion: relative error vs torch float64 < 1e-2 over all rows of "
            "all groups, no poison (NaN) left there, rows outside every group "
            "bit-identical to before the launch; fresh random inputs per case",
            "",
            "| kernel | passed | failed | max rel err | variants run / in bundle |",
            "|---|---|---|---|---|",
        ]
        for name in names:
            p_, f_, e_ = per_kernel[name]
            seen = sorted(variants_seen.get(name, set()))
            lines.append(f"| {name} | {p_} | {f_} | {e_:.2e} | "
                         f"{','.join(map(str, seen))} / {kernels[name].num_variants} |")
        lines += ["", "CUDA graph capture + device-side change of seg_indptr + replay:", ""]
        for name, ok, problems in graph_results:
            lines.append(f"- {name}: {'PASS' if ok else 'FAIL ' + '; '.join(problems)}")
        if failures:
            lines += ["", "Failures:", ""] + [f"- `{f}`" for f in failures[:50]]
        lines += ["", summary, ""]
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text("\n".join(lines))
    print(summary, flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
