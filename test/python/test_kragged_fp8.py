"""FP8 K-ragged weight gradients in the Python layer on a CPU:
``ggemm.segment_matmul_k`` with e4m3 dy and x given transposed (``[N, T]``,
``[K, T]``) and their 1x128 token-block scales, bf16 operands given
transposed, and DeepGEMM's ``k_grouped_fp8_gemm_nt_contiguous`` on it. The
problem's IR and catalog line, every argument error, the scale-layout copy,
the launch, and the compat layer's translation of DeepGEMM's arguments
(its per-group K-major blocks put side by side, checked byte for byte on
NumPy arrays). Stand-in tensors, no torch, no GPU."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List

import numpy as np
import pytest

import ggemm
from ggemm import cache, catalog, ops
from ggemm.compat import deep_gemm
from ggemm.problem import Problem, SpecError, TileConfig

from test_fp8_ops import copies, mn_major  # noqa: F401  (fixture)
from test_ops import FakeTensor, kragged_eager, needs_compiler  # noqa: F401

F8 = "float8_e4m3fn"
N, K, G, T = 384, 256, 6, 1000
TB = -(-T // 128)


def padded(features: int, tokens: int, dtype: str = F8) -> FakeTensor:
    """``storage[:, :tokens]`` of rows padded to 16 bytes."""
    step = 16 if dtype == F8 else 8
    stride = -(-tokens // step) * step
    return FakeTensor((features, tokens), dtype, strides=(stride, 1))


def fp8_args(**overrides: Any) -> dict:
    args = dict(x=padded(K, T), dy=padded(N, T),
                seg_indptr=FakeTensor((G + 1,), "int32"), transposed=True,
                x_scale=mn_major(K, TB), dy_scale=mn_major(N, TB))
    args.update(overrides)
    return args


def plan_fp8(**overrides: Any) -> ops._KPlan:
    args = fp8_args(**overrides)
    x, dy, seg = args.pop("x"), args.pop("dy"), args.pop("seg_indptr")
    return ops.plan_segment_matmul_k(x, dy, seg, **args)


# -- the problem and its IR --------------------------------------------------

def test_fp8_kragged_mlir_text() -> None:
    p = Problem("segment_matmul_k", "f8e4m3", n=N, k=K, groups=G,
                transposed=True, out_dtype="f32")
    text = p.mlir()
    dy_type, x_type = "memref<384x?xf8E4M3FN>", "memref<256x?xf8E4M3FN>"
    dys = "memref<384x?xf32, strided<[1, ?]>>"
    xs = "memref<256x?xf32, strided<[1, ?]>>"
    assert f"ggemm.segment_matmul_k ins(%dy, %x : {dy_type}, {x_type})" \
        in text
    assert "segments(%seg_indptr : memref<7xi32>)" in text
    assert f"scales(%dy_scale, %x_scale : {dys}, {xs})" in text
    assert "outs(%dw : memref<6x384x256xf32>) {transposed}" in text
    assert (f"(%dy: {dy_type}, %x: {x_type}, %seg_indptr: memref<7xi32>, "
            f"%dy_scale: {dys}, %x_scale: {xs}, "
            f"%dw: memref<6x384x256xf32>)") in text
    kn = Problem("segment_matmul_k", "f8e4m3", n=N, k=K, groups=3,
                 transposed=True, weight_layout="kn", accumulate=True,
                 index_dtype="i64",
                 config=TileConfig(block_k=128)).mlir()
    assert "outs(%dw : memref<3x256x384xbf16>) {transposed, weight_layout " \
        "= #ggemm.weight_layout<kn>, accumulate, config = " in kn
    assert "segments(%seg_indptr : memref<4xi64>)" in kn
    # bf16 operands given transposed: no scales.
    bf16 = Problem("segment_matmul_k", "bf16", n=N, k=K, groups=G,
                   transposed=True).mlir()
    assert "ins(%dy, %x : memref<384x?xbf16>, memref<256x?xbf16>)" in bf16
    assert "scales(" not in bf16 and "{transposed}" in bf16


def test_fp8_kragged_spec_line_and_key() -> None:
    p = Problem("segment_matmul_k", "f8e4m3", n=N, k=K, groups=G,
                transposed=True)
    # FP8 gradients default to bf16, as the FP8 forward ops' outputs.
    assert p.out_dtype == "bf16" and not p.x_scale_block
    assert p.spec() == {"op": "segment_matmul_k", "dtype": "f8e4m3",
                        "n": N, "k": K, "groups": G, "transposed": True}
    assert Problem.from_spec(json.loads(p.key)) == p
    assert p.kernel_name.startswith("ggemm_segment_matmul_k_f8e4m3_")
    bf16 = Problem("segment_matmul_k", "bf16", n=N, k=K, groups=G)
    transposed = Problem("segment_matmul_k", "bf16", n=N, k=K, groups=G,
                         transposed=True)
    assert transposed.spec()["transposed"] is True
    assert "transposed" not in bf16.spec()
    assert len({bf16.key, transposed.key}) == 2
    # The catalog expands FP8 lines like any other.
    expanded = catalog.expand_spec({"kernels": [
        {"op": "segment_matmul_k", "dtype": "f8e4m3", "n": N, "k": K,
         "groups": G, "transposed": True, "out_dtype": ["f32", "bf16"],
         "accumulate": [False, True]}]})
    assert [(q.out_dtype, q.accumulate) for q in expanded] == [
        ("f32", False), ("f32", True), ("bf16", False), ("bf16", True)]


@pytest.mark.parametrize("fields, message", [
    ({"dtype": "f8e4m3"}, "transposed: f8e4m3 operands of segment_matmul_k "
     "must be given transposed"),
    ({"dtype": "f8e5m2", "transposed": True},
     "dtype: f8e5m2 is not lowered yet"),
    ({"dtype": "s8", "transposed": True}, "INT8 K-ragged is not lowered"),
    ({"dtype": "f8e4m3", "transposed": True, "config": {"block_k": 64}},
     "config.block_k must be 128 with FP8"),
    ({"dtype": "f8e4m3", "transposed": True, "x_scale_block": "1x128"},
     "x_scale_block: segment_matmul_k has none"),
    ({"dtype": "f8e4m3", "transposed": True, "out_dtype": "f8e4m3"},
     "out_dtype: segment_matmul_k writes dw as"),
    ({"dtype": "f8e4m3", "transposed": True, "n": 100},
     r"n \(100\) must be a multiple of 8"),
    ({"transposed": 1}, "transposed must be a bool"),
    ({"op": "segment_matmul", "transposed": True},
     "transposed: only segment_matmul_k takes transposed operands"),
])
def test_fp8_kragged_problem_rejects(fields: dict, message: str) -> None:
    line = {"op": "segment_matmul_k", "dtype": "bf16", "n": N, "k": K,
            "groups": G}
    line.update(fields)
    with pytest.raises(SpecError, match=message):
        Problem.from_spec(line)


FP8_PROBLEMS = [
    Problem("segment_matmul_k", "f8e4m3", n=N, k=K, groups=G,
            transposed=True, out_dtype="f32"),
    Problem("segment_matmul_k", "f8e4m3", n=K, k=N, groups=3,
            transposed=True, weight_layout="kn", accumulate=True,
            index_dtype="i64"),
    Problem("segment_matmul_k", "bf16", n=N, k=K, groups=G, transposed=True,
            out_dtype="f32"),
]


@needs_compiler
@pytest.mark.parametrize("problem", FP8_PROBLEMS,
                         ids=[p.function_name for p in FP8_PROBLEMS])
def test_fp8_kragged_ir_verifies_and_tiles(problem: Problem) -> None:
    tiled = ggemm.run_pipeline(problem.mlir(),
                               "ggemm-select-config,ggemm-tile")
    assert "ggemm.foreach_tile" in tiled


@needs_compiler
def test_fp8_kragged_compiles_to_a_bundle(tmp_path: Path,
                                          monkeypatch) -> None:
    monkeypatch.delenv("GGEMM_CATALOG", raising=False)
    monkeypatch.setattr(cache, "_options",
                        cache.CompileOptions(cache_dir=tmp_path / "cache"))
    problem = FP8_PROBLEMS[0]
    path = cache.manifest_for(problem)
    assert path.name == problem.kernel_name + ".json"
    manifest = json.loads(path.read_text())
    p = manifest["problem"]
    assert (p["op"], p["a_dtype"], p["b_dtype"], p["out_dtype"]) == (
        "segment_matmul_k", "f8e4m3", "f8e4m3", "f32")
    assert p["transposed"] is True
    assert (p["x_scale_block"], p["w_scale_block"]) == ("1x128", "1x128")
    assert (p["n"], p["k"], p["num_groups"]) == (N, K, G)
    tensors = {param.get("tensor") for variant in
               manifest.get("variants", [manifest])
               for param in variant.get("params", manifest.get("params", []))}
    assert {"dy", "x", "seg_indptr", "dw", "dy_scale", "x_scale"} <= tensors


# -- argument checks ------------------------------------------------------

def test_fp8_plan_builds_the_problem() -> None:
    plan = plan_fp8(out_dtype="f32")
    problem = plan.plan.problem
    assert problem.spec() == {"op": "segment_matmul_k", "dtype": "f8e4m3",
                              "n": N, "k": K, "groups": G,
                              "transposed": True, "out_dtype": "f32"}
    args = fp8_args()
    assert set(plan.plan.tensors) == {"dy", "x", "seg_indptr", "dy_scale",
                                      "x_scale"}
    # MN-major scales go to the kernel as they are.
    assert plan.plan.tensors["x_scale"].shape == args["x_scale"].shape
    assert plan.plan.tensors["dy_scale"].stride() == (1, N)
    assert (plan.out_shape, plan.out_dtype, plan.transposed) == (
        (G, N, K), "f32", True)
    # dW defaults to bf16; kn and accumulate through out=.
    assert plan_fp8().out_dtype == "bf16"
    acc = plan_fp8(out=FakeTensor((G, K, N), "float32"), accumulate=True,
                   weight_layout="kn", seg_indptr=FakeTensor((G + 1,),
                                                             "int64"))
    problem = acc.plan.problem
    assert problem.accumulate and problem.weight_layout == "kn"
    assert problem.index_dtype == "i64" and acc.out_shape == (G, K, N)
    # Weight indices: one f32 matrix per segment, scattered afterwards.
    indexed = plan_fp8(weight_indices=FakeTensor((G,), "int32"),
                       num_weights=3)
    assert indexed.plan.problem.out_dtype == "f32"
    assert indexed.out_shape == (3, N, K) and indexed.out_dtype == "bf16"


def test_fp8_contiguous_rows_of_16_tokens_need_no_padding() -> None:
    plan = plan_fp8(x=FakeTensor((K, 1024), F8), dy=FakeTensor((N, 1024), F8),
                    x_scale=mn_major(K, 8), dy_scale=mn_major(N, 8))
    assert plan.plan.problem.transposed


@pytest.mark.parametrize("overrides, message", [
    ({"transposed": False, "x": FakeTensor((T, K), F8),
      "dy": FakeTensor((T, N), F8)},
     r"transposed: FP8 \(torch.float8_e4m3fn\) x and dy must be given "
     r"transposed, x \[K, T\] and dy \[N, T\]"),
    ({"transposed": "yes"}, "transposed: expected a bool, got 'yes'"),
    ({"dy_scale": None}, r"dy_scale: FP8 operands need dy_scale \(f32 "
     r"\[N, ceil\(T/128\)\]"),
    ({"x_scale": None}, r"x_scale: FP8 operands need x_scale \(f32 "
     r"\[K, ceil\(T/128\)\]"),
    ({"x_scale": mn_major(K, TB + 1)},
     r"x_scale: expected shape \[K, ceil\(T/128\)\] = \[256, 8\] \(one f32 "
     r"per row of x and 128-token block\), got \[256, 9\]"),
    ({"dy_scale": mn_major(K, TB)},
     r"dy_scale: expected shape \[N, ceil\(T/128\)\] = \[384, 8\]"),
    ({"dy_scale": FakeTensor((N, TB), "bfloat16")},
     r"dy_scale: expected dtype f32 \(torch.float32\)"),
    ({"x_scale": FakeTensor((K, TB), "float32", device="cpu")},
     "x_scale: expected a CUDA tensor"),
    ({"dy": FakeTensor((N, T), F8)},
     r"dy: row stride 1000 \(1000 bytes\) must be a multiple of 16 bytes: "
     r"TMA reads dy's rows of T = 1000 tokens in 16-byte steps. Pad each "
     r"row to a multiple of 16 tokens in memory and pass a view of the "
     r"first T: storage = torch.empty\(384, 1008, "
     r"dtype=torch.float8_e4m3fn\); dy = storage\[:, :1000\]"),
    ({"x": FakeTensor((K, T), F8, strides=(1004, 1))},
     r"x: row stride 1004 \(1004 bytes\) must be a multiple of 16 bytes"),
    ({"dy": padded(100, T), "dy_scale": mn_major(100, TB)},
     "dy: N = 100 must be a multiple of 8 for the K-ragged kernel$"),
    ({"x": FakeTensor((K, T), F8, strides=(1, K))},
     "x: the last dimension must be contiguous"),
    ({"dy": padded(N, 999)},
     r"dy: dimension 1 \(T, as x.shape\[1\]\) is 999, expected 1000"),
    ({"dy": padded(N, T, "bfloat16")},
     "dy: dtype torch.bfloat16 differs from x's torch.float8_e4m3fn"),
    ({"out_dtype": "f8e4m3"},
     "out_dtype: expected torch.bfloat16, torch.float16 or torch.float32"),
])
def test_fp8_argument_errors(overrides: dict, message: str) -> None:
    with pytest.raises(ops.ArgumentError, match=message) as error:
        plan_fp8(**overrides)
    # FP8 has no torch fallback: the errors do not offer one, and the
    # fallback's checks (kernel=False) still see them.
    assert "fallback" not in str(error.value)
    assert not isinstance(error.value, ops._KernelCannot)


@pytest.mark.parametrize("name", ["x", "dy"])
def test_fp8_e5m2_is_not_lowered(name: str) -> None:
    features = K if name == "x" else N
    with pytest.raises(ggemm.NotLoweredError, match=f"{name}: float8_e5m2 "
                       "operands are not lowered for the GPU"):
        plan_fp8(**{name: padded(features, T, "float8_e5m2")})


def test_fp8_errors_ignore_fallback() -> None:
    args = fp8_args(dy=FakeTensor((N, T), F8))
    x, dy, seg = args.pop("x"), args.pop("dy"), args.pop("seg_indptr")
    with pytest.raises(ops.ArgumentError, match="row stride 1000"):
        ops.plan_segment_matmul_k(x, dy, seg, kernel=False, **args)


def test_scales_refused_without_fp8() -> None:
    x, dy = padded(K, T, "bfloat16"), padded(N, T, "bfloat16")
    seg = FakeTensor((G + 1,), "int32")
    for name in ("x_scale", "dy_scale"):
        with pytest.raises(ops.ArgumentError, match=f"{name}: scales apply "
                           r"to FP8 \(float8_e4m3fn\) operands only; x is "
                           "torch.bfloat16"):
            ops.plan_segment_matmul_k(x, dy, seg, transposed=True,
                                      **{name: mn_major(K, TB)})


def test_bf16_transposed_plan() -> None:
    """bf16 operands given transposed run on their kernel (no scales)."""
    seg = FakeTensor((G + 1,), "int32")
    plan = ops.plan_segment_matmul_k(padded(K, T, "bfloat16"),
                                     padded(N, T, "bfloat16"), seg,
                                     transposed=True, out_dtype="f32")
    assert plan.plan.problem.spec() == {
        "op": "segment_matmul_k", "dtype": "bf16", "n": N, "k": K,
        "groups": G, "transposed": True, "out_dtype": "f32"}
    assert set(plan.plan.tensors) == {"dy", "x", "seg_indptr"}
    # bf16 rows of 8 tokens are 16 bytes: T = 1000 contiguous is fine.
    ops.plan_segment_matmul_k(FakeTensor((K, T)), FakeTensor((N, T)), seg,
                              transposed=True)
    # T = 999: the kernel cannot read the rows; the torch fallback can.
    x, dy = FakeTensor((K, 999)), FakeTensor((N, 999))
    with pytest.raises(ops.ArgumentError, match=r"dy: row stride 999 \(1998 "
                       r"bytes\) must be a multiple of 16 bytes.*"
                       r"storage = torch.empty\(384, 1000, "
                       r"dtype=torch.bfloat16\).*or pass fallback='torch'"):
        ops.plan_segment_matmul_k(x, dy, seg, transposed=True)
    assert ops.plan_segment_matmul_k(x, dy, seg, transposed=True,
                                     kernel=False).plan.key is None


class Viewable(FakeTensor):
    """A stand-in with ``t()`` and the dtype conversions of the fallback."""

    def t(self) -> "Viewable":
        view = self.transpose(0, 1)
        return Viewable(view.shape, view.dtype.name, view.stride(),
                        view.device)

    def to(self, dtype: Any) -> "Viewable":
        return Viewable(self.shape, dtype.name, None, self.device)

    def contiguous(self) -> "Viewable":
        return self


def test_bf16_transposed_fallback_reads_the_token_rows(
        kragged_eager, monkeypatch) -> None:  # noqa: F811
    seen: List[Any] = []

    def torch_product(x, dy, seg_indptr, weight_indices, num_weights):
        seen.append((x, dy, num_weights))
        return Viewable((num_weights, dy.shape[1], x.shape[1]), "float32")
    monkeypatch.setattr(ops, "segment_matmul_k_torch", torch_product)
    # Rows 2002 bytes apart: not the kernel's (TMA's 16 bytes), the
    # fallback's.
    x = Viewable((K, T), "bfloat16", strides=(1001, 1))
    dy = Viewable((N, T), "bfloat16", strides=(1001, 1))
    dw = ggemm.segment_matmul_k(x, dy, FakeTensor((G + 1,), "int32"),
                                transposed=True, fallback="torch",
                                out_dtype="f32")
    ((tx, tdy, count),) = seen
    # The [T, K] and [T, N] views of the transposed operands.
    assert tx.shape == (T, K) and tx.stride() == (1, 1001)
    assert tdy.shape == (T, N) and count == G
    assert dw.shape == (G, N, K) and kragged_eager.kernel.launches == []


def test_fp8_row_major_scales_are_copied_mn_major(
        copies) -> None:  # noqa: F811
    rows_first = FakeTensor((N, TB), "float32")       # contiguous [N, TB]
    plan = plan_fp8(dy_scale=rows_first)
    assert copies == [rows_first]
    assert plan.plan.tensors["dy_scale"] == ("mn-major copy of", rows_first)
    # A block stride that is not a multiple of 4 elements is copied too;
    # MN-major ones are not.
    odd = FakeTensor((K, TB), "float32", strides=(1, K + 2))
    plan_fp8(x_scale=odd)
    assert copies == [rows_first, odd]
    plan_fp8()
    assert len(copies) == 2
    # Checks only (torch.compile's trace, build=False): no copy.
    plan_fp8(dy_scale=rows_first, build=False)
    assert len(copies) == 2


def test_fp8_no_tokens_launches_nothing() -> None:
    plan = plan_fp8(x=FakeTensor((K, 0), F8), dy=FakeTensor((N, 0), F8),
                    x_scale=FakeTensor((K, 0), "float32"),
                    dy_scale=FakeTensor((N, 0), "float32"))
    assert plan.plan.empty and plan.no_rows and plan.plan.key is None


def test_fp8_launches_with_the_scales(kragged_eager) -> None:  # noqa: F811
    args = fp8_args()
    x, dy, seg = args.pop("x"), args.pop("dy"), args.pop("seg_indptr")
    dw = ggemm.segment_matmul_k(x, dy, seg, out_dtype="f32", **args)
    (launch,) = kragged_eager.kernel.launches
    assert set(launch) == {"dy", "x", "seg_indptr", "dw", "dy_scale",
                           "x_scale"}
    assert launch["dy"] is dy and launch["x"] is x and launch["dw"] is dw
    assert launch["dy_scale"] is args["dy_scale"]
    assert launch["x_scale"] is args["x_scale"]
    assert dw.shape == (G, N, K) and str(dw.dtype) == "torch.float32"
    problem = kragged_eager.problems[0]
    assert (problem.dtype, problem.transposed, problem.n, problem.k) == (
        "f8e4m3", True, N, K)


# -- compat: DeepGEMM's k_grouped_fp8_gemm_nt_contiguous -------------------

M_, N_ = 128, 256            # DeepGEMM's m (d's rows) and n


class Storage(FakeTensor):
    """A stand-in tensor with an address and ``copy_``."""

    def __init__(self, *args: Any, address: int = 4096, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.address = address
        self.copied_from: List[Any] = []

    def data_ptr(self) -> int:
        return self.address

    def copy_(self, other: Any) -> "Storage":
        self.copied_from.append(other)
        return self


def dg_operands(ks: List[int]):
    total = sum(ks)
    blocks = -(-total // 128)
    a = (FakeTensor((total * M_,), F8), mn_major(M_, blocks))
    b = (FakeTensor((total * N_,), F8), mn_major(N_, blocks))
    return a, b


@pytest.fixture
def translated(monkeypatch):
    """Records what k_grouped_fp8_gemm_nt_contiguous hands on: the offsets,
    the operands put side by side and the segment_matmul_k call."""
    calls: dict = {"matmul": [], "inner": []}

    def indptr(ks, ks_tensor, device):
        calls["indptr"] = (list(ks), ks_tensor, device)
        return "seg_indptr"

    def inner(data, rows, ks):
        calls["inner"].append((data, rows, list(ks)))
        return ("tokens innermost", data)

    def matmul(x, dy, seg_indptr, **kwargs):
        calls["matmul"].append(dict(x=x, dy=dy, seg_indptr=seg_indptr,
                                    **kwargs))

    def plan(x, dy, seg_indptr, **kwargs):
        # The checks run before d is written: nothing copied into it yet
        # by this call.
        d = kwargs["out"]
        calls.setdefault("plan", []).append(
            dict(kwargs, copies_before=len(d.copied_from)))
    monkeypatch.setattr(deep_gemm, "k_grouped_indptr", indptr)
    monkeypatch.setattr(deep_gemm, "k_grouped_tokens_innermost", inner)
    monkeypatch.setattr(ops, "segment_matmul_k", matmul)
    monkeypatch.setattr(ops, "plan_segment_matmul_k", plan)
    return calls


def test_dg_k_grouped_fp8_translation(translated) -> None:
    ks = [128, 0, 256, 384]
    a, b = dg_operands(ks)
    d = Storage((4, M_, N_), "float32")
    ks_tensor = FakeTensor((4,), "int32")
    deep_gemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, ks_tensor, c=d)
    assert translated["indptr"] == (ks, ks_tensor, d.device)
    assert translated["inner"] == [(a[0], M_, ks), (b[0], N_, ks)]
    (call,) = translated["matmul"]
    # d[g] = a_g b_gᵀ: dy is a's [M, T] (dw's rows), x is b's [N, T].
    assert call["dy"] == ("tokens innermost", a[0])
    assert call["x"] == ("tokens innermost", b[0])
    assert call["dy_scale"] is a[1] and call["x_scale"] is b[1]
    assert call["seg_indptr"] == "seg_indptr" and call["transposed"]
    assert call["out"] is d and call["accumulate"] is True
    assert d.copied_from == []  # c is d: in place


def test_dg_k_grouped_fp8_c_other_or_none(translated) -> None:
    ks = [100, 28]               # not 128-aligned: GGEMM takes it
    a, b = dg_operands(ks)
    d = Storage((2, M_, N_), "float32")
    c = Storage((2, M_, N_), "float32", address=8192)
    deep_gemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, c=c)
    assert d.copied_from == [c] and translated["matmul"][0]["accumulate"]
    # Every launch check ran (build=False) before c was copied into d.
    (checked,) = translated["plan"]
    assert checked["copies_before"] == 0 and checked["build"] is False
    assert translated["indptr"] == (ks, None, d.device)
    deep_gemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, None)
    assert translated["matmul"][1]["accumulate"] is False
    assert d.copied_from == [c]


def test_dg_k_grouped_fp8_end_to_end_on_the_op(kragged_eager,  # noqa: F811
                                               monkeypatch) -> None:
    """The real segment_matmul_k behind the compat call: the kernel it
    launches and its tensors."""
    ks = [256, 128, 0]
    total = sum(ks)
    a, b = dg_operands(ks)
    views = {id(a[0]): FakeTensor((M_, total), F8),
             id(b[0]): FakeTensor((N_, total), F8)}
    monkeypatch.setattr(deep_gemm, "k_grouped_tokens_innermost",
                        lambda data, rows, sizes: views[id(data)])
    seg = FakeTensor((4,), "int64")
    monkeypatch.setattr(deep_gemm, "k_grouped_indptr",
                        lambda sizes, ks_tensor, device: seg)
    d = Storage((3, M_, N_), "float32")
    deep_gemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks,
                                               FakeTensor((3,), "int32"), d)
    (launch,) = kragged_eager.kernel.launches
    assert launch["dy"] is views[id(a[0])] and launch["x"] is views[id(b[0])]
    assert launch["dy_scale"] is a[1] and launch["x_scale"] is b[1]
    assert launch["dw"] is d and launch["seg_indptr"] is seg
    assert kragged_eager.problems[0].spec() == {
        "op": "segment_matmul_k", "dtype": "f8e4m3", "n": M_, "k": N_,
        "groups": 3, "transposed": True, "out_dtype": "f32",
        "index_dtype": "i64", "accumulate": True}


def dg_call(**overrides: Any) -> None:
    ks = [128, 256]
    a, b = dg_operands(ks)
    args = dict(a=a, b=b, d=Storage((len(ks), M_, N_), "float32"), ks=ks,
                ks_tensor=FakeTensor((len(ks),), "int32"))
    args.update(overrides)
    deep_gemm.k_grouped_fp8_gemm_nt_contiguous(**args)


@pytest.mark.parametrize("overrides, message", [
    ({"recipe": (1, 128, 128)}, r"recipe: expected \(1, 1, 128\) \(1x128 "
     r"scales along K on both operands"),
    ({"recipe": None}, r"recipe: expected \(1, 1, 128\)"),
    ({"use_psum_layout": True}, "use_psum_layout: not supported"),
    ({"compiled_dims": 3}, "compiled_dims: expected a string"),
    ({"ks": None}, "ks: expected the host list of the 2 group sizes"),
    ({"ks": FakeTensor((2,), "int32")}, "ks: expected the host list"),
    ({"ks": [128, 128, 128]}, "ks: 3 sizes for 2 groups of d"),
    ({"ks": [512, -128]}, "ks: sizes must be non-negative"),
    ({"d": Storage((2, M_ * N_), "float32")}, r"d: expected \[G, M, N\]"),
    ({"a": (FakeTensor((384 * M_,), "bfloat16"), mn_major(M_, 3))},
     "a: expected torch.float8_e4m3fn data, got torch.bfloat16"),
    ({"a": FakeTensor((384 * M_,), F8)}, r"a: expected a \(tensor, scales\) "
     "pair"),
    ({"b": (FakeTensor((384 * N_ + 16,), F8), mn_major(N_, 3))},
     r"b: 98320 elements, expected sum\(ks\) \* N = 384 \* 256 = 98304"),
    ({"a": (FakeTensor((384, M_), F8, strides=(1, 384)), mn_major(M_, 3))},
     "a: the data must be contiguous"),
    ({"a": (FakeTensor((384 * M_,), F8), mn_major(M_, 4))},
     r"a: scales of shape \[M, ceil\(sum\(ks\)/128\)\] = \[128, 3\] "
     r"expected .*, got \[128, 4\]$"),
    ({"b": (FakeTensor((384 * N_,), F8), FakeTensor((3, N_), "float32"))},
     r"b: scales .* got \[3, 256\]; pass the transpose, b\[1\].T"),
    ({"c": Storage((2, N_, M_), "float32")},
     r"c: expected shape \[2, 128, 256\] like d"),
])
def test_dg_k_grouped_fp8_argument_errors(translated, overrides: dict,
                                          message: str) -> None:
    with pytest.raises(ops.ArgumentError, match=message):
        dg_call(**overrides)
    assert translated["matmul"] == []


def test_dg_k_grouped_fp8_e5m2_and_tn_are_not_lowered() -> None:
    e5m2 = (FakeTensor((384 * M_,), "float8_e5m2"), mn_major(M_, 3))
    with pytest.raises(ggemm.NotLoweredError, match="a: float8_e5m2 "
                       "operands are not lowered for the GPU"):
        dg_call(a=e5m2)
    a = FakeTensor((16, 128))
    with pytest.raises(ggemm.NotLoweredError,
                       match="k_grouped_fp8_gemm_tn_contiguous: needs FP8 "
                       "K-ragged with MN-major operands.*"
                       "k_grouped_fp8_gemm_nt_contiguous takes that layout"):
        deep_gemm.k_grouped_fp8_gemm_tn_contiguous(a, a, a, [], a)


# -- the offsets and the side-by-side copy, on NumPy arrays -----------------

class Array(np.ndarray):
    """A NumPy array with a device, for the stand-in torch below."""

    device = "cuda:0"


class NumpyTorch:
    """The few torch functions the compat helpers call, on NumPy."""

    uint8, int64, dtype = np.uint8, np.int64, np.dtype

    @staticmethod
    def zeros(shape: Any, dtype: Any = None, device: Any = None) -> Any:
        return np.zeros(shape, dtype=dtype).view(Array)

    @staticmethod
    def cat(pieces: List[Any], dim: int = 0) -> Any:
        return np.concatenate(pieces, axis=dim).view(Array)

    @staticmethod
    def tensor(values: List[int], dtype: Any = None, device: Any = None):
        return np.array(values, dtype=dtype)

    @staticmethod
    def cumsum(values: Any, dim: int, dtype: Any = None) -> Any:
        return np.cumsum(values.values, axis=dim, dtype=dtype)


def deepgemm_blocks(rows: int, ks: List[int], seed: int = 0):
    """A [rows, T] int8 matrix and DeepGEMM's K-major K-grouped layout of
    it: each group's [rows, ks[g]] block row-major, back to back."""
    rng = np.random.default_rng(seed)
    matrix = rng.integers(-128, 128, (rows, sum(ks)), dtype=np.int8)
    flat, start = [], 0
    for size in ks:
        flat.append(matrix[:, start:start + size].reshape(-1))
        start += size
    data = np.concatenate(flat) if flat else np.zeros(0, np.int8)
    return matrix, data.view(Array)


@pytest.mark.parametrize("ks", [[128, 256, 0, 384], [100, 28, 0, 3, 61],
                                [0, 0, 7], [0, 512, 0], [0, 0]])
def test_tokens_innermost_puts_the_blocks_side_by_side(monkeypatch,
                                                       ks) -> None:
    monkeypatch.setattr(ops, "torch", NumpyTorch)
    rows = 24
    matrix, data = deepgemm_blocks(rows, ks)
    got = deep_gemm.k_grouped_tokens_innermost(data, rows, ks)
    total = sum(ks)
    assert got.shape == (rows, total) and got.dtype == np.int8
    assert np.array_equal(got, matrix)
    # Rows 16 bytes apart (TMA's step), whatever T.
    if total:
        assert got.strides[0] % 16 == 0 and got.strides[1] == 1
    single = sum(1 for size in ks if size) <= 1 and total % 16 == 0
    assert np.shares_memory(got, data) == (single and total > 0)


def test_indptr_from_the_host_list_or_the_device_sizes(monkeypatch) -> None:
    monkeypatch.setattr(ops, "torch", NumpyTorch)
    ks = [128, 0, 37, 256]
    host = deep_gemm.k_grouped_indptr(ks, None, "cuda:0")
    assert host.tolist() == [0, 128, 128, 165, 421]
    assert host.dtype == np.int64

    class Sizes(FakeTensor):
        values = np.array(ks, dtype=np.int32)
    device = deep_gemm.k_grouped_indptr(ks, Sizes((4,), "int32"), "cuda:0")
    assert device.tolist() == [0, 128, 128, 165, 421]
    assert device.dtype == np.int64
    with pytest.raises(ops.ArgumentError, match=r"ks_tensor: expected \[4\]"):
        deep_gemm.k_grouped_indptr(ks, Sizes((5,), "int32"), "cuda:0")
    with pytest.raises(ops.ArgumentError, match="ks_tensor: expected int32 "
                       "or int64, got torch.float32"):
        deep_gemm.k_grouped_indptr(ks, Sizes((4,), "float32"), "cuda:0")
    with pytest.raises(ops.ArgumentError, match="ks_tensor: on cuda:1, but "
                       "d is on cuda:0"):
        deep_gemm.k_grouped_indptr(ks, Sizes((4,), "int32", device="cuda:1"),
                                   "cuda:0")
