package versioned.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._
import versioned.spark.format.SparkKeys

/**
 * Conflates a fragment's DIFFs held in memory (each sorted by key, oldest first): one row per key, the
 * newest change winning, deletes kept. The rule is the kernel's ([[versioned.core.format.Conflation]]);
 * a single integral key is compared as primitive `long`s.
 */
private[versioned] object Conflation {
  def apply(sources: Array[Array[InternalRow]], keyTypes: Seq[DataType]): Array[InternalRow] =
    versioned.core.format.Conflation.rows(sources, SparkKeys.order(keyTypes))
}
