"""GGEMM: grouped GEMM kernels for NVIDIA Hopper, compiled with MLIR.

On torch tensors: :func:`segment_matmul` (ragged row segments, MoE
experts), :func:`masked_matmul` (a device-side row count per group),
:func:`batched_matmul` and the K-ragged weight gradient
:func:`segment_matmul_k` (:func:`segment_matmul` also gathers rows of x,
scatters or atomically adds rows of y and fuses SwiGLU, with
:func:`sort_by_expert` for the MoE routing, :func:`quantize` for FP8
activations and weights with the GEMMs' block scales, and
:func:`interleave_gate_up` for the interleaved gate/up weight layout);
each builds its kernel from
the tensors' dtypes and sizes, compiles it once (or takes it from a
prebuilt catalog, see :mod:`ggemm.catalog`) and launches on the current
stream. Drop-in replacements of FlashInfer, DeepGEMM, megablox, aiter and
FlagGems entry points live in :mod:`ggemm.compat`; the expert-parallel
bookkeeping of an MoE layer (which rank holds which experts and rows) in
:mod:`ggemm.expert_parallel`.

Lower down, :func:`compile_bundles` compiles ggemm IR to kernel bundles
through the compiler's C API and :class:`Kernel` launches a bundle.

Example::

    import torch, ggemm
    x = torch.randn(9000, 7168, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(8, 4096, 7168, device="cuda", dtype=torch.bfloat16)
    seg_indptr = torch.tensor([0, 1000, 1000, 3000, 5000, 5001, 7000, 8000,
                               9000], device="cuda", dtype=torch.int32)
    y = ggemm.segment_matmul(x, w, seg_indptr, activation="silu")
"""

from .cache import (
    CatalogMissError,
    clear_memory_cache,
    compile_options,
    set_compile_options,
)
from .compiler import CompilerError, compile_bundles, run_pipeline
from .ops import (
    ArgumentError,
    NotLoweredError,
    batched_matmul,
    masked_matmul,
    segment_matmul,
    segment_matmul_k,
)
from .layout import deinterleave_gate_up, interleave_gate_up
from . import expert_parallel  # noqa: F401  (ggemm.expert_parallel.*)
from .problem import (Problem, QuantizeProblem, RoutingProblem, SpecError,
                      TileConfig)
from .quantization import quantize
from .routing import Routing, sort_by_expert
from .runtime import (
    DType,
    GGemmError,
    Kernel,
    RuntimeLibraryNotFound,
    Status,
    load_library,
)

try:
    import torch as _torch  # noqa: F401
except ImportError:
    pass
else:
    from . import torch_ops  # noqa: F401  (registers torch.ops.ggemm.*)

__all__ = [
    "ArgumentError",
    "CatalogMissError",
    "CompilerError",
    "DType",
    "GGemmError",
    "Kernel",
    "NotLoweredError",
    "Problem",
    "QuantizeProblem",
    "Routing",
    "RoutingProblem",
    "RuntimeLibraryNotFound",
    "SpecError",
    "Status",
    "TileConfig",
    "batched_matmul",
    "clear_memory_cache",
    "compile_bundles",
    "compile_options",
    "deinterleave_gate_up",
    "interleave_gate_up",
    "load_library",
    "masked_matmul",
    "quantize",
    "run_pipeline",
    "segment_matmul",
    "segment_matmul_k",
    "set_compile_options",
    "sort_by_expert",
]
