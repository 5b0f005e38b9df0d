"""Losses against PyTorch: forward values, input and target gradients, the edges (-inf and huge logits, p = 0/1),
the loss Modules, and the errors. The bulk runs on the CPU backends; a few cases run on cuda (simulator)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.errors import DTypeError, IndexOutOfRangeError, ShapeError
from minitensor.nn import functional as F

# torch warns about its deprecated size_average/reduce flags and kl_div's "mean"; both are exercised on purpose
pytestmark = pytest.mark.filterwarnings("ignore:.*(size_average and reduce|reduction. 'mean' divides).*:UserWarning")
RNG = np.random.default_rng(5)
CUDA = [b for b in BACKENDS if b == "cuda"]
TENSOR_KW = ("weight", "pos_weight")


def run(name, backend, x, target, *, grad_target=False, dtype="float64", rtol=1e-10, atol=1e-12, **kw):
    """Call F.<name> and torch's on the same data; compare value, d/dinput and (optionally) d/dtarget."""
    upstream = None
    tx = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    is_float = np.asarray(target).dtype.kind == "f"
    tt = torch.tensor(target, dtype=getattr(torch, dtype) if is_float else torch.int64, requires_grad=grad_target)
    tkw = {k: torch.tensor(v, dtype=getattr(torch, dtype)) if k in TENSOR_KW and v is not None else v for k, v in kw.items()}
    expected = getattr(TF, name)(tx, tt, **tkw)
    upstream = RNG.standard_normal(expected.shape)
    (expected * torch.tensor(upstream, dtype=expected.dtype)).sum().backward()

    mx = mt.tensor(x, backend=backend, dtype=dtype, requires_grad=True)
    mtarget = mt.tensor(target, backend=backend, dtype=dtype if is_float else "int64", requires_grad=grad_target)
    mkw = {k: mt.tensor(v, backend=backend, dtype=dtype) if k in TENSOR_KW and v is not None else v for k, v in kw.items()}
    got = getattr(F, name)(mx, mtarget, **mkw)
    assert got.shape == tuple(expected.shape)
    (got * mt.tensor(upstream, backend=backend, dtype=dtype)).sum().backward()
    np.testing.assert_allclose(got.to_numpy(), expected.detach().numpy(), rtol=rtol, atol=atol)
    np.testing.assert_allclose(mx.grad.to_numpy(), tx.grad.numpy(), rtol=rtol, atol=atol)
    if grad_target:
        np.testing.assert_allclose(mtarget.grad.to_numpy(), tt.grad.numpy(), rtol=rtol, atol=atol)
    return got, mx.grad


def softmax_rows(a, axis=1):
    e = np.exp(a - a.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


W3 = np.array([0.3, 1.7, 0.9])
X43 = RNG.standard_normal((4, 3)) * 2
T4 = np.array([0, 2, 1, 2])
T4_IGNORED = np.array([0, -100, 1, 2])
X2322 = RNG.standard_normal((2, 3, 2, 2))
T222 = np.array([[[0, 2], [1, -100]], [[2, 2], [-100, 1]]])

CLASS_CASES = [
    (X43, T4, {}),
    (X43, T4, {"reduction": "sum"}),
    (X43, T4, {"reduction": "none"}),
    (X43, T4, {"weight": W3}),
    (X43, T4, {"weight": W3, "reduction": "none"}),
    (X43, T4_IGNORED, {"weight": W3}),
    (X43, T4, {"ignore_index": 2}),  # an in-range class ignored
    (X43, T4_IGNORED, {"label_smoothing": 0.2}),
    (X43, T4_IGNORED, {"weight": W3, "label_smoothing": 0.3}),
    (X43, T4_IGNORED, {"weight": W3, "label_smoothing": 0.3, "reduction": "sum"}),
    (X43, T4_IGNORED, {"weight": W3, "label_smoothing": 0.3, "reduction": "none"}),
    (X2322, T222, {}),
    (X2322, T222, {"weight": W3, "label_smoothing": 0.1}),
    (X2322, T222, {"weight": W3, "reduction": "none"}),
    (X43[0], np.array(1), {}),  # unbatched
    (X43[0], np.array(1), {"weight": W3, "label_smoothing": 0.2, "reduction": "none"}),
    (X43, T4, {"size_average": False}),  # legacy flags -> "sum"
    (X43, T4, {"reduce": False}),  # -> "none"
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("x", "target", "kw"), CLASS_CASES)
def test_cross_entropy_class_targets(backend, x, target, kw):
    run("cross_entropy", backend, x, target, **kw)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("x", "target", "kw"), [c for c in CLASS_CASES if "label_smoothing" not in c[2]])
def test_nll_loss(backend, x, target, kw):
    logp = x - np.log(np.exp(x).sum(0 if x.ndim == 1 else 1, keepdims=True))
    run("nll_loss", backend, logp, target, **kw)


P43 = softmax_rows(RNG.standard_normal((4, 3)))
P232 = softmax_rows(RNG.standard_normal((2, 3, 2)))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("x", "p", "kw"), [
    (X43, P43, {}),
    (X43, P43, {"reduction": "sum"}),
    (X43, P43, {"reduction": "none", "weight": W3}),
    (X43, P43, {"label_smoothing": 0.25, "weight": W3}),
    (X2322[:, :, 0], P232, {"weight": W3, "label_smoothing": 0.1}),
    (X43[1], P43[1], {"label_smoothing": 0.1}),
])
def test_cross_entropy_probability_targets(backend, x, p, kw):
    run("cross_entropy", backend, x, p, grad_target=True, **kw)


def test_cross_entropy_weight_gradient():
    """torch's nll_loss has no weight gradient; ours matches torch autograd through the same formula."""
    x, t, ii, eps = X43, T4_IGNORED, -100, 0.3
    tw = torch.tensor(W3, requires_grad=True)
    logp = torch.log_softmax(torch.tensor(x), 1)
    valid = torch.tensor(t != ii)
    safe = torch.tensor(np.where(t != ii, t, 0))
    wt = tw[safe] * valid
    nll = -(logp.gather(1, safe[:, None])[:, 0] * wt).sum() / wt.sum()
    smooth = -((logp * tw).sum(1) * valid).sum() / wt.sum()
    ((1 - eps) * nll + eps / 3 * smooth).backward()
    mw = mt.tensor(W3, dtype="float64", requires_grad=True)
    F.cross_entropy(mt.tensor(x, dtype="float64"), t, weight=mw, label_smoothing=eps).backward()
    np.testing.assert_allclose(mw.grad.to_numpy(), tw.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("backend", CPU_BACKENDS + CUDA)
def test_cross_entropy_minus_inf_logits(backend):
    """-inf non-target logits: finite loss and gradient (no 0 * -inf); label smoothing gives inf loss, finite grad."""
    x = np.array([[0.0, 1.0, -np.inf], [-np.inf, 2.0, 0.5], [-np.inf, 0.0, 1.0]])
    t = np.array([0, 1, -100])  # the ignored row has -inf at class 0, where the masked index points
    got, grad = run("cross_entropy", backend, x, t, weight=W3)
    assert np.isfinite(got.item()) and np.isfinite(grad.to_numpy()).all()
    if backend != "cuda":
        got, grad = run("cross_entropy", backend, x, t, label_smoothing=0.1)
        assert got.item() == np.inf and np.isfinite(grad.to_numpy()).all()


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_cross_entropy_huge_logits(backend):
    x = np.array([[1e4, -1e4, 0.0], [500.0, 501.0, -2000.0], [1e4, 1e4 + 1.0, 3.0]])
    t = np.array([0, 0, 1])
    run("cross_entropy", backend, x, t)
    run("cross_entropy", backend, x, t, weight=W3, label_smoothing=0.1)
    run("cross_entropy", backend, x, t, dtype="float32", rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_float32_and_numpy_targets(backend):
    run("cross_entropy", backend, X2322, T222, weight=W3, label_smoothing=0.1, dtype="float32", rtol=1e-5, atol=1e-6)
    run("binary_cross_entropy_with_logits", backend, X43, P43, dtype="float32", rtol=1e-5, atol=1e-6)
    logits = mt.tensor(X43, backend=backend)  # callers pass NumPy / list targets
    expected = TF.cross_entropy(torch.tensor(X43), torch.tensor(T4)).item()
    for form in (T4, T4.tolist(), T4.astype(np.int32), T4.astype(float), mt.tensor(T4, backend=backend, dtype="int32")):
        assert F.cross_entropy(logits, form).item() == pytest.approx(expected, rel=1e-12)
    assert F.binary_cross_entropy_with_logits(logits, P43).item() == pytest.approx(
        TF.binary_cross_entropy_with_logits(torch.tensor(X43), torch.tensor(P43)).item(), rel=1e-12)


def test_all_targets_ignored_is_nan_like_torch():
    x, t = mt.tensor(X43[:2], dtype="float64"), np.array([-100, -100])
    assert np.isnan(F.cross_entropy(x, t).item())
    assert np.isnan(TF.cross_entropy(torch.tensor(X43[:2]), torch.tensor(t)).item())
    assert F.cross_entropy(x, t, reduction="sum").item() == 0.0


# --- regression ---

A34, B34, W34 = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4)) * 1.5, RNG.random((3, 4))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(("name", "kw"), [
    ("mse_loss", {}), ("mse_loss", {"weight": W34}),
    ("l1_loss", {}), ("l1_loss", {"weight": W34}),
    ("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}), ("smooth_l1_loss", {"beta": 0.0}),
    ("huber_loss", {}), ("huber_loss", {"delta": 0.5}), ("huber_loss", {"delta": 2.0, "weight": W34}),
])
def test_regression_losses(backend, reduction, name, kw):
    run(name, backend, A34, B34, grad_target=True, reduction=reduction, **kw)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_regression_weight_gradient(name):
    tw = torch.tensor(W34, requires_grad=True)
    getattr(TF, name)(torch.tensor(A34), torch.tensor(B34), weight=tw).backward()
    mw = mt.tensor(W34, dtype="float64", requires_grad=True)
    getattr(F, name)(mt.tensor(A34, dtype="float64"), B34, weight=mw).backward()
    np.testing.assert_allclose(mw.grad.to_numpy(), tw.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_regression_kinks(backend):
    """Gradients at d = 0 and |d| = beta/delta follow torch (sign(0) = 0)."""
    x, y = np.array([0.0, 1.0, -0.5, 2.0]), np.array([0.0, 0.0, 0.0, 1.0])
    for name, kw in [("l1_loss", {}), ("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
                     ("smooth_l1_loss", {"beta": 0.0}), ("huber_loss", {"delta": 0.5})]:
        run(name, backend, x, y, reduction="sum", **kw)


# --- binary and divergence ---

P34 = RNG.uniform(0.05, 0.95, (3, 4))
Y34 = RNG.random((3, 4))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("kw", [{}, {"reduction": "sum"}, {"reduction": "none", "weight": W34}, {"weight": W34[0]}])
def test_binary_cross_entropy(backend, kw):
    run("binary_cross_entropy", backend, P34, Y34, grad_target=True, **kw)


@pytest.mark.parametrize("backend", CPU_BACKENDS + CUDA)
def test_binary_cross_entropy_at_zero_and_one(backend):
    """log clamped at -100; d/dp = (p - y) / max(p (1 - p), 1e-12): about +-1e12 or 0 at the edges, never NaN."""
    p, y = np.array([0.0, 1.0, 0.0, 1.0, 0.5]), np.array([1.0, 0.0, 0.0, 1.0, 0.3])
    got, grad = run("binary_cross_entropy", backend, p, y, reduction="sum")
    assert got.item() == pytest.approx(200.0 + np.log(2), rel=1e-12)
    assert np.isfinite(grad.to_numpy()).all() and grad.to_numpy()[2:4].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("kw", [
    {}, {"reduction": "none"}, {"reduction": "sum", "weight": W34},
    {"pos_weight": np.array([0.5, 2.0, 1.0, 3.0])}, {"pos_weight": np.array([0.5, 2.0, 1.0, 3.0]), "weight": W34[0]},
])
def test_binary_cross_entropy_with_logits(backend, kw):
    run("binary_cross_entropy_with_logits", backend, A34 * 3, Y34, grad_target=True, **kw)


@pytest.mark.parametrize("backend", CPU_BACKENDS + CUDA)
def test_binary_cross_entropy_with_logits_large_and_zero(backend):
    x, y = np.array([1000.0, -1000.0, 0.0, 40.0, -40.0]), np.array([0.0, 1.0, 1.0, 1.0, 0.0])
    got, _ = run("binary_cross_entropy_with_logits", backend, x, y, reduction="sum",
                 pos_weight=np.array([2.0, 2.0, 2.0, 2.0, 2.0]))
    assert got.item() == pytest.approx(1000.0 + 2000.0 + 2 * np.log(2), rel=1e-12)


def test_binary_cross_entropy_with_logits_weight_gradients():
    pw = np.array([0.5, 2.0, 1.0, 3.0])
    tw, tpw = torch.tensor(W34, requires_grad=True), torch.tensor(pw, requires_grad=True)
    x, y = torch.tensor(A34), torch.tensor(Y34)
    ((1 - y) * x + (1 + (tpw - 1) * y) * TF.softplus(-x)).mul(tw).mean().backward()
    mw, mpw = mt.tensor(W34, dtype="float64", requires_grad=True), mt.tensor(pw, dtype="float64", requires_grad=True)
    F.binary_cross_entropy_with_logits(mt.tensor(A34, dtype="float64"), Y34, weight=mw, pos_weight=mpw).backward()
    np.testing.assert_allclose(mw.grad.to_numpy(), tw.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(mpw.grad.to_numpy(), tpw.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("reduction", ["mean", "batchmean", "sum", "none"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(backend, reduction, log_target):
    logq = np.log(softmax_rows(A34))
    p = softmax_rows(B34)
    run("kl_div", backend, logq, np.log(p) if log_target else p, grad_target=True, reduction=reduction, log_target=log_target)


def test_kl_div_zero_target_and_0d():
    logq, p = np.log(softmax_rows(A34)), softmax_rows(B34)
    p[0, 1] = 0.0
    run("kl_div", "simple", logq, p, reduction="batchmean")  # 0 log 0 = 0, finite input gradient
    run("kl_div", "simple", np.array(-0.3), np.array(0.4), reduction="batchmean")  # 0-d: no division


# --- one_hot ---


def test_one_hot():
    t = np.array([[0, 3], [2, 1]])
    for k in (-1, 5):
        got = F.one_hot(mt.tensor(t), k)
        assert got.dtype == mt.int64
        assert got.to_numpy().tolist() == TF.one_hot(torch.tensor(t), k).tolist()
    assert F.one_hot(mt.tensor(1), 3).to_numpy().tolist() == [0, 1, 0]
    with pytest.raises(IndexOutOfRangeError, match=r"\[0, 3\]"):
        F.one_hot(mt.tensor(t), 3)
    with pytest.raises(IndexOutOfRangeError):
        F.one_hot(mt.tensor([-1, 0]))
    with pytest.raises(DTypeError, match="integer"):
        F.one_hot(mt.tensor([0.0, 1.0]), 3)
    with pytest.raises(ValueError, match="empty"):
        F.one_hot(mt.tensor(np.zeros(0, dtype=np.int64)))
    assert F.one_hot(mt.tensor(np.zeros(0, dtype=np.int64)), 3).shape == (0, 3)


# --- Modules ---

MODULE_CASES = [
    ("CrossEntropyLoss", {"weight": W3, "ignore_index": 1, "label_smoothing": 0.1}, X43, T4),
    ("CrossEntropyLoss", {"reduction": "none"}, X43, P43),
    ("NLLLoss", {"weight": W3, "reduction": "sum"}, X43, T4_IGNORED),
    ("MSELoss", {}, A34, B34), ("L1Loss", {"reduction": "sum"}, A34, B34),
    ("SmoothL1Loss", {"beta": 0.5}, A34, B34), ("HuberLoss", {"delta": 0.7, "reduction": "none"}, A34, B34),
    ("BCELoss", {"weight": W34}, P34, Y34),
    ("BCEWithLogitsLoss", {"weight": W34[0], "pos_weight": np.array([0.5, 2.0, 1.0, 3.0])}, A34, Y34),
    ("KLDivLoss", {"reduction": "batchmean", "log_target": True}, A34, B34),
    ("MSELoss", {"size_average": False}, A34, B34),
]


@pytest.mark.parametrize(("cls", "kw", "x", "target"), MODULE_CASES)
def test_loss_modules(cls, kw, x, target):
    tkw = {k: torch.tensor(v) if k in TENSOR_KW else v for k, v in kw.items()}
    mkw = {k: mt.tensor(v, dtype="float64") if k in TENSOR_KW else v for k, v in kw.items()}
    tt = torch.tensor(target)
    expected = getattr(torch.nn, cls)(**tkw)(torch.tensor(x), tt)
    module = getattr(nn, cls)(**mkw)
    got = module(mt.tensor(x, dtype="float64"), mt.tensor(target))
    np.testing.assert_allclose(got.to_numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)
    assert isinstance(module, mt.Module)
    for name in TENSOR_KW:
        if name in kw:
            assert dict(module.named_buffers())[name] is mkw[name]
            assert name in module.state_dict()


def test_loss_module_repr_and_buffers():
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    assert repr(nn.MSELoss()) == "MSELoss()"
    assert repr(nn.CrossEntropyLoss(weight=mt.ones(3), label_smoothing=0.1)) == (
        "CrossEntropyLoss(weight=Tensor(3,), label_smoothing=0.1)")
    assert repr(nn.KLDivLoss(reduction="batchmean")) == "KLDivLoss(reduction='batchmean')"
    assert repr(nn.BCEWithLogitsLoss(pos_weight=mt.ones(2))) == "BCEWithLogitsLoss(pos_weight=Tensor(2,))"
    assert nn.NLLLoss(size_average=False, reduce=False).reduction == "none"
    assert nn.CrossEntropyLoss().weight is None and list(nn.CrossEntropyLoss().named_buffers()) == []
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss(reduction="avg")
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss(reduction="batchmean")


# --- errors ---


def test_class_target_errors():
    t = mt.zeros(3, 4, dtype="float64")
    with pytest.raises(IndexOutOfRangeError, match=r"target\[1\]=4.*target\[2\]=-1"):
        F.cross_entropy(t, [0, 4, -1])
    with pytest.raises(IndexOutOfRangeError, match=r"target\[0, 1\]=7"):
        F.nll_loss(mt.zeros(2, 4, 2), [[0, 7], [1, 2]])
    F.cross_entropy(t, [0, -100, 3])  # ignore_index may be out of range
    with pytest.raises(IndexOutOfRangeError, match="ignore_index=3"):
        F.cross_entropy(t, [0, -100, 3], ignore_index=3)  # -100 is now a class index, and out of range
    with pytest.raises(ShapeError, match=r"\(3,\).*got \(2,\)"):
        F.cross_entropy(t, [0, 1])
    with pytest.raises(ShapeError):
        F.nll_loss(t, [[0, 1, 2]])
    with pytest.raises(DTypeError, match="non-integral"):
        F.cross_entropy(t, np.array([0.0, 1.5, 2.0]))
    with pytest.raises(DTypeError, match="integer"):
        F.cross_entropy(t, mt.tensor([0.0, 1.0, 2.0]))  # float tensor of class shape
    with pytest.raises(DTypeError, match="floating-point"):
        F.cross_entropy(t, np.zeros((3, 4), dtype=np.int64))  # input's shape means probabilities
    with pytest.raises(DTypeError, match="integer"):
        F.cross_entropy(t, np.array([True, False, True]))
    with pytest.raises(DTypeError, match="floating-point"):
        F.cross_entropy(mt.zeros(3, 4, dtype="int64"), [0, 1, 2])
    with pytest.raises(ShapeError, match="0-d"):
        F.cross_entropy(mt.tensor(1.0), [0])
    with pytest.raises(ShapeError, match=r"weight must have shape \(4,\)"):
        F.cross_entropy(t, [0, 1, 2], weight=mt.ones(3))
    with pytest.raises(ValueError, match="label_smoothing"):
        F.cross_entropy(t, [0, 1, 2], label_smoothing=1.5)


def test_other_errors():
    t = mt.zeros(3, 4, dtype="float64")
    with pytest.raises(ShapeError, match=r"\(3, 4\).*\(4, 3\)"):
        F.mse_loss(t, np.zeros((4, 3)))
    with pytest.raises(ShapeError, match="differ"):
        F.binary_cross_entropy(t, np.zeros(4))
    for name in ("mse_loss", "l1_loss", "binary_cross_entropy", "kl_div"):
        with pytest.raises(ValueError, match="reduction.*'avg'"):
            getattr(F, name)(t, np.zeros((3, 4)), reduction="avg")
    with pytest.raises(ValueError, match="reduction"):
        F.mse_loss(t, np.zeros((3, 4)), reduction="batchmean")
    with pytest.raises(ValueError, match=r"\[0, 1\].*1.5"):
        F.binary_cross_entropy(mt.tensor([0.2, 1.5]), [0.0, 1.0])
    with pytest.raises(ShapeError, match="weight"):
        F.mse_loss(t, np.zeros((3, 4)), weight=mt.ones(4))
    with pytest.raises(ShapeError, match="pos_weight"):
        F.binary_cross_entropy_with_logits(t, np.zeros((3, 4)), pos_weight=mt.ones(3))
    with pytest.raises(ValueError, match="beta"):
        F.smooth_l1_loss(t, np.zeros((3, 4)), beta=-1.0)
    with pytest.raises(ValueError, match="delta"):
        F.huber_loss(t, np.zeros((3, 4)), delta=0.0)
