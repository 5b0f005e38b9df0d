"""Averaged stochastic gradient descent (``torch.optim.ASGD``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..compiler.capture import add_guard
from ..tensor import Tensor
from .checks import check_number
from .kernels import add_scaled_, host_number, map_, set_host_number, step_tensor, step_value, zeros_like, zip_
from .optimizer import Optimizer
from .sgd import _check_flags
from .shared_updates import descent_grad

__all__ = ["ASGD"]


class ASGD(Optimizer):
    r"""ASGD (Polyak & Juditsky) as PyTorch computes it, per parameter, with ``g = -grad`` when ``maximize``:

    .. math::
        g &\leftarrow g + \lambda_{wd}\, p, \quad p \leftarrow p (1 - \lambda \eta) - \eta g, \quad
        a \leftarrow p \text{ if } \mu = 1 \text{ else } a + \mu (p - a) \\
        \eta &\leftarrow \frac{\text{lr}}{(1 + \lambda\, \text{lr}\, t)^\alpha}, \quad
        \mu \leftarrow \frac{1}{\max(1, t - t_0)}

    ``eta`` and ``mu`` (the values the next step uses) are 0-d float32 host tensors in the state, as in PyTorch.
    """

    _host_state = ("eta", "mu")

    def __init__(self, params: Any, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
                 weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False):
        check_number("learning rate", lr)
        check_number("weight_decay value", weight_decay)
        _check_flags(differentiable, None)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))
        self._copying: dict[Tensor, bool] = {}  # per parameter: whether the step being taken copies p into ax

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update (see :meth:`Optimizer.step`). Whether ``mu`` is 1 (the average is then a copy) chooses the
        kernels, so a compiled step is guarded on it, read before the step updates ``mu``."""
        add_guard(self._copies)
        return super().step(closure)

    def _copies(self) -> tuple:
        """For each parameter with state: whether its next step copies the parameter into ``ax``."""
        return tuple(host_number(self.state[p]["mu"]) == 1.0
                     for group in self.param_groups for p in group["params"] if p in self.state)

    def _init_state(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_tensor(0.0)
        state["eta"] = step_tensor(group["lr"])
        state["mu"] = step_tensor(1.0)
        state["ax"] = zeros_like(p)

    def _required_state(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("step", "eta", "mu", "ax")

    def _scalars(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> dict[str, float]:
        lr, lambd = group["lr"], group["lambd"]
        step = step_value(state)
        eta, mu = host_number(state["eta"]), host_number(state["mu"])
        self._copying[p] = mu == 1.0
        set_host_number(state["eta"], lr / ((1 + lambd * lr * step) ** group["alpha"]))  # in place, see set_host_number
        set_host_number(state["mu"], 1 / max(1, step - group["t0"]))
        return {"weight_decay": group["weight_decay"], "decay": 1 - lambd * eta, "neg_eta": -eta, "mu": mu}

    def _group_structure(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"], group["weight_decay"] != 0)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                scalars: dict[str, Tensor]) -> None:
        g = descent_grad(p, grad, group, scalars)
        zip_("mul", p, scalars["decay"], out=p)
        add_scaled_(p, g, scalars["neg_eta"], out=p)
        ax = state["ax"]
        if self._copying[p]:
            map_("id", p, out=ax)
        else:
            zip_("add", ax, zip_("mul", zip_("sub", p, ax), scalars["mu"]), out=ax)
