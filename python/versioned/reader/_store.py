"""The object store, read-only, through :mod:`pyarrow.fs`: a local directory (``/path``, ``file:/path``) or
``s3a://`` / ``s3://`` (pyarrow's S3 file system, credentials from the usual AWS environment), and the checks an
object passes before its rows are used (docs/FORMAT.md, "Object checksums").

Example::

    store = ObjectStore.open("/data/wh")
    store.read_text("_versioned/warehouse-id")
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, Optional, Sequence, Tuple

from versioned.reader._crc32c import crc32c
from versioned.reader._errors import fail, object_corrupt, object_missing, read_failure, storage_error

if TYPE_CHECKING:
    import pyarrow.fs as pafs

_PIECE = 8 << 20
_CHECKSUM = re.compile(r"crc32c:([0-9a-f]{8});tail:(\d+):([0-9a-f]{8})")


def file_system(uri: str) -> Tuple["pafs.FileSystem", str]:
    """The pyarrow file system and path of a Hadoop-style URI (``file:``, a plain path, ``s3a://``, ``s3://``).

    Example::

        >>> file_system("file:/tmp/wh")[1]
        '/tmp/wh'
    """
    import pyarrow.fs as pafs

    if uri.startswith("s3a://") or uri.startswith("s3://") or uri.startswith("s3n://"):
        bucket_path = uri.split("://", 1)[1]
        try:
            return pafs.S3FileSystem(), bucket_path.rstrip("/")
        except Exception as e:  # noqa: BLE001 - pyarrow built without S3
            raise fail("OBJECT_STORE_UNSUPPORTED", f"Cannot read {uri}: this pyarrow has no S3 file system ({e}).", e) from e
    if "://" in uri and not uri.startswith("file://"):
        raise fail("OBJECT_STORE_UNSUPPORTED", f"Cannot read {uri} without Spark: the reader reads local paths, file: "
                   "and s3a:// URIs. Read it through Spark (spark.read.versioned).")
    return pafs.LocalFileSystem(), local_path(uri)


def local_path(uri: str) -> str:
    """The path of a local URI (``/p``, ``file:/p``, ``file:///p``).

    Example::

        >>> local_path("file:///tmp/wh/")
        '/tmp/wh'
    """
    return re.sub(r"^file:(//)?", "", uri).rstrip("/") or "/"


def _is_local(uri: str) -> bool:
    return "://" not in uri or uri.startswith("file:")


class ObjectStore:
    """A warehouse's object store root.

    Example::

        ObjectStore.open("s3a://team/warehouse").exists("_versioned/warehouse-id")
    """

    def __init__(self, uri: str) -> None:
        """Opens the root ``uri`` (nothing is read yet).

        Example::

            ObjectStore("/data/wh")
        """
        self.uri = uri
        self.local = _is_local(uri)
        self._fs: Optional["pafs.FileSystem"] = None
        self.root = local_path(uri) if self.local else file_system(uri)[1]

    @property
    def fs(self) -> "pafs.FileSystem":
        """The pyarrow file system (created on first use: pyarrow is imported when objects are read).

        Example::

            store.fs.get_file_info(store.path("objects"))
        """
        if self._fs is None:
            self._fs = file_system(self.uri)[0]
        return self._fs

    @staticmethod
    def open(uri: str) -> "ObjectStore":
        """Same as the constructor.

        Example::

            ObjectStore.open("/data/wh")
        """
        return ObjectStore(uri)

    def path(self, relative: str) -> str:
        """The absolute path of a file under the root.

        Example::

            store.path("objects/ab/ab12.parquet")
        """
        return f"{self.root}/{relative}"

    def read_text(self, relative: str) -> Optional[str]:
        """The text of a small file under the root, or None if it does not exist.

        Example::

            store.read_text("_versioned/warehouse-id")
        """
        p = self.path(relative)
        try:
            if self.local:
                if not os.path.isfile(p):
                    return None
                with open(p, "rb") as lf:
                    return lf.read().decode("utf-8").strip() or None
            import pyarrow.fs as pafs

            if self.fs.get_file_info(p).type != pafs.FileType.File:
                return None
            with self.fs.open_input_stream(p) as f:
                return bytes(f.read()).decode("utf-8").strip() or None
        except OSError as e:
            raise storage_error(p, e) from e

    def has_objects(self) -> bool:
        """Whether any file exists under ``objects/`` (a warehouse in use).

        Example::

            store.has_objects()
        """
        if self.local:
            return any(files for _, _, files in os.walk(self.path("objects")))
        import pyarrow.fs as pafs

        sel = pafs.FileSelector(self.path("objects"), recursive=True, allow_not_found=True)
        try:
            return any(i.type == pafs.FileType.File for i in self.fs.get_file_info(sel))
        except OSError as e:
            raise storage_error(self.path("objects"), e) from e


def object_file(store: ObjectStore, object_id: str, location: Optional[str]) -> Tuple["pafs.FileSystem", str]:
    """Where an object's bytes are at one place: ``location`` (one of its ``vc_object_locations``), else
    ``objects/<id[0:2]>/<id>.parquet`` of this warehouse.

    Example::

        object_file(store, "ab12...", None)   # (LocalFileSystem, "/wh/objects/ab/ab12....parquet")
    """
    if location:
        return file_system(location)
    return store.fs, store.path(f"objects/{object_id[:2]}/{object_id}.parquet")


#: failures of one place of an object that another place may not have
_PASSED_OVER = ("OBJECT_MISSING", "OBJECT_CORRUPT", "STORAGE_ERROR")


def locate_object(store: ObjectStore, object_id: str, locations: Sequence[str], size: int, checksum: Optional[str],
                  whole: bool = False) -> Tuple["pafs.FileSystem", str]:
    """The first place of an object (its recorded ``locations`` in order, else this warehouse's ``objects/``) where
    :func:`verify_object` finds it; a place that lacks it, cannot be reached or holds other bytes is passed over for
    the next, and when none holds it the first place's error is raised (as the connector reads, docs/REMOTES.md).

    Example::

        fs, path = locate_object(store, "ab12...", ["s3://b/wh/objects/ab/ab12....parquet"], 1234, None)
    """
    places = [object_file(store, object_id, loc) for loc in locations] or [object_file(store, object_id, None)]
    first: Optional[BaseException] = None
    for fs, path in places:
        try:
            verify_object(fs, path, object_id, size, checksum, whole)
            return fs, path
        except Exception as e:  # noqa: BLE001 - the next place is tried; the first error is raised at the end
            if len(places) == 1 or getattr(e, "error_class", None) not in _PASSED_OVER:
                raise
            first = first or e
    assert first is not None
    raise first


def verify_object(fs: "pafs.FileSystem", path: str, object_id: str, size: int, checksum: Optional[str],
                  whole: bool = False) -> None:
    """Checks an object file against its record before its rows are used: it exists, has exactly ``size`` bytes and
    its tail (or, with ``whole``, the whole file) has the recorded CRC-32C. Objects without a checksum (format 1)
    are checked for their size only.

    Example::

        verify_object(fs, "/wh/objects/ab/ab12....parquet", "ab12...", 1234, "crc32c:0a1b2c3d;tail:1000:4e5f6a7b")
    """
    try:
        _verify_object(fs, path, object_id, size, checksum, whole)
    except OSError as e:  # the store's errors are STORAGE_ERROR, damaged bytes OBJECT_CORRUPT
        raise read_failure(object_id, path, e) from e


def _verify_object(fs: "pafs.FileSystem", path: str, object_id: str, size: int, checksum: Optional[str],
                   whole: bool) -> None:
    import pyarrow.fs as pafs

    info = fs.get_file_info(path)
    if info.type != pafs.FileType.File:
        raise object_missing(object_id, f"{path} does not exist")
    if info.size != size:
        longer = "longer" if (info.size or 0) > size else "shorter"
        raise object_corrupt(object_id, f"{path} is {longer} than the {size} bytes written (truncated, replaced or "
                             "appended to)")
    m = _CHECKSUM.fullmatch(checksum or "")
    if m is None:
        return None
    file_crc, offset, tail_crc = int(m.group(1), 16), int(m.group(2)), int(m.group(3), 16)
    if offset > size:
        raise object_corrupt(object_id, "its recorded tail offset is invalid")
    with fs.open_input_file(path) as f:
        if whole:  # in pieces: memory holds one piece, not the file
            crc = 0
            while True:
                piece = bytes(f.read(_PIECE))
                if not piece:
                    break
                crc = crc32c(piece, crc)
            if crc != file_crc:
                raise object_corrupt(object_id, f"the bytes of {path} do not match its checksum")
            return None
        f.seek(offset)
        tail = bytes(f.read(size - offset))
    if crc32c(tail) != tail_crc:
        raise object_corrupt(object_id, f"the footer of {path} does not match its checksum (the file was changed "
                             "or replaced)")
    return None
