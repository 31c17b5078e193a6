package versioned.spark.write

import scala.collection.mutable
import org.scalatest.funsuite.AnyFunSuite

/** Background compaction's pacing, on a simulated clock: rests follow the work done since the last rest. */
class PacingSuite extends AnyFunSuite {
  private final class Sim(duty: Double) {
    var now = 0L
    val slept = mutable.ArrayBuffer.empty[Long]
    val pacing = new Pacing(duty, ns => { slept += ns; now += ns }, () => now)
    def work(ns: Long): Unit = now += ns
  }

  test("at duty 0.5 each rest is as long as the work before it; waits outside work are not counted") {
    val s = new Sim(0.5)
    s.work(300)
    s.pacing.rest()
    s.work(100)
    s.pacing.rest(() => s.now += 5000) // waiting for a write is not work
    s.work(40)
    s.pacing.rest()
    assert(s.slept.toSeq == Seq(300L, 100L, 40L))
  }

  test("at duty 0.25 a rest is three times the work; at 1 there is none") {
    val q = new Sim(0.25)
    q.work(100)
    q.pacing.rest()
    assert(q.slept.toSeq == Seq(300L))
    val full = new Sim(1.0)
    full.work(100)
    full.pacing.rest()
    assert(full.slept.isEmpty && full.pacing.owed() == 0L)
  }

  test("a rest is at most a minute, whatever the work before it") {
    val s = new Sim(0.1)
    s.work(Pacing.MaxRestNanos)
    assert(s.pacing.owed() == Pacing.MaxRestNanos)
  }

  test("a duty outside (0, 1] is refused") {
    Seq(0.0, -0.5, 1.5).foreach(d => intercept[IllegalArgumentException](new Pacing(d, _ => ())))
  }
}
