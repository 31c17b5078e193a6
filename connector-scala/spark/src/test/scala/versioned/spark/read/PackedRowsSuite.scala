package versioned.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

/**
 * [[PackedRows]]: every row reads back byte for byte, across chunk boundaries and for rows larger than a chunk;
 * an [[Overlay]] keeps only its packed rows.
 */
class PackedRowsSuite extends AnyFunSuite {
  private val schema = new StructType().add("id", LongType).add("s", StringType).add("kind", ByteType)
  private val project = UnsafeProjection.create(schema.fields.toSeq.zipWithIndex.map { case (f, o) => BoundReference(o, f.dataType, f.nullable) })

  private def row(id: Long, s: String): InternalRow =
    project(InternalRow(id, if (s == null) null else UTF8String.fromString(s), 1.toByte)).copy()

  private def assertSame(rows: Array[InternalRow], packed: PackedRows): Unit = {
    assert(packed.length == rows.length)
    val view = new UnsafeRow(3)
    rows.indices.foreach { i =>
      val (a, b, c) = (rows(i).asInstanceOf[UnsafeRow], packed(i), packed.pointTo(view, i))
      assert(a == b && a == c, s"row $i")
      assert(b.getLong(0) == i && Option(b.getUTF8String(1)).map(_.toString) == Option(rows(i).getUTF8String(1)).map(_.toString))
    }
    assert(packed.toArray.toSeq.map(_.copy()) == rows.toSeq)
  }

  test("rows read back as packed, in order, views re-pointed or new") {
    val rows = Array.tabulate(10000)(i => row(i, if (i % 5 == 0) null else "v" * (i % 40)))
    assertSame(rows, PackedRows(rows, 3))
    assert(PackedRows(Array.empty[InternalRow], 3).isEmpty)
  }

  test("rows spill over many chunks; a row larger than a chunk gets one of its own") {
    val big = "x" * (PackedRows.ChunkBytes + 100)
    val mid = "y" * (PackedRows.ChunkBytes / 3)
    val rows = Array.tabulate(12)(i => row(i, if (i == 5) big else if (i % 2 == 0) mid else "z"))
    val packed = PackedRows(rows, 3)
    assertSame(rows, packed)
    val data = rows.map(_.asInstanceOf[UnsafeRow].getSizeInBytes.toLong).sum
    assert(packed.heapBytes >= data && packed.heapBytes < data + 1024)
  }

  test("an overlay keeps its rows packed and holds no reference to the conflated rows it was built from") {
    var conflated = Array.tabulate[InternalRow](1000)(i => row(i, "v"))
    val ref = new java.lang.ref.WeakReference(conflated)
    val overlay = Overlay(conflated, Seq(LongType), 2)
    conflated = null
    var tries = 0
    while (ref.get != null && tries < 20) { System.gc(); Thread.sleep(10); tries += 1 }
    assert(ref.get == null, "the conflated rows stayed reachable (from the overlay)")
    assert(overlay.rows.length == 1000 && overlay.longKeys.get.toSeq == (0L until 1000L))
  }
}
