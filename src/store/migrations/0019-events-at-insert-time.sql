-- 0019: an event's `at` is when it was inserted (clock_timestamp()), no longer when its transaction began
-- (now()). A transaction that began early and logged late (a sweep pass, a sync step) stamped its event
-- before events that other transactions logged and committed meanwhile, so the log, read oldest first,
-- showed times going backwards. The log is now listed by (at, id): the time an operator reads, ties in
-- the order of insertion; these indexes serve that order for the whole log and for one node.
ALTER TABLE events ALTER COLUMN at SET DEFAULT clock_timestamp();
DROP INDEX events_at_idx;
CREATE INDEX events_at_id_idx ON events (at, id);
CREATE INDEX events_node_at_idx ON events (node_id, at, id) WHERE node_id IS NOT NULL;
