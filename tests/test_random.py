"""mt.multinomial against the exact sampling probabilities, and its errors against torch's."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import minitensor as mt
from minitensor.errors import DTypeError, ShapeError

WEIGHTS = [0.1, 0.0, 0.6, 0.3]


def frequencies(samples: np.ndarray, categories: int) -> np.ndarray:
    return np.bincount(samples.ravel(), minlength=categories) / samples.size


@pytest.mark.parametrize("backend", ["simple", "fast"])
def test_with_replacement_matches_probabilities(backend):
    mt.manual_seed(0)
    weights = mt.tensor([WEIGHTS, [1.0, 1.0, 0.0, 2.0]], dtype=mt.float64, backend=backend) * 5  # unnormalised
    samples = mt.multinomial(weights, 20000, replacement=True)
    assert samples.shape == (2, 20000) and samples.dtype == mt.int64 and samples.backend.name == backend
    values = samples.to_numpy()
    for row, w in enumerate(weights.to_numpy()):
        p = w / w.sum()
        sigma = np.sqrt(p * (1 - p) / values.shape[1])
        assert np.all(np.abs(frequencies(values[row], 4) - p) <= 5 * sigma + 1e-12)


def test_without_replacement_matches_sequential_probabilities():
    """P(first = i, second = j) = p_i p_j / (1 - p_i): compare every ordered pair over many draws."""
    mt.manual_seed(1)
    p = np.array(WEIGHTS)
    rows = 20000
    weights = mt.tensor(np.tile(p, (rows, 1)), dtype=mt.float32)
    pairs = mt.multinomial(weights, 2).to_numpy()
    assert pairs.shape == (rows, 2)
    assert np.all(pairs[:, 0] != pairs[:, 1]) and not np.any(pairs == 1)  # distinct, zero weight never drawn
    for i, j in itertools.permutations(range(4), 2):
        expected = p[i] * p[j] / (1 - p[i])
        seen = np.mean((pairs[:, 0] == i) & (pairs[:, 1] == j))
        assert abs(seen - expected) <= 5 * np.sqrt(expected * (1 - expected) / rows) + 1e-12, (i, j)


def test_all_categories_without_replacement_is_a_permutation_and_seeded():
    mt.manual_seed(3)
    first = mt.multinomial(mt.ones(6), 6).to_numpy()
    mt.manual_seed(3)
    second = mt.multinomial(mt.ones(6), 6).to_numpy()
    assert sorted(first.tolist()) == list(range(6))
    np.testing.assert_array_equal(first, second)
    mine = np.random.default_rng(5)
    again = np.random.default_rng(5)
    np.testing.assert_array_equal(mt.multinomial(mt.ones(6), 3, generator=mine).to_numpy(),
                                  mt.multinomial(mt.ones(6), 3, generator=again).to_numpy())


@pytest.mark.parametrize("weights, num_samples, replacement, error", [
    ([0.0, 0.0], 1, True, ValueError),            # sum <= 0
    ([1.0, -1.0, 3.0], 1, True, ValueError),      # negative
    ([1.0, float("inf")], 1, True, ValueError),   # inf
    ([1.0, float("nan")], 1, True, ValueError),   # nan
    ([1.0, 2.0], 3, False, ValueError),           # more samples than categories
    ([[[1.0]]], 1, True, ShapeError),             # 3-D
    ([1.0, 2.0], 0, True, ValueError),            # no samples
])
def test_bad_input_is_refused_like_torch(weights, num_samples, replacement, error):
    with pytest.raises(RuntimeError):
        torch.multinomial(torch.tensor(weights), num_samples, replacement)
    with pytest.raises(error):
        mt.multinomial(mt.tensor(weights), num_samples, replacement)


def test_type_errors():
    with pytest.raises(DTypeError, match="int64"):
        mt.multinomial(mt.tensor([1, 2]), 1)
    with pytest.raises(TypeError, match="Tensor"):
        mt.multinomial([0.5, 0.5], 1)
    with pytest.raises(TypeError, match="num_samples"):
        mt.multinomial(mt.ones(2), 1.5)


def test_too_few_nonzero_categories_raise_where_torch_draws_a_zero_weight():
    """A deliberate difference (README): torch returns a category of probability 0 once the others run out."""
    drawn = torch.multinomial(torch.tensor([1.0, 0.0, 0.0]), 2).tolist()
    assert drawn[0] == 0 and drawn[1] in (1, 2)
    with pytest.raises(ValueError, match="non-zero categories"):
        mt.multinomial(mt.tensor([1.0, 0.0, 0.0]), 2)
