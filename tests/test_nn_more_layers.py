"""More of ``torch.nn``: activations, LayerNorm, GroupNorm, Embedding, Conv1d, Unflatten,
Module helpers, and the friendly errors a PyTorch user meets first.

Values against NumPy references written here and against PyTorch where installed;
gradients with gradcheck and gradgradcheck in float64; on every device."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from support.helpers import check_op, to_host

import minitorch_accel as mta
from minitorch_accel import nn
from minitorch_accel.core.tensor import Tensor
from minitorch_accel.nn import functional as F
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

ERF = np.vectorize(math.erf)


def sigmoid_ref(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


ACTIVATIONS: list[tuple[str, Callable[[], nn.Module], Callable[[Tensor], Tensor], Any]] = [
    ("Sigmoid", nn.Sigmoid, F.sigmoid, sigmoid_ref),
    ("Tanh", nn.Tanh, F.tanh, np.tanh),
    (
        "LeakyReLU",
        lambda: nn.LeakyReLU(0.2),
        lambda x: F.leaky_relu(x, 0.2),
        lambda x: np.where(x > 0, x, 0.2 * x),
    ),
    (
        "ELU",
        lambda: nn.ELU(0.7),
        lambda x: F.elu(x, 0.7),
        lambda x: np.where(x > 0, x, 0.7 * (np.exp(x) - 1)),
    ),
    ("GELU", nn.GELU, F.gelu, lambda x: x * 0.5 * (1 + ERF(x / math.sqrt(2)))),
    (
        "GELU_tanh",
        lambda: nn.GELU("tanh"),
        lambda x: F.gelu(x, approximate="tanh"),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
    ("SiLU", nn.SiLU, F.silu, lambda x: x * sigmoid_ref(x)),
    (
        "Softmax",
        lambda: nn.Softmax(1),
        lambda x: F.softmax(x, 1),
        lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True),
    ),
    (
        "LogSoftmax",
        lambda: nn.LogSoftmax(dim=0),
        lambda x: F.log_softmax(x, 0),
        lambda x: x - np.log(np.exp(x).sum(0, keepdims=True)),
    ),
]


@pytest.mark.parametrize("name,layer,fn,ref", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation(
    name: str, layer: Callable[[], nn.Module], fn: Any, ref: Any, device: str
) -> None:
    check_op(fn, ref, [(3, 4)], device, margin=0.05, low=-3.0, high=3.0)
    module = layer()
    check_op(module, ref, [(2, 5)], device, margin=0.05, gradgrad=False)


def test_activations_against_torch() -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).uniform(-6, 6, (4, 7))
    pairs = [
        (nn.Sigmoid(), torch.nn.Sigmoid()),
        (nn.Tanh(), torch.nn.Tanh()),
        (nn.LeakyReLU(0.3), torch.nn.LeakyReLU(0.3)),
        (nn.ELU(1.5), torch.nn.ELU(1.5)),
        (nn.GELU(), torch.nn.GELU()),
        (nn.GELU("tanh"), torch.nn.GELU("tanh")),
        (nn.SiLU(), torch.nn.SiLU()),
        (nn.Softmax(1), torch.nn.Softmax(1)),
        (nn.LogSoftmax(1), torch.nn.LogSoftmax(1)),
    ]
    for ours, theirs in pairs:
        a, b = mta.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ya, yb = ours(a), theirs(b)
        np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-9, atol=1e-10)
        (ya * ya).sum().backward()
        (yb * yb).sum().backward()
        assert a.grad is not None
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_erf_against_math() -> None:
    x = np.linspace(-7.0, 7.0, 2001)
    np.testing.assert_allclose(to_host(mta.erf(mta.tensor(x))), ERF(x), rtol=0, atol=1e-10)
    check_op(mta.erf, ERF, [(3, 4)], "cpu", low=-3.0, high=3.0)


def test_elu_of_large_inputs_has_finite_gradients() -> None:
    x = mta.tensor([1000.0, -1000.0], requires_grad=True)
    F.elu(x).sum().backward()
    assert x.grad is not None and x.grad.tolist() == [1.0, 0.0]


# ------------------------------------------------------------------ normalization
def layer_norm_ref(
    x: np.ndarray, k: int, w: np.ndarray | None, b: np.ndarray | None, eps: float = 1e-5
) -> np.ndarray:
    axes = tuple(range(x.ndim - k, x.ndim))
    y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def test_layer_norm(device: str) -> None:
    check_op(
        lambda x, w, b: F.layer_norm(x, (4,), w, b),
        lambda x, w, b: layer_norm_ref(x, 1, w, b),
        [(2, 3, 4), (4,), (4,)],
        device,
    )
    check_op(
        lambda x: F.layer_norm(x, [3, 4]),
        lambda x: layer_norm_ref(x, 2, None, None),
        [(2, 3, 4)],
        device,
    )
    layer = nn.LayerNorm(4, device=device)
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    assert layer.weight is not None and to_host(layer.weight).tolist() == [1.0] * 4
    x = np.random.default_rng(1).standard_normal((5, 4))
    np.testing.assert_allclose(
        to_host(layer(mta.tensor(x, device=device))),
        layer_norm_ref(x, 1, None, None),
        rtol=1e-5,
        atol=1e-5,
    )
    assert not list(nn.LayerNorm(4, elementwise_affine=False).parameters())
    with pytest.raises(ValueError, match=r"does not end with normalized_shape \(4,\)"):
        layer(mta.zeros(4, 3, device=device))


def group_norm_ref(
    x: np.ndarray, groups: int, w: np.ndarray, b: np.ndarray, eps: float = 1e-5
) -> np.ndarray:
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    y = ((g - g.mean(2, keepdims=True)) / np.sqrt(g.var(2, keepdims=True) + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return y * w.reshape(shape) + b.reshape(shape)


def test_group_norm(device: str) -> None:
    check_op(
        lambda x, w, b: F.group_norm(x, 2, w, b),
        lambda x, w, b: group_norm_ref(x, 2, w, b),
        [(2, 4, 3), (4,), (4,)],
        device,
    )
    layer = nn.GroupNorm(3, 6, device=device)
    x = np.random.default_rng(2).standard_normal((2, 6, 2, 2))
    np.testing.assert_allclose(
        to_host(layer(mta.tensor(x, device=device))),
        group_norm_ref(x, 3, np.ones(6), np.zeros(6)),
        rtol=1e-5,
        atol=1e-5,
    )
    with pytest.raises(ValueError, match="must be divisible by num_groups"):
        nn.GroupNorm(4, 6)
    with pytest.raises(
        ValueError, match=r"GroupNorm\(3, 6\) expects input of shape \(N, 6, ...\), got \(2, 5\)"
    ):
        layer(mta.zeros(2, 5, device=device))


def test_norms_against_torch() -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((3, 6, 5))
    for ours, theirs in (
        (nn.LayerNorm(5), torch.nn.LayerNorm(5)),
        (nn.GroupNorm(2, 6), torch.nn.GroupNorm(2, 6)),
    ):
        ours.double()
        a, b = mta.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ya, yb = ours(a), theirs.double()(b)
        np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-10, atol=1e-12)
        (ya**3).sum().backward()
        (yb**3).sum().backward()
        assert a.grad is not None and ours.weight is not None and ours.weight.grad is not None
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-8)


# ------------------------------------------------------------------ embedding
def test_embedding(device: str) -> None:
    index = np.array([[1, 3, 1], [0, 2, 3]])
    idx = mta.tensor(index, device=device)
    check_op(lambda w: F.embedding(idx, w), lambda w: w[index], [(4, 5)], device)
    layer = nn.Embedding(4, 3, padding_idx=1, device=device)
    assert to_host(layer.weight)[1].tolist() == [0.0, 0.0, 0.0]
    out = layer(idx)
    assert out.shape == (2, 3, 3)
    (out * out).sum().backward()
    grad = layer.weight.grad
    assert grad is not None
    assert to_host(grad)[1].tolist() == [0.0, 0.0, 0.0]  # the padding row learns nothing
    w = to_host(layer.weight)
    np.testing.assert_allclose(to_host(grad)[3], 2 * 2 * w[3], rtol=1e-6)  # index 3 used twice
    with pytest.raises(
        IndexError, match=r"embedding: indices must be in \[0, 3\], got values from 0 to 4"
    ):
        layer(mta.tensor([0, 4], device=device))
    with pytest.raises(TypeError, match="embedding: input must be an integer tensor"):
        layer(mta.zeros(2, device=device))


def test_embedding_against_torch() -> None:
    torch = pytest.importorskip("torch")
    weight = np.random.default_rng(4).standard_normal((6, 4))
    index = np.array([[5, 0, 5, 2]])
    ours = nn.Embedding(6, 4)
    ours.weight = nn.Parameter(mta.tensor(weight))
    theirs = torch.nn.Embedding.from_pretrained(torch.tensor(weight), freeze=False)
    ya, yb = ours(mta.tensor(index)), theirs(torch.tensor(index))
    np.testing.assert_array_equal(ya.detach().numpy(), yb.detach().numpy())
    (ya.sin()).sum().backward()
    (yb.sin()).sum().backward()
    assert ours.weight.grad is not None
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12)


# ------------------------------------------------------------------ conv1d
def conv1d_ref(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int, padding: int
) -> np.ndarray:
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding)))
    k = w.shape[2]
    length = (x.shape[2] - k) // stride + 1
    out = np.empty((x.shape[0], w.shape[0], length))
    for i in range(length):
        window = x[:, :, i * stride : i * stride + k]
        out[:, :, i] = np.einsum("nck,ock->no", window, w)
    return out + b[None, :, None]


@pytest.mark.parametrize("stride,padding", [(1, 0), (2, 1)])
def test_conv1d(stride: int, padding: int, device: str) -> None:
    check_op(
        lambda x, w, b: F.conv1d(x, w, b, stride, padding),
        lambda x, w, b: conv1d_ref(x, w, b, stride, padding),
        [(2, 3, 7), (4, 3, 3), (4,)],
        device,
    )
    layer = nn.Conv1d(3, 4, 3, stride=stride, padding=padding, device=device)
    assert layer.weight.shape == (4, 3, 3)
    x = np.random.default_rng(5).standard_normal((2, 3, 7))
    np.testing.assert_allclose(
        to_host(layer(mta.tensor(x, dtype=mta.float32, device=device))),
        conv1d_ref(x, to_host(layer.weight), to_host(layer.bias), stride, padding)
        if layer.bias is not None
        else 0,
        rtol=1e-4,
        atol=1e-5,
    )
    with pytest.raises(
        ValueError,
        match=r"Conv1d\(3, 4\) expects input of shape \(N, 3, L\) or \(3, L\), got \(5, 7\)",
    ):
        layer(mta.zeros(5, 7, device=device))


def test_conv1d_against_torch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    x, w, b = rng.standard_normal((2, 4, 9)), rng.standard_normal((6, 2, 3)), rng.standard_normal(6)
    ours = F.conv1d(mta.tensor(x), mta.tensor(w), mta.tensor(b), 2, 1, 2, 2)
    theirs = torch.nn.functional.conv1d(
        torch.tensor(x), torch.tensor(w), torch.tensor(b), 2, 1, 2, 2
    )
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


def test_unflatten(device: str) -> None:
    layer = nn.Unflatten(1, (2, 3))
    check_op(layer, lambda x: x.reshape(4, 2, 3), [(4, 6)], device)
    model = nn.Sequential(nn.Flatten(), nn.Unflatten(1, (1, 4, 4)))
    assert model(mta.zeros(2, 1, 4, 4, device=device)).shape == (2, 1, 4, 4)


def test_functional_gradients_in_float64(device: str) -> None:
    rng = np.random.default_rng(7)
    cases: list[tuple[Callable[..., Tensor], list[np.ndarray]]] = [
        (lambda x: F.gelu(x), [rng.standard_normal((3, 4))]),
        (lambda x: F.silu(x), [rng.standard_normal((3, 4))]),
        (
            lambda x, w, b: F.layer_norm(x, (4,), w, b),
            [rng.standard_normal((2, 4)), rng.standard_normal(4), rng.standard_normal(4)],
        ),
        (lambda x: F.group_norm(x, 2), [rng.standard_normal((2, 4, 3))]),
        (
            lambda x, w: F.conv1d(x, w, padding=1),
            [rng.standard_normal((2, 2, 5)), rng.standard_normal((3, 2, 3))],
        ),
    ]
    for fn, arrays in cases:
        leaves = [mta.tensor(a, device=device, requires_grad=True) for a in arrays]
        assert gradcheck(fn, leaves)
        assert gradgradcheck(fn, leaves)


# ------------------------------------------------------------------ Module helpers
def test_module_helpers() -> None:
    model = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 1)))
    assert [name for name, _ in model.named_modules()] == ["", "0", "1", "1.0", "1.1"]
    assert len(list(model.modules())) == 5 and len(list(model.children())) == 2
    seen: list[str] = []
    assert model.apply(lambda m: seen.append(type(m).__name__)) is model
    assert sorted(seen) == sorted(["Sequential", "Linear", "Sequential", "ReLU", "Linear"])
    model.register_buffer("steps", mta.zeros(1))
    assert "steps" in model.state_dict()
    model.requires_grad_(False)
    assert not any(p.requires_grad for p in model.parameters())
    assert all(p.dtype == np.float64 for p in model.double().parameters())
    assert all(p.dtype == np.float16 for p in model.half().parameters())


# ------------------------------------------------------------------ friendly errors
def test_raw_data_given_to_a_layer_or_op() -> None:
    layer = nn.Linear(2, 2)
    for raw in ([1.0, 2.0], np.ones(2)):
        with pytest.raises(
            TypeError,
            match=r"Linear got a (list|ndarray) as input; wrap it with minitorch_accel.tensor",
        ):
            layer(raw)
    with pytest.raises(
        TypeError,
        match=r"exp: expected a Tensor, got list; wrap it with minitorch_accel.tensor",
    ):
        mta.exp([1.0])  # type: ignore[arg-type]
    with pytest.raises(
        TypeError, match=r"expected a Tensor, got ndarray; wrap it with minitorch_accel.tensor"
    ):
        mta.relu(np.ones(2))  # type: ignore[arg-type]
    stacked = nn.ModuleList([nn.Linear(2, 2)])
    assert stacked[0](mta.ones(2)).shape == (2,)  # tensors still pass


def test_optimizer_given_a_model() -> None:
    model = nn.Linear(2, 2)
    with pytest.raises(
        TypeError,
        match=r"got a Linear model; pass its parameters: SGD\(model.parameters\(\), ...\)",
    ):
        mta.optim.SGD(model, lr=0.1)  # type: ignore[arg-type]


def test_device_beyond_the_virtual_ones() -> None:
    with pytest.raises(RuntimeError, match=r"device cpu:99 does not exist: .*\(indices 0..\d+\)"):
        mta.zeros(2, device="cpu:99")


def test_wrong_input_rank_names_the_expected_shape() -> None:
    conv = nn.Conv2d(1, 8, 3)
    with pytest.raises(
        ValueError,
        match=r"Conv2d\(1, 8\) expects input of shape \(N, 1, H, W\) or one image "
        r"\(1, H, W\), got \(28, 28\)",
    ):
        conv(mta.zeros(28, 28))
    with pytest.raises(ValueError, match=r"got \(3, 28, 28\)"):
        conv(mta.zeros(3, 28, 28))  # unbatched, but 3 channels for a 1-channel layer
    with pytest.raises(
        ValueError, match=r"\(N, 1, H, W\) or one image \(1, H, W\), got \(4, 3, 28, 28\)"
    ):
        conv(mta.zeros(4, 3, 28, 28))
    fc = nn.Linear(784, 10)
    with pytest.raises(
        ValueError,
        match=r"Linear\(784, 10\) expects input of shape \(N, 784\) .*got \(2, 1, 28, 28\); "
        r"flatten it first",
    ):
        fc(mta.zeros(2, 1, 28, 28))
