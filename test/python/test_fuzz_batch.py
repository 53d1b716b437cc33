"""The fuzzer's batches (test/fuzz/fuzz_gemm_opt.py --batch N) classify
every input as its own gemm-opt run (--batch 1) does."""
import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "fuzz_gemm_opt", ROOT / "test" / "fuzz" / "fuzz_gemm_opt.py")
fuzz = importlib.util.module_from_spec(_spec)
sys.modules["fuzz_gemm_opt"] = fuzz  # dataclasses look their module up
_spec.loader.exec_module(fuzz)


def test_chunk_lines() -> None:
    batch = fuzz.Batch.make([(7, "a\nb\n"), (8, "c"), (9, "d\ne\n")])
    assert batch.text == "a\nb\n// -----\nc\n// -----\nd\ne\n"
    assert batch.indices == [7, 8, 9]
    # gemm-opt puts the first chunk's module at line 0 and each later
    # chunk's at the marker before it, from column 9.
    assert batch.chunk_of(0, 0) == 0
    assert batch.chunk_of(2, 1) == 0
    assert batch.chunk_of(3, 9) == 1
    assert batch.chunk_of(3, 1) == 0
    assert batch.chunk_of(4, 1) == 1
    assert batch.chunk_of(7, 2) == 2
    assert batch.chunk_of(99, 1) == 2


def test_assign_diagnostics() -> None:
    batch = fuzz.Batch.make([(0, "a\n"), (1, "b\n"), (2, "c\n"),
                             (3, "d\n")])
    stderr = ("x.mlir:1:1: error: first\n  a\n  ^\n"
              "x.mlir:1:1: note: see\n"
              "error: unlocated, after chunk 0 and before chunk 0\n"
              "x.mlir:0:0: warning: still chunk 0\n"
              "error: between chunks 0 and 2\n"
              "x.mlir:5:1: error: third\n"
              "<unknown>:0: warning: not an error, between 2 and the end\n"
              "x.mlir:7:1: error: fourth\n")
    texts, ambiguous = fuzz.assign_diagnostics(batch, stderr, "x.mlir")
    assert "first" in texts[0] and "see" in texts[0]
    assert "unlocated" in texts[0] and "still chunk 0" in texts[0]
    assert texts[1] == ""
    assert "third" in texts[2] and "fourth" in texts[3]
    # An error that can be about chunks 0 to 2 settles none of them; a
    # warning does not matter.
    assert ambiguous == [{0, 1, 2}]


def _gemm_opt() -> str:
    build = Path(os.environ.get("GGEMM_BUILD_DIR", ROOT / "build"))
    path = build / "bin" / "gemm-opt"
    if not os.access(path, os.X_OK):
        pytest.skip(f"gemm-opt not built at {path}")
    return str(path)


HANDWRITTEN = [
    "func.func @ok() {\n  return\n}\n",
    # LLVM's NVPTX back end reports the negative nvvm.maxntid through
    # LLVMContext's default handler, which exits: the ggemm-to-ptx batch
    # ends at this chunk (not the last), and its mutants run alone.
    "gpu.module @k {\n  llvm.func @kernel() attributes {nvvm.kernel, "
    "nvvm.maxntid = array<i32: -384, 1, 1>} {\n    llvm.return\n  }\n}\n",
    "",  # an empty module
    "func.func @eof() {\n",  # a parse error at the end of the chunk
    "func.func @bad(%x: i32) -> i64 {\n  return %x : i32\n}\n",
    '"unknown.op"() : () -> ()\n',
    "func.func @no_newline() {\n  return\n}",
    # A parse error in an op after its region resolved a forward reference
    # leaves a use of a freed op (MLIR 22's parser): harmless alone, it can
    # corrupt the heap for a later chunk of the same batch.
    "func.func @f(%m: memref<?xf32>) {\n"
    "  %d = memref.dim %m, %c0 : memref<?xf32>\n"
    "  %t = tensor.generate %d {\n  ^bb0(%i: index):\n"
    "    %c0 = arith.constant 0 : index\n"
    "    %v = arith.constant 1.0 : f32\n"
    "    tensor.yield %v : f32\n  } : 42\n  return\n}\n",
]


def test_batches_agree_with_single_runs(tmp_path: Path) -> None:
    runner = fuzz.Runner(_gemm_opt(), fuzz.DEFAULT_MLIR_OPT, 60.0, tmp_path)
    modes = fuzz.discover_modes(runner.gemm_opt)
    corpus = fuzz.load_corpus(ROOT / "test", fuzz.DEFAULT_CORPUS_DIRS)
    mutator = fuzz.Mutator(corpus, seed=11)
    inputs = HANDWRITTEN + [mutator.mutant(i) for i in range(30)]
    items = list(enumerate(inputs))

    def outcomes(batch: int,
                 notes: list[str]) -> list[tuple[int, str, str]]:
        results = fuzz.run_mutants(runner, modes, items, 2, batch, tmp_path,
                                   notes)
        return [(r.index, r.mode, r.outcome) for r in results]

    alone_notes: list[str] = []
    alone = outcomes(1, alone_notes)
    assert alone_notes == []
    batch_notes: list[str] = []
    assert outcomes(9, batch_notes) == alone
    assert any(note.startswith("pipeline:ggemm-to-ptx: unexpected batch "
                               "output") for note in batch_notes)
    assert all("unexpected batch output" in note
               or "crashed together" in note for note in batch_notes)
    by_input = {(index, mode): outcome for index, mode, outcome in alone}
    assert by_input[(0, "parse")] == "ok"
    assert by_input[(1, "pipeline:ggemm-to-ptx")] == "diagnosed"
    assert by_input[(2, "parse")] == "ok"
    assert by_input[(3, "parse")] == "diagnosed"
    assert by_input[(4, "parse")] == "diagnosed"
    assert by_input[(7, "parse")] == "diagnosed"
    # The mutants reach the passes, and some of them fail there.
    assert any(mode != "parse" and outcome == "diagnosed"
               for _, mode, outcome in alone)
