package versioned.spark.catalog.procedures

import java.util.UUID
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.{DataTypes, StructType}

/**
 * `transaction_read(token, table)`: `table` as the transaction sees it (its start version with the
 * transaction's own changes), as a temporary view of the session pinned to that version. One row: `view`,
 * the view's generated name (`SELECT * FROM <view>`); the view reads the stored objects when queried and
 * lives as long as the session (or until dropped), also after the transaction ended.
 */
private[procedures] final class TransactionReadProcedure extends TransactionProcedure {
  override def name(): String = "transaction_read"
  override def description(): String = "A table as a transaction sees it, as a temporary view."
  override protected val params: Seq[Param] = Seq(TransactionProcedure.Token, TransactionProcedure.Table)
  override protected def outputType: StructType = new StructType().add("view", DataTypes.StringType, nullable = false)
  override protected def run(spark: SparkSession, e: versioned.core.Engine, a: Args): DataFrame = {
    val df = withTransaction(spark, a)(_.read(a("table")))
    val view = s"versioned_tx_read_${UUID.randomUUID().toString.replace("-", "")}"
    df.createOrReplaceTempView(view)
    row(spark, view)
  }
}
