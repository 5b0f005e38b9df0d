"""PyTorch's random API: bernoulli, normal, poisson, randint_like, seeds, generator states and ``mt.Generator``.

Distributions are checked with fixed seeds over N draws: sample means within 5 standard errors of the true mean and
sample variances within 5 standard errors of the true variance (for a distribution with fourth central moment m4,
Var(s^2) ~ (m4 - var^2) / N). Dtypes, shapes, errors and gradients are compared with torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS

import minitensor as mt
from minitensor.errors import CompileError, DTypeError, GradientError, RNGStateError, ShapeError

N = 20000


def dtype_name(t: Any) -> str:
    return str(t.dtype).removeprefix("torch.") if isinstance(t, torch.Tensor) else t.dtype.name


def assert_mean(samples: np.ndarray, mean: float, var: float, axis: int = 0) -> None:
    n = samples.shape[axis]
    got = samples.mean(axis=axis)
    assert np.all(np.abs(got - mean) <= 5 * np.sqrt(var / n) + 1e-12), (got, mean)


def assert_var(samples: np.ndarray, var: Any, m4: Any, axis: int = 0) -> None:
    n = samples.shape[axis]
    got = samples.var(axis=axis, ddof=1)
    assert np.all(np.abs(got - var) <= 5 * np.sqrt((np.asarray(m4) - np.asarray(var) ** 2) / n) + 1e-12), (got, var)


# --- distributions ---


def test_bernoulli_of_a_probability_tensor() -> None:
    mt.manual_seed(0)
    p = np.array([0.0, 0.1, 0.5, 0.9, 1.0])
    x = mt.tensor(np.tile(p, (N, 1)), dtype=mt.float64)
    samples = mt.bernoulli(x).to_numpy()
    assert set(np.unique(samples)) <= {0.0, 1.0}
    assert_mean(samples, p, p * (1 - p))
    assert samples[:, 0].max() == 0 and samples[:, -1].min() == 1  # p = 0 and p = 1 exactly


@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_bernoulli_with_scalar_p_and_bernoulli_(p: float) -> None:
    mt.manual_seed(1)
    x = mt.tensor(np.full(N, 7), dtype=mt.int64)  # with p given, input's values and dtype do not matter
    out = mt.bernoulli(x, p)
    assert out.dtype == mt.int64
    assert_mean(out.to_numpy(), p, p * (1 - p))
    filled = mt.empty(N, dtype=mt.int32).bernoulli_(p)
    assert filled.dtype == mt.int32
    assert_mean(filled.to_numpy(), p, p * (1 - p))
    if p in (0.0, 1.0):
        assert np.all(out.to_numpy() == p) and np.all(filled.to_numpy() == p)


def test_bernoulli_with_a_tensor_p_broadcasts_over_the_filled_tensor() -> None:
    mt.manual_seed(2)
    p = np.array([0.0, 0.25, 1.0])
    out = mt.zeros(N, 3).bernoulli_(mt.tensor(p))
    assert out.shape == (N, 3)
    samples = out.to_numpy()
    assert_mean(samples, p, p * (1 - p))
    assert samples[:, 0].max() == 0 and samples[:, 2].min() == 1
    assert mt.full((N,), 0.8).bernoulli().to_numpy().mean() == pytest.approx(0.8, abs=5 * np.sqrt(0.16 / N))


def test_normal_of_mean_and_std_tensors_broadcasts() -> None:
    mt.manual_seed(3)
    mean, std = np.array([-1.0, 0.0, 2.0]), np.array([0.5, 1.0, 3.0])
    samples = mt.normal(mt.zeros(N, 1, dtype=mt.float64) + mt.tensor(mean, dtype=mt.float64), mt.tensor(std)).to_numpy()
    assert samples.shape == (N, 3) and samples.dtype == np.float64
    assert_mean(samples, mean, std**2)
    assert_var(samples, std**2, 3 * std**4)  # normal: m4 = 3 var^2


@pytest.mark.parametrize("form", ["tensor_float", "float_tensor", "float_float"])
def test_normal_forms(form: str) -> None:
    mt.manual_seed(4)
    mean, std = 1.5, 2.0
    if form == "tensor_float":
        out = mt.normal(mt.full((N,), mean), std)
    elif form == "float_tensor":
        out = mt.normal(mean, mt.full((N,), std))
    else:
        out = mt.normal(mean, std, (N,))
    assert out.shape == (N,) and out.dtype == mt.float32
    assert_mean(out.to_numpy().astype(np.float64), mean, std**2)
    assert_var(out.to_numpy().astype(np.float64), std**2, 3 * std**4)


def test_poisson() -> None:
    mt.manual_seed(5)
    rates = np.array([0.0, 0.5, 4.0, 30.0])
    samples = mt.poisson(mt.tensor(np.tile(rates, (N, 1)), dtype=mt.float32)).to_numpy()
    assert samples.dtype == np.float32 and np.all(samples == np.round(samples)) and samples.min() >= 0
    assert_mean(samples, rates, rates)
    assert_var(samples, rates, rates * (1 + 3 * rates))  # Poisson: m4 = lambda (1 + 3 lambda)
    assert samples[:, 0].max() == 0  # rate 0


def test_randint_like_is_uniform_on_its_range() -> None:
    mt.manual_seed(6)
    samples = mt.randint_like(mt.zeros(N), -2, 3).to_numpy()
    assert samples.dtype == np.float32 and samples.min() == -2 and samples.max() == 2
    freq = np.bincount((samples + 2).astype(np.int64), minlength=5) / N
    assert np.all(np.abs(freq - 0.2) <= 5 * np.sqrt(0.2 * 0.8 / N))
    assert np.all(mt.randint_like(mt.zeros(5, dtype=mt.int32), 9, 10).to_numpy() == 9)
    assert set(mt.randint_like(mt.zeros(200, dtype=mt.bool), 2).to_numpy().tolist()) == {False, True}


def test_edge_values_are_exact() -> None:
    mean = mt.tensor([3.0, -4.0, float("inf")])
    np.testing.assert_array_equal(mt.normal(mean, 0.0).to_numpy(), mean.to_numpy())
    np.testing.assert_array_equal(mt.normal(mean, mt.zeros(3)).to_numpy(), mean.to_numpy())
    np.testing.assert_array_equal(mt.normal(2.5, 0.0, (4,)).to_numpy(), np.full(4, 2.5, np.float32))
    assert mt.poisson(mt.zeros(10)).to_numpy().tolist() == [0.0] * 10
    assert mt.bernoulli(mt.zeros(0)).shape == (0,) and mt.poisson(mt.tensor(3.0)).shape == ()


# --- dtypes and shapes against torch ---

CASES = {
    "bernoulli f32": lambda lib: lib.bernoulli(lib.full((2, 3), 0.5)),
    "bernoulli f64": lambda lib: lib.bernoulli(lib.full((2,), 0.5, dtype=lib.float64)),
    "bernoulli 0-d": lambda lib: lib.bernoulli(lib.tensor(0.7)),
    "bernoulli int p": lambda lib: lib.bernoulli(lib.tensor([5, 7]), 0.3),
    "bernoulli bool p": lambda lib: lib.bernoulli(lib.tensor([True, False]), p=0.3),
    "method bernoulli p": lambda lib: lib.zeros(2, 3).bernoulli(0.5),
    "bernoulli_ bool": lambda lib: lib.tensor([True, False]).bernoulli_(0.5),
    "bernoulli_ f64 p on f32": lambda lib: lib.zeros(2, 3).bernoulli_(lib.ones(1, 3, dtype=lib.float64)),
    "normal broadcast": lambda lib: lib.normal(lib.zeros(2, 1), lib.ones(3)),
    "normal f64 mean": lambda lib: lib.normal(lib.zeros(2, 1, dtype=lib.float64), lib.ones(3)),
    "normal f64 std": lambda lib: lib.normal(lib.zeros(2, 1), lib.ones(3, dtype=lib.float64)),
    "normal float f64 std": lambda lib: lib.normal(1.0, lib.ones(2, dtype=lib.float64)),
    "normal tensor float": lambda lib: lib.normal(lib.zeros(2, 3), 2.0),
    "normal 0-d": lambda lib: lib.normal(lib.tensor(1.0), lib.tensor(2.0)),
    "normal default std": lambda lib: lib.normal(lib.zeros(4)),
    "normal float float": lambda lib: lib.normal(1.0, 2.0, (2, 3)),
    "normal size list": lambda lib: lib.normal(1, 2, [2, 2]),
    "normal dtype": lambda lib: lib.normal(1.0, 2.0, size=(2,), dtype=lib.float64),
    "poisson f32": lambda lib: lib.poisson(lib.tensor([0.0, 1.0, 5.0])),
    "poisson f64 0-d": lambda lib: lib.poisson(lib.tensor(3.0, dtype=lib.float64)),
    "poisson empty": lambda lib: lib.poisson(lib.zeros(0)),
    "randint_like f32": lambda lib: lib.randint_like(lib.zeros(2, 3), 10),
    "randint_like int32": lambda lib: lib.randint_like(lib.zeros(2, 3, dtype=lib.int32), 5, 10),
    "randint_like dtype": lambda lib: lib.randint_like(lib.zeros(2, 3), 5, 10, dtype=lib.int64),
    "randint_like bool": lambda lib: lib.randint_like(lib.zeros(4, dtype=lib.bool), 2),
    "randint_like high kw": lambda lib: lib.randint_like(lib.zeros(2), high=3),
    "randint_like 0-d": lambda lib: lib.randint_like(lib.tensor(1.0), 3),
    "randint_like tensor high": lambda lib: lib.randint_like(lib.zeros(2), lib.tensor(4)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_dtype_and_shape_match_torch(name: str) -> None:
    expected, got = CASES[name](torch), CASES[name](mt)
    assert (dtype_name(got), tuple(got.shape)) == (dtype_name(expected), tuple(expected.shape))


# --- errors (torch refuses each too) ---

ERRORS = [
    (lambda lib: lib.bernoulli(lib.tensor([0, 1])), NotImplementedError, DTypeError),
    (lambda lib: lib.bernoulli(lib.tensor([1.5])), RuntimeError, ValueError),
    (lambda lib: lib.bernoulli(lib.tensor([-0.5, 0.5])), RuntimeError, ValueError),
    (lambda lib: lib.bernoulli(lib.tensor([float("nan")])), RuntimeError, ValueError),
    (lambda lib: lib.bernoulli(lib.zeros(2), 1.5), RuntimeError, ValueError),
    (lambda lib: lib.bernoulli(lib.zeros(2), float("nan")), RuntimeError, ValueError),
    (lambda lib: lib.bernoulli(lib.zeros(2), lib.ones(2)), TypeError, TypeError),
    (lambda lib: lib.bernoulli([0.5]), TypeError, TypeError),
    (lambda lib: lib.zeros(3).bernoulli_(-0.1), RuntimeError, ValueError),
    (lambda lib: lib.zeros(3).bernoulli_(lib.tensor([0.0, 2.0, 1.0])), RuntimeError, ValueError),
    (lambda lib: lib.zeros(3).bernoulli_(lib.tensor([0, 1, 1])), NotImplementedError, DTypeError),
    (lambda lib: lib.zeros(3).bernoulli_(lib.ones(2, 3)), RuntimeError, ShapeError),
    (lambda lib: lib.normal(0.0, -1.0, (2,)), RuntimeError, ValueError),
    (lambda lib: lib.normal(lib.zeros(2), -1.0), RuntimeError, ValueError),
    (lambda lib: lib.normal(lib.zeros(2), float("nan")), RuntimeError, ValueError),
    (lambda lib: lib.normal(lib.zeros(2), lib.tensor([1.0, -1.0])), RuntimeError, ValueError),
    (lambda lib: lib.normal(lib.zeros(2), lib.tensor([float("nan"), 1.0])), RuntimeError, ValueError),
    (lambda lib: lib.normal(lib.tensor([1, 2]), 1.0), NotImplementedError, DTypeError),
    (lambda lib: lib.normal(0.0, lib.tensor([1, 2])), NotImplementedError, DTypeError),
    (lambda lib: lib.normal(1.0, 2.0, (2,), dtype=lib.int64), NotImplementedError, DTypeError),
    (lambda lib: lib.normal(lib.zeros(2), lib.ones(3)), RuntimeError, ShapeError),
    (lambda lib: lib.normal(lib.zeros(2), lib.ones(2), (2,)), TypeError, TypeError),
    (lambda lib: lib.normal(1.0, 2.0), TypeError, TypeError),
    (lambda lib: lib.normal(1.0, 2.0, 3), TypeError, TypeError),
    (lambda lib: lib.poisson(lib.tensor([1.0, -1.0])), RuntimeError, ValueError),
    (lambda lib: lib.poisson(lib.tensor([float("nan")])), RuntimeError, ValueError),
    (lambda lib: lib.poisson(lib.tensor([1, 2])), NotImplementedError, DTypeError),
    (lambda lib: lib.poisson([1.0]), TypeError, TypeError),
    (lambda lib: lib.randint_like(lib.zeros(2), 10, 5), RuntimeError, ValueError),
    (lambda lib: lib.randint_like(lib.zeros(2), 5, 5), RuntimeError, ValueError),
    (lambda lib: lib.randint_like(lib.zeros(2), 3.5), TypeError, TypeError),
    (lambda lib: lib.randint_like(lib.zeros(2), True), TypeError, TypeError),
    (lambda lib: lib.randint_like(lib.zeros(2, dtype=lib.bool), 3), RuntimeError, ValueError),
    (lambda lib: lib.randint_like(lib.zeros(2, dtype=lib.bool), -1, 1), RuntimeError, ValueError),
    (lambda lib: lib.randint_like(lib.zeros(2, dtype=lib.int32), 2**40), RuntimeError, ValueError),
    (lambda lib: lib.randint_like(lib.zeros(2, dtype=lib.int64), 3, requires_grad=True), RuntimeError, GradientError),
    (lambda lib: lib.manual_seed(2**64), ValueError, ValueError),
    (lambda lib: lib.manual_seed(None), TypeError, TypeError),
    (lambda lib: lib.Generator().manual_seed(1.5), RuntimeError, TypeError),
    (lambda lib: lib.set_rng_state([1, 2]), TypeError, TypeError),
    (lambda lib: lib.set_rng_state(lib.zeros(8)), TypeError, DTypeError),
    (lambda lib: lib.Generator().set_state(lib.zeros(3)), TypeError, DTypeError),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_like_torch(index: int) -> None:
    call, torch_error, error = ERRORS[index]
    with pytest.raises(torch_error):
        call(torch)
    with pytest.raises(error):
        call(mt)


def test_error_messages_name_the_values() -> None:
    with pytest.raises(ValueError, match=r"1\.5 at index \(1, 0\)"):
        mt.bernoulli(mt.tensor([[0.5], [1.5]]))
    with pytest.raises(ValueError, match=r"p=1\.5"):
        mt.bernoulli(mt.zeros(2), 1.5)
    with pytest.raises(ValueError, match=r"std >= 0\.0.*-2\.0 at index \(1,\)"):
        mt.normal(mt.zeros(2), mt.tensor([1.0, -2.0]))
    with pytest.raises(ValueError, match=r"non-negative, got -3\.0 at index \(0,\)"):
        mt.poisson(mt.tensor([-3.0]))
    with pytest.raises(ValueError, match="too large"):
        mt.poisson(mt.tensor([float("inf")]))  # torch returns garbage (-2**63) here
    with pytest.raises(DTypeError, match="int64"):
        mt.bernoulli(mt.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"low=10 >= high=5"):
        mt.randint_like(mt.zeros(2), 10, 5)
    with pytest.raises(TypeError, match="generator must be a minitensor.Generator"):
        mt.rand(2, generator=3)


# --- gradients ---


def test_gradients_are_zero_like_torch() -> None:
    for lib in (torch, mt):
        m = lib.tensor([0.0, 1.0], requires_grad=True)
        s = lib.tensor([1.0, 2.0], requires_grad=True)
        p = lib.tensor([0.5, 0.2], requires_grad=True)
        rates = lib.tensor([2.0, 3.0], requires_grad=True)
        outs = [lib.normal(m, s), lib.normal(m, 1.0), lib.normal(0.0, s), lib.bernoulli(p), lib.poisson(rates)]
        assert all(o.requires_grad for o in outs)
        sum(o.sum() for o in outs).backward()
        for t in (m, s, p, rates):
            assert t.grad is not None and t.grad.tolist() == [0.0, 0.0]
    assert not mt.normal(mt.zeros(2), 1.0).requires_grad
    assert mt.normal(0.0, 1.0, (2,), requires_grad=True).requires_grad


def test_bernoulli_with_p_has_no_derivative_like_torch() -> None:
    with pytest.raises(RuntimeError, match="not implemented"):
        torch.bernoulli(torch.tensor([0.5], requires_grad=True), 0.5).sum().backward()
    out = mt.bernoulli(mt.tensor([0.5], requires_grad=True), 0.5)
    assert out.requires_grad
    with pytest.raises(GradientError, match="not implemented"):
        out.sum().backward()


def test_bernoulli_inplace_refuses_a_leaf_that_requires_grad() -> None:
    with pytest.raises(RuntimeError):
        torch.zeros(2, requires_grad=True).bernoulli_(0.5)
    with pytest.raises(GradientError):
        mt.zeros(2, requires_grad=True).bernoulli_(0.5)


# --- seeds, generators and states ---

DRAWS = {
    "bernoulli": lambda g: mt.bernoulli(mt.full((6,), 0.5), generator=g),
    "bernoulli_": lambda g: mt.zeros(6).bernoulli_(0.5, generator=g),
    "normal": lambda g: mt.normal(mt.zeros(6), 1.0, generator=g),
    "normal float": lambda g: mt.normal(0.0, 1.0, (6,), generator=g),
    "poisson": lambda g: mt.poisson(mt.full((6,), 3.0), generator=g),
    "randint_like": lambda g: mt.randint_like(mt.zeros(6), 100, generator=g),
    "rand": lambda g: mt.rand(6, generator=g),
    "randn": lambda g: mt.randn(6, generator=g),
    "rand_like": lambda g: mt.rand_like(mt.zeros(6), generator=g),
    "randn_like": lambda g: mt.randn_like(mt.zeros(6), generator=g),
    "randint": lambda g: mt.randint(0, 100, (6,), generator=g),
    "randperm": lambda g: mt.randperm(6, generator=g),
    "multinomial": lambda g: mt.multinomial(mt.ones(6), 6, generator=g),
    "normal_": lambda g: mt.zeros(6).normal_(generator=g),
    "uniform_": lambda g: mt.zeros(6).uniform_(generator=g),
}


@pytest.mark.parametrize("name", list(DRAWS))
def test_seeded_draws_repeat_and_a_generator_leaves_the_shared_stream_alone(name: str) -> None:
    draw = DRAWS[name]
    mt.manual_seed(11)
    first = draw(None).to_numpy()
    mt.manual_seed(11)
    np.testing.assert_array_equal(draw(None).to_numpy(), first)
    mt.manual_seed(12)
    assert not np.array_equal(draw(None).to_numpy(), first)
    g = mt.Generator().manual_seed(11)  # a Generator's stream is the shared one's for the same seed
    mt.manual_seed(99)
    expected_next = mt.rand(3).to_numpy()
    mt.manual_seed(99)
    np.testing.assert_array_equal(draw(g).to_numpy(), first)
    np.testing.assert_array_equal(mt.rand(3).to_numpy(), expected_next)  # the draw from g took nothing from it
    np.testing.assert_array_equal(draw(mt.default_generator.manual_seed(11)).to_numpy(), first)


def test_state_round_trip_is_bit_exact() -> None:
    mt.manual_seed(21)
    state = mt.get_rng_state()
    a = mt.rand(5)
    mt.set_rng_state(state)
    np.testing.assert_array_equal(mt.rand(5).to_numpy(), a.to_numpy())
    mt.bernoulli(mt.full((3,), 0.5))  # an odd number of float32 draws leaves half of a 64-bit output buffered
    state = mt.get_rng_state()
    a = [mt.bernoulli(mt.full((5,), 0.5)).to_numpy(), mt.randn(4, dtype=mt.float64).to_numpy()]
    mt.manual_seed(0)
    mt.set_rng_state(state)
    b = [mt.bernoulli(mt.full((5,), 0.5)).to_numpy(), mt.randn(4, dtype=mt.float64).to_numpy()]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert mt.initial_seed() == 21  # the state carries the seed, as torch's does


def test_state_format() -> None:
    mt.manual_seed(5)
    state = mt.get_rng_state()
    assert state.dtype == mt.int64 and state.shape == (8,)
    words = state.to_numpy().view(np.uint64)
    assert int(words[0]) == mt.random_state.STATE_TAG and int(words[7]) == 5 and int(words[3]) & 1
    inc, s = int(words[4]) << 64 | int(words[3]), int(words[2]) << 64 | int(words[1])
    assert np.random.default_rng(5).bit_generator.state["state"] == {"state": s, "inc": inc}
    g = mt.Generator().manual_seed(3)
    mt.rand(4, generator=g)
    saved = g.get_state()
    a = mt.rand(4, generator=g).to_numpy()
    mt.set_rng_state(saved)  # a Generator's state fits the shared generator too
    np.testing.assert_array_equal(mt.rand(4).to_numpy(), a)
    assert g.set_state(saved) is g and g.initial_seed() == 3
    np.testing.assert_array_equal(mt.rand(4, generator=g).to_numpy(), a)


@pytest.mark.parametrize("change", ["tag", "shape", "even increment", "has_uint32"])
def test_foreign_states_are_refused(change: str) -> None:
    words = mt.get_rng_state().to_numpy()
    if change == "tag":
        words[0] += 1
    elif change == "shape":
        words = words[:7]
    elif change == "even increment":
        words[3] &= ~1
    else:
        words[5] = 2
    before = mt.get_rng_state().to_numpy()
    with pytest.raises(RNGStateError):
        mt.set_rng_state(mt.tensor(words))
    np.testing.assert_array_equal(mt.get_rng_state().to_numpy(), before)  # nothing changed
    with pytest.raises(RuntimeError):
        torch.set_rng_state(torch.zeros(5, dtype=torch.uint8))


def test_seeds_like_torch() -> None:
    assert mt.manual_seed(3) is mt.default_generator and mt.initial_seed() == 3
    for s in (-5, -(2**63), 2**64 - 1, np.int64(4), True):
        assert mt.manual_seed(s).initial_seed() == torch.manual_seed(s).initial_seed()
    for s in (-5, -(2**63), 2**64 - 1):
        assert mt.Generator().manual_seed(s).initial_seed() == torch.Generator().manual_seed(s).initial_seed()
    assert mt.Generator().initial_seed() == torch.Generator().initial_seed() == 67280421310721
    np.testing.assert_array_equal(mt.rand(3, generator=mt.Generator()).to_numpy(), mt.rand(3, generator=mt.Generator()).to_numpy())
    first, second = mt.seed(), mt.seed()
    assert first != second and 0 <= second < 2**64 and mt.initial_seed() == second
    g = mt.Generator(device="cuda")
    assert g.seed() == g.initial_seed() and g.device == "cuda"


def test_streams_are_numpys_not_torchs() -> None:
    """A deliberate difference: the same seed gives NumPy's PCG64 stream, not PyTorch's Mersenne Twister."""
    mt.manual_seed(7)
    ours = mt.rand(4, dtype=mt.float64).to_numpy()
    np.testing.assert_array_equal(ours, np.random.default_rng(7).random(4))
    torch.manual_seed(7)
    assert not np.allclose(ours, torch.rand(4, dtype=torch.float64).numpy())


# --- compile ---


def test_compiled_draws_match_eager_and_replays_validate() -> None:
    def step(p: mt.Tensor, m: mt.Tensor, s: mt.Tensor) -> tuple[mt.Tensor, ...]:
        return (mt.bernoulli(p), mt.normal(m, s), mt.zeros(3).bernoulli_(0.5), mt.randint_like(m, 10),
                mt.normal(0.0, 1.0, (2,)), p.clone().bernoulli_(p))

    args = (mt.tensor([0.2, 0.5, 0.9], backend="simple"), mt.zeros(3, backend="simple"), mt.ones(3, backend="simple"))
    runs = []
    for fn in (step, mt.compile(step)):
        mt.manual_seed(3)
        runs.append([[t.to_numpy() for t in fn(*args)] for _ in range(3)])
    for eager, compiled in zip(*runs):
        for a, b in zip(eager, compiled):
            np.testing.assert_array_equal(a, b)
    assert not np.array_equal(runs[0][0][1], runs[0][1][1])  # each call draws anew
    compiled_step = mt.compile(step)
    compiled_step(*args)
    with pytest.raises(ValueError, match="1.5"):
        compiled_step(mt.tensor([0.2, 1.5, 0.9], backend="simple"), *args[1:])
    with pytest.raises(ValueError, match="std"):
        compiled_step(*args[:2], mt.tensor([1.0, -1.0, 1.0], backend="simple"))


@pytest.mark.parametrize("body", [
    lambda x: mt.rand(2, generator=mt.Generator(), backend="simple") + x,
    lambda x: mt.get_rng_state(),
    lambda x: mt.manual_seed(1),
    lambda x: mt.poisson(x),
])
def test_what_a_replay_could_not_repeat_is_refused_while_compiling(body: Any) -> None:
    with pytest.raises(CompileError):
        mt.compile(body)(mt.ones(2, backend="simple"))
    mt.rand(2)  # the shared generator is back


# --- every backend ---


@pytest.mark.parametrize("backend", BACKENDS)
def test_samples_are_on_the_input_backend_and_the_same_everywhere(backend: str) -> None:
    def draw(where: str) -> list[np.ndarray]:
        mt.manual_seed(8)
        p = mt.tensor([0.0, 1.0, 0.5], backend=where)
        outs = [mt.bernoulli(p), mt.zeros(3, backend=where).bernoulli_(p), mt.poisson(p), mt.randint_like(p, 5),
                mt.normal(p, 0.5), mt.normal(0.0, 1.0, (3,), device=where), mt.rand(3, backend=where, generator=mt.Generator())]
        assert all(o.backend.name == where for o in outs)
        return [o.to_numpy() for o in outs]

    got, expected = draw(backend), draw("simple")
    assert got[0][:2].tolist() == [0.0, 1.0] and got[1][:2].tolist() == [0.0, 1.0]
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-6)
