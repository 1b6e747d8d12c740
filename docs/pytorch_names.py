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
        "float double half long int bool short char byte type type_as to cpu cuda "
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
        *_same("Tensor", "is_cpu is_cuda is_xpu"),
    ],
    "Functions": _same(
        "",
        "tensor from_numpy zeros ones empty full eye arange linspace logspace zeros_like "
        "ones_like full_like empty_like rand_like randn_like result_type promote_types "
        "can_cast rand randn randint randperm manual_seed cat stack split chunk "
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
    "Shape and indexing": _same(
        "",
        "flip fliplr flipud roll rot90 tril triu tril_indices triu_indices diag diagonal "
        "diag_embed trace movedim moveaxis swapaxes swapdims narrow take take_along_dim "
        "ravel tile tensor_split unbind vsplit hsplit dsplit hstack vstack dstack "
        "column_stack row_stack broadcast_to broadcast_tensors broadcast_shapes meshgrid "
        "atleast_1d atleast_2d atleast_3d scatter_add scatter_reduce index_add index_fill "
        "index_copy index_put masked_select masked_scatter nonzero argwhere "
        "unique_consecutive searchsorted bucketize isin repeat_interleave bincount histc",
    )
    + _same(
        "Tensor",
        "contiguous is_contiguous flip fliplr flipud roll rot90 tril triu tril_ triu_ diag "
        "diagonal diag_embed trace movedim moveaxis swapaxes swapdims narrow take "
        "take_along_dim ravel tile tensor_split unbind vsplit hsplit dsplit broadcast_to "
        "scatter_add scatter_add_ scatter_reduce scatter_reduce_ index_add index_add_ "
        "index_fill index_fill_ index_copy index_copy_ index_put index_put_ masked_select "
        "masked_scatter masked_scatter_ nonzero argwhere unique unique_consecutive "
        "repeat_interleave bincount histc new_zeros new_ones new_full new_tensor",
    )
    + [
        Name("torch.unique", "unique", DIFFERS, "always sorted; records no gradient"),
        Name("torch.Tensor.new_empty", "Tensor.new_empty", note="filled with zeros"),
        Name(
            "torch.Tensor",
            "Tensor",
            DIFFERS,
            "the legacy constructor, as PyTorch's (Tensor([[3]]) is float32; no dtype= or "
            "requires_grad=; Tensor(t) aliases t); Tensor(\\*sizes) holds zeros (PyTorch: "
            "uninitialized); device= takes any device (PyTorch: CPU only); arrays with "
            "negative strides are accepted",
        ),
        *_same(
            "Tensor",
            "unsqueeze_ squeeze_ t_ transpose_ swapaxes_ swapdims_ detach_ fill_diagonal_ "
            "put_ index_reduce_",
        ),
        *_same("Tensor", "apply_ map_ map2_", note="CPU tensors only, as in PyTorch"),
        Name(
            "torch.Tensor.resize_",
            "Tensor.resize_",
            DIFFERS,
            "new elements are zeros; growing gives new memory that earlier views no longer "
            "share; a strided tensor keeps its own elements, not the storage around them",
        ),
        Name("torch.Tensor.resize_as_", "Tensor.resize_as_", DIFFERS, "as ``resize_``"),
        Name(
            "torch.Tensor.as_strided_",
            "Tensor.as_strided_",
            DIFFERS,
            "storage_offset counts from the tensor's first element (PyTorch: from its "
            "storage's start; the same unless the tensor views a larger one)",
        ),
        Name(
            "torch.Tensor.share_memory_",
            "Tensor.share_memory_",
            DIFFERS,
            "returns the tensor; its memory stays where it is",
        ),
        Name("torch.Tensor.set_", "Tensor.set_", MISSING, "a tensor's storage is its array"),
    ],
    "Reductions and scans": _same(
        "",
        "prod std std_mean var_mean nansum nanmean nanmedian quantile nanquantile "
        "count_nonzero cummax cummin logcumsumexp aminmax diff",
    )
    + _same(
        "Tensor",
        "prod std nansum nanmean nanmedian quantile nanquantile count_nonzero cummax cummin "
        "logcumsumexp aminmax diff cumsum_ cumprod_ logsumexp",
    )
    + [
        Name(
            "torch.Tensor.mode",
            "Tensor.mode",
            note="a slice with a NaN gives NaN at its first NaN (PyTorch's CPU result "
            "there depends on its unstable sort)",
        ),
        Name(
            "torch.softmax",
            "softmax",
            note="without dim: PyTorch's legacy implicit dim and warning (as "
            "nn.functional.softmax; torch.softmax itself requires dim)",
        ),
    ],
    "More elementwise math, in place, and random fills": _same(
        "",
        "absolute negative divide multiply subtract arcsin arccos arctan arcsinh arccosh "
        "arctanh greater greater_equal less less_equal not_equal conj_physical sinc deg2rad "
        "rad2deg addcmul addcdiv renorm gcd lcm nextafter lgamma digamma polygamma mvlgamma i0",
    )
    + _same(
        "Tensor",
        "neg negative absolute divide multiply subtract arcsin arccos arctan arcsinh arccosh "
        "arctanh greater greater_equal less less_equal not_equal conj_physical sinc deg2rad "
        "rad2deg addcmul addcdiv renorm gcd lcm nextafter lgamma digamma "
        "polygamma mvlgamma i0 bernoulli "
        "abs_ absolute_ neg_ negative_ exp_ log_ log1p_ sqrt_ rsqrt_ sin_ cos_ tan_ arcsin_ "
        "arccos_ arctan_ erf_ lgamma_ digamma_ polygamma_ mvlgamma_ i0_ sinc_ deg2rad_ rad2deg_ "
        "conj_physical_ pow_ divide_ multiply_ subtract_ heaviside_ gcd_ lcm_ nextafter_ "
        "addcmul_ addcdiv_ addmm_ addmv_ addr_ addbmm_ baddbmm_ renorm_ eq_ ne_ lt_ "
        "le_ gt_ ge_ greater_ greater_equal_ less_ less_equal_ not_equal_",
    )
    + [
        *_same(
            "",
            "igamma igammac",
            DIFFERS,
            "series and continued fraction, not Cephes: for large a (a near x, both beyond "
            "about 20) the float64 values differ from PyTorch's in the 10th digit (ours "
            "are the closer to the true value)",
        ),
        Name(
            "torch.ldexp",
            "ldexp",
            DIFFERS,
            "the gradient is 2**other also for negative exponents, where PyTorch's is 0",
        ),
        Name("torch.Tensor.ldexp_", "Tensor.ldexp_", DIFFERS, "as ldexp"),
        *_same(
            "Tensor",
            "arcsinh_ arccosh_ arctanh_",
            note="differentiable in place (PyTorch's inverse hyperbolic in-place methods "
            "raise in backward)",
        ),
        *_same("Tensor", "igamma igammac igamma_ igammac_", DIFFERS, "as torch.igamma"),
        Name("torch.Tensor.ldexp", "Tensor.ldexp", DIFFERS, "as ldexp"),
        *_same(
            "Tensor",
            "uniform_ normal_ bernoulli_ exponential_ cauchy_ log_normal_ geometric_",
            DIFFERS,
            "another generator (the device's, or a NumPy/CuPy generator=): the values differ "
            "from PyTorch's for the same seed, the distribution is the same; bad parameters "
            "raise ValueError (RuntimeError in PyTorch) with PyTorch's message",
        ),
        Name(
            "torch.Tensor.random_",
            "Tensor.random_",
            DIFFERS,
            "as ``normal_``; PyTorch's keyword ``from`` is spelled ``from_`` "
            "(or pass it by position)",
        ),
    ],
    "Elementwise math, bitwise and logical ops": _same(
        "",
        "floor ceil round trunc fix frac sgn signbit copysign positive square reciprocal "
        "log2 log10 expm1 exp2 sinh cosh asin acos atan asinh acosh atanh atan2 arctan2 "
        "hypot erfc erfinv lerp logaddexp logaddexp2 logit xlogy heaviside clamp_min "
        "clamp_max float_power true_divide nan_to_num floor_divide remainder fmod "
        "bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_left_shift "
        "bitwise_right_shift logical_and logical_or logical_xor logical_not isnan isinf "
        "isfinite isposinf isneginf isclose allclose equal",
    )
    + _same(
        "Tensor",
        "floor ceil round trunc fix frac sgn signbit copysign positive square reciprocal "
        "log2 log10 expm1 exp2 sinh cosh asin acos atan asinh acosh atanh atan2 arctan2 "
        "hypot erf erfc erfinv lerp logaddexp logaddexp2 logit xlogy heaviside clamp_min "
        "clamp_max float_power true_divide nan_to_num floor_divide remainder fmod "
        "bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_left_shift "
        "bitwise_right_shift logical_and logical_or logical_xor logical_not isnan isinf "
        "isfinite isposinf isneginf isreal isclose allclose equal "
        "floor_ ceil_ round_ trunc_ fix_ frac_ sign_ sgn_ square_ reciprocal_ log2_ log10_ "
        "expm1_ exp2_ sinh_ cosh_ asin_ acos_ atan_ asinh_ acosh_ atanh_ erfc_ erfinv_ "
        "logit_ nan_to_num_ clamp_min_ clamp_max_ copysign_ atan2_ arctan2_ hypot_ lerp_ "
        "xlogy_ float_power_ true_divide_ floor_divide_ remainder_ fmod_ bitwise_and_ "
        "bitwise_or_ bitwise_xor_ bitwise_not_ bitwise_left_shift_ bitwise_right_shift_ "
        "logical_and_ logical_or_ logical_xor_ logical_not_",
    )
    + [
        Name("torch.isreal", "isreal", note="always True: there are no complex dtypes"),
        Name(
            "torch.Tensor.__invert__",
            "Tensor.__invert__",
            note="~ is bitwise NOT for integers, logical NOT for bool, a TypeError for floats",
        ),
        Name(
            "torch.Tensor.__floordiv__",
            "Tensor.__floordiv__",
            note="integer // 0 raises IntegerZeroDivisionError (a RuntimeError, as PyTorch's)",
        ),
        Name(
            "torch.Tensor.__format__",
            "Tensor.__format__",
            note='a 0-d tensor formats as its number: f"{loss:.4f}"',
        ),
    ],
    "Products and torch.linalg": _same(
        "",
        "mm bmm mv dot vdot inner outer ger addmv addr baddbmm addbmm kron tensordot "
        "block_diag cartesian_prod combinations chain_matmul logdet slogdet inverse "
        "pinverse matrix_power",
    )
    + _same(
        "Tensor",
        "mm bmm mv dot vdot inner outer ger addmm addmv addr baddbmm addbmm kron cross det "
        "logdet slogdet inverse pinverse matrix_power cholesky",
    )
    + _same(
        "linalg",
        "inv det slogdet solve cholesky matrix_power multi_dot vector_norm matrix_norm norm "
        "svdvals matrix_rank eigvalsh",
    )
    + [
        Name("torch.cross", "cross", note="dim=None takes the first dim of size 3, as PyTorch"),
        Name("torch.linalg.cross", "linalg.cross"),
        Name(
            "torch.addmm",
            "addmm",
            DIFFERS,
            "the add* ops raise a TypeError for float beta/alpha with integer tensors "
            "(PyTorch truncates them)",
        ),
        Name(
            "torch.cdist",
            "cdist",
            DIFFERS,
            "always the exact formula (compute_mode is ignored); PyTorch's default uses a "
            "matrix-product formula past 25 rows",
        ),
        Name(
            "torch.linalg.pinv",
            "linalg.pinv",
            note="hermitian=True is accepted and the SVD used either way",
        ),
        Name(
            "torch.linalg.qr",
            "linalg.qr",
            DIFFERS,
            "no gradient for wide matrices (m < n): backward raises NotImplementedError",
        ),
        Name("torch.linalg.eigh", "linalg.eigh"),
        Name(
            "torch.linalg.svd",
            "linalg.svd",
            note="with full_matrices=True the gradient ignores the extra columns, as PyTorch",
        ),
        Name(
            "torch.det",
            "det",
            DIFFERS,
            "at a singular matrix the gradient is the cofactor matrix; PyTorch gives 0 "
            "unless create_graph=True",
        ),
    ],
    "torch.accelerator": _same(
        "accelerator",
        "is_available current_accelerator device_count current_device_index synchronize",
    )
    + _same(
        "backends.cudnn",
        "benchmark deterministic enabled allow_tf32",
        DIFFERS,
        "accepted and kept, no effect: no backend uses cuDNN",
    )
    + _same("backends.cudnn", "is_available version", note="False and None: no cuDNN here"),
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
            "torch.nn.MaxPool2d",
            "nn.MaxPool2d",
            note="with dilation, ceil_mode or return_indices, nn.Sequential runs it as written",
        ),
        Name("torch.nn.AvgPool2d", "nn.AvgPool2d"),
        Name(
            "torch.nn.CrossEntropyLoss",
            "nn.CrossEntropyLoss",
            note="a float weight of another dtype is converted to the input's",
        ),
        Name("torch.nn.NLLLoss", "nn.NLLLoss"),
    ]
    + _same(
        "nn.Module",
        "apply named_modules children modules parameters named_parameters buffers "
        "register_buffer requires_grad_ half double float to train eval zero_grad "
        "state_dict load_state_dict",
    )
    + _same(
        "nn.Module",
        "register_forward_pre_hook register_forward_hook register_full_backward_hook "
        "register_full_backward_pre_hook get_parameter get_buffer get_submodule named_buffers",
    )
    + [Name("torch.nn.DataParallel", "nn.DataParallel")]
    + _same("nn.parallel", "DataParallel data_parallel")
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
    + _same(
        "nn", "MultiMarginLoss MultiLabelMarginLoss TripletMarginLoss TripletMarginWithDistanceLoss"
    )
    + _same(
        "nn",
        "MultiLabelSoftMarginLoss",
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
        "BatchNorm3d InstanceNorm1d InstanceNorm2d InstanceNorm3d LocalResponseNorm RMSNorm "
        "GLU Bilinear Softmax2d ChannelShuffle AlphaDropout FeatureAlphaDropout",
    )
    + [
        Name(
            "torch.nn.EmbeddingBag",
            "nn.EmbeddingBag",
            DIFFERS,
            "no max_norm, norm_type, scale_grad_by_freq or sparse",
        )
    ]
    + _same(
        "nn",
        "UpsamplingNearest2d UpsamplingBilinear2d PixelShuffle PixelUnshuffle Unfold Fold "
        "AdaptiveMaxPool2d",
    )
    + _same(
        "nn",
        "MaxPool1d MaxPool3d AvgPool1d AvgPool3d AdaptiveAvgPool1d AdaptiveAvgPool3d "
        "AdaptiveMaxPool1d MaxUnpool1d MaxUnpool2d MaxUnpool3d LPPool1d LPPool2d LPPool3d",
    )
    + [
        Name(
            "torch.nn.Upsample",
            "nn.Upsample",
            DIFFERS,
            "no area, lanczos or antialias; see interpolate",
        )
    ]
    + _same("nn", "RNNCell LSTMCell GRUCell RNNBase RNN GRU")
    + [
        Name(
            "torch.nn.MultiheadAttention",
            "nn.MultiheadAttention",
            DIFFERS,
            "no inference fast path (a fully masked query: 0 here, NaN in PyTorch's fast "
            "path); shape errors are ValueError",
        ),
        Name(
            "torch.nn.TransformerEncoder",
            "nn.TransformerEncoder",
            DIFFERS,
            "no nested tensors: padded positions are computed, not 0, in evaluation",
        ),
    ]
    + _same(
        "nn",
        "TransformerEncoderLayer TransformerDecoderLayer TransformerDecoder Transformer",
    )
    + [
        Name(
            "torch.nn.LSTM",
            "nn.LSTM",
            note="proj_size supported; dropout masks come from this framework's generator",
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
            note="a float weight of another dtype is converted to the input's",
        ),
        Name("torch.nn.functional.nll_loss", "nn.functional.nll_loss"),
    ]
    + _same(
        "nn.functional",
        "multi_margin_loss multilabel_margin_loss triplet_margin_loss "
        "triplet_margin_with_distance_loss",
    )
    + _same(
        "nn.functional",
        "multilabel_soft_margin_loss",
        note="input and target of one shape: no broadcasting",
    )
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
    + [
        Name(
            "torch.nn.functional.scaled_dot_product_attention",
            "nn.functional.scaled_dot_product_attention",
            note="PyTorch's math path: a fully masked query gives 0",
        )
    ]
    + _same(
        "nn.functional",
        "instance_norm local_response_norm rms_norm glu bilinear channel_shuffle alpha_dropout "
        "feature_alpha_dropout",
    )
    + [
        Name(
            "torch.nn.functional.embedding_bag",
            "nn.functional.embedding_bag",
            DIFFERS,
            "no max_norm, norm_type, scale_grad_by_freq or sparse",
        )
    ]
    + _same(
        "nn.functional",
        "upsample upsample_nearest upsample_bilinear pixel_shuffle pixel_unshuffle unfold fold "
        "adaptive_max_pool2d adaptive_max_pool2d_with_indices",
    )
    + _same(
        "nn.functional",
        "max_pool2d_with_indices max_pool1d max_pool1d_with_indices max_pool3d "
        "max_pool3d_with_indices avg_pool1d avg_pool3d adaptive_avg_pool1d adaptive_avg_pool3d "
        "adaptive_max_pool1d adaptive_max_pool1d_with_indices max_unpool1d max_unpool2d "
        "max_unpool3d lp_pool1d lp_pool2d lp_pool3d",
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
    "torch.nn.init and torch.nn.utils": _same(
        "nn.init",
        "calculate_gain uniform_ normal_ trunc_normal_ constant_ ones_ zeros_ eye_ dirac_ "
        "xavier_uniform_ xavier_normal_ kaiming_uniform_ kaiming_normal_ orthogonal_ sparse_",
        note="generator= takes a NumPy Generator",
    )
    + _same(
        "nn.utils",
        "clip_grad_norm_ clip_grad_value_ clip_grads_with_norm_",
        DIFFERS,
        "each .grad is replaced by a clipped copy, not changed in place; norm_type <= 0 "
        "or clip_value < 0 raises",
    )
    + _same("nn.utils", "get_total_norm", note="a norm_type of 0 or below raises")
    + _same("nn.utils", "parameters_to_vector vector_to_parameters")
    + _same(
        "nn.utils",
        "weight_norm remove_weight_norm spectral_norm remove_spectral_norm",
        MISSING,
    )
    + _same(
        "nn.utils.rnn",
        "PackedSequence pad_packed_sequence pad_sequence unpad_sequence pack_sequence "
        "unpack_sequence invert_permutation",
    )
    + [
        Name(
            "torch.nn.utils.rnn.pack_padded_sequence",
            "nn.utils.rnn.pack_padded_sequence",
            note="enforce_sorted=False sorts equal lengths stably",
        )
    ],
    "More torch.*, Tensor and nn.functional names": _same(
        "",
        "as_tensor asarray clone detach t numel is_tensor is_floating_point is_complex "
        "is_signed is_nonzero is_same_size concat concatenate rsub fmax fmin dist diagflat "
        "msort select narrow_copy split_with_sizes vander scalar_tensor trapezoid trapz "
        "cumulative_trapezoid cov corrcoef hann_window hamming_window blackman_window "
        "bartlett_window kaiser_window use_deterministic_algorithms "
        "are_deterministic_algorithms_enabled is_deterministic_algorithms_warn_only_enabled "
        "initial_seed seed typename",
    )
    + _same(
        "",
        "conv1d conv2d conv_transpose1d conv_transpose2d max_pool1d max_pool2d avg_pool1d "
        "adaptive_avg_pool1d adaptive_max_pool1d dropout alpha_dropout feature_alpha_dropout "
        "layer_norm group_norm batch_norm instance_norm embedding pixel_shuffle "
        "pixel_unshuffle cosine_similarity pairwise_distance pdist kl_div selu celu prelu "
        "threshold bilinear binary_cross_entropy_with_logits poisson_nll_loss "
        "cosine_embedding_loss hinge_embedding_loss margin_ranking_loss triplet_margin_loss "
        "channel_shuffle rms_norm",
        note="PyTorch's top-level signatures (positional train flags, reduction as an int)",
    )
    + [
        Name("torch.finfo", "finfo"),
        Name("torch.iinfo", "iinfo"),
        Name(
            "torch.get_rng_state",
            "get_rng_state",
            DIFFERS,
            "a uint8 tensor of this framework's state (JSON of the NumPy generators), not "
            "PyTorch's 5056 bytes",
        ),
        Name("torch.set_rng_state", "set_rng_state", DIFFERS, "takes get_rng_state()'s state only"),
        Name(
            "torch.set_printoptions",
            "set_printoptions",
            DIFFERS,
            "NumPy's layout; the default profile keeps threshold 200 and linewidth 75",
        ),
        Name(
            "torch.normal",
            "normal",
            DIFFERS,
            "draws from this framework's generator; generator= takes a NumPy/CuPy Generator",
        ),
        Name("torch.bernoulli", "bernoulli", DIFFERS, "as torch.normal"),
        Name("torch.poisson", "poisson", DIFFERS, "as torch.normal"),
        Name("torch.range", "range", note="deprecated: warns as PyTorch"),
        Name("torch.unravel_index", "unravel_index", note="out-of-range indices wrap, as PyTorch"),
        Name(
            "torch.set_float32_matmul_precision",
            "set_float32_matmul_precision",
            note='no effect on the CPU; on CUDA "high"/"medium" mean TF32 '
            "(backends.cuda.matmul.allow_tf32)",
        ),
        Name("torch.get_float32_matmul_precision", "get_float32_matmul_precision"),
        Name(
            "torch.set_num_interop_threads",
            "set_num_interop_threads",
            DIFFERS,
            "recorded only: ops run one at a time",
        ),
        Name("torch.get_num_interop_threads", "get_num_interop_threads"),
    ]
    + _same(
        "Tensor",
        "maximum minimum fmax fmin is_floating_point is_signed is_complex is_nonzero "
        "is_same_size data_ptr stride storage_offset get_device itemsize select narrow_copy "
        "split_with_sizes diagflat dist msort where sum_to_size H mH adjoint conj "
        "resolve_conj resolve_neg is_conj is_neg cov corrcoef prelu hardshrink "
        "register_post_accumulate_grad_hook is_shared",
    )
    + [
        Name("Tensor.unfold", "Tensor.unfold", DIFFERS, "a copy, not a view"),
        Name("Tensor.new", "Tensor.new", note="new(\\*sizes) holds zeros"),
        Name(
            "Tensor.is_inference",
            "Tensor.is_inference",
            DIFFERS,
            "always False: inference_mode does not mark tensors here",
        ),
        Name("Tensor.pin_memory", "Tensor.pin_memory", note="raises without a GPU, as PyTorch"),
        Name("Tensor.is_pinned", "Tensor.is_pinned"),
    ]
    + _same(
        "nn.functional",
        "relu_ elu_ selu_ celu_ leaky_relu_ hardtanh_ threshold_ rrelu rrelu_ pdist",
        note="in place: computed out of place, then written (no memory saved)",
    )
    + [
        Name(
            "torch.nn.functional.gumbel_softmax",
            "nn.functional.gumbel_softmax",
            DIFFERS,
            "draws from this framework's generator",
        ),
        Name("torch.nn.RReLU", "nn.RReLU", DIFFERS, "draws from this framework's generator"),
        Name(
            "torch.nn.Buffer",
            "nn.Buffer",
            note="the module holds the Buffer (a Tensor subclass), not a plain Tensor",
        ),
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
        Name("torch.is_inference_mode_enabled", "is_inference_mode_enabled"),
        Name(
            "torch.autograd.Function",
            "autograd.Function",
            note="forward(ctx, ...) and backward(ctx, ...) as staticmethods, and "
            "setup_context; every output of a multi-output Function has its own grad_fn "
            "(named after the Function; the ctx is that of a single output only)",
        ),
        *_same("autograd", "FunctionCtx once_differentiable"),
        *_same("autograd.function", "FunctionCtx once_differentiable"),
        *_same("autograd.functional", "vjp jvp hvp vhp"),
        *_same(
            "autograd.functional",
            "jacobian hessian",
            note='vectorize=True computes the rows one by one; strategy="forward-mode" raises',
        ),
    ],
    "Optimizers and schedules": _same("optim", "SGD Adam AdamW Optimizer")
    + _same("optim", "RMSprop Adagrad Adadelta Adamax NAdam RAdam")
    + _same(
        "optim.lr_scheduler",
        "LRScheduler StepLR MultiStepLR CosineAnnealingLR LambdaLR OneCycleLR",
    )
    + _same("optim.lr_scheduler", "ExponentialLR LinearLR ReduceLROnPlateau SequentialLR")
    + _same("optim", "Rprop")
    + _same("optim", "ASGD", note="eta and mu are Python floats (rounded as PyTorch's)")
    + [
        Name(
            "torch.optim.LBFGS",
            "optim.LBFGS",
            note="a bad line_search_fn is refused when built, not at the first step",
        )
    ]
    + _same(
        "optim.lr_scheduler",
        "ConstantLR MultiplicativeLR PolynomialLR CosineAnnealingWarmRestarts CyclicLR "
        "ChainedScheduler",
    ),
    "Distributions and sampling": [
        Name(
            "torch.multinomial",
            "multinomial",
            DIFFERS,
            "draws from this framework's generator, not PyTorch's; bad weights raise "
            "ValueError (PyTorch: RuntimeError)",
        ),
        Name("Tensor.multinomial", "Tensor.multinomial", DIFFERS, "as torch.multinomial"),
        *_same(
            "distributions",
            "Categorical Normal",
            DIFFERS,
            "sample/rsample draw from this framework's generator; no expand",
        ),
        *_same("distributions", "Distribution constraints"),
        *_same("distributions", "Bernoulli Beta kl_divergence", MISSING),
    ],
    "Data": [
        *[
            Name(f"torch.utils.data.{n}", f"data.{n}")
            for n in ["Dataset", "DataLoader", "TensorDataset", "Subset", "random_split"]
        ],
        Name("torch.utils.data", "utils.data", note="the same objects as minitorch_accel.data"),
        Name("torch.utils.data.default_collate", "utils.data.default_collate"),
        Name("torch.utils.data.get_worker_info", "utils.data.get_worker_info"),
        *[
            Name(f"torch.utils.data.{n}", f"data.{n}")
            for n in ["ConcatDataset", "IterableDataset", "ChainDataset", "StackDataset"]
        ],
        Name("torch.utils.data.default_convert", "data.default_convert"),
        *[
            Name(
                f"torch.utils.data.{n}",
                f"data.{n}",
                DIFFERS,
                "generator= takes a numpy.random.Generator; the draws are not PyTorch's",
            )
            for n in ["RandomSampler", "SubsetRandomSampler"]
        ],
        Name(
            "torch.utils.data.WeightedRandomSampler",
            "data.WeightedRandomSampler",
            DIFFERS,
            "a NumPy generator; bad weights raise ValueError when iterated, and too few "
            "positive weights without replacement raise instead of drawing weight-0 indices",
        ),
        *[Name(f"torch.utils.data.{n}", f"data.{n}") for n in ["Sampler", "SequentialSampler"]],
        Name("torch.utils.data.BatchSampler", "data.BatchSampler"),
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
