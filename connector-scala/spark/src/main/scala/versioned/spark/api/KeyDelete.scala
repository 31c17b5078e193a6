package versioned.spark.api

import scala.util.Try
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.CatalystTypeConverters.convertToScala
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LocalRelation}
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.sources
import org.apache.spark.sql.types.StructType
import versioned.core.ChangeKind
import versioned.spark.session.TableSnapshot
import versioned.spark.format.TableLayout
import versioned.spark.read.{KeyLookup, LocalLookup}

/**
 * `deleteWhere` by a few keys, on the driver: when the condition restricts the first primary-key column to
 * at most [[LocalLookup.MaxKeys]] values (`id IN (...)`, `id = 1 OR id = 2`, either AND other conditions),
 * the rows it matches are found by a [[LocalLookup]] (the pages that may hold those keys, read by the
 * driver, no Spark job) and the whole condition is evaluated on them. Deleting a few rows by key then costs
 * about what writing their tombstones costs.
 */
private[spark] object KeyDelete extends PredicateHelper {
  /**
   * The DIFF rows (the table's columns, the key's values and nulls, then the change kind) deleting the rows
   * of `snapshot` (of `layout`, loaded only when the condition qualifies) that `condition` matches, when it
   * is a lookup of at most `maxRows` rows that the driver can do; None when the general path must run (no
   * key lookup in the condition, too many keys or rows, a key-less table, a condition this analysis cannot
   * take, which the general path then reports).
   */
  def rows(spark: SparkSession, layout: TableLayout, snapshot: => TableSnapshot, condition: String,
           maxRows: Long): Option[IndexedSeq[InternalRow]] = {
    if (layout.hidden) return None
    val schema = layout.physicalSchema
    for {
      (cond, output) <- analyzed(spark, schema, condition)
      filters = splitConjunctivePredicates(cond).flatMap(keyFilter)
      lookup <- KeyLookup.fromFilters(layout, filters) if lookup.values.size <= math.min(maxRows, LocalLookup.MaxKeys.toLong)
      read = StructType(schema.filter(f => layout.keyColumns.contains(f.name) || cond.references.exists(_.name == f.name)))
      attrs = read.fieldNames.toSeq.map(n => output.find(_.name == n).get)
      // interpreted: a few rows are evaluated, and generating code for a condition of many values costs more
      matches = Predicate.createInterpreted(BindReferences.bindReference(cond, AttributeSeq(attrs)))
      found = LocalLookup.rows(snapshot, read, filters).filter(matches.eval) if found.size <= maxRows
    } yield {
      val keyOrdinals = schema.fields.map(f => Option.when(layout.keyColumns.contains(f.name))(read.fieldIndex(f.name)))
      found.map { r =>
        val values = keyOrdinals.zip(schema.fields).map { case (o, f) => o.map(r.get(_, f.dataType)).orNull }
        new GenericInternalRow((values :+ ChangeKind.Delete).toArray[Any]): InternalRow
      }
    }
  }

  /**
   * A data source filter implied by `e` (true for every row `e` matches) that can restrict a column to a set
   * of values: `=`, `<=>` and `IN` between a column and constants, and OR / AND of those (an AND keeps the
   * side it can translate). The scan prunes with it ([[KeyLookup.fromFilters]]); the whole condition is
   * evaluated on the rows read.
   */
  private def keyFilter(e: Expression): Option[sources.Filter] = {
    def value(v: Expression) = convertToScala(v.eval(), v.dataType)
    // a column, also under the cast to its own type that the analyzer may add (`IN` coerces every side)
    object Column {
      def unapply(x: Expression): Option[Attribute] = x match {
        case a: Attribute => Some(a)
        case c: Cast if c.child.isInstanceOf[Attribute] && c.child.dataType == c.dataType => Some(c.child.asInstanceOf[Attribute])
        case _ => None
      }
    }
    e match {
      case And(l, r) => (keyFilter(l), keyFilter(r)) match {
        case (Some(a), Some(b)) => Some(sources.And(a, b))
        case (a, b) => a.orElse(b)
      }
      case Or(l, r) => for { a <- keyFilter(l); b <- keyFilter(r) } yield sources.Or(a, b)
      case EqualTo(Column(a), v) if v.foldable => Some(sources.EqualTo(a.name, value(v)))
      case EqualTo(v, Column(a)) if v.foldable => Some(sources.EqualTo(a.name, value(v)))
      case EqualNullSafe(Column(a), v) if v.foldable => Some(sources.EqualNullSafe(a.name, value(v)))
      case EqualNullSafe(v, Column(a)) if v.foldable => Some(sources.EqualNullSafe(a.name, value(v)))
      case In(Column(a), vs) if vs.forall(_.foldable) => Some(sources.In(a.name, vs.map(value).toArray))
      case InSet(Column(a), vs) => Some(sources.In(a.name, vs.iterator.map(convertToScala(_, a.dataType)).toArray))
      case _ => None
    }
  }

  /**
   * The condition resolved over the table's columns, with those columns; None when it cannot be used here. A key set
   * ([[simplyResolved]]) is resolved directly; any other condition is analyzed, as a filter over an empty relation (no
   * DataFrame is built around it).
   */
  private def analyzed(spark: SparkSession, schema: StructType, condition: String): Option[(Expression, Seq[Attribute])] = {
    val session = spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession]
    Try(session.sessionState.sqlParser.parseExpression(condition)).toOption.flatMap { parsed =>
      val relation = LocalRelation(DataTypeUtils.toAttributes(schema))
      simplyResolved(parsed, relation.output, session.sessionState.conf.resolver).map(_ -> relation.output).orElse(
        Try(session.sessionState.executePlan(Filter(parsed, relation)).analyzed).toOption.collect {
          case Filter(cond, child) if cond.deterministic && !SubqueryExpression.hasSubquery(cond) => (cond: Expression, child.output)
        })
    }
  }

  /**
   * `parsed` resolved over `output` without the analyzer, when it is only `=`, `<=>` and `IN` between a column (a
   * one-part name) and literals, under AND and OR, each literal of its column's type or an integer its integral column
   * holds: the analyzer would compare such values as they are (widening both sides to a type that holds both), and
   * analyzing a set of a few hundred keys costs tens of milliseconds, more than looking them up. None for any other
   * condition (the analyzer resolves it, with its coercions and errors).
   */
  def simplyResolved(parsed: Expression, output: Seq[Attribute],
                     resolver: org.apache.spark.sql.catalyst.analysis.Resolver): Option[Expression] = {
    import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
    import org.apache.spark.sql.types._
    def column(e: Expression): Option[Attribute] = e match {
      case UnresolvedAttribute(Seq(name)) => output.filter(a => resolver(a.name, name)) match {
        case Seq(a) => Some(a)
        case _ => None
      }
      case _ => None
    }
    def integral(v: Any): Option[Long] = v match {
      case i: Int => Some(i.toLong)
      case l: Long => Some(l)
      case _ => None
    }
    def literal(e: Expression, to: DataType): Option[Expression] = e match {
      case Literal(null, _) => None
      case Literal(_, t) if t == to && (to.isInstanceOf[NumericType] || to == StringType || to == BooleanType) => Some(e)
      case Literal(v, IntegerType | LongType) => (integral(v), to) match {
        case (Some(n), LongType) => Some(Literal(n, LongType))
        case (Some(n), IntegerType) if n.isValidInt => Some(Literal(n.toInt, IntegerType))
        case (Some(n), ShortType) if n.isValidShort => Some(Literal(n.toShort, ShortType))
        case (Some(n), ByteType) if n.isValidByte => Some(Literal(n.toByte, ByteType))
        case _ => None
      }
      case _ => None
    }
    def compared(c: Expression, v: Expression)(make: (Attribute, Expression) => Expression): Option[Expression] =
      for { a <- column(c); l <- literal(v, a.dataType) } yield make(a, l)
    def resolve(e: Expression): Option[Expression] = e match {
      case And(l, r) => for { a <- resolve(l); b <- resolve(r) } yield And(a, b)
      case Or(l, r) => for { a <- resolve(l); b <- resolve(r) } yield Or(a, b)
      case EqualTo(c, v) => compared(c, v)(EqualTo(_, _)).orElse(compared(v, c)(EqualTo(_, _)))
      case EqualNullSafe(c, v) => compared(c, v)(EqualNullSafe(_, _)).orElse(compared(v, c)(EqualNullSafe(_, _)))
      case In(c, vs) if vs.nonEmpty => column(c).flatMap { a =>
        val ls = vs.flatMap(literal(_, a.dataType))
        Option.when(ls.size == vs.size)(In(a, ls))
      }
      case _ => None
    }
    resolve(parsed)
  }
}
