package versioned.core

/**
 * Metastore schema version 5: retention policies by ref (docs/FORMAT.md, "Metastore tables"; docs/SAFETY.md,
 * "Retention policies"). `vc_retention` holds each repository's policies, with the pattern's regular expression as the
 * library matches it; `vc_expired` the images garbage collection expired (their commit stays in `vc_images`, their
 * `vc_tables` rows are gone) and why, which a lookup of their tables reports ([[Retention.refuse]]).
 */
private[core] object RetentionSchema {
  val v5: Seq[String] = Seq(
    """CREATE TABLE vc_retention (repo VARCHAR(128) NOT NULL, pattern VARCHAR(200) NOT NULL,
      pattern_regex VARCHAR(1024) NOT NULL, keep_days INT, keep_commits INT, expire_branch_days INT,
      created_ms BIGINT NOT NULL, PRIMARY KEY (repo, pattern))""",
    """CREATE TABLE vc_expired (repo VARCHAR(128) NOT NULL, image_hash CHAR(64) NOT NULL, reason TEXT NOT NULL,
      expired_ms BIGINT NOT NULL, PRIMARY KEY (repo, image_hash))""")
}
