#!/usr/bin/env python3
"""A Mixture-of-Experts FFN on GGEMM: router, top-k, permutation, the expert
up-projection with its activation fused into the kernel, the
down-projection with the routing weights as the kernel's row scale, and the
un-permutation — forward and backward.

Each token goes to ``top_k`` experts. The layer sorts the (token, expert)
pairs by expert so that every expert's rows are one segment, runs the two
expert GEMMs as one ``ggemm.segment_matmul`` each (no padding of experts to
the tile size, no host synchronisation: the segment offsets stay on the
device), then adds each pair's output back to its token.

Expert parallelism: a layer built with ``expert_range=(first, end)`` holds
only the weights of experts ``[first, end)`` and computes only their rows
(the offsets of its experts are a slice of the global ``seg_indptr``: the
``group_offset`` of megablox); the other rows come out zero, so summing the
layers' outputs over the ranks (``torch.distributed.all_reduce``) gives the
full result. Every rank routes all tokens the same way (the router is
replicated).

The up-projection uses a plain activation (``silu`` by default) on
``x W_upᵀ``: GGEMM's epilogue has no gated (SwiGLU) form yet.

Run it on a Hopper GPU (it compiles its two kernels on first use, or takes
them from ``$GGEMM_CATALOG``)::

    python3 examples/moe_layer.py --tokens 4096 --hidden 2048 \\
        --intermediate 1408 --experts 16 --top-k 2
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Optional, Tuple

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import ggemm  # noqa: E402


def route(logits: torch.Tensor, top_k: int
          ) -> Tuple[torch.Tensor, torch.Tensor]:
    """Top-k experts of each token and their weights (softmax over the
    chosen logits)."""
    top_logits, experts = torch.topk(logits, top_k, dim=-1)
    return torch.softmax(top_logits.float(), dim=-1), experts


def permutation(experts: torch.Tensor, num_experts: int
                ) -> Tuple[torch.Tensor, torch.Tensor]:
    """Order of the (token, expert) pairs sorted by expert, and each expert's
    row offsets ``seg_indptr`` (``[num_experts + 1]``, int64), both on the
    device and without a host synchronisation."""
    flat = experts.reshape(-1)
    order = torch.argsort(flat, stable=True)
    counts = torch.zeros(num_experts, dtype=torch.int64, device=flat.device)
    counts.scatter_add_(0, flat, torch.ones_like(flat))
    seg_indptr = torch.zeros(num_experts + 1, dtype=torch.int64,
                             device=flat.device)
    seg_indptr[1:] = torch.cumsum(counts, 0)
    return order, seg_indptr


class MoELayer(torch.nn.Module):
    """``y = sum_k p_k(x) * down_e(act(up_e(x)))`` over the top-k experts
    ``e`` of each token.

    Example::

        layer = MoELayer(2048, 1408, num_experts=16, top_k=2).cuda()
        y = layer(torch.randn(4096, 2048, device="cuda",
                              dtype=torch.bfloat16))
        y.float().square().mean().backward()
    """

    def __init__(self, hidden: int, intermediate: int, num_experts: int,
                 top_k: int, activation: str = "silu",
                 expert_range: Optional[Tuple[int, int]] = None,
                 dtype: torch.dtype = torch.bfloat16,
                 device: Optional[torch.device] = None) -> None:
        super().__init__()
        first, end = expert_range or (0, num_experts)
        if not 0 <= first < end <= num_experts:
            raise ValueError(f"expert_range {expert_range} is not inside "
                             f"[0, {num_experts})")
        self.num_experts, self.top_k = num_experts, top_k
        self.first_expert, self.end_expert = first, end
        self.activation = activation
        local = end - first
        self.router = torch.nn.Linear(hidden, num_experts, bias=False,
                                      dtype=dtype, device=device)
        # Weights in nn.Linear's [out, in] layout ("nk").
        self.w_up = torch.nn.Parameter(torch.randn(
            local, intermediate, hidden, dtype=dtype, device=device)
            / math.sqrt(hidden))
        self.w_down = torch.nn.Parameter(torch.randn(
            local, hidden, intermediate, dtype=dtype, device=device)
            / math.sqrt(intermediate))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = x.shape[0]
        weights, experts = route(self.router(x), self.top_k)
        order, seg_indptr = permutation(experts, self.num_experts)
        token_of_row = order // self.top_k
        rows = x.index_select(0, token_of_row)        # permute
        routing = weights.reshape(-1).index_select(0, order)
        # This rank's experts: a slice of the global offsets.
        local = seg_indptr[self.first_expert:self.end_expert + 1]
        hidden = ggemm.segment_matmul(rows, self.w_up, local,
                                      activation=self.activation)
        out_rows = ggemm.segment_matmul(hidden, self.w_down, local,
                                        row_scale=routing)
        out = torch.zeros(tokens, out_rows.shape[1], dtype=torch.float32,
                          device=x.device)
        out.index_add_(0, token_of_row, out_rows.float())  # un-permute
        # Expert parallel: torch.distributed.all_reduce(out) here.
        return out.to(x.dtype)


def reference(layer: MoELayer, x: torch.Tensor) -> torch.Tensor:
    """The same layer in float64 torch, one expert at a time."""
    weights, experts = route(layer.router(x), layer.top_k)
    x64 = x.double()
    out = torch.zeros(x.shape[0], layer.w_down.shape[1], dtype=torch.float64,
                      device=x.device)
    act = {"silu": torch.nn.functional.silu, "gelu": torch.nn.functional.gelu,
           "relu": torch.relu, "none": lambda t: t}[layer.activation]
    for local, expert in enumerate(range(layer.first_expert,
                                         layer.end_expert)):
        token, slot = torch.nonzero(experts == expert, as_tuple=True)
        if token.numel() == 0:
            continue
        h = act(x64[token] @ layer.w_up[local].double().t())
        y = (h @ layer.w_down[local].double().t()) * \
            weights[token, slot, None].double()
        out.index_add_(0, token, y)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--intermediate", type=int, default=1408)
    parser.add_argument("--experts", type=int, default=16)
    parser.add_argument("--top-k", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    layer = MoELayer(args.hidden, args.intermediate, args.experts,
                     args.top_k, device=torch.device("cuda"))
    x = torch.randn(args.tokens, args.hidden, device="cuda",
                    dtype=torch.bfloat16, requires_grad=True)
    y = layer(x)
    y.float().square().mean().backward()
    ref = reference(layer, x.detach())
    err = (y.double() - ref).norm() / ref.norm()
    print(f"forward rel err vs float64 torch: {err:.2e}; "
          f"|dx| {x.grad.float().norm():.3e}, "
          f"|dW_up| {layer.w_up.grad.float().norm():.3e}")
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(10):
        layer(x.detach())
    torch.cuda.synchronize()
    print(f"forward {1e3 * (time.perf_counter() - start) / 10:.2f} ms")
    return 0 if err < 1e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
