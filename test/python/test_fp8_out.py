"""An e4m3 output (``out_dtype="f8e4m3"``: y quantised in the epilogue with
one f32 scale per row and 128 columns, ``y_scale``) in the Python layer on a
CPU: the problem, its IR text and catalog lines, and (with the compiler
library) that the IR verifies and compiles to a bundle the runtime loads.
Stand-in tensors, no torch, no GPU; the runtime's side is in
test_runtime.py."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import ggemm
from conftest import bundle_entries
from ggemm import cache, catalog
from ggemm.problem import Problem, SpecError

from test_ops import needs_compiler

E4M3 = "f8e4m3"


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
    y_scale_block, and y_scale with its strides as the last parameters;
    the runtime, where built, loads it."""
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
        assert "y_desc" not in [p["name"] for p in variant["params"]]
    try:
        from ggemm.runtime import Kernel, load_library
        load_library()
    except ggemm.GGemmError:
        return  # no runtime library: the manifest's fields are enough
    with Kernel(path) as kernel:
        assert kernel.num_variants >= 1
