"""MoE routing bookkeeping on the device: from each token's top-k experts to
the segments, gather indices and scatter indices of a gathered
:func:`ggemm.segment_matmul`.

A token t routed to experts ``topk_ids[t, 0..topk)`` makes ``topk`` pairs,
pair ``p = t * topk + j``. :func:`sort_by_expert` orders the pairs by
expert (a stable argsort, so pairs of one expert keep token order) and
returns

- ``seg_indptr`` ``[E + 1]`` int32: expert e's pairs are sorted rows
  ``[seg_indptr[e], seg_indptr[e + 1])``; pairs whose expert is outside
  ``[0, E)`` (another rank's, or a padding id like -1) lie before
  ``seg_indptr[0]`` or after ``seg_indptr[E]``, in no segment;
- ``row_indices`` ``[T * topk]`` int32: the token of each sorted row
  (``pair // topk``), the gather indices of the up projection and the
  scatter indices of the combining down projection;
- ``pair_indices`` ``[T * topk]`` int32: the pair of each sorted row, the
  scatter indices that put the sorted rows back in ``[T, topk]`` order.

Everything stays on the device (argsort, searchsorted): nothing
synchronises, so a CUDA graph can capture it. It takes torch tensors, or
NumPy arrays (the same bookkeeping on the host, for tests and tools).

Example::

    routing = ggemm.sort_by_expert(topk_ids, num_experts=128)
    h = ggemm.segment_matmul(x, w13, routing.seg_indptr,
                             row_indices=routing.row_indices,
                             activation="swiglu")
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple, Optional

from .ops import ArgumentError

__all__ = ["Routing", "sort_by_expert"]


class Routing(NamedTuple):
    """The segments and indices of pairs sorted by expert (see the module's
    docstring)."""

    seg_indptr: Any
    row_indices: Any
    pair_indices: Any


def _is_numpy(array: Any) -> bool:
    numpy = sys.modules.get("numpy")  # an array of it means it is imported
    return numpy is not None and isinstance(array, numpy.ndarray)


def sort_by_expert(topk_ids: Any, num_experts: int,
                   topk: Optional[int] = None) -> Routing:
    """Sorts the (token, k) pairs of ``topk_ids`` by expert, on the device.

    ``topk_ids``: ``[T, topk]`` integer expert ids (int32 or int64), or the
    flat ``[T * topk]`` with ``topk`` given. ``num_experts`` is E, the
    experts this rank holds (ids outside ``[0, E)`` are in no segment).

    Example::

        >>> import numpy as np
        >>> r = sort_by_expert(np.array([[1, 0], [1, 2]]), num_experts=3)
        >>> r.seg_indptr.tolist(), r.row_indices.tolist()
        ([0, 1, 3, 4], [0, 0, 1, 1])
        >>> r.pair_indices.tolist()
        [1, 0, 2, 3]
    """
    if isinstance(num_experts, bool) or not isinstance(num_experts, int) \
            or num_experts < 0:
        raise ArgumentError(f"num_experts: expected a non-negative int, got "
                            f"{num_experts!r}")
    shape = tuple(getattr(topk_ids, "shape", ()))
    if len(shape) == 2:
        if topk is not None and topk != shape[1]:
            raise ArgumentError(f"topk: {topk}, but topk_ids is "
                                f"{list(shape)} ([T, topk])")
        topk = shape[1]
    elif len(shape) != 1 or topk is None:
        raise ArgumentError(f"topk_ids: expected [T, topk] (or [T * topk] "
                            f"with topk given), got shape {list(shape)}")
    if isinstance(topk, bool) or not isinstance(topk, int) or topk <= 0:
        raise ArgumentError(f"topk: expected a positive int, got {topk!r}")
    if len(shape) == 1 and shape[0] % topk:
        raise ArgumentError(f"topk_ids: {shape[0]} ids are not a whole "
                            f"number of tokens of topk = {topk}")
    kind = str(getattr(topk_ids, "dtype", ""))
    if "int" not in kind or "uint" in kind:
        raise ArgumentError(f"topk_ids: expected int32 or int64 expert ids, "
                            f"got {kind or type(topk_ids).__name__}")
    if _is_numpy(topk_ids):
        import numpy
        flat = topk_ids.reshape(-1)
        order = numpy.argsort(flat, kind="stable")
        bounds = numpy.searchsorted(flat[order],
                                    numpy.arange(num_experts + 1),
                                    side="left")
        return Routing(bounds.astype(numpy.int32),
                       (order // topk).astype(numpy.int32),
                       order.astype(numpy.int32))
    from .ops import _require_torch
    torch = _require_torch()
    flat = topk_ids.reshape(-1)
    order = torch.argsort(flat, stable=True)
    experts = torch.arange(num_experts + 1, device=flat.device,
                           dtype=flat.dtype)
    # Pairs before expert e: the start of e's segment (ids below 0 sort
    # first, ids from E on last, both outside every segment).
    bounds = torch.searchsorted(flat[order], experts, out_int32=True)
    return Routing(bounds, torch.div(order, topk,
                                     rounding_mode="floor").int(),
                   order.int())
