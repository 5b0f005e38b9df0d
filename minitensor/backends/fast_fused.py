"""The ``fast`` backend's fused row ops (:class:`FusedKernels`, a mixin of FastBackend): softmax / log_softmax and
layer_norm, forward and backward, one Numba kernel launch each (:mod:`minitensor.backends.fast_fused_kernels`)
instead of the chain of element-wise kernels :class:`minitensor.backends.base.Backend` composes by default.

Python here only plans a call: the dims other than the row dim, in their natural order, merged where contiguous for
every operand, and the work split into chunks of whole rows (:func:`minitensor.backends.layout.row_plan`); kernels
are launched through :mod:`minitensor.backends.fast_launch`, like the rest of the backend's.
"""

from __future__ import annotations

import numpy as np

from ..tensor_data import TensorData, normalize_dim
from . import fast_launch
from .base import Backend, strided_view
from .fast_codegen import DEFAULT_COMPUTE
from .layout import ELEMENT_ALIGN, chunking, row_plan

SMALL_SOFTMAX = 4096
"""Below this many elements softmax and log_softmax run the small-input kernels (``math.exp`` per element, quick to
compile: a first run's classifier loss); from here on the one-pass kernel whose exp vectorises (``softmax_kernel``)."""
_NO_PARAM = np.zeros(1, dtype=np.float64)  # stands in for an absent weight or bias (never read)


def launch(work: int, kernel: str, *args: object) -> None:
    """Call ``kernel`` of the fused kernel module (its parallel build when ``work`` pays for the thread pool)."""
    fast_launch.launch(work, kernel, "fused", "", DEFAULT_COMPUTE, *args)


def _positive_step(backend: Backend, data: TensorData, dim: int) -> TensorData:
    """``data`` itself when its stride along ``dim`` is >= 1 (or the dim has length <= 1), else a contiguous copy
    (an expanded or flipped operand): the row kernels slice rows with a positive step."""
    return data if data.shape[dim] <= 1 or data.strides[dim] >= 1 else backend._copy(data)


def _step(data: TensorData, dim: int) -> int:
    """``data``'s stride along ``dim``, 1 for a dim of length <= 1 (never stepped)."""
    return data.strides[dim] if data.shape[dim] > 1 else 1


def _chunks(size: int) -> tuple[int, int]:
    """(chunks, elements per chunk) for an element-wise kernel over ``size`` elements."""
    return chunking(np.array([size], dtype=np.int64), align=ELEMENT_ALIGN)


FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _dense(first: TensorData, *others: TensorData) -> bool:
    """All of one shape, row-major contiguous from the start of their storages (so rows are consecutive slices)."""
    return first.size > 0 and all(x.shape == first.shape and x.is_contiguous() for x in (first, *others))


def _whole_rows(table: TensorData, index: TensorData, rows: TensorData) -> bool:
    """Whether take_rows/add_rows can copy or add whole rows: 2-D contiguous ``table`` and ``rows`` of one dtype and
    width, a 1-D int64 ``index`` with one entry per row of ``rows``, and something to move."""
    return (table.dims == rows.dims == 2 and table.shape[1] == rows.shape[1] and table.dtype == rows.dtype
            and table.is_contiguous() and rows.is_contiguous() and index.dims == 1
            and index.shape[0] == rows.shape[0] and index.dtype == np.dtype(np.int64) and rows.size > 0)


class FusedKernels(Backend):
    """The fused ops of :class:`~minitensor.backends.base.Backend` (same contracts) for host storage. softmax and
    log_softmax: one Numba pass per row (scale, causal mask, row max, vectorised exp, sum, normalize); the backward one
    Numba row pass (log_softmax's with the vectorised exp); inputs under SMALL_SOFTMAX elements, and rows not of unit
    stride, take kernels with ``math.exp`` per element that compile faster and take any stride. layer_norm: one Numba
    row kernel each way. Exact GELU (float32, float64): one Numba pass. Other dtypes: the defaults.

    take_rows / add_rows: one row copy (or add) per index where the layouts allow, else the defaults. Beyond the
    Backend contract, an op callers use when present (``hasattr``): ``adam_update`` (Adam's element-wise update in
    one pass, :mod:`minitensor.optim.adam`)."""

    def softmax(self, a: TensorData, dim: int, out: TensorData, log: bool = False, scale: float = 1.0,
                causal: bool = False) -> None:
        if out.size == 0:
            return
        if a.dtype != out.dtype or out.dtype not in FLOATS or a.dims == 0:
            super().softmax(a, dim, out, log, scale, causal)
            return
        dim = normalize_dim(dim, a.dims)
        if causal and (a.dims < 2 or dim != a.dims - 1):
            raise ValueError(f"softmax: causal needs dim to be the last of >= 2 dims, got dim {dim} of shape {a.shape}")
        small = a.size < SMALL_SOFTMAX
        if small and not causal and scale == 1.0 and dim == a.dims - 1 and _dense(a, out):
            kernel = fast_launch.find_kernel("softmax_dense_rows_kernel", "fused", "", DEFAULT_COMPUTE, False)
            kernel(a.storage, out.storage, a.size // a.shape[dim], a.shape[dim], 2 if log else 1)
            return
        a = _positive_step(self, a, dim)
        rows, strides, n_chunks, per_chunk = row_plan(a.shape, dim, [out, a], natural=True)
        if small or _step(a, dim) != 1 or _step(out, dim) != 1:
            args = (a.storage, out.storage, rows, strides, a.shape[dim], _step(a, dim), _step(out, dim), n_chunks,
                    per_chunk, float(scale), a.shape[-2] if causal else 0, 2 if log else 1)
            launch(a.size, "softmax_shift_kernel", *args)
            return
        launch(a.size, "softmax_kernel", a.storage, out.storage, rows, strides, a.shape[dim], n_chunks, per_chunk,
               a.storage.dtype.type(scale), a.shape[-2] if causal else 0, log)

    def softmax_backward(self, grad: TensorData, out: TensorData, dim: int, grad_input: TensorData, log: bool = False,
                         scale: float = 1.0) -> None:
        if grad_input.size == 0:
            return
        if not grad.dtype == out.dtype == grad_input.dtype or out.dtype not in FLOATS or out.dims == 0:
            super().softmax_backward(grad, out, dim, grad_input, log, scale)
            return
        dim = normalize_dim(dim, out.dims)
        if out.size < SMALL_SOFTMAX and scale == 1.0 and dim == out.dims - 1 and _dense(grad, out, grad_input):
            kernel = fast_launch.find_kernel("softmax_backward_dense_rows_kernel", "fused", "", DEFAULT_COMPUTE, False)
            kernel(grad.storage, out.storage, grad_input.storage, out.size // out.shape[dim], out.shape[dim], log)
            return
        grad = _positive_step(self, grad if grad.shape == out.shape else grad.expand(out.shape), dim)
        out = _positive_step(self, out, dim)
        rows, strides, n_chunks, per_chunk = row_plan(out.shape, dim, [grad_input, grad, out], natural=True)
        steps = (_step(grad, dim), _step(out, dim), _step(grad_input, dim))
        if out.size < SMALL_SOFTMAX or steps != (1, 1, 1):
            args = (grad.storage, out.storage, grad_input.storage, rows, strides, out.shape[dim], *steps, n_chunks,
                    per_chunk, float(scale), log)
            launch(out.size, "softmax_backward_kernel", *args)
            return
        launch(out.size, "softmax_grad_kernel", grad.storage, out.storage, grad_input.storage, rows, strides,
               out.shape[dim], n_chunks, per_chunk, out.storage.dtype.type(scale), log)

    def layer_norm(self, a: TensorData, weight: TensorData | None, bias: TensorData | None, eps: float,
                   out: TensorData, mean: TensorData, rstd: TensorData) -> None:
        if a.size == 0:
            return
        d = a.dims - 1
        a = _positive_step(self, a, d)
        rows, strides, n_chunks, per_chunk = row_plan(a.shape, d, [out, a, mean, rstd], natural=True)
        w = _NO_PARAM if weight is None else self._dense(weight)
        b = _NO_PARAM if bias is None else self._dense(bias)
        args = (a.storage, w, b, out.storage, mean.storage, rstd.storage, rows, strides, a.shape[d], _step(a, d),
                _step(out, d), n_chunks, per_chunk, float(eps), weight is not None, bias is not None)
        launch(a.size, "layer_norm_kernel", *args)

    def layer_norm_backward(self, grad: TensorData, a: TensorData, mean: TensorData, rstd: TensorData,
                            weight: TensorData | None, grad_input: TensorData | None, grad_weight: TensorData | None,
                            grad_bias: TensorData | None) -> None:
        d, n = a.dims - 1, a.shape[-1]
        if a.size == 0:
            super().layer_norm_backward(grad, a, mean, rstd, weight, grad_input, grad_weight, grad_bias)
            return
        grad = _positive_step(self, grad if grad.shape == a.shape else grad.expand(a.shape), d)
        a = _positive_step(self, a, d)
        gi = grad_input if grad_input is not None else grad  # a placeholder, never written when not needed
        rows, strides, n_chunks, per_chunk = row_plan(a.shape, d, [gi, grad, a, mean, rstd], natural=True)
        need_params = grad_weight is not None or grad_bias is not None
        partials = np.empty((n_chunks, 2, n) if need_params else (n_chunks, 2, 1), dtype=np.float64)
        w = _NO_PARAM if weight is None else self._dense(weight)
        # The kernel stores the weight and bias gradients itself when they are (n,) vectors of the data's dtype (one
        # launch, which a compiled step binds directly); else NumPy sums its partials into them below.
        targets = [t for t in (grad_weight, grad_bias) if t is not None]
        inside = need_params and all(t.shape == (n,) and t.dtype == gi.dtype for t in targets)
        gw = grad_weight if inside and grad_weight is not None else gi
        gb = grad_bias if inside and grad_bias is not None else gi
        write = (grad_weight is not None) + 2 * (grad_bias is not None) if inside else 0
        args = (grad.storage, a.storage, mean.storage, rstd.storage, w, gi.storage, partials, rows, strides, n,
                _step(grad, d), _step(a, d), _step(gi, d), n_chunks, per_chunk, weight is not None,
                grad_input is not None, need_params, gw.storage, _step(gw, 0), gb.storage, _step(gb, 0), write)
        launch(a.size, "layer_norm_backward_kernel", *args)
        if need_params and not inside:
            sums = partials.sum(axis=0)
            for target, values in ((grad_weight, sums[0]), (grad_bias, sums[1])):
                if target is not None:
                    strided_view(target, writeable=True)[...] = values

    def take_rows(self, a: TensorData, index: TensorData, out: TensorData) -> None:
        """The Backend contract; contiguous 2-D ``a`` and ``out`` of one dtype copy one row per index."""
        if not _whole_rows(a, index, out):
            super().take_rows(a, index, out)
            return
        rows = out.shape[0]
        launch(out.size, "take_rows_kernel", a.storage, index.storage, _step(index, 0), out.storage, out.shape[1],
               *_chunks(rows))

    def add_rows(self, src: TensorData, index: TensorData, out: TensorData) -> None:
        """The Backend contract; contiguous 2-D ``src`` and ``out`` of one dtype add one row per index, in order of i,
        each addition rounded to the dtype as scatter_add's."""
        if not _whole_rows(out, index, src):
            super().add_rows(src, index, out)
            return
        fast_launch.find_kernel("add_rows_kernel", "fused", "", DEFAULT_COMPUTE, False)(
            src.storage, index.storage, _step(index, 0), out.storage, out.shape[1])

    def adam_update(self, p: TensorData, grad: TensorData, exp_avg: TensorData, exp_avg_sq: TensorData,
                    decay: TensorData, weight: TensorData, rest: TensorData, beta2: TensorData, gain2: TensorData,
                    correction2: TensorData, eps: TensorData, neg_step: TensorData, decoupled: bool,
                    small: bool) -> None:
        """Adam's element-wise update in one pass, in place, as :class:`~minitensor.optim.Adam` composes it from
        element-wise calls (each operation rounded to the dtype in the same order: the same bits): p *= decay when
        ``decoupled``; exp_avg = lerp(exp_avg, grad) (weight, or rest = 1 - weight when not ``small``);
        exp_avg_sq = exp_avg_sq beta2 + (grad gain2) grad; p += (exp_avg neg_step) / (sqrt(exp_avg_sq) /
        correction2 + eps). The four tensors must be contiguous float32 or float64 of one shape and dtype, the scalars
        one-element tensors of that dtype (ValueError otherwise)."""
        scalars = (decay, weight, rest, beta2, gain2, correction2, eps, neg_step)
        if (p.dtype not in FLOATS or not _dense(p, grad, exp_avg, exp_avg_sq)
                or any(x.dtype != p.dtype for x in (grad, exp_avg, exp_avg_sq, *scalars))
                or any(s.size != 1 for s in scalars)):
            raise ValueError(f"adam_update needs contiguous float32/float64 tensors of one shape and dtype and "
                             f"one-element scalars, got {p}, {grad}, {exp_avg}, {exp_avg_sq}")
        launch(p.size, "adam_kernel", p.storage, grad.storage, exp_avg.storage, exp_avg_sq.storage,
               *[s.storage for s in scalars], *_chunks(p.size), bool(decoupled), bool(small))

    def gelu(self, a: TensorData, out: TensorData, approximate: str = "none", slope: TensorData | None = None) -> None:
        if not self._gelu_fast(approximate, a, out, *([] if slope is None else [slope])):
            super().gelu(a, out, approximate, slope)
            return
        x = a.storage
        launch(a.size, "gelu_kernel", x, x, out.storage, x if slope is None else slope.storage, 0 if slope is None else 1,
               *_chunks(a.size))

    def gelu_backward(self, grad: TensorData, a: TensorData, grad_input: TensorData, approximate: str = "none") -> None:
        if not self._gelu_fast(approximate, a, grad_input, grad):
            super().gelu_backward(grad, a, grad_input, approximate)
            return
        x = a.storage
        launch(a.size, "gelu_kernel", x, grad.storage, grad_input.storage, x, 2, *_chunks(a.size))

    @staticmethod
    def _gelu_fast(approximate: str, *operands: TensorData) -> bool:
        """The exact GELU kernel's domain: contiguous float32 or float64 operands of one shape and dtype, whole
        storages."""
        first = operands[0]
        return approximate == "none" and first.size > 0 and first.dtype in FLOATS and all(
            x.dtype == first.dtype and x.shape == first.shape and x.is_contiguous() and x.storage.size == x.size
            for x in operands)

    def _dense(self, p: TensorData) -> np.ndarray:
        """A 1-D parameter as a contiguous NumPy array (its own storage when it already is one)."""
        if p.is_contiguous() and p.storage.size == p.size:
            return p.storage
        return strided_view(p).copy()
