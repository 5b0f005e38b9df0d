"""torch.nn names filled in against torch: CrossMapLRN2d, DataParallel, NLLLoss2d, F.upsample/upsample_bilinear/
upsample_nearest, F.multi_head_attention_forward, F.linear_cross_entropy and nn.LinearCrossEntropyLoss/Options,
nn.init.dirac_/sparse_ and the deprecated non-underscore initializers, nn.utils.stateless/convert_parameters/clip_grad
(values, gradients, warnings, signatures and errors)."""

from __future__ import annotations

import inspect
import math
import warnings
from typing import Any

import numpy as np
import pytest
import torch
from conftest import BACKENDS
from torch_oracle import check

import minitensor as mt
from minitensor import nn
from minitensor.errors import ShapeError
from minitensor.nn import functional as F
from minitensor.nn import init

RNG = np.random.default_rng(3)
CPU = ["simple", "fast"]
CUDA = [pytest.param("cuda", marks=pytest.mark.skipif("cuda" not in BACKENDS, reason="no cuda backend"))]


def _signature(fn: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def _warning(call: Any) -> tuple[type, str]:
    """The (category, message) of the one warning ``call()`` emits."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    assert len(caught) == 1, [str(w.message) for w in caught]
    return caught[0].category, str(caught[0].message)


# --- CrossMapLRN2d -------------------------------------------------------------------------------


@pytest.mark.parametrize("size, channels", [(3, 7), (1, 4), (4, 6), (5, 2), (5, 8)])
@pytest.mark.parametrize("backend", CPU)
def test_cross_map_lrn2d_matches_torchs_outputs(size: int, channels: int, backend: str) -> None:
    x = RNG.standard_normal((2, channels, 3, 2))
    mine = nn.CrossMapLRN2d(size, alpha=0.3, beta=0.6, k=1.5)
    theirs = torch.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.6, k=1.5)
    np.testing.assert_allclose(mine(mt.tensor(x, backend=backend)).to_numpy(), theirs(torch.tensor(x)).numpy(),
                               rtol=1e-13, atol=1e-15)
    assert repr(mine) == repr(theirs)


@pytest.mark.parametrize("backend", [*CPU, *CUDA])
def test_cross_map_lrn2d_gradient_is_the_derivative_of_torchs_forward(backend: str) -> None:
    """torch's legacy backward is not the derivative of its forward (gradcheck fails on it); minitensor's is: checked
    against central differences of torch's forward."""
    x = RNG.standard_normal((1, 5, 2, 1))
    weights = RNG.standard_normal(x.shape)
    theirs = torch.nn.CrossMapLRN2d(3, alpha=0.5, beta=0.75, k=1.0)

    def loss(values: np.ndarray) -> float:
        return float((theirs(torch.tensor(values)) * torch.tensor(weights)).sum())

    numeric = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = 1e-6
        numeric[index] = (loss(x + step) - loss(x - step)) / 2e-6
    xm = mt.tensor(x, backend=backend, requires_grad=True)
    (nn.CrossMapLRN2d(3, alpha=0.5, beta=0.75, k=1.0)(xm) * mt.tensor(weights, backend=backend)).sum().backward()
    np.testing.assert_allclose(xm.grad.to_numpy(), numeric, rtol=1e-6, atol=1e-8)


def test_cross_map_lrn2d_needs_4d_input() -> None:
    with pytest.raises(ValueError, match="Expected input to be 4D, got 3D instead"):
        nn.CrossMapLRN2d(3)(mt.zeros(2, 3, 4))
    assert _signature(nn.CrossMapLRN2d.__init__) == _signature(torch.nn.CrossMapLRN2d.__init__)


# --- DataParallel, NLLLoss2d, upsample aliases ---------------------------------------------------


def test_data_parallel_runs_the_module_on_the_whole_batch() -> None:
    model = nn.Linear(3, 2, dtype="float64")
    wrapped = nn.DataParallel(model, device_ids=[0], output_device=0, dim=0)
    x = mt.tensor(RNG.standard_normal((4, 3)))
    np.testing.assert_array_equal(wrapped(x).to_numpy(), model(x).to_numpy())
    assert wrapped.module is model and wrapped.device_ids == [] == torch.nn.DataParallel(torch.nn.Linear(3, 2)).device_ids
    assert sorted(wrapped.state_dict()) == sorted(torch.nn.DataParallel(torch.nn.Linear(3, 2)).state_dict())
    assert list(wrapped.parameters()) == list(model.parameters())
    assert [p.name for p in inspect.signature(nn.DataParallel.__init__).parameters.values()] == \
        [p.name for p in inspect.signature(torch.nn.DataParallel.__init__).parameters.values()]
    with pytest.raises(TypeError, match="needs an nn.Module"):
        nn.DataParallel(x)  # type: ignore[arg-type]


@pytest.mark.parametrize("backend", CPU)
def test_nll_loss2d_is_nll_loss_with_torchs_warning(backend: str) -> None:
    assert _warning(lambda: nn.NLLLoss2d()) == _warning(lambda: torch.nn.NLLLoss2d())
    logp = np.log(RNG.dirichlet(np.ones(4), (2, 3, 2))).transpose(0, 3, 1, 2).copy()
    target = RNG.integers(0, 4, (2, 3, 2))
    target[0, 0, 0] = -100
    weight = RNG.uniform(0.5, 2.0, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        mine = nn.NLLLoss2d(mt.tensor(weight, backend=backend), reduction="sum")
        theirs = torch.nn.NLLLoss2d(torch.tensor(weight), reduction="sum")
    assert isinstance(mine, nn.NLLLoss)
    check(backend, lambda lib, a: (mine if lib is mt else theirs)(a, (mt.tensor(target, backend=backend)
                                                                     if lib is mt else torch.tensor(target))),
          logp, rtol=1e-12, atol=1e-12)


UPSAMPLE = [
    ("upsample", {"scale_factor": 2}),
    ("upsample", {"size": (3, 5), "mode": "bilinear", "align_corners": False}),
    ("upsample", {"size": 5, "mode": "bilinear", "align_corners": True}),
    ("upsample_bilinear", {"size": (3, 4)}),
    ("upsample_bilinear", {"scale_factor": 1.5}),
    ("upsample_nearest", {"size": (4, 3)}),
    ("upsample_nearest", {"scale_factor": 3}),
]


@pytest.mark.parametrize("name, kwargs", UPSAMPLE, ids=str)
@pytest.mark.parametrize("backend", CPU)
def test_upsample_aliases_match_torch(name: str, kwargs: dict, backend: str) -> None:
    x = RNG.standard_normal((1, 2, 2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(backend, lambda lib, a: getattr(lib.nn.functional, name)(a, **kwargs), x, rtol=1e-12, atol=1e-12)
    mine = _warning(lambda: getattr(F, name)(mt.tensor(x), **kwargs))
    assert mine == _warning(lambda: getattr(torch.nn.functional, name)(torch.tensor(x), **kwargs))
    assert _signature(getattr(F, name)) == _signature(getattr(torch.nn.functional, name))


# --- multi_head_attention_forward ----------------------------------------------------------------

L, S, N, E, H = 3, 4, 2, 6, 2
PADDING = np.array([[False, True, False, False], [False, False, False, True]])
MHA_CASES = [
    {},
    {"batched": False},
    {"key_padding_mask": PADDING, "training": False},
    {"attn_mask": RNG.standard_normal((L, S)), "average_attn_weights": False},
    {"attn_mask": np.triu(np.ones((L, S), bool), 1), "is_causal": True, "need_weights": False},
    {"attn_mask": np.triu(np.ones((L, S), bool), 2), "is_causal": True, "key_padding_mask": PADDING},
    {"bias_k": RNG.standard_normal((1, 1, E)), "bias_v": RNG.standard_normal((1, 1, E)),
     "attn_mask": RNG.standard_normal((N * H, L, S))},
    {"add_zero_attn": True, "key_padding_mask": PADDING.astype(float) * -2.0},
    {"use_separate_proj_weight": True, "kdim": 5, "vdim": 3, "in_proj_bias": None},
    {"static_k": RNG.standard_normal((N * H, 5, E // H)), "static_v": RNG.standard_normal((N * H, 5, E // H)),
     "key_padding_mask": np.zeros((N, 5), bool)},
]


DIFFERENTIABLE = ("query", "key", "value", "in_proj_weight", "in_proj_bias", "bias_k", "bias_v", "out_proj_weight",
                  "out_proj_bias", "q_proj_weight", "k_proj_weight", "v_proj_weight", "static_k", "static_v")


def _mha_arrays(case: dict) -> tuple[dict, dict]:
    """(the float inputs and weights, the masks and flags) of one multi_head_attention_forward call."""
    case = dict(case)
    batched, kdim, vdim = case.pop("batched", True), case.pop("kdim", E), case.pop("vdim", E)
    rng = np.random.default_rng(5)
    shape = (lambda n, e: (n, N, e)) if batched else (lambda n, e: (n, e))
    arrays = {"query": rng.standard_normal(shape(L, E)), "key": rng.standard_normal(shape(S, kdim)),
              "value": rng.standard_normal(shape(S, vdim)), "in_proj_weight": rng.standard_normal((3 * E, E)),
              "in_proj_bias": rng.standard_normal(3 * E), "out_proj_weight": rng.standard_normal((E, E)),
              "out_proj_bias": rng.standard_normal(E)}
    if case.get("use_separate_proj_weight"):
        arrays.update(in_proj_weight=None, q_proj_weight=rng.standard_normal((E, E)),
                      k_proj_weight=rng.standard_normal((E, kdim)), v_proj_weight=rng.standard_normal((E, vdim)))
    arrays.update({name: case.pop(name) for name in DIFFERENTIABLE if name in case})
    return arrays, case


@pytest.mark.parametrize("case", MHA_CASES, ids=lambda c: "-".join(c) or "plain")
@pytest.mark.parametrize("backend", CPU)
def test_multi_head_attention_forward_matches_torch(case: dict, backend: str) -> None:
    arrays, options = _mha_arrays(case)
    names = [k for k, v in arrays.items() if v is not None]

    def call(lib: Any, *tensors: Any) -> Any:
        given = {name: None for name in DIFFERENTIABLE} | dict(zip(names, tensors))
        wrap = (lambda a: mt.tensor(a, backend=backend)) if lib is mt else torch.tensor
        extra = {k: wrap(v) if isinstance(v, np.ndarray) else v for k, v in options.items()}
        add_zero_attn = extra.pop("add_zero_attn", False)
        out, weights = lib.nn.functional.multi_head_attention_forward(
            given["query"], given["key"], given["value"], E, H, given["in_proj_weight"], given["in_proj_bias"],
            given["bias_k"], given["bias_v"], add_zero_attn, 0.0, given["out_proj_weight"], given["out_proj_bias"],
            q_proj_weight=given["q_proj_weight"], k_proj_weight=given["k_proj_weight"],
            v_proj_weight=given["v_proj_weight"], static_k=given["static_k"], static_v=given["static_v"], **extra)
        return out if weights is None else (out, weights)

    check(backend, call, *[arrays[k] for k in names], rtol=1e-10, atol=1e-12)


def test_multi_head_attention_forward_signature_dropout_and_errors() -> None:
    assert _signature(F.multi_head_attention_forward) == _signature(torch.nn.functional.multi_head_attention_forward)
    arrays, _ = _mha_arrays({})
    t = {k: mt.tensor(v) for k, v in arrays.items()}
    args = (t["query"], t["key"], t["value"], E, H, t["in_proj_weight"], t["in_proj_bias"], None, None, False)
    out_args = (t["out_proj_weight"], t["out_proj_bias"])
    mt.manual_seed(0)
    dropped, _ = F.multi_head_attention_forward(*args, 0.5, *out_args)
    kept, _ = F.multi_head_attention_forward(*args, 0.5, *out_args, training=False)
    plain, _ = F.multi_head_attention_forward(*args, 0.0, *out_args)
    assert not np.allclose(dropped.to_numpy(), plain.to_numpy())
    np.testing.assert_array_equal(kept.to_numpy(), plain.to_numpy())
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        F.multi_head_attention_forward(*args, 0.0, *out_args, is_causal=True)
    with pytest.raises(ShapeError, match="was expecting embedding dimension of 4, but got 6"):
        F.multi_head_attention_forward(t["query"], t["key"], t["value"], 4, H, *args[5:], 0.0, *out_args)
    with pytest.raises(ShapeError, match=r"The shape of the 2D attn_mask is \(3, 3\), but should be \(3, 4\)"):
        F.multi_head_attention_forward(*args, 0.0, *out_args, attn_mask=mt.zeros(3, 3))
    with pytest.raises(ShapeError, match="key_padding_mask to be None or 2-D"):
        F.multi_head_attention_forward(*args, 0.0, *out_args, key_padding_mask=mt.zeros(4))
    with pytest.raises(ValueError, match="bias_k and bias_v must be given together"):
        F.multi_head_attention_forward(*args[:7], mt.zeros(1, 1, E), None, False, 0.0, *out_args)


# --- linear_cross_entropy ------------------------------------------------------------------------

LCE_CASES = [
    ((5, 4), (3, 4), "index", {}),
    ((5, 4), (3, 4), "index", {"bias": True, "weight": True, "reduction": "sum", "label_smoothing": 0.2}),
    ((5, 4), (3, 4), "index", {"ignore_index": 1, "reduction": "none"}),
    ((4,), (3, 4), "index", {"bias": True}),
    ((5, 4), (3, 2, 2, 4), "index", {"bias": True, "weight": True}),
    ((5, 4), (3, 4), "probs", {"label_smoothing": 0.1}),
    ((5, 4), (3, 2, 4), "probs", {"bias": True, "reduction": "none"}),
]


@pytest.mark.parametrize("x_shape, w_shape, kind, options", LCE_CASES, ids=str)
@pytest.mark.parametrize("backend", CPU)
def test_linear_cross_entropy_matches_torch(x_shape: tuple, w_shape: tuple, kind: str, options: dict,
                                            backend: str) -> None:
    rng = np.random.default_rng(len(x_shape) + len(w_shape))
    classes, extra = w_shape[0], w_shape[1:-1]
    batch = x_shape[:-1]
    if kind == "index":
        target = rng.integers(0, classes, (*batch, *extra))
    else:
        target = rng.dirichlet(np.ones(classes), (*batch, *extra))
        target = np.moveaxis(target, -1, len(batch))
    options = dict(options)
    arrays = [rng.standard_normal(x_shape), rng.standard_normal(w_shape)]
    if options.pop("bias", False):
        arrays.append(rng.standard_normal((classes, *extra)))
    class_weight = rng.uniform(0.5, 2.0, classes) if options.pop("weight", False) else None

    def call(lib: Any, x: Any, w: Any, b: Any = None) -> Any:
        wrap = (lambda a: mt.tensor(a, backend=backend)) if lib is mt else torch.tensor
        return lib.nn.functional.linear_cross_entropy(
            x, w, wrap(target), linear_bias=b, weight=None if class_weight is None else wrap(class_weight), **options)

    check(backend, call, *arrays, rtol=1e-11, atol=1e-12)


def test_linear_cross_entropy_loss_module_and_options_match_torch() -> None:
    assert _signature(F.linear_cross_entropy) == _signature(torch.nn.functional.linear_cross_entropy)
    mine = nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True, dtype="float64", label_smoothing=0.1)
    theirs = torch.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True, dtype=torch.float64,
                                             label_smoothing=0.1)
    assert {k: tuple(v.shape) for k, v in mine.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    theirs.load_state_dict({k: torch.tensor(v.to_numpy()) for k, v in mine.state_dict().items()})
    x, target = RNG.standard_normal((5, 4)), RNG.integers(0, 3, (5, 2))
    xm, xt = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    lm, lt = mine(xm, mt.tensor(target)), theirs(xt, torch.tensor(target))
    np.testing.assert_allclose(lm.item(), lt.item(), rtol=1e-12)
    lm.backward()
    lt.backward()
    np.testing.assert_allclose(mine.linear.weight.grad.to_numpy(), theirs.linear.weight.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(xm.grad.to_numpy(), xt.grad.numpy(), rtol=1e-10)
    assert mine.extra_repr() == theirs.extra_repr()
    with pytest.raises(ValueError, match="expected label_smoothing to be in range"):
        nn.LinearCrossEntropyLoss(4, 3, label_smoothing=1.5)
    with pytest.raises(ShapeError, match=r"expected weight shape to be \(3,\)"):
        nn.LinearCrossEntropyLoss(4, 3, weight=mt.ones(4))
    options = nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    assert options == nn.LinearCrossEntropyOptions(batch_chunk_size=2) and options.acc_policy == "auto"
    chunked = F.linear_cross_entropy(xm, mine.linear.weight[:3], mt.tensor(target[:, 0]), options=options)
    np.testing.assert_allclose(chunked.item(), F.linear_cross_entropy(xm, mine.linear.weight[:3],
                                                                      mt.tensor(target[:, 0])).item())
    for bad in ({"acc_policy": "fast"}, {"chunking_method": "aspect_ratio:0"}, {"chunking_method": "square"},
                {"batch_chunk_size": 0}):
        with pytest.raises(ValueError) as theirs_error:
            torch.nn.LinearCrossEntropyOptions(**bad)
        with pytest.raises(ValueError) as mine_error:
            nn.LinearCrossEntropyOptions(**bad)
        assert str(mine_error.value) == str(theirs_error.value)


def test_linear_cross_entropy_errors() -> None:
    x, w = mt.zeros(5, 4), mt.zeros(3, 4)
    with pytest.raises(ShapeError, match="expected input with dimensionality 1 or 2, got 3"):
        F.linear_cross_entropy(mt.zeros(2, 5, 4), w, mt.zeros(2, 5, dtype="int64"))
    with pytest.raises(ShapeError, match="expected equal input and linear_weight last dimensions"):
        F.linear_cross_entropy(x, mt.zeros(3, 5), mt.zeros(5, dtype="int64"))
    with pytest.raises(ShapeError, match=r"expected linear_bias shape \(3,\), got \(4,\)"):
        F.linear_cross_entropy(x, w, mt.zeros(5, dtype="int64"), linear_bias=mt.zeros(4))
    with pytest.raises(ShapeError, match="requires batched input"):
        F.linear_cross_entropy(mt.zeros(4), mt.zeros(3, 2, 4), mt.zeros(2, dtype="int64"))
    with pytest.raises(ValueError, match="ignore_index cannot be specified when target contains probabilities"):
        F.linear_cross_entropy(x, w, mt.zeros(5, 3), ignore_index=0)


# --- nn.init -------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape, groups", [((4, 3, 3), 1), ((6, 2, 3, 4), 2), ((2, 5, 3, 3, 2), 1), ((3, 3, 1, 1), 3)])
@pytest.mark.parametrize("backend", [*CPU, *CUDA])
def test_dirac_matches_torch(shape: tuple, groups: int, backend: str) -> None:
    mine = nn.Parameter(mt.ones(*shape, backend=backend))
    assert init.dirac_(mine, groups) is mine
    np.testing.assert_array_equal(mine.to_numpy(), torch.nn.init.dirac_(torch.ones(shape), groups).numpy())


def test_dirac_and_sparse_errors_and_signatures() -> None:
    for name in ("dirac_", "sparse_", "eye_"):
        assert [p.name for p in inspect.signature(getattr(init, name)).parameters.values()] == \
            [p.name for p in inspect.signature(getattr(torch.nn.init, name)).parameters.values()]
    with pytest.raises(ValueError, match="3, 4 or 5 dims"):
        init.dirac_(mt.zeros(2, 2))
    with pytest.raises(ValueError, match="must be divisible by groups"):
        init.dirac_(mt.zeros(3, 2, 2), groups=2)
    with pytest.raises(ValueError, match="2-D tensor"):
        init.sparse_(mt.zeros(2, 2, 2), 0.5)


@pytest.mark.parametrize("backend", CPU)
def test_sparse_zeroes_ceil_sparsity_rows_of_every_column(backend: str) -> None:
    t = mt.zeros(40, 30, backend=backend)
    init.sparse_(t, sparsity=0.25, std=2.0, generator=mt.Generator().manual_seed(5))
    values = t.to_numpy()
    assert ((values == 0).sum(0) == math.ceil(0.25 * 40)).all()
    nonzero = values[values != 0]
    assert nonzero.size == 40 * 30 - 30 * 10 and abs(nonzero.std() - 2.0) < 0.3 and abs(nonzero.mean()) < 0.3
    again = init.sparse_(mt.zeros(40, 30, backend=backend), 0.25, 2.0, generator=mt.Generator().manual_seed(5))
    np.testing.assert_array_equal(again.to_numpy(), values)  # the generator decides every draw
    mt.manual_seed(1)
    a = init.sparse_(mt.zeros(5, 4), 0.5).to_numpy()
    mt.manual_seed(1)
    np.testing.assert_array_equal(init.sparse_(mt.zeros(5, 4), 0.5).to_numpy(), a)  # the shared generator by default


DEPRECATED = [("uniform", (-1.0, 2.0)), ("normal", (0.5, 0.1)), ("constant", (0.3,)), ("eye", ()), ("dirac", ()),
              ("xavier_uniform", ()), ("xavier_normal", ()), ("kaiming_uniform", ()), ("kaiming_normal", ()),
              ("orthogonal", ()), ("sparse", (0.5,))]


@pytest.mark.parametrize("name, args", DEPRECATED)
def test_deprecated_initializers_warn_as_torch_and_match_the_new_names(name: str, args: tuple) -> None:
    shape = (4, 3, 3) if name == "dirac" else (4, 3)
    category, message = _warning(lambda: getattr(torch.nn.init, name)(torch.zeros(shape), *args))
    mine = mt.zeros(*shape)
    mt.manual_seed(2)
    assert _warning(lambda: getattr(init, name)(mine, *args)) == (category, message) == \
        (FutureWarning, f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`.")
    mt.manual_seed(2)
    np.testing.assert_array_equal(getattr(init, name + "_")(mt.zeros(*shape), *args).to_numpy(), mine.to_numpy())
    assert getattr(init, name).__name__ == name


# --- nn.utils submodules -------------------------------------------------------------------------


def test_utils_submodules_match_torchs_layout() -> None:
    utils = nn.utils
    for module, names in ((utils.clip_grad, ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_"]),
                          (utils.convert_parameters, ["parameters_to_vector", "vector_to_parameters"]),
                          (utils.stateless, ["functional_call"])):
        for name in names:
            assert hasattr(getattr(torch.nn.utils, module.__name__.rsplit(".", 1)[1]), name)
            if module is not utils.stateless:
                assert getattr(module, name) is getattr(utils, name)


def test_stateless_functional_call_warns_and_swaps_parameters() -> None:
    model = nn.Linear(2, 2, dtype="float64")
    x = mt.tensor(RNG.standard_normal((3, 2)))
    weight = mt.tensor(RNG.standard_normal((2, 2)))
    theirs = _warning(lambda: torch.nn.utils.stateless.functional_call(torch.nn.Linear(2, 2), {}, (torch.ones(1, 2),)))
    assert _warning(lambda: nn.utils.stateless.functional_call(model, {"weight": weight}, (x,))) == theirs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        out = nn.utils.stateless.functional_call(model, {"weight": weight}, (x,))
    np.testing.assert_allclose(out.to_numpy(), x.to_numpy() @ weight.to_numpy().T + model.bias.to_numpy(), rtol=1e-14)
    assert model.weight is not weight  # restored
    assert _signature(nn.utils.stateless.functional_call) == _signature(torch.nn.utils.stateless.functional_call)


def test_deprecated_clip_grad_norm_warns_and_clips() -> None:
    p = nn.Parameter(mt.tensor([3.0, 4.0]))
    p.grad = mt.tensor([3.0, 4.0])
    t = torch.nn.Parameter(torch.tensor([3.0, 4.0]))
    t.grad = torch.tensor([3.0, 4.0])
    theirs = _warning(lambda: torch.nn.utils.clip_grad_norm(t, 1.0))
    assert _warning(lambda: nn.utils.clip_grad_norm(p, 1.0)) == theirs
    np.testing.assert_allclose(p.grad.to_numpy(), t.grad.numpy(), rtol=1e-6)
