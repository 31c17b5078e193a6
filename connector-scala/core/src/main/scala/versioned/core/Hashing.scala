package versioned.core

import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest

object Hashing {
  val HashLength = 64
  private val Hex = "[0-9a-f]+".r

  def sha256Hex(parts: String*): String = {
    val md = MessageDigest.getInstance("SHA-256")
    parts.foreach { p =>
      val b = p.getBytes(UTF_8)
      md.update(java.nio.ByteBuffer.allocate(4).putInt(b.length).array())
      md.update(b)
    }
    hex(md.digest())
  }

  def hex(bytes: Array[Byte]): String = {
    val sb = new StringBuilder(bytes.length * 2)
    bytes.foreach(b => sb.append(f"${b & 0xff}%02x"))
    sb.toString
  }

  def looksLikeFullHash(s: String): Boolean = s.length == HashLength && Hex.matches(s)
  def looksLikePrefix(s: String): Boolean = s.length >= 4 && s.length <= HashLength && Hex.matches(s)

  /** Content hash of a table version: schema, key and the exact objects of every fragment. */
  def tableHash(t: TableVersion): String =
    sha256Hex(Seq("table", t.name, t.schemaJson, t.primaryKey.mkString("\u0000"), t.hiddenKey.toString) ++
      t.fragments.map(f => Json.write(f.lower.orNull) + "=" + f.objects.mkString(",")): _*)

  /** Content hash of an image (Wrgl-style): changes whenever data, schema, parents or commit metadata change. */
  def imageHash(parents: Seq[String], author: String, message: String, createdMs: Long,
                tables: Seq[(String, String)], actor: Option[Actor] = None): String =
    sha256Hex(Seq("image", parents.mkString(","), author, message, createdMs.toString) ++
      actor.toSeq.flatMap(a => Seq("actor", a.user, a.appId, a.client)) ++
      tables.sortBy(_._1).map { case (n, h) => s"$n=$h" }: _*)
}
