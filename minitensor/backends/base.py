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

from abc import ABC, abstractmethod

import numpy as np

from ..tensor_data import TensorData, prod


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

    def synchronize(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Wait for queued work (no-op on CPU backends)."""

    def __repr__(self) -> str:
        return f"<minitensor backend {self.name!r}>"


class HostBackend(Backend):
    """Shared storage handling for backends whose storage is a 1-D NumPy array."""

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> TensorData:
        return TensorData(np.empty(prod(shape), dtype=dtype), shape)

    def from_numpy(self, array: np.ndarray) -> TensorData:
        array = np.asarray(array)
        return TensorData(np.array(array.reshape(-1), order="C", copy=True), array.shape)

    def to_numpy(self, data: TensorData) -> np.ndarray:
        if data.size == 0:
            return np.zeros(data.shape, dtype=data.dtype)
        return np.array(strided_view(data), copy=True, order="C")


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
