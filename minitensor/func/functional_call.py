"""``functional_call``: run a Module with other parameters and buffers, the originals restored afterwards."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..module import Module

# --- functional_call ---

def functional_call(module: Module, parameter_and_buffer_dicts: Any, args: Any = None, kwargs: dict[str, Any] | None = None,
                    *, tie_weights: bool = True, strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the parameters and buffers named (dotted, as in ``state_dict``) in
    ``parameter_and_buffer_dicts`` (a dict or a sequence of dicts) replaced by the given tensors for the call, the
    originals restored afterwards even when the call raises. ``tie_weights``: a value given for one of several names
    of one tensor replaces all of them. ``strict``: the names must be exactly the module's parameters and buffers."""
    given = _merged(parameter_and_buffer_dicts)
    slots: dict[str, tuple[Module, str, str]] = {}  # name -> (owning module, registry, local name)
    for prefix, owner in module.named_modules(remove_duplicate=False):
        for registry in ("_parameters", "_buffers"):
            for local, value in getattr(owner, registry).items():
                if value is not None:
                    slots[f"{prefix}.{local}" if prefix else local] = (owner, registry, local)
    if tie_weights:
        _tie(given, slots)
    if strict:
        unexpected = sorted(k for k in given if k not in slots)
        missing = sorted(k for k in slots if k not in given)
        if unexpected or missing:
            lines = [f"\n\tUnexpected key(s): {', '.join(map(repr, unexpected))}." if unexpected else "",
                     f"\n\tMissing key(s): {', '.join(map(repr, missing))}." if missing else ""]
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:{''.join(lines)}")
    restore: list[Callable[[], None]] = []
    try:
        for key, value in given.items():
            restore.append(_swap(module, slots, key, value))
        call_args = () if args is None else args if isinstance(args, tuple) else (args,)
        return module(*call_args, **(kwargs or {}))
    finally:
        for undo in reversed(restore):
            undo()


def _merged(dicts: Any) -> dict[str, Any]:
    if isinstance(dicts, dict):
        return dict(dicts)
    if not isinstance(dicts, (tuple, list)):
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(dicts).__name__}")
    if not all(isinstance(d, dict) for d in dicts):
        raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
    keys = [k for d in dicts for k in d]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    return {k: v for d in dicts for k, v in d.items()}


def _tie(given: dict[str, Any], slots: dict[str, tuple[Module, str, str]]) -> None:
    """Extend ``given`` to every name of a tensor one of whose names it gives (tied weights)."""
    names: dict[int, list[str]] = {}
    for key, (owner, registry, local) in slots.items():
        names.setdefault(id(getattr(owner, registry)[local]), []).append(key)
    for key in list(given):
        if key not in slots:
            continue
        owner, registry, local = slots[key]
        for other in names[id(getattr(owner, registry)[local])]:
            if other in given and given[other] is not given[key]:
                raise ValueError(f"functional_call got multiple values for keys {[key, other]}, which are tied. "
                                 "Consider using tie_weights=False")
            given[other] = given[key]


def _swap(module: Module, slots: dict[str, tuple[Module, str, str]], key: str, value: Any) -> Callable[[], None]:
    """Put ``value`` at ``key`` (a parameter, a buffer, or else a plain attribute); return the undo."""
    if key in slots:
        owner, registry, local = slots[key]
        table = getattr(owner, registry)
        old = table[local]
        table[local] = value
        return lambda: table.__setitem__(local, old)
    prefix, _, local = key.rpartition(".")
    owner = module.get_submodule(prefix)
    missing = object()
    old = owner.__dict__.get(local, missing)
    object.__setattr__(owner, local, value)
    return lambda: owner.__dict__.pop(local, None) if old is missing else object.__setattr__(owner, local, old)
