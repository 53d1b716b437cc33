"""End-to-end check of the runtime on a Hopper GPU with PyTorch.

Launches ProbeKernel.cu through ggemm.Kernel and checks, on the device:
TMA descriptors (dims, strides, padded rows, 128-byte swizzle, zero fill out
of bounds), pointer and scalar parameters, the persistent and tiles grids, a
cluster launch, the cubin and PTX-only paths, CUDA-graph capture, a launch
from a thread that never used CUDA, and the errors for host memory.

Usage (run.sh does this): python3 probe.py PROBE.cubin PROBE.ptx
Exits non-zero on the first failed check.
"""

from __future__ import annotations

import ctypes
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "python"))

from ggemm.runtime import GGemmError, Kernel, Status  # noqa: E402

M, N, K, GROUPS = 300, 256, 192, 3
LDA, LDY = 256, 264  # padded rows of x and y
X_COLUMN, X_ROW = 64, 256
W_COLUMN, W_ROW, W_GROUP = 128, 128, 2
DEBUG_ROW = 200


def manifest(cubin: bool, cluster: int = 1, policy: str = "persistent",
             masked: bool = False) -> Dict[str, Any]:
    bundle: Dict[str, Any] = {
        "format": "ggemm-bundle", "version": 1,
        "entry": "ggemm_probe_masked_kernel" if masked else
                 "ggemm_probe_kernel",
        "ptx": "probe.ptx",
        "arch": "sm_90a",
        "block": [128, 1, 1],
        "cluster": [cluster, 1, 1],
        "dynamic_smem": 2 * 128 * 128 + 1024 + 32 * 1024,  # > 48 KB
        "problem": {
            "op": "masked_matmul" if masked else "segment_matmul",
            "a_dtype": "bf16", "b_dtype": "bf16", "out_dtype": "f32",
            "index_dtype": "i32", "weight_layout": "nk",
            "m": -1, "n": N, "k": K, "num_groups": -1, "num_weights": -1,
        },
        "tile": {"block_m": 128, "block_n": 128, "block_k": 64,
                 "stages": 1},
        "grid": {"policy": policy, "ctas_per_sm": 1},
        "params": [
            {"name": "a_desc", "kind": "tma_descriptor", "tensor": "x",
             "dtype": "bf16", "rank": 3 if masked else 2,
             "box": [64, 128, 1] if masked else [64, 128],
             "swizzle": "128B", "oob_fill": "zero"},
            {"name": "b_desc", "kind": "tma_descriptor", "tensor": "w",
             "dtype": "bf16", "rank": 3, "box": [64, 128, 1],
             "swizzle": "128B", "oob_fill": "zero"},
            {"name": "y", "kind": "pointer", "tensor": "y"},
            {"name": "group_rows", "kind": "pointer",
             "tensor": "masked_m" if masked else "seg_indptr"},
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
            {"name": "ldy", "kind": "scalar", "dtype": "i64",
             "value": "ldy"},
        ],
    }
    if cubin:
        bundle["cubin"] = "probe.cubin"
    return bundle


def write_bundle(directory: Path, name: str, cubin_path: Path,
                 ptx_path: Path, **options: Any) -> Path:
    shutil.copy(cubin_path, directory / "probe.cubin")
    shutil.copy(ptx_path, directory / "probe.ptx")
    path = directory / f"{name}.json"
    path.write_text(json.dumps(manifest(**options), indent=2))
    return path


class Tensors:
    def __init__(self) -> None:
        device = "cuda"
        self.x_storage = torch.randn(M, LDA, device=device).bfloat16()
        self.x = self.x_storage[:, :K]
        self.w = torch.randn(GROUPS, N, K, device=device).bfloat16()
        self.y_storage = torch.full((M, LDY), -1.0, device=device)
        self.y = self.y_storage[:, :N]
        self.seg_indptr = torch.tensor([0, 100, 250, M], device=device,
                                       dtype=torch.int32)

    def args(self) -> Dict[str, Any]:
        return {"x": self.x, "w": self.w, "y": self.y,
                "seg_indptr": self.seg_indptr}


def check(condition: bool, what: str) -> None:
    if not condition:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}")


def check_masked_probe(kernel: Kernel, sms: int) -> None:
    """masked_matmul with a rank-3 descriptor of x: [groups, rows, k]."""
    groups, rows = 3, 192
    x = torch.randn(groups, rows, LDA, device="cuda").bfloat16()[:, :, :K]
    w = torch.randn(groups, N, K, device="cuda").bfloat16()
    y_storage = torch.full((groups, rows, LDY), -1.0, device="cuda")
    y = y_storage[:, :, :N]
    masked_m = torch.tensor([150, 100, 50], device="cuda", dtype=torch.int32)
    tiles = (N // 128) * groups * (-(-rows // 128))
    kernel(x=x, w=w, y=y, masked_m=masked_m)
    torch.cuda.synchronize()
    flat = y_storage.reshape(groups * rows, LDY)[:, :N].cpu()
    x_box = torch.zeros(128, 64)
    # Rows 128..191 of group 1, then zeros: group 2 is out of the box's
    # group, which only a rank-3 descriptor knows.
    valid = x[1, 128:rows, 64:128].float().cpu()
    x_box[:valid.shape[0]] = valid
    check(torch.equal(flat[:128, :64], x_box),
          "masked: x box through a rank-3 descriptor (zero past the group)")
    check(torch.equal(flat[:128, 64:128],
                      w[2, 128:256, 128:192].float().cpu()),
          "masked: w box")
    debug = flat[150, :13].tolist()
    expected = [groups * rows, rows, groups, N, K, LDY, min(sms, tiles), 50,
                0, 0, 0, 1, 2 * 128 * 128 + 1024 + 32 * 1024]
    check(debug == expected, f"masked: scalars {debug}")


def check_probe(t: Tensors, expected_grid: int, cluster: int,
                label: str) -> None:
    torch.cuda.synchronize()
    y = t.y.float().cpu()
    x_box = torch.zeros(128, 64)
    rows = t.x[X_ROW:X_ROW + 128, X_COLUMN:X_COLUMN + 64].float().cpu()
    x_box[:rows.shape[0]] = rows  # rows >= M are zero (out of bounds)
    w_box = t.w[W_GROUP, W_ROW:W_ROW + 128,
                W_COLUMN:W_COLUMN + 64].float().cpu()
    check(torch.equal(y[:128, :64], x_box),
          f"{label}: x box through the A descriptor (padded rows, swizzle, "
          "zero fill)")
    check(torch.equal(y[:128, 64:128], w_box),
          f"{label}: w box through the B descriptor (group {W_GROUP})")
    debug = y[DEBUG_ROW, :13].tolist()
    expected = [M, 0, GROUPS, N, K, LDY, expected_grid, M, 0, 0, 0, cluster,
                2 * 128 * 128 + 1024 + 32 * 1024]
    check(debug == expected, f"{label}: scalars, pointers, grid, cluster "
          f"and shared memory {debug}")


def main() -> None:
    cubin_path, ptx_path = Path(sys.argv[1]), Path(sys.argv[2])
    torch.manual_seed(0)
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    print(f"device: {props.name}, {sms} SMs, torch {torch.__version__}")
    tiles = (N // 128) * (-(-M // 128) + GROUPS)  # tile bound: 2 * (3 + 3)

    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        kernel = Kernel(write_bundle(root, "cubin", cubin_path, ptx_path,
                                     cubin=True))
        t = Tensors()
        check(kernel.grid(**t.args()) == min(sms, tiles),
              "grid query uses the device's SM count")
        kernel(**t.args())
        check_probe(t, min(sms, tiles), 1, "cubin")

        # PTX only: JIT-compiled by the driver.
        ptx_kernel = Kernel(write_bundle(root, "ptx", cubin_path, ptx_path,
                                         cubin=False))
        t = Tensors()
        ptx_kernel(**t.args(), stream=torch.cuda.Stream())
        torch.cuda.synchronize()
        t2 = Tensors()
        ptx_kernel(**t2.args())
        check_probe(t2, min(sms, tiles), 1, "ptx")

        # masked_matmul with a rank-3 descriptor.
        masked_kernel = Kernel(write_bundle(root, "masked", cubin_path,
                                            ptx_path, cubin=True,
                                            masked=True))
        check_masked_probe(masked_kernel, sms)

        # A cluster of 2 with the "tiles" policy.
        cluster_kernel = Kernel(write_bundle(
            root, "cluster", cubin_path, ptx_path, cubin=True, cluster=2,
            policy="tiles"))
        t = Tensors()
        cluster_kernel(**t.args())
        check_probe(t, tiles, 2, "cluster")

        # CUDA graph: capture once, replay with new inputs.
        t = Tensors()
        kernel.prepare()
        stream = torch.cuda.Stream()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            kernel(**t.args())
        t.x.copy_(torch.randn_like(t.x.float()).bfloat16())
        t.y_storage.fill_(-1)
        graph.replay()
        check_probe(t, min(sms, tiles), 1, "graph replay")

        # A thread that has not used CUDA yet: the bindings bind the context.
        t = Tensors()
        errors = []

        def worker() -> None:
            try:
                # What the C runtime sees in a thread that never used CUDA.
                array, num_tensors, _ = Kernel._marshal(t.args())
                status = kernel._library.ggemm_kernel_launch(
                    kernel._handle, array, num_tensors, None)
                print(f"fresh thread, direct C launch: {Status(status).name}")
                kernel(**t.args())
            except Exception as error:  # noqa: BLE001 - reported below
                errors.append(error)

        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        check(not errors, f"launch from a fresh thread {errors}")
        check_probe(t, min(sms, tiles), 1, "fresh thread")

        # Pointers that are not device memory, seen by the real driver.
        class Raw:
            def __init__(self, like: torch.Tensor, address: int) -> None:
                self.shape, self.dtype = like.shape, like.dtype
                self._stride, self._address = like.stride(), address

            def data_ptr(self) -> int:
                return self._address

            def stride(self) -> tuple:
                return self._stride

        t = Tensors()
        pinned = torch.empty(GROUPS + 1, dtype=torch.int32).pin_memory()
        try:
            kernel(**dict(t.args(), seg_indptr=Raw(t.seg_indptr,
                                                   pinned.data_ptr())))
            check(False, "pinned host memory is rejected")
        except GGemmError as error:
            check(error.status == Status.INVALID_ARGUMENT
                  and "is not device memory of device 0" in str(error),
                  f"pinned host memory is rejected: {error}")
        host = ctypes.create_string_buffer(4096)
        address = (ctypes.addressof(host) + 15) // 16 * 16
        try:
            kernel(**dict(t.args(), seg_indptr=Raw(t.seg_indptr, address)))
            check(False, "pageable host memory is rejected")
        except GGemmError as error:
            check(error.status == Status.INVALID_ARGUMENT
                  and "is not device memory of device 0" in str(error),
                  f"pageable host memory is rejected: {error}")

        # Host cost of a launch (validation, encoding, cuLaunchKernelEx).
        t = Tensors()
        args = t.args()
        for _ in range(10):
            kernel(**args)
        torch.cuda.synchronize()
        count = 2000
        start = time.perf_counter()
        for _ in range(count):
            kernel(**args)
        elapsed = time.perf_counter() - start
        torch.cuda.synchronize()
        print(f"host time per Python launch: {elapsed / count * 1e6:.1f} us")
        # The same without the Python layer: the C runtime's own cost.
        array, num_tensors, _ = Kernel._marshal(args)
        raw_stream = torch.cuda.current_stream().cuda_stream or None
        launch = kernel._library.ggemm_kernel_launch
        handle = kernel._handle
        start = time.perf_counter()
        for _ in range(count):
            status = launch(handle, array, num_tensors, raw_stream)
        elapsed = time.perf_counter() - start
        check(status == 0, "direct C launches succeed")
        torch.cuda.synchronize()
        print(f"host time per C launch (through ctypes): "
              f"{elapsed / count * 1e6:.1f} us")
        for loaded in (kernel, ptx_kernel, cluster_kernel, masked_kernel):
            loaded.close()
    print("ALL PROBES PASSED")


if __name__ == "__main__":
    main()
