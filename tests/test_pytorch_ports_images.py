"""Image programs of pytorch/examples ported by renaming ``torch`` to ``minitorch_accel``.

Three programs, their classes and training loops copied with only the imports changed:

- ``dcgan/main.py``: Generator and Discriminator (ConvTranspose2d, BatchNorm2d,
  LeakyReLU in place), ``weights_init`` applied through ``Module.apply``, BCELoss, Adam
  with ``betas``, ``label.fill_``, ``fake.detach()``; 64x64 images as the program's layers
  require, few filters, synthetic data (the program's ``fake`` dataset).
- ``super_resolution/model.py`` and ``main.py``: PixelShuffle, ``init.orthogonal_`` with
  ``init.calculate_gain('relu')``, MSELoss and Adam, the PSNR test loop; synthetic image
  pairs instead of BSD300 (nothing is downloaded).
- ``fast_neural_style/neural_style/transformer_net.py`` with the training step and the
  ``stylize`` path of ``neural_style.py`` and its ``utils.py`` (``gram_matrix``,
  ``normalize_batch``, ``save_image``): ReflectionPad2d, InstanceNorm2d(affine=True),
  ``F.interpolate(mode='nearest')``, residual blocks. The loss network VGG16 needs
  torchvision's pretrained weights, so a parameter-free stand-in with VGG16's four named
  outputs (ReLU and average pooling) takes its place; the content and style losses
  (MSELoss of the ``relu2_2`` features, Gram matrices of every output) are the program's.

Each program's classes are built by a function that takes the framework (``torch``,
``nn``, ...) so the very same lines run on minitorch_accel and on PyTorch; the runs start
from the same weights (copied through NumPy) and see the same data and the same noise in
the same order, and the losses and final parameters are compared step by step, in
float64 (the programs make their tensors with the default dtype, set to float64 for both).
"""

# The programs' own names (netD, errD_real, D_x, Net, X...) and %-formatting, kept verbatim:
# ruff: noqa: N803, N806, UP031

from __future__ import annotations

import math
import re
from collections import namedtuple
from collections.abc import Callable, Iterator
from math import log10
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import minitorch_accel
import minitorch_accel.backends.cudnn
import minitorch_accel.nn
import minitorch_accel.nn.init
import minitorch_accel.nn.parallel
import minitorch_accel.optim
import minitorch_accel.utils.data
from minitorch_accel.utils.gradcheck import gradcheck, gradgradcheck

STEP_RTOL = 1e-9  # float64: the two frameworks differ only in summation order


# ---------------------------------------------------------------------- shared helpers
def _state(module: Any) -> dict[str, np.ndarray]:
    """A module's state_dict as NumPy arrays (copies), from either framework."""
    return {k: np.array(v.detach().cpu().numpy()) for k, v in module.state_dict().items()}


def _load(torch: Any, module: Any, state: dict[str, np.ndarray]) -> None:
    """Load NumPy arrays into a module of framework ``torch``."""
    module.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in state.items()})


def _assert_states_close(
    ours: dict[str, np.ndarray],
    theirs: dict[str, np.ndarray],
    rtol: float = STEP_RTOL,
    atol: float = 1e-12,
    skip: Callable[[str], bool] = lambda name: False,
) -> None:
    assert list(ours) == list(theirs)
    for name in ours:
        if skip(name):
            continue
        assert ours[name].dtype == theirs[name].dtype, name
        np.testing.assert_allclose(ours[name], theirs[name], rtol=rtol, atol=atol, err_msg=name)


class _DefaultDtype:
    """The default dtype of framework ``torch`` set to ``dtype`` for a block."""

    def __init__(self, torch: Any, dtype: Any = np.float64) -> None:
        self.torch = torch
        self.dtype = {np.float64: torch.float64, np.float32: torch.float32}[dtype]

    def __enter__(self) -> None:
        self.torch.set_default_dtype(self.dtype)

    def __exit__(self, *exc: object) -> None:
        self.torch.set_default_dtype(self.torch.float32)


class _Randn:
    """Framework ``torch`` with ``randn`` recording its draws (``replay=None``) or handing
    back recorded ones: the two runs see the same noise."""

    def __init__(self, torch: Any, replay: list[np.ndarray] | None = None) -> None:
        self._torch = torch
        self._replay = None if replay is None else iter(replay)
        self.drawn: list[np.ndarray] = []

    def randn(self, *size: int, **kwargs: Any) -> Any:
        if self._replay is None:
            out = self._torch.randn(*size, **kwargs)
            self.drawn.append(out.numpy().copy())
            return out
        values = next(self._replay)
        assert values.shape == tuple(size)
        return self._torch.from_numpy(values.copy()).to(kwargs.get("device", "cpu"))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._torch, name)


class _Recording:
    """A data loader whose batches are kept (as NumPy) for the other framework's run."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.dataset = loader.dataset
        self.batches: list[list[np.ndarray]] = []

    def __iter__(self) -> Iterator[Any]:
        for batch in self.loader:
            self.batches.append([b.numpy().copy() for b in batch])
            yield batch

    def __len__(self) -> int:
        return len(self.loader)


class _Replay:
    """The batches a :class:`_Recording` kept, as tensors of framework ``torch``, served
    ``per_epoch`` at a time: each iteration is the next epoch."""

    def __init__(self, torch: Any, batches: list[list[np.ndarray]], per_epoch: int) -> None:
        self.batches = [[torch.from_numpy(b.copy()) for b in batch] for batch in batches]
        self.per_epoch = per_epoch
        self.served = 0

    def __iter__(self) -> Iterator[Any]:
        epoch = self.batches[self.served : self.served + self.per_epoch]
        assert len(epoch) == self.per_epoch, "more epochs than were recorded"
        self.served += self.per_epoch
        return iter(epoch)

    def __len__(self) -> int:
        return self.per_epoch


def _replayed(torch: Any, loader: _Recording) -> _Replay:
    return _Replay(torch, loader.batches, len(loader))


def _real_torch() -> Any:
    return pytest.importorskip("torch")


# ================================================================== dcgan/main.py
def dcgan_program(torch: Any, nn: Any, nz: int, ngf: int, ndf: int, nc: int) -> Any:
    """The program's ``weights_init``, ``Generator`` and ``Discriminator``, verbatim."""

    # custom weights initialization called on netG and netD
    def weights_init(m):  # type: ignore[no-untyped-def]
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            torch.nn.init.normal_(m.weight, 0.0, 0.02)
        elif classname.find("BatchNorm") != -1:
            torch.nn.init.normal_(m.weight, 1.0, 0.02)
            torch.nn.init.zeros_(m.bias)

    class Generator(nn.Module):  # type: ignore[misc]
        def __init__(self, ngpu):  # type: ignore[no-untyped-def]
            super(Generator, self).__init__()  # noqa: UP008  (the program's spelling)
            self.ngpu = ngpu
            self.main = nn.Sequential(
                # input is Z, going into a convolution
                nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False),
                nn.BatchNorm2d(ngf * 8),
                nn.ReLU(True),
                # state size. (ngf*8) x 4 x 4
                nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False),
                nn.BatchNorm2d(ngf * 4),
                nn.ReLU(True),
                # state size. (ngf*4) x 8 x 8
                nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
                nn.BatchNorm2d(ngf * 2),
                nn.ReLU(True),
                # state size. (ngf*2) x 16 x 16
                nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
                nn.BatchNorm2d(ngf),
                nn.ReLU(True),
                # state size. (ngf) x 32 x 32
                nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
                nn.Tanh(),
                # state size. (nc) x 64 x 64
            )

        def forward(self, input):  # type: ignore[no-untyped-def]
            if (input.is_cuda or input.is_xpu) and self.ngpu > 1:
                output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
            else:
                output = self.main(input)
            return output

    class Discriminator(nn.Module):  # type: ignore[misc]
        def __init__(self, ngpu):  # type: ignore[no-untyped-def]
            super(Discriminator, self).__init__()  # noqa: UP008
            self.ngpu = ngpu
            self.main = nn.Sequential(
                # input is (nc) x 64 x 64
                nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
                nn.LeakyReLU(0.2, inplace=True),
                # state size. (ndf) x 32 x 32
                nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
                nn.BatchNorm2d(ndf * 2),
                nn.LeakyReLU(0.2, inplace=True),
                # state size. (ndf*2) x 16 x 16
                nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False),
                nn.BatchNorm2d(ndf * 4),
                nn.LeakyReLU(0.2, inplace=True),
                # state size. (ndf*4) x 8 x 8
                nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, bias=False),
                nn.BatchNorm2d(ndf * 8),
                nn.LeakyReLU(0.2, inplace=True),
                # state size. (ndf*8) x 4 x 4
                nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False),
                nn.Sigmoid(),
            )

        def forward(self, input):  # type: ignore[no-untyped-def]
            if (input.is_cuda or input.is_xpu) and self.ngpu > 1:
                output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
            else:
                output = self.main(input)

            return output.view(-1, 1).squeeze(1)

    return SimpleNamespace(
        weights_init=weights_init, Generator=Generator, Discriminator=Discriminator
    )


# The program's options (argparse defaults) shrunk: few filters, a small batch.
DCGAN_OPT = SimpleNamespace(
    batchSize=4, imageSize=64, nz=8, ngf=4, ndf=4, niter=1, lr=0.0002, beta1=0.5, workers=2
)
DCGAN_IMAGES = 12  # three batches


def dcgan_main(
    torch: Any, nn: Any, optim: Any, dataloader: Any, device: Any, opt: Any, init: Any = None
) -> dict[str, Any]:
    """The program from ``ngpu = int(opt.ngpu)`` to the end of the training loop (nc=3, the
    ``fake`` dataset); ``init`` (NumPy state dicts) replaces the initial weights when
    given; the image saving (torchvision.utils) is recorded instead."""
    saved_images: list[np.ndarray] = []
    ngpu = 1
    nz = int(opt.nz)
    ngf = int(opt.ngf)
    ndf = int(opt.ndf)
    nc = 3
    prog = dcgan_program(torch, nn, nz, ngf, ndf, nc)

    netG = prog.Generator(ngpu).to(device)
    netG.apply(prog.weights_init)
    if init is not None:
        _load(torch, netG, init["netG"])
    netD = prog.Discriminator(ngpu).to(device)
    netD.apply(prog.weights_init)
    if init is not None:
        _load(torch, netD, init["netD"])
    first = {"netG": _state(netG), "netD": _state(netD)}

    criterion = nn.BCELoss()

    fixed_noise = torch.randn(opt.batchSize, nz, 1, 1, device=device)
    real_label = 1
    fake_label = 0

    # setup optimizer
    optimizerD = optim.Adam(netD.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=opt.lr, betas=(opt.beta1, 0.999))

    log = []
    for epoch in range(opt.niter):
        for i, data in enumerate(dataloader, 0):
            ############################
            # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
            ###########################
            # train with real
            netD.zero_grad()
            real_cpu = data[0].to(device)
            batch_size = real_cpu.size(0)
            label = torch.full((batch_size,), real_label, dtype=real_cpu.dtype, device=device)

            output = netD(real_cpu)
            errD_real = criterion(output, label)
            errD_real.backward()
            D_x = output.mean().item()

            # train with fake
            noise = torch.randn(batch_size, nz, 1, 1, device=device)
            fake = netG(noise)
            label.fill_(fake_label)
            output = netD(fake.detach())
            errD_fake = criterion(output, label)
            errD_fake.backward()
            D_G_z1 = output.mean().item()
            errD = errD_real + errD_fake
            optimizerD.step()

            ############################
            # (2) Update G network: maximize log(D(G(z)))
            ###########################
            netG.zero_grad()
            label.fill_(real_label)  # fake labels are real for generator cost
            output = netD(fake)
            errG = criterion(output, label)
            errG.backward()
            D_G_z2 = output.mean().item()
            optimizerG.step()

            print(
                "[%d/%d][%d/%d] Loss_D: %.4f Loss_G: %.4f D(x): %.4f D(G(z)): %.4f / %.4f"
                % (
                    epoch,
                    opt.niter,
                    i,
                    len(dataloader),
                    errD.item(),
                    errG.item(),
                    D_x,
                    D_G_z1,
                    D_G_z2,
                )
            )
            log.append((errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
            if i % 100 == 0:
                saved_images.append(real_cpu.numpy().copy())  # vutils.save_image(real_cpu...)
                fake = netG(fixed_noise)
                saved_images.append(fake.detach().numpy().copy())  # vutils.save_image(...)

    return {
        "first": first,
        "log": log,
        "netG": _state(netG),
        "netD": _state(netD),
        "images": saved_images,
        "label": label.numpy().copy(),
    }


def _run_dcgan_ours(
    seed: int = 0, dtype: Any = np.float64
) -> tuple[dict[str, Any], _Recording, _Randn]:
    import minitorch_accel as torch
    import minitorch_accel.backends.cudnn as cudnn
    import minitorch_accel.nn as nn
    import minitorch_accel.nn.parallel  # the program's imports
    import minitorch_accel.optim as optim

    opt = DCGAN_OPT
    torch.manual_seed(seed)
    cudnn.benchmark = True
    device = torch.device("cpu")
    images = np.random.default_rng(seed).uniform(0, 1, (DCGAN_IMAGES, 3, 64, 64)).astype(dtype)
    dataset = torch.utils.data.TensorDataset(
        torch.tensor(images), torch.zeros(DCGAN_IMAGES, dtype=torch.int64)
    )  # dset.FakeData(image_size=(3, 64, 64), transform=transforms.ToTensor())
    dataloader = _Recording(
        torch.utils.data.DataLoader(
            dataset, batch_size=opt.batchSize, shuffle=True, num_workers=int(opt.workers)
        )
    )
    noise = _Randn(torch)
    try:
        with _DefaultDtype(torch, dtype):
            result = dcgan_main(noise, nn, optim, dataloader, device, opt)
    finally:
        cudnn.benchmark = False
    return result, dataloader, noise


# float32 (the program's own dtype): the frameworks sum in different orders; after three
# Adam steps the losses and most weights agree to ~2e-7 relative, so 1e-5 leaves a margin.
# Adam divides each gradient by its own running size, so where a weight's gradients
# nearly cancel from one step to the next, that rounding moves its update by a small part
# of the learning rate (seen: 0.16% of lr on one weight in 4,096, depending on the order
# of the batches): weights are also allowed 1% of lr.
DCGAN_TOLERANCE = {np.float64: (STEP_RTOL, 1e-12), np.float32: (1e-5, 1e-2 * DCGAN_OPT.lr)}


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_dcgan_trains_as_pytorch_does_from_the_same_weights(dtype: Any) -> None:
    rt = _real_torch()
    rtol, atol = DCGAN_TOLERANCE[dtype]
    ours, loader, noise = _run_dcgan_ours(dtype=dtype)
    with _DefaultDtype(rt, dtype):
        theirs = dcgan_main(
            _Randn(rt, replay=noise.drawn),
            rt.nn,
            rt.optim,
            _replayed(rt, loader),
            rt.device("cpu"),
            DCGAN_OPT,
            init=ours["first"],
        )
    assert len(ours["log"]) == math.ceil(DCGAN_IMAGES / DCGAN_OPT.batchSize)
    np.testing.assert_allclose(ours["log"], theirs["log"], rtol=rtol)
    _assert_states_close(ours["netG"], theirs["netG"], rtol, atol)
    _assert_states_close(ours["netD"], theirs["netD"], rtol, atol)
    for a, b in zip(ours["images"], theirs["images"], strict=True):
        assert a.dtype == b.dtype == dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    assert ours["label"].dtype == theirs["label"].dtype
    np.testing.assert_array_equal(ours["label"], theirs["label"])


def test_dcgan_without_pytorch_init_labels_and_losses_hold() -> None:
    ours, loader, _ = _run_dcgan_ours(seed=3)
    first = ours["first"]
    # weights_init: Conv* weights ~ N(0, 0.02), BatchNorm weights ~ N(1, 0.02), bias 0
    conv = np.concatenate(
        [v.ravel() for k, v in {**first["netG"], **first["netD"]}.items() if v.ndim == 4]
    )
    assert abs(conv.mean()) < 0.002 and 0.018 < conv.std() < 0.022
    bn_w = [v for k, v in first["netD"].items() if k.endswith(".weight") and v.ndim == 1]
    bn_b = [v for k, v in first["netD"].items() if k.endswith(".bias")]
    assert 0.9 < np.concatenate(bn_w).mean() < 1.1 and np.concatenate(bn_w).std() < 0.05
    assert all(np.all(b == 0) for b in bn_b)
    # every image was seen once, in shuffled batches of the program's size
    seen = np.concatenate([b[0] for b in loader.batches])
    assert seen.shape == (DCGAN_IMAGES, 3, 64, 64)
    # label.fill_(real_label) last: float64 ones, in place
    assert ours["label"].dtype == np.float64 and np.all(ours["label"] == 1.0)
    for err_d, err_g, d_x, d_g_z1, d_g_z2 in ours["log"]:
        assert 0 < d_x < 1 and 0 < d_g_z1 < 1 and 0 < d_g_z2 < 1
        # BCE of the mean is a lower bound of the mean of BCEs (Jensen)
        assert err_g >= -math.log(d_g_z2) - 1e-12
        assert err_d >= -math.log(d_x) - math.log(1 - d_g_z1) - 1e-12
    # the generator's images are tanh outputs
    assert np.all(np.abs(ours["images"][1]) <= 1)


# ============================================== super_resolution/model.py and main.py
def super_resolution_model(nn: Any, init: Any) -> Any:
    """``super_resolution/model.py``'s ``Net``, verbatim."""

    class Net(nn.Module):  # type: ignore[misc]
        def __init__(self, upscale_factor):  # type: ignore[no-untyped-def]
            super(Net, self).__init__()  # noqa: UP008

            self.relu = nn.ReLU()
            self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
            self.conv2 = nn.Conv2d(64, 64, (3, 3), (1, 1), (1, 1))
            self.conv3 = nn.Conv2d(64, 32, (3, 3), (1, 1), (1, 1))
            self.conv4 = nn.Conv2d(32, upscale_factor**2, (3, 3), (1, 1), (1, 1))
            self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

            self._initialize_weights()

        def forward(self, x):  # type: ignore[no-untyped-def]
            x = self.relu(self.conv1(x))
            x = self.relu(self.conv2(x))
            x = self.relu(self.conv3(x))
            x = self.pixel_shuffle(self.conv4(x))
            return x

        def _initialize_weights(self):  # type: ignore[no-untyped-def]
            init.orthogonal_(self.conv1.weight, init.calculate_gain("relu"))
            init.orthogonal_(self.conv2.weight, init.calculate_gain("relu"))
            init.orthogonal_(self.conv3.weight, init.calculate_gain("relu"))
            init.orthogonal_(self.conv4.weight)

    return Net


def super_resolution_dataset(data: Any) -> Any:
    """``super_resolution/dataset.py``, verbatim."""
    from os import listdir
    from os.path import join

    from PIL import Image

    def is_image_file(filename):  # type: ignore[no-untyped-def]
        return any(filename.endswith(extension) for extension in [".png", ".jpg", ".jpeg"])

    def load_img(filepath):  # type: ignore[no-untyped-def]
        img = Image.open(filepath).convert("YCbCr")
        y, _, _ = img.split()
        return y

    class DatasetFromFolder(data.Dataset):  # type: ignore[misc]
        def __init__(self, image_dir, input_transform=None, target_transform=None):  # type: ignore[no-untyped-def]
            super(DatasetFromFolder, self).__init__()  # noqa: UP008
            self.image_filenames = [
                join(image_dir, x) for x in sorted(listdir(image_dir)) if is_image_file(x)
            ]

            self.input_transform = input_transform
            self.target_transform = target_transform

        def __getitem__(self, index):  # type: ignore[no-untyped-def]
            input = load_img(self.image_filenames[index])
            target = input.copy()
            if self.input_transform:
                input = self.input_transform(input)
            if self.target_transform:
                target = self.target_transform(target)

            return input, target

        def __len__(self):  # type: ignore[no-untyped-def]
            return len(self.image_filenames)

    return DatasetFromFolder


def super_resolution_data(
    transforms: Any, data: Any, root: Path, crop_size: int, up: int, dtype: Any = np.float32
) -> Any:
    """``super_resolution/data.py`` without the BSD300 download: synthetic images written
    to ``root``; torchvision's ``CenterCrop`` and ``Resize`` (bilinear, on PIL images)
    written with PIL inside ``transforms.Lambda``; for ``dtype`` float64 a last
    ``transforms.Lambda(lambda x: x.double())``."""
    from PIL import Image

    rng = np.random.default_rng(7)
    for split, count in (("train", 8), ("test", 4)):
        (root / split).mkdir(parents=True)
        for k in range(count):
            pixels = rng.integers(0, 256, (crop_size + 4, crop_size + 6, 3), dtype=np.uint8)
            Image.fromarray(pixels, "RGB").save(root / split / f"{k:03d}.png")

    def center_crop(size: int) -> Any:
        def crop(img: Any) -> Any:
            w, h = img.size
            left, top = int(round((w - size) / 2.0)), int(round((h - size) / 2.0))
            return img.crop((left, top, left + size, top + size))

        return transforms.Lambda(crop)

    def resize(size: int) -> Any:
        return transforms.Lambda(lambda img: img.resize((size, size), Image.Resampling.BILINEAR))

    as_dtype = [transforms.Lambda(lambda x: x.double())] if dtype == np.float64 else []

    def input_transform(crop_size, upscale_factor):  # type: ignore[no-untyped-def]
        return transforms.Compose(
            [center_crop(crop_size), resize(crop_size // upscale_factor), transforms.ToTensor()]
            + as_dtype
        )

    def target_transform(crop_size):  # type: ignore[no-untyped-def]
        return transforms.Compose([center_crop(crop_size), transforms.ToTensor()] + as_dtype)

    DatasetFromFolder = super_resolution_dataset(data)

    def get_set(split: str) -> Any:
        return DatasetFromFolder(
            str(root / split),
            input_transform=input_transform(crop_size, up),
            target_transform=target_transform(crop_size),
        )

    return get_set("train"), get_set("test")


SR_OPT = SimpleNamespace(
    upscale_factor=3, batchSize=4, testBatchSize=2, nEpochs=2, lr=0.01, threads=2, seed=123
)
SR_CROP = 24  # calculate_valid_crop_size(24, 3): inputs 8x8, targets 24x24


def super_resolution_main(
    torch: Any,
    nn: Any,
    optim: Any,
    Net: Any,
    DataLoader: Any,
    train_set: Any,
    test_set: Any,
    opt: Any,
    out_dir: Path,
    init: Any = None,
    loaders: Any = None,
) -> dict[str, Any]:
    """``super_resolution/main.py`` after argparse; ``init`` (NumPy state dict) replaces
    the initial weights and ``loaders`` the two data loaders when given."""
    log: dict[str, Any] = {"loss": [], "psnr": []}
    torch.manual_seed(opt.seed)
    device = torch.device("cpu")

    print("===> Loading datasets")
    training_data_loader = DataLoader(
        dataset=train_set, num_workers=opt.threads, batch_size=opt.batchSize, shuffle=True
    )
    testing_data_loader = DataLoader(
        dataset=test_set, num_workers=opt.threads, batch_size=opt.testBatchSize, shuffle=False
    )
    if loaders is not None:
        training_data_loader, testing_data_loader = loaders

    print("===> Building model")
    model = Net(upscale_factor=opt.upscale_factor).to(device)
    if init is not None:
        _load(torch, model, init)
    log["first"] = _state(model)
    criterion = nn.MSELoss()

    optimizer = optim.Adam(model.parameters(), lr=opt.lr)

    def train(epoch):  # type: ignore[no-untyped-def]
        epoch_loss = 0
        for iteration, batch in enumerate(training_data_loader, 1):
            input, target = batch[0].to(device), batch[1].to(device)

            optimizer.zero_grad()
            loss = criterion(model(input), target)
            epoch_loss += loss.item()
            loss.backward()
            optimizer.step()

            print(
                "===> Epoch[{}]({}/{}): Loss: {:.4f}".format(  # noqa: UP032
                    epoch, iteration, len(training_data_loader), loss.item()
                )
            )
            log["loss"].append(loss.item())

        print(
            "===> Epoch {} Complete: Avg. Loss: {:.4f}".format(  # noqa: UP032
                epoch, epoch_loss / len(training_data_loader)
            )
        )

    def test():  # type: ignore[no-untyped-def]
        avg_psnr = 0
        with torch.no_grad():
            for batch in testing_data_loader:
                input, target = batch[0].to(device), batch[1].to(device)

                prediction = model(input)
                mse = criterion(prediction, target)
                psnr = 10 * log10(1 / mse.item())
                avg_psnr += psnr  # type: ignore[assignment]
                log.setdefault("predictions", []).append(prediction.numpy().copy())
        print("===> Avg. PSNR: {:.4f} dB".format(avg_psnr / len(testing_data_loader)))  # noqa: UP032
        log["psnr"].append(avg_psnr / len(testing_data_loader))

    def checkpoint(epoch):  # type: ignore[no-untyped-def]
        model_out_path = str(out_dir / "model_epoch_{}.pth".format(epoch))  # noqa: UP032
        # torch.save(model, model_out_path) pickles the module: minitorch_accel's
        # checkpoints hold data only, so the port saves the state_dict
        torch.save(model.state_dict(), model_out_path)
        print("Checkpoint saved to {}".format(model_out_path))  # noqa: UP032
        log["checkpoint"] = model_out_path

    for epoch in range(1, opt.nEpochs + 1):
        train(epoch)
        test()
        checkpoint(epoch)

    log["last"] = _state(model)
    return log


def _run_super_resolution_ours(
    tmp_path: Path, dtype: Any = np.float32
) -> tuple[dict[str, Any], list[_Recording]]:
    import minitorch_accel as torch
    import minitorch_accel.nn as nn
    import minitorch_accel.nn.init as init
    import minitorch_accel.optim as optim
    import minitorch_accel.utils.data as data
    from minitorch_accel import transforms
    from minitorch_accel.utils.data import DataLoader

    recorded: list[_Recording] = []

    def recording_loader(**kwargs: Any) -> _Recording:
        recorded.append(_Recording(DataLoader(**kwargs)))
        return recorded[-1]

    train_set, test_set = super_resolution_data(
        transforms, data, tmp_path / "dataset", SR_CROP, SR_OPT.upscale_factor, dtype
    )
    Net = super_resolution_model(nn, init)
    with _DefaultDtype(torch, dtype):
        log = super_resolution_main(
            torch, nn, optim, Net, recording_loader, train_set, test_set, SR_OPT, tmp_path
        )
    return log, recorded


# float32 (ToTensor's dtype, the program's): the frameworks sum in different orders, and
# Adam turns a rounding-level gradient into a step of up to lr (0.01): a few weights of
# near-zero gradient differ by ~1e-5 after four steps, the losses by ~1e-6 relative.
SR_TOLERANCE = {np.float64: (STEP_RTOL, 1e-12, 1e-12), np.float32: (2e-5, 2e-6, 1e-4)}


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_super_resolution_trains_as_pytorch_does_from_the_same_weights(
    tmp_path: Path, dtype: Any
) -> None:
    rt = _real_torch()
    import torch.nn.init as rt_init

    rtol, atol, weight_atol = SR_TOLERANCE[dtype]
    ours, (train_loader, test_loader) = _run_super_resolution_ours(tmp_path / "ours", dtype)
    (tmp_path / "theirs").mkdir()
    with _DefaultDtype(rt, dtype):
        theirs = super_resolution_main(
            rt,
            rt.nn,
            rt.optim,
            super_resolution_model(rt.nn, rt_init),
            lambda **kwargs: None,  # the loaders are replayed
            None,
            None,
            SR_OPT,
            tmp_path / "theirs",
            init=ours["first"],
            loaders=(_replayed(rt, train_loader), _replayed(rt, test_loader)),
        )
    assert len(ours["loss"]) == SR_OPT.nEpochs * math.ceil(8 / SR_OPT.batchSize)
    np.testing.assert_allclose(ours["loss"], theirs["loss"], rtol=rtol)
    np.testing.assert_allclose(ours["psnr"], theirs["psnr"], rtol=rtol)
    for a, b in zip(ours["predictions"], theirs["predictions"], strict=True):
        assert a.dtype == b.dtype == dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    _assert_states_close(ours["last"], theirs["last"], rtol, weight_atol)


def test_super_resolution_without_pytorch_init_data_psnr_and_checkpoint(tmp_path: Path) -> None:
    import minitorch_accel as torch

    ours, (train_loader, test_loader) = _run_super_resolution_ours(tmp_path)
    gain = math.sqrt(2.0)  # calculate_gain('relu')
    for name, scale in [("conv1", gain), ("conv2", gain), ("conv3", gain), ("conv4", 1.0)]:
        w = ours["first"][name + ".weight"]
        rows = w.reshape(w.shape[0], -1).astype(np.float64)
        small = rows @ rows.T if rows.shape[0] <= rows.shape[1] else rows.T @ rows
        np.testing.assert_allclose(small, scale**2 * np.eye(len(small)), atol=1e-5, err_msg=name)
    # the data: Y channels cropped and shrunk by PIL, [0, 1] float32, shuffled in training
    inputs, targets = test_loader.batches[0]
    assert inputs.shape == (2, 1, 8, 8) and targets.shape == (2, 1, 24, 24)
    assert inputs.dtype == targets.dtype == np.float32
    assert targets.min() >= 0.0 and targets.max() <= 1.0
    epoch1 = np.concatenate([b[1] for b in train_loader.batches[:2]])
    epoch2 = np.concatenate([b[1] for b in train_loader.batches[2:]])
    key = epoch1.reshape(8, -1)[:, 0].argsort()
    np.testing.assert_array_equal(
        np.sort(epoch1.reshape(8, -1), 0), np.sort(epoch2.reshape(8, -1), 0)
    )
    assert key.shape == (8,)
    # the PSNR of the last test pass, from the predictions and targets by NumPy
    test_targets = np.concatenate([b[1] for b in test_loader.batches[2:]])
    predictions = ours["predictions"][2:]
    psnrs = [
        10 * log10(1 / float(np.mean((p.astype(np.float64) - t) ** 2)))
        for p, t in zip(predictions, np.split(test_targets, 2), strict=True)
    ]
    assert ours["psnr"][-1] == pytest.approx(np.mean(psnrs), rel=1e-5)
    # the checkpoint holds the last weights
    saved = torch.load(ours["checkpoint"])
    assert list(saved) == list(ours["last"])
    for k, v in saved.items():
        np.testing.assert_array_equal(v.numpy(), ours["last"][k])


# ============================================= fast_neural_style/neural_style/*.py
def transformer_net(torch: Any) -> Any:
    """``transformer_net.py``, verbatim: TransformerNet and its three layer classes."""

    class TransformerNet(torch.nn.Module):  # type: ignore[misc]
        def __init__(self):  # type: ignore[no-untyped-def]
            super(TransformerNet, self).__init__()  # noqa: UP008
            # Initial convolution layers
            self.conv1 = ConvLayer(3, 32, kernel_size=9, stride=1)
            self.in1 = torch.nn.InstanceNorm2d(32, affine=True)
            self.conv2 = ConvLayer(32, 64, kernel_size=3, stride=2)
            self.in2 = torch.nn.InstanceNorm2d(64, affine=True)
            self.conv3 = ConvLayer(64, 128, kernel_size=3, stride=2)
            self.in3 = torch.nn.InstanceNorm2d(128, affine=True)
            # Residual layers
            self.res1 = ResidualBlock(128)
            self.res2 = ResidualBlock(128)
            self.res3 = ResidualBlock(128)
            self.res4 = ResidualBlock(128)
            self.res5 = ResidualBlock(128)
            # Upsampling Layers
            self.deconv1 = UpsampleConvLayer(128, 64, kernel_size=3, stride=1, upsample=2)
            self.in4 = torch.nn.InstanceNorm2d(64, affine=True)
            self.deconv2 = UpsampleConvLayer(64, 32, kernel_size=3, stride=1, upsample=2)
            self.in5 = torch.nn.InstanceNorm2d(32, affine=True)
            self.deconv3 = ConvLayer(32, 3, kernel_size=9, stride=1)
            # Non-linearities
            self.relu = torch.nn.ReLU()

        def forward(self, X):  # type: ignore[no-untyped-def]
            y = self.relu(self.in1(self.conv1(X)))
            y = self.relu(self.in2(self.conv2(y)))
            y = self.relu(self.in3(self.conv3(y)))
            y = self.res1(y)
            y = self.res2(y)
            y = self.res3(y)
            y = self.res4(y)
            y = self.res5(y)
            y = self.relu(self.in4(self.deconv1(y)))
            y = self.relu(self.in5(self.deconv2(y)))
            y = self.deconv3(y)
            return y

    class ConvLayer(torch.nn.Module):  # type: ignore[misc]
        def __init__(self, in_channels, out_channels, kernel_size, stride):  # type: ignore[no-untyped-def]
            super(ConvLayer, self).__init__()  # noqa: UP008
            reflection_padding = kernel_size // 2
            self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
            self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

        def forward(self, x):  # type: ignore[no-untyped-def]
            out = self.reflection_pad(x)
            out = self.conv2d(out)
            return out

    class ResidualBlock(torch.nn.Module):  # type: ignore[misc]
        """ResidualBlock
        introduced in: https://arxiv.org/abs/1512.03385
        recommended architecture: http://torch.ch/blog/2016/02/04/resnets.html
        """

        def __init__(self, channels):  # type: ignore[no-untyped-def]
            super(ResidualBlock, self).__init__()  # noqa: UP008
            self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
            self.in1 = torch.nn.InstanceNorm2d(channels, affine=True)
            self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
            self.in2 = torch.nn.InstanceNorm2d(channels, affine=True)
            self.relu = torch.nn.ReLU()

        def forward(self, x):  # type: ignore[no-untyped-def]
            residual = x
            out = self.relu(self.in1(self.conv1(x)))
            out = self.in2(self.conv2(out))
            out = out + residual
            return out

    class UpsampleConvLayer(torch.nn.Module):  # type: ignore[misc]
        """UpsampleConvLayer
        Upsamples the input and then does a convolution. This method gives better results
        compared to ConvTranspose2d.
        ref: http://distill.pub/2016/deconv-checkerboard/
        """

        def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):  # type: ignore[no-untyped-def]
            super(UpsampleConvLayer, self).__init__()  # noqa: UP008
            self.upsample = upsample
            reflection_padding = kernel_size // 2
            self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
            self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

        def forward(self, x):  # type: ignore[no-untyped-def]
            x_in = x
            if self.upsample:
                x_in = torch.nn.functional.interpolate(
                    x_in, mode="nearest", scale_factor=self.upsample
                )
            out = self.reflection_pad(x_in)
            out = self.conv2d(out)
            return out

    return TransformerNet


def style_utils(torch: Any) -> Any:  # noqa: C901  (utils.py and vgg.py, verbatim, in one)
    """``utils.py``'s ``gram_matrix``, ``normalize_batch`` and ``save_image``, verbatim, and
    the stand-in for ``vgg.py``'s ``Vgg16`` (the same four named outputs, from layers
    without weights: the pretrained VGG16 would need torchvision and a download)."""
    from PIL import Image

    def save_image(filename, data):  # type: ignore[no-untyped-def]
        img = data.clone().clamp(0, 255).numpy()
        img = img.transpose(1, 2, 0).astype("uint8")
        img = Image.fromarray(img)
        img.save(filename)

    def gram_matrix(y):  # type: ignore[no-untyped-def]
        (b, ch, h, w) = y.size()
        features = y.view(b, ch, w * h)
        features_t = features.transpose(1, 2)
        gram = features.bmm(features_t) / (ch * h * w)
        return gram

    def normalize_batch(batch):  # type: ignore[no-untyped-def]
        # normalize using imagenet mean and std
        mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
        std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
        batch = batch.div_(255.0)
        return (batch - mean) / std

    class Vgg16(torch.nn.Module):  # type: ignore[misc]
        def __init__(self, requires_grad=False):  # type: ignore[no-untyped-def]
            super(Vgg16, self).__init__()  # noqa: UP008
            stand_in_features = [  # in place of models.vgg16(weights=...).features
                torch.nn.ReLU(inplace=True),
                torch.nn.AvgPool2d(kernel_size=2, stride=2),
                torch.nn.ReLU(inplace=True),
                torch.nn.AvgPool2d(kernel_size=2, stride=2),
                torch.nn.MaxPool2d(kernel_size=2, stride=2),
            ]
            self.slice1 = torch.nn.Sequential()
            self.slice2 = torch.nn.Sequential()
            self.slice3 = torch.nn.Sequential()
            self.slice4 = torch.nn.Sequential()
            for x in range(1):
                self.slice1.add_module(str(x), stand_in_features[x])
            for x in range(1, 3):
                self.slice2.add_module(str(x), stand_in_features[x])
            for x in range(3, 4):
                self.slice3.add_module(str(x), stand_in_features[x])
            for x in range(4, 5):
                self.slice4.add_module(str(x), stand_in_features[x])
            if not requires_grad:
                for param in self.parameters():
                    param.requires_grad = False

        def forward(self, X):  # type: ignore[no-untyped-def]
            h = self.slice1(X)
            h_relu1_2 = h
            h = self.slice2(h)
            h_relu2_2 = h
            h = self.slice3(h)
            h_relu3_3 = h
            h = self.slice4(h)
            h_relu4_3 = h
            vgg_outputs = namedtuple("VggOutputs", ["relu1_2", "relu2_2", "relu3_3", "relu4_3"])  # type: ignore[name-match]
            out = vgg_outputs(h_relu1_2, h_relu2_2, h_relu3_3, h_relu4_3)
            return out

    return SimpleNamespace(
        save_image=save_image,
        gram_matrix=gram_matrix,
        normalize_batch=normalize_batch,
        Vgg16=Vgg16,
    )


STYLE_ARGS = SimpleNamespace(
    epochs=2,
    batch_size=2,
    image_size=16,
    seed=42,
    content_weight=1e5,
    style_weight=1e10,
    lr=1e-3,
    log_interval=1,
    checkpoint_interval=1,
)
STYLE_IMAGES = 4  # two batches an epoch


def style_images(dtype: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training images, a style image and a content image, as the program's transforms
    make them: ToTensor of 8-bit pixels, times 255 (``x.mul(255)``), in ``dtype``."""
    rng = np.random.default_rng(11)
    size = STYLE_ARGS.image_size
    pixels = rng.integers(0, 256, (STYLE_IMAGES + 2, 3, size, size)).astype(dtype)
    return pixels[:STYLE_IMAGES], pixels[STYLE_IMAGES], pixels[STYLE_IMAGES + 1]


def neural_style_train_and_stylize(
    torch: Any, DataLoader: Any, Adam: Any, args: Any, dtype: Any, init: Any = None
) -> dict[str, Any]:
    """``neural_style.py``'s ``train(args)`` then ``stylize(args)``, on the images of
    :func:`style_images` (ImageFolder and the image files stand aside)."""
    utils = style_utils(torch)
    TransformerNet = transformer_net(torch)
    Vgg16 = utils.Vgg16
    images, style_pixels, content_pixels = style_images(dtype)
    log: dict[str, Any] = {"content": [], "style": [], "messages": []}

    # ------------------------------------------------------------------ train(args)
    device = torch.device("cpu")
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    train_dataset = torch.utils.data.TensorDataset(
        torch.from_numpy(images), torch.zeros(len(images))
    )  # datasets.ImageFolder(args.dataset, transform): x.mul(255) done
    train_loader = DataLoader(train_dataset, batch_size=args.batch_size)

    transformer = TransformerNet().to(device)
    if init is not None:
        _load(torch, transformer, init)
    log["first"] = _state(transformer)
    optimizer = Adam(transformer.parameters(), args.lr)
    mse_loss = torch.nn.MSELoss()

    vgg = Vgg16(requires_grad=False).to(device)
    style = torch.from_numpy(style_pixels.copy())  # style_transform(utils.load_image(...))
    style = style.repeat(args.batch_size, 1, 1, 1).to(device)

    features_style = vgg(utils.normalize_batch(style))
    gram_style = [utils.gram_matrix(y) for y in features_style]

    for e in range(args.epochs):
        transformer.train()
        agg_content_loss = 0.0
        agg_style_loss = 0.0
        count = 0
        for batch_id, (x, _) in enumerate(train_loader):
            n_batch = len(x)
            count += n_batch
            optimizer.zero_grad()

            x = x.to(device)
            y = transformer(x)

            y = utils.normalize_batch(y)
            x = utils.normalize_batch(x)

            features_y = vgg(y)
            features_x = vgg(x)

            content_loss = args.content_weight * mse_loss(features_y.relu2_2, features_x.relu2_2)

            style_loss = 0.0
            for ft_y, gm_s in zip(features_y, gram_style):  # noqa: B905  (verbatim)
                gm_y = utils.gram_matrix(ft_y)
                style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
            style_loss *= args.style_weight

            total_loss = content_loss + style_loss
            total_loss.backward()
            optimizer.step()

            agg_content_loss += content_loss.item()
            agg_style_loss += style_loss.item()
            log["content"].append(content_loss.item())
            log["style"].append(style_loss.item())

            if (batch_id + 1) % args.log_interval == 0:
                mesg = "Epoch {}:\t[{}/{}]\tcontent: {:.6f}\tstyle: {:.6f}\ttotal: {:.6f}".format(  # noqa: UP032
                    e + 1,
                    count,
                    len(train_dataset),
                    agg_content_loss / (batch_id + 1),
                    agg_style_loss / (batch_id + 1),
                    (agg_content_loss + agg_style_loss) / (batch_id + 1),
                )
                log["messages"].append(mesg)

            if (
                args.checkpoint_model_dir is not None
                and (batch_id + 1) % args.checkpoint_interval == 0
            ):
                transformer.eval().cpu()
                ckpt_model_filename = (
                    "ckpt_epoch_" + str(e) + "_batch_id_" + str(batch_id + 1) + ".pth"
                )
                ckpt_model_path = str(Path(args.checkpoint_model_dir) / ckpt_model_filename)
                torch.save(transformer.state_dict(), ckpt_model_path)
                transformer.to(device).train()

    log["grads"] = {
        name: p.grad.numpy().copy() for name, p in transformer.named_parameters()
    }  # of the last step
    # save model
    transformer.eval().cpu()
    save_model_path = str(Path(args.save_model_dir) / f"epoch_{args.epochs}.model")
    torch.save(transformer.state_dict(), save_model_path)
    log["last"] = _state(transformer)

    # ---------------------------------------------------------------- stylize(args)
    content_image = torch.from_numpy(content_pixels.copy())  # content_transform(...)
    content_image = content_image.unsqueeze(0).to(device)

    with torch.no_grad():
        style_model = TransformerNet()
        state_dict = torch.load(save_model_path)
        # remove saved deprecated running_* keys in InstanceNorm from the checkpoint
        for k in list(state_dict.keys()):
            if re.search(r"in\d+\.running_(mean|var)$", k):
                del state_dict[k]
        style_model.load_state_dict(state_dict)
        style_model.to(device)
        style_model.eval()
        output = style_model(content_image).cpu()
    utils.save_image(args.output_image, output[0])
    log["output"] = output.numpy().copy()
    log["transformer"] = transformer
    return log


def _style_args(tmp_path: Path) -> Any:
    (tmp_path / "ckpt").mkdir(parents=True)
    return SimpleNamespace(
        **vars(STYLE_ARGS),
        save_model_dir=str(tmp_path),
        checkpoint_model_dir=str(tmp_path / "ckpt"),
        output_image=str(tmp_path / "out.png"),
    )


def _run_style_ours(tmp_path: Path, dtype: Any) -> dict[str, Any]:
    import minitorch_accel as torch
    from minitorch_accel.optim import Adam
    from minitorch_accel.utils.data import DataLoader

    with _DefaultDtype(torch, dtype):
        return neural_style_train_and_stylize(torch, DataLoader, Adam, _style_args(tmp_path), dtype)


def _gradient_free(name: str) -> bool:
    """Parameters whose gradient is zero in exact arithmetic: every conv bias followed by
    an InstanceNorm (it removes a per-channel constant), and each residual block's
    ``in2.bias``, a per-channel constant carried to the next InstanceNorm. Adam turns
    their rounding-level gradients into steps of up to ``lr``."""
    if name.endswith("conv2d.bias"):
        return not name.startswith("deconv3.")
    return re.fullmatch(r"res\d\.in2\.bias", name) is not None


# float32 (the program's dtype): the style loss is ~1e10, so rounding differences between
# the frameworks are larger in absolute terms; 2e-4 relative on the losses after four
# Adam steps (observed ~1e-5).
STYLE_TOLERANCE = {np.float64: (STEP_RTOL, 1e-12), np.float32: (2e-4, 2e-5)}


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_fast_neural_style_trains_and_stylizes_as_pytorch_does(tmp_path: Path, dtype: Any) -> None:
    rt = _real_torch()
    rtol, atol = STYLE_TOLERANCE[dtype]
    ours = _run_style_ours(tmp_path / "ours", dtype)
    with _DefaultDtype(rt, dtype):
        theirs = neural_style_train_and_stylize(
            rt,
            rt.utils.data.DataLoader,
            rt.optim.Adam,
            _style_args(tmp_path / "theirs"),
            dtype,
            init=ours["first"],
        )
    steps = STYLE_ARGS.epochs * STYLE_IMAGES // STYLE_ARGS.batch_size
    assert len(ours["content"]) == steps
    np.testing.assert_allclose(ours["content"], theirs["content"], rtol=rtol)
    np.testing.assert_allclose(ours["style"], theirs["style"], rtol=rtol)
    assert len(ours["messages"]) == steps
    for name in ours["grads"]:
        if not _gradient_free(name):
            scale = np.abs(theirs["grads"][name]).max()
            np.testing.assert_allclose(
                ours["grads"][name], theirs["grads"][name], rtol=rtol, atol=atol * scale
            )
    _assert_states_close(ours["last"], theirs["last"], rtol, atol, skip=_gradient_free)
    for name in filter(_gradient_free, ours["last"]):  # each step moves them by <= lr
        moved = np.abs(ours["last"][name] - ours["first"][name]).max()
        assert moved <= steps * STYLE_ARGS.lr * 1.01
    np.testing.assert_allclose(ours["output"], theirs["output"], rtol=rtol, atol=atol * 255)
    if dtype == np.float64:
        from PIL import Image

        ours_png = np.asarray(Image.open(tmp_path / "ours" / "out.png"))
        theirs_png = np.asarray(Image.open(tmp_path / "theirs" / "out.png"))
        np.testing.assert_array_equal(ours_png, theirs_png)


def test_fast_neural_style_without_pytorch_shapes_invariance_and_checkpoints(
    tmp_path: Path,
) -> None:
    import minitorch_accel as torch

    ours = _run_style_ours(tmp_path, np.float64)
    size = STYLE_ARGS.image_size
    assert ours["output"].shape == (1, 3, size, size)
    # InstanceNorm removes per-channel constants: those gradients are rounding noise
    grads = ours["grads"]
    for name in filter(_gradient_free, grads):
        partner = name.replace("bias", "weight")
        assert np.abs(grads[name]).max() <= 1e-9 * np.abs(grads[partner]).max(), name
    assert sum(map(_gradient_free, grads)) == 3 + 5 * 3 + 2  # conv1-3, res 3 each, deconv1-2
    # no running statistics (track_running_stats=False), affine weights and biases
    assert not any("running" in k for k in ours["last"])
    assert ours["last"]["in1.weight"].shape == (32,)
    # eval().cpu() returned the module; the checkpoints hold the weights of their step
    assert ours["transformer"].training is False
    saved = torch.load(str(tmp_path / f"epoch_{STYLE_ARGS.epochs}.model"))
    for k, v in saved.items():
        np.testing.assert_array_equal(v.numpy(), ours["last"][k])
    assert len(list((tmp_path / "ckpt").iterdir())) == STYLE_ARGS.epochs * 2
    # the saved image is the clamped output, channels last, as 8-bit pixels
    from PIL import Image

    png = np.asarray(Image.open(tmp_path / "out.png"))
    expected = np.clip(ours["output"][0], 0, 255).transpose(1, 2, 0).astype("uint8")
    np.testing.assert_array_equal(png, expected)


# ======================================================== regressions found by the ports
DEVICE_KINDS = {"cpu": (True, False), "cpu:1": (True, False), "cuda": (False, True)}


def test_is_cpu_is_cuda_is_xpu_say_where_the_tensor_lives(device: str) -> None:
    """DCGAN's ``input.is_cuda or input.is_xpu``: the Tensor had neither."""
    x = minitorch_accel.ones(2, device=device)
    is_cpu, is_cuda = DEVICE_KINDS[device]
    assert (x.is_cpu, x.is_cuda, x.is_xpu) == (is_cpu, is_cuda, False)
    assert (x.sum().is_cpu, x[0].is_cuda) == (is_cpu, is_cuda)
    if device == "cpu":
        rt = _real_torch()
        y = rt.ones(2)
        assert (y.is_cpu, y.is_cuda, y.is_xpu) == (x.is_cpu, x.is_cuda, x.is_xpu)


def test_the_programs_backend_settings_and_parallel_import() -> None:
    """DCGAN's ``import torch.nn.parallel`` and ``torch.backends.cudnn.benchmark = True``."""
    import minitorch_accel.backends.cudnn as cudnn

    assert minitorch_accel.nn.parallel.DataParallel is minitorch_accel.nn.DataParallel
    assert minitorch_accel.backends.cudnn is cudnn
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (
        True,
        False,
        False,
        True,
    )  # PyTorch's defaults
    assert cudnn.is_available() is False and cudnn.version() is None
    _real_torch()
    import torch.backends.cudnn as rt_cudnn

    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(cudnn, name) == getattr(rt_cudnn, name), name


def test_data_parallel_function_equals_the_module_call_and_its_gradients() -> None:
    """``nn.parallel.data_parallel(self.main, input, range(ngpu))``, the path DCGAN takes
    with several GPUs, run over virtual CPU devices: the outputs and the gradients of
    the module's own parameters are those of one call on one device."""
    nn = minitorch_accel.nn
    minitorch_accel.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).to("cpu:1").double()
    x = minitorch_accel.randn(7, 3, device="cpu:1", dtype=minitorch_accel.float64)
    out = nn.parallel.data_parallel(net, x, ["cpu:1", "cpu:2", "cpu:3"])
    out.pow(2).sum().backward()
    split = [p.grad.numpy().copy() for p in net.parameters()]
    net.zero_grad()
    expected = net(x)
    expected.pow(2).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    for got, want in zip(split, [p.grad.numpy() for p in net.parameters()], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert out.device == minitorch_accel.device("cpu:1")
    one = nn.parallel.data_parallel(net, (x,), module_kwargs={})  # a tuple of inputs
    np.testing.assert_allclose(one.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="device_ids\\[0\\]"):
        nn.parallel.data_parallel(net, x, ["cpu:2", "cpu:3"])


@pytest.mark.parametrize(
    "shape, sizes",
    [((3, 4), (1, 1)), ((2,), (3,)), ((3, 2, 2), (2, 1, 1, 1)), ((2, 1), (2, 3))],
)
def test_repeat_returns_memory_of_its_own(shape: tuple[int, ...], sizes: tuple[int, ...]) -> None:
    """fast_neural_style's ``style.repeat(batch, 1, 1, 1)`` then ``batch.div_(255.0)``:
    repeat returned a read-only view (stride 0) of its input, or the input itself when
    every size was 1, so the in-place division raised or changed the input."""
    values = np.arange(float(np.prod(shape))).reshape(shape) + 1.0
    x = minitorch_accel.tensor(values)
    y = x.repeat(*sizes)
    y.div_(255.0)
    np.testing.assert_array_equal(x.numpy(), values)  # the input is untouched
    np.testing.assert_array_equal(y.numpy(), np.tile(values, sizes) / 255.0)  # NumPy
    y[(0,) * y.ndim] = -1.0  # one element of the result, not every copy of it
    assert (y.numpy() == -1.0).sum() == 1
    rt = _real_torch()
    z = rt.tensor(values).repeat(*sizes).div_(255.0)
    z[(0,) * z.ndim] = -1.0
    np.testing.assert_array_equal(y.numpy(), z.numpy())
    w = minitorch_accel.tensor(values, requires_grad=True)
    assert gradcheck(lambda t: t.repeat(*sizes) * 2.0, (w,))
    assert gradgradcheck(lambda t: t.repeat(*sizes).pow(2), (w,))


NON_FINITE = [-math.inf, -2.0, -0.0, 0.0, 0.5, 2.0, math.inf, math.nan]


def _accumulate(lib: Any, w: Any) -> Any:
    """``style_loss = 0.; style_loss += mse(...)`` and more in-place arithmetic on the
    0-d sum: the program's idiom, and the recorded in-place ops after it."""
    total = 0.0
    total += (w * w).mean()
    total += w.exp().sum()
    total *= 3.0
    total -= w.sum()
    total /= 2.0
    return total


@pytest.mark.parametrize("value", NON_FINITE)
@pytest.mark.parametrize("seed_grad", [1.0, math.inf])
def test_accumulating_a_loss_in_place_from_a_python_float(value: float, seed_grad: float) -> None:
    """``total = 0.; total += loss`` makes a 0-d tensor whose array is a NumPy scalar; a
    second ``+=`` (recorded for autograd) raised "'numpy.float64' object does not support
    item assignment"."""
    values = np.array([value, 1.5, -0.25])
    w = minitorch_accel.tensor(values, requires_grad=True)
    total = _accumulate(minitorch_accel, w)
    assert total.shape == () and total.requires_grad
    total.backward(minitorch_accel.tensor(seed_grad, dtype=minitorch_accel.float64))
    with np.errstate(all="ignore"):  # NumPy reference, summed per path as backward does
        want_value = (3.0 * (np.mean(values**2) + np.exp(values).sum()) - values.sum()) / 2.0
        g = seed_grad / 2.0
        want_grad = 3.0 * g * (2.0 * values / 3.0) + 3.0 * g * np.exp(values) - g
    np.testing.assert_array_equal(total.item(), want_value)
    np.testing.assert_allclose(w.grad.numpy(), want_grad, rtol=1e-14)
    rt = _real_torch()
    v = rt.tensor(values, requires_grad=True)
    t = _accumulate(rt, v)
    t.backward(rt.tensor(seed_grad, dtype=rt.float64))
    np.testing.assert_array_equal(total.item(), t.item())  # NaN, inf and zeros alike
    np.testing.assert_allclose(w.grad.numpy(), v.grad.numpy(), rtol=1e-15)
    np.testing.assert_array_equal(np.signbit(w.grad.numpy()), np.signbit(v.grad.numpy()))
    np.testing.assert_array_equal(np.isnan(w.grad.numpy()), np.isnan(v.grad.numpy()))


def test_accumulated_float32_loss_keeps_its_dtype_and_graph() -> None:
    w = minitorch_accel.ones(3, requires_grad=True)
    total: Any = 0.0
    for k in range(3):
        total += (w * (k + 1)).sum()
    assert total.dtype == np.float32
    total.backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.full(3, 6.0, np.float32))
