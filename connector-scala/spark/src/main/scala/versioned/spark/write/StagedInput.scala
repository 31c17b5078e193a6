package versioned.spark.write

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructType}

/** The data of a write as the [[CommitPlanner]] receives it: a DataFrame, or (small writes) rows on the driver. */
private[versioned] trait StagedInput {
  def schema: StructType
  /** The rows, in `schema`, when they are on the driver. */
  def localRows: Option[IndexedSeq[InternalRow]]
  def frame: DataFrame
  /** The rows already written as the fragments of a new SNAP by the write tasks ([[SnapshotWrite]]). */
  def snapshot: Option[PrewrittenSnapshot] = None
  /** The rows already compared with the table by the write tasks of a keyed overwrite ([[OverwriteWrite]]). */
  def overwrite: Option[PrewrittenOverwrite] = None
}

private[versioned] object StagedInput {
  def apply(df: DataFrame, rows: Option[IndexedSeq[InternalRow]] = None): StagedInput = new StagedInput {
    override val schema: StructType = df.schema
    override def localRows: Option[IndexedSeq[InternalRow]] = rows
    override def frame: DataFrame = df
  }

  /** Rows of `schema` on the driver (computed changes, such as a small merge's); as a DataFrame, a local relation. */
  def local(schema: StructType, rows: IndexedSeq[InternalRow]): StagedInput = {
    val s = schema
    new StagedInput {
      override val schema: StructType = s
      override def localRows: Option[IndexedSeq[InternalRow]] = Some(rows)
      override lazy val frame: DataFrame = {
        val toRow = org.apache.spark.sql.catalyst.CatalystTypeConverters.createToScalaConverter(schema)
        SparkSession.active.createDataFrame(scala.jdk.CollectionConverters.SeqHasAsJava(
          rows.map(r => toRow(r).asInstanceOf[org.apache.spark.sql.Row])).asJava, schema)
      }
    }
  }

  /** Rows the write tasks wrote as SNAP fragments; as a DataFrame, the objects read back. */
  def prewritten(s: PrewrittenSnapshot): StagedInput = new StagedInput {
    override val schema: StructType = s.layout.physicalSchema
    override def localRows: Option[IndexedSeq[InternalRow]] = None
    override def snapshot: Option[PrewrittenSnapshot] = Some(s)
    override lazy val frame: DataFrame = {
      val spark = SparkSession.active
      if (s.paths.isEmpty) spark.createDataFrame(spark.sparkContext.emptyRDD[org.apache.spark.sql.Row], schema)
      else {
        // tasks that wrote identical rows wrote one object: it is read once per task that wrote it
        val copies = s.paths.groupBy(identity).map { case (p, ps) => p -> ps.size }
        (1 to copies.values.max).map(i => copies.collect { case (p, c) if c >= i => p }.toSeq)
          .map(ps => spark.read.schema(schema).parquet(ps: _*)).reduce(_ union _)
      }
    }
  }
}
