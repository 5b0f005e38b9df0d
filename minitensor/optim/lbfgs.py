"""L-BFGS with an optional strong-Wolfe line search (``torch.optim.LBFGS``).

Unlike the other optimizers, L-BFGS decides on the host what to do next (curvature checks, stopping tests, the line
search's brackets) from the loss and gradient values, so it reads them back every iteration and cannot run inside
``minitensor.compile``. Vectors (the flat gradient, search direction and history) stay on the parameters' backend;
the scalars the algorithm derives from them are Python floats.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff import enable_grad, no_grad
from ..compiler.capture import active
from ..errors import CompileError, ShapeError
from ..tensor import Tensor
from ..tensor_join import cat
from .checks import check_number
from .kernels import add_scaled_, bump, map_, zip_
from .optimizer import Optimizer

__all__ = ["LBFGS"]


def _dot(a: Tensor, b: Tensor) -> float:
    return float(a.dot(b).item())


def _abs_max(a: Tensor) -> float:
    return float(map_("abs", a).max().item())


def _cubic_interpolate(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                       bounds: tuple[float, float] | None = None) -> float:
    """The minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to ``bounds`` (default: between
    x1 and x2); the bounds' midpoint when the cubic has no minimum."""
    xmin_bound, xmax_bound = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = math.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func: Callable[[float], tuple[float, Tensor]], t: float, d: Tensor, f: float, g: Tensor,
                  gtd: float, c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple[float, Tensor, float, int]:
    """A step length ``t`` along ``d`` meeting the strong Wolfe conditions (bracketing, then zooming with cubic
    interpolation): returns (loss, flat gradient, t, evaluations), as PyTorch's line search."""
    d_norm = _abs_max(d)
    g = map_("id", g)
    f_new, g_new = obj_func(t)
    ls_func_evals = 1
    gtd_new = _dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    bracket: list[float] = []
    bracket_f: list[float] = []
    bracket_g: list[Tensor] = []
    bracket_gtd: list[float] = []
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f, bracket_g = [t_prev, t], [f_prev, f_new], [g_prev, map_("id", g_new)]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f, bracket_g = [t_prev, t], [f_prev, f_new], [g_prev, map_("id", g_new)]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, map_("id", g_new), gtd_new
        f_new, g_new = obj_func(t)
        ls_func_evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0.0, t], [f, f_new], [g, g_new]

    # zoom: refine the bracket until a point satisfies the conditions
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # too close to a boundary twice in a row, or at one: move 10% of the bracket inside
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(t)
        ls_func_evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = map_("id", g_new), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = map_("id", g_new), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class LBFGS(Optimizer):
    r"""L-BFGS (Nocedal) as PyTorch computes it: every :meth:`step` runs up to ``max_iter`` iterations of

    .. math::
        d = -H g \ (\text{two-loop recursion over the last } \texttt{history\_size} \text{ pairs }
        (s, y), \ H_0 = \tfrac{s^\top y}{y^\top y}), \quad p \leftarrow p + t\, d

    with ``t = lr`` (``min(1, 1/|g|_1) lr`` on the very first iteration) or a strong-Wolfe line search, stopping on
    ``tolerance_grad`` (max |g|), ``tolerance_change`` (change of loss or step) or ``max_eval`` loss evaluations.
    ``step(closure)`` needs the closure (it re-evaluates the loss and gradients). One parameter group only; the state
    lives under the first parameter, as in PyTorch.
    """

    def __init__(self, params: Any, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None):
        check_number("learning rate", lr)
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"only 'strong_wolfe' is supported as line_search_fn, got {line_search_fn!r}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")

    @property
    def _params(self) -> list[Tensor]:
        return self.param_groups[0]["params"]

    def _numel(self) -> int:
        return sum(p._data.size for p in self._params)

    def _gather_flat_grad(self) -> Tensor:
        """Every gradient flattened and joined (zeros for a parameter without one), a fresh tensor."""
        views = []
        for p in self._params:
            if p.grad is None:
                views.append(Tensor(p.backend.zeros((p._data.size,), p.dtype), p.backend))
            else:
                views.append(p.grad.detach().reshape(-1))
        return cat(views, 0) if len(views) > 1 else map_("id", views[0])

    def _add_grad(self, step_size: float, update: Tensor) -> None:
        """``p += step_size * update[p's slice]`` for every parameter, in place."""
        offset = 0
        alpha = None
        for p in self._params:
            numel = p._data.size
            alpha = p._lift(float(step_size)) if alpha is None or alpha.backend is not p.backend else alpha
            add_scaled_(p, update[offset:offset + numel].reshape(p.shape), alpha, out=p)
            bump(p)
            offset += numel

    def _clone_param(self) -> list[Tensor]:
        return [map_("id", p) for p in self._params]

    def _set_param(self, params_data: list[Tensor]) -> None:
        for p, data in zip(self._params, params_data):
            map_("id", data, out=p)
            bump(p)

    def _directional_evaluate(self, closure: Callable[[], Any], x: list[Tensor], t: float,
                              d: Tensor) -> tuple[float, Tensor]:
        """Loss and flat gradient at ``x + t d``; the parameters are put back to ``x`` afterwards."""
        self._add_grad(t, d)
        with enable_grad():
            loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Up to ``max_iter`` L-BFGS iterations; ``closure`` clears the gradients, computes the loss, calls
        ``backward()`` and returns the loss. Returns the loss of the first evaluation."""
        if active() is not None:
            raise CompileError("LBFGS.step reads the loss and gradients back to Python at every iteration (its line "
                               "search and stopping tests branch on them), so it cannot run inside a compiled "
                               "function; call it outside minitensor.compile")
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        with no_grad():
            return self._run(closure)

    def _run(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        opt_cond = _abs_max(flat_grad) <= tolerance_grad
        if opt_cond:
            return orig_loss

        d: Tensor = state.get("d")  # type: ignore[assignment]
        t: float = state.get("t")  # type: ignore[assignment]
        old_dirs: list[Tensor] = state.get("old_dirs")  # type: ignore[assignment]
        old_stps: list[Tensor] = state.get("old_stps")  # type: ignore[assignment]
        ro: list[float] = state.get("ro")  # type: ignore[assignment]
        h_diag: float = state.get("H_diag")  # type: ignore[assignment]
        prev_flat_grad: Tensor | None = state.get("prev_flat_grad")
        prev_loss: float = state.get("prev_loss")  # type: ignore[assignment]

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            # the descent direction
            if state["n_iter"] == 1:
                d = map_("neg", flat_grad)
                old_dirs, old_stps, ro, h_diag = [], [], [], 1.0
            else:
                assert prev_flat_grad is not None
                y = zip_("sub", flat_grad, prev_flat_grad)
                s = zip_("mul", d, t)
                ys = _dot(y, s)
                if ys > 1e-10:  # update the memory
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / _dot(y, y)
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = map_("neg", flat_grad)
                for i in range(num_old - 1, -1, -1):
                    al[i] = _dot(old_stps[i], q) * ro[i]
                    add_scaled_(q, old_dirs[i], q._lift(-al[i]), out=q)
                d = r = zip_("mul", q, h_diag)
                for i in range(num_old):
                    be_i = _dot(old_dirs[i], r) * ro[i]
                    add_scaled_(r, old_stps[i], r._lift(al[i] - be_i), out=r)
            if prev_flat_grad is None or prev_flat_grad.shape != flat_grad.shape:
                prev_flat_grad = map_("id", flat_grad)
            else:
                map_("id", flat_grad, out=prev_flat_grad)
            prev_loss = loss

            # the step length
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / float(map_("abs", flat_grad).sum().item())) * lr
            else:
                t = lr
            gtd = _dot(flat_grad, d)
            if gtd > -tolerance_change:  # the directional derivative is below tolerance
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                x_init = self._clone_param()
                direction = d

                def obj_func(step: float, x: list[Tensor] = x_init, direction: Tensor = direction) -> tuple[float, Tensor]:
                    return self._directional_evaluate(closure, x, step, direction)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, t, d, loss, flat_grad, gtd,
                                                                  max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = _abs_max(flat_grad) <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:  # no re-evaluation after the last iteration
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = _abs_max(flat_grad) <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # stopping tests
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if _abs_max(zip_("mul", d, t)) <= tolerance_change:  # lack of progress
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"] = d
        state["t"] = t
        state["old_dirs"] = old_dirs
        state["old_stps"] = old_stps
        state["ro"] = ro
        state["H_diag"] = h_diag
        state["prev_flat_grad"] = prev_flat_grad
        state["prev_loss"] = prev_loss
        return orig_loss

    # --- serialization: flat vectors and Python numbers, not per-parameter tensors ---

    def _load_state_entry(self, p: Tensor, index: int, name: str, value: Any) -> Any:
        if name in ("d", "prev_flat_grad"):
            return self._flat(index, name, value)
        if name in ("old_dirs", "old_stps"):
            return [self._flat(index, name, v) for v in value]
        if name in ("ro", "al"):
            return [None if v is None else _number(index, name, v) for v in value]
        if name in ("func_evals", "n_iter"):
            return int(_number(index, name, value))
        if name in ("t", "H_diag", "prev_loss"):
            return None if value is None else _number(index, name, value)
        return super()._load_state_entry(p, index, name, value)

    def _flat(self, index: int, name: str, value: Any) -> Tensor | None:
        """A loaded flat vector (all parameters' elements), checked and copied onto the first parameter's backend."""
        if value is None:
            return None
        array = value.to_numpy() if isinstance(value, Tensor) else np.asarray(value)
        first = self._params[0]
        if array.shape != (self._numel(),):
            raise ShapeError(f"optimizer state {name!r} of parameter {index} has shape {tuple(array.shape)}, but "
                             f"LBFGS keeps flat vectors of the parameters' {self._numel()} elements")
        return Tensor(first.backend.from_numpy(np.array(array, dtype=first.dtype, order="C")), first.backend)


def _number(index: int, name: str, value: Any) -> float:
    """A loaded scalar state entry (a number, or a one-element tensor or array) as a float."""
    try:
        return float(np.asarray(value.to_numpy() if isinstance(value, Tensor) else value).reshape(()))
    except (TypeError, ValueError):
        raise ValueError(f"optimizer state {name!r} of parameter {index} must be one number, got {value!r}") from None
