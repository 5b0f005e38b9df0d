"""nn.functional: forward against NumPy references, backward against central differences (float64)."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor.errors import ShapeError
from minitensor.nn import functional as F

RNG = np.random.default_rng(0)


def check_grad(fn, arrays, backend, directions=2, eps=1e-6, tol=1e-6):
    """Compare autodiff with central differences of fn along random directions, for each input."""
    rng = np.random.default_rng(1)
    if backend == "cuda":  # the CUDA simulator is slow: one direction is still a full check of the chain
        directions = 1
    tensors = [mt.tensor(a, backend=backend, dtype="float64", requires_grad=True) for a in arrays]
    out = fn(*tensors)
    weights = rng.standard_normal(out.shape)
    (out * mt.tensor(weights, backend=backend)).sum().backward()

    def value(args):
        return float((fn(*[mt.tensor(a, backend=backend, dtype="float64") for a in args]).to_numpy() * weights).sum())

    for k, a in enumerate(arrays):
        grad = tensors[k].grad.to_numpy()
        assert grad.shape == a.shape
        for _ in range(directions):
            v = rng.standard_normal(a.shape)
            plus = [x + eps * v if i == k else x for i, x in enumerate(arrays)]
            minus = [x - eps * v if i == k else x for i, x in enumerate(arrays)]
            numeric = (value(plus) - value(minus)) / (2 * eps)
            analytic = float((grad * v).sum())
            assert abs(numeric - analytic) <= tol * max(1.0, abs(numeric)), (k, numeric, analytic)


def ref_conv2d(x, w, b, stride, padding):
    (sh, sw), (ph, pw) = stride, padding
    x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    B, C, H, W = x.shape
    out_c, _, kh, kw = w.shape
    oh, ow = (H - kh) // sh + 1, (W - kw) // sw + 1
    out = np.zeros((B, out_c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * sh : i * sh + kh, j * sw : j * sw + kw]
            out[:, :, i, j] = np.einsum("bchw,ochw->bo", patch, w)
    return out + (0 if b is None else b[None, :, None, None])


def ref_pool(x, k, s, fn):
    B, C, H, W = x.shape
    oh, ow = (H - k[0]) // s[0] + 1, (W - k[1]) // s[1] + 1
    out = np.zeros((B, C, oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = fn(x[:, :, i * s[0] : i * s[0] + k[0], j * s[1] : j * s[1] + k[1]], axis=(2, 3))
    return out


# softmax family, dropout and activations: tests/test_nn_activation.py and tests/test_nn_norm.py (against torch)


def test_flatten(backend):
    t = mt.tensor(np.arange(24.0).reshape(2, 3, 4), backend=backend)
    assert mt.nn.Flatten()(t).shape == (2, 12)
    assert mt.nn.Flatten(0)(t).shape == (24,)
    expected = np.arange(24.0).reshape(2, 3, 4).transpose(0, 2, 1).reshape(2, 12)
    np.testing.assert_array_equal(mt.nn.Flatten()(t.permute(0, 2, 1)).to_numpy(), expected)
    assert mt.nn.Unflatten(1, (3, 4))(mt.nn.Flatten()(t)).shape == (2, 3, 4)


# --- convolution and pooling ---


CONV2D_CASES = [((1, 1), (0, 0)), ((2, 1), (1, 0)), ((2, 2), (1, 2))]


@pytest.mark.parametrize("stride,padding", CONV2D_CASES)
def test_conv2d_forward(backend, stride, padding):
    x, w, b = RNG.standard_normal((2, 2, 5, 6)), RNG.standard_normal((3, 2, 3, 2)), RNG.standard_normal(3)
    out = F.conv2d(mt.tensor(x, backend=backend), mt.tensor(w, backend=backend), mt.tensor(b, backend=backend), stride, padding)
    np.testing.assert_allclose(out.to_numpy(), ref_conv2d(x, w, b, stride, padding), rtol=1e-10, atol=1e-12)
    no_bias = F.conv2d(mt.tensor(x, backend=backend), mt.tensor(w, backend=backend), None, stride, padding)
    np.testing.assert_allclose(no_bias.to_numpy(), ref_conv2d(x, w, None, stride, padding), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("stride,padding", [((1, 1), (1, 1)), ((2, 1), (0, 1))])
def test_conv2d_grad(backend, stride, padding):
    if backend == "cuda" and stride == (2, 1):
        pytest.skip("one strided-padded case is enough on the slow CUDA simulator")
    x, w, b = RNG.standard_normal((1, 2, 4, 4)), RNG.standard_normal((2, 2, 2, 3)), RNG.standard_normal(2)
    check_grad(lambda a, c, d: F.conv2d(a, c, d, stride, padding), [x, w, b], backend)


@pytest.mark.parametrize("stride,padding", [(1, 0), (2, 1)])
def test_conv1d(backend, stride, padding):
    x, w, b = RNG.standard_normal((2, 2, 7)), RNG.standard_normal((3, 2, 3)), RNG.standard_normal(3)
    out = F.conv1d(mt.tensor(x, backend=backend), mt.tensor(w, backend=backend), mt.tensor(b, backend=backend), stride, padding)
    expected = ref_conv2d(x[:, :, None, :], w[:, :, None, :], b, (1, stride), (0, padding))[:, :, 0, :]
    np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-10, atol=1e-12)
    check_grad(lambda a, c, d: F.conv1d(a, c, d, stride, padding), [x[:1], w, b], backend)


def test_conv_float32_and_strided_input(backend):
    x, w = RNG.standard_normal((1, 5, 5, 2)), RNG.standard_normal((2, 2, 3, 3))
    t = mt.tensor(x, backend=backend, dtype="float32").permute(0, 3, 1, 2)  # a non-contiguous input
    out = F.conv2d(t, mt.tensor(w, backend=backend, dtype="float32"), padding=1)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.to_numpy(), ref_conv2d(x.transpose(0, 3, 1, 2), w, None, (1, 1), (1, 1)), rtol=1e-4, atol=1e-5)


def test_conv_errors(backend):
    x = mt.zeros(1, 2, 4, 4, backend=backend)
    with pytest.raises(ShapeError, match="channels"):
        F.conv2d(x, mt.zeros(1, 3, 2, 2, backend=backend))
    with pytest.raises(ShapeError, match="larger"):
        F.conv2d(x, mt.zeros(1, 2, 5, 5, backend=backend))
    with pytest.raises(ShapeError):
        F.conv2d(mt.zeros(2, 4, 4, backend=backend), mt.zeros(1, 2, 2, 2, backend=backend))
    with pytest.raises(ShapeError, match="bias"):
        F.conv2d(x, mt.zeros(1, 2, 2, 2, backend=backend), mt.zeros(2, backend=backend))


@pytest.mark.parametrize("kernel,stride", [((2, 2), None), ((3, 2), (1, 2))])
def test_pooling(backend, kernel, stride):
    x = RNG.standard_normal((2, 2, 5, 4))
    t = mt.tensor(x, backend=backend)
    s = kernel if stride is None else stride
    np.testing.assert_allclose(F.max_pool2d(t, kernel, stride).to_numpy(), ref_pool(x, kernel, s, np.max))
    np.testing.assert_allclose(F.avg_pool2d(t, kernel, stride).to_numpy(), ref_pool(x, kernel, s, np.mean), rtol=1e-12)
    if backend != "cuda" or stride is None:  # the CUDA simulator is slow
        check_grad(lambda a: F.max_pool2d(a, kernel, stride), [x[:1]], backend)
        check_grad(lambda a: F.avg_pool2d(a, kernel, stride), [x[:1]], backend)


def test_avgpool_padding(backend):
    x = RNG.standard_normal((1, 1, 3, 3))
    out = F.avg_pool2d(mt.tensor(x, backend=backend), 2, 2, padding=1).to_numpy()
    np.testing.assert_allclose(out, ref_pool(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), (2, 2), (2, 2), np.mean))


def test_pad_grad(backend):
    check_grad(lambda a: F.pad(a, ((1, 0), (2, 1))), [RNG.standard_normal((2, 3, 2))], backend)


def test_against_torch_when_available():
    torch = pytest.importorskip("torch")
    x, w, b = RNG.standard_normal((2, 2, 6, 5)), RNG.standard_normal((3, 2, 3, 3)), RNG.standard_normal(3)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    mx, mw, mb = (mt.tensor(a, requires_grad=True) for a in (x, w, b))
    t_out = torch.nn.functional.max_pool2d(torch.nn.functional.conv2d(tx, tw, tb, stride=(1, 2), padding=1), 2)
    m_out = F.max_pool2d(F.conv2d(mx, mw, mb, stride=(1, 2), padding=1), 2)
    np.testing.assert_allclose(m_out.to_numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    weights = RNG.standard_normal(t_out.shape)
    (t_out * torch.tensor(weights)).sum().backward()
    (m_out * mt.tensor(weights)).sum().backward()
    for mine, theirs in ((mx, tx), (mw, tw), (mb, tb)):
        np.testing.assert_allclose(mine.grad.to_numpy(), theirs.grad.numpy(), rtol=1e-8, atol=1e-10)
    logits, target = RNG.standard_normal((4, 5)) * 10, np.array([0, 4, 2, 2])
    expected = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(target)).item()
    assert F.cross_entropy(mt.tensor(logits), target).item() == pytest.approx(expected, rel=1e-10)
