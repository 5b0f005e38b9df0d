"""Neural-network layers, functions, losses and initializers for minitensor."""

from . import functional, init
from .conv import conv1d, conv2d
from .functional import (
    argmax,
    avgpool2d,
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    dropout,
    flatten,
    gelu,
    huber_loss,
    l1_loss,
    leaky_relu,
    logsoftmax,
    maxpool2d,
    mse_loss,
    nll_loss,
    one_hot,
    softmax,
)
from .layers import (
    GELU,
    AvgPool2d,
    Conv1d,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    Layer,
    LeakyReLU,
    Linear,
    LogSoftmax,
    MaxPool2d,
    ReLU,
    Sequential,
    Sigmoid,
    Softmax,
    Tanh,
    to,
)
from .norm import BatchNorm1d, BatchNorm2d

__all__ = [
    "functional", "init", "conv1d", "conv2d", "argmax", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "cross_entropy", "dropout", "flatten", "huber_loss", "l1_loss", "logsoftmax", "maxpool2d", "mse_loss", "nll_loss",
    "softmax", "avgpool2d", "gelu", "leaky_relu", "one_hot",
    "GELU", "AvgPool2d", "Conv1d", "Conv2d", "Dropout", "Embedding", "Flatten", "Identity", "Layer",
    "LeakyReLU", "Linear", "LogSoftmax", "MaxPool2d", "ReLU", "Sequential", "Sigmoid", "Softmax", "Tanh", "to",
    "BatchNorm1d", "BatchNorm2d",
]
