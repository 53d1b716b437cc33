"""DeepGEMM's BF16 grouped GEMMs, its FP8 (``gemm_fp8_fp8_bf16_nt``
family) GEMMs and its SM90 FP8 K-grouped weight gradient
(``k_grouped_fp8_gemm_nt_contiguous``) on GGEMM; the newer FP8 names
(``fp8_gemm_nt`` ...) raise.

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
  ``ggemm.segment_matmul_k``. FP8 (``k_grouped_fp8_gemm_nt_contiguous``,
  DeepGEMM's SM90 form): ``a`` and ``b`` K-major, each group's ``[m,
  ks[g]]`` / ``[n, ks[g]]`` block back to back, with 1x128 scales along K;
  ``ggemm.segment_matmul_k`` with ``transposed=True`` after one copy that
  puts the blocks side by side. The MN-major FP8 form
  (``k_grouped_fp8_gemm_tn_contiguous``) raises
  :class:`ggemm.NotLoweredError`.
- masked layout: ``a`` ``[G, Mmax, K]``, ``masked_m`` ``[G]``;
  ``expected_m`` is a tuning hint DeepGEMM uses to choose tiles; GGEMM
  passes it to the runtime, which launches the matching variant of a
  kernel compiled with several (0: no hint).

Example::

    from ggemm.compat import deep_gemm
    deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, m_indices)
"""

from __future__ import annotations

import math
from typing import Any, List

from .. import ops
from . import ArgumentError, NotLoweredError, not_lowered

__all__ = [
    "bf16_gemm_nt", "bf16_gemm_nn", "m_grouped_bf16_gemm_nt_contiguous",
    "m_grouped_bf16_gemm_nn_contiguous", "m_grouped_bf16_gemm_nt_masked",
    "segments_from_m_indices", "k_grouped_tokens_innermost",
    "gemm_fp8_fp8_bf16_nt",
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


_FP8_KRAGGED_TN = ("FP8 K-ragged with MN-major operands (a [sum(ks), m], b "
                   "[sum(ks), n]; wgmma's FP8 forms read K-major ones: "
                   "k_grouped_fp8_gemm_nt_contiguous takes that layout)")


def k_grouped_fp8_gemm_tn_contiguous(a: Any, b: Any, d: Any, ks: Any,
                                     ks_tensor: Any, c: Any = None,
                                     **kwargs: Any) -> None:
    raise not_lowered("k_grouped_fp8_gemm_tn_contiguous", _FP8_KRAGGED_TN)


#: DeepGEMM's SM90 K-grouped FP8 recipe: 1x128 scales along K (the
#: tokens) on both operands, the only one the FP8 K-ragged kernel has.
K_GROUPED_RECIPE = (1, 1, 128)


def _numel(tensor: Any) -> int:
    return math.prod(int(extent) for extent in tensor.shape)


def _k_sizes(ks: Any, groups: int) -> List[int]:
    """``ks``, the host list of each group's K (tokens)."""
    if ks is None or hasattr(ks, "device") or hasattr(ks, "__dlpack__"):
        raise ArgumentError(
            f"ks: expected the host list of the {groups} group sizes (as "
            f"DeepGEMM takes it: it locates each group's block of a and "
            f"b), got {'None' if ks is None else type(ks).__name__}; the "
            f"device tensor goes in ks_tensor")
    try:
        sizes = [int(v) for v in ks]
    except (TypeError, ValueError):
        raise ArgumentError(f"ks: expected a list of ints, got "
                            f"{ks!r}") from None
    if len(sizes) != groups:
        raise ArgumentError(f"ks: {len(sizes)} sizes for {groups} groups of "
                            f"d")
    if any(size < 0 for size in sizes):
        raise ArgumentError(f"ks: sizes must be non-negative, got {sizes}")
    return sizes


def _k_grouped_operand(name: str, pair: Any, rows: int, what: str,
                       total: int) -> "tuple[Any, Any]":
    """One (data, scales) operand of the K-grouped FP8 GEMM: e4m3 data
    holding ``total * rows`` elements (each group's ``[rows, ks[g]]``
    block, row-major, back to back), contiguous; f32 scales ``[rows,
    ceil(total/128)]``."""
    data, scale = _fp8_pair(name, pair)
    if not hasattr(data, "dtype") or not hasattr(data, "shape"):
        raise ArgumentError(f"{name}: expected a tensor, got "
                            f"{type(data).__name__}")
    dtype = ops.dtype_name(data)
    if dtype == "f8e5m2":
        raise NotLoweredError(f"{name}: float8_e5m2 operands are not "
                              f"lowered for the GPU (the FP8 K-ragged kernel "
                              f"reads e4m3: torch.float8_e4m3fn)")
    if dtype != "f8e4m3":
        raise ArgumentError(f"{name}: expected torch.float8_e4m3fn data, got "
                            f"{data.dtype}")
    if not data.is_contiguous():
        raise ArgumentError(f"{name}: the data must be contiguous (each "
                            f"group's [{what}, ks[g]] block row-major, the "
                            f"blocks back to back, as DeepGEMM takes it)")
    if _numel(data) != total * rows:
        raise ArgumentError(
            f"{name}: {_numel(data)} elements, expected sum(ks) * {what} = "
            f"{total} * {rows} = {total * rows} (each group's [{what}, "
            f"ks[g]] block, K-major, back to back)")
    blocks = -(-total // ops.KRAGGED_SCALE_BLOCK)
    if not hasattr(scale, "shape") or \
            tuple(scale.shape) != (rows, blocks):
        shape = list(scale.shape) if hasattr(scale, "shape") else None
        hint = (f"; pass the transpose, {name}[1].T (per_channel_cast_to_fp8"
                f" gives [ceil(sum(ks)/128), {what}])"
                if shape == [blocks, rows] else "")
        raise ArgumentError(
            f"{name}: scales of shape [{what}, ceil(sum(ks)/128)] = "
            f"{[rows, blocks]} expected (one f32 per row and 128-token "
            f"block of K, counted from the first group's first token), got "
            f"{shape}{hint}")
    return data, scale


def k_grouped_indptr(ks: List[int], ks_tensor: Any, device: Any) -> Any:
    """The segment offsets ``[0, ks[0], ks[0] + ks[1], ...]`` (int64,
    ``[G + 1]``): the prefix sums of ``ks_tensor`` computed on its device
    (no synchronisation) when given, else built from the host list ``ks``
    (a copy of G + 1 ints to the device)."""
    torch = ops._require_torch()
    groups = len(ks)
    if ks_tensor is None:
        bounds = [0]
        for size in ks:
            bounds.append(bounds[-1] + size)
        return torch.tensor(bounds, dtype=torch.int64, device=device)
    if not hasattr(ks_tensor, "shape") or len(ks_tensor.shape) != 1 or \
            ks_tensor.shape[0] != groups:
        got = (list(ks_tensor.shape) if hasattr(ks_tensor, "shape")
               else repr(ks_tensor))
        raise ArgumentError(f"ks_tensor: expected [{groups}] (one size per "
                            f"group of d), got {got}")
    if ops.dtype_name(ks_tensor) not in ("i32", "i64"):
        raise ArgumentError(f"ks_tensor: expected int32 or int64, got "
                            f"{ks_tensor.dtype}")
    if ks_tensor.device != device:
        raise ArgumentError(f"ks_tensor: on {ks_tensor.device}, but d is on "
                            f"{device}")
    seg_indptr = torch.zeros(groups + 1, dtype=torch.int64, device=device)
    seg_indptr[1:] = torch.cumsum(ks_tensor, 0, dtype=torch.int64)
    return seg_indptr


def k_grouped_tokens_innermost(data: Any, rows: int, ks: List[int]) -> Any:
    """DeepGEMM's K-major K-grouped FP8 operand as one ``[rows, T]``
    matrix, the tokens innermost (``T = sum(ks)``; group g's tokens in
    columns ``[s_g, s_{g+1})``), the layout ``ggemm.segment_matmul_k``
    takes with ``transposed=True``. ``data`` holds each group's ``[rows,
    ks[g]]`` block row-major, the blocks back to back.

    A view when at most one group has tokens and T is a multiple of 16
    (that block is the matrix); otherwise one copy, the blocks side by
    side (``torch.cat`` of their bytes: one read and one write of ``rows
    T`` bytes), its rows padded to a multiple of 16 bytes (TMA's row step)
    and returned as the view of the first T columns.

    Example::

        >>> # ks = [2, 1], rows = 2: data = [a00 a01 a10 a11 | b00 b10]
        >>> # -> [[a00, a01, b00], [a10, a11, b10]]
    """
    torch = ops._require_torch()
    total = sum(ks)
    flat = data.reshape(-1)
    padded = -(-total // 16) * 16
    if sum(1 for size in ks if size) <= 1 and padded == total:
        return flat.reshape(rows, total)
    raw = flat.view(torch.uint8)
    pieces, offset = [], 0
    for size in ks:
        if size:
            pieces.append(raw[offset:offset + rows * size].reshape(rows,
                                                                    size))
        offset += rows * size
    if padded != total:
        pieces.append(torch.zeros((rows, padded - total), dtype=torch.uint8,
                                  device=data.device))
    return torch.cat(pieces, dim=1).view(data.dtype)[:, :total]


def k_grouped_fp8_gemm_nt_contiguous(a: Any, b: Any, d: Any, ks: Any,
                                     ks_tensor: Any = None, c: Any = None,
                                     recipe: Any = K_GROUPED_RECIPE,
                                     compiled_dims: str = "mn",
                                     use_psum_layout: bool = False) -> None:
    """DeepGEMM's SM90 K-grouped FP8 weight gradient: ``d[g] = c[g] +
    (a_g * sfa_g) @ (b_g * sfb_g)ᵀ`` for each group ``g`` of ``ks[g]``
    tokens (K), on ``ggemm.segment_matmul_k`` (``transposed=True``).

    - ``a = (data, sf)``: data e4m3, contiguous, ``sum(ks) * M`` elements:
      each group's ``[M, ks[g]]`` block (K-major: the tokens innermost)
      row-major, the blocks back to back (DeepGEMM's layout: a 1-D tensor
      in its tests); sf f32 ``[M, ceil(sum(ks)/128)]``, ``sf[i, t // 128]``
      the scale of row i at token t (t counted over all groups), in any
      strides (DeepGEMM's tests pass ``per_channel_cast_to_fp8(...)[1].T``,
      which is MN-major: no copy; others are copied MN-major, as
      DeepGEMM's own ``get_mn_major_tma_aligned_tensor`` does).
    - ``b = (data, sf)``: the same with N rows.
    - ``d``: ``[G, M, N]``, float32 as in DeepGEMM (bf16/fp16 also taken),
      contiguous.
    - ``ks``: the host list of the group sizes (required, as in DeepGEMM:
      it locates the blocks); ``ks_tensor``: the same sizes, int32/int64
      ``[G]`` on d's device, whose prefix sums (on the device, no
      synchronisation) are the segments; without it they are copied from
      ``ks``. Its values are not checked against ``ks`` (that would read
      it on the host).
    - ``c``: ``c is d`` (or the same storage) accumulates in place; another
      tensor ``[G, M, N]`` is copied into d first; None (DeepGEMM requires
      c) writes ``d[g] = a_g b_gᵀ``. An empty group gives zeros (``c[g]``
      with c).
    - ``recipe``: ``(1, 1, 128)`` only; ``compiled_dims`` is unused;
      ``use_psum_layout=True`` raises.

    DeepGEMM needs every ``ks[g]`` to be a multiple of 128; GGEMM does
    not: the 128-token scale blocks are then counted over the
    concatenated tokens (``sf[:, t // 128]``), a block may span two groups
    and the kernel masks the other group's tokens. The blocks are put side
    by side in one ``[M, T]`` (and ``[N, T]``) copy first
    (:func:`k_grouped_tokens_innermost`: one read and one write of ``(M +
    N) sum(ks)`` bytes; none when one group has every token); a caller
    that has the operands with the tokens innermost already can call
    ``ggemm.segment_matmul_k(b, a, seg_indptr, transposed=True, ...)``
    itself.

    Example::

        deep_gemm.k_grouped_fp8_gemm_nt_contiguous(
            (a_data, a_sf), (b_data, b_sf), d, ks, ks_tensor, c=d)
    """
    _compiled_dims(compiled_dims)
    if use_psum_layout:
        raise ArgumentError("use_psum_layout: not supported (DeepGEMM's "
                            "SM90 FP8 K-grouped GEMM has none either); pass "
                            "the group sizes as ks and ks_tensor")
    try:
        chosen = tuple(int(v) for v in recipe)
    except (TypeError, ValueError):
        chosen = None
    if chosen != K_GROUPED_RECIPE:
        raise ArgumentError(f"recipe: expected (1, 1, 128) (1x128 scales "
                            f"along K on both operands, DeepGEMM's SM90 "
                            f"K-grouped recipe and the only one GGEMM's FP8 "
                            f"K-ragged kernel has), got {recipe!r}")
    if not hasattr(d, "shape") or len(d.shape) != 3:
        raise ArgumentError(f"d: expected [G, M, N], got shape "
                            f"{list(getattr(d, 'shape', [])) or d!r}")
    groups, m, n = (int(v) for v in d.shape)
    sizes = _k_sizes(ks, groups)
    total = sum(sizes)
    a_data, a_scale = _k_grouped_operand("a", a, m, "M", total)
    b_data, b_scale = _k_grouped_operand("b", b, n, "N", total)
    if c is not None and (not hasattr(c, "shape") or
                          tuple(c.shape) != tuple(d.shape)):
        raise ArgumentError(f"c: expected shape {list(d.shape)} like d, got "
                            f"{list(getattr(c, 'shape', [])) or c!r}")
    seg_indptr = k_grouped_indptr(sizes, ks_tensor, d.device)
    if m == 0 or n == 0 or groups == 0:
        if c is not None and c.data_ptr() != d.data_ptr():
            d.copy_(c)
        return
    dy = k_grouped_tokens_innermost(a_data, m, sizes)
    x = k_grouped_tokens_innermost(b_data, n, sizes)
    # Every check of the launch before d is written (c copied into it).
    ops.plan_segment_matmul_k(x, dy, seg_indptr, transposed=True,
                              x_scale=b_scale, dy_scale=a_scale, out=d,
                              accumulate=c is not None, build=False)
    if c is not None and c.data_ptr() != d.data_ptr():
        d.copy_(c)
    ops.segment_matmul_k(x, dy, seg_indptr, transposed=True,
                         x_scale=b_scale, dy_scale=a_scale, out=d,
                         accumulate=c is not None)


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
