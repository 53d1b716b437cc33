"""Grouped matrix products on torch tensors.

Each op reads N, K, G and the dtypes off its tensors, builds the ggemm op for
them (:class:`~ggemm.problem.Problem`), gets the kernel from the cache (memory,
then a catalog or the compiler's disk cache, then a compile: see
:mod:`ggemm.cache`) and launches it on the current CUDA stream without
synchronising. The first call of a new shape family compiles (or loads from
a catalog); later calls cost a dictionary look-up and the launch.

Arguments are checked before anything runs; a wrong one raises
:class:`ArgumentError` naming it. Nothing is converted silently except
exact widenings that the docs of each op list (bias and row_scale to f32,
int64 weight indices to int32).

Under ``torch.compile``, and when an input requires grad, the ops go through
their ``torch.library`` custom ops (``torch.ops.ggemm.*``, see
:mod:`ggemm.torch_ops`), which have fake implementations and, for
``segment_matmul``, autograd (its dW from :func:`segment_matmul_k`, the
K-ragged weight-gradient kernel, whose FP8 form has its custom ops too).
FP8 and INT8 inputs of the forward ops and e4m3 outputs have no custom op
yet: they launch directly.

With ``out_dtype=torch.float8_e4m3fn`` the forward ops return ``(y,
y_scale)``: e4m3 y and its 1x128 scales, computed in the kernel's
epilogue, in the layout the FP8 ops take as ``x`` and ``x_scale``.

Example::

    import torch, ggemm
    x = torch.randn(9000, 7168, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(8, 4096, 7168, device="cuda", dtype=torch.bfloat16)
    seg_indptr = torch.tensor([0, 1000, 1000, 3000, 5000, 5001, 7000, 8000,
                               9000], device="cuda", dtype=torch.int32)
    y = ggemm.segment_matmul(x, w, seg_indptr, activation="silu")
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, NamedTuple, Optional, Tuple

from .cache import kernel_for
from .problem import (ACTIVATIONS, FP8_DTYPES, FP8_OUTPUT_DTYPES,
                      INT8_DTYPES, KRAGGED_FP8_DTYPES, SCALED_DTYPES,
                      Y_SCALE_BLOCK, Problem, TileConfig)
from .runtime import GGemmError

try:  # torch is optional for the package, required by these ops.
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

__all__ = ["ArgumentError", "NotLoweredError", "segment_matmul",
           "masked_matmul", "batched_matmul", "segment_matmul_k",
           "mn_major_scales"]


class ArgumentError(GGemmError, ValueError):
    """An argument of an op is wrong; the message names it."""


class NotLoweredError(GGemmError, NotImplementedError):
    """The request needs a compiler path that does not exist yet; the message
    names the missing op or feature and the issue that adds it."""


_DTYPE_NAMES = {"torch.bfloat16": "bf16", "torch.float16": "f16",
                "torch.float32": "f32", "torch.int32": "i32",
                "torch.int64": "i64", "torch.float8_e4m3fn": "f8e4m3",
                "torch.float8_e5m2": "f8e5m2", "torch.int8": "s8"}
_TORCH_DTYPES = {"bf16": "bfloat16", "f16": "float16", "f32": "float32",
                 "f8e4m3": "float8_e4m3fn"}
_TORCH_DTYPE_NAMES = () if torch is None else (
    (torch.bfloat16, "bf16"), (torch.float16, "f16"), (torch.float32, "f32"),
    (torch.int32, "i32"), (torch.int64, "i64"),
    (torch.float8_e4m3fn, "f8e4m3"), (torch.float8_e5m2, "f8e5m2"),
    (torch.int8, "s8"))
#: Operand dtypes of x and w (s8: torch.int8, INT8 with scales).
_OPERAND_DTYPES = ("bf16", "f16", "f8e4m3", "f8e5m2", "s8")
#: Output dtypes: float ones (every op's), and those of the forward ops,
#: which may also write e4m3 with its 1x128 scales.
_FLOAT_OUT_DTYPES = ("bf16", "f16", "f32")
_Y_DTYPES = _FLOAT_OUT_DTYPES + FP8_OUTPUT_DTYPES
_OTHER_LAYOUT = {"nk": "kn", "kn": "nk"}


def _require_torch() -> Any:
    if torch is None:
        raise GGemmError("ggemm's tensor ops need PyTorch (import torch "
                         "failed); ggemm.Kernel works on any tensor-like "
                         "object without it")
    return torch


def dtype_name(tensor: Any) -> str:
    """``"bf16"``, ``"f16"``, ``"f32"``, ``"i32"``, ``"i64"``,
    ``"f8e4m3"``, ``"f8e5m2"``, ``"s8"`` (``torch.int8``) or the tensor's
    dtype as printed."""
    dtype = tensor.dtype
    if torch is not None and isinstance(dtype, torch.dtype):
        # Comparisons, not str(): torch.compile traces these without a
        # graph break.
        for candidate, name in _TORCH_DTYPE_NAMES:
            if dtype == candidate:
                return name
    text = str(dtype)
    return _DTYPE_NAMES.get(text, text)


def torch_dtype(name: str) -> Any:
    return getattr(_require_torch(), _TORCH_DTYPES[name])


def _out_dtype_name(out_dtype: Any, fp8: bool = False) -> Optional[str]:
    """``out_dtype`` as a dtype name (``None`` stays ``None``); ``fp8``:
    the forward ops' ``torch.float8_e4m3fn`` (``"f8e4m3"``) too."""
    if out_dtype is None:
        return None
    name = out_dtype
    if torch is not None and isinstance(out_dtype, torch.dtype):
        for candidate, known in _TORCH_DTYPE_NAMES:
            if out_dtype == candidate:
                name = known
        if name is out_dtype:  # a stand-in dtype: by its printed name
            name = _DTYPE_NAMES.get(str(out_dtype), out_dtype)
    allowed = _Y_DTYPES if fp8 else _FLOAT_OUT_DTYPES
    if name not in allowed:
        names = ["torch.bfloat16", "torch.float16", "torch.float32"]
        if fp8:
            names.append("torch.float8_e4m3fn")
        raise ArgumentError(f"out_dtype: expected {', '.join(names[:-1])} "
                            f"or {names[-1]}, got {out_dtype}")
    return name


def _check(name: str, tensor: Any, rank: int, dtypes: Tuple[str, ...],
           layout: str, device: Any = None) -> str:
    """Checks a tensor argument's rank, dtype, device and innermost stride;
    returns its dtype name."""
    if not hasattr(tensor, "shape") or not hasattr(tensor, "dtype"):
        raise ArgumentError(f"{name}: expected a tensor, got "
                            f"{type(tensor).__name__}")
    if len(tensor.shape) != rank:
        raise ArgumentError(f"{name}: expected {rank} dimensions {layout}, "
                            f"got shape {list(tensor.shape)}")
    dtype = dtype_name(tensor)
    if dtype not in dtypes:
        raise ArgumentError(f"{name}: expected dtype "
                            f"{' or '.join(dtypes)}, got {tensor.dtype}")
    if not getattr(tensor, "is_cuda", False):
        raise ArgumentError(f"{name}: expected a CUDA tensor, got device "
                            f"{getattr(tensor, 'device', 'unknown')}")
    if device is not None and tensor.device != device:
        raise ArgumentError(f"{name}: on {tensor.device}, but x is on "
                            f"{device}")
    strides = tensor.stride()
    if rank and tensor.shape[-1] > 1 and strides[-1] != 1:
        raise ArgumentError(f"{name}: the last dimension must be contiguous "
                            f"(stride 1), got strides {list(strides)}; pass "
                            f"{name}.contiguous()")
    return dtype


def _check_extent(name: str, tensor: Any, dim: int, expected: int,
                  what: str) -> None:
    if tensor.shape[dim] != expected:
        raise ArgumentError(f"{name}: dimension {dim} ({what}) is "
                            f"{tensor.shape[dim]}, expected {expected}; "
                            f"shape is {list(tensor.shape)}")


def _activation(activation: Optional[str],
                op: str = "segment_matmul") -> str:
    value = "none" if activation is None else activation
    if value not in ACTIVATIONS:
        raise ArgumentError(f"activation: expected None or one of "
                            f"{', '.join(a for a in ACTIVATIONS if a != 'none')}"
                            f", got {activation!r}")
    if value == "swiglu" and op != "segment_matmul":
        raise NotLoweredError(f"activation: 'swiglu' is lowered for "
                              f"segment_matmul only, not {op}; apply it "
                              f"with torch after a product without it")
    return value


#: The largest gate_up_block: a tile of 2B weight rows is at most wgmma's
#: N of 256.
GATE_UP_BLOCK_MAX = 128


def check_gate_up_block(block: Any, n: int) -> int:
    """Checks a ``gate_up_block`` against y's N: a multiple of 8 (the
    kernel pairs gate and up columns within 8-column wgmma fragments) of
    at most 128 that divides N; returns it.

    Example::

        >>> check_gate_up_block(64, 2048)
        64
    """
    if isinstance(block, bool) or not isinstance(block, int):
        raise ArgumentError(f"gate_up_block: expected an int, got "
                            f"{block!r}")
    if block <= 0 or block % 8 or block > GATE_UP_BLOCK_MAX:
        raise ArgumentError(f"gate_up_block: expected a positive multiple "
                            f"of 8 of at most {GATE_UP_BLOCK_MAX} (a tile "
                            f"of 2 * gate_up_block <= 256 weight rows), got "
                            f"{block}")
    if n % block:
        raise ArgumentError(f"gate_up_block: N ({n}, half of w's 2N gate "
                            f"and up rows) must be a multiple of "
                            f"gate_up_block ({block}): the rows come in "
                            f"whole blocks")
    return block


def _gate_up_block(gate_up_block: Any, activation: str, n: int,
                   layout: str) -> int:
    """The weight's gate/up layout: 0 side by side (None or 0), else the
    checked block of an interleaved swiglu weight (:mod:`ggemm.layout`)."""
    if gate_up_block is None or (type(gate_up_block) is int
                                 and gate_up_block == 0):
        return 0
    if activation != "swiglu":
        raise ArgumentError(f"gate_up_block: orders the gate and up rows of "
                            f"a swiglu weight; it needs "
                            f"activation='swiglu', got {activation!r}")
    block = check_gate_up_block(gate_up_block, n)
    if layout == "kn" and block % 32:
        raise ArgumentError(f"gate_up_block: {block} with weight_layout "
                            f"'kn' must be a multiple of 32 (the tile's "
                            f"{2 * block} weight columns are read as whole "
                            f"128-byte boxes)")
    return block


def _layout(weight_layout: str) -> str:
    if weight_layout not in ("nk", "kn"):
        raise ArgumentError(f"weight_layout: expected 'nk' (w is [G, N, K]) "
                            f"or 'kn' (w is [G, K, N]), got {weight_layout!r}")
    return weight_layout


def _config(config: Any) -> Optional[TileConfig]:
    try:
        return TileConfig.from_any(config)
    except GGemmError as error:
        raise ArgumentError(str(error)) from None


def _as_f32(name: str, tensor: Any) -> Any:
    """bias and row_scale are f32 in the kernel: bf16/f16 widen exactly."""
    if dtype_name(tensor) == "f32":
        return tensor
    return tensor.float()


_KEY_FIELDS = ("op", "dtype", "n", "k", "groups", "num_weights", "out_dtype",
               "weight_layout", "index_dtype", "weight_indices", "bias",
               "row_scale", "activation", "accumulate", "config",
               "x_scale_block", "w_scale_block", "row_indices", "scatter",
               "atomic", "gate_up_block", "transposed")


class _Plan(NamedTuple):
    """A checked call: the problem's fields as a tuple (cheap to hash: the
    :class:`Problem`, which validates itself, is built only on a cache
    miss), the tensors by kernel name, the output's shape and dtype, and
    whether there is nothing to launch. A named tuple, which torch.compile
    traces."""

    key: Optional[tuple]
    tensors: Dict[str, Any]
    out_shape: Tuple[int, ...]
    out_dtype: str
    empty: bool

    @property
    def problem(self) -> Optional[Problem]:
        if self.key is None:
            return None
        fields = dict(zip(_KEY_FIELDS, self.key))
        return Problem(**fields)


# (problem fields, catalog argument, $GGEMM_CATALOG) -> loaded Kernel: the
# look-up of every call after the first of a shape family.
_kernels: Dict[tuple, Any] = {}


def _check_out(out: Any, shape: Tuple[int, ...], out_dtype: Optional[str],
               device: Any, accumulate: bool,
               dtypes: Tuple[str, ...] = _FLOAT_OUT_DTYPES) -> str:
    if out is None:
        if accumulate:
            raise ArgumentError("accumulate=True needs out= (the tensor the "
                                "product is added to)")
        return out_dtype
    name = _check("out", out, len(shape), dtypes,
                  "[" + ", ".join(str(s) for s in shape) + "]", device)
    if tuple(out.shape) != tuple(shape):
        raise ArgumentError(f"out: expected shape {list(shape)}, got "
                            f"{list(out.shape)}")
    if out_dtype is not None and out_dtype != name:
        raise ArgumentError(f"out_dtype is {out_dtype} but out is {out.dtype}")
    return name


def _wants_fp8_output(out: Any, out_dtype: Any) -> bool:
    """Whether a call asks for an e4m3 y (``out_dtype`` or ``out``), before
    either is checked."""
    if out is not None and hasattr(out, "dtype") and \
            dtype_name(out) in FP8_OUTPUT_DTYPES:
        return True
    try:
        return _out_dtype_name(out_dtype, fp8=True) in FP8_OUTPUT_DTYPES
    except ArgumentError:
        return False


#: Why an e4m3 output takes no accumulate, atomic adds or scatter.
_FP8_OUTPUT_WHY = ("an e4m3 output (torch.float8_e4m3fn) is quantised from "
                   "the values the epilogue computes, with one scale per "
                   "row and 128 columns")


def _check_fp8_output(accumulate: bool, atomic: bool, scatter_indices: Any,
                      config: Any, activation: str, gate_up_block: int
                      ) -> None:
    """What an e4m3 output cannot be combined with, named by argument
    before anything else is checked (the compiler's limits: no additions
    to y, no scattered rows, tiles of whole 128-column blocks of y)."""
    if accumulate:
        raise ArgumentError(f"accumulate: {_FP8_OUTPUT_WHY}, so nothing is "
                            f"added to out; accumulate into a bf16 or "
                            f"float32 out and quantise it with "
                            f"ggemm.quantize")
    if atomic:
        raise ArgumentError(f"atomic: {_FP8_OUTPUT_WHY}, so nothing is "
                            f"added to out")
    if scatter_indices is not None:
        raise ArgumentError(f"scatter_indices: {_FP8_OUTPUT_WHY}; its rows "
                            f"are the segment rows, not scattered ones")
    tile = _config(config)
    if tile is not None and tile.swap_ab:
        raise ArgumentError("config: swap_ab=True is not available with an "
                            "e4m3 output (each row's block maximum is taken "
                            "in the tile, which a swapped tile does not "
                            "hold)")
    gated = activation == "swiglu"
    columns = None if tile is None else (
        tile.block_n // 2 if gated else tile.block_n)
    if columns is not None and columns % Y_SCALE_BLOCK:
        raise ArgumentError(f"config: block_n = {tile.block_n} makes tiles "
                            f"of {columns} columns of out; an e4m3 output "
                            f"needs whole blocks of {Y_SCALE_BLOCK} (block_n "
                            f"a multiple of "
                            f"{2 * Y_SCALE_BLOCK if gated else Y_SCALE_BLOCK}"
                            f"{' with swiglu' if gated else ''})")
    if gate_up_block and gate_up_block != Y_SCALE_BLOCK:
        raise ArgumentError(f"gate_up_block: {gate_up_block} with an e4m3 "
                            f"output must be {Y_SCALE_BLOCK}: a tile writes "
                            f"gate_up_block columns of out, whole "
                            f"{Y_SCALE_BLOCK}-column blocks")


def _check_out_scale(out_scale: Any, out: Any, out_name: str,
                     lead: Tuple[int, ...], rows: int, n: int,
                     device: Any) -> None:
    """``out_scale``: the scales of an e4m3 ``out`` (and only of one), f32
    ``lead + [M, ceil(N/128)]`` in any strides that give each scale its own
    element, groups M rows apart."""
    if out_name not in FP8_OUTPUT_DTYPES:
        if out_scale is not None:
            raise ArgumentError(f"out_scale: the scales of an e4m3 out "
                                f"(torch.float8_e4m3fn), but the output is "
                                f"{out_name}; pass out_dtype="
                                f"torch.float8_e4m3fn or drop out_scale")
        return
    blocks = -(-n // Y_SCALE_BLOCK)
    shape = lead + (rows, blocks)
    layout = "[G, M, ceil(N/128)]" if lead else "[M, ceil(N/128)]"
    if out is None:
        if out_scale is not None:
            raise ArgumentError("out_scale: needs out= (the e4m3 tensor it "
                                "scales); without out= both are allocated "
                                "and returned")
        return
    if out_scale is None:
        raise ArgumentError(f"out_scale: out is torch.float8_e4m3fn, whose "
                            f"scales the kernel writes too: pass "
                            f"out_scale=, f32 {layout} = {list(shape)} (one "
                            f"per row and 128 columns of out)")
    _scale_tensor("out_scale", out_scale, device)
    if tuple(out_scale.shape) != shape:
        raise ArgumentError(f"out_scale: expected shape {layout} = "
                            f"{list(shape)} (one f32 per row and 128 columns "
                            f"of out), got {list(out_scale.shape)}")
    strides = tuple(out_scale.stride())
    if lead and lead[0] > 1 and rows > 1 and strides[0] != rows * strides[1]:
        raise ArgumentError(f"out_scale: groups must be M = {rows} rows "
                            f"apart (stride(0) == shape[1] * stride(1)), got "
                            f"strides {list(strides)}; allocate it MN-major "
                            f"as torch.empty({blocks}, {lead[0] * rows}).t()"
                            f".view({lead[0]}, {rows}, {blocks}), or "
                            f"contiguous")
    # The rows of all groups, one stride apart; blocks and rows must not
    # share an element (the kernel writes every one).
    total = rows * (lead[0] if lead else 1)
    row_stride = strides[-2] if rows > 1 else (strides[0] if lead else 1)
    block_stride = strides[-1]
    if total > 1 and blocks > 1 and (
            row_stride <= 0 or block_stride <= 0 or
            (row_stride < blocks * block_stride and
             block_stride < total * row_stride)):
        raise ArgumentError(f"out_scale: strides {list(strides)} for shape "
                            f"{list(shape)} may give two scales one element; "
                            f"expected MN-major (stride 1 along the rows, "
                            f"the block stride at least {total}) or "
                            f"row-major scales")


def _y_scale_buffer(out_shape: Tuple[int, ...], zero: bool,
                    device: Any) -> Any:
    """The scales of an e4m3 y of ``out_shape`` (``[M, N]`` or ``[G, M,
    N]``) as the FP8 ops take x_scale, so that the pair feeds the next
    one without a copy: MN-major, the block stride the rows of all groups
    rounded up to 4 (16 bytes, for TMA) — :func:`mn_major_scales`'
    layout. ``zero``: rows the kernel leaves unwritten read 0."""
    *lead, rows, n = out_shape
    blocks = -(-n // Y_SCALE_BLOCK)
    total = rows * (lead[0] if lead else 1)
    pad = -(-max(total, 1) // 4) * 4
    if lead:
        size, strides = (lead[0], rows, blocks), (rows, 1, pad)
    else:
        size, strides = (rows, blocks), (1, pad)
    scale = torch.empty_strided(size, strides, dtype=torch.float32,
                                device=device)
    if zero:
        scale.zero_()
    return scale


def _check_operands(x: Any, x_rank: int, x_shape: str, w: Any,
                    weight_layout: str, x_scale: Any, w_scale: Any):
    """Checks x, w (same dtype and device) and the presence of the FP8 or
    INT8 scales; returns (dtype name, device, layout)."""
    dtype = _check("x", x, x_rank, _OPERAND_DTYPES, x_shape)
    device = x.device
    layout = _layout(weight_layout)
    w_dtype = _check("w", w, 3, _OPERAND_DTYPES,
                     "[G, N, K]" if layout == "nk" else "[G, K, N]", device)
    if w_dtype != dtype:
        raise ArgumentError(f"w: dtype {w.dtype} differs from x's {x.dtype}")
    _check_scaled(dtype, x, layout, x_scale, w_scale)
    return dtype, device, layout


def plan_segment_matmul(x: Any, w: Any, seg_indptr: Any, *,
                        weight_indices: Any = None, weight_layout: str = "nk",
                        bias: Any = None, activation: Optional[str] = None,
                        row_scale: Any = None, accumulate: bool = False,
                        out: Any = None, out_dtype: Any = None,
                        config: Any = None, x_scale: Any = None,
                        w_scale: Any = None, row_indices: Any = None,
                        scatter_indices: Any = None, atomic: bool = False,
                        gate_up_block: Optional[int] = None,
                        out_scale: Any = None, build: bool = True) -> _Plan:
    """Checks the arguments of :func:`segment_matmul` and returns what to
    launch; needs no GPU (tests call it with stand-in tensors). With
    ``build=False`` only checks (the torch.compile path, which launches
    later through the custom op)."""
    dtype, device, layout = _check_operands(x, 2, "[M, K]", w, weight_layout,
                                            x_scale, w_scale)
    x_rows, k = x.shape
    num_weights = w.shape[0]
    w_n = w.shape[1] if layout == "nk" else w.shape[2]
    _check_extent("w", w, 2 if layout == "nk" else 1, k, "K, as x.shape[1]")
    index_dtype = _check("seg_indptr", seg_indptr, 1, ("i32", "i64"),
                         "[G + 1]", device)
    groups = seg_indptr.shape[0] - 1
    if groups < 0:
        raise ArgumentError("seg_indptr: expected G + 1 >= 1 elements, got 0")
    tensors = {"x": x, "w": w, "seg_indptr": seg_indptr}
    if weight_indices is not None:
        index = _check("weight_indices", weight_indices, 1, ("i32", "i64"),
                       "[G]", device)
        _check_extent("weight_indices", weight_indices, 0, groups,
                      "G, as seg_indptr.shape[0] - 1")
        tensors["weight_indices"] = (weight_indices if index == "i32"
                                     else weight_indices.int())
    elif num_weights != groups:
        raise ArgumentError(f"w: {num_weights} weight matrices for {groups} "
                            f"segments; pass weight_indices to choose one "
                            f"per segment")
    # M, the rows the segments index: x's, or row_indices' when gathered.
    rows, rows_are = x_rows, "M, as x.shape[0]"
    if row_indices is not None:
        if dtype in FP8_DTYPES:
            raise NotLoweredError("row_indices: gathered FP8 rows are not "
                                  "lowered yet (which rows of x_scale a "
                                  "gathered row reads is not defined); "
                                  "gather x and x_scale with torch first")
        if dtype in INT8_DTYPES:
            raise ArgumentError("row_indices: expected None with INT8 "
                                "(torch.int8) operands, which take no "
                                "gathered rows; gather x and x_scale with "
                                "torch first")
        _check_indices("row_indices", row_indices, device)
        rows, rows_are = row_indices.shape[0], "M, as row_indices.shape[0]"
        tensors["row_indices"] = row_indices
    act = _activation(activation)
    n = w_n
    if act == "swiglu":
        if w_n % 2:
            raise ArgumentError(
                f"w: activation='swiglu' needs an even N extent (gate rows "
                f"[0, N), then up rows [N, 2N)), got {w_n}; shape is "
                f"{list(w.shape)}")
        n = w_n // 2
    block = _gate_up_block(gate_up_block, act, n, layout)
    tile = _config(config)
    if block and tile is not None and tile.block_n != 2 * block:
        raise ArgumentError(f"config: block_n must be 2 * gate_up_block "
                            f"({2 * block}, one block of gate and up rows "
                            f"a tile), got {tile.block_n}")
    if _wants_fp8_output(out, out_dtype):
        _check_fp8_output(accumulate, atomic, scatter_indices, config, act,
                          block)
    if bias is not None:
        _check("bias", bias, 2, ("bf16", "f16", "f32"), "[G, N]", device)
        _check_extent("bias", bias, 0, num_weights, "weights, as w.shape[0]")
        _check_extent("bias", bias, 1, w_n,
                      "2N, gate and up, as w's N extent" if act == "swiglu"
                      else "N")
        tensors["bias"] = _as_f32("bias", bias)
    if row_scale is not None:
        _check("row_scale", row_scale, 1, ("bf16", "f16", "f32"), "[M]",
               device)
        _check_extent("row_scale", row_scale, 0, rows, rows_are)
        tensors["row_scale"] = _as_f32("row_scale", row_scale)
    scale_blocks = ("", "")
    if dtype in SCALED_DTYPES:
        scale_blocks = _plan_scales(tensors, x_scale, w_scale, None, rows,
                                    w_n, k, num_weights, device, dtype)
    if not isinstance(atomic, bool):
        raise ArgumentError(f"atomic: expected a bool, got {atomic!r}")
    if atomic and scatter_indices is None:
        raise ArgumentError("atomic=True needs scatter_indices (atomic adds "
                            "add the scattered rows onto out, where several "
                            "indices may meet)")
    if atomic and not accumulate:
        raise ArgumentError("atomic=True needs accumulate=True (the atomic "
                            "adds add to out)")
    if scatter_indices is not None:
        _check_indices("scatter_indices", scatter_indices, device)
        _check_extent("scatter_indices", scatter_indices, 0, rows, rows_are)
        tensors["scatter_indices"] = scatter_indices
        out_name = _check_scatter_out(out, n, _out_dtype_name(out_dtype),
                                      device, atomic)
        out_shape = (out.shape[0], n)
    else:
        out_shape = (rows, n)
        out_name = _check_out(out, out_shape,
                              _out_dtype_name(out_dtype, fp8=True), device,
                              accumulate, _Y_DTYPES) or _default_out(dtype)
    _check_out_scale(out_scale, out, out_name, (), rows, n, device)
    empty = rows == 0 or groups == 0 or n == 0 or out_shape[0] == 0
    key = None
    if not empty:
        _check_k_n(k, w_n, layout, dtype, scale_blocks)
    if not empty and build:
        key = ("segment_matmul", dtype, n, k, groups, num_weights, out_name,
               layout, index_dtype, weight_indices is not None,
               bias is not None, row_scale is not None, act,
               bool(accumulate), _config(config)) + scale_blocks + (
                   row_indices is not None, scatter_indices is not None,
                   atomic, block, False)
    return _Plan(key, tensors, out_shape, out_name, empty)


def _check_indices(name: str, tensor: Any, device: Any) -> None:
    """``row_indices`` / ``scatter_indices``: int32 ``[M]``, contiguous, on
    x's device. int64 is an error, not a copy: the kernel reads 32-bit
    indices, and converting on every call would cost a launch and an
    allocation the caller does not see."""
    if hasattr(tensor, "dtype") and dtype_name(tensor) == "i64":
        raise ArgumentError(f"{name}: expected dtype i32 (torch.int32), got "
                            f"{tensor.dtype}; pass {name}.int() (the kernel "
                            f"reads 32-bit indices; no copy is made for you)")
    _check(name, tensor, 1, ("i32",), "[M]", device)


def _check_scatter_out(out: Any, n: int, out_dtype: Optional[str],
                       device: Any, atomic: bool) -> str:
    """``out`` of a scattered call: ``[Y, N]`` with any Y (the rows the
    indices point into), required."""
    if out is None:
        raise ArgumentError(
            "scatter_indices: needs out= (y [Y, N], which the result rows "
            "are scattered into): Y cannot be inferred from the indices "
            "without reading them on the host; pass out=torch.zeros(Y, N) "
            "or the tensor to write into")
    if atomic and hasattr(out, "dtype") and \
            dtype_name(out) not in ("f32", "bf16", "f16"):
        raise ArgumentError(f"atomic=True: out must be float32, bfloat16 or "
                            f"float16 (the dtypes with atomic adds), got "
                            f"{out.dtype}")
    name = _check("out", out, 2, ("bf16", "f16", "f32"), "[Y, N]", device)
    _check_extent("out", out, 1, n, "N")
    if out_dtype is not None and out_dtype != name:
        raise ArgumentError(f"out_dtype is {out_dtype} but out is {out.dtype}")
    return name


def _default_out(dtype: str) -> str:
    """The output dtype without out= or out_dtype=: x's, bf16 for FP8 and
    INT8."""
    return "bf16" if dtype in SCALED_DTYPES else dtype


def _check_scaled(dtype: str, x: Any, layout: str, x_scale: Any,
                  w_scale: Any) -> None:
    """What FP8 and INT8 need and what is not lowered yet, named by
    argument: both scales, ``nk`` weights. INT8's limits are its contract
    (ArgumentError); FP8's ``kn`` is a missing lowering (NotLoweredError)."""
    if dtype not in SCALED_DTYPES:
        for name, scale in (("x_scale", x_scale), ("w_scale", w_scale)):
            if scale is not None:
                raise ArgumentError(f"{name}: scales apply to FP8 "
                                    f"(float8_e4m3fn, float8_e5m2) and "
                                    f"INT8 (int8) "
                                    f"operands only; x is {x.dtype}")
        return
    int8 = dtype in INT8_DTYPES
    if layout != "nk" and int8:
        raise ArgumentError("weight_layout: expected 'nk' with INT8 "
                            "(torch.int8) operands (w as [G, N, K], K "
                            "contiguous), got 'kn'")
    if layout != "nk":
        raise NotLoweredError("weight_layout: 'kn' with FP8 operands is not "
                              "lowered yet; pass w as [G, N, K] "
                              "(weight_layout='nk')")
    if int8:
        needs = (("x_scale", "f32: one for all of x, or one per row"),
                 ("w_scale", "f32: one per weight matrix, or one per output "
                  "channel"))
    else:
        needs = (("x_scale", "f32: one for all of x, one per row, or one "
                  "per row and 128-wide K block"),
                 ("w_scale", "f32: one per weight matrix, one per output "
                  "channel, or one per 128x128 block of w"))
    for (name, what), scale in zip(needs, (x_scale, w_scale)):
        if scale is None:
            raise ArgumentError(f"{name}: {'INT8' if int8 else 'FP8'} "
                                f"operands need {name} ({what})")


def _scale_tensor(name: str, tensor: Any, device: Any) -> None:
    if not hasattr(tensor, "shape") or not hasattr(tensor, "dtype"):
        raise ArgumentError(f"{name}: expected a tensor, got "
                            f"{type(tensor).__name__}")
    if dtype_name(tensor) != "f32":
        raise ArgumentError(f"{name}: expected dtype f32 (torch.float32), "
                            f"got {tensor.dtype}")
    if not getattr(tensor, "is_cuda", False):
        raise ArgumentError(f"{name}: expected a CUDA tensor, got device "
                            f"{getattr(tensor, 'device', 'unknown')}")
    if tensor.device != device:
        raise ArgumentError(f"{name}: on {tensor.device}, but x is on "
                            f"{device}")


def _is_mn_major(scale: Any, groups: Optional[int], rows: int) -> bool:
    """Whether activation scales already have the layout the kernel reads:
    rows contiguous, groups back to back (group stride M), the K-block
    stride a multiple of 4 elements and past every row."""
    strides = tuple(scale.stride())
    total = rows * (groups or 1)
    if strides[-2] != 1 and rows > 1:
        return False
    if groups is not None and groups > 1 and strides[0] != rows:
        return False
    return strides[-1] % 4 == 0 and strides[-1] >= total


def mn_major_scales(scale: Any) -> Any:
    """A copy of ``[M, KB]`` (or ``[G, M, KB]``) activation scales in the
    layout the FP8 kernels read (docs/Design.md, "FP8 block scales"): rows
    contiguous, the K-block stride ``M_pad`` (``G M`` rounded up to 4),
    groups back to back — ``torch.empty(KB, M_pad).t()[:M]``. One read and
    one write of ``4 M KB`` bytes on the current stream (0.9 MB for M =
    4096, K = 7168: about 0.5 us of HBM time) plus a small allocation."""
    if scale.dim() == 3:
        groups, rows, kb = scale.shape
        if scale.numel() == 0:
            return scale
        flat = mn_major_scales(scale.reshape(groups * rows, kb))
        return flat.view(groups, rows, kb)
    rows, kb = scale.shape
    pad = -(-max(rows, 1) // 4) * 4
    storage = torch.empty((kb, pad), dtype=torch.float32, device=scale.device)
    storage[:, :rows] = scale.t()
    return storage.t()[:rows]


def _scale_kinds(x_scale: Any, w_scale: Any, lead: Tuple[int, ...],
                 rows: int, n: int, k: int, num_weights: int,
                 int8: bool = False) -> Tuple[str, str]:
    """The scale blocks the shapes of ``x_scale`` and ``w_scale`` give
    (``#ggemm.scale_block``): x's ``"tensor"`` (one value), ``"per_row"``
    (``lead + [M]`` or ``lead + [M, 1]``) or ``"1x128"`` (``lead + [M,
    ceil(K/128)]``); w's ``"tensor"`` (one value, or ``[Gw]``),
    ``"per_row"`` (``[Gw, N]``, ``[Gw, N, 1]`` or ``[Gw, 1, N]``) or
    ``"128x128"``. Shapes both kinds fit (``[M, 1]`` with K = 128) are
    block scales when the other operand's are; an unknown shape raises
    ArgumentError naming every accepted one. INT8 (``int8``) takes no block
    scales: their shapes raise ArgumentError saying so, and shapes both
    kinds fit are tensor-wise or per-row."""
    kb, nb = -(-k // 128), -(-n // 128)
    xs, ws = tuple(x_scale.shape), tuple(w_scale.shape)
    x_blocks, w_blocks = xs == lead + (rows, kb), ws == (num_weights, nb, kb)
    x_block = k % 128 == 0 and x_blocks and not int8
    w_block = k % 128 == 0 and w_blocks and not int8
    if x_block and w_block:
        return "1x128", "128x128"
    if k % 128 and x_blocks and w_blocks and kb > 1 and not int8:
        raise ArgumentError(f"x: K = {k} must be a multiple of 128 with FP8 "
                            f"block scales (the 128-wide scale blocks)")
    text = "G, M" if lead else "M"
    # INT8's messages name only what INT8 takes, and why blocks are out.
    int8_takes = "INT8 takes tensor-wise or per-row scales: "
    if xs in ((), (1,)):
        x_kind = "tensor"
    elif xs in (lead + (rows,), lead + (rows, 1)):
        x_kind = "per_row"
    elif x_block:
        x_kind = "1x128"
    elif int8:
        raise ArgumentError(
            f"x_scale: {int8_takes}expected shape [1] (one scale for all of "
            f"x) or [{text}] = {list(lead + (rows,))} (one per row), got "
            f"{list(xs)}" + (" (1x128 block scales are FP8's)" if x_blocks
                             else ""))
    else:
        raise ArgumentError(
            f"x_scale: expected shape [1] (one scale for all of x), "
            f"[{text}] (one per row) or [{text}, ceil(K/128)] = "
            f"{list(lead + (rows, kb))} (1x128 blocks, K a multiple of 128), "
            f"got {list(xs)}")
    if ws in ((), (1,), (num_weights,)):
        w_kind = "tensor"
    elif ws in ((num_weights, n), (num_weights, n, 1), (num_weights, 1, n)):
        w_kind = "per_row"
    elif w_block:
        w_kind = "128x128"
    elif int8:
        raise ArgumentError(
            f"w_scale: {int8_takes}expected shape [Gw] = [{num_weights}] "
            f"(one per weight matrix) or [Gw, N] = [{num_weights}, {n}] (one "
            f"per output channel), got {list(ws)}"
            + (" (128x128 block scales are FP8's)" if w_blocks else ""))
    else:
        raise ArgumentError(
            f"w_scale: expected shape [Gw] = [{num_weights}] (one per weight "
            f"matrix), [Gw, N] = [{num_weights}, {n}] (one per output "
            f"channel) or [Gw, ceil(N/128), ceil(K/128)] = "
            f"{[num_weights, nb, kb]} (128x128 blocks), got {list(ws)}")
    if x_kind == "1x128" or w_kind == "128x128":
        raise NotLoweredError(
            f"x_scale, w_scale: {x_kind} activation scales with {w_kind} "
            f"weight scales are not lowered; block scales (1x128 with "
            f"128x128) go together, tensor-wise and per-row scales mix "
            f"freely")
    return x_kind, w_kind


def _row_major(tensor: Any) -> bool:
    """Whether ``tensor`` is dense row-major (unit dimensions aside)."""
    shape = tuple(tensor.shape)
    expected, step = [], 1
    for extent in reversed(shape):
        expected.insert(0, step)
        step *= max(extent, 1)
    return [s for s, e in zip(tensor.stride(), shape) if e > 1] == \
        [s for s, e in zip(expected, shape) if e > 1]


def _dense_scales(scale: Any, shape: Tuple[int, ...]) -> Any:
    """``scale`` as the dense row-major ``shape`` the kernel reads by
    address: itself when it is one, else a copy (``[M, 1]`` per-row scales
    as ``[M]``, a strided view made contiguous)."""
    if tuple(scale.shape) == shape and _row_major(scale):
        return scale
    return scale.reshape(shape).contiguous()


def _plan_scales(tensors: Dict[str, Any], x_scale: Any, w_scale: Any,
                 groups: Optional[int], rows: int, n: int, k: int,
                 num_weights: int, device: Any,
                 dtype: str = "f8e4m3") -> Tuple[str, str]:
    """Checks the FP8 or INT8 (``dtype``) scales, puts them in ``tensors``
    as the kernel reads them (1x128 activation scales made MN-major,
    per-row ones ``lead + [M]``, a tensor-wise weight scale one per
    weight); returns the scale blocks of the key."""
    lead = () if groups is None else (groups,)
    _scale_tensor("x_scale", x_scale, device)
    _scale_tensor("w_scale", w_scale, device)
    x_kind, w_kind = _scale_kinds(x_scale, w_scale, lead, rows, n, k,
                                  num_weights, dtype in INT8_DTYPES)
    if x_kind == "1x128":
        if not _is_mn_major(x_scale, groups, rows):
            x_scale = mn_major_scales(x_scale)
    elif x_kind == "tensor":
        x_scale = _dense_scales(x_scale, (1,))
    else:
        x_scale = _dense_scales(x_scale, lead + (rows,))
    if w_kind == "tensor" and tuple(w_scale.shape) != (num_weights,):
        # One scale for all weights (FlashInfer's scalar B_scale) is one per
        # weight, all equal: a copy of Gw floats.
        w_scale = w_scale.reshape(1).expand(num_weights).contiguous()
    elif w_kind == "per_row":
        w_scale = _dense_scales(w_scale, (num_weights, n))
    if not _row_major(w_scale):
        raise ArgumentError(f"w_scale: must be contiguous (row-major), got "
                            f"strides {list(w_scale.stride())}; pass "
                            f"w_scale.contiguous()")
    tensors["x_scale"] = x_scale
    tensors["w_scale"] = w_scale
    return (x_kind, w_kind)


def _check_k_n(k: int, n: int, layout: str, dtype: str = "bf16",
               scale_blocks: Tuple[str, str] = ("", "")) -> None:
    if dtype in FP8_DTYPES and scale_blocks[0] == "1x128" and k % 128:
        raise ArgumentError(f"x: K = {k} must be a multiple of 128 with FP8 "
                            f"operands (the 128-wide scale blocks)")
    if dtype in SCALED_DTYPES and k % 16:
        family = "INT8" if dtype in INT8_DTYPES else "FP8"
        raise ArgumentError(f"x: K = {k} must be a multiple of 16 with "
                            f"{family} operands (TMA reads rows in 16-byte "
                            f"steps)")
    if k % 8:
        raise ArgumentError(f"x: K = {k} must be a multiple of 8 (TMA reads "
                            f"rows of x and w in 16-byte steps)")
    if layout == "kn" and n % 8:
        raise ArgumentError(f"w: N = {n} must be a multiple of 8 with "
                            f"weight_layout='kn' (w's rows are N long); use "
                            f"weight_layout='nk'")


def _plan_grouped(op: str, x: Any, w: Any, counts: Any, *, weight_layout: str,
                  bias: Any, activation: Optional[str], row_scale: Any,
                  accumulate: bool, out: Any, out_dtype: Any,
                  config: Any, x_scale: Any = None, w_scale: Any = None,
                  out_scale: Any = None, build: bool = True) -> _Plan:
    dtype, device, layout = _check_operands(x, 3, "[G, M, K]", w,
                                            weight_layout, x_scale, w_scale)
    groups, rows, k = x.shape
    n = w.shape[1] if layout == "nk" else w.shape[2]
    _check_extent("w", w, 0, groups, "G, as x.shape[0]")
    _check_extent("w", w, 2 if layout == "nk" else 1, k, "K, as x.shape[2]")
    if x.shape[0] > 1 and x.shape[1] > 0 and \
            x.stride(0) != x.shape[1] * x.stride(1):
        raise ArgumentError(f"x: groups must be packed (stride(0) == "
                            f"shape[1] * stride(1)), got strides "
                            f"{list(x.stride())}; pass x.contiguous()")
    tensors = {"x": x, "w": w}
    index_dtype = "i32"
    if op == "masked_matmul":
        index_dtype = _check("masked_m", counts, 1, ("i32", "i64"), "[G]",
                             device)
        _check_extent("masked_m", counts, 0, groups, "G, as x.shape[0]")
        tensors["masked_m"] = counts
    if bias is not None:
        _check("bias", bias, 2, ("bf16", "f16", "f32"), "[G, N]", device)
        _check_extent("bias", bias, 0, groups, "G")
        _check_extent("bias", bias, 1, n, "N")
        tensors["bias"] = _as_f32("bias", bias)
    if row_scale is not None:
        _check("row_scale", row_scale, 2, ("bf16", "f16", "f32"), "[G, M]",
               device)
        _check_extent("row_scale", row_scale, 0, groups, "G")
        _check_extent("row_scale", row_scale, 1, rows, "M, as x.shape[1]")
        tensors["row_scale"] = _as_f32("row_scale", row_scale)
    scale_blocks = ("", "")
    if dtype in SCALED_DTYPES:
        scale_blocks = _plan_scales(tensors, x_scale, w_scale, groups, rows,
                                    n, k, groups, device, dtype)
    act = _activation(activation, op)
    if _wants_fp8_output(out, out_dtype):
        _check_fp8_output(accumulate, False, None, config, act, 0)
    out_name = _check_out(out, (groups, rows, n),
                          _out_dtype_name(out_dtype, fp8=True), device,
                          accumulate, _Y_DTYPES) or _default_out(dtype)
    if out is not None and groups > 1 and rows > 0 and \
            out.stride(0) != rows * out.stride(1):
        raise ArgumentError(f"out: groups must be packed (stride(0) == "
                            f"shape[1] * stride(1)), got strides "
                            f"{list(out.stride())}")
    _check_out_scale(out_scale, out, out_name, (groups,), rows, n, device)
    empty = rows == 0 or groups == 0 or n == 0
    key = None
    if not empty:
        _check_k_n(k, n, layout, dtype, scale_blocks)
    if not empty and build:
        key = (op, dtype, n, k, groups, groups, out_name, layout, index_dtype,
               False, bias is not None, row_scale is not None, act,
               bool(accumulate), _config(config)) + scale_blocks + (
                   False, False, False, 0, False)
    return _Plan(key, tensors, (groups, rows, n), out_name, empty)


def _run(plan: _Plan, out: Any, zero_fill: bool, catalog: Any,
         expected_m: Optional[int] = None, out_scale: Any = None) -> Any:
    """Allocates the output if needed and launches; returns the output,
    with an e4m3 one ``(y, y_scale)``. ``expected_m`` picks among a
    multi-variant kernel's tiles."""
    fp8_out = plan.out_dtype in FP8_OUTPUT_DTYPES
    if out is None:
        first = next(iter(plan.tensors.values()))
        zero = zero_fill or plan.empty
        alloc = torch.zeros if zero else torch.empty
        out = alloc(plan.out_shape, dtype=torch_dtype(plan.out_dtype),
                    device=first.device)
        if fp8_out:
            out_scale = _y_scale_buffer(plan.out_shape, zero, first.device)
    result = (out, out_scale) if fp8_out else out
    if plan.empty:
        return result
    token = (plan.key, catalog if catalog is None or isinstance(catalog, str)
             else str(catalog), os.environ.get("GGEMM_CATALOG"))
    kernel = _kernels.get(token)
    if kernel is None:
        kernel = kernel_for(plan.problem, catalog)
        _kernels[token] = kernel
    tensors = plan.tensors
    tensors["y"] = out
    if fp8_out:
        tensors["y_scale"] = out_scale
    kernel.launch(tensors, expected_m=expected_m)
    return result


# Eager calls already checked, by what the checks of plan_* read: each
# tensor's dtype, shape, strides and device, and every other argument. The
# same metadata gets the same verdict, so a hit skips the checks (most of
# a call's host time) and launches this call's tensors through _run with
# the plan found before. Only calls whose plan passes the arguments to the
# kernel as they are (no widening or layout copy) are kept; calls with
# config= are not (it may be an unhashable dict). Bounded: with a dynamic
# M every row count is an entry.
_checked: Dict[tuple, tuple] = {}
_CHECKED_LIMIT = 256


def _signature(tensor: Any) -> Any:
    if tensor is None:
        return None
    return (tensor.dtype, tensor.shape, tensor.stride(), tensor.is_cuda,
            tensor.get_device())


def _call_key(op: str, tensors: Tuple[Any, ...], others: tuple
              ) -> Optional[tuple]:
    """The key of a call in _checked; None when it cannot have one (a
    stand-in without get_device(), an unhashable argument)."""
    try:
        key = (op, others, tuple([_signature(t) for t in tensors]),
               os.environ.get("GGEMM_CATALOG"))
        hash(key)
    except (AttributeError, TypeError):
        return None
    return key


def _plan_for_key(key: Optional[tuple], tensors: Tuple[Any, ...]
                  ) -> Optional[_Plan]:
    """The plan of an earlier call with the same key, for these tensors."""
    if key is None:
        return None
    entry = _checked.get(key)
    if entry is None:
        return None
    problem_key, positions, out_shape, out_dtype = entry
    return _Plan(problem_key, {name: tensors[i] for name, i in positions},
                 out_shape, out_dtype, False)


def _remember(key: Optional[tuple], plan: _Plan,
              tensors: Tuple[Any, ...]) -> None:
    if key is None or plan.key is None or plan.empty:
        return
    positions = []
    for name, tensor in plan.tensors.items():
        index = next((i for i, t in enumerate(tensors) if t is tensor), None)
        if index is None:  # converted: the next call must convert too
            return
        positions.append((name, index))
    if len(_checked) >= _CHECKED_LIMIT:
        try:
            del _checked[next(iter(_checked))]
        except (KeyError, RuntimeError, StopIteration):  # another thread
            pass
    _checked[key] = (plan.key, tuple(positions), plan.out_shape,
                     plan.out_dtype)


#: ggemm.torch_ops once imported (it imports this module, so it registers
#: itself here; no import statement runs while torch.compile traces).
_torch_ops_module: Any = None


def _library_ops() -> Any:
    if _torch_ops_module is None:
        from . import torch_ops  # noqa: F401  (sets _torch_ops_module)
    return _torch_ops_module


def _needs_torch_ops(*tensors: Any) -> bool:
    """Whether the call must go through the torch.library op: while
    torch.compile traces, or when autograd records."""
    if torch.compiler.is_compiling():
        return True
    if not torch.is_grad_enabled():
        return False
    return _any_requires_grad(tensors)


def _any_requires_grad(tensors: Tuple[Any, ...]) -> bool:
    for tensor in tensors:
        if tensor is not None and tensor.requires_grad:
            return True
    return False


def _config_text(config: Any) -> str:
    value = _config(config)
    if value is None:
        return ""
    return json.dumps(dict(value.__dict__), sort_keys=True)


def config_from_text(text: str) -> Optional[TileConfig]:
    return TileConfig(**json.loads(text)) if text else None


def segment_matmul(x: Any, w: Any, seg_indptr: Any, *,
                   weight_indices: Any = None, weight_layout: str = "nk",
                   bias: Any = None, activation: Optional[str] = None,
                   row_scale: Any = None, accumulate: bool = False,
                   out: Any = None, out_dtype: Any = None, config: Any = None,
                   catalog: Any = None, x_scale: Any = None,
                   w_scale: Any = None, row_indices: Any = None,
                   scatter_indices: Any = None, atomic: bool = False,
                   gate_up_block: Optional[int] = None,
                   out_scale: Any = None) -> Any:
    """Ragged grouped matmul over row segments:
    ``y[s_g:s_{g+1}] = act(x[s_g:s_{g+1}] @ W[i_g]ᵀ + bias[i_g]) * row_scale``
    with ``s = seg_indptr`` and ``i_g = weight_indices[g]`` (``g`` without
    weight indices).

    - ``x``: ``[M, K]`` bf16 or fp16, rows contiguous (row stride a multiple
      of 16 bytes; K a multiple of 8).
    - ``w``: ``[Gw, N, K]`` (``weight_layout="nk"``, like ``nn.Linear``
      weights) or ``[Gw, K, N]`` (``"kn"``), x's dtype.
    - ``seg_indptr``: ``[G + 1]`` int32 or int64 on the device,
      non-decreasing, ``seg_indptr[0] >= 0``; it is never read on the host.
    - ``weight_indices``: ``[G]`` int32 (int64 is converted); without it
      ``Gw`` must equal ``G``. A segment whose index is outside ``[0, Gw)``
      is skipped (its rows keep their values).
    - ``bias``: ``[Gw, N]``, ``row_scale``: ``[M]`` (widened to f32).
    - ``activation``: ``None``, ``"relu"``, ``"gelu"`` (erf), ``"silu"`` or
      ``"swiglu"``: w is ``[Gw, 2N, K]`` (or ``[Gw, K, 2N]``), gate rows
      ``[0, N)`` then up rows ``[N, 2N)`` (vLLM's ``w13``), bias ``[Gw,
      2N]``, and ``y[:, n] = silu(gate_n) * up_n`` has N columns.
    - ``gate_up_block`` (swiglu only; None or 0: side by side): w's 2N
      rows interleaved in blocks of ``gate_up_block`` gate rows and their
      as many up rows (:func:`ggemm.interleave_gate_up` converts ``w13``),
      so that each tile reads one contiguous block; a multiple of 8 of at
      most 128 dividing N (with ``"kn"`` a multiple of 32). The bias stays
      ``[gate, up]``; ``w.grad`` comes back interleaved.
    - ``row_indices`` (gather-A): ``[M]`` int32; row r of the segments reads
      x row ``row_indices[r]`` (an index outside ``[0, T)`` reads zeros), x
      is ``[T, K]`` with any T, and M (what ``seg_indptr`` and
      ``row_scale`` index, the rows of y) is ``row_indices.shape[0]``.
    - ``scatter_indices``: ``[M]`` int32; result row r goes to ``out`` row
      ``scatter_indices[r]`` (an index outside ``[0, Y)`` is skipped).
      Needs ``out`` ``[Y, N]`` with any Y; rows no index points to keep
      their values. Without ``atomic`` the indices must be distinct for a
      defined result (a plain store, deterministic).
    - ``atomic=True`` (needs ``scatter_indices`` and ``accumulate=True``,
      ``out`` float32, bf16 or fp16): ``out[scatter[r]] += row`` with atomic
      adds, so indices may repeat (the order of the sum is not
      deterministic).
    - ``out``: ``[M, N]`` to write into (rows outside every segment are left
      as they are); ``accumulate=True`` adds the product to it. Without
      ``out`` a new tensor of ``out_dtype`` (default x's dtype: bf16, fp16
      or float32) is returned, zero outside every segment.
    - ``config``: a :class:`~ggemm.problem.TileConfig` or dict to override
      the compiler's tile choice; ``catalog``: a catalog directory (default
      ``$GGEMM_CATALOG``; see :mod:`ggemm.cache`).
    - FP8: ``x`` and ``w`` ``torch.float8_e4m3fn`` (or both
      ``torch.float8_e5m2``; K a multiple of 128,
      ``weight_layout="nk"``) with ``x_scale`` ``[M, ceil(K/128)]`` f32
      (1x128 blocks) and ``w_scale`` ``[Gw, ceil(N/128), ceil(K/128)]`` f32
      (128x128 blocks, contiguous): ``x ≈ x_q * x_scale`` per block. The
      output defaults to bf16. ``x_scale`` is read MN-major (see
      :func:`mn_major_scales`); a row-major one is copied to that layout
      on every call. Or scales that do not change along K, applied once in
      the epilogue (K a multiple of 16): ``x_scale`` one f32 for all of x
      or ``[M]`` (per token), ``w_scale`` ``[Gw]`` (per weight) or ``[Gw,
      N]`` (per output channel), in any mix; ``y = act((x_q @ w_qᵀ) *
      x_scale[m] * w_scale[g, n] + bias) * row_scale``. The kind follows
      from the shapes. ``"kn"``, ``row_indices`` and block scales on one
      operand only raise :class:`NotLoweredError`; w's FP8 type must be
      x's (:class:`ArgumentError`). FP8 calls are not
      differentiable and not registered for ``torch.compile`` yet.
    - INT8: ``x`` and ``w`` ``torch.int8`` (K a multiple of 16,
      ``weight_layout="nk"``) with the scales FP8 applies in the epilogue,
      required: ``x_scale`` one f32 for all of x or ``[M]`` (per token;
      ``[M, 1]`` too), ``w_scale`` ``[Gw]`` or ``[Gw, N]`` (per output
      channel), in any mix. ``x @ wᵀ`` is summed exactly in int32, then
      ``y = act(float(x @ wᵀ) * x_scale[m] * w_scale[g, n] + bias) *
      row_scale``; the output defaults to bf16 (``out_dtype`` bf16, fp16
      or float32). Block scales, ``"kn"``, ``row_indices``, int8 with
      another dtype and int8 without scales raise :class:`ArgumentError`.
      Like FP8 calls, INT8 calls are not differentiable and not
      registered for ``torch.compile``.
    - e4m3 output, ``out_dtype=torch.float8_e4m3fn`` (or ``"f8e4m3"``),
      any operands: the epilogue's f32 values ``v`` (after bias,
      activation, row_scale and the input scales) are quantised per row
      and 128 columns of y, ``amax = max(max |v|, 1e-4)``, ``y_scale =
      amax * f32(1/448)``, ``y = e4m3(v * (1 / amax * 448))`` (nearest
      even, saturating: :func:`ggemm.quantize` with ``block=(1, 128)``),
      and the call returns ``(y, y_scale)``: y ``[M, N]`` e4m3 and y_scale
      ``[M, ceil(N/128)]`` f32 MN-major (``torch.empty(ceil(N/128),
      M_pad).t()[:M]``, M_pad = M rounded up to 4: strides ``(1, M_pad)``),
      the layout the FP8 ops take as 1x128 ``x_scale``, so the pair is the
      next FP8 op's ``x`` and ``x_scale`` without a copy (when N, its K, is
      a multiple of 128). Rows outside every segment read 0 in both. With
      ``out=`` (e4m3 ``[M, N]``) pass ``out_scale=`` (f32 ``[M,
      ceil(N/128)]`` in any strides that give each scale its own element);
      the pair is returned. Not with ``accumulate``, ``atomic`` or
      ``scatter_indices``; a ``config`` must cover whole 128-column blocks
      of y (``block_n``, with swiglu ``block_n / 2``, a multiple of 128;
      ``gate_up_block`` 128) without ``swap_ab``. Like FP8 and INT8 inputs,
      e4m3 outputs are not differentiable and not registered for
      ``torch.compile`` yet.

    Launches on the current stream; never synchronises. Differentiable in
    x, w, bias and row_scale, with ``row_indices`` and swiglu too (see
    :mod:`ggemm.torch_ops`: dW comes from the K-ragged
    :func:`segment_matmul_k` kernel); calls with ``out=`` (so every call
    with ``scatter_indices``) are not.

    Example::

        y = ggemm.segment_matmul(x, w, seg_indptr, bias=b, activation="gelu")
        ggemm.segment_matmul(x, w, seg_indptr, out=y, accumulate=True)
        # MoE: gather tokens, fused SwiGLU, scatter-add the down projection
        h = ggemm.segment_matmul(x, w13, seg_indptr, row_indices=token,
                                 activation="swiglu")
        # ... or on a weight interleaved once at load time
        w13_i = ggemm.interleave_gate_up(w13, 64)
        h = ggemm.segment_matmul(x, w13_i, seg_indptr, row_indices=token,
                                 activation="swiglu", gate_up_block=64)
        ggemm.segment_matmul(h, w2, seg_indptr, row_scale=weight,
                             scatter_indices=token, out=y32,
                             accumulate=True, atomic=True)
        # INT8: int8 x [M, K] and w [Gw, N, K], per-token and per-channel
        y = ggemm.segment_matmul(x_i8, w_i8, seg_indptr,
                                 x_scale=x_scale,   # f32 [M]
                                 w_scale=w_scale)   # f32 [Gw, N]
        # FP8 chain: an e4m3 output and its 1x128 scales are the next FP8
        # op's x and x_scale (w2_q [Gw, H, N] e4m3, w2_s its 128x128 scales)
        h, h_scale = ggemm.segment_matmul(x, w13, seg_indptr,
                                          activation="swiglu",
                                          out_dtype=torch.float8_e4m3fn)
        y = ggemm.segment_matmul(h, w2_q, seg_indptr, x_scale=h_scale,
                                 w_scale=w2_s)
    """
    _require_torch()
    direct = _direct_call(x_scale, w_scale, out, out_dtype, out_scale)
    if not direct and _needs_torch_ops(x, w, bias, row_scale, out):
        return _library_ops().segment_matmul_via_library(
            x, w, seg_indptr, weight_indices, weight_layout, bias, activation,
            row_scale, accumulate, out, out_dtype, config, row_indices,
            scatter_indices, atomic, gate_up_block)
    tensors = (x, w, seg_indptr, weight_indices, bias, row_scale, out,
               x_scale, w_scale, row_indices, scatter_indices, out_scale)
    # Every other argument of this function (config aside) is in the key.
    key = None if config is not None else _call_key(
        "segment_matmul", tensors,
        (weight_layout, activation, accumulate, out_dtype, catalog, atomic,
         gate_up_block))
    plan = _plan_for_key(key, tensors)
    if plan is None:
        plan = plan_segment_matmul(
            x, w, seg_indptr, weight_indices=weight_indices,
            weight_layout=weight_layout, bias=bias, activation=activation,
            row_scale=row_scale, accumulate=accumulate, out=out,
            out_dtype=out_dtype, config=config, x_scale=x_scale,
            w_scale=w_scale, row_indices=row_indices,
            scatter_indices=scatter_indices, atomic=atomic,
            gate_up_block=gate_up_block, out_scale=out_scale)
        _remember(key, plan, tensors)
    return _run(plan, out, True, catalog, out_scale=out_scale)


def _direct_call(x_scale: Any, w_scale: Any, out: Any = None,
                 out_dtype: Any = None, out_scale: Any = None) -> bool:
    """Whether the call launches its kernel directly: scales were given (an
    FP8 or INT8 call) or the output is e4m3 (``out_dtype``, ``out`` or
    ``out_scale``). Neither has a torch.library op yet, so such a call is
    not differentiable, and raises under torch.compile."""
    scaled = x_scale is not None or w_scale is not None
    fp8_out = out_scale is not None or _wants_fp8_output(out, out_dtype)
    if not scaled and not fp8_out:
        return False
    if torch.compiler.is_compiling():
        if scaled:
            raise NotLoweredError("x_scale, w_scale: FP8 and INT8 calls are "
                                  "not registered as torch.library ops yet, "
                                  "so they cannot be traced by "
                                  "torch.compile; call them outside the "
                                  "compiled region")
        raise NotLoweredError("out_dtype: e4m3 outputs "
                              "(torch.float8_e4m3fn, with out_scale) are "
                              "not registered as torch.library ops yet, so "
                              "they cannot be traced by torch.compile; call "
                              "them outside the compiled region")
    return True


def masked_matmul(x: Any, w: Any, masked_m: Any, *, weight_layout: str = "nk",
                  bias: Any = None, activation: Optional[str] = None,
                  row_scale: Any = None, accumulate: bool = False,
                  out: Any = None, out_dtype: Any = None, config: Any = None,
                  catalog: Any = None, x_scale: Any = None,
                  w_scale: Any = None, expected_m: Optional[int] = None,
                  out_scale: Any = None) -> Any:
    """Grouped matmul with a device-side count of valid rows per group
    (DeepGEMM's "masked" layout, for decoding under CUDA graphs):
    ``y[g, :m_g] = act(x[g, :m_g] @ W[g]ᵀ + bias[g]) * row_scale[g, :m_g]``
    with ``m_g = masked_m[g]`` clamped to ``[0, M]``.

    - ``x``: ``[G, M, K]`` (groups packed), ``w``: ``[G, N, K]`` (``"nk"``)
      or ``[G, K, N]`` (``"kn"``), ``masked_m``: ``[G]`` int32/int64;
      ``bias``: ``[G, N]``; ``row_scale``: ``[G, M]``.
    - ``out``: ``[G, M, N]``; rows past ``m_g`` are left as they are.
      Without ``out`` the result is zero there.
    - FP8 as in :func:`segment_matmul`, with ``x_scale`` ``[G, M,
      ceil(K/128)]`` (MN-major: group stride ``M``, see
      :func:`mn_major_scales`) and ``w_scale`` ``[G, ceil(N/128),
      ceil(K/128)]``; or per-token ``x_scale`` ``[G, M]`` / one for all of
      x, and ``w_scale`` ``[G, N]`` / ``[G]``. INT8 (``torch.int8`` x and
      w) as in :func:`segment_matmul`, with those per-token / tensor-wise
      scales only.
    - e4m3 output (``out_dtype=torch.float8_e4m3fn``) as in
      :func:`segment_matmul`: ``(y, y_scale)`` with y_scale ``[G, M,
      ceil(N/128)]`` f32 MN-major over all ``G M`` rows (group stride M,
      row stride 1), the FP8 masked ops' ``x_scale`` layout; rows past
      ``m_g`` read 0 in both. ``out_scale=`` goes with an e4m3 ``out=``
      (any strides, the group stride M times the row stride).
    - ``expected_m``: the rows per group the caller expects (DeepGEMM's
      hint; ``masked_m`` stays on the device). A kernel compiled with
      several tile variants launches the one for ``expected_m`` rows, else
      the one for ``M`` (docs/Runtime.md, "Variants"). It never changes
      the result. Calls traced by torch.compile or recorded by autograd
      do not pass it on.

    Example::

        y = ggemm.masked_matmul(x, w, masked_m)
        y = ggemm.masked_matmul(x, w, masked_m, expected_m=20)
        # e4m3 out, then the next masked FP8 op
        h, h_scale = ggemm.masked_matmul(x, w1, masked_m,
                                         out_dtype=torch.float8_e4m3fn)
        y = ggemm.masked_matmul(h, w2_q, masked_m, x_scale=h_scale,
                                w_scale=w2_s)
    """
    hint = _check_expected_m(expected_m)
    return _grouped("masked_matmul", x, w, masked_m, weight_layout, bias,
                    activation, row_scale, accumulate, out, out_dtype, config,
                    catalog, x_scale, w_scale, out_scale, hint)


def _check_expected_m(expected_m: Any) -> Optional[int]:
    """``expected_m`` as the runtime takes it: ``None`` or a positive int."""
    if expected_m is None:
        return None
    if isinstance(expected_m, bool) or not isinstance(expected_m, int) \
            or expected_m <= 0:
        raise ArgumentError(f"expected_m: expected None or a positive int, "
                            f"got {expected_m!r}")
    return expected_m


def _grouped(op: str, x: Any, w: Any, counts: Any, weight_layout: str,
             bias: Any, activation: Optional[str], row_scale: Any,
             accumulate: bool, out: Any, out_dtype: Any, config: Any,
             catalog: Any, x_scale: Any = None, w_scale: Any = None,
             out_scale: Any = None,
             expected_m: Optional[int] = None) -> Any:
    _require_torch()
    direct = _direct_call(x_scale, w_scale, out, out_dtype, out_scale)
    if not direct and _needs_torch_ops(x, w, bias, row_scale, out):
        return _library_ops().grouped_via_library(
            op, x, w, counts, weight_layout, bias, activation, row_scale,
            accumulate, out, out_dtype, config)
    tensors = (x, w, counts, bias, row_scale, out, x_scale, w_scale,
               out_scale)
    # Every other argument of this function (config aside) is in the key.
    key = None if config is not None else _call_key(
        op, tensors,
        (weight_layout, activation, accumulate, out_dtype, catalog))
    plan = _plan_for_key(key, tensors)
    if plan is None:
        plan = _plan_grouped(op, x, w, counts, weight_layout=weight_layout,
                             bias=bias, activation=activation,
                             row_scale=row_scale, accumulate=accumulate,
                             out=out, out_dtype=out_dtype, config=config,
                             x_scale=x_scale, w_scale=w_scale,
                             out_scale=out_scale)
        _remember(key, plan, tensors)
    # Masked rows past the count are not written: zero them in a new output.
    return _run(plan, out, op == "masked_matmul", catalog, expected_m,
                out_scale)


def _plan_with_defaults(op: str, x: Any, w: Any, counts: Any,
                        kwargs: Dict[str, Any]) -> _Plan:
    kwargs.setdefault("weight_layout", "nk")
    for name in ("bias", "activation", "row_scale", "out", "out_dtype",
                 "config"):
        kwargs.setdefault(name, None)
    kwargs.setdefault("accumulate", False)
    return _plan_grouped(op, x, w, counts, **kwargs)


def plan_masked_matmul(x: Any, w: Any, masked_m: Any, **kwargs: Any) -> _Plan:
    """Checks :func:`masked_matmul`'s arguments (no GPU needed)."""
    return _plan_with_defaults("masked_matmul", x, w, masked_m, kwargs)


def plan_batched_matmul(x: Any, w: Any, **kwargs: Any) -> _Plan:
    """Checks :func:`batched_matmul`'s arguments (no GPU needed)."""
    return _plan_with_defaults("batched_matmul", x, w, None, kwargs)


def batched_matmul(x: Any, w: Any, *, weight_layout: str = "nk",
                   bias: Any = None, activation: Optional[str] = None,
                   row_scale: Any = None, accumulate: bool = False,
                   out: Any = None, out_dtype: Any = None, config: Any = None,
                   catalog: Any = None, x_scale: Any = None,
                   w_scale: Any = None, out_scale: Any = None) -> Any:
    """Batched matmul, one weight per batch:
    ``y[b] = act(x[b] @ W[b]ᵀ + bias[b]) * row_scale[b]``.

    ``x``: ``[B, M, K]`` (batches packed), ``w``: ``[B, N, K]`` (``"nk"``)
    or ``[B, K, N]`` (``"kn"``, i.e. ``torch.bmm(x, w)``); ``bias``:
    ``[B, N]``; ``row_scale``: ``[B, M]``; ``out``: ``[B, M, N]``. FP8
    and INT8 scales, and the e4m3 output (``out_dtype=
    torch.float8_e4m3fn``: ``(y, y_scale)``, y_scale ``[B, M,
    ceil(N/128)]`` MN-major; ``out_scale=`` with ``out=``), as in
    :func:`masked_matmul`.

    Example::

        y = ggemm.batched_matmul(x, w, weight_layout="kn")  # torch.bmm(x, w)
        # INT8, one scale per batch row and per output channel
        y = ggemm.batched_matmul(x_i8, w_i8, x_scale=xs,   # f32 [B, M]
                                 w_scale=ws)               # f32 [B, N]
    """
    return _grouped("batched_matmul", x, w, None, weight_layout, bias,
                    activation, row_scale, accumulate, out, out_dtype, config,
                    catalog, x_scale, w_scale, out_scale)


class _KernelCannot(ArgumentError):
    """The K-ragged kernel cannot take these tensors (dtype, alignment), the
    arguments being otherwise right: ``fallback="torch"`` computes them
    with torch instead."""


_KRAGGED_DTYPES = ("bf16", "f16")
#: Tokens per scale of FP8 K-ragged operands (their 1x128 blocks along T).
KRAGGED_SCALE_BLOCK = 128


class _KPlan(NamedTuple):
    """A checked :func:`segment_matmul_k` call: the kernel's plan (its key
    is None when nothing is launched), the weight indices to scatter the
    per-group result with (None: the kernel writes the output directly),
    ``num_weights``, the output's shape and dtype name, whether the
    token rows are empty (T = 0: zeros, nothing launched) and whether dy
    and x are given transposed (``[N, T]``, ``[K, T]``)."""

    plan: _Plan
    indices: Any
    num_weights: int
    out_shape: Tuple[int, ...]
    out_dtype: str
    no_rows: bool
    transposed: bool = False


def _row_aligned(name: str, tensor: Any, what: str) -> None:
    """TMA reads dy's and x's rows: 16-byte aligned, 16-byte row steps."""
    columns = tensor.shape[1]
    if columns % 8:
        raise _KernelCannot(
            f"{name}: {what} = {columns} must be a multiple of 8: the "
            f"K-ragged kernel reads {name}'s rows through TMA in 16-byte "
            f"steps; pass fallback='torch' to compute it with torch")
    if tensor.shape[0] > 1 and tensor.stride(0) % 8:
        raise _KernelCannot(
            f"{name}: row stride {tensor.stride(0)} must be a multiple of 8 "
            f"elements (16 bytes) for the K-ragged kernel's TMA reads; pass "
            f"{name}.contiguous() or fallback='torch'")
    _address_aligned(name, tensor, _KernelCannot,
                     f"pass {name}.clone() or fallback='torch'")


def _address_aligned(name: str, tensor: Any, error: type, fix: str) -> None:
    data_ptr = getattr(tensor, "data_ptr", None)
    if callable(data_ptr) and all(tensor.shape) and data_ptr() % 16:
        raise error(f"{name}: the data address must be 16-byte aligned for "
                    f"the K-ragged kernel's TMA reads; {fix}")


def _token_rows_aligned(name: str, tensor: Any, what: str, fp8: bool,
                        address: bool = True) -> None:
    """A transposed operand (dy ``[N, T]``, x ``[K, T]``): TMA reads its
    rows of T tokens, 16 bytes apart, from a 16-byte aligned address
    (checked with ``address``: not while torch.compile traces, whose fake
    tensors have no address); N and K are multiples of 8 (the sizes the
    kernel is built for). FP8 operands have no torch fallback: their
    errors are plain :class:`ArgumentError`."""
    error = ArgumentError if fp8 else _KernelCannot
    fallback = "" if fp8 else "; or pass fallback='torch'"
    features, tokens = tensor.shape
    if features % 8:
        raise error(f"{name}: {what} = {features} must be a multiple of 8 "
                    f"for the K-ragged kernel{fallback}")
    element = 1 if fp8 else 2
    step = 16 // element
    stride = tensor.stride(0)
    if features > 1 and stride % step:
        padded = -(-tokens // step) * step
        raise error(
            f"{name}: row stride {stride} ({stride * element} bytes) must be "
            f"a multiple of 16 bytes: TMA reads {name}'s rows of T = "
            f"{tokens} tokens in 16-byte steps. Pad each row to a multiple "
            f"of {step} tokens in memory and pass a view of the first T: "
            f"storage = torch.empty({features}, {padded}, "
            f"dtype={tensor.dtype}); {name} = storage[:, :{tokens}] (the "
            f"padding is never read){fallback}")
    if address:
        _address_aligned(name, tensor, error,
                         f"pass {name}.clone()" + fallback)


def _kragged_scale_ready(scale: Any, rows: int) -> bool:
    """Whether 1x128 token-block scales ``[rows, TB]`` are as the kernel
    reads them: MN-major (stride 1 along the rows), the block stride a
    multiple of 4 elements (16 bytes) and past every row, 16-byte
    aligned."""
    strides = tuple(scale.stride())
    if rows > 1 and strides[0] != 1:
        return False
    if strides[1] % 4 or strides[1] < rows:
        return False
    data_ptr = getattr(scale, "data_ptr", None)
    return not (callable(data_ptr) and data_ptr() % 16)


def _kragged_scale(name: str, scale: Any, operand: str, what: str, rows: int,
                   blocks: int, device: Any, convert: bool) -> Any:
    """``dy_scale`` / ``x_scale``: f32 ``[rows, ceil(T/128)]``, one scale
    per row of the operand and 128-token block (counted from token 0).
    Returns what the kernel reads: the tensor itself when it is MN-major
    (:func:`_kragged_scale_ready`), else (``convert``) an MN-major copy
    made by :func:`mn_major_scales` (one read and one write of ``4 rows
    TB`` bytes)."""
    _scale_tensor(name, scale, device)
    shape = (rows, blocks)
    if tuple(scale.shape) != shape:
        raise ArgumentError(f"{name}: expected shape [{what}, ceil(T/128)] = "
                            f"{list(shape)} (one f32 per row of {operand} and "
                            f"{KRAGGED_SCALE_BLOCK}-token block), got "
                            f"{list(scale.shape)}")
    if not convert or rows == 0 or blocks == 0 or \
            _kragged_scale_ready(scale, rows):
        return scale
    return mn_major_scales(scale)


def plan_segment_matmul_k(x: Any, dy: Any, seg_indptr: Any, *,
                          weight_indices: Any = None,
                          num_weights: Optional[int] = None,
                          weight_layout: str = "nk", accumulate: bool = False,
                          out: Any = None, out_dtype: Any = None,
                          config: Any = None, kernel: bool = True,
                          build: bool = True, transposed: bool = False,
                          x_scale: Any = None, dy_scale: Any = None) -> _KPlan:
    """Checks the arguments of :func:`segment_matmul_k`; needs no GPU.
    With ``kernel=True`` also what the kernel needs (bf16/f16 or FP8
    operands, 16-byte rows), raising an :class:`ArgumentError` that says
    so (the torch fallback takes any float dtype and stride; FP8 operands
    have no fallback and are checked either way). With ``kernel`` and
    ``build`` scales that are not MN-major are copied to that layout."""
    if not isinstance(transposed, bool):
        raise ArgumentError(f"transposed: expected a bool, got "
                            f"{transposed!r}")
    for name, operand in (("x", x), ("dy", dy)):
        if hasattr(operand, "dtype") and dtype_name(operand) == "f8e5m2":
            raise NotLoweredError(
                f"{name}: float8_e5m2 operands are not lowered for the GPU "
                f"(the FP8 K-ragged kernel reads e4m3: torch.float8_e4m3fn)")
    floats = ("bf16", "f16", "f32")
    token_dim = 1 if transposed else 0
    feature_dim = 1 - token_dim
    x_shape, dy_shape = (("[K, T]", "[N, T]") if transposed else
                         ("[T, K]", "[T, N]"))
    dtype = _check("x", x, 2, floats + KRAGGED_FP8_DTYPES, x_shape)
    fp8 = dtype in KRAGGED_FP8_DTYPES
    if fp8 and not transposed:
        raise ArgumentError(
            "transposed: FP8 (torch.float8_e4m3fn) x and dy must be given "
            "transposed, x [K, T] and dy [N, T] with the tokens innermost, "
            "with transposed=True: wgmma's FP8 forms read both operands "
            "K-major, and the tokens are K here (DeepGEMM's "
            "k_grouped_fp8_gemm_nt_contiguous layout); e.g. pass "
            "x.t().contiguous() and dy.t().contiguous()")
    device = x.device
    _check("dy", dy, 2, floats + KRAGGED_FP8_DTYPES, dy_shape, device)
    if dtype_name(dy) != dtype:
        raise ArgumentError(f"dy: dtype {dy.dtype} differs from x's "
                            f"{x.dtype}")
    _check_extent("dy", dy, token_dim, x.shape[token_dim],
                  f"T, as x.shape[{token_dim}]")
    if fp8:
        for name, scale, operand, what in (
                ("dy_scale", dy_scale, "dy", "N"),
                ("x_scale", x_scale, "x", "K")):
            if scale is None:
                raise ArgumentError(
                    f"{name}: FP8 operands need {name} (f32 [{what}, "
                    f"ceil(T/128)], one scale per row of {operand} and "
                    f"{KRAGGED_SCALE_BLOCK}-token block: {operand}[r, t] is "
                    f"{operand}_q[r, t] * {name}[r, t // "
                    f"{KRAGGED_SCALE_BLOCK}])")
    else:
        for name, scale in (("x_scale", x_scale), ("dy_scale", dy_scale)):
            if scale is not None:
                raise ArgumentError(f"{name}: scales apply to FP8 "
                                    f"(float8_e4m3fn) operands only; x is "
                                    f"{x.dtype}")
    index_dtype = _check("seg_indptr", seg_indptr, 1, ("i32", "i64"),
                         "[G + 1]", device)
    groups = seg_indptr.shape[0] - 1
    if groups < 0:
        raise ArgumentError("seg_indptr: expected G + 1 >= 1 elements, got 0")
    layout = _layout(weight_layout)
    rows, k = x.shape[token_dim], x.shape[feature_dim]
    n = dy.shape[feature_dim]
    if num_weights is not None and (isinstance(num_weights, bool) or
                                    not isinstance(num_weights, int) or
                                    num_weights < 0):
        raise ArgumentError(f"num_weights: expected None or a non-negative "
                            f"int, got {num_weights!r}")
    count = num_weights
    if count is None:
        # Gw: out's with weight indices, else one weight per segment.
        count = (out.shape[0] if weight_indices is not None and out is not
                 None and hasattr(out, "shape") and len(out.shape) == 3
                 else groups)
    indices = None
    if weight_indices is not None:
        _check("weight_indices", weight_indices, 1, ("i32", "i64"), "[G]",
               device)
        _check_extent("weight_indices", weight_indices, 0, groups,
                      "G, as seg_indptr.shape[0] - 1")
        indices = weight_indices
    elif count != groups:
        indices = "identity"  # i_g = g; groups past num_weights skipped
    inner = (n, k) if layout == "nk" else (k, n)
    out_shape = (count,) + inner
    # FP8 gradients default to bf16, as the FP8 forward ops' outputs.
    out_name = _check_out(out, out_shape, _out_dtype_name(out_dtype), device,
                          accumulate) or ("bf16" if fp8 else dtype)
    if out_name not in ("bf16", "f16", "f32"):
        raise ArgumentError(f"out_dtype: expected bf16, f16 or f32, got "
                            f"{out_name}")
    direct = indices is None
    if out is not None and direct and count > 1 and inner[0] > 0 and \
            out.stride(0) != inner[0] * out.stride(1):
        raise ArgumentError(f"out: groups must be packed (stride(0) == "
                            f"shape[1] * stride(1)), got strides "
                            f"{list(out.stride())}; pass a contiguous out")
    no_rows = rows == 0
    empty = no_rows or groups == 0 or count == 0 or n == 0 or k == 0
    if kernel and dtype not in _KRAGGED_DTYPES + KRAGGED_FP8_DTYPES:
        raise _KernelCannot(f"x: the K-ragged kernel takes bf16 or f16 "
                            f"operands (or FP8 ones, transposed with "
                            f"scales), got {x.dtype}; pass fallback='torch' "
                            f"to compute float32 operands with torch")
    if (kernel or fp8) and not empty:
        if transposed:
            _token_rows_aligned("dy", dy, "N", fp8, kernel)
            _token_rows_aligned("x", x, "K", fp8, kernel)
        else:
            _row_aligned("dy", dy, "N")
            _row_aligned("x", x, "K")
    key = None
    tensors = {"dy": dy, "x": x, "seg_indptr": seg_indptr}
    launch = kernel and build and not empty
    if fp8:
        blocks = -(-rows // KRAGGED_SCALE_BLOCK)
        tensors["dy_scale"] = _kragged_scale("dy_scale", dy_scale, "dy", "N",
                                             n, blocks, device, launch)
        tensors["x_scale"] = _kragged_scale("x_scale", x_scale, "x", "K", k,
                                            blocks, device, launch)
    if launch:
        # With weight indices the kernel writes one f32 matrix per group,
        # scattered onto the weights afterwards.
        kernel_out = out_name if direct else "f32"
        key = ("segment_matmul_k", dtype, n, k, groups, groups, kernel_out,
               layout, index_dtype, False, False, False, "none",
               bool(accumulate) and direct, _config(config), "", "", False,
               False, False, 0, transposed)
    plan = _Plan(key, tensors, (groups,) + inner, out_name, empty)
    return _KPlan(plan, indices, count, out_shape, out_name, no_rows,
                  transposed)


def segment_matmul_k(x: Any, dy: Any, seg_indptr: Any, *,
                     weight_indices: Any = None,
                     num_weights: Optional[int] = None,
                     weight_layout: str = "nk", accumulate: bool = False,
                     out: Any = None, out_dtype: Any = None,
                     config: Any = None, catalog: Any = None,
                     fallback: Optional[str] = None, transposed: bool = False,
                     x_scale: Any = None, dy_scale: Any = None) -> Any:
    """K-ragged grouped matmul (weight gradients):
    ``dW[i_g] += dy[s_g:s_{g+1}]ᵀ @ x[s_g:s_{g+1}]`` — ``[Gw, N, K]`` with
    ``x: [T, K]``, ``dy: [T, N]``, ``s = seg_indptr`` and ``i_g =
    weight_indices[g]`` (``g`` without weight indices).

    Runs the ``ggemm.segment_matmul_k`` kernel on the current stream and
    never synchronises: the segments stay on the device, their offsets
    clamped as :func:`segment_matmul`'s are (rows outside every segment
    contribute nothing). The sum is kept in float32 and rounded once.

    - ``x``, ``dy``: bf16 or fp16, the same dtype, rows contiguous; the
      kernel reads their rows through TMA, so N and K must be multiples of
      8, the row strides multiples of 8 elements and the addresses 16-byte
      aligned.
    - ``transposed=True``: x is ``[K, T]`` and dy ``[N, T]``, the tokens
      innermost (``dW[i_g] += dy[:, s_g:s_{g+1}] @ x[:, s_g:s_{g+1}]ᵀ``);
      N and K multiples of 8, the rows 16 bytes apart (T a multiple of 16
      for contiguous FP8, 8 for bf16/f16; else pad the rows in memory and
      pass ``storage[:, :T]``).
    - FP8: x and dy ``torch.float8_e4m3fn``, transposed (required: wgmma's
      FP8 forms read K-major operands), with ``x_scale`` f32 ``[K,
      ceil(T/128)]`` and ``dy_scale`` f32 ``[N, ceil(T/128)]`` (required):
      ``x[r, t] = x_q[r, t] * x_scale[r, t // 128]``, the 128-token blocks
      counted from token 0 whatever the segments (which may start and end
      anywhere). The scales are read MN-major (``torch.empty(ceil(T/128),
      N_pad).t()[:N]``, ``N_pad`` a multiple of 4); others are copied to
      that layout on every call (:func:`mn_major_scales`, ``4 N
      ceil(T/128)`` bytes). dW defaults to bf16 (``out_dtype``: f32, bf16
      or f16). e5m2 raises :class:`NotLoweredError`; ``fallback`` does not
      apply to FP8 (its errors are :class:`ArgumentError`).
    - ``seg_indptr``: ``[G + 1]`` int32 or int64 on the device.
    - ``weight_layout``: ``"nk"`` (dW ``[Gw, N, K]``, like ``nn.Linear``
      weights) or ``"kn"`` (``[Gw, K, N]``).
    - ``weight_indices``: ``[G]`` int32/int64: several segments may add to
      one weight; an index outside ``[0, Gw)`` skips its segment. The
      kernel computes one float32 matrix per segment and they are added
      onto the weights with ``index_add_`` on the device. ``num_weights``
      is Gw (default: ``out.shape[0]`` with weight indices, else G); without
      weight indices ``i_g = g`` (a segment past Gw adds nothing).
    - ``out``: ``[Gw, N, K]`` (or ``[Gw, K, N]``) to write into, every
      weight written (zeros for a weight no segment reaches);
      ``accumulate=True`` adds the product to it instead (needs ``out``;
      a weight without rows keeps its value). Without ``out`` a new tensor
      of ``out_dtype`` is returned (default x's dtype, bf16 for FP8;
      ``torch.float32`` for float32 gradients).
    - T = 0 (no token rows): zeros, or ``out`` unchanged with accumulate;
      nothing is launched.
    - ``config``, ``catalog``: as for :func:`segment_matmul`.
    - ``fallback="torch"``: where the kernel cannot take bf16/f16/f32
      tensors (float32 operands, N or K not a multiple of 8, unaligned
      rows) compute it with one float32 torch matmul per segment instead,
      which reads ``seg_indptr`` on the host (one device synchronisation).
      Without it those calls raise :class:`ArgumentError` saying why.

    Not differentiable (it is a gradient): with inputs that require grad it
    raises :class:`NotLoweredError`.

    Example::

        dw = ggemm.segment_matmul_k(x, dy, seg_indptr, out_dtype=torch.float32)
        ggemm.segment_matmul_k(x, dy, seg_indptr, out=w.grad, accumulate=True)
        # FP8, DeepGEMM's k_grouped_fp8_gemm_nt_contiguous layout: x_t [K,
        # T] and dy_t [N, T] e4m3, 1x128 scales along the tokens
        dw = ggemm.segment_matmul_k(x_t, dy_t, seg_indptr, transposed=True,
                                    x_scale=x_s, dy_scale=dy_s,
                                    out_dtype=torch.float32)
    """
    if fallback not in (None, "torch"):
        raise ArgumentError(f"fallback: expected None or 'torch', got "
                            f"{fallback!r}")
    _require_torch()
    if torch.compiler.is_compiling():
        return _library_ops().segment_matmul_k_via_library(
            x, dy, seg_indptr, weight_indices, num_weights, weight_layout,
            accumulate, out, out_dtype, config, fallback,
            transposed=transposed, x_scale=x_scale, dy_scale=dy_scale)
    if torch.is_grad_enabled() and _any_requires_grad((x, dy, out)):
        raise NotLoweredError(
            "segment_matmul_k: autograd is not implemented (it computes "
            "weight gradients); detach the inputs or call it under "
            "torch.no_grad()")
    return segment_matmul_k_eager(x, dy, seg_indptr, weight_indices,
                                  num_weights, weight_layout, accumulate,
                                  out, out_dtype, config, catalog, fallback,
                                  transposed=transposed, x_scale=x_scale,
                                  dy_scale=dy_scale)


def segment_matmul_k_eager(x: Any, dy: Any, seg_indptr: Any,
                           weight_indices: Any, num_weights: Optional[int],
                           weight_layout: str, accumulate: bool, out: Any,
                           out_dtype: Any, config: Any, catalog: Any,
                           fallback: Optional[str], *,
                           transposed: bool = False, x_scale: Any = None,
                           dy_scale: Any = None) -> Any:
    """:func:`segment_matmul_k` without the torch.library dispatch."""
    kwargs = dict(weight_indices=weight_indices, num_weights=num_weights,
                  weight_layout=weight_layout, accumulate=accumulate,
                  out=out, out_dtype=out_dtype, config=config,
                  transposed=transposed, x_scale=x_scale, dy_scale=dy_scale)
    try:
        kplan = plan_segment_matmul_k(x, dy, seg_indptr, **kwargs)
    except _KernelCannot:
        if fallback != "torch":
            raise
        kplan = plan_segment_matmul_k(x, dy, seg_indptr, kernel=False,
                                      **kwargs)
        return _segment_matmul_k_fallback(x, dy, seg_indptr, kplan,
                                          weight_layout, accumulate, out)
    return _run_k(kplan, out, accumulate, catalog)


def _run_k(kplan: _KPlan, out: Any, accumulate: bool, catalog: Any) -> Any:
    """Launches a checked segment_matmul_k call; returns dW."""
    plan = kplan.plan
    device = plan.tensors["x"].device
    dtype = torch_dtype(kplan.out_dtype)
    if plan.empty:
        if out is None:
            return torch.zeros(kplan.out_shape, dtype=dtype, device=device)
        if not accumulate:
            out.zero_()
        return out
    if kplan.indices is None:
        dw = out if out is not None else torch.empty(
            kplan.out_shape, dtype=dtype, device=device)
        _launch_k(plan, dw, catalog)
        return dw
    # Weight indices: one f32 matrix per segment, added onto the weights on
    # the device; invalid indices go to a spare row that is dropped.
    per_group = torch.empty(plan.out_shape, dtype=torch.float32,
                            device=device)
    _launch_k(plan, per_group, catalog)
    count = kplan.num_weights
    groups = plan.out_shape[0]
    if isinstance(kplan.indices, str):
        index = torch.arange(groups, device=device)
    else:
        index = kplan.indices.long()
    index = torch.where((index >= 0) & (index < count), index,
                        torch.full_like(index, count))
    sums = torch.zeros((count + 1,) + plan.out_shape[1:],
                       dtype=torch.float32, device=device)
    sums.index_add_(0, index, per_group)
    result = sums[:count]
    if out is None:
        return result if kplan.out_dtype == "f32" else result.to(dtype)
    if accumulate:
        out.add_(result)
    else:
        out.copy_(result)
    return out


def _launch_k(plan: _Plan, dw: Any, catalog: Any) -> None:
    token = (plan.key, catalog if catalog is None or isinstance(catalog, str)
             else str(catalog), os.environ.get("GGEMM_CATALOG"))
    kernel = _kernels.get(token)
    if kernel is None:
        kernel = kernel_for(plan.problem, catalog)
        _kernels[token] = kernel
    tensors = dict(plan.tensors)
    tensors["dw"] = dw
    kernel.launch(tensors)


def _segment_matmul_k_fallback(x: Any, dy: Any, seg_indptr: Any,
                               kplan: _KPlan, weight_layout: str,
                               accumulate: bool, out: Any) -> Any:
    """The torch computation (one device synchronisation); transposed
    operands are read through their ``[T, *]`` views."""
    indices = kplan.indices if not isinstance(kplan.indices, str) else None
    if kplan.transposed:
        x, dy = x.t(), dy.t()
    result = segment_matmul_k_torch(x, dy, seg_indptr, indices,
                                    kplan.num_weights)
    if weight_layout == "kn":
        result = result.transpose(1, 2)
    if out is None:
        return result.to(torch_dtype(kplan.out_dtype)).contiguous()
    if accumulate:
        out.add_(result)
    else:
        out.copy_(result)
    return out


def segment_matmul_k_torch(x: Any, dy: Any, seg_indptr: Any,
                           weight_indices: Any, num_weights: int) -> Any:
    """The torch fallback of :func:`segment_matmul_k`, in float32."""
    rows = x.shape[0]
    result = torch.zeros((num_weights, dy.shape[1], x.shape[1]),
                         dtype=torch.float32, device=x.device)
    bounds = seg_indptr.tolist()
    indices = (weight_indices.tolist() if weight_indices is not None
               else list(range(len(bounds) - 1)))
    for group, index in enumerate(indices):
        begin = min(max(bounds[group], 0), rows)
        end = min(max(bounds[group + 1], begin), rows)
        if end > begin and 0 <= index < num_weights:
            result[index] += dy[begin:end].float().t() @ x[begin:end].float()
    return result
