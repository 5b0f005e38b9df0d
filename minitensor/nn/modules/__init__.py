"""``torch.nn.modules``: PyTorch's module paths for code written against them (``from torch.nn.modules.batchnorm
import _BatchNorm``, ``from torch.nn.modules.loss import _Loss``). Each submodule re-exports the classes that PyTorch
defines there and minitensor has (they live in minitensor's own ``nn`` files); this package re-exports them all, as
PyTorch's does.
"""

# ruff: noqa: F401, F403 - this package re-exports
from __future__ import annotations

from . import (
    activation,
    adaptive,
    batchnorm,
    channelshuffle,
    container,
    conv,
    distance,
    dropout,
    flatten,
    fold,
    instancenorm,
    lazy,
    linear,
    linear_cross_entropy_options,
    loss,
    module,
    normalization,
    padding,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    transformer,
    upsampling,
)  # fmt: skip
from .activation import *
from .adaptive import *
from .batchnorm import *
from .channelshuffle import *
from .container import *
from .conv import *
from .distance import *
from .dropout import *
from .flatten import *
from .fold import *
from .instancenorm import *
from .lazy import *
from .linear import *
from .linear_cross_entropy_options import *
from .loss import *
from .module import *
from .normalization import *
from .padding import *
from .pixelshuffle import *
from .pooling import *
from .rnn import *
from .sparse import *
from .transformer import *
from .upsampling import *

_SUBMODULES = (  # PyTorch's torch.nn.modules.__all__ has the public names of these (not lazy's LazyModuleMixin)
    module, linear, conv, activation, loss, container, pooling, batchnorm, instancenorm, normalization, dropout, padding,
    sparse, rnn, pixelshuffle, upsampling, distance, fold, adaptive, transformer, flatten, channelshuffle,
    linear_cross_entropy_options,
)  # fmt: skip
__all__ = list(dict.fromkeys(name for sub in _SUBMODULES for name in sub.__all__))
