"""affine_grid/grid_sample, gumbel_softmax, fractional max pooling, lazy modules, nn.Buffer, Module.cpu/cuda and
AdaptiveLogSoftmaxWithLoss against PyTorch: values, indices, dtypes, shapes, gradients, warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS

import minitensor as mt
import minitensor.nn.activation_extra as activation_extra
from minitensor import nn
from minitensor.errors import DTypeError, IndexOutOfRangeError, ShapeError
from minitensor.nn import functional as F

TF = torch.nn.functional
RNG = np.random.default_rng(56)
TINY_CUDA = ["cuda"] if "cuda" in BACKENDS else []


def _pair(array: np.ndarray, backend: str, grad: bool = True) -> tuple[torch.Tensor, mt.Tensor]:
    return torch.tensor(array, requires_grad=grad), mt.tensor(array, backend=backend, requires_grad=grad)


def _close(got: mt.Tensor, want: torch.Tensor, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    assert tuple(got.shape) == tuple(want.shape)
    assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    np.testing.assert_allclose(got.to_numpy(), want.detach().numpy(), rtol=rtol, atol=atol)


# --- affine_grid / grid_sample ---


def _grid(shape: tuple[int, ...], scale: float = 1.3) -> np.ndarray:
    g = RNG.uniform(-scale, scale, shape)
    g.reshape(-1)[:6] = [-1.0, 1.0, 1.0, -1.0, 0.0, 1.0][: g.size]  # exact borders and centre
    return g


def _sample_case(backend: str, xs: tuple[int, ...], gs: tuple[int, ...], rtol: float = 1e-10, atol: float = 1e-12,
                 **kw: object) -> None:
    tx, mx = _pair(RNG.standard_normal(xs), backend)
    tg, mg = _pair(_grid(gs), backend)
    want, got = TF.grid_sample(tx, tg, **kw), F.grid_sample(mx, mg, **kw)
    _close(got, want, rtol, atol)
    seed = RNG.standard_normal(tuple(want.shape))
    want.backward(torch.tensor(seed))
    got.backward(mt.tensor(seed, backend=backend))
    np.testing.assert_allclose(mx.grad.to_numpy(), tx.grad.numpy(), rtol=rtol, atol=atol)
    grid_grad = mg.grad.to_numpy() if mg.grad is not None else np.zeros(gs)  # nearest: no grid gradient
    np.testing.assert_allclose(grid_grad, tg.grad.numpy(), rtol=rtol, atol=1e-10)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d_matches_torch(backend, mode, padding_mode, align_corners):
    _sample_case(backend, (2, 1, 3, 4), (2, 2, 2, 2), mode=mode, padding_mode=padding_mode, align_corners=align_corners)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_3d_matches_torch(backend, mode, padding_mode):
    for align_corners in (False, True):
        _sample_case(backend, (1, 2, 3, 4, 3), (1, 2, 3, 2, 3), mode=mode, padding_mode=padding_mode,
                     align_corners=align_corners)


@pytest.mark.parametrize("backend", ["simple"])
def test_grid_sample_far_reflections_and_unit_sizes(backend):
    for xs in ((1, 1, 1, 4), (1, 1, 1, 1), (1, 2, 3, 5)):
        for mode in ("bilinear", "bicubic"):
            for align_corners in (False, True):
                tx, mx = _pair(RNG.standard_normal(xs), backend)
                tg, mg = _pair(RNG.uniform(-5, 5, (1, 2, 3, 2)), backend)
                kw = {"mode": mode, "padding_mode": "reflection", "align_corners": align_corners}
                want, got = TF.grid_sample(tx, tg, **kw), F.grid_sample(mx, mg, **kw)
                _close(got, want)
                want.sum().backward()
                got.sum().backward()
                np.testing.assert_allclose(mg.grad.to_numpy(), tg.grad.numpy(), atol=1e-10)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_grid_sample_float32(backend):
    _sample_case(backend, (1, 2, 3, 4), (1, 2, 2, 2), rtol=1e-5, atol=1e-6, align_corners=False)
    x = mt.tensor(RNG.standard_normal((1, 1, 3, 3)).astype(np.float32), backend=backend)
    g = mt.tensor(RNG.uniform(-1, 1, (1, 2, 2, 2)).astype(np.float32), backend=backend)
    assert F.grid_sample(x, g, align_corners=True).dtype == mt.float32


@pytest.mark.parametrize("backend", TINY_CUDA)
def test_grid_sample_cuda_tiny(backend):
    _sample_case(backend, (1, 1, 2, 2), (1, 1, 2, 2), align_corners=True)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 3, 1, 4), (1, 2, 1, 3)])
def test_affine_grid_matches_torch(backend, align_corners, size):
    nd = len(size) - 2
    theta = RNG.standard_normal((size[0], nd, nd + 1))
    tt, mtheta = _pair(theta, backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's unit-size warning
        want = TF.affine_grid(tt, list(size), align_corners=align_corners)
        got = F.affine_grid(mtheta, size, align_corners=align_corners)
    _close(got, want)
    seed = RNG.standard_normal(tuple(want.shape))
    want.backward(torch.tensor(seed))
    got.backward(mt.tensor(seed, backend=backend))
    np.testing.assert_allclose(mtheta.grad.to_numpy(), tt.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_affine_grid_then_sample_identity():
    theta = mt.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], dtype="float64")
    x = mt.tensor(RNG.standard_normal((1, 2, 3, 4)))
    for align_corners in (False, True):
        grid = F.affine_grid(theta, (1, 2, 3, 4), align_corners=align_corners)
        out = F.grid_sample(x, grid, align_corners=align_corners)
        np.testing.assert_allclose(out.to_numpy(), x.to_numpy(), atol=1e-12)


def test_grid_defaults_warn_and_errors():
    theta = mt.tensor(RNG.standard_normal((1, 2, 3)))
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        grid = F.affine_grid(theta, (1, 1, 2, 2))
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(mt.ones(1, 1, 2, 2, dtype="float64"), grid)
    with pytest.warns(UserWarning, match="unit-size grids"):
        F.affine_grid(theta, (1, 1, 1, 3), align_corners=True)
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(mt.ones(1, 3, 4), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(NotImplementedError, match="4D and 5D"):
        F.affine_grid(theta, (1, 2, 2), align_corners=False)
    with pytest.raises(ValueError, match="floating point"):
        F.affine_grid(mt.ones(1, 2, 3, dtype="int64"), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(ValueError, match="non-zero, positive"):
        F.affine_grid(theta, (1, 1, 0, 2), align_corners=False)
    x = mt.ones(1, 1, 3, 3, dtype="float64")
    with pytest.raises(ValueError, match="expected mode"):
        F.grid_sample(x, grid, mode="area", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode"):
        F.grid_sample(x, grid, padding_mode="wrap", align_corners=False)
    with pytest.raises(ShapeError, match="size 2 in last dimension"):
        F.grid_sample(x, mt.zeros(1, 2, 2, 3, dtype="float64"), align_corners=False)
    with pytest.raises(ShapeError, match="same batch size"):
        F.grid_sample(x, mt.zeros(2, 2, 2, 2, dtype="float64"), align_corners=False)
    with pytest.raises(DTypeError, match="same dtype"):
        F.grid_sample(x, mt.zeros(1, 2, 2, 2, dtype="float32"), align_corners=False)
    with pytest.raises(ValueError, match="bicubic"):
        F.grid_sample(mt.ones(1, 1, 2, 2, 2), mt.zeros(1, 1, 1, 1, 3), mode="bicubic", align_corners=False)
    with pytest.raises(TypeError, match="argument 'grid' must be Tensor"):
        F.grid_sample(x, None, align_corners=False)


# --- gumbel_softmax ---


@pytest.mark.parametrize("backend", CPU_BACKENDS + TINY_CUDA)
@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_fixed_noise_matches_torch(backend, hard, monkeypatch):
    shape = (2, 3) if backend == "cuda" else (3, 5)
    logits, noise = RNG.standard_normal(shape), RNG.gumbel(size=shape)
    monkeypatch.setattr(activation_extra, "gumbel_noise",
                        lambda like: mt.tensor(noise, dtype=like.dtype, backend=like.backend))
    for dim in (-1, 0):
        tl, ml = _pair(logits, backend)
        soft = TF.softmax((tl + torch.tensor(noise)) / 0.7, dim)
        if hard:
            one_hot = torch.zeros_like(tl).scatter_(dim, soft.max(dim, keepdim=True)[1], 1.0)
            want = one_hot - soft.detach() + soft
        else:
            want = soft
        got = F.gumbel_softmax(ml, tau=0.7, hard=hard, dim=dim)
        _close(got, want)
        if hard:
            assert set(np.unique(got.to_numpy())) <= {0.0, 1.0}
        seed = RNG.standard_normal(shape)
        want.backward(torch.tensor(seed))
        got.backward(mt.tensor(seed, backend=backend))
        np.testing.assert_allclose(ml.grad.to_numpy(), tl.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_gumbel_softmax_distribution_and_eps_warning():
    mt.manual_seed(56)
    noise = activation_extra.gumbel_noise(mt.zeros(100_000, dtype="float64")).to_numpy()
    assert np.isfinite(noise).all()
    assert abs(noise.mean() - np.euler_gamma) < 0.02 and abs(noise.var() - np.pi**2 / 6) < 0.05
    p = np.array([0.1, 0.2, 0.7])
    logits = mt.tensor(np.tile(np.log(p), (20_000, 1)))
    hard = F.gumbel_softmax(logits, hard=True).to_numpy()
    np.testing.assert_array_equal(hard.sum(1), 1.0)
    np.testing.assert_allclose(hard.mean(0), p, atol=0.015)  # argmax of logits + Gumbel is a categorical draw
    soft = F.gumbel_softmax(logits, tau=0.5).to_numpy()
    np.testing.assert_allclose(soft.sum(1), 1.0, rtol=1e-12)
    mt.manual_seed(3)
    first = F.gumbel_softmax(logits[:4]).to_numpy()
    mt.manual_seed(3)
    np.testing.assert_array_equal(F.gumbel_softmax(logits[:4]).to_numpy(), first)
    with pytest.warns(UserWarning, match="deprecated"):
        F.gumbel_softmax(logits[:2], eps=1e-5)


# --- fractional max pooling ---


FRACTIONAL = [
    ((2, 2, 7, 9), (2, 3), (5, 6), 2),
    ((2, 8, 7), 2, (4, 4), 2),  # unbatched
    ((1, 1, 19, 23), 3, (11, 17), 2),
    ((1, 2, 5, 6, 7), (2, 3, 2), (3, 3, 5), 3),
    ((2, 4, 4, 5), 2, (2, 2, 3), 3),  # unbatched
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("xs, kernel, out, nd", FRACTIONAL)
def test_fractional_max_pool_matches_torch_exactly(backend, dtype, xs, kernel, out, nd):
    x = RNG.standard_normal(xs).astype(dtype)
    batch = 1 if len(xs) == nd + 1 else xs[0]
    samples = RNG.uniform(0, 1, (batch, xs[-nd - 1], nd)).astype(dtype)
    tx, mx = _pair(x, backend)
    want, want_idx = getattr(TF, f"fractional_max_pool{nd}d")(tx, kernel, output_size=out, return_indices=True,
                                                             _random_samples=torch.tensor(samples))
    got, got_idx = getattr(F, f"fractional_max_pool{nd}d")(mx, kernel, output_size=out, return_indices=True,
                                                           _random_samples=mt.tensor(samples, backend=backend))
    _close(got, want, 0, 0)
    _close(got_idx, want_idx, 0, 0)
    seed = RNG.standard_normal(tuple(want.shape)).astype(dtype)
    want.backward(torch.tensor(seed))
    got.backward(mt.tensor(seed, backend=backend))
    np.testing.assert_array_equal(mx.grad.to_numpy(), tx.grad.numpy())


@pytest.mark.parametrize("backend", TINY_CUDA)
def test_fractional_max_pool_cuda_tiny(backend):
    x, samples = RNG.standard_normal((1, 1, 3, 3)), RNG.uniform(0, 1, (1, 1, 2))
    want = TF.fractional_max_pool2d(torch.tensor(x), 2, output_size=2, _random_samples=torch.tensor(samples))
    got = F.fractional_max_pool2d(mt.tensor(x, backend=backend), 2, output_size=2,
                                  _random_samples=mt.tensor(samples, backend=backend))
    _close(got, want, 0, 0)


def test_fractional_max_pool_ratio_random_samples_and_modules():
    x = mt.tensor(RNG.standard_normal((2, 3, 10, 8)))
    assert F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.75)).shape == (2, 3, 5, 6)
    values, indices = F.fractional_max_pool2d_with_indices(x, 2, output_size=4)  # drawn samples
    flat = x.reshape(2, 3, -1).to_numpy()
    np.testing.assert_array_equal(np.take_along_axis(flat, indices.reshape(2, 3, -1).to_numpy(), 2),
                                  values.reshape(2, 3, -1).to_numpy())
    samples = mt.tensor(RNG.uniform(0, 1, (2, 3, 2)))
    pool = nn.FractionalMaxPool2d(3, output_size=(4, 5), return_indices=True, _random_samples=samples)
    assert repr(pool) == "FractionalMaxPool2d()" and list(pool.state_dict()) == ["_random_samples"]
    tpool = torch.nn.FractionalMaxPool2d(3, output_size=(4, 5), return_indices=True,
                                         _random_samples=torch.tensor(samples.to_numpy()))
    got, want = pool(x), tpool(torch.tensor(x.to_numpy()))
    _close(got[0], want[0], 0, 0)
    _close(got[1], want[1], 0, 0)
    pool3 = nn.FractionalMaxPool3d(2, output_ratio=0.5)
    assert pool3(mt.ones(1, 2, 6, 6, 8)).shape == (1, 2, 3, 3, 4)
    with pytest.raises(ValueError, match="either an output size, or a pooling ratio"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="only one of"):
        nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.FractionalMaxPool3d(2, output_ratio=1.0)
    with pytest.raises(ValueError, match="either an output_size or an output_ratio"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(ShapeError, match="pool height 3 too large relative to input height 10"):
        F.fractional_max_pool2d(x, 3, output_size=(9, 3))
    with pytest.raises(ShapeError, match="pool time 2 too large relative to input time 4"):
        F.fractional_max_pool3d(mt.ones(1, 1, 4, 7, 9), 2, output_size=(3, 5, 7))
    with pytest.raises(ShapeError, match=r"size\(1\) equals to input channel size"):
        F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=mt.rand(2, 2, 2, dtype="float64"))
    with pytest.raises(ShapeError, match=r"size\(0\) no less then input batch size"):
        F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=mt.rand(1, 3, 2, dtype="float64"))
    with pytest.raises(DTypeError, match="same dtype"):
        F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=mt.rand(2, 3, 2, dtype="float32"))


# --- Buffer, cpu/cuda ---


def test_buffer_assignment_registers():
    layer = nn.Linear(2, 3, backend="simple")
    layer.saved = nn.Buffer(mt.ones(2))
    layer.scratch = nn.Buffer(mt.zeros(1), persistent=False)
    layer.plain = mt.ones(1)  # a Tensor that is not a Buffer stays a plain attribute
    assert type(layer.saved) is mt.Tensor and isinstance(layer.saved, nn.Buffer)
    assert not isinstance(mt.ones(1), nn.Buffer)
    assert [name for name, _ in layer.named_buffers()] == ["saved", "scratch"]
    assert list(layer.state_dict()) == ["weight", "bias", "saved"]
    shared = mt.ones(3, requires_grad=True)
    buffer = nn.Buffer(shared)
    assert buffer.requires_grad and buffer.is_leaf and buffer.history is None
    with pytest.raises(TypeError, match="parameter 'weight'"):
        layer.weight = nn.Buffer(mt.ones(3, 2))
    tlayer = torch.nn.Linear(2, 3)
    tlayer.saved = torch.nn.Buffer(torch.ones(2))
    tlayer.scratch = torch.nn.Buffer(torch.zeros(1), persistent=False)
    assert list(tlayer.state_dict()) == list(layer.state_dict())


def test_module_cpu_and_cuda():
    layer = nn.BatchNorm1d(3, backend="simple")
    assert layer.cpu() is layer
    assert layer.weight.backend is mt.tensor([1.0], backend="cpu").backend
    assert layer.num_batches_tracked.dtype == mt.int64
    if "cuda" in BACKENDS:
        assert layer.cuda() is layer and layer.running_mean.backend.name == "cuda"
        assert layer.num_batches_tracked.dtype == mt.int64


# --- lazy modules ---


LAZY = [
    (lambda: nn.LazyLinear(3), lambda: torch.nn.LazyLinear(3), (4, 5)),
    (lambda: nn.LazyConv1d(4, 3, padding=1), lambda: torch.nn.LazyConv1d(4, 3, padding=1), (2, 3, 6)),
    (lambda: nn.LazyConv2d(4, 2, groups=2), lambda: torch.nn.LazyConv2d(4, 2, groups=2), (2, 4, 4, 4)),
    (lambda: nn.LazyConv3d(2, 2), lambda: torch.nn.LazyConv3d(2, 2), (2, 3, 3, 3)),  # unbatched
    (lambda: nn.LazyConvTranspose1d(4, 3, groups=2), lambda: torch.nn.LazyConvTranspose1d(4, 3, groups=2), (2, 4, 5)),
    (lambda: nn.LazyConvTranspose2d(3, 2, stride=2), lambda: torch.nn.LazyConvTranspose2d(3, 2, stride=2),
     (1, 2, 3, 3)),
    (lambda: nn.LazyConvTranspose3d(2, 2), lambda: torch.nn.LazyConvTranspose3d(2, 2), (1, 2, 2, 2, 2)),
    (lambda: nn.LazyBatchNorm1d(), lambda: torch.nn.LazyBatchNorm1d(), (4, 3)),
    (lambda: nn.LazyBatchNorm2d(affine=False), lambda: torch.nn.LazyBatchNorm2d(affine=False), (2, 3, 2, 2)),
    (lambda: nn.LazyBatchNorm3d(), lambda: torch.nn.LazyBatchNorm3d(), (2, 2, 2, 2, 2)),
    (lambda: nn.LazyInstanceNorm1d(), lambda: torch.nn.LazyInstanceNorm1d(), (2, 3, 4)),
    (lambda: nn.LazyInstanceNorm2d(track_running_stats=False), lambda: torch.nn.LazyInstanceNorm2d(
        track_running_stats=False), (2, 3, 3, 3)),
    (lambda: nn.LazyInstanceNorm3d(affine=False), lambda: torch.nn.LazyInstanceNorm3d(affine=False), (1, 2, 2, 2, 3)),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("make, make_torch, shape", LAZY)
def test_lazy_modules_match_torch(backend, make, make_torch, shape):
    mt.set_default_backend(backend)
    try:
        ours = make()
    finally:
        mt.set_default_backend(None)
    theirs = make_torch().double()
    ours.double()
    lazy_name = type(ours).__name__
    assert lazy_name == type(theirs).__name__ and ours.has_uninitialized_params()
    assert repr(ours) == repr(theirs)
    state, tstate = ours.state_dict(), theirs.state_dict()
    assert list(state) == list(tstate)
    assert [type(v).__name__ for v in state.values()] == [type(v).__name__ for v in tstate.values()]
    x = RNG.standard_normal(shape)
    out, want = ours(mt.tensor(x, backend=backend)), theirs(torch.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__ == lazy_name.removeprefix("Lazy")
    assert "_initialize_hook" not in ours.__dict__
    assert not any(isinstance(t, nn.lazy.UninitializedTensorMixin) for t in (*ours.parameters(), *ours.buffers()))
    assert repr(ours) == repr(theirs)
    for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == tname and type(p) is nn.Parameter and p.shape == tuple(tp.shape) and p.dtype == mt.float64
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    ours.eval()
    theirs.eval()
    _close(ours(mt.tensor(x, backend=backend)), theirs(torch.tensor(x)))
    assert out.shape == tuple(want.shape)


def test_lazy_init_distribution_and_optimizer():
    lazy = nn.LazyLinear(200, dtype="float64")
    params = list(lazy.parameters())
    assert [type(p).__name__ for p in params] == ["UninitializedParameter"] * 2
    optimizer = mt.optim.SGD(params, lr=0.5)  # built before the first forward, as torch allows
    x = mt.tensor(RNG.standard_normal((3, 50)))
    lazy(x).sum().backward()
    assert params[0] is lazy.weight and lazy.weight.shape == (200, 50)
    before = lazy.weight.to_numpy().copy()
    bound = 1 / np.sqrt(50)  # kaiming_uniform(a=sqrt(5)) and the bias both give U(-1/sqrt(in), 1/sqrt(in))
    assert np.abs(before).max() <= bound and np.abs(before).max() > 0.9 * bound
    assert np.abs(lazy.bias.to_numpy()).max() <= bound
    optimizer.step()
    np.testing.assert_allclose(lazy.weight.to_numpy(), before - 0.5 * x.to_numpy().sum(0), rtol=1e-12)
    norm = nn.LazyBatchNorm1d()
    norm(mt.tensor(RNG.standard_normal((4, 3)), dtype="float32"))
    np.testing.assert_array_equal(norm.weight.to_numpy(), np.ones(3))
    assert norm.num_batches_tracked.item() == 1 and norm.running_var.shape == (3,)


def test_uninitialized_tensors_refuse_use():
    param = nn.UninitializedParameter()
    assert repr(param) == "<UninitializedParameter>" and param.requires_grad and isinstance(param, nn.Parameter)
    assert param.dtype == mt.float32
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        _ = param.shape
    with pytest.raises(ValueError, match="uninitialized parameter"):
        _ = param + 1
    with pytest.raises(ValueError, match="uninitialized parameter"):
        param.sum()
    buffer = nn.UninitializedBuffer(dtype="float64")
    assert not buffer.requires_grad and repr(buffer) == "<UninitializedBuffer>"
    buffer.materialize((2, 3))
    assert type(buffer) is mt.Tensor and buffer.shape == (2, 3) and buffer.dtype == mt.float64
    param.materialize((4,), dtype="float64")
    assert type(param) is nn.Parameter and param.shape == (4,) and param.dtype == mt.float64
    lazy = nn.LazyLinear(3)
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        nn.Linear(4, 3).load_state_dict(lazy.state_dict())
    lazy.reset_parameters()  # a no-op before materialization, as torch
    lazy.load_state_dict(nn.Linear(4, 3).state_dict())  # materializes to the stored shapes
    assert type(lazy) is nn.LazyLinear and lazy.weight.shape == (3, 4) and not lazy.has_uninitialized_params()
    lazy(mt.ones(2, 4))
    assert type(lazy) is nn.Linear
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d"):
        nn.LazyConv2d(4, 3)(mt.ones(2, 5))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(mt.ones(1, 3, 5, 5))
    model = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(2))
    assert model(mt.ones(3, 6)).shape == (3, 2)
    assert [type(m).__name__ for m in model] == ["Linear", "ReLU", "Linear"]


@pytest.mark.parametrize("backend", TINY_CUDA)
def test_lazy_linear_cuda_tiny(backend):
    lazy = nn.LazyLinear(2, backend=backend)
    assert lazy(mt.ones(1, 2, backend=backend)).shape == (1, 2) and lazy.weight.backend.name == "cuda"


# --- AdaptiveLogSoftmaxWithLoss ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("head_bias", [False, True])
def test_adaptive_log_softmax_matches_torch(backend, head_bias):
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0, head_bias=head_bias).double()
    ours = nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0, head_bias=head_bias, dtype="float64",
                                         backend=backend)
    assert list(ours.state_dict()) == list(theirs.state_dict()) and repr(ours) == repr(theirs)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    x, target = RNG.standard_normal((7, 8)), np.array([0, 5, 11, 2, 7, 4, 9])
    tx, mx = _pair(x, backend)
    want, wloss = theirs(tx, torch.tensor(target))
    got, loss = ours(mx, mt.tensor(target, backend=backend))
    assert type(ours(mx, mt.tensor(target, backend=backend))).__name__ == "_ASMoutput"
    _close(got, want)
    _close(loss, wloss)
    (want.sum() + wloss).backward()
    (got.sum() + loss).backward()
    np.testing.assert_allclose(mx.grad.to_numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.to_numpy(), tp.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=name)
    _close(ours.log_prob(mx), theirs.log_prob(tx))
    _close(ours.predict(mx), theirs.predict(tx))
    row, trow = ours(mx[1], mt.tensor(5, backend=backend)), theirs(tx[1], torch.tensor(5))
    _close(row.output, trow.output)
    _close(row.loss, trow.loss)


def test_adaptive_log_softmax_errors():
    with pytest.raises(ValueError, match="length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 10, [])
    with pytest.raises(ValueError, match="unique, positive integers"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3])
    with pytest.raises(ValueError, match="unique, positive integers"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 10])
    asm = nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])
    assert asm.tail[0][0].weight.shape == (1, 4) and asm.head.bias is None
    with pytest.raises(IndexOutOfRangeError, match=r"Target values should be in \[0, 9\]"):
        asm(mt.ones(2, 4), mt.tensor([1, 10]))
    with pytest.raises(ShapeError, match="same size in the batch dimension"):
        asm(mt.ones(3, 4), mt.tensor([1, 2]))
    with pytest.raises(ShapeError, match="0D or 1D target"):
        asm(mt.ones(3, 4), mt.tensor([[1, 2]]))
