"""The fast backend's exact NumPy twins (minitensor/backends/fast_numpy.py) give the Numba kernels' results bit for bit.

Small calls of the common ops run a NumPy twin instead of a kernel; the backend tests compare those against the
simple backend. Here each twin is held to the kernel it replaces, bit for bit, on every dtype combination it is taken
for, on broadcast, permuted and spaced layouts, with nan (any nan equals any nan), +-inf, +-0, subnormals, overflowing casts and int64
extremes; so the kernels stay tested too, and which route ran never shows in a result.
"""

from __future__ import annotations

import warnings
from itertools import product

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minitensor.backends import fast_numpy
from minitensor.backends.base import strided_view
from minitensor.backends.fast import FastBackend
from minitensor.tensor_data import TensorData

twins = FastBackend()
kernels = FastBackend(use_numpy_twins=False)

DTYPES = [np.dtype(t) for t in (np.bool_, np.int64, np.float32, np.float64)]
FLOAT_POOL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-40, -1e-45, 1e-310, 3.4e38, -1e39, 1e300]
INT_POOL = [0, 1, -1, 2, 7, -3, 2**31, 2**62, -(2**63), 2**63 - 1]


def values(seed: int, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Random values of ``dtype`` mixed with the special ones (about half from the pool)."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    pool = np.array(INT_POOL if dtype.kind == "i" else FLOAT_POOL)
    with np.errstate(all="ignore"):
        drawn = pool[rng.integers(0, pool.size, shape)].astype(dtype)
        noise = (rng.integers(-100, 100, shape) if dtype.kind == "i" else rng.standard_normal(shape) * 10).astype(dtype)
    return np.where(rng.random(shape) < 0.5, drawn, noise)


def laid_out(array: np.ndarray, order: tuple[int, ...]) -> TensorData:
    stored = np.array(array.transpose(order), order="C")
    return TensorData(stored.reshape(-1), stored.shape).permute(*np.argsort(order).tolist())


def make_out(shape: tuple[int, ...], dtype: np.dtype, spaced: bool) -> TensorData:
    size = int(np.prod(shape, dtype=np.int64))
    if not spaced:
        return TensorData(np.zeros(size, dtype), shape)
    strides = TensorData(np.empty(0), shape).strides
    return TensorData(np.zeros(2 * size + 1, dtype), shape, tuple(2 * s for s in strides))


def same_bits(x: TensorData, y: TensorData) -> None:
    """Equal storages (covered or not), zero signs included; a nan equals any nan (its sign and payload are not
    values: NumPy's sqrt(-1) is -nan, the kernel's +nan)."""
    a, b = x.storage, y.storage
    assert a.dtype == b.dtype
    if a.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        a, b = np.where(np.isnan(a), 0, a), np.where(np.isnan(b), 0, b)
        a, b = a.view(np.dtype(f"u{a.itemsize}")), b.view(np.dtype(f"u{b.itemsize}"))
    np.testing.assert_array_equal(a, b)


shapes = st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple)


@st.composite
def operand(draw: st.DrawFn, shape: tuple[int, ...], dtype: np.dtype) -> TensorData:
    """``dtype`` values broadcasting to ``shape`` (some dims 1, leading dims dropped), stored in a random dim order."""
    small = tuple(1 if draw(st.booleans()) else s for s in shape)[draw(st.integers(0, len(shape))) :]
    order = tuple(draw(st.permutations(range(len(small)))))
    return laid_out(values(draw(st.integers(0, 2**31)), small, dtype), order)


def admitted(op: str, arity: int) -> list[tuple[tuple[np.dtype, ...], np.dtype]]:
    """Every (input dtypes, out dtype) the twin of ``op`` is taken for."""
    combos = [(ins, out) for *ins, out in product(DTYPES, repeat=arity + 1)]
    found = [(tuple(ins), out) for ins, out in combos if fast_numpy.twin_dtypes(op, tuple(ins), out)]
    assert found, op
    return found


def run_both(method: str, make_args, out_shape: tuple[int, ...], out_dtype: np.dtype, spaced: bool) -> None:
    """``method`` on the twin route and on the kernel route, from the same inputs into equal fresh outputs."""
    results = []
    for backend in (twins, kernels):
        out = make_out(out_shape, out_dtype, spaced)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # neither route may warn: IEEE results, silently
            getattr(backend, method)(*make_args(out))
        results.append(out)
    same_bits(*results)


@pytest.mark.parametrize("op", sorted(fast_numpy.MAP_TWINS))
@given(data=st.data(), shape=shapes, spaced=st.booleans())
def test_map_twin_is_the_kernel_bit_for_bit(op: str, data: st.DataObject, shape: tuple[int, ...], spaced: bool) -> None:
    (dtype,), out_dtype = data.draw(st.sampled_from(admitted(op, 1)))
    a = data.draw(operand(shape, dtype))
    assert fast_numpy.map_twin(op, a, make_out(shape, out_dtype, spaced)) is not None
    run_both("map", lambda out: (op, a, out), shape, out_dtype, spaced)


@pytest.mark.parametrize("op", sorted(fast_numpy.ZIP_TWINS))
@given(data=st.data(), shape=shapes, spaced=st.booleans())
def test_zip_twin_is_the_kernel_bit_for_bit(op: str, data: st.DataObject, shape: tuple[int, ...], spaced: bool) -> None:
    (dtype_a, dtype_b), out_dtype = data.draw(st.sampled_from(admitted(op, 2)))
    a, b = data.draw(operand(shape, dtype_a)), data.draw(operand(shape, dtype_b))
    assert fast_numpy.zip_twin(op, a, b, make_out(shape, out_dtype, spaced)) is not None
    run_both("zip", lambda out: (op, a, b, out), shape, out_dtype, spaced)


@pytest.mark.parametrize("op", sorted(fast_numpy.REDUCE_TWINS))
@given(data=st.data(), shape=shapes)
def test_integer_reduce_twin_is_the_kernel(op: str, data: st.DataObject, shape: tuple[int, ...]) -> None:
    dim = data.draw(st.integers(0, len(shape) - 1))
    a = laid_out(values(data.draw(st.integers(0, 2**31)), shape, np.dtype(np.int64)), tuple(data.draw(st.permutations(range(len(shape))))))
    out_shape = shape[:dim] + (1,) + shape[dim + 1 :]
    assert fast_numpy.reduce_twin(op, a, dim, make_out(out_shape, np.dtype(np.int64), False)) is not None
    run_both("reduce", lambda out: (op, a, dim, out), out_shape, np.dtype(np.int64), False)


@given(data=st.data(), shape=shapes, dtype=st.sampled_from(DTYPES), spaced=st.booleans())
def test_where_twin_is_the_kernel(data: st.DataObject, shape: tuple[int, ...], dtype: np.dtype, spaced: bool) -> None:
    cond = data.draw(operand(shape, np.dtype(np.bool_)))
    a, b = data.draw(operand(shape, dtype)), data.draw(operand(shape, dtype))
    run_both("where", lambda out: (cond, a, b, out), shape, dtype, spaced)


@given(data=st.data(), shape=shapes, dtype=st.sampled_from(DTYPES))
def test_gather_and_scatter_add_twins_are_the_kernels(data: st.DataObject, shape: tuple[int, ...], dtype: np.dtype) -> None:
    dim = data.draw(st.integers(0, len(shape) - 1))
    seed = data.draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    source_shape = tuple(n + int(rng.integers(0, 2)) for n in shape)  # a may be larger than index in every dim
    a = laid_out(values(seed, source_shape, dtype), tuple(rng.permutation(len(shape))))
    index = laid_out(rng.integers(0, source_shape[dim], shape), tuple(rng.permutation(len(shape))))
    run_both("gather", lambda out: (a, dim, index, out), shape, dtype, False)
    if dtype in (np.float32, np.float64, np.int64):
        src = laid_out(values(seed + 1, shape, dtype), tuple(rng.permutation(len(shape))))
        start = values(seed + 2, source_shape, dtype)

        def scatter_args(out: TensorData) -> tuple:
            np.copyto(strided_view(out, writeable=True), start)
            return (src, dim, index, out)

        assert fast_numpy.scatter_add_twin(src, dim, index, make_out(source_shape, dtype, False)) is not None
        run_both("scatter_add", scatter_args, source_shape, dtype, False)


def test_large_work_and_other_dtypes_take_the_kernels() -> None:
    """At TWIN_BELOW elements and above the parallel kernels run; so do casts a twin would not match (float -> int)."""
    big = TensorData(np.zeros(fast_numpy.TWIN_BELOW, np.float32), (fast_numpy.TWIN_BELOW,))
    small = TensorData(np.zeros(8, np.float32), (8,))
    assert fast_numpy.zip_twin("add", big, big, big) is None
    assert fast_numpy.zip_twin("add", small, small, small) is not None
    assert fast_numpy.map_twin("id", small, TensorData(np.zeros(8, np.int64), (8,))) is None
    assert fast_numpy.map_twin("exp", small, small) is None
    assert fast_numpy.zip_twin("max", small, small, small) is None  # -0.0 vs 0.0 order: the kernel's rule differs


def test_a_plan_serves_longer_storages_of_the_same_layout() -> None:
    """Plans are keyed by shape and strides; a later call may view a longer storage (a 0-d scalar at a buffer's tail)."""
    buffer = np.arange(4.0)
    for start in (3, 1, 0):  # storages of 1, 3 and 4 elements, one layout
        x = TensorData(buffer[start:], ())
        out = TensorData(np.zeros(2), ())
        twins.zip("add", x, x, out)
        assert out.storage[0] == 2 * buffer[start] and out.storage[1] == 0
