package versioned.spark.session

import scala.util.Try
import org.apache.spark.network.util.JavaUtils
import org.apache.spark.sql.execution.datasources.parquet.ParquetCompressionCodec

/**
 * One `spark.versioned.*` setting, declared once: its key, the kind of value it takes (type and range),
 * its default, and what it does. Everything else derives from the declarations ([[Setting.all]]): the
 * check that refuses unknown keys, the parsing and range checks ([[Settings]]), and the configuration
 * table of the README, which `SettingsDocSuite` checks against [[Setting.markdownTable]].
 *
 * @param option      the per-call option that overrides the setting, if any
 * @param defaultText the default as the README shows it
 */
final case class Setting[T](key: String, kind: Setting.Kind[T], default: T, defaultText: String, doc: String,
                            option: Option[String] = None) {
  /** The value of this setting in `conf` (the default when absent); INVALID_OPTION when it does not parse. */
  def in(conf: Map[String, String]): T = conf.get(key).map(v => kind.parse(v.trim).getOrElse(
    throw versioned.core.Errors.invalidOption(s"Invalid value '$v' for setting $key: expected ${kind.expected}.")))
    .getOrElse(default)
}

object Setting {
  /** The kind of value a setting takes: how it parses, and what it allows (said in errors). */
  final case class Kind[T](expected: String, parse: String => Option[T])

  object Kind {
    def longAtLeast(min: Long): Kind[Long] = Kind(s"an integer >= $min", _.toLongOption.filter(_ >= min))
    def intAtLeast(min: Int): Kind[Int] = Kind(s"an integer between $min and ${Int.MaxValue}", _.toIntOption.filter(_ >= min))
    /** `true` or `false`, in any case: the one boolean parser of settings and options. */
    val boolean: Kind[Boolean] = Kind("true or false", _.toLowerCase(java.util.Locale.ROOT) match {
      case "true" => Some(true)
      case "false" => Some(false)
      case _ => None
    })
    val bytes: Kind[Long] = Kind("a byte size >= 0 such as 1048576, 512k, 64m or 1g",
      v => Try(JavaUtils.byteStringAsBytes(v)).toOption.filter(_ >= 0))
    def fraction(expected: String, ok: Double => Boolean): Kind[Double] = Kind(expected, _.toDoubleOption.filter(ok))
    /** Any text; empty counts as unset. */
    val text: Kind[Option[String]] = Kind("text", v => Some(Option(v).filter(_.nonEmpty)))
    def oneOf(values: Seq[String]): Kind[String] =
      Kind(s"one of ${values.mkString(", ")}", v => Some(v.toLowerCase(java.util.Locale.ROOT)).filter(values.contains))
  }

  /** Parquet codecs Spark can write with its bundled libraries (`none` is Spark's alias of `uncompressed`). */
  val ParquetCodecs: Seq[String] = {
    import scala.jdk.CollectionConverters._
    ParquetCompressionCodec.availableCodecs.asScala.map(_.lowerCaseName()).toSeq :+ "none"
  }

  val Warehouse: Setting[Option[String]] = Setting("spark.versioned.warehouse", Kind.text, None,
    "`./versioned-warehouse`", "root URI of objects", Some("warehouse"))
  val MetastoreUrl: Setting[Option[String]] = Setting("spark.versioned.metastore.url", Kind.text, None,
    "SQLite in the warehouse", "JDBC URL of the metastore", Some("metastoreUrl"))
  val DefaultBranch: Setting[Option[String]] = Setting("spark.versioned.defaultBranch", Kind.text, None, "`main`",
    "the default branch of repositories a call creates (an existing repository keeps its own: the default_branch " +
      "procedure, or the API's default branch)",
    Some("defaultBranch"))
  val FragmentRows: Setting[Long] = Setting("spark.versioned.fragment.targetRows", Kind.longAtLeast(1), 1000000L, "1000000",
    "rows per fragment of a new SNAP")
  val BackgroundCompaction: Setting[Boolean] = Setting("spark.versioned.compaction.background", Kind.boolean, true, "true",
    "compaction after a commit runs in a background thread of the driver (one per table at a time), so the write returns " +
      "without waiting for it; `false` runs it before the write returns. The compact operation (`CALL ….system.compact(...)`, " +
      "or the API's compact) runs it now")
  val CompactionYieldMs: Setting[Long] = Setting("spark.versioned.compaction.yieldMs", Kind.longAtLeast(0), 2000L, "2000",
    "a background compaction runs as small jobs (one fragment per task, at most half the task slots) and before each waits " +
      "while a write is in progress in the driver, at most this many milliseconds each time (0: no waiting)")
  val CompactionDutyCycle: Setting[Double] = Setting("spark.versioned.compaction.dutyCycle",
    Kind.fraction("a number > 0 and <= 1, e.g. 0.5", d => d > 0 && d <= 1), 0.5, "0.5",
    "the most share of the time a background compaction works: between its jobs it rests as long as its work since the " +
      "last rest × (1 − d) / d (0.5: as long as it worked; 1: no rest), so a burst of compaction spreads over the next " +
      "commits instead of slowing one")
  val MaxDiffRatio: Setting[Double] = Setting("spark.versioned.compaction.maxDiffRatio",
    Kind.fraction("a number > 0, e.g. 0.1", d => d > 0 && !d.isInfinite), 1.0, "1.0",
    "re-snapshot a fragment once its DIFF rows reach this share of its SNAP rows (a SNAP smaller than the table's largest " +
      "counts as that size, capped at `fragment.targetRows`); in a fragment of at least half the target size, rows appended " +
      "past the SNAP's largest key are split off as a new fragment instead of rewriting the SNAP. Scans of a SNAP under " +
      "DIFFs cost about what the SNAP alone costs, so the default is high (`bench/README.md`, \"Compaction policy\")")
  val MaxChain: Setting[Int] = Setting("spark.versioned.compaction.maxChainLength", Kind.intAtLeast(1), 50, "50",
    "once a fragment's chain has this many DIFFs (under `maxDiffRatio`), merge them into one DIFF but for large " +
      "consolidated DIFFs first in the chain, each at least the rows of all after it (only changed rows " +
      "are rewritten, as a SNAP rewrite would shorten the chain for the cost of the whole fragment); at 1, or with a single " +
      "DIFF, re-snapshot the fragment instead")
  val ConsolidateAfter: Setting[Int] = Setting("spark.versioned.compaction.consolidateDiffs", Kind.intAtLeast(2), 5, "5",
    "otherwise, once this many commit DIFFs follow a fragment's SNAP or last consolidated DIFF, merge them into one DIFF " +
      "(only changed rows are rewritten); once this many consolidated DIFFs are in a row, merge those into one (a second " +
      "tier). Fewer objects per fragment keep scans at Parquet speed; 5 keeps the head scan within 1.2× of Parquet at 1% " +
      "churn per commit for about 1.75× the changed rows in bytes written (`bench/README.md`, \"Round 7\")")
  /** Negative: a fifth of each executor's heap ([[versioned.spark.read.DiffCache.defaultBudget]]). */
  val DiffCacheBytes: Setting[Long] = Setting("spark.versioned.read.diffCacheBytes", Kind.bytes, -1L,
    "a fifth of the executor heap", "bytes of conflated DIFF rows each executor caches for repeated scans and for the " +
      "chains of the next commits (0 disables)")
  val MaxOverlayRows: Setting[Long] = Setting("spark.versioned.read.maxOverlayRows", Kind.longAtLeast(0), 2000000L, "2000000",
    "most DIFF rows per fragment merged column-wise in memory; above, rows are merged one by one")
  val DiffCompression: Setting[String] = Setting("spark.versioned.write.diffCompression", Kind.oneOf(ParquetCodecs), "zstd",
    "zstd", "Parquet codec of DIFF objects (small change sets compress about a third smaller than with snappy); SNAPs " +
      "use `spark.sql.parquet.compression.codec` like plain Parquet")
  val LocalCommitMaxRows: Setting[Long] = Setting("spark.versioned.write.localCommitMaxRows", Kind.longAtLeast(0), 100000L,
    "100000", "an upsert (write option `upsert`, with or without `deleteColumn`) of at most this many rows into an existing " +
      "keyed table, and an insert of as many whose keys need at most 10,000 lookups (keys outside every stored object's " +
      "key range need none), is validated and written by the driver, with no Spark job " +
      "after the write itself; so are the changes of a DELETE/UPDATE/MERGE or `delete_where` of at most this many rows; " +
      "0 turns it off")
  val LocalCommitMaxBytes: Setting[Long] = Setting("spark.versioned.write.localCommitMaxBytes", Kind.bytes, 64L << 20, "64m",
    "... and of at most this many bytes (Spark's in-memory row size)")
  val SharedDiffMaxRows: Setting[Long] = Setting("spark.versioned.write.sharedDiffMaxRows", Kind.longAtLeast(0), 10000L,
    "10000", "a change set committed by the driver that touches several fragments and has at most this many rows is " +
      "written as one shared DIFF that each touched fragment reads its key range of (docs/FORMAT.md, format version 2), " +
      "instead of one DIFF per fragment; not when the commit records before-images; a larger one written by Spark tasks " +
      "is one DIFF per task, shared by the fragments it covers, a task starting another at its next fragment once one " +
      "holds this many rows; 0 turns it off (until compaction pushes it down, each touched fragment decodes the row " +
      "groups of it, of up to 4,000 rows, that may hold its keys)")
  val TailFragments: Setting[Boolean] = Setting("spark.versioned.write.tailFragments", Kind.boolean, true, "true",
    "an append committed by the driver (no deletes) whose keys are all above every stored key, of at least half " +
      "`fragment.targetRows` rows, after a last fragment whose SNAP is as big, is written as a new last fragment (one " +
      "SNAP) instead of a DIFF on the last fragment, so a stream of ascending ids leaves nothing to compact " +
      "(docs/FORMAT.md, \"Appends past the last key\"); `false`: a DIFF, as a write planned with Spark jobs writes it")
  val JavaPermissions: Setting[Boolean] = Setting("spark.versioned.fs.javaPermissions", Kind.boolean, true, "true",
    "`file:` paths opened through Hadoop's `FileContext` API (a streaming query's checkpoint) are renamed without a " +
      "`readlink` process per path and (without Hadoop's native library) created without a `chmod` process per file, " +
      "~5 ms each: the connector sets `fs.AbstractFileSystem.file.impl` of the application's Hadoop configuration once, " +
      "when the SparkContext opens its first warehouse, unless it is already set (docs/STREAMING.md); `false` then leaves it as it is")
  val BeforeImages: Setting[Boolean] = Setting("spark.versioned.write.beforeImages", Kind.boolean, false, "false",
    "such driver-written commits record each changed key's row before them in their DIFFs, so diffs across them need no " +
      "lookups (`docs/DIFF.md`)", Some("beforeImages"))
  val Author: Setting[Option[String]] = Setting("spark.versioned.author", Kind.text, None, "`spark.versioned.user`",
    "default commit author")
  val User: Setting[Option[String]] = Setting("spark.versioned.user", Kind.text, None, "Spark's user",
    "who the reflog records for every ref movement and every commit its committer (and the default commit author); with the " +
      "application id and the client (`docs/AUDIT.md`)")
  val Client: Setting[Option[String]] = Setting("spark.versioned.client", Kind.text.copy(expected =
    s"one of ${versioned.core.Actor.Clients.mkString(", ")}", parse = v => Some(Option(v).filter(_.nonEmpty))
      .filter(_.forall(versioned.core.Actor.Clients.contains))), None, "`scala`",
    "the client the reflog and commits record (set by the Python package and the CLI; SQL procedures and SQL DML record `sql`)")

  /** Every setting, in the README's order. */
  val all: Seq[Setting[_]] = Seq(Warehouse, MetastoreUrl, DefaultBranch, FragmentRows, BackgroundCompaction,
    CompactionYieldMs, CompactionDutyCycle, MaxDiffRatio, MaxChain, ConsolidateAfter, DiffCacheBytes, MaxOverlayRows,
    DiffCompression, LocalCommitMaxRows, LocalCommitMaxBytes, SharedDiffMaxRows, TailFragments, BeforeImages, JavaPermissions, Author, User, Client)

  /** The README's configuration table of [[all]] (and the per-remote credentials, which have no fixed key). */
  def markdownTable: String = (Seq("| key | default | meaning |", "|---|---|---|") ++ all.map { s =>
    val key = s"`${s.key}`" + s.option.fold("")(o => s" (option `$o`)")
    s"| $key | ${s.defaultText} | ${s.doc} |"
  } :+ "| `spark.versioned.remote.<name>.metastore.user` / `.password` | none | credentials for remote `<name>`'s metastore " +
    "(never stored; `docs/REMOTES.md`) |").mkString("\n")
}
