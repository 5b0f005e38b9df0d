"""In-place ops of Tensor (the ``InplaceMethods`` mixin): ``add_`` ... ``uniform_``, ``+=`` and ``x[key] = value``.

Every in-place op computes its result with the out-of-place ops, then writes it into this tensor's storage through
its own strides (``backend.map("id", result, self)``), so views of the same storage see the change and writing
into a view writes its base. The tensor object keeps its identity.

Autograd follows PyTorch:

* under ``no_grad`` (or when nothing involved requires grad) the op only mutates: a leaf stays a leaf;
* with grad mode on, a leaf that requires grad (or a view of one) cannot be mutated (GradientError);
* otherwise the tensor's history is rebased onto the new op. The op runs on a *copy* of the old value carrying
  the old history, so saved values never see the mutation (one extra copy per in-place op under grad mode).

Recorded graphs refer to tensor *objects*, so on a rebase every use of the old value recorded in the new op's own
graph (e.g. the view in ``h[0] += v``) is pointed at the copy of the old value. Graphs recorded *before* the rebase
remember the History each input had when it was used (``History.input_histories``), so ``y = h + 1; h.mul_(2);
y.backward()`` backpropagates through h's old node, as PyTorch does.

Version counters, as in PyTorch: each write bumps the version counter of the tensor's *storage*, shared by every
view of it (indexing, view/reshape, permute/transpose, expand, diagonal) and by ``detach()``; ``.data`` and
``clone()`` get their own. A graph that saved a tensor whose storage was written since (``y = x * x``, then
``x[0].mul_(2)`` under no_grad, or ``x.detach().zero_()``) refuses to backpropagate with the "modified by an
in-place operation" GradientError instead of using the new value. Ops save only what their backward needs (``h * 3``
saves no ``h``; ``exp`` saves its output), so the error fires where PyTorch's does.

A recorded write through a view (``h[0].mul_(w)``, ``h.t()[1].add_(v)``, ``b[0:2].copy_(w)``) also rebases the
view's base on "old base with the view's elements replaced" (PyTorch's CopySlices; ``_rebase_base``), so later uses
of the base differentiate through the write. Other views of the same base made before the write keep their old
history (PyTorch regenerates them). ``x[index] = value`` with repeated advanced indices keeps the last value (what
PyTorch does on CPU; it documents it as undefined).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from . import tensor_functions as F
from .autodiff import is_grad_enabled
from .backends import get_backend
from .errors import DTypeError, GradientError, ShapeError
from .random_state import RandomStream, rng_for
from .tensor_data import TensorData, shape_broadcast, storage_address
from .tensor_index import _is_basic, getitem, index_add, masked_fill, scatter, scatter_add

if TYPE_CHECKING:
    from .tensor import Tensor

_TORCH_NAMES = {dtypes.float32: "Float", dtypes.float64: "Double", dtypes.int32: "Int", dtypes.int64: "Long", dtypes.bool_: "Bool"}


def _torch_name(dtype: np.dtype) -> str:
    """PyTorch's scalar-type name of ``dtype`` (``Float``, ``Long``, ...)."""
    return _TORCH_NAMES.get(dtype, str(dtype))


def _check_cast(result: np.dtype, target: np.dtype) -> None:
    """DTypeError unless ``result`` may be stored in ``target`` without changing category (PyTorch's can_cast)."""
    if dtypes.category(result) > dtypes.category(target):
        raise DTypeError(f"result type {_torch_name(result)} can't be cast to the desired output type {_torch_name(target)}")


def is_view_function(fn: Any) -> bool:
    """Whether ``fn`` (a history's Function, or None) makes views of its first input (``TensorFunction.is_view``)."""
    return bool(getattr(fn, "is_view", False))


def _check_leaf(self: Tensor) -> None:
    """GradientError for an in-place op on a leaf that requires grad (or a view of one) while grad mode is on."""
    if not (self.requires_grad and is_grad_enabled()):
        return
    what = "a leaf tensor"
    base = self
    while base.history is not None and is_view_function(base.history.last_fn) and base.history.inputs:
        parent = base.history.inputs[0]
        if not _may_overlap(parent._data.storage, base._data.storage):
            return
        base, what = parent, "a view of a leaf tensor"
    if base.history is None:
        raise GradientError(
            f"{what} that requires grad is used in an in-place operation (shape {self.shape}); "
            "wrap the update in `with mt.no_grad():` or mutate a .detach()ed tensor"
        )


def _source(self: Tensor) -> Tensor:
    """The tensor the out-of-place op runs on: self under no_grad, else a copy of its value carrying its history."""
    if not is_grad_enabled():
        return self
    shadow = self._map("id")
    shadow.history, shadow._requires_grad, shadow._counter = self.history, self.requires_grad, [self._version]
    return shadow


def _may_overlap(a: Any, b: Any) -> bool:
    """Whether two storages may share memory (host arrays are checked; other storages are assumed to)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return bool(np.may_share_memory(a, b))
    return True


def _redirect(self: Tensor, result: Tensor, shadow: Tensor) -> None:
    """Point every use of ``self`` recorded in ``result``'s graph (inputs and saved values of nodes made after
    self) at ``shadow``, which holds self's old value and history, so they keep meaning the old value."""
    stack, seen = [result], set()
    while stack:
        var = stack.pop()
        history = var.history
        if history is None or id(var) in seen or var is shadow:
            continue
        seen.add(id(var))
        history.inputs = tuple(shadow if x is self else x for x in history.inputs)
        if history.ctx is not None:
            history.ctx.saved_values = tuple(shadow if x is self else x for x in history.ctx.saved_values)
        stack.extend(x for x in history.inputs if getattr(x, "unique_id", -1) > self.unique_id)


def _commit(self: Tensor, result: Tensor, check_cast: bool = True, shadow: Tensor | None = None) -> Tensor:
    """Write ``result`` (broadcasting to self's shape) into self's storage, rebase self's history on it; self.

    ``shadow`` is the copy of self's old value the result was computed from (under grad mode)."""
    self._check_backend(result)
    if check_cast:
        _check_cast(result.dtype, self.dtype)
    if result.shape != self.shape:
        try:
            broadcast = shape_broadcast(result.shape, self.shape)
        except ShapeError:
            broadcast = None
        if broadcast != self.shape:
            raise ShapeError(f"output with shape {self.shape} doesn't match the broadcast shape {broadcast or result.shape}")
    if result.history is not None:
        result = result.cast(self.dtype).expand(*self.shape)
        if shadow is not None:
            _redirect(self, result, shadow)
            _rebase_base(self, result, shadow.history)
        self.history, self._requires_grad = result.history, True
    if _may_overlap(result._data.storage, self._data.storage):
        result = result._map("id")  # overlapping read and write: copy first
    self.backend.map("id", result._data, self._data)
    self._bump_version()  # ops that saved this storage for backward now refuse to run (autodiff.History.modified_input)
    return self


def _rebase_base(self: Tensor, result: Tensor, old: Any) -> None:
    """A recorded write of ``result`` through the view ``self`` also changes the view's base: rebase the base's
    history on "old base with the view's elements replaced", as PyTorch's CopySlices does, so later uses of the
    base differentiate through the write (also when the base did not require grad: it then starts to).

    Which base elements the view covers is a layout question, answered on the host from the storages' addresses
    and the strides. No tensor values are read. Called before the write."""
    base = None
    while old is not None and is_view_function(old.last_fn) and old.inputs:
        base, old = old.inputs[0], old.input_history(0)
    if base is None:
        base = self._base
        if base is not None and base.requires_grad:
            raise GradientError(
                f"a view (shape {self.shape}) of a tensor that requires grad was made in no_grad mode and is being "
                "modified in place with grad mode on; make the view with grad mode on, or clone() it"
            )
    if base is None or base is self or not self.numel() or not _may_overlap(base._data.storage, self._data.storage):
        return
    offsets = _storage_offsets(base, self)
    if offsets is None:
        raise GradientError(
            f"an in-place write through a view (shape {self.shape}) of a tensor of shape {base.shape} cannot be "
            f"recorded on the {base.backend.name!r} backend (its storage has no address); write with base[index] = value"
        )
    base_offsets, view_offsets = offsets
    where_in_view = np.full(int(max(base_offsets.max(initial=0), view_offsets.max(initial=0))) + 1, -1, dtype=np.int64)
    where_in_view[view_offsets] = np.arange(view_offsets.size)
    index = where_in_view[base_offsets].reshape(base.shape)
    hits = base._lift(index >= 0, dtypes.bool_)
    picked = getitem(result.reshape(-1), base._lift(np.maximum(index, 0), dtypes.int64))
    new = F.Where.apply(hits, picked.cast(base.dtype), _source(base))
    base.history, base._requires_grad = new.history, True


def _offsets_of(data: TensorData, start: int) -> np.ndarray:
    """Storage offsets (from a common origin) of the elements of ``data`` in row-major order."""
    n = start + 1 + builtins.sum((s - 1) * abs(st) for s, st in zip(data.shape, data.strides))
    mirror = TensorData(np.arange(n, dtype=np.int64)[start:], data.shape, data.strides)
    return get_backend("simple").to_numpy(mirror).reshape(-1)


def _storage_offsets(base: Tensor, view: Tensor) -> tuple[np.ndarray, np.ndarray] | None:
    """(base's, view's) element offsets from the storages' addresses, or None when an address is unknown."""
    b, v = base._data.storage, view._data.storage
    pb, pv = storage_address(b), storage_address(v)
    if pb is None or pv is None:
        return None
    lo, item = min(pb, pv), b.dtype.itemsize
    return _offsets_of(base._data, (pb - lo) // item), _offsets_of(view._data, (pv - lo) // item)


def _inplace(self: Tensor, compute: Callable[[Tensor], Tensor], check_cast: bool = True) -> Tensor:
    """self with ``compute(self's value)`` written into its storage, under PyTorch's autograd rules for in-place ops."""
    _check_leaf(self)
    source = _source(self)
    return _commit(self, compute(source), check_cast, source)


def _replace(self: Tensor, new: Any) -> Tensor:
    """self overwritten by ``new`` (a tensor or number, cast to self's dtype); the old value gets no gradient."""

    def compute(old: Tensor) -> Tensor:
        value = new if isinstance(new, type(old)) else old._lift(new, old.dtype)
        old._check_backend(value)
        value = value.cast(old.dtype)
        if old.requires_grad or value.requires_grad:  # keep the graph: zero gradient to the old value
            everywhere = old._lift(np.ones(old.shape, dtype=np.bool_), dtypes.bool_)
            return F.Where.apply(everywhere, value, old)
        return value

    return _inplace(self, compute, check_cast=False)


def _random_fill(self: Tensor, array: np.ndarray, name: str) -> Tensor:
    """self overwritten by the random ``array`` (float tensors only)."""
    if self.dtype.kind != "f":
        raise DTypeError(f"{name} needs a float tensor, got {self.dtype}")
    return _replace(self, self._lift(array, self.dtype))


# --- item assignment ---


def _positions(self: Tensor, key: Any) -> Tensor:
    """The flat (row-major) positions in self that ``self[key]`` selects, as an int64 tensor of its shape."""
    flat = self._lift(np.arange(self.numel(), dtype=np.int64).reshape(self.shape), dtypes.int64)
    return getitem(flat, key)


def _last_writes(index: Tensor, spread: Tensor) -> tuple[Tensor, Tensor]:
    """(index, spread) keeping only the last entry of each repeated position (one host sync)."""
    positions = index.to_numpy()
    _, first_from_end = np.unique(positions[::-1], return_index=True)
    if len(first_from_end) == len(positions):
        return index, spread
    keep = index._lift(np.sort(len(positions) - 1 - first_from_end), dtypes.int64)
    return getitem(index, keep), getitem(spread, keep)


def _scatter_value(old: Tensor, key: Any, value: Tensor) -> Tensor:
    """old with ``value`` (broadcast to old[key]'s shape) written at key, out of place; the last write of a
    repeated position wins."""
    positions = _positions(old, key)
    try:
        spread = value.cast(old.dtype).expand(*positions.shape).reshape(-1)
    except ShapeError as error:
        raise ShapeError(
            f"shape mismatch: value of shape {value.shape} cannot be broadcast to indexing result of shape {positions.shape}"
        ) from error
    index, spread = _last_writes(positions.reshape(-1), spread)
    n = old.numel()
    ones = old._lift(np.ones(index.shape, dtype=np.int64), dtypes.int64)
    hits = scatter_add(old._lift(np.zeros(n, dtype=np.int64), dtypes.int64), 0, index, ones) > 0
    written = scatter_add(old._lift(np.zeros(n), old.dtype), 0, index, spread)
    return F.Where.apply(hits.reshape(*old.shape), written.reshape(*old.shape), old)


def setitem(self: Tensor, key: Any, value: Any) -> None:
    """self[key] = value (a tensor or number broadcasting to self[key]'s shape, cast to self's dtype), in place."""
    _check_leaf(self)
    tensor = value if isinstance(value, type(self)) else self._lift(value, self.dtype)
    self._check_backend(tensor)
    items = key if isinstance(key, tuple) else (key,)
    recording = is_grad_enabled() and (self.requires_grad or tensor.requires_grad)
    if not recording and all(_is_basic(k) for k in items):
        view = getitem(self.detach(), key)
        _commit(view, tensor.detach(), check_cast=False)
        return
    source = _source(self)
    _commit(self, _scatter_value(source, key, tensor), False, source)


class InplaceMethods:
    """In-place methods of Tensor; each returns the tensor itself."""

    __setitem__ = setitem

    def add_(self: Any, other: Any, *, alpha: Any = 1) -> Any:
        return _inplace(self, lambda x: x.add(other, alpha=alpha))

    def sub_(self: Any, other: Any, *, alpha: Any = 1) -> Any:
        return _inplace(self, lambda x: x.sub(other, alpha=alpha))

    def mul_(self: Any, other: Any) -> Any:
        return _inplace(self, lambda x: x * other)

    def div_(self: Any, other: Any) -> Any:
        return _inplace(self, lambda x: x / other)

    def pow_(self: Any, exponent: Any) -> Any:
        return _inplace(self, lambda x: x.pow(exponent))

    def clamp_(self: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002 - PyTorch's names
        return _inplace(self, lambda x: x.clamp(min, max))

    def masked_fill_(self: Any, mask: Any, value: Any) -> Any:
        return _inplace(self, lambda x: masked_fill(x, mask, value))

    def index_add_(self: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Any:
        return _inplace(self, lambda x: index_add(x, dim, index, source, alpha))

    def scatter_(self: Any, dim: int, index: Any, src: Any = None, *, value: Any = None) -> Any:
        return _inplace(self, lambda x: scatter(x, dim, index, src, value))

    def scatter_add_(self: Any, dim: int, index: Any, src: Any) -> Any:
        return _inplace(self, lambda x: scatter_add(x, dim, index, src))

    def zero_(self: Any) -> Any:
        return _replace(self, 0)

    def fill_(self: Any, value: Any) -> Any:
        if isinstance(value, type(self)) and value.dims != 0:
            raise ShapeError(f"fill_ only supports a 0-d value tensor, got a tensor of shape {value.shape}")
        return _replace(self, value)

    def copy_(self: Any, src: Any) -> Any:
        return _replace(self, src)

    def normal_(self: Any, mean: float = 0.0, std: float = 1.0, *, generator: RandomStream | None = None) -> Any:
        return _random_fill(self, rng_for(generator).normal(mean, std, self.shape), "normal_")

    def uniform_(self: Any, a: float = 0.0, b: float = 1.0, *, generator: RandomStream | None = None) -> Any:
        return _random_fill(self, rng_for(generator).uniform(a, b, self.shape), "uniform_")

    def __iadd__(self: Any, other: Any) -> Any:
        return self.add_(other)

    def __isub__(self: Any, other: Any) -> Any:
        return self.sub_(other)

    def __imul__(self: Any, other: Any) -> Any:
        return self.mul_(other)

    def __itruediv__(self: Any, other: Any) -> Any:
        return self.div_(other)


UNARY_INPLACE = (
    "abs", "absolute", "neg", "negative", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "square", "reciprocal", "sin", "cos", "tan", "asin", "arcsin", "acos", "arccos", "atan", "arctan", "sinh", "cosh",
    "asinh", "arcsinh", "acosh", "arccosh", "atanh", "arctanh", "tanh", "sigmoid", "relu", "erf", "erfc", "erfinv",
    "lgamma", "digamma", "floor", "ceil", "trunc", "fix", "round", "sign", "frac", "deg2rad", "rad2deg", "sinc",
    "logit", "nan_to_num", "clip", "logical_not", "bitwise_not",
)
"""Methods whose ``name_`` in-place form PyTorch has, taking the same arguments (``x.exp_()``, ``x.round_(decimals=1)``,
``x.clip_(0, 1)``)."""
BINARY_INPLACE = (
    "atan2", "arctan2", "fmod", "remainder", "copysign", "hypot", "xlogy", "floor_divide", "float_power", "true_divide",
    "multiply", "divide", "subtract", "lerp", "addcmul", "addcdiv", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor",
)
"""The same for functions of the tensor and others (``x.fmod_(2)``, ``x.lerp_(end, 0.5)``)."""


def _inplace_form(name: str) -> Callable[..., Any]:
    """``x.name_(*args)``: ``x.name(*args)`` written into x (``_inplace``: PyTorch's autograd rules, and a result
    whose dtype x cannot hold raises DTypeError, as ``torch.tensor([1]).exp_()`` raises)."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return _inplace(self, lambda x: getattr(x, name)(*args, **kwargs))

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"In-place ``{name}``: self = self.{name}(...), returning self."
    return method


for _name in UNARY_INPLACE + BINARY_INPLACE:
    setattr(InplaceMethods, f"{_name}_", _inplace_form(_name))
del _name

__all__: list[str] = []
