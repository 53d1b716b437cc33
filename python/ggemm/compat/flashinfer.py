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
from . import ArgumentError, NotLoweredError

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
    """``flashinfer.bmm_fp8``: ``out[b] = (A[b] @ B[b]) * A_scale *
    B_scale`` in ``dtype`` (torch.bfloat16 or torch.float16), through
    ``ggemm.batched_matmul`` with tensor-wise scales.

    ``A``: ``[b, m, k]`` float8_e4m3fn (or both A and B float8_e5m2;
    e4m3 with e5m2 is not lowered); ``B``: ``[b, k, n]`` float8_e4m3fn,
    column-major as FlashInfer wants it (``B.transpose(-2, -1)`` contiguous:
    wgmma reads FP8 operands K-major, and GGEMM makes no copy); ``A_scale``
    and ``B_scale``: one f32 each (shape ``[]`` or ``[1]``; a ``[b]``
    ``B_scale`` scales each batch). ``out``: ``[b, m, n]`` of ``dtype``.
    ``backend`` is accepted and ignored (GGEMM's kernel runs).

    Example::

        y = bmm_fp8(a_fp8, b_fp8.transpose(-2, -1), a_scale, b_scale,
                    torch.bfloat16)
    """
    kinds = {ops.dtype_name(t) for t in (A, B) if hasattr(t, "dtype")}
    if kinds == {"f8e4m3", "f8e5m2"}:
        raise NotLoweredError("A, B: e4m3 with e5m2 is not lowered yet "
                              "(GGEMM's FP8 ops take one type for both "
                              "operands); pass both as torch.float8_e4m3fn "
                              "or both as torch.float8_e5m2")
    if not hasattr(B, "transpose") or getattr(B, "dim", lambda: 0)() != 3:
        raise ArgumentError(f"B: expected a [b, k, n] tensor, got "
                            f"{getattr(B, 'shape', type(B).__name__)}")
    w = B.transpose(-2, -1)
    if not w.is_contiguous():
        raise ArgumentError("B: expected a column-major [b, k, n] tensor "
                            "(B.transpose(-2, -1) contiguous, as FlashInfer "
                            "requires): GGEMM's FP8 kernels read B K-major; "
                            "pass B.transpose(-2, -1).contiguous()"
                            ".transpose(-2, -1)")
    out_dtype = ops._out_dtype_name(dtype)
    if out_dtype not in ("bf16", "f16"):
        raise ArgumentError(f"dtype: expected torch.bfloat16 or "
                            f"torch.float16 (bmm_fp8's outputs), got {dtype}")
    for name, scale in (("A_scale", A_scale), ("B_scale", B_scale)):
        shape = tuple(getattr(scale, "shape", ()))
        allowed = [(), (1,)]
        if name == "B_scale":
            allowed.append(tuple(A.shape[:1]))
        if shape not in allowed:
            raise ArgumentError(f"{name}: expected one f32 scale (shape [] "
                                f"or [1]), got shape {list(shape)}")
    return ops.batched_matmul(A, w, out=out, out_dtype=dtype,
                              x_scale=A_scale, w_scale=B_scale)
