"""The fused ops (softmax / log_softmax, scaled_dot_product_attention's scaled causal softmax, layer_norm, GELU): forward
values and gradients against PyTorch on every backend (the ``simple`` and ``cuda`` backends run the composed defaults
of ``Backend``, ``fast`` its Numba row kernels), over non-contiguous inputs, dims other than the last, zero-size dims,
float32 and float64, -inf entries, the parallel kernel builds, and second derivatives (``create_graph``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS

import minitensor as mt
from minitensor.backends import base, fast, fast_fused, fast_launch
from minitensor.nn import functional as F  # noqa: N812

FLOATS = [(mt.float32, torch.float32, 2e-5), (mt.float64, torch.float64, 1e-10)]
CASES = [(b, *f) for b in BACKENDS for f in FLOATS if not (b == "cuda" and f[0] == mt.float32)]
"""(backend, dtype, torch dtype, tolerance): cuda runs in Numba's simulator (seconds per kernel call), so float64
only there, to keep the suite short."""
ROUTES = {"fast": ("small", "large")}
"""fast's two softmax routes for the tests' small inputs: the small-input kernels (the default under SMALL_SOFTMAX
elements) and the one-pass kernels larger inputs take (forced by a zero threshold); one route elsewhere."""
SOFTMAX_CASES = [(b, route, *f) for (b, *f) in CASES for route in ROUTES.get(b, ("default",))]


def lean(backend: str) -> bool:
    """True on the simulated cuda backend: the fewest layouts there."""
    return backend == "cuda"


def use_route(route: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Send softmax calls down fast's one-pass kernels for ``route`` "large" (see ROUTES)."""
    if route == "large":
        monkeypatch.setattr(fast_fused, "SMALL_SOFTMAX", 0)


def pair(array: np.ndarray, backend: str, dtype: Any, tdtype: Any, grad: bool = True) -> tuple[mt.Tensor, torch.Tensor]:
    """The same values as a minitensor and a torch tensor (both leaves requiring grad when ``grad``)."""
    return (mt.tensor(array, dtype=dtype, backend=backend, requires_grad=grad),
            torch.tensor(array, dtype=tdtype, requires_grad=grad))


def close(ours: mt.Tensor | None, theirs: torch.Tensor | None, tol: float) -> None:
    assert ours is not None and theirs is not None
    expected = theirs.detach().numpy()
    got = ours.to_numpy()
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, equal_nan=True)


def check(backend: str, arrays: list[np.ndarray], ours: Callable[..., mt.Tensor], theirs: Callable[..., torch.Tensor],
          dtype: Any, tdtype: Any, tol: float, seed: int = 0) -> None:
    """Forward of ``ours``/``theirs`` on the same inputs, then the gradients of every input for a random upstream
    gradient (finite entries only)."""
    pairs = [pair(a, backend, dtype, tdtype) for a in arrays]
    out, tout = ours(*[p[0] for p in pairs]), theirs(*[p[1] for p in pairs])
    close(out, tout, tol)
    upstream = np.random.default_rng(seed).normal(size=tout.shape)
    out.backward(mt.tensor(upstream, dtype=dtype, backend=backend))
    tout.backward(torch.tensor(upstream, dtype=tdtype))
    for (x, tx) in pairs:
        close(x.grad, tx.grad, tol)


# --- softmax family ---------------------------------------------------------------------------------


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("backend,route,dtype,tdtype,tol", SOFTMAX_CASES)
def test_softmax_matches_torch_over_layouts(backend: str, route: str, log: bool, dtype: Any, tdtype: Any, tol: float,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    use_route(route, monkeypatch)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 4, 5)) * 3
    ours, theirs = (F.log_softmax, torch.log_softmax) if log else (F.softmax, torch.softmax)
    for dim in (1,) if lean(backend) else (-1, 1, 0):
        check(backend, [x], lambda a, d=dim: ours(a, dim=d), lambda a, d=dim: theirs(a, dim=d), dtype, tdtype, tol)
    # a non-contiguous input (a transposed view) along its now-strided last dim
    check(backend, [x], lambda a: ours(a.transpose(0, 2), dim=-1), lambda a: theirs(a.transpose(0, 2), dim=-1),
          dtype, tdtype, tol)
    # a broadcast upstream gradient reaches the backward kernel with stride 0 along the row
    a, ta = pair(x[0], backend, dtype, tdtype)
    ours(a, dim=-1).sum().backward()
    theirs(ta, dim=-1).sum().backward()
    close(a.grad, ta.grad, tol)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("backend,route", [(b, route) for b in BACKENDS for route in ROUTES.get(b, ("default",))])
def test_softmax_of_minus_inf_and_zero_size(backend: str, route: str, log: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    use_route(route, monkeypatch)
    inf = np.inf
    x = np.array([[0.5, -inf, 2.0, -inf], [-inf, -inf, -inf, -inf], [1e30, -1e30, 3.0, 0.0]])
    ours, theirs = (F.log_softmax, torch.log_softmax) if log else (F.softmax, torch.softmax)
    a, ta = pair(x, backend, mt.float64, torch.float64)
    out, tout = ours(a, dim=1), theirs(ta, dim=1)
    close(out, tout, 1e-12)  # the all -inf row is NaN, as in torch
    out[0].sum().backward()
    tout[0].sum().backward()
    close(a.grad[0], ta.grad[0], 1e-12)
    for shape, dim in (((0, 4), -1), ((3, 0), -1), ((3, 0), 0), ((2, 0, 3), 2)):
        check(backend, [np.zeros(shape)], lambda v, d=dim: ours(v, dim=d), lambda v, d=dim: theirs(v, dim=d),
              mt.float32, torch.float32, 1e-6)


def test_softmax_parallel_build_and_serial_threshold() -> None:
    """Rows enough to take the thread-pool build (tests fix its threshold at 32K elements: conftest.py)."""
    assert fast_launch.use_parallel(300 * 130)
    x = np.random.default_rng(2).normal(size=(300, 130))
    for ours, theirs in ((F.softmax, torch.softmax), (F.log_softmax, torch.log_softmax)):
        check("fast", [x], lambda a, o=ours: o(a, dim=-1), lambda a, t=theirs: t(a, dim=-1), mt.float64,
              torch.float64, 1e-10)


# --- attention: scale and causal mask folded into the softmax ------------------------------------------


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("backend,route,dtype,tdtype,tol", SOFTMAX_CASES)
def test_attention_matches_torch(backend: str, route: str, causal: bool, dtype: Any, tdtype: Any, tol: float,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    use_route(route, monkeypatch)
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(2, 2, 3, 4)), rng.normal(size=(2, 2, 5, 4)), rng.normal(size=(2, 2, 5, 3))
    for scale in (0.3,) if lean(backend) else (None, 0.3):
        check(backend, [q, k, v],
              lambda a, b, c, s=scale: F.scaled_dot_product_attention(a, b, c, is_causal=causal, scale=s),
              lambda a, b, c, s=scale: torch.nn.functional.scaled_dot_product_attention(a, b, c, is_causal=causal, scale=s),
              dtype, tdtype, tol)
    # the GPT's layout: heads as strided views of one projection
    qkv = rng.normal(size=(2, 3, 3 * 4))

    def heads(lib_split: Callable[..., Any], t: Any, sdpa: Callable[..., Any]) -> Any:
        parts = lib_split(t)
        a, b, c = (p.reshape(2, 3, 2, 2).transpose(1, 2) for p in parts)
        return sdpa(a, b, c, is_causal=causal)

    check(backend, [qkv], lambda t: heads(lambda u: u.split(4, dim=2), t, F.scaled_dot_product_attention),
          lambda t: heads(lambda u: u.split(4, dim=2), t, torch.nn.functional.scaled_dot_product_attention),
          dtype, tdtype, tol)


# --- layer_norm ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend,dtype,tdtype,tol", CASES)
def test_layer_norm_matches_torch(backend: str, dtype: Any, tdtype: Any, tol: float) -> None:
    rng = np.random.default_rng(4)
    x, w, b = rng.normal(size=(3, 2, 5)) * 2 + 1, rng.normal(size=5), rng.normal(size=5)
    tln = torch.nn.functional.layer_norm
    check(backend, [x, w, b], lambda a, ww, bb: F.layer_norm(a, (5,), ww, bb),
          lambda a, ww, bb: tln(a, (5,), ww, bb), dtype, tdtype, tol)
    check(backend, [x], lambda a: F.layer_norm(a, 5, eps=0.1), lambda a: tln(a, (5,), eps=0.1), dtype, tdtype, tol)
    check(backend, [x, w], lambda a, ww: F.layer_norm(a.transpose(0, 2), (3,), ww[:3]),
          lambda a, ww: tln(a.transpose(0, 2), (3,), ww[:3]), dtype, tdtype, tol)  # strided rows and weight
    w2 = rng.normal(size=(2, 5))
    check(backend, [x, w2], lambda a, ww: F.layer_norm(a, (2, 5), ww), lambda a, ww: tln(a, (2, 5), ww),
          dtype, tdtype, tol)  # two normalized dims
    check(backend, [np.zeros((0, 5)), w, b], lambda a, ww, bb: F.layer_norm(a, 5, ww, bb),
          lambda a, ww, bb: tln(a, (5,), ww, bb), dtype, tdtype, tol)  # no rows: zero parameter gradients


def test_layer_norm_parallel_build() -> None:
    rng = np.random.default_rng(5)
    x, w, b = rng.normal(size=(600, 64)), rng.normal(size=64), rng.normal(size=64)
    check("fast", [x, w, b], lambda a, ww, bb: F.layer_norm(a, 64, ww, bb),
          lambda a, ww, bb: torch.nn.functional.layer_norm(a, (64,), ww, bb), mt.float64, torch.float64, 1e-10)


# --- GELU ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("backend,dtype,tdtype,tol", CASES)
def test_gelu_matches_torch(backend: str, approximate: str, dtype: Any, tdtype: Any, tol: float) -> None:
    x = np.concatenate([np.linspace(-9, 9, 19), [-40.0, 40.0, 0.0]]).reshape(2, 11)
    check(backend, [x], lambda a: F.gelu(a.t(), approximate=approximate),
          lambda a: torch.nn.functional.gelu(a.t(), approximate=approximate), dtype, tdtype, tol)
    special = np.array([np.inf, -np.inf, np.nan])  # (torch's float32 kernel gives NaN at +inf, its float64 one inf)
    a, ta = pair(special, backend, mt.float64, torch.float64)
    close(F.gelu(a, approximate=approximate), torch.nn.functional.gelu(ta, approximate=approximate), tol)


# --- second derivatives -----------------------------------------------------------------------------------


def test_second_derivatives_match_torch() -> None:
    """create_graph through every fused op gives torch's gradient penalty gradients (fast, float64)."""
    rng = np.random.default_rng(6)
    arrays = [rng.normal(size=(2, 3, 4)), rng.normal(size=4), rng.normal(size=4), rng.normal(size=(2, 3, 4))]

    def penalty(lib: Any, x: Any, w: Any, b: Any, k: Any) -> Any:
        fn = F if lib is mt else torch.nn.functional
        h = fn.layer_norm(x, (4,), w, b)
        h = fn.gelu(h) + fn.gelu(h * 0.5, approximate="tanh")
        att = fn.scaled_dot_product_attention(h, k, h, is_causal=True)
        y = (fn.softmax(att, dim=-1) * 2 + fn.log_softmax(att, dim=1)).sum()
        grads = lib.autograd.grad(y, [x, w, b, k], create_graph=True)
        return sum((g * g).sum() for g in grads)

    ours = [mt.tensor(a, dtype=mt.float64, backend="fast", requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    p, tp = penalty(mt, *ours), penalty(torch, *theirs)
    close(p, tp, 1e-9)
    p.backward()
    tp.backward()
    for x, tx in zip(ours, theirs):
        close(x.grad, tx.grad, 1e-9)


@pytest.mark.parametrize("backend,dtype,tdtype,tol", CASES)
def test_gelu_backend_entry_points(backend: str, dtype: Any, tdtype: Any, tol: float) -> None:
    """Backend.gelu with ``slope`` and Backend.gelu_backward (not reached through F.gelu's own backward) against torch."""
    x0, g0 = np.linspace(-6, 6, 24).reshape(4, 6), np.random.default_rng(7).normal(size=(4, 6))
    x, g = mt.tensor(x0, dtype=dtype, backend=backend), mt.tensor(g0, dtype=dtype, backend=backend)
    tx = torch.tensor(x0, dtype=tdtype, requires_grad=True)
    ty = torch.nn.functional.gelu(tx)
    (tslope,) = torch.autograd.grad(ty.sum(), tx)
    (tgrad,) = torch.autograd.grad(torch.nn.functional.gelu(tx), tx, torch.tensor(g0, dtype=tdtype))
    be = x.backend
    out, slope, grad_input = (be.empty(x.shape, x.dtype) for _ in range(3))
    be.gelu(x._data, out, "none", slope)
    be.gelu_backward(g._data, x._data, grad_input, "none")
    for ours, theirs in ((out, ty), (slope, tslope), (grad_input, tgrad)):
        close(mt.Tensor(ours, be), theirs, tol)


@pytest.mark.skipif(not base.KEPT_FREED_MEMORY, reason="glibc's mallopt is not available or MALLOC_* tunables are set")
def test_freed_host_buffers_are_reused_without_page_faults() -> None:
    """A step's MB-sized buffers, freed together, come back from malloc's heap instead of being faulted in from the
    OS again (with glibc's defaults this loop takes ~60,000 page faults)."""
    import resource

    def step() -> None:
        buffers = [fast.backend.empty((512 << 10,), np.dtype(np.float32)) for _ in range(12)]  # 2 MiB each
        for b in buffers:
            b.storage.fill(1.0)

    for _ in range(3):
        step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        step()
    assert resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before < 1000


@pytest.mark.parametrize("log", [False, True])
def test_dense_small_softmax_kernels_match_the_general_ones_bit_for_bit(log: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small contiguous inputs along the last dim take the dense-rows kernels (cheaper to compile); they run the same
    row functions as the general kernels, so forward and backward results are identical."""
    rng = np.random.default_rng(7)
    x, g = rng.normal(size=(6, 11)) * 4, rng.normal(size=(6, 11))
    results = []
    for dense in (True, False):
        if not dense:
            monkeypatch.setattr(fast_fused, "_dense", lambda *data: False)
        a = mt.tensor(x, dtype=mt.float32, backend="fast", requires_grad=True)
        out = (F.log_softmax if log else F.softmax)(a, dim=-1)
        out.backward(mt.tensor(g, dtype=mt.float32, backend="fast"))
        assert a.grad is not None
        results.append((out.to_numpy(), a.grad.to_numpy()))
    for dense_result, general_result in zip(*results):
        np.testing.assert_array_equal(dense_result, general_result)


@pytest.mark.parametrize("size", [24, 40_000])  # the serial and the parallel kernel builds
def test_gelu_float32_kernel_is_accurate_to_a_few_ulps(size: int) -> None:
    """fast's float32 GELU kernel (contiguous input, so not the composed fallback) against torch's float64 GELU where
    that is accurate (|x| <= 5) and against 0.5 x erfc(-x / sqrt 2) in float64 in the tail (torch's 1 + erf cancels
    there): values within 8 float32 ulps, the derivative within 3e-7; float64 is PyTorch's formula (libm's erf), within
    1e-10 of PyTorch's float64 values everywhere."""
    x = np.linspace(-13.0, 13.0, size)
    exact = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x.astype(np.float32).astype(np.float64)])
    for dtype, ndtype in ((mt.float32, np.float32), (mt.float64, np.float64)):
        xs = x.astype(ndtype)
        a = mt.tensor(xs, dtype=dtype, backend="fast", requires_grad=True)
        y = F.gelu(a)
        y.backward(mt.tensor(np.ones(size), dtype=dtype, backend="fast"))
        assert a.grad is not None
        tx = torch.tensor(xs.astype(np.float64), requires_grad=True)
        ty = torch.nn.functional.gelu(tx)
        ty.sum().backward()
        assert tx.grad is not None
        body = np.abs(x) <= 5
        got, grad = y.to_numpy().astype(np.float64), a.grad.to_numpy().astype(np.float64)
        if ndtype == np.float32:
            ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
            assert np.max(np.abs(got - exact) / ulp) <= 8
            np.testing.assert_allclose(got[body], ty.detach().numpy()[body], rtol=8 * 2.0**-24, atol=1e-30)
            np.testing.assert_allclose(grad, tx.grad.numpy(), rtol=0, atol=3e-7)  # Phi + x phi cancels near x = -0.75
            with torch.no_grad():  # torch's own float32 kernel, at the tolerance the other tests use
                np.testing.assert_allclose(got, torch.nn.functional.gelu(torch.tensor(xs)).numpy(), atol=2e-5, rtol=2e-5)
        else:
            # PyTorch's formula, 0.5 x (1 + erf(x / sqrt 2)), tail included (1 + erf cancels there as in PyTorch, so an
            # ulp of difference between libm's erf and PyTorch's grows to ~1e-12 relative near x = -4)
            np.testing.assert_allclose(got, ty.detach().numpy(), rtol=1e-10, atol=1e-300)
            exact64 = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x])
            np.testing.assert_allclose(got[body], exact64[body], rtol=1e-9, atol=1e-300)
            np.testing.assert_allclose(grad, tx.grad.numpy(), rtol=1e-12, atol=1e-15)



@pytest.mark.parametrize("shape,causal,scale,log", [((4, 2, 64, 64), True, 0.125, False),  # GPT attention, parallel
                                                    ((3, 70), False, 0.5, True),  # a loss: rows not a multiple of 16
                                                    ((5, 37), True, -0.7, False)])  # a negative scale
def test_one_pass_softmax_matches_torch(shape: tuple[int, ...], causal: bool, scale: float, log: bool,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """fast's one-pass softmax kernels (forced for the small shapes) through Backend.softmax / softmax_backward with a
    scale and causal mask, float32 and float64, values and gradients against torch."""
    monkeypatch.setattr(fast_fused, "SMALL_SOFTMAX", 0)
    rng = np.random.default_rng(8)
    x, g = rng.normal(size=shape) * 4, rng.normal(size=shape)
    be = fast.backend
    for dtype, tdtype, tol in FLOATS:
        a, ta = pair(x, "fast", dtype, tdtype)
        y, grad_input = be.empty(a.shape, a.dtype), be.empty(a.shape, a.dtype)
        be.softmax(a._data, -1, y, log, scale, causal)
        be.softmax_backward(mt.tensor(g, dtype=dtype, backend="fast")._data, y, -1, grad_input, log, scale)
        z = ta * scale
        if causal:
            z = z.masked_fill(~torch.ones(shape[-2:], dtype=torch.bool).tril(), -torch.inf)
        tout = torch.log_softmax(z, dim=-1) if log else torch.softmax(z, dim=-1)
        tout.backward(torch.tensor(g, dtype=tdtype))
        close(mt.Tensor(y, be), tout, tol)
        close(mt.Tensor(grad_input, be), ta.grad, tol)
