"""The catalog of examples/moe_layer.py's GPU check holds every kernel the
example launches: each GEMM of its layer's forward, of the backward that
ggemm.torch_ops runs for it, and of its glued peer, planned by the ops'
own planner on stand-in tensors (at the check's sizes, for the whole layer
and for each simulated rank's shard), must be a problem of
test/gpu/check_moe_example.py's spec, and that spec must be part of the
MoE catalog's (test/gpu/check_moe.py --write-spec). The GPU host has no
compiler: a kernel missing here fails the GPU step. No torch needed."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ggemm import catalog, ops
from ggemm.expert_parallel import expert_ranges
from test_ops import FakeTensor

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "test" / "gpu"))
import check_moe  # noqa: E402
import check_moe_example  # noqa: E402


def layer_problems(hidden: int, inter: int, groups: int, tokens: int,
                   top_k: int) -> dict:
    """What the layer holding ``groups`` experts launches, by call."""
    rows = tokens * top_k
    x = FakeTensor((tokens, hidden))
    w13 = FakeTensor((groups, 2 * inter, hidden))
    w2 = FakeTensor((groups, hidden, inter))
    seg = FakeTensor((groups + 1,), "int32")
    index = FakeTensor((rows,), "int32")
    scale = FakeTensor((rows,), "float32")
    h = FakeTensor((rows, inter))
    dy = FakeTensor((rows, hidden))
    dz = FakeTensor((rows, 2 * inter))

    def plan(*args, **kwargs):
        return ops.plan_segment_matmul(*args, **kwargs).problem

    def kragged(x, dy):
        # torch_ops: dW in w's dtype and layout.
        return ops.plan_segment_matmul_k(x, dy, seg, num_weights=groups,
                                         out_dtype="bf16").plan.problem

    return {
        "up": plan(x, w13, seg, row_indices=index, activation="swiglu"),
        "down to slots": plan(h, w2, seg, row_scale=scale,
                              scatter_indices=index, out=dy),
        "down atomic": plan(h, w2, seg, row_scale=scale,
                            scatter_indices=index,
                            out=FakeTensor((tokens, hidden), "float32"),
                            accumulate=True, atomic=True),
        "down (autograd)": plan(h, w2, seg, row_scale=scale),
        "down: z": plan(h, w2, seg, out_dtype="f32"),
        "down: dh": plan(dy, w2, seg, weight_layout="kn", out_dtype="bf16"),
        "down: dW2": kragged(h, dy),
        "up: z": plan(x, w13, seg, row_indices=index, out_dtype="f32"),
        "up: dx": plan(dz, w13, seg, weight_layout="kn", out_dtype="f32"),
        "up: dW13": kragged(FakeTensor((rows, hidden)), dz),
        "glued up": plan(FakeTensor((rows, hidden)), w13, seg),
        "glued down": plan(h, w2, seg),
        "glued up: dx": plan(dz, w13, seg, weight_layout="kn",
                             out_dtype="bf16"),
    }


def spec_problems(document: dict) -> set:
    return set(catalog.expand_spec(document))


@pytest.mark.parametrize("model", list(check_moe_example.MODELS))
def test_every_kernel_of_the_layer_is_in_the_spec(model: str) -> None:
    m = check_moe_example.MODELS[model]
    spec = spec_problems(check_moe_example.spec())
    shards = [end - first for first, end in expert_ranges(
        m["experts"], check_moe_example.WORLD_SIZE)]
    for groups in [m["experts"]] + shards:
        problems = layer_problems(m["hidden"], m["intermediate"], groups,
                                  max(m["tokens"]), m["top_k"])
        missing = [name for name, problem in problems.items()
                   if problem not in spec
                   and not (groups != m["experts"] and "glued" in name)]
        assert not missing, f"{model}, {groups} experts: {missing}"


def test_the_spec_has_a_routing_kernel_per_layer() -> None:
    spec = [line for line in check_moe_example.spec()["kernels"]
            if line["op"] == "sort_by_expert"]
    assert {(line["num_experts"], line["topk"]) for line in spec} == {
        (m["experts"], m["top_k"])
        for m in check_moe_example.MODELS.values()}


def test_the_moe_catalog_covers_the_example() -> None:
    example = spec_problems(check_moe_example.spec())
    assert example <= spec_problems(check_moe.spec())


def test_the_moe_catalog_covers_expert_parallel_timing() -> None:
    """check_ep.py times ExpertParallelMoE's forward at DeepSeek-V3's
    sizes: up and down on each rank's experts (the received rows gathered,
    weighted and scattered back to arrival order), the whole layer's on
    one GPU, and the routing kernel; all must be in the MoE catalog (the
    checked layers' EP calls are the shard calls above)."""
    import check_ep
    m = check_ep.BENCH_MODEL
    spec = spec_problems(check_moe.spec())
    assert spec_problems(check_ep.spec()) <= spec
    shards = {end - first for first, end in expert_ranges(
        m["experts"], check_ep.WORLD_SIZE)}
    for groups in sorted({m["experts"]} | shards):
        problems = layer_problems(m["hidden"], m["intermediate"], groups,
                                  check_ep.BENCH_TOKENS[-1], m["top_k"])
        missing = [name for name in ("up", "down to slots")
                   if problems[name] not in spec]
        assert not missing, f"{groups} experts: {missing}"
