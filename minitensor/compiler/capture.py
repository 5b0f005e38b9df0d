"""Recording a function's backend calls: the trace half of :func:`minitensor.compile`.

While a :class:`Trace` is active, the kernel, allocation and read methods of every loaded backend instance are
shadowed by recording wrappers (instance attributes over the class methods, removed on exit), so no other file
needs a hook. Only calls made by the tracing thread, at top level (not from inside another backend call) and outside
:func:`host_step` blocks are recorded. Random draws from minitensor's generator are recorded too, so a replay can
draw again; reading a tensor's value back to Python (``.item()``, ``float()``, ``bool()``, ``.tolist()``,
``.to_numpy()``) from user code raises :class:`~minitensor.errors.CompileError`.

Optimizers (and any code whose per-step Python values would otherwise freeze) use :func:`host_step` to mark work
that a replay must run again, and :func:`add_guard` for host values that decide which kernels run.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import random_state
from ..backends import BACKEND_MODULES
from ..backends.base import Backend
from ..errors import CompileError
from ..tensor_data import TensorData

ALLOCATORS = ("empty", "zeros", "from_numpy", "constant")
NOT_KERNELS = frozenset({"to_numpy", "synchronize", *ALLOCATORS})
OUTPUTS: dict[str, tuple[int, ...]] = {
    "map": (-1,), "zip": (-1,), "reduce": (-1,), "matmul": (-1,), "where": (-1,), "gather": (-1,),
    "scatter_add": (-1,), "scan": (-1,), "sort": (-2, -1), "add_scaled": (-1,),
}
"""Positions of the written arguments of the documented kernels; any other kernel is assumed to write every
TensorData argument it gets (conservative: it only costs refills and copies)."""
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_PLUMBING = (os.path.join(_PACKAGE, "tensor.py"), os.path.join(_PACKAGE, "backends") + os.sep, os.path.abspath(__file__))
VALIDATION_SITES = frozenset({
    ("nn/cross_entropy.py", "_class_target"), ("nn/losses.py", "one_hot"), ("nn/losses.py", "binary_cross_entropy"),
    ("nn/sparse.py", "_check_indices"), ("tensor_index.py", "_check_range"), ("tensor_math.py", "_check_divisor"),
    ("tensor_random.py", "_check_probabilities"), ("tensor_random.py", "_check_std"),
})
"""Library functions that read values back only to validate them (class-index and range checks): allowed while
tracing; replays call them again before the kernels when they check the inputs (see :class:`~.plan.Plan`)."""

_active: Trace | None = None


def active() -> Trace | None:
    """The trace recording in this thread, if any."""
    trace = _active
    return trace if trace is not None and trace.thread == threading.get_ident() else None


def host_step(run: Callable[[], Any]) -> Any:
    """Run ``run()`` now and return its result. Under a trace its backend calls are not recorded, and each replay
    runs it again (before the recorded kernels), so host values it computes (step counts, learning rates, bias
    corrections written into small tensors the kernels read) stay live. ``run`` must not read kernel results."""
    trace = active()
    if trace is None or trace.paused:  # not tracing, or inside another host step (which a replay repeats whole)
        return run()
    trace.paused += 1
    try:
        result = run()
    finally:
        trace.paused -= 1
    trace.host_steps.append(run)
    return result


def add_guard(key: Callable[[], Any]) -> None:
    """Under a trace: the plan is only replayed while ``key()`` equals its value now (else the call re-traces).
    Use it for host values that choose which kernels run (a hyperparameter that is zero or not)."""
    trace = active()
    if trace is not None:
        trace.guards.append((key, key()))


def root_of(storage: Any) -> Any:
    """The allocation that ``storage`` (a NumPy array, a device array or a slice of one) is part of."""
    array = getattr(storage, "_ary", storage)  # the CUDA simulator's device arrays wrap a NumPy array
    if isinstance(array, np.ndarray):
        while isinstance(array.base, np.ndarray):
            array = array.base
        return array
    gpu = getattr(storage, "gpu_data", None)
    return storage if gpu is None else getattr(gpu, "owner", gpu)


@dataclass
class Draw:
    """One call of a method of minitensor's random generator, with its result."""

    method: str
    args: tuple
    kwargs: dict
    result: Any
    used: bool = False

    def again(self) -> Any:
        """The same call on the generator minitensor uses now (a replay's draw)."""
        return getattr(random_state.generator(), self.method)(*self.args, **self.kwargs)


@dataclass
class Alloc:
    """A buffer the traced function allocated: its data, how (empty/zeros/from_numpy/constant) and its initial contents."""

    data: TensorData
    kind: str
    backend: Backend
    contents: np.ndarray | None = None
    draw: Draw | None = None


@dataclass
class Op:
    """One recorded kernel call."""

    backend: Backend
    name: str
    method: Callable[..., Any]
    args: tuple
    kwargs: dict

    def outputs(self) -> list[TensorData]:
        """The TensorData arguments this call writes."""
        if self.name in OUTPUTS:
            return [self.args[i] for i in OUTPUTS[self.name]]
        return [a for a in (*self.args, *self.kwargs.values()) if isinstance(a, TensorData)]

    def inputs(self) -> list[TensorData]:
        """The TensorData arguments this call reads (scatter_add also reads its output)."""
        tensors = [a for a in (*self.args, *self.kwargs.values()) if isinstance(a, TensorData)]
        if self.name in OUTPUTS and self.name != "scatter_add":
            written = {id(a) for a in self.outputs()}
            return [a for a in tensors if id(a) not in written]
        return tensors


class _Generator:
    """Stands in for minitensor's generator during a trace: draws from it and records each draw."""

    def __init__(self, real: np.random.Generator, trace: Trace):
        self._real, self._trace = real, trace

    def recording(self) -> bool:
        """Whether draws made now are recorded (random_state refuses, then, what a replay could not repeat)."""
        return self._trace.recording()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._real, name)
        if not callable(attr):
            return attr

        def draw(*args: Any, **kwargs: Any) -> Any:
            result = attr(*args, **kwargs)
            if self._trace.recording():
                self._trace.draws.append(Draw(name, args, kwargs, result))
            return result

        return draw


@dataclass
class Trace:
    """The record of one traced call: kernel calls in order, allocations, random draws, host steps and guards."""

    backends: list[Backend]
    thread: int = field(default_factory=threading.get_ident)
    ops: list[Op] = field(default_factory=list)
    allocs: list[Alloc] = field(default_factory=list)
    draws: list[Draw] = field(default_factory=list)
    host_steps: list[Callable[[], Any]] = field(default_factory=list)
    guards: list[tuple[Callable[[], Any], Any]] = field(default_factory=list)
    checks: list[tuple[Callable[..., Any], tuple, dict, list[TensorData]]] = field(default_factory=list)
    _checked_frames: dict[int, list[TensorData]] = field(default_factory=dict)
    paused: int = 0
    depth: int = 0
    _installed: list[tuple[Backend, str, bool, Any]] = field(default_factory=list)
    _generator: _Generator | None = None

    def recording(self) -> bool:
        return not self.paused and not self.depth and threading.get_ident() == self.thread

    # --- install / remove ---

    def __enter__(self) -> Trace:
        global _active
        if _active is not None:
            raise CompileError("a compiled function was called while another one was being traced; "
                               "compiled functions do not nest (call the inner function uncompiled)")
        seen: set[int] = set()
        for backend in [*self.backends, *loaded_backends()]:
            if id(backend) not in seen:
                seen.add(id(backend))
                self._install(backend)
        self._generator = _Generator(random_state.generator(), self)
        random_state._rng = self._generator  # type: ignore[assignment]
        _active = self
        return self

    def __exit__(self, *exc: object) -> None:
        global _active
        _active = None
        for backend, name, had, previous in reversed(self._installed):
            if had:
                setattr(backend, name, previous)
            else:
                backend.__dict__.pop(name, None)
        self._installed.clear()
        generator = self._generator
        if generator is not None and random_state._rng is generator:
            random_state._rng = generator._real

    def _install(self, backend: Backend) -> None:
        for name in dir(type(backend)):
            if name.startswith("_") or not callable(getattr(type(backend), name, None)):
                continue
            method = getattr(backend, name)
            if name in ALLOCATORS:
                wrapper = self._allocator(backend, name, method)
            elif name == "to_numpy":
                wrapper = self._reader(method)
            elif name in NOT_KERNELS:
                continue
            else:
                wrapper = self._kernel(backend, name, method)
            self._installed.append((backend, name, name in backend.__dict__, backend.__dict__.get(name)))
            setattr(backend, name, wrapper)

    # --- wrappers ---

    def _kernel(self, backend: Backend, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def kernel(*args: Any, **kwargs: Any) -> Any:
            if not self.recording():
                return method(*args, **kwargs)
            self.depth += 1
            try:
                result = method(*args, **kwargs)
            finally:
                self.depth -= 1
            if isinstance(result, TensorData):  # a helper that allocates: keep its buffer as a constant
                self.allocs.append(Alloc(result, "from_numpy", backend, backend.to_numpy(result)))
            elif result is None:
                self.ops.append(Op(backend, name, method, args, kwargs))
            return result

        return kernel

    def _allocator(self, backend: Backend, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def allocate(*args: Any, **kwargs: Any) -> Any:
            if not self.recording():
                return method(*args, **kwargs)
            self.depth += 1
            try:
                data = method(*args, **kwargs)
            finally:
                self.depth -= 1
            alloc = Alloc(data, name, backend)
            if name == "constant":  # (value, dtype): a 0-d operand the backend may share between calls
                alloc.contents = np.array(args[0], dtype=args[1])
            if name == "from_numpy":
                array = np.asarray(args[0] if args else kwargs["array"])
                alloc.contents = np.array(array, copy=True)
                alloc.draw = self._drawn(array)
            self.allocs.append(alloc)
            return data

        return allocate

    def _drawn(self, array: np.ndarray) -> Draw | None:
        """The unused random draw whose values ``array`` holds (after a dtype conversion), if any."""
        for draw in reversed(self.draws):
            result = draw.result
            if draw.used or not isinstance(result, np.ndarray) or result.shape != array.shape:
                continue
            if result is array or np.array_equal(result.astype(array.dtype), array, equal_nan=True):
                draw.used = True
                return draw
        return None

    def _reader(self, method: Callable[..., Any]) -> Callable[..., Any]:
        def read(*args: Any, **kwargs: Any) -> Any:
            if self.recording():
                self._check_read(args[0] if args else kwargs["data"])
            return method(*args, **kwargs)

        return read

    def _check_read(self, data: TensorData) -> None:
        """Allow the library's validation reads; raise CompileError for a value read anywhere else."""
        frame: Any = sys._getframe(2)
        what = "to_numpy"
        while frame is not None and frame.f_code.co_filename.startswith(_PLUMBING):
            if frame.f_code.co_filename == _PLUMBING[0]:
                what = frame.f_code.co_name
            frame = frame.f_back
        if frame is None:
            return
        path, func = frame.f_code.co_filename, frame.f_code.co_name
        if path.startswith(_PACKAGE) and (path[len(_PACKAGE):].replace(os.sep, "/"), func) in VALIDATION_SITES:
            self._note_check(frame, data)
            return
        shown = {"__bool__": "bool(tensor)", "__float__": "float(tensor)", "__int__": "int(tensor)",
                 "__index__": "using a tensor as an index", "__array__": "np.asarray(tensor)", "__repr__": "repr(tensor)"}
        where = f"{os.path.relpath(path) if not path.startswith('<') else path}:{frame.f_lineno} in {func}()"
        raise CompileError(
            f"{shown.get(what, what + '()')} reads a tensor's value back to Python inside a compiled function "
            f"(at {where}). A compiled function is recorded once and replayed without running its Python code, so "
            "the value (and any branch taken on it) would be frozen at its first call. Read values after the "
            "compiled call returns (its outputs are ordinary tensors), or call the function uncompiled."
        )

    def _note_check(self, frame: Any, data: TensorData) -> None:
        """Keep the validating call (function and arguments, and the data it reads) so that replays can run it again
        on their data."""
        reads = self._checked_frames.get(id(frame))
        if reads is not None:
            reads.append(data)
            return
        reads = self._checked_frames[id(frame)] = [data]
        function = frame.f_globals.get(frame.f_code.co_name)
        info = inspect.getargvalues(frame)
        args = [info.locals[name] for name in info.args]
        if info.varargs:
            args.extend(info.locals[info.varargs])
        kwargs = dict(info.locals[info.keywords]) if info.keywords else {}
        if callable(function):
            self.checks.append((function, tuple(args), kwargs, reads))

    def finish(self) -> None:
        """Checks after the traced call: every random draw reached a tensor, and the generator was not replaced."""
        unused = [d for d in self.draws if not d.used]
        if unused:
            raise CompileError(
                f"random numbers drawn inside a compiled function ({unused[0].method}{unused[0].args}) were used on "
                "the host instead of becoming a tensor directly, so a replay could not draw them again; draw them "
                "with minitensor's rand/randn/rand_like (dropout does), or call the function uncompiled"
            )
        if random_state._rng is not self._generator:
            raise CompileError("manual_seed() was called inside a compiled function; seed outside it")


def loaded_backends() -> list[Backend]:
    """The instances of the built-in backends whose modules are imported (others cannot have run a kernel)."""
    found = []
    for module_name in BACKEND_MODULES.values():
        module = sys.modules.get(module_name)
        if module is not None:
            found.append(importlib.import_module(module_name).backend)
    return found
