package versioned.spark.write

import java.nio.file.Files
import java.nio.file.attribute.PosixFilePermissions
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{LocalFileSystem, Path}
import org.apache.hadoop.fs.permission.FsPermission
import org.scalatest.funsuite.AnyFunSuite

/** Object writers' local file system: Hadoop's permissions and checksum files, set without a process. */
class LocalObjectFileSystemSuite extends AnyFunSuite {
  private def perms(p: java.nio.file.Path) = PosixFilePermissions.toString(Files.getPosixFilePermissions(p))

  test("files and directories get the permissions Hadoop's local file system gives them, with checksum files") {
    val root = Files.createTempDirectory("lofs")
    val conf = new Configuration()
    LocalObjectFileSystem.configure(conf)
    val ours = new Path(root.toUri.toString).getFileSystem(conf)
    assert(ours.isInstanceOf[LocalObjectFileSystem])
    val hadoops = new LocalFileSystem()
    hadoops.initialize(root.toUri, new Configuration())
    for ((fs, name) <- Seq(ours -> "ours", hadoops -> "hadoop")) {
      val dir = new Path(root.toUri.toString + s"/$name/a/b")
      assert(fs.mkdirs(dir))
      val out = fs.create(new Path(dir, "f.parquet"), false)
      out.write(Array[Byte](1, 2, 3)); out.close()
      val in = fs.open(new Path(dir, "f.parquet")); assert(in.read() == 1); in.close()
      fs.setPermission(new Path(dir, "f.parquet"), new FsPermission("640"))
    }
    for (rel <- Seq("a", "a/b", "a/b/f.parquet", "a/b/.f.parquet.crc"))
      assert(perms(root.resolve(s"ours/$rel")) == perms(root.resolve(s"hadoop/$rel")), rel)
    assert(perms(root.resolve("ours/a/b/f.parquet")) == "rw-r-----")
  }

  test("a session's own fs.file.impl is kept") {
    val conf = new Configuration()
    conf.set("fs.file.impl", classOf[LocalFileSystem].getName)
    LocalObjectFileSystem.configure(conf)
    assert(conf.get("fs.file.impl") == classOf[LocalFileSystem].getName)
  }
}
