"""aiter-style GEMM entry points on GGEMM.

- ``batched_gemm(a, b, transpose_a=False, transpose_b=False)``: ``a``
  ``[B, M, K]``, ``b`` ``[B, K, N]`` (``transpose_b``: ``[B, N, K]``);
  returns ``[B, M, N]`` in a's dtype. ``transpose_a`` (a stored ``[B, K,
  M]``) is not supported: GGEMM reads rows of a with K contiguous.
- ``gemm_bias(a, b, bias, transpose_b=False)``, ``gemm_gelu(a, b,
  bias=None, transpose_b=False)``, ``gemm_relu(...)``: ``a`` ``[M, K]``,
  ``b`` ``[K, N]`` (``transpose_b``: ``[N, K]``), ``bias`` ``[N]``;
  ``act(a @ b + bias)`` fused in the kernel's epilogue (gelu is the erf
  form).
- ``cutlass_gemm(a, b, alpha=1.0, beta=0.0, c=None)``: ``alpha * a @ b +
  beta * c`` with b ``[K, N]``: alpha as the epilogue's row scale, ``beta *
  c`` written to the output first and accumulated into.
- ``grouped_gemm(input, weights, expert_ids, topk)``: the MoE expert
  product of aiter's ``fused_moe`` (vLLM's kernel) without routing weights:
  ``out[t, j] = input[t] @ weights[expert_ids[t, j]]ᵀ``, ``[T, topk, N]``.
  The pairs are sorted by expert on the device (:func:`ggemm.sort_by_expert`)
  and one ``segment_matmul`` gathers the token rows and scatters each
  result to its pair: no padding, no permuted copy of ``input``, no
  synchronisation.
- ``int8_gemm(x, w, x_scale, w_scale, output_dtype=torch.bfloat16)``:
  aiter's INT8 GEMM (``gemm_a8w8``, per-token activation and per-channel
  weight scales): ``x`` ``[M, K]`` and ``w`` ``[N, K]`` ``torch.int8``
  (K a multiple of 16), ``x_scale`` f32 ``[M, 1]`` or ``[M]`` (or one
  value for all of x), ``w_scale`` f32 ``[1, N]``, ``[N]`` or ``[N, 1]``
  (or one value); returns ``(x @ wᵀ) * x_scale * w_scale``, summed exactly
  in int32 and scaled once, as ``[M, N]`` in ``output_dtype`` (bf16,
  fp16 or float32). One :func:`ggemm.batched_matmul` of one batch with
  INT8 operands; the scales are reshaped (views, no copies, when they are
  contiguous). Not differentiable.

Example::

    from ggemm.compat import aiter
    y = aiter.gemm_gelu(a, b, bias)
    y = aiter.int8_gemm(x_i8, w_i8, x_scale, w_scale, torch.bfloat16)
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from .. import ops
from ..routing import sort_by_expert
from . import ArgumentError

__all__ = ["batched_gemm", "gemm_bias", "gemm_gelu", "gemm_relu",
           "cutlass_gemm", "int8_gemm", "grouped_gemm"]


def batched_gemm(a: Any, b: Any, transpose_a: bool = False,
                 transpose_b: bool = False) -> Any:
    """``a @ b`` per batch (see the module docstring)."""
    if transpose_a:
        raise ArgumentError("transpose_a: GGEMM reads a as [B, M, K] with K "
                            "contiguous; pass a.transpose(1, 2).contiguous()"
                            " with transpose_a=False")
    return ops.batched_matmul(a, b, weight_layout="nk" if transpose_b
                              else "kn")


def _gemm(a: Any, b: Any, bias: Any, activation: Optional[str],
          transpose_b: bool, out: Any = None, accumulate: bool = False,
          row_scale: Any = None) -> Any:
    if getattr(a, "dim", lambda: 0)() != 2:
        raise ArgumentError(f"a: expected [M, K], got shape "
                            f"{list(getattr(a, 'shape', []))}")
    if b.dim() != 2:
        raise ArgumentError(f"b: expected 2 dimensions, got shape "
                            f"{list(b.shape)}")
    if bias is not None and bias.dim() != 1:
        raise ArgumentError(f"bias: expected [N], got shape "
                            f"{list(bias.shape)}")
    y = ops.batched_matmul(
        a.unsqueeze(0), b.unsqueeze(0),
        weight_layout="nk" if transpose_b else "kn",
        bias=None if bias is None else bias.unsqueeze(0),
        activation=activation,
        row_scale=None if row_scale is None else row_scale.unsqueeze(0),
        out=None if out is None else out.unsqueeze(0), accumulate=accumulate)
    return y[0]


def gemm_bias(a: Any, b: Any, bias: Any, transpose_b: bool = False) -> Any:
    """``a @ b + bias``."""
    if bias is None:
        raise ArgumentError("bias: required by gemm_bias")
    return _gemm(a, b, bias, None, transpose_b)


def gemm_gelu(a: Any, b: Any, bias: Any = None,
              transpose_b: bool = False) -> Any:
    """``gelu(a @ b + bias)``."""
    return _gemm(a, b, bias, "gelu", transpose_b)


def gemm_relu(a: Any, b: Any, bias: Any = None,
              transpose_b: bool = False) -> Any:
    """``relu(a @ b + bias)``."""
    return _gemm(a, b, bias, "relu", transpose_b)


def cutlass_gemm(a: Any, b: Any, alpha: float = 1.0, beta: float = 0.0,
                 c: Any = None) -> Any:
    """``alpha * a @ b + beta * c`` (see the module docstring)."""
    torch = ops._require_torch()
    if beta != 0.0 and c is None:
        raise ArgumentError("c: required when beta != 0")
    row_scale = None
    if alpha != 1.0:
        row_scale = torch.full((a.shape[0],), float(alpha),
                               dtype=torch.float32, device=a.device)
    if beta == 0.0:
        return _gemm(a, b, None, None, False, row_scale=row_scale)
    n = b.shape[1]
    if tuple(c.shape) != (a.shape[0], n):
        raise ArgumentError(f"c: expected shape [{a.shape[0]}, {n}], got "
                            f"{list(c.shape)}")
    out = (c.float() * beta).to(a.dtype)
    return _gemm(a, b, None, None, False, out=out, accumulate=True,
                 row_scale=row_scale)


def _int8_operand(name: str, tensor: Any, shape: str) -> None:
    """x and w: 2-D torch.int8 (the ops check device and strides)."""
    if getattr(tensor, "dim", lambda: 0)() != 2:
        raise ArgumentError(f"{name}: expected a {shape} torch.int8 tensor, "
                            f"got shape {list(getattr(tensor, 'shape', []))}")
    if ops.dtype_name(tensor) != "s8":
        raise ArgumentError(f"{name}: expected dtype torch.int8, got "
                            f"{tensor.dtype}")


def _int8_scale(name: str, scale: Any, per: str,
                shapes: Tuple[Tuple[int, ...], ...],
                as_grouped: Tuple[int, ...]) -> Any:
    """One of ``int8_gemm``'s scales as the grouped op of one group reads
    it: one per token or channel (any of ``shapes``) becomes
    ``as_grouped``, a view when the scale is contiguous (the op copies a
    strided one); else one value stays one value (tensor-wise). A per-token
    shape wins when M is 1 (or N, for w): the same number either way, and
    the kernel then stays the one of every other M. The op checks the
    dtype."""
    if not hasattr(scale, "reshape") or not hasattr(scale, "shape"):
        raise ArgumentError(f"{name}: expected a float32 tensor, got "
                            f"{type(scale).__name__}")
    shape = tuple(scale.shape)
    if shape in shapes:
        return scale.reshape(*as_grouped)
    if shape in ((), (1,), (1, 1)):
        return scale if len(shape) < 2 else scale.reshape(1)
    accepted = " or ".join(str(list(s)) for s in shapes)
    raise ArgumentError(f"{name}: expected one f32 {per} ({accepted}) or "
                        f"one for all ([] or [1]), got shape {list(shape)}")


def int8_gemm(x: Any, w: Any, x_scale: Any, w_scale: Any,
              output_dtype: Any = None) -> Any:
    """``(x @ wᵀ) * x_scale * w_scale`` in ``output_dtype`` (None:
    torch.bfloat16), aiter's INT8 GEMM (see the module docstring).

    Example::

        # x_i8 [M, K], w_i8 [N, K] int8; x_scale [M, 1], w_scale [1, N] f32
        y = aiter.int8_gemm(x_i8, w_i8, x_scale, w_scale)   # [M, N] bf16
    """
    _int8_operand("x", x, "[M, K]")
    _int8_operand("w", w, "[N, K]")
    (rows, k), (n, w_k) = tuple(x.shape), tuple(w.shape)
    if w_k != k:
        raise ArgumentError(f"w: expected [N, K] with K = {k} (x.shape[1]), "
                            f"got shape {list(w.shape)}")
    try:
        out_dtype = ops._out_dtype_name(output_dtype)
    except ArgumentError:
        raise ArgumentError(f"output_dtype: expected torch.bfloat16, "
                            f"torch.float16 or torch.float32, got "
                            f"{output_dtype}") from None
    # One batch: x [1, M, K], w [1, N, K]; per-token scales [1, M], per-
    # channel ones [Gw = 1, N].
    x_scale = _int8_scale("x_scale", x_scale, "per token",
                          ((rows, 1), (rows,)), (1, rows))
    w_scale = _int8_scale("w_scale", w_scale, "per output channel",
                          ((1, n), (n,), (n, 1)), (1, n))
    y = ops.batched_matmul(x.unsqueeze(0), w.unsqueeze(0),
                           out_dtype=out_dtype, x_scale=x_scale,
                           w_scale=w_scale)
    return y[0]


def grouped_gemm(input: Any, weights: Any, expert_ids: Any, topk: int,
                 **kwargs: Any) -> Any:
    """``out[t, j] = input[t] @ weights[expert_ids[t, j]]ᵀ`` for each token
    t and each of its ``topk`` experts: the expert product of aiter's
    ``fused_moe`` (``mul_routed_weight=False``), whose output is ``[T, topk,
    N]`` and whose weights are ``[E, N, K]``.

    - ``input``: ``[T, K]`` bf16 or fp16; ``weights``: ``[E, N, K]``.
    - ``expert_ids``: ``[T, topk]`` (or ``[T * topk]``) int32/int64 on the
      device. A pair whose expert is outside ``[0, E)`` (another rank's, or
      -1) gives a zero row.
    - Returns ``[T, topk, N]`` in input's dtype.

    The routing is computed on the device (:func:`ggemm.sort_by_expert`:
    a stable argsort of the ids, ``searchsorted`` for the segments), then
    one :func:`ggemm.segment_matmul` with ``row_indices`` (each sorted
    pair's token) and ``scatter_indices`` (its pair) writes the result in
    place. Nothing synchronises. With autograd recording (``input`` or
    ``weights`` requiring grad) the scatter is done by torch
    (``index_copy``) after a differentiable gathered product.

    Example::

        topk_weights, topk_ids = torch.topk(router_logits.softmax(-1), 8)
        h = aiter.grouped_gemm(x, w1, topk_ids, 8)        # [T, 8, N]
    """
    if kwargs:
        raise ArgumentError(f"{', '.join(sorted(kwargs))}: not arguments of "
                            f"grouped_gemm(input, weights, expert_ids, topk)")
    torch = ops._require_torch()
    if getattr(input, "dim", lambda: 0)() != 2:
        raise ArgumentError(f"input: expected [T, K], got shape "
                            f"{list(getattr(input, 'shape', []))}")
    if getattr(weights, "dim", lambda: 0)() != 3:
        raise ArgumentError(f"weights: expected [E, N, K], got shape "
                            f"{list(getattr(weights, 'shape', []))}")
    tokens = input.shape[0]
    shape = tuple(getattr(expert_ids, "shape", ()))
    if shape not in ((tokens, topk), (tokens * topk,)):
        raise ArgumentError(f"expert_ids: expected [{tokens}, {topk}] ([T, "
                            f"topk]) or [{tokens * topk}], got {list(shape)}")
    device = getattr(expert_ids, "device", None)
    if device != input.device:
        raise ArgumentError(f"expert_ids: expected a tensor on input's "
                            f"device ({input.device}), got "
                            f"{type(expert_ids).__name__} on {device}")
    routing = sort_by_expert(expert_ids, weights.shape[0], topk)
    n = weights.shape[1]
    if torch.is_grad_enabled() and (input.requires_grad or
                                    weights.requires_grad):
        # A scattered call writes into out= and has no backward: gather
        # differentiably, then put the sorted rows in pair order.
        rows = ops.segment_matmul(input, weights, routing.seg_indptr,
                                  row_indices=routing.row_indices)
        out = rows.new_zeros((tokens * topk, n)).index_copy(
            0, routing.pair_indices.long(), rows)
        return out.view(tokens, topk, n)
    out = torch.zeros((tokens * topk, n), dtype=input.dtype,
                      device=input.device)
    ops.segment_matmul(input, weights, routing.seg_indptr,
                       row_indices=routing.row_indices,
                       scatter_indices=routing.pair_indices, out=out)
    return out.view(tokens, topk, n)
