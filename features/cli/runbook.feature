Feature: fleetkit runbook
  Every registered failure code has a runbook entry the CLI can print.

  Scenario: Every registered code has a complete runbook entry
    When the runbook entry of every registered code is looked up
    Then every code has a section that says what it means and how to confirm, fix and escalate
    And every code's section header names the code
    And every exit code a runbook line states is the code's exit code

  Scenario: The CLI prints a code's runbook entry
    When I run "fleetkit runbook definition_invalid --json"
    Then it exits 0
    And the JSON result is the runbook entry of "DEFINITION_INVALID"

  Scenario: An unknown code is refused with its own code and a next step
    When I run "fleetkit runbook NO_SUCH_CODE --json"
    Then it exits 1
    And the JSON error has code "RUNBOOK_CODE_UNKNOWN" and suggests "fleetkit checks"

  Scenario: A human sees one error line and what to run next
    When I run "fleetkit runbook NO_SUCH_CODE"
    Then it exits 1
    And stderr says "Error (RUNBOOK_CODE_UNKNOWN): no failure code \"NO_SUCH_CODE\" is registered"
    And stderr says "fleetkit runbook RUNBOOK_CODE_UNKNOWN"

  Scenario: A near-miss code names the nearest registered code
    When I run "fleetkit runbook SYNC_PLAN_STAL"
    Then it exits 1
    And stderr says "did you mean \"SYNC_PLAN_STALE\"?"
    And stderr says "fleetkit runbook SYNC_PLAN_STALE"

  Scenario: A near-miss flag names the nearest flag of that command
    When I run "fleetkit checks --jsn"
    Then it exits 2
    And stderr says "Error (USAGE_INVALID): Nonexistent flag: --jsn; did you mean \"--json\"?"

  Scenario: A bad flag is a usage error with exit code 2
    When I run "fleetkit checks --no-such-flag"
    Then it exits 2
    And stderr says "Error (USAGE_INVALID)"
