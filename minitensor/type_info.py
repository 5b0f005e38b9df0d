"""Type and tensor introspection (``torch.is_tensor``, ``result_type``, ``finfo``, ...) and the CPU thread count.

``get_num_threads``/``set_num_threads`` are Numba's thread count, the one the ``fast`` backend's parallel kernels
run with (its serial/parallel break-even is measured per thread count, see
:func:`minitensor.backends.fast_launch.parallel_from`). As in Numba, the count applies to the calling thread.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes
from .errors import DTypeError

if TYPE_CHECKING:
    from .tensor import Tensor

__all__ = [
    "is_tensor", "is_floating_point", "is_complex", "is_nonzero", "is_same_size", "numel", "result_type", "promote_types",
    "can_cast", "finfo", "iinfo", "get_num_threads", "set_num_threads",
]  # fmt: skip


def _tensor_class() -> type:
    from .tensor import Tensor

    return Tensor


def is_tensor(obj: Any, /) -> bool:
    """Whether ``obj`` is a minitensor Tensor (a Parameter included)."""
    return isinstance(obj, _tensor_class())


def is_floating_point(input: Tensor) -> bool:  # noqa: A002 - PyTorch's names
    """Whether ``input``'s dtype is a float dtype."""
    return input.is_floating_point()


def is_complex(input: Tensor) -> bool:  # noqa: A002
    """Whether ``input``'s dtype is complex: always False (minitensor has no complex dtypes)."""
    return input.is_complex()


def is_nonzero(input: Tensor) -> bool:  # noqa: A002
    """The truth of a one-element tensor; ShapeError for any other size."""
    return input.is_nonzero()


def is_same_size(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    """Whether the two tensors have the same shape."""
    return input.is_same_size(other)


def numel(input: Tensor) -> int:  # noqa: A002
    """The number of elements of ``input``."""
    return input.numel()


def _operand(value: Any, name: str) -> Any:
    if is_tensor(value) or (isinstance(value, (builtins.bool, builtins.int, builtins.float, np.number, np.bool_))):
        return value
    raise TypeError(f"result_type(): argument '{name}' must be a Tensor or a number, not {type(value).__name__}")


def result_type(tensor: Tensor | float, other: Tensor | float) -> np.dtype:
    """The dtype an element-wise op of the two operands (tensors or numbers) returns, by PyTorch's promotion."""
    return dtypes.result_type(_operand(tensor, "tensor"), _operand(other, "other"))


def promote_types(type1: Any, type2: Any) -> np.dtype:
    """The smallest dtype both dtypes convert to without losing category (bool < integer < float)."""
    promoted = dtypes.promote(dtypes.as_dtype(type1), dtypes.as_dtype(type2))
    assert promoted is not None
    return promoted


def can_cast(from_: Any, to: Any) -> bool:
    """Whether PyTorch's casting rules allow ``from_`` into ``to``: never to a lower category (float -> int, int -> bool)."""
    return dtypes.category(dtypes.as_dtype(from_)) <= dtypes.category(dtypes.as_dtype(to))


class finfo:  # noqa: N801 - PyTorch's name
    """Machine limits of a float dtype (the default float dtype for None), as ``torch.finfo``: ``bits``, ``eps``,
    ``max``, ``min``, ``tiny`` (= ``smallest_normal``), ``resolution`` and ``dtype`` (its name)."""

    def __init__(self, type: Any = None) -> None:  # noqa: A002
        dtype = dtypes.as_dtype(type)
        if dtype.kind != "f":
            raise DTypeError(f"finfo() requires a floating point dtype, got {dtype}; use iinfo for integer dtypes")
        info = np.finfo(dtype)
        self.bits: int = info.bits
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -info.precision
        self.dtype: str = dtype.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801 - PyTorch's name
    """Limits of an integer dtype, as ``torch.iinfo``: ``bits``, ``max``, ``min`` and ``dtype`` (its name)."""

    def __init__(self, type: Any) -> None:  # noqa: A002
        dtype = dtypes.as_dtype(type)
        if dtype.kind != "i":
            what = "bool is not supported by iinfo" if dtype.kind == "b" else f"iinfo() requires an integer dtype, got {dtype}"
            raise DTypeError(f"{what}; use finfo for float dtypes")
        info = np.iinfo(dtype)
        self.bits: int = info.bits
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype: str = dtype.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def _numba() -> Any:
    """Numba, after the fast backend has chosen its thread layer (fast_launch must come before the pool starts)."""
    import numba

    from .backends import fast_launch  # noqa: F401

    return numba


def get_num_threads() -> int:
    """The number of threads the fast backend's parallel kernels use (Numba's, for the calling thread)."""
    return int(_numba().get_num_threads())


def set_num_threads(int: int) -> None:  # noqa: A002 - PyTorch's parameter name
    """Run the fast backend's parallel kernels on ``int`` threads (1 up to Numba's NUMBA_NUM_THREADS)."""
    numba = _numba()
    most = numba.config.NUMBA_NUM_THREADS
    if isinstance(int, builtins.bool) or not isinstance(int, (builtins.int, np.integer)):
        raise TypeError(f"set_num_threads(): argument 'int' must be int, not {type(int).__name__}")
    if not 1 <= int <= most:
        raise ValueError(f"set_num_threads: the number of threads must be in [1, {most}] (NUMBA_NUM_THREADS), got {int}")
    numba.set_num_threads(builtins.int(int))
