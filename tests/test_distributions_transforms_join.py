"""CatTransform, StackTransform and CorrCholeskyTransform, the constraints they map between (cat, stack,
corr_cholesky) and the other matrix constraints (square, symmetric, positive_semidefinite, multinomial), and their
biject_to / transform_to registrations, against torch.distributions: values, inverses and log |det J| with gradients
to 1e-10 in float64 (tests/torch_oracle.py's check), flags, shapes, caching and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS
from distribution_inputs import Inputs
from torch.distributions import utils as torch_utils
from torch_oracle import check

import minitensor as mt
from minitensor.distributions import transforms_vector

INPUTS = Inputs(47)
normal, positive, unit, simplex = INPUTS.normal, INPUTS.positive, INPUTS.unit, INPUTS.simplex
TOL = {"rtol": 1e-10, "atol": 1e-10}
D = mt.distributions


def corr_factors(*batch_and_dim: int) -> np.ndarray:
    """Cholesky factors of correlation matrices: CorrCholeskyTransform of a random vector."""
    *batch, n = batch_and_dim
    x = torch.tensor(normal(*batch, n * (n - 1) // 2))
    return torch.distributions.CorrCholeskyTransform()(x).numpy()


# name: (make(D), x in the domain, y in the codomain, bijective with a log |det J|)
TRANSFORMS: dict[str, tuple[Any, np.ndarray, np.ndarray]] = {
    "cat_last_dim": (lambda D: D.CatTransform([D.ExpTransform(), D.AffineTransform(1.0, 2.0), D.SigmoidTransform()],
                                              dim=-1, lengths=[1, 2, 1]),
                     normal(2, 4), np.concatenate([positive(2, 1), normal(2, 2), unit(2, 1)], -1)),
    "cat_first_dim": (lambda D: D.CatTransform([D.ExpTransform(), D.TanhTransform()], dim=0, lengths=[2, 1]),
                      normal(3, 2), np.concatenate([positive(2, 2), INPUTS.between(-0.9, 0.9, 1, 2)], 0)),
    "cat_unit_lengths": (lambda D: D.CatTransform([D.ExpTransform(), D.SoftplusTransform()], dim=1), normal(2, 2),
                         positive(2, 2)),
    "cat_event_dims": (lambda D: D.CatTransform([D.ExpTransform(), D.AffineTransform(0.5, 2.0, event_dim=1)], dim=0,
                                                lengths=[1, 2]),
                       normal(3, 4), np.concatenate([positive(1, 4), normal(2, 4)], 0)),
    "cat_event_dims_sum": (lambda D: D.CatTransform([D.ExpTransform(), D.AffineTransform(0.5, 2.0, event_dim=1)],
                                                    dim=-1, lengths=[2, 2]),
                           normal(3, 4), np.concatenate([positive(3, 2), normal(3, 2)], -1)),
    "stack_last_dim": (lambda D: D.StackTransform([D.ExpTransform(), D.AffineTransform(0.5, -1.0),
                                                   D.SigmoidTransform()], dim=-1),
                       normal(2, 3), np.stack([positive(2), normal(2), unit(2)], -1)),
    "stack_first_dim": (lambda D: D.StackTransform([D.ExpTransform(), D.TanhTransform()], dim=0), normal(2, 3),
                        np.stack([positive(3), INPUTS.between(-0.9, 0.9, 3)], 0)),
    "corr_cholesky": (lambda D: D.CorrCholeskyTransform(), normal(2, 3), corr_factors(2, 3)),
    "corr_cholesky_4x4": (lambda D: D.CorrCholeskyTransform(), 2 * normal(6), corr_factors(4)),
    "corr_cholesky_2x2": (lambda D: D.CorrCholeskyTransform(), normal(5, 1), corr_factors(5, 2)),
}


def _outputs(name: str) -> Any:
    make = TRANSFORMS[name][0]

    def fn(L: Any, x: Any, y: Any) -> tuple[Any, ...]:
        t = make(L.distributions)
        fx, iy = t(x), t.inv(y)
        return fx, iy, t.log_abs_det_jacobian(x, fx), t.inv.log_abs_det_jacobian(y, iy)

    return fn


@pytest.mark.parametrize("backend, name", [(b, n) for n in TRANSFORMS for b in CPU_BACKENDS])
def test_transform_values_inverses_and_jacobians_match_torch(backend, name):
    _, x, y = TRANSFORMS[name]
    check(backend, _outputs(name), x, y, **TOL)


def _same_or_raise(get: Any, ours: Any, theirs: Any) -> None:
    try:
        want = get(theirs)
    except Exception as error:  # noqa: BLE001 - any exception type torch raises must be ours too
        with pytest.raises(type(error)):
            get(ours)
        return
    assert get(ours) == want


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_flags_constraints_shapes_round_trips_and_cache_match_torch(name):
    make, x, y = TRANSFORMS[name]
    ours, theirs = make(D), make(torch.distributions)
    for side in ("domain", "codomain"):
        c, tc = getattr(ours, side), getattr(theirs, side)
        assert repr(c) == repr(tc) and c.event_dim == tc.event_dim and c.is_discrete == tc.is_discrete
    assert ours.bijective == theirs.bijective and repr(ours) == repr(theirs) and repr(ours.inv) == repr(theirs.inv)
    _same_or_raise(lambda t: t.event_dim, ours, theirs)
    for shape in (x.shape, (5,) + x.shape, (), y.shape):
        _same_or_raise(lambda t, s=shape: tuple(t.forward_shape(s)), ours, theirs)
        _same_or_raise(lambda t, s=shape: tuple(t.inverse_shape(s)), ours, theirs)
    xs, ys = mt.tensor(x), mt.tensor(y)
    np.testing.assert_allclose(ours.inv(ours(xs)).to_numpy(), x, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(ours(ours.inv(ys)).to_numpy(), y, rtol=1e-8, atol=1e-9)
    try:  # torch's cat constraint cannot join the checks of parts with different event dims; neither can ours
        want = theirs.codomain.check(theirs(torch.tensor(x))).numpy()
    except RuntimeError:
        with pytest.raises(ValueError):
            ours.codomain.check(ours(xs))
    else:
        got = ours.codomain.check(ours(xs)).to_numpy()
        assert got.all() and got.shape == want.shape
    cached = ours.with_cache(1)
    assert type(cached) is type(ours) and cached._cache_size == 1 and cached.with_cache(1) is cached
    fx = cached(xs)
    assert cached(xs) is fx and cached.inv(fx) is xs


def test_vector_and_lower_triangle_conversions_match_torch():
    for diag in (-2, -1, 0, 1):
        for n in (2, 4):
            size = int(np.tril(np.ones((n, n)), diag).sum())
            check("fast", lambda L, v, d=diag: (torch_utils.vec_to_tril_matrix(v, d) if L is torch
                                                else transforms_vector.vec_to_tril_matrix(v, d)), normal(3, size), **TOL)
            check("fast", lambda L, m, d=diag: (torch_utils.tril_matrix_to_vec(m, d) if L is torch
                                                else transforms_vector.tril_matrix_to_vec(m, d)), normal(2, n, n), **TOL)
    for L, module in ((torch, torch_utils), (mt, transforms_vector)):
        with pytest.raises(ValueError, match="cannot be expressed as the lower triangular part"):
            module.vec_to_tril_matrix(L.zeros(5), -1)
        with pytest.raises(ValueError, match=r"diag \(3\) provided is outside"):
            module.tril_matrix_to_vec(L.zeros(3, 3), 3)


def test_errors_match_torch():
    cases = [
        (lambda L: L.distributions.CatTransform([L.distributions.ExpTransform(), 1]), AssertionError),
        (lambda L: L.distributions.CatTransform([L.distributions.ExpTransform()], lengths=[1, 2]), AssertionError),
        (lambda L: L.distributions.CatTransform([L.distributions.ExpTransform()] * 2, dim=-1)(L.zeros(2, 3)),
         AssertionError),
        (lambda L: L.distributions.CatTransform([L.distributions.ExpTransform()], dim=2)(L.zeros(2, 1)), AssertionError),
        (lambda L: L.distributions.StackTransform([L.distributions.ExpTransform()] * 2, dim=0).inv(L.zeros(3)),
         AssertionError),
        (lambda L: L.distributions.StackTransform([L.distributions.ExpTransform()], dim=1)(L.zeros(1)), AssertionError),
        (lambda L: L.distributions.StackTransform(["exp"]), AssertionError),
        (lambda L: L.distributions.CorrCholeskyTransform().forward_shape((2, 4)), ValueError),
        (lambda L: L.distributions.CorrCholeskyTransform().forward_shape(()), ValueError),
        (lambda L: L.distributions.CorrCholeskyTransform().inverse_shape((3, 2)), ValueError),
        (lambda L: L.distributions.CorrCholeskyTransform().inverse_shape((3,)), ValueError),
        (lambda L: L.distributions.constraints.cat([L.distributions.constraints.real, 2]), AssertionError),
        (lambda L: L.distributions.constraints.stack([L.distributions.constraints.real], 1).check(L.zeros(2)),
         AssertionError),
    ]
    for fn, error in cases:
        for L in (torch, mt):
            with pytest.raises(error):
                fn(L)
    with pytest.raises(AssertionError, match=r"x.size\(-1\) = 3 must equal length 2"):
        D.CatTransform([D.ExpTransform()] * 2, dim=-1)(mt.zeros(2, 3))


def _constraint_cases(C: Any, L: Any) -> list[tuple[Any, Any]]:
    """(constraint, values) pairs, built with constraints module C and library L."""
    f64 = {"dtype": L.float64}
    eye = [[1.0, 0.0], [0.0, 1.0]]
    return [
        (C.corr_cholesky, L.tensor([eye, [[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.6, 0.7]], [[1.0, 0.1], [0.0, 1.0]],
                                   [[1.0, 0.0], [-0.6, -0.8]]], **f64)),
        (C.square, L.zeros(2, 3, 3)), (C.square, L.zeros(2, 3, 2)),
        (C.symmetric, L.tensor([eye, [[1.0, 2.0], [2.0, 1.0]], [[1.0, 2.0], [2.1, 1.0]]], **f64)),
        (C.positive_semidefinite, L.tensor([[[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]],
                                           **f64)),
        (C.positive_semidefinite, L.tensor([[[1.0, 0.5], [0.0, 1.0]], eye], **f64)),
        (C.positive_definite, L.tensor([[[1.0, 1.0], [1.0, 1.0]], [[2.0, 1.0], [1.0, 2.0]]], **f64)),
        (C.multinomial(3), L.tensor([[1.0, 2.0], [2.0, 2.0], [-1.0, 2.0], [0.0, 0.0]], **f64)),
        (C.cat([C.positive, C.real, C.unit_interval], -1, [1, 2, 1]),
         L.tensor([[1.0, -5.0, 3.0, 0.5], [-1.0, 0.0, 0.0, 0.5], [1.0, 0.0, 0.0, 1.5]], **f64)),
        (C.cat([C.simplex, C.real_vector], 0, [1, 1]), L.tensor([[0.5, 0.5], [0.2, 0.3]], **f64)),
        (C.stack([C.positive, C.boolean], 1), L.tensor([[1.0, 1.0], [-1.0, 0.0], [2.0, 0.5]], **f64)),
        (C.stack([C.simplex, C.real_vector], 0), L.tensor([[[0.5, 0.5]], [[0.2, 0.3]]], **f64)),
        (C.stack([C.positive, C.real], -2), L.tensor([[1.0, -1.0], [-3.0, 2.0]], **f64)),
    ]


def test_constraint_checks_and_properties_match_torch():
    for (c, values), (tc, tvalues) in zip(_constraint_cases(D.constraints, mt),
                                          _constraint_cases(torch.distributions.constraints, torch)):
        np.testing.assert_array_equal(c.check(values).to_numpy(), tc.check(tvalues).numpy())
        assert repr(c) == repr(tc) and c.event_dim == tc.event_dim and c.is_discrete == tc.is_discrete


# biject_to / transform_to: make the constraint from (constraints, lib), the shape of x
REGISTERED = {
    "corr_cholesky": (lambda C, L: C.corr_cholesky, (2, 3)),
    "cat": (lambda C, L: C.cat([C.positive, C.real, C.unit_interval], -1, [1, 2, 1]), (3, 4)),
    "stack": (lambda C, L: C.stack([C.positive, C.interval(-1.0, 2.0)], 0), (2, 3)),
    "positive_semidefinite": (lambda C, L: C.positive_semidefinite, (3, 3)),
}


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", list(REGISTERED))
def test_biject_to_and_transform_to_land_in_the_constraint_as_torch(registry, name):
    make, shape = REGISTERED[name]
    c, tc = make(D.constraints, mt), make(torch.distributions.constraints, torch)
    lookup, tlookup = getattr(D, registry), getattr(torch.distributions, registry)
    if registry == "biject_to" and name == "positive_semidefinite":
        for f, k in ((lookup, c), (tlookup, tc)):
            with pytest.raises(NotImplementedError):
                f(k)
        return
    t, tt = lookup(c), tlookup(tc)
    assert repr(t) == repr(tt) and t.bijective == tt.bijective
    x = normal(*shape)

    def fn(L: Any, x: Any) -> Any:
        transform = lookup(c) if L is mt else tlookup(tc)
        y = transform(x)
        return (y, transform.log_abs_det_jacobian(x, y)) if transform.bijective else y

    y = check("fast", fn, x, **TOL)[0]
    assert bool(c.check(y).all().item())


def test_lkj_prior_through_corr_cholesky_transform_matches_torch():
    """The usual use: an unconstrained vector mapped to a correlation factor, scored by LKJCholesky with the
    log-Jacobian."""

    def fn(L: Any, x: Any, c: Any) -> Any:
        t = L.distributions.biject_to(L.distributions.constraints.corr_cholesky)
        y = t(x)
        return L.distributions.LKJCholesky(3, c).log_prob(y) + t.log_abs_det_jacobian(x, y)

    check("fast", fn, normal(4, 3), positive(4), **TOL)


def test_cuda_corr_cholesky_and_cat():
    if "cuda" not in BACKENDS:
        pytest.skip("no cuda backend")
    check("cuda", lambda L, x: (L.distributions.CorrCholeskyTransform()(x),
                                L.distributions.CatTransform([L.distributions.ExpTransform(),
                                                              L.distributions.SigmoidTransform()], dim=-1)(x[..., :2])),
          normal(3), **TOL)
