#!/usr/bin/env python3
"""Host time per call of the Python face, on a machine without a GPU.

Times `ggemm.segment_matmul(x, w, seg, out=y)`, `ggemm.Kernel.__call__` and
the bare C launch through ctypes on check_python.py's overhead problem
(M = 64, N = 384, K = 256, G = 6, bf16), with everything real except the
GPU: the runtime library of the build tree runs against the fake driver of
runtime/test (GGEMM_CUDA_DRIVER), and torch is replaced by a stand-in
module whose tensors expose what the bindings read (`data_ptr()`, `shape`,
`stride()`, `dtype`, `is_cuda`, `device`, `get_device()`,
`requires_grad`) and whose `torch.cuda` / `torch._C` stream and device
accessors do what PyTorch's do on the launch path, without CUDA. The
stand-in's attribute reads cost about what PyTorch's C getters do; the
real numbers come from test/gpu/check_python.py on the GPU machine.

    python3 bench/host_overhead_cpu.py --build build [--calls 20000]
"""
import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

N, K, G, M = 384, 256, 6, 64


class _Dtype:
    """A torch.dtype stand-in: hashable, prints as 'torch.NAME'."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


class _Device:
    def __init__(self, index):
        self.type, self.index = "cuda", index

    def __eq__(self, other):
        return (isinstance(other, _Device) and other.type == self.type
                and other.index == self.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __repr__(self):
        return f"device(type='cuda', index={self.index})"


class _Size(tuple):
    pass


class Tensor:
    """What the bindings read of a CUDA torch.Tensor."""

    def __init__(self, address, shape, dtype):
        self._address = address
        self._shape = _Size(shape)
        self._dtype = dtype
        strides, step = [], 1
        for extent in reversed(shape):
            strides.insert(0, step)
            step *= extent
        self._strides = tuple(strides)

    # Properties, as torch's are C getters that build their result.
    shape = property(lambda self: _Size(self._shape))
    dtype = property(lambda self: self._dtype)
    is_cuda = property(lambda self: True)
    device = property(lambda self: _Device(0))
    requires_grad = property(lambda self: False)

    def data_ptr(self):
        return self._address

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def get_device(self):
        return 0

    def dim(self):
        return len(self._shape)


Tensor.__module__ = "torch"  # the bindings take the torch launch path


def stand_in_torch():
    """A module object with the parts of torch the ops and bindings use."""
    import types

    torch = types.ModuleType("torch")
    torch.dtype = _Dtype
    for name in ("bfloat16", "float16", "float32", "int32", "int64",
                 "float8_e4m3fn", "float8_e5m2"):
        setattr(torch, name, _Dtype(name))
    torch.Tensor = Tensor
    torch.compiler = types.SimpleNamespace(is_compiling=lambda: False)
    grad = [False]
    torch.is_grad_enabled = lambda: grad[0]
    state = {"initialized": True, "device": 0}

    def _lazy_init():
        if state["initialized"]:
            return

    def current_device():
        _lazy_init()
        return torch._C._cuda_getDevice()

    torch._C = types.SimpleNamespace(
        _cuda_getDevice=lambda: state["device"],
        _cuda_getCurrentRawStream=lambda index: 0)
    torch.cuda = types.SimpleNamespace(
        current_device=current_device,
        set_device=lambda index: state.__setitem__("device", index),
        current_stream=lambda index=None: types.SimpleNamespace(
            cuda_stream=0, query=lambda: True))
    return torch


def write_bundle(directory: Path) -> Path:
    """A fake bundle of the overhead problem's kernel (the fake driver
    loads any bytes)."""
    manifest = json.loads((ROOT / "bench" / "host_overhead_manifest.json")
                          .read_text())
    (directory / "k.cubin").write_bytes(b"fake cubin")
    path = directory / "k.json"
    path.write_text(json.dumps(manifest))
    return path


def per_call(fn, calls):
    for _ in range(min(calls // 10, 1000)):
        fn()
    best = float("inf")
    for _ in range(5):  # best of 5: the machine is shared
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=ROOT / "build")
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--python", type=Path, default=ROOT / "python",
                        help="the ggemm package's parent directory (to "
                        "time another version of it)")
    parser.add_argument("--profile", action="store_true",
                        help="also print a cProfile of segment_matmul")
    args = parser.parse_args()
    sys.path.insert(0, str(args.python.resolve()))
    # The root project's build tree, or a standalone one of runtime/.
    runtime_dir = args.build.resolve() / "runtime"
    if not runtime_dir.is_dir():
        runtime_dir = args.build.resolve()
    os.environ["GGEMM_RUNTIME_LIB"] = str(runtime_dir / "libggemm_runtime.so")
    os.environ["GGEMM_CUDA_DRIVER"] = str(runtime_dir / "test" /
                                          "libggemm_fake_cuda.so")

    import ctypes

    import ggemm
    from ggemm import ops, runtime

    torch = stand_in_torch()
    sys.modules["torch"] = torch  # for the bindings' `import torch`
    ops.torch = torch
    ops._TORCH_DTYPE_NAMES = tuple(
        (getattr(torch, t), n) for t, n in (
            ("bfloat16", "bf16"), ("float16", "f16"), ("float32", "f32"),
            ("int32", "i32"), ("int64", "i64"), ("float8_e4m3fn", "f8e4m3"),
            ("float8_e5m2", "f8e5m2")))

    base = 0x1_0000_0000
    x = Tensor(base + 0x100000, (M, K), torch.bfloat16)
    w = Tensor(base + 0x200000, (G, N, K), torch.bfloat16)
    y = Tensor(base + 0x300000, (M, N), torch.bfloat16)
    seg = Tensor(base + 0x400000, (G + 1,), torch.int32)

    with tempfile.TemporaryDirectory() as tmp:
        kernel = ggemm.Kernel(write_bundle(Path(tmp)))
        ops.kernel_for = lambda problem, catalog=None: kernel

        # The C launch alone: one prepacked ctypes array, no Python packing.
        items = {"x": x, "w": w, "y": y, "seg_indptr": seg}
        array = (runtime._CTensor * 4)()
        for index, (name, tensor) in enumerate(items.items()):
            t = array[index]
            t.name = name.encode()
            t.data = tensor.data_ptr()
            t.dtype = int(runtime._DTYPES[tensor.dtype.name])
            t.rank = len(tensor.shape)
            for d, (e, s) in enumerate(zip(tensor.shape, tensor.stride())):
                t.shape[d], t.strides[d] = e, s
        library = runtime.load_library()
        launch = library.ggemm_kernel_launch
        handle = kernel._handle
        assert launch(handle, array, 4, None) == 0, library.ggemm_last_error()
        calls = {
            "ggemm.segment_matmul(out=y)":
                lambda: ggemm.segment_matmul(x, w, seg, out=y),
            "ggemm.Kernel.__call__":
                lambda: kernel(x=x, w=w, y=y, seg_indptr=seg),
            "C launch via ctypes (prepacked)":
                lambda: launch(handle, array, 4, None),
        }
        print(f"host time per call (best of 5 x {args.calls} calls, fake "
              f"driver, stand-in torch):")
        for name, fn in calls.items():
            print(f"  {name:36s} {per_call(fn, args.calls):6.2f} us",
                  flush=True)
        if args.profile:
            import cProfile
            import pstats
            profile = cProfile.Profile()
            profile.enable()
            for _ in range(args.calls):
                ggemm.segment_matmul(x, w, seg, out=y)
            profile.disable()
            pstats.Stats(profile).sort_stats("tottime").print_stats(15)
        kernel.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
