"""TEST DOUBLE, not a backend users see: a strict stand-in for CuPy running on NumPy.

Code written for ``xp`` can pass every CPU test and still fail on a GPU, because
NumPy is forgiving where CuPy is not: ``np.asarray(device_array)`` works on NumPy
arrays, a NumPy array mixes freely with another in an operator, ``np.sum`` accepts
anything... On CuPy each of these raises. This module reproduces CuPy's rules on the
CPU, so those bugs show up in an ordinary test run:

* :class:`StrictArray` wraps a NumPy array and refuses implicit host conversion exactly
  like ``cupy.ndarray``: ``__array__`` raises ``TypeError("Implicit conversion to a
  NumPy array is not allowed...")``, ``__array_ufunc__ = None`` and a refusing
  ``__array_function__`` stop NumPy functions, and mixing with an ``np.ndarray`` in an
  operator raises ``TypeError``. Reductions and scalar indexing give 0-d arrays, as
  CuPy's do. Only the methods ``cupy.ndarray`` has exist.
* :data:`STRICT` is the array module: its functions unwrap their arguments, refuse
  NumPy arrays (except ``asarray``/``array``, the explicit host-to-device copies), call
  NumPy and wrap the results. Names NumPy has and CuPy lacks (``errstate``,
  ``nditer``...) do not exist. ``STRICT.asnumpy`` (like ``cupy.asnumpy``) and
  ``StrictArray.get()`` are the only ways back to the host.
* Devices: each StrictArray remembers the device it was made on, and there is a
  *current device* (per thread, like CUDA's), set by :func:`on_device` as
  ``cupy.cuda.Device(n)`` sets it. Any op on an array that lives elsewhere raises,
  as CuPy does between GPUs without peer access (with peer access CuPy would quietly
  run the kernel on the wrong GPU, reading the other's memory across the bus). Only
  the explicit copies (``get``, ``set``, ``copy``, ``xp.array``) and reading
  attributes cross devices, as in CuPy. So code that forgets to enter a device's
  context fails here although it works on a machine with one GPU.
* :class:`~strict_backend.StrictBackend` (in ``strict_backend.py``) serves the
  ``"strict"`` device (``"strict:N"``).
"""

from __future__ import annotations

import operator
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from support.strict_devices import StrictDevice, current_device

IMPLICIT = (
    "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to "
    "construct a NumPy array explicitly."
)

#: Public names of NumPy that CuPy 14 does not have.
NOT_IN_CUPY = frozenset(
    "False_ ScalarType True_ asmatrix block bmat busday_count busday_offset "
    "busdaycalendar bytes_ char character clongdouble complex256 core ctypeslib "
    "datetime64 datetime_as_string datetime_data dtypes einsum_path emath errstate "
    "f2py flexible float128 frompyfunc fromregex geomspace get_include getbufsize "
    "geterr geterrcall histogram_bin_edges info insert is_busday isnat little_endian "
    "longdouble ma matrix matvec memmap nanpercentile nanquantile ndenumerate nditer "
    "nested_iters object_ polyder polydiv polyint rec recarray record sctypeDict "
    "setbufsize seterr seterrcall show_runtime spacing str_ strings test timedelta64 "
    "typecodes unstack vecdot vecmat void".split()
)

#: The public methods of ``cupy.ndarray`` (CuPy 14).
CUPY_METHODS = frozenset(
    "all any argmax argmin argpartition argsort astype byteswap choose clip compress "
    "conj conjugate copy cumprod cumsum diagonal dot dump dumps fill flatten item max "
    "mean min nonzero partition prod ptp put ravel repeat reshape round searchsorted "
    "sort squeeze std sum swapaxes take tobytes tofile tolist trace transpose var "
    "view".split()
)

#: dtypes CuPy's ``scatter_add`` (``cupy.add.at``) accepts.
SCATTER_ADD_DTYPES = frozenset(
    np.dtype(t) for t in ("int32", "float16", "float32", "float64", "uint32", "uint64")
)


def _here(a: StrictArray) -> np.ndarray:
    """``a``'s NumPy array, if ``a`` lives on the current device; else CuPy's error."""
    if a._dev != current_device():
        raise ValueError(
            f"The device where the array resides ({a._dev}) is different from the current "
            f"device ({current_device()}). Peer access is unavailable between these devices."
        )
    return a._a


def _unwrap(obj: Any, allow_host: bool = False) -> Any:
    """Replace StrictArrays by their NumPy arrays; refuse NumPy arrays unless allowed."""
    if type(obj) is StrictArray:
        return _here(obj)
    if isinstance(obj, np.ndarray):
        if allow_host:
            return obj
        raise TypeError(f"Unsupported type {type(obj)}")
    if isinstance(obj, (list, tuple)):
        return type(obj)(_unwrap(o, allow_host) for o in obj)
    return obj


def _wrap(obj: Any) -> Any:
    """Wrap NumPy results; NumPy scalars become 0-d arrays, as CuPy returns them."""
    if isinstance(obj, np.ndarray):
        return StrictArray(obj)
    if isinstance(obj, np.generic):
        return StrictArray(np.asarray(obj))
    if isinstance(obj, tuple):
        return tuple(_wrap(o) for o in obj)
    if isinstance(obj, list):
        return [_wrap(o) for o in obj]
    return obj


#: The fake stream capture in progress (``fake_capture.FakeCapture``), or None. While
#: it is set, every computation goes through :func:`_run`, which it records.
CAPTURE: Any = None


def _run(thunk: Callable[[], Any], writes: Any = None, name: str = "kernel") -> Any:
    """Compute ``thunk()`` (a NumPy computation, the kernel called ``name``); a capture
    records it. ``writes`` is the NumPy array it writes into, if any.
    """
    if CAPTURE is None:
        return thunk()
    return CAPTURE.run(thunk, writes, name)


def _sync(what: str) -> None:
    """A host sync: refused while capturing, as CUDA refuses it."""
    if CAPTURE is not None:
        CAPTURE.refuse(what)


def _call(
    fn: Callable[..., Any], args: Any, kwargs: dict[str, Any], allow_host: bool = False
) -> Any:
    out = kwargs.get("out")
    options = {k: _unwrap(v, allow_host) for k, v in kwargs.items()}
    arrays = _unwrap(args, allow_host)
    result = _run(lambda: fn(*arrays, **options), options.get("out"), fn.__name__)
    if type(out) is StrictArray and result is out._a:
        return out
    return _wrap(result)


def _index(index: Any) -> Any:
    """An index for ``StrictArray``: CuPy accepts NumPy arrays and lists in indices."""
    if isinstance(index, tuple):
        return tuple(_unwrap(i, allow_host=True) for i in index)
    return _unwrap(index, allow_host=True)


def _is_advanced(index: Any) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, (StrictArray, np.ndarray, list)) for p in parts)


def _operand(other: Any) -> Any:
    """The right operand of an operator, or NotImplemented to let ``other`` handle it."""
    if type(other) is StrictArray:
        return _here(other)
    if isinstance(other, np.ndarray):
        raise TypeError(f"Unsupported type {type(other)}")
    if isinstance(other, (bool, int, float, complex, np.generic)):
        return other
    if other is None or getattr(other, "__array_priority__", 0) > 0:
        return NotImplemented  # e.g. a Tensor: let its reflected operator run (or `is`)
    raise TypeError(f"Unsupported type {type(other)}")


def _binary(op: Callable[[Any, Any], Any], reflected: bool = False) -> Any:
    def method(self: StrictArray, other: Any) -> Any:
        value = _operand(other)
        if value is NotImplemented:
            return NotImplemented
        mine = _here(self)
        return _wrap(
            _run(lambda: op(value, mine) if reflected else op(mine, value), None, op.__name__)
        )

    return method


def _inplace(op: Callable[[Any, Any], Any]) -> Any:
    def method(self: StrictArray, other: Any) -> Any:
        value = _operand(other)
        if value is NotImplemented:
            return NotImplemented
        mine = _here(self)
        _run(lambda: op(mine, value), mine, op.__name__)
        return self

    return method


class StrictArray:
    """A device-array stand-in: a NumPy array behind ``cupy.ndarray``'s rules."""

    __slots__ = ("_a", "_dev")
    __array_ufunc__ = None  # NumPy ufuncs and ndarray operators defer, then fail
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, array: np.ndarray, device: int | None = None) -> None:
        self._a = array
        self._dev = current_device() if device is None else device

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(IMPLICIT)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        raise TypeError(
            f"numpy.{func.__name__} called on a device array: use the backend's array "
            f"module (xp.{func.__name__}) instead"
        )

    def __getattr__(self, name: str) -> Any:
        if name in CUPY_METHODS:
            if name in ("item", "tolist"):
                _sync(f"ndarray.{name}()")
            method = getattr(_here(self), name)
            return lambda *args, **kwargs: _call(method, args, kwargs)
        raise AttributeError(f"'cupy.ndarray' (strict stand-in) has no attribute {name!r}")

    # ---------------------------------------------------------------- attributes
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)
    T = property(lambda self: StrictArray(self._a.T, self._dev))  # views: no kernel
    mT = property(lambda self: StrictArray(self._a.mT, self._dev))
    real = property(lambda self: StrictArray(self._a.real, self._dev))
    imag = property(lambda self: StrictArray(self._a.imag, self._dev))

    @property
    def device(self) -> Any:
        """The device the array lives on, as a context manager (``cupy.cuda.Device``)."""
        return StrictDevice(self._dev)

    def copy(self, order: str = "C") -> StrictArray:
        """A copy on the *current* device, from any device (CuPy copies peer to peer)."""
        source = self._a
        copy = source.copy
        return StrictArray(_run(lambda: copy(order=order), None, "copy"))  # type: ignore[arg-type]

    # ---------------------------------------------------------------- host transfers
    def get(
        self, stream: Any = None, order: str = "C", out: Any = None, blocking: bool = True
    ) -> np.ndarray:
        """The explicit copy to the host (``cupy.ndarray.get``)."""
        _sync("ndarray.get()")
        if out is not None:
            out[...] = self._a
            return out  # type: ignore[no-any-return]
        return np.array(self._a, order=order)  # type: ignore[call-overload,no-any-return]

    def set(self, arr: np.ndarray, stream: Any = None) -> None:
        """The explicit copy from the host (``cupy.ndarray.set``)."""
        if not isinstance(arr, np.ndarray) or arr.shape != self.shape:
            raise ValueError("set: a numpy.ndarray of the same shape is required")
        _sync("ndarray.set() (a copy from pageable host memory)")
        self._a[...] = arr

    def fill(self, value: Any) -> None:
        """Set every element to a scalar (a 0-d array is accepted, as in CuPy)."""
        if isinstance(value, (np.ndarray, StrictArray)):
            if value.shape != ():
                raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
            value = value._a if type(value) is StrictArray else value
        mine = _here(self)
        _run(lambda: mine.fill(value), mine, "fill")

    def scatter_add(self, slices: Any, value: Any) -> None:
        """``cupy.ndarray.scatter_add``: unbuffered ``self[slices] += value``."""
        mine, index, values = _here(self), _index(slices), _unwrap(value, allow_host=True)
        _run(lambda: np.add.at(mine, index, values), mine, "scatter_add")

    # ---------------------------------------------------------------- indexing
    def __getitem__(self, index: Any) -> Any:
        mine, where = _here(self), _index(index)
        return _wrap(_run(lambda: mine[where], None, "getitem"))

    def __setitem__(self, index: Any, value: Any) -> None:
        if (
            isinstance(value, (np.ndarray, list))
            and not _is_advanced(index)
            and (isinstance(value, list) or value.ndim > 0)  # CuPy calls fill() here
        ):
            raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        mine, where, values = _here(self), _index(index), _unwrap(value, allow_host=True)

        def assign() -> None:
            mine[where] = values

        _run(assign, mine, "setitem")

    # ---------------------------------------------------------------- Python protocols
    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Iterator[StrictArray]:
        for item in _here(self):
            yield _wrap(item)

    def __bool__(self) -> bool:
        _sync("bool(ndarray)")
        return bool(self._a)

    def __float__(self) -> float:
        _sync("float(ndarray)")
        return float(self._a)

    def __int__(self) -> int:
        _sync("int(ndarray)")
        return int(self._a)

    def __complex__(self) -> complex:
        return complex(self._a)

    def __repr__(self) -> str:
        return "strict_" + repr(self._a)

    def __str__(self) -> str:
        return str(self._a)

    # ---------------------------------------------------------------- operators
    __add__, __radd__ = _binary(operator.add), _binary(operator.add, True)
    __sub__, __rsub__ = _binary(operator.sub), _binary(operator.sub, True)
    __mul__, __rmul__ = _binary(operator.mul), _binary(operator.mul, True)
    __truediv__, __rtruediv__ = _binary(operator.truediv), _binary(operator.truediv, True)
    __floordiv__, __rfloordiv__ = _binary(operator.floordiv), _binary(operator.floordiv, True)
    __mod__, __rmod__ = _binary(operator.mod), _binary(operator.mod, True)
    __pow__, __rpow__ = _binary(operator.pow), _binary(operator.pow, True)
    __matmul__, __rmatmul__ = _binary(operator.matmul), _binary(operator.matmul, True)
    __and__, __rand__ = _binary(operator.and_), _binary(operator.and_, True)
    __or__, __ror__ = _binary(operator.or_), _binary(operator.or_, True)
    __xor__, __rxor__ = _binary(operator.xor), _binary(operator.xor, True)
    __lshift__, __rshift__ = _binary(operator.lshift), _binary(operator.rshift)
    __eq__ = _binary(operator.eq)
    __ne__ = _binary(operator.ne)
    __lt__, __le__ = _binary(operator.lt), _binary(operator.le)
    __gt__, __ge__ = _binary(operator.gt), _binary(operator.ge)
    __iadd__, __isub__ = _inplace(operator.iadd), _inplace(operator.isub)
    __imul__, __itruediv__ = _inplace(operator.imul), _inplace(operator.itruediv)
    __ifloordiv__, __imod__ = _inplace(operator.ifloordiv), _inplace(operator.imod)
    __ipow__, __iand__ = _inplace(operator.ipow), _inplace(operator.iand)
    __ior__, __ixor__ = _inplace(operator.ior), _inplace(operator.ixor)

    def __neg__(self) -> StrictArray:
        mine = _here(self)
        return _wrap(_run(lambda: operator.neg(mine), None, "neg"))  # type: ignore[no-any-return]

    def __pos__(self) -> StrictArray:
        mine = _here(self)
        return _wrap(_run(lambda: operator.pos(mine), None, "pos"))  # type: ignore[no-any-return]

    def __abs__(self) -> StrictArray:
        mine = _here(self)
        return _wrap(_run(lambda: operator.abs(mine), None, "abs"))  # type: ignore[no-any-return]

    def __invert__(self) -> StrictArray:
        mine = _here(self)
        return _wrap(_run(lambda: operator.invert(mine), None, "invert"))  # type: ignore[no-any-return]


class StrictUfunc:
    """A NumPy ufunc behind CuPy's rules (``at`` only where CuPy has it)."""

    def __init__(self, ufunc: np.ufunc) -> None:
        self._u = ufunc
        self.__name__ = ufunc.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _call(self._u, args, kwargs)

    def at(self, a: StrictArray, indices: Any, b: Any = None) -> None:
        """Unbuffered in-place operation at ``indices`` (CuPy: add, subtract, max, min)."""
        if self._u not in (np.add, np.subtract, np.maximum, np.minimum):
            raise NotImplementedError(f"cupy.{self.__name__}.at is not supported")
        if type(a) is not StrictArray:
            raise TypeError(f"Unsupported type {type(a)}")
        if self._u is np.add and a.dtype not in SCATTER_ADD_DTYPES:
            raise TypeError(
                "scatter_add only supports int32, float16, float32, float64, uint32, uint64, "
                "as data type"
            )
        target, index, values = _here(a), _index(indices), _unwrap(b, allow_host=True)
        _run(lambda: self._u.at(target, index, values), target, f"{self.__name__}.at")

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._u, name)
        if callable(value):
            return lambda *args, **kwargs: _call(value, args, kwargs)
        return value


class StrictNamespace:
    """The array module of the ``strict`` backend (``cupy`` with NumPy inside)."""

    ndarray = StrictArray

    def __init__(self, module: types.ModuleType = np) -> None:
        self._module = module
        self.__name__ = "strict_xp"

    def __getattr__(self, name: str) -> Any:
        if self._module is np and name in NOT_IN_CUPY:
            raise AttributeError(f"module 'cupy' has no attribute {name!r} (NumPy has it)")
        value = getattr(self._module, name)
        if isinstance(value, types.ModuleType):
            return StrictNamespace(value)
        if isinstance(value, np.ufunc):
            return StrictUfunc(value)
        if isinstance(value, (type, np.dtype)) or not callable(value):
            return value  # dtypes, classes, constants: CuPy re-exports NumPy's
        return lambda *args, **kwargs: _call(value, args, kwargs)

    @staticmethod
    def asarray(obj: Any, dtype: Any = None, order: Any = None) -> StrictArray:
        """Device arrays pass through; host data is copied to the "device"."""
        if type(obj) is StrictArray:  # stays where it is, as in CuPy
            if dtype is None:
                return obj
            source = _here(obj)
            return StrictArray(_run(lambda: source.astype(dtype, copy=False)))
        _sync("asarray() of host data (a copy from pageable host memory)")
        return StrictArray(np.array(_unwrap(obj, allow_host=True), dtype=dtype, order=order))

    @staticmethod
    def array(
        obj: Any, dtype: Any = None, copy: bool = True, order: Any = "K", ndmin: int = 0
    ) -> StrictArray:
        """A copy (by default) of host data or of a device array, on the "device"."""
        if type(obj) is StrictArray:
            source = obj._a
            return StrictArray(
                _run(lambda: np.array(source, dtype=dtype, copy=copy, order=order, ndmin=ndmin))
            )
        _sync("array() of host data (a copy from pageable host memory)")
        source = _unwrap(obj, allow_host=True)
        return StrictArray(np.array(source, dtype=dtype, copy=copy, order=order, ndmin=ndmin))

    @staticmethod
    def asnumpy(
        a: Any, stream: Any = None, order: str = "C", out: Any = None, blocking: bool = True
    ) -> np.ndarray:
        """The explicit copy to the host (``cupy.asnumpy``)."""
        if type(a) is StrictArray:
            return a.get(order=order, out=out)
        return np.asarray(a, order=order)  # type: ignore[call-overload,no-any-return]

    def get_array_module(self, *args: Any) -> Any:
        """This namespace if any argument is a StrictArray, else NumPy."""
        return self if any(type(a) is StrictArray for a in args) else np


STRICT = StrictNamespace()
"""The strict array module."""
