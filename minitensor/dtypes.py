"""Dtypes: the five storage types, their names, PyTorch's type promotion and the default float dtype.

A dtype is a NumPy dtype (``mt.float32 == np.dtype("float32")``), so tensors and NumPy arrays agree on
what their elements are. Promotion follows PyTorch: dimensioned tensors decide the result unless a
0-d tensor or a Python number is of a higher category (bool < integer < float).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .errors import DTypeError

float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
bool_ = np.dtype(np.bool_)

DTYPES: dict[str, np.dtype] = {
    "float32": float32,
    "float": float32,
    "float64": float64,
    "double": float64,
    "int32": int32,
    "int": int32,
    "int64": int64,
    "long": int64,
    "bool": bool_,
}
"""Every accepted dtype name (PyTorch's, with its aliases) and its NumPy dtype."""
SUPPORTED = (float32, float64, int32, int64, bool_)

_default_float = float32


def get_default_dtype() -> np.dtype:
    """The dtype of new float tensors (float32 unless :func:`set_default_dtype` changed it)."""
    return _default_float


def set_default_dtype(dtype: Any) -> None:
    """Make ``dtype`` (float32 or float64) the dtype of new float tensors, as ``torch.set_default_dtype``."""
    global _default_float
    resolved = as_dtype(dtype)
    if resolved.kind != "f":
        raise DTypeError(f"the default dtype must be a float dtype (float32 or float64), got {resolved}")
    _default_float = resolved


def as_dtype(dtype: Any) -> np.dtype:
    """A dtype name, NumPy dtype or Python type (float, int, bool) as one of the five supported dtypes.

    None means the default float dtype.
    """
    if dtype is None:
        return _default_float
    if dtype is builtins.float:
        return _default_float
    if dtype is builtins.int:
        return int64
    if dtype is builtins.bool:
        return bool_
    if isinstance(dtype, str):
        name = dtype.removeprefix("torch.").removeprefix("minitensor.")
        if name not in DTYPES:
            raise DTypeError(f"unsupported dtype {dtype!r}; choose one of {', '.join(DTYPES)}")
        return DTYPES[name]
    try:
        resolved = np.dtype(dtype)
    except TypeError as error:
        raise DTypeError(f"unsupported dtype {dtype!r}; choose one of {', '.join(DTYPES)}") from error
    if resolved not in SUPPORTED:
        raise DTypeError(f"unsupported dtype {resolved}; choose one of float32, float64, int32, int64, bool")
    return resolved


def is_floating_point(dtype: np.dtype) -> bool:
    return dtype.kind == "f"


def category(dtype: np.dtype) -> int:
    """0 for bool, 1 for integers, 2 for floats."""
    return 0 if dtype.kind == "b" else 2 if dtype.kind == "f" else 1


def scalar_dtype(value: Any) -> np.dtype:
    """The dtype a Python number takes part in promotion with: bool, int64 or the default float."""
    if isinstance(value, (builtins.bool, np.bool_)):
        return bool_
    if isinstance(value, (builtins.int, np.integer)):
        return int64
    if isinstance(value, (builtins.float, np.floating)):
        return _default_float
    raise DTypeError(f"cannot use {type(value).__name__} {value!r} as a tensor operand")


def promote(a: np.dtype | None, b: np.dtype | None) -> np.dtype | None:
    """PyTorch's promotion of two dtypes: the higher category wins, else the wider (int32 + float32 is float32)."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    if category(a) != category(b):
        return a if category(a) > category(b) else b
    return a if a.itemsize >= b.itemsize else b


def _combine(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    """PyTorch's rule: a lower-priority operand only counts when it is of a higher category."""
    if higher is None:
        return lower
    if lower is None or category(higher) >= category(lower):
        return higher
    return promote(higher, lower)


def result_type(*operands: Any) -> np.dtype:
    """The dtype of an element-wise op over tensors (anything with ``.dtype`` and ``.shape``) and Python numbers."""
    dim_result: np.dtype | None = None
    zero_dim_result: np.dtype | None = None
    scalar_result: np.dtype | None = None
    for x in operands:
        dtype = getattr(x, "dtype", None)
        if dtype is None:
            scalar_result = promote(scalar_result, scalar_dtype(x))
        elif len(x.shape) == 0:
            zero_dim_result = promote(zero_dim_result, dtype)
        else:
            dim_result = promote(dim_result, dtype)
    result = _combine(dim_result, _combine(zero_dim_result, scalar_result))
    assert result is not None, "result_type needs at least one operand"
    return result


def float_result(dtype: np.dtype) -> np.dtype:
    """``dtype`` if it is a float dtype, else the default float (true division, exp, mean of integers)."""
    return dtype if dtype.kind == "f" else _default_float
