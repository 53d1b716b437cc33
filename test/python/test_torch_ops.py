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
                 "segment_matmul_k_out", "segment_matmul_k_torch"):
        assert hasattr(torch.ops.ggemm, name), name


def test_fake_shapes() -> None:
    with FakeTensorMode():
        x = torch.empty(100, 64, dtype=torch.bfloat16)
        w = torch.empty(4, 32, 64, dtype=torch.bfloat16)
        seg = torch.empty(5, dtype=torch.int32)
        y = torch.ops.ggemm.segment_matmul(x, w, seg, None, None, None, "nk",
                                           "none", "f32", "")
        assert tuple(y.shape) == (100, 32) and y.dtype == torch.float32
        wkn = torch.empty(4, 64, 48, dtype=torch.bfloat16)
        y = torch.ops.ggemm.segment_matmul(x, wkn, seg, None, None, None,
                                           "kn", "silu", "bf16", "")
        assert tuple(y.shape) == (100, 48)
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
    assert torch.ops.ggemm.segment_matmul_out.default._schema.arguments[
        6].alias_info.is_write


def test_cpu_tensors_are_rejected_by_name() -> None:
    x = torch.zeros(10, 64, dtype=torch.bfloat16)
    w = torch.zeros(2, 32, 64, dtype=torch.bfloat16)
    seg = torch.tensor([0, 5, 10], dtype=torch.int32)
    with pytest.raises(ggemm.ArgumentError, match="x: expected a CUDA "
                       "tensor, got device cpu"):
        ggemm.segment_matmul(x, w, seg)


def test_kragged_out_op_mutates_out() -> None:
    schema = torch.ops.ggemm.segment_matmul_k_out.default._schema
    out = [a for a in schema.arguments if a.name == "out"][0]
    assert out.alias_info.is_write


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
