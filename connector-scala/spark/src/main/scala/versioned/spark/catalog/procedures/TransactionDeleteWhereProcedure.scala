package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.{DataTypes, StructType}

/**
 * `transaction_delete_where(token, table, condition)`: deletes the rows of `table` (as the transaction sees
 * it) matching a SQL condition, in the transaction. One row: `deleted`.
 */
private[procedures] final class TransactionDeleteWhereProcedure extends TransactionProcedure {
  override def name(): String = "transaction_delete_where"
  override def description(): String = "Deletes the rows matching a SQL condition in a transaction."
  override protected val params: Seq[Param] = Seq(TransactionProcedure.Token, TransactionProcedure.Table,
    Param("condition", required = true, "SQL condition, e.g. 'day < DATE\\'2026-01-01\\''"))
  override protected def outputType: StructType = new StructType().add("deleted", DataTypes.LongType, nullable = false)
  override protected def run(spark: SparkSession, e: versioned.core.Engine, a: Args): DataFrame =
    row(spark, withTransaction(spark, a)(_.deleteWhere(a("table"), a("condition"))))
}
