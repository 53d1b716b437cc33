"""The MoE routing bookkeeping on a CPU: ``ggemm.sort_by_expert`` against a
pure-Python reference, and ``ggemm.compat.aiter.grouped_gemm`` end to end
with NumPy arrays and a NumPy reference of segment_matmul's gather/scatter
semantics standing in for the kernel (the same function on torch tensors is
in test_torch_ops.py, skipped without torch)."""
from __future__ import annotations

from typing import Any

import pytest

import ggemm
from ggemm import ops

numpy = pytest.importorskip("numpy")


def reference_routing(ids: list, topk: int, experts: int):
    """Pairs sorted by (bucket, pair), by hand: the buckets are the ids,
    except that every id below 0 is one bucket and every id from E on
    another (those pairs keep their order on each side)."""
    def bucket(e: int) -> int:
        return -1 if e < 0 else min(e, experts)
    pairs = sorted(range(len(ids)), key=lambda p: (bucket(ids[p]), p))
    bounds = [sum(1 for e in ids if e < bound) for bound in
              range(experts + 1)]
    return bounds, [p // topk for p in pairs], pairs


@pytest.mark.parametrize("tokens, topk, experts", [
    (0, 2, 4), (1, 1, 1), (7, 2, 4), (33, 4, 8), (50, 8, 3)])
def test_sort_by_expert_matches_a_reference(tokens: int, topk: int,
                                            experts: int) -> None:
    generator = numpy.random.default_rng(tokens * 100 + topk)
    # Ids outside [0, E) too: -1 (padding) and other ranks' experts.
    ids = generator.integers(-3, experts + 3, size=(tokens, topk))
    for dtype in (numpy.int32, numpy.int64):
        routing = ggemm.sort_by_expert(ids.astype(dtype), experts)
        bounds, rows, pairs = reference_routing(ids.reshape(-1).tolist(),
                                                topk, experts)
        assert routing.seg_indptr.tolist() == bounds
        assert routing.row_indices.tolist() == rows
        assert routing.pair_indices.tolist() == pairs
        for field in routing:
            assert field.dtype == numpy.int32
    flat = ggemm.sort_by_expert(ids.reshape(-1), experts, topk=topk)
    assert flat.pair_indices.tolist() == pairs


def test_sort_by_expert_segments_hold_their_experts() -> None:
    ids = numpy.array([[3, 1], [1, 0], [2, 3], [-1, 1], [5, 0]])
    routing = ggemm.sort_by_expert(ids, num_experts=4)
    flat = ids.reshape(-1)
    seg = routing.seg_indptr.tolist()
    assert seg == [1, 3, 6, 7, 9]   # one -1 before, one 5 after
    for expert in range(4):
        for row in range(seg[expert], seg[expert + 1]):
            pair = routing.pair_indices[row]
            assert flat[pair] == expert
            assert routing.row_indices[row] == pair // 2
    # Tokens of one expert keep their order (a stable sort).
    assert routing.row_indices[seg[1]:seg[2]].tolist() == [0, 1, 3]


@pytest.mark.parametrize("args, message", [
    ((numpy.zeros((4, 2, 1), numpy.int32), 4), r"topk_ids: expected \[T, "
     r"topk\] \(or \[T \* topk\] with topk given\), got shape \[4, 2, 1\]"),
    ((numpy.zeros(8, numpy.int32), 4), r"topk_ids: expected \[T, topk\]"),
    ((numpy.zeros(7, numpy.int32), 4, 2), "7 ids are not a whole number of "
     "tokens of topk = 2"),
    ((numpy.zeros((4, 2), numpy.int32), 4, 3),
     r"topk: 3, but topk_ids is \[4, 2\]"),
    ((numpy.zeros((4, 2), numpy.float32), 4),
     "topk_ids: expected int32 or int64 expert ids, got float32"),
    ((numpy.zeros((4, 2), numpy.int32), -1),
     "num_experts: expected a non-negative int"),
    ((numpy.zeros(8, numpy.int32), 4, 0), "topk: expected a positive int"),
])
def test_sort_by_expert_argument_errors(args: tuple, message: str) -> None:
    with pytest.raises(ops.ArgumentError, match=message):
        ggemm.sort_by_expert(*args)


class DeviceArray(numpy.ndarray):
    """A NumPy array that answers like a CUDA torch tensor where
    aiter.grouped_gemm looks (device, requires_grad, dim(), view(*shape))."""

    device = "cuda:0"
    requires_grad = False

    def dim(self) -> int:
        return self.ndim

    def view(self, *shape: Any) -> Any:  # torch's view(*shape)
        return self.reshape(shape)


def on_device(array: Any) -> DeviceArray:
    return numpy.asarray(array).view(DeviceArray)


def reference_segment_matmul(x: Any, w: Any, seg_indptr: Any, *,
                             row_indices: Any = None,
                             scatter_indices: Any = None, out: Any = None,
                             **unused: Any) -> Any:
    """segment_matmul's semantics (docs/Python.md) in NumPy, row by row:
    clamped segments, gathered rows (zeros outside [0, T)), scattered rows
    (skipped outside [0, Y))."""
    assert not unused
    tokens = x.shape[0]
    rows = tokens if row_indices is None else len(row_indices)
    bounds = [min(max(int(b), 0), rows) for b in seg_indptr]
    for group in range(len(bounds) - 1):
        for row in range(bounds[group], max(bounds[group + 1],
                                            bounds[group])):
            source = row if row_indices is None else int(row_indices[row])
            value = (numpy.asarray(x[source]) if 0 <= source < tokens
                     else numpy.zeros(x.shape[1])) @ numpy.asarray(w[group]).T
            target = row if scatter_indices is None else \
                int(scatter_indices[row])
            if 0 <= target < out.shape[0]:
                out[target] = value
    return out


def test_aiter_grouped_gemm_routes_on_the_device(monkeypatch) -> None:
    """aiter.grouped_gemm = sort_by_expert + one gathered, scattered
    segment_matmul: checked against out[t, j] = x[t] @ W[ids[t, j]]ᵀ with
    the op's semantics in NumPy standing in for the kernel."""
    import types
    from ggemm.compat import aiter
    calls = []

    def segment_matmul(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return reference_segment_matmul(*args, **kwargs)

    stand_in = types.SimpleNamespace(
        is_grad_enabled=lambda: False,
        zeros=lambda shape, dtype=None, device=None: on_device(
            numpy.zeros(shape)))
    monkeypatch.setattr(ops, "torch", stand_in)
    monkeypatch.setattr(ops, "segment_matmul", segment_matmul)
    generator = numpy.random.default_rng(7)
    tokens, topk, experts, n, k = 11, 3, 4, 5, 6
    x = on_device(generator.standard_normal((tokens, k)))
    w = on_device(generator.standard_normal((experts, n, k)))
    ids = generator.integers(-1, experts + 1, size=(tokens, topk))
    out = aiter.grouped_gemm(x, w, on_device(ids.astype(numpy.int32)), topk)
    expected = numpy.zeros((tokens, topk, n))
    for t in range(tokens):
        for j in range(topk):
            if 0 <= ids[t, j] < experts:
                expected[t, j] = x[t] @ w[ids[t, j]].T
    assert out.shape == (tokens, topk, n)
    numpy.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    (call,) = calls
    assert set(call) == {"row_indices", "scatter_indices", "out"}
    assert call["row_indices"].dtype == numpy.int32


@pytest.mark.parametrize("call, message", [
    (lambda a: a.grouped_gemm(on_device(numpy.zeros((4, 8))),
                              on_device(numpy.zeros((2, 8, 8))),
                              on_device(numpy.zeros((4, 2), numpy.int32)),
                              2, block_m=64),
     "block_m: not arguments of grouped_gemm"),
    (lambda a: a.grouped_gemm(on_device(numpy.zeros(8)),
                              on_device(numpy.zeros((2, 8, 8))),
                              on_device(numpy.zeros((4, 2), numpy.int32)), 2),
     r"input: expected \[T, K\], got shape \[8\]"),
    (lambda a: a.grouped_gemm(on_device(numpy.zeros((4, 8))),
                              on_device(numpy.zeros((8, 8))),
                              on_device(numpy.zeros((4, 2), numpy.int32)), 2),
     r"weights: expected \[E, N, K\]"),
    (lambda a: a.grouped_gemm(on_device(numpy.zeros((4, 8))),
                              on_device(numpy.zeros((2, 8, 8))),
                              on_device(numpy.zeros((4, 3), numpy.int32)), 2),
     r"expert_ids: expected \[4, 2\] \(\[T, topk\]\) or \[8\], got \[4, 3\]"),
    (lambda a: a.grouped_gemm(on_device(numpy.zeros((4, 8))),
                              on_device(numpy.zeros((2, 8, 8))),
                              numpy.zeros((4, 2), numpy.int32), 2),
     r"expert_ids: expected a tensor on input's device \(cuda:0\)"),
])
def test_aiter_grouped_gemm_argument_errors(monkeypatch, call,
                                            message: str) -> None:
    import types
    from ggemm.compat import aiter
    monkeypatch.setattr(ops, "torch", types.SimpleNamespace())
    with pytest.raises(ops.ArgumentError, match=message):
        call(aiter)
