"""An e4m3 output (``out_dtype="f8e4m3"``: y quantised in the epilogue with
one f32 scale per row and 128 columns, ``y_scale``) in the Python layer on a
CPU: the problem, its IR text and catalog lines, the ops' argument checks,
the ``(y, y_scale)`` they return and its chaining into the next FP8 op, and
(with the compiler library) that the IR verifies and compiles to a bundle
the runtime loads. Stand-in tensors, no torch, no GPU; the runtime's side
is in test_runtime.py."""
from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any, List

import pytest

import ggemm
from conftest import bundle_entries
from ggemm import cache, catalog, ops
from ggemm.problem import Problem, SpecError

from test_ops import DeviceTensor, FakeDtype, FakeTensor, needs_compiler

E4M3 = "f8e4m3"
F8 = "float8_e4m3fn"


# -- Problem and its IR -------------------------------------------------------

def test_fp8_output_ir_text() -> None:
    """The compiler's contract: an f8E4M3FN y, then y_scale after outs(),
    MN-major (rows contiguous, as the FP8 ops read x_scale)."""
    p = Problem("segment_matmul", "bf16", n=384, k=512, groups=4, bias=True,
                activation="silu", out_dtype=E4M3)
    assert p.fp8_output
    text = p.mlir()
    assert "%y: memref<?x384xf8E4M3FN>" in text
    assert "%y_scale: memref<?x3xf32, strided<[1, ?]>>" in text
    assert ("outs(%y : memref<?x384xf8E4M3FN>) y_scale(%y_scale : "
            "memref<?x3xf32, strided<[1, ?]>>)") in text
    assert "activation = silu" in text
    # N = 200: two blocks, the last partial.
    masked = Problem("masked_matmul", E4M3, n=200, k=256, groups=4,
                     out_dtype=E4M3).mlir()
    assert ("outs(%y : memref<4x?x200xf8E4M3FN>) y_scale(%y_scale : "
            "memref<4x?x2xf32, strided<[?, 1, ?]>>)") in masked
    assert "scales(%x_scale, %w_scale" in masked
    batched = Problem("batched_matmul", "s8", n=136, k=128, groups=2,
                      out_dtype=E4M3).mlir()
    assert "y_scale(%y_scale : memref<2x?x2xf32, strided<[?, 1, ?]>>)" \
        in batched
    # Swiglu: y (and its scales) have n columns, w 2n rows.
    gated = Problem("segment_matmul", "bf16", n=256, k=512, groups=4,
                    activation="swiglu", out_dtype=E4M3).mlir()
    assert "%w: memref<4x512x512xbf16>" in gated
    assert "y_scale(%y_scale : memref<?x2xf32, strided<[1, ?]>>)" in gated
    # Any other output has no y_scale.
    for out in ("bf16", "f16", "f32"):
        text = Problem("segment_matmul", "bf16", n=384, k=512, groups=4,
                       out_dtype=out).mlir()
        assert "y_scale" not in text and "f8E4M3FN" not in text


def test_fp8_output_keys_and_spec_lines() -> None:
    """out_dtype is in the spec line, so in the cache key and the kernel
    name: an e4m3 kernel never shares a bf16 one's bundle."""
    p = Problem("segment_matmul", "bf16", n=384, k=512, groups=4,
                out_dtype=E4M3)
    bf16 = Problem("segment_matmul", "bf16", n=384, k=512, groups=4)
    assert p.spec() == {"op": "segment_matmul", "dtype": "bf16", "n": 384,
                        "k": 512, "groups": 4, "out_dtype": "f8e4m3"}
    assert Problem.from_spec(json.loads(p.key)) == p
    assert p.key != bf16.key and p.kernel_name != bf16.kernel_name
    fp8 = Problem("segment_matmul", E4M3, n=384, k=512, groups=4,
                  out_dtype=E4M3)
    assert fp8.spec()["out_dtype"] == "f8e4m3"
    assert Problem.from_spec(fp8.spec()) == fp8
    assert len({p.key, bf16.key, fp8.key, Problem(
        "segment_matmul", E4M3, n=384, k=512, groups=4).key}) == 4


@pytest.mark.parametrize("fields, message", [
    ({"accumulate": True}, "accumulate: adds to y, but an e4m3 y "
     r"\(out_dtype 'f8e4m3'\) is quantised from the values the epilogue "
     "computes"),
    ({"scatter": True}, "scatter: scatters y's rows, but an e4m3 y"),
    ({"scatter": True, "accumulate": True, "atomic": True},
     "accumulate: adds to y"),
    ({"config": {"block_n": 64}}, r"config.block_n \(64\) must make tiles of "
     "whole 128-column blocks of an e4m3 y: block_n a multiple of 128"),
    ({"config": {"block_m": 64, "block_n": 128, "swap_ab": True}},
     "config.swap_ab: an e4m3 y"),
    ({"activation": "swiglu", "config": {"block_n": 128}},
     r"config.block_n \(128\) must make tiles of whole 128-column blocks of "
     r"an e4m3 y: block_n / 2 a multiple of 128"),
    ({"activation": "swiglu", "gate_up_block": 64},
     r"gate_up_block \(64\) must be 128 with out_dtype 'f8e4m3'"),
    ({"op": "segment_matmul_k"}, "out_dtype: segment_matmul_k writes dw as "
     "bf16, f16, f32; got 'f8e4m3'"),
    ({"out_dtype": "f8e5m2"}, "out_dtype must be one of bf16, f16, f32, "
     "f8e4m3; got 'f8e5m2'"),
])
def test_fp8_output_problem_rejects(fields: dict, message: str) -> None:
    base = {"op": "segment_matmul", "dtype": "bf16", "n": 256, "k": 512,
            "groups": 4, "out_dtype": E4M3}
    base.update(fields)
    with pytest.raises(SpecError, match=message):
        Problem(**base)


def test_fp8_output_accepts_whole_block_tiles() -> None:
    ok = [dict(config={"block_n": 256}),
          dict(activation="swiglu", config={"block_n": 256}),
          dict(activation="swiglu", gate_up_block=128),
          dict(row_indices=True, activation="gelu", row_scale=True)]
    for fields in ok:
        p = Problem("segment_matmul", "bf16", n=256, k=512, groups=4,
                    out_dtype=E4M3, **fields)
        assert p.fp8_output


# -- catalog spec lines -------------------------------------------------------

SPEC = {"kernels": [
    {"op": "segment_matmul", "dtype": ["bf16", "f8e4m3"], "n": 4096,
     "k": 7168, "groups": 8, "out_dtype": "f8e4m3",
     "activation": ["silu", "swiglu"]},
    {"op": "masked_matmul", "dtype": "f8e4m3", "n": 2048, "k": 7168,
     "groups": 8, "out_dtype": ["bf16", "f8e4m3"]},
]}


def test_fp8_output_catalog_spec(tmp_path: Path, capsys) -> None:
    problems = catalog.expand_spec(SPEC)
    assert len(problems) == 6
    assert [p.out_dtype for p in problems] == ["f8e4m3"] * 4 + ["bf16",
                                                               "f8e4m3"]
    assert all("y_scale(" in p.mlir() for p in problems if p.fp8_output)
    (tmp_path / "s.json").write_text(json.dumps(SPEC))
    assert catalog.expand_spec(catalog.load_spec(tmp_path / "s.json")) \
        == problems
    # A catalog lists its keys as the spec lines, out_dtype included, and a
    # miss names the line to add.
    (tmp_path / "catalog.json").write_text(json.dumps(
        {"format": "ggemm-catalog", "version": 1,
         "kernels": {p.key: p.kernel_name + ".json" for p in problems}}))
    assert catalog.main(["list", str(tmp_path)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.split("\n")
             if line]
    assert lines == [p.spec() for p in problems]
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "catalog.json").write_text(json.dumps(
        {"format": "ggemm-catalog", "version": 1, "kernels": {}}))
    with pytest.raises(cache.CatalogMissError) as error:
        cache.manifest_for(problems[0], empty)
    assert error.value.spec_line["out_dtype"] == "f8e4m3"
    cache._indices.clear()
    with pytest.raises(SpecError, match=r"kernels\[0\]: accumulate: adds to "
                       "y, but an e4m3 y"):
        catalog.expand_spec({"kernels": [
            {"op": "segment_matmul", "dtype": "bf16", "n": 256, "k": 512,
             "groups": 2, "out_dtype": "f8e4m3", "accumulate": True}]})


# -- the compiler -------------------------------------------------------------

FP8_OUTPUT_PROBLEMS = [
    Problem("segment_matmul", "bf16", n=384, k=512, groups=4, bias=True,
            activation="silu", out_dtype=E4M3),
    Problem("segment_matmul", "f16", n=200, k=256, groups=3, num_weights=5,
            weight_indices=True, row_scale=True, index_dtype="i64",
            out_dtype=E4M3),
    Problem("segment_matmul", "bf16", n=256, k=512, groups=4,
            activation="swiglu", row_indices=True, out_dtype=E4M3),
    Problem("segment_matmul", "bf16", n=256, k=512, groups=4,
            activation="swiglu", gate_up_block=128, out_dtype=E4M3),
    Problem("segment_matmul", "bf16", n=304, k=512, groups=4,
            weight_layout="kn", out_dtype=E4M3),
    Problem("segment_matmul", E4M3, n=384, k=512, groups=4, out_dtype=E4M3),
    Problem("masked_matmul", E4M3, n=200, k=256, groups=4, out_dtype=E4M3,
            x_scale_block="per_row", w_scale_block="tensor"),
    Problem("masked_matmul", "bf16", n=256, k=256, groups=4, out_dtype=E4M3,
            config={"block_m": 64, "block_n": 128,
                    "consumer_warpgroups": 1}),
    Problem("batched_matmul", "s8", n=136, k=128, groups=2, out_dtype=E4M3),
]


@needs_compiler
@pytest.mark.parametrize("problem", FP8_OUTPUT_PROBLEMS,
                         ids=[p.function_name for p in FP8_OUTPUT_PROBLEMS])
def test_fp8_output_ir_verifies_and_tiles(problem: Problem) -> None:
    tiled = ggemm.run_pipeline(problem.mlir(),
                               "ggemm-select-config,ggemm-tile")
    assert "ggemm.foreach_tile" in tiled


@needs_compiler
@pytest.mark.parametrize("problem", FP8_OUTPUT_PROBLEMS,
                         ids=[p.function_name for p in FP8_OUTPUT_PROBLEMS])
def test_fp8_output_compiles_through_the_disk_cache(
        problem: Problem, tmp_path: Path, monkeypatch) -> None:
    """The bundle's manifest is the runtime's contract: out_dtype f8e4m3,
    y_scale_block, y_scale with its strides as the last parameters, and a
    staged y stored by TMA in 128-byte boxes (each row's 1x128 block); the
    runtime, where built, loads it."""
    monkeypatch.delenv("GGEMM_CATALOG", raising=False)
    monkeypatch.setattr(cache, "_options",
                        cache.CompileOptions(cache_dir=tmp_path / "cache"))
    path = cache.manifest_for(problem)
    manifest = json.loads(path.read_text())
    assert bundle_entries(manifest)[0].startswith(problem.function_name)
    assert manifest["problem"]["out_dtype"] == "f8e4m3"
    assert manifest["problem"]["y_scale_block"] == "1x128"
    for variant in manifest.get("variants", [manifest]):
        assert [p["name"] for p in variant["params"][-3:]] == [
            "y_scale", "y_scale_stride_row", "y_scale_stride_col"]
        for desc in (p for p in variant["params"] if p["name"] == "y_desc"):
            assert desc["dtype"] == "f8e4m3"
            assert desc["box"][0] == 128, desc
    try:
        from ggemm.runtime import Kernel, load_library
        load_library()
    except ggemm.GGemmError:
        return  # no runtime library: the manifest's fields are enough
    with Kernel(path) as kernel:
        assert kernel.num_variants >= 1


# -- the ops: arguments, the returned (y, y_scale), chaining ------------------

class Made(DeviceTensor):
    """A tensor the stand-in torch allocated; zero_() is recorded."""

    zeroed = False

    def zero_(self) -> "Made":
        self.zeroed = True
        return self


class StandInTorch:
    """Enough of torch for the ops' eager path on a CPU: the dtypes they
    name and the allocations of an output and its scales."""

    bfloat16, float16, float32, float8_e4m3fn = (
        FakeDtype("bfloat16"), FakeDtype("float16"), FakeDtype("float32"),
        FakeDtype(F8))

    def __init__(self) -> None:
        self.compiler = types.SimpleNamespace(is_compiling=lambda: False)
        self.dtype = FakeDtype
        self.made: List[Made] = []

    def is_grad_enabled(self) -> bool:
        return False

    def _make(self, shape: Any, dtype: Any, device: Any,
              strides: Any = None, zeroed: bool = False) -> Made:
        tensor = Made(shape, dtype.name, strides=strides, device=device)
        tensor.zeroed = zeroed
        self.made.append(tensor)
        return tensor

    def empty(self, shape, dtype=None, device=None):
        return self._make(shape, dtype, device)

    def zeros(self, shape, dtype=None, device=None):
        return self._make(shape, dtype, device, zeroed=True)

    def empty_strided(self, size, stride, dtype=None, device=None):
        return self._make(size, dtype, device, strides=stride)


class Recorder:
    def __init__(self) -> None:
        self.launches: List[dict] = []

    def launch(self, tensors: dict, expected_m: Any = None) -> None:
        self.launches.append(dict(tensors))


@pytest.fixture
def fp8_eager(monkeypatch):
    """The ops' eager path with the stand-in torch, a recording kernel, the
    problems looked up and a count of checking plans."""
    stand_in = StandInTorch()
    monkeypatch.setattr(ops, "torch", stand_in)
    monkeypatch.setattr(ops, "_checked", {})
    monkeypatch.setattr(ops, "_kernels", {})
    kernel = Recorder()
    problems: List[Problem] = []

    def kernel_for(problem: Problem, catalog: Any = None) -> Recorder:
        problems.append(problem)
        return kernel
    monkeypatch.setattr(ops, "kernel_for", kernel_for)
    plans = {"count": 0}
    real_segment, real_grouped = ops.plan_segment_matmul, ops._plan_grouped

    def plan_segment(*args, **kwargs):
        plans["count"] += 1
        return real_segment(*args, **kwargs)

    def plan_grouped(*args, **kwargs):
        plans["count"] += 1
        return real_grouped(*args, **kwargs)
    monkeypatch.setattr(ops, "plan_segment_matmul", plan_segment)
    monkeypatch.setattr(ops, "_plan_grouped", plan_grouped)
    return types.SimpleNamespace(torch=stand_in, kernel=kernel,
                                 problems=problems, plans=plans)


def seg_args(rows: int = 1000, n: int = 384, dtype: str = "bfloat16",
             **overrides: Any) -> dict:
    args = dict(x=DeviceTensor((rows, 512), dtype),
                w=DeviceTensor((4, n, 512), dtype),
                seg_indptr=DeviceTensor((5,), "int32"))
    args.update(overrides)
    return args


def test_segment_matmul_returns_e4m3_and_its_scales(fp8_eager) -> None:
    args = seg_args()
    y, y_scale = ggemm.segment_matmul(**args, out_dtype=E4M3,
                                      activation="silu")
    assert y.shape == (1000, 384) and str(y.dtype) == "torch.float8_e4m3fn"
    # MN-major, as the FP8 ops take x_scale: torch.empty(3, 1000).t().
    assert y_scale.shape == (1000, 3) and y_scale.stride() == (1, 1000)
    assert str(y_scale.dtype) == "torch.float32"
    # Rows outside every segment are not written: both read zero.
    assert y.zeroed and y_scale.zeroed
    (launch,) = fp8_eager.kernel.launches
    assert launch["y"] is y and launch["y_scale"] is y_scale
    assert launch["x"] is args["x"]
    (problem,) = fp8_eager.problems
    assert problem.out_dtype == E4M3 and problem.activation == "silu"
    assert "y_scale(%y_scale" in problem.mlir()
    # torch.float8_e4m3fn names it too; the block stride is padded to 4
    # rows (16 bytes), as TMA reads x_scale.
    y, y_scale = ggemm.segment_matmul(**seg_args(rows=1001, n=200),
                                      out_dtype=fp8_eager.torch.float8_e4m3fn)
    assert y_scale.shape == (1001, 2) and y_scale.stride() == (1, 1004)


def test_grouped_ops_return_e4m3_and_grouped_scales(fp8_eager) -> None:
    x, w = DeviceTensor((3, 5, 512)), DeviceTensor((3, 384, 512))
    counts = DeviceTensor((3,), "int32")
    y, y_scale = ggemm.masked_matmul(x, w, counts, out_dtype=E4M3,
                                     expected_m=4)
    assert y.shape == (3, 5, 384) and str(y.dtype) == "torch.float8_e4m3fn"
    # [G, Mmax, NB]: the groups' rows back to back (group stride Mmax), the
    # block stride G * Mmax = 15 padded to 16.
    assert y_scale.shape == (3, 5, 3) and y_scale.stride() == (5, 1, 16)
    assert y.zeroed and y_scale.zeroed  # rows past masked_m[g]
    y, y_scale = ggemm.batched_matmul(x, w, out_dtype=E4M3)
    assert y_scale.shape == (3, 5, 3) and y_scale.stride() == (5, 1, 16)
    assert not y.zeroed and not y_scale.zeroed  # every row is written
    launch = fp8_eager.kernel.launches[-1]
    assert launch["y"] is y and launch["y_scale"] is y_scale
    assert [p.op for p in fp8_eager.problems] == ["masked_matmul",
                                                  "batched_matmul"]
    assert {p.out_dtype for p in fp8_eager.problems} == {E4M3}


def test_an_empty_problem_returns_empty_scales(fp8_eager) -> None:
    y, y_scale = ggemm.segment_matmul(**seg_args(rows=0), out_dtype=E4M3)
    assert y.shape == (0, 384) and y_scale.shape == (0, 3)
    assert fp8_eager.kernel.launches == []


def test_the_pair_feeds_the_next_fp8_op_without_a_copy(fp8_eager,
                                                       monkeypatch) -> None:
    """y and y_scale of one op are x and x_scale of the next FP8 op as they
    are: e4m3 x [M, K] and 1x128 scales MN-major with a 16-byte block
    stride, which the FP8 ops would otherwise copy."""
    copies: List[Any] = []
    monkeypatch.setattr(ops, "mn_major_scales",
                        lambda scale: copies.append(scale) or scale)
    w2 = DeviceTensor((4, 256, 384), F8)
    w2_scale = DeviceTensor((4, 2, 3), "float32")
    for rows in (1000, 1001, 1):
        y, y_scale = ggemm.segment_matmul(**seg_args(rows=rows),
                                          out_dtype=E4M3)
        plan = ops.plan_segment_matmul(y, w2, seg_args()["seg_indptr"],
                                       x_scale=y_scale, w_scale=w2_scale)
        assert plan.tensors["x"] is y and plan.tensors["x_scale"] is y_scale
        assert plan.problem.x_scale_block == "1x128"
        # The second op may write e4m3 too: its scales feed a third.
        z, z_scale = ggemm.segment_matmul(y, w2, seg_args()["seg_indptr"],
                                          x_scale=y_scale, w_scale=w2_scale,
                                          out_dtype=E4M3)
        assert z.shape == (rows, 256) and z_scale.shape == (rows, 2)
    x, w = DeviceTensor((3, 5, 512)), DeviceTensor((3, 384, 512))
    counts = DeviceTensor((3,), "int32")
    y, y_scale = ggemm.masked_matmul(x, w, counts, out_dtype=E4M3)
    plan = ops.plan_masked_matmul(y, DeviceTensor((3, 128, 384), F8), counts,
                                  x_scale=y_scale,
                                  w_scale=DeviceTensor((3, 1, 3), "float32"))
    assert plan.tensors["x_scale"] is y_scale
    assert copies == []


def test_out_and_out_scale(fp8_eager) -> None:
    out = DeviceTensor((1000, 384), F8)
    for strides in ((1, 1000), (3, 1), (1, 1024)):
        out_scale = DeviceTensor((1000, 3), "float32", strides=strides)
        y, y_scale = ggemm.segment_matmul(**seg_args(), out=out,
                                          out_scale=out_scale)
        assert y is out and y_scale is out_scale
        assert fp8_eager.kernel.launches[-1]["y_scale"] is out_scale
    assert fp8_eager.torch.made == []  # nothing allocated
    # A repeated call is not checked again; other strides are.
    before = fp8_eager.plans["count"]
    ggemm.segment_matmul(**seg_args(), out=out, out_scale=out_scale)
    assert fp8_eager.plans["count"] == before
    ggemm.segment_matmul(**seg_args(), out=out, out_scale=DeviceTensor(
        (1000, 3), "float32", strides=(4, 1)))
    assert fp8_eager.plans["count"] == before + 1
    # Masked: [G, Mmax, NB], groups Mmax rows apart; row-major works too.
    x, w = DeviceTensor((3, 5, 512)), DeviceTensor((3, 384, 512))
    counts = DeviceTensor((3,), "int32")
    for strides in ((5, 1, 15), (15, 3, 1)):
        scale = DeviceTensor((3, 5, 3), "float32", strides=strides)
        y, y_scale = ggemm.masked_matmul(
            x, w, counts, out=DeviceTensor((3, 5, 384), F8), out_scale=scale)
        assert y_scale is scale


OUT = DeviceTensor((1000, 384), F8)
SCALE = DeviceTensor((1000, 3), "float32", strides=(1, 1000))


@pytest.mark.parametrize("overrides, message", [
    (dict(out=OUT), r"out_scale: out is torch.float8_e4m3fn, whose scales "
     r"the kernel writes too: pass out_scale=, f32 \[M, ceil\(N/128\)\] = "
     r"\[1000, 3\]"),
    (dict(out=DeviceTensor((1000, 384)), out_scale=SCALE),
     "out_scale: the scales of an e4m3 out .* but the output is bf16"),
    (dict(out_scale=SCALE), r"out_scale: the scales of an e4m3 out"),
    (dict(out_dtype=E4M3, out_scale=SCALE), "out_scale: needs out= "
     r"\(the e4m3 tensor it scales\)"),
    (dict(out=OUT, out_scale=DeviceTensor((1000, 4), "float32")),
     r"out_scale: expected shape \[M, ceil\(N/128\)\] = \[1000, 3\] \(one "
     r"f32 per row and 128 columns of out\), got \[1000, 4\]"),
    (dict(out=OUT, out_scale=DeviceTensor((1000, 3), "bfloat16")),
     r"out_scale: expected dtype f32 \(torch.float32\)"),
    (dict(out=OUT, out_scale=DeviceTensor((1000, 3), "float32",
                                          device="cpu")),
     "out_scale: expected a CUDA tensor"),
    (dict(out=OUT, out_scale=DeviceTensor((1000, 3), "float32",
                                          strides=(1, 500))),
     r"out_scale: strides \[1, 500\] for shape \[1000, 3\] may give two "
     r"scales one element"),
    (dict(out=DeviceTensor((1000, 384)), out_dtype=E4M3),
     "out_dtype is f8e4m3 but out is torch.bfloat16"),
    (dict(out=DeviceTensor((999, 384), F8), out_scale=SCALE),
     r"out: expected shape \[1000, 384\], got \[999, 384\]"),
    (dict(out_dtype="f8e5m2"), "out_dtype: expected torch.bfloat16, "
     "torch.float16, torch.float32 or torch.float8_e4m3fn, got f8e5m2"),
    (dict(out=OUT, out_scale=SCALE, accumulate=True), "accumulate: an e4m3 "
     r"output \(torch.float8_e4m3fn\) is quantised from the values the "
     "epilogue computes"),
    (dict(out_dtype=E4M3, atomic=True), "atomic: an e4m3 output"),
    (dict(out=OUT, out_scale=SCALE,
          scatter_indices=DeviceTensor((1000,), "int32")),
     "scatter_indices: an e4m3 output"),
    (dict(out_dtype=E4M3, config={"block_n": 64}), "config: block_n = 64 "
     "makes tiles of 64 columns of out; an e4m3 output needs whole blocks "
     "of 128"),
    (dict(out_dtype=E4M3, config={"block_m": 32, "swap_ab": True}),
     "config: swap_ab=True is not available with an e4m3 output"),
    (dict(out_dtype=E4M3, activation="swiglu", gate_up_block=64),
     "gate_up_block: 64 with an e4m3 output must be 128"),
    (dict(out_dtype=E4M3, activation="swiglu", config={"block_n": 128}),
     "config: block_n = 128 makes tiles of 64 columns of out"),
])
def test_fp8_output_argument_errors(overrides: dict, message: str) -> None:
    args = seg_args()
    x, w, seg = args.pop("x"), args.pop("w"), args.pop("seg_indptr")
    with pytest.raises(ops.ArgumentError, match=message):
        ops.plan_segment_matmul(x, w, seg, **overrides)


def test_fp8_output_grouped_argument_errors() -> None:
    x, w = FakeTensor((3, 5, 512)), FakeTensor((3, 384, 512))
    counts = FakeTensor((3,), "int32")
    out = FakeTensor((3, 5, 384), F8)
    with pytest.raises(ops.ArgumentError, match=r"out_scale: groups must be "
                       r"M = 5 rows apart \(stride\(0\) == shape\[1\] \* "
                       r"stride\(1\)\), got strides \[15, 1, 5\]; allocate "
                       r"it MN-major as torch.empty\(3, 15\).t\(\).view\(3, "
                       r"5, 3\)"):
        # MN-major per group: torch.empty(3, 3, 5).transpose(1, 2).
        ops.plan_masked_matmul(x, w, counts, out=out, out_scale=FakeTensor(
            (3, 5, 3), "float32", strides=(15, 1, 5)))
    with pytest.raises(ops.ArgumentError, match=r"out_scale: expected shape "
                       r"\[G, M, ceil\(N/128\)\] = \[3, 5, 3\]"):
        ops.plan_batched_matmul(x, w, out=out, out_scale=FakeTensor(
            (15, 3), "float32"))
    with pytest.raises(ops.ArgumentError, match="accumulate: an e4m3 output"):
        ops.plan_batched_matmul(x, w, out=out, accumulate=True,
                                out_scale=FakeTensor((3, 5, 3), "float32"))
    plan = ops.plan_masked_matmul(x, w, counts, out_dtype=E4M3)
    assert plan.out_dtype == E4M3 and plan.problem.fp8_output
    assert plan.key != ops.plan_masked_matmul(x, w, counts).key
    # segment_matmul_k's dw and aiter's INT8 GEMM stay float.
    with pytest.raises(ops.ArgumentError, match="out_dtype: expected "
                       "torch.bfloat16, torch.float16 or torch.float32, got "
                       "f8e4m3"):
        ops.plan_segment_matmul_k(FakeTensor((100, 256)),
                                  FakeTensor((100, 128)),
                                  FakeTensor((3,), "int32"), out_dtype=E4M3)
    from ggemm.compat import aiter
    with pytest.raises(ops.ArgumentError, match="output_dtype: expected "
                       "torch.bfloat16, torch.float16 or torch.float32"):
        aiter.int8_gemm(FakeTensor((8, 128), "int8"),
                        FakeTensor((64, 128), "int8"),
                        FakeTensor((8, 1), "float32"),
                        FakeTensor((1, 64), "float32"), output_dtype=E4M3)


def test_fp8_output_launches_directly(fp8_eager, monkeypatch) -> None:
    """An e4m3 output has no torch.library op yet, as FP8 inputs have not:
    it launches directly (not differentiable) even when an input requires
    grad, and torch.compile refuses it by name."""
    library: List[Any] = []
    monkeypatch.setattr(ops, "_library_ops", lambda: library.append(1))
    monkeypatch.setattr(fp8_eager.torch, "is_grad_enabled", lambda: True)
    args = seg_args()
    args["x"].requires_grad = True
    y, y_scale = ggemm.segment_matmul(**args, out_dtype=E4M3)
    assert library == [] and len(fp8_eager.kernel.launches) == 1
    x, w = DeviceTensor((3, 5, 512)), DeviceTensor((3, 384, 512))
    x.requires_grad = True
    ggemm.batched_matmul(x, w, out=DeviceTensor((3, 5, 384), F8),
                         out_scale=DeviceTensor((3, 5, 3), "float32"))
    assert library == [] and len(fp8_eager.kernel.launches) == 2
    monkeypatch.setattr(fp8_eager.torch.compiler, "is_compiling",
                        lambda: True)
    with pytest.raises(ggemm.NotLoweredError, match="out_dtype: e4m3 "
                       "outputs .* are not registered as torch.library ops "
                       "yet"):
        ggemm.segment_matmul(**seg_args(), out_dtype=E4M3)
    with pytest.raises(ggemm.NotLoweredError, match="out_dtype: e4m3"):
        ggemm.masked_matmul(x, w, DeviceTensor((3,), "int32"),
                            out=DeviceTensor((3, 5, 384), F8),
                            out_scale=DeviceTensor((3, 5, 3), "float32"))
