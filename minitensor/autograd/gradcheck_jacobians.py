"""The two Jacobians :func:`~minitensor.autograd.gradcheck` compares, and the comparisons (slow and fast mode).

For a function with inputs ``x_k`` (those requiring grad) and outputs ``y_i`` (those requiring grad), the Jacobian
block ``J[k][i]`` has shape ``(x_k.numel(), y_i.numel())``, entry ``(r, c)`` = ``d y_i[c] / d x_k[r]`` (both
flattened, row-major), PyTorch's layout:

- numerical: row ``r`` = ``(y_i(x + eps e_r) - y_i(x - eps e_r)) / (2 eps)`` by central differences, perturbing the
  input's storage in place (through ``.data``, so nothing records it) and restoring it after;
- analytical: column ``c`` = the input gradients of one backward pass with the one-hot output gradient ``e_c`` (run
  twice: the two must agree within ``nondet_tol``).

Fast mode compares one number per (input, output) pair instead: ``v^T J u`` (``J = dy/dx``) for random unit vectors
``u`` (input space) and ``v`` (output space), numerically as ``v . (J u)`` (one central difference along ``u``) and analytically
as ``(v^T J) . u`` (one backward pass), with ``atol`` scaled by ``sum(u) * sum(v)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from ..autodiff import no_grad
from ..errors import MinitensorError
from ..generators import Generator
from ..size import Size
from ..tensor import Tensor
from ..tensor_join import stack
from ..type_info import promote_types
from . import grad as _autograd_grad_entry

Func = Callable[..., Any]
FAST_MODE_SEED = 53876
"""Fast mode's private generator (the user's random state is untouched) starts here, so runs are reproducible."""


class GradcheckError(MinitensorError, RuntimeError):
    """Raised by ``gradcheck``/``gradgradcheck`` when the analytical gradient disagrees with finite differences (the
    message names the output and input indices and shows both Jacobians), or a backward is not reentrant."""


NONDET_MESSAGE = (
    "Backward is not reentrant, i.e., running backward with same input and grad_output multiple times gives different "
    "values, although analytical gradient matches numerical gradient.The tolerance for nondeterminism was {tol}.\n\n"
    "If the backward is nondeterministic on purpose, pass gradcheck/gradgradcheck a larger nondet_tol."
)
FAST_FAIL_SLOW_OK_MESSAGE = (
    "Fast gradcheck failed but element-wise differences are small. This means that the test might've passed in "
    "slow_mode!\n\nIf that is so, call gradcheck/gradgradcheck with `fast_mode=False`."
)


def as_tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def is_float_tensor(value: Any) -> bool:
    return isinstance(value, Tensor) and value.is_floating_point()


def show(value: Tensor) -> str:
    """A Jacobian (block or fast-mode number) as PyTorch's messages print it: a 0-d tensor as its number."""
    return str(value.item()) if value.dim() == 0 else str(value)


def notclose_message(analytical: Tensor, numerical: Tensor, output_idx: int, input_idx: int) -> str:
    return (f"Jacobian mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{show(numerical)}\nanalytical:{show(analytical)}\n")


def allclose(a: Tensor, b: Tensor, rtol: float, atol: float) -> bool:
    """``|a - b| <= atol + rtol |b|`` everywhere, in the promoted dtype of the two."""
    common = promote_types(a.dtype, b.dtype)
    return bool(a.to(common).allclose(b.to(common), rtol, atol))


# --- numerical ---

def _outputs_now(func: Func, inputs: tuple[Any, ...], positions: Sequence[int]) -> list[Tensor]:
    """Copies of ``func``'s outputs at ``positions`` (copies: an output may share the perturbed storage)."""
    outs = as_tuple(func(*inputs))
    with no_grad():
        return [outs[p].detach().clone() for p in positions]


def _same_kind(before: Tensor, after: Tensor, eps: float, idx: tuple[int, ...] | None) -> None:
    where = f"on index {idx} " if idx is not None else ""
    for what, a, b in (("shape", Size(before.shape), Size(after.shape)), ("dtype", before.dtype, after.dtype)):
        if a != b:
            raise AssertionError(f"Expected `func` to return outputs with the same {what} when inputs are perturbed "
                                 f"{where}by {eps}, but got: {what}s {a} and {b}.")


def central_difference(func: Func, inputs: tuple[Any, ...], entry: Tensor, delta: Any, eps: float,
                       idx: tuple[int, ...] | None, positions: Sequence[int]) -> list[Tensor]:
    """``(f(entry + delta) - f(entry - delta)) / (2 eps)`` flattened, per output at ``positions``; ``entry`` is a
    view of an input's storage, restored afterwards."""
    with no_grad():
        original = entry.clone()
        entry.copy_(original - delta)
    try:
        before = _outputs_now(func, inputs, positions)
        with no_grad():
            entry.copy_(original + delta)
        after = _outputs_now(func, inputs, positions)
    finally:
        with no_grad():
            entry.copy_(original)
    for a, b in zip(before, after):
        _same_kind(a, b, eps, idx)
    with no_grad():
        return [((b - a) / (2 * eps)).reshape(-1) for a, b in zip(before, after)]


def numerical_jacobian(func: Func, inputs: tuple[Any, ...], func_out: tuple[Any, ...], k: int,
                       positions: Sequence[int], eps: float) -> list[Tensor]:
    """``J[k][i]`` by central differences, one block per output at ``positions`` (shape (in numel, out numel));
    ``func_out`` (the unperturbed outputs) gives the blocks' sizes when the input is empty."""
    x = inputs[k]
    data = x.data
    rows = [central_difference(func, inputs, data[idx], eps, eps, idx, positions)
            for idx in itertools.product(*(range(n) for n in x.shape))]
    if rows:
        return [stack([row[i] for row in rows], 0) for i in range(len(positions))]
    return [func_out[p].new_zeros((0, func_out[p].numel())) for p in positions]


def numerical_jvp(func: Func, inputs: tuple[Any, ...], k: int, u: Tensor, eps: float,
                  positions: Sequence[int]) -> list[Tensor]:
    """Each output's derivative along the direction ``u`` (flat, input ``k``'s size) by one central difference."""
    x = inputs[k]
    with no_grad():
        delta = u.reshape(x.shape) * eps
    return central_difference(func, inputs, x.data, delta, eps, None, positions)


# --- analytical ---

def _flat_grad(g: Tensor | None, x: Tensor, check_grad_dtypes: bool) -> Tensor:
    """A gradient for ``x`` as a flat vector of ``x``'s dtype (zeros for None), checked for size and dtype."""
    if g is None:
        return x.new_zeros((x.numel(),))
    if g.shape != x.shape:
        raise GradcheckError("Analytical gradient has incorrect size")
    if check_grad_dtypes and g.dtype != x.dtype:
        raise GradcheckError("Gradient has dtype mismatch")
    with no_grad():
        return g.detach().reshape(-1).to(x.dtype).clone()


def vjp(diff_inputs: Sequence[Tensor], output: Tensor, v: Tensor) -> tuple[Tensor | None, ...]:
    """``v^T J`` for every input (None where unused), keeping the graph for the next call."""
    return _autograd_grad_entry(output, list(diff_inputs), v, retain_graph=True, allow_unused=True)


def _jacobian_columns(diff_inputs: Sequence[Tensor], output: Tensor, check_grad_dtypes: bool) -> list[Tensor]:
    """``J[k][i]`` for every input ``k``, one backward pass per output element ``j`` (giving column ``j``)."""
    n = output.numel()
    columns: list[list[Tensor]] = [[] for _ in diff_inputs]
    for j in range(n):
        with no_grad():
            one_hot = output.new_zeros((n,))
            one_hot[j] = 1.0
        grads = vjp(diff_inputs, output, one_hot.reshape(output.shape))
        for cols, g, x in zip(columns, grads, diff_inputs):
            cols.append(_flat_grad(g, x, check_grad_dtypes))
    return [stack(cols, 1) if cols else x.new_zeros((x.numel(), 0)) for cols, x in zip(columns, diff_inputs)]


def _check_reentrant(first: list[Tensor], second: list[Tensor], nondet_tol: float) -> None:
    for a, b in zip(first, second):
        if a.numel() and float((a - b).abs().max()) > nondet_tol:
            raise GradcheckError(NONDET_MESSAGE.format(tol=nondet_tol))


def analytical_jacobian(diff_inputs: Sequence[Tensor], output: Tensor, nondet_tol: float,
                        check_grad_dtypes: bool) -> list[Tensor]:
    """``J[k][i]`` for output ``i`` by backward passes, for every input (computed twice: reentrancy)."""
    first = _jacobian_columns(diff_inputs, output, check_grad_dtypes)
    _check_reentrant(first, _jacobian_columns(diff_inputs, output, check_grad_dtypes), nondet_tol)
    return first


def analytical_vjp(diff_inputs: Sequence[Tensor], output: Tensor, v: Tensor, nondet_tol: float,
                   check_grad_dtypes: bool) -> list[Tensor]:
    """``v^T J[k]`` (flat) for every input by one backward pass (computed twice: reentrancy)."""
    cotangent = v.reshape(output.shape)
    first, second = ([_flat_grad(g, x, check_grad_dtypes) for g, x in zip(vjp(diff_inputs, output, cotangent),
                                                                         diff_inputs)] for _ in range(2))
    _check_reentrant(first, second, nondet_tol)
    return first


# --- the checks ---

def _expect_no_numerical_gradient(func: Func, inputs: tuple[Any, ...], func_out: tuple[Any, ...],
                                  diff: Sequence[int], positions: Sequence[int], eps: float) -> None:
    """Without differentiable outputs, finite differences must be exactly zero too."""
    for k in diff:
        if any(bool((block != 0).any()) for block in numerical_jacobian(func, inputs, func_out, k, positions, eps)):
            raise GradcheckError("Numerical gradient for function expected to be zero")


def slow_check(func: Func, inputs: tuple[Any, ...], func_out: tuple[Any, ...], diff: Sequence[int],
               outputs: Sequence[int], float_outputs: Sequence[int], opts: dict[str, Any]) -> None:
    """Every block of the two Jacobians allclose (GradcheckError naming the first pair that is not). ``diff``:
    the positions of the inputs that require grad, ``outputs``: of the outputs that do, ``float_outputs``: of all
    float outputs."""
    eps = opts["eps"]
    if not outputs:
        _expect_no_numerical_gradient(func, inputs, func_out, diff, float_outputs, eps)
        return
    numerical = [numerical_jacobian(func, inputs, func_out, k, outputs, eps) for k in diff]
    diff_tensors = [inputs[k] for k in diff]
    for i, p in enumerate(outputs):
        blocks = analytical_jacobian(diff_tensors, func_out[p], opts["nondet_tol"], opts["check_grad_dtypes"])
        for j, a in enumerate(blocks):
            n = numerical[j][i]
            if not allclose(a, n, opts["rtol"], opts["atol"]):
                raise GradcheckError(notclose_message(a, n, i, j))


def _unit_vector(like: Tensor, generator: Generator) -> Tensor:
    """A random non-negative vector of ``like``'s size, dtype and device, of norm 1."""
    with no_grad():
        vec = like.new_empty((like.numel(),)).uniform_(0.0, 1.0, generator=generator)
        return vec / vec.norm()


def fast_check(func: Func, inputs: tuple[Any, ...], func_out: tuple[Any, ...], diff: Sequence[int],
               outputs: Sequence[int], float_outputs: Sequence[int], opts: dict[str, Any]) -> None:
    """``v^T J u`` numerically and analytically allclose for every (input, output) pair (arguments as
    :func:`slow_check`'s)."""
    eps, nondet_tol = opts["eps"], opts["nondet_tol"]
    generator = Generator()
    generator.manual_seed(FAST_MODE_SEED)
    us = [_unit_vector(inputs[k], generator) for k in diff]
    vs = [_unit_vector(func_out[p], generator) for p in outputs]
    if not outputs:
        for k, u in zip(diff, us):
            for jvp in numerical_jvp(func, inputs, k, u, eps, float_outputs):
                if jvp.numel() and float(jvp.abs().max()) > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    numerical = [[v.dot(ju) for v, ju in zip(vs, numerical_jvp(func, inputs, k, u, eps, outputs))]
                 for k, u in zip(diff, us)]
    diff_tensors = [inputs[k] for k in diff]
    analytical = [[vj.dot(u) for vj, u in zip(analytical_vjp(diff_tensors, func_out[p], v, nondet_tol,
                                                             opts["check_grad_dtypes"]), us)]
                  for p, v in zip(outputs, vs)]
    for i, row in enumerate(numerical):
        for j, n in enumerate(row):
            a = analytical[j][i]
            scaled_atol = opts["atol"] * float(us[i].sum()) * float(vs[j].sum())
            if not allclose(a, n, opts["rtol"], scaled_atol):
                report = _slow_mode_report(func, inputs, func_out, diff, outputs, i, j, opts)
                raise GradcheckError(notclose_message(a, n, j, i) + report)


def _slow_mode_report(func: Func, inputs: tuple[Any, ...], func_out: tuple[Any, ...], diff: Sequence[int],
                      outputs: Sequence[int], i: int, j: int, opts: dict[str, Any]) -> str:
    """The full Jacobian blocks of input ``i`` and output ``j``, for a fast-mode failure's message."""
    numerical = numerical_jacobian(func, inputs, func_out, diff[i], [outputs[j]], opts["eps"])[0]
    analytical = analytical_jacobian([inputs[k] for k in diff], func_out[outputs[j]], float("inf"), False)[i]
    with no_grad():
        max_diff = float((numerical - analytical).abs().max()) if numerical.numel() else 0.0
    text = ("\nThe above quantities relating the numerical and analytical jacobians are computed \nin fast mode. "
            "Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
            f"Numerical:\n {numerical}\nAnalytical:\n{analytical}\n\n"
            f"The max per-element difference (slow mode) is: {max_diff}.\n")
    if allclose(analytical, numerical, opts["rtol"], opts["atol"]):
        text += FAST_FAIL_SLOW_OK_MESSAGE
    return text
