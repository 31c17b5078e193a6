package versioned.spark

import org.apache.spark.sql.SparkSession

/** Names the Spark jobs the connector starts, so the console and the UI say what they do. */
private[versioned] object Jobs {
  private val DescriptionKey = "spark.job.description" // SparkContext's job description property

  /** Runs `body` with job description `versioned: <what>`, then restores the caller's description. */
  def described[T](spark: SparkSession, what: String)(body: => T): T = {
    val sc = spark.sparkContext
    val previous = sc.getLocalProperty(DescriptionKey)
    sc.setJobDescription(s"versioned: $what")
    try body finally sc.setLocalProperty(DescriptionKey, previous)
  }
}
