"""ctypes bindings for ``libggemm_runtime.so``, the kernel-bundle runtime.

A kernel bundle is what the GGEMM compiler writes: ``NAME.json`` (the
manifest, see ``docs/Runtime.md``) next to ``NAME.cubin`` and/or
``NAME.ptx``. :class:`Kernel` loads one and launches it on PyTorch tensors,
or on any object that looks like one (``data_ptr()``, ``shape``, ``stride()``
and ``dtype``), on the current CUDA stream. Launches never synchronise.

Example::

    import torch
    from ggemm.runtime import Kernel

    kernel = Kernel("bundles/segment_bf16.json")
    x = torch.randn(1000, 7168, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(8, 4096, 7168, device="cuda", dtype=torch.bfloat16)
    y = torch.empty(1000, 4096, device="cuda", dtype=torch.bfloat16)
    seg_indptr = torch.tensor([0, 100, 300, 300, 500, 650, 800, 900, 1000],
                              device="cuda", dtype=torch.int32)
    kernel(x=x, w=w, y=y, seg_indptr=seg_indptr)

The library is found through ``GGEMM_RUNTIME_LIB`` (a path to the ``.so``),
else next to this package, else in ``build/runtime/`` or ``build-rt/`` of the
source tree.
"""

from __future__ import annotations

import ctypes
import enum
import operator
import os
import struct
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

__all__ = [
    "ABI_VERSION",
    "DType",
    "GGemmError",
    "Kernel",
    "RuntimeLibraryNotFound",
    "Status",
    "library_candidates",
    "load_library",
]

#: The C API version these bindings were written for
#: (``GGEMM_RUNTIME_ABI_VERSION`` in ``ggemm_runtime.h``).
ABI_VERSION = 2

_MAX_RANK = 4
_LIBRARY_NAME = "libggemm_runtime.so"


class Status(enum.IntEnum):
    """``ggemm_status`` of the C API."""

    OK = 0
    INVALID_ARGUMENT = 1
    BAD_MANIFEST = 2
    NO_DRIVER = 3
    CUDA = 4
    UNSUPPORTED = 5
    IO = 6
    NO_CONTEXT = 7
    INTERNAL = 8


class DType(enum.IntEnum):
    """``ggemm_dtype`` of the C API."""

    BF16 = 0
    F16 = 1
    F32 = 2
    F8E4M3 = 3
    F8E5M2 = 4
    I32 = 5
    I64 = 6
    #: Signed 8-bit integers (``torch.int8``): INT8 GEMM operands.
    S8 = 7


class GGemmError(RuntimeError):
    """A failure reported by the runtime (or found before calling it).

    ``status`` is the :class:`Status` of the failed call, or ``None`` when the
    bindings rejected the request before reaching the library.

    Example::

        try:
            kernel(x=x, w=w.half(), y=y, seg_indptr=seg_indptr)
        except GGemmError as error:
            print(error.status, error)   # tensor 'w': expected dtype bf16 ...
    """

    def __init__(self, message: str, status: Optional[Status] = None) -> None:
        super().__init__(message)
        self.status = status


class RuntimeLibraryNotFound(GGemmError):
    """``libggemm_runtime.so`` was not found or does not match the bindings."""


# Names a tensor's dtype may print as (``str(torch.bfloat16)`` is
# "torch.bfloat16"); the "torch." prefix is dropped before the lookup.
_DTYPES: Dict[str, DType] = {
    "bfloat16": DType.BF16,
    "bf16": DType.BF16,
    "float16": DType.F16,
    "half": DType.F16,
    "f16": DType.F16,
    "float32": DType.F32,
    "float": DType.F32,
    "f32": DType.F32,
    "float8_e4m3fn": DType.F8E4M3,
    "f8e4m3": DType.F8E4M3,
    "float8_e5m2": DType.F8E5M2,
    "f8e5m2": DType.F8E5M2,
    "int32": DType.I32,
    "i32": DType.I32,
    "int64": DType.I64,
    "long": DType.I64,
    "i64": DType.I64,
    "int8": DType.S8,
    "s8": DType.S8,
}

#: Tensor names a kernel may take (which ones depends on its manifest;
#: ``dy`` and ``dw`` are segment_matmul_k's (with ``dy_scale`` and
#: ``x_scale`` in its FP8 form), ``row_indices`` (gather-A) and
#: ``scatter_indices`` segment_matmul's, ``y_scale`` (the 1x128 scales of
#: an e4m3 y) that of a kernel with ``y_scale_block``; a routing kernel
#: (sort_by_expert) takes ``topk_ids``, ``seg_indptr``, ``row_indices`` and
#: ``pair_indices``; a quantize kernel ``x``, ``q`` and ``scale``).
TENSOR_NAMES = ("x", "w", "y", "seg_indptr", "masked_m", "weight_indices",
                "bias", "row_scale", "x_scale", "w_scale", "dy", "dw",
                "row_indices", "scatter_indices", "topk_ids", "pair_indices",
                "q", "scale", "y_scale", "dy_scale")


class _CTensor(ctypes.Structure):
    """``ggemm_tensor``."""

    _fields_ = [
        ("name", ctypes.c_char_p),
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int),
        ("rank", ctypes.c_int),
        ("shape", ctypes.c_int64 * _MAX_RANK),
        ("strides", ctypes.c_int64 * _MAX_RANK),
    ]


_library: Optional[ctypes.CDLL] = None
_library_lock = threading.Lock()


def library_candidates() -> List[Path]:
    """Paths searched for ``libggemm_runtime.so``, in order.

    ``GGEMM_RUNTIME_LIB`` alone when set; else next to this package (and in
    its ``lib/``), the install prefix ``$GGEMM_PREFIX/lib``, the build tree
    ``$GGEMM_BUILD_DIR/runtime``, this interpreter's ``sys.prefix/lib``, and
    ``build/runtime/`` and ``build-rt/`` of the source tree the package
    sits in.

    Example::

        >>> [p.name for p in library_candidates()][:1]
        ['libggemm_runtime.so']
    """
    return search_paths(_LIBRARY_NAME, "GGEMM_RUNTIME_LIB", "runtime",
                        ["build/runtime", "build-rt"])


def search_paths(library_name: str, override_variable: str,
                 build_subdir: str, source_subdirs: List[str]) -> List[Path]:
    """Where a GGEMM library is looked for: ``$override_variable`` alone when
    set; else next to this package and in its ``lib/``, ``$GGEMM_PREFIX/lib``,
    ``$GGEMM_BUILD_DIR/build_subdir``, ``sys.prefix/lib``, then
    ``source_subdirs`` of the source tree the package sits in."""
    override = os.environ.get(override_variable)
    if override:
        return [Path(override)]
    package_dir = Path(__file__).resolve().parent
    candidates = [package_dir / library_name, package_dir / "lib" / library_name]
    prefix = os.environ.get("GGEMM_PREFIX")
    if prefix:
        candidates.append(Path(prefix) / "lib" / library_name)
    build_dir = os.environ.get("GGEMM_BUILD_DIR")
    if build_dir:
        candidates.append(Path(build_dir) / build_subdir / library_name)
    candidates.append(Path(sys.prefix) / "lib" / library_name)
    source_root = package_dir.parent.parent
    candidates += [source_root / sub / library_name for sub in source_subdirs]
    return candidates


def _declare(library: ctypes.CDLL) -> None:
    status = ctypes.c_int
    kernel_p = ctypes.c_void_p
    # const ggemm_tensor *: a _CTensor array or the bytes _pack returns.
    tensors_p = ctypes.c_void_p
    signatures = {
        "ggemm_runtime_abi_version": (ctypes.c_int, []),
        "ggemm_status_name": (ctypes.c_char_p, [ctypes.c_int]),
        "ggemm_last_error": (ctypes.c_char_p, []),
        "ggemm_kernel_load": (
            status, [ctypes.c_char_p, ctypes.POINTER(kernel_p)]),
        "ggemm_kernel_prepare": (status, [kernel_p]),
        "ggemm_kernel_launch": (
            status, [kernel_p, tensors_p, ctypes.c_int, ctypes.c_void_p]),
        "ggemm_kernel_launch_hinted": (
            status, [kernel_p, tensors_p, ctypes.c_int, ctypes.c_int64,
                     ctypes.c_void_p]),
        "ggemm_kernel_num_variants": (
            status, [kernel_p, ctypes.POINTER(ctypes.c_int)]),
        "ggemm_kernel_select_variant": (
            status, [kernel_p, tensors_p, ctypes.c_int, ctypes.c_int64,
                     ctypes.POINTER(ctypes.c_int)]),
        "ggemm_kernel_grid": (
            status,
            [kernel_p, tensors_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]),
        "ggemm_kernel_grid_for_sm_count": (
            status, [kernel_p, tensors_p, ctypes.c_int, ctypes.c_int,
                     ctypes.POINTER(ctypes.c_int)]),
        "ggemm_kernel_destroy": (None, [kernel_p]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(library, name)
        function.restype = restype
        function.argtypes = argtypes


def load_library(path: Optional[Union[str, os.PathLike]] = None
                 ) -> ctypes.CDLL:
    """Loads (once) and returns the runtime library.

    ``path`` overrides the search of :func:`library_candidates`. Raises
    :class:`RuntimeLibraryNotFound` when no library is found or its ABI
    version differs from :data:`ABI_VERSION`.

    Example::

        lib = load_library()
        lib = load_library("build-rt/libggemm_runtime.so")
    """
    global _library
    with _library_lock:
        if _library is not None and path is None:
            return _library
        candidates = [Path(path)] if path is not None else library_candidates()
        found = next((p for p in candidates if p.is_file()), None)
        if found is None:
            raise RuntimeLibraryNotFound(
                f"{_LIBRARY_NAME} not found (looked for "
                + ", ".join(str(p) for p in candidates)
                + "); build it with 'cmake -S runtime -B build-rt -G Ninja && "
                "ninja -C build-rt' and set GGEMM_RUNTIME_LIB to the .so "
                "(or GGEMM_PREFIX to its install prefix)")
        try:
            library = ctypes.CDLL(str(found))
            _declare(library)
        except (OSError, AttributeError) as error:
            raise RuntimeLibraryNotFound(
                f"cannot load {found}: {error}") from error
        version = library.ggemm_runtime_abi_version()
        if version != ABI_VERSION:
            raise RuntimeLibraryNotFound(
                f"{found} has C API version {version}, these bindings need "
                f"{ABI_VERSION}")
        if path is None:
            _library = library
        return library


def _check(library: ctypes.CDLL, status: int) -> None:
    if status == Status.OK:
        return
    message = library.ggemm_last_error().decode("utf-8", "replace")
    try:
        code: Optional[Status] = Status(status)
    except ValueError:
        code = None
    raise GGemmError(message, code)


def _dtype_of(name: str, tensor: Any) -> DType:
    dtype = getattr(tensor, "dtype", None)
    try:
        return _DTYPE_CACHE[dtype]
    except (KeyError, TypeError):
        pass
    text = str(dtype)
    key = text[len("torch."):] if text.startswith("torch.") else text
    if key not in _DTYPES:
        raise GGemmError(f"tensor '{name}': unsupported dtype {text}")
    try:
        _DTYPE_CACHE[dtype] = _DTYPES[key]
    except TypeError:  # unhashable stand-in
        pass
    return _DTYPES[key]


_DTYPE_CACHE: Dict[Any, DType] = {}

# ggemm_tensor: name and data pointers, dtype, rank, shape[4], strides[4];
# the same layout as _CTensor.
_TENSOR_LAYOUT = struct.Struct("=QQii4q4q")
assert _TENSOR_LAYOUT.size == ctypes.sizeof(_CTensor)
# The same per rank, with the unused shape and stride entries as zero pad
# bytes, so that a tensor packs with one call and no padding tuples.
_RANK_LAYOUTS = [
    struct.Struct("=QQii" + ("q" * rank + "x" * 8 * (_MAX_RANK - rank)) * 2)
    for rank in range(_MAX_RANK + 1)]
assert all(layout.size == _TENSOR_LAYOUT.size for layout in _RANK_LAYOUTS)

# NUL-terminated names that outlive every call.
_NAMES: Dict[str, Any] = {}
_NAME_ADDRESSES: Dict[str, int] = {}


def _name_address(name: str) -> int:
    address = _NAME_ADDRESSES.get(name)
    if address is None:
        buffer = ctypes.create_string_buffer(name.encode("ascii"))
        _NAMES[name] = buffer
        address = _NAME_ADDRESSES[name] = ctypes.addressof(buffer)
    return address


# Whether a tensor type is torch's, by type: the check runs per tensor.
_TORCH_TYPES: Dict[type, bool] = {}


def _is_torch_tensor(tensor: Any) -> bool:
    kind = type(tensor)
    known = _TORCH_TYPES.get(kind)
    if known is None:
        known = _TORCH_TYPES[kind] = kind.__module__.split(".")[0] == "torch"
    return known


class _DLTensor(ctypes.Structure):
    """DLPack's DLTensor (dlpack.h), the head of a "dltensor" capsule's
    DLManagedTensor."""
    _fields_ = [("data", ctypes.c_void_p),
                ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8),
                ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


# DLPack (code, bits) -> DType; lanes must be 1.
_DLPACK_DTYPES = {(4, 16): DType.BF16, (2, 16): DType.F16, (2, 32): DType.F32,
                  (10, 8): DType.F8E4M3, (12, 8): DType.F8E5M2,
                  (0, 8): DType.S8, (0, 32): DType.I32, (0, 64): DType.I64}
_DL_CUDA = 2  # kDLCUDA
_DL_DEVICE_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA host", 13: "CUDA managed"}

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

# Whether a type is a DLPack producer without PyTorch's accessors, by type.
_DLPACK_TYPES: Dict[type, bool] = {}


def _is_dlpack_only(tensor: Any) -> bool:
    kind = type(tensor)
    known = _DLPACK_TYPES.get(kind)
    if known is None:
        known = _DLPACK_TYPES[kind] = (
            hasattr(kind, "__dlpack__") and hasattr(kind, "__dlpack_device__")
            and not hasattr(kind, "data_ptr"))
    return known


def _dlpack_bytes(name: str, tensor: Any, stream: Optional[int]) -> bytes:
    """The ggemm_tensor of a DLPack producer (CuPy, JAX, NumPy-like arrays;
    no torch needed). ``stream`` is the launch's CUstream (None: the legacy
    default stream), passed to ``__dlpack__`` so that the producer orders
    its pending work before the launch, as the protocol asks."""
    try:
        device_type, _ = tensor.__dlpack_device__()
    except Exception as error:  # noqa: BLE001 - the producer's own failure
        raise GGemmError(f"tensor '{name}': __dlpack_device__() failed "
                         f"({error})") from error
    if int(device_type) != _DL_CUDA:
        kind = _DL_DEVICE_NAMES.get(int(device_type), f"type {device_type}")
        raise GGemmError(f"tensor '{name}' must be a CUDA tensor, got a "
                         f"DLPack tensor on device {kind}")
    try:
        capsule = tensor.__dlpack__(stream=stream)
        address = _capsule_pointer(capsule, b"dltensor")
    except Exception as error:  # noqa: BLE001 - the producer's own failure
        raise GGemmError(f"tensor '{name}': __dlpack__() did not give a "
                         f"'dltensor' capsule ({error})") from error
    # The capsule keeps the producer's memory alive while it is read; the
    # launch then relies on the caller keeping the array alive, as it does
    # for torch tensors.
    dl = _DLTensor.from_address(address)
    dtype = _DLPACK_DTYPES.get((dl.code, dl.bits)) if dl.lanes == 1 else None
    if dtype is None:
        raise GGemmError(f"tensor '{name}': unsupported DLPack dtype (code "
                         f"{dl.code}, bits {dl.bits}, lanes {dl.lanes})")
    rank = dl.ndim
    if not 0 <= rank <= _MAX_RANK:
        raise GGemmError(f"tensor '{name}': rank {rank} is not supported (at "
                         f"most {_MAX_RANK} dimensions)")
    shape = [dl.shape[i] for i in range(rank)]
    if dl.strides:
        strides = [dl.strides[i] for i in range(rank)]
    else:  # compact row-major
        strides, step = [0] * rank, 1
        for i in reversed(range(rank)):
            strides[i] = step
            step *= shape[i]
    data = (dl.data or 0) + dl.byte_offset
    return _RANK_LAYOUTS[rank].pack(_name_address(name), data, dtype, rank,
                                    *shape, *strides)


def _tensor_bytes(name: str, tensor: Any,
                  stream: Optional[int] = None) -> bytes:
    """The ggemm_tensor of a tensor-like object: PyTorch's protocol
    (data_ptr(), shape, stride(), dtype), or DLPack's."""
    if _is_dlpack_only(tensor):
        return _dlpack_bytes(name, tensor, stream)
    try:
        is_cuda = tensor.is_cuda  # cheaper than .device
    except AttributeError:
        is_cuda = getattr(getattr(tensor, "device", None), "type",
                          "cuda") == "cuda"
    if not is_cuda:
        raise GGemmError(f"tensor '{name}' must be a CUDA tensor, got device "
                         f"{getattr(tensor, 'device', 'cpu')}")
    try:
        data = int(tensor.data_ptr())
        shape = tensor.shape
        strides = tensor.stride()
        rank = len(shape)
        stride_count = len(strides)
    except (AttributeError, TypeError) as error:
        raise GGemmError(
            f"tensor '{name}' must provide data_ptr(), shape and stride() "
            f"like a torch.Tensor ({error})") from error
    if rank > _MAX_RANK or stride_count != rank:
        raise GGemmError(
            f"tensor '{name}': rank {rank} with {stride_count} strides is "
            f"not supported (at most {_MAX_RANK} dimensions)")
    try:
        dtype = _DTYPE_CACHE[tensor.dtype]
    except (KeyError, TypeError):
        dtype = _dtype_of(name, tensor)
    try:
        return _RANK_LAYOUTS[rank].pack(_name_address(name), data, dtype,
                                        rank, *shape, *strides)
    except (struct.error, TypeError) as error:
        raise GGemmError(f"tensor '{name}': shape {list(shape)} and strides "
                         f"{list(strides)} must be integers in int64 "
                         f"({error})") from error


def _pack_tensor(array: "ctypes.Array[_CTensor]", index: int, name: str,
                 tensor: Any) -> None:
    """Writes a tensor-like object (PyTorch's protocol) into array[index]."""
    size = _TENSOR_LAYOUT.size
    ctypes.memmove(ctypes.addressof(array) + index * size,
                   _tensor_bytes(name, tensor), size)


def _pack(tensors: Any, stream: Optional[int] = None
          ) -> Tuple[bytes, int, Any]:
    """The C tensors of (name, tensor) pairs whose tensor is not None, packed
    back to back (a ggemm_tensor array); their count; the first torch
    tensor among them. ``stream`` goes to DLPack producers."""
    parts = []
    torch_tensor = None
    for name, tensor in tensors:
        if tensor is None:
            continue
        parts.append(_tensor_bytes(name, tensor, stream))
        if torch_tensor is None and _is_torch_tensor(tensor):
            torch_tensor = tensor
    return b"".join(parts), len(parts), torch_tensor


def _stream_handle(stream: Any) -> Optional[int]:
    if stream is None:
        return None
    handle = getattr(stream, "cuda_stream", stream)
    return int(handle) or None


def _current_raw_stream(torch: Any, device_index: int) -> Optional[int]:
    """The current PyTorch stream of a device as a CUstream handle."""
    # The private accessor avoids building a torch.cuda.Stream per launch
    # (Triton uses it for the same reason); fall back to the public API.
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return int(raw(device_index)) or None
    return int(torch.cuda.current_stream(device_index).cuda_stream) or None


class _TorchAccessors:
    """torch's current device and stream accessors, looked up once (a launch
    would otherwise import torch and walk torch.cuda's wrappers per call)."""

    def __init__(self, torch: Any) -> None:
        self.module = torch
        self.set_device = torch.cuda.set_device
        # torch.cuda.current_device() is _lazy_init() then this; a launch
        # holds a CUDA tensor, so CUDA is initialised already.
        self.current_device = getattr(torch._C, "_cuda_getDevice",
                                      torch.cuda.current_device)
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is None:
            self.current_raw_stream = (
                lambda index: _current_raw_stream(torch, index))
        else:
            self.current_raw_stream = lambda index: int(raw(index)) or None


_torch_accessors_instance: Optional[_TorchAccessors] = None


def _torch_accessors() -> _TorchAccessors:
    global _torch_accessors_instance
    accessors = _torch_accessors_instance
    if accessors is None:
        import torch  # Only needed for torch tensors.

        accessors = _torch_accessors_instance = _TorchAccessors(torch)
    return accessors


class Kernel:
    """A loaded kernel bundle.

    ``Kernel(path)`` reads the manifest and the cubin/PTX it names; the module
    is loaded into a CUDA context by the first launch there. Call the kernel
    with its tensors by keyword; which ones it takes depends on the manifest's
    ``problem`` (``x``, ``w``, ``y`` always; ``seg_indptr`` for
    segment_matmul, ``masked_m`` for masked_matmul; ``weight_indices``,
    ``bias`` and ``row_scale`` when the kernel was compiled with them;
    ``x_scale`` and ``w_scale``, f32, for fp8 block-scaled kernels; a
    segment_matmul_k kernel, the weight gradient
    ``dw[g] = dy[s_g:s_(g+1)].T @ x[s_g:s_(g+1)]``, takes ``dy``, ``x``,
    ``seg_indptr`` and ``dw`` only).

    Example::

        kernel = Kernel("bundles/segment_bf16.json")
        kernel(x=x, w=w, y=y, seg_indptr=seg_indptr)  # current stream
        kernel(x=x, w=w, y=y, seg_indptr=seg_indptr, stream=stream)
        print(kernel.grid(x=x, w=w, y=y, seg_indptr=seg_indptr))

    An fp8 kernel with "1x128" x scales and "128x128" w scales (M rows,
    KB = ceil(K / 128), NB = ceil(N / 128)) wants x_scale MN-major, its k
    blocks a multiple of 4 rows apart::

        m_pad = (m + 3) // 4 * 4
        x_scale = torch.empty(kb, m_pad, device="cuda").t()[:m]
        w_scale = torch.empty(num_weights, nb, kb, device="cuda")
        fp8_kernel(x=x, w=w, y=y, seg_indptr=seg_indptr, x_scale=x_scale,
                   w_scale=w_scale)

    A segment_matmul_k kernel (``dw`` [G, N, K] for weight layout "nk",
    [G, K, N] for "kn")::

        grad_kernel(dy=dy, x=x, seg_indptr=seg_indptr, dw=dw)

    A routing kernel (``ggemm.sort_by_expert``'s: ``topk_ids`` [P],
    ``seg_indptr`` [E + 1], ``row_indices`` and ``pair_indices`` [P])::

        route_kernel.launch({"topk_ids": ids, "seg_indptr": seg_indptr,
                             "row_indices": rows, "pair_indices": pairs})
    """

    def __init__(self, manifest_path: Union[str, os.PathLike],
                 library: Optional[ctypes.CDLL] = None) -> None:
        self._library = library if library is not None else load_library()
        self._handle: Optional[int] = None
        self.manifest_path = os.fspath(manifest_path)
        handle = ctypes.c_void_p()
        status = self._library.ggemm_kernel_load(
            os.fsencode(self.manifest_path), ctypes.byref(handle))
        _check(self._library, status)
        self._handle = handle.value

    def close(self) -> None:
        """Unloads the kernel's modules; the kernel cannot be used after."""
        if self._handle is not None:
            self._library.ggemm_kernel_destroy(self._handle)
            self._handle = None

    def __enter__(self) -> "Kernel":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __del__(self) -> None:
        # At interpreter exit the library may already be gone.
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing useful to do at exit
            pass

    def _require_handle(self) -> int:
        if self._handle is None:
            raise GGemmError("the kernel is closed")
        return self._handle

    @staticmethod
    def _marshal(tensors: Mapping[str, Any]) -> Tuple[bytes, int, Any]:
        """C tensors for the non-None entries (packed ``ggemm_tensor``
        structs), their count, and a torch tensor if any."""
        return _pack(tensors.items())

    def launch(self, tensors: Mapping[str, Any], stream: Any = None,
               expected_m: Optional[int] = None) -> None:
        """Launches with ``tensors`` given by name (``None`` means absent).

        ``stream`` is a ``torch.cuda.Stream``, a raw ``CUstream`` handle (an
        int) or ``None``: the current PyTorch stream of the tensors' device
        for torch tensors, the legacy default stream otherwise.
        ``expected_m`` (rows per group the caller expects, e.g. DeepGEMM's
        hint for masked layouts) picks among a multi-variant bundle's
        kernels; see :meth:`select_variant`.

        Example::

            kernel.launch({"x": x, "w": w, "y": y, "seg_indptr": indptr})
        """
        self._launch(tensors.items(), stream, expected_m)

    def _launch(self, tensors: Any, stream: Any,
                expected_m: Optional[int] = None) -> None:
        """:meth:`launch` for an iterable of (name, tensor) pairs."""
        handle = self._handle
        if handle is None:
            raise GGemmError("the kernel is closed")
        launch_c = (self._library.ggemm_kernel_launch if expected_m is None
                    else self._launcher(expected_m))
        packed, count, torch_tensor = _pack(tensors, _stream_handle(stream))
        library = self._library
        if torch_tensor is None:
            status = launch_c(handle, packed, count, _stream_handle(stream))
            if status:
                _check(library, status)
            return

        torch = _torch_accessors()
        index = torch_tensor.get_device()
        previous = torch.current_device()
        switch = index != previous
        if switch:
            torch.set_device(index)
        try:
            if stream is None:
                raw_stream = torch.current_raw_stream(index)
            else:
                raw_stream = _stream_handle(stream)
            status = launch_c(handle, packed, count, raw_stream)
            if status == Status.NO_CONTEXT:
                # A thread that has not used CUDA yet has no current context.
                # Any CUDA runtime call binds the device's primary context
                # (the one PyTorch uses) to the thread; a stream query neither
                # blocks nor enqueues work.
                torch.module.cuda.current_stream(index).query()
                status = launch_c(handle, packed, count, raw_stream)
        finally:
            if switch:
                torch.set_device(previous)
        if status:
            _check(library, status)

    def __call__(self, *, x: Any, w: Any = None, y: Any = None,
                 seg_indptr: Any = None, masked_m: Any = None,
                 weight_indices: Any = None, bias: Any = None,
                 row_scale: Any = None, x_scale: Any = None,
                 w_scale: Any = None, dy: Any = None, dw: Any = None,
                 y_scale: Any = None, dy_scale: Any = None,
                 stream: Any = None,
                 expected_m: Optional[int] = None) -> None:
        """Launches the kernel; see :meth:`launch` for ``stream`` and
        ``expected_m``. Which tensors are required is the manifest's to say
        (``w`` and ``y`` for every op but segment_matmul_k, which takes
        ``dy`` and ``dw`` instead, and ``dy_scale`` and ``x_scale`` in its
        FP8 form; ``y_scale`` with an e4m3 y); the runtime names a missing
        one.

        Example::

            kernel(x=x, w=w, y=y, seg_indptr=seg_indptr, bias=bias)
            fp8_kernel(x=x, w=w, y=y, seg_indptr=seg_indptr,
                       x_scale=x_scale, w_scale=w_scale)
            masked_kernel(x=x, w=w, y=y, masked_m=counts, expected_m=20)
            grad_kernel(dy=dy, x=x, seg_indptr=seg_indptr, dw=dw)
            fp8_grad_kernel(dy=dy_t, x=x_t, seg_indptr=seg_indptr, dw=dw,
                            dy_scale=dy_scale, x_scale=x_scale)
            fp8_out_kernel(x=x, w=w, y=y_e4m3, seg_indptr=seg_indptr,
                           y_scale=y_scale)
        """
        self._launch((("x", x), ("w", w), ("y", y),
                      ("seg_indptr", seg_indptr), ("masked_m", masked_m),
                      ("weight_indices", weight_indices), ("bias", bias),
                      ("row_scale", row_scale), ("x_scale", x_scale),
                      ("w_scale", w_scale), ("dy", dy), ("dw", dw),
                      ("y_scale", y_scale), ("dy_scale", dy_scale)),
                     stream, expected_m)

    @staticmethod
    def _check_expected_m(expected_m: Optional[int]) -> int:
        """The C API's hint: 0 for none; a positive int otherwise."""
        if expected_m is None:
            return 0
        try:
            value = None if isinstance(expected_m, bool) \
                else operator.index(expected_m)
        except TypeError:
            value = None
        if value is None or value <= 0 or value >= 2 ** 63:
            raise GGemmError(f"expected_m: expected None or a positive "
                             f"integer, got {expected_m!r}")
        return value

    def _launcher(self, expected_m: Optional[int]) -> Any:
        """The C launch for ``expected_m``: ``(handle, tensors, count,
        stream) -> status``."""
        hint = self._check_expected_m(expected_m)
        if hint == 0:
            return self._library.ggemm_kernel_launch
        hinted = self._library.ggemm_kernel_launch_hinted
        return lambda handle, array, count, stream: hinted(
            handle, array, count, hint, stream)

    @property
    def num_variants(self) -> int:
        """Kernel variants in the bundle (1 for a version 1 manifest).

        Example::

            if kernel.num_variants > 1:
                print(kernel.select_variant(x=x, w=w, y=y, seg_indptr=p))
        """
        count = ctypes.c_int(0)
        _check(self._library, self._library.ggemm_kernel_num_variants(
            self._require_handle(), ctypes.byref(count)))
        return count.value

    def select_variant(self, *, expected_m: Optional[int] = None,
                       **tensors: Any) -> int:
        """The index (in the manifest's ``variants``) of the kernel a launch
        with ``tensors`` and ``expected_m`` would run; 0 for a single-kernel
        bundle. The choice is made on the host from the shapes and the hint
        only (docs/Runtime.md, "Variants"), so a CUDA graph keeps the
        variant chosen at capture. Needs no GPU.

        Example::

            kernel.select_variant(x=x, w=w, y=y, masked_m=counts,
                                  expected_m=20)
        """
        handle = self._require_handle()
        unknown = sorted(set(tensors) - set(TENSOR_NAMES))
        if unknown:
            raise GGemmError(f"unknown tensor names: {', '.join(unknown)}")
        hint = self._check_expected_m(expected_m)
        array, count, _ = self._marshal(tensors)
        variant = ctypes.c_int(-1)
        _check(self._library, self._library.ggemm_kernel_select_variant(
            handle, array, count, hint, ctypes.byref(variant)))
        return variant.value

    def prepare(self) -> None:
        """Loads the module into the current CUDA context now.

        Do this before capturing launches into a CUDA graph, so that the
        capture loads nothing.

        Example::

            kernel.prepare()
        """
        _check(self._library,
               self._library.ggemm_kernel_prepare(self._require_handle()))

    def grid(self, *, sm_count: Optional[int] = None, **tensors: Any) -> int:
        """The grid size a launch with ``tensors`` would use (0: no launch).

        With ``sm_count`` the "persistent" policy assumes a device of that
        many multiprocessors and the driver is not needed; without it the
        current context's device is asked.

        Example::

            kernel.grid(sm_count=132, x=x, w=w, y=y, seg_indptr=seg_indptr)
        """
        handle = self._require_handle()
        unknown = sorted(set(tensors) - set(TENSOR_NAMES))
        if unknown:
            raise GGemmError(f"unknown tensor names: {', '.join(unknown)}")
        array, count, _ = self._marshal(tensors)
        grid_x = ctypes.c_int(0)
        if sm_count is None:
            status = self._library.ggemm_kernel_grid(handle, array, count,
                                                     ctypes.byref(grid_x))
        else:
            status = self._library.ggemm_kernel_grid_for_sm_count(
                handle, array, count, int(sm_count), ctypes.byref(grid_x))
        _check(self._library, status)
        return grid_x.value
