package versioned.core

import java.nio.file.Files
import org.apache.hadoop.conf.Configuration

/**
 * An `s3a://` warehouse or remote in a JVM without hadoop-aws (the test classpath has only the jars pip's
 * pyspark ships, like a fresh install): OBJECT_STORE_UNSUPPORTED naming the helper, never Hadoop's raw
 * ClassNotFoundException, and nothing is recorded anywhere.
 */
class ObjectStoresSuite extends CoreFixture {
  private val conf = new Configuration()

  private def requireHelpful(e: ObjectStoreUnsupportedException, uri: String): Unit = {
    assert(e.getMessage.contains("'s3a://'") && e.getMessage.contains(uri), e.getMessage)
    assert(e.getMessage.contains("bin/install-s3a-jars") && e.getMessage.contains("s3a=True"), e.getMessage)
    assert(e.getSqlState == "0A000")
  }

  test("local objects are read without Hadoop's .crc side files (their own checksums are verified instead)") {
    val file = dir.resolve("object.parquet")
    val path = new org.apache.hadoop.fs.Path(file.toUri)
    val local = ObjectStores.fileSystem(path, conf)
    val out = local.create(path) // through Hadoop's local file system: a side file is written
    try out.write("written".getBytes) finally out.close()
    assert(Files.exists(dir.resolve(".object.parquet.crc")))
    Files.write(file, "changed".getBytes) // the side file no longer matches
    intercept[org.apache.hadoop.fs.ChecksumException](local.open(path).readFully(0L, new Array[Byte](7)))
    val reads = ObjectStores.objectReads(path, conf)
    val bytes = new Array[Byte](7)
    val in = reads.open(path)
    try in.readFully(0L, bytes) finally in.close()
    assert(new String(bytes) == "changed")
  }

  test("the s3a file system classes are not on this classpath (the premise of this suite)") {
    assert(scala.util.Try(Class.forName("org.apache.hadoop.fs.s3a.S3AFileSystem")).isFailure)
  }

  test("a warehouse on s3a:// without the s3a jars is OBJECT_STORE_UNSUPPORTED and creates no metastore") {
    val meta = Files.createTempDirectory("versioned-s3a-meta")
    try {
      val config = WarehouseConfig("s3a://bucket/wh", s"jdbc:sqlite:$meta/metastore.db")
      val e = expectError[ObjectStoreUnsupportedException](ErrorClass.ObjectStoreUnsupported)(Engine(config, conf).close())
      requireHelpful(e, "s3a://bucket/wh")
      assert(Option(meta.toFile.list()).forall(_.isEmpty), "nothing was created for the metastore")
    } finally deleteRecursively(meta)
  }

  test("clone and fetch from an s3a:// remote without the s3a jars are OBJECT_STORE_UNSUPPORTED; nothing changes") {
    val connect = (r: Remote, create: Boolean) => Remotes.open(r, RemoteCredentials.None, conf, create, engine)
    val sync = new Sync(engine, connect, new SequentialMover(conf))
    val s3 = Remote.of("origin", "s3a://bucket/wh", "jdbc:postgresql://meta.invalid/versioned", "r")
    val e = expectError[ObjectStoreUnsupportedException](ErrorClass.ObjectStoreUnsupported)(
      sync.cloneRepository(s3, "copy", download = false))
    requireHelpful(e, "s3a://bucket/wh")
    assert(!engine.repositoryExists("copy"))

    val head = commitOn("local", "main", putFresh("t")).image.hash
    engine.remotes.add("local", s3)
    expectError[ObjectStoreUnsupportedException](ErrorClass.ObjectStoreUnsupported)(sync.fetch("local", "origin", download = false))
    expectError[ObjectStoreUnsupportedException](ErrorClass.ObjectStoreUnsupported)(
      sync.push("local", "origin", "main", force = false, tags = true))
    assert(engine.branchHeadOption("local", "main").map(_.hash).contains(head))
    assert(engine.refs.all("local").forall(_.kind != RefKind.Remote), "no remote-tracking ref was created")
  }

  test("copying an object to or from an s3a:// location without the s3a jars is OBJECT_STORE_UNSUPPORTED") {
    val id = fakeId("o")
    val meta = objectMeta(id)
    val copy = ObjectCopy(meta, Seq(s"s3a://bucket/wh/${ObjectMeta.relativePath(id)}"), dir.resolve("copy").toString,
      dir.resolve("staging").toString)
    expectError[ObjectStoreUnsupportedException](ErrorClass.ObjectStoreUnsupported)(ObjectTransfer.copy(conf, copy))
    assert(!Files.exists(dir.resolve("copy")) && !Files.exists(dir.resolve("staging")))
  }
}
