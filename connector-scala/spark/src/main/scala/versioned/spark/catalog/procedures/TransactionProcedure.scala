package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.{ArrayType, DataTypes, StructType}
import versioned.core.Errors
import versioned.spark.tx.{OpenTransactions, Transaction}

/**
 * Base of the transaction procedures (`begin_transaction`, `transaction_write`, ..., docs/TRANSACTIONS.md):
 * the transaction lives in this driver, named by the token `begin_transaction` returned (valid in the
 * session that began it; an unknown or forgotten token is TRANSACTION_CLOSED). Data comes in as the name
 * of a table or view of the session holding the rows (a Spark Connect client passes a temporary view).
 */
private[procedures] abstract class TransactionProcedure extends MaintenanceProcedure(() => null) {
  /** Runs `f` on the transaction a call names (which is not idle meanwhile). */
  protected def withTransaction[T](spark: SparkSession, a: Args)(f: Transaction => T): T =
    OpenTransactions.using(a("token"), spark)(f)

  /** The rows of the table or view argument `view`. */
  protected def rows(spark: SparkSession, a: Args): DataFrame = {
    val view = a("view").trim
    if (view.isEmpty) throw Errors.invalidOption(s"${this.name()}: argument 'view' must name a table or view " +
      "holding the rows (e.g. a temporary view), not an empty string.")
    spark.table(view)
  }

  /** The one-row state of `tx` (schema [[TransactionProcedure.StateType]]). */
  protected def state(spark: SparkSession, token: String, tx: Transaction): DataFrame =
    spark.createDataFrame(java.util.List.of(org.apache.spark.sql.Row(token, tx.repository, tx.branch, tx.base.orNull,
      tx.isOpen, tx.changedTables, tx.committed.map(_.image.hash).orNull)), TransactionProcedure.StateType)
}

private[procedures] object TransactionProcedure {
  val Token: Param = Param("token", required = true, "the token begin_transaction returned")
  val Table: Param = Param("table", required = true, "table of the transaction's repository")
  val View: Param = Param("view", required = true, "table or view holding the rows")
  val PrimaryKey: Param = Param("primary_key", required = false, "comma-separated key columns, for a table the transaction creates")
  /** token, repository, branch, base (null: the commit creates the branch), open, changed_tables, commit (null: none). */
  val StateType: StructType = new StructType().add("token", DataTypes.StringType, nullable = false)
    .add("repository", DataTypes.StringType, nullable = false).add("branch", DataTypes.StringType, nullable = false)
    .add("base", DataTypes.StringType, nullable = true).add("open", DataTypes.BooleanType, nullable = false)
    .add("changed_tables", ArrayType(DataTypes.StringType, containsNull = false), nullable = false)
    .add("commit", DataTypes.StringType, nullable = true)
}
