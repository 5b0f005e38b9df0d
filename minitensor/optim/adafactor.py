"""Adafactor, Adam-like steps from a factored second moment (``torch.optim.Adafactor``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..compiler.capture import add_guard
from ..errors import DivisionByZeroError
from ..tensor import Tensor
from .kernels import add_scaled_, host_number, lerp_, lerp_scalars, map_, step_tensor, step_value, zeros_like, zip_
from .optimizer import Optimizer, _state_value

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    r"""Adafactor (Shazeer & Stern) as PyTorch computes it, per parameter, with ``g = -grad`` when ``maximize`` and
    step count ``t``:

    .. math::
        \hat\beta_t &= 1 - t^{\tau}, \quad \rho_t = \min(\text{lr}, 1 / \sqrt t), \quad
        \alpha_t = \max(\epsilon_2, \text{RMS}(p)) \, \rho_t, \quad p \leftarrow p (1 - \text{lr}\,\lambda) \\
        R &\leftarrow \text{lerp}(R, \text{mean}_{-1}(g^2), 1 - \hat\beta_t), \quad
        C \leftarrow \text{lerp}(C, \text{mean}_{-2}(g^2), 1 - \hat\beta_t), \quad
        \hat V = \frac{R \, C}{\max(\text{mean}_{-2}(R), \epsilon_1)} \text{ (2+ dims)} \\
        \hat V &= V \leftarrow \text{lerp}(V, g^2, 1 - \hat\beta_t) \text{ (0 or 1 dim)}, \quad
        U = \frac{g}{\sqrt{\max(\hat V, \epsilon_1^2)}}, \quad
        p \leftarrow p - \frac{\alpha_t}{\max(1, \text{RMS}(U) / d)} \, U

    ``tau`` is ``beta2_decay``; ``eps = (eps1, eps2)`` with eps1 None meaning the dtype's machine epsilon. A
    parameter with 2 or more dims keeps a row factor R (its last dim reduced to 1) and a column factor C (its
    second-to-last dim reduced to 1) instead of a full second moment. RMS(x) = ||x||_2 / sqrt(numel). The two
    RMS values stay on the parameter's backend (PyTorch reads them back to Python), so a step never waits on the
    device and runs under ``minitensor.compile``.
    """

    def __init__(self, params: Any, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False):
        _check_hyperparameters(lr, beta2_decay, eps, d, weight_decay)
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update (see :meth:`Optimizer.step`). The averages' lerp weight t^tau picks PyTorch's lerp formula
        (small weight or not) and so the kernels, so a compiled step is guarded on it, read before the counts
        advance."""
        add_guard(self._lerp_forms)
        return super().step(closure)

    def _lerp_forms(self) -> tuple:
        """For each parameter with state: whether its next step's lerp weight is below 0.5."""
        return tuple(abs((host_number(self.state[p]["step"]) + 1) ** group["beta2_decay"]) < 0.5
                     for group in self.param_groups for p in group["params"] if p in self.state)

    def _init_state(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = step_tensor(0.0)
        if p.dims > 1:
            state["row_var"] = _zeros(p, _factor_shapes(p.shape)["row_var"])
            state["col_var"] = _zeros(p, _factor_shapes(p.shape)["col_var"])
        else:
            state["variance"] = zeros_like(p)

    def _required_state(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("step",)

    def _load_state_entry(self, p: Tensor, index: int, name: str, value: Any) -> Any:
        """The factored averages are checked against their own shapes (p's with one dim reduced to 1)."""
        return _state_value(p, index, name, value, shape=_factor_shapes(p.shape).get(name))

    def _scalars(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> dict[str, float]:
        lr, (eps1, eps2) = group["lr"], group["eps"]
        step = step_value(state)
        eps1 = float(np.finfo(p.dtype).eps) if eps1 is None else eps1
        weight, rest = lerp_scalars(step ** group["beta2_decay"], p.dtype)
        size = float(p.numel())
        return {"weight": weight, "rest": rest, "rho": min(lr, 1 / step**0.5), "eps1": eps1, "eps1_sq": eps1 * eps1,
                "eps2": eps2, "decay": 1 - lr * group["weight_decay"], "sqrt_numel": size**0.5,
                "clip": size**0.5 * group["d"], "one": 1.0}

    def _group_structure(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"], group["weight_decay"] != 0)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                scalars: dict[str, Tensor]) -> None:
        if p.numel() == 0:
            raise DivisionByZeroError(f"Adafactor cannot update an empty parameter (shape {p.shape}): the RMS of its "
                                      "0 elements divides by zero (PyTorch raises ZeroDivisionError too)")
        g = map_("neg", grad) if group["maximize"] else grad
        alpha = zip_("mul", zip_("max", _rms(p, scalars["sqrt_numel"]), scalars["eps2"]), scalars["rho"])
        if group["weight_decay"] != 0:
            zip_("mul", p, scalars["decay"], out=p)
        small = abs(host_number(state["step"]) ** group["beta2_decay"]) < 0.5
        estimate = _factored_estimate(g, state, scalars, small) if p.dims > 1 else _full_estimate(g, state, scalars, small)
        update = zip_("mul", map_("rsqrt", zip_("max", estimate, scalars["eps1_sq"], out=estimate), out=estimate), g,
                      out=estimate)
        clip = zip_("max", zip_("div", update.norm(), scalars["clip"]), scalars["one"])
        add_scaled_(p, update, map_("neg", zip_("div", alpha, clip, out=alpha), out=alpha), out=p)


def _check_hyperparameters(lr: Any, beta2_decay: Any, eps: Any, d: Any, weight_decay: Any) -> None:
    """ValueError with PyTorch's message for a hyperparameter out of range."""
    if not 0.0 <= lr:
        raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
    if not 0.0 >= beta2_decay:
        raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
    if not isinstance(eps, (tuple, list)) or len(eps) != 2:
        raise ValueError(f"eps must be a pair (epsilon1 or None, epsilon2), got {eps!r}")
    if eps[0] is not None and not 0.0 <= eps[0]:
        raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
    if not 0.0 <= eps[1]:
        raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
    if not 1.0 <= d:
        raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")


def _factor_shapes(shape: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
    """The shapes of a parameter's row and column factors (none for fewer than 2 dims)."""
    if len(shape) < 2:
        return {}
    return {"row_var": (*shape[:-1], 1), "col_var": (*shape[:-2], 1, shape[-1])}


def _zeros(p: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Zeros of ``shape`` with p's dtype and backend."""
    return Tensor(p.backend.from_numpy(np.zeros(shape, dtype=p.dtype)), p.backend)


def _rms(t: Tensor, sqrt_numel: Tensor) -> Tensor:
    """||t||_2 / sqrt(numel) as a 0-d tensor on t's backend."""
    return zip_("div", t.norm(), sqrt_numel)


def _factored_estimate(g: Tensor, state: dict[str, Any], scalars: dict[str, Tensor], small: bool) -> Tensor:
    """Update the row and column factors in place; returns the second-moment estimate R C / max(mean_{-2} R, eps1)
    (a fresh tensor of g's shape)."""
    row_var, col_var = state["row_var"], state["col_var"]
    lerp_(row_var, (g * g).mean(-1, keepdim=True), scalars["weight"], scalars["rest"], small)
    lerp_(col_var, (g * g).mean(-2, keepdim=True), scalars["weight"], scalars["rest"], small)
    row_scale = zip_("max", row_var.mean(-2, keepdim=True), scalars["eps1"])
    estimate = row_var @ col_var
    return zip_("div", estimate, row_scale, out=estimate)


def _full_estimate(g: Tensor, state: dict[str, Any], scalars: dict[str, Tensor], small: bool) -> Tensor:
    """Update the full second moment V (0 or 1 dim) in place; returns a copy of it."""
    variance = state["variance"]
    lerp_(variance, zip_("mul", g, g), scalars["weight"], scalars["rest"], small)
    return map_("id", variance)
