"""The backend interface: four kernels plus allocation and host transfer.

A backend never sees autodiff. Kernels write into a preallocated ``out`` TensorData, which may itself
be a strided view (kernels must honour its strides). Inputs are broadcast to ``out``'s shape by
:func:`minitensor.tensor_data.broadcast_index` rules. Ops are named by the keys of
:data:`minitensor.operators.UNARY_OPS`, :data:`~minitensor.operators.BINARY_OPS` and
:data:`~minitensor.operators.REDUCE_OPS`. ``out`` may have another dtype than the inputs: the
kernel converts on store (this is how ``map("id", ...)`` casts and copies).

Storage dtypes are float32, float64, int32, int64 and bool. map, zip, reduce and scan read values
as int64 when every input is an integer or bool tensor (exact integer arithmetic), else as float64;
the result is converted on store (to bool: nonzero is True; float to int: truncation toward zero).
"""

from __future__ import annotations

import ctypes
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..tensor_data import TensorData, normalize_dim, prod


class Backend(ABC):
    """One implementation of the kernels. Subclasses set ``name``."""

    name: str = "abstract"

    # --- allocation and transfer ---

    @abstractmethod
    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> TensorData:
        """Fresh contiguous storage of ``shape`` (contents undefined)."""

    def zeros(self, shape: tuple[int, ...], dtype: np.dtype) -> TensorData:
        """Fresh contiguous storage of ``shape`` filled with 0."""
        return self.from_numpy(np.zeros(shape, dtype=dtype))

    @abstractmethod
    def from_numpy(self, array: np.ndarray) -> TensorData:
        """Copy a NumPy array into fresh contiguous storage owned by this backend."""

    @abstractmethod
    def to_numpy(self, data: TensorData) -> np.ndarray:
        """Copy ``data`` (any strides) into a new C-contiguous NumPy array of its shape."""

    def view_storage(self, storage: Any, dtype: np.dtype) -> Any:
        """The 1-D ``storage`` read as ``dtype`` without a copy (for ``Tensor.view(dtype)``): element i of the result
        is bytes [i * s, (i + 1) * s) of the storage (s = dtype.itemsize); trailing bytes that fill no whole element
        are left out. The caller checks the start's alignment. NumPy arrays and Numba's device arrays (real and
        simulated) all slice and ``.view(dtype)`` alike, so every backend here uses this default."""
        dtype, item = np.dtype(dtype), storage.dtype.itemsize
        count = storage.shape[0] * item // dtype.itemsize * dtype.itemsize // item
        return storage[:count].view(dtype)

    # --- kernels ---

    @abstractmethod
    def map(self, op: str, a: TensorData, out: TensorData) -> None:
        """out[i] = f(a[i]) for the unary op ``op``; ``a`` broadcasts to ``out.shape``."""

    @abstractmethod
    def zip(self, op: str, a: TensorData, b: TensorData, out: TensorData) -> None:
        """out[i] = f(a[i], b[i]) for the binary op ``op``; both broadcast to ``out.shape``."""

    @abstractmethod
    def reduce(self, op: str, a: TensorData, dim: int, out: TensorData) -> None:
        """out[j] = f-fold of a along ``dim`` from the op's start value; ``out.shape`` is ``a.shape`` with dim set to 1."""

    @abstractmethod
    def matmul(self, a: TensorData, b: TensorData, out: TensorData) -> None:
        """out[..., i, j] = sum_k a[..., i, k] * b[..., k, j].

        All three have the same number of dims (>= 2); the batch dims of ``a`` and ``b`` broadcast to ``out``'s.
        """

    # --- kernels beyond the four: ops that map/zip/reduce/matmul cannot express well ---

    @abstractmethod
    def where(self, cond: TensorData, a: TensorData, b: TensorData, out: TensorData) -> None:
        """out[i] = a[i] if cond[i] else b[i]; all three broadcast to ``out.shape`` (values copied, cast on store)."""

    @abstractmethod
    def gather(self, a: TensorData, dim: int, index: TensorData, out: TensorData) -> None:
        """out[..., j, ...] = a[..., index[..., j, ...], ...] along ``dim`` (``torch.gather``).

        ``index`` is int64 with ``out``'s shape; ``a`` has ``out``'s shape except along ``dim``. The caller
        guarantees 0 <= index < a.shape[dim].
        """

    @abstractmethod
    def scatter_add(self, src: TensorData, dim: int, index: TensorData, out: TensorData) -> None:
        """out[..., index[..., j, ...], ...] += src[..., j, ...] along ``dim`` (``torch.Tensor.scatter_add_``).

        ``index`` (int64) and ``src`` have the same shape, ``out`` that shape except along ``dim``. Adds into
        ``out``'s current values; repeated indices accumulate. The caller guarantees indices are in range.
        """

    @abstractmethod
    def scan(self, op: str, a: TensorData, dim: int, out: TensorData) -> None:
        """Inclusive prefix fold along ``dim``: out[..., j, ...] = fold of a[..., 0..j, ...] (``op`` in REDUCE_OPS)."""

    @abstractmethod
    def sort(self, a: TensorData, dim: int, descending: bool, values: TensorData, indices: TensorData) -> None:
        """Stable sort along ``dim``: ``values`` (a's dtype) and ``indices`` (int64) have a's shape.

        NaN sorts above every number (last ascending, first descending), as in PyTorch; equal values keep
        their original order in both directions.
        """

    # --- fused row kernels (torch eager's composite ops). The defaults compose the kernels above, so every backend
    # has them; a backend overrides them with one pass per row (fast: :mod:`minitensor.backends.fast_fused`). ---

    def softmax(self, a: TensorData, dim: int, out: TensorData, log: bool = False, scale: float = 1.0,
                causal: bool = False) -> None:
        """out = softmax(z) along ``dim`` with z = scale * a: exp(z - max z) / sum exp(z - max z), or with ``log``
        log_softmax(z) = z - max z - log(sum exp(z - max z)).

        ``causal`` (``dim`` the last of >= 2 dims): entry j of row i (i its index along dim -2) counts as -inf when
        j > i (torch's top-left ``is_causal``). -inf entries give 0 (log: -inf); a row of only -inf gives NaN. ``out``
        has a's shape and a float dtype; values are computed in out's dtype here, in float64 by overrides.
        """
        dim = normalize_dim(dim, a.dims)
        if out.size == 0:
            return
        dtype, keep = out.dtype, a.shape[:dim] + (1,) + a.shape[dim + 1 :]
        z = self.empty(a.shape, dtype)
        if scale != 1.0:
            self.zip("mul", a, self.constant(scale, dtype), z)
        else:
            self.map("id", a, z)
        if causal:
            allowed = self.from_numpy(np.tri(a.shape[-2], a.shape[-1], dtype=np.bool_))
            self.where(allowed, z, self.constant(-np.inf, dtype), z)
        top, total, e = self.empty(keep, dtype), self.empty(keep, dtype), self.empty(a.shape, dtype)
        self.reduce("max", z, dim, top)
        self.zip("sub", z, top, z)
        self.map("exp", z, e)
        self.reduce("sum", e, dim, total)
        if log:
            self.map("log", total, total)
            self.zip("sub", z, total, out)
        else:
            self.zip("div", e, total, out)

    def softmax_backward(self, grad: TensorData, out: TensorData, dim: int, grad_input: TensorData, log: bool = False,
                         scale: float = 1.0) -> None:
        """The gradient of :meth:`softmax` from its result ``out`` = y and the result's gradient ``grad`` = g:
        grad_input = scale * y * (g - sum(g * y)) (softmax) or scale * (g - exp(y) * sum(g)) (log_softmax), sums
        along ``dim``; masked (causal) entries have y = 0 and get 0 (softmax only: causal log_softmax is not
        differentiable here). All have out's shape; ``grad_input`` is float."""
        dim = normalize_dim(dim, out.dims)
        if grad_input.size == 0:
            return
        dtype, keep = grad_input.dtype, out.shape[:dim] + (1,) + out.shape[dim + 1 :]
        t, total = self.empty(out.shape, dtype), self.empty(keep, dtype)
        if log:
            self.map("exp", out, t)
            self.reduce("sum", grad, dim, total)
            self.zip("mul", t, total, t)
            self.zip("sub", grad, t, grad_input)
        else:
            self.zip("mul", grad, out, t)
            self.reduce("sum", t, dim, total)
            self.zip("sub", grad, total, t)
            self.zip("mul", out, t, grad_input)
        if scale != 1.0:
            self.zip("mul", grad_input, self.constant(scale, dtype), grad_input)

    def layer_norm(self, a: TensorData, weight: TensorData | None, bias: TensorData | None, eps: float,
                   out: TensorData, mean: TensorData, rstd: TensorData) -> None:
        """Normalize rows along the last dim (length N >= 1): mean = sum(a) / N, rstd = 1 / sqrt(sum((a - mean)^2) / N
        + eps), out = (a - mean) * rstd * weight + bias. ``weight``/``bias`` are (N,) or None; ``mean`` and ``rstd``
        have a's shape with the last dim 1 (they are what :meth:`layer_norm_backward` needs)."""
        if a.size == 0:
            return
        d, n, dtype = a.dims - 1, a.shape[-1], out.dtype
        xc, sq = self.empty(a.shape, dtype), self.empty(a.shape, dtype)
        self.reduce("sum", a, d, mean)
        self.zip("mul", mean, self.constant(1.0 / n, mean.dtype), mean)
        self.zip("sub", a, mean, xc)
        self.zip("mul", xc, xc, sq)
        self.reduce("sum", sq, d, rstd)
        self.zip("mul", rstd, self.constant(1.0 / n, rstd.dtype), rstd)
        self.zip("add", rstd, self.constant(eps, rstd.dtype), rstd)
        self.map("rsqrt", rstd, rstd)
        self.zip("mul", xc, rstd, out)
        if weight is not None:
            self.zip("mul", out, weight, out)
        if bias is not None:
            self.zip("add", out, bias, out)

    def layer_norm_backward(self, grad: TensorData, a: TensorData, mean: TensorData, rstd: TensorData,
                            weight: TensorData | None, grad_input: TensorData | None, grad_weight: TensorData | None,
                            grad_bias: TensorData | None) -> None:
        """Gradients of :meth:`layer_norm` (each output optional, None to skip) with xhat = (a - mean) * rstd and
        h = grad * weight: grad_input = rstd * (h - mean(h) - xhat * mean(h * xhat)) along the last dim,
        grad_weight = sum of grad * xhat over the rows, grad_bias = sum of grad over the rows ((N,) contiguous)."""
        d, n = a.dims - 1, a.shape[-1]
        rows = a.size // n if n else 0
        dtype = grad.dtype
        if rows == 0 or n == 0:
            for g in (grad_weight, grad_bias):
                if g is not None and g.size:
                    self.map("id", self.zeros(g.shape, g.dtype), g)
            return
        xhat, t = self.empty(a.shape, dtype), self.empty(a.shape, dtype)
        self.zip("sub", a, mean, xhat)
        self.zip("mul", xhat, rstd, xhat)
        if grad_weight is not None:
            self.zip("mul", grad, xhat, t)
            self.reduce("sum", t.view(rows, n), 0, grad_weight.view(1, n))
        if grad_bias is not None:
            g = grad if grad.is_contiguous() else self._copy(grad)
            self.reduce("sum", g.view(rows, n), 0, grad_bias.view(1, n))
        if grad_input is None:
            return
        h = self.empty(a.shape, dtype)
        if weight is not None:
            self.zip("mul", grad, weight, h)
        else:
            self.map("id", grad, h)
        keep = a.shape[:d] + (1,)
        m1, m2 = self.empty(keep, dtype), self.empty(keep, dtype)
        self.reduce("sum", h, d, m1)
        self.zip("mul", h, xhat, t)
        self.reduce("sum", t, d, m2)
        inv_n = self.constant(1.0 / n, dtype)
        self.zip("mul", m1, inv_n, m1)
        self.zip("mul", m2, inv_n, m2)
        self.zip("mul", xhat, m2, t)
        self.zip("sub", h, t, h)
        self.zip("sub", h, m1, h)
        self.zip("mul", h, rstd, grad_input)

    def gelu(self, a: TensorData, out: TensorData, approximate: str = "none", slope: TensorData | None = None) -> None:
        """out = GELU(a): a Phi(a) (``approximate="none"``) or its tanh form (``"tanh"``), the ``gelu``/``gelu_tanh`` ops;
        with ``slope`` (a's shape) also slope = GELU'(a), so a backward is one multiply."""
        tanh = approximate == "tanh"
        self.map("gelu_tanh" if tanh else "gelu", a, out)
        if slope is not None:
            self.zip("gelu_tanh_back" if tanh else "gelu_back", a, self.constant(1.0, slope.dtype), slope)

    def gelu_backward(self, grad: TensorData, a: TensorData, grad_input: TensorData, approximate: str = "none") -> None:
        """grad_input = grad * GELU'(a) (the ``gelu_back``/``gelu_tanh_back`` ops); all three of one shape."""
        self.zip("gelu_tanh_back" if approximate == "tanh" else "gelu_back", a, grad, grad_input)

    def add_scaled(self, a: TensorData, b: TensorData, alpha: TensorData, out: TensorData) -> None:
        """out = a + alpha * b (``torch.add(a, b, alpha=alpha)``, an optimizer's ``p - lr g``): ``alpha`` one element
        that broadcasts, ``a``/``b`` broadcast to ``out.shape`` (``out`` may be ``a``). This default takes two passes
        (alpha * b rounded to ``out``'s dtype, then the add); a backend may fuse them into one pass that rounds once."""
        scaled = self.empty(out.shape, out.dtype)
        self.zip("mul", b, alpha, scaled)
        self.zip("add", a, scaled, out)

    def take_rows(self, a: TensorData, index: TensorData, out: TensorData) -> None:
        """out[i, :] = a[index[i], :] for 2-D ``a`` and ``out`` of one width and a 1-D int64 ``index`` with one entry
        per row of ``out``, every entry in range (an embedding lookup). This default is ``gather`` along dim 0 with
        ``index`` expanded along dim 1; a backend may copy whole rows instead."""
        self.gather(a, 0, _rows_expanded(index, out.shape[1]), out)

    def add_rows(self, src: TensorData, index: TensorData, out: TensorData) -> None:
        """out[index[i], :] += src[i, :] in order of i (2-D ``src`` and ``out`` of one width, 1-D int64 ``index`` with
        one entry per row of ``src``, in range): take_rows' gradient. This default is ``scatter_add`` along dim 0 with
        ``index`` expanded along dim 1; a backend may add whole rows instead (each addition rounded as there)."""
        self.scatter_add(src, 0, _rows_expanded(index, src.shape[1]), out)

    def write_values(self, data: TensorData, values: Sequence[float | int | bool]) -> None:
        """Set the first ``len(values)`` elements of the storage of contiguous ``data`` to ``values``: a few host numbers
        per step, such as an optimizer's bias corrections (the cuda backend writes them with one launch, no copy)."""
        if len(values):
            self.map("id", self.from_numpy(np.asarray(values, dtype=data.dtype)), TensorData(data.storage, (len(values),)))

    def constant(self, value: float | int | bool, dtype: np.dtype) -> TensorData:
        """A 0-d tensor holding ``value`` as ``dtype``: an operand that broadcasts to anything and that callers only
        read (a backend may hand out one cached tensor per (value, dtype), as the cuda backend does)."""
        return self.from_numpy(np.array(value, dtype=dtype))

    def _copy(self, a: TensorData) -> TensorData:
        """A contiguous copy of ``a``."""
        out = self.empty(a.shape, a.dtype)
        self.map("id", a, out)
        return out

    def synchronize(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Wait for queued work (no-op on CPU backends)."""

    def __repr__(self) -> str:
        return f"<minitensor backend {self.name!r}>"


MALLOC_MMAP_THRESHOLD = 32 << 20
MALLOC_TRIM_THRESHOLD = 256 << 20


def keep_freed_host_memory() -> bool:
    """Have glibc's malloc serve blocks up to MALLOC_MMAP_THRESHOLD (32 MiB) from its heap and keep up to
    MALLOC_TRIM_THRESHOLD (256 MiB) of freed heap instead of handing it back to the OS.

    A training step frees and allocates the same MB-sized buffers every step; with glibc's defaults they go back to
    the OS and are page-faulted in again (the default GPT step: ~8,600 page faults, 66 -> 50 ms of CPU time once
    kept). Done once at import; skipped when glibc's own ``MALLOC_*`` tunables are set, when
    ``MINITENSOR_KEEP_FREED_MEMORY=0``, or without a C library that has ``mallopt``. Returns whether it applied.
    """
    if os.environ.get("MINITENSOR_KEEP_FREED_MEMORY") == "0" or any(k.startswith("MALLOC_") for k in os.environ):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's malloc.h
    return bool(mallopt(m_mmap_threshold, MALLOC_MMAP_THRESHOLD)) and bool(mallopt(m_trim_threshold, MALLOC_TRIM_THRESHOLD))


KEPT_FREED_MEMORY = keep_freed_host_memory()


class HostBackend(Backend):
    """Shared storage handling for backends whose storage is a 1-D NumPy array."""

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> TensorData:
        return TensorData(np.empty(prod(shape), dtype=dtype), shape)

    def zeros(self, shape: tuple[int, ...], dtype: np.dtype) -> TensorData:
        return TensorData(np.zeros(prod(shape), dtype=dtype), shape)

    def from_numpy(self, array: np.ndarray) -> TensorData:
        array = np.asarray(array)
        return TensorData(np.array(array.reshape(-1), order="C", copy=True), array.shape)

    def to_numpy(self, data: TensorData) -> np.ndarray:
        if data.size == 0:
            return np.zeros(data.shape, dtype=data.dtype)
        return np.array(strided_view(data), copy=True, order="C")

    def write_values(self, data: TensorData, values: Sequence[float | int | bool]) -> None:
        data.storage[: len(values)] = values


_host_types: dict[type, bool] = {}


def is_host(backend: Backend) -> bool:
    """``isinstance(backend, HostBackend)`` (NumPy storage), cached per class: an ABC isinstance is slow on a hot path."""
    kind = type(backend)
    host = _host_types.get(kind)
    if host is None:
        host = _host_types[kind] = isinstance(backend, HostBackend)
    return host


def strided_view(data: TensorData, writeable: bool = False) -> np.ndarray:
    """A NumPy array viewing ``data``'s host storage with its shape and strides (no copy)."""
    storage = data.storage
    itemsize = storage.itemsize
    strides = tuple([s * itemsize for s in data.strides])
    try:
        # A few times cheaper than as_strided; NumPy checks the view stays inside the buffer.
        view = np.ndarray(data.shape, storage.dtype, storage, 0, strides)
    except (TypeError, ValueError):
        return np.lib.stride_tricks.as_strided(storage, shape=data.shape, strides=strides, writeable=writeable)
    if not writeable:
        view.flags.writeable = False
    return view


def _rows_expanded(index: TensorData, width: int) -> TensorData:
    """The 1-D row ``index`` as a (rows, width) index that repeats each entry along dim 1 (stride 0)."""
    return TensorData.trusted(index.storage, (index.shape[0], width), (index.strides[0], 0), index.shape[0] * width)
