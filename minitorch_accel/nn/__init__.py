"""Neural-network building blocks, named as in ``torch.nn``.

:class:`Module` and :class:`Parameter`, the layers, the losses, containers,
:mod:`~minitorch_accel.nn.functional` (stateless functions, ``import ... as F``),
:mod:`~minitorch_accel.nn.init` (weight initialization) and
:mod:`~minitorch_accel.nn.utils` (gradient clipping, parameters as one vector).

Examples
--------
>>> import minitorch_accel as mta
>>> from minitorch_accel import nn
>>> model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
>>> loss = nn.CrossEntropyLoss()(model(mta.randn(8, 4)), mta.randint(0, 3, (8,)))
>>> loss.backward()
>>> model[0].weight.grad.shape
(16, 4)
"""

from __future__ import annotations

from typing import Any

from . import functional, init, utils
from .activation import (
    CELU,
    ELU,
    GELU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU6,
    RReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from .attention import MultiheadAttention
from .channel_dropout import Dropout1d, Dropout2d, Dropout3d
from .container import ModuleList, Sequential
from .conv1d import Conv1d
from .conv_layers import AdaptiveAvgPool2d, AvgPool2d, Conv2d, MaxPool2d
from .conv_transpose import ConvTranspose1d, ConvTranspose2d
from .dict_containers import ModuleDict, ParameterDict, ParameterList
from .distance import CosineSimilarity, PairwiseDistance
from .layers import (
    CrossEntropyLoss,
    Dropout,
    Flatten,
    Identity,
    MSELoss,
    NLLLoss,
    ReLU,
    Unflatten,
)
from .linear import Linear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
)
from .margin_loss import (
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from .misc_layers import (
    GLU,
    AlphaDropout,
    Bilinear,
    ChannelShuffle,
    EmbeddingBag,
    FeatureAlphaDropout,
    Softmax2d,
)
from .module import Module
from .module_state import IncompatibleKeys
from .norm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .norm_more import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LocalResponseNorm, RMSNorm
from .normalization import GroupNorm, LayerNorm
from .padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from .parameter import Buffer, Parameter
from .pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AvgPool1d,
    AvgPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool1d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
)
from .resample import (
    AdaptiveMaxPool2d,
    Fold,
    PixelShuffle,
    PixelUnshuffle,
    Unfold,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding
from .transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = [
    "AdaptiveAvgPool2d",
    "AvgPool2d",
    "BatchNorm1d",
    "BatchNorm2d",
    "Conv2d",
    "CrossEntropyLoss",
    "Dropout",
    "Flatten",
    "Identity",
    "IncompatibleKeys",
    "Linear",
    "MSELoss",
    "MaxPool2d",
    "Module",
    "ModuleList",
    "NLLLoss",
    "Parameter",
    "Buffer",
    "RReLU",
    "ReLU",
    "Sequential",
    "functional",
    "init",
    "utils",
    "Conv1d",
    "ELU",
    "Embedding",
    "GELU",
    "GroupNorm",
    "LayerNorm",
    "LeakyReLU",
    "LogSoftmax",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Tanh",
    "Unflatten",
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "CosineSimilarity",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "ModuleDict",
    "PairwiseDistance",
    "ParameterDict",
    "ParameterList",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
    "CELU",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "LogSigmoid",
    "Mish",
    "PReLU",
    "ReLU6",
    "SELU",
    "Softmin",
    "Softplus",
    "Softshrink",
    "Softsign",
    "Tanhshrink",
    "Threshold",
    "BCELoss",
    "BCEWithLogitsLoss",
    "CosineEmbeddingLoss",
    "GaussianNLLLoss",
    "HingeEmbeddingLoss",
    "HuberLoss",
    "KLDivLoss",
    "L1Loss",
    "MarginRankingLoss",
    "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
    "PoissonNLLLoss",
    "SmoothL1Loss",
    "SoftMarginLoss",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "AdaptiveMaxPool2d",
    "Fold",
    "PixelShuffle",
    "PixelUnshuffle",
    "Unfold",
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
    "GRU",
    "GRUCell",
    "LSTM",
    "LSTMCell",
    "RNN",
    "RNNBase",
    "RNNCell",
    "RNNCellBase",
    "AlphaDropout",
    "BatchNorm3d",
    "Bilinear",
    "ChannelShuffle",
    "EmbeddingBag",
    "FeatureAlphaDropout",
    "GLU",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LocalResponseNorm",
    "RMSNorm",
    "Softmax2d",
    "MultiheadAttention",
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AvgPool1d",
    "AvgPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "MaxPool1d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
]


def __getattr__(name: str) -> Any:
    """``nn.DataParallel``, defined in :mod:`minitorch_accel.parallel.data_parallel` (it
    needs the parallel layer's threads; ``nn`` sits below ``parallel`` and must not import
    it when loaded), imported on first use; likewise the module ``nn.parallel``.
    """
    if name == "DataParallel":
        import importlib

        return importlib.import_module("minitorch_accel.parallel.data_parallel").DataParallel
    if name == "parallel":  # ``nn.parallel`` without ``import minitorch_accel.nn.parallel``
        import importlib

        return importlib.import_module("minitorch_accel.nn.parallel")
    raise AttributeError(f"module 'minitorch_accel.nn' has no attribute {name!r}")
