"""F.bilinear / nn.Bilinear, F.pairwise_distance / nn.PairwiseDistance, F.pdist, nn.CosineSimilarity and
F.channel_shuffle / nn.ChannelShuffle against PyTorch: values, dtypes, shapes, gradients, modules and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS
from torch_oracle import check

import minitensor as mt
from minitensor import nn
from minitensor.nn import functional as F

RNG = np.random.default_rng(7)
PS = [1.0, 2.0, 3.0, math.inf, 0.5]


def normal(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def tol(dtype):
    return {"rtol": 1e-10, "atol": 1e-12} if dtype == np.float64 else {"rtol": 2e-5, "atol": 2e-6}


# --- bilinear ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_bilinear_matches_torch(backend, dtype):
    w, b = normal(2, 3, 4, dtype=dtype), normal(2, dtype=dtype)
    fn = lambda L, x, y, w, b: L.nn.functional.bilinear(x, y, w, b)  # noqa: E731
    check(backend, fn, normal(5, 3, dtype=dtype), normal(5, 4, dtype=dtype), w, b, **tol(dtype))
    check(backend, fn, normal(2, 3, 3, dtype=dtype), normal(2, 3, 4, dtype=dtype), w, b, **tol(dtype))  # batch dims
    check(backend, fn, normal(0, 3, dtype=dtype), normal(0, 4, dtype=dtype), w, b, **tol(dtype))  # empty batch
    no_bias = lambda L, x, y, w: L.nn.functional.bilinear(x, y, w)  # noqa: E731
    check(backend, no_bias, normal(3, dtype=dtype), normal(4, dtype=dtype), w, **tol(dtype))  # 1-D inputs -> (out,)
    # non-contiguous inputs and weight: transposed views
    strided = lambda L, x, y, w: L.nn.functional.bilinear(x.transpose(0, 1), y[:, ::2], w.permute(2, 0, 1))  # noqa: E731
    check(backend, strided, normal(3, 5, dtype=dtype), normal(5, 8, dtype=dtype), normal(3, 4, 2, dtype=dtype), **tol(dtype))


def test_bilinear_module_matches_torch():
    theirs = torch.nn.Bilinear(3, 4, 2).double()
    mine = nn.Bilinear(3, 4, 2, dtype=mt.float64)
    assert repr(mine) == repr(theirs) == "Bilinear(in1_features=3, in2_features=4, out_features=2, bias=True)"
    assert list(mine.state_dict()) == list(theirs.state_dict()) == ["weight", "bias"]
    assert mine.weight.shape == (2, 3, 4) and mine.bias.shape == (2,) and mine.weight.dtype == mt.float64
    bound = 1 / math.sqrt(3)
    assert np.all(np.abs(mine.bias.numpy()) <= bound)  # U(-1/sqrt(in1), 1/sqrt(in1)) for both
    assert np.all(np.abs(mine.weight.numpy()) <= bound) and mine.weight.numpy().std() > bound / 4
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x1, x2 = normal(6, 3), normal(6, 4)
    want, got = theirs(torch.tensor(x1), torch.tensor(x2)), mine(mt.tensor(x1), mt.tensor(x2))
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-12)
    want.sum().backward()
    got.sum().backward()
    np.testing.assert_allclose(mine.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(mine.bias.grad.numpy(), theirs.bias.grad.numpy(), rtol=1e-12)
    plain = nn.Bilinear(2, 0, 3, bias=False)  # in2 = 0 is allowed (as torch): the output is zero
    assert [n for n, _ in plain.named_parameters()] == ["weight"] and repr(plain).endswith("bias=False)")
    assert np.all(plain(mt.zeros(4, 2), mt.zeros(4, 0)).numpy() == 0)
    with pytest.raises(ValueError, match="in1_features must be > 0"):
        nn.Bilinear(0, 2, 3)


def test_bilinear_errors():
    w = mt.zeros(2, 3, 4)
    with pytest.raises(mt.ShapeError, match="input1 size does not match weight size: got 2 but expected 3"):
        F.bilinear(mt.zeros(5, 2), mt.zeros(5, 4), w)
    with pytest.raises(mt.ShapeError, match="input2 size does not match weight size: got 5 but expected 4"):
        F.bilinear(mt.zeros(5, 3), mt.zeros(5, 5), w)
    with pytest.raises(mt.ShapeError, match="batch dimensions do not match"):
        F.bilinear(mt.zeros(1, 3), mt.zeros(5, 4), w)  # no broadcasting, as torch
    with pytest.raises(mt.ShapeError, match="input dimensions do not match: got 3 and 2"):
        F.bilinear(mt.zeros(2, 5, 3), mt.zeros(5, 4), w)
    with pytest.raises(mt.ShapeError, match="bias must have shape"):
        F.bilinear(mt.zeros(5, 3), mt.zeros(5, 4), w, mt.zeros(3))
    with pytest.raises(mt.ShapeError, match="weight must be 3-D"):
        F.bilinear(mt.zeros(5, 3), mt.zeros(5, 4), mt.zeros(2, 3))
    with pytest.raises(mt.DTypeError, match="same dtype"):
        F.bilinear(mt.zeros(5, 3), mt.zeros(5, 4, dtype=mt.float64), w)
    with pytest.raises(TypeError, match="argument 'input2' must be Tensor"):
        F.bilinear(mt.zeros(5, 3), None, w)


# --- pairwise_distance, pdist, CosineSimilarity ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("p", PS)
def test_pairwise_distance_matches_torch(backend, p):
    fn = lambda L, x, y: L.nn.functional.pairwise_distance(x, y, p)  # noqa: E731
    check(backend, fn, normal(4, 5), normal(4, 5), rtol=1e-10)
    check(backend, fn, normal(2, 1, 5), normal(3, 5), rtol=1e-10)  # broadcasting -> (2, 3)
    check(backend, fn, normal(5), normal(3, 5), rtol=1e-10)
    check(backend, fn, normal(0, 5), normal(0, 5), rtol=1e-10)  # empty batch
    check(backend, fn, normal(4, 5, dtype=np.float32), normal(4, 5, dtype=np.float32), rtol=1e-5)
    check(backend, fn, normal(4, 5, dtype=np.float32), normal(4, 5), rtol=1e-6)  # promotes to float64
    keep = lambda L, x, y: L.nn.functional.pairwise_distance(x, y, p, eps=1e-3, keepdim=True)  # noqa: E731
    check(backend, keep, normal(3, 4), normal(3, 4), rtol=1e-10)
    check(backend, keep, normal(), normal(), rtol=1e-10)  # 0-d: |x1 - x2 + eps|
    strided = lambda L, x, y: L.nn.functional.pairwise_distance(x.transpose(0, 1), y[::2], p)  # noqa: E731
    check(backend, strided, normal(5, 3), normal(6, 5), rtol=1e-10)


def test_pairwise_distance_ties_and_equal_inputs():
    x = np.array([[1.0, -1.0, 0.5], [2.0, 2.0, 2.0]])
    for p in (math.inf, 1.0, 2.0):  # inf: tied coordinates share the gradient, as torch.norm
        check("fast", lambda L, a, b, p=p: L.nn.functional.pairwise_distance(a, b, p, eps=0.0), x, np.zeros((2, 3)), rtol=1e-12)
    got = F.pairwise_distance(mt.zeros(2, 4), mt.zeros(2, 4)).numpy()  # eps is added to the difference
    want = torch.nn.functional.pairwise_distance(torch.zeros(2, 4), torch.zeros(2, 4)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(mt.ShapeError, match=r"shapes \(3, 4\) and \(3, 5\) do not broadcast"):
        F.pairwise_distance(mt.zeros(3, 4), mt.zeros(3, 5))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("p", PS)
def test_pdist_matches_torch(backend, p):
    x = normal(5, 3)
    x[3] = x[1]  # a zero distance: zero gradient, as torch
    x[4, 0] = x[2, 0]  # a zero coordinate difference
    fn = lambda L, a: L.nn.functional.pdist(a, p)  # noqa: E731
    check(backend, fn, x, rtol=1e-10)
    check(backend, fn, x.astype(np.float32), rtol=2e-5, atol=2e-6)
    check(backend, lambda L, a: L.nn.functional.pdist(a.transpose(0, 1), p), normal(4, 6), rtol=1e-10)  # strided


def test_pdist_edges():
    ties = np.array([[1.0, 2.0], [0.0, 1.0], [3.0, 3.0]])  # rows 0, 1: |diff| ties; torch's pdist gives each the full gradient
    check("fast", lambda L, a: L.nn.functional.pdist(a, math.inf), ties, rtol=1e-12)
    check("fast", lambda L, a: L.nn.functional.pdist(a, 0), normal(4, 3), rtol=1e-12, grad=False)
    for shape in [(0, 3), (1, 3), (4, 0)]:  # no pairs, or no coordinates (torch's backward crashes there: values only)
        got = check("fast", lambda L, a: L.nn.functional.pdist(a), np.zeros(shape), grad=False)[0]
        x = mt.zeros(*shape, requires_grad=True)
        F.pdist(x).sum().backward()
        assert x.grad is None or not x.grad.numpy().any()
        assert got.shape == (shape[0] * (shape[0] - 1) // 2,)
    with pytest.raises(mt.ShapeError, match="pdist only supports 2D tensors, got: 3D"):
        F.pdist(mt.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="non-negative p"):
        F.pdist(mt.zeros(2, 3), -1.0)
    with pytest.raises(mt.DTypeError, match="floating-point"):
        F.pdist(mt.zeros(2, 3, dtype=mt.int64))


def test_distance_modules_match_torch():
    x1, x2 = normal(4, 5, 2), normal(4, 5, 2)
    pairs = [(nn.PairwiseDistance(), torch.nn.PairwiseDistance()),
             (nn.PairwiseDistance(p=1.0, eps=0.1, keepdim=True), torch.nn.PairwiseDistance(p=1.0, eps=0.1, keepdim=True)),
             (nn.CosineSimilarity(), torch.nn.CosineSimilarity()),
             (nn.CosineSimilarity(dim=2, eps=1e-3), torch.nn.CosineSimilarity(dim=2, eps=1e-3))]
    for mine, theirs in pairs:
        assert repr(mine) == repr(theirs)
        assert list(mine.state_dict()) == list(theirs.state_dict()) == []
        check("fast", lambda L, a, b, m=mine, t=theirs: (m if L is mt else t)(a, b), x1, x2, rtol=1e-10)
    assert nn.PairwiseDistance(3.0).norm == torch.nn.PairwiseDistance(3.0).norm == 3.0  # torch stores p as `norm`


# --- channel_shuffle ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_channel_shuffle_matches_torch(backend):
    for shape, groups in [((2, 6, 3), 3), ((2, 6, 2, 3), 2), ((1, 4, 1, 1, 2), 4), ((0, 6, 2), 3), ((2, 0, 2), 2)]:
        # zero channels: values only (torch's backward rejects C = 0, as 0 / groups groups)
        check(backend, lambda L, x, g=groups: L.nn.functional.channel_shuffle(x, g), normal(*shape), grad=shape[1] > 0)
    check(backend, lambda L, x: L.nn.functional.channel_shuffle(x.transpose(1, 2), 2), normal(2, 3, 4), rtol=1e-12)
    ints = np.arange(24).reshape(1, 6, 4)
    check(backend, lambda L, x: L.nn.functional.channel_shuffle(x, 3), ints, grad=False)


def test_channel_shuffle_module_and_errors():
    mine, theirs = nn.ChannelShuffle(3), torch.nn.ChannelShuffle(3)
    assert repr(mine) == repr(theirs) == "ChannelShuffle(groups=3)"
    x = normal(2, 6, 2)
    np.testing.assert_array_equal(mine(mt.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy())
    with pytest.raises(mt.ShapeError, match="divisible by groups. Got 5 channels and 2 groups"):
        F.channel_shuffle(mt.zeros(1, 5, 2), 2)
    with pytest.raises(ValueError, match="must be positive. Value of groups:0"):
        F.channel_shuffle(mt.zeros(1, 6, 2), 0)
    with pytest.raises(mt.ShapeError, match=r"> 2 dims, but got input with sizes \[2, 6\]"):
        F.channel_shuffle(mt.zeros(2, 6), 2)
    with pytest.raises(TypeError, match="groups must be an int"):
        F.channel_shuffle(mt.zeros(1, 6, 2), 2.0)


# --- every backend, tiny ---


@pytest.mark.parametrize("backend", BACKENDS)
def test_distance_every_backend(backend):
    check(backend, lambda L, x, y, w, b: L.nn.functional.bilinear(x, y, w, b), normal(2, 2), normal(2, 3),
          normal(2, 2, 3), normal(2), rtol=1e-10)
    check(backend, lambda L, x, y: L.nn.functional.pairwise_distance(x, y, 3.0), normal(2, 3), normal(3), rtol=1e-10)
    check(backend, lambda L, x: L.nn.functional.pdist(x), normal(3, 2), rtol=1e-10)
    check(backend, lambda L, x, y: (nn.CosineSimilarity() if L is mt else torch.nn.CosineSimilarity())(x, y),
          normal(2, 3), normal(2, 3), rtol=1e-10)
    check(backend, lambda L, x: L.nn.functional.channel_shuffle(x, 2), normal(1, 4, 2), rtol=1e-12)
