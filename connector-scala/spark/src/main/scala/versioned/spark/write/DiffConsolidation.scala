package versioned.spark.write

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.datasources.FileFormat
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.types.StructType
import versioned.core.{ObjectKind, ObjectMeta}
import versioned.spark.TableSnapshot
import versioned.spark.read.{Conflation, ObjectFile, ObjectFiles}

/**
 * Minor compaction: merges a run of a fragment's DIFFs into one conflated DIFF (newest change per
 * key, deletes kept), one executor task per fragment. Only changed rows are rewritten, so chains stay
 * short without copying the SNAP; the merged objects become the new object's parents.
 */
private[versioned] object DiffConsolidation {

  /** @param runs fragment index -> ids of consecutive DIFFs of that fragment, oldest first */
  def write(spark: SparkSession, snap: TableSnapshot, runs: Map[Int, Seq[String]]): Map[Int, ObjectMeta] = {
    val layout = snap.layout
    val schema = layout.diffSchema
    val conf = new org.apache.hadoop.conf.Configuration(spark.sparkContext.hadoopConfiguration)
    val read = new ParquetFileFormat().buildReaderWithPartitionValues(spark, schema, new StructType(), schema, Nil,
      Map(FileFormat.OPTION_RETURNING_BATCH -> "false"), conf)
    val sink = ParquetSink.prepare(spark, schema)
    val config = snap.config
    val keyTypes = layout.keyTypes
    val plans = runs.toSeq.sortBy(_._1).map { case (frag, ids) =>
      frag -> ids.map(id => ObjectFile.of(config, snap.objects(id)))
    }
    val written = spark.sparkContext.parallelize(plans, math.max(1, plans.size)).map { case (frag, files) =>
      val copy = ObjectFiles.identity(schema)
      val sources = files.map(ObjectFiles.load(read, _, copy)).toArray
      val writer = new ObjectWriter(sink, config, ObjectKind.Diff)
      try Conflation(sources, keyTypes).foreach(writer.write)
      catch { case e: Throwable => writer.abort(); throw e }
      frag -> writer.close()
    }.collect()
    written.map { case (frag, meta) => frag -> meta.copy(parents = runs(frag)) }.toMap
  }
}
