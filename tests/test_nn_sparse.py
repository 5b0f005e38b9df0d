"""F.embedding and nn.Embedding against PyTorch: lookups, weight gradients, padding_idx, from_pretrained, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.nn import functional as F

TF = torch.nn.functional
RNG = np.random.default_rng(3)
IDX = np.array([[1, 4, 1], [0, 3, 1]])  # index 1 repeats: its gradient rows accumulate


def compare(kw, backend, idx=IDX, dtype="float64", rtol=1e-10):
    w = RNG.standard_normal((5, 3))
    tdtype = torch.float64 if dtype == "float64" else torch.float32
    tw = torch.tensor(w, dtype=tdtype, requires_grad=True)
    mw = mt.tensor(w, dtype=dtype, backend=backend, requires_grad=True)
    want = TF.embedding(torch.tensor(idx), tw, **kw)
    got = F.embedding(mt.tensor(idx, backend=backend), mw, **kw)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=rtol)
    g = RNG.standard_normal(tuple(want.shape))
    want.backward(torch.tensor(g, dtype=tdtype))
    got.backward(mt.tensor(g, dtype=dtype, backend=backend))
    np.testing.assert_allclose(mw.grad.numpy(), tw.grad.numpy(), rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("kw", [{}, {"padding_idx": 1}, {"padding_idx": -2}, {"scale_grad_by_freq": True},
                                {"padding_idx": 0, "scale_grad_by_freq": True}])
def test_embedding_matches_torch(backend, kw):
    compare(kw, backend)


def test_embedding_index_shapes_and_dtypes():
    compare({}, "fast", idx=np.array(2))  # 0-d index -> (D,)
    compare({}, "fast", idx=np.array([[[3]], [[0]]], dtype=np.int32))
    compare({"padding_idx": 3}, "fast", dtype="float32", rtol=1e-6)


def test_embedding_module_matches_torch():
    theirs = torch.nn.Embedding(6, 4, padding_idx=-1).double()
    mine = nn.Embedding(6, 4, padding_idx=-1, dtype=mt.float64)
    assert repr(mine) == repr(theirs) == "Embedding(6, 4, padding_idx=5)"
    assert np.all(mine.weight.numpy()[5] == 0) and np.any(mine.weight.numpy()[:5] != 0)
    assert [n for n, _ in mine.named_parameters()] == ["weight"]
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    idx = np.array([[5, 2, 2], [1, 5, 0]])
    want, got = theirs(torch.tensor(idx)), mine(mt.tensor(idx))
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-12)
    (want * torch.arange(24.0, dtype=torch.float64).view(2, 3, 4)).sum().backward()
    (got * mt.arange(24.0, dtype=mt.float64).view(2, 3, 4)).sum().backward()
    np.testing.assert_allclose(mine.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12)
    assert np.all(mine.weight.grad.numpy()[5] == 0)  # the padding row never gets a gradient
    assert repr(nn.Embedding(3, 2, scale_grad_by_freq=True)) == repr(torch.nn.Embedding(3, 2, scale_grad_by_freq=True))


def test_embedding_from_pretrained():
    w = mt.tensor(RNG.standard_normal((4, 2)))
    emb = nn.Embedding.from_pretrained(w)
    assert not emb.weight.requires_grad and emb.num_embeddings == 4 and emb.embedding_dim == 2
    np.testing.assert_array_equal(emb(mt.tensor([3, 0])).numpy(), w.numpy()[[3, 0]])
    trainable = nn.Embedding.from_pretrained(w, freeze=False, padding_idx=1)
    assert trainable.weight.requires_grad and trainable.padding_idx == 1
    np.testing.assert_array_equal(trainable.weight.numpy(), w.numpy())  # from_pretrained keeps the padding row
    with pytest.raises(mt.ShapeError):
        nn.Embedding.from_pretrained(mt.zeros(4))


def test_embedding_errors():
    emb = nn.Embedding(5, 3)
    with pytest.raises(mt.DTypeError, match="int64 or int32"):
        emb(mt.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        emb([1, 2])
    with pytest.raises(IndexError, match="index 5 is out of range"):
        emb(mt.tensor([[0, 5]]))
    with pytest.raises(IndexError, match="index -1"):
        emb(mt.tensor([-1, 2]))
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(5, 3, padding_idx=5)
    with pytest.raises(NotImplementedError):
        nn.Embedding(5, 3, max_norm=1.0)
    with pytest.raises(NotImplementedError):
        F.embedding(mt.tensor([0]), emb.weight, sparse=True)
    assert emb(mt.tensor(np.zeros((0, 2), dtype=np.int64))).shape == (0, 2, 3)


def test_cuda_embedding():
    if "cuda" not in mt.backend_names():
        pytest.skip("no cuda backend")
    compare({"padding_idx": 1}, "cuda", idx=np.array([[1, 2], [0, 1]]))
