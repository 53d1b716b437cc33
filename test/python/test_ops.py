"""The Python ops layer on a CPU: IR building, keys, the kernel caches, the
catalog, argument checking and the compat modules' refusals. Tensors are
stand-ins with torch's protocol; nothing here needs torch or a GPU (the
torch.library registration is tested in test_torch_ops.py, skipped without
torch)."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Optional, Sequence

import pytest

import ggemm
from conftest import bundle_entries
from ggemm import cache, catalog, ops
from ggemm.compiler import CompilerError, load_compiler
from ggemm.problem import Problem, SpecError, TileConfig


def compiler_available() -> bool:
    try:
        load_compiler()
        return True
    except CompilerError:
        return False


needs_compiler = pytest.mark.skipif(not compiler_available(),
                                    reason="libGGemmCAPI.so not built")


class FakeDtype:
    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return f"torch.{self.name}"


class FakeTensor:
    """Shape, dtype, strides and device, like a torch.Tensor."""

    def __init__(self, shape: Sequence[int], dtype: str = "bfloat16",
                 strides: Optional[Sequence[int]] = None,
                 device: str = "cuda:0") -> None:
        self.shape = tuple(shape)
        self.dtype = FakeDtype(dtype)
        if strides is None:
            strides, step = [], 1
            for extent in reversed(self.shape):
                strides.insert(0, step)
                step *= max(extent, 1)
        self._strides = tuple(strides)
        self.device = device
        self.is_cuda = device.startswith("cuda")
        self.requires_grad = False

    def stride(self, dim: Optional[int] = None) -> Any:
        return self._strides if dim is None else self._strides[dim]

    def dim(self) -> int:
        return len(self.shape)

    def transpose(self, a: int, b: int) -> "FakeTensor":
        shape, strides = list(self.shape), list(self._strides)
        shape[a], shape[b] = shape[b], shape[a]
        strides[a], strides[b] = strides[b], strides[a]
        return FakeTensor(shape, self.dtype.name, strides, self.device)

    def is_contiguous(self) -> bool:
        step = 1
        for extent, stride in reversed(list(zip(self.shape, self._strides))):
            if extent > 1 and stride != step:
                return False
            step *= max(extent, 1)
        return True


def seg_args(**overrides: Any) -> dict:
    args = {"x": FakeTensor((1000, 512)), "w": FakeTensor((8, 256, 512)),
            "seg_indptr": FakeTensor((9,), "int32")}
    args.update(overrides)
    return args


def plan_seg(**overrides: Any) -> ops._Plan:
    args = seg_args(**overrides)
    x, w, seg = args.pop("x"), args.pop("w"), args.pop("seg_indptr")
    return ops.plan_segment_matmul(x, w, seg, **args)


# -- Problem and its IR ------------------------------------------------------

def test_problem_from_tensors() -> None:
    plan = plan_seg(bias=FakeTensor((8, 256), "float32"),
                    activation="silu")
    p = plan.problem
    assert (p.op, p.dtype, p.n, p.k, p.groups, p.num_weights) == \
        ("segment_matmul", "bf16", 256, 512, 8, 8)
    assert p.bias and not p.row_scale and p.activation == "silu"
    assert plan.out_shape == (1000, 256) and plan.out_dtype == "bf16"


def test_kn_layout_and_weight_indices() -> None:
    plan = plan_seg(w=FakeTensor((3, 512, 256)), weight_layout="kn",
                    weight_indices=FakeTensor((8,), "int32"),
                    seg_indptr=FakeTensor((9,), "int64"),
                    out_dtype="f32")
    p = plan.problem
    assert (p.n, p.num_weights, p.groups, p.index_dtype, p.out_dtype) == \
        (256, 3, 8, "i64", "f32")
    assert p.weight_indices and p.weight_layout == "kn"


def test_keys_are_canonical() -> None:
    a = Problem("segment_matmul", "bf16", n=256, k=512, groups=8)
    b = Problem.from_spec(json.loads(a.key))
    assert a == b and a.key == b.key and hash(a) == hash(b)
    c = Problem("segment_matmul", "bf16", n=256, k=512, groups=8,
                activation="gelu")
    assert c.key != a.key and c.kernel_name != a.kernel_name
    assert a.spec() == {"op": "segment_matmul", "dtype": "bf16", "n": 256,
                        "k": 512, "groups": 8}
    assert c.spec()["activation"] == "gelu"
    # weight_indices (and num_weights) are part of the key and round-trip.
    d = Problem("segment_matmul", "bf16", n=256, k=512, groups=8,
                weight_indices=True)
    e = Problem("segment_matmul", "bf16", n=256, k=512, groups=8,
                num_weights=3, weight_indices=True)
    assert len({a.key, d.key, e.key}) == 3
    assert len({a.kernel_name, d.kernel_name, e.kernel_name}) == 3
    assert Problem.from_spec(json.loads(d.key)) == d
    assert Problem.from_spec(json.loads(e.key)) == e


@pytest.mark.parametrize("fields, message", [
    ({"op": "conv"}, "op must be one of"),
    ({"dtype": "i8"}, "dtype must be one of bf16, f16, f8e4m3"),
    ({"dtype": "f8e4m3", "k": 192}, r"k \(192\) must be a multiple of 128"),
    ({"dtype": "f8e4m3", "weight_layout": "kn"},
     "weight_layout: 'kn' with FP8 operands is not lowered yet"),
    ({"dtype": "f8e4m3", "x_scale_block": "1x1"},
     "x_scale_block: '1x1' is not lowered"),
    ({"dtype": "f8e4m3", "w_scale_block": "1x128"},
     "w_scale_block: '1x128' is not lowered"),
    ({"dtype": "f8e4m3", "config": {"block_k": 64}},
     "config.block_k must be 128 with FP8"),
    ({"x_scale_block": "1x128"},
     r"scales apply to FP8 and INT8 \(s8\) operands only"),
    ({"k": 100}, r"k \(100\) must be a multiple of 8"),
    ({"n": 0}, "n must be a positive integer"),
    ({"num_weights": 3}, r"num_weights \(3\) must equal groups"),
    ({"activation": "tanh"}, "activation must be one of"),
    ({"op": "masked_matmul", "weight_indices": True},
     "only segment_matmul takes weight indices"),
])
def test_problem_rejects(fields: dict, message: str) -> None:
    base = {"op": "segment_matmul", "dtype": "bf16", "n": 256, "k": 512,
            "groups": 4}
    base.update(fields)
    with pytest.raises(SpecError, match=message):
        Problem(**base)


def test_spec_unknown_field_is_named() -> None:
    with pytest.raises(SpecError, match="unknown fields colour"):
        Problem.from_spec({"op": "segment_matmul", "dtype": "bf16", "n": 8,
                           "k": 8, "groups": 1, "colour": "red"})


def test_mlir_text_states_the_static_sizes() -> None:
    text = Problem("segment_matmul", "f16", n=256, k=128, groups=3,
                   num_weights=5, weight_indices=True, bias=True,
                   row_scale=True, activation="gelu", accumulate=True,
                   weight_layout="kn", index_dtype="i64", out_dtype="f32",
                   config=TileConfig(block_m=64, block_n=64,
                                     consumer_warpgroups=1)).mlir()
    assert "%x: memref<?x128xf16>" in text
    assert "%w: memref<5x128x256xf16>" in text
    assert "segments(%seg_indptr : memref<4xi64>)" in text
    assert "weight_indices(%weight_indices : memref<3xi32>)" in text
    assert "bias(%bias : memref<5x256xf32>)" in text
    assert "outs(%y : memref<?x256xf32>)" in text
    assert "#ggemm.epilogue<activation = gelu, accumulate = true>" in text
    assert "block_m = 64" in text and "weight_layout<kn>" in text
    masked = Problem("masked_matmul", "bf16", n=64, k=64, groups=2,
                     row_scale=True).mlir()
    assert "%x: memref<2x?x64xbf16>" in masked
    assert "row_scale(%row_scale : memref<2x?xf32>)" in masked


ALL_PROBLEMS = [
    Problem("segment_matmul", "bf16", n=256, k=128, groups=2),
    Problem("segment_matmul", "f16", n=256, k=128, groups=3, num_weights=5,
            weight_indices=True, bias=True, row_scale=True,
            activation="gelu", accumulate=True, weight_layout="kn",
            index_dtype="i64", out_dtype="f32"),
    Problem("masked_matmul", "bf16", n=256, k=128, groups=4, bias=True,
            row_scale=True, activation="silu", index_dtype="i64"),
    Problem("batched_matmul", "bf16", n=200, k=128, groups=4,
            weight_layout="nk", activation="relu", out_dtype="f32"),
    Problem("batched_matmul", "f16", n=256, k=64, groups=1,
            weight_layout="kn", row_scale=True, accumulate=True,
            config=TileConfig(block_m=64, block_n=64,
                              consumer_warpgroups=1)),
    Problem("segment_matmul", "bf16", n=512, k=256, groups=4,
            config=TileConfig(block_m=64, block_n=256, pingpong=True,
                              raster="along_m")),
    Problem("segment_matmul", "f8e4m3", n=576, k=1024, groups=1,
            config=TileConfig(block_m=8, block_n=64, block_k=128,
                              consumer_warpgroups=1, swap_ab=True,
                              split_k=4)),
    Problem("segment_matmul", "f8e4m3", n=1024, k=2048, groups=4,
            config=TileConfig(block_m=192, block_n=128, block_k=128,
                              consumer_warpgroups=3, split_k=2,
                              split_k_tail=True)),
    Problem("segment_matmul_k", "bf16", n=384, k=256, groups=6,
            out_dtype="f32"),
    Problem("segment_matmul_k", "f16", n=256, k=384, groups=3,
            weight_layout="kn", accumulate=True, index_dtype="i64"),
]


@needs_compiler
@pytest.mark.parametrize("problem", ALL_PROBLEMS,
                         ids=[p.function_name for p in ALL_PROBLEMS])
def test_generated_ir_verifies_and_tiles(problem: Problem) -> None:
    tiled = ggemm.run_pipeline(problem.mlir(),
                               "ggemm-select-config,ggemm-tile")
    assert "ggemm.foreach_tile" in tiled


# -- the kernel cache --------------------------------------------------------

@needs_compiler
def test_compile_through_the_disk_cache(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("GGEMM_CATALOG", raising=False)
    monkeypatch.setattr(cache, "_options",
                        cache.CompileOptions(cache_dir=tmp_path / "cache"))
    problem = ALL_PROBLEMS[1]
    path = cache.manifest_for(problem)
    manifest = json.loads(path.read_text())
    # Rows are dynamic: a multi-variant bundle named after the problem.
    assert path.name == problem.kernel_name + ".json"
    entries = bundle_entries(manifest)
    assert len(entries) >= 2 and entries == [
        f"{problem.function_name}_v{i}_kernel" for i in range(len(entries))]
    p = manifest["problem"]
    assert (p["n"], p["k"], p["num_groups"], p["num_weights"]) == (256, 128,
                                                                   3, 5)
    assert p["has_weight_indices"] and p["has_bias"] and p["has_row_scale"]
    assert p["accumulate"] and p["weight_layout"] == "kn"
    assert (p["a_dtype"], p["out_dtype"], p["index_dtype"]) == ("f16", "f32",
                                                                "i64")
    for variant in manifest["variants"]:
        assert "wgmma.mma_async" in (path.parent / variant["ptx"]).read_text()
    # A second look-up is a hit: the same entry, not rewritten.
    stamp = (path.parent / "COMPLETE").stat().st_mtime_ns
    assert cache.manifest_for(problem) == path
    assert (path.parent / "COMPLETE").stat().st_mtime_ns == stamp


def test_pipeline_options_reach_the_text() -> None:
    from ggemm.compiler import pipeline_text
    assert pipeline_text() == "ggemm-to-ptx{chip=sm_90a format=isa}"
    assert pipeline_text("sm_90a", "bin", "tiles", 114, 2) == (
        "ggemm-to-ptx{chip=sm_90a format=bin grid=tiles num-sms=114 "
        "opt-level=2}")
    with pytest.raises(CompilerError, match="binary_format"):
        pipeline_text(binary_format="cubin")


def test_set_compile_options_rejects_unknown_names() -> None:
    with pytest.raises(ggemm.GGemmError, match="unknown compile options "
                       "speed"):
        ggemm.set_compile_options(speed=3)


# -- catalogs ----------------------------------------------------------------

SPEC = {"format": "isa", "kernels": [
    {"op": "segment_matmul", "dtype": "bf16", "n": 256, "k": 128,
     "groups": 4, "activation": ["none", "silu"]},
    {"op": "masked_matmul", "dtype": "bf16", "n": 256, "k": 128, "groups": 4,
     "variants": [{"index_dtype": "i32"}, {"index_dtype": "i64"}]},
]}


def test_expand_spec_lists_and_variants() -> None:
    problems = catalog.expand_spec(SPEC)
    assert [(p.op, p.activation, p.index_dtype) for p in problems] == [
        ("segment_matmul", "none", "i32"), ("segment_matmul", "silu", "i32"),
        ("masked_matmul", "none", "i32"), ("masked_matmul", "none", "i64")]
    doubled = {"kernels": SPEC["kernels"] + SPEC["kernels"]}
    assert len(catalog.expand_spec(doubled)) == 4


def test_spec_errors_name_the_line() -> None:
    bad = {"kernels": [SPEC["kernels"][0],
                       {"op": "segment_matmul", "dtype": "bf16", "n": 256,
                        "k": 100, "groups": 4}]}
    with pytest.raises(SpecError, match=r"kernels\[1\]: k \(100\)"):
        catalog.expand_spec(bad)
    with pytest.raises(SpecError, match=r"kernels\[0\]: missing fields k"):
        catalog.expand_spec({"kernels": [{"op": "segment_matmul",
                                          "dtype": "bf16", "n": 8,
                                          "groups": 1}]})
    with pytest.raises(SpecError, match="unknown top-level fields model"):
        catalog.expand_spec({"model": "x", "kernels": []})


def test_load_spec_yaml_and_json(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps(SPEC))
    assert catalog.load_spec(tmp_path / "s.json") == SPEC
    yaml = pytest.importorskip("yaml")
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(SPEC))
    assert catalog.load_spec(tmp_path / "s.yaml") == SPEC
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(SpecError, match="bad.json: invalid JSON"):
        catalog.load_spec(tmp_path / "bad.json")


@needs_compiler
def test_build_and_use_a_catalog(tmp_path: Path, capsys) -> None:
    spec_path = tmp_path / "model.json"
    spec_path.write_text(json.dumps(SPEC))
    out = tmp_path / "catalog"
    assert catalog.main(["build", str(spec_path), "-o", str(out), "-j", "2",
                         "--cache-dir", str(tmp_path / "cache")]) == 0
    assert "4/4 kernels" in capsys.readouterr().err
    index = json.loads((out / "catalog.json").read_text())
    assert len(index["kernels"]) == 4
    for problem in catalog.expand_spec(SPEC):
        path = cache.manifest_for(problem, catalog=out)
        assert path.name == problem.kernel_name + ".json"
        manifest = json.loads(path.read_text())
        assert bundle_entries(manifest)[0].startswith(problem.function_name)
        # Every kernel's binary came along, variants included.
        for kernel in manifest.get("variants", [manifest]):
            assert (out / kernel["ptx"]).is_file()
    missing = Problem("segment_matmul", "bf16", n=512, k=128, groups=4)
    with pytest.raises(cache.CatalogMissError) as error:
        cache.manifest_for(missing, catalog=out)
    assert error.value.spec_line == missing.spec()
    assert json.dumps(missing.spec()) in str(error.value)
    assert "add this line" in str(error.value)
    assert catalog.main(["list", str(out)]) == 0
    listed = [json.loads(line) for line in
              capsys.readouterr().out.splitlines()]
    assert sorted(map(json.dumps, listed)) == sorted(
        json.dumps(p.spec()) for p in catalog.expand_spec(SPEC))


def test_catalog_from_the_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GGEMM_CATALOG", f"{tmp_path / 'a'}{os.pathsep}"
                       f"{tmp_path / 'b'}")
    assert cache.catalog_dirs() == [tmp_path / "a", tmp_path / "b"]
    assert cache.catalog_dirs(tmp_path / "c") == [tmp_path / "c"]
    with pytest.raises(ggemm.GGemmError, match="no catalog here"):
        cache.manifest_for(ALL_PROBLEMS[0])


def test_catalog_build_reports_failures(tmp_path: Path, monkeypatch) -> None:
    def broken(*args: Any) -> Path:
        raise CompilerError("boom")
    import ggemm.compiler
    monkeypatch.setattr(ggemm.compiler, "compile_to_cache", broken)
    with pytest.raises(SpecError, match="1 of 1 kernels failed:\n.*boom"):
        catalog.build_catalog([ALL_PROBLEMS[0]], tmp_path / "out")


# -- argument checks ---------------------------------------------------------

@pytest.mark.parametrize("overrides, message", [
    ({"x": FakeTensor((1000, 512, 1))}, r"x: expected 2 dimensions \[M, K\]"),
    ({"x": FakeTensor((1000, 512), "float32")},
     "x: expected dtype bf16 or f16 or f8e4m3 or f8e5m2 or s8, got "
     "torch.float32"),
    ({"w": FakeTensor((8, 256, 512), "float16")},
     "w: dtype torch.float16 differs from x's torch.bfloat16"),
    ({"w": FakeTensor((8, 256, 384))},
     r"w: dimension 2 \(K, as x.shape\[1\]\) is 384, expected 512"),
    ({"seg_indptr": FakeTensor((5,), "int32")},
     "w: 8 weight matrices for 4 segments; pass weight_indices"),
    ({"seg_indptr": FakeTensor((9,), "float32")},
     "seg_indptr: expected dtype i32 or i64"),
    ({"x": FakeTensor((1000, 512), device="cpu")},
     "x: expected a CUDA tensor, got device cpu"),
    ({"w": FakeTensor((8, 256, 512), device="cuda:1")},
     "w: on cuda:1, but x is on cuda:0"),
    ({"x": FakeTensor((1000, 512), strides=(1, 1000))},
     "x: the last dimension must be contiguous"),
    ({"x": FakeTensor((1000, 100)), "w": FakeTensor((8, 256, 100))},
     "x: K = 100 must be a multiple of 8"),
    ({"bias": FakeTensor((8, 255), "float32")},
     r"bias: dimension 1 \(N\) is 255, expected 256"),
    ({"row_scale": FakeTensor((999,), "float32")},
     r"row_scale: dimension 0 \(M, as x.shape\[0\]\) is 999"),
    ({"weight_indices": FakeTensor((7,), "int32")},
     r"weight_indices: dimension 0 \(G, as seg_indptr.shape\[0\] - 1\)"),
    ({"activation": "tanh"}, "activation: expected None or one of relu"),
    ({"weight_layout": "mk"}, "weight_layout: expected 'nk'"),
    ({"accumulate": True}, "accumulate=True needs out="),
    ({"out": FakeTensor((1000, 128))},
     r"out: expected shape \[1000, 256\], got \[1000, 128\]"),
    ({"out": FakeTensor((1000, 256)), "out_dtype": "f32"},
     "out_dtype is f32 but out is torch.bfloat16"),
    ({"out_dtype": "f64"}, "out_dtype: expected torch.bfloat16"),
    ({"config": {"block_q": 1}}, "config: unknown fields block_q"),
])
def test_segment_matmul_argument_errors(overrides: dict, message: str) -> None:
    with pytest.raises(ops.ArgumentError, match=message):
        plan_seg(**overrides)


def test_kn_needs_n_multiple_of_8() -> None:
    with pytest.raises(ops.ArgumentError, match=r"w: N = 100 must be a "
                       r"multiple of 8 with weight_layout='kn'"):
        plan_seg(w=FakeTensor((8, 512, 100)), weight_layout="kn")


def test_empty_problems_launch_nothing() -> None:
    plan = plan_seg(x=FakeTensor((0, 512)))
    assert plan.empty and plan.problem is None
    plan = plan_seg(seg_indptr=FakeTensor((1,), "int32"),
                    weight_indices=FakeTensor((0,), "int32"))
    assert plan.empty


def test_masked_and_batched_checks() -> None:
    x, w = FakeTensor((4, 64, 512)), FakeTensor((4, 256, 512))
    plan = ops.plan_masked_matmul(x, w, FakeTensor((4,), "int64"),
                                  row_scale=FakeTensor((4, 64), "float32"))
    assert plan.problem.op == "masked_matmul"
    assert plan.problem.index_dtype == "i64" and plan.problem.row_scale
    assert plan.out_shape == (4, 64, 256)
    with pytest.raises(ops.ArgumentError, match=r"masked_m: dimension 0"):
        ops.plan_masked_matmul(x, w, FakeTensor((3,), "int32"))
    with pytest.raises(ops.ArgumentError, match=r"w: dimension 0 \(G, as "
                       r"x.shape\[0\]\) is 3"):
        ops.plan_batched_matmul(x, FakeTensor((3, 256, 512)))
    with pytest.raises(ops.ArgumentError, match="x: groups must be packed"):
        ops.plan_batched_matmul(FakeTensor((4, 64, 512),
                                           strides=(512 * 128, 512, 1)), w)
    with pytest.raises(ops.ArgumentError, match=r"row_scale: expected 2 "
                       r"dimensions \[G, M\]"):
        ops.plan_batched_matmul(x, w, row_scale=FakeTensor((256,), "float32"))
    plan = ops.plan_batched_matmul(x, FakeTensor((4, 512, 256)),
                                   weight_layout="kn", out_dtype="f32")
    assert plan.problem.weight_layout == "kn"
    assert plan.problem.out_dtype == "f32"


# -- segment_matmul_k (K-ragged weight gradients) ---------------------------

def kragged_args(**overrides: Any) -> dict:
    args = {"x": FakeTensor((1000, 256)), "dy": FakeTensor((1000, 384)),
            "seg_indptr": FakeTensor((7,), "int32")}
    args.update(overrides)
    return args


def plan_k(**overrides: Any) -> ops._KPlan:
    args = kragged_args(**overrides)
    x, dy, seg = args.pop("x"), args.pop("dy"), args.pop("seg_indptr")
    return ops.plan_segment_matmul_k(x, dy, seg, **args)


def test_kragged_mlir_text() -> None:
    text = Problem("segment_matmul_k", "bf16", n=384, k=256, groups=6,
                   out_dtype="f32").mlir()
    assert "ggemm.segment_matmul_k ins(%dy, %x : memref<?x384xbf16>, " \
        "memref<?x256xbf16>)" in text
    assert "segments(%seg_indptr : memref<7xi32>)" in text
    assert "outs(%dw : memref<6x384x256xf32>)" in text
    assert "{" not in text.split("outs(")[1].split("\n")[0]  # no attributes
    kn = Problem("segment_matmul_k", "f16", n=256, k=384, groups=3,
                 weight_layout="kn", accumulate=True, index_dtype="i64",
                 config=TileConfig(block_m=64, block_n=64,
                                   consumer_warpgroups=1)).mlir()
    assert "outs(%dw : memref<3x384x256xf16>)" in kn
    assert "segments(%seg_indptr : memref<4xi64>)" in kn
    assert "weight_layout = #ggemm.weight_layout<kn>" in kn
    assert ", accumulate," in kn and "block_m = 64" in kn
    assert "epilogue" not in kn


def test_kragged_keys_and_catalog_lines() -> None:
    plan = plan_k()
    problem = plan.plan.problem
    assert problem.spec() == {"op": "segment_matmul_k", "dtype": "bf16",
                              "n": 384, "k": 256, "groups": 6}
    assert problem.kernel_name.startswith("ggemm_segment_matmul_k_bf16_")
    assert (plan.out_shape, plan.out_dtype, plan.indices) == (
        (6, 384, 256), "bf16", None)
    f32 = plan_k(out_dtype="f32", weight_layout="kn",
                 seg_indptr=FakeTensor((7,), "int64")).plan.problem
    assert f32.spec() == {"op": "segment_matmul_k", "dtype": "bf16",
                          "n": 384, "k": 256, "groups": 6,
                          "out_dtype": "f32", "weight_layout": "kn",
                          "index_dtype": "i64"}
    assert f32.key != problem.key
    assert Problem.from_spec(json.loads(f32.key)) == f32
    # accumulate through out= is in the key; the output's shape follows the
    # layout.
    acc = plan_k(out=FakeTensor((6, 256, 384), "float32"), accumulate=True,
                 weight_layout="kn")
    assert acc.plan.problem.accumulate and acc.out_dtype == "f32"
    expanded = catalog.expand_spec({"kernels": [
        {"op": "segment_matmul_k", "dtype": ["bf16", "f16"], "n": 384,
         "k": 256, "groups": 6, "out_dtype": ["f32", "bf16"]}]})
    assert [(p.dtype, p.out_dtype) for p in expanded] == [
        ("bf16", "f32"), ("bf16", "bf16"), ("f16", "f32"), ("f16", "bf16")]


def test_kragged_weight_indices_compute_per_group_in_f32() -> None:
    plan = plan_k(weight_indices=FakeTensor((6,), "int64"), num_weights=3,
                  out_dtype="bf16")
    # The kernel writes [G, N, K] f32; the result is [Gw, N, K].
    assert plan.plan.problem.out_dtype == "f32"
    assert not plan.plan.problem.accumulate
    assert plan.plan.out_shape == (6, 384, 256)
    assert (plan.out_shape, plan.out_dtype, plan.num_weights) == (
        (3, 384, 256), "bf16", 3)
    # num_weights from out=; accumulate stays out of the kernel's key.
    plan = plan_k(weight_indices=FakeTensor((6,), "int32"),
                  out=FakeTensor((4, 384, 256), "float32"), accumulate=True)
    assert plan.num_weights == 4 and not plan.plan.problem.accumulate
    # Without weight indices a num_weights other than G scatters with
    # i_g = g.
    assert plan_k(num_weights=8).indices == "identity"


@pytest.mark.parametrize("fields, message", [
    ({"dtype": "f8e4m3"}, "f8e4m3 operands of segment_matmul_k must be "
     "given transposed"),
    ({"weight_indices": True, "num_weights": 3},
     "weight_indices: segment_matmul_k has none"),
    ({"bias": True}, "bias: segment_matmul_k has none"),
    ({"activation": "silu"}, "activation: segment_matmul_k has none"),
    ({"num_weights": 3}, r"num_weights \(3\) must equal groups \(6\)"),
    ({"n": 100}, r"n \(100\) must be a multiple of 8 for segment_matmul_k"),
    ({"k": 100}, r"k \(100\) must be a multiple of 8"),
])
def test_kragged_problem_rejects(fields: dict, message: str) -> None:
    line = {"op": "segment_matmul_k", "dtype": "bf16", "n": 384, "k": 256,
            "groups": 6}
    line.update(fields)
    with pytest.raises(SpecError, match=message):
        Problem.from_spec(line)


@pytest.mark.parametrize("overrides, message", [
    ({"x": FakeTensor((1000, 256, 1))}, r"x: expected 2 dimensions \[T, K\]"),
    ({"dy": FakeTensor((999, 384))},
     r"dy: dimension 0 \(T, as x.shape\[0\]\) is 999"),
    ({"dy": FakeTensor((1000, 384), "float16")},
     "dy: dtype torch.float16 differs from x's torch.bfloat16"),
    ({"dy": FakeTensor((1000, 384), device="cuda:1")},
     "dy: on cuda:1, but x is on cuda:0"),
    ({"seg_indptr": FakeTensor((7,), "float32")},
     "seg_indptr: expected dtype i32 or i64"),
    ({"seg_indptr": FakeTensor((0,), "int32")}, "seg_indptr: expected G"),
    ({"weight_indices": FakeTensor((5,), "int32")},
     r"weight_indices: dimension 0 \(G"),
    ({"weight_layout": "mn"}, "weight_layout: expected 'nk'"),
    ({"accumulate": True}, "accumulate=True needs out="),
    ({"out": FakeTensor((6, 256, 384))}, r"out: expected shape \[6, 384, 256\]"),
    ({"out": FakeTensor((6, 384, 256)), "out_dtype": "f32"},
     "out_dtype is f32 but out is torch.bfloat16"),
    ({"out": FakeTensor((6, 384, 256), strides=(384 * 256 + 64, 256, 1))},
     "out: groups must be packed"),
    ({"num_weights": -1}, "num_weights: expected None or a non-negative"),
])
def test_kragged_argument_errors(overrides: dict, message: str) -> None:
    with pytest.raises(ops.ArgumentError, match=message):
        plan_k(**overrides)


@pytest.mark.parametrize("overrides, message", [
    ({"dy": FakeTensor((1000, 100))},
     "dy: N = 100 must be a multiple of 8: the K-ragged kernel reads dy's "
     "rows through TMA"),
    ({"x": FakeTensor((1000, 100))}, "x: K = 100 must be a multiple of 8"),
    ({"x": FakeTensor((1000, 256), strides=(260, 1))},
     "x: row stride 260 must be a multiple of 8 elements"),
    ({"x": FakeTensor((1000, 256), "float32"),
      "dy": FakeTensor((1000, 384), "float32")},
     "x: the K-ragged kernel takes bf16 or f16 operands"),
])
def test_kragged_shapes_the_kernel_cannot_take(overrides: dict,
                                               message: str) -> None:
    with pytest.raises(ops.ArgumentError, match=message) as error:
        plan_k(**overrides)
    assert "fallback='torch'" in str(error.value)
    # The torch fallback takes them (its checks only).
    plan = plan_k(kernel=False, **overrides)
    assert plan.plan.key is None


def test_kragged_fallback_argument() -> None:
    x = FakeTensor((100, 64))
    with pytest.raises(ops.ArgumentError, match="fallback: expected None or "
                       "'torch'"):
        ggemm.segment_matmul_k(x, x, FakeTensor((3,), "int32"),
                               fallback="cuda")


def test_kragged_empty_problems_launch_nothing() -> None:
    assert plan_k(x=FakeTensor((0, 256)), dy=FakeTensor((0, 384))).plan.empty
    assert plan_k(x=FakeTensor((0, 256)),
                  dy=FakeTensor((0, 384))).no_rows
    # T = 0 needs no alignment (nothing is read).
    plan = plan_k(x=FakeTensor((0, 100)), dy=FakeTensor((0, 384)))
    assert plan.plan.empty and plan.out_shape == (6, 384, 100)
    assert plan_k(seg_indptr=FakeTensor((1,), "int32")).plan.empty


def test_kragged_catalog_miss_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "catalog.json").write_text(json.dumps(
        {"format": "ggemm-catalog", "version": 1, "kernels": {}}))
    problem = plan_k(out_dtype="f32").plan.problem
    with pytest.raises(cache.CatalogMissError) as error:
        cache.manifest_for(problem, tmp_path)
    assert error.value.spec_line == {"op": "segment_matmul_k",
                                     "dtype": "bf16", "n": 384, "k": 256,
                                     "groups": 6, "out_dtype": "f32"}
    cache._indices.clear()


@needs_compiler
def test_kragged_compiles_to_a_bundle(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("GGEMM_CATALOG", raising=False)
    monkeypatch.setattr(cache, "_options",
                        cache.CompileOptions(cache_dir=tmp_path / "cache"))
    problem = Problem("segment_matmul_k", "bf16", n=384, k=256, groups=6,
                      out_dtype="f32", weight_layout="kn", accumulate=True,
                      index_dtype="i64")
    path = cache.manifest_for(problem)
    assert path.name == problem.kernel_name + ".json"
    manifest = json.loads(path.read_text())
    p = manifest["problem"]
    assert p["op"] == "segment_matmul_k"
    assert (p["n"], p["k"], p["num_groups"], p["num_weights"]) == (384, 256,
                                                                   6, 6)
    assert (p["a_dtype"], p["out_dtype"], p["index_dtype"]) == ("bf16",
                                                                "f32", "i64")
    assert p["accumulate"] and p["weight_layout"] == "kn"
    assert not p["has_weight_indices"] and not p["has_bias"]
    tensors = {param.get("tensor") for variant in
               manifest.get("variants", [manifest])
               for param in variant.get("params", manifest.get("params", []))}
    assert {"dy", "x", "seg_indptr", "dw"} <= tensors
    assert not tensors & {"w", "y"}
    ptx = [path.parent / v["ptx"] for v in manifest.get("variants", [manifest])
           if "ptx" in v]
    assert ptx and all("wgmma.mma_async" in f.read_text() for f in ptx)


class _StandInTorch:
    """Enough of torch for segment_matmul_k's launch path on a CPU."""

    bfloat16, float16, float32 = (FakeDtype("bfloat16"), FakeDtype("float16"),
                                  FakeDtype("float32"))

    def __init__(self) -> None:
        import types
        self.compiler = types.SimpleNamespace(is_compiling=lambda: False)
        self.dtype = FakeDtype
        self.made: list = []

    def is_grad_enabled(self) -> bool:
        return False

    def _make(self, kind: str, shape: Any, dtype: Any, device: Any) -> Any:
        tensor = FakeTensor(shape, dtype.name, device=device)
        self.made.append((kind, tensor))
        return tensor

    def empty(self, shape, dtype=None, device=None):
        return self._make("empty", shape, dtype, device)

    def zeros(self, shape, dtype=None, device=None):
        return self._make("zeros", shape, dtype, device)


class _Out(FakeTensor):
    zeroed = False

    def zero_(self) -> "_Out":
        self.zeroed = True
        return self


@pytest.fixture
def kragged_eager(monkeypatch):
    stand_in = _StandInTorch()
    monkeypatch.setattr(ops, "torch", stand_in)
    kernel = RecordingKernel()
    problems: list = []

    def kernel_for(problem, catalog=None):
        problems.append(problem)
        return kernel

    monkeypatch.setattr(ops, "kernel_for", kernel_for)
    monkeypatch.setattr(ops, "_kernels", {})
    import types
    return types.SimpleNamespace(torch=stand_in, kernel=kernel,
                                 problems=problems)


def test_kragged_launches_dy_x_seg_indptr_dw(kragged_eager) -> None:
    args = kragged_args()
    dw = ggemm.segment_matmul_k(args["x"], args["dy"], args["seg_indptr"],
                                out_dtype="f32")
    (launch,) = kragged_eager.kernel.launches
    assert set(launch) == {"dy", "x", "seg_indptr", "dw"}
    assert launch["dy"] is args["dy"] and launch["x"] is args["x"]
    assert launch["dw"] is dw and dw.shape == (6, 384, 256)
    assert str(dw.dtype) == "torch.float32"
    # The kernel writes every dw[g]: the output is not zero-filled first.
    assert [kind for kind, _ in kragged_eager.torch.made] == ["empty"]
    assert kragged_eager.problems[0].spec()["out_dtype"] == "f32"
    # Into out=, accumulating: the same tensor, an accumulate kernel.
    out = FakeTensor((6, 256, 384))
    got = ggemm.segment_matmul_k(args["x"], args["dy"], args["seg_indptr"],
                                 weight_layout="kn", out=out,
                                 accumulate=True)
    assert got is out and kragged_eager.kernel.launches[1]["dw"] is out
    assert kragged_eager.problems[1].accumulate
    assert kragged_eager.problems[1].weight_layout == "kn"


def test_kragged_no_rows_writes_zeros_without_a_launch(kragged_eager) -> None:
    x, dy = FakeTensor((0, 256)), FakeTensor((0, 384))
    seg = FakeTensor((7,), "int32")
    dw = ggemm.segment_matmul_k(x, dy, seg)
    assert kragged_eager.torch.made == [("zeros", dw)]
    assert dw.shape == (6, 384, 256)
    out = _Out((6, 384, 256))
    assert ggemm.segment_matmul_k(x, dy, seg, out=out) is out and out.zeroed
    kept = _Out((6, 384, 256))
    ggemm.segment_matmul_k(x, dy, seg, out=kept, accumulate=True)
    assert not kept.zeroed
    assert kragged_eager.kernel.launches == []


# -- compat ------------------------------------------------------------------

def test_compat_entry_points_that_are_not_lowered() -> None:
    from ggemm.compat import deep_gemm, flag_gems, flashinfer
    a = FakeTensor((16, 128))
    cases = [
        (lambda: deep_gemm.fp8_gemm_nt(a, a, a), "fp8_gemm_nt: needs FP8"),
        (lambda: deep_gemm.k_grouped_fp8_gemm_tn_contiguous(a, a, a, [], a),
         "k_grouped_fp8_gemm_tn_contiguous: needs FP8 K-ragged with "
         "MN-major operands"),
        (lambda: flag_gems.w8a8_block_fp8_bmm(a, a, a, a,
                                              block_size=[1, 128]),
         r"block_size: only \[128, 128\] is lowered yet"),
    ]
    for call, message in cases:
        with pytest.raises(ggemm.NotLoweredError, match=message) as error:
            call()
        assert isinstance(error.value, NotImplementedError)


def test_compat_arguments_that_cannot_be_honoured() -> None:
    from ggemm.compat import aiter, deep_gemm, flashinfer, megablox
    a = FakeTensor((16, 128))
    with pytest.raises(ops.ArgumentError, match="transpose_a"):
        aiter.batched_gemm(FakeTensor((2, 16, 128)), a, transpose_a=True)
    with pytest.raises(ops.ArgumentError, match="use_psum_layout"):
        deep_gemm.m_grouped_bf16_gemm_nt_contiguous(a, a, a, a,
                                                    use_psum_layout=True)
    with pytest.raises(ops.ArgumentError, match="interpret"):
        megablox.gmm(a, a, a, interpret=True)
    with pytest.raises(ops.ArgumentError, match="interpret"):
        megablox.tgmm(a, a, a, interpret=True)
    with pytest.raises(ops.ArgumentError, match=r"lhs: 128 token columns "
                       r"\(m\) but rhs has 16 rows"):
        megablox.tgmm(a, a, a)
    with pytest.raises(ops.ArgumentError, match="lhs, rhs: expected lhs "
                       r"\[k, m\]"):
        megablox.tgmm(FakeTensor((2, 16, 128)), a, a)
    k_args = (FakeTensor((300, 128)), FakeTensor((300, 64)),
              FakeTensor((4, 128, 64), "float32"))
    sizes = FakeTensor((4,), "int32")
    with pytest.raises(ops.ArgumentError, match="use_psum_layout"):
        deep_gemm.k_grouped_bf16_gemm_tn_contiguous(*k_args, None, sizes,
                                                    use_psum_layout=True)
    with pytest.raises(ops.ArgumentError, match="ks: the sizes add up to "
                       "200, but a has 300 rows"):
        deep_gemm.k_grouped_bf16_gemm_tn_contiguous(*k_args, [50] * 4, sizes)
    with pytest.raises(ops.ArgumentError, match="ks: 3 sizes for 4 groups"):
        deep_gemm.k_grouped_bf16_gemm_tn_contiguous(*k_args, [100] * 3, sizes)
    with pytest.raises(ops.ArgumentError, match=r"ks_tensor: expected \[4\]"):
        deep_gemm.k_grouped_bf16_gemm_tn_contiguous(
            *k_args, [75] * 4, FakeTensor((5,), "int32"))
    with pytest.raises(ops.ArgumentError, match=r"c: expected shape "
                       r"\[4, 128, 64\]"):
        deep_gemm.k_grouped_bf16_gemm_tn_contiguous(
            *k_args, [75] * 4, sizes, c=FakeTensor((4, 64, 128), "float32"))
    wrapper = flashinfer.SegmentGEMMWrapper(None)
    with pytest.raises(ops.ArgumentError, match="seg_lens, seg_indptr: pass "
                       "exactly one"):
        wrapper.run(a, a, 2, True)
    with pytest.raises(ops.ArgumentError, match="backend"):
        flashinfer.SegmentGEMMWrapper(None, backend="cutlass")
    with pytest.raises(ops.ArgumentError, match="expected_m"):
        deep_gemm.m_grouped_bf16_gemm_nt_masked(a, a, a, a, expected_m=-1)


# -- library discovery -------------------------------------------------------

def test_library_search_lists_what_it_tried(monkeypatch,
                                            tmp_path: Path) -> None:
    from ggemm import compiler, runtime
    monkeypatch.delenv("GGEMM_COMPILER_LIB", raising=False)
    monkeypatch.delenv("GGEMM_RUNTIME_LIB", raising=False)
    monkeypatch.setenv("GGEMM_PREFIX", str(tmp_path / "prefix"))
    monkeypatch.setenv("GGEMM_BUILD_DIR", str(tmp_path / "build"))
    tried = compiler.compiler_library_candidates()
    assert tmp_path / "prefix" / "lib" / "libGGemmCAPI.so" in tried
    assert tmp_path / "build" / "lib" / "libGGemmCAPI.so" in tried
    tried = runtime.library_candidates()
    assert tmp_path / "prefix" / "lib" / "libggemm_runtime.so" in tried
    assert tmp_path / "build" / "runtime" / "libggemm_runtime.so" in tried
    monkeypatch.setenv("GGEMM_COMPILER_LIB", str(tmp_path / "none.so"))
    with pytest.raises(CompilerError, match=r"not found \(looked for "
                       r".*none.so\).*GGEMM_PREFIX"):
        compiler.load_compiler(tmp_path / "none.so")


# -- Checked calls are remembered --------------------------------------------


_DTYPES: dict = {}


class DeviceTensor(FakeTensor):
    """A FakeTensor with get_device(), which the eager ops' memo of checked
    calls keys on, and one dtype object per name, as torch has."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.dtype = _DTYPES.setdefault(self.dtype.name, self.dtype)

    def get_device(self) -> int:
        return int(self.device.split(":")[1]) if self.is_cuda else -1


class RecordingKernel:
    def __init__(self) -> None:
        self.launches: list = []

    def launch(self, tensors: dict, expected_m=None) -> None:
        self.launches.append(dict(tensors))
        self.hints = getattr(self, "hints", []) + [expected_m]


@pytest.fixture
def eager(monkeypatch):
    """segment_matmul / masked_matmul without torch or a GPU: a stand-in
    torch module, a recording kernel, and a count of the checking plans."""
    import types
    stand_in = types.SimpleNamespace(
        compiler=types.SimpleNamespace(is_compiling=lambda: False),
        is_grad_enabled=lambda: False, dtype=FakeDtype)
    monkeypatch.setattr(ops, "torch", stand_in)
    monkeypatch.setattr(ops, "_checked", {})
    kernel = RecordingKernel()
    monkeypatch.setattr(ops, "kernel_for", lambda problem, catalog=None: kernel)
    monkeypatch.setattr(ops, "_kernels", {})
    plans = {"segment": 0, "grouped": 0}
    real_segment, real_grouped = ops.plan_segment_matmul, ops._plan_grouped

    def plan_segment(*args, **kwargs):
        plans["segment"] += 1
        return real_segment(*args, **kwargs)

    def plan_grouped(*args, **kwargs):
        plans["grouped"] += 1
        return real_grouped(*args, **kwargs)

    monkeypatch.setattr(ops, "plan_segment_matmul", plan_segment)
    monkeypatch.setattr(ops, "_plan_grouped", plan_grouped)
    return types.SimpleNamespace(kernel=kernel, plans=plans)


def seg_call(rows: int = 1000, **overrides: Any) -> dict:
    args = {"x": DeviceTensor((rows, 512)), "w": DeviceTensor((8, 256, 512)),
            "seg_indptr": DeviceTensor((9,), "int32"),
            "out": DeviceTensor((rows, 256))}
    args.update(overrides)
    return args


def test_a_repeated_call_is_not_checked_again(eager) -> None:
    first, second = seg_call(), seg_call()
    ops.segment_matmul(**first)
    ops.segment_matmul(**second)
    assert eager.plans["segment"] == 1
    assert len(eager.kernel.launches) == 2
    launched = eager.kernel.launches[1]
    # The second call launches its own tensors.
    assert launched["x"] is second["x"] and launched["y"] is second["out"]
    assert launched["seg_indptr"] is second["seg_indptr"]
    assert set(launched) == {"x", "w", "seg_indptr", "y"}
    # Another row count, layout or option is checked (and then remembered).
    ops.segment_matmul(**seg_call(rows=999))
    ops.segment_matmul(**seg_call(), activation="silu")
    ops.segment_matmul(**seg_call(), activation="silu")
    assert eager.plans["segment"] == 3


@pytest.mark.parametrize("overrides, message", [
    ({"x": DeviceTensor((1000, 512), strides=(1, 1000))},
     "x: the last dimension must be contiguous"),
    ({"x": DeviceTensor((1000, 512), "float32")},
     "x: expected dtype bf16 or f16 or f8e4m3 or f8e5m2 or s8, got "
     "torch.float32"),
    ({"w": DeviceTensor((8, 256, 512), device="cuda:1")},
     "w: on cuda:1, but x is on cuda:0"),
    ({"x": DeviceTensor((1000, 512), device="cpu"),
      "w": DeviceTensor((8, 256, 512), device="cpu")},
     "x: expected a CUDA tensor"),
    ({"out": DeviceTensor((1000, 128))}, "out: expected shape [1000, 256]"),
    ({"seg_indptr": DeviceTensor((5,), "int32")}, "w: 8 weight matrices for "
     "4 segments"),
])
def test_a_remembered_call_still_rejects_bad_arguments(eager, overrides,
                                                       message) -> None:
    ops.segment_matmul(**seg_call())
    with pytest.raises(ops.ArgumentError, match=re.escape(message)):
        ops.segment_matmul(**seg_call(**overrides))
    # The failure is not remembered either.
    with pytest.raises(ops.ArgumentError, match=re.escape(message)):
        ops.segment_matmul(**seg_call(**overrides))


def test_converted_arguments_are_converted_every_call(eager) -> None:
    class Widening(DeviceTensor):
        def int(self):
            return DeviceTensor(self.shape, "int32")

    for _ in range(2):
        ops.segment_matmul(**seg_call(
            weight_indices=Widening((8,), "int64")))
    assert eager.plans["segment"] == 2
    assert eager.kernel.launches[1]["weight_indices"].dtype.name == "int32"


def test_stand_ins_without_get_device_are_checked_every_call(eager) -> None:
    for _ in range(2):
        ops.segment_matmul(**seg_args(out=FakeTensor((1000, 256))))
    assert eager.plans["segment"] == 2


def test_remembered_calls_are_bounded(eager, monkeypatch) -> None:
    monkeypatch.setattr(ops, "_CHECKED_LIMIT", 4)
    for rows in range(1, 10):
        ops.segment_matmul(**seg_call(rows=rows))
    assert len(ops._checked) == 4
    ops.segment_matmul(**seg_call(rows=9))
    assert eager.plans["segment"] == 9


def test_masked_calls_are_remembered(eager) -> None:
    def call() -> None:
        ops.masked_matmul(DeviceTensor((4, 64, 512)),
                          DeviceTensor((4, 256, 512)),
                          DeviceTensor((4,), "int32"),
                          out=DeviceTensor((4, 64, 256)))
    call()
    call()
    assert eager.plans["grouped"] == 1
    assert set(eager.kernel.launches[1]) == {"x", "w", "masked_m", "y"}
    with pytest.raises(ops.ArgumentError, match="groups must be packed"):
        ops.masked_matmul(DeviceTensor((4, 64, 512),
                                       strides=(64 * 512 + 8, 512, 1)),
                          DeviceTensor((4, 256, 512)),
                          DeviceTensor((4,), "int32"),
                          out=DeviceTensor((4, 64, 256)))


def test_a_remembered_masked_call_launches_its_own_hint(eager) -> None:
    """expected_m is not in the memo key: each call passes its own."""
    for hint in (20, None, 192):
        ops.masked_matmul(DeviceTensor((4, 64, 512)),
                          DeviceTensor((4, 256, 512)),
                          DeviceTensor((4,), "int32"),
                          out=DeviceTensor((4, 64, 256)), expected_m=hint)
    assert eager.plans["grouped"] == 1
    assert eager.kernel.hints == [20, None, 192]


@pytest.mark.parametrize("function, tensors, flags", [
    (ops.segment_matmul, {"x", "w", "seg_indptr", "weight_indices", "bias",
                          "row_scale", "out", "x_scale", "w_scale",
                          "row_indices", "scatter_indices", "out_scale"},
     {"atomic", "gate_up_block"}),
    # expected_m does not change the plan: it is passed to every launch.
    (ops.masked_matmul, {"x", "w", "masked_m", "bias", "row_scale", "out",
                         "x_scale", "w_scale", "expected_m", "out_scale"},
     set()),
    (ops.batched_matmul, {"x", "w", "bias", "row_scale", "out", "x_scale",
                          "w_scale", "out_scale"}, set()),
])
def test_the_memo_key_covers_every_argument(function, tensors,
                                            flags) -> None:
    """A new argument of an op must go into its _call_key (the tensors or
    the others), or a remembered call would launch the wrong kernel: update
    this list when it does."""
    import inspect
    others = {"weight_layout", "activation", "accumulate", "out_dtype",
              "catalog", "config"} | flags
    assert set(inspect.signature(function).parameters) == tensors | others

# -- expected_m: the runtime's variant hint ---------------------------------

@pytest.mark.parametrize("hint", [0, -1, 2.5, True, "20"])
def test_masked_matmul_checks_expected_m(hint: Any) -> None:
    x, w = FakeTensor((4, 64, 512)), FakeTensor((4, 256, 512))
    with pytest.raises(ops.ArgumentError, match="expected_m: expected None "
                       "or a positive int"):
        ops.masked_matmul(x, w, FakeTensor((4,), "int32"), expected_m=hint)


def test_masked_matmul_passes_expected_m_to_the_launch(monkeypatch) -> None:
    """masked_matmul -> _grouped -> _run -> Kernel.launch(expected_m=)."""
    seen = {}

    def grouped(op, *args):
        seen["grouped"] = (op, args[-1])
    monkeypatch.setattr(ops, "_grouped", grouped)
    x, w = FakeTensor((4, 64, 512)), FakeTensor((4, 256, 512))
    ops.masked_matmul(x, w, FakeTensor((4,), "int32"), expected_m=20)
    assert seen["grouped"] == ("masked_matmul", 20)
    ops.masked_matmul(x, w, FakeTensor((4,), "int32"))
    assert seen["grouped"] == ("masked_matmul", None)

    class Launcher:
        def launch(self, tensors, expected_m=None):
            seen["launch"] = expected_m
    monkeypatch.delenv("GGEMM_CATALOG", raising=False)
    monkeypatch.setitem(ops._kernels, (("key",), None, None), Launcher())
    plan = ops._Plan(("key",), {"x": x}, (4, 64, 256), "bf16", False)
    out = object()
    assert ops._run(plan, out, True, None, 20) is out
    assert seen["launch"] == 20
    ops._run(plan, out, True, None)
    assert seen["launch"] is None


def test_deep_gemm_masked_passes_expected_m(monkeypatch) -> None:
    from ggemm.compat import deep_gemm
    seen = []
    monkeypatch.setattr(ops, "masked_matmul",
                        lambda *args, **kwargs: seen.append(
                            kwargs.get("expected_m")))
    a, b, d = (FakeTensor((4, 64, 512)), FakeTensor((4, 256, 512)),
               FakeTensor((4, 64, 256)))
    counts = FakeTensor((4,), "int32")
    deep_gemm.m_grouped_bf16_gemm_nt_masked(a, b, d, counts, 20)
    deep_gemm.m_grouped_bf16_gemm_nt_masked(a, b, d, counts, 0)
    assert seen == [20, None]


# -- Swap-AB tile configs -----------------------------------------------------

def test_tile_config_swap_ab_is_written_into_the_ir() -> None:
    config = TileConfig(block_m=24, block_n=128, swap_ab=True)
    assert "block_m = 24, block_n = 128" in config.mlir()
    assert "swap_ab = true" in config.mlir()
    assert "swap_ab" not in TileConfig().mlir()
    assert TileConfig.from_any({"block_m": 8, "block_n": 64,
                                "consumer_warpgroups": 1,
                                "swap_ab": True}).swap_ab


def test_tile_config_swizzle_is_written_into_the_ir() -> None:
    config = TileConfig(block_n=256, raster="along_m", swizzle=8)
    assert config.mlir().endswith("raster = along_m, swizzle = 8>")
    assert "swizzle" not in TileConfig().mlir()
    assert TileConfig.from_any({"swizzle": 4}).swizzle == 4
    with pytest.raises(SpecError, match="config.swizzle must be at most 64"):
        TileConfig(swizzle=65)
    with pytest.raises(SpecError, match="config.swizzle"):
        TileConfig(swizzle=0)
    banded = TileConfig(block_n=256, raster="along_m", swizzle=4,
                        swizzle_min_tiles=48)
    assert banded.mlir().endswith("swizzle = 4, swizzle_min_tiles = 48>")
    with pytest.raises(SpecError, match="needs swizzle > 1"):
        TileConfig(swizzle_min_tiles=48)
    with pytest.raises(SpecError, match="swizzle_min_tiles must be"):
        TileConfig(swizzle=4, swizzle_min_tiles=-1)


def test_tile_config_promote_pairs_is_written_into_the_ir() -> None:
    config = TileConfig(block_m=16, block_n=64, block_k=128,
                        consumer_warpgroups=1, swap_ab=True,
                        promote_pairs=True)
    assert config.mlir().endswith("raster = along_n, promote_pairs = true>")
    assert "promote_pairs" not in TileConfig().mlir()
    assert TileConfig.from_any({"promote_pairs": True}).promote_pairs
    with pytest.raises(SpecError, match="config.promote_pairs must be a bool"):
        TileConfig(promote_pairs=1)
    with pytest.raises(SpecError, match="does not go with pingpong"):
        TileConfig(block_m=64, pingpong=True, promote_pairs=True)


def test_tile_config_split_k_is_written_into_the_ir() -> None:
    config = TileConfig(block_m=8, block_n=64, block_k=128,
                        consumer_warpgroups=1, swap_ab=True, split_k=3)
    assert config.mlir().endswith("raster = along_n, split_k = 3>")
    assert "split_k" not in TileConfig().mlir()
    assert TileConfig.from_any({"split_k": 8}).split_k == 8
    for bad in (0, 9, True, 2.0):
        with pytest.raises(SpecError, match="config.split_k must be an "
                           "integer in \\[1, 8\\]"):
            TileConfig(split_k=bad)
    with pytest.raises(SpecError, match="does not go with pingpong"):
        TileConfig(block_m=64, pingpong=True, split_k=2)


def test_tile_config_split_k_tail_is_written_into_the_ir() -> None:
    config = TileConfig(block_m=192, block_n=128, block_k=128,
                        consumer_warpgroups=3, split_k=2, split_k_tail=True)
    assert config.mlir().endswith("split_k = 2, split_k_tail = true>")
    assert "split_k_tail" not in TileConfig(split_k=2).mlir()
    with pytest.raises(SpecError, match="split_k_tail needs split_k > 1"):
        TileConfig(split_k_tail=True)
    with pytest.raises(SpecError, match="config.split_k_tail must be a bool"):
        TileConfig(split_k=2, split_k_tail=1)


def test_tile_config_pingpong_is_written_into_the_ir() -> None:
    config = TileConfig(block_m=64, block_n=256, pingpong=True)
    assert config.mlir().endswith("raster = along_n, pingpong = true>")
    assert "pingpong" not in TileConfig().mlir()
    assert TileConfig.from_any({"block_m": 64, "pingpong": True}).pingpong
    with pytest.raises(SpecError, match="config.pingpong must be a bool"):
        TileConfig(pingpong=1)


def test_tile_config_swap_ab_must_be_a_bool() -> None:
    with pytest.raises(SpecError, match="config.swap_ab must be a bool"):
        TileConfig(swap_ab="yes")
