"""nn.utils.prune against torch.nn.utils.prune: the same pruning calls on twin modules give the same masks, pruned
tensors, outputs, gradients, hooks and state-dict keys; repeated pruning composes as PyTorch's PruningContainer;
remove makes it permanent. The random methods prune as many entries/channels with the same structure (their draws
differ from torch's: minitensor's generator is PCG64)."""

from __future__ import annotations

import copy
import importlib
import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
from minitensor import nn
from minitensor.nn.utils import prune

torch = pytest.importorskip("torch")
tprune = importlib.import_module("torch.nn.utils.prune")

CUDA = [pytest.param("cuda", marks=pytest.mark.skipif("cuda" not in BACKENDS, reason="no cuda backend"))]
RNG = np.random.default_rng(71)


def twins(kind: str, backend: str) -> tuple[Any, Any]:
    """A torch module and a minitensor module of the same kind with the same float64 parameters."""
    if kind == "linear":
        theirs, ours = torch.nn.Linear(6, 5).double(), nn.Linear(6, 5, dtype=mt.float64, backend=backend)
    else:
        theirs = torch.nn.Conv2d(3, 4, 3).double()
        ours = nn.Conv2d(3, 4, 3, dtype=mt.float64, backend=backend)
    ours.load_state_dict({k: mt.tensor(v.detach().numpy(), backend=backend) for k, v in theirs.state_dict().items()})
    return theirs, ours


def same(a: Any, b: Any, tol: float = 1e-12) -> None:
    np.testing.assert_allclose(a.to_numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def check_state(theirs: Any, ours: Any) -> None:
    """Same state-dict keys in the same order and values, same pruned tensors, same pruning hooks."""
    mine, want = ours.state_dict(), theirs.state_dict()
    assert list(mine) == list(want)
    for key in want:
        same(mine[key], want[key], 0)
    for name in ("weight", "bias"):
        same(getattr(ours, name), getattr(theirs, name), 0)
    hooks = [type(h).__name__ for h in ours.__dict__.get("_forward_pre_hooks", {}).values()]
    assert hooks == [type(h).__name__ for h in theirs._forward_pre_hooks.values()]
    assert prune.is_pruned(ours) == tprune.is_pruned(theirs)


def check_forward_backward(theirs: Any, ours: Any, backend: str) -> None:
    """Outputs and the gradients of a weighted sum: to the input and to every parameter (``weight_orig`` gets the
    masked gradient)."""
    shape = (2, 6) if isinstance(theirs, torch.nn.Linear) else (2, 3, 5, 5)
    x = RNG.standard_normal(shape)
    xt, xo = torch.tensor(x, requires_grad=True), mt.tensor(x, backend=backend, requires_grad=True)
    yt, yo = theirs(xt), ours(xo)
    same(yo, yt)
    w = RNG.standard_normal(tuple(yt.shape))
    (yt * torch.tensor(w)).sum().backward()
    (yo * mt.tensor(w, backend=backend)).sum().backward()
    same(xo.grad, xt.grad)
    params = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        same(params[name].grad, p.grad)
        p.grad, params[name].grad = None, None


STEPS: dict[str, list[Callable[[Any, Any], Any]]] = {
    "l1_fraction_then_count": [lambda p, m: p.l1_unstructured(m, "weight", amount=0.3),
                               lambda p, m: p.l1_unstructured(m, "weight", amount=4)],
    "ln_rows_then_l1": [lambda p, m: p.ln_structured(m, "weight", amount=2, n=2, dim=0),
                        lambda p, m: p.l1_unstructured(m, "weight", amount=0.5)],
    "l1_then_ln_cols": [lambda p, m: p.l1_unstructured(m, "weight", amount=0.45),
                        lambda p, m: p.ln_structured(m, "weight", amount=0.34, n=1, dim=-1),
                        lambda p, m: p.ln_structured(m, "weight", amount=1, n=math.inf, dim=1)],
    "identity_custom_bias": [lambda p, m: p.identity(m, "weight"),
                             lambda p, m: p.custom_from_mask(m, "weight", mask=_mask(p, m.weight.shape)),
                             lambda p, m: p.l1_unstructured(m, "bias", amount=2),
                             lambda p, m: p.l1_unstructured(m, "weight", amount=0.0)],
    "classes_apply": [lambda p, m: p.LnStructured.apply(m, "weight", 1, -math.inf, 0),  # (ties in norms: order
                      lambda p, m: p.L1Unstructured.apply(m, "weight", 3),             # undefined, so none here)
                      lambda p, m: p.CustomFromMask.apply(m, "bias", _mask(p, m.bias.shape))],
}


def _mask(lib: Any, shape: tuple[int, ...]) -> Any:
    """A fixed 0/1 mask of ``shape`` (every third entry 0) in the library's tensor type."""
    values = (np.arange(math.prod(shape)) % 3 != 0).astype(np.float64).reshape(tuple(shape))
    return torch.tensor(values) if lib is tprune else mt.tensor(values, backend=_BACKEND[0])


_BACKEND = ["fast"]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("kind", ["linear", "conv"])
@pytest.mark.parametrize("steps", list(STEPS))
def test_pruning_sequences_match_torch(backend: str, kind: str, steps: str) -> None:
    _BACKEND[0] = backend
    theirs, ours = twins(kind, backend)
    for step in STEPS[steps]:
        step(tprune, theirs)
        step(prune, ours)
        check_state(theirs, ours)
        check_forward_backward(theirs, ours, backend)


@pytest.mark.parametrize("backend", CUDA)
def test_pruning_on_cuda_matches_torch(backend: str) -> None:
    _BACKEND[0] = backend
    theirs, ours = twins("linear", backend)
    for step in STEPS["l1_then_ln_cols"][:2]:
        step(tprune, theirs)
        step(prune, ours)
    check_state(theirs, ours)
    check_forward_backward(theirs, ours, backend)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_importance_scores_and_prune_method_match_torch(backend: str) -> None:
    theirs, ours = twins("conv", backend)
    scores = RNG.standard_normal(tuple(theirs.weight.shape))
    tprune.l1_unstructured(theirs, "weight", amount=0.25, importance_scores=torch.tensor(scores))
    prune.l1_unstructured(ours, "weight", amount=0.25, importance_scores=mt.tensor(scores, backend=backend))
    tprune.ln_structured(theirs, "weight", 1, 2, 1, importance_scores=torch.tensor(scores))
    prune.ln_structured(ours, "weight", 1, 2, 1, importance_scores=mt.tensor(scores, backend=backend))
    check_state(theirs, ours)
    t = RNG.standard_normal((4, 5))
    got = prune.L1Unstructured(amount=7).prune(mt.tensor(t, backend=backend), importance_scores=mt.tensor(-t * t, backend=backend))
    same(got, tprune.L1Unstructured(amount=7).prune(torch.tensor(t), importance_scores=torch.tensor(-t * t)), 0)
    got = prune.LnStructured(0.5, 1, dim=0).prune(mt.tensor(t, backend=backend))
    same(got, tprune.LnStructured(0.5, 1, dim=0).prune(torch.tensor(t)), 0)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_global_unstructured_matches_torch(backend: str) -> None:
    pairs = [twins("linear", backend), twins("conv", backend)]
    tprune.l1_unstructured(pairs[0][0], "weight", amount=5)
    prune.l1_unstructured(pairs[0][1], "weight", amount=5)
    scores = RNG.standard_normal(tuple(pairs[1][0].weight.shape))
    theirs = [(pairs[0][0], "weight"), (pairs[1][0], "weight"), (pairs[1][0], "bias")]
    ours = [(pairs[0][1], "weight"), (pairs[1][1], "weight"), (pairs[1][1], "bias")]
    tprune.global_unstructured(theirs, tprune.L1Unstructured, {(pairs[1][0], "weight"): torch.tensor(scores)}, amount=0.4)
    prune.global_unstructured(iter(ours), prune.L1Unstructured, {(pairs[1][1], "weight"): mt.tensor(scores, backend=backend)},
                              amount=0.4)
    for t, o in pairs:
        check_state(t, o)
    check_forward_backward(*pairs[1], backend)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_remove_makes_pruning_permanent(backend: str) -> None:
    theirs, ours = twins("linear", backend)
    for lib, m in ((tprune, theirs), (prune, ours)):
        lib.l1_unstructured(m, "weight", amount=0.5)
        lib.ln_structured(m, "weight", amount=1, n=2, dim=0)
        lib.l1_unstructured(m, "bias", amount=1)
    orig = ours.weight_orig
    opt = mt.optim.SGD(ours.parameters(), lr=0.1)
    for lib, m in ((tprune, theirs), (prune, ours)):
        assert lib.remove(m, "weight") is m
    assert ours.weight is orig and isinstance(ours.weight, nn.Parameter)  # the optimizer still trains it
    assert any(p is orig for group in opt.param_groups for p in group["params"])
    check_state(theirs, ours)
    check_forward_backward(theirs, ours, backend)
    for lib, m in ((tprune, theirs), (prune, ours)):
        lib.remove(m, "bias")
        assert not lib.is_pruned(m)
        with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
            lib.remove(m, "weight")
    check_state(theirs, ours)


def test_pruned_state_dicts_load_both_ways() -> None:
    theirs, ours = twins("conv", "fast")
    tprune.ln_structured(theirs, "weight", amount=2, n=1, dim=0)
    prune.random_structured(ours, "weight", amount=2, dim=0)  # another mask: loading replaces it
    ours.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    same(ours.weight_mask, theirs.weight_mask, 0)
    ours(mt.zeros(1, 3, 3, 3, dtype=mt.float64))  # the hook recomputes weight from the loaded mask
    same(ours.weight, theirs.weight, 0)
    fresh = torch.nn.Conv2d(3, 4, 3).double()
    tprune.identity(fresh, "weight")
    fresh.load_state_dict({k: torch.tensor(v.to_numpy()) for k, v in ours.state_dict().items()})
    assert torch.equal(fresh.weight_mask, theirs.weight_mask)


def _newly_pruned(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """The entries a pruning step zeroed; the step must keep every earlier zero."""
    assert set(np.unique(after)) <= {0.0, 1.0} and after.shape == before.shape
    assert not np.any((before == 0) & (after == 1))
    return (before == 1) & (after == 0)


RANDOM_STEPS = [  # (step, check of the entries it zeroed given the mask before it)
    (lambda p, m: p.random_unstructured(m, "weight", amount=0.3), lambda new, before: new.sum() == 32),
    (lambda p, m: p.random_structured(m, "weight", amount=1, dim=0),  # one whole output channel
     lambda new, before: (new.reshape(4, -1).any(1).sum() == 1) and new.reshape(4, -1)[new.reshape(4, -1).any(1)].sum()
     == before.reshape(4, -1)[new.reshape(4, -1).any(1)].sum()),
    (lambda p, m: p.random_unstructured(m, "weight", amount=5), lambda new, before: new.sum() == 5),
    (lambda p, m: p.random_structured(m, "weight", amount=0.5, dim=-1),  # round(0.5 * 3) = 2 kernel columns
     lambda new, before: new.any(axis=(0, 1, 2)).sum() == 2),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_random_methods_prune_as_much_as_torch(backend: str) -> None:
    theirs, ours = twins("conv", backend)
    before_t = before_o = np.ones(tuple(theirs.weight.shape))
    for step, check in RANDOM_STEPS:
        step(tprune, theirs)
        step(prune, ours)
        after_t, after_o = theirs.weight_mask.numpy(), ours.weight_mask.to_numpy()
        assert check(_newly_pruned(before_t, after_t), before_t)  # the check holds for torch ...
        assert check(_newly_pruned(before_o, after_o), before_o)  # ... and for us
        before_t, before_o = after_t.copy(), after_o.copy()
    assert (before_o.sum(axis=(0, 1, 2)) == 0).sum() == 2
    same(ours.weight, torch.tensor(ours.weight_mask.to_numpy()) * theirs.weight_orig, 0)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_random_pruning_composes_as_torch(backend: str) -> None:
    """Our random mask, given to torch as a custom mask, then the same deterministic pruning on both: equal masks
    (later pruning acts only on what the random one left)."""
    theirs, ours = twins("linear", backend)
    prune.random_unstructured(ours, "weight", amount=0.4)
    prune.random_structured(ours, "weight", amount=2, dim=0)
    tprune.custom_from_mask(theirs, "weight", torch.tensor(ours.weight_mask.to_numpy()))
    for lib, m in ((tprune, theirs), (prune, ours)):
        lib.l1_unstructured(m, "weight", amount=0.5)
        lib.ln_structured(m, "weight", amount=1, n=1, dim=1)
    same(ours.weight_mask, theirs.weight_mask, 0)
    same(ours.weight, theirs.weight, 0)


def _error(fn: Callable[[Any], Any], lib: Any, module: Any) -> type[BaseException] | None:
    try:
        fn(lib, module)
    except Exception as e:  # noqa: BLE001 - the kind is compared
        return type(e)
    return None


BAD_CALLS = {
    "amount_type": lambda p, m: p.l1_unstructured(m, "weight", amount="1"),
    "amount_negative": lambda p, m: p.l1_unstructured(m, "weight", amount=-1),
    "amount_fraction": lambda p, m: p.random_unstructured(m, "weight", amount=1.5),
    "amount_too_big": lambda p, m: p.l1_unstructured(m, "weight", amount=31),
    "structured_1d": lambda p, m: p.ln_structured(m, "bias", amount=1, n=2, dim=0),
    "dim_out_of_range": lambda p, m: p.random_structured(m, "weight", amount=1, dim=2),
    "no_such_tensor": lambda p, m: p.l1_unstructured(m, "kernel", amount=1),
    "scores_shape": lambda p, m: p.l1_unstructured(m, "weight", amount=1, importance_scores=m.bias),
    "global_structured": lambda p, m: p.global_unstructured([(m, "weight")], p.RandomStructured, amount=1),
    "remove_unpruned": lambda p, m: p.remove(m, "weight"),
    "custom_mask_shape": lambda p, m: p.custom_from_mask(m, "weight", mask=m.bias),
}


@pytest.mark.parametrize("call", list(BAD_CALLS))
def test_errors_match_torch_and_leave_the_module_as_it_was(call: str) -> None:
    theirs, ours = twins("linear", "fast")
    want = _error(BAD_CALLS[call], tprune, theirs)
    assert want is not None
    got = _error(BAD_CALLS[call], prune, ours)
    assert got is not None and issubclass(got, want), (got, want)
    assert list(ours.state_dict()) == list(theirs.state_dict())  # (a failed first pruning re-registers it last)
    assert sorted(ours.state_dict()) == ["bias", "weight"] and not prune.is_pruned(ours)
    assert isinstance(ours.weight, nn.Parameter)


def test_failed_repeat_pruning_keeps_the_earlier_pruning() -> None:
    """torch loses the earlier hook when a second pruning of the same tensor fails; here it stays in force."""
    _, ours = twins("linear", "fast")
    prune.l1_unstructured(ours, "weight", amount=3)
    prune.l1_unstructured(ours, "weight", amount=2)
    mask = ours.weight_mask.to_numpy().copy()
    with pytest.raises(ValueError, match="amount=40"):
        prune.l1_unstructured(ours, "weight", amount=40)
    with pytest.raises(TypeError, match="Invalid type for amount"):
        prune.random_unstructured(ours, "weight", amount="2")
    (hook,) = ours.__dict__["_forward_pre_hooks"].values()
    assert isinstance(hook, prune.PruningContainer) and len(hook) == 2
    np.testing.assert_array_equal(ours.weight_mask.to_numpy(), mask)
    with pytest.raises(ValueError, match="multidimensional"):
        prune.ln_structured(ours, "bias", amount=1, n=2, dim=0)
    assert "bias" in dict(ours.named_parameters())


def test_pruning_container_api_matches_torch() -> None:
    ours, theirs = prune.L1Unstructured(2), tprune.L1Unstructured(2)
    ours._tensor_name, theirs._tensor_name = "weight", "weight"
    other = prune.RandomUnstructured(1)
    other._tensor_name = "weight"
    container = prune.PruningContainer(ours, other)
    assert len(container) == 2 and list(container) == [ours, other] and container[1] is other
    bad = prune.Identity()
    bad._tensor_name = "bias"
    with pytest.raises(ValueError, match="acting on the parameter named 'weight'"):
        container.add_pruning_method(bad)
    with pytest.raises(TypeError, match="not a BasePruningMethod"):
        container.add_pruning_method(object())  # type: ignore[arg-type]
    t = RNG.standard_normal((3, 4))
    last = prune.PruningContainer(ours)
    last.add_pruning_method(_named(prune.LnStructured(1, 2, dim=0)))
    tlast = tprune.PruningContainer(theirs)
    tlast.add_pruning_method(_named(tprune.LnStructured(1, 2, dim=0)))
    start = (np.arange(12) % 5 != 0).astype(np.float64).reshape(3, 4)
    same(last.compute_mask(mt.tensor(t), mt.tensor(start)), tlast.compute_mask(torch.tensor(t), torch.tensor(start)), 0)


def _named(method: Any) -> Any:
    method._tensor_name = "weight"
    return method


def test_public_names_and_signatures_match_torch() -> None:
    assert sorted(prune.__all__) == sorted(n for n in tprune.__dict__ if not n.startswith("_") and n not in
                                           ("ABC", "abstractmethod", "Iterable", "numbers", "torch"))
    for name in prune.__all__:
        ours, theirs = getattr(prune, name), getattr(tprune, name)
        if inspect.isfunction(theirs):
            assert list(inspect.signature(ours).parameters) == list(inspect.signature(theirs).parameters), name
        elif name not in ("BasePruningMethod", "PruningContainer"):
            assert list(inspect.signature(ours.apply).parameters) == list(inspect.signature(theirs.apply).parameters)
            assert ours.PRUNING_TYPE == theirs.PRUNING_TYPE
    assert mt.nn.utils.prune is prune


def test_only_parameters_can_be_pruned_and_pruned_modules_copy() -> None:
    for lib, bn, lin in ((tprune, torch.nn.BatchNorm1d(3), torch.nn.Linear(2, 3, bias=False)),
                         (prune, nn.BatchNorm1d(3), nn.Linear(2, 3, bias=False))):
        with pytest.raises(TypeError):
            lib.l1_unstructured(bn, "running_mean", amount=1)
        with pytest.raises(TypeError):
            lib.l1_unstructured(lin, "bias", amount=1)
        assert not lib.is_pruned(bn) and not lib.is_pruned(lin)
    assert "running_mean" in dict(bn.named_buffers()) and "weight" in dict(lin.named_parameters())
    prune.l1_unstructured(lin, "weight", amount=2)
    with pytest.raises(RuntimeError, match="leaf"):  # weight has history, as in torch
        copy.deepcopy(lin)
    with mt.no_grad():
        lin(mt.ones(1, 2))  # recomputed without history: now it copies (torch too)
    twin = copy.deepcopy(lin)
    with mt.no_grad():
        twin.weight_orig.fill_(3.0)
    twin(mt.ones(1, 2))
    np.testing.assert_array_equal(twin.weight.to_numpy(), 3.0 * lin.weight_mask.to_numpy())
    assert np.count_nonzero(lin.weight.to_numpy()) == 4  # the original keeps its own values
