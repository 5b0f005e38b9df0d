"""Scalar autodiff against central differences, gradient accumulation, and deep graphs."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitensor import GradientError, Scalar, no_grad

values = st.floats(-3, 3, allow_nan=False)

ONE_ARG: dict[str, Callable] = {
    "add_const": lambda x: x + 2.5,
    "rsub": lambda x: 1.5 - x,
    "mul": lambda x: 3.0 * x,
    "div": lambda x: x / 4.0,
    "neg": lambda x: -x,
    "exp": lambda x: x.exp() if isinstance(x, Scalar) else math.exp(x),
    "sigmoid": lambda x: x.sigmoid() if isinstance(x, Scalar) else 1 / (1 + math.exp(-x)),
    "tanh": lambda x: x.tanh() if isinstance(x, Scalar) else math.tanh(x),
    "square": lambda x: x * x,
    "log_sq": lambda x: (x * x + 1.0).log() if isinstance(x, Scalar) else math.log(x * x + 1.0),
    "rdiv": lambda x: 2.0 / (x * x + 1.0),
    "relu": lambda x: x.relu() if isinstance(x, Scalar) else max(x, 0.0),
    "abs": lambda x: abs(x),
}


@pytest.mark.parametrize("name", sorted(ONE_ARG))
@given(x=values)
def test_one_arg_derivatives(name: str, x: float) -> None:
    f = ONE_ARG[name]
    if name in ("relu", "abs") and abs(x) < 1e-3:
        return
    s = Scalar(x)
    out = f(s)
    assert math.isclose(out.data, f(x), rel_tol=1e-12, abs_tol=1e-12)
    out.backward()
    numeric = (f(x + 1e-6) - f(x - 1e-6)) / 2e-6
    assert math.isclose(s.grad, numeric, rel_tol=1e-5, abs_tol=1e-6)


@given(values, values)
def test_two_arg_derivatives(x: float, y: float) -> None:
    def f(a, b):
        return a * b + (a - b) * a / (b * b + 1.0) + a.max(b) if isinstance(a, Scalar) else a * b + (a - b) * a / (b * b + 1.0) + max(a, b)

    if abs(x - y) < 1e-3:
        return
    a, b = Scalar(x), Scalar(y)
    f(a, b).backward()
    da = (f(x + 1e-6, y) - f(x - 1e-6, y)) / 2e-6
    db = (f(x, y + 1e-6) - f(x, y - 1e-6)) / 2e-6
    assert math.isclose(a.grad, da, rel_tol=1e-5, abs_tol=1e-6)
    assert math.isclose(b.grad, db, rel_tol=1e-5, abs_tol=1e-6)


def test_comparisons_return_scalars_without_gradient() -> None:
    a, b = Scalar(1.0), Scalar(2.0)
    assert (a < b).data == 1.0 and (a > b).data == 0.0 and (a == a).data == 1.0
    assert a.min(b).data == 1.0 and a.max(b).data == 2.0


def test_gradient_accumulates_when_a_value_is_reused() -> None:
    x = Scalar(3.0)
    y = x * x + x  # dy/dx = 2x + 1 = 7
    y.backward()
    assert x.grad == 7.0
    y.backward()  # a second backward adds, like PyTorch
    assert x.grad == 14.0


def test_diamond_graph() -> None:
    x = Scalar(2.0)
    a = x * 3.0
    b = x.exp()
    out = a * b + a + b  # d/dx = 3e^x + 3x e^x + 3 + e^x
    out.backward()
    assert math.isclose(x.grad, 3 * math.exp(2) + 6 * math.exp(2) + 3 + math.exp(2), rel_tol=1e-12)


def test_no_grad_records_nothing() -> None:
    x = Scalar(1.0)
    with no_grad():
        y = x * 2.0
    assert y.history is None
    with pytest.raises(GradientError):
        y.backward()


def _chain(x: Scalar, n: int) -> Scalar:
    y = x
    for _ in range(n):
        y = y * 1.0 + 0.0
    return y


def test_chain_of_100000_operations_backpropagates_in_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """200,000 Functions deep: no RecursionError, one topological sort, and each node's backward runs exactly once
    (counted, not timed: linear work whatever the machine's load)."""
    from minitensor import autodiff, backward

    sorts: list[int] = []
    real_sort = backward.topological_sort
    monkeypatch.setattr(backward, "topological_sort", lambda *roots: sorts.append(1) or real_sort(*roots))
    steps: list[int] = []
    real_rule = autodiff.Function.chain_rule.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(autodiff.Function, "chain_rule", classmethod(lambda cls, *a: steps.append(1) or real_rule(cls, *a)))
    x = Scalar(0.5)
    _chain(x, 100_000).backward()
    assert x.grad == 1.0
    assert len(sorts) == 1 and len(steps) == 200_000
