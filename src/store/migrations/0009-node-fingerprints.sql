-- 0009: each node's fingerprint after its last full converge (src/sync/fingerprint.ts). A sync whose
-- inputs are unchanged compares it with the host's state now and skips the full run when they match.
-- Digests only: paths, unit and package names, and sha256s or modes; never a file's content.
CREATE TABLE node_fingerprints (
  node_id text PRIMARY KEY CHECK (char_length(node_id) BETWEEN 1 AND 253),
  -- sha256 over the plan's content and the rendered inventory: what the converge was given.
  input_hash text NOT NULL CHECK (input_hash ~ '^[0-9a-f]{64}$'),
  digest text NOT NULL CHECK (digest ~ '^[0-9a-f]{64}$'),
  -- {"path:/etc/fleetkit/agent.env": "100000:644:0:0:<sha256>", "unit:fleetkit-agent.service": ...}
  items jsonb NOT NULL,
  -- [{"kind": "path", "name": "/etc/fleetkit/agent.env"}, ...]: what the next probe reads.
  resources jsonb NOT NULL,
  run_id bigint NOT NULL REFERENCES sync_runs (id) ON DELETE CASCADE,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
