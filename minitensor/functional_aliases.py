"""The rest of the top-level ``mt.`` namespace that PyTorch has: the ``nn.functional`` ops torch also exposes as
``torch.conv2d``, ``torch.layer_norm``, ... (with the top-level signatures, which sometimes differ from
``F``'s: ``torch.dropout(input, p, train)``, ``torch.embedding(weight, indices)``, ``torch.kl_div``'s integer
``reduction``, also of ``cosine_embedding_loss hinge_embedding_loss margin_ranking_loss triplet_margin_loss``), the
recurrent cell steps ``rnn_tanh_cell rnn_relu_cell lstm_cell gru_cell`` (nn.RNNCell/LSTMCell/GRUCell's updates with
explicit weights), ``constant_pad_nd``, the in-place forms ``mt.exp_(x)``, ``mt.zero_(x)`` ..., ``mt.detach``,
``mt.fill``, ``mt.vmap`` (``mt.func.vmap``), and the functions of
:mod:`~minitensor.type_info`, :mod:`~minitensor.windows`, :mod:`~minitensor.tensor_put` and
:mod:`~minitensor.printing`.

Imported at the very end of ``minitensor/__init__.py`` (after ``nn``). ``F`` functions another part of the code base
may not define (``prelu``, ``rrelu``, ``instance_norm``, ``adaptive_max_pool1d``, ...) are exported only when
``minitensor.nn.functional`` has them at import time. Each tensor-first function gets PyTorch's TypeError for a
non-tensor input (:func:`minitensor.function_forms.tensor_first`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from . import printing, tensor_put, type_info, windows
from .creation import rand
from .errors import ShapeError
from .func import vmap
from .function_forms import TENSOR_FIRST, export, tensor_first
from .nn import functional as F
from .nn.recurrent_cells import Step, gru_step, lstm_step, rnn_relu_step, rnn_tanh_step
from .tensor import Tensor

# --- F functions whose top-level signature is F's ---

SAME_AS_F = (
    "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "bilinear", "pixel_shuffle", "pixel_unshuffle",
    "cosine_similarity", "pairwise_distance", "pdist", "avg_pool1d", "adaptive_avg_pool1d", "channel_shuffle", "conv3d",
    "conv_transpose3d", "rms_norm",
)  # fmt: skip

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction: int | str) -> str:
    """torch's integer reduction code (0 none, 1 mean, 2 sum) as F's name; names pass through."""
    if isinstance(reduction, str):
        return reduction
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction!r}")
    return _REDUCTIONS[reduction]


# --- F functions with torch's top-level signatures ---


def layer_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-05, cudnn_enable: bool = True) -> Tensor:
    """Layer normalization over the trailing ``normalized_shape`` dims (``cudnn_enable`` is ignored)."""
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,  # noqa: A002
               eps: float = 1e-05, cudnn_enabled: bool = True) -> Tensor:
    """Group normalization of the channels (dim 1) in ``num_groups`` groups (``cudnn_enabled`` is ignored)."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,  # noqa: A002
               running_var: Tensor | None, training: bool, momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """Batch normalization of the channels (dim 1); ``training`` uses and updates the batch statistics."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,  # noqa: A002
                  running_var: Tensor | None, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    """Instance normalization of each (sample, channel) plane."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at ``indices``; rows at ``padding_idx`` (a negative value: none) get no gradient."""
    return F.embedding(indices, weight, None if padding_idx < 0 else padding_idx, None, 2.0, scale_grad_by_freq, sparse)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p) when ``train``; else ``input``."""
    return F.dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """In-place :func:`dropout`."""
    return F.dropout(input, p, train, inplace=True)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """Zero whole channels (dim 1 of an (N, C, *) input) with probability ``p``, scaling the rest by 1/(1-p)."""
    if input.dims < 2:
        raise ShapeError(f"feature_dropout: needs an (N, C, *) input of at least 2 dims, got shape {input.shape}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    noise = (rand(*input.shape[:2], *([1] * (input.dims - 2)), backend=input.backend) >= p).to(input.dtype)
    return input * (noise * (1.0 / (1.0 - p)))


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """In-place :func:`feature_dropout`."""
    result = feature_dropout(input, p, train)
    return input if result is input else input.copy_(result)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """Alpha dropout (keeps SELU activations' mean and variance) when ``train``."""
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """In-place :func:`alpha_dropout`."""
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """Alpha dropout of whole channels when ``train``."""
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    """In-place :func:`feature_alpha_dropout`."""
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def _stride(stride: Any) -> Any:
    """torch's empty default stride (= kernel_size) as F's None."""
    return None if stride is None or (isinstance(stride, (tuple, list)) and not stride) else stride


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False) -> Tensor:
    """Max over sliding windows of the last dim (no indices; ``F.max_pool1d`` returns them)."""
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False) -> Tensor:
    """Max over sliding windows of the last two dims (no indices; ``F.max_pool2d`` returns them)."""
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:  # noqa: A002
    """(values, indices) of the max over ``output_size`` adaptive windows of the last dim."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """x where x > threshold, else ``value``."""
    return F.threshold(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """In-place :func:`threshold`."""
    return F.threshold(input, threshold, value, inplace=True)


def selu(input: Tensor) -> Tensor:  # noqa: A002
    """scale * elu(x, alpha) with SELU's fixed constants."""
    return F.selu(input)


def selu_(input: Tensor) -> Tensor:  # noqa: A002
    """In-place :func:`selu`."""
    return F.selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    return F.celu(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """In-place :func:`celu`."""
    return F.celu(input, alpha, inplace=True)


def _rrelu(input: Tensor, lower: float, upper: float, training: bool, generator: Any, inplace: bool) -> Tensor:  # noqa: A002
    fn: Any = F.rrelu
    if generator is not None:
        if "generator" not in inspect.signature(fn).parameters:
            raise NotImplementedError("rrelu: generator= is not supported (the slopes come from the global generator)")
        return fn(input, lower, upper, training, inplace, generator=generator)
    return fn(input, lower, upper, training, inplace)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
          generator: Any = None) -> Tensor:
    """Randomized leaky ReLU: slopes drawn from U(lower, upper) when ``training``, else their mean."""
    return _rrelu(input, lower, upper, training, generator, False)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
           generator: Any = None) -> Tensor:
    """In-place :func:`rrelu`."""
    return _rrelu(input, lower, upper, training, generator, True)


def kl_div(input: Tensor, target: Tensor, reduction: int | str = 0, *, log_target: bool = False) -> Tensor:  # noqa: A002
    """Kullback-Leibler divergence of log-probabilities ``input`` from ``target``; ``reduction`` 0 none (what
    ``torch.kl_div`` 2.13 does when it is omitted, although its schema says 1), 1 mean (over every element), 2 sum."""
    return F.kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                                     pos_weight: Tensor | None = None, reduction: int | str = 0) -> Tensor:
    """Binary cross entropy of sigmoid(``input``) against ``target``; ``reduction`` 0 none (torch 2.13's behaviour
    when it is omitted, although its schema says 1), 1 mean, 2 sum."""
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction), pos_weight=pos_weight)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int | str = 0) -> Tensor:
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1; ``reduction`` 0 none (torch
    2.13's behaviour when it is omitted, although its schema says 1), 1 mean, 2 sum."""
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int | str = 0) -> Tensor:  # noqa: A002
    """input where target is 1, max(0, margin - input) where it is -1; ``reduction`` 0 none (as kl_div), 1 mean, 2 sum."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int | str = 0) -> Tensor:
    """max(0, -target * (input1 - input2) + margin); ``reduction`` 0 none (as kl_div), 1 mean, 2 sum."""
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2.0,
                        eps: float = 1e-06, swap: bool = False, reduction: int | str = 0) -> Tensor:
    """max(d(anchor, positive) - d(anchor, negative) + margin, 0) with the p-norm distance; ``reduction`` 0 none
    (as kl_div), 1 mean, 2 sum."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,  # noqa: A002
                     reduction: int | str) -> Tensor:
    """The Poisson negative log-likelihood of ``target`` (every argument required, as torch's top-level form)."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:  # noqa: A002
    """``input`` padded with ``value``: ``pad`` gives (before, after) counts for the last dims, last dim first
    (negative counts crop)."""
    return F.pad(input, tuple(pad), mode="constant", value=value)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False) -> Tensor:
    """Max over sliding windows of the last three dims (no indices; ``F.max_pool3d`` returns them)."""
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,  # noqa: A002
                            dilation: Any = 1, ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """(values, indices) of the max over sliding windows of the last dim."""
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode, return_indices=True)


def _cell(step: Step, input: Tensor, hx: tuple[Tensor, ...], w_ih: Tensor, w_hh: Tensor,  # noqa: A002
          b_ih: Tensor | None, b_hh: Tensor | None) -> tuple[Tensor, ...]:
    return step(F.linear(input, w_ih, b_ih), hx, w_hh, b_hh)


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,  # noqa: A002
                  b_hh: Tensor | None = None) -> Tensor:
    """One Elman RNN step: tanh(input W_ih^T + b_ih + hx W_hh^T + b_hh)."""
    return _cell(rnn_tanh_step, input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,  # noqa: A002
                  b_hh: Tensor | None = None) -> Tensor:
    """One Elman RNN step with relu: relu(input W_ih^T + b_ih + hx W_hh^T + b_hh)."""
    return _cell(rnn_relu_step, input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,  # noqa: A002
              b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """One LSTM step from ``hx`` = (h, c) (gates i, f, g, o, as nn.LSTMCell): the new (h, c)."""
    if len(hx) != 2:
        raise ValueError(f"lstm_cell: hx must be (h, c), got {len(hx)} tensors")
    h, c = _cell(lstm_step, input, tuple(hx), w_ih, w_hh, b_ih, b_hh)
    return h, c


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,  # noqa: A002
             b_hh: Tensor | None = None) -> Tensor:
    """One GRU step (gates r, z, n, as nn.GRUCell): the new hidden state."""
    return _cell(gru_step, input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


def detach(input: Tensor) -> Tensor:  # noqa: A002
    """``input.detach()``: the same storage without history (a new leaf that does not require grad)."""
    return input.detach()


def fill(input: Tensor, value: Any) -> Tensor:  # noqa: A002
    """A copy of ``input`` (its shape, dtype and backend) filled with ``value``, a number or a 0-d tensor (whose
    gradient is the sum of the incoming one; input's is zero)."""
    return input.clone().fill_(value)


NEEDS_F: dict[str, tuple[str, ...]] = {
    "instance_norm": ("instance_norm",), "alpha_dropout": ("alpha_dropout",), "alpha_dropout_": ("alpha_dropout",),
    "feature_alpha_dropout": ("feature_alpha_dropout",), "feature_alpha_dropout_": ("feature_alpha_dropout",),
    "adaptive_max_pool1d": ("adaptive_max_pool1d",), "threshold": ("threshold",), "threshold_": ("threshold",),
    "rrelu": ("rrelu",), "rrelu_": ("rrelu",),
}  # fmt: skip
"""Wrappers exported only when ``nn.functional`` has the functions they call."""

WRAPPERS = (
    "layer_norm", "group_norm", "batch_norm", "instance_norm", "embedding", "dropout", "dropout_", "feature_dropout",
    "feature_dropout_", "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
    "max_pool1d", "max_pool2d", "adaptive_max_pool1d", "threshold", "threshold_", "selu", "selu_", "celu", "celu_",
    "rrelu", "rrelu_", "kl_div", "binary_cross_entropy_with_logits", "detach", "fill", "cosine_embedding_loss",
    "hinge_embedding_loss", "margin_ranking_loss", "triplet_margin_loss", "poisson_nll_loss", "constant_pad_nd",
    "max_pool3d", "max_pool1d_with_indices", "rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell",
)  # fmt: skip

# --- in-place forms of Tensor methods ---

INPLACE_FORMS = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
    "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_",
    "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_",
    "gcd_", "i0_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_",
    "rad2deg_", "reciprocal_", "relu_", "resize_as_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_",
    "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_",
)  # fmt: skip
"""The Tensor methods ``name_`` that PyTorch also has as ``torch.name_(input, ...)``."""


def _inplace_form(name: str) -> Callable[..., Any]:
    def form(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:  # noqa: A002
        return getattr(input, name)(*args, **kwargs)

    form.__name__ = form.__qualname__ = name
    form.__doc__ = f"``input.{name}(...)``: in place, returning ``input``."
    return form


# --- the exported namespace ---


def _namespace() -> dict[str, Any]:
    """Every name this module exports, the tensor-first ones wrapped by ``tensor_first``."""
    out: dict[str, Any] = {}
    here = globals()
    functions: dict[str, Callable[..., Any]] = {}
    for name in SAME_AS_F:
        if hasattr(F, name):
            functions[name] = getattr(F, name)
    for name in WRAPPERS:
        if all(hasattr(F, needed) for needed in NEEDS_F.get(name, ())):
            functions[name] = here[name]
    for name in INPLACE_FORMS:
        functions[name] = _inplace_form(name)
    for name, fn in functions.items():
        first = next(iter(inspect.signature(fn).parameters))
        out[name] = tensor_first(fn, name) if first in TENSOR_FIRST else fn
    out["vmap"] = vmap
    export(out, (tensor_put, type_info))
    for module in (windows, printing):
        out.update({name: getattr(module, name) for name in module.__all__})
    return out


_EXPORTS = _namespace()
__all__ = sorted(_EXPORTS)  # pyright: ignore[reportUnsupportedDunderAll]
globals().update(_EXPORTS)
