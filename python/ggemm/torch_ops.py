"""The ops as ``torch.library`` custom ops, with fake implementations and
autograd.

Registered when torch is importable (``import ggemm`` does it):

- ``torch.ops.ggemm.segment_matmul`` / ``masked_matmul`` /
  ``batched_matmul``: functional (return a new tensor);
- ``torch.ops.ggemm.segment_matmul_out`` / ``masked_matmul_out`` /
  ``batched_matmul_out``: write into ``out`` (declared mutated), for
  ``out=`` and ``accumulate=True``;
- ``torch.ops.ggemm.segment_matmul_k`` (functional) and
  ``segment_matmul_k_out`` (writes into ``out``, for ``out=`` and
  ``accumulate=True``): the K-ragged product of weight gradients on its
  kernel;
- ``torch.ops.ggemm.segment_matmul_k_transposed`` and
  ``segment_matmul_k_transposed_out``: the same with dy ``[N, T]`` and x
  ``[K, T]`` (``transposed=True``), bf16/f16 or FP8 with its 1x128 token
  scales (``dy_scale``, ``x_scale``);
- ``torch.ops.ggemm.segment_matmul_k_torch``: its torch fallback (one
  device synchronisation).

Fake implementations give the output's shape and dtype, so
``torch.compile(fullgraph=True)`` traces through ``ggemm.segment_matmul``
without a graph break. ``ggemm.segment_matmul`` and friends use these ops
only while compiling or when autograd records (an eager call without grad
launches directly, which is cheaper).

Autograd (``segment_matmul`` only): with ``y = act(z) * row_scale`` and
``z = x Wᵀ + bias`` per segment, the backward recomputes ``z`` with one
``segment_matmul`` (f32 output, no activation: 2N wide with swiglu, whose
``d gate`` and ``d up`` are computed in torch from it) when there is an
activation or a row scale, then

- ``dx = segment_matmul(dz, W)`` with the other weight layout (the same
  weights, read transposed: no copy);
- ``dW = segment_matmul_k(x, dz)`` on the K-ragged kernel (``dz`` in x's
  dtype, the sum in float32 rounded once to W's dtype, written in W's
  layout; with weight indices one f32 matrix per segment added onto the
  weights with ``index_add_``). No device synchronisation. Only where the
  kernel cannot take the tensors (N not a multiple of 8) does it fall back
  to ``segment_matmul_k_torch``, which synchronises once;
- ``dbias`` the per-weight sum of ``dz`` rows (torch on the device: each
  row's segment by ``searchsorted``, then ``index_add_``; no
  synchronisation), ``drow_scale`` the row sums of ``dy * act(z)``.

With ``row_indices`` (gather-A) ``dx`` is the gathered rows' gradient
added onto their x rows with ``index_add_`` (float32, rows gathered twice
sum; indices outside ``[0, T)`` add nothing), and ``dW`` reads a gathered
copy of x (``[M, K]``, zero rows for invalid indices). With interleaved
gate/up blocks (``gate_up_block``) the recomputed ``z`` (bias added in
w's row order) is put back in the logical order for the SwiGLU gradient,
and ``dz`` in w's row order again for ``dx`` and ``dW``: ``w.grad`` comes
back interleaved like ``w``, ``bias.grad`` in the bias's logical order.
Calls with
``scatter_indices`` (which write into ``out=``) are not differentiable and
raise :class:`NotLoweredError` naming it.

Example::

    x.requires_grad_(); w.requires_grad_()
    y = ggemm.segment_matmul(x, w, seg_indptr, activation="silu")
    y.float().pow(2).sum().backward()      # x.grad, w.grad
"""

from __future__ import annotations

import math
import sys
from typing import Optional

import torch

from . import ops
from .layout import deinterleave_gate_up, interleave_gate_up
from .ops import ArgumentError, NotLoweredError

Tensor = torch.Tensor

_LIB = "ggemm"


def _layout_n(w: Tensor, weight_layout: str) -> int:
    """w's N extent (2N with swiglu: gate and up)."""
    return w.shape[1] if weight_layout == "nk" else w.shape[2]


def _out_n(w: Tensor, weight_layout: str, activation: str) -> int:
    """y's columns: w's N extent, halved by swiglu."""
    n = _layout_n(w, weight_layout)
    return n // 2 if activation == "swiglu" else n


# -- functional ops -------------------------------------------------------

# row_indices (gather-A) and gate_up_block are the last arguments, after
# the original ones, so that the positions autograd's needs_input_grad
# refers to stay put.
@torch.library.custom_op(f"{_LIB}::segment_matmul", mutates_args=())
def segment_matmul_op(x: Tensor, w: Tensor, seg_indptr: Tensor,
                      weight_indices: Optional[Tensor], bias: Optional[Tensor],
                      row_scale: Optional[Tensor], weight_layout: str,
                      activation: str, out_dtype: str, config: str,
                      row_indices: Optional[Tensor],
                      gate_up_block: int) -> Tensor:
    plan = ops.plan_segment_matmul(
        x, w, seg_indptr, weight_indices=weight_indices,
        weight_layout=weight_layout, bias=bias, activation=activation,
        row_scale=row_scale, out_dtype=ops.torch_dtype(out_dtype),
        config=ops.config_from_text(config), row_indices=row_indices,
        gate_up_block=gate_up_block)
    return ops._run(plan, None, True, None)


@segment_matmul_op.register_fake
def _(x, w, seg_indptr, weight_indices, bias, row_scale, weight_layout,
      activation, out_dtype, config, row_indices, gate_up_block):
    rows = x.shape[0] if row_indices is None else row_indices.shape[0]
    return x.new_empty((rows, _out_n(w, weight_layout, activation)),
                       dtype=ops.torch_dtype(out_dtype))


def _grouped_op(op: str):
    @torch.library.custom_op(f"{_LIB}::{op}", mutates_args=())
    def grouped(x: Tensor, w: Tensor, masked_m: Optional[Tensor],
                bias: Optional[Tensor], row_scale: Optional[Tensor],
                weight_layout: str, activation: str, out_dtype: str,
                config: str) -> Tensor:
        plan = ops._plan_grouped(
            op, x, w, masked_m, weight_layout=weight_layout, bias=bias,
            activation=activation, row_scale=row_scale, accumulate=False,
            out=None, out_dtype=ops.torch_dtype(out_dtype),
            config=ops.config_from_text(config))
        return ops._run(plan, None, op == "masked_matmul", None)

    @grouped.register_fake
    def _(x, w, masked_m, bias, row_scale, weight_layout, activation,
          out_dtype, config):
        return x.new_empty((x.shape[0], x.shape[1],
                            _layout_n(w, weight_layout)),
                           dtype=ops.torch_dtype(out_dtype))

    return grouped


masked_matmul_op = _grouped_op("masked_matmul")
batched_matmul_op = _grouped_op("batched_matmul")


# -- ops writing into out ---------------------------------------------------

@torch.library.custom_op(f"{_LIB}::segment_matmul_out", mutates_args=("out",))
def segment_matmul_out_op(x: Tensor, w: Tensor, seg_indptr: Tensor,
                          weight_indices: Optional[Tensor],
                          bias: Optional[Tensor], row_scale: Optional[Tensor],
                          out: Tensor, weight_layout: str, activation: str,
                          accumulate: bool, config: str,
                          row_indices: Optional[Tensor],
                          scatter_indices: Optional[Tensor],
                          atomic: bool, gate_up_block: int) -> None:
    plan = ops.plan_segment_matmul(
        x, w, seg_indptr, weight_indices=weight_indices,
        weight_layout=weight_layout, bias=bias, activation=activation,
        row_scale=row_scale, accumulate=accumulate, out=out,
        config=ops.config_from_text(config), row_indices=row_indices,
        scatter_indices=scatter_indices, atomic=atomic,
        gate_up_block=gate_up_block)
    ops._run(plan, out, False, None)


@segment_matmul_out_op.register_fake
def _(x, w, seg_indptr, weight_indices, bias, row_scale, out, weight_layout,
      activation, accumulate, config, row_indices, scatter_indices, atomic,
      gate_up_block):
    return None


def _grouped_out_op(op: str):
    @torch.library.custom_op(f"{_LIB}::{op}_out", mutates_args=("out",))
    def grouped_out(x: Tensor, w: Tensor, masked_m: Optional[Tensor],
                    bias: Optional[Tensor], row_scale: Optional[Tensor],
                    out: Tensor, weight_layout: str, activation: str,
                    accumulate: bool, config: str) -> None:
        plan = ops._plan_grouped(
            op, x, w, masked_m, weight_layout=weight_layout, bias=bias,
            activation=activation, row_scale=row_scale,
            accumulate=accumulate, out=out, out_dtype=None,
            config=ops.config_from_text(config))
        ops._run(plan, out, False, None)

    @grouped_out.register_fake
    def _(x, w, masked_m, bias, row_scale, out, weight_layout, activation,
          accumulate, config):
        return None

    return grouped_out


masked_matmul_out_op = _grouped_out_op("masked_matmul")
batched_matmul_out_op = _grouped_out_op("batched_matmul")


@torch.library.custom_op(f"{_LIB}::segment_matmul_k_torch", mutates_args=())
def segment_matmul_k_torch_op(x: Tensor, dy: Tensor, seg_indptr: Tensor,
                              weight_indices: Optional[Tensor],
                              num_weights: int) -> Tensor:
    return ops.segment_matmul_k_torch(x, dy, seg_indptr, weight_indices,
                                      num_weights)


@segment_matmul_k_torch_op.register_fake
def _(x, dy, seg_indptr, weight_indices, num_weights):
    return x.new_empty((num_weights, dy.shape[1], x.shape[1]),
                       dtype=torch.float32)


def _kragged_shape(x: Tensor, dy: Tensor, num_weights: int,
                   weight_layout: str):
    n, k = dy.shape[1], x.shape[1]
    return (num_weights, n, k) if weight_layout == "nk" else \
        (num_weights, k, n)


@torch.library.custom_op(f"{_LIB}::segment_matmul_k", mutates_args=())
def segment_matmul_k_op(x: Tensor, dy: Tensor, seg_indptr: Tensor,
                        weight_indices: Optional[Tensor], num_weights: int,
                        weight_layout: str, out_dtype: str, config: str,
                        fallback: str) -> Tensor:
    return ops.segment_matmul_k_eager(
        x, dy, seg_indptr, weight_indices, num_weights, weight_layout, False,
        None, ops.torch_dtype(out_dtype), ops.config_from_text(config), None,
        fallback or None)


@segment_matmul_k_op.register_fake
def _(x, dy, seg_indptr, weight_indices, num_weights, weight_layout,
      out_dtype, config, fallback):
    return x.new_empty(_kragged_shape(x, dy, num_weights, weight_layout),
                       dtype=ops.torch_dtype(out_dtype))


@torch.library.custom_op(f"{_LIB}::segment_matmul_k_out",
                         mutates_args=("out",))
def segment_matmul_k_out_op(x: Tensor, dy: Tensor, seg_indptr: Tensor,
                            weight_indices: Optional[Tensor], out: Tensor,
                            weight_layout: str, accumulate: bool,
                            config: str, fallback: str) -> None:
    ops.segment_matmul_k_eager(
        x, dy, seg_indptr, weight_indices, out.shape[0], weight_layout,
        accumulate, out, None, ops.config_from_text(config), None,
        fallback or None)


@segment_matmul_k_out_op.register_fake
def _(x, dy, seg_indptr, weight_indices, out, weight_layout, accumulate,
      config, fallback):
    return None


def _kragged_t_shape(x: Tensor, dy: Tensor, num_weights: int,
                     weight_layout: str):
    """dW's shape from transposed operands, x [K, T] and dy [N, T]."""
    n, k = dy.shape[0], x.shape[0]
    return (num_weights, n, k) if weight_layout == "nk" else \
        (num_weights, k, n)


@torch.library.custom_op(f"{_LIB}::segment_matmul_k_transposed",
                         mutates_args=())
def segment_matmul_k_transposed_op(x: Tensor, dy: Tensor, seg_indptr: Tensor,
                                   x_scale: Optional[Tensor],
                                   dy_scale: Optional[Tensor],
                                   weight_indices: Optional[Tensor],
                                   num_weights: int, weight_layout: str,
                                   out_dtype: str, config: str,
                                   fallback: str) -> Tensor:
    return ops.segment_matmul_k_eager(
        x, dy, seg_indptr, weight_indices, num_weights, weight_layout, False,
        None, ops.torch_dtype(out_dtype), ops.config_from_text(config), None,
        fallback or None, transposed=True, x_scale=x_scale,
        dy_scale=dy_scale)


@segment_matmul_k_transposed_op.register_fake
def _(x, dy, seg_indptr, x_scale, dy_scale, weight_indices, num_weights,
      weight_layout, out_dtype, config, fallback):
    return x.new_empty(_kragged_t_shape(x, dy, num_weights, weight_layout),
                       dtype=ops.torch_dtype(out_dtype))


@torch.library.custom_op(f"{_LIB}::segment_matmul_k_transposed_out",
                         mutates_args=("out",))
def segment_matmul_k_transposed_out_op(x: Tensor, dy: Tensor,
                                       seg_indptr: Tensor,
                                       x_scale: Optional[Tensor],
                                       dy_scale: Optional[Tensor],
                                       weight_indices: Optional[Tensor],
                                       out: Tensor, weight_layout: str,
                                       accumulate: bool, config: str,
                                       fallback: str) -> None:
    ops.segment_matmul_k_eager(
        x, dy, seg_indptr, weight_indices, out.shape[0], weight_layout,
        accumulate, out, None, ops.config_from_text(config), None,
        fallback or None, transposed=True, x_scale=x_scale,
        dy_scale=dy_scale)


@segment_matmul_k_transposed_out_op.register_fake
def _(x, dy, seg_indptr, x_scale, dy_scale, weight_indices, out,
      weight_layout, accumulate, config, fallback):
    return None


def _segment_sums(grad: Tensor, seg_indptr: Tensor,
                  weight_indices: Optional[Tensor],
                  num_weights: int) -> Tensor:
    """Per-weight sums of ``grad``'s rows over the segments, float32
    ``[Gw, N]``, on the device (no synchronisation): each row's segment is
    found with ``searchsorted`` over the clamped segment ends, then the rows
    are added with ``index_add_`` (rows in no segment, and segments whose
    weight index is outside ``[0, Gw)``, go to a spare row)."""
    rows, groups = grad.shape[0], seg_indptr.shape[0] - 1
    sums = grad.new_zeros((num_weights + 1, grad.shape[1]),
                          dtype=torch.float32)
    if rows == 0 or groups <= 0:
        return sums[:num_weights]
    bounds = seg_indptr.long().clamp(0, rows)
    begin = bounds[:-1]
    end = torch.maximum(bounds[1:], begin)
    row = torch.arange(rows, device=grad.device)
    group = torch.searchsorted(end, row, right=True).clamp_(max=groups - 1)
    inside = (begin[group] <= row) & (row < end[group])
    weight = group if weight_indices is None else \
        weight_indices.long()[group]
    inside &= (weight >= 0) & (weight < num_weights)
    target = torch.where(inside, weight, torch.full_like(weight, num_weights))
    sums.index_add_(0, target, grad.float())
    return sums[:num_weights]


# -- autograd of segment_matmul -------------------------------------------

def _activation_grad(z: Tensor, activation: str) -> Tensor:
    """d act(z) / dz, elementwise, in float32 (not swiglu: see
    :func:`_activation_backward`)."""
    if activation == "relu":
        return (z > 0).to(z.dtype)
    if activation == "gelu":  # exact (erf) gelu, as the kernel computes
        cdf = 0.5 * (1.0 + torch.erf(z * (1.0 / math.sqrt(2.0))))
        pdf = torch.exp(-0.5 * z * z) * (1.0 / math.sqrt(2.0 * math.pi))
        return cdf + z * pdf
    if activation == "silu":
        sig = torch.sigmoid(z)
        return sig * (1.0 + z * (1.0 - sig))
    return torch.ones_like(z)


def _swiglu_halves(z: Tensor):
    """gate and up: the first and second N columns of the 2N-wide z."""
    n = z.shape[1] // 2
    return z[:, :n], z[:, n:]


def _activation_backward(grad: Tensor, z: Tensor, activation: str) -> Tensor:
    """dL/dz from dL/d act(z) = ``grad`` (float32). For swiglu, z is 2N
    wide and the result too: ``[d gate, d up]`` with ``h = silu(gate) *
    up``, ``d gate = grad * up * silu'(gate)``, ``d up = grad *
    silu(gate)``."""
    if activation != "swiglu":
        return grad * _activation_grad(z, activation)
    gate, up = _swiglu_halves(z)
    sig = torch.sigmoid(gate)
    d_gate = grad * up * (sig * (1.0 + gate * (1.0 - sig)))
    d_up = grad * (gate * sig)
    return torch.cat([d_gate, d_up], dim=1)


def _activate(z: Tensor, activation: str) -> Tensor:
    if activation == "swiglu":
        gate, up = _swiglu_halves(z)
        return torch.nn.functional.silu(gate) * up
    if activation == "relu":
        return torch.relu(z)
    if activation == "gelu":
        return torch.nn.functional.gelu(z)
    if activation == "silu":
        return torch.nn.functional.silu(z)
    return z


def _gather_rows(x: Tensor, row_indices: Tensor) -> Tensor:
    """``x[row_indices]`` with zero rows for indices outside ``[0, T)``,
    as the gathering kernel reads them (one ``[M, K]`` copy, on the
    device, no synchronisation)."""
    rows = x.shape[0]
    index = row_indices.long()
    valid = (index >= 0) & (index < rows)
    if rows == 0:
        return x.new_zeros((index.shape[0], x.shape[1]))
    gathered = x.index_select(0, index.clamp(0, rows - 1))
    return gathered.masked_fill_(~valid[:, None], 0)


def _scatter_add_rows(rows_grad: Tensor, row_indices: Tensor,
                      rows: int) -> Tensor:
    """dx of a gather: each gathered row's gradient added onto its x row, in
    float32 (tokens gathered several times sum); indices outside ``[0,
    T)`` go to a spare row that is dropped."""
    index = row_indices.long()
    index = torch.where((index >= 0) & (index < rows), index,
                        torch.full_like(index, rows))
    sums = rows_grad.new_zeros((rows + 1, rows_grad.shape[1]),
                               dtype=torch.float32)
    sums.index_add_(0, index, rows_grad.float())
    return sums[:rows]


def _setup_context(ctx, inputs, output):
    (x, w, seg_indptr, weight_indices, bias, row_scale, weight_layout,
     activation, out_dtype, config, row_indices, gate_up_block) = inputs
    ctx.save_for_backward(x, w, seg_indptr, weight_indices, bias, row_scale,
                          row_indices)
    ctx.weight_layout = weight_layout
    ctx.activation = activation
    ctx.config = config
    ctx.gate_up_block = gate_up_block


def _interleaved_columns(matrix: Tensor, block: int) -> Tensor:
    """The 2N columns of ``[R, 2N]`` gate/up values (gate, then up) in the
    interleaved order of a weight of ``gate_up_block = block`` (one copy)."""
    return interleave_gate_up(matrix[None], block, "kn")[0]


def _logical_columns(matrix: Tensor, block: int) -> Tensor:
    """The inverse of :func:`_interleaved_columns`: gate, then up."""
    return deinterleave_gate_up(matrix[None], block, "kn")[0]


def _backward(ctx, dy):
    (x, w, seg_indptr, weight_indices, bias, row_scale,
     row_indices) = ctx.saved_tensors
    layout, activation = ctx.weight_layout, ctx.activation
    block = ctx.gate_up_block
    grad = dy.float()
    d_row_scale = None
    if activation != "none" or row_scale is not None:
        # z before the activation (2N wide with swiglu), recomputed without
        # fusion: one segment_matmul, gathered as the forward was. Its
        # columns follow w's rows: with interleaved gate/up blocks the bias
        # (gate, then up) is added in that order, and z is put back in the
        # logical order for the activation's gradient.
        z_bias = bias if bias is None or not block else \
            _interleaved_columns(bias, block)
        z = segment_matmul_op(x, w, seg_indptr, weight_indices, z_bias, None,
                              layout, "none", "f32", "", row_indices, 0)
        if block:
            z = _logical_columns(z, block)
        if row_scale is not None:
            if ctx.needs_input_grad[5]:
                d_row_scale = (grad * _activate(z, activation)).sum(1)
            grad = grad * row_scale[:, None]
        grad = _activation_backward(grad, z, activation)
    dx = dw = d_bias = None
    n = _layout_n(w, layout)  # dz's columns: 2N with swiglu
    # dz as the products read it, its columns in w's row order: dx and dW
    # (which so comes back in w's layout, interleaved or not).
    grad_w = _interleaved_columns(grad, block) if block else grad
    low = None
    if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
        # dz in the operands' dtype, rows contiguous: dy of both products.
        low = grad_w.to(x.dtype).contiguous()
    if ctx.needs_input_grad[0]:
        if n % 8:
            raise ArgumentError(
                f"segment_matmul backward: dx reads dy's rows (N = {n} "
                f"elements) through TMA, which needs N to be a multiple of 8")
        # Gathered rows are summed onto their tokens: keep them in f32.
        dx = segment_matmul_op(low, w, seg_indptr, weight_indices, None,
                               None, ops._OTHER_LAYOUT[layout], "none",
                               ops.dtype_name(x) if row_indices is None
                               else "f32", "", None, 0)
        if row_indices is not None:
            dx = _scatter_add_rows(dx, row_indices, x.shape[0]).to(x.dtype)
    if ctx.needs_input_grad[1]:
        # The K-ragged product reads the rows in segment order: gathered.
        xs = x if row_indices is None else _gather_rows(x, row_indices)
        if n % 8 == 0 and ops.dtype_name(x) in ops._KRAGGED_DTYPES:
            # The K-ragged kernel, in W's layout and dtype: no sync.
            dw = segment_matmul_k_op(xs, low, seg_indptr, weight_indices,
                                     w.shape[0], layout, ops.dtype_name(w),
                                     "", "torch")
        else:
            dw_nk = segment_matmul_k_torch_op(xs, grad_w, seg_indptr,
                                              weight_indices, w.shape[0])
            dw = (dw_nk if layout == "nk" else
                  dw_nk.transpose(1, 2)).to(w.dtype)
    if ctx.needs_input_grad[4]:
        d_bias = _segment_sums(grad, seg_indptr, weight_indices,
                               bias.shape[0]).to(bias.dtype)
    return (dx, dw, None, None, d_bias, d_row_scale, None, None, None, None,
            None, None)


segment_matmul_op.register_autograd(_backward, setup_context=_setup_context)


# -- entry points used by ggemm.ops ----------------------------------------

def segment_matmul_via_library(x, w, seg_indptr, weight_indices, weight_layout,
                               bias, activation, row_scale, accumulate, out,
                               out_dtype, config, row_indices=None,
                               scatter_indices=None, atomic=False,
                               gate_up_block=None):
    plan = ops.plan_segment_matmul(
        x, w, seg_indptr, weight_indices=weight_indices,
        weight_layout=weight_layout, bias=bias, activation=activation,
        row_scale=row_scale, accumulate=accumulate, out=out,
        out_dtype=out_dtype, config=config, row_indices=row_indices,
        scatter_indices=scatter_indices, atomic=atomic,
        gate_up_block=gate_up_block, build=False)
    tensors = plan.tensors
    act = ops._activation(activation)
    block = gate_up_block or 0  # checked by the plan
    config_text = ops._config_text(config)
    if out is not None:
        if torch.is_grad_enabled() and ops._any_requires_grad(
                (x, w, bias, row_scale, out)):
            if scatter_indices is not None:
                raise NotLoweredError(
                    "scatter_indices: a scattered segment_matmul writes into "
                    "out= and is not differentiable; for gradients compute "
                    "y = segment_matmul(...) without scatter_indices and "
                    "scatter it with torch (out.index_add(0, "
                    "scatter_indices.long(), y))")
            raise ArgumentError(
                "out: segment_matmul with out= (or accumulate=True) is not "
                "differentiable; call it without out= to get gradients")
        segment_matmul_out_op(x, w, seg_indptr, tensors.get("weight_indices"),
                              tensors.get("bias"), tensors.get("row_scale"),
                              out, weight_layout, act, bool(accumulate),
                              config_text, row_indices, scatter_indices,
                              bool(atomic), block)
        return out
    return segment_matmul_op(x, w, seg_indptr, tensors.get("weight_indices"),
                             tensors.get("bias"), tensors.get("row_scale"),
                             weight_layout, act, plan.out_dtype, config_text,
                             row_indices, block)


def segment_matmul_k_via_library(x, dy, seg_indptr, weight_indices,
                                 num_weights, weight_layout, accumulate, out,
                                 out_dtype, config, fallback, *,
                                 transposed=False, x_scale=None,
                                 dy_scale=None):
    kplan = ops.plan_segment_matmul_k(
        x, dy, seg_indptr, weight_indices=weight_indices,
        num_weights=num_weights, weight_layout=weight_layout,
        accumulate=accumulate, out=out, out_dtype=out_dtype, config=config,
        kernel=False, build=False, transposed=transposed, x_scale=x_scale,
        dy_scale=dy_scale)
    if torch.is_grad_enabled() and ops._any_requires_grad((x, dy, out)):
        raise NotLoweredError(
            "segment_matmul_k: autograd is not implemented (it computes "
            "weight gradients); detach the inputs or call it under "
            "torch.no_grad()")
    config_text = ops._config_text(config)
    if transposed:
        if out is not None:
            segment_matmul_k_transposed_out_op(
                x, dy, seg_indptr, x_scale, dy_scale, weight_indices, out,
                weight_layout, bool(accumulate), config_text, fallback or "")
            return out
        return segment_matmul_k_transposed_op(
            x, dy, seg_indptr, x_scale, dy_scale, weight_indices,
            kplan.num_weights, weight_layout, kplan.out_dtype, config_text,
            fallback or "")
    if out is not None:
        segment_matmul_k_out_op(x, dy, seg_indptr, weight_indices, out,
                                weight_layout, bool(accumulate), config_text,
                                fallback or "")
        return out
    return segment_matmul_k_op(x, dy, seg_indptr, weight_indices,
                               kplan.num_weights, weight_layout,
                               kplan.out_dtype, config_text, fallback or "")


def grouped_via_library(op, x, w, masked_m, weight_layout, bias, activation,
                        row_scale, accumulate, out, out_dtype, config):
    plan = ops._plan_grouped(op, x, w, masked_m, weight_layout=weight_layout,
                             bias=bias, activation=activation,
                             row_scale=row_scale, accumulate=accumulate,
                             out=out, out_dtype=out_dtype, config=config,
                             build=False)
    if torch.is_grad_enabled() and ops._any_requires_grad(
            (x, w, bias, row_scale, out)):
        raise NotLoweredError(
            f"{op}: autograd is implemented for segment_matmul only; detach "
            f"the inputs or use segment_matmul")
    tensors = plan.tensors
    act = ops._activation(activation)
    config_text = ops._config_text(config)
    if out is not None:
        (masked_matmul_out_op if op == "masked_matmul"
         else batched_matmul_out_op)(
            x, w, masked_m, tensors.get("bias"), tensors.get("row_scale"), out,
            weight_layout, act, bool(accumulate), config_text)
        return out
    return (masked_matmul_op if op == "masked_matmul" else batched_matmul_op)(
        x, w, masked_m, tensors.get("bias"), tensors.get("row_scale"),
        weight_layout, act, plan.out_dtype, config_text)


ops._torch_ops_module = sys.modules[__name__]
