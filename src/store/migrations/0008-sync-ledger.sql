-- 0008: the sync ledger (issue 10). One row per `fleetkit sync`/`drift` run (what it applied, who
-- ran it, how it ended) and one per node of it, so a node never attempted is listed, never dropped.

-- 0001 created a skeleton sync_runs that nothing wrote: replaced, refusing if it ever got a row.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM sync_runs) THEN
    RAISE EXCEPTION 'sync_runs holds rows written before migration 0008; move them aside first';
  END IF;
END
$$;
DROP TABLE sync_runs;

CREATE TABLE sync_runs (
  id bigserial PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('sync', 'dry_run', 'drift')),
  -- The fleet repository's commit the definition was read at; null for an uncommitted file.
  revision text CHECK (revision ~ '^[0-9a-f]{40}$'),
  definition_sha256 text NOT NULL CHECK (definition_sha256 ~ '^[0-9a-f]{64}$'),
  plan_hash text NOT NULL CHECK (plan_hash ~ '^[0-9a-f]{64}$'),
  plan jsonb NOT NULL,
  started_by text NOT NULL CHECK (char_length(started_by) BETWEEN 1 AND 300),
  pid integer NOT NULL,
  -- The ansible-playbook process group running now, so a resume can end an orphan of a killed sync.
  ansible_pid integer,
  status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'finished')),
  -- How it ended (see src/sync/outcome.ts); null while running or after a crash.
  outcome text CHECK (outcome IN ('converged', 'canary_failed', 'partial', 'unreachable', 'drifted', 'no_drift')),
  started_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  resumed_at timestamptz,
  attempts integer NOT NULL DEFAULT 1 CHECK (attempts >= 1)
);
CREATE INDEX sync_runs_applied_idx ON sync_runs (finished_at DESC) WHERE kind = 'sync' AND outcome = 'converged';

CREATE TABLE sync_run_nodes (
  run_id bigint NOT NULL REFERENCES sync_runs (id) ON DELETE CASCADE,
  node_id text NOT NULL CHECK (char_length(node_id) BETWEEN 1 AND 253),
  phase text NOT NULL CHECK (phase IN ('canary', 'fleet', 'skipped')),
  state text NOT NULL CHECK (state IN ('pending', 'running', 'converged', 'changed', 'failed', 'unreachable', 'rolled_back', 'not_attempted', 'skipped')),
  -- A registered failure code (SSH_HOST_KEY_MISMATCH, FIREWALL_CONFIRM_TIMEOUT, a role's code ...).
  code text CHECK (code ~ '^[A-Z][A-Z0-9_]+$'),
  message text CHECK (char_length(message) <= 2000),
  tasks_ok integer NOT NULL DEFAULT 0,
  tasks_changed integer NOT NULL DEFAULT 0,
  tasks_failed integer NOT NULL DEFAULT 0,
  -- Per role, the tasks that changed (or would, in check mode): {"firewall": ["Install the ruleset"]}.
  changes jsonb NOT NULL DEFAULT '{}',
  -- What the node was converged to: the run's revision and the agent version it got.
  applied_revision text,
  agent_version text,
  started_at timestamptz,
  finished_at timestamptz,
  PRIMARY KEY (run_id, node_id)
);
