"""Storage-level Tensor methods PyTorch users reach for (the ``StorageMethods`` mixin): ``resize_ resize_as_ set_
data_ptr share_memory_ is_shared pin_memory is_pinned new output_nr is_inference`` and the Python-callable maps
``apply_ map_ map2_``; and :func:`write_out`, PyTorch's ``out=`` for the functions that take it (tensor_copies.py).

``resize_`` keeps the storage when it holds enough elements from the tensor's first one (the values are read in
storage order, as PyTorch's), else moves the tensor to new storage holding the old elements first (the new ones are
unspecified; views of the old storage no longer see this tensor's writes). ``set_`` makes the tensor a view of
another's storage (``as_strided``, differentiable when the source requires grad). minitensor has no Storage objects,
pinned host memory, shared-memory segments (its DataLoader workers are threads, which share every tensor) or
inference tensors: ``pin_memory()`` returns the tensor itself and ``is_pinned()`` is False (as ``PackedSequence``'s),
``share_memory_()`` only marks the tensor (``is_shared()``), ``is_inference()`` is False and ``output_nr`` is 0.
``apply_ map_ map2_`` call a Python function per element on host backends (PyTorch's are CPU-only too) and write the
results cast to the tensor's dtype. ``__dlpack__``/``__dlpack_device__`` export host tensors through NumPy's DLPack
support, sharing the storage (``np.from_dlpack(x)`` and ``torch.from_dlpack(x)`` see x's writes).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .autodiff import is_grad_enabled, no_grad
from .backends import get_backend
from .backends.base import is_host, strided_view
from .errors import BackendError, DTypeError, GradientError, ShapeError
from .size import Size
from .tensor_data import TensorData, size_arg, storage_address, strides_from_shape
from .tensor_inplace import _check_leaf, _torch_name
from .tensor_put import as_strided

if TYPE_CHECKING:
    from .tensor import Tensor


def _is_tensor(x: Any) -> bool:
    """Every Tensor is a StorageMethods (tensor.py imports this module, so Tensor is not importable here)."""
    return isinstance(x, StorageMethods)


def need_tensor(value: Any, fn: str, name: str) -> None:
    """TypeError naming ``fn`` and the argument unless ``value`` is a Tensor."""
    if not _is_tensor(value):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(value).__name__}")


def _torch_type(x: Tensor) -> str:
    return f"{_torch_name(x.dtype)}Tensor"


# --- resizing and out= ---


def resize_storage(x: Tensor, shape: tuple[int, ...]) -> None:
    """Give ``x`` the contiguous ``shape`` over its storage from its first element, moving it to new storage (the old
    elements first) when that holds fewer than the shape's elements."""
    n = math.prod(shape)
    own = x._data.storage
    if n > own.shape[0]:
        fresh = x.backend.empty((n,), x.dtype).storage
        kept = own.shape[0]
        if kept:
            x.backend.map("id", TensorData(own, (kept,)), TensorData(fresh, (kept,)))
        own, x._base, x._counter = fresh, None, [x._version]  # views of the old storage no longer share with x
    x._data = TensorData(own, shape)


def _check_out(out: Any, fn: str) -> None:
    need_tensor(out, fn, "out")
    if out.requires_grad and is_grad_enabled():
        raise GradientError(f"{fn}(): functions with out=... arguments don't support automatic differentiation, but "
                            f"out (shape {out.shape}) requires grad")


def write_out(out: Any, result: Tensor, fn: str) -> Tensor:
    """PyTorch's ``out=``: ``result``'s values written into ``out`` (same dtype and backend; an ``out`` of another
    shape is resized first, with PyTorch's warning when it had elements); returns ``out``, which gets no history."""
    _check_out(out, fn)
    if out.dtype != result.dtype:
        raise DTypeError(f"{fn}(): expected out tensor to have dtype {result.dtype}, but got {out.dtype} instead")
    out._check_backend(result)
    if out.shape != result.shape:
        if out.numel():
            warnings.warn(f"{fn}(): an output with one or more elements was resized since it had shape {list(out.shape)}, "
                          f"which does not match the required output shape {list(result.shape)}", UserWarning, stacklevel=3)
        resize_storage(out, result.shape)
    with no_grad():
        out.copy_(result)
    return out


def write_outs(out: Any, results: Sequence[Tensor], fn: str) -> None:
    """PyTorch's list ``out=`` (``split_copy``): one tensor per result, each written as ``copy_`` writes (broadcast
    to the out's shape, cast to its dtype)."""
    if not isinstance(out, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'out' must be a list or tuple of Tensors, not {type(out).__name__}")
    if len(out) != len(results):
        raise ShapeError(f"{fn}(): expected an out= argument of size {len(results)}, got size {len(out)}")
    for target in out:
        _check_out(target, fn)
    with no_grad():
        for target, result in zip(out, results):
            target.copy_(result)


def _empty_like(x: Tensor, shape: tuple[int, ...], backend: Any) -> Tensor:
    """A new leaf of ``shape`` and x's dtype on ``backend``, contents unspecified."""
    out = x._view_of(backend.empty(shape, x.dtype))
    out.backend = backend
    return out


# --- Python callables per element ---


def _host_values(x: Tensor, fn: str) -> list[Any]:
    """x's elements (row-major) as Python numbers; BackendError off the host (PyTorch's are CPU-only)."""
    if not is_host(x.backend):
        raise BackendError(f"{fn} is only implemented on CPU tensors, got a tensor on {x.backend.name!r}")
    return x.to_numpy().reshape(-1).tolist()  # type: ignore[no-any-return]


def _apply_python(self: Tensor, fn: str, call: Callable[..., Any], others: Sequence[Any]) -> Tensor:
    """self[i] = call(self[i], *(other[i] for other in others)), others broadcast to self's shape and of its dtype."""
    if self.requires_grad:
        raise GradientError(f"Can't call {fn}() on a tensor that requires grad (shape {self.shape}); use "
                            f"x.detach().{fn}() instead")
    columns = [_host_values(self, fn)]
    for i, other in enumerate(others):
        need_tensor(other, fn, "other" if len(others) == 1 else ("x", "y")[i])
        if other.dtype != self.dtype:
            raise DTypeError(f"{fn}: expected {_torch_type(self)} for the other tensors, got {_torch_type(other)}")
        self._check_backend(other)
        columns.append(_host_values(other.expand(*self.shape), fn))
    values = np.empty(len(columns[0]), dtype=self.dtype)
    for i, items in enumerate(zip(*columns)):
        try:
            values[i] = call(*items)
        except (TypeError, ValueError) as error:
            raise TypeError(f"{fn}: the function must return a number for a {self.dtype} tensor: {error}") from error
    with no_grad():
        return self.copy_(self._lift(values.reshape(self.shape), self.dtype))  # type: ignore[no-any-return]


# --- DLPack export ---

DLPACK_CPU, DLPACK_CUDA = 1, 2
"""DLPack's device type codes (kDLCPU, kDLCUDA)."""


def host_view(x: Tensor, fn: str) -> np.ndarray:
    """A writable NumPy array over x's host storage with x's shape and strides (no copy)."""
    if not is_host(x.backend):
        raise BackendError(f"{fn}: only tensors on a CPU backend can be exported, got one on {x.backend.name!r}; "
                           "call .cpu() first")
    return strided_view(x._data, writeable=True)


class StorageMethods:
    """resize_, set_, data_ptr, sharing/pinning queries, the legacy ``new``, ``output_nr``, ``is_inference`` and the
    Python-callable maps of Tensor."""

    _shared = False

    def resize_(self: Any, *sizes: Any, memory_format: Any = None) -> Tensor:
        """self given the contiguous shape ``sizes`` (ints or one sequence) over its storage from its first element:
        the first elements in storage order are kept, new ones are unspecified."""
        if not sizes:
            raise TypeError("resize_() missing 1 required positional argument: 'size'")
        if memory_format is not None:
            raise NotImplementedError(f"resize_(): memory_format={memory_format!r} is not supported (minitensor's "
                                      "tensors are row-major)")
        if self.requires_grad:
            raise GradientError(f"cannot resize variables that require grad (shape {self.shape})")
        resize_storage(self, size_arg(sizes))
        return self  # type: ignore[no-any-return]

    def resize_as_(self: Any, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
        """``resize_(the_template.shape)``."""
        need_tensor(the_template, "resize_as_", "the_template")
        return self.resize_(the_template.shape, memory_format=memory_format)  # type: ignore[no-any-return]

    def set_(self: Any, source: Any = None, storage_offset: int = 0, size: Sequence[int] | None = None,
             stride: Sequence[int] | None = None) -> Tensor:
        """self made a view of ``source``'s storage: its geometry, or ``size``/``stride`` (default contiguous) from
        ``storage_offset``; no source: empty. Differentiable to ``source``; a write through self changes it."""
        _check_leaf(self)
        if source is self:  # a view of itself: the in-place view op (no history loop through self)
            if size is None:
                return self  # type: ignore[no-any-return]
            shape = size_arg((size,))
            return self.as_strided_(shape, strides_from_shape(shape) if stride is None else stride,  # type: ignore[no-any-return]
                                    storage_offset)
        if source is None:
            source, size = self._view_of(self.backend.empty((0,), self.dtype)), (0,)
        need_tensor(source, "set_", "source")
        if source.dtype != self.dtype:
            raise DTypeError(f"Could not set tensor of type {source.dtype} to a tensor of type {self.dtype}")
        self._check_backend(source)
        if size is None:
            if storage_offset or stride is not None:
                raise TypeError("set_(): storage_offset and stride need size too")
            view = as_strided(source, source.shape, source.stride(), source.storage_offset())
        else:
            shape = size_arg((size,))
            view = as_strided(source, shape, strides_from_shape(shape) if stride is None else stride, storage_offset)
        self._bump_version()
        self._data, self._counter, self._base = view._data, view._counter, view._base
        self.history, self._requires_grad = view.history, view.requires_grad
        return self  # type: ignore[no-any-return]

    def data_ptr(self: Any) -> int:
        """The address of the first element (0 for a tensor without elements)."""
        return 0 if not self.numel() else int(storage_address(self._data.storage) or 0)

    def share_memory_(self: Any) -> Tensor:
        """Mark the tensor shared (minitensor's workers are threads: every tensor is already shared); self."""
        self._shared = True
        return self  # type: ignore[no-any-return]

    def is_shared(self: Any) -> bool:
        """Whether ``share_memory_()`` was called."""
        return bool(self._shared)

    def pin_memory(self: Any, device: Any = None) -> Tensor:
        """Itself (minitensor has no pinned host memory; cuda transfers copy from ordinary memory)."""
        if not is_host(self.backend):
            raise BackendError(f"cannot pin a tensor on {self.backend.name!r}: only CPU tensors can be pinned")
        return self  # type: ignore[no-any-return]

    def is_pinned(self: Any, device: Any = None) -> bool:
        """False: minitensor has no pinned host memory."""
        return False

    @property
    def output_nr(self: Any) -> int:
        """The tensor's position among its grad_fn's outputs: 0 (each minitensor op makes one differentiable output)."""
        return 0

    def is_inference(self: Any) -> bool:
        """False: tensors made under ``inference_mode`` are ordinary tensors in minitensor (usable in autograd)."""
        return False

    def new(self: Any, *args: Any, device: Any = None) -> Tensor:
        """PyTorch's legacy constructor, of this tensor's dtype (and backend unless ``device``): ``new()`` empty,
        ``new(2, 3)``/``new(Size)`` unspecified values of that shape, ``new(data)`` a copy of nested lists or an
        array, ``new(tensor)`` a tensor sharing that tensor's storage."""
        backend = self.backend if device is None else get_backend(device)
        if not args:
            return _empty_like(self, (0,), backend)
        if len(args) == 1 and _is_tensor(args[0]):
            other = args[0]
            if other.dtype != self.dtype or other.backend is not backend:
                raise TypeError(f"new(): expected a {_torch_type(self)} on {backend.name!r}, got a "
                                f"{_torch_type(other)} on {other.backend.name!r}")
            return other.detach()  # type: ignore[no-any-return]
        if len(args) == 1 and not isinstance(args[0], Size) and isinstance(args[0], (list, tuple, np.ndarray)):
            return self.new_tensor(args[0], device=backend)  # type: ignore[no-any-return]
        if len(args) == 1 and not isinstance(args[0], (int, np.integer, Size)):
            raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
        return _empty_like(self, size_arg(args), backend)

    def __dlpack__(self: Any, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: Any = None, copy: bool | None = None) -> Any:
        """A DLPack capsule viewing this tensor's storage (NumPy's export of it; ``copy=True`` copies), for
        ``np.from_dlpack``, ``torch.from_dlpack`` and ``mt.from_dlpack``; host backends only."""
        if self.requires_grad:
            raise GradientError(f"Can't export a tensor that requires grad (shape {self.shape}); use tensor.detach()")
        view = host_view(self, "__dlpack__")
        return view.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self: Any) -> tuple[int, int]:
        """(DLPack device type, index): (1, 0) on the CPU backends, (2, 0) on cuda."""
        return (DLPACK_CPU, 0) if is_host(self.backend) else (DLPACK_CUDA, 0)

    def apply_(self: Any, callable: Callable[[Any], Any]) -> Tensor:  # noqa: A002 - PyTorch's name
        """self[i] = callable(self[i]) for every element, as a Python number; results cast to self's dtype."""
        return _apply_python(self, "apply_", callable, ())

    def map_(self: Any, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:  # noqa: A002
        """self[i] = callable(self[i], tensor[i]), ``tensor`` (of self's dtype) broadcast to self's shape."""
        return _apply_python(self, "map_", callable, (tensor,))

    def map2_(self: Any, x: Tensor, y: Tensor, callable: Callable[[Any, Any, Any], Any]) -> Tensor:  # noqa: A002
        """self[i] = callable(self[i], x[i], y[i]), ``x`` and ``y`` broadcast to self's shape."""
        return _apply_python(self, "map2_", callable, (x, y))


__all__: list[str] = []
