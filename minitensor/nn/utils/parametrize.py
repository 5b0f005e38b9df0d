"""Parametrizations of a module's tensors (``torch.nn.utils.parametrize``).

``register_parametrization(module, "weight", P)`` moves the parameter (or buffer) to
``module.parametrizations.weight.original`` and makes ``module.weight`` a property computed on every access as
``P(original)`` (several parametrizations on one tensor are applied in registration order). If ``P`` has a
``right_inverse``, the original is set to ``P.right_inverse(weight)`` (possibly a tuple: then ``original0``,
``original1``, ... and ``P.forward`` takes them all), and assigning ``module.weight = X`` stores
``right_inverse(X)``. As in PyTorch, the module's class becomes a generated subclass ``Parametrized<Name>`` that
holds the properties; the state-dict keys are PyTorch's (``parametrizations.weight.original``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ...autodiff import no_grad
from ...module import Module, Parameter
from ...tensor import Tensor
from ..container import ModuleDict, ModuleList

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "type_before_parametrizations", "ParametrizationList"]

_cache_depth = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Inside the block each parametrized tensor is computed once per module and reused (e.g. a weight used at
    several time steps of an RNN)."""
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


def _register(module: Module, name: str, value: Tensor) -> None:
    """A Parameter as a parameter, any other tensor as a buffer."""
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _replace_values(original: Tensor, value: Tensor) -> None:
    """``original`` holds ``value``'s values from now on (same object: optimizers keep seeing it)."""
    if value is not original:
        original.data = value.detach().clone()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, and the original tensor(s) they are applied to."""

    def __init__(self, modules: list[Module], original: Tensor, unsafe: bool = False) -> None:
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new: Any = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if not unsafe and (new.shape != original.shape or new.dtype != original.dtype):
                raise ValueError(f"right_inverse must return a tensor of the original's shape {original.shape} and dtype "
                                 f"{original.dtype}, got shape {new.shape} and dtype {new.dtype}")
            _replace_values(original, new)
            _register(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError(f"right_inverse must return a tensor or a sequence of tensors, got {type(part).__name__}")
                tensor = Parameter(part.detach().clone(), original.requires_grad) if isinstance(original, Parameter) else part
                _register(self, f"original{i}", tensor)
        if not unsafe:
            out = self()
            if not isinstance(out, Tensor) or out.shape != original.shape or out.dtype != original.dtype:
                got = f"shape {out.shape} and dtype {out.dtype}" if isinstance(out, Tensor) else type(out).__name__
                raise ValueError(f"a parametrization must return a tensor of the original's shape {original.shape} and "
                                 f"dtype {original.dtype} (or register with unsafe=True), got {got}")

    def right_inverse(self, value: Tensor) -> None:
        """Store ``value`` through the parametrizations' right inverses, last to first."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                _replace_values(self.original, value)
            else:
                for i, part in enumerate(value):
                    _replace_values(getattr(self, f"original{i}"), part)

    def forward(self) -> Tensor:  # type: ignore[override]
        modules = list(self)
        if self.is_tensor:
            x = modules[0](self.original)
        else:
            x = modules[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in modules[1:]:
            x = module(x)
        return x


def _parametrized(name: str) -> property:
    def get(self: Module) -> Tensor:
        parametrization = self.parametrizations[name]
        if not _cache_depth:
            return parametrization()
        key = (id(self), name)
        if key not in _cache:
            _cache[key] = parametrization()
        return _cache[key]

    def set_(self: Module, value: Tensor) -> None:
        self.parametrizations[name].right_inverse(value)

    return property(get, set_, doc=f"The parametrized tensor {name!r}, computed on access.")


def _setattr(self: Module, name: str, value: Any) -> None:
    """Assigning to a parametrized tensor stores it through the right inverses (PyTorch's property setter)."""
    parametrizations = self.__dict__["_modules"].get("parametrizations")
    if parametrizations is not None and name in parametrizations._modules:
        getattr(type(self), name).fset(self, value)
    else:
        super(type(self), self).__setattr__(name, value)


def _inject_class(module: Module) -> None:
    cls = type(module)
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {"__setattr__": _setattr})


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization (or one on ``tensor_name``)."""
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def type_before_parametrizations(module: Module) -> type:
    """The module's class before parametrizations replaced it by a ``Parametrized`` subclass."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` the output of ``parametrization`` applied to the original tensor (see the module
    docstring); on an already parametrized tensor, ``parametrization`` is applied after the others. Returns
    ``module``. ``unsafe`` skips the check that the result keeps the original's shape and dtype."""
    if not isinstance(parametrization, Module):
        raise TypeError(f"register_parametrization: the parametrization must be a Module, got {type(parametrization).__name__}")
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        current = getattr(module, tensor_name)
        if not unsafe:
            out = parametrization(current)
            if not isinstance(out, Tensor) or out.shape != current.shape or out.dtype != current.dtype:
                raise ValueError(f"register_parametrization: the new parametrization must keep {tensor_name}'s shape "
                                 f"{current.shape} and dtype {current.dtype} (or register with unsafe=True)")
        chain = module.parametrizations[tensor_name]
        chain.append(parametrization)
        chain.unsafe |= unsafe
    elif tensor_name in module._parameters or tensor_name in module._buffers:
        original = getattr(module, tensor_name)
        if not isinstance(original, Tensor):
            raise ValueError(f"register_parametrization: {tensor_name!r} of {type(module).__name__} is None")
        chain = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_class(module)
            module.parametrizations = ModuleDict()
        setattr(type(module), tensor_name, _parametrized(tensor_name))
        module.parametrizations[tensor_name] = chain
    else:
        raise ValueError(f"Module '{type(module).__name__}' does not have a parameter, a buffer, or a parametrized "
                         f"element with name '{tensor_name}'")
    return module


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Remove the parametrizations of ``tensor_name``: it becomes a plain parameter (or buffer) again, holding the
    parametrized value (``leave_parametrized``) or the original. The original object is kept, so optimizers still
    see it. Returns ``module``."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {type(module).__name__} does not have a parametrization on {tensor_name}")
    chain = module.parametrizations[tensor_name]
    if chain.is_tensor:
        original = chain.original
        if leave_parametrized:
            with no_grad():
                _replace_values(original, getattr(module, tensor_name))
    elif leave_parametrized:
        with no_grad():
            value = getattr(module, tensor_name)
        requires_grad = any(getattr(chain, f"original{i}").requires_grad for i in range(chain.ntensors))
        original = Parameter(value.detach().clone(), requires_grad) if requires_grad else value.detach().clone()
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in terms "
                         "of a sequence of tensors.")
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module
