package versioned.spark.format

import org.apache.spark.sql.types._
import versioned.core.{SchemaMismatchException, TableVersion}
import versioned.core.format.Reserved

/**
 * The physical shape of a table: user columns, the identity key, and the columns of SNAP and DIFF
 * objects. Tables without a primary key are keyed by all columns plus a hidden duplicate ordinal.
 */
private[versioned] final case class TableLayout(schema: StructType, primaryKey: Seq[String], hidden: Boolean) {
  /** Columns that identify a row, in key order. */
  val keyColumns: Seq[String] = if (hidden) schema.fieldNames.toSeq :+ Reserved.Dup else primaryKey
  /** Schema of SNAP objects (and of the merged rows a reader produces). */
  val physicalSchema: StructType = if (hidden) schema.add(StructField(Reserved.Dup, IntegerType, nullable = false)) else schema
  /** Schema of DIFF objects: the physical row plus the change kind. */
  val diffSchema: StructType = physicalSchema.add(StructField(Reserved.Change, ByteType, nullable = false))
  def keyFields: Seq[StructField] = keyColumns.map(physicalSchema(_))
  def keyTypes: Seq[DataType] = keyFields.map(_.dataType)
  def nonKeyColumns: Seq[String] = physicalSchema.fieldNames.toSeq.filterNot(keyColumns.contains)
  /**
   * The layout merges read SNAP rows in: key columns first (what conflation and the merge compare),
   * then `columns` (non-key columns, in the order given).
   */
  def keyFirst(columns: Seq[String]): StructType = StructType((keyColumns ++ columns).map(physicalSchema(_)))
  /** The layout DIFF rows are read in: [[keyFirst]], then the change kind. */
  def diffRead(columns: Seq[String]): StructType = keyFirst(columns).add(diffSchema(Reserved.Change))
  def schemaJson: String = schema.json
}

private[versioned] object TableLayout {
  def of(t: TableVersion): TableLayout =
    TableLayout(DataType.fromJson(t.schemaJson).asInstanceOf[StructType], t.primaryKey, t.hiddenKey)

  /**
   * Validates a requested key against a schema; an empty key makes a key-less (hidden key) table. Key columns are
   * named as the session resolves columns (case-insensitively unless `spark.sql.caseSensitive`), and the layout
   * records the schema's spelling.
   */
  def create(schema: StructType, requestedKey: Seq[String]): TableLayout = {
    val reserved = schema.fieldNames.filter(Reserved.isReserved)
    if (reserved.nonEmpty) throw new SchemaMismatchException(
      s"Column name(s) ${reserved.mkString(", ")} are reserved by versioned for internal use. Rename them.")
    val generated = schema.fieldNames.filter(Reserved.isGenerated)
    if (generated.nonEmpty) throw new SchemaMismatchException(
      s"Column name(s) ${generated.mkString(", ")} are names versioned gives the columns it adds to diffs, change " +
        "feeds and blame, where the table's own column would appear twice. Rename them. Nothing was committed.")
    val lower = schema.fieldNames.map(_.toLowerCase)
    if (lower.distinct.length != lower.length) throw new SchemaMismatchException(
      s"Duplicate column names in ${schema.simpleString}. Column names must be unique (case-insensitively).")
    // values are stored, keyed, ordered and compared byte for byte: a collation would make Spark's comparisons
    // (a changed value, a key match) disagree with the stored bytes, and updates that only change case get lost
    def collated(dt: DataType): Boolean = dt match {
      case s: StringType => s.collationId != StringType.collationId // StringType: UTF8_BINARY (CHAR/VARCHAR too)
      case a: ArrayType => collated(a.elementType)
      case m: MapType => collated(m.keyType) || collated(m.valueType)
      case s: StructType => s.fields.exists(f => collated(f.dataType))
      case _ => false
    }
    schema.fields.find(f => collated(f.dataType))
      .foreach(f => throw new SchemaMismatchException(s"Column '${f.name}' has type ${f.dataType.sql}: versioned " +
        "stores, keys and compares strings byte for byte (UTF8_BINARY), so a column with another collation would " +
        "treat changed values as unchanged. Declare it STRING (UTF8_BINARY) and apply the collation in queries " +
        "(COLLATE). Nothing was committed."))
    val caseSensitive = org.apache.spark.sql.SparkSession.getActiveSession
      .exists(_.conf.get("spark.sql.caseSensitive", "false").equalsIgnoreCase("true"))
    val primaryKey = requestedKey.map(k => if (caseSensitive || schema.fieldNames.contains(k)) k
      else schema.fieldNames.find(_.equalsIgnoreCase(k)).getOrElse(k))
    val repeated = primaryKey.groupBy(identity).collect { case (k, ks) if ks.size > 1 => k }.toSeq.sorted
    if (repeated.nonEmpty) throw new SchemaMismatchException(s"Primary key (${requestedKey.mkString(", ")}) names " +
      s"column(s) ${repeated.mkString(", ")} more than once. Name each key column once. Nothing was committed.")
    val missing = primaryKey.filterNot(schema.fieldNames.contains)
    if (missing.nonEmpty) throw new versioned.core.DataValidationException(versioned.core.ErrorClass.MissingKeyColumn,
      s"Primary key column(s) ${missing.mkString(", ")} are not in the schema (${schema.fieldNames.mkString(", ")}). " +
        "Name existing columns in the primaryKey option.")
    primaryKey.foreach { k =>
      val dt = schema(k).dataType
      if (!Values.supported(dt)) throw new SchemaMismatchException(
        s"Primary key column '$k' has type ${dt.simpleString}, which cannot be a key. Use a numeric, string, date, " +
          "timestamp, boolean or decimal column.")
    }
    Reserved.diffClashes(primaryKey, schema.fieldNames.toSeq.filterNot(primaryKey.contains)).headOption.foreach {
      case (k, v) => throw new SchemaMismatchException(s"Key column '$k' has the name a diff gives column '$v''s " +
        s"${if (k.toLowerCase.endsWith("_before")) "old" else "new"} value, so a diff's rows would have two columns " +
        s"'$k'. Rename one of them. Nothing was committed.")
    }
    if (primaryKey.isEmpty) schema.fields.find(f => !Values.supported(f.dataType)).foreach(f => throw new SchemaMismatchException(
      s"Column '${f.name}' has type ${f.dataType.simpleString}; a table without a primary key uses the whole row as " +
        "identity, so every column must be a numeric, string, date, timestamp, boolean or decimal. Declare a primary key."))
    TableLayout(StructType(schema.fields.map(f => f.copy(dataType = plainStrings(f.dataType)))), primaryKey,
      hidden = primaryKey.isEmpty)
  }

  /**
   * `dt` with CHAR(n) and VARCHAR(n) (which a CREATE TABLE may declare) as STRING: what Spark reads and writes
   * them as, so the data of later writes has the table's columns. Their length is not enforced.
   */
  private def plainStrings(dt: DataType): DataType = dt match {
    case _: CharType | _: VarcharType => StringType
    case a: ArrayType => a.copy(elementType = plainStrings(a.elementType))
    case m: MapType => m.copy(keyType = plainStrings(m.keyType), valueType = plainStrings(m.valueType))
    case s: StructType => StructType(s.fields.map(f => f.copy(dataType = plainStrings(f.dataType))))
    case other => other
  }

  def sameColumns(a: StructType, b: StructType): Boolean =
    a.length == b.length && a.fields.zip(b.fields).forall { case (x, y) =>
      x.name == y.name && DataType.equalsIgnoreNullability(x.dataType, y.dataType)
    }
}
