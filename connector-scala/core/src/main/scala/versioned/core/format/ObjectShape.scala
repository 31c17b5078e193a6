package versioned.core.format

/** Parameters of the Parquet objects the format writes, which readers rely on when they plan. */
object ObjectShape {
  /**
   * Most rows per Parquet page of an object (Parquet's default is 20,000). A lookup of scattered keys
   * reads one page per key at most, so with 2,000 rows per page 1,000 changed keys in 10M rows decode at
   * most a fifth of the table; page headers and indexes add under 1% to the file, and full scans are as fast.
   */
  val PageRows: Int = 2000

  /**
   * Most rows per Parquet row group of a shared DIFF (format 2: one key-sorted object read by several fragments).
   * A fragment reads only the row groups whose key statistics may hold keys within its bounds
   * ([[KeyBounds.runMayHold]]), so it decodes its share of the change set plus at most two partial row groups.
   */
  val SharedRowGroupRows: Int = 4000
}
