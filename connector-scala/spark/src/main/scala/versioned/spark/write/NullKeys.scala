package versioned.spark.write

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, NonSQLExpression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.catalyst.expressions.objects.AssertNotNull
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, V2WriteCommand, WriteDelta}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.COMMAND
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.types.DataType
import versioned.spark.session.TableHandle

/**
 * A SQL statement that would write a null primary key fails with NULL_PRIMARY_KEY, as DataFrame writes do.
 *
 * Key columns are reported non-nullable (they are row-level operations' row ids), so Spark checks the values an
 * INSERT, UPDATE or MERGE writes to them with its own `AssertNotNull`, whose error is the generic
 * NOT_NULL_ASSERT_VIOLATION. This rule (an extra optimization of the session, [[register]]) replaces those checks,
 * on the key columns of writes to a versioned table, by [[KeyNotNull]]: the same check, raising the product's
 * typed error in the write task, so the write fails before anything is committed. (An INSERT of literal rows,
 * `VALUES (NULL, ...)`, is projected by Spark's optimizer before this rule runs: it keeps Spark's error, and commits
 * nothing either.)
 */
private[versioned] object NullKeys extends Rule[LogicalPlan] {

  /** Adds the rule to the session's extra optimizations, once. Called when a catalog table is loaded. */
  def register(session: SparkSession): Unit = versioned.spark.session.ExtraOptimizations.register(session, this)

  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformDownWithPruning(_.containsPattern(COMMAND)) {
    case w: V2WriteCommand => keyed(w) match {
      case Some((keys, operation)) =>
        val query = w.query.transformAllExpressions {
          case AssertNotNull(child, Seq(column)) if keys.contains(column) => KeyNotNull(child, keys, operation)
        }
        if (query eq w.query) w else w.withNewQuery(query)
      case None => w
    }
  }

  /** The key columns of the versioned table `w` writes, and the statement that writes it. */
  private def keyed(w: V2WriteCommand): Option[(Seq[String], String)] = (w match {
    case d: WriteDelta => d.originalTable // the written relation is the operation's view of it
    case _ => w.table
  }) match {
    case r: DataSourceV2Relation => r.table match {
      case t: TableHandle => t.snapshot.filterNot(_.layout.hidden).map { s =>
        val operation = w match {
          case d: WriteDelta => d.operation.command().toString
          case _ => "INSERT"
        }
        (s.layout.primaryKey, operation)
      }
      case _ => None
    }
    case _ => None
  }
}

/** `child`, a value written to a key column; null raises NULL_PRIMARY_KEY ([[Validation.nullKey]]). */
private[versioned] final case class KeyNotNull(child: Expression, keys: Seq[String], operation: String)
  extends UnaryExpression with NonSQLExpression with CodegenFallback {
  override def dataType: DataType = child.dataType
  override def nullable: Boolean = false
  override def foldable: Boolean = false
  override def eval(input: InternalRow): Any = {
    val v = child.eval(input)
    if (v == null) throw Validation.nullKey(keys, Some(operation))
    v
  }
  override protected def withNewChildInternal(newChild: Expression): KeyNotNull = copy(child = newChild)
}
