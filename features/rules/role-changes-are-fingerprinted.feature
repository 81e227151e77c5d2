Feature: The sync fast path sees what every role task can change
  `fleetkit sync` skips a node whose managed resources are as its last converge left them. It knows
  them from the modules the fleetkit_events callback reads. A role task using another module that may
  change the host must name the resource that shows its work, or the fast path could skip a node that
  lost that work until the daily full run.

  Scenario: The project's own tree keeps the rule
    Given the project tree
    When the rule "role-changes-are-fingerprinted" runs
    Then it finds nothing

  Scenario: A command that changes the host unseen, and a resource the fingerprint does not digest, are caught
    Given the fixture tree "role-change-unfingerprinted"
    When the rule "role-changes-are-fingerprinted" runs
    Then it reports "task \"Calibrate the widget\" can change the host through shell, which the sync fast path does not see: name what shows its work in a \"# fingerprint: kind:name\" comment (a resource of fleetkit_fingerprint_always in ansible/playbooks/fingerprint.yml) or \"# fingerprint: via ...\""
    And it reports "task \"Rotate the widget's secret\" names path:/etc/widget.secret, which fleetkit_fingerprint_always in ansible/playbooks/fingerprint.yml does not list"
    And it reports 2 findings
