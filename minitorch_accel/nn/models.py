"""Ready-made models: :class:`LeNet` (the small CNN of the lab) and :class:`SmallVGG`.

Examples
--------
>>> import minitorch_accel as mta
>>> from minitorch_accel.nn.models import LeNet
>>> model = LeNet()
>>> sum(p.numel() for p in model.parameters())
225034
"""

from __future__ import annotations

from .. import nn
from ..core.tensor import Tensor


class LeNet(nn.Module):
    """A LeNet-style CNN for 28x28 images (MNIST).

    Its layers: conv 3x3 (32) - ReLU - max-pool 2 - conv 3x3 (64) - ReLU - max-pool 2 - flatten -
    linear (128) - ReLU - linear (``num_classes``).

    Parameters
    ----------
    num_classes : int
        Outputs (logits) per image.
    in_channels : int
        1 for grey images, 3 for colour.
    image_size : int
        Height and width of the (square) input: 28 gives a 64 x 5 x 5 = 1600-value
        flattened feature vector.

    Attributes
    ----------
    features : nn.Sequential
        The convolutional part.
    classifier : nn.Sequential
        Flatten and the two linear layers.
    """

    def __init__(self, num_classes: int = 10, in_channels: int = 1, image_size: int = 28) -> None:
        super().__init__()
        side = ((image_size - 2) // 2 - 2) // 2
        if side < 1:
            raise ValueError(f"LeNet: image_size must be at least 10, got {image_size}")
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 32, kernel_size=3),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, kernel_size=3),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(64 * side * side, 128),
            nn.ReLU(),
            nn.Linear(128, num_classes),
        )

    def forward(self, x: Tensor) -> Tensor:
        """Logits (N, num_classes) of images (N, in_channels, image_size, image_size)."""
        return self.classifier(self.features(x))  # type: ignore[no-any-return]


def _conv_bn_relu(in_channels: int, out_channels: int) -> list[nn.Module]:
    return [
        nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(),
    ]


class SmallVGG(nn.Module):
    """A small VGG-style CNN with batch normalization, for any image size from 4x4.

    Two stages of (conv 3x3 - BN - ReLU) x 2 followed by max-pool 2, with ``width``
    then ``2 * width`` channels; then a conv-BN-ReLU with ``4 * width`` channels, global
    average pooling and a linear layer.

    Parameters
    ----------
    num_classes : int
    in_channels : int
    width : int
        Channels of the first stage.
    """

    def __init__(self, num_classes: int = 10, in_channels: int = 1, width: int = 32) -> None:
        super().__init__()
        self.features = nn.Sequential(
            *_conv_bn_relu(in_channels, width),
            *_conv_bn_relu(width, width),
            nn.MaxPool2d(2),
            *_conv_bn_relu(width, 2 * width),
            *_conv_bn_relu(2 * width, 2 * width),
            nn.MaxPool2d(2),
            *_conv_bn_relu(2 * width, 4 * width),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(4 * width, num_classes))

    def forward(self, x: Tensor) -> Tensor:
        """Logits (N, num_classes) of images (N, in_channels, H, W)."""
        return self.classifier(self.pool(self.features(x)))  # type: ignore[no-any-return]
