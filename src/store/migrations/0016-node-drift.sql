-- 0016: each node's drift as its agent last reported it (src/store/nodes/node-drift.ts): the host's
-- fingerprint digest (computed on the host by fleetkit-drift-check.timer) against the one its last
-- sync recorded (node_fingerprints, 0009). Written only when the state or the drifted parts change,
-- never per heartbeat; no row is "unknown" (an agent that sends no digest, a node never synced).
CREATE TABLE node_drift (
  node_id text PRIMARY KEY REFERENCES nodes (id) ON DELETE CASCADE,
  state text NOT NULL CHECK (state IN ('in_sync', 'drifted', 'unknown')),
  -- The fingerprint's parts (kinds: nft, sshd, unit, path, ...) whose digest differs; empty unless drifted.
  parts text[] NOT NULL DEFAULT '{}' CHECK (cardinality(parts) <= 32),
  -- Why the state is unknown (no_fingerprint, other_resources, stale, no_state, ...); null otherwise.
  reason text CHECK (reason IS NULL OR reason ~ '^[a-z][a-z0-9_]{0,63}$'),
  -- The host's digest the state was judged on, and the sync run whose fingerprint it was compared with.
  digest text CHECK (digest IS NULL OR digest ~ '^[0-9a-f]{64}$'),
  fingerprint_run_id bigint,
  -- When this state began (the gateway's clock) and when the host's check that showed it ran (the host's).
  since timestamptz NOT NULL,
  host_checked_at timestamptz
);

CREATE INDEX node_drift_drifted ON node_drift (node_id) WHERE state = 'drifted';
