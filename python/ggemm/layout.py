"""Gate/up weight layouts of the fused SwiGLU epilogue.

``segment_matmul(..., activation="swiglu")`` reads a weight of ``2N`` rows
per expert. vLLM's and SGLang's ``w13`` hold them side by side: the gate
rows ``[0, N)``, then the up rows ``[N, 2N)``. The kernel's tile then reads
its gate rows and its up rows as two boxes N rows apart, which loses L2
reuse when the activations are gathered (each expert's weight is read once
per row tile, and the two halves of a tile are far apart).

With ``gate_up_block=B`` the kernel reads the interleaved layout instead:
the ``2N`` rows come in blocks of ``2B``, rows ``[2B j, 2B j + B)`` the gate
rows of outputs ``[B j, B j + B)`` and rows ``[2B j + B, 2B j + 2B)`` their
up rows (for ``weight_layout="kn"`` the same along the last dimension).
Every tile (``block_n = 2B``) is one contiguous block. Only the weight's
storage changes: the output, the bias (``[Gw, 2N]``, gate then up) and the
gradients of everything but the weight keep the logical order; the weight's
gradient comes back in the weight's (interleaved) layout.

:func:`interleave_gate_up` converts a side-by-side weight once (at load
time), :func:`deinterleave_gate_up` converts back. Both take torch tensors
or NumPy arrays and make one copy.

Example::

    w13_i = ggemm.interleave_gate_up(w13, 64)       # [E, 2N, K], blocked
    h = ggemm.segment_matmul(x, w13_i, routing.seg_indptr,
                             row_indices=routing.row_indices,
                             activation="swiglu", gate_up_block=64)
"""

from __future__ import annotations

from typing import Any, Tuple

from .ops import ArgumentError, check_gate_up_block

__all__ = ["deinterleave_gate_up", "interleave_gate_up"]

def _gate_up_dims(w: Any, block: Any, weight_layout: str,
                  name: str) -> Tuple[int, int]:
    """(axis of the 2N rows, N) of a ``[Gw, 2N, K]`` / ``[Gw, K, 2N]``
    weight, checked."""
    if weight_layout not in ("nk", "kn"):
        raise ArgumentError(f"weight_layout: expected 'nk' or 'kn', got "
                            f"{weight_layout!r}")
    shape = tuple(getattr(w, "shape", ()))
    if len(shape) != 3:
        raise ArgumentError(
            f"{name}: expected a weight [Gw, 2N, K] (weight_layout 'nk') or "
            f"[Gw, K, 2N] ('kn'), got shape {list(shape)}")
    axis = 1 if weight_layout == "nk" else 2
    rows = shape[axis]
    if rows % 2:
        raise ArgumentError(f"{name}: expected an even extent of gate and "
                            f"up rows on dimension {axis}, got {rows}; "
                            f"shape is {list(shape)}")
    check_gate_up_block(block, rows // 2)
    return axis, rows // 2


def _permuted_copy(w: Any, shape: Tuple[int, ...], order: Tuple[int, ...],
                   final: Tuple[int, ...]) -> Any:
    """``w`` viewed as ``shape``, its axes put in ``order``, copied into
    ``final``: one copy, for torch tensors and NumPy arrays alike."""
    view = w.reshape(shape)
    moved = view.permute(*order) if hasattr(view, "permute") \
        else view.transpose(order)
    return moved.reshape(final)


def interleave_gate_up(w13: Any, block: int, weight_layout: str = "nk") -> Any:
    """The side-by-side gate/up weight ``w13`` (gate rows ``[0, N)``, up
    rows ``[N, 2N)``, vLLM's layout) in blocks of ``block`` gate rows and
    their ``block`` up rows, the layout of ``segment_matmul(...,
    activation="swiglu", gate_up_block=block)``.

    ``w13``: ``[Gw, 2N, K]`` (``weight_layout="nk"``) or ``[Gw, K, 2N]``
    (``"kn"``), a torch tensor (any dtype or device) or a NumPy array; N a
    multiple of ``block``, ``block`` a multiple of 8 of at most 128.
    Returns a new contiguous tensor (array) of the same shape and dtype.

    Example::

        >>> import numpy as np
        >>> w = np.arange(32).reshape(1, 32, 1)    # gate 0..15, up 16..31
        >>> interleave_gate_up(w, 8)[0, :, 0].tolist()[:10]
        [0, 1, 2, 3, 4, 5, 6, 7, 16, 17]
    """
    axis, n = _gate_up_dims(w13, block, weight_layout, "w13")
    shape = tuple(w13.shape)
    if axis == 1:
        gw, _, k = shape
        return _permuted_copy(w13, (gw, 2, n // block, block, k),
                              (0, 2, 1, 3, 4), shape)
    gw, k, _ = shape
    return _permuted_copy(w13, (gw, k, 2, n // block, block),
                          (0, 1, 3, 2, 4), shape)


def deinterleave_gate_up(w: Any, block: int, weight_layout: str = "nk") -> Any:
    """The inverse of :func:`interleave_gate_up`: a weight (or its
    gradient) in blocks of ``block`` gate and ``block`` up rows back to the
    side-by-side layout, gate rows ``[0, N)`` then up rows ``[N, 2N)``.

    Example::

        >>> import numpy as np
        >>> w = np.random.rand(2, 64, 8)
        >>> back = deinterleave_gate_up(interleave_gate_up(w, 16), 16)
        >>> bool((back == w).all())
        True
    """
    axis, n = _gate_up_dims(w, block, weight_layout, "w")
    shape = tuple(w.shape)
    if axis == 1:
        gw, _, k = shape
        return _permuted_copy(w, (gw, n // block, 2, block, k),
                              (0, 2, 1, 3, 4), shape)
    gw, k, _ = shape
    return _permuted_copy(w, (gw, k, n // block, 2, block), (0, 1, 3, 2, 4),
                          shape)
