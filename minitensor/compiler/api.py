"""``minitensor.compile``: the wrapper, its guards and its plan cache."""

from __future__ import annotations

import functools
import types
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..autodiff import is_grad_enabled
from ..backends.base import Backend
from ..errors import CompileError
from ..module import Module
from ..tensor import Tensor
from ..tensor_data import TensorData
from .capture import Trace, root_of
from .plan import Plan, copy_into, fresh_copy
from .pytree import flatten, is_optimizer, rebuild, template_of
from .reuse import share_dead_buffers, visible_roots

__all__ = ["compile", "CompiledFunction"]


MAX_FUNCTIONS_SEARCHED = 32
"""How many Python functions (the compiled one and helpers it names) are searched for modules and optimizers."""
MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
BACKENDS = {"inductor": True, "eager": False, "aot_eager": False}
"""``torch.compile`` backends accepted, and whether each fuses element-wise runs."""


def compile(model: Callable[..., Any] | None = None, *, fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, backend: str | None = None, mode: str | None = None,
            options: dict[str, Any] | None = None, name: str | None = None, disable: bool = False,
            recompile_limit: int | None = None, isolate_recompiles: bool = False, shapes_spec: Any = None,
            max_plans: int = 8) -> Any:
    """Record ``model`` once per guard key and replay the recording on later calls (``torch.compile``'s role and
    signature).

    The first call with given guards runs ``model`` eagerly while recording every backend call (forward, backward
    and the optimizer's in-place updates); later calls with the same guards copy their tensor arguments into the
    traced input buffers and replay the kernels, without running ``model``'s Python code. Guards: each tensor
    argument's shape, dtype, backend and ``requires_grad``; other arguments by value; grad mode; and, for the modules
    and optimizers ``model`` reaches (its arguments and their attributes, closure, default arguments and the globals
    it names, and lists/tuples/dicts among those), which gradients are None, how much optimizer state each parameter
    has, each submodule's ``training`` flag and the optimizer hyperparameters that choose kernels. A miss traces
    again; at most ``max_plans`` plans are kept (least recently used dropped). Returned tensors are fresh copies
    without history. Usable as ``@compile`` and ``@compile(...)``.

    Fusion, as Inductor does by default: with ``backend="inductor"`` (the default) runs of element-wise calls are
    fused into one generated kernel each, on ``fast`` (a Numba loop, written to the kernel cache directory so it is
    compiled once per machine) and on ``cuda`` (a CUDA kernel, compiled once per process); results are the same bit
    for bit. ``backend="eager"`` or ``"aot_eager"`` replays the recorded calls without fusing. Every ``mode`` does the
    same (accepted for PyTorch compatibility). ``fullgraph`` may be True or False (a recording never breaks: reading
    a value back to Python inside ``model`` raises :class:`~minitensor.errors.CompileError`); ``dynamic`` may be
    None or False (each new shape traces again); ``options`` may be None or empty; ``name`` is a label;
    ``recompile_limit``, ``isolate_recompiles`` and ``shapes_spec`` must keep their defaults. Other values raise
    :class:`~minitensor.errors.CompileError` (``ValueError``/``TypeError`` for malformed ones, as PyTorch does).
    """
    fuse = _check_arguments(fullgraph, dynamic, backend, mode, options, name, recompile_limit, isolate_recompiles,
                            shapes_spec)
    if model is None:
        return lambda f: compile(f, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                                 name=name, disable=disable, max_plans=max_plans)
    if not callable(model):
        raise TypeError(f"compile() needs a callable, got {type(model).__name__}")
    if disable:
        return model
    return CompiledFunction(model, max_plans, fuse=fuse)


def _check_arguments(fullgraph: Any, dynamic: Any, backend: Any, mode: Any, options: Any, name: Any,
                     recompile_limit: Any, isolate_recompiles: Any, shapes_spec: Any) -> bool:
    """Validate :func:`compile`'s ``torch.compile`` arguments; return whether the replay fuses."""
    if mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(m for m in MODES if m)}")
    if backend is None:
        backend = "inductor"
    if callable(backend):
        raise CompileError("compile(backend=<callable>): custom compiler backends are not supported; use "
                           f"backend= one of {', '.join(map(repr, BACKENDS))}")
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise CompileError(f"compile(): invalid backend {backend!r}; supported: {', '.join(map(repr, BACKENDS))} "
                           "(\"inductor\" fuses element-wise runs, the others replay without fusing)")
    if mode is not None and options:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"compile(options=...) must be a dict or None, got {type(options).__name__}")
    if options:
        raise CompileError(f"compile(): no Inductor options are supported, got {sorted(options)}")
    if not isinstance(fullgraph, bool):
        raise TypeError(f"compile(fullgraph=...) must be a bool, got {fullgraph!r}")
    if dynamic is True:
        raise CompileError("compile(dynamic=True): dynamic shapes are not supported; each new input shape records "
                           "its own plan (dynamic=None or False)")
    if dynamic not in (None, False):
        raise TypeError(f"compile(dynamic=...) must be None or a bool, got {dynamic!r}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"compile(name=...) must be a str or None, got {type(name).__name__}")
    for label, value, default in (("recompile_limit", recompile_limit, None),
                                  ("isolate_recompiles", isolate_recompiles, False), ("shapes_spec", shapes_spec, None)):
        if value is not default:
            raise CompileError(f"compile({label}={value!r}) is not supported (only {default!r}); use max_plans= to "
                               "bound the plans kept")
    return BACKENDS[backend]


class Slot:
    """A place in Python state that holds a tensor: an attribute (``p.grad``, ``p._data``) or a dict entry
    (an optimizer state entry, a module buffer)."""

    __slots__ = ("owner", "key", "attr")

    def __init__(self, owner: Any, key: str, attr: bool):
        self.owner, self.key, self.attr = owner, key, attr

    def get(self) -> Any:
        return getattr(self.owner, self.key, None) if self.attr else self.owner.get(self.key)

    def set(self, value: Any) -> None:
        if self.attr:
            setattr(self.owner, self.key, value)
        else:
            self.owner[self.key] = value


def _data(value: Any) -> TensorData | None:
    return value._data if isinstance(value, Tensor) else value if isinstance(value, TensorData) else None


class Entry:
    """One plan with what its replays need around it: the inputs, the state fix-ups and the output template."""

    def __init__(self, plan: Plan, buffers: list[Tensor], copy_in: list[tuple[Slot, TensorData, Backend]],
                 fixups: list[tuple[Slot, Any]], template: Any, outputs: list[tuple[Backend, TensorData]]):
        self.plan, self.buffers, self.copy_in, self.fixups = plan, buffers, copy_in, fixups
        self.template, self.outputs = template, outputs

    def replay(self, leaves: list[Tensor]) -> Any:
        for slot, traced, backend in self.copy_in:  # state the step reads that Python has rebound since
            current = _data(slot.get())
            if current is not traced and current is not None:
                if current.shape != traced.shape or current.dtype != traced.dtype:
                    raise CompileError(f"a tensor the compiled step reads changed from {traced.shape} {traced.dtype} to "
                                       f"{current.shape} {current.dtype}; call .reset() on the compiled function")
                copy_into(backend, current, traced)
        self.plan.run([t._data for t in leaves])
        for slot, value in self.fixups:
            if slot.get() is not value:
                slot.set(value)
        return self.finish(leaves)

    def finish(self, leaves: list[Tensor]) -> Any:
        """Input gradients handed to the caller's tensors, and the outputs as fresh copies."""
        for leaf, buffer in zip(leaves, self.buffers):
            grad = buffer.grad
            if grad is not None and leaf.requires_grad:
                copy = Tensor(fresh_copy(buffer.backend, grad._data), buffer.backend)
                leaf.grad = copy if leaf.grad is None else leaf.grad._zip("add", copy)
        values = [Tensor(fresh_copy(backend, data), backend) for backend, data in self.outputs]
        return rebuild(self.template, iter(values))


class CompiledFunction:
    """The callable :func:`compile` returns. ``traces`` counts recordings; ``reset()`` drops every plan."""

    def __init__(self, fn: Callable[..., Any], max_plans: int = 8, fuse: bool = True):
        if max_plans < 1:
            raise ValueError(f"max_plans must be at least 1, got {max_plans}")
        self.fn, self.max_plans, self.fuse = fn, max_plans, fuse
        self.traces = 0
        self._plans: OrderedDict[Any, list[Entry]] = OrderedDict()
        self._member_cache: dict[int, tuple[Any, list[Tensor], list[Module]]] = {}
        self._discovered: tuple[dict[str, Any], list[tuple[str, Any]], list[Any]] | None = None
        functools.update_wrapper(self, fn)

    def reset(self) -> None:
        """Forget every plan (the next call traces again)."""
        self._plans.clear()
        self._member_cache.clear()
        self._discovered = None

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        """As a method decorator: the instance becomes the first argument (guarded by identity)."""
        return self if instance is None else functools.partial(self, instance)

    @property
    def plans(self) -> int:
        return sum(len(entries) for entries in self._plans.values())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and all(type(a) is Tensor for a in args):  # the common case, without the recursive walk
            leaves: list[Tensor] = list(args)
            parts: list[Any] = [(a._data.shape, a._data.dtype.str, id(a.backend), a._requires_grad) for a in args]
        else:
            leaves, parts = [], ["nested"]
            flatten((args, kwargs), leaves, parts)
        objects = self._discover(args, kwargs)
        key = (tuple(parts), is_grad_enabled(), self._state_key(objects))
        entries = self._plans.get(key)
        if entries is not None:
            self._plans.move_to_end(key)
            for entry in entries:
                if entry.plan.guards_hold():
                    return entry.replay(leaves)
        entry, result = self._trace(args, kwargs, leaves, objects)
        self._plans.setdefault(key, []).append(entry)
        while self.plans > self.max_plans:
            oldest = next(iter(self._plans))
            self._plans[oldest].pop(0)
            if not self._plans[oldest]:
                del self._plans[oldest]
        return result

    # --- tracing ---

    def _trace(self, args: Any, kwargs: Any, leaves: list[Tensor], objects: list[Any]) -> tuple[Entry, Any]:
        buffers = []
        for leaf in leaves:
            buffer = Tensor(type(leaf.backend).empty(leaf.backend, leaf.shape, leaf.dtype), leaf.backend)
            copy_into(leaf.backend, leaf._data, buffer._data)
            buffers.append(buffer.requires_grad_(True) if leaf.requires_grad else buffer)
        traced_args, traced_kwargs = rebuild((args, kwargs), iter(buffers))
        start = self._slots(objects)
        trace = Trace([leaf.backend for leaf in leaves])
        with trace:
            result = self.fn(*traced_args, **traced_kwargs)
            trace.finish()
        self.traces += 1
        end = self._slots(objects)
        reuse = share_dead_buffers(trace, visible_roots)
        plan = Plan(trace, [(b.backend, b._data) for b in buffers], fused=self.fuse, reuse=reuse)
        copy_in = []
        for slot, value in start.values():
            data = _data(value)
            if data is not None and id(root_of(data.storage)) in plan.external_reads:
                backend = value.backend if isinstance(value, Tensor) else slot.owner.backend
                copy_in.append((slot, data, backend))
        fixups = [(slot, value) for k, (slot, value) in end.items() if k not in start or start[k][1] is not value]
        outputs: list[tuple[Backend, TensorData]] = []
        template = template_of(result, outputs)
        entry = Entry(plan, buffers, copy_in, fixups, template, outputs)
        return entry, entry.finish(leaves)

    # --- guards on Python state ---

    def _discover(self, args: Any, kwargs: Any) -> list[Any]:
        """Modules and optimizers the function can reach: its arguments, its bound object, closure, default arguments
        and named globals. The globals found last time are looked up again first: while they are unchanged and no
        argument is a module or optimizer, the last answer stands."""
        cached = self._discovered
        if cached is not None and all(type(a) is Tensor for a in (*args, *kwargs.values())):
            scope, names, found = cached
            if all(scope.get(name) is obj for name, obj in names):
                return found
        found = self._discover_all(args, kwargs)
        func = getattr(self.fn, "__func__", self.fn)
        scope = getattr(func, "__globals__", {})
        names = [(name, scope[name]) for name in getattr(getattr(func, "__code__", None), "co_names", ()) if name in scope]
        self._discovered = (scope, names, found)
        return found

    def _discover_all(self, args: Any, kwargs: Any) -> list[Any]:
        candidates: list[Any] = [*args, *kwargs.values()]
        for arg in [*args, *kwargs.values()]:  # an object holding the model and optimizer (a method's self)
            if not isinstance(arg, (Tensor, Module)) and not is_optimizer(arg) and hasattr(arg, "__dict__"):
                candidates.extend(vars(arg).values())
        owner = getattr(self.fn, "__self__", None)
        if owner is not None:
            candidates.append(owner)
            candidates.extend(getattr(owner, "__dict__", {}).values())
        # The function and the plain Python functions it names (helpers that use a global model), a few levels deep.
        functions: list[Any] = [getattr(self.fn, "__func__", self.fn)]
        visited: set[int] = set()
        while functions and len(visited) < MAX_FUNCTIONS_SEARCHED:
            func = functions.pop()
            code = getattr(func, "__code__", None)
            if code is None or id(func) in visited:
                continue
            visited.add(id(func))
            names = list(code.co_names)
            names.extend(n for const in code.co_consts if hasattr(const, "co_names") for n in const.co_names)
            scope = func.__globals__
            found_here = [scope[name] for name in names if name in scope]
            found_here.extend(cell.cell_contents for cell in func.__closure__ or () if _filled(cell))
            found_here.extend(func.__defaults__ or ())
            found_here.extend((func.__kwdefaults__ or {}).values())
            candidates.extend(found_here)
            functions.extend(f for f in found_here if isinstance(f, types.FunctionType)
                             and getattr(f, "__module__", "").split(".")[0] != "minitensor")
        for obj in list(candidates):  # one level into containers: a list of models, a dict of optimizers
            if isinstance(obj, (list, tuple)):
                candidates.extend(obj)
            elif isinstance(obj, dict):
                candidates.extend(obj.values())
        found, seen = [], set()
        for obj in candidates:
            if (isinstance(obj, Module) or is_optimizer(obj)) and id(obj) not in seen:
                seen.add(id(obj))
                found.append(obj)
        return found

    def _members(self, obj: Any) -> tuple[list[Tensor], list[Module]]:
        cached = self._member_cache.get(id(obj))
        if cached is None or cached[0] is not obj:
            if isinstance(obj, Module):
                cached = (obj, list(obj.parameters()), list(obj.modules()))
            else:
                cached = (obj, [p for group in obj.param_groups for p in group["params"]], [])
            self._member_cache[id(obj)] = cached
        return cached[1], cached[2]

    def _state_key(self, objects: list[Any]) -> tuple:
        key: list[Any] = []
        for obj in objects:
            params, modules = self._members(obj)
            key.append(id(obj))
            key.extend(p.grad is None for p in params)
            if modules:
                key.extend(m.training for m in modules)
            else:
                state = obj.state
                key.extend(len(state[p]) if p in state else -1 for p in params)
        return tuple(key)

    def _slots(self, objects: list[Any]) -> dict[tuple[int, str], tuple[Slot, Any]]:
        """Every place of Python state holding a tensor the step may use, with its current value."""
        slots: dict[tuple[int, str], tuple[Slot, Any]] = {}

        def add(owner: Any, key: str, attr: bool) -> None:
            slot = Slot(owner, key, attr)
            slots[(id(owner), key)] = (slot, slot.get())

        for obj in objects:
            params, modules = self._members(obj)
            for p in params:
                add(p, "_data", True)
                add(p, "grad", True)
            for module in modules:
                for name in module._buffers:
                    add(module._buffers, name, False)
            if not modules:
                for p in params:
                    state = obj.state.get(p) if p in obj.state else None
                    for name, value in (state or {}).items():
                        if name != "step" and isinstance(value, Tensor):
                            add(state, name, False)
        return slots


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True
