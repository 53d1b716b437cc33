"""Compiling ggemm IR to kernel bundles from Python.

ctypes over the compiler's C API (``libGGemmCAPI.so``, see
``include/ggemm-c/GGemm.h``): the same registered pipelines as ``gemm-opt``,
never a second copy of them. Compiled bundles are cached on disk, keyed by
the hash of the IR, the pipeline and the compiler library.

Example::

    import ggemm
    paths = ggemm.compile_bundles(open("examples/segment_matmul_bf16.mlir").read(),
                                  "out")
    kernel = ggemm.Kernel(paths["moe_up_kernel"])
"""

import contextlib
import ctypes
import hashlib
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple, Union

from .runtime import GGemmError

_LIBRARY_NAME = "libGGemmCAPI.so"
_library: Optional[ctypes.CDLL] = None
_lock = threading.Lock()


class CompilerError(GGemmError):
    """The compiler rejected the IR or the pipeline; the message holds its
    diagnostics."""


def compiler_library_candidates() -> List[Path]:
    """Paths searched for ``libGGemmCAPI.so``, in order.

    Example::

        >>> compiler_library_candidates()[-1].name
        'libGGemmCAPI.so'
    """
    override = os.environ.get("GGEMM_COMPILER_LIB")
    if override:
        return [Path(override)]
    package_dir = Path(__file__).resolve().parent
    candidates = [package_dir / _LIBRARY_NAME]
    build_dir = os.environ.get("GGEMM_BUILD_DIR")
    if build_dir:
        candidates.append(Path(build_dir) / "lib" / _LIBRARY_NAME)
    candidates.append(package_dir.parent.parent / "build" / "lib" / _LIBRARY_NAME)
    return candidates


def load_compiler(path: Optional[Union[str, os.PathLike]] = None) -> ctypes.CDLL:
    """Loads (once) and returns the compiler's C API library.

    Example::

        lib = load_compiler()
    """
    global _library
    with _lock:
        if _library is not None and path is None:
            return _library
        candidates = [Path(path)] if path is not None else compiler_library_candidates()
        found = next((p for p in candidates if p.is_file()), None)
        if found is None:
            raise CompilerError(
                f"{_LIBRARY_NAME} not found (looked for "
                + ", ".join(str(p) for p in candidates)
                + "); build the project (scripts/setup.sh) or set GGEMM_COMPILER_LIB")
        library = ctypes.CDLL(str(found))
        handle, module = ctypes.c_void_p, ctypes.c_void_p
        signatures = {
            "ggemmCompilerCreate": (handle, []),
            "ggemmCompilerDestroy": (None, [handle]),
            "ggemmCompilerLastError": (ctypes.c_char_p, [handle]),
            "ggemmModuleParse": (module, [handle, ctypes.c_char_p, ctypes.c_size_t]),
            "ggemmModuleParseNamed": (module, [handle, ctypes.c_char_p, ctypes.c_size_t,
                                               ctypes.c_char_p]),
            "ggemmModuleDestroy": (None, [module]),
            "ggemmModuleRunPipeline": (ctypes.c_int, [module, ctypes.c_char_p]),
            "ggemmModulePrint": (ctypes.c_void_p, [module, ctypes.c_int]),
            "ggemmModuleExportBundles": (ctypes.c_int, [module, ctypes.c_char_p]),
            "ggemmFreeString": (None, [ctypes.c_void_p]),
        }
        for name, (restype, argtypes) in signatures.items():
            function = getattr(library, name)
            function.restype = restype
            function.argtypes = argtypes
        library.ggemm_path = str(found)
        if path is None:
            _library = library
        return library


def _library_digest(library: ctypes.CDLL) -> str:
    stat = os.stat(library.ggemm_path)
    return f"{library.ggemm_path}:{stat.st_size}:{stat.st_mtime_ns}"


@contextlib.contextmanager
def _module_after(source: str, pipeline: str, source_name: str
                  ) -> Iterator[Tuple[ctypes.CDLL, int, int]]:
    """Parses ``source`` (diagnostics call it ``source_name``), runs
    ``pipeline`` on it and yields ``(library, compiler, module)``; frees both
    handles afterwards."""
    library = load_compiler()
    compiler = library.ggemmCompilerCreate()
    try:
        data = source.encode()
        module = library.ggemmModuleParseNamed(compiler, data, len(data),
                                               source_name.encode())
        if not module:
            raise CompilerError(library.ggemmCompilerLastError(compiler).decode())
        try:
            if library.ggemmModuleRunPipeline(module, pipeline.encode()):
                raise CompilerError(library.ggemmCompilerLastError(compiler).decode())
            yield library, compiler, module
        finally:
            library.ggemmModuleDestroy(module)
    finally:
        library.ggemmCompilerDestroy(compiler)


def run_pipeline(source: str, pipeline: str, generic: bool = False,
                 source_name: str = "<string>") -> str:
    """Parses ``source``, runs the textual ``pipeline`` on it and returns the
    printed result. Errors raise :class:`CompilerError`, whose message holds
    the diagnostics as ``source_name:line:col: error: ...``.

    Example::

        tiled = run_pipeline(source, "ggemm-select-config,ggemm-tile")
    """
    with _module_after(source, pipeline, source_name) as (library, _, module):
        text = library.ggemmModulePrint(module, int(generic))
        try:
            return ctypes.string_at(text).decode()
        finally:
            library.ggemmFreeString(text)


def compile_bundles(source: str, output_dir: Union[str, os.PathLike],
                    chip: str = "sm_90a", binary_format: str = "isa",
                    cache_dir: Optional[Union[str, os.PathLike]] = None,
                    source_name: str = "<string>") -> Dict[str, Path]:
    """Compiles every problem op of ``source`` with ``ggemm-to-ptx`` and
    writes the bundles into ``output_dir``; returns ``{kernel: manifest}``.

    ``binary_format`` is ``"isa"`` (PTX) or ``"bin"`` (cubin, needs
    ``ptxas``). Results are cached under ``cache_dir`` (default
    ``$GGEMM_CACHE_DIR`` or ``~/.cache/ggemm``) by the hash of the source,
    the options and the compiler library. Diagnostics name the source
    ``source_name`` (pass the file name the IR came from).

    Example::

        manifests = compile_bundles(source, "out")
        kernel = Kernel(manifests["moe_up_kernel"])
    """
    if binary_format not in ("isa", "bin"):
        raise CompilerError(f"binary_format must be 'isa' or 'bin', got {binary_format!r}")
    library = load_compiler()
    pipeline = f"ggemm-to-ptx{{chip={chip} format={binary_format}}}"
    key = hashlib.sha256("\0".join(
        [source, pipeline, _library_digest(library)]).encode()).hexdigest()[:32]
    cache_root = Path(cache_dir or os.environ.get("GGEMM_CACHE_DIR")
                      or Path.home() / ".cache" / "ggemm")
    cached = cache_root / key
    if not (cached / "COMPLETE").is_file():
        with _module_after(source, pipeline, source_name) as (_, compiler, module):
            cache_root.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(dir=cache_root))
            if library.ggemmModuleExportBundles(module, str(staging).encode()):
                shutil.rmtree(staging, ignore_errors=True)
                raise CompilerError(
                    library.ggemmCompilerLastError(compiler).decode())
            (staging / "COMPLETE").write_text(pipeline + "\n")
            shutil.rmtree(cached, ignore_errors=True)
            os.replace(staging, cached)
    output = Path(output_dir)
    output.mkdir(parents=True, exist_ok=True)
    manifests = {}
    for item in sorted(cached.iterdir()):
        if item.name == "COMPLETE":
            continue
        shutil.copy2(item, output / item.name)
        if item.suffix == ".json":
            manifests[item.stem] = output / item.name
    return manifests
