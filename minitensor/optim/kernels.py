"""The raw in-place kernels the optimizers update with (no autograd): element-wise ``zip_``/``map_`` written into a
parameter's or a state's storage, PyTorch's two-formula ``lerp_``, ``addcmul_``/``addcdiv_``, and the host-side step
counts (0-d float32 tensors, as PyTorch keeps them)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends import get_backend
from ..tensor import Tensor, _result

__all__ = [
    "zip_", "add_scaled_", "map_", "empty_like", "zeros_like", "lerp_", "lerp_scalars", "addcmul_", "addcdiv_", "bump",
    "step_tensor", "step_value", "host_number", "set_host_number",
]


def _lift(like: Tensor, value: Any) -> Tensor:
    """``value`` (a number, or a tensor returned as is) as a tensor on ``like``'s backend and of its dtype."""
    return value if isinstance(value, Tensor) else like._lift(float(value))


def zip_(op: str, a: Tensor, b: Any, out: Tensor | None = None) -> Tensor:
    """``out = a <op> b`` element-wise (``b`` a tensor or number), written into ``out`` (a fresh tensor when None)."""
    backend, data = a.backend, a._data
    if out is None:
        out = _result(backend.empty(data.shape, data.dtype), backend)
    backend.zip(op, data, (b if isinstance(b, Tensor) else a._lift(float(b)))._data, out._data)
    return out


def add_scaled_(a: Tensor, b: Tensor, alpha: Tensor, out: Tensor) -> Tensor:
    """``out = a + alpha * b`` (``alpha`` a 0-d tensor), one backend call (``Backend.add_scaled``)."""
    a.backend.add_scaled(a._data, b._data, alpha._data, out._data)
    return out


def map_(op: str, a: Tensor, out: Tensor | None = None) -> Tensor:
    """``out = op(a)`` element-wise, written into ``out`` (a fresh tensor when None)."""
    backend, data = a.backend, a._data
    if out is None:
        out = _result(backend.empty(data.shape, data.dtype), backend)
    backend.map(op, data, out._data)
    return out


def empty_like(p: Tensor) -> Tensor:
    """A fresh contiguous tensor of ``p``'s shape, dtype and backend, contents undefined (a temporary)."""
    backend, data = p.backend, p._data
    return _result(backend.empty(data.shape, data.dtype), backend)


def zeros_like(p: Tensor, value: float = 0.0) -> Tensor:
    """A fresh contiguous tensor of ``p``'s shape, dtype and backend filled with ``value``."""
    return Tensor(p.backend.from_numpy(np.full(p.shape, value, dtype=p.dtype)), p.backend)


def lerp_(start: Tensor, end: Tensor, weight: Tensor, rest: Tensor, small: bool, scratch: Tensor | None = None) -> None:
    """``start += weight * (end - start)`` in place, with PyTorch's two formulas (``Tensor.lerp_``): for a
    ``small`` weight (|weight| < 0.5) ``start + weight * diff``, else ``end - rest * diff`` with ``rest`` = 1 - weight
    rounded to the dtype (see :func:`lerp_scalars`). ``scratch`` (start's shape and dtype, aliasing no operand) holds
    the difference instead of a fresh buffer."""
    diff = zip_("sub", end, start, out=scratch)
    if small:
        zip_("add", start, zip_("mul", diff, weight, out=diff), out=start)
    else:
        zip_("sub", end, zip_("mul", diff, rest, out=diff), out=start)


def lerp_scalars(weight: float, dtype: Any) -> tuple[float, float]:
    """(weight, 1 - weight computed in ``dtype``): the two numbers :func:`lerp_` reads."""
    return weight, float(np.asarray(1, dtype) - np.asarray(weight, dtype))


def addcmul_(target: Tensor, a: Tensor, b: Tensor, value: Tensor | None, scratch: Tensor | None = None) -> None:
    """``target += value * a * b`` in place (``Tensor.addcmul_``); ``value`` None means 1; ``scratch`` as for
    :func:`lerp_`."""
    t = zip_("mul", a, value, out=scratch) if value is not None else zip_("mul", a, b, out=scratch)
    if value is not None:
        zip_("mul", t, b, out=t)
    zip_("add", target, t, out=target)


def addcdiv_(target: Tensor, a: Tensor, b: Tensor, value: Tensor | None, scratch: Tensor | None = None) -> None:
    """``target += value * a / b`` in place (``Tensor.addcdiv_``); ``value`` None means 1; ``scratch`` as for
    :func:`lerp_`."""
    t = zip_("mul", a, value, out=scratch) if value is not None else a
    zip_("add", target, zip_("div", t, b, out=scratch if t is a else t), out=target)


def bump(p: Tensor) -> None:
    """Record an in-place write of ``p`` (graphs that saved it refuse to backpropagate, as in PyTorch)."""
    p._bump_version()


_STEP_BACKEND = "simple"


def step_tensor(value: float) -> Tensor:
    """A ``step`` count as PyTorch keeps it: a 0-d float32 tensor on the host (whatever the parameter's backend)."""
    backend = get_backend(_STEP_BACKEND)
    return Tensor(backend.from_numpy(np.array(value, dtype=np.float32)), backend)


def step_value(state: dict[str, Any]) -> float:
    """The state's ``step`` count plus one, stored back as a tensor; returns the new count."""
    step = float(state["step"].item()) + 1.0
    state["step"] = step_tensor(step)
    return step


def host_number(t: Tensor) -> float:
    """The value of a host scalar such as ``step`` (a :func:`step_tensor`), read from its NumPy storage rather than
    through the backend, so a guard key may call it while ``minitensor.compile`` traces (no recorded read)."""
    return float(t._data.storage[0])


def set_host_number(t: Tensor, value: float) -> None:
    """Overwrite a host scalar such as NAdam's ``mu_product`` in place (rounded to its dtype). In place, not rebound:
    ``minitensor.compile`` restores rebound state tensors after a replay, so a rebound host value would go stale."""
    t._data.storage[0] = value
