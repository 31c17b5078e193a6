package versioned.spark.read

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import versioned.spark.VersionedTestBase

/**
 * The verifying Hadoop configuration executors open objects with is broadcast once per content: scans reuse
 * it, a change of the session's Hadoop configuration makes a new one (and reads see the change).
 */
class ObjectFilesSuite extends VersionedTestBase {
  test("the verifying configuration's broadcast is reused until the Hadoop configuration changes") {
    val sc = spark.sparkContext
    val a = ObjectFiles.verifyingBroadcast(sc)
    assert(ObjectFiles.verifyingBroadcast(sc) eq a, "same content: the same broadcast")
    assert(a.value.value.getBoolean("parquet.page.verify-checksum.enabled", false), "it verifies page checksums")
    val schema = new StructType().add("id", IntegerType).add("v", StringType)
    write(spark.createDataFrame(sc.parallelize((1 to 100).map(i => Row(i, s"v$i")), 2), schema), "r.t", "primaryKey" -> "id")
    assert(read("r.t").filter("id IN (3, 50, 99)").count() == 3)
    sc.hadoopConfiguration.set("versioned.test.marker", "1")
    try {
      val b = ObjectFiles.verifyingBroadcast(sc)
      assert(!(b eq a) && b.value.value.get("versioned.test.marker") == "1", "a changed configuration is broadcast again")
      assert(read("r.t").count() == 100)
      assert(ObjectFiles.verifyingBroadcast(sc) eq b)
    } finally sc.hadoopConfiguration.unset("versioned.test.marker")
  }

  test("a reader that pushes no filter opens objects with its own configuration, not a copy per object") {
    val conf = spark.sparkContext.hadoopConfiguration
    val unfiltered = ObjectFiles.verifyingUnfiltered(conf)
    assert(unfiltered.getBoolean("parquet.page.verify-checksum.enabled", false), "it verifies page checksums")
    assert(!unfiltered.getBoolean("parquet.hadoop.vectored.io.enabled", true))
    // Spark's Parquet reader opens each object in a Hadoop task context built on the reader's configuration
    def context(c: org.apache.hadoop.conf.Configuration) = new org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl(
      c, new org.apache.hadoop.mapreduce.TaskAttemptID()).getConfiguration
    assert(context(unfiltered) eq unfiltered, "used as it is")
    val filtered = ObjectFiles.verifying(conf)
    assert(!(context(filtered) eq filtered), "a reader that pushes filters sets them into a copy per object")
    // executors get the same properties and values, whichever kind was broadcast
    def properties(c: org.apache.hadoop.conf.Configuration) =
      scala.jdk.CollectionConverters.IteratorHasAsScala(c.iterator()).asScala.map(e => e.getKey -> e.getValue).toMap
    val bytes = new java.io.ByteArrayOutputStream()
    val out = new java.io.ObjectOutputStream(bytes)
    out.writeObject(new org.apache.spark.util.SerializableConfiguration(unfiltered))
    out.close()
    val back = new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(bytes.toByteArray)).readObject()
      .asInstanceOf[org.apache.spark.util.SerializableConfiguration].value
    assert(properties(back) == properties(unfiltered) && properties(unfiltered) == properties(filtered))
  }
}
