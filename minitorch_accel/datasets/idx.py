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
import math
import os
import zlib
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from ..atomic_write import atomic_write
from ..backends.host_limits import check_host_allocation

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


_CHUNK = 1 << 22
_MAX_COUNTED = 1 << 26  # trailing bytes are counted up to this many, then given up on


def _broken(path: str, exc: BaseException) -> ValueError:
    return ValueError(
        f"{path}: broken gzip stream ({exc}); the file is damaged or was cut short, "
        "delete it and fetch it again"
    )


def _read_exactly(stream: BinaryIO, n: int, path: str, ndim: int) -> bytes:
    """The ``n`` bytes of dimensions after the magic number."""
    try:
        data = stream.read(n)
    except (OSError, EOFError, zlib.error) as exc:
        raise _broken(path, exc) from exc
    if len(data) < n:
        raise ValueError(
            f"{path}: truncated: the header of a {ndim}-dimensional IDX file needs "
            f"{4 + n} bytes, file has {4 + len(data)}"
        )
    return data


def _count_rest(stream: BinaryIO) -> int:
    """How many bytes are left in ``stream`` (counted up to just over _MAX_COUNTED)."""
    rest = 0
    while rest <= _MAX_COUNTED and (chunk := stream.read(_CHUNK)):
        rest += len(chunk)
    return rest


def _header(stream: BinaryIO, path: str) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """Shape and dtype from the magic number and the dimensions."""
    try:
        magic = stream.read(4)
    except (OSError, EOFError, zlib.error) as exc:
        raise _broken(path, exc) from exc
    if len(magic) < 4:
        raise ValueError(
            f"{path}: not an IDX file: {len(magic)} bytes, too short for the 4-byte magic number"
        )
    if magic[0] != 0 or magic[1] != 0:
        raise ValueError(
            f"{path}: not an IDX file: bad magic number 0x{magic.hex()} "
            "(an IDX file starts with two zero bytes)"
        )
    code, ndim = magic[2], magic[3]
    if code not in IDX_DTYPES:
        known = ", ".join(f"0x{c:02X}" for c in IDX_DTYPES)
        raise ValueError(f"{path}: unknown IDX type code 0x{code:02X} (known: {known})")
    if ndim == 0:
        raise ValueError(f"{path}: IDX header declares 0 dimensions")
    dims = _read_exactly(stream, 4 * ndim, path, ndim)
    return tuple(int(d) for d in np.frombuffer(dims, dtype=">u4")), IDX_DTYPES[code]


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
        or longer (trailing bytes) than the header says, or a header declaring more
        data than the file could hold or this process could allocate (checked before
        anything is allocated: a decompression bomb is refused, not decompressed).
        The message starts with the file name and says what is wrong.

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
    file_size = os.path.getsize(name)
    with open(name, "rb") as raw:
        compressed = raw.read(2) == _GZIP_MAGIC
        raw.seek(0)
        stream: BinaryIO = gzip.GzipFile(fileobj=raw) if compressed else raw  # type: ignore[assignment]
        shape, dtype = _header(stream, name)
        header_len = 4 + 4 * len(shape)
        expected = math.prod(shape) * dtype.itemsize  # Python ints: no overflow
        dims = "x".join(str(d) for d in shape)
        described = f"header says {dims} {dtype.newbyteorder('=').name} = {expected} bytes of data"
        if not compressed and file_size - header_len != expected:
            got = file_size - header_len
            what = "truncated" if got < expected else f"{got - expected} trailing bytes"
            raise ValueError(f"{name}: {what}: {described}, file has {got}")
        check_host_allocation(expected, f"{name}: {dims} {dtype.newbyteorder('=').name}")
        array = np.empty(shape, dtype=dtype)  # filled in place: one copy of the data
        view = array.reshape(-1).view(np.uint8).data
        got = 0
        try:
            while got < expected:
                n = stream.readinto(view[got : got + _CHUNK])  # type: ignore[attr-defined]
                if not n:
                    break
                got += n
            trailing = _count_rest(stream)  # also reaches the gzip checksum
        except (OSError, EOFError, zlib.error) as exc:
            raise _broken(name, exc) from exc
        if got < expected:
            raise ValueError(f"{name}: truncated: {described}, file has {got}")
        if trailing:  # only a gzip stream gets here (a plain file's size was checked)
            count = f"{trailing}" if trailing <= _MAX_COUNTED else f"over {_MAX_COUNTED}"
            raise ValueError(f"{name}: {count} trailing bytes: {described}")
    if dtype.isnative:
        return array
    array.byteswap(inplace=True)  # to this machine's byte order, without a second copy
    native: npt.NDArray[Any] = array.view(dtype.newbyteorder("="))
    return native


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
    with atomic_write(name) as f:
        f.write(payload)
