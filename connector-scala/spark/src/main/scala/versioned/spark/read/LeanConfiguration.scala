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
  override def write(out: DataOutput): Unit = LeanConfiguration.write(getProps, out)
}

/**
 * A [[LeanConfiguration]] that is a `JobConf`: Spark's Parquet reader gives the configuration it was built with to a
 * Hadoop task context for every file it opens, and that context copies any configuration that is not a `JobConf` into
 * a new one (~1,100 properties, the largest cost of opening a one-row object on the driver); this one it uses as it
 * is. Only for readers that push no filter down (a reader that does sets its filter into that configuration per file),
 * and for Parquet writers of objects, which only read it.
 */
private[versioned] final class LeanJobConf(other: Configuration) extends org.apache.hadoop.mapred.JobConf(other) {
  override def write(out: DataOutput): Unit = LeanConfiguration.write(getProps, out)
}

private[versioned] object LeanConfiguration {
  /** Hadoop's layout of a configuration's properties (a count, then key, value and sources of each), without sources. */
  def write(props: java.util.Properties, out: DataOutput): Unit = {
    val entries = props.synchronized(props.stringPropertyNames().toArray(Array.empty[String]).map(k => k -> props.getProperty(k)))
    // built in memory and written at once
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
