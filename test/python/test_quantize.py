"""``ggemm.quantize`` on a CPU: the op's IR, keys and catalog lines, the
argument checks, the NumPy reference (against the expected bytes of the CPU
execution tests' generator, an independent f32 emulation), and the compiled
kernel's bundle as the runtime reads it (grid, parameters) when the
compiler and the runtime are built.
"""
from __future__ import annotations

import importlib.util
import json
import random
import struct
import sys
from pathlib import Path
from typing import Any

import pytest

import ggemm
from ggemm import catalog, quantization as quantize_module
from ggemm.compiler import CompilerError, load_compiler
from ggemm.problem import QuantizeProblem, SpecError, problem_from_spec
from test_routing_kernel import FakeDtype

numpy = pytest.importorskip("numpy")

REPO_ROOT = Path(__file__).resolve().parents[2]


def _gen_tests() -> Any:
    """test/Execution/gen_tests.py, whose QuantizeCase computes the expected
    bytes of the CPU execution tests."""
    path = REPO_ROOT / "test" / "Execution" / "gen_tests.py"
    spec = importlib.util.spec_from_file_location("gen_tests", path)
    module = importlib.util.module_from_spec(spec)
    # Its dataclasses look their module up by name.
    sys.modules.setdefault("gen_tests", module)
    spec.loader.exec_module(module)
    return module


# -- the op's IR and keys ------------------------------------------------------

def test_ir_and_keys() -> None:
    p = QuantizeProblem("bf16", "1x128")
    assert p.spec() == {"op": "quantize", "x_dtype": "bf16",
                        "scale_block": "1x128", "rank": 2}
    assert p.function_name.startswith("ggemm_quantize_bf16_2d_")
    assert p.mlir() == (
        f"func.func @{p.function_name}(%x: memref<?x?xbf16>, "
        f"%q: memref<?x?xf8E4M3FN>, %scale: memref<?x?xf32, "
        f"strided<[?, ?], offset: ?>>) {{\n"
        f"  ggemm.quantize ins(%x : memref<?x?xbf16>)\n"
        f"      outs(%q, %scale : memref<?x?xf8E4M3FN>, memref<?x?xf32, "
        f"strided<[?, ?], offset: ?>>)\n  return\n}}\n")
    w = QuantizeProblem("f16", "128x128", rank=3)
    assert "{scale_block = #ggemm.scale_block<128x128>}" in w.mlir()
    assert "memref<?x?x?xf16>" in w.mlir()
    keys = {QuantizeProblem(d, b, r).key for d in ("bf16", "f16")
            for b in ("1x128", "128x128") for r in (2, 3)}
    assert len(keys) == 8
    assert problem_from_spec({"op": "quantize", "x_dtype": "f16",
                              "scale_block": "128x128", "rank": 3}) == w


@pytest.mark.parametrize("line, message", [
    ({"op": "quantize", "x_dtype": "bf16"}, "missing fields scale_block"),
    ({"op": "quantize", "x_dtype": "f32", "scale_block": "1x128"},
     "x_dtype must be one of bf16, f16; got 'f32'"),
    ({"op": "quantize", "x_dtype": "bf16", "scale_block": "1x64"},
     "scale_block must be one of 1x128, 128x128; got '1x64'"),
    ({"op": "quantize", "x_dtype": "bf16", "scale_block": "1x128",
      "rank": 4}, "rank must be 2 or 3; got 4"),
    ({"op": "quantize", "x_dtype": "bf16", "scale_block": "1x128", "k": 1},
     "unknown fields k"),
])
def test_spec_errors(line: dict, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        problem_from_spec(line)


def test_catalog_lines() -> None:
    problems = catalog.expand_spec({"kernels": [
        {"op": "quantize", "x_dtype": "bf16",
         "scale_block": ["1x128", "128x128"]},
        {"op": "quantize", "x_dtype": "bf16", "scale_block": "128x128",
         "rank": 3}]})
    assert problems == [QuantizeProblem("bf16", "1x128"),
                        QuantizeProblem("bf16", "128x128"),
                        QuantizeProblem("bf16", "128x128", 3)]


# -- arguments -----------------------------------------------------------------

@pytest.mark.parametrize("shape, kwargs, message", [
    ((4, 128), {"block": (1, 64)},
     r"block: expected \(1, 128\) or \(128, 128\), got \(1, 64\)"),
    ((4, 128), {"block": 128}, "block: expected"),
    ((4, 128), {"method": "cuda"}, "method: expected one of 'auto', "
     "'kernel', 'torch', got 'cuda'"),
    ((2, 4, 128), {}, r"x: expected \[M, K\] for block \(1, 128\), got "
     r"shape \[2, 4, 128\]"),
    ((128,), {"block": (128, 128)}, r"x: expected \[N, K\] or \[G, N, K\]"),
    ((4, 200), {}, "x: K = 200 is not a multiple of 128 "
     r"\(one scale per 128 columns\); pad K with zeros"),
    ((4, 128), {"method": "kernel"},
     "x: method='kernel' needs a CUDA tensor, got a NumPy array"),
    ((4, 128), {"method": "torch"}, "x: method='torch' needs a torch "
     "tensor"),
])
def test_argument_errors(shape: tuple, kwargs: dict, message: str) -> None:
    with pytest.raises(ggemm.ArgumentError, match=message):
        ggemm.quantize(numpy.zeros(shape, dtype=numpy.float32), **kwargs)


def test_integer_input_is_refused() -> None:
    with pytest.raises(ggemm.ArgumentError,
                       match="x: expected float16 or float32, got int32"):
        ggemm.quantize(numpy.zeros((1, 128), dtype=numpy.int32))


# -- the NumPy reference -------------------------------------------------------

def test_rounding_ties_to_even_and_saturates() -> None:
    bits = quantize_module._e4m3_bits
    values = numpy.array([0.0, -0.0, 1.0625, 1.1875, 2.0 ** -10,
                          3 * 2.0 ** -10, 448.0, 464.0, 1e6, -1e6,
                          float("nan")], dtype=numpy.float32)
    # 1.0625: between 1.0 (0x38) and 1.125 (0x39), even 0x38; 1.1875:
    # 0x3a; half the smallest subnormal: 0; 1.5 subnormal steps: 2 steps.
    assert bits(numpy, values).tolist() == [
        0x00, 0x80, 0x38, 0x3A, 0x00, 0x02, 0x7E, 0x7E, 0x7E, 0xFE, 0x7F]


def test_blocks_zero_floor_and_partial_rows() -> None:
    x = numpy.zeros((130, 256), dtype=numpy.float32)
    x[0, 0] = 3.0
    x[129, 200] = -7.0
    q, s = ggemm.quantize(x, block=(128, 128))
    rcp = numpy.float32(1 / 448)  # torch's amax / 448 on the GPU
    floor = numpy.float32(1e-4) * rcp
    assert s.shape == (2, 2) and s.dtype == numpy.float32
    assert s.tolist() == [[numpy.float32(3) * rcp, floor],
                          [floor, numpy.float32(7) * rcp]]
    assert q[0, 0] == 0x7E and q[129, 200] == 0xFE
    assert numpy.count_nonzero(q) == 2
    q1, s1 = ggemm.quantize(x[:3])
    assert s1.shape == (3, 2)
    assert s1[2].tolist() == [floor, floor]


@pytest.mark.parametrize("case", ["quantize_1x128_bf16",
                                  "quantize_128x128_f16_3d"])
def test_matches_the_execution_tests(case: str) -> None:
    """The CPU execution tests' expected bytes and scales (gen_tests.py's
    pure-Python f32 emulation) equal the NumPy reference's."""
    gen = _gen_tests()
    c = next(q for q in gen.QUANTIZE_CASES if q.name == case)
    x = numpy.array(c.x(), dtype=numpy.float32).reshape(c.shape)
    scales, codes = c.expected()
    q, s = ggemm.quantize(x, block=c.block)
    assert s.reshape(-1).tolist() == scales
    assert q.reshape(-1).tolist() == codes


def test_random_values_match_the_generator_encoder() -> None:
    gen = _gen_tests()
    rng = random.Random(3)
    values = [struct.unpack("<f", struct.pack("<f", rng.uniform(-500, 500)
                                              * 2.0 ** rng.randrange(-20, 1)))
              [0] for _ in range(4000)]
    got = quantize_module._e4m3_bits(numpy, numpy.array(values,
                                                        dtype=numpy.float32))
    assert got.tolist() == [gen.fp8_encode(v, "f8E4M3FN") for v in values]


# -- the compiled kernel -------------------------------------------------------

def _compile(problem: QuantizeProblem, tmp_path: Path) -> Path:
    try:
        load_compiler()
    except CompilerError as error:
        pytest.skip(f"compiler library not built: {error}")
    from ggemm.compiler import compile_to_cache, pipeline_text
    entry = compile_to_cache(problem.mlir(), pipeline_text(),
                             tmp_path / "cache",
                             problem.function_name + ".mlir")
    return entry / f"{problem.kernel_name}.json"


@pytest.mark.parametrize("problem, units, ctas", [
    (QuantizeProblem("bf16", "1x128"), 8, 4),
    (QuantizeProblem("f16", "128x128", 3), 1, 2)])
def test_compiled_bundle_is_what_the_runtime_reads(
        tmp_path: Path, problem: QuantizeProblem, units: int,
        ctas: int) -> None:
    path = _compile(problem, tmp_path)
    manifest = json.loads(path.read_text())
    assert manifest["entry"] == problem.kernel_name
    assert manifest["problem"] == {
        "op": "quantize", "x_dtype": problem.x_dtype, "q_dtype": "f8e4m3",
        "scale_block": problem.scale_block, "rank": problem.rank}
    assert manifest["grid"] == {"policy": "persistent", "ctas_per_sm": ctas,
                                "units_per_cta": units}
    assert [p["name"] for p in manifest["params"]] == [
        "x", "q", "scale", "num_groups", "rows", "k", "scale_stride_group",
        "scale_stride_row", "scale_stride_col"]
    ptx = (path.parent / manifest["ptx"]).read_text()
    assert f".entry {problem.kernel_name}(" in ptx
    assert "cvt.rn.satfinite.e4m3x2.f32" in ptx
    try:
        ggemm.load_library()
    except ggemm.RuntimeLibraryNotFound:
        return
    with ggemm.Kernel(path) as kernel:  # the runtime accepts the manifest
        assert kernel.num_variants == 1


# -- the kernel path, with stand-ins for torch and the kernel -----------------

class FakeTensor:
    """The part of a CUDA tensor quantize reads: shape, stride(), dtype,
    device, t(), row slices, contiguous(), numel()."""

    def __init__(self, shape: tuple, dtype: FakeDtype, strides: Any = None,
                 is_cuda: bool = True) -> None:
        self.shape = tuple(shape)
        self.dtype = dtype
        self.is_cuda = is_cuda
        self.device = "cuda:0" if is_cuda else "cpu"
        if strides is None:
            strides, step = [], 1
            for extent in reversed(self.shape):
                strides.insert(0, step)
                step *= extent
        self.strides = tuple(strides)

    def stride(self) -> tuple:
        return self.strides

    def t(self) -> "FakeTensor":
        return FakeTensor(self.shape[::-1], self.dtype, self.strides[::-1])

    def __getitem__(self, rows: slice) -> "FakeTensor":
        return FakeTensor((len(range(*rows.indices(self.shape[0]))),)
                          + self.shape[1:], self.dtype, self.strides)

    def contiguous(self) -> "FakeTensor":
        return self

    def numel(self) -> int:
        count = 1
        for extent in self.shape:
            count *= extent
        return count


class StandInTorch:
    dtype = FakeDtype
    float32 = FakeDtype("float32")
    float8_e4m3fn = FakeDtype("float8_e4m3fn")

    def __init__(self) -> None:
        self.compiler = type("C", (), {"is_compiling": staticmethod(
            lambda: False)})

    def empty(self, *shape: Any, dtype: FakeDtype, device: str) -> FakeTensor:
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        return FakeTensor(shape, dtype)


@pytest.mark.parametrize("shape, block, problem, scale_shape, strides", [
    ((100, 512), (1, 128), QuantizeProblem("bf16", "1x128"), (100, 4),
     (1, 100)),
    # M_pad rounds 7 rows up to 8: the GEMM wants the K-block stride a
    # multiple of 4.
    ((7, 256), (1, 128), QuantizeProblem("bf16", "1x128"), (7, 2), (1, 8)),
    ((2, 300, 256), (128, 128), QuantizeProblem("f16", "128x128", 3),
     (2, 3, 2), (6, 2, 1)),
])
def test_kernel_path_allocates_the_gemm_layouts(
        monkeypatch: pytest.MonkeyPatch, shape: tuple, block: tuple,
        problem: QuantizeProblem, scale_shape: tuple, strides: tuple) -> None:
    from ggemm import ops
    monkeypatch.setattr(ops, "torch", StandInTorch())
    launches, calls = [], []

    class Kernel:
        def launch(self, tensors: dict) -> None:
            launches.append(tensors)

    def kernel_for(p: Any, catalog: Any = None) -> Kernel:
        calls.append((p, catalog))
        return Kernel()

    monkeypatch.setattr(quantize_module, "kernel_for", kernel_for)
    dtype = FakeDtype("bfloat16" if problem.x_dtype == "bf16" else "float16")
    x = FakeTensor(shape, dtype)
    q, s = ggemm.quantize(x, block=block, catalog="cat")
    assert calls == [(problem, "cat")]
    assert launches == [{"x": x, "q": q, "scale": s}]
    assert q.shape == shape and q.dtype == FakeDtype("float8_e4m3fn")
    assert s.shape == scale_shape and s.stride() == strides
    # A CPU tensor cannot take the kernel.
    with pytest.raises(ggemm.ArgumentError, match="needs a CUDA tensor, got "
                       "device cpu"):
        ggemm.quantize(FakeTensor(shape, dtype, is_cuda=False), block=block,
                       method="kernel")


LAUNCH_SCRIPT = """
    import ctypes, json, os, sys
    import ggemm
    from ggemm import ops
    from test_quantize import FakeDtype, FakeTensor, StandInTorch
    from test_routing_kernel import open_fake_driver

    class Tensor(FakeTensor):
        next_address = 0x1_0000_0000

        def __init__(self, *args, address=None, **kwargs):
            super().__init__(*args, **kwargs)
            Tensor.next_address += 0x1000000
            self.address = address or Tensor.next_address

        def data_ptr(self):
            return self.address

        def t(self):
            return Tensor(self.shape[::-1], self.dtype, self.strides[::-1],
                          address=self.address)

        def __getitem__(self, rows):
            shape = (len(range(*rows.indices(self.shape[0]))),) \\
                + self.shape[1:]
            return Tensor(shape, self.dtype, self.strides,
                          address=self.address)

    class Torch(StandInTorch):
        def empty(self, *shape, dtype, device):
            if len(shape) == 1 and isinstance(shape[0], tuple):
                shape = shape[0]
            return Tensor(shape, dtype)

    fake = open_fake_driver(9)
    ops.torch = Torch()
    out = []
    for shape, block in (((100, 512), (1, 128)), ((2, 300, 256), (128, 128))):
        x = Tensor(shape, FakeDtype("bfloat16"))
        q, s = ggemm.quantize(x, block=block)
        record = fake.ggemmFakeLastLaunch().contents
        params = [int.from_bytes(bytes(record.param_bytes[i][:8]), "little")
                  for i in range(record.num_params)]
        out.append({"count": fake.ggemmFakeLaunchCount(),
                    "grid": record.grid[0], "smem": record.shared_mem_bytes,
                    "params": params,
                    "tensors": [x.address, q.address, s.address]})
    print(json.dumps(out))
"""


def test_launch_through_a_built_catalog_and_the_runtime(
        tmp_path: Path) -> None:
    """ggemm.quantize on (stand-in) CUDA tensors: a catalog built by the
    compiler, the bundle loaded by the runtime, its checks, and one launch
    each on the fake driver with the parameters the kernel reads."""
    from test_routing_kernel import (run_with_fake_driver,
                                     skip_without_fake_driver)
    skip_without_fake_driver()
    try:
        load_compiler()
    except CompilerError as error:
        pytest.skip(f"compiler library not built: {error}")
    problems = [QuantizeProblem("bf16", "1x128"),
                QuantizeProblem("bf16", "128x128", 3)]
    catalog.build_catalog(problems, tmp_path / "cat", binary_format="isa",
                          cache_dir=tmp_path / "cache")
    per_token, per_block = run_with_fake_driver(LAUNCH_SCRIPT,
                                                tmp_path / "cat")
    # 100 rows of 4 blocks, one a warp (8 a CTA); the MN-major scales
    # [100, 4] have strides (1, 100).
    assert per_token["count"] == 1 and per_token["grid"] == 50
    assert per_token["smem"] == 0
    assert per_token["params"] == per_token["tensors"] + [1, 100, 512, 0, 1,
                                                          100]
    # 2 weights of 3 x 2 blocks, one a CTA; row-major [2, 3, 2] scales.
    assert per_block["count"] == 2 and per_block["grid"] == 12
    assert per_block["smem"] == 32
    assert per_block["params"] == per_block["tensors"] + [2, 300, 256, 6, 2,
                                                          1]
