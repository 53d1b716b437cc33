"""GGEMM: grouped GEMM kernels for NVIDIA Hopper, compiled with MLIR.

This seed holds the runtime bindings: :class:`Kernel` loads a kernel bundle
written by the compiler and launches it on PyTorch (or tensor-like) objects.

Example::

    import ggemm

    kernel = ggemm.Kernel("bundles/segment_bf16.json")
    kernel(x=x, w=w, y=y, seg_indptr=seg_indptr)
"""

from .runtime import (
    DType,
    GGemmError,
    Kernel,
    RuntimeLibraryNotFound,
    Status,
    load_library,
)

__all__ = [
    "DType",
    "GGemmError",
    "Kernel",
    "RuntimeLibraryNotFound",
    "Status",
    "load_library",
]
