"""Higher-order gradients (create_graph=True), tensor hooks, retain_grad, grad_fn, clone/detach_/.data.

Every value is compared with PyTorch (float64, rtol 1e-10; one float32 case looser) on the same inputs and weights.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from conftest import CPU_BACKENDS

import minitensor as mt
from minitensor import GradientError, HigherOrderGradError
from minitensor import autograd as ag

pytestmark = pytest.mark.filterwarnings(
    "ignore:Using backward\\(\\) with create_graph:UserWarning", "ignore:The .grad attribute of a Tensor that is not a leaf:UserWarning"
)

X0 = np.array([[0.5, -1.25, 0.8], [1.5, 0.75, -0.3]])
Y0 = np.array([[1.2, 0.4, -0.9], [0.6, -1.1, 2.0]])
V0 = np.array([[0.3, -0.2, 0.7], [-0.5, 1.0, 0.25]])


def mt_t(a: Any, backend: str, requires_grad: bool = True, dtype: Any = mt.float64) -> mt.Tensor:
    return mt.tensor(np.asarray(a, dtype=np.float64), backend=backend, dtype=dtype, requires_grad=requires_grad)


def th_t(a: Any, requires_grad: bool = True, dtype: Any = torch.float64) -> torch.Tensor:
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=dtype, requires_grad=requires_grad)


def close(a: Any, b: Any, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    a, b = (v.to_numpy() if isinstance(v, mt.Tensor) else v.detach().numpy() if isinstance(v, torch.Tensor) else v for v in (a, b))
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# f(lib, x, y): the same function written once for minitensor and torch (method syntax both share)
FUNCTIONS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "cube": lambda lib, x, y: x**3,
    "tanh": lambda lib, x, y: x.tanh(),
    "sigmoid": lambda lib, x, y: x.sigmoid(),
    "exp_log": lambda lib, x, y: (x.exp() + 1.0).log() * x.exp(),
    "product": lambda lib, x, y: x * y * x,
    "quotient": lambda lib, x, y: x / (y * y + 1.0) + y / (x * x + 2.0),
    "sqrt_abs_neg": lambda lib, x, y: (x * x + 1.0).sqrt() * (-x).abs() + 1.0 / (y * y + 1.0),
    "pow_both": lambda lib, x, y: (x * x + 1.0) ** (y * 0.5),
    "relu_where_clamp": lambda lib, x, y: x.relu() * y + lib.where(x > 0, x * x, y * x) + x.clamp(-1.0, 1.0) * x,
    "trig": lambda lib, x, y: x.sin() * y.cos() + (x * 0.3).tan() + lib.maximum(x, y) * lib.minimum(x, y),
    "reductions": lambda lib, x, y: (x * y).sum(1, keepdim=True) * x.amax(1, keepdim=True) + x.mean() * y.amin(0),
    "views": lambda lib, x, y: (x.t() @ y).reshape(-1)[2:8].view(2, 3) * x.permute(1, 0).contiguous().sum(),
}


def second_order(lib: Any, x: Any, y: Any, v: Any, name: str) -> tuple[Any, ...]:
    """(f, grad f, Hessian-vector product of sum(grad f * v)) in x and y."""
    out = FUNCTIONS[name](lib, x, y) + y * 0.5  # every function depends on y (d/dy may be constant)
    gx, gy = lib.autograd.grad(out.sum(), [x, y], create_graph=True)
    hx, hy = lib.autograd.grad((gx * v).sum() + (gy * gy).sum(), [x, y], allow_unused=True)
    zero = np.zeros(X0.shape if x.shape[0] == 2 else x.shape)
    return out, gx, gy, zero if hx is None else hx, zero if hy is None else hy


@pytest.mark.parametrize("name", list(FUNCTIONS))
@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_second_derivatives_match_torch(backend: str, name: str) -> None:
    ours = second_order(mt, mt_t(X0, backend), mt_t(Y0, backend), mt_t(V0, backend, False), name)
    theirs = second_order(torch, th_t(X0), th_t(Y0), th_t(V0, False), name)
    for a, b in zip(ours, theirs):
        close(a, b)


@pytest.mark.parametrize("name", ["cube", "quotient"])
def test_second_derivatives_on_cuda(name: str) -> None:
    if "cuda" not in mt.backends.backend_names():
        pytest.skip("no cuda backend")
    x, y = X0[:1, :2], Y0[:1, :2]
    ours = second_order(mt, mt_t(x, "cuda"), mt_t(y, "cuda"), mt_t(V0[:1, :2], "cuda", False), name)
    theirs = second_order(torch, th_t(x), th_t(y), th_t(V0[:1, :2], False), name)
    for a, b in zip(ours, theirs):
        close(a, b)


def test_float32_second_derivative() -> None:
    x = mt_t(X0, "fast", dtype=mt.float32)
    tx = th_t(X0, dtype=torch.float32)
    for lib, t in ((mt, x), (torch, tx)):
        (g,) = lib.autograd.grad(t.tanh().pow(2).sum(), [t], create_graph=True)
        g.sum().backward()
    assert x.grad.dtype == mt.float32
    close(x.grad, tx.grad, rtol=1e-5, atol=1e-6)


def test_hessian_vector_product_with_matmul() -> None:
    w0 = np.array([[0.4, -0.3], [0.2, 0.9], [-0.6, 0.5]])
    v0 = np.array([0.7, -0.4, 0.1])
    results = []
    for lib, make in ((mt, lambda a, g=True: mt_t(a, "fast", g)), (torch, th_t)):
        x, w, v = make([0.3, -0.8, 1.2]), make(w0, False), make(v0, False)
        f = ((x @ w).tanh() ** 2).sum() + (x * x * x).sum()
        (g,) = lib.autograd.grad(f, x, create_graph=True)
        (hv,) = lib.autograd.grad(g @ v, x)
        results.append((f, g, hv))
    for a, b in zip(*results):
        close(a, b)


def mlp_penalty(lib: Any, params: list[Any], x: Any, target: Any) -> Any:
    """A gradient penalty: |d loss / d params|^2 + |d loss / d x|^2 of a 2-layer MLP with cross-entropy."""
    w1, b1, w2, b2 = params
    h = (x @ w1.t() + b1).tanh()
    logits = (h @ w2.t() + b2).relu() + h.sum(-1, keepdim=True)
    F = mt.nn.functional if lib is mt else torch.nn.functional
    loss = F.cross_entropy(logits, target) + F.log_softmax(logits, -1).mean() * 0.1 + F.softmax(logits, -1)[:, 0].sum()
    grads = lib.autograd.grad(loss, [*params, x], create_graph=True)
    return loss, grads, sum((g * g).sum() for g in grads)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_gradient_penalty_of_an_mlp_matches_torch(backend: str) -> None:
    rng = np.random.default_rng(0)
    shapes = [(4, 3), (4,), (3, 4), (3,)]
    weights = [rng.normal(size=s) * 0.7 for s in shapes]
    x0 = rng.normal(size=(5, 3))
    target = [0, 2, 1, 1, 0]
    ours = [mt_t(w, backend) for w in weights]
    theirs = [th_t(w) for w in weights]
    mx, tx = mt_t(x0, backend), th_t(x0)
    loss, grads, penalty = mlp_penalty(mt, ours, mx, mt.tensor(target, backend=backend))
    tloss, tgrads, tpenalty = mlp_penalty(torch, theirs, tx, torch.tensor(target))
    close(loss, tloss)
    for g, tg in zip(grads, tgrads):
        close(g, tg)
    close(penalty, tpenalty)
    penalty.backward()
    tpenalty.backward()
    for p, tp in zip([*ours, mx], [*theirs, tx]):
        close(p.grad, tp.grad)


def test_grad_of_grad_of_grad() -> None:
    for lib, x in ((mt, mt_t([0.5, -1.5, 2.0], "simple")), (torch, th_t([0.5, -1.5, 2.0]))):
        (g,) = lib.autograd.grad((x**4).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        (k,) = lib.autograd.grad(h.sum(), x)
        close(k, 24.0 * np.array([0.5, -1.5, 2.0]))
        assert h.requires_grad


def test_backward_create_graph_gives_grad_with_history() -> None:
    x, tx = mt_t(X0, "fast"), th_t(X0)
    for t in (x, tx):
        (t.exp() * t).sum().backward(create_graph=True)
        assert t.grad.requires_grad
        first = t.grad
        t.grad = None
        (first * first).sum().backward()  # the graph was retained: a second pass works
    close(x.grad, tx.grad)


def test_gather_index_and_scatter_are_twice_differentiable() -> None:
    index = [[0, 2, 2], [1, 1, 0]]
    results = []
    for lib, x, idx in ((mt, mt_t(X0, "fast"), mt.tensor(index, backend="fast")), (torch, th_t(X0), torch.tensor(index))):
        y = x.gather(1, idx) ** 2 + x[:, [2, 0]].sum(1, keepdim=True) ** 3
        z = lib.zeros(2, 3, dtype=x.dtype).scatter_add(1, idx, x * x)
        (g,) = lib.autograd.grad(y.sum() + (z**2).sum() + lib.cat([x, x * x], 0).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        results.append((g, h))
    for a, b in zip(*results):
        close(a, b)


def test_not_double_differentiable_op_raises() -> None:
    x = mt_t([0.5, 1.5, 2.0], "fast")
    with pytest.raises(HigherOrderGradError, match="Cumprod"):
        ag.grad(x.cumprod(0).sum(), x, create_graph=True)
    (g,) = ag.grad(x.cumprod(0).sum(), x)  # first order still works
    close(g, [1 + 1.5 + 3.0, 0.5 + 1.0, 0.75])


# --- hooks, retain_grad, grad_fn ---


def test_hooks_replace_order_and_remove() -> None:
    calls: dict[str, list[Any]] = {"mt": [], "torch": []}
    results = []
    for key, x in (("mt", mt_t([1.0, 2.0], "fast")), ("torch", th_t([1.0, 2.0]))):
        log = calls[key]
        h = x * 3.0
        h.register_hook(lambda g, log=log: log.append(("first", g.tolist())))
        h.register_hook(lambda g, log=log: (log.append(("second", g.tolist())), g * 10.0)[1])
        handle = h.register_hook(lambda g, log=log: log.append(("removed", g.tolist())))
        handle.remove()
        h.register_hook(lambda g, log=log: log.append(("third", g.tolist())))
        x.register_hook(lambda g: g + 1.0)  # a leaf hook changes what is accumulated
        (h * h).sum().backward()
        results.append(x.grad)
    assert calls["mt"] == calls["torch"]
    close(results[0], results[1])


def test_retain_grad_keeps_non_leaf_grads() -> None:
    grads = []
    for x in (mt_t(X0, "simple"), th_t(X0)):
        h = x.tanh()
        h.retain_grad()
        assert h.retains_grad
        y = h * 2.0
        (y * y).sum().backward(retain_graph=True)
        (y * y).sum().backward()  # accumulates, like a leaf's
        grads.append(h.grad)
        assert y.grad is None
    close(grads[0], grads[1])
    with pytest.raises(GradientError):
        mt_t(X0, "simple", False).retain_grad()


def test_grad_fn_names_and_next_functions() -> None:
    x = mt_t([1.0, 2.0], "fast")
    assert x.grad_fn is None
    y = x * 2.0
    assert y.grad_fn.name().startswith("MulBackward") and "<MulBackward0" in repr(y.grad_fn)
    z = y.exp() + x
    names = [n.name() if n is not None else None for n, _ in z.grad_fn.next_functions]
    assert names[0].startswith("ExpBackward") and names[1] == "torch::autograd::AccumulateGrad"
    assert z.grad_fn.next_functions[1][0].variable is x
    assert y.grad_fn.next_functions[1] == (None, 0)
    assert z.grad_fn is z.grad_fn


def test_requires_grad_setter_as_torch() -> None:
    x = mt_t([1.0, 2.0], "fast", False)
    x.requires_grad = True
    y = x * 2.0
    y.requires_grad = True  # allowed, as in torch
    with pytest.raises(GradientError, match="leaf"):
        y.requires_grad = False
    with pytest.raises(GradientError, match="float"):
        mt.tensor([1, 2]).requires_grad = True


# --- clone, detach_, .data ---


def test_clone_is_a_differentiable_copy() -> None:
    for lib, x in ((mt, mt_t(X0, "fast")), (torch, th_t(X0))):
        c = x.t().clone()
        assert c.requires_grad and (lib is torch or c.is_contiguous())  # torch keeps the strides; minitensor packs
        (c * c).sum().backward()
        close(x.grad, 2 * X0)
    a = mt.tensor([1.0, 2.0])
    b = a.clone()
    b.add_(1.0)
    close(a, [1.0, 2.0])


def test_detach_in_place() -> None:
    x = mt_t([1.0, 2.0], "fast")
    y = x * 2.0
    assert y.detach_() is y and y.is_leaf and not y.requires_grad and y.grad_fn is None
    close(y, [2.0, 4.0])
    v = (x * 1.0)[0:1]
    with pytest.raises(GradientError, match="view"):
        v.detach_()


def test_data_get_and_set() -> None:
    for lib, x in ((mt, mt_t([1.0, 2.0], "fast")), (torch, th_t([1.0, 2.0]))):
        d = x.data
        assert not d.requires_grad and d.is_leaf
        d.mul_(3.0)  # shares storage: x sees it; invisible to autograd
        close(x, [3.0, 6.0])
        y = x * x
        x.data.zero_()  # .data writes do not bump the version: backward uses the new values, as in torch
        y.sum().backward()
        close(x.grad, [0.0, 0.0])
        ident = id(x)
        x.data = lib.zeros(3, dtype=lib.float64)
        assert id(x) == ident and tuple(x.shape) == (3,) and x.requires_grad


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("nd", "stride", "dilation", "padding", "mode"), [
    (1, 2, 1, 1, "zeros"), (2, 1, 2, (1, 0), "zeros"), (2, 2, 1, 1, "reflect"), (3, 1, 1, 1, "zeros")])
def test_gradient_penalty_through_a_convolution_matches_torch(backend: str, nd: int, stride: int, dilation: int,
                                                              padding: Any, mode: str) -> None:
    """A WGAN-GP style penalty: d/dw and d/dx of |d out / d x|^2 through a conv (im2col and col2im are each other's
    backward, padding's backward a differentiable slice), against torch."""
    rng = np.random.default_rng(nd)
    xs, ws = rng.standard_normal((2, 2, *[5] * nd)), rng.standard_normal((3, 2, *[2] * nd))
    grads = []
    for lib in (mt, torch):
        kw: dict[str, Any] = {"device": backend, "dtype": mt.float64} if lib is mt else {"dtype": torch.float64}
        layer = (mt.nn if lib is mt else torch.nn).__dict__[f"Conv{nd}d"](2, 3, 2, stride=stride, padding=padding,
                                                                           dilation=dilation, padding_mode=mode, **kw)
        with (mt if lib is mt else torch).no_grad():
            layer.weight.copy_(lib.tensor(ws, **kw))
            layer.bias.zero_()
        x = lib.tensor(xs, requires_grad=True, **kw)
        (gx,) = lib.autograd.grad(layer(x).tanh().sum(), x, create_graph=True)
        gx.pow(2).sum().backward()
        grads.append([t.detach().numpy() for t in (gx, x.grad, layer.weight.grad)])
    for mine, theirs in zip(*grads):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)
