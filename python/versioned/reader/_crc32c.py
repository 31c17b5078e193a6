"""CRC-32C (Castagnoli), as the engine's ``java.util.zip.CRC32C``: table-driven, standard library only.

Used on object tails (the page indexes and footer, tens of kilobytes) when an object is opened, and on whole files
by :func:`verify`. With the ``google-crc32c`` package installed (a dependency of the package; hardware CRC), it
computes; without it, a pure-Python table does, about a hundred times slower.

Example::

    >>> f"{crc32c(b'123456789'):08x}"
    'e3069283'
"""

from __future__ import annotations

from typing import Callable, List, Optional


def _table() -> List[int]:
    out = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        out.append(c)
    return out


_TABLE = _table()


def _pure(data: bytes, crc: int = 0) -> int:
    """The CRC-32C of ``data`` in Python, continuing from ``crc`` (the value of the bytes before it).

    Example::

        >>> _pure(b"6789", _pure(b"12345")) == _pure(b"123456789")
        True
    """
    c = crc ^ 0xFFFFFFFF
    table = _TABLE
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def crc32c(data: bytes, crc: int = 0) -> int:
    """The CRC-32C of ``data``, continuing from ``crc`` (the value of the bytes before it).

    Example::

        >>> crc32c(b"6789", crc32c(b"12345")) == crc32c(b"123456789")
        True
    """
    if _fast is not None:
        return int(_fast(crc, data))
    return _pure(data, crc)


def _native() -> Optional[Callable[[int, bytes], int]]:
    try:
        import google_crc32c
    except ImportError:
        return None
    extend: Callable[[int, bytes], int] = google_crc32c.extend
    return extend


_fast = _native()
