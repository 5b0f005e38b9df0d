"""minitensor.func (grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap, functional_call) against torch.func.

Results are compared with PyTorch's on the same float64 inputs: the nested structure (tuples, lists, dicts), shapes,
values, and whether each tensor requires grad (plain tensors at top level, differentiable ones when an enclosing
autograd or transform differentiates through them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.func as TF
from conftest import CPU_BACKENDS

import minitensor as mt
from minitensor import GradientError, ShapeError
from minitensor import func as F

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")  # torch.func's own
X0 = np.array([0.5, -1.2, 0.8])
Y0 = np.array([[0.3, 0.1, -0.4], [1.1, -0.7, 0.2]])
Z0 = np.array([[0.9, -0.3], [0.2, 0.6], [-1.0, 0.4]])


def same(ours: Any, theirs: Any) -> None:
    """Same pytree structure and, leaf by leaf, shapes, float64 values (rtol 1e-10) and requires_grad."""
    if isinstance(theirs, (tuple, list, dict)):
        assert type(ours) is type(theirs), (type(ours), type(theirs))
        assert len(ours) == len(theirs)
        if isinstance(theirs, dict):
            assert list(ours) == list(theirs)
            for k in theirs:
                same(ours[k], theirs[k])
        else:
            for a, b in zip(ours, theirs):
                same(a, b)
        return
    assert isinstance(ours, mt.Tensor), type(ours)
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    np.testing.assert_allclose(ours.to_numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert ours.requires_grad == theirs.requires_grad, (ours.requires_grad, theirs.requires_grad)


def both(backend: str, *arrays: np.ndarray, requires_grad: bool = False) -> tuple[list[Any], list[Any]]:
    ours = [mt.tensor(a, dtype=mt.float64, backend=backend, requires_grad=requires_grad) for a in arrays]
    theirs = [torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad) for a in arrays]
    return ours, theirs


def f_xy(x: Any, y: Any) -> Any:
    return ((x * y).sin() * x).sum() + (y**3).mean()


def f_tree(d: Any, y: Any) -> Any:
    return (d["a"] * d["b"][0].exp()).sum() * y.tanh().sum()


def f_vec(x: Any, y: Any) -> Any:
    return (x * y.sum(0), {"s": (y * y).sum(), "t": [y.cos() * x]})


# --- grad and grad_and_value ---

@pytest.mark.parametrize("argnums", [0, 1, -1, (0, 1), (1, 0)])
@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_grad_argnums_match_torch(backend: str, argnums: Any) -> None:
    (x, y), (tx, ty) = both(backend, X0, Y0)
    same(F.grad(f_xy, argnums)(x, y), TF.grad(f_xy, argnums)(tx, ty))
    same(F.grad_and_value(f_xy, argnums)(x, y), TF.grad_and_value(f_xy, argnums)(tx, ty))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_grad_of_nested_arguments_and_aux(backend: str) -> None:
    (x, y, z), (tx, ty, tz) = both(backend, X0, X0 * 0.3, Y0)
    same(F.grad(f_tree, argnums=(0, 1))({"a": x, "b": [y]}, z), TF.grad(f_tree, argnums=(0, 1))({"a": tx, "b": [ty]}, tz))

    def with_aux(lib: Any) -> Callable[..., Any]:
        return lambda a, b: (f_xy(a, b), {"double": a * 2.0, "list": [b.sum()]})

    same(F.grad(with_aux(mt), has_aux=True)(x, z), TF.grad(with_aux(torch), has_aux=True)(tx, tz))
    same(F.grad_and_value(with_aux(mt), 1, has_aux=True)(x, z), TF.grad_and_value(with_aux(torch), 1, has_aux=True)(tx, tz))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_grad_composes_with_itself_and_with_autograd(backend: str) -> None:
    (x, w), (tx, tw) = both(backend, X0, X0[::-1].copy())
    s, ts = x[1], tx[1]
    third = F.grad(F.grad(F.grad(lambda a: a.sin() * a * a)))
    same(third(s), TF.grad(TF.grad(TF.grad(lambda a: a.sin() * a * a)))(ts))
    # a weight that requires grad outside: the gradient stays differentiable with respect to it
    mw, tw2 = mt.tensor(w.to_numpy(), dtype=mt.float64, backend=backend, requires_grad=True), tw.clone().requires_grad_()
    g, tg = F.grad(lambda a: (a * mw).sin().sum())(x), TF.grad(lambda a: (a * tw2).sin().sum())(tx)
    same(g, tg)
    (g * g).sum().backward()
    (tg * tg).sum().backward()
    same(mw.grad, tw2.grad)
    # an input that requires grad: the gradient is differentiable with respect to it (second derivative)
    (mx,), (tmx,) = both(backend, X0, requires_grad=True)
    g, tg = F.grad(lambda a: (a**3).sum())(mx), TF.grad(lambda a: (a**3).sum())(tmx)
    same(g, tg)
    g.sum().backward()
    tg.sum().backward()
    same(mx.grad, tmx.grad)


def test_grad_errors_like_torch() -> None:
    (x, y), _ = both("simple", X0, Y0)
    with pytest.raises(GradientError, match="scalar Tensor, got tensor with 1 dims"):
        F.grad(lambda a: a * 2.0)(x)
    with pytest.raises(GradientError, match="return a Tensor, got float"):
        F.grad(lambda a: 3.0)(x)
    with pytest.raises(GradientError, match=r"should be a tuple: \(output, aux\)"):
        F.grad(lambda a: a.sum(), has_aux=True)(x)
    with pytest.raises(GradientError, match="only tensors, got int"):
        F.grad(lambda a: (a.sum(), 1), has_aux=True)(x)
    with pytest.raises(GradientError, match="Got argnum=2, but only 2 positional inputs"):
        F.grad(f_xy, argnums=2)(x, y)
    with pytest.raises(GradientError, match="Got argnum=-3"):
        F.grad(f_xy, argnums=-3)(x, y)
    with pytest.raises(GradientError, match="non-empty"):
        F.grad(f_xy, argnums=())(x, y)
    with pytest.raises(GradientError, match="unique"):
        F.grad(f_xy, argnums=(0, -2))(x, y)
    with pytest.raises(GradientError, match="int or Tuple"):
        F.grad(f_xy, argnums=[0])(x, y)
    with pytest.raises(ValueError, match="must be Tensor, got float"):
        F.grad(f_xy)(3.0, y)
    with pytest.raises(GradientError, match="floating point"):
        F.grad(lambda a: a.sum())(mt.tensor([1, 2]))
    # a function that ignores its input: zero gradient, as in torch
    same(F.grad(lambda a: y.sum())(x), TF.grad(lambda a: torch.tensor(Y0).sum())(torch.tensor(X0)))


# --- vjp and jvp ---

@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_vjp_matches_torch(backend: str) -> None:
    (x, y, ct0, ct1), (tx, ty, tct0, tct1) = both(backend, X0, Y0, X0 * 0.7 - 0.2, Y0 + 0.5)
    out, fn = F.vjp(f_vec, x, y)
    tout, tfn = TF.vjp(f_vec, tx, ty)
    same(out, tout)
    cts = (ct0, {"s": x.sum(), "t": [ct1]})
    tcts = (tct0, {"s": tx.sum(), "t": [tct1]})
    same(fn(cts), tfn(tcts))
    same(fn(cts), tfn(tcts))  # vjp_fn may be called again
    same(fn(cts, create_graph=True), tfn(tcts, create_graph=True))
    (mx,), (tmx,) = both(backend, X0, requires_grad=True)  # an input that requires grad: create_graph decides
    for flag in (None, False):
        same(F.vjp(lambda a: a.sin(), mx)[1](ct0, create_graph=flag), TF.vjp(lambda a: a.sin(), tmx)[1](tct0, create_graph=flag))
    out, fn, aux = F.vjp(lambda a: (a.exp(), [a * 3.0]), x, has_aux=True)
    tout, tfn, taux = TF.vjp(lambda a: (a.exp(), [a * 3.0]), tx, has_aux=True)
    same((out, fn(ct0), aux), (tout, tfn(tct0), taux))
    with pytest.raises(GradientError, match="structure of cotangents"):
        fn((ct0,))
    with pytest.raises(GradientError, match=r"shape of \(2, 3\) and output 0 has a shape of \(3,\)"):
        fn(ct1)
    with pytest.raises(GradientError, match="only tensors, got unsupported type float"):
        F.vjp(lambda a: 3.0, x)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_jvp_matches_torch(backend: str) -> None:
    (x, y, tx_, ty_), (tx, ty, ttx, tty) = both(backend, X0, Y0, X0 * 0.4 + 1.0, Y0 - 0.3)
    same(F.jvp(f_vec, (x, y), (tx_, ty_)), TF.jvp(f_vec, (tx, ty), (ttx, tty)))
    same(F.jvp(lambda d: d["p"] * d["p"], ({"p": x},), ({"p": tx_},)),
         TF.jvp(lambda d: d["p"] * d["p"], ({"p": tx},), ({"p": ttx},)))
    same(F.jvp(lambda a: (a * 2.0, a.sin()), (x,), (tx_,), has_aux=True),
         TF.jvp(lambda a: (a * 2.0, a.sin()), (tx,), (ttx,), has_aux=True))
    same(F.jvp(lambda a: y * 1.0, (x,), (tx_,)), TF.jvp(lambda a: ty * 1.0, (tx,), (ttx,)))  # constant: zero
    (gt,), (tgt,) = both(backend, X0 - 0.1, requires_grad=True)  # a tangent that requires grad: J t does too
    same(F.jvp(lambda a: a.sin() * a, (x,), (gt,)), TF.jvp(lambda a: a.sin() * a, (tx,), (tgt,)))
    with pytest.raises(GradientError, match="Expected primals to be a tuple"):
        F.jvp(lambda a: a, x, tx_)
    with pytest.raises(GradientError, match="same python structure"):
        F.jvp(lambda a: a, (x,), (tx_, tx_))
    with pytest.raises(GradientError, match=r"primal's shape \(3,\), got \(2, 3\)"):
        F.jvp(lambda a: a, (x,), (y,))
    with pytest.raises(GradientError, match="at least one Tensor"):
        F.jvp(lambda: x, (), ())


# --- jacrev, jacfwd, hessian ---

@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_jacobians_match_torch(backend: str, transform: str) -> None:
    ours, theirs = getattr(F, transform), getattr(TF, transform)
    (x, y), (tx, ty) = both(backend, X0, Y0)
    same(ours(lambda a: a.sin() * a.sum())(x), theirs(lambda a: a.sin() * a.sum())(tx))
    same(ours(f_vec, argnums=(0, 1))(x, y), theirs(f_vec, argnums=(0, 1))(tx, ty))
    same(ours(f_vec, 1)(x, y), theirs(f_vec, 1)(tx, ty))
    same(ours(lambda d: [d["a"] * d["b"]])({"a": x, "b": x * 2.0}), theirs(lambda d: [d["a"] * d["b"]])({"a": tx, "b": tx * 2.0}))
    same(ours(lambda a: (a.exp(), {"aux": a}), has_aux=True)(x), theirs(lambda a: (a.exp(), {"aux": a}), has_aux=True)(tx))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_nested_jacobians_and_hessian_match_torch(backend: str) -> None:
    (x, y), (tx, ty) = both(backend, X0, Y0)
    same(F.jacrev(F.jacrev(lambda a: a.sin() * (a * a).sum()))(x), TF.jacrev(TF.jacrev(lambda a: a.sin() * (a * a).sum()))(tx))
    same(F.jacfwd(F.jacrev(f_xy, 1), 0)(x, y), TF.jacfwd(TF.jacrev(f_xy, 1), 0)(tx, ty))
    same(F.hessian(f_xy, argnums=(0, 1))(x, y), TF.hessian(f_xy, argnums=(0, 1))(tx, ty))
    same(F.hessian(lambda a: (a.exp() * a).sum())(x), TF.hessian(lambda a: (a.exp() * a).sum())(tx))


# --- vmap ---

@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_vmap_in_dims_and_out_dims_match_torch(backend: str) -> None:
    (x, y, z), (tx, ty, tz) = both(backend, X0, Y0, Z0)
    cases: list[tuple[Callable[..., Any], dict[str, Any], tuple[int, ...]]] = [
        (lambda a: a.sum(), {}, (1,)),
        (lambda a, b: a * b, {"in_dims": (1, None)}, (2, 0)),
        (lambda a, b: a * b, {"in_dims": (0, -1)}, (1, 2)),
        (lambda a, b: a @ b, {"in_dims": (0, None), "out_dims": -1}, (1, 2)),
        (lambda a, b: (a * b, a.sum()), {"in_dims": (-2, 1), "out_dims": (1, 0)}, (1, 2)),
        (lambda a, b: (a * b, b), {"in_dims": (0, None), "out_dims": (0, None)}, (1, 0)),
        (lambda d: {"s": d["a"] + d["b"]}, {"in_dims": ({"a": 0, "b": None},)}, (5,)),
        (lambda p: [p[0] * p[1], {"k": p[0]}], {"in_dims": ((0, 1),), "out_dims": [1, {"k": 0}]}, (6,)),
    ]
    ours_args = [x, y, z, {"a": y, "b": x}, (y, y.t())]
    theirs_args = [tx, ty, tz, {"a": ty, "b": tx}, (ty, ty.t())]
    arg_sets = {(1,): (1,), (2, 0): (2, 0), (1, 2): (1, 2), (1, 0): (1, 0), (5,): (3,), (6,): (4,)}
    for fn, kw, which in cases:
        picks = arg_sets[which]
        same(F.vmap(fn, **kw)(*[ours_args[i] for i in picks]), TF.vmap(fn, **kw)(*[theirs_args[i] for i in picks]))
    # kwargs pass through unmapped; a list argument is mapped leaf by leaf
    same(F.vmap(lambda a, k=None: a * k)(y, k=x), TF.vmap(lambda a, k=None: a * k)(ty, k=tx))
    same(F.vmap(lambda p: p[0] - p[1])([y, y * 2.0]), TF.vmap(lambda p: p[0] - p[1])([ty, ty * 2.0]))
    same(F.vmap(lambda a: a.sum())(mt.zeros((0, 3), dtype=mt.float64, backend=backend)),
         TF.vmap(lambda a: a.sum())(torch.zeros(0, 3, dtype=torch.float64)))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_vmap_composes_with_grad_and_jacrev(backend: str) -> None:
    (x, y, z), (tx, ty, tz) = both(backend, X0, Y0, Z0)
    same(F.vmap(F.grad(f_xy), in_dims=(None, 0))(x, y[:, None, :]), TF.vmap(TF.grad(f_xy), in_dims=(None, 0))(tx, ty[:, None, :]))
    same(F.vmap(F.jacrev(lambda a: a.sin() * a))(y), TF.vmap(TF.jacrev(lambda a: a.sin() * a))(ty))
    same(F.grad(lambda b: F.vmap(lambda r: (r * r).sum())(b).sin().sum())(y),
         TF.grad(lambda b: TF.vmap(lambda r: (r * r).sum())(b).sin().sum())(ty))
    same(F.vmap(F.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(1, None))(z, x[:3]),
         TF.vmap(TF.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(1, None))(tz, tx[:3]))
    same(F.jacrev(F.vmap(lambda r: r.exp().sum()))(z), TF.jacrev(TF.vmap(lambda r: r.exp().sum()))(tz))


def test_vmap_errors_like_torch() -> None:
    (x, y), _ = both("simple", X0, Y0)
    with pytest.raises(ShapeError, match=r"same size in the mapped dimension, got sizes \[2, 3\]"):
        F.vmap(lambda a, b: a * b)(y, x)
    with pytest.raises(ValueError, match="at least one Tensor to vmap over"):
        F.vmap(lambda a, b: a * b, in_dims=(None, None))(y, x)
    with pytest.raises(ValueError, match="in_dims is not compatible with the structure"):
        F.vmap(lambda a, b: a * b, in_dims=(0,))(y, x)
    with pytest.raises(ValueError, match="expected `in_dims` to be int or a"):
        F.vmap(lambda a, b: a * b, in_dims=[0, 0])(y, y)
    with pytest.raises(ShapeError, match="-2 <= in_dim < 2"):
        F.vmap(lambda a, b: a * b, in_dims=(0, 2))(y, y)
    with pytest.raises(ValueError, match="input is of type float"):
        F.vmap(lambda a, b: a * b)(y, 3.0)
    with pytest.raises(ValueError, match="integer dimension or None"):
        F.vmap(lambda a: a, in_dims=(1.0,))(y)
    with pytest.raises(ValueError, match="got no inputs"):
        F.vmap(lambda: x)()
    with pytest.raises(ValueError, match="must only return Tensors, got type float"):
        F.vmap(lambda a: 3.0)(y)
    with pytest.raises(ValueError, match="out_dims is not compatible"):
        F.vmap(lambda a: (a, a), out_dims=(0,))(y)
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        F.vmap(lambda a: (a, a), out_dims=(0, None))(y)
    with pytest.raises(ValueError, match="`out_dims` must be an int"):
        F.vmap(lambda a: a, out_dims=1.0)(y)
    with pytest.raises(ValueError, match="randomness"):
        F.vmap(lambda a: a, randomness="sometimes")
    with pytest.raises(ValueError, match="chunk_size"):
        F.vmap(lambda a: a, chunk_size=0)


def test_vmap_randomness_modes() -> None:
    y = mt.tensor(Y0, dtype=mt.float64, backend="simple")
    with pytest.raises(RuntimeError, match="randomness error mode"):
        F.vmap(lambda a: a + mt.rand(3, dtype=mt.float64, backend="simple"))(y)
    same_draws = F.vmap(lambda a: mt.rand(3, dtype=mt.float64, backend="simple"), randomness="same")(y)
    np.testing.assert_array_equal(same_draws[0].to_numpy(), same_draws[1].to_numpy())
    different = F.vmap(lambda a: mt.rand(3, dtype=mt.float64, backend="simple"), randomness="different")(y)
    assert not np.array_equal(different[0].to_numpy(), different[1].to_numpy())
    assert "loops in Python" in (F.vmap.__doc__ or "")


# --- functional_call ---

class Net(mt.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = mt.nn.Linear(3, 2, dtype=mt.float64)
        self.register_buffer("scale", mt.tensor([2.0, -1.0], dtype=mt.float64))
        self.tied = self.lin.weight

    def forward(self, x: Any, shift: Any = 0.0) -> Any:
        if shift == "fail":
            raise RuntimeError("forward failed")
        return (self.lin(x) * self.scale + shift).tanh()


class TorchNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(3, 2, dtype=torch.float64)
        self.register_buffer("scale", torch.tensor([2.0, -1.0], dtype=torch.float64))
        self.tied = self.lin.weight

    def forward(self, x: Any, shift: Any = 0.0) -> Any:
        return (self.lin(x) * self.scale + shift).tanh()


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_functional_call_matches_torch_and_restores(backend: str) -> None:
    net, tnet = Net(), TorchNet()
    originals = {k: v for k, v in (*net.named_parameters(), *net.named_buffers())}
    (w, b, s, x), (tw, tb, ts, tx) = both(backend, Z0.T.copy(), X0[:2], np.array([0.5, 1.5]), Y0, requires_grad=True)
    params, tparams = {"lin.weight": w, "lin.bias": b}, {"lin.weight": tw, "lin.bias": tb}
    out = F.functional_call(net, (params, {"scale": s}), (x,), {"shift": 0.25})
    tout = TF.functional_call(tnet, (tparams, {"scale": ts}), (tx,), {"shift": 0.25})
    same(out, tout)
    out.sum().backward()
    tout.sum().backward()
    for a, t in ((w, tw), (b, tb), (s, ts)):
        same(a.grad, t.grad)
    same(F.functional_call(net, params | {"scale": s}, x), TF.functional_call(tnet, tparams | {"scale": ts}, tx))
    assert {k: v for k, v in (*net.named_parameters(), *net.named_buffers())} == originals
    assert net.tied is net.lin.weight
    # tied weights: one name replaces both, unless tie_weights=False
    seen: dict[str, Any] = {}
    net.forward = lambda inp: seen.update(tied=net.tied, weight=net.lin.weight) or inp  # type: ignore[method-assign]
    F.functional_call(net, {"lin.weight": w}, (x,))
    assert seen["tied"] is w and seen["weight"] is w
    F.functional_call(net, {"lin.weight": w}, (x,), tie_weights=False)
    assert seen["tied"] is originals["tied"] and seen["weight"] is w
    del net.forward
    # an error inside the call still restores the originals
    with pytest.raises(RuntimeError, match="forward failed"):
        F.functional_call(net, params, (x,), {"shift": "fail"})
    assert net.lin.weight is originals["tied"] and net.scale is originals["scale"]


def test_functional_call_errors_like_torch() -> None:
    net = Net()
    x = mt.tensor(Y0, dtype=mt.float64)
    with pytest.raises(ValueError, match=r"\['lin.bias'\] appeared in multiple dictionaries"):
        F.functional_call(net, ({"lin.bias": x[0, :2]}, {"lin.bias": x[1, :2]}), (x,))
    with pytest.raises(ValueError, match="a dict, or a list/tuple of dicts"):
        F.functional_call(net, 3, (x,))
    with pytest.raises(RuntimeError, match=r"(?s)Unexpected key\(s\): 'foo'.*Missing key\(s\): 'lin.bias', 'lin.weight', 'scale', 'tied'."):
        F.functional_call(net, {"foo": x}, (x,), strict=True)
    with pytest.raises(ValueError, match="tied"):
        F.functional_call(net, {"lin.weight": x[:, :2].t(), "tied": x[:, 1:].t()}, (x,))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_per_example_gradients_with_functional_call_and_vmap(backend: str) -> None:
    """The torch.func recipe: vmap(grad(loss of functional_call)) over a batch gives per-example gradients."""
    net, tnet = Net(), TorchNet()
    (w, b, x), (tw, tb, tx) = both(backend, Z0.T.copy(), X0[:2], Y0)
    net.scale, tnet.scale = mt.tensor([2.0, -1.0], dtype=mt.float64, backend=backend), tnet.scale

    def loss(lib_call: Any, module: Any) -> Callable[..., Any]:
        return lambda params, sample: lib_call(module, params, (sample,)).pow(2).sum()

    got = F.vmap(F.grad(loss(F.functional_call, net)), in_dims=(None, 0))({"lin.weight": w, "lin.bias": b}, x)
    want = TF.vmap(TF.grad(loss(TF.functional_call, tnet)), in_dims=(None, 0))({"lin.weight": tw, "lin.bias": tb}, tx)
    same(got, want)
