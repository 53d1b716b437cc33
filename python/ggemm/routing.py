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
  Those keep their pair order on each side (all negative ids before, all
  ids from E on after: the kernel's buckets, not sorted by value);
- ``row_indices`` ``[T * topk]`` int32: the token of each sorted row
  (``pair // topk``), the gather indices of the up projection and the
  scatter indices of the combining down projection;
- ``pair_indices`` ``[T * topk]`` int32: the pair of each sorted row, the
  scatter indices that put the sorted rows back in ``[T, topk]`` order.

Three computations give the same results, bit for bit (``method=``):

- ``"kernel"``: GGEMM's routing kernel (the ``ggemm.sort_by_expert`` op),
  one CTA that histograms the ids, scans the counts and scatters the pairs
  stably; the outputs are allocated with ``torch.empty`` on the ids'
  device and the kernel runs on its current stream. Its kernel is built
  per (E, topk, ids' dtype), through the compile cache or a catalog
  (``catalog=`` or ``$GGEMM_CATALOG``), as the GEMM ops' are;
- ``"torch"``: torch's stable ``argsort`` and ``searchsorted`` (several
  kernels), on the ids' device;
- NumPy arrays: the same bookkeeping on the host, for tests and tools.

``"auto"`` (the default) takes the kernel for CUDA tensors of int32 or
int64 ids, at least one expert and at most :data:`KERNEL_MAX_PAIRS` pairs
(torch's path while ``torch.compile`` traces, which cannot trace the
kernel's launch, and for more pairs: the one-CTA kernel is bound by one
SM's scattered stores there; bench/NOTES.md, "Routing kernel"), NumPy for
NumPy arrays, torch's path otherwise (CPU tensors). On the device nothing synchronises,
so a CUDA graph can capture either path.

Example::

    routing = ggemm.sort_by_expert(topk_ids, num_experts=128)
    h = ggemm.segment_matmul(x, w13, routing.seg_indptr,
                             row_indices=routing.row_indices,
                             activation="swiglu")
"""

from __future__ import annotations

import math
import sys
from typing import Any, NamedTuple, Optional

from .cache import kernel_for
from .ops import ArgumentError, dtype_name
from .problem import INDEX_DTYPES, RoutingProblem

__all__ = ["KERNEL_MAX_PAIRS", "METHODS", "Routing", "sort_by_expert"]

#: The values of ``sort_by_expert``'s ``method``.
METHODS = ("auto", "kernel", "torch")

#: The most pairs (T * topk) ``method="auto"`` gives the routing kernel.
#: Measured on an H100 (E = 256, top-8): the kernel takes 13 µs at 4096
#: pairs against 37 µs for torch's path, 74 against 57 at 32768.
KERNEL_MAX_PAIRS = 16384


class Routing(NamedTuple):
    """The segments and indices of pairs sorted by expert (see the module's
    docstring)."""

    seg_indptr: Any
    row_indices: Any
    pair_indices: Any


def _is_numpy(array: Any) -> bool:
    numpy = sys.modules.get("numpy")  # an array of it means it is imported
    return numpy is not None and isinstance(array, numpy.ndarray)


def _kernel_refusal(topk_ids: Any, num_experts: int) -> Optional[str]:
    """Why the routing kernel cannot take these arguments (an error message
    naming the argument), or None."""
    if _is_numpy(topk_ids):
        return ("topk_ids: method='kernel' needs a CUDA tensor, got a NumPy "
                "array")
    if not getattr(topk_ids, "is_cuda", False):
        return (f"topk_ids: method='kernel' needs a CUDA tensor, got device "
                f"{getattr(topk_ids, 'device', 'cpu')}")
    if dtype_name(topk_ids) not in INDEX_DTYPES:
        return (f"topk_ids: method='kernel' takes int32 or int64 ids, got "
                f"{topk_ids.dtype}")
    if num_experts < 1:
        return "num_experts: method='kernel' needs at least 1 expert, got 0"
    return None


def _route_on_kernel(torch: Any, topk_ids: Any, num_experts: int, topk: int,
                     catalog: Any) -> Routing:
    """The routing kernel on the ids' device and current stream: three
    ``torch.empty`` outputs, one launch, no synchronisation."""
    problem = RoutingProblem(num_experts, topk, dtype_name(topk_ids))
    kernel = kernel_for(problem, catalog)
    flat = topk_ids.reshape(-1).contiguous()
    pairs, device = flat.shape[0], flat.device
    routing = Routing(
        torch.empty(num_experts + 1, dtype=torch.int32, device=device),
        torch.empty(pairs, dtype=torch.int32, device=device),
        torch.empty(pairs, dtype=torch.int32, device=device))
    # The fields are the kernel's tensor names.
    kernel.launch({"topk_ids": flat, **routing._asdict()})
    return routing


def sort_by_expert(topk_ids: Any, num_experts: int,
                   topk: Optional[int] = None, *, method: str = "auto",
                   catalog: Any = None) -> Routing:
    """Sorts the (token, k) pairs of ``topk_ids`` by expert, on the device.

    ``topk_ids``: ``[T, topk]`` integer expert ids (int32 or int64), or the
    flat ``[T * topk]`` with ``topk`` given. ``num_experts`` is E, the
    experts this rank holds (ids outside ``[0, E)`` are in no segment).
    ``method``: ``"auto"``, ``"kernel"`` or ``"torch"`` (see the module's
    docstring; the results are the same); ``catalog``: where the kernel
    comes from, as for the GEMM ops.

    Example::

        >>> import numpy as np
        >>> r = sort_by_expert(np.array([[1, 0], [1, 2]]), num_experts=3)
        >>> r.seg_indptr.tolist(), r.row_indices.tolist()
        ([0, 1, 3, 4], [0, 0, 1, 1])
        >>> r.pair_indices.tolist()
        [1, 0, 2, 3]

    On the GPU, ``sort_by_expert(ids, 256)`` runs the routing kernel and
    ``sort_by_expert(ids, 256, method="torch")`` torch's argsort.
    """
    if method not in METHODS:
        raise ArgumentError(f"method: expected one of "
                            f"{', '.join(repr(m) for m in METHODS)}, got "
                            f"{method!r}")
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
    if method == "kernel":
        refusal = _kernel_refusal(topk_ids, num_experts)
        if refusal is not None:
            raise ArgumentError(refusal)
    if _is_numpy(topk_ids):
        if method == "torch":
            raise ArgumentError("topk_ids: method='torch' needs a torch "
                                "tensor, got a NumPy array (method='auto' "
                                "sorts it with NumPy)")
        import numpy
        # The kernel's buckets: ids outside [0, E) keep their pair order.
        flat = numpy.clip(topk_ids.reshape(-1), -1, num_experts)
        order = numpy.argsort(flat, kind="stable")
        bounds = numpy.searchsorted(flat[order],
                                    numpy.arange(num_experts + 1),
                                    side="left")
        return Routing(bounds.astype(numpy.int32),
                       (order // topk).astype(numpy.int32),
                       order.astype(numpy.int32))
    from .ops import _require_torch
    torch = _require_torch()
    if method == "auto" and _kernel_refusal(topk_ids, num_experts) is None \
            and math.prod(shape) <= KERNEL_MAX_PAIRS \
            and not torch.compiler.is_compiling():
        method = "kernel"
    if method == "kernel":
        return _route_on_kernel(torch, topk_ids, num_experts, topk, catalog)
    # The kernel's buckets: ids outside [0, E) keep their pair order.
    flat = topk_ids.reshape(-1).clamp(-1, num_experts)
    order = torch.argsort(flat, stable=True)
    experts = torch.arange(num_experts + 1, device=flat.device,
                           dtype=flat.dtype)
    # Pairs before expert e: the start of e's segment (ids below 0 sort
    # first, ids from E on last, both outside every segment).
    bounds = torch.searchsorted(flat[order], experts, out_int32=True)
    return Routing(bounds, torch.div(order, topk,
                                     rounding_mode="floor").int(),
                   order.int())
