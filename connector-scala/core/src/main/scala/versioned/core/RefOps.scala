package versioned.core

import versioned.core.governance.Move

/** Branches (mutable), tags (immutable) and namespaced locks (immutable, MMS5). */
final class RefOps(engine: Engine) {
  private def ms = engine.metastore

  private def requireRepo(c: java.sql.Connection, repo: String): Unit =
    if (!MetaDao.repoExists(c, repo)) throw new RepositoryNotFoundException(repo)

  /**
   * Branches, tags and locks share one namespace of short names (as git's ambiguity rule and Iceberg's refs):
   * a name that is already another kind of ref would make a revision ambiguous, so it is refused.
   */
  private def requireFreeName(c: java.sql.Connection, repo: String, short: String, what: String): Unit =
    Seq(Ref.branch(short) -> "a branch", Ref.tag(short) -> "a tag", s"locks/$short" -> "a lock").foreach { case (full, kind) =>
      MetaDao.getRef(c, repo, full).foreach(r => throw new RefExistsException(
        s"$what cannot be created: '$short' is already $kind of '$repo' (at ${r.image.take(12)}). Branches, tags " +
          "and locks share one namespace; pick another name."))
    }

  private def create(repo: String, full: String, kind: String, from: Revision, what: String): Ref = ms.tx { c =>
    pointingBack(c)
    requireRepo(c, repo)
    MetaDao.getRef(c, repo, full).foreach(r => throw new RefExistsException(
      s"$what already exists in '$repo' (at ${r.image.take(12)}). Pick another name" +
        (if (kind == RefKind.Branch) " or reset the branch." else "; tags and locks never move.")))
    requireFreeName(c, repo, full.substring(full.indexOf('/') + 1), what)
    val target = from match {
      case Revision.Spec(spec) if Reflog.parseId(spec).isDefined => fromReflog(c, repo, Reflog.parseId(spec).get)
      case _ => engine.resolver.resolve(c, repo, from).hash
    }
    val ref = Ref(full, kind, target, engine.now())
    Sql.unique(MetaDao.insertRef(c, repo, ref, engine.cause(Cause.Create, from match {
      case Revision.Spec(spec) => s"from $spec"
      case _ => ""
    })))(new RefExistsException(s"$what was just created in '$repo' by another writer."))
    ref
  }

  /**
   * The image reflog entry `seq` of `repo` restores ([[ReflogEntry.image]]): REF_NOT_FOUND when there is no such
   * entry or it names no image (a protection rule's); IMAGE_NOT_FOUND when its image is no longer recorded.
   */
  private def fromReflog(c: java.sql.Connection, repo: String, seq: Long): String = {
    val e = Reflog.entry(c, repo, seq).getOrElse {
      val last = Reflog.entries(c, repo, newestFirst = true).headOption.map(_.seq).getOrElse(0L)
      throw new RefNotFoundException(s"Reflog entry ${Reflog.idOf(seq)} does not exist in '$repo' (its reflog has " +
        s"entries 1 to $last). Nothing was created. List the entries with the reflog (the $$reflog table).")
    }
    val image = e.image.getOrElse(throw new RefNotFoundException(s"Reflog entry ${e.id} of '$repo' (${e.operation} of " +
      s"${e.ref}) names no image. Nothing was created. Pick an entry of a branch, tag or lock."))
    if (MetaDao.getImage(c, repo, image).isEmpty)
      throw new ImageNotFoundException(s"Image ${image.take(12)} of reflog entry ${e.id} is no longer in '$repo'. Nothing was created.")
    Retention.refuse(c, repo, image) // an image gc expired is VERSION_EXPIRED, as a revision naming it is
    image
  }

  /**
   * The first step of a transaction that may point a ref at an old image (a reset, a ref created from a revision or
   * a reflog entry): the generation lock that commits and gc's expiry take too. So the move and an expiry are
   * serialized also on PostgreSQL (READ COMMITTED): either the expiry committed first, and the move's resolution
   * (below the lock, reading the latest committed state) sees the image expired (VERSION_EXPIRED, nothing moves), or
   * the move committed first, and the expiry's plan sees the ref and keeps its image.
   */
  private def pointingBack(c: java.sql.Connection): Unit = MetaDao.lockGeneration(c, bump = false)

  private def list(repo: String, kind: String): Seq[Ref] = ms.read { c =>
    requireRepo(c, repo)
    MetaDao.listRefs(c, repo).filter(_.kind == kind)
  }

  private def delete(repo: String, full: String, what: String): Unit = ms.tx { c =>
    requireRepo(c, repo)
    if (!MetaDao.deleteRef(c, repo, full, engine.cause(Cause.Delete))) throw new RefNotFoundException(s"$what does not exist in '$repo'.")
  }

  // ---- branches
  def branches(repo: String): Seq[Ref] = list(repo, RefKind.Branch)

  def createBranch(repo: String, name: String, from: Revision): Ref = {
    Names.validate(Names.Branch, name)
    create(repo, Ref.branch(name), RefKind.Branch, from, s"Branch '$name'")
  }

  def deleteBranch(repo: String, name: String): Unit = {
    Names.validate(Names.Branch, name)
    ms.tx { c =>
      requireRepo(c, repo)
      if (MetaDao.getRef(c, repo, Ref.branch(name)).isDefined) engine.protections.guard(c, repo, name, Move.Delete)
      if (MetaDao.defaultBranch(c, repo).contains(name)) throw new ProtectedRefException(
        s"'$name' is the default branch of '$repo' and cannot be deleted. Make another branch the default first.")
      if (!MetaDao.deleteRef(c, repo, Ref.branch(name), engine.cause(Cause.Delete)))
        throw new RefNotFoundException(s"Branch '$name' does not exist in '$repo'.")
    }
  }

  def renameBranch(repo: String, from: String, to: String): Unit = {
    Names.validate(Names.Branch, from); Names.validate(Names.Branch, to)
    ms.tx { c =>
      requireRepo(c, repo)
      if (MetaDao.getRef(c, repo, Ref.branch(from)).isEmpty)
        throw new RefNotFoundException(s"Branch '$from' does not exist in '$repo'.")
      engine.protections.guard(c, repo, from, Move.Rename)
      if (MetaDao.getRef(c, repo, Ref.branch(to)).nonEmpty)
        throw new RefExistsException(s"Branch '$to' already exists in '$repo'.")
      requireFreeName(c, repo, to, s"Branch '$to'")
      Sql.unique(MetaDao.renameRef(c, repo, Ref.branch(from), Ref.branch(to), engine.cause(Cause.Rename)))(
        new RefExistsException(s"Branch '$to' was just created in '$repo' by another writer."))
      if (MetaDao.defaultBranch(c, repo).contains(from)) MetaDao.setDefaultBranch(c, repo, to, engine.cause(Cause.Rename))
    }
  }

  /** Makes an existing branch the repository's default (what reads and writes use when no branch is named). */
  def setDefaultBranch(repo: String, name: String): Ref = {
    Names.validate(Names.Branch, name)
    ms.tx { c =>
      requireRepo(c, repo)
      val ref = MetaDao.getRef(c, repo, Ref.branch(name)).getOrElse(throw new RefNotFoundException(
        s"Branch '$name' does not exist in '$repo'; create it first, then make it the default."))
      MetaDao.setDefaultBranch(c, repo, name, engine.cause(Cause.DefaultBranch))
      ref
    }
  }

  /**
   * Moves a branch to another image (history is kept). `expected` guards against concurrent moves. `merge`: the
   * move is a merge's fast-forward (the caller checked that `to` descends from `expected`); protection rules
   * decide on the kind of move.
   */
  def resetBranch(repo: String, name: String, to: Revision, expected: Option[String] = None, merge: Boolean = false): Ref = {
    Names.validate(Names.Branch, name)
    val moved = ms.tx { c =>
      pointingBack(c)
      requireRepo(c, repo)
      val full = Ref.branch(name)
      val cur = MetaDao.getRef(c, repo, full).getOrElse {
        if (MetaDao.getRef(c, repo, Ref.tag(name)).isDefined)
          throw new ImmutableRefException(s"'$name' is a tag of '$repo'; tags never move. Reset a branch instead.")
        throw new RefNotFoundException(s"Branch '$name' does not exist in '$repo'.")
      }
      val target = engine.resolver.resolve(c, repo, to)
      val old = expected.getOrElse(cur.image)
      engine.protections.guard(c, repo, name, Move.Reset(engine.ancestry.isAncestor(c, repo, cur.image, target.hash), merge))
      if (!MetaDao.casRef(c, repo, full, old, target.hash, engine.cause(if (merge) Cause.Merge else Cause.Reset))) throw new RefConflictException(
        s"Branch '$name' of '$repo' is at ${cur.image.take(12)}, not at ${old.take(12)}. Nothing was changed.")
      cur.copy(image = target.hash)
    }
    engine.moves.announce(BranchMoved(repo, name, moved.image, None))
    moved
  }

  // ---- tags
  def tags(repo: String): Seq[Ref] = list(repo, RefKind.Tag)

  def createTag(repo: String, name: String, at: Revision): Ref = {
    Names.validate(Names.Tag, name)
    create(repo, Ref.tag(name), RefKind.Tag, at, s"Tag '$name'")
  }

  def deleteTag(repo: String, name: String): Unit = {
    Names.validate(Names.Tag, name)
    delete(repo, Ref.tag(name), s"Tag '$name'")
  }

  // ---- locks
  def locks(repo: String, namespace: Option[String] = None): Seq[Ref] = {
    namespace.foreach(Names.validate(Names.LockNamespace, _))
    list(repo, RefKind.Lock).filter(r => namespace.forall(ns => r.shortName.startsWith(ns + ":")))
  }

  def createLock(repo: String, namespace: String, name: String, at: Revision): Ref = {
    Names.validate(Names.LockNamespace, namespace); Names.validate(Names.LockName, name)
    create(repo, Ref.lock(namespace, name), RefKind.Lock, at, s"Lock '$namespace:$name'")
  }

  def releaseLock(repo: String, namespace: String, name: String): Unit = {
    Names.validate(Names.LockNamespace, namespace); Names.validate(Names.LockName, name)
    delete(repo, Ref.lock(namespace, name), s"Lock '$namespace:$name'")
  }

  /** Every ref of the repository, of any kind. */
  def all(repo: String): Seq[Ref] = ms.read { c => requireRepo(c, repo); MetaDao.listRefs(c, repo) }
}
