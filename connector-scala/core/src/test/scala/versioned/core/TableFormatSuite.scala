package versioned.core

/**
 * Format versions (docs/FORMAT.md, format version 2; metastore schema 7): a table version records its format
 * (`vc_tables.format_version`, NULL = 1), objects whether they are shared (`vc_objects.shared`); both round-trip
 * through commits, and a table version of a format this build does not know is refused with a typed error by every
 * lookup, never read.
 */
class TableFormatSuite extends CoreFixture {
  private def formatColumn(image: String): Option[Int] = engine.metastore.read(c =>
    Sql.query(c, "SELECT format_version FROM vc_tables WHERE repo = 'r' AND image_hash = ? AND name = 't'", image)(r =>
      Option(r.getObject(1)).map(_.toString.toInt)).head)

  test("the metastore is at schema version 7 or later; format 1 is recorded as NULL, format 2 and shared objects round-trip") {
    assert(MetastoreSchema.CurrentVersion >= 7)
    assert(engine.metastore.read(c => Sql.query(c, "SELECT value FROM vc_meta WHERE key = 'schema_version'")(_.getString(1))) ==
      Vector(MetastoreSchema.CurrentVersion.toString))
    val c1 = commitOn("r", "main", put("t", fakeId("a")))
    assert(engine.table("r", c1.image, "t").format == TableFormat.Initial)
    assert(formatColumn(c1.image.hash).isEmpty, "format 1 is NULL, as in every row written before format versions")
    val shared = objectMeta(fakeId("s")).copy(kind = ObjectKind.Diff, shared = true)
    val t2 = tableVersion("t", Seq(fakeId("a"), shared.id)).copy(format = TableFormat.SharedObjects,
      fragments = Seq(Fragment(None, Seq(fakeId("a"), shared.id)), Fragment(Some(Seq(5L)), Seq(shared.id))))
    val c2 = engine.commit("r", "main", head("r"), Map("t" -> TableUpdate.Put(t2, Seq(shared))), "tester", "shared")
    assert(engine.table("r", c2.image, "t").format == TableFormat.SharedObjects)
    assert(formatColumn(c2.image.hash).contains(2))
    assert(engine.objects(Seq(shared.id))(shared.id).shared)
    assert(!engine.objects(Seq(fakeId("a")))(fakeId("a")).shared)
  }

  test("a table version of an unknown format is TABLE_FORMAT_UNSUPPORTED for every lookup, and a commit of one records nothing") {
    val c1 = commitOn("r", "main", put("t", fakeId("a")), put("u", fakeId("b")))
    engine.metastore.tx(c => Sql.update(c, "UPDATE vc_tables SET format_version = 3 WHERE repo = 'r' AND name = 't'"))
    def refused(f: => Any) = {
      val e = expectError[TableFormatUnsupportedException](ErrorClass.TableFormatUnsupported)(f)
      assert(e.getMessage.contains("format version 3") && e.getMessage.contains("Upgrade") && e.getSqlState == "0A000")
    }
    refused(engine.table("r", c1.image, "t"))
    refused(engine.tables("r", c1.image.hash))
    assert(engine.tableOption("r", c1.image.hash, "u").isDefined, "other tables still read")
    val before = head("r")
    val t3 = tableVersion("v", Seq(fakeId("c"))).copy(format = 3)
    val bad = intercept[TableFormatUnsupportedException](
      engine.commit("r", "main", head("r"), Map("v" -> TableUpdate.Put(t3, Seq(objectMeta(fakeId("c"))))), "tester", "bad"))
    assert(bad.errorClass == ErrorClass.TableFormatUnsupported)
    assert(head("r") == before, "nothing was committed")
  }
}
