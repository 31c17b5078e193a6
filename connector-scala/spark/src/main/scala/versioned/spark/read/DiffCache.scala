package versioned.spark.read

/**
 * Executor-wide cache of conflated DIFF chains. Objects are immutable and content-addressed, so a
 * chain (its object URIs, oldest first) read with one column layout always conflates to the same rows:
 * repeated scans of a version skip re-reading its DIFFs and reuse the [[Overlay]]'s column batches, and
 * a chain that extends a cached one (the next commit's chain: the same objects plus its own DIFFs) is
 * conflated from the cached rows and only the new DIFFs ([[longestPrefix]]); the prefix's overlay is then
 * dropped, since once a table moves on its previous version is rarely read again, and cached overlays are
 * long-lived heap the garbage collector keeps walking and compacting. When a new overlay does not fit the byte
 * budget the scan passes (0 disables the cache; a negative budget means the default, [[defaultBudget]] of this
 * JVM's heap), least recently used chains are dropped to make room, but only those idle for [[idleNanos]]: a scan
 * of more chains than fit would otherwise drop each chain before the next scan reaches it (least recently used
 * order is exactly wrong for repeated sequential scans) and hit nothing, paying for every insertion. A chain that
 * finds no room is not cached; the chains cached first keep serving the scans that follow.
 */
private[read] object DiffCache {
  final case class Key(objects: Seq[String], layout: String)

  private final class Entry(val overlay: Overlay, val bytes: Long, @volatile var usedAt: Long)

  /** How long a cached chain must have gone unused before a new one may displace it (tests shorten it). */
  @volatile private[read] var idleNanos: Long = 10L * 1000 * 1000 * 1000
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
    synchronized { Option(entries.get(key)).map { e => e.usedAt = System.nanoTime(); e.overlay } }.getOrElse {
      val prefix = longestPrefix(key)
      val overlay = load(prefix)
      val bytes = overlay.estimatedBytes
      if (bytes <= budget / 2) synchronized {
        // the prefix's chain is superseded (a fragment's previous version): dropped now, not when the budget is full
        prefix.foreach { case (_, n) => Option(entries.remove(Key(key.objects.take(n), key.layout))).foreach(total -= _.bytes) }
        if (!entries.containsKey(key)) {
          val now = System.nanoTime()
          val it = entries.values().iterator()
          var idle = true
          while (total + bytes > budget && idle && it.hasNext) {
            val e = it.next()
            idle = now - e.usedAt >= idleNanos
            if (idle) { total -= e.bytes; it.remove() }
          }
          if (total + bytes <= budget) { entries.put(key, new Entry(overlay, bytes, now)); total += bytes }
        }
      }
      overlay
    }
  }

  /** Drops everything (tests). */
  def clear(): Unit = synchronized { entries.clear(); total = 0L }
}
