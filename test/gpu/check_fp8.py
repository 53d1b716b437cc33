#!/usr/bin/env python3
"""GPU check and benchmark of GGEMM's FP8 and INT8 kernels (on Hopper).

Loads the FP8 bundles compiled here by test/gpu/build_bundles.sh (from
test/gpu/kernels_fp8, written by gen_fp8_kernels.py) and runs them through
the runtime on DeepGEMM's shape lists:

- dense (one segment): m in {1, 128, 4096} x DeepGEMM's (n, k) list; the
  one-weight kernels (`fp8_dense_*`) at every row bucket of their
  variants and partial tiles inside them (m in {1, 16, 32, 48, 64, 100,
  128, 129, 300, 4096}), and two kernels
  taking two K blocks per wgmma wait (`promote_pairs`) over an odd block
  count (`fp8_dense_n1024_k1152_*_pairs`);
- grouped contiguous: (G, rows per group) in {(4, 8192), (8, 4096)} x its
  (n, k) list, sizes varied by +-30 %, some groups empty;
- masked: (G, m) in {(32, 192), (6, 1024), (32, 20), (6, 20)}, max_m 4096;
- FlagGems-style batched bmm; epilogue variants (weight indices, bias,
  silu, f32 out; row scale and accumulate); random small segment problems;
- tensor-wise and per-row scales (the kernels `*_rowwise`, `*_tensor`,
  `*_mixed`, `*_channel`: torch._scaled_mm row-wise, FlashInfer's
  bmm_fp8), every kind and mix on segment, masked and batched kernels, odd
  N, segments ending inside a tile, empty groups, swap-AB, bias, gelu,
  relu, row scale and accumulate after the scales;
- INT8 (the kernels `int8_*`: s8 x s8 summed exactly in s32, aiter's
  int8_gemm): the same forms with symmetric per-row / tensor-wise int8
  quantisation (amax / 127), criterion calc_diff < 1e-5, and one kernel
  with unit scales and f32 output whose results must equal the exact
  integer product (float64 sums of integers below 2^53) bit for bit, on
  full-range int8 inputs (-128 .. 127);
- an e4m3 y with 1x128 scales computed in the epilogue (the kernels
  `fp8out_*`, from bf16, FP8 and INT8 inputs, segment / masked / batched,
  bias, activations, row scale, SwiGLU): each block's scale against
  max(amax, 1e-4) / 448 of the float64 reference (relative 1e-4; 1e-3
  with FP8 operands), each
  element's e4m3 value times its scale within half an e4m3 step of the
  reference (2^-4 relative, 2^-9 of the scale among the subnormals, plus
  1e-4 of the block's maximum for the f32 arithmetic: 1e-3 with FP8
  operands, whose wgmma sums carry about 14 mantissa bits within a K
  block), no poison left,
  rows of no group untouched (y and y_scale); and a chain: a layer's e4m3
  y and MN-major scales fed as they are to the FP8 block-scaled kernel of
  the next layer, calc_diff < 1e-3 against the float64 product of what it
  reads.

Every case quantises fresh random bf16 inputs like DeepGEMM's
per_token_cast_to_fp8 / per_block_cast_to_fp8 (amax / 448 per 1x128 and
128x128 block; per row, per output channel, per tensor or per weight for
the other kinds, as the manifest's scale blocks say), poisons the output
(NaN, or random values for accumulate), and requires DeepGEMM's
calc_diff(out, ref) = 1 - 2 sum(out ref) / sum(out^2 + ref^2) < 1e-3
against the float64 product of the dequantised operands, no poison left
in rows of a group, and rows of no group bit-identical. 1x128 activation
scales are passed MN-major (strides (1, M_pad)), as the kernel wants them.

With --bench it then times the dense and grouped shapes against torch's
block-scaled FP8 (cuBLAS through torch._scaled_mm, per group for grouped
shapes) in the same run (medians of CUDA-event timings, fresh inputs), and
the INT8 kernels against torch._int_mm (cuBLAS int8) followed by the same
dequantisation in torch.

Prints `gpu-check-fp8: N passed, M failed` (INT8 cases included) and, with
--bench, `fp8-bench: min ratio vs best peer R over S shapes` and
`int8-bench: min ratio vs torch._int_mm + dequant R over S shapes`.
"""
import argparse
import datetime
import os
import random
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from ggemm.runtime import Kernel  # noqa: E402

#: FP8 types by manifest dtype, with their largest finite value.
F8_TYPES = {"f8e4m3": (torch.float8_e4m3fn, 448.0),
            "f8e5m2": (torch.float8_e5m2, 57344.0)}
F8, F8_MAX = F8_TYPES["f8e4m3"]
#: INT8: symmetric quantisation to [-127, 127] (the kernels take -128 too).
I8_MAX = 127.0
OUT_DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def quantize_rows(x: torch.Tensor, dtype: str = "f8e4m3"):
    """x [M, K] -> (FP8 [M, K], scales [M, ceil(K/128)]) per 1x128 block."""
    f8, f8_max = F8_TYPES[dtype]
    m, k = x.shape
    kb = ceil_div(k, 128)
    padded = torch.nn.functional.pad(x.float(), (0, kb * 128 - k))
    blocks = padded.view(m, kb, 128)
    if m == 0:  # amax of an empty tensor is undefined
        return x.to(f8), torch.zeros(0, kb, device=x.device)
    amax = blocks.abs().amax(dim=2).clamp(min=1e-4)
    scale = amax / f8_max
    q = (blocks / scale.unsqueeze(2)).to(f8).view(m, kb * 128)[:, :k]
    return q.contiguous(), scale


def quantize_blocks(w: torch.Tensor, dtype: str = "f8e4m3"):
    """w [G, N, K] -> (FP8, scales [G, ceil(N/128), ceil(K/128)])."""
    f8, f8_max = F8_TYPES[dtype]
    g, n, k = w.shape
    nb, kb = ceil_div(n, 128), ceil_div(k, 128)
    padded = torch.nn.functional.pad(w.float(), (0, kb * 128 - k, 0, nb * 128 - n))
    blocks = padded.view(g, nb, 128, kb, 128)
    amax = blocks.abs().amax(dim=(2, 4)).clamp(min=1e-4)
    scale = amax / f8_max
    q = (blocks / scale[:, :, None, :, None]).to(f8)
    q = q.view(g, nb * 128, kb * 128)[:, :n, :k]
    return q.contiguous(), scale.contiguous()


def mn_major(scales: torch.Tensor) -> torch.Tensor:
    """[M, KB] scales as the kernel wants them: rows contiguous, the K-block
    stride a multiple of 4 (16 bytes, TMA)."""
    m, kb = scales.shape
    pad = ceil_div(max(m, 1), 4) * 4
    storage = torch.empty(kb, pad, device=scales.device, dtype=torch.float32)
    storage[:, :m] = scales.t()
    return storage.t()[:m]


def grouped_operands(groups: int, rows: int, n: int, k: int):
    """Fresh block-scaled operands of `groups` equal groups of `rows` rows:
    x quantised per row with its scales MN-major (kept row-major too), the
    weights with 128x128 scales, and seg_indptr."""
    m = groups * rows
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    xq, xs = quantize_rows(x)
    wq, ws = weights(groups, n, k)
    indptr = torch.arange(0, m + 1, rows, dtype=torch.int32, device="cuda")
    return xq, xs, mn_major(xs), wq, ws, indptr


def scale_blocks(manifest):
    """The (x, w) scale blocks of a kernel's manifest."""
    p = manifest["problem"]
    return p.get("x_scale_block", "1x128"), p.get("w_scale_block", "128x128")


def quantize_int8(t: torch.Tensor, dims):
    """Symmetric INT8 quantisation of `t` with one scale per index of the
    dimensions not in `dims` (amax over `dims` / 127): (int8, the f32
    scales, the float64 dequantised t)."""
    tf = t.float()
    # An empty t (every group empty) still has one scale per index of the
    # dimensions kept: none along an empty one.
    kept = [1 if d in dims else t.shape[d] for d in range(t.dim())]
    amax = (tf.abs().amax(dim=dims, keepdim=True) if t.numel() else
            torch.ones(kept, device=t.device))
    s = amax.clamp(min=1e-4) / I8_MAX
    q = torch.round(tf / s).clamp(-I8_MAX, I8_MAX).to(torch.int8)
    return q.contiguous(), s, q.double() * s.double()


def quantize_x(x: torch.Tensor, kind: str, dtype: str = "f8e4m3"):
    """x [M, K] -> (FP8 or INT8 [M, K], the scales as the kernel takes them,
    the float64 dequantised x) for x_scale_block `kind`: 1x128 blocks
    (MN-major scales, FP8 only), per row ([M]) or per tensor ([1])."""
    if dtype == "s8":
        q, s, d = quantize_int8(x, (1,) if kind == "per_row" else (0, 1))
        return q, s.reshape(-1).contiguous(), d
    if kind == "1x128":
        q, s = quantize_rows(x, dtype)
        return q, mn_major(s), dequant_rows(q, s, x.shape[1])
    f8, f8_max = F8_TYPES[dtype]
    xf = x.float()
    if kind == "per_row":
        amax = (xf.abs().amax(dim=1) if x.numel() else
                torch.ones(x.shape[0], device=x.device))
        s = (amax.clamp(min=1e-4) / f8_max).contiguous()
        q = (xf / s[:, None]).to(f8).contiguous()
        return q, s, q.double() * s.double()[:, None]
    assert kind == "tensor", kind
    amax = xf.abs().amax() if x.numel() else torch.ones((), device=x.device)
    s = (amax.clamp(min=1e-4) / f8_max).reshape(1)
    q = (xf / s).to(f8).contiguous()
    return q, s, q.double() * s.double()


def quantize_w(w: torch.Tensor, kind: str, dtype: str = "f8e4m3"):
    """w [G, N, K] -> (FP8 or INT8, the scales as the kernel takes them, the
    float64 dequantised w) for w_scale_block `kind`: 128x128 blocks (FP8
    only), per output channel ([G, N]) or per weight ([G])."""
    if dtype == "s8":
        per_row = kind == "per_row"
        q, s, d = quantize_int8(w, (2,) if per_row else (1, 2))
        s = s.reshape(w.shape[0], -1) if per_row else s.reshape(-1)
        return q, s.contiguous(), d
    if kind == "128x128":
        q, s = quantize_blocks(w, dtype)
        return q, s, dequant_w(q, s)
    f8, f8_max = F8_TYPES[dtype]
    wf = w.float()
    if kind == "per_row":
        s = (wf.abs().amax(dim=2).clamp(min=1e-4) / f8_max).contiguous()
        q = (wf / s[:, :, None]).to(f8).contiguous()
        return q, s, q.double() * s.double()[:, :, None]
    assert kind == "tensor", kind
    s = (wf.abs().amax(dim=(1, 2)).clamp(min=1e-4) / f8_max).contiguous()
    q = (wf / s[:, None, None]).to(f8).contiguous()
    return q, s, q.double() * s.double()[:, None, None]


def epilogue_ref(part, p, bias, old):
    """bias, activation and accumulate of a manifest's problem `p` on the
    float64 scaled product `part` (row scale: the caller's)."""
    if bias is not None:
        part = part + bias.double()
    act = p["activation"]
    if act == "silu":
        part = torch.nn.functional.silu(part)
    elif act == "gelu":
        part = torch.nn.functional.gelu(part)
    elif act == "relu":
        part = torch.relu(part)
    else:
        assert act == "none", act
    return part, old


def dequant_rows(q, s, k):
    return (q.double().view(q.shape[0], k) *
            s.double().repeat_interleave(128, dim=1)[:, :k])


def dequant_w(q, s):
    g, n, k = q.shape
    full = s.double().repeat_interleave(128, dim=1).repeat_interleave(128, dim=2)
    return q.double() * full[:, :n, :k]


def calc_diff(out: torch.Tensor, ref: torch.Tensor) -> float:
    out, ref = out.double(), ref.double()
    denom = (out * out + ref * ref).sum()
    if denom == 0:
        return 0.0
    return float(1 - 2 * (out * ref).sum() / denom)


class Failure(Exception):
    pass


def check_rows(y, y_before, ref_rows, own_mask, tolerance=1e-3):
    """ref_rows: float64 reference of the rows own_mask selects."""
    got = y[own_mask]
    if torch.isnan(got.float()).any():
        raise Failure("poison (NaN) left in rows of a group")
    diff = calc_diff(got, ref_rows) if got.numel() else 0.0
    if not diff < tolerance:
        raise Failure(f"calc_diff {diff:.2e} >= {tolerance}")
    other = ~own_mask
    if other.any():
        a, b = y[other], y_before[other]
        same = (a.view(torch.int8) if a.element_size() == 1 else a).eq(b).all() \
            if not torch.isnan(b.float()).any() else \
            torch.equal(torch.isnan(a.float()), torch.isnan(b.float()))
        if not same:
            raise Failure("a row of no group was written")
    return diff


def tolerance_of(p) -> float:
    """The calc_diff bound of a kernel: DeepGEMM's 1e-3 for FP8; INT8 sums
    exactly, so only the output's rounding is left (calc_diff of bf16
    rounding is about 1e-6)."""
    return 1e-5 if p["a_dtype"] == "s8" else 1e-3


def run_int8_exact(kernel, lengths, n, k, device="cuda"):
    """Full-range int8 x and w (-128 .. 127), unit tensor-wise scales, f32
    out: every row of a group must equal the exact integer product (K <=
    1024 keeps |sum| <= 2^24, exact in f32) bit for bit; rows of no group
    untouched."""
    g = len(lengths)
    offsets = [0]
    for length in lengths:
        offsets.append(offsets[-1] + length)
    m = offsets[-1] + 5
    x = torch.randint(-128, 128, (m, k), device=device, dtype=torch.int8)
    w = torch.randint(-128, 128, (g, n, k), device=device, dtype=torch.int8)
    # The extremes at least once: -128 * -128 in every K position of row 0.
    if m:
        x[0] = -128
        w[:, 0] = -128
    y = torch.full((m, n), float("nan"), device=device)
    y_before = y.clone()
    kernel(x=x, w=w, x_scale=torch.ones(1, device=device),
           w_scale=torch.ones(g, device=device), y=y,
           seg_indptr=torch.tensor(offsets, dtype=torch.int32, device=device))
    torch.cuda.synchronize()
    own = torch.zeros(m, dtype=torch.bool, device=device)
    for gi in range(g):
        b, e = offsets[gi], offsets[gi + 1]
        if b == e:
            continue
        exact = x[b:e].double() @ w[gi].double().t()
        if not torch.equal(y[b:e].double(), exact):
            bad = (y[b:e].double() != exact).sum().item()
            raise Failure(f"group {gi}: {bad} of {exact.numel()} values differ "
                          f"from the exact integer product")
        own[b:e] = True
    other = ~own
    if not torch.equal(torch.isnan(y[other]), torch.isnan(y_before[other])):
        raise Failure("a row of no group was written")
    return 0.0


def block_varied(shape, row_block, col_block, device="cuda"):
    """Normal values whose magnitude changes by a power of two in [2^-3,
    2^3] from one (row_block x col_block) block of the last two dimensions
    to the next: every block gets a scale of its own, so a kernel that
    applies a neighbouring block's scale is off by up to 64x there (with
    plain randn, adjacent blocks' amax, and so their scales, differ by a few
    per cent, which calc_diff < 1e-3 would not notice)."""
    *lead, rows, cols = shape
    rb, cb = ceil_div(rows, row_block), ceil_div(cols, col_block)
    exponents = torch.randint(-3, 4, (*lead, rb, cb), device=device)
    factors = torch.pow(2.0, exponents.float())
    factors = factors.repeat_interleave(row_block, dim=-2)[..., :rows, :]
    factors = factors.repeat_interleave(col_block, dim=-1)[..., :cols]
    values = torch.randn(*shape, device=device) * factors
    return values.to(torch.bfloat16)


def weights(g, n, k, device="cuda", dtype="f8e4m3"):
    w = torch.randn(g, n, k, device=device, dtype=torch.bfloat16)
    return quantize_blocks(w, dtype)


def run_segment(kernel, manifest, lengths, n, k, rng, device="cuda"):
    p = manifest["problem"]
    g = len(lengths)
    tail = rng.choice([0, 0, 7])
    offsets = [0]
    for length in lengths:
        offsets.append(offsets[-1] + length)
    m = offsets[-1] + tail
    x = block_varied((m, k), 1, 128, device)
    x_kind, w_kind = scale_blocks(manifest)
    xq, xs_kernel, xd = quantize_x(x, x_kind, p["a_dtype"])
    num_weights = g
    idx = None
    if p["has_weight_indices"]:
        num_weights = max(1, g // 2 + 1)
        idx = torch.tensor([rng.randrange(num_weights) for _ in range(g)],
                           dtype=torch.int32, device=device)
    wq, ws, wd = quantize_w(block_varied((num_weights, n, k), 128, 128, device),
                            w_kind, p["b_dtype"])
    out_dtype = OUT_DTYPES[p["out_dtype"]]
    tensors = dict(x=xq, w=wq, x_scale=xs_kernel, w_scale=ws,
                   seg_indptr=torch.tensor(offsets, dtype=torch.int32, device=device))
    if idx is not None:
        tensors["weight_indices"] = idx
    bias = rs = None
    if p["has_bias"]:
        bias = torch.randn(num_weights, n, device=device)
        tensors["bias"] = bias
    if p["has_row_scale"]:
        rs = torch.rand(m, device=device) + 0.5
        tensors["row_scale"] = rs
    if p["accumulate"]:
        y = torch.randn(m, n, device=device).to(out_dtype)
    else:
        y = torch.full((m, n), float("nan"), device=device, dtype=out_dtype)
    y_before = y.clone()
    tensors["y"] = y
    kernel(**tensors)
    torch.cuda.synchronize()
    ref = torch.zeros(m, n, dtype=torch.float64, device=device)
    own = torch.zeros(m, dtype=torch.bool, device=device)
    for gi in range(g):
        b, e = offsets[gi], offsets[gi + 1]
        if b == e:
            continue
        wi = int(idx[gi]) if idx is not None else gi
        part = xd[b:e] @ wd[wi].t()
        part, _ = epilogue_ref(part, p, None if bias is None else bias[wi],
                               None)
        if rs is not None:
            part = part * rs[b:e, None].double()
        if p["accumulate"]:
            part = part + y_before[b:e].double()
        ref[b:e] = part
        own[b:e] = True
    return check_rows(y, y_before, ref[own], own, tolerance_of(p))


def run_grouped(kernel, manifest, counts, mmax, n, k, device="cuda"):
    """masked (counts per group) or batched (counts None)."""
    p = manifest["problem"]
    op = p["op"]
    g = len(counts)
    x_kind, w_kind = scale_blocks(manifest)
    x = block_varied((g * mmax, k), 1, 128, device)
    xq, xs_kernel, xd = quantize_x(x, x_kind, p["a_dtype"])
    wq, ws, wd = quantize_w(block_varied((g, n, k), 128, 128, device), w_kind,
                            p["b_dtype"])
    out_dtype = OUT_DTYPES[p["out_dtype"]]
    if p["accumulate"]:
        y = torch.randn(g, mmax, n, device=device).to(out_dtype)
    else:
        y = torch.full((g, mmax, n), float("nan"), device=device,
                       dtype=out_dtype)
    y_before = y.clone()
    if x_kind == "1x128":
        xs_kernel = xs_kernel.view(g, mmax, -1)
    elif x_kind == "per_row":
        xs_kernel = xs_kernel.view(g, mmax)
    tensors = dict(x=xq.view(g, mmax, k), w=wq, w_scale=ws, y=y,
                   x_scale=xs_kernel)
    bias = None
    if p["has_bias"]:
        bias = torch.randn(g, n, device=device)
        tensors["bias"] = bias
    if op == "masked_matmul":
        tensors["masked_m"] = torch.tensor(counts, dtype=torch.int32, device=device)
    kernel(**tensors)
    torch.cuda.synchronize()
    xd = xd.view(g, mmax, k)
    own = torch.zeros(g, mmax, dtype=torch.bool, device=device)
    refs = []
    for gi in range(g):
        c = min(max(counts[gi], 0), mmax)
        if c:
            part = xd[gi, :c] @ wd[gi].t()
            part, _ = epilogue_ref(part, p,
                                   None if bias is None else bias[gi], None)
            if p["accumulate"]:
                part = part + y_before[gi, :c].double()
            refs.append(part)
            own[gi, :c] = True
    ref = torch.cat(refs) if refs else torch.zeros(0, n, dtype=torch.float64,
                                                  device=device)
    return check_rows(y, y_before, ref, own, tolerance_of(p))


def varied(rng, mean, g, empty_fraction):
    out = []
    for _ in range(g):
        if rng.random() < empty_fraction:
            out.append(0)
        else:
            out.append(max(1, int(mean * rng.uniform(0.7, 1.3))))
    return out


def build_cases(names, rng):
    """(label, kernel name, runner args) for every case."""
    cases = []
    dense = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512),
             (7168, 16384), (4096, 7168), (7168, 2048)]
    for n, k in dense:
        for m in (1, 128, 4096):
            cases.append((f"dense m={m} n={n} k={k}", f"fp8_seg_n{n}_k{k}_kernel",
                          ("segment", [m], n, k)))
    # The one-weight kernels (G = 1 static) of the benchmark's dense shapes,
    # at every row bucket of their variants (16, 32, 64, 128, 256, more),
    # with a partial row tile in the 64 and 128 buckets (48, 100 rows), and
    # the promote_pairs kernels of an odd K-block count.
    for name in names:
        if name.startswith(("fp8_dense_n", "int8_dense_n")):
            n, k = (int(t[1:]) for t in name.split("_")[2:4])
            for m in (1, 16, 32, 48, 64, 100, 128, 129, 300, 4096):
                cases.append((f"dense (G = 1 kernel) m={m} n={n} k={k}", name,
                              ("segment", [m], n, k)))
    for m in (1, 128, 4096):
        cases.append((f"dense e5m2 m={m} n=4096 k=7168",
                      "fp8_seg_n4096_k7168_e5m2_kernel",
                      ("segment", [m], 4096, 7168)))
    for g, mean in ((4, 8192), (8, 4096)):
        cases.append((f"grouped e5m2 G={g} rows~{mean} n=4096 k=7168",
                      "fp8_seg_n4096_k7168_e5m2_kernel",
                      ("segment", varied(rng, mean, g, 0.25), 4096, 7168)))
    grouped = [(6144, 7168), (7168, 3072), (4096, 4096), (4096, 2048)]
    for g, mean in ((4, 8192), (8, 4096)):
        for n, k in grouped:
            for variant, empty in (("+-30%", 0.0), ("+-30%, 25% empty", 0.25)):
                lengths = varied(rng, mean, g, empty)
                cases.append((f"grouped G={g} rows~{mean} {variant} n={n} k={k}",
                              f"fp8_seg_n{n}_k{k}_kernel", ("segment", lengths, n, k)))
    def masked(label, kernel, shapes, max_m, n, k):
        """Masked cases of `kernel`: G groups of about m valid rows each."""
        for g, m in shapes:
            counts = varied(rng, m, g, 0.1)
            cases.append((f"masked {label}G={g} m~{m} max_m={max_m} n={n} k={k}",
                          kernel, ("masked", counts, max_m, n, k)))

    deepgemm_masked = ((32, 192), (6, 1024), (32, 20), (6, 20))
    for n, k in [(4096, 7168), (7168, 2048)]:
        masked("", f"fp8_masked_n{n}_k{k}_kernel", deepgemm_masked, 4096, n, k)
    # Swap-AB: DeepGEMM's masked shapes on a 24-row swap-AB kernel.
    masked("swap-AB ", "fp8_masked_n7168_k2048_swap24_kernel", deepgemm_masked,
           1024, 7168, 2048)
    # 2-CTA clusters (cluster_m = 2): 256-row cluster tiles whose second
    # CTA's rows may all lie past a segment's end.
    for g, mean in ((4, 8192), (8, 4096), (5, 300), (17, 100), (3, 129)):
        lengths = varied(rng, mean, g, 0.25)
        cases.append((f"cluster_m=2 G={g} rows~{mean} 25% empty n=4096 k=7168",
                      "fp8_seg_n4096_k7168_c2_kernel", ("segment", lengths, 4096, 7168)))
    masked("cluster_m=2 ", "fp8_masked_n4096_k7168_c2_kernel",
           ((32, 192), (6, 1024), (32, 20)), 4096, 4096, 7168)
    for g, m in ((1, 1), (2, 128), (4, 300), (8, 1000), (16, 64)):
        cases.append((f"batched B={g} m={m} n=1024 k=1024", "fp8_batched_n1024_k1024_kernel",
                      ("batched", [m] * g, m, 1024, 1024)))
    # Split-K clusters walking several tiles each (round > 0: rank 0's
    # buffer handed back and forth): 8-token tiles over 8 CTAs (16 clusters
    # on 132 SMs, so 9 tiles a cluster at 128 tokens), 128x32 over 3.
    for lengths in ([1], [8], [128], [1, 0, 37, 300, 5], varied(rng, 64, 8, 0.25)):
        cases.append((f"split_k=8 G={len(lengths)} rows {lengths[:5]} n=576 k=7168",
                      "fp8_seg_n576_k7168_sk8_kernel", ("segment", lengths, 576, 7168)))
    masked("split_k=3 ", "fp8_masked_n4096_k7168_sk3_kernel",
           ((32, 192), (6, 1024), (6, 20)), 4096, 4096, 7168)
    # split_k_tail: 192x128 tiles, the last wave's split over clusters of 2
    # when it fits the grid (132 CTAs on an H100 or H200): 4096 rows make
    # 704 tiles at N = 4096 (660 whole, 44 split), 300 rows 64 (all split),
    # one row 32; 8 groups of about 4096 rows end with a split tail or not
    # as their sizes fall; 2 x 4096 rows 1408 tiles (1320 whole, 88 split:
    # 176 CTAs, more than the grid, so none split).
    for lengths in ([4096], [300], [1], [4096, 4096], [0, 700, 0, 13],
                    varied(rng, 4096, 8, 0.25)):
        cases.append((f"split_k_tail G={len(lengths)} rows {lengths[:5]} n=4096 k=7168",
                      "fp8_seg_n4096_k7168_tail_kernel",
                      ("segment", lengths, 4096, 7168)))
    masked("split_k_tail ", "fp8_masked_n7168_k2048_tail_kernel",
           ((32, 192), (6, 1024), (6, 20)), 4096, 7168, 2048)
    cases += scale_kind_cases(names, rng)
    cases += int8_cases(names, rng)
    cases += fp8_out_cases(names, rng)
    small = [name for name in names if name.startswith("fp8_seg_")]
    for i in range(110 if small else 0):
        name = small[i % len(small)]
        n, k = (int(t[1:]) for t in name.split("_")[2:4])
        style = rng.choice(["mixed", "tiny", "skewed"])
        g = rng.choice([1, 2, 3, 8, 17])
        if style == "mixed":
            lengths = [rng.choice([0, 1, 2, 63, 64, 65, 127, 128, 129, 200, 300])
                       for _ in range(g)]
        elif style == "tiny":
            lengths = [rng.choice([0, 1, 2, 3, 7, 16]) for _ in range(g)]
        else:
            lengths = [rng.choice([0, 1, 5]) for _ in range(g)]
            lengths[rng.randrange(g)] = rng.randint(500, 3000)
        cases.append((f"random {style} G={g} n={n} k={k}", name,
                      ("segment", lengths, n, k)))
    return cases


def scale_kind_cases(names, rng, operands="fp8"):
    """Cases of the kernels with tensor-wise and per-row scales (those that
    are in the bundles) whose names start with `operands` (fp8 or int8):
    DeepGEMM-like dense, grouped and masked shapes, batched bmm_fp8 shapes,
    segments ending inside a tile, empty groups, swap-AB for few rows per
    group."""
    cases = []
    tag = "" if operands == "fp8" else f"{operands} "

    def add(label, name, spec):
        name = f"{operands}_{name}"
        if name + "_kernel" in names:
            cases.append((tag + label, name + "_kernel", spec))

    for name, n, k in (("seg_n4096_k7168_rowwise", 4096, 7168),
                       ("seg_n2112_k7168_tensor", 2112, 7168)):
        kind = name.rsplit("_", 1)[1]
        for m in (1, 128, 4096):
            add(f"dense {kind} m={m} n={n} k={k}", name, ("segment", [m], n, k))
        for g, mean, empty in ((4, 8192, 0.0), (8, 4096, 0.25)):
            add(f"grouped {kind} G={g} rows~{mean} {int(empty * 100)}% empty "
                f"n={n} k={k}", name,
                ("segment", varied(rng, mean, g, empty), n, k))
    # Segments ending inside a tile, one-row and empty segments.
    for name, n, k in (("seg_n2049_k1600_mixed_idx_bias_gelu", 2049, 1600),
                       ("seg_n999_k1024_channel_rs_acc", 999, 1024)):
        for lengths in ([1, 0, 129, 200, 63, 0, 5], [300, 0, 0, 1],
                        varied(rng, 700, 6, 0.3)):
            add(f"segments {lengths[:4]}... n={n} k={k} "
                f"{name.split('_', 3)[3]}", name, ("segment", lengths, n, k))
    for g, mean in ((8, 20), (16, 40), (3, 64)):
        add(f"swap-AB rowwise G={g} rows~{mean} n=4096 k=7168",
            "seg_n4096_k7168_rowwise_swap32_idx",
            ("segment", varied(rng, mean, g, 0.2), 4096, 7168))
    for name, n, k in (("masked_n4096_k7168_rowwise", 4096, 7168),
                       ("masked_n7168_k2048_channel", 7168, 2048)):
        for g, m in ((32, 192), (6, 1024), (32, 20), (6, 20)):
            add(f"masked {name.rsplit('_', 1)[1]} G={g} m~{m} max_m=1024 "
                f"n={n} k={k}", name,
                ("masked", varied(rng, m, g, 0.1), 1024, n, k))
    for g, m in ((32, 20), (6, 40)):
        add(f"masked swap-AB rowwise G={g} m~{m} max_m=256 n=7168 k=2048",
            "masked_n7168_k2048_rowwise_swap24",
            ("masked", varied(rng, m, g, 0.1), 256, 7168, 2048))
    for g, m in ((1, 1), (2, 128), (4, 300), (8, 1000)):
        add(f"batched tensor B={g} m={m} n=1024 k=1024",
            "batched_n1024_k1024_tensor", ("batched", [m] * g, m, 1024, 1024))
    for g, m in ((1, 65), (3, 257)):
        add(f"batched mixed relu acc f32 B={g} m={m} n=1000 k=1024",
            "batched_n1000_k1024_mixed_relu_acc",
            ("batched", [m] * g, m, 1000, 1024))
    return cases


def fp8_out_inputs(p, x_shape, w_shape, device="cuda"):
    """x and w for an e4m3-output kernel of a_dtype p["a_dtype"]: the kernel
    tensors and their float64 values (FP8 with 1x128 / 128x128 blocks,
    INT8 per row)."""
    x = torch.randn(*x_shape, device=device, dtype=torch.bfloat16)
    w = torch.randn(*w_shape, device=device, dtype=torch.bfloat16) / 16
    if p["a_dtype"] == "bf16":
        return dict(x=x, w=w), x.double(), w.double()
    x_kind, w_kind = scale_blocks({"problem": p})
    flat = x.reshape(-1, x_shape[-1])
    xq, xs, xd = quantize_x(flat, x_kind, p["a_dtype"])
    wq, ws, wd = quantize_w(w, w_kind, p["b_dtype"])
    if len(x_shape) == 3:
        g, mmax = x_shape[:2]
        xq = xq.view(*x_shape)
        xs = (xs.view(g, mmax, -1) if x_kind == "1x128" else xs.view(g, mmax)
              if x_kind == "per_row" else xs)
    return (dict(x=xq, w=wq, x_scale=xs, w_scale=ws), xd.view(*x_shape), wd)


def y_scales_mn_major(lead, rows, nb, device="cuda"):
    """An MN-major y_scale (rows contiguous; rows padded to a multiple of 4
    so that an FP8 op can read it by TMA), NaN-poisoned."""
    pad = -(-rows // 4) * 4
    if lead is None:
        return torch.full((nb, pad), float("nan"), device=device)[:, :rows].t()
    return torch.full((nb, lead, rows), float("nan"),
                      device=device).permute(1, 2, 0)


def check_fp8_rows(q, s, ref, tolerance=1e-4):
    """An e4m3 y's rows `q` with their scales `s` ([R, NB]) against the
    float64 epilogue values `ref` ([R, N]); returns calc_diff of the
    dequantised rows. `tolerance`: how far (relative to the block's
    maximum) the kernel's f32 values may be from `ref` (see
    fp8_out_tolerance)."""
    rows, n = ref.shape
    nb = s.shape[1]
    if rows == 0:
        return 0.0
    if bool((q.view(torch.uint8) == 0x7F).any()):
        raise Failure("e4m3 poison (0x7f) left in rows of a group")
    padded = torch.zeros(rows, nb * 128, dtype=torch.float64, device=ref.device)
    padded[:, :n] = ref
    amax = padded.abs().view(rows, nb, 128).amax(2).clamp(min=1e-4)
    want = amax / 448
    s = s.double()
    if not bool(torch.isfinite(s).all()):
        raise Failure("a y_scale of a group's row is not finite (unwritten?)")
    off = ((s - want).abs() / want).max().item()
    if not off <= tolerance:
        raise Failure(f"y_scale off by {off:.1e} (relative) from amax / 448 "
                      f"(tolerance {tolerance:.0e})")
    full = s.repeat_interleave(128, dim=1)[:, :n]
    yd = q.to(torch.float64) * full
    bound = (2.0 ** -4) * ref.abs() + full * (2.0 ** -9 + 448 * tolerance)
    worst = ((yd - ref).abs() - bound).max().item()
    if worst > 0:
        raise Failure(f"an e4m3 value is {worst:.2e} past half an e4m3 step "
                      f"from the reference")
    return calc_diff(yd, ref)


def epilogue64(p, part, bias, rs, n):
    """bias, activation (SwiGLU: gate columns, then up) and row scale of
    problem `p` on the float64 product `part` (rows x w rows)."""
    if bias is not None:
        part = part + bias.double()
    if p["activation"] == "swiglu":
        part = torch.nn.functional.silu(part[:, :n]) * part[:, n:]
    else:
        part, _ = epilogue_ref(part, p, None, None)
    if rs is not None:
        part = part * rs.double()[:, None]
    return part


def fp8_out_tolerance(p) -> float:
    """How far an e4m3-output kernel's f32 values may be from the float64
    reference, relative to a block's maximum: 1e-4 for bf16 and INT8
    operands (f32 sums); 1e-3 for FP8 ones, whose wgmma products are summed
    with about 14 mantissa bits inside each 128-wide K block (why the
    kernels promote per block; DeepSeek-V3's report, 3.3.2): measured
    1.1-2.8e-4 on an H100 at K = 7168."""
    return 1e-3 if p["a_dtype"] in F8_TYPES else 1e-4


def run_fp8_out(kernel, manifest, spec, device="cuda"):
    """An e4m3-output kernel on random inputs: `spec` is ("fp8out",
    lengths, n, k) for segments (masked: counts and max_m; batched: rows);
    returns the worst calc_diff of the dequantised rows."""
    p = manifest["problem"]
    op = p["op"]
    _, groups_spec, n, k = spec[:4]
    gated = p["activation"] == "swiglu"
    w_rows = 2 * n if gated else n
    nb = -(-n // 128)
    g = len(groups_spec)
    if op == "segment_matmul":
        offsets = [0]
        for length in groups_spec:
            offsets.append(offsets[-1] + length)
        m = offsets[-1] + 3
        tensors, xd, wd = fp8_out_inputs(p, (m, k), (g, w_rows, k), device)
        tensors["seg_indptr"] = torch.tensor(offsets, dtype=torch.int32,
                                             device=device)
        y = torch.full((m, n), 0x7F, dtype=torch.uint8, device=device).view(
            torch.float8_e4m3fn)
        ys = y_scales_mn_major(None, m, nb, device)
        bounds = [(gi, offsets[gi], offsets[gi + 1]) for gi in range(g)]
        rows_of = lambda gi, b, e: slice(b, e)  # noqa: E731
    else:
        mmax = spec[4]
        counts = [min(max(c, 0), mmax) for c in groups_spec]
        tensors, xd, wd = fp8_out_inputs(p, (g, mmax, k), (g, w_rows, k),
                                         device)
        if op == "masked_matmul":
            tensors["masked_m"] = torch.tensor(groups_spec, dtype=torch.int32,
                                               device=device)
        y = torch.full((g, mmax, n), 0x7F, dtype=torch.uint8,
                       device=device).view(torch.float8_e4m3fn)
        ys = y_scales_mn_major(g, mmax, nb, device)
        bounds = [(gi, 0, counts[gi]) for gi in range(g)]
        rows_of = lambda gi, b, e: (gi, slice(b, e))  # noqa: E731
    bias = rs = None
    if p["has_bias"]:
        bias = torch.randn(g, w_rows, device=device)
        tensors["bias"] = bias
    if p["has_row_scale"]:
        rs = torch.rand(*y.shape[:-1], device=device) + 0.5
        tensors["row_scale"] = rs
    y_before = y.clone()
    kernel(**tensors, y=y, y_scale=ys)
    torch.cuda.synchronize()
    own = torch.zeros(y.shape[:-1], dtype=torch.bool, device=device)
    diffs = [0.0]
    for gi, b, e in bounds:
        if b == e:
            continue
        at = rows_of(gi, b, e)
        part = xd[at] @ wd[gi].t()
        ref = epilogue64(p, part, None if bias is None else bias[gi],
                         None if rs is None else rs[at], n)
        diffs.append(check_fp8_rows(y[at], ys[at], ref, fp8_out_tolerance(p)))
        own[at] = True
    other = ~own
    if not (torch.equal(y[other].view(torch.uint8),
                        y_before[other].view(torch.uint8))
            and bool(torch.isnan(ys[other]).all())):
        raise Failure("a row of no group was written (y or y_scale)")
    return max(diffs)


def run_fp8_chain(kernels, manifests, rows, device="cuda"):
    """A bf16 layer with bias and silu writes an e4m3 y (7168 columns) and
    its MN-major scales; the FP8 block-scaled kernel of the next layer
    (K = 7168) reads them as they are. calc_diff of the second layer
    against the float64 product of what it read."""
    first = kernels["fp8out_seg_n7168_k2048_bf16_bias_silu_kernel"]
    second = kernels["fp8_seg_n4096_k7168_kernel"]
    g = len(rows)
    offsets = [0]
    for length in rows:
        offsets.append(offsets[-1] + length)
    m = offsets[-1]
    indptr = torch.tensor(offsets, dtype=torch.int32, device=device)
    x = torch.randn(m, 2048, device=device, dtype=torch.bfloat16)
    w1 = torch.randn(g, 7168, 2048, device=device, dtype=torch.bfloat16) / 16
    b1 = torch.randn(g, 7168, device=device)
    h = torch.empty(m, 7168, device=device, dtype=torch.float8_e4m3fn)
    hs = y_scales_mn_major(None, m, 56, device)
    first(x=x, w=w1, bias=b1, seg_indptr=indptr, y=h, y_scale=hs)
    w2q, w2s = weights(g, 4096, 7168, device)
    out = torch.full((m, 4096), float("nan"), device=device,
                     dtype=torch.bfloat16)
    second(x=h, w=w2q, x_scale=hs, w_scale=w2s, seg_indptr=indptr, y=out)
    torch.cuda.synchronize()
    hd = h.double() * hs.double().repeat_interleave(128, dim=1)[:, :7168]
    wd2 = dequant_w(w2q, w2s)
    diffs = []
    for gi in range(g):
        b, e = offsets[gi], offsets[gi + 1]
        if b == e:
            continue
        ref = hd[b:e] @ wd2[gi].t()
        diff = calc_diff(out[b:e], ref)
        if not diff < 1e-3:
            raise Failure(f"group {gi}: calc_diff {diff:.2e} >= 1e-3")
        diffs.append(diff)
    return max(diffs, default=0.0)


def int8_cases(names, rng):
    """Cases of the INT8 kernels (those that are in the bundles): the
    shapes of the tensor-wise / per-row FP8 cases, and the exact check."""
    cases = scale_kind_cases(names, rng, "int8")
    for name, what in (("int8_seg_n520_k1024_exact_kernel", ""),
                       ("int8_seg_n520_k1024_exact_sk4_kernel", ", split_k=4")):
        if name not in names:
            continue
        for lengths in ([1, 0, 129, 700, 63, 5], [2000],
                        varied(rng, 300, 5, 0.2)):
            cases.append((f"int8 exact integer sums G={len(lengths)} n=520 "
                          f"k=1024{what}", name, ("exact", lengths, 520, 1024)))
    return cases


def fp8_out_cases(names, rng):
    """Cases of the e4m3-output kernels (those that are in the bundles)."""
    cases = []

    def add(label, name, spec):
        if name + "_kernel" in names:
            cases.append((f"e4m3 y {label}", name + "_kernel", spec))

    for name, n, k in (("fp8out_seg_n7168_k2048_bf16_bias_silu", 7168, 2048),
                       ("fp8out_seg_n4096_k7168_fp8", 4096, 7168),
                       ("fp8out_seg_n2112_k7168_int8", 2112, 7168),
                       ("fp8out_seg_n768_k2048_bf16_swiglu", 768, 2048)):
        kind = name.split("_", 4)[4]
        for lengths in ([1, 0, 129, 300, 63, 0, 5], varied(rng, 2048, 4, 0.25),
                        varied(rng, 20, 8, 0.2)):
            add(f"segments {lengths[:4]}... n={n} k={k} {kind}", name,
                ("fp8out", lengths, n, k))
    for g, m in ((32, 192), (6, 1024), (32, 20)):
        add(f"masked G={g} m~{m} max_m=1024 n=7168 k=2048",
            "fp8out_masked_n7168_k2048_bf16",
            ("fp8out", varied(rng, m, g, 0.1), 7168, 2048, 1024))
    for g, m in ((1, 65), (3, 257)):
        add(f"batched B={g} m={m} n=1000 k=1024 row_scale relu",
            "fp8out_batched_n1000_k1024_bf16_rs_relu",
            ("fp8out", [m] * g, 1000, 1024, m))
    if {"fp8out_seg_n7168_k2048_bf16_bias_silu_kernel",
            "fp8_seg_n4096_k7168_kernel"} <= set(names):
        for lengths in ([128, 0, 1, 300], varied(rng, 1024, 4, 0.25)):
            cases.append((f"e4m3 y chain: bf16 -> e4m3 (n=7168) -> FP8 "
                          f"(n=4096) G={len(lengths)}",
                          "fp8_seg_n4096_k7168_kernel", ("chain", lengths)))
    return cases


def run_case(kernels, manifests, name, spec, rng):
    kind = spec[0]
    if kind == "exact":
        _, lengths, n, k = spec
        return run_int8_exact(kernels[name], lengths, n, k)
    if kind == "fp8out":
        return run_fp8_out(kernels[name], manifests[name], spec)
    if kind == "chain":
        return run_fp8_chain(kernels, manifests, spec[1])
    if kind == "segment":
        _, lengths, n, k = spec
        return run_segment(kernels[name], manifests[name], lengths, n, k, rng)
    if kind == "masked":
        _, counts, mmax, n, k = spec
        return run_grouped(kernels[name], manifests[name], counts, mmax, n, k)
    _, counts, m, n, k = spec
    return run_grouped(kernels[name], manifests[name], [m] * len(counts), m, n, k)


# ----------------------------------------------------------------------------
# Benchmark
# ----------------------------------------------------------------------------

# L2 is 50 MB on an H100 and 60 MB on an H200; reading or zeroing this
# many bytes evicts what a timed launch could otherwise find there.
FLUSH_BYTES = 256 << 20
# "queued" (median_ms's default) or "idle": each launch timed from an idle
# GPU with warm caches, as before 2026-11-26 (--timing idle shows the
# difference in one run).
TIMING = "queued"
# How median_ms evicts L2 before each timed launch. "read" (the default
# since 2026-11-27) sums FLUSH_BYTES (zeroed once): L2 is left holding
# clean lines, and whatever an earlier launch left dirty is written back
# during the sum, before the timed launch. "write" zeroes FLUSH_BYTES (the
# method from 2026-11-26, DeepGEMM's too): it leaves L2 full of dirty
# lines, whose write-back then shares DRAM with the timed launch's reads;
# on an H100 a plain 117 MB read took 56.6 µs after it against 46.4 after
# a read (bench/NOTES.md v25). "none" does not evict (a control).
FLUSH = "read"


def _l2_evictor(flush):
    if flush == "none":
        return lambda: None
    buf = torch.empty(FLUSH_BYTES // 4, dtype=torch.float32, device="cuda")
    if flush == "write":
        return buf.zero_
    if flush == "read":
        buf.zero_()
        return buf.sum
    raise ValueError(f"median_ms: flush must be write, read or none, got {flush!r}")


def median_ms(fns, repeats=20, warmup=3, flush=None):
    """Medians of CUDA-event timings of each of `fns`, in interleaved rounds
    (one launch of each per round), so that a clock drifting over the run
    weighs on ggemm and its peer alike (bench/NOTES.md: timing one
    function's launches in a row moved the last one by up to 14 %).

    Each round starts with a sleep kernel long enough for the host to queue
    the whole round behind it (checked: a round whose sleep ended before the
    host had queued it is discarded and the sleep doubled), so that no
    event pair times the host's launch overhead, which was most of a
    50-90 us launch when each launch was timed from an idle GPU
    (bench/NOTES.md v17); L2 is flushed before each timed launch (`flush`,
    default FLUSH), so that no launch reads the weights its predecessor left
    in L2; and the rounds rotate which function goes first."""
    for fn in fns:
        for _ in range(warmup):
            fn()
    if TIMING == "idle":
        times = [[] for _ in fns]
        for _ in range(repeats):
            for fn, out in zip(fns, times):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                out.append(start.elapsed_time(end))
        return [statistics.median(t) for t in times]
    evict = _l2_evictor(flush or FLUSH)
    sleep_cycles = 1 << 21
    times = [[] for _ in fns]
    done = 0
    while done < repeats:
        torch.cuda.synchronize()
        torch.cuda._sleep(sleep_cycles)
        slept = torch.cuda.Event()
        slept.record()
        # Each round starts at the next function: the first launch after
        # the sleep ran 1-6 % slower than an identical kernel timed later
        # in the round (same PTX, 14-60 µs launches; NOTES v17).
        order = [(i + done) % len(fns) for i in range(len(fns))]
        events = [None] * len(fns)
        for i in order:
            evict()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fns[i]()
            end.record()
            events[i] = (start, end)
        if slept.query():
            if sleep_cycles >= 1 << 34:
                raise RuntimeError("median_ms: the host cannot queue one "
                                   "round within a 2^34-cycle sleep")
            sleep_cycles *= 2
            continue
        torch.cuda.synchronize()
        for (start, end), out in zip(events, times):
            out.append(start.elapsed_time(end))
        done += 1
    return [statistics.median(t) for t in times]


def median_ms_and_plain_read(fns, weight_bytes):
    """median_ms of `fns` and, in the same rounds, of a plain read of
    `weight_bytes` (torch.sum over a bf16 buffer that size): what a launch
    reading that much reaches, the decode table's reference.
    Returns (times of fns, time of the plain read)."""
    plain = torch.zeros(weight_bytes // 2, device="cuda", dtype=torch.bfloat16)
    times = median_ms(list(fns) + [plain.sum])
    return times[:-1], times[-1]


def blockwise_peers(xq, xs_mn, wq, ws):
    """Ways this torch may run cuBLAS's block-scaled FP8 (1x128 activation,
    128x128 weight scales); the first that runs is the peer."""
    peers = []
    F = torch.nn.functional
    if hasattr(F, "scaled_mm") and hasattr(F, "ScalingType"):
        peers.append(("F.scaled_mm blockwise", lambda: F.scaled_mm(
            xq, wq.t(), xs_mn, F.ScalingType.BlockWise1x128, ws,
            F.ScalingType.BlockWise128x128, output_dtype=torch.bfloat16)))
    peers.append(("torch._scaled_mm blockwise", lambda: torch._scaled_mm(
        xq, wq.t(), scale_a=xs_mn, scale_b=ws.t(), out_dtype=torch.bfloat16)))
    return peers


def runnable(fn, width=120):
    """`fn` if it runs once on this torch (then synchronised), else the
    error text (its first `width` characters): peers are optional."""
    try:
        fn()
        torch.cuda.synchronize()
        return fn
    except Exception as error:  # noqa: BLE001 - the peer is optional
        return f"{type(error).__name__}: {str(error)[:width]}"


def first_peer(peers):
    errors = []
    for label, fn in peers:
        result = runnable(fn, 100)
        if callable(result):
            return label, fn, errors
        errors.append(f"{label}: {result}")
    return None, None, errors


def bench(kernels, manifests, lines, baseline=None):
    # DeepGEMM's whole dense list (issue 10: every shape of its lists is
    # measured against the best peer, or its row says why not).
    shapes = [("dense", 1, m, n, k) for m in (1, 128, 4096)
              for n, k in [(7168, 16384), (4096, 7168), (2112, 7168), (7168, 2048),
                           (576, 7168), (24576, 1536), (32768, 512)]]
    shapes += [("grouped", g, rows, n, k) for g, rows in ((4, 8192), (8, 4096))
               for n, k in [(6144, 7168), (4096, 4096), (7168, 3072), (4096, 2048)]]
    ratios = []
    peer_labels = set()
    # Decode rows (M <= 128 per group): the weight bytes each launch must
    # read, against the measured HBM read bandwidth (issue 10: >= 85 %).
    decode = []
    lines += ["", "## Speed (same run; TFLOP/s from the median of 20 "
              "interleaved CUDA-event timings, launches queued behind a sleep "
              f"kernel, L2 evicted before each by a {FLUSH} of "
              f"{FLUSH_BYTES >> 20} MB)", "",
              "| shape | GGEMM ms | GGEMM TFLOP/s | cuBLAS block-scaled ms | peer TFLOP/s | ratio |"
              + (" baseline TFLOP/s | new / baseline |" if baseline else ""),
              "|---|---|---|---|---|---|" + ("---|---|" if baseline else "")]
    for kind, g, rows, n, k in shapes:
        name = f"fp8_seg_n{n}_k{k}_kernel"
        # Dense shapes on their one-weight kernel (G = 1 static, as a dense
        # call of the Python layer compiles it: its row buckets know the
        # group count); the any-G kernel is timed in the same rounds.
        dense_name = f"fp8_dense_n{n}_k{k}_kernel"
        any_g = None
        if kind == "dense" and dense_name in kernels:
            any_g = kernels.get(name)
            name = dense_name
        if name not in kernels:
            continue
        m = g * rows
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        xq, xs = quantize_rows(x)
        wq, ws = weights(g, n, k)
        xs_mn = mn_major(xs)
        offsets = torch.arange(0, m + 1, rows, dtype=torch.int32, device="cuda")
        y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        kern = kernels[name]

        def ours():
            kern(x=xq, w=wq, x_scale=xs_mn, w_scale=ws, seg_indptr=offsets, y=y)
        # The grouped baseline: cuBLAS block-scaled per group.
        fns, label, peer_note = [], None, ""
        for gi in range(g):
            a = xq[gi * rows:(gi + 1) * rows]
            sa = mn_major(xs[gi * rows:(gi + 1) * rows])
            label, fn, errors = first_peer(blockwise_peers(a, sa, wq[gi], ws[gi]))
            if fn is None:
                peer_note = "unavailable: " + "; ".join(errors)
                break
            fns.append(fn)
        timed = [ours]
        if len(fns) == g:
            timed.append(lambda: [f() for f in fns])
            peer_labels.add(label)
        if any_g is not None:
            timed.append(lambda: any_g(x=xq, w=wq, x_scale=xs_mn, w_scale=ws,
                                       seg_indptr=offsets, y=y))
        if baseline and name in baseline:
            base = baseline[name]
            timed.append(lambda: base(x=xq, w=wq, x_scale=xs_mn, w_scale=ws,
                                      seg_indptr=offsets, y=y))
        # Decode rows: a plain read of the weight bytes in the same rounds.
        if rows <= 128:
            times, t_plain = median_ms_and_plain_read(timed, g * n * k)
        else:
            times, t_plain = median_ms(timed), None
        any_g_note = ""
        if any_g is not None:
            t_any = times[2 if len(fns) == g else 1]
            any_g_note = (f" (any-G kernel {t_any:.3f} ms, "
                          f"{2.0 * m * n * k / t_any / 1e9:.0f} TFLOP/s)")
        t_ours = times[0]
        peer = times[1] if len(fns) == g else None
        base_cols = ""
        if baseline and name in baseline:
            t_base = times[-1]
            base_cols = (f" {2.0 * m * n * k / t_base / 1e9:.0f} |"
                         f" {t_base / t_ours:.2f} |")
        flops = 2.0 * m * n * k
        tf = lambda ms: flops / ms / 1e9  # noqa: E731
        if rows <= 128:
            decode.append((f"{kind} G={g} M={m} N={n} K={k}", g * n * k,
                           t_ours, peer, t_plain))
        if peer:
            ratio = t_ours and peer / t_ours
            ratios.append(ratio)
            lines.append(f"| {kind} G={g} M={m} N={n} K={k}{any_g_note} | "
                         f"{t_ours:.3f} | "
                         f"{tf(t_ours):.0f} | {peer:.3f} | {tf(peer):.0f} | {ratio:.2f} |"
                         + base_cols)
        else:
            lines.append(f"| {kind} G={g} M={m} N={n} K={k} | {t_ours:.3f} | "
                         f"{tf(t_ours):.0f} | {peer_note} | | |")
        print(lines[-1], flush=True)
    # DeepGEMM's masked shapes (G groups of m rows each, every group's
    # weights read once; max_m 4096 as in its list, 128 for the decode
    # rows of about 20) and FlagGems-style batched bmm (B x M rows), each
    # against a per-group cuBLAS loop.
    grouped_shapes = [("masked", n, k, g, m) for n, k in [(4096, 7168), (7168, 2048)]
                      for g, m in ((32, 192), (6, 1024), (32, 20), (6, 20))]
    grouped_shapes += [("batched", 1024, 1024, b, m) for b, m in ((8, 4096), (32, 256))]
    for op, n, k, g, m in grouped_shapes:
        name = f"fp8_{op}_n{n}_k{k}_kernel"
        if name not in kernels:
            continue
        # No empty group: every group's weights are read (the weight bytes
        # of the decode rows count all G).
        counts = [m] * g
        mmax = m
        if op == "masked":
            counts = varied(random.Random(g * 1000 + m), m, g, 0.0)
            mmax = 128 if m <= 128 else 4096
            if m > 128:
                # +-30 % as DeepGEMM's test, rounded down to 16 rows, which
                # cuBLAS's block-scaled path takes (it refuses ~20 rows).
                counts = [max(16, c // 16 * 16) for c in counts]
        x = torch.randn(g * mmax, k, device="cuda", dtype=torch.bfloat16)
        xq, xs = quantize_rows(x)
        wq, ws = weights(g, n, k)
        y = torch.empty(g, mmax, n, device="cuda", dtype=torch.bfloat16)
        xs3 = mn_major(xs).view(g, mmax, -1)
        args = dict(x=xq.view(g, mmax, k), w=wq, x_scale=xs3, w_scale=ws, y=y)
        if op == "masked":
            args["masked_m"] = torch.tensor(counts, dtype=torch.int32,
                                            device="cuda")
        kern = kernels[name]
        fns, note = [], ""
        for gi, c in enumerate(counts):
            a = xq[gi * mmax:gi * mmax + c]
            # cuBLAS wants MN-major scales with a stride of exactly the
            # rows (no padding to 16 bytes, unlike the kernel's TMA).
            sa = xs[gi * mmax:gi * mmax + c].t().contiguous().t()
            label, fn, errors = first_peer(
                blockwise_peers(a, sa, wq[gi], ws[gi]))
            if fn is None:
                note = "unavailable: " + "; ".join(errors)
                break
            fns.append(fn)
        timed = [lambda: kern(**args)]
        if len(fns) == g:
            timed.append(lambda: [f() for f in fns])
        base = baseline.get(name) if baseline else None
        if base is not None:
            timed.append(lambda: base(**args))
        tag = (f"masked G={g} m~{m} N={n} K={k}" if op == "masked"
               else f"batched B={g} M={m} N={n} K={k}")
        if m <= 128:
            times, t_plain = median_ms_and_plain_read(timed, g * n * k)
            decode.append((tag, g * n * k, times[0], times[1]
                           if len(fns) == g else None, t_plain))
        else:
            times = median_ms(timed)
        peer = times[1] if len(fns) == g else None
        if peer:
            ratios.append(peer / times[0])
            peer_labels.add(label)
        flops = 2.0 * sum(counts) * n * k
        base_cols = ""
        if base is not None:
            base_cols = (f" {flops / times[-1] / 1e9:.0f} |"
                         f" {times[-1] / times[0]:.2f} |")
        lines.append(f"| {tag} | {times[0]:.3f} | "
                     f"{flops / times[0] / 1e9:.0f} | "
                     + (f"{peer:.3f} | {flops / peer / 1e9:.0f} | "
                        f"{peer / times[0]:.2f} |" if peer else
                        f"{note} | | |") + base_cols)
        print(lines[-1], flush=True)
    lines += ["", f"Peer: {', '.join(sorted(peer_labels)) or 'none ran'} "
              "(grouped and masked shapes: one call per group)."]
    if decode:
        hbm = hbm_read_tbs()
        shares = []
        lines += ["", "## Decode: weight bytes per second (M <= 128 per "
                  "group)", "",
                  f"HBM read ceiling, measured in this run: {hbm:.2f} TB/s "
                  "(median time of torch.sum over 4 GiB of bf16). A plain "
                  "read of the weight bytes alone: torch.sum over a buffer "
                  "of that size, timed in the same rounds as the row's "
                  "kernels (its launch and ramp included, as theirs are).",
                  "",
                  "| shape | weight MB | GGEMM ms | GGEMM TB/s | % of HBM read "
                  "| peer TB/s | plain read TB/s | % of plain read |",
                  "|---|---|---|---|---|---|---|---|"]
        for tag, wbytes, t, peer, t_plain in decode:
            tbs = wbytes / t / 1e9
            shares.append(tbs / hbm)
            lines.append(f"| {tag} | {wbytes / 1e6:.1f} | {t:.3f} | "
                         f"{tbs:.2f} | {100 * tbs / hbm:.0f} | "
                         + (f"{wbytes / peer / 1e9:.2f} |" if peer else "|")
                         + f" {wbytes / t_plain / 1e9:.2f} | "
                         f"{100 * t_plain / t:.0f} |")
            print(lines[-1], flush=True)
        line = (f"fp8-decode: min share of HBM read bandwidth "
                f"{100 * min(shares):.0f} % over {len(shares)} shapes")
        lines += ["", line]
        print(line, flush=True)
    summary = (f"fp8-bench: min ratio vs best peer {min(ratios):.2f} over "
               f"{len(ratios)} shapes" if ratios else "fp8-bench: no peer ran")
    lines += ["", summary]
    print(summary, flush=True)


def hbm_read_tbs():
    """The HBM read bandwidth a large reduction reaches (TB/s): torch.sum
    over 4 GiB of bf16, median of median_ms's timings."""
    big = torch.ones(1 << 31, device="cuda", dtype=torch.bfloat16)
    [t] = median_ms([lambda: big.sum()])
    del big
    torch.cuda.empty_cache()
    return (1 << 32) / t / 1e9


def scaled_mm_peer(xq, xs, wq, ws):
    """torch._scaled_mm on one weight with the same tensor-wise or per-row
    scales (cuBLAS's row-wise / tensor-wise FP8), or the error text where
    this torch refuses them."""
    a_scale = xs.reshape(1, 1) if xs.numel() == 1 else xs.reshape(-1, 1)
    b_scale = ws.reshape(1, 1) if ws.numel() == 1 else ws.reshape(1, -1)
    fn = lambda: torch._scaled_mm(xq, wq.t(), scale_a=a_scale,  # noqa: E731
                                  scale_b=b_scale, out_dtype=torch.bfloat16)
    return runnable(fn)


def scaled_grouped_mm_peer(xq, xs, wq, ws, offsets):
    """torch._scaled_grouped_mm over all groups at once (x [M, K] with
    per-row or tensor-wise scales, w [G, N, K] read K-major as [G, K, N]
    with per-channel or per-group scales, `offsets` the groups' ends), or
    the error text where this torch refuses the scaling or the shapes."""
    g = wq.shape[0]
    a_scale = xs.reshape(-1).expand(xq.shape[0]).contiguous() \
        if xs.numel() == 1 else xs.reshape(-1)
    b_scale = ws.reshape(g, 1).expand(g, wq.shape[1]).contiguous() \
        if ws.numel() == g else ws.reshape(g, -1)
    fn = lambda: torch._scaled_grouped_mm(  # noqa: E731
        xq, wq.transpose(-2, -1), a_scale, b_scale, offs=offsets[1:],
        out_dtype=torch.bfloat16)
    return runnable(fn)


def dense_variants(kernels, name, g, baseline):
    """For one group: the one-weight kernel of `name` (`*_dense_*`, as a
    dense call of the Python layer compiles it) to time as ours, and the
    others to time in the same rounds: the any-G kernel, and the one-weight
    kernel of the baseline bundles. Returns (kernel, [(label, kernel)])."""
    dense = name.replace("_seg_", "_dense_")
    if g != 1 or dense not in kernels:
        return kernels[name], []
    others = [("any-G kernel", kernels[name])]
    if baseline and dense in baseline:
        others.append(("baseline", baseline[dense]))
    return kernels[dense], others


def others_note(others, times):
    return "".join(f" ({label} {t:.3f} ms)" for (label, _), t in
                   zip(others, times))


def bench_scaled(kernels, lines, baseline=None):
    """The tensor-wise and per-row kernels against torch._scaled_mm with
    the same scales (one call per group on the grouped shapes) and, on the
    grouped shapes, torch._scaled_grouped_mm (one call; row-wise scales,
    the one scaling it takes for FP8 in torch 2.11: a tensor-wise scale is
    passed expanded to rows and channels, which is the same product). The
    ratio is against the faster peer."""
    shapes = [("per_row", "fp8_seg_n4096_k7168_rowwise_kernel", g, rows,
               4096, 7168) for g, rows in ((1, 128), (1, 4096), (8, 4096))]
    shapes += [("tensor", "fp8_seg_n2112_k7168_tensor_kernel", g, rows, 2112,
                7168) for g, rows in ((1, 128), (1, 4096), (4, 8192))]
    ratios = []
    lines += ["", "## Speed, tensor-wise and per-row scales (same run; "
              "median of 20 interleaved CUDA-event timings)", "",
              "| scales | shape | GGEMM ms | GGEMM TFLOP/s | torch._scaled_mm ms "
              "| peer TFLOP/s | torch._scaled_grouped_mm ms (TFLOP/s) | ratio vs best peer |",
              "|---|---|---|---|---|---|---|---|"]
    for kind, name, g, rows, n, k in shapes:
        if name not in kernels:
            continue
        m = g * rows
        xq, xs, _ = quantize_x(torch.randn(m, k, device="cuda",
                                           dtype=torch.bfloat16), kind)
        wq, ws, _ = quantize_w(torch.randn(g, n, k, device="cuda",
                                           dtype=torch.bfloat16), kind)
        offsets = torch.arange(0, m + 1, rows, dtype=torch.int32,
                               device="cuda")
        y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        kern, others = dense_variants(kernels, name, g, baseline)

        def ours():
            kern(x=xq, w=wq, x_scale=xs, w_scale=ws, seg_indptr=offsets, y=y)
        other_fns = [lambda o=o: o(x=xq, w=wq, x_scale=xs, w_scale=ws,
                                   seg_indptr=offsets, y=y)
                     for _, o in others]
        fns, refusal = [], ""
        for gi in range(g):
            part = slice(gi * rows, (gi + 1) * rows)
            fn = scaled_mm_peer(xq[part], xs if kind == "tensor" else xs[part],
                                wq[gi], ws[gi])
            if isinstance(fn, str):
                refusal = fn
                break
            fns.append(fn)
        tf = lambda ms: 2.0 * m * n * k / ms / 1e9  # noqa: E731
        label = f"G={g} M={m} N={n} K={k}"
        grouped = (scaled_grouped_mm_peer(xq, xs, wq, ws, offsets) if g > 1
                   else None)
        peers = [lambda: [f() for f in fns]] if len(fns) == g else []
        if callable(grouped):
            peers.append(grouped)
        t_ours, *times = median_ms([ours] + peers + other_fns)
        t_peers, t_others = times[:len(peers)], times[len(peers):]
        peer = t_peers[0] if len(fns) == g else None
        t_grouped = t_peers[-1] if callable(grouped) else None
        label += others_note(others, t_others)
        cells = (f"{peer:.3f} | {tf(peer):.0f}" if peer is not None else
                 f"torch._scaled_mm refused: {refusal} |")
        cells += (f" | {t_grouped:.3f} ({tf(t_grouped):.0f})" if t_grouped
                  else f" | refused: {grouped}" if isinstance(grouped, str)
                  else " |")
        best = min(t_peers) if t_peers else None
        if best:
            ratios.append(best / t_ours)
        lines.append(f"| {kind} | {label} | {t_ours:.3f} | {tf(t_ours):.0f}"
                     f" | {cells} | " + (f"{best / t_ours:.2f} |" if best
                                         else "|"))
        print(lines[-1], flush=True)
    summary = (f"fp8-scaled-bench: min ratio vs best peer "
               f"{min(ratios):.2f} over {len(ratios)} shapes" if ratios else
               "fp8-scaled-bench: no peer ran")
    lines += ["", summary]
    print(summary, flush=True)


def bench_int8(kernels, lines, baseline=None):
    """The INT8 kernels against cuBLAS's int8 GEMM (torch._int_mm, one call
    per group) followed by the same dequantisation in torch (int32 sum to
    f32, times the scales, to bf16): what a torch user writes without a
    fused kernel. The peer's _int_mm alone is listed too."""
    shapes = [("per_row", "int8_seg_n4096_k7168_rowwise_kernel", g, rows,
               4096, 7168) for g, rows in ((1, 128), (1, 4096), (8, 4096))]
    shapes += [("tensor", "int8_seg_n2112_k7168_tensor_kernel", g, rows,
                2112, 7168) for g, rows in ((1, 128), (1, 4096), (4, 8192))]
    ratios = []
    lines += ["", "## Speed, INT8 (same run; median of 20 interleaved CUDA-event "
              "timings; TOPS = 2 M N K / time)", "",
              "| scales | shape | GGEMM ms | GGEMM TOPS | _int_mm + dequant ms "
              "| peer TOPS | _int_mm alone ms | ratio |",
              "|---|---|---|---|---|---|---|---|"]
    for kind, name, g, rows, n, k in shapes:
        if name not in kernels:
            continue
        m = g * rows
        xq, xs, _ = quantize_x(torch.randn(m, k, device="cuda",
                                           dtype=torch.bfloat16), kind, "s8")
        wq, ws, _ = quantize_w(torch.randn(g, n, k, device="cuda",
                                           dtype=torch.bfloat16), kind, "s8")
        offsets = torch.arange(0, m + 1, rows, dtype=torch.int32,
                               device="cuda")
        y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        kern, others = dense_variants(kernels, name, g, baseline)

        def ours():
            kern(x=xq, w=wq, x_scale=xs, w_scale=ws, seg_indptr=offsets, y=y)
        other_fns = [lambda o=o: o(x=xq, w=wq, x_scale=xs, w_scale=ws,
                                   seg_indptr=offsets, y=y)
                     for _, o in others]
        parts = [slice(gi * rows, (gi + 1) * rows) for gi in range(g)]
        wt = [wq[gi].t() for gi in range(g)]  # [K, N], column-major

        def x_scale(part):
            return xs.reshape(1, 1) if kind == "tensor" else \
                xs[part].reshape(-1, 1)

        def w_scale(gi):
            return ws[gi].reshape(1, 1) if kind == "tensor" else \
                ws[gi].reshape(1, -1)

        def peer_mm():
            return [torch._int_mm(xq[part], wt[gi])
                    for gi, part in enumerate(parts)]

        def peer():
            return [(acc.float() * x_scale(part) * w_scale(gi)).to(
                torch.bfloat16) for gi, (part, acc) in
                enumerate(zip(parts, peer_mm()))]

        tops = lambda ms: 2.0 * m * n * k / ms / 1e9  # noqa: E731
        label = f"G={g} M={m} N={n} K={k}"
        try:
            peer()
        except Exception as error:  # noqa: BLE001 - the peer is optional
            [t_ours] = median_ms([ours])
            lines.append(f"| {kind} | {label} | {t_ours:.3f} | "
                         f"{tops(t_ours):.0f} | torch._int_mm refused: "
                         f"{type(error).__name__}: {str(error)[:100]} | | | |")
            print(lines[-1], flush=True)
            continue
        t_ours, t_peer, t_mm, *t_others = median_ms([ours, peer, peer_mm]
                                                     + other_fns)
        label += others_note(others, t_others)
        ratios.append(t_peer / t_ours)
        lines.append(f"| {kind} | {label} | {t_ours:.3f} | {tops(t_ours):.0f} "
                     f"| {t_peer:.3f} | {tops(t_peer):.0f} | {t_mm:.3f} | "
                     f"{t_peer / t_ours:.2f} |")
        print(lines[-1], flush=True)
    summary = (f"int8-bench: min ratio vs torch._int_mm + dequant "
               f"{min(ratios):.2f} over {len(ratios)} shapes" if ratios else
               "int8-bench: no peer ran")
    lines += ["", summary]
    print(summary, flush=True)


def main() -> int:
    global TIMING, FLUSH  # noqa: PLW0603
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--report", type=Path)
    parser.add_argument("--bench", action="store_true")
    parser.add_argument("--timing", choices=("queued", "idle"),
                        default="queued",
                        help="queued: launches behind a sleep kernel, L2 "
                        "flushed before each (default); idle: each launch "
                        "timed from an idle GPU, caches warm (the method "
                        "before 2026-11-26, to compare)")
    parser.add_argument("--flush", choices=("write", "read"),
                        default=FLUSH,
                        help="how L2 is evicted before each timed launch: "
                        "read (sum 256 MB, leaving no dirty lines; default) "
                        "or write (zero 256 MB, the method before "
                        "2026-11-27)")
    parser.add_argument("--skip-check", action="store_true",
                        help="with --bench: time only (no check cases)")
    parser.add_argument("--only", metavar="TEXT",
                        help="check only the cases whose label contains TEXT "
                        "(a shorter sanitizer run: racecheck takes minutes "
                        "a case)")
    parser.add_argument("--bench-kinds", nargs="+",
                        choices=("block", "scaled", "int8"),
                        default=["block", "scaled", "int8"],
                        help="which tables --bench times: block-scaled FP8, "
                        "tensor-wise / per-row FP8, INT8 (default: all)")
    parser.add_argument("--baseline", type=Path,
                        help="bundles of an earlier version to time in the same run")
    parser.add_argument("--commit", default=os.environ.get("GGEMM_COMMIT", "unknown"))
    args = parser.parse_args()
    TIMING = args.timing
    FLUSH = args.flush

    torch.cuda.init()
    manifests = {}
    import json
    for path in sorted(args.bundles.glob("*.json")):
        manifests[path.stem] = json.loads(path.read_text())
    kernels = {name: Kernel(args.bundles / f"{name}.json") for name in manifests}
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    cases = build_cases(sorted(kernels), rng)
    if args.only:
        cases = [case for case in cases if args.only in case[0]]
    if args.skip_check:
        cases = []
    passed = failed = 0
    failures = []
    print(f"seed {args.seed}; {len(kernels)} kernels, {len(cases)} cases", flush=True)
    rows = []
    for index, (label, name, spec) in enumerate(cases):
        try:
            diff = run_case(kernels, manifests, name, spec, rng)
            ok, note = True, f"calc_diff {diff:.1e}"
        except Exception as exc:  # noqa: BLE001 - report every failure
            ok, note = False, f"{type(exc).__name__}: {exc}"
        passed += ok
        failed += not ok
        line = f"case {index:3d} {label:55s} {name:34s} {note} {'PASS' if ok else 'FAIL'}"
        print(line, flush=True)
        rows.append(f"| {index} | {label} | {name} | {note} | {'PASS' if ok else 'FAIL'} |")
        if not ok:
            failures.append(line)
        torch.cuda.empty_cache()
    summary = f"gpu-check-fp8: {passed} passed, {failed} failed"
    props = torch.cuda.get_device_properties(0)
    lines = [
        "# FP8 and INT8 GPU check (block, tensor-wise and per-row scales)",
        "",
        f"- device: {props.name} ({props.multi_processor_count} SMs), torch "
        f"{torch.__version__}, CUDA {torch.version.cuda}",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- commit: {args.commit}",
        f"- script: test/gpu/check_fp8.py --seed {args.seed}"
        + (f" --bench --bench-kinds {' '.join(args.bench_kinds)} "
           f"--timing {args.timing} --flush {args.flush}" if args.bench else "")
        + (" --skip-check" if args.skip_check else "")
        + (f" --only '{args.only}'" if args.only else ""),
        "- inputs: normal values whose magnitude changes by 2^-3..2^3 from one "
        "scale block to the next (1x128 of x, 128x128 of w), so that each "
        "block has a scale of its own",
        "- criterion: DeepGEMM's calc_diff(out, ref) < 1e-3 against the float64 "
        "product of the dequantised e4m3 operands (1x128 / 128x128, per-row, "
        "per-channel or tensor-wise scales, amax/448), no NaN poison left "
        "in rows of a group, rows of no group "
        "bit-identical; fresh random inputs per case. INT8 (`int8 ...` "
        "cases): calc_diff < 1e-5 against the float64 product of the "
        "dequantised int8 operands (amax / 127), and the `exact` cases "
        "equal to the integer product bit for bit",
        "",
        "| # | case | kernel | result | |",
        "|---|---|---|---|---|",
    ] + rows + ["", summary]
    print(summary, flush=True)
    if args.bench:
        baseline = None
        if args.baseline:
            baseline = {path.stem: Kernel(path)
                        for path in sorted(args.baseline.glob("*.json"))}
            lines += ["", f"Baseline: {args.baseline} (commit "
                      f"{(args.baseline / 'COMMIT').read_text().strip() if (args.baseline / 'COMMIT').exists() else 'unknown'})"]
        if "block" in args.bench_kinds:
            bench(kernels, manifests, lines, baseline)
        if "scaled" in args.bench_kinds:
            bench_scaled(kernels, lines, baseline)
        if "int8" in args.bench_kinds:
            bench_int8(kernels, lines, baseline)
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text("\n".join(lines) + "\n")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
