package versioned.core

import java.sql.Connection
import java.time.{Instant, LocalDate, LocalDateTime, ZoneOffset}
import scala.util.Try

/** Resolves revisions to images. Used by the `versioned` format, the catalog and Python alike. */
final class Resolver(ms: Metastore) {
  private val Ancestry = """^(.*?)((?:~\d*|\^\d*)*)$""".r
  private val Step = """(~|\^)(\d*)""".r

  def resolve(repo: String, rev: Revision): Image = ms.read(c => resolve(c, repo, rev))

  /**
   * The image `rev` names; VERSION_EXPIRED when a retention policy expired it. The resolution ends in one query,
   * the image joined with the expired images ([[MetaDao.getImageExpiry]]), not an image read and an expiry lookup.
   */
  def resolve(c: Connection, repo: String, rev: Revision): Image = {
    val hash = resolveHash(c, repo, rev)
    val (img, expired) = MetaDao.getImageExpiry(c, repo, hash).getOrElse(throw notFound(repo, hash))
    Retention.refuse(repo, hash, expired)
    img
  }

  /** The hash of the image `rev` names (not read yet, nor checked for expiry). */
  private def resolveHash(c: Connection, repo: String, rev: Revision): String = {
    if (!MetaDao.repoExists(c, repo)) throw new RepositoryNotFoundException(repo)
    rev match {
      case Revision.DefaultBranch =>
        branchHead(c, repo, MetaDao.defaultBranch(c, repo).get)
      case Revision.Spec(spec) => resolveSpec(c, repo, spec)
      case Revision.AsOf(ts, branch) =>
        val b = branch.getOrElse(MetaDao.defaultBranch(c, repo).get)
        // a time is looked up along a branch's history; another revision that resolves names no such history
        if (MetaDao.getRef(c, repo, Ref.branch(b)).isEmpty && scala.util.Try(resolveSpec(c, repo, b)).isSuccess)
          throw new InvalidInputException(ErrorClass.InvalidRevision, s"'$b' of '$repo' is not a branch: a time (asOf, " +
            s"TIMESTAMP AS OF) is looked up along a branch's history. Name a branch with it, or read '$b' without a time.")
        val head = image(c, repo, branchHead(c, repo, b))
        if (head.createdMs <= ts) head.hash
        else {
          // the first-parent line read in windows of growing size, newest first, as a log reads it
          val images = new LogWindows(c, ms.isSqlite, graphOnly = false, repo, 256)
          var img = head
          while (img.createdMs > ts) {
            val p = img.parents.headOption.getOrElse(
              throw new ImageNotFoundException(s"Branch '$b' of '$repo' has no commit at or before " +
                s"${Instant.ofEpochMilli(ts)}; its first commit is at ${Instant.ofEpochMilli(img.createdMs)}."))
            img = read(c, repo, images, p)
          }
          img.hash
        }
    }
  }

  def branchHead(c: Connection, repo: String, branch: String): String =
    MetaDao.getRef(c, repo, Ref.branch(branch)).map(_.image).getOrElse(
      throw new RefNotFoundException(s"Branch '$branch' does not exist in repository '$repo'. " +
        s"List the branches (metadata table $$refs, or the API's branches), or create it first (procedure create_branch, " +
        "or the API's create branch)."))

  private def resolveSpec(c: Connection, repo: String, spec: String): String = {
    if (spec == null || spec.trim.isEmpty)
      throw new InvalidInputException(ErrorClass.InvalidRevision, "An empty revision was given; name a branch, tag, lock or hash.")
    spec.find(ch => Character.isISOControl(ch) && !ch.isWhitespace).foreach { ch =>
      throw new InvalidInputException(ErrorClass.InvalidRevision, f"Revision '${spec.filterNot(Character.isISOControl)}' " +
        f"holds a control character (U+${ch.toInt}%04X); ref names never do. Remove it.")
    }
    val Ancestry(base, steps) = spec.trim
    val baseHash = resolveBase(c, repo, base, spec)
    // each step reads the image it starts from; the last step's target is only named (resolve reads it)
    Step.findAllMatchIn(steps).foldLeft(baseHash) { (hash, m) =>
      val n = if (m.group(2).isEmpty) 1 else m.group(2).toIntOption.getOrElse(throw new InvalidInputException(
        ErrorClass.InvalidRevision, s"Ancestry count in '$spec' is too large."))
      if (m.group(1) == "~") firstParent(c, repo, hash, n, spec) else parent(image(c, repo, hash), n, spec)
    }
  }

  private def parent(img: Image, n: Int, spec: String): String =
    if (n == 0) img.hash
    else img.parents.lift(n - 1).getOrElse(throw pastRoot(spec, img.hash, n))

  private def pastRoot(spec: String, hash: String, n: Int) = new ImageNotFoundException(
    s"Revision '$spec' goes past the root of the history: image ${hash.take(12)} has no parent #$n.")

  /**
   * The hash of the image `n` first parents before `from` (`~n`). A short walk reads one image per step; a long one
   * reads the history's hashes and parents in windows of growing size, newest first ([[LogWindows]]), so `main~1000`
   * costs a few queries, not a thousand.
   */
  private def firstParent(c: Connection, repo: String, from: String, n: Int, spec: String): String =
    if (n <= Resolver.ShortWalk) (1 to n).foldLeft(from)((h, _) => parent(image(c, repo, h), 1, spec))
    else {
      val images = new LogWindows(c, ms.isSqlite, graphOnly = true, repo, 2L * n + 62)
      val img = image(c, repo, from)
      var (hash, parents) = (img.hash, img.parents)
      (1 to n).foreach { i =>
        hash = parents.headOption.getOrElse(throw pastRoot(spec, hash, 1))
        if (i < n) parents = read(c, repo, images, hash).parents
      }
      hash
    }

  /** Image `hash` from the windows a walk reads, else on its own (an image the windows do not hold). */
  private def read(c: Connection, repo: String, images: LogWindows, hash: String): Image =
    Option(images.take(hash)).map(_.image).getOrElse(image(c, repo, hash))

  private def resolveBase(c: Connection, repo: String, base: String, spec: String): String = {
    def ref(full: String) = MetaDao.getRef(c, repo, full).map(_.image)
    def notFound = {
      // ref names never hold ~ or ^ (Names): what is left of them here is an ancestry step without a count
      if (base.exists(ch => ch == '~' || ch == '^')) throw new InvalidInputException(ErrorClass.InvalidRevision,
        s"Revision '$spec' has a malformed ancestry step: ~ and ^ take a count of 0 or more (main~2, main^2, main^).")
      throw new RefNotFoundException(s"No branch, tag, lock or image matches '$spec' in repository " +
        s"'$repo'. List the branches, tags and locks (metadata table $$refs, or the API's ref listings), or use a longer hash prefix.")
    }
    if (base.isEmpty) throw new InvalidInputException(ErrorClass.InvalidRevision, s"Revision '$spec' names no ref.")
    val prefixed = Seq("heads/", "tags/", "locks/", "remotes/").find(base.startsWith)
    prefixed match {
      case Some(_) => ref(base).getOrElse(notFound)
      case None if base.contains(':') => ref(s"locks/$base").getOrElse(notFound)
      case None =>
        // `origin/main`: the remote-tracking ref remotes/origin/main, unless a branch or tag has that name
        ref(Ref.branch(base)).orElse(ref(Ref.tag(base))).orElse(Some(base).filter(_.contains('/')).flatMap(b =>
          ref(s"remotes/$b"))).getOrElse {
          if (!Hashing.looksLikePrefix(base.toLowerCase)) notFound
          val hits = MetaDao.imagesByPrefix(c, repo, base.toLowerCase, 6)
          hits match {
            case Seq(one) => one
            case Seq() => notFound
            case many => throw new AmbiguousRefException(s"Hash prefix '$base' matches ${many.size} or more images " +
              s"(${many.take(3).map(_.take(12)).mkString(", ")}...). Give more characters.")
          }
        }
    }
  }

  private def image(c: Connection, repo: String, hash: String): Image =
    MetaDao.getImage(c, repo, hash).getOrElse(throw notFound(repo, hash))

  private def notFound(repo: String, hash: String) = new ImageNotFoundException(s"Image $hash not found in '$repo'.")
}

private object Resolver {
  /** Up to this many `~` steps, the resolver reads one image per step. */
  val ShortWalk = 16
}
