"""The ``mt.`` function forms of Tensor methods (``mt.sum(x)`` for ``x.sum()``), with PyTorch's argument check.

Each method module (tensor_math.py, tensor_reduce.py, ...) lists in ``__all__`` functions whose first parameter is
the tensor (``self`` or ``input``); as methods that is always a Tensor. Called as ``mt.f(...)`` it may be anything,
so :func:`export` wraps each in a check that raises TypeError naming the function and the argument's type (as
``torch.atan2(None, None)`` does) instead of an AttributeError from inside. A Python number in the tensor's place
is lifted to a constant tensor, as the binary ops lift their other operand, when the second argument is a Tensor
(``mt.add(2, x)``, as ``torch.add``). The methods themselves are not wrapped.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from .tensor import Tensor

TENSOR_FIRST = ("self", "input", "a")
"""First-parameter names of functions that take the tensor first."""

KEYWORD_ONLY_FORMS = {"repeat_interleave": "repeats"}
"""Functions whose one-argument form torch also takes by this keyword alone (``repeat_interleave(repeats=r)``)."""


def tensor_first(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` with a TypeError unless its first or second argument (positional or by name) is a Tensor."""
    params = list(inspect.signature(fn).parameters)
    first, second = params[0], params[1] if len(params) > 1 else None

    alias = KEYWORD_ONLY_FORMS.get(name)

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if alias and not args and first not in kwargs and isinstance(kwargs.get(alias), Tensor):
            kwargs = {first: kwargs.pop(alias), **kwargs}  # the one-argument form given by its keyword
        lead = args[0] if args else kwargs.get(first)
        if not isinstance(lead, Tensor):
            other = args[1] if len(args) > 1 else kwargs.get(second) if second else None
            if not (isinstance(other, Tensor) and isinstance(lead, (bool, int, float))):
                raise TypeError(f"{name}(): argument '{'input' if first == 'self' else first}' (position 1) must be "
                                f"Tensor, not {type(lead).__name__}")
            lifted = other._operand(lead)  # a number first: lifted as the binary ops lift it (torch.add(2, x))
            args, kwargs = ((lifted, *args[1:]), kwargs) if args else (args, {**kwargs, first: lifted})
        return fn(*args, **kwargs)

    return checked


def export(namespace: dict[str, Any], modules: Iterable[ModuleType]) -> None:
    """Put each module's ``__all__`` functions into ``namespace``, the tensor-first ones wrapped by tensor_first."""
    for module in modules:
        for name in module.__all__:
            fn = getattr(module, name)
            try:
                params = list(inspect.signature(fn).parameters) if callable(fn) else []
            except (TypeError, ValueError):
                params = []
            namespace[name] = tensor_first(fn, name) if params and params[0] in TENSOR_FIRST else fn
