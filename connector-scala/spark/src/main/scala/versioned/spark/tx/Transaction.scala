package versioned.spark.tx

import versioned.core.format.WriteMode

import org.apache.spark.sql.{DataFrame, SparkSession}
import versioned.core._
import versioned.spark.session.TableIdent
import versioned.spark.session.{Jobs, Settings, VersionedOptions, Warehouses}
import versioned.spark.read.PinnedRead
import versioned.spark.write._

/**
 * A multi-table transaction on one branch: writes, upserts and deletes on any number of tables of one
 * repository, recorded as **one image** (one commit, one parent) by [[commit]], or not at all.
 *
 * It starts from the branch's head ([[base]]) and sees that image plus its own changes (snapshot
 * isolation): each operation is planned like the write it names, on the transaction's current view of
 * its table (the start version, or the version an earlier operation of the transaction made), and its
 * objects are written at once under the transaction's write lease, but nothing is recorded until
 * [[commit]], which records every changed table in one metastore transaction. A failed operation changes
 * nothing in the transaction (it may go on, or be aborted). If the branch moved meanwhile, the commit lands
 * on the new head when the commits in between changed none of the tables the transaction writes; when they
 * changed some of them, but none of the keys the transaction changed there (keyed tables whose columns and
 * key did not change), the transaction's net changes of those tables are planned again on the new head
 * ([[Rebase]]); otherwise it raises REF_CONFLICT and commits nothing (run the transaction again). See
 * docs/TRANSACTIONS.md.
 *
 * Not thread-safe for concurrent operations of one transaction (they are serialized). Close it (or use
 * [[Transaction.run]]): an open transaction keeps its write lease, which holds back garbage collection.
 *
 * {{{
 *   Transaction.run(spark, "sales", message = "nightly load") { tx =>
 *     tx.write(orders, "orders", mode = "overwrite")
 *     tx.upsert(customers, "customers")
 *     tx.deleteWhere("events", "day < '2026-01-01'")
 *   }
 * }}}
 */
final class Transaction private (spark: SparkSession, engine: Engine, val repository: String, val branch: String,
                                 message: Option[String], val author: String, start: Option[Image], lease: Lease,
                                 settings: Settings) extends AutoCloseable {
  private val location = Warehouses.locationOf(engine.config)
  private val target = ObjectTarget(engine.config, lease.id)
  private var view = TxView(engine, repository, start)
  private var ended: Option[String] = None
  private var result: Option[CommitResult] = None
  private val done = scala.collection.mutable.ArrayBuffer.empty[String]
  private val net = scala.collection.mutable.Map.empty[String, Option[DataFrame]]

  /** The head the transaction started from (None: its commit creates the branch, and the repository if needed). */
  def base: Option[String] = start.map(_.hash)
  def isOpen: Boolean = synchronized(ended.isEmpty)
  /** Tables whose content the transaction changed so far, sorted. */
  def changedTables: Seq[String] = synchronized(view.changed)
  /** What [[commit]] recorded (None before, and when there was nothing to commit). */
  def committed: Option[CommitResult] = synchronized(result)

  /**
   * Writes `df` to `table` like `df.write.format("versioned").mode(mode)`: `append` (new keys; a key that
   * exists is KEY_EXISTS) or `overwrite` (the data becomes the table's content). `primaryKey`
   * (comma-separated; null: the table's key) is needed when the transaction creates the table.
   */
  def write(df: DataFrame, table: String, mode: String = "append", primaryKey: String = null): Unit = {
    val m = Option(mode).map(_.trim.toLowerCase).getOrElse("append")
    if (m != "append" && m != "overwrite") throw Errors.invalidOption(s"Invalid mode '$mode' for a transaction " +
      "write: expected 'append' or 'overwrite' (an upsert inserts or updates by key).")
    operation(s"$m $table")(dataWrite(df, table, m, VersionedOptions.PrimaryKey -> primaryKey))
  }

  /**
   * Inserts the rows of `df` into `table`, updating rows whose primary key exists (the table is not read).
   * `deleteColumn` (null: none) names a boolean column whose true rows delete their key instead.
   */
  def upsert(df: DataFrame, table: String, primaryKey: String = null, deleteColumn: String = null): Unit =
    operation(s"upsert $table")(dataWrite(df, table, "append", VersionedOptions.Upsert -> "true",
      VersionedOptions.PrimaryKey -> primaryKey, VersionedOptions.DeleteColumn -> deleteColumn))

  /** Deletes the rows of `table` (as the transaction sees it) matching the SQL `condition`; returns how many. */
  def deleteWhere(table: String, condition: String): Long = {
    if (condition == null || condition.trim.isEmpty) throw Errors.invalidOption(
      "deleteWhere needs a SQL condition, e.g. \"id < 10\". To delete every row, pass \"true\".")
    operation(s"delete from $table where $condition") {
      val snap = existing(table)
      val deletes = new RowDeletes(spark, PinnedRead.version(spark, location, snap, hidden = true), condition,
        s"delete from $repository.$table where $condition (transaction)")
      try {
        if (deletes.count > 0) stage(request(table, WriteMode.Changes), StagedInput(deletes.changes))
        deletes.count
      } finally deletes.release()
    }
  }

  /** `table` as the transaction sees it: the start image's version, or the version its operations made. */
  def read(table: String): DataFrame = synchronized {
    open("read")
    PinnedRead.version(spark, location, existing(table), hidden = false)
  }

  /**
   * Records every table the transaction changed as one image on [[branch]] (one metastore transaction),
   * and ends the transaction, whatever the outcome. Returns the commit, or None when nothing changed
   * (nothing is recorded). Then compacts the changed tables (best effort, as after any write).
   */
  def commit(): Option[CommitResult] = {
    val r = synchronized {
      open("commit")
      var how = "its commit failed"
      try {
        result = if (view.changed.isEmpty) None
        else Some(Jobs.described(spark, s"commit transaction on $repository@$branch") {
          // a concurrent commit to a table the transaction changed: planned again on the new head when it
          // touched none of the transaction's keys there (as a computed change is, write/Rebase)
          try Rebase.retrying(engine, start) { on =>
            engine.commit(repository, branch, on.map(_.hash), updatesOn(on), author, commitMessage, Some(lease))
          } { (from, to) => moved(Some(from), to).forall(t => netChanges(t).exists(changes =>
            Rebase.disjointChanges(spark, engine, request(t, WriteMode.Changes), changes, from, to)))
          } catch { case m: BranchMovedException => throw conflict(m) }
        })
        how = if (result.isEmpty) "committed: nothing had changed" else "committed"
        result
      } finally end(how)
    }
    r.foreach { c =>
      c.changedTables.filter(view.staged.contains).foreach(t =>
        CommitPlanner.compactAfter(spark, engine, request(t, WriteMode.Changes), c.image, settings))
    }
    r
  }

  /** Ends the transaction without committing: nothing it did is recorded (its objects go with the next gc). */
  def abort(): Unit = synchronized { open("abort"); end("aborted") }

  /** Aborts the transaction if it is still open; does nothing otherwise. */
  override def close(): Unit = synchronized { if (ended.isEmpty) end("aborted") }

  // ---- internals

  private def open(what: String): Unit = ended.foreach { how =>
    throw new TransactionClosedException(s"Cannot $what: the transaction on branch '$branch' of '$repository' " +
      s"has ended ($how). Begin a new transaction.")
  }

  /**
   * The updates to commit on `head`: the transaction's versions, except that each table that changed
   * between the start and `head` gets the transaction's net changes planned again on its version there.
   */
  private def updatesOn(head: Option[Image]): Map[String, TableUpdate] = head match {
    case Some(h) if !start.map(_.hash).contains(h.hash) =>
      view.updates ++ moved(start, h).map(t => t -> CommitPlanner.plan(spark, engine, request(t, WriteMode.Changes),
        StagedInput(netChanges(t).get), Some(h), target))
    case _ => view.updates
  }

  /** Tables the transaction wrote whose committed version differs between `from` and `to`. */
  private def moved(from: Option[Image], to: Image): Seq[String] = view.staged.keys.toSeq.sorted.filter { t =>
    from.flatMap(f => engine.tableOption(repository, f.hash, t)).map(_.hash) != engine.tableOption(repository, to.hash, t).map(_.hash)
  }

  /** What the transaction changed in `table` since its start, computed once, when needed (None: cannot be replanned). */
  private def netChanges(table: String): Option[DataFrame] = net.getOrElseUpdate(table, for {
    h <- start.filter(h => engine.tableOption(repository, h.hash, table).isDefined)
    now <- view.snapshot(table)
    changes <- Rebase.netChanges(spark, location, versioned.spark.session.TableSnapshot.load(engine, repository, table, h), now)
  } yield changes.persist(org.apache.spark.storage.StorageLevel.MEMORY_AND_DISK))

  private def end(how: String): Unit = if (ended.isEmpty) {
    ended = Some(how)
    net.values.flatten.foreach(_.unpersist())
    engine.leases.close(lease)
  }

  /** Runs one operation: the transaction must be open; a failure leaves the view as it was. */
  private def operation[T](label: String)(body: => T): T = synchronized {
    open(label.takeWhile(_ != ' '))
    val out = try body catch { case t: Throwable => throw Transaction.typed(t) }
    done += label
    out
  }

  private def ident(table: String): TableIdent = TableIdent.parse(s"$repository.$table")

  /** The table in the current view, or TABLE_NOT_FOUND. */
  private def existing(table: String): versioned.spark.session.TableSnapshot = view.snapshot(ident(table).table).getOrElse(
    throw new TableNotFoundException(repository, table, s"the transaction on branch '$branch'"))

  /**
   * A DSv2 write of `df` (mode append or overwrite) to a table value whose staged rows the write hands to [[stage]]
   * (it commits nothing): the plan Spark runs for a write to the format, over a relation of that value.
   */
  private def dataWrite(df: DataFrame, table: String, mode: String, options: (String, String)*): Unit = {
    import org.apache.spark.sql.catalyst.expressions.Literal
    import org.apache.spark.sql.catalyst.plans.logical.{AppendData, OverwriteByExpression}
    import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
    val opts = location ++ options.filter(_._2 != null).toMap + (VersionedOptions.Branch -> branch)
    val handler: DeferredWrites.Handler = (req, input) => stage(req, input)
    val value = versioned.spark.VersionedTable.fromOptions(spark, ident(table).toString, opts, Some(df.schema)).copy(deferred = Some(handler))
    val relation = DataSourceV2Relation.create(value, None, None,
      new org.apache.spark.sql.util.CaseInsensitiveStringMap(scala.jdk.CollectionConverters.MapHasAsJava(opts).asJava))
    val query = df.queryExecution.analyzed
    val command = mode match {
      case "append" => AppendData.byName(relation, query, opts)
      case "overwrite" => OverwriteByExpression.byName(relation, query, Literal.TrueLiteral, opts)
      case other => throw Errors.invalidOption(s"A transaction writes with mode append or overwrite, not '$other'.")
    }
    spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession].sessionState.executePlan(command).assertCommandExecuted()
  }

  /** Plans a write's staged rows on the current view of its table; the view moves on only if that succeeds. */
  private def stage(req: WriteRequest, input: StagedInput): Unit = synchronized {
    open("write")
    if (req.ident.repo != repository) throw Errors.invalidOption(s"A transaction on '$repository' cannot write " +
      s"${req.ident}: all its tables belong to one repository.")
    req.deleteColumn.foreach(ChangeSets.checkDeleteColumn(input.schema, _))
    val table = req.ident.table
    val current = view.snapshot(table)
    val base = CommitPlanner.Base(current.map(_.version), () => PinnedRead.version(spark, location, current.get, hidden = true))
    val put = Jobs.described(spark, s"${req.mode.toString.toLowerCase} ${req.ident} (transaction)") {
      CommitPlanner.plan(spark, req, input, base, target)
    }
    view = view.withTable(table, put)
  }

  private def request(table: String, mode: WriteMode): WriteRequest =
    WriteRequest(ident(table), Some(branch), mode, None, upsert = false, author, commitMessage, location)

  private def commitMessage: String = message.getOrElse {
    val ops = if (done.size <= 8) done.mkString("; ") else (done.take(8) :+ s"${done.size - 8} more").mkString("; ")
    s"transaction: $ops"
  }

  private def conflict(m: BranchMovedException): RefConflictException = new RefConflictException(
    s"Branch '$branch' of '$repository' moved to ${m.head.map(_.take(12)).getOrElse("?")} while the transaction ran " +
      s"(from ${base.map(_.take(12)).getOrElse("an empty branch")}), and the commits in between changed " +
      s"${m.tables.mkString(", ")}, which the transaction changes too, in a way its changes cannot be planned again " +
      "on (they touched keys the transaction changed, or the table is key-less, new, or its columns or key changed). " +
      "Nothing of the transaction was committed; run it again on the new head.")
}

object Transaction {
  /**
   * Opens a transaction on `branch` of `repository` (null: the default branch), which must be a branch
   * (not a tag); a repository that does not exist yet is created by the commit, with the branch.
   * `message` (null: a summary of the operations) and `author` (null: `spark.versioned.author`, else the
   * JVM user) describe the commit; `options` locate the warehouse (`warehouse`, `metastoreUrl`).
   */
  def begin(spark: SparkSession, repository: String, branch: String = null, message: String = null,
            author: String = null, options: Map[String, String] = Map.empty): Transaction = {
    val settings = Settings.of(spark)
    Names.validate(Names.Repository, repository)
    val engine = Warehouses.engine(spark, options)
    val b = Option(branch).filter(_.nonEmpty).getOrElse(engine.defaultBranchOrConfig(repository))
    val head = engine.writableHead(repository, b) // a tag, or a missing branch of an existing repository: an error
    val lease = engine.leases.open(repository, "transaction")
    new Transaction(spark, engine, repository, b, Option(message).filter(_.nonEmpty), Settings.of(spark).authorOr(Option(author)),
      head, lease, settings)
  }

  /**
   * Runs `body` in a transaction and commits it when `body` returns (unless `body` committed or aborted
   * it); when `body` throws, aborts it and rethrows. Returns the commit (None: nothing changed, or aborted).
   */
  def run(spark: SparkSession, repository: String, branch: String = null, message: String = null,
          author: String = null, options: Map[String, String] = Map.empty)(body: Transaction => Unit): Option[CommitResult] = {
    val tx = begin(spark, repository, branch, message, author, options)
    try body(tx) catch { case t: Throwable => tx.close(); throw t }
    if (tx.isOpen) tx.commit() else tx.committed
  }

  /** The first versioned error in a failure's cause chain (Spark wraps a write's errors), else the failure. */
  private[tx] def typed(t: Throwable): Throwable =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(64).collectFirst { case v: VersionedException => v }.getOrElse(t)
}
