-- 0017: hands-off holds and the reconcile stop (issue 39). `fleetkit node hold NODE --reason TEXT`
-- marks a node that `fleetkit reconcile` must not touch: one row per held node, with who and why;
-- `node release` deletes it (the events keep the history). A hold never changes what runs on the host.
CREATE TABLE node_holds (
  node_id text PRIMARY KEY REFERENCES nodes (id) ON DELETE CASCADE,
  reason text NOT NULL CHECK (char_length(reason) BETWEEN 1 AND 500),
  held_by text NOT NULL CHECK (char_length(held_by) BETWEEN 1 AND 200),
  held_at timestamptz NOT NULL DEFAULT now()
);

-- A failed reconcile run stops every later pass until a person clears it (`fleetkit reconcile --clear`):
-- at most one open stop (cleared_at NULL); the gateway's /metrics serves whether one is open.
CREATE TABLE reconcile_stops (
  id bigserial PRIMARY KEY,
  run_id bigint REFERENCES sync_runs (id),
  code text NOT NULL CHECK (code ~ '^[A-Z][A-Z0-9_]{1,63}$'),
  message text NOT NULL CHECK (char_length(message) BETWEEN 1 AND 2000),
  nodes text[] NOT NULL DEFAULT '{}',
  stopped_at timestamptz NOT NULL DEFAULT now(),
  cleared_at timestamptz,
  cleared_by text CHECK (cleared_by IS NULL OR char_length(cleared_by) BETWEEN 1 AND 200),
  CHECK ((cleared_at IS NULL) = (cleared_by IS NULL))
);
CREATE UNIQUE INDEX reconcile_stops_one_open ON reconcile_stops ((true)) WHERE cleared_at IS NULL;

-- The reconcile budget counts the sync runs it started in the last hour.
CREATE INDEX sync_runs_started_by_idx ON sync_runs (started_by, started_at DESC);
