Feature: The docs name only paths and variables that exist
  A repository path quoted in README.md or docs/ (`src/...`, `schema/...`, a top-level file such as
  `package.json`) that is not in the tree, a glob that matches nothing, or a `FLEETKIT_` variable that
  nothing in src/, ansible/, cloud-init/ or systemd/ reads, says something the code does not do, and
  fails the build. A placeholder path or a variable only the test harness reads is allowed by name,
  with its reason, in features/support/rules/doc-paths.ts.

  Scenario: The project's own README and docs keep the rule
    Given the project tree
    When the rule "docs-name-real-paths" runs
    Then it finds nothing

  Scenario: A moved file, a glob matching nothing and variables nothing reads are caught
    Given the fixture tree "doc-names-missing-path"
    When the rule "docs-name-real-paths" runs
    Then it reports "README.md:2 names src/lifecycle/provision.ts, which does not exist"
    And it reports "README.md:3 names schema/output/*.schema.json, which matches nothing"
    And it reports "README.md:3 names package.json, which does not exist"
    And it reports "README.md:6 names cloud-init/gone.sh, which does not exist"
    And it reports "docs/operations.md:2 names FLEETKIT_RENAMED_AWAY, which nothing in src/, ansible/, cloud-init/ or systemd/ reads"
    And it reports "docs/operations.md:3 names src/store/migrations/NNNN-name.sql, a placeholder in src/store/migrations/, which does not exist"
    And it reports "docs/operations.md:4 names FLEETKIT_TEST_JOBS, which nothing in .mocharc.cjs reads"
    And it reports "docs/operations.md:4 names FLEETKIT_SEED_MODE, which nothing in src/, ansible/, cloud-init/ or systemd/ reads"
    And it reports 8 findings
