"""The learning-rate schedulers' base classes (re-exported by :mod:`minitensor.optim.lr_scheduler`): ``LRScheduler``
(``step()`` sets every group's lr, state dicts hold every attribute but the optimizer), the base of the schedulers driven
by one function per group, and the base of those that drive other schedulers."""

from __future__ import annotations

import functools
import types
import warnings
from collections.abc import Callable
from typing import Any

from ..compiler.capture import host_step
from .optimizer import Optimizer

__all__ = ["LRScheduler"]


_EPOCH_DEPRECATION = ("The epoch parameter in `scheduler.step()` is deprecated (as in PyTorch); call `scheduler.step()` "
                      "without it")


def _lrs(optimizer: Optimizer) -> list[float]:
    return [group["lr"] for group in optimizer.param_groups]


class LRScheduler:
    """Base class: ``step()`` advances ``last_epoch`` and sets each group's lr to :meth:`get_lr`.

    ``last_epoch=-1`` starts a schedule (``initial_lr`` is recorded in each group); a non-negative value resumes one
    whose groups already hold ``initial_lr``.
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming a scheduler "
                                   f"with last_epoch={last_epoch}; load the optimizer's state first")
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        """The constructor's step: sets the epoch-0 learning rates."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        """The learning rates for ``last_epoch`` (called by :meth:`step`)."""
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The learning rates the last step set, one per parameter group."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or batch) and update every group's lr. ``epoch`` (deprecated in PyTorch, with a
        warning here too) jumps to that epoch with the closed-form lr where the schedule has one. Inside a function
        traced by ``minitensor.compile`` the step runs again on every replay (it is host work)."""
        host_step(functools.partial(self._advance, epoch))

    def _advance(self, epoch: int | None) -> None:
        self._step_count += 1
        if epoch is not None:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=4)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = _lrs(self.optimizer)

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned (the optimizer's lrs come from the optimizer's own state)."""
        self.__dict__.update(state_dict)


class LambdaScheduler(LRScheduler):
    """A scheduler driven by one function of the epoch per param group (``lr_lambda``: one function, or a list with
    one per group): LambdaLR and MultiplicativeLR. The functions are not in the state dict (callable objects'
    ``__dict__`` is)."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
                 last_epoch: int = -1):
        self.optimizer = optimizer
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__) for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        lambdas = state.pop("lr_lambdas", [])
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class SchedulerOfSchedulers(LRScheduler):
    """A scheduler that drives others (``_schedulers``): its state dict holds theirs, under "_schedulers"."""

    _schedulers: list[Any]

    def state_dict(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        inner = state.pop("_schedulers")
        self.__dict__.update(state)
        for scheduler, saved in zip(self._schedulers, inner):
            scheduler.load_state_dict(saved)
