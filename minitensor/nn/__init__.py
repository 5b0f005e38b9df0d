"""Neural-network modules, functions, losses and initializers for minitensor (``torch.nn``)."""

# ruff: noqa: F401, F403 - this module re-exports
from ..module import Buffer, Module, Parameter
from . import functional, grad, init, modules, parallel, parameter, utils
from .activation import *
from .activation_extra import *
from .activation_modules import *
from .adaptive_softmax import *
from .attention import *
from .container import *
from .conv import *
from .conv_transpose import *
from .data_parallel import *
from .deprecated import NLLLoss2d
from .distance import *
from .dropout import *
from .dropout_extra import *
from .grid_sample import *
from .lazy import *
from .linear import *
from .linear_cross_entropy import LinearCrossEntropyLoss, LinearCrossEntropyOptions
from .loss import *
from .losses import *
from .losses_margin import *
from .losses_multilabel import *
from .losses_nll import *
from .multihead_attention import *
from .norm import *
from .norm_cross_map import *
from .norm_instance import *
from .norm_sync import *
from .padding import *
from .pooling import *
from .pooling_extra import *
from .pooling_fractional import *
from .recurrent import *
from .resample import *
from .sparse import *
from .transformer import *
from .transformer_decoder import *
