"""Where the ops layer gets a kernel for a :class:`~ggemm.problem.Problem`
(or the routing kernel's :class:`~ggemm.problem.RoutingProblem`, the
quantize kernel's :class:`~ggemm.problem.QuantizeProblem`).

In order: a dictionary in memory (one :class:`~ggemm.runtime.Kernel` per
problem and catalog choice, so a repeated call costs a dictionary look-up);
then, when a catalog is given (the ``catalog=`` argument of an op, or
``$GGEMM_CATALOG``, several directories separated by ``:``), the catalog —
and only the catalog: a missing entry is an error that says which spec line
to add; otherwise the compiler's disk cache (keyed by the IR's hash, the
target and options, and the compiler library), compiling through the C API
on a miss.

Example::

    from ggemm.cache import kernel_for
    from ggemm.problem import Problem
    kernel = kernel_for(Problem("segment_matmul", "bf16", n=4096, k=7168,
                                groups=8))
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from .problem import (Problem, QuantizeProblem, RoutingProblem, SpecError,
                      problem_from_spec)
from .runtime import GGemmError, Kernel

#: What a kernel is looked up by: a GEMM's problem or the routing kernel's.
AnyProblem = Union[Problem, RoutingProblem, QuantizeProblem]

__all__ = ["CatalogMissError", "CompileOptions", "compile_options",
           "set_compile_options", "kernel_for", "manifest_for",
           "catalog_dirs", "clear_memory_cache"]

CATALOG_INDEX = "catalog.json"
CATALOG_FORMAT = "ggemm-catalog"


class CatalogMissError(GGemmError, LookupError):
    """A catalog has no kernel for a problem. ``spec_line`` is the line to
    add to the catalog's spec (``ggemm.catalog build``)."""

    def __init__(self, message: str, spec_line: Dict[str, Any]) -> None:
        super().__init__(message)
        self.spec_line = spec_line


class CompileOptions:
    """Options of the in-process compiles (``ggemm-to-ptx``): ``chip``,
    ``binary_format`` (``"isa"``: PTX, which the driver JIT-compiles and
    caches on first load; ``"bin"``: cubin through ptxas), ``opt_level``
    (LLVM's, ``None``: the pipeline's default), ``num_sms``, ``grid`` and
    ``cache_dir`` (default ``$GGEMM_CACHE_DIR`` or ``~/.cache/ggemm``)."""

    def __init__(self, chip: str = "sm_90a", binary_format: str = "isa",
                 opt_level: Optional[int] = None,
                 num_sms: Optional[int] = None, grid: Optional[str] = None,
                 cache_dir: Optional[Union[str, os.PathLike]] = None) -> None:
        self.chip = chip
        self.binary_format = binary_format
        self.opt_level = opt_level
        self.num_sms = num_sms
        self.grid = grid
        self.cache_dir = cache_dir

    def pipeline(self) -> str:
        from .compiler import pipeline_text
        return pipeline_text(self.chip, self.binary_format, self.grid,
                             self.num_sms, self.opt_level)


_options = CompileOptions()
_kernels: Dict[Tuple[AnyProblem, Any], Kernel] = {}
_lock = threading.Lock()


def compile_options() -> CompileOptions:
    """The options in-process compiles use."""
    return _options


def set_compile_options(**options: Any) -> CompileOptions:
    """Changes the options of later in-process compiles (kernels already
    in memory are kept).

    Example::

        ggemm.set_compile_options(binary_format="bin", opt_level=2)
    """
    global _options
    fields = vars(_options).copy()
    unknown = sorted(set(options) - set(fields))
    if unknown:
        raise GGemmError(f"unknown compile options {', '.join(unknown)} "
                         f"(known: {', '.join(sorted(fields))})")
    fields.update(options)
    _options = CompileOptions(**fields)
    return _options


def clear_memory_cache() -> None:
    """Forgets the kernels held in memory (the disk cache stays).

    Example::

        ggemm.clear_memory_cache()
    """
    from . import ops
    with _lock:
        _kernels.clear()
        ops._kernels.clear()
        _indices.clear()


def catalog_dirs(catalog: Any = None) -> List[Path]:
    """The catalog directories a look-up uses: ``catalog`` (a path or a
    list of paths) if given, else ``$GGEMM_CATALOG`` split on ``:``, else
    none."""
    if catalog is None:
        text = os.environ.get("GGEMM_CATALOG", "")
        return [Path(p) for p in text.split(os.pathsep) if p]
    if isinstance(catalog, (str, os.PathLike)):
        return [Path(catalog)]
    return [Path(p) for p in catalog]


_indices: Dict[Path, Dict[str, str]] = {}


def read_catalog_index(directory: Path) -> Dict[str, str]:
    """``{problem key: manifest file}`` of a catalog directory."""
    directory = Path(directory)
    cached = _indices.get(directory)
    if cached is not None:
        return cached
    path = directory / CATALOG_INDEX
    try:
        document = json.loads(path.read_text())
    except FileNotFoundError:
        raise GGemmError(f"{path}: no catalog here (build one with "
                         f"'python -m ggemm.catalog build SPEC -o "
                         f"{directory}')") from None
    except (OSError, ValueError) as error:
        raise GGemmError(f"{path}: cannot read the catalog: {error}") from None
    if document.get("format") != CATALOG_FORMAT:
        raise GGemmError(f"{path}: not a ggemm catalog (format is "
                         f"{document.get('format')!r})")
    kernels = document.get("kernels", {})
    _indices[directory] = kernels
    return kernels


def manifest_for(problem: AnyProblem, catalog: Any = None) -> Path:
    """The manifest of ``problem``'s kernel: from the catalogs if any are
    given (see :func:`catalog_dirs`), else from the disk cache, compiling
    on a miss.

    Example::

        path = manifest_for(Problem("batched_matmul", "bf16", n=64, k=64,
                                    groups=4))
    """
    directories = catalog_dirs(catalog)
    if directories:
        for directory in directories:
            entry = read_catalog_index(directory).get(problem.key)
            if entry is not None:
                return directory / entry
        line = json.dumps(problem.spec())
        raise CatalogMissError(
            f"no kernel for {line} in the catalog "
            f"{os.pathsep.join(str(d) for d in directories)}: add this line "
            f"to the \"kernels\" list of the catalog's spec and rebuild it "
            f"(python -m ggemm.catalog build SPEC -o DIR)",
            problem.spec())
    from .compiler import CompilerError, compile_to_cache
    options = _options
    try:
        entry = compile_to_cache(problem.mlir(), options.pipeline(),
                                 options.cache_dir,
                                 source_name=problem.function_name + ".mlir")
    except CompilerError as error:
        if "not found" in str(error) and "libGGemmCAPI" in str(error):
            raise CompilerError(
                f"cannot compile {json.dumps(problem.spec())}: {error}; on a "
                f"machine without the compiler, prebuild a catalog "
                f"(python -m ggemm.catalog build) and set GGEMM_CATALOG") \
                from None
        raise
    return entry / f"{problem.kernel_name}.json"


def kernel_for(problem: AnyProblem, catalog: Any = None) -> Kernel:
    """The loaded kernel of ``problem`` (see the module's docstring for the
    order of the look-ups)."""
    token = (problem, _catalog_token(catalog))
    kernel = _kernels.get(token)
    if kernel is not None:
        return kernel
    with _lock:
        kernel = _kernels.get(token)
        if kernel is None:
            kernel = Kernel(manifest_for(problem, catalog))
            _kernels[token] = kernel
    return kernel


def _catalog_token(catalog: Any) -> Any:
    if catalog is None:
        return os.environ.get("GGEMM_CATALOG", "")
    if isinstance(catalog, (str, os.PathLike)):
        return os.fspath(catalog)
    return tuple(os.fspath(p) for p in catalog)


def problem_from_key(key: str) -> AnyProblem:
    """The problem a catalog key names."""
    try:
        return problem_from_spec(json.loads(key))
    except ValueError as error:
        raise SpecError(f"bad catalog key {key!r}: {error}") from None

