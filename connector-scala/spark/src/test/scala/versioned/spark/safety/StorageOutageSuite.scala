package versioned.spark.safety

import org.apache.spark.sql.{DataFrame, Row}
import versioned.core.{ErrorClass, VersionedException}
import versioned.spark.session.VersionedOptions

/**
 * The object store refuses the executors' connections (`java.net.ConnectException` in the write tasks, on
 * creating a file or on writing to it): every DSv2 writer raises the typed STORAGE_ERROR the driver raises
 * for the same outage, and nothing is committed. Tasks keep no rows in memory here, so each writes files.
 */
class StorageOutageSuite extends FaultyWarehouseSuite {
  override protected def extraConf: Map[String, String] = super.extraConf ++ Map(
    "spark.sql.catalog.c" -> classOf[versioned.spark.catalog.VersionedCatalog].getName,
    VersionedOptions.ConfLocalCommitMaxRows -> "0")

  private def head: Option[String] = eng.branchHeadOption("r", "main").map(_.hash)
  private def rows(table: String): Set[Row] = read(table).collect().toSet

  /** `f` fails, while tasks are refused `op`, with STORAGE_ERROR naming the refused connection; nothing committed. */
  private def refused(op: String, table: String)(f: => Any): Unit = {
    val (h0, before) = (head, if (head.isEmpty) Set.empty[Row] else rows(table))
    Faults.refuseInTasks(op)
    val t = try { intercept[Throwable](f) } finally Faults.stopRefusing()
    val typed = Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(64).collectFirst { case v: VersionedException => v }
      .getOrElse(fail(s"$op refused: expected STORAGE_ERROR, got an untyped $t", t))
    assert(typed.errorClass == ErrorClass.StorageError, typed.getMessage)
    assert(typed.getMessage.contains("ConnectException") && typed.getMessage.contains("Nothing was committed"), typed.getMessage)
    assert(head == h0, s"$op refused: the branch moved")
    if (h0.isDefined) assert(rows(table) == before, s"$op refused: the table changed")
  }

  private def data(from: Int, to: Int, tag: String): DataFrame = {
    val s = spark; import s.implicits._
    (from to to).map(i => (i.toLong, s"$tag$i")).toDF("id", "v").repartition(2)
  }

  Seq("create", "write").foreach { op =>
    test(s"write tasks refused a connection on $op: each writer fails with STORAGE_ERROR and commits nothing") {
      // a first load (SnapshotWrite) of a table of a new repository, and of a new table of an existing one
      refused(op, "r.t")(write(data(1, 200, "a"), "r.t", "primaryKey" -> "id"))
      assert(!engineHasTable("t"))
      write(data(1, 200, "a"), "r.t", "primaryKey" -> "id")
      refused(op, "r.t")(write(data(1, 50, "n"), "r.u", "primaryKey" -> "id"))
      assert(!engineHasTable("u"))
      // staged appends and upserts (StagedWrite)
      refused(op, "r.t")(write(data(201, 260, "b"), "r.t"))
      refused(op, "r.t")(write(data(100, 260, "c"), "r.t", "upsert" -> "true"))
      // overwrites: compared (OverwriteWriter) and a new schema written whole
      refused(op, "r.t")(overwrite(data(1, 150, "d"), "r.t"))
      val s = spark; import s.implicits._
      refused(op, "r.t")(overwrite((1 to 150).map(i => (i.toLong, i)).toDF("id", "n").repartition(2), "r.t"))
      // row-level SQL (StagingDeltaWriter)
      refused(op, "r.t")(spark.sql("UPDATE c.r.t SET v = 'u' WHERE id <= 120"))
      refused(op, "r.t")(spark.sql("DELETE FROM c.r.t WHERE id > 150"))
      refused(op, "r.t")(spark.sql("INSERT INTO c.r.t SELECT id + 1000, v FROM c.r.t"))
      // the outage over, the same writes succeed
      write(data(201, 260, "b"), "r.t")
      spark.sql("UPDATE c.r.t SET v = 'u' WHERE id <= 120")
      assert(read("r.t").count() == 260 && read("r.t").filter("v = 'u'").count() == 120)
    }
  }

  /** The typed error `f` fails with while the store is down (every open and create refused). */
  private def duringOutage(f: => Any): VersionedException = {
    Faults.outage()
    val t = try { intercept[Throwable](f) } finally Faults.stopRefusing()
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(64).collectFirst { case v: VersionedException => v }
      .getOrElse(fail(s"expected STORAGE_ERROR, got an untyped $t", t))
  }

  test("a store refusing reads of objects (the refusal names the .parquet object): scans, deletes and verify fail with STORAGE_ERROR, never OBJECT_CORRUPT; nothing committed") {
    write(data(1, 300, "a"), "r.t", "primaryKey" -> "id")
    write(data(250, 320, "b"), "r.t", "upsert" -> "true")
    val (h0, before) = (head, rows("r.t"))
    val scan = duringOutage(read("r.t").collect())
    assert(scan.errorClass == ErrorClass.StorageError && scan.getMessage.contains("Connection refused"), scan.getMessage)
    val opts = new java.util.HashMap[String, String](); opts.put("warehouse", s"faulty://${warehouse.getAbsolutePath}")
    val delete = duringOutage(versioned.spark.api.TableApi.deleteWhere(spark, opts, "r.t", "id IN (2, 3, 260)", null, null, null))
    assert(delete.errorClass == ErrorClass.StorageError, delete.getMessage)
    val sql = duringOutage(spark.sql("DELETE FROM c.r.t WHERE id = 7"))
    assert(sql.errorClass == ErrorClass.StorageError, sql.getMessage)
    val verify = duringOutage(versioned.spark.api.MaintenanceApi.verify(spark, eng, "r", Nil).collect())
    assert(verify.errorClass == ErrorClass.StorageError && verify.getMessage.contains("verify again"), verify.getMessage)
    assert(versioned.spark.api.MaintenanceApi.verify(spark, eng, "r", Nil).filter("status != 'ok'").count() == 0)
    assert(head == h0 && rows("r.t") == before, "a refused read committed or changed something")
    assert(versioned.spark.api.TableApi.deleteWhere(spark, opts, "r.t", "id IN (2, 3, 260)", null, null, null) == 3)
  }

  test("storage errors are told from damaged bytes by their words, not by the object's path") {
    import java.io.{EOFException, IOException}
    import versioned.spark.read.ObjectFiles.looksCorrupt
    val obj = "s3a://bucket/wh/objects/ab/cdef0123.parquet"
    assert(!looksCorrupt(new IOException(s"Connection reset while reading $obj")))
    assert(!looksCorrupt(new java.net.ConnectException(s"Connection refused (open of faulty:/tmp/w/objects/ab/cd.parquet)")))
    assert(!looksCorrupt(new IOException(s"injected fault: open #3 on file:/tmp/parquet-crc/objects/x.parquet")))
    assert(looksCorrupt(new IOException(s"$obj is not a Parquet file. Expected magic number at tail, but found [1, 2, 3, 4]")))
    assert(looksCorrupt(new IOException("can not read class org.apache.parquet.format.FileMetaData: Required field 'codec' was not found")))
    assert(looksCorrupt(new IOException(s"Checksum error in $obj")))
    assert(looksCorrupt(new EOFException(s"Reached the end of $obj")))
  }

  private def engineHasTable(t: String): Boolean = head.exists(h => eng.tableOption("r", h, t).isDefined)
}
