"""minitensor.autograd.gradcheck/gradgradcheck and autograd.function (once_differentiable) against torch's.

The same custom Functions are written once for both libraries (method syntax both share); each is checked by both
gradchecks on the same float64 inputs: both must pass, or both must fail with the same kind of error and a message
naming the same output and input. Numerical Jacobians are compared with torch's value for value.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS
from torch.autograd.gradcheck import GradcheckError as TorchGradcheckError
from torch.autograd.gradcheck import _get_numerical_jacobian

import minitensor as mt
from minitensor.autograd.function import once_differentiable
from minitensor.autograd.gradcheck import GradcheckError
from minitensor.autograd.gradcheck_jacobians import numerical_jacobian

SHAPES = [(3,), (2, 3), (), (0,), (2, 1, 2)]


def sin_mul(lib: Any, scale_x: float = 1.0, scale_y: float = 1.0) -> Any:
    """``f(x, y) = sin(x) * y`` as a custom Function of ``lib`` whose backward is off by ``scale_x``/``scale_y``."""

    def forward(ctx: Any, x: Any, y: Any) -> Any:
        ctx.save_for_backward(x, y)
        return x.sin() * y

    def backward(ctx: Any, g: Any) -> Any:
        x, y = ctx.saved_tensors
        return g * y * x.cos() * scale_x, g * x.sin() * scale_y

    return type("SinMul", (lib.autograd.Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


def cube(lib: Any, detach_in_backward: bool = False, once: bool = False) -> Any:
    """``f(x) = x^3``; its backward ``3 x^2 g`` is right, but with ``detach_in_backward`` its own derivative in x
    is lost (a wrong second derivative); ``once`` marks it once_differentiable."""

    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x * x * x

    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        x = x.detach() if detach_in_backward else x
        return 3 * x * x * g

    if once:
        backward = (torch.autograd.function.once_differentiable if lib is torch else once_differentiable)(backward)
    return type("Cube", (lib.autograd.Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


def inputs(shape: tuple[int, ...], backend: str | None, seed: int = 0, transpose: bool = False) -> tuple[Any, ...]:
    """The same two float64 tensors requiring grad, for minitensor (``backend``) or torch (None)."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape[::-1] if transpose else shape) for _ in range(2)]
    if backend is None:
        made = [torch.tensor(a) for a in arrays]
        return tuple((t.t() if transpose else t).requires_grad_() for t in made)
    out = [mt.tensor(a, backend=backend) for a in arrays]
    return tuple((t.T if transpose else t).requires_grad_() for t in out)


KINDS = (GradcheckError, TorchGradcheckError, NotImplementedError, AssertionError, ValueError, RuntimeError, TypeError)


def outcome(check: Callable[..., bool], *args: Any, **kwargs: Any) -> tuple[str, str]:
    """("ok", "") or (the kind of failure, the first line of its message); the kind is the first of KINDS the
    error is an instance of (minitensor's typed errors subclass torch's kinds)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            assert check(*args, **kwargs) is True
        except Exception as error:  # noqa: BLE001 - the kind is what is compared
            kind = next(k for k in KINDS if isinstance(error, k)).__name__
            return kind, str(error).splitlines()[0]
    return "ok", ""


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("scales", [(1.0, 1.0), (1.5, 1.0), (1.0, -1.0)])
@pytest.mark.parametrize("fast_mode", [False, True])
def test_function_agrees_with_torch(backend: str, shape: tuple[int, ...], scales: tuple[float, float],
                                    fast_mode: bool) -> None:
    """A right backward passes, a wrong one fails naming the wrong input (0 or 1), in both libraries."""
    ours = outcome(mt.autograd.gradcheck, sin_mul(mt, *scales).apply, inputs(shape, backend), fast_mode=fast_mode)
    theirs = outcome(torch.autograd.gradcheck, sin_mul(torch, *scales).apply, inputs(shape, None), fast_mode=fast_mode)
    assert ours == theirs
    if scales != (1.0, 1.0) and 0 not in shape:
        assert ours[0] == "GradcheckError"
        assert ours[1] == f"Jacobian mismatch for output 0 with respect to input {0 if scales[0] != 1 else 1},"


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_wrong_output_is_named(backend: str) -> None:
    """A function of two outputs with the wrong gradient in the second: "output 1", in both; raise_exception=False
    gives False; the message shows both Jacobians."""

    def func(lib: Any) -> Callable[..., Any]:
        right, wrong = sin_mul(lib), sin_mul(lib, 1.0, 2.0)
        return lambda x, y: (right.apply(x, y), wrong.apply(x, y).sum(0))

    ours = outcome(mt.autograd.gradcheck, func(mt), inputs((2, 3), backend))
    assert ours == outcome(torch.autograd.gradcheck, func(torch), inputs((2, 3), None))
    assert ours == ("GradcheckError", "Jacobian mismatch for output 1 with respect to input 1,")
    assert mt.autograd.gradcheck(func(mt), inputs((2, 3), backend), raise_exception=False) is False
    with pytest.raises(RuntimeError, match=r"(?s)numerical:tensor\(.*analytical:tensor\("):
        mt.autograd.gradcheck(func(mt), inputs((2, 3), backend))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_noncontiguous_inputs_and_plain_ops(backend: str) -> None:
    """Transposed (strided) inputs, non-tensor arguments and a list of inputs, through ordinary tensor ops."""

    def func(x: Any, y: Any, k: int) -> Any:
        return ((x * y).tanh() * k + (x / (y * y + 1.0))).sum(1), x.exp()

    for fast_mode in (False, True):
        ours = mt.autograd.gradcheck(func, [*inputs((2, 3), backend, transpose=True), 3], fast_mode=fast_mode)
        assert ours is torch.autograd.gradcheck(func, [*inputs((2, 3), None, transpose=True), 3], fast_mode=fast_mode)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_numerical_jacobian_is_torchs(backend: str) -> None:
    """The central differences, block by block, equal torch's (the same formula and float64 arithmetic)."""

    def func(x: Any, y: Any) -> Any:
        return (x * y).sin(), x.exp().sum(1)

    ours, theirs = inputs((2, 3), backend), inputs((2, 3), None)
    expected = _get_numerical_jacobian(func, theirs, eps=1e-6)
    for k in range(2):
        blocks = numerical_jacobian(func, ours, func(*ours), k, [0, 1], 1e-6)
        for i, block in enumerate(blocks):
            np.testing.assert_allclose(block.to_numpy(), expected[k][i].numpy(), rtol=1e-9, atol=1e-9)
    assert ours[0].to_numpy().tolist() == theirs[0].detach().numpy().tolist()  # restored after perturbing


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_no_differentiable_outputs(backend: str) -> None:
    """Outputs cut from the graph: zero differences pass, nonzero ones fail, in both libraries and both modes."""
    for factor in (0.0, 2.0):
        for fast_mode in (False, True):
            cut = functools.partial(lambda x, k: x.detach() * k, k=factor)
            ours = outcome(mt.autograd.gradcheck, cut, inputs((3,), backend)[0], fast_mode=fast_mode)
            theirs = outcome(torch.autograd.gradcheck, cut, inputs((3,), None)[0], fast_mode=fast_mode)
            assert ours == theirs
    assert ours == ("GradcheckError", "Numerical gradient for function expected to be zero")


def scaled_only_when_nonzero(lib: Any) -> Any:
    """``f(x) = 2x`` whose backward returns ones for an all-zero gradient: right rows, not multiplied by g."""

    def forward(ctx: Any, x: Any) -> Any:
        return x * 2

    def backward(ctx: Any, g: Any) -> Any:
        return g * 2 if bool((g != 0).any()) else g * 0 + 1

    return type("Twice", (lib.autograd.Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


def noisy(lib: Any) -> Any:
    """``f(x) = 2x`` whose backward adds noise of 1e-9: not reentrant, within the Jacobian tolerance."""

    def forward(ctx: Any, x: Any) -> Any:
        return x * 2

    def backward(ctx: Any, g: Any) -> Any:
        noise = g.new_tensor(np.random.default_rng().uniform(0, 1e-9, tuple(g.shape)))
        return g * (2 + noise)

    return type("Noisy", (lib.autograd.Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_grad_output_scaling_and_reentrancy(backend: str) -> None:
    """Torch's extra checks: backward must scale with grad_output; two backward passes must agree (nondet_tol)."""
    x, tx = inputs((3,), backend)[0], inputs((3,), None)[0]
    ours = outcome(mt.autograd.gradcheck, scaled_only_when_nonzero(mt).apply, x)
    assert ours == outcome(torch.autograd.gradcheck, scaled_only_when_nonzero(torch).apply, tx)
    assert ours == ("GradcheckError", "backward not multiplied by grad_output")
    ours = outcome(mt.autograd.gradcheck, noisy(mt).apply, x)
    assert ours == outcome(torch.autograd.gradcheck, noisy(torch).apply, tx)
    assert ours[1].startswith("Backward is not reentrant")
    assert mt.autograd.gradcheck(noisy(mt).apply, x, nondet_tol=1e-6)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_fast_mode_failure_reports_slow_mode(backend: str) -> None:
    """A fast-mode failure prints v^T J u both ways as numbers, then both Jacobian blocks and their max difference."""
    with pytest.raises(GradcheckError) as info:
        mt.autograd.gradcheck(sin_mul(mt, 1.0, 3.0).apply, inputs((2, 2), backend), fast_mode=True)
    text = str(info.value)
    assert text.startswith("Jacobian mismatch for output 0 with respect to input 1,\nnumerical:")
    number = text.splitlines()[1].removeprefix("numerical:")
    float(number)  # a number, as torch prints a 0-d tensor in a message
    assert "recompute numerical and analytical jacobians in slow mode" in text
    assert "The max per-element difference (slow mode) is:" in text


def test_checks_on_inputs_and_flags() -> None:
    """No input requiring grad, a stride-0 input, flag combinations and forward AD: torch's error kinds (forward
    AD: NotImplementedError); a float32 input: torch's warning."""
    x = mt.tensor([0.5, -1.0, 2.0], dtype=mt.float64, requires_grad=True)
    tx = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    cases: list[tuple[Any, Any, dict[str, Any]]] = [
        (x.detach(), tx.detach(), {}),
        (mt.ones(1, dtype=mt.float64).expand(3).requires_grad_(), torch.ones(1, dtype=torch.float64).expand(3).requires_grad_(), {}),
        (x, tx, {"check_backward_ad": False}),
        (x, tx, {"check_batched_forward_grad": True}),
        (x, tx, {"check_batched_grad": True, "check_backward_ad": False, "check_forward_ad": True}),
    ]
    for ours_in, theirs_in, kwargs in cases:
        ours = outcome(mt.autograd.gradcheck, lambda v: v * 2, ours_in, **kwargs)
        assert ours == outcome(torch.autograd.gradcheck, lambda v: v * 2, theirs_in, **kwargs)
        assert ours[0] != "ok"
    with pytest.raises(NotImplementedError, match="check_forward_ad"):
        mt.autograd.gradcheck(lambda v: v * 2, x, check_forward_ad=True)
    with pytest.raises(NotImplementedError, match="check_fwd_over_rev"):
        mt.autograd.gradgradcheck(lambda v: v * 2, x, check_fwd_over_rev=True)
    messages = []
    for lib, value in ((mt, mt.tensor([0.5, 1.0], requires_grad=True)), (torch, torch.tensor([0.5, 1.0], requires_grad=True))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert lib.autograd.gradcheck(lambda v: v * 2, (value,), eps=1e-3, atol=1e-2, rtol=1e-2)
        messages.append([(w.category, str(w.message)) for w in caught])
    assert messages[0] == messages[1] and len(messages[0]) == 1


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_batched_grad(backend: str) -> None:
    """check_batched_grad (backward under vmap) passes for a right Function and ordinary ops, as torch's."""
    for lib, args in ((mt, inputs((2, 3), backend)), (torch, inputs((2, 3), None))):
        assert lib.autograd.gradcheck(sin_mul(lib).apply, args, check_batched_grad=True)
        assert lib.autograd.gradcheck(lambda x, y: (x @ y.T).sum(0), args, check_batched_grad=True, fast_mode=True)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_gradgradcheck(backend: str) -> None:
    """Second derivatives: right for a twice-differentiable backward, "Jacobian mismatch" when the backward detaches
    its saved input; given or random grad_outputs (strided ones too)."""
    x, tx = inputs((2, 2), backend)[0], inputs((2, 2), None)[0]
    for detach in (False, True):
        ours = outcome(mt.autograd.gradgradcheck, cube(mt, detach).apply, x)
        assert ours == outcome(torch.autograd.gradgradcheck, cube(torch, detach).apply, tx)
    assert ours == ("GradcheckError", "Jacobian mismatch for output 0 with respect to input 0,")
    go = mt.tensor([[1.0, -0.5], [0.25, 2.0]], dtype=mt.float64, backend=backend, requires_grad=True)
    assert mt.autograd.gradgradcheck(lambda a, b: (a * b).sin(), inputs((2, 2), backend), (go,))
    assert mt.autograd.gradgradcheck(lambda a, b: (a * b).sin(), inputs((2, 2), backend), fast_mode=True,
                                     gen_non_contig_grad_outputs=True, check_batched_grad=True)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_once_differentiable(backend: str) -> None:
    """First derivatives pass gradcheck; differentiating the gradient again raises torch's error (a RuntimeError);
    a gradient computed from a grad_output without grad has no history, as torch's."""
    x, tx = inputs((3,), backend)[0], inputs((3,), None)[0]
    assert mt.autograd.gradcheck(cube(mt, once=True).apply, x)
    for lib, value in ((mt, x), (torch, tx)):
        (g,) = lib.autograd.grad(cube(lib, once=True).apply(value).sum(), value, create_graph=True)
        assert g.requires_grad is False
        go = value.new_ones(3).requires_grad_()
        (g,) = lib.autograd.grad(cube(lib, once=True).apply(value), value, go, create_graph=True)
        assert g.requires_grad
        with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                               "@once_differentiable"):
            g.sum().backward()
    for lib, value in ((mt, x), (torch, tx)):  # autograd.grad skips the error node, which leads to no input
        with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
            lib.autograd.gradgradcheck(cube(lib, once=True).apply, value)
    assert mt.autograd.function.Function is mt.autograd.Function
    assert mt.autograd.function.FunctionCtx is mt.autograd.FunctionCtx


@pytest.mark.skipif("cuda" not in BACKENDS, reason="no cuda backend")
def test_gradcheck_on_cuda() -> None:
    x, y = inputs((2,), "cuda")
    assert mt.autograd.gradcheck(sin_mul(mt).apply, (x, y))
    assert not mt.autograd.gradcheck(sin_mul(mt, 2.0).apply, (x, y), raise_exception=False, fast_mode=True)
