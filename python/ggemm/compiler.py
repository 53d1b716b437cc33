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

from .runtime import GGemmError, search_paths

_LIBRARY_NAME = "libGGemmCAPI.so"
_library: Optional[ctypes.CDLL] = None
_lock = threading.Lock()


class CompilerError(GGemmError):
    """The compiler rejected the IR or the pipeline; the message holds its
    diagnostics."""


def compiler_library_candidates() -> List[Path]:
    """Paths searched for ``libGGemmCAPI.so``, in order.

    ``GGEMM_COMPILER_LIB`` alone when set; else next to this package (and in
    its ``lib/``), the install prefix ``$GGEMM_PREFIX/lib``, the build tree
    ``$GGEMM_BUILD_DIR/lib``, this interpreter's ``sys.prefix/lib`` and
    ``build/lib/`` of the source tree the package sits in.

    Example::

        >>> compiler_library_candidates()[-1].name
        'libGGemmCAPI.so'
    """
    return search_paths(_LIBRARY_NAME, "GGEMM_COMPILER_LIB", "lib",
                        ["build/lib"])


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
                + "); build the project (scripts/setup.sh) and set "
                "GGEMM_COMPILER_LIB to the .so, GGEMM_BUILD_DIR to the build "
                "tree or GGEMM_PREFIX to the install prefix")
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


def pipeline_text(chip: str = "sm_90a", binary_format: str = "isa",
                  grid: Optional[str] = None, num_sms: Optional[int] = None,
                  opt_level: Optional[int] = None) -> str:
    """The ``ggemm-to-ptx`` pipeline with these options (``None`` keeps the
    pipeline's default).

    Example::

        >>> pipeline_text(binary_format="bin", opt_level=2)
        'ggemm-to-ptx{chip=sm_90a format=bin opt-level=2}'
    """
    if binary_format not in ("isa", "bin"):
        raise CompilerError(f"binary_format must be 'isa' or 'bin', got {binary_format!r}")
    options = [f"chip={chip}", f"format={binary_format}"]
    if grid is not None:
        options.append(f"grid={grid}")
    if num_sms is not None:
        options.append(f"num-sms={int(num_sms)}")
    if opt_level is not None:
        options.append(f"opt-level={int(opt_level)}")
    return "ggemm-to-ptx{" + " ".join(options) + "}"


def default_cache_dir() -> Path:
    """``$GGEMM_CACHE_DIR``, else ``~/.cache/ggemm``."""
    return Path(os.environ.get("GGEMM_CACHE_DIR")
                or Path.home() / ".cache" / "ggemm")


def compile_to_cache(source: str, pipeline: str,
                     cache_dir: Optional[Union[str, os.PathLike]] = None,
                     source_name: str = "<string>") -> Path:
    """Compiles ``source`` with ``pipeline`` (a ``ggemm-to-ptx{...}`` text)
    unless the disk cache has it, and returns the cache entry's directory,
    which holds the bundles. The entry is keyed by the hash of the IR, the
    pipeline (target and options) and the compiler library (its path, size
    and modification time: a rebuilt compiler misses the cache).

    Example::

        entry = compile_to_cache(source, pipeline_text())
        kernel = Kernel(entry / "moe_up_kernel.json")
    """
    library = load_compiler()
    key = hashlib.sha256("\0".join(
        [source, pipeline, _library_digest(library)]).encode()).hexdigest()[:32]
    cache_root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    cached = cache_root / key
    if (cached / "COMPLETE").is_file():
        return cached
    with _module_after(source, pipeline, source_name) as (_, compiler, module):
        cache_root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=cache_root))
        if library.ggemmModuleExportBundles(module, str(staging).encode()):
            shutil.rmtree(staging, ignore_errors=True)
            raise CompilerError(
                library.ggemmCompilerLastError(compiler).decode())
        (staging / "COMPLETE").write_text(pipeline + "\n")
        try:
            os.replace(staging, cached)
        except OSError:
            # Another process finished the same entry first: keep theirs.
            shutil.rmtree(staging, ignore_errors=True)
            if not (cached / "COMPLETE").is_file():
                raise
    return cached


def compile_bundles(source: str, output_dir: Union[str, os.PathLike],
                    chip: str = "sm_90a", binary_format: str = "isa",
                    cache_dir: Optional[Union[str, os.PathLike]] = None,
                    source_name: str = "<string>", grid: Optional[str] = None,
                    num_sms: Optional[int] = None,
                    opt_level: Optional[int] = None) -> Dict[str, Path]:
    """Compiles every problem op of ``source`` with ``ggemm-to-ptx`` and
    writes the bundles into ``output_dir``; returns ``{kernel: manifest}``.

    ``binary_format`` is ``"isa"`` (PTX) or ``"bin"`` (cubin, needs
    ``ptxas``); ``grid`` (``"persistent"`` or ``"tiles"``), ``num_sms`` (the
    SM count the tile heuristics assume) and ``opt_level`` (LLVM's, 0-3) are
    the pipeline's options of the same names. Results are cached under
    ``cache_dir`` (default ``$GGEMM_CACHE_DIR`` or ``~/.cache/ggemm``) by the
    hash of the source, the options and the compiler library. Diagnostics
    name the source ``source_name`` (pass the file name the IR came from).

    Example::

        manifests = compile_bundles(source, "out")
        kernel = Kernel(manifests["moe_up_kernel"])
    """
    pipeline = pipeline_text(chip, binary_format, grid, num_sms, opt_level)
    cached = compile_to_cache(source, pipeline, cache_dir, source_name)
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
