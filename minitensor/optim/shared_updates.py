"""Update fragments several optimizers share: the descent direction (maximize, L2 weight decay) and the Adam
family's moment updates."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .kernels import addcmul_, empty_like, lerp_, map_, zip_

__all__ = ["descent_grad", "adam_structure", "adam_moments"]


def descent_grad(p: Tensor, grad: Tensor, group: dict[str, Any], scalars: dict[str, Tensor]) -> Tensor:
    """The gradient an update descends: -grad when maximizing, plus weight_decay * p (L2 decay) when weight_decay
    is not 0 (scalars["weight_decay"] holds it on p's backend)."""
    g = map_("neg", grad) if group["maximize"] else grad
    if group["weight_decay"] != 0:
        g = zip_("add", g, zip_("mul", p, scalars["weight_decay"]))
    return g


def adam_structure(group: dict[str, Any]) -> tuple:
    """What selects the kernel calls of an Adam-family update (the compiled step's guard): maximize, which weight
    decay, whether beta1's lerp takes its small-weight form and whether beta2 is 0."""
    return (group["maximize"], group["weight_decay"] != 0, group["decoupled_weight_decay"],
            abs(1 - group["betas"][0]) < 0.5, 1 - group["betas"][1] != 1)


def adam_moments(p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                 scalars: dict[str, Tensor]) -> tuple[Tensor, Tensor]:
    """The Adam family's common first steps, in place: g = -grad when maximizing; weight decay (decoupled: p *= decay;
    else g += weight_decay p); exp_avg = lerp(exp_avg, g, 1 - beta1); exp_avg_sq = beta2 exp_avg_sq + (1 - beta2)
    g^2. Returns g and a scratch tensor for the rest of the update."""
    beta1, beta2 = group["betas"]
    if group["weight_decay"] != 0 and group["decoupled_weight_decay"]:
        zip_("mul", p, scalars["decay"], out=p)
        g = map_("neg", grad) if group["maximize"] else grad
    else:
        g = descent_grad(p, grad, group, scalars)
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    scratch = empty_like(exp_avg)  # one temporary for lerp, addcmul and what follows
    lerp_(exp_avg, g, scalars["weight"], scalars["rest"], abs(1 - beta1) < 0.5, scratch)
    zip_("mul", exp_avg_sq, scalars["beta2"], out=exp_avg_sq)
    addcmul_(exp_avg_sq, g, g, scalars["one_minus_beta2"] if 1 - beta2 != 1 else None, scratch)
    return g, scratch
