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
private[api] object KeyDelete extends PredicateHelper {
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
   * The condition analyzed over the table's columns, with those columns; None when it cannot be used here. The
   * filter is analyzed once, as a plan over an empty relation (no DataFrame is built around it).
   */
  private def analyzed(spark: SparkSession, schema: StructType, condition: String) = {
    val session = spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession]
    Try {
      val relation = LocalRelation(DataTypeUtils.toAttributes(schema))
      session.sessionState.executePlan(Filter(session.sessionState.sqlParser.parseExpression(condition), relation)).analyzed
    }.toOption.collect {
      case Filter(cond, child) if cond.deterministic && !SubqueryExpression.hasSubquery(cond) => (cond: Expression, child.output)
    }
  }
}
