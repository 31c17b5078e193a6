package versioned.spark.diff

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, JoinedRow}
import org.apache.spark.sql.types.StructType
import org.apache.spark.unsafe.types.UTF8String
import versioned.core.{Fragment, Hashing, ObjectKind, ObjectMeta, WarehouseConfig}
import versioned.spark.format.{TableLayout, Values}
import versioned.spark.session.VersionedOptions.{PriorChainColumn, PriorColumn}
import versioned.spark.read.{FragmentBounds, KeyLookup}

/**
 * Before-images (write option `beforeImages`, docs/DIFF.md): a DIFF written with them holds, in every row, the
 * key's row in the chain the DIFF was written on ([[PriorColumn]], null: the key was absent) and a hash of that
 * chain ([[PriorChainColumn]]). A diff across the DIFF then takes a key's before-values from it instead of
 * looking them up in the chain: only when the chain before the DIFF, where the diff finds it, has that hash (a
 * DIFF reused on another chain, by a rebase for instance, is looked up as any other).
 *
 * The commit pays the lookup the diff saves: [[lookup]] reads the touched fragments' chains for the keys
 * written, the way a fast diff reads them ([[FragmentRows.lookup]]).
 */
private[versioned] object PriorImages {
  /** Sides of fast-diff fragments whose extra DIFFs all had usable before-images, in this JVM (for tests). */
  private[versioned] val recordedSides = new java.util.concurrent.atomic.AtomicLong()

  /** The hash of a fragment's chain (object ids, oldest first) recorded with before-images. */
  def chainHash(chain: Seq[String]): String = Hashing.sha256Hex(("chain" +: chain): _*)

  /** Whether DIFFs of a table with this layout can hold before-images (a keyed table with non-key columns). */
  def supported(layout: TableLayout): Boolean = !layout.hidden && layout.nonKeyColumns.nonEmpty

  /** The struct of non-key columns a before-image holds. */
  def priorType(layout: TableLayout): StructType =
    StructType(layout.nonKeyColumns.map(c => layout.physicalSchema(c).copy(nullable = true)))

  /** Schema of DIFF objects with before-images: the DIFF columns, the chain hash, the prior row. */
  def diffSchema(layout: TableLayout): StructType =
    layout.diffSchema.add(PriorChainColumn, org.apache.spark.sql.types.StringType, nullable = false)
      .add(PriorColumn, priorType(layout), nullable = true)

  /** The before-images of one fragment's keys: appends them to that fragment's DIFF rows. */
  final class FragmentPriors(chain: String, priors: Array[InternalRow], width: Int, keyCount: Int, types: Seq[org.apache.spark.sql.types.DataType]) {
    private val hash = UTF8String.fromString(chain)
    /** DIFF row `diff` (in the layout's DIFF schema) of the `i`-th key looked up, with its before-image. */
    def attach(diff: InternalRow, i: Int): InternalRow = {
      val p = priors(i)
      val prior = if (p == null) null else new GenericInternalRow((keyCount until width).map(o => p.get(o, types(o))).toArray[Any])
      new JoinedRow(diff, new GenericInternalRow(Array[Any](hash, prior)))
    }
  }

  /**
   * The before-images of sorted key rows (`keys`: rows leading with the key columns) of each touched fragment
   * (index into `base`), looked up on the driver in the fragments' chains. None when the layout cannot hold them
   * ([[supported]]) or some object of those chains has no recorded metadata (a transaction's objects before it
   * commits): the DIFFs are written without before-images then.
   */
  def lookup(spark: SparkSession, config: WarehouseConfig, layout: TableLayout, base: Seq[Fragment],
             keys: Seq[(Int, Array[InternalRow])], metasOf: Seq[String] => Map[String, ObjectMeta]): Option[Map[Int, FragmentPriors]] = {
    if (!supported(layout)) return None
    val chained = keys.flatMap { case (f, _) => base(f).objects }.distinct
    val metas = metasOf(chained)
    if (!chained.forall(metas.contains)) return None
    val rowSchema = layout.keyFirst(layout.nonKeyColumns)
    val first = layout.keyFields.head
    val filter = Option.when(KeyLookup.supports(first.dataType))(
      KeyLookup.of(first, keys.flatMap(_._2).map(r => Values.fromInternal(r, 0, first.dataType)))).flatMap(_.filter)
    // only the lookup readers the chains need (each broadcasts a Hadoop configuration)
    val kinds = chained.map(metas(_).kind).toSet
    val readers = FastDiff.readers(spark, layout, rowSchema, filter, diffLookup = kinds(ObjectKind.Diff),
      snapLookup = kinds(ObjectKind.Snap))
    val bounds = FragmentBounds.of(layout, base)
    val found = versioned.spark.session.Jobs.onDriver(keys) { case (f, wanted) =>
      def file(id: String) = bounds(f).file(config, metas(id)) // the read rule
      f -> new FragmentRows(readers).lookup(FragmentTask.onPrefix(base(f).objects, metas, file), wanted)
    }
    val types = rowSchema.fields.map(_.dataType).toSeq
    Some(found.map { case (f, rows) =>
      f -> new FragmentPriors(chainHash(base(f).objects), rows, rowSchema.length, layout.keyColumns.size, types)
    }.toMap)
  }
}
