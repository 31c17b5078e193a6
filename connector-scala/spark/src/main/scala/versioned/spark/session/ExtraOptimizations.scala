package versioned.spark.session

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule

/** The connector's optimizer rules, added to a session's extra optimizations (Spark's public hook) once each. */
private[versioned] object ExtraOptimizations {
  /** Adds `rule` to `session`'s extra optimizations unless it is there; a Connect client session has none. */
  def register(session: SparkSession, rule: Rule[LogicalPlan]): Unit = session match {
    case s: org.apache.spark.sql.classic.SparkSession =>
      val methods = s.experimental
      methods.synchronized {
        if (!methods.extraOptimizations.contains(rule)) methods.extraOptimizations = methods.extraOptimizations :+ rule
      }
    case _ =>
  }
}
