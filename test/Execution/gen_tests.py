#!/usr/bin/env python3
"""Writes the CPU execution tests of test/Execution.

Each test is a self-contained .mlir file: `@main` fills the inputs with a
deterministic hash, poisons the output, runs one ggemm problem op through
`--ggemm-to-cpu` (select-config, tile, convert-ggemm-to-loops, LLVM) and
checks every output element against a naive reference written with plain
scf loops in the same file. It prints how many elements it checked, how many
were wrong (outside the tolerance, or a row outside every group that was
touched) and the largest absolute error; FileCheck expects `errors: 0`.

Inputs are multiples of 1/8 in [-1, 1], exact in bf16 and f16, so the f32
accumulators of the kernel and the reference agree exactly; the tolerance
only absorbs the epilogue's rounding to the output type.

FP8 (f8E4M3FN) cases fill x and w with e4m3 bit patterns drawn from the
hash (every mantissa, exponents 0..8: subnormals up to 3.75, both signs),
with `1x128` activation scales (MN-major, as the GPU kernel wants them) and
`128x128` weight scales in {0.5, 1, 1.5, 2}. The reference decodes FP8 with
a table of the 256 e4m3 values computed by this script (independent of the
compiler's integer decoding) and promotes per 128-wide K block, as the op
defines: `acc += (sum over the block of x * w) * x_scale * w_scale`. FP8
cases with tensor-wise or per-row scales (`x_scale` / `w_scale` of a Case:
`tensor` or `per_row`) draw them from {0.25, 0.5, ..., 2}, and the reference
scales the sum over the whole K once: `acc * (x_scale(m) * w_scale(g, n))`,
x's at the token's row (per_row) or its one entry, w's at the weight (and
output column, per_row).

INT8 (i8) cases fill x and w with integers in [-128, 127] from the hash and
take tensor-wise or per-row scales as above; the reference sums the products
exactly in i64 and converts the sum to f32 once (as the kernel converts its
exact i32 sum) before scaling: `f32(sum of x * w) * (x_scale * w_scale)`.

An e4m3 y (out_type f8E4M3FN) comes with `y_scale`, MN-major (rows
contiguous: the layout an FP8 op's x_scale takes). Per row and 128 columns
the reference takes the largest |value| of its epilogue values, checks the
kernel's scale against `max(amax, 1e-4) * f32(1/448)` (relative 1e-6), and
each element's `e4m3 * scale` against the value within half an e4m3 step
(2^-4 relative, or 2^-9 of the scale among the subnormals); rows outside
every group must leave y and y_scale untouched.

The generated files are committed so lit runs them directly. After changing
this script, regenerate them:

    python3 test/Execution/gen_tests.py

Example of one case:

    Case("segment_basic", "segment", segments=[70, 0, 1, 130, 5], rows=230)
"""

from __future__ import annotations

import bisect
import dataclasses
import math
import os
import random
import struct
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))

#: Written into every output element before the op runs; exact in bf16,
#: f16 and f32, and far from any value the op can produce.
POISON = -7680.0

#: (absolute, relative) tolerance per output type: a rounding step of the
#: output type, since kernel and reference may round a value differently.
TOLERANCE = {"f32": (1e-5, 1e-5), "f16": (1e-3, 2e-3), "bf16": (1e-3, 1e-2),
             # An e4m3 y: half a step of its 3 mantissa bits (the absolute
             # part, among the subnormals, is scaled by the block's scale).
             "f8E4M3FN": (2.0 ** -9, 2.0 ** -4 + 2.0 ** -20)}


@dataclasses.dataclass
class Case:
    """One execution test: a problem op, its shapes, epilogue and config."""

    name: str
    op: str  # segment | masked | batched
    summary: str = ""
    in_type: str = "bf16"
    out_type: str = "bf16"
    layout: str = "nk"
    index_type: str = "i32"
    n: int = 72
    k: int = 104
    # segment_matmul: segment lengths and total rows (>= their sum: the
    # trailing rows belong to no segment and must stay untouched).
    segments: Optional[list[int]] = None
    rows: int = 0
    weight_indices: Optional[list[int]] = None
    # segment_matmul: seg_indptr written as given (device data the kernel
    # cannot trust: decreasing, negative or past `rows`). The reference then
    # checks every row against the owner the op's semantics give it (the
    # clamped segment, or none for a weight index outside the weights).
    indptr: Optional[list[int]] = None
    num_weights: Optional[int] = None
    # masked_matmul: per-group counts (clamped to rows_per_group) and the
    # rows of each group; batched_matmul: batch size and rows per batch.
    counts: Optional[list[int]] = None
    batch: int = 0
    rows_per_group: int = 0
    activation: str = "none"
    bias: bool = False
    row_scale: bool = False
    accumulate: bool = False
    block_m: int = 64
    block_n: int = 64
    raster: str = "along_n"
    # tile_config's swizzle: tile ids walk bands of this many tiles across
    # the raster direction (1: the plain raster).
    swizzle: int = 1
    # tile_config's swizzle_min_tiles: groups with fewer tiles along the
    # walk keep the plain raster.
    swizzle_min_tiles: int = 0
    # Ping-pong consumers (64-row tiles, two warpgroups on alternate tiles
    # on the GPU; the CPU runs the same tile program).
    pingpong: bool = False
    # None: let ggemm-select-config choose.
    explicit_config: bool = True
    # None: the pipeline's default simulated grid; else this many CTAs of a
    # persistent grid.
    num_ctas: Optional[int] = None
    # ggemm-persistent-schedule's grid: persistent (CTAs stride over the
    # tile ids) or tiles (one CTA per tile id).
    grid: str = "persistent"
    # CTAs of a thread-block cluster along m (tile_config's cluster_m): they
    # walk tiles of cluster_m x block_m rows together, each taking its
    # rank's block_m rows.
    cluster_m: int = 1
    # CTAs of a split-K cluster (tile_config's split_k): each runs its share
    # of every tile's K blocks, rank 0 adds the partial sums and stores.
    split_k: int = 1
    # With split_k: split only the tiles of the persistent grid's last,
    # partial wave (tile_config's split_k_tail).
    split_k_tail: bool = False
    # Write the tile program (foreach_tile and its K loop) by hand.
    tile_level: bool = False
    # masked/batched: dynamic group and row extents (memref<?x?x...>).
    dynamic: bool = False
    # Swap-AB (ggemm-swap-ab): block_m is the token tile (a multiple of 8),
    # block_n the weight tile (64 rows per consumer warpgroup).
    swap_ab: bool = False
    # FP8 scale kinds (#ggemm.scale_block): 1x128 / 128x128 block scales,
    # or tensor / per_row on each operand (any mix of those two).
    x_scale: str = "1x128"
    w_scale: str = "128x128"

    @property
    def block_scaled(self) -> bool:
        return self.fp8 and self.x_scale == "1x128"

    @property
    def fp8(self) -> bool:
        return self.in_type in ("f8E4M3FN", "f8E5M2")

    @property
    def int8(self) -> bool:
        return self.in_type == "i8"

    @property
    def quantized(self) -> bool:
        """FP8 or INT8: one-byte operands with scales."""
        return self.fp8 or self.int8

    @property
    def fp8_out(self) -> bool:
        """An e4m3 y quantised in the epilogue, with y_scale."""
        return self.out_type == "f8E4M3FN"

    @property
    def y_blocks(self) -> int:
        return -(-self.n // 128)

    @property
    def block_k(self) -> int:
        return 128 if self.quantized else 64

    @property
    def groups(self) -> int:
        if self.op == "segment":
            if self.indptr is not None:
                return len(self.indptr) - 1
            return len(self.segments)
        if self.op == "masked":
            return len(self.counts)
        return self.batch

    @property
    def weights(self) -> int:
        if self.num_weights is not None:
            return self.num_weights
        return self.groups

    def owners(self) -> list[int]:
        """For `indptr` cases: the group each row belongs to, -1 for none.
        Segments are clamped into [0, rows] (the end no lower than the
        start); groups whose weight index is not a weight own nothing."""
        owner = [-1] * self.rows
        for g in range(self.groups):
            begin = min(max(self.indptr[g], 0), self.rows)
            end = max(min(max(self.indptr[g + 1], 0), self.rows), begin)
            if self.weight_indices is not None and not (
                    0 <= self.weight_indices[g] < self.weights):
                continue
            for r in range(begin, end):
                assert owner[r] < 0, "overlapping segments have no single owner"
                owner[r] = g
        return owner

    def group_rows(self) -> list[tuple[int, int, int]]:
        """(group, first row, row count) of the rows each group owns, in
        the row coordinates of the reference loops."""
        if self.op == "segment" and self.indptr is not None:
            owner = self.owners()
            return [(g, 0, owner.count(g)) for g in range(self.groups)]
        if self.op == "segment":
            out, start = [], 0
            for g, length in enumerate(self.segments):
                out.append((g, start, length))
                start += length
            return out
        if self.op == "masked":
            return [(g, 0, max(0, min(c, self.rows_per_group)))
                    for g, c in enumerate(self.counts)]
        return [(g, 0, self.rows_per_group) for g in range(self.batch)]

    def checked_elements(self) -> int:
        """Every element of y is checked: against the reference inside a
        group, against its old value outside."""
        per_row = self.n + (self.y_blocks if self.fp8_out else 0)
        if self.op == "segment":
            return self.rows * per_row
        return self.groups * self.rows_per_group * per_row

    def num_tiles(self) -> int:
        col_tiles = -(-self.n // self.block_n)
        return sum(-(-rows // self.block_m) * col_tiles
                   for _, _, rows in self.group_rows())


def mlir_float(v: float) -> str:
    return f"{v:.9e}"


class Emitter:
    """Accumulates MLIR text with fresh SSA names."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.counter = 0
        self.indent = 2

    def fresh(self, hint: str = "v") -> str:
        self.counter += 1
        return f"%{hint}{self.counter}"

    def emit(self, line: str) -> None:
        self.lines.append(" " * self.indent + line)

    def op(self, text: str, hint: str = "v") -> str:
        name = self.fresh(hint)
        self.emit(f"{name} = {text}")
        return name

    def const_index(self, v: int) -> str:
        return self.op(f"arith.constant {v} : index", "c")

    def const_f32(self, v: float) -> str:
        return self.op(f"arith.constant {mlir_float(v)} : f32", "f")

    def to_f32(self, value: str, ty: str) -> str:
        if ty == "f32":
            return value
        return self.op(f"arith.extf {value} : {ty} to f32")

    def from_f32(self, value: str, ty: str) -> str:
        if ty == "f32":
            return value
        return self.op(f"arith.truncf {value} : f32 to {ty}")

    def for_loop(self, lb: str, ub: str, iv_hint: str = "i") -> str:
        iv = self.fresh(iv_hint)
        self.emit(f"scf.for {iv} = {lb} to {ub} step %one {{")
        self.indent += 2
        return iv

    def end(self) -> None:
        self.indent -= 2
        self.emit("}")


def start_counts(e: Emitter) -> tuple[str, str]:
    """The checked/errors counters and the largest error, zeroed."""
    stats = e.op("memref.alloca() : memref<2xi64>", "stats")
    maxerr = e.op("memref.alloca() : memref<1xf32>", "maxerr")
    zero64 = e.op("arith.constant 0 : i64")
    e.emit(f"memref.store {zero64}, {stats}[%zero] : memref<2xi64>")
    e.emit(f"memref.store {zero64}, {stats}[%one] : memref<2xi64>")
    e.emit(f"memref.store {e.const_f32(0.0)}, {maxerr}[%zero] : "
           "memref<1xf32>")
    return stats, maxerr


def print_counts(e: Emitter, stats: str, maxerr: str) -> None:
    """Prints the lines FileCheck reads: checked, errors, max_abs_err."""
    checked = e.op(f"memref.load {stats}[%zero] : memref<2xi64>")
    errors = e.op(f"memref.load {stats}[%one] : memref<2xi64>")
    worst = e.op(f"memref.load {maxerr}[%zero] : memref<1xf32>")
    e.emit('vector.print str "checked: "')
    e.emit(f"vector.print {checked} : i64")
    e.emit('vector.print str "errors: "')
    e.emit(f"vector.print {errors} : i64")
    e.emit('vector.print str "max_abs_err: "')
    e.emit(f"vector.print {worst} : f32")


def file_header(summary: str, checked: int, tiles: Optional[str] = None,
                options: Optional[list[str]] = None) -> str:
    """The lit header of a generated test: what it checks, the RUN lines
    through `--ggemm-to-cpu` (with pipeline `options`) and mlir-runner, and
    the FileCheck lines of its `checked` elements and zero errors."""
    prefix = "gemm-opt %s --ggemm-to-cpu"
    if options:
        prefix += f"=\"{' '.join(options)}\""
    header = [
        "// GENERATED by test/Execution/gen_tests.py: edit the generator "
        "and rerun it.",
        f"// {summary}",
    ]
    if tiles is not None:
        header.append(f"// Tiles: {tiles}")
    header += [
        "// REQUIRES: mlir-runner",
        f"// RUN: {prefix} \\",
        "// RUN: | mlir-runner -e main -entry-point-result=void \\",
        "// RUN:     -shared-libs=%mlir_c_runner_utils,"
        "%mlir_runner_utils \\",
        "// RUN: | FileCheck %s",
        f"// CHECK: checked: {checked}{{{{$}}}}",
        "// CHECK-NEXT: errors: 0{{$}}",
        "// CHECK-NEXT: max_abs_err:",
    ]
    return "\n".join(header)


# Helpers shared by every test file: a hash of up to three indices mapped to
# small exact values, fill loops, and the per-element checks.
HELPERS = """
// h(i, j, k, seed) -> ((h mod m) - off) / den: small values, exact in bf16.
func.func private @val(%i: index, %j: index, %k: index, %seed: i64,
                       %m: i64, %off: i64, %den: f32) -> f32 {
  %ii = arith.index_cast %i : index to i64
  %jj = arith.index_cast %j : index to i64
  %kk = arith.index_cast %k : index to i64
  %p0 = arith.constant 7919 : i64
  %p1 = arith.constant 104729 : i64
  %p2 = arith.constant 1299709 : i64
  %p3 = arith.constant 15485863 : i64
  %a0 = arith.muli %ii, %p0 : i64
  %a1 = arith.muli %jj, %p1 : i64
  %a2 = arith.muli %kk, %p2 : i64
  %a3 = arith.muli %seed, %p3 : i64
  %s0 = arith.addi %a0, %a1 : i64
  %s1 = arith.addi %s0, %a2 : i64
  %h0 = arith.addi %s1, %a3 : i64
  %c13 = arith.constant 13 : i64
  %c15 = arith.constant 15 : i64
  %mix = arith.constant 1540483477 : i64
  %mask = arith.constant 2147483647 : i64
  %t0 = arith.shrui %h0, %c13 : i64
  %h1 = arith.xori %h0, %t0 : i64
  %h2 = arith.muli %h1, %mix : i64
  %t1 = arith.shrui %h2, %c15 : i64
  %h3 = arith.xori %h2, %t1 : i64
  %h4 = arith.andi %h3, %mask : i64
  %r = arith.remui %h4, %m : i64
  %s = arith.subi %r, %off : i64
  %f = arith.sitofp %s : i64 to f32
  %v = arith.divf %f, %den : f32
  return %v : f32
}

// Counts one checked element; a bad one adds to the errors. stats =
// [checked, errors], maxerr = [largest |got - expected|].
func.func private @record(%bad: i1, %err: f32, %stats: memref<2xi64>,
                          %maxerr: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i64
  %zero = arith.constant 0 : i64
  %n = memref.load %stats[%c0] : memref<2xi64>
  %n1 = arith.addi %n, %one : i64
  memref.store %n1, %stats[%c0] : memref<2xi64>
  %e = memref.load %stats[%c1] : memref<2xi64>
  %inc = arith.select %bad, %one, %zero : i64
  %e1 = arith.addi %e, %inc : i64
  memref.store %e1, %stats[%c1] : memref<2xi64>
  %m = memref.load %maxerr[%c0] : memref<1xf32>
  %m1 = arith.maximumf %m, %err : f32
  memref.store %m1, %maxerr[%c0] : memref<1xf32>
  return
}

// An element inside a group: bad unless |got - expected| <= atol +
// rtol * |expected| (NaN is bad).
func.func private @check(%got: f32, %expected: f32, %atol: f32, %rtol: f32,
                         %stats: memref<2xi64>, %maxerr: memref<1xf32>) {
  %d = arith.subf %got, %expected : f32
  %err = math.absf %d : f32
  %mag = math.absf %expected : f32
  %rel = arith.mulf %rtol, %mag : f32
  %tol = arith.addf %atol, %rel : f32
  %bad = arith.cmpf ugt, %err, %tol : f32
  call @record(%bad, %err, %stats, %maxerr)
      : (i1, f32, memref<2xi64>, memref<1xf32>) -> ()
  return
}

// An element outside every group: bad unless it still holds its old value.
func.func private @check_untouched(%got: f32, %old: f32, %stats: memref<2xi64>,
                                   %maxerr: memref<1xf32>) {
  %bad = arith.cmpf une, %got, %old : f32
  %d = arith.subf %got, %old : f32
  %err = math.absf %d : f32
  call @record(%bad, %err, %stats, %maxerr)
      : (i1, f32, memref<2xi64>, memref<1xf32>) -> ()
  return
}
"""


def fill_function(rank: int, ty: str) -> str:
    """`@fill<rank>_<ty>(m, seed, mod, off, den)`: m[idx] = val(idx)."""
    return fill_loops(rank, ty, lambda e, v: e.from_f32(v, ty))


def fill_loops(rank: int, ty: str, convert) -> str:
    """`@fill<rank>_<ty>`: m[idx] = convert(val(idx, seed, mod, off, den))."""
    dims = "x".join("?" * rank)
    mt = f"memref<{dims}x{ty}>"
    e = Emitter()
    ivs = []
    for d in range(rank):
        c = e.const_index(d)
        ub = e.op(f"memref.dim %m, {c} : {mt}", "d")
        ivs.append(e.for_loop("%zero", ub))
    idx = ivs + ["%zero"] * (3 - rank)
    v = e.op(f"func.call @val({', '.join(idx)}, %seed, %mod, %off, %den) : "
             "(index, index, index, i64, i64, i64, f32) -> f32")
    v = convert(e, v)
    e.emit(f"memref.store {v}, %m[{', '.join(ivs)}] : {mt}")
    for _ in range(rank):
        e.end()
    body = "\n".join(e.lines)
    return (f"func.func private @fill{rank}_{ty}(%m: {mt}, %seed: i64, "
            f"%mod: i64, %off: i64, %den: f32) {{\n"
            f"  %zero = arith.constant 0 : index\n"
            f"  %one = arith.constant 1 : index\n{body}\n  return\n}}\n")


def config_attr(c: Case) -> str:
    warpgroups = 2 if c.pingpong else (
        c.block_n if c.swap_ab else c.block_m) // 64
    swap = ", swap_ab = true" if c.swap_ab else ""
    return (f"#ggemm.tile_config<block_m = {c.block_m}, block_n = "
            f"{c.block_n}, block_k = {c.block_k}, stages = 2, "
            f"consumer_warpgroups = {warpgroups}{swap}, "
            + (f"cluster_m = {c.cluster_m}, " if c.cluster_m > 1 else "")
            + f"raster = {c.raster}"
            + (", pingpong = true" if c.pingpong else "")
            + (f", swizzle = {c.swizzle}" if c.swizzle > 1 else "")
            + (f", swizzle_min_tiles = {c.swizzle_min_tiles}"
               if c.swizzle_min_tiles else "")
            + (f", split_k = {c.split_k}" if c.split_k > 1 else "")
            + (", split_k_tail = true" if c.split_k_tail else "") + ">")


def e4m3_value(code: int) -> float:
    """The value of an f8E4M3FN bit pattern (bias 7, no infinities)."""
    sign = -1.0 if code & 0x80 else 1.0
    exponent, mantissa = (code >> 3) & 0xF, code & 0x7
    if exponent == 0xF and mantissa == 0x7:
        return float("nan")
    if exponent == 0:
        return sign * mantissa * 2.0 ** -9
    return sign * (1 + mantissa / 8) * 2.0 ** (exponent - 7)


def e5m2_value(code: int) -> float:
    """The value of an f8E5M2 bit pattern (bias 15; exponent 31 is inf or
    NaN, which the fill never writes)."""
    sign = -1.0 if code & 0x80 else 1.0
    exponent, mantissa = (code >> 2) & 0x1F, code & 0x3
    if exponent == 0x1F:
        return float("nan")
    if exponent == 0:
        return sign * mantissa * 2.0 ** -16
    return sign * (1 + mantissa / 4) * 2.0 ** (exponent - 15)


FP8_VALUES = {"f8E4M3FN": ("e4m3", e4m3_value), "f8E5M2": ("e5m2", e5m2_value)}


def fp8_table(ty: str) -> str:
    """A global of the 256 values of an FP8 type, indexed by bit pattern
    (NaN and inf as 0: the fill never writes them)."""
    name, value = FP8_VALUES[ty]
    values = []
    for code in range(256):
        v = value(code)
        values.append(mlir_float(0.0 if v != v or abs(v) == float("inf")
                                 else v))
    return (f'memref.global "private" constant @{name}_values : '
            f'memref<256xf32> = dense<[{", ".join(values)}]>\n')


#: (mantissa bits, lowest exponent field, exponent fields) of the values
#: the FP8 fills draw: e4m3 exponents 0..8 (subnormals up to 3.75), e5m2
#: exponents 8..25 (2^-7 up to 1.75 * 2^10); both signs, any mantissa.
FP8_FILL = {"f8E4M3FN": (3, 0, 9), "f8E5M2": (2, 8, 18)}


def fp8_from_hash(e: Emitter, t: str, ty: str) -> str:
    """An FP8 element of type `ty` from val's integer t < 144: sign t / 72,
    then the exponent and mantissa fields (FP8_FILL)."""
    man_bits, exp_base, exp_count = FP8_FILL[ty]
    t = e.op(f"arith.fptoui {t} : f32 to i32")
    c72, cm, ce, cb, c128 = (e.op(f"arith.constant {v} : i32")
                             for v in (72, 1 << man_bits, exp_count, exp_base,
                                       128))
    sign = e.op(f"arith.divui {t}, {c72} : i32")
    step = e.op(f"arith.divui {t}, {cm} : i32")
    wrapped = e.op(f"arith.remui {step}, {ce} : i32")
    exp = e.op(f"arith.addi {wrapped}, {cb} : i32")
    man = e.op(f"arith.remui {t}, {cm} : i32")
    high = e.op(f"arith.muli {sign}, {c128} : i32")
    mid = e.op(f"arith.muli {exp}, {cm} : i32")
    low = e.op(f"arith.addi {mid}, {man} : i32")
    code = e.op(f"arith.addi {high}, {low} : i32")
    byte = e.op(f"arith.trunci {code} : i32 to i8")
    return e.op(f"arith.bitcast {byte} : i8 to {ty}")


def fill_int8_function(rank: int) -> str:
    """`@fill<rank>_i8(m, seed, 256, 128, 1.0)`: integers in [-128, 127]
    from the hash."""
    return fill_loops(rank, "i8", lambda e, v: e.op(
        f"arith.fptosi {v} : f32 to i8"))


def fill_fp8_function(rank: int, ty: str) -> str:
    """`@fill<rank>_<fp8 type>(m, seed, 144, 0, 1.0)`: bit patterns from the
    hash (e4m3: sign, exponent 0..8, any mantissa; e5m2: sign, exponent
    8..25, any mantissa)."""
    return fill_loops(rank, ty, lambda e, t: fp8_from_hash(e, t, ty))


class TestWriter:
    def __init__(self, case: Case) -> None:
        self.c = case
        c = case
        lead = ("?" if c.op == "segment" else
                "?x?" if c.dynamic else f"{c.groups}x{c.rows_per_group}")
        self.x_type = f"memref<{lead}x{c.k}x{c.in_type}>"
        w_shape = (f"{c.weights}x{c.n}x{c.k}" if c.layout == "nk"
                   else f"{c.weights}x{c.k}x{c.n}")
        self.w_type = f"memref<{w_shape}x{c.in_type}>"
        self.y_type = f"memref<{lead}x{c.n}x{c.out_type}>"
        self.rows_type = (f"memref<{c.groups + 1}x{c.index_type}>"
                          if c.op == "segment"
                          else f"memref<{c.groups}x{c.index_type}>")
        self.widx_type = f"memref<{c.groups}xi32>"
        self.bias_type = f"memref<{c.weights}x{c.n}xf32>"
        self.rs_type = f"memref<{lead}xf32>"
        if c.fp8_out:
            # MN-major (rows contiguous), stored as [NB, rows] or [NB, G, M].
            nb = c.y_blocks
            if c.op == "segment":
                self.ys_storage = f"memref<{nb}x?xf32>"
                self.ys_type = f"memref<?x{nb}xf32, strided<[1, ?]>>"
                self.ys_perm = "(d0, d1) -> (d1, d0)"
            else:
                g, mm = c.groups, c.rows_per_group
                self.ys_storage = f"memref<{nb}x{g}x{mm}xf32>"
                self.ys_type = (f"memref<{g}x{mm}x{nb}xf32, "
                                f"strided<[{mm}, 1, {g * mm}]>>")
                self.ys_perm = "(d0, d1, d2) -> (d1, d2, d0)"
        self.fills: set[tuple[int, str]] = set()
        #: Module-level ops the test needs (constant tables).
        self.globals: list[str] = []
        if c.fp8_out and c.in_type != "f8E4M3FN":
            self.globals.append(fp8_table("f8E4M3FN"))
        if c.quantized and not c.block_scaled:
            assert c.layout == "nk" and not c.dynamic
            assert c.x_scale in ("tensor", "per_row")
            assert c.w_scale in ("tensor", "per_row")
            if c.x_scale == "tensor":
                self.xs_type = "memref<1xf32>"
            elif c.op == "segment":
                self.xs_type = "memref<?xf32>"
            else:
                self.xs_type = f"memref<{c.groups}x{c.rows_per_group}xf32>"
            self.ws_type = (f"memref<{c.weights}xf32>" if c.w_scale == "tensor"
                            else f"memref<{c.weights}x{c.n}xf32>")
            if c.fp8:
                self.globals.append(fp8_table(c.in_type))
        elif c.fp8:
            assert c.x_scale == "1x128" and c.w_scale == "128x128"
            assert c.k % 128 == 0 and c.layout == "nk" and not c.dynamic
            self.kb = c.k // 128
            nb = -(-c.n // 128)
            if c.op == "segment":
                # MN-major: rows contiguous, stored as [KB, M].
                self.xs_storage = f"memref<{self.kb}x?xf32>"
                self.xs_type = f"memref<?x{self.kb}xf32, strided<[1, ?]>>"
                self.xs_perm = "(d0, d1) -> (d1, d0)"
            else:
                g, mm = c.groups, c.rows_per_group
                self.xs_storage = f"memref<{self.kb}x{g}x{mm}xf32>"
                self.xs_type = (f"memref<{g}x{mm}x{self.kb}xf32, "
                                f"strided<[{mm}, 1, {g * mm}]>>")
                self.xs_perm = "(d0, d1, d2) -> (d1, d2, d0)"
            self.ws_type = f"memref<{c.weights}x{nb}x{self.kb}xf32>"
            self.globals.append(fp8_table(c.in_type))

    # -- the function that holds the ggemm op ------------------------------
    def gemm_function(self) -> str:
        c = self.c
        args = [("x", self.x_type), ("w", self.w_type)]
        if c.op != "batched":
            args.append(("rows", self.rows_type))
        if c.weight_indices is not None:
            args.append(("widx", self.widx_type))
        if c.quantized:
            args += [("xs", self.xs_type), ("ws", self.ws_type)]
        if c.bias:
            args.append(("bias", self.bias_type))
        if c.row_scale:
            args.append(("rs", self.rs_type))
        args.append(("y", self.y_type))
        if c.fp8_out:
            args.append(("ys", self.ys_type))
        sig = ", ".join(f"%{n}: {t}" for n, t in args)
        if c.tile_level:
            body = self.tile_level_body()
        else:
            body = self.problem_op()
        return f"func.func @gemm({sig}) {{\n{body}  return\n}}\n"

    def attributes(self) -> list[str]:
        c = self.c
        attrs = []
        if c.layout == "kn":
            attrs.append("weight_layout = #ggemm.weight_layout<kn>")
        epilogue = []
        if c.activation != "none":
            epilogue.append(f"activation = {c.activation}")
        if c.accumulate:
            epilogue.append("accumulate = true")
        if epilogue:
            attrs.append(f"epilogue = #ggemm.epilogue<{', '.join(epilogue)}>")
        if c.quantized:
            attrs.append(f"x_scale_block = #ggemm.scale_block<{c.x_scale}>")
            attrs.append(f"w_scale_block = #ggemm.scale_block<{c.w_scale}>")
        if c.explicit_config:
            attrs.append(f"config = {config_attr(c)}")
        return attrs

    def problem_op(self) -> str:
        c = self.c
        lines = [f"  ggemm.{c.op}_matmul ins(%x, %w : {self.x_type}, "
                 f"{self.w_type})"]
        if c.op == "segment":
            lines.append(f"      segments(%rows : {self.rows_type})")
        elif c.op == "masked":
            lines.append(f"      masked_m(%rows : {self.rows_type})")
        if c.weight_indices is not None:
            lines.append(f"      weight_indices(%widx : {self.widx_type})")
        if c.quantized:
            lines.append(f"      scales(%xs, %ws : {self.xs_type}, "
                         f"{self.ws_type})")
        if c.bias:
            lines.append(f"      bias(%bias : {self.bias_type})")
        if c.row_scale:
            lines.append(f"      row_scale(%rs : {self.rs_type})")
        lines.append(f"      outs(%y : {self.y_type})")
        if c.fp8_out:
            lines[-1] += f" y_scale(%ys : {self.ys_type})"
        attrs = self.attributes()
        if attrs:
            lines[-1] += " {" + ",\n       ".join(attrs) + "}"
        return "\n".join(lines) + "\n"

    def tile_level_body(self) -> str:
        """The tile program ggemm-tile would write, by hand."""
        c = self.c
        assert c.op == "segment", "tile-level tests are written for segments"
        cfg = config_attr(c)
        acc = f"!ggemm.accumulator<{c.block_m}x{c.block_n}xf32>"
        a_tile = f"!ggemm.tile<{c.block_m}x64x{c.in_type}>"
        b_tile = (f"!ggemm.tile<{c.block_n}x64x{c.in_type}>"
                  if c.layout == "nk"
                  else f"!ggemm.tile<{c.block_n}x64x{c.in_type}, mn_major>")
        # Without weight indices a group is its own weight.
        wv = "%weight" if c.weight_indices is not None else "%g"
        weight = (f"    %weight = ggemm.weight_index %widx[%g] : "
                  f"{self.widx_type}\n"
                  if c.weight_indices is not None else "")
        b_index = (f"{wv}, %col, %k" if c.layout == "nk"
                   else f"{wv}, %k, %col")
        bias = f" bias(%bias[{wv}] : {self.bias_type})" if c.bias else ""
        rs = f" row_scale(%rs : {self.rs_type})" if c.row_scale else ""
        epi = []
        if c.activation != "none":
            epi.append(f"activation = {c.activation}")
        if c.accumulate:
            epi.append("accumulate = true")
        epi_attr = (f" {{epilogue = #ggemm.epilogue<{', '.join(epi)}>}}"
                    if epi else "")
        k_blocks = -(-c.k // 64)
        return (
            f"  %c0 = arith.constant 0 : index\n"
            f"  %groups = arith.constant {c.groups} : index\n"
            f"  %n = arith.constant {c.n} : index\n"
            f"  %m = memref.dim %x, %c0 : {self.x_type}\n"
            f"  ggemm.foreach_tile segment rows(%rows : {self.rows_type})\n"
            f"      groups(%groups) rows_per_group(%c0) num_rows(%m) "
            f"num_cols(%n)\n"
            f"      config({cfg}) {{\n"
            f"  ^bb0(%g: index, %row: index, %row_end: index, %col: index):\n"
            f"{weight}"
            f"    %c1 = arith.constant 1 : index\n"
            f"    %c64 = arith.constant 64 : index\n"
            f"    %kblocks = arith.constant {k_blocks} : index\n"
            f"    %zero = ggemm.zero_accumulator : {acc}\n"
            f"    %acc = scf.for %kb = %c0 to %kblocks step %c1\n"
            f"        iter_args(%a = %zero) -> ({acc}) {{\n"
            f"      %k = arith.muli %kb, %c64 : index\n"
            f"      %ta = ggemm.load_tile %x[%row, %k] : {self.x_type} -> "
            f"{a_tile}\n"
            f"      %tb = ggemm.load_tile %w[{b_index}] : {self.w_type} -> "
            f"{b_tile}\n"
            f"      %next = ggemm.mma %ta, %tb, %a : {a_tile}, {b_tile} -> "
            f"{acc}\n"
            f"      scf.yield %next : {acc}\n"
            f"    }}\n"
            f"    ggemm.store_tile %acc to %y row(%row) row_end(%row_end) "
            f"col(%col){bias}{rs}{epi_attr}\n"
            f"        : {acc}, {self.y_type}\n"
            f"  }}\n")

    # -- main ---------------------------------------------------------------
    def fill(self, e: Emitter, value: str, mtype: str, rank: int, ty: str,
             seed: int, mod: int, off: int, den: float) -> None:
        self.fills.add((rank, ty))
        dyn = "x".join("?" * rank)
        cast = e.op(f"memref.cast {value} : {mtype} to memref<{dyn}x{ty}>")
        e.emit(f"func.call @fill{rank}_{ty}({cast}, "
               f"{e.op(f'arith.constant {seed} : i64')}, "
               f"{e.op(f'arith.constant {mod} : i64')}, "
               f"{e.op(f'arith.constant {off} : i64')}, "
               f"{e.const_f32(den)}) : (memref<{dyn}x{ty}>, i64, i64, i64, "
               f"f32) -> ()")

    def main_function(self) -> str:
        c = self.c
        e = Emitter()
        e.emit("%zero = arith.constant 0 : index")
        e.emit("%one = arith.constant 1 : index")
        if c.fp8:
            name = FP8_VALUES[c.in_type][0]
            e.emit(f"%fp8_values = memref.get_global @{name}_values : "
                   "memref<256xf32>")
        if c.fp8_out:
            e.emit("%e4m3_out_values = memref.get_global @e4m3_values : "
                   "memref<256xf32>")
        dyn_rows = ""
        if c.op == "segment":
            e.emit(f"%m = arith.constant {c.rows} : index")
            dyn_rows = "%m"
        elif c.dynamic:
            e.emit(f"%g = arith.constant {c.groups} : index")
            e.emit(f"%m = arith.constant {c.rows_per_group} : index")
            dyn_rows = "%g, %m"
        x = e.op(f"memref.alloc({dyn_rows}) : {self.x_type}", "x")
        w = e.op(f"memref.alloc() : {self.w_type}", "w")
        y = e.op(f"memref.alloc({dyn_rows}) : {self.y_type}", "y")
        y_old = e.op(f"memref.alloc({dyn_rows}) : {self.y_type}", "yold")
        xr = 2 if c.op == "segment" else 3
        if c.fp8:
            self.fill(e, x, self.x_type, xr, c.in_type, 1, 144, 0, 1.0)
            self.fill(e, w, self.w_type, 3, c.in_type, 2, 144, 0, 1.0)
        elif c.int8:
            self.fill(e, x, self.x_type, xr, c.in_type, 1, 256, 128, 1.0)
            self.fill(e, w, self.w_type, 3, c.in_type, 2, 256, 128, 1.0)
        else:
            self.fill(e, x, self.x_type, xr, c.in_type, 1, 17, 8, 8.0)
            self.fill(e, w, self.w_type, 3, c.in_type, 2, 17, 8, 8.0)
        args = [x, w]
        types = [self.x_type, self.w_type]
        rows = None
        if c.op != "batched":
            rows = e.op(f"memref.alloc() : {self.rows_type}", "rows")
            if c.op == "segment" and c.indptr is not None:
                values = c.indptr
            elif c.op == "segment":
                values = [0]
                for length in c.segments:
                    values.append(values[-1] + length)
            else:
                values = c.counts
            for i, v in enumerate(values):
                cv = e.op(f"arith.constant {v} : {c.index_type}")
                e.emit(f"memref.store {cv}, {rows}[{e.const_index(i)}] : "
                       f"{self.rows_type}")
            args.append(rows)
            types.append(self.rows_type)
        widx = None
        if c.weight_indices is not None:
            widx = e.op(f"memref.alloc() : {self.widx_type}", "widx")
            for i, v in enumerate(c.weight_indices):
                cv = e.op(f"arith.constant {v} : i32")
                e.emit(f"memref.store {cv}, {widx}[{e.const_index(i)}] : "
                       f"{self.widx_type}")
            args.append(widx)
            types.append(self.widx_type)
        self.xs = self.ws = None
        if c.quantized and not c.block_scaled:
            # Scales (r + 1) / 4 for r < 8: 0.25, 0.5, ..., 2; per row and
            # per column they differ, so a scale read at a wrong row or
            # column shows.
            per_row_x = c.x_scale == "per_row"
            dyn = "%m" if per_row_x and c.op == "segment" else ""
            self.xs = e.op(f"memref.alloc({dyn}) : {self.xs_type}", "xs")
            self.fill(e, self.xs, self.xs_type,
                      2 if per_row_x and c.op != "segment" else 1, "f32", 6,
                      8, -1, 4.0)
            self.ws = e.op(f"memref.alloc() : {self.ws_type}", "ws")
            self.fill(e, self.ws, self.ws_type,
                      2 if c.w_scale == "per_row" else 1, "f32", 7, 8, -1,
                      4.0)
            args += [self.xs, self.ws]
            types += [self.xs_type, self.ws_type]
        elif c.fp8:
            # Scales (r + 1) / 2 for r < 4: 0.5, 1, 1.5, 2.
            storage = e.op(f"memref.alloc({'%m' if c.op == 'segment' else ''})"
                           f" : {self.xs_storage}", "xst")
            self.fill(e, storage, self.xs_storage,
                      2 if c.op == "segment" else 3, "f32", 6, 4, -1, 2.0)
            self.xs = e.op(f"memref.transpose {storage} {self.xs_perm} : "
                           f"{self.xs_storage} to {self.xs_type}", "xs")
            self.ws = e.op(f"memref.alloc() : {self.ws_type}", "ws")
            self.fill(e, self.ws, self.ws_type, 3, "f32", 7, 4, -1, 2.0)
            args += [self.xs, self.ws]
            types += [self.xs_type, self.ws_type]
        bias = rs = None
        if c.bias:
            bias = e.op(f"memref.alloc() : {self.bias_type}", "bias")
            self.fill(e, bias, self.bias_type, 2, "f32", 3, 9, 4, 4.0)
            args.append(bias)
            types.append(self.bias_type)
        if c.row_scale:
            rs = e.op(f"memref.alloc({dyn_rows}) : {self.rs_type}", "rs")
            self.fill(e, rs, self.rs_type, 1 if c.op == "segment" else 2,
                      "f32", 4, 5, -1, 4.0)
            args.append(rs)
            types.append(self.rs_type)
        yr = 2 if c.op == "segment" else 3
        if c.accumulate:
            self.fill(e, y, self.y_type, yr, c.out_type, 5, 7, 3, 2.0)
        elif c.fp8_out:
            # One e4m3 code everywhere (FP8 fills take val() as a code
            # index: modulus 1, offset -71).
            self.fill(e, y, self.y_type, yr, c.out_type, 0, 1, -71, 1.0)
        else:
            # val() with modulus 1 is the constant -off / den.
            self.fill(e, y, self.y_type, yr, c.out_type, 0, 1, int(-POISON),
                      1.0)
        e.emit(f"memref.copy {y}, {y_old} : {self.y_type} to {self.y_type}")
        args.append(y)
        types.append(self.y_type)
        self.ys = self.ys_old = None
        if c.fp8_out:
            rows_dyn = "%m" if c.op == "segment" else ""
            storage = e.op(f"memref.alloc({rows_dyn}) : {self.ys_storage}",
                           "yst")
            storage_old = e.op(f"memref.alloc({rows_dyn}) : "
                               f"{self.ys_storage}", "ysold")
            self.fill(e, storage, self.ys_storage, yr, "f32", 0, 1,
                      int(-POISON), 1.0)
            e.emit(f"memref.copy {storage}, {storage_old} : {self.ys_storage}"
                   f" to {self.ys_storage}")
            self.ys = e.op(f"memref.transpose {storage} {self.ys_perm} : "
                           f"{self.ys_storage} to {self.ys_type}", "ys")
            self.ys_old = e.op(f"memref.transpose {storage_old} "
                               f"{self.ys_perm} : {self.ys_storage} to "
                               f"{self.ys_type}", "ysold")
            args.append(self.ys)
            types.append(self.ys_type)
        e.emit(f"func.call @gemm({', '.join(args)}) : "
               f"({', '.join(types)}) -> ()")

        stats, maxerr = start_counts(e)
        atol, rtol = TOLERANCE[c.out_type]
        atol_v, rtol_v = e.const_f32(atol), e.const_f32(rtol)
        n = e.const_index(c.n)
        k = e.const_index(c.k)

        if c.indptr is not None:
            self.owner_reference(e, x, w, widx, bias, rs, y, y_old, stats,
                                 maxerr, n, k, atol_v, rtol_v)
            return self.finish_main(e, stats, maxerr, [x, w, y, y_old])
        # The reference, group by group.
        groups = e.const_index(c.groups)
        g = e.for_loop("%zero", groups, "g")
        if c.op == "segment":
            begin = e.op(f"memref.load {rows}[{g}] : {self.rows_type}")
            gnext = e.op(f"arith.addi {g}, %one : index")
            end = e.op(f"memref.load {rows}[{gnext}] : {self.rows_type}")
            begin = e.op(f"arith.index_cast {begin} : {c.index_type} to index")
            end = e.op(f"arith.index_cast {end} : {c.index_type} to index")
        elif c.op == "masked":
            begin = "%zero"
            count = e.op(f"memref.load {rows}[{g}] : {self.rows_type}")
            count = e.op(f"arith.index_cast {count} : {c.index_type} to index")
            count = e.op(f"arith.maxsi {count}, %zero : index")
            end = e.op(f"arith.minsi {count}, "
                       f"{e.const_index(c.rows_per_group)} : index")
        else:
            begin, end = "%zero", e.const_index(c.rows_per_group)
        if widx:
            wi = e.op(f"memref.load {widx}[{g}] : {self.widx_type}")
            wi = e.op(f"arith.index_cast {wi} : i32 to index")
        else:
            wi = g
        lead = [] if c.op == "segment" else [g]
        r = e.for_loop(begin, end, "r")
        if c.fp8_out:
            self.check_fp8_row(e, lead, r, wi, x, w, bias, rs, y, stats,
                               maxerr, n, k, atol_v, rtol_v)
        else:
            col = e.for_loop("%zero", n, "c")
            self.check_element(e, lead, r, col, wi, x, w, bias, rs, y, y_old,
                               stats, maxerr, k, atol_v, rtol_v)
            e.end()
        e.end()
        if c.op == "masked":
            # Rows past the count belong to no group.
            self.untouched_rows(e, lead, end, e.const_index(c.rows_per_group),
                                n, y, y_old, stats, maxerr)
        e.end()
        if c.op == "segment":
            # Rows past the last segment belong to no group.
            last = e.op(f"memref.load {rows}[{groups}] : {self.rows_type}")
            last = e.op(f"arith.index_cast {last} : {c.index_type} to index")
            self.untouched_rows(e, [], last, "%m", n, y, y_old, stats, maxerr)

        return self.finish_main(e, stats, maxerr, [x, w, y, y_old])

    def finish_main(self, e: Emitter, stats: str, maxerr: str,
                    buffers: list[str]) -> str:
        """Prints the counts FileCheck reads and frees x, w, y, y_old."""
        print_counts(e, stats, maxerr)
        types = [self.x_type, self.w_type, self.y_type, self.y_type]
        for buf, ty in zip(buffers, types):
            e.emit(f"memref.dealloc {buf} : {ty}")
        body = "\n".join(e.lines)
        return f"func.func @main() {{\n{body}\n  return\n}}\n"

    def check_element(self, e: Emitter, lead: list[str], r: str, col: str,
                      wi: str, x: str, w: str, bias: Optional[str],
                      rs: Optional[str], y: str, y_old: str, stats: str,
                      maxerr: str, k: str, atol_v: str, rtol_v: str) -> None:
        """Computes y[lead..., r, col] from the inputs and checks it."""
        c = self.c
        v = self.reference_value(e, lead, r, col, wi, x, w, bias, rs, k)
        y_index = ", ".join(lead + [r, col])
        if c.accumulate:
            old = e.op(f"memref.load {y_old}[{y_index}] : {self.y_type}")
            v = e.op(f"arith.addf {v}, {e.to_f32(old, c.out_type)} : f32")
        # Compare in the output type: round the reference the same way.
        expected = e.to_f32(e.from_f32(v, c.out_type), c.out_type)
        got = e.op(f"memref.load {y}[{y_index}] : {self.y_type}")
        e.emit(f"func.call @check({e.to_f32(got, c.out_type)}, {expected}, "
               f"{atol_v}, {rtol_v}, {stats}, {maxerr}) : (f32, f32, f32, "
               "f32, memref<2xi64>, memref<1xf32>) -> ()")

    def check_fp8_row(self, e: Emitter, lead: list[str], r: str, wi: str,
                      x: str, w: str, bias: Optional[str], rs: Optional[str],
                      y: str, stats: str, maxerr: str, n: str, k: str,
                      atol_v: str, rtol_v: str) -> None:
        """Row r of an e4m3 y, block by block: the scale from the block's
        reference values, then each element's e4m3 value times the scale
        the kernel wrote against the reference value."""
        c = self.c
        blk = e.for_loop("%zero", e.const_index(c.y_blocks), "blk")
        c0 = e.op(f"arith.muli {blk}, {e.const_index(128)} : index")
        c1 = e.op(f"arith.addi {c0}, {e.const_index(128)} : index")
        c1 = e.op(f"arith.minsi {c1}, {n} : index")
        col, m, amax = e.fresh("c"), e.fresh("m"), e.fresh("amax")
        e.emit(f"{amax} = scf.for {col} = {c0} to {c1} step %one "
               f"iter_args({m} = {e.const_f32(0.0)}) -> (f32) {{")
        e.indent += 2
        v = self.reference_value(e, lead, r, col, wi, x, w, bias, rs, k)
        neg = e.op(f"arith.negf {v} : f32")
        mag = e.op(f"arith.maximumf {v}, {neg} : f32")
        e.emit(f"scf.yield {e.op(f'arith.maximumf {m}, {mag} : f32')} : f32")
        e.end()
        floored = e.op(f"arith.maximumf {amax}, {e.const_f32(1e-4)} : f32")
        want = e.op(f"arith.mulf {floored}, "
                    f"{e.op('arith.constant ' + mlir_float(struct.unpack('f', struct.pack('f', 1 / 448))[0]) + ' : f32')}"
                    " : f32")
        scale_index = ", ".join(lead + [r, blk])
        scale = e.op(f"memref.load {self.ys}[{scale_index}] : {self.ys_type}")
        e.emit(f"func.call @check({scale}, {want}, {e.const_f32(0.0)}, "
               f"{e.const_f32(1e-6)}, {stats}, {maxerr}) : (f32, f32, f32, "
               "f32, memref<2xi64>, memref<1xf32>) -> ()")
        col = e.for_loop(c0, c1, "c")
        v = self.reference_value(e, lead, r, col, wi, x, w, bias, rs, k)
        q = e.op(f"memref.load {y}[{', '.join(lead + [r, col])}] : "
                 f"{self.y_type}")
        byte = e.op(f"arith.bitcast {q} : f8E4M3FN to i8")
        code = e.op(f"arith.index_cast {e.op(f'arith.extui {byte} : i8 to i32')}"
                    " : i32 to index")
        decoded = e.op(f"memref.load %e4m3_out_values[{code}] : "
                       "memref<256xf32>")
        got = e.op(f"arith.mulf {decoded}, {scale} : f32")
        atol = e.op(f"arith.mulf {atol_v}, {scale} : f32")
        e.emit(f"func.call @check({got}, {v}, {atol}, {rtol_v}, {stats}, "
               f"{maxerr}) : (f32, f32, f32, f32, memref<2xi64>, "
               "memref<1xf32>) -> ()")
        e.end()
        e.end()

    def reference_value(self, e: Emitter, lead: list[str], r: str, col: str,
                        wi: str, x: str, w: str, bias: Optional[str],
                        rs: Optional[str], k: str) -> str:
        """y[lead..., r, col] from the inputs in f32, before accumulate and
        the rounding to the output type."""
        c = self.c
        if c.int8:
            v = self.int8_scaled_dot(e, lead, r, col, wi, x, w, k)
        elif c.fp8 and not c.block_scaled:
            v = self.fp8_scaled_dot(e, lead, r, col, wi, x, w, k)
        elif c.fp8:
            v = self.fp8_dot(e, lead, r, col, wi, x, w)
        else:
            kk = e.fresh("k")
            s = e.fresh("s")
            acc = e.fresh("acc")
            e.emit(f"{acc} = scf.for {kk} = %zero to {k} step %one "
                   f"iter_args({s} = {e.const_f32(0.0)}) -> (f32) {{")
            e.indent += 2
            xv = e.op(f"memref.load {x}[{', '.join(lead + [r, kk])}] : "
                      f"{self.x_type}")
            w_idx = [wi, col, kk] if c.layout == "nk" else [wi, kk, col]
            wv = e.op(f"memref.load {w}[{', '.join(w_idx)}] : {self.w_type}")
            prod = e.op(f"arith.mulf {e.to_f32(xv, c.in_type)}, "
                        f"{e.to_f32(wv, c.in_type)} : f32")
            e.emit(f"scf.yield {e.op(f'arith.addf {s}, {prod} : f32')} : f32")
            e.end()
            v = acc
        if bias:
            bv = e.op(f"memref.load {bias}[{wi}, {col}] : {self.bias_type}")
            v = e.op(f"arith.addf {v}, {bv} : f32")
        v = self.reference_activation(e, v)
        if rs:
            rv = e.op(f"memref.load {rs}[{', '.join(lead + [r])}] : "
                      f"{self.rs_type}")
            v = e.op(f"arith.mulf {v}, {rv} : f32")
        return v

    def decode_fp8(self, e: Emitter, v: str) -> str:
        """The f32 value of an FP8 element, from the script's table."""
        byte = e.op(f"arith.bitcast {v} : {self.c.in_type} to i8")
        wide = e.op(f"arith.extui {byte} : i8 to i32")
        index = e.op(f"arith.index_cast {wide} : i32 to index")
        return e.op(f"memref.load %fp8_values[{index}] : memref<256xf32>")

    def fp8_sum(self, e: Emitter, lead: list[str], r: str, col: str,
                wi: str, x: str, w: str, k0: str, k1: str) -> str:
        """sum of x[..., r, k] * w[wi, col, k] over k in [k0, k1), in
        order, the FP8 elements decoded by the script's table."""
        kk, p, part = e.fresh("k"), e.fresh("p"), e.fresh("part")
        e.emit(f"{part} = scf.for {kk} = {k0} to {k1} step %one "
               f"iter_args({p} = {e.const_f32(0.0)}) -> (f32) {{")
        e.indent += 2
        xv = e.op(f"memref.load {x}[{', '.join(lead + [r, kk])}] : "
                  f"{self.x_type}")
        wv = e.op(f"memref.load {w}[{wi}, {col}, {kk}] : {self.w_type}")
        prod = e.op(f"arith.mulf {self.decode_fp8(e, xv)}, "
                    f"{self.decode_fp8(e, wv)} : f32")
        e.emit(f"scf.yield {e.op(f'arith.addf {p}, {prod} : f32')} : f32")
        e.end()
        return part

    def int8_scaled_dot(self, e: Emitter, lead: list[str], r: str,
                        col: str, wi: str, x: str, w: str, k: str) -> str:
        """f32(sum over K of x * w, exact in i64) * (x_scale * w_scale)."""
        kk, p, total = e.fresh("k"), e.fresh("p"), e.fresh("total")
        e.emit(f"{total} = scf.for {kk} = %zero to {k} step %one "
               f"iter_args({p} = {e.op('arith.constant 0 : i64')}) -> (i64) {{")
        e.indent += 2
        xv = e.op(f"memref.load {x}[{', '.join(lead + [r, kk])}] : "
                  f"{self.x_type}")
        wv = e.op(f"memref.load {w}[{wi}, {col}, {kk}] : {self.w_type}")
        prod = e.op(f"arith.muli {e.op(f'arith.extsi {xv} : i8 to i64')}, "
                    f"{e.op(f'arith.extsi {wv} : i8 to i64')} : i64")
        e.emit(f"scf.yield {e.op(f'arith.addi {p}, {prod} : i64')} : i64")
        e.end()
        return self.scale_epilogue(e, lead, r, col, wi, e.op(
            f"arith.sitofp {total} : i64 to f32"))

    def scale_epilogue(self, e: Emitter, lead: list[str], r: str, col: str,
                       wi: str, acc: str) -> str:
        """acc * (x_scale * w_scale), each scale read where its kind says."""
        c = self.c
        x_index = "%zero" if c.x_scale == "tensor" else ", ".join(lead + [r])
        xs = e.op(f"memref.load {self.xs}[{x_index}] : {self.xs_type}")
        w_index = wi if c.w_scale == "tensor" else f"{wi}, {col}"
        ws = e.op(f"memref.load {self.ws}[{w_index}] : {self.ws_type}")
        factor = e.op(f"arith.mulf {xs}, {ws} : f32")
        return e.op(f"arith.mulf {acc}, {factor} : f32")

    def fp8_scaled_dot(self, e: Emitter, lead: list[str], r: str, col: str,
                       wi: str, x: str, w: str, k: str) -> str:
        """(sum over all of K of x * w, in order) * (x_scale * w_scale):
        tensor-wise and per-row scales do not change along K."""
        acc = self.fp8_sum(e, lead, r, col, wi, x, w, "%zero", k)
        return self.scale_epilogue(e, lead, r, col, wi, acc)

    def fp8_dot(self, e: Emitter, lead: list[str], r: str, col: str, wi: str,
                x: str, w: str) -> str:
        """sum over 128-wide K blocks of (block dot product) * x_scale *
        w_scale, each block summed in order from its first K."""
        kb, acc, s = e.fresh("kb"), e.fresh("acc"), e.fresh("s")
        e.emit(f"{acc} = scf.for {kb} = %zero to {e.const_index(self.kb)} "
               f"step %one iter_args({s} = {e.const_f32(0.0)}) -> (f32) {{")
        e.indent += 2
        k0 = e.op(f"arith.muli {kb}, {e.const_index(128)} : index")
        k1 = e.op(f"arith.addi {k0}, {e.const_index(128)} : index")
        part = self.fp8_sum(e, lead, r, col, wi, x, w, k0, k1)
        xs = e.op(f"memref.load {self.xs}[{', '.join(lead + [r, kb])}] : "
                  f"{self.xs_type}")
        nb = e.op(f"arith.divui {col}, {e.const_index(128)} : index")
        ws = e.op(f"memref.load {self.ws}[{wi}, {nb}, {kb}] : {self.ws_type}")
        scaled = e.op(f"arith.mulf {e.op(f'arith.mulf {part}, {xs} : f32')}, "
                      f"{ws} : f32")
        e.emit(f"scf.yield {e.op(f'arith.addf {s}, {scaled} : f32')} : f32")
        e.end()
        return acc

    def owner_reference(self, e: Emitter, x: str, w: str, widx: Optional[str],
                        bias: Optional[str], rs: Optional[str], y: str,
                        y_old: str, stats: str, maxerr: str, n: str, k: str,
                        atol_v: str, rtol_v: str) -> None:
        """Row by row: the owner's product, or the old value for rows no
        group owns (see Case.owners)."""
        c = self.c
        owners = ", ".join(str(o) for o in c.owners())
        self.globals.append(
            f'memref.global "private" constant @owners : '
            f'memref<{c.rows}xi32> = dense<[{owners}]>\n')
        e.emit(f"%owners = memref.get_global @owners : memref<{c.rows}xi32>")
        r = e.for_loop("%zero", "%m", "r")
        o = e.op(f"memref.load %owners[{r}] : memref<{c.rows}xi32>")
        owned = e.op(f"arith.cmpi sge, {o}, {e.op('arith.constant 0 : i32')} "
                     ": i32")
        e.emit(f"scf.if {owned} {{")
        e.indent += 2
        g = e.op(f"arith.index_cast {o} : i32 to index")
        if widx:
            wi = e.op(f"memref.load {widx}[{g}] : {self.widx_type}")
            wi = e.op(f"arith.index_cast {wi} : i32 to index")
        else:
            wi = g
        col = e.for_loop("%zero", n, "c")
        self.check_element(e, [], r, col, wi, x, w, bias, rs, y, y_old, stats,
                           maxerr, k, atol_v, rtol_v)
        e.end()
        e.indent -= 2
        e.emit("} else {")
        e.indent += 2
        col = e.for_loop("%zero", n, "c")
        got = e.op(f"memref.load {y}[{r}, {col}] : {self.y_type}")
        old = e.op(f"memref.load {y_old}[{r}, {col}] : {self.y_type}")
        e.emit(f"func.call @check_untouched({e.to_f32(got, c.out_type)}, "
               f"{e.to_f32(old, c.out_type)}, {stats}, {maxerr}) : (f32, f32, "
               "memref<2xi64>, memref<1xf32>) -> ()")
        e.end()
        e.indent -= 2
        e.emit("}")
        e.end()

    def untouched_rows(self, e: Emitter, lead: list[str], begin: str,
                       end: str, n: str, y: str, y_old: str, stats: str,
                       maxerr: str) -> None:
        c = self.c
        r = e.for_loop(begin, end, "r")
        col = e.for_loop("%zero", n, "c")
        index = ", ".join(lead + [r, col])
        got = e.op(f"memref.load {y}[{index}] : {self.y_type}")
        old = e.op(f"memref.load {y_old}[{index}] : {self.y_type}")
        e.emit(f"func.call @check_untouched({self.as_f32_bits(e, got)}, "
               f"{self.as_f32_bits(e, old)}, {stats}, {maxerr}) : (f32, f32, "
               "memref<2xi64>, memref<1xf32>) -> ()")
        e.end()
        if c.fp8_out:
            blk = e.for_loop("%zero", e.const_index(c.y_blocks), "blk")
            index = ", ".join(lead + [r, blk])
            got = e.op(f"memref.load {self.ys}[{index}] : {self.ys_type}")
            old = e.op(f"memref.load {self.ys_old}[{index}] : {self.ys_type}")
            e.emit(f"func.call @check_untouched({got}, {old}, {stats}, "
                   f"{maxerr}) : (f32, f32, memref<2xi64>, memref<1xf32>) "
                   "-> ()")
            e.end()
        e.end()

    def as_f32_bits(self, e: Emitter, v: str) -> str:
        """y's value for an exact comparison: as f32, or an e4m3 byte's
        code (LLVM has no FP8 conversion on the CPU)."""
        c = self.c
        if not c.fp8_out:
            return e.to_f32(v, c.out_type)
        byte = e.op(f"arith.bitcast {v} : {c.out_type} to i8")
        return e.op(f"arith.uitofp {byte} : i8 to f32")

    def reference_activation(self, e: Emitter, v: str) -> str:
        """Written independently of the back ends' epilogue."""
        act = self.c.activation
        if act == "none":
            return v
        if act == "relu":
            positive = e.op(f"arith.cmpf ogt, {v}, {e.const_f32(0.0)} : f32")
            return e.op(f"arith.select {positive}, {v}, {e.const_f32(0.0)} "
                        ": f32")
        if act == "gelu":
            # 0.5 x (1 + erf(x / sqrt(2)))
            scaled = e.op(f"arith.divf {v}, {e.const_f32(2.0 ** 0.5)} : f32")
            erf = e.op(f"math.erf {scaled} : f32")
            one_plus = e.op(f"arith.addf {erf}, {e.const_f32(1.0)} : f32")
            half = e.op(f"arith.mulf {v}, {e.const_f32(0.5)} : f32")
            return e.op(f"arith.mulf {half}, {one_plus} : f32")
        assert act == "silu"
        # x * sigmoid(x)
        neg = e.op(f"arith.negf {v} : f32")
        exp = e.op(f"math.exp {neg} : f32")
        denom = e.op(f"arith.addf {exp}, {e.const_f32(1.0)} : f32")
        sigmoid = e.op(f"arith.divf {e.const_f32(1.0)}, {denom} : f32")
        return e.op(f"arith.mulf {v}, {sigmoid} : f32")

    def text(self) -> str:
        c = self.c
        main = self.main_function()
        gemm = self.gemm_function()
        fills = "\n".join(fill_fp8_function(rank, ty) if ty in FP8_VALUES
                          else fill_int8_function(rank) if ty == "i8"
                          else fill_function(rank, ty)
                          for rank, ty in sorted(self.fills))
        options = []
        if c.num_ctas is not None:
            options.append(f"num-ctas={c.num_ctas}")
        if c.grid != "persistent":
            options.append(f"grid={c.grid}")
        header = file_header(
            c.summary, c.checked_elements(),
            f"{c.num_tiles()}" + (" (config chosen by ggemm-select-config)"
                                  if not c.explicit_config else ""),
            options)
        globals_ = "".join(self.globals)
        return (header + "\n\n" + globals_ + gemm + "\n" + main
                + HELPERS + "\n" + fills)


CASES = [
    # --- segment_matmul -------------------------------------------------
    Case("segment_basic", "segment",
         "segment_matmul bf16 -> bf16, nk: an empty, a 1-row and multi-tile "
         "segments, trailing rows in no segment, N and K not tile multiples",
         segments=[70, 0, 1, 130, 5], rows=230),
    Case("segment_weight_indices", "segment",
         "segment_matmul with weight_indices (repeated, one weight unused), "
         "i64 seg_indptr, bias, f32 out",
         segments=[3, 65, 0, 64, 17], rows=160, index_type="i64",
         weight_indices=[2, 0, 2, 3, 0], num_weights=4, bias=True,
         out_type="f32"),
    Case("segment_kn_f16", "segment",
         "segment_matmul f16 -> f16, weight_layout kn, relu, 1-row segments",
         in_type="f16", out_type="f16", layout="kn", n=136, k=72,
         segments=[1, 1, 1, 200], rows=203, activation="relu"),
    Case("segment_kn_weight_indices", "segment",
         "segment_matmul kn with weight_indices and bias, bf16 -> f32",
         layout="kn", segments=[64, 65, 63], rows=200, out_type="f32",
         weight_indices=[1, 1, 0], num_weights=2, bias=True, n=80, k=200),
    Case("segment_gelu_f32", "segment",
         "segment_matmul with bias and exact (erf) gelu, f32 out",
         segments=[40, 90, 2], rows=140, bias=True, activation="gelu",
         out_type="f32"),
    Case("segment_gelu_bf16", "segment",
         "segment_matmul with gelu, bf16 out, i64 seg_indptr",
         segments=[90, 40], rows=130, activation="gelu", index_type="i64"),
    Case("segment_silu_f16", "segment",
         "segment_matmul with bias, silu and row_scale, f16 out",
         segments=[5, 64, 0, 70], rows=150, bias=True, activation="silu",
         row_scale=True, out_type="f16"),
    Case("segment_silu_f32", "segment",
         "segment_matmul with silu, f32 out, weight_indices",
         segments=[33, 0, 97], rows=131, activation="silu", out_type="f32",
         weight_indices=[2, 1, 0], num_weights=3),
    Case("segment_row_scale_f32", "segment",
         "segment_matmul with row_scale only (MoE routing weights), f32 out",
         segments=[10, 120, 1], rows=140, row_scale=True, out_type="f32"),
    Case("segment_accumulate_bf16", "segment",
         "segment_matmul accumulating into y with bias and row_scale, bf16",
         segments=[66, 1, 0, 60], rows=135, bias=True, row_scale=True,
         accumulate=True),
    Case("segment_accumulate_f32", "segment",
         "segment_matmul accumulating into y with relu, f32 out, kn",
         segments=[20, 100], rows=125, accumulate=True, activation="relu",
         out_type="f32", layout="kn"),
    Case("segment_raster_m", "segment",
         "segment_matmul with raster along_m over a 4x4 tile grid per "
         "segment",
         segments=[200, 3, 129], rows=340, n=200, k=72, raster="along_m",
         out_type="f32"),
    Case("segment_swizzle_m", "segment",
         "segment_matmul along m in bands of 3 column tiles over 5 columns "
         "(a last band of 2), segments ending "
         "inside tiles, an empty one, accumulating (a tile mapped twice "
         "would add twice, one never mapped would leave y unchanged)",
         segments=[200, 0, 3, 129], rows=340, n=264, k=72, raster="along_m",
         swizzle=3, num_ctas=5, accumulate=True, out_type="f32"),
    Case("segment_swizzle_n", "segment",
         "segment_matmul along n in bands of 2 row tiles (4- and 3-row-tile "
         "segments: last bands of 2 and 1), weight indices, bias",
         segments=[250, 150, 1], rows=420, n=200, k=64, raster="along_n",
         swizzle=2, num_ctas=3, weight_indices=[1, 0, 1], num_weights=2,
         bias=True, accumulate=True, out_type="f32"),
    Case("segment_swizzle_min_tiles", "segment",
         "segment_matmul along m in bands of 2 column tiles only for the "
         "segments of at least 3 row tiles (4, 3: banded; 2, 1, 0: plain), "
         "accumulating",
         segments=[200, 65, 129, 1, 0, 180], rows=600, n=200, k=64,
         raster="along_m", swizzle=2, swizzle_min_tiles=3, num_ctas=4,
         accumulate=True, out_type="f32"),
    Case("segment_swizzle_min_tiles_cluster_2", "segment",
         "segment_matmul on 2-CTA clusters (128-row cluster tiles) along m "
         "in bands of 2 column tiles for the segments of at least 2 cluster "
         "row tiles (300, 129: banded; 128, 5: plain), weight indices, "
         "accumulating",
         segments=[300, 128, 5, 129], rows=600, n=200, k=64,
         raster="along_m", swizzle=2, swizzle_min_tiles=2, cluster_m=2,
         num_ctas=6, weight_indices=[1, 0, 1, 0], num_weights=2,
         accumulate=True, out_type="f32"),
    Case("masked_swizzle_cluster_2", "masked",
         "masked_matmul on 2-CTA clusters along m in bands of 2 column "
         "tiles (3 columns), counts ending in either half of a cluster tile",
         counts=[300, 0, 129, 64], rows_per_group=300, n=136, num_ctas=4,
         cluster_m=2, raster="along_m", swizzle=2, accumulate=True,
         out_type="f32"),
    Case("segment_all_empty", "segment",
         "segment_matmul whose segments are all empty: nothing is written",
         segments=[0, 0, 0], rows=17),
    Case("segment_one_cta", "segment",
         "segment_matmul with a one-CTA grid: one CTA walks every tile",
         segments=[65, 1, 127], rows=200, num_ctas=1, out_type="f32"),
    Case("segment_many_ctas", "segment",
         "segment_matmul with more CTAs than tiles: some CTAs get none",
         segments=[65, 1, 127], rows=200, num_ctas=64, out_type="f16",
         in_type="f16"),
    Case("segment_cluster_2", "segment",
         "segment_matmul on 2-CTA clusters: 128-row tiles split by the "
         "cluster rank, segments ending inside either half (or before the "
         "second), an empty one, rows after the last",
         segments=[65, 0, 129, 1, 200, 64], rows=470, n=136, k=72,
         num_ctas=6, out_type="f32", cluster_m=2),
    Case("segment_cluster_2_odd_grid", "segment",
         "segment_matmul on 2-CTA clusters with an odd simulated grid of 5 "
         "CTAs (run as 4: whole clusters), along m, weight indices",
         segments=[33, 190, 7], rows=240, n=72, k=64, num_ctas=5,
         raster="along_m", cluster_m=2, weight_indices=[1, 0, 1],
         num_weights=2),
    Case("masked_cluster_2", "masked",
         "masked_matmul on 2-CTA clusters: counts ending in the first and "
         "second half of a cluster tile, bias and silu",
         counts=[100, 0, 64, 129], rows_per_group=130, num_ctas=4,
         cluster_m=2, bias=True, activation="silu"),
    Case("segment_pingpong", "segment",
         "segment_matmul with a pingpong config (64x128 tiles; alternate "
         "tiles go to the two consumer warpgroups on the GPU): segments "
         "ending inside tiles, an empty one, an odd tile count per CTA, "
         "along m",
         segments=[65, 0, 129, 1, 70], rows=300, n=200, k=136, num_ctas=3,
         block_n=128, raster="along_m", pingpong=True, bias=True,
         activation="gelu"),
    Case("segment_pingpong_m128", "segment",
         "segment_matmul with a pingpong config of 128-row tiles (two m64 "
         "row blocks per warpgroup on the GPU): segments ending in the "
         "first or second block of a tile, an empty one, f32 out",
         segments=[63, 130, 0, 200, 1], rows=420, n=136, k=72, num_ctas=3,
         block_m=128, pingpong=True, out_type="f32", row_scale=True),
    Case("masked_pingpong_cluster_2", "masked",
         "masked_matmul with a pingpong config on 2-CTA clusters: counts "
         "ending in the first and second half of a cluster tile",
         counts=[100, 0, 64, 129], rows_per_group=130, num_ctas=4,
         cluster_m=2, pingpong=True, row_scale=True, out_type="f32"),
    Case("segment_block_128", "segment",
         "segment_matmul with 128x128 tiles and two consumer warpgroups",
         segments=[129, 0, 250, 1], rows=400, block_m=128, block_n=128,
         n=136, k=136, bias=True, weight_indices=[3, 2, 1, 0], num_weights=4),
    Case("segment_small_k", "segment",
         "segment_matmul with K = 8 and N = 8: one k-block, mostly tail",
         segments=[7, 70], rows=80, n=8, k=8, out_type="f32"),
    Case("segment_selected_config", "segment",
         "segment_matmul with the config chosen by ggemm-select-config",
         segments=[30, 1, 20], rows=60, n=64, k=64, explicit_config=False,
         out_type="f32"),
    Case("segment_tile_level", "segment",
         "a hand-written tile program (foreach_tile with its K loop), "
         "scheduled one CTA per tile",
         segments=[70, 1, 0, 63], rows=140, tile_level=True, grid="tiles",
         weight_indices=[3, 0, 1, 2], num_weights=4, bias=True,
         activation="silu", out_type="f32"),
    Case("segment_tile_level_kn", "segment",
         "a hand-written tile program with an mn_major (kn) B tile, "
         "persistent grid of 2 CTAs",
         segments=[1, 90, 40], rows=140, tile_level=True, layout="kn",
         num_ctas=2, n=136, k=72, row_scale=True, accumulate=True),
    Case("segment_untrusted_indptr", "segment",
         "segment_matmul with device data it cannot trust: a negative start, "
         "an offset past the rows (clamped to them), a decreasing last "
         "offset (an empty segment), weight indices past the weights and "
         "negative (those groups are skipped, their rows untouched)",
         indptr=[-5, 40, 60, 75, 500, 20], rows=150,
         weight_indices=[0, 7, 1, -1, 2], num_weights=3, bias=True,
         out_type="f32"),
    Case("segment_untrusted_grid_tiles", "segment",
         "an untrusted seg_indptr (past the rows, then decreasing) and a "
         "weight index past the weights, one CTA per tile, 128-row tiles",
         indptr=[0, 70, 300, 150, 90], rows=200, block_m=128, block_n=64,
         weight_indices=[2, 0, 1, 5], num_weights=3, grid="tiles",
         out_type="bf16"),
    Case("segment_grid_tiles", "segment",
         "segment_matmul scheduled one CTA per tile: the host-side bound "
         "launches more CTAs than tiles, the extra ones find none",
         segments=[65, 0, 1, 127, 3], rows=210, grid="tiles", out_type="f32",
         raster="along_m", n=136),
    # --- FP8 with block scales ------------------------------------------
    Case("fp8_segment_basic", "segment",
         "segment_matmul f8E4M3FN -> f32 with 1x128 / 128x128 block scales: "
         "an empty, a 1-row and multi-tile segments, N not a tile multiple "
         "(its last column tile spans two weight-scale rows)",
         in_type="f8E4M3FN", out_type="f32", segments=[70, 0, 1, 130, 5],
         rows=230, n=200, k=256, block_m=64, block_n=64),
    Case("fp8_segment_block_256", "segment",
         "FP8 segment_matmul with 128x256 tiles (two weight scales per tile), "
         "weight_indices, bias and silu, bf16 out",
         in_type="f8E4M3FN", out_type="bf16", segments=[129, 3, 0, 60],
         rows=200, n=384, k=384, block_m=128, block_n=256,
         weight_indices=[2, 0, 1, 2], num_weights=3, bias=True,
         activation="silu"),
    Case("fp8_segment_block_192", "segment",
         "FP8 segment_matmul with 64x192 tiles: a column tile starts at 0 or "
         "64 within a 128-column weight-scale block (b_offset), so its "
         "middle 64 columns take the first or the second of its two scales; "
         "the last tile is cut at N = 450; weight_indices, f32 out",
         in_type="f8E4M3FN", out_type="f32", segments=[129, 3, 0, 200],
         rows=340, n=450, k=384, block_m=64, block_n=192,
         weight_indices=[1, 0, 1, 2], num_weights=3),
    Case("fp8_segment_row_scale", "segment",
         "FP8 segment_matmul with 64x128 tiles, row_scale and accumulate, "
         "one CTA",
         in_type="f8E4M3FN", out_type="f32", segments=[1, 90, 40], rows=140,
         n=136, k=128, block_m=64, block_n=128, row_scale=True,
         accumulate=True, num_ctas=1),
    Case("fp8_e5m2_segment", "segment",
         "FP8 segment_matmul in f8E5M2 (bias 15, 2 mantissa bits, values up "
         "to 1.75 * 2^10) with block scales, weight_indices, f32 out",
         in_type="f8E5M2", out_type="f32", segments=[65, 0, 3, 100],
         rows=170, n=136, k=256, block_m=64, block_n=128,
         weight_indices=[1, 1, 0, 2], num_weights=3),
    Case("fp8_masked", "masked",
         "FP8 masked_matmul: counts 0, a partial and a clamped group; "
         "MN-major [KB, G, Mmax] activation scales",
         in_type="f8E4M3FN", out_type="bf16", counts=[0, 70, 200],
         rows_per_group=96, n=128, k=256, block_m=64, block_n=64),
    Case("fp8_batched", "batched",
         "FP8 batched_matmul with bias, f32 out, one CTA per tile",
         in_type="f8E4M3FN", out_type="f32", batch=3, rows_per_group=65,
         n=130, k=128, bias=True, grid="tiles", block_m=64, block_n=128),
    # --- FP8 with tensor-wise and per-row scales ------------------------
    Case("fp8_tensor_segment", "segment",
         "FP8 segment_matmul with tensor-wise scales (one for x, one per "
         "weight) and weight_indices: an empty, a 1-row and a multi-tile "
         "segment ending inside a tile, trailing rows in no segment, K not a "
         "multiple of 128, f32 out",
         in_type="f8E4M3FN", out_type="f32", segments=[70, 0, 1, 50, 5],
         rows=140, n=136, k=160, block_m=64, block_n=64,
         weight_indices=[2, 0, 1, 2, 1], num_weights=3, x_scale="tensor",
         w_scale="tensor"),
    Case("fp8_per_row_segment", "segment",
         "FP8 segment_matmul with per-token x and per-channel w scales "
         "(torch._scaled_mm row-wise), 128x256 tiles (no promotion "
         "registers), odd N, bias and gelu, bf16 out",
         in_type="f8E4M3FN", out_type="bf16", segments=[129, 3, 0, 60],
         rows=200, n=264, k=256, block_m=128, block_n=256, bias=True,
         activation="gelu", x_scale="per_row", w_scale="per_row"),
    Case("fp8_mixed_segment", "segment",
         "FP8 segment_matmul, per-token x and tensor-wise w scales, "
         "row_scale and accumulate, one CTA, f8E5M2",
         in_type="f8E5M2", out_type="f32", segments=[1, 90, 40], rows=140,
         n=72, k=128, block_m=64, block_n=64, row_scale=True,
         accumulate=True, num_ctas=1, x_scale="per_row", w_scale="tensor"),
    Case("fp8_per_row_masked", "masked",
         "FP8 masked_matmul with per-token [G, Mmax] x scales and "
         "per-channel w scales: counts 0, a partial and a clamped group",
         in_type="f8E4M3FN", out_type="bf16", counts=[0, 70, 200],
         rows_per_group=96, n=72, k=256, block_m=64, block_n=64,
         x_scale="per_row", w_scale="per_row"),
    Case("fp8_tensor_masked", "masked",
         "FP8 masked_matmul with a tensor-wise x scale and per-channel w "
         "scales, relu, f16 out",
         in_type="f8E4M3FN", out_type="f16", counts=[33, 0, 64],
         rows_per_group=64, n=136, k=128, block_m=64, block_n=128,
         activation="relu", x_scale="tensor", w_scale="per_row"),
    Case("fp8_tensor_batched", "batched",
         "FP8 batched_matmul with tensor-wise scales (FlashInfer's bmm_fp8), "
         "bias, one CTA per tile, f32 out",
         in_type="f8E4M3FN", out_type="f32", batch=3, rows_per_group=65,
         n=130, k=128, bias=True, grid="tiles", block_m=64, block_n=128,
         x_scale="tensor", w_scale="tensor"),
    Case("fp8_per_row_batched", "batched",
         "FP8 batched_matmul with per-token and per-channel scales, "
         "f8E5M2, bf16 out",
         in_type="f8E5M2", out_type="bf16", batch=2, rows_per_group=70,
         n=80, k=256, block_m=64, block_n=64, x_scale="per_row",
         w_scale="per_row"),
    Case("fp8_swap_per_row", "segment",
         "swap-AB FP8 segment_matmul with per-token and per-channel scales "
         "(the transposed store reads x's scale at its columns' rows)",
         in_type="f8E4M3FN", out_type="f32", segments=[20, 0, 1, 50, 5],
         rows=80, n=136, k=128, block_m=24, block_n=128, swap_ab=True,
         x_scale="per_row", w_scale="per_row"),
    # --- INT8 (s8 x s8 -> exact s32), dequantised in the epilogue --------
    Case("int8_per_row_segment", "segment",
         "INT8 segment_matmul with per-token x and per-channel w scales "
         "(aiter's int8_gemm), weight_indices: an empty, a 1-row and a "
         "multi-tile segment ending inside a tile, trailing rows in no "
         "segment, f32 out",
         in_type="i8", out_type="f32", segments=[70, 0, 1, 50, 5],
         rows=140, n=136, k=256, block_m=64, block_n=64,
         weight_indices=[2, 0, 1, 2, 1], num_weights=3, x_scale="per_row",
         w_scale="per_row"),
    Case("int8_tensor_segment_long_k", "segment",
         "INT8 segment_matmul with tensor-wise scales, K = 1536 (sums past "
         "2^24, where the int32 -> f32 conversion rounds), 128x256 tiles, "
         "odd N, bias and gelu, bf16 out",
         in_type="i8", out_type="bf16", segments=[100, 0, 29], rows=130,
         n=264, k=1536, block_m=128, block_n=256, bias=True,
         activation="gelu", x_scale="tensor", w_scale="tensor"),
    Case("int8_per_row_masked", "masked",
         "INT8 masked_matmul with per-token [G, Mmax] x scales and a "
         "tensor-wise w scale per weight: counts 0, a partial and a clamped "
         "group, relu, bf16 out (int8 sums overflow f16)",
         in_type="i8", out_type="bf16", counts=[0, 70, 200],
         rows_per_group=96, n=72, k=128, block_m=64, block_n=64,
         activation="relu", x_scale="per_row", w_scale="tensor"),
    Case("int8_batched", "batched",
         "INT8 batched_matmul with a tensor-wise x and per-channel w scales, "
         "row_scale and accumulate, one CTA per tile, f32 out",
         in_type="i8", out_type="f32", batch=3, rows_per_group=65, n=130,
         k=256, row_scale=True, accumulate=True, grid="tiles", block_m=64,
         block_n=128, x_scale="tensor", w_scale="per_row"),
    Case("int8_swap_per_row", "segment",
         "swap-AB INT8 segment_matmul with per-token and per-channel scales "
         "(an i32 accumulator stored transposed)",
         in_type="i8", out_type="f32", segments=[20, 0, 1, 50, 5],
         rows=80, n=136, k=128, block_m=24, block_n=128, swap_ab=True,
         x_scale="per_row", w_scale="per_row"),
    # --- An e4m3 y, quantised per row and 128 columns in the epilogue ----
    Case("fp8out_segment_bias_silu", "segment",
         "segment_matmul bf16 -> e4m3 y with MN-major 1x128 y_scale: an "
         "empty, a 1-row and multi-tile segments, trailing rows in no "
         "segment, N = 200 (a partial last block), weight_indices, bias and "
         "silu before the quantisation",
         out_type="f8E4M3FN", segments=[70, 0, 1, 130, 5], rows=230, n=200,
         k=104, block_m=64, block_n=128, weight_indices=[2, 0, 1, 2, 1],
         num_weights=3, bias=True, activation="silu"),
    Case("fp8out_masked_row_scale", "masked",
         "masked_matmul f16 -> e4m3 y, two 128-column blocks per 256-wide "
         "tile, row_scale and relu, counts 0, a partial and a clamped group "
         "(rows past the count keep y and y_scale)",
         in_type="f16", out_type="f8E4M3FN", counts=[0, 70, 200],
         rows_per_group=96, n=256, k=72, block_m=64, block_n=256,
         row_scale=True, activation="relu"),
    Case("fp8out_batched_fp8_in", "batched",
         "batched_matmul FP8 (1x128 / 128x128 block scales) -> e4m3 y: the "
         "next FP8 layer's input from this one's, bias",
         in_type="f8E4M3FN", out_type="f8E4M3FN", batch=3,
         rows_per_group=65, n=384, k=256, block_m=64, block_n=128,
         bias=True),
    Case("fp8out_int8_segment", "segment",
         "INT8 (per-token, per-channel scales) segment_matmul -> e4m3 y, N = "
         "136 (a block of 8 columns), one CTA",
         in_type="i8", out_type="f8E4M3FN", segments=[20, 0, 1, 50, 5],
         rows=80, n=136, k=128, block_m=64, block_n=128, num_ctas=1,
         x_scale="per_row", w_scale="per_row"),
    Case("fp8out_selected_config", "segment",
         "segment_matmul bf16 -> e4m3 y with the config ggemm-select-config "
         "chooses (whole 128-column blocks per tile, no swap-AB although "
         "the groups are small)",
         out_type="f8E4M3FN", segments=[9, 40, 0, 33], rows=90, n=300, k=64,
         explicit_config=False),
    # --- swap-AB (ggemm-swap-ab) ----------------------------------------
    Case("swap_segment_basic", "segment",
         "swap-AB segment_matmul (24-row token tiles, the weight tile in "
         "wgmma's M): an empty, a 1-row and multi-tile segments, trailing rows "
         "in no segment, N and K not tile multiples",
         segments=[20, 0, 1, 50, 5], rows=80, block_m=24, block_n=64,
         swap_ab=True),
    Case("swap_segment_kn_weight_indices", "segment",
         "swap-AB segment_matmul with kn weights (an mn_major weight tile as "
         "the mma's a), weight_indices, bias, two consumer warpgroups, f32 out",
         layout="kn", segments=[16, 3, 40, 0], rows=64, out_type="f32",
         weight_indices=[1, 0, 1, 2], num_weights=3, bias=True, n=136,
         k=72, block_m=16, block_n=128, swap_ab=True),
    Case("swap_segment_epilogue", "segment",
         "swap-AB segment_matmul f16 with bias, silu, row_scale and "
         "accumulate, 8-row token tiles, i64 seg_indptr",
         in_type="f16", out_type="f16", segments=[9, 1, 0, 15], rows=30,
         index_type="i64", bias=True, activation="silu", row_scale=True,
         accumulate=True, block_m=8, block_n=64, swap_ab=True),
    Case("swap_segment_grid_tiles", "segment",
         "swap-AB segment_matmul scheduled one CTA per tile with raster "
         "along_m, gelu, bf16 out",
         segments=[33, 2, 70], rows=110, grid="tiles", raster="along_m",
         activation="gelu", n=200, block_m=32, block_n=64, swap_ab=True),
    Case("swap_masked", "masked",
         "swap-AB masked_matmul: counts 0, a partial and a clamped group, i64 "
         "counts, kn weights, bias and relu, f32 out",
         counts=[0, 30, 300], rows_per_group=40, index_type="i64",
         layout="kn", bias=True, activation="relu", out_type="f32",
         block_m=32, block_n=64, swap_ab=True),
    Case("swap_batched", "batched",
         "swap-AB batched_matmul with row_scale, f16 out, persistent grid of "
         "2 CTAs",
         batch=3, rows_per_group=20, row_scale=True, out_type="f16",
         num_ctas=2, block_m=24, block_n=64, swap_ab=True),
    Case("fp8_swap_segment", "segment",
         "swap-AB FP8 segment_matmul (weight scales on the accumulator's "
         "rows, activation scales on its columns), weight_indices, 128-row "
         "weight tiles spanning two scale blocks' worth of N, bf16 out",
         in_type="f8E4M3FN", out_type="bf16", segments=[20, 0, 1, 45],
         rows=70, n=200, k=256, block_m=32, block_n=128,
         weight_indices=[2, 0, 1, 2], num_weights=3, swap_ab=True),
    Case("fp8_split_k_segment", "segment",
         "swap-AB FP8 segment_matmul split over K (split_k = 3: 1, 2 and 2 "
         "of the 5 K blocks), two clusters walking 8 tiles (4 rounds each), "
         "bf16 out",
         in_type="f8E4M3FN", out_type="bf16", segments=[5, 0, 8],
         rows=13, n=200, k=640, block_m=8, block_n=64, swap_ab=True,
         split_k=3, num_ctas=7),
    Case("int8_split_k_per_row", "segment",
         "INT8 segment_matmul with per-row scales split over K (split_k = 2: "
         "exact i32 partial sums added in rank 0), one cluster walking every "
         "tile",
         in_type="i8", out_type="bf16", segments=[40, 70], rows=110, n=96,
         k=512, block_m=64, block_n=32, x_scale="per_row", w_scale="per_row",
         split_k=2, num_ctas=2),
    Case("segment_split_k_empty_rank", "segment",
         "bf16 segment_matmul split over K into 4 with 3 K blocks (rank 0 "
         "has none: its partial is zero), bias and silu after the sum",
         segments=[30, 0, 100], rows=130, n=72, k=192, bias=True,
         activation="silu", split_k=4, num_ctas=8),
    Case("fp8_split_k_tail_segment", "segment",
         "FP8 segment_matmul whose last wave's tiles split over K "
         "(split_k_tail: 12 tiles on 10 CTAs, 10 whole and 2 over clusters "
         "of 2, 2 and 3 of the 5 K blocks), bias, bf16 out",
         in_type="f8E4M3FN", out_type="bf16", segments=[70, 0, 50],
         rows=120, n=200, k=640, block_m=64, block_n=64, bias=True,
         split_k=2, split_k_tail=True, num_ctas=10),
    Case("int8_split_k_tail_unsplit", "segment",
         "INT8 segment_matmul with per-row scales and split_k_tail on 14 "
         "CTAs: 12 tiles, whose 2 CTAs each would not fit, so every tile "
         "whole",
         in_type="i8", out_type="bf16", segments=[70, 0, 50], rows=120,
         n=200, k=512, block_m=64, block_n=64, x_scale="per_row",
         w_scale="per_row", split_k=2, split_k_tail=True, num_ctas=14),
    Case("masked_split_k_tail", "masked",
         "bf16 masked_matmul with split_k_tail over clusters of 3: 8 "
         "tiles on 6 CTAs, 6 whole, the other 2 over 3 CTAs each (one of "
         "the 3 K blocks each)",
         counts=[64, 5, 128], rows_per_group=128, n=128, k=192,
         block_m=64, block_n=64, split_k=3, split_k_tail=True, num_ctas=6),
    Case("fp8_swap_masked", "masked",
         "swap-AB FP8 masked_matmul with 64-row weight tiles (one weight "
         "scale per two tiles), row_scale and accumulate, f32 out",
         in_type="f8E4M3FN", out_type="f32", counts=[17, 0, 200],
         rows_per_group=24, n=136, k=384, block_m=24, block_n=64,
         row_scale=True, accumulate=True, swap_ab=True),
    # --- masked_matmul ----------------------------------------------------
    Case("masked_basic", "masked",
         "masked_matmul bf16 -> bf16: counts 0, 1 and a full group",
         counts=[0, 1, 100], rows_per_group=100),
    Case("masked_kn_i64", "masked",
         "masked_matmul kn, i64 counts (one above rows_per_group, clamped), "
         "bias and gelu, f32 out",
         counts=[65, 200, 3], rows_per_group=80, layout="kn",
         index_type="i64", bias=True, activation="gelu", out_type="f32"),
    Case("masked_f16_accumulate", "masked",
         "masked_matmul f16 -> f16 with silu, row_scale and accumulate",
         in_type="f16", out_type="f16", counts=[70, 0, 64, 1],
         rows_per_group=70, activation="silu", row_scale=True,
         accumulate=True),
    Case("masked_grid_tiles", "masked",
         "masked_matmul scheduled one CTA per tile, kn weights",
         counts=[0, 70, 129], rows_per_group=130, grid="tiles", layout="kn",
         n=128, out_type="f32"),
    Case("masked_raster_m", "masked",
         "masked_matmul with raster along_m (3x4 tiles per group), 2 CTAs",
         counts=[130, 129], rows_per_group=130, n=200, raster="along_m",
         num_ctas=2, out_type="f32", row_scale=True),
    # --- batched_matmul ---------------------------------------------------
    Case("batched_basic", "batched",
         "batched_matmul bf16 -> bf16, nk, M not a tile multiple",
         batch=3, rows_per_group=70),
    Case("batched_kn_relu", "batched",
         "batched_matmul f16 kn with bias and relu, f32 out",
         in_type="f16", out_type="f32", layout="kn", batch=2,
         rows_per_group=100, n=136, k=88, bias=True, activation="relu"),
    Case("batched_accumulate_gelu", "batched",
         "batched_matmul with gelu, row_scale and accumulate, bf16 out",
         batch=2, rows_per_group=65, activation="gelu", row_scale=True,
         accumulate=True),
    Case("batched_dynamic", "batched",
         "batched_matmul with dynamic batch and row extents, f32 out",
         batch=2, rows_per_group=90, dynamic=True, out_type="f32",
         bias=True),
    Case("masked_dynamic", "masked",
         "masked_matmul with dynamic group and row extents",
         counts=[0, 77, 50], rows_per_group=77, dynamic=True),
    Case("batched_raster_m_f16", "batched",
         "batched_matmul with raster along_m, f16 out, silu",
         batch=3, rows_per_group=129, raster="along_m", out_type="f16",
         activation="silu", n=120, k=64),
]


@dataclasses.dataclass
class KRaggedCase:
    """One execution test of ggemm.segment_matmul_k: per group g,
    `dw[g] = dy[s_g:s_g+1]ᵀ · x[s_g:s_g+1]` (`nk`: dw is [G, N, K]; `kn`:
    [G, K, N], i.e. x[seg]ᵀ · dy[seg]), K ragged.

    Example:

        KRaggedCase("kragged_basic", "...", indptr=[0, 70, 70, 71, 201],
                    rows=210)
    """

    name: str
    summary: str
    #: seg_indptr as written (G + 1 entries, device data: may be decreasing
    #: or past `rows`; the op clamps it like segment_matmul).
    indptr: list[int]
    #: Token rows of dy and x (>= the last offset: trailing rows are in no
    #: group and must not enter any sum).
    rows: int
    in_type: str = "bf16"
    out_type: str = "f32"
    layout: str = "nk"
    index_type: str = "i32"
    n: int = 72  # columns of dy
    k: int = 104  # columns of x
    accumulate: bool = False
    block_m: int = 64
    block_n: int = 64
    raster: str = "along_n"
    explicit_config: bool = True
    num_ctas: Optional[int] = None
    grid: str = "persistent"
    #: dy, x and seg_indptr with dynamic extents (memref<?x?x...>).
    dynamic: bool = False
    #: dy and x given with the tokens innermost, [N, T] and [K, T] (the
    #: FP8 form: with an FP8 in_type, 1x128 scales along the tokens,
    #: MN-major, in {0.5, 1, 1.5, 2}).
    transposed: bool = False

    @property
    def groups(self) -> int:
        return len(self.indptr) - 1

    @property
    def fp8(self) -> bool:
        return self.in_type in FP8_VALUES

    @property
    def block_k(self) -> int:
        return 128 if self.fp8 else 64

    @property
    def token_blocks(self) -> int:
        """128-token scale blocks of the FP8 form."""
        return -(-self.rows // 128)

    def bounds(self) -> list[tuple[int, int]]:
        """Each group's rows [begin, end), clamped as the op defines."""
        out = []
        for g in range(self.groups):
            begin = min(max(self.indptr[g], 0), self.rows)
            end = max(min(max(self.indptr[g + 1], 0), self.rows), begin)
            out.append((begin, end))
        return out

    def out_shape(self) -> tuple[int, int]:
        """(rows, cols) of one dw[g]."""
        return (self.n, self.k) if self.layout == "nk" else (self.k, self.n)


class KRaggedWriter:
    """Writes the test file of a KRaggedCase: @gemm holds the op, @main
    fills dy and x with exact values, poisons dw (or fills it, with
    `accumulate`), runs @gemm and checks every element of dw against a
    reference summed over the group's rows, with plain loops."""

    def __init__(self, case: KRaggedCase) -> None:
        self.c = c = case
        rows = "?" if c.dynamic else str(c.rows)
        ncols = "?" if c.dynamic else str(c.n)
        kcols = "?" if c.dynamic else str(c.k)
        self.dy_type = self.matrix(rows, ncols)
        self.x_type = self.matrix(rows, kcols)
        self.static_dy = self.matrix(c.rows, c.n)
        self.static_x = self.matrix(c.rows, c.k)
        self.globals: list[str] = []
        if c.fp8:
            assert c.transposed and not c.dynamic
            tb = c.token_blocks
            # MN-major scales: [N, TB] stored as [TB, N].
            self.dys_storage = f"memref<{tb}x{c.n}xf32>"
            self.xs_storage = f"memref<{tb}x{c.k}xf32>"
            self.dys_type = f"memref<{c.n}x{tb}xf32, strided<[1, {c.n}]>>"
            self.xs_type = f"memref<{c.k}x{tb}xf32, strided<[1, {c.k}]>>"
            self.globals.append(fp8_table(c.in_type))
        r, cc = c.out_shape()
        self.dw_type = f"memref<{c.groups}x{r}x{cc}x{c.out_type}>"
        indptr = "?" if c.dynamic else str(c.groups + 1)
        self.rows_type = f"memref<{indptr}x{c.index_type}>"
        self.rows_static = f"memref<{c.groups + 1}x{c.index_type}>"
        self.fills: set[tuple[int, str]] = set()

    def matrix(self, tokens, features) -> str:
        """The memref type of dy or x: [T, F], or [F, T] transposed."""
        c = self.c
        dims = (features, tokens) if c.transposed else (tokens, features)
        return f"memref<{dims[0]}x{dims[1]}x{c.in_type}>"

    def gemm_function(self) -> str:
        c = self.c
        attrs = []
        if c.layout == "kn":
            attrs.append("weight_layout = #ggemm.weight_layout<kn>")
        if c.accumulate:
            attrs.append("accumulate")
        if c.transposed:
            attrs.append("transposed")
        if c.explicit_config:
            attrs.append(
                f"config = #ggemm.tile_config<block_m = {c.block_m}, "
                f"block_n = {c.block_n}, block_k = {c.block_k}, stages = 2, "
                f"consumer_warpgroups = {c.block_m // 64}, "
                f"raster = {c.raster}>")
        attr_text = (" {" + ",\n       ".join(attrs) + "}") if attrs else ""
        scale_args = scales = ""
        if c.fp8:
            scale_args = f", %dys: {self.dys_type}, %xs: {self.xs_type}"
            scales = (f"      scales(%dys, %xs : {self.dys_type}, "
                      f"{self.xs_type})\n")
        return (
            f"func.func @gemm(%dy: {self.dy_type}, %x: {self.x_type}, "
            f"%rows: {self.rows_type}{scale_args}, %dw: {self.dw_type}) {{\n"
            f"  ggemm.segment_matmul_k ins(%dy, %x : {self.dy_type}, "
            f"{self.x_type})\n"
            f"      segments(%rows : {self.rows_type})\n{scales}"
            f"      outs(%dw : {self.dw_type}){attr_text}\n"
            f"  return\n}}\n")

    def fill(self, e: Emitter, value: str, mtype: str, rank: int, ty: str,
             seed: int, mod: int, off: int, den: float) -> None:
        self.fills.add((rank, ty))
        dyn = "x".join("?" * rank)
        cast = e.op(f"memref.cast {value} : {mtype} to memref<{dyn}x{ty}>")
        e.emit(f"func.call @fill{rank}_{ty}({cast}, "
               f"{e.op(f'arith.constant {seed} : i64')}, "
               f"{e.op(f'arith.constant {mod} : i64')}, "
               f"{e.op(f'arith.constant {off} : i64')}, "
               f"{e.const_f32(den)}) : (memref<{dyn}x{ty}>, i64, i64, i64, "
               f"f32) -> ()")

    def main_function(self) -> str:
        c = self.c
        e = Emitter()
        e.emit("%zero = arith.constant 0 : index")
        e.emit("%one = arith.constant 1 : index")
        static_dy, static_x = self.static_dy, self.static_x
        dy = e.op(f"memref.alloc() : {static_dy}", "dy")
        x = e.op(f"memref.alloc() : {static_x}", "x")
        dw = e.op(f"memref.alloc() : {self.dw_type}", "dw")
        dw_old = e.op(f"memref.alloc() : {self.dw_type}", "dwold")
        if c.fp8:
            name = FP8_VALUES[c.in_type][0]
            e.emit(f"%fp8_values = memref.get_global @{name}_values : "
                   "memref<256xf32>")
            self.fill(e, dy, static_dy, 2, c.in_type, 1, 144, 0, 1.0)
            self.fill(e, x, static_x, 2, c.in_type, 2, 144, 0, 1.0)
        else:
            # Multiples of 1/8 in [-1, 1]: every product and sum is exact
            # in f32.
            self.fill(e, dy, static_dy, 2, c.in_type, 1, 17, 8, 8.0)
            self.fill(e, x, static_x, 2, c.in_type, 2, 17, 8, 8.0)
        if c.accumulate:
            self.fill(e, dw, self.dw_type, 3, c.out_type, 5, 7, 3, 2.0)
        else:
            self.fill(e, dw, self.dw_type, 3, c.out_type, 0, 1, int(-POISON),
                      1.0)
        e.emit(f"memref.copy {dw}, {dw_old} : {self.dw_type} to "
               f"{self.dw_type}")
        rows = e.op(f"memref.alloc() : {self.rows_static}", "rows")
        for i, v in enumerate(c.indptr):
            cv = e.op(f"arith.constant {v} : {c.index_type}")
            e.emit(f"memref.store {cv}, {rows}[{e.const_index(i)}] : "
                   f"{self.rows_static}")
        args = [dy, x, rows]
        types = [self.dy_type, self.x_type, self.rows_type]
        if c.dynamic:
            args = [e.op(f"memref.cast {dy} : {static_dy} to {self.dy_type}"),
                    e.op(f"memref.cast {x} : {static_x} to {self.x_type}"),
                    e.op(f"memref.cast {rows} : {self.rows_static} to "
                         f"{self.rows_type}")]
        scales = {}
        if c.fp8:
            # Scales (r + 1) / 2 for r < 4: 0.5, 1, 1.5, 2, different per
            # row and per block, so a scale of the wrong row or block shows.
            for key, storage, mtype, seed in (
                    ("dy", self.dys_storage, self.dys_type, 6),
                    ("x", self.xs_storage, self.xs_type, 7)):
                st = e.op(f"memref.alloc() : {storage}", f"{key}st")
                self.fill(e, st, storage, 2, "f32", seed, 4, -1, 2.0)
                scales[key] = e.op(
                    f"memref.transpose {st} (d0, d1) -> (d1, d0) : "
                    f"{storage} to {mtype}", f"{key}s")
            args += [scales["dy"], scales["x"]]
            types += [self.dys_type, self.xs_type]
        args.append(dw)
        types.append(self.dw_type)
        e.emit(f"func.call @gemm({', '.join(args)}) : ({', '.join(types)}) "
               "-> ()")

        stats, maxerr = start_counts(e)
        atol, rtol = TOLERANCE[c.out_type]
        atol_v, rtol_v = e.const_f32(atol), e.const_f32(rtol)
        out_rows, out_cols = c.out_shape()
        # dw[g, i, j] = sum over the group's rows t of a[t, i] * b[t, j]
        # (transposed: a[i, t] * b[j, t]); FP8: per 128-token block, the
        # block's part of that sum times a's and b's scales of the block.
        a, a_type = (dy, static_dy) if c.layout == "nk" else (x, static_x)
        b, b_type = (x, static_x) if c.layout == "nk" else (dy, static_dy)
        a_scale_key, b_scale_key = (("dy", "x") if c.layout == "nk"
                                    else ("x", "dy"))

        def load(matrix, mtype, t, f):
            at = f"{f}, {t}" if c.transposed else f"{t}, {f}"
            return e.op(f"memref.load {matrix}[{at}] : {mtype}")

        def value(v):
            if c.fp8:
                byte = e.op(f"arith.bitcast {v} : {c.in_type} to i8")
                wide = e.op(f"arith.extui {byte} : i8 to i32")
                index = e.op(f"arith.index_cast {wide} : i32 to index")
                return e.op(f"memref.load %fp8_values[{index}] : "
                            "memref<256xf32>")
            return e.to_f32(v, c.in_type)

        def partial_sum(i, j, t0: str, t1: str):
            t, s, acc = e.fresh("t"), e.fresh("s"), e.fresh("acc")
            e.emit(f"{acc} = scf.for {t} = {t0} to {t1} step %one "
                   f"iter_args({s} = {e.const_f32(0.0)}) -> (f32) {{")
            e.indent += 2
            av, bval = load(a, a_type, t, i), load(b, b_type, t, j)
            prod = e.op(f"arith.mulf {value(av)}, {value(bval)} : f32")
            e.emit(f"scf.yield {e.op(f'arith.addf {s}, {prod} : f32')} : f32")
            e.end()
            return acc

        for g, (begin, end) in enumerate(c.bounds()):
            gv = e.const_index(g)
            bv, ev = e.const_index(begin), e.const_index(end)
            i = e.for_loop("%zero", e.const_index(out_rows), "i")
            j = e.for_loop("%zero", e.const_index(out_cols), "j")
            if not c.fp8:
                v = partial_sum(i, j, bv, ev)
            else:
                v = e.const_f32(0.0)
                for kb in range(begin // 128, -(-end // 128)):
                    t0, t1 = max(begin, 128 * kb), min(end, 128 * kb + 128)
                    part = partial_sum(i, j, e.const_index(t0),
                                       e.const_index(t1))
                    kbv = e.const_index(kb)
                    sa = e.op(f"memref.load {scales[a_scale_key]}[{i}, {kbv}]"
                              f" : {self.dys_type if a_scale_key == 'dy' else self.xs_type}")
                    sb = e.op(f"memref.load {scales[b_scale_key]}[{j}, {kbv}]"
                              f" : {self.dys_type if b_scale_key == 'dy' else self.xs_type}")
                    factor = e.op(f"arith.mulf {sa}, {sb} : f32")
                    scaled = e.op(f"arith.mulf {part}, {factor} : f32")
                    v = e.op(f"arith.addf {v}, {scaled} : f32")
            index = f"{gv}, {i}, {j}"
            if c.accumulate:
                old = e.op(f"memref.load {dw_old}[{index}] : {self.dw_type}")
                v = e.op(f"arith.addf {v}, {e.to_f32(old, c.out_type)} : f32")
            expected = e.to_f32(e.from_f32(v, c.out_type), c.out_type)
            got = e.op(f"memref.load {dw}[{index}] : {self.dw_type}")
            e.emit(f"func.call @check({e.to_f32(got, c.out_type)}, "
                   f"{expected}, {atol_v}, {rtol_v}, {stats}, {maxerr}) : "
                   "(f32, f32, f32, f32, memref<2xi64>, memref<1xf32>) -> ()")
            e.end()
            e.end()
        print_counts(e, stats, maxerr)
        for buf, ty in ((dy, static_dy), (x, static_x), (dw, self.dw_type),
                        (dw_old, self.dw_type)):
            e.emit(f"memref.dealloc {buf} : {ty}")
        body = "\n".join(e.lines)
        return f"func.func @main() {{\n{body}\n  return\n}}\n"

    def text(self) -> str:
        c = self.c
        main = self.main_function()
        gemm = self.gemm_function()
        fills = "\n".join(fill_fp8_function(rank, ty) if ty in FP8_VALUES
                          else fill_function(rank, ty)
                          for rank, ty in sorted(self.fills))
        options = []
        if c.num_ctas is not None:
            options.append(f"num-ctas={c.num_ctas}")
        if c.grid != "persistent":
            options.append(f"grid={c.grid}")
        out_rows, out_cols = c.out_shape()
        tiles = (c.groups * -(-out_rows // c.block_m)
                 * -(-out_cols // c.block_n))
        header = file_header(
            c.summary, c.groups * out_rows * out_cols,
            f"{tiles}" + (" (config chosen by ggemm-select-config)"
                          if not c.explicit_config else ""),
            options)
        return (header + "\n\n" + "".join(self.globals) + gemm + "\n"
                + main + HELPERS + "\n" + fills)


#: K-ragged weight gradients (ggemm.segment_matmul_k). Each has a group
#: whose last K block reaches into the next group's rows (or into trailing
#: rows in no group), so a missing segment mask shows as wrong sums; empty
#: groups must come out as zeros over the poison (or unchanged with
#: accumulate).
KRAGGED_CASES = [
    KRaggedCase("kragged_basic",
                "segment_matmul_k bf16 -> f32, nk: an empty and a 1-row "
                "group, groups not a multiple of block_k, N and K not tile "
                "multiples, trailing rows in no group",
                indptr=[0, 70, 70, 71, 201, 206], rows=210),
    KRaggedCase("kragged_accumulate_f32",
                "segment_matmul_k accumulating into an f32 gradient: an "
                "empty group stays unchanged, 1-row groups, i64 seg_indptr",
                indptr=[0, 0, 1, 66, 67, 130], rows=140, accumulate=True,
                index_type="i64", n=64, k=136),
    KRaggedCase("kragged_bf16_out",
                "segment_matmul_k bf16 -> bf16 (the sum in f32, rounded "
                "once), empty groups first and last",
                indptr=[0, 0, 90, 93, 93], rows=100, out_type="bf16",
                n=80, k=72),
    KRaggedCase("kragged_single_group",
                "segment_matmul_k with a single non-empty group among empty "
                "ones (the others write zeros over the poison)",
                indptr=[0, 0, 0, 150, 150, 150], rows=160, n=72, k=64),
    KRaggedCase("kragged_kn_f16",
                "segment_matmul_k f16 -> f16 with weight_layout kn "
                "(dw[g] = x[seg]ᵀ · dy[seg]), accumulate, 128-row tiles",
                indptr=[0, 5, 100, 101], rows=101, in_type="f16",
                out_type="f16", layout="kn", accumulate=True, n=72, k=136,
                block_m=128, block_n=64),
    KRaggedCase("kragged_untrusted_indptr",
                "segment_matmul_k with an untrusted seg_indptr: negative, "
                "decreasing and past the rows (clamped like segment_matmul)",
                indptr=[-5, 40, 30, 90, 500], rows=100, n=64, k=72),
    KRaggedCase("kragged_dynamic_grid_tiles",
                "segment_matmul_k with dynamic extents and a dynamic "
                "seg_indptr, one CTA per tile, raster along_m, bf16 out",
                indptr=[0, 64, 65, 200], rows=200, dynamic=True,
                grid="tiles", raster="along_m", out_type="bf16", n=136,
                k=72),
    KRaggedCase("kragged_selected_config",
                "segment_matmul_k with the config ggemm-select-config "
                "chooses, 2 CTAs",
                indptr=[0, 3, 3, 80], rows=80, explicit_config=False,
                block_m=128, block_n=64, num_ctas=2, n=64, k=64),
    # The FP8 form: dy and x transposed ([N, T], [K, T]), 1x128 scales
    # along the tokens. Segments start and end inside 128-token blocks,
    # so the first K block of a segment holds the previous group's rows
    # (masked by k_begin) and blocks straddle two groups' scales.
    KRaggedCase("kragged_fp8_nk",
                "segment_matmul_k e4m3 -> f32, transposed, nk: segments "
                "starting and ending inside 128-token scale blocks, an "
                "empty and a 1-row group, trailing rows in no group",
                indptr=[0, 70, 70, 71, 201, 290], rows=304,
                in_type="f8E4M3FN", transposed=True, n=72, k=80),
    KRaggedCase("kragged_fp8_kn_accumulate",
                "segment_matmul_k e4m3 -> bf16, transposed, kn, accumulate, "
                "i64 seg_indptr that decreases and runs past the tokens, "
                "128-row tiles",
                indptr=[0, 130, 129, 256, 400], rows=272, in_type="f8E4M3FN",
                out_type="bf16", transposed=True, layout="kn",
                accumulate=True, index_type="i64", n=64, k=136,
                block_m=128, block_n=64),
    KRaggedCase("kragged_fp8_selected_config",
                "segment_matmul_k e4m3 -> f32, transposed, with the config "
                "ggemm-select-config chooses (128x192), 2 CTAs",
                indptr=[0, 100, 300], rows=320, in_type="f8E4M3FN",
                transposed=True, explicit_config=False, block_m=128,
                block_n=192, num_ctas=2, n=136, k=200),
    KRaggedCase("kragged_transposed_bf16",
                "segment_matmul_k bf16 -> f32 with dy and x transposed "
                "([N, T], [K, T]: k_major tiles), no scales",
                indptr=[0, 50, 50, 150], rows=160, transposed=True, n=72,
                k=64),
]


@dataclasses.dataclass
class MoECase:
    """One execution test of the MoE forms of ggemm.segment_matmul (issue
    13): gathered x rows (`row_indices`), scattered y rows
    (`scatter_indices`, with `atomic` adds), and the gated `swiglu`
    epilogue (w holds 2N rows: gate, then up; with `gate_up_block` B, in
    blocks of B gate rows and their B up rows, the bias still gate then
    up).

    Segment row r (of M = `rows`) reads x row `gather[r]` (or x row r) and
    goes to y row `scatter[r]` (or y row r). Indices outside x read zeros;
    outside y write nothing. The reference builds the expected y in f32 from
    y's old values, row by row in order (so several rows landing on one y
    row add up, as atomic adds must), then every element of y is checked.

    Example:

        MoECase("moe_gather", "...", segments=[40, 0, 90], rows=140,
                gather=[...], x_rows=60)
    """

    name: str
    summary: str
    segments: list[int]
    rows: int
    gather: Optional[list[int]] = None
    x_rows: int = 0
    scatter: Optional[list[int]] = None
    y_rows: int = 0
    swiglu: bool = False
    gate_up_block: int = 0
    bias: bool = False
    row_scale: bool = False
    accumulate: bool = False
    atomic: bool = False
    layout: str = "nk"
    in_type: str = "bf16"
    out_type: str = "bf16"
    n: int = 72  # y's columns (w has 2n rows with swiglu)
    k: int = 104
    block_m: int = 64
    block_n: int = 64
    explicit_config: bool = True

    @property
    def groups(self) -> int:
        return len(self.segments)

    @property
    def w_rows(self) -> int:
        return 2 * self.n if self.swiglu else self.n

    def owners(self) -> list[int]:
        owner, start = [-1] * self.rows, 0
        for g, length in enumerate(self.segments):
            for r in range(start, start + length):
                owner[r] = g
            start += length
        return owner

    def out_rows(self) -> int:
        return self.y_rows if self.scatter is not None else self.rows


class MoEWriter:
    """Writes the test file of a MoECase (see there)."""

    def __init__(self, case: MoECase) -> None:
        self.c = c = case
        self.x_type = f"memref<?x{c.k}x{c.in_type}>"
        w_shape = (f"{c.groups}x{c.w_rows}x{c.k}" if c.layout == "nk"
                   else f"{c.groups}x{c.k}x{c.w_rows}")
        self.w_type = f"memref<{w_shape}x{c.in_type}>"
        self.y_type = f"memref<?x{c.n}x{c.out_type}>"
        self.exp_type = f"memref<?x{c.n}xf32>"
        self.rows_type = f"memref<{c.groups + 1}xi32>"
        self.index_type = "memref<?xi32>"
        self.bias_type = f"memref<{c.groups}x{c.w_rows}xf32>"
        self.rs_type = "memref<?xf32>"
        self.fills: set[tuple[int, str]] = set()
        self.globals: list[str] = []

    def gemm_function(self) -> str:
        c = self.c
        args = [("x", self.x_type), ("w", self.w_type),
                ("rows", self.rows_type)]
        clauses = [f"      segments(%rows : {self.rows_type})"]
        if c.gather is not None:
            args.append(("gather", self.index_type))
            clauses.append(f"      row_indices(%gather : {self.index_type})")
        if c.bias:
            args.append(("bias", self.bias_type))
            clauses.append(f"      bias(%bias : {self.bias_type})")
        if c.row_scale:
            args.append(("rs", self.rs_type))
            clauses.append(f"      row_scale(%rs : {self.rs_type})")
        if c.scatter is not None:
            args.append(("scatter", self.index_type))
            clauses.append(
                f"      scatter_indices(%scatter : {self.index_type})")
        args.append(("y", self.y_type))
        attrs = []
        if c.layout == "kn":
            attrs.append("weight_layout = #ggemm.weight_layout<kn>")
        epilogue = []
        if c.swiglu:
            epilogue.append("activation = swiglu")
        if c.gate_up_block:
            epilogue.append(f"gate_up_block = {c.gate_up_block}")
        if c.accumulate:
            epilogue.append("accumulate = true")
        if c.atomic:
            epilogue.append("atomic = true")
        if epilogue:
            attrs.append(f"epilogue = #ggemm.epilogue<{', '.join(epilogue)}>")
        if c.explicit_config:
            attrs.append(
                f"config = #ggemm.tile_config<block_m = {c.block_m}, "
                f"block_n = {c.block_n}, block_k = 64, stages = 2, "
                f"consumer_warpgroups = {c.block_m // 64}>")
        sig = ", ".join(f"%{n}: {t}" for n, t in args)
        out = f"      outs(%y : {self.y_type})"
        if attrs:
            out += " {" + ",\n       ".join(attrs) + "}"
        body = "\n".join(
            [f"  ggemm.segment_matmul ins(%x, %w : {self.x_type}, "
             f"{self.w_type})"] + clauses + [out])
        return f"func.func @gemm({sig}) {{\n{body}\n  return\n}}\n"

    def fill(self, e: Emitter, value: str, mtype: str, rank: int, ty: str,
             seed: int, mod: int, off: int, den: float) -> None:
        TestWriter.fill(self, e, value, mtype, rank, ty, seed, mod, off, den)

    def constant_vector(self, e: Emitter, name: str, values: list[int]
                        ) -> str:
        """A `memref<?xi32>` holding `values` (copied from a global)."""
        n = len(values)
        self.globals.append(
            f'memref.global "private" constant @{name} : memref<{n}xi32> = '
            f'dense<[{", ".join(str(v) for v in values)}]>\n')
        g = e.op(f"memref.get_global @{name} : memref<{n}xi32>")
        buf = e.op(f"memref.alloc({e.const_index(n)}) : {self.index_type}",
                   name)
        e.emit(f"memref.copy {g}, {buf} : memref<{n}xi32> to "
               f"{self.index_type}")
        return buf

    @staticmethod
    def in_range(e: Emitter, index: str, size: int) -> str:
        """0 <= index < size, for an i32 index."""
        zero = e.op("arith.constant 0 : i32")
        bound = e.op(f"arith.constant {size} : i32")
        low = e.op(f"arith.cmpi sge, {index}, {zero} : i32")
        high = e.op(f"arith.cmpi slt, {index}, {bound} : i32")
        return e.op(f"arith.andi {low}, {high} : i1")

    def dot(self, e: Emitter, xrow: str, valid: str, wi: str, wrow: str,
            x: str, w: str, k: str) -> str:
        """sum_k x[xrow, k] * w[wi, wrow, k], or 0 when not `valid`."""
        c = self.c
        kk, s, acc = e.fresh("k"), e.fresh("s"), e.fresh("acc")
        e.emit(f"{acc} = scf.for {kk} = %zero to {k} step %one "
               f"iter_args({s} = {e.const_f32(0.0)}) -> (f32) {{")
        e.indent += 2
        xv = e.op(f"memref.load {x}[{xrow}, {kk}] : {self.x_type}")
        w_idx = [wi, wrow, kk] if c.layout == "nk" else [wi, kk, wrow]
        wv = e.op(f"memref.load {w}[{', '.join(w_idx)}] : {self.w_type}")
        prod = e.op(f"arith.mulf {e.to_f32(xv, c.in_type)}, "
                    f"{e.to_f32(wv, c.in_type)} : f32")
        e.emit(f"scf.yield {e.op(f'arith.addf {s}, {prod} : f32')} : f32")
        e.end()
        return e.op(f"arith.select {valid}, {acc}, {e.const_f32(0.0)} : f32")

    def main_function(self) -> str:
        c = self.c
        e = Emitter()
        e.emit("%zero = arith.constant 0 : index")
        e.emit("%one = arith.constant 1 : index")
        e.emit(f"%m = arith.constant {c.rows} : index")
        x_rows = c.x_rows if c.gather is not None else c.rows
        y_rows = c.out_rows()
        x = e.op(f"memref.alloc({e.const_index(x_rows)}) : {self.x_type}",
                 "x")
        w = e.op(f"memref.alloc() : {self.w_type}", "w")
        yr = e.const_index(y_rows)
        y = e.op(f"memref.alloc({yr}) : {self.y_type}", "y")
        y_old = e.op(f"memref.alloc({yr}) : {self.y_type}", "yold")
        self.fill(e, x, self.x_type, 2, c.in_type, 1, 17, 8, 8.0)
        self.fill(e, w, self.w_type, 3, c.in_type, 2, 17, 8, 8.0)
        rows = e.op(f"memref.alloc() : {self.rows_type}", "rows")
        offset = 0
        for i, length in enumerate([0] + c.segments):
            offset += length
            cv = e.op(f"arith.constant {offset} : i32")
            e.emit(f"memref.store {cv}, {rows}[{e.const_index(i)}] : "
                   f"{self.rows_type}")
        args, types = [x, w, rows], [self.x_type, self.w_type,
                                     self.rows_type]
        gather = scatter = bias = rs = None
        if c.gather is not None:
            gather = self.constant_vector(e, "gather_rows", c.gather)
            args.append(gather)
            types.append(self.index_type)
        if c.bias:
            bias = e.op(f"memref.alloc() : {self.bias_type}", "bias")
            self.fill(e, bias, self.bias_type, 2, "f32", 3, 9, 4, 4.0)
            args.append(bias)
            types.append(self.bias_type)
        if c.row_scale:
            rs = e.op(f"memref.alloc(%m) : {self.rs_type}", "rs")
            self.fill(e, rs, self.rs_type, 1, "f32", 4, 5, -1, 4.0)
            args.append(rs)
            types.append(self.rs_type)
        if c.scatter is not None:
            scatter = self.constant_vector(e, "scatter_rows", c.scatter)
            args.append(scatter)
            types.append(self.index_type)
        if c.accumulate:
            self.fill(e, y, self.y_type, 2, c.out_type, 5, 7, 3, 2.0)
        else:
            self.fill(e, y, self.y_type, 2, c.out_type, 0, 1, int(-POISON),
                      1.0)
        e.emit(f"memref.copy {y}, {y_old} : {self.y_type} to {self.y_type}")
        args.append(y)
        types.append(self.y_type)
        e.emit(f"func.call @gemm({', '.join(args)}) : "
               f"({', '.join(types)}) -> ()")

        # The expected y, in f32: y's old values, then each owned segment
        # row's result written (or, accumulating, added) at its y row.
        n, k = e.const_index(c.n), e.const_index(c.k)
        exp = e.op(f"memref.alloc({yr}) : {self.exp_type}", "exp")
        i = e.for_loop("%zero", yr, "i")
        j = e.for_loop("%zero", n, "j")
        old = e.op(f"memref.load {y_old}[{i}, {j}] : {self.y_type}")
        e.emit(f"memref.store {e.to_f32(old, c.out_type)}, {exp}[{i}, {j}] "
               f": {self.exp_type}")
        e.end()
        e.end()
        owners = ", ".join(str(o) for o in c.owners())
        self.globals.append(
            f'memref.global "private" constant @owners : '
            f'memref<{c.rows}xi32> = dense<[{owners}]>\n')
        e.emit(f"%owners = memref.get_global @owners : memref<{c.rows}xi32>")
        zero32 = e.op("arith.constant 0 : i32")
        r = e.for_loop("%zero", "%m", "r")
        o = e.op(f"memref.load %owners[{r}] : memref<{c.rows}xi32>")
        owned = e.op(f"arith.cmpi sge, {o}, {zero32} : i32")
        e.emit(f"scf.if {owned} {{")
        e.indent += 2
        wi = e.op(f"arith.index_cast {o} : i32 to index")
        # The x row: gathered (zeros outside x) or the segment row.
        if gather:
            g32 = e.op(f"memref.load {gather}[{r}] : {self.index_type}")
            valid = self.in_range(e, g32, x_rows)
            safe = e.op(f"arith.select {valid}, {g32}, {zero32} : i32")
            xrow = e.op(f"arith.index_cast {safe} : i32 to index")
        else:
            valid, xrow = e.op("arith.constant true"), r
        # The y row: scattered (nowhere outside y) or the segment row.
        if scatter:
            t32 = e.op(f"memref.load {scatter}[{r}] : {self.index_type}")
            inside = self.in_range(e, t32, y_rows)
            e.emit(f"scf.if {inside} {{")
            e.indent += 2
            yrow = e.op(f"arith.index_cast {t32} : i32 to index")
        else:
            yrow = r
        col = e.for_loop("%zero", n, "c")
        # w's rows of output column col: side by side, gate row col and up
        # row N + col; interleaved in blocks of B, gate row 2B (col / B) +
        # col % B and up row B further on.
        gate_row = w_up_row = col
        if c.gate_up_block:
            block = e.const_index(c.gate_up_block)
            first = e.op(f"arith.muli {e.op(f'arith.divui {col}, {block} : index')}"
                         f", {e.const_index(2 * c.gate_up_block)} : index")
            gate_row = e.op(f"arith.addi {first}, "
                            f"{e.op(f'arith.remui {col}, {block} : index')}"
                            " : index")
            w_up_row = e.op(f"arith.addi {gate_row}, {block} : index")
        v = self.dot(e, xrow, valid, wi, gate_row, x, w, k)
        if c.swiglu:
            up_row = e.op(f"arith.addi {col}, {n} : index")
            if not c.gate_up_block:
                w_up_row = up_row
            up = self.dot(e, xrow, valid, wi, w_up_row, x, w, k)
            if bias:
                gb = e.op(f"memref.load {bias}[{wi}, {col}] : "
                          f"{self.bias_type}")
                ub = e.op(f"memref.load {bias}[{wi}, {up_row}] : "
                          f"{self.bias_type}")
                v = e.op(f"arith.addf {v}, {gb} : f32")
                up = e.op(f"arith.addf {up}, {ub} : f32")
            # silu(gate) * up, written independently of the back ends.
            neg = e.op(f"arith.negf {v} : f32")
            denom = e.op(f"arith.addf {e.op(f'math.exp {neg} : f32')}, "
                         f"{e.const_f32(1.0)} : f32")
            silu = e.op(f"arith.divf {v}, {denom} : f32")
            v = e.op(f"arith.mulf {silu}, {up} : f32")
        elif bias:
            bv = e.op(f"memref.load {bias}[{wi}, {col}] : {self.bias_type}")
            v = e.op(f"arith.addf {v}, {bv} : f32")
        if rs:
            rv = e.op(f"memref.load {rs}[{r}] : {self.rs_type}")
            v = e.op(f"arith.mulf {v}, {rv} : f32")
        if c.accumulate:
            prev = e.op(f"memref.load {exp}[{yrow}, {col}] : "
                        f"{self.exp_type}")
            v = e.op(f"arith.addf {prev}, {v} : f32")
        e.emit(f"memref.store {v}, {exp}[{yrow}, {col}] : {self.exp_type}")
        e.end()
        if scatter:
            e.indent -= 2
            e.emit("}")
        e.indent -= 2
        e.emit("}")
        e.end()

        stats, maxerr = start_counts(e)
        atol, rtol = TOLERANCE[c.out_type]
        atol_v, rtol_v = e.const_f32(atol), e.const_f32(rtol)
        i = e.for_loop("%zero", yr, "i")
        j = e.for_loop("%zero", n, "j")
        want = e.op(f"memref.load {exp}[{i}, {j}] : {self.exp_type}")
        want = e.to_f32(e.from_f32(want, c.out_type), c.out_type)
        got = e.op(f"memref.load {y}[{i}, {j}] : {self.y_type}")
        e.emit(f"func.call @check({e.to_f32(got, c.out_type)}, {want}, "
               f"{atol_v}, {rtol_v}, {stats}, {maxerr}) : (f32, f32, f32, "
               "f32, memref<2xi64>, memref<1xf32>) -> ()")
        e.end()
        e.end()
        print_counts(e, stats, maxerr)
        for buf, ty in [(x, self.x_type), (w, self.w_type), (y, self.y_type),
                        (y_old, self.y_type), (exp, self.exp_type)]:
            e.emit(f"memref.dealloc {buf} : {ty}")
        body = "\n".join(e.lines)
        return f"func.func @main() {{\n{body}\n  return\n}}\n"

    def text(self) -> str:
        c = self.c
        main = self.main_function()
        gemm = self.gemm_function()
        fills = "\n".join(fill_function(rank, ty)
                          for rank, ty in sorted(self.fills))
        header = file_header(c.summary, c.out_rows() * c.n)
        return (header + "\n\n" + "".join(self.globals) + gemm
                + "\n" + main + HELPERS + "\n" + fills)


def _spread(count: int, modulus: int, step: int, start: int = 0
            ) -> list[int]:
    """`count` indices `(start + i * step) % modulus`: a fixed shuffle."""
    return [(start + i * step) % modulus for i in range(count)]


# Rows 0..139 in segments [40, 0, 90] (10 trailing rows in no segment).
_MOE_SEGMENTS, _MOE_ROWS = [40, 0, 90], 140
# A top-2 routing of 70 tokens: pair p = (token p // 2, slot p % 2) sorted
# by a fixed shuffle; token_of_pair is what gathers x and scatters y.
_TOKEN_OF_ROW = [p // 2 for p in _spread(_MOE_ROWS, _MOE_ROWS, 53)]

MOE_CASES = [
    MoECase("moe_gather", "gathered x rows (row_indices), rows of 140 "
            "reading 70 tokens twice each, plus indices -1 and 70 past x "
            "(zeros)", segments=_MOE_SEGMENTS, rows=_MOE_ROWS,
            gather=_TOKEN_OF_ROW[:100] + [-1, 70] + _TOKEN_OF_ROW[102:],
            x_rows=70),
    MoECase("moe_swiglu", "fused SwiGLU: w holds gate rows then up rows "
            "(2N = 144), bias over 2N, row scale, f32 out",
            segments=_MOE_SEGMENTS, rows=_MOE_ROWS, swiglu=True, bias=True,
            row_scale=True, out_type="f32"),
    MoECase("moe_swiglu_kn_tail", "fused SwiGLU with kn weights and N = 100 "
            "(the last tile's gate half reaches into the up rows; masked)",
            segments=[33, 64, 1], rows=100, swiglu=True, layout="kn", n=100,
            block_n=128),
    MoECase("moe_gather_swiglu_interleaved", "gathered x and SwiGLU over a "
            "w of interleaved gate/up blocks (gate_up_block = 24: 3 blocks "
            "of 24 gate rows and their 24 up rows, one 48-row tile each), "
            "bias in the logical order, row scale, f32 out",
            segments=_MOE_SEGMENTS, rows=_MOE_ROWS, gather=_TOKEN_OF_ROW,
            x_rows=70, swiglu=True, gate_up_block=24, bias=True,
            row_scale=True, out_type="f32", block_n=48),
    MoECase("moe_swiglu_interleaved_kn_selected", "SwiGLU over kn weights "
            "of interleaved gate/up blocks (gate_up_block = 32, along w's "
            "columns) with the config chosen by ggemm-select-config "
            "(block_n = 64)", segments=[20, 17, 30], rows=67,
            gather=_spread(67, 50, 7), x_rows=50, swiglu=True,
            gate_up_block=32, layout="kn", n=96, bias=True,
            explicit_config=False),
    MoECase("moe_gather_swiglu_selected", "gathered x and SwiGLU with the "
            "config chosen by ggemm-select-config (no swap-AB: 64-row "
            "tiles)", segments=[20, 17, 30], rows=67,
            gather=_spread(67, 50, 7), x_rows=50, swiglu=True,
            explicit_config=False),
    MoECase("moe_scatter", "scattered y rows (a permutation of 140 of 150 "
            "rows; 10 rows untouched, indices of the trailing rows unused)",
            segments=_MOE_SEGMENTS, rows=_MOE_ROWS,
            scatter=_spread(_MOE_ROWS, 150, 37), y_rows=150,
            row_scale=True),
    MoECase("moe_scatter_out_of_range", "scatter indices -1 and 150 write "
            "nothing; accumulate into bf16", segments=_MOE_SEGMENTS,
            rows=_MOE_ROWS,
            scatter=[-1, 150] + _spread(_MOE_ROWS - 2, 150, 37, 1),
            y_rows=150, accumulate=True),
    MoECase("moe_combine_atomic", "the top-2 combine: both rows of a token "
            "added (atomic) into its f32 row, weighted by row_scale, over "
            "gathered x", segments=_MOE_SEGMENTS, rows=_MOE_ROWS,
            gather=_TOKEN_OF_ROW, x_rows=70, scatter=_TOKEN_OF_ROW,
            y_rows=70, row_scale=True, accumulate=True, atomic=True,
            out_type="f32"),
]


@dataclasses.dataclass
class RoutingCase:
    """One execution test of ggemm.sort_by_expert (issue 13's routing op):
    the `pairs` expert ids of `len(pairs) // topk` tokens sorted by expert,
    stably, over `experts` experts (ids outside [0, experts) in no
    segment). The expected seg_indptr, row_indices and pair_indices are
    computed here from the definition (a stable sort), every element is
    compared, and the outputs start poisoned.

    Example:

        RoutingCase("routing_basic", "...", experts=8, topk=2,
                    pairs=[3, 1, 1, 0, ...])
    """

    name: str
    summary: str
    experts: int
    topk: int
    pairs: list[int]
    index_type: str = "i32"

    def expected(self) -> tuple[list[int], list[int], list[int]]:
        def key(pair: int) -> int:
            expert = self.pairs[pair]
            return -1 if expert < 0 else min(expert, self.experts)
        order = sorted(range(len(self.pairs)), key=key)  # stable
        indptr = [sum(1 for e in self.pairs if e < bound)
                  for bound in range(self.experts + 1)]
        return indptr, [p // self.topk for p in order], order


class RoutingWriter:
    """Writes the test file of a RoutingCase (see there)."""

    def __init__(self, case: RoutingCase) -> None:
        self.c = case

    def text(self) -> str:
        c = self.c
        num_pairs, bounds = len(c.pairs), c.experts + 1
        ids_type = f"memref<?x{c.index_type}>"
        indptr_type = f"memref<{bounds}xi32>"
        index_type = "memref<?xi32>"
        indptr, rows, order = c.expected()

        def constant(name: str, values: list[int], elem: str) -> str:
            return (f'memref.global "private" constant @{name} : '
                    f'memref<{len(values)}x{elem}> = '
                    f'dense<[{", ".join(str(v) for v in values)}]>\n')

        globals_ = (constant("ids", c.pairs, c.index_type)
                    + constant("want_indptr", indptr, "i32")
                    + constant("want_rows", rows, "i32")
                    + constant("want_pairs", order, "i32"))
        route = (
            f"func.func @route(%ids: {ids_type}, %indptr: {indptr_type}, "
            f"%rows: {index_type}, %pairs: {index_type}) {{\n"
            f"  ggemm.sort_by_expert ins(%ids : {ids_type})\n"
            f"      outs(%indptr, %rows, %pairs : {indptr_type}, "
            f"{index_type}, {index_type})\n"
            f"      {{topk = {c.topk}}}\n  return\n}}\n")
        e = Emitter()
        e.emit("%zero = arith.constant 0 : index")
        e.emit("%one = arith.constant 1 : index")
        p = e.const_index(num_pairs)
        static_ids = f"memref<{num_pairs}x{c.index_type}>"
        ids_c = e.op(f"memref.get_global @ids : {static_ids}")
        ids = e.op(f"memref.alloc({p}) : {ids_type}", "ids")
        e.emit(f"memref.copy {ids_c}, {ids} : {static_ids} to {ids_type}")
        poison = e.op("arith.constant -7 : i32")
        indptr_buf = e.op(f"memref.alloc() : {indptr_type}", "indptr")
        rows_buf = e.op(f"memref.alloc({p}) : {index_type}", "rows")
        pairs_buf = e.op(f"memref.alloc({p}) : {index_type}", "pairs")
        for buf, ty, extent in [(indptr_buf, indptr_type, bounds),
                                (rows_buf, index_type, num_pairs),
                                (pairs_buf, index_type, num_pairs)]:
            i = e.for_loop("%zero", e.const_index(extent))
            e.emit(f"memref.store {poison}, {buf}[{i}] : {ty}")
            e.end()
        e.emit(f"func.call @route({ids}, {indptr_buf}, {rows_buf}, "
               f"{pairs_buf}) : ({ids_type}, {indptr_type}, {index_type}, "
               f"{index_type}) -> ()")
        stats, maxerr = start_counts(e)
        one64 = e.op("arith.constant 1 : i64")
        for got, ty, want, extent in [
                (indptr_buf, indptr_type, "want_indptr", bounds),
                (rows_buf, index_type, "want_rows", num_pairs),
                (pairs_buf, index_type, "want_pairs", num_pairs)]:
            want_type = f"memref<{extent}xi32>"
            want_buf = e.op(f"memref.get_global @{want} : {want_type}")
            i = e.for_loop("%zero", e.const_index(extent))
            g = e.op(f"memref.load {got}[{i}] : {ty}")
            w = e.op(f"memref.load {want_buf}[{i}] : {want_type}")
            wrong = e.op(f"arith.cmpi ne, {g}, {w} : i32")
            wrong64 = e.op(f"arith.extui {wrong} : i1 to i64")
            for slot, inc in (("%zero", one64), ("%one", wrong64)):
                old = e.op(f"memref.load {stats}[{slot}] : memref<2xi64>")
                new = e.op(f"arith.addi {old}, {inc} : i64")
                e.emit(f"memref.store {new}, {stats}[{slot}] : "
                       "memref<2xi64>")
            e.end()
        print_counts(e, stats, maxerr)
        for buf, ty in [(ids, ids_type), (indptr_buf, indptr_type),
                        (rows_buf, index_type), (pairs_buf, index_type)]:
            e.emit(f"memref.dealloc {buf} : {ty}")
        body = "\n".join(e.lines)
        main = f"func.func @main() {{\n{body}\n  return\n}}\n"
        header = file_header(c.summary, bounds + 2 * num_pairs)
        return header + "\n\n" + globals_ + route + "\n" + main


ROUTING_CASES = [
    RoutingCase("routing_basic", "40 tokens, top-2 over 8 experts: experts "
                "6 and 7 get no pair, tokens routed twice to one expert, "
                "pairs of an expert in token order",
                experts=8, topk=2,
                pairs=[(i * i * 13 + i // 3) % 6 for i in range(80)]),
    RoutingCase("routing_padding_i64", "i64 ids of 30 tokens, top-3 over 5 "
                "experts, with padding ids -1 (before seg_indptr[0]) and "
                "ids 5 and 9 (from E on, after seg_indptr[E])",
                experts=5, topk=3, index_type="i64",
                pairs=[-1 if i % 7 == 0 else 5 if i % 11 == 0 else
                       9 if i % 13 == 0 else (i * 17) % 5
                       for i in range(90)]),
]


def _f32(v: float) -> float:
    """v rounded to the nearest f32 (ties to even), as a Python float."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def _hash_val(i: int, j: int, k: int, seed: int, m: int, off: int,
              den: float) -> float:
    """HELPERS' @val in Python: the same integer hash, wrapping at 2^64."""
    mask64 = (1 << 64) - 1
    h0 = (i * 7919 + j * 104729 + k * 1299709 + seed * 15485863) & mask64
    h1 = h0 ^ (h0 >> 13)
    h2 = (h1 * 1540483477) & mask64
    h3 = h2 ^ (h2 >> 15)
    h4 = h3 & 2147483647
    return _f32((h4 % m - off) / den)


#: fp8_max and the positive finite (value, code) pairs of each FP8 type,
#: ascending: what the reference rounds to (independent of the compiler's
#: integer encoder).
FP8_MAX = {"f8E4M3FN": 448.0, "f8E5M2": 57344.0}
_FP8_GRID = {
    ty: sorted((value(code), code) for code in range(128)
               if value(code) == value(code)
               and abs(value(code)) != float("inf"))
    for ty, (_, value) in FP8_VALUES.items()}


def fp8_encode(v: float, ty: str) -> int:
    """The FP8 code of f32 `v`: nearest, ties to the even code, saturating
    at +-fp8_max (v is finite)."""
    grid = _FP8_GRID[ty]
    a = min(abs(v), FP8_MAX[ty])
    values = [g[0] for g in grid]
    i = bisect.bisect_left(values, a)
    if i < len(values) and values[i] == a:
        code = grid[i][1]
    else:
        lo, hi = grid[i - 1], grid[i]
        if a - lo[0] < hi[0] - a:
            code = lo[1]
        elif a - lo[0] > hi[0] - a:
            code = hi[1]
        else:
            code = lo[1] if lo[1] % 2 == 0 else hi[1]
    return code | (0x80 if math.copysign(1.0, v) < 0 else 0)


@dataclasses.dataclass
class QuantizeCase:
    """One execution test of ggemm.quantize: x of `shape` ([rows, K] or
    [G, rows, K]) quantised with `block` (R, C) scales to `out_type`. The
    expected scales and FP8 bytes are computed here, from the op's
    definition in f32 (each operation rounded to f32) and an FP8 rounding
    by nearest value on the type's grid. x is either `values` (a list, in
    row-major order; exact in `in_type`) or, when None, the HELPERS hash
    (f16 multiples of 1/256 in (-4, 4)). With `scale_pad`, the scales are
    the FP8 GEMM's MN-major ones: a [K / C, scale_pad] buffer seen as
    [rows, K / C] with strides [1, scale_pad]; its pad rows must stay
    poisoned. With `row_checksums`, q is checked one checksum per row
    (sum of byte * (column + 1)), to keep the file small.

    Example:

        QuantizeCase("quantize_1x128", "...", shape=(7, 384), block=(1, 128),
                     values=[...], scale_pad=8)
    """

    name: str
    summary: str
    shape: tuple[int, ...]
    block: tuple[int, int]
    in_type: str = "bf16"
    out_type: str = "f8E4M3FN"
    values: Optional[list[float]] = None
    scale_pad: Optional[int] = None
    row_checksums: bool = False

    def x(self) -> list[float]:
        if self.values is not None:
            return self.values
        rows, k = self.shape[-2:]
        lead = self.shape[0] if len(self.shape) == 3 else 1
        out = []
        for g in range(lead):
            for r in range(rows):
                for c in range(k):
                    idx = (g, r, c) if len(self.shape) == 3 else (r, c, 0)
                    out.append(_hash_val(*idx, 5, 2001, 1000, 256.0))
        return out

    def scale_shape(self) -> list[int]:
        rows, k = self.shape[-2:]
        return (list(self.shape[:-2]) + [-(-rows // self.block[0]),
                                         k // self.block[1]])

    def expected(self) -> tuple[list[float], list[int]]:
        """The scales (row-major over scale_shape) and the FP8 codes."""
        x = self.x()
        rows, k = self.shape[-2:]
        lead = self.shape[0] if len(self.shape) == 3 else 1
        br, bc = self.block
        fmax = FP8_MAX[self.out_type]
        scales, codes = [], [0] * len(x)
        for g in range(lead):
            for rb in range(-(-rows // br)):
                for cb in range(k // bc):
                    cells = [(g * rows + r) * k + c
                             for r in range(rb * br, min(rows, rb * br + br))
                             for c in range(cb * bc, cb * bc + bc)]
                    amax = max(_f32(1e-4), max(abs(x[i]) for i in cells))
                    # torch's amax / fmax on the GPU: a product with the
                    # f32 reciprocal, as the op defines it.
                    scales.append(_f32(amax * _f32(1 / fmax)))
                    factor = _f32(_f32(1.0 / amax) * fmax)
                    for i in cells:
                        codes[i] = fp8_encode(_f32(x[i] * factor),
                                              self.out_type)
        return scales, codes


def _hex(data: bytes) -> str:
    return '"0x' + data.hex().upper() + '"'


def _pack(values: list[float], ty: str) -> bytes:
    if ty == "f16":
        return struct.pack(f"<{len(values)}e", *values)
    if ty == "bf16":
        # Exact: the values are bf16 already; keep the high half of f32.
        return b"".join(struct.pack("<f", v)[2:] for v in values)
    return struct.pack(f"<{len(values)}f", *values)


class QuantizeWriter:
    """Writes the test file of a QuantizeCase (see there)."""

    def __init__(self, case: QuantizeCase) -> None:
        self.c = case

    def text(self) -> str:
        c = self.c
        rank = len(c.shape)
        rows, k = c.shape[-2:]
        lead = c.shape[0] if rank == 3 else 1
        kb = k // c.block[1]
        static = "x".join(str(d) for d in c.shape)
        dyn = "x".join(["?"] * (rank - 1) + [str(k)])
        x_static = f"memref<{static}x{c.in_type}>"
        x_type = f"memref<{dyn}x{c.in_type}>"
        q_static = f"memref<{static}x{c.out_type}>"
        q_type = f"memref<{dyn}x{c.out_type}>"
        sshape = c.scale_shape()
        if c.scale_pad:
            s_type = f"memref<?x{kb}xf32, strided<[1, ?]>>"
            s_flat = kb * c.scale_pad
        else:
            s_type = f"memref<{'x'.join(str(d) for d in sshape)}xf32>"
            s_flat = math.prod(sshape)
        scales, codes = c.expected()
        want_s = [POISON] * s_flat
        for i, s in enumerate(scales):
            if c.scale_pad:
                r, j = divmod(i, kb)
                want_s[j * c.scale_pad + r] = s
            else:
                want_s[i] = s
        globals_ = (f'memref.global "private" constant @want_s : '
                    f'memref<{s_flat}xf32> = dense<{_hex(_pack(want_s, "f32"))}>\n')
        if c.values is not None:
            globals_ += (f'memref.global "private" constant @x : {x_static} '
                         f'= dense<{_hex(_pack(c.values, c.in_type))}>\n')
        if c.row_checksums:
            sums = [sum(codes[r * k + col] * (col + 1) for col in range(k))
                    for r in range(lead * rows)]
            globals_ += (f'memref.global "private" constant @want_q : '
                         f'memref<{lead * rows}xi64> = '
                         f'dense<[{", ".join(str(v) for v in sums)}]>\n')
        else:
            globals_ += (f'memref.global "private" constant @want_q : '
                         f'memref<{lead * rows * k}xi8> = '
                         f'dense<{_hex(bytes(codes))}>\n')
        attr = ("" if c.block == (1, 128) else
                f"\n      {{scale_block = #ggemm.scale_block<"
                f"{c.block[0]}x{c.block[1]}>}}")
        quantize = (
            f"func.func @quantize(%x: {x_type}, %q: {q_type}, "
            f"%s: {s_type}) {{\n"
            f"  ggemm.quantize ins(%x : {x_type})\n"
            f"      outs(%q, %s : {q_type}, {s_type}){attr}\n"
            f"  return\n}}\n")

        e = Emitter()
        e.emit("%zero = arith.constant 0 : index")
        e.emit("%one = arith.constant 1 : index")
        if c.values is not None:
            x_buf = e.op(f"memref.get_global @x : {x_static}", "x")
        else:
            x_buf = e.op(f"memref.alloc() : {x_static}", "x")
            x_any = e.op(f"memref.cast {x_buf} : {x_static} to "
                         f"memref<{'x'.join('?' * rank)}x{c.in_type}>")
            args = [e.op(f"arith.constant {v} : i64") for v in (5, 2001, 1000)]
            den = e.const_f32(256.0)
            e.emit(f"func.call @fill{rank}_{c.in_type}({x_any}, "
                   f"{', '.join(args)}, {den}) : "
                   f"(memref<{'x'.join('?' * rank)}x{c.in_type}>, i64, i64, "
                   "i64, f32) -> ()")
        q_buf = e.op(f"memref.alloc() : {q_static}", "q")
        poison_byte = e.op("arith.constant 85 : i8")
        poison_q = e.op(f"arith.bitcast {poison_byte} : i8 to {c.out_type}")
        ivs = [e.for_loop("%zero", e.const_index(d)) for d in c.shape]
        e.emit(f"memref.store {poison_q}, {q_buf}[{', '.join(ivs)}] : "
               f"{q_static}")
        for _ in c.shape:
            e.end()
        poison = e.const_f32(POISON)
        if c.scale_pad:
            flat = e.op(f"memref.alloc() : memref<{s_flat}xf32>", "s")
            view = e.op(
                f"memref.reinterpret_cast {flat} to offset: [0], sizes: "
                f"[{rows}, {kb}], strides: [1, {c.scale_pad}] : "
                f"memref<{s_flat}xf32> to memref<{rows}x{kb}xf32, "
                f"strided<[1, {c.scale_pad}]>>")
            s_arg = e.op(f"memref.cast {view} : memref<{rows}x{kb}xf32, "
                         f"strided<[1, {c.scale_pad}]>> to {s_type}")
        else:
            s_arg = e.op(f"memref.alloc() : {s_type}", "s")
            flat = e.op(f"memref.collapse_shape {s_arg} "
                        f"[[{', '.join(str(d) for d in range(len(sshape)))}]]"
                        f" : {s_type} into memref<{s_flat}xf32>")
        i = e.for_loop("%zero", e.const_index(s_flat))
        e.emit(f"memref.store {poison}, {flat}[{i}] : memref<{s_flat}xf32>")
        e.end()
        x_dyn = e.op(f"memref.cast {x_buf} : {x_static} to {x_type}")
        q_dyn = e.op(f"memref.cast {q_buf} : {q_static} to {q_type}")
        e.emit(f"func.call @quantize({x_dyn}, {q_dyn}, {s_arg}) : "
               f"({x_type}, {q_type}, {s_type}) -> ()")

        stats, maxerr = start_counts(e)
        one64 = e.op("arith.constant 1 : i64")

        def count(wrong: str, amount: str) -> None:
            wrong64 = e.op(f"arith.extui {wrong} : i1 to i64")
            for slot, inc in (("%zero", amount), ("%one", wrong64)):
                old = e.op(f"memref.load {stats}[{slot}] : memref<2xi64>")
                new = e.op(f"arith.addi {old}, {inc} : i64")
                e.emit(f"memref.store {new}, {stats}[{slot}] : memref<2xi64>")

        # Scales (and the MN-major pad): bit for bit.
        want_s_buf = e.op(f"memref.get_global @want_s : memref<{s_flat}xf32>")
        i = e.for_loop("%zero", e.const_index(s_flat))
        got = e.op(f"memref.load {flat}[{i}] : memref<{s_flat}xf32>")
        want = e.op(f"memref.load {want_s_buf}[{i}] : memref<{s_flat}xf32>")
        got_bits = e.op(f"arith.bitcast {got} : f32 to i32")
        want_bits = e.op(f"arith.bitcast {want} : f32 to i32")
        count(e.op(f"arith.cmpi ne, {got_bits}, {want_bits} : i32"), one64)
        e.end()
        # q: every byte, or one checksum per row.
        flat_q = e.op(f"memref.collapse_shape {q_buf} "
                      f"[[{', '.join(str(d) for d in range(rank - 1))}], "
                      f"[{rank - 1}]] : {q_static} into "
                      f"memref<{lead * rows}x{k}x{c.out_type}>")
        fq_type = f"memref<{lead * rows}x{k}x{c.out_type}>"
        r = e.for_loop("%zero", e.const_index(lead * rows), "r")
        if c.row_checksums:
            kk = e.const_index(k)
            z64 = e.op("arith.constant 0 : i64")
            k64 = e.op(f"arith.constant {k} : i64")
            total, col, acc = e.fresh("sum"), e.fresh("col"), e.fresh("acc")
            e.emit(f"{total} = scf.for {col} = %zero to {kk} step %one "
                   f"iter_args({acc} = {z64}) -> (i64) {{")
            e.indent += 2
            qv = e.op(f"memref.load {flat_q}[{r}, {col}] : {fq_type}")
            byte = e.op(f"arith.bitcast {qv} : {c.out_type} to i8")
            byte64 = e.op(f"arith.extui {byte} : i8 to i64")
            col1 = e.op(f"arith.addi {col}, %one : index")
            weight = e.op(f"arith.index_cast {col1} : index to i64")
            term = e.op(f"arith.muli {byte64}, {weight} : i64")
            e.emit(f"scf.yield {e.op(f'arith.addi {acc}, {term} : i64')} : i64")
            e.end()
            want_q = e.op(f"memref.get_global @want_q : "
                          f"memref<{lead * rows}xi64>")
            wq = e.op(f"memref.load {want_q}[{r}] : memref<{lead * rows}xi64>")
            count(e.op(f"arith.cmpi ne, {total}, {wq} : i64"), k64)
        else:
            col = e.for_loop("%zero", e.const_index(k), "col")
            qv = e.op(f"memref.load {flat_q}[{r}, {col}] : {fq_type}")
            byte = e.op(f"arith.bitcast {qv} : {c.out_type} to i8")
            rk = e.op(f"arith.muli {r}, {e.const_index(k)} : index")
            at = e.op(f"arith.addi {rk}, {col} : index")
            want_q = e.op(f"memref.get_global @want_q : "
                          f"memref<{lead * rows * k}xi8>")
            wq = e.op(f"memref.load {want_q}[{at}] : "
                      f"memref<{lead * rows * k}xi8>")
            count(e.op(f"arith.cmpi ne, {byte}, {wq} : i8"), one64)
            e.end()
        e.end()
        print_counts(e, stats, maxerr)
        body = "\n".join(e.lines)
        main = f"func.func @main() {{\n{body}\n  return\n}}\n"
        header = file_header(c.summary, s_flat + lead * rows * k)
        fills = (fill_function(rank, c.in_type) if c.values is None else "")
        return (header + "\n\n" + globals_ + quantize + "\n" + main
                + (HELPERS + "\n" + fills if fills else ""))


def _block_values(shape: tuple[int, ...], block: tuple[int, int], seed: int,
                  zero: tuple = (), tiny: tuple = (), huge: tuple = (),
                  ties: tuple = ()) -> list[float]:
    """x of `shape` in row-major order, exact in bf16 and f16: per scale
    block (lead, row block, column block) a random magnitude, elements
    m * 2^e with 8-bit m below it, both signs; blocks in `zero` are zeros
    (some -0.0), in `tiny` below the 1e-4 floor of amax, in `huge` hold one
    element of 2^12 among small ones (most of the block then rounds to
    FP8 subnormals or zero), in `ties` (e4m3 only) are a maximum of 3.5,
    whose factor (1 / 3.5) * 448 rounds to exactly 128, and values that
    scale to the midpoint of two adjacent e4m3 values: ties, which round
    to the even code."""
    e4m3 = [v for v, _ in _FP8_GRID["f8E4M3FN"]]
    rng = random.Random(seed)
    rows, k = shape[-2:]
    lead = shape[0] if len(shape) == 3 else 1
    exps: dict = {}
    out = []
    for g in range(lead):
        for r in range(rows):
            for c in range(k):
                key = (g, r // block[0], c // block[1])
                sign = -1.0 if rng.random() < 0.5 else 1.0
                if key in zero:
                    out.append(-0.0 if rng.random() < 0.3 else 0.0)
                elif key in tiny:
                    out.append(sign * rng.randrange(1, 256) * 2.0 ** -24)
                elif key in huge and r % block[0] == 0 and c % block[1] == 5:
                    out.append(sign * 4096.0)
                elif key in ties:
                    first = r % block[0] == 0 and c % block[1] == 0
                    i = rng.randrange(0, len(e4m3) - 1)
                    tie = (e4m3[i] + e4m3[i + 1]) / 2
                    out.append(3.5 if first else sign * tie / 128)
                else:
                    e = exps.setdefault(key, rng.randrange(-6, 8))
                    if key in huge:
                        e = -6
                    out.append(sign * rng.randrange(0, 256)
                               * 2.0 ** (e - 8 - rng.randrange(0, 10)))
    return out


QUANTIZE_CASES = [
    QuantizeCase("quantize_1x128_bf16", "1x128 per-token scales of a "
                 "[7, 384] bf16 x to e4m3, written MN-major (strides [1, 8], "
                 "the pad row stays poisoned) as the FP8 GEMM reads them; an "
                 "all-zero block (scale from the 1e-4 floor, bytes 0 and "
                 "0x80), a block below the floor, a block with one 4096 among "
                 "small values (FP8 subnormals), three blocks of exact "
                 "rounding ties (to even), random magnitudes elsewhere",
                 shape=(7, 384), block=(1, 128), scale_pad=8,
                 values=_block_values((7, 384), (1, 128), 11,
                                      zero=((0, 2, 1),), tiny=((0, 4, 0),),
                                      huge=((0, 5, 2),),
                                      ties=((0, 6, 0), (0, 6, 1),
                                            (0, 3, 2)))),
    QuantizeCase("quantize_128x128_f16_3d", "128x128 per-block scales of a "
                 "[2, 130, 256] f16 w to e4m3 (two weights, a partial last "
                 "row block of 2 rows), row-major [2, 2, 2] scales as the "
                 "FP8 GEMM takes them; q checked by row checksums",
                 shape=(2, 130, 256), block=(128, 128), in_type="f16",
                 row_checksums=True),
    QuantizeCase("quantize_16x32_e5m2", "16x32 blocks of a [2, 20, 64] f16 x "
                 "to e5m2 (partial row blocks of 4, row-major [2, 2, 2] "
                 "scales), an all-zero and a tiny block",
                 shape=(2, 20, 64), block=(16, 32), in_type="f16",
                 out_type="f8E5M2",
                 values=_block_values((2, 20, 64), (16, 32), 12,
                                      zero=((1, 1, 0),), tiny=((0, 0, 1),))),
]


def main() -> None:
    names = set()
    for case in (CASES + KRAGGED_CASES + MOE_CASES + ROUTING_CASES
                 + QUANTIZE_CASES):
        assert case.name not in names, case.name
        names.add(case.name)
    for case in CASES:
        path = os.path.join(HERE, f"{case.name}.mlir")
        with open(path, "w") as f:
            f.write(TestWriter(case).text())
    for kcase in KRAGGED_CASES:
        path = os.path.join(HERE, f"{kcase.name}.mlir")
        with open(path, "w") as f:
            f.write(KRaggedWriter(kcase).text())
    for mcase in MOE_CASES:
        path = os.path.join(HERE, f"{mcase.name}.mlir")
        with open(path, "w") as f:
            f.write(MoEWriter(mcase).text())
    for rcase in ROUTING_CASES:
        path = os.path.join(HERE, f"{rcase.name}.mlir")
        with open(path, "w") as f:
            f.write(RoutingWriter(rcase).text())
    for qcase in QUANTIZE_CASES:
        path = os.path.join(HERE, f"{qcase.name}.mlir")
        with open(path, "w") as f:
            f.write(QuantizeWriter(qcase).text())
    total = (len(CASES) + len(KRAGGED_CASES) + len(MOE_CASES)
             + len(ROUTING_CASES) + len(QUANTIZE_CASES))
    print(f"wrote {total} tests "
          f"to {HERE}")


if __name__ == "__main__":
    main()
