"""The interleaved gate/up weight layout of the fused SwiGLU on a CPU
(``gate_up_block``): the converters against a NumPy reference, the IR and
catalog line of a Problem, every argument error, and (with the compiler)
the tile the compiler chooses and the tile program it writes. Needs NumPy,
not torch or a GPU."""
from __future__ import annotations

import re

import pytest

np = pytest.importorskip("numpy")

import ggemm  # noqa: E402
from ggemm import ops  # noqa: E402
from ggemm.problem import Problem, SpecError  # noqa: E402
from test_ops import FakeTensor, needs_compiler, plan_seg  # noqa: E402


def reference_interleave(w13: "np.ndarray", block: int, axis: int):
    """Row by row: block j of the result is gate rows [B j, B j + B), then
    up rows [N + B j, N + B j + B), of the side-by-side ``w13``."""
    n = w13.shape[axis] // 2
    rows = []
    for j in range(n // block):
        rows += list(range(block * j, block * j + block))
        rows += list(range(n + block * j, n + block * j + block))
    return np.take(w13, rows, axis=axis)


# -- the converters ------------------------------------------------------------

@pytest.mark.parametrize("layout,shape", [("nk", (3, 96, 5)),
                                          ("kn", (3, 5, 96))])
@pytest.mark.parametrize("block", [8, 16, 48])
def test_interleave_matches_the_row_by_row_reference(layout: str,
                                                     shape: tuple,
                                                     block: int) -> None:
    w13 = np.random.default_rng(block).standard_normal(shape).astype(
        np.float32)
    axis = 1 if layout == "nk" else 2
    blocked = ggemm.interleave_gate_up(w13, block, weight_layout=layout)
    assert blocked.shape == w13.shape and blocked.dtype == w13.dtype
    assert blocked.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(blocked,
                                  reference_interleave(w13, block, axis))
    back = ggemm.deinterleave_gate_up(blocked, block, weight_layout=layout)
    np.testing.assert_array_equal(back, w13)


def test_one_block_is_gate_then_up() -> None:
    """N = B: the layout is the side-by-side one."""
    w13 = np.arange(2 * 32 * 3).reshape(2, 32, 3)
    np.testing.assert_array_equal(ggemm.interleave_gate_up(w13, 16), w13)


def test_the_bias_order_is_not_the_weights() -> None:
    """A [1, R, 2N] view through 'kn' interleaves the columns of a [R, 2N]
    matrix: what the autograd does with z, dz and the bias."""
    bias = np.arange(2 * 32, dtype=np.float32).reshape(2, 32)
    columns = ggemm.interleave_gate_up(bias[None], 8, "kn")[0]
    assert columns[0].tolist()[:16] == list(range(8)) + list(range(16, 24))
    np.testing.assert_array_equal(
        ggemm.deinterleave_gate_up(columns[None], 8, "kn")[0], bias)


@pytest.mark.parametrize("args,message", [
    ((np.zeros((64, 8)), 8), "w13: expected a weight [Gw, 2N, K] "
     "(weight_layout 'nk') or [Gw, K, 2N] ('kn'), got shape [64, 8]"),
    ((np.zeros((2, 63, 8)), 8), "w13: expected an even extent of gate and "
     "up rows on dimension 1, got 63; shape is [2, 63, 8]"),
    ((np.zeros((2, 48, 8)), 16), "gate_up_block: N (24, half of w's 2N gate "
     "and up rows) must be a multiple of gate_up_block (16)"),
    ((np.zeros((2, 64, 8)), 12), "gate_up_block: expected a positive "
     "multiple of 8 of at most 128"),
    ((np.zeros((2, 512, 8)), 256), "gate_up_block: expected a positive "
     "multiple of 8 of at most 128"),
    ((np.zeros((2, 64, 8)), 8.0), "gate_up_block: expected an int, got 8.0"),
    ((np.zeros((2, 64, 8)), True), "gate_up_block: expected an int, got "
     "True"),
    ((np.zeros((2, 64, 8)), 8, "mk"), "weight_layout: expected 'nk' or "
     "'kn', got 'mk'"),
])
def test_converter_argument_errors(args: tuple, message: str) -> None:
    with pytest.raises(ops.ArgumentError, match=re.escape(message)):
        ggemm.interleave_gate_up(*args)


def test_deinterleave_names_its_argument() -> None:
    with pytest.raises(ops.ArgumentError, match=re.escape(
            "w: expected an even extent of gate and up rows on dimension 2")):
        ggemm.deinterleave_gate_up(np.zeros((2, 8, 63)), 8, "kn")


# -- the Problem and its IR ----------------------------------------------------

UP = dict(op="segment_matmul", dtype="bf16", n=2048, k=7168, groups=256,
          row_indices=True, bias=True, activation="swiglu")


def test_the_epilogue_carries_the_block() -> None:
    text = Problem(**UP, gate_up_block=64).mlir()
    assert ("{epilogue = #ggemm.epilogue<activation = swiglu, accumulate = "
            "false, gate_up_block = 64>}") in text
    # The weight's and the bias's shapes are the side-by-side ones.
    assert "%w: memref<256x4096x7168xbf16>" in text
    assert "%bias: memref<256x4096xf32>" in text
    # Side by side, the IR (and so the cache key) is as it was.
    assert "gate_up_block" not in Problem(**UP).mlir()
    assert "gate_up_block" not in Problem(**UP).spec()
    line = Problem(**UP, gate_up_block=64).spec()
    assert line["gate_up_block"] == 64
    assert Problem.from_spec(line) == Problem(**UP, gate_up_block=64)
    assert Problem(**UP, gate_up_block=64).key != Problem(**UP).key


@pytest.mark.parametrize("fields,message", [
    ({"activation": "silu", "gate_up_block": 64},
     "gate_up_block: orders the gate and up rows of a swiglu weight, not of "
     "activation 'silu'"),
    ({"gate_up_block": 12}, "gate_up_block (12) must be a multiple of 8 of "
     "at most 128"),
    ({"gate_up_block": 136}, "gate_up_block (136) must be a multiple of 8"),
    ({"gate_up_block": -8}, "gate_up_block must be a non-negative int; got "
     "-8"),
    ({"gate_up_block": True}, "gate_up_block must be a non-negative int; "
     "got True"),
    ({"gate_up_block": 96}, "n (2048) must be a multiple of gate_up_block "
     "(96)"),
    ({"gate_up_block": 16, "weight_layout": "kn"},
     "gate_up_block (16) with weight_layout 'kn' must be a multiple of 32"),
    ({"gate_up_block": 64, "config": {"block_m": 128, "block_n": 256,
                                      "block_k": 64}},
     "config.block_n (256) must be 2 * gate_up_block (128)"),
])
def test_problem_rejects_bad_blocks(fields: dict, message: str) -> None:
    with pytest.raises(SpecError, match=re.escape(message)):
        Problem(**{**UP, **fields})


# -- planning a call -----------------------------------------------------------

def test_plan_keys_the_block() -> None:
    w = FakeTensor((8, 512, 512))
    plan = plan_seg(w=w, activation="swiglu", gate_up_block=64)
    assert plan.problem.gate_up_block == 64 and plan.out_shape == (1000, 256)
    side = plan_seg(w=w, activation="swiglu")
    assert side.problem.gate_up_block == 0 and side.key != plan.key
    # 0 is the side-by-side layout, for any activation.
    assert plan_seg(gate_up_block=0).problem.gate_up_block == 0
    kn = plan_seg(w=FakeTensor((8, 512, 1024)), weight_layout="kn",
                  activation="swiglu", gate_up_block=64).problem
    assert (kn.n, kn.gate_up_block) == (512, 64)


@pytest.mark.parametrize("overrides,message", [
    ({"gate_up_block": 64}, "gate_up_block: orders the gate and up rows of "
     "a swiglu weight; it needs activation='swiglu', got 'none'"),
    ({"activation": "swiglu", "gate_up_block": 12},
     "gate_up_block: expected a positive multiple of 8 of at most 128"),
    ({"activation": "swiglu", "gate_up_block": "64"},
     "gate_up_block: expected an int, got '64'"),
    ({"activation": "swiglu", "gate_up_block": 48},
     "gate_up_block: N (128, half of w's 2N gate and up rows) must be a "
     "multiple of gate_up_block (48)"),
    ({"activation": "swiglu", "gate_up_block": 16, "weight_layout": "kn",
      "w": FakeTensor((8, 512, 256))},
     "gate_up_block: 16 with weight_layout 'kn' must be a multiple of 32"),
    ({"activation": "swiglu", "gate_up_block": 64,
      "config": {"block_m": 128, "block_n": 256, "block_k": 64}},
     "config: block_n must be 2 * gate_up_block (128, one block of gate and "
     "up rows a tile), got 256"),
])
def test_plan_argument_errors(overrides: dict, message: str) -> None:
    with pytest.raises(ops.ArgumentError, match=re.escape(message)):
        plan_seg(**overrides)


# -- the compiler --------------------------------------------------------------

@needs_compiler
def test_the_compiler_tiles_one_block_per_tile() -> None:
    """ggemm-select-config makes block_n one block; ggemm-tile loads it
    with one unsplit load at the tile's column."""
    problem = Problem(**UP, gate_up_block=64)
    tiled = ggemm.run_pipeline(problem.mlir(),
                               "ggemm-select-config,ggemm-tile")
    assert "block_n = 128" in tiled
    assert "split(" not in tiled
    assert "-> !ggemm.tile<128x64xbf16>" in tiled
    side = ggemm.run_pipeline(Problem(**UP).mlir(),
                              "ggemm-select-config,ggemm-tile")
    assert "split(" in side
