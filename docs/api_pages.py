"""Write the API reference pages (``docs/api/*.rst``) for the modules that import.

Every page lists the public names of one part of the package and documents them with
autodoc. A module that does not exist yet (or fails to import) is left out, so the docs
build whatever state the package is in; run the build again once it lands.

``conf.py`` calls :func:`write_pages` before Sphinx reads any source, and
``tests/test_docs.py`` checks that every public name appears on a page. Run it alone
with ``python docs/api_pages.py`` to see which modules are documented and which are
skipped.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
API_DIR = HERE / "api"
MARKER = ".. This page is written by docs/api_pages.py: edit that file, not this one."


@dataclass(frozen=True)
class Page:
    """One page of the reference: a title, an introduction, the modules it documents."""

    name: str
    title: str
    intro: str
    modules: tuple[str, ...] = field(default_factory=tuple)


PAGES: tuple[Page, ...] = (
    Page(
        "tensor",
        "Tensors and autograd",
        "What a tensor is, how to make one, and the engine that differentiates.",
        (
            "minitorch_accel.core.tensor",
            "minitorch_accel.core.legacy_constructor",
            "minitorch_accel.core.tensor_data",
            "minitorch_accel.core.factories",
            "minitorch_accel.core.function",
            "minitorch_accel.core.custom_function",
            "minitorch_accel.autograd.functional",
            "minitorch_accel.core.backward",
            "minitorch_accel.core.grad_mode",
            "minitorch_accel.core.versions",
            "minitorch_accel.core.convert",
            "minitorch_accel.serialization",
            "minitorch_accel.atomic_write",
            "minitorch_accel.safetensors_format",
            "minitorch_accel.core.dlpack",
            "minitorch_accel.ops.tensor_methods",
            "minitorch_accel.ops.inplace_shape",
            "minitorch_accel.core.size",
            "minitorch_accel.core.return_types",
            "minitorch_accel.core.defaults",
            "minitorch_accel.core.printoptions",
        ),
    ),
    Page(
        "ops",
        "Ops",
        "The math, written once for every backend through ``xp``. Each op is a "
        ":class:`~minitorch_accel.core.function.Function` with a forward on raw arrays and a "
        "backward written with tensor ops (the reference implementation; a backend's fast "
        "paths may replace a forward, see the backends page).",
        (
            "minitorch_accel.ops.elementwise",
            "minitorch_accel.ops.operands",
            "minitorch_accel.ops.compare",
            "minitorch_accel.ops.reduce",
            "minitorch_accel.ops.reduce_more",
            "minitorch_accel.ops.shape",
            "minitorch_accel.ops.matmul",
            "minitorch_accel.ops.linear",
            "minitorch_accel.ops.conv",
            "minitorch_accel.ops.pool",
            "minitorch_accel.ops.conv_pool",
            "minitorch_accel.ops.loss",
            "minitorch_accel.ops.weighted_loss",
            "minitorch_accel.ops.norm",
            "minitorch_accel.ops.dropout",
            "minitorch_accel.ops.flat",
            "minitorch_accel.ops.sort",
            "minitorch_accel.ops.index",
            "minitorch_accel.ops.unary",
            "minitorch_accel.ops.math_more",
            "minitorch_accel.ops.bitwise",
            "minitorch_accel.ops.scan",
            "minitorch_accel.ops.split",
            "minitorch_accel.ops.shape_more",
            "minitorch_accel.ops.index_more",
            "minitorch_accel.ops.set_ops",
            "minitorch_accel.ops.einsum",
            "minitorch_accel.ops.activation",
            "minitorch_accel.ops.activation_more",
            "minitorch_accel.ops.pointwise_loss",
            "minitorch_accel.ops.margin_loss",
            "minitorch_accel.ops.pad",
            "minitorch_accel.ops.one_hot",
            "minitorch_accel.ops.distance",
            "minitorch_accel.ops.channel_dropout",
            "minitorch_accel.ops.layer_norm",
            "minitorch_accel.ops.conv1d",
            "minitorch_accel.ops.conv_transpose",
            "minitorch_accel.ops.products",
            "minitorch_accel.ops.linalg",
            "minitorch_accel.linalg",
            "minitorch_accel.linalg.norms",
            "minitorch_accel.linalg.decompositions",
            "minitorch_accel.ops.resample",
            "minitorch_accel.ops.fold",
            "minitorch_accel.ops.adaptive_max",
            "minitorch_accel.ops.pool_general",
            "minitorch_accel.ops.pool1d",
            "minitorch_accel.ops.pool3d",
            "minitorch_accel.ops.unpool",
            "minitorch_accel.ops.lp_pool",
            "minitorch_accel.ops.instance_norm",
            "minitorch_accel.ops.misc_layers",
            "minitorch_accel.ops.attention",
            "minitorch_accel.ops.sampling",
            "minitorch_accel.ops.random_fill",
            "minitorch_accel.ops.torch_surface",
        ),
    ),
    Page(
        "backends",
        "Backends and devices",
        "Array backends (NumPy, CuPy), the registry, devices and the transfer counter.",
        (
            "minitorch_accel.backends",
            "minitorch_accel.backends.host_limits",
            "minitorch_accel.backends.cuda",
            "minitorch_accel.backends.cudnn",
            "minitorch_accel.backends.numpy.threads",
            "minitorch_accel.backends.fast_paths",
            "minitorch_accel.backends.image_geometry",
            "minitorch_accel.backends.layout",
            "minitorch_accel.backends.conv_kernels",
            "minitorch_accel.backends.pool_kernels",
            "minitorch_accel.backends.numpy.fast_conv",
            "minitorch_accel.backends.numpy.fast_nn",
            "minitorch_accel.backends.numpy.fast_optim",
        ),
    ),
    Page(
        "gpu_kernels",
        "GPU fast paths",
        "The CUDA kernels of the CuPy backend (as sources, so that they can be checked "
        "without a GPU) and the functions that launch them, which the backend's fast "
        "paths (``backends/cupy/fast_*.py``) ask for with ``backend.kernel(name)``.",
        (
            "minitorch_accel.backends.cupy.kernel_spec",
            "minitorch_accel.backends.cupy.kernels",
            "minitorch_accel.backends.cupy.image_kernels",
            "minitorch_accel.backends.cupy.fast_base",
            "minitorch_accel.backends.cupy.ops",
            "minitorch_accel.backends.cupy.fast_nn",
            "minitorch_accel.backends.cupy.image_ops",
            "minitorch_accel.backends.cupy.fast_conv",
            "minitorch_accel.backends.cupy.optim_ops",
            "minitorch_accel.backends.cupy.fast_optim",
            "minitorch_accel.backends.cupy.graphs",
        ),
    ),
    Page(
        "cuda",
        "CUDA helpers",
        "GPU queries and memory reports; training steps captured as CUDA graphs.",
        ("minitorch_accel.cuda", "minitorch_accel.cuda.graphs"),
    ),
    Page(
        "accelerator",
        "Accelerator",
        "The device-agnostic names of ``torch.accelerator``.",
        ("minitorch_accel.accelerator",),
    ),
    Page(
        "memory",
        "Memory",
        "Memory accounting by category and a memory cap on every device.",
        ("minitorch_accel.memory", "minitorch_accel.backends.memory_tracker"),
    ),
    Page(
        "nn",
        "Neural-network modules",
        "Module, Parameter and the layers; the functional forms; initialisation; "
        "gradient clipping and other training utilities.",
        (
            "minitorch_accel.nn",
            "minitorch_accel.nn.module_hooks",
            "minitorch_accel.nn.functional",
            "minitorch_accel.nn.init",
            "minitorch_accel.nn.parallel",
            "minitorch_accel.nn.utils",
            "minitorch_accel.nn.utils.rnn",
        ),
    ),
    Page("models", "Models", "Ready-made networks.", ("minitorch_accel.nn.models",)),
    Page(
        "distributions",
        "Distributions",
        "Probability distributions, as ``torch.distributions``: Categorical and Normal, "
        "their constraints and PyTorch's argument validation.",
        (
            "minitorch_accel.distributions",
            "minitorch_accel.distributions.distribution",
            "minitorch_accel.distributions.constraints",
            "minitorch_accel.distributions.utils",
        ),
    ),
    Page(
        "optim",
        "Optimizers",
        "Update rules (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, "
        "Rprop, ASGD, LBFGS) "
        "and learning-rate schedules, with PyTorch's names, arguments and numbers.",
        ("minitorch_accel.optim", "minitorch_accel.optim.lr_scheduler"),
    ),
    Page(
        "data",
        "Data loading",
        "Datasets, splits, ``default_collate``, worker processes and the DataLoader that "
        "batches and prefetches to a device. The same objects are importable from "
        "``minitorch_accel.utils.data``, where PyTorch users look for them.",
        ("minitorch_accel.data", "minitorch_accel.data.prefetch"),
    ),
    Page(
        "transforms",
        "Transforms",
        "Per-sample image transforms, as ``torchvision.transforms``.",
        ("minitorch_accel.transforms",),
    ),
    Page(
        "datasets",
        "Datasets",
        "The IDX reader, MNIST and Fashion-MNIST, the embedded sample.",
        ("minitorch_accel.datasets",),
    ),
    Page(
        "train",
        "Training loops",
        "The fit/evaluate loop, its settings (FitConfig) and callbacks, used by "
        "``python -m minitorch_accel train``.",
        ("minitorch_accel.train",),
    ),
    Page(
        "parallel",
        "Several devices, one machine",
        "Data, model, pipeline and tensor parallelism over the devices of one machine: "
        "the tower recipe, ``nn.DataParallel``, ``split_model``, ``Pipeline`` and its "
        "schedules, ``ColumnParallelLinear`` / ``RowParallelLinear``.",
        ("minitorch_accel.parallel", "minitorch_accel.parallel.schedules"),
    ),
    Page(
        "distributed",
        "Several machines",
        "Data parallelism across processes and machines over MPI.",
        ("minitorch_accel.distributed",),
    ),
    Page(
        "amp",
        "Mixed precision",
        "float16 compute with float32 master weights and loss scaling.",
        ("minitorch_accel.amp",),
    ),
    Page(
        "utils",
        "Utilities",
        "Gradient checks, timing, the environment report, activation checkpointing and "
        "memory estimates.",
        (
            "minitorch_accel.utils",
            "minitorch_accel.utils.env",
            "minitorch_accel.utils.timing",
        ),
    ),
    Page(
        "sim",
        "Hardware simulators",
        "Teaching simulators, apart from the framework: the systolic array of a TPU.",
        ("minitorch_accel.sim",),
    ),
)


def try_import(name: str) -> ModuleType | None:
    """The module called ``name``, or None if it does not exist or fails to import."""
    try:
        module = importlib.import_module(name)
    except Exception:  # a module being written may fail in any way: leave it out
        return None
    # A folder without ``__init__.py`` imports as an empty namespace package: not ready.
    return module if getattr(module, "__file__", None) else None


def public_names(module: ModuleType) -> list[str]:
    """``__all__``, or else the public classes and functions defined in the module's package.

    Submodules are left out: they get their own entry in :data:`PAGES` if they are public.
    """
    names = getattr(module, "__all__", None)
    if names is not None:
        return [n for n in names if not inspect.ismodule(getattr(module, n, None))]
    found = []
    for name, obj in vars(module).items():
        if name.startswith("_") or inspect.ismodule(obj):
            continue
        defined_in = getattr(obj, "__module__", "") or ""
        if defined_in == module.__name__ or defined_in.startswith(module.__name__ + "."):
            found.append(name)
    return found


def canonical(obj: Any) -> str | None:
    """``module.qualname`` of the place where ``obj`` is defined, if it has one."""
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if module is None or qualname is None or inspect.ismodule(obj):
        return None
    return f"{module}.{qualname}"


def documented_modules() -> dict[str, ModuleType]:
    """Every module listed in :data:`PAGES` that imports, by name."""
    found = {}
    for page in PAGES:
        for name in page.modules:
            module = try_import(name)
            if module is not None:
                found[name] = module
    return found


def module_section(name: str, module: ModuleType, names: list[str]) -> list[str]:
    """The reST of one module: its docstring and every public name."""
    lines = [f"``{name}``", "-" * (len(name) + 4), "", f".. automodule:: {name}"]
    if names:
        lines.append("   :members: " + ", ".join(names))
    lines.append("")
    return lines


def role_of(obj: Any) -> str:
    """The Python-domain role that links to ``obj``."""
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "func"
    return "data"


def overview_page(documented: dict[str, ModuleType]) -> list[str]:
    """The page of top-level names: each one links to where it is documented."""
    import minitorch_accel as mta

    lines = [
        MARKER,
        "",
        "``minitorch_accel``",
        "=" * 19,
        "",
        ".. automodule:: minitorch_accel",
        "   :no-index:",
        "",
        "The names below are importable from ``minitorch_accel`` directly; each links "
        "to its documentation in the module that defines it.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 30 70",
        "",
        "   * - name",
        "     - what it is",
    ]
    for name in sorted(public_names(mta), key=str.lower):
        obj = getattr(mta, name)
        target = canonical(obj)
        module = target.rsplit(".", 1)[0] if target else None
        doc = inspect.getdoc(obj) if target else None
        summary = doc.strip().splitlines()[0] if doc else repr(obj)
        if target and module in documented:
            link = f":{role_of(obj)}:`{name} <{target}>`"
        else:
            link = f"``{name}``"
        lines += [f"   * - {link}", f"     - {summary}" if doc else f"     - ``{summary}``"]
    return lines + [""]


def page_text(page: Page, documented: dict[str, ModuleType]) -> str | None:
    """The reST of ``page``, or None when none of its modules import."""
    present = [name for name in page.modules if name in documented]
    if not present:
        return None
    lines = [MARKER, "", page.title, "=" * len(page.title), "", page.intro, ""]
    for name in present:
        lines += module_section(name, documented[name], public_names(documented[name]))
    return "\n".join(lines)


def index_text(written: list[Page], skipped: list[str]) -> str:
    """The table of contents of the reference."""
    lines = [
        MARKER,
        "",
        "API reference",
        "=============",
        "",
        "Generated from the docstrings. Start with the :doc:`top-level names <minitorch_accel>`.",
        "",
        ".. toctree::",
        "   :maxdepth: 2",
        "",
        "   minitorch_accel",
    ]
    lines += [f"   {page.name}" for page in written]
    if skipped:
        lines += [
            "",
            "Not documented in this build (the module does not import yet): "
            + ", ".join(f"``{name}``" for name in skipped)
            + ".",
        ]
    return "\n".join(lines + [""])


def write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` unless it already holds it (keeps Sphinx's cache warm)."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def write_pages(out_dir: Path = API_DIR) -> tuple[list[str], list[str]]:
    """Write every page whose modules import; remove stale generated pages.

    Returns
    -------
    (documented, skipped) : tuple of list of str
        Module names documented and module names left out.
    """
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    out_dir.mkdir(exist_ok=True)
    documented = documented_modules()
    written: list[Page] = []
    keep = {"index.rst", "minitorch_accel.rst"}
    for page in PAGES:
        text = page_text(page, documented)
        if text is None:
            continue
        write_if_changed(out_dir / f"{page.name}.rst", text)
        written.append(page)
        keep.add(f"{page.name}.rst")
    write_if_changed(out_dir / "minitorch_accel.rst", "\n".join(overview_page(documented)))
    skipped = [name for page in PAGES for name in page.modules if name not in documented]
    write_if_changed(out_dir / "index.rst", index_text(written, skipped))
    for path in out_dir.glob("*.rst"):
        if path.name not in keep and path.read_text(encoding="utf-8").startswith(MARKER):
            path.unlink()
    return sorted(documented), skipped


if __name__ == "__main__":
    done, missing = write_pages()
    print("documented:", ", ".join(done))
    print("skipped (not importable yet):", ", ".join(missing) or "none")
