"""Stochastic weight averaging and EMA (``torch.optim.swa_utils``): :class:`AveragedModel`, :class:`SWALR`,
:func:`update_bn` and the averaging-function factories, with PyTorch's names, defaults and update equations.

``device`` arguments name a minitensor backend (``"simple"``, ``"fast"``, ``"cuda"``, ``"cpu"``), as elsewhere in
minitensor: tensors and modules are moved with ``.to(device)``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from copy import deepcopy
from typing import Any

from ..autodiff import no_grad
from ..creation import tensor
from ..module import Module
from ..nn.norm import _BatchNorm
from ..tensor import Tensor
from .lr_scheduler_base import LRScheduler
from .one_cycle import _per_group
from .optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]

AvgFn = Callable[[Tensor, Tensor, "Tensor | int"], Tensor]
MultiAvgFn = Callable[[Sequence[Tensor], Sequence[Tensor], "Tensor | int"], None]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """An in-place EMA over lists of tensors: ``ema = decay * ema + (1 - decay) * current`` (a lerp for floats);
    ValueError unless ``0 <= decay <= 1``."""
    _check_decay(decay)

    def ema_update(ema_params: Sequence[Tensor], current_params: Sequence[Tensor], _: Tensor | int) -> None:
        with no_grad():
            floating = ema_params[0].is_floating_point()
            for ema, current in zip(ema_params, current_params):
                if floating:
                    ema.copy_(ema.lerp(current, 1 - decay))
                else:
                    ema.copy_(ema * decay + current * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """An in-place running mean over lists of tensors: ``avg += (current - avg) / (num_averaged + 1)`` (a lerp for
    floats). Integer tensors raise a RuntimeError, as PyTorch's in-place integer division does."""

    def swa_update(averaged_params: Sequence[Tensor], current_params: Sequence[Tensor],
                   num_averaged: Tensor | int) -> None:
        if not averaged_params[0].is_floating_point():
            raise RuntimeError(f"swa_update: cannot average {averaged_params[0].dtype} tensors in place (integer "
                               "division with addcdiv is not supported, as in PyTorch)")
        weight = 1 / (num_averaged + 1)
        weight = float(weight.item()) if isinstance(weight, Tensor) else weight
        with no_grad():
            for averaged, current in zip(averaged_params, current_params):
                averaged.copy_(averaged.lerp(current, weight))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """``(ema, current, n) -> decay * ema + (1 - decay) * current``; ValueError unless ``0 <= decay <= 1``."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Tensor | int) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """``(avg, current, n) -> avg + (current - avg) / (n + 1)``: the equal-weight running mean."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Tensor | int) -> Tensor:
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` (``self.module``, moved to ``device`` when given) whose parameters (and buffers, with
    ``use_buffers``) hold a running average of ``model``'s, updated by :meth:`update_parameters`.

    The first update copies; later ones apply ``avg_fn(averaged, current, n_averaged)`` per tensor, or
    ``multi_avg_fn(averaged_list, current_list, n_averaged)`` per (backend, dtype) group, or by default the
    equal-weight mean. Without ``use_buffers`` the buffers are copied from ``model`` on every update. ``n_averaged``
    is an int64 buffer (on ``device``, else the default backend); the functions are not in the state dict.
    """

    n_averaged: Tensor

    def __init__(self, model: Module, device: Any = None, avg_fn: AvgFn | None = None,
                 multi_avg_fn: MultiAvgFn | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype="int64", backend=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The averaged copy's forward."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into the average; then
        ``n_averaged += 1``."""
        if self.use_buffers:
            mine: Iterable[Tensor] = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs: Iterable[Tensor] = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        first = int(self.n_averaged.item()) == 0
        averaged: list[Tensor] = []
        current: list[Tensor] = []
        with no_grad():
            for p_avg, p_model in zip(mine, theirs):
                target = p_avg.detach()
                source = p_model.detach().to(p_avg.backend)
                averaged.append(target)
                current.append(source)
                if first:
                    target.copy_(source)
            if not first:
                self._average(averaged, current)
            if not self.use_buffers:
                own, others = list(self.module.buffers()), list(model.buffers())
                if len(own) != len(others):
                    raise ValueError(f"zip() argument 2 is {'shorter' if len(others) < len(own) else 'longer'} than "
                                     f"argument 1: the averaged model has {len(own)} buffers, the model {len(others)}")
                for b_avg, b_model in zip(own, others):
                    b_avg.detach().copy_(b_model.detach().to(b_avg.backend))
            self.n_averaged.add_(1)

    def _average(self, averaged: list[Tensor], current: list[Tensor]) -> None:
        if self.avg_fn is not None:
            for target, source in zip(averaged, current):
                target.copy_(self.avg_fn(target, source, self.n_averaged.to(target.backend)))
            return
        groups: dict[tuple[str, str], tuple[list[Tensor], list[Tensor]]] = {}
        for target, source in zip(averaged, current):
            mine, theirs = groups.setdefault((target.backend.name, str(target.dtype)), ([], []))
            mine.append(target)
            theirs.append(source)
        swa = get_swa_avg_fn()
        for mine, theirs in groups.values():
            n = self.n_averaged.to(mine[0].backend)
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(mine, theirs, n)
            else:  # PyTorch's path for devices without foreach kernels (its CPU path), on every backend
                for target, source in zip(mine, theirs):
                    target.copy_(swa(target, source, n))


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """One pass over ``loader`` in training mode to recompute every BatchNorm layer's running statistics as a
    cumulative average (stats reset, ``momentum=None``); momenta and the training mode are restored afterwards.
    A batch is a tensor, or a list/tuple whose first element is the input; ``device`` moves it first."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr from its current value to ``swa_lr`` (one value, or one per group, stored in
    ``group["swa_lr"]``) over ``anneal_epochs`` steps, by cosine (``"cos"``) or linear interpolation, then holds
    it. ValueError for a bad strategy, a negative or non-int ``anneal_epochs``, or a ``swa_lr`` list of the wrong
    length."""

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float], anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        swa_lrs = _per_group("swa_lr", optimizer, swa_lr)
        for value, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_strategy = anneal_strategy
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t: float) -> float:
        """The fraction of the way to swa_lr at progress ``t`` in [0, 1]: t, or (1 - cos(pi t)) / 2."""
        return t if self._anneal_strategy == "linear" else (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        """The lr the annealing started from, given the lr reached at fraction ``alpha``."""
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / span)))
        alpha = self.anneal_func(max(0, min(1, step / span)))
        groups = self.optimizer.param_groups
        starts = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        return [g["swa_lr"] * alpha + start * (1 - alpha) for g, start in zip(groups, starts)]
