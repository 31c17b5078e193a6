package versioned.core

/**
 * The PostgreSQL role setup of docs/GOVERNANCE.md: the metastore's tables (and the trigger that guards protected
 * branches) belong to an administrator role, which runs the migrations and changes rules and checks; writers
 * (jobs, notebooks) connect with a role that may read and write history but only read rules and checks, and, not
 * owning `vc_refs`, can neither drop nor disable its trigger.
 */
object GovernanceRoles {
  /** Tables a writer reads and writes. */
  val WriterTables: Seq[String] = Seq("vc_repositories", "vc_images", "vc_tables", "vc_objects", "vc_refs", "vc_upstreams",
    "vc_object_locations", "vc_leases", "vc_generation", "vc_check_runs", "vc_reflog", "vc_reflog_heads")
  /** Tables a writer only reads: rules and checks are the administrator's. */
  val ReadOnlyTables: Seq[String] = Seq("vc_meta", "vc_branch_rules", "vc_checks")

  /** The statements (run by the administrator, in the metastore's database) that create writer role `role`. */
  def writerGrants(role: String, password: String): Seq[String] = {
    Names.validate(Names.Repository, role)
    Seq(s"CREATE ROLE $role LOGIN PASSWORD '${password.replace("'", "''")}'",
      s"GRANT USAGE ON SCHEMA public TO $role",
      s"GRANT SELECT, INSERT, UPDATE, DELETE ON ${WriterTables.mkString(", ")} TO $role",
      s"GRANT SELECT ON ${ReadOnlyTables.mkString(", ")} TO $role")
  }
}
