"""The eager fast paths against PyTorch: the one-node class-index NLL under cross_entropy/nll_loss (and the composed
cases it leaves alone: label smoothing, probability targets, a weight that requires grad), and Linear's one-node
Addmm; forward values and gradients, first and second order, on every backend (cuda simulated, tiny shapes)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn
from minitensor.errors import GradientError

torch = pytest.importorskip("torch")
F = nn.functional
TF = torch.nn.functional

# (input shape, target shape): batched, unbatched, and class dim 1 of an N-D input
SHAPES = [((5, 4), (5,)), ((4,), ()), ((3, 4, 2), (3, 2))]


def _targets(rng: np.random.Generator, shape: tuple[int, ...], ignore_index: int) -> np.ndarray:
    t = rng.integers(0, 4, shape)
    if t.ndim:
        t.reshape(-1)[0] = ignore_index  # at least one ignored entry
    return t


def _pair(x: np.ndarray, backend: str) -> tuple[mt.Tensor, torch.Tensor]:
    return mt.tensor(x, backend=backend, requires_grad=True), torch.tensor(x, requires_grad=True)


def _close(ours: mt.Tensor, theirs: torch.Tensor) -> None:
    np.testing.assert_allclose(ours.to_numpy(), theirs.detach().numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_class_index_losses_match_torch(backend: str, loss: str) -> None:
    rng = np.random.default_rng(0)
    cuda = backend == "cuda"  # the simulator is slow: the same kernels run on fewer cases
    for (shape, tshape), reduction, weighted, ignore_index in itertools.product(
        SHAPES[:1] if cuda else SHAPES, ("mean", "none") if cuda else ("mean", "sum", "none"), (False, True),
        (-100,) if cuda else (-100, 1),
    ):
        x = rng.standard_normal(shape)
        t = _targets(rng, tshape, ignore_index)
        w = rng.random(4) + 0.5 if weighted else None
        ours, theirs = _pair(x, backend)
        kw = dict(reduction=reduction, ignore_index=ignore_index)
        got = getattr(F, loss)(ours, mt.tensor(t, backend=backend), weight=None if w is None else mt.tensor(w, backend=backend), **kw)
        want = getattr(TF, loss)(theirs, torch.tensor(t), weight=None if w is None else torch.tensor(w), **kw)
        if len(shape) > 1:
            assert got.grad_fn.name() == "NllLossBackward0"  # the one-node path
        _close(got, want)
        upstream = rng.standard_normal(want.shape)
        got.backward(mt.tensor(upstream, backend=backend))
        want.backward(torch.tensor(upstream))
        _close(ours.grad, theirs.grad)


def test_cross_entropy_extremes_and_all_ignored(backend: str) -> None:
    """-inf logits (also at an ignored row's class 0) stay finite where PyTorch's do; all ignored gives NaN as mean."""
    x = np.array([[-np.inf, 1.0, 2.0], [0.5, -np.inf, 1e4], [3.0, 2.0, 1.0]])
    t = np.array([-100, 2, 0])
    ours, theirs = _pair(x, backend)
    got, want = F.cross_entropy(ours, mt.tensor(t, backend=backend)), TF.cross_entropy(theirs, torch.tensor(t))
    _close(got, want)
    got.backward()
    want.backward()
    _close(ours.grad, theirs.grad)
    none = F.cross_entropy(mt.tensor(x, backend=backend), mt.tensor([-100, -100, -100], backend=backend))
    assert np.isnan(none.item())


@pytest.mark.parametrize("case", ["label_smoothing", "probabilities", "probabilities_smoothed"])
def test_composed_cases_match_torch(backend: str, case: str) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4, 2))
    smoothing = 0.0 if case == "probabilities" else 0.2
    if case == "label_smoothing":
        t_np: np.ndarray = _targets(rng, (3, 2), -100)
    else:
        t_np = rng.random((3, 4, 2))
        t_np /= t_np.sum(1, keepdims=True)
    w = rng.random(4) + 0.5
    for reduction in ("mean", "sum", "none") if backend != "cuda" else ("mean",):
        ours, theirs = _pair(x, backend)
        kw = dict(reduction=reduction, label_smoothing=smoothing)
        got = F.cross_entropy(ours, mt.tensor(t_np, backend=backend), weight=mt.tensor(w, backend=backend), **kw)
        want = TF.cross_entropy(theirs, torch.tensor(t_np), weight=torch.tensor(w), **kw)
        _close(got, want)
        got.sum().backward()
        want.sum().backward()
        _close(ours.grad, theirs.grad)


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_cross_entropy_second_derivatives_match_torch(backend: str, reduction: str) -> None:
    """create_graph through the one-node loss: the gradient's own gradient (a Hessian-vector product)."""
    rng = np.random.default_rng(2)
    x, t, w = rng.standard_normal((4, 3)), np.array([0, 2, -100, 1]), rng.random(3) + 0.5
    v = rng.standard_normal((4, 3))
    ours, theirs = _pair(x, backend)
    got = F.cross_entropy(ours, mt.tensor(t, backend=backend), weight=mt.tensor(w, backend=backend), reduction=reduction)
    want = TF.cross_entropy(theirs, torch.tensor(t), weight=torch.tensor(w), reduction=reduction)
    (g_ours,) = mt.autograd.grad(got.sum(), ours, create_graph=True)
    (g_theirs,) = torch.autograd.grad(want.sum(), theirs, create_graph=True)
    _close(g_ours, g_theirs)
    (g_ours * mt.tensor(v, backend=backend)).sum().backward()
    (g_theirs * torch.tensor(v)).sum().backward()
    _close(ours.grad, theirs.grad)


def test_weight_that_requires_grad_takes_the_composed_path() -> None:
    x = mt.tensor(np.random.default_rng(3).standard_normal((3, 4)), requires_grad=True)
    w = mt.tensor([1.0, 2.0, 0.5, 1.5], dtype=mt.float64, requires_grad=True)
    loss = F.cross_entropy(x, mt.tensor([0, 3, 1]), weight=w)
    assert loss.grad_fn.name() != "NllLossBackward0"
    loss.backward()
    assert w.grad is not None and x.grad is not None


@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(backend: str, bias: bool) -> None:
    rng = np.random.default_rng(4)
    x, w, b = rng.standard_normal((5, 3)), rng.standard_normal((2, 3)), rng.standard_normal(2)
    tensors = [_pair(a, backend) for a in ((x, w, b) if bias else (x, w))]
    ours, theirs = [p[0] for p in tensors], [p[1] for p in tensors]
    got, want = F.linear(*ours), TF.linear(*theirs)
    assert got.grad_fn.name() == "AddmmBackward0"
    _close(got, want)
    upstream = rng.standard_normal((5, 2))
    got.backward(mt.tensor(upstream, backend=backend))
    want.backward(torch.tensor(upstream))
    for a, b_ in zip(ours, theirs):
        _close(a.grad, b_.grad)
    # second order: d/dx of sum((dL/dW)^2) where L = sum(tanh(linear(x)))
    ours2, theirs2 = [_pair(a, backend) for a in ((x, w, b) if bias else (x, w))], None
    theirs2 = [p[1] for p in ours2]
    ours2 = [p[0] for p in ours2]
    (gw,) = mt.autograd.grad(F.linear(*ours2).tanh().sum(), ours2[1], create_graph=True)
    (gw_t,) = torch.autograd.grad(TF.linear(*theirs2).tanh().sum(), theirs2[1], create_graph=True)
    _close(gw, gw_t)
    (gw * gw).sum().backward()
    (gw_t * gw_t).sum().backward()
    _close(ours2[0].grad, theirs2[0].grad)


def test_linear_falls_back_and_checks_versions() -> None:
    """A contiguous batched input runs as one Addmm on its (rows, in) view (then a view back, as PyTorch's linear); a
    batched input whose leading dims do not merge, and mixed dtypes, take matmul + add: PyTorch's values and input
    gradients either way. An in-place change of the input after the op makes backward refuse, as through the
    composed ops."""
    rng = np.random.default_rng(5)
    x3 = rng.standard_normal((2, 5, 3)).astype(np.float32)
    w = rng.standard_normal((2, 3)).astype(np.float32)
    weight = mt.tensor(w, requires_grad=True)
    cases = [(lambda t: t, "AddmmBackward0"), (lambda t: t.transpose(0, 1), None)]  # merges / does not merge
    for layout, via in cases:
        ours, theirs = _pair(x3, "fast")
        got, want = F.linear(layout(ours), weight), TF.linear(layout(theirs), torch.tensor(w))
        assert got.grad_fn.name() != "AddmmBackward0"  # a view of the product, or the composed ops' add
        names = {node.name() for node, _ in got.grad_fn.next_functions if node is not None}
        assert ("AddmmBackward0" in names) == (via is not None), names
        np.testing.assert_allclose(got.to_numpy(), want.detach().numpy(), rtol=1e-6)
        got.sum().backward()
        want.sum().backward()
        np.testing.assert_allclose(ours.grad.to_numpy(), theirs.grad.numpy(), rtol=1e-6)
    mixed = F.linear(mt.tensor(x3[0], dtype=mt.float64), weight)  # float64 input, float32 weight
    assert mixed.dtype == mt.float64 and mixed.grad_fn.name() != "AddmmBackward0"
    np.testing.assert_allclose(mixed.to_numpy(), x3[0].astype(np.float64) @ w.T.astype(np.float64), rtol=1e-6)
    x = mt.tensor(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    h = x * 1.0
    out = F.linear(h, weight)
    h.add_(1.0)
    with pytest.raises(GradientError):
        out.sum().backward()


@pytest.mark.parametrize("weighted", [False, True])
def test_mask_free_forward_gives_the_masked_bits(backend: str, weighted: bool) -> None:
    """With no ignored target, eager mode skips the masks; the values and gradients are bit for bit those of the
    masked forward that compiled steps record (compiled == eager exactly)."""
    from minitensor.nn.cross_entropy import nll

    rng = np.random.default_rng(6)
    logp = F.log_softmax(mt.tensor(rng.standard_normal((6, 5)), backend=backend, dtype=mt.float32), 1).detach()
    t = mt.tensor(rng.integers(0, 5, 6), backend=backend)
    w = mt.tensor(rng.random(5) + 0.5, backend=backend, dtype=mt.float32) if weighted else None
    for reduction in ("mean", "sum", "none"):
        results = []
        for plain in (False, True):
            x = logp.clone().requires_grad_()
            loss = nll(x, t, w, -100, reduction, plain)
            loss.backward(mt.ones_like(loss) * 0.7)
            results.append((loss.to_numpy(), x.grad.to_numpy()))
        np.testing.assert_array_equal(results[0][0], results[1][0])
        np.testing.assert_array_equal(results[0][1], results[1][1])


def test_changing_the_targets_before_backward_raises() -> None:
    x = mt.tensor(np.random.default_rng(7).standard_normal((3, 4)), requires_grad=True)
    t = mt.tensor([0, 3, 1])
    loss = F.cross_entropy(x, t)
    t.add_(1)  # PyTorch: "one of the variables needed for gradient computation has been modified by an inplace operation"
    with pytest.raises(GradientError):
        loss.backward()


def test_compiled_step_with_ignored_targets_after_tracing() -> None:
    """The trace sees no ignored target; a later call with some must still mask them (as eager does)."""
    rng = np.random.default_rng(8)
    w = mt.tensor(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)

    def step(x: mt.Tensor, t: mt.Tensor) -> mt.Tensor:
        loss = F.cross_entropy(x @ w, t)
        w.grad = None
        loss.backward()
        return loss

    compiled = mt.compile(step)
    for t in ([0, 1, 2, 1, 0], [0, -100, 2, -100, 1], [2, 2, -100, 0, 1]):
        x = mt.tensor(rng.standard_normal((5, 4)).astype(np.float32))
        want, want_grad = step(x, mt.tensor(t)).item(), w.grad.to_numpy()
        assert compiled(x, mt.tensor(t)).item() == want
        np.testing.assert_array_equal(w.grad.to_numpy(), want_grad)
