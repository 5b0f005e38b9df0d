"""Stateless neural-network functions (``minitensor.nn.functional``, usually imported as ``F``), torch's names.

Everything here is built from differentiable Tensor ops or the Functions in :mod:`.conv`, so it runs on every
backend and supports autodiff. The functions live with their concept (activation.py, conv.py, losses.py, ...).
"""

# ruff: noqa: F401, F403 - this module re-exports
from . import grad  # torch's F.grad is torch.nn.grad
from .activation import *
from .activation_extra import *
from .attention import *
from .attention_functional import *
from .conv import *
from .conv_transpose import *
from .deprecated import upsample, upsample_bilinear, upsample_nearest
from .distance import *
from .dropout import *
from .dropout_extra import *
from .grid_sample import *
from .linear import *
from .linear_cross_entropy import linear_cross_entropy
from .losses import *
from .losses_margin import *
from .losses_multilabel import *
from .losses_nll import *
from .norm import *
from .norm_instance import *
from .pooling import *
from .pooling_extra import *
from .pooling_fractional import *
from .resample import *
from .sparse import *
