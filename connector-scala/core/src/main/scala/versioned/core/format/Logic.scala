package versioned.core.format

/**
 * Boolean operations over an engine's conditions: plain `Boolean`s on a driver, column expressions in a
 * distributed plan. Rules written over a `Logic` (the three-way cell rule, [[ThreeWayRule]]) are defined
 * once and evaluated by both.
 */
trait Logic[B] {
  def and(a: B, b: B): B
  def or(a: B, b: B): B
  def not(a: B): B
  def constant(v: Boolean): B
}

object Logic {
  implicit object Booleans extends Logic[Boolean] {
    override def and(a: Boolean, b: Boolean): Boolean = a && b
    override def or(a: Boolean, b: Boolean): Boolean = a || b
    override def not(a: Boolean): Boolean = !a
    override def constant(v: Boolean): Boolean = v
  }
}
