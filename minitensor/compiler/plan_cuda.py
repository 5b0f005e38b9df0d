"""Pre-planned calls for the ``cuda`` backend: each recorded call bound to its kernel launches, planned once.

Every launch of the cuda backend goes through ``CudaBackend._launch`` (kernel, grid, block, arguments). At plan time
a recorded call runs on a *planner*: a subclass instance of the call's backend whose ``_launch`` notes the launch
instead of running it. The backend's own code therefore does all its per-call work once (layout coalescing, compute
type and kernel choice, launch geometry, the argument tuples) and the replay only launches. Composite methods (the
base class's softmax, softmax_backward, add_scaled, layer norm) allocate their temporaries once, on the planner, and
the plan keeps them: a replay allocates nothing. Those temporaries are dead once their call returns, so the calls of
one plan share them (a :class:`ScratchPool`: a buffer of a given size and dtype serves every call that needs one).
Nothing runs on the device while planning, except the upload of a constant a composite creates (``from_numpy`` of
more than one element): its values are copied once into a buffer the plan owns, and each replay copies them device
to device into the buffer the call uses (as eager would have a fresh copy). A call whose planning reads values back
(``to_numpy``) keeps calling the backend method.

A launch is bound to ``kernel[grid, block]`` (the configured launcher, looked up once); on a real GPU, to the kernel
compiled for exactly these argument types (the traced eager call compiled it; a fused kernel is compiled at plan
time) and its ``launch`` with the configuration's normalised geometry and stream, which skips the dispatcher's
per-launch type matching.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import CompileError
from ..tensor_data import TensorData
from .capture import Op

Call = Callable[[], Any]
Launch = tuple[Any, Any, Any, tuple]  # kernel, grid, block, args

_planners: dict[type, Any] = {}


class ScratchPool:
    """Temporaries of the calls of one plan. A call being planned takes buffers (:meth:`take`); once its launches
    are noted it gives them back (:meth:`release`), and the next call reuses them: the calls run one after another on
    one stream, and a temporary never outlives its call."""

    def __init__(self) -> None:
        self.free: dict[tuple[str, int], list[Any]] = {}
        self.taken: list[tuple[tuple[str, int], Any]] = []
        self.takes = 0  # buffers handed out
        self.allocated = 0  # buffers allocated (the rest of the takes were served by a free one)

    def take(self, backend: Any, shape: tuple[int, ...], dtype: np.dtype) -> TensorData:
        """A contiguous buffer of ``shape`` and ``dtype`` that no other call being planned now holds."""
        dtype = np.dtype(dtype)
        size = int(np.prod(shape, dtype=np.int64))
        key = (dtype.str, size)
        free = self.free.setdefault(key, [])
        if free:
            storage = free.pop()
        else:
            storage = type(backend).empty(backend, (size,), dtype).storage
            self.allocated += 1
        self.taken.append((key, storage))
        self.takes += 1
        return TensorData(storage, tuple(shape))

    def release(self) -> None:
        """Every buffer taken since the last release is free again."""
        for key, storage in self.taken:
            self.free[key].append(storage)
        self.taken.clear()


def is_cuda(op: Op) -> bool:
    """Whether ``op`` was recorded on a cuda backend (by class name: the module needs a device to import)."""
    return type(op.backend).__name__ == "CudaBackend"


def _planner(backend: Any, pool: ScratchPool | None) -> Any:
    """A planner for ``backend``'s class: its ``_launch`` appends to ``launches`` instead of running."""
    cls = type(backend)
    planner_class = _planners.get(cls)
    if planner_class is None:

        class Planner(cls):  # type: ignore[valid-type, misc]
            """Plans calls of the cuda backend without running them (see the module docstring)."""

            launches: list[Launch]
            real: Any
            pool: ScratchPool | None

            def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> TensorData:
                if self.pool is None:
                    return self.real.empty(shape, dtype)
                return self.pool.take(self.real, shape, dtype)

            def constant(self, value: float | int | bool, dtype: np.dtype) -> TensorData:
                return self.real.constant(value, dtype)  # filled now: the backend caches it for every later call

            def _launch(self, kernel: Any, grid: Any, block: Any, *args: Any) -> None:
                self.launches.append((kernel, grid, block, args))

            def from_numpy(self, array: np.ndarray) -> TensorData:
                array = np.asarray(array)
                if array.size <= 1:  # written by a fill kernel: a launch like any other
                    return super().from_numpy(array)
                pristine = self.real.from_numpy(array)  # uploaded once, now; the plan keeps it
                data = self.empty(pristine.shape, pristine.dtype)
                self.map("id", pristine, data)
                return data

            def to_numpy(self, data: TensorData) -> np.ndarray:
                raise CompileError("a cuda call read values back while being planned")

            def synchronize(self) -> None:
                pass

        Planner.__name__ = Planner.__qualname__ = f"{cls.__name__}Planner"
        planner_class = _planners[cls] = Planner
    planner = object.__new__(planner_class)
    planner.__dict__.update({k: v for k, v in vars(backend).items() if not callable(v)})
    planner.launches = []
    planner.real, planner.pool = backend, pool
    return planner


def plan_launches(op: Op, pool: ScratchPool | None = None) -> list[Launch] | None:
    """The launches ``op``'s backend method makes for these arguments, in order (None: it cannot be planned); its
    temporaries come from ``pool`` (given back to it on return), else are its own."""
    planner = _planner(op.backend, pool)
    try:
        method = getattr(planner, op.method.__name__)
        result = method(*op.args, **op.kwargs)
    except Exception:  # noqa: BLE001 - a path that reads values back or is unexpected: keep the method
        return None
    finally:
        if pool is not None:
            pool.release()
    return planner.launches if result is None else None


def _compiled(kernel: Any, configured: Any, args: tuple) -> Call | None:
    """Real GPU: the kernel compiled for exactly ``args``'s types (compiled now if it was not yet: a generated fused
    kernel), as a call of its ``launch`` with the configuration's geometry, stream and shared memory: what the
    dispatcher's call does after matching the types. None where that does not apply (the simulator)."""
    compile_ = getattr(kernel, "compile", None)
    typeof = getattr(kernel, "typeof_pyval", None)
    if compile_ is None or typeof is None or getattr(kernel, "specialized", False):
        return None
    try:
        compiled = compile_(tuple(typeof(a) for a in args))
    except Exception:  # noqa: BLE001 - let the dispatcher decide (and report) at the launch
        return None
    if not callable(getattr(compiled, "launch", None)):
        return None
    return functools.partial(compiled.launch, args, configured.griddim, configured.blockdim, configured.stream,
                             configured.sharedmem)


def bind_launch(kernel: Any, grid: Any, block: Any, args: tuple) -> Call:
    """One launch as a call without arguments: configured once, then called with its fixed arguments."""
    configured = kernel[grid, block]
    compiled = _compiled(kernel, configured, args) if hasattr(configured, "griddim") else None
    return compiled if compiled is not None else functools.partial(configured, *args)


def bind_cuda(op: Op, pool: ScratchPool | None = None) -> Call | None:
    """``op`` bound to its planned launches (temporaries from ``pool``), or None when it is not a cuda call or cannot
    be planned."""
    if not is_cuda(op):
        return None
    launches = plan_launches(op, pool)
    if launches is None:
        return None
    calls = [bind_launch(*launch) for launch in launches]
    if not calls:
        return _nothing
    if len(calls) == 1:
        return calls[0]

    def run() -> None:
        for call in calls:
            call()

    return run


def _nothing() -> None:
    """A call with no work (every operand empty)."""


def bind_fill(backend: Any, data: TensorData, contents: np.ndarray) -> Call | None:
    """A call that writes ``contents`` (the initial values of the allocated, contiguous ``data``) again on the device:
    one value everywhere (zeros) is a broadcast copy of a cached 0-d constant; other contents are uploaded once, now,
    into a buffer the returned call keeps, and copied device to device. None when it cannot be planned."""
    flat = np.ascontiguousarray(contents, dtype=data.dtype).reshape(-1)
    first = flat[:1]
    if flat.size and (flat.view(np.uint8).reshape(flat.size, -1) == first.view(np.uint8)).all():
        source = backend.constant(first[0].item(), data.dtype)
    else:
        source = backend.from_numpy(flat.reshape(data.shape))
    launches = plan_launches(Op(backend, "map", type(backend).map, ("id", source, data), {}))
    if launches is None or len(launches) != 1:
        return None
    return bind_launch(*launches[0])
