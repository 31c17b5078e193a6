package versioned.core

/** The one place where repository, table, column-free and ref names are validated. */
object Names {
  sealed trait Kind { def label: String }
  case object Repository extends Kind { val label = "repository" }
  case object Table extends Kind { val label = "table" }
  case object Branch extends Kind { val label = "branch" }
  case object Tag extends Kind { val label = "tag" }
  case object LockNamespace extends Kind { val label = "lock namespace" }
  case object LockName extends Kind { val label = "lock" }
  case object Remote extends Kind { val label = "remote" }

  private val Identifier = "[A-Za-z_][A-Za-z0-9_-]{0,127}".r
  private val ReservedPrefixes = Seq("heads/", "tags/", "locks/", "remotes/")
  private val ForbiddenRefChars = Set(' ', '~', '^', ':', '?', '*', '[', '\\', '\u007f')

  /** Returns the name unchanged when valid, else throws [[InvalidNameException]] saying why. */
  def validate(kind: Kind, name: String): String = {
    def fail(why: String) = throw new InvalidNameException(
      s"Invalid ${kind.label} name '${printable(name)}': $why.")
    if (name == null || name.isEmpty) fail("it is empty")
    kind match {
      case Repository | Table =>
        if (!Identifier.matches(name))
          fail("use letters, digits, '_' and '-', starting with a letter or '_', at most 128 characters")
      case _ =>
        if (name.length > 200) fail("it is longer than 200 characters")
        if (name.exists(c => c < 0x20)) fail("it contains a control character")
        name.find(ForbiddenRefChars.contains).foreach(c => fail(s"it contains '${printable(c.toString)}'"))
        if (name.contains("..")) fail("it contains '..'")
        if (name.contains("@{") || name == "@") fail("it contains '@{' or is '@'")
        if (name.startsWith("-")) fail("it starts with '-'")
        if (name.startsWith("/") || name.endsWith("/") || name.contains("//")) fail("it has an empty path component")
        if (name.endsWith(".") || name.endsWith(".lock")) fail("it ends with '.' or '.lock'")
        if (name.split('/').exists(_.startsWith("."))) fail("a path component starts with '.'")
        if ((kind == LockNamespace || kind == LockName || kind == Remote) && name.contains('/')) fail("it contains '/'")
        if ((kind == Branch || kind == Tag) && Hashing.looksLikeFullHash(name.toLowerCase)) fail("it looks like an image hash")
        if ((kind == Branch || kind == Tag) && ReservedPrefixes.exists(name.startsWith))
          fail(s"it starts with a reserved prefix (${ReservedPrefixes.mkString(", ")})")
    }
    name
  }

  private def printable(s: String): String =
    if (s == null) "null" else s.flatMap(c => if (c < 0x20 || c == 0x7f) f"\\u${c.toInt}%04x" else c.toString)
}
