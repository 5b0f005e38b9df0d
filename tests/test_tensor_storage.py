"""Storage-level Tensor methods (tensor_storage.py) and interop (dlpack.py) against torch 2.13: ``resize_ resize_as_
set_ data_ptr new apply_ map_ map2_ share_memory_ is_shared pin_memory is_pinned output_nr is_inference``, the
top-level ``isreal is_signed is_inference typename``, DLPack round trips with NumPy and torch (shared memory) and
``frombuffer``."""

from __future__ import annotations

import array
import warnings

import numpy as np
import pytest
from conftest import CPU_BACKENDS

import minitensor as mt
from minitensor import BackendError, DTypeError, GradientError, ShapeError

torch = pytest.importorskip("torch")


def same(got, want) -> None:
    assert tuple(got.shape) == tuple(want.shape) and got.dtype.name == str(want.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(got.to_numpy(), want.numpy())


def pair(values, backend: str, dtype: str = "float32"):
    return mt.tensor(values, dtype=dtype, backend=backend), torch.tensor(values, dtype=getattr(torch, dtype))


# --- resize_, set_ ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_resize_keeps_storage_order_like_torch(backend: str) -> None:
    x, tx = pair(np.arange(6.0), backend)
    for size in ((2, 2), (4,), (6,), (1, 6), ()):
        assert x.resize_(size) is x
        tx.resize_(size)
        same(x, tx)
        assert x.stride() == tx.stride()
    y, ty = pair(np.arange(6.0).reshape(2, 3), backend)
    y, ty = y.t(), ty.t()
    y.resize_((2, 2))  # a transposed tensor reads its storage in order
    ty.resize_((2, 2))
    same(y, ty)
    z, tz = pair(np.arange(4.0), backend)
    view = z[1:]
    z.resize_(3, 3)  # grows: the first elements are kept, the rest unspecified
    tz.resize_(3, 3)
    np.testing.assert_array_equal(z.to_numpy().reshape(-1)[:4], tz.numpy().reshape(-1)[:4])
    assert view.tolist() == [1.0, 2.0, 3.0]
    w, tw = pair(np.arange(6.0), backend)
    assert w.resize_as_(mt.zeros(3, 1)) is w and w.shape == tuple(tw.resize_as_(torch.zeros(3, 1)).shape)
    same(w, tw)


def test_resize_errors_match_torch() -> None:
    for L, error in ((mt, GradientError), (torch, RuntimeError)):
        x = L.zeros(3, requires_grad=True)
        with pytest.raises(error, match="cannot resize variables that require grad"):
            x.resize_(2)
        with pytest.raises(error, match="cannot resize"), L.no_grad():
            x.resize_(2)
    with pytest.raises(ShapeError):
        mt.zeros(3).resize_(-1, 2)
    with pytest.raises(TypeError, match="size"):
        mt.zeros(3).resize_()
    with pytest.raises(TypeError, match="size"):
        torch.zeros(3).resize_()


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_set_shares_storage_like_torch(backend: str) -> None:
    a, ta = pair(np.zeros(3), backend)
    b, tb = pair(np.arange(4.0), backend)
    assert a.set_(b) is a
    ta.set_(tb)
    same(a, ta)
    a[0] = 9.0
    ta[0] = 9.0
    same(b, tb)
    assert a.data_ptr() == b.data_ptr() and ta.data_ptr() == tb.data_ptr()
    a.set_(b, 1, (2,))
    ta.set_(tb, 1, (2,))
    same(a, ta)
    a.set_(b, 0, (2, 2), (1, 2))
    ta.set_(tb, 0, (2, 2), (1, 2))
    same(a, ta)
    assert a.stride() == ta.stride() and a.storage_offset() == ta.storage_offset()
    a.set_()
    ta.set_()
    same(a, ta)
    with pytest.raises(DTypeError, match="Could not set tensor of type"):
        a.set_(mt.zeros(2, dtype="float64", backend=backend))
    with pytest.raises(RuntimeError, match="Could not set tensor of type"):
        ta.set_(torch.zeros(2, dtype=torch.float64))
    leaf = mt.zeros(2, requires_grad=True, backend=backend)
    with pytest.raises(GradientError, match="leaf"):
        leaf.set_(mt.zeros(2, backend=backend))
    s, ts = pair(np.arange(6.0), backend)
    assert s.set_(s) is s and s.set_(s, 1, (2, 2)) is s
    ts.set_(ts, 1, (2, 2))
    same(s, ts)
    source = mt.tensor([1.0, 2.0, 3.0], requires_grad=True, backend=backend)
    c = mt.zeros(1, backend=backend).set_(source, 1, (2,))  # differentiable to the source (torch: NotImplemented)
    (c * mt.tensor([3.0, 4.0], backend=backend)).sum().backward()
    assert source.grad.tolist() == [0.0, 3.0, 4.0]


# --- small queries ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_data_ptr_sharing_pinning_and_inference_queries(backend: str) -> None:
    x, tx = pair(np.arange(6.0).reshape(2, 3), backend)
    assert x[1].data_ptr() - x.data_ptr() == tx[1].data_ptr() - tx.data_ptr() == 12
    assert x.t().data_ptr() == x.data_ptr() and x.clone().data_ptr() != x.data_ptr()
    assert mt.zeros(0).data_ptr() == torch.zeros(0).data_ptr() == 0
    assert x.is_shared() is tx.is_shared() is False
    assert x.share_memory_() is x and x.is_shared()
    assert x.pin_memory() is x and x.is_pinned() is tx.is_pinned() is False
    assert x.output_nr == tx.output_nr == 0 and (x * 1).output_nr == 0
    assert x.is_inference() is tx.is_inference() is False
    with mt.inference_mode():
        assert not mt.zeros(1).is_inference() and mt.is_inference_mode_enabled()
    assert not mt.is_inference_mode_enabled() and mt.is_inference(x) is False
    with mt.no_grad():
        assert not mt.is_inference_mode_enabled()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_top_level_type_queries_match_torch(dtype: str) -> None:
    x, tx = pair([1, 0], "simple", dtype)
    same(mt.isreal(x), torch.isreal(tx))
    same(x.isreal(), tx.isreal())
    assert mt.is_signed(x) is torch.is_signed(tx)
    assert mt.typename(x) == torch.typename(tx).replace("torch.", "minitensor.")
    assert mt.typename(mt.nn.Parameter(x.float())) == "minitensor.FloatTensor"


def test_typename_of_other_objects_and_errors() -> None:
    assert mt.typename(3) == torch.typename(3) == "int" and mt.typename("a") == "str"
    assert mt.typename(mt.nn.Linear(1, 1)) == f"{mt.nn.Linear.__module__}.Linear"
    assert mt.typename(mt.nn.Linear) == f"{mt.nn.Linear.__module__}.Linear"
    for name in ("isreal", "is_inference"):
        with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'input' \(position 1\) must be Tensor, not int"):
            getattr(mt, name)(3)
        with pytest.raises(TypeError, match="must be Tensor, not int"):
            getattr(torch, name)(3)


# --- new ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_legacy_new_matches_torch(backend: str) -> None:
    x, tx = pair([1.5, 2.5], backend)
    for args in ((), ([1, 2],), ((1, 2),), ([[1.5, 2], [3, 4]],), ([],), (np.array([1, 2]),)):
        same(x.new(*args), tx.new(*args))
    for args in ((2, 3), (3,), (mt.Size([2, 1]),), (0,)):
        targs = tuple(torch.Size(a) if isinstance(a, mt.Size) else a for a in args)
        got, want = x.new(*args), tx.new(*targs)
        assert got.shape == tuple(want.shape) and got.dtype == mt.float32 and got.backend is x.backend
    xi, txi = pair([1, 2], backend, "int64")
    same(xi.new([1.7, 2]), txi.new([1.7, 2]))
    other = mt.ones(2, backend=backend)
    shared = x.new(other)
    shared[0] = 5.0
    assert other[0].item() == 5.0 and x.new(device="simple").device == "simple"
    with pytest.raises(TypeError, match="data must be a sequence"):
        x.new(2.5)
    with pytest.raises(TypeError, match="data must be a sequence"):
        tx.new(2.5)
    with pytest.raises(TypeError):
        x.new(mt.ones(2, dtype="float64", backend=backend))
    with pytest.raises(ShapeError):
        x.new(-1)


# --- apply_, map_, map2_ ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_python_maps_match_torch(backend: str) -> None:
    for dtype, fn in (("float32", lambda v: v * 2 + 1), ("int64", lambda v: v / 3), ("int32", lambda v: 2.7),
                      ("bool", lambda v: not v), ("float64", lambda v: v ** 0.5)):
        x, tx = pair([[4, 0, 1], [9, 2, 3]], backend, dtype)
        view, tview = x[:, ::2], tx[:, ::2]
        seen, tseen = [], []
        assert view.apply_(lambda v, s=seen, f=fn: s.append(type(v)) or f(v)) is view
        tview.apply_(lambda v, s=tseen, f=fn: s.append(type(v)) or f(v))
        same(x, tx)
        assert seen == tseen
    y, ty = pair(np.arange(6.0).reshape(2, 3), backend)
    o, to = pair([10.0, 20.0, 30.0], backend)
    assert y.map_(o, lambda a, b: a + b) is y
    ty.map_(to, lambda a, b: a + b)
    same(y, ty)
    c, tc = pair([[1.0], [2.0]], backend)
    y.map2_(o, c, lambda a, b, d: a - b * d)
    ty.map2_(to, tc, lambda a, b, d: a - b * d)
    same(y, ty)


def test_python_map_errors_match_torch() -> None:
    for L, grad_error in ((mt, GradientError), (torch, RuntimeError)):
        with pytest.raises(grad_error, match="requires grad"):
            L.zeros(2, requires_grad=True).apply_(lambda v: v)
        with pytest.raises(TypeError):
            L.zeros(2).apply_(lambda v: "a")
        with pytest.raises(TypeError):
            L.zeros(2).map_(L.zeros(2, dtype=L.int64), lambda a, b: a)
        with pytest.raises(TypeError):
            L.zeros(2).map_(3, lambda a, b: a)
    with pytest.raises(ShapeError):
        mt.zeros(3).map_(mt.zeros(2, 3), lambda a, b: a)


def test_python_maps_are_cpu_only_like_torch(backend: str) -> None:
    x = mt.tensor([1.0, 2.0], backend=backend)
    if backend == "cuda":
        with pytest.raises(BackendError, match="CPU"):
            x.apply_(lambda v: v)
        with pytest.raises(BackendError, match="only CPU tensors"):
            x.pin_memory()
        with pytest.raises(BackendError, match="cpu"):
            np.from_dlpack(x)
        assert x.__dlpack_device__() == (2, 0)
    else:
        assert x.apply_(lambda v: -v).tolist() == [-1.0, -2.0] and x.__dlpack_device__() == (1, 0)
    assert x.resize_(1).tolist() in ([1.0], [-1.0]) and x.data_ptr() != 0


# --- DLPack, frombuffer ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_dlpack_round_trips_share_memory(backend: str, dtype: str) -> None:
    base = mt.tensor(np.arange(12).reshape(3, 4) % 2, dtype=dtype, backend=backend)
    for x in (base, base.t(), base[1:, ::2], base[:, :1].expand(3, 5)):
        for other in (np.from_dlpack(x), torch.from_dlpack(x)):
            assert tuple(other.shape) == x.shape and other.__dlpack_device__() == x.__dlpack_device__()
            np.testing.assert_array_equal(np.asarray(other), x.to_numpy())
    mine = mt.from_dlpack(base.t())
    assert mine.shape == (4, 3) and mine.stride() == (1, 4) and mine.dtype == base.dtype
    np.testing.assert_array_equal(mine.to_numpy(), base.t().to_numpy())
    if dtype == "float32":  # writes are seen across the boundary
        np.from_dlpack(base)[0, 0] = 7.0
        torch.from_dlpack(base)[0, 1] = 8.0
        mt.from_dlpack(base)[0, 2] = 9.0
        assert base[0, :3].tolist() == [7.0, 8.0, 9.0]
        t = torch.arange(6.0).reshape(2, 3)[:, 1:]
        m = mt.from_dlpack(t)
        m[1, 1] = -1.0
        assert t[1, 1].item() == -1.0 and m.stride() == t.stride()
        a = np.arange(4.0)
        mt.from_dlpack(mt.to_dlpack(mt.from_dlpack(a)))[3] = 5.0  # through a bare capsule
        assert a[3] == 5.0
        assert not np.shares_memory(mt.from_dlpack(a, copy=True)._data.storage, a)
        legacy = mt.from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(3.0)))  # NumPy imports it read-only
        with pytest.raises(ValueError, match="read-only"):
            legacy[0] = 1.0


def test_dlpack_errors_and_devices() -> None:
    with pytest.raises(GradientError, match="requires grad"):
        np.from_dlpack(mt.zeros(2, requires_grad=True))
    with pytest.raises(DTypeError, match="uint8"):
        mt.from_dlpack(np.zeros(2, np.uint8))
    with pytest.raises(TypeError, match="__dlpack__"):
        mt.from_dlpack([1, 2])
    with pytest.raises(TypeError):
        mt.to_dlpack(np.zeros(2))
    reversed_ = mt.from_dlpack(np.arange(4.0)[::-1].copy()[::-1])  # negative strides: copied
    assert reversed_.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert mt.from_dlpack(torch.arange(3.0), device="simple").device == "simple"
    assert mt.from_dlpack(np.zeros((0, 3))).shape == (0, 3)


def test_frombuffer_matches_torch() -> None:
    data = bytearray(range(16))
    for kwargs in ({"dtype": "int32"}, {"dtype": "int32", "count": 2, "offset": 4}, {"dtype": "float32", "count": -2},
                   {"dtype": "int64", "offset": 8}):
        tkwargs = {**kwargs, "dtype": getattr(torch, kwargs["dtype"])}
        same(mt.frombuffer(data, **kwargs), torch.frombuffer(data, **tkwargs))
    shared = mt.frombuffer(data, dtype=mt.int32)
    shared[0] = 100
    assert data[0] == 100
    doubles = array.array("d", [1.0, 2.0])
    x = mt.frombuffer(doubles, dtype=mt.float64, requires_grad=True)
    assert x.requires_grad and x.tolist() == [1.0, 2.0]
    for kwargs in ({"count": 0}, {"offset": 3}, {"offset": 16}, {"count": 5}):
        with pytest.raises(ShapeError):
            mt.frombuffer(data, dtype=mt.int32, **kwargs)
        with pytest.raises(ValueError):
            torch.frombuffer(data, dtype=torch.int32, **kwargs)
    with pytest.raises(TypeError):
        mt.frombuffer(data)
    with pytest.warns(UserWarning, match="not writable"):
        ro = mt.frombuffer(bytes(8), dtype=mt.int32)
    assert ro.tolist() == [0, 0]
    with pytest.raises(ValueError, match="read-only"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ro[0] = 1
