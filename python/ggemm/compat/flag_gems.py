"""FlagGems' block-scaled FP8 bmm on ``ggemm.batched_matmul``.

Example::

    from ggemm.compat.flag_gems import w8a8_block_fp8_bmm
    z = w8a8_block_fp8_bmm(x, y, xs, ys)   # x [B, M, K], y [B, N, K] e4m3
"""

from __future__ import annotations

from typing import Any, List

from .. import ops
from . import ArgumentError, NotLoweredError

__all__ = ["w8a8_block_fp8_bmm"]


def _packed(t: Any) -> bool:
    return t.shape[0] <= 1 or t.shape[1] == 0 or \
        t.stride(0) == t.shape[1] * t.stride(1)


def w8a8_block_fp8_bmm(x: Any, y: Any, xs: Any, ys: Any,
                       block_size: List[int] = [128, 128],  # noqa: B006
                       z: Any = None, output_dtype: Any = None) -> Any:
    """``z[b] = (x[b] * xs[b]) @ (y[b] * ys[b])ᵀ``: ``x`` ``[B, M, K]`` and
    ``y`` ``[B, N, K]`` e4m3, ``xs`` ``[B, M, K/128]`` and ``ys`` ``[B,
    N/128, K/128]`` f32. ``block_size`` must be ``[128, 128]``. An ``x``
    whose batches are not packed (e.g. ``[M, B, K]`` seen through
    ``transpose(0, 1)``) is copied first, as FlagGems does; ``xs`` is copied
    MN-major unless it already is; a ``z`` whose batches are not packed
    gets the result through a copy. ``output_dtype`` defaults to bf16."""
    if list(block_size) != [128, 128]:
        raise NotLoweredError(f"block_size: only [128, 128] is lowered yet, "
                              f"got {list(block_size)}")
    if x.dim() != 3:
        raise ArgumentError(f"x: expected [B, M, K], got shape "
                            f"{list(x.shape)}")
    if not _packed(x):
        x = x.contiguous()
    if output_dtype is None and z is None:
        output_dtype = "bf16"
    if z is not None and not _packed(z):
        if z.dim() != 3:
            raise ArgumentError(f"z: expected [B, M, N], got shape "
                                f"{list(z.shape)}")
        z.copy_(ops.batched_matmul(x, y, x_scale=xs, w_scale=ys,
                                   out_dtype=output_dtype))
        return z
    return ops.batched_matmul(x, y, x_scale=xs, w_scale=ys, out=z,
                              out_dtype=output_dtype)
