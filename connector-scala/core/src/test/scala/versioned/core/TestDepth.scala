package versioned.core

/**
 * How much of the seeded randomized suites a run covers. Every randomized case runs at the standard depth (`bin/test`,
 * CI): each kind of history, merge and SQL statement mix, with the seeds and history lengths its suite lists as
 * standard (fault-injection suites do not read it: they always fail every point they pick).
 * `VERSIONED_TEST_DEPTH=deep` (`bin/test --deep`) adds the further seeds and longer histories of each: the same
 * assertions over more random input, for a change to the format's rules or a release. The two depths
 * differ only in their input, never in what a case checks; docs/TESTING.md lists which suites read it.
 */
object TestDepth {
  /** True when the environment asks for the deep run. */
  val deep: Boolean = sys.env.get("VERSIONED_TEST_DEPTH").exists(_.trim.equalsIgnoreCase("deep"))

  /** `standard` at the standard depth, `deeper` at the deep one. */
  def apply[A](standard: A, deeper: A): A = if (deep) deeper else standard
}
