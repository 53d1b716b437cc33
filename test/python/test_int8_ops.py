"""INT8 (s8 x s8 -> exact int32, dequantised by tensor-wise or per-row
scales) in the Python layer on a CPU: the problem and its IR text, catalog
spec lines, the ops' argument checks, the eager launch path and aiter's
``int8_gemm``. Stand-in tensors, no torch, no GPU; the runtime's side of an
s8 kernel is in test_runtime.py."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List

import pytest

import ggemm
from ggemm import cache, catalog, ops
from ggemm.problem import Problem, SpecError

from test_ops import (DeviceTensor, FakeTensor, eager,  # noqa: F401
                      needs_compiler)

I8 = "int8"


class Tensor(DeviceTensor):
    """A stand-in with the view methods the INT8 paths call (reshape,
    unsqueeze, indexing a batch); each records the tensor it views."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.base = None

    def _view(self, shape: Any) -> "Tensor":
        view = Tensor(shape, self.dtype.name, device=self.device)
        view.base = self
        return view

    def reshape(self, *shape: Any) -> "Tensor":
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        return self._view(shape)

    def unsqueeze(self, dim: int) -> "Tensor":
        shape = list(self.shape)
        shape.insert(dim, 1)
        return self._view(shape)

    def contiguous(self) -> "Tensor":
        return self

    def __getitem__(self, index: int) -> "Tensor":
        return self._view(self.shape[1:])


def seg_int8(**overrides: Any) -> ops._Plan:
    """An INT8 segment_matmul: M = 1000, K = 512, N = 384, G = 8, per-token
    and per-channel scales."""
    args = dict(x=Tensor((1000, 512), I8), w=Tensor((8, 384, 512), I8),
                seg_indptr=Tensor((9,), "int32"),
                x_scale=Tensor((1000,), "float32"),
                w_scale=Tensor((8, 384), "float32"))
    args.update(overrides)
    x, w, seg = args.pop("x"), args.pop("w"), args.pop("seg_indptr")
    return ops.plan_segment_matmul(x, w, seg, **args)


# -- dtype names --------------------------------------------------------------

def test_int8_is_s8() -> None:
    assert ggemm.DType.S8 == 7  # GGEMM_DTYPE_S8 of ggemm_runtime.h
    assert ops.dtype_name(FakeTensor((4,), I8)) == "s8"
    from ggemm.problem import INT8_DTYPES, MLIR_TYPES, SCALED_DTYPES
    assert INT8_DTYPES == ("s8",) and "s8" in SCALED_DTYPES
    assert MLIR_TYPES["s8"] == "i8"


# -- Problem and its IR -------------------------------------------------------

def test_int8_ir_text() -> None:
    """The FP8 per-row form with i8 elements, as the compiler's contract
    has it."""
    p = Problem("segment_matmul", "s8", n=4096, k=7168, groups=8)
    assert p.out_dtype == "bf16"
    assert (p.x_scale_block, p.w_scale_block) == ("per_row", "per_row")
    assert not p.block_scaled
    text = p.mlir()
    assert ("ggemm.segment_matmul ins(%x, %w : memref<?x7168xi8>, "
            "memref<8x4096x7168xi8>)\n      segments(%seg_indptr : "
            "memref<9xi32>)\n      scales(%x_scale, %w_scale : "
            "memref<?xf32>, memref<8x4096xf32>)\n      outs(%y : "
            "memref<?x4096xbf16>) {x_scale_block = "
            "#ggemm.scale_block<per_row>, w_scale_block = "
            "#ggemm.scale_block<per_row>}") in text
    assert "%x_scale: memref<?xf32>, %w_scale: memref<8x4096xf32>" in text
    assert p.function_name.startswith("ggemm_segment_matmul_s8_")

    masked = Problem("masked_matmul", "s8", n=256, k=256, groups=4,
                     x_scale_block="tensor", w_scale_block="tensor",
                     out_dtype="f32").mlir()
    assert ("ins(%x, %w : memref<4x?x256xi8>, memref<4x256x256xi8>)"
            in masked)
    assert "masked_m(%masked_m : memref<4xi32>)" in masked
    assert "scales(%x_scale, %w_scale : memref<1xf32>, memref<4xf32>)" \
        in masked
    assert "outs(%y : memref<4x?x256xf32>)" in masked
    assert ("x_scale_block = #ggemm.scale_block<tensor>, w_scale_block = "
            "#ggemm.scale_block<tensor>}") in masked

    batched = Problem("batched_matmul", "s8", n=136, k=128, groups=2,
                      x_scale_block="per_row", w_scale_block="tensor",
                      bias=True, activation="silu", out_dtype="f16")
    text = batched.mlir()
    assert ("scales(%x_scale, %w_scale : memref<2x?xf32>, memref<2xf32>)\n"
            "      bias(%bias : memref<2x136xf32>)") in text
    assert "outs(%y : memref<2x?x136xf16>)" in text
    assert "activation = silu" in text


def test_int8_spec_lines_round_trip() -> None:
    p = Problem("segment_matmul", "s8", n=384, k=512, groups=3,
                num_weights=5, weight_indices=True)
    # The scale blocks are always in an INT8 line, defaults included.
    assert p.spec() == {"op": "segment_matmul", "dtype": "s8", "n": 384,
                        "k": 512, "groups": 3, "x_scale_block": "per_row",
                        "w_scale_block": "per_row", "num_weights": 5,
                        "weight_indices": True}
    assert Problem.from_spec(json.loads(p.key)) == p
    assert Problem.from_spec({"op": "segment_matmul", "dtype": "s8",
                              "n": 384, "k": 512, "groups": 3,
                              "num_weights": 5,
                              "weight_indices": True}) == p
    fp8 = Problem("segment_matmul", "f8e4m3", n=384, k=512, groups=3,
                  num_weights=5, weight_indices=True,
                  x_scale_block="per_row", w_scale_block="per_row")
    tensor = Problem("segment_matmul", "s8", n=384, k=512, groups=3,
                     num_weights=5, weight_indices=True,
                     x_scale_block="tensor")
    keys = {p.key, fp8.key, tensor.key}
    assert len(keys) == 3
    assert len({p.kernel_name, fp8.kernel_name, tensor.kernel_name}) == 3


@pytest.mark.parametrize("fields, message", [
    ({"x_scale_block": "1x128"}, "x_scale_block: INT8 takes tensor-wise or "
     r"per-row scales \('per_row' or 'tensor'\), got '1x128'"),
    ({"w_scale_block": "128x128"}, "w_scale_block: INT8 takes tensor-wise "
     "or per-row scales"),
    ({"weight_layout": "kn"},
     "weight_layout: 'kn' with INT8 operands is not lowered yet"),
    ({"k": 520}, r"k \(520\) must be a multiple of 16 with INT8 operands"),
    ({"row_indices": True}, "row_indices: gathered INT8 rows are not "
     "lowered"),
    ({"config": {"block_k": 64}}, "config.block_k must be 128 with INT8"),
    ({"out_dtype": "s8"}, "out_dtype must be one of bf16, f16, f32"),
    ({"op": "segment_matmul_k"}, "INT8 K-ragged is not lowered"),
])
def test_int8_problem_rejects(fields: dict, message: str) -> None:
    base = {"op": "segment_matmul", "dtype": "s8", "n": 256, "k": 512,
            "groups": 4}
    base.update(fields)
    with pytest.raises(SpecError, match=message):
        Problem(**base)


# -- catalog spec lines -------------------------------------------------------

SPEC = {"kernels": [
    {"op": "segment_matmul", "dtype": "s8", "n": 4096, "k": 7168,
     "groups": 8, "x_scale_block": ["per_row", "tensor"],
     "w_scale_block": ["per_row", "tensor"]},
    {"op": "masked_matmul", "dtype": "s8", "n": 7168, "k": 2048,
     "groups": 8, "out_dtype": "f32"},
]}


def test_int8_catalog_spec(tmp_path: Path) -> None:
    problems = catalog.expand_spec(SPEC)
    assert len(problems) == 5
    assert {(p.x_scale_block, p.w_scale_block) for p in problems[:4]} == {
        ("per_row", "per_row"), ("per_row", "tensor"),
        ("tensor", "per_row"), ("tensor", "tensor")}
    masked = problems[4]
    assert (masked.dtype, masked.out_dtype, masked.x_scale_block) == \
        ("s8", "f32", "per_row")
    assert "memref<8x?x2048xi8>" in masked.mlir()
    (tmp_path / "s.json").write_text(json.dumps(SPEC))
    assert catalog.expand_spec(catalog.load_spec(tmp_path / "s.json")) \
        == problems
    with pytest.raises(SpecError, match="kernels\\[0\\]: x_scale_block: INT8 "
                       "takes tensor-wise or per-row scales"):
        catalog.expand_spec({"kernels": [
            {"op": "segment_matmul", "dtype": "s8", "n": 64, "k": 64,
             "groups": 2, "x_scale_block": "1x128",
             "w_scale_block": "128x128"}]})


def test_int8_catalog_list_and_miss(tmp_path: Path, capsys) -> None:
    """A catalog's keys of INT8 kernels read back as their spec lines, and
    a miss names the line to add."""
    problems = catalog.expand_spec(SPEC)
    (tmp_path / "catalog.json").write_text(json.dumps(
        {"format": "ggemm-catalog", "version": 1,
         "kernels": {p.key: p.kernel_name + ".json" for p in problems}}))
    assert catalog.main(["list", str(tmp_path)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.split("\n")
             if line]
    assert lines == [p.spec() for p in problems]
    assert all(line["dtype"] == "s8" for line in lines)

    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "catalog.json").write_text(json.dumps(
        {"format": "ggemm-catalog", "version": 1, "kernels": {}}))
    with pytest.raises(cache.CatalogMissError) as error:
        cache.manifest_for(problems[1], empty)
    assert error.value.spec_line == problems[1].spec()
    assert error.value.spec_line["w_scale_block"] == "tensor"
    cache._indices.clear()


# -- argument checks ----------------------------------------------------------

def test_int8_segment_plan() -> None:
    plan = seg_int8()
    p = plan.problem
    assert (p.dtype, p.out_dtype, p.n, p.k, p.groups) == ("s8", "bf16", 384,
                                                          512, 8)
    assert (p.x_scale_block, p.w_scale_block) == ("per_row", "per_row")
    assert plan.out_shape == (1000, 384) and plan.out_dtype == "bf16"
    bf16 = ops.plan_segment_matmul(FakeTensor((1000, 512)),
                                   FakeTensor((8, 384, 512)),
                                   FakeTensor((9,), "int32"))
    assert bf16.key != plan.key and len(bf16.key) == len(plan.key)
    assert seg_int8(out_dtype="f32").out_dtype == "f32"


def test_int8_scale_kinds_from_shapes() -> None:
    """The FP8 tensor-wise / per-row shapes, each with each op; dense
    scales go to the kernel as they are, [M, 1] ones as an [M] view."""
    for xs, ws, kinds in [
            ((1000,), (8, 384), ("per_row", "per_row")),
            ((1,), (8,), ("tensor", "tensor")),
            ((), (8, 384), ("tensor", "per_row")),
            ((1000,), (8,), ("per_row", "tensor"))]:
        x_scale, w_scale = Tensor(xs, "float32"), Tensor(ws, "float32")
        plan = seg_int8(x_scale=x_scale, w_scale=w_scale)
        assert (plan.problem.x_scale_block, plan.problem.w_scale_block) == \
            kinds
        assert plan.tensors["w_scale"] is w_scale
        if xs:
            assert plan.tensors["x_scale"] is x_scale
    column = Tensor((1000, 1), "float32")
    plan = seg_int8(x_scale=column)
    assert plan.problem.x_scale_block == "per_row"
    assert plan.tensors["x_scale"].shape == (1000,)
    assert plan.tensors["x_scale"].base is column
    # K = 128: [M, 1] is also the 1x128 block shape, which FP8 reads as
    # blocks next to 128x128 weight scales; INT8 has no blocks, so it is
    # per-row, and the weight's block shape is refused.
    k128 = dict(x=Tensor((1000, 128), I8), w=Tensor((8, 384, 128), I8),
                x_scale=Tensor((1000, 1), "float32"))
    plan = seg_int8(**k128)
    assert (plan.problem.x_scale_block, plan.problem.w_scale_block) == \
        ("per_row", "per_row")
    with pytest.raises(ops.ArgumentError, match=r"w_scale: INT8 takes .* "
                       r"got \[8, 3, 1\] \(128x128 block scales are FP8's\)"):
        seg_int8(**k128, w_scale=Tensor((8, 3, 1), "float32"))
    # K need not be a multiple of 128.
    assert seg_int8(x=Tensor((1000, 160), I8), w=Tensor((8, 384, 160), I8)
                    ).problem.k == 160

    xg, wg = Tensor((4, 64, 256), I8), Tensor((4, 384, 256), I8)
    masked = ops.plan_masked_matmul(xg, wg, Tensor((4,), "int32"),
                                    x_scale=Tensor((4, 64), "float32"),
                                    w_scale=Tensor((4, 384), "float32"))
    assert (masked.problem.dtype, masked.problem.x_scale_block,
            masked.problem.w_scale_block) == ("s8", "per_row", "per_row")
    batched = ops.plan_batched_matmul(xg, wg,
                                      x_scale=Tensor((1,), "float32"),
                                      w_scale=Tensor((4,), "float32"))
    assert (batched.problem.x_scale_block, batched.problem.w_scale_block) \
        == ("tensor", "tensor")
    assert batched.out_shape == (4, 64, 384) and batched.out_dtype == "bf16"


@pytest.mark.parametrize("overrides, message", [
    ({"x_scale": None}, r"x_scale: INT8 operands need x_scale \(f32: one "
     r"for all of x, or one per row\)"),
    ({"w_scale": None}, r"w_scale: INT8 operands need w_scale \(f32: one "
     r"per weight matrix, or one per output channel\)"),
    ({"x_scale": None, "w_scale": None}, "x_scale: INT8 operands need"),
    # Block scales, by their shapes: [M, ceil(K/128)], [Gw, NB, KB].
    ({"x_scale": Tensor((1000, 4), "float32")},
     r"x_scale: INT8 takes tensor-wise or per-row scales: expected shape "
     r"\[1\] \(one scale for all of x\) or \[M\] = \[1000\] \(one per row\), "
     r"got \[1000, 4\] \(1x128 block scales are FP8's\)"),
    ({"x_scale": Tensor((1000, 4), "float32"),
      "w_scale": Tensor((8, 3, 4), "float32")},
     "x_scale: INT8 takes tensor-wise or per-row scales"),
    ({"w_scale": Tensor((8, 3, 4), "float32")},
     r"w_scale: INT8 takes tensor-wise or per-row scales: expected shape "
     r"\[Gw\] = \[8\] \(one per weight matrix\) or \[Gw, N\] = \[8, 384\] "
     r"\(one per output channel\), got \[8, 3, 4\] \(128x128 block scales "
     r"are FP8's\)"),
    ({"x_scale": Tensor((999,), "float32")},
     r"x_scale: INT8 takes .* got \[999\]$"),
    ({"w_scale": Tensor((8, 383), "float32")},
     r"w_scale: INT8 takes .* got \[8, 383\]$"),
    ({"w": Tensor((8, 512, 384), I8), "weight_layout": "kn"},
     "weight_layout: expected 'nk' with INT8 \\(torch.int8\\) operands"),
    # Mixed operand dtypes, both ways.
    ({"w": Tensor((8, 384, 512))},
     "w: dtype torch.bfloat16 differs from x's torch.int8"),
    ({"w": Tensor((8, 384, 512), "float8_e4m3fn")},
     "w: dtype torch.float8_e4m3fn differs from x's torch.int8"),
    ({"x": Tensor((1000, 512))},
     "w: dtype torch.int8 differs from x's torch.bfloat16"),
    ({"row_indices": Tensor((1000,), "int32")},
     "row_indices: expected None with INT8"),
    ({"x": Tensor((1000, 520), I8), "w": Tensor((8, 384, 520), I8)},
     "x: K = 520 must be a multiple of 16 with INT8 operands"),
    ({"x_scale": Tensor((1000,), "bfloat16")}, "x_scale: expected dtype f32"),
    ({"out_dtype": "s8"}, "out_dtype: expected torch.bfloat16"),
])
def test_int8_argument_errors(overrides: dict, message: str) -> None:
    with pytest.raises(ops.ArgumentError, match=message) as error:
        seg_int8(**overrides)
    # INT8's limits are its contract, not missing lowerings.
    assert not isinstance(error.value, ggemm.NotLoweredError)


def test_int8_grouped_argument_errors() -> None:
    xg, wg = Tensor((4, 64, 256), I8), Tensor((4, 384, 256), I8)
    with pytest.raises(ops.ArgumentError, match=r"x_scale: INT8 takes "
                       r".*\[G, M\] = \[4, 64\] \(one per row\), got "
                       r"\[4, 64, 2\] \(1x128 block scales are FP8's\)"):
        ops.plan_masked_matmul(xg, wg, Tensor((4,), "int32"),
                               x_scale=Tensor((4, 64, 2), "float32"),
                               w_scale=Tensor((4, 384), "float32"))
    with pytest.raises(ops.ArgumentError, match="w_scale: INT8 operands "
                       "need w_scale"):
        ops.plan_batched_matmul(xg, wg, x_scale=Tensor((1,), "float32"))
    with pytest.raises(ops.ArgumentError, match="weight_layout: expected "
                       "'nk' with INT8"):
        ops.plan_batched_matmul(xg, Tensor((4, 256, 384), I8),
                                weight_layout="kn",
                                x_scale=Tensor((1,), "float32"),
                                w_scale=Tensor((4,), "float32"))


# -- the eager path -----------------------------------------------------------

def test_int8_launches_directly(eager, monkeypatch) -> None:  # noqa: F811
    """An INT8 call launches its kernel without the torch.library ops (it
    is not differentiable) and is refused under torch.compile, as FP8."""
    args = dict(x=Tensor((1000, 512), I8), w=Tensor((8, 384, 512), I8),
                seg_indptr=Tensor((9,), "int32"))
    out = Tensor((1000, 384))
    x_scale, w_scale = Tensor((1000,), "float32"), Tensor((8, 384), "float32")
    library = []
    monkeypatch.setattr(ops, "_library_ops", lambda: library.append(1))
    y = ggemm.segment_matmul(**args, out=out, x_scale=x_scale,
                             w_scale=w_scale)
    assert y is out and library == []
    (launch,) = eager.kernel.launches
    assert launch["x"] is args["x"] and launch["y"] is out
    assert launch["x_scale"] is x_scale and launch["w_scale"] is w_scale
    monkeypatch.setattr(ops.torch.compiler, "is_compiling", lambda: True)
    with pytest.raises(ggemm.NotLoweredError, match="x_scale, w_scale: FP8 "
                       "and INT8 calls are not registered as torch.library "
                       "ops yet"):
        ggemm.segment_matmul(**args, out=out, x_scale=x_scale,
                             w_scale=w_scale)


# -- compat: aiter's int8_gemm ------------------------------------------------

@pytest.fixture
def batched(monkeypatch) -> List[Any]:
    """Records int8_gemm's batched_matmul calls; returns a [1, M, N]
    stand-in for y."""
    calls: List[Any] = []

    def fake(x: Any, w: Any, **kwargs: Any) -> Tensor:
        calls.append((x, w, kwargs))
        return Tensor((1, x.shape[1], w.shape[1]),
                      {"bf16": "bfloat16", "f16": "float16",
                       "f32": "float32", None: "bfloat16"}[
                           kwargs["out_dtype"]])
    monkeypatch.setattr(ops, "batched_matmul", fake)
    return calls


def test_aiter_int8_gemm_maps_onto_one_batch(batched: List[Any]) -> None:
    from ggemm.compat import aiter
    x, w = Tensor((100, 512), I8), Tensor((384, 512), I8)
    x_scale, w_scale = Tensor((100, 1), "float32"), Tensor((1, 384),
                                                            "float32")
    y = aiter.int8_gemm(x, w, x_scale, w_scale)
    assert y.shape == (100, 384) and str(y.dtype) == "torch.bfloat16"
    (xb, wb, kwargs), = batched
    # x [1, M, K] and w [1, N, K], views of the caller's tensors.
    assert xb.shape == (1, 100, 512) and xb.base is x
    assert wb.shape == (1, 384, 512) and wb.base is w
    assert set(kwargs) == {"out_dtype", "x_scale", "w_scale"}
    assert kwargs["out_dtype"] is None
    # Per-token [M, 1] -> [1, M]; per-channel [1, N] -> [Gw = 1, N].
    assert kwargs["x_scale"].shape == (1, 100)
    assert kwargs["x_scale"].base is x_scale
    assert kwargs["w_scale"].shape == (1, 384)
    assert kwargs["w_scale"].base is w_scale


@pytest.mark.parametrize("x_shape, w_shape, x_out, w_out", [
    ((100,), (384,), (1, 100), (1, 384)),      # [M], [N]
    ((100, 1), (384, 1), (1, 100), (1, 384)),  # [M, 1], [N, 1]
    ((), (), (), ()),                          # scalars: tensor-wise
    ((1,), (1, 1), (1,), (1,)),
])
def test_aiter_int8_gemm_scale_shapes(batched: List[Any], x_shape: tuple,
                                      w_shape: tuple, x_out: tuple,
                                      w_out: tuple) -> None:
    from ggemm.compat import aiter
    x_scale, w_scale = Tensor(x_shape, "float32"), Tensor(w_shape, "float32")
    aiter.int8_gemm(Tensor((100, 512), I8), Tensor((384, 512), I8), x_scale,
                    w_scale, "f32")
    (_, _, kwargs), = batched
    assert kwargs["x_scale"].shape == x_out
    assert kwargs["w_scale"].shape == w_out
    assert kwargs["out_dtype"] == "f32"


def test_aiter_int8_gemm_one_token_keeps_per_token_scales(
        batched: List[Any]) -> None:
    """M = 1: a per-token [1, 1] scale is per-token, not one for all (the
    same number, but the kernel must not change with M: on the GPU check a
    catalog without the tensor-wise kernel missed)."""
    from ggemm.compat import aiter
    aiter.int8_gemm(Tensor((1, 512), I8), Tensor((384, 512), I8),
                    Tensor((1, 1), "float32"), Tensor((1, 384), "float32"))
    (_, _, kwargs), = batched
    assert kwargs["x_scale"].shape == (1, 1)   # [G = 1, M = 1]: per token


def test_aiter_int8_gemm_output_dtypes(batched: List[Any]) -> None:
    from ggemm.compat import aiter
    x, w = Tensor((100, 512), I8), Tensor((384, 512), I8)
    s, t = Tensor((100,), "float32"), Tensor((384,), "float32")
    for dtype in ("bf16", "f16", "f32"):
        assert aiter.int8_gemm(x, w, s, t, dtype).dtype.name == \
            {"bf16": "bfloat16", "f16": "float16", "f32": "float32"}[dtype]


@pytest.mark.parametrize("change, message", [
    ({"x": Tensor((100, 512))}, "x: expected dtype torch.int8, got "
     "torch.bfloat16"),
    ({"w": Tensor((384, 512), "float8_e4m3fn")},
     "w: expected dtype torch.int8, got torch.float8_e4m3fn"),
    ({"x": Tensor((2, 100, 512), I8)}, r"x: expected a \[M, K\] torch.int8 "
     r"tensor, got shape \[2, 100, 512\]"),
    ({"w": Tensor((384, 256), I8)}, r"w: expected \[N, K\] with K = 512 "
     r"\(x.shape\[1\]\), got shape \[384, 256\]"),
    ({"x_scale": Tensor((1, 100), "float32")}, r"x_scale: expected one f32 "
     r"per token \(\[100, 1\] or \[100\]\) or one for all \(\[\] or \[1\]\), "
     r"got shape \[1, 100\]"),
    ({"w_scale": Tensor((384, 4), "float32")}, r"w_scale: expected one f32 "
     r"per output channel \(\[1, 384\] or \[384\] or \[384, 1\]\)"),
    ({"w_scale": 0.5}, "w_scale: expected a float32 tensor, got float"),
    ({"output_dtype": "s8"}, "output_dtype: expected torch.bfloat16, "
     "torch.float16 or torch.float32, got s8"),
])
def test_aiter_int8_gemm_rejects(batched: List[Any], change: dict,
                                 message: str) -> None:
    from ggemm.compat import aiter
    args = dict(x=Tensor((100, 512), I8), w=Tensor((384, 512), I8),
                x_scale=Tensor((100, 1), "float32"),
                w_scale=Tensor((1, 384), "float32"), output_dtype=None)
    args.update(change)
    with pytest.raises(ops.ArgumentError, match=message):
        aiter.int8_gemm(**args)
    assert batched == []


def test_aiter_int8_gemm_checks_reach_the_op(monkeypatch) -> None:
    """What int8_gemm passes is what batched_matmul's own checks accept:
    its plan of the mapped call is INT8 with per-token and per-channel
    scales, [1, M, N] out."""
    from ggemm.compat import aiter
    plans: List[ops._Plan] = []

    def plan_only(x: Any, w: Any, **kwargs: Any) -> Tensor:
        plans.append(ops.plan_batched_matmul(x, w, **kwargs))
        return Tensor(plans[-1].out_shape)
    monkeypatch.setattr(ops, "batched_matmul", plan_only)
    aiter.int8_gemm(Tensor((100, 512), I8), Tensor((384, 512), I8),
                    Tensor((100, 1), "float32"), Tensor((1, 384), "float32"))
    (plan,) = plans
    p = plan.problem
    assert (p.op, p.dtype, p.n, p.k, p.groups) == ("batched_matmul", "s8",
                                                   384, 512, 1)
    assert (p.x_scale_block, p.w_scale_block) == ("per_row", "per_row")
    assert plan.out_shape == (1, 100, 384) and plan.out_dtype == "bf16"


# -- the compiler -------------------------------------------------------------

INT8_PROBLEMS = [
    Problem("segment_matmul", "s8", n=4096, k=7168, groups=8),
    Problem("masked_matmul", "s8", n=256, k=256, groups=4,
            x_scale_block="per_row", w_scale_block="tensor"),
    Problem("batched_matmul", "s8", n=136, k=128, groups=2,
            x_scale_block="tensor", w_scale_block="tensor", out_dtype="f32"),
]


@needs_compiler
@pytest.mark.parametrize("problem", INT8_PROBLEMS,
                         ids=[p.function_name for p in INT8_PROBLEMS])
def test_int8_ir_verifies_and_tiles(problem: Problem) -> None:
    tiled = ggemm.run_pipeline(problem.mlir(),
                               "ggemm-select-config,ggemm-tile")
    assert "ggemm.foreach_tile" in tiled
