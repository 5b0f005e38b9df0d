"""Pruning: zeroing parameter entries or whole channels by a mask (``torch.nn.utils.prune``).

``l1_unstructured(module, "weight", amount=0.3)`` keeps ``module.weight_orig`` (the Parameter) and the buffer
``module.weight_mask``, and recomputes ``module.weight = weight_orig * weight_mask`` before every forward (see
:mod:`.prune_base`). ``amount`` is a count (an int) or a fraction (a float in [0, 1], rounded half to even). Pruning
a tensor again prunes only what is still unpruned; :func:`remove` makes the pruning permanent, :func:`is_pruned`
tells whether any submodule is pruned.

The random methods draw from minitensor's generator (NumPy's PCG64, not PyTorch's Mersenne Twister), so they prune
as many entries or channels as PyTorch does, but not the same ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...creation import ones_like, rand, rand_like
from ...module import Module
from ...tensor import Tensor
from .convert_parameters import parameters_to_vector
from .prune_base import (
    BasePruningMethod,
    PruningContainer,
    _channel_mask,
    _compute_nparams_toprune,
    _pre_hooks,
    _validate_pruning_amount,
    _validate_pruning_amount_init,
    _validate_pruning_dim,
    _validate_structured_pruning,
)  # fmt: skip

__all__ = [
    "BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured", "RandomStructured",
    "LnStructured", "CustomFromMask", "identity", "random_unstructured", "l1_unstructured", "random_structured",
    "ln_structured", "global_unstructured", "custom_from_mask", "remove", "is_pruned",
]  # fmt: skip


class Identity(BasePruningMethod):
    """Prunes nothing: the mask stays what it was (all ones on a fresh tensor)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> BasePruningMethod:  # type: ignore[override]
        """Register an all-ones mask on ``module.<name>``."""
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Zero the ``amount`` entries that :meth:`_to_prune` picks (flat indices)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def _to_prune(self, t: Tensor, count: int) -> Tensor:
        raise NotImplementedError

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` with the ``amount`` picked entries of ``t`` set to 0."""
        count = _compute_nparams_toprune(self.amount, t.numel())
        _validate_pruning_amount(count, t.numel())
        mask = default_mask.clone()
        if count:
            mask.view(-1)[self._to_prune(t, count)] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Prune ``amount`` entries chosen uniformly at random."""

    def _to_prune(self, t: Tensor, count: int) -> Tensor:
        return rand_like(t).reshape(-1).topk(count).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float) -> BasePruningMethod:  # type: ignore[override]
        """Prune ``amount`` random entries of ``module.<name>``."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prune the ``amount`` entries of smallest absolute value."""

    def _to_prune(self, t: Tensor, count: int) -> Tensor:
        return t.detach().abs().reshape(-1).topk(count, largest=False).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:
        """Prune the ``amount`` entries of ``module.<name>`` (or of ``importance_scores``) closest to 0."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prune ``amount`` channels along ``dim``, chosen uniformly at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` times a mask that is 0 on ``amount`` random channels along ``dim`` (of a 2+-D ``t``)."""
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        channels = t.shape[self.dim]
        count = _compute_nparams_toprune(self.amount, channels)
        _validate_pruning_amount(count, channels)
        if not count:
            return default_mask
        prob = rand(channels, backend=t.backend)
        mask = _channel_mask(t, self.dim, prob > prob.kthvalue(count).values)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float,  # type: ignore[override]
              dim: int = -1) -> BasePruningMethod:
        """Prune ``amount`` random channels of ``module.<name>`` along ``dim``."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prune the ``amount`` channels along ``dim`` of smallest ``n``-norm (``n`` as ``Tensor.norm``'s ``p``)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, n: Any, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` times a mask that is 1 on the channels of largest ``n``-norm, all but ``amount``."""
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        channels = t.shape[self.dim]
        count = _compute_nparams_toprune(self.amount, channels)
        _validate_pruning_amount(count, channels)
        if not count:
            return default_mask
        dim = self.dim % t.dims
        norms = t.detach().norm(p=self.n, dim=[d for d in range(t.dims) if d != dim])
        mask = _channel_mask(t, dim, norms.topk(channels - count).indices)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float, n: Any, dim: int,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:
        """Prune the ``amount`` channels of ``module.<name>`` (ranked on ``importance_scores``) along ``dim`` with
        the smallest ``n``-norm."""
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prune where the given ``mask`` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask * mask`` (the masks' shapes must agree)."""
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor) -> BasePruningMethod:  # type: ignore[override]
        """Prune ``module.<name>`` where ``mask`` is 0."""
        return super().apply(module, name, mask=mask)


# --- the functional forms ---


def identity(module: Module, name: str) -> Module:
    """Register an all-ones mask on ``module.<name>`` (pruning machinery, nothing pruned); returns ``module``."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: int | float) -> Module:
    """Prune ``amount`` (a count, or a fraction of the entries) random entries of ``module.<name>``; returns
    ``module``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount: int | float, importance_scores: Tensor | None = None) -> Module:
    """Prune the ``amount`` entries of ``module.<name>`` with the smallest ``|importance_scores|`` (default: the
    tensor's own values); returns ``module``."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: int | float, dim: int) -> Module:
    """Prune ``amount`` random channels of ``module.<name>`` along ``dim``; returns ``module``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount: int | float, n: Any, dim: int,
                  importance_scores: Tensor | None = None) -> Module:
    """Prune the ``amount`` channels of ``module.<name>`` along ``dim`` whose ``n``-norm (of ``importance_scores``,
    default the tensor) is smallest; returns ``module``."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.<name>`` where ``mask`` is 0; returns ``module``."""
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters: Iterable[tuple[Module, str]], pruning_method: type[BasePruningMethod],
                        importance_scores: dict[tuple[Module, str], Tensor] | None = None, **kwargs: Any) -> None:
    """Prune the (module, name) tensors as one: ``pruning_method(**kwargs)`` (an unstructured method) ranks the
    still-unpruned entries of all of them together (``importance_scores[(module, name)]`` instead of a tensor's
    values where given), and each tensor gets its part of the mask through :func:`custom_from_mask`."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = {} if importance_scores is None else importance_scores
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    pairs = list(parameters)
    scores = parameters_to_vector([importance_scores.get((m, name), getattr(m, name)) for m, name in pairs])
    masks = [getattr(m, name + "_mask", None) for m, name in pairs]
    default_mask = parameters_to_vector([ones_like(getattr(m, name)) if mask is None else mask
                                         for (m, name), mask in zip(pairs, masks)])
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    final_mask = PruningContainer(method).compute_mask(scores, default_mask)
    start = 0
    for m, name in pairs:
        param = getattr(m, name)
        custom_from_mask(m, name, mask=final_mask[start : start + param.numel()].view_as(param))
        start += param.numel()


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent: ``<name>`` is a Parameter again holding the pruned values,
    ``<name>_orig``, ``<name>_mask`` and the hook are gone. Returns ``module``."""
    hooks = _pre_hooks(module)
    for key, hook in list(hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or any of its submodules has a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules() for hook in _pre_hooks(sub).values())

