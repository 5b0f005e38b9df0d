"""Tensor: strided data on a backend, with autodiff and a PyTorch-familiar API."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import tensor_functions as F
from . import tensor_shape
from .autodiff import History, backpropagate, next_id
from .backends import Backend, get_backend
from .backends.base import HostBackend
from .errors import BackendError, GradientError, ShapeError
from .tensor_data import TensorData, normalize_dim, shape_broadcast
from .tensor_shape import matmul

CONSTANT_CACHE_SIZE = 256
_constants: dict[tuple[Any, np.dtype, float], Tensor] = {}


class Tensor:
    """An n-dimensional array on one backend. Ops record history when an input ``requires_grad``."""

    __array_priority__ = 1000  # make `ndarray + tensor` defer to Tensor.__radd__

    def __init__(self, data: TensorData, backend: Backend, history: History | None = None, requires_grad: bool = False):
        self._data = data
        self.backend = backend
        self.history = history
        self.requires_grad = requires_grad or history is not None
        self.grad: Tensor | None = None
        self.unique_id = next_id()

    # --- properties ---

    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def strides(self) -> tuple[int, ...]:
        return self._data.strides

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def dims(self) -> int:
        return self._data.dims

    ndim = dims

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def T(self) -> Tensor:
        """All dims reversed (the transpose of a matrix)."""
        return self.permute(*reversed(range(self.dims)))

    def __len__(self) -> int:
        if self.dims == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # --- raw kernel calls: no history (used by Functions) ---

    def _view_of(self, data: TensorData) -> Tensor:
        return Tensor(data, self.backend)

    def _zeros(self, shape: Sequence[int]) -> Tensor:
        return Tensor(self.backend.zeros(tuple(shape), self.dtype), self.backend)

    def _map(self, op: str, dtype: Any = None) -> Tensor:
        out = self.backend.empty(self.shape, self.dtype if dtype is None else np.dtype(dtype))
        self.backend.map(op, self._data, out)
        return Tensor(out, self.backend)

    def _zip(self, op: str, other: Tensor) -> Tensor:
        self._check_backend(other)
        a, b = self._data, other._data
        shape = a.shape if a.shape == b.shape else shape_broadcast(a.shape, b.shape)
        dtype = a.dtype
        if b.dtype != dtype:
            dtype = np.result_type(dtype, b.dtype)
        out = self.backend.empty(shape, dtype)
        self.backend.zip(op, a, b, out)
        return Tensor(out, self.backend)

    def _reduce(self, op: str, dim: int) -> Tensor:
        shape = list(self.shape)
        shape[dim] = 1
        out = self.backend.empty(tuple(shape), self.dtype)
        self.backend.reduce(op, self._data, dim, out)
        return Tensor(out, self.backend)

    def _matmul(self, other: Tensor) -> Tensor:
        """Batched matmul of two tensors with >= 2 dims (batch dims broadcast)."""
        self._check_backend(other)
        a, b = self._data, other._data
        if a.shape[-1] != b.shape[-2]:
            raise ShapeError(f"matmul inner dims differ: {a.shape} @ {b.shape} ({a.shape[-1]} != {b.shape[-2]})")
        batch = shape_broadcast(a.shape[:-2], b.shape[:-2])
        while a.dims < len(batch) + 2:
            a = a.unsqueeze(0)
        while b.dims < len(batch) + 2:
            b = b.unsqueeze(0)
        out = self.backend.empty(batch + (a.shape[-2], b.shape[-1]), np.result_type(a.dtype, b.dtype))
        self.backend.matmul(a, b, out)
        return Tensor(out, self.backend)

    def _to_backend(self, backend: Backend) -> Tensor:
        return Tensor(backend.from_numpy(self.to_numpy()), backend)

    def _check_backend(self, other: Tensor) -> None:
        if other.backend is not self.backend:
            raise BackendError(
                f"tensors on different backends ({self.backend.name!r} {self.shape} and {other.backend.name!r} "
                f"{other.shape}) in one op; move one with .to()"
            )

    def _lift(self, value: Any) -> Tensor:
        """A Python number (or array-like) as a tensor on this backend with this dtype.

        Nonzero Python numbers on host backends come from a small cache: ops only read their inputs and nothing
        hands the lifted tensor itself to the caller, so sharing one constant is safe.
        """
        if isinstance(value, Tensor):
            return value
        # Not 0 (-0.0 == 0.0 as a key) and only host storage (device arrays die with their context).
        cacheable = (type(value) is float or type(value) is int) and value != 0 and isinstance(self.backend, HostBackend)
        if cacheable:
            key = (self.backend, self._data.dtype, value)
            constant = _constants.get(key)
            if constant is not None:
                return constant
        lifted = Tensor(self.backend.from_numpy(np.asarray(value, dtype=self.dtype)), self.backend)
        if cacheable:
            if len(_constants) >= CONSTANT_CACHE_SIZE:
                _constants.clear()
            _constants[key] = lifted
        return lifted

    # --- autodiff ---

    def is_leaf(self) -> bool:
        return self.history is None

    def requires_grad_(self, flag: bool = True) -> Tensor:
        self.requires_grad = flag
        return self

    def accumulate_grad(self, grad: Tensor) -> None:
        grad = grad.sum_to_shape(self.shape)
        if grad.shape != self.shape or not grad._data.is_contiguous() or grad.dtype != self.dtype:
            grad = grad.expand(*self.shape)._map("id", dtype=self.dtype)
        self.grad = grad if self.grad is None else self.grad._zip("add", grad)

    def backward(self, grad: Tensor | None = None) -> None:
        """Gradients of this tensor with respect to every leaf that requires grad, added into ``.grad``."""
        if not self.requires_grad:
            raise GradientError(f"backward() on a tensor of shape {self.shape} that does not require grad")
        if grad is None:
            if self.size != 1:
                raise GradientError(
                    f"backward() without a gradient needs a tensor with one element, got shape {self.shape}; pass grad="
                )
            grad = self._lift(np.ones(self.shape))
        elif grad.shape != self.shape:
            raise ShapeError(f"gradient of shape {grad.shape} does not match tensor of shape {self.shape}")
        backpropagate(self, grad)

    def detach(self) -> Tensor:
        """The same data, cut from the graph."""
        return Tensor(self._data, self.backend)

    def sum_to_shape(self, shape: tuple[int, ...]) -> Tensor:
        """Sum a broadcast gradient back down to ``shape`` (no history)."""
        if self.shape == shape:
            return self
        out = self
        extra = out.dims - len(shape)
        for dim in range(out.dims):
            if dim < extra or (shape[dim - extra] == 1 and out.shape[dim] != 1):
                out = out._reduce("sum", dim)
        return out._view_of(out._data.view(*shape)) if out.dims != len(shape) else out

    # --- conversion ---

    def to_numpy(self) -> np.ndarray:
        """A host copy as a NumPy array of the same shape and dtype."""
        return self.backend.to_numpy(self._data)

    def numpy(self) -> np.ndarray:
        return self.to_numpy()

    def item(self) -> float:
        if self.size != 1:
            raise ShapeError(f"item() needs a tensor with one element, got shape {self.shape}")
        return float(self.to_numpy().reshape(-1)[0])

    def tolist(self) -> Any:
        return self.to_numpy().tolist()

    def __float__(self) -> float:
        return self.item()

    def __bool__(self) -> bool:
        return bool(self.item())

    def to(self, target: Any) -> Tensor:
        """Move to a backend (name or Backend) or cast to a dtype (``"float32"``, ``"float64"``, NumPy dtype)."""
        from .creation import as_dtype

        if isinstance(target, (Backend,)) or (isinstance(target, str) and target not in ("float32", "float64")):
            backend = get_backend(target)
            return self if backend is self.backend else F.ToBackend.apply(self, backend)
        return self.cast(as_dtype(target))

    def cast(self, dtype: Any) -> Tensor:
        """This tensor converted to ``dtype`` (itself when it already has it)."""
        dtype = np.dtype(dtype)
        return self if dtype == self.dtype else F.Cast.apply(self, dtype)

    def float(self) -> Tensor:
        return self.cast(np.float32)

    def double(self) -> Tensor:
        return self.cast(np.float64)

    def __repr__(self) -> str:
        body = np.array2string(self.to_numpy(), separator=", ", prefix="tensor(")
        grad = ", requires_grad=True" if self.requires_grad else ""
        return f"tensor({body}, backend={self.backend.name!r}, dtype={self.dtype.name}{grad})"

    # --- arithmetic (Python numbers work on either side) ---

    def __add__(self, b: Any) -> Tensor:
        return F.Add.apply(self, self._lift(b))

    def __radd__(self, b: Any) -> Tensor:
        return F.Add.apply(self._lift(b), self)

    def __sub__(self, b: Any) -> Tensor:
        return F.Sub.apply(self, self._lift(b))

    def __rsub__(self, b: Any) -> Tensor:
        return F.Sub.apply(self._lift(b), self)

    def __mul__(self, b: Any) -> Tensor:
        return F.Mul.apply(self, self._lift(b))

    def __rmul__(self, b: Any) -> Tensor:
        return F.Mul.apply(self._lift(b), self)

    def __truediv__(self, b: Any) -> Tensor:
        return F.Div.apply(self, self._lift(b))

    def __rtruediv__(self, b: Any) -> Tensor:
        return F.Div.apply(self._lift(b), self)

    def __pow__(self, b: Any) -> Tensor:
        return F.Pow.apply(self, self._lift(b))

    def __rpow__(self, b: Any) -> Tensor:
        return F.Pow.apply(self._lift(b), self)

    def __neg__(self) -> Tensor:
        return F.Neg.apply(self)

    def __matmul__(self, b: Tensor) -> Tensor:
        return matmul(self, b)

    def __rmatmul__(self, b: Any) -> Tensor:
        return matmul(self._lift(b), self)

    def __lt__(self, b: Any) -> Tensor:
        return F.LT.apply(self, self._lift(b))

    def __gt__(self, b: Any) -> Tensor:
        return F.GT.apply(self, self._lift(b))

    def __le__(self, b: Any) -> Tensor:
        return 1.0 - F.GT.apply(self, self._lift(b))

    def __ge__(self, b: Any) -> Tensor:
        return 1.0 - F.LT.apply(self, self._lift(b))

    def __eq__(self, b: Any) -> Tensor:  # type: ignore[override]
        return F.EQ.apply(self, self._lift(b))

    def __ne__(self, b: Any) -> Tensor:  # type: ignore[override]
        return 1.0 - F.EQ.apply(self, self._lift(b))

    __hash__ = object.__hash__

    def __abs__(self) -> Tensor:
        return F.Abs.apply(self)

    # --- element-wise functions ---

    def exp(self) -> Tensor:
        return F.Exp.apply(self)

    def log(self) -> Tensor:
        return F.Log.apply(self)

    def sigmoid(self) -> Tensor:
        return F.Sigmoid.apply(self)

    def relu(self) -> Tensor:
        return F.ReLU.apply(self)

    def tanh(self) -> Tensor:
        return F.Tanh.apply(self)

    def abs(self) -> Tensor:
        return F.Abs.apply(self)

    def sqrt(self) -> Tensor:
        return F.Sqrt.apply(self)

    def inv(self) -> Tensor:
        return F.Inv.apply(self)

    def maximum(self, b: Any) -> Tensor:
        return F.Maximum.apply(self, self._lift(b))

    def minimum(self, b: Any) -> Tensor:
        return -F.Maximum.apply(-self, -self._lift(b))

    def is_close(self, b: Any) -> Tensor:
        """1.0 where |self - b| < 1e-2, else 0.0."""
        return F.IsClose.apply(self, self._lift(b))

    # --- reductions ---

    def _dims_of(self, dim: int | Sequence[int] | None) -> list[int]:
        if dim is None:
            return list(range(self.dims))
        dims = [dim] if isinstance(dim, int) else list(dim)
        return sorted({normalize_dim(d, self.dims) for d in dims})

    def _reduce_fn(self, fn: type[F.TensorFunction], dim: int | Sequence[int] | None, keepdim: bool) -> Tensor:
        dims = self._dims_of(dim)
        if dim is None and self.dims > 1 and not keepdim:
            # Full reduction: one pass over a flat copy is cheaper than one pass per dim.
            return fn.apply(self.contiguous().view(self.size), 0).view()
        out = self
        for d in dims:
            out = fn.apply(out, d)
        if keepdim:
            return out
        return out.view(*[s for i, s in enumerate(out.shape) if i not in dims])

    def sum(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        """Sum over ``dim`` (all dims when None, giving a 0-d tensor)."""
        return self._reduce_fn(F.Sum, dim, keepdim)

    def mean(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        count = 1
        for d in self._dims_of(dim):
            count *= self.shape[d]
        return self.sum(dim, keepdim) / float(count)

    def max(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        """Largest value over ``dim`` (values only, like ``torch.amax``); ties share the gradient."""
        if self.size == 0:
            raise ShapeError(f"max() of an empty tensor of shape {self.shape}")
        return self._reduce_fn(F.Max, dim, keepdim)

    def min(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        return -((-self).max(dim, keepdim))

    def all(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        """1.0 where every element over ``dim`` is nonzero, else 0.0."""
        if self.size == 0:
            return Tensor(self.backend.from_numpy(np.ones((), dtype=self.dtype)), self.backend)
        return (self != 0.0).min(dim, keepdim)

    # --- shape and layout (defined in tensor_shape.py) ---

    permute = tensor_shape.permute
    transpose = tensor_shape.transpose
    view = tensor_shape.view
    reshape = tensor_shape.reshape
    contiguous = tensor_shape.contiguous
    expand = tensor_shape.expand
    unsqueeze = tensor_shape.unsqueeze
    squeeze = tensor_shape.squeeze
    flatten = tensor_shape.flatten
    __getitem__ = tensor_shape.getitem
    __iter__ = tensor_shape.iterate

    def zero_grad_(self) -> None:
        self.grad = None
