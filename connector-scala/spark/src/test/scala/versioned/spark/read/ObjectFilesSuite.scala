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
}
