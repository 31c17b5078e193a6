package versioned.spark.session

import versioned.core.{InvalidNameException, Names}

/** `repo.table`, validated. */
private[versioned] final case class TableIdent(repo: String, table: String) {
  override def toString: String = s"$repo.$table"
}

private[versioned] object TableIdent {
  def parse(s: String): TableIdent = Option(s).map(_.split('.')) match {
    case Some(Array(r, t)) => TableIdent(Names.validate(Names.Repository, r), Names.validate(Names.Table, t))
    case _ => throw new InvalidNameException(
      s"Table path '$s' must have the form '<repository>.<table>', e.g. load(\"sales.orders\").")
  }
}
