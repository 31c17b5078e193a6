"""The results the transports' merge, fetch and push return (:class:`versioned._ops.Ops`), as typed dictionaries:
the fields the public result classes (:class:`~versioned.MergeResult`, :class:`~versioned.FetchResult`,
:class:`~versioned.PushResult`) are built from."""

from __future__ import annotations

from typing import List, Optional, TypedDict

from pyspark.sql import DataFrame

__all__ = ["MergeOutcome", "RefUpdateRow", "FetchOutcome", "PushOutcome", "DownloadOutcome"]


class MergeOutcome(TypedDict):
    """What a merge, cherry-pick, revert or pull did: the fields of :class:`~versioned.MergeResult`.

    Example::

        outcome = ops.merge("shop", "dev", None, "fail", "auto", False, None, None, None, False, False)
        MergeResult._of(outcome).check()
    """

    status: str
    commit: Optional[str]
    fast_forward: bool
    base: Optional[str]
    conflict_count: int
    tables: DataFrame
    conflicts: DataFrame


class RefUpdateRow(TypedDict):
    """A remote-tracking ref a clone or fetch changed: the fields of :class:`~versioned.RefUpdate`.

    Example::

        [u["ref"] for u in ops.fetch("shop", "origin", "none")["refs"]]
    """

    ref: str
    old: Optional[str]
    new: Optional[str]
    status: str


class FetchOutcome(TypedDict):
    """What a clone or fetch did: the fields of :class:`~versioned.FetchResult`.

    Example::

        FetchResult._of(ops.fetch("shop", "origin", "none")).images
    """

    repository: str
    remote: str
    images: int
    objects: int
    downloaded: int
    refs: List[RefUpdateRow]


class DownloadOutcome(TypedDict):
    """What a download did: the fields of :class:`~versioned.DownloadResult`.

    Example::

        DownloadResult._of(ops.download("shop", None)).downloaded
    """

    repository: str
    image: Optional[str]
    objects: int
    downloaded: int


class PushOutcome(TypedDict):
    """What a push did: the fields of :class:`~versioned.PushResult`.

    Example::

        PushResult._of(ops.push("shop", "origin", None, False, True)).status
    """

    repository: str
    remote: str
    branch: str
    status: str
    old: Optional[str]
    head: str
    images: int
    objects: int
    uploaded: int
    tags: List[str]
