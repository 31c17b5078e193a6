package versioned.spark.catalog

import org.apache.spark.sql.Row
import versioned.core.{ErrorClass, Fragment, ObjectKind, Revision}

class MetadataTableSuite extends CatalogSuiteBase {

  private def setup(): Unit = {
    keyedTable((1, "a"), (2, "b"))
    sql("CREATE TABLE c.r.other (x INT)")
    sql("UPDATE c.r.t SET v = 'B' WHERE id = 2")
    engine.refs.createTag("r", "v1", Revision.DefaultBranch)
    engine.refs.createBranch("r", "dev", Revision.Spec("main~1"))
  }

  test("`$log` lists the repository's images newest first; `$log@ref` and VERSION AS OF start elsewhere") {
    setup()
    val log = sql("SELECT hash, message, tables_changed, parents FROM c.r.`$log`").collect()
    assert(log.map(_.getString(1)).toSeq == Seq("update t", "create table other", "append to t", "create table t"))
    assert(log.head.getString(0) == headOf("r").get)
    assert(log.head.getSeq[String](2) == Seq("t"))
    assert(log.head.getSeq[String](3) == Seq(log(1).getString(0)))
    assert(sql("SELECT * FROM c.r.`$log@dev`").count() == 3)
    assert(sql("SELECT * FROM c.r.`$log` VERSION AS OF 'main~2'").count() == 2)
    assert(sql("SELECT created FROM c.r.`$log`").schema.head.dataType.typeName == "timestamp")
  }

  test("`t$history` lists the images that changed one table, with the operation") {
    setup()
    sql("ALTER TABLE c.r.t ADD COLUMN n INT")
    sql("DROP TABLE c.r.t")
    val h = sql("SELECT message, operation, table_hash FROM c.r.`t$history`").collect()
    assert(h.map(r => r.getString(0) -> r.getString(1)).toSeq == Seq(
      "drop table t" -> "drop", "alter table t: add column n" -> "alter", "update t" -> "write",
      "append to t" -> "write", "create table t" -> "create"))
    assert(h.head.isNullAt(2) && !h(1).isNullAt(2))
    // a table that never existed has no history: TABLE_NOT_FOUND, not an empty answer
    expectError(ErrorClass.TableNotFound, "'nope'")(intercept[Throwable](sql("SELECT * FROM c.r.`nope$history`").collect()))
  }

  test("`$refs` and `t$refs` list refs with their images") {
    setup()
    val refs = sql("SELECT name, kind, image FROM c.r.`$refs` ORDER BY name").collect().toSeq
    assert(refs.map(r => (r.getString(0), r.getString(1))) == Seq("dev" -> "branch", "main" -> "branch", "v1" -> "tag"))
    assert(refs.find(_.getString(0) == "main").get.getString(2) == headOf("r").get)
    val t = sql("SELECT name, table_hash FROM c.r.`t$refs` ORDER BY name").collect().toSeq
    assert(t.map(_.getString(1)) == Seq(tableAt("r", "t", "dev").get.hash, tableAt("r", "t").get.hash, tableAt("r", "t").get.hash))
    engine.refs.createBranch("r", "old", Revision.Spec("main~2"))
    val other = sql("SELECT name FROM c.r.`other$refs` WHERE table_hash IS NULL").collect().map(_.getString(0)).toSeq
    assert(other == Seq("old"))
  }

  test("`t$objects` lists the objects of each fragment with kind, rows, bytes and statistics") {
    setup()
    val o = sql("SELECT representation, fragment, position, kind, rows, bytes, min['id'], max['id'] FROM c.r.`t$objects`")
      .collect().toSeq
    // Every object of the logical chains, then of the compacted representation (commit-time compaction).
    val t = tableAt("r", "t").get
    val metas = engine.objects((t.fragments ++ t.compacted.toSeq.flatten).flatMap(_.objects))
    def listing(rep: String, frags: Seq[Fragment]) = for {
      (f, fi) <- frags.zipWithIndex; (id, pos) <- f.objects.zipWithIndex
    } yield (rep, fi, pos, metas(id).kind, metas(id).rowCount)
    val logical = listing("logical", t.fragments)
    assert(o.map(r => (r.getString(0), r.getInt(1), r.getInt(2), r.getString(3), r.getLong(4))) ==
      logical ++ t.compacted.toSeq.flatMap(listing("compacted", _)))
    assert(logical.last == (("logical", 0, 1, ObjectKind.Diff, 1L)), "the UPDATE wrote one DIFF row on the chain")
    assert(o.forall(_.getLong(5) > 0))
    assert(o.head.getString(6) == "1" && o.head.getString(7) == "2")
    assert(sql("SELECT * FROM c.r.`t@dev$objects` WHERE representation = 'logical'").count() == 1,
      "the first INSERT wrote one object")
    assert(sql("SELECT * FROM c.r.`t$objects` VERSION AS OF 'main~3'").count() == 0)
  }

  test("`$image` describes one image: its tables, whether they changed, their size") {
    setup()
    val rows = sql("SELECT hash, message, table, status, primary_key, fragments, objects, object_rows FROM c.r.`$image`")
      .collect().toSeq.sortBy(_.getString(2))
    assert(rows.map(r => (r.getString(2), r.getString(3))) == Seq("other" -> "unchanged", "t" -> "changed"))
    assert(rows.forall(_.getString(0) == headOf("r").get))
    // Sizes are those of the representation reads use (compacted when commit-time compaction ran).
    val t = tableAt("r", "t").get
    val ids = t.effectiveFragments.flatMap(_.objects)
    val metas = engine.objects(ids)
    assert(rows(1).getSeq[String](4) == Seq("id") && rows(1).getInt(5) == t.effectiveFragments.size &&
      rows(1).getInt(6) == ids.size && rows(1).getLong(7) == ids.map(metas(_).rowCount).sum)
    sql("DROP TABLE c.r.other")
    val dropped = sql("SELECT table, status FROM c.r.`$image`").collect().toSeq.sortBy(_.getString(0))
    assert(dropped.map(r => (r.getString(0), r.getString(1))) == Seq("other" -> "dropped", "t" -> "unchanged"))
    assert(sql("SELECT DISTINCT message FROM c.r.`$image@v1`").head().getString(0) == "update t")
  }

  test("a repository without commits has empty metadata tables") {
    sql("CREATE NAMESPACE c.r")
    assert(sql("SELECT * FROM c.r.`$log`").collect().isEmpty)
    assert(sql("SELECT * FROM c.r.`$refs`").collect().isEmpty)
    assert(sql("SELECT * FROM c.r.`$image`").collect().isEmpty)
    assert(sql("SELECT * FROM c.r.`t$history`").collect().isEmpty)
  }

  test("metadata tables are read-only and not listed by SHOW TABLES") {
    setup()
    assert(sql("SHOW TABLES IN c.r").collect().map(_.getString(1)).toSeq.sorted == Seq("other", "t"))
    intercept[Exception](sql("INSERT INTO c.r.`t$history` SELECT * FROM c.r.`t$history`"))
    intercept[Exception](sql("DROP TABLE c.r.`$log`"))
  }
}
