"""Adamax, Adam with the infinity norm (``torch.optim.Adamax``)."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .checks import check_betas, check_number
from .kernels import addcdiv_, empty_like, lerp_, lerp_scalars, map_, step_tensor, step_value, zeros_like, zip_
from .optimizer import Optimizer
from .sgd import _check_flags
from .shared_updates import descent_grad

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""Adamax (Kingma & Ba) as PyTorch computes it, per parameter, with ``g = -grad`` when ``maximize``:

    .. math::
        g &\leftarrow g + \lambda p, \quad m \leftarrow \beta_1 m + (1 - \beta_1) g, \quad
        u \leftarrow \max(\beta_2 u, |g| + \epsilon) \\
        p &\leftarrow p - \frac{\text{lr}}{1 - \beta_1^t} \, \frac{m}{u}
    """

    def __init__(self, params: Any, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False):
        check_number("learning rate", lr)
        check_number("epsilon value", eps)
        check_betas(betas)
        check_number("weight_decay value", weight_decay)
        _check_flags(differentiable, None)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _init_state(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_tensor(0.0)
        state["exp_avg"] = zeros_like(p)
        state["exp_inf"] = zeros_like(p)

    def _required_state(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("step", "exp_avg", "exp_inf")

    def _scalars(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> dict[str, float]:
        beta1, beta2 = group["betas"]
        step = step_value(state)
        weight, rest = lerp_scalars(1 - beta1, p.dtype)
        return {"weight_decay": group["weight_decay"], "weight": weight, "rest": rest, "beta2": beta2,
                "eps": group["eps"], "neg_clr": -(group["lr"] / (1 - beta1**step))}

    def _group_structure(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"], group["weight_decay"] != 0, abs(1 - group["betas"][0]) < 0.5)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                scalars: dict[str, Tensor]) -> None:
        g = descent_grad(p, grad, group, scalars)
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        scratch = empty_like(exp_avg)
        lerp_(exp_avg, g, scalars["weight"], scalars["rest"], abs(1 - group["betas"][0]) < 0.5, scratch)
        zip_("mul", exp_inf, scalars["beta2"], out=exp_inf)
        bound = zip_("add", map_("abs", g, out=scratch), scalars["eps"], out=scratch)
        zip_("max", exp_inf, bound, out=exp_inf)
        addcdiv_(p, exp_avg, exp_inf, scalars["neg_clr"], scratch)
