"""The whole GPU code path of a training step, run on the host.

``HostKernelBackend`` (a test double) is NumPy plus every CuPy fast path, with the
CUDA kernels compiled for the host (``support/host_kernels.py``): a LeNet trained on it goes
through the same Python as on a GPU (fused ReLU and pooling, im2col and col2im, the
one-launch cross-entropy and its deferred label check, multi-tensor SGD, leaf
gradients kept without copies) and must match the plain CPU code step for step.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from support.host_kernels import CXX, HostFastPaths, host_fast_paths

import minitorch_accel as mta
from minitorch_accel import nn, optim
from minitorch_accel.backends import fast_paths, registry
from minitorch_accel.backends.cupy import fast_conv as cupy_fast_conv
from minitorch_accel.backends.cupy import fast_optim as cupy_fast_optim
from minitorch_accel.backends.cupy.fast_nn import register_fast_nn as register_cuda_fast_nn
from minitorch_accel.backends.numpy.backend import NumpyBackend
from minitorch_accel.nn.models import LeNet


class HostKernelBackend(NumpyBackend):
    name = "hostkernels"
    paths: HostFastPaths
    used: set[str] = set()

    def kernel(self, name: str) -> Any:
        fast = self.paths.get(name)
        if fast is not None:
            HostKernelBackend.used.add(name)
        return fast

    @property
    def _fast(self) -> Any:
        """The image kernels the CuPy backend's convolution fast paths call, recorded."""
        return _Recorder(self.paths)


class _Recorder:
    def __init__(self, paths: HostFastPaths) -> None:
        self.paths = paths

    def __getattr__(self, name: str) -> Any:
        HostKernelBackend.used.add(name)
        return getattr(self.paths, name)


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if CXX is None:
        pytest.skip("needs a C++ compiler (g++)")
    HostKernelBackend.paths = host_fast_paths(tmp_path_factory.mktemp("step"))
    registry.register("hostkernels", HostKernelBackend)
    for name, fast in cupy_fast_conv.FAST_FORWARDS.items():  # the GPU's conv and pooling
        fast_paths.register_fast("hostkernels", name, fast)
    register_cuda_fast_nn("hostkernels")  # the CUDA backend's fast forwards, on these kernels
    cupy_fast_optim.register_fast_optim("hostkernels")  # multi-tensor SGD, as on a GPU
    yield "hostkernels"
    registry.unregister("hostkernels")
    fast_paths.table("hostkernels").clear()


def train(device: str, steps: int, labels: np.ndarray) -> tuple[list[float], list[np.ndarray]]:
    mta.manual_seed(0)
    model = LeNet().to(device, dtype="float64")
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(0)
    x = mta.tensor(rng.random((6, 1, 28, 28)), device=device)
    y = mta.tensor(labels, device=device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu().numpy() for p in model.parameters()]


@pytest.mark.slow
def test_lenet_steps_match_the_cpu(host_kernels: str) -> None:
    labels = np.array([3, 1, -100, 7, 0, 9])
    expected = train("cpu", 3, labels)
    found = train(host_kernels, 3, labels)
    np.testing.assert_allclose(found[0], expected[0], rtol=1e-10)
    for f, e in zip(found[1], expected[1], strict=True):
        np.testing.assert_allclose(f, e, rtol=1e-9, atol=1e-12)
    assert {
        "relu_forward",
        "max_pool2d_backward",
        "im2col",
        "conv2d_grad_input",
        "cross_entropy_forward",
        "cross_entropy_backward",
        "sgd_update_many",
    } <= HostKernelBackend.used


def test_a_bad_label_raises_by_backward(host_kernels: str) -> None:
    logits = mta.zeros(3, 5, device=host_kernels, requires_grad=True)
    # The label check may report at the loss or at its backward (deferred on a GPU).
    with pytest.raises(IndexError, match=r"label 5 is out of range for 5 classes"):  # noqa: PT012
        loss = nn.functional.cross_entropy(logits, mta.tensor([0, 5, 1], device=host_kernels))
        loss.backward()
    assert logits.grad is None
