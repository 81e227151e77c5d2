Feature: The docs name only commands and flags that exist
  A `fleetkit` command quoted in README.md or docs/ that is not in the oclif
  manifest, or a flag quoted after it that the command does not take, sends an
  operator nowhere, and fails the build.

  Scenario: The project's own README and docs keep the rule
    Given the project tree
    When the rule "docs-name-real-commands" runs
    Then it finds nothing

  Scenario: A quoted command that does not exist is caught
    Given the fixture tree "doc-names-missing-command"
    When the rule "docs-name-real-commands" runs
    Then it reports "`fleetkit frobnicate --now` names no fleetkit command"
    And it reports "`fleetkit node destroy NODE` names no fleetkit command"
    And it reports "`fleetkit validate --definiton fleet.yaml # --nothing-here in a comment` names --definiton, which `fleetkit validate` does not take"
    And it reports 3 findings
