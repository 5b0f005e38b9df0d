"""Pre-planned calls for the ``fast`` backend: each recorded kernel call bound to its Numba kernel and arguments.

The backend's own planning (layouts, kernel choice, parallel or serial build) runs once, at plan time, on scratch
copies of the call's buffers, while calls of compiled Numba functions are intercepted to note which kernel each
launch calls with which arguments. The call is then rebound to the real buffers and checked: run on
scratch copies, it must give bit for bit what the backend method gives, else the plan keeps calling the method.
Dense float matmuls (BLAS through ``np.matmul``) are bound to ``np.matmul`` on fixed views of the buffers. Calls the
backend would give to an exact NumPy twin (small work, :mod:`minitensor.backends.fast_numpy`) are planned on its
kernels instead (the same bits): a pre-bound kernel costs less per call than a twin, and element-wise kernels fuse.
Nothing in :mod:`minitensor.backends.fast` is changed.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import numba
import numpy as np
from numba.core.registry import CPUDispatcher

from ..backends import fast_numpy
from ..backends.base import strided_view
from ..backends.fast_plan import SPLIT_MIN_LENGTH
from ..tensor_data import TensorData, normalize_dim
from .capture import Op

Call = Callable[[], Any]


@contextmanager
def _recording_launches(calls: list[tuple[Any, tuple]]) -> Any:
    """While active, every call of a compiled Numba function from Python in this thread is noted (function,
    arguments) and run."""
    thread = threading.get_ident()
    had = "__call__" in CPUDispatcher.__dict__
    previous = CPUDispatcher.__dict__.get("__call__")
    real = CPUDispatcher.__call__

    def recording(self: Any, *args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() != thread:
            return real(self, *args, **kwargs)
        if kwargs:
            raise TypeError("keyword arguments to a kernel are not recorded")
        calls.append((self, args))
        return real(self, *args)

    CPUDispatcher.__call__ = recording  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        if had:
            CPUDispatcher.__call__ = previous  # type: ignore[method-assign, assignment]
        else:
            del CPUDispatcher.__call__


def _blas(a: TensorData, b: TensorData, out: TensorData) -> Call:
    """``np.matmul`` on views of the three buffers (the fast backend's BLAS route), batch dims expanded as it does."""
    batch = out.shape[:-2]
    a = a if a.shape[:-2] == batch else a.expand(batch + a.shape[-2:])
    b = b if b.shape[:-2] == batch else b.expand(batch + b.shape[-2:])
    return functools.partial(np.matmul, strided_view(a), strided_view(b), out=strided_view(out, writeable=True))


def _entry(kernel: Any, args: list[Any]) -> Any:
    """The compiled entry point of ``kernel`` for exactly these argument types (skipping the dispatcher's per-call
    type matching, a few microseconds per launch), or the dispatcher when none was compiled for them."""
    try:
        types = tuple(numba.typeof(a) for a in args)
        compiled = kernel.overloads.get(types)
    except Exception:  # noqa: BLE001 - an argument Numba cannot type: the dispatcher decides
        return kernel
    return kernel if compiled is None else compiled.entry_point


def _swapped(x: Any, mapping: dict[int, Any]) -> Any:
    """``x`` swapped by ``mapping`` (by id); a view of all of a mapped storage (the general walkers take storages as
    bytes) becomes the same view of its swap; anything else stays."""
    found = mapping.get(id(x))
    if found is not None or type(x) is not np.ndarray:
        return x if found is None else found
    base = x.base
    if base is not None and id(base) in mapping and x.nbytes == base.nbytes and x.ctypes.data == base.ctypes.data:
        return mapping[id(base)].view(x.dtype)
    return x


def _rebind(launches: list[tuple[Any, tuple]], mapping: dict[int, Any], direct: bool = False) -> Call:
    """The recorded launches as one call, with scratch storages swapped for ``mapping``'s (``direct``: calling the
    compiled entry points)."""
    bound = []
    for kernel, args in launches:
        mapped = [_swapped(x, mapping) for x in args]
        bound.append(functools.partial(_entry(kernel, mapped) if direct else kernel, *mapped))
    if len(bound) == 1:
        return bound[0]

    def run() -> None:
        for call in bound:
            call()

    return run


_kernel_backends: dict[tuple[bool, bool], Any] = {}


def _kernel_method(op: Op) -> Callable[..., Any]:
    """``op``'s method on a twin of its backend that runs Numba kernels where it would run an exact NumPy twin."""
    backend: Any = op.backend
    if not getattr(backend, "use_numpy_twins", False):
        return op.method
    key = (backend.use_blas, backend.use_numpy_math)
    twin_free = _kernel_backends.get(key)
    if twin_free is None:
        twin_free = _kernel_backends[key] = type(backend)(*key, use_numpy_twins=False)
    return getattr(twin_free, op.method.__name__)


def _numpy_reduction(op: Op) -> Callable[..., None] | None:
    """The NumPy reduction the fast backend runs for ``op`` when it is a small float ``reduce`` (``use_numpy_math``):
    a call on (a's storage, out's storage); else None."""
    if op.name != "reduce" or not getattr(op.backend, "use_numpy_math", False) or len(op.args) != 4:
        return None
    name, a, dim, out = op.args
    if not a.dims or not out.size or a.shape[dim] >= SPLIT_MIN_LENGTH:  # a long fold is split first
        return None
    return fast_numpy.reduce_math(name, a, normalize_dim(dim, a.dims), out)


def bind_fast(op: Op) -> Call | None:
    """``op`` bound to its kernel(s) and planned arguments, or None to keep calling the backend method."""
    if type(op.backend).__name__ != "FastBackend":
        return None
    method = _kernel_method(op)
    datas = [a for a in (*op.args, *op.kwargs.values()) if isinstance(a, TensorData)]
    if not datas or not all(isinstance(d.storage, np.ndarray) for d in datas):
        return None
    scratch = {id(d.storage): d.storage.copy() for d in datas}  # real storage id -> scratch copy

    def swap(a: Any) -> Any:
        return TensorData(scratch[id(a.storage)], a.shape, a.strides) if isinstance(a, TensorData) else a

    args, kwargs = [swap(a) for a in op.args], {k: swap(v) for k, v in op.kwargs.items()}
    launches: list[tuple[Any, tuple]] = []
    try:
        with _recording_launches(launches), np.errstate(all="ignore"):
            method(*args, **kwargs)
    except Exception:  # noqa: BLE001 - an unexpected planning path: keep the method
        return None
    to_real = {id(scratch[id(d.storage)]): d.storage for d in datas}
    numpy_route = _numpy_reduction(op)
    check: Call
    real: Call
    if numpy_route is not None:  # a small float sum/prod: eager's NumPy reduction, without the method's lookups
        check = functools.partial(numpy_route, args[1].storage, args[3].storage)
        real = functools.partial(numpy_route, op.args[1].storage, op.args[3].storage)
    elif launches:
        check, real = _rebind(launches, {}, direct=True), _rebind(launches, to_real, direct=True)
    elif op.name == "matmul" and len(datas) == 3:
        check, real = _blas(*args[:3]), _blas(*op.args[:3])
    else:
        return None
    # Check on other values than the recording saw (floats redrawn; integers, often indices, kept), so a binding that
    # missed work done outside Numba (a NumPy pass into a temporary the kernel then reads) cannot pass.
    rng = np.random.default_rng(0)
    fresh = {key: (rng.standard_normal(a.shape).astype(a.dtype) if a.dtype.kind == "f" else a.copy())
             for key, a in scratch.items()}
    for key, array in scratch.items():
        np.copyto(array, fresh[key])
    with np.errstate(all="ignore"):
        op.method(*args, **kwargs)
        expected = {key: array.copy() for key, array in scratch.items()}
        for key, array in scratch.items():
            np.copyto(array, fresh[key])
        check()
    same = all(np.array_equal(scratch[key], expected[key], equal_nan=True) for key in scratch)
    return real if same else None
