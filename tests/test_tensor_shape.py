"""Shape, view and joining ops on every backend.

Property tests draw shapes with zero-size dims in contiguous, permuted and sliced layouts and compare the
forward result with NumPy and the gradient with central differences (float64). PyTorch is the oracle for
split/chunk sizes, squeeze, movedim, unflatten, diagonal, t(), diag, dtype promotion and which results are
views (share storage) and which are copies.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import strategies as st
from strategies import LAYOUTS, MAX_DIMS, MAX_SIZE, Drawn, central_difference, run_property

import minitensor as mt
from minitensor import IndexOutOfRangeError, NonContiguousError, PermutationError, ShapeError

# --- drawing ---


def shapes0(backend: str, min_dims: int = 0, max_dims: int | None = None, sizes: Any = None) -> st.SearchStrategy[Any]:
    """Shapes whose dims may be 0."""
    top = MAX_DIMS[backend] if max_dims is None else max_dims
    sizes = st.integers(0, MAX_SIZE[backend]) if sizes is None else sizes
    return st.lists(sizes, min_size=min_dims, max_size=max(min_dims, top)).map(tuple)


def laid_out(array: np.ndarray, backend: str, layout: str, seed: int = 0) -> mt.Tensor:
    """A tensor equal to ``array`` (its dtype kept) with ``layout``'s strides; float tensors are leaves that require grad."""
    if layout == "permuted" and array.ndim >= 2:
        order = np.random.default_rng(seed).permutation(array.ndim)
        t = mt.tensor(np.ascontiguousarray(array.transpose(order)), backend=backend).permute(*np.argsort(order).tolist())
    elif layout == "sliced" and array.ndim >= 1:
        wide = np.zeros(array.shape[:-1] + (2 * array.shape[-1],), dtype=array.dtype)
        wide[..., ::2] = array
        t = mt.tensor(wide, backend=backend)[..., ::2]
    else:
        t = mt.tensor(array, backend=backend)
    return t.detach().requires_grad_(array.dtype.kind == "f")


@st.composite
def drawn(draw: Any, backend: str, shape: tuple[int, ...], dtype: Any = np.float64) -> Drawn:
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if np.dtype(dtype).kind == "b":
        array = rng.random(shape) < 0.5
    elif np.dtype(dtype).kind == "i":
        array = rng.integers(-9, 9, shape).astype(dtype)
    else:
        array = rng.uniform(-2.0, 2.0, shape)
    return Drawn(array, laid_out(array, backend, draw(st.sampled_from(LAYOUTS)), draw(st.integers(0, 2**16))))


def pieces(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def check(inputs: list[Drawn], fn: Callable, np_fn: Callable, grad: bool = True) -> None:
    """Forward equals NumPy exactly (same shapes and dtype); for float inputs, the gradient of a weighted sum of
    every output matches central differences."""
    outs, wants = pieces(fn(*[d.tensor for d in inputs])), pieces(np_fn(*[d.array for d in inputs]))
    assert len(outs) == len(wants)
    for out, want in zip(outs, wants):
        assert out.shape == want.shape and out.dtype == want.dtype
        np.testing.assert_array_equal(out.to_numpy(), want)
    if not grad or not outs or inputs[0].array.dtype.kind != "f":
        return
    rng = np.random.default_rng(0)
    weights = [rng.uniform(-1.0, 1.0, out.shape) for out in outs]
    loss = outs[0].sum() * 0.0
    for out, w in zip(outs, weights):
        loss = loss + (out * mt.tensor(w, backend=out.backend)).sum()
    loss.backward()
    flat = lambda *xs: np.concatenate([np.ravel(p) for p in pieces(np_fn(*xs))] + [np.zeros(0)])  # noqa: E731
    expected = central_difference(flat, [d.array for d in inputs], np.concatenate([w.ravel() for w in weights] + [np.zeros(0)]))
    for d, g in zip(inputs, expected):
        assert d.tensor.grad is not None and d.tensor.grad.shape == d.array.shape
        np.testing.assert_allclose(d.tensor.grad.to_numpy(), g, rtol=1e-6, atol=1e-6)


# --- cases: (inputs, minitensor fn, NumPy fn) drawn for one backend ---

Case = tuple[list[Drawn], Callable, Callable]


def one(data: Any, b: str, min_dims: int = 0, max_dims: int | None = None, sizes: Any = None, dtype: Any = np.float64) -> Drawn:
    return data.draw(drawn(b, data.draw(shapes0(b, min_dims, max_dims, sizes)), dtype))


def size(data: Any, b: str) -> int:
    return data.draw(st.integers(0, MAX_SIZE[b]))


def varied_along(data: Any, b: str, dtype: Any = np.float64) -> tuple[int, list[Drawn]]:
    """1-3 tensors of one shape except along a drawn dim (which may be 0 in each)."""
    base = data.draw(shapes0(b, 1))
    dim = data.draw(st.integers(-len(base), len(base) - 1))
    d = dim % len(base)
    count = data.draw(st.integers(1, 3))
    return dim, [data.draw(drawn(b, base[:d] + (size(data, b),) + base[d + 1 :], dtype)) for _ in range(count)]


def case_cat(data: Any, b: str, dtype: Any = np.float64) -> Case:
    dim, ins = varied_along(data, b, dtype)
    return ins, lambda *ts: mt.cat(ts, dim), lambda *xs: np.concatenate(xs, dim)


def case_stack(data: Any, b: str) -> Case:
    shape = data.draw(shapes0(b, 0, MAX_DIMS[b] - 1))
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    ins = [data.draw(drawn(b, shape)) for _ in range(data.draw(st.integers(1, 3)))]
    return ins, lambda *ts: mt.stack(ts, dim), lambda *xs: np.stack(xs, dim)


def case_hstack(data: Any, b: str) -> Case:
    base = data.draw(shapes0(b, 1))
    d = 0 if len(base) == 1 else 1
    ins = [data.draw(drawn(b, base[:d] + (size(data, b),) + base[d + 1 :])) for _ in range(2)]
    return ins, lambda *ts: mt.hstack(ts), lambda *xs: np.hstack(xs)


def case_vstack(data: Any, b: str) -> Case:
    base = data.draw(shapes0(b, 1))
    ins = [data.draw(drawn(b, base if len(base) == 1 else (size(data, b),) + base[1:])) for _ in range(2)]
    return ins, lambda *ts: mt.vstack(ts), lambda *xs: np.vstack(xs)


def dim_of(data: Any, x: Drawn, extra: int = 0) -> int:
    n = x.array.ndim + extra
    return data.draw(st.integers(-n, n - 1))


def case_split_int(data: Any, b: str) -> Case:
    x = one(data, b, 1)
    dim = dim_of(data, x)
    n = x.array.shape[dim]
    k = data.draw(st.integers(0 if n == 0 else 1, MAX_SIZE[b] + 1))
    return [x], lambda t: t.split(k, dim), lambda a: np.split(a, list(range(k, n, k)) if k else [], dim)


def case_split_sizes(data: Any, b: str) -> Case:
    x = one(data, b, 1)
    dim = dim_of(data, x)
    n = x.array.shape[dim]
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=3)))
    sizes = np.diff([0, *cuts, n]).tolist()
    return [x], lambda t: mt.split(t, sizes, dim), lambda a: np.split(a, cuts, dim)


def case_chunk(data: Any, b: str) -> Case:
    x = one(data, b, 1)
    dim = dim_of(data, x)
    n, chunks = x.array.shape[dim], data.draw(st.integers(1, 5))
    k = -(-n // chunks)
    return [x], lambda t: t.chunk(chunks, dim), lambda a: np.split(a, list(range(k, n, k)), dim) if n else [a] * chunks


def case_unbind(data: Any, b: str) -> Case:
    x = one(data, b, 1)
    dim = dim_of(data, x)
    return [x], lambda t: mt.unbind(t, dim), lambda a: [np.take(a, i, dim) for i in range(a.shape[dim])]


def case_flip(data: Any, b: str) -> Case:
    x = one(data, b)
    dims = data.draw(st.lists(st.integers(0, max(x.array.ndim - 1, 0)), unique=True, max_size=x.array.ndim))
    return [x], lambda t: t.flip(dims), lambda a: np.flip(a, tuple(dims))


def case_roll(data: Any, b: str) -> Case:
    x = one(data, b)
    shift = st.integers(-7, 7)
    if x.array.ndim == 0 or data.draw(st.booleans()):
        s = data.draw(shift)
        return [x], lambda t: t.roll(s), lambda a: np.roll(a, s)
    dims = data.draw(st.lists(st.integers(-x.array.ndim, x.array.ndim - 1), unique_by=lambda d: d % x.array.ndim, min_size=1))
    shifts = [data.draw(shift) for _ in dims]
    return [x], lambda t: mt.roll(t, shifts, dims), lambda a: np.roll(a, shifts, dims)


def case_repeat(data: Any, b: str) -> Case:
    x = one(data, b, max_dims=MAX_DIMS[b] - 1)
    reps = [data.draw(st.integers(0, 2)) for _ in range(x.array.ndim + data.draw(st.integers(0, 1)))]
    return [x], lambda t: t.repeat(*reps), lambda a: np.tile(a, reps)


def case_tile(data: Any, b: str) -> Case:
    x = one(data, b, max_dims=MAX_DIMS[b] - 1)
    reps = tuple(data.draw(st.integers(0, 2)) for _ in range(data.draw(st.integers(0, x.array.ndim + 1))))
    return [x], lambda t: mt.tile(t, reps), lambda a: np.tile(a, reps)


def case_narrow(data: Any, b: str) -> Case:
    x = one(data, b, 1)
    dim = dim_of(data, x)
    n = x.array.shape[dim]
    start = data.draw(st.integers(-n, n))
    s = start % n if n and start < 0 else start
    length = data.draw(st.integers(0, n - s))
    return [x], lambda t: t.narrow(dim, start, length), lambda a: np.take(a, range(s, s + length), dim)


def case_select(data: Any, b: str) -> Case:
    x = one(data, b, 1, sizes=st.integers(1, MAX_SIZE[b]))
    dim = dim_of(data, x)
    i = data.draw(st.integers(-x.array.shape[dim], x.array.shape[dim] - 1))
    return [x], lambda t: t.select(dim, i), lambda a: np.take(a, i, dim)


def case_movedim(data: Any, b: str) -> Case:
    x = one(data, b, 1)
    n = x.array.ndim
    src = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
    dst = data.draw(st.permutations(range(n)))[: len(src)]
    dst = [d - n if data.draw(st.booleans()) else d for d in dst]
    return [x], lambda t: t.movedim(src, dst), lambda a: np.moveaxis(a, src, dst)


def case_swapaxes(data: Any, b: str) -> Case:
    x = one(data, b, 1)
    d0, d1 = dim_of(data, x), dim_of(data, x)
    return [x], lambda t: mt.swapaxes(t, d0, d1), lambda a: np.swapaxes(a, d0, d1)


def case_squeeze(data: Any, b: str) -> Case:
    x = one(data, b, sizes=st.sampled_from([0, 1, 1, 2, 3]))
    n = x.array.ndim
    dims = [None] if n == 0 else [None, data.draw(st.integers(-n, n - 1)), tuple(data.draw(st.lists(st.integers(0, n - 1), unique=True)))]
    dim = data.draw(st.sampled_from(dims))
    chosen = range(n) if dim is None else [dim] if isinstance(dim, int) else dim
    axes = tuple(d % n for d in chosen if x.array.shape[d] == 1)
    return [x], lambda t: t.squeeze(dim), lambda a: np.squeeze(a, axes)


def case_unsqueeze(data: Any, b: str) -> Case:
    x = one(data, b, max_dims=MAX_DIMS[b] - 1)
    dim = dim_of(data, x, extra=1)
    return [x], lambda t: mt.unsqueeze(t, dim), lambda a: np.expand_dims(a, dim)


def case_flatten(data: Any, b: str) -> Case:
    x = one(data, b)
    n = x.array.ndim
    if n == 0:
        return [x], lambda t: t.flatten(), lambda a: a.reshape(1)
    start = data.draw(st.integers(0, n - 1))
    end = data.draw(st.integers(start, n - 1))
    shape = x.array.shape[:start] + (int(np.prod(x.array.shape[start : end + 1])),) + x.array.shape[end + 1 :]
    given = start - n * data.draw(st.booleans())
    return [x], lambda t: t.flatten(given, end), lambda a: a.reshape(shape)


def case_unflatten(data: Any, b: str) -> Case:
    x = one(data, b, 1, MAX_DIMS[b] - 1)
    dim = dim_of(data, x)
    n = x.array.shape[dim]
    k = data.draw(st.sampled_from([k for k in range(1, n + 1) if n % k == 0] or [0, 2]))
    resolved = [k, n // k] if n else [k, 0] if k else [0, 3]
    sizes = list(resolved)
    if n and data.draw(st.booleans()):
        sizes[data.draw(st.integers(0, 1))] = -1
    shape = x.array.shape[: dim % x.array.ndim] + tuple(resolved) + x.array.shape[dim % x.array.ndim + 1 :]
    return [x], lambda t: t.unflatten(dim, sizes), lambda a: a.reshape(shape)


def case_tril(data: Any, b: str) -> Case:
    x, k = one(data, b, 2), data.draw(st.integers(-3, 3))
    return [x], lambda t: t.tril(k), lambda a: np.tril(a, k)


def case_triu(data: Any, b: str) -> Case:
    x, k = one(data, b, 2), data.draw(st.integers(-3, 3))
    return [x], lambda t: mt.triu(t, k), lambda a: np.triu(a, k)


def case_diagonal(data: Any, b: str) -> Case:
    x = one(data, b, 2)
    n = x.array.ndim
    d1, d2 = data.draw(st.permutations(range(n)))[:2]
    d1 -= n * data.draw(st.booleans())
    k = data.draw(st.integers(-4, 4))
    return [x], lambda t: t.diagonal(k, d1, d2), lambda a: np.diagonal(a, k, d1, d2)


def case_diag(data: Any, b: str) -> Case:
    x, k = one(data, b, 1, 2), data.draw(st.integers(-3, 3))
    return [x], lambda t: mt.diag(t, k), lambda a: np.diag(a, k)


def case_transposes(data: Any, b: str) -> Case:
    x = one(data, b)
    if x.array.ndim <= 2 and data.draw(st.booleans()):
        return [x], lambda t: t.t(), lambda a: a.T
    if x.array.ndim < 2:
        return [x], lambda t: t.T, lambda a: a.T
    return [x], lambda t: t.mT, lambda a: np.swapaxes(a, -1, -2)


def case_reshape(data: Any, b: str) -> Case:
    x = one(data, b)
    shape = list(data.draw(st.permutations(x.array.shape))) + [1] * data.draw(st.integers(0, 1))
    shape = data.draw(st.permutations(shape))
    if shape and np.prod(shape) and data.draw(st.booleans()):
        shape[0] = -1
    return [x], lambda t: t.reshape(shape), lambda a: a.reshape(shape)


def case_expand(data: Any, b: str) -> Case:
    x = one(data, b, max_dims=MAX_DIMS[b] - 1, sizes=st.sampled_from([0, 1, 1, 2]))
    lead = [data.draw(st.integers(0, 2)) for _ in range(data.draw(st.integers(0, 1)))]
    target = lead + [data.draw(st.integers(0, 3)) if s == 1 else s for s in x.array.shape]
    sizes = lead + [-1 if data.draw(st.booleans()) and s == t else t for s, t in zip(x.array.shape, target[len(lead) :])]
    return [x], lambda t: t.expand(*sizes), lambda a: np.broadcast_to(a, target)


CASES = {name.removeprefix("case_"): fn for name, fn in globals().items() if name.startswith("case_")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_and_backward(backend: str, name: str) -> None:
    def body(data: Any) -> None:
        check(*CASES[name](data, backend))

    run_property(backend, body)


# --- int64 and bool inputs (no gradient) ---

INTEGRAL_CASES = {
    "cat": case_cat,
    "stack": lambda data, b, dt: (
        [data.draw(drawn(b, (2, 3), dt)) for _ in range(3)], lambda *ts: mt.stack(ts, 1), lambda *xs: np.stack(xs, 1)
    ),
    "flip": lambda data, b, dt: ([one(data, b, 2, dtype=dt)], lambda t: t.flip(0, -1), lambda a: np.flip(a, (0, -1))),
    "tril": lambda data, b, dt: ([one(data, b, 2, dtype=dt)], lambda t: t.tril(-1), lambda a: np.tril(a, -1)),
    "triu": lambda data, b, dt: ([one(data, b, 2, dtype=dt)], lambda t: t.triu(1), lambda a: np.triu(a, 1)),
    "roll": lambda data, b, dt: ([one(data, b, 1, dtype=dt)], lambda t: t.roll(1, 0), lambda a: np.roll(a, 1, 0)),
    "repeat": lambda data, b, dt: ([one(data, b, 1, 2, dtype=dt)], lambda t: t.repeat(2, 1, 2), lambda a: np.tile(a, (2, 1, 2))),
}


@pytest.mark.parametrize("dtype", ["int64", "bool"])
@pytest.mark.parametrize("name", sorted(INTEGRAL_CASES))
def test_integer_and_bool_inputs(backend: str, name: str, dtype: str) -> None:
    def body(data: Any) -> None:
        ins, fn, np_fn = INTEGRAL_CASES[name](data, backend, np.dtype(dtype))
        check(ins, fn, np_fn)
        assert not pieces(fn(*[d.tensor for d in ins]))[0].requires_grad

    run_property(backend, body)


# --- PyTorch as the oracle ---


def both(array: np.ndarray, backend: str) -> tuple[mt.Tensor, torch.Tensor]:
    return mt.tensor(array, backend=backend), torch.tensor(array)


def same(ours: Any, theirs: Any) -> None:
    ours, theirs = pieces(ours), pieces(theirs)
    assert [tuple(o.shape) for o in ours] == [tuple(t.shape) for t in theirs]
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o.to_numpy(), t.numpy())


def test_split_and_chunk_sizes_match_pytorch(backend: str) -> None:
    for n in range(0, 7):
        x, tx = both(np.arange(float(n * 2)).reshape(n, 2), backend)
        for k in range(1 if n else 0, 5):
            same(x.split(k), tx.split(k))
        for chunks in range(1, 8):
            same(x.chunk(chunks), tx.chunk(chunks))
            same(mt.chunk(x.T, chunks, 1), torch.chunk(tx.T, chunks, 1))
        for sizes in ([n], [0, n], [n, 0, 0], [n // 2, n - n // 2]):
            same(mt.split(x, sizes), torch.split(tx, sizes))
        same(x.unbind(1), tx.unbind(1))


def test_squeeze_semantics_match_pytorch(backend: str) -> None:
    for shape in [(), (1,), (2,), (1, 2, 1, 3, 1), (0, 1, 2), (1, 1)]:
        x, tx = both(np.zeros(shape), backend)
        dims: list[Any] = [None, 0, -1, (), (0,), tuple(range(len(shape)))]
        dims += [(0, -1), (1, 2)] if len(shape) >= 3 else []
        for dim in dims:
            got = x.squeeze() if dim is None else x.squeeze(dim)
            want = tx.squeeze() if dim is None else tx.squeeze(dim)
            assert got.shape == tuple(want.shape), (shape, dim)
        for dim in range(-len(shape) - 1, len(shape) + 1):
            assert x.unsqueeze(dim).shape == tuple(tx.unsqueeze(dim).shape)


def test_movedim_and_transposes_match_pytorch(backend: str) -> None:
    x, tx = both(np.arange(24.0).reshape(2, 3, 4), backend)
    for k in range(4):
        for src in itertools.permutations(range(3), k):
            src = tuple(s - 3 * (i % 2) for i, s in enumerate(src))
            for dst in itertools.permutations(range(3), k):
                same(x.movedim(src, dst), tx.movedim(src, dst))
    same(mt.moveaxis(x, 0, -1), torch.moveaxis(tx, 0, -1))
    same(x.swapdims(0, 2), tx.swapdims(0, 2))
    same(x.mT, tx.mT)
    for shape in [(), (3,), (2, 3)]:
        y, ty = both(np.arange(float(np.prod(shape))).reshape(shape), backend)
        same(y.t(), ty.t())
        same(mt.t(y), torch.t(ty))
    with pytest.raises(ShapeError, match=r"\(2, 3, 4\)"):
        x.t()
    with pytest.raises(ShapeError, match=r"\(3,\)"):
        _ = mt.tensor([1.0, 2.0, 3.0], backend=backend).mT
    with pytest.raises(PermutationError, match="repeated"):
        x.movedim((0, 0), (1, 2))
    with pytest.raises(PermutationError):
        x.movedim((0, 1), 2)


def test_unflatten_and_flatten_match_pytorch(backend: str) -> None:
    x, tx = both(np.arange(24.0).reshape(2, 12), backend)
    for sizes in [(3, 4), (-1, 4), (2, -1, 3), (12,), (1, 12, 1), (2, 2, 3)]:
        same(x.unflatten(1, sizes), tx.unflatten(1, sizes))
    for bad in [(5, -1), (3, 3), (-1, -1, 12), ()]:
        with pytest.raises(ShapeError, match="unflatten"):
            x.unflatten(1, bad)
        with pytest.raises(RuntimeError):
            tx.unflatten(1, bad)
    z, tz = both(np.zeros((3, 0)), backend)
    same(z.unflatten(1, (2, 0)), tz.unflatten(1, (2, 0)))
    y, ty = both(np.arange(24.0).reshape(2, 3, 4), backend)
    for start, end in itertools.product(range(-3, 3), repeat=2):
        if start % 3 <= end % 3:
            same(y.flatten(start, end), ty.flatten(start, end))
    with pytest.raises(ShapeError, match="start_dim"):
        y.flatten(2, 1)
    same(mt.flatten(mt.tensor(5.0, backend=backend)), torch.flatten(torch.tensor(5.0)))


def test_diagonal_and_diag_match_pytorch(backend: str) -> None:
    x, tx = both(np.arange(24.0).reshape(2, 3, 4), backend)
    for offset in range(-5, 6):
        for d1, d2 in [*itertools.permutations(range(3), 2), (-1, 0)]:
            same(x.diagonal(offset, d1, d2), tx.diagonal(offset, d1, d2))
        same(mt.diagonal(x[0], offset), torch.diagonal(tx[0], offset))
        same(x[1].diag(offset), tx[1].diag(offset))
        same(mt.diag(x[0, 1], offset), torch.diag(tx[0, 1], offset))
    with pytest.raises(ShapeError, match="identical"):
        x.diagonal(0, 1, -2)
    with pytest.raises(ShapeError, match=r"\(2, 3, 4\)"):
        x.diag()


def test_copies_match_pytorch(backend: str) -> None:
    x, tx = both(np.arange(24.0).reshape(2, 3, 4), backend)
    same(x.roll(5), tx.roll(5))
    same(x.roll((1, -2), (0, 2)), tx.roll((1, -2), (0, 2)))
    same(x.repeat(2, 1, 1, 2), tx.repeat(2, 1, 1, 2))
    same(x.tile((2,)), tx.tile((2,)))
    same(x.flip(0, 2), tx.flip(0, 2))
    same(x[0].fliplr(), tx[0].fliplr())
    same(x.flipud(), tx.flipud())
    same(x.tril(1), tx.tril(1))
    same(mt.triu(x, -1), torch.triu(tx, -1))
    same(mt.hstack([x, x]), torch.hstack([tx, tx]))
    same(mt.vstack([x[0, 0], x[1, 1]]), torch.vstack([tx[0, 0], tx[1, 1]]))
    same(mt.concat([x, x], -1), torch.concat([tx, tx], -1))
    same(mt.concatenate([x, x], axis=1), torch.concatenate([tx, tx], axis=1))
    same(mt.stack([x[0, 0], x[1, 2]], -1), torch.stack([tx[0, 0], tx[1, 2]], -1))
    same(mt.stack([x[0, 0, 0], x[1, 1, 1]]), torch.stack([tx[0, 0, 0], tx[1, 1, 1]]))


@pytest.mark.parametrize("second", ["float32", "float64", "int32", "int64", "bool"])
@pytest.mark.parametrize("first", ["float32", "float64", "int32", "int64", "bool"])
def test_cat_promotes_dtypes_as_pytorch(backend: str, first: str, second: str) -> None:
    a, b = np.arange(6).reshape(2, 3) % 2, np.arange(4).reshape(2, 2)
    x = [mt.tensor(a, backend=backend, dtype=first), mt.tensor(b, backend=backend, dtype=second)]
    tx = [torch.tensor(a, dtype=getattr(torch, first)), torch.tensor(b, dtype=getattr(torch, second))]
    out, want = mt.cat(x, 1), torch.cat(tx, 1)
    assert str(out.dtype) == str(want.dtype).removeprefix("torch.")
    same(out, want)
    # A 1-D empty tensor is skipped whatever its rank but still takes part in promotion.
    empty = [mt.zeros(0, backend=backend, dtype=second), x[0]]
    t_empty = [torch.zeros(0, dtype=getattr(torch, second)), tx[0]]
    assert str(mt.cat(empty, 1).dtype) == str(torch.cat(t_empty, 1).dtype).removeprefix("torch.")
    same(mt.cat(empty, 1), torch.cat(t_empty, 1))


# name -> op applied alike to a minitensor tensor (lib=mt) and a torch tensor (lib=torch)
VIEW_OR_COPY: dict[str, Callable[[Any, Any], Any]] = {
    "view": lambda lib, x: x.view(-1) if x.is_contiguous() else x.view(x.shape),
    "reshape": lambda lib, x: x.reshape(-1),
    "reshape_rows": lambda lib, x: x.reshape(x.shape[0], -1),
    "reshape_as": lambda lib, x: x.reshape_as(x.unsqueeze(0)),
    "view_as": lambda lib, x: x.view_as(x.unsqueeze(0)),
    "contiguous": lambda lib, x: x.contiguous(),
    "flatten": lambda lib, x: x.flatten(),
    "flatten_01": lambda lib, x: lib.flatten(x, 0, 1),
    "flatten_12": lambda lib, x: x.flatten(1),
    "unflatten": lambda lib, x: x.unflatten(0, (1, x.shape[0])),
    "transpose": lambda lib, x: lib.transpose(x, 0, 1),
    "permute": lambda lib, x: x.permute(2, 0, 1),
    "movedim": lambda lib, x: x.movedim(0, -1),
    "swapaxes": lambda lib, x: x.swapaxes(0, 2),
    "mT": lambda lib, x: x.mT,
    "t": lambda lib, x: x[0].t(),
    "narrow": lambda lib, x: x.narrow(-1, 1, 1),
    "select": lambda lib, x: x.select(1, 0),
    "unsqueeze": lambda lib, x: x.unsqueeze(1),
    "squeeze": lambda lib, x: x.squeeze(),
    "expand": lambda lib, x: x.expand(2, *x.shape),
    "expand_as": lambda lib, x: x[:1].expand_as(x),
    "diagonal": lambda lib, x: x.diagonal(1, 1, 2),
    "split": lambda lib, x: x.split(1, 1),
    "chunk": lambda lib, x: x.chunk(2, 2),
    "unbind": lambda lib, x: x.unbind(1),
    "cat": lambda lib, x: lib.cat([x], 0),
    "stack": lambda lib, x: lib.stack([x, x]),
    "flip": lambda lib, x: x.flip(0),
    "roll": lambda lib, x: x.roll(1, 0),
    "repeat": lambda lib, x: x.repeat(1, 1, 1),
    "tile": lambda lib, x: x.tile((1,)),
    "tril": lambda lib, x: x.tril(),
    "diag_2d": lambda lib, x: x[0].diag(),
    "diag_1d": lambda lib, x: lib.diag(x[0, 0]),
    "hstack": lambda lib, x: lib.hstack([x]),
}
LAYOUTS_ALIKE: dict[str, Callable[[Any], Any]] = {
    "contiguous": lambda x: x,
    "permuted": lambda x: x.permute(2, 0, 1),
    "sliced": lambda x: x[:, :, ::2],
    "rows": lambda x: x[1:],
}


def writes_through(root: mt.Tensor, out: mt.Tensor) -> bool:
    """True when writing into ``out`` (through the backend) changes ``root``: they share storage."""
    before = root.to_numpy()
    out.backend.map("id", out._lift(-99.0)._data, out._data)
    return not np.array_equal(root.to_numpy(), before)


@pytest.mark.parametrize("name", sorted(VIEW_OR_COPY))
def test_views_and_copies_as_pytorch(backend: str, name: str) -> None:
    """Values equal PyTorch's, and each result shares storage with its input exactly when PyTorch's does."""
    array = np.arange(24.0).reshape(2, 3, 4)
    for layout, prepare in LAYOUTS_ALIKE.items():
        troot = torch.tensor(array)
        theirs = pieces(VIEW_OR_COPY[name](torch, prepare(troot)))
        same(pieces(VIEW_OR_COPY[name](mt, prepare(mt.tensor(array, backend=backend)))), theirs)
        for i, want in enumerate(theirs):
            shared = want.untyped_storage().data_ptr() == troot.untyped_storage().data_ptr()
            root = mt.tensor(array, backend=backend)
            out = pieces(VIEW_OR_COPY[name](mt, prepare(root)))[i]
            assert writes_through(root, out) == shared, f"{name} on a {layout} tensor: PyTorch shares storage: {shared}"


def test_view_succeeds_exactly_where_pytorch_can(backend: str) -> None:
    """view() of strided layouts: possible (and equal) exactly when PyTorch's view is, else NonContiguousError."""
    rng = np.random.default_rng(5)
    array = np.arange(24.0).reshape(2, 3, 4)
    bases = dict(LAYOUTS_ALIKE) | {"col": lambda x: x[:, 1:2], "perm2": lambda x: x.permute(1, 0, 2)}
    for fn in bases.values():
        x, tx = fn(mt.tensor(array, backend=backend)), fn(torch.tensor(array))
        sizes = [int(s) for s in tx.shape]
        targets = [(-1,), tuple(sizes[::-1]), (sizes[0] * sizes[1], -1), (sizes[0], -1), (1, *sizes), (*sizes, 1)]
        targets += [tuple(int(s) for s in rng.permutation(sizes)) for _ in range(3)]
        for shape in targets:
            try:
                want = tx.view(shape)
            except RuntimeError:
                with pytest.raises(NonContiguousError, match="reshape"):
                    x.view(shape)
                continue
            same(x.view(shape), want)


def test_zero_size_and_0d_results(backend: str) -> None:
    x, tx = both(np.zeros((0, 3)), backend)
    same(x.split(2), tx.split(2))
    same(x.chunk(3), tx.chunk(3))
    same(mt.cat([x, x], 0), torch.cat([tx, tx], 0))
    same(mt.stack([x, x], 2), torch.stack([tx, tx], 2))
    same(x.roll(2, 1), tx.roll(2, 1))
    same(x.flip(0), tx.flip(0))
    same(x.T.diagonal(), tx.T.diagonal())
    same(x.repeat(3, 0), tx.repeat(3, 0))
    s, ts = both(np.array(2.0), backend)
    for ours, theirs in [(s.squeeze(0), ts.squeeze(0)), (s.transpose(0, -1), ts.transpose(0, -1)), (s.flip(0), ts.flip(0)),
                         (s.roll(3), ts.roll(3)), (s.repeat(2, 2), ts.repeat(2, 2)), (s.movedim(0, 0), ts.movedim(0, 0))]:
        same(ours, theirs)


def test_gradients_flow_through_pieces_and_joins(backend: str) -> None:
    x = mt.tensor(np.arange(12.0).reshape(3, 4), backend=backend, requires_grad=True)
    a, b = x.split([1, 3], 1)
    (mt.cat([b * 2.0, a], 1).sum() + x.diagonal(1).sum() + mt.diag(x.diagonal()).sum()).backward()
    want = np.full((3, 4), 2.0)
    want[:, 0] = 1.0
    want += np.eye(3, 4, 1) + np.eye(3, 4)
    np.testing.assert_array_equal(x.grad.to_numpy(), want)
    y = mt.tensor([1.0, 2.0], backend=backend, dtype="float32", requires_grad=True)
    z = mt.tensor([3.0], backend=backend, dtype="float64", requires_grad=True)
    out = mt.cat([y, z])
    assert out.dtype == np.float64
    (out * mt.tensor([1.0, 2.0, 3.0], backend=backend, dtype="float64")).sum().backward()
    assert y.grad.dtype == np.float32 and y.grad.to_numpy().tolist() == [1.0, 2.0] and z.grad.to_numpy().tolist() == [3.0]


def test_errors_name_shapes_and_dims(backend: str) -> None:
    a = mt.zeros(2, 3, backend=backend)
    b = mt.zeros(3, 3, backend=backend)
    with pytest.raises(ShapeError, match=r"dim 1.*\(2, 3\) and \(3, 3\)"):
        mt.cat([a, b], 1)
    with pytest.raises(ShapeError, match=r"\(2, 3\).*\(3,\)"):
        mt.cat([a, mt.zeros(3, backend=backend)])
    with pytest.raises(ShapeError, match="0-d"):
        mt.cat([mt.tensor(1.0, backend=backend)])
    with pytest.raises(ShapeError, match="non-empty"):
        mt.cat([])
    with pytest.raises(ShapeError, match=r"\(2, 3\) at position 0 and \(3, 3\) at position 1"):
        mt.stack([a, b])
    with pytest.raises(ShapeError, match=r"\[1, 1\] do not sum to the size 3 of dim 1 \(shape \(2, 3\)\)"):
        a.split([1, 1], 1)
    with pytest.raises(ShapeError, match="split size"):
        a.split(0)
    with pytest.raises(ShapeError, match="chunks"):
        a.chunk(0)
    with pytest.raises(IndexOutOfRangeError, match="dim 2"):
        mt.cat([a, a], 2)
    with pytest.raises(IndexOutOfRangeError, match="dim 3"):
        mt.stack([a, a], 3)
    for call in (lambda: a.flip(2), lambda: a.roll(1, -3), lambda: a.squeeze(2), lambda: a.unsqueeze(3), lambda: a.transpose(0, 2),
                 lambda: a.movedim(2, 0), lambda: a.diagonal(0, 0, 2), lambda: a.unbind(2), lambda: a.permute(0, 2)):
        with pytest.raises(IndexOutOfRangeError, match="out of range"):
            call()
    with pytest.raises(IndexOutOfRangeError, match=r"start 2 \+ length 2 exceeds the size 3 of dim 1 \(shape \(2, 3\)\)"):
        a.narrow(1, 2, 2)
    with pytest.raises(IndexOutOfRangeError, match=r"start -4"):
        a.narrow(1, -4, 1)
    with pytest.raises(ShapeError, match="more than once"):
        a.flip(0, -2)
    with pytest.raises(ShapeError, match="one shift per dim"):
        a.roll((1, 2), 0)
    with pytest.raises(ShapeError, match=r"repeat\(2,\).*\(2, 3\)"):
        a.repeat(2)
    with pytest.raises(ShapeError, match=r"tril.*\(3,\)"):
        mt.zeros(3, backend=backend).tril()
    with pytest.raises(ShapeError, match=r"\(2, 3\) to \(-1, 2, 3\)"):
        a.expand(-1, 2, 3)
    with pytest.raises(NonContiguousError, match=r"\(3, 2\)"):
        a.T.view(6)


@pytest.mark.parametrize("make", [
    lambda b: mt.zeros(0, 10**15, 10**15, backend=b),
    lambda b: mt.rand(0, 10**10, 10**10, backend=b),
    lambda b: mt.zeros(0, backend=b).view(-1, 10**15, 10**15),
    lambda b: mt.zeros(0, backend=b).reshape(0, 10**15, 10**15),
    lambda b: mt.zeros(0, backend=b).unflatten(0, (0, 10**15, 10**15)),
    lambda b: mt.zeros(1, backend=b).expand(10**15, 10**15),
    lambda b: mt.zeros(0, 1, backend=b).repeat(1, 10**30),
], ids=["zeros", "rand", "view", "reshape", "unflatten", "expand", "repeat"])
def test_shapes_past_int64_strides_raise_shape_error(backend: str, make: Any) -> None:
    """A shape whose non-zero dims multiply past what int64 strides and byte counts hold is refused where it is made
    (the fuzzer once got a zero-size view whose ``.numpy()`` then failed inside NumPy)."""
    with pytest.raises(ShapeError, match="too large"):
        make(backend)
    x = mt.zeros(0, 2**40, backend=backend).view(2**40, 0)  # large but representable: fine, like NumPy's
    assert x.shape == (2**40, 0) and x.numpy().shape == np.zeros((2**40, 0)).shape
