"""Composite ops (lerp, addcmul, logaddexp, nansum, aminmax, diff, broadcast_*, meshgrid, new_*, ...) against torch,
on every backend: values, dtypes, shapes and gradients, with broadcasting, a zero-size dim and transposed input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from torch_oracle import check, dtype_name

import minitensor as mt
from minitensor import DTypeError, EmptyReductionError, ShapeError

torch = pytest.importorskip("torch")


nan, inf = math.nan, math.inf
A = np.array([[0.5, -1.25, 2.0], [3.0, 0.25, -0.75]], dtype=np.float32)
B = np.array([1.5, -0.5, 4.0], dtype=np.float32)
C = np.array([[2.0], [-3.0]], dtype=np.float32)


# --- element-wise composites ---


def test_lerp(backend: str) -> None:
    check(backend, lambda L, a, b: L.lerp(a, b, 0.3), A, B)
    check(backend, lambda L, a, b: L.lerp(a, b, 0.8), A, B)
    check(backend, lambda L, a, b, w: L.lerp(a.t(), b, w), A.T.copy(), A, np.array([[0.2], [0.9]], dtype=np.float32))
    check(backend, lambda L, a, b: a.lerp(b, 2.0), A, C)
    check(backend, lambda L, a, b: L.lerp(a, b, 0.5), np.zeros((0, 3), np.float32), B)
    x = mt.tensor([1.0, 2.0], backend=backend)
    with pytest.raises(DTypeError, match="end must be a float tensor of input's dtype float32, got float64"):
        mt.lerp(x, x.double(), 0.5)
    with pytest.raises(DTypeError, match="input must be a float tensor.*int64"):
        mt.lerp(x.long(), x.long(), 0.5)


def test_addcmul_addcdiv(backend: str) -> None:
    check(backend, lambda L, a, b, c: L.addcmul(a, b, c, value=2), A, B, C)
    check(backend, lambda L, a, b, c: a.t().addcmul(b.t(), c, value=-0.5), A.T.copy(), C.T.copy(), A)
    check(backend, lambda L, a, b, c: L.addcdiv(a, b, c, value=0.25), A, B, C)
    check(backend, lambda L, a, b, c: L.addcdiv(a, b, c), np.zeros((0, 3), np.float32), B, C[:1])
    ints = np.array([[1, 2, 3]]), np.array([4, 5, 6]), np.array([[2], [3]])
    check(backend, lambda L, a, b, c: L.addcmul(a, b, c, value=2), *ints)
    check(backend, lambda L, a, b, c: L.addcmul(a, b, c), ints[0], A.astype(np.float64), ints[2], grad=False)
    check(backend, lambda L, a, b, c: L.addcdiv(a, b, c), ints[0], B, ints[2], grad=False)  # torch cannot backward into int
    i = mt.tensor([1, 2], backend=backend)
    with pytest.raises(DTypeError, match="addcdiv\\(\\) of integer tensors"):
        mt.addcdiv(i.float(), i, i)
    with pytest.raises(DTypeError, match="value=0.5 would be truncated for int64"):
        mt.addcmul(i, i, i, value=0.5)
    with pytest.raises(DTypeError, match="does not support bool"):
        mt.addcmul(i.bool(), i.bool(), i.bool())
    with pytest.raises(ShapeError, match="cannot be broadcast"):
        mt.addcmul(i.float(), i, mt.ones(3, backend=backend))


def test_logaddexp(backend: str) -> None:
    check(backend, lambda L, a, b: L.logaddexp(a, b), A * 40, C * 40)  # exp(120) would overflow float32
    check(backend, lambda L, a, b: L.logaddexp(a.t(), b), A.T.copy(), B)
    check(backend, lambda L, a, b: a.logaddexp(b), np.zeros((2, 0), np.float32), C)
    edges = np.array([-inf, inf, inf, nan, 3.0, -inf], np.float32), np.array([-inf, inf, -inf, 1.0, 3.0, 2.0], np.float32)
    check(backend, lambda L, a, b: L.logaddexp(a, b), *edges, grad=False)
    check(backend, lambda L, a, b: L.logaddexp(a.double(), b), A, np.array([1, 2, 3]))


def test_hypot(backend: str) -> None:
    check(backend, lambda L, a, b: L.hypot(a, b), A, B)
    check(backend, lambda L, a, b: a.t().hypot(b), A.T.copy(), C)
    check(backend, lambda L, a, b: L.hypot(a, b), np.zeros((0, 1), np.float32), B)
    big = np.array([3e30, 1e-30, inf, nan, inf, -4.0], np.float32), np.array([4e30, 1e-30, nan, inf, 1.0, 0.0], np.float32)
    check(backend, lambda L, a, b: L.hypot(a, b), *big, grad=False, rtol=1e-6, atol=0.0)
    check(backend, lambda L, a, b: L.hypot(a, b), A, B.astype(np.float64))


def test_xlogy(backend: str) -> None:
    check(backend, lambda L, a, b: L.xlogy(a, b.abs() + 0.5), A, B)
    check(backend, lambda L, a, b: a.t().xlogy(b), np.array([[0.0, 2.0], [1.5, 0.0]], np.float32), C.T.copy() ** 2)
    edges = np.array([0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0], np.float32), np.array([nan, 0.0, 0.0, 5.0, nan, -1.0, inf], np.float32)
    check(backend, lambda L, a, b: L.xlogy(a, b), *edges, grad=False)
    grads_agree = np.array([0.0, 1.0, 2.0, 0.0], np.float32), np.array([5.0, 0.0, nan, -1.0], np.float32)
    check(backend, lambda L, a, b: L.xlogy(a, b), *grads_agree)
    check(backend, lambda L, a, b: L.xlogy(a, b), np.array([0, 1, 3]), np.array([[2], [3]]))
    check(backend, lambda L, a: L.xlogy(a, 3.0), A)
    check(backend, lambda L, a, b: L.xlogy(a, b), np.zeros((0,), np.float32), B[:1])


# --- reductions ---

N = np.array([[1.0, nan, 3.0], [nan, nan, nan], [2.0, -1.0, 0.5]], dtype=np.float32)
N_SOME = np.where(np.arange(9).reshape(3, 3) == 4, 4.0, N).astype(np.float32)  # no all-NaN row


def test_nansum_nanmean(backend: str) -> None:
    for L_call in (
        lambda L, x: L.nansum(x),
        lambda L, x: L.nansum(x, 1),
        lambda L, x: x.t().nansum(dim=(0,), keepdim=True),
        lambda L, x: L.nansum(x, 0, dtype=L.float64),
        lambda L, x: L.nanmean(x, 1),
        lambda L, x: x.t().nanmean(0, keepdim=True),
        lambda L, x: L.nanmean(x, dtype=L.float64),
    ):
        check(backend, L_call, N, grad=False)  # nanmean's gradient over an all-NaN row: PyTorch's nan, ours 0
        check(backend, L_call, N_SOME)
    check(backend, lambda L, x: (L.nansum(x, 0), L.nanmean(x, 0), L.nansum(x)), np.zeros((0, 2), np.float32))
    check(backend, lambda L, x: (L.nansum(x), x.nansum(0)), np.array([[1, 2], [3, 4]]))
    check(backend, lambda L, x: L.nansum(x), np.array([True, False, True]))
    with pytest.raises(DTypeError, match="nanmean\\(\\) needs a float tensor, got int64"):
        mt.nanmean(mt.tensor([1, 2], backend=backend))


def test_var_mean_std_mean(backend: str) -> None:
    check(backend, lambda L, x: L.var_mean(x), A)
    check(backend, lambda L, x: L.var_mean(x, 1), A)
    check(backend, lambda L, x: L.var_mean(x.t(), 0, correction=0, keepdim=True), A)
    check(backend, lambda L, x: L.var_mean(x, 1, False), A)
    check(backend, lambda L, x: L.std_mean(x, (0, 1)), A)
    check(backend, lambda L, x: L.std_mean(x.t(), dim=1, keepdim=True, correction=2), A)
    check(backend, lambda L, x: L.var_mean(x, 0), np.zeros((0, 2), np.float32), grad=False)
    out = mt.var_mean(mt.tensor(A, backend=backend))
    assert type(out) is tuple and len(out) == 2
    with pytest.raises(DTypeError, match="var_mean\\(\\) needs a float tensor, got int64"):
        mt.var_mean(mt.tensor([1, 2], backend=backend))
    with pytest.raises(DTypeError, match="std_mean\\(\\) needs a float tensor, got bool"):
        mt.std_mean(mt.tensor([True], backend=backend))


def test_aminmax(backend: str) -> None:
    check(backend, lambda L, x: L.aminmax(x), A)
    check(backend, lambda L, x: L.aminmax(x, dim=1), A)
    check(backend, lambda L, x: x.t().aminmax(dim=-1, keepdim=True), A)
    check(backend, lambda L, x: L.aminmax(x, dim=1), np.zeros((0, 3), np.float32))
    check(backend, lambda L, x: L.aminmax(x, dim=0), np.array([[1, 5], [4, -2]]))
    check(backend, lambda L, x: L.aminmax(x), np.array([True, False]))
    check(backend, lambda L, x: L.aminmax(x, dim=0), np.array(2.5, np.float32))
    check(backend, lambda L, x: L.aminmax(x), np.array([nan, 1.0], np.float32), grad=False)
    result = mt.aminmax(mt.tensor(A, backend=backend), dim=0)
    assert result.min.tolist() == A.min(0).tolist() and result.max.tolist() == A.max(0).tolist()
    assert result._fields == ("min", "max")
    empty = mt.zeros(0, 3, backend=backend)
    with pytest.raises(EmptyReductionError, match="aminmax\\(\\): cannot reduce dim 0 of size 0"):
        mt.aminmax(empty, dim=0)
    with pytest.raises(EmptyReductionError, match="aminmax"):
        mt.aminmax(empty)


# --- diff ---


def test_diff(backend: str) -> None:
    sq = np.array([1.0, 4.0, 9.0, 16.0, 25.0], np.float32)
    check(backend, lambda L, x: L.diff(x), sq)
    check(backend, lambda L, x: L.diff(x, n=2), sq)
    check(backend, lambda L, x: x.diff(n=7), sq)
    check(backend, lambda L, x: L.diff(x, n=0), sq)
    check(backend, lambda L, x: L.diff(x.t(), dim=0), A)
    check(backend, lambda L, x, p, a: L.diff(x, 2, 0, prepend=p, append=a), A, B[None] * 2, A[:1] * 3)
    check(backend, lambda L, x, p: L.diff(x, prepend=p), np.array([1, 4, 9]), np.array([0.5], np.float32))
    check(backend, lambda L, x: L.diff(x, dim=1), np.zeros((0, 3), np.float32))
    check(backend, lambda L, x: L.diff(x), np.array([True, False, False, True]))
    x = mt.tensor(A, backend=backend)
    with pytest.raises(ShapeError, match="0-d tensor"):
        mt.diff(mt.tensor(3.0, backend=backend))
    with pytest.raises(ValueError, match="n must be non-negative, got -1"):
        mt.diff(x, n=-1)
    with pytest.raises(ShapeError, match="prepend of shape \\(3,\\) must match input's shape \\(2, 3\\) except along dim 0"):
        mt.diff(x, dim=0, prepend=mt.ones(3, backend=backend))
    with pytest.raises(ShapeError, match="append of shape \\(1, 2\\)"):
        mt.diff(x, dim=0, append=mt.ones(1, 2, backend=backend))
    with pytest.raises(TypeError, match="append must be a Tensor, not int"):
        mt.diff(x, append=5)  # type: ignore[arg-type]


# --- broadcasting and grids ---


def test_broadcast_shapes_and_to(backend: str) -> None:
    assert mt.broadcast_shapes((2, 1), [3, 1, 1], 1) == tuple(torch.broadcast_shapes((2, 1), [3, 1, 1], 1)) == (3, 2, 1)
    assert mt.broadcast_shapes() == () and mt.broadcast_shapes((0, 1), (4,)) == (0, 4)
    with pytest.raises(ShapeError, match="cannot be broadcast together"):
        mt.broadcast_shapes((2,), (3,))
    with pytest.raises(ShapeError, match="negative size"):
        mt.broadcast_shapes((2, -1))
    check(backend, lambda L, x: L.broadcast_to(x, (2, 2, 3)), B)
    check(backend, lambda L, x: x.t().broadcast_to((4, 3, 2)), A)
    check(backend, lambda L, x: x.broadcast_to((2, -1, 0)), np.zeros((3, 1), np.float32))
    source = mt.tensor(B.copy(), backend=backend)
    view = mt.broadcast_to(source, (2, -1))
    assert view.shape == (2, 3) and view.strides[0] == 0
    source.add_(1.0)  # a view: sees the write
    np.testing.assert_allclose(view.to_numpy(), np.broadcast_to(B + 1.0, (2, 3)))
    with pytest.raises(ShapeError, match="cannot broadcast shape \\(3,\\) to \\(2, 4\\)"):
        mt.broadcast_to(source, (2, 4))
    with pytest.raises(ShapeError, match="to fewer dims"):
        mt.broadcast_to(mt.tensor(A, backend=backend), (3,))
    with pytest.raises(ShapeError, match="cannot broadcast shape \\(3,\\) to \\(-1, 3\\)"):
        mt.broadcast_to(source, (-1, 3))


def test_broadcast_tensors(backend: str) -> None:
    check(backend, lambda L, a, b, c: L.broadcast_tensors(a, b, c), B, C, np.array(2.0, np.float32))
    check(backend, lambda L, a, b: L.broadcast_tensors(a.t(), b), A, C.T.copy()[:, :1])
    check(backend, lambda L, a, b: L.broadcast_tensors(a, b), np.zeros((0, 1), np.float32), B)
    assert mt.broadcast_tensors() == ()
    with pytest.raises(ShapeError, match="\\(3,\\), \\(2,\\)"):
        mt.broadcast_tensors(mt.ones(3, backend=backend), mt.ones(2, backend=backend))
    with pytest.raises(TypeError, match="expected Tensor as element 0, but got list"):
        mt.broadcast_tensors([mt.ones(3, backend=backend)])  # type: ignore[arg-type]


def test_meshgrid(backend: str) -> None:
    x, y, z = np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0, 5.0], np.float32), np.array([6.0, 7.0], np.float32)
    check(backend, lambda L, a, b: L.meshgrid(a, b, indexing="ij"), x, y)
    check(backend, lambda L, a, b, c: L.meshgrid(a, b, c, indexing="xy"), x, y, z)
    check(backend, lambda L, a, b: L.meshgrid([a, b], indexing="xy"), x, y)
    check(backend, lambda L, a, b: L.meshgrid(a, b, indexing="ij"), np.array(2.0, np.float32), np.zeros(0, np.float32))
    check(backend, lambda L, a: L.meshgrid(a.t()[0], a[0], indexing="ij"), A)
    ours = mt.meshgrid(mt.arange(2, backend=backend), mt.arange(3, backend=backend))  # "ij" without a warning
    assert [g.tolist() for g in ours] == [[[0, 0, 0], [1, 1, 1]], [[0, 1, 2], [0, 1, 2]]]
    one = mt.arange(3, backend=backend)
    with pytest.raises(ShapeError, match="0-d or 1-d tensors, got shape \\(3, 1\\) at position 1"):
        mt.meshgrid(one, one.reshape(3, 1))
    with pytest.raises(DTypeError, match="int64 and float32"):
        mt.meshgrid(one, one.float())
    with pytest.raises(ValueError, match='indexing must be "ij" or "xy", got \'foo\''):
        mt.meshgrid(one, indexing="foo")
    with pytest.raises(ShapeError, match="at least one tensor"):
        mt.meshgrid()


# --- new_* factories and sizes ---


def test_new_factories(backend: str) -> None:
    ints = mt.tensor([1, 2], backend=backend)
    floats = mt.tensor(A, backend=backend).t()  # non-contiguous: irrelevant to new_*
    ref_i, ref_f = torch.tensor([1, 2]), torch.tensor(A).t()
    pairs = [
        (ints.new_zeros(2, 3), ref_i.new_zeros(2, 3)),
        (floats.new_ones((2,)), ref_f.new_ones((2,))),
        (ints.new_full((2, 2), 2.7), ref_i.new_full((2, 2), 2.7)),
        (floats.new_full([3], 1, dtype=mt.float64), ref_f.new_full([3], 1, dtype=torch.float64)),
        (ints.new_tensor([1.5, 2.5]), ref_i.new_tensor([1.5, 2.5])),
        (floats.new_tensor([[1, 2]]), ref_f.new_tensor([[1, 2]])),
        (floats.new_tensor(ints), ref_f.new_tensor(ref_i)),
        (ints.new_zeros(0, 3, dtype=mt.bool), ref_i.new_zeros(0, 3, dtype=torch.bool)),
    ]
    for got, want in pairs:
        assert got.shape == tuple(want.shape) and dtype_name(got) == dtype_name(want)
        assert got.backend is floats.backend and not got.requires_grad
        np.testing.assert_array_equal(got.to_numpy(), want.numpy())
    empty = floats.new_empty(2, 4, requires_grad=True)
    assert empty.shape == (2, 4) and empty.dtype == np.float32 and empty.requires_grad and empty.grad_fn is None
    copied = floats.new_tensor(floats)
    copied.add_(1.0)
    np.testing.assert_array_equal(floats.to_numpy(), A.T)  # new storage
    assert ints.new_ones(2, backend="simple").backend.name == "simple"
    with pytest.raises(ShapeError, match="negative size"):
        ints.new_zeros(2, -1)
    with pytest.raises(ShapeError, match=r"a shape is a sequence of ints, got \(2.5,\)"):
        ints.new_ones(2.5)


def test_sizes(backend: str) -> None:
    for dtype, torch_dtype in ((mt.float32, torch.float32), (mt.float64, torch.float64), (mt.int64, torch.int64),
                               (mt.int32, torch.int32), (mt.bool, torch.bool)):
        ours, theirs = mt.zeros(2, 3, dtype=dtype, backend=backend), torch.zeros(2, 3, dtype=torch_dtype)
        assert ours.element_size() == theirs.element_size() and ours.itemsize == theirs.itemsize
        assert ours.nbytes == theirs.nbytes and ours.nelement() == theirs.nelement() == 6
        assert ours.ndimension() == theirs.ndimension() == 2
    expanded = mt.zeros(2, 3, backend=backend).expand(4, 2, 3)
    assert expanded.nbytes == torch.zeros(2, 3).expand(4, 2, 3).nbytes == 96
    assert mt.zeros(0, 5, backend=backend).nbytes == 0


# --- softmax as a Tensor method and an mt. function ---


def test_softmax_methods_and_functions(backend: str) -> None:
    check(backend, lambda L, a: a.softmax(-1), A)
    check(backend, lambda L, a: a.t().log_softmax(dim=0), A.T.copy())
    check(backend, lambda L, a: L.softmax(a, 0), C * 30)
    check(backend, lambda L, a: L.log_softmax(a, 1, dtype=L.float64), A)
    check(backend, lambda L, a: a.softmax(1), np.zeros((0, 3), np.float32))
    check(backend, lambda L, a: a.softmax(-1, dtype=L.float32), np.array([[1, 2, 3]]), grad=False)
    x = mt.tensor(A, backend=backend)
    np.testing.assert_array_equal(x.softmax(1).numpy(), mt.nn.functional.softmax(x, dim=1).numpy())  # one kernel
    with pytest.raises(ValueError, match=r"needs dim=.*\(2, 3\)"):
        mt.softmax(x)
