package versioned.spark.diff

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.sources._
import org.apache.spark.sql.types._
import versioned.core.{ObjectKind, ObjectMeta}
import versioned.spark.format.{TableLayout, Values}
import versioned.spark.read.{KeyLookup, ObjectFile, ObjectFiles}

/**
 * The filter on the first key column that a fast diff pushes down to Parquet when it looks up
 * before-values: every changed key satisfies it, so row groups and pages (Parquet column indexes) that
 * cannot hold a changed key are skipped. Two kinds:
 *
 *  - the key range of each extra DIFF, from its min/max statistics (no read): exact enough when the
 *    changes are clustered, and useless but free when they are scattered over the fragment;
 *  - the changed key values themselves (runs of consecutive integers as ranges), read on the driver
 *    from the extra DIFFs' key column: only when there are few changes ([[MaxKeys]]) and skipping pages
 *    by value pays for that read: k scattered keys in p pages of the prefix SNAPs leave about
 *    p * exp(-k/p) pages unread, which must be at least the DIFFs read (about a page each). With k = p
 *    (1,000 changes in 2,000,000 rows of 2,000-row pages) that is about a third of the pages, so a diff
 *    there does not decode every page the range filter (the whole fragment, for scattered keys) keeps.
 *
 * Floating-point keys get no filter (Parquet statistics order -0.0 and NaN differently). Values become a
 * filter the way every key lookup does ([[KeyLookup]]).
 */
private[diff] object KeyFilter {
  /** Most changed keys read on the driver for a filter of values. */
  val MaxKeys = 10000
  /** Most rows per Parquet page of the objects (older objects have larger pages, so this may overcount their pages). */
  private val PageRows = versioned.core.format.ObjectShape.PageRows.toLong

  def apply(layout: TableLayout, fast: Seq[DiffPlan.Fast], metas: Map[String, ObjectMeta], file: String => ObjectFile,
            firstKeyReader: => ObjectFiles.Reader, conf: => org.apache.hadoop.conf.Configuration): Option[Filter] = {
    val first = layout.keyFields.head
    val extras = fast.flatMap(f => f.extraFrom ++ f.extraTo).distinct.map(metas).filter(_.rowCount > 0)
    if (extras.isEmpty || !KeyLookup.supports(first.dataType)) return None
    val changed = extras.map(_.rowCount).sum
    val pages = fast.flatMap(_.prefix).map(metas).filter(_.kind == ObjectKind.Snap).map(m => (m.rowCount + PageRows - 1) / PageRows).sum
    val unread = if (pages == 0) 0.0 else pages * math.exp(-changed.toDouble / pages)
    val leaves = if (changed <= MaxKeys && unread >= extras.size) Some(values(first, extras.map(m => file(m.id)), firstKeyReader, conf))
      else ranges(first, extras)
    leaves.filter(_.nonEmpty).map(l => KeyLookup.balancedOr(l.toIndexedSeq))
  }

  private def lit(f: StructField, canonical: Any): Any = Values.toExternal(canonical, f.dataType)

  /** One range per DIFF from its statistics; None when a DIFF has none for the key (only nulls). */
  private def ranges(first: StructField, extras: Seq[ObjectMeta]): Option[Seq[Filter]] = {
    val name = first.name
    val rs = extras.map { m =>
      for { lo <- m.minValues.get(name); hi <- m.maxValues.get(name) } yield {
        val range: Filter = And(GreaterThanOrEqual(name, lit(first, Values.fromJson(lo, first.dataType))),
          LessThanOrEqual(name, lit(first, Values.fromJson(hi, first.dataType))))
        if (m.nullCounts.getOrElse(name, 0L) > 0) Or(range, IsNull(name)) else range
      }
    }
    if (rs.exists(_.isEmpty)) None else Some(rs.flatten)
  }

  /** The changed values of the first key column, read from the DIFFs (a few at a time). */
  private def values(first: StructField, files: Seq[ObjectFile], reader: ObjectFiles.Reader,
                     conf: org.apache.hadoop.conf.Configuration): Seq[Filter] = {
    val read = versioned.spark.session.Jobs.onDriver(files) { f =>
      val it = ObjectFiles.open(reader, f, conf)
      try it.map((r: InternalRow) => Values.fromInternal(r, 0, first.dataType)).toVector finally ObjectFiles.close(Seq(it))
    }.flatten.distinct
    val (nulls, present) = read.partition(_ == null)
    nulls.headOption.map(_ => IsNull(first.name): Filter).toSeq ++ KeyLookup.of(first, present).filter.toSeq
  }
}
