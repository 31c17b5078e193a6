package versioned.spark.catalog

import java.sql.Timestamp
import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import versioned.core._

/** Schemas and rows of the metadata tables, computed from the engine's metastore. */
private[catalog] object MetadataViews {
  private val str = StringType
  private val strings = ArrayType(StringType, containsNull = false)
  private def ts(ms: Long) = new Timestamp(ms)

  /** The columns of an image, as the log declares them (`HistoryApi.LogSchema`: one declaration for `$log` and `log`). */
  private val imageFields = versioned.spark.api.HistoryApi.LogSchema.fields.toSeq.take(5)

  def schema(t: MetaTarget): StructType = StructType(t.kind match {
    case MetaKind.Log => versioned.spark.api.HistoryApi.LogSchema.fields.toSeq
    case MetaKind.History => imageFields ++ Seq(StructField("table_hash", str), StructField("operation", str, nullable = false))
    case MetaKind.Refs => Seq(StructField("name", str, nullable = false), StructField("kind", str, nullable = false),
      StructField("full_name", str, nullable = false), StructField("image", str, nullable = false),
      StructField("created", TimestampType, nullable = false)) ++
      (if (t.table.isDefined) Seq(StructField("table_hash", str)) else Nil)
    case MetaKind.Objects => Seq(StructField("representation", str, nullable = false),
      StructField("fragment", IntegerType, nullable = false), StructField("lower", str),
      StructField("position", IntegerType, nullable = false), StructField("id", str, nullable = false),
      StructField("kind", str, nullable = false), StructField("rows", LongType, nullable = false),
      StructField("bytes", LongType, nullable = false), StructField("min", MapType(str, str)),
      StructField("max", MapType(str, str)), StructField("null_counts", MapType(str, LongType)))
    case MetaKind.ImageDetails => imageFields ++ Seq(StructField("table", str, nullable = false),
      StructField("table_hash", str), StructField("status", str, nullable = false),
      StructField("primary_key", strings), StructField("fragments", IntegerType), StructField("objects", IntegerType),
      StructField("object_rows", LongType), StructField("bytes", LongType))
    case MetaKind.Diff => versioned.spark.diff.DiffSummary.Schema.fields.toSeq // rows: DiffView
    case MetaKind.Blame => Nil // its schema is the table's: BlameTable
    case MetaKind.Checks => Seq(StructField("image", str, nullable = false), StructField("check", str, nullable = false),
      StructField("severity", str, nullable = false), StructField("status", str, nullable = false),
      StructField("failing_rows", LongType, nullable = false), StructField("sample_keys", strings, nullable = false),
      StructField("error", str), StructField("duration_ms", LongType, nullable = false), StructField("who", str, nullable = false),
      StructField("purpose", str, nullable = false), StructField("run_id", str, nullable = false),
      StructField("ran", TimestampType, nullable = false))
    case MetaKind.Reflog => versioned.spark.api.ReflogApi.Schema.fields.toSeq
  })

  private def image(i: Image): Seq[Any] = Seq(i.hash, i.parents, i.author, i.message, ts(i.createdMs))

  /** A repository without commits on its default branch yet: its metadata tables are empty. */
  def emptyRepository(engine: Engine, repo: String, rev: Revision): Boolean =
    rev == Revision.DefaultBranch && engine.branchHeadOption(repo, engine.defaultBranch(repo)).isEmpty

  def rows(engine: Engine, t: MetaTarget, rev: Revision): Seq[Row] =
    if (!Set[MetaKind](MetaKind.Refs, MetaKind.Diff, MetaKind.Checks, MetaKind.Reflog)(t.kind) && emptyRepository(engine, t.repo, rev)) Seq.empty
    else nonEmptyRows(engine, t, rev)

  private def nonEmptyRows(engine: Engine, t: MetaTarget, rev: Revision): Seq[Row] = t.kind match {
    case MetaKind.Log =>
      engine.history.log(t.repo, rev).map { e =>
        val a = e.image.actor
        Row.fromSeq((image(e.image) :+ e.tablesChanged) ++ Seq(a.map(_.user).orNull, a.map(_.appId).orNull, a.map(_.client).orNull))
      }
    case MetaKind.History =>
      val name = t.table.get
      val changes = engine.history.log(t.repo, rev).filter(_.tablesChanged.contains(name)).map { e =>
        val now = engine.tableOption(t.repo, e.image.hash, name)
        val before = e.image.parents.headOption.flatMap(p => engine.tableOption(t.repo, p, name))
        val op = (before, now) match {
          case (None, Some(_)) => "create"
          case (Some(_), None) => "drop"
          case (Some(b), Some(n)) if b.schemaJson != n.schemaJson || b.primaryKey != n.primaryKey => "alter"
          case _ => "write"
        }
        Row.fromSeq(image(e.image) ++ Seq(now.map(_.hash).orNull, op))
      }
      // no image changed it: a table that never existed on this line is TABLE_NOT_FOUND, not an empty history
      if (changes.isEmpty) engine.table(t.repo, engine.resolve(t.repo, rev), name)
      changes
    case MetaKind.Refs =>
      engine.refs.all(t.repo).map { r =>
        val base = Seq(r.shortName, r.kind, r.fullName, r.image, ts(r.createdMs))
        Row.fromSeq(base ++ t.table.map(n => engine.tableOption(t.repo, r.image, n).map(_.hash).orNull).toSeq)
      }
    case MetaKind.Objects =>
      val img = engine.resolve(t.repo, rev)
      val v = engine.table(t.repo, img, t.table.get)
      val all = v.objectIds
      val metas = engine.objects(all)
      def rowsOf(rep: String, frags: Seq[Fragment]) = frags.zipWithIndex.flatMap { case (f, fi) =>
        f.objects.zipWithIndex.map { case (id, pos) =>
          val m = metas.get(id)
          Row(rep, fi, f.lower.map(l => Json.write(l)).orNull, pos, id, m.map(_.kind).orNull,
            m.map(_.rowCount).getOrElse(0L), m.map(_.sizeBytes).getOrElse(0L),
            m.map(_.minValues.map { case (k, x) => k -> text(x) }).orNull,
            m.map(_.maxValues.map { case (k, x) => k -> text(x) }).orNull, m.map(_.nullCounts).orNull)
        }
      }
      rowsOf("logical", v.fragments) ++ v.compacted.toSeq.flatMap(rowsOf("compacted", _))
    case MetaKind.ImageDetails =>
      val d = engine.history.show(t.repo, rev)
      val tables = d.tables.map { it =>
        val tv = it.table
        val ids = tv.effectiveFragments.flatMap(_.objects)
        val objs = ids.flatMap(d.objects.get)
        Row.fromSeq(image(d.image) ++ Seq(tv.name, tv.hash, if (it.changed) "changed" else "unchanged",
          tv.primaryKey, tv.effectiveFragments.size, ids.size, objs.map(_.rowCount).sum, objs.map(_.sizeBytes).sum))
      }
      val dropped = d.droppedTables.map(n => Row.fromSeq(image(d.image) ++ Seq(n, null, "dropped", null, null, null, null, null)))
      tables ++ dropped
    case MetaKind.Diff => DiffView.rows(engine, t, rev)
    case MetaKind.Blame => Nil // BlameTable
    case MetaKind.Reflog => versioned.spark.api.ReflogApi.rows(engine, t.repo, None, 0)
    case MetaKind.Checks => engine.checks.runs(t.repo).map { r =>
      Row(r.image, r.run.check, r.run.severity, r.run.status, r.run.failingRows, r.run.sampleKeys, r.run.error.orNull,
        r.run.durationMs, r.who, r.purpose, r.runId, ts(r.runMs))
    }
  }

  private def text(v: Any): String = v match {
    case null => null
    case s: String => s
    case other => Json.write(other)
  }
}
