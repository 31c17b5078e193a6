package versioned.core.format

import versioned.core.{DataValidationException, ErrorClass}

/**
 * Key validation: the rule every write obeys before anything is written. No key column is null, and no
 * key appears twice in one write. The checks here run where rows are held in key order (a driver-side
 * write, a sorted write task); engines check distributed data with their own plan and raise the same
 * errors ([[nullKey]], [[duplicateKey]]). `operation` names a row-level operation (`UPDATE`, `MERGE`) in
 * the messages; plain writes leave it out.
 */
object KeyRules {
  /** The error for rows with a null primary key. */
  def nullKey(keys: Seq[String], operation: Option[String]): DataValidationException =
    new DataValidationException(ErrorClass.NullPrimaryKey, operation.map(op => s"$op would write a row")
      .getOrElse("The data has rows") + s" with a null primary key (${keys.mkString(", ")}). Primary key values must " +
      "not be null; filter or fill them. Nothing was committed.")

  /** The error for `rows` rows sharing one key; `values` are the key's values as users write them. */
  def duplicateKey(keys: Seq[String], rows: Long, values: Seq[Any], operation: Option[String]): DataValidationException =
    new DataValidationException(ErrorClass.DuplicateKey, operation.map(op => s"$op would give $rows rows the key (")
      .getOrElse(s"The data has $rows rows with key (") + keys.zip(values).map { case (k, v) => s"$k=$v" }.mkString(", ") +
      "). Each key may appear once per write; deduplicate first. Nothing was committed.")

  /**
   * Checks keys sorted in the key order (`sorted`, as `order` compares them): raises [[nullKey]] for a null,
   * [[duplicateKey]] for the first run of equal keys (`values` shows a key to users).
   */
  def checkSorted[R](sorted: IndexedSeq[R], order: KeyOrder[R], keys: Seq[String], operation: Option[String])
                    (values: R => Seq[Any]): Unit = {
    if (sorted.exists(order.hasNull)) throw nullKey(keys, operation)
    var i = 0
    while (i < sorted.length) {
      var j = i + 1
      while (j < sorted.length && order.same(sorted(i), sorted(j))) j += 1
      if (j - i > 1) throw duplicateKey(keys, j - i, values(sorted(i)), operation)
      i = j
    }
  }

  /**
   * The rule checked in one pass over keys that arrive in key order (a sorted write task): it holds while
   * each key is non-null and greater than the one before. A stream that breaks it is not reported here:
   * the caller falls back to a check over all the rows, which names the offending key.
   */
  final class Ascending[R](order: KeyOrder[R], copy: R => R) {
    private var prev: R = _
    private var seen = false
    private var ok = true

    /** Adds the next key; whether every key so far obeyed the rule. */
    def add(key: R): Boolean = {
      if (!ok) return false
      if (order.hasNull(key) || (seen && order.compare(prev, key) >= 0)) ok = false
      else { prev = copy(key); seen = true }
      ok
    }

    /** The last key, while the rule holds. */
    def last: Option[R] = if (ok && seen) Some(prev) else None
  }
}
