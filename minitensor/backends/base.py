"""The backend interface: four kernels plus allocation and host transfer.

A backend never sees autodiff. Kernels write into a preallocated ``out`` TensorData, which may itself
be a strided view (kernels must honour its strides). Inputs are broadcast to ``out``'s shape by
:func:`minitensor.tensor_data.broadcast_index` rules. Ops are named by the keys of
:data:`minitensor.operators.UNARY_OPS`, :data:`~minitensor.operators.BINARY_OPS` and
:data:`~minitensor.operators.REDUCE_OPS`. ``out`` may have another dtype than the inputs: the
kernel converts on store (this is how ``map("id", ...)`` casts and copies).
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
