"""Bit-level ops against torch and NumPy on every backend: ``Tensor.view(dtype)`` (reinterpreting the bytes, with the
same or another element size, on contiguous tensors, slices with storage offsets, transposed and expanded tensors; its
errors and autograd rules; writes through the view) and ``nextafter`` (bit for bit at zeros, subnormals, the largest
finite values, infinities and NaN, in float32, float64 and promoted mixes, broadcast; its errors and gradients)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minitensor as mt
from minitensor import DTypeError, NonContiguousError, ShapeError

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),  # the CUDA simulator's NumPy scalars
    pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
]

BITS = {np.dtype(np.float32): np.int32, np.dtype(np.float64): np.int64}
F32 = np.arange(12, dtype=np.float32).reshape(3, 4) * np.float32(1.5) - 4  # negatives, zero, fractions
F64 = np.array([[0.0, -0.0, 1.0], [-2.5, np.inf, 1e-310]])


def ours(array: np.ndarray, backend: str, **kw: Any) -> mt.Tensor:
    return mt.tensor(array, backend=backend, **kw)


def same_view(backend: str, array: np.ndarray, pick: Callable[[Any], Any], dtype: Any) -> mt.Tensor:
    """pick(tensor).view(dtype) on minitensor equals torch's and NumPy's: values (bit for bit), shape, strides."""
    got = pick(ours(array, backend)).view(dtype)
    want = pick(torch.from_numpy(array.copy())).view(getattr(torch, np.dtype(dtype).name))
    assert got.dtype == np.dtype(dtype)
    assert got.shape == tuple(want.shape) and got.strides == want.stride()
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    return got


# --- view(dtype): values, shapes, strides ---


@pytest.mark.parametrize(
    ("array", "dtype"),
    [
        (F32, mt.int32), (F32, mt.int64), (F32, mt.float64), (F32, mt.float32),
        (F64, mt.int64), (F64, mt.int32), (F64, mt.float32),
        (np.arange(-6, 6, dtype=np.int32).reshape(2, 6), mt.float32), (np.arange(-6, 6, dtype=np.int32), mt.float64),
        (np.array([[-(2**62), 3], [7, -1]], np.int64), mt.int32), (np.array([[-(2**62), 3]], np.int64), mt.float64),
        (np.array([[True, False, True, True], [False] * 4]), mt.int32),
        (np.array([1, 256, 65536, 0], np.int32), mt.bool),
    ],
)  # fmt: skip
def test_view_dtype_contiguous_matches_torch_and_numpy(backend: str, array: np.ndarray, dtype: Any) -> None:
    got = same_view(backend, array, lambda t: t, dtype)
    flat = np.ascontiguousarray(array).view(np.dtype(dtype))
    if np.dtype(dtype).kind != "b":
        np.testing.assert_array_equal(got.numpy(), flat.reshape(got.shape))


def test_view_dtype_accepts_dtypes_like_other_apis(backend: str) -> None:
    x = ours(F32, backend)
    for dtype in (mt.int64, np.int64, "int64", "long", "torch.long"):
        assert x.view(dtype).dtype == mt.int64 and x.view(dtype).shape == (3, 2)
    assert x.view(dtype=mt.int32).shape == (3, 4)
    assert x.view(float).dtype == mt.float32  # Python's float means the default float dtype, as in mt.tensor
    assert x.view(-1).shape == (12,) and x.view(4, 3).shape == (4, 3)  # shapes still work
    with pytest.raises(DTypeError, match="float16"):
        x.view(np.float16)
    with pytest.raises(TypeError, match="not both"):
        x.view(12, dtype=mt.int32)


@pytest.mark.parametrize(
    ("array", "pick", "dtype"),
    [
        (F32, lambda t: t[1:], mt.int64),  # storage offset 4: divisible by 2
        (F32, lambda t: t[:, 2:], mt.float64),  # offset 2, size(-1) 2, stride(0) 4
        (F32, lambda t: t[1:, 1:], mt.int32),  # same size: any offset
        (F32, lambda t: t[::2], mt.int64),  # stride(0) 8
        (F32, lambda t: t.t(), mt.int32),  # transposed: same size keeps shape and strides
        (F32, lambda t: t.t()[1:], mt.float32),
        (F64, lambda t: t[:, 1:], mt.float32),  # to a smaller element: offset and strides double
        (F64, lambda t: t[1:, :1], mt.int32),
        (F64, lambda t: t[:, ::2].t(), mt.int64),
        (np.arange(12, dtype=np.int32).reshape(3, 4), lambda t: t[:, 2:4], mt.int64),
        (np.arange(12, dtype=np.int32).reshape(3, 4), lambda t: t.expand(2, 3, 4), mt.float64),  # stride 0
    ],
)  # fmt: skip
def test_view_dtype_of_strided_views_matches_torch(backend: str, array: np.ndarray, pick: Any, dtype: Any) -> None:
    same_view(backend, array, pick, dtype)


def test_view_dtype_is_a_view_of_the_same_storage(backend: str) -> None:
    x = ours(F32.copy(), backend)
    bits = x.view(mt.int32)
    bits[0, 1] = int(np.float32(-7.0).view(np.int32))
    assert x.numpy()[0, 1] == -7.0
    wide = x[1:].view(mt.int64)  # offset storage, another element size
    wide[1, 0] = int(np.array([3.0, 4.0], np.float32).view(np.int64)[0])
    np.testing.assert_array_equal(x.numpy()[2, :2], [3.0, 4.0])
    x[0, 0] = 2.0  # and back: the view sees writes to the base
    assert bits.numpy()[0, 0] == np.float32(2.0).view(np.int32)
    halves = ours(F64.copy(), backend)[:, 1:].view(mt.float32)
    assert halves.shape == (2, 4)
    np.testing.assert_array_equal(halves.numpy(), F64[:, 1:].copy().view(np.float32))
    assert bits._version == x._version  # one storage, one version counter


@pytest.mark.parametrize(
    ("array", "pick", "dtype", "error", "message"),
    [
        (np.float32(1.0), lambda t: t, mt.int64, ShapeError, r"self.dim\(\) cannot be 0 to view float32 as int64"),
        (np.float64(1.0), lambda t: t, mt.float32, ShapeError, r"cannot be 0 to view float64 as float32"),
        (F32[:, :3].copy(), lambda t: t, mt.int64, ShapeError, r"size\(-1\) must be divisible by 2 .* got 3 \(shape \(3, 3\)\)"),
        (F32, lambda t: t.t(), mt.float64, ShapeError, r"size\(-1\) must be divisible by 2 to view float32 as float64"),
        (F32, lambda t: t[:, 1:3], mt.int64, NonContiguousError, r"storage_offset\(\) must be divisible by 2 .*float32 as int64"),
        (F32, lambda t: t[:, ::2], mt.int64, NonContiguousError, r"stride\(-1\) must be 1 .* got 2"),
        (np.zeros((3, 5), np.float32), lambda t: t[:, :2], mt.int64, NonContiguousError, r"stride\(0\) must be divisible by 2 .* got 5"),
        (F64, lambda t: t.t(), mt.float32, NonContiguousError, r"stride\(-1\) must be 1 to view float64 as float32 .* got 3"),
        (F64, lambda t: t[:, ::2], mt.int32, NonContiguousError, r"stride\(-1\) must be 1 .* got 2"),
        (np.zeros((3, 1)), lambda t: t.expand(3, 4), mt.float32, NonContiguousError, r"stride\(-1\) must be 1 .* got 0"),
        (np.zeros((2, 0), np.float32), lambda t: t, mt.int64, NonContiguousError, r"stride\(0\)"),
    ],
)  # fmt: skip
def test_view_dtype_errors_match_torch(backend: str, array: Any, pick: Any, dtype: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        pick(ours(np.asarray(array), backend)).view(dtype)
    with pytest.raises(RuntimeError):  # torch refuses the same views
        pick(torch.from_numpy(np.array(array))).view(getattr(torch, np.dtype(dtype).name))


def test_view_dtype_ignores_strides_of_size_one_dims(backend: str) -> None:
    """minitensor's size-1 dims may carry other strides than torch's (unsqueeze gives 0): they are not checked."""
    x = ours(F64, backend)
    got = x.unsqueeze(-1).view(mt.float32)
    assert got.shape == (2, 3, 2)
    np.testing.assert_array_equal(got.numpy(), F64.view(np.float32).reshape(2, 3, 2))
    assert ours(F32, backend)[:, 1:3].unsqueeze(0).view(mt.int32).shape == (1, 3, 2)


def test_view_dtype_never_requires_grad(backend: str) -> None:
    """As torch: the result is cut from the graph, for every dtype (the same one too); an integer-to-float view is a
    leaf that may then require grad."""
    x = ours(F32, backend, requires_grad=True)
    tx = torch.from_numpy(F32.copy()).requires_grad_()
    for dtype in (mt.int32, mt.float32, mt.float64, mt.int64):
        got, want = x.view(dtype), tx.view(getattr(torch, dtype.name))
        assert got.requires_grad is want.requires_grad is False
        assert got.grad_fn is None and want.grad_fn is None
    assert (x * 2).view(mt.float64).requires_grad is False
    leaf = ours(np.arange(4, dtype=np.int32), backend).view(mt.float32).requires_grad_()
    assert leaf.requires_grad and leaf.is_leaf


# --- nextafter ---

TINY64 = float(np.finfo(np.float64).smallest_subnormal)
TINY32 = float(np.finfo(np.float32).smallest_subnormal)
BIG32 = float(np.finfo(np.float32).max)
BIG64 = float(np.finfo(np.float64).max)
VALUES = np.array([0.0, -0.0, 1.0, -1.0, 3.0, TINY32, -TINY32, TINY64, 1e-310, BIG32, BIG64, -BIG64, math.inf, -math.inf,
                   math.nan])  # fmt: skip


def assert_same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """Equal dtypes, shapes and bits (any NaN matches any NaN)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    ints = BITS[got.dtype]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    keep = ~np.isnan(want)
    np.testing.assert_array_equal(got[keep].view(ints), want[keep].view(ints))


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
@pytest.mark.parametrize(("x_dtype", "y_dtype"), [(np.float32,) * 2, (np.float64,) * 2, (np.float32, np.float64),
                                                  (np.float64, np.float32), (np.int32, np.float32)])  # fmt: skip
def test_nextafter_matches_torch_bit_for_bit(backend: str, x_dtype: Any, y_dtype: Any) -> None:
    """Every pair of special values (zeros of both signs, subnormals, the largest finite values, infinities, NaN,
    equal pairs), in one broadcast call: a column against a row."""
    x = VALUES[:, None].astype(x_dtype) if x_dtype != np.int32 else np.arange(-3, 4, dtype=np.int32)[:, None]
    y = VALUES[None, :].astype(y_dtype)
    got = mt.nextafter(ours(x, backend), ours(y, backend)).numpy()
    want = torch.nextafter(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    assert got.shape == (len(x), len(VALUES))
    assert_same_bits(got, want)
    if x_dtype == y_dtype:
        assert_same_bits(got, np.nextafter(x, y))


def test_nextafter_float32_steps_float32_bits(backend: str) -> None:
    x = ours(np.array([1.0, 0.0, -0.0, BIG32, math.inf, -TINY32], np.float32), backend)
    y = ours(np.array([2.0, -1.0, 1.0, math.inf, 0.0, 0.0], np.float32), backend)
    got = x.nextafter(y).numpy()  # the method form
    assert got.dtype == np.float32
    ints = got.view(np.int32)
    assert ints[0] == np.float32(1.0).view(np.int32) + 1  # float32's next, not float64's (which rounds back to 1)
    assert ints[1] == np.float32(-TINY32).view(np.int32) and ints[2] == 1
    assert got[3] == math.inf and got[4] == BIG32 and ints[5] == np.float32(-0.0).view(np.int32)


def test_nextafter_zero_dim_and_promotion(backend: str) -> None:
    """A 0-d float64 other does not promote a float32 tensor (PyTorch's rule); a float64 tensor does."""
    x = np.array([1.0, -3.0], np.float32)
    for y in (np.array(2.0), np.array([2.0, -4.0]), np.array(2, np.int64)):
        got = mt.nextafter(ours(x, backend), ours(y, backend)).numpy()
        assert_same_bits(got, torch.nextafter(torch.from_numpy(x), torch.from_numpy(y)).numpy())


def test_nextafter_errors(backend: str) -> None:
    ints = ours(np.array([1, 2], np.int64), backend)
    with pytest.raises(DTypeError, match="int64"):
        mt.nextafter(ints, ints)
    with pytest.raises(DTypeError, match="bool"):
        ours(np.array([True]), backend).nextafter(ours(np.array([False]), backend))
    x = ours(np.array([1.0], np.float32), backend)
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        mt.nextafter(x, 2.0)
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        x.nextafter(2.0)
    with pytest.raises(ShapeError):
        mt.nextafter(ours(np.ones(2, np.float32), backend), ours(np.ones(3, np.float32), backend))
    with pytest.raises(NotImplementedError):  # torch refuses integer input too
        torch.nextafter(torch.tensor([1, 2]), torch.tensor([1, 2]))
    with pytest.raises(TypeError):
        torch.nextafter(torch.tensor([1.0]), 2.0)


@pytest.mark.parametrize(("x_dtype", "y_dtype"), [(np.float32,) * 2, (np.float32, np.float64), (np.float64,) * 2])
def test_nextafter_gradient_matches_torch(backend: str, x_dtype: Any, y_dtype: Any) -> None:
    """1 to input where it moves (NaNs and infinities included), 0 where input == other, zeros to other; broadcast
    gradients summed back, in each input's dtype."""
    x = np.array([[1.0, 0.0, -0.0, 3.0, math.nan, 1.0, math.inf, 5.0]], x_dtype)
    y = np.array([[2.0, -1.0, 0.0, 3.0, 1.0, math.nan, 0.0, math.inf], [0.0, 0.0, -0.0, 3.0, 0.0, 1.0, 1.0, 5.0]],
                 y_dtype)  # fmt: skip
    weights = np.arange(1.0, 17.0).reshape(2, 8)
    a, b = ours(x, backend, requires_grad=True), ours(y, backend, requires_grad=True)
    ta, tb = torch.from_numpy(x).requires_grad_(), torch.from_numpy(y).requires_grad_()
    out, tout = mt.nextafter(a, b), torch.nextafter(ta, tb)
    assert out.requires_grad and out.grad_fn.name() == type(tout.grad_fn).__name__ == "NextafterBackward0"
    out.backward(ours(weights.astype(out.dtype), backend))
    tout.backward(torch.from_numpy(weights.astype(tout.numpy(force=True).dtype)))
    assert a.grad is not None and b.grad is not None
    assert a.grad.dtype == x.dtype and b.grad.dtype == y.dtype
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())
    np.testing.assert_array_equal(b.grad.numpy(), tb.grad.numpy())


def test_nextafter_inplace(backend: str) -> None:
    """nextafter_ computes in the promoted dtype and stores in self's: float32 1.0 toward a float64 2.0 rounds back
    to 1.0 (as torch); broadcasting other to self's shape; a leaf that requires grad refuses."""
    for y in (np.array([2.0], np.float64), np.array([2.0, -1.0], np.float32), np.array(0.0, np.float32)):
        x = np.array([1.0, -0.0], np.float32)
        got, want = ours(x, backend), torch.from_numpy(x.copy())
        assert got.nextafter_(ours(y, backend)) is got
        want.nextafter_(torch.from_numpy(y))
        assert_same_bits(got.numpy(), want.numpy())
    with pytest.raises(mt.GradientError):
        ours(np.ones(2, np.float32), backend, requires_grad=True).nextafter_(ours(np.zeros(2, np.float32), backend))
    with pytest.raises(DTypeError):
        ours(np.ones(2, np.int64), backend).nextafter_(ours(np.zeros(2, np.float32), backend))
