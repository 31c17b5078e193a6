package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.spark.tx.{OpenTransactions, Transaction}

/**
 * `begin_transaction(repository, branch => NULL, message => NULL, author => NULL)`: opens a multi-table
 * transaction on `branch` (default: the default branch) held by this driver. One row: the transaction's
 * state, whose `token` names it in the other `transaction_*` procedures and in `commit_transaction` /
 * `abort_transaction`. A transaction no call uses for 10 minutes is aborted.
 */
private[procedures] final class BeginTransactionProcedure(context: ProcedureContext) extends TransactionProcedure {
  override def name(): String = "begin_transaction"
  override def description(): String = "Opens a multi-table transaction; returns its token."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("branch", required = false, "branch; default: the default branch"),
    Param("message", required = false, "commit message; default: a summary of the operations"),
    Param("author", required = false, "commit author"))
  override protected def outputType: StructType = TransactionProcedure.StateType
  override protected def run(spark: SparkSession, e: versioned.core.Engine, a: Args): DataFrame = {
    val tx = Transaction.begin(spark, a("repository"), a.opt("branch").orNull, a.opt("message").orNull,
      a.opt("author").orNull, context.location())
    state(spark, OpenTransactions.register(tx, spark), tx)
  }
}
