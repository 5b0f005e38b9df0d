"""minitensor.distributions.transforms and constraint_registry against torch.distributions: transform values,
inverses and log |det J| with their gradients to 1e-10 in float64 (tests/torch_oracle.py's check), shapes, flags,
caching and errors, and biject_to / transform_to landing in each constraint. The transforms joining slices (cat,
stack) and CorrCholeskyTransform are in tests/test_distributions_transforms_join.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS
from distribution_inputs import Inputs
from torch_oracle import check

import minitensor as mt

INPUTS = Inputs(23)
RNG = INPUTS.rng
normal, positive, unit, simplex = INPUTS.normal, INPUTS.positive, INPUTS.unit, INPUTS.simplex
cholesky_factor, spd = INPUTS.cholesky_factor, INPUTS.spd
TOL = {"rtol": 1e-10, "atol": 1e-10}
D = mt.distributions


# name: (make(D, *params), x in the domain, y in the codomain, params, bijective with a log |det J|)
TRANSFORMS: dict[str, tuple[Any, np.ndarray, np.ndarray, list[np.ndarray], bool]] = {
    "exp": (lambda D: D.transforms.ExpTransform(), normal(2, 3), positive(2, 3), [], True),
    "exp_inverse": (lambda D: D.ExpTransform().inv, positive(2, 3), normal(2, 3), [], True),
    "affine_numbers": (lambda D: D.AffineTransform(0.5, -2.0), normal(2, 3), normal(2, 3), [], True),
    "affine_tensors": (lambda D, a, b: D.AffineTransform(a, b), normal(2, 3), normal(2, 3), [normal(3), normal(3)], True),
    "affine_event": (lambda D, a, b: D.AffineTransform(a, b, event_dim=1), normal(4, 3), normal(4, 3),
                     [normal(3), normal(4, 1)], True),
    "sigmoid": (lambda D: D.SigmoidTransform(), normal(2, 3) * 3, unit(2, 3), [], True),
    "softplus": (lambda D: D.transforms.SoftplusTransform(), normal(2, 3) * 3, positive(2, 3), [], True),
    "tanh": (lambda D: D.TanhTransform(), normal(2, 3), RNG.uniform(-0.9, 0.9, (2, 3)), [], True),
    "power": (lambda D, e: D.PowerTransform(e), positive(2, 3), positive(2, 3), [positive(3)], True),
    "power_negative": (lambda D, e: D.PowerTransform(-e), positive(3), positive(3), [positive(3)], True),
    "stick_breaking": (lambda D: D.StickBreakingTransform(), normal(2, 3), simplex(2, 4), [], True),
    "independent": (lambda D: D.IndependentTransform(D.SigmoidTransform(), 1), normal(2, 3), unit(2, 3), [], True),
    "reshape": (lambda D: D.ReshapeTransform((2, 3), (3, 2)), normal(4, 2, 3), normal(4, 3, 2), [], True),
    "identity": (lambda D: D.transforms.identity_transform, normal(2, 3), normal(2, 3), [], True),
    "compose_tanh_like": (lambda D, a, b: D.ComposeTransform([D.AffineTransform(a, b), D.SigmoidTransform(),
                                                              D.AffineTransform(-1.0, 2.0)]),
                          normal(2, 3), RNG.uniform(-0.9, 0.9, (2, 3)), [normal(3), positive(3)], True),
    "compose_event_dims": (lambda D: D.ComposeTransform([D.StickBreakingTransform(), D.ExpTransform()]),
                           normal(2, 3), np.exp(simplex(2, 4)), [], True),
    "compose_affine_stick": (lambda D, a, b: D.ComposeTransform([D.AffineTransform(a, b, event_dim=1),
                                                                 D.StickBreakingTransform()]),
                             normal(2, 3), simplex(2, 4), [normal(3), positive(3)], True),
    "cdf": (lambda D, m, s: D.CumulativeDistributionTransform(D.Normal(m, s)), normal(2, 3), unit(2, 3),
            [normal(3), positive(3)], True),
    "abs": (lambda D: D.AbsTransform(), normal(2, 3), positive(2, 3), [], False),
    "softmax": (lambda D: D.SoftmaxTransform(), normal(2, 3), simplex(2, 3), [], False),
    "lower_cholesky": (lambda D: D.LowerCholeskyTransform(), normal(2, 3, 3), cholesky_factor(2, 3, 3), [], False),
    "positive_definite": (lambda D: D.PositiveDefiniteTransform(), normal(3, 3), spd(3, 3), [], False),
}
FAST_ONLY = {"positive_definite"}  # the simple backend's Cholesky costs seconds


def _transform_outputs(name: str) -> Any:
    make, _, _, params, has_jacobian = TRANSFORMS[name]

    def fn(L: Any, x: Any, y: Any, *p: Any) -> tuple[Any, ...]:
        t = make(L.distributions, *p)
        fx, iy = t(x), t.inv(y)
        if not has_jacobian:
            return fx, iy
        return fx, iy, t.log_abs_det_jacobian(x, fx), t.inv.log_abs_det_jacobian(y, iy)

    return fn


@pytest.mark.parametrize("backend, name", [(b, n) for n in TRANSFORMS for b in CPU_BACKENDS
                                           if not (b == "simple" and n in FAST_ONLY)])
def test_transform_values_inverses_and_jacobians_match_torch(backend, name):
    _, x, y, params, _ = TRANSFORMS[name]
    check(backend, _transform_outputs(name), x, y, *params, **TOL)


def _both_transforms(name: str) -> tuple[Any, Any]:
    make, _, _, params, _ = TRANSFORMS[name]
    return make(D, *[mt.tensor(p) for p in params]), make(torch.distributions, *[torch.tensor(p) for p in params])


def _same_or_raise(get: Any, ours: Any, theirs: Any) -> Any:
    """get(ours) and get(theirs): equal, or both raising the same exception type."""
    try:
        want = get(theirs)
    except Exception as error:  # noqa: BLE001 - any exception type torch raises must be ours too
        with pytest.raises(type(error)):
            get(ours)
        return None
    got = get(ours)
    if isinstance(want, torch.Tensor):
        np.testing.assert_array_equal(got.to_numpy(), want.numpy())
    else:
        assert got == want
    return got


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transform_flags_constraints_shapes_and_repr_match_torch(name):
    ours, theirs = _both_transforms(name)
    _, x, y, params, _ = TRANSFORMS[name]
    for side in ("domain", "codomain"):
        c, tc = getattr(ours, side), getattr(theirs, side)
        assert c.event_dim == tc.event_dim and c.is_discrete == tc.is_discrete
        if "tensor" not in repr(tc):
            assert repr(c) == repr(tc)
    assert ours.bijective == theirs.bijective and ours.inv.bijective == theirs.inv.bijective
    _same_or_raise(lambda t: t.sign, ours, theirs)
    _same_or_raise(lambda t: t.event_dim, ours, theirs)
    _same_or_raise(lambda t: t.inv.event_dim, ours, theirs)
    for shape in (x.shape, (5,) + x.shape, ()):
        _same_or_raise(lambda t, s=shape: tuple(t.forward_shape(s)), ours, theirs)
    for shape in (y.shape, (5,) + y.shape, ()):
        _same_or_raise(lambda t, s=shape: tuple(t.inverse_shape(s)), ours, theirs)
        _same_or_raise(lambda t, s=shape: tuple(t.inv.forward_shape(s)), ours, theirs)
    assert repr(ours) == repr(theirs) and repr(ours.inv) == repr(theirs.inv)
    assert ours.inv.inv is ours and ours.inv is ours.inv
    assert ours == ours and ours.inv == ours.inv and (ours == ours.inv) == (theirs == theirs.inv)


@pytest.mark.parametrize("name", [n for n in TRANSFORMS if n not in FAST_ONLY])
def test_round_trips_and_cache(name):
    make, x, y, params, bijective = TRANSFORMS[name]
    p = [mt.tensor(a) for a in params]
    t, xs, ys = make(D, *p), mt.tensor(x), mt.tensor(y)
    np.testing.assert_allclose(t(t.inv(ys)).to_numpy(), y, rtol=1e-9, atol=1e-12)  # also the pseudo-inverses' law
    if bijective:
        np.testing.assert_allclose(t.inv(t(xs)).to_numpy(), x, rtol=1e-8, atol=1e-9)
    try:
        cached = t.with_cache(1)
    except NotImplementedError:  # CumulativeDistributionTransform and friends have their own; others as torch
        return
    assert cached._cache_size == 1 and cached.with_cache(1) is cached and t.with_cache(0) is t
    fx = cached(xs)
    assert cached(xs) is fx and cached.inv(fx) is xs  # remembered by identity, so t.inv(t(x)) is x
    iy = cached.inv(ys)
    assert cached.inv(ys) is iy and cached(iy) is ys
    assert name == "identity" or t(xs) is not t(xs)  # no cache at size 0


def test_transform_errors_match_torch():
    class Scaled(D.Transform):
        def __init__(self, k, cache_size=0):
            super().__init__(cache_size=cache_size)

    cases = [
        (lambda L: L.distributions.transforms.Transform(cache_size=2), ValueError, "cache_size must be 0 or 1"),
        (lambda L: L.distributions.ReshapeTransform((2, 3), (5,)), ValueError, "different numbers of elements"),
        (lambda L: L.distributions.ReshapeTransform((6,), (2, 3)).event_dim, ValueError, "Please use either"),
        (lambda L: L.distributions.ReshapeTransform((6,), (2, 3)).inverse_shape((5, 3, 2)), ValueError,
         "Shape mismatch"),
        (lambda L: L.distributions.StickBreakingTransform().forward_shape(()), ValueError, "Too few dimensions"),
        (lambda L: L.distributions.IndependentTransform(L.distributions.ExpTransform(), 2)(L.ones(3)), ValueError,
         "Too few dimensions on input"),
        (lambda L: L.distributions.AbsTransform().log_abs_det_jacobian(L.ones(1), L.ones(1)), NotImplementedError, None),
        (lambda L: L.distributions.AbsTransform().sign, NotImplementedError, None),
    ]
    for fn, error, pattern in cases:
        for L in (torch, mt):
            with pytest.raises(error, match=pattern):
                fn(L)
    with pytest.raises(ValueError, match="got 2"):  # ours names the value
        D.ExpTransform(cache_size=2)
    with pytest.raises(NotImplementedError, match="with_cache is not implemented"):
        Scaled(1).with_cache(1)
    assert D.ExpTransform() == D.ExpTransform() and D.ExpTransform() != D.SigmoidTransform()
    assert D.AffineTransform(1.0, 2.0) == D.AffineTransform(1.0, 2.0) != D.AffineTransform(1.0, 3.0)
    assert D.AffineTransform(mt.ones(2), 2.0) == D.AffineTransform(mt.ones(2), 2.0)
    assert D.ComposeTransform([D.ExpTransform()]) == D.ComposeTransform([D.ExpTransform()])
    assert D.PowerTransform(mt.tensor(2.0)) != D.PowerTransform(mt.tensor(3.0))


# biject_to / transform_to: (make the constraint from (constraints, lib), the shape of x)
CONSTRAINTS = {
    "real": (lambda C, L: C.real, (2, 3)),
    "positive": (lambda C, L: C.positive, (2, 3)),
    "nonnegative": (lambda C, L: C.nonnegative, (3,)),
    "greater_than": (lambda C, L: C.greater_than(L.tensor([-1.0, 0.5, 2.0], dtype=L.float64)), (2, 3)),
    "greater_than_eq": (lambda C, L: C.greater_than_eq(1.5), (3,)),
    "less_than": (lambda C, L: C.less_than(-0.5), (2, 3)),
    "unit_interval": (lambda C, L: C.unit_interval, (2, 3)),
    "interval": (lambda C, L: C.interval(L.tensor([-1.0, 0.0, 2.0], dtype=L.float64), 3.0), (2, 3)),
    "half_open_interval": (lambda C, L: C.half_open_interval(-2.0, 5.0), (3,)),
    "simplex": (lambda C, L: C.simplex, (2, 3)),
    "real_vector": (lambda C, L: C.real_vector, (2, 3)),
    "independent_positive": (lambda C, L: C.independent(C.positive, 2), (2, 3)),
    "lower_cholesky": (lambda C, L: C.lower_cholesky, (2, 3, 3)),
    "positive_definite": (lambda C, L: C.positive_definite, (3, 3)),
}
NOT_BIJECTED = {"lower_cholesky", "positive_definite"}  # torch has only transform_to for these


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", list(CONSTRAINTS))
def test_biject_to_and_transform_to_land_in_the_constraint_as_torch(registry, name):
    make, shape = CONSTRAINTS[name]
    c, tc = make(D.constraints, mt), make(torch.distributions.constraints, torch)
    lookup, tlookup = getattr(D, registry), getattr(torch.distributions, registry)
    if registry == "biject_to" and name in NOT_BIJECTED:
        for f, k in ((lookup, c), (tlookup, tc)):
            with pytest.raises(NotImplementedError, match="Cannot transform _"):
                f(k)
        return
    t, tt = lookup(c), tlookup(tc)
    assert repr(t) == repr(tt) and t.bijective == tt.bijective
    x = normal(*shape) * 2
    backend = "fast" if name in NOT_BIJECTED or name in ("greater_than", "interval") else "simple"

    def fn(L, x):
        transform = (lookup(c) if L is mt else tlookup(tc))
        y = transform(x)
        return (y, transform.log_abs_det_jacobian(x, y)) if transform.bijective else y

    if name in NOT_BIJECTED or name in ("greater_than", "interval"):  # constants in the constraint: values only
        y = check(backend, fn, x, grad=name not in ("greater_than", "interval"), **TOL)[0]
    else:
        y = check(backend, fn, x, **TOL)[0]
    assert bool(c.check(y).all().item())
    if t.bijective:
        np.testing.assert_allclose(t.inv(y).to_numpy(), x, rtol=1e-8, atol=1e-8)


def test_constraint_registry_errors_and_registration():
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        D.biject_to(D.constraints.boolean)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass or instance"):
        D.biject_to.register(int, lambda c: D.ExpTransform())
    with pytest.raises(TypeError, match="Expected constraint to be either"):
        torch.distributions.biject_to.register(int, lambda c: torch.distributions.ExpTransform())
    registry = D.constraint_registry.ConstraintRegistry()

    @registry.register(D.constraints.positive)
    def _softplus(constraint):
        return D.SoftplusTransform()

    assert isinstance(registry(D.constraints.greater_than(3.0)), D.SoftplusTransform)  # by class, as in torch
    with pytest.raises(NotImplementedError):
        registry(D.constraints.real)


def test_cuda_stick_breaking():
    if "cuda" not in BACKENDS:
        pytest.skip("no cuda backend")
    check("cuda", lambda L, z: (L.distributions.StickBreakingTransform()(z),
                                L.distributions.StickBreakingTransform().log_abs_det_jacobian(
                                    z, L.distributions.StickBreakingTransform()(z))),
          normal(2), **TOL)
