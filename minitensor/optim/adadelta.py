"""Adadelta (``torch.optim.Adadelta``)."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .checks import check_number
from .kernels import add_scaled_, addcmul_, empty_like, map_, step_tensor, step_value, zeros_like, zip_
from .optimizer import Optimizer
from .sgd import _check_flags
from .shared_updates import descent_grad

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Adadelta (Zeiler) as PyTorch computes it, per parameter, with ``g = -grad`` when ``maximize``:

    .. math::
        g &\leftarrow g + \lambda p, \quad v \leftarrow \rho v + (1 - \rho) g^2, \quad
        \Delta = \frac{\sqrt{u + \epsilon}}{\sqrt{v + \epsilon}} \, g \\
        u &\leftarrow \rho u + (1 - \rho) \Delta^2, \quad p \leftarrow p - \text{lr}\, \Delta
    """

    def __init__(self, params: Any, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0,
                 foreach: bool | None = None, *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False):
        check_number("learning rate", lr)
        check_number("rho value", rho, 0.0, 1.0)
        check_number("epsilon value", eps)
        check_number("weight_decay value", weight_decay)
        _check_flags(differentiable, None)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _init_state(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_tensor(0.0)
        state["square_avg"] = zeros_like(p)
        state["acc_delta"] = zeros_like(p)

    def _required_state(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("step", "square_avg", "acc_delta")

    def _scalars(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> dict[str, float]:
        step_value(state)
        return {"weight_decay": group["weight_decay"], "rho": group["rho"], "one_minus_rho": 1 - group["rho"],
                "eps": group["eps"], "neg_lr": -group["lr"]}

    def _group_structure(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"], group["weight_decay"] != 0, 1 - group["rho"] != 1)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                scalars: dict[str, Tensor]) -> None:
        g = descent_grad(p, grad, group, scalars)
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        one_minus_rho = scalars["one_minus_rho"] if 1 - group["rho"] != 1 else None
        scratch = empty_like(p)
        zip_("mul", square_avg, scalars["rho"], out=square_avg)
        addcmul_(square_avg, g, g, one_minus_rho, scratch)
        std = map_("sqrt", zip_("add", square_avg, scalars["eps"], out=scratch), out=scratch)
        delta = map_("sqrt", zip_("add", acc_delta, scalars["eps"]))
        zip_("mul", zip_("div", delta, std, out=delta), g, out=delta)
        zip_("mul", acc_delta, scalars["rho"], out=acc_delta)
        addcmul_(acc_delta, delta, delta, one_minus_rho, scratch)
        add_scaled_(p, delta, scalars["neg_lr"], out=p)
