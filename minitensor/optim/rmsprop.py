"""RMSprop (``torch.optim.RMSprop``)."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .checks import check_number
from .kernels import addcdiv_, addcmul_, lerp_, lerp_scalars, map_, step_tensor, step_value, zeros_like, zip_
from .optimizer import Optimizer
from .sgd import _check_flags
from .shared_updates import descent_grad

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""RMSprop (Hinton) as PyTorch computes it, per parameter, with ``g = -grad`` when ``maximize``:

    .. math::
        g &\leftarrow g + \lambda p, \quad v \leftarrow \alpha v + (1 - \alpha) g^2 \\
        \bar g &\leftarrow \alpha \bar g + (1 - \alpha) g, \quad
        a = \sqrt{v - \bar g^2} + \epsilon \text{ (centered) or } \sqrt{v} + \epsilon \\
        b &\leftarrow \mu b + g / a, \; p \leftarrow p - \text{lr}\, b \text{ (momentum } \mu > 0\text{) or }
        p \leftarrow p - \text{lr}\, g / a
    """

    def __init__(self, params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0,
                 momentum: float = 0, centered: bool = False, capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False):
        check_number("learning rate", lr)
        check_number("epsilon value", eps)
        check_number("momentum value", momentum)
        check_number("weight_decay value", weight_decay)
        check_number("alpha value", alpha)
        _check_flags(differentiable, None)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def _init_state(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_tensor(0.0)
        state["square_avg"] = zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = zeros_like(p)

    def _required_state(self, group: dict[str, Any]) -> tuple[str, ...]:
        return (("step", "square_avg") + (("momentum_buffer",) if group["momentum"] > 0 else ())
                + (("grad_avg",) if group["centered"] else ()))

    def _scalars(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> dict[str, float]:
        step_value(state)
        alpha = group["alpha"]
        weight, rest = lerp_scalars(1 - alpha, p.dtype)
        return {"weight_decay": group["weight_decay"], "alpha": alpha, "one_minus_alpha": 1 - alpha, "weight": weight,
                "rest": rest, "eps": group["eps"], "momentum": group["momentum"], "lr": group["lr"],
                "neg_lr": -group["lr"]}

    def _group_structure(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"], group["weight_decay"] != 0, group["centered"], group["momentum"] > 0,
                abs(1 - group["alpha"]) < 0.5, 1 - group["alpha"] != 1)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                scalars: dict[str, Tensor]) -> None:
        alpha = group["alpha"]
        g = descent_grad(p, grad, group, scalars)
        square_avg = state["square_avg"]
        zip_("mul", square_avg, scalars["alpha"], out=square_avg)
        addcmul_(square_avg, g, g, scalars["one_minus_alpha"] if 1 - alpha != 1 else None)
        if group["centered"]:
            grad_avg = state["grad_avg"]
            lerp_(grad_avg, g, scalars["weight"], scalars["rest"], abs(1 - alpha) < 0.5)
            avg = zip_("sub", square_avg, zip_("mul", grad_avg, grad_avg))
            map_("sqrt", avg, out=avg)
        else:
            avg = map_("sqrt", square_avg)
        zip_("add", avg, scalars["eps"], out=avg)
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            zip_("mul", buf, scalars["momentum"], out=buf)
            addcdiv_(buf, g, avg, None)
            zip_("sub", p, zip_("mul", buf, scalars["lr"]), out=p)
        else:
            addcdiv_(p, g, avg, scalars["neg_lr"])
