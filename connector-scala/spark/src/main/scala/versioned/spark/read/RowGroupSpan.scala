package versioned.spark.read

import scala.jdk.CollectionConverters._
import org.apache.parquet.format.converter.ParquetMetadataConverter
import org.apache.parquet.io.api.Binary
import versioned.core.format.{KeyBounds, KeyType}
import versioned.spark.format.SparkKeys

/**
 * The part of a shared object a fragment reads: the byte span of the Parquet row groups whose key statistics may
 * hold keys within the fragment's bounds ([[KeyBounds.runMayHold]]), planned from the object's verified tail
 * (its footer) without another read. A shared DIFF is key-sorted with row groups of at most
 * [[versioned.core.format.ObjectShape.SharedRowGroupRows]] rows, so those row groups are consecutive; a Parquet
 * reader given the span as its split reads exactly them (a row group belongs to the split holding its midpoint).
 */
private[versioned] object RowGroupSpan {
  /**
   * `[start, end)` in bytes of the row groups of the object whose tail is `tail` that may hold keys within `b`
   * (`start == end`: none), or None to read it whole: a first key column of a type whose Parquet statistics are
   * not compared here (only integral and string keys are), or a row group without statistics of it.
   */
  def of(tail: Array[Byte], b: FragmentBounds, conf: org.apache.hadoop.conf.Configuration): Option[(Long, Long)] = {
    val first = SparkKeys.keyTypeOf(b.types.head)
    canonical(first).flatMap { value =>
      val blocks = footer(tail, conf).getBlocks.asScala.toSeq
      val keyPath = Seq(b.names.head)
      val ranges = blocks.map { block =>
        val stats = block.getColumns.asScala.find(_.getPath.toArray.toSeq == keyPath).map(_.getStatistics)
          .filter(s => s != null && !s.isEmpty && s.hasNonNullValue && s.getNumNulls == 0)
        for { s <- stats; min <- value(s.genericGetMin); max <- value(s.genericGetMax) }
          yield (block, KeyBounds.runMayHold(first, b.canonical._1, b.canonical._2, min, max))
      }
      if (ranges.exists(_.isEmpty)) None
      else {
        val kept = ranges.flatten.collect { case (block, true) => block }
        if (kept.isEmpty) Some((0L, 0L))
        else Some((kept.head.getStartingPos, kept.last.getStartingPos + kept.last.getCompressedSize))
      }
    }
  }

  /** Canonical values of Parquet statistics of a key column of type `t`, for the types compared here. */
  private def canonical(t: KeyType): Option[Any => Option[Any]] =
    if (t.integral) Some { case n: Number => Some(n.longValue()); case _ => None } // INT96 timestamps: no statistics
    else if (t == KeyType.Utf8) Some { case v: Binary => Some(v.toStringUsingUTF8); case _ => None }
    else None

  /** The footer in a verified tail: it ends with the footer, its length (4 bytes, little-endian) and `PAR1`. */
  private def footer(tail: Array[Byte], conf: org.apache.hadoop.conf.Configuration) = {
    val n = tail.length
    require(n >= 8, "an object's tail holds at least its footer length and magic")
    val len = java.nio.ByteBuffer.wrap(tail, n - 8, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt
    require(len >= 0 && len <= n - 8, s"footer length $len does not fit the tail of $n bytes")
    new ParquetMetadataConverter(org.apache.parquet.HadoopReadOptions.builder(conf).build()).readParquetMetadata(new java.io.ByteArrayInputStream(tail, n - 8 - len, len),
      ParquetMetadataConverter.NO_FILTER)
  }
}
