"""Optimizers and learning-rate schedulers following PyTorch's update equations exactly.

``params`` is a list of :class:`~minitensor.Parameter` (``model.parameters()``), or a list of
parameter groups ``{"params": [...], "lr": ...}`` with per-group hyperparameters. A step computes
new tensors under :func:`~minitensor.no_grad` and swaps them in with ``Parameter.update`` (same
backend and dtype, the gradient carried over as in PyTorch); nothing autodiff may hold is mutated.
Optimizer state (momentum buffers, moment estimates) lives on each parameter's backend.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from .autodiff import no_grad
from .module import Module
from .tensor import Tensor

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSProp", "RMSprop", "Adagrad", "LRScheduler", "StepLR", "CosineAnnealingLR"]


class Optimizer:
    """Base class: parameter groups, per-parameter state, ``zero_grad``, ``step``, ``state_dict``."""

    def __init__(self, params: Any, defaults: dict[str, Any]):
        if isinstance(params, Module):
            params = params.parameters()
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.defaults = dict(defaults)
        self.param_groups: list[dict[str, Any]] = []
        for group in groups:
            members = list(group["params"])
            for p in members:
                if not isinstance(p, Tensor):
                    raise TypeError(f"optimizers take Tensors (model.parameters()), got {type(p).__name__}")
            self.param_groups.append({**self.defaults, **group, "params": members})
        self.state: dict[int, dict[str, Any]] = {}

    def _indexed(self) -> Iterable[tuple[int, Tensor, dict[str, Any]]]:
        i = 0
        for group in self.param_groups:
            for p in group["params"]:
                yield i, p, group
                i += 1

    @property
    def lr(self) -> float:
        return self.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value: float) -> None:
        for group in self.param_groups:
            group["lr"] = value

    def zero_grad(self) -> None:
        for _, p, _ in self._indexed():
            p.grad = None

    def step(self) -> None:
        """One update of every parameter that has a gradient."""
        with no_grad():
            for i, p, group in self._indexed():
                grad = p.grad
                if grad is None:
                    continue
                p.copy_(self._update(p.detach(), grad.detach(), self.state.setdefault(i, {}), group))

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Any], group: dict[str, Any]) -> Tensor:
        raise NotImplementedError

    # --- serialization ---

    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {name: ndarray or number}}, "param_groups": [hyperparameters + param indices]}``."""
        state = {
            i: {k: (v.to_numpy() if isinstance(v, Tensor) else v) for k, v in entry.items()} for i, entry in self.state.items()
        }
        groups, start = [], 0
        for group in self.param_groups:
            n = len(group["params"])
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": list(range(start, start + n))})
            start += n
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        groups = state_dict["param_groups"]
        if [len(g["params"]) for g in groups] != [len(g["params"]) for g in self.param_groups]:
            raise ValueError(
                f"optimizer state has groups of sizes {[len(g['params']) for g in groups]}, "
                f"this optimizer has {[len(g['params']) for g in self.param_groups]}"
            )
        for mine, saved in zip(self.param_groups, groups):
            mine.update({k: v for k, v in saved.items() if k != "params"})
        params = {i: p for i, p, _ in self._indexed()}
        self.state = {}
        for i, entry in state_dict["state"].items():
            like = params[int(i)]
            self.state[int(i)] = {k: (_on(like, v) if isinstance(v, np.ndarray) else v) for k, v in entry.items()}


def _on(like: Tensor, array: np.ndarray) -> Tensor:
    return Tensor(like.backend.from_numpy(np.asarray(array, dtype=like.dtype)), like.backend)


class SGD(Optimizer):
    """p -= lr * g' with g' = buf (or g + momentum * buf with Nesterov), buf = momentum * buf + (1 - dampening) * g."""

    def __init__(self, params: Any, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False):
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum needs momentum > 0 and dampening = 0")
        super().__init__(
            params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov)
        )

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Any], group: dict[str, Any]) -> Tensor:
        if group["weight_decay"]:
            g = g + p * group["weight_decay"]
        momentum = group["momentum"]
        if momentum:
            buf = state.get("momentum_buffer")
            buf = g if buf is None else buf * momentum + g * (1.0 - group["dampening"])
            state["momentum_buffer"] = buf
            g = g + buf * momentum if group["nesterov"] else buf
        return p - g * group["lr"]


class Adam(Optimizer):
    """Adam (Kingma & Ba) with PyTorch's bias correction; ``weight_decay`` is L2 added to the gradient."""

    decoupled = False

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False):
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad))

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Any], group: dict[str, Any]) -> Tensor:
        lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        if wd and self.decoupled:
            p = p * (1.0 - lr * wd)
        elif wd:
            g = g + p * wd
        step = state.get("step", 0) + 1
        m = state.get("exp_avg")
        v = state.get("exp_avg_sq")
        m = g * (1.0 - b1) if m is None else m * b1 + g * (1.0 - b1)
        v = g * g * (1.0 - b2) if v is None else v * b2 + g * g * (1.0 - b2)
        state.update(step=step, exp_avg=m, exp_avg_sq=v)
        if group["amsgrad"]:
            top = state.get("max_exp_avg_sq")
            top = v if top is None else top.maximum(v)
            state["max_exp_avg_sq"] = top
            v = top
        bias1, bias2 = 1.0 - b1**step, 1.0 - b2**step
        denom = v.sqrt() / math.sqrt(bias2) + eps
        return p - m / denom * (lr / bias1)


class AdamW(Adam):
    """Adam with decoupled weight decay: p *= 1 - lr * weight_decay before the Adam step (Loshchilov & Hutter)."""

    decoupled = True

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad)


class RMSProp(Optimizer):
    """sq = alpha sq + (1 - alpha) g^2; p -= lr g / (sqrt(sq) + eps) (optionally centered and with momentum)."""

    def __init__(self, params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0.0,
                 momentum: float = 0.0, centered: bool = False):
        super().__init__(
            params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum, centered=centered)
        )

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Any], group: dict[str, Any]) -> Tensor:
        alpha, eps = group["alpha"], group["eps"]
        if group["weight_decay"]:
            g = g + p * group["weight_decay"]
        sq = state.get("square_avg")
        sq = g * g * (1.0 - alpha) if sq is None else sq * alpha + g * g * (1.0 - alpha)
        state["square_avg"] = sq
        state["step"] = state.get("step", 0) + 1
        if group["centered"]:
            ga = state.get("grad_avg")
            ga = g * (1.0 - alpha) if ga is None else ga * alpha + g * (1.0 - alpha)
            state["grad_avg"] = ga
            avg = (sq - ga * ga).sqrt() + eps
        else:
            avg = sq.sqrt() + eps
        if group["momentum"] > 0:
            buf = state.get("momentum_buffer")
            buf = g / avg if buf is None else buf * group["momentum"] + g / avg
            state["momentum_buffer"] = buf
            return p - buf * group["lr"]
        return p - g / avg * group["lr"]


RMSprop = RMSProp


class Adagrad(Optimizer):
    """sum += g^2; p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(sum) + eps)."""

    def __init__(self, params: Any, lr: float = 1e-2, lr_decay: float = 0.0, weight_decay: float = 0.0,
                 initial_accumulator_value: float = 0.0, eps: float = 1e-10):
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, eps=eps))

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Any], group: dict[str, Any]) -> Tensor:
        if group["weight_decay"]:
            g = g + p * group["weight_decay"]
        step = state.get("step", 0) + 1
        total = state.get("sum")
        if total is None:
            total = p * 0.0 + group["initial_accumulator_value"]
        total = total + g * g
        state.update(step=step, sum=total)
        clr = group["lr"] / (1.0 + (step - 1) * group["lr_decay"])
        return p - g / (total.sqrt() + group["eps"]) * clr


# --- learning-rate schedulers ---


class LRScheduler:
    """Sets each group's ``lr`` from its initial lr and the epoch count; call ``step()`` once per epoch."""

    def __init__(self, optimizer: Optimizer):
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = 0
        self._apply()

    def get_lr(self) -> list[float]:
        raise NotImplementedError

    def _apply(self) -> None:
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr

    def step(self) -> None:
        self.last_epoch += 1
        self._apply()

    def get_last_lr(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if k != "optimizer"}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._apply()


class StepLR(LRScheduler):
    """lr = initial_lr * gamma ** (epoch // step_size)."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer)

    def get_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (initial_lr - eta_min) (1 + cos(pi epoch / T_max)) / 2 (the closed form of PyTorch's schedule)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0):  # noqa: N803 - PyTorch's name
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer)

    def get_lr(self) -> list[float]:
        cos = (1.0 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2.0
        return [self.eta_min + (base - self.eta_min) * cos for base in self.base_lrs]
