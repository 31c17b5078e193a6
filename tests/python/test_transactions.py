"""Repository.transaction: several tables committed as one image, or nothing at all, on classic and Spark
Connect sessions."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import pytest
from pyspark.sql import SparkSession

from versioned import (DuplicateKey, ImmutableRef, InvalidOption, RefConflict, Repository, TableNotFound,
                       Transaction, TransactionClosed)
from versioned import _connect
from conftest import frame, refs_state, rows_of

SESSIONS = ("classic", "connect")  # on Connect the transaction lives in the server (docs/CONNECT.md)


@pytest.fixture
def shop(spark: SparkSession) -> Repository:
    """Repository 'shop': orders {1:a,2:b,3:c}, customers {1:x,2:y}, events (key-less), one commit each."""
    frame(spark, [(1, "a"), (2, "b"), (3, "c")]).write.versioned("shop.orders", primary_key="id")
    frame(spark, [(1, "x"), (2, "y")]).write.versioned("shop.customers", primary_key="id")
    spark.createDataFrame([("2025-12-31", 1), ("2026-01-02", 2), ("2025-06-01", 3)],
                          "day string, n int").write.versioned("shop.events")
    return Repository(spark, "shop")


def state(spark: SparkSession, repo: Repository) -> Dict[str, Any]:
    """Refs, history and the rows of every table."""
    tables = {t["name"]: rows_of(spark.read.versioned(f"{repo.name}.{t['name']}"))
              for t in repo.show("main")["tables"]}
    return {"refs": refs_state(repo), "tables": tables}


def top(repo: Repository) -> Tuple[str, List[str], List[str]]:
    [row] = repo.log("main", limit=1).collect()
    return row["message"], list(row["parents"]), list(row["tables_changed"])


def test_three_tables_in_one_image_with_one_parent(spark: SparkSession, shop: Repository) -> None:
    before = shop.resolve("main")
    with shop.transaction(branch="main", message="nightly load", author="etl") as tx:
        assert isinstance(tx, Transaction) and tx.base == before and tx.branch == "main"
        tx.write(frame(spark, [(1, "A"), (4, "D")]), "orders", mode="overwrite")
        tx.upsert(frame(spark, [(2, "Y"), (3, "z")]), "customers")
        assert tx.delete_where("events", "day < '2026-01-01'") == 2
        assert tx.changed_tables == ["customers", "events", "orders"]
        assert shop.resolve("main") == before, "nothing is visible before the commit"
    assert tx.commit_hash == shop.resolve("main") and not tx.is_open
    assert top(shop) == ("nightly load", [before], ["customers", "events", "orders"])
    assert [r["author"] for r in shop.log("main", limit=1).collect()] == ["etl"]
    assert rows_of(spark.read.versioned("shop.orders")) == [(1, "A"), (4, "D")]
    assert rows_of(spark.read.versioned("shop.customers")) == [(1, "x"), (2, "Y"), (3, "z")]
    assert rows_of(spark.read.versioned("shop.events")) == [("2026-01-02", 2)]
    assert rows_of(spark.read.versioned("shop.orders", ref="main~1")) == [(1, "a"), (2, "b"), (3, "c")]


def test_second_operation_on_a_table_sees_the_first(spark: SparkSession, shop: Repository) -> None:
    with shop.transaction(message="two steps") as tx:
        tx.upsert(frame(spark, [(7, "new"), (8, "new")]), "orders")
        assert rows_of(tx.read("orders").filter("name = 'new'")) == [(7, "new"), (8, "new")]
        assert tx.delete_where("orders", "name = 'new' and id > 7") == 1
        with pytest.raises(DuplicateKey):
            tx.write(frame(spark, [(9, "p"), (9, "q")]), "orders")
        tx.write(frame(spark, [(8, "again")]), "orders")
        assert rows_of(spark.read.versioned("shop.orders")) == [(1, "a"), (2, "b"), (3, "c")]
    assert rows_of(spark.read.versioned("shop.orders")) == [(1, "a"), (2, "b"), (3, "c"), (7, "new"), (8, "again")]
    assert top(shop)[0] == "two steps" and top(shop)[2] == ["orders"]


def test_an_exception_in_the_block_leaves_branch_and_every_table_unchanged(spark: SparkSession,
                                                                         shop: Repository) -> None:
    before = state(spark, shop)
    with pytest.raises(RuntimeError, match="stop here"):
        with shop.transaction() as tx:
            tx.write(frame(spark, [(1, "A")]), "orders", mode="overwrite")
            tx.upsert(frame(spark, [(5, "v")]), "customers")
            tx.write(frame(spark, [(1, "n")]), "brand_new", primary_key="id")
            raise RuntimeError("stop here")
    assert not tx.is_open and tx.commit_hash is None
    assert state(spark, shop) == before


def test_a_failing_operation_in_the_block_commits_nothing(spark: SparkSession, shop: Repository) -> None:
    before = state(spark, shop)
    with pytest.raises(DuplicateKey):
        with shop.transaction() as tx:
            tx.delete_where("events", "true")
            tx.upsert(frame(spark, [(2, "dup"), (2, "dup2")]), "customers")
            tx.upsert(frame(spark, [(9, "never")]), "orders")
    with pytest.raises(TableNotFound):
        with shop.transaction() as tx:
            tx.upsert(frame(spark, [(1, "q")]), "orders")
            tx.delete_where("no_such_table", "true")
    assert state(spark, shop) == before


def test_a_concurrent_commit_to_another_table_is_rebased(spark: SparkSession, shop: Repository) -> None:
    with shop.transaction(message="tx") as tx:
        tx.upsert(frame(spark, [(4, "d")]), "orders")
        shop.delete_where("events", "n = 3", message="concurrent")  # another writer, another table
        concurrent = shop.resolve("main")
    assert top(shop) == ("tx", [concurrent], ["orders"])
    assert rows_of(spark.read.versioned("shop.orders")) == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    assert rows_of(spark.read.versioned("shop.events")) == [("2025-12-31", 1), ("2026-01-02", 2)]


def test_a_concurrent_commit_to_other_keys_of_the_same_table_is_replanned(spark: SparkSession,
                                                                          shop: Repository) -> None:
    with shop.transaction(message="tx") as tx:
        tx.upsert(frame(spark, [(4, "d")]), "orders")
        shop.upsert(frame(spark, [(1, "other")]), "orders", message="concurrent")  # another key of orders
        concurrent = shop.resolve("main")
    assert top(shop) == ("tx", [concurrent], ["orders"])
    assert rows_of(spark.read.versioned("shop.orders")) == [(1, "other"), (2, "b"), (3, "c"), (4, "d")]


def test_a_concurrent_commit_to_the_same_keys_is_a_conflict(spark: SparkSession, shop: Repository) -> None:
    with pytest.raises(RefConflict, match="Nothing of the transaction was committed"):
        with shop.transaction() as tx:
            tx.upsert(frame(spark, [(4, "d")]), "orders")
            tx.upsert(frame(spark, [(3, "z")]), "customers")
            shop.upsert(frame(spark, [(4, "other")]), "orders", message="concurrent")
            before = state(spark, shop)
    assert state(spark, shop) == before
    assert top(shop)[0] == "concurrent"
    with pytest.raises(TransactionClosed):
        tx.upsert(frame(spark, [(5, "e")]), "orders")


def test_empty_transaction_commits_nothing(spark: SparkSession, shop: Repository) -> None:
    before = state(spark, shop)
    with shop.transaction() as tx:
        assert tx.delete_where("orders", "id > 100") == 0
    assert tx.commit_hash is None and not tx.is_open
    assert shop.transaction().commit() is None
    assert state(spark, shop) == before


def test_operations_after_commit_or_abort_raise(spark: SparkSession, shop: Repository) -> None:
    tx = shop.transaction()
    tx.upsert(frame(spark, [(4, "d")]), "orders")
    image = tx.commit()
    assert image is not None and image == shop.resolve("main") == tx.commit_hash
    for call in (lambda: tx.upsert(frame(spark, [(5, "e")]), "orders"), lambda: tx.read("orders"),
                 tx.commit, tx.abort):
        with pytest.raises(TransactionClosed, match="committed"):
            call()
    aborted = shop.transaction()
    aborted.delete_where("orders", "true")
    aborted.abort()
    with pytest.raises(TransactionClosed, match="aborted"):
        aborted.write(frame(spark, [(9, "z")]), "orders")
    assert len(spark.read.versioned("shop.orders").collect()) == 4
    with shop.transaction() as tx2:
        with pytest.raises(InvalidOption):
            tx2.write(frame(spark, [(9, "z")]), "orders", mode="upsert")
        tx2.commit()  # an explicit commit inside the block; the block's end does not commit again
    assert tx2.commit_hash is None


def test_first_load_creates_the_repository(spark: SparkSession) -> None:
    repo = Repository(spark, "fresh")
    with repo.transaction(message="first load") as tx:
        assert tx.base is None
        tx.write(frame(spark, [(1, "a"), (2, "b")]), "p", primary_key="id")
        tx.write(frame(spark, [(1, "x")]), "q", primary_key=["id"])
    assert top(repo) == ("first load", [], ["p", "q"])
    assert rows_of(spark.read.versioned("fresh.q")) == [(1, "x")]


def test_a_transaction_on_a_tag_is_refused(shop: Repository) -> None:
    shop.create_tag("v1", "main")
    with pytest.raises(ImmutableRef):
        shop.transaction(branch="v1")


def test_a_read_stays_pinned_after_later_operations_and_the_commit(spark: SparkSession, shop: Repository) -> None:
    tx = shop.transaction(message="pinned")
    tx.upsert(frame(spark, [(4, "d")]), "orders")
    seen = tx.read("orders")
    tx.delete_where("orders", "id <= 2")
    assert rows_of(seen) == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    assert rows_of(tx.read("orders")) == [(3, "c"), (4, "d")]
    assert tx.commit() == shop.resolve("main")
    assert rows_of(seen) == [(1, "a"), (2, "b"), (3, "c"), (4, "d")], "still valid after the commit"
    assert rows_of(spark.read.versioned("shop.orders")) == [(3, "c"), (4, "d")]


def test_upsert_into_a_table_without_primary_key_is_refused(spark: SparkSession, shop: Repository) -> None:
    before = state(spark, shop)
    with pytest.raises(InvalidOption, match="needs a primary key"):
        with shop.transaction() as tx:
            tx.upsert(frame(spark, [(9, "z")]), "orders")
            tx.upsert(spark.createDataFrame([("2027-01-01", 9)], "day string, n int"), "events")
    assert not tx.is_open and tx.commit_hash is None
    assert state(spark, shop) == before


def test_bad_arguments_are_refused_before_anything_is_sent(spark: SparkSession, shop: Repository) -> None:
    with shop.transaction() as tx:
        with pytest.raises(TypeError):
            tx.upsert([(1, "a")], "orders")  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            tx.read(42)  # type: ignore[arg-type]
        assert tx.is_open and tx.changed_tables == []
    assert tx.commit_hash is None


def test_the_sql_procedures_refuse_unknown_tokens(spark: SparkSession, shop: Repository) -> None:
    """What a Connect client sends, called directly: an unknown token is TransactionClosed on both sessions."""
    before = state(spark, shop)
    for proc, args in (("commit_transaction", {}), ("transaction_delete_where", {"table": "orders", "condition": "true"}),
                       ("transaction_read", {"table": "orders"})):
        with pytest.raises(TransactionClosed, match="no-such-token"):
            _connect.first(_connect.procedure(spark, None, proc, token="no-such-token", **args))
    begun = _connect.first(_connect.procedure(spark, None, "begin_transaction", repository="shop"))
    token = begun["token"]
    assert begun["open"] and begun["branch"] == "main" and begun["base"] == shop.resolve("main")
    _connect.first(_connect.procedure(spark, None, "abort_transaction", token=token))
    with pytest.raises(TransactionClosed, match="aborted"):
        _connect.first(_connect.procedure(spark, None, "commit_transaction", token=token))
    assert state(spark, shop) == before
