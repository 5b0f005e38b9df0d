"""Muon, momentum orthogonalized by Newton-Schulz iterations, for 2-D parameters (``torch.optim.Muon``)."""

from __future__ import annotations

import math
from typing import Any

from ..tensor import Tensor
from .kernels import add_scaled_, lerp_, lerp_scalars, map_, zeros_like, zip_
from .optimizer import Optimizer

__all__ = ["Muon"]

NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
"""PyTorch's default (a, b, c) of the quintic Newton-Schulz polynomial a X + b (X X^T) X + c (X X^T)^2 X."""
ADJUST_LR_FNS = (None, "original", "match_rms_adamw")


class Muon(Optimizer):
    r"""Muon (Keller Jordan) as PyTorch computes it, for 2-D parameters, with momentum ``mu``:

    .. math::
        B &\leftarrow \mu B + (1 - \mu) g \text{ (PyTorch's lerp)}, \quad
        \tilde B = \text{lerp}(g, B, \mu) \text{ (nesterov) or } B, \quad O = \text{NS}_k(\tilde B) \\
        p &\leftarrow p (1 - \text{lr}\,\lambda) - \text{lr}' \, O

    NS_k: X = B / max(||B||_F, eps) (transposed when it has more rows than columns), then k times
    X <- a X + (b G + c G^2) X with G = X X^T. ``lr'`` is lr * sqrt(max(1, rows / cols)) (``adjust_lr_fn`` None or
    "original") or lr * 0.2 * sqrt(max(rows, cols)) ("match_rms_adamw"). PyTorch runs NS_k in bfloat16; minitensor
    (which has no bfloat16) runs it in the parameter's dtype, so steps agree with PyTorch's to bfloat16 precision and
    with the same iteration in the parameter's dtype to rounding.
    """

    def __init__(self, params: Any, lr: float = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients: tuple[float, float, float] = NS_COEFFICIENTS,
                 eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None):
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn not in ADJUST_LR_FNS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                                      ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                                      adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.dims != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.shape}")

    def _init_state(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["momentum_buffer"] = zeros_like(p)

    def _required_state(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("momentum_buffer",)

    def _scalars(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> dict[str, float]:
        lr, momentum = group["lr"], group["momentum"]
        _check_iteration(p, group)
        weight, rest = lerp_scalars(1 - momentum, p.dtype)
        nesterov_weight, nesterov_rest = lerp_scalars(momentum, p.dtype)
        a, b, c = group["ns_coefficients"]
        return {"weight": weight, "rest": rest, "nesterov_weight": nesterov_weight, "nesterov_rest": nesterov_rest,
                "eps": group["eps"], "a": a, "b": b, "c": c, "decay": 1 - lr * group["weight_decay"],
                "neg_lr": -adjusted_lr(lr, group["adjust_lr_fn"], p.shape)}

    def _group_structure(self, group: dict[str, Any]) -> tuple:
        momentum = group["momentum"]
        return (group["nesterov"], abs(1 - momentum) < 0.5, abs(momentum) < 0.5, group["ns_steps"],
                group["weight_decay"] != 0)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                scalars: dict[str, Tensor]) -> None:
        momentum, buf = group["momentum"], state["momentum_buffer"]
        lerp_(buf, grad, scalars["weight"], scalars["rest"], abs(1 - momentum) < 0.5)
        direction = buf
        if group["nesterov"]:
            direction = map_("id", grad)
            lerp_(direction, buf, scalars["nesterov_weight"], scalars["nesterov_rest"], abs(momentum) < 0.5)
        orthogonal = newton_schulz(direction, scalars, group["ns_steps"])
        if group["weight_decay"] != 0:
            zip_("mul", p, scalars["decay"], out=p)
        add_scaled_(p, orthogonal, scalars["neg_lr"], out=p)


def adjusted_lr(lr: float, adjust_lr_fn: str | None, shape: tuple[int, ...]) -> float:
    """Muon's lr for a (rows, cols) parameter: lr sqrt(max(1, rows / cols)), or lr 0.2 sqrt(max(rows, cols)) for
    "match_rms_adamw"."""
    rows, cols = shape[:2]
    if adjust_lr_fn == "match_rms_adamw":
        return lr * (0.2 * math.sqrt(max(rows, cols)))
    return lr * math.sqrt(max(1, rows / cols))


def _check_iteration(p: Tensor, group: dict[str, Any]) -> None:
    """ValueError (PyTorch's messages, raised at the step) for an iteration Muon cannot run."""
    if group["ns_steps"] >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(group["ns_coefficients"]) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    if p.dims != 2:
        raise ValueError(f"Param gradient must be a 2D matrix (a parameter added later has shape {p.shape})")


def newton_schulz(m: Tensor, scalars: dict[str, Tensor], steps: int) -> Tensor:
    """The approximate orthogonal factor of the 2-D ``m`` (U V^T of its SVD, singular values pushed towards 1):
    X = m / max(||m||_F, eps), wide side last, then ``steps`` times X <- a X + (b G + c G G) X with G = X X^T."""
    tall = m.shape[0] > m.shape[1]
    x = m.transpose(0, 1) if tall else m
    x = x / zip_("max", m.norm(), scalars["eps"])
    for _ in range(steps):
        gram = x @ x.transpose(0, 1)
        poly = zip_("add", zip_("mul", gram, scalars["b"]), zip_("mul", gram @ gram, scalars["c"]))
        x = zip_("add", zip_("mul", x, scalars["a"]), poly @ x)
    return x.transpose(0, 1) if tall else x
