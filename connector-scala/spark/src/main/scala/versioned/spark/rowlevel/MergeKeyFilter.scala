package versioned.spark.rowlevel

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Alias, And, Attribute, AttributeSet, DynamicPruningExpression, EqualTo, ExprId, Expression, KnownNotNull, InSubquery, IsNotNull, ListQuery, PredicateHelper}
import org.apache.spark.sql.catalyst.plans.LeftSemi
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Filter, Join, LogicalPlan, Project, WriteDelta}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.COMMAND
import org.apache.spark.sql.connector.write.RowLevelOperation
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2Relation, DataSourceV2ScanRelation}

/**
 * The runtime key filter of a MERGE into a keyed table, computed from the source alone.
 *
 * Spark gives a row-level operation's main scan a runtime filter: the row ids of the target rows that match
 * the operation's condition (`RowLevelOperationRuntimeGroupFiltering`). For a MERGE it computes them as
 * `target LEFT SEMI JOIN source`, which reads the whole key column of the target to find a few keys.
 *
 * When the ON condition equates every target column that join needs (the key columns) with an expression
 * of the source, every matching target row has a key the source produces. This rule replaces the semi join
 * by those source expressions (rows of the source that pass the ON condition's source-only conjuncts, keys
 * not null). The result is a superset of the matching keys, which is all a runtime filter needs: the main
 * plan still joins the rows it reads with the source on the full condition, so it gives the same result with
 * any filter between the matching keys and the whole table. Keys that only the source has (inserts) are
 * looked up and not found.
 *
 * The rule runs after Spark's own (in the optimizer's batch of user rules; [[register]]) and changes only
 * the subquery of the runtime filter on the target scan of a MERGE into a versioned keyed table. Any other
 * shape (a condition comparing target columns other than by equality with the source, a group filter Spark
 * did not build) is left as Spark planned it.
 */
private[versioned] object MergeKeyFilter extends Rule[LogicalPlan] with PredicateHelper {

  /** Adds the rule to the session's extra optimizations, once. Called when a MERGE is planned. */
  def register(session: SparkSession): Unit = versioned.spark.session.ExtraOptimizations.register(session, this)

  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformDownWithPruning(_.containsPattern(COMMAND)) {
    case wd: WriteDelta if isKeyedMerge(wd) =>
      val target = wd.originalTable match {
        case r: DataSourceV2Relation => Some(r.table)
        case _ => None
      }
      target.fold(wd: LogicalPlan) { t =>
        val query = wd.query.transformUp {
          case f @ Filter(cond, child: DataSourceV2ScanRelation) =>
            f.copy(condition = cond.transformDown {
              case DynamicPruningExpression(in @ InSubquery(_, lq: ListQuery)) =>
                DynamicPruningExpression(in.copy(query = lq.withNewPlan(fromSource(lq.plan, t))))
            })
        }
        if (query eq wd.query) wd else wd.withNewQuery(query)
      }
  }

  private def isKeyedMerge(wd: WriteDelta): Boolean = wd.operation match {
    case op: VersionedDeltaOperation => op.command() == RowLevelOperation.Command.MERGE && op.keyed
    case _ => false
  }

  /**
   * The group filter's plan (the distinct key columns of projections of `target LEFT SEMI JOIN source`) as
   * the source's values of those columns; the plan unchanged if its shape is not that.
   */
  private def fromSource(plan: LogicalPlan, target: AnyRef): LogicalPlan = {
    def rewrite(p: LogicalPlan): Option[LogicalPlan] = p match {
      // Spark's distinct over the join: a runtime filter collects the keys into a set, so a MERGE source (at
      // most one row per matched key) needs no shuffle to remove duplicates first
      case a: Aggregate if a.aggregateExpressions.forall(_.isInstanceOf[Attribute]) =>
        rewrite(a.child).map(c => Project(a.aggregateExpressions, c))
      case pr: Project => rewrite(pr.child).map(c => pr.copy(child = c))
      case j: Join if j.joinType == LeftSemi && j.condition.isDefined && reads(j.left, target) =>
        keysFromSource(j.left.output, j.right, splitConjunctivePredicates(j.condition.get))
      case _ => None
    }
    rewrite(plan).getOrElse(plan)
  }

  private def reads(p: LogicalPlan, table: AnyRef): Boolean =
    p.exists { case s: DataSourceV2ScanRelation => s.relation.table eq table; case _ => false }

  /** `Project(target column = its source expression)` over the source rows that pass the source-only conjuncts. */
  private def keysFromSource(columns: Seq[Attribute], source: LogicalPlan, conjuncts: Seq[Expression]): Option[LogicalPlan] = {
    def fromSourceSide(e: Expression) = e.references.nonEmpty && e.references.subsetOf(source.outputSet)
    val targetColumns = AttributeSet(columns) // by expression id: a column's nullability may differ between uses
    val equal: Map[ExprId, Expression] = conjuncts.collect {
      case EqualTo(a: Attribute, e) if targetColumns.contains(a) && fromSourceSide(e) => a.exprId -> e
      case EqualTo(e, a: Attribute) if targetColumns.contains(a) && fromSourceSide(e) => a.exprId -> e
    }.toMap
    Option.when(columns.nonEmpty && columns.forall(c => equal.contains(c.exprId))) {
      val kept = conjuncts.filter(fromSourceSide) ++ columns.map(c => IsNotNull(equal(c.exprId)))
      // the filter drops null keys (they match nothing), so the columns stay not null as the target's are
      Project(columns.map(c => Alias(KnownNotNull(equal(c.exprId)), c.name)(exprId = c.exprId)),
        Filter(kept.reduce(And), source))
    }
  }
}
