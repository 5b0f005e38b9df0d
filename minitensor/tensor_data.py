"""Strided storage: a flat buffer plus shape and strides.

Element ``index`` (a tuple of ints, one per dim) lives at ``storage[sum(index[i] * strides[i])]``.
Permute, view and broadcast only build new shape/stride tuples over the same storage.

The index functions at the top work on NumPy int arrays with plain loops and no Python objects,
so the ``fast`` and ``cuda`` backends compile these exact functions with Numba.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .errors import IndexOutOfRangeError, NonContiguousError, PermutationError, ShapeError

MAX_DIMS = 32

Shape = tuple[int, ...]
Strides = tuple[int, ...]
DTYPES: dict[str, np.dtype] = {"float32": np.dtype(np.float32), "float64": np.dtype(np.float64)}


# --- index math (Numba-compilable) --------------------------------------------------------------


def index_to_position(index: Any, strides: Any) -> int:
    """Storage position of a multidimensional index: sum(index[i] * strides[i])."""
    position = 0
    for i in range(len(index)):
        position += index[i] * strides[i]
    return position


def to_index(ordinal: int, shape: Any, out_index: Any) -> None:
    """Write into ``out_index`` the index of the ``ordinal``-th element in row-major order of ``shape``."""
    cur = ordinal + 0
    for i in range(len(shape) - 1, -1, -1):
        size = shape[i]
        out_index[i] = cur % size
        cur = cur // size


def broadcast_index(big_index: Any, big_shape: Any, shape: Any, out_index: Any) -> None:
    """Map an index of the broadcast ``big_shape`` to the index of the smaller ``shape``.

    Dims are aligned on the right; a dim of size 1 in ``shape`` always maps to 0.
    """
    offset = len(big_shape) - len(shape)
    for i in range(len(shape)):
        if shape[i] > 1:
            out_index[i] = big_index[i + offset]
        else:
            out_index[i] = 0


# --- shape helpers (plain Python) ----------------------------------------------------------------


def shape_broadcast(shape1: Sequence[int], shape2: Sequence[int]) -> Shape:
    """NumPy broadcasting of two shapes; raises ShapeError naming both when they are incompatible."""
    n = len(shape1) if len(shape1) > len(shape2) else len(shape2)
    a = (1,) * (n - len(shape1)) + tuple(shape1)
    b = (1,) * (n - len(shape2)) + tuple(shape2)
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ShapeError(f"shapes {tuple(shape1)} and {tuple(shape2)} cannot be broadcast together")
    return tuple(out)


def strides_from_shape(shape: Sequence[int]) -> Strides:
    """Row-major (C-contiguous) strides, in elements."""
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= size if size > 0 else 1
    return tuple(reversed(strides))


MAX_EXTENT = (2**63 - 1) // 16
"""The most elements the non-zero dims of a shape may multiply to: every stride and byte count (16-byte elements
at most) then fits in int64, so the tensor can exist in NumPy; a zero-size tensor's other dims count too."""


def check_shape(shape: Shape) -> None:
    """Raise ShapeError for a negative size, or for dims (zeros left out) whose product exceeds MAX_EXTENT."""
    if shape and min(shape) < 0:
        raise ShapeError(f"negative size in shape {shape}")
    extent = math.prod(shape) or math.prod(s for s in shape if s)  # the generator only for zero-size shapes
    if extent > MAX_EXTENT:
        raise ShapeError(f"shape {shape} is too large: its non-zero dims multiply to {extent} elements, over the "
                         f"{MAX_EXTENT} whose strides and byte counts fit in int64")


def size_arg(size: Sequence[Any]) -> Shape:
    """A size given as ints or as one sequence (``zeros(2, 3)``, ``zeros((2, 3))``), checked by check_shape; ints
    only (2.5 is an error, not a size of 2)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    try:
        shape = tuple(operator.index(s) for s in size)
    except TypeError as error:
        raise ShapeError(f"a shape is a sequence of ints, got {tuple(size)!r}") from error
    check_shape(shape)
    return shape


def strided_extent(size: Sequence[Any], stride: Sequence[Any]) -> tuple[Shape, Strides, int]:
    """(shape, strides, storage length) of ``empty_strided(size, stride)``: exactly those element strides
    (non-negative) over 1 + sum((size_i - 1) * stride_i) elements (0 for an empty shape)."""
    shape = size_arg((size,))
    strides = tuple(operator.index(s) for s in stride)
    if len(strides) != len(shape):
        raise ShapeError(f"empty_strided(): dimensionality of sizes ({len(shape)}) must match dimensionality of "
                         f"strides ({len(strides)})")
    if any(s < 0 for s in strides):
        raise ShapeError(f"empty_strided(): negative strides are not supported, got {strides} for size {shape}")
    return shape, strides, 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))


@functools.lru_cache(maxsize=1024)
def _contiguous_strides(shape: Shape) -> Strides:
    """strides_from_shape, cached: TensorData asks for the same few shapes on every op."""
    return strides_from_shape(shape)


def prod(shape: Iterable[int]) -> int:
    """Number of elements of a shape (1 for the 0-d shape ())."""
    return math.prod(shape)


_new = object.__new__


def normalize_dim(dim: int, dims: int) -> int:
    """Turn a possibly negative dim into 0..dims-1, or raise IndexOutOfRangeError."""
    if not -dims <= dim < dims:
        raise IndexOutOfRangeError(f"dim {dim} is out of range for a tensor with {dims} dims")
    return dim % dims


class TensorData:
    """Storage plus shape and strides. ``storage`` is a 1-D NumPy array or a backend device array."""

    _shape_array: np.ndarray | None = None
    _strides_array: np.ndarray | None = None
    _contiguous: bool | None = None  # is_contiguous(), once asked (shape and strides never change)

    def __init__(self, storage: Any, shape: Sequence[int], strides: Sequence[int] | None = None):
        self._storage = self.storage = storage
        self.dtype: np.dtype = storage.dtype
        self.shape: Shape = tuple(map(int, shape))
        self.dims = len(self.shape)
        if self.dims > MAX_DIMS:
            raise ShapeError(f"at most {MAX_DIMS} dims are supported, got shape {self.shape}")
        check_shape(self.shape)
        self.strides: Strides = _contiguous_strides(self.shape) if strides is None else tuple(map(int, strides))
        if len(self.strides) != self.dims:
            raise ShapeError(f"strides {self.strides} do not match shape {self.shape}")
        self.size = math.prod(self.shape)

    @classmethod
    def trusted(cls, storage: Any, shape: Shape, strides: Strides | None = None, size: int | None = None) -> TensorData:
        """The same TensorData without the checks, for callers that built ``shape`` (a tuple of non-negative ints,
        at most MAX_DIMS) and ``strides`` (a tuple of ints, one per dim) themselves: the hot path of every op."""
        data = _new(cls)
        data._storage = data.storage = storage
        data.dtype = storage.dtype
        data.shape = shape
        data.dims = len(shape)
        data.strides = _contiguous_strides(shape) if strides is None else strides
        data.size = math.prod(shape) if size is None else size
        return data

    @property
    def shape_array(self) -> np.ndarray:
        """Shape as an int64 array, the form kernels take (made on first use)."""
        if self._shape_array is None:
            self._shape_array = np.array(self.shape, dtype=np.int64)
        return self._shape_array

    @property
    def strides_array(self) -> np.ndarray:
        """Strides as an int64 array, the form kernels take (made on first use)."""
        if self._strides_array is None:
            self._strides_array = np.array(self.strides, dtype=np.int64)
        return self._strides_array

    def is_contiguous(self) -> bool:
        """True when strides are row-major for the shape (size-1 dims may have any stride; empty data always is)."""
        contiguous = self._contiguous
        if contiguous is None:
            contiguous = self._contiguous = self._row_major()
        return contiguous

    def _row_major(self) -> bool:
        if self.size == 0:
            return True
        expected = 1
        for size, stride in zip(reversed(self.shape), reversed(self.strides)):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    def index(self, index: Sequence[int]) -> int:
        """Storage position of ``index``; raises IndexOutOfRangeError naming the index and shape."""
        index = tuple(int(i) for i in index)
        if len(index) != self.dims:
            raise IndexOutOfRangeError(f"index {index} has {len(index)} entries, tensor of shape {self.shape} needs {self.dims}")
        for i, size in zip(index, self.shape):
            if not 0 <= i < size:
                raise IndexOutOfRangeError(f"index {index} is out of range for shape {self.shape}")
        return index_to_position(index, self.strides)

    def indices(self) -> Iterable[Shape]:
        """All indices in row-major order."""
        out = np.zeros(self.dims, dtype=np.int64)
        for ordinal in range(self.size):
            to_index(ordinal, self.shape_array, out)
            yield tuple(int(i) for i in out)

    def get(self, index: Sequence[int]) -> float:
        return float(self._storage[self.index(index)])

    def set(self, index: Sequence[int], value: float) -> None:
        self._storage[self.index(index)] = value

    # --- stride changes: all share storage ---

    def permute(self, *order: int) -> TensorData:
        """Reorder dims: new dim i is old dim order[i]."""
        if sorted(order) != list(range(self.dims)):
            raise PermutationError(f"permutation {tuple(order)} is not a rearrangement of range({self.dims}) for shape {self.shape}")
        shape, strides = self.shape, self.strides
        return TensorData.trusted(self._storage, tuple([shape[o] for o in order]), tuple([strides[o] for o in order]), self.size)

    def view(self, *shape: int) -> TensorData:
        """Same storage read row-major as ``shape`` (one entry may be -1); data must be contiguous."""
        shape = infer_shape(shape, self.size, self.shape)
        if not self.is_contiguous():
            raise NonContiguousError(
                f"cannot view non-contiguous tensor of shape {self.shape} with strides {self.strides} as {shape}; call .contiguous() first"
            )
        return TensorData.trusted(self._storage, shape, None, self.size)

    def expand(self, shape: Sequence[int]) -> TensorData:
        """Broadcast to ``shape`` by giving stretched and new dims stride 0."""
        shape = tuple(shape)
        pad = len(shape) - self.dims
        strides = [0] * pad
        if pad < 0:
            raise ShapeError(f"cannot expand shape {self.shape} to {shape}")
        for size, own, stride in zip(shape[pad:], self.shape, self.strides):
            if own == size:
                strides.append(stride)
            elif own == 1:
                strides.append(0)
            else:
                raise ShapeError(f"cannot expand shape {self.shape} to {shape}")
        return TensorData(self._storage, shape, strides)

    def unsqueeze(self, dim: int) -> TensorData:
        """Insert a size-1 dim at ``dim``."""
        dim = normalize_dim(dim, self.dims + 1)
        shape = self.shape[:dim] + (1,) + self.shape[dim:]
        strides = self.strides[:dim] + (0,) + self.strides[dim:]
        return TensorData(self._storage, shape, strides)

    def slice(self, key: tuple[Any, ...]) -> TensorData:
        """Basic indexing with ints, slices (positive step) and one Ellipsis; a view into the same storage."""
        if Ellipsis in key:
            at = key.index(Ellipsis)
            fill = self.dims - (len(key) - 1)
            key = key[:at] + (slice(None),) * fill + key[at + 1 :]
        if len(key) > self.dims:
            raise IndexOutOfRangeError(f"too many indices ({len(key)}) for tensor of shape {self.shape}")
        offset = 0
        shape: list[int] = []
        strides: list[int] = []
        for dim, (size, stride) in enumerate(zip(self.shape, self.strides)):
            k = key[dim] if dim < len(key) else slice(None)
            if isinstance(k, slice):
                start, stop, step = k.indices(size)
                if step <= 0:
                    raise IndexOutOfRangeError(f"slice step must be positive, got {step} for dim {dim}")
                count = max(0, (stop - start + step - 1) // step)
                offset += start * stride if count else 0
                shape.append(count)
                strides.append(stride * step)
            else:
                i = int(k)
                if not -size <= i < size:
                    raise IndexOutOfRangeError(f"index {i} is out of range for dim {dim} of size {size} (shape {self.shape})")
                offset += (i % size) * stride
        return TensorData(self._storage[offset:], shape, strides)

    def __repr__(self) -> str:
        return f"TensorData(shape={self.shape}, strides={self.strides}, dtype={self.dtype})"


def infer_shape(shape: Sequence[Any], size: int, old_shape: Sequence[int]) -> Shape:
    """Resolve a view shape (accepting one tuple argument and one -1) against ``size`` elements."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise ShapeError(f"only one dim may be -1 in view shape {shape}")
    if -1 in shape:
        known = prod(s for s in shape if s != -1)
        if known == 0 or size % known != 0:
            raise ShapeError(f"cannot view {size} elements of shape {tuple(old_shape)} as {shape}")
        shape = tuple(size // known if s == -1 else s for s in shape)
    if prod(shape) != size or any(s < 0 for s in shape):
        raise ShapeError(f"cannot view shape {tuple(old_shape)} ({size} elements) as {shape} ({prod(shape)} elements)")
    check_shape(shape)
    return shape


def storage_address(storage: Any) -> int | None:
    """The address of a storage's first element (host arrays, CUDA arrays and the simulator's), or None."""
    for name in ("__cuda_array_interface__", "__array_interface__"):
        interface = getattr(storage, name, None)
        if interface is not None:
            return int(interface["data"][0])
    return None
