package versioned.spark.merge

/** How conflicting cells are settled: not at all (the merge reports them and commits nothing), or from one side. */
private[versioned] sealed abstract class Strategy(val name: String)

private[versioned] object Strategy {
  case object Fail extends Strategy("fail")
  case object Ours extends Strategy("ours")
  case object Theirs extends Strategy("theirs")
  val all: Seq[Strategy] = Seq(Fail, Ours, Theirs)
}
