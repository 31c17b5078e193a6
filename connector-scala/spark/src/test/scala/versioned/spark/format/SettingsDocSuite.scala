package versioned.spark.format

import java.io.File
import org.scalatest.funsuite.AnyFunSuite
import versioned.core.InvalidInputException
import versioned.spark.session.{Setting, Settings, VersionedOptions}

/**
 * Settings are declared once ([[Setting]]): the README's configuration table is the declarations' table,
 * the known keys are the declared keys, and each declared kind refuses a bad value with INVALID_OPTION.
 */
class SettingsDocSuite extends AnyFunSuite {
  private def readme: String = {
    var dir = new File(".").getAbsoluteFile
    while (dir != null && !new File(dir, "README.md").exists()) dir = dir.getParentFile
    assert(dir != null, "README.md not found above the working directory")
    new String(java.nio.file.Files.readAllBytes(new File(dir, "README.md").toPath), "UTF-8")
  }

  test("the README's configuration table is the declared settings' table") {
    if (!readme.contains(Setting.markdownTable)) // the table to paste, for whoever changed a declaration
      java.nio.file.Files.write(new File("target/settings-table.md").toPath, Setting.markdownTable.getBytes("UTF-8"))
    assert(readme.contains(Setting.markdownTable),
      s"README.md's configuration table differs from the declarations; it should read:\n${Setting.markdownTable}")
  }

  test("the known keys are the declared ones, each documented") {
    assert(VersionedOptions.ConfKeys.toSet == Setting.all.map(_.key).toSet)
    assert(Setting.all.map(_.key).distinct.size == Setting.all.size)
    Setting.all.foreach(s => assert(s.key.startsWith(VersionedOptions.ConfPrefix) && s.doc.nonEmpty && s.defaultText.nonEmpty))
  }

  test("every declared setting parses its default's text form and refuses a bad value, naming the key") {
    val bad = Map[Setting[_], String](Setting.FragmentRows -> "0", Setting.MaxChain -> "x", Setting.ConsolidateAfter -> "1",
      Setting.MaxDiffRatio -> "-1", Setting.CompactionDutyCycle -> "1.5", Setting.BackgroundCompaction -> "yes",
      Setting.DiffCacheBytes -> "lots", Setting.DiffCompression -> "rar", Setting.LocalCommitMaxRows -> "-2")
    bad.foreach { case (s, v) =>
      val e = intercept[InvalidInputException](Settings.of(Map(s.key -> v)).checkedForWrites())
      assert(e.errorClass == "INVALID_OPTION" && e.getMessage.contains(s.key) && e.getMessage.contains(s"'$v'"), e.getMessage)
    }
    val defaults = Settings.of(Map.empty[String, String]).checkedForWrites()
    assert(defaults.fragmentRows == Setting.FragmentRows.default && defaults.diffCompression == "zstd" &&
      defaults.localCommitMaxBytes == (64L << 20) && defaults.warehouse.isEmpty)
    assert(Settings.of(Map(Setting.DiffCacheBytes.key -> "512k")).diffCacheBytes == 512 * 1024)
  }
}
