package versioned.spark.write

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BindReferences, Expression, Predicate, UnsafeProjection}
import org.apache.spark.sql.catalyst.optimizer.CollapseProject
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LocalRelation, LogicalPlan, Project}
import org.apache.spark.sql.types.StructType

/**
 * A rule defined once, as DataFrame operations, applied by the driver to rows it holds (small commits, the
 * one-pass overwrite, small merges) without planning a query per use: the rule's plan over an empty relation
 * of the rows' schema is analyzed once, and its projections and filters are bound to the rows. Only rules made
 * of projections and filters can be applied so; any other operation is refused when the rule is bound.
 */
private[versioned] final class LocalRules private (steps: Seq[LocalRules.Step], val schema: StructType) {
  /** The rule's rows for `rows` (in the schema the rule was bound to); the rows returned are copies. */
  def apply(rows: Iterator[InternalRow]): Iterator[InternalRow] = steps.foldLeft(rows)((it, s) => s.run(it))
}

private[versioned] object LocalRules {
  private sealed trait Step { def run(rows: Iterator[InternalRow]): Iterator[InternalRow] }
  private final case class Select(exprs: Seq[Expression]) extends Step {
    def run(rows: Iterator[InternalRow]): Iterator[InternalRow] = {
      val p = UnsafeProjection.create(exprs)
      rows.map(r => p(r).copy())
    }
  }
  private final case class Where(condition: Expression) extends Step {
    def run(rows: Iterator[InternalRow]): Iterator[InternalRow] = {
      val p = Predicate.create(condition)
      p.initialize(0)
      rows.filter(p.eval)
    }
  }

  /** The analyzed plan of `rules` over an empty relation of `schema`. */
  private def analyzed(spark: SparkSession, schema: StructType)(rules: DataFrame => DataFrame): LogicalPlan =
    rules(spark.createDataFrame(java.util.List.of[Row](), schema)).queryExecution.analyzed

  /** `rules` (projections and filters over rows of `schema`), bound; `what` names the rule in errors. */
  def of(spark: SparkSession, schema: StructType, what: String)(rules: DataFrame => DataFrame): LocalRules = {
    def steps(plan: LogicalPlan): Seq[Step] = plan match {
      case Project(list, child) => steps(child) :+ Select(list.map(BindReferences.bindReference(_: Expression, child.output)))
      case Filter(condition, child) => steps(child) :+ Where(BindReferences.bindReference(condition, child.output))
      case _: LocalRelation => Nil
      case other => throw new IllegalStateException(s"$what: only projections and filters can be applied on the driver, " +
        s"got ${other.nodeName}")
    }
    val plan = analyzed(spark, schema)(rules)
    new LocalRules(steps(plan), plan.schema)
  }

  /**
   * The expressions of the one projection `rules` makes of a relation of `schema`, bound to its rows: for callers
   * that evaluate them per row in their own projection (one per writing thread).
   */
  def projection(spark: SparkSession, schema: StructType, what: String)(rules: DataFrame => DataFrame): Seq[Expression] =
    CollapseProject(analyzed(spark, schema)(rules)) match {
      case Project(list, child) => list.map(e => BindReferences.bindReference(e: Expression, child.output))
      case other => throw new IllegalStateException(s"$what: expected one projection, got ${other.nodeName}")
    }
}
