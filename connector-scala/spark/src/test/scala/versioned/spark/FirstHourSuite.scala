package versioned.spark

import versioned.spark.session.{VersionedOptions, Warehouses}

import java.nio.file.Files
import org.apache.spark.sql.Row
import versioned.core.ErrorClass

/**
 * What a new user ran into (issue 31): reads that created warehouses, an empty warehouse option, relative
 * warehouse paths, and one bad setting breaking calls that never use it.
 */
class FirstHourSuite extends VersionedTestBase {
  private def data = spark.createDataFrame(Seq((1L, "a"), (2L, "b"))).toDF("id", "v")

  test("a read of a warehouse that does not exist creates nothing and says the repository is missing") {
    val dir = Files.createTempDirectory("versioned-absent").toFile
    val wh = new java.io.File(dir, "wh")
    expectError(ErrorClass.RepositoryNotFound, "'r'")(read("r.t", "warehouse" -> wh.getAbsolutePath).collect())
    expectError(ErrorClass.RepositoryNotFound)(read("r.t", "warehouse" -> dir.getAbsolutePath).collect())
    assert(!wh.exists(), "the read created the warehouse directory")
    assert(Option(dir.list()).toSeq.flatten.isEmpty, s"the read created ${dir.list().mkString(", ")}")
  }

  test("an empty warehouse option is an error, not the default directory") {
    expectError(ErrorClass.InvalidOption, "'warehouse' is empty")(read("r.t", "warehouse" -> "").collect())
    expectError(ErrorClass.InvalidOption, "'warehouse' is empty")(
      data.write.format("versioned").mode("append").option("warehouse", " ").option("primaryKey", "id").save("r.t"))
    assert(!new java.io.File(VersionedOptions.DefaultWarehouse).exists())
  }

  test("a relative warehouse is made absolute once, on the driver") {
    val cwd = new java.io.File("").getAbsolutePath
    assert(Warehouses.absolute("wh") == s"$cwd/wh")
    assert(Warehouses.absolute("file:wh") == s"$cwd/wh")
    assert(Warehouses.absolute("file:///tmp/wh") == "file:///tmp/wh")
    assert(Warehouses.absolute("/tmp/wh") == "/tmp/wh")
    assert(Warehouses.absolute("s3a://bucket/wh") == "s3a://bucket/wh")
    assert(Warehouses.config(spark, Map("warehouse" -> "rel-wh")).warehouse == s"$cwd/rel-wh")
  }

  test("a bad setting fails the write that uses it, typed, and leaves metadata calls working") {
    write(data, "r.t", "primaryKey" -> "id")
    withConf(VersionedOptions.ConfFragmentRows -> "0") {
      assert(api.RefsApi.branches(spark, null, "r").count() == 1)
      assert(read("r.t").count() == 2)
      expectError(ErrorClass.InvalidOption, VersionedOptions.ConfFragmentRows, "'0'")(
        data.write.format("versioned").mode("overwrite").option("primaryKey", "v").save("r.t"))
    }
    assert(logSize("r") == 1)
    assert(sortedRows(read("r.t")) == Seq(Row(1L, "a"), Row(2L, "b")))
  }

  test("bad inputs that were accepted or untyped: a control character in a ref, an empty deleteColumn, a scheme typo, a JDBC URL without a driver") {
    write(data, "r.t", "primaryKey" -> "id")
    expectError(ErrorClass.InvalidRevision, "control character")(read("r.t", "ref" -> "main\u0000").collect())
    expectError(ErrorClass.InvalidOption, "'deleteColumn' is empty")(
      data.write.format("versioned").mode("append").option("deleteColumn", "").save("r.t"))
    assert(logSize("r") == 1)
    expectError(ErrorClass.ObjectStoreUnsupported, "fiel")(read("r.t", "warehouse" -> "fiel:///tmp/versioned-typo").collect())
    expectError(ErrorClass.InvalidOption, "No JDBC driver")(
      read("r.t", "metastoreUrl" -> "jdbc:nosuchdb://localhost/x").collect())
    assert(sortedRows(read("r.t")) == Seq(Row(1L, "a"), Row(2L, "b")))
  }

  test("a write that changes nothing makes no commit (git's nothing to commit), unless allowEmpty asks for one") {
    write(data, "r.t", "primaryKey" -> "id")
    val head = headHash("r")
    overwrite(data, "r.t")
    assert(headHash("r") == head && logSize("r") == 1, "an overwrite with identical rows made a commit")
    overwrite(data, "r.t", "allowEmpty" -> "true", "message" -> "checkpoint")
    assert(logSize("r") == 2 && engine.history.log("r", versioned.core.Revision.DefaultBranch).head.image.message == "checkpoint")
    expectError(ErrorClass.InvalidOption, "allowEmpty")(overwrite(data, "r.t", "allowEmpty" -> "maybe"))
    assert(sortedRows(read("r.t")) == Seq(Row(1L, "a"), Row(2L, "b")))
  }

  test("an upsert or a delete by key that changes nothing makes no commit") {
    write(data, "r.t", "primaryKey" -> "id")
    val head = headHash("r")
    write(data, "r.t", "upsert" -> "true")
    assert(headHash("r") == head && logSize("r") == 1, "an upsert of identical rows made a commit")
    val deletes = spark.createDataFrame(Seq((9L, "z", true), (1L, "a", false))).toDF("id", "v", "gone")
    write(deletes, "r.t", "deleteColumn" -> "gone")
    assert(headHash("r") == head, "a delete of an absent key (and an unchanged upsert) made a commit")
    // one changed row among identical ones: a commit
    write(spark.createDataFrame(Seq((1L, "a"), (2L, "B"))).toDF("id", "v"), "r.t", "upsert" -> "true")
    assert(logSize("r") == 2)
    write(spark.createDataFrame(Seq((1L, "a"), (2L, "b"))).toDF("id", "v"), "r.t", "upsert" -> "true")
    val before = headHash("r").get
    write(data, "r.t", "upsert" -> "true", "allowEmpty" -> "true", "message" -> "again")
    assert(logSize("r") == 4, "allowEmpty asked for a commit")
    // a commit made anyway is written blind (no lookup of its keys, as a stream's batch): its diff is still empty
    assert(versioned.spark.api.VersionedApi.diff(spark, null, "r.t", before, headHash("r").get).count() == 0)
    assert(sortedRows(read("r.t")) == Seq(Row(1L, "a"), Row(2L, "b")))
  }

  test("an upsert whose only change is among its last keys commits it; one that changes none of 300 keys does not") {
    val rows = (1L to 300L).map(i => (i, s"v$i"))
    write(spark.createDataFrame(rows).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    val head = headHash("r")
    write(spark.createDataFrame(rows).toDF("id", "v"), "r.t", "upsert" -> "true")
    val deletes = spark.createDataFrame(rows.map { case (i, v) => (i, v, false) } :+ ((999L, "z", true))).toDF("id", "v", "gone")
    write(deletes, "r.t", "deleteColumn" -> "gone")
    assert(headHash("r") == head && logSize("r") == 1, "a write that changes none of its 300 keys made a commit")
    // the keys are looked up in growing chunks (1, 16, 256, then the rest): a change in the last chunk still counts
    write(spark.createDataFrame(rows.init :+ ((300L, "changed"))).toDF("id", "v"), "r.t", "upsert" -> "true")
    assert(logSize("r") == 2, "the change of the last key was not committed")
    val current = rows.init :+ ((300L, "changed"))
    write(spark.createDataFrame(current.map { case (i, v) => (i, v, i == 200L) }).toDF("id", "v", "gone"), "r.t",
      "deleteColumn" -> "gone")
    assert(logSize("r") == 3, "the delete of key 200 was not committed")
    assert(read("r.t").collect().map(r => (r.getLong(0), r.getString(1))).sortBy(_._1).toSeq ==
      current.filter(_._1 != 200L))
  }

  test("the default branch is read and set through the API facade, like the other ref operations") {
    import versioned.spark.api.VersionedApi
    write(data, "r.t", "primaryKey" -> "id")
    val start = VersionedApi.defaultBranch(spark, null, "r")
    val head = VersionedApi.createBranch(spark, null, "r", "trunk", start)
    assert(VersionedApi.setDefaultBranch(spark, null, "r", "trunk") == head)
    assert(VersionedApi.defaultBranch(spark, null, "r") == "trunk" && engine.defaultBranch("r") == "trunk")
    write(spark.createDataFrame(Seq((3L, "c"))).toDF("id", "v"), "r.t")
    assert(logSize("r", "trunk") == 2 && logSize("r", start) == 1, "a write naming no branch went to the new default")
    expectError(ErrorClass.RefNotFound, "'nope'")(VersionedApi.setDefaultBranch(spark, null, "r", "nope"))
    expectError(ErrorClass.RepositoryNotFound)(VersionedApi.defaultBranch(spark, null, "absent"))
    assert(VersionedApi.defaultBranch(spark, null, "r") == "trunk")
  }
}
