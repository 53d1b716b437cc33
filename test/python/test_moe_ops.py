"""segment_matmul's MoE features on a CPU: gather-A (``row_indices``),
scatter (``scatter_indices``, ``atomic``) and the fused SwiGLU
(``activation="swiglu"``) — the IR each writes, their catalog lines,
every argument error (the routing helpers are in test_moe_routing.py).
Nothing here needs torch or a GPU; ``test_generated_moe_ir_verifies_and_
tiles`` needs the compiler that parses the new clauses."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import ggemm
from ggemm import cache, catalog, ops
from ggemm.problem import Problem, SpecError
from test_ops import (DeviceTensor, FakeTensor, eager,  # noqa: F401
                      needs_compiler, plan_seg)

# The up projection of a DeepSeek-like MoE layer (128 experts, hidden 2048,
# intermediate 768): gathered tokens, fused SwiGLU over w13 [E, 2 I, H].
UP = dict(op="segment_matmul", dtype="bf16", n=768, k=2048, groups=128,
          weight_indices=True, row_indices=True, bias=True, row_scale=True,
          activation="swiglu", accumulate=True, scatter=True, atomic=True)


# -- the IR ------------------------------------------------------------------

def test_the_ir_of_every_new_clause_in_order() -> None:
    """The op of the compiler's new syntax, clause for clause."""
    text = Problem(**UP).mlir()
    op = text[text.index("ggemm.segment_matmul"):text.index("\n  return")]
    assert op == (
        "ggemm.segment_matmul ins(%x, %w : memref<?x2048xbf16>, "
        "memref<128x1536x2048xbf16>)\n"
        "      segments(%seg_indptr : memref<129xi32>)\n"
        "      weight_indices(%weight_indices : memref<128xi32>)\n"
        "      row_indices(%row_indices : memref<?xi32>)\n"
        "      bias(%bias : memref<128x1536xf32>)\n"
        "      row_scale(%row_scale : memref<?xf32>)\n"
        "      scatter_indices(%scatter_indices : memref<?xi32>)\n"
        "      outs(%y : memref<?x768xbf16>) {epilogue = "
        "#ggemm.epilogue<activation = swiglu, accumulate = true, "
        "atomic = true>}")
    assert ("(%x: memref<?x2048xbf16>, %w: memref<128x1536x2048xbf16>, "
            "%seg_indptr: memref<129xi32>, %weight_indices: "
            "memref<128xi32>, %row_indices: memref<?xi32>, %bias: "
            "memref<128x1536xf32>, %row_scale: memref<?xf32>, "
            "%scatter_indices: memref<?xi32>, %y: memref<?x768xbf16>)"
            in text)


def test_gather_alone() -> None:
    text = Problem("segment_matmul", "f16", n=256, k=512, groups=4,
                   row_indices=True).mlir()
    assert "row_indices(%row_indices : memref<?xi32>)\n" \
        "      outs(%y : memref<?x256xf16>)\n" in text
    assert "%x: memref<?x512xf16>" in text
    assert "scatter_indices" not in text and "epilogue" not in text


def test_scatter_store_and_atomic_add() -> None:
    store = Problem("segment_matmul", "bf16", n=256, k=512, groups=4,
                    scatter=True, out_dtype="f32").mlir()
    assert "segments(%seg_indptr : memref<5xi32>)\n" \
        "      scatter_indices(%scatter_indices : memref<?xi32>)\n" \
        "      outs(%y : memref<?x256xf32>)\n" in store
    assert "epilogue" not in store and "atomic" not in store
    added = Problem("segment_matmul", "bf16", n=256, k=512, groups=4,
                    scatter=True, accumulate=True, atomic=True,
                    row_scale=True).mlir()
    assert "row_scale(%row_scale : memref<?xf32>)\n" \
        "      scatter_indices(%scatter_indices : memref<?xi32>)\n" in added
    assert "{epilogue = #ggemm.epilogue<activation = none, accumulate = " \
        "true, atomic = true>}" in added
    # Without atomic the attribute is written as before (same IR, same
    # cache entries for every existing kernel).
    plain = Problem("segment_matmul", "bf16", n=256, k=512, groups=4,
                    scatter=True, accumulate=True).mlir()
    assert "#ggemm.epilogue<activation = none, accumulate = true>}" in plain


def test_swiglu_doubles_w_and_bias_not_y() -> None:
    nk = Problem("segment_matmul", "bf16", n=768, k=2048, groups=8,
                 bias=True, activation="swiglu").mlir()
    assert "ins(%x, %w : memref<?x2048xbf16>, memref<8x1536x2048xbf16>)" in nk
    assert "bias(%bias : memref<8x1536xf32>)" in nk
    assert "outs(%y : memref<?x768xbf16>) {epilogue = #ggemm.epilogue<" \
        "activation = swiglu, accumulate = false>}" in nk
    kn = Problem("segment_matmul", "bf16", n=768, k=2048, groups=8,
                 weight_layout="kn", activation="swiglu").mlir()
    assert "%w: memref<8x2048x1536xbf16>" in kn
    assert "weight_layout = #ggemm.weight_layout<kn>" in kn
    # FP8: one weight scale per 128x128 block of w, 2N rows of it.
    fp8 = Problem("segment_matmul", "f8e4m3", n=384, k=256, groups=2,
                  activation="swiglu").mlir()
    assert "memref<2x768x256xf8E4M3FN>" in fp8
    assert "memref<2x6x2xf32>)" in fp8 and "outs(%y : memref<?x384xbf16>)" \
        in fp8


@pytest.mark.parametrize("fields, message", [
    ({"op": "masked_matmul", "row_indices": True},
     "row_indices: only segment_matmul takes it, not masked_matmul"),
    ({"op": "batched_matmul", "scatter": True},
     "scatter: only segment_matmul takes it, not batched_matmul"),
    ({"op": "segment_matmul_k", "atomic": True},
     "atomic: only segment_matmul takes it"),
    ({"op": "masked_matmul", "activation": "swiglu"},
     "activation: swiglu is lowered for segment_matmul only"),
    ({"atomic": True, "accumulate": True}, "atomic: atomic adds need scatter"),
    ({"atomic": True, "scatter": True},
     "atomic: atomic adds need accumulate"),
    ({"row_indices": "yes"}, "row_indices must be a bool"),
    ({"dtype": "f8e4m3", "row_indices": True},
     "row_indices: gathered FP8 rows are not lowered"),
    ({"activation": "swiglu", "weight_layout": "kn", "n": 6},
     r"n \(6\) must be a multiple of 4 with weight_layout 'kn' and swiglu"),
])
def test_problem_rejects_moe_fields(fields: dict, message: str) -> None:
    line = {"op": "segment_matmul", "dtype": "bf16", "n": 256, "k": 512,
            "groups": 4}
    line.update(fields)
    with pytest.raises(SpecError, match=message):
        Problem.from_spec(line)


# -- keys and catalog lines --------------------------------------------------

def test_each_feature_is_its_own_kernel_and_round_trips() -> None:
    base = dict(op="segment_matmul", dtype="bf16", n=256, k=512, groups=4)
    variants = [Problem(**base),
                Problem(**base, row_indices=True),
                Problem(**base, scatter=True),
                Problem(**base, scatter=True, accumulate=True),
                Problem(**base, scatter=True, accumulate=True, atomic=True),
                Problem(**base, activation="swiglu"),
                Problem(**UP)]
    assert len({p.key for p in variants}) == len(variants)
    assert len({p.kernel_name for p in variants}) == len(variants)
    for problem in variants:
        assert Problem.from_spec(json.loads(problem.key)) == problem
        assert cache.problem_from_key(problem.key) == problem
    assert Problem(**UP).spec() == {
        "op": "segment_matmul", "dtype": "bf16", "n": 768, "k": 2048,
        "groups": 128, "weight_indices": True, "bias": True,
        "row_scale": True, "activation": "swiglu", "accumulate": True,
        "row_indices": True, "scatter": True, "atomic": True}
    # The defaults stay out of the line (and of every older kernel's key).
    assert "row_indices" not in variants[0].spec()
    assert "atomic" not in variants[3].spec()


def test_catalog_spec_lines_expand_the_new_fields() -> None:
    problems = catalog.expand_spec({"kernels": [
        {"op": "segment_matmul", "dtype": "bf16", "n": 768, "k": 2048,
         "groups": 128, "weight_indices": True, "row_indices": True,
         "activation": ["silu", "swiglu"]},
        {"op": "segment_matmul", "dtype": "bf16", "n": 2048, "k": 768,
         "groups": 128, "weight_indices": True, "row_scale": True,
         "scatter": True, "accumulate": True, "out_dtype": "f32",
         "atomic": [False, True]}]})
    assert [(p.activation, p.row_indices, p.scatter, p.atomic)
            for p in problems] == [
        ("silu", True, False, False), ("swiglu", True, False, False),
        ("none", False, True, False), ("none", False, True, True)]
    with pytest.raises(SpecError, match=r"kernels\[0\]: atomic: atomic "
                       r"adds need scatter"):
        catalog.expand_spec({"kernels": [
            {"op": "segment_matmul", "dtype": "bf16", "n": 64, "k": 64,
             "groups": 2, "accumulate": True, "atomic": True}]})


def test_a_catalog_miss_names_the_moe_line(tmp_path: Path) -> None:
    (tmp_path / "catalog.json").write_text(json.dumps(
        {"format": "ggemm-catalog", "version": 1, "kernels": {}}))
    out = FakeTensor((50, 256), "float32")
    problem = plan_seg(row_indices=FakeTensor((700,), "int32"),
                       scatter_indices=FakeTensor((700,), "int32"), out=out,
                       accumulate=True, atomic=True).problem
    try:
        with pytest.raises(cache.CatalogMissError) as error:
            cache.manifest_for(problem, tmp_path)
    finally:
        cache._indices.clear()
    assert error.value.spec_line == {
        "op": "segment_matmul", "dtype": "bf16", "n": 256, "k": 512,
        "groups": 8, "out_dtype": "f32", "accumulate": True,
        "row_indices": True, "scatter": True, "atomic": True}


# -- planning a call ---------------------------------------------------------

def test_gathered_rows_are_m_not_t() -> None:
    index = FakeTensor((1000,), "int32")
    plan = plan_seg(x=FakeTensor((300, 512)), row_indices=index,
                    row_scale=FakeTensor((1000,), "float32"))
    assert plan.out_shape == (1000, 256)
    assert plan.tensors["row_indices"] is index
    problem = plan.problem
    assert problem.row_indices and not problem.scatter and problem.row_scale
    # No token rows at all: every gathered row reads zeros, which is still a
    # result (bias, activation), so the kernel runs.
    plan = plan_seg(x=FakeTensor((0, 512)), row_indices=index)
    assert not plan.empty and plan.out_shape == (1000, 256)
    assert plan_seg(row_indices=FakeTensor((0,), "int32")).empty


def test_scattered_out_has_any_rows() -> None:
    index = FakeTensor((1000,), "int32")
    out = FakeTensor((37, 256), "float32")
    plan = plan_seg(scatter_indices=index, out=out, accumulate=True,
                    atomic=True)
    assert plan.out_shape == (37, 256) and plan.out_dtype == "f32"
    assert plan.tensors["scatter_indices"] is index
    assert plan.problem.scatter and plan.problem.atomic
    # Gathered and scattered: M from the indices, Y from out, T from x.
    plan = plan_seg(x=FakeTensor((5, 512)),
                    row_indices=FakeTensor((64,), "int32"),
                    scatter_indices=FakeTensor((64,), "int32"),
                    out=FakeTensor((2, 256)))
    assert plan.out_shape == (2, 256) and not plan.problem.atomic
    # Nowhere to write: nothing is launched.
    assert plan_seg(scatter_indices=index, out=FakeTensor((0, 256))).empty


def test_swiglu_halves_n() -> None:
    plan = plan_seg(w=FakeTensor((8, 512, 512)), activation="swiglu",
                    bias=FakeTensor((8, 512), "float32"))
    assert plan.out_shape == (1000, 256)
    assert (plan.problem.n, plan.problem.w_n) == (256, 512)
    kn = plan_seg(w=FakeTensor((8, 512, 1024)), weight_layout="kn",
                  activation="swiglu").problem
    assert (kn.n, kn.weight_layout) == (512, "kn")


ROWS = FakeTensor((1000,), "int32")


@pytest.mark.parametrize("overrides, message", [
    ({"row_indices": FakeTensor((1000,), "int64")},
     "row_indices: expected dtype i32 (torch.int32), got torch.int64; pass "
     "row_indices.int()"),
    ({"row_indices": FakeTensor((1000,), "float32")},
     "row_indices: expected dtype i32, got torch.float32"),
    ({"row_indices": FakeTensor((10, 100), "int32")},
     "row_indices: expected 1 dimensions [M], got shape [10, 100]"),
    ({"row_indices": FakeTensor((1000,), "int32", strides=(2,))},
     "row_indices: the last dimension must be contiguous (stride 1), got "
     "strides [2]; pass row_indices.contiguous()"),
    ({"row_indices": FakeTensor((1000,), "int32", device="cuda:1")},
     "row_indices: on cuda:1, but x is on cuda:0"),
    ({"row_indices": FakeTensor((1000,), "int32", device="cpu")},
     "row_indices: expected a CUDA tensor, got device cpu"),
    ({"row_indices": [1, 2, 3]}, "row_indices: expected a tensor, got list"),
    ({"row_indices": FakeTensor((700,), "int32"),
      "row_scale": FakeTensor((1000,), "float32")},
     "row_scale: dimension 0 (M, as row_indices.shape[0]) is 1000, "
     "expected 700"),
    ({"row_indices": FakeTensor((700,), "int32"),
      "out": FakeTensor((1000, 256))},
     "out: expected shape [700, 256], got [1000, 256]"),
    ({"scatter_indices": FakeTensor((1000,), "int64"),
      "out": FakeTensor((10, 256))},
     "scatter_indices: expected dtype i32 (torch.int32), got torch.int64; "
     "pass scatter_indices.int()"),
    ({"scatter_indices": FakeTensor((999,), "int32"),
      "out": FakeTensor((10, 256))},
     "scatter_indices: dimension 0 (M, as x.shape[0]) is 999, expected 1000"),
    ({"row_indices": FakeTensor((700,), "int32"),
      "scatter_indices": ROWS, "out": FakeTensor((10, 256))},
     "scatter_indices: dimension 0 (M, as row_indices.shape[0]) is 1000, "
     "expected 700"),
    ({"scatter_indices": FakeTensor((1000,), "int32", device="cuda:1"),
      "out": FakeTensor((10, 256))},
     "scatter_indices: on cuda:1, but x is on cuda:0"),
    ({"scatter_indices": ROWS},
     "scatter_indices: needs out= (y [Y, N], which the result rows are "
     "scattered into): Y cannot be inferred"),
    ({"scatter_indices": ROWS, "out": FakeTensor((10, 128))},
     "out: dimension 1 (N) is 128, expected 256"),
    ({"scatter_indices": ROWS, "out": FakeTensor((2560,))},
     "out: expected 2 dimensions [Y, N], got shape [2560]"),
    ({"scatter_indices": ROWS, "out": FakeTensor((10, 256), "int32")},
     "out: expected dtype bf16 or f16 or f32, got torch.int32"),
    ({"scatter_indices": ROWS, "out": FakeTensor((10, 256)),
      "out_dtype": "f32"}, "out_dtype is f32 but out is torch.bfloat16"),
    ({"scatter_indices": ROWS, "out": FakeTensor((10, 256), device="cuda:1")},
     "out: on cuda:1, but x is on cuda:0"),
    ({"atomic": True, "accumulate": True, "out": FakeTensor((1000, 256))},
     "atomic=True needs scatter_indices"),
    ({"atomic": True, "scatter_indices": ROWS, "out": FakeTensor((10, 256))},
     "atomic=True needs accumulate=True"),
    ({"atomic": True, "accumulate": True, "scatter_indices": ROWS,
      "out": FakeTensor((10, 256), "float64")},
     "atomic=True: out must be float32, bfloat16 or float16 (the dtypes "
     "with atomic adds), got torch.float64"),
    ({"atomic": 1, "accumulate": True, "scatter_indices": ROWS,
      "out": FakeTensor((10, 256))}, "atomic: expected a bool, got 1"),
    ({"activation": "swiglu", "w": FakeTensor((8, 255, 512))},
     "w: activation='swiglu' needs an even N extent (gate rows [0, N), then "
     "up rows [N, 2N)), got 255"),
    ({"activation": "swiglu", "bias": FakeTensor((8, 128), "float32")},
     "bias: dimension 1 (2N, gate and up, as w's N extent) is 128, "
     "expected 256"),
    ({"activation": "swiglu", "out": FakeTensor((1000, 256))},
     "out: expected shape [1000, 128], got [1000, 256]"),
    ({"activation": "swiglu", "weight_layout": "kn",
      "w": FakeTensor((8, 512, 12))},
     "w: N = 12 must be a multiple of 8 with weight_layout='kn'"),
    ({"activation": "swish"}, "activation: expected None or one of relu, "
     "gelu, silu, swiglu, got 'swish'"),
])
def test_moe_argument_errors(overrides: dict, message: str) -> None:
    with pytest.raises(ops.ArgumentError, match=re.escape(message)):
        plan_seg(**overrides)


def test_what_is_not_lowered_is_named() -> None:
    with pytest.raises(ops.NotLoweredError, match="row_indices: gathered "
                       "FP8 rows are not lowered yet"):
        plan_seg(x=FakeTensor((1000, 512), "float8_e4m3fn"),
                 w=FakeTensor((8, 256, 512), "float8_e4m3fn"),
                 x_scale=FakeTensor((1000, 4), "float32"),
                 w_scale=FakeTensor((8, 2, 4), "float32"),
                 row_indices=ROWS)
    x, w = FakeTensor((4, 64, 512)), FakeTensor((4, 256, 512))
    for plan in (ops.plan_masked_matmul, ops.plan_batched_matmul):
        counts = (FakeTensor((4,), "int32"),) \
            if plan is ops.plan_masked_matmul else ()
        with pytest.raises(ops.NotLoweredError, match="activation: 'swiglu' "
                           "is lowered for segment_matmul only"):
            plan(x, w, *counts, activation="swiglu")


# -- the eager call ----------------------------------------------------------

def test_the_launch_passes_the_indices_by_name(eager) -> None:  # noqa: F811
    def call(**extra: Any) -> dict:
        args = {"x": DeviceTensor((300, 512)),
                "w": DeviceTensor((8, 256, 512)),
                "seg_indptr": DeviceTensor((9,), "int32"),
                "row_indices": DeviceTensor((1000,), "int32"),
                "scatter_indices": DeviceTensor((1000,), "int32"),
                "out": DeviceTensor((300, 256), "float32"),
                "accumulate": True}
        args.update(extra)
        ops.segment_matmul(**args)
        return args

    first = call(atomic=True)
    (launched,) = eager.kernel.launches
    assert set(launched) == {"x", "w", "seg_indptr", "row_indices",
                             "scatter_indices", "y"}
    assert launched["row_indices"] is first["row_indices"]
    assert launched["scatter_indices"] is first["scatter_indices"]
    assert launched["y"] is first["out"]
    # A repeated call is not checked again, one without atomic is.
    second = call(atomic=True)
    assert eager.plans["segment"] == 1
    assert eager.kernel.launches[1]["row_indices"] is second["row_indices"]
    call()
    assert eager.plans["segment"] == 2
    # int64 indices are not converted: each call raises.
    for _ in range(2):
        with pytest.raises(ops.ArgumentError, match="pass row_indices.int()"):
            call(row_indices=DeviceTensor((1000,), "int64"))


# -- the compiler (needs the compiler that parses the new clauses) -----------

MOE_PROBLEMS = [
    # Up projection: gathered tokens, SwiGLU over w13, bias.
    Problem("segment_matmul", "bf16", n=768, k=2048, groups=8,
            weight_indices=True, row_indices=True, bias=True,
            activation="swiglu"),
    # Down projection: routing weights, atomic scatter-add onto the tokens.
    Problem("segment_matmul", "bf16", n=2048, k=768, groups=8,
            row_scale=True, scatter=True, accumulate=True, atomic=True,
            out_dtype="f32"),
    # Gathered and scattered store, kn weights, SwiGLU.
    Problem("segment_matmul", "f16", n=256, k=512, groups=4,
            weight_layout="kn", row_indices=True, scatter=True,
            activation="swiglu"),
]


@needs_compiler
@pytest.mark.parametrize("problem", MOE_PROBLEMS,
                         ids=["up-gather-swiglu", "down-scatter-atomic",
                              "kn-gather-scatter-swiglu"])
def test_generated_moe_ir_verifies_and_tiles(problem: Problem) -> None:
    tiled = ggemm.run_pipeline(problem.mlir(),
                               "ggemm-select-config,ggemm-tile")
    assert "ggemm.foreach_tile" in tiled
