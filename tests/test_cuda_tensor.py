"""Tensors on the cuda backend stay in device memory through a chain of ops and through backward."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.errors import BackendUnavailableError

try:
    CUDA = mt.get_backend("cuda")
except BackendUnavailableError as error:  # no GPU and no simulator
    pytest.skip(str(error), allow_module_level=True)

from minitensor.backends import cuda as cuda_module  # noqa: E402


def test_chain_and_backward_stay_on_device(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    x_np, w_np = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    x = mt.tensor(x_np, backend="cuda", requires_grad=True)
    w = mt.tensor(w_np, backend="cuda", requires_grad=True)

    def no_download(data: object) -> None:
        raise AssertionError("device data was copied to the host in the middle of the computation")

    monkeypatch.setattr(CUDA, "to_numpy", no_download)
    h = (x @ w).relu() + x.sum(1, keepdim=True).exp()
    loss = (h * h).mean()
    loss.backward()
    for t in (h, loss, x.grad, w.grad):
        assert cuda_module.is_device_array(t._data.storage)
    monkeypatch.undo()

    hn = np.maximum(x_np @ w_np, 0) + np.exp(x_np.sum(1, keepdims=True))
    np.testing.assert_allclose(loss.item(), (hn * hn).mean(), rtol=1e-12)
    grad_h = 2 * hn / hn.size
    grad_w = x_np.T @ (grad_h * (x_np @ w_np > 0))
    np.testing.assert_allclose(w.grad.to_numpy(), grad_w, rtol=1e-10)
