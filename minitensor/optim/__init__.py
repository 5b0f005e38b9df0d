"""Optimizers and learning-rate schedulers with PyTorch's names, defaults and update equations (``torch.optim``).

Every optimizer takes ``model.parameters()`` (any iterable of leaf tensors) or parameter groups, updates the
parameters in place, and has ``state_dict``/``load_state_dict`` with PyTorch's structure.
"""

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta", "ASGD",
           "Rprop", "LBFGS", "Adafactor", "Muon", "lr_scheduler", "swa_utils"]
