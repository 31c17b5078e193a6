package versioned.spark.api

import scala.jdk.CollectionConverters._
import org.apache.spark.sql.{DataFrame, SparkSession}
import versioned.spark.tx.Transaction

/** Multi-table transactions for Java and Python callers (docs/TRANSACTIONS.md); Scala code may use [[Transaction]]. */
object TransactionApi {
  /**
   * Opens a transaction on `branch` of `repo` (null: the default branch); null `message` and `author`
   * take their defaults (a summary of the operations; `spark.versioned.author`, else the JVM user).
   */
  def begin(spark: SparkSession, options: java.util.Map[String, String], repo: String, branch: String,
            message: String, author: String): TransactionHandle =
    new TransactionHandle(Transaction.begin(spark, repo, branch, message, author, ApiSupport.options(options)))
}

/**
 * A [[Transaction]] with Java-friendly signatures: null arguments take their defaults and the commit
 * comes back as an image hash (null: nothing to commit).
 *
 * {{{
 *   TransactionHandle tx = VersionedApi.beginTransaction(spark, null, "sales", "main", "nightly load", null);
 *   try {
 *     tx.write(orders, "orders", "overwrite", null);
 *     tx.upsert(customers, "customers", null, null);
 *     tx.deleteWhere("events", "day < '2026-01-01'");
 *     tx.commit();
 *   } finally { tx.close(); }
 * }}}
 */
final class TransactionHandle(val transaction: Transaction) extends AutoCloseable {
  /** `mode`: append (null) or overwrite; `primaryKey`: comma-separated, null for the table's key. */
  def write(df: DataFrame, table: String, mode: String, primaryKey: String): Unit =
    transaction.write(df, table, Option(mode).getOrElse("append"), primaryKey)
  def upsert(df: DataFrame, table: String, primaryKey: String, deleteColumn: String): Unit =
    transaction.upsert(df, table, primaryKey, deleteColumn)
  def deleteWhere(table: String, condition: String): Long = transaction.deleteWhere(table, condition)
  def read(table: String): DataFrame = transaction.read(table)
  /** The image committed, or null when nothing changed. */
  def commit(): String = transaction.commit().map(_.image.hash).orNull
  def abort(): Unit = transaction.abort()
  override def close(): Unit = transaction.close()
  def isOpen: Boolean = transaction.isOpen
  def branch: String = transaction.branch
  /** The head the transaction started from, or null for a branch its commit creates. */
  def base: String = transaction.base.orNull
  def changedTables: java.util.List[String] = transaction.changedTables.asJava
  /** The image the commit recorded, or null (not committed, or nothing changed). */
  def committed: String = transaction.committed.map(_.image.hash).orNull
}
