-- fleetkit schema 2: the agent certificates the gateway issued (found by fingerprint on
-- every mTLS request) and the jobs it leases to agents (only lease token hashes stored).

CREATE TABLE node_certificates (
  id bigserial PRIMARY KEY,
  node_id text NOT NULL REFERENCES nodes (id),
  fingerprint_sha256 text NOT NULL UNIQUE CHECK (fingerprint_sha256 ~ '^[0-9a-f]{64}$'),
  serial text NOT NULL CHECK (serial ~ '^[0-9a-f]{1,40}$'),
  not_before timestamptz NOT NULL,
  not_after timestamptz NOT NULL CHECK (not_after > not_before),
  -- Which CA signed it: renewal is due for any certificate not from the current CA (rotation).
  issuer_ca_sha256 text NOT NULL CHECK (issuer_ca_sha256 ~ '^[0-9a-f]{64}$'),
  purpose text NOT NULL DEFAULT 'agent' CHECK (purpose IN ('agent')),
  -- The certificate a renewal replaced; NULL for one issued at enrollment.
  replaces_id bigint REFERENCES node_certificates (id),
  -- Set by the first request that presents it; that request revokes every older one.
  first_used_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX node_certificates_node_idx ON node_certificates (node_id, id);
CREATE INDEX node_certificates_live_idx ON node_certificates (not_after) WHERE revoked_at IS NULL;

CREATE TABLE jobs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  node_id text NOT NULL REFERENCES nodes (id),
  kind text NOT NULL CHECK (kind ~ '^[a-z][a-z0-9_]{0,63}$'),
  payload jsonb NOT NULL DEFAULT '{}'::jsonb,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'leased', 'succeeded', 'failed')),
  lease_token_sha256 bytea CHECK (octet_length(lease_token_sha256) = 32),
  lease_expires_at timestamptz,
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  max_attempts integer NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
  result jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'leased') = (lease_token_sha256 IS NOT NULL AND lease_expires_at IS NOT NULL))
);

-- Leasing scans one node's open jobs, oldest first.
CREATE INDEX jobs_open_node_idx ON jobs (node_id, created_at) WHERE status IN ('queued', 'leased');
