package versioned.spark.merge

import org.apache.spark.sql.DataFrame
import versioned.core.Errors

/**
 * The options of a merge, cherry-pick or revert, validated in one place before anything is read.
 *
 * @param strategy       how conflicts are settled ([[Strategy]])
 * @param fastForward    `auto` (move the target when it is an ancestor of the source), `never` (always a
 *                       merge commit), `only` (refuse anything but a fast-forward)
 * @param dryRun         report what would happen, commit nothing
 * @param resolutions    per table, rows that settle its conflicts (the table's columns, plus an optional
 *                       boolean `_delete` column whose true rows delete their key)
 * @param allowUnrelated merge histories that share no commit (as if the base were empty)
 * @param squash         one commit with one parent (the target's head) holding the source's net change, its
 *                       message listing the squashed commits; never a fast-forward
 */
private[versioned] final case class MergeOptions(
    strategy: Strategy = Strategy.Fail,
    fastForward: String = MergeOptions.Auto,
    dryRun: Boolean = false,
    message: Option[String] = None,
    author: String = "",
    resolutions: Map[String, DataFrame] = Map.empty,
    allowUnrelated: Boolean = false,
    squash: Boolean = false,
    probe: Option[versioned.core.Image => Unit] = None)

private[versioned] object MergeOptions {
  val Auto = "auto"
  val Never = "never"
  val Only = "only"
  val FastForwards: Seq[String] = Seq(Auto, Never, Only)
  /** The boolean column of a resolution DataFrame whose true rows delete their key. */
  val DeleteColumn = "_delete"

  def apply(strategy: String, fastForward: String, dryRun: Boolean, message: String, author: String,
            resolutions: Map[String, DataFrame], allowUnrelated: Boolean, squash: Boolean): MergeOptions = {
    val s = Option(strategy).getOrElse("fail").trim.toLowerCase
    val st = Strategy.all.find(_.name == s).getOrElse(throw Errors.invalidOption(
      s"Unknown merge strategy '$strategy'. Use one of ${Strategy.all.map(_.name).mkString(", ")}."))
    val ff = Option(fastForward).getOrElse(Auto).trim.toLowerCase
    if (!FastForwards.contains(ff)) throw Errors.invalidOption(
      s"Unknown fast_forward value '$fastForward'. Use one of ${FastForwards.mkString(", ")}.")
    val res = Option(resolutions).getOrElse(Map.empty)
    if (res.nonEmpty && st != Strategy.Fail) throw Errors.invalidOption(
      s"resolutions settle conflicts row by row and strategy '${st.name}' settles them all from one side; pass one " +
        "or the other. Nothing was committed.")
    if (res.nonEmpty && ff == Only) throw Errors.invalidOption(
      "resolutions need a merge commit and fast_forward='only' refuses one. Nothing was committed.")
    if (squash && ff == Only) throw Errors.invalidOption(
      "A squash merge always records one new commit and fast_forward='only' refuses one; pass one or the other. " +
        "Nothing was committed.")
    MergeOptions(st, ff, dryRun, Option(message).filter(_.nonEmpty), Option(author).getOrElse(""), res, allowUnrelated,
      squash)
  }
}
