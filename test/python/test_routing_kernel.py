"""The routing kernel of ``ggemm.sort_by_expert`` on a CPU: the op's IR,
its cache and catalog keys, catalog specs and look-ups, the ``method=``
switch (with a stand-in for torch and for the kernel), and the whole path
to a launch through the runtime and the fake CUDA driver of runtime/test.

Tests that compile the op are skipped while the compiler lacks
``ggemm.sort_by_expert`` (it is added on another branch); they run, and
must pass, once it has it.
"""
from __future__ import annotations

import contextlib
import ctypes
import io
import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import pytest

import ggemm
from ggemm import cache, catalog, ops, routing
from ggemm.compiler import CompilerError, load_compiler, run_pipeline
from ggemm.problem import Problem, RoutingProblem, SpecError, problem_from_spec

numpy = pytest.importorskip("numpy")

REPO_ROOT = Path(__file__).resolve().parents[2]


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
     "segment_matmul_k, sort_by_expert, quantize; got 'route'"),
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


def test_sort_by_expert_names_the_missing_catalog_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ops' path: a CUDA tensor, a catalog without the kernel."""
    torch = StandInTorch()
    monkeypatch.setattr(ops, "torch", torch)
    write_catalog(tmp_path / "cat", RoutingProblem(128, 8))
    cache.clear_memory_cache()
    with pytest.raises(cache.CatalogMissError,
                       match='"op": "sort_by_expert", "num_experts": 256, '
                             '"topk": 8, "index_dtype": "i32"'):
        ggemm.sort_by_expert(DeviceIds(0x10000, (16, 8)), 256,
                             catalog=tmp_path / "cat")
    assert torch.allocations == []  # nothing allocated before the kernel


# -- the method switch ---------------------------------------------------------

class FakeDtype:
    """Prints like a torch dtype."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return f"torch.{self.name}"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, FakeDtype) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


class DeviceIds:
    """The part of a torch tensor that sort_by_expert and the runtime's
    bindings read: shape, dtype, device, data_ptr(), stride(),
    reshape(-1), contiguous()."""

    def __init__(self, address: int, shape: Sequence[int],
                 dtype: str = "int32", is_cuda: bool = True) -> None:
        self.address = address
        self.shape = tuple(shape)
        self.dtype = FakeDtype(dtype)
        self.is_cuda = is_cuda
        self.device = "cuda:0" if is_cuda else "cpu"

    def data_ptr(self) -> int:
        return self.address

    def stride(self) -> tuple:
        strides, step = [], 1
        for extent in reversed(self.shape):
            strides.insert(0, step)
            step *= extent
        return tuple(strides)

    def reshape(self, *shape: int) -> "DeviceIds":
        assert shape == (-1,)
        count = 1
        for extent in self.shape:
            count *= extent
        return DeviceIds(self.address, (count,), self.dtype.name,
                         self.is_cuda)

    def contiguous(self) -> "DeviceIds":
        return self

    def clamp(self, low: int, high: int) -> "DeviceIds":
        return self


class TorchPath(Exception):
    """Raised by the stand-in where torch's argsort path begins."""


class StandInTorch(types.SimpleNamespace):
    """torch as the routing needs it: empty() hands out fake device
    tensors at distinct aligned addresses; argsort marks torch's path."""

    int32 = FakeDtype("int32")
    int64 = FakeDtype("int64")
    dtype = FakeDtype

    def __init__(self, compiling: bool = False) -> None:
        super().__init__()
        self.compiler = types.SimpleNamespace(is_compiling=lambda: compiling)
        self.allocations: List[tuple] = []
        self.next_address = 0x1_0000_0000

    def empty(self, *shape: int, dtype: FakeDtype, device: str) -> DeviceIds:
        self.allocations.append((shape, dtype, device))
        tensor = DeviceIds(self.next_address, shape, dtype.name,
                           device.startswith("cuda"))
        self.next_address += 0x100000
        return tensor

    def argsort(self, *args: Any, **kwargs: Any) -> Any:
        raise TorchPath()


class RecordingKernel:
    def __init__(self) -> None:
        self.launches: List[Dict[str, Any]] = []

    def launch(self, tensors: Dict[str, Any], stream: Any = None,
               expected_m: Optional[int] = None) -> None:
        assert stream is None and expected_m is None  # the current stream
        self.launches.append(dict(tensors))


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch):
    """(torch, kernel, kernel_for's calls) with torch and kernel_for
    replaced."""
    torch = StandInTorch()
    kernel = RecordingKernel()
    calls: List[tuple] = []

    def kernel_for(problem: Any, catalog: Any = None) -> RecordingKernel:
        calls.append((problem, catalog))
        return kernel

    monkeypatch.setattr(ops, "torch", torch)
    monkeypatch.setattr(routing, "kernel_for", kernel_for)
    return torch, kernel, calls


@pytest.mark.parametrize("method", ["auto", "kernel"])
def test_cuda_tensors_take_the_kernel(stand_ins, method: str) -> None:
    torch, kernel, calls = stand_ins
    ids = DeviceIds(0x20000, (16, 8))
    result = ggemm.sort_by_expert(ids, 256, method=method, catalog="cat")
    assert calls == [(RoutingProblem(256, 8, "i32"), "cat")]
    # Three int32 outputs on the ids' device, then one launch of them.
    assert torch.allocations == [((257,), torch.int32, "cuda:0"),
                                 ((128,), torch.int32, "cuda:0"),
                                 ((128,), torch.int32, "cuda:0")]
    (launch,) = kernel.launches
    assert list(launch) == ["topk_ids", "seg_indptr", "row_indices",
                            "pair_indices"]
    assert launch["topk_ids"].shape == (128,)
    assert launch["topk_ids"].address == 0x20000
    assert (launch["seg_indptr"], launch["row_indices"],
            launch["pair_indices"]) == tuple(result)
    assert isinstance(result, ggemm.Routing)
    assert result.seg_indptr.shape == (257,)


def test_kernel_keys_follow_the_ids(stand_ins) -> None:
    _, _, calls = stand_ins
    ggemm.sort_by_expert(DeviceIds(0x20000, (4, 6), "int64"), 128)
    ggemm.sort_by_expert(DeviceIds(0x20000, (24,), "int32"), 128, topk=6)
    assert [problem for problem, _ in calls] == [
        RoutingProblem(128, 6, "i64"), RoutingProblem(128, 6, "i32")]


def test_no_pairs_still_launch(stand_ins) -> None:
    torch, kernel, _ = stand_ins
    result = ggemm.sort_by_expert(DeviceIds(0, (0, 8)), 256)
    assert result.row_indices.shape == (0,)
    assert result.seg_indptr.shape == (257,)
    assert len(kernel.launches) == 1


@pytest.mark.parametrize("ids, experts, method", [
    (DeviceIds(0x20000, (4, 2)), 8, "torch"),               # asked for
    (DeviceIds(0x20000, (4, 2), is_cuda=False), 8, "auto"),  # CPU tensor
    (DeviceIds(0x20000, (4, 2), "int16"), 8, "auto"),      # not i32/i64
    (DeviceIds(0x20000, (4, 2)), 0, "auto"),                # no experts
    # More pairs than the one-CTA kernel is measured faster for.
    (DeviceIds(0x20000, (routing.KERNEL_MAX_PAIRS // 8 + 1, 8)), 8, "auto"),
])
def test_torch_path(stand_ins, ids: DeviceIds, experts: int,
                    method: str) -> None:
    torch, kernel, calls = stand_ins
    with pytest.raises(TorchPath):
        ggemm.sort_by_expert(ids, experts, method=method)
    assert calls == [] and kernel.launches == [] and torch.allocations == []


def test_torch_compile_takes_the_torch_path(
        stand_ins, monkeypatch: pytest.MonkeyPatch) -> None:
    """torch.compile cannot trace the kernel's ctypes launch."""
    _, _, calls = stand_ins
    monkeypatch.setattr(ops, "torch", StandInTorch(compiling=True))
    with pytest.raises(TorchPath):
        ggemm.sort_by_expert(DeviceIds(0x20000, (4, 2)), 8)
    assert calls == []


def test_numpy_arrays_take_the_host_path(stand_ins) -> None:
    _, _, calls = stand_ins
    result = ggemm.sort_by_expert(numpy.array([[1, 0], [1, 2]]), 3)
    assert result.seg_indptr.tolist() == [0, 1, 3, 4]
    assert calls == []


@pytest.mark.parametrize("args, kwargs, message", [
    ((DeviceIds(0x20000, (4, 2)), 8), {"method": "cuda"},
     "method: expected one of 'auto', 'kernel', 'torch', got 'cuda'"),
    ((numpy.zeros((4, 2), numpy.int32), 8), {"method": "kernel"},
     "topk_ids: method='kernel' needs a CUDA tensor, got a NumPy array"),
    ((numpy.zeros((4, 2), numpy.int32), 8), {"method": "torch"},
     r"topk_ids: method='torch' needs a torch tensor, got a NumPy array "
     r"\(method='auto' sorts it with NumPy\)"),
    ((DeviceIds(0x20000, (4, 2), is_cuda=False), 8), {"method": "kernel"},
     "topk_ids: method='kernel' needs a CUDA tensor, got device cpu"),
    ((DeviceIds(0x20000, (4, 2), "int16"), 8), {"method": "kernel"},
     "topk_ids: method='kernel' takes int32 or int64 ids, got torch.int16"),
    ((DeviceIds(0x20000, (4, 2)), 0), {"method": "kernel"},
     "num_experts: method='kernel' needs at least 1 expert, got 0"),
    # The checks of every method come first.
    ((DeviceIds(0x20000, (7,)), 8), {"method": "kernel", "topk": 2},
     "topk_ids: 7 ids are not a whole number of tokens of topk = 2"),
])
def test_method_argument_errors(stand_ins, args: tuple,
                                kwargs: Dict[str, Any], message: str) -> None:
    _, _, calls = stand_ins
    with pytest.raises(ops.ArgumentError, match=message):
        ggemm.sort_by_expert(*args, **kwargs)
    assert calls == []


# -- to the launch: catalog, runtime, fake driver ------------------------------

def _fake_driver() -> Optional[Path]:
    """The fake libcuda of runtime/test: GGEMM_FAKE_CUDA_DRIVER (CTest sets
    it), else in $GGEMM_BUILD_DIR's runtime tests."""
    named = os.environ.get("GGEMM_FAKE_CUDA_DRIVER")
    if named:
        return Path(named)
    build = os.environ.get("GGEMM_BUILD_DIR")
    if build:
        path = Path(build) / "runtime" / "test" / "libggemm_fake_cuda.so"
        if path.is_file():
            return path
    return None


class FakeLaunchRecord(ctypes.Structure):
    """The leading fields of FakeLaunchRecord (runtime/test)."""

    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("cluster", ctypes.c_uint * 3),
                ("shared_mem_bytes", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("function", ctypes.c_void_p),
                ("num_params", ctypes.c_int),
                ("param_sizes", ctypes.c_size_t * 64),
                ("param_bytes", (ctypes.c_ubyte * 128) * 64)]


class FakeDriverConfig(ctypes.Structure):
    """The leading fields of FakeDriverConfig (runtime/test)."""

    _fields_ = [("has_context", ctypes.c_bool),
                ("context_id", ctypes.c_ulonglong),
                ("device", ctypes.c_int), ("cc_major", ctypes.c_int),
                ("cc_minor", ctypes.c_int), ("sm_count", ctypes.c_int),
                ("max_smem_optin", ctypes.c_int),
                ("supports_param_info", ctypes.c_bool),
                ("num_kernel_params", ctypes.c_int),
                ("kernel_param_sizes", ctypes.c_size_t * 64)]


def open_fake_driver(num_params: int) -> Any:
    """The fake driver of $GGEMM_CUDA_DRIVER (in a launch script's
    process), told that the kernel takes `num_params` 8-byte parameters,
    which it checks at module load and records at launch."""
    fake = ctypes.CDLL(os.environ["GGEMM_CUDA_DRIVER"])
    fake.ggemmFakeLastLaunch.restype = ctypes.POINTER(FakeLaunchRecord)
    fake.ggemmFakeConfig.restype = ctypes.POINTER(FakeDriverConfig)
    config = fake.ggemmFakeConfig().contents
    config.supports_param_info = True
    config.num_kernel_params = num_params
    for i in range(num_params):
        config.kernel_param_sizes[i] = 8
    return fake


def skip_without_fake_driver() -> Path:
    """The fake driver's path; skips without it or the runtime library."""
    driver = _fake_driver()
    if driver is None:
        pytest.skip("no fake CUDA driver (set GGEMM_BUILD_DIR to a build "
                    "with the runtime's tests)")
    try:
        ggemm.load_library()
    except ggemm.RuntimeLibraryNotFound as error:
        pytest.skip(str(error))
    return driver


def run_with_fake_driver(script: str, catalog_dir: Path) -> Any:
    """Runs `script` (indented Python that prints JSON last) in a fresh
    interpreter on the fake driver with `catalog_dir` as GGEMM_CATALOG, and
    returns its JSON."""
    env = dict(os.environ, GGEMM_CUDA_DRIVER=str(_fake_driver()),
               GGEMM_CATALOG=str(catalog_dir))
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT / "python"), str(Path(__file__).resolve().parent)]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], env=env,
        capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


LAUNCH_SCRIPT = """
    import ctypes, json, os, sys
    import ggemm
    from ggemm import ops
    from test_routing_kernel import DeviceIds, StandInTorch, open_fake_driver

    fake = open_fake_driver(5)
    ops.torch = StandInTorch()
    out = {"launches": []}
    for tokens in (16, 0):
        r = ggemm.sort_by_expert(DeviceIds(0x1_0080_0000 if tokens else 0,
                                           (tokens, 8)), 256)
        record = fake.ggemmFakeLastLaunch().contents
        params = [int.from_bytes(bytes(record.param_bytes[i][:8]), "little")
                  for i in range(record.num_params)]
        out["launches"].append({
            "count": fake.ggemmFakeLaunchCount(),
            "grid": list(record.grid), "block": list(record.block),
            "smem": record.shared_mem_bytes, "params": params,
            "outputs": [t.data_ptr() for t in r]})
    try:
        ggemm.sort_by_expert(DeviceIds(0x1_0080_0000, (16, 8), "int64"), 256)
    except ggemm.CatalogMissError as error:
        out["miss"] = error.spec_line
    print(json.dumps(out))
"""


def test_launch_through_the_catalog_and_runtime(tmp_path: Path) -> None:
    """sort_by_expert on a (stand-in) CUDA tensor: catalog look-up, bundle
    load, the runtime's checks and one launch of one CTA with the five
    parameters, on the fake driver."""
    skip_without_fake_driver()
    write_catalog(tmp_path / "cat", RoutingProblem(256, 8))
    out = run_with_fake_driver(LAUNCH_SCRIPT, tmp_path / "cat")
    first, empty = out["launches"]
    assert first["count"] == 1 and empty["count"] == 2
    for launch in (first, empty):
        assert launch["grid"] == [1, 1, 1]
        assert launch["block"] == [1024, 1, 1]
        assert launch["smem"] == 34056
    # topk_ids, seg_indptr, row_indices, pair_indices, num_pairs.
    assert first["params"] == [0x1_0080_0000] + first["outputs"] + [128]
    # No pairs: null ids, the outputs as allocated, num_pairs 0.
    assert empty["params"] == [0] + empty["outputs"] + [0]
    assert out["miss"] == RoutingProblem(256, 8, "i64").spec()


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
