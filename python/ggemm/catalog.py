"""Kernel catalogs: every bundle a model needs, prebuilt on a machine with
the compiler, for GPU hosts without LLVM.

A spec (JSON, or YAML when the file ends in ``.yaml``/``.yml``) lists the
kernels, one line per problem, with the fields of
:class:`~ggemm.problem.Problem`::

    {"chip": "sm_90a", "format": "bin",
     "kernels": [
       {"op": "segment_matmul", "dtype": "bf16", "n": 4096, "k": 7168,
        "groups": 8, "activation": ["none", "silu"]},
       {"op": "masked_matmul", "dtype": "bf16", "n": 7168, "k": 2048,
        "groups": 8, "row_scale": true,
        "variants": [{"index_dtype": "i32"}, {"index_dtype": "i64"}]}
     ]}

A list-valued field (other than ``config``) expands to one kernel per
value (several lists: every combination); ``variants`` is a list of
overrides, one kernel each. ``"out_dtype": "f8e4m3"`` is a kernel whose y
is e4m3 with its 1x128 scales (what ``out_dtype=torch.float8_e4m3fn``
calls), a kernel of its own. The MoE routing kernel of
:func:`ggemm.sort_by_expert` has a line of its own, keyed by the experts E,
the pairs per token and the ids' dtype (``i32`` or ``i64``; default
``i32``)::

    {"op": "sort_by_expert", "num_experts": 256, "topk": 8,
     "index_dtype": ["i32", "i64"]}

and so has the FP8 quantize kernel of :func:`ggemm.quantize`, keyed by
x's dtype, the scale block and x's rank (every size is dynamic)::

    {"op": "quantize", "x_dtype": "bf16",
     "scale_block": ["1x128", "128x128"], "rank": 2}
 Top-level ``chip``, ``format`` (``bin``: cubin,
the default; ``isa``: PTX), ``opt_level``, ``num_sms`` and ``grid`` are the
pipeline's options.

Build it (in parallel, with a progress bar)::

    python -m ggemm.catalog build model.json -o catalog/ -j 2

and point the ops at it: ``GGEMM_CATALOG=catalog/`` or ``catalog=``. The
catalog directory holds the bundles and ``catalog.json``, the index from
each problem's key to its manifest. ``python -m ggemm.catalog list DIR``
prints its spec lines.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import itertools
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, TextIO

from .cache import (CATALOG_FORMAT, CATALOG_INDEX, AnyProblem, _indices,
                    problem_from_key)
from .problem import SpecError, problem_from_spec

__all__ = ["load_spec", "expand_spec", "build_catalog", "Progress", "main"]

PIPELINE_FIELDS = ("chip", "format", "opt_level", "num_sms", "grid")
_NOT_EXPANDED = ("config", "variants")


def load_spec(path: os.PathLike) -> Dict[str, Any]:
    """Reads a spec file (JSON, or YAML by its suffix)."""
    path = Path(path)
    text = path.read_text()
    if path.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise SpecError(f"{path}: reading YAML needs PyYAML "
                            f"(python3-yaml); or write the spec as JSON") \
                from None
        document = yaml.safe_load(text)
    else:
        try:
            document = json.loads(text)
        except ValueError as error:
            raise SpecError(f"{path}: invalid JSON: {error}") from None
    if not isinstance(document, dict) or not isinstance(
            document.get("kernels"), list):
        raise SpecError(f"{path}: expected an object with a \"kernels\" list")
    return document


def _expand_line(line: Mapping[str, Any]) -> Iterable[Dict[str, Any]]:
    variants = line.get("variants", [{}])
    if not isinstance(variants, list) or not all(
            isinstance(v, dict) for v in variants):
        raise SpecError("variants: expected a list of objects")
    base = {k: v for k, v in line.items() if k != "variants"}
    lists = [(k, v) for k, v in base.items()
             if isinstance(v, list) and k not in _NOT_EXPANDED]
    for values in itertools.product(*[v for _, v in lists]):
        combined = dict(base)
        combined.update(zip([k for k, _ in lists], values))
        for variant in variants:
            yield {**combined, **variant}


def expand_spec(document: Mapping[str, Any]) -> List[AnyProblem]:
    """The problems a spec names, in order, without duplicates. Errors name
    the line (``kernels[3]: ...``).

    Example::

        >>> [p.activation for p in expand_spec({"kernels": [
        ...     {"op": "segment_matmul", "dtype": "bf16", "n": 64, "k": 64,
        ...      "groups": 2, "activation": ["none", "silu"]}]})]
        ['none', 'silu']
    """
    unknown = sorted(set(document) - set(PIPELINE_FIELDS) - {"kernels"})
    if unknown:
        raise SpecError(f"unknown top-level fields {', '.join(unknown)} "
                        f"(known: kernels, {', '.join(PIPELINE_FIELDS)})")
    problems: Dict[AnyProblem, None] = {}
    for index, line in enumerate(document["kernels"]):
        if not isinstance(line, dict):
            raise SpecError(f"kernels[{index}]: expected an object")
        try:
            for expanded in _expand_line(line):
                problems[problem_from_spec(expanded)] = None
        except (SpecError, TypeError) as error:
            raise SpecError(f"kernels[{index}]: {error}") from None
    return list(problems)


class Progress:
    """A one-line progress bar on a terminal (a line per step otherwise)."""

    def __init__(self, total: int, stream: Optional[TextIO] = None,
                 width: int = 30) -> None:
        self.total, self.done, self.width = total, 0, width
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.monotonic()
        self.tty = self.stream.isatty()

    def step(self, label: str) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.start
        filled = self.width * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        text = (f"[{bar}] {self.done}/{self.total} kernels {elapsed:6.1f} s "
                f"{label}")
        if self.tty:
            self.stream.write("\r\033[K" + text)
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def _compile_one(source: str, pipeline: str,
                 cache_dir: Optional[os.PathLike], source_name: str) -> Path:
    from .compiler import compile_to_cache
    return compile_to_cache(source, pipeline, cache_dir, source_name)


def build_catalog(problems: List[AnyProblem], output: os.PathLike, *,
                  chip: str = "sm_90a", binary_format: str = "bin",
                  opt_level: Optional[int] = None,
                  num_sms: Optional[int] = None, grid: Optional[str] = None,
                  jobs: int = 0, cache_dir: Optional[os.PathLike] = None,
                  progress: Optional[Progress] = None) -> Dict[str, str]:
    """Compiles ``problems`` (``jobs`` at a time; 0: one per CPU) and writes
    their bundles and the index into ``output``, keeping what the catalog
    already had. Returns the index ``{key: manifest file}``.

    Example::

        build_catalog(expand_spec(load_spec("model.json")), "catalog")
    """
    from .compiler import pipeline_text
    pipeline = pipeline_text(chip, binary_format, grid, num_sms, opt_level)
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    index_path = output / CATALOG_INDEX
    kernels: Dict[str, str] = {}
    if index_path.is_file():
        kernels = json.loads(index_path.read_text()).get("kernels", {})

    workers = jobs or os.cpu_count() or 1
    errors = []
    # Threads: each compile has its own MLIR context and ctypes releases the
    # GIL while the pipeline runs, so they run in parallel without the
    # start-up cost of worker processes (about 1 s each here). The kernels
    # (tile variants) of each compile also run in parallel, on the
    # compiler's one pool (GGEMM_COMPILER_THREADS), which all of them share.
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(_compile_one, p.mlir(), pipeline, cache_dir,
                               p.function_name + ".mlir"): p
                   for p in problems}
        for future in concurrent.futures.as_completed(futures):
            problem = futures[future]
            try:
                entry = future.result()
            except Exception as error:  # noqa: BLE001 - reported below
                errors.append(f"{json.dumps(problem.spec())}: {error}")
                label = "FAILED"
            else:
                for item in entry.iterdir():
                    if item.name != "COMPLETE":
                        shutil.copy2(item, output / item.name)
                kernels[problem.key] = f"{problem.kernel_name}.json"
                label = problem.kernel_name
            if progress is not None:
                progress.step(label)
    document = {"format": CATALOG_FORMAT, "version": 1, "pipeline": pipeline,
                "kernels": dict(sorted(kernels.items()))}
    index_path.write_text(json.dumps(document, indent=1) + "\n")
    _indices.pop(output, None)  # the ops re-read the index
    if errors:
        raise SpecError(f"{len(errors)} of {len(problems)} kernels failed:\n"
                        + "\n".join(errors))
    return kernels


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ggemm.catalog",
        description="Prebuild the kernels a model needs (see the module's "
                    "docstring for the spec format).")
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="compile a spec into DIR")
    build.add_argument("spec", type=Path)
    build.add_argument("-o", "--output", type=Path, required=True)
    build.add_argument("-j", "--jobs", type=int, default=0,
                       help="parallel compiles (default: one per CPU)")
    build.add_argument("--format", choices=("bin", "isa"),
                       help="override the spec's format")
    build.add_argument("--opt-level", type=int,
                       help="override the spec's LLVM opt level")
    build.add_argument("--cache-dir", type=Path)
    listing = commands.add_parser("list", help="print a catalog's spec lines")
    listing.add_argument("dir", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            document = json.loads((args.dir / CATALOG_INDEX).read_text())
            for key in document["kernels"]:
                print(json.dumps(problem_from_key(key).spec()))
            return 0
        spec = load_spec(args.spec)
        problems = expand_spec(spec)
        start = time.monotonic()
        build_catalog(
            problems, args.output, chip=spec.get("chip", "sm_90a"),
            binary_format=args.format or spec.get("format", "bin"),
            opt_level=(args.opt_level if args.opt_level is not None
                       else spec.get("opt_level")),
            num_sms=spec.get("num_sms"), grid=spec.get("grid"),
            jobs=args.jobs, cache_dir=args.cache_dir,
            progress=Progress(len(problems)))
        print(f"catalog: {len(problems)} kernels in {args.output} "
              f"({time.monotonic() - start:.1f} s)")
        return 0
    except SpecError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
