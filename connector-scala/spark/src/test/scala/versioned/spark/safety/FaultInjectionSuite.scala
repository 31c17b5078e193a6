package versioned.spark.safety

import scala.jdk.CollectionConverters._
import org.apache.spark.sql.{DataFrame, Row}
import versioned.core._

/**
 * A write either raises and committed nothing, or returns its commit: a file system fails the Nth
 * operation of a write, for operations spread over the whole write (staging, object writes, commit,
 * commit-time compaction with its default settings, cleanup): the first and the last of each kind
 * ([[Faults.points]]). After each attempt the branch head and
 * the table equal the oracle, and every acknowledged version stays readable.
 */
class FaultInjectionSuite extends FaultyWarehouseSuite {
  /** A SQL catalog as well, for row-level statements. */
  override protected def extraConf: Map[String, String] =
    super.extraConf + ("spark.sql.catalog.c" -> classOf[versioned.spark.catalog.VersionedCatalog].getName)

  private def head(repo: String): Option[String] = eng.branchHeadOption(repo, "main").map(_.hash)

  /**
   * Runs `attempt` with the n-th file operation failing, for n spread over the operations it makes; each
   * time the outcome must be all or nothing. `oracle` gives the expected rows after a success.
   */
  private def allOrNothing(repo: String, table: String, attempt: () => Unit, before: () => Set[Row], after: Set[Row] => Set[Row]): Unit = {
    Faults.arm(0)
    val probeHead = head(repo)
    val start = before()
    Faults.arm(0) // the attempt's operations only, numbered as in the attempts below
    attempt()
    val ops = Faults.operations
    assert(ops > 3, s"the write made only $ops file operations")
    val acknowledged = scala.collection.mutable.ArrayBuffer(head(repo).get -> after(start))
    val probe = Faults.kindsSinceArmed
    val points = Faults.points(probe)
    points.foreach { n =>
      val current = read(s"$repo.$table").collect().toSet
      val h0 = head(repo)
      Faults.arm(n)
      val outcome = try { attempt(); None } catch { case t: Throwable => Some(t) }
      Faults.disarm()
      val h1 = head(repo)
      val now = read(s"$repo.$table").collect().toSet
      outcome match {
        case Some(t) =>
          assert(h1 == h0, s"fault at operation $n: the write raised ($t) but the branch moved")
          assert(now == current, s"fault at operation $n: the write raised but the table changed")
        case None =>
          assert(h1 != h0 || now == after(current), s"fault at operation $n: the write returned without a commit")
          assert(now == after(current), s"fault at operation $n: the write returned but the table is wrong")
          acknowledged += (h1.get -> now)
      }
    }
    acknowledged.foreach { case (image, expected) =>
      assert(read(s"$repo.$table", "image" -> image).collect().toSet == expected, s"acknowledged image ${image.take(12)} lost data")
    }
    info(s"$ops file operations of ${probe.distinct.size} kinds; faults at ${points.size} of them: ${points.size - acknowledged.size + 1} writes raised " +
      s"and committed nothing, ${acknowledged.size - 1} returned their commit")
    assert(probeHead.isEmpty || acknowledged.nonEmpty)
  }

  /** The injected fault among `t`'s causes: the operation that failed and its path. */
  private def injected(t: Throwable): Option[String] =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(64).flatMap(e => Option(e.getMessage)).collectFirst {
      case m if m.contains("injected fault: ") => m.substring(m.indexOf("injected fault: ") + "injected fault: ".length)
    }

  /**
   * A small row-level statement on the driver-side path (no Spark task creates a file: its rows stay on the
   * driver, which writes the DIFFs), with the n-th file operation failing for n spread over the operations it
   * makes. Each time it raises it committed nothing (branch head and table content as before, no unreferenced
   * object in the store) and the same statement then succeeds without the fault; a fault that does not make it
   * raise must leave its commit. `statement(k)` runs the k-th statement, `after(k, rows)` is the table it leaves;
   * `prepare(k)` runs before it, without faults. With `byTasks` the statement takes the distributed path instead.
   */
  private def raisesOrCommits(repo: String, table: String, statement: Int => Unit, after: (Int, Set[Row]) => Set[Row],
                              prepare: Int => Unit = _ => (), byTasks: Boolean = false): Unit = {
    def rows: Set[Row] = read(s"$repo.$table").collect().toSet
    var k = 1
    prepare(k)
    val start = rows
    Faults.arm(0)
    Faults.created.clear()
    statement(k)
    val ops = Faults.operations
    assert(rows == after(k, start), "the statement without faults")
    val taskFiles = Faults.created.asScala.collect { case (p, thread) if thread.startsWith("Executor task launch worker") => p }
    assert(taskFiles.isEmpty != byTasks, s"expected the ${if (byTasks) "distributed" else "driver-side"} path, but " +
      s"Spark tasks created ${if (taskFiles.isEmpty) "no file" else taskFiles.mkString(", ")}")
    val failed = scala.collection.mutable.ArrayBuffer.empty[String]
    // Each fault point fails the n-th operation; as later statements may read longer chains, the write of their
    // objects may come later than in the first one, so a last attempt fails the write itself: the first move of a
    // new object out of the write's staging area.
    val probe = Faults.kindsSinceArmed
    val attempts = Faults.points(probe).map(n => (s"operation $n", () => Faults.arm(n))) :+
      ("the move of a new object out of staging", () => Faults.armOn("rename", "/_staging/"))
    attempts.foreach { case (fault, arm) =>
      k += 1
      awaitCompaction()
      prepare(k)
      val (h0, before) = (head(repo), rows)
      arm()
      val outcome = try { statement(k); None } catch { case t: Throwable => Some(t) }
      Faults.disarm()
      outcome match {
        case Some(t) =>
          failed += injected(t).getOrElse(fail(s"fault at $fault: the statement raised without an injected fault", t))
          assert(head(repo) == h0, s"fault at $fault: the statement raised ($t) but the branch moved")
          assert(rows == before, s"fault at $fault: the statement raised but the table changed")
          val left = eng.maintenance.unreferencedObjects()
          assert(left.isEmpty, s"fault at $fault: the statement raised but left unreferenced objects ${left.mkString(", ")}")
          statement(k)
          assert(head(repo) != h0, s"fault at $fault: the retry without the fault committed nothing")
          assert(rows == after(k, before), s"fault at $fault: the retry without the fault left a wrong table")
        case None =>
          assert(head(repo) != h0, s"fault at $fault: the statement returned without a commit")
          assert(rows == after(k, before), s"fault at $fault: the statement returned but the table is wrong")
      }
    }
    info(s"$ops file operations of ${probe.distinct.size} kinds; faults at ${attempts.size} of them, ${failed.size} made the statement raise " +
      s"(${failed.map(_.takeWhile(_ != ' ')).distinct.mkString(", ")} failed)")
    // the write itself: a new object moved from the write's staging area into the store
    assert(failed.exists(f => f.startsWith("rename ") && f.contains("/_staging/")),
      s"no fault in writing the statement's objects made it raise: ${failed.mkString("; ")}")
  }

  test("a small UPDATE (driver-side path) that fails commits nothing, and succeeds when retried") {
    val s = spark; import s.implicits._
    write((1 to 120).map(i => (i, s"v$i")).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    def ids(k: Int) = Set(k, 60 + k)
    raisesOrCommits("r", "t", k => spark.sql(s"UPDATE c.r.t SET v = 'u$k' WHERE id = $k OR id = ${60 + k}"),
      (k, cur) => cur.map(r => if (ids(k)(r.getInt(0))) Row(r.getInt(0), s"u$k") else r))
  }

  test("a small UPDATE moving keys (their new keys looked up on the driver at commit) that fails commits nothing") {
    val s = spark; import s.implicits._
    write((1 to 120).map(i => (i, s"v$i")).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    // key k moves to 1000 + k: a key the statement did not read, looked up at commit (LocalLookup)
    raisesOrCommits("r", "t", k => spark.sql(s"UPDATE c.r.t SET id = id + 1000 WHERE id = $k"),
      (k, cur) => cur.map(r => if (r.getInt(0) == k) Row(1000 + k, r.getString(1)) else r))
  }

  test("a small delete_where (driver-side path) that fails commits nothing, and succeeds when retried") {
    val s = spark; import s.implicits._
    write((1 to 120).map(i => (i, s"v$i")).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    def ids(k: Int) = Set(k, 60 + k)
    raisesOrCommits("r", "t",
      k => assert(versioned.spark.api.TableApi.deleteWhere(spark, null, "r.t", s"id = $k OR id = ${60 + k}", null, null, null) == 2),
      (k, cur) => cur.filterNot(r => ids(k)(r.getInt(0))))
  }

  test("a merge of a diverged branch (on the driver, and by Spark tasks) that fails commits nothing") {
    val s = spark; import s.implicits._
    write((1 to 120).map(i => (i, s"v$i")).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    for (tasks <- Seq(false, true)) {
      val tag = if (tasks) "t" else "d"
      // the source changes keys k and 200 + k (new), the target key 60 + k: a three-way merge without conflicts
      def prepare(k: Int): Unit = {
        eng.refs.createBranch("r", s"$tag$k", Revision.Spec("main"))
        write(Seq((k, s"s$k"), (200 + k, s"n$k")).toDF("id", "v"), "r.t", "upsert" -> "true", "branch" -> s"$tag$k")
        write(Seq((60 + k, s"m$k")).toDF("id", "v"), "r.t", "upsert" -> "true")
      }
      def merge(k: Int): Unit = {
        val o = versioned.spark.api.VersionedApi.merge(spark, null, "r", s"$tag$k", "main", null, null, false, null,
          "tester", null, false)
        assert(o.status == versioned.spark.merge.MergeOutcome.Merged, o.status)
      }
      def after(k: Int, cur: Set[Row]): Set[Row] = cur.filterNot(_.getInt(0) == k) ++ Set(Row(k, s"s$k"), Row(200 + k, s"n$k"))
      if (tasks) spark.conf.set(versioned.spark.session.VersionedOptions.ConfLocalCommitMaxRows, "0")
      try raisesOrCommits("r", "t", merge, after, prepare, byTasks = tasks)
      finally spark.conf.unset(versioned.spark.session.VersionedOptions.ConfLocalCommitMaxRows)
    }
  }

  test("keyed upserts (driver-written DIFFs, commit-time compaction)") {
    val s = spark; import s.implicits._
    write((1 to 120).map(i => (i, s"v$i")).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    var k = 0
    allOrNothing("r", "t", () => { k += 1; write(Seq((k, s"u$k"), (200 + k, s"n$k")).toDF("id", "v"), "r.t", "upsert" -> "true") },
      () => read("r.t").collect().toSet,
      cur => { val byId = cur.map(r => r.getInt(0) -> r).toMap; (byId + (k -> Row(k, s"u$k")) + ((200 + k) -> Row(200 + k, s"n$k"))).values.toSet })
  }

  // Each commit adds a DIFF to the chains the next one reads, so later attempts make more reads than the first:
  // the faults land in the chain reads the before-images add, the object writes being those of the test above.
  test("keyed upserts with before-images: the commit reads its chain, then writes DIFFs that record it") {
    val s = spark; import s.implicits._
    write((1 to 120).map(i => (i, s"v$i")).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    var k = 0
    allOrNothing("r", "t",
      () => { k += 1; write(Seq((k, s"u$k"), (200 + k, s"n$k")).toDF("id", "v"), "r.t", "upsert" -> "true", "beforeImages" -> "true") },
      () => read("r.t").collect().toSet,
      cur => { val byId = cur.map(r => r.getInt(0) -> r).toMap; (byId + (k -> Row(k, s"u$k")) + ((200 + k) -> Row(200 + k, s"n$k"))).values.toSet })
    val h = eng.resolve("r", Revision.Spec("main"))
    val ids = eng.table("r", h, "t").fragments.flatMap(_.objects)
    assert(eng.objects(ids).values.exists(_.minValues.contains(versioned.spark.session.VersionedOptions.PriorChainColumn)),
      "the upserts should have recorded before-images")
  }

  test("overwrite computed by a distributed comparison") {
    val s = spark; import s.implicits._
    write((1 to 120).map(i => (i, s"v$i")).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    var k = 0
    def data(k: Int): DataFrame = (1 to 120).map(i => (i, if (i % 10 == k % 10) s"o$k" else s"v$i")).toDF("id", "v")
    allOrNothing("r", "t", () => { k += 1; overwrite(data(k), "r.t") }, () => read("r.t").collect().toSet,
      _ => data(k).collect().toSet)
  }

  test("overwrite that changes the schema: a SNAP written in one pass by the write tasks") {
    val s = spark; import s.implicits._
    write((1 to 120).map(i => (i, s"v$i")).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    var k = 0
    // each attempt names a new column, so every attempt changes the schema and takes the SNAP path
    def data(k: Int): DataFrame = scala.util.Random.shuffle((1 to 150).map(i => (i, s"w$k-$i"))).toDF("id", s"c$k").repartition(3)
    allOrNothing("r", "t", () => { k += 1; overwrite(data(k), "r.t", "primaryKey" -> "id") }, () => read("r.t").collect().toSet,
      _ => data(k).collect().toSet)
  }

  test("keyed overwrite in one pass: the write tasks write the changed rows as held DIFFs") {
    val s = spark; import s.implicits._
    write((1 to 300).map(i => (i, s"v$i")).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    var k = 0
    // input clustered by key in 2 tasks; keys 101-110 (between the tasks' ranges) deleted on the driver, the
    // fragment holding them gets one DIFF merged from a task's and the driver's rows
    def rows(k: Int): Seq[(Int, String)] = (1 to 300).filterNot(i => i > 100 && i <= 110)
      .map(i => (i, if (i % 25 == k % 25) s"o$k" else s"v$i")) :+ (300 + k, s"n$k")
    def data(k: Int): DataFrame =
      spark.sparkContext.parallelize(rows(k).partition(_._1 <= 100).productIterator.toSeq.map(_.asInstanceOf[Seq[(Int, String)]]), 2)
        .flatMap(identity).toDF("id", "v")
    allOrNothing("r", "t", () => { k += 1; overwrite(data(k), "r.t") }, () => read("r.t").collect().toSet,
      _ => rows(k).map { case (i, v) => Row(i, v) }.toSet)
  }

  test("an overwrite replacing the rows of a condition (delete, then append, planned as one commit)") {
    val s = spark; import s.implicits._
    write((1 to 120).map(i => (i, s"v$i")).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    var k = 0
    def data(k: Int): Seq[(Int, String)] = (101 to 110).map(i => (i, s"o$k")) :+ (200 + k, s"n$k")
    allOrNothing("r", "t", () => { k += 1; overwrite(data(k).toDF("id", "v"), "r.t", "replaceWhere" -> "id > 100") },
      () => read("r.t").collect().toSet,
      cur => cur.filter(_.getInt(0) <= 100) ++ data(k).map { case (i, v) => Row(i, v) })
  }

  test("appends to a table without a primary key never duplicate rows on failure") {
    val s = spark; import s.implicits._
    write((1 to 60).map(i => (s"k${i % 7}", i % 3)).toDF("k", "n"), "r.nk")
    var k = 0
    def multiset(rows: Seq[Row]) = rows.groupBy(identity).view.mapValues(_.size).toMap
    allOrNothing("r", "nk", () => { k += 1; write(Seq(("k1", 1), ("new", k)).toDF("k", "n"), "r.nk") },
      () => read("r.nk").collect().toSet, cur => cur ++ Set(Row("k1", 1), Row("new", k)))
    // multiplicities: every acknowledged append added exactly its rows
    val counts = multiset(read("r.nk").collect().toSeq)
    assert(counts.getOrElse(Row("k1", 1), 0) == read("r.nk").filter("k = 'k1' and n = 1").count())
  }

  test("a first load (SNAP) of a new table") {
    val s = spark; import s.implicits._
    write(Seq((0, "x")).toDF("id", "v"), "r.seed", "primaryKey" -> "id")
    var k = 0
    Faults.arm(0)
    val points = 1 to 40
    points.foreach { n =>
      k += 1
      val name = s"t$k"
      Faults.arm(n)
      val outcome = try { write((1 to 130).map(i => (i, s"v$i")).toDF("id", "v"), s"r.$name", "primaryKey" -> "id"); None }
      catch { case t: Throwable => Some(t) }
      Faults.disarm()
      val table = eng.branchHeadOption("r", "main").flatMap(h => eng.tableOption("r", h.hash, name))
      outcome match {
        case Some(t) => assert(table.isEmpty, s"fault at operation $n: the load raised ($t) but table $name exists")
        case None => assert(read(s"r.$name").count() == 130, s"fault at operation $n: acknowledged load is incomplete")
      }
    }
  }

  test("a transaction's new small keyed tables (SNAPs written by the driver) that fails commits nothing") {
    val s = spark; import s.implicits._
    write(Seq((0, "x")).toDF("id", "v"), "r.seed", "primaryKey" -> "id")
    def rows(k: Int) = (1 to 40).map(i => (i, s"v$k-$i"))
    def names(k: Int) = Seq(s"a$k", s"b$k")
    def load(k: Int): Unit = versioned.spark.tx.Transaction.run(spark, "r") { tx =>
      names(k).foreach(t => tx.write(rows(k).toDF("id", "v"), t, primaryKey = "id"))
    }
    def tables(k: Int) = eng.branchHeadOption("r", "main").toSeq.flatMap(h => names(k).flatMap(eng.tableOption("r", h.hash, _)))
    Faults.arm(0)
    Faults.created.clear()
    load(0)
    val ops = Faults.operations
    val points = Faults.points(Faults.kindsSinceArmed)
    val taskFiles = Faults.created.asScala.collect { case (p, thread) if thread.startsWith("Executor task launch worker") => p }
    assert(tables(0).size == 2 && taskFiles.isEmpty, s"expected the driver to write both SNAPs; tasks wrote ${taskFiles.mkString(", ")}")
    var raised = 0
    points.zipWithIndex.foreach { case (n, i) =>
      val k = i + 1
      awaitCompaction()
      val h0 = head("r")
      Faults.arm(n)
      val outcome = try { load(k); None } catch { case t: Throwable => Some(t) }
      Faults.disarm()
      outcome match {
        case Some(t) =>
          raised += 1
          assert(injected(t).isDefined, s"fault at operation $n: the transaction raised without an injected fault: $t")
          assert(head("r") == h0 && tables(k).isEmpty, s"fault at operation $n: the transaction raised ($t) but committed")
          val left = eng.maintenance.unreferencedObjects()
          assert(left.isEmpty, s"fault at operation $n: the transaction raised but left objects ${left.mkString(", ")}")
        case None =>
          assert(tables(k).size == 2, s"fault at operation $n: the transaction returned without its tables")
          names(k).foreach(t => assert(read(s"r.$t").as[(Int, String)].collect().toSet == rows(k).toSet,
            s"fault at operation $n: acknowledged table $t is wrong"))
      }
    }
    info(s"$ops file operations; faults at ${points.size} of them, $raised made the transaction raise")
    assert(raised > 0)
  }

  test("garbage collection failing at any file operation loses nothing and a later run finishes the job") {
    val s = spark; import s.implicits._
    write((1 to 120).map(i => (i, s"v$i")).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    write(Seq((1, "u")).toDF("id", "v"), "r.t", "upsert" -> "true")
    val expected = read("r.t").collect().toSet
    var n = 0L
    var more = true
    while (more && n < 60) {
      n += 1
      write((1 to 60).map(i => (i, s"x$n-$i")).toDF("id", "v"), s"tmp$n.t", "primaryKey" -> "id")
      eng.dropRepository(s"tmp$n")
      Faults.arm(n)
      val failed = try { eng.maintenance.collectGarbage(None, 0L, force = true, dryRun = false); false }
        catch { case _: Throwable => true }
      more = failed || Faults.failures.get > 0
      Faults.disarm()
      assert(read("r.t").collect().toSet == expected, s"fault at gc operation $n changed the table")
    }
    eng.maintenance.collectGarbage(None, 0L, force = true, dryRun = false)
    assert(eng.maintenance.unreferencedObjects().isEmpty)
    val report = versioned.spark.api.MaintenanceApi.verify(spark, eng, "r", Nil).collect()
    assert(report.nonEmpty && report.forall(_.getString(2) == "ok"), report.mkString("\n"))
  }
}
