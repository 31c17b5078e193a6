package versioned.core

/**
 * Objects at several places (docs/FORMAT.md, "Object locations"; metastore schema 8): an object stored outside the
 * warehouse keeps every place it was found at, in the order they were recorded, each once; a version-7 metastore's
 * one location per object becomes that object's first place; a commit that reads a known object at another place
 * adds it; copies take the first place that holds the object. On both metastores (the suite opens one).
 */
class ObjectLocationsSuite extends CoreFixture {
  private def places(id: String): Seq[String] = engine.objects(Seq(id)).get(id).toSeq.flatMap(_.locations)
  private def uri(place: String, id: String) = s"file:/elsewhere/$place/${ObjectMeta.relativePath(id)}"

  test("the metastore is at schema version 8, and a version-7 metastore's location per object becomes its first place") {
    assert(MetastoreSchema.CurrentVersion == 8)
    val o = objectMeta(fakeId("old"))
    commitOn("r", "main", "t" -> TableUpdate.Put(tableVersion("t", Seq(o.id)), Seq(o)))
    // the table as version 7 (and 1-6) defined it, with one location
    engine.metastore.tx { c =>
      Sql.update(c, "DROP TABLE vc_object_locations")
      Sql.update(c, "CREATE TABLE vc_object_locations (object_id CHAR(64) PRIMARY KEY, protocol VARCHAR(32) NOT NULL, " +
        "location TEXT NOT NULL)")
      Sql.update(c, "INSERT INTO vc_object_locations (object_id, protocol, location) VALUES (?, 'hadoop', ?)", o.id, uri("a", o.id))
      Sql.update(c, "UPDATE vc_meta SET value = '7' WHERE key = 'schema_version'")
    }
    engine.metastore.tx(c => MetastoreSchema.migrate(c, engine.metastore.isSqlite))
    assert(engine.metastore.read(c => Sql.query(c, "SELECT value FROM vc_meta WHERE key = 'schema_version'")(_.getString(1))) ==
      Vector("8"))
    assert(places(o.id) == Seq(uri("a", o.id)))
    engine.metastore.tx(c => MetaDao.insertLocations(c, Seq(o.id -> uri("b", o.id))))
    assert(places(o.id) == Seq(uri("a", o.id), uri("b", o.id)), "a second place after the migrated one")
  }

  test("places are kept in the order they were recorded, each once, and forgotten together") {
    val (x, y) = (fakeId("x"), fakeId("y"))
    val rows = Seq(x, y).map(id => objectMeta(id).copy(locations = Seq(uri("a", id))))
    Seq(x, y).foreach(id => java.nio.file.Files.delete(dir.resolve(ObjectMeta.relativePath(id)))) // stored elsewhere only
    commitOn("r", "main", "t" -> TableUpdate.Put(tableVersion("t", Seq(x, y)), rows))
    engine.metastore.tx(c => MetaDao.insertLocations(c, Seq(x -> uri("c", x), x -> uri("b", x), x -> uri("a", x), x -> uri("c", x))))
    engine.metastore.tx(c => MetaDao.insertLocations(c, Seq(y -> uri("b", y))))
    assert(places(x) == Seq(uri("a", x), uri("c", x), uri("b", x)))
    assert(places(y) == Seq(uri("a", y), uri("b", y)))
    assert(engine.objects(Seq(x))(x).urisIn(engine.config) == places(x) && engine.objects(Seq(x))(x).uriIn(engine.config) == uri("a", x))
    engine.metastore.tx(c => MetaDao.deleteLocations(c, Seq(x)))
    assert(places(x).isEmpty && places(y).size == 2)
    assert(engine.objects(Seq(x))(x).urisIn(engine.config) == Seq(engine.config.objectUri(x)))
  }

  test("a commit that reads a known object at another place adds that place; one that stores it forgets them all") {
    val id = fakeId("shared-by-remotes")
    val atA = objectMeta(id).copy(locations = Seq(uri("a", id)))
    java.nio.file.Files.delete(dir.resolve(ObjectMeta.relativePath(id)))
    commitOn("r", "main", "t" -> TableUpdate.Put(tableVersion("t", Seq(id)), Seq(atA)))
    // an import of the same object from another remote (the warehouse does not store it)
    commitOn("r", "main", "u" -> TableUpdate.Put(tableVersion("u", Seq(id)), Seq(atA.copy(locations = Seq(uri("b", id))))))
    assert(places(id) == Seq(uri("a", id), uri("b", id)))
    // a writer that stores identical content here
    commitOn("r", "main", "v" -> TableUpdate.Put(tableVersion("v", Seq(id)), Seq(objectMeta(id))))
    assert(places(id).isEmpty)
  }

  test("a copy takes the first place that holds the object whole, and raises the first place's error when none does") {
    val conf = new org.apache.hadoop.conf.Configuration()
    val root = java.nio.file.Files.createTempDirectory("versioned-places")
    try {
      val bytes = ("object bytes " * 50).getBytes("UTF-8")
      val id = fakeId("copied")
      def place(name: String, content: Option[Array[Byte]]): String = {
        val f = root.resolve(name).resolve(ObjectMeta.relativePath(id))
        java.nio.file.Files.createDirectories(f.getParent)
        content.foreach(java.nio.file.Files.write(f, _))
        f.toUri.toString
      }
      val damaged = bytes.clone(); damaged(3) = (damaged(3) ^ 1).toByte
      val (missing, corrupt, good) = (place("missing", None), place("corrupt", Some(damaged)), place("good", Some(bytes)))
      val (len, cs) = ObjectChecksum.compute(org.apache.hadoop.fs.FileSystem.getLocal(conf).getRaw,
        new org.apache.hadoop.fs.Path(good), bytes.length - 8L)
      val meta = objectMeta(id).copy(sizeBytes = len, checksum = cs.encode)
      def copyFrom(sources: String*): Boolean = {
        val target = root.resolve("target").resolve(ObjectMeta.relativePath(id))
        java.nio.file.Files.deleteIfExists(target)
        ObjectTransfer.copy(conf, ObjectCopy(meta, sources, target.toUri.toString, root.resolve("staging.parquet").toUri.toString))
      }
      assert(copyFrom(missing, corrupt, good))
      assert(java.nio.file.Files.readAllBytes(root.resolve("target").resolve(ObjectMeta.relativePath(id))).sameElements(bytes))
      val e = expectError[ObjectMissingException](ErrorClass.ObjectMissing)(copyFrom(missing, corrupt))
      assert(e.getMessage.contains(missing.stripPrefix("file:")) && e.getSuppressed.exists(_.isInstanceOf[ObjectCorruptException]))
      expectError[ObjectCorruptException](ErrorClass.ObjectCorrupt)(copyFrom(corrupt, missing))
    } finally deleteRecursively(root)
  }
}
