"""F.embedding_bag and nn.EmbeddingBag against PyTorch: the three modes, 2-D input and 1-D input with offsets, empty
bags, padding_idx, include_last_offset, per_sample_weights, max-mode ties, gradients, the module and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.nn import functional as F

TF = torch.nn.functional
RNG = np.random.default_rng(5)
MODES = ["sum", "mean", "max"]
IDX2 = np.array([[1, 4, 1], [0, 3, 1], [2, 2, 5], [5, 0, 4]])  # 2-D: 4 bags of 3, index 1 repeats
IDX1 = np.array([1, 4, 1, 0, 3, 2, 2, 5, 4])
OFFSETS = np.array([0, 2, 2, 5, 9])  # bag 1 empty, and the last bag (from 9) empty


def grad_of(t):
    return np.zeros(tuple(t.shape)) if t.grad is None else t.grad.numpy()


def compare(backend, idx, offsets=None, *, dtype="float64", weights=None, psw=False, strided=False, **kw):
    """embedding_bag on both libraries: equal values, shape and dtype, and equal gradients of weight and
    per_sample_weights for a random output gradient. ``strided``: weight a transposed view, input and
    per_sample_weights every other element of a wider array (non-contiguous on both sides)."""
    w = RNG.standard_normal((6, 3)) if weights is None else weights
    tdtype = getattr(torch, dtype)
    leaf_w = w.T if strided else w
    tw = torch.tensor(leaf_w, dtype=tdtype, requires_grad=True)
    mw = mt.tensor(leaf_w, dtype=dtype, backend=backend, requires_grad=True)
    tlib_w, mlib_w = (tw.t(), mw.transpose(0, 1)) if strided else (tw, mw)
    wide = np.repeat(idx, 2, axis=-1) if strided else idx
    ti, mi = torch.tensor(wide), mt.tensor(wide, backend=backend)
    if strided:
        ti, mi = ti[..., ::2], mi[..., ::2]
        assert not mi.is_contiguous()
    targs, margs = {}, {}
    if offsets is not None:
        targs["offsets"], margs["offsets"] = torch.tensor(offsets), mt.tensor(offsets, backend=backend)
    if psw:
        s = RNG.standard_normal(idx.shape)
        tp = torch.tensor(s, dtype=tdtype, requires_grad=True)
        mp = mt.tensor(s, dtype=dtype, backend=backend, requires_grad=True)
        targs["per_sample_weights"], margs["per_sample_weights"] = tp, mp
    want = TF.embedding_bag(ti, tlib_w, **targs, **kw)
    got = F.embedding_bag(mi, mlib_w, **margs, **kw)
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype) == dtype
    rtol = 1e-10 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=rtol, atol=rtol)
    g = RNG.standard_normal(tuple(want.shape))
    want.backward(torch.tensor(g, dtype=tdtype))
    got.backward(mt.tensor(g, dtype=dtype, backend=backend))
    np.testing.assert_allclose(grad_of(mw), grad_of(tw), rtol=rtol, atol=rtol)
    if psw:
        np.testing.assert_allclose(grad_of(mp), grad_of(tp), rtol=rtol, atol=rtol)
    return got


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("mode", MODES)
def test_embedding_bag_matches_torch(backend, mode):
    compare(backend, IDX2, mode=mode)
    compare(backend, IDX1, OFFSETS, mode=mode)  # empty bags give zeros
    compare(backend, IDX1, OFFSETS, mode=mode, include_last_offset=True)  # 4 bags, the last offset ends the last
    compare(backend, IDX1, OFFSETS, mode=mode, padding_idx=2)  # bag [2, 2, 5] keeps only 5; padding counts nowhere
    compare(backend, IDX2, mode=mode, padding_idx=-1)  # padding 5: bag [2, 2, 5]
    compare(backend, IDX2, mode=mode, padding_idx=2)  # bag [2, 2, 5] -> 5 only; ...
    compare(backend, np.array([[2, 2], [0, 2]]), mode=mode, padding_idx=2)  # a bag of padding only: zeros
    compare(backend, IDX2, mode=mode, dtype="float32")
    compare(backend, IDX1, OFFSETS, mode=mode, strided=True)
    compare(backend, IDX2, mode=mode, strided=True, padding_idx=4)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_embedding_bag_per_sample_weights(backend):
    compare(backend, IDX2, mode="sum", psw=True)
    compare(backend, IDX1, OFFSETS, mode="sum", psw=True, padding_idx=1)  # padding positions: no gradient either
    compare(backend, IDX1, OFFSETS, mode="sum", psw=True, include_last_offset=True, dtype="float32")
    compare(backend, IDX1, OFFSETS, mode="sum", psw=True, strided=True)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_embedding_bag_max_ties(backend):
    """Tied maxima: torch's kernel keeps the first position holding the max (a later equal value does not replace
    it), and that position alone gets the gradient."""
    w = np.array([[1.0, 5.0], [3.0, 5.0], [3.0, 0.0], [3.0, 5.0], [-1.0, -2.0]])
    idx = np.array([[0, 1, 2, 3], [3, 2, 1, 0], [2, 2, 1, 1], [4, 4, 4, 4]])
    compare(backend, idx, mode="max", weights=w)
    compare(backend, idx, mode="max", weights=w, padding_idx=1)
    compare(backend, idx.reshape(-1), np.array([0, 1, 1, 6, 11]), mode="max", weights=w)
    compare(backend, idx, mode="max", weights=w, dtype="float32")
    got = F.embedding_bag(mt.tensor(idx[:1]), mt.tensor(w), mode="max").numpy()
    np.testing.assert_array_equal(got, [[3.0, 5.0]])


def test_embedding_bag_empty_inputs():
    for mode in MODES:
        compare("fast", np.zeros(0, dtype=np.int64), np.array([0, 0]), mode=mode)  # two empty bags
        compare("fast", np.zeros((0, 3), dtype=np.int64), mode=mode)  # no bags
        compare("fast", np.array([3], dtype=np.int32), np.array([0, 0, 1], dtype=np.int32), mode=mode)  # int32
        compare("fast", np.array([3, 1], dtype=np.int32), np.array([0, 1]), mode=mode)  # mixed int widths
        # no offsets: no bags (torch crashes on this one)
        none = F.embedding_bag(mt.tensor([3]), mt.zeros(6, 3), mt.tensor(np.zeros(0, dtype=np.int64)), mode=mode)
        assert none.shape == (0, 3)
        # (B, 0) input: B empty bags of zeros (torch fails there building its offsets with step 0)
        w = mt.tensor(RNG.standard_normal((6, 3)), requires_grad=True)
        out = F.embedding_bag(mt.tensor(np.zeros((2, 0), dtype=np.int64)), w, mode=mode)
        assert out.shape == (2, 3) and not out.numpy().any()
    compare("fast", np.zeros(0, dtype=np.int64), np.array([0, 0]), mode="sum", psw=True)


def test_embedding_bag_module_matches_torch():
    theirs = torch.nn.EmbeddingBag(6, 4, mode="max", padding_idx=-1).double()
    mine = nn.EmbeddingBag(6, 4, mode="max", padding_idx=-1, dtype=mt.float64)
    assert repr(mine) == repr(theirs) == "EmbeddingBag(6, 4, mode='max', padding_idx=5)"
    assert repr(nn.EmbeddingBag(3, 2)) == repr(torch.nn.EmbeddingBag(3, 2)) == "EmbeddingBag(3, 2, mode='mean')"
    assert repr(nn.EmbeddingBag(3, 2, norm_type=1.0)) == repr(torch.nn.EmbeddingBag(3, 2, norm_type=1.0))
    assert list(mine.state_dict()) == list(theirs.state_dict()) == ["weight"]
    assert mine.weight.shape == (6, 4) and np.all(mine.weight.numpy()[5] == 0) and np.any(mine.weight.numpy()[:5] != 0)
    assert abs(nn.EmbeddingBag(200, 50).weight.numpy().std() - 1) < 0.1  # N(0, 1)
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    idx, off = np.array([5, 2, 2, 1, 5, 0, 3]), np.array([0, 3, 3])
    want, got = theirs(torch.tensor(idx), torch.tensor(off)), mine(mt.tensor(idx), mt.tensor(off))
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-12)
    (want * torch.arange(12.0, dtype=torch.float64).view(3, 4)).sum().backward()
    (got * mt.arange(12.0, dtype=mt.float64).view(3, 4)).sum().backward()
    np.testing.assert_allclose(mine.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12)
    assert not mine.weight.grad.numpy()[5].any()  # the padding row never gets a gradient
    summed = nn.EmbeddingBag(6, 4, mode="sum", include_last_offset=True)
    psw = mt.tensor([0.5, 2.0, -1.0])
    out = summed(mt.tensor([1, 2, 3]), mt.tensor([0, 1, 3]), per_sample_weights=psw)
    w = summed.weight.numpy()
    np.testing.assert_allclose(out.numpy(), [0.5 * w[1], 2.0 * w[2] - w[3]], rtol=1e-6)


def test_embedding_bag_from_pretrained():
    w = mt.tensor(RNG.standard_normal((4, 2)))
    bag = nn.EmbeddingBag.from_pretrained(w)
    theirs = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w.numpy()))
    assert not bag.weight.requires_grad and bag.num_embeddings == 4 and bag.embedding_dim == 2 and bag.mode == "mean"
    assert repr(bag) == repr(theirs)
    idx = np.array([[3, 0], [1, 1]])
    np.testing.assert_allclose(bag(mt.tensor(idx)).numpy(), theirs(torch.tensor(idx)).numpy(), rtol=1e-12)
    trainable = nn.EmbeddingBag.from_pretrained(w, freeze=False, mode="sum", padding_idx=1, include_last_offset=True)
    assert trainable.weight.requires_grad and trainable.padding_idx == 1 and trainable.include_last_offset
    np.testing.assert_array_equal(trainable.weight.numpy(), w.numpy())  # from_pretrained keeps the padding row
    trainable(mt.tensor([0, 1, 3]), mt.tensor([0, 2, 3])).sum().backward()
    np.testing.assert_array_equal(trainable.weight.grad.numpy(), [[1, 1], [0, 0], [0, 0], [1, 1]])
    with pytest.raises(mt.ShapeError):
        nn.EmbeddingBag.from_pretrained(mt.zeros(4))


def test_embedding_bag_errors():
    w, idx = mt.zeros(5, 3), mt.tensor([0, 1, 2, 3])
    off = mt.tensor([0, 2])
    with pytest.raises(mt.DTypeError, match="int64 or int32"):
        F.embedding_bag(mt.tensor([[1.0, 2.0]]), w)
    with pytest.raises(mt.DTypeError, match="offsets must be an int64 or int32"):
        F.embedding_bag(idx, w, mt.tensor([0.0, 2.0]))
    with pytest.raises(mt.IndexOutOfRangeError, match="index 5 is out of range for 5"):
        F.embedding_bag(mt.tensor([0, 5]), w, off)
    with pytest.raises(IndexError, match="index -1"):
        F.embedding_bag(mt.tensor([[-1, 2]]), w)
    with pytest.raises(ValueError, match=r"offsets\[0\] has to be 0.*got 1"):
        F.embedding_bag(idx, w, mt.tensor([1, 2]))
    with pytest.raises(ValueError, match=r"non-decreasing, got offsets\[1\] = 3 > offsets\[2\] = 2"):
        F.embedding_bag(idx, w, mt.tensor([0, 3, 2]))
    with pytest.raises(ValueError, match=r"offsets\[-1\] can not be greater than input's length 4 but got offsets\[-1\] of 5"):
        F.embedding_bag(idx, w, mt.tensor([0, 5]))
    with pytest.raises(ValueError, match="include_last_offset=True .* must equal input's length 4, got offsets"):
        F.embedding_bag(idx, w, mt.tensor([0, 2, 3]), include_last_offset=True)
    with pytest.raises(ValueError, match="at least one offset"):
        F.embedding_bag(idx, w, mt.tensor(np.zeros(0, dtype=np.int64)), include_last_offset=True)
    with pytest.raises(mt.ShapeError, match=r"per_sample_weights \(\(3,\)\) .* same shape as the input \(\(4,\)\)"):
        F.embedding_bag(idx, w, off, mode="sum", per_sample_weights=mt.ones(3))
    with pytest.raises(NotImplementedError, match="only supported for mode='sum' \\(got mode='mean'\\)"):
        F.embedding_bag(idx, w, off, per_sample_weights=mt.ones(4))
    with pytest.raises(mt.DTypeError, match="per_sample_weights dtype float64 differs from weight dtype float32"):
        F.embedding_bag(idx, w, off, mode="sum", per_sample_weights=mt.ones(4, dtype=mt.float64))
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(idx.view(2, 2), w, off)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(idx, w)
    with pytest.raises(mt.ShapeError, match="offsets has to be a 1D Tensor"):
        F.embedding_bag(idx, w, off.view(1, 2))
    with pytest.raises(mt.ShapeError, match="input has to be 1D or 2D"):
        F.embedding_bag(idx.view(1, 2, 2), w)
    with pytest.raises(mt.ShapeError, match="weight has to be a 2D Tensor"):
        F.embedding_bag(idx, mt.zeros(5), off)
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(idx, w, off, mode="min")
    with pytest.raises(ValueError, match="max mode does not support scaling"):
        F.embedding_bag(idx, w, off, mode="max", scale_grad_by_freq=True)
    with pytest.raises(ValueError, match="padding_idx"):
        F.embedding_bag(idx, w, off, padding_idx=5)
    for kw in ({"max_norm": 1.0}, {"scale_grad_by_freq": True}, {"sparse": True}):
        with pytest.raises(NotImplementedError):
            F.embedding_bag(idx, w, off, **kw)
        with pytest.raises(NotImplementedError):
            nn.EmbeddingBag(5, 3, **kw)
    with pytest.raises(ValueError, match="mode has to be one of"):
        nn.EmbeddingBag(5, 3, mode="min")
    with pytest.raises(TypeError, match="argument 'input' must be Tensor, not list"):
        F.embedding_bag([0, 1], w, off)


@pytest.mark.parametrize("backend", BACKENDS)
def test_embedding_bag_every_backend(backend):
    compare(backend, np.array([1, 0, 2, 2]), np.array([0, 2, 2]), mode="max", padding_idx=0)
    compare(backend, np.array([[1, 0], [2, 2]]), mode="sum", psw=True)
