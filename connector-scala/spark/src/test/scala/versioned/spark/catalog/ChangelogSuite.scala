package versioned.spark.catalog

import versioned.spark.diff

import org.apache.spark.sql.{DataFrame, Row}
import versioned.core.{ErrorClass, SeqImage}

/**
 * Spark's change feed (`CHANGES FROM VERSION ... TO VERSION ...`, `DataFrameReader.changes`) checked against
 * an oracle: the table's rows at every commit of the first-parent history, compared commit by commit.
 */
class ChangelogSuite extends CatalogSuiteBase {
  private val Meta = Seq("_change_type", "_commit_version", "_commit_timestamp")

  /** main's first-parent history, oldest first, with sequence numbers. */
  private def history(branch: String = "main"): Vector[SeqImage] = {
    val e = engine
    e.lineage.firstParentWhile("r", e.lineage.withSeq("r", e.resolve("r", versioned.core.Revision.Spec(branch)).hash))(_ => true)
  }

  private def contents(table: String, hash: String): Seq[Row] =
    if (engine.tableOption("r", hash, table).isEmpty) Nil
    else sql(s"SELECT * FROM c.r.$table VERSION AS OF '$hash'").collect().toSeq

  /** The rows of `table` at each commit of `all`, by commit hash (a commit's content never changes: read once). */
  private def statesOf(table: String, all: Vector[SeqImage]): Map[String, Seq[Row]] =
    all.map(i => i.image.hash -> contents(table, i.image.hash)).toMap

  /**
   * Expected change rows (user columns, `_change_type`, `_commit_version`) of the commits of `commits`
   * (each against its first parent), by comparing contents (`states`, [[statesOf]] the history). `key`: key column
   * indexes (empty: key-less).
   */
  private def oracle(key: Seq[Int], states: Map[String, Seq[Row]], commits: Vector[SeqImage],
                     computeUpdates: Boolean, net: Boolean): Seq[Row] = {
    def prev(i: SeqImage): Seq[Row] = i.image.parents.headOption.flatMap(states.get).getOrElse(Nil)
    def tag(r: Row, kind: String, seq: Long) = Row.fromSeq(r.toSeq :+ kind :+ seq)
    def changes(before: Seq[Row], after: Seq[Row], seq: Long): Seq[Row] =
      if (key.isEmpty) {
        val (b, a) = (before.groupBy(identity).view.mapValues(_.size).toMap, after.groupBy(identity).view.mapValues(_.size).toMap)
        (b.keySet ++ a.keySet).toSeq.flatMap { r =>
          val d = a.getOrElse(r, 0) - b.getOrElse(r, 0)
          if (d > 0) Seq.fill(d)(tag(r, "insert", seq)) else Seq.fill(-d)(tag(r, "delete", seq))
        }
      } else {
        def byKey(rs: Seq[Row]) = rs.map(r => key.map(r.get) -> r).toMap
        val (b, a) = (byKey(before), byKey(after))
        (b.keySet ++ a.keySet).toSeq.flatMap { k =>
          (b.get(k), a.get(k)) match {
            case (Some(x), None) => Seq(tag(x, "delete", seq))
            case (None, Some(y)) => Seq(tag(y, "insert", seq))
            case (Some(x), Some(y)) if x != y =>
              if (computeUpdates) Seq(tag(x, "update_preimage", seq), tag(y, "update_postimage", seq))
              else Seq(tag(x, "delete", seq), tag(y, "insert", seq))
            case _ => Nil
          }
        }
      }
    if (commits.isEmpty) Nil
    else if (!net) commits.flatMap(c => changes(prev(c), states(c.image.hash), c.seq))
    else {
      // the net change of each row identity; its version is the last commit that changed it
      val perCommit = commits.flatMap(c => changes(prev(c), states(c.image.hash), c.seq))
      val width = perCommit.headOption.map(_.length - 2).getOrElse(0)
      def id(r: Row) = if (key.isEmpty) r.toSeq.take(width) else key.map(r.get)
      val last = perCommit.groupBy(id).view.mapValues(_.map(_.getLong(width + 1)).max).toMap
      changes(prev(commits.head), states(commits.last.image.hash), 0L).map { r =>
        Row.fromSeq(r.toSeq.dropRight(1) :+ last(id(r)))
      }
    }
  }

  private def noTimestamp(df: DataFrame): Seq[Row] = sorted(df.drop("_commit_timestamp"))

  private def sqlChanges(table: String, from: String, to: String): DataFrame =
    sql(s"SELECT * FROM c.r.$table CHANGES FROM VERSION '$from' TO VERSION '$to'")

  private def dfChanges(table: String, from: String, to: Option[String], opts: (String, String)*): DataFrame = {
    val r = spark.read.option("startingVersion", from).options(opts.toMap)
    to.fold(r)(t => r.option("endingVersion", t)).changes(s"c.r.$table")
  }

  /** Every range [i, j] (start inclusive, as Spark's default) of `all` through SQL, and some through the DataFrame API. */
  private def checkRanges(table: String, key: Seq[Int]): Unit = {
    val all = history()
    val states = statesOf(table, all)
    val pairs = for (i <- all.indices; j <- all.indices if i <= j && (i == 0 || j == all.size - 1 || j == i + 1)) yield (i, j)
    pairs.foreach { case (i, j) =>
      val commits = all.slice(i, j + 1)
      val expected = oracle(key, states, commits, computeUpdates = false, net = false).sortBy(_.toString)
      val got = noTimestamp(sqlChanges(table, all(i).image.hash, all(j).seq.toString))
      assert(got == expected, s"changes of $table from commit $i to $j (SQL)")
    }
    val expected = oracle(key, states, all.drop(1), computeUpdates = true, net = false).sortBy(_.toString)
    assert(noTimestamp(dfChanges(table, all(1).seq.toString, None, "computeUpdates" -> "true")) == expected,
      s"changes of $table from commit 1 (DataFrame, computeUpdates)")
    // key-less: duplicates are separate identities, each with its own last commit; the oracle only counts copies
    def netRows(df: DataFrame) = if (key.nonEmpty) noTimestamp(df) else sorted(df.drop("_commit_timestamp", "_commit_version"))
    val net = oracle(key, states, all.drop(1), computeUpdates = true, net = true)
      .map(r => if (key.nonEmpty) r else Row.fromSeq(r.toSeq.dropRight(1))).sortBy(_.toString)
    assert(netRows(dfChanges(table, all(1).image.hash, Some("main"), "computeUpdates" -> "true",
      "deduplicationMode" -> "netChanges")) == net, s"net changes of $table (DataFrame)")
  }

  private def setup(): Unit = sql("CREATE NAMESPACE IF NOT EXISTS c.r")

  test("a keyed table: inserts, updates, deletes, upserts, MERGE and a change feed write, commit by commit") {
    setup()
    sql("CREATE TABLE c.r.t (id INT, v STRING, n INT, PRIMARY KEY (id))")
    sql("INSERT INTO c.r.t VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3), (4, 'd', 4)")
    sql("UPDATE c.r.t SET n = n * 10 WHERE id >= 3")
    sql("DELETE FROM c.r.t WHERE id = 1")
    val session = spark; import session.implicits._
    write(Seq((2, "b", 2), (3, "C", 30), (5, "e", 5)).toDF("id", "v", "n"), "r.t", "upsert" -> "true") // no-op, update, insert
    Seq((4, "D", 40), (6, "f", 6), (7, "g", 7)).toDF("id", "v", "n").createOrReplaceTempView("src")
    sql("""MERGE INTO c.r.t AS t USING src AS s ON t.id = s.id
           WHEN MATCHED THEN UPDATE SET v = s.v
           WHEN NOT MATCHED AND s.id = 6 THEN INSERT *""")
    write(Seq((6, "f", 6, true), (2, "B", 2, false), (8, "h", 8, false)).toDF("id", "v", "n", "gone"), "r.t",
      "upsert" -> "true", "deleteColumn" -> "gone")
    sql("INSERT INTO c.r.t VALUES (1, 'a2', 1)")
    checkRanges("t", Seq(0))
    // every commit after the first load is read from its DIFFs, although commit-time compaction rewrote the
    // small table each time (a commit's chain extends its parent's compacted chain)
    val all = history()
    diff.ChangeFeed.compared.set(0); diff.ChangeFeed.fromDiffs.set(0)
    sqlChanges("t", all(3).image.hash, "main").collect()
    assert(diff.ChangeFeed.compared.get == 0 && diff.ChangeFeed.fromDiffs.get == all.size - 3)
    // one commit: exact rows, with its timestamp
    val last = history().last
    val rows = sqlChanges("t", last.image.hash, last.image.hash).collect()
    assert(rows.map(r => (r.getInt(0), r.getString(3), r.getLong(4))).toSeq == Seq((1, "insert", last.seq)))
    assert(rows.head.getTimestamp(5).getTime == last.image.createdMs)
  }

  test("a composite key over several fragments, with commit-time compaction and an overwrite") {
    setup()
    sql("CREATE TABLE c.r.k (a INT, b STRING, x DOUBLE, PRIMARY KEY (a, b))")
    sql(s"INSERT INTO c.r.k VALUES ${(1 to 160).map(i => s"(${i % 40}, 'k${i / 40}', $i.5)").mkString(", ")}")
    sql("UPDATE c.r.k SET x = -x WHERE a % 7 = 0")
    sql("DELETE FROM c.r.k WHERE b = 'k3' AND a < 20")
    sql("INSERT INTO c.r.k VALUES (100, 'z', 1.0), (101, 'z', NULL)")
    val session = spark; import session.implicits._
    write(Seq((100, "z", 2.0), (0, "k1", 0.0), (102, "y", 3.0)).toDF("a", "b", "x"), "r.k", "upsert" -> "true")
    overwrite(sql("SELECT a, b, CASE WHEN a = 5 THEN x + 1 ELSE x END AS x FROM c.r.k WHERE a <> 6"), "r.k")
    checkRanges("k", Seq(0, 1))
  }

  test("a table whose key is every column: upserts of new and existing keys, deletes") {
    setup()
    sql("CREATE TABLE c.r.p (a INT, b STRING, PRIMARY KEY (a, b))")
    sql("INSERT INTO c.r.p VALUES (1, 'x'), (2, 'y'), (3, 'z')")
    val session = spark; import session.implicits._
    write(Seq((1, "x"), (4, "w")).toDF("a", "b"), "r.p", "upsert" -> "true")
    sql("DELETE FROM c.r.p WHERE a = 2")
    checkRanges("p", Seq(0, 1))
  }

  test("a key-less table: duplicates, deletes, an overwrite with a new schema starts a new feed") {
    setup()
    sql("CREATE TABLE c.r.d (x INT, y STRING)")
    sql("INSERT INTO c.r.d VALUES (1, 'a'), (1, 'a'), (2, 'b'), (3, NULL)")
    sql("INSERT INTO c.r.d VALUES (1, 'a'), (4, 'd')")
    sql("DELETE FROM c.r.d WHERE x = 2 OR y IS NULL")
    sql("UPDATE c.r.d SET y = 'D' WHERE x = 4")
    checkRanges("d", Nil)
    val before = history().last
    overwrite(spark.range(3).selectExpr("CAST(id AS INT) AS x", "'n' AS y", "id AS z"), "r.d")
    val e = intercept[Throwable](sqlChanges("d", before.image.hash, "main").collect())
    expectError(ErrorClass.SchemaMismatch, "one schema")(e)
    val h = history().last
    assert(noTimestamp(sqlChanges("d", h.image.hash, "main")).map(r => (r.getInt(0), r.getLong(2), r.getString(3))) ==
      Seq((0, 0L, "insert"), (1, 1L, "insert"), (2, 2L, "insert")))
  }

  test("versions by branch, tag, hash prefix, ancestry and sequence number; bounds and net changes") {
    setup()
    sql("CREATE TABLE c.r.t (id INT, v STRING, PRIMARY KEY (id))")
    sql("INSERT INTO c.r.t VALUES (1, 'a'), (2, 'b')")
    sql("CALL c.system.create_tag(repository => 'r', tag => 'v1', ref => 'main')")
    sql("UPDATE c.r.t SET v = 'B' WHERE id = 2")
    sql("INSERT INTO c.r.t VALUES (3, 'c')")
    sql("DELETE FROM c.r.t WHERE id = 3")
    sql("UPDATE c.r.t SET v = 'BB' WHERE id = 2")
    val all = history()
    val v1 = all.find(_.image.hash == engine.resolve("r", versioned.core.Revision.Spec("v1")).hash).get
    val bySeq = noTimestamp(sqlChanges("t", v1.seq.toString, all.last.seq.toString))
    assert(bySeq == noTimestamp(sqlChanges("t", "v1", "main")))
    assert(bySeq == noTimestamp(sqlChanges("t", v1.image.hash.take(10), "main~0")))
    assert(bySeq.map(_.getString(2)).groupBy(identity).view.mapValues(_.size).toMap ==
      Map("insert" -> 5, "delete" -> 3), "v1's two inserts, then delete+insert per update, insert and delete of 3")
    // starting bound exclusive: v1's own commit left out
    val exclusive = noTimestamp(dfChanges("t", "v1", Some("main"), "startingBoundInclusive" -> "false"))
    assert(exclusive == bySeq.filterNot(_.getLong(3) == v1.seq))
    assert(noTimestamp(sqlChanges("t", "main~2", "main~1")).map(r => (r.getInt(0), r.getString(2))).toSet ==
      Set((3, "insert"), (3, "delete")))
    // net changes over v1's successors: 2 updated once (b -> BB), 3 never visible
    val net = noTimestamp(dfChanges("t", "v1", None, "startingBoundInclusive" -> "false",
      "deduplicationMode" -> "netChanges", "computeUpdates" -> "true"))
    assert(net == Seq(Row(2, "B", "update_preimage", all.last.seq), Row(2, "BB", "update_postimage", all.last.seq))
      .map(r => Row(r.getInt(0), if (r.getString(2) == "update_preimage") "b" else "BB", r.getString(2), r.getLong(3)))
      .sortBy(_.toString))
    val netRaw = noTimestamp(dfChanges("t", "v1", None, "startingBoundInclusive" -> "false", "deduplicationMode" -> "netChanges"))
    assert(netRaw == Seq(Row(2, "b", "delete", all.last.seq), Row(2, "BB", "insert", all.last.seq)).sortBy(_.toString))
  }

  test("a branch's feed follows its own first-parent line; the table name selects the branch") {
    setup()
    sql("CREATE TABLE c.r.t (id INT, v STRING, PRIMARY KEY (id))")
    sql("INSERT INTO c.r.t VALUES (1, 'a')")
    sql("CALL c.system.create_branch(repository => 'r', branch => 'dev', from_ref => 'main')")
    sql("INSERT INTO c.r.`t@dev` VALUES (2, 'b')")
    sql("INSERT INTO c.r.t VALUES (3, 'c')")
    val rows = noTimestamp(spark.read.option("startingVersion", "main~1").option("startingBoundInclusive", "false")
      .changes("c.r.`t@dev`"))
    assert(rows.map(r => (r.getInt(0), r.getString(2))) == Seq((2, "insert")))
    val e = intercept[Throwable](sqlChanges("t", "dev", "main").collect())
    expectError(ErrorClass.InvalidRevision, "not an ancestor")(e)
  }

  test("bad inputs are typed") {
    setup()
    sql("CREATE TABLE c.r.t (id INT, v STRING, PRIMARY KEY (id))")
    sql("INSERT INTO c.r.t VALUES (1, 'a')")
    sql("INSERT INTO c.r.t VALUES (2, 'b')")
    expectError(ErrorClass.RefNotFound, "nope")(intercept[Throwable](sqlChanges("t", "nope", "main").collect()))
    expectError(ErrorClass.RefNotFound, "nope")(intercept[Throwable](sqlChanges("t", "main", "nope").collect()))
    expectError(ErrorClass.ImageNotFound, "999")(intercept[Throwable](sqlChanges("t", "999", "main").collect()))
    expectError(ErrorClass.InvalidRevision, "not an ancestor")(intercept[Throwable](sqlChanges("t", "main", "main~1").collect()))
    expectError(ErrorClass.ImageNotFound)(intercept[Throwable](sqlChanges("t", "main~5", "main").collect()))
    assert(intercept[Throwable](sql("SELECT * FROM c.r.nope CHANGES FROM VERSION 'main'").collect())
      .getMessage.contains("nope"))
  }

  test("SQL: numeric versions, WITH options and timestamp ranges") {
    setup()
    sql("CREATE TABLE c.r.t (id INT, v STRING, PRIMARY KEY (id))")
    sql("INSERT INTO c.r.t VALUES (1, 'a'), (2, 'b')")
    sql("UPDATE c.r.t SET v = 'B' WHERE id = 2")
    sql("DELETE FROM c.r.t WHERE id = 1")
    val all = history()
    val (s1, s2, s3) = (all(1).seq, all(2).seq, all(3).seq)
    assert(noTimestamp(sql(s"SELECT * FROM c.r.t CHANGES FROM VERSION $s2 TO VERSION $s3 WITH (computeUpdates = true)")) ==
      Seq(Row(1, "a", "delete", s3), Row(2, "B", "update_postimage", s2), Row(2, "b", "update_preimage", s2)))
    assert(noTimestamp(sql(s"SELECT * FROM c.r.t CHANGES FROM VERSION $s1 " +
      "WITH (deduplicationMode = 'netChanges', computeUpdates = true)")) == Seq(Row(2, "B", "insert", s2)))
    val t = new java.sql.Timestamp(all(2).image.createdMs)
    val byTime = noTimestamp(sql(s"SELECT * FROM c.r.t CHANGES FROM TIMESTAMP '$t' TO TIMESTAMP '${new java.sql.Timestamp(all(3).image.createdMs)}'"))
    assert(byTime == noTimestamp(sql(s"SELECT * FROM c.r.t CHANGES FROM VERSION $s2 TO VERSION $s3")))
    assert(sql(s"SELECT * FROM c.r.t CHANGES FROM VERSION $s3 TO VERSION $s3").drop("_commit_timestamp").schema.fieldNames.toSeq ==
      Seq("id", "v", "_change_type", "_commit_version"))
  }

  test("a streaming feed delivers each new commit's changes once") {
    setup()
    sql("CREATE TABLE c.r.t (id INT, v STRING, PRIMARY KEY (id))")
    sql("INSERT INTO c.r.t VALUES (1, 'a'), (2, 'b')")
    val q = spark.readStream.option("startingVersion", "main").option("computeUpdates", "true").changes("c.r.t")
      .writeStream.format("memory").queryName("feed").start()
    try {
      q.processAllAvailable()
      def got = sorted(spark.table("feed").drop("_commit_timestamp"))
      val s1 = history().last.seq
      assert(got == Seq(Row(1, "a", "insert", s1), Row(2, "b", "insert", s1)))
      sql("UPDATE c.r.t SET v = 'B' WHERE id = 2")
      sql("DELETE FROM c.r.t WHERE id = 1")
      q.processAllAvailable()
      val Seq(s2, s3) = history().takeRight(2).map(_.seq)
      assert(got == Seq(Row(1, "a", "delete", s3), Row(1, "a", "insert", s1), Row(2, "B", "update_postimage", s2),
        Row(2, "b", "insert", s1), Row(2, "b", "update_preimage", s2)))
    } finally q.stop()
    val e = intercept[Throwable] {
      val n = spark.readStream.option("startingVersion", "main").option("deduplicationMode", "netChanges").changes("c.r.t")
        .writeStream.format("memory").queryName("net").start()
      try n.processAllAvailable() finally n.stop()
    }
    assert(Iterator.iterate(e)(_.getCause).takeWhile(_ != null).exists(_.getMessage.contains("Net changes")), e)
  }

  test("a DIFF commit's feed reads its DIFFs and the parent's rows of its keys, not the table") {
    setup()
    write(spark.range(1, 201).selectExpr("CAST(id AS INT) AS id", "concat('v', id) AS v"), "r.t", "primaryKey" -> "id")
    sql("INSERT INTO c.r.t VALUES (1000, 'x'), (1001, 'y')")
    val head = history().last
    val t = tableAt("r", "t").get
    assert(t.fragments.size > 1 && t.compacted.isEmpty && objectsOf(t).exists(_.kind == versioned.core.ObjectKind.Snap))
    // remove every SNAP: the insert commit's feed must not need them
    objectsOf(t).filter(_.kind == versioned.core.ObjectKind.Snap).foreach { m =>
      assert(new java.io.File(warehouse, m.path).delete(), m.path)
    }
    assert(noTimestamp(sqlChanges("t", head.image.hash, "main")) ==
      Seq(Row(1000, "x", "insert", head.seq), Row(1001, "y", "insert", head.seq)))
  }
}
