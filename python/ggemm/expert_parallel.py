"""Expert-parallel bookkeeping: which rank holds which experts, which sorted
rows go to which rank, and how a rank orders the rows it receives.

Rank r of W holds the contiguous experts ``[first_r, end_r)``
(:func:`expert_ranges`). After :func:`ggemm.sort_by_expert` over all E
experts, rank r's rows are one contiguous run of the sorted rows,
``[seg_indptr[first_r], seg_indptr[end_r])``, and its segment offsets are a
slice of the global ones (:func:`local_seg_indptr`: megablox's
``group_offset``). Two ways to run the experts on W ranks:

- replicated tokens (``examples/moe_layer.py``, ``expert_range=``): every
  rank routes all tokens, computes only its experts' rows (the others come
  out zero) and ``all_reduce`` sums the outputs. Nothing here reads the
  device from the host.
- all-to-all dispatch: each rank routes its own tokens and sends each
  rank its rows. The send split sizes are :func:`rank_splits` (on the
  device), the per-expert counts follow with a fixed-size exchange (rank
  d receives ``end_d - first_d`` counts from each rank: sizes the host
  knows), and :func:`host_split_sizes` is the one host synchronisation
  (``all_to_all_single`` takes Python ints). The receiving rank runs its
  experts on the rows in arrival order with the gather indices of
  :func:`receive_routing`, and scatters the results back to arrival order
  with the same indices, ready for the return exchange.

Every function takes NumPy arrays or torch tensors (on any device) and
returns the same kind; none synchronises the device except
:func:`host_split_sizes`.

Example::

    >>> import numpy as np
    >>> expert_ranges(10, 3)
    [(0, 4), (4, 7), (7, 10)]
    >>> seg_indptr = np.array([0, 2, 2, 5, 6, 6, 9, 9, 9, 9, 12])
    >>> rank_splits(seg_indptr, expert_ranges(10, 3)).tolist()
    [6, 3, 3]
    >>> local_seg_indptr(seg_indptr, (4, 7)).tolist()
    [6, 6, 9, 9]
"""

from __future__ import annotations

import sys
from typing import Any, Callable, List, NamedTuple, Sequence, Tuple

from .ops import ArgumentError

__all__ = ["DispatchPlan", "Received", "dispatch_plan", "expert_ranges",
           "host_split_sizes", "local_seg_indptr", "rank_of_expert",
           "rank_splits", "receive_routing"]

Range = Tuple[int, int]


class Received(NamedTuple):
    """The segments of rows received from every rank (see
    :func:`receive_routing`)."""

    seg_indptr: Any
    row_indices: Any


class DispatchPlan(NamedTuple):
    """One rank's part of an all-to-all dispatch (see
    :func:`dispatch_plan`): the split sizes of the row exchange as Python
    ints, where the sent rows start among the rank's sorted rows, and the
    segments over the rows it receives."""

    send_splits: List[int]
    recv_splits: List[int]
    first_row: int
    received: Received


def _is_numpy(array: Any) -> bool:
    numpy = sys.modules.get("numpy")  # an array of it means it is imported
    return numpy is not None and isinstance(array, numpy.ndarray)


def _array_module(array: Any) -> Tuple[Any, dict]:
    """NumPy or torch, whichever ``array`` belongs to, and the keyword
    arguments that put a new array on its device."""
    if _is_numpy(array):
        import numpy
        return numpy, {}
    import torch
    return torch, {"device": array.device}


def _cast(array: Any, dtype: Any) -> Any:
    return array.astype(dtype) if _is_numpy(array) else array.to(dtype)


def expert_ranges(num_experts: int, world_size: int) -> List[Range]:
    """The experts ``[first, end)`` of each of ``world_size`` ranks:
    contiguous, in rank order, sizes differing by at most one (the first
    ``num_experts % world_size`` ranks hold one more).

    Example::

        >>> expert_ranges(8, 2)
        [(0, 4), (4, 8)]
    """
    for name, value in (("num_experts", num_experts),
                        ("world_size", world_size)):
        if isinstance(value, bool) or not isinstance(value, int) \
                or value <= 0:
            raise ArgumentError(f"{name}: expected a positive int, got "
                                f"{value!r}")
    if world_size > num_experts:
        raise ArgumentError(f"world_size: {world_size} ranks for "
                            f"{num_experts} experts would leave a rank "
                            f"without experts")
    size, extra = divmod(num_experts, world_size)
    ranges, first = [], 0
    for rank in range(world_size):
        end = first + size + (rank < extra)
        ranges.append((first, end))
        first = end
    return ranges


def _boundaries(ranges: Sequence[Range]) -> List[int]:
    """``[first_0, first_1, ..., end_{W-1}]`` of contiguous ranges that
    start at expert 0."""
    ranges = [tuple(r) for r in ranges]
    if not ranges or ranges[0][0] != 0:
        raise ArgumentError(f"ranges: expected contiguous expert ranges "
                            f"from expert 0, got {ranges}")
    for (first, end), following in zip(ranges, ranges[1:] + [None]):
        if not first < end or (following is not None
                               and following[0] != end):
            raise ArgumentError(f"ranges: expected contiguous, non-empty "
                                f"expert ranges, got {ranges}")
    return [first for first, _ in ranges] + [ranges[-1][1]]


def local_seg_indptr(seg_indptr: Any, expert_range: Range) -> Any:
    """This rank's segment offsets: experts ``[first, end)`` of the global
    ``seg_indptr`` (``[E + 1]``), a view of ``end - first + 1`` entries.
    Its rows are the sorted rows ``[seg_indptr[first], seg_indptr[end])``
    of the global order; a ``segment_matmul`` over it computes only those
    (the rows of other ranks' experts are in none of its segments).

    Example::

        >>> import numpy as np
        >>> local_seg_indptr(np.array([0, 1, 3, 3, 7]), (1, 3)).tolist()
        [1, 3, 3]
    """
    first, end = expert_range
    experts = seg_indptr.shape[0] - 1
    if not 0 <= first < end <= experts:
        raise ArgumentError(f"expert_range: ({first}, {end}) is not a "
                            f"non-empty range inside [0, {experts})")
    return seg_indptr[first:end + 1]


def rank_of_expert(expert_ids: Any, ranges: Sequence[Range]) -> Any:
    """The rank that holds each expert id (int64, ``expert_ids``' shape);
    -1 for an id outside every range (padding, ids of no expert).

    Example::

        >>> import numpy as np
        >>> rank_of_expert(np.array([[0, 5], [9, -1]]),
        ...                expert_ranges(10, 3)).tolist()
        [[0, 1], [2, -1]]
    """
    bounds = _boundaries(ranges)
    rank = (expert_ids >= bounds[1]) * 1
    for bound in bounds[2:-1]:
        rank = rank + (expert_ids >= bound) * 1
    inside = (expert_ids >= 0) & (expert_ids < bounds[-1])
    # rank where inside, -1 elsewhere, with the same arithmetic in NumPy
    # and torch.
    return rank * inside + (inside * 1 - 1)


def rank_splits(seg_indptr: Any, ranges: Sequence[Range]) -> Any:
    """The sorted rows each rank holds, ``[W]``, on ``seg_indptr``'s device
    (no synchronisation): rank r's rows are ``[seg_indptr[first_r],
    seg_indptr[end_r])``, so these are the send split sizes of an
    all-to-all dispatch whose send buffer is the sorted rows
    ``[seg_indptr[0], seg_indptr[E])``.

    Example::

        >>> import numpy as np
        >>> rank_splits(np.array([0, 1, 3, 3, 7]), [(0, 1), (1, 4)]).tolist()
        [1, 6]
    """
    bounds = _boundaries(ranges)
    if bounds[-1] != seg_indptr.shape[0] - 1:
        raise ArgumentError(f"ranges: they cover {bounds[-1]} experts, "
                            f"seg_indptr {seg_indptr.shape[0] - 1}")
    ends = seg_indptr[bounds[1:]]
    return ends - seg_indptr[bounds[:-1]]


def host_split_sizes(send_splits: Any, recv_counts: Any
                     ) -> Tuple[List[int], List[int]]:
    """The split sizes of ``all_to_all_single`` as Python ints:
    ``send_splits`` (``[W]``, :func:`rank_splits`) and the rows received
    from each rank (``recv_counts`` ``[W, E_local]`` summed per rank), read
    with one device-to-host copy. This is the dispatch's one host
    synchronisation: the sizes depend on the routing, and the collective
    needs them on the host to size its buffers.

    Example::

        >>> import numpy as np
        >>> host_split_sizes(np.array([3, 1]), np.array([[2, 0], [1, 4]]))
        ([3, 1], [2, 5])
    """
    xp, _ = _array_module(send_splits)
    received = _cast(recv_counts.sum(1), send_splits.dtype)
    both = (xp.concatenate if _is_numpy(send_splits) else xp.cat)(
        [send_splits, received])
    sizes = [int(v) for v in both.tolist()]  # the synchronisation
    ranks = send_splits.shape[0]
    return sizes[:ranks], sizes[ranks:]


def receive_routing(recv_counts: Any, rows: int) -> Received:
    """Segments over the rows a rank received, in arrival order.

    ``recv_counts[s, e]``: the rows rank s sent for this rank's local
    expert e (``[W, E_local]``); they arrive grouped by sender, and by
    expert within a sender (each sender's rows are sorted by expert).
    ``rows``: their total (the sum of ``host_split_sizes``' received
    sizes, known on the host). Returns ``seg_indptr`` ``[E_local + 1]``
    int32 and ``row_indices`` ``[rows]`` int32: sorted row p (experts in
    order, senders in rank order within an expert, arrival order within a
    sender) is arrival row ``row_indices[p]``. Pass them to
    ``segment_matmul`` as ``seg_indptr`` and ``row_indices`` (the up
    projection reads the arrival buffer as it is) and as
    ``scatter_indices`` (the down projection writes the results back in
    arrival order). Nothing synchronises.

    Example::

        >>> import numpy as np
        >>> r = receive_routing(np.array([[1, 2], [1, 0]]), 4)
        >>> r.seg_indptr.tolist(), r.row_indices.tolist()
        ([0, 2, 4], [0, 3, 1, 2])
    """
    if len(recv_counts.shape) != 2:
        raise ArgumentError(f"recv_counts: expected [ranks, local experts], "
                            f"got shape {list(recv_counts.shape)}")
    xp, device = _array_module(recv_counts)
    counts = _cast(recv_counts, xp.int64)
    senders, experts = counts.shape
    # Arrival order: by sender, then by expert.
    arrival_end = xp.cumsum(counts.reshape(-1), 0).reshape(senders, experts)
    arrival_start = (arrival_end - counts).T.reshape(-1)
    # Sorted order: by expert, then by sender; the same blocks.
    by_expert = counts.T.reshape(-1)
    sorted_end = xp.cumsum(by_expert, 0)
    sorted_start = sorted_end - by_expert
    position = xp.arange(rows, **device)
    block = xp.searchsorted(sorted_end, position, side="right")
    row_indices = arrival_start[block] + (position - sorted_start[block])
    seg_indptr = xp.zeros(experts + 1, dtype=xp.int32, **device)
    # Each expert's end: the end of its last sender's block.
    seg_indptr[1:] = sorted_end.reshape(experts, senders)[:, -1]
    return Received(seg_indptr, _cast(row_indices, xp.int32))


#: ``exchange(send, send_splits, recv_splits) -> received``: an
#: all-to-all of a 1-D array with split sizes the host knows
#: (``torch.distributed.all_to_all_single`` on a new output).
Exchange = Callable[[Any, List[int], List[int]], Any]


def dispatch_plan(seg_indptr: Any, ranges: Sequence[Range], rank: int,
                  exchange: Exchange) -> DispatchPlan:
    """Everything rank ``rank`` needs to send its sorted rows to the ranks
    holding their experts and to run its own experts on what it receives.

    ``seg_indptr`` is this rank's :func:`ggemm.sort_by_expert` over all E
    experts (``[E + 1]``); ``ranges`` the experts of every rank
    (:func:`expert_ranges`); ``exchange`` the collective (called once, by
    every rank: each sends rank d its per-expert counts of d's experts, a
    size every rank knows). Then one device-to-host copy reads the split
    sizes (the dispatch's one host synchronisation, as in
    :func:`host_split_sizes`) and :func:`receive_routing` orders the
    received rows by expert.

    The rows to send are the sorted rows ``[first_row, first_row +
    sum(send_splits))`` (rows of ids below 0 come before ``first_row``,
    rows of ids from E on after them: they go nowhere). The received rows
    arrive ``recv_splits[s]`` from each rank s, in rank order.

    Example (rank 0 of 2, with a stand-in for the collective: the other
    rank sent 2 rows of expert 0 and 1 of expert 1)::

        >>> import numpy as np
        >>> def exchange(send, send_splits, recv_splits):
        ...     return np.array([send[0], send[1], 2, 1])
        >>> plan = dispatch_plan(np.array([0, 1, 3, 3, 4]),
        ...                      expert_ranges(4, 2), 0, exchange)
        >>> plan.send_splits, plan.recv_splits, plan.first_row
        ([3, 1], [3, 3], 0)
        >>> plan.received.seg_indptr.tolist()
        [0, 3, 6]
        >>> plan.received.row_indices.tolist()
        [0, 3, 4, 1, 2, 5]
    """
    bounds = _boundaries(ranges)
    ranks = len(bounds) - 1
    if isinstance(rank, bool) or not isinstance(rank, int) \
            or not 0 <= rank < ranks:
        raise ArgumentError(f"rank: expected an int in [0, {ranks}), got "
                            f"{rank!r}")
    xp, _ = _array_module(seg_indptr)
    send = _cast(rank_splits(seg_indptr, ranges), xp.int64)
    counts = _cast(seg_indptr[1:] - seg_indptr[:-1], xp.int64)
    sizes = [end - first for first, end in zip(bounds, bounds[1:])]
    local = sizes[rank]
    recv_counts = exchange(counts, sizes, [local] * ranks)
    if tuple(recv_counts.shape) != (ranks * local,):
        raise ArgumentError(f"exchange: expected {ranks * local} counts "
                            f"back ({local} local experts from each of "
                            f"{ranks} ranks), got shape "
                            f"{list(recv_counts.shape)}")
    recv_counts = _cast(recv_counts, xp.int64).reshape(ranks, local)
    join = xp.concatenate if _is_numpy(seg_indptr) else xp.cat
    both = join([_cast(seg_indptr[:1], xp.int64), send,
                 recv_counts.sum(1)])
    values = [int(v) for v in both.tolist()]  # the synchronisation
    send_splits, recv_splits = values[1:ranks + 1], values[ranks + 1:]
    return DispatchPlan(send_splits, recv_splits, values[0],
                        receive_routing(recv_counts, sum(recv_splits)))
