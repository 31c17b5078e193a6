package versioned.spark.read

import java.io.{ByteArrayOutputStream, DataOutput, DataOutputStream}
import java.nio.charset.StandardCharsets
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.io.WritableUtils

/**
 * A copy of a Hadoop configuration that serializes without the sources of its properties.
 *
 * Hadoop writes, for every property, the names of the files or code that set it, as one gzip stream per property:
 * about 8 ms for the 1,100 properties of a default configuration, paid by every Parquet reader Spark prepares
 * (each broadcasts its configuration), which made reader set-up the largest part of planning a key lookup.
 * Executors need only the values: a configuration read back from this one has the same properties and values,
 * each with "programmatically" as its source.
 */
private[versioned] final class LeanConfiguration(other: Configuration) extends Configuration(other) {
  override def write(out: DataOutput): Unit = {
    val props = getProps
    val entries = props.synchronized(props.stringPropertyNames().toArray(Array.empty[String]).map(k => k -> props.getProperty(k)))
    // Hadoop's layout (a count, then key, value and sources of each property), built in memory and written at once
    val buffer = new ByteArrayOutputStream(64 * 1024)
    val data = new DataOutputStream(buffer)
    def string(s: String): Unit = { // as `Text.writeString`: length, then UTF-8 bytes
      val bytes = s.getBytes(StandardCharsets.UTF_8)
      WritableUtils.writeVInt(data, bytes.length)
      data.write(bytes)
    }
    WritableUtils.writeVInt(data, entries.length)
    entries.foreach { case (k, v) =>
      string(k)
      string(v)
      WritableUtils.writeCompressedStringArray(data, null) // no sources
    }
    data.flush()
    out.write(buffer.toByteArray)
  }
}
