"""FP8 quantisation on the device: bf16/f16 to e4m3 with the block scales
the FP8 GEMMs read (DeepGEMM's ``per_token_cast_to_fp8`` and
``per_block_cast_to_fp8``).

For each scale block (``block=(1, 128)``: one row and 128 columns of K,
activations; ``(128, 128)``: 128 rows and 128 columns, weights; the last
block of rows may be partial), in f32::

    amax  = max(max |x| over the block, 1e-4)
    scale = amax * f32(1 / 448)                  # torch's amax / 448 on CUDA
    q     = e4m3(x * (reciprocal(amax) * 448))   # nearest even, saturating

operation for operation as DeepGEMM's torch code on the GPU (its
``448 / amax`` is torch's reciprocal then a product, and torch divides a
CUDA tensor by a scalar as a product with the scalar's f32 reciprocal), so
all paths give the same bytes. The
1e-4 floor keeps an all-zero block finite (its bytes are 0). K must be a
multiple of 128.

:func:`quantize` returns ``(q, scales)`` in the layouts the GEMM ops take
without a copy:

- ``(1, 128)``, x ``[M, K]``: scales ``[M, K / 128]`` MN-major, rows
  contiguous and the K-block stride M rounded up to 4
  (``torch.empty(K / 128, M_pad).t()[:M]``, :func:`ggemm.ops.mn_major_scales`'s
  layout);
- ``(128, 128)``, w ``[N, K]`` or ``[G, N, K]``: scales
  ``[(G,) ceil(N / 128), K / 128]`` row-major.

Three computations (``method=``): ``"kernel"``, GGEMM's quantize kernel
(the ``ggemm.quantize`` op; built per (x's dtype, block, rank) through the
compile cache or a catalog, ``catalog=`` or ``$GGEMM_CATALOG``, every size
dynamic) on x's device and current stream; ``"torch"``, the formula above
in torch ops on x's device; NumPy arrays take the same formula on the host
(q as the uint8 bit patterns of e4m3, row-major scales). ``"auto"`` takes
the kernel for CUDA bf16/f16 tensors (torch's path while ``torch.compile``
traces), NumPy for NumPy arrays, torch's path otherwise.

Example::

    xq, xs = ggemm.quantize(x)                       # x [M, 7168] bf16
    wq, ws = ggemm.quantize(w, block=(128, 128))     # w [G, N, 7168]
    y = ggemm.segment_matmul(xq, wq, seg_indptr, x_scale=xs, w_scale=ws)
"""

from __future__ import annotations

import struct
import sys
from typing import Any, Optional, Tuple

from .cache import kernel_for
from .ops import ArgumentError, dtype_name
from .problem import QuantizeProblem

__all__ = ["BLOCKS", "FP8_MAX", "METHODS", "quantize"]

#: The values of ``quantize``'s ``method``.
METHODS = ("auto", "kernel", "torch")
#: The scale blocks, as ``block=`` takes them.
BLOCKS = ((1, 128), (128, 128))
#: The largest finite e4m3 value.
FP8_MAX = 448.0
#: The floor of a block's absolute maximum (DeepGEMM's ``clamp(1e-4)``).
AMAX_FLOOR = 1e-4
#: 1 / 448 rounded to f32: a block's scale is ``amax * SCALE_OF_AMAX``,
#: which is what torch computes for ``amax / 448`` on a CUDA tensor (a
#: product with the divisor's f32 reciprocal; a true division differs in
#: the last bit for about half of the blocks).
SCALE_OF_AMAX = struct.unpack("<f", struct.pack("<f", 1 / FP8_MAX))[0]


def _is_numpy(array: Any) -> bool:
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(array, numpy.ndarray)


def _block_name(block: Tuple[int, int]) -> str:
    return f"{block[0]}x{block[1]}"


def _check_arguments(x: Any, block: Any, method: str) -> Tuple[int, int]:
    """The block as a tuple, after checking every argument."""
    if method not in METHODS:
        raise ArgumentError(f"method: expected one of "
                            f"{', '.join(repr(m) for m in METHODS)}, got "
                            f"{method!r}")
    try:
        block = tuple(block)
    except TypeError:
        block = None
    if block not in BLOCKS:
        raise ArgumentError(f"block: expected (1, 128) or (128, 128), got "
                            f"{block!r}")
    shape = tuple(getattr(x, "shape", ()))
    ranks = (2,) if block == (1, 128) else (2, 3)
    if len(shape) not in ranks:
        layout = ("[M, K]" if block == (1, 128)
                  else "[N, K] or [G, N, K]")
        raise ArgumentError(f"x: expected {layout} for block {block}, got "
                            f"shape {list(shape)}")
    if shape[-1] % 128:
        raise ArgumentError(f"x: K = {shape[-1]} is not a multiple of 128 "
                            f"(one scale per 128 columns); pad K with zeros")
    dtype = dtype_name(x) if not _is_numpy(x) else str(x.dtype)
    allowed = ("float16", "float32") if _is_numpy(x) else ("bf16", "f16")
    if dtype not in allowed:
        raise ArgumentError(f"x: expected {' or '.join(allowed)}, got "
                            f"{getattr(x, 'dtype', type(x).__name__)}")
    return block


def _kernel_refusal(x: Any) -> Optional[str]:
    if _is_numpy(x):
        return "x: method='kernel' needs a CUDA tensor, got a NumPy array"
    if not getattr(x, "is_cuda", False):
        return (f"x: method='kernel' needs a CUDA tensor, got device "
                f"{getattr(x, 'device', 'cpu')}")
    return None


def _scale_buffer(torch: Any, shape: Tuple[int, ...], block: Tuple[int, int],
                  device: Any) -> Any:
    """The scales of x of `shape` in the layout the GEMM reads."""
    rows, blocks = -(-shape[-2] // block[0]), shape[-1] // 128
    if block == (1, 128):
        pad = -(-max(rows, 1) // 4) * 4
        return torch.empty(blocks, pad, dtype=torch.float32,
                           device=device).t()[:rows]
    return torch.empty(*shape[:-2], rows, blocks, dtype=torch.float32,
                       device=device)


def _quantize_torch(torch: Any, x: Any, block: Tuple[int, int],
                    q: Any, scales: Any) -> None:
    """The formula of the module's docstring in torch ops, into `q` and
    `scales` (any layout)."""
    *lead, rows, k = x.shape
    br = block[0]
    padded = -(-rows // br) * br
    xf = x.float()
    if padded != rows:  # zeros do not change a block's maximum
        xf = torch.nn.functional.pad(xf, (0, 0, 0, padded - rows))
    view = xf.reshape(*lead, padded // br, br, k // 128, 128)
    amax = view.abs().amax(dim=(-3, -1)).clamp(min=AMAX_FLOOR)
    scales.copy_(amax * SCALE_OF_AMAX)
    factor = torch.reciprocal(amax) * FP8_MAX
    scaled = view * factor.unsqueeze(-2).unsqueeze(-1)
    scaled = scaled.reshape(*lead, padded, k)[..., :rows, :]
    q.copy_(scaled.clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn))


def _quantize_numpy(x: Any, block: Tuple[int, int]) -> Tuple[Any, Any]:
    """The formula on the host: q as e4m3 bit patterns (uint8), row-major
    scales. Exact: each f32 operation rounds as on the device, and the
    rounding to e4m3 picks the nearest of its 256 values, ties to even."""
    import numpy
    x = numpy.asarray(x, dtype=numpy.float32)
    *lead, rows, k = x.shape
    br = block[0]
    padded = -(-rows // br) * br
    xp = numpy.zeros((*lead, padded, k), dtype=numpy.float32)
    xp[..., :rows, :] = x
    view = xp.reshape(*lead, padded // br, br, k // 128, 128)
    amax = numpy.maximum(numpy.abs(view).max(axis=(-3, -1)),
                         numpy.float32(AMAX_FLOOR))
    scales = (amax * numpy.float32(SCALE_OF_AMAX)).astype(numpy.float32)
    factor = (numpy.float32(1) / amax).astype(numpy.float32) \
        * numpy.float32(FP8_MAX)
    scaled = (view * factor[..., None, :, None]).astype(numpy.float32)
    scaled = scaled.reshape(*lead, padded, k)[..., :rows, :]
    return _e4m3_bits(numpy, scaled), scales


def _e4m3_bits(numpy: Any, values: Any) -> Any:
    """f32 -> e4m3 bit patterns: nearest value, ties to the even code,
    saturating at +-448 (NaN to 0x7f)."""
    codes = numpy.arange(127)
    exponent, mantissa = codes >> 3, codes & 7
    grid = numpy.where(exponent == 0, mantissa * 2.0 ** -9,
                       (1 + mantissa / 8) * 2.0 ** (exponent - 7))
    magnitude = numpy.minimum(numpy.abs(values).astype(numpy.float64),
                              FP8_MAX)
    upper = numpy.clip(numpy.searchsorted(grid, magnitude), 1, 126)
    lower = upper - 1
    below = magnitude - grid[lower]
    above = grid[upper] - magnitude
    pick_upper = (above < below) | ((above == below) & (upper % 2 == 0))
    code = numpy.where(pick_upper, upper, lower)
    code = numpy.where(magnitude == grid[upper], upper, code)
    sign = numpy.signbit(values).astype(numpy.int64) << 7
    bits = (code | sign).astype(numpy.uint8)
    return numpy.where(numpy.isnan(values), numpy.uint8(0x7F), bits)


def quantize(x: Any, *, block: Any = (1, 128), method: str = "auto",
             catalog: Any = None) -> Tuple[Any, Any]:
    """Quantises ``x`` to e4m3 with ``block`` scales: ``(q, scales)`` (see
    the module's docstring for the formula and the layouts).

    ``x``: bf16/f16 ``[M, K]`` for ``block=(1, 128)``, ``[N, K]`` or
    ``[G, N, K]`` for ``(128, 128)``, K a multiple of 128 (a NumPy float16
    or float32 array on the host). ``method``: ``"auto"``, ``"kernel"`` or
    ``"torch"``; ``catalog``: where the kernel comes from, as for the GEMM
    ops.

    Example::

        >>> import numpy as np
        >>> q, s = quantize(np.full((1, 128), 2.0, dtype=np.float32))
        >>> hex(q[0, 0]), s[0, 0] == np.float32(2) * np.float32(1 / 448)
        ('0x7e', True)

    On the GPU, ``xq, xs = ggemm.quantize(x)`` feeds
    ``ggemm.segment_matmul(xq, wq, ..., x_scale=xs, w_scale=ws)``.
    """
    block = _check_arguments(x, block, method)
    if method == "kernel":
        refusal = _kernel_refusal(x)
        if refusal is not None:
            raise ArgumentError(refusal)
    if _is_numpy(x):
        if method == "torch":
            raise ArgumentError("x: method='torch' needs a torch tensor, got "
                                "a NumPy array (method='auto' quantises it "
                                "with NumPy)")
        return _quantize_numpy(x, block)
    from .ops import _require_torch
    torch = _require_torch()
    if method == "auto":
        method = ("kernel" if _kernel_refusal(x) is None
                  and not torch.compiler.is_compiling() else "torch")
    shape = tuple(x.shape)
    scales = _scale_buffer(torch, shape, block, x.device)
    if method == "torch":
        q = torch.empty(shape, dtype=torch.float8_e4m3fn, device=x.device)
        _quantize_torch(torch, x, block, q, scales)
        return q, scales
    problem = QuantizeProblem(dtype_name(x), _block_name(block),
                              rank=len(shape))
    kernel = kernel_for(problem, catalog)
    x = x.contiguous()
    q = torch.empty(shape, dtype=torch.float8_e4m3fn, device=x.device)
    if x.numel():
        kernel.launch({"x": x, "q": q, "scale": scales})
    return q, scales
