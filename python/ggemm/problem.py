"""What one kernel computes: the static description of a ggemm problem op.

A :class:`Problem` holds everything that makes two kernels different (op,
dtypes, N, K, G, layout, which optional tensors, the epilogue, a tile
config); the dynamic sizes (M, the rows per group) are not part of it. It
is the key of the kernel caches, the unit of a catalog spec line, and it
writes the ggemm IR of its kernel (:meth:`Problem.mlir`) — the op syntax of
``docs/GGemmOps.md``. A :class:`RoutingProblem` is the same for the MoE
routing kernel (``ggemm.sort_by_expert``), a :class:`QuantizeProblem` for
the FP8 quantize kernel (``ggemm.quantize``), and :func:`problem_from_spec`
reads a spec line of any.

This module needs neither torch nor the compiler.

Example::

    >>> p = Problem("segment_matmul", "bf16", n=4096, k=7168, groups=8)
    >>> p.spec()["n"], p.kernel_name.endswith("_kernel")
    (4096, True)
    >>> "ggemm.segment_matmul" in p.mlir()
    True
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any, ClassVar, Dict, Mapping, Optional, Tuple, Union

from .runtime import GGemmError

__all__ = ["OPS", "ROUTING_OPS", "QUANTIZE_OPS", "ACTIVATIONS", "FP8_DTYPES",
           "INT8_DTYPES", "SCALED_DTYPES", "FP8_OUTPUT_DTYPES", "Problem",
           "RoutingProblem", "QuantizeProblem", "TileConfig", "SpecError",
           "problem_from_spec"]

#: Problem ops the Python layer builds. ``segment_matmul_k`` is the K-ragged
#: weight gradient (``dw[g] = dy[seg_g]ᵀ · x[seg_g]``): bf16/f16 operands,
#: or e4m3 ones given transposed with 1x128 scales along the tokens; no
#: weight indices, bias, row scale or activation.
OPS = ("segment_matmul", "masked_matmul", "batched_matmul",
       "segment_matmul_k")
#: Ops of :class:`RoutingProblem`: the MoE routing kernel, not a GEMM.
ROUTING_OPS = ("sort_by_expert",)
#: Ops of :class:`QuantizeProblem`: bf16/f16 to FP8 with block scales.
QUANTIZE_OPS = ("quantize",)
#: The scale blocks ``ggemm.quantize`` writes: per token (activations) and
#: per 128x128 block (weights).
QUANTIZE_BLOCKS = ("1x128", "128x128")
#: bf16/f16 operand types (``segment_matmul_k``'s without scales, and the
#: inputs ``ggemm.quantize`` takes).
KRAGGED_DTYPES = ("bf16", "f16")
#: ``segment_matmul_k``'s FP8 operand types: e4m3 dy and x, transposed
#: (``[N, T]``, ``[K, T]``: wgmma's FP8 forms read K-major operands), each
#: with one f32 scale per row and 128-token block (DeepGEMM's
#: ``k_grouped_fp8_gemm_nt_contiguous``). e5m2 is in the IR but not on the
#: GPU.
KRAGGED_FP8_DTYPES = ("f8e4m3",)
#: Epilogue activations of ``#ggemm.epilogue``. ``swiglu`` is gated: w
#: holds 2N rows per weight (gate rows ``[0, N)``, then up rows ``[N, 2N)``,
#: vLLM's ``w13``) and ``y = silu(gate) * up`` has N columns.
ACTIVATIONS = ("none", "relu", "gelu", "silu", "swiglu")
#: The fields only ``segment_matmul`` takes: gather-A (``row_indices``),
#: scatter (``scatter``), atomic scatter-adds (``atomic``).
SEGMENT_ONLY = ("row_indices", "scatter", "atomic")
#: Operand (x, w) element types: bf16/fp16, FP8 (e4m3 or e5m2, x and w
#: alike) with scales, and INT8 (s8) with tensor-wise or per-row scales.
INPUT_DTYPES = ("bf16", "f16", "f8e4m3", "f8e5m2", "s8")
#: FP8 operand types; INT8 ones (s8 x s8 -> exact int32 accumulator,
#: dequantised in the epilogue); the one-byte operand types, which take
#: ``x_scale`` and ``w_scale``; the ggemm IR element type of every operand
#: type.
FP8_DTYPES = ("f8e4m3", "f8e5m2")
INT8_DTYPES = ("s8",)
SCALED_DTYPES = FP8_DTYPES + INT8_DTYPES
MLIR_TYPES = {"bf16": "bf16", "f16": "f16", "f8e4m3": "f8E4M3FN",
              "f8e5m2": "f8E5M2", "s8": "i8"}
#: The FP8 scale granularities that are lowered (``#ggemm.scale_block``):
#: 1x128 activation blocks (one f32 per row and 128 K) with 128x128 weight
#: blocks, promoted per K block; or, applied once in the epilogue,
#: ``tensor`` (one f32 for all of x, one per weight matrix) and ``per_row``
#: (one per token of x, one per output channel of w) in any mix. The first
#: of each is the default.
X_SCALE_BLOCKS = ("1x128", "tensor", "per_row")
W_SCALE_BLOCKS = ("128x128", "tensor", "per_row")
#: INT8's scale granularities, for x and w alike: its int32 accumulator is
#: scaled once, in the epilogue (no per-K-block promotion, so no block
#: scales). The first is the default: per token and per output channel.
INT8_SCALE_BLOCKS = ("per_row", "tensor")
#: The block kinds, which go together.
BLOCK_SCALES = ("1x128", "128x128")
OUTPUT_DTYPES = ("bf16", "f16", "f32")
#: The output types of the forward ops (``segment_matmul_k``'s dw is one
#: of OUTPUT_DTYPES): also e4m3, quantised in the epilogue with one f32
#: scale per row and 128 columns (``y_scale``), ready for the next FP8 op.
FP8_OUTPUT_DTYPES = ("f8e4m3",)
Y_DTYPES = OUTPUT_DTYPES + FP8_OUTPUT_DTYPES
#: Columns of y per ``y_scale`` entry (its 1x128 blocks).
Y_SCALE_BLOCK = 128
INDEX_DTYPES = ("i32", "i64")
LAYOUTS = ("nk", "kn")
RASTERS = ("along_n", "along_m")


class SpecError(GGemmError, ValueError):
    """A problem or catalog spec that names an unknown value or an
    inconsistent combination; the message names the field."""


def _choice(field: str, value: Any, allowed: Tuple[str, ...]) -> str:
    if value not in allowed:
        raise SpecError(f"{field} must be one of {', '.join(allowed)}; "
                        f"got {value!r}")
    return value


def _positive(field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise SpecError(f"{field} must be a positive integer; got {value!r}")
    return value


def _spec_arguments(cls: Any, line: Mapping[str, Any],
                    required: Tuple[str, ...]) -> Dict[str, Any]:
    """The fields of a spec line for ``cls``: unknown and missing ones are
    errors that name them."""
    names = {f.name for f in dataclasses.fields(cls)} | {"op"}
    unknown = sorted(set(line) - names)
    if unknown:
        raise SpecError(f"unknown fields {', '.join(unknown)} (known: "
                        f"{', '.join(sorted(names))})")
    missing = [f for f in required if f not in line]
    if missing:
        raise SpecError(f"missing fields {', '.join(missing)}")
    return dict(line)


class _Named:
    """The names a problem derives from its spec line: the cache and
    catalog key, and the function and kernel (bundle) names, which carry a
    digest of the key so that two problems never share a kernel."""

    def spec(self) -> Dict[str, Any]:
        raise NotImplementedError

    def _name_stem(self) -> str:
        raise NotImplementedError

    @property
    def key(self) -> str:
        """A canonical text key: equal problems, equal keys."""
        return json.dumps(self.spec(), sort_keys=True, separators=(",", ":"))

    @property
    def function_name(self) -> str:
        digest = hashlib.sha256(self.key.encode()).hexdigest()[:12]
        return f"{self._name_stem()}_{digest}"

    @property
    def kernel_name(self) -> str:
        """The bundle's name: the function's name plus ``_kernel``."""
        return self.function_name + "_kernel"


@dataclasses.dataclass(frozen=True)
class TileConfig:
    """``#ggemm.tile_config<...>``: a user-chosen tile (the compiler's
    ``ggemm-select-config`` chooses one when none is given).

    Example::

        >>> TileConfig(block_m=64, block_n=64, consumer_warpgroups=1).mlir()
        '#ggemm.tile_config<block_m = 64, block_n = 64, block_k = 64, stages = 4, consumer_warpgroups = 1, raster = along_n>'
    """

    block_m: int = 128
    block_n: int = 128
    block_k: int = 64
    stages: int = 4
    consumer_warpgroups: int = 2
    raster: str = "along_n"
    #: Swap-AB (few rows per group): block_m token rows go in wgmma's N (a
    #: multiple of 8), block_n weight rows in its M (64 per consumer
    #: warpgroup).
    swap_ab: bool = False
    #: Ping-pong consumers: two warpgroups on alternate tiles (block_m = 64
    #: or 128, consumer_warpgroups = 2), one's epilogue under the other's
    #: main loop; measured slower than the default tiles (NOTES v19).
    pingpong: bool = False
    #: Tiles per raster band: tile ids step across a band of this many
    #: column tiles (along m; row tiles along n) before moving on, so that
    #: a wave of CTAs shares both operands' tiles in L2. 1: the plain
    #: raster; at most 64.
    swizzle: int = 1
    #: With swizzle > 1: only the groups with at least this many tiles along
    #: the walk (row tiles along m) go in bands; 0: every group.
    swizzle_min_tiles: int = 0
    #: Block-scaled FP8: two K blocks per wgmma wait (the first product left
    #: in flight while the second is issued, both promoted after one wait).
    #: Meant for narrow tiles (a third accumulator-sized register set);
    #: ggemm-select-config sets it on FP8 decode tiles (NOTES v23). Not
    #: with pingpong.
    promote_pairs: bool = False
    #: Split each tile's K blocks over this many CTAs of a thread-block
    #: cluster (1 to 8), whose partial sums meet in the first CTA's shared
    #: memory; for products whose tiles leave SMs idle (ggemm-select-config
    #: sets it on FP8 decode tiles, NOTES v35). Not with pingpong.
    split_k: int = 1
    #: With split_k > 1: split only the tiles of the persistent grid's last,
    #: partial wave (whole tiles before, one CTA each), when they fit the
    #: idle CTAs; decided on the device from the tile count. An option:
    #: ggemm-select-config does not set it (on an H100 it ran 1.01-1.03x
    #: at the long-K shapes where the tail splits and 0.94-1.01x
    #: elsewhere, NOTES v36; 0.91-0.99x since v37).
    split_k_tail: bool = False

    def __post_init__(self) -> None:
        for field in ("block_m", "block_n", "block_k", "stages",
                      "consumer_warpgroups", "swizzle"):
            _positive(f"config.{field}", getattr(self, field))
        if self.swizzle > 64:
            raise SpecError(f"config.swizzle must be at most 64 (tiles per "
                            f"raster band); got {self.swizzle}")
        if (isinstance(self.swizzle_min_tiles, bool)
                or not isinstance(self.swizzle_min_tiles, int)
                or not 0 <= self.swizzle_min_tiles <= 1 << 20):
            raise SpecError(f"config.swizzle_min_tiles must be an integer in "
                            f"[0, 2^20]; got {self.swizzle_min_tiles!r}")
        if self.swizzle_min_tiles and self.swizzle == 1:
            raise SpecError("config.swizzle_min_tiles needs swizzle > 1 (it "
                            "says which groups are walked in bands)")
        _choice("config.raster", self.raster, RASTERS)
        if self.promote_pairs is True and self.pingpong is True:
            raise SpecError("config.promote_pairs does not go with pingpong "
                            "(the ping-pong consumers take one K block per "
                            "step)")
        for field in ("swap_ab", "pingpong", "promote_pairs", "split_k_tail"):
            if not isinstance(getattr(self, field), bool):
                raise SpecError(f"config.{field} must be a bool; got "
                                f"{getattr(self, field)!r}")
        if (isinstance(self.split_k, bool) or not isinstance(self.split_k, int)
                or not 1 <= self.split_k <= 8):
            raise SpecError(f"config.split_k must be an integer in [1, 8] "
                            f"(the CTAs of a portable cluster); got "
                            f"{self.split_k!r}")
        if self.split_k > 1 and self.pingpong:
            raise SpecError("config.split_k does not go with pingpong (a "
                            "split-K cluster's CTAs all compute one tile)")
        if self.split_k_tail is True and self.split_k == 1:
            raise SpecError("config.split_k_tail needs split_k > 1 (the CTAs "
                            "that split each tile of the last wave)")

    @classmethod
    def from_any(cls, value: Any) -> Optional["TileConfig"]:
        """``None``, a :class:`TileConfig` or a dict of its fields."""
        if value is None or isinstance(value, TileConfig):
            return value
        if isinstance(value, Mapping):
            unknown = sorted(set(value) - {f.name for f in
                                           dataclasses.fields(cls)})
            if unknown:
                raise SpecError(f"config: unknown fields {', '.join(unknown)}")
            return cls(**value)
        raise SpecError(f"config must be a dict or TileConfig; got "
                        f"{type(value).__name__}")

    def mlir(self) -> str:
        return (f"#ggemm.tile_config<block_m = {self.block_m}, block_n = "
                f"{self.block_n}, block_k = {self.block_k}, stages = "
                f"{self.stages}, consumer_warpgroups = "
                f"{self.consumer_warpgroups}, "
                f"{'swap_ab = true, ' if self.swap_ab else ''}"
                f"raster = {self.raster}"
                f"{', pingpong = true' if self.pingpong else ''}"
                f"{f', swizzle = {self.swizzle}' if self.swizzle != 1 else ''}"
                f"{f', swizzle_min_tiles = {self.swizzle_min_tiles}' if self.swizzle_min_tiles else ''}"
                f"{', promote_pairs = true' if self.promote_pairs else ''}"
                f"{f', split_k = {self.split_k}' if self.split_k != 1 else ''}"
                f"{', split_k_tail = true' if self.split_k_tail else ''}"
                ">")


@dataclasses.dataclass(frozen=True)
class Problem(_Named):
    """The static part of one ggemm problem op.

    ``groups`` is G (segments, masked groups or the batch); ``num_weights``
    is Gw, the matrices in ``w`` (``groups`` unless ``weight_indices``).
    ``index_dtype`` is the dtype of ``seg_indptr`` / ``masked_m``. ``bias``
    (f32 ``[Gw, N]``), ``row_scale`` (f32, one per row) and
    ``weight_indices`` (i32 ``[G]``) say which optional tensors the kernel
    reads. With ``dtype="f8e4m3"`` the kernel also reads ``x_scale`` and
    ``w_scale``: ``x_scale_block`` "1x128" with ``w_scale_block`` "128x128"
    (the defaults; K a multiple of 128), or any mix of "tensor" (x ``[1]``,
    w ``[Gw]``) and "per_row" (x one per row, w ``[Gw, N]``), applied in
    the epilogue; the output defaults to bf16. ``dtype="s8"`` (INT8: an
    exact int32 accumulator) takes the same "tensor" and "per_row" scales,
    "per_row" by default, and no block scales. One-byte operands need K a
    multiple of 16, ``weight_layout="nk"`` and no ``row_indices``.

    ``out_dtype="f8e4m3"`` (segment, masked and batched matmul, any
    operand dtype): y is e4m3, quantised in the epilogue per row and 128
    columns, and the kernel writes those 1x128 scales to ``y_scale`` (f32
    ``[M, ceil(n/128)]``, or ``[G, M, ceil(n/128)]``; MN-major in the IR,
    as the FP8 ops read x_scale). Not with ``accumulate``, ``atomic`` or
    ``scatter``; a tile config must not swap AB and must cover whole
    128-column blocks of y (``block_n``, with swiglu ``block_n / 2``, a
    multiple of 128; ``gate_up_block`` 128).

    ``segment_matmul`` only: ``row_indices`` (gather-A: i32 ``[M]``, row r
    of a segment reads x row ``row_indices[r]``; x has its own row count),
    ``scatter`` (i32 ``scatter_indices`` ``[M]``: result row r goes to y
    row ``scatter_indices[r]``; y has its own row count) and ``atomic``
    (the scattered rows are added with atomic adds; needs ``scatter`` and
    ``accumulate``). With ``activation="swiglu"`` ``n`` is y's columns and
    w (and bias) have ``2n``: gate rows ``[0, n)``, up rows ``[n, 2n)``;
    with ``gate_up_block=B`` w's rows are interleaved in blocks of B gate
    and B up rows instead (:mod:`ggemm.layout`; the bias keeps the
    logical order) and the tile's ``block_n`` is 2B.

    ``segment_matmul_k`` only: ``transposed`` (dy ``[N, T]`` and x ``[K,
    T]``, the tokens innermost, instead of ``[T, N]`` and ``[T, K]``),
    required with ``dtype="f8e4m3"``, whose kernel also reads ``dy_scale``
    ``[N, ceil(T/128)]`` and ``x_scale`` ``[K, ceil(T/128)]`` (f32, one per
    row and 128-token block, MN-major); FP8 dw defaults to bf16. Its spec
    line carries ``"transposed": true``.

    Example::

        >>> p = Problem("masked_matmul", "bf16", n=4096, k=7168, groups=8,
        ...             activation="silu")
        >>> p.out_dtype, p.num_weights
        ('bf16', 8)
    """

    op: str
    dtype: str
    n: int
    k: int
    groups: int
    num_weights: int = 0
    out_dtype: str = ""
    weight_layout: str = "nk"
    index_dtype: str = "i32"
    weight_indices: bool = False
    bias: bool = False
    row_scale: bool = False
    activation: str = "none"
    accumulate: bool = False
    config: Optional[TileConfig] = None
    x_scale_block: str = ""
    w_scale_block: str = ""
    row_indices: bool = False
    scatter: bool = False
    atomic: bool = False
    gate_up_block: int = 0
    transposed: bool = False

    def __post_init__(self) -> None:
        _choice("op", self.op, OPS)
        if self.dtype == "f8e5m2" and self.op == "segment_matmul_k":
            raise SpecError("dtype: f8e5m2 is not lowered yet for "
                            "segment_matmul_k (the FP8 K-ragged kernel "
                            "reads e4m3: dtype 'f8e4m3')")
        _choice("dtype", self.dtype, INPUT_DTYPES)
        scaled = self.dtype in SCALED_DTYPES
        kragged = self.op == "segment_matmul_k"
        if not isinstance(self.transposed, bool):
            raise SpecError(f"transposed must be a bool; got "
                            f"{self.transposed!r}")
        if self.transposed and not kragged:
            raise SpecError(f"transposed: only segment_matmul_k takes "
                            f"transposed operands, not {self.op}")
        if kragged:
            self._check_kragged()
        if not self.out_dtype:
            # FP8 and INT8 products come out in bf16, as DeepGEMM's do.
            object.__setattr__(self, "out_dtype",
                               "bf16" if scaled else self.dtype)
        if scaled and not kragged:
            self._check_scaled()
        elif self.x_scale_block or self.w_scale_block:
            raise SpecError(f"x_scale_block, w_scale_block: scales apply to "
                            f"FP8 and INT8 (s8) operands only, not "
                            f"{self.dtype}")
        _choice("out_dtype", self.out_dtype, Y_DTYPES)
        _choice("weight_layout", self.weight_layout, LAYOUTS)
        _choice("index_dtype", self.index_dtype, INDEX_DTYPES)
        _choice("activation", self.activation, ACTIVATIONS)
        for field in ("n", "k", "groups"):
            _positive(field, getattr(self, field))
        if not self.num_weights:
            object.__setattr__(self, "num_weights", self.groups)
        _positive("num_weights", self.num_weights)
        if self.weight_indices and self.op != "segment_matmul":
            raise SpecError(f"weight_indices: only segment_matmul takes "
                            f"weight indices, not {self.op}")
        if not self.weight_indices and self.num_weights != self.groups:
            raise SpecError(f"num_weights ({self.num_weights}) must equal "
                            f"groups ({self.groups}) without weight_indices")
        self._check_moe_fields()
        object.__setattr__(self, "config", TileConfig.from_any(self.config))
        if self.fp8_output:
            self._check_fp8_output()
        # TMA needs 16-byte row strides: K elements of x and w rows, and N
        # elements of the rows of a [G, K, N] weight.
        if self.k % 8:
            raise SpecError(f"k ({self.k}) must be a multiple of 8 (TMA "
                            f"reads rows of x and w in 16-byte steps)")
        if self.weight_layout == "kn" and self.w_n % 8:
            if self.activation == "swiglu":
                raise SpecError(f"n ({self.n}) must be a multiple of 4 with "
                                f"weight_layout 'kn' and swiglu (w rows are "
                                f"2n = {self.w_n} long, a multiple of 8)")
            raise SpecError(f"n ({self.n}) must be a multiple of 8 with "
                            f"weight_layout 'kn' (w rows are N long)")

    def _family(self) -> str:
        """``"INT8"``, ``"FP8"`` or the operand dtype, for messages."""
        return ("INT8" if self.dtype in INT8_DTYPES else
                "FP8" if self.dtype in FP8_DTYPES else self.dtype)

    def _check_scaled(self) -> None:
        """The scale blocks (defaults filled in) and the limits of one-byte
        operands, FP8 and INT8 alike: K in 16-byte rows, ``nk`` weights,
        128-element (128-byte) K steps."""
        int8 = self.dtype in INT8_DTYPES
        for field, allowed in (
                ("x_scale_block", INT8_SCALE_BLOCKS if int8 else
                 X_SCALE_BLOCKS),
                ("w_scale_block", INT8_SCALE_BLOCKS if int8 else
                 W_SCALE_BLOCKS)):
            value = getattr(self, field) or allowed[0]
            if value not in allowed:
                if int8:
                    raise SpecError(f"{field}: INT8 takes tensor-wise or "
                                    f"per-row scales ('per_row' or "
                                    f"'tensor'), got {value!r}")
                raise SpecError(f"{field}: {value!r} is not lowered "
                                f"(one of {', '.join(allowed)})")
            object.__setattr__(self, field, value)
        if (self.x_scale_block in BLOCK_SCALES) != \
                (self.w_scale_block in BLOCK_SCALES):
            raise SpecError(f"x_scale_block, w_scale_block: "
                            f"{self.x_scale_block!r} with "
                            f"{self.w_scale_block!r} is not lowered "
                            f"(block scales go together; tensor and "
                            f"per_row mix freely)")
        if self.weight_layout != "nk":
            raise SpecError(f"weight_layout: 'kn' with {self._family()} "
                            f"operands is not lowered yet (only 'nk')")
        if self.block_scaled and self.k % 128:
            raise SpecError(f"k ({self.k}) must be a multiple of 128 "
                            f"with FP8 (the 128-wide scale blocks)")
        if isinstance(self.k, int) and self.k % 16:
            raise SpecError(f"k ({self.k}) must be a multiple of 16 with "
                            f"{self._family()} operands (TMA reads rows of "
                            f"1-byte elements in 16-byte steps)")
        if self.config is not None and \
                TileConfig.from_any(self.config).block_k != 128:
            raise SpecError(f"config.block_k must be 128 with "
                            f"{self._family()} (one 128-byte row per stage)")

    @property
    def fp8_output(self) -> bool:
        """Whether y is e4m3, with its 1x128 scales (``y_scale``)."""
        return self.out_dtype in FP8_OUTPUT_DTYPES

    def _check_fp8_output(self) -> None:
        """An e4m3 y is quantised from the values the epilogue computes, a
        row's 128-column block at a time inside one tile: nothing is added
        to y, its rows are its own, and a tile holds whole blocks."""
        for field, why in (("accumulate", "adds to y"),
                           ("atomic", "adds to y"),
                           ("scatter", "scatters y's rows")):
            if getattr(self, field):
                raise SpecError(f"{field}: {why}, but an e4m3 y "
                                f"(out_dtype 'f8e4m3') is quantised from "
                                f"the values the epilogue computes, with "
                                f"one scale per row of y")
        gated = self.activation == "swiglu"
        if self.gate_up_block and self.gate_up_block != Y_SCALE_BLOCK:
            raise SpecError(f"gate_up_block ({self.gate_up_block}) must be "
                            f"{Y_SCALE_BLOCK} with out_dtype 'f8e4m3': a "
                            f"tile (one block of gate and up rows) writes "
                            f"gate_up_block columns of y, which must be "
                            f"whole 128-column blocks")
        config = self.config
        if config is None:
            return
        if config.swap_ab:
            raise SpecError("config.swap_ab: an e4m3 y (out_dtype 'f8e4m3') "
                            "takes each row's block maximum in the tile, "
                            "which a swapped tile does not hold; drop "
                            "swap_ab")
        columns = config.block_n // 2 if gated else config.block_n
        if columns % Y_SCALE_BLOCK:
            raise SpecError(f"config.block_n ({config.block_n}) must make "
                            f"tiles of whole 128-column blocks of an e4m3 "
                            f"y: {'block_n / 2' if gated else 'block_n'} a "
                            f"multiple of {Y_SCALE_BLOCK}")

    @property
    def block_scaled(self) -> bool:
        """FP8 with 1x128 / 128x128 block scales (promoted per K block)."""
        return self.x_scale_block == "1x128"

    @property
    def w_n(self) -> int:
        """w's N extent: ``2n`` with swiglu (gate and up), else ``n``."""
        return 2 * self.n if self.activation == "swiglu" else self.n

    def _check_moe_fields(self) -> None:
        """Gather-A, scatter, atomic and swiglu: ``segment_matmul`` only."""
        for field in SEGMENT_ONLY:
            value = getattr(self, field)
            if not isinstance(value, bool):
                raise SpecError(f"{field} must be a bool; got {value!r}")
            if value and self.op != "segment_matmul":
                raise SpecError(f"{field}: only segment_matmul takes it, not "
                                f"{self.op}")
        if self.activation == "swiglu" and self.op != "segment_matmul":
            raise SpecError(f"activation: swiglu is lowered for "
                            f"segment_matmul only, not {self.op}")
        if self.atomic and not self.scatter:
            raise SpecError("atomic: atomic adds need scatter (the rows "
                            "scatter_indices sends results to)")
        if self.atomic and not self.accumulate:
            raise SpecError("atomic: atomic adds need accumulate (they add "
                            "to y)")
        self._check_gate_up_block()
        if self.row_indices and self.dtype in SCALED_DTYPES:
            raise SpecError(f"row_indices: gathered {self._family()} rows are "
                            f"not lowered yet (which rows of x_scale a "
                            f"gathered row reads is not defined)")

    def _check_gate_up_block(self) -> None:
        """Interleaved gate/up blocks of a swiglu weight: B a multiple of 8
        of at most 128 dividing n, the tile one block (block_n = 2B); with
        ``kn`` weights the tile's 2B columns are read as 128-byte boxes."""
        block = self.gate_up_block
        if isinstance(block, bool) or not isinstance(block, int) \
                or block < 0:
            raise SpecError(f"gate_up_block must be a non-negative int; got "
                            f"{block!r}")
        if not block:
            return
        if self.activation != "swiglu":
            raise SpecError(f"gate_up_block: orders the gate and up rows of "
                            f"a swiglu weight, not of activation "
                            f"{self.activation!r}")
        if block % 8 or block > 128:
            raise SpecError(f"gate_up_block ({block}) must be a multiple of "
                            f"8 of at most 128 (a tile of 2 * gate_up_block "
                            f"<= 256 weight rows)")
        if self.n % block:
            raise SpecError(f"n ({self.n}) must be a multiple of "
                            f"gate_up_block ({block})")
        # swiglu is bf16/f16 only: 2 bytes an element.
        if self.weight_layout == "kn" and block % 32:
            raise SpecError(f"gate_up_block ({block}) with weight_layout "
                            f"'kn' must be a multiple of 32: the tile's "
                            f"{2 * block} weight columns are read as whole "
                            f"128-byte boxes of 64 bf16/f16 elements")
        config = TileConfig.from_any(self.config)
        if config is not None and config.block_n != 2 * block:
            raise SpecError(f"config.block_n ({config.block_n}) must be 2 * "
                            f"gate_up_block ({2 * block}): a tile is one "
                            f"block of gate and up rows")

    def _check_kragged(self) -> None:
        """What ``segment_matmul_k`` (dy [T, N], x [T, K], or with
        ``transposed`` dy [N, T], x [K, T]; dw [G, N, K] or [G, K, N]) does
        not take. N and K must be multiples of 8 (without ``transposed``
        TMA reads the rows of dy and x, N and K long, in 16-byte steps; the
        kernel is only built for such sizes either way). FP8 (e4m3)
        operands must be transposed: the 1x128 scales along the tokens
        (``dy_scale``, ``x_scale``) come with them, with no scale block
        fields."""
        if self.dtype not in KRAGGED_DTYPES + KRAGGED_FP8_DTYPES:
            raise SpecError(f"dtype: segment_matmul_k takes bf16 or f16 "
                            f"operands, or f8e4m3 ones transposed; "
                            f"{self._family()} K-ragged is not lowered (got "
                            f"{self.dtype!r})")
        if self.dtype in KRAGGED_FP8_DTYPES and not self.transposed:
            raise SpecError("transposed: f8e4m3 operands of segment_matmul_k "
                            "must be given transposed, dy [N, T] and x [K, T] "
                            "(wgmma's FP8 forms read K-major operands, and "
                            "the tokens are K here): add \"transposed\": "
                            "true")
        if self.dtype in KRAGGED_FP8_DTYPES and self.config is not None \
                and TileConfig.from_any(self.config).block_k != 128:
            raise SpecError("config.block_k must be 128 with FP8 (one "
                            "128-byte row of tokens per stage)")
        for field, default in (("weight_indices", False), ("bias", False),
                               ("row_scale", False), ("activation", "none"),
                               ("x_scale_block", ""), ("w_scale_block", "")):
            if getattr(self, field) != default:
                raise SpecError(f"{field}: segment_matmul_k has none (got "
                                f"{getattr(self, field)!r})")
        if self.out_dtype and self.out_dtype not in OUTPUT_DTYPES:
            raise SpecError(f"out_dtype: segment_matmul_k writes dw as "
                            f"{', '.join(OUTPUT_DTYPES)}; got "
                            f"{self.out_dtype!r}")
        if self.num_weights and self.num_weights != self.groups:
            raise SpecError(f"num_weights ({self.num_weights}) must equal "
                            f"groups ({self.groups}) for segment_matmul_k "
                            f"(dw has one matrix per group)")
        if isinstance(self.n, int) and not isinstance(self.n, bool) \
                and self.n % 8:
            raise SpecError(f"n ({self.n}) must be a multiple of 8 for "
                            f"segment_matmul_k (TMA reads dy's rows, N "
                            f"long, in 16-byte steps)")

    # -- keys -----------------------------------------------------------
    def spec(self) -> Dict[str, Any]:
        """The catalog spec line of this problem (defaults left out).

        Example::

            >>> Problem("batched_matmul", "f16", n=64, k=64, groups=2).spec()
            {'op': 'batched_matmul', 'dtype': 'f16', 'n': 64, 'k': 64, 'groups': 2}
        """
        line: Dict[str, Any] = {"op": self.op, "dtype": self.dtype,
                                "n": self.n, "k": self.k,
                                "groups": self.groups}
        # Defaults of everything but the five fields above: weight_indices
        # and num_weights stay in the line (two problems that differ only
        # there must not share a key or a kernel name).
        # Scale blocks other than FP8's default (block) ones are always in
        # the line (INT8's always); the defaults take them too, since K need
        # not fit the 128-wide blocks then.
        # transposed is always in the line when set (FP8 K-ragged needs
        # it, so the defaults below have it too).
        blocks: Dict[str, Any] = {}
        if self.dtype in SCALED_DTYPES and not self.block_scaled and \
                self.op != "segment_matmul_k":
            blocks = {"x_scale_block": self.x_scale_block,
                      "w_scale_block": self.w_scale_block}
        if self.transposed:
            blocks["transposed"] = True
        line.update(blocks)
        defaults = Problem(self.op, self.dtype, self.n, self.k, self.groups,
                           **blocks)
        for field in dataclasses.fields(self):
            if field.name in line:
                continue
            value = getattr(self, field.name)
            if value != getattr(defaults, field.name):
                line[field.name] = (dataclasses.asdict(value)
                                    if isinstance(value, TileConfig) else value)
        return line

    @classmethod
    def from_spec(cls, line: Mapping[str, Any]) -> "Problem":
        """Reads one catalog spec line; unknown fields are errors.

        Example::

            >>> Problem.from_spec({"op": "segment_matmul", "dtype": "bf16",
            ...                    "n": 128, "k": 64, "groups": 4}).groups
            4
        """
        return cls(**_spec_arguments(cls, line,
                                     ("op", "dtype", "n", "k", "groups")))

    def _name_stem(self) -> str:
        return f"ggemm_{self.op}_{self.dtype}"

    # -- IR -------------------------------------------------------------
    def mlir(self) -> str:
        """The ggemm IR of this problem: one function, one problem op, N, K,
        G (and Gw) static, the rows dynamic.

        Example::

            >>> print(Problem("segment_matmul", "bf16", n=256, k=128,
            ...               groups=2).mlir())  # doctest: +ELLIPSIS
            func.func @ggemm_segment_matmul_bf16_...(%x: memref<?x128xbf16>, ...
        """
        if self.op == "segment_matmul_k":
            return self._kragged_mlir()
        a, g, gw = MLIR_TYPES[self.dtype], self.groups, self.num_weights
        out = MLIR_TYPES.get(self.out_dtype, self.out_dtype)
        n, k, wn = self.n, self.k, self.w_n
        kb, nb = -(-k // 128), -(-wn // 128)
        # y's 1x128 blocks (y has n columns, also with swiglu).
        ny = -(-n // Y_SCALE_BLOCK)
        w_type = (f"memref<{gw}x{wn}x{k}x{a}>" if self.weight_layout == "nk"
                  else f"memref<{gw}x{k}x{wn}x{a}>")
        # An e4m3 y's scales MN-major, as the FP8 ops read x_scale (the
        # kernel takes their strides at launch: any layout runs).
        if self.op == "segment_matmul":
            x_type = f"memref<?x{k}x{a}>"
            y_type = f"memref<?x{n}x{out}>"
            ys_type = f"memref<?x{ny}xf32, strided<[1, ?]>>"
            rows_type = f"memref<{g + 1}x{self.index_dtype}>"
            row_scale_type = "memref<?xf32>"
        else:
            x_type = f"memref<{g}x?x{k}x{a}>"
            y_type = f"memref<{g}x?x{n}x{out}>"
            ys_type = f"memref<{g}x?x{ny}xf32, strided<[?, 1, ?]>>"
            rows_type = f"memref<{g}x{self.index_dtype}>"
            row_scale_type = f"memref<{g}x?xf32>"
        args = [f"%x: {x_type}", f"%w: {w_type}"]
        clauses = [f"ins(%x, %w : {x_type}, {w_type})"]
        if self.op == "segment_matmul":
            args.append(f"%seg_indptr: {rows_type}")
            clauses.append(f"segments(%seg_indptr : {rows_type})")
            if self.weight_indices:
                args.append(f"%weight_indices: memref<{g}xi32>")
                clauses.append(
                    f"weight_indices(%weight_indices : memref<{g}xi32>)")
            if self.row_indices:
                args.append("%row_indices: memref<?xi32>")
                clauses.append("row_indices(%row_indices : memref<?xi32>)")
        elif self.op == "masked_matmul":
            args.append(f"%masked_m: {rows_type}")
            clauses.append(f"masked_m(%masked_m : {rows_type})")
        if self.dtype in SCALED_DTYPES and self.block_scaled:
            # Activation scales MN-major (docs/Design.md, "FP8 block
            # scales"): rows contiguous, the K-block stride dynamic.
            xs_type = (f"memref<?x{kb}xf32, strided<[1, ?]>>"
                       if self.op == "segment_matmul" else
                       f"memref<{g}x?x{kb}xf32, strided<[?, 1, ?]>>")
            ws_type = f"memref<{gw}x{nb}x{kb}xf32>"
        elif self.dtype in SCALED_DTYPES:
            # Tensor-wise: one for all of x ([1]), one per weight ([Gw]);
            # per row: one per row of x (as row_scale), per output channel.
            xs_type = ("memref<1xf32>" if self.x_scale_block == "tensor"
                       else row_scale_type)
            ws_type = (f"memref<{gw}xf32>" if self.w_scale_block == "tensor"
                       else f"memref<{gw}x{wn}xf32>")
        if self.dtype in SCALED_DTYPES:
            args += [f"%x_scale: {xs_type}", f"%w_scale: {ws_type}"]
            clauses.append(f"scales(%x_scale, %w_scale : {xs_type}, "
                           f"{ws_type})")
        if self.bias:
            bias_type = f"memref<{gw}x{wn}xf32>"
            args.append(f"%bias: {bias_type}")
            clauses.append(f"bias(%bias : {bias_type})")
        if self.row_scale:
            args.append(f"%row_scale: {row_scale_type}")
            clauses.append(f"row_scale(%row_scale : {row_scale_type})")
        if self.scatter:
            args.append("%scatter_indices: memref<?xi32>")
            clauses.append(
                "scatter_indices(%scatter_indices : memref<?xi32>)")
        args.append(f"%y: {y_type}")
        clauses.append(f"outs(%y : {y_type})")
        if self.fp8_output:
            args.append(f"%y_scale: {ys_type}")
            clauses[-1] += f" y_scale(%y_scale : {ys_type})"
        attrs = []
        if self.weight_layout != "nk":
            attrs.append(f"weight_layout = #ggemm.weight_layout<"
                         f"{self.weight_layout}>")
        if self.activation != "none" or self.accumulate:
            # atomic is written only when set: the IR (and so the cache key)
            # of every other kernel stays as it was.
            attrs.append(f"epilogue = #ggemm.epilogue<activation = "
                         f"{self.activation}, accumulate = "
                         f"{'true' if self.accumulate else 'false'}"
                         f"{', atomic = true' if self.atomic else ''}"
                         + (f", gate_up_block = {self.gate_up_block}"
                            if self.gate_up_block else "") + ">")
        if self.config is not None:
            attrs.append(f"config = {self.config.mlir()}")
        if self.dtype in SCALED_DTYPES:
            attrs.append(f"x_scale_block = #ggemm.scale_block<"
                         f"{self.x_scale_block}>")
            attrs.append(f"w_scale_block = #ggemm.scale_block<"
                         f"{self.w_scale_block}>")
        attr_text = f" {{{', '.join(attrs)}}}" if attrs else ""
        return (f"func.func @{self.function_name}({', '.join(args)}) {{\n"
                f"  ggemm.{self.op} " + "\n      ".join(clauses)
                + attr_text + "\n  return\n}\n")

    def _kragged_mlir(self) -> str:
        """``ggemm.segment_matmul_k``: dy [T, N], x [T, K] (with
        ``transposed`` dy [N, T], x [K, T]; FP8 ones with their 1x128
        scales along the tokens, dy_scale [N, ceil(T/128)] and x_scale [K,
        ceil(T/128)] MN-major), seg_indptr [G + 1], dw [G, N, K] (``nk``)
        or [G, K, N] (``kn``); T dynamic."""
        a, out, g, n, k = (MLIR_TYPES[self.dtype], self.out_dtype,
                           self.groups, self.n, self.k)
        if self.transposed:
            dy_type, x_type = f"memref<{n}x?x{a}>", f"memref<{k}x?x{a}>"
        else:
            dy_type, x_type = f"memref<?x{n}x{a}>", f"memref<?x{k}x{a}>"
        rows_type = f"memref<{g + 1}x{self.index_dtype}>"
        dw_type = (f"memref<{g}x{n}x{k}x{out}>" if self.weight_layout == "nk"
                   else f"memref<{g}x{k}x{n}x{out}>")
        attrs = []
        if self.transposed:
            attrs.append("transposed")
        if self.weight_layout != "nk":
            attrs.append(f"weight_layout = #ggemm.weight_layout<"
                         f"{self.weight_layout}>")
        if self.accumulate:
            attrs.append("accumulate")
        if self.config is not None:
            attrs.append(f"config = {self.config.mlir()}")
        attr_text = f" {{{', '.join(attrs)}}}" if attrs else ""
        args = f"%dy: {dy_type}, %x: {x_type}, %seg_indptr: {rows_type}, "
        scales = ""
        if self.dtype in KRAGGED_FP8_DTYPES:
            # One f32 per operand row and 128-token block, MN-major (the
            # block stride is the kernel's to read at launch).
            dys_type = f"memref<{n}x?xf32, strided<[1, ?]>>"
            xs_type = f"memref<{k}x?xf32, strided<[1, ?]>>"
            args += f"%dy_scale: {dys_type}, %x_scale: {xs_type}, "
            scales = (f"\n      scales(%dy_scale, %x_scale : {dys_type}, "
                      f"{xs_type})")
        args += f"%dw: {dw_type}"
        return (f"func.func @{self.function_name}({args}) {{\n"
                f"  ggemm.segment_matmul_k ins(%dy, %x : {dy_type}, {x_type})"
                f"\n      segments(%seg_indptr : {rows_type}){scales}"
                f"\n      outs(%dw : {dw_type}){attr_text}\n  return\n}}\n")


@dataclasses.dataclass(frozen=True)
class RoutingProblem(_Named):
    """The MoE routing kernel of ``ggemm.sort_by_expert``: one CTA sorts the
    (token, k) pairs of ``topk_ids`` (``[P]``, ``index_dtype``) by expert
    into ``seg_indptr`` (``[E + 1]``), ``row_indices`` and ``pair_indices``
    (``[P]``, i32). E, topk and the ids' dtype make the kernel; P is
    dynamic. Its catalog spec line is
    ``{"op": "sort_by_expert", "num_experts": E, "topk": K,
    "index_dtype": "i32"}`` (``index_dtype`` defaults to ``"i32"``).

    Example::

        >>> p = RoutingProblem(num_experts=256, topk=8)
        >>> p.spec()
        {'op': 'sort_by_expert', 'num_experts': 256, 'topk': 8, 'index_dtype': 'i32'}
        >>> "ggemm.sort_by_expert" in p.mlir()
        True
    """

    op: ClassVar[str] = "sort_by_expert"
    num_experts: int
    topk: int
    index_dtype: str = "i32"

    def __post_init__(self) -> None:
        _positive("num_experts", self.num_experts)
        _positive("topk", self.topk)
        # seg_indptr's E + 1 offsets are i32 (the runtime's bound too).
        if self.num_experts > 2 ** 31 - 2:
            raise SpecError(f"num_experts must be at most 2^31 - 2; got "
                            f"{self.num_experts}")
        _choice("index_dtype", self.index_dtype, INDEX_DTYPES)

    def spec(self) -> Dict[str, Any]:
        """The catalog spec line (every field: the key of an i32 kernel
        reads the same whether the line gave index_dtype or not)."""
        return {"op": self.op, "num_experts": self.num_experts,
                "topk": self.topk, "index_dtype": self.index_dtype}

    @classmethod
    def from_spec(cls, line: Mapping[str, Any]) -> "RoutingProblem":
        """Reads one catalog spec line; unknown fields are errors.

        Example::

            >>> RoutingProblem.from_spec({"op": "sort_by_expert",
            ...                           "num_experts": 128, "topk": 8}).topk
            8
        """
        arguments = _spec_arguments(cls, line,
                                    ("op", "num_experts", "topk"))
        _choice("op", arguments.pop("op"), ROUTING_OPS)
        return cls(**arguments)

    def _name_stem(self) -> str:
        return f"ggemm_{self.op}_{self.index_dtype}"

    def mlir(self) -> str:
        """``ggemm.sort_by_expert`` in a function of its four memrefs, the
        pairs dynamic.

        Example::

            >>> print(RoutingProblem(4, 2).mlir())  # doctest: +ELLIPSIS
            func.func @ggemm_sort_by_expert_i32_...(%topk_ids: memref<?xi32>, %seg_indptr: memref<5xi32>, ...
        """
        ids_type = f"memref<?x{self.index_dtype}>"
        indptr_type = f"memref<{self.num_experts + 1}xi32>"
        rows_type = "memref<?xi32>"
        return (f"func.func @{self.function_name}(%topk_ids: {ids_type}, "
                f"%seg_indptr: {indptr_type}, %row_indices: {rows_type}, "
                f"%pair_indices: {rows_type}) {{\n"
                f"  ggemm.sort_by_expert ins(%topk_ids : {ids_type})\n"
                f"      outs(%seg_indptr, %row_indices, %pair_indices : "
                f"{indptr_type}, {rows_type}, {rows_type}) "
                f"{{topk = {self.topk} : i64}}\n  return\n}}\n")


@dataclasses.dataclass(frozen=True)
class QuantizeProblem(_Named):
    """The FP8 quantize kernel of ``ggemm.quantize``: x (``x_dtype``, rank
    ``rank``: ``[rows, K]`` or ``[G, rows, K]``) to e4m3 q and f32 scales of
    ``scale_block`` (``"1x128"`` per token, ``"128x128"`` per block). Rows,
    K and the scales' strides are dynamic: one kernel serves every shape.
    Its catalog spec line is ``{"op": "quantize", "x_dtype": "bf16",
    "scale_block": "1x128", "rank": 2}`` (``rank`` defaults to 2).

    Example::

        >>> p = QuantizeProblem("bf16", "128x128", rank=3)
        >>> p.spec()
        {'op': 'quantize', 'x_dtype': 'bf16', 'scale_block': '128x128', 'rank': 3}
        >>> "#ggemm.scale_block<128x128>" in p.mlir()
        True
    """

    op: ClassVar[str] = "quantize"
    x_dtype: str
    scale_block: str
    rank: int = 2

    def __post_init__(self) -> None:
        _choice("x_dtype", self.x_dtype, KRAGGED_DTYPES)
        _choice("scale_block", self.scale_block, QUANTIZE_BLOCKS)
        if self.rank not in (2, 3):
            raise SpecError(f"rank must be 2 or 3; got {self.rank!r}")

    def spec(self) -> Dict[str, Any]:
        return {"op": self.op, "x_dtype": self.x_dtype,
                "scale_block": self.scale_block, "rank": self.rank}

    @classmethod
    def from_spec(cls, line: Mapping[str, Any]) -> "QuantizeProblem":
        """Reads one catalog spec line; unknown fields are errors.

        Example::

            >>> QuantizeProblem.from_spec({"op": "quantize", "x_dtype": "f16",
            ...                            "scale_block": "1x128"}).rank
            2
        """
        arguments = _spec_arguments(cls, line,
                                    ("op", "x_dtype", "scale_block"))
        _choice("op", arguments.pop("op"), QUANTIZE_OPS)
        return cls(**arguments)

    def _name_stem(self) -> str:
        return f"ggemm_{self.op}_{self.x_dtype}_{self.rank}d"

    def mlir(self) -> str:
        """``ggemm.quantize`` in a function of its three memrefs, every size
        and the scales' strides dynamic.

        Example::

            >>> print(QuantizeProblem("bf16", "1x128").mlir())  # doctest: +ELLIPSIS
            func.func @ggemm_quantize_bf16_2d_...(%x: memref<?x?xbf16>, %q: memref<?x?xf8E4M3FN>, %scale: memref<?x?xf32, strided<[?, ?], offset: ?>>) {
            ...
        """
        dims = "x".join("?" * self.rank)
        strides = ", ".join("?" * self.rank)
        x_type = f"memref<{dims}x{self.x_dtype}>"
        q_type = f"memref<{dims}xf8E4M3FN>"
        s_type = f"memref<{dims}xf32, strided<[{strides}], offset: ?>>"
        block = ("" if self.scale_block == "1x128" else
                 f" {{scale_block = #ggemm.scale_block<{self.scale_block}>}}")
        return (f"func.func @{self.function_name}(%x: {x_type}, %q: {q_type}, "
                f"%scale: {s_type}) {{\n"
                f"  ggemm.quantize ins(%x : {x_type})\n"
                f"      outs(%q, %scale : {q_type}, {s_type}){block}\n"
                f"  return\n}}\n")


def problem_from_spec(line: Mapping[str, Any]
                      ) -> Union[Problem, RoutingProblem, QuantizeProblem]:
    """The problem of one catalog spec line: a routing kernel's for
    ``"op": "sort_by_expert"``, a quantize kernel's for ``"op":
    "quantize"``, else a GEMM's.

    Example::

        >>> problem_from_spec({"op": "sort_by_expert", "num_experts": 8,
        ...                    "topk": 2}).num_experts
        8
    """
    if "op" in line:
        _choice("op", line["op"], OPS + ROUTING_OPS + QUANTIZE_OPS)
    if line.get("op") in ROUTING_OPS:
        return RoutingProblem.from_spec(line)
    if line.get("op") in QUANTIZE_OPS:
        return QuantizeProblem.from_spec(line)
    return Problem.from_spec(line)
