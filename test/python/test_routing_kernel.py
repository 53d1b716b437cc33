"""The routing kernel of ``ggemm.sort_by_expert`` on a CPU: the op's IR,
its cache and catalog keys, catalog specs and look-ups.

Tests that compile the op are skipped while the compiler lacks
``ggemm.sort_by_expert`` (it is added on another branch); they run, and
must pass, once it has it.
"""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any, Dict

import pytest

import ggemm
from ggemm import cache, catalog
from ggemm.compiler import CompilerError, load_compiler, run_pipeline
from ggemm.problem import Problem, RoutingProblem, SpecError, problem_from_spec


# -- the op's IR and keys ------------------------------------------------------

def test_ir_of_the_op() -> None:
    problem = RoutingProblem(num_experts=256, topk=8)
    name = problem.function_name
    assert name.startswith("ggemm_sort_by_expert_i32_")
    assert problem.mlir() == (
        f"func.func @{name}(%topk_ids: memref<?xi32>, %seg_indptr: "
        f"memref<257xi32>, %row_indices: memref<?xi32>, %pair_indices: "
        f"memref<?xi32>) {{\n"
        f"  ggemm.sort_by_expert ins(%topk_ids : memref<?xi32>)\n"
        f"      outs(%seg_indptr, %row_indices, %pair_indices : "
        f"memref<257xi32>, memref<?xi32>, memref<?xi32>) {{topk = 8 : i64}}\n"
        f"  return\n}}\n")
    wide = RoutingProblem(num_experts=128, topk=6, index_dtype="i64")
    text = wide.mlir()
    assert f"@{wide.function_name}(%topk_ids: memref<?xi64>, " \
           f"%seg_indptr: memref<129xi32>," in text
    assert "ins(%topk_ids : memref<?xi64>)" in text
    assert ": memref<129xi32>, memref<?xi32>, memref<?xi32>) " \
           "{topk = 6 : i64}" in text


def test_keys_and_names() -> None:
    problem = RoutingProblem(256, 8)
    assert problem.key == ('{"index_dtype":"i32","num_experts":256,'
                           '"op":"sort_by_expert","topk":8}')
    assert problem.kernel_name == problem.function_name + "_kernel"
    assert problem.spec() == {"op": "sort_by_expert", "num_experts": 256,
                              "topk": 8, "index_dtype": "i32"}
    # Keyed by (E, topk, index dtype): each changes the key and the name.
    others = [RoutingProblem(128, 8), RoutingProblem(256, 6),
              RoutingProblem(256, 8, "i64")]
    assert len({p.key for p in [problem] + others}) == 4
    assert len({p.kernel_name for p in [problem] + others}) == 4
    assert RoutingProblem(256, 8, "i64").function_name.startswith(
        "ggemm_sort_by_expert_i64_")
    # Equal problems are one cache entry; the default dtype is i32.
    assert RoutingProblem.from_spec({"op": "sort_by_expert",
                                     "num_experts": 256, "topk": 8}) \
        == problem
    assert hash(RoutingProblem(256, 8)) == hash(problem)
    assert cache.problem_from_key(problem.key) == problem
    assert problem_from_spec(json.loads(others[2].key)) == others[2]


def test_gemm_names_are_unchanged() -> None:
    """The names shared with RoutingProblem did not move the GEMM kernels'
    (catalogs built before index them by these)."""
    p = Problem("segment_matmul", "bf16", n=2048, k=7168, groups=256,
                row_indices=True, activation="swiglu")
    assert p.kernel_name == "ggemm_segment_matmul_bf16_c6b933e90141_kernel"
    q = Problem("segment_matmul_k", "bf16", n=384, k=256, groups=8)
    assert q.kernel_name == "ggemm_segment_matmul_k_bf16_13c153e0d27a_kernel"
    assert cache.problem_from_key(p.key) == p


@pytest.mark.parametrize("line, message", [
    ({"op": "sort_by_expert", "num_experts": 256},
     "missing fields topk"),
    ({"op": "sort_by_expert", "num_experts": 256, "topk": 8, "n": 4},
     "unknown fields n"),
    ({"op": "sort_by_expert", "num_experts": 0, "topk": 8},
     "num_experts must be a positive integer; got 0"),
    ({"op": "sort_by_expert", "num_experts": 2 ** 31, "topk": 8},
     r"num_experts must be at most 2\^31 - 2; got 2147483648"),
    ({"op": "sort_by_expert", "num_experts": 8, "topk": True},
     "topk must be a positive integer; got True"),
    ({"op": "sort_by_expert", "num_experts": 8, "topk": 2,
      "index_dtype": "i16"},
     "index_dtype must be one of i32, i64; got 'i16'"),
    ({"op": "route", "num_experts": 8, "topk": 2},
     "op must be one of segment_matmul, masked_matmul, batched_matmul, "
     "segment_matmul_k, sort_by_expert; got 'route'"),
])
def test_spec_errors(line: Dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError, match=message):
        problem_from_spec(line)


# -- catalogs ------------------------------------------------------------------

def test_catalog_spec_lists_routing_kernels() -> None:
    problems = catalog.expand_spec({"kernels": [
        {"op": "segment_matmul", "dtype": "bf16", "n": 64, "k": 64,
         "groups": 8},
        {"op": "sort_by_expert", "num_experts": [256, 128], "topk": 8,
         "index_dtype": ["i32", "i64"]},
        # a duplicate of the first routing kernel: listed once
        {"op": "sort_by_expert", "num_experts": 256, "topk": 8},
    ]})
    assert problems == [
        Problem("segment_matmul", "bf16", n=64, k=64, groups=8),
        RoutingProblem(256, 8, "i32"), RoutingProblem(256, 8, "i64"),
        RoutingProblem(128, 8, "i32"), RoutingProblem(128, 8, "i64")]
    with pytest.raises(SpecError, match=r"kernels\[1\]: missing fields "
                       r"num_experts"):
        catalog.expand_spec({"kernels": [
            {"op": "sort_by_expert", "num_experts": 8, "topk": 2},
            {"op": "sort_by_expert", "topk": 2}]})


ROUTING_MANIFEST: Dict[str, Any] = {
    "format": "ggemm-bundle", "version": 1, "arch": "sm_90a",
    "entry": "route_kernel", "ptx": "route_kernel.ptx",
    "block": [1024, 1, 1], "cluster": [1, 1, 1], "dynamic_smem": 34056,
    "grid": {"policy": "single"},
    "problem": {"op": "sort_by_expert", "num_experts": 256, "topk": 8,
                "index_dtype": "i32"},
    "params": [
        {"kind": "pointer", "name": "topk_ids", "tensor": "topk_ids"},
        {"kind": "pointer", "name": "seg_indptr", "tensor": "seg_indptr"},
        {"kind": "pointer", "name": "row_indices", "tensor": "row_indices"},
        {"kind": "pointer", "name": "pair_indices",
         "tensor": "pair_indices"},
        {"kind": "scalar", "name": "num_pairs", "dtype": "i64",
         "value": "num_pairs"}]}


def write_catalog(directory: Path, problem: RoutingProblem) -> Path:
    """A catalog holding `problem`'s kernel, written by hand as
    build_catalog would write it (the compiler cannot build it yet)."""
    directory.mkdir(parents=True, exist_ok=True)
    manifest = json.loads(json.dumps(ROUTING_MANIFEST))
    manifest["entry"] = problem.kernel_name
    manifest["ptx"] = f"{problem.kernel_name}.ptx"
    manifest["problem"].update(num_experts=problem.num_experts,
                               topk=problem.topk,
                               index_dtype=problem.index_dtype)
    (directory / f"{problem.kernel_name}.ptx").write_text("fake ptx")
    path = directory / f"{problem.kernel_name}.json"
    path.write_text(json.dumps(manifest, indent=1))
    (directory / cache.CATALOG_INDEX).write_text(json.dumps({
        "format": cache.CATALOG_FORMAT, "version": 1,
        "pipeline": "ggemm-to-ptx{chip=sm_90a format=isa}",
        "kernels": {problem.key: path.name}}))
    return path


def test_catalog_lookup_of_routing_kernels(tmp_path: Path) -> None:
    problem = RoutingProblem(256, 8)
    path = write_catalog(tmp_path / "cat", problem)
    cache.clear_memory_cache()
    assert cache.manifest_for(problem, catalog=tmp_path / "cat") == path
    # A missing entry names the spec line to add.
    missing = RoutingProblem(256, 8, "i64")
    with pytest.raises(cache.CatalogMissError) as error:
        cache.manifest_for(missing, catalog=tmp_path / "cat")
    line = ('{"op": "sort_by_expert", "num_experts": 256, "topk": 8, '
            '"index_dtype": "i64"}')
    assert f"no kernel for {line} in the catalog" in str(error.value)
    assert "add this line to the \"kernels\" list" in str(error.value)
    assert error.value.spec_line == missing.spec()
    # `python -m ggemm.catalog list` prints the routing line.
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert catalog.main(["list", str(tmp_path / "cat")]) == 0
    assert json.loads(out.getvalue()) == problem.spec()


# -- compiling the op (once the compiler has it) -------------------------------

def _compiler_with_the_op() -> None:
    """Skips unless the compiler library is built and parses the op."""
    try:
        load_compiler()
    except CompilerError as error:
        pytest.skip(f"compiler library not built: {error}")
    try:
        # Parsing verifies the op; cse changes nothing.
        run_pipeline(RoutingProblem(4, 2).mlir(), "cse")
    except CompilerError as error:
        text = str(error)
        if "ggemm.sort_by_expert" in text and (
                "is unknown" in text or "unregistered operation" in text):
            pytest.skip("the compiler has no ggemm.sort_by_expert yet")
        raise


@pytest.mark.parametrize("problem", [RoutingProblem(256, 8),
                                     RoutingProblem(128, 8, "i64")])
def test_compiled_bundle_is_what_the_runtime_reads(
        tmp_path: Path, problem: RoutingProblem) -> None:
    _compiler_with_the_op()
    from ggemm.compiler import compile_to_cache, pipeline_text
    entry = compile_to_cache(problem.mlir(), pipeline_text(),
                             tmp_path / "cache",
                             problem.function_name + ".mlir")
    path = entry / f"{problem.kernel_name}.json"
    manifest = json.loads(path.read_text())
    assert manifest["version"] == 1
    assert manifest["entry"] == problem.kernel_name
    assert manifest["problem"] == problem.spec()
    assert manifest["grid"] == {"policy": "single"}
    assert "tile" not in manifest and "variants" not in manifest
    assert [p["name"] for p in manifest["params"]] == [
        "topk_ids", "seg_indptr", "row_indices", "pair_indices", "num_pairs"]
    ptx = (entry / manifest["ptx"]).read_text()
    assert f".entry {problem.kernel_name}(" in ptx
    try:
        ggemm.load_library()
    except ggemm.RuntimeLibraryNotFound:
        return
    with ggemm.Kernel(path) as kernel:  # the runtime accepts the manifest
        assert kernel.num_variants == 1


def test_catalog_build_of_routing_kernels(tmp_path: Path) -> None:
    _compiler_with_the_op()
    problems = catalog.expand_spec({"kernels": [
        {"op": "sort_by_expert", "num_experts": 8, "topk": 2,
         "index_dtype": ["i32", "i64"]}]})
    index = catalog.build_catalog(problems, tmp_path / "cat",
                                  binary_format="isa",
                                  cache_dir=tmp_path / "cache")
    assert set(index) == {p.key for p in problems}
    cache.clear_memory_cache()
    for problem in problems:
        path = cache.manifest_for(problem, catalog=tmp_path / "cat")
        assert path.name == f"{problem.kernel_name}.json"
        assert json.loads(path.read_text())["problem"] == problem.spec()
