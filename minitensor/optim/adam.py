"""Adam and AdamW (``torch.optim.Adam``, ``torch.optim.AdamW``)."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .checks import check_number
from .kernels import addcdiv_, lerp_scalars, map_, step_tensor, step_value, zeros_like, zip_
from .optimizer import Optimizer
from .sgd import _check_flags
from .shared_updates import adam_moments

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    r"""Adam (Kingma & Ba) as PyTorch computes it, per parameter, with ``g = -grad`` when ``maximize``:

    .. math::
        g &\leftarrow g + \lambda p \text{ (L2), or } p \leftarrow p (1 - \text{lr}\,\lambda) \text{ (decoupled)} \\
        m &\leftarrow \beta_1 m + (1 - \beta_1) g, \quad v \leftarrow \beta_2 v + (1 - \beta_2) g^2 \\
        \hat v &= \max(\hat v, v) \text{ (amsgrad) or } v \\
        p &\leftarrow p - \frac{\text{lr}}{1 - \beta_1^t} \, \frac{m}{\sqrt{\hat v} / \sqrt{1 - \beta_2^t} + \epsilon}
    """

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False):
        check_number("learning rate", lr)
        check_number("epsilon value", eps)
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"betas must be a pair (beta1, beta2), got {betas!r}")
        check_number("beta parameter at index 0", betas[0], 0.0, 1.0, open_high=True)
        check_number("beta parameter at index 1", betas[1], 0.0, 1.0, open_high=True)
        check_number("weight_decay value", weight_decay)
        _check_flags(differentiable, fused)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _init_state(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_tensor(0.0)
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = zeros_like(p)

    def _required_state(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("step", "exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())

    def _scalars(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> dict[str, float]:
        lr, (beta1, beta2), weight_decay = group["lr"], group["betas"], group["weight_decay"]
        step = step_value(state)
        weight, rest = lerp_scalars(1 - beta1, p.dtype)
        return {"decay": 1 - lr * weight_decay, "weight_decay": weight_decay, "weight": weight, "rest": rest,
                "beta2": beta2, "one_minus_beta2": 1 - beta2, "bias_correction2_sqrt": (1 - beta2**step) ** 0.5,
                "eps": group["eps"], "neg_step_size": -(lr / (1 - beta1**step))}

    def _group_structure(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"], group["weight_decay"] != 0, group["decoupled_weight_decay"], group["amsgrad"],
                abs(1 - group["betas"][0]) < 0.5, 1 - group["betas"][1] != 1)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                scalars: dict[str, Tensor]) -> None:
        beta1, beta2 = group["betas"]
        if _fusable(p, grad, state, group):  # one pass (the fast backend): the same operations, the same bits
            names = ("decay", "weight", "rest", "beta2", "one_minus_beta2", "bias_correction2_sqrt", "eps",
                     "neg_step_size")
            update: Any = getattr(p.backend, "adam_update")  # noqa: B009 - a method only some backends have
            update(p._data, grad._data, state["exp_avg"]._data, state["exp_avg_sq"]._data,
                   *[scalars[name]._data for name in names], group["weight_decay"] != 0, abs(1 - beta1) < 0.5)
            return
        g, scratch = adam_moments(p, grad, state, group, scalars)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        second = exp_avg_sq
        if group["amsgrad"]:
            second = zip_("max", state["max_exp_avg_sq"], exp_avg_sq, out=state["max_exp_avg_sq"])
        denom = map_("sqrt", second)
        zip_("add", zip_("div", denom, scalars["bias_correction2_sqrt"], out=denom), scalars["eps"], out=denom)
        addcdiv_(p, exp_avg, denom, scalars["neg_step_size"], scratch)


def _fusable(p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any]) -> bool:
    """Whether ``p``'s backend updates it in one pass (``adam_update``): no maximize or amsgrad, decoupled or no
    weight decay, and p, its gradient and both averages contiguous float32/float64 of one shape and dtype."""
    if not hasattr(p.backend, "adam_update") or group["maximize"] or group["amsgrad"]:
        return False
    if group["weight_decay"] != 0 and not group["decoupled_weight_decay"]:
        return False
    tensors = (p, grad, state["exp_avg"], state["exp_avg_sq"])
    return p.dtype.kind == "f" and p.dtype.itemsize in (4, 8) and all(
        t.dtype == p.dtype and t.shape == p.shape and t._data.is_contiguous() and t.backend is p.backend
        for t in tensors)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): ``p *= 1 - lr * weight_decay`` before the Adam step."""

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused, decoupled_weight_decay=True)
