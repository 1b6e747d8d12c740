"""The names of PyTorch that "Coming from PyTorch" lists, each with its status here.

This list is the single source of the table on ``docs/coming_from_pytorch.rst``:
``conf.py`` calls :func:`write_table` before Sphinx reads any page, and
``tests/test_pytorch_names.py`` checks that every name marked available resolves in
``minitorch_accel`` (and that every name marked missing does not), so the table cannot
drift from the package. Run it alone (``python docs/pytorch_names.py``) to print what
resolves.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TABLE = HERE / "generated" / "pytorch_names.rst"

AVAILABLE, DIFFERS, MISSING = "available", "differs", "missing"


@dataclass(frozen=True)
class Name:
    """One PyTorch name: where it lives here (relative to ``minitorch_accel``), its
    status, and what differs from PyTorch."""

    torch: str
    ours: str
    status: str = AVAILABLE
    note: str = ""


def _same(group: str, names: str, status: str = AVAILABLE, note: str = "") -> list[Name]:
    """Names that keep PyTorch's spelling: ``torch.<group>.<name>`` is ``<group>.<name>``."""
    prefix_t = "torch." + group if not group.startswith("Tensor") else group
    out = []
    for n in names.split():
        torch_name = f"{prefix_t}.{n}" if group else f"torch.{n}"
        ours = f"{group}.{n}" if group else n
        out.append(Name(torch_name, ours, status, note))
    return out


SECTIONS: dict[str, list[Name]] = {
    "Selection with named (values, indices)": [
        *_same("", "max min", note="with a dim: (values, indices), the first index among ties"),
        *_same("", "sort argsort topk", note="always stable: the first index among ties"),
        *_same("", "kthvalue"),
        *_same("", "median", note="the lower of the two middle values (as PyTorch)"),
        *_same("", "mode", note="memory grows with the square of the dim's size"),
        *_same("Tensor", "max min sort topk kthvalue median mode argmax argmin amax amin"),
        Name("torch.return_types", "return_types", note="repr without the torch. prefix"),
    ],
    "Sizes": [
        Name("torch.Size", "Size", DIFFERS, "a tuple subclass; its repr is a plain tuple's"),
        *_same("Tensor", "size dim ndimension numel nelement element_size shape ndim"),
    ],
    "Tensor methods": _same(
        "Tensor",
        "eq ne lt le gt ge view view_as reshape reshape_as expand expand_as repeat permute "
        "t T mT flatten unflatten squeeze unsqueeze transpose split chunk "
        "add sub mul div pow sqrt rsqrt exp log log1p sin cos tan sigmoid tanh abs sign "
        "clamp clip norm cumsum cumprod sum mean var softmax log_softmax matmul "
        "add_ sub_ mul_ div_ zero_ fill_ copy_ clamp_ clip_ masked_fill masked_fill_ "
        "relu relu_ sigmoid_ tanh_ "
        "index_select gather scatter scatter_ "
        "float double half long int bool type type_as to cpu cuda "
        "tolist item numpy detach clone backward requires_grad_ grad_fn is_leaf",
    )
    + [
        Name(
            "Tensor.bfloat16",
            "Tensor.bfloat16",
            DIFFERS,
            "raises a TypeError: NumPy and CuPy have no bfloat16 type",
        ),
        *_same("Tensor", "any all"),
    ],
    "Functions": _same(
        "",
        "tensor from_numpy zeros ones empty full eye arange linspace logspace zeros_like "
        "ones_like full_like rand randn randint randperm manual_seed cat stack split chunk "
        "where einsum gather scatter index_select masked_fill cumsum cumprod norm "
        "abs exp log sqrt rsqrt log1p sin cos tan sign sigmoid tanh erf clamp clip "
        "maximum minimum matmul reshape permute transpose squeeze unsqueeze flatten "
        "sum mean var softmax log_softmax logsumexp argmax argmin amax amin any all "
        "eq ne lt le gt ge "
        "no_grad enable_grad set_grad_enabled inference_mode is_grad_enabled "
        "set_default_dtype get_default_dtype set_default_device get_default_device "
        "save load device float32 float64 float16 int64 int32 long int bool double half",
    )
    + [
        Name("torch.einsum", "einsum", DIFFERS, "no letter repeated within one operand"),
        Name("torch.bfloat16", "bfloat16", MISSING, "NumPy has no bfloat16 type"),
    ],
    "torch.accelerator": _same(
        "accelerator",
        "is_available current_accelerator device_count current_device_index synchronize",
    ),
    "torch.nn": _same(
        "nn",
        "Module Parameter ModuleList Linear Conv1d Conv2d "
        "AdaptiveAvgPool2d BatchNorm1d BatchNorm2d LayerNorm GroupNorm Embedding Dropout "
        "Flatten Unflatten Identity ReLU Sigmoid Tanh LeakyReLU GELU ELU SiLU Softmax "
        "LogSoftmax MSELoss",
    )
    + [
        Name(
            "torch.nn.Sequential",
            "nn.Sequential",
            DIFFERS,
            "runs a ReLU followed by a MaxPool2d pooling first: equal results, less work",
        ),
        Name(
            "torch.nn.MaxPool2d", "nn.MaxPool2d", DIFFERS, "no dilation, ceil_mode, return_indices"
        ),
        Name("torch.nn.AvgPool2d", "nn.AvgPool2d", DIFFERS, "no ceil_mode, divisor_override"),
        Name("torch.nn.CrossEntropyLoss", "nn.CrossEntropyLoss", DIFFERS, "no class weight"),
        Name("torch.nn.NLLLoss", "nn.NLLLoss", DIFFERS, "no class weight"),
    ]
    + _same(
        "nn.Module",
        "apply named_modules children modules parameters named_parameters buffers "
        "register_buffer requires_grad_ half double float to train eval zero_grad "
        "state_dict load_state_dict",
    )
    + [Name("torch.nn.DataParallel", "nn.DataParallel")]
    + _same(
        "nn",
        "ReLU6 Hardtanh Hardsigmoid Hardswish Mish LogSigmoid Softsign Tanhshrink SELU CELU "
        "Threshold Hardshrink Softshrink Softmin PReLU",
    )
    + [
        Name(
            "torch.nn.Softplus",
            "nn.Softplus",
            DIFFERS,
            "finite where PyTorch's log1p(exp(x)) overflows; beta=0 raises",
        )
    ]
    + _same(
        "nn",
        "ModuleDict ParameterList ZeroPad1d ZeroPad2d ZeroPad3d ConstantPad1d ConstantPad2d "
        "ConstantPad3d ReflectionPad1d ReflectionPad2d ReflectionPad3d ReplicationPad1d "
        "ReplicationPad2d ReplicationPad3d CircularPad1d CircularPad2d CircularPad3d "
        "CosineSimilarity PairwiseDistance Dropout1d Dropout2d Dropout3d",
    )
    + [
        Name(
            "torch.nn.ParameterDict",
            "nn.ParameterDict",
            DIFFERS,
            "a missing key raises KeyError, not AttributeError",
        )
    ]
    + _same(
        "nn",
        "L1Loss SmoothL1Loss HuberLoss KLDivLoss CosineEmbeddingLoss MarginRankingLoss "
        "HingeEmbeddingLoss PoissonNLLLoss GaussianNLLLoss",
        note="input and target of one shape: no broadcasting",
    )
    + [
        Name(
            "torch.nn.BCELoss",
            "nn.BCELoss",
            DIFFERS,
            "the [0, 1] check reads back a bool: on a GPU each call waits for it",
        ),
        Name(
            "torch.nn.BCEWithLogitsLoss",
            "nn.BCEWithLogitsLoss",
            note="weight and pos_weight may require grad",
        ),
        Name("torch.nn.SoftMarginLoss", "nn.SoftMarginLoss", note="the target may require grad"),
    ]
    + _same("nn", "ConvTranspose1d ConvTranspose2d")
    + _same(
        "nn",
        "UpsamplingNearest2d UpsamplingBilinear2d PixelShuffle PixelUnshuffle Unfold Fold "
        "AdaptiveMaxPool2d",
    )
    + [
        Name(
            "torch.nn.Upsample",
            "nn.Upsample",
            DIFFERS,
            "no area, lanczos or antialias; see interpolate",
        )
    ],
    "torch.nn.functional": _same(
        "nn.functional",
        "linear conv1d conv2d max_pool2d avg_pool2d adaptive_avg_pool2d batch_norm "
        "layer_norm group_norm embedding dropout relu sigmoid tanh leaky_relu elu gelu silu "
        "softmax log_softmax mse_loss",
    )
    + _same(
        "nn.functional",
        "relu6 hardtanh hardsigmoid hardswish mish logsigmoid softsign tanhshrink selu celu "
        "threshold hardshrink softshrink softmin prelu",
    )
    + [
        Name(
            "torch.nn.functional.softplus",
            "nn.functional.softplus",
            DIFFERS,
            "finite where PyTorch's log1p(exp(x)) overflows; beta=0 raises",
        )
    ]
    + [
        Name(
            "torch.nn.functional.cross_entropy",
            "nn.functional.cross_entropy",
            DIFFERS,
            "no class weight",
        ),
        Name("torch.nn.functional.nll_loss", "nn.functional.nll_loss", DIFFERS, "no class weight"),
    ]
    + _same(
        "nn.functional",
        "pad cosine_similarity pairwise_distance dropout1d dropout2d dropout3d",
    )
    + [
        Name("torch.nn.functional.normalize", "nn.functional.normalize", DIFFERS, "no out="),
        Name(
            "torch.nn.functional.one_hot",
            "nn.functional.one_hot",
            note="any integer dtype, not only int64",
        ),
    ]
    + _same(
        "nn.functional",
        "l1_loss smooth_l1_loss huber_loss kl_div cosine_embedding_loss margin_ranking_loss "
        "hinge_embedding_loss gaussian_nll_loss",
        note="input and target of one shape: no broadcasting",
    )
    + [
        Name(
            "torch.nn.functional.binary_cross_entropy",
            "nn.functional.binary_cross_entropy",
            DIFFERS,
            "the [0, 1] check reads back a bool: on a GPU each call waits for it",
        ),
        Name(
            "torch.nn.functional.binary_cross_entropy_with_logits",
            "nn.functional.binary_cross_entropy_with_logits",
            note="weight and pos_weight may require grad",
        ),
        Name(
            "torch.nn.functional.soft_margin_loss",
            "nn.functional.soft_margin_loss",
            note="the target may require grad",
        ),
        Name(
            "torch.nn.functional.poisson_nll_loss",
            "nn.functional.poisson_nll_loss",
            DIFFERS,
            "no size_average, reduce: eps is the 5th positional argument",
        ),
    ]
    + _same("nn.functional", "conv_transpose1d conv_transpose2d")
    + _same(
        "nn.functional",
        "upsample upsample_nearest upsample_bilinear pixel_shuffle pixel_unshuffle unfold fold "
        "adaptive_max_pool2d adaptive_max_pool2d_with_indices",
    )
    + [
        Name(
            "torch.nn.functional.interpolate",
            "nn.functional.interpolate",
            DIFFERS,
            "no area, lanczos or antialias; nearest reads the pixels PyTorch's backward "
            "and 4-D forward read (its 3-D/5-D forward may differ with a scale factor)",
        )
    ],
    "Autograd": [
        Name(
            "Tensor.grad_fn.name()",
            "autograd.Function.name",
            DIFFERS,
            "MulBackward, not MulBackward0",
        ),
        Name("Tensor.grad_fn.next_functions", "autograd.Function.next_functions"),
        Name("Tensor.retain_grad", "Tensor.retain_grad"),
        Name("Tensor.register_hook", "Tensor.register_hook"),
        Name("Tensor._version", "Tensor._version"),
        Name("torch.autograd.detect_anomaly", "autograd.detect_anomaly"),
        Name("torch.autograd.grad", "grad"),
    ],
    "Optimizers and schedules": _same("optim", "SGD Adam AdamW Optimizer")
    + _same("optim", "RMSprop Adagrad Adadelta Adamax NAdam RAdam")
    + _same(
        "optim.lr_scheduler",
        "LRScheduler StepLR MultiStepLR CosineAnnealingLR LambdaLR OneCycleLR",
    )
    + _same("optim.lr_scheduler", "ExponentialLR LinearLR ReduceLROnPlateau SequentialLR"),
    "Data": [
        *[
            Name(f"torch.utils.data.{n}", f"data.{n}")
            for n in ["Dataset", "DataLoader", "TensorDataset", "Subset", "random_split"]
        ],
        Name("torch.utils.data", "utils.data", note="the same objects as minitorch_accel.data"),
        Name("torch.utils.data.default_collate", "utils.data.default_collate"),
        Name("torch.utils.data.get_worker_info", "utils.data.get_worker_info"),
    ],
    "torchvision": [
        *[
            Name(f"torchvision.transforms.{n}", f"transforms.{n}")
            for n in [
                "Compose",
                "ToTensor",
                "Normalize",
                "Lambda",
                "RandomCrop",
                "RandomHorizontalFlip",
            ]
        ],
        Name(
            "torchvision.datasets.MNIST",
            "datasets.MNIST",
            DIFFERS,
            "a transform gets a uint8 array, not a PIL image",
        ),
        Name("torchvision.datasets.FashionMNIST", "datasets.FashionMNIST", DIFFERS, "as MNIST"),
    ],
}


def resolve(path: str) -> Any:
    """The object at ``minitorch_accel.<path>`` (AttributeError if there is none)."""
    import minitorch_accel

    obj: Any = minitorch_accel
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def exists(path: str) -> bool:
    """Whether ``minitorch_accel.<path>`` resolves."""
    try:
        resolve(path)
    except AttributeError:
        return False
    return True


def all_names() -> list[Name]:
    """Every listed name, section by section."""
    return [name for names in SECTIONS.values() for name in names]


def table_lines() -> list[str]:
    """The reST of the status table, one list-table per section."""
    lines: list[str] = []
    for title, names in SECTIONS.items():
        lines += [title, "~" * len(title), "", ".. list-table::", "   :header-rows: 1", ""]
        lines += ["   * - PyTorch", "     - minitorch_accel", "     - status"]
        for name in names:
            ours = f"``{name.ours}``" if name.status != MISSING else "(none)"
            status = name.status + (f": {name.note}" if name.note else "")
            lines += [f"   * - ``{name.torch}``", f"     - {ours}", f"     - {status}"]
        lines.append("")
    return lines


def write_table(path: Path = TABLE) -> Path:
    """Write the status table (included by ``coming_from_pytorch.rst``)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    path.parent.mkdir(exist_ok=True)
    text = ".. Written by docs/pytorch_names.py: edit that file, not this one.\n\n"
    path.write_text(text + "\n".join(table_lines()) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    for entry in all_names():
        found = "yes" if exists(entry.ours) else "no "
        print(f"{found} {entry.status:9} {entry.torch:40} minitorch_accel.{entry.ours}")
