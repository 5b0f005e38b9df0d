"""Stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay (``torch.optim.SGD``)."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .checks import check_number
from .kernels import add_scaled_, map_, zip_
from .optimizer import Optimizer
from .shared_updates import descent_grad

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""SGD as PyTorch computes it, per parameter, with ``g = -grad`` when ``maximize``:

    .. math::
        g &\leftarrow g + \lambda p \quad (\text{weight\_decay } \lambda) \\
        b &\leftarrow g \text{ (first step)}, \quad b \leftarrow \mu b + (1 - \tau) g \quad (\text{momentum } \mu,
        \text{ dampening } \tau) \\
        g &\leftarrow g + \mu b \text{ (nesterov) or } b \\
        p &\leftarrow p - \text{lr}\, g
    """

    def __init__(self, params: Any, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None):
        check_number("learning rate", lr)
        check_number("momentum value", momentum)
        check_number("dampening value", dampening)
        check_number("weight_decay value", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_flags(differentiable, fused)
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def _keeps_state(self, group: dict[str, Any]) -> bool:
        return group["momentum"] != 0  # the momentum buffer starts as a copy of the first gradient

    def _scalars(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> dict[str, float]:
        return {"weight_decay": group["weight_decay"], "momentum": group["momentum"],
                "undamped": 1 - group["dampening"], "neg_lr": -group["lr"]}

    def _group_structure(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"], group["weight_decay"] != 0, group["momentum"] != 0, group["dampening"] == 0,
                group["nesterov"])

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                scalars: dict[str, Tensor]) -> None:
        g = descent_grad(p, grad, group, scalars)
        if group["momentum"] != 0:
            momentum = scalars["momentum"]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = map_("id", g)
            else:
                zip_("mul", buf, momentum, out=buf)
                damped = g if group["dampening"] == 0 else zip_("mul", g, scalars["undamped"])
                zip_("add", buf, damped, out=buf)
            g = zip_("add", g, zip_("mul", buf, momentum)) if group["nesterov"] else buf
        add_scaled_(p, g, scalars["neg_lr"], out=p)  # p.add_(g, alpha=-lr), as PyTorch's SGD


def _check_flags(differentiable: bool, fused: bool | None) -> None:
    """PyTorch's implementation switches that minitensor does not have: refused when turned on."""
    if differentiable:
        raise NotImplementedError("differentiable=True (autograd through the optimizer step) is not supported")
    if fused:
        raise NotImplementedError("fused=True is not supported; the update already runs a few kernels per parameter")
