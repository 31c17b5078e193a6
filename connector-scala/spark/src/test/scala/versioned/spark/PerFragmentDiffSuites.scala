package versioned.spark

import org.scalactic.source.Position
import org.scalatest.Tag
import org.scalatest.funsuite.AnyFunSuite
import versioned.spark.session.Setting

/**
 * The oracle and property suites again with every commit writing one DIFF per fragment (`sharedDiffMaxRows` = 0):
 * at the default, their small fragments make the driver's multi-fragment commits shared DIFFs; both forms must
 * give the oracle's rows, diffs, change feeds and merges.
 *
 * Only the setting differs from the base suites, and it only changes commits made on the driver (LocalCommit) that
 * touch more than one fragment. So each rerun keeps the cases whose commits do that, one or two seeds of each kind
 * of randomized history; it leaves out cases whose writes all take the distributed path (`localCommitMaxRows` 0),
 * whose tables have one fragment, or that check inputs and plans rather than stored objects: those run the same
 * code at either setting, and their base suite runs them.
 */
private object PerFragment {
  val Conf: Map[String, String] = Map(Setting.SharedDiffMaxRows.key -> "0")
}

/** Registers only the base suite's tests named in `kept`; a kept name the base suite does not have fails the suite. */
trait PerFragmentCases extends AnyFunSuite {
  /** A def, not a val: the base suite's constructor registers its tests before this trait's fields exist. */
  protected def kept: Set[String]

  override protected def test(testName: String, testTags: Tag*)(testFun: => Any)(implicit pos: Position): Unit =
    if (kept(testName)) super.test(testName, testTags: _*)(testFun)(pos)

  require(kept.subsetOf(testNames), s"per-fragment cases not in the base suite: ${(kept -- testNames).mkString("; ")}")
}

class RandomizedOraclePerFragmentSuite extends RandomizedOracleSuite with PerFragmentCases {
  override protected def extraConf: Map[String, String] = super.extraConf ++ PerFragment.Conf
  // Left out: the composite key's history (the keyed read path with shared DIFFs off is the int key's, and the
  // composite key's diffs run in DiffPropertyPerFragmentSuite).
  override protected def kept: Set[String] = Set(
    "int primary key: random appends, upserts and overwrites, compacting at chain length 3",
    "key-less table with duplicate rows: random appends and overwrites, default compaction policy",
    "overwrites that change the schema or the primary key keep every version readable")
}

class DiffPropertyPerFragmentSuite extends diff.DiffPropertySuite with PerFragmentCases {
  override protected def extraConf: Map[String, String] = super.extraConf ++ PerFragment.Conf
  // Left out: the histories with before-images (a commit that records them never shares a DIFF) and the page
  // lookups, whose tables are one fragment (fragment.targetRows 1,000,000).
  override protected def kept: Set[String] = Set(
    "int key: fast path = whole comparison = oracle (branches, upserts, deletes, compaction, tail splits)",
    "composite string/long key with decimals: fast path = whole comparison = oracle",
    "key-less table with duplicates: fast path = whole comparison = oracle",
    "tail splits: appends past the largest key split a fragment, and diffs across the split follow the DIFFs")
}

class MergeOraclePerFragmentSuite extends merge.MergeOracleSuite with PerFragmentCases {
  override protected def extraConf: Map[String, String] = super.extraConf ++ PerFragment.Conf
  // Left out: the rounds "computed by Spark tasks" (their writes and merges run with localCommitMaxRows 0: no driver
  // commit) and further seeds. Round 2 merges cleanly both ways, round 6 has conflicts in both keyed tables,
  // settled by `theirs`, and a key-less table changed on one side; schema round 1 has conflicts over a dropped and
  // a widened column.
  override protected def kept: Set[String] = Set(
    "random merge round 2 equals the oracle",
    "random merge round 6 equals the oracle",
    "random merge with schema changes, round 1, equals the oracle")
}

class ChangelogPerFragmentSuite extends catalog.ChangelogSuite with PerFragmentCases {
  override protected def extraConf: Map[String, String] = super.extraConf ++ PerFragment.Conf
  // The other cases' tables hold at most a few rows (one fragment of 50) or check inputs, bounds and SQL forms.
  override protected def kept: Set[String] = Set(
    "a composite key over several fragments, with commit-time compaction and an overwrite",
    "a DIFF commit's feed reads its DIFFs and the parent's rows of its keys, not the table")
}
