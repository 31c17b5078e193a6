package versioned.spark.read

/**
 * Executor-wide cache of conflated DIFF chains. Objects are immutable and content-addressed, so a
 * chain (its object URIs, oldest first) read with one column layout always conflates to the same rows:
 * repeated scans of a version skip re-reading its DIFFs and reuse the [[Overlay]]'s column batches.
 * Least recently used chains are dropped first once the cached overlays exceed the byte budget the
 * scan passes (0 disables the cache).
 */
private[read] object DiffCache {
  final case class Key(objects: Seq[String], layout: String)

  private final class Entry(val overlay: Overlay, val bytes: Long)
  private val entries = new java.util.LinkedHashMap[Key, Entry](16, 0.75f, true)
  private var total = 0L

  def getOrLoad(key: Key, budget: Long)(load: => Overlay): Overlay = {
    if (budget <= 0) return load
    synchronized { Option(entries.get(key)).map(_.overlay) }.getOrElse {
      val overlay = load
      val bytes = overlay.estimatedBytes
      if (bytes <= budget / 2) synchronized {
        if (!entries.containsKey(key)) { entries.put(key, new Entry(overlay, bytes)); total += bytes }
        val it = entries.values().iterator()
        while (total > budget && it.hasNext) { total -= it.next().bytes; it.remove() }
      }
      overlay
    }
  }

  /** Drops everything (tests). */
  def clear(): Unit = synchronized { entries.clear(); total = 0L }
}
