"""GGEMM: grouped GEMM kernels for NVIDIA Hopper, compiled with MLIR.

:func:`compile_bundles` compiles ggemm IR to kernel bundles through the
compiler's C API (the registered ``ggemm-to-ptx`` pipeline, cached on disk);
:class:`Kernel` loads a bundle and launches it on PyTorch (or tensor-like)
objects through the CUDA runtime.

Example::

    import ggemm

    kernel = ggemm.Kernel("bundles/segment_bf16.json")
    kernel(x=x, w=w, y=y, seg_indptr=seg_indptr)
"""

from .compiler import CompilerError, compile_bundles, run_pipeline
from .runtime import (
    DType,
    GGemmError,
    Kernel,
    RuntimeLibraryNotFound,
    Status,
    load_library,
)

__all__ = [
    "CompilerError",
    "compile_bundles",
    "run_pipeline",
    "DType",
    "GGemmError",
    "Kernel",
    "RuntimeLibraryNotFound",
    "Status",
    "load_library",
]
