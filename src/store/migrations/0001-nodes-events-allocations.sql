-- fleetkit schema 1: nodes (lifecycle, enrollment secret hash, host facts), events,
-- allocations, and the skeletons of sync runs and the shared provider rate budget.
-- schema_migrations itself is created by the migrator (src/store/migrate.ts).

CREATE TABLE nodes (
  id text PRIMARY KEY CHECK (char_length(id) BETWEEN 1 AND 253),
  pool text NOT NULL CHECK (char_length(pool) BETWEEN 1 AND 128),
  region text,
  server_type text,
  image text,
  status text NOT NULL DEFAULT 'parked'
    CHECK (status IN ('provisioning', 'active', 'unhealthy', 'draining', 'retired', 'lost', 'parked', 'failed')),
  schedulable boolean NOT NULL DEFAULT false,
  -- The durable step of `fleetkit node provision` (spec 06); NULL for a node declared by hand.
  provision_state text
    CHECK (provision_state IN ('pending', 'server_requested', 'awaiting_enrollment', 'enrolled', 'failed')),
  provision_error text,
  provider text,
  provider_server_id text,
  placement_group text,
  public_ipv4 inet,
  public_ipv6 inet,
  private_ipv4 inet,
  ssh_host text,
  replaces_node_id text REFERENCES nodes (id),
  -- Capacity less the host reserve, recorded at provisioning (spec 06 "Allocations").
  capacity_cpu numeric(8, 2) CHECK (capacity_cpu >= 0),
  capacity_memory_mib integer CHECK (capacity_memory_mib >= 0),
  capacity_disk_gib integer CHECK (capacity_disk_gib >= 0),
  -- Only the SHA-256 of the single-use enrollment secret is ever stored.
  enrollment_secret_sha256 bytea CHECK (octet_length(enrollment_secret_sha256) = 32),
  enrollment_secret_expires_at timestamptz,
  enrollment_secret_used_at timestamptz,
  host_key_public text CHECK (char_length(host_key_public) <= 4096),
  last_seen_at timestamptz,
  -- Host facts from the agent's heartbeats, bounded by the store before they are written.
  host_cpu_count integer,
  host_memory_mb integer,
  host_data_disk_free_gb double precision,
  host_kernel text CHECK (char_length(host_kernel) <= 256),
  host_docker_version text CHECK (char_length(host_docker_version) <= 256),
  host_agent_version text CHECK (char_length(host_agent_version) <= 256),
  host_bridge_netfilter boolean,
  host_clock_skew_ms integer,
  host_facts_at timestamptz,
  lost_at timestamptz,
  retired_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX nodes_status_idx ON nodes (status);
CREATE INDEX nodes_pool_idx ON nodes (pool);
-- The lost-node sweep scans nodes that are expected to heartbeat, oldest first.
CREATE INDEX nodes_last_seen_idx ON nodes (last_seen_at) WHERE status IN ('active', 'unhealthy', 'draining');

CREATE TABLE events (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  kind text NOT NULL CHECK (kind ~ '^[a-z][a-z0-9_]{0,63}$'),
  -- No foreign key: an event may name a node that does not exist (a refused enrollment).
  node_id text,
  data jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(data) = 'object')
);

CREATE INDEX events_node_idx ON events (node_id, id) WHERE node_id IS NOT NULL;
CREATE INDEX events_at_idx ON events (at);
CREATE INDEX events_kind_idx ON events (kind, id);

CREATE TABLE allocations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  node_id text NOT NULL REFERENCES nodes (id),
  owner text NOT NULL CHECK (char_length(owner) BETWEEN 1 AND 256),
  cpu numeric(8, 2) NOT NULL CHECK (cpu >= 0),
  memory_mib integer NOT NULL CHECK (memory_mib >= 0),
  disk_gib integer NOT NULL CHECK (disk_gib >= 0),
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'released')),
  created_at timestamptz NOT NULL DEFAULT now(),
  released_at timestamptz,
  release_reason text,
  CHECK ((status = 'released') = (released_at IS NOT NULL))
);

CREATE INDEX allocations_active_node_idx ON allocations (node_id) WHERE status = 'active';

-- Skeleton for `fleetkit sync`: one row per run, its plan and report as JSON.
CREATE TABLE sync_runs (
  id bigserial PRIMARY KEY,
  status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled')),
  definition_sha256 text,
  started_by text,
  plan jsonb NOT NULL DEFAULT '{}'::jsonb,
  report jsonb,
  started_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);

-- The provider's request budget is per project, not per process (spec 06): shared here.
CREATE TABLE provider_rate_limits (
  provider text NOT NULL,
  project_key text NOT NULL,
  request_limit integer,
  remaining integer,
  reset_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, project_key)
);
