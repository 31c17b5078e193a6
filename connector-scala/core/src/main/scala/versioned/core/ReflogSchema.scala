package versioned.core

/**
 * Metastore schema version 4: the reflog (docs/FORMAT.md, "Reflog"; docs/AUDIT.md). `vc_reflog` holds every ref
 * movement of a repository, numbered by `seq` (1, 2, ... per repository) and hash-chained; `vc_reflog_heads`
 * holds each repository's last `seq` and hash: its row is locked (updated) by every append, so appends of one
 * repository are serialized and the chain stays linear, and a removed last entry is seen.
 */
private[core] object ReflogSchema {
  def v4: Seq[String] = Seq(
    """CREATE TABLE vc_reflog (repo VARCHAR(128) NOT NULL, seq BIGINT NOT NULL, ref VARCHAR(512) NOT NULL,
      old_image CHAR(64), new_image CHAR(64), operation VARCHAR(32) NOT NULL, who TEXT NOT NULL, app_id TEXT NOT NULL,
      client VARCHAR(16) NOT NULL, detail TEXT NOT NULL, at_ms BIGINT NOT NULL, prev_hash CHAR(64) NOT NULL,
      entry_hash CHAR(64) NOT NULL, PRIMARY KEY (repo, seq))""",
    """CREATE TABLE vc_reflog_heads (repo VARCHAR(128) PRIMARY KEY, seq BIGINT NOT NULL, entry_hash CHAR(64) NOT NULL)"""
  )
}
