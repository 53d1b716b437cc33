#!/usr/bin/env python3
"""Device-side safety of GGEMM kernels: untrusted device data never makes a
kernel read or write out of bounds (run on a Hopper GPU through device,
under `compute-sanitizer --tool memcheck`).

seg_indptr, masked_m and weight_indices live on the device, so the host
cannot check them without a sync. The kernels define what they do with
them (docs/Bundle.md): segment offsets are clamped into [0, num_rows] (the
end no lower than the start), masked counts into [0, Mmax], and a group
whose weight index is outside [0, num_weights) has no tiles. For each case
this script builds such inputs (decreasing, negative, past the rows, huge,
random; out-of-range and negative weight indices; all rows in one group;
every group empty), launches the kernel and checks, against torch in
float64:

- every row no group owns (after clamping and skipping) is bit-identical
  to before the launch (y is poisoned with NaN elsewhere);
- every row exactly one group owns has that group's product (relative
  error < 1e-2, no NaN); rows two clamped segments overlap are written by
  one of them (their value is not checked, only that it is not NaN);
- the elements of y's row padding are untouched.

memcheck reports any out-of-bounds access; the run is clean when its
ERROR SUMMARY says 0 errors. The script prints one line per case and, last,
`gpu-safety: N passed, M failed`.

Example (on the GPU machine):
    compute-sanitizer --tool memcheck --show-backtrace device \\
        python3 test/gpu/check_safety.py \\
        --bundles .device/bundles --cases 300
"""
import argparse
import json
import random
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ggemm.runtime import Kernel  # noqa: E402
import check_fp8 as f8  # noqa: E402  (FP8 quantisation of the inputs)

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
HUGE = {torch.int32: 2**31 - 1, torch.int64: 2**62}


def segment_offsets(rng: random.Random, groups: int, rows: int,
                    style: str, huge: int) -> list:
    """seg_indptr values of one untrusted style."""
    if style == "decreasing":
        values = sorted(rng.randint(0, rows) for _ in range(groups + 1))
        return values[::-1]
    if style == "negative":
        return [rng.randint(-rows, rows) for _ in range(groups + 1)]
    if style == "past_rows":
        values = sorted(rng.randint(0, 3 * rows) for _ in range(groups + 1))
        return values
    if style == "huge":
        return [0] + [rng.choice([huge, -huge, rows, huge // 3])
                      for _ in range(groups)]
    if style == "all_in_one":
        g = rng.randrange(groups)
        return [0] * (g + 1) + [rows] * (groups - g)
    if style == "all_empty":
        return [rng.randint(0, rows)] * (groups + 1)
    return [rng.randint(-2 * rows, 3 * rows) for _ in range(groups + 1)]


def owners(offsets: list, rows: int, valid: list) -> list:
    """Per row: the list of groups that own it after clamping."""
    owner = [[] for _ in range(rows)]
    for g in range(len(offsets) - 1):
        begin = min(max(offsets[g], 0), rows)
        end = max(min(max(offsets[g + 1], 0), rows), begin)
        if not valid[g]:
            continue
        for r in range(begin, end):
            owner[r].append(g)
    return owner


def activation(out: torch.Tensor, act: str) -> torch.Tensor:
    if act == "relu":
        return torch.relu(out)
    if act == "gelu":
        return torch.nn.functional.gelu(out)
    if act == "silu":
        return torch.nn.functional.silu(out)
    return out


def run_case(kernel: Kernel, manifest: dict, rng: random.Random) -> tuple:
    p = manifest["problem"]
    op = p["op"]
    # FP8 kernels: inputs drawn in bf16, quantised with 1x128 / 128x128
    # block scales; the reference multiplies the dequantised operands.
    fp8 = bool(p.get("x_scale_block"))
    a_dtype = torch.bfloat16 if fp8 else DTYPES[p["a_dtype"]]
    out_dtype = DTYPES[p["out_dtype"]]
    kn = p["weight_layout"] == "kn"
    n = rng.choice([64, 128, 136, 200]) if kn else rng.choice([8, 64, 100, 130])
    k = rng.choice([64, 72, 128, 200])
    # Kernels compiled for static sizes get problems of those sizes.
    if p["n"] > 0:
        n = p["n"]
    if p["k"] > 0:
        k = p["k"]
    dev = "cuda"
    index_dtype = torch.int64 if p["index_dtype"] == "i64" else torch.int32
    desc = {}
    if op == "segment_matmul":
        groups = rng.choice([1, 3, 8])
        rows = rng.choice([1, 60, 130, 257])
        style = rng.choice(["decreasing", "negative", "past_rows", "huge",
                            "all_in_one", "all_empty", "random"])
        offsets = segment_offsets(rng, groups, rows, style, HUGE[index_dtype])
        num_weights = groups
        widx = None
        valid = [True] * groups
        if p["has_weight_indices"]:
            num_weights = rng.choice([1, max(1, groups - 1), groups + 2])
            widx = [rng.choice([rng.randrange(num_weights), num_weights,
                                num_weights + 5, -1, -(2**31)])
                    for _ in range(groups)]
            valid = [0 <= v < num_weights for v in widx]
        group_rows = owners(offsets, rows, valid)
        x = torch.randn(rows, k, device=dev).to(a_dtype)
        flat_rows = rows
        extra = {"seg_indptr": torch.tensor(offsets, dtype=index_dtype,
                                            device=dev)}
        if widx is not None:
            extra["weight_indices"] = torch.tensor(widx, dtype=torch.int32,
                                                   device=dev)
        desc = dict(style=style, G=groups, rows=rows, offsets=offsets[:9],
                    widx=widx)
    elif op == "masked_matmul":
        groups = rng.choice([1, 4])
        mmax = rng.choice([1, 64, 100])
        counts = [rng.choice([-1, -(2**30), mmax + 1, HUGE[index_dtype], 0,
                              mmax, rng.randint(0, mmax)])
                  for _ in range(groups)]
        num_weights = groups
        widx = None
        group_rows = [[] for _ in range(groups * mmax)]
        for g, c in enumerate(counts):
            for r in range(min(max(c, 0), mmax)):
                group_rows[g * mmax + r].append(g)
        x = torch.randn(groups, mmax, k, device=dev).to(a_dtype)
        flat_rows = groups * mmax
        extra = {"masked_m": torch.tensor(counts, dtype=index_dtype, device=dev)}
        desc = dict(G=groups, Mmax=mmax, counts=counts)
    else:
        groups = rng.choice([1, 3])
        m = rng.choice([1, 64, 130])
        num_weights = groups
        widx = None
        group_rows = [[r // m] for r in range(groups * m)]
        x = torch.randn(groups, m, k, device=dev).to(a_dtype)
        flat_rows = groups * m
        extra = {}
        desc = dict(B=groups, M=m)
    w_shape = (num_weights, k, n) if kn else (num_weights, n, k)
    w = (torch.randn(*w_shape, device=dev) / k ** 0.5).to(a_dtype)
    x_ref = w_ref = None
    if fp8:
        xq, xs = f8.quantize_rows(x.reshape(flat_rows, k), p["a_dtype"])
        x_ref = f8.dequant_rows(xq, xs, k)
        x = xq.view(x.shape)
        scales = f8.mn_major(xs)
        extra["x_scale"] = scales if x.dim() == 2 else scales.view(
            x.shape[0], x.shape[1], -1)
        w, ws = f8.quantize_blocks(w, p["b_dtype"])
        w_ref = f8.dequant_w(w, ws)
        extra["w_scale"] = ws
    bias = (torch.randn(num_weights, n, device=dev) if p["has_bias"] else None)
    row_scale = (torch.rand(flat_rows, device=dev) + 0.5
                 if p["has_row_scale"] else None)
    # y: a view with padded rows, poisoned (random for accumulate).
    ld = n + 3
    y_lead = x.shape[:-1]
    count = flat_rows * ld
    if p["accumulate"]:
        storage = torch.randn(count, device=dev).to(out_dtype)
    else:
        storage = torch.full((count,), float("nan"), device=dev,
                             dtype=out_dtype)
    y = storage.view(*y_lead, ld)[..., :n]
    before = storage.clone()
    kernel(x=x, w=w, y=y, bias=bias, row_scale=row_scale, **extra)
    torch.cuda.synchronize()

    bits = torch.int16 if storage.element_size() == 2 else torch.int32
    problems = []
    flat_before = before.view(flat_rows, ld)
    flat_after = storage.view(flat_rows, ld)
    pad_same = (flat_after[:, n:].view(bits) == flat_before[:, n:].view(bits))
    if not bool(pad_same.all()):
        problems.append("row padding written")
    x2 = x_ref if x_ref is not None else x.reshape(flat_rows, k).double()
    out = flat_after[:, :n].double()
    for r in range(flat_rows):
        owner = group_rows[r]
        if not owner:
            same = flat_after[r, :n].view(bits) == flat_before[r, :n].view(bits)
            if not bool(same.all()):
                problems.append(f"row {r} owned by no group was written")
                break
            continue
        if torch.isnan(out[r]).any():
            problems.append(f"row {r} not written")
            break
    # Values of rows with exactly one owner, group by group.
    for g in range(groups):
        rows_g = [r for r in range(flat_rows) if group_rows[r] == [g]]
        if not rows_g:
            continue
        wi = widx[g] if widx is not None else g
        wm = w_ref[wi] if w_ref is not None else w[wi].double()
        idx = torch.tensor(rows_g, device=dev)
        ref = x2[idx] @ (wm if kn else wm.t())
        if bias is not None:
            ref = ref + bias[wi].double()
        ref = activation(ref, p.get("activation", "none"))
        if row_scale is not None:
            ref = ref * row_scale[idx, None].double()
        if p["accumulate"]:
            ref = ref + flat_before[idx, :n].double()
        got = out[idx]
        denom = ref.norm().item()
        err = (got - ref).norm().item() / (denom if denom > 0 else 1.0)
        if not err < 1e-2:
            problems.append(f"group {g}: rel err {err:.2e}")
    return desc, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, required=True)
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    manifests = {}
    for path in sorted(args.bundles.glob("*.json")):
        m = json.loads(path.read_text())
        # Static-shape bf16 kernels are benchmark kernels of large fixed
        # sizes; FP8 kernels are all static in N and K (run at their sizes).
        static = m["problem"]["n"] > 0 or m["problem"]["k"] > 0
        if static and not m["problem"].get("x_scale_block"):
            continue
        manifests[path.stem] = m
    kernels = {name: Kernel(args.bundles / f"{name}.json") for name in manifests}
    names = sorted(kernels)
    if not names:
        print(f"no kernel in {args.bundles} to check", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    passed = failed = 0
    print(f"seed {args.seed}; {len(names)} kernels", flush=True)
    for index in range(args.cases):
        name = names[index % len(names)]
        try:
            desc, problems = run_case(kernels[name], manifests[name], rng)
        except Exception as exc:  # noqa: BLE001 - every failure is reported
            desc, problems = {}, [f"{type(exc).__name__}: {exc}"]
        ok = not problems
        passed += ok
        failed += not ok
        print(f"case {index:3d} {name:34s} {desc} "
              f"{'PASS' if ok else 'FAIL ' + '; '.join(problems)}", flush=True)
    print(f"gpu-safety: {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
