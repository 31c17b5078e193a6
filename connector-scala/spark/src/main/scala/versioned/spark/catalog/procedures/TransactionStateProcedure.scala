package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType

/**
 * `transaction_state(token)`, `commit_transaction(token)`, `abort_transaction(token)`: one row, the
 * transaction's state (after committing or aborting it). `commit_transaction` records every table the
 * transaction changed as one image (`commit`: its hash; null when nothing changed) or raises (REF_CONFLICT,
 * ...) and commits nothing; either way the transaction has ended. Ending an ended transaction is
 * TRANSACTION_CLOSED.
 */
private[procedures] final class TransactionStateProcedure(action: String) extends TransactionProcedure {
  override def name(): String = action match {
    case "commit" => "commit_transaction"
    case "abort" => "abort_transaction"
    case _ => "transaction_state"
  }
  override def description(): String = action match {
    case "commit" => "Commits a transaction as one image."
    case "abort" => "Aborts a transaction: nothing is committed."
    case _ => "The state of a transaction."
  }
  override protected val params: Seq[Param] = Seq(TransactionProcedure.Token)
  override protected def outputType: StructType = TransactionProcedure.StateType
  override protected def run(spark: SparkSession, e: versioned.core.Engine, a: Args): DataFrame = {
    withTransaction(spark, a) { tx =>
      action match {
        case "commit" => tx.commit()
        case "abort" => tx.abort()
        case _ =>
      }
      state(spark, a("token"), tx)
    }
  }
}
