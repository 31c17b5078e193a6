package versioned.core

import java.nio.file.{Files, Path}
import java.util.concurrent.atomic.AtomicInteger

import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

/**
 * Shared fixture of the core suites: a fresh embedded warehouse (SQLite metastore in a temp
 * directory) per test, deleted afterwards, plus helpers that fabricate table versions and objects.
 * The core never opens data files, so object ids are fake 64-hex strings.
 */
trait CoreFixture extends AnyFunSuite with BeforeAndAfterEach {
  private var _dir: Path = _
  private var _engine: Engine = _
  private val counter = new AtomicInteger()

  def dir: Path = _dir
  def engine: Engine = _engine

  private var _database: Option[String] = None

  override protected def beforeEach(): Unit = {
    _dir = Files.createTempDirectory("versioned-core-test")
    _engine = TestMetastores.postgresAdminUrl match {
      case None => new Engine(WarehouseConfig.embedded(_dir.toString))
      case Some(admin) =>
        val (db, url) = TestMetastores.createDatabase(admin)
        _database = Some(db)
        new Engine(WarehouseConfig(_dir.toString, url))
    }
    super.beforeEach()
  }

  override protected def afterEach(): Unit = {
    try super.afterEach()
    finally {
      if (_engine != null) _engine.close()
      _engine = null
      deleteRecursively(_dir)
      for (admin <- TestMetastores.postgresAdminUrl; db <- _database) TestMetastores.dropDatabase(admin, db)
      _database = None
    }
  }

  protected def deleteRecursively(p: Path): Unit = if (p != null && Files.exists(p)) {
    val s = Files.walk(p)
    try s.sorted(java.util.Comparator.reverseOrder[Path]()).forEach(f => Files.deleteIfExists(f))
    finally s.close()
  }

  // ---- fabricated data

  /** A deterministic fake object id (64 lowercase hex chars). */
  def fakeId(seed: String): String = Hashing.sha256Hex("object", seed)

  /** A unique fake object id. */
  def freshId(): String = fakeId(s"fresh-${counter.incrementAndGet()}-${System.nanoTime()}")

  /** Metadata of a fake object; its file is created under the warehouse (commits check that new objects are stored). */
  def objectMeta(id: String, rows: Long = 10): ObjectMeta = {
    val f = dir.resolve(ObjectMeta.relativePath(id))
    Files.createDirectories(f.getParent)
    if (!Files.exists(f)) Files.write(f, id.getBytes("UTF-8"))
    ObjectMeta(id, ObjectKind.Snap, Seq.empty, rows, rows * 100, "parquet",
      Map("id" -> 1), Map("id" -> rows), Map("id" -> 0L))
  }

  val schemaJson: String = """{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]}"""

  def tableVersion(name: String, objectIds: Seq[String], schema: String = schemaJson): TableVersion =
    TableVersion(name, schema, Seq("id"), hiddenKey = false, Seq(Fragment(None, objectIds)))

  /** A Put of a table made of the objects with the given ids (their metadata is registered too). */
  def put(name: String, objectIds: String*): (String, TableUpdate) =
    name -> TableUpdate.Put(tableVersion(name, objectIds), objectIds.map(objectMeta(_)))

  /** A Put of a table with one fresh object: always a change. */
  def putFresh(name: String): (String, TableUpdate) = put(name, freshId())

  // ---- engine shortcuts

  def head(repo: String, branch: String = "main"): Option[String] = engine.branchHeadOption(repo, branch).map(_.hash)

  /** Commits on the current head of `branch` (creating repo and branch when absent). */
  def commitOn(repo: String, branch: String, updates: (String, TableUpdate)*): CommitResult =
    engine.commit(repo, branch, head(repo, branch), updates.toMap, "tester", "msg")

  def commitMsg(repo: String, branch: String, message: String, updates: (String, TableUpdate)*): CommitResult =
    engine.commit(repo, branch, head(repo, branch), updates.toMap, "tester", message)

  /** `n` commits on `branch`, each changing table `t`; returns them oldest first. */
  def commitMany(repo: String, branch: String, n: Int): Seq[CommitResult] =
    (1 to n).map(i => commitMsg(repo, branch, s"commit $i", putFresh("t")))

  def spec(s: String): Revision = Revision.Spec(s)

  def logHashes(repo: String, from: Revision = Revision.DefaultBranch): Seq[String] =
    engine.history.log(repo, from).map(_.image.hash)

  /** Asserts `f` throws exactly a `T` with the given error class, and returns it. */
  def expectError[T <: VersionedException](errorClass: String)(f: => Any)(implicit ct: scala.reflect.ClassTag[T]): T = {
    val e = intercept[T](f)
    assert(e.errorClass == errorClass, s"unexpected error class in: ${e.getMessage}")
    assert(e.getErrorClass == errorClass)
    assert(e.getMessage.startsWith(s"[$errorClass] "), e.getMessage)
    e
  }
}
