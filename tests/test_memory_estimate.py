"""``utils.memory_estimate`` against the peak that ``memory`` measures on a training step."""

from __future__ import annotations

from collections.abc import Callable
from itertools import count

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import memory, nn, optim
from minitorch_accel.nn.models import LeNet, SmallVGG
from minitorch_accel.utils import memory_estimate

_devices = count(40)  # a fresh virtual device per measurement: counters start at zero


def _deep_mlp() -> nn.Module:
    layers: list[nn.Module] = [nn.Flatten(), nn.Linear(784, 256), nn.ReLU()]
    for _ in range(12):
        layers += [nn.Linear(256, 256), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(256, 10))


MODELS: dict[str, tuple[Callable[[], nn.Module], tuple[int, ...]]] = {
    "lenet": (LeNet, (1, 28, 28)),
    "small_vgg": (lambda: SmallVGG(width=8), (1, 16, 16)),
    "deep_mlp": (_deep_mlp, (1, 28, 28)),
}


def _measured_peak(name: str, batch: int, adam: bool) -> tuple[int, int]:
    """(measured peak of the second training step, predicted total)."""
    make, image = MODELS[name]
    device = f"cpu:{next(_devices)}"
    shape = (batch, *image)
    with memory.tracking():
        mta.manual_seed(0)
        model = make().to(device)
        opt = (
            optim.Adam(model.parameters(), lr=1e-3)
            if adam
            else optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        )
        rng = np.random.default_rng(0)
        x = mta.tensor(rng.random(shape, dtype=np.float32), device=device)
        y = mta.tensor(rng.integers(0, 10, batch), device=device)
        for i in range(2):  # the second step has the optimizer state of the first
            if i == 1:
                memory.reset_peak_memory_stats(device)
            opt.zero_grad()
            nn.CrossEntropyLoss()(model(x), y).backward()
            opt.step()
        peak = memory.max_memory_allocated(device)
        predicted = memory_estimate(model, shape, opt, device=device).total
    return peak, predicted


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("batch, adam", [(16, True), (128, False), (1024, True)])
def test_the_estimate_is_within_10_percent_of_the_measured_peak(
    name: str, batch: int, adam: bool
) -> None:
    peak, predicted = _measured_peak(name, batch, adam)
    assert abs(predicted - peak) <= 0.10 * peak, (predicted, peak)


def test_the_byte_arithmetic() -> None:
    model = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 5))
    params = (10 * 20 + 20 + 20 * 5 + 5) * 8
    adam = memory_estimate(model, (4, 10), optim.Adam(model.parameters()), dtype=np.float64)
    assert (adam.parameters, adam.gradients, adam.optimizer_state) == (params, params, 2 * params)
    sgd = memory_estimate(model, (4, 10), optim.SGD(model.parameters(), lr=0.1), np.float64)
    assert sgd.optimizer_state == 0
    # Activations: two outputs of 4 x 20, the logits 4 x 5, the loss and its log-probs.
    assert adam.activations == (4 * 20 * 2 + 4 * 5 + 1 + 4 * 5) * 8
    double = memory_estimate(model, (8, 10), None, dtype=np.float64)
    single = memory_estimate(model, (4, 10), None, dtype=np.float64)
    assert double.activations - 8 == 2 * (single.activations - 8)  # linear in the batch


def test_a_gpu_convolution_keeps_its_im2col_matrix_and_the_cpu_one_does_not() -> None:
    model = nn.Sequential(nn.Conv2d(3, 8, 3, bias=False), nn.ReLU())
    cpu = memory_estimate(model, (4, 3, 10, 10))
    gpu = memory_estimate(model, (4, 3, 10, 10), device="cuda")
    cols = (4 * 8 * 8) * (3 * 9) * 4  # rows (N*OH*OW) x K (C*KH*KW), float32
    assert cpu.layers[0].saved == 0 and gpu.layers[0].saved == cols
    assert gpu.activations - cpu.activations == cols
    assert cpu.layers[0].workspace == gpu.layers[0].workspace == cols


def test_unknown_layers_are_named() -> None:
    class Odd(nn.Module):
        def forward(self, x: mta.Tensor) -> mta.Tensor:
            return x

    with pytest.raises(TypeError, match="no memory rule for layer 1 of type Odd"):
        memory_estimate(nn.Sequential(nn.ReLU(), Odd()), (2, 3))
