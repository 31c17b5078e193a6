package versioned.spark.read

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types._
import org.apache.spark.util.SerializableConfiguration
import versioned.core._

/**
 * `verify`: checks every object that the versions reachable from some refs need, reading each whole file
 * against the checksum recorded when it was written, in Spark tasks (a batch of objects per task). One
 * row per object: `ok`, `missing` or `corrupt`, and the (table@image) versions that need it.
 */
private[versioned] object Verifier {
  val Ok = "ok"
  val Missing = "missing"
  val Corrupt = "corrupt"

  val Schema: StructType = StructType(Seq(
    StructField("object", StringType, nullable = false), StructField("kind", StringType, nullable = true),
    StructField("status", StringType, nullable = false), StructField("detail", StringType, nullable = true),
    StructField("needed_by", ArrayType(StringType, containsNull = false), nullable = false)))

  private val Batch = 32
  private val ShownVersions = 20

  /** `refs`: revisions to start from; empty means every ref of the repository. */
  def run(spark: SparkSession, engine: Engine, repo: String, refs: Seq[String]): DataFrame = {
    val starts = if (refs.isEmpty) engine.refs.all(repo).map(_.image) else refs.map(r => engine.resolve(repo, Revision.Spec(r)).hash)
    val needed = engine.history.objectsNeeded(repo, engine.history.reachable(repo, starts.distinct))
    val metas = engine.objects(needed.keys.toSeq)
    val config = engine.config
    val conf = spark.sparkContext.broadcast(new SerializableConfiguration(spark.sparkContext.hadoopConfiguration))
    val work = needed.keys.toSeq.sorted.map(id => (id, metas.get(id)))
    val checked = if (work.isEmpty) Seq.empty else {
      versioned.spark.session.Jobs.described(spark, s"verify $repo (${work.size} objects)") {
        spark.sparkContext.parallelize(work.grouped(Batch).toSeq, math.max(1, (work.size + Batch - 1) / Batch)).flatMap { batch =>
          batch.map { case (id, meta) => (id, meta.map(_.kind), check(config, conf.value.value, id, meta)) }
        }.collect().toSeq
      }
    }
    val rows = checked.map { case (id, kind, (status, detail)) =>
      val by = needed(id).map { case (image, table) => s"$table@${image.take(12)}" }.distinct.sorted
      Row(id, kind.orNull, status, detail.orNull,
        (by.take(ShownVersions) ++ (if (by.size > ShownVersions) Seq(s"... ${by.size - ShownVersions} more") else Nil)).toArray)
    }
    spark.createDataFrame(spark.sparkContext.parallelize(rows ++ reflogRows(engine, repo), 1), Schema)
  }

  /**
   * The reflog's hash chain (docs/AUDIT.md): one `ok` row for an intact chain, else a row per entry found `changed`,
   * `removed` or `reordered` (object `reflog@{N}`, kind `reflog`).
   */
  private def reflogRows(engine: Engine, repo: String): Seq[Row] = engine.reflog.audit(repo) match {
    case (n, Seq()) => Seq(Row("reflog", "reflog", Ok, s"$n entries, chain intact", Array.empty[String]))
    case (_, problems) => problems.map(p => Row(Reflog.idOf(p.seq), "reflog", p.status, p.detail, Array.empty[String]))
  }

  /**
   * An object's status: read whole and checked at each of its places (an object read in place elsewhere may have
   * several, docs/REMOTES.md); `ok` when one of them holds it intact (the detail names the places that do not), else
   * the first place's problem.
   */
  private def check(config: WarehouseConfig, conf: org.apache.hadoop.conf.Configuration, id: String,
                    meta: Option[ObjectMeta]): (String, Option[String]) = meta match {
    case None => (Missing, Some("no metastore row describes it"))
    case Some(m) =>
      val places = m.urisIn(config).map(u => u -> checkAt(conf, id, m, new Path(u), m.locations.size > 1))
      places.collectFirst { case (_, Right(())) => () } match {
        case Some(()) =>
          val bad = places.collect { case (u, Left((status, why))) => s"$status at $u: $why" }
          (Ok, if (bad.isEmpty) None else Some(s"intact at ${places.count(_._2.isRight)} of ${places.size} places; ${bad.mkString("; ")}"))
        case None =>
          val problems = places.collect { case (_, Left(p)) => p }
          problems.find(_._1 != Unreachable).orElse(problems.headOption) match {
            case Some((Unreachable, _)) | None => throw Errors.storage(s"verify could not read object $id at " +
              s"${places.map(_._1).mkString(", ")}: ${problems.map(_._2).mkString("; ")}. Its bytes were not checked; run " +
              "verify again when the store is reachable.", null)
            case Some((status, _)) => (status, Some(problems.map(_._2).mkString("; ")))
          }
      }
  }

  private val Unreachable = "unreachable"

  /** One place of an object checked: Right when it holds the object intact, else its status and why. */
  private def checkAt(conf: org.apache.hadoop.conf.Configuration, id: String, m: ObjectMeta, path: Path,
                      several: Boolean): Either[(String, String), Unit] =
    try { ObjectChecksum.verifyWhole(versioned.core.ObjectStores.fileSystem(path, conf), path, m); Right(()) }
    catch {
      case e: ObjectMissingException => Left((Missing, e.getMessage))
      case e: ObjectCorruptException => Left((Corrupt, e.getMessage))
      case e: java.io.IOException if ObjectFiles.looksCorrupt(e) => Left((Corrupt, s"reading it failed: ${e.getMessage}"))
      case e: java.io.IOException if several => Left((Unreachable, s"$path: ${e.getMessage}"))
      case e: java.io.IOException => throw Errors.storage(s"verify could not read object $id ($path): ${e.getMessage}. " +
        "Its bytes were not checked; run verify again when the store is reachable.", e)
    }
}
