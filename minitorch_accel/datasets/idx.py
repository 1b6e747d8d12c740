"""Read and write the IDX format of MNIST, with every field checked.

An IDX file is a 4-byte magic number, one big-endian ``uint32`` per dimension,
then the values in C order, big-endian. The magic number is two zero bytes, a
type code and the number of dimensions::

    00 00 08 03  00 00 0f a0  00 00 00 1c  00 00 00 1c  <4000*28*28 bytes>
    ^^^^^ ^^ ^^  4000         28           28
    zeros |  ndim
          uint8

Files are often gzip-compressed (``.gz``). :func:`read_idx` recognises gzip by
its magic bytes ``1f 8b``, not by the file name.
"""

from __future__ import annotations

import gzip
import os
import tempfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["IDX_DTYPES", "read_idx", "write_idx"]

#: IDX type code -> big-endian NumPy dtype (0x0A is not assigned by the format).
IDX_DTYPES: dict[int, np.dtype[Any]] = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}

_GZIP_MAGIC = b"\x1f\x8b"


def _decompress(data: bytes, path: str) -> bytes:
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise ValueError(
            f"{path}: broken gzip stream ({exc}); the file is damaged or was cut short, "
            "delete it and fetch it again"
        ) from exc


def read_idx(path: str | os.PathLike[str]) -> npt.NDArray[Any]:
    """Read an IDX file (plain or gzip-compressed) into a NumPy array.

    Parameters
    ----------
    path : str or os.PathLike
        The file. Gzip compression is detected from the content (bytes ``1f 8b``),
        whatever the file is called.

    Returns
    -------
    numpy.ndarray
        An array of the shape stored in the header, in native byte order
        (``uint8`` for MNIST images and labels).

    Raises
    ------
    ValueError
        If the file is not a valid IDX file: broken gzip stream, bad magic number,
        unknown type code, header cut short, or a data section shorter (truncated)
        or longer (trailing bytes) than the header says. The message starts with
        the file name and says what is wrong.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "a.idx.gz")
    >>> write_idx(p, np.arange(6, dtype=np.uint8).reshape(2, 3))
    >>> read_idx(p)
    array([[0, 1, 2],
           [3, 4, 5]], dtype=uint8)
    """
    name = os.fspath(path)
    with open(name, "rb") as f:
        data = f.read()
    if data[:2] == _GZIP_MAGIC:
        data = _decompress(data, name)
    if len(data) < 4:
        raise ValueError(
            f"{name}: not an IDX file: {len(data)} bytes, too short for the 4-byte magic number"
        )
    if data[0] != 0 or data[1] != 0:
        raise ValueError(
            f"{name}: not an IDX file: bad magic number 0x{data[:4].hex()} "
            "(an IDX file starts with two zero bytes)"
        )
    code, ndim = data[2], data[3]
    if code not in IDX_DTYPES:
        known = ", ".join(f"0x{c:02X}" for c in IDX_DTYPES)
        raise ValueError(f"{name}: unknown IDX type code 0x{code:02X} (known: {known})")
    if ndim == 0:
        raise ValueError(f"{name}: IDX header declares 0 dimensions")
    header_len = 4 + 4 * ndim
    if len(data) < header_len:
        raise ValueError(
            f"{name}: truncated: the header of a {ndim}-dimensional IDX file needs "
            f"{header_len} bytes, file has {len(data)}"
        )
    shape = tuple(int(d) for d in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    dtype = IDX_DTYPES[code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    got = len(data) - header_len
    if got != expected:
        dims = "x".join(str(d) for d in shape)
        what = "truncated" if got < expected else f"{got - expected} trailing bytes"
        raise ValueError(
            f"{name}: {what}: header says {dims} {dtype.newbyteorder('=').name} = "
            f"{expected} bytes of data, file has {got}"
        )
    array = np.frombuffer(data, dtype=dtype, offset=header_len).reshape(shape)
    return array.astype(dtype.newbyteorder("="))


def write_idx(
    path: str | os.PathLike[str], array: npt.ArrayLike, compress: bool | None = None
) -> None:
    """Write an array to an IDX file, atomically.

    Parameters
    ----------
    path : str or os.PathLike
        Destination. It is written to a temporary file in the same directory and
        renamed into place, so an interrupted write never leaves a broken file.
    array : array_like
        1 to 255 dimensions, of dtype uint8, int8, int16, int32, float32 or float64.
    compress : bool, optional
        Gzip the file. By default, compress when the name ends with ``.gz``.

    Raises
    ------
    TypeError
        If the dtype has no IDX type code.
    ValueError
        If the array has 0 dimensions, more than 255, or a dimension that does not
        fit in 32 bits.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "labels-idx1-ubyte")
    >>> write_idx(p, np.array([7, 2, 1], dtype=np.uint8))
    >>> os.path.getsize(p)  # 4 (magic) + 4 (one dimension) + 3 values
    11
    """
    name = os.fspath(path)
    arr = np.asarray(array)
    codes = {dt.newbyteorder("="): code for code, dt in IDX_DTYPES.items()}
    native = arr.dtype.newbyteorder("=")
    if native not in codes:
        allowed = ", ".join(str(dt.newbyteorder("=")) for dt in IDX_DTYPES.values())
        raise TypeError(f"{name}: IDX cannot store dtype {arr.dtype} (allowed: {allowed})")
    if not 1 <= arr.ndim <= 255:
        raise ValueError(f"{name}: IDX stores 1 to 255 dimensions, array has {arr.ndim}")
    if any(d >= 2**32 for d in arr.shape):
        raise ValueError(f"{name}: dimension too large for IDX: shape {arr.shape}")
    code = codes[native]
    header = bytes([0, 0, code, arr.ndim]) + np.asarray(arr.shape, dtype=">u4").tobytes()
    payload = header + np.ascontiguousarray(arr, dtype=IDX_DTYPES[code]).tobytes()
    if compress is None:
        compress = name.endswith(".gz")
    if compress:
        payload = gzip.compress(payload, mtime=0)
    target = Path(name)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; a data file is readable by all
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
