"""Drop-in replacements of the entry points of the kernels GGEMM replaces,
each with its peer's signature and semantics.

- :mod:`ggemm.compat.flashinfer`: ``SegmentGEMMWrapper``, ``bmm_fp8``;
- :mod:`ggemm.compat.deep_gemm`: ``bf16_gemm_nt``,
  ``m_grouped_bf16_gemm_nt_contiguous`` / ``_masked``,
  ``k_grouped_bf16_gemm_tn_contiguous``,
  ``k_grouped_fp8_gemm_nt_contiguous`` and the other FP8 names;
- :mod:`ggemm.compat.megablox` (also :mod:`ggemm.compat.ejkernel`): ``gmm``,
  ``tgmm``;
- :mod:`ggemm.compat.aiter`: ``batched_gemm``, ``gemm_bias``, ``gemm_gelu``,
  ``gemm_relu``, ``cutlass_gemm``, ``int8_gemm``, ``grouped_gemm``;
- :mod:`ggemm.compat.flag_gems`: ``w8a8_block_fp8_bmm``.

An argument GGEMM cannot honour raises :class:`ggemm.ArgumentError` naming
it; an entry point whose compiler path is not there yet (some FP8 forms,
FP8 K-ragged with MN-major operands) raises :class:`ggemm.NotLoweredError`
naming what is missing. Nothing computes something else silently.

Example::

    from ggemm.compat.flashinfer import SegmentGEMMWrapper
    y = SegmentGEMMWrapper(workspace).run(x, w, batch_size, True,
                                          seg_lens=seg_lens)
"""

from ..ops import ArgumentError, NotLoweredError

__all__ = ["ArgumentError", "NotLoweredError", "not_lowered"]


def not_lowered(entry: str, missing: str) -> NotLoweredError:
    """The error of an entry point whose compiler path is missing."""
    return NotLoweredError(f"{entry}: needs {missing}, which GGEMM does not "
                           f"lower yet")
