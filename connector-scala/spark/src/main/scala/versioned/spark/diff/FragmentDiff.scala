package versioned.spark.diff

import org.apache.spark.sql.Row
import org.apache.spark.sql.types.StructType
import versioned.spark.read.{ObjectFile, ObjectFiles}

/**
 * One fragment of a fast diff: the objects of the common prefix, and the extra DIFFs of each side (oldest first),
 * with whether each side's DIFFs record the before-images of the chain they follow ([[PriorImages]]).
 */
private[diff] final case class FragmentTask(prefixSnap: Option[ObjectFile], prefixDiffs: Seq[ObjectFile],
                                            extraFrom: Seq[ObjectFile], extraTo: Seq[ObjectFile],
                                            recordedFrom: Boolean = false, recordedTo: Boolean = false)

private[diff] object FragmentTask {
  /** A task whose common prefix is the chain `prefix` (an optional SNAP, then DIFFs), without extra DIFFs yet. */
  def onPrefix(prefix: Seq[String], metas: Map[String, versioned.core.ObjectMeta], file: String => ObjectFile): FragmentTask = {
    val (snap, diffs) = prefix.partition(id => metas(id).kind == versioned.core.ObjectKind.Snap)
    FragmentTask(snap.headOption.map(file), diffs.map(file), Nil, Nil)
  }
}

/**
 * Parquet readers prepared on the driver for [[FragmentDiff]]; rows lead with the key columns, then
 * the value columns (`rowSchema`), DIFF rows add the change kind.
 *
 * @param diffSchema the rows `diffRows` returns: `rowSchema`, the change kind, then, when `priorOrdinal` >= 0, the
 *                   chain hash and (at `priorOrdinal`) the before-image of DIFFs that record them
 * @param diffRows DIFF rows, whole objects (the extra DIFFs)
 * @param diffLookup DIFF rows of the prefix, with the changed keys pushed down as a filter (pages skipped)
 * @param snapLookup SNAP rows of the prefix with the same filter, as column batches when `snapBatches`
 * @param shared on the driver, the shared objects read once for all fragments (their extra DIFFs, [[FastDiff.runOnDriver]]);
 *               None in tasks
 */
private[diff] final case class FragmentDiffReaders(
    rowSchema: StructType,
    keyCount: Int,
    userKeyOrdinals: Seq[Int],
    diffSchema: StructType,
    priorOrdinal: Int,
    diffRows: ObjectFiles.Reader,
    diffLookup: Option[ObjectFiles.Reader],
    snapLookup: Option[ObjectFiles.Reader],
    snapBatches: Boolean,
    outputSchema: StructType,
    hadoopConf: org.apache.spark.broadcast.Broadcast[org.apache.spark.util.SerializableConfiguration],
    shared: Option[ObjectFiles.SharedLoads] = None)

/**
 * Executor side of the fast diff of one fragment whose two chains are a common prefix P followed by
 * extra DIFFs EA (from) and EB (to). EA and EB are read whole and conflated; a key in both has its
 * before and after rows there; a key in only one of them has, on the other side, its row in P: recorded by
 * that side's before-images when its DIFFs have them ([[PriorImages]]), else looked up for those keys only:
 * P's DIFFs and SNAP are read with the keys pushed down to Parquet (row groups and pages that cannot hold
 * them are skipped) and merged against the sorted keys. Rows whose
 * before and after values are the same (an upsert of equal values, a delete of a missing key) are no change.
 */
private[versioned] object FragmentDiff {
  /** SNAP rows the lookups decoded (after Parquet skipped row groups and pages), in this JVM (for tests). */
  private[versioned] val snapRowsRead = new java.util.concurrent.atomic.AtomicLong()

  def rows(r: FragmentDiffReaders, t: FragmentTask): Iterator[Row] = {
    val f = new FragmentRows(r)
    val (ea, pa) = f.side(t.extraFrom, t.recordedFrom)
    val (eb, pb) = f.side(t.extraTo, t.recordedTo)
    // keys of EA and EB in order, each with its DIFF rows (null: not in that side's extra DIFFs)
    val pairs = f.pair(ea, eb)
    val oneSided = pairs.indices.filter(p => pairs(p)._1 == null || pairs(p)._2 == null)
    // a key one side changed: its row in P as that side recorded it, else looked up
    val base = f.prefixRows(t, oneSided.map { p => val (a, b) = pairs(p); if (a != null) (a, pa(a)) else (b, pb(b)) })
    val baseOf = oneSided.zipWithIndex.toMap
    pairs.indices.iterator.flatMap { p =>
      val (a, b) = pairs(p)
      val before = if (a != null) f.live(a) else base(baseOf(p))
      val after = if (b != null) f.live(b) else base(baseOf(p))
      f.change(before, after).map(c => f.row(c, before, after))
    }
  }

  /**
   * The joined sides of a three-way merge of one fragment (`ThreeWay.joinedSchema`) whose base chain P
   * is followed by the DIFFs ours added (EA, `extraFrom`) and the DIFFs theirs added (EB, `extraTo`). Only
   * keys theirs changed can change the merge, so:
   *  - a key only in EB is theirs' change as its DIFF row says (`delete`, else `update`), with no base
   *    values: nothing in P is read for it (an upsert of equal values is then written again, which
   *    changes nothing);
   *  - a key in both is diffed on both sides against P's row for it, looked up as the diff does; it is a
   *    row when theirs' values differ from P's, with ours' change when ours' differ too;
   *  - keys only in EA are left out (ours keeps them).
   */
  def mergeJoined(r: FragmentDiffReaders, t: FragmentTask): Iterator[Row] = {
    val f = new FragmentRows(r)
    val (ea, pa) = f.side(t.extraFrom, t.recordedFrom)
    val (eb, pb) = f.side(t.extraTo, t.recordedTo)
    val pairs = f.pair(ea, eb).filter(_._2 != null)
    val both = pairs.indices.filter(p => pairs(p)._1 != null)
    val base = f.prefixRows(t, both.map { p => val (a, b) = pairs(p); (b, pa(a).orElse(pb(b))) })
    val baseOf = both.zipWithIndex.toMap
    pairs.indices.iterator.flatMap { p =>
      val (a, b) = pairs(p)
      val theirs = f.live(b)
      if (a == null) Some(f.joinedRow(b, null, theirs, if (theirs == null) "delete" else "update", null, null))
      else {
        val before = base(baseOf(p))
        val ours = f.live(a)
        f.change(before, theirs).map(ct => f.joinedRow(b, before, theirs, ct, ours, f.change(before, ours).orNull))
      }
    }
  }
}
