"""FP8 (e4m3; 1x128 / 128x128 block scales, tensor-wise and per-row
scales) in the Python ops layer on a CPU: the IR text, the argument checks, the MN-major activation-scale copy
and the compat wrappers' checks. Stand-in tensors, no torch, no GPU."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List

import pytest

import ggemm
from conftest import bundle_entries
from ggemm import cache, ops
from ggemm.problem import Problem

from test_ops import FakeTensor, needs_compiler

F8 = "float8_e4m3fn"


def mn_major(rows: int, kb: int, groups: int = 0) -> FakeTensor:
    """Activation scales in the kernel's layout: torch.empty(KB, M_pad).t()."""
    total = rows * max(groups, 1)
    pad = -(-max(total, 1) // 4) * 4
    if groups:
        return FakeTensor((groups, rows, kb), "float32",
                          strides=(rows, 1, pad))
    return FakeTensor((rows, kb), "float32", strides=(1, pad))


def seg_fp8(**overrides: Any) -> ops._Plan:
    args = dict(x=FakeTensor((1000, 512), F8), w=FakeTensor((8, 384, 512), F8),
                seg_indptr=FakeTensor((9,), "int32"),
                x_scale=mn_major(1000, 4),
                w_scale=FakeTensor((8, 3, 4), "float32"))
    args.update(overrides)
    x, w, seg = args.pop("x"), args.pop("w"), args.pop("seg_indptr")
    return ops.plan_segment_matmul(x, w, seg, **args)


@pytest.fixture
def copies(monkeypatch) -> List[Any]:
    """Records the MN-major copies ops would make (they need torch)."""
    made: List[Any] = []

    def fake(scale: Any) -> Any:
        made.append(scale)
        return ("mn-major copy of", scale)
    monkeypatch.setattr(ops, "mn_major_scales", fake)
    return made


# -- Problem and its IR ------------------------------------------------------

def test_fp8_ir_text() -> None:
    p = Problem("segment_matmul", "f8e4m3", n=384, k=512, groups=3,
                num_weights=5, weight_indices=True, bias=True,
                activation="silu")
    assert p.out_dtype == "bf16"
    assert (p.x_scale_block, p.w_scale_block) == ("1x128", "128x128")
    assert p.spec() == {"op": "segment_matmul", "dtype": "f8e4m3", "n": 384,
                        "k": 512, "groups": 3, "num_weights": 5,
                        "weight_indices": True, "bias": True,
                        "activation": "silu"}
    assert Problem.from_spec(json.loads(p.key)) == p
    text = p.mlir()
    assert "%x: memref<?x512xf8E4M3FN>" in text
    assert "%w: memref<5x384x512xf8E4M3FN>" in text
    # The scales clause comes after the weight indices, before bias, with
    # MN-major activation scales, as in test/gpu/kernels_fp8.
    assert ("weight_indices(%weight_indices : memref<3xi32>)\n      "
            "scales(%x_scale, %w_scale : memref<?x4xf32, strided<[1, ?]>>, "
            "memref<5x3x4xf32>)\n      bias(") in text
    assert ("x_scale_block = #ggemm.scale_block<1x128>, w_scale_block = "
            "#ggemm.scale_block<128x128>}") in text
    masked = Problem("masked_matmul", "f8e4m3", n=200, k=256, groups=4).mlir()
    assert ("scales(%x_scale, %w_scale : memref<4x?x2xf32, strided<[?, 1, "
            "?]>>, memref<4x2x2xf32>)") in masked
    bf16 = Problem("segment_matmul", "bf16", n=384, k=512, groups=3)
    assert "scales" not in bf16.mlir() and "x_scale_block" not in bf16.key


FP8_PROBLEMS = [
    Problem("segment_matmul", "f8e4m3", n=384, k=512, groups=3,
            num_weights=5, weight_indices=True, bias=True,
            activation="silu", out_dtype="f32"),
    Problem("segment_matmul", "f8e4m3", n=256, k=1024, groups=2,
            row_scale=True, accumulate=True, index_dtype="i64"),
    Problem("masked_matmul", "f8e4m3", n=200, k=256, groups=4),
    Problem("batched_matmul", "f8e4m3", n=256, k=256, groups=1),
    Problem("segment_matmul", "f8e4m3", n=200, k=160, groups=3,
            x_scale_block="per_row", w_scale_block="per_row", bias=True,
            activation="gelu"),
    Problem("masked_matmul", "f8e4m3", n=256, k=256, groups=4,
            x_scale_block="per_row", w_scale_block="tensor"),
    Problem("batched_matmul", "f8e4m3", n=136, k=128, groups=2,
            x_scale_block="tensor", w_scale_block="tensor"),
    # e5m2 operands (x and w alike): block scales and tensor-wise ones.
    Problem("segment_matmul", "f8e5m2", n=384, k=512, groups=8),
    Problem("batched_matmul", "f8e5m2", n=136, k=128, groups=2,
            x_scale_block="tensor", w_scale_block="per_row"),
]


@needs_compiler
@pytest.mark.parametrize("problem", FP8_PROBLEMS,
                         ids=[p.function_name for p in FP8_PROBLEMS])
def test_fp8_ir_verifies_and_tiles(problem: Problem) -> None:
    tiled = ggemm.run_pipeline(problem.mlir(),
                               "ggemm-select-config,ggemm-tile")
    assert "ggemm.foreach_tile" in tiled


@needs_compiler
def test_fp8_compiles_through_the_disk_cache(tmp_path: Path,
                                             monkeypatch) -> None:
    monkeypatch.delenv("GGEMM_CATALOG", raising=False)
    monkeypatch.setattr(cache, "_options",
                        cache.CompileOptions(cache_dir=tmp_path / "cache"))
    path = cache.manifest_for(FP8_PROBLEMS[2])
    manifest = json.loads(path.read_text())
    assert path.name == FP8_PROBLEMS[2].kernel_name + ".json"
    assert bundle_entries(manifest)[0].startswith(
        FP8_PROBLEMS[2].function_name)
    assert "x_scale" in path.read_text() and "w_scale" in path.read_text()


# -- argument checks ---------------------------------------------------------

def test_fp8_e5m2_plan(copies: List[Any]) -> None:
    e5m2 = "float8_e5m2"
    plan = seg_fp8(x=FakeTensor((1000, 512), e5m2),
                   w=FakeTensor((8, 384, 512), e5m2))
    assert plan.problem.dtype == "f8e5m2"
    assert "f8E5M2" in plan.problem.mlir()
    assert plan.key != seg_fp8().key


def test_fp8_segment_plan(copies: List[Any]) -> None:
    plan = seg_fp8()
    p = plan.problem
    assert (p.dtype, p.out_dtype, p.n, p.k) == ("f8e4m3", "bf16", 384, 512)
    assert (p.x_scale_block, p.w_scale_block) == ("1x128", "128x128")
    assert set(plan.tensors) >= {"x_scale", "w_scale"}
    assert copies == []  # already MN-major: passed as it is
    bf16 = ops.plan_segment_matmul(FakeTensor((1000, 512)),
                                   FakeTensor((8, 384, 512)),
                                   FakeTensor((9,), "int32"))
    assert bf16.key != plan.key and len(bf16.key) == len(plan.key)


def test_fp8_row_major_scales_are_copied(copies: List[Any]) -> None:
    row_major = FakeTensor((1000, 4), "float32")
    plan = seg_fp8(x_scale=row_major)
    assert copies == [row_major]
    assert plan.tensors["x_scale"] == ("mn-major copy of", row_major)
    # An MN-major stride that is not a multiple of 4 (16 bytes) is copied.
    seg_fp8(x_scale=FakeTensor((1000, 4), "float32", strides=(1, 1001)))
    assert len(copies) == 2
    x = FakeTensor((4, 64, 256), F8)
    w = FakeTensor((4, 384, 256), F8)
    ops.plan_masked_matmul(x, w, FakeTensor((4,), "int32"),
                           x_scale=mn_major(64, 2, groups=4),
                           w_scale=FakeTensor((4, 3, 2), "float32"))
    assert len(copies) == 2
    ops.plan_batched_matmul(x, w, x_scale=FakeTensor((4, 64, 2), "float32"),
                            w_scale=FakeTensor((4, 3, 2), "float32"))
    assert len(copies) == 3


@pytest.mark.parametrize("overrides, error, message", [
    ({"x_scale": None}, ops.ArgumentError, "x_scale: FP8 operands need"),
    ({"w_scale": None}, ops.ArgumentError, "w_scale: FP8 operands need"),
    ({"w": FakeTensor((8, 384, 512))}, ops.ArgumentError,
     "w: dtype torch.bfloat16 differs from x's torch.float8_e4m3fn"),
    ({"x": FakeTensor((1000, 512), "float8_e5m2")}, ops.ArgumentError,
     "w: dtype torch.float8_e4m3fn differs from x's torch.float8_e5m2"),
    ({"w": FakeTensor((8, 512, 384), F8), "weight_layout": "kn"},
     ggemm.NotLoweredError, "weight_layout: 'kn' with FP8 operands is not "
     "lowered yet"),
    ({"x": FakeTensor((1000, 320), F8), "w": FakeTensor((8, 384, 320), F8),
      "x_scale": mn_major(1000, 3), "w_scale": FakeTensor((8, 3, 3),
                                                            "float32")},
     ops.ArgumentError, "x: K = 320 must be a multiple of 128"),
    ({"x_scale": FakeTensor((1000,), "float32")}, ggemm.NotLoweredError,
     "x_scale, w_scale: per_row activation scales with 128x128 weight "
     "scales are not lowered"),
    ({"x_scale": FakeTensor((1,), "float32")}, ggemm.NotLoweredError,
     "x_scale, w_scale: tensor activation scales with 128x128"),
    ({"x_scale": FakeTensor((1000, 8), "float32")}, ops.ArgumentError,
     r"x_scale: expected shape \[1\] \(one scale for all of x\), \[M\] "
     r"\(one per row\) or \[M, ceil\(K/128\)\] = \[1000, 4\]"),
    ({"x_scale": FakeTensor((1000, 4), "bfloat16")}, ops.ArgumentError,
     "x_scale: expected dtype f32"),
    ({"x_scale": FakeTensor((1000, 4), "float32", device="cpu")},
     ops.ArgumentError, "x_scale: expected a CUDA tensor"),
    ({"w_scale": FakeTensor((8,), "float32")}, ggemm.NotLoweredError,
     "x_scale, w_scale: 1x128 activation scales with tensor weight scales"),
    ({"w_scale": FakeTensor((8, 384), "float32")}, ggemm.NotLoweredError,
     "x_scale, w_scale: 1x128 activation scales with per_row weight"),
    ({"w_scale": FakeTensor((8, 384, 4), "float32")}, ops.ArgumentError,
     r"w_scale: expected shape \[Gw\] = \[8\]"),
    ({"w_scale": FakeTensor((8, 4, 3), "float32")}, ops.ArgumentError,
     r"w_scale: expected shape .*\[8, 3, 4\] \(128x128 blocks\)"),
    ({"w_scale": FakeTensor((8, 3, 4), "float32", strides=(1, 8, 24))},
     ops.ArgumentError, "w_scale: must be contiguous"),
])
def test_fp8_argument_errors(overrides: dict, error: type,
                             message: str) -> None:
    with pytest.raises(error, match=message):
        seg_fp8(**overrides)


def test_scales_need_fp8_operands() -> None:
    with pytest.raises(ops.ArgumentError, match="x_scale: scales apply to "
                       "FP8"):
        ops.plan_segment_matmul(FakeTensor((1000, 512)),
                                FakeTensor((8, 384, 512)),
                                FakeTensor((9,), "int32"),
                                x_scale=mn_major(1000, 4))


def test_fp8_grouped_scale_shapes() -> None:
    x, w = FakeTensor((4, 64, 256), F8), FakeTensor((4, 384, 256), F8)
    with pytest.raises(ops.ArgumentError, match=r"x_scale: expected shape "
                       r".*\[G, M, ceil\(K/128\)\] = \[4, 64, 2\]"):
        ops.plan_batched_matmul(x, w, x_scale=mn_major(64, 2),
                                w_scale=FakeTensor((4, 3, 2), "float32"))
    with pytest.raises(ggemm.NotLoweredError, match="x_scale, w_scale: "
                       "per_row activation scales with 128x128"):
        ops.plan_masked_matmul(x, w, FakeTensor((4,), "int32"),
                               x_scale=FakeTensor((4, 64), "float32"),
                               w_scale=FakeTensor((4, 3, 2), "float32"))


# -- tensor-wise and per-row scales -------------------------------------------

def test_scale_kinds_ir_text() -> None:
    seg = Problem("segment_matmul", "f8e4m3", n=200, k=160, groups=3,
                  num_weights=5, weight_indices=True,
                  x_scale_block="per_row", w_scale_block="per_row")
    assert not seg.block_scaled
    assert ("scales(%x_scale, %w_scale : memref<?xf32>, memref<5x200xf32>)"
            in seg.mlir())
    assert ("x_scale_block = #ggemm.scale_block<per_row>, w_scale_block = "
            "#ggemm.scale_block<per_row>}") in seg.mlir()
    assert Problem.from_spec(json.loads(seg.key)) == seg
    masked = Problem("masked_matmul", "f8e4m3", n=256, k=256, groups=4,
                     x_scale_block="per_row", w_scale_block="tensor")
    assert ("scales(%x_scale, %w_scale : memref<4x?xf32>, memref<4xf32>)"
            in masked.mlir())
    batched = Problem("batched_matmul", "f8e4m3", n=136, k=128, groups=2,
                      x_scale_block="tensor", w_scale_block="per_row")
    assert ("scales(%x_scale, %w_scale : memref<1xf32>, memref<2x136xf32>)"
            in batched.mlir())
    # Block kinds go together; K need not be a multiple of 128 without them.
    with pytest.raises(ggemm.SpecError, match="'1x128' with 'per_row' is "
                       "not lowered"):
        Problem("segment_matmul", "f8e4m3", n=256, k=256, groups=2,
                w_scale_block="per_row")
    with pytest.raises(ggemm.SpecError, match="k \\(160\\) must be a "
                       "multiple of 128"):
        Problem("segment_matmul", "f8e4m3", n=256, k=160, groups=2)
    with pytest.raises(ggemm.SpecError, match="x_scale_block: '1x64' is not "
                       "lowered"):
        Problem("segment_matmul", "f8e4m3", n=256, k=256, groups=2,
                x_scale_block="1x64")


def test_scale_kinds_from_shapes() -> None:
    """The scale blocks follow from the scales' shapes, each kind with each
    op; the kernel gets the scales as they are when they are dense."""
    x, w = FakeTensor((1000, 512), F8), FakeTensor((8, 384, 512), F8)
    seg = FakeTensor((9,), "int32")
    for xs, ws, kinds in [
            ((1000,), (8, 384), ("per_row", "per_row")),
            ((1,), (8,), ("tensor", "tensor")),
            ((1,), (8, 384), ("tensor", "per_row")),
            ((1000,), (8,), ("per_row", "tensor"))]:
        x_scale, w_scale = FakeTensor(xs, "float32"), FakeTensor(ws,
                                                                "float32")
        plan = ops.plan_segment_matmul(x, w, seg, x_scale=x_scale,
                                       w_scale=w_scale)
        p = plan.problem
        assert (p.x_scale_block, p.w_scale_block) == kinds
        assert plan.tensors["x_scale"] is x_scale
        assert plan.tensors["w_scale"] is w_scale
    # K = 160 is fine without block scales.
    plan = ops.plan_segment_matmul(
        FakeTensor((1000, 160), F8), FakeTensor((8, 384, 160), F8), seg,
        x_scale=FakeTensor((1000,), "float32"),
        w_scale=FakeTensor((8, 384), "float32"))
    assert plan.problem.k == 160
    xg, wg = FakeTensor((4, 64, 256), F8), FakeTensor((4, 384, 256), F8)
    masked = ops.plan_masked_matmul(xg, wg, FakeTensor((4,), "int32"),
                                    x_scale=FakeTensor((4, 64), "float32"),
                                    w_scale=FakeTensor((4, 384), "float32"))
    assert (masked.problem.x_scale_block, masked.problem.w_scale_block) == \
        ("per_row", "per_row")
    batched = ops.plan_batched_matmul(xg, wg,
                                      x_scale=FakeTensor((1,), "float32"),
                                      w_scale=FakeTensor((4,), "float32"))
    assert (batched.problem.x_scale_block, batched.problem.w_scale_block) \
        == ("tensor", "tensor")
    assert batched.key != masked.key


@pytest.mark.parametrize("x_scale, w_scale, message", [
    ((999,), (8, 384), r"x_scale: expected shape \[1\] \(one scale for all "
     r"of x\), \[M\] \(one per row\)"),
    ((2,), (8,), r"x_scale: expected shape \[1\]"),
    ((1000,), (8, 383), r"w_scale: expected shape \[Gw\] = \[8\] \(one per "
     r"weight matrix\), \[Gw, N\] = \[8, 384\] \(one per output channel\)"),
    ((1000,), (7,), r"w_scale: expected shape \[Gw\] = \[8\]"),
])
def test_scale_kind_shape_errors(x_scale: tuple, w_scale: tuple,
                                 message: str) -> None:
    with pytest.raises(ops.ArgumentError, match=message):
        seg_fp8(x_scale=FakeTensor(x_scale, "float32"),
                w_scale=FakeTensor(w_scale, "float32"))


def test_masked_per_row_scales_have_groups() -> None:
    x, w = FakeTensor((4, 64, 256), F8), FakeTensor((4, 384, 256), F8)
    with pytest.raises(ops.ArgumentError, match=r"\[G, M\] \(one per row\)"):
        ops.plan_masked_matmul(x, w, FakeTensor((4,), "int32"),
                               x_scale=FakeTensor((256,), "float32"),
                               w_scale=FakeTensor((4,), "float32"))


def test_bmm_fp8(monkeypatch) -> None:
    """flashinfer.bmm_fp8 is batched_matmul with tensor-wise scales on B
    seen K-major; its own arguments are checked first."""
    from ggemm.compat import flashinfer
    calls: List[Any] = []

    def fake(x: Any, w: Any, **kwargs: Any) -> str:
        calls.append((x, w, kwargs))
        return "y"
    monkeypatch.setattr(ops, "batched_matmul", fake)
    a = FakeTensor((3, 64, 256), F8)
    b = FakeTensor((3, 256, 136), F8, strides=(256 * 136, 1, 256))
    sa, sb = FakeTensor((), "float32"), FakeTensor((1,), "float32")
    assert flashinfer.bmm_fp8(a, b, sa, sb, "bf16") == "y"
    x, w, kwargs = calls[0]
    assert x is a and w.shape == (3, 136, 256) and w.is_contiguous()
    assert kwargs == {"out": None, "out_dtype": "bf16", "x_scale": sa,
                      "w_scale": sb}
    with pytest.raises(ops.ArgumentError, match="B: expected a column-major"):
        flashinfer.bmm_fp8(a, FakeTensor((3, 256, 136), F8), sa, sb, "bf16")
    with pytest.raises(ops.ArgumentError, match="dtype: expected "
                       "torch.bfloat16 or torch.float16"):
        flashinfer.bmm_fp8(a, b, sa, sb, "f32")
    with pytest.raises(ops.ArgumentError, match=r"A_scale: expected one f32 "
                       r"scale \(shape \[\] or \[1\]\), got shape \[3\]"):
        flashinfer.bmm_fp8(a, b, FakeTensor((3,), "float32"), sb, "bf16")
    with pytest.raises(ggemm.NotLoweredError, match="A, B: e4m3 with e5m2 "
                       "is not lowered yet"):
        flashinfer.bmm_fp8(FakeTensor((3, 64, 256), "float8_e5m2"), b, sa, sb,
                           "bf16")
    # Both e5m2: passed on to the op as they are.
    b52 = FakeTensor((3, 256, 136), "float8_e5m2", strides=(256 * 136, 1, 256))
    a52 = FakeTensor((3, 64, 256), "float8_e5m2")
    assert flashinfer.bmm_fp8(a52, b52, sa, sb, "bf16") == "y"
    assert calls[-1][0] is a52


# -- compat ------------------------------------------------------------------

def test_fp8_compat_arguments() -> None:
    from ggemm.compat import deep_gemm, flag_gems
    a, s = FakeTensor((256, 512), F8), FakeTensor((256, 4), "float32")
    b, t = FakeTensor((384, 512), F8), FakeTensor((3, 4), "float32")
    out = FakeTensor((256, 384))
    with pytest.raises(ops.ArgumentError, match="lhs: expected a "
                       r"\(tensor, scales\) pair"):
        deep_gemm.gemm_fp8_fp8_bf16_nt(a, (b, t), out)
    with pytest.raises(ops.ArgumentError, match="rhs: expected a"):
        deep_gemm.m_grouped_gemm_fp8_fp8_bf16_nt_contiguous(
            (a, s), [b], out, FakeTensor((256,), "int32"))
    with pytest.raises(ops.ArgumentError, match="out: expected "
                       "torch.bfloat16"):
        deep_gemm.gemm_fp8_fp8_bf16_nt((a, s), (b, t),
                                       FakeTensor((256, 384), "float32"))
    with pytest.raises(ops.ArgumentError, match="m_indices: expected shape "
                       r"\[256\]"):
        deep_gemm.m_grouped_gemm_fp8_fp8_bf16_nt_contiguous(
            (a, s), (b, t), out, FakeTensor((255,), "int32"))
    with pytest.raises(ops.ArgumentError, match="expected_m"):
        deep_gemm.m_grouped_gemm_fp8_fp8_bf16_nt_masked(
            (a, s), (b, t), out, FakeTensor((1,), "int32"), -1)
    with pytest.raises(ggemm.NotLoweredError, match="block_size"):
        flag_gems.w8a8_block_fp8_bmm(a, b, s, t, block_size=[128, 1])
    with pytest.raises(ops.ArgumentError, match=r"x: expected \[B, M, K\]"):
        flag_gems.w8a8_block_fp8_bmm(a, b, s, t)
