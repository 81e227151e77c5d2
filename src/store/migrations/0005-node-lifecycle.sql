-- 0005: the node lifecycle (issue 11). Park remembers the status it left, unpark restarts the
-- silence clock, fenced jobs are marked for a returning node's cleanup list, one node_lost event
-- per loss, and operator client certificates for the gateway's operator API.

ALTER TABLE nodes ADD COLUMN parked_from text
  CHECK (parked_from IN ('provisioning', 'active', 'unhealthy', 'draining', 'lost', 'failed'));
-- Silence is measured from the later of last_seen_at and this: an unparked node gets a full grace period.
ALTER TABLE nodes ADD COLUMN unparked_at timestamptz;
ALTER TABLE nodes ADD COLUMN unhealthy_at timestamptz;

-- Set when the sweep fences a job away from a lost node: the node's cleanup list names these.
ALTER TABLE jobs ADD COLUMN fenced_at timestamptz;
CREATE INDEX jobs_fenced_node_idx ON jobs (node_id, fenced_at) WHERE fenced_at IS NOT NULL;

-- However often the sweep replays, one node_lost event per loss (a node lost twice has two lost_at).
CREATE UNIQUE INDEX events_node_lost_once ON events (node_id, (data ->> 'lost_at')) WHERE kind = 'node_lost';

-- The sweep scans nodes expected to heartbeat; silence is GREATEST(last_seen_at, unparked_at).
CREATE INDEX nodes_watched_idx ON nodes (status) WHERE status IN ('active', 'unhealthy', 'draining');

-- Client certificates for the operator API (`fleetkit ca operator-cert NAME`): found by fingerprint.
CREATE TABLE operator_certificates (
  id bigserial PRIMARY KEY,
  name text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,62}$'),
  fingerprint_sha256 text NOT NULL UNIQUE CHECK (fingerprint_sha256 ~ '^[0-9a-f]{64}$'),
  serial text NOT NULL CHECK (serial ~ '^[0-9a-f]{1,40}$'),
  not_before timestamptz NOT NULL,
  not_after timestamptz NOT NULL CHECK (not_after > not_before),
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
