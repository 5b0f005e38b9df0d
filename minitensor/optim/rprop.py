"""Resilient backpropagation (``torch.optim.Rprop``)."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .checks import check_number
from .kernels import empty_like, map_, step_tensor, step_value, zeros_like, zip_
from .optimizer import Optimizer
from .sgd import _check_flags

__all__ = ["Rprop"]


class Rprop(Optimizer):
    r"""Rprop (Riedmiller & Braun) as PyTorch computes it, per parameter, with ``g = -grad`` when ``maximize``:

    .. math::
        s = \operatorname{sign}(g\, g_{prev}), \quad
        \eta \leftarrow \operatorname{clamp}(\eta \cdot (\eta_+ \text{ if } s > 0,\; \eta_- \text{ if } s < 0,\;
        1 \text{ else}),\ \eta_{min}, \eta_{max}) \\
        g \leftarrow 0 \text{ where } s < 0, \quad p \leftarrow p - \operatorname{sign}(g)\, \eta, \quad
        g_{prev} \leftarrow g

    The per-element step sizes ``step_size`` start at ``lr``; ``prev`` holds the previous (masked) gradient.
    """

    def __init__(self, params: Any, lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False):
        check_number("learning rate", lr)
        if not isinstance(etas, (tuple, list)) or len(etas) != 2:
            raise ValueError(f"etas must be a pair (etaminus, etaplus), got {etas!r}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        if not isinstance(step_sizes, (tuple, list)) or len(step_sizes) != 2:
            raise ValueError(f"step_sizes must be a pair (min, max), got {step_sizes!r}")
        _check_flags(differentiable, None)
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _init_state(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_tensor(0.0)
        state["prev"] = zeros_like(p)
        state["step_size"] = zeros_like(p, group["lr"])

    def _required_state(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("step", "prev", "step_size")

    def _scalars(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> dict[str, float]:
        step_value(state)
        (etaminus, etaplus), (low, high) = group["etas"], group["step_sizes"]
        return {"etaminus": etaminus, "etaplus": etaplus, "low": low, "high": high, "zero": 0.0, "one": 1.0}

    def _group_structure(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"],)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                scalars: dict[str, Tensor]) -> None:
        g = map_("neg", grad) if group["maximize"] else grad
        prev, step_size = state["prev"], state["step_size"]
        backend = p.backend
        sign = map_("sign", zip_("mul", g, prev))
        rising = zip_("gt", sign, scalars["zero"])
        falling = zip_("lt", sign, scalars["zero"])
        factor = empty_like(p)
        backend.where(falling._data, scalars["etaminus"]._data, scalars["one"]._data, factor._data)
        backend.where(rising._data, scalars["etaplus"]._data, factor._data, factor._data)
        zip_("mul", step_size, factor, out=step_size)
        zip_("min", zip_("max", step_size, scalars["low"], out=step_size), scalars["high"], out=step_size)
        backend.where(falling._data, scalars["zero"]._data, g._data, prev._data)  # the gradient, 0 where s < 0
        zip_("sub", p, zip_("mul", map_("sign", prev, out=sign), step_size, out=sign), out=p)
