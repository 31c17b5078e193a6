package versioned.spark

import versioned.spark.session.{Settings, VersionedOptions}

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import versioned.core.ErrorClass
import versioned.spark.catalog.VersionedCatalog

/**
 * Options and settings are validated before anything is written: a misspelled option or setting key,
 * or a value out of range, fails with INVALID_OPTION naming the key (and the closest valid key, or
 * the allowed range), and leaves the warehouse exactly as it was: same refs, log and rows, and no
 * staging leftovers.
 */
class OptionsSuite extends VersionedTestBase {
  private val schema = new StructType().add("id", IntegerType).add("name", StringType)

  private def data(rows: (Int, String)*): DataFrame = frame(schema, rows.map { case (i, n) => Row(i, n) }, 2)

  /** Repository `r` with table `t` (ids 1..100, key `id`) in two commits. */
  private def setup(): Unit = {
    write(data((1 to 90).map(i => (i, s"n$i")): _*), "r.t", "primaryKey" -> "id", "message" -> "first")
    write(data((91 to 100).map(i => (i, s"n$i")): _*), "r.t", "message" -> "second")
  }

  /**
   * Runs `f` with the Spark confs `conf` set (restored afterwards, in a finally), expects INVALID_OPTION
   * with a message mentioning `parts`, and asserts that nothing was committed or staged.
   */
  private def refused(conf: (String, String)*)(parts: String*)(f: => Any): Unit = {
    val before = repoState("r", "t")
    val repos = engine.repositories().sorted
    withConf(conf: _*)(expectError(ErrorClass.InvalidOption, parts: _*)(f))
    assert(engine.repositories().sorted == repos, "a refused request created a repository")
    assert(repoState("r", "t") == before, "a refused request changed the repository")
    assert(stagedWrites.isEmpty, s"staging leftovers after a refused write: $stagedWrites")
  }

  /** A write of a new key, which would commit if the request were accepted. */
  private def appendOne(opts: (String, String)*): Unit = write(data((500, "new")), "r.t", opts: _*)

  test("a misspelled write option (brnach) is refused with a suggestion; nothing is committed to main") {
    setup()
    engine.refs.createBranch("r", "dev", versioned.core.Revision.DefaultBranch)
    val dev = headHash("r", "dev")
    refused()("'brnach'", "Did you mean 'branch'?", "Valid options:")(appendOne("brnach" -> "dev"))
    refused()("'BRNACH'", "Did you mean 'branch'?")(overwrite(data((1, "x")), "r.t", "BRNACH" -> "dev"))
    assert(headHash("r", "dev") == dev)
  }

  test("internal reads cannot be reached through options: hidden columns, representation and fragment restrictions are refused") {
    setup()
    refused()("versioned.internal.includeHidden")(read("r.t", "versioned.internal.includeHidden" -> "true").collect())
    refused()("versioned.internal.fragments")(read("r.t", "versioned.internal.fragments" -> "0").collect())
    refused()("versioned.internal.representation")(read("r.t", "versioned.internal.representation" -> "logical").collect())
    refused()("internal")(read("r.t", VersionedOptions.Pinned -> java.util.UUID.randomUUID().toString).collect())
    refused()("internal")(appendOne(VersionedOptions.Pinned -> "x"))
    assert(read("r.t").columns.toSeq == Seq("id", "name"))
  }

  test("primaryKeys (misspelled) on a new table is refused instead of creating a key-less table") {
    setup()
    refused()("'primaryKeys'", "Did you mean 'primaryKey'?")(write(data((1, "a")), "r.u", "primaryKeys" -> "id"))
    refused()("'primaryKeys'", "Did you mean 'primaryKey'?")(write(data((1, "a")), "fresh.t", "primaryKeys" -> "id"))
    assert(!engine.repositoryExists("fresh"))
  }

  test("primaryKey naming a column twice, or with an empty name, is refused") {
    setup()
    Seq("id,id", "id, ID", "id,", ",id", "id,,name", "", " ").foreach { pk =>
      refused()(s"'$pk'", "'primaryKey'")(write(data((1, "a")), "r.u", "primaryKey" -> pk))
      refused()(s"'$pk'", "'primaryKey'")(write(data((1, "a")), "fresh.t", "primaryKey" -> pk))
      refused()(s"'$pk'", "'primaryKey'")(overwrite(data((1, "a")), "r.t", "primaryKey" -> pk))
    }
    refused()("column 'id' is named twice")(write(data((1, "a")), "r.u", "primaryKey" -> "id,id"))
    // a well-formed key with spaces is trimmed
    write(data((1, "a")), "r.u", "primaryKey" -> " id ")
    assert(engine.table("r", engine.branchHeadOption("r", "main").get, "u").primaryKey == Seq("id"))
  }

  test("upsert takes only true or false") {
    setup()
    Seq("yes", "1", "", "on").foreach { v =>
      refused()(s"'$v'", "'upsert'", "true or false")(appendOne("upsert" -> v))
    }
  }

  test("fragment.targetRows must be an integer >= 1 (abc, -5, 0 are refused before any commit)") {
    setup()
    Seq("abc", "-5", "0", "1.5").foreach { v =>
      refused(VersionedOptions.ConfFragmentRows -> v)(VersionedOptions.ConfFragmentRows, s"'$v'", ">= 1")(appendOne())
      refused(VersionedOptions.ConfFragmentRows -> v)(VersionedOptions.ConfFragmentRows, s"'$v'")(
        overwrite(data((1, "x")), "r.t"))
    }
  }

  test("compaction.maxChainLength must be an integer >= 1 (abc, 0 are refused before any commit)") {
    setup()
    Seq("abc", "0", "-1", "99999999999").foreach { v =>
      refused(VersionedOptions.ConfMaxChain -> v)(VersionedOptions.ConfMaxChain, s"'$v'", "between 1 and")(appendOne())
    }
  }

  test("compaction.maxDiffRatio must be a number > 0 (abc, 0, -1 are refused before any commit)") {
    setup()
    Seq("abc", "0", "-1", "NaN", "Infinity").foreach { v =>
      refused(VersionedOptions.ConfMaxDiffRatio -> v)(VersionedOptions.ConfMaxDiffRatio, s"'$v'", "> 0")(appendOne())
    }
  }

  test("compaction.consolidateDiffs must be >= 2 (1 is refused, not raised to 2 silently)") {
    setup()
    Seq("1", "0", "x").foreach { v =>
      refused(VersionedOptions.ConfConsolidateAfter -> v)(VersionedOptions.ConfConsolidateAfter, s"'$v'", "between 2 and")(
        appendOne("upsert" -> "true"))
    }
  }

  test("write.localCommitMaxRows must be >= 0 and byte sizes must be byte strings >= 0") {
    setup()
    refused(VersionedOptions.ConfLocalCommitMaxRows -> "-1")(VersionedOptions.ConfLocalCommitMaxRows, "'-1'", ">= 0")(
      appendOne("upsert" -> "true"))
    Seq("-1", "lots", "1.5g").foreach { v =>
      refused(VersionedOptions.ConfLocalCommitMaxBytes -> v)(VersionedOptions.ConfLocalCommitMaxBytes, s"'$v'", "byte size")(
        appendOne("upsert" -> "true"))
    }
  }

  test("write.diffCompression must be a Parquet codec Spark can write (foo is refused)") {
    setup()
    Seq("foo", "brotli", "lzo").foreach { v =>
      refused(VersionedOptions.ConfDiffCompression -> v)(VersionedOptions.ConfDiffCompression, s"'$v'", "zstd", "snappy")(
        appendOne())
    }
  }

  test("an unknown spark.versioned.* setting is refused, naming the closest known key") {
    setup()
    refused("spark.versioned.compaction.maxDifRatio" -> "0.5")("'spark.versioned.compaction.maxDifRatio'",
      "Did you mean 'spark.versioned.compaction.maxDiffRatio'?")(appendOne())
    refused("spark.versioned.fragment.targetRow" -> "10")("Did you mean 'spark.versioned.fragment.targetRows'?")(
      overwrite(data((1, "x")), "r.t"))
    refused("spark.versioned.warehous" -> "/elsewhere")("Did you mean 'spark.versioned.warehouse'?")(read("r.t").collect())
  }

  test("a misspelled read option (reff) is refused with a suggestion instead of reading the head") {
    setup()
    refused()("'reff'", "Did you mean 'ref'?", "Valid options:")(read("r.t", "reff" -> "main~1").collect())
    refused()("'imag'", "Did you mean 'image'?")(read("r.t", "imag" -> headHash("r").get).collect())
    refused()("'asof '", "Did you mean 'asOf'?")(read("r.t", "asof " -> "2020-01-01").collect())
    // the spelled-right option reads the older version
    assert(read("r.t", "ref" -> "main~1").count() == 90)
  }

  test("write options on a read, and read options on a write, are refused") {
    setup()
    refused()("'ref'", "does not apply to writes", "'branch'")(appendOne("ref" -> "main~1"))
    refused()("'image'", "does not apply to writes")(overwrite(data((1, "x")), "r.t", "image" -> headHash("r").get))
    refused()("'primaryKey'", "does not apply to reads")(read("r.t", "primaryKey" -> "name").collect())
  }

  test("settings are checked when a read is planned") {
    setup()
    refused(VersionedOptions.ConfDiffCacheBytes -> "abc")(VersionedOptions.ConfDiffCacheBytes, "'abc'")(read("r.t").collect())
    refused(VersionedOptions.ConfMaxOverlayRows -> "-1")(VersionedOptions.ConfMaxOverlayRows, "'-1'")(read("r.t").collect())
  }

  test("valid values in every accepted form: byte strings, codec names in any case, TRUE") {
    setup()
    withConf(VersionedOptions.ConfDiffCacheBytes -> "64m", VersionedOptions.ConfLocalCommitMaxBytes -> "1m",
      VersionedOptions.ConfDiffCompression -> "GZIP", VersionedOptions.ConfMaxDiffRatio -> "0.5") {
      write(data((5, "five")), "r.t", "upsert" -> "TRUE")
      write(data((600, "six hundred")), "r.t")
      assert(read("r.t").count() == 101)
      assert(read("r.t").filter("id = 5").collect().toSeq == Seq(Row(5, "five")))
    }
  }

  test("catalog options and the options of catalog table reads are checked") {
    setup()
    withConf("spark.sql.catalog.oc" -> classOf[VersionedCatalog].getName) {
      refused("spark.sql.catalog.bad" -> classOf[VersionedCatalog].getName, "spark.sql.catalog.bad.warehous" -> "/x")(
        "'warehous'", "catalog 'bad'", "Did you mean 'warehouse'?")(spark.sql("SHOW TABLES IN bad.r").collect())
      refused()("'versionAsOff'", "Did you mean 'versionAsOf'?")(
        spark.read.option("versionAsOff", "main~1").table("oc.r.t").collect())
      refused()("'ref'", "does not apply to reads of catalog table")(
        spark.read.option("ref", "main~1").table("oc.r.t").collect())
      assert(spark.read.option("versionAsOf", "main~1").table("oc.r.t").count() == 90)
      refused()("'brnach'", "Did you mean 'branch'?")(data((500, "x")).writeTo("oc.r.t").option("brnach", "dev").append())
    }
  }

  test("every spark.versioned.* key VersionedOptions declares is read by Settings, with its default valid") {
    val declared = VersionedOptions.getClass.getMethods.toSeq
      .filter(m => m.getParameterCount == 0 && m.getReturnType == classOf[String])
      .map(_.invoke(VersionedOptions).asInstanceOf[String])
      .filter(k => k.startsWith(VersionedOptions.ConfPrefix) && k != VersionedOptions.ConfPrefix)
    assert(declared.nonEmpty)
    assert(declared.toSet == VersionedOptions.ConfKeys.toSet)
    val defaults = Settings.of(Map.empty[String, String])
    assert(defaults.fragmentRows == VersionedOptions.DefaultFragmentRows && defaults.diffCompression == "zstd")
    assert(defaults.diffCacheBytes < 0, "default DIFF cache: a fifth of each executor's heap, decided there")
    val byteDefaults = Map(VersionedOptions.ConfLocalCommitMaxBytes -> "64m")
    assert(Settings.of(byteDefaults).localCommitMaxBytes == defaults.localCommitMaxBytes)
  }
}
