"""The remotes part of the transports' contract (docs/REMOTES.md). :class:`versioned._ops.Ops` extends
:class:`RemoteOps`; :class:`versioned._jvm.JvmOps` calls the JVM facade ``versioned.spark.api.VersionedApi``,
:class:`versioned._connect.SqlOps` the SQL procedures ``add_remote``, ``remotes``, ``remove_remote``, ``clone``,
``fetch``, ``download``, ``pull``, ``push`` and ``import_table``.
"""

from __future__ import annotations

from typing import Optional, Protocol

from pyspark.sql import DataFrame

from versioned._outcomes import DownloadOutcome, FetchOutcome, MergeOutcome, PushOutcome

__all__ = ["RemoteOps"]


class RemoteOps(Protocol):
    """Remotes of a repository ``repo``: clone, fetch, download, pull, push and table import.

    Example::

        from versioned.repository import _ops
        _ops(spark, {}).remotes("shop").show()
    """

    def add_remote(self, repo: str, name: str, warehouse: str, metastore_url: str, repository: Optional[str]) -> None:
        """Adds remote ``name``: the warehouse at ``warehouse`` / ``metastore_url`` and its repository
        ``repository`` (None: the same name as ``repo``).

        Example::

            ops.add_remote("shop", "origin", "/data/team", "jdbc:sqlite:/data/team/metastore.db", None)
        """
        ...

    def remotes(self, repo: str) -> DataFrame:
        """The remotes of ``repo`` as a DataFrame (name, warehouse, metastore_url, repository).

        Example::

            ops.remotes("shop").show()
        """
        ...

    def remove_remote(self, repo: str, name: str) -> None:
        """Removes remote ``name`` and the refs tracking it.

        Example::

            ops.remove_remote("shop", "origin")
        """
        ...

    def remote_refs(self, repo: str, remote: Optional[str]) -> DataFrame:
        """The refs tracking ``remote`` (None: every remote) as a DataFrame (name, kind, image, created).

        Example::

            ops.remote_refs("shop", "origin").show()
        """
        ...

    def clone(self, repository: str, warehouse: str, metastore_url: str, into: Optional[str], remote: str,
              download: str) -> FetchOutcome:
        """Clones ``repository`` of the warehouse at ``warehouse`` / ``metastore_url`` into repository ``into``
        (None: the same name) of this warehouse, recording the remote as ``remote``; ``download``: ``all``
        (copy the objects) or ``none`` (read them in place).

        Example::

            ops.clone("shop", "/data/team", "jdbc:sqlite:/data/team/metastore.db", None, "origin", "none")
        """
        ...

    def fetch(self, repo: str, remote: str, download: str) -> FetchOutcome:
        """Brings what ``remote`` has that ``repo`` lacks and moves the refs tracking it; ``download``: ``all``
        or ``none``.

        Example::

            ops.fetch("shop", "origin", "none")["images"]
        """
        ...

    def download(self, repo: str, ref: Optional[str]) -> DownloadOutcome:
        """Copies into this warehouse the objects of ``ref``'s tables (None: of every version of ``repo``) that it
        knows only at a remote's places, verified, and forgets those places.

        Example::

            ops.download("shop", "main")["downloaded"]
        """
        ...

    def pull(self, repo: str, remote: str, branch: Optional[str], strategy: str, fast_forward: str,
             message: Optional[str], author: Optional[str]) -> MergeOutcome:
        """Fetches ``remote``, then merges its ``branch`` (None: the default branch) into the local branch of
        that name, with :meth:`merge`'s ``strategy`` and ``fast_forward``.

        Example::

            ops.pull("shop", "origin", None, "fail", "auto", None, None)["status"]
        """
        ...

    def push(self, repo: str, remote: str, branch: Optional[str], force: bool, tags: bool) -> PushOutcome:
        """Sends ``branch`` (None: the default branch) to ``remote`` by compare-and-swap (``force``: even when
        not a fast-forward), with the tags whose images the remote then has when ``tags``.

        Example::

            ops.push("shop", "origin", None, False, True)["status"]
        """
        ...

    def import_table(self, repo: str, from_repository: str, table: str, ref: Optional[str], as_table: Optional[str],
                     branch: Optional[str], remote: Optional[str], message: Optional[str],
                     author: Optional[str]) -> str:
        """One commit on ``branch`` (None: the default branch) adding ``table`` of ``from_repository`` at
        ``ref`` as ``as_table`` (None: the same name), linking its objects; with ``remote``, ``from_repository``
        is in that remote's warehouse. Returns the commit.

        Example::

            ops.import_table("shop", "reference", "countries", "v3", None, None, None, None, None)
        """
        ...
