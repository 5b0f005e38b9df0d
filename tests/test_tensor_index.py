"""Indexing on every backend: advanced ``__getitem__`` and the gather/scatter family.

Property tests draw random mixed keys (ints, slices, None, Ellipsis, int lists with negative and repeated
entries, bool masks) over contiguous, permuted and sliced tensors with zero-size dims and compare with NumPy
(with PyTorch where the two differ: PyTorch applies ints before advanced indices) and the gradient with central
differences in float64. PyTorch is the oracle for a table of tricky keys and for every function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import strategies as st
from strategies import LAYOUTS, central_difference, make_tensor, run_property

import minitensor as mt
from minitensor import DTypeError, IndexOutOfRangeError, ShapeError

SIZES = {"simple": 3, "fast": 3, "cuda": 2}

# --- drawing keys ---


@st.composite
def index_key(draw: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """A key over ``shape`` mixing ints, slices, None, one Ellipsis, int lists (one length, so they broadcast) and
    at most one bool mask (alone among the advanced items, so the key is valid)."""
    length = draw(st.integers(1, 3))
    use_mask = draw(st.booleans()) and len(shape) > 0
    key: list[Any] = []
    dim = 0
    while dim < len(shape):
        n = shape[dim]
        if draw(st.integers(0, 5)) == 0:
            key.append(None)
        kinds = ["slice", "list"] + (["int"] if n else [])
        kind = draw(st.sampled_from(kinds + (["mask"] if use_mask else [])))
        if kind == "mask":
            width = draw(st.integers(1, min(2, len(shape) - dim)))
            rng = np.random.default_rng(draw(st.integers(0, 2**16)))
            key.append(rng.random(shape[dim : dim + width]) < 0.5)
            use_mask = False
            dim += width
            continue
        if kind == "int":
            key.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            bound = st.none() | st.integers(-4, 4)
            key.append(slice(draw(bound), draw(bound), draw(st.none() | st.integers(1, 3))))
        else:
            entries = st.integers(-n, n - 1) if n else st.nothing()
            key.append(draw(st.lists(entries, min_size=length if n else 0, max_size=length if n else 0)))
        dim += 1
    if any(isinstance(k, np.ndarray) for k in key):
        key = [slice(None) if isinstance(k, list) else k for k in key]  # a mask's count need not broadcast with lists
    if draw(st.booleans()):  # an Ellipsis in place of a run of items
        at = draw(st.integers(0, len(key)))
        key[at : draw(st.integers(at, len(key)))] = [Ellipsis]
    return tuple(key)


def torch_key(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """The key with lists and arrays as torch tensors (int64 or bool)."""
    out = []
    for k in key:
        if isinstance(k, list):
            out.append(torch.tensor(k, dtype=torch.int64))
        elif isinstance(k, np.ndarray):
            out.append(torch.from_numpy(k))
        else:
            out.append(k)
    return tuple(out)


def reference(array: np.ndarray, key: tuple[Any, ...]) -> np.ndarray:
    """array[key] by NumPy; by PyTorch when ints and advanced items mix (PyTorch selects the ints first)."""
    has_int = any(isinstance(k, int) for k in key)
    has_advanced = any(isinstance(k, (list, np.ndarray)) for k in key)
    if has_int and has_advanced:
        return torch.from_numpy(array)[torch_key(key)].numpy()
    return array[tuple(np.asarray(k, dtype=np.int64) if isinstance(k, list) else k for k in key)]


def drawn_tensor(data: Any, b: str, min_size: int = 0) -> tuple[np.ndarray, mt.Tensor]:
    shape = tuple(data.draw(st.lists(st.integers(min_size, SIZES[b]), min_size=0, max_size=3)))
    array = np.random.default_rng(data.draw(st.integers(0, 2**16))).uniform(-2.0, 2.0, shape)
    return array, make_tensor(array, b, data.draw(st.sampled_from(LAYOUTS)), data.draw(st.integers(0, 2**16)))


def test_getitem_matches_numpy(backend: str) -> None:
    def body(data: Any) -> None:
        array, x = drawn_tensor(data, backend)
        key = data.draw(index_key(array.shape))
        try:
            want = reference(array, key)
        except (IndexError, ValueError):
            with pytest.raises((ShapeError, IndexOutOfRangeError)):
                x[key]
            return
        out = x[key]
        assert out.shape == want.shape
        np.testing.assert_array_equal(out.to_numpy(), want)
        weight = np.random.default_rng(1).uniform(-1.0, 1.0, want.shape)
        (out * mt.tensor(weight, backend=backend)).sum().backward()
        (expected,) = central_difference(lambda a: reference(a, key), [array], weight, eps=0.5)
        assert x.grad is not None
        np.testing.assert_allclose(x.grad.to_numpy(), expected, rtol=1e-9, atol=1e-9)

    run_property(backend, body)


# --- PyTorch oracle: tricky keys ---

X_SHAPE = (2, 3, 4)
KEYS: list[tuple[str, Callable[[Any], Any]]] = [
    ("x[:, [0, 2]]", lambda lib: (slice(None), [0, 2])),
    ("x[[0, 1], [1, 2]]", lambda lib: ([0, 1], [1, 2])),
    ("x[:, None, [1, 0]]", lambda lib: (slice(None), None, [1, 0])),
    ("x[..., [0, 0]]", lambda lib: (Ellipsis, [0, 0])),
    ("x[[0, 1], :, [1, 0]]", lambda lib: ([0, 1], slice(None), [1, 0])),
    ("x[[0, 1], None, [1, 0]]", lambda lib: ([0, 1], None, [1, 0])),
    ("x[0, :, [0, 1]]", lambda lib: (0, slice(None), [0, 1])),
    ("x[[[0], [1]], 1:, [0, 1, 3]]", lambda lib: ([[0], [1]], slice(1, None), [0, 1, 3])),
    ("x[[-1, -2, -1]]", lambda lib: ([-1, -2, -1],)),
    ("x[[]]", lambda lib: (lib.tensor([], dtype=lib.int64),)),
    ("x[mask2d]", lambda lib: (lib.tensor([[True, False, True], [False, True, True]]),)),
    ("x[:, mask1d]", lambda lib: (slice(None), lib.tensor([True, False, True]))),
    ("x[mask3d]", lambda lib: (lib.tensor(np.arange(24).reshape(2, 3, 4) % 3 == 0),)),
    ("x[np mask]", lambda lib: (np.array([False, True]),)),
    ("x[list mask]", lambda lib: ([True, False],)),
    ("x[0-d int]", lambda lib: (lib.tensor(1),)),
    ("x[0-d int, :, list]", lambda lib: (lib.tensor(1), slice(None), [3, 3])),
    ("x[int32 tensor]", lambda lib: (slice(None), lib.tensor([2, 0], dtype=lib.int32))),
    ("x[np int array]", lambda lib: (np.array([[1, 0], [0, 1]]),)),
    ("x[:, transposed int tensor]", lambda lib: (slice(None), lib.tensor([[0, 1], [2, 2]]).T)),
    ("x[None, ..., None]", lambda lib: (None, Ellipsis, None)),
    ("x[1:, None, ::2]", lambda lib: (slice(1, None), None, slice(None, None, 2))),
]


def as_torch(key: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(torch.tensor(k) if isinstance(k, list) else torch.from_numpy(k) if isinstance(k, np.ndarray) else k for k in key)


def lib_on(backend: str) -> Any:
    """A stand-in for ``mt`` whose ``tensor`` makes tensors on ``backend``."""

    class Lib:
        int64, int32 = mt.int64, mt.int32

        @staticmethod
        def tensor(data: Any, dtype: Any = None) -> mt.Tensor:
            return mt.tensor(data, dtype=dtype, backend=backend)

    return Lib


@pytest.mark.parametrize("name, make", KEYS, ids=[k[0] for k in KEYS])
def test_getitem_matches_pytorch(backend: str, name: str, make: Callable[[Any], Any]) -> None:
    array = np.random.default_rng(0).uniform(-1.0, 1.0, X_SHAPE)
    x = mt.tensor(array, backend=backend, requires_grad=True)
    tx = torch.tensor(array, requires_grad=True)
    out, want = x[make(lib_on(backend))], tx[as_torch(make(torch))]
    assert out.shape == tuple(want.shape)
    np.testing.assert_array_equal(out.to_numpy(), want.detach().numpy())
    weight = np.random.default_rng(1).uniform(-1.0, 1.0, tuple(want.shape))
    (out * mt.tensor(weight, backend=backend)).sum().backward()
    (want * torch.tensor(weight)).sum().backward()
    assert x.grad is not None and tx.grad is not None
    np.testing.assert_allclose(x.grad.to_numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_repeated_indices_accumulate(backend: str) -> None:
    x = mt.tensor([1.0, 2.0, 3.0], backend=backend, requires_grad=True)
    x[[0, 0, 2, 0]].sum().backward()
    assert x.grad is not None and x.grad.tolist() == [3.0, 0.0, 1.0]


def test_basic_keys_stay_views(backend: str) -> None:
    x = mt.tensor(np.arange(24.0).reshape(2, 3, 4), backend=backend)
    for key in [(1, slice(None)), (Ellipsis, 0), (slice(1, None), None)]:
        out = x[key]
        assert out._data.storage is x._data.storage or np.shares_memory(out._data.storage, x._data.storage)


# --- PyTorch oracle: functions ---

IDX = [[0, 2, 1, 0], [2, 1, 0, 1]]
NAMES = ["gather", "take_along_dim", "index_select", "masked_select", "scatter", "scatter_add", "index_add", "masked_fill"]
FUNCTIONS: list[tuple[str, Callable[[Any, Any, Any], Any]]] = [
    ("gather dim 0", lambda lib, x, s: lib.gather(x, 0, lib.tensor(IDX))),
    ("gather dim 1, smaller index", lambda lib, x, s: x.gather(1, lib.tensor([[3, 3], [0, 1]]))),
    ("gather int32", lambda lib, x, s: lib.gather(x, -1, lib.tensor([[1], [2], [0]], dtype=lib.int32))),
    ("take_along_dim", lambda lib, x, s: lib.take_along_dim(x, lib.tensor([[1], [0], [3]]), 1)),
    ("take_along_dim broadcast", lambda lib, x, s: lib.take_along_dim(x, lib.tensor([[2], [0]]), 0)),
    ("take_along_dim flat", lambda lib, x, s: x.take_along_dim(lib.tensor([11, 0, 0]))),
    ("index_select", lambda lib, x, s: lib.index_select(x, 1, lib.tensor([3, 0, 3]))),
    ("index_select dim 0", lambda lib, x, s: x.index_select(0, lib.tensor([2, 2]))),
    ("masked_select", lambda lib, x, s: lib.masked_select(x, x > 0)),
    ("masked_select broadcast", lambda lib, x, s: x.masked_select(lib.tensor([True, False, False, True]))),
    ("scatter_add", lambda lib, x, s: lib.scatter_add(x, 0, lib.tensor(IDX), s)),
    ("scatter_add smaller index", lambda lib, x, s: x.scatter_add(1, lib.tensor([[0, 0], [3, 1]]), s[:, :2])),
    ("scatter", lambda lib, x, s: lib.scatter(x, 0, lib.tensor([[0, 2, 1, 0], [2, 1, 0, 1]]), s)),
    ("scatter row", lambda lib, x, s: x.scatter(1, lib.tensor([[3, 0]]), s[:1, :2])),
    ("scatter value", lambda lib, x, s: lib.scatter(x, 1, lib.tensor([[1], [2], [0]]), 5.0)),
    ("index_add", lambda lib, x, s: lib.index_add(x, 0, lib.tensor([2, 0]), s)),
    ("index_add alpha repeated", lambda lib, x, s: x.index_add(0, lib.tensor([1, 1]), s, alpha=-2.0)),
    ("masked_fill", lambda lib, x, s: lib.masked_fill(x, x > 0, 3.0)),
    ("masked_fill broadcast", lambda lib, x, s: x.masked_fill(lib.tensor([True, False, True, False]), -1.5)),
]


@pytest.mark.parametrize("name, fn", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_functions_match_pytorch(backend: str, name: str, fn: Callable[[Any, Any, Any], Any]) -> None:
    rng = np.random.default_rng(0)
    a, src = rng.uniform(-1.0, 1.0, (3, 4)), rng.uniform(-1.0, 1.0, (2, 4))
    x, s = mt.tensor(a, backend=backend, requires_grad=True), mt.tensor(src, backend=backend, requires_grad=True)
    tx, ts = torch.tensor(a, requires_grad=True), torch.tensor(src, requires_grad=True)
    lib = lib_on(backend)
    for attr in NAMES:
        setattr(lib, attr, getattr(mt, attr))
    out, want = fn(lib, x, s), fn(torch, tx, ts)
    assert out.shape == tuple(want.shape)
    np.testing.assert_allclose(out.to_numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)
    weight = rng.uniform(-1.0, 1.0, tuple(want.shape))
    (out * mt.tensor(weight, backend=backend)).sum().backward()
    (want * torch.tensor(weight)).sum().backward()
    for mine, theirs in ((x, tx), (s, ts)):
        if theirs.grad is None:
            assert mine.grad is None or not mine.grad.to_numpy().any()
        else:
            assert mine.grad is not None
            np.testing.assert_allclose(mine.grad.to_numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_masked_fill_tensor_value_and_int_input(backend: str) -> None:
    x = mt.tensor([[1, -2], [3, -4]], backend=backend)
    assert x.masked_fill(x < 0, mt.tensor(7, backend=backend)).tolist() == [[1, 7], [3, 7]]
    v = mt.tensor(2.0, backend=backend, requires_grad=True)
    y = mt.zeros(2, 2, backend=backend, dtype=mt.float64).masked_fill(mt.tensor([True, False], backend=backend), v)
    y.sum().backward()
    assert y.tolist() == [[2.0, 0.0], [2.0, 0.0]] and v.grad is not None and v.grad.item() == 2.0


def test_nonzero_matches_pytorch(backend: str) -> None:
    for array in [np.array([[0, 1, 2], [3, 0, 0]]), np.zeros((2, 0)), np.array([True, False, True]), np.array(5.0)]:
        x, t = mt.tensor(array, backend=backend), torch.from_numpy(array)
        out = mt.nonzero(x)
        assert out.dtype == mt.int64 and out.tolist() == torch.nonzero(t).tolist() and out.shape == tuple(torch.nonzero(t).shape)
        assert [c.tolist() for c in x.nonzero(as_tuple=True)] == [c.tolist() for c in torch.nonzero(t, as_tuple=True)]


def test_gather_and_scatter_add_match_numpy(backend: str) -> None:
    """Values against NumPy; gradients: gather scatter-adds back, scatter_add passes d to input, d gathered to src."""
    def body(data: Any) -> None:
        array, x = drawn_tensor(data, backend, min_size=1)
        if not array.ndim:
            return
        dim = data.draw(st.integers(0, array.ndim - 1))
        rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
        index = rng.integers(0, array.shape[dim], array.shape)
        out = mt.gather(x, dim, mt.tensor(index, backend=backend))
        want = np.take_along_axis(array, index, dim)
        np.testing.assert_array_equal(out.to_numpy(), want)
        src = rng.uniform(-1.0, 1.0, array.shape)
        added = mt.scatter_add(x, dim, mt.tensor(index, backend=backend), mt.tensor(src, backend=backend))
        expected = array.copy()
        grid = list(np.indices(array.shape))
        grid[dim] = index
        np.add.at(expected, tuple(grid), src)
        np.testing.assert_allclose(added.to_numpy(), expected, rtol=1e-12, atol=1e-12)
        weight = rng.uniform(-1.0, 1.0, array.shape)
        (out * mt.tensor(weight, backend=backend)).sum().backward()
        gathered_grad = np.zeros(array.shape)
        np.add.at(gathered_grad, tuple(grid), weight)  # repeated indices accumulate
        assert x.grad is not None
        np.testing.assert_allclose(x.grad.to_numpy(), gathered_grad, rtol=1e-12, atol=1e-12)
        x.grad = None
        s = mt.tensor(src, backend=backend, requires_grad=True)
        (mt.scatter_add(x, dim, mt.tensor(index, backend=backend), s) * mt.tensor(weight, backend=backend)).sum().backward()
        assert x.grad is not None and s.grad is not None
        np.testing.assert_allclose(x.grad.to_numpy(), weight, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(s.grad.to_numpy(), weight[tuple(grid)], rtol=1e-12, atol=1e-12)

    run_property(backend, body)


# --- errors ---


def test_index_errors(backend: str) -> None:
    x = mt.tensor(np.arange(12.0).reshape(3, 4), backend=backend)
    for key in ([0, 3], [-4, 0], (slice(None), [4]), (slice(None), mt.tensor([-5], backend=backend))):
        with pytest.raises(IndexOutOfRangeError, match=r"out of range \[-\d, \d\) for a dim of size \d"):
            x[key]
    with pytest.raises(DTypeError, match="float"):
        x[mt.tensor([0.0, 1.0], backend=backend)]
    with pytest.raises(DTypeError, match="float"):
        x[[0.5]]
    for scalar_mask in (True, np.bool_(False), mt.tensor(True, backend=backend)):
        with pytest.raises(DTypeError, match="bool"):
            x[scalar_mask]
    with pytest.raises(IndexOutOfRangeError, match=r"mask of shape \(2,\)"):
        x[mt.tensor([True, False], backend=backend)]
    with pytest.raises(ShapeError, match="broadcast"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexOutOfRangeError, match="too many"):
        x[0, 0, [0]]
    with pytest.raises(IndexOutOfRangeError, match="step"):
        x[::-1, [0]]


def test_function_errors(backend: str) -> None:
    x = mt.tensor(np.arange(12.0).reshape(3, 4), backend=backend)
    i = mt.tensor([[0, 1]], backend=backend)
    with pytest.raises(IndexOutOfRangeError, match=r"\[0, 3\)"):
        mt.gather(x, 0, mt.tensor([[3]], backend=backend))
    with pytest.raises(IndexOutOfRangeError, match=r"\[0, 4\)"):
        mt.index_select(x, 1, mt.tensor([-1], backend=backend))
    with pytest.raises(IndexOutOfRangeError):
        mt.scatter_add(x, 0, mt.tensor([[5]], backend=backend), x)
    with pytest.raises(DTypeError, match="float64"):
        mt.gather(x, 0, i.double())
    with pytest.raises(ShapeError, match=r"\(2,\)"):
        mt.gather(x, 0, mt.tensor([0, 1], backend=backend))
    with pytest.raises(ShapeError, match="larger"):
        mt.gather(x, 0, mt.tensor([[0] * 5], backend=backend))
    with pytest.raises(DTypeError, match="bool"):
        mt.masked_select(x, x)
    with pytest.raises(ShapeError, match=r"\(2,\)"):
        mt.masked_select(x, mt.tensor([True, False], backend=backend))
    with pytest.raises(ShapeError, match=r"\(2,\)"):
        mt.masked_fill(x, mt.tensor([True, False], backend=backend), 0.0)
    with pytest.raises(ShapeError, match="0-d"):
        mt.masked_fill(x, x > 0, mt.tensor([1.0], backend=backend))
    with pytest.raises(DTypeError, match="int64"):
        mt.scatter_add(x, 0, i, x.long())
    with pytest.raises(ShapeError):
        mt.index_add(x, 0, mt.tensor([0], backend=backend), x)


def test_scatter_add_src_larger_than_index(backend: str) -> None:
    """Only src's head (index's shape) is read; the rest of src gets a zero gradient."""
    a, src, index = np.zeros((3, 4)), np.arange(8.0).reshape(2, 4), [[0, 0], [3, 1]]
    s = mt.tensor(src, backend=backend, requires_grad=True)
    out = mt.scatter_add(mt.tensor(a, backend=backend), 1, mt.tensor(index, backend=backend), s)
    want = torch.scatter_add(torch.tensor(a), 1, torch.tensor(index), torch.tensor(src))
    np.testing.assert_array_equal(out.to_numpy(), want.numpy())
    (out * mt.tensor(np.arange(12.0).reshape(3, 4), backend=backend)).sum().backward()
    assert s.grad is not None and s.grad.tolist() == [[0.0, 0.0, 0.0, 0.0], [7.0, 5.0, 0.0, 0.0]]


def test_index_select_reads_its_index_range_once(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """index_select checks its index once (two host reads), not again inside the advanced-indexing path, and still
    gives torch's values."""
    from minitensor import tensor_index

    calls = []
    real = tensor_index._check_range
    monkeypatch.setattr(tensor_index, "_check_range", lambda *args: calls.append(args[1:]) or real(*args))
    x = np.arange(12.0).reshape(3, 4)
    got = mt.index_select(mt.tensor(x, backend=backend), 1, mt.tensor([3, 0, 3], backend=backend))
    want = torch.index_select(torch.tensor(x), 1, torch.tensor([3, 0, 3]))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert calls == [(0, 4, "index_select")]
    mt.tensor(x, backend=backend)[mt.tensor([2, -1], backend=backend)]  # plain indexing checks [-size, size)
    assert calls[1:] == [(-3, 3, "index")]
