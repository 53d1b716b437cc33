"""FlashInfer's segment GEMM (``flashinfer.gemm``) on GGEMM.

Example::

    from ggemm.compat.flashinfer import SegmentGEMMWrapper
    wrapper = SegmentGEMMWrapper(torch.empty(1, device="cuda"))
    y = wrapper.run(x, weights, batch_size=4, weight_column_major=True,
                    seg_lens=torch.tensor([1, 2, 3, 4], device="cuda"))
"""

from __future__ import annotations

from typing import Any

from .. import ops
from . import ArgumentError, not_lowered

__all__ = ["SegmentGEMMWrapper", "bmm_fp8"]


class SegmentGEMMWrapper:
    """``flashinfer.gemm.SegmentGEMMWrapper``. ``float_workspace_buffer``
    is accepted and unused (GGEMM's kernels need no workspace);
    ``backend`` must be ``"auto"`` or absent."""

    def __init__(self, float_workspace_buffer: Any, backend: str = "auto"
                 ) -> None:
        if backend != "auto":
            raise ArgumentError(f"backend: only 'auto' (GGEMM's kernel), got "
                                f"{backend!r}")
        self.float_workspace_buffer = float_workspace_buffer

    def reset_workspace_buffer(self, float_workspace_buffer: Any,
                               int_workspace_buffer: Any = None) -> None:
        self.float_workspace_buffer = float_workspace_buffer

    def run(self, x: Any, weights: Any, batch_size: int,
            weight_column_major: bool, out: Any = None, seg_lens: Any = None,
            seg_indptr: Any = None, weight_indices: Any = None) -> Any:
        """``y[seg_i] = x[seg_i] @ W[idx_i]ᵀ`` (``weight_column_major``:
        weights ``[num_weights, d_out, d_in]``) or ``x @ W`` (weights
        ``[num_weights, d_in, d_out]``); segments from ``seg_lens`` or
        ``seg_indptr`` (exactly one of them), ``batch_size`` of them.
        Returns ``[x.shape[0], d_out]`` in x's dtype."""
        if (seg_lens is None) == (seg_indptr is None):
            raise ArgumentError("seg_lens, seg_indptr: pass exactly one")
        torch = ops._require_torch()
        if seg_lens is not None:
            if tuple(seg_lens.shape) != (batch_size,):
                raise ArgumentError(f"seg_lens: expected shape "
                                    f"[{batch_size}] (batch_size), got "
                                    f"{list(seg_lens.shape)}")
            seg_indptr = torch.zeros(batch_size + 1, dtype=seg_lens.dtype,
                                     device=seg_lens.device)
            seg_indptr[1:] = torch.cumsum(seg_lens, 0)
        elif tuple(seg_indptr.shape) != (batch_size + 1,):
            raise ArgumentError(f"seg_indptr: expected shape "
                                f"[{batch_size + 1}] (batch_size + 1), got "
                                f"{list(seg_indptr.shape)}")
        return ops.segment_matmul(
            x, weights, seg_indptr, weight_indices=weight_indices,
            weight_layout="nk" if weight_column_major else "kn", out=out)


def bmm_fp8(A: Any, B: Any, A_scale: Any, B_scale: Any, dtype: Any,
            out: Any = None, backend: str = "cublas") -> Any:
    """``flashinfer.bmm_fp8``: not available until the FP8 path lands."""
    raise not_lowered("bmm_fp8", "FP8 (e4m3/e5m2) operands with tensor-wise "
                      "scales (the FP8 path of ggemm.batched_matmul)")
