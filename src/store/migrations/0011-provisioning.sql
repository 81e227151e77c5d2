-- 0011: what `fleetkit node provision` needs beyond 0001's provision_state (src/store/provisioning.ts).
-- provision_plan: the candidates (region, type) in order, the image, the placement group and the
-- pool firewall, so `--resume` continues the run that was asked for. provider_delete_pending: a
-- decommission committed and the provider server still has to be deleted (set in the retiring
-- transaction, cleared once the delete succeeded), so running decommission again retries it.
ALTER TABLE nodes ADD COLUMN provision_plan jsonb;
ALTER TABLE nodes ADD COLUMN provider_delete_pending boolean NOT NULL DEFAULT false;
ALTER TABLE nodes ADD COLUMN provider_deleted_at timestamptz;
