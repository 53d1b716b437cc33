"""megablox's (and ejkernel's) ``gmm`` on GGEMM, on torch tensors.

``gmm(lhs, rhs, group_sizes)``: ``lhs`` ``[m, k]`` rows sorted by group,
``rhs`` ``[num_groups, k, n]`` (``transpose_rhs=True``: ``[num_groups, n,
k]``), ``group_sizes`` ``[num_groups_total]`` int32 on the device. With
``group_offset`` the local ``rhs`` holds groups ``[group_offset,
group_offset + rhs.shape[0])`` of ``group_sizes`` (experts sharded over
ranks): only their rows are computed; the others are zero, or keep the
values of ``existing_out``, which is then written in place and returned.

``tgmm(lhs, rhs, group_sizes)`` is the transposed, K-ragged product of
weight gradients (``lhs`` ``[k, m]``, ``rhs`` ``[m, n]``, out ``[num_groups,
k, n]``) on ``ggemm.segment_matmul_k``.

``tiling`` is megablox's tile-size knob; GGEMM chooses its tiles when it
compiles, so it is accepted and unused. ``interpret=True`` (the Pallas
interpreter) is not supported.

Example::

    from ggemm.compat.megablox import gmm
    out = gmm(lhs, rhs, group_sizes, preferred_element_type=torch.bfloat16)
"""

from __future__ import annotations

from typing import Any, Optional

from .. import ops
from . import ArgumentError

__all__ = ["gmm", "tgmm"]


def _dtype(preferred_element_type: Any, default: Any) -> Any:
    torch = ops._require_torch()
    if preferred_element_type is None:
        return default
    if isinstance(preferred_element_type, str):
        name = {"bfloat16": "bf16", "float16": "f16", "float32": "f32"}.get(
            preferred_element_type, preferred_element_type)
        if name not in ("bf16", "f16", "f32"):
            raise ArgumentError(f"preferred_element_type: expected bfloat16, "
                                f"float16 or float32, got "
                                f"{preferred_element_type!r}")
        return ops.torch_dtype(name)
    if preferred_element_type not in (torch.bfloat16, torch.float16,
                                      torch.float32):
        raise ArgumentError(f"preferred_element_type: expected bfloat16, "
                            f"float16 or float32, got {preferred_element_type}")
    return preferred_element_type


def group_indptr(group_sizes: Any, group_offset: Any, num_local: int) -> Any:
    """The local groups' ``seg_indptr`` from the sizes of all groups,
    computed on the device (``group_offset`` may be a device tensor)."""
    torch = ops._require_torch()
    total = group_sizes.shape[0]
    indptr = torch.zeros(total + 1, dtype=torch.int64,
                         device=group_sizes.device)
    indptr[1:] = torch.cumsum(group_sizes, 0)
    if group_offset is None:
        if num_local != total:
            raise ArgumentError(f"rhs: {num_local} groups but group_sizes has "
                                f"{total}; pass group_offset for a shard")
        return indptr
    if isinstance(group_offset, int):
        if not 0 <= group_offset <= total - num_local:
            raise ArgumentError(f"group_offset: {group_offset} puts the "
                                f"{num_local} local groups outside the "
                                f"{total} of group_sizes")
        return indptr[group_offset:group_offset + num_local + 1]
    offset = group_offset.reshape(-1)[:1].to(torch.int64)
    positions = offset + torch.arange(num_local + 1, device=indptr.device)
    return indptr.index_select(0, positions.clamp_(0, total))


def gmm(lhs: Any, rhs: Any, group_sizes: Any,
        preferred_element_type: Any = None, tiling: Any = (128, 128, 128),
        group_offset: Any = None, existing_out: Any = None,
        transpose_rhs: bool = False, interpret: bool = False) -> Any:
    """Grouped matmul ``out[rows of g] = lhs[rows of g] @ rhs[g]`` (see the
    module docstring)."""
    if interpret:
        raise ArgumentError("interpret: the Pallas interpreter has no GGEMM "
                            "counterpart here; run on a GPU")
    out_dtype = _dtype(preferred_element_type, lhs.dtype)
    seg_indptr = group_indptr(group_sizes, group_offset, rhs.shape[0])
    layout = "nk" if transpose_rhs else "kn"
    if existing_out is not None:
        if existing_out.dtype != out_dtype:
            raise ArgumentError(f"existing_out: dtype {existing_out.dtype}, "
                                f"expected preferred_element_type "
                                f"{out_dtype}")
        return ops.segment_matmul(lhs, rhs, seg_indptr, weight_layout=layout,
                                  out=existing_out)
    return ops.segment_matmul(lhs, rhs, seg_indptr, weight_layout=layout,
                              out_dtype=out_dtype)


def tgmm(lhs: Any, rhs: Any, group_sizes: Any,
         preferred_element_type: Any = None, tiling: Any = (128, 128, 128),
         group_offset: Any = None, num_actual_groups: Optional[int] = None,
         existing_out: Any = None, interpret: bool = False) -> Any:
    """megablox ``tgmm``, the transposed (K-ragged) product of weight
    gradients: ``out[g] = lhs[:, rows of g] @ rhs[rows of g]``, ``[num_groups,
    k, n]``, on ``ggemm.segment_matmul_k``.

    ``lhs`` ``[k, m]`` (megablox's layout: the token rows are its columns),
    ``rhs`` ``[m, n]``, bf16 or fp16; ``group_sizes`` ``[num_groups]`` int32
    on the device (never read on the host). The kernel reads the token rows
    of both operands with their other dimension contiguous: ``lhs`` given as
    the transposed view of a ``[m, k]`` tensor (``x.t()``) is used as it is;
    a row-major ``[k, m]`` ``lhs`` is copied transposed first (one read and
    write of it). ``preferred_element_type`` defaults to float32, as in
    megablox. ``group_offset`` and ``num_actual_groups`` select the groups
    ``[group_offset, group_offset + num_actual_groups)`` (experts sharded
    over ranks): the output has ``num_actual_groups`` matrices. A group
    without rows gives zeros; with ``existing_out`` (``[num_actual_groups, k,
    n]``, of ``preferred_element_type``) the product is added to it, in
    place, and it is returned. ``tiling`` is accepted and unused.

    Example::

        dw = tgmm(x.t(), dy, group_sizes)          # [G, K, N] float32
    """
    if interpret:
        raise ArgumentError("interpret: the Pallas interpreter has no GGEMM "
                            "counterpart here; run on a GPU")
    if lhs.dim() != 2 or rhs.dim() != 2:
        raise ArgumentError(f"lhs, rhs: expected lhs [k, m] and rhs [m, n], "
                            f"got shapes {list(lhs.shape)}, "
                            f"{list(rhs.shape)}")
    if lhs.shape[1] != rhs.shape[0]:
        raise ArgumentError(f"lhs: {lhs.shape[1]} token columns (m) but rhs "
                            f"has {rhs.shape[0]} rows; lhs is [k, m], rhs "
                            f"[m, n]")
    torch = ops._require_torch()
    out_dtype = _dtype(preferred_element_type, torch.float32)
    total = group_sizes.shape[0]
    local = total if num_actual_groups is None else num_actual_groups
    if isinstance(local, bool) or not isinstance(local, int) or local < 0:
        raise ArgumentError(f"num_actual_groups: expected None or a "
                            f"non-negative int, got {num_actual_groups!r}")
    offset = group_offset
    if offset is None and local != total:
        offset = 0
    seg_indptr = group_indptr(group_sizes, offset, local)
    dy = lhs.t()  # [m, k]: the token rows, k contiguous
    if dy.dim() == 2 and dy.shape[1] > 1 and dy.stride(1) != 1:
        dy = dy.contiguous()
    if existing_out is not None:
        if existing_out.dtype != out_dtype:
            raise ArgumentError(f"existing_out: dtype {existing_out.dtype}, "
                                f"expected preferred_element_type "
                                f"{out_dtype}")
        return ops.segment_matmul_k(rhs, dy, seg_indptr, num_weights=local,
                                    out=existing_out, accumulate=True)
    return ops.segment_matmul_k(rhs, dy, seg_indptr, num_weights=local,
                                out_dtype=out_dtype)
