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

  Scenario: A registry entry without an owner is caught
    Given the fixture tree "check-entry-without-owner"
    When the rule "check-ids-have-owners" runs
    Then it reports "check ID host:kernel has no owner (repair tag/command or manual reason)"
