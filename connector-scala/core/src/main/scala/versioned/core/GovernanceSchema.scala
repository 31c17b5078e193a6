package versioned.core

/**
 * Metastore schema version 3: protected branches (docs/FORMAT.md, "Metastore tables"; docs/GOVERNANCE.md).
 * `vc_branch_rules` holds each repository's rules, with the pattern's regular expression as the library
 * matches it ([[versioned.core.governance.BranchRule.regex]]). On PostgreSQL a trigger on `vc_refs` refuses,
 * for any client (also one that bypasses the library with plain SQL), a move of a protected branch that its
 * rules forbid: a deletion or rename unless `allow_delete`; unless `allow_force`, a move that is not a merge
 * commit on the head (`require_merge`) or does not descend from the head. On SQLite the library enforces them.
 */
private[core] object GovernanceSchema {
  private val rules =
    """CREATE TABLE vc_branch_rules (repo VARCHAR(128) NOT NULL, pattern VARCHAR(200) NOT NULL,
      pattern_regex VARCHAR(1024) NOT NULL, require_merge INT NOT NULL, allow_force INT NOT NULL,
      allow_delete INT NOT NULL, required_checks TEXT NOT NULL, created_ms BIGINT NOT NULL, PRIMARY KEY (repo, pattern))"""

  private val checks =
    """CREATE TABLE vc_checks (repo VARCHAR(128) NOT NULL, name VARCHAR(128) NOT NULL, kind VARCHAR(16) NOT NULL,
      table_name VARCHAR(128), expression TEXT NOT NULL, severity VARCHAR(8) NOT NULL, created_ms BIGINT NOT NULL,
      PRIMARY KEY (repo, name))"""

  private val checkRuns =
    """CREATE TABLE vc_check_runs (repo VARCHAR(128) NOT NULL, run_id VARCHAR(64) NOT NULL, image_hash CHAR(64) NOT NULL,
      check_name VARCHAR(128) NOT NULL, severity VARCHAR(8) NOT NULL, status VARCHAR(8) NOT NULL, failing_rows BIGINT NOT NULL,
      sample_keys TEXT NOT NULL, error TEXT, duration_ms BIGINT NOT NULL, who TEXT NOT NULL, purpose VARCHAR(32) NOT NULL,
      run_ms BIGINT NOT NULL, PRIMARY KEY (repo, run_id, check_name))"""

  /** The trigger function: raises SQLSTATE 55000 with a `[PROTECTED_REF]` message (the library maps it to its error). */
  private val guardFunction =
    """CREATE OR REPLACE FUNCTION vc_guard_refs() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  r RECORD;
  branch TEXT;
  parents TEXT[];
  descends BOOLEAN;
BEGIN
  IF OLD.kind <> 'branch' THEN
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
  END IF;
  branch := substr(OLD.name, 7);
  IF TG_OP = 'DELETE' OR NEW.name <> OLD.name OR NEW.repo <> OLD.repo THEN
    FOR r IN SELECT pattern FROM vc_branch_rules WHERE repo = OLD.repo AND branch ~ pattern_regex AND allow_delete = 0 LOOP
      RAISE EXCEPTION '[PROTECTED_REF] Branch ''%'' of ''%'' is protected by rule ''%'': it cannot be deleted or renamed. Change or remove the rule first. Nothing was changed.', branch, OLD.repo, r.pattern
        USING ERRCODE = '55000';
    END LOOP;
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  END IF;
  IF NEW.image_hash = OLD.image_hash THEN RETURN NEW; END IF;
  parents := ARRAY(SELECT json_array_elements_text(i.parents::json) FROM vc_images i
                   WHERE i.repo = NEW.repo AND i.hash = NEW.image_hash);
  descends := NULL;
  FOR r IN SELECT pattern, require_merge FROM vc_branch_rules
           WHERE repo = OLD.repo AND branch ~ pattern_regex AND allow_force = 0 LOOP
    IF r.require_merge = 1 THEN
      IF NOT (coalesce(array_length(parents, 1), 0) >= 2 AND parents[1] = OLD.image_hash) THEN
        RAISE EXCEPTION '[PROTECTED_REF] Branch ''%'' of ''%'' is protected by rule ''%'' (require_merge): it moves only by a merge commit on its head. Write to another branch, then merge it. Nothing was changed.', branch, OLD.repo, r.pattern
          USING ERRCODE = '55000';
      END IF;
    ELSE
      IF descends IS NULL THEN
        WITH RECURSIVE anc(h) AS (
          SELECT NEW.image_hash::text
          UNION
          SELECT json_array_elements_text(i.parents::json) FROM vc_images i JOIN anc ON i.repo = NEW.repo AND i.hash = anc.h
        ) SELECT EXISTS (SELECT 1 FROM anc WHERE h = OLD.image_hash) INTO descends;
      END IF;
      IF NOT descends THEN
        RAISE EXCEPTION '[PROTECTED_REF] Branch ''%'' of ''%'' is protected by rule ''%'': only a move to a descendant of its head is allowed (no force). Nothing was changed.', branch, OLD.repo, r.pattern
          USING ERRCODE = '55000';
      END IF;
    END IF;
  END LOOP;
  RETURN NEW;
END
$fn$"""

  def v3(sqlite: Boolean): Seq[String] =
    if (sqlite) Seq(rules, checks, checkRuns)
    else Seq(rules, checks, checkRuns, guardFunction,
      s"CREATE TRIGGER vc_refs_guard BEFORE UPDATE OR DELETE ON vc_refs FOR EACH ROW EXECUTE FUNCTION $GuardFunction" + "()")

  private val GuardFunction = "vc_guard_refs"
}
