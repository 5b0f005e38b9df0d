"""Ways to make a tensor: from data, filled, ranges, random (PyTorch's names, arguments and dtypes).

Every function takes ``dtype=`` and ``backend=`` (``device=`` is accepted as its PyTorch spelling:
``"cpu"`` is the default CPU backend, ``"cuda"`` the GPU one).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import dtypes, tensor_random
from .backends import Backend, get_backend
from .dtypes import as_dtype
from .errors import DTypeError, PermutationError, RaggedDataError, ShapeError
from .random_state import generator, rng_for
from .tensor import Tensor
from .tensor_data import TensorData, size_arg, strided_extent
from .tensor_put import _int_tuple
from .tensor_random import GeneratorLike

BackendLike = str | Backend | None


def _backend(backend: BackendLike, device: BackendLike = None) -> Backend:
    return get_backend(backend if backend is not None else device)


def _check_rectangular(data: Any, path: tuple[int, ...] = ()) -> tuple[int, ...]:
    """Shape of nested lists, or RaggedDataError naming the first row whose length differs."""
    if not isinstance(data, (list, tuple)):
        return ()
    shapes = [_check_rectangular(item, path + (i,)) for i, item in enumerate(data)]
    for i, shape in enumerate(shapes[1:], start=1):
        if shape != shapes[0]:
            where = "".join(f"[{p}]" for p in path)
            raise RaggedDataError(
                f"nested lists are ragged: data{where}[0] has shape {shapes[0]} but data{where}[{i}] has shape {shape}"
            )
    return (len(data),) + (shapes[0] if shapes else ())


def inferred_dtype(array: np.ndarray) -> np.dtype:
    """The dtype PyTorch gives data like ``array``: bool, int64 for integers, the default float for Python floats."""
    if array.dtype in dtypes.SUPPORTED:
        return array.dtype
    kind = array.dtype.kind
    if kind == "b":
        return dtypes.bool_
    if kind in "iu":
        return dtypes.int64
    if kind == "f":
        return dtypes.float32 if array.dtype.itemsize < 4 else dtypes.float64
    raise DTypeError(f"cannot make a tensor from data of NumPy dtype {array.dtype}")


def tensor(
    data: Any, *, dtype: Any = None, backend: BackendLike = None, requires_grad: bool = False, device: BackendLike = None
) -> Tensor:
    """A new tensor holding a copy of ``data``: a number, nested lists (of numbers or 0-d tensors), a NumPy array or a Tensor.

    Without ``dtype``: Python bools give bool, ints int64, floats the default float dtype; arrays and
    tensors keep theirs.
    """
    if isinstance(data, Tensor):
        array = data.to_numpy()
    elif isinstance(data, np.ndarray):
        array = data
    else:
        _check_rectangular(data)
        try:
            array = np.asarray(data)
        except (TypeError, ValueError) as error:
            raise DTypeError(f"cannot make a tensor from {type(data).__name__} data: {error}") from error
        if dtype is None and array.dtype == np.float64 and not _holds_float64_tensors(data):
            array = array.astype(dtypes.get_default_dtype())  # Python floats take the default dtype
    if array.dtype.kind not in "biuf":
        raise DTypeError(f"cannot make a tensor from data of NumPy dtype {array.dtype} ({type(data).__name__})")
    target = as_dtype(dtype) if dtype is not None else inferred_dtype(array)
    chosen = _backend(backend, device)
    return Tensor(chosen.from_numpy(array.astype(target, copy=False)), chosen, requires_grad=requires_grad)


def _holds_float64_tensors(data: Any) -> bool:
    """True when nested ``data`` holds a float64 tensor or array (they keep their dtype, Python floats do not)."""
    if isinstance(data, (Tensor, np.ndarray, np.generic)):
        return bool(data.dtype == dtypes.float64)
    if isinstance(data, (list, tuple)):
        return any(_holds_float64_tensors(item) for item in data)
    return False


def as_tensor(data: Any, dtype: Any = None, *, backend: BackendLike = None, device: BackendLike = None) -> Tensor:
    """``data`` itself when it is already a tensor of that dtype and backend, else a new tensor."""
    if isinstance(data, Tensor):
        out = data.to(backend if backend is not None else device) if (backend or device) else data
        return out.cast(dtype) if dtype is not None else out
    return tensor(data, dtype=dtype, backend=backend, device=device)


def from_numpy(array: np.ndarray, *, backend: BackendLike = None, dtype: Any = None) -> Tensor:
    """A tensor holding a copy of ``array``, with its dtype (storage is never shared with NumPy)."""
    return tensor(np.asarray(array), dtype=dtype, backend=backend)


def _filled(shape: tuple[int, ...], value: Any, dtype: np.dtype, backend: Backend, requires_grad: bool) -> Tensor:
    if value == 0:
        return Tensor(backend.zeros(shape, dtype), backend, requires_grad=requires_grad)
    return Tensor(backend.from_numpy(np.full(shape, value, dtype=dtype)), backend, requires_grad=requires_grad)


def zeros(*size: Any, dtype: Any = None, backend: BackendLike = None, device: BackendLike = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` filled with 0."""
    return _filled(size_arg(size), 0, as_dtype(dtype), _backend(backend, device), requires_grad)


def ones(*size: Any, dtype: Any = None, backend: BackendLike = None, device: BackendLike = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` filled with 1."""
    return _filled(size_arg(size), 1, as_dtype(dtype), _backend(backend, device), requires_grad)


def empty(*size: Any, dtype: Any = None, backend: BackendLike = None, device: BackendLike = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` with unspecified contents."""
    shape = size_arg(size)
    chosen = _backend(backend, device)
    return Tensor(chosen.empty(shape, as_dtype(dtype)), chosen, requires_grad=requires_grad)


def full(
    size: Sequence[int], fill_value: Any, dtype: Any = None, backend: BackendLike = None, device: BackendLike = None,
    requires_grad: bool = False,
) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value`` (its dtype follows the value: bool, int64 or the default float)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    resolved = as_dtype(dtype) if dtype is not None else dtypes.scalar_dtype(fill_value)
    return _filled(size_arg((size,)), fill_value, resolved, _backend(backend, device), requires_grad)


def _like(t: Tensor, dtype: Any, backend: BackendLike) -> tuple[np.dtype, Backend]:
    return (t.dtype if dtype is None else as_dtype(dtype)), (t.backend if backend is None else get_backend(backend))


def zeros_like(t: Tensor, dtype: Any = None, backend: BackendLike = None, requires_grad: bool = False) -> Tensor:
    return _filled(t.shape, 0, *_like(t, dtype, backend), requires_grad)


def ones_like(t: Tensor, dtype: Any = None, backend: BackendLike = None, requires_grad: bool = False) -> Tensor:
    return _filled(t.shape, 1, *_like(t, dtype, backend), requires_grad)


def full_like(t: Tensor, fill_value: Any, dtype: Any = None, backend: BackendLike = None, requires_grad: bool = False) -> Tensor:
    return _filled(t.shape, fill_value, *_like(t, dtype, backend), requires_grad)


def empty_like(t: Tensor, dtype: Any = None, backend: BackendLike = None, requires_grad: bool = False) -> Tensor:
    resolved, chosen = _like(t, dtype, backend)
    return Tensor(chosen.empty(t.shape, resolved), chosen, requires_grad=requires_grad)


def arange(
    start: float, end: float | None = None, step: float = 1, *, dtype: Any = None, backend: BackendLike = None,
    device: BackendLike = None, requires_grad: bool = False,
) -> Tensor:
    """Values from ``start`` (inclusive) to ``end`` (exclusive) by ``step``; ``arange(n)`` is 0..n-1.

    int64 when every argument is an int, else the default float dtype (as ``torch.arange``).
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange() step must be nonzero")
    values = [start, end, step]
    if dtype is None:
        integral = all(isinstance(v, int) or (isinstance(v, Tensor) and v.dtype.kind in "iub") for v in values)
        dtype = dtypes.int64 if integral else dtypes.get_default_dtype()
    start, end, step = (float(v) if not isinstance(v, int) else v for v in values)
    count = max(0, math.ceil((end - start) / step))
    steps: Any = np.arange(count, dtype=np.float64 if as_dtype(dtype).kind == "f" else np.int64)
    array = steps * step + start
    return tensor(array, dtype=dtype, backend=backend, device=device, requires_grad=requires_grad)


def linspace(
    start: float, end: float, steps: int, *, dtype: Any = None, backend: BackendLike = None, device: BackendLike = None,
    requires_grad: bool = False,
) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end``, both included."""
    if steps < 0:
        raise ValueError(f"linspace() needs steps >= 0, got {steps}")
    return tensor(np.linspace(float(start), float(end), int(steps)), dtype=as_dtype(dtype), backend=backend, device=device,
                  requires_grad=requires_grad)


def logspace(
    start: float, end: float, steps: int, base: float = 10.0, *, dtype: Any = None, backend: BackendLike = None,
    device: BackendLike = None, requires_grad: bool = False,
) -> Tensor:
    """``steps`` values base ** e, the exponents e evenly spaced from ``start`` to ``end`` (both included), as
    ``torch.logspace``: e = start + i * step in the first half, end - (steps - 1 - i) * step in the second, computed in
    float64 and rounded to ``dtype`` (default: the default float dtype). Integer dtypes truncate start and end to
    integers first and the powers after, as PyTorch; a negative base gives NaN for fractional exponents."""
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"logspace(): argument 'steps' (position 3) must be int, not {type(steps).__name__}")
    if steps < 0:
        raise ValueError(f"logspace() needs steps >= 0, got {steps}")
    resolved = as_dtype(dtype)
    if resolved.kind == "b":
        raise DTypeError(f"logspace() is not implemented for bool (start={start}, end={end}, steps={steps})")
    low, high = float(start), float(end)
    if resolved.kind in "iu":
        low, high = float(int(low)), float(int(high))
    i = np.arange(int(steps), dtype=np.float64)
    if steps == 1:
        exponents = np.array([low])
    else:
        step = (high - low) / (steps - 1)
        exponents = np.where(i < steps // 2, low + step * i, high - step * (steps - 1 - i))
    with np.errstate(all="ignore"):  # 0 ** -1 is inf, (-2) ** 0.5 NaN, as in PyTorch
        values = np.power(np.float64(base), exponents)
        return tensor(values, dtype=resolved, backend=backend, device=device, requires_grad=requires_grad)


def _triangle_indices(name: str, row: int, col: int, offset: int, dtype: Any, backend: BackendLike, device: BackendLike,
                      lower: bool) -> Tensor:
    """The 2 x N (row, column) indices of the lower (on or below diagonal ``offset``) or upper (on or above it)
    triangle of a row x col matrix, row by row and left to right within a row."""
    for arg, value in (("row", row), ("col", col), ("offset", offset)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name}(): argument '{arg}' must be int, not {type(value).__name__}")
    for arg, value in (("row", row), ("col", col)):
        if value < 0:
            raise ValueError(f"{name}(): {arg} must be non-negative, got {value}")
    resolved = dtypes.int64 if dtype is None else as_dtype(dtype)
    if resolved.kind not in "iu":
        raise DTypeError(f"{name}() needs an integer dtype (int64 or int32), got {resolved}")
    rows, cols = np.indices((int(row), int(col)))
    inside = cols - rows <= offset if lower else cols - rows >= offset
    return tensor(np.stack(np.nonzero(inside)).reshape(2, -1), dtype=resolved, backend=backend, device=device)


def tril_indices(
    row: int, col: int, offset: int = 0, *, dtype: Any = dtypes.int64, backend: BackendLike = None, device: BackendLike = None,
) -> Tensor:
    """The indices of the lower triangle of a ``row`` x ``col`` matrix, the entries (i, j) with j - i <= ``offset``,
    as a 2 x N tensor (row indices, then column indices) in row-major order; int64 by default."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, backend, device, lower=True)


def triu_indices(
    row: int, col: int, offset: int = 0, *, dtype: Any = dtypes.int64, backend: BackendLike = None, device: BackendLike = None,
) -> Tensor:
    """The indices of the upper triangle of a ``row`` x ``col`` matrix, the entries (i, j) with j - i >= ``offset``,
    as a 2 x N tensor (row indices, then column indices) in row-major order; int64 by default."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, backend, device, lower=False)


def eye(
    n: int, m: int | None = None, *, dtype: Any = None, backend: BackendLike = None, device: BackendLike = None,
    requires_grad: bool = False,
) -> Tensor:
    """The ``n`` x ``m`` (default square) identity matrix."""
    return tensor(np.eye(n, n if m is None else m), dtype=as_dtype(dtype), backend=backend, device=device,
                  requires_grad=requires_grad)


# --- random ---

def _random(array: np.ndarray, dtype: Any, backend: BackendLike, device: BackendLike, requires_grad: bool) -> Tensor:
    resolved = as_dtype(dtype)
    if resolved.kind != "f":
        raise DTypeError(f"random floats need a float dtype, got {resolved}")
    return tensor(array, dtype=resolved, backend=backend, device=device, requires_grad=requires_grad)


def rand(*size: Any, generator: GeneratorLike = None, dtype: Any = None, backend: BackendLike = None, device: BackendLike = None,
         requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1)."""
    return _random(rng_for(generator).random(size_arg(size)), dtype, backend, device, requires_grad)


def randn(*size: Any, generator: GeneratorLike = None, dtype: Any = None, backend: BackendLike = None, device: BackendLike = None,
          requires_grad: bool = False) -> Tensor:
    """Standard normal samples."""
    return _random(rng_for(generator).standard_normal(size_arg(size)), dtype, backend, device, requires_grad)


def rand_like(t: Tensor, dtype: Any = None, backend: BackendLike = None, requires_grad: bool = False, *,
              generator: GeneratorLike = None) -> Tensor:
    resolved, chosen = _like(t, dtype, backend)
    return _random(rng_for(generator).random(t.shape), resolved, chosen, None, requires_grad)


def randn_like(t: Tensor, dtype: Any = None, backend: BackendLike = None, requires_grad: bool = False, *,
               generator: GeneratorLike = None) -> Tensor:
    resolved, chosen = _like(t, dtype, backend)
    return _random(rng_for(generator).standard_normal(t.shape), resolved, chosen, None, requires_grad)


def normal(
    mean: Any = 0.0, std: Any = 1.0, size: Sequence[int] | None = None, *, generator: GeneratorLike = None, dtype: Any = None,
    backend: BackendLike = None, device: BackendLike = None, requires_grad: bool = False,
) -> Tensor:
    """Samples of N(mean, std**2): from a float tensor ``mean`` and/or ``std`` (broadcast together; the result has
    ``mean``'s dtype, else ``std``'s, and their backend; its gradient to them is zero), or from two numbers with
    ``size`` (then ``dtype``, ``backend``/``device`` and ``requires_grad`` apply). ``std`` must be >= 0."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        extra = [k for k, v in (("size", size), ("dtype", dtype), ("backend", backend), ("device", device)) if v is not None]
        if extra or requires_grad:
            raise TypeError(f"normal(): {', '.join(extra) or 'requires_grad'} goes with a float mean and std only")
        return tensor_random.normal_from(mean, std, generator)
    if size is None or not isinstance(size, (tuple, list)):
        raise TypeError(f"normal(): with a float mean and std, size must be a tuple of ints, got {type(size).__name__}")
    if not std >= 0:
        raise ValueError(f"normal expects std >= 0.0, but found std {std}")
    return _random(rng_for(generator).normal(float(mean), float(std), size_arg((size,))), dtype, backend, device, requires_grad)


def randint(
    low: int, high: int | None = None, size: Sequence[int] = (), *, generator: GeneratorLike = None, dtype: Any = None,
    backend: BackendLike = None, device: BackendLike = None,
) -> Tensor:
    """Integers drawn uniformly from [low, high) (``randint(high, size)`` draws from [0, high)); int64 by default."""
    if high is None or (isinstance(high, (tuple, list))):
        low, high, size = 0, low, (high if high is not None else size)  # type: ignore[assignment]
    if high <= low:
        raise ValueError(f"randint() needs low < high, got [{low}, {high})")
    array = rng_for(generator).integers(low, high, size_arg((size,)))
    return tensor(array, dtype=dtypes.int64 if dtype is None else dtype, backend=backend, device=device)


def randperm(n: int, *, generator: GeneratorLike = None, dtype: Any = None, backend: BackendLike = None,
             device: BackendLike = None) -> Tensor:
    """A random permutation of 0..n-1 (int64 by default)."""
    return tensor(rng_for(generator).permutation(int(n)), dtype=dtypes.int64 if dtype is None else dtype, backend=backend,
                  device=device)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: GeneratorLike = None) -> Tensor:
    """Category indices drawn with probability proportional to the non-negative weights of ``input``'s last dim.

    ``input`` is 1-D (one distribution) or 2-D (one per row); the result is int64 of shape ``(num_samples,)`` or
    ``(rows, num_samples)`` on ``input``'s backend. Without replacement a category is never drawn twice per row, so
    each row needs at least ``num_samples`` non-zero weights. ``generator`` defaults to the shared one.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' must be Tensor, not {type(input).__name__}")
    return tensor_random.multinomial(input, num_samples, replacement, generator=generator)


# --- storage in a chosen layout ---


def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None, backend: Any = None,
                  device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` with exactly the element strides ``stride`` (non-negative; ``.stride()`` gives them
    back) over new storage of 1 + sum((size_i - 1) * stride_i) elements, contents unspecified."""
    shape, strides, extent = strided_extent(size, stride)
    chosen = _backend(backend, device)
    storage = chosen.empty((extent,), dtypes.as_dtype(dtype)).storage
    return Tensor(TensorData(storage, shape, strides), chosen, requires_grad=requires_grad)


def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: Any = None, layout: Any = None,
                   device: Any = None, pin_memory: bool = False, requires_grad: bool = False,
                   backend: Any = None) -> Tensor:
    """An uninitialized tensor of ``size`` whose storage holds the dims in the order ``physical_layout`` (outermost
    first): ``empty_permuted((2, 3, 4), (2, 0, 1))`` has strides (3, 1, 6)."""
    shape = _int_tuple(size, "empty_permuted", "size")
    order = _int_tuple(physical_layout, "empty_permuted", "physical_layout")
    if len(order) != len(shape):
        raise ShapeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                         f"len(size) = {len(shape)} is not equal to len(physical_layout) = {len(order)}")
    if sorted(order) != list(range(len(shape))):
        raise PermutationError(f"empty_permuted: physical_layout {list(order)} is not a permutation of "
                               f"range({len(shape)}) (no negative or repeated dims)")
    strides = [0] * len(shape)
    step = 1
    for dim in reversed(order):
        strides[dim] = step
        step *= max(shape[dim], 1)
    return empty_strided(shape, strides, dtype=dtype, backend=backend, device=device, requires_grad=requires_grad)


__all__ = [
    "empty_strided",
    "empty_permuted",
    "tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "full_like",
    "empty_like", "arange", "linspace", "logspace", "tril_indices", "triu_indices", "eye", "generator",
    "rand", "randn", "rand_like", "randn_like", "normal", "randint", "randperm", "multinomial",
]
