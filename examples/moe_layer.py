#!/usr/bin/env python3
"""A trainable Mixture-of-Experts FFN on GGEMM's fused path: router, top-k,
routing on the device, the up projection gathering token rows with SwiGLU
in its epilogue, the down projection weighted by the routing weights and
scattered into per-pair slots, a fixed-order top-k sum — forward and
backward, checked against plain torch and timed against the glued layer.

Per forward (``MoELayer``), with no token permuted in memory and no host
synchronisation:

1. ``router`` (a linear layer) and top-k: each token's ``top_k`` experts
   and their softmax weights;
2. ``ggemm.sort_by_expert``: the (token, k) pairs sorted by expert on the
   device (GGEMM's routing kernel, or torch's sort for many pairs): the
   segment offsets, the token of each sorted row and its pair;
3. ``h = segment_matmul(x, w13, seg_indptr, row_indices=token,
   activation="swiglu")``: each row reads its token's row of x, ``w13``
   holds each expert's gate rows then up rows (``[E, 2I, H]``, vLLM's and
   SGLang's layout) and the epilogue computes ``silu(gate) * up``;
4. the down projection with each row's routing weight as the kernel's
   ``row_scale``, each result row written to its pair's slot of a
   ``[T, top_k, H]`` buffer (``scatter_indices``), then the sum over the
   top-k slots in a fixed order: the output is bitwise repeatable.
   ``combine="atomic"`` adds each row onto its token's float32 row with
   atomic adds instead (one pass less, order of the sum not fixed).

Backward: autograd through the GGEMM ops (``ggemm.torch_ops``): gather and
SwiGLU, the row scale (the router's gradient), dW on the K-ragged kernel.
A scattered call writes into ``out=`` and is not differentiable, so while
autograd records, the down projection returns its rows and torch puts
them into the slots (``index_copy``; ``index_add`` for ``atomic``).

Expert parallelism: ``MoELayer(..., expert_range=(first, end))`` (or
``layer.shard((first, end))``) holds only experts ``[first, end)`` and
computes only their rows: its segment offsets are a slice of the global
``seg_indptr`` (megablox's ``group_offset``), the other pairs' slots stay
zero, and summing the ranks' outputs (``torch.distributed.all_reduce``)
gives the layer; the router is replicated, so its gradient is summed over
the ranks too. ``ggemm.expert_parallel`` has the bookkeeping of an
all-to-all dispatch instead (split sizes on the device, the one host
synchronisation).

Run it on a Hopper GPU from a clone of the repository. Its kernels are
compiled on first use (with the compiler built: ``GGEMM_BUILD_DIR``, see
docs/Python.md) or taken from a catalog (``--catalog DIR`` or
``$GGEMM_CATALOG``; test/gpu/build_moe_catalog.sh builds one that covers
the sizes below)::

    # one training step at Qwen3-MoE-like sizes (the defaults)
    python3 examples/moe_layer.py --tokens 4096
    # forward and backward against plain torch, expert parallel on 2
    # simulated ranks, a few token counts (1 token: most experts get none)
    python3 examples/moe_layer.py --check --tokens 1 16 512 4096
    # the fused layer against the glued one (CUDA events, medians)
    python3 examples/moe_layer.py --bench --tokens 512 4096 16384
    # DeepSeek-V3-like expert shapes, 64 experts
    python3 examples/moe_layer.py --check --hidden 7168 --intermediate 2048 \\
        --experts 64 --top-k 8 --tokens 1 512
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import statistics
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import ggemm  # noqa: E402
from ggemm.expert_parallel import expert_ranges, local_seg_indptr  # noqa: E402

#: How the top-k rows of a token are summed: ``slots`` (fixed order,
#: deterministic) or ``atomic`` (atomic adds onto float32 token rows).
COMBINES = ("slots", "atomic")
#: The checks' criterion: ||got - ref|| / ||ref|| in bf16.
TOL = 1e-2


def route(logits: torch.Tensor, top_k: int
          ) -> Tuple[torch.Tensor, torch.Tensor]:
    """Each token's top-k experts (int32 ``[T, top_k]``) and their weights
    (float32, a softmax over the chosen logits)."""
    top_logits, experts = torch.topk(logits, top_k, dim=-1)
    return torch.softmax(top_logits.float(), dim=-1), experts.int()


def _records_grad(*tensors: torch.Tensor) -> bool:
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


class MoELayer(torch.nn.Module):
    """``y = sum_k p_k(x) * W2_e (silu(W1_e x) * W3_e x)`` over the top-k
    experts ``e`` of each token, ``w13[e] = [W1_e; W3_e]``.

    Example::

        layer = MoELayer(2048, 768, num_experts=128, top_k=8, device="cuda")
        x = torch.randn(4096, 2048, device="cuda", dtype=torch.bfloat16)
        y = layer(x)                                  # [4096, 2048]
        y.float().square().mean().backward()          # x, router, w13, w2
    """

    def __init__(self, hidden: int, intermediate: int, num_experts: int,
                 top_k: int, *, combine: str = "slots",
                 expert_range: Optional[Tuple[int, int]] = None,
                 dtype: torch.dtype = torch.bfloat16,
                 device: Optional[torch.device] = None) -> None:
        super().__init__()
        if combine not in COMBINES:
            raise ValueError(f"combine: expected one of {COMBINES}, got "
                             f"{combine!r}")
        first, end = expert_range or (0, num_experts)
        if not 0 <= first < end <= num_experts:
            raise ValueError(f"expert_range {expert_range} is not a "
                             f"non-empty range inside [0, {num_experts})")
        if not 0 < top_k <= num_experts:
            raise ValueError(f"top_k {top_k} must be in [1, {num_experts}]")
        self.num_experts, self.top_k, self.combine = (num_experts, top_k,
                                                      combine)
        self.first_expert, self.end_expert = first, end
        local = end - first
        # Replicated on every rank: all ranks route all tokens alike.
        self.router = torch.nn.Linear(hidden, num_experts, bias=False,
                                      dtype=dtype, device=device)
        # nn.Linear's [out, in] layout: gate rows, then up rows.
        self.w13 = torch.nn.Parameter(torch.randn(
            local, 2 * intermediate, hidden, dtype=dtype, device=device)
            / math.sqrt(hidden))
        self.w2 = torch.nn.Parameter(torch.randn(
            local, hidden, intermediate, dtype=dtype, device=device)
            / math.sqrt(intermediate))

    @property
    def expert_range(self) -> Tuple[int, int]:
        return self.first_expert, self.end_expert

    def shard(self, expert_range: Tuple[int, int]) -> "MoELayer":
        """A layer holding experts ``[first, end)`` of this one (a copy of
        their weights and of the router): one rank's part of the layer.

        Example::

            ranks = [layer.shard(r) for r in expert_ranges(128, 2)]
            y = sum(rank(x) for rank in ranks)    # == layer(x)
        """
        first, end = expert_range
        if not self.first_expert <= first < end <= self.end_expert:
            raise ValueError(f"expert_range {expert_range}: this layer "
                             f"holds experts {self.expert_range}")
        part = MoELayer(self.w2.shape[1], self.w2.shape[2], self.num_experts,
                        self.top_k, combine=self.combine,
                        expert_range=expert_range, dtype=self.w2.dtype,
                        device=torch.device("meta"))
        lo, hi = first - self.first_expert, end - self.first_expert
        part.router = copy.deepcopy(self.router)
        part.w13 = torch.nn.Parameter(self.w13.detach()[lo:hi].clone())
        part.w2 = torch.nn.Parameter(self.w2.detach()[lo:hi].clone())
        return part

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.experts(x, self.router(x))

    def experts(self, x: torch.Tensor, router_logits: torch.Tensor,
                combine: Optional[str] = None) -> torch.Tensor:
        """The layer after its router: ``x`` ``[T, H]``, the router's
        logits ``[T, E]``; returns ``[T, H]`` in x's dtype (this rank's
        experts' share with ``expert_range``)."""
        combine = combine or self.combine
        if combine not in COMBINES:
            raise ValueError(f"combine: expected one of {COMBINES}, got "
                             f"{combine!r}")
        tokens, hidden, k = x.shape[0], self.w2.shape[1], self.top_k
        weights, experts = route(router_logits, k)
        routing = ggemm.sort_by_expert(experts, self.num_experts)
        seg_indptr = local_seg_indptr(routing.seg_indptr, self.expert_range)
        h = ggemm.segment_matmul(x, self.w13, seg_indptr,
                                 row_indices=routing.row_indices,
                                 activation="swiglu")
        row_weight = weights.reshape(-1)[routing.pair_indices.long()]
        if _records_grad(x, self.w13, self.w2, row_weight):
            rows = ggemm.segment_matmul(h, self.w2, seg_indptr,
                                        row_scale=row_weight)
            if combine == "atomic":
                out = x.new_zeros(tokens, hidden, dtype=torch.float32)
                return out.index_add(0, routing.row_indices.long(),
                                     rows.float()).to(x.dtype)
            # pair_indices is a permutation of the pairs: every slot is
            # written (zero rows for other ranks' experts).
            slots = rows.new_empty(tokens * k, hidden).index_copy(
                0, routing.pair_indices.long(), rows)
        elif combine == "atomic":
            out = x.new_zeros(tokens, hidden, dtype=torch.float32)
            ggemm.segment_matmul(h, self.w2, seg_indptr, row_scale=row_weight,
                                 scatter_indices=routing.row_indices, out=out,
                                 accumulate=True, atomic=True)
            return out.to(x.dtype)
        else:
            # Only this rank's pairs are written: the others' slots must
            # read zero.
            holds_all = self.expert_range == (0, self.num_experts)
            slots = (x.new_empty if holds_all else x.new_zeros)(
                tokens * k, hidden)
            ggemm.segment_matmul(h, self.w2, seg_indptr, row_scale=row_weight,
                                 scatter_indices=routing.pair_indices,
                                 out=slots)
        return slots.view(tokens, k, hidden).sum(1)


def glued_experts(layer: MoELayer, x: torch.Tensor,
                  router_logits: torch.Tensor) -> torch.Tensor:
    """The same layer glued together, as this example did before: sort in
    torch, permute x (a copy), a plain GEMM up (2I columns), SwiGLU as its
    own pass, a plain GEMM down, weight and un-permute in torch."""
    tokens, hidden, k = x.shape[0], layer.w2.shape[1], layer.top_k
    inter = layer.w2.shape[2]
    weights, experts = route(router_logits, k)
    flat = experts.reshape(-1).long()
    order = torch.argsort(flat, stable=True)
    counts = torch.zeros(layer.num_experts, dtype=torch.int64,
                         device=x.device)
    counts.scatter_add_(0, flat, torch.ones_like(flat))
    seg_indptr = torch.zeros(layer.num_experts + 1, dtype=torch.int32,
                             device=x.device)
    seg_indptr[1:] = torch.cumsum(counts, 0)
    seg_indptr = local_seg_indptr(seg_indptr, layer.expert_range)
    xs = x.index_select(0, order // k)
    gate_up = ggemm.segment_matmul(xs, layer.w13, seg_indptr)
    a = torch.nn.functional.silu(gate_up[:, :inter]) * gate_up[:, inter:]
    rows = ggemm.segment_matmul(a, layer.w2, seg_indptr)
    rows = rows * weights.reshape(-1)[order, None].to(rows.dtype)
    slots = torch.empty_like(rows).index_copy(0, order, rows)
    return slots.view(tokens, k, hidden).sum(1)


def reference_experts(layer: MoELayer, x: torch.Tensor,
                      router_logits: torch.Tensor) -> torch.Tensor:
    """The layer in plain torch, float32 from the bf16 parameters, expert
    by expert (differentiable; reads the routing on the host)."""
    weights, experts = route(router_logits, layer.top_k)
    inter = layer.w2.shape[2]
    xf = x.float()
    out = xf.new_zeros(x.shape[0], layer.w2.shape[1])
    for local, expert in enumerate(range(*layer.expert_range)):
        token, slot = torch.nonzero(experts == expert, as_tuple=True)
        if token.numel() == 0:
            continue
        gate_up = xf[token] @ layer.w13[local].float().t()
        a = torch.nn.functional.silu(gate_up[:, :inter]) * gate_up[:, inter:]
        rows = (a @ layer.w2[local].float().t()) * weights[token, slot, None]
        out = out.index_add(0, token, rows)
    return out


# -- checks ------------------------------------------------------------------

def rel_err(got: torch.Tensor, ref: torch.Tensor) -> float:
    got, ref = got.double(), ref.double()
    norm = ref.norm().item()
    diff = (got - ref).norm().item()
    return diff / norm if norm > 0 else diff


def _verdict(errors: Dict[str, float]) -> str:
    """The errors as a note, or an AssertionError naming those at or above
    the tolerance (NaN included)."""
    text = ", ".join(f"{name} {err:.1e}" for name, err in errors.items())
    bad = [name for name, err in errors.items() if not err < TOL]
    if bad:
        raise AssertionError(f"rel err >= {TOL} in {', '.join(bad)}: {text}")
    return f"rel err {text}"


def _parameters(layer: MoELayer) -> Dict[str, torch.Tensor]:
    return {"router": layer.router.weight, "w13": layer.w13, "w2": layer.w2}


def _random_input(layer: MoELayer, tokens: int,
                  generator: torch.Generator) -> torch.Tensor:
    return torch.randn(tokens, layer.w2.shape[1], device=layer.w2.device,
                       generator=generator).to(layer.w2.dtype)


def check_training(layer: MoELayer, tokens: int, generator: torch.Generator,
                   combine: Optional[str] = None) -> str:
    """Forward and backward against the torch reference: the output and
    the gradients of x, the router and the expert weights, for a random
    output gradient."""
    x = _random_input(layer, tokens, generator).requires_grad_(True)
    grad_out = torch.randn(tokens, layer.w2.shape[1], device=x.device,
                           generator=generator)
    inputs = {"x": x, **_parameters(layer)}
    logits = layer.router(x)
    out = layer.experts(x, logits, combine)
    ref = reference_experts(layer, x, logits)
    got = torch.autograd.grad((out.float() * grad_out).sum(),
                              list(inputs.values()), retain_graph=True)
    want = torch.autograd.grad((ref * grad_out).sum(), list(inputs.values()))
    errors = {"out": rel_err(out, ref)}
    errors.update({f"d{name}": rel_err(g, w)
                   for name, g, w in zip(inputs, got, want)})
    return _verdict(errors)


@torch.no_grad()
def check_inference(layer: MoELayer, tokens: int,
                    generator: torch.Generator, combine: str) -> str:
    """The fused scatter (no autograd) against the torch reference; the
    slots combine twice, bitwise equal."""
    x = _random_input(layer, tokens, generator)
    logits = layer.router(x)
    out = layer.experts(x, logits, combine)
    note = _verdict({"out": rel_err(out, reference_experts(layer, x,
                                                           logits))})
    if combine == "slots":
        if not torch.equal(out, layer.experts(x, logits, combine)):
            raise AssertionError("the slots combine is not bitwise "
                                 "repeatable")
        note += ", bitwise repeatable"
    return note


def check_expert_parallel(layer: MoELayer, tokens: int,
                          generator: torch.Generator, world_size: int = 2
                          ) -> str:
    """The layer split over ``world_size`` simulated ranks (``shard``):
    the sum of their outputs (the all-reduce) against the reference of
    the whole layer, forward without autograd (the fused scatter) and
    with it; the ranks' expert-weight gradients put together, their
    router gradients summed, and x's gradient against the reference's."""
    ranks = [layer.shard(r) for r in expert_ranges(layer.num_experts,
                                                   world_size)]
    x = _random_input(layer, tokens, generator)
    with torch.no_grad():
        logits = layer.router(x)
        errors = {"out (no grad)": rel_err(
            sum(rank(x).float() for rank in ranks),
            reference_experts(layer, x, logits))}
    x.requires_grad_(True)
    grad_out = torch.randn(tokens, layer.w2.shape[1], device=x.device,
                           generator=generator)
    out = sum(rank(x).float() for rank in ranks)
    (out * grad_out).sum().backward()
    ref = reference_experts(layer, x, layer.router(x))
    inputs = {"x": x, **_parameters(layer)}
    want = torch.autograd.grad((ref * grad_out).sum(), list(inputs.values()))
    got = {"x": x.grad,
           "router": sum(rank.router.weight.grad for rank in ranks),
           "w13": torch.cat([rank.w13.grad for rank in ranks]),
           "w2": torch.cat([rank.w2.grad for rank in ranks])}
    errors["out"] = rel_err(out, ref)
    errors.update({f"d{name}": rel_err(got[name], w)
                   for name, w in zip(inputs, want)})
    return _verdict(errors) + f", {world_size} ranks " + " ".join(
        f"[{first}, {end})" for first, end in
        expert_ranges(layer.num_experts, world_size))


def checks(layer: MoELayer, token_counts: Sequence[int],
           generator: torch.Generator, label: str = ""
           ) -> List[Tuple[str, Callable[[], str]]]:
    """The checks of ``layer`` as (name, function) pairs: a function
    returns a note or raises. For each token count: training (forward and
    backward, both combines) and inference (both combines); at the
    largest count below 4096 (or the smallest), expert parallel over 2
    ranks."""
    label = label or (f"H={layer.w2.shape[1]} I={layer.w2.shape[2]} "
                      f"E={layer.num_experts} k={layer.top_k}")
    found: List[Tuple[str, Callable[[], str]]] = []
    for tokens in token_counts:
        for combine in COMBINES:
            found.append((f"{label} T={tokens} train {combine}",
                          lambda t=tokens, c=combine: check_training(
                              layer, t, generator, c)))
            found.append((f"{label} T={tokens} inference {combine}",
                          lambda t=tokens, c=combine: check_inference(
                              layer, t, generator, c)))
    if layer.num_experts >= 2:
        small = [t for t in token_counts if t < 4096]
        tokens = max(small) if small else min(token_counts)
        found.append((f"{label} T={tokens} expert parallel",
                      lambda t=tokens: check_expert_parallel(layer, t,
                                                             generator)))
    return found


# -- bench -------------------------------------------------------------------

def _time_ms(step: Callable[[], None]) -> float:
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    step()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def bench(layer: MoELayer, token_counts: Sequence[int], repeats: int,
          generator: torch.Generator) -> List[str]:
    """Median milliseconds (CUDA events, a fresh random input each
    repeat) of the fused and the glued layer, inference and a training
    step (forward and backward); one markdown table row per token count."""
    def inference(fn):
        def step(x, grad_out):
            with torch.no_grad():
                fn(x, layer.router(x))
        return step

    def training(fn):
        def step(x, grad_out):
            x.requires_grad_(True)
            out = fn(x, layer.router(x))
            out.backward(grad_out)
        return step

    steps = {
        "fused": inference(layer.experts),
        "fused atomic": inference(
            lambda x, logits: layer.experts(x, logits, "atomic")),
        "glued": inference(lambda x, logits: glued_experts(layer, x,
                                                           logits)),
        "fused train": training(layer.experts),
        "glued train": training(lambda x, logits: glued_experts(layer, x,
                                                                logits)),
    }
    rows = ["| tokens | fused ms | fused atomic ms | glued ms | speedup | "
            "fused train ms | glued train ms | train speedup |",
            "|" + "---|" * 8]
    print("\n".join(rows), flush=True)
    for tokens in token_counts:
        times: Dict[str, List[float]] = {name: [] for name in steps}
        for repeat in range(repeats + 1):  # the first is a warm-up
            for name, step in steps.items():
                x = _random_input(layer, tokens, generator)
                grad_out = torch.randn_like(x)
                layer.zero_grad(set_to_none=True)
                torch.cuda.synchronize()
                elapsed = _time_ms(lambda: step(x, grad_out))
                if repeat:
                    times[name].append(elapsed)
        t = {name: statistics.median(v) for name, v in times.items()}
        rows.append(f"| {tokens} | {t['fused']:.3f} | "
                    f"{t['fused atomic']:.3f} | {t['glued']:.3f} | "
                    f"{t['glued'] / t['fused']:.2f} | "
                    f"{t['fused train']:.3f} | {t['glued train']:.3f} | "
                    f"{t['glued train'] / t['fused train']:.2f} |")
        print(rows[-1], flush=True)
    layer.zero_grad(set_to_none=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=[4096])
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--intermediate", type=int, default=768,
                        help="per expert (w13 has twice as many rows)")
    parser.add_argument("--experts", type=int, default=128)
    parser.add_argument("--top-k", type=int, default=8)
    parser.add_argument("--combine", choices=COMBINES, default="slots")
    parser.add_argument("--catalog", type=Path,
                        help="take the kernels from this catalog only "
                        "(else $GGEMM_CATALOG, else compile on first use)")
    parser.add_argument("--check", action="store_true",
                        help="forward and backward against plain torch")
    parser.add_argument("--bench", action="store_true",
                        help="time the fused layer against the glued one")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.catalog:
        os.environ["GGEMM_CATALOG"] = str(args.catalog)
    torch.backends.cuda.matmul.allow_tf32 = False  # a float32 reference
    torch.manual_seed(args.seed)
    generator = torch.Generator(device="cuda")
    generator.manual_seed(args.seed)
    layer = MoELayer(args.hidden, args.intermediate, args.experts,
                     args.top_k, combine=args.combine,
                     device=torch.device("cuda"))
    failed = 0
    if args.check:
        passed = 0
        for name, run in checks(layer, args.tokens, generator):
            try:
                note, ok = f"PASS {run()}", True
            except AssertionError as error:
                note, ok = f"FAIL {error}", False
            passed += ok
            failed += not ok
            print(f"{name:44s} {note}", flush=True)
        print(f"moe-example: {passed} passed, {failed} failed")
    if args.bench:
        bench(layer, args.tokens, args.repeats, generator)
    if not args.check and not args.bench:
        for tokens in args.tokens:
            try:
                note = check_training(layer, tokens, generator)
            except AssertionError as error:
                note, failed = f"FAIL {error}", failed + 1
            print(f"T={tokens} training step, against plain torch: {note}")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
