"""torch.library registration of the ops: schemas, fake (meta) shapes and
autograd wiring, on a CPU. Skipped where torch is not installed (it is not a
Debian package of this machine); the GPU check (test/gpu/check_python.py)
runs the same ops, torch.compile and autograd for real."""
import pytest

torch = pytest.importorskip("torch")

import ggemm  # noqa: E402
from ggemm import torch_ops  # noqa: E402,F401  (registers the ops)
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402


def test_ops_are_registered() -> None:
    for name in ("segment_matmul", "masked_matmul", "batched_matmul",
                 "segment_matmul_out", "masked_matmul_out",
                 "batched_matmul_out", "segment_matmul_k",
                 "segment_matmul_k_out", "segment_matmul_k_torch",
                 "segment_matmul_k_transposed",
                 "segment_matmul_k_transposed_out"):
        assert hasattr(torch.ops.ggemm, name), name


def test_fake_shapes() -> None:
    with FakeTensorMode():
        x = torch.empty(100, 64, dtype=torch.bfloat16)
        w = torch.empty(4, 32, 64, dtype=torch.bfloat16)
        seg = torch.empty(5, dtype=torch.int32)
        y = torch.ops.ggemm.segment_matmul(x, w, seg, None, None, None, "nk",
                                           "none", "f32", "", None, 0)
        assert tuple(y.shape) == (100, 32) and y.dtype == torch.float32
        wkn = torch.empty(4, 64, 48, dtype=torch.bfloat16)
        y = torch.ops.ggemm.segment_matmul(x, wkn, seg, None, None, None,
                                           "kn", "silu", "bf16", "", None, 0)
        assert tuple(y.shape) == (100, 48)
        # Gathered rows: M from row_indices; swiglu: half of w's N.
        rows = torch.empty(300, dtype=torch.int32)
        y = torch.ops.ggemm.segment_matmul(x, w, seg, None, None, None, "nk",
                                           "swiglu", "bf16", "", rows, 0)
        assert tuple(y.shape) == (300, 16)
        y = torch.ops.ggemm.segment_matmul(x, wkn, seg, None, None, None,
                                           "kn", "swiglu", "f32", "", None, 0)
        assert tuple(y.shape) == (100, 24) and y.dtype == torch.float32
        xb = torch.empty(4, 10, 64, dtype=torch.bfloat16)
        y = torch.ops.ggemm.batched_matmul(xb, w, None, None, None, "nk",
                                           "none", "bf16", "")
        assert tuple(y.shape) == (4, 10, 32)
        dw = torch.ops.ggemm.segment_matmul_k_torch(x, torch.empty(
            100, 32), seg, None, 4)
        assert tuple(dw.shape) == (4, 32, 64)
        dy = torch.empty(100, 32, dtype=torch.bfloat16)
        dw = torch.ops.ggemm.segment_matmul_k(x, dy, seg, None, 4, "nk",
                                              "f32", "", "")
        assert tuple(dw.shape) == (4, 32, 64) and dw.dtype == torch.float32
        dw = torch.ops.ggemm.segment_matmul_k(x, dy, seg, None, 3, "kn",
                                              "bf16", "", "torch")
        assert tuple(dw.shape) == (3, 64, 32) and dw.dtype == torch.bfloat16


def test_opcheck_schema() -> None:
    op = torch.ops.ggemm.segment_matmul.default
    assert "Tensor? weight_indices" in str(op._schema)
    # row_indices and gate_up_block are last: autograd's input positions
    # stay as they were.
    assert [a.name for a in op._schema.arguments[-2:]] == ["row_indices",
                                                           "gate_up_block"]
    assert [a.name for a in op._schema.arguments[4:6]] == ["bias",
                                                           "row_scale"]
    out_op = torch.ops.ggemm.segment_matmul_out.default._schema
    assert out_op.arguments[6].alias_info.is_write
    assert [a.name for a in out_op.arguments[-4:]] == [
        "row_indices", "scatter_indices", "atomic", "gate_up_block"]


def test_cpu_tensors_are_rejected_by_name() -> None:
    x = torch.zeros(10, 64, dtype=torch.bfloat16)
    w = torch.zeros(2, 32, 64, dtype=torch.bfloat16)
    seg = torch.tensor([0, 5, 10], dtype=torch.int32)
    with pytest.raises(ggemm.ArgumentError, match="x: expected a CUDA "
                       "tensor, got device cpu"):
        ggemm.segment_matmul(x, w, seg)


def test_kragged_out_op_mutates_out() -> None:
    for op in (torch.ops.ggemm.segment_matmul_k_out,
               torch.ops.ggemm.segment_matmul_k_transposed_out):
        out = [a for a in op.default._schema.arguments if a.name == "out"][0]
        assert out.alias_info.is_write


def test_kragged_transposed_fake_shapes() -> None:
    """The FP8 K-ragged op (x [K, T], dy [N, T], 1x128 token scales) and
    the bf16 one given transposed: dW's shape from dim 0 of the operands."""
    with FakeTensorMode():
        x = torch.empty(64, 1024, dtype=torch.float8_e4m3fn)
        dy = torch.empty(32, 1024, dtype=torch.float8_e4m3fn)
        seg = torch.empty(5, dtype=torch.int32)
        xs, dys = torch.empty(8, 64).t(), torch.empty(8, 32).t()
        dw = torch.ops.ggemm.segment_matmul_k_transposed(
            x, dy, seg, xs, dys, None, 4, "nk", "f32", "", "")
        assert tuple(dw.shape) == (4, 32, 64) and dw.dtype == torch.float32
        dw = torch.ops.ggemm.segment_matmul_k_transposed(
            x.to(torch.bfloat16), dy.to(torch.bfloat16), seg, None, None,
            None, 3, "kn", "bf16", "", "torch")
        assert tuple(dw.shape) == (3, 64, 32) and dw.dtype == torch.bfloat16
    schema = str(torch.ops.ggemm.segment_matmul_k_transposed.default._schema)
    assert "Tensor? x_scale, Tensor? dy_scale" in schema


def test_kragged_fp8_cpu_tensors_are_rejected_by_name() -> None:
    x = torch.zeros(64, 256, dtype=torch.float8_e4m3fn)
    seg = torch.tensor([0, 100, 256], dtype=torch.int32)
    scale = torch.ones(2, 64).t()
    with pytest.raises(ggemm.ArgumentError, match="x: expected a CUDA "
                       "tensor, got device cpu"):
        ggemm.segment_matmul_k(x, x, seg, transposed=True, x_scale=scale,
                               dy_scale=scale)


def test_segment_sums_follow_the_segments() -> None:
    """The bias gradient's per-weight row sums (no device sync), on CPU
    tensors: clamped offsets, empty segments, rows in no segment, weight
    indices outside [0, Gw)."""
    from ggemm.torch_ops import _segment_sums
    grad = torch.arange(20, dtype=torch.float32).reshape(10, 2)
    seg = torch.tensor([1, 3, 3, 7, 12], dtype=torch.int64)
    sums = _segment_sums(grad, seg, None, 4)
    ref = torch.stack([grad[1:3].sum(0), torch.zeros(2), grad[3:7].sum(0),
                       grad[7:10].sum(0)])
    assert torch.equal(sums, ref)
    idx = torch.tensor([1, 0, 1, 5], dtype=torch.int32)
    sums = _segment_sums(grad, seg, idx, 2)
    assert torch.equal(sums, torch.stack([torch.zeros(2),
                                          grad[1:7].sum(0)]))
    assert torch.equal(_segment_sums(grad[:0], seg, None, 4),
                       torch.zeros(4, 2))


def test_kragged_cpu_tensors_are_rejected_by_name() -> None:
    x = torch.zeros(10, 64, dtype=torch.bfloat16)
    seg = torch.tensor([0, 5, 10], dtype=torch.int32)
    with pytest.raises(ggemm.ArgumentError, match="x: expected a CUDA "
                       "tensor, got device cpu"):
        ggemm.segment_matmul_k(x, x, seg)


def test_sort_by_expert_on_torch_tensors() -> None:
    """The device routing (argsort, searchsorted; no synchronisation) gives
    what the NumPy path gives, on CPU tensors."""
    pytest.importorskip("numpy")
    ids = torch.tensor([[3, 1], [1, 0], [2, 3], [-1, 1], [5, 0]])
    for dtype in (torch.int32, torch.int64):
        routing = ggemm.sort_by_expert(ids.to(dtype), num_experts=4)
        reference = ggemm.sort_by_expert(ids.numpy(), num_experts=4)
        for got, want in zip(routing, reference):
            assert got.dtype == torch.int32
            assert got.tolist() == want.tolist()
    flat = ggemm.sort_by_expert(ids.reshape(-1), 4, topk=2)
    assert flat.seg_indptr.tolist() == [1, 3, 6, 7, 9]
    assert isinstance(flat.pair_indices, torch.Tensor)


def test_swiglu_backward_matches_autograd() -> None:
    from ggemm.torch_ops import _activate, _activation_backward
    torch.manual_seed(0)
    z = torch.randn(7, 10, dtype=torch.float64, requires_grad=True)
    h = _activate(z, "swiglu")
    assert tuple(h.shape) == (7, 5)
    gate, up = z[:, :5], z[:, 5:]
    assert torch.allclose(h, torch.nn.functional.silu(gate) * up)
    grad = torch.randn(7, 5, dtype=torch.float64)
    (expected,) = torch.autograd.grad(h, z, grad)
    got = _activation_backward(grad, z.detach(), "swiglu")
    assert tuple(got.shape) == (7, 10)
    assert torch.allclose(got, expected)
    for activation in ("relu", "gelu", "silu"):
        z1 = torch.randn(7, 5, dtype=torch.float64, requires_grad=True)
        (want,) = torch.autograd.grad(_activate(z1, activation), z1, grad)
        assert torch.allclose(_activation_backward(grad, z1.detach(),
                                                   activation), want)


def test_gather_helpers_of_the_backward() -> None:
    """dx of a gather adds each row's gradient onto its token (twice for a
    token gathered twice, nothing for an index outside [0, T)); dW reads
    the gathered rows, zero for those indices."""
    from ggemm.torch_ops import _gather_rows, _scatter_add_rows
    x = torch.arange(12, dtype=torch.float32).reshape(4, 3)
    index = torch.tensor([2, 0, 2, -1, 4], dtype=torch.int32)
    gathered = _gather_rows(x, index)
    assert torch.equal(gathered, torch.stack([x[2], x[0], x[2],
                                              torch.zeros(3),
                                              torch.zeros(3)]))
    assert torch.equal(_gather_rows(x[:0], index), torch.zeros(5, 3))
    rows = torch.ones(5, 3, dtype=torch.bfloat16)
    dx = _scatter_add_rows(rows, index, 4)
    assert dx.dtype == torch.float32
    assert dx[:, 0].tolist() == [1.0, 0.0, 2.0, 0.0]


def test_scatter_is_not_differentiable_and_says_so(monkeypatch) -> None:
    from ggemm import ops
    from ggemm.torch_ops import segment_matmul_via_library
    x = torch.zeros(10, 64, dtype=torch.bfloat16, requires_grad=True)
    w = torch.zeros(2, 32, 64, dtype=torch.bfloat16)
    seg = torch.tensor([0, 5, 10], dtype=torch.int32)
    index = torch.arange(10, dtype=torch.int32)
    out = torch.zeros(10, 32)
    # The argument checks want CUDA tensors; only the autograd rule is under
    # test here.
    monkeypatch.setattr(ops, "plan_segment_matmul", lambda *a, **k: ops._Plan(
        None, {}, (10, 32), "f32", False))
    with pytest.raises(ggemm.NotLoweredError, match="scatter_indices: a "
                       "scattered segment_matmul writes into out= and is "
                       "not differentiable"):
        segment_matmul_via_library(x, w, seg, None, "nk", None, None, None,
                                   False, out, None, None, None, index,
                                   False)
