package versioned.core

import java.nio.file.Files

import org.scalatest.funsuite.AnyFunSuite

/**
 * The embedded metastore under faults a laptop sees (issue 31): its file deleted while a session has it open,
 * a full disk, a warehouse directory that cannot be created. Each is a typed error; nothing is committed or lost,
 * and the metastore keeps working once the cause is gone.
 */
class MetastoreFaultSuite extends AnyFunSuite {
  private def tempDir() = Files.createTempDirectory("versioned-ms-fault").toFile

  test("a metastore file deleted under a running engine refuses commits instead of writing into the unlinked file") {
    val dir = tempDir()
    val engine = new Engine(WarehouseConfig.embedded(dir.getAbsolutePath))
    try {
      engine.createRepository("r")
      assert(engine.repositories() == Seq("r"))
      assert(new java.io.File(dir, "metastore.db").delete())
      val e = intercept[VersionedException](engine.createRepository("s"))
      assert(e.errorClass == ErrorClass.WarehouseMismatch && e.getMessage.contains("deleted"), e.getMessage)
      assert(!new java.io.File(dir, "metastore.db").exists(), "a new metastore file was created")
    } finally engine.close()
  }

  test("a full disk is a typed storage error, and the metastore keeps working afterwards") {
    val dir = tempDir()
    val file = new java.io.File(dir, "full.db")
    // max_page_count caps the database file, as a full disk does: SQLite fails the statement with SQLITE_FULL
    // (and rolls the transaction back itself)
    val ms = new Metastore(s"jdbc:sqlite:${file.getAbsolutePath}?max_page_count=64").init()
    try {
      ms.tx(c => Sql.update(c, "CREATE TABLE big (v TEXT)"))
      val row = "x" * 2000
      val e = intercept[VersionedException] {
        (1 to 400).foreach(_ => ms.tx(c => Sql.update(c, "INSERT INTO big (v) VALUES (?)", row)))
      }
      assert(e.errorClass == ErrorClass.StorageError && e.getMessage.contains("disk is full"), e.getMessage)
      // the session is not poisoned: reads and transactions that fit still work, on every pooled connection
      (1 to 8).foreach { _ =>
        ms.tx(c => Sql.update(c, "DELETE FROM big WHERE rowid = (SELECT max(rowid) FROM big)"))
        assert(ms.read(c => Sql.query(c, "SELECT count(*) FROM big")(_.getLong(1)).head) >= 0)
      }
      ms.tx(c => Sql.update(c, "INSERT INTO big (v) VALUES (?)", "small"))
    } finally ms.close()
  }

  test("a warehouse whose directory cannot be created is a typed storage error at once, not a pool timeout") {
    val dir = tempDir()
    val blocker = new java.io.File(dir, "file")
    assert(blocker.createNewFile())
    val started = System.nanoTime()
    val e = intercept[VersionedException](new Engine(WarehouseConfig.embedded(new java.io.File(blocker, "wh").getAbsolutePath)))
    assert(e.errorClass == ErrorClass.StorageError && e.getMessage.contains("cannot be created"), e.getMessage)
    assert((System.nanoTime() - started) / 1e9 < 20, "it waited for the connection pool's timeout")
  }
}
