package versioned.spark.governance

import scala.util.control.NonFatal
import java.util.concurrent.atomic.AtomicLong
import org.apache.spark.sql.{AnalysisException, DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression
import org.apache.spark.sql.functions.{coalesce, count, expr, lit, not, when}
import org.apache.spark.sql.types.BooleanType
import versioned.core._
import versioned.spark.diff.TableDiff
import versioned.spark.format.Columns.col
import versioned.spark.session.{Jobs, Warehouses}

/**
 * Evaluates checks (docs/GOVERNANCE.md) on one image with Spark: a query check's failing rows are what its
 * query returns with every table it names read at the image (the names are bound as common table expressions
 * over the image's tables, so they shadow any other table of that name); a predicate check's failing rows are
 * the rows of its table for which the predicate is not true (false or null).
 */
object CheckRunner {
  /** Failing keys kept per check run. */
  val SampleSize = 5

  /**
   * Evaluates `defs` on `image` (nothing is recorded). A check that cannot run is status error, not an exception.
   * The predicate checks of one table are evaluated together ([[together]]): one read of its changed rows, one job
   * counting every check's failing rows; when that fails (a check that throws), each is evaluated alone.
   */
  def run(spark: SparkSession, engine: Engine, repo: String, image: Image, defs: Seq[CheckDef]): Seq[CheckRun] = {
    val byTable = defs.filter(_.table.isDefined).groupBy(_.table.get).values.filter(_.size > 1)
    val batched = byTable.flatMap(ds => together(spark, engine, repo, image, ds)).map(r => r.check -> r).toMap
    defs.map(d => batched.getOrElse(d.name, alone(spark, engine, repo, image, d)))
  }

  private def alone(spark: SparkSession, engine: Engine, repo: String, image: Image, d: CheckDef): CheckRun = {
    val started = System.nanoTime()
    def ms = (System.nanoTime() - started) / 1000000L
    try Jobs.described(spark, s"check ${d.name} on $repo ${image.shortHash}") {
      withFailing(spark, engine, repo, image, d, incremental = true) { (failing, keys) =>
        val n = failing.count()
        CheckRun(d.name, d.severity, if (n == 0) CheckRun.Pass else CheckRun.Fail, n, sample(failing, keys, n), None, ms)
      }
    } catch {
      case NonFatal(e) => CheckRun(d.name, d.severity, CheckRun.Error, 0L, Nil,
        Some(Option(e.getMessage).getOrElse(e.getClass.getSimpleName).takeWhile(_ != '\n').take(500)), ms)
    }
  }

  /** Up to [[SampleSize]] failing keys (none when `n`, the failing count, is 0). */
  private def sample(failing: DataFrame, keys: Seq[String], n: Long): Seq[String] =
    if (n == 0) Nil else failing.select(keys.map(failing.col): _*).limit(SampleSize).collect().toSeq
      .map(r => r.toSeq.map(v => String.valueOf(v)).mkString(","))

  /**
   * The predicate checks `ds` of one table evaluated together: each on the rows that decide it (the changed rows when
   * [[changedRows]] allows, else the table, as alone), the failing rows of every check on the same rows counted in
   * one job (the diff is computed once), the sample keys of a failing check read after. Every run's duration is the
   * whole evaluation's. None when the evaluation failed: the caller evaluates each check alone (which names the
   * check that cannot run).
   */
  private def together(spark: SparkSession, engine: Engine, repo: String, image: Image,
                       ds: Seq[CheckDef]): Seq[CheckRun] = {
    val started = System.nanoTime()
    val table = ds.head.table.get
    try Jobs.described(spark, s"checks ${ds.map(_.name).mkString(", ")} on $repo ${image.shortHash}") {
      val whole = read(spark, engine, repo, image, table)
      val version = engine.table(repo, image, table)
      val keys = keysOf(version, whole)
      lazy val changed = changedRows(spark, engine, repo, image, table, version, whole)
      val incremental = ds.filter(d => decidedByChanges(engine, repo, image, d, table, version, whole)).map(_.name).toSet
      val counted = ds.groupBy(d => incremental(d.name)).toSeq.flatMap { case (inc, group) =>
        val rows = if (inc) changed else whole
        val failing = group.map(d => d -> not(coalesce(expr(d.expression), lit(false))))
        // each predicate in a projection (it may be non-deterministic, which an aggregate's argument may not be)
        val flags = rows.select(failing.zipWithIndex.map { case ((_, p), i) => p.as(s"_vcheck$i") }: _*)
        val counts = flags.agg(count(when(col("_vcheck0"), lit(1))),
          failing.indices.tail.map(i => count(when(col(s"_vcheck$i"), lit(1)))): _*).head()
        failing.zipWithIndex.map { case ((d, pred), i) => (d, rows.where(pred), counts.getLong(i)) }
      }.map(c => c._1.name -> c).toMap
      changedOnly.addAndGet(incremental.size.toLong)
      evaluatedTogether.incrementAndGet()
      val ms = (System.nanoTime() - started) / 1000000L
      ds.map { d =>
        val (_, failing, n) = counted(d.name)
        CheckRun(d.name, d.severity, if (n == 0) CheckRun.Pass else CheckRun.Fail, n, sample(failing, keys, n), None, ms)
      }
    } catch { case NonFatal(_) => Nil }
  }

  /**
   * Refuses a definition that does not parse, names a table `image` does not have, or (a predicate) is not a
   * boolean over its table's columns: CHECK_INVALID, with Spark's reason.
   */
  def validate(spark: SparkSession, engine: Engine, repo: String, image: Option[Image], d: CheckDef): Unit = {
    def invalid(why: String) = new CheckInvalidException(s"Check '${d.name}' of '$repo' cannot be added: $why. " +
      "Nothing was changed.")
    val at = image.getOrElse(throw invalid("the repository has no commit on its default branch, so the tables the " +
      "check names cannot be verified; add the check after the first write"))
    d.table.foreach(t => if (engine.tableOption(repo, at.hash, t).isEmpty)
      throw invalid(s"table '$t' does not exist at ${at.shortHash}"))
    try {
      d.table.foreach { table =>
        val t = read(spark, engine, repo, at, table).select(expr(d.expression)).schema.head.dataType
        if (t != BooleanType) throw invalid(s"the predicate is of type ${t.simpleString}, not boolean")
      }
      withFailing(spark, engine, repo, at, d)((failing, _) => failing.schema)
    } catch {
      // the reason is the first line of Spark's message (a ParseException's starts with an empty line)
      case a: AnalysisException => throw invalid(Option(a.getMessage).getOrElse("").linesIterator.map(_.trim)
        .find(_.nonEmpty).getOrElse(a.getClass.getSimpleName).take(500))
    }
  }

  /**
   * The failing rows of `d` at `image`, and the columns that identify them (key columns, else every column). With
   * `incremental`, a row-local predicate is evaluated on the rows the image changed since its first parent only,
   * when the check (as defined now) passed on that parent ([[changedRows]]).
   */
  private def withFailing[T](spark: SparkSession, engine: Engine, repo: String, image: Image, d: CheckDef,
                             incremental: Boolean = false)(f: (DataFrame, Seq[String]) => T): T = d.table match {
    case Some(t) =>
      val df = read(spark, engine, repo, image, t)
      val version = engine.table(repo, image, t)
      val rows = if (incremental && decidedByChanges(engine, repo, image, d, t, version, df)) {
        changedOnly.incrementAndGet(); changedRows(spark, engine, repo, image, t, version, df)
      } else df
      f(rows.where(not(coalesce(expr(d.expression), lit(false)))), keysOf(version, df))
    case None =>
      val tables = engine.tables(repo, image.hash).map(_.name).filter(n => mentions(d.expression, n))
      val tag = java.util.UUID.randomUUID().toString.replace("-", "").take(12)
      val views = tables.map(t => t -> s"versioned_check_${tag}_$t")
      views.foreach { case (t, v) => read(spark, engine, repo, image, t).createOrReplaceTempView(v) }
      try {
        val query = d.expression.trim.stripSuffix(";")
        val ctes = if (views.isEmpty) "" else views.map { case (t, v) => s"`$t` AS (SELECT * FROM `$v`)" }.mkString("WITH ", ", ", " ")
        val failing = spark.sql(s"${ctes}SELECT * FROM ($query) AS versioned_check_rows")
        f(failing, failing.columns.toSeq)
      } finally views.foreach { case (_, v) => spark.catalog.dropTempView(v) }
  }

  /** Evaluations of several predicates of one table together, in one job per set of rows (for tests). */
  private[versioned] val evaluatedTogether = new AtomicLong()

  /** Predicate evaluations that read only the rows changed since a parent the check passed on (for tests). */
  private[versioned] val changedOnly = new AtomicLong()

  /** The columns that identify a failing row: the key, else every column. */
  private def keysOf(version: TableVersion, df: DataFrame): Seq[String] =
    if (version.hiddenKey || version.primaryKey.isEmpty) df.columns.toSeq else version.primaryKey

  /**
   * Whether predicate `d` evaluated on the rows `image` changed in `table` since its first parent alone decides the
   * check: the predicate is row-local (deterministic, no subquery), the table has the same schema and key in the
   * parent, and the check as defined now passed on the parent (so every row left as it was passes).
   */
  private def decidedByChanges(engine: Engine, repo: String, image: Image, d: CheckDef, table: String,
                               version: TableVersion, whole: DataFrame): Boolean = (for {
    parent <- image.parents.headOption
    before <- engine.tableOption(repo, parent, table)
    if before.schemaJson == version.schemaJson && before.primaryKey == version.primaryKey && before.hiddenKey == version.hiddenKey
    if whole.select(expr(d.expression)).queryExecution.analyzed.expressions
      .forall(e => e.deterministic && !e.exists(_.isInstanceOf[SubqueryExpression]))
    if engine.checks.passedOn(repo, d.name, parent)
  } yield ()).isDefined

  /**
   * The rows of `table` that `image` inserted or updated since its first parent, in the table's columns (the diff
   * costs what changed, docs/DIFF.md); only where [[decidedByChanges]] holds.
   */
  private def changedRows(spark: SparkSession, engine: Engine, repo: String, image: Image, table: String,
                          version: TableVersion, whole: DataFrame): DataFrame = {
    val parent = engine.image(repo, image.parents.head)
    val diff = TableDiff.diff(spark, Warehouses.locationOf(engine.config), s"$repo.$table", parent, image)
    val keyed = !version.hiddenKey && version.primaryKey.nonEmpty
    diff.where(col(TableDiff.ChangeColumn).isin("insert", "update")).select(whole.columns.toSeq.map { n =>
      if (!keyed || version.primaryKey.contains(n)) col(n) else col(s"${n}_after").as(n)
    }: _*)
  }

  private def mentions(sql: String, table: String): Boolean =
    ("(?i)(?<![A-Za-z0-9_])" + java.util.regex.Pattern.quote(table) + "(?![A-Za-z0-9_])").r.findFirstIn(sql).isDefined

  private def read(spark: SparkSession, engine: Engine, repo: String, image: Image, table: String): DataFrame =
    spark.read.format("versioned").options(Warehouses.locationOf(engine.config)).option("ref", image.hash)
      .load(s"$repo.$table")
}
