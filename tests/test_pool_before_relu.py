"""Sequential runs a ReLU followed by a max-pooling as the pooling first: the same
outputs and gradients as the modules in the order written."""

from __future__ import annotations

import numpy as np
import pytest
from support.helpers import DEVICES, to_host

import minitorch_accel as mta
from minitorch_accel import nn

# (kernel, stride, padding): tiling windows, overlapping windows with padding, stride 1.
POOLS = [(2, 2, 0), (3, 2, 1), (3, 1, 0), ((2, 3), (1, 2), (1, 0))]


def _ties(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """float64 values from a few levels (zeros and negatives included): many windows
    hold several equal maxima, and many hold only values <= 0."""
    return rng.integers(-3, 3, size=shape).astype(np.float64) * 0.5


def _run(net: nn.Sequential, x_np: np.ndarray, g_np: np.ndarray, device: str) -> list[np.ndarray]:
    """The output, and the gradients of the input and of every parameter."""
    x = mta.tensor(x_np, device=device, requires_grad=True)
    for p in net.parameters():
        p.grad = None
    y = net(x)
    y.backward(mta.tensor(g_np, device=device))
    assert x.grad is not None
    return [to_host(y), to_host(x.grad)] + [to_host(p.grad) for p in net.parameters()]


def _net(pool: tuple, device: str) -> nn.Sequential:
    mta.manual_seed(0)
    kernel, stride, padding = pool
    return nn.Sequential(
        nn.Conv2d(2, 3, 2), nn.ReLU(), nn.MaxPool2d(kernel, stride, padding), nn.Conv2d(3, 2, 1)
    ).to(device, dtype=mta.float64)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("pool", POOLS, ids=str)
def test_pooling_first_gives_the_written_order_s_outputs_and_gradients(
    pool: tuple, device: str
) -> None:
    rng = np.random.default_rng(1)
    net = _net(pool, device)
    for p in net.parameters():  # weights from few levels too: ties after the conv
        p.array[...] = mta.tensor(_ties(tuple(p.shape), rng), device=device).array
    x = _ties((3, 2, 9, 8), rng)
    g = rng.standard_normal(tuple(net(mta.tensor(x, device=device)).shape))
    assert net.pool_before_relu
    reordered = _run(net, x, g, device)
    net.pool_before_relu = False
    written = _run(net, x, g, device)
    assert len(reordered) == len(written) == 6
    for a, b in zip(reordered, written, strict=True):
        assert a.shape == b.shape
        np.testing.assert_array_equal(a, b)  # equal values (0.0 == -0.0)
    assert np.count_nonzero(written[1]) > 0 and np.count_nonzero(written[1] == 0) > 0


def test_the_relu_runs_on_the_pooled_values_only_when_allowed() -> None:
    x = mta.randn(2, 3, 6, 6, requires_grad=True)
    net = nn.Sequential(nn.ReLU(), nn.MaxPool2d(2))
    y = net(x)
    assert y.grad_fn is not None and y.grad_fn.name().startswith("Relu")
    assert y.grad_fn.next_functions[0][0].name().startswith("MaxPool2d")
    net.pool_before_relu = False
    assert net(x).grad_fn.name().startswith("MaxPool2d")

    class MyReLU(nn.ReLU):
        def forward(self, input: mta.Tensor) -> mta.Tensor:
            return super().forward(input) * 2

    # A subclass may compute something else: the pair runs as written.
    custom = nn.Sequential(MyReLU(), nn.MaxPool2d(2))
    expected = nn.functional.max_pool2d(nn.functional.relu(x) * 2, 2)
    np.testing.assert_array_equal(to_host(custom(x)), to_host(expected))
    assert custom(x).grad_fn.name().startswith("MaxPool2d")


@pytest.mark.parametrize("pool", POOLS, ids=str)
def test_pooling_first_matches_pytorch(pool: tuple) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    net = _net(pool, "cpu")
    x, kernel = _ties((2, 2, 8, 9), rng), pool[0]
    g = rng.standard_normal(tuple(net(mta.tensor(x)).shape))
    ours = _run(net, x, g, "cpu")
    ref = torch.nn.Sequential(
        torch.nn.Conv2d(2, 3, 2),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(kernel, pool[1], pool[2]),
        torch.nn.Conv2d(3, 2, 1),
    ).double()
    with torch.no_grad():
        for p, q in zip(ref.parameters(), net.parameters(), strict=True):
            p.copy_(torch.from_numpy(to_host(q)))
    xt = torch.tensor(x, requires_grad=True)
    yt = ref(xt)
    yt.backward(torch.tensor(g))
    theirs = [yt.detach().numpy(), xt.grad.numpy()] + [p.grad.numpy() for p in ref.parameters()]
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("pool", POOLS, ids=str)
def test_a_nan_window_sends_its_gradient_to_its_last_nan_in_either_order(
    pool: tuple, device: str
) -> None:
    """A NaN passes the ReLU and wins its window, so both orders send the window's
    gradient to its last NaN (a NaN ReLU output passes its gradient, as in PyTorch).
    """
    rng = np.random.default_rng(3)
    x = _ties((2, 2, 9, 8), rng)
    x.flat[rng.choice(x.size, size=24, replace=False)] = np.nan
    net = nn.Sequential(nn.ReLU(), nn.MaxPool2d(*pool))
    g = rng.standard_normal(tuple(net(mta.tensor(x, device=device)).shape))
    reordered = _run(net, x, g, device)
    net.pool_before_relu = False
    written = _run(net, x, g, device)
    assert np.isnan(written[0]).any() and np.count_nonzero(written[1]) > 0
    for a, b in zip(reordered, written, strict=True):
        np.testing.assert_array_equal(a, b)  # NaN where NaN
    torch = pytest.importorskip("torch")
    xt = torch.tensor(x, requires_grad=True)
    torch.nn.functional.max_pool2d(torch.relu(xt), *pool).backward(torch.tensor(g))
    # overlapping windows add their shares to a pixel in another order
    np.testing.assert_allclose(written[1], xt.grad.numpy(), rtol=1e-12, atol=1e-15)
