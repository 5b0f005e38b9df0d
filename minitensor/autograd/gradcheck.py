"""``gradcheck`` and ``gradgradcheck``: a function's backward against finite differences, as ``torch.autograd``'s.

This is how to test a custom :class:`~minitensor.autograd.Function`::

    class Cube(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x * x * grad

    x = mt.randn(3, 4, dtype=mt.float64, requires_grad=True)   # float64: finite differences need the precision
    assert mt.autograd.gradcheck(Cube.apply, (x,))               # GradcheckError if backward is wrong
    assert mt.autograd.gradgradcheck(Cube.apply, (x,))           # the gradient of the gradient too

After the Jacobian comparison (:mod:`.gradcheck_jacobians`) come torch's extra checks: with
``check_batched_grad``, backward mapped over a batch of output gradients by :func:`minitensor.func.vmap` equals one
backward per gradient; and backward of zero output gradients gives zero input gradients of the inputs' dtype and size.
Forward-mode options (``check_forward_ad``, ``check_batched_forward_grad``, gradgradcheck's ``check_fwd_over_rev``)
raise NotImplementedError: minitensor has no forward-mode AD. ``check_undefined_grad`` is accepted and has nothing to
check: minitensor has no undefined gradients (a backward always gets a tensor, zeros where torch would pass None).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ..creation import randn_like, zeros_like
from ..dtypes import float64
from ..errors import GradientError
from ..func.vmap import vmap
from ..tensor import Tensor
from ..tensor_join import stack
from ..testing.creation import make_tensor
from . import grad as _autograd_grad_entry
from .gradcheck_jacobians import GradcheckError, as_tuple, fast_check, is_float_tensor, slow_check, vjp

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]

Func = Callable[..., Any]

BATCHED_GRAD_MESSAGE = (
    "gradcheck or gradgradcheck failed while testing batched gradient computation: backward mapped over a batch of "
    "output gradients (minitensor.func.vmap) differs from one backward per gradient. If the backward is meant to "
    "differ (it draws random numbers, say), call gradcheck/gradgradcheck with `check_batched_grad=False`."
)


def _check_flags(check_forward_ad: bool, check_backward_ad: bool, check_batched_grad: bool,
                 check_batched_forward_grad: bool) -> None:
    """torch's AssertionErrors for flag combinations that make no sense, then NotImplementedError for forward AD."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    for name, value in (("check_forward_ad", check_forward_ad), ("check_batched_forward_grad", check_batched_forward_grad)):
        if value:
            raise NotImplementedError(f"gradcheck: {name}=True needs forward-mode AD, which minitensor does not have; "
                                      "set it to False (backward mode checks the same Jacobian)")


def _differentiable_inputs(inputs: tuple[Any, ...]) -> list[int]:
    """Positions of the inputs that require grad: warned about unless float64, none may have a stride-0 dim."""
    diff = []
    for idx, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        if x.dtype != float64:
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", UserWarning, stacklevel=4)
        if not all(stride > 0 or size <= 1 for stride, size in zip(x.stride(), x.shape)):
            raise GradientError(f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs that "
                                "are non-overlapping to be able to compute the numerical gradients correctly. You "
                                "should call .contiguous on the input before passing it to gradcheck.")
        diff.append(idx)
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    return diff


def _check_batched_grad(inputs: Sequence[Tensor], output: Tensor, output_idx: int) -> None:
    """``vmap`` of backward over two random output gradients equals the two backward passes, stacked."""

    def backward_of(v: Tensor) -> tuple[Tensor, ...]:
        grads = vjp(inputs, output, v)
        return tuple(x.new_zeros(x.shape) if g is None else g for g, x in zip(grads, inputs))

    grad_outputs = [randn_like(output) for _ in range(2)]
    expected = [stack(list(shards)) for shards in zip(*(backward_of(g) for g in grad_outputs))]
    try:
        result = vmap(backward_of)(stack(grad_outputs))
    except RuntimeError as ex:
        raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n{BATCHED_GRAD_MESSAGE}") from ex
    for input_idx, (res, exp) in enumerate(zip(result, expected)):
        if not res.allclose(exp):
            raise GradcheckError(f"For output {output_idx} and input {input_idx}:\n\n{BATCHED_GRAD_MESSAGE}\n\nGot:\n"
                                 f"{res}\n\nExpected:\n{exp}")


def _check_zero_grad_outputs(outputs: Sequence[Tensor], inputs: Sequence[Tensor], masked: bool | None) -> None:
    """Backward of zero output gradients: zero input gradients (backward multiplies by grad_output) of the right
    dtype and size. Frees the outputs' graph."""
    grads = _autograd_grad_entry(list(outputs), list(inputs), [zeros_like(o) for o in outputs], allow_unused=True)
    for g, x in zip(grads, inputs):
        if g is None:
            continue
        zero = g.allclose(zeros_like(g)) if masked else bool((g == 0).all())
        if not zero:
            raise GradcheckError("backward not multiplied by grad_output")
        if g.dtype != x.dtype:
            raise GradcheckError("grad is incorrect type")
        if g.device != x.device:
            raise GradcheckError("grad is incorrect device")
        if g.shape != x.shape:
            raise GradcheckError("grad is incorrect size")


def _run_checks(func: Func, inputs: tuple[Any, ...], opts: dict[str, Any]) -> None:
    diff = _differentiable_inputs(inputs)
    func_out = as_tuple(func(*inputs))
    outputs = [p for p, o in enumerate(func_out) if isinstance(o, Tensor) and o.requires_grad]
    float_outputs = [p for p, o in enumerate(func_out) if is_float_tensor(o)]
    check = fast_check if opts["fast_mode"] else slow_check
    check(func, inputs, func_out, diff, outputs, float_outputs, opts)
    diff_tensors = [inputs[k] for k in diff]
    if opts["check_batched_grad"]:
        for i, p in enumerate(outputs):
            _check_batched_grad(diff_tensors, func_out[p], i)
    _check_zero_grad_outputs([func_out[p] for p in outputs], diff_tensors, opts["masked"])


def gradcheck(func: Func, inputs: Tensor | Sequence[Any], *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """True if ``func``'s backward agrees with central differences (step ``eps``) at ``inputs`` (a Tensor or a
    sequence of arguments): for every output ``i`` and input ``j`` requiring grad (counted among those),
    ``|analytical - numerical| <= atol + rtol * |numerical|`` element-wise over the Jacobian blocks. Otherwise
    GradcheckError (a RuntimeError) naming ``i`` and ``j`` and showing both blocks, or False without
    ``raise_exception``. Use float64 inputs (others get a warning); ``fast_mode`` compares ``v^T J u`` for random
    ``u``, ``v`` instead of whole Jacobians. See the module docstring for an example and the other options."""
    _check_flags(check_forward_ad, check_backward_ad, check_batched_grad, check_batched_forward_grad)
    opts = {"eps": eps, "atol": atol, "rtol": rtol, "nondet_tol": nondet_tol, "check_grad_dtypes": check_grad_dtypes,
            "check_batched_grad": check_batched_grad, "fast_mode": fast_mode, "masked": masked}
    try:
        _run_checks(func, as_tuple(inputs), opts)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _gradient_function(func: Func, n_inputs: int, diff_inputs: set[int], diff_grad_outputs: set[int]) -> Func:
    """``(*inputs, *grad_outputs) -> the gradients of func's differentiable outputs`` (with a graph), the function
    whose Jacobian gradgradcheck checks."""

    def gradients(*args: Any) -> tuple[Tensor, ...]:
        inputs = tuple(x.requires_grad_() if i in diff_inputs else x for i, x in enumerate(args[:n_inputs]))
        outputs = [o for o in as_tuple(func(*inputs)) if isinstance(o, Tensor) and o.requires_grad]
        grad_outputs = [g.requires_grad_() if i in diff_grad_outputs else g for i, g in enumerate(args[n_inputs:])]
        wrt = [x for i, x in enumerate(inputs) if i in diff_inputs]
        grads = _autograd_grad_entry(outputs, wrt, grad_outputs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradients


def gradgradcheck(func: Func, inputs: Tensor | Sequence[Any], grad_outputs: Tensor | Sequence[Tensor] | None = None,
                  *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True, fast_mode: bool = False,
                  masked: bool = False) -> bool:
    """:func:`gradcheck` of the gradient: of ``(inputs, grad_outputs) -> d(outputs . grad_outputs)/d inputs``
    (computed with ``create_graph=True``), so second derivatives are checked against finite differences of the first.
    ``grad_outputs`` defaults to random ones in [-1, 1) that require grad (strided views with
    ``gen_non_contig_grad_outputs``)."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    if check_fwd_over_rev:
        raise NotImplementedError("gradgradcheck: check_fwd_over_rev=True needs forward-mode AD, which minitensor does "
                                  "not have; set it to False (check_rev_over_rev checks the same second derivatives)")
    tupled = as_tuple(inputs)
    if grad_outputs is None:
        outputs = [o for o in as_tuple(func(*tupled)) if isinstance(o, Tensor) and o.requires_grad]
        cotangents = tuple(make_tensor(o.shape, dtype=o.dtype if o.is_floating_point() else float64, device=o.device,
                                       low=-1, high=1, requires_grad=True, noncontiguous=gen_non_contig_grad_outputs)
                           for o in outputs)
    else:
        cotangents = as_tuple(grad_outputs)
    diff_inputs = {i for i, x in enumerate(tupled) if isinstance(x, Tensor) and x.requires_grad}
    diff_grad_outputs = {i for i, g in enumerate(cotangents) if g.requires_grad}
    gradients = _gradient_function(func, len(tupled), diff_inputs, diff_grad_outputs)
    return gradcheck(gradients, tupled + cotangents, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                     nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     check_backward_ad=check_rev_over_rev, masked=masked)
