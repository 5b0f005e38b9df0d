"""torch.autograd's surface: retain_graph, autograd.grad/backward, custom Functions, per-thread grad mode.

Values and gradients are compared with PyTorch (CPU, float64) and with central differences.
"""

from __future__ import annotations

import gc
import threading
import weakref
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch
from conftest import CPU_BACKENDS

import minitensor as mt
from minitensor import GradientError, ShapeError, autodiff
from minitensor import autograd as ag

# minitensor's grad-mode switches, reached through mt.autograd (like torch.autograd's) plus mt.tensor
MT = SimpleNamespace(
    tensor=mt.tensor,
    no_grad=ag.no_grad,
    enable_grad=ag.enable_grad,
    set_grad_enabled=ag.set_grad_enabled,
    inference_mode=ag.inference_mode,
    is_grad_enabled=ag.is_grad_enabled,
)
X0 = np.array([[0.5, -1.25, 2.0], [1.5, 0.75, -0.3]])
W0 = np.array([0.3, -0.7, 1.1])


def mt_t(a: Any, backend: str, requires_grad: bool = True) -> mt.Tensor:
    return mt.tensor(np.asarray(a, dtype=np.float64), backend=backend, dtype=mt.float64, requires_grad=requires_grad)


def th_t(a: Any, requires_grad: bool = True) -> torch.Tensor:
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def as_array(a: Any) -> np.ndarray:
    return a.detach().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)


def close(a: Any, b: Any) -> None:
    np.testing.assert_allclose(as_array(a), as_array(b), rtol=1e-7, atol=1e-9)


def central_diff(f: Any, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d f(x) / dx for a scalar-valued NumPy function, by central differences."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


# --- retain_graph ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_second_backward_through_freed_graph_raises(backend: str) -> None:
    x = mt_t(X0, backend)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(GradientError, match="freed by a previous backward.*retain_graph=True"):
        y.backward()
    tx = th_t(X0)
    ty = (tx.exp() * tx).sum()
    ty.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        ty.backward()
    close(x.grad, tx.grad)  # the failed call added nothing


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_retain_graph_accumulates_like_torch(backend: str) -> None:
    x, tx = mt_t(X0, backend), th_t(X0)
    y = (x * x).tanh().sum()
    ty = (tx * tx).tanh().sum()
    y.backward(retain_graph=True)
    ty.backward(retain_graph=True)
    y.backward()
    ty.backward()
    close(x.grad, tx.grad)
    with pytest.raises(GradientError, match="freed"):
        y.backward()


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_backward_through_a_freed_intermediate_raises(backend: str) -> None:
    x = mt_t(X0, backend)
    h = x * x
    h.sum().backward()
    with pytest.raises(GradientError, match="freed"):
        (h * 2.0).sum().backward()


def test_backward_keyword_names_and_positional_gradient(backend: str) -> None:
    x = mt.tensor([1.0, 2.0], backend=backend, requires_grad=True)
    (x * x).backward(mt.tensor([1.0, 0.5], backend=backend))
    (x * x).backward(gradient=mt.tensor([1.0, 0.5], backend=backend), retain_graph=False)
    np.testing.assert_allclose(x.grad.to_numpy(), [4.0, 4.0])
    x.grad = None
    (x * x).sum().backward(create_graph=True)  # higher-order: x.grad keeps its history
    assert x.grad is not None and x.grad.requires_grad
    with pytest.raises(ShapeError):
        (x * x).backward(mt.tensor([1.0], backend=backend))


def test_scalar_backward_still_retains() -> None:
    a = mt.Scalar(2.0)
    y = a * a
    y.backward()
    y.backward()
    assert a.grad == 8.0


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_saved_tensors_released_after_backward(backend: str) -> None:
    x = mt_t(X0, backend)
    h = x * 3.0
    y = (h * h).sin().sum()
    alive = weakref.ref(h)
    del h
    gc.collect()
    assert alive() is not None  # held by the graph
    y.backward()
    gc.collect()
    assert alive() is None
    assert y.history is not None and y.history.ctx is None and y.history.inputs == ()


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_retained_graph_keeps_saved_tensors(backend: str) -> None:
    x = mt_t(X0, backend)
    h = x * 3.0
    y = (h * h).sum()
    alive = weakref.ref(h)
    del h
    y.backward(retain_graph=True)
    gc.collect()
    assert alive() is not None


# --- autograd.grad and autograd.backward ---


def _graph(lib: Any, x: Any, w: Any) -> tuple[Any, Any, Any]:
    h = (x * w).tanh()
    z = (h * h + x.exp()).sum()
    return h, z, (h * w).sum()


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_grad_matches_torch_with_non_leaf_inputs(backend: str) -> None:
    x, w = mt_t(X0, backend), mt_t(W0, backend)
    tx, tw = th_t(X0), th_t(W0)
    h, z, _ = _graph(mt, x, w)
    th, tz, _ = _graph(torch, tx, tw)
    got = ag.grad(z, [x, h, w])
    want = torch.autograd.grad(tz, [tx, th, tw])
    for g, t in zip(got, want):
        assert g is not None
        close(g, t)
    assert x.grad is None and w.grad is None and h.grad is None  # .grad untouched
    fx = lambda a: float(np.sum(np.tanh(a * W0) ** 2 + np.exp(a)))  # noqa: E731
    close(got[0], central_diff(fx, X0))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_grad_of_several_outputs_with_grad_outputs(backend: str) -> None:
    x, w = mt_t(X0, backend), mt_t(W0, backend)
    tx, tw = th_t(X0), th_t(W0)
    h, z, u = _graph(mt, x, w)
    th, tz, tu = _graph(torch, tx, tw)
    gh = np.arange(6.0).reshape(2, 3)
    got = ag.grad([h, u], [w, x], grad_outputs=[mt_t(gh, backend, False), None])
    want = torch.autograd.grad([th, tu], [tw, tx], grad_outputs=[th_t(gh, False), None])
    close(got[0], want[0])
    close(got[1], want[1])


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_grad_allow_unused(backend: str) -> None:
    x, unused = mt_t(X0, backend), mt_t(W0, backend)
    y = (x * x).sum()
    with pytest.raises(GradientError, match="allow_unused=True"):
        ag.grad(y, [x, unused], retain_graph=True)
    gx, gu = ag.grad(y, [x, unused], allow_unused=True)
    tx, tu = th_t(X0), th_t(W0)
    tgx, tgu = torch.autograd.grad((tx * tx).sum(), [tx, tu], allow_unused=True)
    assert gu is None and tgu is None
    close(gx, tgx)
    with pytest.raises(GradientError, match="does not require grad|requires grad"):
        ag.grad((x * x).sum(), [mt_t(W0, backend, False)])
    (g2,) = ag.grad((x * x).sum(), [x], create_graph=True)
    assert g2.requires_grad and g2.grad_fn is not None


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_grad_frees_graph_unless_retained(backend: str) -> None:
    x = mt_t(X0, backend)
    y = (x * x).sum()
    (g1,) = ag.grad(y, x, retain_graph=True)
    (g2,) = ag.grad(y, x)
    close(g1, g2)
    with pytest.raises(GradientError, match="freed"):
        ag.grad(y, x)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_autograd_backward_of_several_tensors(backend: str) -> None:
    x, w = mt_t(X0, backend), mt_t(W0, backend)
    tx, tw = th_t(X0), th_t(W0)
    h, z, u = _graph(mt, x, w)
    th, tz, tu = _graph(torch, tx, tw)
    gh = np.ones((2, 3)) * 0.5
    ag.backward([z, h], [None, mt_t(gh, backend, False)])
    torch.autograd.backward([tz, th], [None, th_t(gh, False)])
    close(x.grad, tx.grad)
    close(w.grad, tw.grad)


# --- custom Function ---


class Exp(ag.Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        (y,) = ctx.saved_tensors
        return grad * y


class ScaledMul(ag.Function):
    """k * a * b with an integer k; the gradient for b is skipped when not needed."""

    @staticmethod
    def forward(ctx: Any, a: Any, k: int, b: Any) -> Any:
        ctx.save_for_backward(a, b)
        ctx.k = k
        assert not (mt.is_grad_enabled() if isinstance(a, mt.Tensor) else torch.is_grad_enabled())
        return a * b * k

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        a, b = ctx.saved_tensors
        grad_b = grad * a * ctx.k if ctx.needs_input_grad[2] else None
        return grad * b * ctx.k, None, grad_b


class TorchExp(torch.autograd.Function):
    forward = staticmethod(Exp.forward)
    backward = staticmethod(Exp.backward)


class TorchScaledMul(torch.autograd.Function):
    forward = staticmethod(ScaledMul.forward)
    backward = staticmethod(ScaledMul.backward)


def test_custom_function_values_and_gradients(backend: str) -> None:
    x, tx = mt_t(X0, backend), th_t(X0)
    y, ty = Exp.apply(x), TorchExp.apply(tx)
    assert y.history is not None and y.history.last_fn is Exp and y.requires_grad
    close(y.to_numpy(), ty)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    close(x.grad, tx.grad)
    close(x.grad, central_diff(lambda a: float(np.sum(np.exp(a) ** 2)), X0))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_custom_function_two_inputs_non_tensor_and_none_gradient(backend: str) -> None:
    a, b = mt_t(X0, backend), mt_t(W0, backend)
    ta, tb = th_t(X0), th_t(W0)
    out, tout = ScaledMul.apply(a, 3, b), TorchScaledMul.apply(ta, 3, tb)
    close(out.to_numpy(), tout)
    out.sum().backward()
    tout.sum().backward()
    close(a.grad, ta.grad)
    close(b.grad, tb.grad)  # (3,) from a (2, 3) gradient: summed back like torch
    c = mt_t(W0, backend, requires_grad=False)
    ScaledMul.apply(a, 2, c).sum().backward()  # needs_input_grad[2] is False: backward returns None for c
    assert c.grad is None
    close(a.grad, ta.grad.numpy() + 2.0 * W0)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_custom_function_records_nothing_without_grad(backend: str) -> None:
    x = mt_t(X0, backend)
    with mt.no_grad():
        y = Exp.apply(x)
    assert y.history is None and not y.requires_grad
    y = Exp.apply(mt_t(X0, backend, requires_grad=False))
    assert y.history is None and not y.requires_grad


class Identity(ag.Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        return x

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        return grad * 2.0


class BadShape(ag.Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        return x * 1.0

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        return grad.sum(0)


class TooMany(ag.Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        return x * 1.0

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        return grad, grad


class ArgmaxMask(ag.Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        out = x * 0.0
        ctx.mark_non_differentiable(out)
        return out


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_custom_function_edge_cases(backend: str) -> None:
    x = mt_t(X0, backend)
    y = Identity.apply(x)
    assert y is not x and x.history is None and y.history is not None  # the input keeps no history
    y.sum().backward()
    close(x.grad, np.full(X0.shape, 2.0))
    with pytest.raises(ShapeError, match=r"BadShape.backward returned a gradient of shape \(3,\)"):
        BadShape.apply(x).sum().backward()
    with pytest.raises(GradientError, match="returned 2 gradients, expected 1"):
        TooMany.apply(x).sum().backward()
    m = ArgmaxMask.apply(x)
    assert m.history is None and not m.requires_grad


# --- grad mode: per thread, nesting, decorators ---


def test_no_grad_is_per_thread() -> None:
    threads_without_grad = autodiff._threads_without_grad
    inside, done = threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def worker() -> None:
        with mt.no_grad():
            inside.set()
            done.wait(5)
            x = mt.tensor([1.0], requires_grad=True)
            seen["worker_records"] = (x * 2.0).requires_grad
            seen["worker_mode"] = mt.is_grad_enabled()

    thread = threading.Thread(target=worker)
    thread.start()
    assert inside.wait(5)
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()  # the other thread is inside no_grad right now
    main_mode = mt.is_grad_enabled()
    done.set()
    thread.join(5)
    assert main_mode and y.requires_grad and y.history is not None
    assert seen == {"worker_records": False, "worker_mode": False}
    assert autodiff._threads_without_grad == threads_without_grad  # the fast path of Function.apply is back
    y.backward()
    np.testing.assert_allclose(x.grad.to_numpy(), [2.0, 4.0])


def test_new_thread_starts_with_grad_on() -> None:
    seen = []
    with mt.no_grad():
        thread = threading.Thread(target=lambda: seen.append(mt.is_grad_enabled()))
        thread.start()
        thread.join(5)
    assert seen == [True]


def test_nesting_matches_torch() -> None:
    def trace(lib: Any) -> list[bool]:
        x = lib.tensor([1.0], requires_grad=True)
        modes = []
        with lib.no_grad():
            modes.append((x * 2.0).requires_grad)
            with lib.enable_grad():
                modes.append((x * 2.0).requires_grad)
                with lib.set_grad_enabled(False):
                    modes.append(lib.is_grad_enabled())
                modes.append(lib.is_grad_enabled())
            modes.append(lib.is_grad_enabled())
            with lib.inference_mode():
                modes.append(lib.is_grad_enabled())
        modes.append(lib.is_grad_enabled())
        lib.set_grad_enabled(False)  # a plain call
        modes.append((x * 2.0).requires_grad)
        lib.set_grad_enabled(True)
        modes.append((x * 2.0).requires_grad)
        return modes

    assert trace(MT) == trace(torch) == [False, True, False, True, False, False, True, False, True]


def test_mode_restored_after_exception() -> None:
    with pytest.raises(ValueError):
        with mt.no_grad():
            raise ValueError
    assert mt.is_grad_enabled()
    with pytest.raises(ValueError):
        with ag.set_grad_enabled(False):
            raise ValueError
    assert mt.is_grad_enabled()


def test_decorator_forms_match_torch() -> None:
    def build(lib: Any) -> list[bool]:
        x = lib.tensor([1.0], requires_grad=True)

        @lib.no_grad()
        def a() -> bool:
            return (x * 2.0).requires_grad

        @lib.no_grad
        def b() -> bool:
            return lib.is_grad_enabled()

        @lib.enable_grad()
        def c() -> bool:
            return (x * 2.0).requires_grad

        with lib.no_grad():
            inner = c()
        return [a(), b(), inner, lib.is_grad_enabled(), a.__name__ == "a"]

    assert build(MT) == build(torch) == [False, False, True, True, True]

    @ag.inference_mode()
    def d() -> bool:
        return ag.is_grad_enabled()

    assert d.__name__ == "d" and not d() and ag.is_grad_enabled()


def test_autograd_namespace_exports_grad_mode() -> None:
    assert ag.no_grad is mt.no_grad and ag.is_grad_enabled is mt.is_grad_enabled
    assert mt.autograd is ag and callable(ag.grad) and callable(ag.backward)


def test_autograd_grad_runs_only_the_nodes_that_lead_to_its_inputs() -> None:
    """As torch: a backward on a branch that reaches none of the requested inputs is not run (here it would raise),
    and under create_graph a non-differentiable backward off the path (conv's input unfolding, when only the weight's
    gradient is asked for) does not refuse; the gradients asked for are unchanged."""

    class Boom(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):  # type: ignore[no-untyped-def]
            return x * 2

        @staticmethod
        def backward(ctx, grad):  # type: ignore[no-untyped-def]
            raise RuntimeError("a branch off the requested path was differentiated")

    a = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    b = mt.tensor([3.0, -4.0], dtype=mt.float64, requires_grad=True)
    z = Boom.apply(a).sum() + (b * b * a).sum()
    (gb,) = mt.autograd.grad(z, b)
    assert gb.tolist() == [6.0, -16.0]
    with pytest.raises(RuntimeError, match="off the requested path"):
        mt.autograd.grad(Boom.apply(a).sum() + (b * b * a).sum(), a)
    rng = np.random.default_rng(3)
    xs, ws = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3))
    x, w = mt.tensor(xs, requires_grad=True), mt.tensor(ws, requires_grad=True)
    (gw,) = mt.autograd.grad(mt.nn.functional.conv2d(x, w).pow(2).sum(), w, create_graph=True)
    (gww,) = mt.autograd.grad(gw.sum(), w)
    tx, tw = torch.tensor(xs, requires_grad=True), torch.tensor(ws, requires_grad=True)
    (tgw,) = torch.autograd.grad(torch.nn.functional.conv2d(tx, tw).pow(2).sum(), tw, create_graph=True)
    (tgww,) = torch.autograd.grad(tgw.sum(), tw)
    np.testing.assert_allclose(gw.detach().numpy(), tgw.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(gww.numpy(), tgww.numpy(), rtol=1e-12)
