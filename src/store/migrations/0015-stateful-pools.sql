-- 0015: stateful pools (issue 39), and an index for the readiness verdict (at the end). A pool whose
-- nodes hold state (fleet.yaml `stateful: true`) is recorded here by the commands that read the
-- definition (seed, provision, sync), since the gateway's sweep has none. When such a node is lost its
-- allocations are `stranded`, not released: their capacity stays held until a person releases them
-- (`fleetkit alloc release --stranded`) or the node heartbeats again.

CREATE TABLE pool_policies (
  pool text PRIMARY KEY CHECK (char_length(pool) BETWEEN 1 AND 128),
  stateful boolean NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE allocations DROP CONSTRAINT allocations_status_check;
ALTER TABLE allocations ADD CONSTRAINT allocations_status_check CHECK (status IN ('active', 'released', 'stranded'));
-- When its node was lost; kept after a release (the history), cleared when the node came back.
ALTER TABLE allocations ADD COLUMN stranded_at timestamptz;
ALTER TABLE allocations ADD CONSTRAINT allocations_stranded_at_check CHECK (status <> 'stranded' OR stranded_at IS NOT NULL);
-- Capacity held on a node: its active and stranded allocations.
CREATE INDEX allocations_stranded_node_idx ON allocations (node_id) WHERE status = 'stranded';

-- The readiness verdict (fleet ready, the status page) reads each node's last sync and drift rows.
CREATE INDEX sync_run_nodes_node_idx ON sync_run_nodes (node_id, run_id DESC);
