"""In-place ops and item assignment, checked against NumPy and PyTorch on contiguous and view targets.

Bulk cases run on the CPU backends; the ``backend`` fixture (cuda under the simulator too) runs two tiny cases.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from conftest import CPU_BACKENDS

import minitensor as mt
from minitensor import DTypeError, GradientError, ShapeError


def base_array() -> np.ndarray:
    return np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5


def targets(name: str) -> list[tuple[Any, Any, Callable[[Any], Any]]]:
    """(minitensor base, torch base, view maker) for a contiguous whole, a transposed view and a strided slice."""
    out = []
    for view in (lambda t: t, lambda t: t.t(), lambda t: t[::2, 1:]):
        out.append((mt.tensor(base_array(), backend=name), torch.tensor(base_array()), view))
    return out


def close(a: Any, b: Any) -> None:
    expected = b.detach().numpy() if isinstance(b, torch.Tensor) else np.asarray(b)
    np.testing.assert_allclose(np.asarray(a), expected, rtol=1e-5, atol=1e-6)


# (name, op on a minitensor/torch view given the matching module); the view's shape may differ per layout
OPS: list[tuple[str, Callable[[Any, Any, Any], Any]]] = [
    ("add_", lambda x, m, w: x.add_(w, alpha=2)),
    ("sub_", lambda x, m, w: x.sub_(1.5)),
    ("mul_", lambda x, m, w: x.mul_(w)),
    ("div_", lambda x, m, w: x.div_(2.0)),
    ("pow_", lambda x, m, w: x.pow_(2)),
    ("clamp_", lambda x, m, w: x.clamp_(-1.0, 2.0)),
    ("clamp_min", lambda x, m, w: x.clamp_(min=0.5)),
    ("zero_", lambda x, m, w: x.zero_()),
    ("fill_", lambda x, m, w: x.fill_(3.25)),
    ("copy_", lambda x, m, w: x.copy_(w)),
    ("masked_fill_", lambda x, m, w: x.masked_fill_(w > 1, -7.0)),
    ("iadd", lambda x, m, w: x.__iadd__(w)),
    ("isub", lambda x, m, w: x.__isub__(2)),
    ("imul", lambda x, m, w: x.__imul__(w)),
    ("itruediv", lambda x, m, w: x.__itruediv__(w + 10)),
]


@pytest.mark.parametrize("name", CPU_BACKENDS)
@pytest.mark.parametrize("op", [o for _, o in OPS], ids=[n for n, _ in OPS])
def test_inplace_values_views_and_identity(name: str, op: Callable[[Any, Any, Any], Any]) -> None:
    for base, tbase, view in targets(name):
        x, tx = view(base), view(tbase)
        w = np.linspace(-2, 3, x.numel(), dtype=np.float32).reshape(x.shape)
        before = id(x)
        out = op(x, mt, mt.tensor(w, backend=name))
        op(tx, torch, torch.tensor(w))
        assert out is x and id(x) == before
        close(x, tx)
        close(base, tbase)  # the base (and so every view) sees the write


@pytest.mark.parametrize("name", CPU_BACKENDS)
def test_index_add_scatter_inplace_match_torch(name: str) -> None:
    for base, tbase, view in targets(name):
        x, tx = view(base), view(tbase)
        rows = x.shape[0]
        idx = [0, rows - 1, 0]
        src = np.ones((3, x.shape[1]), dtype=np.float32) * np.arange(1, 4, dtype=np.float32)[:, None]
        x.index_add_(0, mt.tensor(idx, backend=name), mt.tensor(src, backend=name), alpha=2)
        tx.index_add_(0, torch.tensor(idx), torch.tensor(src), alpha=2)
        close(base, tbase)
        sidx = np.zeros((1, x.shape[1]), dtype=np.int64) + rows - 1
        ssrc = np.full((1, x.shape[1]), 4.0, dtype=np.float32)
        x.scatter_(0, mt.tensor(sidx, backend=name), mt.tensor(ssrc, backend=name))
        tx.scatter_(0, torch.tensor(sidx), torch.tensor(ssrc))
        close(base, tbase)
        x.scatter_add_(1, mt.tensor(np.zeros((rows, 2), dtype=np.int64), backend=name), mt.ones(rows, 2, backend=name))
        tx.scatter_add_(1, torch.zeros(rows, 2, dtype=torch.int64), torch.ones(rows, 2))
        close(base, tbase)
        x.scatter_(1, mt.tensor([[0]] * rows, backend=name), value=9.0)
        tx.scatter_(1, torch.tensor([[0]] * rows), value=9.0)
        close(base, tbase)


def test_inplace_on_backend_fixture(backend: str) -> None:
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]], backend=backend)
    col = x[:, 1]
    x += mt.tensor([10.0, 20.0], backend=backend)
    x[0] = 0.0
    x[mt.tensor([1], backend=backend), mt.tensor([0], backend=backend)] = 5.0
    np.testing.assert_allclose(x.numpy(), [[0.0, 0.0], [5.0, 24.0]])
    np.testing.assert_allclose(col.numpy(), [0.0, 24.0])


def test_no_grad_sgd_on_backend_fixture(backend: str) -> None:
    w = mt.tensor([1.0, -2.0], backend=backend, requires_grad=True)
    (w * w).sum().backward()
    with mt.no_grad():
        w -= 0.25 * w.grad
    assert w.is_leaf and w.requires_grad
    np.testing.assert_allclose(w.numpy(), [0.5, -1.0])


# --- dtypes ---


@pytest.mark.parametrize("name", CPU_BACKENDS)
def test_result_type_cast_errors(name: str) -> None:
    x = mt.tensor([1, 2, 3], backend=name)
    with pytest.raises(DTypeError, match="result type Float can't be cast to the desired output type Long"):
        x += 1.5
    with pytest.raises(DTypeError, match="Float.*Long"):
        x.mul_(mt.tensor([1.0, 2.0, 3.0], backend=name))
    with pytest.raises(DTypeError, match="Float.*Long"):
        x.div_(2)  # true division gives floats, as in PyTorch
    b = mt.tensor([True, False], backend=name)
    with pytest.raises(DTypeError, match="Long.*Bool"):
        b.add_(1)
    np.testing.assert_array_equal(x.numpy(), [1, 2, 3])  # nothing written on error
    x += 2
    f = mt.tensor([1.0, 2.0], dtype=mt.float32, backend=name)
    f.add_(mt.tensor([0.5, 0.5], dtype=mt.float64, backend=name))  # float64 into float32 is allowed
    assert f.dtype == mt.float32
    np.testing.assert_array_equal(x.numpy(), [3, 4, 5])
    np.testing.assert_allclose(f.numpy(), [1.5, 2.5])
    x.copy_(mt.tensor([1.7, -2.7, 3.2], backend=name))  # copy_ and fill_ cast anything, truncating like torch
    t = torch.tensor([1, 2, 3]).copy_(torch.tensor([1.7, -2.7, 3.2]))
    np.testing.assert_array_equal(x.numpy(), t.numpy())
    with pytest.raises(ShapeError):
        mt.zeros(3, backend=name).add_(mt.ones(2, 3, backend=name))


@pytest.mark.parametrize("name", CPU_BACKENDS)
def test_random_fills(name: str) -> None:
    mt.manual_seed(0)
    x = mt.zeros(200, 3, backend=name)
    v = x[:, 1]
    assert x.normal_(2.0, 0.5) is x
    assert abs(float(x.mean()) - 2.0) < 0.1 and 0.4 < float(x.std()) < 0.6
    assert float(v.sum()) == pytest.approx(float(x[:, 1].sum()))
    v.uniform_(-1.0, -0.5)
    col = x.numpy()[:, 1]
    assert (col >= -1.0).all() and (col <= -0.5).all()
    assert x.numpy()[:, 0].mean() > 1.5  # the other columns are untouched
    with pytest.raises(DTypeError):
        mt.zeros(2, dtype=mt.int64, backend=name).normal_()


# --- item assignment ---

KEYS: list[Any] = [
    1,
    -1,
    (0, 2),
    slice(1, None),
    (slice(None, None, 2), slice(1, 3)),
    (None, 1),
    (Ellipsis, 2),
    (1, Ellipsis, None),
    [0, 2, 2],
    ([0, 1], [3, 0]),
    (slice(None), [1, 0]),
    (np.array([[0], [2]]), [1, 3]),
]


def as_torch_key(key: Any) -> Any:
    """The same key for torch (lists and arrays as int64 tensors)."""
    items = key if isinstance(key, tuple) else (key,)
    converted = tuple(torch.tensor(np.asarray(k)) if isinstance(k, (list, np.ndarray)) else k for k in items)
    return converted if isinstance(key, tuple) else converted[0]


def as_mt_key(key: Any, name: str) -> Any:
    """The key with its arrays as int64 minitensor tensors (lists stay lists, to test both forms)."""
    items = key if isinstance(key, tuple) else (key,)
    converted = tuple(mt.tensor(k, backend=name) if isinstance(k, np.ndarray) else k for k in items)
    return converted if isinstance(key, tuple) else converted[0]


@pytest.mark.parametrize("name", CPU_BACKENDS)
@pytest.mark.parametrize("key", KEYS, ids=[repr(k) for k in KEYS])
def test_setitem_matches_torch(name: str, key: Any) -> None:
    for base, tbase, view in targets(name):
        if view(tbase).dim() != 2 or view(tbase).shape[1] < 4 or view(tbase).shape[0] < 3:
            x, tx = base, tbase  # the keys are written for (3, 4)
        else:
            x, tx = view(base), view(tbase)
        shape = tx[as_torch_key(key)].shape
        value = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) + 100
        x[as_mt_key(key, name)] = mt.tensor(value, backend=name)
        tx[as_torch_key(key)] = torch.tensor(value)
        close(base, tbase)
        x[as_mt_key(key, name)] = -3  # a number broadcasts
        tx[as_torch_key(key)] = -3
        close(base, tbase)
        if len(shape) >= 1 and shape[-1] > 1:  # a value broadcasting along the leading dims
            row = np.arange(shape[-1], dtype=np.float32)
            x[as_mt_key(key, name)] = mt.tensor(row, backend=name)
            tx[as_torch_key(key)] = torch.tensor(row)
            close(base, tbase)


@pytest.mark.parametrize("name", CPU_BACKENDS)
def test_setitem_masks_views_and_dtypes(name: str) -> None:
    a = base_array()
    x, tx = mt.tensor(a, backend=name), torch.tensor(a)
    x[x > 0] = 0.0
    tx[tx > 0] = 0.0
    close(x, tx)
    x[mt.tensor([True, False, True], backend=name), 1:3] = mt.tensor([7.0, 8.0], backend=name)
    tx[torch.tensor([True, False, True]), 1:3] = torch.tensor([7.0, 8.0])
    close(x, tx)
    v = x.t()  # writing into a view writes the base
    v[0] = mt.tensor([1.0, 2.0, 3.0], backend=name)
    tx.t()[0] = torch.tensor([1.0, 2.0, 3.0])
    close(x, tx)
    i = mt.tensor([1, 2, 3], backend=name)
    i[1] = 9.7  # numbers are cast to the tensor's dtype, as in torch
    i[mt.tensor([0], backend=name)] = mt.tensor([4.2], backend=name)
    np.testing.assert_array_equal(i.numpy(), [4, 9, 3])
    y = mt.arange(5.0, backend=name)
    y[1:] = y[:-1]
    y[2:] = y[:-2]  # overlapping read and write of the same storage
    ty = torch.arange(5.0)
    ty[1:] = ty[:-1].clone()
    ty[2:] = ty[:-2].clone()
    close(y, ty)
    with pytest.raises(ShapeError):
        x[0] = mt.ones(3, backend=name)
    with pytest.raises(ShapeError):
        x[[0, 1]] = mt.ones(3, 4, backend=name)


@pytest.mark.parametrize("name", CPU_BACKENDS)
def test_setitem_repeated_indices_last_wins(name: str) -> None:
    x = mt.zeros(3, backend=name)
    x[[1, 2, 1]] = mt.tensor([2.0, 3.0, 5.0], backend=name)  # documented: the last write wins (torch: undefined)
    np.testing.assert_allclose(x.numpy(), [0.0, 5.0, 3.0])


# --- autograd ---


@pytest.mark.parametrize("name", CPU_BACKENDS)
def test_no_grad_update_keeps_the_leaf(name: str) -> None:
    """Before in-place ops, `w -= ...` rebound w to a new tensor that was no longer a leaf requiring grad."""
    w = mt.tensor([1.0, 2.0], backend=name, requires_grad=True)
    storage = w._data.storage
    alias = w
    (w * 3).sum().backward()
    with mt.no_grad():
        w -= 0.1 * w.grad
        w *= 2
        w.clamp_(max=1.5)
    assert w is alias and w._data.storage is storage
    assert w.requires_grad and w.is_leaf and w.history is None
    np.testing.assert_allclose(w.numpy(), [1.4, 1.5])


@pytest.mark.parametrize("name", CPU_BACKENDS)
def test_manual_sgd_loop_matches_torch(name: str) -> None:
    rng = np.random.default_rng(0)
    xs, ys = rng.normal(size=(8, 3)), rng.normal(size=(8, 1))
    w0, b0 = rng.normal(size=(3, 1)), np.zeros(1)
    w = mt.tensor(w0, dtype=mt.float64, backend=name, requires_grad=True)
    b = mt.tensor(b0, dtype=mt.float64, backend=name, requires_grad=True)
    tw, tb = torch.tensor(w0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    x, tx = mt.tensor(xs, dtype=mt.float64, backend=name), torch.tensor(xs)
    y, ty = mt.tensor(ys, dtype=mt.float64, backend=name), torch.tensor(ys)
    for _ in range(3):
        (((x @ w + b) - y) ** 2).mean().backward()
        (((tx @ tw + tb) - ty) ** 2).mean().backward()
        with mt.no_grad():
            w -= 0.1 * w.grad
            b.sub_(b.grad, alpha=0.1)
            w.grad = None
            b.grad = None
        with torch.no_grad():
            tw -= 0.1 * tw.grad
            tb.sub_(tb.grad, alpha=0.1)
            tw.grad = None
            tb.grad = None
        close(w, tw)
        close(b, tb)
    assert w.is_leaf and w.requires_grad and b.is_leaf and b.requires_grad


@pytest.mark.parametrize("name", CPU_BACKENDS)
def test_inplace_on_leaf_requiring_grad_raises(name: str) -> None:
    w = mt.tensor([1.0, 2.0], backend=name, requires_grad=True)
    for mutate in (lambda: w.add_(1), lambda: w.zero_(), lambda: w.__imul__(2), lambda: w.__setitem__(0, 5.0), lambda: w.normal_()):
        with pytest.raises(GradientError, match="a leaf tensor that requires grad is used in an in-place operation"):
            mutate()
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    w.detach().add_(1)  # a detached alias may be mutated; the leaf sees the values
    np.testing.assert_array_equal(w.numpy(), [2.0, 3.0])


CHAINS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("mul_", lambda h, o: h.mul_(o)),
    ("add_alpha", lambda h, o: h.add_(o, alpha=3)),
    ("div_", lambda h, o: h.div_(o + 4)),
    ("pow_", lambda h, o: h.pow_(2)),
    ("clamp_", lambda h, o: h.clamp_(-1.0, 1.0)),
    ("copy_", lambda h, o: h.copy_(o)),
    ("zero_", lambda h, o: h.zero_()),
    ("masked_fill_", lambda h, o: h.masked_fill_(o > 0, 2.0)),
    ("setitem_basic", lambda h, o: h.__setitem__((slice(None), 0), o[:, 1] * 2)),
    ("setitem_adv", lambda h, o: h.__setitem__(([0, 2], [1, 1]), o[0, :2])),
    ("iadd_imul", lambda h, o: (h.__iadd__(o), h.__imul__(o), h.__isub__(1))),
]


@pytest.mark.parametrize("name", CPU_BACKENDS)
@pytest.mark.parametrize("chain", [c for _, c in CHAINS], ids=[n for n, _ in CHAINS])
def test_rebased_gradients_match_torch(name: str, chain: Callable[[Any, Any], Any]) -> None:
    a0 = np.linspace(-1.5, 2.0, 6).reshape(3, 2)
    o0 = np.linspace(0.5, -1.0, 6).reshape(3, 2)
    a = mt.tensor(a0, dtype=mt.float64, backend=name, requires_grad=True)
    o = mt.tensor(o0, dtype=mt.float64, backend=name, requires_grad=True)
    ta, to = torch.tensor(a0, requires_grad=True), torch.tensor(o0, requires_grad=True)
    h, th = a * 2 + 1, ta * 2 + 1
    chain(h, o)
    chain(th, to)
    assert h.requires_grad and not h.is_leaf
    close(h, th)
    weights = np.arange(1.0, 7.0).reshape(3, 2)
    (h * mt.tensor(weights, backend=name)).sum().backward()
    (th * torch.tensor(weights)).sum().backward()
    close(a.grad, ta.grad)
    if to.grad is None:
        assert o.grad is None or np.all(o.grad.numpy() == 0)
    else:
        close(o.grad, to.grad)


@pytest.mark.parametrize("name", CPU_BACKENDS)
def test_plain_tensor_mutated_by_grad_operand(name: str) -> None:
    """A tensor that needs no grad picks up history from an operand that does (saved values stay the old ones)."""
    o = mt.tensor([1.0, -2.0], dtype=mt.float64, backend=name, requires_grad=True)
    x = mt.tensor([3.0, 4.0], dtype=mt.float64, backend=name)
    to, tx = torch.tensor([1.0, -2.0], requires_grad=True), torch.tensor([3.0, 4.0])
    x.mul_(o)
    x.mul_(o)
    tx.mul_(to)
    tx.mul_(to)
    assert x.requires_grad and not x.is_leaf
    x.sum().backward()
    tx.sum().backward()
    close(x, tx)
    close(o.grad, to.grad)
    y = mt.tensor([1.0, 2.0], backend=name)
    with mt.no_grad():
        y.add_(o.float())
    assert not y.requires_grad


@pytest.mark.parametrize("name", CPU_BACKENDS)
def test_inplace_on_view_of_leaf_raises(name: str) -> None:
    w = mt.tensor([[1.0, 2.0], [3.0, 4.0]], backend=name, requires_grad=True)
    with pytest.raises(GradientError, match="a view of a leaf tensor that requires grad"):
        w[0].add_(1)
    with pytest.raises(GradientError, match="a view of a leaf tensor that requires grad"):
        w.t()[1].mul_(2)
    with mt.no_grad():
        w[0] += 1  # fine without grad mode: the view is written and written back
        w.t()[1].zero_()
    np.testing.assert_array_equal(w.numpy(), [[2.0, 0.0], [3.0, 0.0]])
    assert w.is_leaf and w.requires_grad


@pytest.mark.parametrize("name", CPU_BACKENDS)
def test_augmented_item_assignment_on_non_leaf_matches_torch(name: str) -> None:
    a0 = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    a, ta = mt.tensor(a0, dtype=mt.float64, backend=name, requires_grad=True), torch.tensor(a0, requires_grad=True)
    h, th = a * a, ta * ta
    h[0] += a[1]
    th[0] += ta[1]
    h[:, 1] *= 3
    th[:, 1] *= 3
    h[[1, 0], [2, 2]] = h[[0, 1], [0, 0]] * 2
    th[[1, 0], [2, 2]] = th[[0, 1], [0, 0]] * 2
    close(h, th)
    (h * h).sum().backward()
    (th * th).sum().backward()
    close(a.grad, ta.grad)


@pytest.mark.parametrize(
    "make_y, raises",
    [(lambda h: h * 3, False), (lambda h: h + 1, False), (lambda h: h.exp(), False), (lambda h: h * h, True), (lambda h: h.log(), True)],
)
def test_backward_through_a_value_changed_in_place(make_y: Any, raises: bool) -> None:
    """A graph that used ``h`` before ``h.mul_(2)`` keeps h's old node (the gradient is PyTorch's); it raises, as
    PyTorch does, only where a saved value changed (``h * h`` and ``log`` save h; ``exp`` saves its output)."""
    results = []
    for lib in (mt, torch):
        a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        h = a * 1.5
        y = make_y(h)
        h.mul_(2)
        try:
            y.sum().backward()
            results.append(np.asarray(a.grad.tolist()))
        except RuntimeError as error:
            assert "modified by an in" in str(error)
            results.append(None)
    assert (results[0] is None) == (results[1] is None) == raises
    if not raises:
        np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_saved_plain_tensor_changed_in_place_raises() -> None:
    w = mt.tensor([1.0, 2.0], dtype=mt.float64, requires_grad=True)
    x = mt.tensor([3.0, 4.0], dtype=mt.float64)
    y = (w * x).sum()
    x.mul_(2)  # x needs no grad, but Mul saved it for w's gradient
    with pytest.raises(mt.GradientError, match="modified by an in-place operation"):
        y.backward()


# --- per-storage version counters: the error fires where PyTorch's does, and only there ---


def _leaf_view_under_no_grad(lib: Any, x: Any) -> tuple[Any, Callable[[], None]]:
    y = x * x
    return y, lambda: _no_grad(lib, lambda: x[0].mul_(2))


def _no_grad(lib: Any, fn: Callable[[], Any]) -> None:
    with lib.no_grad():
        fn()


VERSION_CASES: dict[str, tuple[Callable[[Any, Any], tuple[Any, Callable[[], Any]]], bool]] = {
    # name: (make (y, mutate) from (lib, leaf x), whether backward of y then raises)
    "leaf view under no_grad": (_leaf_view_under_no_grad, True),
    "non-leaf view": (lambda lib, x: ((h := x * 1.5) * h, lambda: h[0].mul_(2)), True),
    "non-leaf reshape view": (lambda lib, x: ((h := x * 1.5).log(), lambda: h.view(-1).add_(1)), True),
    "detach shares the counter": (lambda lib, x: ((h := x * 1.5) * h, lambda: h.detach().zero_()), True),
    "permuted view of a matmul operand": (lambda lib, x: (x @ x.t(), lambda: _no_grad(lib, lambda: x.t().add_(1))), True),
    "output saved by sigmoid": (lambda lib, x: ((y := (x * 1.0).sigmoid()), lambda: y.view(-1).mul_(2)), True),
    ".data has its own counter": (lambda lib, x: ((h := x * 1.5) * h, lambda: h.data.zero_()), False),
    "value not saved (mul by a number)": (lambda lib, x: ((h := x * 1.5) * 2.0, lambda: h[0:1].mul_(2)), False),
    "value not saved (add)": (lambda lib, x: ((h := x * 1.5) + x, lambda: h.add_(1)), False),
    "exp saves only its output": (lambda lib, x: ((h := x * 1.5).exp(), lambda: h[1].mul_(3)), False),
    "a clone is separate storage": (lambda lib, x: ((h := x * 1.5) * h, lambda: h.clone().zero_()), False),
    "matmul operand whose partner needs no grad": (
        lambda lib, x: ((h := x * 1.0) @ (x * 2.0).detach().t(), lambda: h.mul_(2)),
        False,
    ),
}


@pytest.mark.parametrize("name", list(VERSION_CASES))
def test_version_counter_errors_match_torch(name: str) -> None:
    make, raises = VERSION_CASES[name]
    grads = []
    for lib in (mt, torch):
        x = lib.tensor([[1.0, 2.0], [3.0, 0.5]], dtype=lib.float64, requires_grad=True)
        y, mutate = make(lib, x)
        mutate()
        try:
            y.sum().backward()
            grads.append(np.asarray(x.grad.tolist()))
        except RuntimeError as error:
            assert "modified by an in" in str(error)
            grads.append(None)
    assert [g is None for g in grads] == [raises, raises]
    if not raises:
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_version_is_shared_by_views_and_bumped_by_writes() -> None:
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
    v, d, t = x[0], x.detach(), x.t()
    assert x._version == v._version == 0
    v.mul_(2)
    d.add_(1)
    x[1, 1] = 7.0
    assert x._version == v._version == d._version == t._version == 3
    assert x.data._version == 0 and x.clone()._version == 0


def _write_through_views(lib: Any, backend: str | None) -> tuple[Any, ...]:
    kw = {"backend": backend} if lib is mt else {}
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True, **kw)
    w = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True, **kw)
    h = x * 1.5
    h[0].mul_(w)  # a write through a view rebases the base (PyTorch's CopySlices)
    h.t()[1].add_(w * w)
    h.view(-1)[1:3].mul_(3.0)
    h.diagonal().add_(w)
    h[1] += w
    b = lib.zeros(3, dtype=lib.float64, **kw)  # a base that did not require grad starts to
    b[0:2].copy_(w)
    b[1:].mul_(w)
    ((h * h).sum() + (b * b).sum()).backward()
    return h, b, x.grad, w.grad


@pytest.mark.parametrize("backend", [*CPU_BACKENDS, "cuda"])
def test_in_place_write_through_a_view_updates_the_base_graph(backend: str) -> None:
    if backend not in mt.backends.backend_names():
        pytest.skip("no cuda backend")
    for a, b in zip(_write_through_views(mt, backend), _write_through_views(torch, None)):
        np.testing.assert_allclose(np.asarray(a.tolist()), b.detach().numpy(), rtol=1e-12)


def test_view_made_under_no_grad_modified_with_grad_raises_like_torch() -> None:
    for lib, error in ((mt, GradientError), (torch, RuntimeError)):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        h = x * 2.0
        with lib.no_grad():
            v = h[0:1]
        w = lib.tensor([3.0], dtype=lib.float64, requires_grad=True)
        with pytest.raises(error, match="no_grad mode"):
            v.mul_(w)


# Extra arguments of the generated in-place forms where the function needs them, and the second operand's maker.
INPLACE_ARGS: dict[str, tuple[Any, ...]] = {"clip": (-0.5, 0.5), "logit": (1e-3,)}
INPLACE_KWARGS: dict[str, dict[str, Any]] = {"round": {"decimals": 1}, "nan_to_num": {"nan": 0.0}}
INTEGER_INPLACE = {"bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor"}
SMOOTH_INPLACE = {"exp", "log", "sqrt", "sin", "asin", "atanh", "asinh", "sigmoid", "tanh", "erf", "lgamma", "atan2",
                  "fmod", "hypot", "xlogy", "lerp", "addcmul", "copysign", "float_power"}


def inplace_call(x: Any, lib: Any, fn: str, other: Any, suffix: str = "_") -> Any:
    """x.fn_(...) with the arguments each form takes (other: a tensor of x's shape for the binary ones); with
    ``suffix=""`` the out-of-place x.fn(...)."""
    method = getattr(x, f"{fn}{suffix}")
    if fn in mt.tensor_inplace.BINARY_INPLACE:
        extra = {"lerp": (0.25,), "addcmul": (other,), "addcdiv": (other + 2,)}.get(fn, ())
        return method(other, *extra)
    return method(*INPLACE_ARGS.get(fn, ()), **INPLACE_KWARGS.get(fn, {}))


@pytest.mark.parametrize("name", CPU_BACKENDS)
@pytest.mark.parametrize("fn", mt.tensor_inplace.UNARY_INPLACE + mt.tensor_inplace.BINARY_INPLACE)
def test_generated_inplace_forms_match_torch(name: str, fn: str) -> None:
    """Every ``name_`` form of UNARY_INPLACE and BINARY_INPLACE: on a transposed view it writes PyTorch's values,
    returns the tensor itself and its base sees the write; on a non-leaf under grad the gradient (smooth ones) is
    PyTorch's out-of-place op's; an int64 tensor whose result would be float raises PyTorch's cast error."""
    integer = fn in INTEGER_INPLACE
    values = np.arange(1, 13).reshape(3, 4) if integer else np.linspace(0.15, 0.85, 12).reshape(3, 4) + (fn in ("acosh", "arccosh"))
    others = np.arange(12, 0, -1).reshape(3, 4) if integer else np.linspace(0.9, 0.2, 12).reshape(3, 4)
    dtype, tdtype = (mt.int64, torch.int64) if integer else (mt.float64, torch.float64)
    base, tbase = mt.tensor(values, dtype=dtype, backend=name), torch.tensor(values, dtype=tdtype)
    x, tx = base.t(), tbase.t()
    out = inplace_call(x, mt, fn, mt.tensor(others.T, dtype=dtype, backend=name))
    inplace_call(tx, torch, fn, torch.tensor(others.T, dtype=tdtype))
    assert out is x
    np.testing.assert_allclose(base.numpy(), tbase.numpy(), rtol=1e-12, atol=1e-12)
    if fn in SMOOTH_INPLACE:
        a, ta = mt.tensor(values, backend=name, requires_grad=True), torch.tensor(values, requires_grad=True)
        h, th = a * 1.0, ta * 1.0
        inplace_call(h, mt, fn, mt.tensor(others, backend=name))
        th = inplace_call(th, torch, fn, torch.tensor(others), suffix="")  # (PyTorch lacks some in-place derivatives)
        weights = np.arange(1.0, 13.0).reshape(3, 4)
        (h * mt.tensor(weights, backend=name)).sum().backward()
        (th * torch.tensor(weights)).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-12)
    if fn in ("exp", "sqrt", "atan2", "asin"):
        ints = mt.tensor([1, 2], backend=name)
        with pytest.raises(DTypeError, match="result type Double can't be cast to the desired output type Long|"
                                              "result type Float can't be cast to the desired output type Long"):
            inplace_call(ints, mt, fn, mt.tensor([3, 4], backend=name))
