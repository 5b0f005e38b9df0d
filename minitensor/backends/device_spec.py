"""PyTorch's device spellings read as minitensor backend names: ``"cuda:0"`` and ``0`` are the cuda backend,
``"cpu"``/``"cpu:1"`` the default CPU backend (resolved by :func:`minitensor.backends.get_backend`), a backend name
(``"simple"``, ``"fast"``, ``"cuda"``) itself.

minitensor has one cuda device, so a cuda index other than 0 is refused; a CPU index is kept (PyTorch keeps and
ignores it). Malformed specs (``"cuda:-1"``, ``"cuda:01"``, ``" cuda"``, an unknown type) raise BackendError with
PyTorch's wording.
"""

from __future__ import annotations

import operator
import re
from typing import Any

from ..errors import BackendError

BACKEND_TYPES = {"simple": "cpu", "fast": "cpu", "cuda": "cuda"}
"""Each backend's device type (PyTorch's ``device.type``)."""
DEVICE_TYPES = ("cpu", "cuda")
"""The PyTorch device types minitensor has."""

_SPEC = re.compile(r"([a-z]+)(?::(0|[1-9][0-9]*))?")


def _index(value: Any) -> int:
    """A device index: a non-negative int (not a bool)."""
    if isinstance(value, bool):
        raise TypeError(f"device(): argument 'index' must be int, not {type(value).__name__}")
    try:
        index = operator.index(value)
    except TypeError:
        raise TypeError(f"device(): argument 'index' must be int, not {type(value).__name__}") from None
    if index < 0:
        raise BackendError(f"Device index must not be negative, got {index}")
    return index


def split_device_spec(spec: Any, index: Any = None) -> tuple[str, int | None]:
    """(name, index) of a device spec: name is "cpu", "cuda" or a backend name, index the device index or None.
    ``spec`` is a string (``"cuda:0"``, ``"cpu"``, ``"fast"``) or an int (a cuda index); ``index`` may be given
    apart from a string without one."""
    if isinstance(spec, bool) or not isinstance(spec, (str, int)):
        raise TypeError(f"device() takes a str, an int or a device, got {type(spec).__name__} {spec!r}")
    if not isinstance(spec, str):
        if index is not None:
            raise TypeError(f"device(): an int device ({spec}) takes no separate index, got index={index!r}")
        return _checked("cuda", _index(spec))
    match = _SPEC.fullmatch(spec)
    if match is None:
        raise BackendError(f"Invalid device string: {spec!r}")
    name, written = match.group(1), match.group(2)
    if name not in DEVICE_TYPES and name not in BACKEND_TYPES:
        raise BackendError(f"Expected one of {', '.join(DEVICE_TYPES)} or a backend name "
                           f"({', '.join(BACKEND_TYPES)}) at the start of device string: {spec!r}")
    if written is not None:
        if index is not None:
            raise BackendError(f"type (string) must not include an index because index was passed explicitly: {spec}")
        if name not in DEVICE_TYPES:
            raise BackendError(f"a backend name takes no device index, got {spec!r} (use 'cpu:N' or 'cuda:0')")
        return _checked(name, int(written))
    return _checked(name, None if index is None else _index(index))


def _checked(name: str, index: int | None) -> tuple[str, int | None]:
    """(name, index), BackendError for a cuda index other than 0 or an index on a backend name."""
    if index is not None and name == "cuda" and index != 0:
        raise BackendError(f"minitensor has one cuda device (index 0), got cuda:{index}")
    if index is not None and name not in DEVICE_TYPES:
        raise BackendError(f"a backend name takes no device index, got {name!r} with index {index}")
    return name, index


def spec_backend_name(spec: Any) -> str:
    """The name :func:`minitensor.backends.get_backend` resolves for a device spec ("cpu" stays "cpu")."""
    return split_device_spec(spec)[0]


__all__ = ["BACKEND_TYPES", "DEVICE_TYPES", "spec_backend_name", "split_device_spec"]
