"""Activation checkpointing (:mod:`minitorch_accel.utils.checkpoint`): the same gradients
as the plain run, less activation memory."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_accel as mta
from minitorch_accel import memory, nn
from minitorch_accel.utils import checkpoint_sequential
from minitorch_accel.utils.checkpoint import checkpoint


def _mlp(depth: int, width: int, dropout: float = 0.0) -> nn.Sequential:
    mta.manual_seed(3)
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
        if dropout:
            layers.append(nn.Dropout(dropout))
    layers.append(nn.Linear(width, 3))
    return nn.Sequential(*layers).to(dtype=np.float64)


def _grads(model: nn.Module, x: mta.Tensor) -> list[np.ndarray]:
    return [np.array(p.grad.array) for p in model.parameters()] + [np.array(x.grad.array)]


def _run(
    model: nn.Module, segments: int | None, batch: int = 6, seed: int = 11
) -> list[np.ndarray]:
    """Gradients of a loss through ``model``, plain (None) or in ``segments`` pieces."""
    rng = np.random.default_rng(0)
    x = mta.tensor(rng.standard_normal((batch, 16)), requires_grad=True)
    y = mta.tensor(rng.integers(0, 3, batch))
    model.zero_grad()
    mta.manual_seed(seed)  # the same dropout masks in both runs
    out = model(x) if segments is None else checkpoint_sequential(model, segments, x)
    (nn.CrossEntropyLoss()(out, y) * 1.0).backward()
    return _grads(model, x)


@pytest.mark.parametrize("segments", [1, 2, 3, 7])
@pytest.mark.parametrize("dropout", [0.0, 0.3])
def test_checkpoint_sequential_gives_the_plain_gradients(segments: int, dropout: float) -> None:
    model = _mlp(6, 16, dropout)
    plain = _run(model, None)
    again = _run(model, segments)
    for a, b in zip(plain, again, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def test_dropout_masks_are_replayed_not_redrawn() -> None:
    model = _mlp(2, 16, dropout=0.5)
    plain = _run(model, None)
    again = _run(model, 2)
    other_seed = _run(model, None, seed=12)
    assert not np.allclose(plain[0], other_seed[0])  # the masks matter
    np.testing.assert_allclose(again[0], plain[0], rtol=1e-10, atol=1e-12)


def test_checkpoint_of_a_function_with_several_arguments() -> None:
    rng = np.random.default_rng(1)
    a = mta.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = mta.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    scale = 2.5

    def f(u: mta.Tensor, s: float, v: mta.Tensor) -> mta.Tensor:
        return ((u @ v).relu() * s).exp()

    f(a, scale, b).sum().backward()
    expected = [np.array(a.grad.array), np.array(b.grad.array)]
    a.grad = b.grad = None
    checkpoint(f, a, scale, b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), expected[0], rtol=1e-10)  # type: ignore[attr-defined]
    np.testing.assert_allclose(b.grad.numpy(), expected[1], rtol=1e-10)  # type: ignore[attr-defined]


def test_bad_arguments() -> None:
    model = _mlp(2, 4)
    with pytest.raises(ValueError, match="segments must be between 1 and the number of layers"):
        checkpoint_sequential(model, 0, mta.ones(1, 4, dtype="float64"))
    with pytest.raises(TypeError, match="at least one argument must be a Tensor"):
        checkpoint(lambda s: s, 3.0)
    x = mta.ones(2, requires_grad=True)
    y = checkpoint(lambda t: t * t, x)
    with pytest.raises(RuntimeError, match="does not support create_graph=True"):
        mta.grad(y.sum(), x, create_graph=True)


def test_under_no_grad_it_is_a_plain_call() -> None:
    model = _mlp(2, 4)
    with mta.no_grad():
        y = checkpoint_sequential(model, 2, mta.ones(1, 4, dtype="float64"))
    assert y.grad_fn is None


def _peak_of_step(model: nn.Module, segments: int | None, device: str) -> int:
    rng = np.random.default_rng(0)
    x = mta.tensor(rng.standard_normal((256, 128)).astype(np.float32), device=device)
    y = mta.tensor(rng.integers(0, 3, 256), device=device)
    model.zero_grad()
    memory.reset_peak_memory_stats(device)
    start = memory.memory_allocated(device)
    out = model(x) if segments is None else checkpoint_sequential(model, segments, x)
    nn.CrossEntropyLoss()(out, y).backward()
    return memory.max_memory_allocated(device) - start


def test_a_16_layer_mlp_needs_at_least_40_percent_less_memory() -> None:
    device = "cpu:10"
    with memory.tracking():
        mta.manual_seed(0)
        layers: list[nn.Module] = []
        for _ in range(16):
            layers += [nn.Linear(128, 128), nn.ReLU()]
        model = nn.Sequential(*layers, nn.Linear(128, 3)).to(device)
        plain = _peak_of_step(model, None, device)
        saved = _peak_of_step(model, 4, device)
    assert saved <= 0.6 * plain, (saved, plain)
