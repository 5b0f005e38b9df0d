"""Backend registry: resolve a name (or ``MINITENSOR_BACKEND``) to a backend instance.

Each backend lives in its own module exposing a module-level ``backend`` instance; modules are
imported only when first asked for, so a missing optional dependency (CUDA) costs nothing.
"""

from __future__ import annotations

import importlib
import os

from ..errors import BackendError
from .base import Backend
from .device_spec import spec_backend_name

BACKEND_MODULES = {
    "simple": "minitensor.backends.simple",
    "fast": "minitensor.backends.fast",
    "cuda": "minitensor.backends.cuda",
}
ENV_VAR = "MINITENSOR_BACKEND"
BUILTIN_DEFAULT = "fast"

_default_name: str | None = None
_loaded: dict[str, Backend] = {}  # name -> instance, once its module is imported


def backend_names() -> list[str]:
    """Names accepted by :func:`get_backend` ("cpu" is also accepted, as the default CPU backend)."""
    return list(BACKEND_MODULES)


def get_backend(name: str | int | Backend | None = None) -> Backend:
    """The backend called ``name``; None means the default (see :func:`default_backend_name`); PyTorch's device specs
    (``"cuda:0"``, ``"cpu:0"``, a cuda index ``0``) name the backends they select."""
    if isinstance(name, Backend):
        return name
    if name is None:
        name = default_backend_name()
    loaded = _loaded.get(name)  # type: ignore[arg-type]  # an int spec is simply not found
    if loaded is not None:
        return loaded
    if not isinstance(name, str) or ":" in name:  # PyTorch's device specs: "cuda:0", "cpu:0", 0 (device_spec.py)
        name = spec_backend_name(name)
    if name == "cpu":  # PyTorch's device name: the default backend unless that is the GPU one
        name = default_backend_name() if default_backend_name() != "cuda" else BUILTIN_DEFAULT
    if name not in BACKEND_MODULES:
        raise BackendError(f"unknown backend {name!r}; choose one of {', '.join(BACKEND_MODULES)}")
    module = importlib.import_module(BACKEND_MODULES[name])
    backend: Backend = module.backend
    _loaded[name] = backend
    return backend


def default_backend_name() -> str:
    """set_default_backend() if called, else $MINITENSOR_BACKEND, else the built-in default."""
    name = _default_name or os.environ.get(ENV_VAR) or BUILTIN_DEFAULT
    if name not in BACKEND_MODULES:
        raise BackendError(f"unknown backend {name!r} (from ${ENV_VAR}); choose one of {', '.join(BACKEND_MODULES)}")
    return name


def set_default_backend(name: str | None) -> None:
    """Make ``name`` the default for new tensors (None restores the environment/built-in default)."""
    global _default_name
    if name is not None:
        get_backend(name)
    _default_name = name


__all__ = ["Backend", "backend_names", "get_backend", "default_backend_name", "set_default_backend"]
