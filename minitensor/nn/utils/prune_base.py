"""The machinery of :mod:`.prune`: pruning methods as forward pre-hooks, their composition, and amount checks.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig`` (the same Parameter object, so optimizers keep
training it), registers the 0/1 mask as the buffer ``<name>_mask``, and makes ``<name>`` the plain tensor
``<name>_orig * <name>_mask``, recomputed by the pruning method (a forward pre-hook) before every forward, so
gradients reach ``<name>_orig`` only where the mask is 1. Pruning the same tensor again turns its hook into a
:class:`PruningContainer`: the new method then sees only the entries (unstructured) or the channels (structured)
that are still unpruned, and ``amount`` counts those. :func:`remove` makes the pruning permanent: ``<name>`` becomes
the Parameter again, holding the pruned values. State-dict keys are PyTorch's (``weight_orig``, ``weight_mask``).
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any

from ...creation import ones_like, zeros_like
from ...module import Module, Parameter
from ...tensor import Tensor

__all__ = ["BasePruningMethod", "PruningContainer"]


def _pre_hooks(module: Module) -> dict[int, Any]:
    """The module's forward pre-hooks by handle id (empty when it has none)."""
    return module.__dict__.get("_forward_pre_hooks", {})


class BasePruningMethod(ABC):
    """A way to compute a pruning mask, and the forward pre-hook that applies it to ``module.<_tensor_name>``.

    Subclasses set ``PRUNING_TYPE`` (``"unstructured"``, ``"structured"`` with a ``dim`` attribute, or ``"global"``)
    and define :meth:`compute_mask`.
    """

    PRUNING_TYPE: str
    _tensor_name: str | None = None

    def __call__(self, module: Module, inputs: Any) -> None:
        """The pre-hook: ``module.<name> = <name>_orig * <name>_mask`` before the forward."""
        setattr(module, self._name(module), self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The new mask for ``t`` (shape of ``t``), given the mask already in force, ``default_mask``."""

    def _name(self, module: Module) -> str:
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        return self._tensor_name

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_orig * <name>_mask`` (the mask cast to the parameter's dtype): the pruned tensor."""
        name = self._name(module)
        orig = getattr(module, name + "_orig")
        return getattr(module, name + "_mask").to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any, importance_scores: Tensor | None = None,
              **kwargs: Any) -> BasePruningMethod:
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)`` (ranking entries by ``importance_scores``, default the
        tensor itself) and register the method as a forward pre-hook; returns the hook (a PruningContainer when
        ``name`` was pruned before)."""
        method = cls(*args, **kwargs)
        method._tensor_name = name
        previous = _take_pruning_hook(module, name)
        method = _compose(previous, method)
        first = not isinstance(method, PruningContainer)
        try:
            orig, scores = _target(module, name, importance_scores, first)
        except Exception:
            _restore_hook(module, previous, method)
            raise
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
        except Exception:
            if first:
                module.register_parameter(name, module._parameters.pop(name + "_orig"))
            _restore_hook(module, previous, method)
            raise
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None, importance_scores: Tensor | None = None) -> Tensor:
        """``t`` times the mask this method computes for it (ranked by ``importance_scores``, default ``t``)."""
        if importance_scores is None:
            importance_scores = t
        elif importance_scores.shape != t.shape:
            raise AssertionError(f"importance_scores should have the same shape as tensor t, got "
                                 f"{importance_scores.shape} vs {t.shape}")
        default_mask = ones_like(t) if default_mask is None else default_mask
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` is the ``<name>_orig`` Parameter again, holding the pruned values;
        ``<name>_orig`` and ``<name>_mask`` are gone. (Unregistering the hook is :func:`remove`'s job.)"""
        name = self._name(module)
        weight = self.apply_mask(module)
        module.__dict__.pop(name, None)
        orig = module._parameters.pop(name + "_orig")
        orig.data = weight.data
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


def _target(module: Module, name: str, importance_scores: Tensor | None, first: bool) -> tuple[Any, Tensor]:
    """``module.<name>`` (a Parameter, unless pruned before) and the scores that rank its entries."""
    orig = getattr(module, name)
    if first and not isinstance(orig, Parameter):
        raise TypeError(f"cannot prune {name!r} of {type(module).__name__}: it is {type(orig).__name__}, not a Parameter")
    if importance_scores is None:
        return orig, orig
    if importance_scores.shape != orig.shape:
        raise AssertionError(f"importance_scores should have the same shape as parameter {name} of {module}, "
                             f"got {importance_scores.shape} vs {orig.shape}")
    return orig, importance_scores


_Taken = tuple[list[tuple[int, Any]], BasePruningMethod]
"""A pruning hook taken off a module: the module's hooks as they were, and the hook."""


def _take_pruning_hook(module: Module, name: str) -> _Taken | None:
    """Unregister the pruning hook on ``name``, if any; returns it with the hooks as they were."""
    hooks = _pre_hooks(module)
    found = [(key, hook) for key, hook in hooks.items()
             if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    if len(found) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                             "Use a PruningContainer.")
    if not found:
        return None
    before = list(hooks.items())
    del hooks[found[0][0]]
    return before, found[0][1]


def _compose(previous: _Taken | None, method: BasePruningMethod) -> BasePruningMethod:
    """``method``, appended to the previous pruning of its tensor if there is one (in a PruningContainer)."""
    if previous is None:
        return method
    old = previous[1]
    container = old if isinstance(old, PruningContainer) else PruningContainer(old)
    container.add_pruning_method(method)
    return container


def _restore_hook(module: Module, previous: _Taken | None, method: BasePruningMethod) -> None:
    """Undo :func:`_take_pruning_hook` and :func:`_compose` after a failed pruning: the previous hook is back as it
    was, in its place among the module's hooks."""
    if previous is None:
        return
    before, old = previous
    if isinstance(old, PruningContainer) and old is method:
        old._pruning_methods = old._pruning_methods[:-1]
    hooks = _pre_hooks(module)
    hooks.clear()
    hooks.update(before)


class PruningContainer(BasePruningMethod):
    """Several pruning methods on one tensor, applied in order: :meth:`compute_mask` applies the last one to what
    the earlier ones left unpruned."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if args:
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Append ``method``, which must act on this container's tensor."""
        if not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' to "
                             f"PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Iterator[BasePruningMethod]:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: Any) -> Any:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` with the last method's mask written into the part it acts on: the entries where
        ``default_mask`` is 1 (unstructured), the channels along ``dim`` with any 1 (structured), or all of it
        (global)."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        key = _unpruned_part(method, t, default_mask)
        partial = method.compute_mask(t[key], default_mask=default_mask[key])
        new_mask[key] = partial.to(dtype=new_mask.dtype)
        return new_mask


def _unpruned_part(method: BasePruningMethod, t: Tensor, mask: Tensor) -> Any:
    """The indexing key of the part of ``t`` that ``method`` may still prune, given the mask in force."""
    kind = method.PRUNING_TYPE
    if kind == "unstructured":
        return mask == 1
    if kind == "global":
        return (slice(None),) * t.dims
    if kind != "structured":
        raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
    if not hasattr(method, "dim"):
        raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute `dim` defined.')
    _validate_structured_pruning(t)
    dim = method.dim + t.dims if method.dim < 0 else method.dim
    if not 0 <= dim < t.dims:
        raise IndexError(f"Index is out of bounds for tensor with dimensions {t.dims}")
    keep_channel = mask.sum(dim=[d for d in range(t.dims) if d != dim]) != 0
    return tuple(keep_channel if d == dim else slice(None) for d in range(t.dims))


# --- amounts and dims ---


def _validate_pruning_amount_init(amount: Any) -> None:
    """``amount`` is a count (an int >= 0) or a fraction (a float in [0, 1])."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _compute_nparams_toprune(amount: int | float, tensor_size: int) -> int:
    """How many of ``tensor_size`` units to prune: ``amount`` itself, or ``round(amount * tensor_size)``."""
    if isinstance(amount, numbers.Integral):
        return int(amount)
    return round(amount * tensor_size)


def _validate_pruning_amount(amount: int, tensor_size: int) -> None:
    if amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={tensor_size}")


def _validate_structured_pruning(t: Tensor) -> None:
    if t.dims <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. Found tensor of shape "
                         f"{t.shape} with {t.dims} dims")


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    if not -t.dims <= dim < t.dims:
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _channel_mask(t: Tensor, dim: int, channels: Tensor) -> Tensor:
    """1 in the channels ``channels`` (a bool mask or indices) along ``dim`` of ``t``'s shape, 0 elsewhere."""
    mask = zeros_like(t)
    mask[tuple(channels if d == dim % t.dims else slice(None) for d in range(t.dims))] = 1
    return mask
