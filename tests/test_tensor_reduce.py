"""Reductions, scans and sorting (tensor_reduce.py) on every backend.

Property tests draw shapes that may have zero-size dims, in contiguous, permuted and sliced layouts, with
dim as None, an int (maybe negative) or a tuple, and keepdim: forward results are compared with NumPy,
float64 gradients with central differences of the NumPy function. PyTorch is the oracle for the
(values, indices) forms, ties and NaN, sort stability, var/std corrections, norm orders, empty dims
and result dtypes.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from strategies import LAYOUTS, MAX_DIMS, MAX_SIZE, central_difference, make_tensor, run_property

import minitensor as mt
from minitensor.errors import DTypeError, IndexOutOfRangeError, ShapeError

NAN, INF = math.nan, math.inf

# --- strategies ---


def shapes0(backend: str, min_dims: int = 0) -> st.SearchStrategy[tuple[int, ...]]:
    """Shapes whose sizes may be 0 (about one dim in 2 * MAX_SIZE)."""
    sizes = st.sampled_from((0,) + tuple(range(1, MAX_SIZE[backend] + 1)) * 2)
    return st.lists(sizes, min_size=min_dims, max_size=MAX_DIMS[backend]).map(tuple)


@st.composite
def tensors(draw: Any, backend: str, shape: tuple[int, ...], elements: Any = None, unique: bool = False) -> tuple[np.ndarray, mt.Tensor]:
    """A float64 array of ``shape`` and an equal leaf tensor in a random layout.

    ``unique`` values in (-2, 2) are at least 3.2 / n apart, and so are their absolute values and their distances
    from 0 (the fractional offsets 0.25..0.45 never sum to an integer), so no max, sort or norm meets a kink.
    """
    n = math.prod(shape)
    if unique:
        order = np.array(draw(st.permutations(range(n))), dtype=np.float64)
        jitter = np.array(draw(st.lists(st.floats(0.0, 0.2), min_size=n, max_size=n)))
        array = (-2.0 + (order + 0.25 + jitter) * 4.0 / max(n, 1)).reshape(shape)
    else:
        array = draw(arrays(np.float64, shape, elements=st.floats(-2.0, 2.0) if elements is None else elements))
    layout = draw(st.sampled_from(LAYOUTS))
    return array, make_tensor(array, backend, layout, draw(st.integers(0, 2**16)))


@st.composite
def dims(draw: Any, ndim: int, single: bool = False) -> Any:
    """None, an int (maybe negative) or a tuple of distinct dims (maybe negative); ints only if ``single``."""
    rank = max(ndim, 1)
    one = st.integers(-rank, rank - 1)
    if single:
        return draw(one)
    chosen = draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True))
    as_tuple = tuple(d - rank if draw(st.booleans()) else d for d in chosen)
    return draw(st.sampled_from([None, draw(one), as_tuple]))


def axis(dim: Any, ndim: int) -> Any:
    """``dim`` as a NumPy axis (a 0-d array has none)."""
    return None if ndim == 0 or dim is None else dim


def reduced(dim: Any, shape: tuple[int, ...]) -> list[int]:
    if not shape or dim is None:
        return list(range(len(shape)))
    return [d % len(shape) for d in ((dim,) if isinstance(dim, int) else dim)]


def quiet(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """``fn`` with NumPy's empty-slice and invalid-value warnings off."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def check_grad(fn: Callable, np_fn: Callable, array: np.ndarray, x: mt.Tensor, seed: int = 0, tol: float = 1e-5) -> None:
    """Gradient of sum(w * fn(x)) matches central differences of the NumPy function."""
    out = fn(x)
    weight = np.random.default_rng(seed).uniform(-1.0, 1.0, out.shape)
    (out * mt.tensor(weight, backend=out.backend, dtype=out.dtype)).sum().backward()
    assert x.grad is not None and x.grad.shape == array.shape
    expected = central_difference(np_fn, [array], weight)[0]
    np.testing.assert_allclose(x.grad.to_numpy(), expected, rtol=tol, atol=tol)


def assert_same(got: mt.Tensor, want: torch.Tensor) -> None:
    """Same shape, dtype and values (nan where nan) as the PyTorch result."""
    expected = want.detach().numpy()
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got.to_numpy(), expected, rtol=1e-6, atol=1e-12)


def pair(backend: str, data: Any, dtype: str = "float64", requires_grad: bool = False) -> tuple[mt.Tensor, torch.Tensor]:
    array = np.asarray(data, dtype=dtype)
    t = mt.tensor(array, backend=backend, dtype=dtype, requires_grad=requires_grad)
    return t, torch.tensor(array, requires_grad=requires_grad)


# --- reductions over dims: forward against NumPy, backward against central differences ---


def np_norm(p: float) -> Callable:
    return lambda a, axis, keepdims: quiet(np.sum, np.abs(a) ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def np_logsumexp(a: np.ndarray, axis: Any, keepdims: bool) -> np.ndarray:
    return quiet(np.log, quiet(np.sum, np.exp(a), axis=axis, keepdims=keepdims))


# name -> (minitensor fn(t, dim, keepdim), NumPy fn(a, axis, keepdims), options)
# options: unique (no ties), nonzero (|x| >= 0.1), zeros (some exact zeros), identity-free (empty dims raise), correction
REDUCTIONS: dict[str, tuple[Callable, Callable, dict[str, Any]]] = {
    "sum": (lambda t, d, k: t.sum(d, k), np.sum, {}),
    "prod": (lambda t, d, k: t.prod(d, k), np.prod, {"zeros": True}),
    "mean": (lambda t, d, k: t.mean(d, k), np.mean, {}),
    "var": (lambda t, d, k: t.var(d, keepdim=k), lambda a, axis, keepdims: np.var(a, axis=axis, ddof=1, keepdims=keepdims),
            {"correction": 1}),
    "var_c0": (lambda t, d, k: t.var(d, keepdim=k, correction=0), lambda a, axis, keepdims: np.var(a, axis=axis, keepdims=keepdims),
               {"correction": 0}),
    "std": (lambda t, d, k: t.std(d, keepdim=k), lambda a, axis, keepdims: np.std(a, axis=axis, ddof=1, keepdims=keepdims),
            {"correction": 1, "unique": True}),
    "norm2": (lambda t, d, k: t.norm(2, d, k), np_norm(2), {"unique": True}),
    "norm1": (lambda t, d, k: t.norm(1, d, k), np_norm(1), {"nonzero": True}),
    "norm3": (lambda t, d, k: t.norm(3.0, d, k), np_norm(3.0), {"nonzero": True}),  # a norm is |x| near 0: a kink
    "norm_half": (lambda t, d, k: t.norm(0.5, d, k), np_norm(0.5), {"nonzero": True}),
    "norm_inf": (lambda t, d, k: t.norm(INF, d, k), lambda a, axis, keepdims: np.max(np.abs(a), axis=axis, keepdims=keepdims),
                 {"unique": True, "identity-free": True}),
    "logsumexp": (lambda t, d, k: t.logsumexp(d, k), np_logsumexp, {}),
    "amax": (lambda t, d, k: t.amax(d, k), np.max, {"unique": True, "identity-free": True}),
    "amin": (lambda t, d, k: t.amin(d, k), np.min, {"unique": True, "identity-free": True}),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_forward_and_backward(backend: str, name: str) -> None:
    fn, np_fn, opts = REDUCTIONS[name]
    if opts.get("nonzero"):
        elements = st.floats(0.1, 2.0) | st.floats(-2.0, -0.1)
    elif opts.get("zeros"):
        elements = st.just(0.0) | st.floats(-1.5, 1.5, allow_subnormal=False)  # see test_scans_forward_and_backward
    else:
        elements = None

    def body(data: st.DataObject) -> None:
        shape = data.draw(shapes0(backend))
        array, x = data.draw(tensors(backend, shape, elements, opts.get("unique", False)))
        dim, keepdim = data.draw(dims(len(shape))), data.draw(st.booleans())
        t_fn = lambda t: fn(t, dim, keepdim)  # noqa: E731
        n_fn = lambda a: quiet(np_fn, a, axis=axis(dim, a.ndim), keepdims=keepdim)  # noqa: E731
        n = math.prod(shape[d] for d in reduced(dim, shape))
        if opts.get("identity-free") and n == 0:
            with pytest.raises(ShapeError, match=r"size 0.*shape") as info:
                t_fn(x)
            assert isinstance(info.value, IndexError)
            return
        out, expected = t_fn(x), np.asarray(n_fn(array))
        assert out.shape == expected.shape and out.dtype == np.float64
        np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-9, atol=1e-12)
        if "correction" in opts and n - opts["correction"] <= 0:
            return  # nan or inf: no derivative to compare
        check_grad(t_fn, n_fn, array, x)

    run_property(backend, body)


def test_empty_and_keepdim_reductions_of_zero_dim_tensors(backend: str) -> None:
    """A 0-d tensor reduces over dim 0 or -1 (its one element); keepdim keeps it 0-d."""
    x, t = pair(backend, 3.0, requires_grad=True)
    calls = {"norm": ((2, 0), (2, -1, True)), "cumsum": ((0,), (-1,)), "cumprod": ((0,), (-1,))}
    for name in ("sum", "prod", "mean", "amax", "amin", "norm", "logsumexp", "cumsum", "cumprod"):
        for args in calls.get(name, ((0,), (-1, True))):
            assert_same(getattr(x, name)(*args), getattr(t, name)(*args))
    for name in ("max", "min", "sort", "median"):
        got, want = getattr(x, name)(0), getattr(t, name)(0)
        assert_same(got.values, want.values)
        assert_same(got.indices, want.indices)
    assert_same(x.argmax(0), t.argmax(0))
    for k in (0, 1):
        assert_same(x.topk(k).values, t.topk(k).values)
    assert_same(x.var(0, correction=0), t.var(0, correction=0))
    with pytest.raises(IndexOutOfRangeError, match="dim 1"):
        x.sum(1)


# --- max/min/argmax/argmin ---


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_with_dim_give_values_and_indices(backend: str, op: str) -> None:
    np_values, np_index = (np.max, np.argmax) if op == "max" else (np.min, np.argmin)

    def body(data: st.DataObject) -> None:
        shape = data.draw(shapes0(backend, min_dims=1))
        array, x = data.draw(tensors(backend, shape, unique=True))
        dim, keepdim = data.draw(dims(len(shape), single=True)), data.draw(st.booleans())
        if shape[dim] == 0:
            with pytest.raises(ShapeError, match="size 0") as info:
                getattr(x, op)(dim, keepdim)
            assert isinstance(info.value, IndexError)
            return
        values, indices = getattr(x, op)(dim, keepdim)
        expected = np_values(array, axis=dim, keepdims=keepdim)
        assert values.shape == expected.shape == indices.shape and indices.dtype == np.int64
        np.testing.assert_array_equal(values.to_numpy(), expected)
        np.testing.assert_array_equal(indices.to_numpy(), np_index(array, axis=dim, keepdims=keepdim))
        check_grad(lambda t: getattr(t, op)(dim, keepdim).values, lambda a: np_values(a, axis=dim, keepdims=keepdim), array, x)
        if array.size:
            full = getattr(x, op)()
            assert full.shape == () and full.item() == np_values(array)

    run_property(backend, body)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argmax_argmin_first_index_with_ties_and_nan(backend: str, op: str) -> None:
    """NumPy agrees with PyTorch here: the first extreme wins a tie and the first NaN beats every number."""
    elements, extreme = st.sampled_from([-1.0, 0.0, 1.0, 1.0, NAN]), np.max if op == "argmax" else np.min

    def body(data: st.DataObject) -> None:
        shape = data.draw(shapes0(backend))
        array, x = data.draw(tensors(backend, shape, elements))
        dim = data.draw(st.none() | dims(len(shape), single=True))
        keepdim = data.draw(st.booleans())
        if math.prod(shape[d] for d in reduced(dim, shape)) == 0:
            with pytest.raises(ShapeError, match=r"shape \(") as info:
                getattr(x, op)(dim, keepdim)
            assert isinstance(info.value, IndexError)
            return
        got = getattr(x, op)(dim, keepdim)
        expected = getattr(np, op)(array, axis=axis(dim, array.ndim), keepdims=keepdim)
        assert got.dtype == np.int64 and got.shape == np.shape(expected)
        np.testing.assert_array_equal(got.to_numpy(), expected)
        if dim is not None:
            values, indices = getattr(x, op[3:])(dim, keepdim)
            np.testing.assert_array_equal(indices.to_numpy(), expected)
            np.testing.assert_array_equal(values.to_numpy(), quiet(extreme, array, axis=axis(dim, array.ndim), keepdims=keepdim))

    run_property(backend, body)


def test_max_min_forms_match_torch(backend: str) -> None:
    data = [[1.0, 5.0, 5.0], [7.0, NAN, 7.0], [-1.0, -1.0, 0.0]]
    for op in ("max", "min"):
        x, t = pair(backend, data)
        got, want = getattr(x, op)(1), getattr(t, op)(1)
        assert isinstance(got, tuple) and len(got) == 2
        assert_same(got.values, want.values)
        assert_same(got.indices, want.indices)
        got, want = getattr(mt, op)(x, dim=0, keepdim=True), getattr(torch, op)(t, dim=0, keepdim=True)
        assert_same(got[0], want[0])
        assert_same(got[1], want[1])
        assert_same(getattr(x, op)(), getattr(t, op)())
        y, u = pair(backend, [[2.0, 0.0, 9.0]] * 3)
        assert_same(getattr(x, op)(y), getattr(t, op)(u))
        for dim in (None, 0, 1, -1):
            for keepdim in (False, True):
                assert_same(getattr(x, f"arg{op}")(dim, keepdim), getattr(t, f"arg{op}")(dim, keepdim))
    x, t = pair(backend, [True, False, True], "bool")
    assert_same(x.max(0).values, t.max(0).values)
    assert_same(x.max(0).indices, t.max(0).indices)
    assert_same(x.amin(), t.amin())


def test_max_min_gradients_match_torch(backend: str) -> None:
    """max(dim) sends the gradient to the chosen index only; max(), amax and amin share it among ties."""
    data = [[1.0, 5.0, 5.0], [7.0, 2.0, 7.0]]
    weight = np.array([[0.5, -2.0, 3.0], [1.5, 1.0, -1.0]])
    cases: list[Callable] = [
        lambda v: v.max(1).values,
        lambda v: v.min(0, keepdim=True).values,
        lambda v: v.max(),
        lambda v: v.min(),
        lambda v: v.amax(1),
        lambda v: v.amax((0, 1)),
        lambda v: v.amin(0, keepdim=True),
    ]
    for case in cases:
        x, t = pair(backend, data, requires_grad=True)
        out, want = case(x), case(t)
        weight = np.linspace(-1.0, 2.0, out.numel()).reshape(out.shape) + 0.3
        (out * mt.tensor(weight, backend=backend, dtype="float64")).sum().backward()
        (want * torch.tensor(weight)).sum().backward()
        assert_same(x.grad, t.grad)


# --- scans ---


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scans_forward_and_backward(backend: str, op: str) -> None:
    """Values include exact zeros: cumprod's gradient must stay right there (it is a polynomial, so central
    differences are exact)."""
    # No subnormals: like PyTorch's, the gradient divides by the input and d * y underflows to 0 for 5e-324.
    elements = st.just(0.0) | st.floats(-1.5, 1.5, allow_subnormal=False)

    def body(data: st.DataObject) -> None:
        shape = data.draw(shapes0(backend))
        array, x = data.draw(tensors(backend, shape, elements))
        dim = data.draw(dims(len(shape), single=True))
        n_fn = lambda a: getattr(np, op)(a, axis=dim) if a.ndim else a  # noqa: E731
        out = getattr(x, op)(dim)
        assert out.shape == array.shape and out.dtype == np.float64
        np.testing.assert_allclose(out.to_numpy(), n_fn(array), rtol=1e-10, atol=1e-12)
        check_grad(lambda t: getattr(t, op)(dim), n_fn, array, x)

    run_property(backend, body)


@pytest.mark.parametrize("zeros", [[], [1], [1, 3], [0, 4]])
def test_prod_and_cumprod_gradients_with_zeros_match_torch(backend: str, zeros: list[int]) -> None:
    row = np.array([1.5, -2.0, 0.5, 3.0, -0.75])
    row[zeros] = 0.0
    data = np.stack([row, row[::-1]])
    for fn in (lambda v: v.prod(1), lambda v: v.prod(), lambda v: v.cumprod(1), lambda v: v.cumprod(0)):
        x, t = pair(backend, data, requires_grad=True)
        weight = np.linspace(-1.0, 2.0, fn(t).numel()).reshape(fn(t).shape)
        (fn(x) * mt.tensor(weight, backend=backend, dtype="float64")).sum().backward()
        (fn(t) * torch.tensor(weight)).sum().backward()
        assert_same(fn(x), fn(t))
        assert_same(x.grad, t.grad)


# --- sorting and selection ---


def np_sort_indices(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable argsort with NaN above every number (last ascending, first descending), as PyTorch."""
    key = np.where(np.isnan(a), -INF, -a) if descending else a
    return np.argsort(key, axis=axis, kind="stable")


def test_sort_argsort_forward_and_backward(backend: str) -> None:
    def body(data: st.DataObject) -> None:
        shape = data.draw(shapes0(backend))
        array, x = data.draw(tensors(backend, shape, unique=True))
        dim, descending = data.draw(dims(len(shape), single=True)), data.draw(st.booleans())
        np_dim = axis(dim, array.ndim)
        order = np_sort_indices(array, -1 if np_dim is None else np_dim, descending) if array.ndim else np.array(0)
        n_fn = lambda a: np.take_along_axis(a, order, np_dim) if a.ndim else a  # noqa: E731
        values, indices = x.sort(dim, descending)
        assert values.shape == indices.shape == array.shape and indices.dtype == np.int64
        np.testing.assert_array_equal(indices.to_numpy(), order)
        np.testing.assert_array_equal(values.to_numpy(), n_fn(array))
        np.testing.assert_array_equal(x.argsort(dim, descending).to_numpy(), order)
        check_grad(lambda t: t.sort(dim, descending).values, n_fn, array, x)

    run_property(backend, body)


def test_topk_forward_and_backward(backend: str) -> None:
    def body(data: st.DataObject) -> None:
        shape = data.draw(shapes0(backend, min_dims=1))
        array, x = data.draw(tensors(backend, shape, unique=True))
        dim, largest = data.draw(dims(len(shape), single=True)), data.draw(st.booleans())
        k = data.draw(st.integers(0, shape[dim]))
        order = np.take(np_sort_indices(array, dim, largest), np.arange(k), axis=dim)
        n_fn = lambda a: np.take_along_axis(a, order, dim)  # noqa: E731
        values, indices = x.topk(k, dim, largest)
        np.testing.assert_array_equal(indices.to_numpy(), order)
        np.testing.assert_array_equal(values.to_numpy(), n_fn(array))
        check_grad(lambda t: t.topk(k, dim, largest).values, n_fn, array, x)

    run_property(backend, body)


def test_median_forward_and_backward(backend: str) -> None:
    def body(data: st.DataObject) -> None:
        shape = data.draw(shapes0(backend))
        array, x = data.draw(tensors(backend, shape, unique=True))
        dim, keepdim = data.draw(st.none() | dims(len(shape), single=True)), data.draw(st.booleans())
        if dim is None:
            n_fn = lambda a: np.sort(a.reshape(-1))[(a.size - 1) // 2] if a.size else np.nan  # noqa: E731
            out = x.median()
            assert out.shape == ()
            np.testing.assert_array_equal(out.to_numpy(), n_fn(array))
            if array.size:
                check_grad(lambda t: t.median(), n_fn, array, x)
            return
        if array.ndim and shape[dim] == 0:
            with pytest.raises(ShapeError, match="size 0"):
                x.median(dim)
            return
        if array.ndim == 0:
            order, n_fn = np.array(0), lambda a: a
        else:
            picked = np.take(np_sort_indices(array, dim, False), [(shape[dim] - 1) // 2], axis=dim)
            order = picked if keepdim else picked.squeeze(dim)
            n_fn = lambda a: np.take_along_axis(a, picked, dim).reshape(order.shape)  # noqa: E731
        values, indices = x.median(dim, keepdim)
        np.testing.assert_array_equal(indices.to_numpy(), order)
        np.testing.assert_array_equal(values.to_numpy(), n_fn(array))
        check_grad(lambda t: t.median(dim, keepdim).values, n_fn, array, x)

    run_property(backend, body)


def test_sort_stability_and_nan_placement_match_torch(backend: str) -> None:
    data = [[2.0, NAN, 1.0, 2.0, NAN, 1.0, -INF, INF], [0.0, 0.0, 0.0, NAN, 3.0, 3.0, -1.0, 0.0]]
    x, t = pair(backend, data)
    for descending in (False, True):
        for dim in (1, 0):
            got, want = x.sort(dim, descending, stable=True), torch.sort(t, dim=dim, descending=descending, stable=True)
            assert_same(got.values, want.values)
            assert_same(got.indices, want.indices)
            assert_same(mt.argsort(x, dim, descending, stable=True), torch.argsort(t, dim=dim, descending=descending, stable=True))
    for largest in (True, False):
        got, want = x.topk(3, largest=largest), t.topk(3, largest=largest)
        assert_same(got.values, want.values)
    i, u = pair(backend, [[3, 1, 2, 1, 3]], "int32")
    assert_same(i.sort(descending=True, stable=True).indices, u.sort(descending=True, stable=True).indices)
    b, v = pair(backend, [[True, False, True, False]], "bool")
    assert_same(b.sort(stable=True).values, v.sort(stable=True).values)
    assert_same(b.sort(stable=True).indices, v.sort(stable=True).indices)


def test_median_forms_and_nan_match_torch(backend: str) -> None:
    for data in ([1.0, NAN, 2.0, NAN, 0.0], [4.0, 1.0, 3.0, 2.0], [[NAN, 1.0, NAN], [5.0, 6.0, 4.0]]):
        x, t = pair(backend, data)
        assert_same(x.median(), t.median())
        got, want = x.median(-1), t.median(-1)
        assert_same(got.values, want.values)
        assert_same(got.indices, want.indices)
    x, t = pair(backend, [[3, 1, 2, 4]], "int64")
    assert_same(x.median(), t.median())
    assert_same(x.median(1, keepdim=True).indices, t.median(1, keepdim=True).indices)


# --- var/std, norm, logsumexp, logic: PyTorch as the oracle ---

VAR_CALLS: list[Callable] = [
    lambda v, f: getattr(v, f)(),
    lambda v, f: getattr(v, f)(0),
    lambda v, f: getattr(v, f)(1, keepdim=True),
    lambda v, f: getattr(v, f)((0, 1)),
    lambda v, f: getattr(v, f)(correction=0),
    lambda v, f: getattr(v, f)(0, correction=2),
    lambda v, f: getattr(v, f)(1, correction=0.5, keepdim=True),
    lambda v, f: getattr(v, f)(False),
    lambda v, f: getattr(v, f)(0, False),
    lambda v, f: getattr(v, f)(0, False, True),
    lambda v, f: getattr(v, f)(1, True),
    lambda v, f: getattr(v, f)(unbiased=False),
    lambda v, f: getattr(v, f)(dim=-1, unbiased=True, keepdim=True),
    lambda v, f: getattr(v, f)(0, correction=3),  # N - correction < 0: inf, as PyTorch
]


@pytest.mark.parametrize("fn", ["var", "std"])
def test_var_std_corrections_match_torch(backend: str, fn: str) -> None:
    data = np.array([[1.0, 2.5, -0.5, 4.0], [0.25, -3.0, 2.0, 1.0], [5.0, 5.5, -1.0, 0.0]])
    for call in VAR_CALLS:
        x, t = pair(backend, data, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got, want = call(x, fn), call(t, fn)
        assert_same(got, want)
        if np.isfinite(want.detach().numpy()).all():
            got.sum().backward()
            want.sum().backward()
            assert_same(x.grad, t.grad)
    x, t = pair(backend, data)
    assert_same(getattr(x, fn)(dim=()), getattr(t, fn)(dim=()))  # every dim (PyTorch's gradient for dim=() is wrong: inf)
    x, t = pair(backend, [1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(getattr(x, fn)(), getattr(t, fn)())  # one element, correction 1: nan


NORMS = [1, 2, INF, -INF, "fro", 3, 0.5, -1, 0]


@pytest.mark.parametrize("p", NORMS, ids=str)
def test_norm_orders_match_torch(backend: str, p: Any) -> None:
    data = np.array([[1.0, -2.5, 0.5], [-0.25, 3.0, 2.0]])
    for dim, keepdim in ((None, False), (0, False), (1, True), ((0, 1), False), (-1, False)):
        if p == "fro" and isinstance(dim, int):
            continue  # PyTorch's 'fro' takes None or two dims
        x, t = pair(backend, data, requires_grad=True)
        got, want = x.norm(p, dim, keepdim), t.norm(p, dim, keepdim)
        assert_same(got, want)
        if p != 0:
            got.sum().backward()
            want.sum().backward()
            assert_same(x.grad, t.grad)
    assert_same(mt.norm(pair(backend, data)[0]), torch.norm(torch.tensor(data)))


def test_norm_gradient_at_zero_is_zero_as_in_torch(backend: str) -> None:
    for p in (1, 2, 3):
        x, t = pair(backend, [[0.0, 0.0], [1.0, 0.0]], requires_grad=True)
        x.norm(p, 1).sum().backward()
        t.norm(p, 1).sum().backward()
        assert_same(x.grad, t.grad)


def test_logsumexp_is_stable_and_matches_torch(backend: str) -> None:
    data = [[1000.0, 1000.0, 999.0], [-INF, -INF, -INF], [-1000.0, -1e4, -INF], [INF, 1.0, 2.0], [0.5, -0.5, 2.0]]
    x, t = pair(backend, data)
    for dim, keepdim in ((1, False), (1, True), (0, False), ((0, 1), False)):
        assert_same(x.logsumexp(dim, keepdim), t.logsumexp(dim, keepdim))
    finite = [[1000.0, 1000.0, 999.0], [-1000.0, -1e4, -999.0], [0.5, -0.5, 2.0]]
    x, t = pair(backend, finite, requires_grad=True)
    x.logsumexp(1).sum().backward()
    t.logsumexp(1).sum().backward()
    assert_same(x.grad, t.grad)
    x, t = pair(backend, [[1, 2, 3]], "int64")
    assert_same(mt.logsumexp(x, 1), torch.logsumexp(t, 1))


def test_logic_and_count_match_torch(backend: str) -> None:
    data = [[0.0, 1.0, NAN], [0.0, 0.0, 0.0], [2.0, -1.0, 3.0]]
    x, t = pair(backend, data)
    for dim in (None, 0, 1, (0, 1), -1):
        for fn in ("any", "all"):
            args = () if dim is None else (dim,)
            assert_same(getattr(x, fn)(*args), getattr(t, fn)(*args))
        assert_same(x.count_nonzero(dim), t.count_nonzero(dim))
    assert_same(x.any(1, keepdim=True), t.any(1, keepdim=True))
    assert_same(x.any(dim=()), t.any(dim=()))
    assert_same(mt.count_nonzero(x, dim=()), torch.count_nonzero(t, dim=()))


def test_dim_tuple_forms_match_torch(backend: str) -> None:
    """``dim=()`` reduces every dim, as in PyTorch; negative and mixed dims in a tuple."""
    data = np.arange(12.0).reshape(2, 3, 2) / 7.0 - 1.0
    x, t = pair(backend, data)
    for dim in ((), (0, -1), (-2,), (2, 0, 1)):
        for fn in ("sum", "mean", "amax", "amin"):
            assert_same(getattr(x, fn)(dim), getattr(t, fn)(dim))
            assert_same(getattr(x, fn)(dim, True), getattr(t, fn)(dim, True))


# --- empty dims and dtypes ---


def test_empty_dims_match_torch(backend: str) -> None:
    x, t = pair(backend, np.zeros((0, 3)))
    for fn in (
        lambda v: v.sum(), lambda v: v.sum(0), lambda v: v.sum(1), lambda v: v.prod(0), lambda v: v.prod(),
        lambda v: v.mean(), lambda v: v.mean(0), lambda v: v.amax(1), lambda v: v.amin(1), lambda v: v.logsumexp(0),
        lambda v: v.logsumexp(1), lambda v: v.cumsum(0), lambda v: v.cumprod(1), lambda v: v.norm(), lambda v: v.norm(1, 0),
        lambda v: v.count_nonzero(0), lambda v: v.any(), lambda v: v.all(0), lambda v: v.median(), lambda v: v.max(1).values,
        lambda v: v.max(1).indices, lambda v: v.argmax(1), lambda v: v.sort(0).indices, lambda v: v.topk(0, 0).values,
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert_same(fn(x), fn(t))
    # No identity for max/min/argmax/median over an empty dim: PyTorch raises IndexError, this is a ShapeError too.
    for fn in (lambda v: v.amax(0), lambda v: v.max(0), lambda v: v.argmax(0), lambda v: v.median(0), lambda v: v.argmax(),
               lambda v: v.amin(), lambda v: v.min(-2)):
        with pytest.raises(ShapeError, match=r"\(0, 3\)") as info:
            fn(x)
        assert isinstance(info.value, IndexError)
        with pytest.raises((IndexError, RuntimeError)):
            fn(t)
    with pytest.raises(ShapeError, match=r"\(0, 3\)"):
        x.max()


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_integer_and_bool_result_dtypes_match_torch(backend: str, dtype: str) -> None:
    data = np.array([[3, 0, 2], [1, 1, 4]]) if dtype != "bool" else np.array([[True, False, True], [True, True, False]])
    x, t = pair(backend, data, dtype)
    cases: list[Callable] = [
        lambda v: v.sum(), lambda v: v.sum(0), lambda v: v.prod(1), lambda v: v.prod(), lambda v: v.cumsum(1),
        lambda v: v.cumprod(0), lambda v: v.amax(), lambda v: v.amin(0), lambda v: v.max(1).values, lambda v: v.min(1).indices,
        lambda v: v.count_nonzero(), lambda v: v.any(0), lambda v: v.all(), lambda v: v.sort(1).values, lambda v: v.argsort(0),
        lambda v: v.sum(dtype=torch.float64 if isinstance(v, torch.Tensor) else mt.float64),
    ]
    if dtype != "bool":
        cases += [lambda v: v.argmax(), lambda v: v.argmin(1), lambda v: v.max(), lambda v: v.median(), lambda v: v.median(0).values,
                  lambda v: v.topk(2).values]  # PyTorch has no argmax, median or topk of bool
    for case in cases:
        assert_same(case(x), case(t))
    assert_same(x.logsumexp(1), t.logsumexp(1))


def test_float32_stays_float32(backend: str) -> None:
    x, t = pair(backend, [[1.0, -2.0], [0.5, 4.0]], "float32")
    for fn in ("sum", "prod", "mean", "var", "std", "norm", "amax", "amin", "max", "min"):
        assert_same(getattr(x, fn)(), getattr(t, fn)())
    for fn in ("cumsum", "cumprod", "logsumexp"):
        assert_same(getattr(x, fn)(1), getattr(t, fn)(1))


# --- bad input ---


def test_bad_input_raises_typed_errors(backend: str) -> None:
    i = mt.tensor([[1, 2], [3, 4]], backend=backend)
    for fn in ("mean", "var", "std", "norm"):
        with pytest.raises(DTypeError, match="int64"):
            getattr(i, fn)()
    with pytest.raises(DTypeError, match="bool"):
        mt.tensor([True, False], backend=backend).argmax()
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]], backend=backend)
    with pytest.raises(IndexOutOfRangeError, match="dim 2"):
        x.sum(2)
    with pytest.raises(IndexOutOfRangeError, match="dim -3"):
        x.amax((0, -3))
    with pytest.raises(ShapeError, match=r"more than once.*\(2, 2\)"):
        x.sum((0, -2))
    with pytest.raises(IndexOutOfRangeError, match=r"k=3.*\(2, 2\)"):
        x.topk(3)
    with pytest.raises(IndexOutOfRangeError, match="k=-1"):
        x.topk(-1)
    with pytest.raises(TypeError, match="amax"):
        x.max((0, 1))
    with pytest.raises(ValueError, match="nuc"):
        x.norm("nuc")
    with pytest.raises(TypeError, match="not both"):
        x.var(unbiased=True, correction=0)
    with pytest.raises(IndexOutOfRangeError):
        x.cumsum(2)
    with pytest.raises(IndexOutOfRangeError):
        x.sort(-3)
