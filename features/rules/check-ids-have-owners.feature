Feature: Every check ID has an owner
  A check fleetkit reports must name who fixes it: an Ansible role tag or a
  fleetkit command, or the reason only a person can.

  Scenario: The project's own tree keeps the rule
    Given the project tree
    When the rule "check-ids-have-owners" runs
    Then it finds nothing

  Scenario: A check ID reported by code but missing from the registry is caught
    Given the fixture tree "check-id-without-owner"
    When the rule "check-ids-have-owners" runs
    Then it reports "check ID host:flux-capacitor is reported but has no owner in schema/check-ids.json"
    And it reports 1 finding

  Scenario: A registry entry without an owner is caught
    Given the fixture tree "check-entry-without-owner"
    When the rule "check-ids-have-owners" runs
    Then it reports "check ID host:kernel has no owner (repair tag/command or manual reason)"
    And it reports 1 finding

  Scenario: The manual steps in docs/operations.md match the checks a person owns
    Given the project tree
    When the rule "manual-steps-match-checks" runs
    Then it finds nothing

  Scenario: A manual check without a step, and a step for a check a role repairs, are caught
    Given the fixture tree "manual-steps-disagree"
    When the rule "manual-steps-match-checks" runs
    Then it reports "check host:size is owned by a person but docs/operations.md lists no step for it"
    And it reports "docs/operations.md lists a manual step for host:firewall, which is not a manual check in schema/check-ids.json"
    And it reports 2 findings

  Scenario: Every repair owner is a real role tag or a real command
    Given the project tree
    When the rule "repair-owners-resolve" runs
    Then it finds nothing

  Scenario: A fictional tag, a tag only a handler carries and commands that do not exist are caught
    Given the fixture tree "repair-owner-fictional"
    When the rule "repair-owners-resolve" runs
    Then it reports "check ID host:flux-capacitor is repaired by tag flux_capacitor, which no task in ansible/roles/*/tasks carries"
    And it reports "check ID host:handler-only is repaired by tag restart_only, which no task in ansible/roles/*/tasks carries"
    And it reports "check ID agent:magic is repaired by command \"fleetkit-agent fix-everything\", which is not a fleetkit or fleetkit-agent command"
    And it reports "check ID gateway:magic is repaired by command \"fleetkit frobnicate\", which is not a fleetkit or fleetkit-agent command"
    And it reports 4 findings
