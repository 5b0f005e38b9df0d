"""Kernel-level tests of the ``cuda`` backend against the ``simple`` reference (compilation for a real GPU and
the availability errors: tests/test_cuda_compile.py).

Without a GPU these run on Numba's CUDA simulator, which this module enables (NUMBA_ENABLE_CUDASIM=1)
when numba.cuda has not been imported yet. The simulator runs every thread as a Python thread, so
shapes stay tiny and block/tile sizes are lowered where a test needs several blocks.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

if "numba.cuda" not in sys.modules:
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
pytest.importorskip("numba.cuda")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from minitensor.errors import BackendUnavailableError  # noqa: E402
from minitensor.operators import BINARY_OPS, INTEGER_KINDS, REDUCE_OPS, UNARY_OPS  # noqa: E402
from minitensor.tensor_data import TensorData  # noqa: E402

try:
    from minitensor.backends import cuda as cuda_module
except BackendUnavailableError as error:  # numba.cuda imported earlier without the simulator, no GPU
    pytest.skip(f"cuda backend unavailable: {error}", allow_module_level=True)

from minitensor.backends import cuda_plan  # noqa: E402
from minitensor.backends import simple as simple_module  # noqa: E402

CUDA = cuda_module.backend
SIMPLE = simple_module.backend
FLOATS = [np.float32, np.float64]
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]
BIG = 2**62


def pair(array: np.ndarray, order: tuple[int, ...] | None = None) -> tuple[TensorData, TensorData]:
    """The same data on both backends, optionally permuted (``array`` is laid out in permuted order)."""
    cu, si = CUDA.from_numpy(array), SIMPLE.from_numpy(array)
    if order is not None:
        cu, si = cu.permute(*order), si.permute(*order)
    return cu, si


def strided_out(shape: tuple[int, ...], dtype: type, step: int = 2, offset: int = 1) -> tuple[TensorData, TensorData]:
    """An output view with every stride multiplied by ``step`` and a storage offset, on both backends."""
    n = int(np.prod(shape)) * step + offset + 1
    strides = TensorData(np.empty(0), shape).strides
    strides = tuple(s * step for s in strides)
    fill = np.full(n, -7.0, dtype=dtype)
    cu = TensorData(CUDA.from_numpy(fill).storage[offset:], shape, strides)
    si = TensorData(fill.copy()[offset:], shape, strides)
    return cu, si


def assert_same(cu: TensorData, si: TensorData, rtol: float = 1e-7) -> None:
    got, want = CUDA.to_numpy(cu), SIMPLE.to_numpy(si)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)


def operand(rng: np.random.Generator, shape: tuple[int, ...], op: str, dtype: type = np.float64) -> np.ndarray:
    """Values in the op's comfortable domain (positive for log/sqrt/pow, away from 0); integers 1..4 for int dtypes."""
    integer = np.dtype(dtype).kind in INTEGER_KINDS
    x = rng.integers(1, 5, size=shape).astype(np.float64) if integer else rng.uniform(0.5, 2.0, size=shape)
    if op not in ("log", "sqrt", "pow", "log_back", "sqrt_back"):
        x *= rng.choice([-1.0, 1.0], size=shape)
    return x.astype(dtype)


def computes(op: str) -> list[type]:
    """Input dtypes to test ``op`` with: float64 (float compute) unless it is bitwise, and int64 (int compute)."""
    return [np.int64] if op.startswith("bitwise_") else [np.float64, np.int64]


def device(array: np.ndarray, order: tuple[int, ...] | None = None) -> TensorData:
    """``array`` on the device; with ``order``, a permuted view of a copy laid out in another order (same values)."""
    if order is None:
        return CUDA.from_numpy(array)
    inverse = tuple(np.argsort(order))
    return CUDA.from_numpy(np.ascontiguousarray(array.transpose(inverse))).permute(*order)


def strided(shape: tuple[int, ...], dtype: type, fill: object = 0) -> TensorData:
    """A device output view with doubled strides and a storage offset of 1, filled with ``fill``."""
    n = 2 * max(int(np.prod(shape)), 1) + 2
    strides = tuple(2 * s for s in TensorData(np.empty(0), shape).strides)
    return TensorData(CUDA.from_numpy(np.full(n, fill, dtype=dtype)).storage[1:], shape, strides)


# --- storage ------------------------------------------------------------------------------------


def test_storage_is_on_device_and_kernel_chain_stays_there() -> None:
    a = CUDA.from_numpy(np.arange(6.0).reshape(2, 3))
    assert cuda_module.is_device_array(a.storage)
    b = CUDA.empty((2, 3), np.float64)
    CUDA.map("exp", a, b)
    c = CUDA.zeros((2, 3), np.float64)
    CUDA.zip("mul", a, b, c)
    d = CUDA.empty((1, 3), np.float64)
    CUDA.reduce("sum", c, 0, d)
    e = CUDA.empty((3, 3), np.float64)
    CUDA.matmul(d.permute(1, 0), d, e)
    for data in (b, c, d, e):
        assert cuda_module.is_device_array(data.storage)
    x = np.arange(6.0).reshape(2, 3)
    want = (x * np.exp(x)).sum(0, keepdims=True)
    np.testing.assert_allclose(CUDA.to_numpy(e), want.T @ want)


def test_zeros_empty_to_numpy_roundtrip() -> None:
    z = CUDA.zeros((2, 3), np.float32)
    assert cuda_module.is_device_array(z.storage)
    assert CUDA.to_numpy(z).dtype == np.float32 and not CUDA.to_numpy(z).any()
    x = np.arange(12.0).reshape(3, 4)
    t = CUDA.from_numpy(x).permute(1, 0)
    np.testing.assert_array_equal(CUDA.to_numpy(t), x.T)
    assert CUDA.to_numpy(CUDA.empty((0, 3), np.float64)).shape == (0, 3)
    for dtype in (np.int64, np.bool_):
        z = CUDA.zeros((3,), np.dtype(dtype))
        np.testing.assert_array_equal(CUDA.to_numpy(z), np.zeros(3, dtype=dtype))


def test_host_storage_is_rejected() -> None:
    with pytest.raises(TypeError, match="from_numpy"):
        CUDA.map("id", SIMPLE.from_numpy(np.ones(3)), CUDA.empty((3,), np.float64))


# --- map / zip ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("op", "dtype"), [(op, dtype) for op in sorted(UNARY_OPS) for dtype in computes(op)])
def test_map_every_op(op: str, dtype: type) -> None:
    x = operand(np.random.default_rng(0), (2, 3), op, dtype)
    cu_a, si_a = pair(x)
    cu_o, si_o = CUDA.empty((2, 3), np.float64), SIMPLE.empty((2, 3), np.float64)
    CUDA.map(op, cu_a, cu_o)
    SIMPLE.map(op, si_a, si_o)
    assert_same(cu_o, si_o)


@pytest.mark.parametrize("op", sorted(op for op in UNARY_OPS if not op.startswith("bitwise_")))
def test_map_every_op_in_float32(op: str) -> None:
    """float32 in and out computes in float32 (device math on float32 values; under the simulator, NumPy float32
    scalars, which lack some of Python's float protocol: trunc raised TypeError)."""
    x = operand(np.random.default_rng(2), (2, 3), op, np.float32)
    cu_o, si_o = CUDA.empty((2, 3), np.float32), SIMPLE.empty((2, 3), np.float32)
    CUDA.map(op, CUDA.from_numpy(x), cu_o)
    SIMPLE.map(op, SIMPLE.from_numpy(x), si_o)
    np.testing.assert_allclose(CUDA.to_numpy(cu_o), SIMPLE.to_numpy(si_o), rtol=2e-6, atol=1e-7, err_msg=op)


def test_map_special_values() -> None:
    x = np.array([0.0, -1.0, np.inf, -np.inf, np.nan, 800.0, -800.0])
    for op in ("log", "sqrt", "inv", "exp", "sigmoid", "sign", "tanh"):
        cu_a, si_a = pair(x)
        cu_o, si_o = CUDA.empty(x.shape, np.float64), SIMPLE.empty(x.shape, np.float64)
        CUDA.map(op, cu_a, cu_o)
        SIMPLE.map(op, si_a, si_o)
        assert_same(cu_o, si_o)


@pytest.mark.parametrize(("op", "dtype"), [(op, dtype) for op in sorted(BINARY_OPS) for dtype in computes(op)])
def test_zip_every_op_broadcast(op: str, dtype: type) -> None:
    rng = np.random.default_rng(1)
    cu_a, si_a = pair(operand(rng, (2, 3), op, dtype))
    cu_b, si_b = pair(operand(rng, (3,), op, np.int32 if dtype == np.int64 else dtype))
    cu_o, si_o = CUDA.empty((2, 3), np.float64), SIMPLE.empty((2, 3), np.float64)
    CUDA.zip(op, cu_a, cu_b, cu_o)
    SIMPLE.zip(op, si_a, si_b, si_o)
    assert_same(cu_o, si_o)


def test_zip_division_by_zero_and_comparisons() -> None:
    cu_a, si_a = pair(np.array([1.0, -1.0, 0.0, 2.0]))
    cu_b, si_b = pair(np.array([0.0, 0.0, 0.0, 2.0]))
    for op in ("div", "lt", "gt", "eq", "max", "min", "pow"):
        cu_o, si_o = CUDA.empty((4,), np.float64), SIMPLE.empty((4,), np.float64)
        CUDA.zip(op, cu_a, cu_b, cu_o)
        SIMPLE.zip(op, si_a, si_b, si_o)
        assert_same(cu_o, si_o)


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@settings(max_examples=10, deadline=None)
@given(shape=shapes, data=st.data(), dtype=st.sampled_from(FLOATS))
def test_map_zip_permuted_broadcast_strided_out(shape: tuple[int, ...], data: st.DataObject, dtype: type) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    order = tuple(data.draw(st.permutations(range(len(shape)))))
    # a: a permuted view of data laid out in another order
    base_shape = tuple(shape[order.index(i)] for i in range(len(shape)))
    cu_a, si_a = pair(rng.standard_normal(base_shape).astype(dtype), order)
    assert cu_a.shape == shape
    # b: fewer dims and size-1 dims, broadcast against a
    tail = shape[data.draw(st.integers(0, len(shape) - 1)) :]
    b_shape = tuple(s if data.draw(st.booleans()) else 1 for s in tail)
    cu_b, si_b = pair(rng.standard_normal(b_shape).astype(dtype))
    out_dtype = data.draw(st.sampled_from(FLOATS))
    cu_o, si_o = strided_out(shape, out_dtype)
    CUDA.zip("add", cu_a, cu_b, cu_o)
    SIMPLE.zip("add", si_a, si_b, si_o)
    assert_same(cu_o, si_o, rtol=1e-6)
    cu_o, si_o = strided_out(shape, out_dtype, step=3, offset=2)
    CUDA.map("neg", cu_b, cu_o)
    SIMPLE.map("neg", si_b, si_o)
    assert_same(cu_o, si_o, rtol=1e-6)


def test_layouts_coalesce_to_the_flat_path() -> None:
    """Dense operands of one layout take the flat kernel (dims 0) even when permuted; others coalesce their dims."""
    x = np.arange(24.0).reshape(2, 3, 4)
    a, b = device(x), device(x + 1)
    out = CUDA.empty((2, 3, 4), np.float64)
    assert cuda_plan.layout(out, (a, b))[0] == 0
    ta, tb, tout = device(x, (2, 0, 1)), device(x + 1, (2, 0, 1)), CUDA.empty((3, 4, 2), np.float64).permute(2, 0, 1)
    assert cuda_plan.layout(tout, (ta, tb))[0] == 0
    CUDA.zip("add", ta, tb, tout)
    np.testing.assert_array_equal(CUDA.to_numpy(tout), x + x + 1)
    row = device(np.arange(4.0))
    dims, (shape, *strides) = cuda_plan.layout(out, (a, row))
    assert dims == 2 and shape == (6, 4) and strides == [(4, 1), (4, 1), (0, 1)]  # (2, 3) merged, row broadcast
    assert cuda_plan.layout(out, (device(x[0, 0, 0]),))[0] == 1  # a 0-d operand: one dim, stride 0


def test_flat_kernels_four_per_thread_and_in_place() -> None:
    """100 elements: the first threads take the four-at-a-time loop, the rest the tail; in place (out is a) too."""
    x, y = np.arange(100.0), np.arange(100.0)[::-1].copy()
    a, b = device(x), device(y)
    assert cuda_plan.layout(a, (a, b))[0] == 0
    out = CUDA.empty((100,), np.dtype(np.float64))
    CUDA.zip("sub", a, b, out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), x - y)
    CUDA.zip("mul", a, b, a)
    CUDA.map("neg", b, b)
    np.testing.assert_array_equal(CUDA.to_numpy(a), x * y)
    np.testing.assert_array_equal(CUDA.to_numpy(b), -y)


def test_float32_tensors_compute_in_float32() -> None:
    """float32 in, float32 out: float32 arithmetic; exact ops give the bits of float64 arithmetic rounded to float32
    (the simple reference), other ops are within a few float32 ulps."""
    rng = np.random.default_rng(13)
    x = (rng.standard_normal(40) * 10.0 ** rng.integers(-20, 20, 40)).astype(np.float32)
    y = (rng.standard_normal(40) * 10.0 ** rng.integers(-20, 20, 40)).astype(np.float32)
    x[:6], y[:6] = [0.0, -0.0, np.inf, np.nan, 1.0, 3e38], [0.0, 1.0, -np.inf, 2.0, 0.0, 3e38]
    f32 = np.dtype(np.float32)
    assert cuda_plan.compute_type(CUDA.empty((40,), f32), device(x), device(y > 0)) == "float32"
    assert cuda_plan.compute_type(CUDA.empty((40,), np.dtype(np.float64)), device(x), device(y)) == "float64"
    assert cuda_plan.compute_type(CUDA.empty((40,), f32), device(x), device(y.astype(np.int32))) == "float64"
    for op in ("add", "sub", "mul", "div", "max", "min"):
        cu_o, si_o = CUDA.empty((40,), f32), SIMPLE.empty((40,), f32)
        CUDA.zip(op, device(x), device(y), cu_o)
        with np.errstate(all="ignore"):  # the reference overflows to inf in NumPy scalars
            SIMPLE.zip(op, SIMPLE.from_numpy(x), SIMPLE.from_numpy(y), si_o)
        got, want = CUDA.to_numpy(cu_o), SIMPLE.to_numpy(si_o)
        same = (got.view(np.int32) == want.view(np.int32)) | (np.isnan(got) & np.isnan(want))
        assert same.all(), f"{op}: {got[~same]} vs {want[~same]}"
    for op, rtol in (("sqrt", 0.0), ("neg", 0.0), ("exp", 3e-7), ("tanh", 3e-7)):
        arg = np.abs(x) if op == "sqrt" else np.clip(x, -50, 50)
        cu_o, si_o = CUDA.empty((40,), f32), SIMPLE.empty((40,), f32)
        CUDA.map(op, device(arg), cu_o)
        SIMPLE.map(op, SIMPLE.from_numpy(arg), si_o)
        np.testing.assert_allclose(CUDA.to_numpy(cu_o), SIMPLE.to_numpy(si_o), rtol=rtol, atol=0, err_msg=op)


def test_map_casts_on_store() -> None:
    x = np.array([1.0 + 1e-12, 2.5, -3.25])
    out = CUDA.empty((3,), np.float32)
    CUDA.map("id", CUDA.from_numpy(x), out)
    got = CUDA.to_numpy(out)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, x.astype(np.float32))


def test_zero_dim_and_empty_elementwise() -> None:
    s = CUDA.from_numpy(np.array(2.0))
    assert s.shape == ()
    out = CUDA.empty((), np.float64)
    CUDA.map("sq", s, out)
    assert CUDA.to_numpy(out).shape == () and float(CUDA.to_numpy(out)) == 4.0
    m = CUDA.from_numpy(np.arange(6.0).reshape(2, 3))
    out = CUDA.empty((2, 3), np.float64)
    CUDA.zip("mul", m, s, out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), np.arange(6.0).reshape(2, 3) * 2)
    e = CUDA.empty((0, 3), np.float64)
    CUDA.map("exp", e, CUDA.empty((0, 3), np.float64))
    CUDA.zip("add", e, CUDA.from_numpy(np.ones(3)), CUDA.empty((0, 3), np.float64))


# --- integer and bool dtypes ----------------------------------------------------------------------


@pytest.mark.parametrize("src", DTYPES)
def test_map_id_casts_between_every_dtype(src: type) -> None:
    """float -> int truncates toward zero, anything -> bool is "nonzero", bool -> number is 0/1."""
    x = np.array([0.0, -0.0, 2.75, -2.75, 1.0, 3.0], dtype=np.float64).astype(src)
    a = device(x)
    for dst in DTYPES:
        out = CUDA.empty(x.shape, np.dtype(dst))
        CUDA.map("id", a, out)
        got = CUDA.to_numpy(out)
        assert got.dtype == np.dtype(dst)
        np.testing.assert_array_equal(got, x.astype(dst))


def test_float_nan_stores_as_true_in_bool() -> None:
    out = CUDA.empty((3,), np.dtype(np.bool_))
    CUDA.map("id", device(np.array([np.nan, 0.0, -np.inf])), out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), [True, False, True])


def test_int64_arithmetic_is_exact_near_2_pow_62() -> None:
    """Integer inputs compute in int64: float64 would round every one of these."""
    x = np.array([BIG + 1, -BIG - 3, BIG - 1, 7], dtype=np.int64)
    y = np.array([2**61 + 5, 3, -(2**61) + 1, -1], dtype=np.int64)
    for op, want in (("add", x + y), ("sub", x - y), ("max", np.maximum(x, y)), ("min", np.minimum(x, y))):
        out = strided(x.shape, np.int64)
        CUDA.zip(op, device(x), device(y), out)
        np.testing.assert_array_equal(CUDA.to_numpy(out), want, err_msg=op)
    small = np.array([2**31 + 1, -(2**31) - 1, 3, 1], dtype=np.int64)
    out = CUDA.empty(x.shape, np.int64)
    CUDA.zip("mul", device(small), device(small), out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), small * small)
    CUDA.map("neg", device(x), out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), -x)
    CUDA.zip("bitwise_xor", device(x), device(y), out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), x ^ y)


def test_comparisons_into_bool_outputs() -> None:
    x = np.array([1.0, np.nan, 2.0, -np.inf, 3.0])
    y = np.array([1.0, 1.0, np.nan, 0.0, 2.5], dtype=np.float32)
    ints = np.array([BIG, BIG + 1, -5, 0, BIG], dtype=np.int64)
    ints2 = np.array([BIG + 1, BIG + 1, -6, 0, BIG - 1], dtype=np.int64)
    ops = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal}
    for op, fn in ops.items():
        for a, b in ((x, y), (ints, ints2)):
            out = strided(x.shape, np.bool_, fill=True)
            CUDA.zip(op, device(a), device(b), out)
            got = CUDA.to_numpy(out)
            assert got.dtype == np.bool_
            np.testing.assert_array_equal(got, fn(a, b), err_msg=f"{op} {a.dtype}")


def test_bool_inputs_compute_as_integers() -> None:
    p = np.array([[True, False, True], [True, True, False]])
    q = np.array([True, False, False])
    out = CUDA.empty(p.shape, np.bool_)
    CUDA.zip("logical_and", device(p), device(q), out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), p & q)
    counts = CUDA.empty((1, 3), np.int64)
    CUDA.reduce("sum", device(p), 0, counts)
    np.testing.assert_array_equal(CUDA.to_numpy(counts), p.sum(0, keepdims=True))
    out = CUDA.empty(p.shape, np.int32)
    CUDA.zip("add", device(p), device(q), out)  # 1 + 1 = 2 (int compute), not True
    np.testing.assert_array_equal(CUDA.to_numpy(out), p.astype(np.int32) + q.astype(np.int32))


# --- where, gather, scatter_add -----------------------------------------------------------------


def test_where_broadcast_permuted_strided_cast() -> None:
    rng = np.random.default_rng(9)
    cond = rng.random((3, 1)) > 0.5
    cond[0, 0], cond[1, 0] = True, False
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = np.array(7, dtype=np.int64)  # 0-d, broadcast
    out = strided((3, 4), np.float64)
    CUDA.where(device(cond), device(a, (1, 0)), device(b), out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), np.where(cond, a, b).astype(np.float64))
    # float condition (nonzero and nan are true), int64 values copied exactly
    fcond = np.array([0.0, np.nan, -1.0, 0.0])
    x = np.array([BIG + 1, BIG + 3, -BIG - 5, 1], dtype=np.int64)
    out = CUDA.empty((2, 4), np.int64)
    CUDA.where(device(fcond), device(x), device(-x[::-1].copy()), out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), np.broadcast_to(np.where(fcond != 0, x, -x[::-1]), (2, 4)))
    CUDA.where(device(fcond[:0]), device(x[:0]), device(x[:1]), CUDA.empty((2, 0), np.int64))  # zero-size: a no-op


def test_gather_every_dim_permuted_strided() -> None:
    rng = np.random.default_rng(10)
    a = rng.standard_normal((3, 4))
    for dim, index_shape in ((0, (5, 4)), (1, (3, 2))):
        index = rng.integers(0, a.shape[dim], size=index_shape)
        out = strided(index_shape, np.float64)
        CUDA.gather(device(a, (1, 0)), dim, device(index, (1, 0)), out)
        np.testing.assert_array_equal(CUDA.to_numpy(out), np.take_along_axis(a, index, dim))
    big = np.array([[BIG + 1, BIG + 2, BIG + 3]], dtype=np.int64)
    out = CUDA.empty((1, 4), np.int64)
    CUDA.gather(device(big), 1, device(np.array([[2, 0, 0, 1]])), out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), big[:, [2, 0, 0, 1]])
    CUDA.gather(device(a), 1, CUDA.empty((3, 0), np.int64), CUDA.empty((3, 0), np.float64))


def scatter_add_reference(out: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray) -> np.ndarray:
    want = out.copy()
    for at in np.ndindex(*src.shape):
        target = list(at)
        target[dim] = index[at]
        want[tuple(target)] += src[at]
    return want


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("atomic", [True, False])
def test_scatter_add_repeated_indices(monkeypatch: pytest.MonkeyPatch, dtype: type, atomic: bool) -> None:
    """Atomic adds (float32/64, int32/64) and the one-thread-per-row path (bool, or forced) against NumPy."""
    if not atomic:
        monkeypatch.setattr(cuda_module, "ATOMIC_ADD_DTYPES", frozenset())
    rng = np.random.default_rng(11)
    for dim, src_shape in ((1, (3, 5)), (0, (6, 4))):
        out_shape = (3, 4)
        index = rng.integers(0, out_shape[dim], size=src_shape)
        src = (rng.integers(-3, 4, size=src_shape) if dtype != np.bool_ else rng.random(src_shape) > 0.7).astype(dtype)
        start = (rng.integers(-3, 4, size=out_shape) if dtype != np.bool_ else rng.random(out_shape) > 0.7).astype(dtype)
        out = strided(out_shape, dtype)
        CUDA.map("id", device(start), out)
        CUDA.scatter_add(device(src, (1, 0)), dim, device(index), out)
        np.testing.assert_array_equal(CUDA.to_numpy(out), scatter_add_reference(start, dim, index, src))


def test_scatter_add_int64_exact_and_zero_size() -> None:
    out = device(np.array([BIG, -BIG, 5], dtype=np.int64))
    CUDA.scatter_add(device(np.array([1, 3, 2**61, -1], dtype=np.int64)), 0, device(np.array([0, 0, 1, 0])), out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), [BIG + 3, -BIG + 2**61, 5])
    CUDA.scatter_add(CUDA.empty((0,), np.int64), 0, CUDA.empty((0,), np.int64), out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), [BIG + 3, -BIG + 2**61, 5])


# --- scan and sort ------------------------------------------------------------------------------

NUMPY_SCANS = {"sum": np.cumsum, "prod": np.cumprod, "max": np.maximum.accumulate, "min": np.minimum.accumulate}


@pytest.mark.parametrize("op", sorted(REDUCE_OPS))
def test_scan_every_op_every_dim(op: str) -> None:
    rng = np.random.default_rng(12)
    x = rng.uniform(0.5, 1.5, size=(3, 4)) * rng.choice([-1.0, 1.0], size=(3, 4))
    x[1, 2] = np.nan  # max and min propagate nan like NumPy's accumulate
    ints = rng.integers(-3, 4, size=(3, 4))
    ints[0, 0] = BIG + 1 if op != "prod" else 2**40 + 1
    for dim in (0, 1):
        for a, dtype in ((x, np.float64), (x, np.float32), (ints, np.int64)):
            a = a.astype(dtype)
            out = strided(a.shape, dtype)
            CUDA.scan(op, device(a, (1, 0)), dim, out)
            want = NUMPY_SCANS[op](a, axis=dim)
            np.testing.assert_allclose(CUDA.to_numpy(out), want, rtol=1e-6 if dtype == np.float32 else 0, equal_nan=True)


def test_scan_bool_counts_zero_size_and_0d() -> None:
    flags = np.array([[True, False, True, True]])
    out = CUDA.empty((1, 4), np.int64)
    CUDA.scan("sum", device(flags), 1, out)
    np.testing.assert_array_equal(CUDA.to_numpy(out), np.cumsum(flags, axis=1))
    for shape in ((0, 3), (2, 0)):
        CUDA.scan("sum", CUDA.empty(shape, np.float64), 0, CUDA.empty(shape, np.float64))
    out = CUDA.empty((), np.int64)
    CUDA.scan("max", device(np.array(5, dtype=np.int32)), 0, out)  # 0-d: one row of one
    assert CUDA.to_numpy(out) == 5


def numpy_sort(a: np.ndarray, dim: int, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    """Stable sort along ``dim`` with NaN above every number, ties in original order both ways (np.lexsort)."""
    moved = np.moveaxis(a, dim, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    order = np.empty(rows.shape, dtype=np.int64)
    for r, row in enumerate(rows):
        nan = np.isnan(row) if row.dtype.kind == "f" else np.zeros(row.shape, dtype=bool)
        key = np.where(nan, 0, row).astype(np.float64 if row.dtype.kind == "f" else np.int64)
        order[r] = np.lexsort((-key, ~nan)) if descending else np.lexsort((key, nan))
    indices = np.moveaxis(order.reshape(moved.shape), -1, dim)
    return np.take_along_axis(a, indices, dim), indices


@pytest.mark.parametrize("descending", [False, True])
def test_sort_stable_nan_largest(descending: bool) -> None:
    x = np.array([[2.0, np.nan, -1.0, 2.0, np.inf], [0.0, -0.0, 1.0, np.nan, 0.0], [3.0, 3.0, np.nan, -np.inf, 3.0]])
    ints = np.array([[BIG + 1, BIG, BIG + 1, -BIG, BIG, 2]], dtype=np.int64)  # equal as float64
    flags = np.array([[True, False, True, False, False]])
    cases = [(x, 1, None), (x, 0, (1, 0)), (x.astype(np.float32), 1, (1, 0)), (ints, 1, None), (flags, 1, None)]
    for a, dim, order in cases:
        values, indices = strided(a.shape, a.dtype), strided(a.shape, np.int64)
        CUDA.sort(device(a, order), dim, descending, values, indices)
        want_values, want_indices = numpy_sort(a, dim, descending)
        np.testing.assert_array_equal(CUDA.to_numpy(indices), want_indices, err_msg=f"{a.dtype} dim {dim}")
        np.testing.assert_array_equal(CUDA.to_numpy(values), want_values)
    for shape in ((0, 3), (2, 0)):
        CUDA.sort(CUDA.empty(shape, np.float64), 1, descending, CUDA.empty(shape, np.float64), CUDA.empty(shape, np.int64))
