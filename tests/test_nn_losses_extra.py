"""The margin, embedding, triplet, multi-label, Poisson/Gaussian NLL and CTC losses against PyTorch: values and
gradients for every reduction, float32/float64, broadcasting, zero-size batches, the edges (margins hit exactly, -1
padding, impossible CTC alignments, -inf log-probabilities), the Modules and the errors. The bulk runs on the CPU
backends; one tiny case per family runs on every backend, cuda (simulator) included."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.errors import DTypeError, IndexOutOfRangeError, ShapeError
from minitensor.nn import functional as F

pytestmark = pytest.mark.filterwarnings("ignore:.*size_average and reduce.*:UserWarning")
RNG = np.random.default_rng(11)
REDUCTIONS = ["mean", "sum", "none"]
TOL = {"float64": (1e-10, 1e-12), "float32": (2e-5, 2e-6)}


def _pair(value, backend, dtype, grad):
    """(minitensor, torch) versions of one argument: float arrays become tensors of ``dtype`` (requiring grad when
    ``grad``), integer arrays int64 tensors, anything else is passed as is."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return (mt.tensor(value, backend=backend, dtype=dtype, requires_grad=grad),
                torch.tensor(value, dtype=getattr(torch, dtype), requires_grad=grad))
    if isinstance(value, np.ndarray):
        return mt.tensor(value, backend=backend, dtype="int64"), torch.tensor(value, dtype=torch.int64)
    return value, value


def run(name, backend, *args, grad=None, dtype="float64", tol=None, tensor_kw=(), **kw):
    """F.<name> and torch's on the same data: equal shapes, dtypes and values (NaN where torch has NaN) and equal
    gradients of a random weighting of the output for the float arguments at the positions in ``grad`` (default all;
    an argument torch gives no gradient must get none or zeros). Keywords named in ``tensor_kw`` become tensors."""
    rtol, atol = tol or TOL[dtype]
    grad = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"] if grad is None else grad
    pairs = [_pair(a, backend, dtype, i in grad) for i, a in enumerate(args)]
    kw_pairs = {k: _pair(v, backend, dtype, False) if k in tensor_kw else (v, v) for k, v in kw.items()}
    expected = getattr(TF, name)(*[p[1] for p in pairs], **{k: v[1] for k, v in kw_pairs.items()})
    got = getattr(F, name)(*[p[0] for p in pairs], **{k: v[0] for k, v in kw_pairs.items()})
    assert got.shape == tuple(expected.shape)
    assert got.dtype.name == str(expected.dtype).removeprefix("torch.")
    np.testing.assert_allclose(got.to_numpy(), expected.detach().numpy(), rtol=rtol, atol=atol, equal_nan=True)
    if grad:
        upstream = RNG.standard_normal(expected.shape)
        (expected * torch.tensor(upstream, dtype=expected.dtype)).sum().backward()
        (got * mt.tensor(upstream, backend=backend, dtype=got.dtype.name)).sum().backward()
        for i in grad:
            ours, theirs = pairs[i][0].grad, pairs[i][1].grad
            if theirs is None:
                assert ours is None or not ours.to_numpy().any(), f"argument {i}: torch has no gradient"
                continue
            np.testing.assert_allclose(ours.to_numpy(), theirs.numpy(), rtol=rtol, atol=atol, err_msg=f"argument {i}")
    return got, [p[0] for p in pairs]


def signs(*shape):
    return np.where(RNG.random(shape) < 0.5, -1.0, 1.0)


X5, Y5, S5 = RNG.standard_normal(5), RNG.standard_normal(5), signs(5)
X34, Y34, S34 = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4)), signs(3, 4)
LEGACY = [{"size_average": False}, {"reduce": False}, {"size_average": True, "reduce": True}]


def dtyped(kws, float32=(0, 3)):
    """(dtype, kw) cases: every kw in float64, those at the ``float32`` positions in float32 too."""
    return [("float64", kw) for kw in kws] + [("float32", kws[i]) for i in float32 if i < len(kws)]


# --- margin ranking, hinge embedding, soft margin ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("dtype", "kw"), dtyped([*({"reduction": r} for r in REDUCTIONS), {"margin": 0.3}, *LEGACY]))
def test_margin_ranking_loss(backend, kw, dtype):
    run("margin_ranking_loss", backend, X5, Y5, S5, dtype=dtype, **kw)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_margin_ranking_loss_broadcast_exact_and_empty(backend):
    run("margin_ranking_loss", backend, X34[:, :1], Y34[:1], S34, margin=0.2, reduction="none")
    # -y (x1 - x2) + margin == 0 exactly in rows 0 and 1: the hinge passes the gradient there, as torch's clamp_min
    run("margin_ranking_loss", backend, np.array([0.5, 0.25, 1.0]), np.array([0.25, 0.5, 0.0]),
        np.array([1.0, -1.0, 1.0]), margin=0.25, reduction="sum")
    for reduction in REDUCTIONS:
        run("margin_ranking_loss", backend, np.zeros(0), np.zeros(0), np.zeros(0), reduction=reduction)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("dtype", "kw"), dtyped([*({"reduction": r} for r in REDUCTIONS), {"margin": 0.5, "reduction": "sum"}, *LEGACY]))
def test_hinge_embedding_loss(backend, kw, dtype):
    target = S34.copy()
    target[0, :2] = [0.0, 2.0]  # neither 1 nor -1: both terms, as torch
    run("hinge_embedding_loss", backend, np.abs(X34) * 1.5, target, dtype=dtype, **kw)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_hinge_embedding_loss_broadcast_exact_and_empty(backend):
    run("hinge_embedding_loss", backend, np.abs(X34[0]), S34, reduction="none")  # target (3, 4) widens input (4,)
    run("hinge_embedding_loss", backend, np.array([1.0, 0.5, 1.0]), np.array([-1.0, -1.0, 1.0]), reduction="sum")
    run("hinge_embedding_loss", backend, np.zeros((0, 2)), np.zeros((0, 2)), reduction="mean")


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("dtype", "kw"), dtyped([*({"reduction": r} for r in REDUCTIONS), *LEGACY[:2]]))
def test_soft_margin_loss(backend, kw, dtype):
    run("soft_margin_loss", backend, X34 * 3, S34, grad=[0], dtype=dtype, **kw)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_soft_margin_loss_broadcast_and_large(backend):
    run("soft_margin_loss", backend, X34, S34[0], grad=[0], reduction="none")  # target (4,) broadcast to (3, 4)
    run("soft_margin_loss", backend, np.array([-40.0, 40.0, 0.0, 700.0]), np.array([1.0, 1.0, -1.0, -1.0]), grad=[0])
    # where torch's exp overflows to inf, the loss here stays -y x (a documented difference)
    x = mt.tensor([-800.0, 800.0], dtype="float64", requires_grad=True)
    loss = F.soft_margin_loss(x, [1.0, -1.0], reduction="none")
    loss.sum().backward()
    assert loss.to_numpy().tolist() == [800.0, 800.0] and x.grad.to_numpy().tolist() == [-1.0, 1.0]


# --- cosine embedding ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("dtype", "kw"), dtyped([*({"reduction": r} for r in REDUCTIONS), {"margin": 0.2}, {"margin": -0.5}, LEGACY[0]]))
def test_cosine_embedding_loss(backend, kw, dtype):
    run("cosine_embedding_loss", backend, X34, Y34, S34[:, 0], dtype=dtype, **kw)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_cosine_embedding_loss_shapes(backend):
    run("cosine_embedding_loss", backend, X34, Y34[:1], S34[:, 0], reduction="none")  # x2 (1, D) broadcasts
    run("cosine_embedding_loss", backend, X34, Y34, np.array([-1.0]), reduction="none")  # target (1,) broadcasts
    run("cosine_embedding_loss", backend, X34[0], Y34[0], np.array(-1.0), margin=-0.9, reduction="none")  # 0-d target
    run("cosine_embedding_loss", backend, X34, -X34, np.array([1.0, 0.0, -1.0]), reduction="none")  # y = 0: no loss
    run("cosine_embedding_loss", backend, np.zeros((0, 4)), np.zeros((0, 4)), np.zeros(0))  # mean of nothing: NaN


# --- triplets ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("dtype", "kw"), dtyped([
    *({"reduction": r} for r in REDUCTIONS), {"margin": 2.0, "p": 1.0}, {"p": 3.0, "eps": 1e-3, "reduction": "sum"},
    {"swap": True, "reduction": "none"}, {"swap": True, "margin": 0.5}, LEGACY[1],
]))
def test_triplet_margin_loss(backend, kw, dtype):
    run("triplet_margin_loss", backend, X34, Y34, X34 + 0.5 * Y34, dtype=dtype, **kw)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_triplet_margin_loss_shapes(backend):
    run("triplet_margin_loss", backend, X34, Y34[:1], X34[::-1].copy(), reduction="none")  # positive (1, D) broadcasts
    run("triplet_margin_loss", backend, X34[0], Y34[0], X34[1], swap=True, reduction="none")  # 1-D: a 0-d loss
    run("triplet_margin_loss", backend, np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), reduction="none")


def _one_minus_cosine(L):
    return lambda a, b: 1.0 - L.nn.functional.cosine_similarity(a, b)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("dtype", "kw"), dtyped([*({"reduction": r} for r in REDUCTIONS), {"swap": True, "margin": 0.4}]))
def test_triplet_margin_with_distance_loss(backend, kw, dtype):
    a, p, n = X34, Y34, X34 + 0.5 * Y34
    run("triplet_margin_with_distance_loss", backend, a, p, n, dtype=dtype, **kw)
    ta, tp, tn = (torch.tensor(v, dtype=getattr(torch, dtype), requires_grad=True) for v in (a, p, n))
    ma, mp, mn = (mt.tensor(v, backend=backend, dtype=dtype, requires_grad=True) for v in (a, p, n))
    expected = TF.triplet_margin_with_distance_loss(ta, tp, tn, distance_function=_one_minus_cosine(torch), **kw)
    got = F.triplet_margin_with_distance_loss(ma, mp, mn, distance_function=_one_minus_cosine(mt), **kw)
    expected.sum().backward()
    got.sum().backward()
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(got.to_numpy(), expected.detach().numpy(), rtol=rtol, atol=atol)
    for ours, theirs in ((ma, ta), (mp, tp), (mn, tn)):
        np.testing.assert_allclose(ours.grad.to_numpy(), theirs.grad.numpy(), rtol=rtol, atol=atol)


# --- multi-class and multi-label ---

T3 = np.array([0, 3, 1])
W4 = np.array([0.5, 1.5, 1.0, 2.0])


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("dtype", "kw"), dtyped([
    *({"reduction": r} for r in REDUCTIONS), {"p": 2}, {"margin": 0.3, "p": 2, "reduction": "none"},
    {"weight": W4}, {"weight": W4, "p": 2, "reduction": "sum"}, LEGACY[0],
]))
def test_multi_margin_loss(backend, kw, dtype):
    run("multi_margin_loss", backend, X34, T3, dtype=dtype, tensor_kw=("weight",), **kw)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_multi_margin_loss_shapes_and_exact_margins(backend):
    run("multi_margin_loss", backend, X34[0], np.array([2]), reduction="none")  # (C,) with target (1,): (1,)
    run("multi_margin_loss", backend, X34[0], np.array(2), reduction="none")  # 0-d target: 0-d loss
    run("multi_margin_loss", backend, X34[:1], np.array(1), reduction="none")
    run("multi_margin_loss", backend, np.array(0.7), np.array(0), reduction="sum")  # 0-d input: one class, no loss
    # margin - x[y] + x[i] == 0 exactly for i = 1 in row 0 and i = 2 in row 1: no gradient there, as torch (z > 0)
    x = np.array([[1.0, 0.0, -3.0], [-2.0, 0.5, -0.5]])
    run("multi_margin_loss", backend, x, np.array([0, 1]), reduction="none")
    run("multi_margin_loss", backend, x, np.array([0, 1]), p=2, reduction="sum")
    run("multi_margin_loss", backend, np.zeros((0, 4)), np.zeros(0, dtype=np.int64), reduction="none")
    assert F.multi_margin_loss(mt.zeros(0, 4, dtype="float64", backend=backend), np.zeros(0, np.int64),
                               reduction="sum").item() == 0.0


def test_multi_margin_loss_weight_gradient():
    """torch's kernel has no weight gradient; ours is d/dw of sum_{i != y} w[y] max(0, z_i) / C."""
    w = mt.tensor(W4, dtype="float64", requires_grad=True)
    F.multi_margin_loss(mt.tensor(X34, dtype="float64"), T3, weight=w, reduction="sum").backward()
    z = np.maximum(1.0 - X34[np.arange(3), T3][:, None] + X34, 0.0)
    z[np.arange(3), T3] = 0.0
    expected = np.zeros(4)
    np.add.at(expected, T3, z.sum(1) / 4)
    np.testing.assert_allclose(w.grad.to_numpy(), expected, rtol=1e-12)


ML_TARGET = np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 2, 0, 0], [2, 2, -1, 3]])  # full row, empty row, repeat


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("dtype", "kw"), dtyped([*({"reduction": r} for r in REDUCTIONS), LEGACY[1]]))
def test_multilabel_margin_loss(backend, kw, dtype):
    run("multilabel_margin_loss", backend, RNG.standard_normal((4, 4)), ML_TARGET, dtype=dtype, **kw)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_multilabel_margin_loss_shapes_and_exact_margins(backend):
    run("multilabel_margin_loss", backend, X34[0], np.array([2, -1, 3, 0]), reduction="none")  # 1-D: 0-d loss
    run("multilabel_margin_loss", backend, X34[0], np.array([2, 1, 0, 3]), reduction="mean")  # every class a target
    # 1 - (x[y] - x[i]) == 0 exactly: class 0 (target) vs class 2 in row 0: no gradient there
    x = np.array([[1.5, 0.0, 0.5, -1.0], [0.25, 0.75, -0.25, 2.0]])
    run("multilabel_margin_loss", backend, x, np.array([[0, -1, 0, 0], [1, 3, -1, 2]]), reduction="none")
    run("multilabel_margin_loss", backend, np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64), reduction="none")
    assert F.multilabel_margin_loss(mt.zeros(0, 3, backend=backend), np.zeros((0, 3), np.int64), reduction="sum").item() == 0


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("dtype", "kw"), dtyped([
    *({"reduction": r} for r in REDUCTIONS), {"weight": W4}, {"weight": W4[None]}, LEGACY[0],
]))
def test_multilabel_soft_margin_loss(backend, kw, dtype):
    run("multilabel_soft_margin_loss", backend, X34 * 4, (S34 > 0).astype(float), dtype=dtype, tensor_kw=("weight",), **kw)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_multilabel_soft_margin_loss_shapes_and_weight_gradient(backend):
    run("multilabel_soft_margin_loss", backend, X34[0], RNG.random(4), reduction="none")  # 1-D: one 0-d loss
    run("multilabel_soft_margin_loss", backend, RNG.standard_normal((2, 3, 4)), RNG.random(4), W4, reduction="none")
    run("multilabel_soft_margin_loss", backend, np.zeros((0, 4)), np.zeros((0, 4)), reduction="sum")
    run("multilabel_soft_margin_loss", backend, np.zeros((0, 4)), np.zeros((0, 4)))  # NaN, as torch


# --- Poisson and Gaussian NLL ---

COUNTS = np.array([[0.0, 0.5, 1.0, 3.7], [2.0, 7.0, 1.5, 0.0], [4.0, 1.0, 0.25, 12.0]])


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("dtype", "kw"), dtyped([
    *({"reduction": r} for r in REDUCTIONS), {"full": True}, {"full": True, "reduction": "none"},
    {"log_input": False}, {"log_input": False, "full": True, "eps": 1e-3, "reduction": "sum"}, *LEGACY[:2],
]))
def test_poisson_nll_loss(backend, kw, dtype):
    x = np.abs(X34) + 0.1 if kw.get("log_input") is False else X34
    # torch's target gradient is NaN at target 0 under full=True (0 * log 0): the target gradient is checked elsewhere
    run("poisson_nll_loss", backend, x, COUNTS, grad=[0] if kw.get("full") else None, dtype=dtype, **kw)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_poisson_nll_loss_broadcast_and_target_gradient(backend):
    run("poisson_nll_loss", backend, X34, COUNTS[0] + 0.5, full=True, reduction="none")  # (4,) target, positive
    run("poisson_nll_loss", backend, X34[:, :1], COUNTS, log_input=False, reduction="none")  # x (3, 1) broadcast
    y = mt.tensor(COUNTS, dtype="float64", requires_grad=True)
    F.poisson_nll_loss(mt.tensor(X34, dtype="float64"), y, full=True, reduction="sum").backward()
    big = COUNTS > 1
    expected = -X34 + np.where(big, np.log(np.where(big, COUNTS, 1.0)) + 0.5 / np.where(big, COUNTS, 1.0), 0.0)
    np.testing.assert_allclose(y.grad.to_numpy(), expected, rtol=1e-12)  # finite at target 0 (torch: NaN)


VAR34 = RNG.random((3, 4)) + 0.1
VAR34[0, 0] = 1e-9  # below eps: clamped, gradient passed through


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("var", [VAR34, VAR34[:, 0], VAR34[:, :1], VAR34[:1]], ids=["same", "short", "N1", "1C"])
@pytest.mark.parametrize("kw", [*({"reduction": r} for r in REDUCTIONS), {"full": True, "eps": 1e-2}])
def test_gaussian_nll_loss(backend, var, kw):
    run("gaussian_nll_loss", backend, X34, Y34, var, **kw)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_gaussian_nll_loss_shapes_and_float_var(backend):
    run("gaussian_nll_loss", backend, X34, Y34, VAR34, dtype="float32")
    run("gaussian_nll_loss", backend, X34, Y34[0], VAR34[:, 0], reduction="none")  # target (4,), var (3,) -> (3, 1)
    run("gaussian_nll_loss", backend, RNG.standard_normal((2, 3, 4)), Y34, RNG.random((2, 1, 4)) + 0.1, reduction="none")
    run("gaussian_nll_loss", backend, X34, Y34, 0.5, full=True, reduction="none")
    run("gaussian_nll_loss", backend, X34[0], Y34[0], np.array(0.3), reduction="none")  # 0-d var for (4,) input
    run("gaussian_nll_loss", backend, np.zeros((0, 4)), np.zeros((0, 4)), np.zeros(0))


# --- CTC ---


def _ctc_pair(backend, logits, dtype, requires_grad=True):
    """Logits as (minitensor, torch) leaves and their log_softmax over the class dim."""
    m = mt.tensor(logits, backend=backend, dtype=dtype, requires_grad=requires_grad)
    t = torch.tensor(logits, dtype=getattr(torch, dtype), requires_grad=requires_grad)
    return m, t, m.log_softmax(-1), t.log_softmax(-1)


def ctc(backend, logits, targets, in_len, t_len, dtype="float64", tol=None, lengths_as=list, grad=True, **kw):
    """ctc_loss on log_softmax(logits) against torch: value, shape, dtype and (``grad``) d/dlogits (random upstream)."""
    rtol, atol = tol or TOL[dtype]
    m, t, mlp, tlp = _ctc_pair(backend, logits, dtype)
    expected = TF.ctc_loss(tlp, torch.tensor(targets), torch.tensor(in_len), torch.tensor(t_len), **kw)
    got = F.ctc_loss(mlp, mt.tensor(targets, backend=backend, dtype="int64"), lengths_as(in_len), lengths_as(t_len), **kw)
    assert got.shape == tuple(expected.shape) and got.dtype.name == dtype
    np.testing.assert_allclose(got.to_numpy(), expected.detach().numpy(), rtol=rtol, atol=atol)
    if not grad:
        return got, None
    upstream = RNG.standard_normal(expected.shape)
    (expected * torch.tensor(upstream, dtype=expected.dtype)).sum().backward()
    (got * mt.tensor(upstream, backend=backend, dtype=dtype)).sum().backward()
    np.testing.assert_allclose(m.grad.to_numpy(), t.grad.numpy(), rtol=rtol, atol=atol)
    return got, m.grad


LOGITS = RNG.standard_normal((7, 3, 5)) * 1.5
PADDED = np.array([[1, 2, 2, 0], [3, 1, 4, 4], [4, 0, 0, 0]])  # a repeat, a repeat at the end, one label
IN_LEN, T_LEN = [7, 6, 4], [3, 4, 1]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize(("dtype", "reduction"), [*(("float64", r) for r in REDUCTIONS), ("float32", "mean"), ("float32", "none")])
def test_ctc_loss(backend, reduction, dtype):
    ctc(backend, LOGITS, PADDED, IN_LEN, T_LEN, dtype=dtype, reduction=reduction)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_ctc_loss_forms(backend):
    concatenated = np.concatenate([PADDED[i, :n] for i, n in enumerate(T_LEN)])
    ctc(backend, LOGITS, concatenated, IN_LEN, T_LEN, reduction="none", lengths_as=tuple)
    ctc(backend, LOGITS, np.array([[1, 2, 2, 0], [3, 1, 0, 0], [0, 9, 9, 9]]), IN_LEN, T_LEN, blank=4, reduction="none",
        lengths_as=lambda v: mt.tensor(v, backend=backend, dtype="int32"))  # another blank; 0 is a label
    ctc(backend, LOGITS[:, 0], PADDED[0, :3], np.array(7), np.array(3), reduction="none", lengths_as=np.asarray)  # unbatched
    ctc(backend, LOGITS[:, 0], PADDED[:1], [5], [3], reduction="mean")  # unbatched with (1, S) targets


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_ctc_loss_blank_in_targets(backend):
    """Labels equal to the blank: the value is torch's; torch's gradient is off at such a sample's last step, so the
    gradient is checked against central differences of the loss instead."""
    targets, in_len, t_len = np.array([[1, 0, 1], [0, 0, 2], [2, 2, 0]]), [7, 7, 4], [3, 2, 1]
    ctc(backend, LOGITS, targets, in_len, t_len, reduction="none", grad=False)
    x = mt.tensor(LOGITS, backend=backend, dtype="float64", requires_grad=True)
    F.ctc_loss(x.log_softmax(-1), targets, in_len, t_len, reduction="sum").backward()

    def loss(a):
        return TF.ctc_loss(torch.tensor(a).log_softmax(-1), torch.tensor(targets), in_len, t_len, reduction="sum").item()

    step, numeric = 1e-6, np.zeros_like(LOGITS)
    for index in np.ndindex(*LOGITS.shape):
        up, down = LOGITS.copy(), LOGITS.copy()
        up[index] += step
        down[index] -= step
        numeric[index] = (loss(up) - loss(down)) / (2 * step)
    np.testing.assert_allclose(x.grad.to_numpy(), numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_ctc_loss_empty_targets_and_lengths(backend):
    got, _ = ctc(backend, LOGITS, np.zeros((3, 0), dtype=np.int64), [7, 2, 0], [0, 0, 0], reduction="none")
    assert got.to_numpy()[2] == 0.0  # no steps, no labels: probability 1
    ctc(backend, LOGITS, PADDED, [7, 0, 4], [0, 4, 1], reduction="mean", zero_infinity=True)
    ctc(backend, LOGITS, np.zeros(0, dtype=np.int64), [3, 5, 7], [0, 0, 0], reduction="sum")  # concatenated, empty


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_ctc_loss_impossible_alignments(backend):
    # sample 0: 3 labels in 2 steps; sample 1: 2, 2, 2 needs 5 steps, has 4; sample 2 is possible
    targets, in_len, t_len = np.array([[1, 2, 3], [2, 2, 2], [1, 3, 0]]), [2, 4, 7], [3, 3, 2]
    for reduction in REDUCTIONS:
        got, grad = ctc(backend, LOGITS, targets, in_len, t_len, reduction=reduction, zero_infinity=True)
        assert np.isfinite(got.to_numpy()).all() and not grad.to_numpy()[:, :2].any()
    m, t, mlp, tlp = _ctc_pair(backend, LOGITS, "float64")
    got = F.ctc_loss(mlp, targets, in_len, t_len, reduction="none")
    expected = TF.ctc_loss(tlp, torch.tensor(targets), in_len, t_len, reduction="none")
    np.testing.assert_allclose(got.to_numpy(), expected.detach().numpy(), rtol=1e-10)
    assert got.to_numpy()[:2].tolist() == [math.inf, math.inf]
    got.sum().backward()  # torch's gradient is NaN for an infinite loss; here it is 0 for those samples
    assert np.isfinite(m.grad.to_numpy()).all() and not m.grad.to_numpy()[:, :2].any()


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_ctc_loss_minus_inf_log_probs_and_direct_gradient(backend):
    """-inf log-probabilities (impossible classes) leave loss and gradient finite (0 there, where torch's is NaN); the
    gradient with respect to log_probs is the true one: torch's minus exp(log_probs) on the steps each sample uses."""
    lp = np.log(np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True))
    lp[:, :, 3] = -np.inf
    lp[2, 0, 2] = -np.inf
    targets, in_len, t_len = np.array([[1, 2, 2], [2, 1, 0], [1, 1, 0]]), [7, 5, 6], [3, 2, 2]
    for reduction in REDUCTIONS:
        upstream = RNG.standard_normal(3 if reduction == "none" else ())
        tlp = torch.tensor(lp, requires_grad=True)
        expected = TF.ctc_loss(tlp, torch.tensor(targets), in_len, t_len, reduction=reduction)
        (expected * torch.tensor(upstream)).sum().backward()
        mlp = mt.tensor(lp, backend=backend, dtype="float64", requires_grad=True)
        got = F.ctc_loss(mlp, targets, in_len, t_len, reduction=reduction)
        (got * mt.tensor(upstream, backend=backend, dtype="float64")).sum().backward()
        np.testing.assert_allclose(got.to_numpy(), expected.detach().numpy(), rtol=1e-10)
        scale = {"none": upstream, "sum": np.full(3, upstream), "mean": upstream / np.array(t_len) / 3}[reduction]
        used = (np.arange(7)[:, None] < np.array(in_len)[None]) * np.broadcast_to(scale, (3,))
        shifted = tlp.grad.numpy() - np.exp(lp) * used[:, :, None]
        ours, impossible = mlp.grad.to_numpy(), np.isneginf(lp)
        assert np.isfinite(ours).all() and not ours[impossible].any()  # torch: NaN at -inf log-probabilities
        np.testing.assert_allclose(ours[~impossible], shifted[~impossible], rtol=1e-9, atol=1e-12)


# --- every backend: one tiny case per family ---


@pytest.mark.parametrize("backend", BACKENDS)
def test_tiny_cases_every_backend(backend):
    x, y = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]), np.array([[0.0, 1.0, -1.0], [2.0, -0.5, 0.5]])
    run("margin_ranking_loss", backend, x[0], y[0], np.array([1.0, -1.0, 1.0]), margin=0.5)
    run("triplet_margin_loss", backend, x, y, x[::-1].copy(), swap=True)
    run("multi_margin_loss", backend, x, np.array([2, 0]), p=2)
    run("multilabel_margin_loss", backend, x, np.array([[2, -1, 0], [0, 1, -1]]))
    run("poisson_nll_loss", backend, x, np.abs(y) * 2, full=True, grad=[0])
    run("gaussian_nll_loss", backend, x, y, np.array([0.5, 2.0]), reduction="sum")
    ctc(backend, x.reshape(3, 1, 2), np.array([[1]]), [3], [1])


def test_mixed_dtypes_follow_torch():
    """A float64 target, var or weight promotes float32 inputs to float64 where torch's ops promote; soft_margin_loss
    (torch: computed in the input's dtype) and the CTC targets do not."""
    x32, t64 = np.float32([0.5, -1.0, 2.0]), np.array([1.0, -1.0, 1.0])
    cases = [
        ("margin_ranking_loss", (x32, x32[::-1].copy(), t64)), ("soft_margin_loss", (x32, t64)),
        ("hinge_embedding_loss", (x32, t64)), ("poisson_nll_loss", (x32, np.abs(t64))),
        ("gaussian_nll_loss", (x32, x32, np.abs(t64))), ("multilabel_soft_margin_loss", (x32, np.abs(t64), t64)),
    ]
    for name, args in cases:
        got = getattr(F, name)(*(mt.tensor(a, dtype=a.dtype.name) for a in args))
        expected = getattr(TF, name)(*(torch.tensor(a) for a in args))
        assert got.dtype.name == str(expected.dtype).removeprefix("torch."), name
        np.testing.assert_allclose(got.item(), expected.item(), rtol=1e-6)


# --- Modules ---

MODULE_CASES = [
    ("MarginRankingLoss", {"margin": 0.2, "reduction": "sum"}, (X5, Y5, S5)),
    ("HingeEmbeddingLoss", {"margin": 0.5, "size_average": False}, (np.abs(X34), S34)),
    ("CosineEmbeddingLoss", {"margin": 0.1, "reduction": "none"}, (X34, Y34, S34[:, 0])),
    ("TripletMarginLoss", {"margin": 0.7, "p": 1.0, "swap": True}, (X34, Y34, X34 + Y34)),
    ("TripletMarginWithDistanceLoss", {"swap": True, "reduction": "none"}, (X34, Y34, X34 + Y34)),
    ("SoftMarginLoss", {"reduction": "none"}, (X34, S34)),
    ("MultiLabelSoftMarginLoss", {"weight": W4}, (X34, (S34 > 0).astype(float))),
    ("MultiMarginLoss", {"p": 2, "margin": 0.5, "weight": W4, "reduction": "none"}, (X34, T3)),
    ("MultiLabelMarginLoss", {"reduction": "sum"}, (RNG.standard_normal((4, 4)), ML_TARGET)),
    ("PoissonNLLLoss", {"log_input": False, "full": True, "eps": 1e-4}, (np.abs(X34) + 0.1, COUNTS)),
    ("GaussianNLLLoss", {"full": True, "eps": 1e-3, "reduction": "none"}, (X34, Y34, VAR34)),
    ("CTCLoss", {"blank": 4, "zero_infinity": True}, (LOGITS, PADDED, np.array(IN_LEN), np.array(T_LEN))),
]


@pytest.mark.parametrize(("cls", "kw", "args"), MODULE_CASES)
def test_loss_modules(cls, kw, args):
    tkw = {k: torch.tensor(v) if k == "weight" else v for k, v in kw.items()}
    mkw = {k: mt.tensor(v, dtype="float64") if k == "weight" else v for k, v in kw.items()}
    targs = [torch.tensor(a) for a in args]
    margs = [mt.tensor(a, dtype="float64" if a.dtype.kind == "f" else "int64") for a in args]
    if cls == "CTCLoss":
        targs[0], margs[0] = targs[0].log_softmax(-1), margs[0].log_softmax(-1)
    expected = getattr(torch.nn, cls)(**tkw)(*targs)
    module = getattr(nn, cls)(**mkw)
    got = module(*margs)
    np.testing.assert_allclose(got.to_numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)
    assert isinstance(module, mt.Module) and module.reduction == getattr(torch.nn, cls)(**tkw).reduction
    if "weight" in kw:
        assert dict(module.named_buffers())["weight"] is mkw["weight"]


def test_module_settings_and_repr():
    assert repr(nn.MarginRankingLoss()) == "MarginRankingLoss()"
    assert repr(nn.TripletMarginLoss(p=1.0, swap=True)) == "TripletMarginLoss(p=1.0, swap=True)"
    assert repr(nn.CTCLoss(blank=3)) == "CTCLoss(blank=3)"
    assert repr(nn.MultiMarginLoss(weight=mt.ones(3))) == "MultiMarginLoss(weight=Tensor(3,))"
    assert nn.SoftMarginLoss(size_average=False, reduce=False).reduction == "none"
    assert nn.PoissonNLLLoss(size_average=False).reduction == "sum"
    assert isinstance(nn.TripletMarginWithDistanceLoss().distance_function, nn.PairwiseDistance)
    assert "distance_function" in dict(nn.TripletMarginWithDistanceLoss().named_children())
    with pytest.raises(ValueError, match="margin"):
        nn.TripletMarginLoss(margin=0.0)
    with pytest.raises(ValueError, match="margin"):
        nn.TripletMarginWithDistanceLoss(margin=-1.0)
    with pytest.raises(ValueError, match="p == 1"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="1D"):
        nn.MultiMarginLoss(weight=mt.ones(2, 2))
    with pytest.raises(ValueError, match="reduction"):
        nn.CTCLoss(reduction="avg")
    with pytest.raises(ValueError, match="reduction"):
        nn.GaussianNLLLoss(reduction="batchmean")


# --- errors ---


def test_margin_family_errors():
    a, b = mt.zeros(3, 4, dtype="float64"), mt.zeros(3, dtype="float64")
    with pytest.raises(ShapeError, match=r"same number of dims.*\(3, 4\).*\(3,\)"):
        F.margin_ranking_loss(a, a, b)
    with pytest.raises(ShapeError, match="broadcast"):
        F.margin_ranking_loss(b, mt.zeros(2), b)
    with pytest.raises(ValueError, match="reduction.*'avg'"):
        F.margin_ranking_loss(b, b, b, reduction="avg")
    with pytest.raises(DTypeError, match="floating-point"):
        F.hinge_embedding_loss(mt.zeros(3, dtype="int64"), b)
    with pytest.raises(ShapeError, match="broadcast"):
        F.hinge_embedding_loss(b, mt.zeros(4))
    with pytest.raises(ShapeError, match="must broadcast to the input's shape"):
        F.soft_margin_loss(b, mt.zeros(2, 3))
    with pytest.raises(ShapeError, match="0-d or 1-D"):
        F.cosine_embedding_loss(a, a, mt.zeros(3, 1))
    with pytest.raises(ShapeError, match=r"0-D target needs 1-D inputs.*\(3, 4\)"):
        F.cosine_embedding_loss(a, a, mt.tensor(1.0))
    with pytest.raises(ShapeError, match="broadcast"):
        F.cosine_embedding_loss(a, a, mt.ones(2))
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_loss(a, a, a, margin=0.0)
    with pytest.raises(ShapeError, match="same number of dims"):
        F.triplet_margin_loss(a, a, b)
    with pytest.raises(ShapeError, match="same number of dims"):
        F.triplet_margin_with_distance_loss(a, b, a)
    with pytest.raises(ValueError, match="reduction"):
        F.triplet_margin_with_distance_loss(a, a, a, reduction="avg")
    with pytest.raises(TypeError, match="'input1' must be Tensor"):
        F.margin_ranking_loss(np.zeros(3), b, b)


def test_multilabel_family_errors():
    x = mt.zeros(3, 4, dtype="float64")
    with pytest.raises(DTypeError, match="integer"):
        F.multi_margin_loss(x, mt.zeros(3, dtype="float64"))
    with pytest.raises(DTypeError, match="integer"):
        F.multilabel_margin_loss(x, np.zeros((3, 4)))
    with pytest.raises(IndexOutOfRangeError, match=r"target\[1\]=4.*target\[2\]=-1"):
        F.multi_margin_loss(x, [0, 4, -1])
    with pytest.raises(ShapeError, match=r"one class index per sample \(3\).*\(2,\)"):
        F.multi_margin_loss(x, [0, 1])
    with pytest.raises(ShapeError, match="non-empty"):
        F.multi_margin_loss(mt.zeros(3, 4, 2), [0, 1, 2])
    with pytest.raises(ShapeError, match="non-empty"):
        F.multi_margin_loss(mt.zeros(3, 0), [0, 1, 2])
    with pytest.raises(ValueError, match="p == 1"):
        F.multi_margin_loss(x, [0, 1, 2], p=3)
    with pytest.raises(ValueError, match="one-dimensional"):
        F.multi_margin_loss(x, [0, 1, 2], weight=mt.ones(1, 4))
    with pytest.raises(ShapeError, match=r"weight must have shape \(4,\)"):
        F.multi_margin_loss(x, [0, 1, 2], weight=mt.ones(3))
    with pytest.raises(IndexOutOfRangeError, match=r"\[-1, 4\).*target\[0, 1\]=-2.*target\[2, 3\]=4"):
        F.multilabel_margin_loss(x, [[3, -2, 0, 0], [0, 1, 2, 3], [0, -1, 1, 4]])  # checked after the -1 too, as torch
    with pytest.raises(ShapeError, match=r"input's shape \(3, 4\).*\(3, 3\)"):
        F.multilabel_margin_loss(x, np.zeros((3, 3), np.int64))
    with pytest.raises(ShapeError, match="0-d"):
        F.multilabel_soft_margin_loss(mt.tensor(1.0), mt.tensor(1.0))
    with pytest.raises(ShapeError, match="broadcast"):
        F.multilabel_soft_margin_loss(x, np.zeros((3, 4)), weight=mt.ones(3))
    with pytest.raises(ValueError, match="reduction"):
        F.multilabel_soft_margin_loss(x, np.zeros((3, 4)), reduction="avg")


def test_nll_family_errors():
    x = mt.zeros(3, 4, dtype="float64")
    with pytest.raises(ShapeError, match="broadcast"):
        F.poisson_nll_loss(x, np.zeros(3))
    with pytest.raises(ValueError, match="reduction"):
        F.poisson_nll_loss(x, np.zeros((3, 4)), reduction="avg")
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(x, x, mt.tensor([1.0, -0.5, 1.0], dtype="float64"))
    with pytest.raises(ValueError, match="non-negative"):
        F.gaussian_nll_loss(x, x, -1.0)
    for var in (mt.ones(4), mt.ones(3, 1, 1), mt.ones(1, 1), mt.ones(2, 4)):
        with pytest.raises(ShapeError, match="incorrect size"):
            F.gaussian_nll_loss(x, x, var)
    with pytest.raises(ShapeError, match="broadcast"):
        F.gaussian_nll_loss(x, np.zeros(3), mt.ones(3, 4))
    with pytest.raises(ValueError, match="reduction"):
        F.gaussian_nll_loss(x, x, mt.ones(3, 4), reduction="avg")


def test_ctc_loss_errors():
    lp = mt.tensor(np.log(np.full((5, 2, 4), 0.25)), dtype="float64")
    tg = np.array([[1, 2, 0], [3, 3, 3]])
    with pytest.raises(DTypeError, match="integer"):
        F.ctc_loss(lp, tg.astype(float), [5, 5], [2, 3])
    with pytest.raises(DTypeError, match="input_lengths must be an integer"):
        F.ctc_loss(lp, tg, mt.tensor([5.0, 4.0]), [2, 3])
    with pytest.raises(ValueError, match=r"target_lengths be >= 0.*\[2, -1\]"):
        F.ctc_loss(lp, tg, [5, 5], [2, -1])
    with pytest.raises(ValueError, match=r"input_lengths must lie in \[0, 5\]"):
        F.ctc_loss(lp, tg, [5, 6], [2, 1])
    with pytest.raises(ShapeError, match=r"input_lengths must hold one length per sample \(2\)"):
        F.ctc_loss(lp, tg, [5], [2, 1])
    with pytest.raises(ShapeError, match=r"sum\(target_lengths\) = 5 entries, got 4"):
        F.ctc_loss(lp, np.array([1, 2, 3, 3]), [5, 4], [2, 3])
    with pytest.raises(ShapeError, match=">= 4"):
        F.ctc_loss(lp, tg, [5, 5], [2, 4])
    with pytest.raises(ShapeError, match="padded"):
        F.ctc_loss(lp, tg[None], [5, 5], [2, 3])
    with pytest.raises(ValueError, match="blank"):
        F.ctc_loss(lp, tg, [5, 5], [2, 3], blank=4)
    with pytest.raises(IndexOutOfRangeError, match="sample 0 label 1 = 7"):
        F.ctc_loss(lp, np.array([[1, 7, 9], [3, 3, 3]]), [5, 5], [2, 3])  # 9 lies in the padding: ignored
    with pytest.raises(ValueError, match="reduction"):
        F.ctc_loss(lp, tg, [5, 5], [2, 3], reduction="avg")
    with pytest.raises(ShapeError, match=r"\(T, N, C\)"):
        F.ctc_loss(lp.unsqueeze(0), tg, [5, 5], [2, 3])
    with pytest.raises(ShapeError, match="empty"):
        F.ctc_loss(mt.zeros(5, 0, 4), np.zeros((0, 2), np.int64), [], [])
    with pytest.raises(DTypeError, match="floating-point"):
        F.ctc_loss(mt.zeros(5, 2, 4, dtype="int64"), tg, [5, 5], [2, 3])
