"""Adagrad (``torch.optim.Adagrad``)."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .checks import check_number
from .kernels import addcdiv_, addcmul_, map_, step_tensor, step_value, zeros_like, zip_
from .optimizer import Optimizer
from .sgd import _check_flags
from .shared_updates import descent_grad

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad (Duchi et al.) as PyTorch computes it, per parameter, with ``g = -grad`` when ``maximize``:

    .. math::
        g \leftarrow g + \lambda p, \quad s \leftarrow s + g^2, \quad
        p \leftarrow p - \frac{\text{lr}}{1 + (t - 1)\,\text{lr\_decay}} \, \frac{g}{\sqrt{s} + \epsilon}

    ``s`` starts at ``initial_accumulator_value``; the state is created when the optimizer is.
    """

    def __init__(self, params: Any, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None):
        check_number("learning rate", lr)
        check_number("lr_decay value", lr_decay)
        check_number("weight_decay value", weight_decay)
        check_number("initial_accumulator_value value", initial_accumulator_value)
        check_number("epsilon value", eps)
        _check_flags(differentiable, fused)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, self.state[p], group)

    def _init_state(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_tensor(0.0)
        state["sum"] = zeros_like(p, group["initial_accumulator_value"])

    def _required_state(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("step", "sum")

    def _scalars(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> dict[str, float]:
        step = step_value(state)
        return {"weight_decay": group["weight_decay"], "eps": group["eps"],
                "neg_clr": -(group["lr"] / (1 + (step - 1) * group["lr_decay"]))}

    def _group_structure(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"], group["weight_decay"] != 0)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                scalars: dict[str, Tensor]) -> None:
        g = descent_grad(p, grad, group, scalars)
        total = state["sum"]
        addcmul_(total, g, g, None)
        std = map_("sqrt", total)
        zip_("add", std, scalars["eps"], out=std)
        addcdiv_(p, g, std, scalars["neg_clr"])
