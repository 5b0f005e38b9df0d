"""RAdam, rectified Adam (``torch.optim.RAdam``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..compiler.capture import add_guard
from ..tensor import Tensor
from .checks import check_betas, check_number
from .kernels import host_number, lerp_scalars, map_, step_tensor, step_value, zeros_like, zip_
from .optimizer import Optimizer
from .sgd import _check_flags
from .shared_updates import adam_moments, adam_structure

__all__ = ["RAdam"]


def _rho(beta2: float, step: float) -> tuple[float, float]:
    """(rho_inf, rho_t): the maximum and the step-``step`` length of the approximated simple moving average."""
    rho_inf = 2 / (1 - beta2) - 1
    return rho_inf, rho_inf - 2 * step * (beta2**step) / (1 - beta2**step)


class RAdam(Optimizer):
    r"""RAdam (Liu et al.) as PyTorch computes it, per parameter, with ``g = -grad`` when ``maximize``:

    .. math::
        g &\leftarrow g + \lambda p \text{ (L2), or } p \leftarrow p (1 - \text{lr}\,\lambda) \text{ (decoupled)}, \quad
        m \leftarrow \beta_1 m + (1 - \beta_1) g, \quad v \leftarrow \beta_2 v + (1 - \beta_2) g^2 \\
        \rho_\infty &= \tfrac{2}{1 - \beta_2} - 1, \quad \rho_t = \rho_\infty - \tfrac{2 t \beta_2^t}{1 - \beta_2^t},
        \quad r_t = \sqrt{\tfrac{(\rho_t - 4)(\rho_t - 2)\rho_\infty}{(\rho_\infty - 4)(\rho_\infty - 2)\rho_t}} \\
        p &\leftarrow p - \text{lr} \, \frac{m}{1 - \beta_1^t} \, \frac{\sqrt{1 - \beta_2^t}}{\sqrt v + \epsilon} \, r_t
        \text{ if } \rho_t > 5, \text{ else } p \leftarrow p - \text{lr} \, \frac{m}{1 - \beta_1^t}
    """

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False):
        check_number("learning rate", lr)
        check_number("epsilon value", eps)
        check_betas(betas)
        check_number("weight_decay value", weight_decay)
        _check_flags(differentiable, None)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update (see :meth:`Optimizer.step`). Whether a parameter's step is rectified (rho_t > 5) chooses its
        kernels, so a compiled step is guarded on it, read before the step advances the counts."""
        add_guard(self._rectified)
        return super().step(closure)

    def _rectified(self) -> tuple:
        """For each parameter with state: whether its next step is rectified."""
        return tuple(_rho(group["betas"][1], host_number(self.state[p]["step"]) + 1)[1] > 5.0
                     for group in self.param_groups for p in group["params"] if p in self.state)

    def _init_state(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_tensor(0.0)
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)

    def _required_state(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("step", "exp_avg", "exp_avg_sq")

    def _scalars(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> dict[str, float]:
        lr, (beta1, beta2) = group["lr"], group["betas"]
        step = step_value(state)
        weight, rest = lerp_scalars(1 - beta1, p.dtype)
        rho_inf, rho_t = _rho(beta2, step)
        rect = (((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                if rho_t > 5.0 else 1.0)
        return {"decay": 1 - lr * group["weight_decay"], "weight_decay": group["weight_decay"], "weight": weight,
                "rest": rest, "beta2": beta2, "one_minus_beta2": 1 - beta2, "bias_correction1": 1 - beta1**step,
                "bias_correction2_sqrt": (1 - beta2**step) ** 0.5, "eps": group["eps"], "lr": lr, "rect": rect}

    def _group_structure(self, group: dict[str, Any]) -> tuple:
        return adam_structure(group)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                scalars: dict[str, Tensor]) -> None:
        beta1, beta2 = group["betas"]
        g, scratch = adam_moments(p, grad, state, group, scalars)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        # (exp_avg / bias_correction1) * lr [* (1 / (sqrt(v) + eps)) * sqrt(bias_correction2) * rect], PyTorch's order
        update = zip_("mul", zip_("div", exp_avg, scalars["bias_correction1"], out=scratch), scalars["lr"], out=scratch)
        if _rho(beta2, host_number(state["step"]))[1] > 5.0:
            adaptive = zip_("add", map_("sqrt", exp_avg_sq), scalars["eps"])
            map_("inv", adaptive, out=adaptive)
            zip_("mul", adaptive, scalars["bias_correction2_sqrt"], out=adaptive)
            zip_("mul", zip_("mul", update, adaptive, out=update), scalars["rect"], out=update)
        zip_("sub", p, update, out=p)
