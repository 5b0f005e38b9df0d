"""Optimizers and learning-rate schedulers with PyTorch's names, defaults and update equations (``torch.optim``).

Every optimizer takes ``model.parameters()`` (any iterable of leaf tensors) or parameter groups, updates the
parameters in place, and has ``state_dict``/``load_state_dict`` with PyTorch's structure.
"""

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
