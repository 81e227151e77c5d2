-- 0003: canary proofs. A revision (a pool image or an agent version) is proven once a canary
-- run of exactly it succeeded; `fleetkit validate --since` refuses a fleet-wide change to an unproven one.

CREATE TABLE canary_proofs (
  kind text NOT NULL CHECK (kind IN ('image', 'agentVersion')),
  value text NOT NULL CHECK (char_length(value) BETWEEN 1 AND 256),
  -- The canary the revision was proven on; no foreign key: the node may be replaced later.
  node_id text NOT NULL CHECK (char_length(node_id) BETWEEN 1 AND 253),
  proven_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (kind, value)
);
