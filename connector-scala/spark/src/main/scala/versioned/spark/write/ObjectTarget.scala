package versioned.spark.write

import org.apache.spark.sql.types._
import versioned.core.{Errors, Hashing, ObjectChecksum, ObjectMeta, WarehouseConfig, WarehouseStore}

/**
 * Where a writer puts objects: the warehouse, and the write lease its staging files live under
 * (`_staging/<lease>/`, see docs/FORMAT.md, "Garbage collection"). With `held`, every object stays in
 * the lease's staging area (where a writer keeps an object it found stored already) and only the commit
 * that references it moves it into the store ([[versioned.core.WarehouseStore.restore]]): objects that
 * may never be committed (a first pass whose rows are planned again) never reach the store.
 */
private[versioned] final case class ObjectTarget(config: WarehouseConfig, lease: String, held: Boolean = false) {
  def stagingUri(name: String): String = config.stagingUri(s"$lease/$name")
  /** Where a writer keeps its copy of an object it found already stored. */
  def reusedUri(id: String): String = stagingUri(s"${WarehouseStore.Reused}/$id.parquet")
}
