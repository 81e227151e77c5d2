-- 0018: stretches of time in which no gateway could record heartbeats (src/store/nodes/sweep-gaps.ts): its
-- database was unreachable or full, or no gateway ran at all (the sweep lease lay unclaimed). The sweep
-- does not count them as a node's silence, so an outage of the control plane is never judged as the
-- whole fleet going silent. Overlapping stretches are merged when recorded: each moment counts once.
CREATE TABLE sweep_gaps (
  id bigserial PRIMARY KEY,
  started_at timestamptz NOT NULL,
  ended_at timestamptz NOT NULL CHECK (ended_at >= started_at),
  reason text NOT NULL CHECK (reason IN ('database', 'no_sweeper'))
);
CREATE INDEX sweep_gaps_ended_at ON sweep_gaps (ended_at);
