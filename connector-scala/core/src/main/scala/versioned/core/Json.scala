package versioned.core

import java.nio.charset.StandardCharsets.UTF_8
import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.module.scala.DefaultScalaModule

/** JSON for metastore columns (key bounds, min/max statistics, lists). */
object Json {
  private val mapper = new ObjectMapper().registerModule(DefaultScalaModule)
  def write(v: Any): String = mapper.writeValueAsString(v)
  def readSeq(s: String): Seq[Any] =
    if (s == null || s.isEmpty) Seq.empty else mapper.readValue(s, classOf[Seq[Any]])

  /** A JSON array as strings. Arrays of plain strings (no escapes), the usual case, skip Jackson. */
  def readStrings(s: String): Seq[String] =
    if (s == null || s.isEmpty) Seq.empty
    else {
      val plain = plainStrings(s.getBytes(UTF_8))
      if (plain != null) plain else readSeq(s).map(_.toString)
    }

  /** [[readStrings]] of UTF-8 bytes. */
  def readStrings(b: Array[Byte]): Seq[String] =
    if (b == null || b.length == 0) Seq.empty
    else {
      val plain = plainStrings(b)
      if (plain != null) plain else readSeq(new String(b, UTF_8)).map(_.toString)
    }

  def readMap(s: String): Map[String, Any] =
    if (s == null || s.isEmpty) Map.empty else mapper.readValue(s, classOf[Map[String, Any]])

  /** `[ "a" , "b" ]` of strings without escapes or control characters, else null (let Jackson decide). */
  private def plainStrings(s: Array[Byte]): List[String] = {
    val n = s.length
    def skipWs(from: Int): Int = {
      var i = from
      while (i < n && (s(i) == ' ' || s(i) == '\n' || s(i) == '\r' || s(i) == '\t')) i += 1
      i
    }
    var i = skipWs(0)
    if (i >= n || s(i) != '[') return null
    i = skipWs(i + 1)
    if (i < n && s(i) == ']') return if (skipWs(i + 1) == n) Nil else null
    val out = List.newBuilder[String]
    while (true) {
      if (i >= n || s(i) != '"') return null
      var j = i + 1
      while (j < n && s(j) != '"') {
        val b = s(j)
        if (b == '\\' || (b >= 0 && b < ' ')) return null // escapes and control characters; UTF-8 bytes are < 0
        j += 1
      }
      if (j >= n) return null
      out += new String(s, i + 1, j - i - 1, UTF_8)
      i = skipWs(j + 1)
      if (i >= n) return null
      s(i) match {
        case ',' => i = skipWs(i + 1)
        case ']' => return if (skipWs(i + 1) == n) out.result() else null
        case _ => return null
      }
    }
    null
  }
}
