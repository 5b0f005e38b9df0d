"""The GPT step's fast paths against PyTorch: matmuls on permuted and strided operands (values, gradients and the
layouts they come out in), attention over a head split of one projection, and softmax's unit-stride backward."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest
import torch

import minitensor as mt
from minitensor.nn import functional as F
from minitensor.tensor_softmax import fused_softmax

RNG = np.random.default_rng(14)


def close(mine: Any, theirs: Any, tol: float) -> None:
    a = mine.numpy() if isinstance(mine, mt.Tensor) else np.asarray(mine)
    np.testing.assert_allclose(a, theirs.detach().numpy(), rtol=tol, atol=tol)


def tol_of(dtype: str) -> float:
    return 2e-5 if dtype == "float32" else 1e-12


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_head_split_attention_matches_torch(backend: str, dtype: str) -> None:
    """q, k, v as transposed head views of one (B, T, 3C) projection, causal attention, heads merged back: values
    and the projection's gradient; the output is stored (B, T, H, E), so merging the heads is a view."""
    B, T, H, E = (1, 3, 2, 2) if backend == "cuda" else (2, 5, 3, 4)  # (the simulator runs every thread in Python)
    C = H * E
    x = RNG.standard_normal((B, T, 3 * C)).astype(dtype)
    g = RNG.standard_normal((B, T, C)).astype(dtype)
    mx = mt.tensor(x, backend=backend, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    results = []
    for lib, xx in ((F, mx), (torch.nn.functional, tx)):
        q, k, v = (t.view(B, T, H, E).transpose(1, 2) for t in xx.split(C, dim=2))
        y = lib.scaled_dot_product_attention(q, k, v, is_causal=True)
        merged = y.transpose(1, 2)
        if lib is F:
            assert merged.is_contiguous()
        results.append(merged.contiguous().view(B, T, C))
    mine, theirs = results
    close(mine, theirs, tol_of(dtype))
    (mine * mt.tensor(g, backend=backend)).sum().backward()
    (theirs * torch.tensor(g)).sum().backward()
    close(mx.grad, tx.grad, tol_of(dtype))


@pytest.mark.parametrize("case", ["row_slices", "transposed_b", "transposed_a", "permuted_both"])
def test_matmul_strided_operands_match_torch(backend: str, case: str) -> None:
    """Batched matmul where an operand is a permuted or sliced view: values, both gradients (which come out in the
    operand's own dim order), and again after a second backward through the same graph."""
    if case == "row_slices":  # column slices of a wider row-major tensor, heads moved forward
        base_a, base_b = RNG.standard_normal((2, 4, 3, 10)), RNG.standard_normal((2, 3, 6, 5))

        def views(a: Any, b: Any) -> tuple[Any, Any]:
            return a[..., 1:7].permute(0, 2, 1, 3), b[..., :4]
    elif case == "transposed_b":  # k^T of a head split: a column-major block
        base_a, base_b = RNG.standard_normal((2, 3, 4, 6)), RNG.standard_normal((2, 5, 3, 6))

        def views(a: Any, b: Any) -> tuple[Any, Any]:
            return a, b.permute(0, 2, 3, 1)
    elif case == "transposed_a":
        base_a, base_b = RNG.standard_normal((3, 6, 4)), RNG.standard_normal((3, 6, 5))

        def views(a: Any, b: Any) -> tuple[Any, Any]:
            return a.transpose(1, 2), b
    else:
        base_a, base_b = RNG.standard_normal((4, 2, 5)), RNG.standard_normal((3, 2, 5))

        def views(a: Any, b: Any) -> tuple[Any, Any]:
            return a.permute(1, 0, 2), b.permute(1, 2, 0)
    ma, mb = (mt.tensor(x, backend=backend, requires_grad=True) for x in (base_a, base_b))
    ta, tb = (torch.tensor(x, requires_grad=True) for x in (base_a, base_b))
    mine, theirs = views(ma, mb)[0] @ views(ma, mb)[1], views(ta, tb)[0] @ views(ta, tb)[1]
    close(mine, theirs, 1e-12)
    g = RNG.standard_normal(theirs.shape)
    (mine * mt.tensor(g, backend=backend)).sum().backward()
    (theirs * torch.tensor(g)).sum().backward()
    close(ma.grad, ta.grad, 1e-12)
    close(mb.grad, tb.grad, 1e-12)


def test_matmul_gradient_layout_follows_operand() -> None:
    """The raw backward stores a permuted operand's gradient in the operand's dim order (no copy to undo the view),
    column-major ones included, and a Linear weight's gradient contiguous."""
    a = mt.tensor(RNG.standard_normal((2, 5, 3, 4)), requires_grad=True)  # (B, T, H, E)
    b = mt.tensor(RNG.standard_normal((2, 5, 3, 4)), requires_grad=True)
    q, k = a.transpose(1, 2), b.transpose(1, 2)  # (B, H, T, E) views
    captured: dict[str, Any] = {}
    q.register_hook(lambda grad: captured.setdefault("q", grad))
    kt = k.transpose(-2, -1)
    kt.register_hook(lambda grad: captured.setdefault("kt", grad))
    (q @ kt).sum().backward()
    assert captured["q"].transpose(1, 2).is_contiguous()
    assert captured["kt"].transpose(-2, -1).transpose(1, 2).is_contiguous()
    np.testing.assert_allclose(a.grad.numpy(), np.broadcast_to(b.numpy().sum(1, keepdims=True), a.shape), rtol=1e-12)
    w = mt.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    x = mt.tensor(RNG.standard_normal((2, 5, 4)))
    (x @ w.t()).sum().backward()
    assert w.grad is not None and w.grad.is_contiguous()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("scale", [1.0, 0.25])
def test_softmax_backward_unit_rows_match_torch(dtype: str, scale: float) -> None:
    """fast's one-pass softmax gradient over unit-stride rows (inputs past the small-input kernels), with the scale
    folded into the kernel (attention's) or not."""
    x = RNG.standard_normal((2, 4, 32, 64)).astype(dtype)
    g = RNG.standard_normal(x.shape).astype(dtype)
    mx, tx = mt.tensor(x, backend="fast", requires_grad=True), torch.tensor(x, requires_grad=True)
    y = fused_softmax(mx, -1, scale=scale)
    (y * mt.tensor(g, backend="fast")).sum().backward()
    ty = torch.softmax(tx * scale, -1)
    (ty * torch.tensor(g)).sum().backward()
    close(y, ty, tol_of(dtype))
    close(mx.grad, tx.grad, tol_of(dtype))


@pytest.mark.parametrize("copy_w", [False, True], ids=["w-view", "w-copy"])
@pytest.mark.parametrize("bias", [True, False])
def test_batched_linear_matches_torch(backend: str, bias: bool, copy_w: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A (B, T, in) input runs as one Addmm on its (B T, in) view (in-place bias add, one-pass bias gradient):
    values and the input, weight and bias gradients, as torch's linear; on BLAS backends both with W's transposed
    view and with the contiguous copy of W^T that many rows get (WT_COPY_MIN_ROWS lowered to reach it here)."""
    monkeypatch.setattr(importlib.import_module("minitensor.nn.linear"), "WT_COPY_MIN_ROWS", 1 if copy_w else 1 << 30)
    x, w, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((5, 4)), RNG.standard_normal(5)
    mine = [mt.tensor(a, backend=backend, requires_grad=True) for a in ((x, w, b) if bias else (x, w))]
    theirs = [torch.tensor(a, requires_grad=True) for a in ((x, w, b) if bias else (x, w))]
    got, want = F.linear(*mine), torch.nn.functional.linear(*theirs)
    assert got.shape == (2, 3, 5)
    close(got, want, 1e-12)
    g = RNG.standard_normal((2, 3, 5))
    got.backward(mt.tensor(g, backend=backend))
    want.backward(torch.tensor(g))
    for m, t in zip(mine, theirs):
        close(m.grad, t.grad, 1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_norm_gradients_match_torch(dtype: str) -> None:
    """fast's layer_norm backward (per-chunk weight and bias partial sums, vectorised rows): input, weight and bias
    gradients against PyTorch, over enough rows for several chunks."""
    x = RNG.standard_normal((4, 48, 64)).astype(dtype)
    w, b = (RNG.standard_normal(64).astype(dtype) for _ in range(2))
    g = RNG.standard_normal(x.shape).astype(dtype)
    mine = [mt.tensor(a, backend="fast", requires_grad=True) for a in (x, w, b)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
    got = F.layer_norm(mine[0], (64,), mine[1], mine[2])
    want = torch.nn.functional.layer_norm(theirs[0], (64,), theirs[1], theirs[2])
    close(got, want, tol_of(dtype) * 10)
    got.backward(mt.tensor(g, backend="fast"))
    want.backward(torch.tensor(g))
    for m, t in zip(mine, theirs):
        close(m.grad, t.grad, tol_of(dtype) * 10)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_split_and_narrow_gradients_match_torch(backend: str, dim: int) -> None:
    """Gradients through split pieces used unevenly (the GPT's q, k, v), a middle narrow and an int index, and a
    second derivative through the gradient, as in PyTorch."""
    x = RNG.standard_normal((4, 5, 6))
    mx, tx = mt.tensor(x, backend=backend, requires_grad=True), torch.tensor(x, requires_grad=True)
    results = []
    for t in (mx, tx):
        a, b, c = t.split([1, 2, t.shape[dim] - 3], dim=dim)
        middle = t.narrow(dim, 1, 2)
        results.append((a * 2.0).sum() + (b * b).sum() + c.tanh().sum() + (middle * 3.0).sum() + t[1].sum())
    mine, theirs = results
    close(mine, theirs, 1e-12)
    (gm,) = mt.autograd.grad(mine, mx, create_graph=True)
    (gt,) = torch.autograd.grad(theirs, tx, create_graph=True)
    close(gm, gt, 1e-12)
    (gm * gm).sum().backward()
    (gt * gt).sum().backward()
    close(mx.grad, tx.grad, 1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kwargs", [{"lr": 1e-2, "weight_decay": 0.1}, {"lr": 0.05, "betas": (0.3, 0.0)},
                                    {"lr": 1e-2, "weight_decay": 0.0}], ids=["decay", "large-lerp-beta2-0", "no-decay"])
def test_fused_adamw_gives_the_composed_bits(dtype: str, kwargs: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """fast's one-pass AdamW update: bit for bit the element-wise calls it replaces (parameter and both averages
    over several steps), and within float tolerance of torch.optim.AdamW."""
    import minitensor.optim.adam as adam_module

    init = RNG.standard_normal((40, 7)).astype(dtype)
    grads = [RNG.standard_normal(init.shape).astype(dtype) for _ in range(4)]
    fusable = adam_module._fusable
    results = []
    for fused in (True, False):
        monkeypatch.setattr(adam_module, "_fusable", fusable if fused else lambda *args: False)
        p = mt.tensor(init, backend="fast", requires_grad=True)
        opt = mt.optim.AdamW([p], **kwargs)
        for g in grads:
            p.grad = mt.tensor(g, backend="fast")
            opt.step()
        assert fusable(p, p.grad, opt.state[p], opt.param_groups[0])
        results.append([p.detach().numpy(), opt.state[p]["exp_avg"].numpy(), opt.state[p]["exp_avg_sq"].numpy()])
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    tp = torch.tensor(init, requires_grad=True)
    topt = torch.optim.AdamW([tp], **kwargs)
    for g in grads:
        tp.grad = torch.tensor(g)
        topt.step()
    close(results[0][0], tp, tol_of(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_rows_match_torch(backend: str, dtype: str) -> None:
    """Embedding lookups copy whole rows (fast: one row copy per index) and the gradient adds rows back in index
    order, repeated indices included; values and weight gradients as torch's, and index_select of rows too."""
    weight = RNG.standard_normal((7, 5)).astype(dtype)
    idx = np.array([[3, 0, 3], [6, 3, 1]])
    mw, tw = mt.tensor(weight, backend=backend, requires_grad=True), torch.tensor(weight, requires_grad=True)
    got = F.embedding(mt.tensor(idx, backend=backend), mw)
    want = torch.nn.functional.embedding(torch.tensor(idx), tw)
    close(got, want, 0.0)
    g = RNG.standard_normal(want.shape).astype(dtype)
    got.backward(mt.tensor(g, backend=backend))
    want.backward(torch.tensor(g))
    close(mw.grad, tw.grad, tol_of(dtype))
    rows = mt.tensor(np.array([2, 2, 5]), backend=backend)
    close(mw.index_select(0, rows), tw.index_select(0, torch.tensor([2, 2, 5])), 0.0)


def test_embedding_second_order_matches_torch(backend: str) -> None:
    """The row gather's gradient (row adds) is differentiable again: d/dw of sum(grad_w^2) through embedding."""
    weight = RNG.standard_normal((6, 3))
    idx = np.array([4, 1, 4, 0])
    scale = RNG.standard_normal((4, 3))
    mw, tw = mt.tensor(weight, backend=backend, requires_grad=True), torch.tensor(weight, requires_grad=True)
    results = []
    for lib, w, tensor in ((F, mw, lambda a: mt.tensor(a, backend=backend)), (torch.nn.functional, tw, torch.tensor)):
        out = (lib.embedding(tensor(idx), w) * tensor(scale)).tanh().sum()
        (gw,) = (mt.autograd if lib is F else torch.autograd).grad(out, w, create_graph=True)
        (gw * gw).sum().backward()
        results.append(w.grad)
    close(results[0], results[1], 1e-12)
