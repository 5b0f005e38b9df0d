"""``torch.device`` over minitensor's backends: :class:`device`, ``get_default_device`` and ``set_default_device``.

A minitensor device *is* a backend name: ``device`` is a ``str`` whose value is the name of the backend it selects
(``"simple"``, ``"fast"`` or ``"cuda"``), so ``x.device == "fast"`` holds and every ``device=``/``backend=``/``.to()``
path that takes a backend name takes a device unchanged. On top it has PyTorch's ``.type`` (``"cpu"`` for the CPU
backends, ``"cuda"``) and ``.index`` (None, or the index given; a cuda tensor's device has index 0, as PyTorch's).
``device("cpu")`` selects the default CPU backend when it is made (the default backend, or ``fast`` when the default is
``cuda``). Equality and hashing are the string's: ``device("cuda") == device("cuda:0")`` (one cuda device).

``get_default_device``/``set_default_device`` read and set the default backend
(:func:`minitensor.backends.set_default_backend`); a device is also a context manager that makes itself the default
for a block (``with mt.device("simple"): ...``), as PyTorch's.
"""

from __future__ import annotations

from typing import Any

from . import backends
from .backends import BUILTIN_DEFAULT, Backend, default_backend_name, set_default_backend
from .backends.device_spec import BACKEND_TYPES, split_device_spec


def _cpu_backend_name() -> str:
    """The backend "cpu" selects now: the default one unless that is cuda (then the built-in CPU default)."""
    name = default_backend_name()
    return name if BACKEND_TYPES[name] == "cpu" else BUILTIN_DEFAULT


class device(str):  # noqa: N801 - PyTorch's name
    """``torch.device``: ``device("cuda:0")``, ``device("cuda", 0)``, ``device(0)`` (a cuda index), ``device("cpu")``,
    ``device("fast")`` (a backend name) or ``device(other_device)``; the string value is the backend's name."""

    _type: str
    _index: int | None
    _previous: list[str | None]

    def __new__(cls, type: Any, index: Any = None) -> device:  # noqa: A002 - PyTorch's parameter name
        if isinstance(type, device) and index is None:
            return type
        if isinstance(type, Backend):
            type = type.name  # noqa: A001
        name, idx = split_device_spec(type, index)
        backend = _cpu_backend_name() if name == "cpu" else name
        self = super().__new__(cls, backend)
        self._type, self._index, self._previous = BACKEND_TYPES[backend], idx, []
        return self

    @property
    def type(self) -> str:
        """PyTorch's device type: "cpu" (simple, fast) or "cuda"."""
        return self._type

    @property
    def index(self) -> int | None:  # type: ignore[override]
        """The device index given (None when none was); a cuda tensor's device has index 0."""
        return self._index

    def __repr__(self) -> str:
        if self._type == "cuda":
            return "device(type='cuda')" if self._index is None else f"device(type='cuda', index={self._index})"
        index = "" if self._index is None else f", index={self._index}"
        return f"device(type='cpu'{index}, backend={str(self)!r})"

    def __enter__(self) -> device:
        """Make this device the default for new tensors until the block ends (PyTorch's ``with torch.device(...)``)."""
        self._previous.append(_default_name())
        set_default_backend(str(self))
        return self

    def __exit__(self, *exc: object) -> None:
        set_default_backend(self._previous.pop())


Device = device
"""The class under a name that does not shadow ``Tensor.device`` in other modules."""

_OF_BACKEND: dict[str, device] = {}


def device_of(backend_name: str) -> device:
    """The device of a tensor on ``backend_name`` (cuda: index 0, as PyTorch's tensors report), cached."""
    found = _OF_BACKEND.get(backend_name)
    if found is None:
        found = _OF_BACKEND[backend_name] = device(backend_name, 0 if backend_name == "cuda" else None)
    return found


def _default_name() -> str | None:
    """What set_default_backend was last given (None: the environment's or built-in default)."""
    return backends._default_name


def get_default_device() -> device:
    """The device new tensors go to when none is given: the default backend's (``torch.get_default_device``)."""
    return device_of(default_backend_name())


def set_default_device(device: Any) -> None:  # noqa: A002 - PyTorch's parameter name
    """Make ``device`` (a device, spec, index or backend name; None restores the environment's or built-in default)
    the default for new tensors (``torch.set_default_device``; the same as ``set_default_backend``)."""
    set_default_backend(None if device is None else str(Device(device)))


__all__ = ["device", "get_default_device", "set_default_device"]
