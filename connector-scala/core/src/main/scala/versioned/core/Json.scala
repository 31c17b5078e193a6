package versioned.core

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.module.scala.DefaultScalaModule

/** JSON for metastore columns (key bounds, min/max statistics, lists). */
object Json {
  private val mapper = new ObjectMapper().registerModule(DefaultScalaModule)
  def write(v: Any): String = mapper.writeValueAsString(v)
  def readSeq(s: String): Seq[Any] =
    if (s == null || s.isEmpty) Seq.empty else mapper.readValue(s, classOf[Seq[Any]])
  def readStrings(s: String): Seq[String] = readSeq(s).map(_.toString)
  def readMap(s: String): Map[String, Any] =
    if (s == null || s.isEmpty) Map.empty else mapper.readValue(s, classOf[Map[String, Any]])
}
