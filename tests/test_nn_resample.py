"""pixel_shuffle/pixel_unshuffle, interpolate and the Upsample/PixelShuffle Modules against PyTorch: values and
gradients (tests/torch_oracle.py ``check``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import BACKENDS, CPU_BACKENDS
from torch_oracle import check

import minitensor as mt
from minitensor import nn
from minitensor.errors import ShapeError
from minitensor.nn import functional as F

RNG = np.random.default_rng(5)


def randn(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


# --- pixel shuffle ---


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shape, r", [((2, 8, 3, 2), 2), ((9, 2, 3), 3), ((2, 3, 4, 1, 2), 2)])
def test_pixel_shuffle_matches_torch(backend, shape, r):
    check(backend, lambda L, x: L.nn.functional.pixel_shuffle(x, r), randn(*shape))
    check(backend, lambda L, x: L.nn.functional.pixel_unshuffle(x, r), randn(*shape[:-2], shape[-2] * r, shape[-1] * r))
    check(backend, lambda L, x: L.nn.PixelShuffle(r)(x.transpose(-1, -2)), randn(*shape), grad=False)  # non-contiguous


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_pixel_shuffle_round_trip(backend):
    x = mt.tensor(randn(2, 12, 3, 4, dtype=np.float32), backend=backend)
    up = F.pixel_shuffle(x, 2)
    assert up.shape == (2, 3, 6, 8) and up.dtype == mt.float32
    np.testing.assert_array_equal(F.pixel_unshuffle(up, 2).numpy(), x.numpy())
    np.testing.assert_array_equal(nn.PixelShuffle(2)(nn.PixelUnshuffle(2)(up)).numpy(), up.numpy())
    np.testing.assert_array_equal(F.pixel_shuffle(x, 1).numpy(), x.numpy())
    # empty batch (torch 2.x returns its empty input unchanged from pixel_unshuffle and fails pixel_shuffle's backward)
    empty = mt.zeros(0, 4, 2, 2, backend=backend, requires_grad=True)
    assert F.pixel_shuffle(empty, 2).shape == (0, 1, 4, 4)
    assert F.pixel_unshuffle(empty, 2).shape == (0, 16, 1, 1)
    F.pixel_shuffle(empty, 2).sum().backward()
    assert empty.grad.shape == (0, 4, 2, 2)


def test_pixel_shuffle_repr_and_errors():
    assert repr(nn.PixelShuffle(3)) == repr(torch.nn.PixelShuffle(3)) == "PixelShuffle(upscale_factor=3)"
    assert repr(nn.PixelUnshuffle(2)) == repr(torch.nn.PixelUnshuffle(2))
    with pytest.raises(ShapeError, match=r"size 5.*divisible by the square of upscale_factor, 4"):
        F.pixel_shuffle(mt.zeros(1, 5, 2, 2), 2)
    with pytest.raises(ShapeError, match="at least 3 dimensions"):
        F.pixel_shuffle(mt.zeros(4, 2), 2)
    with pytest.raises(ValueError, match="positive int upscale_factor, but got 0"):
        F.pixel_shuffle(mt.zeros(4, 2, 2), 0)
    with pytest.raises(ShapeError, match=r"height \(size 3.*divisible by downscale_factor 2"):
        F.pixel_unshuffle(mt.zeros(1, 1, 3, 4), 2)
    with pytest.raises(ShapeError, match=r"width \(size 5"):
        F.pixel_unshuffle(mt.zeros(1, 1, 4, 5), 2)


# --- interpolate ---

# (input shape, interpolate keywords); every mode appears with size and with (non-integer) scale factors
INTERP = [
    ((2, 3, 5), {"size": 9, "mode": "nearest"}),
    ((1, 2, 7), {"scale_factor": 0.6, "mode": "nearest"}),  # downsampling
    ((1, 2, 5), {"scale_factor": 2.6, "mode": "nearest"}),
    ((1, 2, 4, 5), {"size": (7, 3), "mode": "nearest"}),
    ((1, 2, 4, 3), {"scale_factor": (1.5, 2.5), "mode": "nearest"}),
    ((1, 1, 2, 2, 3), {"scale_factor": 1.7, "mode": "nearest"}),
    ((2, 1, 5), {"size": 8, "mode": "nearest-exact"}),
    ((1, 2, 6, 5), {"scale_factor": (0.5, 1.3), "mode": "nearest-exact"}),
    ((1, 2, 3, 5), {"scale_factor": 1.7, "mode": "nearest-exact", "recompute_scale_factor": True}),
    ((2, 2, 4), {"size": 7, "mode": "linear"}),
    ((1, 2, 4), {"size": 7, "mode": "linear", "align_corners": True}),
    ((1, 2, 6), {"scale_factor": 0.7, "mode": "linear"}),
    ((1, 2, 5), {"scale_factor": 1.1, "mode": "linear"}),  # output 5 = input: copied, scale ignored (as PyTorch)
    ((1, 2, 3), {"size": 1, "mode": "linear", "align_corners": True}),
    ((2, 2, 3, 4), {"size": (5, 7), "mode": "bilinear"}),
    ((1, 2, 3, 4), {"size": (5, 2), "mode": "bilinear", "align_corners": True}),
    ((1, 1, 6, 5), {"scale_factor": (0.5, 1.5), "mode": "bilinear"}),
    ((1, 1, 3, 4), {"scale_factor": 2.3, "mode": "bilinear", "recompute_scale_factor": True}),
    ((1, 1, 7, 6), {"scale_factor": 0.4, "mode": "bilinear", "align_corners": True}),
    ((1, 1, 2, 3, 3), {"size": (3, 4, 2), "mode": "trilinear"}),
    ((1, 2, 7), {"size": 3, "mode": "area"}),
    ((1, 2, 6, 5), {"scale_factor": 0.5, "mode": "area"}),
]


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("shape, kw", INTERP)
def test_interpolate_matches_torch(backend, shape, kw):
    check(backend, lambda L, x: L.nn.functional.interpolate(x, **kw), randn(*shape), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "linear"])
def test_interpolate_float32_index_rules(backend, mode):
    """Many size pairs and factors in float32: PyTorch's float32 index arithmetic decides which neighbour is taken."""
    x = randn(1, 2, 7, dtype=np.float32)
    ac = {} if mode.startswith("nearest") else {"align_corners": False}
    for spec in [{"size": n} for n in (1, 3, 6, 13, 14, 21)] + [{"scale_factor": f} for f in (0.3, 1 / 3, 1.2, 2.9, 3.0)]:
        check(backend, lambda L, a, s=spec: L.nn.functional.interpolate(a, mode=mode, **s, **ac), x, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_nearest_gradient_is_the_forward_adjoint(backend):
    """A scale factor whose output size is n or 2n (here 1.1 and 2.1): PyTorch's forward reads floor(dst / 2.1) but
    its backward routes gradients by dst >> 1 (a shortcut the forward no longer takes); minitensor's gradient is the
    true adjoint of its (PyTorch-equal) forward: each output's gradient goes to the input it read."""
    for factor in (1.1, 2.1):
        check(backend, lambda L, x, f=factor: L.nn.functional.interpolate(x, scale_factor=f), randn(1, 2, 5), grad=False)
        x = mt.tensor(np.arange(5.0).reshape(1, 1, 5), backend=backend, requires_grad=True)
        out = F.interpolate(x, scale_factor=factor)
        g = RNG.standard_normal(out.shape)
        out.backward(mt.tensor(g, backend=backend))
        read = out.numpy().ravel().astype(int)  # which input each output copied
        np.testing.assert_allclose(x.grad.numpy().ravel(), np.bincount(read, g.ravel(), minlength=5))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_interpolate_non_contiguous_and_empty(backend):
    check(backend, lambda L, x: L.nn.functional.interpolate(x.permute(0, 3, 1, 2), size=(4, 3), mode="bilinear"),
          randn(1, 3, 2, 2), rtol=1e-10, atol=1e-12)
    check(backend, lambda L, x: L.nn.functional.interpolate(x, scale_factor=2, mode="bilinear"), randn(0, 2, 3, 3))
    check(backend, lambda L, x: L.nn.functional.interpolate(x, size=4), randn(0, 2, 3))
    x = mt.tensor(randn(1, 1, 3), requires_grad=True)
    out = F.interpolate(x, size=3)  # nothing to do: a new tensor all the same
    assert out is not x and out.requires_grad
    np.testing.assert_array_equal(out.numpy(), x.numpy())


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_upsample_modules(backend):
    for mine, theirs, shape in [
        (nn.Upsample(scale_factor=2), torch.nn.Upsample(scale_factor=2), (1, 2, 3, 2)),
        (nn.Upsample(size=5, mode="linear", align_corners=True), torch.nn.Upsample(size=5, mode="linear", align_corners=True),
         (2, 1, 3)),
        (nn.Upsample(scale_factor=(1.5, 2.0), mode="bilinear"), torch.nn.Upsample(scale_factor=(1.5, 2.0), mode="bilinear"),
         (1, 1, 3, 3)),
        (nn.UpsamplingNearest2d(size=(3, 5)), torch.nn.UpsamplingNearest2d(size=(3, 5)), (1, 2, 2, 2)),
        (nn.UpsamplingBilinear2d(scale_factor=2), torch.nn.UpsamplingBilinear2d(scale_factor=2), (1, 2, 3, 2)),
    ]:
        assert repr(mine) == repr(theirs)
        assert (mine.align_corners, mine.mode) == (theirs.align_corners, theirs.mode)
        check(backend, lambda L, x, m=mine, t=theirs: (m if L is mt else t)(x), randn(*shape), rtol=1e-10, atol=1e-12)


def test_interpolate_errors():
    x = mt.zeros(1, 2, 4, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=3, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match=r"spatial dimensions of \[4, 4\] and output size of \(3,\)"):
        F.interpolate(x, size=(3,))
    with pytest.raises(ValueError, match="scale_factor"):
        F.interpolate(x, scale_factor=(2, 2, 2))
    with pytest.raises(TypeError, match="size"):
        F.interpolate(x, size=(3, 2.5))
    with pytest.raises(ValueError, match="align_corners"):
        F.interpolate(x, size=3, align_corners=False)
    with pytest.raises(ValueError, match="recompute_scale_factor"):
        F.interpolate(x, size=3, recompute_scale_factor=True)
    with pytest.raises(ShapeError, match=r"greater than 0.*output size \(0, 0\)"):
        F.interpolate(x, scale_factor=0.2)
    with pytest.raises(NotImplementedError, match="bicubic"):
        F.interpolate(x, size=3, mode="bicubic")
    with pytest.raises(NotImplementedError, match="'cubic'"):
        F.interpolate(x, size=3, mode="cubic")
    with pytest.raises(NotImplementedError, match="bilinear mode needs 4-D"):
        F.interpolate(mt.zeros(1, 2, 4), size=3, mode="bilinear")
    with pytest.raises(NotImplementedError, match="linear mode needs 3-D"):
        F.interpolate(x, size=3, mode="linear")
    with pytest.raises(NotImplementedError, match=r"\(4, 4\)"):
        F.interpolate(mt.zeros(4, 4), size=3)
    with pytest.raises(NotImplementedError, match="antialias"):
        F.interpolate(x, size=3, mode="bilinear", antialias=True)
    with pytest.raises(ValueError, match="antialias"):
        F.interpolate(x, size=3, antialias=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tiny_every_backend(backend):
    check(backend, lambda L, x: L.nn.functional.pixel_shuffle(x, 2), randn(1, 4, 1, 2))
    check(backend, lambda L, x: L.nn.functional.pixel_unshuffle(x, 2), randn(1, 1, 2, 2))
    check(backend, lambda L, x: L.nn.functional.interpolate(x, size=(3, 2), mode="bilinear"), randn(1, 1, 2, 2))
    check(backend, lambda L, x: L.nn.functional.interpolate(x, scale_factor=1.5, mode="nearest"), randn(1, 1, 2))
