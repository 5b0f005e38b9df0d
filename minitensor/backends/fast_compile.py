"""How the ``fast`` backend's Numba kernels are compiled and loaded: one process compiles a kernel while others wait
for its disk cache (a file lock per kernel module, so pytest-xdist workers and MPI ranks do not compile the same
kernel twice), cached kernels load without Numba's target-context refresh, and an op's element-wise loops become C
functions (``cfunc``) that the walkers call by address. :mod:`minitensor.backends.fast_codegen` writes the modules
these act on."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from numba.core import sigutils
from numba.core.ccallback import CFunc
from numba.core.dispatcher import Dispatcher
from numba.core.errors import NumbaPerformanceWarning
from numba.core.runtime import rtsys

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: concurrent processes may compile the same kernel twice
    fcntl = None  # type: ignore[assignment]

_compiling = threading.local()


def _locked_compile(compile_: Callable[[Any], Any], lock_path: Path) -> Callable[[Any], Any]:
    """``compile_`` (a Numba dispatcher's ``compile``, called only on a cache miss) under an exclusive lock on
    ``lock_path``: a second process wanting the same kernel waits, then finds it in Numba's disk cache instead of
    compiling it again (pytest-xdist workers, MPI ranks). Nested compiles in this thread do not lock again."""

    def compile_once(sig: Any) -> Any:
        if fcntl is None or getattr(_compiling, "active", False):
            return quiet(sig)
        _compiling.active = True
        try:
            with open(lock_path, "a") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)
                try:
                    return quiet(sig)
                finally:
                    fcntl.flock(handle, fcntl.LOCK_UN)
        finally:
            _compiling.active = False

    def quiet(sig: Any) -> Any:
        with warnings.catch_warnings():  # a serial build asks for Numba's parallel passes without parallel loops
            warnings.filterwarnings("ignore", r"\s*The keyword argument 'parallel=True' was specified",
                                    NumbaPerformanceWarning)
            return compile_(sig)

    return compile_once


def load_without_refresh(cache: Any) -> None:
    """Make ``cache`` (a Numba function cache) load a kernel without first refreshing the target context.

    Numba's ``load_overload`` refreshes the context before reading the disk cache: it imports and installs every
    typing and lowering registry (SciPy's linalg among them), 0.6 s of a warm process's first second, which only
    compiling needs (the compiler refreshes the context itself on a miss). A cached kernel needs the symbols its
    object code calls: Numba's C helpers and exception classes (installed when the context is made), the thread pool's
    (re-installed by the kernel's own reload hook) and the reference-counting runtime, initialised here."""
    if not all(hasattr(cache, name) for name in ("_load_overload", "_guard_against_spurious_io_errors")):
        return  # another Numba: keep its own path

    def load_overload(sig: Any, target_context: Any) -> Any:
        rtsys.initialize(target_context)
        with cache._guard_against_spurious_io_errors():
            return cache._load_overload(sig, target_context)
        return None  # the guard swallowed an I/O error: compile instead

    cache.load_overload = load_overload


def serialize_compiles(module: ModuleType, lock_path: Path) -> None:
    """Route every Numba dispatcher of ``module`` through :func:`_locked_compile`, and load cached ones without
    the context refresh (:func:`load_without_refresh`)."""
    for value in list(vars(module).values()):
        if isinstance(value, Dispatcher):
            value.compile = _locked_compile(value.compile, lock_path)  # type: ignore[method-assign, assignment]
            load_without_refresh(getattr(value, "_cache", None))


_c_functions: dict[tuple[str, str, Any], Any] = {}


def c_function(module: ModuleType, name: str, signature: Any) -> Any:
    """``module``'s function ``name`` compiled as a C function (a Numba ``cfunc``: call it by its ``.address``) for
    ``signature``, cached on disk like the module's kernels and compiled under the same cross-process lock. The
    ``cfunc`` is kept for the life of the process, so its address stays valid."""
    key = (module.__name__, name, signature)
    found = _c_functions.get(key)
    if found is None:
        compile_ = _locked_compile(lambda sig: _cached_c_function(getattr(module, name), sig),
                                   Path(module.__file__).with_suffix(".lock"))  # type: ignore[arg-type]
        found = _c_functions[key] = compile_(signature)
    return found


def _cached_c_function(function: Callable[..., Any], signature: Any) -> CFunc:
    """``numba.cfunc(signature, cache=True)(function)``, loading from the disk cache without the context refresh."""
    compiled = CFunc(function, sigutils.normalize_signature(signature), locals={}, options={})
    compiled.enable_caching()
    load_without_refresh(getattr(compiled, "_cache", None))
    compiled.compile()
    return compiled
