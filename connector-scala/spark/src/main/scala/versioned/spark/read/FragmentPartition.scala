package versioned.spark.read

import org.apache.spark.sql.connector.read.InputPartition

/**
 * One fragment's chain after pruning: an optional SNAP and DIFFs, oldest first. `readShare`: about the share of
 * its pages a key lookup reads (1 without a lookup), for packing fragments into tasks.
 */
private[versioned] final case class FragmentPartition(index: Int, snap: Option[ObjectFile], diffs: Seq[ObjectFile],
                                                      readShare: Double = 1.0) {
  def objects: Seq[ObjectFile] = snap.toSeq ++ diffs
  /** The bytes a task reads of the fragment, about. */
  def readBytes: Long = (objects.map(_.size).sum * readShare).toLong
  def diffRows: Long = diffs.map(_.rows).sum
}

/**
 * One Spark input partition: consecutive fragments (in key order), read one after the other. Small
 * fragments share a task the way Spark packs small files ([[VersionedScan.groups]]). `keys`: the values of
 * the scan's key lookup, sorted, when its readers keep only their rows ([[LookupReaders]]).
 */
private[versioned] final case class FragmentGroup(fragments: Seq[FragmentPartition], keys: Option[Array[Long]] = None)
  extends InputPartition
