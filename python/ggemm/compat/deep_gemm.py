"""DeepGEMM's BF16 grouped GEMMs and its FP8 (``gemm_fp8_fp8_bf16_nt``
family) GEMMs on GGEMM; the newer FP8 names (``fp8_gemm_nt`` ...) raise.

DeepGEMM's conventions: ``nt`` means ``d = a @ bᵀ`` with ``b`` ``[N, K]``
(grouped: ``[G, N, K]``); outputs are written into ``d``.

- contiguous layout: ``a`` ``[M, K]``, ``m_indices`` ``[M]`` int32, the
  group of each row or -1 for rows to skip (their rows of ``d`` are left as
  they are). Each group's rows must be contiguous (DeepGEMM's layout, where
  every 128-row block belongs to one group); the groups may come in any
  order. The segments are computed on the device (no synchronisation):
  one segment per group plus the gaps between them, whose weight index -1
  GGEMM skips.
- K-grouped (weight gradients, ``k_grouped_bf16_gemm_tn_contiguous``):
  ``a`` ``[sum(ks), m]``, ``b`` ``[sum(ks), n]``, ``d`` ``[G, m, n]``, on
  ``ggemm.segment_matmul_k``; the FP8 K-grouped names raise
  :class:`ggemm.NotLoweredError` (FP8 K-ragged is not lowered).
- masked layout: ``a`` ``[G, Mmax, K]``, ``masked_m`` ``[G]``;
  ``expected_m`` is a tuning hint DeepGEMM uses to choose tiles; GGEMM
  passes it to the runtime, which launches the matching variant of a
  kernel compiled with several (0: no hint).

Example::

    from ggemm.compat import deep_gemm
    deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, m_indices)
"""

from __future__ import annotations

from typing import Any

from .. import ops
from . import ArgumentError, not_lowered

__all__ = [
    "bf16_gemm_nt", "bf16_gemm_nn", "m_grouped_bf16_gemm_nt_contiguous",
    "m_grouped_bf16_gemm_nn_contiguous", "m_grouped_bf16_gemm_nt_masked",
    "segments_from_m_indices", "gemm_fp8_fp8_bf16_nt",
    "m_grouped_gemm_fp8_fp8_bf16_nt_contiguous",
    "m_grouped_gemm_fp8_fp8_bf16_nt_masked", "fp8_gemm_nt",
    "m_grouped_fp8_gemm_nt_contiguous", "m_grouped_fp8_gemm_nt_masked",
    "k_grouped_fp8_gemm_tn_contiguous", "k_grouped_fp8_gemm_nt_contiguous",
    "k_grouped_bf16_gemm_tn_contiguous",
]


def _compiled_dims(compiled_dims: str) -> None:
    # A JIT hint of DeepGEMM's (which sizes to compile in statically);
    # GGEMM always compiles N, K and G in.
    if not isinstance(compiled_dims, str):
        raise ArgumentError(f"compiled_dims: expected a string, got "
                            f"{compiled_dims!r}")


def _gemm(a: Any, b: Any, d: Any, c: Any, layout: str) -> None:
    if a.dim() != 2:
        raise ArgumentError(f"a: expected [M, K], got shape {list(a.shape)}")
    if b.dim() != 2:
        raise ArgumentError(f"b: expected 2 dimensions, got shape "
                            f"{list(b.shape)}")
    if c is not None:
        if tuple(c.shape) != tuple(d.shape):
            raise ArgumentError(f"c: expected shape {list(d.shape)} like d, "
                                f"got {list(c.shape)}")
        if c.data_ptr() != d.data_ptr():
            d.copy_(c)
    # One GEMM is a batch of one: no index tensor to build per call.
    ops.batched_matmul(a.unsqueeze(0), b.unsqueeze(0), weight_layout=layout,
                       out=d.unsqueeze(0), accumulate=c is not None)


def bf16_gemm_nt(a: Any, b: Any, d: Any, c: Any = None,
                 compiled_dims: str = "nk") -> None:
    """``d = a @ bᵀ (+ c)``: a ``[M, K]``, b ``[N, K]``, d ``[M, N]``
    (bf16 or float32), c ``[M, N]`` float32 or None."""
    _compiled_dims(compiled_dims)
    _gemm(a, b, d, c, "nk")


def bf16_gemm_nn(a: Any, b: Any, d: Any, c: Any = None,
                 compiled_dims: str = "nk") -> None:
    """``d = a @ b (+ c)``: b ``[K, N]``."""
    _compiled_dims(compiled_dims)
    _gemm(a, b, d, c, "kn")


def segments_from_m_indices(m_indices: Any, num_groups: int
                            ) -> "tuple[Any, Any]":
    """``(seg_indptr, weight_indices)`` for a contiguous ``m_indices``,
    computed on the device: ``2 G + 1`` segments — the rows before the
    first group, then each group's rows and the gap after them, the groups
    sorted by their first row; gaps (and the -1 rows in them) get weight
    index -1, which the kernel skips. Rows with an index outside ``[0,
    G)`` count as -1.

    Example::

        >>> # m_indices = [0, 0, -1, 1, 1, 1] -> segments [0,0) [0,2) [2,3)
        >>> # [3,6) [6,6) with weights -1, 0, -1, 1, -1
    """
    torch = ops._require_torch()
    rows = m_indices.shape[0]
    device = m_indices.device
    positions = torch.arange(rows, device=device, dtype=torch.int64)
    groups = m_indices.long()
    valid = (groups >= 0) & (groups < num_groups)
    safe = torch.where(valid, groups, torch.full_like(groups, num_groups))
    starts = torch.full((num_groups + 1,), rows, dtype=torch.int64,
                        device=device)
    starts.scatter_reduce_(0, safe, positions, reduce="amin")
    counts = torch.zeros(num_groups + 1, dtype=torch.int64, device=device)
    counts.scatter_add_(0, safe, torch.ones_like(positions))
    starts, counts = starts[:num_groups], counts[:num_groups]
    order = torch.argsort(starts, stable=True)
    begin = starts[order]
    end = begin + counts[order]
    bounds = torch.empty(2 * num_groups + 2, dtype=torch.int64, device=device)
    bounds[0] = 0
    bounds[1:-1:2] = begin
    bounds[2:-1:2] = end
    bounds[-1] = rows
    indices = torch.full((2 * num_groups + 1,), -1, dtype=torch.int32,
                         device=device)
    indices[1::2] = order.int()
    return bounds, indices


def m_grouped_bf16_gemm_nt_contiguous(a: Any, b: Any, d: Any, m_indices: Any,
                                      compiled_dims: str = "nk",
                                      use_psum_layout: bool = False,
                                      expected_m_for_psum_layout: Any = None
                                      ) -> None:
    """``d[r] = a[r] @ b[m_indices[r]]ᵀ`` for rows with ``m_indices[r] >= 0``
    (see the module docstring for the layout). ``use_psum_layout`` (the
    grouped layout given as prefix sums) is not supported."""
    _compiled_dims(compiled_dims)
    if use_psum_layout:
        raise ArgumentError("use_psum_layout: not supported; pass m_indices "
                            "(or call ggemm.segment_matmul with seg_indptr)")
    if m_indices.dim() != 1 or m_indices.shape[0] != a.shape[0]:
        raise ArgumentError(f"m_indices: expected shape [{a.shape[0]}] (one "
                            f"per row of a), got {list(m_indices.shape)}")
    seg_indptr, weight_indices = segments_from_m_indices(m_indices, b.shape[0])
    ops.segment_matmul(a, b, seg_indptr, weight_indices=weight_indices,
                       out=d)


def m_grouped_bf16_gemm_nn_contiguous(a: Any, b: Any, d: Any, m_indices: Any,
                                      compiled_dims: str = "nk",
                                      use_psum_layout: bool = False) -> None:
    """As :func:`m_grouped_bf16_gemm_nt_contiguous` with b ``[G, K, N]``."""
    _compiled_dims(compiled_dims)
    if use_psum_layout:
        raise ArgumentError("use_psum_layout: not supported; pass m_indices")
    seg_indptr, weight_indices = segments_from_m_indices(m_indices, b.shape[0])
    ops.segment_matmul(a, b, seg_indptr, weight_indices=weight_indices,
                       weight_layout="kn", out=d)


def m_grouped_bf16_gemm_nt_masked(a: Any, b: Any, d: Any, masked_m: Any,
                                  expected_m: int, compiled_dims: str = "nk"
                                  ) -> None:
    """``d[g, :masked_m[g]] = a[g, :masked_m[g]] @ b[g]ᵀ``; rows past
    ``masked_m[g]`` are left as they are. ``expected_m`` is the hint it is
    in DeepGEMM: it picks among a multi-variant kernel's tiles (0: none)."""
    _compiled_dims(compiled_dims)
    if not isinstance(expected_m, int) or expected_m < 0:
        raise ArgumentError(f"expected_m: expected a non-negative int, got "
                            f"{expected_m!r}")
    ops.masked_matmul(a, b, masked_m, out=d, expected_m=expected_m or None)


_FP8 = "FP8 (e4m3) operands with 1x128 / 128x128 block scales"


def _fp8_pair(name: str, pair: Any) -> "tuple[Any, Any]":
    """DeepGEMM's (FP8 tensor, f32 scales) operands."""
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise ArgumentError(f"{name}: expected a (tensor, scales) pair, got "
                            f"{type(pair).__name__}")
    return pair[0], pair[1]


def _bf16_out(out: Any) -> None:
    if ops.dtype_name(out) != "bf16":
        raise ArgumentError(f"out: expected torch.bfloat16 (the bf16 of "
                            f"gemm_fp8_fp8_bf16), got {out.dtype}")


def gemm_fp8_fp8_bf16_nt(lhs: Any, rhs: Any, out: Any) -> None:
    """``out = (a * a_scale) @ (b * b_scale)ᵀ``: ``lhs = (a [M, K] e4m3,
    a_scale [M, K/128] f32)``, ``rhs = (b [N, K] e4m3, b_scale [N/128,
    K/128] f32)``, ``out [M, N]`` bf16. ``a_scale`` may be row-major (it is
    then copied MN-major, as DeepGEMM's get_col_major_tma_aligned_tensor
    does) or already MN-major."""
    a, a_scale = _fp8_pair("lhs", lhs)
    b, b_scale = _fp8_pair("rhs", rhs)
    _bf16_out(out)
    if a.dim() != 2 or a_scale.dim() != 2:
        raise ArgumentError(f"lhs: expected a [M, K] and scales [M, K/128], "
                            f"got shapes {list(a.shape)}, "
                            f"{list(a_scale.shape)}")
    if b.dim() != 2 or b_scale.dim() != 2:
        raise ArgumentError(f"rhs: expected b [N, K] and scales [N/128, "
                            f"K/128], got shapes {list(b.shape)}, "
                            f"{list(b_scale.shape)}")
    # One GEMM is a batch of one (group stride M keeps the scales MN-major).
    ops.batched_matmul(a.unsqueeze(0), b.unsqueeze(0), out=out.unsqueeze(0),
                       x_scale=a_scale.unsqueeze(0),
                       w_scale=b_scale.unsqueeze(0))


def m_grouped_gemm_fp8_fp8_bf16_nt_contiguous(lhs: Any, rhs: Any, out: Any,
                                              m_indices: Any) -> None:
    """Grouped contiguous FP8: ``out[r] = a[r] @ b[m_indices[r]]ᵀ`` with
    the scales of :func:`gemm_fp8_fp8_bf16_nt` (``b`` ``[G, N, K]``,
    ``b_scale`` ``[G, N/128, K/128]``); rows with ``m_indices[r] < 0`` are
    left as they are (see the module docstring)."""
    a, a_scale = _fp8_pair("lhs", lhs)
    b, b_scale = _fp8_pair("rhs", rhs)
    _bf16_out(out)
    if m_indices.dim() != 1 or m_indices.shape[0] != a.shape[0]:
        raise ArgumentError(f"m_indices: expected shape [{a.shape[0]}] (one "
                            f"per row of a), got {list(m_indices.shape)}")
    seg_indptr, weight_indices = segments_from_m_indices(m_indices, b.shape[0])
    ops.segment_matmul(a, b, seg_indptr, weight_indices=weight_indices,
                       out=out, x_scale=a_scale, w_scale=b_scale)


def m_grouped_gemm_fp8_fp8_bf16_nt_masked(lhs: Any, rhs: Any, out: Any,
                                          masked_m: Any, expected_m: int
                                          ) -> None:
    """Masked FP8: ``out[g, :masked_m[g]] = a[g, :masked_m[g]] @ b[g]ᵀ``
    with ``a`` ``[G, Mmax, K]``, ``a_scale`` ``[G, Mmax, K/128]``, ``b``
    ``[G, N, K]``, ``b_scale`` ``[G, N/128, K/128]``; rows past
    ``masked_m[g]`` are left as they are; ``expected_m`` picks among a
    multi-variant kernel's tiles (0: no hint)."""
    a, a_scale = _fp8_pair("lhs", lhs)
    b, b_scale = _fp8_pair("rhs", rhs)
    _bf16_out(out)
    if not isinstance(expected_m, int) or expected_m < 0:
        raise ArgumentError(f"expected_m: expected a non-negative int, got "
                            f"{expected_m!r}")
    ops.masked_matmul(a, b, masked_m, out=out, x_scale=a_scale,
                      w_scale=b_scale, expected_m=expected_m or None)


def fp8_gemm_nt(a: Any, b: Any, d: Any, c: Any = None, **kwargs: Any) -> None:
    raise not_lowered("fp8_gemm_nt", _FP8)


def m_grouped_fp8_gemm_nt_contiguous(a: Any, b: Any, d: Any, m_indices: Any,
                                     **kwargs: Any) -> None:
    raise not_lowered("m_grouped_fp8_gemm_nt_contiguous", _FP8)


def m_grouped_fp8_gemm_nt_masked(a: Any, b: Any, d: Any, masked_m: Any,
                                 expected_m: int, **kwargs: Any) -> None:
    raise not_lowered("m_grouped_fp8_gemm_nt_masked", _FP8)


_FP8_KRAGGED = ("FP8 K-ragged grouped matmul (ggemm.segment_matmul_k takes "
                "bf16/f16 operands only: FP8 K-ragged is not lowered)")


def k_grouped_fp8_gemm_tn_contiguous(a: Any, b: Any, d: Any, ks: Any,
                                     ks_tensor: Any, c: Any = None,
                                     **kwargs: Any) -> None:
    raise not_lowered("k_grouped_fp8_gemm_tn_contiguous", _FP8_KRAGGED)


def k_grouped_fp8_gemm_nt_contiguous(a: Any, b: Any, d: Any, ks: Any,
                                     ks_tensor: Any, c: Any = None,
                                     **kwargs: Any) -> None:
    raise not_lowered("k_grouped_fp8_gemm_nt_contiguous", _FP8_KRAGGED)


def k_grouped_bf16_gemm_tn_contiguous(a: Any, b: Any, d: Any, ks: Any,
                                      ks_tensor: Any, c: Any = None,
                                      compiled_dims: str = "mn",
                                      use_psum_layout: bool = False) -> None:
    """DeepGEMM's K-grouped weight gradient: ``d[g] = a[rows of g]ᵀ @ b[rows
    of g] (+ c[g])`` with ``a`` ``[sum(ks), m]``, ``b`` ``[sum(ks), n]``
    (bf16 or fp16, rows contiguous), ``d`` ``[G, m, n]`` (float32 in
    DeepGEMM; bf16/fp16 also taken), group ``g`` holding ``ks[g]`` rows in
    order. ``ks`` is the host list (checked against ``a``'s rows; may be
    None), ``ks_tensor`` the same sizes, ``[G]`` int32, on the device: the
    segments are its prefix sums, computed on the device (no
    synchronisation). ``c`` ``[G, m, n]``: ``c is d`` accumulates in place;
    another tensor is copied into ``d`` first. A group with ``ks[g] = 0``
    gives zeros (``c[g]`` with ``c``). ``compiled_dims`` is unused;
    ``use_psum_layout=True`` raises. Runs ``ggemm.segment_matmul_k``."""
    _compiled_dims(compiled_dims)
    if use_psum_layout:
        raise ArgumentError("use_psum_layout: not supported; pass the group "
                            "sizes as ks_tensor")
    if a.dim() != 2 or b.dim() != 2:
        raise ArgumentError(f"a, b: expected a [sum(ks), m] and b [sum(ks), "
                            f"n], got shapes {list(a.shape)}, "
                            f"{list(b.shape)}")
    if d.dim() != 3:
        raise ArgumentError(f"d: expected [G, m, n], got shape "
                            f"{list(d.shape)}")
    groups = d.shape[0]
    if ks_tensor is None or ks_tensor.dim() != 1 or \
            ks_tensor.shape[0] != groups:
        raise ArgumentError(f"ks_tensor: expected [{groups}] (one size per "
                            f"group of d), got "
                            f"{None if ks_tensor is None else list(ks_tensor.shape)}")
    if ks is not None:
        sizes = [int(v) for v in ks]
        if len(sizes) != groups:
            raise ArgumentError(f"ks: {len(sizes)} sizes for {groups} groups "
                                f"of d")
        if sum(sizes) != a.shape[0]:
            raise ArgumentError(f"ks: the sizes add up to {sum(sizes)}, but "
                                f"a has {a.shape[0]} rows")
    if c is not None and tuple(c.shape) != tuple(d.shape):
        raise ArgumentError(f"c: expected shape {list(d.shape)} like d, got "
                            f"{list(c.shape)}")
    torch = ops._require_torch()
    seg_indptr = torch.zeros(groups + 1, dtype=torch.int64,
                             device=ks_tensor.device)
    seg_indptr[1:] = torch.cumsum(ks_tensor, 0)
    if c is not None and c.data_ptr() != d.data_ptr():
        d.copy_(c)
    ops.segment_matmul_k(b, a, seg_indptr, out=d, accumulate=c is not None)
