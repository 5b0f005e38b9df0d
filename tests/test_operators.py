"""Scalar math primitives against Python's math module and their calculus."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitensor import operators as ops

finite = st.floats(-1e3, 1e3, allow_nan=False)
small = st.floats(-20, 20, allow_nan=False)


@given(finite, finite)
def test_arithmetic(x: float, y: float) -> None:
    assert ops.add(x, y) == x + y
    assert ops.mul(x, y) == x * y
    assert ops.sub(x, y) == x - y
    assert ops.neg(x) == -x
    assert ops.max(x, y) == max(x, y)
    assert ops.min(x, y) == min(x, y)
    assert ops.lt(x, y) == (1.0 if x < y else 0.0)
    assert ops.eq(x, x) == 1.0
    assert ops.is_close(x, x + 1e-3) == 1.0


@given(finite)
def test_sigmoid_is_stable_and_symmetric(x: float) -> None:
    s = ops.sigmoid(x)
    assert 0.0 <= s <= 1.0
    assert math.isclose(s, 1.0 - ops.sigmoid(-x), abs_tol=1e-12)
    assert math.isclose(s, 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0, rel_tol=1e-9, abs_tol=1e-300)


def test_sigmoid_extremes_do_not_overflow() -> None:
    assert ops.sigmoid(1e6) == 1.0
    assert ops.sigmoid(-1e6) == 0.0


def test_ieee_edge_cases() -> None:
    assert ops.div(1.0, 0.0) == math.inf
    assert ops.div(-1.0, 0.0) == -math.inf
    assert math.isnan(ops.div(0.0, 0.0))
    assert ops.log(0.0) == -math.inf
    assert math.isnan(ops.log(-1.0))
    assert ops.exp(1000.0) == math.inf
    assert math.isnan(ops.max(math.nan, 1.0))


@pytest.mark.parametrize(
    "f, back",
    [(ops.log, ops.log_back), (ops.inv, ops.inv_back), (ops.sigmoid, ops.sigmoid_back), (ops.exp, ops.exp_back),
     (ops.tanh, ops.tanh_back), (ops.relu, ops.relu_back), (ops.abs, ops.abs_back), (ops.sqrt, ops.sqrt_back)],
)
@given(x=st.floats(0.1, 5.0), d=st.floats(-3, 3))
def test_backward_helpers_match_central_differences(f, back, x: float, d: float) -> None:
    for point in (x, -x) if f not in (ops.log, ops.sqrt) else (x,):
        numeric = d * (f(point + 1e-6) - f(point - 1e-6)) / 2e-6
        assert math.isclose(back(point, d), numeric, rel_tol=1e-4, abs_tol=1e-6)


@given(st.lists(small, max_size=10))
def test_list_helpers(xs: list[float]) -> None:
    assert ops.map_list(ops.neg, xs) == [-x for x in xs]
    assert ops.zip_with(ops.add, xs, xs) == [2 * x for x in xs]
    assert math.isclose(ops.reduce_list(ops.add, 0.0, xs), math.fsum(xs), abs_tol=1e-9)


def test_pow_overflows_to_inf_like_ieee() -> None:
    """Python's ** raises OverflowError; the reference op must give what NumPy (and the kernels) give."""
    cases = [(10.0, 400.0), (-10.0, 401.0), (-10.0, 400.0), (0.5, -2000.0), (10.0, 300.0), (2.0, 0.5), (-8.0, 3.0)]
    with np.errstate(over="ignore"):
        for x, y in cases:
            assert ops.pow(x, y) == np.power(x, y), (x, y)
