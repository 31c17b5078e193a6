package versioned.spark.catalog

import org.apache.spark.sql.connector.catalog.Identifier
import versioned.core.{InvalidNameException, Names}

/** What a catalog identifier names. */
private[catalog] sealed trait Target { def repo: String }

/** A table, optionally qualified with a branch (or any revision for reads): `t` or `t@dev`. */
private[catalog] final case class TableTarget(repo: String, table: String, ref: Option[String]) extends Target

/**
 * A read-only metadata table: `t$history`, `t$refs`, `t$objects`, `t$diff`, `t$blame` (table level) or `$log`, `$refs`,
 * `$image`, `$diff`, `$checks`, `$reflog` (repository level), optionally at a revision: `t@dev$objects`, `$log@dev`, `$diff@v1..main`.
 */
private[catalog] final case class MetaTarget(repo: String, table: Option[String], ref: Option[String], kind: MetaKind)
  extends Target

private[catalog] sealed abstract class MetaKind(val name: String, val tableLevel: Boolean, val repoLevel: Boolean)
private[catalog] object MetaKind {
  case object Log extends MetaKind("log", tableLevel = false, repoLevel = true)
  case object History extends MetaKind("history", tableLevel = true, repoLevel = false)
  case object Refs extends MetaKind("refs", tableLevel = true, repoLevel = true)
  case object Objects extends MetaKind("objects", tableLevel = true, repoLevel = false)
  case object ImageDetails extends MetaKind("image", tableLevel = false, repoLevel = true)
  /** Rows inserted, updated, deleted and columns changed between two revisions ([[DiffView]]). */
  case object Diff extends MetaKind("diff", tableLevel = true, repoLevel = true)
  /** Every recorded check run of the repository (docs/GOVERNANCE.md), newest first. */
  case object Checks extends MetaKind("checks", tableLevel = false, repoLevel = true)
  /** Per row of a table, the commit that last changed it ([[BlameTable]], docs/BLAME.md). */
  case object Blame extends MetaKind("blame", tableLevel = true, repoLevel = false)
  /** Every ref movement of the repository (docs/AUDIT.md), newest first; the revision is ignored. */
  case object Reflog extends MetaKind("reflog", tableLevel = false, repoLevel = true)
  val all: Seq[MetaKind] = Seq(Log, History, Refs, Objects, ImageDetails, Diff, Checks, Blame, Reflog)
}

/**
 * Identifier scheme of the catalog: `<catalog>.<repository>.<name>` where name is
 * `table`, `table@ref`, `table$meta`, `table@ref$meta`, `$meta` or `$meta@ref`. Table names cannot
 * contain `@` or `$`, so the parse is unambiguous. Procedures live in the namespace `system`.
 */
private[catalog] object CatalogNames {
  val SystemNamespace = "system"

  def repoOf(namespace: Array[String]): String = namespace match {
    case Array(r) => Names.validate(Names.Repository, r)
    case _ => throw new InvalidNameException(
      s"Namespace '${namespace.mkString(".")}' is not a repository name: use exactly one level, <catalog>.<repository>.<table>.")
  }

  def parse(ident: Identifier): Target = {
    val repo = repoOf(ident.namespace())
    val name = ident.name()
    val cut = name.indexWhere(c => c == '@' || c == '$')
    if (cut < 0) TableTarget(repo, Names.validate(Names.Table, name), None)
    else if (cut == 0 && name.charAt(0) == '@') throw new InvalidNameException(s"Table name '$name' names no table before '@'.")
    else {
      val table = if (cut == 0) None else Some(Names.validate(Names.Table, name.substring(0, cut)))
      val rest = name.substring(cut)
      if (rest.startsWith("$")) {
        val (kind, ref) = rest.substring(1).split("@", 2) match {
          case Array(k) => (k, None)
          case Array(k, r) => (k, Some(r))
        }
        meta(repo, table, nonEmpty(ref, name), kind)
      } else {
        val spec = rest.substring(1)
        val metaSuffix = MetaKind.all.map(k => "$" + k.name).find(s => spec.endsWith(s) && spec.length > s.length)
        metaSuffix match {
          case Some(s) => meta(repo, table, nonEmpty(Some(spec.dropRight(s.length)), name), s.substring(1))
          case None => TableTarget(repo, table.get, nonEmpty(Some(spec), name))
        }
      }
    }
  }

  private def nonEmpty(ref: Option[String], name: String): Option[String] = ref.map { r =>
    if (r.trim.isEmpty) throw new InvalidNameException(s"'$name' has an empty revision after '@'.")
    r
  }

  private def meta(repo: String, table: Option[String], ref: Option[String], kind: String): MetaTarget = {
    val k = MetaKind.all.find(_.name.equalsIgnoreCase(kind)).getOrElse(throw new InvalidNameException(
      s"Unknown metadata table '$$$kind'. Table level: ${names(_.tableLevel, "t")}; repository level: " +
        s"${names(_.repoLevel, "")}."))
    if (table.isDefined && !k.tableLevel) throw new InvalidNameException(
      s"'$$${k.name}' is a repository-level metadata table: use `$$${k.name}` without a table name.")
    if (table.isEmpty && !k.repoLevel) throw new InvalidNameException(
      s"'$$${k.name}' is a table-level metadata table: use `<table>$$${k.name}`.")
    MetaTarget(repo, table, ref, k)
  }

  private def names(p: MetaKind => Boolean, prefix: String): String =
    MetaKind.all.filter(p).map(k => s"`$prefix$$${k.name}`").mkString(", ")
}
