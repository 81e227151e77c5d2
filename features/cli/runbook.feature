Feature: fleetkit runbook
  Every registered failure code has a runbook entry the CLI can print.

  Scenario: Every registered code prints its runbook entry
    When I run "fleetkit runbook" for every registered code
    Then every run succeeds with the code and its runbook section

  Scenario: An unknown code is refused with its own code and a next step
    When I run "fleetkit runbook NO_SUCH_CODE --json"
    Then it exits 1
    And the JSON error has code "RUNBOOK_CODE_UNKNOWN" and suggests "fleetkit checks"

  Scenario: A human sees one error line and what to run next
    When I run "fleetkit runbook NO_SUCH_CODE"
    Then it exits 1
    And stderr says "Error (RUNBOOK_CODE_UNKNOWN): no failure code \"NO_SUCH_CODE\" is registered"
    And stderr says "fleetkit runbook RUNBOOK_CODE_UNKNOWN"

  Scenario: A bad flag is a usage error with exit code 2
    When I run "fleetkit checks --no-such-flag"
    Then it exits 2
    And stderr says "Error (USAGE_INVALID)"
