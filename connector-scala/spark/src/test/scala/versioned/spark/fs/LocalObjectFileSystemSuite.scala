package versioned.spark.fs

import java.nio.file.Files
import java.nio.file.attribute.PosixFilePermissions
import org.apache.hadoop.conf.Configuration
import java.util.EnumSet
import org.apache.hadoop.fs.{CreateFlag, FileContext, LocalFileSystem, Options, Path}
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

  test("FileContext paths (streaming checkpoints): the same permissions and checksum files as Hadoop's LocalFs") {
    val root = Files.createTempDirectory("lofc")
    val conf = new Configuration()
    assert(LocalObjectFileSystem.install(conf))
    val ours = FileContext.getFileContext(root.toUri, conf)
    assert(ours.getDefaultFileSystem.isInstanceOf[LocalObjectFs])
    val hadoops = FileContext.getFileContext(root.toUri, new Configuration())
    assert(!hadoops.getDefaultFileSystem.isInstanceOf[LocalObjectFs])
    for ((fc, name) <- Seq(ours -> "ours", hadoops -> "hadoop")) {
      val dir = new Path(root.toUri.toString + s"/$name/offsets")
      fc.mkdir(dir, FsPermission.getDirDefault, true)
      // as Spark's checkpoint file manager writes a log file: a temporary file, renamed over the final name
      val tmp = new Path(dir, ".7.tmp")
      val out = fc.create(tmp, EnumSet.of(CreateFlag.CREATE))
      out.write("v1\n{}".getBytes("UTF-8")); out.close()
      fc.rename(tmp, new Path(dir, "7"), Options.Rename.OVERWRITE)
      val in = fc.open(new Path(dir, "7")); assert(in.read() == 'v'.toInt); in.close()
    }
    for (rel <- Seq("offsets", "offsets/7", "offsets/.7.crc"))
      assert(perms(root.resolve(s"ours/$rel")) == perms(root.resolve(s"hadoop/$rel")), rel)
    assert(!Files.exists(root.resolve("ours/offsets/.7.tmp")))
  }

  test("install keeps a session's own FileContext implementation and is idempotent") {
    val own = new Configuration()
    own.set("fs.AbstractFileSystem.file.impl", "com.example.MyLocalFs")
    assert(!LocalObjectFileSystem.install(own))
    assert(own.get("fs.AbstractFileSystem.file.impl") == "com.example.MyLocalFs")
    val conf = new Configuration()
    assert(LocalObjectFileSystem.install(conf))
    assert(conf.get("fs.AbstractFileSystem.file.impl") == classOf[LocalObjectFs].getName)
    assert(!LocalObjectFileSystem.install(conf))
  }

  test("link statuses without a readlink process: files, directories, symbolic links, missing paths as Hadoop's") {
    val root = Files.createTempDirectory("lofl")
    Files.write(root.resolve("f"), Array[Byte](1, 2))
    Files.createDirectory(root.resolve("d"))
    Files.createSymbolicLink(root.resolve("l"), root.resolve("f"))
    Files.createSymbolicLink(root.resolve("dangling"), root.resolve("nothing"))
    val ours = new LocalObjectFileSystem.Raw
    val hadoops = new org.apache.hadoop.fs.RawLocalFileSystem
    Seq(ours, hadoops).foreach(_.initialize(root.toUri, new Configuration()))
    def p(name: String) = new Path(root.toUri.toString + name)
    def status(fs: org.apache.hadoop.fs.FileSystem, name: String) = scala.util.Try(fs.getFileLinkStatus(p(name))).map { s =>
      (s.isFile, s.isDirectory, s.isSymlink, s.getLen, if (s.isSymlink) Some(s.getSymlink) else None)
    }.recover { case e: java.io.IOException => e.getClass }.get
    for (name <- Seq("f", "d", "l", "dangling", "missing")) assert(status(ours, name) == status(hadoops, name), name)
    assert(status(ours, "f") == ((true, false, false, 2L, None)))
    assert(status(ours, "d") match { case (false, true, false, _, None) => true; case _ => false })
    assert(status(ours, "missing") == classOf[java.io.FileNotFoundException])
  }
}
