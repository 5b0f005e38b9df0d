"""The copying view ops of tensor_copies.py (``alias_copy`` ... ``view_copy``), ``as_strided_``/``as_strided_scatter``,
the ``unsafe_`` splits, ``nonzero_static`` and ``empty_permuted`` against torch 2.13: signatures (from torch's operator
schemas), values, dtypes, gradients, fresh storage, ``out=`` (resizing, its warning, dtype and autograd errors) and
errors, on contiguous and non-contiguous inputs."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from conftest import BACKENDS, CPU_BACKENDS
from torch_oracle import check

import minitensor as mt
from minitensor import BackendError, DTypeError, GradientError, PermutationError, ShapeError
from minitensor import tensor_copies as TC

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(66)
X = RNG.uniform(-1, 1, (3, 4))
X3 = RNG.uniform(-1, 1, (2, 3, 4))
COPIES = [n for n in TC.__all__ if n.endswith("_copy")]


# --- signatures ---


def torch_params(name: str) -> list[tuple[str, bool]]:
    """(name, keyword-only) of torch.<name>'s parameters, from its longest non-out schema, plus ``out`` if torch has an
    out form (self is 'input'; view_copy's size and dtype overloads are merged as ours)."""
    schemas = torch._C._jit_get_schemas_for_operator(f"aten::{name}")
    plain = [s for s in schemas if "out" not in s.overload_name]
    best = max(plain, key=lambda s: len(s.arguments))
    params = [("input" if a.name == "self" else a.name, a.kwarg_only) for a in best.arguments
              if a.name not in ("dtype", "layout", "device", "pin_memory")]
    if name == "view_copy":
        params = [("input", False), ("size", False), ("dtype", True)]
    if any("out" in s.overload_name for s in schemas):
        params.append(("out", True))
    return params


@pytest.mark.parametrize("name", TC.__all__)
def test_signatures_are_torchs(name: str) -> None:
    ours = [(p.name, p.kind is p.KEYWORD_ONLY) for p in inspect.signature(getattr(TC, name)).parameters.values()
            if p.name not in ("dtype", "layout", "device", "pin_memory", "requires_grad", "backend")
            or (name == "view_copy" and p.name == "dtype")]
    expected = torch_params(name)
    if name == "squeeze_copy":  # torch's overloads (), (dim), (dims) as one optional dim
        expected = [("input", False), ("dim", False), ("out", True)]
    if name == "empty_permuted":  # its out form takes only size and physical_layout
        expected = [p for p in expected if p[0] != "out"]
    assert ours == expected
    assert hasattr(mt, name) and hasattr(torch, name)


# --- values and gradients ---

CASES = {
    "alias_copy": (lambda L, x: L.alias_copy(x), X),
    "as_strided_copy": (lambda L, x: L.as_strided_copy(x, (2, 3), (1, 2), 1), X),
    "diagonal_copy": (lambda L, x: (L.diagonal_copy(x), L.diagonal_copy(x, 1), L.diagonal_copy(x.t(), -1, 1, 0)), X),
    "diagonal_copy_3d": (lambda L, x: L.diagonal_copy(x, 0, -1, 0), X3),
    "expand_copy": (lambda L, x: (L.expand_copy(x[:, :1], (3, 5)), L.expand_copy(x, (2, 3, 4), implicit=True)), X),
    "permute_copy": (lambda L, x: L.permute_copy(x, (2, 0, 1)), X3),
    "select_copy": (lambda L, x: (L.select_copy(x, 1, -1), L.select_copy(x.transpose(0, 2), 0, 2)), X3),
    "slice_copy": (lambda L, x: (L.slice_copy(x, 1, 1, None, 2), L.slice_copy(x, 0, -2), L.slice_copy(x),
                                 L.slice_copy(x, 1, 3, 1), L.slice_copy(x.t(), 1, -5, 100, 2)), X),
    "split_copy": (lambda L, x: L.split_copy(x, 3, 1), X),
    "split_with_sizes_copy": (lambda L, x: L.split_with_sizes_copy(x.t(), [1, 0, 3], 0), X),
    "squeeze_copy": (lambda L, x: (L.squeeze_copy(x[:1, :, None]), L.squeeze_copy(x[:1, :, None], 0),
                                   L.squeeze_copy(x[:1, :, None], (0, 2))), X),
    "t_copy": (lambda L, x: (L.t_copy(x), L.t_copy(x[0])), X),
    "transpose_copy": (lambda L, x: L.transpose_copy(x, 0, -1), X3),
    "unbind_copy": (lambda L, x: L.unbind_copy(x, 1), X3),
    "unfold_copy": (lambda L, x: (L.unfold_copy(x, 1, 2, 1), L.unfold_copy(x, 0, 2, 2)), X),
    "unsqueeze_copy": (lambda L, x: (L.unsqueeze_copy(x, 1), L.unsqueeze_copy(x.t(), -1)), X),
    "view_copy": (lambda L, x: (L.view_copy(x, (6, 2)), L.view_copy(x, [-1]), L.view_copy(x, L.int64),
                                L.view_copy(x, dtype=L.int32)), X),
    "empty_dims": (lambda L, x: (L.t_copy(x[:0]), L.expand_copy(x[:0, :1], (0, 5)), L.slice_copy(x, 0, 5)), X),
    "unsafe_splits": (lambda L, x: L.unsafe_chunk(x, 2, 1) + L.unsafe_split(x, 2) + L.unsafe_split_with_sizes(x, [1, 2])
                      + x.unsafe_chunk(3) + x.unsafe_split(3, 1) + x.unsafe_split_with_sizes([3, 1], 1), X),
    "as_strided_scatter": (lambda L, x, s: scatter(L, x, s, (2, 2), (1, 2), 1), X, X[:2, :2].copy()),
    "as_strided_scatter_transposed": (lambda L, x, s: scatter(L, x.t(), s, (2, 2), (1, 2), 1), X, X[:2, :2].copy()),
    "as_strided_scatter_view": (lambda L, x, s: (scatter(L, x.t()[1:], s[:2], (2,), (1,)), scatter(L, x.t()[1:], s, (3,), (3,)),
                                                 scatter(L, x[:, ::2], s, (3,), (1,), 0)), X, X[0, :3].copy()),
    "as_strided_scatter_3d": (lambda L, x, s: scatter(L, x.permute(1, 2, 0), s, (2, 3), (4, 1), 2), X3, X[:2, :3].copy()),
    "as_strided_scatter_empty": (lambda L, x, s: scatter(L, x, s, (0, 2), (1, 1)), X, np.zeros((0, 2))),
}  # fmt: skip


def scatter(L, x, src, size, stride, offset=None):
    """as_strided_scatter; in torch its definition (a copy of x's whole storage viewed as x, with src copied into its
    strided view), whose values are torch.as_strided_scatter's (checked here) and whose gradient is the true one:
    torch 2.13's as_strided_scatter gives ``input`` the gradient of the written elements instead of the others, and
    refuses non-contiguous inputs that require grad."""
    if L is mt:
        return x.as_strided_scatter(src, size, stride, offset) if offset == 2 else L.as_strided_scatter(x, src, size, stride, offset)
    whole = x.untyped_storage().nbytes() // x.element_size()
    copy = x.as_strided((whole,), (1,), 0).clone()
    copy.as_strided(size, stride, x.storage_offset() if offset is None else offset).copy_(src)
    out = copy.as_strided(tuple(x.shape), x.stride(), x.storage_offset())
    want = torch.as_strided_scatter(x.detach(), src.detach(), size, stride, offset)
    assert torch.equal(out.detach(), want)
    return out


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_copies_match_torch(backend: str, name: str) -> None:
    fn, *arrays = CASES[name]
    check(backend, fn, *arrays, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_copies_own_fresh_contiguous_storage(backend: str) -> None:
    x = mt.tensor(X3, backend=backend)
    for name, result in (("t_copy", mt.t_copy(x[0])), ("permute_copy", mt.permute_copy(x, (2, 0, 1))),
                         ("expand_copy", mt.expand_copy(x[:, :1], (2, 5, 4))), ("alias_copy", mt.alias_copy(x)),
                         ("diagonal_copy", mt.diagonal_copy(x, 0, 1, 2)), ("split_copy", mt.split_copy(x, 1, 2)[1]),
                         ("unfold_copy", mt.unfold_copy(x, 2, 3, 1)), ("detach_copy", mt.detach_copy(x))):
        assert result._data.is_contiguous() and result._base is None, name
        assert not np.shares_memory(result._data.storage, x._data.storage), name
        before = x.to_numpy()
        result.fill_(7.0)
        np.testing.assert_array_equal(x.to_numpy(), before, err_msg=name)


def test_detach_copy_has_no_history() -> None:
    x = mt.tensor(X, requires_grad=True)
    y = mt.detach_copy(x * 2)
    assert not y.requires_grad and y.is_leaf and y.grad_fn is None
    np.testing.assert_allclose(y.to_numpy(), X * 2)
    assert mt.alias_copy(x * 2).requires_grad


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_copies_differentiate_twice(backend: str) -> None:
    x = mt.tensor(X, requires_grad=True, backend=backend)
    y = (mt.t_copy(x * x) * mt.expand_copy(x[:, :1], (3, 4)).t()).sum()
    (g,) = mt.autograd.grad(y, x, create_graph=True)
    g.sum().backward()
    tx = torch.tensor(X, requires_grad=True)
    ty = (torch.t_copy(tx * tx) * torch.expand_copy(tx[:, :1], (3, 4)).t()).sum()
    (tg,) = torch.autograd.grad(ty, tx, create_graph=True)
    tg.sum().backward()
    np.testing.assert_allclose(g.to_numpy(), tg.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.to_numpy(), tx.grad.numpy(), rtol=1e-12)


# --- out= ---


def _libs(backend: str, array: np.ndarray = X):
    return (mt, mt.tensor(array, backend=backend)), (torch, torch.tensor(array))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_out_writes_resizes_and_warns_like_torch(backend: str) -> None:
    for (L, x) in _libs(backend):
        kw = {"backend": backend} if L is mt else {}
        exact = L.zeros(4, 3, dtype=L.float64, **kw)
        assert L.t_copy(x, out=exact) is exact
        np.testing.assert_array_equal(np.asarray(exact.numpy()), X.T)
        empty = L.zeros(0, dtype=L.float64, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            L.permute_copy(x, (1, 0), out=empty)  # an empty out is resized silently
        assert tuple(empty.shape) == (4, 3) and tuple(empty.stride()) == (3, 1)
        wrong = L.zeros(5, dtype=L.float64, **kw)
        with pytest.warns(UserWarning, match="resized"):
            L.view_copy(x, (2, 6), out=wrong)
        assert tuple(wrong.shape) == (2, 6)
        np.testing.assert_array_equal(np.asarray(wrong.numpy()), X.reshape(2, 6))
        base = L.zeros(6, 4, dtype=L.float64, **kw)
        assert L.alias_copy(x, out=base[::2]) is not None  # a strided out of the right shape is written in place
        np.testing.assert_array_equal(np.asarray(base.numpy())[::2], X)
        outs = [L.zeros(3, 2, dtype=L.float64, **kw), L.zeros(3, 2, dtype=L.float32, **kw)]
        assert L.split_copy(x, 2, 1, out=outs) is None
        np.testing.assert_allclose(np.asarray(outs[1].numpy()), X[:, 2:], rtol=1e-6)  # list outs cast, as copy_
        assert L.nonzero_static(x > 0, size=3, out=L.zeros(0, dtype=L.int64, **kw)).shape == (3, 2)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_out_errors_match_torch(backend: str) -> None:
    for (L, x) in _libs(backend):
        kw = {"backend": backend} if L is mt else {}
        with pytest.raises(DTypeError if L is mt else RuntimeError, match="(?i)expected out tensor to have dtype"):
            L.t_copy(x, out=L.zeros(4, 3, dtype=L.float32, **kw))
        leaf = L.zeros(4, 3, dtype=L.float64, requires_grad=True, **kw)
        with pytest.raises(GradientError if L is mt else RuntimeError, match="out=... arguments don't support"):
            L.t_copy(x, out=leaf)
        with pytest.raises(ShapeError if L is mt else RuntimeError, match="expected an out= argument of size 2"):
            L.split_copy(x, 2, 1, out=[L.zeros(3, 2, dtype=L.float64, **kw)])
        with pytest.raises(TypeError):
            L.t_copy(x, out=3)
    x = mt.tensor(X, requires_grad=True, backend=backend)
    out = mt.zeros(4, 3, dtype=mt.float64, backend=backend)
    mt.t_copy(x * 2, out=out)  # the values, without history (torch's out is a NotImplemented node)
    assert not out.requires_grad and np.allclose(out.to_numpy(), 2 * X.T)
    other = "simple" if backend == "fast" else "fast"
    with pytest.raises(BackendError):
        mt.t_copy(mt.tensor(X, backend=backend), out=mt.zeros(4, 3, dtype=mt.float64, backend=other))


# --- as_strided_, as_strided_scatter, nonzero_static, empty_permuted ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_as_strided_inplace_matches_torch(backend: str) -> None:
    y, ty = mt.arange(12.0, backend=backend), torch.arange(12.0)
    assert y.as_strided_((3, 2), (1, 3), 1) is y
    ty.as_strided_((3, 2), (1, 3), 1)
    assert y.shape == tuple(ty.shape) and y.stride() == ty.stride() and y.storage_offset() == ty.storage_offset() == 1
    np.testing.assert_array_equal(y.to_numpy(), ty.numpy())
    y.as_strided_((2,), (1,), 0)  # offsets stay relative to the whole storage
    ty.as_strided_((2,), (1,), 0)
    np.testing.assert_array_equal(y.to_numpy(), ty.numpy())
    y[0] = -1.0
    assert y.to_numpy()[0] == -1.0 and y.storage_offset() == 0
    a, ta = mt.arange(4.0, requires_grad=True, backend=backend), torch.arange(4.0, requires_grad=True)
    with pytest.raises(GradientError, match="leaf"):
        a.as_strided_((2,), (2,))
    with pytest.raises(RuntimeError, match="leaf"):
        ta.as_strided_((2,), (2,))
    h, th = a * 1, ta * 1
    h.as_strided_((2, 2), (1, 2), 0)
    th.as_strided_((2, 2), (1, 2), 0)
    (h * mt.tensor([[1.0, 2.0], [3.0, 4.0]], backend=backend)).sum().backward()
    (th * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    np.testing.assert_array_equal(a.grad.to_numpy(), ta.grad.numpy())
    assert h._version == th._version == 1


def test_as_strided_scatter_errors_match_torch() -> None:
    for L in (mt, torch):
        for src, size, stride, offset in (((2, 3), (2, 2), (1, 2), 0), ((2, 2), (2, 2), (1, 20), 0),
                                          ((2, 2), (2, 2), (0, 1), 1)):
            with pytest.raises(ShapeError if L is mt else RuntimeError):
                L.as_strided_scatter(L.zeros(3, 4), L.ones(*src), size, stride, offset)
    got = mt.as_strided_scatter(mt.tensor(X, dtype=mt.float32), mt.tensor(X[:2, :2]), (2, 2), (1, 2))
    want = torch.as_strided_scatter(torch.tensor(X, dtype=torch.float32), torch.tensor(X[:2, :2]), (2, 2), (1, 2))
    assert got.dtype == mt.float32 and np.array_equal(got.to_numpy(), want.numpy())  # a float64 src is cast


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_nonzero_static_matches_torch(backend: str) -> None:
    data = np.array([[1, 0, 2], [0, 0, 3]])
    for size, fill in ((0, -1), (2, -1), (3, -1), (6, 7), (9, -4)):
        got = mt.nonzero_static(mt.tensor(data, backend=backend), size=size, fill_value=fill)
        want = torch.nonzero_static(torch.tensor(data), size=size, fill_value=fill)
        assert got.dtype == mt.int64 and got.shape == tuple(want.shape)
        np.testing.assert_array_equal(got.to_numpy(), want.numpy())
    for x, tx in ((mt.tensor(3.0, backend=backend), torch.tensor(3.0)), (mt.zeros(0, 2, backend=backend), torch.zeros(0, 2))):
        assert x.nonzero_static(size=2).shape == tuple(tx.nonzero_static(size=2).shape)
    with pytest.raises(ValueError, match="non-negative"):
        mt.nonzero_static(mt.ones(2), size=-1)
    with pytest.raises(TypeError, match="must be int"):
        mt.nonzero_static(mt.ones(2), size=2.5)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_empty_permuted_matches_torch(backend: str) -> None:
    for size, layout in (((2, 3, 4), (2, 0, 1)), ((2, 3), (0, 1)), ((2, 3), (1, 0)), ((0, 3, 1), (1, 2, 0)), ((), ())):
        got = mt.empty_permuted(size, layout, dtype=mt.int32, backend=backend, requires_grad=False)
        want = torch.empty_permuted(size, layout, dtype=torch.int32)
        assert got.shape == tuple(want.shape) and got.stride() == want.stride() and got.dtype == mt.int32
    assert mt.empty_permuted((2, 2), (1, 0), requires_grad=True).requires_grad
    with pytest.raises(ShapeError, match="does not match the length"):
        mt.empty_permuted((2, 3), (0,))
    for layout in ((0, 0), (0, 2), (-1, 0)):
        with pytest.raises(PermutationError):
            mt.empty_permuted((2, 3), layout)
        with pytest.raises(RuntimeError):
            torch.empty_permuted((2, 3), layout)


def test_copies_on_every_backend(backend: str) -> None:
    check(backend, lambda L, x, s: (L.t_copy(x), L.slice_copy(x, 1, 1), scatter(L, x, s, (2,), (3,), 1)),
          X[:2, :3].copy(), X[0, :2].copy(), rtol=1e-12)
    assert backend in BACKENDS
