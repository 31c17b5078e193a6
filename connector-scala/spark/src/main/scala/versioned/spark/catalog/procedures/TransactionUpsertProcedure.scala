package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType

/**
 * `transaction_upsert(token, table, view, primary_key => NULL, delete_column => NULL)`: upserts the rows of
 * table or view `view` into `table` in the transaction, as `Transaction.upsert`. One row: the transaction's
 * state.
 */
private[procedures] final class TransactionUpsertProcedure extends TransactionProcedure {
  override def name(): String = "transaction_upsert"
  override def description(): String = "Upserts a view's rows into a table in a transaction."
  override protected val params: Seq[Param] = Seq(TransactionProcedure.Token, TransactionProcedure.Table,
    TransactionProcedure.View,
    TransactionProcedure.PrimaryKey,
    Param("delete_column", required = false, "boolean column whose true rows delete their key"))
  override protected def outputType: StructType = TransactionProcedure.StateType
  override protected def run(spark: SparkSession, e: versioned.core.Engine, a: Args): DataFrame = {
    withTransaction(spark, a) { tx =>
      tx.upsert(rows(spark, a), a("table"), a.opt("primary_key").orNull, a.opt("delete_column").orNull)
      state(spark, a("token"), tx)
    }
  }
}
