"""Ways to make a tensor: from data, filled, random."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .backends import Backend, get_backend
from .errors import DTypeError, RaggedDataError
from .tensor import Tensor
from .tensor_data import DTYPES

DEFAULT_DTYPE = np.dtype(np.float64)


def as_dtype(dtype: Any) -> np.dtype:
    """``"float32"``, ``"float64"``, a NumPy float dtype, or None (float64) as a NumPy dtype."""
    if dtype is None:
        return DEFAULT_DTYPE
    if isinstance(dtype, str):
        if dtype not in DTYPES:
            raise DTypeError(f"unsupported dtype {dtype!r}; use 'float32' or 'float64'")
        return DTYPES[dtype]
    try:
        resolved = np.dtype(dtype)
    except TypeError as error:
        raise DTypeError(f"unsupported dtype {dtype!r}; use 'float32' or 'float64'") from error
    if resolved not in DTYPES.values():
        raise DTypeError(f"unsupported dtype {resolved}; use 'float32' or 'float64'")
    return resolved


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


def tensor(
    data: Any, backend: str | Backend | None = None, dtype: Any = None, requires_grad: bool = False
) -> Tensor:
    """A new tensor holding a copy of ``data`` (a number, nested lists, a NumPy array or a Tensor).

    The dtype is ``dtype`` if given, else the float dtype of a NumPy array, else float64.
    """
    if isinstance(data, Tensor):
        data = data.to_numpy()
    if isinstance(data, np.ndarray):
        default = data.dtype if data.dtype in DTYPES.values() else DEFAULT_DTYPE
        array = data.astype(as_dtype(dtype) if dtype is not None else default, copy=False)
    else:
        _check_rectangular(data)
        try:
            array = np.asarray(data, dtype=as_dtype(dtype))
        except (TypeError, ValueError) as error:
            raise DTypeError(f"cannot make a float tensor from {type(data).__name__} data: {error}") from error
    chosen = get_backend(backend)
    return Tensor(chosen.from_numpy(array), chosen, requires_grad=requires_grad)


def from_numpy(array: np.ndarray, backend: str | Backend | None = None, dtype: Any = None) -> Tensor:
    """A tensor holding a copy of ``array`` (float32 stays float32; other types become float64)."""
    return tensor(np.asarray(array), backend=backend, dtype=dtype)


def _shape(shape: Sequence[Any]) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(int(s) for s in shape[0])
    return tuple(int(s) for s in shape)


def full(shape: Sequence[int], value: float, backend: str | Backend | None = None, dtype: Any = None) -> Tensor:
    return tensor(np.full(_shape((shape,)), value, dtype=as_dtype(dtype)), backend=backend)


def zeros(*shape: Any, backend: str | Backend | None = None, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    chosen = get_backend(backend)
    return Tensor(chosen.zeros(_shape(shape), as_dtype(dtype)), chosen, requires_grad=requires_grad)


def ones(*shape: Any, backend: str | Backend | None = None, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    out = tensor(np.ones(_shape(shape), dtype=as_dtype(dtype)), backend=backend)
    return out.requires_grad_(requires_grad)


def zeros_like(t: Tensor) -> Tensor:
    return zeros(t.shape, backend=t.backend, dtype=t.dtype)


def ones_like(t: Tensor) -> Tensor:
    return ones(t.shape, backend=t.backend, dtype=t.dtype)


_rng = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Seed the generator used by rand/randn (and the nn initializers)."""
    global _rng
    _rng = np.random.default_rng(seed)


def generator() -> np.random.Generator:
    """The shared random generator (seed it with manual_seed)."""
    return _rng


def rand(*shape: Any, backend: str | Backend | None = None, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1)."""
    out = tensor(_rng.random(_shape(shape)), backend=backend, dtype=as_dtype(dtype))
    return out.requires_grad_(requires_grad)


def randn(*shape: Any, backend: str | Backend | None = None, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples."""
    out = tensor(_rng.standard_normal(_shape(shape)), backend=backend, dtype=as_dtype(dtype))
    return out.requires_grad_(requires_grad)


def arange(n: int, backend: str | Backend | None = None, dtype: Any = None) -> Tensor:
    return tensor(np.arange(n), backend=backend, dtype=as_dtype(dtype))
