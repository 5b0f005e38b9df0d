"""Trainer: fit/evaluate over re-iterable batches of NumPy arrays or Tensors."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn, optim
from minitensor.train import Trainer, accuracy


def _data(n=24, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 2))
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
    return [(x[i : i + 8], y[i : i + 8]) for i in range(0, n, 8)]


def test_fit_and_evaluate(backend):
    mt.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 8, backend=backend), nn.Tanh(), nn.Linear(8, 2, backend=backend))
    trainer = Trainer(model, nn.cross_entropy, optim.Adam(model.parameters(), lr=0.05))
    epochs, n = (1, 8) if backend == "cuda" else (12, 24)  # the CUDA simulator is very slow
    history = trainer.fit(_data(n), epochs=epochs, val_batches=_data(8, seed=1), progress=False)
    assert set(history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert all(len(v) == epochs for v in history.values())
    if backend != "cuda":
        assert history["loss"][-1] < history["loss"][0]
        assert history["accuracy"][-1] >= 0.8
    result = trainer.evaluate(_data(8, seed=1))
    assert result["loss"] == pytest.approx(history["val_loss"][-1]) and model.training


def test_tensor_batches_custom_metric_scheduler_and_progress(capsys):
    model = nn.Linear(2, 1)
    opt = optim.SGD(model.parameters(), lr=0.1)
    sched = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    x = np.random.default_rng(0).standard_normal((8, 2))
    batches = [(mt.tensor(x), x @ np.array([[1.0], [2.0]]))]
    mae = ("mae", lambda out, target: float(np.mean(np.abs(out - target))))
    trainer = Trainer(model, nn.mse_loss, opt, metrics=[mae], scheduler=sched)
    history = trainer.fit(batches, epochs=2, progress=True)
    assert set(history) == {"loss", "mae"} and opt.param_groups[0]["lr"] == pytest.approx(0.025)
    assert "epoch" in capsys.readouterr().err  # tqdm writes to stderr
    with pytest.raises(ValueError, match="unknown metric"):
        Trainer(model, nn.mse_loss, opt, metrics=["f1"])
    with pytest.raises(ValueError, match="no batches"):
        trainer.evaluate([])


def test_accuracy_metric():
    assert accuracy(np.array([[0.1, 0.9], [0.8, 0.2]]), np.array([1, 1])) == 0.5
    assert accuracy(np.array([[0.7], [-0.2]]), np.array([1, 0])) == 1.0  # one output is a logit: > 0 is class 1
    assert accuracy(np.array([[0.2], [-3.0]]), np.array([0, 0])) == 0.5  # 0.2 > 0: a probability threshold would say 0


def test_progress_bar_is_sparse_when_not_on_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    import time

    from minitensor.train import progress_bar

    bar = progress_bar(range(100), total=100, desc="steps")
    for step in bar:
        time.sleep(0.005)  # 0.5 s: a terminal bar would redraw about five times
        bar.set_postfix(loss=f"{1 / (step + 1):.3f}")  # tqdm's own set_postfix would redraw on each of these
    err = capsys.readouterr().err  # captured: not a terminal
    assert 1 <= err.count("steps") <= 3, err
