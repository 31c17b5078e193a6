"""Remotes: clone, fetch, pull, push and table import between warehouses (docs/REMOTES.md).

A remote is another warehouse: an object store URI and a metastore JDBC URL, never credentials (the
metastore's come from ``spark.versioned.remote.<name>.metastore.user`` / ``.password``, the object store's
from the Hadoop configuration). Images keep their hashes from one warehouse to the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Optional, Tuple, Union

from pyspark.sql import DataFrame, SparkSession

from versioned import _args
from versioned._ops import DownloadOutcome, FetchOutcome, Ops, PushOutcome
from versioned.merging import MergeResult

if TYPE_CHECKING:
    from versioned.repository import Repository

__all__ = ["RefUpdate", "FetchResult", "PushResult", "DownloadResult", "clone"]

Download = Union[str, bool, None]


def _download(value: Download) -> str:
    if value is None or value is False:
        return "none"
    if value is True:
        return "all"
    if isinstance(value, str) and value.strip().lower() in ("all", "none"):
        return value.strip().lower()
    raise _args.bad_argument(f"download must be 'all' or 'none' (or True/False), not {value!r}.")


@dataclass(frozen=True)
class RefUpdate:
    """A remote-tracking ref a fetch created, moved or deleted.

    Attributes:
        ref: the full ref name, e.g. ``"remotes/origin/main"`` or ``"remotes/origin/tags/v1"``.
        old: the image it pointed at before (None: new).
        new: the image it points at now (None: deleted, with the remote's branch).
        status: ``"new"``, ``"fast_forward"``, ``"forced"`` (the remote branch moved to a line that does not
            contain the old image) or ``"deleted"``.

    Example::

        [u.ref for u in repo.fetch().refs if u.status == "forced"]
    """

    ref: str
    old: Optional[str]
    new: Optional[str]
    status: str


@dataclass(frozen=True)
class FetchResult:
    """What a clone or fetch did.

    Attributes:
        repository: the local repository.
        remote: the remote's name.
        images: images recorded (those the repository lacked).
        objects: object rows recorded (objects the warehouse had no row for).
        downloaded: objects copied into the warehouse (``download="all"``); the others are read in place.
        refs: the remote-tracking refs that changed.

    Example::

        result = repo.fetch()
        print(result.images, [u.ref for u in result.refs])
    """

    repository: str
    remote: str
    images: int
    objects: int
    downloaded: int
    refs: Tuple[RefUpdate, ...]

    @staticmethod
    def _of(d: FetchOutcome) -> "FetchResult":
        refs = tuple(RefUpdate(u["ref"], u["old"], u["new"], u["status"]) for u in d["refs"])
        return FetchResult(d["repository"], d["remote"], int(d["images"]), int(d["objects"]), int(d["downloaded"]), refs)


@dataclass(frozen=True)
class PushResult:
    """What a push did.

    Attributes:
        repository, remote, branch: what was pushed where.
        status: ``"created"`` (the remote had no such branch), ``"fast_forward"``, ``"forced"`` or
            ``"up_to_date"``.
        old: the remote branch's head before (None when created).
        head: its head now (the local branch's head).
        images: images sent; objects: objects the remote had no row for; uploaded: objects copied (those
            a failed push had already left there intact are not copied again).
        tags: tags created on the remote.

    Example::

        assert repo.push().status in ("fast_forward", "up_to_date")
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
    tags: Tuple[str, ...]

    @staticmethod
    def _of(d: PushOutcome) -> "PushResult":
        return PushResult(d["repository"], d["remote"], d["branch"], d["status"], d["old"], d["head"], int(d["images"]),
                          int(d["objects"]), int(d["uploaded"]), tuple(d["tags"]))


@dataclass(frozen=True)
class DownloadResult:
    """What a download did.

    Attributes:
        repository: the repository.
        image: the version whose tables were downloaded (None: every version).
        objects: objects the warehouse knew only at a remote's places before the download.
        downloaded: objects copied (those an interrupted download already left here intact are not copied again).

    Example::

        result = repo.download("v3")
        print(result.objects, result.downloaded)
    """

    repository: str
    image: Optional[str]
    objects: int
    downloaded: int

    @staticmethod
    def _of(d: DownloadOutcome) -> "DownloadResult":
        return DownloadResult(d["repository"], d["image"], int(d["objects"]), int(d["downloaded"]))


class RemotesMixin:
    """The remote operations of :class:`~versioned.Repository` (kept here so each module stays small). They
    work on classic and on Spark Connect sessions (there, as ``CALL <catalog>.system.*`` procedures)."""

    spark: SparkSession
    name: str
    _options: Dict[str, str]
    _ops: Ops

    def add_remote(self, name: str, warehouse: str, metastore_url: str, *, repository: Optional[str] = None) -> None:
        """Adds remote ``name``: another warehouse (object store URI ``warehouse`` and metastore JDBC URL
        ``metastore_url``, both without credentials) and its repository ``repository`` (default: the same
        name). Raises :class:`~versioned.RemoteExists` if the name is taken, and
        :class:`~versioned.InvalidOption` for a URL that carries a password.

        Example::

            repo.add_remote("origin", warehouse="s3a://team/warehouse",
                            metastore_url="jdbc:postgresql://meta.internal/versioned")
        """
        self._ops.add_remote(self.name, _args.text("name", name), _args.text("warehouse", warehouse),
                             _args.text("metastore_url", metastore_url), _args.optional_text("repository", repository))

    def remotes(self) -> DataFrame:
        """The remotes as a DataFrame (name, warehouse, metastore_url, repository).

        Example::

            repo.remotes().show(truncate=False)
        """
        return self._ops.remotes(self.name)

    def remove_remote(self, name: str) -> None:
        """Removes remote ``name`` and the refs tracking it; local branches and their history stay.

        Example::

            repo.remove_remote("origin")
        """
        self._ops.remove_remote(self.name, _args.text("name", name))

    def remote_refs(self, remote: Optional[str] = None) -> DataFrame:
        """Refs tracking ``remote`` (default: every remote) as a DataFrame (name, kind, image, created),
        named like ``origin/main`` and ``origin/tags/v1``; they resolve as revisions too.

        Example::

            repo.remote_refs("origin").show()
            spark.read.versioned("sales.orders", ref="origin/main")
        """
        return self._ops.remote_refs(self.name, _args.optional_text("remote", remote))

    def fetch(self, remote: str = "origin", *, download: Download = None) -> FetchResult:
        """Brings the images and object metadata ``remote`` has that this repository lacks, and points
        ``remotes/<remote>/<branch>`` (and ``remotes/<remote>/tags/<tag>``) at the remote's refs. Never moves a
        local branch. Objects are read in place at the remote unless ``download="all"``.

        Example::

            repo.fetch()
            repo.diff("orders", "main", "origin/main").show()
        """
        return FetchResult._of(self._ops.fetch(self.name, _args.text("remote", remote), _download(download)))

    def download(self, ref: Optional[str] = None) -> DownloadResult:
        """Copies into this warehouse the objects of ``ref``'s tables (default: of every version) that a lazy
        clone or fetch left at a remote's places, each verified against its checksum, then forgets those places:
        the versions read without the remotes from then on. Refs and history do not change; a failed copy
        records nothing, and a retry copies only what is not here yet.

        Example::

            repo = versioned.clone(spark, "sales", warehouse="/data/team", metastore_url="jdbc:sqlite:/data/team/metastore.db")
            repo.download("v3")        # tag v3's tables now read without the remote
            repo.download()            # and every other version too
        """
        return DownloadResult._of(self._ops.download(self.name, _args.optional_text("ref", ref)))

    def pull(self, remote: str = "origin", branch: Optional[str] = None, *, strategy: str = "fail",
             fast_forward: str = "auto", message: Optional[str] = None,
             author: Optional[str] = None) -> MergeResult:
        """Fetches ``remote``, then merges its ``branch`` (default: the default branch) into the local branch
        of that name with :meth:`~versioned.Repository.merge`'s rules: a fast-forward when the local branch
        has not moved, else a merge commit (conflicts are returned, nothing committed with
        ``strategy="fail"``). A local branch that does not exist yet is created at the remote's.

        Example::

            repo.pull().check()
        """
        return MergeResult._of(self._ops.pull(
            self.name, _args.text("remote", remote), _args.optional_text("branch", branch), _args.text("strategy", strategy),
            _args.text("fast_forward", fast_forward), _args.optional_text("message", message),
            _args.optional_text("author", author)))

    def push(self, remote: str = "origin", branch: Optional[str] = None, *, force: bool = False,
             tags: bool = True) -> PushResult:
        """Uploads the objects and images the remote lacks, then moves the remote's ``branch`` (default: the
        default branch) by compare-and-swap. Raises :class:`~versioned.NonFastForward` (changing nothing)
        when the remote branch has commits this one lacks, unless ``force=True``. With ``tags``, local tags
        whose images the remote then has are created there; a tag it has at another image is
        :class:`~versioned.ImmutableRef`.

        Example::

            repo.push("origin", "main")
            repo.push("backup", force=True, tags=False)
        """
        return PushResult._of(self._ops.push(self.name, _args.text("remote", remote), _args.optional_text("branch", branch),
                                             _args.flag("force", force), _args.flag("tags", tags)))

    def import_table(self, from_repository: str, table: str, ref: Optional[str] = None, as_table: Optional[str] = None,
                     *, branch: Optional[str] = None, remote: Optional[str] = None, message: Optional[str] = None,
                     author: Optional[str] = None) -> str:
        """One commit on ``branch`` (default: the default branch) that adds ``table`` of ``from_repository``
        at ``ref`` (default: its default branch) as ``as_table`` (default: the same name), without copying
        data: objects of this warehouse are linked; with ``remote``, ``from_repository`` is a repository of
        that remote's warehouse and its objects are read in place there. Returns the commit.

        Example::

            repo.import_table("reference", "countries", ref="v3")
            repo.import_table("sales", "orders", as_table="orders_eu", remote="eu")
        """
        return str(self._ops.import_table(
            self.name, _args.text("from_repository", from_repository), _args.text("table", table),
            _args.optional_text("ref", ref), _args.optional_text("as_table", as_table), _args.optional_text("branch", branch),
            _args.optional_text("remote", remote), _args.optional_text("message", message),
            _args.optional_text("author", author)))


def clone(spark: SparkSession, repository: str, *, warehouse: str, metastore_url: str, into: Optional[str] = None,
          remote: str = "origin", download: Download = None, local_warehouse: Optional[str] = None,
          local_metastore_url: Optional[str] = None) -> "Repository":
    """Clones ``repository`` of another warehouse (``warehouse``, ``metastore_url``) into repository ``into``
    (default: the same name) of this session's warehouse (or ``local_warehouse``): its whole history with the
    same image hashes, its branches and tags as ``remotes/<remote>/...``, the remote recorded as ``remote``,
    and a local default branch. Objects are not copied: each is read in place at the remote when a query
    needs it, unless ``download="all"``. Raises :class:`~versioned.RepositoryExists` if ``into`` exists.

    Example::

        repo = versioned.clone(spark, "sales", warehouse="/data/team-warehouse",
                               metastore_url="jdbc:sqlite:/data/team-warehouse/metastore.db")
        repo.log().show()
    """
    from versioned.repository import Repository

    result = clone_result(spark, repository, warehouse=warehouse, metastore_url=metastore_url, into=into, remote=remote,
                          download=download, local_warehouse=local_warehouse, local_metastore_url=local_metastore_url)
    return Repository(spark, result.repository, warehouse=local_warehouse, metastore_url=local_metastore_url)


def clone_result(spark: SparkSession, repository: str, *, warehouse: str, metastore_url: str,
                 into: Optional[str] = None, remote: str = "origin", download: Download = None,
                 local_warehouse: Optional[str] = None, local_metastore_url: Optional[str] = None) -> FetchResult:
    """:func:`clone`, returning what it did (images, objects, downloaded, refs) rather than the repository;
    the command line reports it.

    Example::

        result = clone_result(spark, "sales", warehouse="/data/team",
                              metastore_url="jdbc:sqlite:/data/team/metastore.db")
        print(result.repository, result.images, [u.ref for u in result.refs])
    """
    from versioned.repository import _location, _ops

    location = _location(_args.optional_text("local_warehouse", local_warehouse),
                         _args.optional_text("local_metastore_url", local_metastore_url))
    return FetchResult._of(_ops(spark, location).clone(
        _args.text("repository", repository), _args.text("warehouse", warehouse),
        _args.text("metastore_url", metastore_url), _args.optional_text("into", into), _args.text("remote", remote),
        _download(download)))
