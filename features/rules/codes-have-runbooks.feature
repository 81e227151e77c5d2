Feature: Every failure code has a runbook line, and every runbook line a code
  An operator who meets a failure must find what it means and what to do.
  A code used in src/, ansible/ or cloud-init/ without a line in docs/runbooks.md,
  or a runbook line for a code nothing uses, fails the build.

  Scenario: The project's own tree keeps the rule
    Given the project tree
    When the rule "codes-have-runbooks" runs
    Then it finds nothing

  Scenario: A code thrown in TypeScript without a runbook line is caught
    Given the fixture tree "code-without-runbook"
    When the rule "codes-have-runbooks" runs
    Then it reports "code WIDGET_JAMMED is used but has no line in docs/runbooks.md"
    And it reports 1 finding

  Scenario: A code a shell script fails with, without a runbook line, is caught
    Given the fixture tree "shell-code-without-runbook"
    When the rule "codes-have-runbooks" runs
    Then it reports "code SPROCKET_MISSING is used but has no line in docs/runbooks.md"
    And it reports 1 finding

  Scenario: A code an Ansible task fails with, without a runbook line, is caught
    Given the fixture tree "ansible-code-without-runbook"
    When the rule "codes-have-runbooks" runs
    Then it reports "code GASKET_LEAKING is used but has no line in docs/runbooks.md"
    And it reports 1 finding

  Scenario: A runbook line for a code nothing uses is caught
    Given the fixture tree "runbook-code-unused"
    When the rule "codes-have-runbooks" runs
    Then it reports "docs/runbooks.md names GHOST_CODE, which nothing uses"
    And it reports "code GHOST_CODE is registered but nothing uses it"
    And it reports 2 findings

  Scenario: A runbook that states the wrong number of codes is caught
    Given the fixture tree "runbook-count-wrong"
    When the rule "codes-have-runbooks" runs
    Then it reports "docs/runbooks.md states 5 codes (1 need a person), the registry has 2 (1 need a person)"
    And it reports 1 finding
