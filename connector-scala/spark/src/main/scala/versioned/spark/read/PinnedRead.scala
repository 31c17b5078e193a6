package versioned.spark.read

import org.apache.spark.sql.{DataFrame, SparkSession}
import versioned.spark.{TableIdent, VersionedOptions}

/**
 * The engine's own read of one table version: pinned by image hash, with the hidden duplicate ordinal of
 * key-less tables, optionally restricted to some fragments. Every internal re-read (planning a write, a
 * merge, a diff) goes through here.
 */
private[versioned] object PinnedRead {
  def table(spark: SparkSession, location: Map[String, String], ident: TableIdent, image: String,
            fragments: Option[Seq[Int]] = None): DataFrame = {
    val r = spark.read.format("versioned").options(location).option(VersionedOptions.Image, image)
      .option(VersionedOptions.IncludeHidden, "true")
    fragments.fold(r)(f => r.option(VersionedOptions.OnlyFragments, f.mkString(","))).load(ident.toString)
  }
}
