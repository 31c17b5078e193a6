package versioned.spark.safety

import java.io.{File, RandomAccessFile}
import java.nio.file.{Files, StandardCopyOption}
import org.apache.spark.sql.Row
import versioned.core._
import versioned.spark.VersionedSparkSuite
import versioned.spark.api.MaintenanceApi

/**
 * Damaged objects are never read back as data: byte flips, truncation, substitution by another valid
 * object and deletion, with no Hadoop `.crc` side files (as on S3 or a copied warehouse), are typed
 * errors naming the object on read, and `verify` reports each.
 */
class CorruptionSuite extends VersionedSparkSuite {
  // The setup's upserts (about 14% of each fragment) and the compaction test below cross a 10% DIFF/SNAP
  // ratio, so the objects flipped here are the SNAPs every scan reads and the compaction reads the SNAP
  // (the default ratio, 1.0, would keep the DIFFs).
  override protected def extraConf: Map[String, String] = Map(versioned.spark.session.VersionedOptions.ConfMaxDiffRatio -> "0.1")

  private def objectFile(id: String): File = new File(warehouse, ObjectMeta.relativePath(id))

  /** Removes the local file system's checksum side file, as object stores have none. */
  private def dropCrc(f: File): Unit = Files.deleteIfExists(new File(f.getParentFile, s".${f.getName}.crc").toPath)

  private def allObjects(): Seq[ObjectMeta] = {
    val head = engine.resolve("r", Revision.Spec("main"))
    val t = engine.table("r", head, "t")
    val ids = t.effectiveFragments.flatMap(_.objects)
    ids.map(engine.objects(ids))
  }

  private def setup(): Set[Row] = {
    val s = spark; import s.implicits._
    write((1 to 200).map(i => (i, s"v$i", i * 1.5)).toDF("id", "name", "x"), "r.t", "primaryKey" -> "id")
    write((1 to 200 by 7).map(i => (i, s"w$i", -i * 1.0)).toDF("id", "name", "x"), "r.t", "upsert" -> "true")
    rows(read("r.t"))
  }

  private def errorOf(t: Throwable): Option[VersionedException] =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(64).collectFirst { case v: VersionedException => v }

  private def statusOf(id: String): String =
    MaintenanceApi.verify(spark, engine, "r", Nil).filter(s"object = '$id'").select("status").collect().head.getString(0)

  /** A read of the damaged table: Some(error class) or None when it returned exactly the right rows. */
  private def readOutcome(expected: Set[Row]): Option[String] =
    try {
      val got = rows(read("r.t"))
      assert(got == expected, "a damaged object was read back as wrong data")
      None
    } catch { case t: Throwable if errorOf(t).isDefined => Some(errorOf(t).get.errorClass) }

  test("random byte flips: never wrong rows, and verify reports every one") {
    val expected = setup()
    val rnd = new scala.util.Random(11)
    var detectedOnRead = 0
    var trials = 0
    allObjects().foreach { m =>
      val f = objectFile(m.id)
      dropCrc(f)
      val original = Files.readAllBytes(f.toPath)
      (1 to 6).foreach { _ =>
        val pos = rnd.nextInt(original.length)
        val bytes = original.clone()
        bytes(pos) = (bytes(pos) ^ (1 << rnd.nextInt(8))).toByte
        Files.write(f.toPath, bytes)
        trials += 1
        readOutcome(expected).foreach { cls => assert(cls == ErrorClass.ObjectCorrupt, s"flip at $pos: $cls"); detectedOnRead += 1 }
        assert(statusOf(m.id) == "corrupt", s"verify missed a flip at byte $pos of ${original.length}")
        Files.write(f.toPath, original)
      }
      assert(statusOf(m.id) == "ok")
    }
    info(s"$detectedOnRead of $trials flips were errors on read (the others did not change what the read returns)")
    assert(detectedOnRead * 10 >= trials * 8, s"only $detectedOnRead of $trials flips detected on read")
  }

  test("a truncated object is OBJECT_CORRUPT on read and in verify") {
    val expected = setup()
    val m = allObjects().head
    val f = objectFile(m.id)
    dropCrc(f)
    val raf = new RandomAccessFile(f, "rw")
    try raf.setLength(f.length() / 2) finally raf.close()
    assert(readOutcome(expected).contains(ErrorClass.ObjectCorrupt))
    assert(statusOf(m.id) == "corrupt")
  }

  test("an object replaced by another valid object is OBJECT_CORRUPT, naming it") {
    val expected = setup()
    val objs = allObjects()
    val (a, b) = (objs.head, objs.find(o => o.id != objs.head.id && o.kind == objs.head.kind).getOrElse(objs.last))
    Seq(a, b).foreach(o => dropCrc(objectFile(o.id)))
    Files.copy(objectFile(b.id).toPath, objectFile(a.id).toPath, StandardCopyOption.REPLACE_EXISTING)
    val err = intercept[Throwable](rows(read("r.t")))
    val v = errorOf(err).getOrElse(fail(s"untyped: $err", err))
    assert(v.errorClass == ErrorClass.ObjectCorrupt && v.getMessage.contains(a.id), v.getMessage)
    assert(statusOf(a.id) == "corrupt" && statusOf(b.id) == "ok")
    assert(expected.nonEmpty)
  }

  test("a deleted object is OBJECT_MISSING on read, through SQL as a Spark error condition, and in verify") {
    setup()
    val m = allObjects().head
    val f = objectFile(m.id)
    dropCrc(f)
    Files.delete(f.toPath)
    val err = intercept[Throwable](rows(read("r.t")))
    val v = errorOf(err).getOrElse(fail(s"untyped: $err", err))
    assert(v.errorClass == ErrorClass.ObjectMissing && v.getMessage.contains(m.id))
    val thrown = Iterator.iterate(err)(_.getCause).takeWhile(_ != null).collectFirst { case s: org.apache.spark.SparkThrowable
      if s.getCondition == ErrorClass.ObjectMissing => s }
    assert(thrown.exists(_.getSqlState != null), "the error is a Spark error condition with a SQLSTATE")
    assert(statusOf(m.id) == "missing")
    val report = MaintenanceApi.verify(spark, engine, "r", Seq("main")).filter("status != 'ok'").collect()
    assert(report.length == 1 && report.head.getSeq[String](4).exists(_.startsWith("t@")), report.mkString)
  }

  test("a delete of a few keys (looked up on the driver) reading a damaged object fails typed and commits nothing") {
    val expected = setup()
    val opts = new java.util.HashMap[String, String](); opts.put("warehouse", warehouse.getAbsolutePath)
    val head = engine.resolve("r", Revision.Spec("main")).hash
    val snap = allObjects().find(_.kind == ObjectKind.Snap).get // holds keys 1.. of the first fragment
    val f = objectFile(snap.id)
    dropCrc(f)
    val original = Files.readAllBytes(f.toPath)
    val raf = new RandomAccessFile(f, "rw")
    try raf.setLength(f.length() / 2) finally raf.close()
    val err = intercept[Throwable](versioned.spark.api.TableApi.deleteWhere(spark, opts, "r.t", "id IN (2, 3, 4)", null, null, null))
    assert(errorOf(err).map(_.errorClass).contains(ErrorClass.ObjectCorrupt), s"untyped: $err")
    assert(engine.resolve("r", Revision.Spec("main")).hash == head, "the failed delete committed")
    Files.write(f.toPath, original)
    assert(rows(read("r.t")) == expected, "history is intact")
    assert(versioned.spark.api.TableApi.deleteWhere(spark, opts, "r.t", "id IN (2, 3, 4)", null, null, null) == 3)
  }

  test("driver key lookups of a damaged object (LookupFileReader, tail served from the verified bytes): typed errors or the right rows") {
    val expected = setup()
    val snap = allObjects().find(_.kind == ObjectKind.Snap).get // holds keys 1.. of the first fragment
    val f = objectFile(snap.id)
    dropCrc(f)
    val original = Files.readAllBytes(f.toPath)
    val keys = Seq(2L, 3L, 4L, 50L)
    val want = expected.filter(r => keys.contains(r.getInt(0).toLong))
    val tailOffset = ObjectChecksum.parse(snap.checksum).get.tailOffset
    val rnd = new scala.util.Random(5)
    var detected = 0
    // flips in the data pages (checked by Parquet page checksums) and in the tail (checked by the tail checksum)
    val positions = Seq.fill(12)(rnd.nextInt(tailOffset.toInt)) ++ Seq.fill(6)(tailOffset.toInt + rnd.nextInt((original.length - tailOffset).toInt))
    positions.foreach { pos =>
      val bytes = original.clone()
      bytes(pos) = (bytes(pos) ^ (1 << rnd.nextInt(8))).toByte
      Files.write(f.toPath, bytes)
      val table = versioned.spark.session.TableSnapshot.load(engine, "r", "t", engine.resolve("r", Revision.Spec("main")))
      val layout = table.layout
      val opened = versioned.spark.read.LookupFileReader.opened.get()
      try {
        val got = versioned.spark.read.LocalLookup.exactRows(table.lookingUp(keys), layout.physicalSchema,
          versioned.spark.read.KeyLookup.of(layout.physicalSchema("id"), keys))
        assert(got.toSet == want, s"flip at $pos (tail from $tailOffset) returned wrong rows")
      } catch { case t: Throwable if errorOf(t).isDefined =>
        assert(errorOf(t).get.errorClass == ErrorClass.ObjectCorrupt, s"flip at $pos: $t"); detected += 1 }
      if (pos < tailOffset) assert(versioned.spark.read.LookupFileReader.opened.get() > opened, "the lookup used LookupFileReader")
    }
    Files.write(f.toPath, original)
    info(s"$detected of ${positions.size} flips were errors on lookup (the others are in pages the lookup does not read)")
    assert(positions.count(_ >= tailOffset) <= detected, "every flip in the tail is an error")
  }

  test("a corrupt object read by commit-time compaction never fails the write that committed") {
    val s = spark; import s.implicits._
    write((1 to 40).map(i => (i, s"v$i")).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    val snap = allObjects().head
    val f = objectFile(snap.id)
    dropCrc(f)
    val bytes = Files.readAllBytes(f.toPath)
    bytes(bytes.length / 3) = (bytes(bytes.length / 3) ^ 0x55).toByte
    Files.write(f.toPath, bytes)
    val before = engine.resolve("r", Revision.Spec("main")).hash
    // 10 upserts into a 40-row fragment: over the DIFF ratio, so the commit compacts and reads the SNAP
    write((1 to 10).map(i => (i, s"u$i")).toDF("id", "v"), "r.t", "upsert" -> "true")
    val after = engine.resolve("r", Revision.Spec("main"))
    assert(after.parents == Seq(before), "the write committed exactly once and returned")
    assert(engine.table("r", after, "t").compacted.isEmpty, "compaction failed and recorded nothing")
    val err = intercept[Throwable](rows(read("r.t")))
    assert(errorOf(err).map(_.errorClass).contains(ErrorClass.ObjectCorrupt))
  }
}
