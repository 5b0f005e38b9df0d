"""Tensor: strided data on a backend, with autodiff and a PyTorch-familiar API."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import History, backpropagate, next_id
from .backends import Backend, backend_names, get_backend
from .backends.base import HostBackend
from .errors import BackendError, DTypeError, GradientError, HigherOrderGradError, ShapeError
from .linalg import LinalgMethods
from .tensor_arith import ArithMethods
from .tensor_data import TensorData, normalize_dim, shape_broadcast
from .tensor_index import IndexMethods
from .tensor_inplace import InplaceMethods
from .tensor_join import JoinMethods
from .tensor_math import MathMethods
from .tensor_reduce import ReduceMethods
from .tensor_shape import ShapeMethods

CONSTANT_CACHE_SIZE = 256
_constants: dict[tuple[Any, np.dtype, Any], Tensor] = {}


class Tensor(InplaceMethods, IndexMethods, MathMethods, ArithMethods, ReduceMethods, ShapeMethods, JoinMethods, LinalgMethods):
    """An n-dimensional array on one backend. Ops record history when an input ``requires_grad``.

    Methods are grouped by concept: element-wise math (tensor_math.py), ops between tensors
    (tensor_arith.py), reductions (tensor_reduce.py),
    indexing (tensor_index.py), views (tensor_shape.py), joining and copying (tensor_join.py), linear
    algebra (linalg.py); this file
    holds the core.
    """

    __array_priority__ = 1000  # make `ndarray + tensor` defer to Tensor.__radd__
    _version = 0  # bumped by every in-place write to this tensor (see tensor_inplace.py)

    def __init__(self, data: TensorData, backend: Backend, history: History | None = None, requires_grad: bool = False):
        self._data = data
        self.backend = backend
        self.history = history
        self.requires_grad = False
        if requires_grad or history is not None:
            self.requires_grad_(True)
        self.grad: Tensor | None = None
        self.unique_id = next_id()

    # --- properties ---

    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def strides(self) -> tuple[int, ...]:
        return self._data.strides

    def size(self, dim: int | None = None) -> Any:
        """The shape as a tuple, or the size of dim ``dim`` (as ``torch.Tensor.size``)."""
        if dim is None:
            return self._data.shape
        return self._data.shape[normalize_dim(dim, self.dims)]

    def numel(self) -> int:
        """Number of elements."""
        return self._data.size

    @property
    def dims(self) -> int:
        return self._data.dims

    @property
    def ndim(self) -> int:
        return self._data.dims

    def dim(self) -> int:
        """Number of dims."""
        return self._data.dims

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

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

    def _zip(self, op: str, other: Tensor, dtype: Any = None) -> Tensor:
        """Broadcast binary kernel; the result has ``dtype``, else the promoted dtype of the operands."""
        self._check_backend(other)
        a, b = self._data, other._data
        shape = a.shape if a.shape == b.shape else shape_broadcast(a.shape, b.shape)
        if dtype is None:
            dtype = a.dtype if b.dtype == a.dtype else dtypes.result_type(self, other)
        out = self.backend.empty(shape, dtype)
        self.backend.zip(op, a, b, out)
        return Tensor(out, self.backend)

    def _reduce(self, op: str, dim: int, dtype: Any = None) -> Tensor:
        shape = list(self.shape)
        shape[dim] = 1
        out = self.backend.empty(tuple(shape), self.dtype if dtype is None else dtype)
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
        dtype = a.dtype if a.dtype == b.dtype else dtypes.result_type(self, other)
        out = self.backend.empty(batch + (a.shape[-2], b.shape[-1]), dtype)
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

    def _lift(self, value: Any, dtype: Any = None) -> Tensor:
        """A Python number (or array-like) as a tensor on this backend, of ``dtype`` (default: this tensor's).

        Nonzero Python numbers on host backends come from a small cache: ops only read their inputs and nothing
        hands the lifted tensor itself to the caller, so sharing one constant is safe.
        """
        if isinstance(value, Tensor):
            return value
        dtype = self._data.dtype if dtype is None else dtype
        # Not 0 (-0.0 == 0.0 as a key) and only host storage (device arrays die with their context).
        cacheable = (type(value) is float or type(value) is int) and value != 0 and isinstance(self.backend, HostBackend)
        if cacheable:
            key = (self.backend, dtype, value)
            constant = _constants.get(key)
            if constant is not None:
                return constant
        try:
            array = np.asarray(value, dtype=dtype)
        except (TypeError, ValueError, OverflowError) as error:
            raise DTypeError(f"cannot use {type(value).__name__} {value!r} as a {dtype} operand: {error}") from error
        lifted = Tensor(self.backend.from_numpy(array), self.backend)
        if cacheable:
            if len(_constants) >= CONSTANT_CACHE_SIZE:
                _constants.clear()
            _constants[key] = lifted
        return lifted

    # --- autodiff ---

    @property
    def is_leaf(self) -> bool:
        return self.history is None

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Start (or stop) recording operations on this tensor; only float tensors can require grad."""
        if requires_grad and self._data.dtype.kind != "f":
            raise GradientError(f"only float tensors can require gradients, got a {self._data.dtype} tensor of shape {self.shape}")
        self.requires_grad = requires_grad
        return self

    def accumulate_grad(self, grad: Tensor) -> None:
        grad = grad.sum_to_shape(self.shape)
        if grad.shape != self.shape or not grad._data.is_contiguous() or grad.dtype != self.dtype:
            grad = grad.expand(*self.shape)._map("id", dtype=self.dtype)
        self.grad = grad if self.grad is None else self.grad._zip("add", grad)

    def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None, create_graph: bool = False) -> None:
        """Gradients of this tensor with respect to every leaf that requires grad, added into ``.grad``.

        The graph is freed on the way unless ``retain_graph`` (then a second backward adds again).
        """
        if create_graph:
            raise HigherOrderGradError("backward(create_graph=True): higher-order gradients are not supported")
        if not self.requires_grad:
            raise GradientError(f"backward() on a tensor of shape {self.shape} that does not require grad")
        backpropagate(self, self._root_grad(gradient), retain_graph=bool(retain_graph))

    def _root_grad(self, gradient: Any) -> Tensor:
        """``gradient`` (d out / d self) checked against this tensor; ones for a one-element tensor when None."""
        if gradient is None:
            if self._data.size != 1:
                raise GradientError(
                    f"backward() without a gradient needs a tensor with one element, got shape {self.shape}; pass gradient="
                )
            return self._lift(np.ones(self.shape))
        if not isinstance(gradient, Tensor):
            gradient = self._lift(gradient)
        if gradient.shape != self.shape:
            raise ShapeError(f"gradient of shape {gradient.shape} does not match tensor of shape {self.shape}")
        return gradient

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

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        array = self.to_numpy()
        return array if dtype is None else array.astype(dtype)

    @property
    def device(self) -> str:
        """The backend's name (minitensor's counterpart of a PyTorch device)."""
        return self.backend.name

    def item(self) -> Any:
        """The single element as a Python float, int or bool (matching the dtype)."""
        if self._data.size != 1:
            raise ShapeError(f"item() needs a tensor with one element, got shape {self.shape}")
        return self.to_numpy().reshape(-1)[0].item()

    def tolist(self) -> Any:
        return self.to_numpy().tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub":
            raise DTypeError(f"only integer tensors of one element can be used as an index, got {self.dtype}")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise ShapeError(f"the truth value of a tensor of shape {self.shape} ({self._data.size} elements) is ambiguous")
        return bool(self.item())

    def to(self, *args: Any, dtype: Any = None, backend: Any = None, device: Any = None) -> Tensor:
        """A tensor on another backend and/or of another dtype: ``to("cuda")``, ``to(mt.float64)``,
        ``to(other_tensor)``, ``to("fast", mt.float32)``; itself when nothing changes."""
        out = self
        for target in (*args, backend, device, dtype):
            if target is None:
                continue
            if isinstance(target, Tensor):
                out = out.to(target.backend, target.dtype)
            elif isinstance(target, Backend) or (isinstance(target, str) and target in (*backend_names(), "cpu")):
                chosen = get_backend(target)
                out = out if chosen is out.backend else F.ToBackend.apply(out, chosen)
            else:
                out = out.cast(dtypes.as_dtype(target))
        return out

    def cast(self, dtype: Any) -> Tensor:
        """This tensor converted to ``dtype`` (itself when it already has it)."""
        dtype = dtypes.as_dtype(dtype)
        return self if dtype == self.dtype else F.Cast.apply(self, dtype)

    type = cast

    def type_as(self, other: Tensor) -> Tensor:
        return self.cast(other.dtype)

    def float(self) -> Tensor:
        return self.cast(dtypes.float32)

    def double(self) -> Tensor:
        return self.cast(dtypes.float64)

    def long(self) -> Tensor:
        return self.cast(dtypes.int64)

    def int(self) -> Tensor:
        return self.cast(dtypes.int32)

    def bool(self) -> Tensor:
        return self.cast(dtypes.bool_)

    def __repr__(self) -> str:
        body = np.array2string(self.to_numpy(), separator=", ", prefix="tensor(")
        grad = ", requires_grad=True" if self.requires_grad else ""
        return f"tensor({body}, backend={self.backend.name!r}, dtype={self.dtype.name}{grad})"

    # --- arithmetic (Python numbers work on either side; PyTorch's type promotion) ---

    def _operand(self, value: Any) -> Tensor:
        """``value`` as a tensor operand: Python numbers are lifted to the dtype the op will compute in."""
        if isinstance(value, Tensor):
            return value
        if self._data.dtype.kind == "f" and type(value) in (float, int, bool):
            return self._lift(value)  # a Python number never widens a float tensor
        if isinstance(value, np.ndarray):
            return self._lift(value, value.dtype if value.dtype in dtypes.SUPPORTED else None)
        return self._lift(value, dtypes.result_type(self, value))

    def __add__(self, b: Any) -> Tensor:
        return F.Add.apply(self, self._operand(b))

    def __radd__(self, b: Any) -> Tensor:
        return F.Add.apply(self._operand(b), self)

    def __sub__(self, b: Any) -> Tensor:
        return self.sub(b)

    def __rsub__(self, b: Any) -> Tensor:
        return self._operand(b).sub(self)

    def __mul__(self, b: Any) -> Tensor:
        return F.Mul.apply(self, self._operand(b))

    def __rmul__(self, b: Any) -> Tensor:
        return F.Mul.apply(self._operand(b), self)

    def __truediv__(self, b: Any) -> Tensor:
        return F.Div.apply(self, self._operand(b))

    def __rtruediv__(self, b: Any) -> Tensor:
        return F.Div.apply(self._operand(b), self)

    def __floordiv__(self, b: Any) -> Tensor:
        return self.floor_divide(b)

    def __rfloordiv__(self, b: Any) -> Tensor:
        return self._operand(b).floor_divide(self)

    def __mod__(self, b: Any) -> Tensor:
        return self.remainder(b)

    def __rmod__(self, b: Any) -> Tensor:
        return self._operand(b).remainder(self)

    def __pow__(self, b: Any) -> Tensor:
        return self.pow(b)

    def __rpow__(self, b: Any) -> Tensor:
        return self._operand(b).pow(self)

    def __neg__(self) -> Tensor:
        return self.neg()

    def __pos__(self) -> Tensor:
        return self

    def __matmul__(self, b: Tensor) -> Tensor:
        return self.matmul(b)

    def __rmatmul__(self, b: Any) -> Tensor:
        return self._operand(b).matmul(self)

    def __lt__(self, b: Any) -> Tensor:
        return self.lt(b)

    def __gt__(self, b: Any) -> Tensor:
        return self.gt(b)

    def __le__(self, b: Any) -> Tensor:
        return self.le(b)

    def __ge__(self, b: Any) -> Tensor:
        return self.ge(b)

    def __eq__(self, b: Any) -> Tensor:  # type: ignore[override]
        return self.eq(b)

    def __ne__(self, b: Any) -> Tensor:  # type: ignore[override]
        return self.ne(b)

    __hash__ = object.__hash__

    def __abs__(self) -> Tensor:
        return self.abs()

    def __and__(self, b: Any) -> Tensor:
        return self.bitwise_and(b)

    __rand__ = __and__

    def __or__(self, b: Any) -> Tensor:
        return self.bitwise_or(b)

    __ror__ = __or__

    def __xor__(self, b: Any) -> Tensor:
        return self.bitwise_xor(b)

    __rxor__ = __xor__

    def __invert__(self) -> Tensor:
        return self.bitwise_not()

    def zero_grad_(self) -> None:
        self.grad = None
