package versioned.spark.read

/**
 * Executor-wide cache of conflated DIFF chains. Objects are immutable and content-addressed, so a
 * chain (its object URIs, oldest first) read with one column layout always conflates to the same rows:
 * repeated scans of a version skip re-reading its DIFFs and reuse the [[Overlay]]'s column batches, and
 * a chain that extends a cached one (the next commit's chain: the same objects plus its own DIFFs) is
 * conflated from the cached rows and only the new DIFFs ([[longestPrefix]]); the prefix's overlay is then
 * dropped, since once a table moves on its previous version is rarely read again, and cached overlays are
 * long-lived heap the garbage collector keeps walking and compacting. Least recently used chains are
 * dropped first once the cached overlays exceed the byte budget the scan passes (0 disables the cache; a
 * negative budget means the default, [[defaultBudget]] of this JVM's heap).
 */
private[read] object DiffCache {
  final case class Key(objects: Seq[String], layout: String)

  private final class Entry(val overlay: Overlay, val bytes: Long)
  private val entries = new java.util.LinkedHashMap[Key, Entry](16, 0.75f, true)
  private var total = 0L

  /** The default budget: a fifth of the JVM's maximum heap (user memory, outside Spark's unified memory). */
  def defaultBudget: Long = Runtime.getRuntime.maxMemory / 5

  /** The cached overlay of the longest proper prefix of `key`'s chain (same layout), with its length. */
  private def longestPrefix(key: Key): Option[(Overlay, Int)] = synchronized {
    (key.objects.length - 1 to 1 by -1).iterator
      .flatMap(n => Option(entries.get(Key(key.objects.take(n), key.layout))).map(e => (e.overlay, n))).nextOption()
  }

  /**
   * The overlay of `key`'s chain: cached, or built by `load`, which is given the cached overlay of the chain's
   * longest cached prefix and that prefix's length (None when there is none or the cache is off).
   */
  def getOrLoad(key: Key, budget0: Long)(load: Option[(Overlay, Int)] => Overlay): Overlay = {
    val budget = if (budget0 < 0) defaultBudget else budget0
    if (budget <= 0) return load(None)
    synchronized { Option(entries.get(key)).map(_.overlay) }.getOrElse {
      val prefix = longestPrefix(key)
      val overlay = load(prefix)
      val bytes = overlay.estimatedBytes
      if (bytes <= budget / 2) synchronized {
        if (!entries.containsKey(key)) { entries.put(key, new Entry(overlay, bytes)); total += bytes }
        // the prefix's chain is superseded (a fragment's previous version): dropped now, not when the budget is full
        prefix.foreach { case (_, n) => Option(entries.remove(Key(key.objects.take(n), key.layout))).foreach(total -= _.bytes) }
        val it = entries.values().iterator()
        while (total > budget && it.hasNext) { total -= it.next().bytes; it.remove() }
      }
      overlay
    }
  }

  /** Drops everything (tests). */
  def clear(): Unit = synchronized { entries.clear(); total = 0L }
}
