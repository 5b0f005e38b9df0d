"""NAdam, Adam with Nesterov momentum (``torch.optim.NAdam``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from .checks import check_betas, check_number
from .kernels import (
    addcdiv_,
    host_number,
    lerp_scalars,
    map_,
    set_host_number,
    step_tensor,
    step_value,
    zeros_like,
    zip_,
)
from .optimizer import Optimizer
from .sgd import _check_flags
from .shared_updates import adam_moments, adam_structure

__all__ = ["NAdam"]


class NAdam(Optimizer):
    r"""NAdam (Dozat) as PyTorch computes it, per parameter, with ``g = -grad`` when ``maximize``:

    .. math::
        g &\leftarrow g + \lambda p \text{ (L2), or } p \leftarrow p (1 - \text{lr}\,\lambda) \text{ (decoupled)}, \quad
        \mu_t = \beta_1 (1 - \tfrac12 \, 0.96^{t \psi}), \quad \Pi_t = \textstyle\prod_{i \le t} \mu_i \\
        m &\leftarrow \beta_1 m + (1 - \beta_1) g, \quad v \leftarrow \beta_2 v + (1 - \beta_2) g^2, \quad
        d = \sqrt{v / (1 - \beta_2^t)} + \epsilon \\
        p &\leftarrow p - \text{lr} \, \frac{1 - \mu_t}{1 - \Pi_t} \frac{g}{d}
        - \text{lr} \, \frac{\mu_{t+1}}{1 - \Pi_t \mu_{t+1}} \frac{m}{d}

    (``psi`` is ``momentum_decay``; the product ``mu_product`` is kept in float32, as PyTorch keeps it.)
    """

    _host_state = ("mu_product",)

    def __init__(self, params: Any, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        check_number("learning rate", lr)
        check_number("epsilon value", eps)
        check_betas(betas)
        check_number("weight_decay value", weight_decay)
        check_number("momentum_decay value", momentum_decay)
        _check_flags(differentiable, None)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def _init_state(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_tensor(0.0)
        state["mu_product"] = step_tensor(1.0)
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)

    def _required_state(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("step", "mu_product", "exp_avg", "exp_avg_sq")

    def _scalars(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> dict[str, float]:
        lr, (beta1, beta2), decay = group["lr"], group["betas"], group["momentum_decay"]
        step = step_value(state)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
        # mu_product *= mu on a float32 tensor: a float32 product of float32 operands
        product = float(np.float32(host_number(state["mu_product"])) * np.float32(mu))
        set_host_number(state["mu_product"], product)
        weight, rest = lerp_scalars(1 - beta1, p.dtype)
        return {"decay": 1 - lr * group["weight_decay"], "weight_decay": group["weight_decay"], "weight": weight,
                "rest": rest, "beta2": beta2, "one_minus_beta2": 1 - beta2, "bias_correction2": 1 - beta2**step,
                "eps": group["eps"], "grad_coef": -lr * (1.0 - mu) / (1.0 - product),
                "avg_coef": (-lr * mu_next) / (1.0 - product * mu_next)}

    def _group_structure(self, group: dict[str, Any]) -> tuple:
        return adam_structure(group)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                scalars: dict[str, Tensor]) -> None:
        beta1, beta2 = group["betas"]
        g, scratch = adam_moments(p, grad, state, group, scalars)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        denom = zip_("div", exp_avg_sq, scalars["bias_correction2"])
        zip_("add", map_("sqrt", denom, out=denom), scalars["eps"], out=denom)
        addcdiv_(p, g, denom, scalars["grad_coef"], scratch)
        addcdiv_(p, exp_avg, denom, scalars["avg_coef"], scratch)
