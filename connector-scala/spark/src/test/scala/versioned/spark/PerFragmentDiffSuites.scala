package versioned.spark

import versioned.spark.session.Setting

/**
 * The oracle and property suites again with every commit writing one DIFF per fragment (`sharedDiffMaxRows` = 0):
 * at the default, their small fragments make the driver's multi-fragment commits shared DIFFs; both forms must
 * give the oracle's rows, diffs, change feeds and merges.
 */
private object PerFragment {
  val Conf: Map[String, String] = Map(Setting.SharedDiffMaxRows.key -> "0")
}

class RandomizedOraclePerFragmentSuite extends RandomizedOracleSuite {
  override protected def extraConf: Map[String, String] = super.extraConf ++ PerFragment.Conf
}

class DiffPropertyPerFragmentSuite extends diff.DiffPropertySuite {
  override protected def extraConf: Map[String, String] = super.extraConf ++ PerFragment.Conf
}

class MergeOraclePerFragmentSuite extends merge.MergeOracleSuite {
  override protected def extraConf: Map[String, String] = super.extraConf ++ PerFragment.Conf
}

class ChangelogPerFragmentSuite extends catalog.ChangelogSuite {
  override protected def extraConf: Map[String, String] = super.extraConf ++ PerFragment.Conf
}
