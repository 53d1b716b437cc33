#!/usr/bin/env python3
"""Mutation fuzzer for gemm-opt.

Takes the lit tests under test/ as a corpus (comment lines stripped, split on
``// -----``), mutates them with a seeded random generator and runs
``gemm-opt`` on each mutant in several modes: parse and verify only; then,
for mutants that verify, every registered ggemm pass alone and the
``ggemm-to-*`` pipelines. Each run is classified as

- ``ok``: exit 0;
- ``diagnosed``: exit 1 with an ``error:`` diagnostic and no crash signature;
- ``silent``: a non-zero exit without a diagnostic (a pass that failed
  without saying why; reported, not counted as a crash);
- ``crash``: killed by a signal, an exit code of 128 or more, or output with
  a crash signature (stack dump, LLVM ERROR, assertion, sanitizer report);
- ``upstream-known``: a crash of upstream MLIR 22 that the project cannot
  fix (see ``UPSTREAM_KNOWN``), counted apart from ``crash``;
- ``hang``: the run took longer than ``--timeout``.

Every crash and hang is saved under ``--out`` (the smallest mutant for each
crash signature, with the command and its output). The passes are found at
run time from ``gemm-opt --help`` and their op anchor from
``--dump-pass-pipeline``, so new passes are fuzzed without editing this file.

gemm-opt takes about 0.1 s to start, far more than most runs take, so the
mutants run in batches (``--batch``, 100 by default): one file a batch,
``// -----`` between the mutants, and one ``gemm-opt --split-input-file`` a
batch and mode, which runs each mutant in a context of its own. A mutant's
outcome is read from its chunk's output (gemm-opt prints nothing for a
chunk that failed) and from the diagnostics on its lines. It is the outcome
the mutant has alone: a batch that crashes is halved until the crash is one
mutant's, and that mutant runs alone; the mutants of a batch that times
out or stops early (LLVM's default diagnostic handler exits the process on
a back-end error), and any whose outcome the batch leaves unsure (an error
without a location between two mutants' diagnostics), run alone; mutants
that hold ``// -`` or the upstream crash's text always run alone. A batch
that crashes although none of its mutants does alone (one corrupts the
heap, a later one trips on it) is reported as a note, not as a crash.
``--batch 1`` runs every mutant alone, one gemm-opt run per mutant and
mode, as this fuzzer did before batches; test/python/test_fuzz_batch.py
checks that both give every mutant the same outcome in every mode.

Example::

    python3 test/fuzz/fuzz_gemm_opt.py --gemm-opt build/bin/gemm-opt \\
        --count 3000 --seed 1 --jobs 2 --out build/fuzz
    python3 test/fuzz/fuzz_gemm_opt.py ... --batch 1   # no batches

It prints the outcome counts per mode and closes with
``fuzz: N inputs, C crashes, H hangs``; the exit status is 1 when there was
a crash or a hang.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import concurrent.futures
import dataclasses
import hashlib
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Optional

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CORPUS_DIRS = ["Dialect", "Transforms", "Conversion", "Pipeline",
                       "Execution"]
DEFAULT_MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"

# Pipelines run on every mutant that verifies, as (mode name, arguments).
# `ggemm-to-*` pipelines found in `--help` and not named here run with their
# default options.
FIXED_PIPELINES = [
    ("pipeline:ggemm-to-cpu", ["--ggemm-to-cpu"]),
    ("pipeline:ggemm-to-ptx", ["--ggemm-to-ptx=chip=sm_90a format=isa"]),
    ("pipeline:select-config+tile", ["--ggemm-select-config",
                                     "--ggemm-tile"]),
]

# Output that means the process crashed even when its exit code says it
# failed normally (report_fatal_error exits with 1; UBSan goes on by
# default).
CRASH_MARKERS = (
    "Stack dump",
    "PLEASE submit a bug report",
    "LLVM ERROR",
    "Assertion `",
    "UNREACHABLE",
    "Segmentation fault",
    "AddressSanitizer",
    "UndefinedBehaviorSanitizer",
    "LeakSanitizer",
    "runtime error:",
)

# The one known upstream MLIR 22 crash: the parser dereferences a null
# float type on a dense array of `index` elements
# (`func.func @f() attributes {a = array<index: 1>} { return }` crashes
# mlir-opt too, in mlir::detail::Parser::parseDenseArrayAttr). A crash is
# put under it only when the mutant holds `array<index`, the crash is in
# that function, and upstream mlir-opt crashes in the same frames on the
# same input (or, when mlir-opt stops earlier because it does not know the
# ggemm dialect, on the mutant's `array<index...>` attributes alone).
UPSTREAM_KNOWN = {
    "name": "mlir-parser-dense-array-index",
    "text": "array<index",
    "frame": "mlir::detail::Parser::parseDenseArrayAttr",
}

OUTCOMES = ["ok", "diagnosed", "silent", "crash", "upstream-known", "hang"]


@dataclasses.dataclass
class Mode:
    """One way of running gemm-opt on a mutant."""

    name: str
    args: list[str]
    # The op a nested pass runs on (`gpu.module`); a mutant without one is
    # not run in this mode, as the pass would never run.
    anchor: str = ""


@dataclasses.dataclass
class RunResult:
    """The outcome of one gemm-opt run."""

    index: int
    mode: str
    args: list[str]
    outcome: str
    returncode: Optional[int]
    output: str
    signature: str = ""


# ---------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------


def split_corpus_file(text: str) -> list[str]:
    """Splits a lit test into its inputs, without comment lines.

    >>> split_corpus_file("// RUN: x\\nfunc.func @a()\\n// -----\\nb\\n")
    ['func.func @a()\\n', 'b\\n']
    """
    pieces = re.split(r"^// -----.*$", text, flags=re.MULTILINE)
    result = []
    for piece in pieces:
        lines = [line for line in piece.splitlines()
                 if not line.lstrip().startswith("//") and line.strip()]
        if lines:
            result.append("\n".join(lines) + "\n")
    return result


def load_corpus(test_dir: Path, subdirs: Iterable[str]) -> list[str]:
    """Returns every input of the `.mlir` files under test_dir/<subdir>."""
    pieces: list[str] = []
    for subdir in subdirs:
        for path in sorted((test_dir / subdir).rglob("*.mlir")):
            pieces.extend(split_corpus_file(path.read_text()))
    return pieces


# ---------------------------------------------------------------------------
# Mutations
# ---------------------------------------------------------------------------

BOUNDARY_INTEGERS = [
    "0", "1", "-1", "2", "-2", "3", "7", "8", "15", "16", "31", "32", "63",
    "64", "65", "127", "128", "129", "255", "256", "257", "512", "1024",
    "4096", "65535", "65536", str(2**31 - 1), str(2**31), str(-2**31),
    str(2**32), str(2**32 + 1), str(2**63 - 1), str(-2**63), str(2**64),
    "340282366920938463463374607431768211457",
]
BOUNDARY_FLOATS = ["0.0", "-0.0", "1.0", "-1.0", "1.0e+38", "3.5e+38",
                   "1.0e-45", "1.0e+308", "0x7FC00000", "0x7F800000"]
TYPES = ["bf16", "f16", "f32", "f64", "i1", "i8", "i16", "i32", "i64",
         "f8E4M3FN", "f8E5M2", "index"]
DIM_VALUES = ["?", "?", "0", "1", "2", "3", "16", "63", "64", "65", "127",
              "128", "256", "4096", str(2**31), str(2**62), str(2**63 - 1)]

# An integer literal that is a token of its own (not part of %c0, i32,
# sm_90a, 4x8xf32 or a float).
INT_RE = re.compile(r"(?<![\w%#@^$.!+-])-?\d+(?![\w.])")
FLOAT_RE = re.compile(r"(?<![\w%#@^$.])-?\d+\.\d*(?:e[+-]?\d+)?(?![\w.])")
TYPE_RE = re.compile(r"(?:(?<=\dx)|(?<=\?x)|(?<![\w%#@^$.!]))"
                     r"(" + "|".join(sorted(TYPES, key=len, reverse=True)) +
                     r")(?![\w.])")
SHAPED_RE = re.compile(r"\b(memref|tensor|vector)<((?:(?:\d+|\?)x)*)")
SSA_RE = re.compile(r"%[\w$.-]+(?:#\d+)?")
KEY_VALUE_RE = re.compile(r"(?<![\w.%#@])([a-z_][\w]*) = ")
GGEMM_NAME_RE = re.compile(r"\b(?:ggemm)\.[a-z_]+\b")
GGEMM_ATTR_RE = re.compile(r"#ggemm\.[a-z_]+")
IDENT_RE = re.compile(r"(?<![\w%#@^$.!])[a-z_][a-z0-9_]*(?![\w.])")

OPENERS = {"<": ">", "(": ")", "[": "]", "{": "}"}


def balanced_value(text: str, start: int) -> int:
    """Returns the end of the attribute value that begins at text[start].

    >>> s = "a = #x<b = 1, c = [2, 3]>, d = 4"
    >>> s[4:balanced_value(s, 4)]
    '#x<b = 1, c = [2, 3]>'
    """
    stack: list[str] = []
    i = start
    while i < len(text):
        ch = text[i]
        if ch == '"':
            j = text.find('"', i + 1)
            i = len(text) if j < 0 else j + 1
            continue
        if ch == "-" and text.startswith("->", i):
            i += 2
            continue
        if ch in OPENERS:
            stack.append(OPENERS[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
        elif not stack and ch in ",>)]}\n":
            break
        i += 1
    return i


class Vocabulary:
    """What mutations draw from: attribute values, keywords, op names."""

    def __init__(self, corpus: list[str]):
        values: dict[str, set[str]] = collections.defaultdict(set)
        keywords: set[str] = set()
        ggemm_names: set[str] = set()
        ggemm_attrs: set[str] = set()
        for piece in corpus:
            for match in KEY_VALUE_RE.finditer(piece):
                end = balanced_value(piece, match.end())
                value = piece[match.end():end].strip()
                if value and len(value) < 200:
                    values[match.group(1)].add(value)
                    if re.fullmatch(r"[a-z_][a-z0-9_]*", value):
                        keywords.add(value)
            ggemm_names.update(GGEMM_NAME_RE.findall(piece))
            ggemm_attrs.update(GGEMM_ATTR_RE.findall(piece))
        self.values = {key: sorted(v) for key, v in sorted(values.items())}
        self.all_values = sorted({v for vs in values.values() for v in vs})
        self.keywords = sorted(keywords - {"true", "false"}) + ["true",
                                                                "false"]
        self.ggemm_names = sorted(ggemm_names)
        self.ggemm_attrs = sorted(ggemm_attrs)


def _replace_match(text: str, match: re.Match, replacement: str,
                   group: int = 0) -> str:
    return text[:match.start(group)] + replacement + text[match.end(group):]


def _pick(rng: random.Random, pattern: re.Pattern,
          text: str) -> Optional[re.Match]:
    matches = list(pattern.finditer(text))
    return rng.choice(matches) if matches else None


def mutate_integer(rng: random.Random, text: str, vocab: Vocabulary) -> str:
    match = _pick(rng, INT_RE, text)
    if not match:
        return text
    value = int(match.group(0))
    choices = BOUNDARY_INTEGERS + [str(value + 1), str(value - 1),
                                   str(value * 2), str(value // 2),
                                   str(-value)]
    return _replace_match(text, match, rng.choice(choices))


def mutate_float(rng: random.Random, text: str, vocab: Vocabulary) -> str:
    match = _pick(rng, FLOAT_RE, text)
    if not match:
        return mutate_integer(rng, text, vocab)
    return _replace_match(text, match, rng.choice(BOUNDARY_FLOATS))


def mutate_type(rng: random.Random, text: str, vocab: Vocabulary) -> str:
    match = _pick(rng, TYPE_RE, text)
    if not match:
        return text
    if rng.random() < 0.5:
        # Change every occurrence: keeps operand and signature types
        # consistent, so the mutant reaches the verifiers and passes.
        old = match.group(1)
        new = rng.choice(TYPES)
        return TYPE_RE.sub(lambda m: new if m.group(1) == old else m.group(0),
                           text)
    return _replace_match(text, match, rng.choice(TYPES), 1)


def _mutate_dims(rng: random.Random, dims: list[str]) -> list[str]:
    choice = rng.randrange(6)
    if choice == 0 and dims:  # one dim to a boundary value
        dims[rng.randrange(len(dims))] = rng.choice(DIM_VALUES)
    elif choice == 1 and dims:  # drop a dim (rank - 1)
        del dims[rng.randrange(len(dims))]
    elif choice == 2:  # add a dim (rank + 1)
        dims.insert(rng.randrange(len(dims) + 1), rng.choice(DIM_VALUES))
    elif choice == 3:  # rank 0
        dims = []
    elif choice == 4 and dims:  # every dim dynamic
        dims = ["?"] * len(dims)
    elif dims:  # swap two dims
        i, j = rng.randrange(len(dims)), rng.randrange(len(dims))
        dims[i], dims[j] = dims[j], dims[i]
    return dims


def mutate_shape(rng: random.Random, text: str, vocab: Vocabulary) -> str:
    matches = list(SHAPED_RE.finditer(text))
    if not matches:
        return text
    match = rng.choice(matches)
    old = match.group(2)
    dims = _mutate_dims(rng, [d for d in old.split("x") if d])
    new = "".join(d + "x" for d in dims)
    if rng.random() < 0.5:
        # Same change to every equal type, as for mutate_type.
        prefix = match.group(1) + "<"
        return text.replace(prefix + old, prefix + new)
    return _replace_match(text, match, new, 2)


def mutate_dynamic_dim(rng: random.Random, text: str,
                       vocab: Vocabulary) -> str:
    matches = [m for m in SHAPED_RE.finditer(text)
               if re.search(r"\d", m.group(2))]
    if not matches:
        return text
    match = rng.choice(matches)
    dims = [d for d in match.group(2).split("x") if d]
    static = [i for i, d in enumerate(dims) if d != "?"]
    dims[rng.choice(static)] = "?"
    return _replace_match(text, match, "".join(d + "x" for d in dims), 2)


def mutate_lines(rng: random.Random, text: str, vocab: Vocabulary) -> str:
    lines = text.splitlines()
    if not lines:
        return text
    i = rng.randrange(len(lines))
    choice = rng.randrange(3)
    if choice == 0:
        del lines[i]
    elif choice == 1:
        lines.insert(i, lines[i])
    else:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines) + "\n"


def mutate_operand(rng: random.Random, text: str, vocab: Vocabulary) -> str:
    matches = list(SSA_RE.finditer(text))
    if not matches:
        return text
    match = rng.choice(matches)
    start, end = match.span()
    choice = rng.randrange(3)
    if choice == 0:  # delete it from its comma-separated list
        if text.startswith(", ", end):
            return text[:start] + text[end + 2:]
        if text[:start].endswith(", "):
            return text[:start - 2] + text[end:]
        return text[:start] + text[end:]
    if choice == 1:  # duplicate it
        return text[:end] + ", " + match.group(0) + text[end:]
    other = rng.choice(matches).group(0)  # use another value
    return text[:start] + other + text[end:]


def mutate_attribute(rng: random.Random, text: str, vocab: Vocabulary) -> str:
    matches = list(KEY_VALUE_RE.finditer(text))
    if not matches or not vocab.all_values:
        return text
    match = rng.choice(matches)
    end = balanced_value(text, match.end())
    same_key = vocab.values.get(match.group(1), [])
    if same_key and rng.random() < 0.7:
        value = rng.choice(same_key)
    else:
        value = rng.choice(vocab.all_values)
    return text[:match.end()] + value + text[end:]


def mutate_keyword(rng: random.Random, text: str, vocab: Vocabulary) -> str:
    choice = rng.randrange(3)
    if choice == 0 and vocab.keywords:
        known = set(vocab.keywords)
        matches = [m for m in IDENT_RE.finditer(text) if m.group(0) in known]
        if matches:
            match = rng.choice(matches)
            return _replace_match(text, match, rng.choice(vocab.keywords))
    if choice == 1 and vocab.ggemm_names:
        match = _pick(rng, GGEMM_NAME_RE, text)
        if match:
            return _replace_match(text, match, rng.choice(vocab.ggemm_names))
    if vocab.ggemm_attrs:
        match = _pick(rng, GGEMM_ATTR_RE, text)
        if match:
            return _replace_match(text, match, rng.choice(vocab.ggemm_attrs))
    return text


def mutate_token(rng: random.Random, text: str, vocab: Vocabulary) -> str:
    tokens = list(re.finditer(r"\S+", text))
    if not tokens:
        return text
    match = rng.choice(tokens)
    if rng.random() < 0.5:
        return _replace_match(text, match, "")
    return _replace_match(text, match, match.group(0) + " " +
                          rng.choice(tokens).group(0))


Mutation = Callable[[random.Random, str, Vocabulary], str]


def make_splice(corpus: list[str]) -> Mutation:
    """Returns a mutation that copies lines of another corpus input."""

    def mutate_splice(rng: random.Random, text: str,
                      vocab: Vocabulary) -> str:
        donor = rng.choice(corpus).splitlines()
        lines = text.splitlines()
        if rng.random() < 0.3:
            # Crossover: the head of this input, the tail of the donor.
            cut = rng.randrange(len(lines) + 1)
            donor_cut = rng.randrange(len(donor) + 1)
            return "\n".join(lines[:cut] + donor[donor_cut:]) + "\n"
        length = rng.randint(1, min(8, len(donor)))
        start = rng.randrange(len(donor) - length + 1)
        at = rng.randrange(len(lines) + 1)
        if lines and rng.random() < 0.5:
            del lines[at:at + length]
        lines[at:at] = donor[start:start + length]
        return "\n".join(lines) + "\n"

    return mutate_splice


class Mutator:
    """Makes the i-th mutant of a campaign, the same for the same seed."""

    def __init__(self, corpus: list[str], seed: int,
                 verifying: Optional[list[str]] = None):
        self.corpus = corpus
        self.verifying = verifying or corpus
        self.seed = seed
        self.vocab = Vocabulary(corpus)
        weighted: list[tuple[Mutation, int]] = [
            (mutate_integer, 6), (mutate_float, 1), (mutate_type, 4),
            (mutate_shape, 4), (mutate_dynamic_dim, 3), (mutate_lines, 2),
            (mutate_operand, 2), (mutate_attribute, 4), (mutate_keyword, 3),
            (mutate_token, 1), (make_splice(corpus), 2),
        ]
        self.mutations = [m for m, _ in weighted]
        self.weights = [w for _, w in weighted]

    def mutant(self, index: int, attempt: int = 0) -> str:
        rng = random.Random(f"{self.seed}:{index}:{attempt}")
        # Mostly inputs that verify: their mutants get past the verifiers
        # into the passes more often than mutants of invalid.mlir cases.
        if rng.random() < 0.75:
            text = rng.choice(self.verifying)
        else:
            text = rng.choice(self.corpus)
        count = 1
        while count < 6 and rng.random() < 0.45:
            count += 1
        for _ in range(count):
            mutation = rng.choices(self.mutations, self.weights)[0]
            text = mutation(rng, text, self.vocab)
        return text


# ---------------------------------------------------------------------------
# Running gemm-opt
# ---------------------------------------------------------------------------


def discover_modes(gemm_opt: str) -> list[Mode]:
    """Lists the run modes: parse, each ggemm pass alone, the pipelines.

    Passes are the `--ggemm-*` and `--convert-ggemm-*` flags of the
    "Passes:" section of `gemm-opt --help`; pipelines the `--ggemm-*` flags
    of its "Pass Pipelines:" section. Each pass runs through
    `--pass-pipeline`, nested in the op it is anchored on as
    `--dump-pass-pipeline` shows (gpu.module passes become
    `builtin.module(gpu.module(pass))`).
    """
    help_text = subprocess.run([gemm_opt, "--help"], capture_output=True,
                               text=True, check=True).stdout
    passes: list[str] = []
    pipelines: list[str] = []
    section = None
    for line in help_text.splitlines():
        if line.strip() == "Passes:":
            section = passes
        elif line.strip() == "Pass Pipelines:":
            section = pipelines
        elif re.match(r"^  \S", line) or re.match(r"^\S", line):
            section = None
        match = re.match(r"^\s+--((?:convert-)?ggemm-[\w-]+)\s+-\s", line)
        if match and section is not None:
            section.append(match.group(1))
    modes = [Mode("parse", [])]
    for name in passes:
        dump = subprocess.run(
            [gemm_opt, "-", "--dump-pass-pipeline", "--" + name, "-o",
             os.devnull], input="", capture_output=True, text=True)
        # The pass may fail on the empty module (ggemm-export-bundle wants
        # kernels): only the dump, printed first, matters.
        text = dump.stderr + dump.stdout
        start = text.find("builtin.module(")
        pipeline = ""
        for line in text[start:].splitlines() if start >= 0 else []:
            # One pass (or nesting level) a line; options keep their spaces.
            pipeline += line.strip()
            if pipeline.count("(") == pipeline.count(")"):
                break
        if not pipeline or pipeline.count("(") != pipeline.count(")"):
            raise RuntimeError(f"cannot find the anchor of {name}:\n{text}")
        anchors = re.findall(r"([\w.]+)\(", pipeline)[1:]
        modes.append(Mode("pass:" + name, ["--pass-pipeline=" + pipeline],
                          anchors[-1] if anchors else ""))
    registered = set(passes) | set(pipelines)
    fixed = set()
    for name, args in FIXED_PIPELINES:
        flags = [arg.split("=")[0].lstrip("-") for arg in args]
        fixed.update(flags)
        if all(flag in registered for flag in flags):
            modes.append(Mode(name, args))
    for name in pipelines:
        if name not in fixed:
            modes.append(Mode("pipeline:" + name, ["--" + name]))
    return modes


FRAME_RE = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ (?:in )?(.*)$")
HANDLER_FRAMES = ("PrintStackTrace", "RunSignalHandlers", "SignalHandler",
                  "__restore_rt", "__sanitizer", "__asan", "__ubsan",
                  "__interceptor_",
                  "abort", "raise", "__assert_fail", "pthread_kill",
                  "__pthread_kill", "gsignal", "llvm_unreachable_internal",
                  "report_fatal_error", "reportFatal")


def stack_frames(output: str, count: int = 3) -> list[str]:
    """The first `count` frames of the stack dump that are not the handler.

    A frame is its function name, or `module+offset` when it has none.
    """
    frames = []
    for line in output.splitlines():
        match = FRAME_RE.match(line)
        if not match:
            continue
        frame = match.group(1).strip()
        module = re.search(r"\(([^()]*?)(\+0x[0-9a-f]+)\)\s*$", frame)
        function = re.sub(r"\s*\([^()]*\+0x[0-9a-f]+\)\s*$", "", frame)
        function = re.sub(r"\s+\S+:\d+(:\d+)?$", "", function).strip()
        if not function and module:
            function = os.path.basename(module.group(1)) + module.group(2)
        # Skip the signal handler, libc's abort path and unnamed frames of
        # libLLVM (the handler's own) before the frame that crashed.
        in_handler = (any(h in frame for h in HANDLER_FRAMES)
                      or "libc.so" in frame
                      or (function.startswith("libLLVM")))
        if in_handler and not frames:
            continue
        frames.append(function)
        if len(frames) == count:
            break
    return frames


def crash_signature(output: str) -> str:
    """What tells two crashes apart: the error line and the first frames."""
    lines = []
    for line in output.splitlines():
        if ("LLVM ERROR" in line or "Assertion `" in line
                or "UNREACHABLE" in line or "runtime error:" in line
                or re.search(r"ERROR: \w+Sanitizer", line)):
            line = re.sub(r"/\S*/", "", line)  # paths differ between builds
            line = re.sub(r"0x[0-9a-f]+", "0x", line)
            lines.append(line.strip())
            break
    lines.extend(stack_frames(output))
    return "\n".join(lines) if lines else "no stack"


def has_crash_marker(output: str) -> bool:
    return any(marker in output for marker in CRASH_MARKERS)


def classify(returncode: Optional[int], output: str) -> str:
    if returncode is None:
        return "hang"
    if returncode < 0 or returncode >= 128 or has_crash_marker(output):
        return "crash"
    if returncode == 0:
        return "ok"
    if re.search(r"(^|\s)error:", output):
        return "diagnosed"
    return "silent"


class Runner:
    """Runs gemm-opt (and mlir-opt, to confirm upstream crashes)."""

    def __init__(self, gemm_opt: str, mlir_opt: str, timeout: float,
                 work_dir: Path):
        self.gemm_opt = gemm_opt
        self.mlir_opt = mlir_opt
        self.timeout = timeout
        self.work_dir = work_dir

    def run(self, tool: str, input_path: Path,
            args: list[str]) -> tuple[Optional[int], str]:
        # Each run in a fresh directory: ggemm-export-bundle writes its
        # files to the current directory.
        with tempfile.TemporaryDirectory(dir=self.work_dir) as cwd:
            try:
                proc = subprocess.run(
                    [tool, str(input_path), *args, "--mlir-disable-threading",
                     "-o", os.devnull],
                    cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, timeout=self.timeout)
            except subprocess.TimeoutExpired as expired:
                out = expired.output or b""
                return None, out.decode("utf-8", "replace")
        return proc.returncode, proc.stdout.decode("utf-8", "replace")

    def is_upstream_known(self, text: str, input_path: Path,
                          output: str) -> bool:
        """True for the documented upstream parser crash, checked twice."""
        if UPSTREAM_KNOWN["text"] not in text:
            return False
        ours = stack_frames(output)
        if not any(f.startswith(UPSTREAM_KNOWN["frame"]) for f in ours):
            return False
        code, theirs = self.run(self.mlir_opt, input_path, [])
        if classify(code, theirs) == "crash":
            return stack_frames(theirs) == ours
        # mlir-opt stopped before the attribute (no ggemm dialect): try the
        # mutant's `array<index...>` attributes on their own.
        attrs = re.findall(r"array<index[^>]*>", text)
        probe = input_path.with_suffix(".upstream.mlir")
        probe.write_text("".join(
            f"func.func @f{i}() attributes {{a = {attr}}} {{ return }}\n"
            for i, attr in enumerate(attrs)))
        code, theirs = self.run(self.mlir_opt, probe, [])
        probe.unlink()
        return (classify(code, theirs) == "crash"
                and stack_frames(theirs) == ours)


def run_single(runner: Runner, mode: Mode, index: int, text: str,
               input_path: Path) -> RunResult:
    """Runs one mutant, already written to input_path, in one mode."""
    code, output = runner.run(runner.gemm_opt, input_path, mode.args)
    outcome = classify(code, output)
    result = RunResult(index, mode.name, mode.args, outcome, code, output)
    if outcome == "crash":
        if runner.is_upstream_known(text, input_path, output):
            result.outcome = "upstream-known"
            result.signature = UPSTREAM_KNOWN["name"]
        else:
            result.signature = crash_signature(output)
    elif outcome == "hang":
        result.signature = "hang in " + mode.name
    return result


def runs_in_mode(mode: Mode, text: str) -> bool:
    # A nested pass on a mutant without its anchor op would never run.
    return not mode.anchor or mode.anchor in text


def fuzz_one(runner: Runner, modes: list[Mode], index: int, text: str,
             input_dir: Path) -> list[RunResult]:
    """Runs one mutant in parse mode and, if it verifies, in every mode."""
    input_path = input_dir / f"input-{index}.mlir"
    input_path.write_text(text)
    results = []
    for mode in modes:
        if not runs_in_mode(mode, text):
            continue
        result = run_single(runner, mode, index, text, input_path)
        results.append(result)
        if mode.name == "parse" and result.outcome != "ok":
            break
    input_path.unlink()
    return results


# ---------------------------------------------------------------------------
# Batches: many mutants in one gemm-opt run
# ---------------------------------------------------------------------------

# gemm-opt --split-input-file runs each chunk of a batch file in its own
# MLIRContext, as if it were a file of its own, and prints each chunk's
# output (nothing for a chunk that failed) followed by this marker. Its
# diagnostics name lines of the batch file.
INPUT_SPLIT_MARKER = "// -----"
OUTPUT_SPLIT_MARKER = "// ----- fuzz: end of chunk"
# Text that would split a mutant in two (gemm-opt splits on "// ---" and
# warns about near misses), and the text of the one upstream crash: such a
# mutant runs alone, as without batches.
UNBATCHABLE = ("// -", UPSTREAM_KNOWN["text"])
DIAGNOSTIC_RE = re.compile(r"^(?:(.*?): )?(error|warning|note|remark): ")
ERROR_RE = re.compile(r"(^|\s)error:")


@dataclasses.dataclass
class Batch:
    """Mutants written to one file, `// -----` between them.

    `first_lines[k]` is the line of the batch file where chunk k's buffer
    starts, as gemm-opt counts it: 0 for the first chunk (the implicit
    module's location is line 0), the line of the marker before it for the
    others (gemm-opt's chunk begins right after the marker, on its line).
    """

    indices: list[int]
    text: str
    first_lines: list[int]
    marker_lines: set[int]

    @staticmethod
    def make(items: list[tuple[int, str]]) -> "Batch":
        pieces: list[str] = []
        first_lines: list[int] = []
        marker_lines: set[int] = set()
        line = 1
        for k, (_, text) in enumerate(items):
            if k:
                pieces.append(INPUT_SPLIT_MARKER + "\n")
                marker_lines.add(line)
                first_lines.append(line)
                line += 1
            else:
                first_lines.append(0)
            if not text.endswith("\n"):
                text += "\n"
            pieces.append(text)
            line += text.count("\n")
        return Batch([i for i, _ in items], "".join(pieces), first_lines,
                     marker_lines)

    def chunk_of(self, line: int, column: int) -> int:
        """The chunk a diagnostic at line:column of the batch file is in."""
        chunk = bisect.bisect_right(self.first_lines, line) - 1
        # A location at the start of a marker line is the end of the chunk
        # before it (the marker itself, from column 1 on, is not in it).
        if line in self.marker_lines and column <= 1:
            chunk -= 1
        return max(chunk, 0)


def split_diagnostics(stderr: str, path: str) -> list[tuple[Optional[int],
                                                            Optional[int],
                                                            str]]:
    """Splits gemm-opt's stderr into diagnostics, each with its notes and
    source lines, as (line, column, text); line and column are None for a
    diagnostic that is not located in `path` (and for any text before the
    first diagnostic).

    >>> blocks = split_diagnostics("b.mlir:3:5: error: x\\n  y\\n"
    ...                            "error: z\\n", "b.mlir")
    >>> blocks[0]
    (3, 5, 'b.mlir:3:5: error: x\\n  y\\n')
    >>> blocks[1]
    (None, None, 'error: z\\n')
    """
    located = re.compile(re.escape(path) + r":(\d+):(\d+)$")
    blocks: list[tuple[Optional[int], Optional[int], str]] = []
    for line in stderr.splitlines(keepends=True):
        match = DIAGNOSTIC_RE.match(line)
        if match and match.group(2) != "note":
            where = located.match(match.group(1) or "")
            if where:
                blocks.append((int(where.group(1)), int(where.group(2)),
                               line))
            else:
                blocks.append((None, None, line))
        elif blocks:
            # Notes follow their diagnostic; other lines are its source
            # line and caret.
            number, column, text = blocks[-1]
            blocks[-1] = (number, column, text + line)
        else:
            blocks.append((None, None, line))
    return blocks


def assign_diagnostics(batch: Batch, stderr: str,
                       path: str) -> tuple[list[str], list[set[int]]]:
    """Gives each diagnostic to the chunk it is about.

    Returns each chunk's diagnostics text, and, for each error without a
    location in the batch file that lies between the diagnostics of two
    different chunks, the chunks it may be about (gemm-opt runs the chunks
    in order, so it is about one of them).
    """
    blocks = split_diagnostics(stderr, path)
    chunks = [batch.chunk_of(line, column) if line is not None else None
              for line, column, _ in blocks]
    texts = [""] * len(batch.indices)
    ambiguous: list[set[int]] = []
    for position, (block, chunk) in enumerate(zip(blocks, chunks)):
        if chunk is None:
            before = [c for c in chunks[:position] if c is not None]
            after = [c for c in chunks[position + 1:] if c is not None]
            low = before[-1] if before else 0
            high = after[0] if after else len(batch.indices) - 1
            if low == high:
                chunk = low
            else:
                if ERROR_RE.search(block[2]):
                    ambiguous.append(set(range(low, high + 1)))
                continue
        texts[chunk] += block[2]
    return texts, ambiguous


def batch_timeout(timeout: float, size: int) -> float:
    # A batch may take two seconds a chunk on average, beyond one run's
    # limit; past that its inputs run alone, each with --timeout.
    return timeout + 2.0 * size


def run_batch(runner: Runner, mode: Mode, items: list[tuple[int, str]],
              work_dir: Path, notes: list[str]) -> list[RunResult]:
    """Runs mutants in one mode, in as few gemm-opt runs as it can.

    The outcome of each mutant is the one it has when run alone: a batch
    that crashes is cut in halves until the crash is one mutant's, run
    alone; the inputs of a batch that times out run alone; so do those whose
    outcome the batch's output does not settle.
    """
    if len(items) <= 1:
        return [run_alone(runner, mode, index, text, work_dir)
                for index, text in items]
    batch = Batch.make(items)
    with tempfile.TemporaryDirectory(dir=work_dir) as cwd:
        path = str(Path(cwd) / "batch.mlir")
        Path(path).write_text(batch.text)
        try:
            proc = subprocess.run(
                [runner.gemm_opt, path, *mode.args, "--split-input-file",
                 "--output-split-marker=" + OUTPUT_SPLIT_MARKER,
                 "--mlir-disable-threading"],
                cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                timeout=batch_timeout(runner.timeout, len(items)))
        except subprocess.TimeoutExpired:
            return [run_alone(runner, mode, index, text, work_dir)
                    for index, text in items]
    stdout = proc.stdout.decode("utf-8", "replace")
    stderr = proc.stderr.decode("utf-8", "replace")
    code = proc.returncode
    if code < 0 or code >= 128 or has_crash_marker(stderr):
        half = len(items) // 2
        noted = len(notes)
        results = (run_batch(runner, mode, items[:half], work_dir, notes) +
                   run_batch(runner, mode, items[half:], work_dir, notes))
        # A crash that needs two mutants in one process (one corrupts the
        # heap, a later one trips on it) is no mutant's crash: say so, for
        # the smallest such batch only.
        if len(notes) == noted and not any(
                r.outcome in ("crash", "upstream-known") for r in results):
            notes.append(f"{mode.name}: inputs {batch.indices} crashed "
                         "together but none of them does alone:\n" +
                         stderr[-1500:])
        return results
    outputs = re.split("^" + re.escape(OUTPUT_SPLIT_MARKER) + "\n", stdout,
                       flags=re.MULTILINE)
    # The marker goes between the chunks' outputs.
    if code not in (0, 1) or len(outputs) != len(items):
        notes.append(f"{mode.name}: unexpected batch output (exit {code}, "
                     f"{len(outputs)} chunks for {len(items)}); inputs "
                     f"{batch.indices[0]}..{batch.indices[-1]} ran alone")
        return [run_alone(runner, mode, index, text, work_dir)
                for index, text in items]
    texts, ambiguous = assign_diagnostics(batch, stderr, path)
    unsure = {k for chunks in ambiguous for k in chunks
              if not outputs[k].strip()}
    results = []
    for k, (index, text) in enumerate(items):
        if k in unsure:
            results.append(run_alone(runner, mode, index, text, work_dir))
            continue
        if outputs[k].strip():
            outcome, returncode = "ok", 0
        else:
            outcome = "diagnosed" if ERROR_RE.search(texts[k]) else "silent"
            returncode = 1
        results.append(RunResult(index, mode.name, mode.args, outcome,
                                 returncode, texts[k]))
    return results


def run_alone(runner: Runner, mode: Mode, index: int, text: str,
              work_dir: Path) -> RunResult:
    input_path = work_dir / f"input-{index}.mlir"
    input_path.write_text(text)
    try:
        return run_single(runner, mode, index, text, input_path)
    finally:
        input_path.unlink()


def fuzz_batch(runner: Runner, modes: list[Mode],
               items: list[tuple[int, str]], work_dir: Path,
               notes: list[str]) -> list[RunResult]:
    """Runs mutants as fuzz_one does, each mode on all of them at once."""
    results = []
    batched = []
    for index, text in items:
        if any(marker in text for marker in UNBATCHABLE):
            results.extend(fuzz_one(runner, modes, index, text, work_dir))
        else:
            batched.append((index, text))
    verified: Optional[set[int]] = None
    for mode in modes:
        todo = [(index, text) for index, text in batched
                if runs_in_mode(mode, text)
                and (verified is None or index in verified)]
        mode_results = run_batch(runner, mode, todo, work_dir, notes)
        results.extend(mode_results)
        if mode.name == "parse":
            verified = {r.index for r in mode_results if r.outcome == "ok"}
    return results


def run_mutants(runner: Runner, modes: list[Mode],
                items: list[tuple[int, str]], jobs: int, batch: int,
                work_dir: Path, notes: list[str],
                record: Optional[Callable[[list[RunResult]], None]] = None,
                progress_total: Optional[int] = None) -> list[RunResult]:
    """Runs mutants in every mode, `batch` of them a gemm-opt run, on `jobs`
    threads; calls `record` with each batch's results as they come (under
    a lock) and returns them all, sorted by mutant.
    """
    size = max(1, batch)
    groups = [items[i:i + size] for i in range(0, len(items), size)]

    def work(group: list[tuple[int, str]]) -> list[RunResult]:
        if size == 1:
            return fuzz_one(runner, modes, group[0][0], group[0][1],
                            work_dir)
        return fuzz_batch(runner, modes, group, work_dir, notes)

    everything: list[RunResult] = []
    lock = threading.Lock()
    done = 0
    step = max(1, (progress_total or 1) // 10)
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = [pool.submit(work, group) for group in groups]
        for future in concurrent.futures.as_completed(futures):
            results = future.result()
            with lock:
                everything.extend(results)
                if record:
                    record(results)
                before = done
                done += len({r.index for r in results})
                if progress_total and done // step > before // step:
                    print(f"fuzz: {done}/{progress_total} inputs",
                          flush=True)
    mode_order = {m.name: i for i, m in enumerate(modes)}
    everything.sort(key=lambda r: (r.index, mode_order.get(r.mode, 0)))
    return everything


# ---------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------


def save_reproducers(out_dir: Path, found: dict[str, tuple[str, RunResult]],
                     gemm_opt: str) -> list[Path]:
    saved = []
    for signature, (text, result) in sorted(found.items()):
        digest = hashlib.sha1(signature.encode()).hexdigest()[:10]
        case_dir = out_dir / f"{result.outcome}-{digest}"
        case_dir.mkdir(parents=True, exist_ok=True)
        (case_dir / "input.mlir").write_text(text)
        command = " ".join(shlex.quote(a) for a in [
            gemm_opt, "input.mlir", *result.args, "--mlir-disable-threading",
            "-o", "/dev/null"])
        (case_dir / "command.sh").write_text(
            "#!/bin/sh\n# " + result.mode + "\ncd \"$(dirname \"$0\")\"\n" +
            command + "\n")
        (case_dir / "output.txt").write_text(
            f"exit: {result.returncode}\nsignature:\n{signature}\n\n" +
            result.output)
        saved.append(case_dir)
    return saved


def print_table(counts: dict[str, collections.Counter],
                modes: list[Mode]) -> None:
    width = max(len(m.name) for m in modes)
    header = f"{'mode':<{width}}  " + "  ".join(f"{o:>9}" for o in OUTCOMES)
    print(header)
    for mode in modes:
        row = counts.get(mode.name, collections.Counter())
        print(f"{mode.name:<{width}}  " +
              "  ".join(f"{row[o]:>9}" for o in OUTCOMES))


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gemm-opt", default=str(REPO_ROOT / "build" /
                                                  "bin" / "gemm-opt"))
    parser.add_argument("--mlir-opt", default=DEFAULT_MLIR_OPT,
                        help="upstream mlir-opt, to confirm upstream crashes")
    parser.add_argument("--test-dir", default=str(REPO_ROOT / "test"))
    parser.add_argument("--corpus", action="append", default=None,
                        help="folder under --test-dir (repeatable); default "
                        + ", ".join(DEFAULT_CORPUS_DIRS))
    parser.add_argument("--count", type=int, default=1000,
                        help="number of mutants")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=20.0,
                        help="seconds per gemm-opt run before it is a hang")
    parser.add_argument("--out", default="fuzz-out",
                        help="folder for crash and hang reproducers")
    parser.add_argument("--batch", type=int, default=100,
                        help="mutants per gemm-opt run (--split-input-file);"
                        " 1 runs gemm-opt once per mutant and mode")
    parser.add_argument("--outcomes", default=None,
                        help="file to write each run's outcome to, a line "
                        "`INDEX MODE OUTCOME` each, sorted")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress lines")
    args = parser.parse_args(argv)

    # Absolute paths: every run has its own working directory.
    gemm_opt = os.path.abspath(shutil.which(args.gemm_opt) or args.gemm_opt)
    mlir_opt = os.path.abspath(shutil.which(args.mlir_opt) or args.mlir_opt)
    if not os.access(gemm_opt, os.X_OK):
        print(f"fuzz: no gemm-opt at {gemm_opt}", file=sys.stderr)
        return 2
    corpus = load_corpus(Path(args.test_dir),
                         args.corpus or DEFAULT_CORPUS_DIRS)
    if not corpus:
        print("fuzz: empty corpus", file=sys.stderr)
        return 2
    modes = discover_modes(gemm_opt)
    print(f"fuzz: {len(corpus)} corpus inputs, seed {args.seed}, modes: " +
          ", ".join(m.name for m in modes))

    out_dir = Path(args.out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    work = tempfile.mkdtemp(prefix="fuzz-", dir=out_dir)
    runner = Runner(gemm_opt, mlir_opt, args.timeout, Path(work))
    parse_only = [Mode("parse", [])]
    notes: list[str] = []
    corpus_results = run_mutants(runner, parse_only, list(enumerate(corpus)),
                                 args.jobs, args.batch, Path(work), notes)
    verdicts = {r.index: r.outcome for r in corpus_results}
    verifying = [text for i, text in enumerate(corpus)
                 if verdicts[i] == "ok"]
    print(f"fuzz: {len(verifying)} of them verify")

    # Mutants are made up front, in order, so that the campaign is the same
    # whatever the number of jobs and the batch size; a repeated mutant is
    # drawn again.
    mutator = Mutator(corpus, args.seed, verifying)
    seen: set[str] = set()
    mutants = []
    for index in range(args.count):
        for attempt in range(20):
            text = mutator.mutant(index, attempt)
            if text not in seen:
                break
        seen.add(text)
        mutants.append(text)

    counts: dict[str, collections.Counter] = collections.defaultdict(
        collections.Counter)
    found: dict[str, tuple[str, RunResult]] = {}
    outcomes: list[tuple[int, str, str]] = []

    def record(results: list[RunResult]) -> None:
        for result in results:
            counts[result.mode][result.outcome] += 1
            outcomes.append((result.index, result.mode, result.outcome))
            if not result.signature:
                continue
            key = result.outcome + "\n" + result.signature
            text = mutants[result.index]
            if key not in found or len(text) < len(found[key][0]):
                found[key] = (text, result)

    started = time.monotonic()
    run_mutants(runner, modes, list(enumerate(mutants)), args.jobs,
                args.batch, Path(work), notes, record,
                None if args.quiet else args.count)
    elapsed = time.monotonic() - started
    shutil.rmtree(work, ignore_errors=True)

    print_table(counts, modes)
    saved = save_reproducers(out_dir, found, gemm_opt)
    crashes = sum(c["crash"] for c in counts.values())
    hangs = sum(c["hang"] for c in counts.values())
    known = sum(c["upstream-known"] for c in counts.values())
    silent = sum(c["silent"] for c in counts.values())
    for case_dir in saved:
        signature = (case_dir / "output.txt").read_text().split(
            "signature:\n", 1)[1].split("\n\n", 1)[0]
        print(f"fuzz: saved {case_dir}: " + signature.replace("\n", " | "))
    if known:
        print(f"fuzz: {known} runs hit the known upstream crash "
              f"({UPSTREAM_KNOWN['name']}), not counted as crashes")
    if silent:
        print(f"fuzz: {silent} runs failed without a diagnostic")
    for note in notes:
        print("fuzz: note: " + note)
    if args.outcomes:
        Path(args.outcomes).write_text("".join(
            f"{index} {mode} {outcome}\n"
            for index, mode, outcome in sorted(outcomes)))
    print(f"fuzz: {len(mutants)} inputs in {elapsed:.0f} s "
          f"({len(mutants) / max(elapsed, 1e-9):.2f} inputs/s, batch "
          f"{args.batch}, {args.jobs} jobs)")
    print(f"fuzz: {len(mutants)} inputs, {crashes} crashes, {hangs} hangs")
    return 1 if crashes or hangs else 0


if __name__ == "__main__":
    sys.exit(main())
