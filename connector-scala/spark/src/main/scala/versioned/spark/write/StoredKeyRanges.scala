package versioned.spark.write

import versioned.spark.format.{SparkKeys, Values}
import versioned.spark.session.TableSnapshot

/**
 * The ranges of the first key column that the objects of a committed table version may hold, from their
 * statistics alone (min and max of the key column, as scans prune objects by them: an object with no
 * statistic on a side is open on that side). A key outside every range is in no object, so it is not in the
 * table: an insert of it needs no lookup. Conservative: a key inside a range may or may not be stored (a
 * delete hides it, or the range has a gap there). Overlapping ranges are merged, so [[mayHold]] is one
 * binary search.
 */
private[write] final class StoredKeyRanges private (dt: org.apache.spark.sql.types.DataType,
                                                     ranges: IndexedSeq[(Option[Any], Option[Any])]) {
  private val keyType = SparkKeys.keyTypeOf(dt) // resolved once: [[mayHold]] runs for every key of a write
  private def cmp(a: Any, b: Any): Int = versioned.core.format.KeyOrder.compareCanonical(keyType, a, b)

  /** Whether an object of the version may hold first-key value `key` (canonical, not null). */
  def mayHold(key: Any): Boolean = {
    // the last range whose lower bound is <= key (ranges are disjoint and sorted by lower bound)
    var lo = 0
    var hi = ranges.length - 1
    var found = -1
    while (lo <= hi) {
      val mid = (lo + hi) >>> 1
      if (ranges(mid)._1.forall(cmp(_, key) <= 0)) { found = mid; lo = mid + 1 } else hi = mid - 1
    }
    found >= 0 && ranges(found)._2.forall(cmp(key, _) <= 0)
  }
}

/**
 * A committed table version a write looks its keys up in, loaded at most once (`load`), with its
 * [[StoredKeyRanges]] built at most once (the choice of commit path and the inserts' key check both use them).
 */
private[write] final class StoredTable(load: () => TableSnapshot) {
  lazy val snapshot: TableSnapshot = load()
  lazy val ranges: StoredKeyRanges = StoredKeyRanges.of(snapshot)
}

private[write] object StoredKeyRanges {
  /** The ranges of `snapshot`'s objects (the representation scans read) on its first key column. */
  def of(snapshot: TableSnapshot): StoredKeyRanges = {
    val field = snapshot.layout.keyFields.head
    val dt = field.dataType
    def canon(v: Option[Any]): Option[Any] = v.filter(_ != null).map(Values.fromJson(_, dt))
    val metas = snapshot.version.effectiveFragments.flatMap(_.objects).distinct.map(snapshot.objects)
    val raw = metas.filter(_.rowCount > 0).map(m => (canon(m.minValues.get(field.name)), canon(m.maxValues.get(field.name))))
    val byLower: Ordering[Option[Any]] = (a, b) => (a, b) match {
      case (None, None) => 0
      case (None, _) => -1
      case (_, None) => 1
      case (Some(x), Some(y)) => SparkKeys.compareCanonical(dt, x, y)
    }
    def later(a: Option[Any], b: Option[Any]): Option[Any] =
      if (a.isEmpty || b.isEmpty) None else if (SparkKeys.compareCanonical(dt, a.get, b.get) >= 0) a else b
    val merged = raw.sortBy(_._1)(byLower).foldLeft(Vector.empty[(Option[Any], Option[Any])]) {
      case (acc, (l, h)) if acc.nonEmpty && (acc.last._2.isEmpty || l.isEmpty || SparkKeys.compareCanonical(dt, l.get, acc.last._2.get) <= 0) =>
        acc.init :+ (acc.last._1 -> later(acc.last._2, h))
      case (acc, r) => acc :+ r
    }
    new StoredKeyRanges(dt, merged)
  }
}
