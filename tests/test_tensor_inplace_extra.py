"""The Tensor methods of tensor_inplace_extra.py against torch: in-place comparisons, in-place math and in-place
view ops. Values, dtypes, shapes, gradients, ``x.op_() is x``, writes seen through views and version counters are
compared with torch 2.13 on the same inputs; errors with torch's (minitensor's typed subclasses).

The bulk runs on the CPU backends; one tiny case per family runs on every backend (cuda under Numba's simulator).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import CPU_BACKENDS

import minitensor as mt
from minitensor import DTypeError, GradientError, IndexOutOfRangeError, ShapeError

torch = pytest.importorskip("torch")

WEIGHTS = np.linspace(-1.3, 2.0, 64)


def base_array(dtype: Any = np.float32) -> np.ndarray:
    return (np.arange(12).reshape(3, 4) * 0.75 - 4.0).astype(dtype)


VIEWS: list[tuple[str, Callable[[Any], Any]]] = [
    ("whole", lambda t: t), ("transposed", lambda t: t.t()), ("strided", lambda t: t[::2, 1:]),
]


def tensors(array: np.ndarray, backend: str, requires_grad: bool = False) -> tuple[Any, Any]:
    """The same array as a minitensor tensor on ``backend`` and as a torch tensor."""
    return (mt.tensor(array, backend=backend, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def lib_tensor(lib: Any, array: np.ndarray, backend: str) -> Any:
    return mt.tensor(array, backend=backend) if lib is mt else torch.tensor(array)


def same(got: Any, want: Any, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    """Equal shapes, dtypes and values (nan where torch has nan)."""
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    assert got.dtype.name == str(want.dtype).removeprefix("torch."), (got.dtype, want.dtype)
    np.testing.assert_allclose(got.to_numpy(), want.detach().numpy(force=True), rtol=rtol, atol=atol, equal_nan=True)


def same_layout(x: Any, tx: Any) -> None:
    """Equal shapes, and equal strides along every dim longer than 1 (minitensor's unsqueeze gives a new size-1 dim
    stride 0, torch a stride of its own; neither is ever stepped along)."""
    assert x.shape == tuple(tx.shape)
    assert [s for s, n in zip(x.stride(), x.shape) if n > 1] == [s for s, n in zip(tx.stride(), tx.shape) if n > 1]


def weighted(x: Any, lib: Any) -> Any:
    """A fixed weighted sum of x's elements (the loss of the gradient checks)."""
    w = np.ascontiguousarray(WEIGHTS[: x.numel()].reshape(tuple(x.shape)))
    return (x * (torch.tensor(w, dtype=x.dtype) if lib is torch else mt.tensor(w, dtype=x.dtype, backend=x.backend))).sum()


def check_inplace(backend: str, op: Callable[[Any, Any, Any], Any], dtype: Any = np.float32) -> None:
    """op(lib, view, backend) on each view of a (3, 4) base: it returns the view itself, bumps the version counter
    of the storage as often as torch's, and the base ends as torch's."""
    for _, view in VIEWS:
        base, tbase = tensors(base_array(dtype), backend)
        x, tx = view(base), view(tbase)
        before, tbefore = base._version, tbase._version
        out = op(mt, x, backend)
        op(torch, tx, backend)
        assert out is x
        assert base._version - before == tbase._version - tbefore >= 1
        same(x, tx)
        same(base, tbase)


def check_grad(backend: str, op: Callable[[Any, Any, list[Any]], Any], others: tuple[np.ndarray, ...] = (),
               shape: tuple[int, ...] = (3, 4)) -> None:
    """op(lib, h, others) on the non-leaf h = a * 1.5 (float64): h's values, requires_grad and the gradients of a and
    of the float operands equal torch's."""
    a0 = np.linspace(-1.7, 2.3, int(np.prod(shape))).reshape(shape)
    results = []
    for lib in (mt, torch):
        kw = {"backend": backend} if lib is mt else {}
        a = lib.tensor(a0, dtype=lib.float64, requires_grad=True, **kw)
        xs = [lib.tensor(o, requires_grad=o.dtype.kind == "f", **kw) for o in others]
        h = a * 1.5
        op(lib, h, xs)
        assert h.requires_grad and not h.is_leaf
        weighted(h, lib).backward()
        results.append((h, a.grad, [x.grad for x in xs]))
    (h, ga, gx), (th, tga, tgx) = results
    same(h, th, rtol=1e-10, atol=1e-12)
    same(ga, tga, rtol=1e-10, atol=1e-12)
    for g, tg in zip(gx, tgx):
        if tg is None:
            assert g is None or not g.to_numpy().any()
        else:
            same(g, tg, rtol=1e-10, atol=1e-12)


# --- 1. in-place comparisons ---

COMPARISONS = ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_", "less_", "less_equal_", "not_equal_"]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", COMPARISONS)
def test_inplace_comparisons_match_torch(backend: str, name: str) -> None:
    def with_tensor(lib: Any, x: Any, b: str) -> Any:
        row = np.array(base_array()[1, : x.shape[1]])  # equal to some elements, broadcast over the rows
        return getattr(x, name)(lib_tensor(lib, row, b))

    check_inplace(backend, with_tensor)
    check_inplace(backend, lambda lib, x, b: getattr(x, name)(-1.0))
    check_inplace(backend, lambda lib, x, b: getattr(x, name)(-1), dtype=np.int64)
    check_inplace(backend, lambda lib, x, b: getattr(x, name)(2.5), dtype=np.int32)  # compared as floats, 1/0 stored
    flags = [lib_tensor(lib, np.array([True, False, True]), backend) for lib in (mt, torch)]
    for lib, f in zip((mt, torch), flags):
        assert getattr(f, name)(lib_tensor(lib, np.array([True, True, False]), backend)) is f
    same(*flags)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_inplace_comparison_autograd_and_errors_match_torch(backend: str) -> None:
    check_grad(backend, lambda lib, h, xs: h.lt_(xs[0]), (np.linspace(0.0, 1.0, 4),))
    check_grad(backend, lambda lib, h, xs: h.eq_(h.detach()[0].clone()))
    for lib in (mt, torch):  # a tensor that needs no grad compared with one that does starts to require grad
        kw = {"backend": backend} if lib is mt else {}
        o = lib.tensor([1.0, 2.0, 0.0], requires_grad=True, **kw)
        x = lib.tensor([1.0, 2.0, 3.0], **kw)
        x.ge_(o)
        assert x.requires_grad and not x.is_leaf
        x.sum().backward()
        assert o.grad.tolist() == [0.0, 0.0, 0.0]
        with lib.no_grad():
            y = lib.tensor([1.0, 2.0], **kw)
            y.eq_(o[:2])
        assert not y.requires_grad
    w, tw = tensors(np.ones(3, np.float32), backend, requires_grad=True)
    with pytest.raises(GradientError, match="leaf"):
        w.eq_(1.0)
    with pytest.raises(RuntimeError, match="leaf"):
        tw.eq_(1.0)
    with pytest.raises(ShapeError):
        mt.zeros(3, backend=backend).eq_(mt.zeros(2, 3, backend=backend))
    with pytest.raises(RuntimeError):
        torch.zeros(3).eq_(torch.zeros(2, 3))


def test_inplace_comparison_on_every_backend(backend: str) -> None:
    x, tx = tensors(np.array([[1.0, 2.0], [3.0, 2.0]], np.float32), backend)
    col, tcol = x[:, 1], tx[:, 1]
    assert x.ge_(2.0) is x
    tx.ge_(2.0)
    same(x, tx)
    same(col, tcol)


# --- 2. in-place math ---

A34 = np.linspace(0.3, 2.9, 12).reshape(3, 4)


def _mats(lib: Any, x: Any, b: str, *shapes: tuple[int, ...]) -> list[Any]:
    return [lib_tensor(lib, np.linspace(-1.0, 1.5, int(np.prod(s)), dtype=np.float32).reshape(s), b) for s in shapes]


MATH_OPS: dict[str, Callable[[Any, Any, str], Any]] = {
    "tril_": lambda lib, x, b: x.tril_(),
    "tril_1": lambda lib, x, b: x.tril_(1),
    "triu_-1": lambda lib, x, b: x.triu_(-1),
    "cumsum_": lambda lib, x, b: x.cumsum_(1),
    "cumsum_dtype": lambda lib, x, b: x.cumsum_(dim=0, dtype=lib.float32),
    "cumprod_": lambda lib, x, b: x.cumprod_(0),
    "heaviside_": lambda lib, x, b: x.add_(x.round()).heaviside_(lib_tensor(lib, np.float32(0.25), b)),
    "ldexp_float": lambda lib, x, b: x.ldexp_(lib_tensor(lib, np.arange(x.shape[1], dtype=np.float32) - 1.0, b)),
    "ldexp_int": lambda lib, x, b: x.ldexp_(lib_tensor(lib, np.arange(x.shape[1]) - 2, b)),
    "polygamma_": lambda lib, x, b: x.abs_().add_(0.5).polygamma_(1),
    "sgn_": lambda lib, x, b: x.sgn_(),
    "clamp_min_": lambda lib, x, b: x.clamp_min_(-0.5),
    "clamp_max_": lambda lib, x, b: x.clamp_max_(lib_tensor(lib, np.linspace(-2, 2, x.shape[1], dtype=np.float32), b)),
    "fill_diagonal_": lambda lib, x, b: x.fill_diagonal_(7.5),
    "fill_diagonal_wrap": lambda lib, x, b: x.fill_diagonal_(-3, wrap=True),
    "addmm_": lambda lib, x, b: x.addmm_(*_mats(lib, x, b, (x.shape[0], 2), (2, x.shape[1])), beta=0.5, alpha=2.0),
    "addmv_": lambda lib, x, b: x[:, 0].addmv_(*_mats(lib, x, b, (x.shape[0], 3), (3,)), alpha=-1.0),
    "addr_": lambda lib, x, b: x.addr_(*_mats(lib, x, b, (x.shape[0],), (x.shape[1],)), beta=2),
    "addbmm_": lambda lib, x, b: x.addbmm_(*_mats(lib, x, b, (2, x.shape[0], 3), (2, 3, x.shape[1]))),
    "baddbmm_": lambda lib, x, b: x.unsqueeze(0).baddbmm_(*_mats(lib, x, b, (1, x.shape[0], 2), (1, 2, x.shape[1])), beta=-1),
}


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", list(MATH_OPS))
def test_inplace_math_values_views_and_identity(backend: str, name: str) -> None:
    op = MATH_OPS[name]
    if name in ("addmv_", "baddbmm_"):  # the op writes a view of x: check that view's identity and the base
        for _, view in VIEWS:
            base, tbase = tensors(base_array(), backend)
            op(mt, view(base), backend)
            op(torch, view(tbase), backend)
            same(base, tbase, rtol=1e-5, atol=1e-5)
        return
    check_inplace(backend, op)


GRAD_OPS: dict[str, tuple[Callable[[Any, Any, list[Any]], Any], tuple[np.ndarray, ...]]] = {
    "tril_": (lambda lib, h, xs: h.tril_(-1), ()),
    "triu_": (lambda lib, h, xs: h.t().triu_(), ()),
    "cumsum_": (lambda lib, h, xs: h.cumsum_(1), ()),
    "cumprod_": (lambda lib, h, xs: h.cumprod_(0), ()),
    "ldexp_": (lambda lib, h, xs: h.ldexp_(xs[0]), (np.linspace(-1.0, 2.0, 4),)),
    "polygamma_": (lambda lib, h, xs: h.abs_().add_(0.5).polygamma_(2), ()),
    "sgn_": (lambda lib, h, xs: h.sgn_(), ()),
    "clamp_min_": (lambda lib, h, xs: h.clamp_min_(xs[0]), (np.linspace(-1.0, 1.0, 4),)),
    "clamp_max_": (lambda lib, h, xs: h.clamp_max_(0.4), ()),
    "fill_diagonal_": (lambda lib, h, xs: h.fill_diagonal_(2.0), ()),
    "addmm_": (lambda lib, h, xs: h.addmm_(xs[0], xs[1], beta=0.5, alpha=-2.0), (A34[:, :2] + 0.1, A34[:2, :] - 1.0)),
    "addmv_": (lambda lib, h, xs: h[:, 1].addmv_(xs[0], xs[1]), (A34[:, :3], A34[0, :3])),
    "addr_": (lambda lib, h, xs: h.addr_(xs[0], xs[1], alpha=3), (A34[:, 0], A34[1])),
    "addbmm_": (lambda lib, h, xs: h.addbmm_(xs[0], xs[1]), (np.stack([A34[:, :2]] * 2), np.stack([A34[:2]] * 2))),
    "baddbmm_": (lambda lib, h, xs: h.unsqueeze(0).baddbmm_(xs[0], xs[1]), (A34[None, :, :2], A34[None, :2])),
}


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", list(GRAD_OPS))
def test_inplace_math_gradients_match_torch(backend: str, name: str) -> None:
    op, others = GRAD_OPS[name]
    check_grad(backend, op, others)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_inplace_math_dtype_rules_and_errors_match_torch(backend: str) -> None:
    for make, dtype in [(lambda lib, x: x.cumsum_(0), np.int32), (lambda lib, x: x.cumprod_(1), np.int64),
                        (lambda lib, x: x.sgn_(), np.int64), (lambda lib, x: x.clamp_max_(0), np.int32),
                        (lambda lib, x: x.fill_diagonal_(2.7), np.int64), (lambda lib, x: x.fill_diagonal_(2.7), np.bool_),
                        (lambda lib, x: x.heaviside_(lib_tensor(lib, np.array(1), backend)), np.int64),
                        (lambda lib, x: x.ldexp_(lib_tensor(lib, np.array(2.0), backend)), np.float32)]:
        array = np.arange(-5, 7).reshape(3, 4).astype(dtype)
        if dtype is np.float32:
            x, tx = tensors(array, backend)
        else:
            x, tx = mt.tensor(array, backend=backend), torch.tensor(array)
        make(mt, x)
        make(torch, tx)
        same(x, tx)
    ints = np.arange(6).reshape(2, 3)
    fails = [
        lambda lib, x: x.polygamma_(1), lambda lib, x: x.clamp_min_(0.5), lambda lib, x: x.ldexp_(x.new_tensor([1, 2, 3])),
        lambda lib, x: x.float().cumsum_(0, dtype=lib.float64), lambda lib, x: x.bool().cumsum_(0),
        lambda lib, x: x.addmm_(x.new_ones(2, 2, dtype=lib.float32), x.new_ones(2, 3, dtype=lib.float32)),
    ]
    for make in fails:
        with pytest.raises(DTypeError):
            make(mt, mt.tensor(ints, backend=backend))
        with pytest.raises(RuntimeError):  # torch: RuntimeError or its subclass NotImplementedError
            make(torch, torch.tensor(ints))
    shapes = [
        lambda lib, x: x[:1].addmm_(x.new_ones(2, 2), x.new_ones(2, 3)), lambda lib, x: x[0].addmv_(x.new_ones(2, 2), x.new_ones(2)),
        lambda lib, x: x[:1].unsqueeze(0).baddbmm_(x.new_ones(4, 2, 5), x.new_ones(4, 5, 3)),
        lambda lib, x: x[0].fill_diagonal_(1), lambda lib, x: x.unsqueeze(2).expand(2, 3, 2).clone().fill_diagonal_(1),
        lambda lib, x: x[0].tril_(), lambda lib, x: x[0].clamp_min_(x.new_zeros(2, 3)),
    ]
    for make in shapes:
        with pytest.raises(ShapeError):
            make(mt, mt.tensor(ints.astype(np.float32), backend=backend))
        with pytest.raises(RuntimeError):
            make(torch, torch.tensor(ints.astype(np.float32)))
    w = mt.ones(2, 2, backend=backend, requires_grad=True)
    with pytest.raises(GradientError, match="leaf"):
        w.tril_()
    with pytest.raises(RuntimeError, match="leaf"):
        torch.ones(2, 2, requires_grad=True).tril_()


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shape", [(5, 3), (7, 3), (8, 2), (4, 3), (3, 5), (3, 3, 3), (2, 2, 2, 2), (0, 2), (6, 1)])
def test_fill_diagonal_shapes_and_wrap_match_torch(backend: str, shape: tuple[int, ...]) -> None:
    for wrap in (False, True):
        array = np.zeros(shape, np.float32)
        for view in (lambda t: t, lambda t: t.transpose(0, 1)):
            x, tx = tensors(array, backend)
            x, tx = view(x), view(tx)
            assert x.fill_diagonal_(1.0, wrap=wrap) is x
            tx.fill_diagonal_(1.0, wrap=wrap)
            same(x, tx)


def test_function_forms_of_inplace_math_match_torch() -> None:
    for name, args in [("addmv_", (np.ones(2), np.arange(4.0).reshape(2, 2), np.array([1.0, -1.0]))),
                       ("clamp_min_", (np.array([0.5, 2.0]), 1.0)), ("clamp_max_", (np.array([0.5, 2.0]), 1.0)),
                       ("ldexp_", (np.array([0.5, 2.0]), np.array([3, -1])))]:
        ours = [mt.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        theirs = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        assert getattr(mt, name)(*ours) is ours[0]
        getattr(torch, name)(*theirs)
        same(ours[0], theirs[0])
        with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'input'"):
            getattr(mt, name)(None, None)


def test_inplace_math_on_every_backend(backend: str) -> None:
    x, tx = tensors(np.arange(6.0, dtype=np.float32).reshape(2, 3) - 2, backend)
    x.tril_(1).cumsum_(0)
    tx.tril_(1).cumsum_(0)
    x[:, 0].addmv_(mt.ones(2, 2, backend=backend), mt.tensor([1.0, 2.0], backend=backend))
    tx[:, 0].addmv_(torch.ones(2, 2), torch.tensor([1.0, 2.0]))
    same(x, tx)


# --- 3. in-place view ops ---

VIEW_OPS: dict[str, Callable[[Any], Any]] = {
    "t_": lambda x: x.t_(),
    "transpose_": lambda x: x.transpose_(0, -1),
    "swapaxes_": lambda x: x.swapaxes_(axis0=1, axis1=0),
    "swapdims_": lambda x: x.swapdims_(dim0=-2, dim1=-1),
    "unsqueeze_": lambda x: x.unsqueeze_(1),
    "unsqueeze_end": lambda x: x.unsqueeze_(-1),
    "squeeze_all": lambda x: x.unsqueeze_(0).squeeze_(),
    "squeeze_dim": lambda x: x.unsqueeze_(2).squeeze_(2),
    "squeeze_dims": lambda x: x.unsqueeze_(0).unsqueeze_(-1).squeeze_((0, -1)),
    "squeeze_noop": lambda x: x.squeeze_(0),
}


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("name", list(VIEW_OPS))
def test_inplace_view_ops_change_the_layout_like_torch(backend: str, name: str) -> None:
    op = VIEW_OPS[name]
    for _, view in VIEWS:
        base, tbase = tensors(base_array(), backend)
        x, tx = view(base), view(tbase)
        storage, versions = x._data.storage, (x._version, tx._version)
        assert op(x) is x
        op(tx)
        same_layout(x, tx)
        assert x._data.storage is storage and x._version - versions[0] == tx._version - versions[1]
        same(x, tx)
        x.mul_(-2.0)  # the storage is still shared: the base sees writes through the new layout
        tx.mul_(-2.0)
        same(base, tbase)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_inplace_view_ops_on_0d_and_1d_like_torch(backend: str) -> None:
    for shape in [(), (3,), (1,)]:
        for op in (lambda x: x.t_(), lambda x: x.squeeze_(), lambda x: x.unsqueeze_(0), lambda x: x.transpose_(0, -1)):
            x, tx = tensors(np.arange(float(np.prod(shape))).reshape(shape), backend)
            op(x)
            op(tx)
            same_layout(x, tx)
            assert x._version == tx._version


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_inplace_view_ops_autograd_matches_torch(backend: str) -> None:
    check_grad(backend, lambda lib, h, xs: h.t_().unsqueeze_(1).mul_(xs[0]), (np.array([0.5, -1.0, 2.0]),))
    check_grad(backend, lambda lib, h, xs: h.unsqueeze_(0).swapdims_(0, 2).squeeze_().add_(h.detach().exp()))

    def through_a_view(lib: Any, h: Any, xs: list[Any]) -> None:  # a later write through the reshaped view reaches h
        v = h[1]
        v.unsqueeze_(0).transpose_(0, 1).mul_(xs[0])

    check_grad(backend, through_a_view, (np.array([[1.0], [2.0], [-1.0], [0.5]]),))
    results = []
    for lib in (mt, torch):  # a graph that used h before the view op keeps h's old node
        kw = {"backend": backend} if lib is mt else {}
        a = lib.tensor(A34, requires_grad=True, **kw)
        h = a * 2.0
        y = h + 1.0
        z = h.exp()
        h.t_()
        (weighted(y, lib) + weighted(z, lib) + weighted(h, lib)).backward()
        results.append(a.grad)
    same(*results, rtol=1e-10)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_inplace_view_op_errors_match_torch(backend: str) -> None:
    for lib, error in ((mt, GradientError), (torch, RuntimeError)):
        kw = {"backend": backend} if lib is mt else {}
        a = lib.tensor(A34, requires_grad=True, **kw)
        for op in (lambda t: t.t_(), lambda t: t.unsqueeze_(0), lambda t: t.squeeze_(), lambda t: t[0].unsqueeze_(0)):
            with pytest.raises(error, match="leaf"):
                op(a)
        assert a.shape == (3, 4)
        with lib.no_grad():
            v = a[0]
            a.t_()  # fine without grad mode: the leaf stays a leaf
        assert a.is_leaf and tuple(a.shape) == (4, 3)
        with pytest.raises(error, match="no_grad mode"):
            v.unsqueeze_(0)
        h = a * 1.0
        y = h * h
        h.transpose_(0, 1)  # y saved h: its storage was written since
        with pytest.raises(error, match="modified by an in"):
            y.sum().backward()
    x, tx = tensors(np.zeros((2, 3, 4)), backend)
    with pytest.raises(ShapeError):
        x.t_()
    with pytest.raises(RuntimeError):
        tx.t_()
    for op in (lambda t: t.squeeze_(5), lambda t: t.unsqueeze_(4), lambda t: t.transpose_(0, 3), lambda t: t.swapaxes_(-4, 0)):
        with pytest.raises(IndexOutOfRangeError):
            op(x)
        with pytest.raises(IndexError):
            op(tx)
    assert x.shape == (2, 3, 4) and x._version == 0


def test_inplace_view_ops_on_every_backend(backend: str) -> None:
    x, tx = tensors(np.arange(6.0, dtype=np.float32).reshape(2, 3), backend)
    x.t_().unsqueeze_(0)
    tx.t_().unsqueeze_(0)
    same_layout(x, tx)
    same(x, tx)
