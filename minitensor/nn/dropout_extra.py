"""Channel-wise and alpha dropout: ``F.dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout`` and
``nn.Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout`` (torch's names, signatures, reprs, accepted
input ranks and warnings).

As in PyTorch (``_dropout_impl``): nothing happens when not training, for p = 0 or an empty input (``input`` itself
is returned); p = 1 multiplies by 0. Otherwise a keep mask ``keep ~ Bernoulli(1 - p)`` is drawn from the shared
generator (:mod:`minitensor.random_state`, seed with ``manual_seed``) -- one draw per element, or per (sample,
channel) for the feature ("channel-wise") forms, broadcast over the remaining dims -- and

* dropout: ``x * keep / (1 - p)``;
* alpha dropout (for SELU networks): ``x * keep * a + b`` with ``a = 1 / sqrt((alpha^2 p + 1)(1 - p))``,
  ``b = (keep - 1) alpha a + alpha a p`` and ``alpha = 1.7580993408473766`` (SELU's scale * alpha), which keeps
  zero mean and unit variance. The gradient is ``keep / (1 - p)`` resp. ``keep * a``.

``inplace`` writes the result into ``input`` with ``copy_`` and returns ``input``.
"""

from __future__ import annotations

import math
import warnings

from ..creation import rand
from ..dtypes import get_default_dtype
from ..errors import ShapeError
from ..tensor import Tensor
from .common import tensor_args
from .dropout import _check_p, _DropoutNd

__all__ = [
    "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
]

_ALPHA = 1.7580993408473766  # SELU scale * alpha: -_ALPHA is SELU's limit at -inf


def _dropout_impl(input: Tensor, p: float, training: bool, inplace: bool, feature: bool,  # noqa: A002
                  alpha: bool) -> Tensor:
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        result = input * 0.0
    else:
        if feature and input.dims < 2:
            raise ShapeError(f"feature dropout needs at least 2 dims (N, C, *) in the input, got shape {input.shape}")
        shape = (*input.shape[:2], *(1 for _ in input.shape[2:])) if feature else input.shape
        dtype = input.dtype if input.dtype.kind == "f" else get_default_dtype()
        keep = (rand(*shape, dtype=dtype, backend=input.backend) >= p).to(dtype)
        if alpha:
            a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1.0) * (1.0 - p))
            result = input * (keep * a) + ((keep - 1.0) * (_ALPHA * a) + _ALPHA * a * p)
        else:
            result = input * (keep * (1.0 / (1.0 - p)))
    return input.copy_(result) if inplace else result


def _unbatched(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:  # noqa: A002
    """Feature dropout of ``input`` seen with a batch dim of 1 in front (torch's unbatched dropout1d/3d)."""
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    result = _dropout_impl(input.unsqueeze(0), p, True, False, True, False).squeeze(0)
    return input.copy_(result) if inplace else result


def _warn_rank(name: str, input: Tensor, spatial: int) -> None:  # noqa: A002
    warnings.warn(
        f"{name}: Received a {input.dims}-D input to {name}, which is deprecated and will result in an error in a "
        "future release. To retain the behavior and silence this warning, please use dropout instead. Note that "
        f"{name} exists to provide channel-wise dropout on inputs with {spatial} spatial dimensions, a channel "
        f"dimension, and an optional batch dimension (i.e. {spatial + 1}D or {spatial + 2}D inputs).", stacklevel=4)


@tensor_args("input")
def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of an (N, C, L) or unbatched (C, L) input with probability ``p`` (scaling the rest by
    1/(1-p)); other ranks are a ShapeError."""
    _check_p(p)
    if input.dims not in (2, 3):
        raise ShapeError(f"dropout1d: expected a 2-D (C, L) or 3-D (N, C, L) input, got shape {input.shape}")
    if input.dims == 2:
        return _unbatched(input, p, training, inplace)
    return _dropout_impl(input, p, training, inplace, True, False)


@tensor_args("input")
def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels (dim 1) of an (N, C, H, W) input with probability ``p``. As PyTorch: other ranks warn
    (a 2-D input drops single elements of (N, C); fewer dims fail when a mask is drawn) and a 3-D input is taken as
    (N, C, L) -- channel-wise 1-D dropout -- with a warning, not as unbatched (C, H, W)."""
    _check_p(p)
    if input.dims not in (3, 4):
        _warn_rank("dropout2d", input, 2)
    if input.dims == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=3)
    return _dropout_impl(input, p, training, inplace, True, False)


@tensor_args("input")
def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of an (N, C, D, H, W) or unbatched (C, D, H, W) input with probability ``p``. As
    PyTorch: other ranks warn and are taken as unbatched (a batch dim of 1 is put in front)."""
    _check_p(p)
    if input.dims not in (4, 5):
        _warn_rank("dropout3d", input, 3)
    if input.dims != 5:
        return _unbatched(input, p, training, inplace)
    return _dropout_impl(input, p, training, inplace, True, False)


@tensor_args("input")
def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:  # noqa: A002
    """Alpha dropout of each element (see the module docstring): keeps zero mean / unit variance of SELU output."""
    return _dropout_impl(input, p, training, inplace, False, True)


@tensor_args("input")
def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,  # noqa: A002
                          inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels (dim 1) of an (N, C, *) input."""
    return _dropout_impl(input, p, training, inplace, True, True)


# --- Modules ---


class Dropout1d(_DropoutNd):
    """Channel-wise dropout of (N, C, L) or (C, L) inputs while training (:func:`dropout1d`)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Channel-wise dropout of (N, C, H, W) inputs while training (:func:`dropout2d`, incl. its 3-D quirk)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Channel-wise dropout of (N, C, D, H, W) or (C, D, H, W) inputs while training (:func:`dropout3d`)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Alpha dropout while training (:func:`alpha_dropout`); as PyTorch, ``inplace`` is stored but not used."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Channel-wise alpha dropout while training (:func:`feature_alpha_dropout`); ``inplace`` is not used."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return feature_alpha_dropout(input, self.p, self.training)
