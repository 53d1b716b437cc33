"""Tests of the ctypes runtime bindings (python/ggemm/runtime.py).

They need neither a GPU nor PyTorch: tensors are small stand-ins with
PyTorch's protocol, and the driver half of a launch runs against the fake
driver of runtime/test (GGEMM_FAKE_CUDA_DRIVER, set by CTest) or reports that
there is no driver. Tests are skipped when libggemm_runtime.so was not built.

Run: GGEMM_RUNTIME_LIB=build-rt/libggemm_runtime.so \\
     PYTHONPATH=python pytest test/python/test_runtime.py
(or `ctest --test-dir build-rt -R python`, which also sets the fake driver).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "python"))

from ggemm import runtime  # noqa: E402
from ggemm.runtime import GGemmError, Kernel, Status  # noqa: E402

try:
    LIBRARY = runtime.load_library()
    SKIP_REASON = ""
except runtime.RuntimeLibraryNotFound as error:
    LIBRARY = None
    SKIP_REASON = str(error)

pytestmark = pytest.mark.skipif(LIBRARY is None, reason=SKIP_REASON)

FAKE_DRIVER = os.environ.get("GGEMM_FAKE_CUDA_DRIVER", "")

# The manifest of docs/Runtime.md.
MANIFEST: Dict[str, Any] = {
    "format": "ggemm-bundle", "version": 1,
    "entry": "ggemm_segment_matmul_kernel",
    "ptx": "k.ptx", "cubin": "k.cubin",
    "arch": "sm_90a",
    "block": [384, 1, 1],
    "cluster": [1, 1, 1],
    "dynamic_smem": 132096,
    "problem": {
        "op": "segment_matmul",
        "a_dtype": "bf16", "b_dtype": "bf16", "out_dtype": "bf16",
        "index_dtype": "i32", "weight_layout": "nk",
        "m": -1, "n": 4096, "k": 7168, "num_groups": 8, "num_weights": 8,
        "has_weight_indices": False, "has_bias": False,
        "has_row_scale": False, "accumulate": False,
    },
    "tile": {"block_m": 128, "block_n": 128, "block_k": 64, "stages": 4},
    "grid": {"policy": "persistent", "ctas_per_sm": 1},
    "params": [
        {"name": "a_desc", "kind": "tma_descriptor", "tensor": "x",
         "dtype": "bf16", "rank": 2, "box": [64, 128], "swizzle": "128B",
         "oob_fill": "zero"},
        {"name": "b_desc", "kind": "tma_descriptor", "tensor": "w",
         "dtype": "bf16", "rank": 3, "box": [64, 128, 1], "swizzle": "128B",
         "oob_fill": "zero"},
        {"name": "y", "kind": "pointer", "tensor": "y"},
        {"name": "group_rows", "kind": "pointer", "tensor": "seg_indptr",
         "optional": False},
        {"name": "weight_indices", "kind": "pointer",
         "tensor": "weight_indices", "optional": True},
        {"name": "bias", "kind": "pointer", "tensor": "bias",
         "optional": True},
        {"name": "row_scale", "kind": "pointer", "tensor": "row_scale",
         "optional": True},
        {"name": "num_rows", "kind": "scalar", "dtype": "i64",
         "value": "num_rows"},
        {"name": "rows_per_group", "kind": "scalar", "dtype": "i64",
         "value": "rows_per_group"},
        {"name": "num_groups", "kind": "scalar", "dtype": "i32",
         "value": "num_groups"},
        {"name": "n", "kind": "scalar", "dtype": "i32", "value": "n"},
        {"name": "k", "kind": "scalar", "dtype": "i32", "value": "k"},
        {"name": "ldy", "kind": "scalar", "dtype": "i64", "value": "ldy"},
    ],
}


class FakeDtype:
    """Prints like a torch dtype: str(FakeDtype('bfloat16')) is
    'torch.bfloat16'."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return f"torch.{self.name}"


class FakeTensor:
    """The part of torch.Tensor the bindings use."""

    def __init__(self, address: int, shape: Sequence[int], dtype: str,
                 strides: Optional[Sequence[int]] = None) -> None:
        self.address = address
        self.shape = tuple(shape)
        self.dtype = FakeDtype(dtype)
        if strides is None:
            strides, step = [], 1
            for extent in reversed(self.shape):
                strides.insert(0, step)
                step *= extent
        self.strides = tuple(strides)

    def data_ptr(self) -> int:
        return self.address

    def stride(self) -> tuple:
        return self.strides


BASE = 0x1_0000_0000  # fake device addresses, 16-byte aligned


def segment_tensors(**overrides: Any) -> Dict[str, Any]:
    tensors = {
        "x": FakeTensor(BASE + 0x100000, (1000, 7168), "bfloat16"),
        "w": FakeTensor(BASE + 0x200000, (8, 4096, 7168), "bfloat16"),
        "y": FakeTensor(BASE + 0x300000, (1000, 4096), "bfloat16"),
        "seg_indptr": FakeTensor(BASE + 0x400000, (9,), "int32"),
    }
    tensors.update(overrides)
    return tensors


def write_bundle(directory: Path, manifest: Optional[Dict[str, Any]] = None
                 ) -> Path:
    (directory / "k.cubin").write_bytes(b"fake cubin")
    (directory / "k.ptx").write_text("fake ptx")
    path = directory / "k.json"
    path.write_text(json.dumps(manifest if manifest is not None
                               else MANIFEST, indent=2))
    return path


@pytest.fixture
def kernel(tmp_path: Path) -> Kernel:
    with Kernel(write_bundle(tmp_path)) as loaded:
        yield loaded


def test_abi_version() -> None:
    assert LIBRARY.ggemm_runtime_abi_version() == runtime.ABI_VERSION


def test_missing_manifest(tmp_path: Path) -> None:
    with pytest.raises(GGemmError, match="cannot open manifest") as error:
        Kernel(tmp_path / "absent.json")
    assert error.value.status == Status.IO


def test_bad_manifest_version(tmp_path: Path) -> None:
    manifest = dict(MANIFEST, version=3)
    with pytest.raises(GGemmError) as error:
        Kernel(write_bundle(tmp_path, manifest))
    assert error.value.status == Status.BAD_MANIFEST
    assert ("version: unsupported manifest version 3 (this runtime reads "
            "versions 1 and 2)") in str(error.value)


def test_bad_manifest_dtype(tmp_path: Path) -> None:
    manifest = json.loads(json.dumps(MANIFEST))
    manifest["problem"]["a_dtype"] = "bf8"
    with pytest.raises(GGemmError) as error:
        Kernel(write_bundle(tmp_path, manifest))
    assert error.value.status == Status.BAD_MANIFEST
    assert ("k.json: /problem/a_dtype: expected one of bf16, f16, f32, "
            "f8e4m3, f8e5m2 or s8, got string \"bf8\"") in str(error.value)


def test_malformed_json(tmp_path: Path) -> None:
    path = tmp_path / "k.json"
    path.write_text('{"format": "ggemm-bundle",}')
    message = (r"k\.json:1:27: invalid JSON at byte 27: syntax error while "
               "parsing object key")
    with pytest.raises(GGemmError, match=message) as error:
        Kernel(path)
    assert error.value.status == Status.BAD_MANIFEST


def test_duplicate_key(tmp_path: Path) -> None:
    path = tmp_path / "k.json"
    path.write_text(json.dumps(MANIFEST)[:-1] + ', "version": 1}')
    with pytest.raises(GGemmError, match=r"k\.json: /version: invalid JSON: "
                       "duplicate key") as error:
        Kernel(path)
    assert error.value.status == Status.BAD_MANIFEST


def expect_invalid(kernel: Kernel, message: str, **tensors: Any) -> None:
    with pytest.raises(GGemmError) as error:
        kernel(**tensors)
    assert error.value.status == Status.INVALID_ARGUMENT
    assert message in str(error.value)


def test_missing_tensor(kernel: Kernel) -> None:
    tensors = segment_tensors()
    tensors["seg_indptr"] = None
    expect_invalid(kernel, "missing tensor 'seg_indptr'", **tensors)


def test_wrong_dtype(kernel: Kernel) -> None:
    w = FakeTensor(BASE + 0x200000, (8, 4096, 7168), "float16")
    expect_invalid(kernel, "tensor 'w': expected dtype bf16, got f16",
                   **segment_tensors(w=w))


def test_wrong_rank(kernel: Kernel) -> None:
    x = FakeTensor(BASE + 0x100000, (1, 1000, 7168), "bfloat16")
    expect_invalid(kernel, "tensor 'x': expected rank 2 ([m, k]), got rank 3",
                   **segment_tensors(x=x))


def test_k_mismatch(kernel: Kernel) -> None:
    w = FakeTensor(BASE + 0x200000, (8, 4096, 7000), "bfloat16")
    expect_invalid(kernel, "tensor 'w': dimension 2 (k) is 7000, expected "
                   "7168", **segment_tensors(w=w))


def test_static_k_blames_the_wrong_tensor(kernel: Kernel) -> None:
    # The kernel is compiled for k = 7168: x is wrong, not w.
    x = FakeTensor(BASE + 0x100000, (1000, 4096), "bfloat16")
    expect_invalid(kernel, "tensor 'x': dimension 1 (k) is 4096, expected "
                   "7168 (the kernel was compiled for k = 7168)",
                   **segment_tensors(x=x))


def test_n_mismatch(kernel: Kernel) -> None:
    y = FakeTensor(BASE + 0x300000, (1000, 2048), "bfloat16")
    expect_invalid(kernel, "tensor 'y': dimension 1 (n) is 2048, expected "
                   "4096", **segment_tensors(y=y))


def test_misaligned_pointer(kernel: Kernel) -> None:
    x = FakeTensor(BASE + 0x100008, (1000, 7168), "bfloat16")
    expect_invalid(kernel, "tensor 'x': data pointer 0x100100008 is not "
                   "16-byte aligned", **segment_tensors(x=x))


def test_inner_stride(kernel: Kernel) -> None:
    x = FakeTensor(BASE + 0x100000, (1000, 7168), "bfloat16", (14336, 2))
    expect_invalid(kernel, "tensor 'x': innermost stride is 2, expected 1",
                   **segment_tensors(x=x))


def test_row_stride_not_16_byte_multiple(kernel: Kernel) -> None:
    # x is read by TMA, whose row strides must be multiples of 16 bytes.
    x = FakeTensor(BASE + 0x100000, (1000, 7168), "bfloat16", (7172, 1))
    expect_invalid(kernel, "tensor 'x': stride of dimension 0 is 7172 "
                   "elements (14344 bytes), expected a multiple of 16 bytes",
                   **segment_tensors(x=x))


def test_unsupported_dtype_is_caught_in_python(kernel: Kernel) -> None:
    x = FakeTensor(BASE + 0x100000, (1000, 7168), "complex64")
    with pytest.raises(GGemmError, match="tensor 'x': unsupported dtype "
                       "torch.complex64") as error:
        kernel(**segment_tensors(x=x))
    assert error.value.status is None


def test_cpu_tensor_is_caught_in_python(kernel: Kernel) -> None:
    class Device:
        type = "cpu"

        def __str__(self) -> str:
            return "cpu"

    x = FakeTensor(BASE + 0x100000, (1000, 7168), "bfloat16")
    x.device = Device()
    with pytest.raises(GGemmError, match="tensor 'x' must be a CUDA tensor, "
                       "got device cpu"):
        kernel(**segment_tensors(x=x))


def test_grid_for_sm_count(kernel: Kernel) -> None:
    assert kernel.grid(sm_count=132, **segment_tensors()) == 132
    assert kernel.grid(sm_count=1000, **segment_tensors()) == 512
    empty = segment_tensors(
        x=FakeTensor(0, (0, 7168), "bfloat16"),
        y=FakeTensor(0, (0, 4096), "bfloat16"))
    assert kernel.grid(sm_count=132, **empty) == 0


def fp8_manifest() -> Dict[str, Any]:
    """MANIFEST as an fp8 block-scaled kernel: "1x128" x scales read by TMA,
    "128x128" w scales by pointer."""
    manifest = json.loads(json.dumps(MANIFEST))
    manifest["problem"].update(a_dtype="f8e4m3", b_dtype="f8e4m3",
                               x_scale_block="1x128",
                               w_scale_block="128x128")
    for param, box in zip(manifest["params"][:2], ([128, 128], [128, 128, 1])):
        param.update(dtype="f8e4m3", box=box)
    manifest["params"] += [
        {"name": "a_scale_desc", "kind": "tma_descriptor",
         "tensor": "x_scale", "dtype": "f32", "rank": 2, "box": [128, 1],
         "swizzle": "none", "oob_fill": "zero"},
        {"name": "w_scale", "kind": "pointer", "tensor": "w_scale",
         "optional": False},
    ]
    return manifest


def fp8_tensors(**overrides: Any) -> Dict[str, Any]:
    """Tensors of fp8_manifest(): M = 1000, K = 7168 (56 blocks of 128),
    N = 4096 (32 blocks); x_scale MN-major as torch.empty(56, 1000).t()."""
    tensors = segment_tensors(
        x=FakeTensor(BASE + 0x100000, (1000, 7168), "float8_e4m3fn"),
        w=FakeTensor(BASE + 0x200000, (8, 4096, 7168), "float8_e4m3fn"),
        x_scale=FakeTensor(BASE + 0x600000, (1000, 56), "float32", (1, 1000)),
        w_scale=FakeTensor(BASE + 0x700000, (8, 32, 56), "float32"))
    tensors.update(overrides)
    return tensors


def test_scales_by_keyword(tmp_path: Path) -> None:
    with Kernel(write_bundle(tmp_path, fp8_manifest())) as fp8:
        assert fp8.grid(sm_count=132, **fp8_tensors()) == 132
        # Each keyword reaches the library: its own checks answer.
        row_major = FakeTensor(BASE + 0x600000, (1000, 56), "float32")
        expect_invalid(fp8, "tensor 'x_scale': the kernel wants MN-major "
                       "scales", **fp8_tensors(x_scale=row_major))
        expect_invalid(fp8, "allocate them as torch.empty(56, 1000).t() "
                       "(strides [1, 1000])", **fp8_tensors(x_scale=row_major))
        short = FakeTensor(BASE + 0x700000, (8, 32, 55), "float32")
        expect_invalid(fp8, "tensor 'w_scale': dimension 2 is 55, expected 56 "
                       "(ceil(k / 128))", **fp8_tensors(w_scale=short))
        expect_invalid(fp8, "missing tensor 'w_scale' (the kernel was "
                       "compiled with w_scale_block \"128x128\")",
                       **fp8_tensors(w_scale=None))
        with pytest.raises(GGemmError,
                           match="unknown tensor names: x_scales"):
            fp8.grid(sm_count=132, x_scales=row_major, **fp8_tensors())


def test_scales_to_a_kernel_without_them(kernel: Kernel) -> None:
    scales = FakeTensor(BASE + 0x600000, (1000, 56), "float32", (1, 1000))
    expect_invalid(kernel, "tensor 'x_scale' was given, but the kernel was "
                   "compiled without it (problem.x_scale_block is absent)",
                   **segment_tensors(x_scale=scales))


def test_bad_scale_block(tmp_path: Path) -> None:
    manifest = fp8_manifest()
    manifest["problem"]["w_scale_block"] = None
    with pytest.raises(GGemmError) as error:
        Kernel(write_bundle(tmp_path, manifest))
    assert error.value.status == Status.BAD_MANIFEST
    assert ("k.json: /problem/w_scale_block: missing while x_scale_block is "
            "\"1x128\"") in str(error.value)


# -- INT8: s8 x and w, tensor-wise / per-row scales -------------------------

def s8_manifest(x_block: str = "per_row", w_block: str = "per_row"
                ) -> Dict[str, Any]:
    """MANIFEST as the compiler writes an INT8 kernel: fp8_manifest() with
    s8 operands and scales applied in the epilogue, both by pointer."""
    manifest = fp8_manifest()
    manifest["problem"].update(a_dtype="s8", b_dtype="s8",
                               x_scale_block=x_block, w_scale_block=w_block)
    for param in manifest["params"][:2]:
        param["dtype"] = "s8"
    manifest["params"][13] = {"name": "x_scale", "kind": "pointer",
                              "tensor": "x_scale", "optional": False}
    return manifest


def s8_tensors(**overrides: Any) -> Dict[str, Any]:
    """Tensors of s8_manifest(): int8 x [1000, 7168] and w [8, 4096, 7168],
    per-token x_scale [1000] and per-channel w_scale [8, 4096]."""
    tensors = segment_tensors(
        x=FakeTensor(BASE + 0x100000, (1000, 7168), "int8"),
        w=FakeTensor(BASE + 0x200000, (8, 4096, 7168), "int8"),
        x_scale=FakeTensor(BASE + 0x600000, (1000,), "float32"),
        w_scale=FakeTensor(BASE + 0x700000, (8, 4096), "float32"))
    tensors.update(overrides)
    return tensors


def test_s8_dtype() -> None:
    # The C enum's value (ggemm_runtime.h), appended after i64.
    assert runtime.DType.S8 == 7
    assert runtime._dtype_of("x", FakeTensor(BASE, (4,), "int8")) \
        == runtime.DType.S8
    packed = runtime._tensor_bytes("x", FakeTensor(BASE, (2, 16), "int8"))
    _, data, dtype, rank, *rest = runtime._TENSOR_LAYOUT.unpack(packed)
    assert (data, dtype, rank) == (BASE, runtime.DType.S8, 2)
    assert rest[:2] == [2, 16] and rest[4:6] == [16, 1]


def test_int8_kernel_by_keyword(tmp_path: Path) -> None:
    with Kernel(write_bundle(tmp_path, s8_manifest())) as int8:
        assert int8.grid(sm_count=132, **s8_tensors()) == 132
        # x and w are int8; the library names the tensor that is not.
        fp8_x = FakeTensor(BASE + 0x100000, (1000, 7168), "float8_e4m3fn")
        expect_invalid(int8, "tensor 'x': expected dtype s8, got f8e4m3",
                       **s8_tensors(x=fp8_x))
        bf16_w = FakeTensor(BASE + 0x200000, (8, 4096, 7168), "bfloat16")
        expect_invalid(int8, "tensor 'w': expected dtype s8, got bf16",
                       **s8_tensors(w=bf16_w))
        # Per-row scales, not 1x128 blocks; and required.
        blocks = FakeTensor(BASE + 0x600000, (1000, 56), "float32", (1, 1000))
        expect_invalid(int8, "tensor 'x_scale': expected rank 1 ([m] for "
                       "x_scale_block \"per_row\"), got rank 2",
                       **s8_tensors(x_scale=blocks))
        expect_invalid(int8, "missing tensor 'w_scale' (the kernel was "
                       "compiled with w_scale_block \"per_row\")",
                       **s8_tensors(w_scale=None))
        # 1-byte elements: x's row stride of 7176 bytes is not 16-byte.
        padded = FakeTensor(BASE + 0x100000, (1000, 7168), "int8", (7176, 1))
        expect_invalid(int8, "tensor 'x': stride of dimension 0 is 7176 "
                       "elements (7176 bytes), expected a multiple of 16 "
                       "bytes", **s8_tensors(x=padded))
    tensor_wise = tmp_path / "tensor"
    tensor_wise.mkdir()
    with Kernel(write_bundle(tensor_wise, s8_manifest("tensor", "tensor"))) \
            as int8:
        scales = dict(x_scale=FakeTensor(BASE + 0x600000, (1,), "float32"),
                      w_scale=FakeTensor(BASE + 0x700000, (8,), "float32"))
        assert int8.grid(sm_count=132, **s8_tensors(**scales)) == 132


@pytest.mark.parametrize("blocks, message", [
    (("1x128", "128x128"), "k.json: /problem/x_scale_block: s8 operands "
     "take \"tensor\" or \"per_row\" scales, got \"1x128\" (block scales "
     "are for fp8)"),
    ((None, None), "k.json: /problem/x_scale_block: missing, but s8 "
     "operands need x_scale_block and w_scale_block"),
])
def test_bad_int8_manifest(tmp_path: Path, blocks: Any, message: str) -> None:
    manifest = s8_manifest(*blocks)
    if blocks[0] is None:
        del manifest["params"][13:]
    with pytest.raises(GGemmError) as error:
        Kernel(write_bundle(tmp_path, manifest))
    assert error.value.status == Status.BAD_MANIFEST
    assert message in str(error.value)


@pytest.mark.skipif(not FAKE_DRIVER, reason="GGEMM_FAKE_CUDA_DRIVER not set "
                    "(CTest sets it to the fake driver of runtime/test)")
def test_fake_driver_launches_int8(tmp_path: Path) -> None:
    """An s8 launch through the bindings reaches the (fake) driver: the
    dtype value and the scales cross the C API as the library expects."""
    write_bundle(tmp_path, s8_manifest())
    script = """
    import ctypes, json, os
    from ggemm.runtime import Kernel
    from test_runtime import s8_tensors

    fake = ctypes.CDLL(os.environ["GGEMM_CUDA_DRIVER"])
    kernel = Kernel(os.environ["GGEMM_TEST_BUNDLE"])
    before = fake.ggemmFakeLaunchCount()
    kernel(**s8_tensors(), stream=0x5eed)
    print(json.dumps({"launches": fake.ggemmFakeLaunchCount() - before}))
    """
    env = dict(os.environ)
    env["GGEMM_CUDA_DRIVER"] = FAKE_DRIVER
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT / "python"), str(Path(__file__).resolve().parent)])
    env["GGEMM_TEST_BUNDLE"] = str(tmp_path / "k.json")
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], env=env,
        capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == \
        {"launches": 1}


# -- FP8 output: an e4m3 y and its 1x128 scales ------------------------------

def fp8_out_manifest() -> Dict[str, Any]:
    """MANIFEST as the compiler writes a kernel with an e4m3 y: out_dtype
    f8e4m3, y_scale_block "1x128", and y_scale and its two strides after
    the other parameters."""
    manifest = json.loads(json.dumps(MANIFEST))
    manifest["problem"].update(out_dtype="f8e4m3", y_scale_block="1x128")
    manifest["params"] += [
        {"kind": "pointer", "name": "y_scale", "optional": False,
         "tensor": "y_scale"},
        {"dtype": "i64", "kind": "scalar", "name": "y_scale_stride_row",
         "value": "y_scale_stride_row"},
        {"dtype": "i64", "kind": "scalar", "name": "y_scale_stride_col",
         "value": "y_scale_stride_col"},
    ]
    return manifest


def fp8_out_tensors(**overrides: Any) -> Dict[str, Any]:
    """Tensors of fp8_out_manifest(): e4m3 y [1000, 4096] and its scales
    [1000, 32] MN-major, as ggemm.segment_matmul allocates them
    (torch.empty(32, 1000).t())."""
    tensors = segment_tensors(
        y=FakeTensor(BASE + 0x300000, (1000, 4096), "float8_e4m3fn"),
        y_scale=FakeTensor(BASE + 0x1000000, (1000, 32), "float32",
                           (1, 1000)))
    tensors.update(overrides)
    return tensors


def test_e4m3_output_by_keyword(tmp_path: Path) -> None:
    with Kernel(write_bundle(tmp_path, fp8_out_manifest())) as fp8_out:
        assert fp8_out.grid(sm_count=132, **fp8_out_tensors()) == 132
        # Row-major scales are fine too: the kernel takes their strides.
        row_major = FakeTensor(BASE + 0x1000000, (1000, 32), "float32")
        assert fp8_out.grid(sm_count=132,
                            **fp8_out_tensors(y_scale=row_major)) == 132
        expect_invalid(fp8_out, "missing tensor 'y_scale' (the kernel was "
                       "compiled with y_scale_block \"1x128\")",
                       **fp8_out_tensors(y_scale=None))
        bf16_y = FakeTensor(BASE + 0x300000, (1000, 4096), "bfloat16")
        expect_invalid(fp8_out, "tensor 'y': expected dtype f8e4m3, got bf16",
                       **fp8_out_tensors(y=bf16_y))
        short = FakeTensor(BASE + 0x1000000, (1000, 31), "float32", (1, 1000))
        expect_invalid(fp8_out, "tensor 'y_scale': dimension 1 is 31, "
                       "expected 32 (ceil(n / 128))",
                       **fp8_out_tensors(y_scale=short))
        overlapping = FakeTensor(BASE + 0x1000000, (1000, 32), "float32",
                                 (1, 500))
        expect_invalid(fp8_out, "tensor 'y_scale': strides [1, 500] for "
                       "shape [1000, 32] may give two scales one element",
                       **fp8_out_tensors(y_scale=overlapping))
    # A kernel without an e4m3 y refuses the scales by name.
    scales = fp8_out_tensors()["y_scale"]
    with Kernel(write_bundle(tmp_path, MANIFEST)) as plain:
        expect_invalid(plain, "tensor 'y_scale' was given, but the kernel "
                       "was compiled without it (problem.y_scale_block is "
                       "absent)", **segment_tensors(y_scale=scales))


@pytest.mark.parametrize("change, message", [
    ({"y_scale_block": None}, "k.json: /problem/y_scale_block: missing, but "
     "an f8e4m3 y needs y_scale_block \"1x128\""),
    ({"accumulate": True}, "k.json: /problem/accumulate: accumulate adds to "
     "y, but an f8e4m3 y is quantised from the values the epilogue "
     "computes"),
    ({"out_dtype": "bf16"}, "k.json: /problem/y_scale_block: \"1x128\" "
     "scales an f8e4m3 y, but out_dtype is bf16"),
])
def test_bad_e4m3_output_manifest(tmp_path: Path, change: Dict[str, Any],
                                  message: str) -> None:
    manifest = fp8_out_manifest()
    manifest["problem"].update(change)
    with pytest.raises(GGemmError) as error:
        Kernel(write_bundle(tmp_path, manifest))
    assert error.value.status == Status.BAD_MANIFEST
    assert message in str(error.value)


@pytest.mark.skipif(not FAKE_DRIVER, reason="GGEMM_FAKE_CUDA_DRIVER not set "
                    "(CTest sets it to the fake driver of runtime/test)")
def test_fake_driver_launches_e4m3_output(tmp_path: Path) -> None:
    """An e4m3-output launch through the bindings reaches the (fake)
    driver with y_scale's address and strides in the last three
    parameters."""
    write_bundle(tmp_path, fp8_out_manifest())
    script = """
    import ctypes, json, os
    from ggemm.runtime import Kernel
    from test_runtime import BASE, FakeTensor, fp8_out_tensors

    class Config(ctypes.Structure):
        # FakeDriverConfig (runtime/test/FakeCudaDriver.h).
        _fields_ = [("has_context", ctypes.c_bool),
                    ("context_id", ctypes.c_ulonglong),
                    ("device", ctypes.c_int), ("cc_major", ctypes.c_int),
                    ("cc_minor", ctypes.c_int), ("sm_count", ctypes.c_int),
                    ("max_smem_optin", ctypes.c_int),
                    ("supports_param_info", ctypes.c_bool),
                    ("num_kernel_params", ctypes.c_int),
                    ("kernel_param_sizes", ctypes.c_size_t * 64)]

    class LaunchRecord(ctypes.Structure):
        # FakeLaunchRecord up to its parameters' bytes.
        _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                    ("cluster", ctypes.c_uint * 3),
                    ("shared_mem_bytes", ctypes.c_uint),
                    ("stream", ctypes.c_void_p), ("function", ctypes.c_void_p),
                    ("num_params", ctypes.c_int),
                    ("param_sizes", ctypes.c_size_t * 64),
                    ("param_bytes", (ctypes.c_ubyte * 128) * 64)]

    fake = ctypes.CDLL(os.environ["GGEMM_CUDA_DRIVER"])
    fake.ggemmFakeConfig.restype = ctypes.POINTER(Config)
    fake.ggemmFakeLastLaunch.restype = ctypes.POINTER(LaunchRecord)
    config = fake.ggemmFakeConfig().contents
    sizes = [128, 128] + [8] * 7 + [4, 4, 4, 8] + [8] * 3
    config.num_kernel_params = len(sizes)
    for i, size in enumerate(sizes):
        config.kernel_param_sizes[i] = size
    kernel = Kernel(os.environ["GGEMM_TEST_BUNDLE"])
    out = {}
    for name, strides in (("mn_major", (1, 1000)), ("row_major", (32, 1))):
        scales = FakeTensor(BASE + 0x1000000, (1000, 32), "float32", strides)
        kernel(**fp8_out_tensors(y_scale=scales), stream=0x5eed)
        record = fake.ggemmFakeLastLaunch().contents
        words = [int.from_bytes(bytes(record.param_bytes[i][:8]), "little")
                 for i in (2, 13, 14, 15)]
        out[name] = words
    out["launches"] = fake.ggemmFakeLaunchCount()
    out["offset"] = LaunchRecord.param_bytes.offset
    print(json.dumps(out))
    """
    env = dict(os.environ)
    env["GGEMM_CUDA_DRIVER"] = FAKE_DRIVER
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT / "python"), str(Path(__file__).resolve().parent)])
    env["GGEMM_TEST_BUNDLE"] = str(tmp_path / "k.json")
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], env=env,
        capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    # paramBytes is 16-byte aligned in the C struct: ctypes must agree.
    assert out["offset"] % 16 == 0
    assert out["launches"] == 2
    # y, y_scale, y_scale_stride_row, y_scale_stride_col.
    assert out["mn_major"] == [BASE + 0x300000, BASE + 0x1000000, 1, 1000]
    assert out["row_major"] == [BASE + 0x300000, BASE + 0x1000000, 32, 1]


# -- segment_matmul_k (K-ragged weight gradients, issue 12) -----------------

def kragged_manifest(layout: str = "nk") -> Dict[str, Any]:
    """A segment_matmul_k kernel with the 14 parameters of docs/Bundle.md:
    bf16 dy [T, 4096] and x [T, 7168], f32 dw; A = dy, B = x for "nk", the
    other way round for "kn"."""
    manifest = json.loads(json.dumps(MANIFEST))
    manifest["entry"] = "ggemm_segment_matmul_k_kernel"
    manifest["problem"].update(op="segment_matmul_k", out_dtype="f32",
                               weight_layout=layout, activation="none")
    a_tensor, b_tensor = ("dy", "x") if layout == "nk" else ("x", "dy")
    manifest["params"][0].update(tensor=a_tensor, box=[64, 64])
    manifest["params"][1].update(tensor=b_tensor, rank=2, box=[64, 64])
    manifest["params"][2]["tensor"] = "dw"
    manifest["params"].append({"name": "num_weights", "kind": "scalar",
                               "dtype": "i32", "value": "num_weights"})
    return manifest


def kragged_tensors(layout: str = "nk", **overrides: Any) -> Dict[str, Any]:
    """Tensors of kragged_manifest(layout): T = 1000 token rows, 8 groups."""
    dw_shape = (8, 4096, 7168) if layout == "nk" else (8, 7168, 4096)
    tensors = {
        "dy": FakeTensor(BASE + 0x800000, (1000, 4096), "bfloat16"),
        "x": FakeTensor(BASE + 0x100000, (1000, 7168), "bfloat16"),
        "seg_indptr": FakeTensor(BASE + 0x400000, (9,), "int32"),
        "dw": FakeTensor(BASE + 0x900000, dw_shape, "float32"),
    }
    tensors.update(overrides)
    return tensors


@pytest.fixture
def grad_kernel(tmp_path: Path) -> Kernel:
    with Kernel(write_bundle(tmp_path, kragged_manifest())) as loaded:
        yield loaded


@pytest.mark.parametrize("layout", ["nk", "kn"])
def test_kragged_tensors_by_keyword(tmp_path: Path, layout: str) -> None:
    manifest = kragged_manifest(layout)
    manifest["problem"].update(num_groups=-1, num_weights=-1)
    with Kernel(write_bundle(tmp_path, manifest)) as grad:
        # 8 groups * ceil(R / 128) * ceil(C / 128) tiles, R x C = N x K or
        # K x N.
        assert grad.grid(sm_count=100000, **kragged_tensors(layout)) == \
            8 * 32 * 56
        assert grad.select_variant(**kragged_tensors(layout)) == 0
        # No token rows still writes every gradient: the same grid.
        empty = kragged_tensors(
            layout, dy=FakeTensor(0, (0, 4096), "bfloat16"),
            x=FakeTensor(0, (0, 7168), "bfloat16"))
        assert grad.grid(sm_count=100000, **empty) == 8 * 32 * 56
        # No groups: nothing to launch.
        none = kragged_tensors(
            layout, seg_indptr=FakeTensor(BASE + 0x400000, (1,), "int32"),
            dw=FakeTensor(0, (0,) + kragged_tensors(layout)["dw"].shape[1:],
                          "float32"))
        assert grad.grid(sm_count=132, **none) == 0


def test_kragged_rejects_the_tensors_of_other_ops(grad_kernel: Kernel) -> None:
    w = FakeTensor(BASE + 0x200000, (8, 4096, 7168), "bfloat16")
    expect_invalid(grad_kernel, "unknown tensor 'w' (segment_matmul_k takes "
                   "dy, x, seg_indptr, dw)", w=w, **kragged_tensors())
    y = FakeTensor(BASE + 0x300000, (1000, 4096), "bfloat16")
    expect_invalid(grad_kernel, "unknown tensor 'y'", y=y,
                   **kragged_tensors())
    bias = FakeTensor(BASE + 0x500000, (8, 4096), "float32")
    expect_invalid(grad_kernel, "unknown tensor 'bias'", bias=bias,
                   **kragged_tensors())


def test_kragged_missing_tensor(grad_kernel: Kernel) -> None:
    expect_invalid(grad_kernel, "missing tensor 'dw' (segment_matmul_k needs "
                   "dy, x, seg_indptr, dw)", **kragged_tensors(dw=None))
    expect_invalid(grad_kernel, "missing tensor 'dy'",
                   **kragged_tensors(dy=None))


def test_kragged_shapes_and_layouts(grad_kernel: Kernel) -> None:
    short = FakeTensor(BASE + 0x100000, (999, 7168), "bfloat16")
    expect_invalid(grad_kernel, "tensors 'dy' and 'x' disagree on token rows",
                   **kragged_tensors(x=short))
    bf16_dw = FakeTensor(BASE + 0x900000, (8, 4096, 7168), "bfloat16")
    expect_invalid(grad_kernel, "tensor 'dw': expected dtype f32, got bf16",
                   **kragged_tensors(dw=bf16_dw))
    kn_dw = FakeTensor(BASE + 0x900000, (8, 7168, 4096), "float32")
    expect_invalid(grad_kernel, "tensor 'dw': dimension 1 (n) is 7168, "
                   "expected 4096", **kragged_tensors(dw=kn_dw))
    padded = FakeTensor(BASE + 0x800000, (1000, 4096), "bfloat16", (4100, 1))
    expect_invalid(grad_kernel, "tensor 'dy': stride of dimension 0 is 4100 "
                   "elements (8200 bytes), expected a multiple of 16 bytes",
                   **kragged_tensors(dy=padded))
    unpacked = FakeTensor(BASE + 0x900000, (8, 4096, 7168), "float32",
                          (4096 * 7168 + 4, 7168, 1))
    expect_invalid(grad_kernel, "tensor 'dw': stride of dimension 0 is "
                   "29360132, expected 29360128", **kragged_tensors(
                       dw=unpacked))


def test_gradient_tensors_to_a_segment_kernel(kernel: Kernel) -> None:
    dy = FakeTensor(BASE + 0x800000, (1000, 4096), "bfloat16")
    expect_invalid(kernel, "unknown tensor 'dy' (segment_matmul takes x, w, "
                   "y, seg_indptr", dy=dy, **segment_tensors())


def test_kragged_bad_manifest(tmp_path: Path) -> None:
    manifest = kragged_manifest()
    manifest["problem"]["has_bias"] = True
    with pytest.raises(GGemmError) as error:
        Kernel(write_bundle(tmp_path, manifest))
    assert error.value.status == Status.BAD_MANIFEST
    assert ("k.json: /problem/has_bias: segment_matmul_k has no bias, "
            "expected false, got true") in str(error.value)


def test_closed_kernel(tmp_path: Path) -> None:
    loaded = Kernel(write_bundle(tmp_path))
    loaded.close()
    with pytest.raises(GGemmError, match="the kernel is closed"):
        loaded(**segment_tensors())


def run_child(script: str, driver: str, tmp_path: Path) -> Dict[str, Any]:
    """Runs `script` in a fresh interpreter (the driver is loaded once per
    process) with GGEMM_CUDA_DRIVER=`driver`; returns the JSON it prints."""
    write_bundle(tmp_path)
    env = dict(os.environ)
    env["GGEMM_CUDA_DRIVER"] = driver
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT / "python"), str(Path(__file__).resolve().parent)]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["GGEMM_TEST_BUNDLE"] = str(tmp_path / "k.json")
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], env=env,
        capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


LAUNCH_SCRIPT = """
    import json, os
    from ggemm.runtime import GGemmError, Kernel
    from test_runtime import segment_tensors
    kernel = Kernel(os.environ["GGEMM_TEST_BUNDLE"])
    out = {}
    try:
        kernel(**segment_tensors(), stream=0x5eed)
        out["status"] = "OK"
    except GGemmError as error:
        out["status"] = error.status.name
        out["message"] = str(error)
    try:
        out["grid"] = kernel.grid(**segment_tensors())
    except GGemmError as error:
        out["grid_error"] = error.status.name
    print(json.dumps(out))
"""


def test_no_driver(tmp_path: Path) -> None:
    out = run_child(LAUNCH_SCRIPT, str(tmp_path / "no-libcuda.so.1"),
                    tmp_path)
    assert out["status"] == "NO_DRIVER"
    assert out["message"].startswith("no CUDA driver: cannot load ")
    assert out["grid_error"] == "NO_DRIVER"


def test_system_driver(kernel: Kernel) -> None:
    """Without a GPU there is no driver; with one, this thread of a process
    that never used CUDA has no current context."""
    if os.environ.get("GGEMM_CUDA_DRIVER"):
        pytest.skip("GGEMM_CUDA_DRIVER overrides the system driver")
    with pytest.raises(GGemmError) as error:
        kernel(**segment_tensors())
    assert error.value.status in (Status.NO_DRIVER, Status.NO_CONTEXT)


@pytest.mark.skipif(not FAKE_DRIVER, reason="GGEMM_FAKE_CUDA_DRIVER not set "
                    "(CTest sets it to the fake driver of runtime/test)")
def test_fake_driver_launch(tmp_path: Path) -> None:
    script = LAUNCH_SCRIPT.replace("print(json.dumps(out))", """
    import ctypes

    class LaunchRecord(ctypes.Structure):
        # The leading fields of FakeLaunchRecord (runtime/test).
        _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                    ("cluster", ctypes.c_uint * 3),
                    ("shared_mem_bytes", ctypes.c_uint),
                    ("stream", ctypes.c_void_p)]

    fake = ctypes.CDLL(os.environ["GGEMM_CUDA_DRIVER"])
    fake.ggemmFakeLastLaunch.restype = ctypes.POINTER(LaunchRecord)
    record = fake.ggemmFakeLastLaunch().contents
    out["launches"] = fake.ggemmFakeLaunchCount()
    out["launch_grid"] = record.grid[0]
    out["shared_mem_bytes"] = record.shared_mem_bytes
    out["stream"] = record.stream
    print(json.dumps(out))
    """)
    out = run_child(script, FAKE_DRIVER, tmp_path)
    assert out["status"] == "OK", out
    assert out["launches"] == 1
    assert out["launch_grid"] == 132
    assert out["grid"] == 132
    assert out["shared_mem_bytes"] == 132096
    assert out["stream"] == 0x5eed


# -- multi-variant bundles (manifest version 2) ------------------------------

def multi_variant_manifest() -> Dict[str, Any]:
    """MANIFEST as a version 2 bundle, as the compiler writes one for
    dynamic rows: "small" (64-row tiles, 256 threads) for at most 64 rows
    per group, then "large" (MANIFEST's kernel)."""
    large = {key: value for key, value in json.loads(json.dumps(MANIFEST))
             .items() if key not in ("format", "version", "arch", "problem")}
    large.update(entry="large", ptx="large.ptx")
    del large["cubin"]
    small = json.loads(json.dumps(large))
    small.update(entry="small", ptx="small.ptx", block=[256, 1, 1],
                 dynamic_smem=99328)
    small["tile"]["block_m"] = 64
    small["params"][0]["box"] = [64, 64]
    return {"format": "ggemm-bundle", "version": 2, "arch": MANIFEST["arch"],
            "problem": MANIFEST["problem"],
            "dispatch": {"rule": "rows_per_group", "bounds": [64]},
            "variants": [small, large]}


def write_multi_variant_bundle(directory: Path,
                               manifest: Optional[Dict[str, Any]] = None
                               ) -> Path:
    (directory / "small.ptx").write_text("small ptx")
    (directory / "large.ptx").write_text("large ptx")
    path = directory / "k.json"
    path.write_text(json.dumps(manifest if manifest is not None
                               else multi_variant_manifest(), indent=2))
    return path


def test_single_kernel_bundles_have_one_variant(kernel: Kernel) -> None:
    assert kernel.num_variants == 1
    assert kernel.select_variant(expected_m=4, **segment_tensors()) == 0


def test_variant_follows_rows_per_group_and_hint(tmp_path: Path) -> None:
    with Kernel(write_multi_variant_bundle(tmp_path)) as kernel:
        assert kernel.num_variants == 2
        # 1000 rows over 8 segments: 125 per group, above the bound of 64.
        assert kernel.select_variant(**segment_tensors()) == 1
        assert kernel.select_variant(expected_m=64, **segment_tensors()) == 0
        assert kernel.select_variant(expected_m=65, **segment_tensors()) == 1
        small = segment_tensors(
            x=FakeTensor(BASE + 0x100000, (500, 7168), "bfloat16"),
            y=FakeTensor(BASE + 0x300000, (500, 4096), "bfloat16"))
        assert kernel.select_variant(**small) == 0
        # The grid is the chosen variant's: 64-row tiles,
        # (ceil(500 / 64) + 8) * 32 = 512 tiles.
        assert kernel.grid(sm_count=1000, **small) == 512
        assert kernel.grid(sm_count=1000, **segment_tensors()) == 512


@pytest.mark.parametrize("hint", [0, -3, 2.5, True, "20"])
def test_bad_expected_m(tmp_path: Path, hint: Any) -> None:
    with Kernel(write_multi_variant_bundle(tmp_path)) as kernel:
        with pytest.raises(GGemmError, match="expected_m: expected None or "
                           "a positive integer") as error:
            kernel.select_variant(expected_m=hint, **segment_tensors())
        assert error.value.status is None
        with pytest.raises(GGemmError, match="expected_m"):
            kernel(**segment_tensors(), expected_m=hint)


def test_bad_multi_variant_manifest(tmp_path: Path) -> None:
    manifest = multi_variant_manifest()
    manifest["dispatch"]["bounds"] = [64, 128]
    with pytest.raises(GGemmError) as error:
        Kernel(write_multi_variant_bundle(tmp_path, manifest))
    assert error.value.status == Status.BAD_MANIFEST
    assert ("/dispatch/bounds: expected one bound fewer than the 2 variants, "
            "got 2") in str(error.value)


@pytest.mark.skipif(not FAKE_DRIVER, reason="GGEMM_FAKE_CUDA_DRIVER not set "
                    "(CTest sets it to the fake driver of runtime/test)")
def test_fake_driver_launches_the_hinted_variant(tmp_path: Path) -> None:
    write_multi_variant_bundle(tmp_path)
    script = """
    import ctypes, json, os
    from ggemm.runtime import Kernel
    from test_runtime import segment_tensors

    class LaunchRecord(ctypes.Structure):
        _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3)]

    fake = ctypes.CDLL(os.environ["GGEMM_CUDA_DRIVER"])
    fake.ggemmFakeLastLaunch.restype = ctypes.POINTER(LaunchRecord)
    kernel = Kernel(os.environ["GGEMM_TEST_BUNDLE"])
    blocks = []
    for hint in (None, 20, None):
        kernel(**segment_tensors(), expected_m=hint)
        blocks.append(fake.ggemmFakeLastLaunch().contents.block[0])
    print(json.dumps({"blocks": blocks}))
    """
    env = dict(os.environ)
    env["GGEMM_CUDA_DRIVER"] = FAKE_DRIVER
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT / "python"), str(Path(__file__).resolve().parent)])
    env["GGEMM_TEST_BUNDLE"] = str(tmp_path / "k.json")
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], env=env,
        capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["blocks"] == [384, 256, 384]


# -- DLPack producers (no torch needed) ---------------------------------------

import ctypes  # noqa: E402


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", runtime._DLTensor),
                ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

# (code, bits) of DLPack's types by name.
_DL_TYPES = {"bfloat16": (4, 16), "float16": (2, 16), "float32": (2, 32),
             "int8": (0, 8), "int32": (0, 32), "float64": (2, 64)}


class DLPackArray:
    """A DLPack producer without data_ptr(), like a CuPy or JAX array: it
    builds its DLManagedTensor with ctypes and hands out 'dltensor'
    capsules (no deleter: the object owns the struct)."""

    def __init__(self, address: int, shape: Sequence[int], dtype: str,
                 device_type: int = 2, strides: Optional[Sequence[int]] = None,
                 byte_offset: int = 0) -> None:
        rank = len(shape)
        self.device_type = device_type
        self.shape = (ctypes.c_int64 * max(rank, 1))(*shape)
        self.strides = ((ctypes.c_int64 * rank)(*strides)
                        if strides is not None else None)
        code, bits = _DL_TYPES[dtype]
        self.managed = _DLManagedTensor()
        t = self.managed.dl_tensor
        t.data, t.device_type, t.device_id, t.ndim = address, device_type, 0, rank
        t.code, t.bits, t.lanes = code, bits, 1
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        if self.strides is not None:
            t.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = byte_offset
        self.streams: list = []

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return _capsule_new(ctypes.addressof(self.managed), b"dltensor", None)


def dlpack_segment_tensors(**overrides: Any) -> Dict[str, Any]:
    tensors = {
        "x": DLPackArray(BASE + 0x100000, (1000, 7168), "bfloat16"),
        "w": DLPackArray(BASE + 0x200000, (8, 4096, 7168), "bfloat16"),
        "y": DLPackArray(BASE + 0x300000, (1000, 4096), "bfloat16"),
        "seg_indptr": DLPackArray(BASE + 0x400000, (9,), "int32"),
    }
    tensors.update(overrides)
    return tensors


def test_dlpack_tensors_reach_the_runtime(kernel: Kernel) -> None:
    # The C runtime plans the launch from the DLPack tensors' metadata.
    assert kernel.grid(sm_count=132, **dlpack_segment_tensors()) == 132
    # ... and checks them like any other: a K mismatch is named.
    w = DLPackArray(BASE + 0x200000, (8, 4096, 7000), "bfloat16")
    expect_invalid(kernel, "tensor 'w': dimension 2 (k) is 7000, expected "
                   "7168", **dlpack_segment_tensors(w=w))
    x = DLPackArray(BASE + 0x100000, (1000, 7168), "float16")
    expect_invalid(kernel, "tensor 'x': expected dtype bf16, got f16",
                   **dlpack_segment_tensors(x=x))


def test_dlpack_layout_strides_and_offset() -> None:
    # Explicit strides (a transposed view) and a byte offset.
    t = DLPackArray(BASE, (64, 32), "float32", strides=(1, 64),
                    byte_offset=256)
    packed = runtime._tensor_bytes("x", t, 1234)
    _, data, dtype, rank, *rest = runtime._TENSOR_LAYOUT.unpack(packed)
    assert (data, dtype, rank) == (BASE + 256, runtime.DType.F32, 2)
    assert rest[:2] == [64, 32] and rest[4:6] == [1, 64]
    # The launch's stream goes to the producer, as the protocol asks.
    assert t.streams == [1234]
    # No strides: compact row-major.
    packed = runtime._tensor_bytes("w", DLPackArray(BASE, (2, 3, 5),
                                                    "bfloat16"))
    rest = runtime._TENSOR_LAYOUT.unpack(packed)[4:]
    assert rest[:3] == (2, 3, 5) and rest[4:7] == (15, 5, 1)


def test_dlpack_int8_is_s8() -> None:
    # DLPack's kDLInt of 8 bits: an INT8 kernel's operands (CuPy's int8).
    packed = runtime._tensor_bytes("x", DLPackArray(BASE, (4, 32), "int8"))
    _, data, dtype, rank, *rest = runtime._TENSOR_LAYOUT.unpack(packed)
    assert (data, dtype, rank) == (BASE, runtime.DType.S8, 2)
    assert rest[4:6] == [32, 1]


def test_dlpack_rejects_host_memory_and_unknown_dtypes(kernel: Kernel) -> None:
    x = DLPackArray(BASE + 0x100000, (1000, 7168), "bfloat16", device_type=1)
    with pytest.raises(GGemmError, match="tensor 'x' must be a CUDA tensor, "
                       "got a DLPack tensor on device CPU"):
        kernel(**dlpack_segment_tensors(x=x))
    x = DLPackArray(BASE + 0x100000, (1000, 7168), "float64")
    with pytest.raises(GGemmError, match=r"tensor 'x': unsupported DLPack "
                       r"dtype \(code 2, bits 64, lanes 1\)"):
        kernel(**dlpack_segment_tensors(x=x))


def test_numpy_is_a_dlpack_producer() -> None:
    """A real producer's capsule parses (NumPy's arrays are on the CPU, so
    the device check is bypassed here)."""
    numpy = pytest.importorskip("numpy")
    array = numpy.zeros((6, 4), dtype=numpy.float32)[:, 1:3]

    class OnCuda:
        def __init__(self, a):
            self.a = a

        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

    packed = runtime._tensor_bytes("x", OnCuda(array))
    _, data, dtype, rank, *rest = runtime._TENSOR_LAYOUT.unpack(packed)
    assert data == array.ctypes.data
    assert (dtype, rank) == (runtime.DType.F32, 2)
    assert rest[:2] == [6, 2] and rest[4:6] == [4, 1]
