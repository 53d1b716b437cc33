"""FlagGems' block-scaled FP8 bmm: raises until GGEMM's FP8 path lands.

Example::

    from ggemm.compat.flag_gems import w8a8_block_fp8_bmm
"""

from __future__ import annotations

from typing import Any, List

from . import not_lowered

__all__ = ["w8a8_block_fp8_bmm"]


def w8a8_block_fp8_bmm(x: Any, y: Any, xs: Any, ys: Any,
                       block_size: List[int] = [128, 128],  # noqa: B006
                       output_dtype: Any = None) -> Any:
    raise not_lowered("w8a8_block_fp8_bmm", "FP8 (e4m3) operands with "
                      "1x128 / 128x128 block scales (ggemm.batched_matmul "
                      "with scales)")
