package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType

/**
 * `transaction_write(token, table, view, mode => 'append', primary_key => NULL)`: writes the rows of table or
 * view `view` to `table` in the transaction, as `Transaction.write` (mode append or overwrite; `primary_key`,
 * comma-separated, when the transaction creates the table). One row: the transaction's state.
 */
private[procedures] final class TransactionWriteProcedure extends TransactionProcedure {
  override def name(): String = "transaction_write"
  override def description(): String = "Writes a view's rows to a table in a transaction."
  override protected val params: Seq[Param] = Seq(TransactionProcedure.Token, TransactionProcedure.Table,
    TransactionProcedure.View,
    Param("mode", required = false, "append | overwrite; default append"),
    TransactionProcedure.PrimaryKey)
  override protected def outputType: StructType = TransactionProcedure.StateType
  override protected def run(spark: SparkSession, e: versioned.core.Engine, a: Args): DataFrame = {
    withTransaction(spark, a) { tx =>
      tx.write(rows(spark, a), a("table"), a.opt("mode").getOrElse("append"), a.opt("primary_key").orNull)
      state(spark, a("token"), tx)
    }
  }
}
