"""Tensor: strided data on a backend, with autodiff and a PyTorch-familiar API (the core; methods by concept in the
mixin modules listed in the class docstring)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import History, _ids
from .backends import Backend, backend_names, get_backend
from .backends.base import is_host
from .devices import Device, device_of
from .errors import BackendError, DTypeError, GradientError, ShapeError
from .linalg import LinalgMethods
from .linalg_cholesky import CholeskyMethods
from .linalg_lstsq import DecompMethods
from .linalg_methods import FactorMethods
from .linalg_solve import SolveMethods
from .printing import array2string_options
from .tensor_arith import ArithMethods
from .tensor_autograd import AutogradMethods
from .tensor_broadcast import BroadcastMethods
from .tensor_build import BuildMethods
from .tensor_compare import CompareMethods
from .tensor_copies import CopyMethods
from .tensor_data import TensorData, normalize_dim, shape_broadcast
from .tensor_factory import FactoryMethods
from .tensor_fill_random import FillRandomMethods
from .tensor_igamma import IgammaMethods
from .tensor_index import IndexMethods
from .tensor_index_write import IndexWriteMethods
from .tensor_inplace import InplaceMethods
from .tensor_inplace_extra import InplaceExtraMethods
from .tensor_join import JoinMethods
from .tensor_math import MathMethods
from .tensor_methods_extra import ExtraMethods
from .tensor_misc import MiscMethods
from .tensor_numeric import NumericMethods
from .tensor_operators import OperatorMethods
from .tensor_order import OrderMethods
from .tensor_pointwise import PointwiseMethods
from .tensor_products import ProductMethods
from .tensor_put import PutMethods
from .tensor_random import RandomMethods
from .tensor_reduce import ReduceMethods
from .tensor_scatter import ScatterMethods
from .tensor_search import SearchMethods
from .tensor_select import SelectMethods
from .tensor_shape import ShapeMethods
from .tensor_softmax import SoftmaxMethods
from .tensor_stats import StatsMethods
from .tensor_storage import StorageMethods
from .tensor_strided import StridedMethods
from .tensor_trig import TrigMethods

CONSTANT_CACHE_SIZE = 256
_constants: dict[tuple[Any, np.dtype, Any, float], Tensor] = {}


class Tensor(
    AutogradMethods, FactoryMethods, OperatorMethods, InplaceMethods, IndexMethods, MathMethods, ArithMethods, PointwiseMethods,
    CompareMethods, ReduceMethods, StatsMethods, SoftmaxMethods, OrderMethods, SelectMethods, SearchMethods, ShapeMethods,
    BroadcastMethods, JoinMethods, LinalgMethods, ProductMethods, SolveMethods, CholeskyMethods, DecompMethods, BuildMethods,
    IndexWriteMethods, ScatterMethods, MiscMethods, TrigMethods, NumericMethods, RandomMethods, PutMethods, StridedMethods,
    IgammaMethods, FactorMethods, InplaceExtraMethods, FillRandomMethods, ExtraMethods, StorageMethods, CopyMethods,
):
    """An n-dimensional array on one backend. Ops record history when an input ``requires_grad``.

    Methods are grouped by concept: autograd state and entry points (tensor_autograd.py), the ``new_*`` factories
    (tensor_factory.py), Python operators (tensor_operators.py), in-place writes (tensor_inplace.py), element-wise
    math (tensor_math.py; inverse trigonometric and hyperbolic functions: tensor_trig.py), arithmetic between tensors
    and its composites (tensor_arith.py), element-wise composites
    (frac, copysign, fmax, ...: tensor_pointwise.py), comparisons, logical and bitwise ops, selection and closeness
    (tensor_compare.py), reductions (tensor_reduce.py), NaN-ignoring and paired reductions (tensor_stats.py), softmax
    and log_softmax (tensor_softmax.py), scans and sorting (tensor_order.py), splitting, rotation, flat indexing and
    running extremes (tensor_select.py), indexing (tensor_index.py), views (tensor_shape.py; unfold, H, mH, adjoint:
    tensor_strided.py), broadcasting and grids
    (tensor_broadcast.py), joining and copying (tensor_join.py), linear algebra (linalg.py), its composite products
    (trace, kron, addmm, ...: tensor_products.py), determinants and inverses (det, slogdet, logdet, inverse:
    linalg_solve.py), the Cholesky factor and renorm (linalg_cholesky.py), qr, svd and pinverse (linalg_lstsq.py),
    reducing scatters and embedding copies (scatter_reduce, slice_scatter, ...: tensor_scatter.py), mode and histc
    (tensor_misc.py), igamma and igammac (tensor_igamma.py), the factorization methods lu, lu_solve, geqrf, orgqr,
    ormqr (linalg_methods.py), gcd, frexp, i0, mvlgamma
    and the counting methods histogram, unique_consecutive, index_reduce (tensor_numeric.py), storage-level methods
    (resize_, set_, data_ptr, new, apply_, DLPack export: tensor_storage.py), as_strided_, as_strided_scatter and the
    unsafe splits (tensor_copies.py); this file holds the core: properties, raw kernel calls, deep copy and
    conversion.
    """

    __array_priority__ = 1000  # make `ndarray + tensor` defer to Tensor.__radd__
    _counter: list[int] | None = None  # the storage's version counter, shared by views (see tensor_inplace.py)
    _base: Tensor | None = None  # the tensor whose storage this view shares (None for a tensor owning its storage)

    def __init__(self, data: TensorData, backend: Backend, history: History | None = None, requires_grad: bool = False):
        self._data = data
        self.backend = backend
        self.history = history
        self._requires_grad = False
        if requires_grad or history is not None:
            self.requires_grad_(True)
        self.grad: Tensor | None = None
        self.unique_id = next(_ids)

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

    def stride(self, dim: int | None = None) -> Any:
        """The strides (in elements) as a tuple, or the stride of dim ``dim`` (as ``torch.Tensor.stride``)."""
        if dim is None:
            return self._data.strides
        return self._data.strides[normalize_dim(dim, self.dims)]

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

    nelement = numel
    ndimension = dim

    def element_size(self) -> int:
        """Bytes per element."""
        return self._data.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._data.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """numel() * element_size() (of the elements seen, as PyTorch: an expanded view counts every element)."""
        return self._data.size * self._data.dtype.itemsize

    # --- raw kernel calls: no history (used by Functions) ---

    def _view_of(self, data: TensorData) -> Tensor:
        """``data`` (new storage, or a view nobody writes through) as a tensor on this backend, without history."""
        return _result(data, self.backend)

    def _alias(self, data: TensorData) -> Tensor:
        """A view ``data`` of this tensor's storage: it shares the storage's version counter."""
        out = _result(data, self.backend)
        counter = self._counter
        if counter is None:
            counter = self._counter = [0]
        out._counter = counter
        out._base = self._base if self._base is not None else self
        return out

    @property
    def _version(self) -> int:
        """How many in-place writes this tensor's storage has had (``torch.Tensor._version``)."""
        counter = self._counter
        return 0 if counter is None else counter[0]

    def _bump_version(self) -> None:
        """Count an in-place write into the storage (every view sees it)."""
        counter = self._counter
        if counter is None:
            self._counter = [1]
        else:
            counter[0] += 1

    def _zeros(self, shape: Sequence[int]) -> Tensor:
        return Tensor(self.backend.zeros(tuple(shape), self.dtype), self.backend)

    def _map(self, op: str, dtype: Any = None) -> Tensor:
        a, backend = self._data, self.backend
        out = backend.empty(a.shape, a.dtype if dtype is None else np.dtype(dtype))
        backend.map(op, a, out)
        return _result(out, backend)

    def _zip(self, op: str, other: Tensor, dtype: Any = None) -> Tensor:
        """Broadcast binary kernel; the result has ``dtype``, else the promoted dtype of the operands."""
        backend = self.backend
        if other.backend is not backend:
            self._check_backend(other)
        a, b = self._data, other._data
        shape = a.shape if a.shape == b.shape else shape_broadcast(a.shape, b.shape)
        if dtype is None:
            dtype = a.dtype if b.dtype == a.dtype else dtypes.result_type(self, other)
        out = backend.empty(shape, dtype)
        backend.zip(op, a, b, out)
        return _result(out, backend)

    def _reduce(self, op: str, dim: int, dtype: Any = None) -> Tensor:
        a, backend = self._data, self.backend
        shape = list(a.shape)
        shape[dim] = 1
        out = backend.empty(tuple(shape), a.dtype if dtype is None else dtype)
        backend.reduce(op, a, dim, out)
        return _result(out, backend)

    def _matmul(self, other: Tensor) -> Tensor:
        """Batched matmul of two tensors with >= 2 dims (batch dims broadcast)."""
        self._check_backend(other)
        a, b = self._data, other._data
        if a.shape[-1] != b.shape[-2]:
            raise ShapeError(f"matmul inner dims differ: {a.shape} @ {b.shape} ({a.shape[-1]} != {b.shape[-2]})")
        batch = () if a.dims == b.dims == 2 else shape_broadcast(a.shape[:-2], b.shape[:-2])
        while a.dims < len(batch) + 2:
            a = a.unsqueeze(0)
        while b.dims < len(batch) + 2:
            b = b.unsqueeze(0)
        dtype = a.dtype if a.dtype == b.dtype else dtypes.result_type(self, other)
        out = self.backend.empty(batch + (a.shape[-2], b.shape[-1]), dtype)
        self.backend.matmul(a, b, out)
        return _result(out, self.backend)

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

        Python numbers on host backends come from a small cache here, on other backends from the backend's own
        :meth:`~minitensor.backends.base.Backend.constant` (cuda: cached on the device): ops only read their inputs
        and nothing hands the lifted tensor itself to the caller, so sharing one constant is safe.
        """
        if isinstance(value, Tensor):
            return value
        dtype = self._data.dtype if dtype is None else dtype
        number = type(value) is float or type(value) is int
        # Only host storage (device arrays die with their context); -0.0 == 0.0, so zeros are keyed by their sign too.
        cacheable = number and is_host(self.backend)
        if cacheable:
            key = (self.backend, dtype, value, math.copysign(1.0, value) if value == 0 else 1.0)
            constant = _constants.get(key)
            if constant is not None:
                return constant
        try:
            if number and not cacheable:
                return Tensor(self.backend.constant(value, dtype), self.backend)
            array = np.asarray(value, dtype=dtype)
        except (TypeError, ValueError, OverflowError) as error:
            raise DTypeError(f"cannot use {type(value).__name__} {value!r} as a {dtype} operand: {error}") from error
        lifted = Tensor(self.backend.from_numpy(array), self.backend)
        if cacheable:
            if len(_constants) >= CONSTANT_CACHE_SIZE:
                _constants.clear()
            _constants[key] = lifted
        return lifted

    # --- deep copy (needs the constructor; the other autograd methods are in tensor_autograd.py) ---

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        """``copy.deepcopy``: a leaf of the same class with its own storage, ``requires_grad`` and a copied ``.grad``
        (deep-copying a tensor with history raises, as in PyTorch)."""
        if self.history is not None:
            raise GradientError(f"only leaf tensors can be deep-copied (shape {self.shape}); detach() first, as in PyTorch")
        out = object.__new__(type(self))
        Tensor.__init__(out, self._map("id")._data, self.backend, requires_grad=self.requires_grad)
        memo[id(self)] = out
        if self.grad is not None:
            out.grad = self.grad.__deepcopy__(memo)
        return out

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
    def device(self) -> Device:
        """The backend's device: a ``str`` holding the backend's name, with PyTorch's ``.type`` and ``.index``."""
        return device_of(self.backend.name)

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
        """A tensor on another backend and/or of another dtype: ``to("cuda")`` (a device, a backend name, or PyTorch's
        ``"cuda:0"``/``"cpu"``/``0``), ``to(mt.float64)``, ``to(other_tensor)``, ``to("fast", mt.float32)``; itself
        when nothing changes."""
        out = self
        for target in (*args, backend, device, dtype):
            if target is None:
                continue
            if isinstance(target, Tensor):
                out = out.to(target.backend, target.dtype)
            elif isinstance(target, Backend) or _is_device_spec(target):
                chosen = get_backend(target)
                out = out if chosen is out.backend else F.ToBackend.apply(out, chosen)
            else:
                out = out.cast(dtypes.as_dtype(target))
        return out

    def cpu(self) -> Tensor:
        """``to("cpu")``: this tensor on the default CPU backend (itself when it is there)."""
        return self.to("cpu")

    def cuda(self, device: Any = None, non_blocking: bool = False) -> Tensor:
        """``to("cuda")`` (raising as it does without a GPU or simulator); one device: None, 0, "cuda" or "cuda:0"."""
        if device not in (None, 0, "cuda", "cuda:0") and getattr(device, "name", None) != "cuda":
            raise BackendError(f"cuda(): invalid device {device!r}: minitensor has one cuda device (None, 0 or 'cuda')")
        return self.to("cuda")

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
        body = np.array2string(self.to_numpy(), separator=", ", prefix="tensor(", **array2string_options())
        grad = ", requires_grad=True" if self.requires_grad else ""
        return f"tensor({body}, backend={self.backend.name!r}, dtype={self.dtype.name}{grad})"

    def zero_grad_(self) -> None:
        self.grad = None


def _is_device_spec(target: Any) -> bool:
    """Whether a ``to()`` argument names a device (a backend name, "cpu", "cuda:0", an int index), not a dtype."""
    if isinstance(target, str):
        return target in backend_names() or target == "cpu" or ":" in target
    return isinstance(target, int) and not isinstance(target, bool)


_new = object.__new__
def _result(data: TensorData, backend: Backend) -> Tensor:
    """``Tensor(data, backend)`` for a kernel's fresh result: a leaf without history that does not require grad
    (the constructor's checks cannot fail, so they are skipped: this runs for every op)."""
    out = _new(Tensor)
    out._data = data
    out.backend = backend
    out.history = None
    out._requires_grad = False
    out.grad = None
    out.unique_id = next(_ids)
    return out

