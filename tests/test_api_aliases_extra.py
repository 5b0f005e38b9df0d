"""The top-level forms of nn.functional ops added to functional_aliases.py (``constant_pad_nd max_pool3d
max_pool1d_with_indices rms_norm``, the losses with torch's integer ``reduction`` and the recurrent cell steps
``rnn_tanh_cell rnn_relu_cell lstm_cell gru_cell``) against torch 2.13: values and gradients (signatures are checked
with the other aliases in test_api_aliases.py)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import CPU_BACKENDS
from torch_oracle import check

import minitensor as mt

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(660)


def arr(*shape: int, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    return RNG.uniform(low, high, shape)


SIGNS = np.array([1.0, -1.0, 1.0])
H = 4
CASES = {
    "constant_pad_nd": (lambda L, x: (L.constant_pad_nd(x, (1, 2)), L.constant_pad_nd(x, [0, 1, 2, 0], 3.5),
                                      L.constant_pad_nd(x, (-1, 1))), arr(2, 3)),
    "max_pool3d": (lambda L, x: (L.max_pool3d(x, 2), L.max_pool3d(x, (1, 2, 2), (1, 1, 2), (0, 1, 0))), arr(1, 2, 3, 4, 4)),
    "max_pool1d_with_indices": (lambda L, x: L.max_pool1d_with_indices(x, 3, 2, 1), arr(2, 3, 7)),
    "rms_norm": (lambda L, x, w: (L.rms_norm(x, (4,), w, 1e-5), L.rms_norm(x, [3, 4])), arr(2, 3, 4), arr(4)),
    "cosine_embedding_loss": (lambda L, a, b, t: (L.cosine_embedding_loss(a, b, t), L.cosine_embedding_loss(a, b, t, 0.3, 1),
                                                  L.cosine_embedding_loss(a, b, t, reduction=2)), arr(3, 4), arr(3, 4), SIGNS),
    "hinge_embedding_loss": (lambda L, x, t: (L.hinge_embedding_loss(x, t), L.hinge_embedding_loss(x, t, 0.5, 1)),
                             arr(3, 4), np.array([[1.0, -1.0, 1.0, -1.0]] * 3)),
    "margin_ranking_loss": (lambda L, a, b, t: (L.margin_ranking_loss(a, b, t), L.margin_ranking_loss(a, b, t, 0.2, 2)),
                            arr(3), arr(3), SIGNS),
    "triplet_margin_loss": (lambda L, a, p, n: (L.triplet_margin_loss(a, p, n), L.triplet_margin_loss(a, p, n, 0.5, 1.0,
                                                1e-6, True, 1)), arr(3, 4), arr(3, 4), arr(3, 4)),
    "poisson_nll_loss": (lambda L, x, t: (L.poisson_nll_loss(x, t, True, False, 1e-8, 0),
                                          L.poisson_nll_loss(x.abs() + 0.1, t, False, True, 1e-8, 1)),
                         arr(3, 4), arr(3, 4, low=0.0, high=3.0)),
    "rnn_tanh_cell": (lambda L, x, h, wi, wh, bi, bh: (L.rnn_tanh_cell(x, h, wi, wh, bi, bh), L.rnn_tanh_cell(x, h, wi, wh)),
                      arr(2, 3), arr(2, H), arr(H, 3), arr(H, H), arr(H), arr(H)),
    "rnn_relu_cell": (lambda L, x, h, wi, wh, bi, bh: L.rnn_relu_cell(x, h, wi, wh, bi, bh),
                      arr(2, 3), arr(2, H), arr(H, 3), arr(H, H), arr(H), arr(H)),
    "lstm_cell": (lambda L, x, h, c, wi, wh, bi, bh: (L.lstm_cell(x, (h, c), wi, wh, bi, bh), L.lstm_cell(x, [h, c], wi, wh)),
                  arr(2, 3), arr(2, H), arr(2, H), arr(4 * H, 3), arr(4 * H, H), arr(4 * H), arr(4 * H)),
    "gru_cell": (lambda L, x, h, wi, wh, bi, bh: (L.gru_cell(x, h, wi, wh, bi, bh), L.gru_cell(x, h, wi, wh, None, bh)),
                 arr(2, 3), arr(2, H), arr(3 * H, 3), arr(3 * H, H), arr(3 * H), arr(3 * H)),
}  # fmt: skip


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_alias_matches_torch(backend: str, name: str) -> None:
    fn, *arrays = CASES[name]
    check(backend, fn, *arrays, rtol=1e-9, atol=1e-12)


def test_cells_match_the_nn_modules() -> None:
    cell = mt.nn.GRUCell(3, H, dtype="float64")
    x, h = mt.tensor(arr(2, 3)), mt.tensor(arr(2, H))
    want = cell(x, h)
    got = mt.gru_cell(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match=r"\(h, c\)"):
        mt.lstm_cell(x, (h,), mt.zeros(4 * H, 3, dtype="float64"), mt.zeros(4 * H, H, dtype="float64"))


def test_aliases_on_every_backend(backend: str) -> None:
    check(backend, lambda L, x, h, wi, wh: (L.gru_cell(x, h, wi, wh), L.constant_pad_nd(x, (1, 1))),
          arr(1, 2), arr(1, 2), arr(6, 2), arr(6, 2), rtol=1e-9, atol=1e-12)
