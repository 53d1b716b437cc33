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

Expert parallelism, two ways:

- ``ExpertParallelMoE`` (``--expert-parallel``, one process per GPU under
  ``torchrun``): each rank holds the router, ``E / W`` of the experts and
  its own tokens. It routes its tokens, sends each (token, k) row with its
  routing weight to the rank of its expert (``all_to_all_single``; the
  split sizes are counted on the device and read on the host once: the
  one synchronisation, since the collective takes Python ints), runs its
  experts on what it received (gathered up projection with SwiGLU, down
  projection weighted by the routing weights and written back in arrival
  order), sends the rows back (the reverse ``all_to_all_single``) and sums
  each token's top-k rows in a fixed order. Backward: autograd, the
  all-to-alls send the gradients back the reverse way.
- replicated tokens: ``MoELayer(..., expert_range=(first, end))`` (or
  ``layer.shard((first, end))``) holds only experts ``[first, end)`` and
  computes only their rows of all tokens: its segment offsets are a slice
  of the global ``seg_indptr`` (megablox's ``group_offset``), the other
  pairs' slots stay zero, and summing the ranks' outputs
  (``torch.distributed.all_reduce``) gives the layer.

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
    # expert parallel over 2 GPUs (all-to-all), checked against the layer
    # on one GPU, then timed phase by phase; --tokens are per rank
    # (examples/moe_ep.sh runs torchrun with NVLink multicast off)
    bash examples/moe_ep.sh --check --tokens 1 512 4096
    bash examples/moe_ep.sh --bench --hidden 7168 --intermediate 2048 \\
        --experts 256 --tokens 512 4096 16384
"""

from __future__ import annotations

import argparse
import copy
import datetime
import functools
import math
import os
import statistics
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

# NVLink multicast (NVLS) off before NCCL starts, unless the caller set
# these: the all-to-alls here do not use it, and on shared GPU hosts a
# program that does can take the host's GPUs out of service.
for _name, _value in (("NCCL_NVLS_ENABLE", "0"),
                      ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"),
                      ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ.setdefault(_name, _value)

import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import ggemm  # noqa: E402
from ggemm.expert_parallel import (  # noqa: E402
    DispatchPlan, dispatch_plan, expert_ranges, local_seg_indptr)

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


# -- expert parallel ---------------------------------------------------------

def exchange_rows(rows: torch.Tensor, send_splits: Sequence[int],
                  recv_splits: Sequence[int], group: Any = None
                  ) -> torch.Tensor:
    """``torch.distributed.all_to_all_single`` into a new tensor: the first
    ``send_splits[0]`` rows of ``rows`` go to rank 0, the next
    ``send_splits[1]`` to rank 1, ...; ``recv_splits[s]`` rows come from
    rank s, in rank order."""
    import torch.distributed as dist
    out = rows.new_empty((sum(recv_splits),) + tuple(rows.shape[1:]))
    dist.all_to_all_single(out, rows.contiguous(),
                           output_split_sizes=list(recv_splits),
                           input_split_sizes=list(send_splits), group=group)
    return out


class AllToAll(torch.autograd.Function):
    """:func:`exchange_rows` for autograd: the backward sends each row's
    gradient back to the rank the row came from (the splits swapped)."""

    @staticmethod
    def forward(ctx, rows, send_splits, recv_splits, group):
        ctx.splits, ctx.group = (send_splits, recv_splits), group
        return exchange_rows(rows, send_splits, recv_splits, group)

    @staticmethod
    def backward(ctx, grad):
        send_splits, recv_splits = ctx.splits
        return (exchange_rows(grad, recv_splits, send_splits, ctx.group),
                None, None, None)


class GatherPairs(torch.autograd.Function):
    """``x.index_select(0, token)``: each sent (token, k) pair's row of x.
    Its backward sums each token's pair gradients in a fixed order (into
    the pair's slot of ``[T, top_k]``, then over the slots, accumulating in
    float32), as the forward combine sums its rows: x's gradient is
    bitwise repeatable, where ``index_select``'s backward adds the rows
    with atomics in x's dtype."""

    @staticmethod
    def forward(ctx, x, token, pairs, top_k):
        ctx.save_for_backward(pairs)
        ctx.shape, ctx.top_k = x.shape, top_k
        return x.index_select(0, token)

    @staticmethod
    def backward(ctx, grad):
        (pairs,) = ctx.saved_tensors
        tokens, hidden = ctx.shape
        slots = grad.new_zeros(tokens * ctx.top_k, hidden).index_copy(
            0, pairs, grad)
        dx = slots.view(tokens, ctx.top_k, hidden).sum(
            1, dtype=torch.float32).to(grad.dtype)
        return dx, None, None, None


class ExpertParallelMoE(torch.nn.Module):
    """One rank's part of a MoE layer whose experts are spread over the
    ranks of a process group, the tokens exchanged by all-to-all.

    ``layer`` holds the router (the same on every rank) and this rank's
    experts: ``expert_range`` must be ``expert_ranges(E, W)[rank]``
    (:meth:`MoELayer.shard`). Each rank passes its own tokens. Per forward
    (every rank calls it together; the phases are the keys of
    ``phase_events``):

    1. ``route``: router, top-k and ``ggemm.sort_by_expert`` over all E
       experts, on the device;
    2. ``dispatch``: each rank sends every rank the per-expert counts of
       its experts (an all-to-all of sizes the host knows), the split sizes
       are read on the host (``dispatch_plan``: the layer's one host
       synchronisation, because ``all_to_all_single`` takes Python ints),
       then the (token, k) rows in expert order (a gather of x: each pair's
       row once; :class:`GatherPairs`) and their routing weights go out
       (``all_to_all_single``);
    3. ``experts``: the up projection reads the received rows in expert
       order through ``row_indices`` (SwiGLU in its epilogue), the down
       projection scales each row by its routing weight and writes it back
       to its arrival slot (``scatter_indices``);
    4. ``combine``: the reverse ``all_to_all_single`` brings each pair's
       row home, into its slot of ``[T, top_k, H]``, and the sum over the
       top-k slots runs in a fixed order: the output is bitwise
       repeatable.

    Backward: autograd, through the GGEMM ops and :class:`AllToAll`, so
    every rank's backward makes the same collective calls (a rank that
    received no rows keeps its zero-row result in the graph for this).
    The router's gradient is this rank's tokens' share: sum it over the
    ranks (``all_reduce``) as for any replicated parameter.

    Example (under ``torchrun --nproc-per-node 2``)::

        torch.distributed.init_process_group("nccl")
        rank, world = dist.get_rank(), dist.get_world_size()
        whole = MoELayer(7168, 2048, 256, 8, device="cuda")
        part = ExpertParallelMoE(whole.shard(expert_ranges(256, world)[rank]))
        y = part(x_of_this_rank)                    # [T_rank, 7168]
    """

    #: The phases of a forward, in order (``phase_events``' names).
    PHASES = ("route", "dispatch", "experts", "combine")

    def __init__(self, layer: MoELayer, group: Any = None) -> None:
        super().__init__()
        import torch.distributed as dist
        self.layer, self.group = layer, group
        self.rank = dist.get_rank(group)
        self.world_size = dist.get_world_size(group)
        self.ranges = expert_ranges(layer.num_experts, self.world_size)
        if layer.expert_range != self.ranges[self.rank]:
            raise ValueError(f"layer holds experts {layer.expert_range}; "
                             f"rank {self.rank} of {self.world_size} holds "
                             f"{self.ranges[self.rank]} (MoELayer.shard)")
        #: A list to append ``(phase, torch.cuda.Event)`` pairs to while
        #: timing; None: no events.
        self.phase_events: Optional[List[Tuple[str, Any]]] = None
        #: The last forward's dispatch (split sizes, received segments).
        self.last_plan: Optional[DispatchPlan] = None

    def _mark(self, phase: str) -> None:
        if self.phase_events is not None:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            self.phase_events.append((phase, event))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._mark("start")
        return self._experts(x, self.layer.router(x))

    def experts(self, x: torch.Tensor, router_logits: torch.Tensor
                ) -> torch.Tensor:
        """The layer after its router: ``x`` ``[T, H]`` this rank's tokens,
        ``router_logits`` ``[T, E]``; returns ``[T, H]`` in x's dtype."""
        self._mark("start")
        return self._experts(x, router_logits)

    def _experts(self, x: torch.Tensor, router_logits: torch.Tensor
                 ) -> torch.Tensor:
        layer, k = self.layer, self.layer.top_k
        tokens, hidden = x.shape[0], layer.w2.shape[1]
        weights, experts = route(router_logits, k)
        routing = ggemm.sort_by_expert(experts, layer.num_experts)
        self._mark("route")
        plan = dispatch_plan(routing.seg_indptr, self.ranges, self.rank,
                             lambda counts, send, recv: exchange_rows(
                                 counts, send, recv, self.group))
        self.last_plan = plan
        sent = slice(plan.first_row, plan.first_row + sum(plan.send_splits))
        pairs = routing.pair_indices[sent].long()
        send_x = GatherPairs.apply(x, routing.row_indices[sent].long(), pairs,
                                   k)
        send_w = weights.reshape(-1).index_select(0, pairs)
        recv_x = AllToAll.apply(send_x, plan.send_splits, plan.recv_splits,
                                self.group)
        recv_w = AllToAll.apply(send_w, plan.send_splits, plan.recv_splits,
                                self.group)
        self._mark("dispatch")
        back = self._local_experts(recv_x, recv_w, plan)
        self._mark("experts")
        home = AllToAll.apply(back, plan.recv_splits, plan.send_splits,
                              self.group)
        # A pair sent nowhere (an id outside [0, E)) has a zero slot.
        every_pair = sum(plan.send_splits) == tokens * k
        slots = (home.new_empty if every_pair else home.new_zeros)(
            tokens * k, hidden).index_copy(0, pairs, home)
        out = slots.view(tokens, k, hidden).sum(1)
        self._mark("combine")
        return out

    def _local_experts(self, recv_x: torch.Tensor, recv_w: torch.Tensor,
                       plan: DispatchPlan) -> torch.Tensor:
        """This rank's experts on the received rows: ``[R, H]`` in arrival
        order, each row scaled by its routing weight."""
        layer = self.layer
        rows, hidden = recv_x.shape[0], layer.w2.shape[1]
        seg, arrival = plan.received.seg_indptr, plan.received.row_indices
        records = _records_grad(recv_x, recv_w, layer.w13, layer.w2)
        if rows == 0:
            empty = recv_x.new_zeros(0, hidden)
            if not records:
                return empty
            # Tied to the inputs, as the computed rows would be: the
            # backward then runs the same all-to-alls as on the other
            # ranks, and the experts' gradients are zeros, not None.
            tie = (recv_x.sum() + recv_w.sum() + layer.w13[:0].sum()
                   + layer.w2[:0].sum())
            return empty + tie.to(empty.dtype) * 0
        h = ggemm.segment_matmul(recv_x, layer.w13, seg, row_indices=arrival,
                                 activation="swiglu")
        # The kernels index row_scale by segment row, the weights arrived
        # in arrival order.
        row_weight = recv_w.index_select(0, arrival.long())
        if records:
            down = ggemm.segment_matmul(h, layer.w2, seg,
                                        row_scale=row_weight)
            return down.new_empty(rows, hidden).index_copy(
                0, arrival.long(), down)
        back = recv_x.new_empty(rows, hidden)
        ggemm.segment_matmul(h, layer.w2, seg, row_scale=row_weight,
                             scatter_indices=arrival, out=back)
        return back


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


# -- expert parallel: checks and bench (collective: every rank calls) --------

def gather_rows(rows: torch.Tensor, counts: Sequence[int],
                group: Any = None) -> torch.Tensor:
    """Every rank's ``rows`` (``counts[r]`` rows on rank r), concatenated in
    rank order, on every rank."""
    import torch.distributed as dist
    most = max(counts)
    padded = rows.new_zeros((most,) + tuple(rows.shape[1:]))
    padded[:rows.shape[0]] = rows
    parts = [torch.empty_like(padded) for _ in counts]
    dist.all_gather(parts, padded, group=group)
    return torch.cat([part[:count] for part, count in zip(parts, counts)])


def _same_on_every_rank(tensor: torch.Tensor, group: Any = None
                        ) -> torch.Tensor:
    """``tensor`` as rank 0 of ``group`` has it (a broadcast)."""
    import torch.distributed as dist
    source = 0 if group is None else dist.get_global_rank(group, 0)
    dist.broadcast(tensor, source, group=group)
    return tensor


def share_parameters(layer: torch.nn.Module, group: Any = None) -> None:
    """Rank 0's parameters on every rank (a whole layer built everywhere,
    then made the same)."""
    with torch.no_grad():
        for parameter in layer.parameters():
            _same_on_every_rank(parameter.data, group)


def check_expert_parallel_ranks(layer: MoELayer, tokens: Sequence[int],
                                generator: torch.Generator, *,
                                train: bool = True, starve_last: bool = False,
                                group: Any = None) -> str:
    """:class:`ExpertParallelMoE` over the ranks of ``group`` against the
    layer on one GPU (``layer``, the whole layer, the same on every rank:
    :func:`share_parameters`) and against the float32 torch reference, on
    the same inputs and routing.

    Rank r passes ``tokens[r]`` tokens. The inputs are drawn on rank 0; the
    one-GPU layer takes all of them with the logits the ranks routed with
    (its own router's values replaced, its gradient kept: routing on
    logits computed over other rows could break a tie differently).
    ``train``: forward and backward with a random output gradient, checking
    the output, x's gradient, the router's (summed over the ranks) and each
    rank's expert weights'; else forward without autograd (the fused
    scatter), twice, bitwise equal. ``starve_last``: the last rank's
    experts get no token (it receives no rows). Raises AssertionError
    naming what is off on any rank; returns a note."""
    import torch.distributed as dist
    rank, world = dist.get_rank(group), dist.get_world_size(group)
    if len(tokens) != world:
        raise ValueError(f"tokens: one count per rank ({world}), got "
                         f"{list(tokens)}")
    ranges = expert_ranges(layer.num_experts, world)
    first, end = ranges[rank]
    part = ExpertParallelMoE(layer.shard((first, end)), group)
    hidden, device = layer.w2.shape[1], layer.w2.device
    start = sum(tokens[:rank])
    mine = slice(start, start + tokens[rank])
    x_all = _same_on_every_rank(_random_input(layer, sum(tokens),
                                              generator), group)
    grad_all = _same_on_every_rank(torch.randn(
        sum(tokens), hidden, device=device, generator=generator), group)
    bias = torch.zeros(layer.num_experts, device=device, dtype=x_all.dtype)
    if starve_last:
        if layer.top_k > ranges[-1][0]:
            raise ValueError("starve_last: the other ranks hold fewer "
                             "experts than top_k")
        bias[ranges[-1][0]:] = -1e4

    x = x_all[mine].clone().requires_grad_(train)
    with torch.set_grad_enabled(train):
        logits = part.layer.router(x) + bias
    logits_all = gather_rows(logits.detach(), tokens, group)
    got: Dict[str, torch.Tensor] = {}
    notes = []
    if train:
        out = part.experts(x, logits)
        (out.float() * grad_all[mine]).sum().backward()
        router = part.layer.router.weight.grad.clone()
        dist.all_reduce(router, group=group)
        got = {"out": out.detach(), "dx": x.grad, "drouter": router,
               "dw13": part.layer.w13.grad, "dw2": part.layer.w2.grad}
    else:
        with torch.no_grad():
            out = part.experts(x, logits)
            again = part.experts(x, logits)
        got = {"out": out}
        if not torch.equal(out, again):
            notes.append(f"rank {rank}: not bitwise repeatable")
    received = sum(part.last_plan.recv_splits)

    # The one-GPU layer and the float32 reference, on every rank.
    references = {"one GPU": layer.experts, "fp32": functools.partial(
        reference_experts, layer)}
    errors: Dict[str, float] = {}
    for label, experts_of in references.items():
        x_ref = x_all.clone().requires_grad_(train)
        with torch.set_grad_enabled(train):
            logits_ref = layer.router(x_ref) + bias
            # The ranks' logits, with the router's gradient.
            used = logits_ref + (logits_all - logits_ref).detach()
            ref = experts_of(x_ref, used)
        want = {"out": ref.detach()[mine]}
        if train:
            grads = torch.autograd.grad(
                (ref.float() * grad_all).sum(),
                [x_ref, layer.router.weight, layer.w13, layer.w2])
            want.update({"dx": grads[0][mine], "drouter": grads[1],
                         "dw13": grads[2][first:end],
                         "dw2": grads[3][first:end]})
        for name, value in got.items():
            errors[f"{name} vs {label}"] = rel_err(value, want[name])
    everyone: List[Any] = [None] * world
    dist.all_gather_object(everyone, (errors, notes, received), group=group)
    worst = {name: max(errs[name] for errs, _, _ in everyone)
             for name in errors}
    notes = [note for _, rank_notes, _ in everyone for note in rank_notes]
    rows = [rows for _, _, rows in everyone]
    note = _verdict(worst)
    if notes:
        raise AssertionError("; ".join(notes))
    return note + f" (max over ranks), rows received {rows}" + (
        ", bitwise repeatable" if not train else "")


def expert_parallel_checks(layer: MoELayer, token_counts: Sequence[int],
                           generator: torch.Generator, label: str = "",
                           group: Any = None
                           ) -> List[Tuple[str, Callable[[], str]]]:
    """The distributed checks of ``layer`` as (name, function) pairs
    (each function collective): for each count of tokens per rank,
    training and inference; the smallest and the largest count on unequal
    ranks (rank r gets ``count // (7 r + 1)`` tokens, at least 1), trained;
    training with the last rank's experts getting no token."""
    import torch.distributed as dist
    world = dist.get_world_size(group)
    label = label or (f"H={layer.w2.shape[1]} I={layer.w2.shape[2]} "
                      f"E={layer.num_experts} k={layer.top_k}")
    found: List[Tuple[str, Callable[[], str]]] = []

    def add(name: str, tokens: List[int], **kwargs) -> None:
        found.append((f"{label} T={'+'.join(map(str, tokens))} {name}",
                      lambda: check_expert_parallel_ranks(
                          layer, tokens, generator, group=group, **kwargs)))

    for count in token_counts:
        add("train", [count] * world)
        add("inference", [count] * world, train=False)
    for count in sorted({min(token_counts), max(token_counts)}):
        uneven = [max(1, count // (r * 7 + 1)) for r in range(world)]
        if len(set(uneven)) > 1:
            add("uneven train", uneven)
    ranges = expert_ranges(layer.num_experts, world)
    if world > 1 and layer.top_k <= ranges[-1][0]:
        add("last rank starved train", [max(token_counts)] * world,
            starve_last=True)
    return found


def bench_expert_parallel(layer: Optional[MoELayer], part: ExpertParallelMoE,
                          token_counts: Sequence[int], repeats: int,
                          generator: torch.Generator, group: Any = None
                          ) -> List[str]:
    """Median milliseconds (CUDA events, fresh random inputs each repeat,
    ranks lined up by a barrier before each) of ``part``'s forward without
    autograd, phase by phase on each rank, and of the whole layer on one
    GPU (``layer``, on rank 0; None elsewhere) over all ranks' tokens.
    Returns markdown table rows on rank 0 (an empty list elsewhere)."""
    import torch.distributed as dist
    rank, world = dist.get_rank(group), dist.get_world_size(group)
    hidden = part.layer.w2.shape[1]
    phases = ExpertParallelMoE.PHASES
    header = ("| tokens per rank | rank | " + " | ".join(
        f"{p} ms" for p in phases) + " | EP total ms | rows sent | "
        "MB sent | one GPU ms (all tokens) | one GPU / EP |")
    rows = [header, "|" + "---|" * (len(phases) + 7)]
    print("\n".join(rows), flush=True)
    for tokens in token_counts:
        samples: Dict[str, List[float]] = {p: [] for p in phases + ("total",)}
        for repeat in range(repeats + 1):  # the first is a warm-up
            x = torch.randn(tokens, hidden, device=part.layer.w2.device,
                            generator=generator).to(part.layer.w2.dtype)
            dist.barrier(group=group)
            torch.cuda.synchronize()
            part.phase_events = []
            with torch.no_grad():
                part(x)
            torch.cuda.synchronize()
            events, part.phase_events = part.phase_events, None
            if not repeat:
                continue
            for (_, before), (phase, after) in zip(events, events[1:]):
                samples[phase].append(before.elapsed_time(after))
            samples["total"].append(events[0][1].elapsed_time(events[-1][1]))
        sent = sum(part.last_plan.send_splits)
        mine = {name: statistics.median(v) for name, v in samples.items()}
        mine["sent"] = sent
        one_gpu = None
        if layer is not None:
            times = []
            for repeat in range(repeats + 1):
                x = _random_input(layer, tokens * world, generator)
                torch.cuda.synchronize()
                with torch.no_grad():
                    elapsed = _time_ms(lambda: layer(x))
                if repeat:
                    times.append(elapsed)
            one_gpu = statistics.median(times)
        dist.barrier(group=group)
        everyone: List[Any] = [None] * world
        dist.all_gather_object(everyone, (mine, one_gpu), group=group)
        if rank != 0:
            continue
        slowest = max(m["total"] for m, _ in everyone)
        one = next((t for _, t in everyone if t is not None), None)
        for r, (m, _) in enumerate(everyone):
            mb = m["sent"] * (hidden * part.layer.w2.element_size() + 4) / 1e6
            last = r == world - 1 and one is not None
            rows.append(
                f"| {tokens} | {r} | " + " | ".join(
                    f"{m[p]:.3f}" for p in phases) +
                f" | {m['total']:.3f} | {m['sent']} | {mb:.1f} | " +
                (f"{one:.3f} | {one / slowest:.2f} |" if last else " | |"))
        print("\n".join(rows[-world:]), flush=True)
    return rows if rank == 0 else []


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
    parser.add_argument("--expert-parallel", action="store_true",
                        help="one process per GPU under torchrun "
                        "(examples/moe_ep.sh): the experts split over the "
                        "ranks, tokens exchanged by all-to-all; --tokens "
                        "are per rank")
    args = parser.parse_args()
    if args.catalog:
        os.environ["GGEMM_CATALOG"] = str(args.catalog)
    if args.expert_parallel:
        return main_expert_parallel(args)
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


def main_expert_parallel(args: argparse.Namespace) -> int:
    """``--expert-parallel``: this process is one rank (torchrun sets RANK,
    WORLD_SIZE and LOCAL_RANK). The whole layer is built on every rank and
    made the same (rank 0's), each rank keeps its experts' share in an
    :class:`ExpertParallelMoE`; ``--check`` checks it against the whole
    layer on one GPU, ``--bench`` times its phases."""
    import torch.distributed as dist
    if "RANK" not in os.environ or "LOCAL_RANK" not in os.environ:
        print("--expert-parallel: start one process per GPU with torchrun "
              "(bash examples/moe_ep.sh ...)", file=sys.stderr)
        return 2
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device,
                            timeout=datetime.timedelta(minutes=5))
    failed = 0
    try:
        rank, world = dist.get_rank(), dist.get_world_size()
        if rank:
            sys.stdout = open(os.devnull, "w")  # rank 0 speaks for all
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.manual_seed(args.seed)
        generator = torch.Generator(device=device)
        generator.manual_seed(args.seed)
        layer = MoELayer(args.hidden, args.intermediate, args.experts,
                         args.top_k, device=device)
        share_parameters(layer)
        if args.check or not args.bench:
            passed = 0
            found = expert_parallel_checks(layer, args.tokens, generator)
            if not args.check:  # one training step, checked
                found = found[:1]
            for name, run in found:
                try:
                    note, ok = f"PASS {run()}", True
                except AssertionError as error:
                    note, ok = f"FAIL {error}", False
                passed += ok
                failed += not ok
                print(f"{name:44s} {note}", flush=True)
            print(f"moe-example-ep: {passed} passed, {failed} failed "
                  f"({world} ranks)")
        if args.bench:
            part = ExpertParallelMoE(layer.shard(
                expert_ranges(args.experts, world)[rank]))
            one_gpu = layer if rank == 0 else None  # the others free it
            del layer
            torch.cuda.empty_cache()
            bench_expert_parallel(one_gpu, part, args.tokens, args.repeats,
                                  generator)
    finally:
        dist.destroy_process_group()
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
