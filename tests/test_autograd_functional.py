"""minitensor.autograd.functional (vjp, jvp, vhp, hvp, jacobian, hessian) against torch.autograd.functional.

Every result is compared with PyTorch's on the same float64 inputs: the nesting (tuple or single Tensor), shapes,
values, whether it requires grad, and under create_graph=True the gradients of the results back to the inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import GradientError
from minitensor.autograd import functional as AF

TAF = torch.autograd.functional
X0 = np.array([0.5, -1.2, 0.8])
Y0 = np.array([[0.3, 0.1, -0.4], [1.1, -0.7, 0.2]])


def same(ours: Any, theirs: Any, grad_flag: bool = True) -> None:
    """Equal nesting, shapes, values (rtol 1e-10) and, with ``grad_flag``, requires_grad."""
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs), (type(ours), len(theirs))
        for a, b in zip(ours, theirs):
            same(a, b, grad_flag)
        return
    assert isinstance(ours, mt.Tensor), type(ours)
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    assert ours.dtype == mt.float64
    np.testing.assert_allclose(ours.to_numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    if grad_flag:
        assert ours.requires_grad == theirs.requires_grad


def leaves(tree: Any) -> list[Any]:
    return [t for item in tree for t in leaves(item)] if isinstance(tree, tuple) else [tree]


def both(backend: str, *arrays: np.ndarray, requires_grad: bool = False) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    ours = tuple(mt.tensor(a, dtype=mt.float64, backend=backend, requires_grad=requires_grad) for a in arrays)
    theirs = tuple(torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad) for a in arrays)
    return ours, theirs


# Functions written once for both libraries (method syntax). "vec": tensor outputs, "scalar": one element.
VEC: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...], bool]] = {  # fn, inputs, inputs passed as a tuple
    "one_to_one": (lambda x: x.exp() * x.sum(), (X0,), False),
    "one_to_tuple": (lambda x: (x.sin() * x, (x * x).sum()), (X0,), False),
    "tuple_to_one": (lambda x, y: (x * y).tanh() + y * 0.5, (X0, Y0), True),
    "tuple_to_tuple": (lambda x, y: (x * y.sum(), (y**3).sum(0) + x), (X0, Y0), True),
    "single_in_tuple": (lambda x: x.cos() * 2.0, (X0,), True),
}
SCALAR: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...], bool]] = {
    "one": (lambda x: (x.sin() * x * x).sum(), (X0,), False),
    "two": (lambda x, y: (x * y).tanh().sum() + (x**3).sum(), (X0, Y0), True),
    "point": (lambda x: (x.exp() * x).sum(), (X0[:1],), False),
}


def pack(values: tuple[Any, ...], as_tuple: bool) -> Any:
    return values if as_tuple else values[0]


def call(lib_fn: Callable[..., Any], fn: Callable[..., Any], inputs: Any, v: Any, **kw: Any) -> Any:
    return lib_fn(fn, inputs, **kw) if v is None else lib_fn(fn, inputs, v, **kw)


def vectors_like(values: Any, backend: str, seed: int) -> tuple[Any, Any]:
    """A v for each tensor in ``values`` (kept tuple or single), in minitensor and torch."""
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(size=tuple(t.shape)) for t in leaves(values)]
    ours, theirs = both(backend, *arrays)
    return (ours, theirs) if isinstance(values, tuple) else (ours[0], theirs[0])


@pytest.mark.parametrize("name", list(VEC))
@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_vjp_jvp_jacobian_match_torch(backend: str, name: str) -> None:
    fn, arrays, as_tuple = VEC[name]
    ours, theirs = both(backend, *arrays)
    mi, ti = pack(ours, as_tuple), pack(theirs, as_tuple)
    out_v, out_tv = vectors_like(fn(*theirs), backend, 1)
    in_v, in_tv = vectors_like(ti, backend, 2)
    same(AF.vjp(fn, mi, out_v), TAF.vjp(fn, ti, out_tv))
    same(AF.jvp(fn, mi, in_v), TAF.jvp(fn, ti, in_tv))
    same(AF.jacobian(fn, mi), TAF.jacobian(fn, ti))
    same(AF.jacobian(fn, mi, vectorize=True), TAF.jacobian(fn, ti, vectorize=True))


@pytest.mark.parametrize("name", list(SCALAR))
@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_hvp_vhp_hessian_match_torch(backend: str, name: str) -> None:
    fn, arrays, as_tuple = SCALAR[name]
    ours, theirs = both(backend, *arrays)
    mi, ti = pack(ours, as_tuple), pack(theirs, as_tuple)
    v, tv = vectors_like(ti, backend, 3)
    if name == "point":  # one input element: v may be left out
        v = tv = None
    for ours_fn, theirs_fn in ((AF.hvp, TAF.hvp), (AF.vhp, TAF.vhp)):
        same(call(ours_fn, fn, mi, v), call(theirs_fn, fn, ti, tv))
    same(AF.vjp(fn, mi), TAF.vjp(fn, ti))  # one output element: v defaults to 1
    same(AF.hessian(fn, mi), TAF.hessian(fn, ti))


@pytest.mark.parametrize("which", ["vjp", "jvp", "vhp", "hvp", "jacobian", "hessian"])
@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_create_graph_results_are_differentiable(backend: str, which: str) -> None:
    """create_graph=True: results require grad where torch's do, and their gradients back to the inputs agree."""
    fn, arrays, _ = SCALAR["two"] if which in ("vhp", "hvp", "hessian") else VEC["tuple_to_tuple"]
    ours, theirs = both(backend, *arrays, requires_grad=True)
    if which in ("vjp", "jvp"):
        like = fn(*theirs) if which == "vjp" else theirs
        v, tv = vectors_like(tuple(t.detach() for t in like), backend, 4)
        got = getattr(AF, which)(fn, ours, v, create_graph=True)
        want = getattr(TAF, which)(fn, theirs, tv, create_graph=True)
    elif which in ("vhp", "hvp"):
        v, tv = vectors_like(tuple(t.detach() for t in theirs), backend, 5)
        got = getattr(AF, which)(fn, ours, v, create_graph=True)
        want = getattr(TAF, which)(fn, theirs, tv, create_graph=True)
    else:
        got = getattr(AF, which)(fn, ours, create_graph=True)
        want = getattr(TAF, which)(fn, theirs, create_graph=True)
    same(got, want)
    total = sum(((t * t).sum() for t in leaves(got)), mt.tensor(0.0, dtype=mt.float64, backend=backend))
    ttotal = sum(((t * t).sum() for t in leaves(want)), torch.tensor(0.0, dtype=torch.float64))
    total.backward()
    ttotal.backward()
    for a, b in zip(ours, theirs):
        same(a.grad, b.grad, grad_flag=False)


def test_results_without_create_graph_have_no_history() -> None:
    (x,), (tx,) = both("simple", X0, requires_grad=True)
    out, vjp = AF.vjp(lambda a: a * a, x, x.detach())
    tout, tvjp = TAF.vjp(lambda a: a * a, tx, tx.detach())
    same((out, vjp), (tout, tvjp))
    assert not out.requires_grad and not vjp.requires_grad


# --- strict mode and the errors ---

def linear(x: Any, y: Any) -> Any:
    return x * 2.0  # independent of y; its Jacobian is constant


def detached(x: Any, y: Any) -> Any:
    return (x * y).detach()


STRICT_CASES = [
    ("vjp", linear, {}),
    ("vjp", detached, {}),
    ("jvp", linear, {}),
    ("jacobian", linear, {}),
    ("jacobian", detached, {}),
    ("jacobian", lambda x, y: x * 2.0 + y, {"create_graph": True}),
    ("vhp", lambda x, y: (x * 2.0).sum(), {}),
    ("hvp", lambda x, y: (x * x).sum() + y.sum(), {}),
    ("hessian", lambda x, y: (x * 2.0).sum() + (y * y).sum(), {}),
]


@pytest.mark.parametrize("which, fn, kw", STRICT_CASES)
def test_strict_errors_where_torch_raises(which: str, fn: Callable[..., Any], kw: dict[str, Any]) -> None:
    ours, theirs = both("simple", X0, X0 * 0.5)
    needs_v = which in ("vjp", "jvp", "vhp", "hvp")
    if which == "vjp":
        v, tv = vectors_like(fn(*theirs), "simple", 6)
    else:
        v, tv = vectors_like(theirs, "simple", 6)
    with pytest.raises(RuntimeError):
        call(getattr(TAF, which), fn, theirs, tv if needs_v else None, strict=True, **kw)
    with pytest.raises(GradientError, match="strict mode"):
        call(getattr(AF, which), fn, ours, v if needs_v else None, strict=True, **kw)
    # without strict: the independent parts are zeros, as torch gives them
    same(call(getattr(AF, which), fn, ours, v if needs_v else None, **kw),
         call(getattr(TAF, which), fn, theirs, tv if needs_v else None, **kw))


def test_v_errors() -> None:
    (x, y), _ = both("simple", X0, Y0)
    with pytest.raises(GradientError, match="v can only be None"):
        AF.vjp(lambda a: a * 2.0, x)
    with pytest.raises(GradientError, match="v can only be None"):
        AF.jvp(lambda a: a * 2.0, x)
    with pytest.raises(GradientError, match=r"invalid shape: should be \(3,\) but got \(2, 3\)"):
        AF.vjp(lambda a: a * 2.0, x, y)
    with pytest.raises(GradientError, match=r"entry 1 in v has invalid shape"):
        AF.jvp(lambda a, b: a * b, (x, y), (x, x))
    with pytest.raises(GradientError, match="invalid length: should be 2 but got 1"):
        AF.hvp(lambda a, b: (a * b).sum(), (x, y), (x,))
    with pytest.raises(TypeError, match="index 1 has type list"):
        AF.vjp(lambda a, b: a, (x, [1.0]), x)
    with pytest.raises(TypeError, match="outputs of the user-provided function"):
        AF.jacobian(lambda a: 3.0, x)
    with pytest.raises(GradientError, match="should return a single Tensor"):
        AF.hessian(lambda a: (a.sum(), a.sum()), x)
    with pytest.raises(GradientError, match=r"single element, got shape \(3,\)"):
        AF.vhp(lambda a: a * a, x, x)
    with pytest.raises(NotImplementedError, match="forward-mode"):
        AF.jacobian(lambda a: a * a, x, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="create_graph=True"):
        AF.jacobian(lambda a: a * a, x, create_graph=True, strategy="forward-mode")
    with pytest.raises(ValueError, match="strategy"):
        AF.jacobian(lambda a: a * a, x, strategy="sideways")
    with pytest.raises(GradientError, match="vectorize"):
        AF.jacobian(lambda a: a * a, x, strict=True, vectorize=True)


def test_tensors_func_captures_are_constants() -> None:
    """func's own reference to the input is not the tracked copy: it is a constant, as in torch."""
    (x,), (tx,) = both("fast", X0)
    same(AF.jacobian(lambda a: a * x, x), TAF.jacobian(lambda a: a * tx, tx))


@pytest.mark.skipif("cuda" not in BACKENDS, reason="no cuda backend")
def test_jvp_on_cuda() -> None:
    fn = VEC["one_to_one"][0]
    (x, v), (tx, tv) = both("cuda", X0[:2], Y0[0, :2])
    got = AF.jvp(fn, x, v)
    assert got[1].backend.name == "cuda"
    same(got, TAF.jvp(fn, tx, tv))
