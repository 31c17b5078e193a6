package versioned.core

import java.nio.file.{Files, Path, Paths}
import scala.jdk.CollectionConverters._
import org.scalatest.funsuite.AnyFunSuite

/**
 * Error messages are read from SQL, the Scala/Java API, Python and the command line alike: they say what to do
 * in terms of the operation (naming the SQL procedure, or the operation of the API), never a Python method call
 * such as `branches()`, `repo.merge(...)` or a keyword argument such as `force=True`.
 */
class SurfaceNeutralMessagesSuite extends AnyFunSuite {
  /** The string literals of the connector's main Scala sources, with where they are. */
  private def literals: Seq[(String, String)] = {
    val root = Iterator.iterate(Paths.get("").toAbsolutePath)(_.getParent).takeWhile(_ != null)
      .find(p => Files.exists(p.resolve("build.sbt")) && Files.isDirectory(p.resolve("connector-scala")))
      .getOrElse(fail("the repository root (with build.sbt) is not above the working directory"))
    val sources = Files.walk(root.resolve("connector-scala")).iterator().asScala
      .filter(p => p.toString.endsWith(".scala") && p.toString.contains(s"src${java.io.File.separator}main")).toSeq
    assert(sources.size > 50, s"found only ${sources.size} sources under $root")
    val literal = "\"((?:[^\"\\\\\\n]|\\\\.)*)\"".r
    sources.flatMap { (p: Path) =>
      Files.readAllLines(p).asScala.zipWithIndex.flatMap { case (line, i) =>
        // interpolated code (`${...}`) is not message text
        literal.findAllMatchIn(line).map(m => m.group(1).replaceAll("""\$\{[^}]*\}""", "") -> s"${root.relativize(p)}:${i + 1}")
      }
    }
  }

  test("no message names a Python method call or keyword argument") {
    val pythonic = Seq(
      "a method call" -> """(?<![\w$.])[a-z][a-z_]*[a-z]\((\)|\.\.\.\)|[a-z_]+\s*,)""".r,
      "a keyword argument" -> """\b[a-z_]+=(True|False|true|false)\b""".r,
      "a method of a Python object" -> """\b(repo|Repository|versioned)\.[a-z_]+\(""".r)
    val found = for {
      (text, where) <- literals
      (what, re) <- pythonic
      m <- re.findFirstIn(text)
      if !text.contains("in Python,") // a hint labelled as Python's, next to the surface-neutral one
    } yield s"$where: $what '$m' in \"$text\""
    assert(found.isEmpty, found.mkString("\n", "\n", ""))
  }
}
