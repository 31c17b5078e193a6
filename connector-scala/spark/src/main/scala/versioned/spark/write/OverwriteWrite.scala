package versioned.spark.write

import versioned.core.format.WriteMode

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.distributions.{Distribution, Distributions}
import org.apache.spark.sql.connector.expressions.SortOrder
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.types.StructType
import versioned.core.{ObjectKind, ObjectMeta, TableVersion}
import versioned.spark.session.TableHandle
import versioned.spark.session.TableSnapshot
import versioned.spark.format.TableLayout
import versioned.spark.read.ChainRows

/**
 * DSv2 write of a keyed overwrite of an existing table with the same columns and key, in one pass. Spark
 * sorts each task's rows by key ([[RequiresDistributionAndOrdering]]: an ordering, no distribution, so no
 * shuffle); each task merge-compares its rows with the current rows of its key range and writes only the
 * changed rows as held DIFF objects ([[OverwriteWriter]]). The version compared with is the branch head
 * when the write is planned (`base`).
 *
 * On commit ([[OverwriteCommit]]) the driver checks the tasks' keys (a null or duplicate key raises the
 * error of [[Validation]]) and that their key ranges do not overlap (data clustered by key); it adds the
 * deletes of current keys no task's range holds and makes one DIFF per fragment. The result is the base
 * version with DIFFs appended, which the commit ([[CommitPlanner.commit]], the one commit path) records
 * when the table on the head it builds on is still `base`. Otherwise (overlapping ranges, too many deletes
 * outside the tasks' ranges, a head that moved) the write is planned as before from its rows, which the
 * tasks' DIFFs over the base version give back exactly (each task's DIFF turns the base's rows of its key
 * range into the task's rows). Nothing the tasks wrote reaches the store unless the commit references it.
 */
private[versioned] final class OverwriteWrite(table: TableHandle, req: WriteRequest, base: TableSnapshot)
  extends Write with RequiresDistributionAndOrdering with BatchWrite {
  private val layout = base.layout
  private val lease = new WriteLease(table, req.ident.repo, "write")
  private lazy val target = ObjectTarget(table.engine.config, lease.get.id, held = true)
  @volatile private var task: OverwriteTask = _

  override def description(): String = s"versioned one-pass overwrite of ${req.ident}"
  override def requiredDistribution(): Distribution = Distributions.unspecified()
  override def requiredOrdering(): Array[SortOrder] = SnapshotWrite.keyOrder(layout)

  override def toBatch: BatchWrite = lease.batch(this)

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory = {
    val spark = SparkSession.active
    task = OverwriteTask(ParquetSink.forObjects(spark, layout.diffSchema, ObjectKind.Diff), target, layout,
      CommitPlanner.baseFragments(base.version), ChainRows.of(spark, base), OverwriteRules.of(spark, layout))
    new OverwriteWriterFactory(task)
  }

  override def commit(messages: Array[WriterCommitMessage]): Unit = try {
    val parts = messages.collect { case p: OverwritePart => p }.sortBy(_.partition).toIndexedSeq
    val input = OverwriteCommit.input(SparkSession.active, task, base.version, parts)
    Commits.record(CommitPlanner.commit(table.engine, req, input, Some(lease.get)), req.writeId)
  } finally lease.close()

  override def abort(messages: Array[WriterCommitMessage]): Unit = lease.close()
}

private[versioned] object OverwriteWrite {
  private[write] val log = org.slf4j.LoggerFactory.getLogger(getClass)
}

/**
 * An overwrite the write tasks computed as DIFFs over `base`: `update` is the new version and its objects
 * when it could be completed (disjoint key ranges); it applies to a head whose table is still `base`.
 */
private[versioned] final case class PrewrittenOverwrite(base: TableVersion, update: Option[(TableVersion, Seq[ObjectMeta])]) {
  def on(current: TableVersion): Option[(TableVersion, Seq[ObjectMeta])] =
    if (update.isEmpty || current == base) update
    else {
      OverwriteCommit.fallbacks.incrementAndGet()
      OverwriteWrite.log.info(s"Overwrite of ${base.name}: the table changed since the write compared with it; planned from the rows")
      None
    }
}
