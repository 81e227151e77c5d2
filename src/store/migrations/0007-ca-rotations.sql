-- 0007: CA rotations (spec 05 "CA rotation"). One row per rotation: the CA it replaces, the new CA,
-- and its phase. Issuance reads it to refuse a CA whose rotation was aborted (or the old CA of a
-- completed one) while a gateway still holds it in memory; at most one rotation is open at a time.
-- Nodes get a recovery counter: each recovery by a signed challenge uses one value (spec 05
-- "A node that was away can come back").

CREATE TABLE ca_rotations (
  id bigserial PRIMARY KEY,
  old_ca_sha256 text NOT NULL CHECK (old_ca_sha256 ~ '^[0-9a-f]{64}$'),
  new_ca_sha256 text NOT NULL UNIQUE CHECK (new_ca_sha256 ~ '^[0-9a-f]{64}$'),
  status text NOT NULL CHECK (status IN ('begun', 'completed', 'aborted')),
  begun_at timestamptz NOT NULL,
  finished_at timestamptz,
  CHECK ((status = 'begun') = (finished_at IS NULL)),
  CHECK (old_ca_sha256 <> new_ca_sha256)
);

CREATE UNIQUE INDEX ca_rotations_one_open ON ca_rotations ((true)) WHERE status = 'begun';
CREATE INDEX node_certificates_issuer_idx ON node_certificates (issuer_ca_sha256) WHERE revoked_at IS NULL;

ALTER TABLE nodes ADD COLUMN recovery_count integer NOT NULL DEFAULT 0 CHECK (recovery_count >= 0);
