"""nn.functional odds and ends; conv/pad: tests/test_nn_conv.py, pooling: tests/test_nn_pooling.py, embedding:
tests/test_nn_sparse.py, activations/norms/losses in their own files."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.nn import functional as F

RNG = np.random.default_rng(0)


# softmax family, dropout and activations: tests/test_nn_activation.py and tests/test_nn_norm.py (against torch)


def test_flatten(backend):
    t = mt.tensor(np.arange(24.0).reshape(2, 3, 4), backend=backend)
    assert mt.nn.Flatten()(t).shape == (2, 12)
    assert mt.nn.Flatten(0)(t).shape == (24,)
    expected = np.arange(24.0).reshape(2, 3, 4).transpose(0, 2, 1).reshape(2, 12)
    np.testing.assert_array_equal(mt.nn.Flatten()(t.permute(0, 2, 1)).to_numpy(), expected)
    assert mt.nn.Unflatten(1, (3, 4))(mt.nn.Flatten()(t)).shape == (2, 3, 4)


def test_cross_entropy_against_torch():
    torch = pytest.importorskip("torch")
    logits, target = RNG.standard_normal((4, 5)) * 10, np.array([0, 4, 2, 2])
    expected = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(target)).item()
    assert F.cross_entropy(mt.tensor(logits), target).item() == pytest.approx(expected, rel=1e-10)
